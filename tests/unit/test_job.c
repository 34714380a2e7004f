/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Jobs on the loop: lines (cut at the cap), bytes, the done callback, the
 * time limit, cancel (SIGKILL after the grace), freeing from the done
 * callback, two jobs at once, and nothing left running.
 */
#include "testlib.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "core/job.h"
#include "core/loop.h"

struct seen {
	struct strbuf lines;
	size_t bytes;
	int done;
	struct job_result res;
	struct job *free_me; /* freed from the done callback */
};

static void
seen_init(struct seen *s)
{
	memset(s, 0, sizeof(*s));
	strbuf_init(&s->lines);
}

static void
on_line(void *data, char *line, size_t len, bool cut)
{
	struct seen *s = data;

	strbuf_addf(&s->lines, "%s%.*s|", cut ? "CUT:" : "", (int)len, line);
}

static void
on_bytes(void *data, const char *buf, size_t len)
{
	((struct seen *)data)->bytes += len;
}

static void
on_done(void *data, const struct job_result *r)
{
	struct seen *s = data;

	s->done++;
	s->res = *r;
	if (s->free_me)
		job_free(s->free_me);
}

static struct job *
start(struct loop *loop, struct seen *s, const char *script, int timeout_ms, unsigned grace)
{
	const char *argv[] = { "sh", "-c", script, NULL };
	struct job_opts o = JOB_OPTS_INIT;
	struct job *j;

	o.argv = argv;
	o.line_max = 8;
	o.timeout_ms = timeout_ms;
	o.kill_grace_ms = grace;
	o.on_line = on_line;
	o.on_bytes = on_bytes;
	o.on_done = on_done;
	o.data = s;
	assert_int_equal(job_start(loop, &o, &j), OK);
	return j;
}

static void
test_lines_and_done(void **state)
{
	struct loop *loop = loop_new();
	struct seen s;
	struct job *j;

	(void)state;
	seen_init(&s);
	j = start(loop, &s, "printf 'one\\ntwo\\n'; echo err >&2; printf 'a very long line\\nlast'",
		  -1, 0);
	assert_int_equal(job_wait(j, NULL), OK);
	assert_int_equal(s.done, 1);
	assert_string_equal(s.lines.buf, "one|two|err|CUT:a very l|last|");
	assert_int_equal(s.bytes, strlen("one\ntwo\nerr\na very long line\nlast"));
	assert_true(s.res.exit.exited);
	assert_int_equal(s.res.exit.code, 0);
	assert_int_equal(job_check(j), OK);
	job_free(j);
	strbuf_release(&s.lines);
	loop_free(loop);
	assert_no_children();
}

static void
test_failure_named(void **state)
{
	struct loop *loop = loop_new();
	struct seen s;
	struct job *j;

	(void)state;
	seen_init(&s);
	j = start(loop, &s, "exit 3", -1, 0);
	assert_int_equal(job_wait(j, NULL), OK);
	assert_int_equal(job_check(j), ERR_CHILD);
	assert_non_null(strstr(error_msg(), "'sh' exited with status 3"));
	error_clear();
	job_free(j);
	strbuf_release(&s.lines);
	loop_free(loop);
}

static void
test_timeout(void **state)
{
	struct loop *loop = loop_new();
	uint64_t t0 = loop_now_ms();
	struct seen s;
	struct job *j;

	(void)state;
	seen_init(&s);
	j = start(loop, &s, "echo started; exec sleep 30", 300, 0);
	assert_int_equal(job_wait(j, NULL), OK);
	assert_true(loop_now_ms() - t0 < 5000);
	assert_true(s.res.timed_out);
	assert_true(s.res.cancelled);
	assert_true(s.res.exit.signaled);
	assert_int_equal(s.res.exit.signo, SIGTERM);
	assert_string_equal(s.lines.buf, "started|");
	assert_int_equal(job_check(j), ERR_TIMEOUT);
	error_clear();
	job_free(j);
	strbuf_release(&s.lines);
	loop_free(loop);
	assert_no_children();
}

static void
test_cancel_kills_after_grace(void **state)
{
	struct loop *loop = loop_new();
	struct seen s;
	struct job *j;
	bool cancel = false;

	(void)state;
	seen_init(&s);
	/* ignores SIGTERM: SIGKILL comes after the grace */
	j = start(loop, &s, "trap '' TERM; echo ready; while :; do sleep 1; done", -1, 300);
	while (!strstr(s.lines.buf, "ready"))
		assert_int_equal(loop_run_once(loop, 100), OK);
	cancel = true;
	assert_int_equal(job_wait(j, &cancel), OK);
	assert_true(s.res.cancelled);
	assert_false(s.res.timed_out);
	assert_true(s.res.exit.signaled);
	assert_int_equal(s.res.exit.signo, SIGKILL);
	assert_int_equal(job_check(j), ERR_INTERRUPTED);
	error_clear();
	job_free(j);
	strbuf_release(&s.lines);
	loop_free(loop);
}

static void
test_two_at_once_free_in_done(void **state)
{
	struct loop *loop = loop_new();
	struct seen a, b;

	(void)state;
	seen_init(&a);
	seen_init(&b);
	a.free_me = start(loop, &a, "sleep 0.2; echo a", -1, 0);
	b.free_me = start(loop, &b, "echo b", -1, 0);
	while (!a.done || !b.done)
		assert_int_equal(loop_run_once(loop, 100), OK);
	assert_string_equal(a.lines.buf, "a|");
	assert_string_equal(b.lines.buf, "b|");
	strbuf_release(&a.lines);
	strbuf_release(&b.lines);
	loop_free(loop);
	assert_no_children();
}

