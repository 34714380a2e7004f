/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fswb kernel list|config|build: what kernels there are, what a config
 * would hold, and building a tree.
 */
#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "core/event.h"
#include "core/loop.h"
#include "core/paths.h"
#include "core/plan.h"
#include "core/profile.h"
#include "core/status.h"
#include "core/util.h"
#include "kbuild/kbuild.h"
#include "kbuild/kconfig.h"
#include "kbuild/kernel.h"

static const char kernel_usage[] =
	"usage: fswb kernel list [--json] [-c FS/CFG,..] [--debug FRAG,..] [--arch ARCH]\n"
	"       fswb kernel config [--kernel PATH|VERSION] [-c FS/CFG,..] [--debug FRAG,..]\n"
	"                          [--own-config] [--arch ARCH] [--json]\n"
	"       fswb kernel build [--kernel TREE] [-c FS/CFG,..] [--debug FRAG,..]\n"
	"                         [--own-config] [--arch ARCH] [-j N] [--nice N] [--force]\n"
	"\n"
	"  list     the kernels fswb can use (trees, trees built before, installed\n"
	"           kernels), each with whether its config has what the filesystem\n"
	"           configurations need\n"
	"  config   the config a kernel tree gets (the defconfig, kvm_guest.config and\n"
	"           fswb's fragments, after make olddefconfig), without building:\n"
	"           each requested option, set or dropped and why; for an installed\n"
	"           kernel or an image, the same check of its config\n"
	"  build    configure and build a kernel tree out of tree (the tree is never\n"
	"           written; --own-config builds it in place with its own .config)\n"
	"\n"
	"  -c, --config FS/CFG[,..]  filesystem configurations (default ext4/4k)\n"
	"      --kernel PATH|VERSION a kernel tree, a bzImage, or an installed version;\n"
	"                            default: the tree in the current directory, else\n"
	"                            the installed kernel\n"
	"      --modules PATH        modules directory or tarball for a bzImage\n"
	"      --debug FRAG[,..]     add debug options: kasan, lockdep, kmemleak\n"
	"      --own-config          use the tree's own .config\n"
	"      --arch ARCH           x86_64 (default) or arm64\n"
	"  -j, --jobs N              make -jN (default: the number of CPUs)\n"
	"      --nice N              run make under nice -n N (default 10; 0: not)\n"
	"      --force               build even when a needed option was dropped\n"
	"      --json                print as JSON (list, config)\n";

enum {
	OPT_KERNEL = 256,
	OPT_MODULES,
	OPT_DEBUG,
	OPT_OWN_CONFIG,
	OPT_ARCH,
	OPT_JSON,
	OPT_NICE,
	OPT_FORCE,
};

static const struct option kernel_options[] = {
	{ "config", required_argument, NULL, 'c' },
	{ "kernel", required_argument, NULL, OPT_KERNEL },
	{ "modules", required_argument, NULL, OPT_MODULES },
	{ "debug", required_argument, NULL, OPT_DEBUG },
	{ "own-config", no_argument, NULL, OPT_OWN_CONFIG },
	{ "arch", required_argument, NULL, OPT_ARCH },
	{ "jobs", required_argument, NULL, 'j' },
	{ "nice", required_argument, NULL, OPT_NICE },
	{ "force", no_argument, NULL, OPT_FORCE },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

struct kopts {
	const char *sub;
	struct plan_kernel pk;
	struct strvec configs;
	unsigned jobs;
	int nice;
	bool force, json;
};

static struct profiles profiles;

static const char *
cmdname(const struct kopts *o)
{
	static char buf[32];

	snprintf(buf, sizeof(buf), "kernel %s", o->sub);
	return buf;
}

static long
number(const char *opt, const char *arg, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v < min || v > max)
		die("fswb kernel: --%s: '%s' is not a whole number from %ld to %ld", opt, arg, min,
		    max);
	return v;
}

