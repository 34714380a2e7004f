/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Paths: XDG dirs and their overrides, joins, trees, whole-file I/O, atomic writes. */
#include "testlib.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/logfile.h"
#include "core/paths.h"
#include "core/rundir.h"

static void
test_dirs_follow_fswb_home(void **state)
{
	char *home = getenv("FSWB_HOME"), *d, *want;

	assert_non_null(home);
	d = fswb_dir(DIR_CONFIG);
	want = path_join(home, "config");
	assert_string_equal(d, want);
	free(d);
	free(want);
	d = fswb_dir(DIR_DATA);
	want = path_join(home, "data");
	assert_string_equal(d, want);
	free(d);
	free(want);
}

static void
test_xdg_without_fswb_home(void **state)
{
	char *saved = strdup(getenv("FSWB_HOME")), *d;

	unsetenv("FSWB_HOME");
	setenv("XDG_CACHE_HOME", "/x/cache", 1);
	d = fswb_dir(DIR_CACHE);
	assert_string_equal(d, "/x/cache/fswb");
	free(d);
	unsetenv("XDG_CACHE_HOME");
	setenv("HOME", "/h", 1);
	d = fswb_dir(DIR_DATA);
	assert_string_equal(d, "/h/.local/share/fswb");
	free(d);
	setenv("FSWB_HOME", saved, 1);
	setenv("HOME", saved, 1);
	free(saved);
}

static void
test_cache_override_wins(void **state)
{
	char *d;

	setenv("FSWB_CACHE_DIR", "/shared/cache", 1);
	d = fswb_dir(DIR_CACHE);
	assert_string_equal(d, "/shared/cache");
	free(d);
	unsetenv("FSWB_CACHE_DIR");
	d = fswb_dir(DIR_CACHE);
	assert_string_not_equal(d, "/shared/cache");
	free(d);
}

static void
test_join(void **state)
{
	char *p = path_join("a/", "/b");

	assert_string_equal(p, "a/b");
	free(p);
	p = path_join("a", "b");
	assert_string_equal(p, "a/b");
	free(p);
}

static void
test_mkdir_and_remove_tree(void **state)
{
	char *top = test_tmp("t"), *deep = test_tmp("t/a/b/c"), *f = test_tmp("t/a/file");
	char *out = NULL;

	assert_int_equal(mkdir_p(deep, 0755), OK);
	assert_int_equal(mkdir_p(deep, 0755), OK);
	assert_true(path_is_dir(deep));
	test_write(f, "x");
	/* A link to outside must not be followed. */
	assert_int_equal(fswb_dir_make(DIR_DATA, "keep", &out), OK);
	{
		char *keepfile = path_join(out, "precious"), *link = test_tmp("t/a/link");

		test_write(keepfile, "data");
		assert_int_equal(symlink(out, link), 0);
		assert_int_equal(remove_tree(top), OK);
		assert_false(path_exists(top));
		assert_true(path_exists(keepfile));
		free(keepfile);
		free(link);
	}
	free(out);
	free(top);
	free(deep);
	free(f);
}

static void
test_read_file_limits(void **state)
{
	char *p = test_tmp("r"), *text = NULL;
	size_t len = 0;

	test_write(p, "hello");
	assert_int_equal(read_file(p, 100, &text, &len), OK);
	assert_int_equal(len, 5);
	assert_string_equal(text, "hello");
	free(text);
	assert_int_equal(read_file(p, 4, &text, &len), ERR_LIMIT);
	assert_int_not_equal(read_file("/nonexistent/x", 4, &text, &len), OK);
	assert_non_null(strstr(error_msg(), "/nonexistent/x"));
	free(p);
}

