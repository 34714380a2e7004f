/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The shard count: given or from the host's size (passed in), capped, and why in words. */
#include "testlib.h"

#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "core/plan.h"
#include "core/paths.h"
#include "core/profile.h"
#include "core/rundir.h"
#include "core/util.h"
#include "fstests/catalogue.h"
#include "fstests/estimate.h"
#include "run/inventory.h"
#include "run/shards.h"

#define GIB (UINT64_C(1) << 30)

/* Backends whose machines are elsewhere, as the contract describes them. */
static const struct backend_ops remote = { .name = "ssh", .caps = BACKEND_PARALLEL };
static const struct backend_ops single = { .name = "adb", .caps = BACKEND_WIPES };

static struct plan plan;

static int
setup(void **state)
{
	(void)state;
	plan_init(&plan);
	plan_defaults(&plan);
	plan.cpus = 2;
	plan.mem = 2 * GIB;
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	plan_release(&plan);
	return 0;
}

/* shards_choose with the qemu backend (or ops), asserting the count and the why. */
static void
expect(const struct backend_ops *ops, unsigned cores, uint64_t mem, size_t units, unsigned n,
       const char *why)
{
	struct host_size host = { .cores = cores, .mem = mem };
	struct strbuf sb = STRBUF_INIT;

	assert_int_equal(shards_choose(&plan, ops ? ops : backend_find("qemu"), &host, units, &sb),
			 n);
	assert_string_equal(sb.buf, why);
	/* the why is optional */
	assert_int_equal(shards_choose(&plan, ops ? ops : backend_find("qemu"), &host, units, NULL),
			 n);
	strbuf_release(&sb);
}

static void
test_auto_by_host(void **state)
{
	(void)state;
	expect(NULL, 5, 24 * GIB, 0, 2,
	       "2 guests at once: (5 cores - 1 for this host) / 2 CPUs per guest = 2, (24 GiB - 1 "
	       "GiB for this host) / 2 GiB per guest = 11");
	/* memory is the limit */
	expect(NULL, 32, 8 * GIB, 0, 3,
	       "3 guests at once: (32 cores - 1 for this host) / 2 CPUs per guest = 15, (8 GiB - 1 "
	       "GiB for this host) / 2 GiB per guest = 3");
	/* the tests to run cap it */
	expect(NULL, 32, 64 * GIB, 5, 5,
	       "5 guests at once: (32 cores - 1 for this host) / 2 CPUs per guest = 15, (64 GiB - "
	       "1 "
	       "GiB for this host) / 2 GiB per guest = 31; only 5 to run");
	/* and 64 */
	plan.cpus = 1;
	plan.mem = 512ull << 20;
	expect(NULL, 256, 1024 * GIB, 0, 64,
	       "64 guests at once: (256 cores - 1 for this host) / 1 CPU per guest = 255, (1 TiB - "
	       "1 "
	       "GiB for this host) / 512 MiB per guest = 2046; fswb runs at most 64");
	/* the stdio backend's sessions are on this host too */
	expect(backend_find("stdio"), 4, 24 * GIB, 0, 3,
	       "3 guests at once: (4 cores - 1 for this host) / 1 CPU per guest = 3, (24 GiB - 1 "
	       "GiB for this host) / 512 MiB per guest = 46");
}

static void
test_auto_one(void **state)
{
	(void)state;
	/* four cores, two CPUs each: one guest besides the host's core, and how to get three */
	expect(NULL, 4, 24 * GIB, 0, 1,
	       "1 guest: this host has 4 cores, keeps 1 for itself, and each guest takes 2 (--cpus "
	       "1 "
	       "--shards 3 runs 3 at once)");
	/* two cores: one guest whatever it takes */
	expect(NULL, 2, 24 * GIB, 0, 1,
	       "1 guest: this host has 2 cores, keeps 1 for itself, and each guest takes 2");
	expect(NULL, 1, 24 * GIB, 0, 1, "1 guest: this host has 1 core and each guest takes 2");
	/* too little memory: still one guest */
	expect(NULL, 8, 2 * GIB, 0, 1,
	       "1 guest: this host has 2 GiB, keeps 1 GiB for itself, and each guest takes 2 GiB");
	expect(NULL, 8, 0, 0, 1,
	       "1 guest: this host has 0 B, keeps 1 GiB for itself, and each guest takes 2 GiB");
	/* room for more, one test */
	expect(NULL, 8, 24 * GIB, 1, 1,
	       "1 guest: (8 cores - 1 for this host) / 2 CPUs per guest = 3, (24 GiB - 1 GiB for "
	       "this host) / 2 GiB per guest = 11; only 1 to run");
}

