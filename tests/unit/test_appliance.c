/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The appliance's inputs: the config file, the host's release and apt
 * sources, fstests sources (directories, git work trees, git URLs), the
 * cache key, the probe, the cache's list and remove, and the lock a second
 * fswb waits on. Building itself is tests/e2e/appliance*.sh.
 */
#include "testlib.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/event.h"
#include "core/loop.h"
#include "core/paths.h"
#include "core/spawn.h"
#include "core/util.h"
#include "rootfs/appliance.h"

static struct loop *loop;

static int
setup(void **state)
{
	char *src;

	if (test_setup_hermetic(state))
		return -1;
	unsetenv("FSWB_CACHE_DIR");
	src = test_srcdir();
	setenv("FSWB_DATADIR", src, 1);
	free(src);
	loop = loop_new();
	return 0;
}

static int
teardown(void **state)
{
	loop_free(loop);
	loop = NULL;
	return test_teardown_hermetic(state);
}

static void
run_ok(const char *const *argv)
{
	struct child_exit ex = { 0 };
	struct strbuf out = STRBUF_INIT;

	assert_int_equal(spawn_run(loop, argv, NULL, true, 1 << 20, &out, &ex), OK);
	if (!(ex.exited && ex.code == 0))
		fail_msg("%s failed: %s", argv[0], out.buf);
	strbuf_release(&out);
}

static char *
run_out(const char *const *argv)
{
	struct child_exit ex = { 0 };
	struct strbuf out = STRBUF_INIT;

	assert_int_equal(spawn_run(loop, argv, NULL, false, 1 << 20, &out, &ex), OK);
	assert_true(ex.exited && ex.code == 0);
	return strbuf_detach(&out);
}

static void
git(const char *dir, const char *const *args)
{
	struct strvec argv = STRVEC_INIT;

	strvec_pushv(&argv, (const char *const[]){ "git", "-C", dir, "-c", "user.name=t", "-c",
						   "user.email=t@example.org", "-c",
						   "init.defaultBranch=main", NULL });
	strvec_pushv(&argv, args);
	run_ok((const char *const *)argv.v);
	strvec_clear(&argv);
}

/* A copy of tests/fixtures/mini-fstests in the scratch directory. */
static char *
mini_copy(const char *name)
{
	char *src = test_path("tests/fixtures/mini-fstests");
	char *dst = test_tmp(name);

	remove_tree(dst);
	run_ok((const char *const[]){ "cp", "-a", src, dst, NULL });
	free(src);
	return dst;
}

static void
write_config(const char *text)
{
	char *dir = fswb_dir(DIR_CONFIG);
	char *path = path_join(dir, "config");

	test_write(path, text);
	free(dir);
	free(path);
}

/* ---- config, release, mirror ---- */

static void
test_config_read(void **state)
{
	char *release, *mirror;
	char *path = test_tmp("cfg/config");

	(void)state;
	assert_int_equal(appliance_config_read(path, &release, &mirror), OK);
	assert_null(release);
	assert_null(mirror);

	test_write(path, "# fswb\n\nrelease = trixie\n  mirror=http://m.example.org/debian  \n"
			 "other.key = whatever\n");
	assert_int_equal(appliance_config_read(path, &release, &mirror), OK);
	assert_string_equal(release, "trixie");
	assert_string_equal(mirror, "http://m.example.org/debian");
	free(release);
	free(mirror);

	test_write(path, "release = bookworm\nthis line is wrong\n");
	assert_int_equal(appliance_config_read(path, &release, &mirror), ERR_PARSE);
	assert_non_null(strstr(error_msg(), "line 2"));
	assert_non_null(strstr(error_msg(), path));
	assert_null(release);

	test_write(path, "mirror =\n");
	assert_int_equal(appliance_config_read(path, &release, &mirror), ERR_PARSE);
	assert_non_null(strstr(error_msg(), "'mirror' has no value"));
	free(path);
}

static void
test_host_release(void **state)
{
	char *path = test_tmp("os-release");
	char *rel;

	(void)state;
	test_write(path, "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nVERSION_ID=\"12\"\n"
			 "VERSION_CODENAME=\"bookworm\"\nID=debian\n");
	assert_int_equal(appliance_host_release(path, &rel), OK);
	assert_string_equal(rel, "bookworm");
	free(rel);
	test_write(path, "VERSION_CODENAME=trixie\n");
	assert_int_equal(appliance_host_release(path, &rel), OK);
	assert_string_equal(rel, "trixie");
	free(rel);
	test_write(path, "ID=debian\nPRETTY_NAME=\"Debian sid\"\n");
	assert_int_equal(appliance_host_release(path, &rel), ERR_NOTFOUND);
	assert_non_null(strstr(error_msg(), "release = NAME"));
	free(path);
	path = test_tmp("no-such-os-release");
	assert_int_equal(appliance_host_release(path, &rel), ERR_NOTFOUND);
	free(path);
}