static void
parse(int argc, char **argv, struct kopts *o)
{
	struct strvec names = STRVEC_INIT;
	char *datadir, *dir;
	int c;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "c:j:h", kernel_options, NULL)) != -1) {
		switch (c) {
		case 'c':
			strvec_split(&names, optarg, ", \t");
			break;
		case OPT_KERNEL:
			if (plan_kernel_set(&o->pk, optarg) != OK)
				die("fswb kernel: --kernel: %s (see 'fswb kernel list')",
				    error_msg());
			break;
		case OPT_MODULES:
			free(o->pk.modules);
			o->pk.modules = xstrdup(optarg);
			break;
		case OPT_DEBUG:
			strvec_split(&o->pk.debug, optarg, ", \t");
			break;
		case OPT_OWN_CONFIG:
			o->pk.own_config = true;
			break;
		case OPT_ARCH:
			free(o->pk.arch);
			o->pk.arch = xstrdup(optarg);
			if (!kernel_arch_find(optarg))
				die("fswb kernel: --arch: unknown architecture '%s'; fswb knows %s",
				    optarg, kernel_arch_names());
			break;
		case 'j':
			o->jobs = (unsigned)number("jobs", optarg, 1, 1024);
			break;
		case OPT_NICE:
			o->nice = (int)number("nice", optarg, 0, 19);
			break;
		case OPT_FORCE:
			o->force = true;
			break;
		case OPT_JSON:
			o->json = true;
			break;
		case 'h':
			fputs(kernel_usage, stdout);
			exit(0);
		default:
			cmd_bad_option(cmdname(o), argv[optind - 1], kernel_options);
		}
	}
	if (optind < argc)
		die("fswb %s: unexpected argument '%s'; see 'fswb kernel --help'", cmdname(o),
		    argv[optind]);
	for (size_t i = 0; i < o->pk.debug.n; i++) {
		const char *d = o->pk.debug.v[i];

		if (strcmp(d, "kasan") && strcmp(d, "lockdep") && strcmp(d, "kmemleak"))
			die("fswb kernel: --debug: unknown '%s'; valid: kasan, lockdep, kmemleak",
			    d);
	}
	datadir = fswb_datadir();
	dir = path_join(datadir, "profiles");
	if (profiles_load(dir, &profiles) != OK)
		die("%s", error_msg());
	free(datadir);
	free(dir);
	if (!names.n)
		strvec_push(&names, "ext4/4k");
	for (size_t i = 0; i < names.n; i++)
		if (profiles_resolve_configs(&profiles, names.v[i], &o->configs) != OK)
			die("fswb kernel: -c: %s", error_msg());
	strvec_clear(&names);
	if (!o->pk.arch)
		o->pk.arch = xstrdup("x86_64");
}

/* ---- describing kernels ---- */

static const char *
kind_word(const struct kernel *k)
{
	switch (k->kind) {
	case KERNEL_TREE:
		return k->built ? "built tree" : "tree";
	case KERNEL_IMAGE:
		return "image";
	default:
		return "installed";
	}
}

/* How to name k to --kernel. */
static const char *
kernel_arg(const struct kernel *k)
{
	switch (k->kind) {
	case KERNEL_TREE:
		return k->tree;
	case KERNEL_IMAGE:
		return k->image;
	default:
		return k->version;
	}
}

static void
quote_to(struct strbuf *sb, const char *s)
{
	sq_quote(sb, s ? s : "");
}

