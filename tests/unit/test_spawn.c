/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "testlib.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/loop.h"
#include "core/paths.h"
#include "core/spawn.h"
#include "core/util.h"

/* Collects one pipe of a child until EOF. */
struct sink {
	struct strbuf buf;
	int *fd; /* &child->out or &child->err */
	bool eof;
};

static void
on_sink(struct loop *loop, int fd, short revents, void *data)
{
	struct sink *s = data;
	char buf[4096];
	ssize_t n = read(fd, buf, sizeof(buf));

	if (n > 0) {
		strbuf_add(&s->buf, buf, (size_t)n);
		return;
	}
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	loop_del_fd(loop, fd);
	close(fd);
	*s->fd = -1;
	s->eof = true;
}

static void
sink_watch(struct loop *loop, struct sink *s, int *fd)
{
	strbuf_init(&s->buf);
	s->fd = fd;
	s->eof = false;
	assert_int_equal(loop_add_fd(loop, *fd, POLLIN, on_sink, s), OK);
}

/* Wait until every given sink saw EOF and the child exited. */
static void
drain_and_wait(struct loop *loop, struct child *child, struct sink *a, struct sink *b)
{
	uint64_t end = loop_now_ms() + 5000;

	while ((a && !a->eof) || (b && !b->eof) || child->running) {
		assert_true(loop_now_ms() < end);
		assert_int_equal(loop_run_once(loop, 100), OK);
	}
}

/* Run argv with o's settings, stdout collected; returns the output (free()). */
static char *
run_opts(struct loop *loop, struct spawn_opts *o, struct child_exit *ex)
{
	struct child *child;
	struct sink out;

	o->out = SPAWN_PIPE;
	assert_int_equal(spawn_start(loop, o, &child), OK);
	sink_watch(loop, &out, &child->out);
	drain_and_wait(loop, child, &out, NULL);
	if (ex)
		*ex = child->exit;
	child_free(child);
	return strbuf_detach(&out.buf);
}

static void
test_exit_codes(void **state)
{
	struct loop *loop = loop_new();
	const char *argv3[] = { "sh", "-c", "exit 3", NULL };
	const char *argv0[] = { "true", NULL };
	struct spawn_opts o = SPAWN_OPTS_INIT;
	struct child_exit ex;
	struct child *child;
	char how[128];

	assert_int_equal(spawn_run(loop, argv3, NULL, false, 1024, NULL, &ex), OK);
	assert_true(ex.exited);
	assert_false(ex.signaled);
	assert_int_equal(ex.code, 3);
	assert_string_equal(child_exit_str(&ex, how, sizeof(how)), "exited with status 3");

	o.argv = argv3;
	assert_int_equal(spawn_start(loop, &o, &child), OK);
	assert_true(child->pid > 0);
	assert_true(child->running);
	assert_string_equal(child->name, "sh");
	assert_int_equal(child->in, -1);
	assert_int_equal(child->out, -1);
	assert_int_equal(child->err, -1);
	assert_int_equal(child_check(child), ERR_CHILD);
	assert_string_equal(error_msg(), "'sh' is still running");
	assert_int_equal(child_wait(child, 5000), OK);
	assert_false(child->running);
	assert_int_equal(child_check(child), ERR_CHILD);
	assert_string_equal(error_msg(), "'sh' exited with status 3");
	/* Harmless after exit. */
	child_kill(child, SIGKILL);
	assert_int_equal(child_wait(child, 0), OK);
	child_free(child);

	o.argv = argv0;
	assert_int_equal(spawn_start(loop, &o, &child), OK);
	assert_int_equal(child_wait(child, -1), OK);
	assert_int_equal(child_check(child), OK);
	child_free(child);
	assert_no_children();
	loop_free(loop);
}

