/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "fstests/notrun.h"

#include <ctype.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "core/paths.h"
#include "core/profile.h"

struct rule;
/* Completes an explanation from what only code can find (fragments, configurations, packages). */
typedef void refine_fn(const struct rule *r, const char *reason, const struct notrun_context *ctx,
		       struct notrun_explanation *e);

/*
 * A rule: patterns in lower case where '*' matches any text (the first '*'
 * is the subject), the cause and fix ('%s' is the subject), whether each
 * subject is a group of its own, whether the cause is natural (the test
 * does not apply) or generic (a catch-all), and what completes the fix.
 */
struct rule {
	const char *id;
	const char *patterns[40];
	const char *cause, *fix;
	bool per_subject, natural, generic;
	refine_fn *refine;
	const char *arg; /* for refine: the kernel option, the device a configuration needs */
};

static refine_fn fix_kconfig, fix_dm, fix_config, fix_program, fix_tool_old, fix_casefold,
	fix_overlay;

static const struct rule rules[] = {
	/* ---- devices fswb gives ---- */
	{ .id = "logwrites-dev",
	  .patterns = { "this test requires a valid $logwrites_dev*" },
	  .cause = "no log-writes device (LOGWRITES_DEV): the test records the filesystem's writes "
		   "with dm-log-writes and replays them",
	  .fix = "a log-writes device is a device fswb gives the guest itself (LOGWRITES_DEV is "
		 "not a setting of yours): runs by an older fswb, and configurations without one, "
		 "skip these tests; a newer fswb or such a configuration runs them" },
	{ .id = "device-overlap",
	  .patterns = { "* is part of test_dev, this test requires unique disks*" },
	  .cause = "a device of the scratch pool is also the test device (TEST_DEV)",
	  .fix = "the run's devices overlap: fswb's configurations give separate disks; with "
		 "devices of your own (ssh, adb), name a different disk for each" },
	{ .id = "pool-fs",
	  .patterns = { "dev_pool is not supported by fstype *" },
	  .cause = "the test spreads one filesystem over several devices (SCRATCH_DEV_POOL), which "
		   "%s does not do",
	  .fix = "nothing to fix: the test does not apply to this filesystem",
	  .natural = true },
	{ .id = "scratch-pool",
	  .patterns = { "this test requires a valid $scratch_dev_pool*",
			"*or more disks in scratch_dev_pool*",
			"*requires devices in scratch_dev_pool*",
			"need at least test requested number of ndevs*",
			"all devs used no spare*" },
	  .cause = "no scratch device pool (SCRATCH_DEV_POOL: several scratch disks at once)",
	  .refine = fix_config,
	  .arg = "pool" },
	{ .id = "ubi",
	  .patterns = { "this test requires a valid ubi volume*" },
	  .cause = "the test is for UBIFS on a UBI (raw flash) volume",
	  .fix = "nothing to fix: it does not apply to block-device filesystems",
	  .natural = true },
	{ .id = "overlay",
	  .patterns = { "this test requires a valid $ovl_base_*",
			"this test requires a valid $test_dir as ovl*",
			"upper fs needs to support d_type*",
			"overlay features * cannot be enabled on *",
			"feature * not supported by overlay*",
			"* not supported with unionmount testsuite*" },
	  .cause = "an overlayfs test: it needs overlayfs over a base filesystem (OVL_BASE_*, "
		   "d_type on the base)",
	  .refine = fix_overlay },
	{ .id = "nfs-version",
	  .patterns = { "test requires $test_dev mounted as nfsv*",
			"test requires $scratch_dev mounted as nfsv*",
			"nfs* version * does not support negative timestamps*" },
	  .cause = "the test is for another NFS version than the one this configuration mounts",
	  .fix = "nothing to fix here: nfs/loopback (v4.2), nfs/loopback_v4 and nfs/loopback_v3 "
		 "each mount one version; the configuration of the version the test needs runs it",
	  .natural = true },
	{ .id = "scratch-dev",
	  .patterns = { "this test requires a valid $scratch_dev*",
			"this test requires a valid $scratch_mnt*", "*requires valid block disk*",
			"*to be valid block disk*" },
	  .cause = "no scratch device (SCRATCH_DEV), or it is not a block device",
	  .fix = "every fswb configuration gives a scratch disk; with devices of your own (ssh, "
		 "adb), name a block device for it" },
	{ .id = "test-dev",
	  .patterns = { "this test requires a valid $test_dev*",
			"this test requires a valid $test_dir*" },
	  .cause = "no test device (TEST_DEV, mounted on TEST_DIR)",
	  .fix = "every fswb configuration gives a test disk; with devices of your own (ssh, adb), "
		 "name a block device for it" },
	{ .id = "rt-quota",
	  .patterns = { "quotas probably not supported on realtime scratch device; set "
			"test_rtdev*" },
	  .cause = "the test tries quotas on a realtime device only when the test device has one "
		   "too (TEST_RTDEV)",
	  .refine = fix_config,
	  .arg = "rtdev" },
	{ .id = "external-log",
	  .patterns = { "this test requires a valid $scratch_logdev*",
			"this test requires use_external*", "external volumes not in use*",
			"could not make scratch logdev*" },
	  .cause = "the test needs an external log device (USE_EXTERNAL=yes, SCRATCH_LOGDEV)",
	  .refine = fix_config,
	  .arg = "logdev" },
	{ .id = "rt-dev",
	  .patterns = { "realtime device required*", "*scratch rt device too small*" },
	  .cause = "the test needs a realtime device (SCRATCH_RTDEV)",
	  .refine = fix_config,
	  .arg = "rtdev" },
	{ .id = "zoned",
	  .patterns = { "zone count too small*", "not supported on zoned *", "*require non-zoned *",
			"*requires a zoned *", "*requires zoned *", "*open zones*" },
	  .cause = "the test is for zoned block devices, or cannot run on them",
	  .fix = "nothing to fix: it does not apply to the devices of this run",
	  .natural = true },
	{ .id = "dax",
	  .patterns = { "cannot run tests with fsdax on *", "cannot use * devices on dax*" },
	  .cause = "the test stacks device-mapper devices, which do not work on a DAX (persistent "
		   "memory) device",
	  .fix = "nothing to fix: it does not apply to a DAX configuration",
	  .natural = true },
	{ .id = "ramdisk",
	  .patterns = { "this test requires a sane block device flush*" },
	  .cause =
		  "the device is a RAM disk (/dev/ramN), whose cache flush the test cannot rely on",
	  .fix = "use disks: fswb's guests give virtio disks; with devices of your own, name real "
		 "disks" },
	{ .id = "tape",
	  .patterns = { "no dump tape specified*", "dumptape, *", "mt -f * failed*" },
	  .cause = "the test writes dumps to a tape drive (TAPE_DEV)",
	  .fix = "nothing to fix: fswb's guests have no tape drive",
	  .natural = true },
	{ .id = "memory",
	  .patterns = { "not enough memory*" },
	  .cause = "the guest has too little memory for what the test sets up",
	  .fix = "give the guest more memory: fswb run --mem 4G" },

	/* ---- users of the appliance ---- */
	{ .id = "user-123456",
	  .patterns = { "123456-fsgqa user not defined*", "123456-fsgqa group not defined*" },
	  .cause = "the user and group '123456-fsgqa' (a name starting with digits) are missing",
	  .fix = "fswb's appliance creates them: this appliance is older; rebuild it with fswb "
		 "appliance build --force" },
	{ .id = "user",
	  .patterns = { "* user not defined*", "* group not defined*", "* cannot execute commands*",
			"password file does not contain user nobody*",
			"group file does not contain nobody*" },
	  .cause = "the user '%s' that fstests runs unprivileged commands as is missing",
	  .fix = "fswb's appliance creates fsgqa, fsgqa2 and 123456-fsgqa: this appliance is "
		 "older; rebuild it with fswb appliance build --force",
	  .per_subject = true },

	/* ---- the kernel ---- */
	{ .id = "kernel-config-file",
	  .patterns = { "could not locate kernel config file*" },
	  .cause = "the guest has no kernel configuration to read (KCONFIG_PATH, /proc/config.gz "
		   "with CONFIG_IKCONFIG_PROC, or the kernel's config file), so tests that check a "
		   "kernel option (quotas, for one) do not run",
	  .fix = "fswb copies the kernel's config file into the guest (KCONFIG_PATH) when it "
		 "knows one: a kernel tree it builds, an installed kernel's /boot/config-VERSION; "
		 "a bare kernel image has none (fswb kernel list says which), and runs by an older "
		 "fswb skip these tests: run with a kernel tree (--kernel TREE) or an installed "
		 "kernel" },
	{ .id = "scsi-debug-old",
	  .patterns = { "scsi_debug too old*" },
	  .cause = "the kernel's scsi_debug module lacks a parameter the test gives it",
	  .fix = "use a newer kernel" },
	{ .id = "scsi-debug",
	  .patterns = { "scsi_debug module not found*" },
	  .cause = "the kernel has no scsi_debug module: fstests loads and unloads it with its own "
		   "parameters, so it must be a module (CONFIG_SCSI_DEBUG=m), not built in",
	  .refine = fix_kconfig,
	  .arg = "CONFIG_SCSI_DEBUG" },
	{ .id = "casefold",
	  .patterns = { "* does not support casefold feature*" },
	  .per_subject = true,
	  .refine = fix_casefold },
	{ .id = "loop-device",
	  .patterns = { "this test requires loopback device support*" },
	  .cause = "the kernel has no loop devices (CONFIG_BLK_DEV_LOOP)",
	  .refine = fix_kconfig,
	  .arg = "CONFIG_BLK_DEV_LOOP" },
	{ .id = "scrub",
	  .patterns = { "kernel scrub ioctl is missing*",
			"scrub not supported on scratch filesystem*" },
	  .cause = "the kernel has no online scrub for xfs (CONFIG_XFS_ONLINE_SCRUB)",
	  .refine = fix_kconfig,
	  .arg = "CONFIG_XFS_ONLINE_SCRUB" },
	{ .id = "repair",
	  .patterns = { "kernel does not support repair*" },
	  .cause = "the kernel has no online repair for xfs (CONFIG_XFS_ONLINE_REPAIR)",
	  .refine = fix_kconfig,
	  .arg = "CONFIG_XFS_ONLINE_REPAIR" },
	{ .id = "scrub-none",
	  .patterns = { "no online scrub program for *" },
	  .cause = "%s has no online scrub (a checker of a mounted filesystem); xfs has one",
	  .fix = "nothing to fix: the test does not apply to this filesystem",
	  .natural = true },
	{ .id = "scrub-type",
	  .patterns = { "kernel does not know about: *", "kernel does not support: *" },
	  .cause = "the kernel's online scrub does not know the check '%s'",
	  .fix = "use a newer kernel (the check came with a later release)",
	  .per_subject = true },
	{ .id = "error-injection-kernel",
	  .patterns = { "xfs error injection * unknown on this kernel*" },
	  .cause = "the kernel has no xfs error injection point '%s'",
	  .fix = "use a newer kernel (the injection point came with a later release)",
	  .per_subject = true },
	{ .id = "error-injection-xfsprogs",
	  .patterns = { "xfs error injection * unknown*" },
	  .cause =
		  "xfs_io (xfsprogs) in the appliance does not know the error injection point '%s'",
	  .fix = "the appliance's xfsprogs is Debian's: a newer Debian release has a newer one "
		 "(fswb appliance build --release NAME)",
	  .per_subject = true },
	{ .id = "dm-target",
	  .patterns = { "this test requires dm * support*",
			"this test requires error_writes feature in dm-*",
			"failed to create dm thin*" },
	  .cause = "the kernel has no device-mapper '%s' target",
	  .fix = "build the kernel with CONFIG_BLK_DEV_DM and the target's option",
	  .per_subject = true,
	  .refine = fix_dm },
	{ .id = "quota-tools",
	  .patterns = { "quota user tools not installed*", "xfs quota user tools not installed*",
			"setquota doesn't support*" },
	  .cause = "the quota tools are not in the test appliance, or are too old",
	  .fix = "fswb's appliance installs the quota package (and xfsprogs' xfs_quota): this "
		 "appliance is older; rebuild it with fswb appliance build --force" },
	{ .id = "quota-xfs-kernel",
	  .patterns = { "installed kernel does not support xfs quota*" },
	  .cause = "the kernel was built without xfs quotas (CONFIG_XFS_QUOTA)",
	  .refine = fix_kconfig,
	  .arg = "CONFIG_XFS_QUOTA" },
	{ .id = "quota-kernel",
	  .patterns = { "installed kernel does not support*quota*",
			"no quota support at mount time*" },
	  .cause =
		  "the kernel was built without quotas (CONFIG_QUOTA, and CONFIG_QFMT_V2 for ext4)",
	  .refine = fix_kconfig,
	  .arg = "CONFIG_QUOTA" },
	{ .id = "quota-rt-kernel",
	  .patterns = { "kernel driver does not support rt quota*" },
	  .cause = "the kernel has no quotas on xfs realtime devices",
	  .fix = "use a newer kernel (realtime quotas came with Linux 6.14)" },
	{ .id = "quota-rt",
	  .patterns = { "quota on internal rt device not supported*",
			"quotas not supported on realtime*" },
	  .cause = "quotas do not work with this configuration's realtime device",
	  .fix = "nothing to fix: the test does not apply to this configuration",
	  .natural = true },
	{ .id = "quota-mount",
	  .patterns = { "*quota not enabled*", "*quota disabled*", "*quota sysfile not enabled*",
			"*accounting not enabled on*" },
	  .cause = "the filesystem is not mounted with the quotas the test checks",
	  .refine = fix_config,
	  .arg = "quota" },
	{ .id = "kconfig",
	  .patterns = { "installed kernel not built with *", "*requires config_*",
			"require * built with config_*",
			"need compaction enabled config_compaction*", "needs config_debugfs*" },
	  .cause = "the kernel was built without %s",
	  .per_subject = true,
	  .refine = fix_kconfig },
	{ .id = "vm",
	  .patterns = { "*virtual machine*", "*not in a vm*", "*must run in a vm*",
			"*requires a vm*" },
	  .cause = "the test only runs inside a virtual machine",
	  .fix = "run it on a VM backend (qemu, libvirt, gce)" },

	/* ---- fstests itself ---- */
	{ .id = "test-bug",
	  .patterns = { "* stress test requires common/*", "error: _scratch_mkfs_sized: *" },
	  .cause = "the test itself is wrong (it calls a helper it did not load, or passes it a "
		   "bad value)",
	  .fix = "nothing fswb can change: report it to the fstests list (fstests@vger.kernel.org) "
		 "or use a newer fstests" },
	{ .id = "fstests-program",
	  .patterns = { "* not built*", "src/* executable not found*", "* utilities required*" },
	  .cause = "fstests' own program %s was not built in the appliance",
	  .fix = "fstests' build in the appliance left it out: look for it in the appliance's "
		 "build.log (fswb appliance list shows the appliance) and rebuild (fswb appliance "
		 "build --force)",
	  .per_subject = true },

	/* ---- the configuration's options and the filesystem ---- */
	{ .id = "alloc-unit",
	  .patterns = { "*file alloc unit * larger than op length*",
			"*file alloc unit * not congruent with op length*" },
	  .cause = "the configuration's allocation unit (a bigalloc cluster, an xfs realtime "
		   "extent) does not fit the test's I/O sizes",
	  .fix = "nothing to fix: the test does not apply to this configuration; it runs on one "
		 "with plain 4k blocks (ext4/4k, xfs/4k)",
	  .natural = true },
	{ .id = "mount-options",
	  .patterns = { "mount option * not allowed in this test*",
			"this test requires no * enabled*",
			"test requires delayed allocation buffered writes*" },
	  .cause = "the configuration's mount or mkfs options are ones this test cannot run with",
	  .fix = "nothing to fix: the test does not apply to this configuration; it runs on the "
		 "filesystem's plain configuration",
	  .natural = true },
	{ .id = "large-fs",
	  .patterns = { "large filesystem testing in progress*" },
	  .cause = "the run fills the scratch device first (LARGE_SCRATCH_DEV), which this test "
		   "cannot work with",
	  .fix = "nothing to fix: the test does not apply to a large-filesystem run",
	  .natural = true },
	{ .id = "mkfs-failed",
	  .patterns = { "_scratch_mkfs*: *", "_scratch_mkfs* failed*", "failed to format *",
			"cannot format *", "cannot mount *", "mount * with * failed*" },
	  .cause = "mkfs or mount refused what the test asked for on top of the configuration's "
		   "MKFS_OPTIONS or MOUNT_OPTIONS",
	  .fix = "the test's .full file in the results has mkfs's or mount's words; often the "
		 "options clash and the test runs in the filesystem's plain configuration" },
	{ .id = "xfs-io-fs",
	  .patterns = { "xfs_io * not supported on *" },
	  .cause = "the filesystem does not have the operation '%s'",
	  .fix = "nothing to fix: the test does not apply to this filesystem",
	  .per_subject = true,
	  .natural = true },
	{ .id = "xfs-io-command",
	  .patterns = { "xfs_io * support is missing*", "xfs_io * doesn't support *",
			"xfs_io * failed (*", "xfs_spaceman * support is missing*",
			"xfs_spaceman * failed (*", "xfs_db * support is missing*",
			"xfs_io * ioctl support*" },
	  .cause = "xfs_io (xfsprogs) or the kernel lacks the operation '%s'",
	  .fix = "the appliance's xfsprogs is Debian's: a newer Debian release has a newer one "
		 "(fswb appliance build --release NAME); when xfsprogs has it, the kernel or the "
		 "filesystem does not (a newer kernel)",
	  .per_subject = true },
	{ .id = "mkfs-feature",
	  .patterns = { "mkfs.* doesn't support *", "mkfs.* does not support *",
			"mkfs.* doesn't have *",
			"feature * not supported in the available version of mkfs*",
			"mkfs does not support *", "need * support in mkfs*",
			"* userspace tools do not support *", "* userspace tools don't support *",
			"feature * not supported by the available *" },
	  .cause = "the filesystem tools (%s) in the appliance are too old for a feature the test "
		   "needs",
	  .fix = "the appliance's tools are Debian's: a newer Debian release has newer ones (fswb "
		 "appliance build --release NAME)",
	  .per_subject = true },
	{ .id = "program-old",
	  .patterns = { "* too old*", "need fio * (found *",
			"this test requires a * with --reflink*", "newer version of * required*" },
	  .cause = "the program '%s' in the test appliance is too old",
	  .per_subject = true,
	  .refine = fix_tool_old },
	{ .id = "scratch-feature",
	  .patterns = { "missing scratch feature*" },
	  .cause = "the configuration's scratch filesystem is made without a feature the test "
		   "exercises",
	  .fix = "nothing to fix: the test does not apply to this configuration",
	  .natural = true },
	{ .id = "module",
	  .patterns = { "*: must be a module*", "*: module could not be unloaded*",
			"*: module reload failed*", "* module in use*" },
	  .cause = "the test unloads and reloads the kernel module %s, which is built in or in use",
	  .fix = "the kernel must have it as a module (=m in its configuration: fswb kernel config "
		 "shows a build's), with nothing else holding it",
	  .per_subject = true },
	{ .id = "program",
	  .patterns = { "* utility required, skipped this test*", "this test requires * utility*",
			"* command not found*", "* binary not found*", "* executable not found*",
			"* not found or executable*", "* not found", "* binary not yet installed*",
			"* binary not present*", "fio engine * not available*",
			"missing * command*", "missing *", "this test requires '*' tool*",
			"* testsuite required*" },
	  .cause = "the program '%s' is not in the test appliance",
	  .per_subject = true,
	  .refine = fix_program },
	{ .id = "kernel-feature",
	  .patterns = { "kernel does not support *", "kernel doesn't support *",
			"kernel does not know about *", "* are not supported by kernel*",
			"* is not supported by kernel*", "* not supported by kernel*",
			"* not supported by this kernel*", "* not supported by the current kernel*",
			"kernel is unaware of *", "no kernel support for *",
			"* not supported in the kernel*", "kernel * isn't configured with *",
			"*missing kernel crypto api support*", "* unavailable",
			"* kernel support is missing*", "kernel can't *" },
	  .cause = "the kernel does not support %s",
	  .fix = "use a newer kernel, or one built with that feature enabled",
	  .per_subject = true },
	{ .id = "fs-feature",
	  .patterns = { "* does not define maximum *",
			"* not supported by test filesystem type*",
			"* not supported by scratch filesystem type*",
			"not suitable for this filesystem type*",
			"* not supported by this filesystem*",
			"* does not support *",
			"* doesn't support *",
			"* not supported on *",
			"* not maintained by *",
			"* is not supported*",
			"missing scratch feature*",
			"* not supported by * filesystem type*",
			"* not supported in *",
			"* not supported for *",
			"* isn't implemented on *",
			"* doesn't honour *",
			"* doesn't perform *",
			"* does not have *",
			"* does not allow *",
			"* does not store *",
			"* not enabled by this filesystem*",
			"no * support*",
			"* not support by *",
			"* not available on *",
			"* isn't usable by default*",
			"* no longer functional*",
			"* not supported",
			"* cannot be enabled on *",
			"* not supported by *",
			"* have no effect on *",
			"require symlinks support*",
			"cannot run xfs_db on *",
			"subpage sectorsize support is not found*" },
	  .cause = "the filesystem or its configuration does not have a feature the test exercises",
	  .fix = "nothing to fix: the test does not apply to this filesystem or configuration",
	  .natural = true },
	{ .id = "device-size",
	  .patterns = { "*device too small*", "*device size too small*", "* too small*",
			"this test requires at least *gb free*", "not enough space*" },
	  .cause = "a device is too small for the test",
	  .fix = "nothing fswb can change in this configuration: its disk sizes are in its profile "
		 "(fswb profiles show CFG); a configuration with bigger disks runs it" },
	{ .id = "kmsg",
	  .patterns = { "test requires writable /dev/kmsg*" },
	  .cause = "/dev/kmsg is not writable",
	  .fix = "run check as root in a guest with /dev/kmsg" },

	/* ---- the catch-alls: the words only ---- */
	{ .id = "setup-failed",
	  .patterns = { "could not *", "cannot *", "can't *", "failed to *", "not able to *",
			"* failed with *" },
	  .cause = "the test could not set up what it needs",
	  .fix = "read the test's .full file in the results for the step that failed; the "
		 "configuration's MKFS_OPTIONS or MOUNT_OPTIONS may clash with what the test asks "
		 "for",
	  .generic = true },
	{ .id = "requirement",
	  .patterns = { "this test requires *", "test requires *", "require *", "requires *",
			"need *", "* required*" },
	  .cause = "the test requires %s",
	  .fix = "see the _require lines at the top of the test (tests/DIR/NNN) for what it needs",
	  .per_subject = true,
	  .generic = true },
};

