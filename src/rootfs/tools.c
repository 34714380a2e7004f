/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What builds the appliance here: see appliance_int.h.
 */
#include <errno.h>
#include <jansson.h>
#include <pwd.h>
#include <signal.h>
#include <string.h>

#include "core/paths.h"
#include "rootfs/appliance_int.h"

static bool
read_sysctl(const char *path, long *value)
{
	char *text = NULL;
	bool ok = false;

	if (path_exists(path) && read_file(path, 4096, &text, NULL) == OK) {
		char *end;

		errno = 0;
		*value = strtol(text, &end, 10);
		ok = !errno && end != text;
	}
	free(text);
	error_clear();
	return ok;
}

void
ap_tools_release(struct tools *t)
{
	free(t->bootstrap);
	free(t->mkfs);
	free(t->du);
	free(t->git);
	free(t->tar);
	memset(t, 0, sizeof(*t));
}

/* Does /etc/subuid (or subgid) give user (name or uid) a range? */
static bool
has_subids(const char *file, const char *name, uid_t uid)
{
	char *text = NULL;
	struct strvec lines = STRVEC_INIT;
	char uidstr[32];
	bool found = false;

	snprintf(uidstr, sizeof(uidstr), "%lu", (unsigned long)uid);
	if (read_file(file, MAX_CONFIG, &text, NULL) != OK) {
		error_clear();
		return false;
	}
	strvec_split(&lines, text, "\n");
	for (size_t i = 0; !found && i < lines.n; i++) {
		char *colon = strchr(lines.v[i], ':');

		if (!colon)
			continue;
		*colon = '\0';
		if ((name && !strcmp(lines.v[i], name)) || !strcmp(lines.v[i], uidstr))
			found = true;
	}
	strvec_clear(&lines);
	free(text);
	return found;
}