static void
test_host_mirror_list(void **state)
{
	char *dir = test_tmp("apt1");
	char *list = path_join(dir, "sources.list");
	char *m;

	(void)state;
	test_write(list, "# deb http://commented.example.org/debian bookworm main\n"
			 "deb-src http://src.example.org/debian bookworm main\n"
			 "deb http://old.example.org/debian bullseye main\n"
			 "deb [arch=amd64 signed-by=/usr/share/keyrings/k.gpg] "
			 "http://one.example.org/debian bookworm main contrib # trailing\n"
			 "deb http://two.example.org/debian bookworm main\n");
	assert_int_equal(appliance_host_mirror(dir, "bookworm", &m), OK);
	assert_string_equal(m, "http://one.example.org/debian");
	free(m);
	assert_int_equal(appliance_host_mirror(dir, "bullseye", &m), OK);
	assert_string_equal(m, "http://old.example.org/debian");
	free(m);
	assert_int_equal(appliance_host_mirror(dir, "trixie", &m), ERR_NOTFOUND);
	assert_non_null(strstr(error_msg(), "'trixie'"));
	assert_non_null(strstr(error_msg(), "--mirror"));
	assert_non_null(strstr(error_msg(), list));
	free(list);
	free(dir);
}

static void
test_host_mirror_deb822(void **state)
{
	char *dir = test_tmp("apt2");
	char *a = path_join(dir, "sources.list.d/a.sources");
	char *b = path_join(dir, "sources.list.d/b.list");
	char *c = path_join(dir, "sources.list.d/c.list.disabled");
	char *m;

	(void)state;
	/* no sources.list at all; the parts in name order */
	test_write(c, "deb http://disabled.example.org/debian bookworm main\n");
	test_write(a, "# the first stanza is off\n"
		      "Types: deb\nURIs: http://off.example.org/debian\nSuites: bookworm\n"
		      "Components: main\nEnabled: no\n\n"
		      "Types: deb-src\nURIs: http://src.example.org/debian\nSuites: bookworm\n\n"
		      "Types: deb\nURIs: http://sec.example.org/debian-security\n"
		      "Suites: bookworm-security\nComponents: main\n\n"
		      "Types: deb deb-src\n"
		      "URIs: cdrom:/media/ http://deb822.example.org/debian\n"
		      "Suites: bookworm bookworm-updates\nComponents: main\n"
		      "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n");
	test_write(b, "deb http://later.example.org/debian bookworm main\n");
	assert_int_equal(appliance_host_mirror(dir, "bookworm", &m), OK);
	assert_string_equal(m, "http://deb822.example.org/debian");
	free(m);
	assert_int_equal(appliance_host_mirror(dir, "bookworm-security", &m), OK);
	assert_string_equal(m, "http://sec.example.org/debian-security");
	free(m);
	/* continuation lines of URIs and a last stanza with no blank line after it */
	test_write(a, "Types: deb\nURIs:\n http://cont.example.org/debian\nSuites: trixie");
	assert_int_equal(appliance_host_mirror(dir, "trixie", &m), OK);
	assert_string_equal(m, "http://cont.example.org/debian");
	free(m);
	free(a);
	free(b);
	free(c);
	free(dir);
}

/* ---- fstests sources ---- */

static void
test_src_is_url(void **state)
{
	char *dir = test_path("tests/fixtures/mini-fstests");

	(void)state;
	assert_true(appliance_src_is_url("git://git.kernel.org/pub/scm/fs/xfs/xfstests-dev.git"));
	assert_true(appliance_src_is_url("https://example.org/fstests"));
	assert_true(appliance_src_is_url("file:///srv/fstests#v2024.01.01"));
	assert_true(appliance_src_is_url("git@example.org:fstests.git"));
	assert_true(appliance_src_is_url("/nonexistent/fstests.git"));
	assert_false(appliance_src_is_url(dir));
	assert_false(appliance_src_is_url("/nonexistent/fstests"));
	free(dir);
}

static void
test_default_target(void **state)
{
	char *dir = test_tmp("mk");
	char *mk = path_join(dir, "Makefile");

	(void)state;
	assert_false(appliance_has_default_target(dir)); /* no Makefile */
	test_write(mk, "# comment: not a rule\nCC := gcc\nX = a:b\n.PHONY: all\n"
		       "ifeq ($(V),1)\nendif\n%.o: %.c\n\t$(CC) -c $<\n");
	assert_false(appliance_has_default_target(dir));
	test_write(mk,
		   "TOPDIR = .\ninclude $(TOPDIR)/include/builddefs\n\ndefault: include/builddefs\n"
		   "\t@echo build\n");
	assert_true(appliance_has_default_target(dir));
	test_write(mk, ".DEFAULT_GOAL := world\n");
	assert_true(appliance_has_default_target(dir));
	/* the real ones */
	{
		char *mini = test_path("tests/fixtures/mini-fstests");

		assert_false(appliance_has_default_target(mini));
		free(mini);
	}
	free(mk);
	free(dir);
}

