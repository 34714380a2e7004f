/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The not-run explainer over check's real phrasings (from common/rc and the
 * fixtures), grouping, and, when FSWB_FSTESTS_SRC names a tree, over every
 * _notrun message in its common/ files.
 */
#include "testlib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/paths.h"
#include "core/util.h"
#include "fstests/notrun.h"
#include "fstests/results.h"

static void
expect(const char *reason, const char *id, const char *subject, const char *in_fix)
{
	struct notrun_explanation e;
	bool known = notrun_explain(reason, &e);

	if (!id) {
		assert_false(known);
		assert_null(e.id);
		assert_null(e.fix);
		notrun_explanation_release(&e);
		return;
	}
	if (!known || strcmp(e.id, id))
		fail_msg("'%s': got rule '%s', want '%s'", reason, known ? e.id : "(none)", id);
	if (subject && (!e.subject || strcmp(e.subject, subject)))
		fail_msg("'%s': got subject '%s', want '%s'", reason,
			 e.subject ? e.subject : "(none)", subject);
	if (!subject && e.subject)
		fail_msg("'%s': unexpected subject '%s'", reason, e.subject);
	assert_non_null(e.cause);
	assert_non_null(e.fix);
	if (in_fix && !strstr(e.fix, in_fix))
		fail_msg("'%s': fix '%s' does not mention '%s'", reason, e.fix, in_fix);
	notrun_explanation_release(&e);
}

static void
test_explain(void **state)
{
	(void)state;
	expect("this test requires a valid $SCRATCH_DEV", "scratch-dev", NULL, "scratch_size");
	expect("this test requires a valid $SCRATCH_DEV_POOL", "scratch-pool", NULL,
	       "pool_devices");
	expect("btrfs and this test needs 4 or more disks in SCRATCH_DEV_POOL", "scratch-pool",
	       NULL, NULL);
	expect("this test requires a valid $TEST_DEV", "test-dev", NULL, NULL);
	expect("This test requires a valid $LOGWRITES_DEV", "logwrites-dev", NULL, "LOGWRITES_DEV");
	expect("This test requires a valid $SCRATCH_LOGDEV", "external-log", NULL, "logdev_size");
	expect("This test requires USE_EXTERNAL to be enabled", "external-log", NULL, NULL);
	expect("Realtime device required, skipped this test", "rt-dev", NULL, "rtdev_size");
	expect("fsgqa user not defined.", "user", "fsgqa", "useradd");
	expect("fsgqa2 user not defined.", "user", "fsgqa2", NULL);
	expect("fsgqa group not defined.", "user", "fsgqa", NULL);
	expect("fsgqa cannot execute commands.", "user", "fsgqa", NULL);
	expect("123456-fsgqa user not defined.", "user-123456", NULL, "123456-fsgqa");
	expect("Installed kernel not built with CONFIG_XFS_DEBUG", "kconfig", "CONFIG_XFS_DEBUG",
	       "CONFIG_XFS_DEBUG=y");
	expect("XFS error injection requires CONFIG_XFS_DEBUG", "kconfig", "CONFIG_XFS_DEBUG",
	       NULL);
	expect("Need compaction enabled CONFIG_COMPACTION=y", "kconfig", "CONFIG_COMPACTION", NULL);
	expect("something about CONFIG_FOO_BAR only", "kconfig", "CONFIG_FOO_BAR", NULL);
	expect("This test requires dm flakey support", "dm-target", "flakey", "CONFIG_DM_FLAKEY");
	expect("This test requires dm log-writes support", "dm-target", "log-writes",
	       "CONFIG_DM_LOG_WRITES");
	expect("This test requires error_writes feature in dm-flakey", "dm-target", "flakey", NULL);
	expect("failed to create dm thin pool device", "dm-target", "thin-pool", NULL);
	expect("xfs_io fiemap support is missing", "xfs-io-command", "fiemap", "xfsprogs");
	expect("xfs_io falloc -k failed (old kernel/wrong fs?)", "xfs-io-command", "falloc -k",
	       NULL);
	expect("xfs_io statx doesn't support -r", "xfs-io-command", "statx", NULL);
	expect("fio utility required, skipped this test", "program", "fio", "fio");
	expect("This test requires dumpe2fs utility.", "program", "dumpe2fs", NULL);
	expect("setfattr command not found", "program", "setfattr", NULL);
	expect("fssum not built", "program", "fssum", NULL);
	expect("xfsdump not found", "program", "xfsdump", NULL);
	expect("Quota user tools not installed", "quota-tools", NULL, "quota package");
	expect("Installed kernel does not support quotas", "quota", NULL, "CONFIG_QUOTA");
	expect("Project quota not enabled in this device /dev/vdc", "quota", NULL, NULL);
	expect("kernel does not support IO_URING", "kernel-feature", "IO_URING", "kernel");
	expect("kernel doesn't support renameat2 syscall", "kernel-feature", "renameat2 syscall",
	       NULL);
	expect("UUID ioctls are not supported by kernel.", "kernel-feature", "UUID ioctls", NULL);
	expect("userns not supported by this kernel", "kernel-feature", "userns", NULL);
	expect("mkfs.xfs does not support parent pointers", "mkfs-feature", "mkfs.xfs", "xfsprogs");
	expect("mkfs.ext4 doesn't support metadata_csum feature", "mkfs-feature", "mkfs.ext4",
	       NULL);
	expect("ext4 does not define maximum ACL count", "fs-feature", NULL, "nothing to fix");
	expect("Reflink not supported by scratch filesystem type: ext4", "fs-feature", NULL, NULL);
	expect("This test must run in a VM", "vm", NULL, NULL);
	expect("Scratch device too small", "device-size", NULL, "scratch_size");
	expect("test requires delayed allocation buffered writes", "requirement",
	       "delayed allocation buffered writes", NULL);
	expect("  This test requires a valid $LOGWRITES_DEV  ", "logwrites-dev", NULL, NULL);
	expect("a reason nobody has written a rule for", NULL, NULL, NULL);

	{
		struct notrun_explanation e;

		assert_false(notrun_explain("", &e));
		assert_string_equal(e.cause, "no reason given");
		notrun_explanation_release(&e);
		assert_true(notrun_explain("ext4 does not define maximum ACL count", &e));
		assert_true(e.natural);
		notrun_explanation_release(&e);
		assert_true(notrun_explain("fio utility required, skipped this test", &e));
		assert_false(e.natural);
		assert_non_null(strstr(e.cause, "'fio'"));
		notrun_explanation_release(&e);
	}
}