static const struct rule *
find_rule(const char *id)
{
	for (size_t i = 0; i < ARRAY_SIZE(rules); i++)
		if (!strcmp(rules[i].id, id))
			return &rules[i];
	return NULL;
}

/* Match pattern (lower case, '*' wildcards) against text ignoring case. */
static bool
match_at(const char *pat, const char *text, const char **cap_start, const char **cap_end,
	 bool first)
{
	while (*pat) {
		if (*pat == '*') {
			while (*pat == '*')
				pat++;
			for (const char *t = text;; t++) {
				const char *cs = NULL, *ce = NULL;

				if (match_at(pat, t, &cs, &ce, false)) {
					if (first) {
						*cap_start = text;
						*cap_end = t;
					}
					return true;
				}
				if (!*t)
					return false;
			}
		}
		if (!*text || tolower((unsigned char)*text) != *pat)
			return false;
		pat++;
		text++;
	}
	return !*text;
}

/* The text as a subject: trimmed, without quotes and a trailing '.'. */
static char *
clean_subject(const char *s, const char *e)
{
	while (s < e && (isspace((unsigned char)*s) || *s == '\'' || *s == '"' || *s == '$'))
		s++;
	while (e > s && (isspace((unsigned char)e[-1]) || e[-1] == '\'' || e[-1] == '"' ||
			 e[-1] == '.' || e[-1] == ',' || e[-1] == ':'))
		e--;
	return e > s ? xstrndup(s, (size_t)(e - s)) : NULL;
}

