/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The loop: ppoll(2) over the watched fds, with the watched signals blocked
 * everywhere except inside ppoll.
 *
 * Signals: the handler only sets a flag. Because every watched signal is
 * blocked outside ppoll and ppoll unblocks them atomically, a signal that
 * arrives while callbacks run stays pending and interrupts the next ppoll:
 * no self-pipe is needed and nothing is lost.
 *
 * Dispatch is safe against callbacks that change the loop: each iteration
 * polls its own copy of the fd set, finds a watcher again by fd and
 * registration serial before calling it, and timers that are running are
 * only marked dead when deleted and freed once their callback returns.
 *
 * A callback never runs the loop again: a nested run would call callbacks
 * of work half done (a Ctrl-C freeing what the interrupted callback still
 * uses). loop_run_once() from inside a callback is fswb's bug (BUG()).
 */
#include "core/loop.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/util.h"

struct watch {
	int fd;
	short events;
	uint64_t serial;
	loop_fd_fn *fn;
	void *data;
};

#define MAX_TIMER_MS ((uint64_t)1 << 40)

struct timer {
	uint64_t id;
	uint64_t due; /* loop_now_ms() */
	uint64_t ms;
	bool repeat;
	bool dead;	  /* deleted while its callback runs */
	unsigned running; /* callbacks of it under way (nested loops) */
	uint64_t iter;	  /* the last dispatch that ran it */
	loop_timer_fn *fn;
	void *data;
	struct timer *next;
};

struct sigwatch {
	bool installed;
	bool blocked_by_us; /* was not blocked before the loop took it */
	loop_signal_fn *fn;
	void *data;
	struct sigaction old;
};

struct loop {
	struct watch *watch;
	size_t nwatch, watch_alloc;
	uint64_t next_serial;

	struct timer *timers; /* sorted by due, then by creation */
	uint64_t next_timer_id;
	uint64_t iter;

	struct sigwatch sig[NSIG];

	void (*child_hook)(struct loop *loop, void *data);
	void *child_data;

	bool quit;
	int code;
	bool dispatching; /* inside loop_run_once(): callbacks may be running */
};

/* Process-wide: a signal handler cannot know which loop it belongs to. */
static volatile sig_atomic_t sig_pending[NSIG];
static volatile sig_atomic_t sig_any;

static void
on_signal(int signo)
{
	if (signo > 0 && signo < NSIG)
		sig_pending[signo] = 1;
	sig_any = 1;
}

uint64_t
loop_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

static enum status
take_signal(struct loop *loop, int signo)
{
	struct sigwatch *sw = &loop->sig[signo];
	struct sigaction sa;
	sigset_t set, old;

	if (sw->installed)
		return OK;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigfillset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART | (signo == SIGCHLD ? SA_NOCLDSTOP : 0);
	sigemptyset(&set);
	sigaddset(&set, signo);
	/* Block first, so that the new handler never runs outside ppoll. */
	if (sigprocmask(SIG_BLOCK, &set, &old) < 0)
		return error(ERR_INVALID, "cannot block signal %d: %s", signo, strerror(errno));
	if (sigaction(signo, &sa, &sw->old) < 0) {
		enum status rc = error(ERR_INVALID, "cannot watch signal %d (%s): %s", signo,
				       strsignal(signo), strerror(errno));

		sigprocmask(SIG_SETMASK, &old, NULL);
		return rc;
	}
	sw->installed = true;
	sw->blocked_by_us = !sigismember(&old, signo);
	sig_pending[signo] = 0;
	return OK;
}

struct loop *
loop_new(void)
{
	struct loop *loop = xcalloc(1, sizeof(*loop));

	loop->next_serial = 1;
	loop->next_timer_id = 1;
	for (int i = 0; i < NSIG; i++)
		sig_pending[i] = 0;
	sig_any = 0;
	if (take_signal(loop, SIGCHLD) != OK)
		BUG("cannot watch SIGCHLD: %s", error_msg());
	return loop;
}

void
loop_free(struct loop *loop)
{
	sigset_t ours, pending;
	struct timer *t, *next;

	if (!loop)
		return;
	/*
	 * A watched signal that came after the last dispatch is still pending.
	 * It was the loop's to handle: take it now, while it is blocked, rather
	 * than let it reach the restored (often fatal) disposition mid-cleanup.
	 */
	sigemptyset(&ours);
	for (int s = 1; s < NSIG; s++)
		if (loop->sig[s].installed && loop->sig[s].blocked_by_us)
			sigaddset(&ours, s);
	if (sigpending(&pending) == 0) {
		for (int s = 1; s < NSIG; s++) {
			if (sigismember(&ours, s) && sigismember(&pending, s)) {
				struct timespec zero = { 0, 0 };
				sigset_t one;

				sigemptyset(&one);
				sigaddset(&one, s);
				while (sigtimedwait(&one, NULL, &zero) < 0 && errno == EINTR)
					;
			}
		}
	}
	for (int s = 1; s < NSIG; s++) {
		if (loop->sig[s].installed)
			sigaction(s, &loop->sig[s].old, NULL);
		sig_pending[s] = 0;
	}
	sig_any = 0;
	sigprocmask(SIG_UNBLOCK, &ours, NULL);

	for (t = loop->timers; t; t = next) {
		next = t->next;
		free(t);
	}
	free(loop->watch);
	free(loop);
}

