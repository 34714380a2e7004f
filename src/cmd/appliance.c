/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fswb appliance build|list|rm|initramfs: the test appliance image and the
 * initramfs of a modular kernel.
 */
#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backends/backend.h"
#include "cmd/cmd.h"
#include "core/event.h"
#include "core/loop.h"
#include "core/paths.h"
#include "core/plan.h"
#include "core/status.h"
#include "core/util.h"
#include "kbuild/kernel.h"
#include "rootfs/appliance.h"
#include "rootfs/initramfs.h"

static const char appliance_usage[] =
	"usage: fswb appliance build [--fstests-src DIR|URL] [--release NAME] [--mirror URL]\n"
	"                            [--arch ARCH]\n"
	"                            [--packages PKG,..] [-j N] [--force] [--dry-run] [--json]\n"
	"       fswb appliance list [--json]\n"
	"       fswb appliance rm ID... | --all | --device SERIAL [--workdir DIR]\n"
	"       fswb appliance initramfs [--kernel VERSION] [--modules DIR]\n"
	"\n"
	"  build      build the test appliance (a Debian root filesystem with fstests and\n"
	"             fswb's agent, as an ext4 image), or reuse the cached one made\n"
	"             from the same inputs; prints its id and image\n"
	"  list       the appliances in the cache\n"
	"  rm         remove cached appliances (ID: a prefix of one, as list shows);\n"
	"             --device: the chroot (and all of fswb's) on an Android device\n"
	"  initramfs  build (or reuse) the initramfs a modular kernel boots with;\n"
	"             prints its path\n"
	"\n"
	"      --fstests-src DIR|URL fstests to build in: a directory (copied without .git\n"
	"                            and build products) or a git URL[#REF]; default the\n"
	"                            upstream " APPLIANCE_FSTESTS_URL "\n"
	"      --release NAME        Debian release (default: 'release' in the config\n"
	"                            file, else the host's)\n"
	"      --mirror URL          Debian mirror (default: 'mirror' in the config file,\n"
	"                            else the host's apt sources)\n"
	"      --arch ARCH           x86_64 or arm64 (default: this host's; another one is\n"
	"                            built through qemu-user-static)\n"
	"      --packages PKG,..     replace the package list (for tests: 'mount' alone\n"
	"                            makes a small appliance that still boots)\n"
	"  -j, --jobs N              make -jN for fstests (default: the number of CPUs)\n"
	"      --force               build even when a cached appliance matches\n"
	"      --dry-run             say what would be built and whether it is cached\n"
	"      --kernel VERSION      (initramfs) an installed kernel (default: the\n"
	"                            running one when installed, else the newest)\n"
	"      --modules DIR         (initramfs) its modules directory (holding modules.dep)\n"
	"      --all                 (rm) remove every cached appliance\n"
	"      --device SERIAL       (rm) the adb device, as `adb devices` lists it\n"
	"      --workdir DIR         (rm --device) fswb's directory there (/data/fswb)\n"
	"      --json                print as JSON (build, list)\n";

enum {
	OPT_FSTESTS_SRC = 256,
	OPT_RELEASE,
	OPT_MIRROR,
	OPT_PACKAGES,
	OPT_FORCE,
	OPT_DRY_RUN,
	OPT_KERNEL,
	OPT_MODULES,
	OPT_ALL,
	OPT_JSON,
	OPT_DEVICE,
	OPT_WORKDIR,
	OPT_ARCH,
};

