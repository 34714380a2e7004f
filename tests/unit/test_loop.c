/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "testlib.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/loop.h"
#include "core/spawn.h"

/* Run the loop until *flag is set, at most ms milliseconds. */
static void
run_until(struct loop *loop, const int *flag, int ms)
{
	uint64_t end = loop_now_ms() + (uint64_t)ms;

	while (!*flag) {
		uint64_t now = loop_now_ms();

		if (now >= end)
			fail_msg("nothing happened within %d ms", ms);
		assert_int_equal(loop_run_once(loop, (int)(end - now)), OK);
	}
}

static void
test_now_ms(void **state)
{
	uint64_t a = loop_now_ms(), b;

	usleep(20000);
	b = loop_now_ms();
	assert_true(b >= a + 20);
	assert_true(b < a + 2000);
}

static void
test_run_once_timeout(void **state)
{
	struct loop *loop = loop_new();
	uint64_t t0 = loop_now_ms();

	assert_int_equal(loop_run_once(loop, 0), OK);
	assert_true(loop_now_ms() - t0 < 20);
	t0 = loop_now_ms();
	assert_int_equal(loop_run_once(loop, 50), OK);
	assert_true(loop_now_ms() - t0 >= 50);
	loop_free(loop);
}

struct tick {
	int count;
	uint64_t at[16];
	int stop_at;
	int quit_code;
	uint64_t id;
	int *order;
	int *norder;
	int tag;
};

static void
on_tick(struct loop *loop, void *data)
{
	struct tick *t = data;

	if (t->count < (int)ARRAY_SIZE(t->at))
		t->at[t->count] = loop_now_ms();
	t->count++;
	if (t->order)
		t->order[(*t->norder)++] = t->tag;
	if (t->stop_at && t->count == t->stop_at) {
		loop_del_timer(loop, t->id);
		loop_quit(loop, t->quit_code);
	}
}

static void
test_timer_oneshot(void **state)
{
	struct loop *loop = loop_new();
	struct tick t = { 0 };
	uint64_t t0 = loop_now_ms();
	uint64_t id = loop_add_timer(loop, 30, false, on_tick, &t);

	assert_true(id > 0);
	run_until(loop, &t.count, 2000);
	assert_int_equal(t.count, 1);
	assert_true(t.at[0] >= t0 + 30);
	/* It does not come back. */
	assert_int_equal(loop_run_once(loop, 60), OK);
	assert_int_equal(t.count, 1);
	/* Deleting a timer that already ran is harmless. */
	loop_del_timer(loop, id);
	loop_free(loop);
}

static void
test_timer_repeat(void **state)
{
	struct loop *loop = loop_new();
	struct tick t = { .stop_at = 5, .quit_code = 7 };
	uint64_t t0 = loop_now_ms();

	t.id = loop_add_timer(loop, 10, true, on_tick, &t);
	assert_int_equal(loop_run(loop), 7);
	assert_int_equal(t.count, 5);
	assert_true(loop_done(loop));
	for (int i = 0; i < 5; i++)
		assert_true(t.at[i] >= t0 + 10 * (uint64_t)(i + 1));
	/* It deleted itself: no more ticks. */
	assert_int_equal(loop_run_once(loop, 40), OK);
	assert_int_equal(t.count, 5);
	loop_free(loop);
}

static void
test_timer_order(void **state)
{
	struct loop *loop = loop_new();
	int order[8], norder = 0;
	struct tick t[5];
	static const int delay[5] = { 40, 10, 25, 10, 0 };

	memset(t, 0, sizeof(t));
	for (int i = 0; i < 5; i++) {
		t[i].order = order;
		t[i].norder = &norder;
		t[i].tag = i;
		loop_add_timer(loop, (uint64_t)delay[i], false, on_tick, &t[i]);
	}
	while (norder < 5)
		assert_int_equal(loop_run_once(loop, 1000), OK);
	/* By due time; equal due times in the order they were added. */
	assert_int_equal(order[0], 4);
	assert_int_equal(order[1], 1);
	assert_int_equal(order[2], 3);
	assert_int_equal(order[3], 2);
	assert_int_equal(order[4], 0);
	loop_free(loop);
}

struct deleter {
	uint64_t victim;
	int ran;
};

static void
on_delete_other(struct loop *loop, void *data)
{
	struct deleter *d = data;

	d->ran++;
	loop_del_timer(loop, d->victim);
}

