/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The estimator: history first, then SOAK_DURATION, then groups; what each is based on. */
#include "testlib.h"

#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "fstests/catalogue.h"
#include "fstests/estimate.h"

/* A run.json with one section; tests as "NAME STATUS SECONDS" triples. */
static char *
run_json(const char *id, const char *kernel, const char *config, const char *const *tests)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addf(&sb,
		    "{\"version\":1,\"id\":\"%s\",\"kernel\":\"%s\",\"finished\":true,"
		    "\"sections\":[{\"name\":\"%s\",\"config\":\"%s\",\"tests\":[",
		    id, kernel, config, config);
	for (size_t i = 0; tests[i]; i += 3)
		strbuf_addf(&sb, "%s{\"test\":\"%s\",\"status\":\"%s\",\"seconds\":%s}",
			    i ? "," : "", tests[i], tests[i + 1], tests[i + 2]);
	strbuf_adds(&sb, "]}]}");
	return strbuf_detach(&sb);
}

static void
add_run(struct estimator *est, const char *kernel, const char *config, const char *const *tests)
{
	char *text = run_json("20261201-000000", kernel, config, tests);
	struct run_record rec;

	assert_int_equal(run_record_from_json(text, "run.json", &rec), OK);
	estimator_add_run(est, &rec);
	run_record_release(&rec);
	free(text);
}

static void
test_soak_duration_as_check_reads_it(void **state)
{
	assert_true(soak_duration_seconds("180") == 180);
	assert_true(soak_duration_seconds("3m") == 180);
	/* the last letter is the unit, as check's sed and awk read it */
	assert_true(soak_duration_seconds("3min") < 0);
	assert_true(soak_duration_seconds("2hrs") == 2);
	assert_true(soak_duration_seconds("1.5h") == 5400);
	assert_true(soak_duration_seconds("2d") == 172800);
	assert_true(soak_duration_seconds("1w") == 604800);
	assert_true(soak_duration_seconds("10s") == 10);
	assert_true(soak_duration_seconds("3x") < 0);
	assert_true(soak_duration_seconds("m") < 0);
	assert_true(soak_duration_seconds("") < 0);
	assert_true(soak_duration_seconds("-3") < 0);
	assert_true(soak_duration_seconds("3 m") < 0);
}

static void
test_groups_then_soak(void **state)
{
	struct estimator est;
	struct strvec quick = STRVEC_INIT, soak = STRVEC_INIT, env = STRVEC_INIT;
	enum est_basis b;

	strvec_split(&quick, "auto quick rw", " ");
	strvec_split(&soak, "auto rw long_rw stress soak smoketest", " ");
	estimator_init(&est, false);
	assert_true(estimate_test(&est, "ext4/4k", "6.1", "generic/001", &quick, &b) == EST_QUICK);
	assert_int_equal(b, EST_BASIS_GROUPS);
	/* a soak test without SOAK_DURATION is a long test */
	assert_true(estimate_test(&est, "ext4/4k", "6.1", "generic/476", &soak, &b) == EST_LONG);
	assert_int_equal(b, EST_BASIS_GROUPS);
	/* unknown groups */
	assert_true(estimate_test(&est, NULL, NULL, "generic/002", NULL, &b) == EST_TEST);

	strvec_push(&env, "SOAK_DURATION=3m");
	assert_int_equal(estimator_set_env(&est, &env), OK);
	assert_true(estimate_test(&est, "ext4/4k", "6.1", "generic/476", &soak, &b) ==
		    180 + EST_QUICK);
	assert_int_equal(b, EST_BASIS_SOAK);
	assert_string_equal(est_basis_str(b), "SOAK_DURATION");

	/* under emulation the set-up stretches, the soak itself does not */
	est.slow = true;
	assert_true(estimate_test(&est, "ext4/4k", "6.1", "generic/476", &soak, &b) ==
		    180 + EST_QUICK * EST_SLOW);
	assert_true(estimate_test(&est, "ext4/4k", "6.1", "generic/001", &quick, &b) ==
		    EST_QUICK * EST_SLOW);
	assert_true(estimate_boot(&est) == EST_BOOT * EST_SLOW);

	strvec_clear(&env);
	strvec_push(&env, "SOAK_DURATION=3x");
	assert_int_equal(estimator_set_env(&est, &env), ERR_INVALID);
	assert_non_null(strstr(error_msg(), "'3x'"));
	assert_true(est.soak == 180);
	error_clear();
	estimator_release(&est);
	strvec_clear(&env);
	strvec_clear(&quick);
	strvec_clear(&soak);
}

