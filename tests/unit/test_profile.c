/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The profile loader: every shipped profile loads and has what the rest of
 * fswb relies on, -c names resolve the way xfstests-bld's do, and each kind
 * of mistake is refused with a message naming the file, line and key.
 */
#include "testlib.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/paths.h"
#include "core/profile.h"
#include "core/util.h"

static const char *const shipped_configs[] = {
	"btrfs/4k",
	"btrfs/compress",
	"btrfs/default",
	"exfat/default",
	"ext2/1k",
	"ext2/default",
	"ext3/default",
	"ext4/1k",
	"ext4/4k",
	"ext4/adv",
	"ext4/bigalloc_1k",
	"ext4/bigalloc_4k",
	"ext4/data_journal",
	"ext4/dioread_nolock",
	"ext4/encrypt",
	"ext4/ext3",
	"ext4/ext3conv",
	"ext4/fast_commit",
	"ext4/inline",
	"ext4/nojournal",
	"ext4/quota",
	"ext4/quota_1k",
	"f2fs/compress",
	"f2fs/default",
	"f2fs/encrypt",
	"nfs/loopback",
	"nfs/loopback_v3",
	"nfs/loopback_v4",
	"overlay/ext4",
	"overlay/xfs",
	"tmpfs/default",
	"udf/default",
	"vfat/default",
	"xfs/1k",
	"xfs/4k",
	"xfs/adv",
	"xfs/dirblock_8k",
	"xfs/logdev",
	"xfs/quota",
	"xfs/quota_1k",
	"xfs/realtime",
	"xfs/realtime_logdev",
	"xfs/reflink",
	"xfs/v4",
};

static const char *const shipped_fragments[] = {
	"fstests", "ext4",    "xfs",	     "btrfs",	      "f2fs",
	"ext2",	   "ext3",    "exfat",	     "vfat",	      "udf",
	"tmpfs",   "overlay", "debug-kasan", "debug-lockdep", "debug-kmemleak",
};

static struct profiles shipped;

static int
setup(void **state)
{
	char *dir;

	if (test_setup_hermetic(state))
		return -1;
	dir = test_path("profiles");
	if (profiles_load(dir, &shipped) != OK) {
		fprintf(stderr, "# cannot load the shipped profiles: %s\n", error_msg());
		free(dir);
		return -1;
	}
	free(dir);
	return 0;
}

static int
teardown(void **state)
{
	profiles_release(&shipped);
	return test_teardown_hermetic(state);
}

/* ---- the shipped profiles ---- */

static void
test_shipped_configs(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(shipped_configs); i++) {
		const struct fs_config *c = profiles_config(&shipped, shipped_configs[i]);
		size_t fslen = strcspn(shipped_configs[i], "/");

		if (!c)
			fail_msg("no shipped configuration '%s'", shipped_configs[i]);
		assert_string_equal(c->name, shipped_configs[i]);
		assert_true(strlen(c->description) > 20);
		assert_true(strlen(c->fstyp) == fslen &&
			    !strncmp(c->fstyp, shipped_configs[i], fslen));
		assert_non_null(c->mkfs_options);
		assert_non_null(c->mount_options);
		if (c->devices) { /* tmpfs: names only, nothing to make or format */
			assert_string_equal(c->devices, "none");
			assert_true(!c->test_size && !c->scratch_size && !*c->mkfs_options);
		} else {
			assert_true(c->test_size >= (1ull << 30));
			assert_true(c->scratch_size >= (1ull << 30));
		}
		assert_true(c->kconfig.n > 0);
		/* every shipped config has an exclude file, resolved below the dir */
		assert_non_null(c->exclude);
		assert_true(str_startswith(c->exclude, shipped.dir));
		assert_true(path_exists(c->exclude));
		assert_true(str_endswith(c->file, ".conf"));
	}
	assert_int_equal(shipped.nconfigs, ARRAY_SIZE(shipped_configs));
	for (size_t i = 1; i < shipped.nconfigs; i++)
		assert_true(strcmp(shipped.configs[i - 1].name, shipped.configs[i].name) < 0);
}

static void
test_shipped_devices(void **state)
{
	const struct fs_config *c;

	(void)state;
	/* btrfs/default is one scratch device, as xfstests-bld's; btrfs/4k has the pool */
	c = profiles_config(&shipped, "btrfs/default");
	assert_int_equal(c->pool_devices, 0);
	c = profiles_config(&shipped, "btrfs/4k");
	assert_int_equal(c->pool_devices, 5);
	assert_string_equal(c->mkfs_options, "-s 4096 -n 4096");
	c = profiles_config(&shipped, "btrfs/compress");
	assert_true(c->pool_devices >= 4);
	assert_non_null(strstr(c->mount_options, "compress"));
	/* xfstests-bld's log device is 1G, its realtime device 20G */
	c = profiles_config(&shipped, "xfs/logdev");
	assert_int_equal(c->logdev_size, 1ull << 30);
	assert_int_equal(c->rtdev_size, 0);
	assert_string_equal(c->mount_options, "-o usrquota,grpquota,prjquota");
	c = profiles_config(&shipped, "xfs/realtime");
	assert_int_equal(c->rtdev_size, 20ull << 30);
	assert_true(strvec_contains(&c->kconfig, "XFS_RT"));
	c = profiles_config(&shipped, "xfs/realtime_logdev");
	assert_int_equal(c->rtdev_size, 20ull << 30);
	assert_int_equal(c->logdev_size, 1ull << 30);
	c = profiles_config(&shipped, "xfs/v4");
	assert_non_null(strstr(c->mkfs_options, "crc=0"));
	assert_true(strvec_contains(&c->kconfig, "XFS_SUPPORT_V4"));
	c = profiles_config(&shipped, "ext4/encrypt");
	assert_true(strvec_contains(&c->kconfig, "FS_ENCRYPTION"));
	assert_string_equal(c->mount_options, "-o block_validity,test_dummy_encryption");
	c = profiles_config(&shipped, "ext4/4k");
	assert_int_equal(c->pool_devices, 0);
	assert_int_equal(c->logdev_size, 0);
	assert_int_equal(c->rtdev_size, 0);
	assert_true(strvec_contains(&c->kconfig, "EXT4_FS"));
	assert_true(strvec_contains(&c->aliases, "default"));
	/* bigalloc: 20G disks, the cluster-unaware operations avoided */
	c = profiles_config(&shipped, "ext4/bigalloc_4k");
	assert_int_equal(c->test_size, 20ull << 30);
	assert_int_equal(c->scratch_size, 20ull << 30);
	assert_true(strvec_contains(&c->env, "FSX_AVOID=-C -I"));
	assert_true(strvec_contains(&c->env, "FSSTRESS_AVOID=-f collapse=0 -f insert=0"));
	assert_true(strvec_contains(&c->env, "XFS_IO_AVOID=fcollapse finsert"));
	assert_true(strvec_contains(&c->xgroups, "collapse"));
	assert_true(strvec_contains(&c->xgroups, "insert"));
	/* fstests checks UDF only with a program nobody can get: the check is off */
	c = profiles_config(&shipped, "udf/default");
	assert_true(strvec_contains(&c->env, "DISABLE_UDF_TEST=1"));
	assert_true(strvec_contains(&c->xgroups, "shutdown"));
	/* mkfs.vfat formats a whole disk even with a partition table on it */
	c = profiles_config(&shipped, "vfat/default");
	assert_string_equal(c->mkfs_options, "-I");
	assert_true(strvec_contains(&c->exclude_tests, "generic/308"));
	/* every ext4 configuration mounts with block_validity */
	for (size_t i = 0; i < shipped.nconfigs; i++) {
		c = &shipped.configs[i];
		if (!strcmp(c->fstyp, "ext4") &&
		    !str_startswith(c->mount_options, "-o block_validity"))
			fail_msg("%s mounts without block_validity", c->name);
	}
}

