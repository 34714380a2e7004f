/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "fstests/notrun.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/*
 * A rule: patterns in lower case where '*' matches any text (the first '*'
 * is the subject), the cause and fix ('%s' is the subject), and whether
 * each subject is a group of its own.
 */
struct rule {
	const char *id;
	const char *patterns[32];
	const char *cause, *fix;
	bool per_subject, natural;
};

static const struct rule rules[] = {
	{ "scratch-pool",
	  { "this test requires a valid $scratch_dev_pool*", "*or more disks in scratch_dev_pool*",
	    "*requires devices in scratch_dev_pool*",
	    "need at least test requested number of ndevs*", "all devs used no spare*",
	    "dev_pool is not supported*" },
	  "no scratch device pool (SCRATCH_DEV_POOL, several scratch disks) is set up",
	  "run a configuration with pool_devices set (a btrfs pool configuration) so that the "
	  "guest gets several scratch disks",
	  false,
	  false },
	{ "scratch-dev",
	  { "this test requires a valid $scratch_dev*", "this test requires a valid $scratch_mnt*",
	    "*requires valid block disk*" },
	  "no scratch device (SCRATCH_DEV) is set up",
	  "run a configuration with a scratch device (scratch_size in its profile)",
	  false,
	  false },
	{ "test-dev",
	  { "this test requires a valid $test_dev*", "this test requires a valid $test_dir*" },
	  "no test device (TEST_DEV) is set up",
	  "run a configuration with a test device",
	  false,
	  false },
	{ "logwrites-dev",
	  { "this test requires a valid $logwrites_dev*" },
	  "no log-writes device (LOGWRITES_DEV) is set up: the test replays writes with "
	  "dm-log-writes",
	  "give the guest one more disk and set LOGWRITES_DEV to it (the device list of the run)",
	  false,
	  false },
	{ "external-log",
	  { "this test requires a valid $scratch_logdev*", "this test requires use_external*",
	    "external volumes not in use*", "could not make scratch logdev*" },
	  "the test needs an external log device (USE_EXTERNAL=yes, SCRATCH_LOGDEV)",
	  "run a configuration with an external log (logdev_size in its profile)",
	  false,
	  false },
	{ "rt-dev",
	  { "realtime device required*", "*scratch rt device too small*" },
	  "the test needs a realtime device (SCRATCH_RTDEV)",
	  "run an xfs configuration with a realtime device (rtdev_size in its profile)",
	  false,
	  false },
	{ "user-123456",
	  { "123456-fsgqa user not defined*", "123456-fsgqa group not defined*" },
	  "the user and group '123456-fsgqa' (a name starting with digits) are missing",
	  "create them in the test appliance: useradd -U 123456-fsgqa (they are part of "
	  "fstests' setup, with fsgqa and fsgqa2)",
	  false,
	  false },
	{ "user",
	  { "* user not defined*", "* group not defined*", "* cannot execute commands*",
	    "password file does not contain user nobody*", "group file does not contain nobody*" },
	  "the user '%s' that fstests runs unprivileged commands as is missing",
	  "create it in the test appliance: useradd -m -U %s (fstests expects fsgqa, fsgqa2 and "
	  "123456-fsgqa)",
	  true,
	  false },
	{ "dm-target",
	  { "this test requires dm * support*", "this test requires error_writes feature in dm-*",
	    "failed to create dm thin*", "cannot use * devices on dax*" },
	  "the kernel has no device-mapper '%s' target",
	  "build the kernel with CONFIG_BLK_DEV_DM and the target's option (CONFIG_DM_FLAKEY "
	  "for flakey, CONFIG_DM_LOG_WRITES for log-writes, CONFIG_DM_THIN_PROVISIONING for "
	  "thin-pool, CONFIG_DM_SNAPSHOT, CONFIG_DM_DELAY, CONFIG_DM_DUST), or load its module",
	  true,
	  false },
	{ "kconfig",
	  { "installed kernel not built with *", "*requires config_*",
	    "require * built with config_*", "need compaction enabled config_compaction*",
	    "needs config_debugfs*" },
	  "the kernel was built without %s",
	  "add %s=y to the kernel configuration (a fragment under profiles/kconfig/) and rebuild",
	  true,
	  false },
	{ "quota-tools",
	  { "quota user tools not installed*", "xfs quota user tools not installed*",
	    "setquota doesn't support*" },
	  "the quota tools are not in the test appliance",
	  "install the quota package (and xfsprogs' xfs_quota for xfs) in the appliance",
	  false,
	  false },
	{ "quota",
	  { "installed kernel does not support*quota*", "*quota not enabled*", "*quota disabled*",
	    "no quota support at mount time*", "*quota sysfile not enabled*",
	    "*accounting not enabled on*", "kernel driver does not support rt quota*" },
	  "quotas are not enabled",
	  "build the kernel with CONFIG_QUOTA and CONFIG_QFMT_V2 (CONFIG_XFS_QUOTA for xfs), and "
	  "mount with quota options (MOUNT_OPTIONS) when the test expects them on",
	  false,
	  false },
	{ "xfs-io-command",
	  { "xfs_io * support is missing*", "xfs_io * doesn't support *", "xfs_io * failed (*",
	    "xfs_io * not supported on *", "xfs_spaceman * support is missing*",
	    "xfs_spaceman * failed (*", "xfs_db * support is missing*", "xfs_io * ioctl support*" },
	  "xfs_io (xfsprogs) or the kernel lacks the operation '%s'",
	  "put a newer xfsprogs in the appliance; when it is new enough, the kernel or the "
	  "filesystem does not have the operation",
	  true,
	  false },
	{ "mkfs-feature",
	  { "mkfs.* doesn't support *", "mkfs.* does not support *", "mkfs.* doesn't have *",
	    "feature * not supported in the available version of mkfs*", "mkfs does not support *",
	    "need * support in mkfs*", "* userspace tools do not support *",
	    "* userspace tools don't support *" },
	  "the filesystem tools (%s) are too old for a feature the test needs",
	  "put newer tools in the appliance (xfsprogs, e2fsprogs, btrfs-progs, f2fs-tools)",
	  true,
	  false },
	{ "program",
	  { "* utility required, skipped this test*", "this test requires * utility*",
	    "* command not found*", "* binary not found*", "* executable not found*",
	    "* not found or executable*", "* not built*", "* not found",
	    "* binary not yet installed*", "* binary not present*", "fio engine * not available*",
	    "missing * command*", "missing *", "this test requires '*' tool*" },
	  "the program '%s' is not in the test appliance",
	  "install the package that provides '%s' in the appliance (or build it with fstests' "
	  "src/ when it is one of fstests' own helpers)",
	  true,
	  false },
	{ "program-old",
	  { "* too old*", "need fio * (found *" },
	  "the program '%s' in the test appliance is too old",
	  "put a newer version of it in the appliance",
	  true,
	  false },
	{ "vm",
	  { "*virtual machine*", "*not in a vm*", "*must run in a vm*", "*requires a vm*" },
	  "the test only runs inside a virtual machine",
	  "run it on a VM backend (qemu, libvirt, gce)",
	  false,
	  false },
	{ "kernel-feature",
	  { "kernel does not support *", "kernel doesn't support *", "kernel does not know about *",
	    "* are not supported by kernel*", "* is not supported by kernel*",
	    "* not supported by kernel*", "* not supported by this kernel*",
	    "* not supported by the current kernel*", "kernel is unaware of *",
	    "no kernel support for *", "* not supported in the kernel*",
	    "kernel * isn't configured with *", "*missing kernel crypto api support*",
	    "* unavailable", "* kernel support is missing*" },
	  "the kernel does not support %s",
	  "use a newer kernel, or one built with that feature enabled",
	  true,
	  false },
	{ "fs-feature",
	  { "* does not define maximum *",
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
	    "* have no effect on *" },
	  "the filesystem or its configuration does not have a feature the test exercises",
	  "nothing to fix: the test does not apply to this filesystem or configuration",
	  false,
	  true },
	{ "device-size",
	  { "*device too small*", "*device size too small*", "* too small*",
	    "this test requires at least *gb free*", "not enough space*" },
	  "a device is too small for the test",
	  "give the configuration larger devices (test_size, scratch_size)",
	  false,
	  false },
	{ "setup-failed",
	  { "_scratch_mkfs* failed*", "_scratch_mkfs*: *", "mount * with * failed*", "could not *",
	    "cannot *", "can't *", "failed to *", "not able to *", "* failed with *" },
	  "the test could not set up what it needs",
	  "read the test's .full file in the results for the step that failed; the "
	  "configuration's MKFS_OPTIONS or MOUNT_OPTIONS may clash with what the test asks for",
	  false,
	  false },
	{ "kmsg",
	  { "test requires writable /dev/kmsg*" },
	  "/dev/kmsg is not writable",
	  "run check as root in a guest with /dev/kmsg",
	  false,
	  false },
	{ "requirement",
	  { "this test requires *", "test requires *", "require *", "requires *", "need *",
	    "* required*" },
	  "the test requires %s",
	  "see the _require lines at the top of the test (tests/DIR/NNN) for what it needs",
	  true,
	  false },
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

bool
notrun_explain(const char *reason, struct notrun_explanation *out)
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
			} else if (!strcmp(r->id, "user") && out->subject) {
				/* "fsgqa user not defined." */
				char *sp = strchr(out->subject, ' ');

				if (sp)
					*sp = '\0';
			}
			out->cause = fill(r->cause, out->subject);
			out->fix = fill(r->fix, out->subject);
			out->natural = r->natural;
			if (!r->per_subject) {
				free(out->subject);
				out->subject = NULL;
			}
			free(text);
			return true;
		}
	}
	/* Unknown, but a kernel option named anywhere is still a kernel option. */
	{
		char *opt = config_option(t);

		if (opt) {
			out->id = "kconfig";
			out->subject = opt;
			out->cause = fill(find_rule("kconfig")->cause, opt);
			out->fix = fill(find_rule("kconfig")->fix, opt);
			free(text);
			return true;
		}
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

	if (x->tests.n != y->tests.n)
		return x->tests.n > y->tests.n ? -1 : 1;
	return strcmp(x->cause, y->cause);
}

void
notrun_group(const char *const *tests, const char *const *reasons, size_t n,
	     struct notrun_groups *out)
{
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < n; i++) {
		struct notrun_explanation e;
		struct notrun_group *g = NULL;
		const char *reason = reasons[i] && *reasons[i] ? reasons[i] : "no reason given";

		notrun_explain(reason, &e);
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