static void
test_build_progress(void **state)
{
	char *dir = test_tmp("units");
	static const char *const files[] = { "src/a.c",	  "src/aio-dio-regress/b.c",
					     "ltp/fsx.c", "lib/random.c",
					     "src/a.h",	  "tests/generic/001",
					     "tools/x.c", "src/global.h" };

	(void)state;
	assert_int_equal(appliance_build_units("/nonexistent/fstests"), 0);
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		char *p = path_join(dir, files[i]);

		test_write(p, "x\n");
		free(p);
	}
	/* four C files under src/, ltp/ and lib/, and configure's checks */
	assert_int_equal(appliance_build_units(dir), 4 + 160);

	/* lines of make's output in fstests, as they come */
	assert_true(appliance_build_line("checking for gmake... /usr/bin/gmake"));
	assert_true(appliance_build_line("    [CC]    fssum"));
	assert_true(appliance_build_line("    [CC] dataascii.lo"));
	assert_true(appliance_build_line(" [GROUP] /opt/fstests/tests/btrfs/group.list"));
	assert_true(appliance_build_line("    [LD] "));
	assert_false(appliance_build_line("Building src"));
	assert_false(appliance_build_line("make: Entering directory '/opt/fstests'"));
	assert_false(appliance_build_line("libtoolize: copying file './config.guess'"));
	assert_false(appliance_build_line("[    1.234] a kernel line"));
	assert_false(appliance_build_line("[cc] lower case"));
	assert_false(appliance_build_line("    [CC"));
	free(dir);
}

static void
test_fstests_files_walk(void **state)
{
	char *dir = mini_copy("walk");
	struct strvec files = STRVEC_INIT;
	char d1[65], d2[65], d3[65];
	char *p;

	(void)state;
	/* build products and .git are left out */
	p = path_join(dir, ".git/HEAD");
	test_write(p, "ref: refs/heads/main\n");
	free(p);
	p = path_join(dir, "src/foo.o");
	test_write(p, "object");
	free(p);
	p = path_join(dir, "src/.libs/libfoo.so");
	test_write(p, "lib");
	free(p);
	assert_int_equal(appliance_fstests_files(loop, dir, &files, d1), OK);
	assert_true(strvec_contains(&files, "check"));
	assert_true(strvec_contains(&files, "tests"));
	assert_true(strvec_contains(&files, "src"));
	assert_false(strvec_contains(&files, "src/foo.o"));
	assert_false(strvec_contains(&files, "src/.libs"));
	assert_false(strvec_contains(&files, ".git"));
	assert_false(strvec_contains(&files, ".git/HEAD"));
	for (size_t i = 1; i < files.n; i++)
		assert_true(strcmp(files.v[i - 1], files.v[i]) < 0);
	strvec_clear(&files);

	/* another build product: the same digest */
	p = path_join(dir, "check.o");
	test_write(p, "object");
	free(p);
	assert_int_equal(appliance_fstests_files(loop, dir, &files, d2), OK);
	assert_string_equal(d1, d2);
	strvec_clear(&files);

	/* a changed mtime: a new digest */
	p = path_join(dir, "check");
	{
		struct timespec ts[2] = { { 1000000000, 0 }, { 1000000000, 0 } };

		assert_int_equal(utimensat(AT_FDCWD, p, ts, 0), 0);
	}
	free(p);
	assert_int_equal(appliance_fstests_files(loop, dir, &files, d3), OK);
	assert_string_not_equal(d1, d3);
	strvec_clear(&files);

	p = test_tmp("nothing-here");
	assert_int_equal(appliance_fstests_files(loop, p, &files, d3), ERR_NOTFOUND);
	free(p);
	free(dir);
}

static void
test_fstests_files_git(void **state)
{
	char *dir = mini_copy("worktree");
	struct strvec files = STRVEC_INIT;
	char d1[65], d2[65];
	char *p;

	(void)state;
	p = path_join(dir, ".gitignore");
	test_write(p, "*.o\n/built-thing\n");
	free(p);
	git(dir, (const char *const[]){ "init", "-q", NULL });
	git(dir, (const char *const[]){ "add", "-A", NULL });
	git(dir, (const char *const[]){ "commit", "-q", "-m", "mini", NULL });
	p = path_join(dir, "built-thing");
	test_write(p, "ignored by .gitignore");
	free(p);
	p = path_join(dir, "tests/generic/new-untracked");
	test_write(p, "untracked but not ignored");
	free(p);
	assert_int_equal(appliance_fstests_files(loop, dir, &files, d1), OK);
	assert_true(strvec_contains(&files, "check"));
	assert_true(strvec_contains(&files, "tests/generic/new-untracked"));
	assert_true(strvec_contains(&files, "tests/generic"));
	assert_false(strvec_contains(&files, "built-thing"));
	assert_false(strvec_contains(&files, ".git"));
	strvec_clear(&files);
	/* an ignored file changing does not change the digest */
	p = path_join(dir, "built-thing");
	test_write(p, "ignored, and longer than before");
	free(p);
	assert_int_equal(appliance_fstests_files(loop, dir, &files, d2), OK);
	assert_string_equal(d1, d2);
	strvec_clear(&files);
	free(dir);
}

