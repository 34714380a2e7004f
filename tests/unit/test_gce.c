/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The gce backend's parts that need no cloud: options checked at plan time
 * (hostile values), what a plan must say together (zone, bucket, the cost
 * accepted, with the run's expected duration), the cost line, and the probe of a plan that names nothing. The
 * REST client is tests/unit/test_gce_api.c; instances (a Compute Engine
 * double whose instances are QEMU guests) run in tests/e2e/run-gce.sh.
 */
#include "testlib.h"

#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "core/plan.h"
#include "core/profile.h"
#include "run/plan_check.h"
#include "core/util.h"

static void
gce_plan(struct plan *p, const char *const *kv)
{
	plan_init(p);
	plan_defaults(p);
	free(p->backend);
	p->backend = xstrdup("gce");
	for (; kv && kv[0]; kv += 2)
		plan_set_backend_opt(p, kv[0], kv[1]);
}

static void
expect_opt(const char *key, const char *value, bool good)
{
	struct plan p;

	gce_plan(&p, (const char *const[]){ "zone", "us-central1-a", "bucket", "b-1", "cost", "ok",
					    NULL });
	plan_set_backend_opt(&p, key, value);
	if (good && backend_check_options(&p) != OK)
		fail_msg("-o %s=%s refused: %s", key, value, error_msg());
	if (!good && backend_check_options(&p) == OK)
		fail_msg("-o %s=%s accepted", key, value);
	error_clear();
	plan_release(&p);
}

static void
test_options(void **state)
{
	(void)state;
	expect_opt("project", "my-project-123", true);
	expect_opt("project", "My-Project", false);
	expect_opt("project", "p;reboot", false);
	expect_opt("project", "1project", false);
	expect_opt("zone", "europe-west4-b", true);
	expect_opt("zone", "europe-west4", false);
	expect_opt("zone", "us-central1-a/../x", false);
	expect_opt("bucket", "my_bucket.example", true);
	expect_opt("bucket", "gs://b", false);
	expect_opt("bucket", "b/c", false);
	expect_opt("bucket", "ab", false);
	expect_opt("machine-type", "n2-standard-8", true);
	expect_opt("machine-type", "n2 standard", false);
	expect_opt("key", "/home/me/key.json", true);
	expect_opt("cost", "ok", true);
	expect_opt("cost", "yes", false);
	expect_opt("boot", "900", true);
	expect_opt("boot", "soon", false);
	expect_opt("serial", "x", false);
}

static void
test_plan(void **state)
{
	char *dir = test_path("profiles"), *mini = test_path("tests/fixtures/mini-fstests");
	struct profiles prof;
	struct plan p;

	(void)state;
	gce_plan(&p, (const char *const[]){ "bucket", "b-1", "cost", "ok", NULL });
	assert_int_equal(backend_check_options(&p), OK); /* doctor's: each option alone */
	assert_int_equal(backend_check_plan(&p), ERR_INVALID);
	assert_non_null(strstr(error_msg(), "needs -o zone=ZONE and -o bucket=BUCKET"));
	error_clear();
	plan_release(&p);

	/* no key (fswb on Compute Engine): the project must be named */
	gce_plan(&p, (const char *const[]){ "zone", "us-central1-a", "bucket", "b-1", "cost", "ok",
					    NULL });
	assert_int_equal(backend_check_plan(&p), ERR_INVALID);
	assert_non_null(strstr(error_msg(), "name the project: -o project=PROJECT"));
	error_clear();
	plan_set_backend_opt(&p, "project", "my-project");
	assert_int_equal(backend_check_plan(&p), OK);
	plan_release(&p);

	/* the cost not accepted: refused (plan_check_cost), with the estimate; a plan
	 * is valid without it (the wizard remembers it so) */
	gce_plan(&p, (const char *const[]){ "zone", "us-central1-a", "bucket", "b-1", "key",
					    "/k.json", NULL });
	p.shards = 4;
	assert_int_equal(backend_check_plan(&p), OK);
	assert_int_equal(profiles_load(dir, &prof), OK);
	assert_int_equal(plan_check(&p, &prof), OK);
	assert_int_equal(plan_check_cost(&p, &prof), ERR_INVALID);
	assert_non_null(strstr(error_msg(), "4 e2-standard-2 instances at about $0.067 an hour"));
	assert_non_null(strstr(error_msg(), "about $0.27 an hour for the run"));
	/* the default fstests (a URL) and no earlier run: how long is not known */
	assert_non_null(strstr(error_msg(), "how long it takes is not known yet"));
	assert_non_null(strstr(error_msg(), "give -o cost=ok"));
	error_clear();
	/* with the tree, its tests' estimate (from their groups here) */
	free(p.fstests_src);
	p.fstests_src = mini;
	assert_int_equal(plan_check_cost(&p, &prof), ERR_INVALID);
	assert_non_null(strstr(error_msg(), "; it is expected to take "));
	assert_non_null(strstr(error_msg(), " in all; "));
	assert_non_null(strstr(error_msg(), "the duration is estimated from test groups"));
	error_clear();
	plan_set_backend_opt(&p, "cost", "ok");
	assert_int_equal(plan_check_cost(&p, &prof), OK);
	plan_release(&p);
	profiles_release(&prof);
	free(dir);
}

static void
test_cost(void **state)
{
	const struct backend_ops *ops = backend_find("gce");
	struct plan p;
	char *c;

	(void)state;
	assert_non_null(ops);
	assert_true(ops->caps & BACKEND_COSTS);
	gce_plan(&p, (const char *const[]){ "machine-type", "n2-standard-4", NULL });
	c = backend_cost(ops, &p, 0, 0);
	assert_non_null(strstr(c, "1 n2-standard-4 instance at about $0.194 an hour"));
	assert_non_null(strstr(c, "list price of 20"));
	assert_non_null(strstr(c, "how long it takes is not known yet"));
	free(c);
	/* 3 machines for 2 hours: 3 * 0.194236 * 2 */
	c = backend_cost(ops, &p, 3, 7200);
	assert_non_null(strstr(c, "3 n2-standard-4 instances"));
	assert_non_null(strstr(c, "about $0.58 an hour for the run"));
	assert_non_null(strstr(c, "it is expected to take 2h"));
	assert_non_null(strstr(c, ": about $1.17 in all"));
	free(c);
	/* billed by the second, a minute at least */
	c = backend_cost(ops, &p, 1, 5);
	assert_non_null(strstr(c, "less than $0.01 in all"));
	free(c);
	plan_release(&p);
	gce_plan(&p, (const char *const[]){ "machine-type", "c3-highmem-176", NULL });
	p.shards = 2;
	c = backend_cost(ops, &p, 0, 600);
	assert_non_null(strstr(c, "2 c3-highmem-176 instances, whose price fswb does not know"));
	assert_non_null(strstr(c, "expected to take 10m"));
	free(c);
	plan_release(&p);
}

static void
test_probe_unnamed(void **state)
{
	struct backend_probe pr = { 0 };
	struct plan p;

	(void)state;
	gce_plan(&p, NULL);
	assert_int_equal(backend_probe(backend_find("gce"), &p, &pr), OK);
	assert_false(pr.usable);
	assert_string_equal(pr.summary, "not usable yet: no zone and bucket named");
	assert_non_null(strstr(pr.fix, "zone=ZONE bucket=BUCKET key=FILE"));
	backend_probe_release(&pr);
	plan_release(&p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_options),
		cmocka_unit_test(test_plan),
		cmocka_unit_test(test_cost),
		cmocka_unit_test(test_probe_unnamed),
	};

	backends_init();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