static void
test_shipped_sets(void **state)
{
	const struct test_set *s;

	(void)state;
	assert_int_equal(shipped.nsets, 4);
	/* "full", as kvm-xfstests users type it, is the auto group */
	s = profiles_set(&shipped, "full");
	assert_non_null(s);
	assert_int_equal(s->groups.n, 1);
	assert_string_equal(s->groups.v[0], "auto");
	s = profiles_set(&shipped, "smoke");
	assert_non_null(s);
	assert_true(strvec_contains(&s->groups, "smoketest"));
	assert_true(strvec_contains(&s->env, "SOAK_DURATION=180"));
	s = profiles_set(&shipped, "quick");
	assert_non_null(s);
	assert_true(strvec_contains(&s->groups, "quick"));
	s = profiles_set(&shipped, "auto");
	assert_non_null(s);
	assert_true(strvec_contains(&s->groups, "auto"));
	for (size_t i = 0; i < shipped.nsets; i++)
		assert_true(strlen(shipped.sets[i].description) > 20);
	assert_null(profiles_set(&shipped, "nosuchset"));
}

/* True when the fragment sets CONFIG_<opt>=y. */
static bool
fragment_sets(const char *text, const char *opt)
{
	char *want = xasprintf("\nCONFIG_%s=y\n", opt);
	bool found = strstr(text, want) != NULL;

	free(want);
	return found;
}

static void
test_shipped_kconfig(void **state)
{
	(void)state;
	/* Each fragment says what it is for, and has only option lines. */
	for (size_t i = 0; i < ARRAY_SIZE(shipped_fragments); i++) {
		char *rel = xasprintf("profiles/kconfig/%s.config", shipped_fragments[i]);
		char *path = test_path(rel);
		char *text = test_read(path);
		char *head = xasprintf("# %s.config: ", shipped_fragments[i]);
		struct strvec lines = STRVEC_INIT;

		assert_true(str_startswith(text, head));
		strvec_split(&lines, text, "\n");
		for (size_t j = 0; j < lines.n; j++) {
			const char *l = lines.v[j];

			if (str_startswith(l, "# CONFIG_")) {
				if (!str_endswith(l, " is not set"))
					fail_msg("%s: '%s' reads like an option line", rel, l);
			} else if (l[0] != '#' &&
				   !(str_startswith(l, "CONFIG_") && strchr(l, '='))) {
				fail_msg("%s: '%s' is not CONFIG_X=value", rel, l);
			}
		}
		strvec_clear(&lines);
		free(head);
		free(text);
		free(path);
		free(rel);
	}
	/* Every option a configuration needs is set by the fragments kbuild uses for it. */
	for (size_t i = 0; i < shipped.nconfigs; i++) {
		const struct fs_config *c = &shipped.configs[i];
		char *fs_rel = xasprintf("profiles/kconfig/%s.config", c->fstyp);
		char *fs_path = test_path(fs_rel),
		     *base_path = test_path("profiles/kconfig/fstests.config");
		char *fs_text = test_read(fs_path), *base_text = test_read(base_path);
		/* an overlay's kernel has its base file system's fragment too */
		char *under_rel =
			xasprintf("profiles/kconfig/%s.config", c->base ? c->base : "fstests");
		char *under_path = test_path(under_rel), *under_text = test_read(under_path);

		for (size_t j = 0; j < c->kconfig.n; j++)
			if (!fragment_sets(fs_text, c->kconfig.v[j]) &&
			    !fragment_sets(base_text, c->kconfig.v[j]) &&
			    !fragment_sets(under_text, c->kconfig.v[j]))
				fail_msg("%s needs CONFIG_%s, which neither %s nor fstests.config "
					 "sets",
					 c->name, c->kconfig.v[j], fs_rel);
		free(fs_text);
		free(base_text);
		free(under_text);
		free(under_path);
		free(under_rel);
		free(fs_path);
		free(base_path);
		free(fs_rel);
	}
}

static void
test_shipped_excludes(void **state)
{
	(void)state;
	for (size_t i = 0; i < shipped.nconfigs; i++) {
		const struct fs_config *c = &shipped.configs[i];

		/* kvm-xfstests' global exclusions reach every configuration */
		assert_true(strvec_contains(&c->exclude_tests, "generic/471"));
		assert_true(strvec_contains(&c->exclude_tests, "generic/085"));
		assert_true(strvec_contains(&c->exclude_tests, "generic/787"));
		assert_true(strvec_contains(&c->xgroups, "dax"));
		/* and each filesystem's own */
		if (!strcmp(c->fstyp, "ext4")) {
			assert_true(strvec_contains(&c->xgroups, "clone"));
			assert_true(strvec_contains(&c->exclude_tests, "generic/223"));
		}
		if (!strcmp(c->fstyp, "btrfs"))
			assert_true(strvec_contains(&c->exclude_tests, "generic/647"));
		for (size_t j = 1; j < c->exclude_tests.n; j++)
			assert_true(strcmp(c->exclude_tests.v[j - 1], c->exclude_tests.v[j]) < 0);
	}
	/* a configuration's own file: ext4/1k leaves out ext4/033 */
	assert_true(
		strvec_contains(&profiles_config(&shipped, "ext4/1k")->exclude_tests, "ext4/033"));
	assert_false(
		strvec_contains(&profiles_config(&shipped, "ext4/4k")->exclude_tests, "ext4/033"));
	assert_false(strvec_contains(&profiles_config(&shipped, "xfs/4k")->xgroups, "clone"));
}