static void
test_killed_by_signal(void **state)
{
	struct loop *loop = loop_new();
	const char *argv9[] = { "sh", "-c", "kill -9 $$", NULL };
	const char *argv11[] = { "sh", "-c", "ulimit -c 0; kill -SEGV $$", NULL };
	struct spawn_opts o = SPAWN_OPTS_INIT;
	struct child_exit ex;
	struct child *child;
	char how[128];

	assert_int_equal(spawn_run(loop, argv9, NULL, false, 1024, NULL, &ex), OK);
	assert_false(ex.exited);
	assert_true(ex.signaled);
	assert_int_equal(ex.signo, SIGKILL);
	assert_false(ex.core_dumped);
	assert_string_equal(child_exit_str(&ex, how, sizeof(how)), "killed by signal 9 (Killed)");

	o.argv = argv11;
	assert_int_equal(spawn_start(loop, &o, &child), OK);
	assert_int_equal(child_wait(child, 5000), OK);
	assert_true(child->exit.signaled);
	assert_int_equal(child->exit.signo, SIGSEGV);
	assert_int_equal(child_check(child), ERR_CHILD);
	assert_string_equal(error_msg(), "'sh' killed by signal 11 (Segmentation fault)");
	child_free(child);

	/* What a core dump reads like. */
	memset(&ex, 0, sizeof(ex));
	ex.signaled = true;
	ex.signo = SIGSEGV;
	ex.core_dumped = true;
	assert_string_equal(child_exit_str(&ex, how, sizeof(how)),
			    "dumped core (signal 11, Segmentation fault)");
	loop_free(loop);
}

static void
test_stdout_stderr(void **state)
{
	struct loop *loop = loop_new();
	const char *argv[] = { "sh", "-c", "echo out; echo err >&2; echo more", NULL };
	struct spawn_opts o = SPAWN_OPTS_INIT;
	struct child *child;
	struct sink out, err;
	int fl;

	o.argv = argv;
	o.out = SPAWN_PIPE;
	o.err = SPAWN_PIPE;
	assert_int_equal(spawn_start(loop, &o, &child), OK);
	assert_true(child->out >= 0 && child->err >= 0);
	/* fswb's ends: non-blocking, closed on exec. */
	fl = fcntl(child->out, F_GETFL);
	assert_true(fl & O_NONBLOCK);
	assert_true(fcntl(child->out, F_GETFD) & FD_CLOEXEC);
	assert_true(fcntl(child->err, F_GETFL) & O_NONBLOCK);
	assert_true(fcntl(child->err, F_GETFD) & FD_CLOEXEC);
	sink_watch(loop, &out, &child->out);
	sink_watch(loop, &err, &child->err);
	drain_and_wait(loop, child, &out, &err);
	assert_string_equal(out.buf.buf, "out\nmore\n");
	assert_string_equal(err.buf.buf, "err\n");
	assert_int_equal(child_check(child), OK);
	child_free(child);
	strbuf_release(&out.buf);
	strbuf_release(&err.buf);
	loop_free(loop);
}

static void
test_err_to_out(void **state)
{
	struct loop *loop = loop_new();
	const char *argv[] = { "sh", "-c", "printf a; printf b >&2; printf c", NULL };
	struct strbuf out = STRBUF_INIT;
	struct child_exit ex;

	assert_int_equal(spawn_run(loop, argv, NULL, true, 1024, &out, &ex), OK);
	assert_string_equal(out.buf, "abc");
	assert_true(ex.exited && ex.code == 0);
	strbuf_reset(&out);
	assert_int_equal(spawn_run(loop, argv, NULL, false, 1024, &out, NULL), OK);
	assert_string_equal(out.buf, "ac");
	strbuf_release(&out);
	loop_free(loop);
}