static void
test_history_same_kernel_first(void **state)
{
	struct estimator est;
	enum est_basis b;

	estimator_init(&est, true);
	add_run(&est, "6.1", "ext4/4k",
		(const char *const[]){ "generic/001", "pass", "10", "generic/002", "fail", "30",
				       NULL });
	add_run(&est, "6.1", "ext4/4k",
		(const char *const[]){ "generic/001", "pass", "14", "generic/002", "hung", "3000",
				       NULL });
	add_run(&est, "6.6", "ext4/4k",
		(const char *const[]){ "generic/001", "pass", "100", NULL });
	add_run(&est, "6.1", "xfs/4k",
		(const char *const[]){ "generic/003", "notrun", "2", "generic/004", "crashed", "50",
				       NULL });
	assert_int_equal(est.runs, 4);
	/* the median of the same configuration and kernel */
	assert_true(estimate_test(&est, "ext4/4k", "6.1", "generic/001", NULL, &b) == 12);
	assert_int_equal(b, EST_BASIS_HISTORY_KERNEL);
	/* a hung test says nothing of the test's time */
	assert_true(estimate_test(&est, "ext4/4k", "6.1", "generic/002", NULL, &b) == 30);
	/* another kernel: the configuration's runs */
	assert_true(estimate_test(&est, "ext4/4k", "6.9", "generic/001", NULL, &b) == 14);
	assert_int_equal(b, EST_BASIS_HISTORY_CONFIG);
	/* another configuration */
	assert_true(estimate_test(&est, "ext4/4k", "6.1", "generic/003", NULL, &b) == 2);
	assert_int_equal(b, EST_BASIS_HISTORY_ANY);
	/* a crash does not count either */
	assert_true(estimate_test(&est, "xfs/4k", "6.1", "generic/004", NULL, &b) ==
		    EST_TEST * EST_SLOW);
	assert_int_equal(b, EST_BASIS_GROUPS);
	estimator_release(&est);
}

static void
test_load_runs_newest_first(void **state)
{
	struct estimator est;
	char *runs = test_tmp("runs");
	const char *ids[] = { "20261201-100000", "20261202-100000", "20261203-100000" };
	const char *secs[] = { "1", "2", "3" };

	for (size_t i = 0; i < ARRAY_SIZE(ids); i++) {
		char *rel = xasprintf("runs/%s/run.json", ids[i]);
		char *path = test_tmp(rel);
		char *text =
			run_json(ids[i], "6.1", "ext4/4k",
				 (const char *const[]){ "generic/001", "pass", secs[i], NULL });

		test_write(path, text);
		free(text);
		free(path);
		free(rel);
	}
	/* not a run: passed over */
	char *junk = test_tmp("runs/20261204-100000/run.json");
	test_write(junk, "{ not json");
	free(junk);

	estimator_init(&est, false);
	assert_int_equal(estimator_load_runs(&est, runs, 2), 2);
	/* the two newest: 2 and 3 */
	assert_true(estimate_test(&est, "ext4/4k", "6.1", "generic/001", NULL, NULL) == 2.5);
	estimator_release(&est);
	estimator_init(&est, false);
	assert_int_equal(estimator_load_runs(&est, "/nonexistent/runs", 5), 0);
	estimator_release(&est);
	free(runs);
}

