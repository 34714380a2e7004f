/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Spawn: fork + execvpe, with everything the child needs prepared before
 * the fork (environment array, /dev/null, pipes), so that the child only
 * makes system calls between fork and exec.
 *
 * Exec failures travel back over an O_CLOEXEC pipe: the child writes errno
 * and which step failed, then _exit()s; a successful exec closes the pipe
 * and the parent reads EOF. So spawn_start() knows, before it returns,
 * whether the program runs, and leaves no child behind when it does not.
 *
 * Running children are kept on one list. The loop's child hook (run after a
 * SIGCHLD) polls each child of that loop with waitpid(WNOHANG): SIGCHLD
 * coalesces, so one signal may stand for several exits. Children must be
 * freed before their loop.
 */
#include "core/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

/* What the child reports when it cannot get to exec. */
enum child_step {
	STEP_PGRP = 1,
	STEP_STDIO,
	STEP_CHDIR,
	STEP_EXEC,
};

struct child_report {
	int step;
	int err;
};

static struct child *running_children;

static void
list_remove(struct child *child)
{
	for (struct child **pp = &running_children; *pp; pp = &(*pp)->next) {
		if (*pp == child) {
			*pp = child->next;
			child->next = NULL;
			return;
		}
	}
}

static void
set_exit(struct child *child, int status)
{
	memset(&child->exit, 0, sizeof(child->exit));
	if (WIFEXITED(status)) {
		child->exit.exited = true;
		child->exit.code = WEXITSTATUS(status);
	} else if (WIFSIGNALED(status)) {
		child->exit.signaled = true;
		child->exit.signo = WTERMSIG(status);
		child->exit.core_dumped = WCOREDUMP(status) != 0;
	}
}

/* The loop's child hook: reap every child of this loop that has exited. */
static void
reap_children(struct loop *loop, void *data)
{
	struct child *c;

	(void)data;
again:
	for (c = running_children; c; c = c->next) {
		int status = 0;
		pid_t r;

		if (c->loop != loop)
			continue;
		r = waitpid(c->pid, &status, WNOHANG);
		if (r == 0 || (r < 0 && errno == EINTR))
			continue;
		if (r == c->pid)
			set_exit(c, status);
		else
			memset(&c->exit, 0, sizeof(c->exit)); /* reaped elsewhere */
		list_remove(c);
		c->running = false;
		/* The callback may free c or start children: start over after it. */
		if (c->on_exit)
			c->on_exit(c, c->data);
		goto again;
	}
}

static void
close_fd(int *fd)
{
	if (*fd >= 0) {
		close(*fd);
		*fd = -1;
	}
}

/* Apply "NAME=value" / "NAME" entries to env. */
static enum status
edit_env(struct strvec *env, const char *const *changes)
{
	for (; changes && *changes; changes++) {
		const char *e = *changes;
		size_t len = strcspn(e, "=");
		size_t j = 0;

		if (!len)
			return error(
				ERR_INVALID,
				"bad environment entry '%s'; write NAME=value, or NAME to unset",
				e);
		for (size_t i = 0; i < env->n; i++) {
			if (!strncmp(env->v[i], e, len) && env->v[i][len] == '=')
				free(env->v[i]);
			else
				env->v[j++] = env->v[i];
		}
		env->n = j;
		if (env->alloc)
			env->v[j] = NULL;
		if (e[len] == '=')
			strvec_push(env, e);
	}
	return OK;
}

/* Where the child's stream fd comes from: -1 to leave it as it is. */
static int
stream_source(enum spawn_stream s, int given, int devnull, int pipe_end)
{
	switch (s) {
	case SPAWN_NULL:
		return devnull;
	case SPAWN_PIPE:
		return pipe_end;
	case SPAWN_FD:
		return given;
	case SPAWN_INHERIT:
	case SPAWN_STDOUT:
		break;
	}
	return -1;
}

static _Noreturn void
child_fail(int report_fd, int step)
{
	struct child_report rep = { step, errno };
	ssize_t n;

	n = write(report_fd, &rep, sizeof(rep));
	(void)n;
	_exit(127);
}