/* ---- the agent, the probe ---- */

static void
test_agent_dir(void **state)
{
	char *data = test_tmp("datadir");
	char *dir;

	(void)state;
	setenv("FSWB_DATADIR", data, 1);
	assert_null(rootfs_agent_dir());
	{
		char *a = path_join(data, "src/agent/fswb-agent");
		char *b = path_join(data, "src/agent/fswb-init");

		test_write(a, "#!/bin/sh\n");
		assert_null(rootfs_agent_dir()); /* both or nothing */
		test_write(b, "#!/bin/sh\n");
		dir = rootfs_agent_dir();
		assert_non_null(dir);
		assert_true(str_endswith(dir, "/src/agent"));
		free(dir);
		free(a);
		free(b);
	}
	{
		/* the installed layout wins */
		char *a = path_join(data, "agent/fswb-agent");
		char *b = path_join(data, "agent/fswb-init");

		test_write(a, "#!/bin/sh\n");
		test_write(b, "#!/bin/sh\n");
		dir = rootfs_agent_dir();
		assert_non_null(dir);
		assert_true(str_endswith(dir, "datadir/agent"));
		free(dir);
		free(a);
		free(b);
	}
	{
		char *src = test_srcdir();

		setenv("FSWB_DATADIR", src, 1);
		free(src);
	}
	free(data);
}

static void
test_probe(void **state)
{
	struct strbuf why = STRBUF_INIT;
	char *path = xstrdup(getenv("PATH") ? getenv("PATH") : "");
	enum status rc;

	(void)state;
	rc = appliance_probe(&why);
	if (geteuid() == 0) {
		/* this machine: root with mmdebstrap or debootstrap */
		assert_int_equal(rc, OK);
		assert_true(strstr(why.buf, "mmdebstrap") || strstr(why.buf, "debootstrap"));
		if (strstr(why.buf, "mmdebstrap"))
			assert_non_null(strstr(why.buf, "--mode=root"));
		/* without mmdebstrap in PATH, debootstrap (found in /usr/sbin) is the fallback */
		{
			char *bin = test_tmp("bin");
			char *du = path_join(bin, "du"), *tar = path_join(bin, "tar");

			assert_int_equal(mkdir_p(bin, 0755), OK);
			assert_int_equal(symlink("/usr/bin/du", du), 0);
			assert_int_equal(symlink("/bin/tar", tar), 0);
			setenv("PATH", bin, 1);
			free(du);
			free(tar);
			free(bin);
		}
		rc = appliance_probe(&why);
		setenv("PATH", path, 1);
		if (path_exists("/usr/sbin/debootstrap") || path_exists("/sbin/debootstrap")) {
			assert_int_equal(rc, OK);
			assert_non_null(strstr(why.buf, "debootstrap"));
		} else {
			assert_int_equal(rc, ERR_UNSUPPORTED);
			assert_non_null(strstr(why.buf, "install mmdebstrap"));
		}
	} else {
		/* an ordinary user: OK in unshare mode, or exactly what is missing */
		if (rc == OK)
			assert_non_null(strstr(why.buf, "--mode=unshare"));
		else
			assert_int_equal(rc, ERR_UNSUPPORTED);
	}
	strbuf_release(&why);
	free(path);
}

/* ---- resolving and the key ---- */

static char *
key_of(struct appliance_opts *o)
{
	struct appliance a;
	bool cached = true;
	char *key;

	if (appliance_resolve(loop, NULL, o, &a, &cached) != OK)
		fail_msg("resolve: %s", error_msg());
	assert_false(cached);
	assert_int_equal(strlen(a.key), 64);
	assert_int_equal(strlen(a.id), 12);
	assert_true(str_startswith(a.key, a.id));
	assert_true(str_endswith(a.image, "/root.img"));
	key = xstrdup(a.key);
	appliance_release(&a);
	return key;
}