static void
test_a_run_and_its_basis(void **state)
{
	struct estimator est;
	struct catalogue cat;
	struct est_total t = { 0 };
	struct strbuf sb = STRBUF_INIT;
	struct strvec env = STRVEC_INIT, soak = STRVEC_INIT;
	char *mini = test_path("tests/fixtures/mini-fstests");
	const char *tests[] = { "generic/001", "generic/002", "generic/900" };
	double each[3];

	assert_int_equal(catalogue_load(mini, &cat), OK);
	estimator_init(&est, true);
	add_run(&est, "6.1", "ext4/4k", (const char *const[]){ "generic/002", "pass", "7", NULL });
	/* generic/001 by its groups (quick), 002 from history, 900 (not in the tree) as soak */
	strvec_push(&env, "SOAK_DURATION=60");
	assert_int_equal(estimator_set_env(&est, &env), OK);
	strvec_push(&soak, "soak");
	estimate_config(&est, "ext4/4k", "6.1", &cat, tests, 3, &soak, &t, each);
	assert_int_equal(t.ntests, 3);
	assert_true(each[0] == EST_QUICK * EST_SLOW);
	assert_true(each[1] == 7);
	assert_true(each[2] == 60 + EST_QUICK * EST_SLOW);
	assert_int_equal(t.by[EST_BASIS_HISTORY_KERNEL], 1);
	assert_int_equal(t.by[EST_BASIS_SOAK], 1);
	assert_int_equal(t.by[EST_BASIS_GROUPS], 1);
	assert_true(t.seconds ==
		    EST_QUICK * EST_SLOW + 7 + 60 + EST_QUICK * EST_SLOW + EST_BOOT * EST_SLOW);
	est_total_basis(&t, &est, &sb);
	assert_string_equal(sb.buf,
			    "from earlier runs (1 of 3 tests), SOAK_DURATION, test groups; TCG");

	memset(&t, 0, sizeof(t));
	strbuf_reset(&sb);
	est.slow = false;
	estimate_config(&est, "xfs/4k", NULL, NULL, tests, 1, NULL, &t, NULL);
	est_total_basis(&t, &est, &sb);
	assert_string_equal(sb.buf, "from test groups; no runs yet");
	strbuf_release(&sb);
	strvec_clear(&env);
	strvec_clear(&soak);
	catalogue_release(&cat);
	estimator_release(&est);
	free(mini);
}

/* The engine's way: longest first, in batches, each to the guest free first, a start-up each. */
static void
test_makespan(void **state)
{
	const double five[] = { 3, 7, 4, 6, 5 }, fifty[] = { 30, 70, 40, 60, 50 };
	double copy[5], big[200], sum = 0, m;
	struct estimator est;

	(void)state;
	estimator_init(&est, false);
	memcpy(copy, five, sizeof(copy));
	assert_true(estimate_makespan(&est, NULL, 0, 4) == 0);
	/* one guest: one batch of everything */
	assert_true(estimate_makespan(&est, five, 5, 1) == 25 + EST_BATCH);
	assert_true(estimate_makespan(&est, five, 5, 0) == 25 + EST_BATCH);
	/* two guests: less than one, at least half the tests and a start-up */
	m = estimate_makespan(&est, five, 5, 2);
	assert_true(m < 25 + EST_BATCH && m >= 12.5 + EST_BATCH);
	/* tests shorter than two start-ups go together, whatever the guests */
	assert_true(estimate_makespan(&est, five, 5, 8) == 7 + 6 + 5 + EST_BATCH);
	/* more guests than long tests: the longest test */
	assert_true(estimate_makespan(&est, fifty, 5, 8) == 70 + EST_BATCH);
	assert_memory_equal(copy, five, sizeof(copy));
	/* durations that vary 10 times over: close to the sum shared out, few start-ups */
	for (size_t i = 0; i < ARRAY_SIZE(big); i++) {
		big[i] = 10 + (double)((i * 37) % 91);
		sum += big[i];
	}
	m = estimate_makespan(&est, big, ARRAY_SIZE(big), 4);
	assert_true(m >= sum / 4);
	assert_true(m <= sum / 4 * 1.05 + 10 * EST_BATCH);
	/* the batch rule: a share of what is left, at least EST_BATCH_MIN, at most an equal share */
	assert_true(estimate_batch_target(&est, 4000, 2) == 1000);
	assert_true(estimate_batch_target(&est, 200, 2) == EST_BATCH_MIN);
	assert_true(estimate_batch_target(&est, 50, 2) == 25);
	/* check's start-up and the least batch, stretched under emulation */
	assert_true(estimate_batch(&est) == EST_BATCH);
	est.slow = true;
	assert_true(estimate_batch(&est) == EST_BATCH * EST_SLOW);
	assert_true(estimate_batch_target(&est, 600, 2) == EST_BATCH_MIN * EST_SLOW);
	/* a start-up the run measured stands instead */
	est.batch = 0.5;
	assert_true(estimate_batch(&est) == 0.5);
	assert_true(estimate_batch_target(&est, 1.6, 2) == 1);
	estimator_release(&est);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_soak_duration_as_check_reads_it),
		cmocka_unit_test(test_groups_then_soak),
		cmocka_unit_test(test_history_same_kernel_first),
		cmocka_unit_test(test_load_runs_newest_first),
		cmocka_unit_test(test_a_run_and_its_basis),
		cmocka_unit_test(test_makespan),
	};

	return cmocka_run_group_tests(tests, test_setup_hermetic, test_teardown_hermetic);
}
