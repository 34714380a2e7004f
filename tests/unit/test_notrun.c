/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The not-run explainer over reasons written the way fstests words its
 * _notrun calls (check prints them as "[not run] MESSAGE"), against
 * profiles of the test's own (a scratch profiles/ with the configurations
 * and kernel fragments a fix may name), and grouping. How much of a real
 * tree's messages it explains is measured by bench/bench_notrun.
 */
#include "testlib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/paths.h"
#include "core/profile.h"
#include "core/util.h"
#include "fstests/notrun.h"
#include "fstests/results.h"

static struct profiles profiles;
/* the appliance's packages, as far as these tests need them */
static const char *const packages[] = { "fio",	    "e2fsprogs", "attr", "xfsdump",
					"xfsprogs", "quota",	 NULL };
static struct notrun_context ctx = { &profiles, "xfs", packages, false };

static void
write_profile(const char *rel, const char *text)
{
	char *path = xasprintf("%s/profiles/%s", test_scratch, rel);

	test_write(path, text);
	free(path);
}

#define CONFIG(fs, extra)                                                                    \
	"description = a configuration\nfstyp = " fs "\ntest_size = 1G\nscratch_size = 1G\n" \
	"kconfig = BLOCK\n" extra

/* A profiles/ of the test's own: what the fixes name must come from it. */
static int
setup(void **state)
{
	char *dir;

	if (test_setup_hermetic(state))
		return -1;
	write_profile("sets/one.conf", "description = a set\ngroups = quick\n");
	write_profile("fs/ext4/plain.conf", CONFIG("ext4", ""));
	write_profile("fs/ext4/quota.conf", CONFIG("ext4", "mount_options = usrquota\n"));
	write_profile("fs/btrfs/many.conf", CONFIG("btrfs", "pool_devices = 4\n"));
	write_profile("fs/xfs/plain.conf", CONFIG("xfs", ""));
	write_profile("fs/xfs/withlog.conf", CONFIG("xfs", "logdev_size = 1G\n"));
	write_profile("fs/xfs/withrt.conf", CONFIG("xfs", "rtdev_size = 1G\n"));
	write_profile("fs/ext4/withrt.conf", CONFIG("ext4", "rtdev_size = 1G\n"));
	write_profile("kconfig/base.config",
		      "CONFIG_QUOTA=y\nCONFIG_SCSI_DEBUG=m\nCONFIG_BLK_DEV_LOOP=y\n");
	write_profile("kconfig/xfs.config",
		      "CONFIG_XFS_ONLINE_SCRUB=y\n# CONFIG_XFS_DEBUG is not set\n");
	write_profile("kconfig/debug-xfs.config", "CONFIG_XFS_DEBUG=y\nCONFIG_QUOTA=y\n");
	dir = xasprintf("%s/profiles", test_scratch);
	if (profiles_load(dir, &profiles) != OK) {
		fprintf(stderr, "profiles: %s\n", error_msg());
		free(dir);
		return -1;
	}
	free(dir);
	return 0;
}

static int
teardown(void **state)
{
	profiles_release(&profiles);
	return test_teardown_hermetic(state);
}

enum kind { FIX, NATURAL, GENERIC };

/* reason explained by rule id, naming subject (NULL: none), the fix holding in_fix. */
static void
expect(const char *reason, const char *id, const char *subject, enum kind kind, const char *in_fix)
{
	struct notrun_explanation e;
	bool known = notrun_explain(reason, &ctx, &e);

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
	if (e.natural != (kind == NATURAL))
		fail_msg("'%s': natural is %d", reason, e.natural);
	if (e.generic != (kind == GENERIC))
		fail_msg("'%s': generic is %d", reason, e.generic);
	if (in_fix && !strstr(e.fix, in_fix))
		fail_msg("'%s': fix '%s' does not mention '%s'", reason, e.fix, in_fix);
	notrun_explanation_release(&e);
}

