/* SPDX-License-Identifier: GPL-2.0-or-later */
/* An agent behind a child process's pipes (agentpipe.h). */
#include "backends/agentpipe.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define OUTQ_MAX      (64u << 20)
#define KILL_GRACE_MS 3000
#define READ_CHUNK    65536
#define ERRLINE_MAX   1024

void
agent_pipe_init(struct agent_pipe *p, struct loop *loop, const struct session_callbacks *cb,
		void *data)
{
	memset(p, 0, sizeof(*p));
	p->loop = loop;
	p->cb = *cb;
	p->data = data;
	p->in = p->con = -1;
	strbuf_init(&p->outq);
	strbuf_init(&p->errline);
}

static void
gone(struct agent_pipe *p)
{
	if (p->on_gone)
		p->on_gone(p->owner);
}

static void
notify_exit(struct agent_pipe *p)
{
	enum status code = OK;
	char buf[128];

	if (p->notified || p->out_open || p->err_open || p->con_open || !p->child ||
	    p->child->running)
		return;
	p->notified = true;
	gone(p);
	if (p->cancelled) {
		code = ERR_INTERRUPTED;
		p->why_exit = xstrdup("the agent was stopped");
	} else if (!p->child->exit.exited || p->child->exit.code) {
		int exit = p->child->exit.exited ? p->child->exit.code : -1;

		code = p->preempted_exit && exit == p->preempted_exit ? ERR_PREEMPTED
		       : p->noroom_exit && exit == p->noroom_exit     ? ERR_NOROOM
								      : ERR_CHILD;
		p->why_exit = p->why_from_err && p->last_err
				      ? xstrdup(p->last_err)
				      : xasprintf("the agent %s", child_exit_str(&p->child->exit,
										 buf, sizeof(buf)));
	}
	p->cb.on_exit(p->data, code, p->why_exit);
}

/* Keep the last complete line of stderr: the child's last word on why it ended. */
static void
keep_err(struct agent_pipe *p, const char *buf, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (buf[i] == '\n') {
			if (p->errline.len) {
				/* it may carry a remote's words (an ssh server's error) */
				free(p->last_err);
				p->last_err = term_clean(p->errline.buf);
				strbuf_reset(&p->errline);
			}
		} else if (buf[i] != '\r' && p->errline.len < ERRLINE_MAX) {
			strbuf_addch(&p->errline, buf[i]);
		}
	}
}

/* Read what is there; at the end of the stream stop watching it. */
static bool
drain(struct agent_pipe *p, int fd, bool is_err, void (*fn)(void *, const char *, size_t))
{
	char buf[READ_CHUNK];
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		if (is_err)
			keep_err(p, buf, (size_t)n);
		if (!is_err || !p->why_from_err)
			fn(p->data, buf, (size_t)n);
	}
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		loop_del_fd(p->loop, fd);
		return false;
	}
	return true;
}

static void
on_out(struct loop *loop, int fd, short revents, void *data)
{
	struct agent_pipe *p = data;

	p->out_open = drain(p, fd, false, p->cb.on_control);
	notify_exit(p);
}

static void
on_err(struct loop *loop, int fd, short revents, void *data)
{
	struct agent_pipe *p = data;

	p->err_open = drain(p, fd, true, p->cb.on_console);
	notify_exit(p);
}

static void
on_con(struct loop *loop, int fd, short revents, void *data)
{
	struct agent_pipe *p = data;

	p->con_open = drain(p, fd, false, p->cb.on_console);
	notify_exit(p);
}

static void
flush_outq(struct agent_pipe *p)
{
	while (p->outq.len) {
		ssize_t n = send(p->in, p->outq.buf, p->outq.len, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n <= 0)
			break;
		strbuf_drop_front(&p->outq, (size_t)n);
	}
	loop_mod_fd(p->loop, p->in, p->outq.len ? POLLOUT : 0);
	if (!p->outq.len && p->close_in)
		shutdown(p->in, SHUT_WR);
}

