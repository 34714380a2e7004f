/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fswb's composition root: argv becomes a plan, the plan goes to the TUI or
 * to the headless commands. Nothing below reads argv.
 */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/jread.h"
#include "core/paths.h"
#include "core/plan.h"
#include "core/profile.h"
#include "core/status.h"
#include "core/util.h"
#include "backends/backend.h"
#include "fstests/catalogue.h"
#include "cmd/cmd.h"
#include "run/plan_check.h"
#include "run/shards.h"
#include "ui/ui.h"

/* Print the recorded error and return the exit code for "nothing could run". */
static int
report(enum status rc)
{
	term_fprintf(stderr, "fswb: error: %s\n", error_msg());
	return rc == OK ? 0 : 2;
}

static const char usage_text[] =
	"usage: fswb [--help] [--version] [COMMAND [OPTIONS]]\n"
	"\n"
	"fswb, the fstests workbench, runs the Linux filesystem test suite fstests\n"
	"(xfstests) for you: it picks a kernel, a filesystem configuration, a place to\n"
	"run and a set of tests, builds what is missing and runs check.\n"
	"\n"
	"Commands:\n"
	"  tui [--history|--open RUN|--docs [PAGE]]  the workbench in the terminal (also: fswb "
	"alone)\n"
	"  run [OPTIONS] [TEST...]   run fstests (headless; prints a line per test)\n"
	"  shell [OPTIONS]           a guest made ready for the tests, and a shell in it\n"
	"  plan [OPTIONS] --dump     print the plan those options make, as JSON\n"
	"  profiles [show CFG]       list filesystem configurations and test sets\n"
	"  results [COMMAND]         past runs; show, compare, baseline (and regressions\n"
	"                            against it), flaky, report (for a mailing list),\n"
	"                            html, import ('fswb results --help')\n"
	"  kernel list|config|build  the kernels fswb can use; a tree's fstests config; build it\n"
	"  appliance build|list|rm|initramfs  the test appliance image; a modular kernel's "
	"initramfs\n"
	"  doctor [--json]           check this machine: what each backend needs, with fixes\n"
	"\n"
	"Options of run and plan (the ones fstests users know keep their meaning):\n"
	"  -c, --config FS/CFG[,..]  filesystem configurations, as xfstests-bld names\n"
	"                            them (ext4/4k, xfs/1k, btrfs/default); default ext4/4k\n"
	"  -g, --group GROUP[,..]    run the tests in these groups (check -g)\n"
	"  -x, --exclude-group GROUP[,..]  leave out the tests in these groups (check -x)\n"
	"  -e, --exclude TEST[,..]   leave out these tests (check -e)\n"
	"  -E, --exclude-file FILE   leave out the tests listed in FILE (check -E)\n"
	"      --preset NAME         a test set: smoke (default), quick or auto\n"
	"      --settings-from NAME  the settings of test set NAME (SOAK_DURATION...)\n"
	"                            for the tests named, without the set's tests\n"
	"      --kernel PATH|VERSION a kernel tree, a bzImage, or an installed version\n"
	"      --modules PATH        modules directory or tarball for a bzImage\n"
	"      --own-config          build a kernel tree with its own .config\n"
	"      --debug FRAG[,..]     add debug options to a built kernel: kasan,\n"
	"                            lockdep, kmemleak\n"
	"      --arch ARCH           x86_64 (default) or arm64\n"
	"      --backend NAME        where to run: qemu (default), libvirt (the guest as\n"
	"                            a libvirt domain: -o uri=URI), gce (Compute Engine\n"
	"                            instances: -o zone= -o bucket= -o key= -o cost=ok),\n"
	"                            ssh (a prepared test machine) or adb (a rooted\n"
	"                            Android device: -o serial=SERIAL)\n"
	"                            (docs: fswb tui --docs backends)\n"
	"  -o, --backend-opt KEY=VALUE  an option for the backend\n"
	"      --accept-new-host-key (ssh) trust a test machine's host key fswb has not\n"
	"                            seen (a changed key is still refused); -o hostkey=accept-new\n"
	"      --yes-destroy DEV[,..]  (ssh, adb) the devices the tests may format,\n"
	"                            destroying what they hold; -o wipe=DEV,..\n"
	"      --fstests-src DIR|URL fstests to build into the appliance\n"
	"      --cpus N              CPUs per guest (default 2)\n"
	"      --mem SIZE            memory per guest (default 2G)\n"
	"      --shards N|auto       run N guests of the backend at once, each with --cpus\n"
	"                            and --mem, sharing the tests (default auto: as many\n"
	"                            as this host's cores and memory hold)\n"
	"      --test-timeout SECONDS  a test running longer counts as hung (default: 5 times\n"
	"                            its expected time, at least 10 minutes; it is flagged\n"
	"                            at twice its expected time)\n"
	"  -n, --dry-run             (run) say which tests would run, run none: with\n"
	"                            --fstests-src DIR, per configuration on this host\n"
	"                            (descriptions, groups, counts, what is left out and\n"
	"                            why); else check -n in a guest\n"
	"      --shell               (run) then a shell in the last guest; 'exit' or Ctrl-] ends "
	"it\n"
	"      --detach              (run; gce) start the instances, give each its whole\n"
	"                            share of the tests and return; they run on without\n"
	"                            fswb and delete themselves; `fswb results fetch RUN`\n"
	"                            follows them and collects the results\n"
	"      --stop-on-crash       a crashed or hung guest ends its configuration (default:\n"
	"                            a new guest runs the remaining tests)\n"
	"      --max-results SIZE    the most a configuration's results may take, as the\n"
	"                            archive the guest sends and unpacked (default 2G)\n"
	"      --rerun-failures N    run a failed test N times more (check -L N) and\n"
	"                            count how often it passed\n"
	"      --fail-on WHAT        (run) exit 1 for 'failures' (default) or only for\n"
	"                            'regressions': failures the baseline does not have\n"
	"                            (fswb results baseline set RUN)\n"
	"      --plan FILE           start from a saved plan (JSON)\n"
	"      --dump                (plan) print the plan as JSON\n"
	"  TEST...                   tests by name or glob: generic/001 'xfs/1*'\n"
	"\n"
	"Options of profiles, results and doctor:\n"
	"      --json                print as JSON (run: the events as JSON lines)\n"
	"\n"
	"General options:\n"
	"  -h, --help                show this help\n"
	"  -V, --version             show fswb's version\n"
	"\n"
	"See fswb(1) and docs/getting-started/ for more.\n";