static const struct option appliance_options[] = {
	{ "fstests-src", required_argument, NULL, OPT_FSTESTS_SRC },
	{ "release", required_argument, NULL, OPT_RELEASE },
	{ "mirror", required_argument, NULL, OPT_MIRROR },
	{ "packages", required_argument, NULL, OPT_PACKAGES },
	{ "jobs", required_argument, NULL, 'j' },
	{ "force", no_argument, NULL, OPT_FORCE },
	{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
	{ "kernel", required_argument, NULL, OPT_KERNEL },
	{ "modules", required_argument, NULL, OPT_MODULES },
	{ "all", no_argument, NULL, OPT_ALL },
	{ "device", required_argument, NULL, OPT_DEVICE },
	{ "arch", required_argument, NULL, OPT_ARCH },
	{ "workdir", required_argument, NULL, OPT_WORKDIR },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

struct aopts {
	const char *sub;
	const char *fstests_src, *release, *mirror, *kernel, *modules, *device, *workdir, *arch;
	bool packages_given;
	struct strvec packages;
	unsigned jobs;
	bool force, dry_run, all, json;
	struct strvec args;
};

static void
parse(int argc, char **argv, struct aopts *o)
{
	char cmd[64];
	int c;

	snprintf(cmd, sizeof(cmd), "appliance %s", o->sub);
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "j:h", appliance_options, NULL)) != -1) {
		switch (c) {
		case OPT_FSTESTS_SRC:
			o->fstests_src = optarg;
			break;
		case OPT_RELEASE:
			o->release = optarg;
			break;
		case OPT_MIRROR:
			o->mirror = optarg;
			break;
		case OPT_PACKAGES:
			o->packages_given = true;
			strvec_split(&o->packages, optarg, ", \t\n");
			break;
		case 'j': {
			char *end;
			unsigned long v;

			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || v < 1 || v > 1024)
				die("fswb appliance: --jobs: '%s' is not a whole number from 1 to "
				    "1024",
				    optarg);
			o->jobs = (unsigned)v;
			break;
		}
		case OPT_FORCE:
			o->force = true;
			break;
		case OPT_DRY_RUN:
			o->dry_run = true;
			break;
		case OPT_KERNEL:
			o->kernel = optarg;
			break;
		case OPT_MODULES:
			o->modules = optarg;
			break;
		case OPT_ALL:
			o->all = true;
			break;
		case OPT_DEVICE:
			o->device = optarg;
			break;
		case OPT_ARCH:
			if (strcmp(optarg, "x86_64") && strcmp(optarg, "arm64"))
				die("fswb appliance: --arch: '%s' is not x86_64 or arm64", optarg);
			o->arch = optarg;
			break;
		case OPT_WORKDIR:
			o->workdir = optarg;
			break;
		case OPT_JSON:
			o->json = true;
			break;
		case 'h':
			fputs(appliance_usage, stdout);
			exit(0);
		default:
			cmd_bad_option(cmd, argv[optind - 1], appliance_options);
		}
	}
	for (int i = optind; i < argc; i++) {
		if (argv[i][0] == '-' && strcmp(argv[i], "--"))
			cmd_bad_option(cmd, argv[i], appliance_options);
		if (strcmp(argv[i], "--"))
			strvec_push(&o->args, argv[i]);
	}
}

/* ---- progress on stderr ---- */

struct printer {
	bool tty;
	bool open_line;
	char last[128];
	int last_tenth;
};

static void
on_event(void *data, const struct event *ev)
{
	struct printer *p = data;
	const char *d;
	double f;

	if (ev->type == EV_WARNING) {
		if (p->open_line)
			fputc('\n', stderr);
		p->open_line = false;
		fprintf(stderr, "fswb appliance: warning: %s\n", ev->u.error.message);
		return;
	}
	if (ev->type != EV_STAGE_PROGRESS)
		return;
	d = ev->u.stage.detail ? ev->u.stage.detail : "";
	f = ev->u.stage.fraction;
	if (p->tty) {
		if (f >= 0)
			fprintf(stderr, "\r\033[K[%3d%%] %s", (int)(f * 100), d);
		else
			fprintf(stderr, "\r\033[K%s", d);
		p->open_line = true;
		return;
	}
	/* a log: a line when the step changes, and every 10% */
	{
		int tenth = f >= 0 ? (int)(f * 10) : -1;

		if (!strcmp(d, p->last) && tenth == p->last_tenth)
			return;
		snprintf(p->last, sizeof(p->last), "%s", d);
		p->last_tenth = tenth;
		if (f >= 0)
			fprintf(stderr, "fswb appliance: %3d%% %s\n", (int)(f * 100), d);
		else
			fprintf(stderr, "fswb appliance: %s\n", d);
	}
}

