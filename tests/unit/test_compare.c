/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What travels between runs: the comparison of two runs (statuses, times,
 * its text and JSON), the runs in history (last~N, the kernel key), flaky
 * tests across recorded runs, baselines and the regressions of a run
 * against them, and the plain-text filter. Runs are built here and kept
 * in a scratch FSWB_HOME.
 */
#include "testlib.h"

#include <stdlib.h>
#include <string.h>

#include "core/paths.h"
#include "fstests/baseline.h"
#include "fstests/compare.h"
#include "fstests/history.h"
#include "fstests/report.h"

static void
add_result(struct run_record *r, const char *cfg, const char *test, enum test_status st,
	   double seconds)
{
	struct section_result *s = run_record_section(r, cfg, cfg);

	section_add_test(s, test, st, seconds, 0, NULL, NULL, NULL);
}

/* Keep rec as run id in the scratch history (plan.json and run.json). */
static void
store_run(const char *id, struct run_record *rec, const char *kernel)
{
	char *dir = history_run_dir(id), *plan = path_join(dir, "plan.json"),
	     *json = path_join(dir, "run.json");

	free(rec->id);
	rec->id = xstrdup(id);
	free(rec->kernel);
	rec->kernel = xstrdup(kernel);
	run_record_recount(rec);
	test_write(plan, "{}\n");
	assert_int_equal(run_record_save(json, rec), OK);
	free(plan);
	free(json);
	free(dir);
}

static void
clear_history(void)
{
	char *data = fswb_dir(DIR_DATA);

	remove_tree(data);
	free(data);
}

static void
test_compare(void **state)
{
	struct run_record a, b;
	struct run_compare c;

	run_record_init(&a);
	run_record_init(&b);
	add_result(&a, "ext4/4k", "generic/001", TS_PASS, 1);
	add_result(&a, "ext4/4k", "generic/002", TS_FAIL, 1);
	add_result(&a, "ext4/4k", "generic/003", TS_FAIL, 1);
	add_result(&a, "ext4/4k", "generic/004", TS_NOTRUN, 1);
	add_result(&a, "ext4/4k", "generic/005", TS_PASS, 1);
	add_result(&b, "ext4/4k", "generic/001", TS_FAIL, 1);
	add_result(&b, "ext4/4k", "generic/002", TS_PASS, 1);
	add_result(&b, "ext4/4k", "generic/003", TS_CRASHED, 1);
	add_result(&b, "ext4/4k", "generic/004", TS_PASS, 1);
	add_result(&b, "xfs/4k", "generic/001", TS_PASS, 1);
	run_compare(&a, &b, NULL, &c);
	assert_int_equal(c.n, 6);
	assert_int_equal(c.count[CMP_NEW_FAILURE], 1);
	assert_int_equal(c.count[CMP_STILL_FAILING], 1);
	assert_int_equal(c.count[CMP_FIXED], 1);
	assert_int_equal(c.count[CMP_NOW_RUNS], 1);
	assert_int_equal(c.count[CMP_ONLY_OLD], 1);
	assert_int_equal(c.count[CMP_ONLY_NEW], 1);
	/* regressions first */
	assert_int_equal(c.v[0].kind, CMP_NEW_FAILURE);
	assert_string_equal(c.v[0].test, "generic/001");
	assert_string_equal(c.v[0].config, "ext4/4k");
	assert_string_equal(cmp_kind_str(CMP_FIXED), "fixed");
	assert_int_equal(c.configs.n, 2);
	assert_string_equal(c.configs.v[1], "xfs/4k");
	run_compare_release(&c);
	run_record_release(&a);
	run_record_release(&b);
}