static void
test_exclude_files(void **state)
{
	char *dir = test_tmp("excl");
	char *conf = path_join(dir, "fs/xfs/4k.conf"), *set = path_join(dir, "sets/quick.conf");
	char *glob = path_join(dir, "exclude/global.exclude");
	char *own = path_join(dir, "exclude/xfs/4k.exclude");
	struct profiles p;
	char *want;

	(void)state;
	test_write(conf, "description = XFS with 4 KiB blocks\nfstyp = xfs\ntest_size = 1G\n"
			 "scratch_size = 1G\nkconfig = XFS_FS\nexclude = exclude/xfs/4k.exclude\n");
	test_write(set, "description = short tests\ngroups = quick\n");
	test_write(glob, "# every config\n\ngeneric/471 # broken\n-x dax\t# no pmem\n");
	test_write(own, "xfs/076\t# why\ngeneric/471 # listed twice is fine\n-x dax # here too\n");
	assert_int_equal(profiles_load(dir, &p), OK);
	assert_int_equal(p.configs[0].exclude_tests.n, 2);
	assert_string_equal(p.configs[0].exclude_tests.v[0], "generic/471");
	assert_string_equal(p.configs[0].exclude_tests.v[1], "xfs/076");
	assert_int_equal(p.configs[0].xgroups.n, 1);
	assert_string_equal(p.configs[0].xgroups.v[0], "dax");
	profiles_release(&p);

	test_write(own, "xfs/076\n");
	assert_int_equal(profiles_load(dir, &p), ERR_PARSE);
	want = xasprintf("%s:1: 'xfs/076' does not say why; add '# the reason'", own);
	assert_string_equal(error_msg(), want);
	free(want);
	test_write(own, "\n-g quick # no\n");
	assert_int_equal(profiles_load(dir, &p), ERR_PARSE);
	want = xasprintf("%s:2: '-g quick' is neither a test (ext4/033) nor '-x GROUP'", own);
	assert_string_equal(error_msg(), want);
	free(want);
	test_write(own, "-x quick,rw # commas\n");
	assert_int_equal(profiles_load(dir, &p), ERR_PARSE);
	want = xasprintf("%s:1: 'quick,rw' is not a group name; write it like '-x dax'", own);
	assert_string_equal(error_msg(), want);
	free(want);
	free(own);
	free(glob);
	free(set);
	free(conf);
	free(dir);
}

/* ---- resolving -c names ---- */

/* Resolve arg to a comma-joined list of full names. */
static char *
resolved(const char *arg)
{
	struct strvec names = STRVEC_INIT;
	char *joined;

	if (profiles_resolve_configs(&shipped, arg, &names) != OK)
		fail_msg("'%s': %s", arg, error_msg());
	joined = strvec_join(&names, ",");
	strvec_clear(&names);
	return joined;
}

static void
expect_resolved(const char *arg, const char *want)
{
	char *got = resolved(arg);

	if (strcmp(got, want))
		fail_msg("'%s' resolved to '%s', want '%s'", arg, got, want);
	free(got);
}

static void
test_resolve(void **state)
{
	const struct fs_config *c;
	struct strvec names = STRVEC_INIT;

	(void)state;
	expect_resolved("ext4/4k", "ext4/4k");
	expect_resolved("xfs/realtime", "xfs/realtime");
	/* xfstests-bld's names: FS/default, aliases, a filesystem alone */
	expect_resolved("ext4/default", "ext4/4k");
	expect_resolved("xfs/default", "xfs/4k");
	expect_resolved("ext4/bigalloc", "ext4/bigalloc_4k");
	expect_resolved("ext4", "ext4/4k");
	expect_resolved("xfs", "xfs/4k");
	expect_resolved("btrfs", "btrfs/default");
	expect_resolved("f2fs", "f2fs/default");
	/* a name alone is ext4's first (xfstests-bld's primary filesystem) */
	expect_resolved("4k", "ext4/4k");
	expect_resolved("1k", "ext4/1k");
	expect_resolved("bigalloc_4k", "ext4/bigalloc_4k");
	expect_resolved("default", "ext4/4k");
	/* then the one filesystem that has it */
	expect_resolved("logdev", "xfs/logdev");
	expect_resolved("dirblock_8k", "xfs/dirblock_8k");
	/* lists: FS/all, and "all" alone is ext4's */
	expect_resolved("ext4/all", "ext4/4k,ext4/1k,ext4/ext3,ext4/encrypt,ext4/nojournal,"
				    "ext4/ext3conv,ext4/adv,ext4/dioread_nolock,ext4/data_journal,"
				    "ext4/bigalloc_4k,ext4/bigalloc_1k");
	expect_resolved("all", "ext4/4k,ext4/1k,ext4/ext3,ext4/encrypt,ext4/nojournal,"
			       "ext4/ext3conv,ext4/adv,ext4/dioread_nolock,ext4/data_journal,"
			       "ext4/bigalloc_4k,ext4/bigalloc_1k");
	expect_resolved("f2fs/all", "f2fs/default,f2fs/encrypt,f2fs/compress");
	/* each name once, after what out already holds */
	strvec_push(&names, "xfs/4k");
	assert_int_equal(profiles_resolve_configs(&shipped, "xfs/all", &names), OK);
	assert_string_equal(names.v[0], "xfs/4k");
	assert_string_equal(names.v[1], "xfs/1k");
	assert_int_equal(names.n, 10);
	strvec_clear(&names);
	/* every list names only configurations that exist */
	for (size_t i = 0; i < shipped.nlists; i++)
		for (size_t j = 0; j < shipped.lists[i].configs.n; j++)
			assert_non_null(profiles_config(&shipped, shipped.lists[i].configs.v[j]));

	/* ext3 is a filesystem of its own; ext4/ext3 is ext4 driving its format */
	assert_int_equal(profiles_resolve_config(&shipped, "ext3", &c), OK);
	assert_string_equal(c->name, "ext3/default");
	assert_int_equal(profiles_resolve_config(&shipped, "nojournal", &c), OK);
	assert_string_equal(c->name, "ext4/nojournal");
	assert_int_equal(profiles_resolve_config(&shipped, "xfs/all", &c), ERR_INVALID);
	assert_null(c);
	assert_string_equal(error_msg(), "'xfs/all' names 10 configurations; name one of them");
}

static void
test_resolve_errors(void **state)
{
	struct strvec names = STRVEC_INIT;

	(void)state;
	/* several filesystems other than ext4 have it: refuse and list them */
	assert_int_equal(profiles_resolve_configs(&shipped, "compress", &names), ERR_INVALID);
	assert_int_equal(names.n, 0);
	assert_string_equal(
		error_msg(),
		"configuration 'compress' is ambiguous; say which: btrfs/compress, f2fs/compress");

	assert_int_equal(profiles_resolve_configs(&shipped, "ext4/4kk", &names), ERR_NOTFOUND);
	assert_int_equal(names.n, 0);
	assert_string_equal(error_msg(),
			    "unknown configuration 'ext4/4kk' (did you mean 'ext4/4k'?)");
	assert_int_equal(profiles_resolve_configs(&shipped, "xfs/realtim", &names), ERR_NOTFOUND);
	assert_string_equal(error_msg(),
			    "unknown configuration 'xfs/realtim' (did you mean 'xfs/realtime'?)");
	assert_int_equal(profiles_resolve_configs(&shipped, "btrfss", &names), ERR_NOTFOUND);
	assert_string_equal(error_msg(), "unknown configuration 'btrfss' (did you mean 'btrfs'?)");

	/* nothing close: say what there is; a far name is not "meant" */
	assert_int_equal(profiles_resolve_configs(&shipped, "nosuchfs", &names), ERR_NOTFOUND);
	assert_null(strstr(error_msg(), "did you mean"));
	assert_string_equal(error_msg(),
			    "unknown configuration 'nosuchfs'; fswb has configurations for btrfs, "
			    "exfat, ext2, ext3, ext4, f2fs, nfs, overlay, tmpfs, udf, vfat, xfs "
			    "(ext4/4k, xfs/4k...; "
			    "'fswb profiles' "
			    "lists them all)");
	/* the start of a name is close */
	assert_int_equal(profiles_resolve_configs(&shipped, "ext4/bigall", &names), ERR_NOTFOUND);
	assert_string_equal(
		error_msg(),
		"unknown configuration 'ext4/bigall' (did you mean 'ext4/bigalloc_1k'?)");
	assert_int_equal(
		profiles_resolve_configs(&shipped, "f2fs/with-everything-turned-on", &names),
		ERR_NOTFOUND);
	assert_string_equal(error_msg(),
			    "unknown configuration 'f2fs/with-everything-turned-on'; f2fs has: "
			    "f2fs/compress, f2fs/default, f2fs/encrypt");
	assert_int_equal(profiles_resolve_configs(&shipped, "", &names), ERR_NOTFOUND);
	assert_string_equal(error_msg(), "no configuration named; give one like ext4/4k");
}