static void
test_stdin_pipe_and_fd(void **state)
{
	struct loop *loop = loop_new();
	const char *cat[] = { "cat", NULL };
	const char *echo[] = { "sh", "-c", "echo to-file; echo err-file >&2", NULL };
	struct spawn_opts o = SPAWN_OPTS_INIT;
	struct child *child;
	struct sink out;
	char *path, *text;
	int fd;

	o.argv = cat;
	o.in = SPAWN_PIPE;
	o.out = SPAWN_PIPE;
	assert_int_equal(spawn_start(loop, &o, &child), OK);
	assert_true(fcntl(child->in, F_GETFL) & O_NONBLOCK);
	assert_int_equal(write(child->in, "hello\n", 6), 6);
	close(child->in);
	child->in = -1;
	sink_watch(loop, &out, &child->out);
	drain_and_wait(loop, child, &out, NULL);
	assert_string_equal(out.buf.buf, "hello\n");
	child_free(child);
	strbuf_release(&out.buf);

	/* SPAWN_FD: the child gets a dup; ours stays open. Both to one file. */
	path = test_tmp("spawn-fd.txt");
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	memset(&o, 0, sizeof(o));
	o.argv = echo;
	o.out = SPAWN_FD;
	o.out_fd = fd;
	o.err = SPAWN_STDOUT;
	assert_int_equal(spawn_start(loop, &o, &child), OK);
	assert_int_equal(child_wait(child, 5000), OK);
	assert_int_equal(child_check(child), OK);
	child_free(child);
	assert_true(fcntl(fd, F_GETFD) >= 0);
	close(fd);
	text = test_read(path);
	assert_string_equal(text, "to-file\nerr-file\n");
	free(text);
	free(path);
	loop_free(loop);
}

static void
test_fd_zero_one_two(void **state)
{
	struct loop *loop = loop_new();
	const char *argv[] = { "sh", "-c", "echo on-2 >&2", NULL };
	struct spawn_opts o = SPAWN_OPTS_INIT;
	struct child *child;
	struct sink out;

	/* stderr is /dev/null unless asked for. */
	o.argv = argv;
	o.out = SPAWN_PIPE;
	assert_int_equal(spawn_start(loop, &o, &child), OK);
	sink_watch(loop, &out, &child->out);
	drain_and_wait(loop, child, &out, NULL);
	child_free(child);
	assert_string_equal(out.buf.buf, "");
	strbuf_release(&out.buf);

	{
		int p[2], saved = dup(0);
		char buf[64] = "";
		ssize_t n;

		/* Our fd 0 becomes the write end of a pipe; the child's stdout and
		 * stderr both get it while its stdin is /dev/null. */
		assert_int_equal(pipe2(p, O_CLOEXEC), 0);
		assert_int_equal(dup2(p[1], 0), 0);
		close(p[1]);
		memset(&o, 0, sizeof(o));
		o.argv = argv;
		o.in = SPAWN_NULL;
		o.out = SPAWN_FD;
		o.out_fd = 0;
		o.err = SPAWN_FD;
		o.err_fd = 0;
		assert_int_equal(spawn_start(loop, &o, &child), OK);
		dup2(saved, 0);
		close(saved);
		assert_int_equal(child_wait(child, 5000), OK);
		assert_int_equal(child_check(child), OK);
		child_free(child);
		n = read(p[0], buf, sizeof(buf) - 1);
		assert_int_equal(n, 5);
		buf[n] = '\0';
		assert_string_equal(buf, "on-2\n");
		close(p[0]);
	}
	loop_free(loop);
}

