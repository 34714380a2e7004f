/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `fswb doctor`: what this machine has for each backend, with the command
 * that fixes what is missing (src/run/hostcheck.h does the looking).
 * Exits 0 when the default path (a local QEMU guest) can work, 1 when it
 * cannot, 2 on a bad option.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "cmd/cmd.h"
#include "core/jread.h"
#include "core/loop.h"
#include "core/paths.h"
#include "core/plan.h"
#include "core/profile.h"
#include "run/hostcheck.h"

static const char doctor_usage[] =
	"usage: fswb doctor [--json] [--backend NAME -o KEY=VALUE... [--forget]]\n"
	"\n"
	"Check this machine for what fswb needs: per backend, each thing with 'ok'\n"
	"or what is missing and the command that fixes it on this distribution.\n"
	"Exits 0 when 'fswb run' (a local QEMU guest) can work here, 1 when not;\n"
	"with --backend, when that backend's machine can.\n"
	"\n"
	"      --json                print the findings as JSON\n"
	"      --backend NAME -o KEY=VALUE  also check that backend's machine, as 'fswb run'\n"
	"                            would reach it (ssh: -o host=HOST -o user=NAME\n"
	"                            -o key=FILE -o fstests=DIR -o test=DEV ...;\n"
	"                            adb: -o serial=SERIAL, the device's root, ABI, space)\n"
	"      --accept-new-host-key trust the machine's host key if fswb has not seen it\n"
	"      --forget              instead, remove what that backend keeps between runs\n"
	"                            (adb: the chroot on the device; gce: fswb's images,\n"
	"                            and this host's instances no running fswb holds)\n"
	"  -h, --help                show this help\n";

enum {
	OPT_JSON = 256,
	OPT_BACKEND,
	OPT_ACCEPT_NEW_HOST_KEY,
	OPT_FORGET,
};

static const char *
family_name(enum hc_family f)
{
	return f == HC_FAMILY_DEBIAN ? "debian" : f == HC_FAMILY_FEDORA ? "fedora" : "unknown";
}

static void
print_json(const struct hostcheck *hc, const struct strvec *leases)
{
	json_t *root = json_object(), *os = json_object(), *groups = json_array(), *held;
	json_t *grp, *list = NULL;
	char *text;

	json_object_set_new(os, "id", json_str_or_null(hc->os.id));
	json_object_set_new(os, "pretty_name", json_str_or_null(hc->os.pretty));
	json_object_set_new(os, "family", json_string(family_name(hc->os.family)));
	json_object_set_new(root, "os", os);
	json_object_set_new(root, "ready", json_boolean(hc->ready));
	json_object_set_new(root, "slow", json_boolean(hc->slow));
	json_object_set_new(root, "kernel", json_str_or_null(hc->kernel));
	for (size_t i = 0; i < hc->n; i++) {
		const struct hc_finding *f = &hc->v[i];
		json_t *o = json_object();

		if (!i || strcmp(f->group, hc->v[i - 1].group)) {
			grp = json_object();
			list = json_array();
			json_object_set_new(grp, "name", json_string(f->group));
			json_object_set_new(grp, "findings", list);
			json_array_append_new(groups, grp);
		}
		json_object_set_new(o, "name", json_string(f->name));
		json_object_set_new(o, "state", json_string(hc_state_str(f->state)));
		json_object_set_new(o, "required", json_boolean(f->required));
		json_object_set_new(o, "detail", json_string(f->detail));
		json_object_set_new(o, "fix", json_str_or_null(f->fix));
		json_array_append_new(list, o);
	}
	json_object_set_new(root, "groups", groups);
	held = json_array();
	for (size_t i = 0; i < leases->n; i++)
		json_array_append_new(held, json_string(leases->v[i]));
	json_object_set_new(root, "leases", held);
	text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	puts(text);
	free(text);
	json_decref(root);
}

static void
print_text(const struct hostcheck *hc, const struct strvec *leases)
{
	printf("fswb doctor: what this machine has for running fstests%s%s%s\n",
	       hc->os.pretty ? " (" : "", hc->os.pretty ? hc->os.pretty : "",
	       hc->os.pretty ? ")" : "");
	for (size_t i = 0; i < hc->n; i++) {
		const struct hc_finding *f = &hc->v[i];

		if (!i || strcmp(f->group, hc->v[i - 1].group))
			printf("\n%s: %s\n", f->group, hc_group_title(f->group));
		printf("  %-7s  %s", hc_state_str(f->state), f->name);
		if (*f->detail)
			printf("  %s", f->detail);
		if (f->fix)
			printf("  fix: %s", f->fix);
		putchar('\n');
	}
	if (leases->n) {
		printf("\nleases: what backends hold for a run (what a killed fswb left is removed "
		       "by the next 'fswb run')\n");
		for (size_t i = 0; i < leases->n; i++)
			printf("  %s\n", leases->v[i]);
	}
	putchar('\n');
	if (!hc->ready)
		printf("fswb run cannot work here yet: fix the MISSING lines under host and qemu, "
		       "then run 'fswb doctor' again.\n");
	else if (hc->slow)
		printf("fswb run can work here: the local QEMU guests run under emulation (no "
		       "KVM), so expect runs to take several times longer.\n");
	else
		printf("fswb run can work here: start with 'fswb run' (the smoke tests on "
		       "ext4/4k).\n");
}

