/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "testlib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/paths.h"
#include "core/plan.h"
#include "core/profile.h"
#include "fstests/catalogue.h"
#include "run/plan_check.h"
#include "run/reportctx.h"

static struct profiles prof;
static const char *const backends[] = { "qemu", NULL };

static int
setup(void **state)
{
	char *dir;
	int rc = test_setup_hermetic(state);

	if (rc)
		return rc;
	dir = test_path("profiles");
	if (profiles_load(dir, &prof) != OK) {
		fprintf(stderr, "cannot load profiles: %s\n", error_msg());
		free(dir);
		return -1;
	}
	free(dir);
	return 0;
}

static int
teardown(void **state)
{
	profiles_release(&prof);
	return test_teardown_hermetic(state);
}

static void
full_plan(struct plan *p)
{
	plan_init(p);
	p->kernel.kind = KERNEL_TREE;
	p->kernel.spec = xstrdup("/src/linux");
	p->kernel.own_config = true;
	strvec_push(&p->kernel.debug, "lockdep");
	strvec_push(&p->configs, "ext4/4k");
	strvec_push(&p->configs, "xfs/1k");
	plan_set_backend_opt(p, "accel", "tcg");
	plan_set_backend_opt(p, "odd key", "it's \"quoted\"");
	p->tests.preset = NULL;
	strvec_push(&p->tests.groups, "quick");
	strvec_push(&p->tests.xgroups, "dangerous");
	strvec_push(&p->tests.tests, "generic/001");
	strvec_push(&p->tests.exclude, "generic/002");
	p->fstests_src = xstrdup("https://example.org/fstests.git");
	p->shards = 3;
	p->cpus = 4;
	p->mem = 3ull << 30;
	p->test_timeout = 600;
	p->rerun_failures = 3;
	p->stop_on_crash = true;
	p->shell = true;
	plan_defaults(p);
}

static void
test_defaults(void **state)
{
	struct plan p;

	(void)state;
	plan_init(&p);
	plan_defaults(&p);
	assert_int_equal(p.kernel.kind, KERNEL_AUTO);
	assert_string_equal(p.configs.v[0], "ext4/4k");
	assert_int_equal(p.configs.n, 1);
	assert_string_equal(p.backend, "qemu");
	assert_string_equal(p.tests.preset, "smoke");
	assert_int_equal(p.shards, 0); /* auto: the host decides (run/shards.h) */
	assert_true(p.cpus >= 1 && p.cpus <= 2);
	assert_int_equal(p.mem, 2ull << 30);
	assert_int_equal(p.test_timeout, 0);
	assert_int_equal(plan_validate(&p, &prof, backends), OK);
	plan_release(&p);
}

static void
test_round_trip(void **state)
{
	struct plan a, b;
	char *ja, *jb;

	(void)state;
	full_plan(&a);
	ja = plan_to_json(&a);
	plan_init(&b);
	assert_int_equal(plan_from_json(ja, "a.json", &b), OK);
	jb = plan_to_json(&b);
	assert_string_equal(ja, jb);
	assert_int_equal(b.kernel.kind, KERNEL_TREE);
	assert_string_equal(b.kernel.spec, "/src/linux");
	assert_true(b.kernel.own_config);
	assert_string_equal(b.kernel.debug.v[0], "lockdep");
	assert_string_equal(b.configs.v[1], "xfs/1k");
	assert_string_equal(plan_backend_opt(&b, "odd key"), "it's \"quoted\"");
	assert_string_equal(plan_backend_opt(&b, "accel"), "tcg");
	assert_null(plan_backend_opt(&b, "acce"));
	assert_string_equal(b.tests.exclude.v[0], "generic/002");
	assert_int_equal(b.shards, 3);
	assert_int_equal(b.cpus, 4);
	assert_int_equal(b.mem, 3ull << 30);
	assert_int_equal(b.test_timeout, 600);
	assert_int_equal(b.rerun_failures, 3);
	assert_true(b.stop_on_crash);
	assert_true(b.shell);
	assert_false(b.dry_run);
	assert_int_equal(plan_validate(&b, &prof, backends), OK);
	free(ja);
	free(jb);
	plan_release(&a);
	plan_release(&b);
}

