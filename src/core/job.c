/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Jobs: a child process as work on the loop. See job.h.
 */
#include "core/job.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LINE_MAX_DEFAULT 4096
#define KILL_GRACE_MS	 5000
#define WAIT_POLL_MS	 200

struct job {
	struct loop *loop;
	struct child *child;
	struct job_opts o;
	struct line_asm la;
	struct job_result res;
	char *name;
	uint64_t timeout_timer, kill_timer;
	bool done, dispatching, free_asked;
};

static void
no_line(void *data, char *line, size_t len, bool cut)
{
}

/* What the child wrote that is there now; false at the end of its output. */
static bool
read_some(struct job *j)
{
	char buf[65536];
	ssize_t n;

	if (j->child->out < 0)
		return false;
	n = read(j->child->out, buf, sizeof(buf));
	if (n > 0) {
		if (j->o.on_bytes)
			j->o.on_bytes(j->o.data, buf, (size_t)n);
		line_asm_feed(&j->la, buf, (size_t)n, j->o.on_line ? j->o.on_line : no_line,
			      j->o.data);
		return true;
	}
	if (n < 0 && errno == EINTR)
		return true;
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return false;
	if (n < 0)
		j->res.read_errno = errno;
	loop_del_fd(j->loop, j->child->out);
	close(j->child->out);
	j->child->out = -1;
	return false;
}

static void
on_output(struct loop *loop, int fd, short revents, void *data)
{
	read_some(data);
}

static void
stop_timers(struct job *j)
{
	if (j->timeout_timer)
		loop_del_timer(j->loop, j->timeout_timer);
	if (j->kill_timer)
		loop_del_timer(j->loop, j->kill_timer);
	j->timeout_timer = j->kill_timer = 0;
}

static void
really_free(struct job *j)
{
	stop_timers(j);
	child_free(j->child);
	line_asm_release(&j->la);
	free(j->name);
	free(j);
}

static void
job_exited(struct child *child, void *data)
{
	struct job *j = data;

	/* what it wrote before it exited; a grandchild may keep the pipe open */
	while (read_some(j))
		;
	line_asm_finish(&j->la, j->o.on_line ? j->o.on_line : no_line, j->o.data);
	stop_timers(j);
	j->res.exit = child->exit;
	j->done = true;
	if (j->o.on_done) {
		j->dispatching = true;
		j->o.on_done(j->o.data, &j->res);
		j->dispatching = false;
	}
	if (j->free_asked)
		really_free(j);
}

static void
on_kill(struct loop *loop, void *data)
{
	struct job *j = data;

	j->kill_timer = 0;
	child_kill(j->child, SIGKILL);
}

static void
on_timeout(struct loop *loop, void *data)
{
	struct job *j = data;

	j->timeout_timer = 0;
	j->res.timed_out = true;
	job_cancel(j);
}

enum status
job_start(struct loop *loop, const struct job_opts *opts, struct job **out)
{
	struct spawn_opts so = SPAWN_OPTS_INIT;
	struct job *j = xcalloc(1, sizeof(*j));
	enum status rc;

	*out = NULL;
	j->loop = loop;
	j->o = *opts;
	j->o.argv = NULL;
	j->o.env = NULL;
	j->o.cwd = NULL;
	line_asm_init(&j->la, opts->line_max ? opts->line_max : LINE_MAX_DEFAULT, opts->cr_ends);
	so.argv = opts->argv;
	so.fn = opts->fn;
	so.fn_arg = opts->fn_arg;
	so.fn_name = opts->fn_name;
	so.env = opts->env;
	so.cwd = opts->cwd;
	so.out = SPAWN_PIPE;
	so.err = opts->stderr_apart ? SPAWN_NULL : SPAWN_STDOUT;
	so.new_pgrp = !opts->same_pgrp;
	so.on_exit = job_exited;
	so.data = j;
	rc = spawn_start(loop, &so, &j->child);
	if (rc == OK)
		rc = loop_add_fd(loop, j->child->out, POLLIN, on_output, j);
	if (rc != OK) {
		really_free(j);
		return rc;
	}
	j->name = xstrdup(j->child->name);
	if (opts->timeout_ms >= 0)
		j->timeout_timer =
			loop_add_timer(loop, (uint64_t)opts->timeout_ms, false, on_timeout, j);
	*out = j;
	return OK;
}

void
job_cancel(struct job *j)
{
	if (!j || j->done || j->res.cancelled)
		return;
	j->res.cancelled = true;
	child_kill(j->child, SIGTERM);
	j->kill_timer =
		loop_add_timer(j->loop, j->o.kill_grace_ms ? j->o.kill_grace_ms : KILL_GRACE_MS,
			       false, on_kill, j);
}

bool
job_done(const struct job *j)
{
	return j->done;
}

const struct job_result *
job_result(const struct job *j)
{
	return &j->res;
}

void
job_free(struct job *j)
{
	if (!j)
		return;
	if (j->dispatching) {
		j->free_asked = true;
		return;
	}
	really_free(j);
}

enum status
job_wait(struct job *j, const bool *cancel)
{
	while (!j->done) {
		enum status rc;

		if ((cancel && *cancel) || loop_done(j->loop))
			job_cancel(j);
		rc = loop_run_once(j->loop, WAIT_POLL_MS);
		if (rc != OK)
			return rc;
	}
	return OK;
}

enum status
job_check(const struct job *j)
{
	char how[128];

	if (j->res.timed_out)
		return error(ERR_TIMEOUT, "'%s' did not finish in %d s and was stopped", j->name,
			     j->o.timeout_ms / 1000);
	if (j->res.cancelled)
		return error(ERR_INTERRUPTED, "'%s' was stopped", j->name);
	if (j->res.read_errno)
		return error(ERR_IO, "cannot read the output of '%s': %s", j->name,
			     strerror(j->res.read_errno));
	if (j->res.exit.exited && j->res.exit.code == 0)
		return OK;
	return error(ERR_CHILD, "'%s' %s", j->name, child_exit_str(&j->res.exit, how, sizeof(how)));
}