static void
test_group(void **state)
{
	const char *tests[] = { "generic/001", "btrfs/002",  "btrfs/003",   "generic/004",
				"generic/005", "btrfs/006",  "generic/007", "generic/008",
				"generic/009", "generic/010" };
	const char *reasons[] = {
		"fio utility required, skipped this test",
		"this test requires a valid $SCRATCH_DEV_POOL",
		"btrfs and this test needs 3 or more disks in SCRATCH_DEV_POOL",
		"duperemove utility required, skipped this test",
		"fio utility required, skipped this test",
		"this test requires a valid $SCRATCH_DEV_POOL",
		"something odd",
		"something odd",
		NULL,
		"Something odd else",
	};
	struct notrun_groups g;

	(void)state;
	notrun_group(tests, reasons, ARRAY_SIZE(tests), &g);
	assert_int_equal(g.n, 6);
	/* biggest first: the pool (3), then fio and "something odd" (2 each, by cause) */
	assert_string_equal(g.groups[0].id, "scratch-pool");
	assert_int_equal(g.groups[0].tests.n, 3);
	assert_string_equal(g.groups[0].tests.v[0], "btrfs/002");
	assert_int_equal(g.groups[0].reasons.n, 2);
	assert_int_equal(g.groups[1].tests.n, 2);
	assert_int_equal(g.groups[2].tests.n, 2);
	assert_true(strcmp(g.groups[1].cause, g.groups[2].cause) < 0);
	for (size_t i = 1; i <= 2; i++) {
		if (g.groups[i].id) {
			assert_string_equal(g.groups[i].id, "program");
			assert_string_equal(g.groups[i].subject, "fio");
		} else {
			assert_string_equal(g.groups[i].cause, "something odd");
			assert_null(g.groups[i].fix);
		}
	}
	/* one group each: duperemove, "Something odd else", no reason */
	for (size_t i = 3; i < g.n; i++)
		assert_int_equal(g.groups[i].tests.n, 1);
	notrun_groups_release(&g);

	notrun_group(NULL, NULL, 0, &g);
	assert_int_equal(g.n, 0);
	notrun_groups_release(&g);
}