static void
test_environment(void **state)
{
	struct loop *loop = loop_new();
	const char *show[] = { "sh", "-c",
			       "printf '%s|%s|%s' \"$FSWB_T1\" \"${FSWB_T2-unset}\" "
			       "\"$(env | grep -c '^FSWB_T3=')\"",
			       NULL };
	const char *env_set[] = { "FSWB_T1=hello world", "FSWB_T2", "FSWB_T3=new", NULL };
	const char *env_cmd[] = { "env", NULL };
	const char *only[] = { "ONLY=1", "ALSO=x=y", NULL };
	const char *bad[] = { "=oops", NULL };
	struct spawn_opts o = SPAWN_OPTS_INIT;
	struct strbuf out = STRBUF_INIT;
	struct child *child;
	char *text;

	setenv("FSWB_T2", "inherited", 1);
	setenv("FSWB_T3", "old", 1);
	assert_int_equal(spawn_run(loop, show, NULL, false, 4096, &out, NULL), OK);
	assert_string_equal(out.buf, "|inherited|1");
	strbuf_reset(&out);
	/* Set, unset, and replace (one FSWB_T3, not two). */
	assert_int_equal(spawn_run(loop, show, env_set, false, 4096, &out, NULL), OK);
	assert_string_equal(out.buf, "hello world|unset|1");
	strbuf_reset(&out);
	/* fswb's own environment is untouched. */
	assert_string_equal(getenv("FSWB_T2"), "inherited");
	assert_string_equal(getenv("FSWB_T3"), "old");

	/* A cleared environment has only what was given (PATH is still fswb's for lookup). */
	o.argv = env_cmd;
	o.clear_env = true;
	o.env = only;
	text = run_opts(loop, &o, NULL);
	assert_string_equal(text, "ONLY=1\nALSO=x=y\n");
	free(text);
	o.env = NULL;
	text = run_opts(loop, &o, NULL);
	assert_string_equal(text, "");
	free(text);

	o.env = bad;
	o.out = SPAWN_NULL;
	assert_int_equal(spawn_start(loop, &o, &child), ERR_INVALID);
	assert_null(child);
	assert_non_null(strstr(error_msg(), "'=oops'"));
	unsetenv("FSWB_T2");
	unsetenv("FSWB_T3");
	strbuf_release(&out);
	assert_no_children();
	loop_free(loop);
}

static void
test_cwd(void **state)
{
	struct loop *loop = loop_new();
	const char *argv[] = { "pwd", NULL };
	struct spawn_opts o = SPAWN_OPTS_INIT;
	struct child *child;
	char real[PATH_MAX], *text, *dir, *want;

	dir = test_tmp("cwd dir");
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_non_null(realpath(dir, real));
	o.argv = argv;
	o.cwd = dir;
	text = run_opts(loop, &o, NULL);
	want = xasprintf("%s\n", real);
	assert_string_equal(text, want);
	free(text);
	free(want);

	/* A missing directory: ERR_SPAWN naming it, and no child left. */
	free(dir);
	dir = test_tmp("no-such-dir");
	o.cwd = dir;
	o.out = SPAWN_NULL;
	assert_int_equal(spawn_start(loop, &o, &child), ERR_SPAWN);
	assert_null(child);
	assert_non_null(strstr(error_msg(), dir));
	assert_non_null(strstr(error_msg(), "'pwd'"));
	assert_non_null(strstr(error_msg(), "No such file or directory"));
	assert_no_children();
	free(dir);
	loop_free(loop);
}

static void
test_not_found(void **state)
{
	struct loop *loop = loop_new();
	const char *argv[] = { "qemu-system-fswb-none", "-m", "1G", NULL };
	const char *abs[] = { "/nonexistent/bin/tool", NULL };
	const char *noexec[] = { NULL, NULL };
	const char *empty[] = { NULL };
	struct spawn_opts o = SPAWN_OPTS_INIT;
	struct child_exit ex;
	struct child *child = (struct child *)1;
	char *path;

	o.argv = argv;
	assert_int_equal(spawn_start(loop, &o, &child), ERR_NOTFOUND);
	assert_null(child);
	assert_string_equal(error_msg(),
			    "cannot run 'qemu-system-fswb-none': No such file or directory");
	assert_no_children();

	assert_int_equal(spawn_run(loop, abs, NULL, false, 10, NULL, &ex), ERR_NOTFOUND);
	assert_string_equal(error_msg(),
			    "cannot run '/nonexistent/bin/tool': No such file or directory");
	assert_no_children();

	/* A file that is not executable. */
	path = test_tmp("not-a-program");
	test_write(path, "#!/bin/sh\necho hi\n");
	chmod(path, 0644);
	noexec[0] = path;
	o.argv = noexec;
	assert_int_equal(spawn_start(loop, &o, &child), ERR_NOTFOUND);
	assert_non_null(strstr(error_msg(), "Permission denied"));
	assert_no_children();
	/* Made executable, it runs. */
	chmod(path, 0755);
	assert_int_equal(spawn_start(loop, &o, &child), OK);
	assert_int_equal(child_wait(child, 5000), OK);
	assert_int_equal(child_check(child), OK);
	child_free(child);
	free(path);

	o.argv = empty;
	assert_int_equal(spawn_start(loop, &o, &child), ERR_INVALID);
	o.argv = argv;
	o.out = SPAWN_STDOUT;
	assert_int_equal(spawn_start(loop, &o, &child), ERR_INVALID);
	o.out = SPAWN_FD;
	o.out_fd = -1;
	assert_int_equal(spawn_start(loop, &o, &child), ERR_INVALID);
	assert_no_children();
	loop_free(loop);
}