static void
on_victim(struct loop *loop, void *data)
{
	fail_msg("a deleted timer ran");
}

static void
test_timer_delete_in_callback(void **state)
{
	struct loop *loop = loop_new();
	struct deleter d = { 0 };
	struct tick self = { .stop_at = 1 };
	uint64_t a, b;

	/* Same due time: a runs first and deletes b before its turn. */
	a = loop_add_timer(loop, 10, false, on_delete_other, &d);
	b = loop_add_timer(loop, 10, false, on_victim, NULL);
	assert_true(a > 0 && b > 0 && a != b);
	d.victim = b;
	/* A repeating timer that deletes itself on its first run. */
	self.id = loop_add_timer(loop, 5, true, on_tick, &self);
	usleep(15000);
	assert_int_equal(loop_run_once(loop, 0), OK);
	assert_int_equal(d.ran, 1);
	assert_int_equal(self.count, 1);
	assert_int_equal(loop_run_once(loop, 30), OK);
	assert_int_equal(self.count, 1);
	/* Unknown ids are harmless. */
	loop_del_timer(loop, 9999);
	loop_del_timer(loop, b);
	loop_free(loop);
}

static void
on_add_zero(struct loop *loop, void *data)
{
	struct tick *t = data;

	t->count++;
	loop_add_timer(loop, 0, false, on_tick, t + 1);
}

static void
test_timer_added_in_callback(void **state)
{
	struct loop *loop = loop_new();
	struct tick t[2];

	memset(t, 0, sizeof(t));
	loop_add_timer(loop, 0, false, on_add_zero, &t[0]);
	assert_int_equal(loop_run_once(loop, 0), OK);
	/* Added during the dispatch: waits for the next one, however due. */
	assert_int_equal(t[0].count, 1);
	assert_int_equal(t[1].count, 0);
	assert_int_equal(loop_run_once(loop, 0), OK);
	assert_int_equal(t[1].count, 1);
	loop_free(loop);
}

static void
test_timer_delete_pending(void **state)
{
	struct loop *loop = loop_new();
	struct tick t = { 0 };
	uint64_t id = loop_add_timer(loop, 10, false, on_tick, &t);

	loop_del_timer(loop, id);
	assert_int_equal(loop_run_once(loop, 40), OK);
	assert_int_equal(t.count, 0);
	/* A far timer does not hold up loop_run_once(0). */
	loop_add_timer(loop, 100000, false, on_tick, &t);
	assert_int_equal(loop_run_once(loop, 0), OK);
	loop_free(loop);
}

struct fdrec {
	int calls;
	int fd;
	short revents;
	int other; /* fd to remove when called */
	char buf[64];
};

static void
on_fd(struct loop *loop, int fd, short revents, void *data)
{
	struct fdrec *r = data;
	ssize_t n;

	r->calls++;
	r->fd = fd;
	r->revents = revents;
	if (r->other >= 0)
		loop_del_fd(loop, r->other);
	if (revents & POLLIN) {
		n = read(fd, r->buf, sizeof(r->buf) - 1);
		if (n > 0)
			r->buf[n] = '\0';
	}
}

static void
test_fd_readable(void **state)
{
	struct loop *loop = loop_new();
	struct fdrec r = { .other = -1 };
	int p[2];

	assert_int_equal(pipe2(p, O_CLOEXEC | O_NONBLOCK), 0);
	assert_int_equal(loop_add_fd(loop, p[0], POLLIN, on_fd, &r), OK);
	/* Nothing to read yet. */
	assert_int_equal(loop_run_once(loop, 20), OK);
	assert_int_equal(r.calls, 0);
	assert_int_equal(write(p[1], "ping", 4), 4);
	run_until(loop, &r.calls, 2000);
	assert_int_equal(r.fd, p[0]);
	assert_true(r.revents & POLLIN);
	assert_string_equal(r.buf, "ping");
	/* Drained: no further calls. */
	assert_int_equal(loop_run_once(loop, 20), OK);
	assert_int_equal(r.calls, 1);
	/* Watching for writing. */
	assert_int_equal(loop_mod_fd(loop, p[0], 0), OK);
	r.calls = 0;
	assert_int_equal(loop_add_fd(loop, p[1], POLLOUT, on_fd, &r), OK);
	run_until(loop, &r.calls, 2000);
	assert_int_equal(r.fd, p[1]);
	assert_true(r.revents & POLLOUT);
	loop_del_fd(loop, p[1]);
	loop_del_fd(loop, p[0]);
	close(p[0]);
	close(p[1]);
	loop_free(loop);
}