static void
test_resolve_no_default(void **state)
{
	char *dir = test_tmp("nodefault");
	char *conf = path_join(dir, "fs/xfs/1k.conf");
	char *set = path_join(dir, "sets/quick.conf");
	struct profiles p;
	const struct fs_config *c;

	(void)state;
	test_write(conf, "description = XFS with 1 KiB blocks\nfstyp = xfs\ntest_size = 1G\n"
			 "scratch_size = 1G\nkconfig = XFS_FS\n");
	test_write(set, "description = short tests\ngroups = quick\n");
	assert_int_equal(profiles_load(dir, &p), OK);
	assert_int_equal(profiles_resolve_config(&p, "xfs", &c), ERR_NOTFOUND);
	assert_string_equal(error_msg(),
			    "'xfs' has no default configuration; choose one of: xfs/1k");
	profiles_release(&p);
	free(set);
	free(conf);
	free(dir);
}

static void
test_aliases_and_lists(void **state)
{
	char *dir = test_tmp("lists");
	char *a = path_join(dir, "fs/xfs/4k.conf"), *b = path_join(dir, "fs/xfs/1k.conf");
	char *set = path_join(dir, "sets/quick.conf"), *list = path_join(dir, "fs/xfs/all.list");
	static const char cfg[] = "description = XFS in one of its forms\nfstyp = xfs\n"
				  "test_size = 1G\nscratch_size = 1G\nkconfig = XFS_FS\n";
	struct profiles p;
	char *text, *want;

	(void)state;
	text = xasprintf("%saliases = default small\n", cfg);
	test_write(a, text);
	free(text);
	test_write(b, cfg);
	test_write(set, "description = short tests\ngroups = quick\n");
	test_write(list, "# two\ndefault\n1k  # by name\n\nsmall\n");
	assert_int_equal(profiles_load(dir, &p), OK);
	assert_int_equal(p.nlists, 1);
	assert_string_equal(p.lists[0].name, "xfs/all");
	assert_int_equal(p.lists[0].configs.n, 2);
	assert_string_equal(p.lists[0].configs.v[0], "xfs/4k");
	assert_string_equal(p.lists[0].configs.v[1], "xfs/1k");
	profiles_release(&p);

	test_write(list, "4k\nbig\n");
	assert_int_equal(profiles_load(dir, &p), ERR_PARSE);
	want = xasprintf("%s:2: xfs has no configuration 'big'", list);
	assert_string_equal(error_msg(), want);
	free(want);
	test_write(list, "# nothing\n");
	assert_int_equal(profiles_load(dir, &p), ERR_PARSE);
	want = xasprintf("%s: names no configuration", list);
	assert_string_equal(error_msg(), want);
	free(want);
	assert_int_equal(unlink(list), 0);

	text = xasprintf("%saliases = 4k\n", cfg);
	test_write(b, text);
	free(text);
	assert_int_equal(profiles_load(dir, &p), ERR_PARSE);
	want = xasprintf("%s: key 'aliases': '4k' already names xfs/4k; choose another", b);
	assert_string_equal(error_msg(), want);
	free(want);
	text = xasprintf("%saliases = small\n", cfg);
	test_write(b, text);
	free(text);
	assert_int_equal(profiles_load(dir, &p), ERR_PARSE);
	want = xasprintf("%s: key 'aliases': 'small' already names xfs/4k; choose another", b);
	assert_string_equal(error_msg(), want);
	free(want);
	free(list);
	free(set);
	free(b);
	free(a);
	free(dir);
}

/* ---- broken profile trees ---- */

/* Load tests/fixtures/profiles-broken/CASE and expect message (after "DIR/"). */
static void
expect_broken(const char *name, enum status code, const char *message)
{
	char *rel = xasprintf("tests/fixtures/profiles-broken/%s", name);
	char *dir = test_path(rel);
	char *want = xasprintf("%s/%s", dir, message);
	struct profiles p;

	memset(&p, 0xa5, sizeof(p));
	error_clear();
	assert_int_equal(profiles_load(dir, &p), code);
	assert_string_equal(error_msg(), want);
	/* nothing is left allocated or pointing anywhere */
	assert_null(p.configs);
	assert_null(p.sets);
	assert_null(p.dir);
	assert_int_equal(p.nconfigs, 0);
	assert_int_equal(p.nsets, 0);
	free(want);
	free(dir);
	free(rel);
}

static void
test_broken_unknown_key(void **state)
{
	(void)state;
	expect_broken(
		"unknown-key", ERR_PARSE,
		"fs/ext4/4k.conf:4: unknown key 'mkfs_option' (did you mean 'mkfs_options'?)");
}

static void
test_broken_duplicate_key(void **state)
{
	(void)state;
	expect_broken("duplicate-key", ERR_PARSE,
		      "fs/ext4/4k.conf:5: key 'fstyp' given twice (first on line 2)");
}

static void
test_broken_bad_size(void **state)
{
	(void)state;
	expect_broken("bad-size", ERR_PARSE,
		      "fs/ext4/4k.conf:5: key 'test_size': 'big' is not a size; write it like "
		      "512M, 5G or 2GiB");
}

static void
test_broken_missing_key(void **state)
{
	(void)state;
	expect_broken("missing-key", ERR_PARSE, "fs/ext4/4k.conf: missing key 'fstyp'");
}

static void
test_broken_no_equals(void **state)
{
	(void)state;
	expect_broken("no-equals", ERR_PARSE,
		      "fs/ext4/4k.conf:3: no '=' in 'mkfs_options -b 4096'; write it as "
		      "'key = value'");
}

static void
test_broken_bad_count(void **state)
{
	(void)state;
	expect_broken("bad-count", ERR_PARSE,
		      "fs/btrfs/default.conf:5: key 'pool_devices': 'several' is not a whole "
		      "number; write it like 4");
}

