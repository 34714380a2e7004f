/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The backend table's own parts: options checked at plan time, and leases
 * (what a killed fswb left behind is found and removed; what a running one
 * holds is not touched).
 */
#include "testlib.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backends/backend.h"
#include "core/loop.h"
#include "core/paths.h"
#include "core/plan.h"
#include "core/util.h"

static void
expect_refused(struct plan *p, const char *key_value, const char *words)
{
	const char *eq = strchr(key_value, '=');
	char *key = xstrndup(key_value, (size_t)(eq - key_value));

	plan_set_backend_opt(p, key, eq + 1);
	assert_int_equal(backend_check_options(p), ERR_INVALID);
	if (!strstr(error_msg(), words))
		fail_msg("-o %s: '%s' does not say '%s'", key_value, error_msg(), words);
	strvec_clear(&p->backend_opts);
	free(key);
}

static void
test_options(void **state)
{
	struct plan p;

	plan_init(&p);
	plan_defaults(&p);
	assert_int_equal(backend_check_options(&p), OK);
	plan_set_backend_opt(&p, "accel", "tcg");
	plan_set_backend_opt(&p, "silence", "120");
	assert_int_equal(backend_check_options(&p), OK);
	strvec_clear(&p.backend_opts);
	expect_refused(&p, "acel=tcg", "takes no option 'acel'; it takes qemu=PATH, accel=tcg");
	expect_refused(&p, "accel=kvm", "-o accel='kvm': the only choice is 'tcg'");
	expect_refused(&p, "silence=0", "-o silence='0': give seconds, 1 to 86400");
	expect_refused(&p, "qemu=qemu-system-x86_64", "absolute path");
	free(p.backend);
	p.backend = xstrdup("stdio");
	expect_refused(&p, "fstests=/nonexistent", "an fstests tree");
	free(p.backend);
	p.backend = xstrdup("nothing");
	assert_int_equal(backend_check_options(&p), ERR_INVALID);
	plan_release(&p);
}