/* Read "PID\n" that the child prints first. */
static pid_t
read_pid_line(struct loop *loop, struct child *child, struct sink *out)
{
	uint64_t end = loop_now_ms() + 5000;

	sink_watch(loop, out, &child->out);
	while (!strchr(out->buf.buf, '\n')) {
		assert_true(loop_now_ms() < end);
		assert_false(out->eof);
		assert_int_equal(loop_run_once(loop, 100), OK);
	}
	return (pid_t)atol(out->buf.buf);
}

/*
 * The test process is a subreaper, so an orphaned grandchild becomes its
 * child: wait for it to be gone, and say how it ended (*status stays -1
 * when its own parent reaped it first).
 */
static bool
grandchild_gone(pid_t pid, int ms, int *status)
{
	uint64_t end = loop_now_ms() + (uint64_t)ms;

	*status = -1;
	do {
		pid_t r = waitpid(pid, status, WNOHANG);

		if (r == pid)
			return true;
		if (r < 0 && kill(pid, 0) < 0)
			return true;
		usleep(5000);
	} while (loop_now_ms() < end);
	return false;
}

static void
test_process_group_kill(void **state)
{
	struct loop *loop = loop_new();
	const char *argv[] = { "sh", "-c", "sleep 100 & echo $!; wait", NULL };
	struct spawn_opts o = SPAWN_OPTS_INIT;
	struct child *child;
	struct sink out;
	pid_t gc;
	int status = 0;

	o.argv = argv;
	o.out = SPAWN_PIPE;
	o.new_pgrp = true;
	assert_int_equal(spawn_start(loop, &o, &child), OK);
	gc = read_pid_line(loop, child, &out);
	assert_true(gc > 0);
	assert_int_equal(getpgid(child->pid), child->pid);
	assert_int_equal(getpgid(gc), child->pid);
	assert_int_equal(kill(gc, 0), 0);
	child_kill(child, SIGTERM);
	assert_int_equal(child_wait(child, 5000), OK);
	assert_true(child->exit.signaled);
	assert_int_equal(child->exit.signo, SIGTERM);
	assert_true(grandchild_gone(gc, 3000, &status));
	assert_true(status == -1 || (WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM));
	assert_int_equal(kill(gc, 0), -1);
	child_free(child);
	strbuf_release(&out.buf);

	/* Without its own group, the same kill misses the grandchild. */
	o.new_pgrp = false;
	assert_int_equal(spawn_start(loop, &o, &child), OK);
	gc = read_pid_line(loop, child, &out);
	assert_int_equal(getpgid(child->pid), getpgrp());
	child_kill(child, SIGTERM);
	assert_int_equal(child_wait(child, 5000), OK);
	assert_false(grandchild_gone(gc, 100, &status));
	kill(gc, SIGKILL);
	assert_true(grandchild_gone(gc, 3000, &status));
	child_free(child);
	strbuf_release(&out.buf);
	assert_no_children();
	loop_free(loop);
}

static void
on_exit_count(struct child *child, void *data)
{
	int *n = data;

	assert_false(child->running);
	(*n)++;
}