static void
test_broken_kconfig_prefix(void **state)
{
	(void)state;
	expect_broken("kconfig-prefix", ERR_PARSE,
		      "fs/ext4/4k.conf:5: key 'kconfig': write 'EXT4_FS_POSIX_ACL', not "
		      "'CONFIG_EXT4_FS_POSIX_ACL'");
}

static void
test_broken_fstyp_mismatch(void **state)
{
	(void)state;
	expect_broken("fstyp-mismatch", ERR_PARSE,
		      "fs/xfs/4k.conf:2: key 'fstyp': 'ext4' does not match the directory 'xfs'; "
		      "a configuration lives in profiles/fs/FSTYP/");
}

static void
test_broken_missing_exclude(void **state)
{
	char *dir = test_path("tests/fixtures/profiles-broken/missing-exclude");
	char *msg;

	(void)state;
	/* the message names the file it looked for, which has the dir in it twice */
	msg = xasprintf("fs/xfs/4k.conf:6: key 'exclude': there is no file "
			"'%s/exclude/xfs/4k.exclude'; create it or drop the line",
			dir);
	expect_broken("missing-exclude", ERR_PARSE, msg);
	free(msg);
	free(dir);
}

static void
test_broken_bad_env(void **state)
{
	(void)state;
	expect_broken("bad-env", ERR_PARSE,
		      "sets/smoke.conf:3: key 'env': 'SOAK_DURATION' is not NAME=value; write it "
		      "like SOAK_DURATION=3m");
}

/* A relative directory shows up in messages as given. */
static void
test_broken_relative_path(void **state)
{
	char *src = test_srcdir();
	char *cwd = getcwd(NULL, 0);
	struct profiles p;

	(void)state;
	assert_int_equal(chdir(src), 0);
	assert_int_equal(profiles_load("tests/fixtures/profiles-broken/unknown-key", &p),
			 ERR_PARSE);
	assert_string_equal(error_msg(), "tests/fixtures/profiles-broken/unknown-key/fs/ext4/"
					 "4k.conf:4: unknown key 'mkfs_option' (did you mean "
					 "'mkfs_options'?)");
	assert_int_equal(chdir(cwd), 0);
	free(cwd);
	free(src);
}

static void
test_broken_trees_in_scratch(void **state)
{
	char *dir = test_tmp("trees");
	char *a = path_join(dir, "a"), *b = path_join(dir, "b"), *c = path_join(dir, "c");
	char *d = path_join(dir, "d"), *e = path_join(dir, "e");
	char *path, *want;
	struct profiles p;
	static const char good[] = "description = XFS with 4 KiB blocks\nfstyp = xfs\n"
				   "test_size = 1G\nscratch_size = 1G\nkconfig = XFS_FS\n";

	(void)state;
	/* no fs/ directory at all */
	assert_int_equal(profiles_load(a, &p), ERR_NOTFOUND);
	want = xasprintf("cannot open '%s/fs': No such file or directory; set FSWB_DATADIR to "
			 "the directory holding profiles/",
			 a);
	assert_string_equal(error_msg(), want);
	free(want);

	/* a configuration outside a filesystem directory */
	path = path_join(b, "fs/4k.conf");
	test_write(path, good);
	assert_int_equal(profiles_load(b, &p), ERR_PARSE);
	want = xasprintf("%s: a configuration belongs in a filesystem directory; move it to "
			 "%s/fs/FSTYP/4k.conf",
			 path, b);
	assert_string_equal(error_msg(), want);
	free(want);
	free(path);

	/* a NUL byte */
	path = path_join(c, "fs/xfs/4k.conf");
	test_write(path, "");
	assert_int_equal(write_file_atomic(path, "fstyp = xfs\n\0x\n", 15, 0644), OK);
	assert_int_equal(profiles_load(c, &p), ERR_PARSE);
	want = xasprintf("%s: contains a NUL byte; a profile is a text file", path);
	assert_string_equal(error_msg(), want);
	free(want);
	free(path);

	/* a name that would not survive "-c a,b" */
	path = path_join(d, "fs/xfs/4k,1k.conf");
	test_write(path, good);
	assert_int_equal(profiles_load(d, &p), ERR_PARSE);
	want = xasprintf("%s: 'xfs/4k,1k' is not a usable configuration name; use only letters, "
			 "digits, '-', '_' and '.'",
			 path);
	assert_string_equal(error_msg(), want);
	free(want);
	free(path);

	/* configurations but no sets; files not ending in .conf are not read */
	path = path_join(e, "fs/xfs/4k.conf");
	test_write(path, good);
	free(path);
	path = path_join(e, "fs/xfs/4k.conf~");
	test_write(path, "garbage\n");
	free(path);
	path = path_join(e, "sets/README");
	test_write(path, "garbage\n");
	assert_int_equal(profiles_load(e, &p), ERR_NOTFOUND);
	want = xasprintf("'%s/sets' has no test sets; they are files NAME.conf", e);
	assert_string_equal(error_msg(), want);
	free(want);
	free(path);
	path = path_join(e, "sets/quick.conf");
	test_write(path, "description = short tests\ngroups = quick\n");
	assert_int_equal(profiles_load(e, &p), OK);
	assert_int_equal(p.nconfigs, 1);
	assert_int_equal(p.nsets, 1);
	assert_null(p.configs[0].exclude);
	profiles_release(&p);
	free(path);

	free(a);
	free(b);
	free(c);
	free(d);
	free(e);
	free(dir);
}

/* ---- parsing one file ---- */

static const char minimal[] = "description = XFS with 4 KiB blocks\n"
			      "fstyp = xfs\n"
			      "test_size = 5G\n"
			      "scratch_size = 5G\n"
			      "kconfig = XFS_FS\n";

/* Parse minimal with extra appended; expect code and message after "f.conf". */
static void
expect_parse(const char *extra, enum status code, const char *message)
{
	char *text = xasprintf("%s%s", minimal, extra);
	struct fs_config c;
	enum status rc = fs_config_parse("f.conf", "xfs/x", text, &c);

	if (rc != code)
		fail_msg("'%s': got %s (%s), want %s", extra, status_name(rc), error_msg(),
			 status_name(code));
	if (rc == OK)
		fs_config_release(&c);
	else
		assert_string_equal(error_msg(), message);
	free(text);
}

