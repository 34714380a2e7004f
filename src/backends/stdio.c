/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The stdio backend: fswb's guest agent (fswb-agent --stdio) run on this
 * host over pipes, in the session's scratch directory. No kernel, no
 * appliance (caps say so): the agent runs check in the fstests tree given
 * as -o fstests=DIR, on disks that are plain files in the scratch directory
 * (or the existing files a spec names), with the mount points in it too.
 *
 * It is the engine's test double (tests/unit/test_engine.c) and the
 * skeleton of the backends that reach an agent over a byte stream (ssh,
 * adb). It is not offered to users: backend_names() leaves it out, since
 * check on this host would need root and real block devices, and run its
 * tests against this machine.
 *
 * Streams: control is the agent's stdin and stdout; console is its stderr
 * (there is no kernel log of a machine of its own). The agent starts check
 * in a session of its own; release stops that session too (the agent writes
 * its process group into WORKDIR/agent/bg.pgid), so nothing is left running
 * even when the agent was killed.
 *
 * check's results go to a directory of the session's own in fswb's cache
 * (RESULT_BASE): sessions at once share the fstests tree.
 *
 * Options: fstests=DIR (required), boot=SECONDS (default 30) and
 * silence=SECONDS (default 60), the watchdog's limits.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backends/backend.h"
#include "core/paths.h"
#include "core/spawn.h"

#define OUTQ_MAX      (64u << 20)
#define KILL_GRACE_MS 3000
#define READ_CHUNK    65536
#define BOOT_DEFAULT  30
#define QUIET_DEFAULT 60

struct stdio_session {
	struct loop *loop;
	struct session_callbacks cb;
	void *data;
	char *workdir, *agent_work;
	struct child *child;
	int in; /* the agent's stdin: a socket, so that writing after its end is EPIPE, not SIGPIPE */
	struct strbuf outq;
	struct strvec disks;
	struct session_layout layout;
	char *fstests, *job_dir, *mnt_dir, *results_dir;
	unsigned boot, silence;
	bool cancelled, notified, out_open, err_open;
	uint64_t kill_timer;
	char *why_exit;
};

static enum status
stdio_probe(const struct plan *plan, struct backend_probe *out)
{
	out->usable = plan && plan_backend_opt(plan, "fstests");
	if (out->usable) {
		out->summary = xstrdup("ready: the agent on this host");
	} else {
		out->summary = xstrdup("not usable: no fstests tree");
		out->fix = xstrdup("give -o fstests=DIR");
	}
	return OK;
}

/*
 * check's RESULT_BASE for one session: sessions share the fstests tree, so
 * each gets a directory of its own in fswb's cache (not in the session's
 * scratch directory, which lives with the run's files).
 */
static enum status
results_dir_make(struct lease *lease, char **out)
{
	char *base = NULL, *dir;
	enum status rc = fswb_dir_make(DIR_CACHE, "stdio", &base);

	if (rc != OK)
		return rc;
	dir = path_join(base, "results.XXXXXX");
	free(base);
	if (!mkdtemp(dir)) {
		rc = error(ERR_IO, "cannot make a results directory in fswb's cache: %s",
			   strerror(errno));
		free(dir);
		return rc;
	}
	rc = lease_add_path(lease, dir);
	if (rc != OK) {
		rmdir(dir);
		free(dir);
		return rc;
	}
	*out = dir;
	return OK;
}

/* The agent's process group for check (bg.pgid), stopped with everything in it. */
static void
kill_check(struct stdio_session *s)
{
	char *path = path_join(s->agent_work, "bg.pgid"), *text = NULL;
	size_t len;
	long pgid;

	if (!path_exists(path)) {
		free(path);
		return;
	}
	if (read_file(path, 64, &text, &len) == OK && sscanf(text, "%ld", &pgid) == 1 && pgid > 1 &&
	    (pid_t)pgid != getpgrp())
		kill(-(pid_t)pgid, SIGKILL);
	error_clear();
	free(text);
	free(path);
}

static void
notify_exit(struct stdio_session *s)
{
	enum status code = OK;
	char buf[128];

	if (s->notified || s->out_open || s->err_open || !s->child || s->child->running)
		return;
	s->notified = true;
	kill_check(s);
	if (s->cancelled) {
		code = ERR_INTERRUPTED;
		s->why_exit = xstrdup("the agent was stopped");
	} else if (!s->child->exit.exited || s->child->exit.code) {
		code = ERR_CHILD;
		s->why_exit = xasprintf("the agent %s",
					child_exit_str(&s->child->exit, buf, sizeof(buf)));
	}
	s->cb.on_exit(s->data, code, s->why_exit);
}

