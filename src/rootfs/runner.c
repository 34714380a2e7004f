/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Running the appliance's tools: see appliance_int.h.
 */
#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <string.h>

#include "core/spawn.h"
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
feed(struct runner *r, const char *data, size_t len)
{
	log_write(r, data, len);
	line_asm_feed(&r->partial, data, len, feed_line, r);
}

struct pipe_reader {
	struct runner *r;
	bool eof;
};

static void
on_output(struct loop *loop, int fd, short revents, void *data)
{
	struct pipe_reader *pr = data;
	char buf[8192];

	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n > 0) {
			feed(pr->r, buf, (size_t)n);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		pr->eof = true;
		loop_del_fd(loop, fd);
		return;
	}
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
	struct spawn_opts o = SPAWN_OPTS_INIT;
	struct child *child = NULL;
	struct pipe_reader pr = { .r = r };
	uint64_t term_at = 0, exited_at = 0;
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
	line_asm_reset(&r->partial);
	o.argv = argv;
	o.env = env;
	o.out = SPAWN_PIPE;
	o.err = SPAWN_STDOUT;
	o.new_pgrp = true;
	rc = spawn_start(r->loop, &o, &child);
	if (rc != OK)
		return rc;
	loop_add_fd(r->loop, child->out, POLLIN, on_output, &pr);
	while (child->running || (!pr.eof && loop_now_ms() - exited_at < 2000)) {
		if (!child->running && !exited_at)
			exited_at = loop_now_ms();
		if (child->running && ap_cancelled(r)) {
			if (!term_at) {
				child_kill(child, SIGTERM);
				term_at = loop_now_ms();
			} else if (loop_now_ms() - term_at > KILL_GRACE) {
				child_kill(child, SIGKILL);
			}
		}
		if (loop_run_once(r->loop, 200) != OK)
			break;
	}
	if (!pr.eof)
		loop_del_fd(r->loop, child->out);
	line_asm_finish(&r->partial, feed_line, r);
	if (child->running) {
		child_free(child);
		return error(ERR_IO, "waiting for '%s' failed", argv[0]);
	}
	if (r->interrupted) {
		rc = error(ERR_INTERRUPTED, "interrupted");
	} else if (!(child->exit.exited && child->exit.code == 0)) {
		char how[128];
		char *tail = tail_text(r);

		child_exit_str(&child->exit, how, sizeof(how));
		rc = error(ERR_CHILD, "'%s' %s%s%s", argv[0], how,
			   r->tail.n ? "; its last lines:" : "", tail);
		free(tail);
	}
	child_free(child);
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
	line_asm_release(&r->partial);
	strvec_clear(&r->tail);
	if (r->logfd >= 0)
		close(r->logfd);
	r->logfd = -1;
}