static void
test_parse_values(void **state)
{
	static const char text[] = "# a comment\r\n"
				   "\n"
				   "   # an indented comment\n"
				   "description =   XFS, tuned: a=b   \r\n"
				   "fstyp=xfs\n"
				   "mkfs_options = -m crc=1,reflink=1 -i sparse=1\n"
				   "mount_options = -o logbsize=256k\n"
				   "test_size = 2GiB\n"
				   "scratch_size = 1.5G\n"
				   "pool_devices = 4\n"
				   "logdev_size = 512M\n"
				   "rtdev_size = 64K\n"
				   "kconfig = XFS_FS\tXFS_RT   XFS_QUOTA\n"
				   "exclude = exclude/xfs/x.exclude"; /* no final newline */
	struct fs_config c;

	(void)state;
	assert_int_equal(fs_config_parse("f.conf", "xfs/x", text, &c), OK);
	assert_string_equal(c.name, "xfs/x");
	assert_string_equal(c.file, "f.conf");
	assert_string_equal(c.description, "XFS, tuned: a=b");
	assert_string_equal(c.fstyp, "xfs");
	assert_string_equal(c.mkfs_options, "-m crc=1,reflink=1 -i sparse=1");
	assert_string_equal(c.mount_options, "-o logbsize=256k");
	assert_int_equal(c.test_size, 2ull << 30);
	assert_int_equal(c.scratch_size, 3ull << 29);
	assert_int_equal(c.pool_devices, 4);
	assert_int_equal(c.logdev_size, 512ull << 20);
	assert_int_equal(c.rtdev_size, 64 << 10);
	assert_int_equal(c.kconfig.n, 3);
	assert_string_equal(c.kconfig.v[0], "XFS_FS");
	assert_string_equal(c.kconfig.v[1], "XFS_RT");
	assert_string_equal(c.kconfig.v[2], "XFS_QUOTA");
	assert_null(c.kconfig.v[3]);
	/* fs_config_parse keeps the path as written; profiles_load resolves it */
	assert_string_equal(c.exclude, "exclude/xfs/x.exclude");
	fs_config_release(&c);

	/* optional keys left out */
	assert_int_equal(fs_config_parse("f.conf", "xfs/x", minimal, &c), OK);
	assert_string_equal(c.mkfs_options, "");
	assert_string_equal(c.mount_options, "");
	assert_int_equal(c.pool_devices, 0);
	assert_int_equal(c.logdev_size, 0);
	assert_int_equal(c.rtdev_size, 0);
	assert_null(c.exclude);
	fs_config_release(&c);

	/* an empty optional string is "" */
	expect_parse("mount_options =\n", OK, NULL);
}

/* devices = none (tmpfs): no sizes, nothing to format; the sizes required otherwise */
static void
test_parse_no_devices(void **state)
{
	static const char base[] = "description = tmpfs in memory\n"
				   "fstyp = tmpfs\n"
				   "kconfig = TMPFS\n";
	static const struct {
		const char *extra, *message;
	} cases[] = {
		{ "devices = none\n", NULL },
		{ "", "f.conf: missing key 'test_size' (or devices = none, for a file system "
		      "without block devices)" },
		{ "test_size = 1G\n", "f.conf: missing key 'scratch_size' (or devices = none, for "
				      "a file system without block devices)" },
		{ "devices = some\n", "f.conf:4: key 'devices': 'some' is not what it takes; write "
				      "none (no block devices), or leave the line out" },
		{ "devices = none\nscratch_size = 1G\n",
		  "f.conf:5: key 'scratch_size': the configuration has no devices (devices = "
		  "none); "
		  "leave the line out" },
		{ "devices = none\nmkfs_options = -b 1024\n",
		  "f.conf:5: key 'mkfs_options': the configuration has no devices (devices = "
		  "none); leave the line out" },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char *text = xasprintf("%s%s", base, cases[i].extra);
		struct fs_config c;
		enum status rc = fs_config_parse("f.conf", "tmpfs/x", text, &c);

		if (!cases[i].message) {
			assert_int_equal(rc, OK);
			assert_string_equal(c.devices, "none");
			assert_string_equal(c.mkfs_options, "");
			assert_int_equal(c.test_size, 0);
			fs_config_release(&c);
		} else {
			assert_int_equal(rc, ERR_PARSE);
			assert_string_equal(error_msg(), cases[i].message);
		}
		free(text);
	}
}

/* base: the file system under an overlay, for an overlay only */
static void
test_parse_base(void **state)
{
	static const char ovl[] = "description = overlayfs over ext4\n"
				  "fstyp = overlay\n"
				  "test_size = 5G\n"
				  "scratch_size = 5G\n"
				  "kconfig = OVERLAY_FS\n";
	struct fs_config c;
	const struct fs_config *d;
	char *text = xasprintf("%sbase = ext4\n", ovl);

	(void)state;
	assert_int_equal(fs_config_parse("o.conf", "overlay/ext4", text, &c), OK);
	assert_string_equal(c.base, "ext4");
	fs_config_release(&c);
	free(text);
	assert_int_equal(fs_config_parse("o.conf", "overlay/ext4", ovl, &c), ERR_PARSE);
	assert_string_equal(error_msg(), "o.conf: missing key 'base' (the file system under the "
					 "overlay, like base = ext4)");
	text = xasprintf("%sbase = overlay\n", ovl);
	assert_int_equal(fs_config_parse("o.conf", "overlay/x", text, &c), ERR_PARSE);
	assert_string_equal(error_msg(),
			    "o.conf:6: key 'base': only an overlay (fstyp = overlay) or a file "
			    "system served from local disks (serve = nfs) has a base, and it is "
			    "another file system");
	free(text);
	expect_parse("base = ext4\n", ERR_PARSE,
		     "f.conf:6: key 'base': only an overlay (fstyp = overlay) or a file system "
		     "served from local disks (serve = nfs) has a base, and it is another file "
		     "system");
	/* what kbuild and the host check see: the base's fragment and mkfs too */
	assert_string_equal(profiles_config(&shipped, "overlay/xfs")->base, "xfs");
	assert_int_equal(profiles_resolve_config(&shipped, "overlay", &d), OK);
	assert_string_equal(d->name, "overlay/ext4");
	assert_string_equal(d->base, "ext4");
}

/* serve = nfs: the base file system exported over NFS in the guest */
static void
test_parse_serve(void **state)
{
	static const char nfs[] = "description = nfs over loopback\n"
				  "fstyp = nfs\n"
				  "test_size = 5G\n"
				  "scratch_size = 5G\n"
				  "kconfig = NFS_FS NFSD\n";
	static const struct {
		const char *extra, *message;
	} bad[] = {
		{ "serve = nfs\n", "n.conf: missing key 'base' (the file system exported over nfs, "
				   "like base = ext4)" },
		{ "serve = smb\nbase = ext4\n",
		  "n.conf:6: key 'serve': 'smb' is not what it takes; write nfs (the base file "
		  "systems exported over NFS in the guest), or leave the line out" },
		{ "base = ext4\n", "n.conf:6: key 'base': only an overlay (fstyp = overlay) or a "
				   "file system served from local disks (serve = nfs) has a base, "
				   "and it is another file system" },
		{ "serve = nfs\nbase = nfs\n",
		  "n.conf:7: key 'base': only an overlay (fstyp = overlay) or a file system served "
		  "from local disks (serve = nfs) has a base, and it is another file system" },
	};
	struct fs_config c;
	const struct fs_config *d;
	char *text = xasprintf("%sserve = nfs\nbase = ext4\n", nfs);

	(void)state;
	assert_int_equal(fs_config_parse("n.conf", "nfs/loopback", text, &c), OK);
	assert_string_equal(c.serve, "nfs");
	assert_string_equal(c.base, "ext4");
	assert_string_equal(c.fstyp, "nfs");
	fs_config_release(&c);
	free(text);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		text = xasprintf("%s%s", nfs, bad[i].extra);
		assert_int_equal(fs_config_parse("n.conf", "nfs/x", text, &c), ERR_PARSE);
		assert_string_equal(error_msg(), bad[i].message);
		free(text);
	}
	/* only an nfs configuration is served over nfs */
	text = xasprintf("description = x\nfstyp = ext4\ntest_size = 1G\nscratch_size = 1G\n"
			 "kconfig = EXT4_FS\nserve = nfs\nbase = xfs\n");
	assert_int_equal(fs_config_parse("e.conf", "ext4/x", text, &c), ERR_PARSE);
	assert_string_equal(error_msg(), "e.conf:6: key 'serve': a configuration served over nfs "
					 "is of fstyp = nfs (the base key names the file system "
					 "exported)");
	free(text);
	/* the shipped one, by the names xfstests-bld gives it */
	assert_int_equal(profiles_resolve_config(&shipped, "nfs", &d), OK);
	assert_string_equal(d->name, "nfs/loopback");
	assert_string_equal(d->serve, "nfs");
	assert_string_equal(d->base, "ext4");
	assert_int_equal(profiles_resolve_config(&shipped, "nfs/default", &d), OK);
	assert_string_equal(d->name, "nfs/loopback");
	assert_true(strvec_contains(&d->kconfig, "NFSD"));
	assert_true(strvec_contains(&d->kconfig, "NFS_V4"));
}