static void
test_resolve_key(void **state)
{
	char *mini = mini_copy("mini-key");
	struct appliance_opts o = { 0 };
	struct appliance a;
	bool cached;
	char *k1, *k2, *k3, *k4, *k5, *k6;

	(void)state;
	if (appliance_probe(NULL) != OK)
		skip();
	o.fstests_src = mini;
	o.release = "bookworm";
	o.mirror = "http://mirror.example.org/debian";
	k1 = key_of(&o);
	k2 = key_of(&o);
	assert_string_equal(k1, k2); /* stable */

	o.mirror = "http://other.example.org/debian";
	k3 = key_of(&o);
	assert_string_not_equal(k1, k3);

	o.mirror = "http://mirror.example.org/debian";
	o.packages = (const char *const[]){ "mount", NULL };
	k4 = key_of(&o);
	assert_string_not_equal(k1, k4);
	o.packages = NULL;

	/* fstests changing changes the key */
	{
		char *p = path_join(mini, "tests/generic/999");

		test_write(p, "#!/bin/bash\n");
		free(p);
	}
	k5 = key_of(&o);
	assert_string_not_equal(k1, k5);

	/* the config file gives release and mirror; options win */
	write_config("release = bookworm\nmirror = http://mirror.example.org/debian\n");
	o.release = NULL;
	o.mirror = NULL;
	k6 = key_of(&o);
	assert_string_equal(k5, k6);
	assert_int_equal(appliance_resolve(loop, NULL, &o, &a, &cached), OK);
	assert_string_equal(a.mirror, "http://mirror.example.org/debian");
	assert_string_equal(a.release, "bookworm");
	assert_true(str_startswith(a.fstests_rev, "dir:"));
	appliance_release(&a);
	o.mirror = "ftp://ftp.example.org/debian";
	assert_int_equal(appliance_resolve(loop, NULL, &o, &a, &cached), OK);
	assert_string_equal(a.mirror, "ftp://ftp.example.org/debian");
	appliance_release(&a);

	/* bad inputs, named */
	o.mirror = "mirror.example.org";
	assert_int_equal(appliance_resolve(loop, NULL, &o, &a, &cached), ERR_INVALID);
	assert_non_null(strstr(error_msg(), "'mirror.example.org'"));
	o.mirror = NULL;
	o.release = "Bookworm!";
	assert_int_equal(appliance_resolve(loop, NULL, &o, &a, &cached), ERR_INVALID);
	o.release = NULL;
	o.packages = (const char *const[]){ "ok", "two words", NULL };
	assert_int_equal(appliance_resolve(loop, NULL, &o, &a, &cached), ERR_INVALID);
	assert_non_null(strstr(error_msg(), "'two words'"));
	o.packages = NULL;
	o.fstests_src = "/nonexistent/fstests";
	assert_int_equal(appliance_resolve(loop, NULL, &o, &a, &cached), ERR_NOTFOUND);
	{
		char *notfstests = test_tmp("not-fstests");
		char *p = path_join(notfstests, "README");

		test_write(p, "hello\n");
		o.fstests_src = notfstests;
		assert_int_equal(appliance_resolve(loop, NULL, &o, &a, &cached), ERR_INVALID);
		assert_non_null(strstr(error_msg(), "no 'check'"));
		free(p);
		free(notfstests);
	}
	write_config("release = bookworm\nbroken line\n");
	o.fstests_src = mini;
	assert_int_equal(appliance_resolve(loop, NULL, &o, &a, &cached), ERR_PARSE);
	assert_non_null(strstr(error_msg(), "line 2"));
	write_config("");

	/* the agent's contents are in the key */
	{
		char *data = test_tmp("agentdata");
		char *ag = path_join(data, "agent/fswb-agent");
		char *in = path_join(data, "agent/fswb-init");
		char *k7, *k8;

		o.release = "bookworm";
		o.mirror = "http://mirror.example.org/debian";
		setenv("FSWB_DATADIR", data, 1);
		assert_int_equal(appliance_resolve(loop, NULL, &o, &a, &cached), ERR_NOTFOUND);
		assert_non_null(strstr(error_msg(), "guest agent"));
		test_write(ag, "#!/bin/sh\necho 1\n");
		test_write(in, "#!/bin/sh\n");
		k7 = key_of(&o);
		test_write(ag, "#!/bin/sh\necho 2\n");
		k8 = key_of(&o);
		assert_string_not_equal(k7, k8);
		{
			char *src = test_srcdir();

			setenv("FSWB_DATADIR", src, 1);
			free(src);
		}
		free(k7);
		free(k8);
		free(ag);
		free(in);
		free(data);
	}
	free(k1);
	free(k2);
	free(k3);
	free(k4);
	free(k5);
	free(k6);
	free(mini);
}

/*
 * A URL that looks like an option reaches git as a URL: every git command
 * with a URL has "--" before it. (A git in PATH records its arguments.)
 */
static void
test_git_url_not_an_option(void **state)
{
	char *bin = test_tmp("fakegit"), *git_path = path_join(bin, "git");
	char *log = test_tmp("fakegit/log"), *text;
	char *script = xasprintf("#!/bin/sh\nfor a; do printf '%%s\\n' \"$a\"; done >>'%s'\n"
				 "echo ---- >>'%s'\nexit 1\n",
				 log, log);
	char *saved = xstrdup(getenv("PATH")), *path = xasprintf("%s:%s", bin, saved);
	const char *url = "--upload-pack=touch /tmp/fswb-pwned;://example.org/fstests";
	struct appliance_opts o = { 0 };
	struct appliance a;
	bool cached;
	struct strvec lines = STRVEC_INIT;
	size_t urls = 0;

	(void)state;
	if (appliance_probe(NULL) != OK)
		skip();
	test_write(git_path, script);
	assert_int_equal(chmod(git_path, 0755), 0);
	setenv("PATH", path, 1);
	o.release = "bookworm";
	o.mirror = "http://mirror.example.org/debian";
	o.fstests_src = url;
	assert_int_not_equal(appliance_resolve(loop, NULL, &o, &a, &cached), OK);
	setenv("PATH", saved, 1);
	text = test_read(log);
	strvec_split(&lines, text, "\n");
	for (size_t i = 0; i < lines.n; i++) {
		if (strcmp(lines.v[i], url))
			continue;
		urls++;
		if (i == 0 || strcmp(lines.v[i - 1], "--"))
			fail_msg("git got the URL as an option:\n%s", text);
	}
	assert_true(urls > 0);
	strvec_clear(&lines);
	free(text);
	free(bin);
	free(git_path);
	free(log);
	free(script);
	free(saved);
	free(path);
}