/* The first CONFIG_X in s, or NULL. */
static char *
config_option(const char *s)
{
	const char *c = strstr(s, "CONFIG_");
	size_t n = 7;

	if (!c)
		return NULL;
	while (isupper((unsigned char)c[n]) || isdigit((unsigned char)c[n]) || c[n] == '_')
		n++;
	return n > 7 ? xstrndup(c, n) : NULL;
}

static char *
fill(const char *tmpl, const char *subject)
{
	const char *p = strstr(tmpl, "%s");
	struct strbuf sb = STRBUF_INIT;

	while (p) {
		strbuf_add(&sb, tmpl, (size_t)(p - tmpl));
		strbuf_adds(&sb, subject ? subject : "something");
		tmpl = p + 2;
		p = strstr(tmpl, "%s");
	}
	strbuf_adds(&sb, tmpl);
	return strbuf_detach(&sb);
}

static void
set_fix(struct notrun_explanation *e, char *fix)
{
	free(e->fix);
	e->fix = fix;
}

/* ---- kernel options: the fragment of profiles/kconfig/ that sets one ---- */

/* The value fragment text gives option ("y", "m"), or NULL. */
static char *
fragment_value(const char *text, const char *option)
{
	size_t n = strlen(option);

	for (const char *l = text; *l; l += strcspn(l, "\n"), l += *l == '\n') {
		if (!strncmp(l, option, n) && l[n] == '=')
			return xstrndup(l + n + 1, strcspn(l + n + 1, " \t\n"));
	}
	return NULL;
}