/* The not-run tests of fixture A, through the results import. */
static void
test_fixture_a(void **state)
{
	char *dir = test_fixture("A-plain-pass-notrun/results");
	struct run_record rec;
	struct strvec t = STRVEC_INIT, r = STRVEC_INIT;
	struct notrun_groups g;

	(void)state;
	if (!path_is_dir(dir)) {
		fprintf(stderr, "# SKIP the fstests fixtures are not there (%s)\n", dir);
		free(dir);
		skip();
	}
	assert_int_equal(results_import(dir, &rec), OK);
	for (size_t i = 0; i < rec.sections[0].ntests; i++) {
		if (rec.sections[0].tests[i].status != TS_NOTRUN)
			continue;
		strvec_push(&t, rec.sections[0].tests[i].test);
		strvec_push(&r, rec.sections[0].tests[i].reason);
	}
	notrun_group((const char *const *)t.v, (const char *const *)r.v, t.n, &g);
	assert_int_equal(g.n, 2);
	assert_true(!strcmp(g.groups[0].id, "fs-feature") || !strcmp(g.groups[1].id, "fs-feature"));
	assert_true(!strcmp(g.groups[0].id, "logwrites-dev") ||
		    !strcmp(g.groups[1].id, "logwrites-dev"));
	notrun_groups_release(&g);
	strvec_clear(&t);
	strvec_clear(&r);
	run_record_release(&rec);
	free(dir);
}

/* Every literal _notrun "..." message of the tree's common/ files. */
static void
test_real_messages(void **state)
{
	const char *src = getenv("FSWB_FSTESTS_SRC");
	const char *files[] = { "common/rc",   "common/quota",	 "common/dmflakey",
				"common/log",  "common/xfs",	 "common/btrfs",
				"common/ext4", "common/encrypt", "common/verity",
				"common/attr", "common/reflink", "common/dmlogwrites" };
	size_t total = 0, known = 0;

	(void)state;
	if (!src || !*src) {
		fprintf(stderr, "# SKIP FSWB_FSTESTS_SRC does not name an fstests tree\n");
		skip();
	}
	for (size_t f = 0; f < ARRAY_SIZE(files); f++) {
		char *path = path_join(src, files[f]), *text = NULL;
		size_t len;

		if (!path_exists(path) || read_file(path, 16u << 20, &text, &len) != OK) {
			free(path);
			continue;
		}
		for (const char *p = strstr(text, "_notrun \""); p;
		     p = strstr(p + 1, "_notrun \"")) {
			const char *s = p + 9, *e = strchr(s, '"');
			struct notrun_explanation ex;
			char *msg;

			if (!e || e == s || memchr(s, '\n', (size_t)(e - s)))
				continue;
			msg = xstrndup(s, (size_t)(e - s));
			total++;
			if (notrun_explain(msg, &ex))
				known++;
			else
				fprintf(stderr, "# unknown: %s\n", msg);
			notrun_explanation_release(&ex);
			free(msg);
		}
		free(text);
		free(path);
	}
	fprintf(stderr, "# %zu of %zu _notrun messages in %s/common explained\n", known, total,
		src);
	assert_true(total > 200);
	assert_true(known * 100 >= total * 80);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_explain),
		cmocka_unit_test(test_group),
		cmocka_unit_test(test_fixture_a),
		cmocka_unit_test(test_real_messages),
	};

	return cmocka_run_group_tests_name("notrun", tests, test_setup_hermetic,
					   test_teardown_hermetic);
}