static void
test_fd_hangup(void **state)
{
	struct loop *loop = loop_new();
	struct fdrec r = { .other = -1 };
	int p[2];

	assert_int_equal(pipe2(p, O_CLOEXEC | O_NONBLOCK), 0);
	assert_int_equal(loop_add_fd(loop, p[0], POLLIN, on_fd, &r), OK);
	close(p[1]);
	run_until(loop, &r.calls, 2000);
	assert_true(r.revents & POLLHUP);
	loop_del_fd(loop, p[0]);
	close(p[0]);
	loop_free(loop);
}

static void
test_fd_pause(void **state)
{
	struct loop *loop = loop_new();
	struct fdrec r = { .other = -1 };
	int p[2];

	assert_int_equal(pipe2(p, O_CLOEXEC | O_NONBLOCK), 0);
	assert_int_equal(loop_add_fd(loop, p[0], POLLIN, on_fd, &r), OK);
	assert_int_equal(loop_mod_fd(loop, p[0], 0), OK);
	assert_int_equal(write(p[1], "x", 1), 1);
	close(p[1]);
	/* Paused: neither data nor hangup is reported. */
	assert_int_equal(loop_run_once(loop, 30), OK);
	assert_int_equal(r.calls, 0);
	assert_int_equal(loop_mod_fd(loop, p[0], POLLIN), OK);
	run_until(loop, &r.calls, 2000);
	assert_string_equal(r.buf, "x");
	loop_del_fd(loop, p[0]);
	close(p[0]);
	loop_free(loop);
}

static void
test_fd_errors(void **state)
{
	struct loop *loop = loop_new();
	struct fdrec r = { .other = -1 };
	int p[2];

	assert_int_equal(pipe2(p, O_CLOEXEC | O_NONBLOCK), 0);
	assert_int_equal(loop_add_fd(loop, p[0], POLLIN, on_fd, &r), OK);
	assert_int_equal(loop_add_fd(loop, p[0], POLLIN, on_fd, &r), ERR_EXISTS);
	assert_non_null(strstr(error_msg(), "already watched"));
	assert_int_equal(loop_add_fd(loop, -1, POLLIN, on_fd, &r), ERR_INVALID);
	assert_int_equal(loop_mod_fd(loop, p[1], POLLIN), ERR_NOTFOUND);
	loop_del_fd(loop, p[1]); /* not watched: harmless */
	loop_del_fd(loop, p[0]);
	loop_del_fd(loop, p[0]);
	/* Removed: data on it is not reported. */
	assert_int_equal(write(p[1], "x", 1), 1);
	assert_int_equal(loop_run_once(loop, 20), OK);
	assert_int_equal(r.calls, 0);
	close(p[0]);
	close(p[1]);
	loop_free(loop);
}

static void
test_fd_removed_during_dispatch(void **state)
{
	struct loop *loop = loop_new();
	struct fdrec r1 = { 0 }, r2 = { 0 };
	int a[2], b[2];

	assert_int_equal(pipe2(a, O_CLOEXEC | O_NONBLOCK), 0);
	assert_int_equal(pipe2(b, O_CLOEXEC | O_NONBLOCK), 0);
	r1.other = b[0];
	r2.other = a[0];
	assert_int_equal(loop_add_fd(loop, a[0], POLLIN, on_fd, &r1), OK);
	assert_int_equal(loop_add_fd(loop, b[0], POLLIN, on_fd, &r2), OK);
	/* Both ready in the same iteration; whichever runs first removes the other. */
	assert_int_equal(write(a[1], "a", 1), 1);
	assert_int_equal(write(b[1], "b", 1), 1);
	assert_int_equal(loop_run_once(loop, 1000), OK);
	assert_int_equal(r1.calls + r2.calls, 1);
	/* And it stays removed; the survivor goes on. */
	r1.other = r2.other = -1;
	assert_int_equal(write(a[1], "a", 1), 1);
	assert_int_equal(write(b[1], "b", 1), 1);
	assert_int_equal(loop_run_once(loop, 30), OK);
	assert_int_equal(loop_run_once(loop, 0), OK);
	assert_true((r1.calls == 2 && r2.calls == 0) || (r1.calls == 0 && r2.calls == 2));
	loop_del_fd(loop, a[0]);
	loop_del_fd(loop, b[0]);
	close(a[0]);
	close(a[1]);
	close(b[0]);
	close(b[1]);
	loop_free(loop);
}