/* Read what is there; at the end of the stream stop watching it. */
static bool
drain(struct stdio_session *s, int fd, void (*fn)(void *, const char *, size_t))
{
	char buf[READ_CHUNK];
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0)
		fn(s->data, buf, (size_t)n);
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		loop_del_fd(s->loop, fd);
		return false;
	}
	return true;
}

static void
on_out(struct loop *loop, int fd, short revents, void *data)
{
	struct stdio_session *s = data;

	s->out_open = drain(s, fd, s->cb.on_control);
	notify_exit(s);
}

static void
on_err(struct loop *loop, int fd, short revents, void *data)
{
	struct stdio_session *s = data;

	s->err_open = drain(s, fd, s->cb.on_console);
	notify_exit(s);
}

static void
flush_outq(struct stdio_session *s)
{
	while (s->outq.len) {
		ssize_t n = send(s->in, s->outq.buf, s->outq.len, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n <= 0)
			break;
		strbuf_drop_front(&s->outq, (size_t)n);
	}
	loop_mod_fd(s->loop, s->in, s->outq.len ? POLLOUT : 0);
}

static void
on_in(struct loop *loop, int fd, short revents, void *data)
{
	flush_outq(data);
}

static void
on_agent_exit(struct child *c, void *data)
{
	struct stdio_session *s = data;

	if (s->kill_timer) {
		loop_del_timer(s->loop, s->kill_timer);
		s->kill_timer = 0;
	}
	loop_del_fd(s->loop, s->in);
	kill_check(s); /* it holds the agent's stdout: its end is the stream's end */
	notify_exit(s);
}

static void
stdio_release(void *priv)
{
	struct stdio_session *s = priv;

	if (s->kill_timer)
		loop_del_timer(s->loop, s->kill_timer);
	if (s->in >= 0) {
		loop_del_fd(s->loop, s->in);
		close(s->in);
	}
	if (s->child) {
		loop_del_fd(s->loop, s->child->out);
		loop_del_fd(s->loop, s->child->err);
		s->child->on_exit = NULL;
		child_free(s->child); /* kills and reaps the agent when still running */
	}
	if (s->agent_work)
		kill_check(s);
	/* a start that failed keeps its message */
	if (s->workdir && remove_tree(s->workdir) != OK)
		error_clear();
	if (s->results_dir && remove_tree(s->results_dir) != OK)
		error_clear();
	free(s->workdir);
	free(s->agent_work);
	free(s->fstests);
	free(s->job_dir);
	free(s->mnt_dir);
	free(s->results_dir);
	free(s->why_exit);
	strvec_clear(&s->disks);
	strbuf_release(&s->outq);
	free(s);
}

static unsigned
seconds_opt(const struct session_spec *spec, const char *key, unsigned dflt)
{
	const char *v = session_spec_opt(spec, key);

	return v ? (unsigned)strtoul(v, NULL, 10) : dflt; /* checked: backend_option_seconds */
}

static enum status
stdio_start(struct loop *loop, void *run, const struct session_spec *spec,
	    const struct session_callbacks *cb, void *data, struct lease *lease, void **priv)
{
	struct stdio_session *s = xcalloc(1, sizeof(*s));
	struct spawn_opts o = SPAWN_OPTS_INIT;
	int sv[2] = { -1, -1 };
	const char *fstests = session_spec_opt(spec, "fstests");
	enum status rc;

	s->loop = loop;
	s->cb = *cb;
	s->data = data;
	s->in = -1;
	strbuf_init(&s->outq);
	strvec_init(&s->disks);
	s->boot = seconds_opt(spec, "boot", BOOT_DEFAULT);
	s->silence = seconds_opt(spec, "silence", QUIET_DEFAULT);
	if (!fstests) {
		rc = error(ERR_INVALID, "the stdio backend needs -o fstests=DIR");
		goto fail;
	}
	if (!spec->agent)
		BUG("a stdio session without the agent");
	rc = lease_add_path(lease, spec->workdir);
	if (rc == OK)
		rc = mkdir_p(spec->workdir, 0700);
	if (rc != OK)
		goto fail;
	s->workdir = xstrdup(spec->workdir);
	s->agent_work = path_join(s->workdir, "agent");
	s->fstests = xstrdup(fstests);
	s->job_dir = path_join(s->agent_work, "job");
	s->mnt_dir = path_join(s->workdir, "mnt");
	rc = results_dir_make(lease, &s->results_dir);
	if (rc != OK)
		goto fail;
	s->layout = (struct session_layout){ s->fstests, s->job_dir, s->mnt_dir, s->results_dir };
	for (size_t i = 0; rc == OK && i < spec->ndisks; i++) {
		if (spec->disks[i].path) {
			strvec_push(&s->disks, spec->disks[i].path);
			continue;
		}
		strvec_pushf(&s->disks, "%s/%s.img", s->workdir, spec->disks[i].role);
		rc = backend_make_disk(s->disks.v[i], spec->disks[i].size);
	}
	if (rc != OK)
		goto fail;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
		rc = error(ERR_IO, "cannot make a socket pair for the agent: %s", strerror(errno));
		goto fail;
	}
	s->in = sv[0];
	o.argv = (const char *const[]){ "sh",	     spec->agent,   "--stdio",
					"--workdir", s->agent_work, NULL };
	o.cwd = s->workdir;
	o.in = SPAWN_FD;
	o.in_fd = sv[1];
	o.out = o.err = SPAWN_PIPE;
	o.new_pgrp = true;
	o.die_with_fswb = true;
	o.on_exit = on_agent_exit;
	o.data = s;
	rc = spawn_start(loop, &o, &s->child);
	close(sv[1]);
	sv[1] = -1;
	if (rc == OK)
		rc = lease_add_pid(lease, s->child->pid);
	if (rc != OK)
		goto fail;
	s->out_open = s->err_open = true;
	loop_add_fd(loop, s->child->out, POLLIN, on_out, s);
	loop_add_fd(loop, s->child->err, POLLIN, on_err, s);
	loop_add_fd(loop, s->in, 0, on_in, s);
	*priv = s;
	return OK;