/* Fragments other than debug-NAME ones first, then by name. */
static bool
fragment_before(const char *a, const char *b)
{
	bool da = str_startswith(a, "debug-"), db = str_startswith(b, "debug-");

	return da != db ? db : strcmp(a, b) < 0;
}

/*
 * The fragment (file name) under profiles/kconfig/ that sets option, and
 * its value; a debug-NAME fragment is taken only when no other has it.
 */
static char *
find_fragment(const struct notrun_context *ctx, const char *option, char **value)
{
	char *dir, *found = NULL;
	DIR *d;
	struct dirent *de;

	*value = NULL;
	if (!ctx || !ctx->profiles || !ctx->profiles->dir)
		return NULL;
	dir = path_join(ctx->profiles->dir, "kconfig");
	d = opendir(dir);
	while (d && (de = readdir(d))) {
		char *path, *text = NULL, *v;
		size_t len;

		if (!str_endswith(de->d_name, ".config") || de->d_name[0] == '.')
			continue;
		path = path_join(dir, de->d_name);
		if (read_file(path, 1u << 20, &text, &len) != OK) {
			error_clear(); /* a fragment that cannot be read names nothing */
		} else if ((v = fragment_value(text, option))) {
			if (!found || fragment_before(de->d_name, found)) {
				free(found);
				free(*value);
				found = xstrdup(de->d_name);
				*value = v;
			} else {
				free(v);
			}
		}
		free(text);
		free(path);
	}
	if (d)
		closedir(d);
	free(dir);
	return found;
}