void
agent_pipe_close_input(struct agent_pipe *p)
{
	p->close_in = true;
	if (p->in >= 0)
		flush_outq(p);
}

static void
on_in(struct loop *loop, int fd, short revents, void *data)
{
	flush_outq(data);
}

static void
on_child_exit(struct child *c, void *data)
{
	struct agent_pipe *p = data;

	if (p->kill_timer) {
		loop_del_timer(p->loop, p->kill_timer);
		p->kill_timer = 0;
	}
	loop_del_fd(p->loop, p->in);
	gone(p); /* what it started may hold its stdout: its end is the stream's end */
	notify_exit(p);
}

enum status
agent_pipe_start(struct agent_pipe *p, struct spawn_opts *o, struct lease *lease, int con_fd)
{
	int sv[2];
	enum status rc;

	p->con = con_fd;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return error(ERR_IO, "cannot make a socket pair for the agent: %s",
			     strerror(errno));
	p->in = sv[0];
	o->in = SPAWN_FD;
	o->in_fd = sv[1];
	o->out = o->err = SPAWN_PIPE;
	o->on_exit = on_child_exit;
	o->data = p;
	rc = spawn_start(p->loop, o, &p->child);
	close(sv[1]);
	if (rc == OK)
		rc = lease_add_pid(lease, p->child->pid);
	if (rc != OK)
		return rc;
	p->out_open = p->err_open = true;
	loop_add_fd(p->loop, p->child->out, POLLIN, on_out, p);
	loop_add_fd(p->loop, p->child->err, POLLIN, on_err, p);
	loop_add_fd(p->loop, p->in, 0, on_in, p);
	if (p->con >= 0) {
		p->con_open = true;
		loop_add_fd(p->loop, p->con, POLLIN, on_con, p);
	}
	return OK;
}

enum status
agent_pipe_send(struct agent_pipe *p, const void *buf, size_t len)
{
	if (!p->child || !p->child->running)
		return error(ERR_IO, "the agent is gone");
	if (p->outq.len + len > OUTQ_MAX)
		return error(ERR_LIMIT, "the agent is not reading its input");
	strbuf_add(&p->outq, buf, len);
	flush_outq(p);
	return OK;
}

static void
kill_hard(struct loop *loop, void *data)
{
	struct agent_pipe *p = data;

	p->kill_timer = 0;
	if (p->child->running)
		child_kill(p->child, SIGKILL);
	gone(p);
}

/* SIGTERM: the child stops what it runs and cleans up; SIGKILL when it takes too long. */
void
agent_pipe_cancel(struct agent_pipe *p)
{
	if (!p->child || !p->child->running)
		return;
	p->cancelled = true;
	child_kill(p->child, SIGTERM);
	if (!p->kill_timer)
		p->kill_timer = loop_add_timer(p->loop, KILL_GRACE_MS, false, kill_hard, p);
}

void
agent_pipe_release(struct agent_pipe *p)
{
	if (p->kill_timer)
		loop_del_timer(p->loop, p->kill_timer);
	p->kill_timer = 0;
	if (p->in >= 0) {
		loop_del_fd(p->loop, p->in);
		close(p->in);
		p->in = -1;
	}
	if (p->con >= 0) {
		loop_del_fd(p->loop, p->con);
		close(p->con);
		p->con = -1;
	}
	if (p->child) {
		loop_del_fd(p->loop, p->child->out);
		loop_del_fd(p->loop, p->child->err);
		p->child->on_exit = NULL;
		child_free(p->child); /* kills and reaps it when still running */
		p->child = NULL;
	}
	free(p->why_exit);
	free(p->last_err);
	p->why_exit = p->last_err = NULL;
	strbuf_release(&p->outq);
	strbuf_release(&p->errline);
}

/* ---- the worker's side ---- */

volatile sig_atomic_t agent_worker_stop;

static void
on_term(int sig)
{
	agent_worker_stop = 1;
}

