/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The loop: the one place fswb waits.
 *
 * A loop watches file descriptors (poll(2) events), runs timers and turns
 * signals into callbacks. Everything that waits — the tty, child pipes,
 * sockets, timers — registers here; nothing else in fswb blocks.
 *
 * Signals: loop_watch_signal() installs a handler that only sets a flag. The
 * signal is blocked outside ppoll(2), which unblocks it atomically, so a
 * signal arriving at any time wakes the loop and is never lost. The
 * callbacks run later, from loop_run_once(), in ordinary context.
 * SIGCHLD is watched by every loop: it is how spawn.h reaps children.
 *
 * Call sequence:
 *	struct loop *l = loop_new();
 *	loop_add_fd(l, fd, POLLIN, on_readable, ctx);
 *	loop_add_timer(l, 500, true, on_tick, ctx);
 *	loop_watch_signal(l, SIGINT, on_sigint, ctx);
 *	while (!loop_done(l)) loop_run_once(l, -1);   (or loop_run(l))
 *	loop_free(l);
 *
 * Callbacks may add and remove watchers and timers (their own too) and may
 * call loop_quit(). A removed watcher is never called again, not even later
 * in the same iteration.
 *
 * One loop per process: the signal flags are process-wide.
 */
#ifndef FSWB_CORE_LOOP_H
#define FSWB_CORE_LOOP_H

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/status.h"

struct loop;

/* revents as poll(2) reports them (POLLIN, POLLOUT, POLLHUP, POLLERR...). */
typedef void loop_fd_fn(struct loop *loop, int fd, short revents, void *data);
typedef void loop_timer_fn(struct loop *loop, void *data);
typedef void loop_signal_fn(struct loop *loop, int signo, void *data);

struct loop *loop_new(void);
/* Restores the signal dispositions and mask it changed. */
void loop_free(struct loop *loop);

/* Watch fd for events (POLLIN, POLLOUT). One watcher per fd. */
enum status loop_add_fd(struct loop *loop, int fd, short events, loop_fd_fn *fn, void *data);
/* Change the events watched on fd (0 pauses it). */
enum status loop_mod_fd(struct loop *loop, int fd, short events);
/* Stop watching fd; harmless when it is not watched. Does not close fd. */
void loop_del_fd(struct loop *loop, int fd);

/*
 * Call fn after ms milliseconds, and every ms milliseconds after that when
 * repeat is set. Returns an id > 0 for loop_del_timer().
 */
uint64_t loop_add_timer(struct loop *loop, uint64_t ms, bool repeat, loop_timer_fn *fn, void *data);
void loop_del_timer(struct loop *loop, uint64_t id);

/*
 * Call fn when signo arrives (SIGINT, SIGTERM, SIGHUP, SIGWINCH, SIGUSR1...).
 * One callback per signal; a second call replaces it.
 */
enum status loop_watch_signal(struct loop *loop, int signo, loop_signal_fn *fn, void *data);

/*
 * In a child of fork() that goes on running fswb code (spawn_opts.fn): forget
 * the parent's pending signals. The parent's loop is left alone (its memory
 * is a copy); the child makes its own with loop_new().
 */
void loop_forget(void);

/*
 * Wait at most timeout_ms (-1: until something happens; 0: just look),
 * then run whatever is due: signal callbacks first, then fd callbacks, then
 * timers. ERR_IO when ppoll itself fails. Never from inside a callback of
 * the same loop (BUG()): work that must wait is a job with a done callback.
 */
enum status loop_run_once(struct loop *loop, int timeout_ms);

/* True inside loop_run_once(): a callback is running, and the loop may not run again. */
bool loop_dispatching(const struct loop *loop);

/* Run until loop_quit(). Returns the code passed to loop_quit(). */
int loop_run(struct loop *loop);
void loop_quit(struct loop *loop, int code);
bool loop_done(const struct loop *loop);
/* Allow loop_run() again after a loop_quit(). */
void loop_reset(struct loop *loop);

/* Monotonic milliseconds (CLOCK_MONOTONIC). */
uint64_t loop_now_ms(void);

/* Spawn's hook: called after SIGCHLD, before fd callbacks. Internal to core. */
void loop_set_child_hook(struct loop *loop, void (*hook)(struct loop *loop, void *data),
			 void *data);

#endif
