/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "testlib.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/paths.h"
#include "core/util.h"

char *test_scratch;

int
test_setup_hermetic(void **state)
{
	char tmpl[] = "/tmp/fswb-unit.XXXXXX";
	char *home;

	(void)state;
	if (!mkdtemp(tmpl))
		return -1;
	test_scratch = xstrdup(tmpl);
	home = path_join(test_scratch, "home");
	if (mkdir_p(home, 0755) != OK)
		return -1;
	setenv("FSWB_HOME", home, 1);
	setenv("HOME", home, 1);
	setenv("TZ", "UTC", 1);
	unsetenv("XDG_CONFIG_HOME");
	unsetenv("XDG_CACHE_HOME");
	unsetenv("XDG_DATA_HOME");
	free(home);
	return 0;
}

int
test_teardown_hermetic(void **state)
{
	(void)state;
	if (test_scratch) {
		remove_tree(test_scratch);
		free(test_scratch);
		test_scratch = NULL;
	}
	return 0;
}

char *
test_srcdir(void)
{
	const char *s = getenv("FSWB_SRCDIR");

	return xstrdup(s && *s ? s : FSWB_SRCDIR);
}

char *
test_path(const char *rel)
{
	char *src = test_srcdir();
	char *p = path_join(src, rel);

	free(src);
	return p;
}

char *
test_fixture(const char *rel)
{
	const char *env = getenv("FSWB_FIXTURES");
	char *base, *p;

	if (env && *env) {
		base = xstrdup(env);
	} else {
		char *src = test_srcdir();

		base = xasprintf("%s/tests/fixtures/fstests-runs", src);
		free(src);
	}
	p = path_join(base, rel);
	free(base);
	return p;
}

char *
test_tmp(const char *rel)
{
	if (!test_scratch)
		fail_msg("test_tmp() outside a hermetic test group");
	return path_join(test_scratch, rel);
}

void
test_write(const char *path, const char *text)
{
	char *dir = xstrdup(path);
	char *slash = strrchr(dir, '/');

	if (slash) {
		*slash = '\0';
		assert_int_equal(mkdir_p(dir, 0755), OK);
	}
	free(dir);
	assert_int_equal(write_file_atomic(path, text, strlen(text), 0644), OK);
}

char *
test_read(const char *path)
{
	char *buf = NULL;
	size_t len;

	if (read_file(path, 1u << 30, &buf, &len) != OK)
		fail_msg("cannot read '%s': %s", path, error_msg());
	return buf;
}

void
assert_no_children(void)
{
	pid_t r = waitpid(-1, NULL, WNOHANG);

	if (r != -1 || errno != ECHILD)
		fail_msg("a child process is left behind (waitpid: %d)", (int)r);
}
