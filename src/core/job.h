/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Jobs: a child process as work on the loop. Its output (stdout, and stderr
 * with it unless asked otherwise) comes to callbacks as bytes and as lines
 * of at most line_max bytes (core/util.h's line assembler); it may have a
 * time limit; it can be cancelled; and when it has ended a done callback
 * says how. Nothing waits: the loop calls back.
 *
 * Call sequence:
 *	struct job_opts o = JOB_OPTS_INIT;
 *	o.argv = argv; o.on_line = line; o.on_done = done; o.data = ctx;
 *	job_start(loop, &o, &job);     the child runs (its own process group)
 *	... line(ctx, "...", n, cut) for each line, from the loop ...
 *	job_cancel(job);               optional: SIGTERM to its group, SIGKILL
 *	                               after kill_grace_ms; done follows
 *	... done(ctx, &result) once, after the child exited and its output
 *	    was read (what it wrote before it exited; a grandchild that keeps
 *	    the pipe open is not waited for) ...
 *	job_free(job);                 from done too; a job still running is
 *	                               killed and reaped, and done is not called
 *
 * A job may be a function instead of a program (opts.fn): a worker, fswb's
 * own code in a child process with its own loop, for long work written as
 * plain calls (a kernel build, an appliance): it writes lines to its stdout
 * and its exit status says how it went.
 *
 * job_wait() runs the loop until the job is done: for a process whose only
 * work is that job (a command's main, a worker), never from a callback of
 * the loop (the loop refuses a nested run); there, go on from on_done.
 */
#ifndef FSWB_CORE_JOB_H
#define FSWB_CORE_JOB_H

#include <stdbool.h>
#include <stddef.h>

#include "core/loop.h"
#include "core/spawn.h"
#include "core/status.h"
#include "core/util.h"

struct job;

struct job_result {
	struct child_exit exit; /* how the child ended */
	bool timed_out;		/* the time limit ran out (it was cancelled then) */
	bool cancelled;		/* job_cancel() or the time limit */
	int read_errno;		/* reading its output failed (0: it did not) */
};

struct job_opts {
	const char *const *argv; /* argv[0] looked up in PATH when it has no '/' */
	spawn_fn *fn;		 /* instead of argv: a worker (see above) */
	void *fn_arg;
	const char *fn_name;	/* the worker's name in messages */
	const char *const *env; /* as in spawn_opts; NULL: fswb's */
	const char *cwd;	/* NULL: fswb's */
	bool stderr_apart;	/* stderr to /dev/null instead of with stdout */
	bool same_pgrp;		/* in fswb's process group (the terminal's Ctrl-C reaches it) */
	size_t line_max;	/* longer lines are cut (cut is true); 0: 4096 */
	bool cr_ends;		/* '\r' ends a line too (progress output) */
	int timeout_ms;		/* -1: none */
	unsigned kill_grace_ms; /* from SIGTERM to SIGKILL; 0: 5000 */
	/* all optional, called from the loop */
	void (*on_bytes)(void *data, const char *buf, size_t len);
	line_asm_fn *on_line;
	void (*on_done)(void *data, const struct job_result *r);
	void *data;
};

#define JOB_OPTS_INIT            \
	{                        \
		.timeout_ms = -1 \
	}

/* Start the child; ERR_NOTFOUND/ERR_SPAWN (naming it) when it cannot start. */
enum status job_start(struct loop *loop, const struct job_opts *opts, struct job **out);
/* Stop it: SIGTERM to its process group, SIGKILL after the grace. Harmless when done. */
void job_cancel(struct job *job);
/* Done: on_done was called (or is being called). */
bool job_done(const struct job *job);
/* The result so far (complete once job_done()). */
const struct job_result *job_result(const struct job *job);
void job_free(struct job *job);

/*
 * Run the loop until the job is done, cancelling it when *cancel (may be
 * NULL) becomes true or the loop is told to quit. ERR_IO when the loop
 * fails; otherwise OK, with the job's result in job_result().
 */
enum status job_wait(struct job *job, const bool *cancel);

/* "'make' exited with status 2", "'make' was stopped after 30 s": an error of the result. */
enum status job_check(const struct job *job);

#endif