static void
usage(FILE *f)
{
	fputs(usage_text, f);
}

/* ---- profiles ---- */

static struct profiles profiles;
static bool profiles_loaded;

static const struct profiles *
load_profiles(void)
{
	char *datadir, *dir;
	enum status rc;

	if (profiles_loaded)
		return &profiles;
	datadir = fswb_datadir();
	dir = path_join(datadir, "profiles");
	rc = profiles_load(dir, &profiles);
	free(datadir);
	free(dir);
	if (rc != OK)
		die("%s", error_msg());
	profiles_loaded = true;
	return &profiles;
}

/* ---- option parsing for run and plan ---- */

/*
 * The backend's files on this host (-o key=FILE...) as absolute paths: the
 * plan is kept with the run (fswb results fetch reads it from anywhere) and
 * remembered by the wizard.
 */
static void
absolute_files(struct plan *plan)
{
	const struct backend_ops *ops = plan->backend ? backend_find(plan->backend) : NULL;

	for (size_t i = 0; ops && ops->options && ops->options[i].key; i++) {
		const char *v = plan_backend_opt(plan, ops->options[i].key);
		char *abs;

		if (!v || *v == '/' || strcmp(ops->options[i].value, "FILE") ||
		    !(abs = realpath(v, NULL)))
			continue;
		plan_set_backend_opt(plan, ops->options[i].key, abs);
		free(abs);
	}
}

enum {
	OPT_PRESET = 256,
	OPT_SETTINGS_FROM,
	OPT_KERNEL,
	OPT_MODULES,
	OPT_OWN_CONFIG,
	OPT_DEBUG,
	OPT_ARCH,
	OPT_BACKEND,
	OPT_FSTESTS_SRC,
	OPT_CPUS,
	OPT_MEM,
	OPT_SHARDS,
	OPT_TEST_TIMEOUT,
	OPT_MAX_RESULTS,
	OPT_STOP_ON_CRASH,
	OPT_DETACH,
	OPT_SHELL,
	OPT_PLAN,
	OPT_DUMP,
	OPT_JSON,
	OPT_FAIL_ON,
	OPT_RERUN_FAILURES,
	OPT_ACCEPT_NEW_HOST_KEY,
	OPT_YES_DESTROY,
};