static void
test_free_running_child(void **state)
{
	struct loop *loop = loop_new();
	const char *sleeper[] = { "sleep", "100", NULL };
	const char *tree[] = { "sh", "-c", "sleep 100 & echo $!; wait", NULL };
	struct spawn_opts o = SPAWN_OPTS_INIT;
	struct child *child;
	struct sink out;
	int calls = 0, status = 0;
	pid_t pid, gc;
	uint64_t t0 = loop_now_ms();

	o.argv = sleeper;
	o.on_exit = on_exit_count;
	o.data = &calls;
	assert_int_equal(spawn_start(loop, &o, &child), OK);
	pid = child->pid;
	assert_int_equal(kill(pid, 0), 0);
	child_free(child);
	assert_int_equal(kill(pid, 0), -1);
	assert_int_equal(errno, ESRCH);
	/* Freed, not exited through the loop: no callback. */
	assert_int_equal(loop_run_once(loop, 20), OK);
	assert_int_equal(calls, 0);

	/* Its whole group goes too. */
	o.argv = tree;
	o.out = SPAWN_PIPE;
	o.new_pgrp = true;
	o.on_exit = NULL;
	assert_int_equal(spawn_start(loop, &o, &child), OK);
	gc = read_pid_line(loop, child, &out);
	child_free(child);
	assert_true(grandchild_gone(gc, 3000, &status));
	assert_true(status == -1 || (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL));
	strbuf_release(&out.buf);
	assert_true(loop_now_ms() - t0 < 3000);
	child_free(NULL);
	assert_no_children();
	loop_free(loop);
}

static void
test_wait_timeout_and_on_exit(void **state)
{
	struct loop *loop = loop_new();
	const char *argv[] = { "sleep", "10", NULL };
	struct spawn_opts o = SPAWN_OPTS_INIT;
	struct child *child;
	int calls = 0;
	uint64_t t0;

	o.argv = argv;
	o.on_exit = on_exit_count;
	o.data = &calls;
	assert_int_equal(spawn_start(loop, &o, &child), OK);
	t0 = loop_now_ms();
	assert_int_equal(child_wait(child, 50), ERR_TIMEOUT);
	assert_true(loop_now_ms() - t0 >= 50);
	assert_true(loop_now_ms() - t0 < 2000);
	assert_non_null(strstr(error_msg(), "'sleep'"));
	assert_true(child->running);
	assert_int_equal(calls, 0);
	child_kill(child, SIGKILL);
	assert_int_equal(child_wait(child, -1), OK);
	assert_int_equal(calls, 1);
	assert_true(child->exit.signaled);
	assert_int_equal(child->exit.signo, SIGKILL);
	/* Once only. */
	assert_int_equal(loop_run_once(loop, 20), OK);
	assert_int_equal(calls, 1);
	child_free(child);
	loop_free(loop);
}

static void
test_many_children(void **state)
{
	struct loop *loop = loop_new();
	struct spawn_opts o = SPAWN_OPTS_INIT;
	struct child *c[8];
	char *scripts[8];
	const char *argv[8][4];
	int calls = 0;

	/* They exit together: SIGCHLDs merge, yet each is reaped with its own status. */
	for (int i = 0; i < 8; i++) {
		scripts[i] = xasprintf("sleep 0.05; exit %d", i + 10);
		argv[i][0] = "sh";
		argv[i][1] = "-c";
		argv[i][2] = scripts[i];
		argv[i][3] = NULL;
		o.argv = argv[i];
		o.on_exit = on_exit_count;
		o.data = &calls;
		assert_int_equal(spawn_start(loop, &o, &c[i]), OK);
	}
	for (int i = 7; i >= 0; i--)
		assert_int_equal(child_wait(c[i], 5000), OK);
	assert_int_equal(calls, 8);
	for (int i = 0; i < 8; i++) {
		assert_true(c[i]->exit.exited);
		assert_int_equal(c[i]->exit.code, i + 10);
		child_free(c[i]);
		free(scripts[i]);
	}
	assert_no_children();
	loop_free(loop);
}

/* An on_exit that frees its child and starts another. */
struct chain {
	struct loop *loop;
	struct child *next;
	int done;
};

static void
on_exit_chain(struct child *child, void *data)
{
	static const char *const argv[] = { "true", NULL };
	struct chain *ch = data;
	struct spawn_opts o = SPAWN_OPTS_INIT;

	child_free(child);
	ch->done++;
	if (ch->done == 1) {
		o.argv = argv;
		o.on_exit = on_exit_chain;
		o.data = ch;
		assert_int_equal(spawn_start(ch->loop, &o, &ch->next), OK);
	}
}