static void
test_compare_times_text_json(void **state)
{
	struct run_record a, b;
	struct run_compare c;
	struct compare_opts o = { 20, 2 };
	struct strbuf sb = STRBUF_INIT;
	json_t *j, *tests;
	char *dump;

	run_record_init(&a);
	run_record_init(&b);
	add_result(&a, "ext4/4k", "generic/001", TS_PASS, 10);
	add_result(&a, "ext4/4k", "generic/002", TS_PASS, 10);
	add_result(&a, "ext4/4k", "generic/003", TS_PASS, 1);
	add_result(&a, "ext4/4k", "generic/004", TS_PASS, 10);
	add_result(&b, "ext4/4k", "generic/001", TS_PASS, 20); /* +100%, +10s */
	add_result(&b, "ext4/4k", "generic/002", TS_PASS, 12); /* +20%, +2s: at both limits */
	add_result(&b, "ext4/4k", "generic/003", TS_PASS, 2);  /* +100% but +1s */
	add_result(&b, "ext4/4k", "generic/004", TS_NOTRUN, 0);
	run_compare(&a, &b, NULL, &c);
	assert_int_equal(c.time_changed, 1); /* the defaults: 50% and 5s */
	assert_true(run_compare_find(&c, "ext4/4k", "generic/001")->time_changed);
	run_compare_release(&c);

	run_compare(&a, &b, &o, &c);
	assert_int_equal(c.time_changed, 2);
	assert_true(run_compare_find(&c, "ext4/4k", "generic/002")->time_changed);
	assert_false(run_compare_find(&c, "ext4/4k", "generic/003")->time_changed);
	assert_false(run_compare_find(&c, "ext4/4k", "generic/004")->time_changed);
	run_compare_find(&c, "ext4/4k", "generic/004")->flaky_passed = 2;
	run_compare_find(&c, "ext4/4k", "generic/004")->flaky_failed = 1;
	run_compare_text(&c, false, &sb);
	assert_string_equal(sb.buf,
			    "ext4/4k: 1 now not run; 3 the same\n"
			    "  now not run            generic/004        pass -> notrun\n"
			    "                         flaky: failed 1 of its last 3 runs\n"
			    "  times that changed by 20% and 2s or more:\n"
			    "  slower                 generic/001        10s -> 20s (+100%)\n"
			    "  slower                 generic/002        10s -> 12s (+20%)\n");
	for (char *line = sb.buf; *line;) {
		size_t n = strcspn(line, "\n");

		assert_true(n < 80);
		line += n + (line[n] == '\n');
	}
	j = run_compare_json(&c, false);
	assert_int_equal(
		json_integer_value(json_object_get(json_object_get(j, "counts"), "time_changed")),
		2);
	tests = json_object_get(json_array_get(json_object_get(j, "configs"), 0), "tests");
	assert_int_equal(json_array_size(tests), 3); /* the unchanged generic/003 is left out */
	dump = json_dumps(json_array_get(tests, 0), JSON_COMPACT | JSON_PRESERVE_ORDER);
	assert_string_equal(dump, "{\"test\":\"generic/004\",\"change\":\"now_notrun\",\"old\":"
				  "\"pass\",\"new\":\"notrun\",\"old_seconds\":10.0,"
				  "\"new_seconds\":0.0,\"time_changed\":false,\"flaky\":"
				  "{\"passed\":2,\"failed\":1}}");
	free(dump);
	json_decref(j);
	strbuf_release(&sb);
	run_compare_release(&c);
	run_record_release(&a);
	run_record_release(&b);
}