static void
fix_kconfig(const struct rule *r, const char *reason, const struct notrun_context *ctx,
	    struct notrun_explanation *e)
{
	const char *option = r->arg ? r->arg : e->subject ? e->subject : "the option";
	bool module = !strcmp(option, "CONFIG_SCSI_DEBUG");
	char *value, *frag = find_fragment(ctx, option, &value);
	struct strbuf sb = STRBUF_INIT;

	(void)reason;
	if (frag && str_startswith(frag, "debug-")) {
		size_t n = strlen(frag) - strlen("debug-") - strlen(".config");

		strbuf_addf(&sb,
			    "fswb run --debug %.*s builds the kernel with it (kconfig/%s sets "
			    "%s=%s); an installed kernel cannot get it",
			    (int)n, frag + strlen("debug-"), frag, option, value);
	} else if (frag && (!module || !strcmp(value, "m"))) {
		strbuf_addf(&sb,
			    "kernels fswb builds have it (kconfig/%s sets %s=%s): run with a "
			    "kernel tree (--kernel TREE); an installed or prebuilt kernel needs "
			    "it from whoever built it",
			    frag, option, value);
	} else {
		strbuf_addf(&sb,
			    "build the kernel with %s=%s: add it to a fragment under "
			    "profiles/kconfig/ (fswb kernel config shows what a build gets) and "
			    "run with a kernel tree (--kernel TREE)",
			    option, module ? "m" : "y");
		if (frag)
			strbuf_addf(&sb, "; kconfig/%s sets it to %s", frag, value);
	}
	set_fix(e, strbuf_detach(&sb));
	free(frag);
	free(value);
}

/* A device-mapper target: the kernel option that builds it. */
static void
fix_dm(const struct rule *r, const char *reason, const struct notrun_context *ctx,
       struct notrun_explanation *e)
{
	static const struct {
		const char *target, *option;
	} targets[] = {
		{ "flakey", "CONFIG_DM_FLAKEY" },
		{ "log-writes", "CONFIG_DM_LOG_WRITES" },
		{ "thin-pool", "CONFIG_DM_THIN_PROVISIONING" },
		{ "snapshot", "CONFIG_DM_SNAPSHOT" },
		{ "delay", "CONFIG_DM_DELAY" },
		{ "dust", "CONFIG_DM_DUST" },
		{ "zero", "CONFIG_DM_ZERO" },
		{ "error", "CONFIG_BLK_DEV_DM" },
		{ "linear", "CONFIG_BLK_DEV_DM" },
	};