static const struct option plan_options[] = {
	{ "config", required_argument, NULL, 'c' },
	{ "group", required_argument, NULL, 'g' },
	{ "exclude-group", required_argument, NULL, 'x' },
	{ "exclude", required_argument, NULL, 'e' },
	{ "exclude-file", required_argument, NULL, 'E' },
	{ "preset", required_argument, NULL, OPT_PRESET },
	{ "settings-from", required_argument, NULL, OPT_SETTINGS_FROM },
	{ "kernel", required_argument, NULL, OPT_KERNEL },
	{ "modules", required_argument, NULL, OPT_MODULES },
	{ "own-config", no_argument, NULL, OPT_OWN_CONFIG },
	{ "debug", required_argument, NULL, OPT_DEBUG },
	{ "arch", required_argument, NULL, OPT_ARCH },
	{ "backend", required_argument, NULL, OPT_BACKEND },
	{ "backend-opt", required_argument, NULL, 'o' },
	{ "accept-new-host-key", no_argument, NULL, OPT_ACCEPT_NEW_HOST_KEY },
	{ "yes-destroy", required_argument, NULL, OPT_YES_DESTROY },
	{ "fstests-src", required_argument, NULL, OPT_FSTESTS_SRC },
	{ "cpus", required_argument, NULL, OPT_CPUS },
	{ "mem", required_argument, NULL, OPT_MEM },
	{ "shards", required_argument, NULL, OPT_SHARDS },
	{ "test-timeout", required_argument, NULL, OPT_TEST_TIMEOUT },
	{ "max-results", required_argument, NULL, OPT_MAX_RESULTS },
	{ "stop-on-crash", no_argument, NULL, OPT_STOP_ON_CRASH },
	{ "detach", no_argument, NULL, OPT_DETACH },
	{ "shell", no_argument, NULL, OPT_SHELL },
	{ "dry-run", no_argument, NULL, 'n' },
	{ "plan", required_argument, NULL, OPT_PLAN },
	{ "dump", no_argument, NULL, OPT_DUMP },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "fail-on", required_argument, NULL, OPT_FAIL_ON },
	{ "rerun-failures", required_argument, NULL, OPT_RERUN_FAILURES },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

struct cli {
	struct plan plan;
	bool dump;
	bool json;
	enum fail_on fail_on;
};

static void
push_list(struct strvec *sv, const char *arg)
{
	strvec_split(sv, arg, ", \t\n");
}

static unsigned
parse_count(const char *opt, const char *arg, unsigned max)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || v < 1 || v > max)
		die("--%s: '%s' is not a whole number from 1 to %u", opt, arg, max);
	return (unsigned)v;
}

/* --mem below what a guest takes: the range, up to what this host can give one. */
static void
mem_too_little(const char *arg)
{
	struct host_size host;
	char most[32], has[32], keep[32];

	host_size_read(&host);
	if (host.mem > PLAN_MEM_MIN + SHARDS_HOST_KEEP)
		die("--mem: '%s' is less than a guest needs; give 256M to %s (this host's %s "
		    "less %s for itself); fstests wants 2G",
		    arg, format_size(host.mem - SHARDS_HOST_KEEP, most, sizeof(most)),
		    format_size(host.mem, has, sizeof(has)),
		    format_size(SHARDS_HOST_KEEP, keep, sizeof(keep)));
	die("--mem: '%s' is less than a guest needs; give 256M or more; fstests wants 2G", arg);
}

/*
 * Parse the options of run and plan into cli->plan. --plan FILE is read
 * first, whatever its position, so that the other options refine it.
 */
