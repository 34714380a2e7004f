/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Profiles: the data under profiles/, and the one strict loader for it.
 *
 *	profiles/fs/FS/CFG.conf		filesystem configurations (ext4/4k, xfs/1k, ...)
 *	profiles/sets/NAME.conf		test sets (smoke, quick, auto)
 *	profiles/exclude/FS/CFG.exclude	tests a config skips (check -E format)
 *	profiles/kconfig/NAME.config	kernel config fragments (read by kbuild)
 *
 * A .conf file is lines of `key = value`; blank lines and lines starting
 * with '#' are ignored; the value runs to the end of the line with white
 * space trimmed, and is never interpreted by a shell. Every key has a type:
 *	string	any text (may be empty where the key allows)
 *	size	512M, 5G, 2GiB (see parse_size())
 *	count	a whole number
 *	list	words separated by white space
 * An unknown key, a key given twice, a value of the wrong type or a missing
 * required key is ERR_PARSE with a message naming the file, the line (where
 * there is one) and the key, e.g.
 *	profiles/fs/ext4/4k.conf:4: unknown key 'mkfs_option' (did you mean 'mkfs_options'?)
 *
 * A configuration's name is its path below profiles/fs without ".conf".
 *
 * The keys of profiles/fs/FS/CFG.conf (the fields of struct fs_config):
 * description, fstyp, test_size, scratch_size and kconfig are required;
 * mkfs_options, mount_options, devices, base, serve, pool_devices (2 to 16),
 * logdev_size, rtdev_size, aliases, env and exclude are optional. fstyp must be the
 * directory's name (FS).
 *
 * `devices = none` is a file system without block devices (tmpfs): TEST_DEV
 * and SCRATCH_DEV are then names only (tmpfs_test, tmpfs_scratch), nothing is
 * made or formatted, and the sizes, pool_devices and mkfs_options are refused
 * instead of required. `base = ext4` (only with fstyp = overlay, which
 * requires it) is the file system under an overlay: TEST and SCRATCH are
 * made, formatted and named in local.config as that file system (FSTYP=ext4;
 * mkfs_options and mount_options are the base's), and check runs with
 * -overlay, which stacks the overlay on them (OVL_BASE_FSTYP ...).
 *
 * `serve = nfs` (only with fstyp = nfs, and it requires a base) is a file
 * system served over NFS from the guest itself, as xfstests-bld's
 * nfs/loopback: the TEST and SCRATCH disks are made as the base file system
 * (mkfs_options are the base's), mounted under /srv/fswb/{test,scratch} and
 * exported there (rw, no_root_squash, an fsid each), the NFS server is
 * started in the guest, and check runs with FSTYP=nfs,
 * TEST_DEV=127.0.0.1:/srv/fswb/test and SCRATCH_DEV=127.0.0.1:/srv/fswb/scratch;
 * mount_options are the NFS client's (NFS_MOUNT_OPTIONS, like
 * -o rw,relatime,nfsvers=4.2). There is no LOGWRITES_DEV (dm-log-writes
 * needs a block device under the file system tested).
 *
 * The keys of profiles/sets/NAME.conf: description (required), groups,
 * xgroups, env (each word NAME=value). A value wrapped whole in quotes is refused (nothing strips them). Names (FS, CFG, NAME)
 * use only letters, digits, '-', '_' and '.'; files not ending in ".conf"
 * (or ".list", below) are not read.
 *
 * Settings for fstests (both kinds of file): `env.NAME = value` gives the
 * variable NAME the rest of the line, spaces included (FSX_AVOID = -C -I);
 * a set may also say `env = NAME=value NAME=value`. Only variables whose
 * reading by fstests fswb knows are taken, each checked for what fstests
 * does with it (see profile.c's env_vars): a duration (SOAK_DURATION) is
 * whole seconds or a number with check's suffixes s, m, h, d, w, and is
 * stored converted to seconds ("3m" becomes "180"), because every test
 * re-reads local.config and fsx and fsstress take the raw value as seconds,
 * so check's own conversion does not reach them; the variables fswb writes
 * itself (FSTYP, TEST_DEV, LOGWRITES_DEV ...) are refused.
 *
 * Other names for a configuration: `aliases = default bigalloc` lets
 * "-c ext4/default" and "-c ext4/bigalloc" name ext4/4k and
 * ext4/bigalloc_4k, as xfstests-bld's names do.
 *
 * Lists of configurations: profiles/fs/FS/NAME.list names several
 * configurations of FS, one per line (CFG or an alias; '#' starts a
 * comment), as xfstests-bld's all.list: "-c ext4/all".
 *
 * What a configuration leaves out of a run comes from exclude files, read
 * in this order: profiles/exclude/global.exclude (every configuration),
 * profiles/exclude/FS.exclude (every configuration of FS) and the file its
 * exclude key names; each is optional. A line is a test name (ext4/033) or
 * `-x GROUP` (leave out the group's tests, check's -x), then white space
 * and a '#' comment saying why, which is required; '#' lines are comments.
 * Anything else is refused. check -E, given such a file, matches a -x line
 * against no test, so the groups must reach check as -x options (struct
 * fs_config's xgroups); exclude_tests holds the tests of all three files.
 */
#ifndef FSWB_CORE_PROFILE_H
#define FSWB_CORE_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/status.h"
#include "core/util.h"

/* One filesystem configuration. Sizes of 0 mean the device is not needed. */
struct fs_config {
	char *name;	       /* "ext4/4k" */
	char *file;	       /* the file it came from */
	char *description;     /* one sentence a newcomer understands */
	char *fstyp;	       /* FSTYP: ext4, xfs, btrfs, f2fs, ... */
	char *mkfs_options;    /* MKFS_OPTIONS, "" for none */
	char *mount_options;   /* MOUNT_OPTIONS, "" for none */
	char *devices;	       /* "none": no block devices (tmpfs); NULL: the sizes below */
	char *base;	       /* overlay: the file system under it ("ext4"); serve: the one
				  exported ("ext4"); or NULL */
	char *serve;	       /* "nfs": base is exported over NFS in the guest; or NULL */
	uint64_t test_size;    /* TEST_DEV */
	uint64_t scratch_size; /* SCRATCH_DEV (or each pool device) */
	unsigned pool_devices; /* SCRATCH_DEV_POOL of N devices instead of SCRATCH_DEV; 0: none */
	uint64_t logdev_size;  /* SCRATCH_LOGDEV/TEST_LOGDEV (USE_EXTERNAL=yes) */
	uint64_t rtdev_size;   /* SCRATCH_RTDEV/TEST_RTDEV (USE_EXTERNAL=yes) */
	struct strvec kconfig; /* kernel options it needs, without "CONFIG_" */
	struct strvec aliases; /* other names within FS ("default") */
	struct strvec env;     /* "NAME=value" settings for local.config, checked */
	char *exclude;	       /* its own exclude file's path, or NULL (see below) */
	/* Filled by profiles_load() from every exclude file that applies: */
	struct strvec exclude_tests; /* tests left out, sorted, each once */
	struct strvec xgroups;	     /* groups left out (check -x), each once */
};

/* A named list of configurations: profiles/fs/FS/NAME.list. */
struct config_list {
	char *name; /* "ext4/all" */
	char *file;
	struct strvec configs; /* full configuration names, in the file's order */
};

/* One test set: what "--preset NAME" selects. */
struct test_set {
	char *name; /* "smoke" */
	char *file;
	char *description;
	struct strvec groups;  /* check -g */
	struct strvec xgroups; /* check -x */
	struct strvec env;     /* NAME=value given to check, e.g. SOAK_DURATION=180 */
};

struct profiles {
	char *dir;		   /* the profiles/ directory */
	struct fs_config *configs; /* sorted by name */
	size_t nconfigs;
	struct test_set *sets; /* sorted by name */
	size_t nsets;
	struct config_list *lists; /* sorted by name */
	size_t nlists;
};

/*
 * Load every profile under dir. On failure nothing is left allocated.
 * Messages show paths as dir + the file's path below it. The exclude key
 * is a path relative to dir; the loader checks the file exists and sets
 * fs_config.exclude to dir/PATH (fs_config_parse leaves it as written).
 */
enum status profiles_load(const char *dir, struct profiles *out);
void profiles_release(struct profiles *p);

/* Look up by name; NULL when there is none. */
const struct fs_config *profiles_config(const struct profiles *p, const char *name);
const struct test_set *profiles_set(const struct profiles *p, const char *name);

/*
 * Resolve a -c argument the way xfstests-bld does, appending full
 * configuration names to out (each once):
 *	"ext4/4k"		that configuration
 *	"ext4/default"		an alias of one of ext4's configurations
 *	"ext4/all"		the list profiles/fs/ext4/all.list
 *	"ext4"			the filesystem's "default" (a configuration or alias)
 *	"4k", "all"		a name without a filesystem is first looked up in ext4
 *				(xfstests-bld's primary filesystem), then in the
 *				one filesystem that has it
 * Unknown names are ERR_NOTFOUND with a close name suggested when there is
 * one; a name several filesystems other than ext4 have is ERR_INVALID with
 * a message listing the full names to choose from. Nothing is appended on
 * failure.
 */
enum status profiles_resolve_configs(const struct profiles *p, const char *arg, struct strvec *out);

/*
 * The same for one configuration: a list is ERR_INVALID ("names N
 * configurations"). *out is NULL on failure.
 */
enum status profiles_resolve_config(const struct profiles *p, const char *arg,
				    const struct fs_config **out);

/*
 * Whether name (its first len bytes) is a variable fswb writes into
 * local.config itself (FSTYP, TEST_DEV, MOUNT_OPTIONS, LOGWRITES_DEV ...),
 * which no profile or extra setting may set.
 */
bool profiles_fswb_var(const char *name, size_t len);

/* Parse one file's text (for tests and for the loader). */
enum status fs_config_parse(const char *file, const char *name, const char *text,
			    struct fs_config *out);
enum status test_set_parse(const char *file, const char *name, const char *text,
			   struct test_set *out);
void fs_config_release(struct fs_config *c);
void test_set_release(struct test_set *s);

#endif