	(void)r;
	for (size_t i = 0; e->subject && i < ARRAY_SIZE(targets); i++) {
		if (!strcmp(e->subject, targets[i].target)) {
			const struct rule option = { .arg = targets[i].option };

			fix_kconfig(&option, reason, ctx, e);
			return;
		}
	}
}

/* ---- configurations that have what the test needs ---- */

static bool
config_has(const struct fs_config *c, const char *need)
{
	if (!strcmp(need, "pool"))
		return c->pool_devices > 0;
	if (!strcmp(need, "logdev"))
		return c->logdev_size > 0;
	if (!strcmp(need, "rtdev"))
		return c->rtdev_size > 0;
	if (!strcmp(need, "quota"))
		return strstr(c->mount_options, "quota") != NULL;
	if (!strcmp(need, "overlay"))
		return !strcmp(c->fstyp, "overlay");
	return false;
}

/* The configurations that have need, the run's filesystem's first; "" when none. */
static char *
configs_with(const struct notrun_context *ctx, const char *need)
{
	struct strvec mine = STRVEC_INIT, other = STRVEC_INIT;
	char *list;

	for (size_t i = 0; ctx && ctx->profiles && i < ctx->profiles->nconfigs; i++) {
		const struct fs_config *c = &ctx->profiles->configs[i];

		if (config_has(c, need))
			strvec_push(ctx->fstyp && !strcmp(ctx->fstyp, c->fstyp) ? &mine : &other,
				    c->name);
	}
	for (size_t i = 0; i < other.n; i++)
		strvec_push(&mine, other.v[i]);
	list = strvec_join(&mine, ", ");
	strvec_clear(&mine);
	strvec_clear(&other);
	return list;
}

static void
fix_config(const struct rule *r, const char *reason, const struct notrun_context *ctx,
	   struct notrun_explanation *e)
{
	char *list = configs_with(ctx, r->arg);
	const char *what = !strcmp(r->arg, "quota") ? "mounts with quotas" : "has one";

	(void)reason;
	if (*list) {
		size_t n = strcspn(list, ",");
		const char *more = list[n] ? list + n + 2 : NULL;

		set_fix(e, xasprintf("run a configuration that %s: fswb run -c %.*s%s%s%s", what,
				     (int)n, list, more ? " (also: " : "", more ? more : "",
				     more ? ")" : ""));
	} else if (ctx && ctx->profiles) {
		set_fix(e, xasprintf("none of fswb's configurations %s yet: these tests do not run "
				     "under fswb",
				     what));
	} else {
		set_fix(e,
			xasprintf("run a configuration that %s (fswb profiles lists them)", what));
	}
	free(list);
}

static void
fix_overlay(const struct rule *r, const char *reason, const struct notrun_context *ctx,
	    struct notrun_explanation *e)
{
	char *list = configs_with(ctx, "overlay");

	(void)r;
	(void)reason;
	if (*list) {
		set_fix(e, xasprintf("run it in an overlay configuration: fswb run -c %.*s",
				     (int)strcspn(list, ","), list));
	} else {
		e->natural = true;
		set_fix(e, xstrdup("nothing to fix: the test is for overlayfs, which this run does "
				   "not test"));
	}
	free(list);
}

/* ---- programs and the packages of the appliance ---- */

static const struct {
	const char *program, *package;
} packages[] = {
	{ "fio", "fio" },
	{ "dumpe2fs", "e2fsprogs" },
	{ "debugfs", "e2fsprogs" },
	{ "e2fsck", "e2fsprogs" },
	{ "tune2fs", "e2fsprogs" },
	{ "resize2fs", "e2fsprogs" },
	{ "e2image", "e2fsprogs" },
	{ "e4crypt", "e2fsprogs" },
	{ "e4defrag", "e2fsprogs" },
	{ "filefrag", "e2fsprogs" },
	{ "chattr", "e2fsprogs" },
	{ "lsattr", "e2fsprogs" },
	{ "mke2fs", "e2fsprogs" },
	{ "mkfs.ext4", "e2fsprogs" },
	{ "xfs_io", "xfsprogs" },
	{ "xfs_db", "xfsprogs" },
	{ "xfs_repair", "xfsprogs" },
	{ "xfs_scrub", "xfsprogs" },
	{ "xfs_admin", "xfsprogs" },
	{ "xfs_growfs", "xfsprogs" },
	{ "xfs_quota", "xfsprogs" },
	{ "xfs_spaceman", "xfsprogs" },
	{ "xfs_metadump", "xfsprogs" },
	{ "xfs_mdrestore", "xfsprogs" },
	{ "xfs_copy", "xfsprogs" },
	{ "mkfs.xfs", "xfsprogs" },
	{ "xfsdump", "xfsdump" },
	{ "xfsrestore", "xfsdump" },
	{ "xfsinvutil", "xfsdump" },
	{ "mkfs.btrfs", "btrfs-progs" },
	{ "btrfstune", "btrfs-progs" },
	{ "btrfs-image", "btrfs-progs" },
	{ "btrfs-convert", "btrfs-progs" },
	{ "btrfs", "btrfs-progs" },
	{ "btrfs_util", "btrfs-progs" },
	{ "mkfs.f2fs", "f2fs-tools" },
	{ "fsck.f2fs", "f2fs-tools" },
	{ "dump.f2fs", "f2fs-tools" },
	{ "f2fs_io", "f2fs-tools" },
	{ "mkfs.exfat", "exfatprogs" },
	{ "mkudffs", "udftools" },
	{ "attr", "attr" },
	{ "getfattr", "attr" },
	{ "setfattr", "attr" },
	{ "getfacl", "acl" },
	{ "setfacl", "acl" },
	{ "chacl", "acl" },
	{ "quota", "quota" },
	{ "setquota", "quota" },
	{ "repquota", "quota" },
	{ "quotacheck", "quota" },
	{ "quotaon", "quota" },
	{ "duperemove", "duperemove" },
	{ "dbench", "dbench" },
	{ "fsverity", "fsverity" },
	{ "dmsetup", "dmsetup" },
	{ "lvm", "lvm2" },
	{ "thin_check", "thin-provisioning-tools" },
	{ "keyctl", "keyutils" },
	{ "setcap", "libcap2-bin" },
	{ "getcap", "libcap2-bin" },
	{ "parted", "parted" },
	{ "bc", "bc" },
	{ "perl", "perl" },
	{ "python3", "python3" },
	{ "sqlite3", "sqlite3" },
	{ "openssl", "openssl" },
	{ "xxd", "xxd" },
	{ "lz4", "lz4" },
	{ "xz", "xz-utils" },
	{ "indent", "indent" },
	{ "dump", "dump" },
	{ "restore", "dump" },
	{ "hexdump", "bsdextrautils" },
	{ "uuidgen", "uuid-runtime" },
	{ "nfs4_getfacl", "nfs4-acl-tools" },
	{ "nfs4_setfacl", "nfs4-acl-tools" },
	{ "losetup", "util-linux" },
	{ "blkid", "util-linux" },
	{ "findmnt", "util-linux" },
	{ "fallocate", "util-linux" },
	{ "mkswap", "util-linux" },
	{ "swapon", "mount" },
	{ "killall", "psmisc" },
	{ "fuser", "psmisc" },
	{ "cp", "coreutils" },
	{ "fscryptctl", "fscryptctl" },
	{ "strace", "strace" },
	{ "unionmount", "unionmount-testsuite" },
};