/*
 * A machine of the user's (ssh): what fswb would put in its kernel or
 * appliance is done on that machine; the other fixes stay.
 */
static void
test_own_machine(void **state)
{
	(void)state;
	ctx.own_machine = true;
	expect("This test requires a valid $LOGWRITES_DEV", "logwrites-dev", NULL, FIX,
	       "-o logwrites=DEV");
	expect("Installed kernel not built with CONFIG_QFMT_V2", "kconfig", "CONFIG_QFMT_V2", FIX,
	       "the test machine's kernel lacks CONFIG_QFMT_V2");
	expect("fio utility required, skipped this test", "program", "fio", FIX,
	       "install fio on the test machine (the package fio has it)");
	ctx.own_machine = false;
	expect("This test requires a valid $LOGWRITES_DEV", "logwrites-dev", NULL, FIX,
	       "a device fswb gives the guest");
}

/* Devices: the fix is a configuration of the profiles that has one, the run's filesystem first. */
static void
test_devices(void **state)
{
	(void)state;
	expect("this test requires a valid $SCRATCH_DEV", "scratch-dev", NULL, FIX, NULL);
	expect("this test requires a valid $SCRATCH_MNT and unique $SCRATCH_DEV", "scratch-dev",
	       NULL, FIX, NULL);
	expect("require /dev/vdq to be valid block disk", "scratch-dev", NULL, FIX, NULL);
	expect("this test requires a valid $TEST_DEV", "test-dev", NULL, FIX, NULL);
	expect("this test requires a valid $SCRATCH_DEV_POOL", "scratch-pool", NULL, FIX,
	       "fswb run -c btrfs/many");
	expect("btrfs and this test needs 6 or more disks in SCRATCH_DEV_POOL", "scratch-pool",
	       NULL, FIX, "btrfs/many");
	expect("dev_pool is not supported by fstype \"ext4\"", "pool-fs", NULL, NATURAL, NULL);
	expect("/dev/vdb is part of TEST_DEV, this test requires unique disks", "device-overlap",
	       NULL, FIX, NULL);
	expect("This test requires a valid $SCRATCH_LOGDEV", "external-log", NULL, FIX,
	       "fswb run -c xfs/withlog");
	expect("External volumes not in use, skipped this test", "external-log", NULL, FIX,
	       "xfs/withlog");
	/* the run's filesystem (xfs) first, then the others */
	expect("Realtime device required, skipped this test", "rt-dev", NULL, FIX,
	       "fswb run -c xfs/withrt (also: ext4/withrt)");
	expect("Quotas probably not supported on realtime scratch device; set TEST_RTDEV",
	       "rt-quota", NULL, FIX, "-c xfs/withrt");
	/* a device fswb gives itself: never "set it" */
	expect("This test requires a valid $LOGWRITES_DEV", "logwrites-dev", NULL, FIX,
	       "a device fswb gives");
	expect("  This test requires a valid $LOGWRITES_DEV  ", "logwrites-dev", NULL, FIX, NULL);
	expect("Zone count too small", "zoned", NULL, NATURAL, NULL);
	/* common/nfs's and common/rc's words, on a configuration of another version */
	expect("Test requires $TEST_DEV mounted as NFSv4", "nfs-version", NULL, NATURAL,
	       "nfs/loopback_v4");
	expect("nfs version 3 does not support negative timestamps", "nfs-version", NULL, NATURAL,
	       NULL);
	expect("this test require non-zoned block device", "zoned", NULL, NATURAL, NULL);
	expect("Cannot use flakey devices on DAX capable block devices.", "dax", NULL, NATURAL,
	       NULL);
	expect("this test requires a valid UBI volume for $TEST_DEV", "ubi", NULL, NATURAL, NULL);
	expect("No dump tape specified", "tape", NULL, NATURAL, NULL);
	expect("Not enough memory (1000000) for tmpfs with 2000000000 bytes", "memory", NULL, FIX,
	       "--mem");
	expect("Scratch device too small", "device-size", NULL, FIX, NULL);
	/* no configuration has an overlay: the overlay tests do not apply */
	expect("upper fs needs to support d_type", "overlay", NULL, NATURAL, NULL);

	{
		struct notrun_explanation e;

		/* without profiles, no configuration is named */
		assert_true(
			notrun_explain("Realtime device required, skipped this test", NULL, &e));
		assert_null(strstr(e.fix, "-c "));
		notrun_explanation_release(&e);
	}
}