static void
test_auto_elsewhere(void **state)
{
	(void)state;
	expect(&remote, 64, 256 * GIB, 0, 1,
	       "1 guest: the ssh backend's machines are not on this host and fswb does not know "
	       "their size; give --shards N to run N at once");
	expect(&single, 64, 256 * GIB, 0, 1, "1 guest: the adb backend runs one machine at a time");
}

static void
test_given(void **state)
{
	(void)state;
	plan.shards = 3;
	/* the host's size does not matter */
	expect(NULL, 1, GIB, 0, 3, "3 guests at once (--shards 3)");
	expect(&remote, 1, GIB, 10, 3, "3 guests at once (--shards 3)");
	expect(NULL, 64, 256 * GIB, 2, 2, "2 guests at once (--shards 3; only 2 to run)");
	plan.shards = 1;
	expect(NULL, 64, 256 * GIB, 0, 1, "1 guest (--shards 1)");
	/* a backend of one machine at a time */
	plan.shards = 4;
	expect(&single, 64, 256 * GIB, 0, 1, "1 guest: the adb backend runs one machine at a time");
	assert_int_equal(shards_choose(&plan, NULL, &(struct host_size){ 4, GIB }, 0, NULL), 1);
}

/* The estimate on the plan's shards: every configuration's tests in one pool, a boot per guest. */
static void
test_estimate_on_shards(void **state)
{
	char *dir = test_path("profiles"), *mini = test_path("tests/fixtures/mini-fstests");
	struct profiles prof;
	struct catalogue cat;
	struct estimator est;
	struct est_total one, two;
	double work;

	(void)state;
	assert_int_equal(profiles_load(dir, &prof), OK);
	assert_int_equal(catalogue_load(mini, &cat), OK);
	estimator_init(&est, false);
	plan.shards = 1;
	inventory_estimate(&plan, &prof, &cat, &est, "quick", NULL, &one);
	assert_true(one.ntests > 2);
	assert_int_equal(one.shards, 1);
	/* one guest, one configuration: one check, the tests one after another */
	assert_true(one.wall == one.seconds);

	strvec_push(&plan.configs, "xfs/4k");
	/* one guest, two configurations: a boot for each, as one after another */
	inventory_estimate(&plan, &prof, &cat, &est, "quick", NULL, &two);
	assert_true(two.wall == two.seconds);
	plan.shards = 2;
	inventory_estimate(&plan, &prof, &cat, &est, "quick", NULL, &two);
	assert_int_equal(two.shards, 2);
	assert_true(two.ntests > one.ntests);
	/* two configurations on two guests at once: half the work each, one boot each */
	work = two.seconds - 2 * EST_BOOT;
	assert_true(two.wall >= EST_BOOT + work / 2);
	assert_true(two.wall <= EST_BOOT + work / 2 + EST_LONG + 4 * EST_BATCH);
	assert_true(two.wall < two.seconds);
	/* the tests are not known without a catalogue */
	inventory_estimate(&plan, &prof, NULL, &est, "quick", NULL, &two);
	assert_int_equal(two.ntests, 0);
	assert_int_equal(two.shards, 0);
	assert_true(two.wall == 0);
	estimator_release(&est);
	catalogue_release(&cat);
	profiles_release(&prof);
	free(mini);
	free(dir);
}