static void
test_resolve_git_url(void **state)
{
	char *repo = mini_copy("repo");
	char *url = xasprintf("file://%s", repo);
	struct appliance_opts o = { 0 };
	struct appliance a;
	bool cached;
	char *head1, *head2, *tagged;

	(void)state;
	if (appliance_probe(NULL) != OK)
		skip();
	git(repo, (const char *const[]){ "init", "-q", NULL });
	git(repo, (const char *const[]){ "add", "-A", NULL });
	git(repo, (const char *const[]){ "commit", "-q", "-m", "first", NULL });
	git(repo, (const char *const[]){ "tag", "v1", NULL });
	head1 = run_out((const char *const[]){ "git", "-C", repo, "rev-parse", "HEAD", NULL });
	str_trim(head1);

	o.release = "bookworm";
	o.mirror = "http://mirror.example.org/debian";
	o.fstests_src = url;
	assert_int_equal(appliance_resolve(loop, NULL, &o, &a, &cached), OK);
	assert_string_equal(a.fstests_rev, head1);
	assert_string_equal(a.fstests_src, url);
	appliance_release(&a);
	{
		/* cloned bare into the cache */
		char *cache = fswb_dir(DIR_CACHE);
		char *clones = path_join(cache, "fstests-git");

		assert_true(path_is_dir(clones));
		free(cache);
		free(clones);
	}

	/* a new commit upstream: resolved anew, fetched */
	{
		char *p = path_join(repo, "tests/generic/002");

		test_write(p, "#!/bin/bash\necho second\n");
		free(p);
	}
	git(repo, (const char *const[]){ "add", "-A", NULL });
	git(repo, (const char *const[]){ "commit", "-q", "-m", "second", NULL });
	head2 = run_out((const char *const[]){ "git", "-C", repo, "rev-parse", "HEAD", NULL });
	str_trim(head2);
	assert_string_not_equal(head1, head2);
	assert_int_equal(appliance_resolve(loop, NULL, &o, &a, &cached), OK);
	assert_string_equal(a.fstests_rev, head2);
	appliance_release(&a);

	/* URL#TAG and URL#COMMIT */
	tagged = xasprintf("%s#v1", url);
	o.fstests_src = tagged;
	assert_int_equal(appliance_resolve(loop, NULL, &o, &a, &cached), OK);
	assert_string_equal(a.fstests_rev, head1);
	appliance_release(&a);
	free(tagged);
	tagged = xasprintf("%s#%s", url, head1);
	o.fstests_src = tagged;
	assert_int_equal(appliance_resolve(loop, NULL, &o, &a, &cached), OK);
	assert_string_equal(a.fstests_rev, head1);
	appliance_release(&a);
	free(tagged);
	tagged = xasprintf("%s#no-such-branch", url);
	o.fstests_src = tagged;
	assert_int_equal(appliance_resolve(loop, NULL, &o, &a, &cached), ERR_NOTFOUND);
	assert_non_null(strstr(error_msg(), "no-such-branch"));
	free(tagged);

	/* the remote gone: the clone fetched before still serves, with a warning */
	{
		char *moved = xasprintf("%s.moved", repo);
		struct event_bus bus = EVENT_BUS_INIT;

		assert_int_equal(rename(repo, moved), 0);
		o.fstests_src = url;
		assert_int_equal(appliance_resolve(loop, &bus, &o, &a, &cached), OK);
		assert_string_equal(a.fstests_rev, head2);
		appliance_release(&a);
		assert_int_equal(rename(moved, repo), 0);
		free(moved);
	}
	/* a URL never reached and never cloned */
	o.fstests_src = "file:///nonexistent/fstests.git";
	assert_int_equal(appliance_resolve(loop, NULL, &o, &a, &cached), ERR_CHILD);
	assert_non_null(strstr(error_msg(), "cannot clone"));
	free(head1);
	free(head2);
	free(url);
	free(repo);
}

/* ---- the cache ---- */