/* shards: "auto" (0) is written as a word and read back; a count as a number. */
static void
test_shards_json(void **state)
{
	struct plan a, b;
	char *ja;

	(void)state;
	plan_init(&a);
	plan_defaults(&a);
	ja = plan_to_json(&a);
	assert_non_null(strstr(ja, "\"shards\": \"auto\""));
	plan_init(&b);
	b.shards = 5;
	assert_int_equal(plan_from_json(ja, "a.json", &b), OK);
	assert_int_equal(b.shards, 0);
	free(ja);
	plan_copy(&b, &a);
	assert_int_equal(b.shards, 0);
	assert_int_equal(plan_from_json("{\"shards\": 64}", "a.json", &b), OK);
	assert_int_equal(b.shards, 64);
	assert_int_equal(plan_from_json("{\"shards\": \"auto\"}", "a.json", &b), OK);
	assert_int_equal(b.shards, 0);
	plan_release(&a);
	plan_release(&b);
}

static void
test_save_load(void **state)
{
	struct plan a, b;
	char *path = test_tmp("plan.json");
	char *ja, *jb;

	(void)state;
	full_plan(&a);
	assert_int_equal(plan_save(path, &a), OK);
	plan_init(&b);
	assert_int_equal(plan_load(path, &b), OK);
	ja = plan_to_json(&a);
	jb = plan_to_json(&b);
	assert_string_equal(ja, jb);
	free(ja);
	free(jb);
	free(path);
	plan_release(&a);
	plan_release(&b);
}

static void
test_copy(void **state)
{
	struct plan a, b;
	char *ja, *jb;

	(void)state;
	full_plan(&a);
	plan_init(&b);
	plan_copy(&b, &a);
	plan_release(&a);
	full_plan(&a);
	ja = plan_to_json(&a);
	jb = plan_to_json(&b);
	assert_string_equal(ja, jb);
	free(ja);
	free(jb);
	plan_release(&a);
	plan_release(&b);
}

/* Each bad input must fail with a message containing expect. */
static void
expect_bad_json(const char *json, const char *expect)
{
	struct plan p;
	enum status rc;

	plan_init(&p);
	rc = plan_from_json(json, "bad.json", &p);
	if (rc == OK)
		fail_msg("accepted: %s", json);
	if (!strstr(error_msg(), expect))
		fail_msg("message '%s' lacks '%s'", error_msg(), expect);
	plan_release(&p);
}

static void
test_bad_json(void **state)
{
	(void)state;
	expect_bad_json("{", "bad.json:1:");
	expect_bad_json("[]", "a plan is a JSON object");
	expect_bad_json("{\"cpu\": 2}", "field 'cpu': unknown field (did you mean 'cpus'?)");
	expect_bad_json("{\"cpus\": \"two\"}", "field 'cpus': expected a whole number");
	expect_bad_json("{\"cpus\": 0}", "field 'cpus'");
	expect_bad_json("{\"version\": 9}", "plan version 1");
	expect_bad_json("{\"kernel\": {\"kind\": \"built\"}}",
			"field 'kernel.kind': 'built' is not a kernel kind; valid: auto");
	expect_bad_json("{\"kernel\": {\"spek\": \"x\"}}",
			"field 'kernel.spek': unknown field (did you mean 'spec'?)");
	expect_bad_json("{\"kernel\": []}", "field 'kernel': expected an object");
	expect_bad_json("{\"tests\": {\"groups\": [\"quick\", 3]}}",
			"field 'tests.groups[1]': expected a string");
	expect_bad_json("{\"tests\": {\"groups\": \"quick\"}}",
			"field 'tests.groups': expected a list of strings");
	expect_bad_json("{\"backend\": {\"options\": {\"a\": 1}}}",
			"field 'backend.options.a': expected a string");
	expect_bad_json("{\"mem\": \"lots\"}", "field 'mem': 'lots' is not a size");
	expect_bad_json("{\"cpus\": 1, \"cpus\": 2}", "duplicate");
	expect_bad_json(
		"{\"shards\": 0}",
		"bad.json: field 'shards': expected \"auto\" or a whole number from 1 to 64");
	expect_bad_json("{\"shards\": 65}", "field 'shards': expected \"auto\" or a whole number");
	expect_bad_json("{\"shards\": \"many\"}", "field 'shards': expected \"auto\"");
	expect_bad_json("{\"shards\": 2.5}", "field 'shards': expected \"auto\"");
}