static void
on_sigint(struct loop *loop, int signo, void *data)
{
	loop_quit(loop, 128 + signo);
}

static json_t *
jstr(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *
appliance_json(const struct appliance *a)
{
	json_t *o = json_object();

	json_object_set_new(o, "id", jstr(a->id));
	json_object_set_new(o, "key", jstr(a->key));
	json_object_set_new(o, "image", jstr(a->image));
	json_object_set_new(o, "dir", jstr(a->dir));
	json_object_set_new(o, "release", jstr(a->release));
	json_object_set_new(o, "mirror", jstr(a->mirror));
	json_object_set_new(o, "fstests_src", jstr(a->fstests_src));
	json_object_set_new(o, "fstests_rev", jstr(a->fstests_rev));
	json_object_set_new(o, "tool", jstr(a->tool));
	json_object_set_new(o, "arch", jstr(a->arch));
	json_object_set_new(o, "packages", json_integer(a->packages));
	json_object_set_new(o, "image_size", json_integer((json_int_t)a->image_size));
	json_object_set_new(o, "image_used", json_integer((json_int_t)a->image_used));
	json_object_set_new(o, "build_seconds", json_real(a->build_seconds));
	json_object_set_new(o, "built", json_integer((json_int_t)a->built));
	json_object_set_new(o, "reused", json_boolean(a->reused));
	return o;
}

static void
print_json(json_t *o)
{
	char *text = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

	if (text)
		printf("%s\n", text);
	free(text);
	json_decref(o);
}

static const char *
format_time(int64_t t, char *buf, size_t len)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (!t || !gmtime_r(&tt, &tm))
		snprintf(buf, len, "-");
	else
		strftime(buf, len, "%Y-%m-%d %H:%M", &tm);
	return buf;
}

static void
print_appliance(const struct appliance *a)
{
	char size[32], used[32], dur[32], when[32];

	printf("  image    %s (%s, %s used)\n", a->image,
	       format_size(a->image_size, size, sizeof(size)),
	       format_size(a->image_used, used, sizeof(used)));
	printf("  release  %s from %s\n", a->release ? a->release : "?",
	       a->mirror ? a->mirror : "?");
	printf("  fstests  %s (%s)\n", a->fstests_src ? a->fstests_src : "?",
	       a->fstests_rev ? a->fstests_rev : "?");
	printf("  built    %s UTC with %s in %s\n", format_time(a->built, when, sizeof(when)),
	       a->tool ? a->tool : "?", format_duration(a->build_seconds, dur, sizeof(dur)));
}

static void
fill_opts(const struct aopts *o, struct appliance_opts *ao)
{
	memset(ao, 0, sizeof(*ao));
	ao->release = o->release;
	ao->mirror = o->mirror;
	ao->fstests_src = o->fstests_src;
	ao->arch = o->arch;
	ao->packages = o->packages_given ? (const char *const *)o->packages.v : NULL;
	ao->jobs = o->jobs;
	ao->force = o->force;
}