/* The start time of pid, as /proc/PID/stat field 22. */
static unsigned long long
start_of(pid_t pid)
{
	char path[64], *text, *p;
	unsigned long long start = 0;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	text = test_read(path);
	p = strrchr(text, ')');
	for (int field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (p)
		start = strtoull(p + 1, NULL, 10);
	free(text);
	return start;
}

/* A lease file as a session writes it, owned by pid, holding dir and victim. */
static void
write_lease(const char *name, pid_t owner, unsigned long long start, const char *dir, pid_t victim)
{
	char *leases = test_tmp("home/data/leases"), *file = path_join(leases, name);
	char *text = xasprintf("backend qemu\nowner %ld %llu\npath %s\npid %ld %llu\n", (long)owner,
			       start, dir, (long)victim, start_of(victim));

	test_write(file, text);
	free(text);
	free(file);
	free(leases);
}

static void
test_leases(void **state)
{
	char *left = test_tmp("home/data/runs/1/guest-ext4-4k");
	char *held = test_tmp("home/data/runs/2/guest-ext4-4k");
	char *outside = test_tmp("outside");
	char *f;
	struct strvec done = STRVEC_INIT, list = STRVEC_INIT;
	pid_t dead, victim;
	int status;

	/* an fswb that is gone: a process that ran and was reaped */
	dead = fork();
	if (!dead)
		_exit(0);
	assert_int_equal(waitpid(dead, &status, 0), dead);
	/* what it left running: a process of its own */
	victim = fork();
	if (!victim) {
		pause();
		_exit(0);
	}
	f = path_join(left, "root.qcow2");
	test_write(f, "overlay");
	free(f);
	f = path_join(held, "root.qcow2");
	test_write(f, "overlay");
	free(f);
	mkdir_p(outside, 0755);
	write_lease("qemu-1-1", dead, 12345, left, victim);
	write_lease("qemu-2-1", getpid(), start_of(getpid()), held, getpid());
	/* a lease naming this process: never killed */
	write_lease("qemu-3-1", dead, 12345, outside, getpid());

	backend_leases_list(&list);
	assert_int_equal(list.n, 3);
	backend_leases_reap(&done);
	assert_int_equal(done.n, 2);
	assert_false(path_exists(left));
	assert_true(path_exists(held));
	assert_true(path_exists(outside)); /* outside fswb's directories: never removed */
	assert_int_equal(waitpid(victim, &status, 0), victim);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	strvec_clear(&list);
	backend_leases_list(&list);
	assert_int_equal(list.n, 1);
	assert_non_null(strstr(list.v[0], "held by a running fswb"));
	strvec_clear(&list);
	strvec_clear(&done);
	free(left);
	free(held);
	free(outside);
}

/* ---- the QEMU command line ---- */

struct qemu_seen {
	bool exited;
};

static void
ignore_bytes(void *data, const char *buf, size_t len)
{
	(void)data;
	(void)buf;
	(void)len;
}

static void
on_qemu_gone(void *data, enum status code, const char *why)
{
	(void)code;
	(void)why;
	((struct qemu_seen *)data)->exited = true;
}

/* Whether lines holds line exactly. */
static bool
has_line(const struct strvec *lines, const char *line)
{
	for (size_t i = 0; i < lines->n; i++)
		if (!strcmp(lines->v[i], line))
			return true;
	return false;
}

/*
 * QEMU runs sandboxed (-sandbox on, no spawning or elevating), and a path
 * with commas cannot add options to a -drive or -chardev value (each ',' is
 * given as ',,'). A program in place of QEMU (-o qemu=PATH) records its
 * arguments.
 */
static void
test_qemu_command_line(void **state)
{
	char *work = test_tmp("home/data/runs/1/guest-a,format=raw,file=x");
	char *fake = test_tmp("bin/qemu"), *args = test_tmp("bin/args");
	char *kernel = test_tmp("img/bzImage"), *appliance = test_tmp("img/root,x.img");
	char *script = xasprintf("#!/bin/sh\nprintf '%%s\\n' \"$@\" >'%s'\n", args);
	char *qemu_opt = xasprintf("qemu=%s", fake), *want, *text, *esc;
	const char *const options[] = { qemu_opt, "accel=tcg", NULL };
	const struct session_disk disks[] = { { "test", 1 << 20, NULL } };
	struct session_spec spec = { 0 };
	struct session_callbacks cb = { ignore_bytes, ignore_bytes, ignore_bytes, on_qemu_gone };
	struct qemu_seen seen = { false };
	struct strvec lines = STRVEC_INIT;
	struct loop *loop = loop_new();
	struct session *s = NULL;

	(void)state;
	test_write(fake, script);
	assert_int_equal(chmod(fake, 0755), 0);
	test_write(kernel, "not booted");
	{
		FILE *f = fopen(appliance, "w");

		assert_non_null(f);
		assert_int_equal(ftruncate(fileno(f), 1 << 20), 0);
		fclose(f);
	}
	spec.name = "a";
	spec.workdir = work;
	spec.arch = arch_find("x86_64");
	spec.kernel = kernel;
	spec.appliance = appliance;
	spec.disks = disks;
	spec.ndisks = 1;
	spec.cpus = 1;
	spec.mem = 256ull << 20;
	spec.options = options;
	assert_int_equal(session_start(backend_find("qemu"), loop, NULL, &spec, &cb, &seen, &s),
			 OK);
	for (int i = 0; i < 200 && !seen.exited; i++)
		loop_run_once(loop, 50);
	assert_true(seen.exited);
	text = test_read(args);
	strvec_split(&lines, text, "\n");
	free(text);

	assert_true(has_line(&lines, "-sandbox"));
	assert_true(has_line(&lines, "on,obsolete=deny,elevateprivileges=deny,spawn=deny,"
				     "resourcecontrol=deny"));
	/* the commas of the work directory doubled: one value, no option added */
	esc = test_tmp("home/data/runs/1/guest-a,,format=raw,,file=x");
	want = xasprintf("file=%s/test.img,if=virtio,format=raw,cache=unsafe", esc);
	if (!has_line(&lines, want))
		fail_msg("no '%s' among QEMU's arguments", want);
	free(want);
	want = xasprintf("pipe,id=con,path=%s/con", esc);
	if (!has_line(&lines, want))
		fail_msg("no '%s' among QEMU's arguments", want);
	free(want);
	free(esc);
	session_release(s);
	assert_false(path_exists(work)); /* the session's directory goes with it */
	strvec_clear(&lines);
	loop_free(loop);
	free(work);
	free(fake);
	free(args);
	free(kernel);
	free(appliance);
	free(script);
	free(qemu_opt);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_options),
		cmocka_unit_test(test_leases),
		cmocka_unit_test(test_qemu_command_line),
	};

	return cmocka_run_group_tests(tests, test_setup_hermetic, test_teardown_hermetic);
}