/* In the child, between fork and exec: system calls only. */
static _Noreturn void
child_exec(const struct spawn_opts *o, int src[3], bool err_to_out, char *const *envp,
	   int report_fd, pid_t parent)
{
	struct sigaction dfl;
	sigset_t none;

	if (report_fd < 3) {
		report_fd = fcntl(report_fd, F_DUPFD_CLOEXEC, 3);
		if (report_fd < 0)
			_exit(127);
	}
	if (o->new_pgrp && setpgid(0, 0) < 0)
		child_fail(report_fd, STEP_PGRP);
	if (o->die_with_fswb) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent) /* fswb died before prctl */
			_exit(127);
	}

	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	for (int s = 1; s < NSIG; s++)
		if (s != SIGKILL && s != SIGSTOP)
			sigaction(s, &dfl, NULL); /* fails harmlessly for reserved ones */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);

	/* Move sources out of 0..2 first, so no dup2 clobbers a later source. */
	for (int i = 0; i < 3; i++) {
		if (src[i] >= 0 && src[i] < 3 && src[i] != i) {
			src[i] = fcntl(src[i], F_DUPFD_CLOEXEC, 3);
			if (src[i] < 0)
				child_fail(report_fd, STEP_STDIO);
		}
	}
	for (int i = 0; i < 3; i++) {
		if (src[i] < 0)
			continue;
		if (src[i] == i) {
			if (fcntl(i, F_SETFD, 0) < 0)
				child_fail(report_fd, STEP_STDIO);
		} else if (dup2(src[i], i) < 0) {
			child_fail(report_fd, STEP_STDIO);
		}
	}
	if (err_to_out && dup2(1, 2) < 0)
		child_fail(report_fd, STEP_STDIO);

	if (o->cwd && chdir(o->cwd) < 0)
		child_fail(report_fd, STEP_CHDIR);

	execvpe(o->argv[0], (char *const *)o->argv, envp);
	child_fail(report_fd, STEP_EXEC);
}

static enum status
check_stream(const char *name, const char *which, enum spawn_stream s, int fd, bool is_err)
{
	if (s == SPAWN_STDOUT && !is_err)
		return error(ERR_INVALID, "cannot start '%s': SPAWN_STDOUT is only for stderr",
			     name);
	if (s == SPAWN_FD && fd < 0)
		return error(ERR_INVALID, "cannot start '%s': no fd given for its %s", name, which);
	if ((unsigned)s > SPAWN_STDOUT)
		return error(ERR_INVALID, "cannot start '%s': bad %s stream %d", name, which,
			     (int)s);
	return OK;
}

static enum status
make_pipe(int p[2], bool child_reads)
{
	int parent_end;

	if (pipe2(p, O_CLOEXEC) < 0)
		return ERR_SPAWN;
	parent_end = child_reads ? p[1] : p[0];
	if (fcntl(parent_end, F_SETFL, fcntl(parent_end, F_GETFL) | O_NONBLOCK) < 0)
		return ERR_SPAWN;
	return OK;
}

enum status
spawn_start(struct loop *loop, const struct spawn_opts *opts, struct child **out)
{
	int p_in[2] = { -1, -1 }, p_out[2] = { -1, -1 }, p_err[2] = { -1, -1 };
	int report[2] = { -1, -1 };
	int devnull = -1;
	struct strvec env = STRVEC_INIT;
	char *const *envp = environ;
	struct child_report rep;
	struct child *child;
	const char *name;
	int src[3];
	enum status rc = OK;
	ssize_t n = 0;
	pid_t pid, parent;

	*out = NULL;
	if (!opts->argv || !opts->argv[0] || !opts->argv[0][0])
		return error(ERR_INVALID, "cannot start a program: empty command line");
	name = opts->argv[0];
	if ((rc = check_stream(name, "stdin", opts->in, opts->in_fd, false)) != OK ||
	    (rc = check_stream(name, "stdout", opts->out, opts->out_fd, false)) != OK ||
	    (rc = check_stream(name, "stderr", opts->err, opts->err_fd, true)) != OK)
		return rc;

	if (opts->clear_env || opts->env) {
		if (!opts->clear_env)
			strvec_pushv(&env, (const char *const *)environ);
		rc = edit_env(&env, opts->env);
		if (rc != OK)
			goto out;
		envp = env.v;
	}

	if (opts->in == SPAWN_NULL || opts->out == SPAWN_NULL || opts->err == SPAWN_NULL) {
		devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (devnull < 0) {
			rc = error(ERR_SPAWN, "cannot start '%s': cannot open '/dev/null': %s",
				   name, strerror(errno));
			goto out;
		}
	}
	if ((opts->in == SPAWN_PIPE && make_pipe(p_in, true) != OK) ||
	    (opts->out == SPAWN_PIPE && make_pipe(p_out, false) != OK) ||
	    (opts->err == SPAWN_PIPE && make_pipe(p_err, false) != OK) ||
	    pipe2(report, O_CLOEXEC) < 0) {
		rc = error(ERR_SPAWN, "cannot start '%s': cannot make a pipe: %s", name,
			   strerror(errno));
		goto out;
	}
	src[0] = stream_source(opts->in, opts->in_fd, devnull, p_in[0]);
	src[1] = stream_source(opts->out, opts->out_fd, devnull, p_out[1]);
	src[2] = stream_source(opts->err, opts->err_fd, devnull, p_err[1]);

	parent = getpid();
	pid = fork();
	if (pid < 0) {
		rc = error(ERR_SPAWN, "cannot start '%s': fork: %s", name, strerror(errno));
		goto out;
	}
	if (pid == 0)
		child_exec(opts, src, opts->err == SPAWN_STDOUT, envp, report[1], parent);

	if (opts->new_pgrp)
		setpgid(pid, pid); /* the child does it too; whoever is first wins */
	close_fd(&report[1]);
	close_fd(&p_in[0]);
	close_fd(&p_out[1]);
	close_fd(&p_err[1]);
	do
		n = read(report[0], &rep, sizeof(rep));
	while (n < 0 && errno == EINTR);

	if (n == (ssize_t)sizeof(rep)) {
		int status;

		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		switch (rep.step) {
		case STEP_EXEC:
			rc = error(ERR_NOTFOUND, "cannot run '%s': %s", name, strerror(rep.err));
			break;
		case STEP_CHDIR:
			rc = error(ERR_SPAWN, "cannot run '%s' in '%s': %s", name, opts->cwd,
				   strerror(rep.err));
			break;
		case STEP_PGRP:
			rc = error(ERR_SPAWN, "cannot start '%s': setpgid: %s", name,
				   strerror(rep.err));
			break;
		default:
			rc = error(ERR_SPAWN, "cannot start '%s': cannot set up its streams: %s",
				   name, strerror(rep.err));
			break;
		}
		goto out;
	}

	child = xcalloc(1, sizeof(*child));
	child->pid = pid;
	child->in = p_in[1];
	child->out = p_out[0];
	child->err = p_err[0];
	p_in[1] = p_out[0] = p_err[0] = -1;
	child->running = true;
	child->name = xstrdup(name);
	child->loop = loop;
	child->pgrp = opts->new_pgrp;
	child->on_exit = opts->on_exit;
	child->data = opts->data;
	child->next = running_children;
	running_children = child;
	loop_set_child_hook(loop, reap_children, NULL);
	*out = child;
out:
	close_fd(&p_in[0]);
	close_fd(&p_in[1]);
	close_fd(&p_out[0]);
	close_fd(&p_out[1]);
	close_fd(&p_err[0]);
	close_fd(&p_err[1]);
	close_fd(&report[0]);
	close_fd(&report[1]);
	close_fd(&devnull);
	strvec_clear(&env);
	return rc;
}