/* An earlier run of the plan: its plan.json, and a run.json of tests of 100 s each. */
static void
earlier_run(const char *id, const struct plan *p, bool finished, const char *const *tests)
{
	char *root = rundir_root(), *dir = path_join(root, id), *pp = path_join(dir, "plan.json"),
	     *rp = path_join(dir, "run.json");
	struct strbuf sb = STRBUF_INIT;

	assert_int_equal(mkdir_p(dir, 0755), OK);
	assert_int_equal(plan_save(pp, p), OK);
	strbuf_addf(&sb,
		    "{\"version\":1,\"id\":\"%s\",\"kernel\":\"6.1\",\"finished\":%s,"
		    "\"sections\":[{\"name\":\"%s\",\"config\":\"%s\",\"tests\":[",
		    id, finished ? "true" : "false", p->configs.v[0], p->configs.v[0]);
	for (size_t i = 0; tests[i]; i++)
		strbuf_addf(&sb, "%s{\"test\":\"%s\",\"status\":\"pass\",\"seconds\":100}",
			    i ? "," : "", tests[i]);
	strbuf_adds(&sb, "]}]}");
	test_write(rp, sb.buf);
	strbuf_release(&sb);
	free(rp);
	free(pp);
	free(dir);
	free(root);
}

/*
 * Without the fstests tree (the default, a URL), the run's expected
 * duration comes from the tests the newest ended run of the same choice of
 * tests ran (a cloud's cost line needs it).
 */
static void
test_expect_from_history(void **state)
{
	char *dir = test_path("profiles");
	struct profiles prof;
	struct strbuf basis = STRBUF_INIT;
	struct est_total t;
	struct plan other;

	(void)state;
	assert_int_equal(profiles_load(dir, &prof), OK);
	plan.shards = 1;
	inventory_expect(&plan, &prof, &t, &basis);
	assert_int_equal(t.ntests, 0); /* no earlier run */
	assert_true(t.wall == 0);

	earlier_run("20261201-100000", &plan, true,
		    (const char *const[]){ "generic/001", "generic/002", "generic/003", NULL });
	plan_init(&other);
	plan_copy(&other, &plan);
	strvec_push(&other.tests.groups, "quick"); /* another choice of tests: not this one's */
	earlier_run("20261202-100000", &other, true, (const char *const[]){ "generic/009", NULL });
	/* this choice again, cut off: not what a whole run takes */
	earlier_run("20261203-100000", &plan, false, (const char *const[]){ "generic/001", NULL });
	strbuf_reset(&basis);
	inventory_expect(&plan, &prof, &t, &basis);
	assert_int_equal(t.ntests, 3);
	assert_int_equal(t.shards, 1);
	assert_true(t.wall >= 300 && t.wall < 300 + 2 * EST_BOOT);
	assert_non_null(strstr(basis.buf, "from earlier runs (3 of 3 tests)"));

	/* on three guests: each takes one of them */
	plan.shards = 3;
	inventory_expect(&plan, &prof, &t, NULL);
	assert_int_equal(t.shards, 3);
	assert_true(t.wall >= 100 && t.wall < 200 + EST_BOOT);

	plan_release(&other);
	strbuf_release(&basis);
	profiles_release(&prof);
	free(dir);
}

/* One guest against the host's size (passed in): CPUs and memory, for guests here only. */
/*
 * A set is estimated with its own settings whatever the plan names now: the
 * wizard lists smoke (SOAK_DURATION=180) while the plan has one test picked.
 */
static void
test_estimate_set_settings(void **state)
{
	char *dir = test_path("profiles"), *tree = test_tmp("fstests"), *p;
	struct profiles prof;
	struct catalogue cat;
	struct estimator est, soaked;
	struct est_total picked, named;

	(void)state;
	p = xasprintf("%s/tests/generic/475", tree);
	test_write(p, "#! /bin/bash\n# FS QA Test 475\n# Soak.\n. ./common/preamble\n"
		      "_begin_fstest auto soak smoketest\n");
	free(p);
	p = xasprintf("%s/tests/generic/475.out", tree);
	test_write(p, "QA output created by 475\n");
	free(p);
	assert_int_equal(profiles_load(dir, &prof), OK);
	assert_int_equal(catalogue_load(tree, &cat), OK);
	plan.shards = 1;
	/* the plan names a test: its estimator has no SOAK_DURATION */
	free(plan.tests.preset);
	plan.tests.preset = NULL;
	strvec_push(&plan.tests.tests, "generic/475");
	estimator_init(&est, false);
	inventory_estimate(&plan, &prof, &cat, &est, "smoke", NULL, &picked);
	assert_true(est.soak < 0); /* the caller's estimator is left as it was */
	/* the same as with smoke's SOAK_DURATION in the estimator */
	estimator_init(&soaked, false);
	soaked.soak = 180;
	inventory_estimate(&plan, &prof, &cat, &soaked, "smoke", NULL, &named);
	assert_int_equal(picked.ntests, 1);
	assert_true(picked.seconds == named.seconds);
	assert_true(picked.seconds >= 180);
	estimator_release(&soaked);
	estimator_release(&est);
	catalogue_release(&cat);
	profiles_release(&prof);
	free(tree);
	free(dir);
}