/* Removes its own watcher, closes the fd and watches a new pipe on the same number. */
struct reuse {
	int calls_old, calls_new;
	int victim_fd;
	int fresh[2];
};

static void
on_new(struct loop *loop, int fd, short revents, void *data)
{
	struct reuse *r = data;

	r->calls_new++;
}

static void
on_replace(struct loop *loop, int fd, short revents, void *data)
{
	struct reuse *r = data;

	r->calls_old++;
	loop_del_fd(loop, r->victim_fd);
	close(r->victim_fd);
	/* The lowest free number is the one just closed. */
	assert_int_equal(pipe2(r->fresh, O_CLOEXEC | O_NONBLOCK), 0);
	assert_int_equal(r->fresh[0], r->victim_fd);
	assert_int_equal(loop_add_fd(loop, r->fresh[0], POLLIN, on_new, r), OK);
}

static void
on_never(struct loop *loop, int fd, short revents, void *data)
{
	fail_msg("a replaced watcher ran");
}

static void
test_fd_replaced_during_dispatch(void **state)
{
	struct loop *loop = loop_new();
	struct reuse r = { 0 };
	int a[2], b[2];

	/* a[0] < b[0]: a's callback runs first and replaces b[0]. */
	assert_int_equal(pipe2(a, O_CLOEXEC | O_NONBLOCK), 0);
	assert_int_equal(pipe2(b, O_CLOEXEC | O_NONBLOCK), 0);
	r.victim_fd = b[0];
	assert_int_equal(loop_add_fd(loop, a[0], POLLIN, on_replace, &r), OK);
	assert_int_equal(loop_add_fd(loop, b[0], POLLIN, on_never, NULL), OK);
	assert_int_equal(write(a[1], "a", 1), 1);
	assert_int_equal(write(b[1], "b", 1), 1);
	assert_int_equal(loop_run_once(loop, 1000), OK);
	assert_int_equal(r.calls_old, 1);
	/* b's revents belonged to the old watcher: the new one was not called with them. */
	assert_int_equal(r.calls_new, 0);
	loop_del_fd(loop, a[0]);
	assert_int_equal(write(r.fresh[1], "n", 1), 1);
	assert_int_equal(loop_run_once(loop, 1000), OK);
	assert_int_equal(r.calls_new, 1);
	loop_del_fd(loop, r.fresh[0]);
	close(a[0]);
	close(a[1]);
	close(b[1]);
	close(r.fresh[0]);
	close(r.fresh[1]);
	loop_free(loop);
}

struct sigrec {
	int calls;
	int signo;
	bool quit;
	int code;
};

static void
on_sig(struct loop *loop, int signo, void *data)
{
	struct sigrec *s = data;

	s->calls++;
	s->signo = signo;
	if (s->quit)
		loop_quit(loop, s->code);
}

static bool
is_blocked(int signo)
{
	sigset_t cur;

	sigprocmask(SIG_SETMASK, NULL, &cur);
	return sigismember(&cur, signo);
}

static void
test_signal_raise_before_poll(void **state)
{
	struct loop *loop = loop_new();
	struct sigrec s = { 0 };
	uint64_t t0;

	assert_int_equal(loop_watch_signal(loop, SIGUSR1, on_sig, &s), OK);
	assert_true(is_blocked(SIGUSR1));
	assert_true(is_blocked(SIGCHLD));
	/* Arrives while no ppoll runs: it waits, and is not lost. */
	raise(SIGUSR1);
	assert_int_equal(s.calls, 0);
	t0 = loop_now_ms();
	assert_int_equal(loop_run_once(loop, 5000), OK);
	assert_true(loop_now_ms() - t0 < 1000);
	assert_int_equal(s.calls, 1);
	assert_int_equal(s.signo, SIGUSR1);
	/* Once only. */
	assert_int_equal(loop_run_once(loop, 20), OK);
	assert_int_equal(s.calls, 1);
	loop_free(loop);
}