static json_t *
jstr(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *
report_json(const struct kconfig_report *r)
{
	json_t *a = json_array();

	for (size_t i = 0; i < r->n; i++) {
		const struct kconfig_result *x = &r->v[i];
		json_t *o = json_object();

		json_object_set_new(o, "name", json_string(x->name));
		json_object_set_new(o, "wanted", json_string(x->wanted));
		json_object_set_new(o, "actual", jstr(x->actual));
		json_object_set_new(o, "verdict", json_string(kconfig_verdict_str(x->verdict)));
		json_object_set_new(o, "ok", json_boolean(kconfig_result_ok(x)));
		json_object_set_new(o, "need",
				    json_string(x->need == KCONFIG_NEED ? "need" : "want"));
		json_object_set_new(o, "needed_by", jstr(x->needed_by));
		json_object_set_new(o, "source", json_string(x->source));
		json_object_set_new(o, "why", jstr(x->why));
		json_array_append_new(a, o);
	}
	return a;
}

static json_t *
kernel_json(const struct kernel *k, bool with_report)
{
	json_t *o = json_object();

	json_object_set_new(o, "kind", json_string(kernel_kind_str(k->kind)));
	json_object_set_new(o, "version", jstr(k->version));
	json_object_set_new(o, "arch", jstr(k->arch));
	json_object_set_new(o, "image", jstr(k->image));
	json_object_set_new(o, "modules", jstr(k->modules));
	json_object_set_new(o, "initrd", jstr(k->initrd));
	json_object_set_new(o, "config", jstr(k->config));
	json_object_set_new(o, "config_source",
			    json_string(kernel_config_source_str(k->config_source)));
	if (!k->config && k->config_note)
		json_object_set_new(o, "config_note", json_string(k->config_note));
	if (k->kind == KERNEL_TREE) {
		json_object_set_new(o, "tree", jstr(k->tree));
		json_object_set_new(o, "build_dir", jstr(k->build_dir));
		json_object_set_new(o, "built", json_boolean(k->built));
		json_object_set_new(o, "own_config", json_boolean(k->own_config));
	}
	json_object_set_new(o, "checked", json_boolean(k->checked));
	if (k->checked) {
		json_t *c = json_object();

		json_object_set_new(c, "config", jstr(k->report.config));
		json_object_set_new(c, "set", json_integer((json_int_t)k->report.nset));
		json_object_set_new(c, "dropped", json_integer((json_int_t)k->report.ndropped));
		json_object_set_new(c, "needed_missing",
				    json_integer((json_int_t)k->report.nneeded));
		json_object_set_new(c, "ok", json_boolean(k->report.nneeded == 0));
		if (with_report)
			json_object_set_new(c, "options", report_json(&k->report));
		else {
			json_t *miss = json_array();

			for (size_t i = 0; i < k->report.n; i++)
				if (!kconfig_result_ok(&k->report.v[i]))
					json_array_append_new(
						miss, json_pack("{s:s,s:s,s:s,s:s?}", "name",
								k->report.v[i].name, "need",
								k->report.v[i].need == KCONFIG_NEED
									? "need"
									: "want",
								"verdict",
								kconfig_verdict_str(
									k->report.v[i].verdict),
								"why", k->report.v[i].why));
			json_object_set_new(c, "missing", miss);
		}
		json_object_set_new(o, "check", c);
	}
	return o;
}

static void
print_json(json_t *v)
{
	char *text = json_dumps(v, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

	puts(text);
	free(text);
	json_decref(v);
}

static char *
configs_words(const struct kopts *o)
{
	return strvec_join(&o->configs, ",");
}

/* The one-paragraph verdict of a check, for list. */
static void
print_check(const struct kernel *k, const struct kopts *o)
{
	char *cfgs = configs_words(o);
	size_t want_missing = 0, modules = 0;
	struct strbuf miss = STRBUF_INIT, hint = STRBUF_INIT;

	if (!k->checked) {
		if (k->kind == KERNEL_TREE && !k->built && !k->own_config)
			printf("    check    not configured yet: 'fswb kernel config --kernel %s' "
			       "shows what it would get\n",
			       k->tree);
		else
			printf("    check    cannot tell: %s\n",
			       k->config_note ? k->config_note : "no config known");
		free(cfgs);
		return;
	}
	for (size_t i = 0; i < k->report.n; i++) {
		const struct kconfig_result *r = &k->report.v[i];

		if (r->verdict == KV_MODULE && r->need == KCONFIG_NEED)
			modules++;
		if (kconfig_result_ok(r))
			continue;
		if (r->need == KCONFIG_NEED)
			strbuf_addf(&miss, "%sCONFIG_%s", miss.len ? ", " : "", r->name);
		else
			want_missing++;
	}
	strbuf_adds(&hint, "fswb kernel config --kernel ");
	quote_to(&hint, kernel_arg(k));
	strbuf_addf(&hint, " -c %s", cfgs);
	if (miss.len)
		printf("    check    MISSING what %s needs: %s\n", cfgs, miss.buf);
	else
		printf("    check    has what %s needs%s\n", cfgs,
		       modules ? " (some of it as modules)" : "");
	if (want_missing)
		printf("             %zu of the %zu options fswb's fragments ask for are missing "
		       "(tests that need them do not run)\n",
		       want_missing, k->report.n);
	if (miss.len || want_missing)
		printf("             details: %s\n", hint.buf);
	strbuf_release(&miss);
	strbuf_release(&hint);
	free(cfgs);
}

static void
print_kernel(const struct kernel *k, const struct kopts *o, bool is_default)
{
	printf("%s %s", is_default ? "*" : " ", kind_word(k));
	if (k->kind == KERNEL_TREE)
		printf(" %s (%s, %s)\n", k->tree, k->version ? k->version : "?",
		       k->arch ? k->arch : "?");
	else if (k->kind == KERNEL_IMAGE)
		printf(" %s (%s, %s)\n", k->image, k->version ? k->version : "version unknown",
		       k->arch ? k->arch : "?");
	else
		printf(" %s (%s)\n", k->version, k->arch ? k->arch : "?");
	if (k->image)
		printf("    image    %s\n", k->image);
	if (k->kind == KERNEL_TREE && k->build_dir && !k->own_config)
		printf("    build    %s\n", k->build_dir);
	if (k->modules)
		printf("    modules  %s\n", k->modules);
	else if (k->image)
		printf("    modules  none%s\n",
		       k->modular ? " found (the config builds modules)" : "");
	if (k->initrd)
		printf("    initrd   %s\n", k->initrd);
	if (k->config)
		printf("    config   %s%s\n", k->config,
		       k->config_source == KCONF_EMBEDDED ? " (extracted from the image)" : "");
	if (k->kind == KERNEL_TREE && !k->built && !k->image)
		printf("    build    not built by fswb yet: fswb kernel build --kernel %s\n",
		       k->tree);
	print_check(k, o);
}

static int
do_list(struct loop *loop, struct kopts *o)
{
	struct kernel_list l;
	struct kernel_needs needs;
	char *cfgs;

	if (kernel_needs_init(&needs, &profiles, &o->configs, &o->pk.debug) != OK)
		return cmd_fail("kernel list");
	if (kernel_list(loop, o->pk.arch, &l) != OK) {
		kernel_needs_release(&needs);
		return cmd_fail("kernel list");
	}
	for (size_t i = 0; i < l.n; i++)
		if (kernel_check(loop, &l.v[i], &needs) != OK) {
			/* a broken tree: show it, say why */
			free(l.v[i].config_note);
			l.v[i].config_note = xstrdup(error_msg());
			l.v[i].checked = false;
			error_clear();
		}
	cfgs = configs_words(o);
	if (o->json) {
		json_t *root = json_object(), *arr = json_array(), *c = json_array();

		for (size_t i = 0; i < o->configs.n; i++)
			json_array_append_new(c, json_string(o->configs.v[i]));
		for (size_t i = 0; i < l.n; i++) {
			json_t *k = kernel_json(&l.v[i], false);

			json_object_set_new(k, "default", json_boolean(i == l.auto_index));
			json_array_append_new(arr, k);
		}
		json_object_set_new(root, "configs", c);
		json_object_set_new(root, "kernels", arr);
		print_json(root);
	} else if (!l.n) {
		char *boot = kernel_boot_dir();

		printf("No kernel found: no kernel tree here or in ~/linux, none built before, "
		       "nothing installed in %s.\n"
		       "Give one with --kernel: a kernel source tree (fswb builds it), a bzImage,\n"
		       "or install your distribution's kernel package.\n",
		       boot);
		free(boot);
	} else {
		printf("Kernels (checked against %s; * marks the one fswb uses by default):\n\n",
		       cfgs);
		for (size_t i = 0; i < l.n; i++) {
			print_kernel(&l.v[i], o, i == l.auto_index);
			putchar('\n');
		}
		printf("Choose one with --kernel PATH|VERSION (fswb run, fswb kernel config).\n");
	}
	free(cfgs);
	kernel_list_release(&l);
	kernel_needs_release(&needs);
	return 0;
}

/* ---- config ---- */

static void
print_option(const struct kconfig_result *r)
{
	const char *word = kconfig_result_ok(r)
				   ? (r->verdict == KV_MODULE ? "module" : "set")
				   : (r->verdict == KV_NOT_SET ? "missing" : "dropped");
	struct strbuf opt = STRBUF_INIT;

	if (!strcmp(r->wanted, "n"))
		strbuf_addf(&opt, "# CONFIG_%s is not set", r->name);
	else
		strbuf_addf(&opt, "CONFIG_%s=%s", r->name, r->wanted);
	printf("  %-8s %-40s %s", word, opt.buf, r->source);
	if (r->needed_by)
		printf(" (needed by %s)", r->needed_by);
	putchar('\n');
	if (!kconfig_result_ok(r) || r->verdict == KV_MODULE) {
		if (r->actual && !kconfig_result_ok(r) && r->verdict != KV_CHOICE &&
		    r->verdict != KV_VALUE && strcmp(r->actual, "n"))
			printf("           it is %s\n", r->actual);
		if (r->why)
			printf("           %s\n", r->why);
	}
	strbuf_release(&opt);
}

static int
config_exit(const struct kernel *k)
{
	if (!k->checked)
		return 1;
	if (k->report.nneeded)
		return 1;
	if (k->kind == KERNEL_TREE && !k->own_config && k->report.ndropped)
		return 1;
	return 0;
}

static void
print_report(const struct kernel *k, const struct kopts *o)
{
	const struct kconfig_report *r = &k->report;
	char *cfgs = configs_words(o);

	if (k->kind == KERNEL_TREE) {
		printf("kernel tree %s (%s, %s)\n", k->tree, k->version ? k->version : "?",
		       k->arch);
		if (k->own_config) {
			printf("config: its own .config (%s)\n", k->config);
		} else {
			/* the merged file's first line names what went in */
			char *merged = path_join(k->build_dir, "fswb-merged.config"), *text = NULL;
			const char *what = NULL;

			if (read_file(merged, 16u << 20, &text, NULL) == OK &&
			    (what = strstr(text, ": ")))
				*strchrnul(what, '\n') = '\0';
			error_clear();
			printf("config: %s, then make olddefconfig\n", what ? what + 2 : "?");
			printf("build directory: %s\n", k->build_dir);
			free(text);
			free(merged);
		}
	} else {
		if (k->kind == KERNEL_IMAGE)
			printf("image kernel %s (%s, %s)\n", k->image,
			       k->version ? k->version : "version unknown",
			       k->arch ? k->arch : "?");
		else
			printf("installed kernel %s (%s)\n", k->version, k->arch ? k->arch : "?");
		if (k->config)
			printf("config: %s%s\n", k->config,
			       k->config_source == KCONF_EMBEDDED ? " (extracted from the image)"
								  : "");
	}
	if (!k->checked) {
		printf("\nnothing to check: %s\n", k->config_note ? k->config_note : "no config");
		free(cfgs);
		return;
	}
	printf("\nRequested options for %s: %zu, %zu as asked, %zu %s", cfgs, r->n, r->nset,
	       r->ndropped, k->kind == KERNEL_TREE && !k->own_config ? "dropped" : "missing");
	if (r->nneeded)
		printf(" (%zu of them needed)", r->nneeded);
	printf("\n\n");
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < r->n; i++)
			if (kconfig_result_ok(&r->v[i]) == (pass == 1))
				print_option(&r->v[i]);
	if (r->nneeded)
		printf("\n%s cannot run on this kernel until the options marked needed are set.\n",
		       cfgs);
	else if (r->ndropped)
		printf("\nThe missing options are wanted, not needed: tests that need them do "
		       "not run.\n");
	free(cfgs);
}

static int
do_config(struct loop *loop, struct kopts *o)
{
	struct kernel k;
	struct kernel_needs needs;
	struct kbuild_opts bo = { 0 };
	int rc;

	if (kernel_needs_init(&needs, &profiles, &o->configs, &o->pk.debug) != OK)
		return cmd_fail("kernel config");
	if (kernel_resolve(loop, &o->pk, &k) != OK) {
		rc = cmd_fail("kernel config");
		goto out;
	}
	bo.needs = &needs;
	bo.nice = o->nice;
	if (k.kind == KERNEL_TREE) {
		if (!o->json)
			fprintf(stderr,
				"fswb kernel config: configuring %s (make olddefconfig)...\n",
				k.tree);
		if (kbuild_configure(loop, &bo, &k) != OK) {
			rc = cmd_fail("kernel config");
			goto out;
		}
	} else if (kernel_check(loop, &k, &needs) != OK) {
		rc = cmd_fail("kernel config");
		goto out;
	}
	if (o->json) {
		json_t *root = kernel_json(&k, true), *fr = json_array();

		for (size_t i = 0; i < needs.names.n; i++)
			json_array_append_new(fr, json_string(needs.names.v[i]));
		json_object_set_new(root, "fragments", fr);
		print_json(root);
	} else {
		print_report(&k, o);
	}
	rc = config_exit(&k);
out:
	kernel_release(&k);
	kernel_needs_release(&needs);
	return rc;
}

/* ---- build ---- */

struct printer {
	bool tty;
	int last_tenth;
	char last_detail[64];
	bool open_line;
};

static void
on_event(void *data, const struct event *ev)
{
	struct printer *p = data;
	const char *d = ev->u.stage.detail ? ev->u.stage.detail : "";
	double f = ev->u.stage.fraction;

	if (ev->type != EV_STAGE_PROGRESS)
		return;
	if (p->tty) {
		if (f >= 0)
			fprintf(stderr, "\r\033[K[%3d%%] %s", (int)(f * 100), d);
		else
			fprintf(stderr, "\r\033[K%s", d);
		p->open_line = true;
		return;
	}
	/* a log: a line for each stage, and every 10% */
	if (f >= 0 && f < 1) {
		int tenth = (int)(f * 10);

		if (tenth != p->last_tenth) {
			fprintf(stderr, "fswb kernel build: %3d%% %s\n", tenth * 10, d);
			p->last_tenth = tenth;
		}
		return;
	}
	if (strncmp(p->last_detail, d, sizeof(p->last_detail) - 1) && (!strchr(d, '(') || f >= 1)) {
		fprintf(stderr, "fswb kernel build: %s\n", d);
		snprintf(p->last_detail, sizeof(p->last_detail), "%s", d);
	}
}

static void
on_sigint(struct loop *loop, int signo, void *data)
{
	loop_quit(loop, 128 + signo);
}

static int
do_build(struct loop *loop, struct kopts *o)
{
	struct kernel k;
	struct kernel_needs needs;
	struct kbuild_opts bo = { 0 };
	struct event_bus bus = EVENT_BUS_INIT;
	struct printer pr = { .tty = isatty(2), .last_tenth = -1 };
	uint64_t start = loop_now_ms();
	char dur[32], size[32];
	struct stat st;
	int rc = 0;
	enum status s;

	if (kernel_needs_init(&needs, &profiles, &o->configs, &o->pk.debug) != OK)
		return cmd_fail("kernel build");
	if (kernel_resolve(loop, &o->pk, &k) != OK) {
		rc = cmd_fail("kernel build");
		goto out;
	}
	if (k.kind != KERNEL_TREE) {
		fprintf(stderr,
			"fswb kernel build: error: %s is not a kernel tree, so there is nothing to "
			"build; give --kernel TREE (or run it in a tree)\n",
			k.kind == KERNEL_IMAGE ? k.image : "the installed kernel");
		rc = 2;
		goto out;
	}
	event_bus_add(&bus, (struct listener){ on_event, &pr });
	loop_watch_signal(loop, SIGINT, on_sigint, NULL);
	loop_watch_signal(loop, SIGTERM, on_sigint, NULL);
	bo.needs = &needs;
	bo.jobs = o->jobs;
	bo.nice = o->nice;
	bo.force = o->force;
	s = kbuild_build(loop, &bus, &bo, &k);
	if (pr.open_line)
		fputc('\n', stderr);
	for (size_t i = 0; k.checked && i < k.report.n; i++) {
		const struct kconfig_result *r = &k.report.v[i];

		if (!kconfig_result_ok(r) && r->need != KCONFIG_NEED)
			fprintf(stderr,
				"fswb kernel build: warning: CONFIG_%s=%s (%s) was dropped: %s\n",
				r->name, r->wanted, r->source, r->why ? r->why : "");
	}
	if (s != OK) {
		rc = cmd_fail("kernel build");
		goto out;
	}
	format_duration((double)(loop_now_ms() - start) / 1000.0, dur, sizeof(dur));
	if (stat(k.image, &st) != 0)
		st.st_size = 0;
	printf("built %s for %s in %s\n", k.version ? k.version : "the kernel", k.arch, dur);
	printf("  image    %s (%s)\n", k.image,
	       format_size((uint64_t)st.st_size, size, sizeof(size)));
	printf("  modules  %s\n", k.modules ? k.modules : "none (everything is built in)");
	printf("  config   %s\n", k.config);
	printf("  log      %s\n", k.log);
	{
		char *cfgs = strvec_join(&o->configs, ",");
		struct strbuf cmd = STRBUF_INIT;

		strbuf_adds(&cmd, "fswb run --kernel ");
		sq_quote(&cmd, k.tree);
		if (k.own_config)
			strbuf_adds(&cmd, " --own-config");
		strbuf_addf(&cmd, " -c %s", cfgs);
		printf("Use it with: %s\n", cmd.buf);
		strbuf_release(&cmd);
		free(cfgs);
	}
out:
	event_bus_release(&bus);
	kernel_release(&k);
	kernel_needs_release(&needs);
	return rc;
}

int
cmd_kernel(int argc, char **argv)
{
	struct kopts o;
	struct loop *loop;
	int rc;

	memset(&o, 0, sizeof(o));
	strvec_init(&o.configs);
	strvec_init(&o.pk.debug);
	o.pk.kind = KERNEL_AUTO;
	o.nice = 10;
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		fputs(kernel_usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	o.sub = argv[1];
	if (strcmp(o.sub, "list") && strcmp(o.sub, "config") && strcmp(o.sub, "build")) {
		static const char *const subs[] = { "list", "config", "build" };
		const char *close = closest_match(o.sub, subs, ARRAY_SIZE(subs));

		if (close)
			die("fswb kernel: unknown subcommand '%s' (did you mean '%s'?); see 'fswb "
			    "kernel --help'",
			    o.sub, close);
		die("fswb kernel: unknown subcommand '%s'; it is list, config or build", o.sub);
	}
	parse(argc - 1, argv + 1, &o);
	loop = loop_new();
	if (!strcmp(o.sub, "list"))
		rc = do_list(loop, &o);
	else if (!strcmp(o.sub, "config"))
		rc = do_config(loop, &o);
	else
		rc = do_build(loop, &o);
	loop_free(loop);
	free(o.pk.spec);
	free(o.pk.modules);
	free(o.pk.arch);
	strvec_clear(&o.pk.debug);
	strvec_clear(&o.configs);
	profiles_release(&profiles);
	return rc;
}