static void
test_guest_fits(void **state)
{
	const struct backend_ops *qemu = backend_find("qemu");
	struct host_size host = { .cores = 4, .mem = 8 * GIB };

	(void)state;
	plan.cpus = 4;
	plan.mem = 7 * GIB; /* 8 GiB less the 1 GiB the host keeps */
	assert_int_equal(shards_guest_fits(&plan, qemu, &host), OK);
	assert_int_equal(shards_guest_fits(&plan, backend_find("stdio"), &host), OK);

	plan.cpus = 5;
	assert_int_equal(shards_guest_fits(&plan, qemu, &host), ERR_INVALID);
	assert_string_equal(error_msg(),
			    "cpus: 5 per guest is more than this host's 4 cores; give 1 to 4");
	host.cores = 1;
	plan.cpus = 2;
	assert_int_equal(shards_guest_fits(&plan, qemu, &host), ERR_INVALID);
	assert_string_equal(error_msg(),
			    "cpus: 2 per guest is more than this host's 1 core; give 1");
	host.cores = 4;

	plan.mem = 7 * GIB + 1;
	assert_int_equal(shards_guest_fits(&plan, qemu, &host), ERR_INVALID);
	plan.mem = UINT64_C(100) << 40;
	assert_int_equal(shards_guest_fits(&plan, backend_find("stdio"), &host), ERR_INVALID);
	assert_string_equal(error_msg(),
			    "mem: 100 TiB per guest is more than this host can give: it has 8 GiB "
			    "and keeps 1 GiB for itself; give 256 MiB to 7 GiB");
	/* a host too small for any guest says so */
	host.mem = GIB;
	assert_int_equal(shards_guest_fits(&plan, qemu, &host), ERR_INVALID);
	assert_string_equal(error_msg(),
			    "mem: this host has 1 GiB and keeps 1 GiB for itself: too little for a "
			    "guest of 256 MiB or more; use a backend whose machines are elsewhere");
	/* memory unknown: not checked */
	host.mem = 0;
	assert_int_equal(shards_guest_fits(&plan, qemu, &host), OK);

	/* machines elsewhere: their size is not this host's */
	host.mem = GIB;
	plan.cpus = 64;
	assert_int_equal(shards_guest_fits(&plan, &remote, &host), OK);
	assert_int_equal(shards_guest_fits(&plan, &single, &host), OK);
	assert_int_equal(shards_guest_fits(&plan, NULL, &host), OK);
	error_clear();
}

static void
test_host_size_read(void **state)
{
	struct host_size h;

	(void)state;
	/* whatever this host is: at least a core, and some memory */
	host_size_read(&h);
	assert_true(h.cores >= 1);
	assert_true(h.mem > 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_auto_by_host, setup, teardown),
		cmocka_unit_test_setup_teardown(test_auto_one, setup, teardown),
		cmocka_unit_test_setup_teardown(test_auto_elsewhere, setup, teardown),
		cmocka_unit_test_setup_teardown(test_given, setup, teardown),
		cmocka_unit_test_setup_teardown(test_estimate_on_shards, setup, teardown),
		cmocka_unit_test_setup_teardown(test_estimate_set_settings, setup, teardown),
		cmocka_unit_test_setup_teardown(test_expect_from_history, setup, teardown),
		cmocka_unit_test_setup_teardown(test_guest_fits, setup, teardown),
		cmocka_unit_test(test_host_size_read),
	};

	return cmocka_run_group_tests(tests, test_setup_hermetic, test_teardown_hermetic);
}