static struct watch *
find_watch(struct loop *loop, int fd)
{
	for (size_t i = 0; i < loop->nwatch; i++)
		if (loop->watch[i].fd == fd)
			return &loop->watch[i];
	return NULL;
}

enum status
loop_add_fd(struct loop *loop, int fd, short events, loop_fd_fn *fn, void *data)
{
	struct watch *w;

	if (fd < 0 || !fn)
		return error(ERR_INVALID, "cannot watch fd %d: no such descriptor or callback", fd);
	if (find_watch(loop, fd))
		return error(ERR_EXISTS, "fd %d is already watched; change it with loop_mod_fd",
			     fd);
	ALLOC_GROW(loop->watch, loop->nwatch + 1, loop->watch_alloc);
	w = &loop->watch[loop->nwatch++];
	w->fd = fd;
	w->events = events;
	w->serial = loop->next_serial++;
	w->fn = fn;
	w->data = data;
	return OK;
}

enum status
loop_mod_fd(struct loop *loop, int fd, short events)
{
	struct watch *w = find_watch(loop, fd);

	if (!w)
		return error(ERR_NOTFOUND, "fd %d is not watched; add it with loop_add_fd", fd);
	w->events = events;
	return OK;
}

void
loop_del_fd(struct loop *loop, int fd)
{
	struct watch *w = find_watch(loop, fd);
	size_t i;

	if (!w)
		return;
	i = (size_t)(w - loop->watch);
	memmove(&loop->watch[i], &loop->watch[i + 1],
		(loop->nwatch - i - 1) * sizeof(loop->watch[0]));
	loop->nwatch--;
}

static void
timer_insert(struct loop *loop, struct timer *t)
{
	struct timer **pp = &loop->timers;

	while (*pp && (*pp)->due <= t->due)
		pp = &(*pp)->next;
	t->next = *pp;
	*pp = t;
}

static void
timer_unlink(struct loop *loop, struct timer *t)
{
	for (struct timer **pp = &loop->timers; *pp; pp = &(*pp)->next) {
		if (*pp == t) {
			*pp = t->next;
			t->next = NULL;
			return;
		}
	}
}

uint64_t
loop_add_timer(struct loop *loop, uint64_t ms, bool repeat, loop_timer_fn *fn, void *data)
{
	struct timer *t = xcalloc(1, sizeof(*t));

	t->id = loop->next_timer_id++;
	/* Far enough for anyone, and no overflow in nanoseconds. */
	if (ms > MAX_TIMER_MS)
		ms = MAX_TIMER_MS;
	t->ms = ms;
	t->due = loop_now_ms() + ms;
	t->repeat = repeat;
	t->fn = fn;
	t->data = data;
	timer_insert(loop, t);
	return t->id;
}

void
loop_del_timer(struct loop *loop, uint64_t id)
{
	struct timer *t;

	for (t = loop->timers; t; t = t->next)
		if (t->id == id && !t->dead)
			break;
	if (!t)
		return;
	if (t->running) {
		t->dead = true;
		return;
	}
	timer_unlink(loop, t);
	free(t);
}

enum status
loop_watch_signal(struct loop *loop, int signo, loop_signal_fn *fn, void *data)
{
	enum status rc;

	if (signo <= 0 || signo >= NSIG || signo == SIGKILL || signo == SIGSTOP)
		return error(ERR_INVALID, "cannot watch signal %d: it cannot be caught", signo);
	rc = take_signal(loop, signo);
	if (rc != OK)
		return rc;
	loop->sig[signo].fn = fn;
	loop->sig[signo].data = data;
	return OK;
}

void
loop_set_child_hook(struct loop *loop, void (*hook)(struct loop *loop, void *data), void *data)
{
	loop->child_hook = hook;
	loop->child_data = data;
}

/* The first live timer, or NULL. */
static struct timer *
first_timer(struct loop *loop)
{
	struct timer *t;

	for (t = loop->timers; t; t = t->next)
		if (!t->dead && !t->running)
			return t;
	return NULL;
}

static void
run_signals(struct loop *loop)
{
	if (!sig_any)
		return;
	sig_any = 0;
	for (int s = 1; s < NSIG; s++) {
		if (!sig_pending[s])
			continue;
		sig_pending[s] = 0;
		if (s == SIGCHLD && loop->child_hook)
			loop->child_hook(loop, loop->child_data);
		if (loop->sig[s].fn)
			loop->sig[s].fn(loop, s, loop->sig[s].data);
	}
}

