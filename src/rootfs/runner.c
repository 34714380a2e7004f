/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Running the appliance's tools: see appliance_int.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/job.h"
#include "rootfs/appliance_int.h"

void
ap_progress(struct runner *r, const char *detail, double fraction)
{
	uint64_t now = loop_now_ms();
	bool changed = strcmp(detail, r->detail) != 0;

	if (!changed && fraction < r->fraction + 0.01 && now - r->last_emit < 1000)
		return;
	if (detail != r->detail)
		snprintf(r->detail, sizeof(r->detail), "%s", detail);
	if (fraction > r->fraction)
		r->fraction = fraction;
	r->last_emit = now;
	if (r->bus)
		emit_stage(r->bus, EV_STAGE_PROGRESS, STAGE, r->detail, r->fraction);
}

bool
ap_cancelled(struct runner *r)
{
	if ((r->cancel && *r->cancel) || loop_done(r->loop))
		r->interrupted = true;
	return r->interrupted;
}

static void
log_write(struct runner *r, const char *data, size_t len)
{
	while (r->logfd >= 0 && len) {
		ssize_t n = write(r->logfd, data, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		data += n;
		len -= (size_t)n;
	}
}

static void
feed_line(void *data, char *line, size_t len, bool cut)
{
	struct runner *r = data;

	if (*line) {
		if (r->tail.n >= TAIL_LINES) {
			free(r->tail.v[0]);
			memmove(r->tail.v, r->tail.v + 1, (r->tail.n - 1) * sizeof(*r->tail.v));
			r->tail.v[--r->tail.n] = NULL;
		}
		strvec_push(&r->tail, line);
	}
	if (r->on_line)
		r->on_line(r, line);
}

static void
on_bytes(void *data, const char *buf, size_t len)
{
	log_write(data, buf, len);
}

static char *
tail_text(struct runner *r)
{
	struct strbuf sb = STRBUF_INIT;

	for (size_t i = 0; i < r->tail.n; i++)
		strbuf_addf(&sb, "\n  %s", r->tail.v[i]);
	return strbuf_detach(&sb);
}

/*
 * Run argv to its end, its stdout and stderr into the runner. OK only when
 * it exited 0; ERR_INTERRUPTED when cancelled (the child is stopped first).
 */
enum status
ap_run(struct runner *r, const char *const *argv, const char *const *env)
{
	struct job_opts o = JOB_OPTS_INIT;
	const struct job_result *res;
	struct job *job;
	enum status rc;

	if (ap_cancelled(r))
		return error(ERR_INTERRUPTED, "interrupted");
	if (r->logfd >= 0) {
		struct strbuf cmd = STRBUF_INIT;

		strbuf_adds(&cmd, "$ ");
		sq_quote_argv(&cmd, argv);
		strbuf_addch(&cmd, '\n');
		log_write(r, cmd.buf, cmd.len);
		strbuf_release(&cmd);
	}
	strvec_clear(&r->tail);
	o.argv = argv;
	o.env = env;
	o.cr_ends = true;
	o.kill_grace_ms = KILL_GRACE;
	o.on_bytes = on_bytes;
	o.on_line = feed_line;
	o.data = r;
	rc = job_start(r->loop, &o, &job);
	if (rc != OK)
		return rc;
	rc = job_wait(job, r->cancel);
	res = job_result(job);
	if (rc == OK && res->cancelled) {
		r->interrupted = true;
		rc = error(ERR_INTERRUPTED, "interrupted");
	} else if (rc == OK && !(res->exit.exited && res->exit.code == 0)) {
		char how[128];
		char *tail = tail_text(r);

		child_exit_str(&res->exit, how, sizeof(how));
		rc = error(ERR_CHILD, "'%s' %s%s%s", argv[0], how,
			   r->tail.n ? "; its last lines:" : "", tail);
		free(tail);
	}
	job_free(job);
	return rc;
}

/* Run argv and capture its output (small), for git and du. */
enum status
ap_run_capture(struct runner *r, const char *const *argv, struct strbuf *out)
{
	line_fn *saved = r->on_line;
	size_t tail_start;
	enum status rc;

	r->on_line = NULL;
	rc = ap_run(r, argv, (const char *const[]){ "LC_ALL=C", "GIT_TERMINAL_PROMPT=0", NULL });
	r->on_line = saved;
	strbuf_reset(out);
	tail_start = 0;
	for (size_t i = tail_start; i < r->tail.n; i++)
		strbuf_addf(out, "%s\n", r->tail.v[i]);
	return rc;
}

void
ap_runner_release(struct runner *r)
{
	strvec_clear(&r->tail);
	if (r->logfd >= 0)
		close(r->logfd);
	r->logfd = -1;
}