static char *
fake_appliance(const char *key, int64_t built)
{
	char *cache = fswb_dir(DIR_CACHE);
	char *dir = xasprintf("%s/appliances/%s", cache, key);
	char *img = path_join(dir, "root.img");
	char *meta = path_join(dir, "appliance.json");
	char *json =
		xasprintf("{\"format\": 1, \"key\": \"%s\", \"release\": \"bookworm\", "
			  "\"mirror\": \"http://m.example.org/debian\", \"tool\": "
			  "\"mmdebstrap\", \"packages\": [\"a\", \"b\"], \"fstests\": "
			  "{\"source\": \"/src\", \"revision\": \"dir:00\"}, \"built\": %lld, "
			  "\"build_seconds\": 61.5, \"image_size\": 1000, \"image_used\": 500}\n",
			  key, (long long)built);

	test_write(img, "not really an image");
	test_write(meta, json);
	free(cache);
	free(img);
	free(meta);
	free(json);
	return dir;
}

static void
test_list_remove(void **state)
{
	struct appliance *v;
	size_t n;
	unsigned removed;
	char *a = fake_appliance("aaaa111111111111111111111111111111111111111111111111111111111111",
				 100);
	char *b = fake_appliance("aaaa222222222222222222222222222222222222222222222222222222222222",
				 200);
	char *c = fake_appliance("cccc333333333333333333333333333333333333333333333333333333333333",
				 150);

	(void)state;
	assert_int_equal(appliance_list(&v, &n), OK);
	assert_int_equal(n, 3);
	/* newest first */
	assert_string_equal(v[0].id, "aaaa22222222");
	assert_string_equal(v[1].id, "cccc33333333");
	assert_string_equal(v[2].id, "aaaa11111111");
	assert_string_equal(v[0].release, "bookworm");
	assert_string_equal(v[0].fstests_src, "/src");
	assert_int_equal(v[0].packages, 2);
	assert_int_equal(v[0].image_used, 500);
	assert_true(str_endswith(v[0].image, "/root.img"));
	appliance_list_free(v, n);

	assert_int_equal(appliance_remove("zz"), ERR_INVALID);
	assert_int_equal(appliance_remove("aaaa"), ERR_INVALID);
	assert_non_null(strstr(error_msg(), "2 appliances"));
	assert_int_equal(appliance_remove("dddd"), ERR_NOTFOUND);

	/* a build holding the lock: busy */
	{
		char *cache = fswb_dir(DIR_CACHE);
		char *lock =
			xasprintf("%s/appliances/cccc333333333333333333333333333333333333333333"
				  "333333333333333333.lock",
				  cache);
		int fd = open(lock, O_RDWR | O_CREAT, 0644);

		assert_true(fd >= 0);
		assert_int_equal(flock(fd, LOCK_EX), 0);
		assert_int_equal(appliance_remove("cccc"), ERR_BUSY);
		close(fd);
		free(lock);
		free(cache);
	}
	assert_int_equal(appliance_remove("aaaa1"), OK);
	assert_false(path_exists(a));
	assert_int_equal(appliance_list(&v, &n), OK);
	assert_int_equal(n, 2);
	appliance_list_free(v, n);

	/* a half-finished directory is not listed, and --all clears it too */
	{
		char *cache = fswb_dir(DIR_CACHE);
		char *tmp = xasprintf("%s/appliances/cccc333333333333333333333333333333333333333333"
				      "333333333333333333.tmp.99999/root/etc/x",
				      cache);

		test_write(tmp, "x");
		free(tmp);
		free(cache);
	}
	assert_int_equal(appliance_remove_all(&removed), OK);
	assert_int_equal(removed, 2);
	assert_false(path_exists(b));
	assert_false(path_exists(c));
	assert_int_equal(appliance_list(&v, &n), OK);
	assert_int_equal(n, 0);
	appliance_list_free(v, n);
	{
		char *cache = fswb_dir(DIR_CACHE);
		char *apps = path_join(cache, "appliances");
		struct strvec left = STRVEC_INIT;
		DIR *d = opendir(apps);
		struct dirent *de;

		while ((de = readdir(d)))
			if (de->d_name[0] != '.' && !str_endswith(de->d_name, ".lock"))
				strvec_push(&left, de->d_name);
		closedir(d);
		assert_int_equal(left.n, 0);
		strvec_clear(&left);
		free(apps);
		free(cache);
	}
	free(a);
	free(b);
	free(c);
}

/* ---- a second fswb waits for the first ---- */

struct waiter {
	struct strvec details;
	bool begin, end;
	enum status end_code;
	bool cancel;
	char *key;
	int lockfd;
	bool publish; /* finish "the other build" instead of cancelling */
};

static void
on_event(void *data, const struct event *ev)
{
	struct waiter *w = data;

	if (ev->type == EV_STAGE_BEGIN)
		w->begin = true;
	if (ev->type == EV_STAGE_END) {
		w->end = true;
		w->end_code = ev->u.stage.code;
	}
	if (ev->type == EV_STAGE_PROGRESS && ev->u.stage.detail)
		strvec_push(&w->details, ev->u.stage.detail);
}