static void
test_on_exit_frees_and_spawns(void **state)
{
	struct loop *loop = loop_new();
	const char *argv[] = { "true", NULL };
	struct spawn_opts o = SPAWN_OPTS_INIT;
	struct chain ch = { .loop = loop };
	struct child *child;
	uint64_t end = loop_now_ms() + 5000;

	o.argv = argv;
	o.on_exit = on_exit_chain;
	o.data = &ch;
	assert_int_equal(spawn_start(loop, &o, &child), OK);
	while (ch.done < 2) {
		assert_true(loop_now_ms() < end);
		assert_int_equal(loop_run_once(loop, 100), OK);
	}
	assert_no_children();
	loop_free(loop);
}

static void
test_child_signals_reset(void **state)
{
	struct loop *loop = loop_new();
	const char *argv[] = { "cat", "/proc/self/status", NULL };
	struct sigaction ign, old;
	struct strbuf out = STRBUF_INIT;
	struct child_exit ex;

	/* fswb blocks what the loop watches, and may ignore things: children get neither. */
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &ign, &old);
	assert_int_equal(loop_watch_signal(loop, SIGINT, NULL, NULL), OK);
	assert_int_equal(spawn_run(loop, argv, NULL, false, 65536, &out, &ex), OK);
	assert_true(ex.exited && ex.code == 0);
	assert_non_null(strstr(out.buf, "\nSigBlk:\t0000000000000000\n"));
	/*
	 * Signals glibc reserves for itself (32 up to SIGRTMIN) cannot be reset
	 * through sigaction, and a parent (make, say) may ignore them.
	 */
	{
		const char *line = strstr(out.buf, "\nSigIgn:\t");
		unsigned long long mask;

		assert_non_null(line);
		mask = strtoull(line + 9, NULL, 16);
		for (int s = 32; s < SIGRTMIN; s++)
			mask &= ~(1ull << (s - 1));
		assert_int_equal(mask, 0);
	}
	sigaction(SIGPIPE, &old, NULL);
	strbuf_release(&out);
	loop_free(loop);
}

static void
test_run_output_cap(void **state)
{
	struct loop *loop = loop_new();
	const char *big[] = { "sh", "-c", "head -c 300000 /dev/zero | tr '\\0' a; exit 4", NULL };
	struct strbuf out = STRBUF_INIT;
	struct child_exit ex;

	/* Over the cap: the first max_out bytes, ERR_LIMIT, and the child still ran to the end. */
	assert_int_equal(spawn_run(loop, big, NULL, false, 1000, &out, &ex), ERR_LIMIT);
	assert_int_equal(out.len, 1000);
	assert_int_equal(strspn(out.buf, "a"), 1000);
	assert_true(ex.exited);
	assert_int_equal(ex.code, 4);
	assert_non_null(strstr(error_msg(), "'sh'"));
	assert_non_null(strstr(error_msg(), "1000"));
	strbuf_reset(&out);

	/* Under it: everything, through many pipe-fulls; appended to what is there. */
	strbuf_adds(&out, ">");
	assert_int_equal(spawn_run(loop, big, NULL, false, 300000, &out, &ex), OK);
	assert_int_equal(out.len, 300001);
	assert_int_equal(strspn(out.buf + 1, "a"), 300000);
	assert_int_equal(ex.code, 4);
	strbuf_release(&out);

	/* Discarded output is not limited. */
	assert_int_equal(spawn_run(loop, big, NULL, false, 0, NULL, NULL), OK);
	assert_no_children();
	loop_free(loop);
}

static void
test_run_background_holder(void **state)
{
	struct loop *loop = loop_new();
	const char *argv[] = { "sh", "-c", "echo done; sleep 100 & echo $! >&2", NULL };
	struct strbuf out = STRBUF_INIT;
	struct child_exit ex;
	uint64_t t0 = loop_now_ms();
	int status;

	/* A grandchild keeps the pipe open; spawn_run returns when its child exits. */
	assert_int_equal(spawn_run(loop, argv, NULL, true, 4096, &out, &ex), OK);
	assert_true(loop_now_ms() - t0 < 3000);
	assert_true(ex.exited && ex.code == 0);
	assert_true(str_startswith(out.buf, "done\n"));
	{
		pid_t gc = (pid_t)atol(out.buf + 5);

		if (gc > 0) {
			kill(gc, SIGKILL);
			assert_true(grandchild_gone(gc, 3000, &status));
		}
	}
	strbuf_release(&out);
	assert_no_children();
	loop_free(loop);
}