static void
test_kernel_key(void **state)
{
	static const char *const cases[][2] = {
		{ "6.1.0-57-cloud-amd64", "6.1.0-57-cloud-amd64" },
		{ "6.7.0-rc1-00012-gabcdef12+", "6.7.0-rc1" },
		{ "6.7.0-rc1+", "6.7.0-rc1" },
		{ "6.7.0-00001-g0123456-dirty", "6.7.0" },
		{ "6.7.0-gabc", "6.7.0-gabc" }, /* no count before it: not git describe's */
		{ "", "unknown" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char *k = history_kernel_key(cases[i][0]);

		assert_string_equal(k, cases[i][1]);
		free(k);
	}
	{
		char *k = history_kernel_key(NULL);

		assert_string_equal(k, "unknown");
		free(k);
	}
}

static void
test_resolve(void **state)
{
	struct run_record r;
	char *id;

	clear_history();
	assert_int_equal(history_resolve("last", &id), ERR_NOTFOUND);
	assert_non_null(strstr(error_msg(), "start one with 'fswb run'"));
	run_record_init(&r);
	add_result(&r, "ext4/4k", "generic/001", TS_PASS, 1);
	store_run("20261201-100000", &r, "6.1.0");
	store_run("20261202-100000", &r, "6.1.0");
	store_run("20261203-100000", &r, "6.1.0");
	assert_int_equal(history_resolve("last", &id), OK);
	assert_string_equal(id, "20261203-100000");
	free(id);
	assert_int_equal(history_resolve("last~2", &id), OK);
	assert_string_equal(id, "20261201-100000");
	free(id);
	assert_int_equal(history_resolve("20261202-100000", &id), OK);
	free(id);
	assert_int_equal(history_resolve("last~3", &id), ERR_NOTFOUND);
	assert_non_null(strstr(error_msg(), "only 3 runs"));
	assert_int_equal(history_resolve("last~x", &id), ERR_INVALID);
	assert_int_equal(history_resolve("last~-1", &id), ERR_INVALID);
	assert_int_equal(history_resolve("20261202-10000", &id), ERR_NOTFOUND);
	assert_non_null(strstr(error_msg(), "did you mean '20261202-100000'"));
	run_record_release(&r);
}

static void
test_flaky(void **state)
{
	static const enum test_status g1[] = { TS_PASS, TS_FAIL, TS_PASS, TS_FAIL, TS_PASS };
	struct run_record r, other;
	struct flaky f;
	const struct flaky_entry *e;
	struct run_compare c;

	clear_history();
	for (size_t i = 0; i < ARRAY_SIZE(g1); i++) {
		char id[32];

		run_record_init(&r);
		add_result(&r, "ext4/4k", "generic/001", g1[i], 1);
		add_result(&r, "ext4/4k", "generic/002", TS_FAIL, 1);
		add_result(&r, "ext4/4k", "generic/003", TS_PASS, 1);
		snprintf(id, sizeof(id), "2026120%zu-100000", i + 1);
		store_run(id, &r, "6.7.0-rc1-00003-gabcdef12");
		run_record_release(&r);
	}
	/* another kernel, where generic/003 failed: not counted */
	run_record_init(&other);
	add_result(&other, "ext4/4k", "generic/003", TS_FAIL, 1);
	store_run("20261206-100000", &other, "6.6.0");
	assert_int_equal(history_load("20261205-100000", &r), OK);

	flaky_init(&f);
	flaky_scan_history(&f, &r, FLAKY_RUNS_DEFAULT);
	e = flaky_find(&f, "ext4/4k", "generic/001");
	assert_non_null(e);
	assert_int_equal(e->passed, 3);
	assert_int_equal(e->failed, 2);
	assert_null(flaky_find(&f, "ext4/4k", "generic/002")); /* fails every time */
	assert_null(flaky_find(&f, "ext4/4k", "generic/003"));
	run_compare(&r, &r, NULL, &c);
	flaky_mark(&f, &c);
	assert_int_equal(run_compare_find(&c, "ext4/4k", "generic/001")->flaky_failed, 2);
	assert_int_equal(run_compare_find(&c, "ext4/4k", "generic/002")->flaky_failed, 0);
	run_compare_release(&c);
	flaky_release(&f);

	/* the last 2 runs: 20261204 failed, 20261205 passed */
	flaky_init(&f);
	flaky_scan_history(&f, &r, 2);
	e = flaky_find(&f, "ext4/4k", "generic/001");
	assert_non_null(e);
	assert_int_equal(e->passed + e->failed, 2);
	flaky_release(&f);

	/* -L: a failure whose reruns passed is flaky within one run */
	flaky_init(&f);
	run_record_release(&r);
	run_record_init(&r);
	add_result(&r, "ext4/4k", "generic/009", TS_FAIL, 1);
	add_result(&r, "ext4/4k", "generic/009", TS_PASS, 1);
	assert_int_equal(r.sections[0].tests[0].reruns, 1);
	flaky_add(&f, &r, NULL);
	assert_non_null(flaky_find(&f, "ext4/4k", "generic/009"));
	flaky_release(&f);
	run_record_release(&r);
	run_record_release(&other);
}

static void
test_baselines_store(void **state)
{
	struct baselines b;
	char *path;

	clear_history();
	assert_int_equal(baselines_load(&b), OK);
	assert_int_equal(b.n, 0);
	baselines_set(&b, "6.1.0", "ext4/4k", "20261201-100000");
	baselines_set(&b, "6.1.0", "xfs/4k", "20261201-100000");
	baselines_set(&b, "6.1.0", "ext4/4k", "20261202-100000"); /* replaces */
	baselines_set(&b, "6.6.0", "ext4/4k", "20261203-100000");
	assert_int_equal(b.n, 3);
	assert_int_equal(baselines_save(&b), OK);
	baselines_release(&b);
	assert_int_equal(baselines_load(&b), OK);
	assert_int_equal(b.n, 3);
	assert_string_equal(baselines_find(&b, "6.1.0", "ext4/4k")->run, "20261202-100000");
	assert_null(baselines_find(&b, "6.1.1", "ext4/4k"));
	assert_int_equal(baselines_remove(&b, "6.1.0", "xfs/4k"), 1);
	assert_int_equal(baselines_remove(&b, "20261203-100000", NULL), 1);
	assert_int_equal(baselines_remove(&b, "nothing", NULL), 0);
	assert_int_equal(b.n, 1);
	baselines_release(&b);

	path = baselines_path();
	test_write(path,
		   "{\"version\": 1, \"baselines\": [{\"kernel\": \"6.1\", \"run\": \"x\"}]}");
	assert_int_equal(baselines_load(&b), ERR_PARSE);
	assert_non_null(strstr(error_msg(), "baselines[0].config: missing or not a string"));
	test_write(path, "[]");
	assert_int_equal(baselines_load(&b), ERR_PARSE);
	assert_non_null(strstr(error_msg(), "not a baselines file"));
	free(path);
}

static void
test_regressions(void **state)
{
	struct run_record old, base, now;
	struct baselines b;
	struct regressions r;
	struct strbuf sb = STRBUF_INIT;
	char *dir, *json, *text;

	clear_history();
	/* generic/003 failed first in an older run of the same kernel key */
	run_record_init(&old);
	add_result(&old, "ext4/4k", "generic/003", TS_FAIL, 1);
	store_run("20261201-100000", &old, "6.7.0-rc1+");
	run_record_init(&base);
	add_result(&base, "ext4/4k", "generic/001", TS_PASS, 1);
	add_result(&base, "ext4/4k", "generic/002", TS_FAIL, 1);
	add_result(&base, "ext4/4k", "generic/003", TS_FAIL, 1);
	add_result(&base, "ext4/4k", "generic/004", TS_FAIL, 1);
	store_run("20261202-100000", &base, "6.7.0-rc1");
	baselines_load(&b);
	baselines_set(&b, "6.7.0-rc1", "ext4/4k", "20261202-100000");
	assert_int_equal(baselines_save(&b), OK);
	baselines_release(&b);

	run_record_init(&now);
	add_result(&now, "ext4/4k", "generic/001", TS_FAIL, 1);
	add_result(&now, "ext4/4k", "generic/002", TS_FAIL, 1);
	add_result(&now, "ext4/4k", "generic/003", TS_HUNG, 1);
	add_result(&now, "ext4/4k", "generic/004", TS_PASS, 1);
	add_result(&now, "xfs/4k", "generic/001", TS_PASS, 1);
	store_run("20261203-100000", &now, "6.7.0-rc1-00012-gabcdef12+");

	assert_int_equal(regressions_find(&now, &r), OK);
	assert_string_equal(r.kernel_key, "6.7.0-rc1");
	assert_int_equal(r.configs.n, 1);
	assert_int_equal(r.without.n, 1);
	assert_int_equal(r.without_failing.n, 0);
	assert_int_equal(r.cmp.count[CMP_NEW_FAILURE], 1);
	assert_int_equal(r.cmp.count[CMP_STILL_FAILING], 2);
	assert_int_equal(r.cmp.count[CMP_FIXED], 1);
	assert_true(regressions_any(&r));
	regressions_text(&r, &sb);
	assert_string_equal(sb.buf,
			    "Baseline of ext4/4k on 6.7.0-rc1: run 20261202-100000\n"
			    "1 regression (failing now, not in the baseline):\n"
			    "  ext4/4k    generic/001        fail (baseline: pass)\n"
			    "2 expected failures (failing in the baseline too):\n"
			    "  ext4/4k    generic/002        first seen in run 20261202-100000\n"
			    "  ext4/4k    generic/003        first seen in run 20261201-100000\n"
			    "1 fixed (failing in the baseline, passing now)\n"
			    "No baseline for xfs/4k on 6.7.0-rc1.\n");
	dir = history_run_dir("20261203-100000");
	json = path_join(dir, "run.json");
	assert_int_equal(regressions_save(json, &r), OK);
	text = test_read(json);
	assert_non_null(strstr(text, "\"regressions\": [\n      {\n        \"config\": "
				     "\"ext4/4k\",\n        \"test\": \"generic/001\""));
	assert_non_null(strstr(text, "\"first_seen\": \"20261201-100000\""));
	free(text);
	regressions_release(&r);
	/* the same from the run directory, as fswb run and the TUI do after a run */
	{
		struct regressions r2;

		assert_int_equal(regressions_of_run(dir, &r2), OK);
		assert_int_equal(r2.cmp.count[CMP_NEW_FAILURE], 1);
		regressions_release(&r2);
		assert_int_equal(regressions_of_run("/nonexistent", &r2), ERR_NOTFOUND);
		assert_int_equal(r2.cmp.n, 0);
		regressions_release(&r2);
	}
	/* run.json with the field still reads */
	run_record_release(&now);
	assert_int_equal(run_record_load(json, &now), OK);
	assert_int_equal(now.nsections, 2);

	/* only expected failures: no regression; a failing config without baseline is one */
	run_record_release(&now);
	run_record_init(&now);
	now.kernel = xstrdup("6.7.0-rc1+");
	add_result(&now, "ext4/4k", "generic/002", TS_FAIL, 1);
	run_record_recount(&now);
	assert_int_equal(regressions_find(&now, &r), OK);
	assert_false(regressions_any(&r));
	regressions_release(&r);
	add_result(&now, "xfs/4k", "generic/007", TS_FAIL, 1);
	run_record_recount(&now);
	assert_int_equal(regressions_find(&now, &r), OK);
	assert_true(regressions_any(&r));
	regressions_release(&r);

	/* a baseline whose run is gone: said with its run */
	free(dir);
	dir = history_run_dir("20261202-100000");
	remove_tree(dir);
	assert_int_equal(regressions_find(&now, &r), ERR_NOTFOUND);
	assert_non_null(strstr(error_msg(), "the baseline of ext4/4k on 6.7.0-rc1 (run "
					    "20261202-100000)"));
	regressions_release(&r);
	strbuf_release(&sb);
	free(json);
	free(dir);
	run_record_release(&old);
	run_record_release(&base);
	run_record_release(&now);
}

static void
test_text_plain(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	static const char in[] = "a\tb\x1b[31mred\r\n\xc2\x9b"
				 "1m\xff\xe2\x86\x92\x7f";

	text_plain(&sb, in, sizeof(in) - 1);
	assert_string_equal(sb.buf, "a       b?[31mred?\n?1m?\xe2\x86\x92?");
	strbuf_release(&sb);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_compare),	    cmocka_unit_test(test_compare_times_text_json),
		cmocka_unit_test(test_kernel_key),  cmocka_unit_test(test_resolve),
		cmocka_unit_test(test_flaky),	    cmocka_unit_test(test_baselines_store),
		cmocka_unit_test(test_regressions), cmocka_unit_test(test_text_plain),
	};

	return cmocka_run_group_tests_name("compare", tests, test_setup_hermetic,
					   test_teardown_hermetic);
}