static void
on_timer(struct loop *l, void *data)
{
	struct waiter *w = data;

	(void)l;
	if (w->publish) {
		/* the other fswb finishes: its appliance appears, its lock goes */
		char *dir = fake_appliance(w->key, 300);

		free(dir);
		close(w->lockfd);
		w->lockfd = -1;
	} else {
		w->cancel = true;
	}
}

static void
test_lock_wait(void **state)
{
	char *mini = mini_copy("mini-lock");
	struct appliance_opts o = { 0 };
	struct appliance a;
	struct event_bus bus = EVENT_BUS_INIT;
	struct waiter w = { .lockfd = -1 };
	bool cached;
	char *cache, *lock;
	uint64_t start;

	(void)state;
	if (appliance_probe(NULL) != OK)
		skip();
	strvec_init(&w.details);
	o.fstests_src = mini;
	o.release = "bookworm";
	o.mirror = "http://mirror.example.org/debian";
	o.cancel = &w.cancel;
	assert_int_equal(appliance_resolve(loop, NULL, &o, &a, &cached), OK);
	w.key = xstrdup(a.key);
	appliance_release(&a);
	assert_int_equal(fswb_dir_make(DIR_CACHE, "appliances", &cache), OK);
	lock = xasprintf("%s/%s.lock", cache, w.key);
	w.lockfd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	assert_true(w.lockfd >= 0);
	assert_int_equal(flock(w.lockfd, LOCK_EX), 0);
	event_bus_add(&bus, (struct listener){ on_event, &w });

	/* cancelled while waiting: ERR_INTERRUPTED, nothing built */
	loop_add_timer(loop, 600, false, on_timer, &w);
	start = loop_now_ms();
	assert_int_equal(appliance_ensure(loop, &bus, &o, &a), ERR_INTERRUPTED);
	assert_true(loop_now_ms() - start >= 500);
	assert_true(w.begin && w.end);
	assert_int_equal(w.end_code, ERR_INTERRUPTED);
	assert_true(
		strvec_contains(&w.details, "waiting for another fswb building this appliance"));

	/* the other one finishes: this one reuses what it built */
	w.cancel = false;
	w.publish = true;
	w.begin = w.end = false;
	loop_add_timer(loop, 400, false, on_timer, &w);
	assert_int_equal(appliance_ensure(loop, &bus, &o, &a), OK);
	assert_true(a.reused);
	assert_string_equal(a.key, w.key);
	assert_int_equal(a.built, 300);
	assert_true(w.end);
	assert_int_equal(w.end_code, OK);
	appliance_release(&a);

	/* and now at once, from the cache */
	start = loop_now_ms();
	assert_int_equal(appliance_ensure(loop, &bus, &o, &a), OK);
	assert_true(a.reused);
	assert_true(loop_now_ms() - start < 1000);
	appliance_release(&a);

	event_bus_release(&bus);
	strvec_clear(&w.details);
	if (w.lockfd >= 0)
		close(w.lockfd);
	free(w.key);
	free(lock);
	free(cache);
	free(mini);
}

static void
test_packages_list(void **state)
{
	static const char *const must[] = { "xfsprogs", "e2fsprogs", "btrfs-progs", "f2fs-tools",
					    "fio", "attr", "acl", "quota", "mount", "kmod", "gcc",
					    "make", "xfslibs-dev", "liburing-dev", "uuid-runtime",
					    "psmisc",
					    /* nfs/loopback's server and client */
					    "nfs-kernel-server", "nfs-common", "rpcbind",
					    "nfs4-acl-tools", "iproute2" };
	struct strvec v = STRVEC_INIT;

	(void)state;
	strvec_pushv(&v, appliance_packages);
	for (size_t i = 0; i < ARRAY_SIZE(must); i++)
		if (!strvec_contains(&v, must[i]))
			fail_msg("'%s' is not in appliance_packages", must[i]);
	/* no duplicates */
	for (size_t i = 0; i < v.n; i++)
		for (size_t j = i + 1; j < v.n; j++)
			assert_string_not_equal(v.v[i], v.v[j]);
	strvec_clear(&v);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config_read),
		cmocka_unit_test(test_host_release),
		cmocka_unit_test(test_host_mirror_list),
		cmocka_unit_test(test_host_mirror_deb822),
		cmocka_unit_test(test_src_is_url),
		cmocka_unit_test(test_default_target),
		cmocka_unit_test(test_build_progress),
		cmocka_unit_test(test_fstests_files_walk),
		cmocka_unit_test(test_fstests_files_git),
		cmocka_unit_test(test_agent_dir),
		cmocka_unit_test(test_probe),
		cmocka_unit_test(test_resolve_key),
		cmocka_unit_test(test_resolve_git_url),
		cmocka_unit_test(test_git_url_not_an_option),
		cmocka_unit_test(test_list_remove),
		cmocka_unit_test(test_lock_wait),
		cmocka_unit_test(test_packages_list),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