static void
parse_plan_args(const char *cmd, int argc, char **argv, struct cli *cli)
{
	const struct profiles *prof = load_profiles();
	struct plan *plan = &cli->plan;
	bool configs_given = false, tests_given = false;
	struct host_size host;
	enum status rc;
	int c;

	plan_init(plan);
	for (int i = 1; i < argc; i++) {
		const char *file = NULL;

		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "--plan") && i + 1 < argc)
			file = argv[i + 1];
		else if (str_startswith(argv[i], "--plan="))
			file = argv[i] + 7;
		if (file && plan_load(file, plan) != OK)
			die("%s", error_msg());
	}

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "c:g:x:e:E:o:nh", plan_options, NULL)) != -1) {
		switch (c) {
		case 'c':
			if (!configs_given)
				strvec_clear(&plan->configs);
			configs_given = true;
			{
				struct strvec names = STRVEC_INIT;

				push_list(&names, optarg);
				for (size_t i = 0; i < names.n; i++)
					if (profiles_resolve_configs(prof, names.v[i],
								     &plan->configs) != OK)
						die("-c: %s", error_msg());
				strvec_clear(&names);
			}
			break;
		case 'g':
			if (!tests_given) {
				free(plan->tests.preset);
				plan->tests.preset = NULL;
			}
			tests_given = true;
			push_list(&plan->tests.groups, optarg);
			break;
		case 'x':
			push_list(&plan->tests.xgroups, optarg);
			break;
		case 'e':
			push_list(&plan->tests.exclude, optarg);
			break;
		case 'E':
			strvec_push(&plan->tests.exclude_files, optarg);
			break;
		case OPT_PRESET:
			free(plan->tests.preset);
			plan->tests.preset = xstrdup(optarg);
			tests_given = true;
			break;
		case OPT_SETTINGS_FROM:
			free(plan->tests.settings_from);
			plan->tests.settings_from = xstrdup(optarg);
			break;
		case OPT_KERNEL:
			if (plan_kernel_set(&plan->kernel, optarg) != OK)
				die("--kernel: %s", error_msg());
			break;
		case OPT_MODULES:
			free(plan->kernel.modules);
			plan->kernel.modules = xstrdup(optarg);
			break;
		case OPT_OWN_CONFIG:
			plan->kernel.own_config = true;
			break;
		case OPT_DEBUG:
			push_list(&plan->kernel.debug, optarg);
			break;
		case OPT_ARCH:
			free(plan->kernel.arch);
			plan->kernel.arch = xstrdup(optarg);
			break;
		case OPT_BACKEND:
			free(plan->backend);
			plan->backend = xstrdup(optarg);
			break;
		case 'o':
			if (plan_set_backend_kv(plan, optarg) != OK)
				die("--backend-opt: %s", error_msg());
			break;
		case OPT_ACCEPT_NEW_HOST_KEY:
			plan_set_backend_opt(plan, "hostkey", "accept-new");
			break;
		case OPT_YES_DESTROY: {
			const char *had = plan_backend_opt(plan, "wipe");
			char *all = had ? xasprintf("%s,%s", had, optarg) : xstrdup(optarg);

			plan_set_backend_opt(plan, "wipe", all);
			free(all);
			break;
		}
		case OPT_FSTESTS_SRC:
			free(plan->fstests_src);
			plan->fstests_src = xstrdup(optarg);
			break;
		case OPT_CPUS:
			plan->cpus = parse_count("cpus", optarg, 1024);
			break;
		case OPT_MEM:
			if (parse_size(optarg, &plan->mem) != OK)
				die("--mem: %s", error_msg());
			if (plan->mem < PLAN_MEM_MIN)
				mem_too_little(optarg);
			break;
		case OPT_SHARDS:
			plan->shards = strcmp(optarg, "auto")
					       ? parse_count("shards", optarg, PLAN_SHARDS_MAX)
					       : 0;
			break;
		case OPT_TEST_TIMEOUT:
			plan->test_timeout = parse_count("test-timeout", optarg, 7 * 86400);
			break;
		case OPT_STOP_ON_CRASH:
			plan->stop_on_crash = true;
			break;
		case OPT_DETACH:
			plan->detach = true;
			break;
		case OPT_MAX_RESULTS:
			if (parse_size(optarg, &plan->max_results) != OK || !plan->max_results)
				die("--max-results: %s",
				    plan->max_results ? error_msg() : "the size must be above 0");
			break;
		case OPT_SHELL:
			plan->shell = true;
			break;
		case 'n':
			plan->dry_run = true;
			break;
		case OPT_PLAN:
			break; /* read above */
		case OPT_DUMP:
			cli->dump = true;
			break;
		case OPT_JSON:
			cli->json = true;
			break;
		case OPT_FAIL_ON:
			if (!strcmp(optarg, "failures"))
				cli->fail_on = FAIL_ON_FAILURES;
			else if (!strcmp(optarg, "regressions"))
				cli->fail_on = FAIL_ON_REGRESSIONS;
			else
				die("--fail-on: '%s' is not 'failures' or 'regressions'", optarg);
			break;
		case OPT_RERUN_FAILURES:
			plan->rerun_failures =
				parse_count("rerun-failures", optarg, PLAN_RERUN_MAX);
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			cmd_bad_option(cmd, argv[optind - 1], plan_options);
		}
	}
	for (int i = optind; i < argc; i++) {
		if (argv[i][0] == '-' && strcmp(argv[i], "--"))
			cmd_bad_option(cmd, argv[i], plan_options);
		if (!strcmp(argv[i], "--"))
			continue;
		if (!tests_given && !plan->tests.groups.n) {
			free(plan->tests.preset);
			plan->tests.preset = NULL;
		}
		tests_given = true;
		strvec_push(&plan->tests.tests, argv[i]);
	}
	plan_defaults(plan);
	absolute_files(plan);
	host_size_read(&host);
	if (plan_check(plan, prof) != OK ||
	    shards_guest_fits(plan, backend_find(plan->backend), &host) != OK ||
	    (strcmp(cmd, "plan") && plan_check_cost(plan, prof) != OK))
		die("%s", error_msg());
	if (plan->tests.tests.n && plan->fstests_src && path_is_dir(plan->fstests_src)) {
		struct catalogue cat;

		if (catalogue_load(plan->fstests_src, &cat) != OK)
			die("%s", error_msg());
		rc = plan_check_tests(plan, &cat);
		catalogue_release(&cat);
		if (rc != OK)
			die("%s", error_msg());
	}
}

