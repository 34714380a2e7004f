/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The inventory's questions asked in a worker: a probe answers the same as
 * asked in place, a backend that does not exist gets "cannot tell", and a
 * question dropped before its answer leaves no process and no callback.
 */
#include "testlib.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "core/loop.h"
#include "core/plan.h"
#include "run/inventory.h"

struct answer {
	int calls;
	struct backend_probe p;
};

static void
on_answer(void *data, struct backend_probe *p)
{
	struct answer *a = data;

	a->calls++;
	a->p = *p;
}

static void
wait_answer(struct loop *loop, struct answer *a)
{
	uint64_t end = loop_now_ms() + 30000;

	while (!a->calls && loop_now_ms() < end)
		assert_int_equal(loop_run_once(loop, 100), OK);
	assert_int_equal(a->calls, 1);
}

static void
test_probe_in_worker(void **state)
{
	struct loop *loop = loop_new();
	struct backend_probe here;
	struct answer a = { 0 };
	struct probe_ask *ask;
	struct plan plan;

	plan_init(&plan);
	plan_defaults(&plan);
	inventory_probe("qemu", &plan, &here);
	assert_int_equal(inventory_probe_start(loop, "qemu", &plan, on_answer, &a, &ask), OK);
	wait_answer(loop, &a);
	assert_int_equal(a.p.usable, here.usable);
	assert_int_equal(a.p.slow, here.slow);
	assert_string_equal(a.p.summary, here.summary);
	if (here.why)
		assert_string_equal(a.p.why, here.why);
	else
		assert_null(a.p.why);
	backend_probe_release(&a.p);
	backend_probe_release(&here);
	plan_release(&plan);
	assert_no_children();
	loop_free(loop);
}

static void
test_probe_unknown_backend(void **state)
{
	struct loop *loop = loop_new();
	struct answer a = { 0 };
	struct probe_ask *ask;
	struct plan plan;

	plan_init(&plan);
	plan_defaults(&plan);
	assert_int_equal(inventory_probe_start(loop, "nosuch", &plan, on_answer, &a, &ask), OK);
	wait_answer(loop, &a);
	assert_false(a.p.usable);
	assert_non_null(strstr(a.p.summary, "cannot tell"));
	backend_probe_release(&a.p);
	plan_release(&plan);
	assert_no_children();
	loop_free(loop);
}

static void
test_probe_dropped(void **state)
{
	struct loop *loop = loop_new();
	struct answer a = { 0 };
	struct probe_ask *ask;
	struct plan plan;

	plan_init(&plan);
	plan_defaults(&plan);
	assert_int_equal(inventory_probe_start(loop, "qemu", &plan, on_answer, &a, &ask), OK);
	inventory_probe_stop(ask);
	for (int i = 0; i < 5; i++)
		assert_int_equal(loop_run_once(loop, 20), OK);
	assert_int_equal(a.calls, 0);
	plan_release(&plan);
	assert_no_children();
	loop_free(loop);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_probe_in_worker),
		cmocka_unit_test(test_probe_unknown_backend),
		cmocka_unit_test(test_probe_dropped),
	};

	return cmocka_run_group_tests(tests, test_setup_hermetic, test_teardown_hermetic);
}
