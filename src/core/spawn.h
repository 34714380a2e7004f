/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Spawn: every child process fswb starts, starts here.
 *
 * A child is started from an argv array, never from a shell string, so no
 * user or remote input is ever parsed by a shell. Its standard streams are
 * each /dev/null, inherited, a pipe to fswb, or a given fd; its environment
 * is inherited, cleared, or changed; it may get its own process group, so
 * that killing it kills everything it started (make -j, qemu's helpers).
 *
 * Exit is learned through the loop: the loop's SIGCHLD hook reaps every
 * child spawned here (waitpid WNOHANG) and calls its on_exit callback. A
 * caller that just wants to run a program to completion uses spawn_run(),
 * which runs the loop itself.
 *
 * Call sequence:
 *	struct spawn_opts o = SPAWN_OPTS_INIT;
 *	o.argv = argv; o.out = SPAWN_PIPE; o.on_exit = done; o.data = ctx;
 *	spawn_start(loop, &o, &child);         child->out is a pipe fd
 *	loop_add_fd(loop, child->out, POLLIN, read_it, ctx);
 *	... done(child, ctx) runs after the child exited ...
 *	child_free(child);                      closes fds left open
 *
 * A child still running at child_free() is killed (SIGKILL to its group) and
 * reaped, so nothing is ever left behind.
 */
#ifndef FSWB_CORE_SPAWN_H
#define FSWB_CORE_SPAWN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "core/loop.h"
#include "core/status.h"
#include "core/util.h"

/* What a standard stream of the child is connected to. */
enum spawn_stream {
	SPAWN_NULL = 0, /* /dev/null (the default) */
	SPAWN_INHERIT,	/* fswb's own */
	SPAWN_PIPE,	/* a pipe; fswb's end is child->in/out/err, O_NONBLOCK, O_CLOEXEC */
	SPAWN_FD,	/* the fd in spawn_opts.{in,out,err}_fd */
	SPAWN_STDOUT,	/* err only: the same as stdout (2>&1) */
};

struct child;
typedef void spawn_exit_fn(struct child *child, void *data);

/*
 * A function as a child: fswb forks, and the child calls fn(fn_arg) instead
 * of exec and exits with what it returns. It runs on copies of fswb's memory
 * with nothing of fswb's loop or children (it makes its own loop when it
 * needs one) and must leave the terminal alone: long work that would block
 * the loop runs this way (a worker). Its name is for messages.
 */
typedef int spawn_fn(void *arg);

struct spawn_opts {
	const char *const *argv; /* argv[0] is looked up in PATH when it has no '/' */
	spawn_fn *fn;		 /* instead of argv: see above */
	void *fn_arg;
	const char *fn_name;
	const char *cwd;	/* NULL: fswb's */
	bool clear_env;		/* start from an empty environment */
	const char *const *env; /* "NAME=value" to set, "NAME" to unset; NULL-terminated */
	enum spawn_stream in, out, err;
	int in_fd, out_fd, err_fd; /* for SPAWN_FD; the child gets a dup, the fd stays fswb's */
	bool new_pgrp;		   /* its own process group (kill reaches its children) */
	bool die_with_fswb;	   /* SIGKILL it when fswb dies, even by SIGKILL (a guest) */
	spawn_exit_fn *on_exit;	   /* optional: called once from the loop after exit */
	void *data;
};

#define SPAWN_OPTS_INIT                                                \
	{                                                              \
		.in = SPAWN_NULL, .out = SPAWN_NULL, .err = SPAWN_NULL \
	}

/* How a child ended. */
struct child_exit {
	bool exited;   /* exited normally: code is valid */
	int code;      /* exit status */
	bool signaled; /* killed by a signal: signo is valid */
	int signo;
	bool core_dumped;
};

struct child {
	pid_t pid;
	int in, out, err; /* fswb's ends of the pipes, -1 when not a pipe or closed */
	bool running;
	struct child_exit exit;
	char *name; /* argv[0], for messages */
	/* internal */
	struct loop *loop;
	bool pgrp;
	spawn_exit_fn *on_exit;
	void *data;
	struct child *next;
};

/*
 * Start a child. ERR_NOTFOUND when argv[0] cannot be found or run (the
 * message names it), ERR_SPAWN for other failures (fork, pipe, chdir); no
 * child exists afterwards in either case.
 */
enum status spawn_start(struct loop *loop, const struct spawn_opts *opts, struct child **out);

/* Send sig to the child (its whole group when new_pgrp). Harmless after exit. */
void child_kill(struct child *child, int sig);

/*
 * Wait for the child's exit, at most timeout_ms (-1: forever), without the
 * loop: nothing else runs meanwhile, so this is for children that end soon
 * and whose pipes the caller reads itself. ERR_TIMEOUT when it is still
 * running after that.
 */
enum status child_wait(struct child *child, int timeout_ms);

/* Close fds, kill and reap if still running, free. NULL is fine. */
void child_free(struct child *child);

/* "exited with status 1", "killed by signal 9 (Killed)", "dumped core (signal 11...)". */
const char *child_exit_str(const struct child_exit *e, char *buf, size_t len);

/* OK when the child exited 0; else ERR_CHILD naming the program and how it ended. */
enum status child_check(const struct child *child);

/*
 * Run argv to completion with stdin from /dev/null, without the loop (a
 * short command: nothing else runs meanwhile; long work is a job), and
 * return its stdout (and stderr, when err_to_out) in *out (may be NULL to
 * discard; output beyond max_out bytes is dropped and reported as
 * ERR_LIMIT). *exit gets how it ended (may be NULL). The return value is
 * about starting and collecting it; a nonzero exit is in *exit, not an error.
 */
enum status spawn_run(struct loop *loop, const char *const *argv, const char *const *env,
		      bool err_to_out, size_t max_out, struct strbuf *out, struct child_exit *exit);

/* What spawn_run_opts() runs and how long it waits. */
struct spawn_run {
	const char *const *argv;
	const char *const *env; /* as in spawn_opts */
	bool err_to_out;	/* stderr into the output too */
	bool new_pgrp;		/* its own process group: the kill at the end reaches all */
	size_t max_out;		/* output beyond this is dropped: ERR_LIMIT */
	int timeout_ms;		/* -1: wait for the exit; else kill it after this */
	const char *until;	/* NULL, or stop waiting (and kill it) once the output holds this */
};

/*
 * spawn_run() with a limit: waits at most r->timeout_ms and no longer than
 * until r->until appears in the output; a child still running then is
 * killed (*timed_out is true when the time ran out; may be NULL).
 */
enum status spawn_run_opts(struct loop *loop, const struct spawn_run *r, struct strbuf *out,
			   struct child_exit *exit, bool *timed_out);

#endif
