/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Imports into history: an xfstests-bld-shaped results tree (kvm-xfstests,
 * gce-xfstests: run-stats, runtests.log, FS/results-TC/ with a config file)
 * and check's results directory with sections, both built here from the
 * real fstests fixtures; what is not a regular file or directory is never
 * read nor copied; the runs then count in history.
 */
#include "testlib.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/paths.h"
#include "fstests/history.h"
#include "fstests/import.h"
#include "fstests/report.h"

/* Copy a fixture directory (regular files and directories) to dst. */
static void
copy_fixture(const char *src, const char *dst)
{
	DIR *d = opendir(src);
	struct dirent *de;

	assert_non_null(d);
	assert_int_equal(mkdir_p(dst, 0755), OK);
	while ((de = readdir(d))) {
		char *from, *to;

		if (de->d_name[0] == '.')
			continue;
		from = path_join(src, de->d_name);
		to = path_join(dst, de->d_name);
		if (path_is_dir(from)) {
			copy_fixture(from, to);
		} else {
			size_t len;
			char *data = read_regular(from, 1u << 24, &len);

			assert_non_null(data);
			assert_int_equal(write_file_atomic(to, data, len, 0644), OK);
			free(data);
		}
		free(from);
		free(to);
	}
	closedir(d);
}

/* A fixture case's results directory copied to root/rel. */
static void
place(const char *root, const char *rel, const char *fixture_case)
{
	char *from_rel = xasprintf("%s/results", fixture_case), *from = test_fixture(from_rel),
	     *to = path_join(root, rel);

	copy_fixture(from, to);
	free(to);
	free(from);
	free(from_rel);
}

static void
test_bld_tree(void **state)
{
	char *root = test_tmp("bld"), *p, *id, *dir, *text;
	struct run_record rec, back;
	struct strvec dirs;

	place(root, "ext4/results-4k", "B-mismatch");
	place(root, "ext4/results-1k", "A-plain-pass-notrun");
	p = path_join(root, "ext4/results-1k/config");
	test_write(p, "FS: ext4\nTESTNAME: smoke\nTEST_DEV: /dev/vdb\nEXT_MKFS_OPTIONS: -b 1024\n"
		      "EXT_MOUNT_OPTIONS: \n");
	free(p);
	p = path_join(root, "run-stats");
	test_write(p, "TESTRUNID: ltm-20261203\nKERNEL: kernel\t6.7.0-rc1-00012-gabcdef12 #3 "
		      "SMP PREEMPT x86_64\nFSTESTVER: fstests v2026.11.30\n");
	free(p);
	p = path_join(root, "runtests.log");
	test_write(p, "BEGIN TEST 4k: Ext4 4k block\n");
	free(p);
	/* a link out of the tree: never read, never copied */
	p = path_join(root, "ext4/results-4k/generic/005.full");
	unlink(p);
	assert_int_equal(symlink("/etc/passwd", p), 0);
	free(p);

	assert_true(import_is_bld(root));
	p = path_join(root, "ext4/results-4k");
	assert_false(import_is_bld(p));
	free(p);
	assert_int_equal(import_results(root, &rec, &dirs), OK);
	assert_string_equal(rec.kernel, "6.7.0-rc1-00012-gabcdef12");
	assert_int_equal(rec.nsections, 2);
	assert_string_equal(rec.sections[0].config, "ext4/1k");
	assert_string_equal(rec.sections[1].config, "ext4/4k");
	assert_string_equal(rec.sections[0].mkfs_options, "-b 1024");
	assert_string_equal(rec.sections[1].fstyp, "ext4");
	assert_int_equal(dirs.n, 2);
	assert_true(str_endswith(dirs.v[1], "/ext4/results-4k"));
	assert_int_equal(rec.sections[1].counts.failed, 1);

	assert_int_equal(import_keep(&rec, &dirs, &id), OK);
	assert_true(str_startswith(id, "2026"));
	dir = history_run_dir(id);
	p = path_join(dir, "results/ext4-4k/generic/002.out.bad");
	assert_true(path_exists(p));
	free(p);
	p = path_join(dir, "results/ext4-4k/generic/005.full");
	assert_false(path_exists(p));
	free(p);
	assert_true(str_startswith(rec.sections[1].tests[0].out_bad, dir));
	/* it is a run of the history now */
	assert_int_equal(history_load(id, &back), OK);
	assert_string_equal(back.id, id);
	assert_int_equal(back.nsections, 2);
	run_record_release(&back);
	text = run_dir_file(dir, "ext4/4k", "generic/002.out.bad");
	assert_non_null(text);
	free(text);
	{
		char *last;

		assert_int_equal(history_resolve("last", &last), OK);
		assert_string_equal(last, id);
		free(last);
	}
	/* the same results again: a run of its own */
	{
		char *id2;

		assert_int_equal(import_keep(&rec, &dirs, &id2), OK);
		assert_string_equal(id2 + strlen(id), "-2");
		free(id2);
	}
	strvec_clear(&dirs);
	run_record_release(&rec);
	free(dir);
	free(id);
	free(root);
}

static void
test_sections(void **state)
{
	char *root = test_tmp("sections"), *p, *id, *dir;
	struct run_record rec;
	struct strvec dirs;

	place(root, "results/ext4_4k", "B-mismatch");
	place(root, "results/xfs_4k", "A-plain-pass-notrun");
	assert_int_equal(import_results(root, &rec, &dirs), OK);
	assert_int_equal(rec.nsections, 2);
	assert_string_equal(section_config_name(&rec.sections[0]), "ext4_4k");
	assert_true(str_endswith(dirs.v[0], "results/ext4_4k"));
	assert_true(str_endswith(dirs.v[1], "results/xfs_4k"));
	assert_int_equal(import_keep(&rec, &dirs, &id), OK);
	dir = history_run_dir(id);
	p = path_join(dir, "results/xfs_4k/check.log");
	assert_true(path_exists(p));
	free(p);
	strvec_clear(&dirs);
	run_record_release(&rec);

	/* a missing path says so */
	assert_int_equal(import_results("/nonexistent/results", &rec, &dirs), ERR_NOTFOUND);
	free(dir);
	free(id);
	free(root);
}

static void
test_purge(void **state)
{
	char *root = test_tmp("purge"), *f = path_join(root, "a/b/file"),
	     *l = path_join(root, "a/link"), *fifo = path_join(root, "a/b/fifo"), *deep;

	test_write(f, "kept\n");
	assert_int_equal(symlink("/etc", l), 0);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	deep = path_join(root, "1/2/3/4/5/6/7/8/9/10/too-deep");
	test_write(deep, "x");
	assert_int_equal(import_purge(root), OK);
	assert_true(path_exists(f));
	assert_false(path_exists(l) || access(l, F_OK) == 0);
	assert_false(path_exists(fifo));
	assert_false(path_exists(deep));
	free(deep);
	free(fifo);
	free(l);
	free(f);
	free(root);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bld_tree),
		cmocka_unit_test(test_sections),
		cmocka_unit_test(test_purge),
	};

	return cmocka_run_group_tests_name("import", tests, test_setup_hermetic,
					   test_teardown_hermetic);
}
