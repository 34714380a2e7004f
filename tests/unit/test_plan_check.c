/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A plan checked against what needs fstests' knowledge: each named test is
 * for a chosen configuration's filesystem.
 */
#include "testlib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/plan.h"
#include "core/profile.h"
#include "run/plan_check.h"

static struct profiles prof;

static int
setup(void **state)
{
	char *dir;
	int rc = test_setup_hermetic(state);

	if (rc)
		return rc;
	dir = test_path("profiles");
	rc = profiles_load(dir, &prof) == OK ? 0 : -1;
	if (rc)
		fprintf(stderr, "cannot load profiles: %s\n", error_msg());
	free(dir);
	return rc;
}

static int
teardown(void **state)
{
	profiles_release(&prof);
	return test_teardown_hermetic(state);
}

static void
expect_invalid(struct plan *p, const char *expect)
{
	if (plan_check(p, &prof) == OK)
		fail_msg("plan accepted, expected '%s'", expect);
	if (!strstr(error_msg(), expect))
		fail_msg("message '%s' lacks '%s'", error_msg(), expect);
}

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
	expect_invalid(&p, "tests.tests[1]: 'xfs/001' is a test for xfs, and no chosen "
			   "configuration is xfs (check would run it anyway, and it would "
			   "fail); add one, e.g. -c xfs/4k, or leave the test out");
	strvec_push(&p.configs, "xfs/1k");
	assert_int_equal(plan_check(&p, &prof), OK);
	strvec_push(&p.tests.tests, "overlay/001");
	expect_invalid(&p, "tests.tests[2]: 'overlay/001' is a test for overlay, and fswb has "
			   "no configuration for overlay");
	/* plan_validate() comes first */
	free(p.backend);
	p.backend = xstrdup("qemuu");
	expect_invalid(&p, "backend.name: unknown 'qemuu'");
	plan_release(&p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_test_dirs),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