/*
 * The package that provides program, as fstests words it: "xfs_scrub",
 * "/usr/sbin/xfs_scrub", "$FIO_PROG" (fio); NULL when none is known.
 */
static const char *
package_of(const char *program)
{
	const char *base = strrchr(program, '/') ? strrchr(program, '/') + 1 : program;
	char *low = xstrndup(base + (*base == '$'), strcspn(base, " \t") - (*base == '$'));
	const char *pkg = NULL;

	for (char *p = low; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	if (str_endswith(low, "_prog"))
		low[strlen(low) - 5] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(packages) && !pkg; i++)
		if (!strcmp(packages[i].program, low))
			pkg = packages[i].package;
	free(low);
	return pkg;
}

/* Whether the appliance installs package; false when the context does not say. */
static bool
in_appliance(const struct notrun_context *ctx, const char *package)
{
	for (size_t i = 0; ctx && ctx->packages && ctx->packages[i]; i++)
		if (!strcmp(ctx->packages[i], package))
			return true;
	return false;
}

static void
fix_program(const struct rule *r, const char *reason, const struct notrun_context *ctx,
	    struct notrun_explanation *e)
{
	const char *program = e->subject ? e->subject : "the program";
	const char *pkg = package_of(program);

	(void)r;
	(void)reason;
	if (pkg && in_appliance(ctx, pkg))
		set_fix(e,
			xasprintf("the package %s has it, and fswb's appliance installs it: this "
				  "appliance is older or was built with --packages; rebuild it "
				  "with fswb appliance build --force",
				  pkg));
	else if (pkg && ctx && ctx->packages)
		set_fix(e, xasprintf("the package %s has it; fswb's appliance does not install it",
				     pkg));
	else if (pkg)
		set_fix(e, xasprintf("the package %s has it: put it in the appliance", pkg));
	else
		set_fix(e, xasprintf("put '%s' in the appliance: fswb's appliance has no package "
				     "known to provide it",
				     program));
}

/* On a machine of the user's (ssh) what fswb would put in its kernel or appliance is done there. */
static void
own_machine_fix(const struct rule *r, struct notrun_explanation *e)
{
	const char *pkg = e->subject ? package_of(e->subject) : NULL;

	if (!strcmp(r->id, "logwrites-dev"))
		set_fix(e, xstrdup("name a spare device of the test machine for it: -o "
				   "logwrites=DEV (it is formatted, like TEST and SCRATCH)"));
	else if (r->refine == fix_kconfig)
		set_fix(e, xasprintf("the test machine's kernel lacks %s: boot it with a kernel "
				     "built with it (fswb kernel config shows the options fswb's "
				     "kernels get)",
				     r->arg	  ? r->arg
				     : e->subject ? e->subject
						  : "the option"));
	else if (r->refine == fix_program && pkg)
		set_fix(e, xasprintf("install %s on the test machine (the package %s has it)",
				     e->subject, pkg));
	else if (r->refine == fix_program)
		set_fix(e, xasprintf("install '%s' on the test machine",
				     e->subject ? e->subject : "it"));
	else if (r->refine == fix_tool_old)
		set_fix(e, xasprintf("install a newer %s on the test machine", pkg ? pkg
									       : e->subject
										       ? e->subject
										       : "tool"));
}

static void
fix_tool_old(const struct rule *r, const char *reason, const struct notrun_context *ctx,
	     struct notrun_explanation *e)
{
	const char *pkg = e->subject ? package_of(e->subject) : NULL;

	(void)r;
	(void)reason;
	(void)ctx;
	set_fix(e, xasprintf("the appliance's %s is Debian's: a newer Debian release has a "
			     "newer one (fswb appliance build --release NAME)",
			     pkg ? pkg : "program"));
}

/*
 * casefold: ext4 and f2fs have it when the kernel has CONFIG_UNICODE (the
 * kernel then lists it in /sys/fs/FS/features); other filesystems do not.
 */
static void
fix_casefold(const struct rule *r, const char *reason, const struct notrun_context *ctx,
	     struct notrun_explanation *e)
{
	const char *fs = e->subject ? e->subject : "";

	if (!strcmp(fs, "ext4") || !strcmp(fs, "f2fs") || !strcmp(fs, "tmpfs")) {
		const struct rule unicode = { .arg = "CONFIG_UNICODE" };

		free(e->cause);
		e->cause = xasprintf("the kernel has no Unicode support (CONFIG_UNICODE), which "
				     "%s's case-insensitive directories (casefold) need",
				     fs);
		fix_kconfig(&unicode, reason, ctx, e);
	} else {
		e->natural = true;
		free(e->cause);
		e->cause = xasprintf("%s has no case-insensitive directories (casefold)",
				     *fs ? fs : "the filesystem");
		set_fix(e, xstrdup("nothing to fix: the test does not apply to this filesystem"));
	}
	(void)r;
}