static void
expect_rc(enum status rc, const char *expect)
{
	if (rc == OK)
		fail_msg("plan accepted, expected '%s'", expect);
	if (!strstr(error_msg(), expect))
		fail_msg("message '%s' lacks '%s'", error_msg(), expect);
}

static void
expect_invalid(struct plan *p, const char *expect)
{
	expect_rc(plan_validate(p, &prof, backends), expect);
}

static void
test_validate(void **state)
{
	struct plan p;

	(void)state;
	plan_init(&p);
	plan_defaults(&p);

	strvec_push(&p.configs, "ext4/4kk");
	expect_invalid(&p, "configs: unknown 'ext4/4kk' (did you mean 'ext4/4k'?)");
	strvec_clear(&p.configs);
	strvec_push(&p.configs, "ext4/4k");
	strvec_push(&p.configs, "ext4/4k");
	expect_invalid(&p, "'ext4/4k' is named twice");
	strvec_clear(&p.configs);
	expect_invalid(&p, "configs: name at least one");
	strvec_push(&p.configs, "ext4/4k");

	free(p.backend);
	p.backend = xstrdup("qemuu");
	expect_invalid(&p, "backend.name: unknown 'qemuu' (did you mean 'qemu'?); valid: qemu");
	free(p.backend);
	p.backend = xstrdup("qemu");

	free(p.tests.preset);
	p.tests.preset = xstrdup("smok");
	expect_invalid(&p, "tests.preset: unknown 'smok' (did you mean 'smoke'?)");
	free(p.tests.preset);
	p.tests.preset = NULL;
	expect_invalid(&p, "tests: choose a preset");
	strvec_push(&p.tests.tests, "generic001");
	expect_invalid(&p, "tests.tests[0]: 'generic001' is not a test name");
	strvec_clear(&p.tests.tests);
	strvec_push(&p.tests.tests, "generic/0*");
	assert_int_equal(plan_validate(&p, &prof, backends), OK);
	/* patterns check expands, in the directory too */
	strvec_push(&p.tests.tests, "*/001");
	strvec_push(&p.tests.tests, "generic/00?");
	assert_int_equal(plan_validate(&p, &prof, backends), OK);
	strvec_clear(&p.tests.tests);
	strvec_clear(&p.configs);
	strvec_push(&p.configs, "ext4/4k");
	strvec_push(&p.tests.tests, "generic/0*");
	strvec_push(&p.tests.groups, "qu ick");
	expect_invalid(&p, "tests.groups[0]: 'qu ick' is not a group name");
	strvec_clear(&p.tests.groups);
	strvec_push(&p.tests.exclude_files, "/nonexistent/exclude");
	expect_invalid(&p, "'/nonexistent/exclude' does not exist");
	strvec_clear(&p.tests.exclude_files);

	strvec_push(&p.kernel.debug, "kasn");
	expect_invalid(&p, "kernel.debug: unknown 'kasn' (did you mean 'kasan'?)");
	strvec_clear(&p.kernel.debug);
	p.kernel.kind = KERNEL_TREE;
	expect_invalid(&p, "kernel.spec: a kernel tree needs a path");
	p.kernel.kind = KERNEL_INSTALLED;
	p.kernel.own_config = true;
	expect_invalid(&p, "only a kernel tree has its own config");
	p.kernel.own_config = false;
	free(p.kernel.arch);
	p.kernel.arch = xstrdup("x86");
	expect_invalid(&p, "kernel.arch: unknown 'x86'");
	free(p.kernel.arch);
	p.kernel.arch = xstrdup("arm64");

	p.mem = 100 << 20;
	expect_invalid(&p, "mem: a guest needs at least 256M");
	p.mem = 1ull << 30;
	p.cpus = 0;
	expect_invalid(&p, "cpus: 0 is out of range");
	p.cpus = 1;
	p.shards = 65;
	expect_invalid(&p, "shards: 65 is out of range");
	p.shards = 2;
	assert_int_equal(plan_validate(&p, &prof, backends), OK);
	p.shards = 64;
	assert_int_equal(plan_validate(&p, &prof, backends), OK);
	p.shards = 0; /* auto */
	assert_int_equal(plan_validate(&p, &prof, backends), OK);
	plan_release(&p);
}