/* The kernel: the fragment of profiles/kconfig/ that has the option, --debug when it is one. */
static void
test_kernel(void **state)
{
	(void)state;
	expect("Installed kernel not built with CONFIG_XFS_DEBUG", "kconfig", "CONFIG_XFS_DEBUG",
	       FIX, "fswb run --debug xfs");
	expect("XFS error injection requires CONFIG_XFS_DEBUG", "kconfig", "CONFIG_XFS_DEBUG", FIX,
	       "--debug xfs");
	expect("Need compaction enabled CONFIG_COMPACTION=y", "kconfig", "CONFIG_COMPACTION", FIX,
	       "CONFIG_COMPACTION=y: add it to a fragment");
	expect("something about CONFIG_FOO_BAR only", "kconfig", "CONFIG_FOO_BAR", FIX, NULL);
	/* a regular fragment wins over a debug one */
	expect("Installed kernel does not support quotas", "quota-kernel", NULL, FIX,
	       "kconfig/base.config");
	expect("Installed kernel does not support XFS quotas", "quota-xfs-kernel", NULL, FIX,
	       "CONFIG_XFS_QUOTA=y");
	/* a module, never a package */
	expect("scsi_debug module not found", "scsi-debug", NULL, FIX, "CONFIG_SCSI_DEBUG=m");
	expect("This test requires loopback device support", "loop-device", NULL, FIX,
	       "kconfig/base.config");
	expect("Could not locate kernel config file", "kernel-config-file", NULL, FIX,
	       "KCONFIG_PATH");
	/* casefold: a kernel option on ext4 and f2fs, not a feature of xfs */
	expect("ext4 does not support casefold feature", "casefold", "ext4", FIX, "CONFIG_UNICODE");
	expect("xfs does not support casefold feature", "casefold", "xfs", NATURAL, NULL);
	expect("kernel scrub ioctl is missing", "scrub", NULL, FIX, "kconfig/xfs.config");
	expect("scrub not supported on scratch filesystem", "scrub", NULL, FIX,
	       "CONFIG_XFS_ONLINE_SCRUB");
	expect("No online scrub program for ext4.", "scrub-none", NULL, NATURAL, NULL);
	expect("kernel does not know about: rtsummary", "scrub-type", "rtsummary", FIX, "kernel");
	expect("XFS error injection bmap_alloc_minlen_extent unknown on this kernel.",
	       "error-injection-kernel", "bmap_alloc_minlen_extent", FIX, "newer kernel");
	expect("This test requires dm flakey support", "dm-target", "flakey", FIX,
	       "CONFIG_DM_FLAKEY=y: add it");
	expect("This test requires dm log-writes support", "dm-target", "log-writes", FIX,
	       "CONFIG_DM_LOG_WRITES");
	expect("This test requires error_writes feature in dm-flakey", "dm-target", "flakey", FIX,
	       NULL);
	expect("failed to create dm thin pool device", "dm-target", "thin-pool", FIX, NULL);
	expect("kernel does not support IO_URING", "kernel-feature", "IO_URING", FIX, "kernel");
	expect("kernel doesn't support renameat2 syscall", "kernel-feature", "renameat2 syscall",
	       FIX, NULL);
	expect("UUID ioctls are not supported by kernel.", "kernel-feature", "UUID ioctls", FIX,
	       NULL);
	expect("This test must run in a VM", "vm", NULL, FIX, NULL);
	expect("null_blk: must be a module.", "module", "null_blk", FIX, "=m");
	expect("Missing scratch feature: reflink", "scratch-feature", NULL, NATURAL, NULL);
	expect("Kernel driver does not support rt quota", "quota-rt-kernel", NULL, FIX, NULL);
}