static int
do_build(struct loop *loop, struct aopts *o)
{
	struct appliance_opts ao;
	struct appliance a;
	struct event_bus bus = EVENT_BUS_INIT;
	struct printer pr = { .tty = isatty(2), .last_tenth = -2 };
	uint64_t start = loop_now_ms();
	enum status rc;

	if (o->args.n)
		die("fswb appliance build: unexpected argument '%s'", o->args.v[0]);
	fill_opts(o, &ao);
	event_bus_add(&bus, (struct listener){ on_event, &pr });
	loop_watch_signal(loop, SIGINT, on_sigint, NULL);
	loop_watch_signal(loop, SIGTERM, on_sigint, NULL);
	if (o->dry_run) {
		bool cached;

		rc = appliance_resolve(loop, &bus, &ao, &a, &cached);
		if (pr.open_line)
			fputc('\n', stderr);
		if (rc != OK) {
			event_bus_release(&bus);
			return cmd_fail("appliance build");
		}
		if (o->json) {
			json_t *j = appliance_json(&a);

			json_object_set_new(j, "cached", json_boolean(cached));
			print_json(j);
		} else {
			printf("appliance %s %s\n", a.id, cached ? "is cached" : "would be built");
			printf("  key      %s\n", a.key);
			printf("  image    %s\n", a.image);
			printf("  release  %s from %s\n", a.release, a.mirror);
			printf("  fstests  %s (%s)\n", a.fstests_src, a.fstests_rev);
			printf("  packages %u, with %s\n", a.packages, a.tool);
		}
		appliance_release(&a);
		event_bus_release(&bus);
		return 0;
	}
	rc = appliance_ensure(loop, &bus, &ao, &a);
	if (pr.open_line)
		fputc('\n', stderr);
	event_bus_release(&bus);
	if (rc != OK)
		return cmd_fail("appliance build");
	if (o->json) {
		print_json(appliance_json(&a));
	} else {
		if (a.reused)
			printf("appliance %s reused (in %.2f s)\n", a.id,
			       (double)(loop_now_ms() - start) / 1000.0);
		else
			printf("appliance %s built\n", a.id);
		print_appliance(&a);
	}
	appliance_release(&a);
	return 0;
}

static int
do_list(struct aopts *o)
{
	struct appliance *v;
	size_t n;

	if (o->args.n)
		die("fswb appliance list: unexpected argument '%s'", o->args.v[0]);
	if (appliance_list(&v, &n) != OK)
		return cmd_fail("appliance list");
	if (o->json) {
		json_t *arr = json_array();

		for (size_t i = 0; i < n; i++)
			json_array_append_new(arr, appliance_json(&v[i]));
		print_json(arr);
	} else if (!n) {
		printf("no appliances in the cache; 'fswb appliance build' makes one\n");
	} else {
		printf("%-12s  %-16s  %-9s  %-10s  %s\n", "ID", "BUILT (UTC)", "RELEASE", "SIZE",
		       "FSTESTS");
		for (size_t i = 0; i < n; i++) {
			char when[32], used[32];

			printf("%-12s  %-16s  %-9s  %-10s  %s (%s)\n", v[i].id,
			       format_time(v[i].built, when, sizeof(when)),
			       v[i].release ? v[i].release : "?",
			       format_size(v[i].image_used, used, sizeof(used)),
			       v[i].fstests_src ? v[i].fstests_src : "?",
			       v[i].fstests_rev ? v[i].fstests_rev : "?");
		}
	}
	appliance_list_free(v, n);
	return 0;
}

static int
do_rm(struct aopts *o)
{
	int rc = 0;

	if (o->workdir && !o->device)
		die("fswb appliance rm: --workdir goes with --device SERIAL");
	if (o->device) {
		if (o->all || o->args.n)
			die("fswb appliance rm: give --device SERIAL alone (IDs and --all are the "
			    "cache's)");
		if (adb_remove_work(o->device, o->workdir) != OK)
			return cmd_fail("appliance rm");
		printf("removed %s on %s\n", o->workdir ? o->workdir : "/data/fswb", o->device);
		return 0;
	}
	if (o->all) {
		unsigned removed = 0;

		if (o->args.n)
			die("fswb appliance rm: give IDs or --all, not both");
		if (appliance_remove_all(&removed) != OK)
			rc = cmd_fail("appliance rm");
		printf("removed %u appliance%s\n", removed, removed == 1 ? "" : "s");
		return rc;
	}
	if (!o->args.n)
		die("fswb appliance rm: give the ID of an appliance (see 'fswb appliance list') or "
		    "--all");
	for (size_t i = 0; i < o->args.n; i++) {
		if (appliance_remove(o->args.v[i]) != OK)
			rc = cmd_fail("appliance rm");
		else
			printf("removed %s\n", o->args.v[i]);
	}
	return rc;
}