enum status
ap_tools_probe(struct tools *t, struct strbuf *why)
{
	struct strbuf local = STRBUF_INIT;
	struct strbuf *w = why ? why : &local;
	char *mm = path_which("mmdebstrap", NULL, SBIN_DIRS);
	char *deb = path_which("debootstrap", NULL, SBIN_DIRS);
	const char *force = getenv("FSWB_APPLIANCE_MODE");
	bool want_root = force && !strcmp(force, "root");
	bool want_unshare = force && !strcmp(force, "unshare");
	bool want_deb = force && !strcmp(force, "debootstrap");
	enum status rc = OK;
	long v;

	memset(t, 0, sizeof(*t));
	strbuf_reset(w);
	t->mkfs = path_which("mkfs.ext4", NULL, SBIN_DIRS);
	t->du = path_which("du", NULL, SBIN_DIRS);
	t->git = path_which("git", NULL, SBIN_DIRS);
	t->tar = path_which("tar", NULL, SBIN_DIRS);
	if (force && *force && !want_root && !want_unshare && !want_deb) {
		strbuf_addf(w, "FSWB_APPLIANCE_MODE='%s' is not root, unshare or debootstrap",
			    force);
		rc = ERR_INVALID;
	} else if (!t->mkfs) {
		strbuf_adds(w, "mkfs.ext4 is missing: install e2fsprogs (1.43 or later, for "
			       "mkfs.ext4 -d)");
		rc = ERR_UNSUPPORTED;
	} else if (geteuid() == 0 && !want_unshare) {
		if (mm && !want_deb) {
			t->tool = TOOL_MMDEBSTRAP;
			t->bootstrap = mm;
			mm = NULL;
			strbuf_addf(w, "mmdebstrap (%s), --mode=root", t->bootstrap);
		} else if (deb) {
			t->tool = TOOL_DEBOOTSTRAP;
			t->bootstrap = deb;
			deb = NULL;
			strbuf_addf(w, "debootstrap (%s), as root%s", t->bootstrap,
				    want_deb ? "" : " (install mmdebstrap for faster builds)");
		} else {
			strbuf_adds(w, want_deb
					       ? "debootstrap is missing: install debootstrap"
					       : "neither mmdebstrap nor debootstrap is installed: "
						 "install mmdebstrap");
			rc = ERR_UNSUPPORTED;
		}
	} else if (want_root || want_deb) {
		strbuf_addf(w, "FSWB_APPLIANCE_MODE=%s needs root: run fswb as root, or unset it",
			    force);
		rc = ERR_UNSUPPORTED;
	} else if (!mm) {
		strbuf_addf(w,
			    "mmdebstrap is missing, and %s: install mmdebstrap (it builds as an "
			    "ordinary user), or run fswb as root",
			    deb ? "debootstrap needs root" : "debootstrap is missing too");
		rc = ERR_UNSUPPORTED;
	} else if (geteuid() == 0) {
		/* asked for: unshare mode as root (a private mount namespace, no id mapping) */
		t->tool = TOOL_MMDEBSTRAP;
		t->unshare = true;
		t->bootstrap = mm;
		mm = NULL;
		strbuf_addf(w, "mmdebstrap (%s), --mode=unshare", t->bootstrap);
	} else {
		struct passwd *pw = getpwuid(geteuid());
		const char *name = pw ? pw->pw_name : NULL;
		char *newuidmap = path_which("newuidmap", NULL, SBIN_DIRS);
		char *newgidmap = path_which("newgidmap", NULL, SBIN_DIRS);

		if (read_sysctl("/proc/sys/kernel/unprivileged_userns_clone", &v) && v == 0) {
			strbuf_adds(w,
				    "user namespaces are disabled: sysctl "
				    "kernel.unprivileged_userns_clone=1 (as root), or run fswb as "
				    "root");
			rc = ERR_UNSUPPORTED;
		} else if (read_sysctl("/proc/sys/user/max_user_namespaces", &v) && v == 0) {
			strbuf_adds(
				w, "user namespaces are disabled: sysctl "
				   "user.max_user_namespaces=15000 (as root), or run fswb as root");
			rc = ERR_UNSUPPORTED;
		} else if (read_sysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
				       &v) &&
			   v == 1) {
			strbuf_adds(w,
				    "AppArmor restricts unprivileged user namespaces: sysctl "
				    "kernel.apparmor_restrict_unprivileged_userns=0 (as root), or "
				    "run fswb as root");
			rc = ERR_UNSUPPORTED;
		} else if (!newuidmap || !newgidmap) {
			strbuf_adds(
				w, "newuidmap and newgidmap are missing (mmdebstrap --mode=unshare "
				   "needs them): install uidmap");
			rc = ERR_UNSUPPORTED;
		} else if (!has_subids("/etc/subuid", name, geteuid()) ||
			   !has_subids("/etc/subgid", name, geteuid())) {
			strbuf_addf(w,
				    "'%s' has no subordinate ids in /etc/subuid and /etc/subgid "
				    "(mmdebstrap --mode=unshare needs them): as root, usermod "
				    "--add-subuids 100000-165535 --add-subgids 100000-165535 %s",
				    name ? name : "this user", name ? name : "USER");
			rc = ERR_UNSUPPORTED;
		} else {
			t->tool = TOOL_MMDEBSTRAP;
			t->unshare = true;
			t->bootstrap = mm;
			mm = NULL;
			strbuf_addf(w, "mmdebstrap (%s), --mode=unshare", t->bootstrap);
		}
		free(newuidmap);
		free(newgidmap);
	}
	if (rc == OK && (!t->du || !t->tar)) {
		strbuf_reset(w);
		strbuf_adds(w, "du or tar is missing: install coreutils and tar");
		rc = ERR_UNSUPPORTED;
	}
	free(mm);
	free(deb);
	if (rc != OK)
		error(rc, "cannot build the test appliance here: %s", w->buf);
	strbuf_release(&local);
	return rc;
}

enum status
appliance_probe(struct strbuf *why)
{
	struct tools t;
	enum status rc = ap_tools_probe(&t, why);

	ap_tools_release(&t);
	return rc;
}