/* The appliance: users, programs and their packages, tools too old. */
static void
test_appliance(void **state)
{
	(void)state;
	expect("fsgqa user not defined.", "user", "fsgqa", FIX, "appliance build");
	expect("fsgqa2 user not defined.", "user", "fsgqa2", FIX, NULL);
	expect("fsgqa group not defined.", "user", "fsgqa", FIX, NULL);
	expect("fsgqa cannot execute commands.", "user", "fsgqa", FIX, NULL);
	expect("123456-fsgqa user not defined.", "user-123456", NULL, FIX, "appliance build");
	/* in fswb's package list: the appliance is older */
	expect("fio utility required, skipped this test", "program", "fio", FIX,
	       "package fio has it, and fswb's appliance installs it");
	expect("This test requires dumpe2fs utility.", "program", "dumpe2fs", FIX, "e2fsprogs");
	expect("setfattr command not found", "program", "setfattr", FIX, "package attr");
	expect("xfsdump not found", "program", "xfsdump", FIX, "package xfsdump");
	expect("/usr/sbin/xfs_scrub not found", "program", "/usr/sbin/xfs_scrub", FIX, "xfsprogs");
	/* known, not in the list */
	expect("strace utility required, skipped this test", "program", "strace", FIX,
	       "does not install it");
	expect("frobnicate utility required, skipped this test", "program", "frobnicate", FIX,
	       "no package known");
	/* fstests' own programs */
	expect("fssum not built", "fstests-program", "fssum", FIX, "build.log");
	expect("src/godown executable not found", "fstests-program", "godown", FIX, NULL);
	expect("Quota user tools not installed", "quota-tools", NULL, FIX, "quota package");
	/* tools too old are something to fix, never "nothing is wrong" */
	expect("xfs_admin does not support rt devices", "program-old", "xfs_admin", FIX,
	       "xfsprogs");
	expect("/usr/bin/fio too old, see /results/generic/095.full", "program-old", "/usr/bin/fio",
	       FIX, "fio");
	expect("/usr/bin/btrfs too old (must support filesystem du)", "program-old",
	       "/usr/bin/btrfs", FIX, "btrfs-progs");
	expect("btrfs does not support swapfiles", "fs-feature", NULL, NATURAL, NULL);
	expect("This test requires a cp with --reflink support.", "program-old", "cp", FIX,
	       "coreutils");
	expect("xfs_io fiemap support is missing", "xfs-io-command", "fiemap", FIX, "xfsprogs");
	expect("xfs_io falloc -k failed (old kernel/wrong fs?)", "xfs-io-command", "falloc -k", FIX,
	       NULL);
	expect("xfs_io statx doesn't support -r", "xfs-io-command", "statx", FIX, NULL);
	expect("xfs_io swapext not supported on ext4", "xfs-io-fs", "swapext", NATURAL, NULL);
	expect("XFS error injection noerror unknown.", "error-injection-xfsprogs", "noerror", FIX,
	       "xfsprogs");
	expect("mkfs.xfs does not support parent pointers", "mkfs-feature", "mkfs.xfs", FIX,
	       "Debian release");
	expect("mkfs.ext4 doesn't support metadata_csum feature", "mkfs-feature", "mkfs.ext4", FIX,
	       NULL);
	expect("ext4 userspace tools do not support casefold", "mkfs-feature", "ext4", FIX, NULL);
}