static void
test_exit_str(void **state)
{
	struct child_exit e = { 0 };
	char buf[128];

	e.exited = true;
	e.code = 0;
	assert_string_equal(child_exit_str(&e, buf, sizeof(buf)), "exited with status 0");
	e.code = 255;
	assert_string_equal(child_exit_str(&e, buf, sizeof(buf)), "exited with status 255");
	memset(&e, 0, sizeof(e));
	e.signaled = true;
	e.signo = SIGTERM;
	assert_string_equal(child_exit_str(&e, buf, sizeof(buf)),
			    "killed by signal 15 (Terminated)");
	e.signo = SIGABRT;
	e.core_dumped = true;
	assert_string_equal(child_exit_str(&e, buf, sizeof(buf)),
			    "dumped core (signal 6, Aborted)");
	/* Truncates to the buffer. */
	assert_string_equal(child_exit_str(&e, buf, 7), "dumped");
}

/* A guest's QEMU must not outlive fswb, even when fswb is SIGKILLed. */
static bool
process_gone(pid_t pid)
{
	char path[64], *stat = NULL;
	size_t len;
	bool gone;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (read_file(path, 4096, &stat, &len) != OK) {
		error_clear();
		return true;
	}
	gone = strstr(stat, ") Z ") != NULL; /* a zombie waiting for init */
	free(stat);
	return gone;
}

static void
test_die_with_fswb(void **state)
{
	int p[2];
	pid_t mid, grandchild = 0;

	assert_int_equal(pipe(p), 0);
	mid = fork();
	assert_true(mid >= 0);
	if (mid == 0) {
		struct loop *l = loop_new();
		struct spawn_opts o = SPAWN_OPTS_INIT;
		struct child *c;

		o.argv = (const char *const[]){ "sleep", "30", NULL };
		o.die_with_fswb = true;
		if (spawn_start(l, &o, &c) != OK)
			_exit(1);
		if (write(p[1], &c->pid, sizeof(c->pid)) != sizeof(c->pid))
			_exit(1);
		kill(getpid(), SIGKILL);
	}
	close(p[1]);
	assert_int_equal(read(p[0], &grandchild, sizeof(grandchild)), sizeof(grandchild));
	close(p[0]);
	waitpid(mid, NULL, 0);
	for (int i = 0; i < 100 && !process_gone(grandchild); i++)
		usleep(20000);
	assert_true(process_gone(grandchild));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exit_codes),
		cmocka_unit_test(test_killed_by_signal),
		cmocka_unit_test(test_stdout_stderr),
		cmocka_unit_test(test_err_to_out),
		cmocka_unit_test(test_stdin_pipe_and_fd),
		cmocka_unit_test(test_fd_zero_one_two),
		cmocka_unit_test(test_environment),
		cmocka_unit_test(test_cwd),
		cmocka_unit_test(test_not_found),
		cmocka_unit_test(test_process_group_kill),
		cmocka_unit_test(test_free_running_child),
		cmocka_unit_test(test_wait_timeout_and_on_exit),
		cmocka_unit_test(test_many_children),
		cmocka_unit_test(test_on_exit_frees_and_spawns),
		cmocka_unit_test(test_child_signals_reset),
		cmocka_unit_test(test_run_output_cap),
		cmocka_unit_test(test_run_background_holder),
		cmocka_unit_test(test_exit_str),
		cmocka_unit_test(test_die_with_fswb),
	};

	/* Orphaned grandchildren come to us, so the tests can see how they ended. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	return cmocka_run_group_tests(tests, test_setup_hermetic, test_teardown_hermetic);
}