static int
cmd_plan(int argc, char **argv)
{
	struct cli cli = { 0 };
	char *json;

	parse_plan_args("plan", argc, argv, &cli);
	if (!cli.dump) {
		fprintf(stderr, "fswb plan: add --dump to print the plan as JSON\n");
		plan_release(&cli.plan);
		return 2;
	}
	json = plan_to_json(&cli.plan);
	fputs(json, stdout);
	free(json);
	plan_release(&cli.plan);
	return 0;
}

static int
cmd_run(int argc, char **argv)
{
	struct cli cli = { 0 };
	int rc;

	parse_plan_args("run", argc, argv, &cli);
	if (cli.plan.dry_run && cli.plan.fstests_src && path_is_dir(cli.plan.fstests_src)) {
		rc = run_dry(&cli.plan, load_profiles(), cli.json);
		plan_release(&cli.plan);
		return rc;
	}
	if (cli.plan.dry_run)
		fprintf(stderr,
			"fswb: fstests is not a local tree here: check -n lists the tests "
			"in a guest (--fstests-src DIR lists them on this host, no guest)\n");
	rc = run_headless(&cli.plan, load_profiles(), cli.json, cli.fail_on);
	plan_release(&cli.plan);
	return rc;
}

/* fswb shell: a guest made ready as for a run (check -n lists its tests), and a shell in it. */
static int
cmd_shell(int argc, char **argv)
{
	struct cli cli = { 0 };
	int rc;

	parse_plan_args("shell", argc, argv, &cli);
	cli.plan.dry_run = cli.plan.shell = true;
	if (plan_check(&cli.plan, load_profiles()) != OK) /* a backend without a shell */
		die("%s", error_msg());
	rc = run_headless(&cli.plan, load_profiles(), cli.json, cli.fail_on);
	plan_release(&cli.plan);
	return rc;
}

/* ---- profiles ---- */

static void
print_devices(const struct fs_config *c, struct strbuf *sb)
{
	char a[32], b[32];

	if (c->devices) {
		strbuf_addf(sb, "none: TEST and SCRATCH are %s mounts in memory", c->fstyp);
		return;
	}
	if (c->serve)
		strbuf_addf(sb, "%s, exported: ", c->base);
	strbuf_addf(sb, "TEST %s", format_size(c->test_size, a, sizeof(a)));
	if (c->pool_devices)
		strbuf_addf(sb, ", SCRATCH pool of %u x %s", c->pool_devices,
			    format_size(c->scratch_size, b, sizeof(b)));
	else
		strbuf_addf(sb, ", SCRATCH %s", format_size(c->scratch_size, b, sizeof(b)));
	if (c->logdev_size)
		strbuf_addf(sb, ", LOG %s", format_size(c->logdev_size, a, sizeof(a)));
	if (c->rtdev_size)
		strbuf_addf(sb, ", RT %s", format_size(c->rtdev_size, a, sizeof(a)));
	strbuf_adds(sb, " (sparse files)");
}