static void
test_atomic_write(void **state)
{
	char *p = test_tmp("dir/a.json"), *dir = test_tmp("dir"), *text;
	struct stat st;

	assert_int_equal(mkdir_p(dir, 0755), OK);
	assert_int_equal(write_file_atomic(p, "one", 3, 0600), OK);
	assert_int_equal(write_file_atomic(p, "two!", 4, 0644), OK);
	text = test_read(p);
	assert_string_equal(text, "two!");
	free(text);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644);
	/* A directory that cannot be written: the old file stays, no temporary is left. */
	if (geteuid() != 0) {
		chmod(dir, 0555);
		assert_int_not_equal(write_file_atomic(p, "three", 5, 0644), OK);
		chmod(dir, 0755);
		text = test_read(p);
		assert_string_equal(text, "two!");
		free(text);
	}
	assert_int_not_equal(write_file_atomic("/nonexistent/dir/f", "x", 1, 0644), OK);
	assert_non_null(strstr(error_msg(), "/nonexistent/dir"));
	free(p);
	free(dir);
}

/*
 * Where shipped data is read from: the source tree only for the binary in
 * its build directory; an installed copy reads PREFIX/share/fswb beside it,
 * even while the tree it was built from is still there.
 */
static void
test_datadir(void **state)
{
	char *tree = test_tmp("tree"), *build = test_tmp("tree/build");
	char *in_build = test_tmp("tree/build/fswb"), *link = test_tmp("tree/fswb");
	char *installed = test_tmp("prefix/bin/fswb"), *share = test_tmp("prefix/share/fswb");
	char *copy = test_tmp("copy/bin/fswb"), *p, *d;

	(void)state;
	p = test_tmp("tree/profiles/fs/ext4/4k.conf");
	test_write(p, "");
	free(p);
	p = test_tmp("prefix/share/fswb/profiles/fs/ext4/4k.conf");
	test_write(p, "");
	free(p);
	test_write(in_build, "");
	test_write(installed, "");
	test_write(copy, "");
	assert_int_equal(symlink("build/fswb", link), 0);
	paths_set_builtin(tree, build, "/nonexistent/share/fswb");

	d = datadir_for(in_build);
	assert_string_equal(d, tree);
	free(d);
	d = datadir_for(link); /* ./fswb, the symlink make leaves in the tree */
	assert_string_equal(d, tree);
	free(d);
	d = datadir_for(installed);
	assert_string_equal(d, share);
	free(d);
	/* a copy with no share/fswb beside it: the prefix it was built for */
	d = datadir_for(copy);
	assert_string_equal(d, "/nonexistent/share/fswb");
	free(d);
	/* $FSWB_DATADIR wins over all of them */
	setenv("FSWB_DATADIR", share, 1);
	d = fswb_datadir();
	assert_string_equal(d, share);
	free(d);
	unsetenv("FSWB_DATADIR");

	assert_true(path_below(in_build, tree));
	assert_true(path_below(link, build)); /* resolved */
	assert_false(path_below(tree, tree));
	assert_false(path_below(installed, tree));
	paths_set_builtin(NULL, NULL, NULL);
	free(tree);
	free(build);
	free(in_build);
	free(link);
	free(installed);
	free(share);
	free(copy);
}