/* ---- the explainer ---- */

/* Whether a word is a program the appliance has (or should have): "xfs_admin", "mkfs.f2fs". */
static bool
is_program(const char *word)
{
	return package_of(word) != NULL;
}

/* The dm target a reason names ("flakey"), for dm-target reasons. */
static char *
dm_subject(const char *reason, char *captured)
{
	const char *d = strstr(reason, "dm-");

	if (strstr(reason, "dm thin"))
		return free(captured), xstrdup("thin-pool");
	if (d && strstr(reason, "error_writes")) {
		free(captured);
		return clean_subject(d + 3, d + 3 + strcspn(d + 3, " \t"));
	}
	return captured;
}

static void
apply(const struct rule *r, const char *t, const char *cs, const char *ce,
      const struct notrun_context *ctx, struct notrun_explanation *out)
{
	out->id = r->id;
	out->subject = cs ? clean_subject(cs, ce) : NULL;
	if (!strcmp(r->id, "kconfig")) {
		char *opt = config_option(t);

		if (opt) {
			free(out->subject);
			out->subject = opt;
		}
	} else if (!strcmp(r->id, "dm-target")) {
		out->subject = dm_subject(t, out->subject);
	} else if (!strcmp(r->id, "mkfs-feature") && str_startswith(t, "mkfs")) {
		free(out->subject);
		out->subject = xstrndup(t, strcspn(t, " \t"));
	} else if (out->subject && (!strcmp(r->id, "user") || !strcmp(r->id, "program-old"))) {
		/* "fsgqa user not defined.", "$FIO_PROG too old, see ..." */
		out->subject[strcspn(out->subject, " ,;")] = '\0';
	}
	out->cause = r->cause ? fill(r->cause, out->subject) : NULL;
	out->fix = r->fix ? fill(r->fix, out->subject) : NULL;
	out->natural = r->natural;
	out->generic = r->generic;
	if (r->refine)
		r->refine(r, t, ctx, out);
	if (ctx && ctx->own_machine)
		own_machine_fix(r, out);
	if (!r->per_subject) {
		free(out->subject);
		out->subject = NULL;
	}
}

bool
notrun_explain(const char *reason, const struct notrun_context *ctx, struct notrun_explanation *out)
{
	char *text = xstrdup(reason ? reason : "");
	char *t = str_trim(text);

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < ARRAY_SIZE(rules); i++) {
		const struct rule *r = &rules[i];

		for (size_t k = 0; k < ARRAY_SIZE(r->patterns) && r->patterns[k]; k++) {
			const char *cs = NULL, *ce = NULL;

			if (!match_at(r->patterns[k], t, &cs, &ce, true))
				continue;
			/* "xfs_admin does not support rt devices": the tool, not the filesystem */
			if (!strcmp(r->id, "fs-feature") && cs) {
				char *word = clean_subject(cs, ce);

				/* "btrfs does not support ...": the filesystem */
				if (word && !strpbrk(word, " \t") && is_program(word) &&
				    strcmp(word, "btrfs"))
					r = find_rule("program-old");
				free(word);
			}
			apply(r, t, cs, ce, ctx, out);
			free(text);
			return true;
		}
	}
	/* Unknown, but a kernel option named anywhere is still a kernel option. */
	if (strstr(t, "CONFIG_")) {
		apply(find_rule("kconfig"), t, NULL, NULL, ctx, out);
		if (out->subject) {
			free(text);
			return true;
		}
		notrun_explanation_release(out);
	}
	out->cause = xstrdup(*t ? t : "no reason given");
	free(text);
	return false;
}

void
notrun_explanation_release(struct notrun_explanation *e)
{
	free(e->subject);
	free(e->cause);
	free(e->fix);
	memset(e, 0, sizeof(*e));
}

static int
cmp_group(const void *a, const void *b)
{
	const struct notrun_group *x = a, *y = b;

	if (x->natural != y->natural)
		return x->natural ? 1 : -1;
	if (x->tests.n != y->tests.n)
		return x->tests.n > y->tests.n ? -1 : 1;
	return strcmp(x->cause, y->cause);
}

void
notrun_group(const char *const *tests, const char *const *reasons, size_t n,
	     const struct notrun_context *ctx, struct notrun_groups *out)
{
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < n; i++) {
		struct notrun_explanation e;
		struct notrun_group *g = NULL;
		const char *reason = reasons[i] && *reasons[i] ? reasons[i] : "no reason given";

		notrun_explain(reason, ctx, &e);
		for (size_t k = 0; k < out->n && !g; k++) {
			struct notrun_group *c = &out->groups[k];
			bool same = e.id ? c->id && !strcmp(c->id, e.id) &&
						    ((!c->subject && !e.subject) ||
						     (c->subject && e.subject &&
						      !strcmp(c->subject, e.subject)))
					 : !c->id && !strcmp(c->cause, e.cause);

			if (same)
				g = c;
		}
		if (!g) {
			ALLOC_GROW(out->groups, out->n + 1, out->alloc);
			g = &out->groups[out->n++];
			g->id = e.id;
			g->subject = e.subject;
			g->cause = e.cause;
			g->fix = e.fix;
			g->natural = e.natural;
			g->generic = e.generic;
			strvec_init(&g->tests);
			strvec_init(&g->reasons);
		} else {
			notrun_explanation_release(&e);
		}
		strvec_push(&g->tests, tests[i] ? tests[i] : "");
		if (!strvec_contains(&g->reasons, reason))
			strvec_push(&g->reasons, reason);
	}
	if (out->n > 1)
		qsort(out->groups, out->n, sizeof(*out->groups), cmp_group);
}

void
notrun_groups_release(struct notrun_groups *g)
{
	for (size_t i = 0; i < g->n; i++) {
		free(g->groups[i].subject);
		free(g->groups[i].cause);
		free(g->groups[i].fix);
		strvec_clear(&g->groups[i].tests);
		strvec_clear(&g->groups[i].reasons);
	}
	free(g->groups);
	memset(g, 0, sizeof(*g));
}