static json_t *
config_json(const struct fs_config *c)
{
	json_t *o = json_object();

	json_object_set_new(o, "name", json_string(c->name));
	json_object_set_new(o, "description", json_string(c->description));
	json_object_set_new(o, "fstyp", json_string(c->fstyp));
	json_object_set_new(o, "mkfs_options", json_string(c->mkfs_options));
	json_object_set_new(o, "mount_options", json_string(c->mount_options));
	json_object_set_new(o, "devices", c->devices ? json_string(c->devices) : json_null());
	json_object_set_new(o, "base", c->base ? json_string(c->base) : json_null());
	json_object_set_new(o, "serve", c->serve ? json_string(c->serve) : json_null());
	json_object_set_new(o, "test_size", json_integer((json_int_t)c->test_size));
	json_object_set_new(o, "scratch_size", json_integer((json_int_t)c->scratch_size));
	json_object_set_new(o, "pool_devices", json_integer(c->pool_devices));
	json_object_set_new(o, "logdev_size", json_integer((json_int_t)c->logdev_size));
	json_object_set_new(o, "rtdev_size", json_integer((json_int_t)c->rtdev_size));
	json_object_set_new(o, "kconfig", json_strvec(&c->kconfig));
	json_object_set_new(o, "aliases", json_strvec(&c->aliases));
	json_object_set_new(o, "env", json_strvec(&c->env));
	json_object_set_new(o, "exclude", c->exclude ? json_string(c->exclude) : json_null());
	json_object_set_new(o, "exclude_tests", json_strvec(&c->exclude_tests));
	json_object_set_new(o, "exclude_groups", json_strvec(&c->xgroups));
	return o;
}

static json_t *
set_json(const struct test_set *s)
{
	json_t *o = json_object();

	json_object_set_new(o, "name", json_string(s->name));
	json_object_set_new(o, "description", json_string(s->description));
	json_object_set_new(o, "groups", json_strvec(&s->groups));
	json_object_set_new(o, "exclude_groups", json_strvec(&s->xgroups));
	json_object_set_new(o, "env", json_strvec(&s->env));
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

static int
show_config(const struct profiles *p, const char *name, bool json)
{
	const struct fs_config *c;
	struct strbuf sb = STRBUF_INIT;
	char *kconfig;

	if (profiles_resolve_config(p, name, &c) != OK)
		return report(ERR_NOTFOUND);
	if (json) {
		print_json(config_json(c));
		return 0;
	}
	print_devices(c, &sb);
	kconfig = strvec_join(&c->kconfig, " ");
	printf("%s\n  %s\n\n", c->name, c->description);
	printf("  FSTYP          %s\n", c->fstyp);
	if (c->serve)
		printf("  served         over %s by the guest itself: TEST and SCRATCH are %s,\n"
		       "                 exported as 127.0.0.1:/srv/fswb/test and "
		       "127.0.0.1:/srv/fswb/scratch\n"
		       "                 (rw, no_root_squash); check mounts them as %s\n",
		       c->serve, c->base, c->fstyp);
	else if (c->base)
		printf("  base           %s (TEST and SCRATCH are %s; check -overlay)\n", c->base,
		       c->base);
	printf("  MKFS_OPTIONS   %s%s\n", *c->mkfs_options ? c->mkfs_options : "(none)",
	       c->serve ? ", for the exported file system (check gets none)" : "");
	printf("  MOUNT_OPTIONS  %s%s\n", *c->mount_options ? c->mount_options : "(none)",
	       c->serve ? ", the NFS client's (NFS_MOUNT_OPTIONS too)" : "");
	printf("  devices        %s\n", sb.buf);
	printf("  kernel needs   %s\n", kconfig);
	for (size_t i = 0; i < c->env.n; i++)
		printf("  %-14s %s\n", i ? "" : "settings", c->env.v[i]);
	if (c->aliases.n) {
		char *aliases = strvec_join(&c->aliases, ", ");

		printf("  also named     %s\n", aliases);
		free(aliases);
	}
	if (c->xgroups.n) {
		char *groups = strvec_join(&c->xgroups, " ");

		printf("  left out       the groups %s (check -x)\n", groups);
		free(groups);
	}
	if (c->exclude_tests.n) {
		char *tests = strvec_join(&c->exclude_tests, " ");

		printf("  %-14s %zu tests: %s\n", c->xgroups.n ? "" : "left out",
		       c->exclude_tests.n, tests);
		free(tests);
	}
	if (c->exclude)
		printf("  exclude file   %s (with global.exclude and %s.exclude beside it)\n",
		       c->exclude, c->fstyp);
	printf("\nRun it with: fswb run -c %s\n", c->name);
	free(kconfig);
	strbuf_release(&sb);
	return 0;
}

static int
cmd_profiles(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, OPT_JSON },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const struct profiles *p;
	bool json = false;
	int c;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (c) {
		case OPT_JSON:
			json = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			cmd_bad_option("profiles", argv[optind - 1], opts);
		}
	}
	p = load_profiles();
	if (optind < argc) {
		if (strcmp(argv[optind], "show") || optind + 2 != argc)
			die("fswb profiles: expected 'fswb profiles show FS/CFG'");
		return show_config(p, argv[optind + 1], json);
	}
	if (json) {
		json_t *root = json_object(), *cfgs = json_array(), *sets = json_array();
		json_t *lists = json_object();

		for (size_t i = 0; i < p->nconfigs; i++)
			json_array_append_new(cfgs, config_json(&p->configs[i]));
		for (size_t i = 0; i < p->nsets; i++)
			json_array_append_new(sets, set_json(&p->sets[i]));
		for (size_t i = 0; i < p->nlists; i++)
			json_object_set_new(lists, p->lists[i].name,
					    json_strvec(&p->lists[i].configs));
		json_object_set_new(root, "configs", cfgs);
		json_object_set_new(root, "lists", lists);
		json_object_set_new(root, "sets", sets);
		print_json(root);
		return 0;
	}
	printf("Filesystem configurations (choose with -c FS/CFG; several with commas):\n");
	for (size_t i = 0; i < p->nconfigs; i++)
		printf("  %-20s %s\n", p->configs[i].name, p->configs[i].description);
	printf("\nLists of configurations (-c FS/all; 'all' alone is ext4's):\n");
	for (size_t i = 0; i < p->nlists; i++) {
		char *names = strvec_join(&p->lists[i].configs, " ");

		printf("  %-20s %s\n", p->lists[i].name, names);
		free(names);
	}
	printf("\nTest sets (choose with --preset NAME; smoke is the default):\n");
	for (size_t i = 0; i < p->nsets; i++)
		printf("  %-20s %s\n", p->sets[i].name, p->sets[i].description);
	printf("\nOr choose tests the way check does: -g GROUP, -x GROUP, -e TEST, -E FILE,\n"
	       "or name them: fswb run generic/001 'xfs/1*'\n"
	       "Details of one configuration: fswb profiles show ext4/4k\n");
	return 0;
}