static void
test_parse_errors(void **state)
{
	(void)state;
	expect_parse("mount_options = \"-o compress\"\n", ERR_PARSE,
		     "f.conf:6: key 'mount_options': drop the quotes; the value is the rest of "
		     "the line as written");
	expect_parse("pool_devices = 1\n", ERR_PARSE,
		     "f.conf:6: key 'pool_devices': 1 is out of range; use 2 to 16");
	expect_parse("pool_devices = -3\n", ERR_PARSE,
		     "f.conf:6: key 'pool_devices': '-3' is not a whole number; write it like 4");
	expect_parse("logdev_size = 0\n", ERR_PARSE,
		     "f.conf:6: key 'logdev_size': the size must be more than 0");
	expect_parse("logdev_size =\n", ERR_PARSE,
		     "f.conf:6: key 'logdev_size' has no value; give it one or leave the line out");
	expect_parse("exclude = ../../etc/passwd\n", ERR_PARSE,
		     "f.conf:6: key 'exclude': '../../etc/passwd' must be a path below the "
		     "profiles directory, like exclude/ext4/1k.exclude");
	expect_parse("exclude = /etc/passwd\n", ERR_PARSE,
		     "f.conf:6: key 'exclude': '/etc/passwd' must be a path below the profiles "
		     "directory, like exclude/ext4/1k.exclude");
	expect_parse("= 5\n", ERR_PARSE, "f.conf:6: no key before '='; write it as 'key = value'");
	expect_parse("frobnicate = yes\n", ERR_PARSE,
		     "f.conf:6: unknown key 'frobnicate'; the keys are: description, fstyp, "
		     "mkfs_options, mount_options, devices, base, serve, test_size, scratch_size, "
		     "pool_devices, "
		     "logdev_size, rtdev_size, kconfig, aliases, env, exclude");
	expect_parse("scratch size = 1G\n", ERR_PARSE,
		     "f.conf:6: unknown key 'scratch size' (did you mean 'scratch_size'?)");

	/* the same checks on keys the minimal text already has */
	{
		struct fs_config c;

		assert_int_equal(
			fs_config_parse("f.conf", "xfs/x", "description =\nfstyp = xfs\n", &c),
			ERR_PARSE);
		assert_string_equal(error_msg(),
				    "f.conf:1: key 'description' has no value; give it one");
		assert_int_equal(fs_config_parse("f.conf", "xfs/x", "fstyp = XFS v5\n", &c),
				 ERR_PARSE);
		assert_string_equal(error_msg(),
				    "f.conf:1: key 'fstyp': 'XFS v5' is not a filesystem type; "
				    "write it the way mount -t takes it, like ext4");
		assert_int_equal(fs_config_parse("f.conf", "xfs/x", "kconfig = xfs_fs\n", &c),
				 ERR_PARSE);
		assert_string_equal(
			error_msg(),
			"f.conf:1: key 'kconfig': 'xfs_fs' is not a kernel option name; "
			"write it like EXT4_FS");
		assert_int_equal(
			fs_config_parse("f.conf", "xfs/x", "kconfig = XFS_FS XFS_FS\n", &c),
			ERR_PARSE);
		assert_string_equal(error_msg(),
				    "f.conf:1: key 'kconfig': 'XFS_FS' is listed twice");
		assert_int_equal(fs_config_parse("f.conf", "xfs/x", "scratch_size = 5 gigs\n", &c),
				 ERR_PARSE);
		assert_string_equal(error_msg(), "f.conf:1: key 'scratch_size': '5 gigs' is not a "
						 "size; write it like 512M, 5G or 2GiB");
		assert_int_equal(fs_config_parse("f.conf", "xfs/x", "", &c), ERR_PARSE);
		assert_string_equal(error_msg(), "f.conf: missing key 'description'");
	}
}

static void
test_parse_set(void **state)
{
	struct test_set s;

	(void)state;
	assert_int_equal(
		test_set_parse("s.conf", "mine",
			       "description = my tests\ngroups = quick rw\n"
			       "xgroups = dangerous\nenv = SOAK_DURATION=1m FSSTRESS_AVOID=-f\n",
			       &s),
		OK);
	assert_string_equal(s.name, "mine");
	assert_string_equal(s.description, "my tests");
	assert_int_equal(s.groups.n, 2);
	assert_string_equal(s.groups.v[1], "rw");
	assert_int_equal(s.xgroups.n, 1);
	assert_int_equal(s.env.n, 2);
	assert_string_equal(s.env.v[0], "SOAK_DURATION=60");
	assert_string_equal(s.env.v[1], "FSSTRESS_AVOID=-f");
	test_set_release(&s);

	assert_int_equal(
		test_set_parse("s.conf", "mine", "description = x\ngroups = quick,rw\n", &s),
		ERR_PARSE);
	assert_string_equal(error_msg(), "s.conf:2: key 'groups': 'quick,rw': separate groups with "
					 "spaces, not commas");
	assert_int_equal(
		test_set_parse("s.conf", "mine",
			       "description = x\nenv = TIME_FACTOR=1 LOAD_FACTOR=2 TIME_FACTOR=3\n",
			       &s),
		ERR_PARSE);
	assert_string_equal(error_msg(), "s.conf:2: key 'env': 'TIME_FACTOR' is set twice");
	assert_int_equal(test_set_parse("s.conf", "mine", "description = x\nenv = 9LIVES=1\n", &s),
			 ERR_PARSE);
	assert_string_equal(error_msg(), "s.conf:2: key 'env': '9LIVES=1' is not NAME=value; "
					 "write it like SOAK_DURATION=3m");
	assert_int_equal(test_set_parse("s.conf", "mine", "groups = quick\n", &s), ERR_PARSE);
	assert_string_equal(error_msg(), "s.conf: missing key 'description'");
	assert_int_equal(test_set_parse("s.conf", "mine", "description = x\ngruops = quick\n", &s),
			 ERR_PARSE);
	assert_string_equal(error_msg(), "s.conf:2: unknown key 'gruops' (did you mean 'groups'?)");
}

