/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Status codes: names and messages from one list, recorded messages, prefixes. */
#include "testlib.h"

#include <string.h>

#include "core/status.h"

static void
test_every_code_has_a_name_and_words(void **state)
{
	for (int c = 0; c < STATUS_COUNT; c++) {
		assert_non_null(status_name((enum status)c));
		assert_non_null(status_str((enum status)c));
		assert_true(strlen(status_str((enum status)c)) > 2);
		for (int d = 0; d < c; d++)
			assert_string_not_equal(status_name((enum status)c),
						status_name((enum status)d));
	}
	assert_string_equal(status_name(ERR_TIMEOUT), "ERR_TIMEOUT");
	assert_string_equal(status_str(ERR_TIMEOUT), "timed out");
}

static void
test_error_records_the_message(void **state)
{
	assert_int_equal(error(ERR_INVALID, "'%s' is not a size", "5X"), ERR_INVALID);
	assert_string_equal(error_msg(), "'5X' is not a size");
	assert_int_equal(error_prefix(ERR_INVALID, "plan.json: field '%s'", "mem"), ERR_INVALID);
	assert_string_equal(error_msg(), "plan.json: field 'mem': '5X' is not a size");
	error_clear();
	/* With no message, the code's own words. */
	assert_string_equal(error_msg(), status_str(OK));
}

static int hook_runs;

static void
hook(void)
{
	hook_runs++;
}

static void
test_fatal_hook(void **state)
{
	set_fatal_hook(hook);
	run_fatal_hook();
	assert_int_equal(hook_runs, 1);
	set_fatal_hook(NULL);
	run_fatal_hook();
	assert_int_equal(hook_runs, 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_code_has_a_name_and_words),
		cmocka_unit_test(test_error_records_the_message),
		cmocka_unit_test(test_fatal_hook),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