static int
do_initramfs(struct loop *loop, struct aopts *o)
{
	struct event_bus bus = EVENT_BUS_INIT;
	struct printer pr = { .tty = isatty(2), .last_tenth = -2 };
	char *version = NULL, *modules = NULL, *path = NULL;
	enum status rc;
	int ret = 0;

	if (o->args.n)
		die("fswb appliance initramfs: unexpected argument '%s'", o->args.v[0]);
	if (o->modules) {
		const char *base;

		if (!path_is_dir(o->modules))
			die("fswb appliance initramfs: --modules: '%s' is not a directory",
			    o->modules);
		base = strrchr(o->modules, '/');
		version = xstrdup(o->kernel ? o->kernel : base && base[1] ? base + 1 : o->modules);
		modules = xstrdup(o->modules);
	} else {
		struct plan_kernel pk = { .kind = KERNEL_INSTALLED };
		struct kernel k;

		pk.spec = (char *)o->kernel;
		strvec_init(&pk.debug);
		rc = kernel_resolve(loop, &pk, &k);
		if (rc != OK) {
			kernel_release(&k);
			return cmd_fail("appliance initramfs");
		}
		version = k.version ? xstrdup(k.version) : NULL;
		modules = k.modules ? xstrdup(k.modules) : NULL;
		kernel_release(&k);
		if (!version)
			die("fswb appliance initramfs: cannot tell the kernel's version; give "
			    "--kernel VERSION");
		if (!modules) {
			printf("kernel %s needs no initramfs: it has no modules\n", version);
			free(version);
			return 0;
		}
	}
	event_bus_add(&bus, (struct listener){ on_event, &pr });
	loop_watch_signal(loop, SIGINT, on_sigint, NULL);
	rc = initramfs_ensure(loop, &bus, version, modules, &path);
	if (pr.open_line)
		fputc('\n', stderr);
	if (rc != OK)
		ret = cmd_fail("appliance initramfs");
	else if (!path)
		printf("kernel %s needs no initramfs: what fswb needs is built in\n", version);
	else
		printf("%s\n", path);
	event_bus_release(&bus);
	free(version);
	free(modules);
	free(path);
	return ret;
}

int
cmd_appliance(int argc, char **argv)
{
	static const char *const subs[] = { "build", "list", "rm", "initramfs" };
	struct aopts o;
	struct loop *loop;
	int rc;

	memset(&o, 0, sizeof(o));
	strvec_init(&o.packages);
	strvec_init(&o.args);
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		fputs(appliance_usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	o.sub = argv[1];
	{
		bool known = false;

		for (size_t i = 0; i < ARRAY_SIZE(subs); i++)
			known |= !strcmp(o.sub, subs[i]);
		if (!known) {
			const char *close = closest_match(o.sub, subs, ARRAY_SIZE(subs));

			if (close)
				die("fswb appliance: unknown subcommand '%s' (did you mean '%s'?); "
				    "see 'fswb appliance --help'",
				    o.sub, close);
			die("fswb appliance: unknown subcommand '%s'; it is build, list, rm or "
			    "initramfs",
			    o.sub);
		}
	}
	parse(argc - 1, argv + 1, &o);
	if (o.arch && strcmp(o.sub, "build"))
		die("fswb appliance %s: --arch is build's", o.sub);
	if ((o.device || o.workdir) && strcmp(o.sub, "rm"))
		die("fswb appliance %s: --device and --workdir are rm's (the chroot on an Android "
		    "device)",
		    o.sub);
	loop = loop_new();
	if (!strcmp(o.sub, "build"))
		rc = do_build(loop, &o);
	else if (!strcmp(o.sub, "list"))
		rc = do_list(&o);
	else if (!strcmp(o.sub, "rm"))
		rc = do_rm(&o);
	else
		rc = do_initramfs(loop, &o);
	loop_free(loop);
	strvec_clear(&o.packages);
	strvec_clear(&o.args);
	return rc;
}