void
agent_worker_signals(void)
{
	struct sigaction sa = { 0 };

	sa.sa_handler = on_term;
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

bool
agent_write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);
		struct pollfd p = { fd, POLLOUT, 0 };

		if (n < 0 && errno == EINTR)
			continue;
		/* a non-blocking fd (shared with a reader): wait until it takes more */
		if (n < 0 && errno == EAGAIN && poll(&p, 1, -1) >= 0)
			continue;
		if (n <= 0)
			return false;
		buf += n;
		len -= (size_t)n;
	}
	return true;
}

void
agent_worker_say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
}

int agent_worker_note_fd = -1;

void
agent_worker_note(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	if (n < 0 || agent_worker_note_fd < 0)
		return;
	if ((size_t)n > sizeof(buf) - 2)
		n = (int)sizeof(buf) - 2;
	buf[n++] = '\n';
	agent_write_all(agent_worker_note_fd, "fswb: ", 6);
	agent_write_all(agent_worker_note_fd, buf, (size_t)n);
}

struct agent_reach {
	bool reached[PLAN_SHARDS_MAX];
};

enum status
agent_reach_prepare(struct loop *loop, const struct plan *plan, struct lease *lease, void **priv)
{
	*priv = xcalloc(1, sizeof(struct agent_reach));
	return OK;
}

void
agent_reach_discard(void *priv)
{
	free(priv);
}

static void
kept_control(void *data, const char *buf, size_t len)
{
	struct agent_kept *k = data;

	if (k->reached)
		*k->reached = true;
	k->cb.on_control(k->data, buf, len);
}

static void
kept_console(void *data, const char *buf, size_t len)
{
	struct agent_kept *k = data;

	k->cb.on_console(k->data, buf, len);
}

static void
kept_exit(void *data, enum status code, const char *why)
{
	struct agent_kept *k = data;

	k->cb.on_exit(k->data, code, why);
}

void
agent_kept_init(struct agent_kept *k, struct loop *loop, void *run, unsigned slot,
		const struct session_callbacks *cb, void *data)
{
	static const struct session_callbacks mine = { kept_control, kept_console, NULL,
						       kept_exit };
	struct agent_reach *r = run;

	k->cb = *cb;
	k->data = data;
	k->reached = r && slot < PLAN_SHARDS_MAX ? &r->reached[slot] : NULL;
	k->reconnect = k->reached && *k->reached;
	k->notes[0] = k->notes[1] = -1;
	agent_pipe_init(&k->pipe, loop, &mine, k);
	k->pipe.why_from_err = true;
}

enum status
agent_kept_start(struct agent_kept *k, int (*fn)(void *), void *arg, const char *name,
		 struct lease *lease)
{
	struct spawn_opts o = SPAWN_OPTS_INIT;
	enum status rc;

	if (pipe2(k->notes, O_CLOEXEC))
		return error(ERR_IO, "cannot make a pipe: %s", strerror(errno));
	fcntl(k->notes[0], F_SETFL, O_NONBLOCK);
	o.fn = fn;
	o.fn_arg = arg;
	o.fn_name = name;
	o.new_pgrp = true;
	o.die_with_fswb = true;
	rc = agent_pipe_start(&k->pipe, &o, lease, k->notes[0]);
	k->notes[0] = -1; /* the pipe's now */
	close(k->notes[1]);
	k->notes[1] = -1;
	return rc;
}

int
agent_kept_worker(struct agent_kept *k)
{
	agent_worker_signals();
	close(k->notes[0]);
	agent_worker_note_fd = k->notes[1];
	return k->notes[1];
}

void
agent_kept_release(struct agent_kept *k)
{
	agent_pipe_release(&k->pipe);
}

enum status
agent_kept_send(void *priv, const void *buf, size_t len)
{
	return agent_pipe_send(&((struct agent_kept *)priv)->pipe, buf, len);
}

void
agent_kept_cancel(void *priv)
{
	agent_pipe_cancel(&((struct agent_kept *)priv)->pipe);
}