static void
test_backend_opts(void **state)
{
	struct plan p;

	(void)state;
	plan_init(&p);
	plan_set_backend_opt(&p, "host", "a");
	plan_set_backend_opt(&p, "host", "b=c");
	plan_set_backend_opt(&p, "user", "root");
	assert_int_equal(p.backend_opts.n, 2);
	assert_string_equal(plan_backend_opt(&p, "host"), "b=c");
	assert_string_equal(plan_backend_opt(&p, "user"), "root");
	plan_release(&p);
}

/* A plan file is data: it cannot name a program; --max-results round-trips. */
static void
test_plan_names_no_program(void **state)
{
	struct plan p, q;
	char *json;

	plan_init(&p);
	plan_init(&q);
	assert_int_equal(plan_from_json("{\"backend\": {\"name\": \"qemu\", \"options\": "
					"{\"qemu\": \"/tmp/evil\"}}}",
					"p.json", &p),
			 ERR_INVALID);
	assert_non_null(strstr(error_msg(), "p.json"));
	assert_non_null(strstr(error_msg(), "backend.options.qemu"));
	assert_non_null(strstr(error_msg(), "cannot name a program"));
	/* given on the command line, it is never written into a plan */
	plan_defaults(&p);
	plan_set_backend_opt(&p, "qemu", "/opt/qemu/bin/qemu-system-x86_64");
	plan_set_backend_opt(&p, "accel", "tcg");
	p.max_results = 3ull << 30;
	json = plan_to_json(&p);
	assert_null(strstr(json, "qemu-system"));
	assert_int_equal(plan_from_json(json, "dump", &q), OK);
	assert_string_equal(plan_backend_opt(&q, "accel"), "tcg");
	assert_null(plan_backend_opt(&q, "qemu"));
	assert_int_equal(q.max_results, 3ull << 30);
	free(json);
	plan_release(&p);
	plan_release(&q);
}