static void
test_signal_sigint_quits(void **state)
{
	struct loop *loop = loop_new();
	struct sigrec s = { .quit = true, .code = 130 };

	assert_int_equal(loop_watch_signal(loop, SIGINT, on_sig, &s), OK);
	kill(getpid(), SIGINT);
	assert_int_equal(loop_run(loop), 130);
	assert_int_equal(s.calls, 1);
	assert_int_equal(s.signo, SIGINT);
	loop_free(loop);
}

static void
on_raise_tick(struct loop *loop, void *data)
{
	raise(SIGUSR2);
}

static void
test_signal_in_callback(void **state)
{
	struct loop *loop = loop_new();
	struct sigrec s = { 0 };

	assert_int_equal(loop_watch_signal(loop, SIGUSR2, on_sig, &s), OK);
	loop_add_timer(loop, 0, false, on_raise_tick, NULL);
	assert_int_equal(loop_run_once(loop, 0), OK);
	/* Raised inside a callback: handled on the next round, at once. */
	assert_int_equal(s.calls, 0);
	assert_int_equal(loop_run_once(loop, 5000), OK);
	assert_int_equal(s.calls, 1);
	loop_free(loop);
}

static void
test_signal_wakes_ppoll(void **state)
{
	struct loop *loop = loop_new();
	struct sigrec s = { .quit = true, .code = 3 };
	const char *argv[] = { "sh", "-c", "sleep 0.1; kill -HUP $PPID", NULL };
	struct spawn_opts o = SPAWN_OPTS_INIT;
	struct child *child;
	uint64_t t0 = loop_now_ms();

	assert_int_equal(loop_watch_signal(loop, SIGHUP, on_sig, &s), OK);
	o.argv = argv;
	assert_int_equal(spawn_start(loop, &o, &child), OK);
	/* Blocks in ppoll with no timeout until the signal comes. */
	assert_int_equal(loop_run(loop), 3);
	assert_int_equal(s.signo, SIGHUP);
	assert_true(loop_now_ms() - t0 >= 90);
	assert_int_equal(child_wait(child, 5000), OK);
	child_free(child);
	loop_free(loop);
}

static void
on_sig_second(struct loop *loop, int signo, void *data)
{
	int *n = data;

	(*n)++;
}

static void
test_signal_replace_and_invalid(void **state)
{
	struct loop *loop = loop_new();
	struct sigrec s = { 0 };
	int second = 0;

	assert_int_equal(loop_watch_signal(loop, SIGWINCH, on_sig, &s), OK);
	assert_int_equal(loop_watch_signal(loop, SIGWINCH, on_sig_second, &second), OK);
	raise(SIGWINCH);
	assert_int_equal(loop_run_once(loop, 1000), OK);
	assert_int_equal(s.calls, 0);
	assert_int_equal(second, 1);
	assert_int_equal(loop_watch_signal(loop, SIGKILL, on_sig, &s), ERR_INVALID);
	assert_int_equal(loop_watch_signal(loop, SIGSTOP, on_sig, &s), ERR_INVALID);
	assert_int_equal(loop_watch_signal(loop, 0, on_sig, &s), ERR_INVALID);
	assert_int_equal(loop_watch_signal(loop, 100000, on_sig, &s), ERR_INVALID);
	/* Several signals in one round each get their callback. */
	assert_int_equal(loop_watch_signal(loop, SIGTERM, on_sig, &s), OK);
	assert_int_equal(loop_watch_signal(loop, SIGUSR1, on_sig, &s), OK);
	raise(SIGTERM);
	raise(SIGUSR1);
	raise(SIGWINCH);
	while (s.calls < 2 || second < 2)
		assert_int_equal(loop_run_once(loop, 1000), OK);
	assert_int_equal(s.calls, 2);
	assert_int_equal(second, 2);
	loop_free(loop);
}

static volatile sig_atomic_t orig_hits;

static void
orig_handler(int signo)
{
	orig_hits++;
}