/* ---- dispatch ---- */

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
};

static const struct command commands[] = {
	{ "run", cmd_run },	    { "plan", cmd_plan },     { "profiles", cmd_profiles },
	{ "results", cmd_results }, { "kernel", cmd_kernel }, { "appliance", cmd_appliance },
	{ "doctor", cmd_doctor },   { "shell", cmd_shell },   { "tui", ui_main },
};

int
main(int argc, char **argv)
{
	const char *names[ARRAY_SIZE(commands)];
	const char *close;
	int rc;

	paths_set_builtin(FSWB_SRCDIR, FSWB_BUILDDIR, FSWB_SHAREDIR);
	free(fswb_datadir()); /* found now, while this program's file is where it was */
	if (backends_init() != OK)
		die("%s", error_msg());
	atexit(backends_cleanup);
	if (argc < 2) {
		if ((isatty(STDIN_FILENO) && isatty(STDOUT_FILENO)) || ui_headless()) {
			paths_reap_stale();
			return ui_main(argc, argv);
		}
		usage(stdout);
		printf("\nIn a terminal, 'fswb' alone opens the workbench; without one, start "
		       "with: fswb run\n");
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("fswb %s\n", FSWB_VERSION);
		return 0;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++) {
		names[i] = commands[i].name;
		if (!strcmp(argv[1], commands[i].name)) {
			/* what a killed fswb left: its temporary files */
			paths_reap_stale();
			rc = commands[i].fn(argc - 1, argv + 1);
			if (profiles_loaded)
				profiles_release(&profiles);
			return rc;
		}
	}
	if (argv[1][0] == '-')
		die("unknown option '%s'; see 'fswb --help'", argv[1]);
	close = closest_match(argv[1], names, ARRAY_SIZE(names));
	if (close)
		die("'%s' is not a fswb command (did you mean '%s'?); see 'fswb --help'", argv[1],
		    close);
	die("'%s' is not a fswb command; see 'fswb --help'", argv[1]);
}