/* The configuration and the filesystem: what does not apply, and the catch-alls. */
static void
test_not_applying(void **state)
{
	(void)state;
	expect("ext4 does not define maximum ACL count", "fs-feature", NULL, NATURAL,
	       "nothing to fix");
	expect("Reflink not supported by scratch filesystem type: ext4", "fs-feature", NULL,
	       NATURAL, NULL);
	expect("attr namespace trusted not supported by this filesystem type: f2fs", "fs-feature",
	       NULL, NATURAL, NULL);
	expect("ext4 does not support shutdown", "fs-feature", NULL, NATURAL, NULL);
	expect("xfs_repair: file alloc unit 65536 larger than op length 4096", "alloc-unit", NULL,
	       NATURAL, "ext4/4k");
	expect("mount option \"dax\" not allowed in this test", "mount-options", NULL, NATURAL,
	       NULL);
	expect("This test requires no compression enabled", "mount-options", NULL, NATURAL, NULL);
	expect("test requires delayed allocation buffered writes", "mount-options", NULL, NATURAL,
	       NULL);
	expect("Quotas not supported on realtime device", "quota-rt", NULL, NATURAL, NULL);
	expect("Project quota not enabled in this device /dev/vdc", "quota-mount", NULL, FIX,
	       "-c ext4/quota");
	expect("_scratch_mkfs_xfs: mkfs.xfs: unknown option -m foo", "mkfs-failed", NULL, FIX,
	       ".full");
	expect("_scratch_mkfs_sized failed with (8388608 4096)", "mkfs-failed", NULL, FIX, NULL);
	expect("xfs scrub stress test requires common/filter", "test-bug", NULL, FIX,
	       "fstests@vger.kernel.org");
	expect("cannot frob the widget", "setup-failed", NULL, GENERIC, ".full");
	expect("test requires something else entirely", "requirement", "something else entirely",
	       GENERIC, NULL);
	expect("a reason nobody has written a rule for", NULL, NULL, FIX, NULL);

	{
		struct notrun_explanation e;

		assert_false(notrun_explain("", &ctx, &e));
		assert_string_equal(e.cause, "no reason given");
		notrun_explanation_release(&e);
		assert_true(notrun_explain("fio utility required, skipped this test", &ctx, &e));
		assert_non_null(strstr(e.cause, "'fio'"));
		notrun_explanation_release(&e);
	}
}

static void
test_group(void **state)
{
	const char *tests[] = { "generic/001", "btrfs/002",   "btrfs/003",   "generic/004",
				"generic/005", "btrfs/006",   "generic/007", "generic/008",
				"generic/009", "generic/010", "generic/011", "generic/012",
				"generic/013", "generic/014" };
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
		"Reflink not supported by scratch filesystem type: ext4",
		"Reflink not supported by scratch filesystem type: ext4",
		"Reflink not supported by test filesystem type: ext4",
		"Reflink not supported by scratch filesystem type: ext4",
	};
	struct notrun_groups g;

	(void)state;
	notrun_group(tests, reasons, ARRAY_SIZE(tests), &ctx, &g);
	assert_int_equal(g.n, 7);
	/* causes to fix first, biggest first: the pool (3), then fio and "something odd" (2
	 * each, by cause); what does not apply last, however big */
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
	for (size_t i = 3; i < 6; i++) {
		assert_int_equal(g.groups[i].tests.n, 1);
		assert_false(g.groups[i].natural);
	}
	assert_true(g.groups[6].natural);
	assert_int_equal(g.groups[6].tests.n, 4);
	assert_int_equal(g.groups[6].reasons.n, 2);
	notrun_groups_release(&g);

	notrun_group(NULL, NULL, 0, &ctx, &g);
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
	notrun_group((const char *const *)t.v, (const char *const *)r.v, t.n, &ctx, &g);
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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_devices),	     cmocka_unit_test(test_kernel),
		cmocka_unit_test(test_own_machine),  cmocka_unit_test(test_appliance),
		cmocka_unit_test(test_not_applying), cmocka_unit_test(test_group),
		cmocka_unit_test(test_fixture_a),
	};

	return cmocka_run_group_tests_name("notrun", tests, setup, teardown);
}