static void
test_free_restores_signals(void **state)
{
	struct sigaction sa, now;
	struct loop *loop;
	struct sigrec s = { 0 };

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = orig_handler;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGUSR1, &sa, NULL), 0);
	assert_false(is_blocked(SIGUSR1));
	assert_false(is_blocked(SIGCHLD));

	loop = loop_new();
	assert_int_equal(loop_watch_signal(loop, SIGUSR1, on_sig, &s), OK);
	assert_int_equal(loop_watch_signal(loop, SIGTERM, on_sig, &s), OK);
	sigaction(SIGUSR1, NULL, &now);
	assert_true(now.sa_handler != orig_handler);
	/* Pending at loop_free: taken by the loop, not passed on. */
	raise(SIGUSR1);
	loop_free(loop);

	sigaction(SIGUSR1, NULL, &now);
	assert_true(now.sa_handler == orig_handler);
	sigaction(SIGTERM, NULL, &now);
	assert_true(now.sa_handler == SIG_DFL);
	assert_false(is_blocked(SIGUSR1));
	assert_false(is_blocked(SIGTERM));
	assert_false(is_blocked(SIGCHLD));
	assert_int_equal(orig_hits, 0);
	raise(SIGUSR1);
	assert_int_equal(orig_hits, 1);
	sa.sa_handler = SIG_DFL;
	sigaction(SIGUSR1, &sa, NULL);
}

static void
test_free_keeps_callers_mask(void **state)
{
	sigset_t set;
	struct loop *loop;
	struct sigrec s = { 0 };

	/* Blocked by the caller before the loop: still blocked after it. */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	sigprocmask(SIG_BLOCK, &set, NULL);
	loop = loop_new();
	assert_int_equal(loop_watch_signal(loop, SIGUSR2, on_sig, &s), OK);
	raise(SIGUSR2);
	assert_int_equal(loop_run_once(loop, 1000), OK);
	assert_int_equal(s.calls, 1);
	loop_free(loop);
	assert_true(is_blocked(SIGUSR2));
	sigprocmask(SIG_UNBLOCK, &set, NULL);
}

static void
on_quit_tick(struct loop *loop, void *data)
{
	int *code = data;

	loop_quit(loop, *code);
}

static void
test_quit_reset(void **state)
{
	struct loop *loop = loop_new();
	int code = 42;

	assert_false(loop_done(loop));
	loop_add_timer(loop, 5, false, on_quit_tick, &code);
	assert_int_equal(loop_run(loop), 42);
	assert_true(loop_done(loop));
	/* Still done: loop_run returns at once. */
	assert_int_equal(loop_run(loop), 42);
	loop_reset(loop);
	assert_false(loop_done(loop));
	code = 0;
	loop_add_timer(loop, 5, false, on_quit_tick, &code);
	assert_int_equal(loop_run(loop), 0);
	loop_free(loop);
}

/* A callback that runs the loop again is fswb's bug: it stops there. */
static void
on_nested_outer(struct loop *loop, void *data)
{
	loop_run_once(loop, 0);
	*(int *)data = 1; /* not reached */
}

static void
test_nested_run(void **state)
{
	int status, reached = 0;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct loop *loop = loop_new();

		if (!freopen("/dev/null", "w", stderr))
			_exit(3);
		loop_add_timer(loop, 0, false, on_nested_outer, &reached);
		loop_run_once(loop, 0);
		_exit(reached ? 2 : 0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGABRT);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_now_ms),
		cmocka_unit_test(test_run_once_timeout),
		cmocka_unit_test(test_timer_oneshot),
		cmocka_unit_test(test_timer_repeat),
		cmocka_unit_test(test_timer_order),
		cmocka_unit_test(test_timer_delete_in_callback),
		cmocka_unit_test(test_timer_added_in_callback),
		cmocka_unit_test(test_timer_delete_pending),
		cmocka_unit_test(test_fd_readable),
		cmocka_unit_test(test_fd_hangup),
		cmocka_unit_test(test_fd_pause),
		cmocka_unit_test(test_fd_errors),
		cmocka_unit_test(test_fd_removed_during_dispatch),
		cmocka_unit_test(test_fd_replaced_during_dispatch),
		cmocka_unit_test(test_signal_raise_before_poll),
		cmocka_unit_test(test_signal_sigint_quits),
		cmocka_unit_test(test_signal_in_callback),
		cmocka_unit_test(test_signal_wakes_ppoll),
		cmocka_unit_test(test_signal_replace_and_invalid),
		cmocka_unit_test(test_free_restores_signals),
		cmocka_unit_test(test_free_keeps_callers_mask),
		cmocka_unit_test(test_quit_reset),
		cmocka_unit_test(test_nested_run),
	};

	return cmocka_run_group_tests(tests, test_setup_hermetic, test_teardown_hermetic);
}