fail:
	if (sv[1] >= 0)
		close(sv[1]);
	stdio_release(s);
	return rc;
}

static enum status
stdio_send(void *priv, const void *buf, size_t len)
{
	struct stdio_session *s = priv;

	if (!s->child->running)
		return error(ERR_IO, "the agent is gone");
	if (s->outq.len + len > OUTQ_MAX)
		return error(ERR_LIMIT, "the agent is not reading its input");
	strbuf_add(&s->outq, buf, len);
	flush_outq(s);
	return OK;
}

static void
kill_hard(struct loop *loop, void *data)
{
	struct stdio_session *s = data;

	s->kill_timer = 0;
	if (s->child->running)
		child_kill(s->child, SIGKILL);
	kill_check(s);
}

/* SIGTERM: the agent stops check and cleans up; SIGKILL when it takes too long. */
static void
stdio_cancel(void *priv)
{
	struct stdio_session *s = priv;

	if (!s->child->running)
		return;
	s->cancelled = true;
	child_kill(s->child, SIGTERM);
	if (!s->kill_timer)
		s->kill_timer = loop_add_timer(s->loop, KILL_GRACE_MS, false, kill_hard, s);
}

static char *
stdio_disk_path(void *priv, size_t index)
{
	struct stdio_session *s = priv;

	if (index >= s->disks.n)
		BUG("disk index %zu out of range", index);
	return xstrdup(s->disks.v[index]);
}

static const struct session_layout *
stdio_layout(void *priv)
{
	return &((struct stdio_session *)priv)->layout;
}

static unsigned
stdio_boot_limit(void *priv)
{
	return ((struct stdio_session *)priv)->boot;
}

static unsigned
stdio_silence_limit(void *priv)
{
	return ((struct stdio_session *)priv)->silence;
}

static enum status
dir_check(const char *value)
{
	char *check = path_join(value, "check");
	bool ok = value[0] == '/' && !access(check, X_OK);

	free(check);
	return ok ? OK
		  : error(ERR_INVALID, "give the absolute path of an fstests tree (with an "
				       "executable check)");
}

static const struct backend_option stdio_options[] = {
	{ "fstests", "DIR", dir_check },		  /* the fstests tree check runs in */
	{ "boot", "SECONDS", backend_option_seconds },	  /* until the agent's HELLO */
	{ "silence", "SECONDS", backend_option_seconds }, /* quiet this long: hung */
	{ NULL, NULL, NULL },
};

const struct backend_ops stdio_backend = {
	.name = "stdio",
	.description = "the guest agent on this host over pipes (fswb's own tests)",
	.caps = BACKEND_PARALLEL,
	.internal = true,
	.options = stdio_options,
	.probe = stdio_probe,
	.start = stdio_start,
	.send = stdio_send,
	.cancel = stdio_cancel,
	.disk_path = stdio_disk_path,
	.layout = stdio_layout,
	.release = stdio_release,
	.boot_limit = stdio_boot_limit,
	.silence_limit = stdio_silence_limit,
};
