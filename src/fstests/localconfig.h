/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * local.config: the file fstests' check reads to learn what to test.
 *
 * The guest agent writes it from the configurations of the run (struct
 * fs_config, src/core/profile.h) and the devices it assigned to each one.
 *
 * One configuration gives a plain file of `export NAME=value` lines, which
 * check sources with bash (common/config: `. $HOST_OPTIONS`). Values are
 * quoted for bash: plain words as they are, anything else in single quotes
 * with an embedded quote written '\''.
 *
 * Several configurations give one [section] each, as README.config-sections
 * describes; check then runs them in file order and puts each one's results
 * in RESULT_BASE/SECTION/. Section names come from configuration names:
 * every character other than a letter, a digit or '_' becomes '_'
 * ("ext4/4k" -> "ext4_4k", "xfs/rt-1k" -> "xfs_rt_1k"), and a name already
 * taken gets "_2", "_3"... appended. check does not source a file with
 * sections: it rewrites each `NAME=value` line into `export NAME="value"`
 * with sed (dropping everything after a '#' and any quotes around the
 * value), splits the result into words and evals it. So in a section a
 * value is written as NAME="value" with '\', '$' and '`' escaped by a
 * backslash, and a value check could not carry unchanged is refused
 * (ERR_INVALID naming the config and the variable): one holding a quote,
 * '#', '*', '?', '[', a tab or other control character, white space at
 * either end, two spaces in a row, or a space beside '='.
 *
 * In every mode, values may not hold a newline or other control character.
 *
 * What is written for a configuration:
 *	FSTYP (an overlay's base; nfs when served), TEST_DEV, TEST_DIR	always
 *	SCRATCH_DEV, SCRATCH_MNT				when scratch_size > 0
 *	SCRATCH_DEV_POOL (space-separated), SCRATCH_MNT		when pool_devices > 0
 *	MKFS_OPTIONS, MOUNT_OPTIONS				when not empty
 *	TEST_FS_MOUNT_OPTS (= MOUNT_OPTIONS)			when not empty
 *	NFS_MOUNT_OPTIONS (= MOUNT_OPTIONS)		serve = nfs, when not empty
 *	USE_EXTERNAL=yes, SCRATCH_LOGDEV (TEST_LOGDEV)		when logdev_size > 0
 *	USE_EXTERNAL=yes, SCRATCH_RTDEV (TEST_RTDEV)		when rtdev_size > 0
 *	LOGWRITES_DEV						when one is given
 *	RESULT_BASE						when one is given
 *	the configuration's env (FSX_AVOID=-C -I ...)		when it has one
 *	the extra NAME=value settings (SOAK_DURATION=180 ...)	in each section
 * An empty mkfs_options or mount_options means check's own default for the
 * filesystem (for ext4, MOUNT_OPTIONS="-o acl,user_xattr"). The mount options
 * go to TEST_FS_MOUNT_OPTS as well as MOUNT_OPTIONS: check mounts TEST_DIR
 * with the first (common/rc _test_mount) and SCRATCH_MNT with the second, and
 * derives neither from the other, so without it TEST_DIR would be mounted
 * with the filesystem's defaults (unencrypted on ext4/encrypt, say).
 * A configuration served over nfs (serve = nfs, core/profile.h) is FSTYP=nfs
 * with TEST_DEV and SCRATCH_DEV as HOST:/PATH (what the guest exports), no
 * MKFS_OPTIONS (its mkfs options make the exported base, which check never
 * formats: _scratch_mkfs only empties an nfs SCRATCH_MNT).
 *
 * check carries settings from one section into the next, so every section
 * names every device variable (an unused one as NAME=, empty), empties a
 * variable an earlier section's configuration set in its env, says
 * USE_EXTERNAL=no after a section that used external devices, and, where
 * check would carry an earlier section's MKFS_OPTIONS, MOUNT_OPTIONS or
 * TEST_FS_MOUNT_OPTS into a section that wants the default (same FSTYP, no
 * options of its own), writes check's default for that filesystem (a single space when that
 * default is empty, which check keeps but passes to no program).
 */
#ifndef FSWB_FSTESTS_LOCALCONFIG_H
#define FSWB_FSTESTS_LOCALCONFIG_H

#include <stddef.h>

#include "core/profile.h"
#include "core/status.h"
#include "core/util.h"

/* The devices and directories the guest gave one configuration. */
struct localconfig_devices {
	const char *test_dev; /* required */
	const char *test_dir; /* required */
	const char *scratch_dev;
	const char *const *scratch_pool; /* NULL-terminated; NULL for none */
	const char *scratch_mnt;	 /* required with scratch_dev or scratch_pool */
	const char *test_logdev, *scratch_logdev;
	const char *test_rtdev, *scratch_rtdev;
	const char *logwrites_dev; /* LOGWRITES_DEV, optional */
};

struct localconfig_section {
	const struct fs_config *config;
	const struct localconfig_devices *dev;
};

/*
 * Append the local.config text for n configurations (n >= 1, in run order)
 * to out. result_base (RESULT_BASE) may be NULL for check's default; env is
 * "NAME=value" settings added to every section, may be NULL. ERR_INVALID,
 * naming the config and the variable, for a device the configuration needs
 * but did not get, a bad NAME in env, a NAME that this module writes itself
 * (FSTYP, TEST_DEV ...) or that the configuration's own env sets, or a value
 * that cannot be carried (see above).
 * Nothing is appended on failure.
 */
enum status localconfig_write(const struct localconfig_section *secs, size_t n,
			      const char *result_base, const struct strvec *env,
			      struct strbuf *out);

/* The [section] name localconfig_write() gives a configuration name (alone). */
void localconfig_section_name(const char *config_name, struct strbuf *out);

#endif