/* A pid that ran and is gone (reaped). */
static pid_t
dead_pid(void)
{
	int status;
	pid_t pid = fork();

	if (!pid)
		_exit(0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return pid;
}

/*
 * What a killed fswb left (NAME.tmp.PID of a process that is gone) is
 * removed; a running one's, names that only look alike and what a symlink
 * points to are not.
 */
static void
test_reap_stale_tmp(void **state)
{
	pid_t dead = dead_pid();
	char *run = test_tmp("home/data/runs/20261203-120000");
	char *json = xasprintf("%s/run.json.tmp.%ld", run, (long)dead);
	char *mine = xasprintf("%s/junit.xml.tmp.%ld", run, (long)getpid());
	char *dir = xasprintf("%s/unpack.tmp.%ld", run, (long)dead);
	char *inside = path_join(dir, "a/b");
	char *alike = path_join(run, "notes.tmp.12x");
	char *keep = path_join(run, "run.json");
	char *target = test_tmp("elsewhere"), *target_file = test_tmp("elsewhere/f");
	char *link = xasprintf("%s/link.tmp.%ld", run, (long)dead);
	char *cache = fswb_dir(DIR_CACHE);
	char *clone = xasprintf("%s/fstests-git/abc.git.tmp.%ld", cache, (long)dead);
	char *p;

	(void)state;
	test_write(json, "{");
	test_write(mine, "<");
	test_write(inside, "x");
	test_write(alike, "x");
	test_write(keep, "{}");
	test_write(target_file, "x");
	assert_int_equal(symlink(target, link), 0);
	p = path_join(clone, "HEAD");
	test_write(p, "ref");
	free(p);

	assert_int_equal(reap_stale_tmp(run), 3);
	assert_false(path_exists(json));
	assert_false(path_exists(dir));
	assert_false(path_exists(link));
	assert_true(path_exists(target_file)); /* the link went, not what it names */
	assert_true(path_exists(mine));	       /* this process still runs */
	assert_true(path_exists(alike));
	assert_true(path_exists(keep));
	/* everywhere fswb writes them: each run directory, the cache's clones */
	test_write(json, "{");
	assert_int_equal(paths_reap_stale(), 2);
	assert_false(path_exists(json));
	assert_false(path_exists(clone));
	assert_true(path_exists(mine));
	free(run);
	free(json);
	free(mine);
	free(dir);
	free(inside);
	free(alike);
	free(keep);
	free(target);
	free(target_file);
	free(link);
	free(clone);
	free(cache);
}

static void
test_rundir_list(void **state)
{
	char *root = test_tmp("runs"), *plan = test_tmp("runs/20261204-100000/plan.json");
	char *events = test_tmp("runs/20261203-090000/events.jsonl");
	char *other = test_tmp("runs/notes/readme"), *link = test_tmp("runs/20261205-000000");
	char *target = test_tmp("runs/20261204-100000");
	struct strvec ids = STRVEC_INIT;

	(void)state;
	rundir_list(root, &ids); /* no root yet */
	assert_int_equal(ids.n, 0);
	test_write(plan, "{}");
	test_write(events, "");
	test_write(other, "not a run");
	assert_int_equal(symlink(target, link), 0);
	rundir_list(root, &ids);
	/* oldest first; a directory without a run's files and a link are not runs */
	assert_int_equal(ids.n, 2);
	assert_string_equal(ids.v[0], "20261203-090000");
	assert_string_equal(ids.v[1], "20261204-100000");
	strvec_clear(&ids);
	free(root);
	free(plan);
	free(events);
	free(other);
	free(link);
	free(target);
}

static void
test_which(void **state)
{
	char *dir = test_tmp("bin"), *tool = test_tmp("bin/tool"), *top = test_tmp(""), *found;

	(void)state;
	test_write(tool, "#!/bin/sh\n");
	assert_int_equal(chmod(tool, 0755), 0);
	found = path_which("tool", dir, NULL);
	assert_string_equal(found, tool);
	free(found);
	found = path_which(tool, "/nonexistent", NULL); /* a path is itself */
	assert_string_equal(found, tool);
	free(found);
	assert_null(path_which("tool", "/nonexistent", NULL));
	found = path_which("tool", "/nonexistent", dir); /* then the extra dirs */
	assert_string_equal(found, tool);
	free(found);
	assert_null(path_which("bin", top, NULL)); /* a directory is not one */
	free(top);
	free(dir);
	free(tool);
}

/* Below an untrusted directory: no symlink followed, no FIFO waited on, no "..". */
static void
test_beneath(void **state)
{
	char *dir = test_tmp("beneath"), *host = test_tmp("host-secret");
	char *p, *text = NULL;
	size_t len;
	int fd;

	test_write(host, "secret\n");
	p = path_join(dir, "generic/001.full");
	test_write(p, "full\n");
	free(p);
	p = path_join(dir, "result.xml");
	assert_int_equal(symlink(host, p), 0);
	free(p);
	p = path_join(dir, "xfs");
	assert_int_equal(symlink("generic", p), 0);
	free(p);
	p = path_join(dir, "check.log");
	assert_int_equal(mkfifo(p, 0644), 0);
	free(p);

	assert_int_equal(read_file_beneath(dir, "generic/001.full", 100, &text, &len), OK);
	assert_string_equal(text, "full\n");
	free(text);
	assert_true(file_beneath(dir, "generic/001.full"));
	assert_true(dir_beneath(dir, "generic"));
	/* a symlink as the file, or on the way to it */
	assert_int_not_equal(read_file_beneath(dir, "result.xml", 100, &text, &len), OK);
	assert_non_null(strstr(error_msg(), "result.xml"));
	assert_false(file_beneath(dir, "result.xml"));
	assert_false(file_beneath(dir, "xfs/001.full"));
	assert_false(dir_beneath(dir, "xfs"));
	/* a FIFO: refused at once, not waited on */
	assert_int_equal(read_file_beneath(dir, "check.log", 100, &text, &len), ERR_INVALID);
	assert_non_null(strstr(error_msg(), "not a regular file"));
	/* names that climb out */
	errno = 0;
	assert_true(open_beneath(dir, "../host-secret", O_RDONLY, 0) < 0);
	assert_int_equal(errno, EINVAL);
	assert_true(open_beneath(dir, "/etc/passwd", O_RDONLY, 0) < 0);
	assert_true(open_beneath(dir, "generic//001.full", O_RDONLY, 0) < 0);
	assert_true(open_beneath(dir, "generic/./001.full", O_RDONLY, 0) < 0);
	assert_true(open_beneath(dir, "generic/", O_RDONLY, 0) < 0);
	fd = open_beneath(dir, "generic/001.full", O_RDONLY, 0);
	assert_true(fd >= 0);
	close(fd);
	free(dir);
	free(host);
}

/* A capped log is cut once, with its note, and never written through a symlink. */
static void
test_logfile_cap(void **state)
{
	char *dir = test_tmp("logs"), *p, *text;
	struct logfile f;

	mkdir_p(dir, 0755);
	assert_int_equal(logfile_open(&f, dir, "console.log", 10, NULL), OK);
	assert_int_equal(logfile_write(&f, "12345", 5), LOGFILE_OK);
	assert_int_equal(logfile_write(&f, "6789abcdef", 10), LOGFILE_CUT);
	assert_int_equal(logfile_write(&f, "more", 4), LOGFILE_DROPPED);
	logfile_close(&f);
	p = path_join(dir, "console.log");
	text = test_read(p);
	assert_string_equal(
		text, "123456789a\n[fswb: console.log was cut here: it reached its cap of 10 B]\n");
	free(text);
	free(p);

	/* a symlink planted where the log goes */
	p = path_join(dir, "kernel.log");
	assert_int_equal(symlink("/etc/passwd", p), 0);
	assert_int_equal(logfile_open(&f, dir, "kernel.log", 10, NULL), ERR_IO);
	assert_int_equal(logfile_write(&f, "x", 1), LOGFILE_DROPPED);
	logfile_close(&f);
	free(p);
	free(dir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dirs_follow_fswb_home),
		cmocka_unit_test(test_xdg_without_fswb_home),
		cmocka_unit_test(test_cache_override_wins),
		cmocka_unit_test(test_join),
		cmocka_unit_test(test_mkdir_and_remove_tree),
		cmocka_unit_test(test_read_file_limits),
		cmocka_unit_test(test_atomic_write),
		cmocka_unit_test(test_datadir),
		cmocka_unit_test(test_reap_stale_tmp),
		cmocka_unit_test(test_rundir_list),
		cmocka_unit_test(test_which),
		cmocka_unit_test(test_beneath),
		cmocka_unit_test(test_logfile_cap),
	};

	return cmocka_run_group_tests(tests, test_setup_hermetic, test_teardown_hermetic);
}