static void
test_free_while_running(void **state)
{
	struct loop *loop = loop_new();
	struct seen s;
	struct job *j;

	(void)state;
	seen_init(&s);
	j = start(loop, &s, "exec sleep 30", -1, 0);
	job_free(j); /* killed and reaped, no callback */
	assert_int_equal(s.done, 0);
	strbuf_release(&s.lines);
	loop_free(loop);
	assert_no_children();
}

static void
test_not_found(void **state)
{
	const char *argv[] = { "/nonexistent/program", NULL };
	struct job_opts o = JOB_OPTS_INIT;
	struct loop *loop = loop_new();
	struct job *j;

	(void)state;
	o.argv = argv;
	assert_int_equal(job_start(loop, &o, &j), ERR_NOTFOUND);
	assert_null(j);
	error_clear();
	loop_free(loop);
}

/* A worker: fswb's code in a child, with its own loop and children. */
static int
worker_ok(void *arg)
{
	const char *argv[] = { "sh", "-c", "echo from-its-child", NULL };
	struct loop *loop = loop_new();
	struct strbuf out = STRBUF_INIT;
	struct child_exit ex;

	printf("worker %s\n", (const char *)arg);
	if (spawn_run(loop, argv, NULL, true, 100, &out, &ex) != OK || !ex.exited)
		return 4;
	printf("child said %s", out.buf);
	return 3;
}

static void
test_worker(void **state)
{
	struct loop *loop = loop_new();
	struct job_opts o = JOB_OPTS_INIT;
	struct seen s;
	struct job *j;

	(void)state;
	seen_init(&s);
	o.fn = worker_ok;
	o.fn_arg = "one";
	o.fn_name = "the test worker";
	o.line_max = 64;
	o.on_line = on_line;
	o.on_done = on_done;
	o.data = &s;
	assert_int_equal(job_start(loop, &o, &j), OK);
	assert_int_equal(job_wait(j, NULL), OK);
	assert_int_equal(s.done, 1);
	assert_string_equal(s.lines.buf, "worker one|child said from-its-child|");
	assert_true(s.res.exit.exited);
	assert_int_equal(s.res.exit.code, 3);
	assert_int_equal(job_check(j), ERR_CHILD);
	assert_non_null(strstr(error_msg(), "'the test worker' exited with status 3"));
	job_free(j);
	strbuf_release(&s.lines);
	assert_no_children();
	loop_free(loop);
}

/* A worker stopped by job_cancel: SIGTERM reaches its own loop, which ends it. */
static bool worker_stop;

static void
on_term(struct loop *loop, int signo, void *data)
{
	worker_stop = true;
	loop_quit(loop, 0);
}

static int
worker_waits(void *arg)
{
	struct loop *loop = loop_new();

	loop_watch_signal(loop, SIGTERM, on_term, NULL);
	printf("waiting\n");
	fflush(stdout);
	loop_run(loop);
	printf("stopped %d\n", worker_stop);
	return 5;
}

static void
test_worker_cancel(void **state)
{
	struct loop *loop = loop_new();
	struct job_opts o = JOB_OPTS_INIT;
	struct seen s;
	struct job *j;

	(void)state;
	seen_init(&s);
	o.fn = worker_waits;
	o.line_max = 64;
	o.kill_grace_ms = 10000;
	o.on_line = on_line;
	o.on_done = on_done;
	o.data = &s;
	assert_int_equal(job_start(loop, &o, &j), OK);
	while (!strstr(s.lines.buf ? s.lines.buf : "", "waiting"))
		assert_int_equal(loop_run_once(loop, 1000), OK);
	job_cancel(j);
	assert_int_equal(job_wait(j, NULL), OK);
	assert_string_equal(s.lines.buf, "waiting|stopped 1|");
	assert_true(s.res.cancelled);
	assert_true(s.res.exit.exited);
	assert_int_equal(s.res.exit.code, 5);
	job_free(j);
	strbuf_release(&s.lines);
	assert_no_children();
	loop_free(loop);
}

/* A short command from a callback: waited for without running the loop again. */
static void
on_timer_runs(struct loop *loop, void *data)
{
	const char *argv[] = { "sh", "-c", "echo hi", NULL };
	struct strbuf *out = data;
	struct child_exit ex;

	assert_int_equal(spawn_run(loop, argv, NULL, true, 100, out, &ex), OK);
	loop_quit(loop, 0);
}

static void
test_short_command_in_callback(void **state)
{
	struct loop *loop = loop_new();
	struct strbuf out = STRBUF_INIT;

	(void)state;
	loop_add_timer(loop, 0, false, on_timer_runs, &out);
	assert_int_equal(loop_run(loop), 0);
	assert_string_equal(out.buf, "hi\n");
	strbuf_release(&out);
	assert_no_children();
	loop_free(loop);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines_and_done),
		cmocka_unit_test(test_failure_named),
		cmocka_unit_test(test_timeout),
		cmocka_unit_test(test_cancel_kills_after_grace),
		cmocka_unit_test(test_two_at_once_free_in_done),
		cmocka_unit_test(test_free_while_running),
		cmocka_unit_test(test_not_found),
		cmocka_unit_test(test_worker),
		cmocka_unit_test(test_worker_cancel),
		cmocka_unit_test(test_short_command_in_callback),
	};

	return cmocka_run_group_tests(tests, test_setup_hermetic, test_teardown_hermetic);
}