void
child_kill(struct child *child, int sig)
{
	if (!child || !child->running)
		return;
	if (child->pgrp && kill(-child->pid, sig) == 0)
		return;
	kill(child->pid, sig);
}

enum status
child_wait(struct child *child, int timeout_ms)
{
	uint64_t deadline = timeout_ms >= 0 ? loop_now_ms() + (uint64_t)timeout_ms : 0;

	while (child->running) {
		int wait_ms = -1;
		enum status rc;

		if (timeout_ms >= 0) {
			uint64_t now = loop_now_ms();

			wait_ms = now >= deadline ? 0 : (int)(deadline - now);
		}
		rc = loop_run_once(child->loop, wait_ms);
		if (rc != OK)
			return rc;
		if (child->running && timeout_ms >= 0 && loop_now_ms() >= deadline)
			return error(ERR_TIMEOUT, "'%s' is still running after %d ms", child->name,
				     timeout_ms);
	}
	return OK;
}

void
child_free(struct child *child)
{
	if (!child)
		return;
	if (child->running) {
		int status;
		pid_t r;

		child_kill(child, SIGKILL);
		do
			r = waitpid(child->pid, &status, 0);
		while (r < 0 && errno == EINTR);
		if (r == child->pid)
			set_exit(child, status);
		list_remove(child);
		child->running = false;
	}
	if (child->loop) {
		if (child->in >= 0)
			loop_del_fd(child->loop, child->in);
		if (child->out >= 0)
			loop_del_fd(child->loop, child->out);
		if (child->err >= 0)
			loop_del_fd(child->loop, child->err);
	}
	close_fd(&child->in);
	close_fd(&child->out);
	close_fd(&child->err);
	free(child->name);
	free(child);
}

const char *
child_exit_str(const struct child_exit *e, char *buf, size_t len)
{
	if (e->exited)
		snprintf(buf, len, "exited with status %d", e->code);
	else if (e->signaled && e->core_dumped)
		snprintf(buf, len, "dumped core (signal %d, %s)", e->signo, strsignal(e->signo));
	else if (e->signaled)
		snprintf(buf, len, "killed by signal %d (%s)", e->signo, strsignal(e->signo));
	else
		snprintf(buf, len, "ended in an unknown way");
	return buf;
}

enum status
child_check(const struct child *child)
{
	char how[128];

	if (child->running)
		return error(ERR_CHILD, "'%s' is still running", child->name);
	if (child->exit.exited && child->exit.code == 0)
		return OK;
	return error(ERR_CHILD, "'%s' %s", child->name,
		     child_exit_str(&child->exit, how, sizeof(how)));
}