/* The data directory (runs: what guests sent back) is the user's alone. */
static void
test_data_dir_private(void **state)
{
	char *runs = NULL, *data = fswb_dir(DIR_DATA);
	struct stat st;

	assert_int_equal(fswb_dir_make(DIR_DATA, "runs", &runs), OK);
	assert_int_equal(stat(data, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	chmod(data, 0755);
	free(runs);
	assert_int_equal(fswb_dir_make(DIR_DATA, "runs", &runs), OK);
	assert_int_equal(stat(data, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	free(runs);
	free(data);
}

/* plan_check(): each named test is for a chosen configuration's filesystem. */
static void
test_test_dirs(void **state)
{
	struct plan p;

	(void)state;
	plan_init(&p);
	plan_defaults(&p); /* ext4/4k */
	free(p.tests.preset);
	p.tests.preset = NULL;
	strvec_push(&p.tests.tests, "generic/0*");
	if (plan_check(&p, &prof) != OK)
		fail_msg("%s", error_msg());
	strvec_push(&p.tests.tests, "xfs/001");
	expect_rc(plan_check(&p, &prof),
		  "tests.tests[1]: 'xfs/001' is a test for xfs, and no chosen "
		  "configuration is xfs (check would run it anyway, and it would "
		  "fail); add one, e.g. -c xfs/4k, or leave the test out");
	strvec_push(&p.configs, "xfs/1k");
	assert_int_equal(plan_check(&p, &prof), OK);
	strvec_push(&p.tests.tests, "nfs/001");
	expect_rc(plan_check(&p, &prof),
		  "tests.tests[2]: 'nfs/001' is a test for nfs, and no chosen configuration is "
		  "nfs (check would run it anyway, and it would fail); add one, e.g. -c "
		  "nfs/loopback, or leave the test out");
	strvec_push(&p.configs, "nfs/loopback");
	assert_int_equal(plan_check(&p, &prof), OK);
	strvec_push(&p.tests.tests, "ceph/001");
	expect_rc(plan_check(&p, &prof),
		  "tests.tests[3]: 'ceph/001' is a test for ceph, and fswb has "
		  "no configuration for ceph");
	/* plan_validate() comes first */
	free(p.backend);
	p.backend = xstrdup("qemuu");
	expect_rc(plan_check(&p, &prof), "backend.name: unknown 'qemuu'");
	plan_release(&p);
}

/* plan_check_fstests_src(): a directory or a git URL, nothing else. */
static void
test_fstests_src(void **state)
{
	char *mini = test_path("tests/fixtures/mini-fstests"), *file = test_path("Makefile");

	(void)state;
	assert_int_equal(plan_check_fstests_src(NULL), OK);
	assert_int_equal(plan_check_fstests_src(mini), OK);
	assert_int_equal(
		plan_check_fstests_src("https://git.kernel.org/pub/scm/fs/xfs/xfstests-dev"), OK);
	assert_int_equal(plan_check_fstests_src("git@example.org:fstests"), OK);
	assert_int_equal(plan_check_fstests_src("/nonexistent/fstests.git"), OK);
	expect_rc(plan_check_fstests_src("/nonexistent/fstests"),
		  "fstests_src: '/nonexistent/fstests' does not exist and is not a git URL");
	expect_rc(plan_check_fstests_src(file), "is a file; give an fstests tree (a directory)");
	error_clear();
	free(mini);
	free(file);
}

/* plan_check_tests(): named tests against a local tree's catalogue (mini-fstests). */
static void
test_named_tests_in_tree(void **state)
{
	struct plan p;
	struct catalogue cat;
	char *mini = test_path("tests/fixtures/mini-fstests");

	(void)state;
	assert_int_equal(catalogue_load(mini, &cat), OK);
	plan_init(&p);
	plan_defaults(&p);
	strvec_push(&p.tests.tests, "generic/001");
	strvec_push(&p.tests.tests, "generic/00?");
	strvec_push(&p.tests.tests, "*/001");
	assert_int_equal(plan_check_tests(&p, &cat), OK);
	strvec_push(&p.tests.tests, "generic/0011");
	expect_rc(plan_check_tests(&p, &cat), "tests.tests[3]: 'generic/0011' is not a test of "
					      "the fstests tree");
	assert_non_null(strstr(error_msg(), "(did you mean generic/001, generic/011, "));
	strvec_clear(&p.tests.tests);
	strvec_push(&p.tests.tests, "generic/9*");
	expect_rc(plan_check_tests(&p, &cat), "tests.tests[0]: 'generic/9*' matches no test of "
					      "the fstests tree");
	strvec_clear(&p.tests.tests);
	strvec_push(&p.tests.tests, "ext4/zzzzzzzzz");
	expect_rc(plan_check_tests(&p, &cat), "tests.tests[0]: 'ext4/zzzzzzzzz' is not a test");
	assert_null(strstr(error_msg(), "did you mean"));
	error_clear();
	plan_release(&p);
	catalogue_release(&cat);
	free(mini);
}

static void
test_kernel_set(void **state)
{
	struct plan p;
	char *tree = test_path("tests"), *file = test_path("Makefile");

	(void)state;
	plan_init(&p);
	assert_int_equal(plan_kernel_set(&p.kernel, tree), OK);
	assert_int_equal(p.kernel.kind, KERNEL_TREE);
	assert_int_equal(plan_kernel_set(&p.kernel, file), OK);
	assert_int_equal(p.kernel.kind, KERNEL_IMAGE);
	assert_string_equal(p.kernel.spec, file);
	assert_int_equal(plan_kernel_set(&p.kernel, "6.1.0-13-amd64"), OK);
	assert_int_equal(p.kernel.kind, KERNEL_INSTALLED);
	assert_int_equal(plan_kernel_set(&p.kernel, "/nonexistent/bzImage"), ERR_NOTFOUND);
	assert_non_null(strstr(error_msg(), "'/nonexistent/bzImage' does not exist"));
	assert_string_equal(p.kernel.spec, "6.1.0-13-amd64");
	error_clear();
	plan_release(&p);
	free(tree);
	free(file);
}

/*
 * A test run again alone keeps its run's settings: the kernel, the guest,
 * the backend's options and its test set's settings (SOAK_DURATION), and
 * check is asked for that test only, none of the set's groups.
 */
static void
test_one_test(void **state)
{
	struct plan p, back;
	struct check_selection sel;
	char *json;

	(void)state;
	plan_init(&p);
	p.kernel.kind = KERNEL_INSTALLED;
	p.kernel.spec = xstrdup("6.1.0-57-cloud-amd64");
	strvec_push(&p.configs, "ext4/4k");
	strvec_push(&p.configs, "xfs/1k");
	plan_set_backend_opt(&p, "accel", "tcg");
	p.tests.preset = xstrdup("smoke");
	strvec_push(&p.tests.exclude, "generic/475");
	p.fstests_src = xstrdup("/src/xfstests");
	p.cpus = 4;
	p.shards = 2;
	plan_defaults(&p);
	plan_one_test(&p, "ext4/4k", "generic/476");
	assert_int_equal(plan_validate(&p, &prof, backends), OK);
	assert_null(p.tests.preset);
	assert_string_equal(p.tests.settings_from, "smoke");
	assert_string_equal(plan_settings_set(&p), "smoke");
	assert_int_equal(p.configs.n, 1);
	assert_string_equal(p.kernel.spec, "6.1.0-57-cloud-amd64");
	assert_string_equal(plan_backend_opt(&p, "accel"), "tcg");
	assert_string_equal(p.fstests_src, "/src/xfstests");
	assert_int_equal(p.cpus, 4);
	assert_int_equal(p.shards, 2);
	assert_false(p.dry_run || p.shell);
	plan_check_selection(&p, &prof, profiles_config(&prof, "ext4/4k"), &sel);
	assert_int_equal(sel.groups.n, 0);
	assert_int_equal(sel.exclude.n, 0);
	assert_int_equal(sel.tests.n, 1);
	assert_string_equal(sel.tests.v[0], "generic/476");
	assert_int_equal(sel.env.n, 1);
	assert_string_equal(sel.env.v[0], "SOAK_DURATION=180");
	check_selection_release(&sel);

	/* it survives the plan file; a plan of named tests has no settings */
	json = plan_to_json(&p);
	assert_non_null(strstr(json, "\"settings_from\": \"smoke\""));
	plan_init(&back);
	assert_int_equal(plan_from_json(json, "p.json", &back), OK);
	assert_string_equal(back.tests.settings_from, "smoke");
	free(json);
	plan_release(&back);
	free(p.tests.settings_from);
	p.tests.settings_from = NULL;
	plan_check_selection(&p, &prof, profiles_config(&prof, "ext4/4k"), &sel);
	assert_int_equal(sel.env.n, 0);
	check_selection_release(&sel);

	p.tests.settings_from = xstrdup("smok");
	expect_invalid(&p, "tests.settings_from: unknown 'smok' (did you mean 'smoke'?)");
	free(p.tests.settings_from);
	p.tests.settings_from = xstrdup("smoke");
	p.tests.preset = xstrdup("quick");
	expect_invalid(&p, "tests.settings_from: 'smoke' with the preset 'quick'");
	plan_release(&p);
}

/*
 * A past run's test again: its plan.json narrowed, the default kernel
 * pinned to the release its run.json says it ran (not whatever is the
 * default now), fstests' source kept; a run without a plan is an error.
 */
static void
test_plan_again(void **state)
{
	char *dir = test_path("tests/ui/fixtures/runs/20261203-170239");
	struct plan p;

	(void)state;
	plan_init(&p);
	assert_int_equal(run_plan_again(dir, "ext4/4k", "generic/006", &p), OK);
	assert_int_equal(p.kernel.kind, KERNEL_INSTALLED);
	assert_string_equal(p.kernel.spec, "6.1.0-57-cloud-amd64");
	assert_int_equal(p.tests.tests.n, 1);
	assert_string_equal(p.tests.tests.v[0], "generic/006");
	assert_non_null(p.fstests_src);
	assert_null(p.tests.settings_from); /* that run named its tests */
	plan_release(&p);
	free(dir);
	dir = test_path("tests/unit");
	plan_init(&p);
	assert_int_not_equal(run_plan_again(dir, "ext4/4k", "generic/006", &p), OK);
	error_clear();
	plan_release(&p);
	free(dir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_save_load),
		cmocka_unit_test(test_copy),
		cmocka_unit_test(test_shards_json),
		cmocka_unit_test(test_bad_json),
		cmocka_unit_test(test_validate),
		cmocka_unit_test(test_backend_opts),
		cmocka_unit_test(test_kernel_set),
		cmocka_unit_test(test_test_dirs),
		cmocka_unit_test(test_named_tests_in_tree),
		cmocka_unit_test(test_fstests_src),
		cmocka_unit_test(test_plan_names_no_program),
		cmocka_unit_test(test_data_dir_private),
		cmocka_unit_test(test_one_test),
		cmocka_unit_test(test_plan_again),
	};

	return cmocka_run_group_tests_name("plan", tests, setup, teardown);
}