/* --forget: what the plan's backend keeps between runs, removed; said. */
static int
forget_kept(struct plan *plan)
{
	const struct backend_ops *ops = plan->backend ? backend_find(plan->backend) : NULL;
	char *said = NULL;
	int rc = 0;

	if (!ops)
		die("fswb doctor: --forget needs --backend NAME (and its -o options)");
	if (backend_forget(ops, plan, &said) != OK) {
		fprintf(stderr, "fswb doctor: %s\n", error_msg());
		error_clear();
		rc = 1;
	} else {
		printf("fswb doctor: %s\n", said);
	}
	free(said);
	plan_release(plan);
	return rc;
}

int
cmd_doctor(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, OPT_JSON },
		{ "backend", required_argument, NULL, OPT_BACKEND },
		{ "backend-opt", required_argument, NULL, 'o' },
		{ "accept-new-host-key", no_argument, NULL, OPT_ACCEPT_NEW_HOST_KEY },
		{ "forget", no_argument, NULL, OPT_FORGET },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct hostcheck_opts o = HOSTCHECK_OPTS_INIT;
	struct plan plan;
	struct profiles profiles;
	bool json = false, have_profiles = false, forget = false;
	struct hostcheck hc;
	struct strvec leases = STRVEC_INIT;
	struct loop *loop;
	char *datadir, *dir;
	enum status rc;
	int c;

	opterr = 0;
	optind = 1;
	plan_init(&plan);
	while ((c = getopt_long(argc, argv, "+ho:", opts, NULL)) != -1) {
		switch (c) {
		case OPT_JSON:
			json = true;
			break;
		case OPT_BACKEND:
			free(plan.backend);
			plan.backend = xstrdup(optarg);
			break;
		case OPT_ACCEPT_NEW_HOST_KEY:
			plan_set_backend_opt(&plan, "hostkey", "accept-new");
			break;
		case OPT_FORGET:
			forget = true;
			break;
		case 'o':
			if (plan_set_backend_kv(&plan, optarg) != OK)
				die("fswb doctor: -o %s", error_msg());
			break;
		case 'h':
			fputs(doctor_usage, stdout);
			return 0;
		default:
			cmd_bad_option("doctor", argv[optind - 1], opts);
		}
	}
	if (optind < argc)
		die("fswb doctor: unexpected argument '%s'; see 'fswb doctor --help'",
		    argv[optind]);
	if (plan.backend_opts.n && !plan.backend)
		die("fswb doctor: -o needs --backend NAME (the backend the options are for)");
	if (plan.backend && backend_check_options(&plan) != OK)
		die("fswb doctor: %s", error_msg());
	if (forget)
		return forget_kept(&plan);
	o.plan = plan.backend ? &plan : NULL;

	datadir = fswb_datadir();
	dir = path_join(datadir, "profiles");
	if (profiles_load(dir, &profiles) == OK) {
		have_profiles = true;
		o.profiles = &profiles;
	}
	error_clear();
	free(datadir);
	free(dir);

	loop = loop_new();
	rc = hostcheck_run(loop, &o, &hc);
	if (rc != OK) {
		hostcheck_release(&hc);
		plan_release(&plan);
		loop_free(loop);
		if (have_profiles)
			profiles_release(&profiles);
		return cmd_fail("doctor");
	}
	backend_leases_list(&leases);
	if (json)
		print_json(&hc, &leases);
	else
		print_text(&hc, &leases);
	c = hc.ready ? 0 : 1;
	if (o.plan) {
		/* the machine asked about decides */
		c = 0;
		for (size_t i = 0; i < hc.n; i++)
			if (!strcmp(hc.v[i].group, plan.backend) && hc.v[i].state == HC_MISSING)
				c = 1;
		if (!json)
			printf("%s\n",
			       c ? "The test machine cannot run fstests yet: fix the MISSING "
				   "lines above."
				 : "The test machine is ready for 'fswb run' with these "
				   "options.");
	}
	plan_release(&plan);
	strvec_clear(&leases);
	hostcheck_release(&hc);
	loop_free(loop);
	if (have_profiles)
		profiles_release(&profiles);
	return c;
}