/* Settings for fstests: checked for how fstests reads each variable. */
static void
test_parse_env(void **state)
{
	struct fs_config c;

	(void)state;
	{
		char *text = xasprintf("%senv.FSX_AVOID = -C -I\nenv.XFS_IO_AVOID = fcollapse "
				       "finsert\nenv = TIME_FACTOR=2 SOAK_DURATION=1.5h\n"
				       "env.FUZZ_REWRITE_DURATION = 90\n",
				       minimal);

		assert_int_equal(fs_config_parse("f.conf", "xfs/x", text, &c), OK);
		free(text);
	}
	assert_int_equal(c.env.n, 5);
	assert_string_equal(c.env.v[0], "FSX_AVOID=-C -I");
	assert_string_equal(c.env.v[1], "XFS_IO_AVOID=fcollapse finsert");
	assert_string_equal(c.env.v[2], "TIME_FACTOR=2");
	/* durations become the seconds fsx and fsstress read */
	assert_string_equal(c.env.v[3], "SOAK_DURATION=5400");
	assert_string_equal(c.env.v[4], "FUZZ_REWRITE_DURATION=90");
	fs_config_release(&c);
	expect_parse("env.SOAK_DURATION = 3m\n", OK, NULL);
	expect_parse("env.SOAK_DURATION = 2w\n", OK, NULL);

	expect_parse("env.SOAK_DURATION = 3 min\n", ERR_PARSE,
		     "f.conf:6: key 'env.SOAK_DURATION': SOAK_DURATION '3 min' is not a duration; "
		     "write seconds (180) or a number with s, m, h, d or w (3m)");
	expect_parse("env.SOAK_DURATION = 3min\n", ERR_PARSE,
		     "f.conf:6: key 'env.SOAK_DURATION': SOAK_DURATION '3min' is not a duration; "
		     "write seconds (180) or a number with s, m, h, d or w (3m)");
	expect_parse("env.SOAK_DURATION = 1e3\n", ERR_PARSE,
		     "f.conf:6: key 'env.SOAK_DURATION': SOAK_DURATION '1e3' is not a duration; "
		     "write seconds (180) or a number with s, m, h, d or w (3m)");
	expect_parse("env.SOAK_DURATION = 1.2.3m\n", ERR_PARSE,
		     "f.conf:6: key 'env.SOAK_DURATION': SOAK_DURATION '1.2.3m' is not a duration; "
		     "write seconds (180) or a number with s, m, h, d or w (3m)");
	expect_parse("env.TIME_FACTOR = 0\n", ERR_PARSE,
		     "f.conf:6: key 'env.TIME_FACTOR': TIME_FACTOR '0' is not a whole number of "
		     "at least 1; fstests multiplies with it");
	expect_parse("env.FSX_AVOID = -C; reboot\n", ERR_PARSE,
		     "f.conf:6: key 'env.FSX_AVOID': FSX_AVOID '-C; reboot': fstests puts it "
		     "unquoted on a command line; give words without quotes or shell characters");
	expect_parse("env.FSX_AVOID = C\n", ERR_PARSE,
		     "f.conf:6: key 'env.FSX_AVOID': FSX_AVOID 'C' must start with an option, "
		     "like -C");
	expect_parse("env.LOGWRITES_DEV = /dev/sdz\n", ERR_PARSE,
		     "f.conf:6: key 'env.LOGWRITES_DEV': fswb sets LOGWRITES_DEV itself, from the "
		     "configuration and the devices it gives it");
	expect_parse("env = TEST_FS_MOUNT_OPTS=-o\n", ERR_PARSE,
		     "f.conf:6: key 'env': fswb sets TEST_FS_MOUNT_OPTS itself, from the "
		     "configuration and the devices it gives it");
	expect_parse("env.MY_VAR = 1\n", ERR_PARSE,
		     "f.conf:6: key 'env.MY_VAR': fswb does not know how fstests reads 'MY_VAR'; "
		     "the variables it takes are SOAK_DURATION, FUZZ_REWRITE_DURATION, "
		     "TIME_FACTOR, LOAD_FACTOR, FSX_AVOID, FSSTRESS_AVOID, XFS_IO_AVOID, "
		     "DISABLE_UDF_TEST");
	expect_parse("env.DISABLE_UDF_TEST = yes\n", ERR_PARSE,
		     "f.conf:6: key 'env.DISABLE_UDF_TEST': DISABLE_UDF_TEST 'yes': fstests takes "
		     "only 1 as on; write 1, or leave the setting out");
	expect_parse("env.9X = 1\n", ERR_PARSE,
		     "f.conf:6: 'env.9X' does not name a variable; write it like "
		     "env.FSX_AVOID = -C -I");
	expect_parse("env.FSX_AVOID =\n", ERR_PARSE,
		     "f.conf:6: key 'env.FSX_AVOID' has no value; give it one");
	expect_parse("env = FSX_AVOID=-C\nenv.FSX_AVOID = -I\n", ERR_PARSE,
		     "f.conf:7: key 'env.FSX_AVOID': 'FSX_AVOID' is set twice");
	expect_parse("aliases = big,small\n", ERR_PARSE,
		     "f.conf:6: key 'aliases': 'big,small' is not a configuration name; use only "
		     "letters, digits, '-', '_' and '.'");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shipped_configs),
		cmocka_unit_test(test_shipped_devices),
		cmocka_unit_test(test_shipped_sets),
		cmocka_unit_test(test_shipped_kconfig),
		cmocka_unit_test(test_shipped_excludes),
		cmocka_unit_test(test_exclude_files),
		cmocka_unit_test(test_aliases_and_lists),
		cmocka_unit_test(test_parse_env),
		cmocka_unit_test(test_resolve),
		cmocka_unit_test(test_resolve_errors),
		cmocka_unit_test(test_resolve_no_default),
		cmocka_unit_test(test_broken_unknown_key),
		cmocka_unit_test(test_broken_duplicate_key),
		cmocka_unit_test(test_broken_bad_size),
		cmocka_unit_test(test_broken_missing_key),
		cmocka_unit_test(test_broken_no_equals),
		cmocka_unit_test(test_broken_bad_count),
		cmocka_unit_test(test_broken_kconfig_prefix),
		cmocka_unit_test(test_broken_fstyp_mismatch),
		cmocka_unit_test(test_broken_missing_exclude),
		cmocka_unit_test(test_broken_bad_env),
		cmocka_unit_test(test_broken_relative_path),
		cmocka_unit_test(test_broken_trees_in_scratch),
		cmocka_unit_test(test_parse_values),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_parse_no_devices),
		cmocka_unit_test(test_parse_base),
		cmocka_unit_test(test_parse_serve),
		cmocka_unit_test(test_parse_set),
	};

	return cmocka_run_group_tests_name("profile", tests, setup, teardown);
}