static void
run_fds(struct loop *loop, const struct pollfd *pfd, const uint64_t *serial, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct watch *w;
		short revents;

		if (!pfd[i].revents)
			continue;
		/* Gone, replaced or paused by an earlier callback: skip it. */
		w = find_watch(loop, pfd[i].fd);
		if (!w || w->serial != serial[i] || !w->events)
			continue;
		revents = pfd[i].revents & (w->events | POLLERR | POLLHUP | POLLNVAL);
		if (revents)
			w->fn(loop, w->fd, revents, w->data);
	}
}

static void
run_timers(struct loop *loop)
{
	uint64_t now = loop_now_ms();
	uint64_t last_id = loop->next_timer_id - 1;
	uint64_t iter = ++loop->iter;

	for (;;) {
		struct timer *t;

		/* Due, not added during this dispatch, not yet run by it. */
		for (t = loop->timers; t && t->due <= now; t = t->next)
			if (!t->dead && !t->running && t->id <= last_id && t->iter != iter)
				break;
		if (!t || t->due > now)
			return;
		t->iter = iter;
		t->running++;
		t->fn(loop, t->data);
		t->running--;
		if (t->running)
			continue;
		timer_unlink(loop, t);
		if (t->dead || !t->repeat) {
			free(t);
			continue;
		}
		t->due += t->ms;
		if (t->due <= now)
			t->due = now + t->ms; /* fell behind: do not burst */
		timer_insert(loop, t);
	}
}

enum status
loop_run_once(struct loop *loop, int timeout_ms)
{
	struct pollfd small_pfd[16];
	uint64_t small_serial[16];
	struct pollfd *pfd = small_pfd;
	uint64_t *serial = small_serial;
	struct timespec ts, *tsp = NULL;
	int64_t wait_ns = timeout_ms < 0 ? -1 : (int64_t)timeout_ms * 1000000;
	struct timer *t;
	sigset_t mask;
	size_t n = 0;
	enum status rc = OK;
	int prc;

	if (loop->dispatching)
		BUG("the loop was run again from inside one of its callbacks");
	loop->dispatching = true;
	if (loop->nwatch > ARRAY_SIZE(small_pfd)) {
		pfd = xmalloc(loop->nwatch * sizeof(*pfd));
		serial = xmalloc(loop->nwatch * sizeof(*serial));
	}
	for (size_t i = 0; i < loop->nwatch; i++) {
		if (!loop->watch[i].events)
			continue;
		pfd[n].fd = loop->watch[i].fd;
		pfd[n].events = loop->watch[i].events;
		pfd[n].revents = 0;
		serial[n] = loop->watch[i].serial;
		n++;
	}

	t = first_timer(loop);
	if (t) {
		uint64_t due_ns = t->due * 1000000, now = now_ns();
		int64_t d = due_ns > now ? (int64_t)(due_ns - now) : 0;

		if (wait_ns < 0 || d < wait_ns)
			wait_ns = d;
	}
	if (sig_any)
		wait_ns = 0;
	if (wait_ns >= 0) {
		ts.tv_sec = wait_ns / 1000000000;
		ts.tv_nsec = wait_ns % 1000000000;
		tsp = &ts;
	}

	/* The current mask without the watched signals: they arrive only here. */
	sigprocmask(SIG_SETMASK, NULL, &mask);
	for (int s = 1; s < NSIG; s++)
		if (loop->sig[s].installed)
			sigdelset(&mask, s);

	prc = ppoll(pfd, (nfds_t)n, tsp, &mask);
	if (prc < 0 && errno != EINTR) {
		rc = error(ERR_IO, "cannot wait for events: %s", strerror(errno));
		goto out;
	}

	run_signals(loop);
	if (prc > 0)
		run_fds(loop, pfd, serial, n);
	run_timers(loop);
out:
	loop->dispatching = false;
	if (pfd != small_pfd) {
		free(pfd);
		free(serial);
	}
	return rc;
}

bool
loop_dispatching(const struct loop *loop)
{
	return loop->dispatching;
}

void
loop_forget(void)
{
	for (int s = 0; s < NSIG; s++)
		sig_pending[s] = 0;
	sig_any = 0;
}

int
loop_run(struct loop *loop)
{
	while (!loop->quit)
		if (loop_run_once(loop, -1) != OK)
			return -1;
	return loop->code;
}

void
loop_quit(struct loop *loop, int code)
{
	loop->quit = true;
	loop->code = code;
}

bool
loop_done(const struct loop *loop)
{
	return loop->quit;
}

void
loop_reset(struct loop *loop)
{
	loop->quit = false;
	loop->code = 0;
}
