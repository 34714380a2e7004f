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
 * A function as a child (spawn_opts.fn) forks the same way and, once its
 * streams are set up, closes the report pipe and calls the function: it runs
 * in fswb's single thread's copy, so it may do more than system calls.
 *
 * Running children are kept on one list. The loop's child hook (run after a
 * SIGCHLD) polls each child of that loop with waitpid(WNOHANG): SIGCHLD
 * coalesces, so one signal may stand for several exits. Children must be
 * freed before their loop. child_wait() and spawn_run() reap their child
 * themselves, without the loop.
 */
#include "core/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
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

static bool reap_one(struct child *child);

/* The loop's child hook: reap every child of this loop that has exited. */
static void
reap_children(struct loop *loop, void *data)
{
	(void)data;
again:
	for (struct child *c = running_children; c; c = c->next)
		if (c->loop == loop && reap_one(c))
			goto again; /* its callback may have freed it or started children */
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

	if (o->fn) {
		close(report_fd);
		running_children = NULL; /* fswb's, not this process's */
		loop_forget();
		int code = o->fn(o->fn_arg);

		fflush(NULL);
		_exit(code & 0xff);
	}
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
	if (opts->fn) {
		name = opts->fn_name ? opts->fn_name : "fswb";
	} else {
		if (!opts->argv || !opts->argv[0] || !opts->argv[0][0])
			return error(ERR_INVALID, "cannot start a program: empty command line");
		name = opts->argv[0];
	}
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
	if (opts->fn)
		fflush(NULL); /* the child would write what is buffered again */
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

/* Reap child if it has exited; true when it is no longer running. */
static bool
reap_one(struct child *child)
{
	int status;
	pid_t r;

	if (!child->running)
		return true;
	r = waitpid(child->pid, &status, WNOHANG);
	if (r == 0 || (r < 0 && errno == EINTR))
		return false;
	if (r == child->pid)
		set_exit(child, status);
	else
		memset(&child->exit, 0, sizeof(child->exit)); /* reaped elsewhere */
	list_remove(child);
	child->running = false;
	if (child->on_exit)
		child->on_exit(child, child->data);
	return true;
}

static void
sleep_ms(unsigned ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* Wait for the exit until deadline (loop_now_ms(); 0: forever). */
static bool
reap_until(struct child *child, uint64_t deadline)
{
	unsigned nap = 1;

	while (!reap_one(child)) {
		if (deadline && loop_now_ms() >= deadline)
			return false;
		sleep_ms(nap);
		if (nap < 20)
			nap *= 2;
	}
	return true;
}

enum status
child_wait(struct child *child, int timeout_ms)
{
	uint64_t deadline = timeout_ms >= 0 ? loop_now_ms() + (uint64_t)timeout_ms : 0;

	if (timeout_ms == 0)
		deadline = 1; /* already past: just look */
	if (!reap_until(child, deadline))
		return error(ERR_TIMEOUT, "'%s' is still running after %d ms", child->name,
			     timeout_ms);
	return OK;
}

/* The time is up or the word came: SIGTERM, then SIGKILL after 100 ms. */
static void
stop_child(struct child *child)
{
	child_kill(child, SIGTERM);
	if (!reap_until(child, loop_now_ms() + 100)) {
		child_kill(child, SIGKILL);
		reap_until(child, 0);
	}
}

enum status
spawn_run(struct loop *loop, const char *const *argv, const char *const *env, bool err_to_out,
	  size_t max_out, struct strbuf *out, struct child_exit *exit)
{
	struct spawn_run r = { .argv = argv,
			       .env = env,
			       .err_to_out = err_to_out,
			       .max_out = max_out,
			       .timeout_ms = -1 };

	return spawn_run_opts(loop, &r, out, exit, NULL);
}

enum status
spawn_run_opts(struct loop *loop, const struct spawn_run *r, struct strbuf *out,
	       struct child_exit *exit, bool *timed_out)
{
	struct spawn_opts o = SPAWN_OPTS_INIT;
	uint64_t deadline = r->timeout_ms >= 0 ? loop_now_ms() + (uint64_t)r->timeout_ms : 0;
	struct strbuf discard = STRBUF_INIT, *buf = out ? out : &discard;
	size_t start = buf->len, kept = 0, max = out || r->until ? r->max_out : 0;
	bool over = false, late = false, word = false;
	struct child *c;
	int read_errno = 0;
	enum status rc;

	if (timed_out)
		*timed_out = false;
	o.argv = r->argv;
	o.env = r->env;
	o.out = SPAWN_PIPE;
	o.err = r->err_to_out ? SPAWN_STDOUT : SPAWN_NULL;
	o.new_pgrp = r->new_pgrp;
	rc = spawn_start(loop, &o, &c);
	if (rc != OK)
		return rc;
	/*
	 * Until EOF, or the child's exit and then what is left in the pipe: a
	 * grandchild that keeps the pipe open is not waited for.
	 */
	for (unsigned nap = 1;; nap = nap < 50 ? 2 * nap : nap) {
		struct pollfd p = { .fd = c->out, .events = POLLIN };
		bool gone = !c->running;
		char chunk[4096];
		int wait_ms = gone ? 0 : (int)nap;
		ssize_t n;

		if (deadline) {
			uint64_t now = loop_now_ms();

			if (now >= deadline) {
				late = true;
				break;
			}
			if (deadline - now < (uint64_t)wait_ms)
				wait_ms = (int)(deadline - now);
		}
		if (poll(&p, 1, wait_ms) < 0) {
			if (errno == EINTR)
				continue;
			read_errno = errno;
			break;
		}
		if (!p.revents) {
			if (gone)
				break;
			reap_one(c);
			continue;
		}
		nap = 1;
		n = read(c->out, chunk, sizeof(chunk));
		if (n < 0 && errno == EAGAIN && gone)
			break;
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0) {
			read_errno = errno;
			break;
		}
		if (n == 0)
			break;
		if ((size_t)n > max - kept) {
			over = true;
			n = (ssize_t)(max - kept);
		}
		strbuf_add(buf, chunk, (size_t)n);
		kept += (size_t)n;
		if (r->until && strstr(buf->buf + start, r->until)) {
			word = true;
			break;
		}
	}
	if (late || word || read_errno)
		stop_child(c);
	else if (!reap_until(c, deadline)) {
		late = true; /* it closed its output and went on */
		stop_child(c);
	}
	if (exit)
		*exit = c->exit;
	if (timed_out)
		*timed_out = late;
	if (read_errno)
		rc = error(ERR_IO, "cannot read the output of '%s': %s", r->argv[0],
			   strerror(read_errno));
	else if (over && out)
		rc = error(ERR_LIMIT, "the output of '%s' is larger than %zu bytes", r->argv[0],
			   r->max_out);
	child_free(c);
	strbuf_release(&discard);
	return rc;
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
