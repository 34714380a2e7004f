/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The test appliance: inputs, cache key, mmdebstrap/debootstrap, mkfs.ext4 -d. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/event.h"
#include "core/paths.h"
#include "core/sha.h"
#include "core/spawn.h"
#include "core/util.h"
#include "rootfs/appliance.h"

#define STAGE	     "appliance"
#define MAX_META     (1u << 20)
#define MAX_CONFIG   (1u << 20)
#define MAX_SOURCES  (4u << 20)
#define MAX_AGENT    (4u << 20)
#define MAX_GIT_OUT  (64u << 20)
#define TAIL_LINES   15
#define KILL_GRACE   30000 /* ms between SIGTERM and SIGKILL */
#define HEADROOM_MIB 512
#define LOCK_POLL_MS 250

const char *const appliance_packages[] = {
	/* building fstests */
	"autoconf", "automake", "gcc", "make", "libtool", "libtool-bin", "pkg-config",
	"libacl1-dev", "libaio-dev", "libattr1-dev", "libbtrfsutil-dev", "libcap-dev",
	"libgdbm-dev", "libgdbm-compat-dev", "liburing-dev", "uuid-dev", "xfslibs-dev",
	/* filesystem tools */
	"xfsprogs", "xfsdump", "e2fsprogs", "btrfs-progs", "f2fs-tools", "exfatprogs", "udftools",
	"dump", "quota", "attr", "acl", "duperemove", "thin-provisioning-tools",
	/* what check and the tests run */
	"bc", "bsdextrautils", "dbench", "dmsetup", "fio", "gawk", "indent", "keyutils", "kmod",
	"libcap2-bin", "lvm2", "lz4", "openssl", "parted", "perl", "procps", "psmisc", "python3",
	"sqlite3", "udev", "util-linux", "mount", "uuid-runtime", "xxd", "xz-utils", "fsverity",
	NULL
};

/* Files dpkg leaves out: the appliance is read by scripts, not people. */
static const char *const dpkg_excludes[] = {
	"path-exclude=/usr/share/man/*",
	"path-exclude=/usr/share/doc/*",
	"path-include=/usr/share/doc/*/copyright",
	"path-exclude=/usr/share/info/*",
	"path-exclude=/usr/share/locale/*",
	"path-include=/usr/share/locale/locale.alias",
	NULL,
};

static void
sha_of(const char *text, char out[65])
{
	struct sha s;

	sha_init(&s);
	sha_adds(&s, text);
	sha_hex(&s, out);
}

/* ---- small helpers ---- */

/* The full path of an executable named prog in PATH, then /usr/sbin and /sbin. */
static char *
find_program(const char *prog)
{
	const char *path = getenv("PATH");
	struct strvec dirs = STRVEC_INIT;
	char *found = NULL;

	strvec_split(&dirs, path && *path ? path : "/usr/local/bin:/usr/bin:/bin", ":");
	strvec_push(&dirs, "/usr/sbin");
	strvec_push(&dirs, "/sbin");
	for (size_t i = 0; !found && i < dirs.n; i++) {
		char *p = path_join(dirs.v[i], prog);

		if (access(p, X_OK) == 0 && !path_is_dir(p))
			found = p;
		else
			free(p);
	}
	strvec_clear(&dirs);
	return found;
}

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

/* ---- tools: what builds ---- */

enum tool {
	TOOL_NONE,
	TOOL_MMDEBSTRAP,
	TOOL_DEBOOTSTRAP,
};

struct tools {
	enum tool tool;
	bool unshare; /* mmdebstrap --mode=unshare */
	char *bootstrap;
	char *mkfs;
	char *du;
	char *git;
	char *tar;
};

static void
tools_release(struct tools *t)
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

static enum status
probe(struct tools *t, struct strbuf *why)
{
	struct strbuf local = STRBUF_INIT;
	struct strbuf *w = why ? why : &local;
	char *mm = find_program("mmdebstrap");
	char *deb = find_program("debootstrap");
	const char *force = getenv("FSWB_APPLIANCE_MODE");
	bool want_root = force && !strcmp(force, "root");
	bool want_unshare = force && !strcmp(force, "unshare");
	bool want_deb = force && !strcmp(force, "debootstrap");
	enum status rc = OK;
	long v;

	memset(t, 0, sizeof(*t));
	strbuf_reset(w);
	t->mkfs = find_program("mkfs.ext4");
	t->du = find_program("du");
	t->git = find_program("git");
	t->tar = find_program("tar");
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
		char *newuidmap = find_program("newuidmap");
		char *newgidmap = find_program("newgidmap");

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
	enum status rc = probe(&t, why);

	tools_release(&t);
	return rc;
}

/* ---- config, release, mirror ---- */

enum status
appliance_config_read(const char *path, char **release, char **mirror)
{
	char *own = NULL, *text = NULL;
	unsigned lineno = 0;
	enum status rc = OK;

	*release = *mirror = NULL;
	if (!path) {
		char *dir = fswb_dir(DIR_CONFIG);

		own = path_join(dir, "config");
		free(dir);
		path = own;
	}
	if (!path_exists(path))
		goto out;
	rc = read_file(path, MAX_CONFIG, &text, NULL);
	if (rc != OK)
		goto out;
	for (char *line = text, *next; line; line = next) {
		char *eq, *key, *value;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		line = str_trim(line);
		if (!*line || *line == '#')
			continue;
		eq = strchr(line, '=');
		if (!eq) {
			rc = error(
				ERR_PARSE,
				"'%s' line %u: '%s' is not 'key = value'; fix or remove the line",
				path, lineno, line);
			goto out;
		}
		*eq = '\0';
		key = str_trim(line);
		value = str_trim(eq + 1);
		if (!strcmp(key, "release") || !strcmp(key, "mirror")) {
			char **dst = !strcmp(key, "release") ? release : mirror;

			if (!*value) {
				rc = error(ERR_PARSE, "'%s' line %u: '%s' has no value", path,
					   lineno, key);
				goto out;
			}
			free(*dst);
			*dst = xstrdup(value);
		}
	}
out:
	if (rc != OK) {
		free(*release);
		free(*mirror);
		*release = *mirror = NULL;
	}
	free(text);
	free(own);
	return rc;
}

enum status
appliance_host_release(const char *os_release, char **out)
{
	const char *path = os_release ? os_release : "/etc/os-release";
	char *text = NULL;
	enum status rc;

	*out = NULL;
	rc = read_file(path, MAX_CONFIG, &text, NULL);
	if (rc != OK)
		return error(ERR_NOTFOUND,
			     "cannot read '%s' to learn the host's release: set 'release = NAME' "
			     "in the config file or pass --release",
			     path);
	for (char *line = text, *next; line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (str_startswith(line, "VERSION_CODENAME=")) {
			char *v = str_trim(line + 17);
			size_t len = strlen(v);

			if (len >= 2 && (v[0] == '"' || v[0] == '\'') && v[len - 1] == v[0]) {
				v[len - 1] = '\0';
				v++;
			}
			if (*v)
				*out = xstrdup(v);
			break;
		}
	}
	free(text);
	if (!*out)
		return error(ERR_NOTFOUND,
			     "'%s' has no VERSION_CODENAME (a Debian testing or sid host?): set "
			     "'release = NAME' in the config file or pass --release",
			     path);
	return OK;
}

static bool
mirror_scheme_ok(const char *uri)
{
	return str_startswith(uri, "http://") || str_startswith(uri, "https://") ||
	       str_startswith(uri, "ftp://") || str_startswith(uri, "file:/");
}

/* One-line format: deb [opts] URI SUITE COMPONENT... */
static char *
mirror_from_list(const char *text, const char *release)
{
	struct strvec lines = STRVEC_INIT;
	char *found = NULL;

	strvec_split(&lines, text, "\n");
	for (size_t i = 0; !found && i < lines.n; i++) {
		char *line = lines.v[i], *hash = strchr(line, '#');
		struct strvec w = STRVEC_INIT;
		size_t j = 1;

		if (hash)
			*hash = '\0';
		strvec_split(&w, line, " \t");
		if (w.n >= 3 && !strcmp(w.v[0], "deb")) {
			if (w.v[1][0] == '[') {
				/* options up to the word that ends with ']' */
				while (j < w.n && !str_endswith(w.v[j], "]"))
					j++;
				j++;
			}
			if (j + 1 < w.n && !strcmp(w.v[j + 1], release) && mirror_scheme_ok(w.v[j]))
				found = xstrdup(w.v[j]);
		}
		strvec_clear(&w);
	}
	strvec_clear(&lines);
	return found;
}

static bool
deb822_enabled(const char *v)
{
	return !(!strcasecmp(v, "no") || !strcasecmp(v, "false") || !strcmp(v, "0"));
}

/* deb822 format: stanzas of Types:, URIs:, Suites:, Enabled: fields. */
static char *
mirror_from_sources(const char *text, const char *release)
{
	char *copy = xstrdup(text), *found = NULL;
	struct strvec types = STRVEC_INIT, uris = STRVEC_INIT, suites = STRVEC_INIT;
	bool enabled = true, in_stanza = false, last_field_uris = false;
	char *line, *next;

	for (line = copy;; line = next) {
		bool end = !line;

		next = line ? strchr(line, '\n') : NULL;
		if (next)
			*next++ = '\0';
		if (line && line[0] == '#')
			continue;
		if (end || !*str_trim(line)) {
			if (in_stanza && enabled && strvec_contains(&types, "deb") &&
			    strvec_contains(&suites, release))
				for (size_t i = 0; !found && i < uris.n; i++)
					if (mirror_scheme_ok(uris.v[i]))
						found = xstrdup(uris.v[i]);
			strvec_clear(&types);
			strvec_clear(&uris);
			strvec_clear(&suites);
			enabled = true;
			in_stanza = false;
			if (end || found)
				break;
			continue;
		}
		in_stanza = true;
		if ((line[0] == ' ' || line[0] == '\t')) {
			/* a continuation line of the last field */
			if (last_field_uris)
				strvec_split(&uris, line, " \t");
			continue;
		}
		last_field_uris = false;
		{
			char *colon = strchr(line, ':');
			char *key, *value;

			if (!colon)
				continue;
			*colon = '\0';
			key = str_trim(line);
			value = str_trim(colon + 1);
			if (!strcasecmp(key, "Types")) {
				strvec_split(&types, value, " \t");
			} else if (!strcasecmp(key, "URIs")) {
				strvec_split(&uris, value, " \t");
				last_field_uris = true;
			} else if (!strcasecmp(key, "Suites")) {
				strvec_split(&suites, value, " \t");
			} else if (!strcasecmp(key, "Enabled")) {
				enabled = deb822_enabled(value);
			}
		}
	}
	strvec_clear(&types);
	strvec_clear(&uris);
	strvec_clear(&suites);
	free(copy);
	return found;
}

enum status
appliance_host_mirror(const char *apt_dir, const char *release, char **out)
{
	const char *dir = apt_dir ? apt_dir : "/etc/apt";
	struct strvec files = STRVEC_INIT, parts = STRVEC_INIT;
	char *list = path_join(dir, "sources.list");
	char *partdir = path_join(dir, "sources.list.d");
	DIR *d;
	struct dirent *de;
	enum status rc = OK;

	*out = NULL;
	strvec_push(&files, list);
	d = opendir(partdir);
	if (d) {
		while ((de = readdir(d)))
			if (de->d_name[0] != '.' && (str_endswith(de->d_name, ".list") ||
						     str_endswith(de->d_name, ".sources")))
				strvec_push(&parts, de->d_name);
		closedir(d);
	}
	strvec_sort(&parts);
	for (size_t i = 0; i < parts.n; i++) {
		char *p = path_join(partdir, parts.v[i]);

		strvec_push(&files, p);
		free(p);
	}
	for (size_t i = 0; !*out && i < files.n; i++) {
		char *text = NULL;

		if (!path_exists(files.v[i]))
			continue;
		if (read_file(files.v[i], MAX_SOURCES, &text, NULL) != OK) {
			error_clear();
			continue;
		}
		*out = str_endswith(files.v[i], ".sources") ? mirror_from_sources(text, release)
							    : mirror_from_list(text, release);
		free(text);
	}
	if (!*out) {
		char *names = strvec_join(&files, "', '");

		rc = error(ERR_NOTFOUND,
			   "no apt source for '%s' in '%s': set 'mirror = URL' in the config file "
			   "or pass --mirror URL",
			   release, names);
		free(names);
	}
	strvec_clear(&files);
	strvec_clear(&parts);
	free(list);
	free(partdir);
	return rc;
}

/* ---- the agent ---- */

char *
rootfs_agent_dir(void)
{
	char *datadir = fswb_datadir();
	const char *subs[] = { "agent", "src/rootfs/agent" };
	char *found = NULL;

	for (size_t i = 0; !found && i < ARRAY_SIZE(subs); i++) {
		char *dir = path_join(datadir, subs[i]);
		char *a = path_join(dir, "fswb-agent");
		char *b = path_join(dir, "fswb-init");

		if (path_exists(a) && path_exists(b))
			found = dir;
		else
			free(dir);
		free(a);
		free(b);
	}
	free(datadir);
	return found;
}

/* ---- fstests sources ---- */

bool
appliance_src_is_url(const char *src)
{
	if (strstr(src, "://"))
		return true;
	if (path_exists(src))
		return false;
	/* scp-like git@host:path */
	if (strchr(src, '@') && strchr(src, ':') && strchr(src, '@') < strchr(src, ':'))
		return true;
	return str_endswith(src, ".git");
}

static bool
build_product(const char *name, bool is_dir)
{
	static const char *const dirs[] = { ".git", ".libs", ".deps", "autom4te.cache" };
	static const char *const files[] = { "config.log", "config.status", "libtool" };
	static const char *const exts[] = { ".o", ".lo", ".la", ".a", ".so" };

	if (is_dir) {
		for (size_t i = 0; i < ARRAY_SIZE(dirs); i++)
			if (!strcmp(name, dirs[i]))
				return true;
		return false;
	}
	if (!strcmp(name, ".git"))
		return true; /* a worktree's .git file */
	for (size_t i = 0; i < ARRAY_SIZE(files); i++)
		if (!strcmp(name, files[i]))
			return true;
	for (size_t i = 0; i < ARRAY_SIZE(exts); i++)
		if (str_endswith(name, exts[i]))
			return true;
	return false;
}

static enum status
walk(const char *root, const char *rel, struct strvec *files)
{
	char *path = rel ? path_join(root, rel) : xstrdup(root);
	DIR *d = opendir(path);
	struct dirent *de;
	enum status rc = OK;

	if (!d) {
		rc = error(ERR_IO, "cannot read '%s': %s", path, strerror(errno));
		free(path);
		return rc;
	}
	while (rc == OK && (de = readdir(d))) {
		char *sub;
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		sub = rel ? path_join(rel, de->d_name) : xstrdup(de->d_name);
		{
			char *full = path_join(root, sub);

			if (lstat(full, &st) < 0) {
				free(full);
				free(sub);
				continue;
			}
			free(full);
		}
		if (build_product(de->d_name, S_ISDIR(st.st_mode))) {
			free(sub);
			continue;
		}
		if (S_ISDIR(st.st_mode)) {
			strvec_push(files, sub);
			rc = walk(root, sub, files);
		} else if (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) {
			strvec_push(files, sub);
		}
		free(sub);
	}
	closedir(d);
	free(path);
	return rc;
}

/* configure's checks in fstests (162 in 2026) */
#define CONFIGURE_CHECKS 160

unsigned
appliance_build_units(const char *dir)
{
	struct strvec files = STRVEC_INIT;
	unsigned n = 0;

	if (walk(dir, NULL, &files) != OK) {
		error_clear();
		strvec_clear(&files);
		return 0;
	}
	for (size_t i = 0; i < files.n; i++)
		if ((str_startswith(files.v[i], "src/") || str_startswith(files.v[i], "ltp/") ||
		     str_startswith(files.v[i], "lib/")) &&
		    str_endswith(files.v[i], ".c"))
			n++;
	strvec_clear(&files);
	return n + CONFIGURE_CHECKS;
}

bool
appliance_build_line(const char *line)
{
	if (str_startswith(line, "checking "))
		return true;
	line += strspn(line, " \t");
	return line[0] == '[' && line[1] >= 'A' && line[1] <= 'Z' && strchr(line, ']');
}

/* The files git lists in a work tree, with their parent directories. */
static enum status
git_files(struct loop *loop, const char *git, const char *dir, struct strvec *files)
{
	const char *argv[] = { git,  "-C",	 dir,	     "ls-files",
			       "-z", "--cached", "--others", "--exclude-standard",
			       NULL };
	struct strbuf out = STRBUF_INIT;
	struct child_exit ex;
	enum status rc;

	rc = spawn_run(loop, argv,
		       (const char *const[]){ "LC_ALL=C", "GIT_TERMINAL_PROMPT=0", NULL }, false,
		       MAX_GIT_OUT, &out, &ex);
	if (rc == OK && !(ex.exited && ex.code == 0))
		rc = error(ERR_CHILD, "'git ls-files' in '%s' failed", dir);
	for (size_t off = 0; rc == OK && off < out.len;) {
		const char *name = out.buf + off;
		size_t len = strlen(name);
		char *full = path_join(dir, name);
		struct stat st;

		off += len + 1;
		if (lstat(full, &st) == 0 && (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode))) {
			char *copy = xstrdup(name);

			for (char *p = strchr(copy, '/'); p; p = strchr(p + 1, '/')) {
				*p = '\0';
				if (!strvec_contains(files, copy))
					strvec_push(files, copy);
				*p = '/';
			}
			strvec_push(files, name);
			free(copy);
		}
		free(full);
	}
	strbuf_release(&out);
	return rc;
}

enum status
appliance_fstests_files(struct loop *loop, const char *dir, struct strvec *files, char digest[65])
{
	char *dotgit = path_join(dir, ".git");
	char *git = find_program("git");
	struct sha sha;
	enum status rc;

	if (!path_is_dir(dir)) {
		free(dotgit);
		free(git);
		return error(ERR_NOTFOUND, "fstests source '%s' is not a directory", dir);
	}
	rc = ERR_NOTFOUND;
	if (path_exists(dotgit) && git) {
		rc = git_files(loop, git, dir, files);
		if (rc != OK) {
			/* not a work tree git can read: every file but the build products */
			error_clear();
			strvec_clear(files);
		}
	}
	if (rc != OK)
		rc = walk(dir, NULL, files);
	free(dotgit);
	free(git);
	if (rc != OK)
		return rc;
	strvec_sort(files);
	sha_init(&sha);
	sha_adds(&sha, "fswb-fstests-dir");
	for (size_t i = 0; i < files->n; i++) {
		char *full = path_join(dir, files->v[i]);
		struct stat st;

		if (lstat(full, &st) == 0) {
			sha_adds(&sha, files->v[i]);
			sha_addf(&sha, "%o %lld %lld.%09ld", (unsigned)st.st_mode,
				 (long long)(S_ISDIR(st.st_mode) ? 0 : st.st_size),
				 (long long)(S_ISDIR(st.st_mode) ? 0 : st.st_mtim.tv_sec),
				 S_ISDIR(st.st_mode) ? 0L : st.st_mtim.tv_nsec);
		}
		free(full);
	}
	sha_hex(&sha, digest);
	return OK;
}

bool
appliance_has_default_target(const char *dir)
{
	static const char *const names[] = { "GNUmakefile", "makefile", "Makefile" };
	static const char *const directives[] = { "ifeq",     "ifneq",	  "ifdef",    "ifndef",
						  "else",     "endif",	  "include",  "-include",
						  "sinclude", "export",	  "unexport", "define",
						  "endef",    "override", "vpath" };
	char *text = NULL;
	bool found = false;

	for (size_t i = 0; !text && i < ARRAY_SIZE(names); i++) {
		char *p = path_join(dir, names[i]);

		if (path_exists(p) && read_file(p, MAX_SOURCES, &text, NULL) != OK) {
			error_clear();
			text = NULL;
		}
		free(p);
	}
	if (!text)
		return false;
	for (char *line = text, *next; line && !found; line = next) {
		char *colon, *eq, *target;
		bool directive = false;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (line[0] == '\t' || line[0] == '#')
			continue;
		line = str_trim(line);
		if (str_startswith(line, ".DEFAULT_GOAL")) {
			found = true;
			break;
		}
		for (size_t i = 0; i < ARRAY_SIZE(directives); i++) {
			size_t n = strlen(directives[i]);

			if (!strncmp(line, directives[i], n) &&
			    (line[n] == ' ' || line[n] == '\t' || line[n] == '\0' ||
			     line[n] == '('))
				directive = true;
		}
		colon = strchr(line, ':');
		eq = strchr(line, '=');
		if (directive || !colon || (eq && eq < colon) || colon[1] == '=')
			continue;
		*colon = '\0';
		target = str_trim(line);
		if (*target && *target != '.' && !strchr(target, '%') && !strchr(target, '$'))
			found = true;
	}
	free(text);
	return found;
}

/* ---- the inputs ---- */

struct inputs {
	char *release, *mirror;
	char *src;	 /* directory's real path, or the URL with #REF */
	char *url, *ref; /* a URL's parts */
	bool is_url;
	char *rev;   /* a URL's commit, "dir:DIGEST16" for a directory */
	char *clone; /* the bare clone of a URL */
	struct strvec files;
	char src_digest[65];
	bool build_fstests;
	char *agent_dir;
	char agent_digest[65];
	struct strvec packages;
	unsigned jobs;
	struct tools tools;
	char key[65];
};

static void
inputs_release(struct inputs *in)
{
	free(in->release);
	free(in->mirror);
	free(in->src);
	free(in->url);
	free(in->ref);
	free(in->rev);
	free(in->clone);
	free(in->agent_dir);
	strvec_clear(&in->files);
	strvec_clear(&in->packages);
	tools_release(&in->tools);
	memset(in, 0, sizeof(*in));
}

struct runner;
typedef void line_fn(struct runner *r, const char *line);

struct steps;

/* Running children with their output to the log, a tail and a line parser. */
struct runner {
	struct loop *loop;
	struct event_bus *bus;
	const bool *cancel;
	int logfd; /* -1: no log */
	struct strbuf partial;
	struct strvec tail;
	line_fn *on_line;
	void *data;
	bool interrupted;
	/* progress */
	char detail[128];
	double fraction;
	uint64_t last_emit;
	/* mmdebstrap's phases */
	int phase;
	unsigned total, done;
	/* the steps after the packages: the next one, and fstests' build */
	const struct steps *steps;
	unsigned hook;
	unsigned build_units, build_done;
};

static void
progress(struct runner *r, const char *detail, double fraction)
{
	uint64_t now = loop_now_ms();
	bool changed = strcmp(detail, r->detail) != 0;

	if (!changed && fraction < r->fraction + 0.01 && now - r->last_emit < 1000)
		return;
	if (detail != r->detail)
		snprintf(r->detail, sizeof(r->detail), "%s", detail);
	if (fraction > r->fraction)
		r->fraction = fraction;
	r->last_emit = now;
	if (r->bus)
		emit_stage(r->bus, EV_STAGE_PROGRESS, STAGE, r->detail, r->fraction);
}

static bool
cancelled(struct runner *r)
{
	if ((r->cancel && *r->cancel) || loop_done(r->loop))
		r->interrupted = true;
	return r->interrupted;
}

static void
log_write(struct runner *r, const char *data, size_t len)
{
	while (r->logfd >= 0 && len) {
		ssize_t n = write(r->logfd, data, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		data += n;
		len -= (size_t)n;
	}
}

static void
feed_line(struct runner *r, const char *line)
{
	if (*line) {
		if (r->tail.n >= TAIL_LINES) {
			free(r->tail.v[0]);
			memmove(r->tail.v, r->tail.v + 1, (r->tail.n - 1) * sizeof(*r->tail.v));
			r->tail.v[--r->tail.n] = NULL;
		}
		strvec_push(&r->tail, line);
	}
	if (r->on_line)
		r->on_line(r, line);
}

static void
feed(struct runner *r, const char *data, size_t len)
{
	log_write(r, data, len);
	for (size_t i = 0; i < len; i++) {
		if (data[i] == '\n' || data[i] == '\r') {
			feed_line(r, r->partial.buf);
			strbuf_reset(&r->partial);
		} else if (r->partial.len < 4096) {
			strbuf_addch(&r->partial, data[i]);
		}
	}
}

struct pipe_reader {
	struct runner *r;
	bool eof;
};

static void
on_output(struct loop *loop, int fd, short revents, void *data)
{
	struct pipe_reader *pr = data;
	char buf[8192];

	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n > 0) {
			feed(pr->r, buf, (size_t)n);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		pr->eof = true;
		loop_del_fd(loop, fd);
		return;
	}
}

static char *
tail_text(struct runner *r)
{
	struct strbuf sb = STRBUF_INIT;

	for (size_t i = 0; i < r->tail.n; i++)
		strbuf_addf(&sb, "\n  %s", r->tail.v[i]);
	return strbuf_detach(&sb);
}

/*
 * Run argv to its end, its stdout and stderr into the runner. OK only when
 * it exited 0; ERR_INTERRUPTED when cancelled (the child is stopped first).
 */
static enum status
run(struct runner *r, const char *const *argv, const char *const *env)
{
	struct spawn_opts o = SPAWN_OPTS_INIT;
	struct child *child = NULL;
	struct pipe_reader pr = { .r = r };
	uint64_t term_at = 0, exited_at = 0;
	enum status rc;

	if (cancelled(r))
		return error(ERR_INTERRUPTED, "interrupted");
	if (r->logfd >= 0) {
		struct strbuf cmd = STRBUF_INIT;

		strbuf_adds(&cmd, "$ ");
		sq_quote_argv(&cmd, argv);
		strbuf_addch(&cmd, '\n');
		log_write(r, cmd.buf, cmd.len);
		strbuf_release(&cmd);
	}
	strvec_clear(&r->tail);
	strbuf_reset(&r->partial);
	o.argv = argv;
	o.env = env;
	o.out = SPAWN_PIPE;
	o.err = SPAWN_STDOUT;
	o.new_pgrp = true;
	rc = spawn_start(r->loop, &o, &child);
	if (rc != OK)
		return rc;
	loop_add_fd(r->loop, child->out, POLLIN, on_output, &pr);
	while (child->running || (!pr.eof && loop_now_ms() - exited_at < 2000)) {
		if (!child->running && !exited_at)
			exited_at = loop_now_ms();
		if (child->running && cancelled(r)) {
			if (!term_at) {
				child_kill(child, SIGTERM);
				term_at = loop_now_ms();
			} else if (loop_now_ms() - term_at > KILL_GRACE) {
				child_kill(child, SIGKILL);
			}
		}
		if (loop_run_once(r->loop, 200) != OK)
			break;
	}
	if (!pr.eof)
		loop_del_fd(r->loop, child->out);
	if (r->partial.len) {
		feed_line(r, r->partial.buf);
		strbuf_reset(&r->partial);
	}
	if (child->running) {
		child_free(child);
		return error(ERR_IO, "waiting for '%s' failed", argv[0]);
	}
	if (r->interrupted) {
		rc = error(ERR_INTERRUPTED, "interrupted");
	} else if (!(child->exit.exited && child->exit.code == 0)) {
		char how[128];
		char *tail = tail_text(r);

		child_exit_str(&child->exit, how, sizeof(how));
		rc = error(ERR_CHILD, "'%s' %s%s%s", argv[0], how,
			   r->tail.n ? "; its last lines:" : "", tail);
		free(tail);
	}
	child_free(child);
	return rc;
}

/* Run argv and capture its output (small), for git and du. */
static enum status
run_capture(struct runner *r, const char *const *argv, struct strbuf *out)
{
	line_fn *saved = r->on_line;
	size_t tail_start;
	enum status rc;

	r->on_line = NULL;
	rc = run(r, argv, (const char *const[]){ "LC_ALL=C", "GIT_TERMINAL_PROMPT=0", NULL });
	r->on_line = saved;
	strbuf_reset(out);
	tail_start = 0;
	for (size_t i = tail_start; i < r->tail.n; i++)
		strbuf_addf(out, "%s\n", r->tail.v[i]);
	return rc;
}

static void
runner_release(struct runner *r)
{
	strbuf_release(&r->partial);
	strvec_clear(&r->tail);
	if (r->logfd >= 0)
		close(r->logfd);
	r->logfd = -1;
}

/* ---- git ---- */

static bool
is_hex(const char *s, size_t min)
{
	size_t n = 0;

	for (; s[n]; n++)
		if (!strchr("0123456789abcdef", s[n]))
			return false;
	return n >= min;
}

/* rev-parse in the clone; NULL when it does not have it. */
static char *
git_rev(struct runner *r, const struct inputs *in, const char *what)
{
	char *spec = xasprintf("%s^{commit}", what);
	struct strbuf out = STRBUF_INIT;
	char *rev = NULL;

	if (run_capture(r,
			(const char *const[]){ in->tools.git, "--git-dir", in->clone, "rev-parse",
					       "--verify", "--quiet", spec, NULL },
			&out) == OK) {
		char *t = str_trim(out.buf);

		if (is_hex(t, 40))
			rev = xstrdup(t);
	}
	error_clear();
	free(spec);
	strbuf_release(&out);
	return rev;
}

static enum status
resolve_url(struct runner *r, struct inputs *in)
{
	char *cache = NULL, *tmp = NULL;
	char hash[65];
	struct strbuf out = STRBUF_INIT;
	char *remote = NULL;
	const char *ref = in->ref ? in->ref : "HEAD";
	enum status rc;

	if (!in->tools.git)
		return error(ERR_NOTFOUND,
			     "fstests source '%s' is a git URL, but git is missing: "
			     "install git, or give a directory",
			     in->src);
	sha_of(in->url, hash);
	hash[16] = '\0';
	rc = fswb_dir_make(DIR_CACHE, "fstests-git", &cache);
	if (rc != OK)
		return rc;
	in->clone = xasprintf("%s/%s.git", cache, hash);
	if (!path_is_dir(in->clone)) {
		progress(r, "fetching fstests", 0);
		tmp = xasprintf("%s.tmp.%ld", in->clone, (long)getpid());
		remove_tree(tmp);
		rc = run_capture(r,
				 (const char *const[]){ in->tools.git, "clone", "--bare", "--quiet",
							in->url, tmp, NULL },
				 &out);
		if (rc == OK && rename(tmp, in->clone) < 0 && !path_is_dir(in->clone))
			rc = error(ERR_IO, "cannot rename '%s': %s", tmp, strerror(errno));
		remove_tree(tmp);
		if (rc != OK) {
			rc = error_prefix(rc,
					  "cannot clone fstests from '%s' (offline? give a local "
					  "copy with --fstests-src DIR)",
					  in->url);
			goto out;
		}
	}
	if (is_hex(ref, 40))
		in->rev = git_rev(r, in, ref);
	if (!in->rev) {
		/* what the remote's REF is now */
		rc = run_capture(
			r, (const char *const[]){ in->tools.git, "ls-remote", in->url, ref, NULL },
			&out);
		if (rc == OK) {
			char *tab = strchr(out.buf, '\t');

			if (tab && tab - out.buf == 40) {
				*tab = '\0';
				remote = xstrdup(out.buf);
			}
		}
		if (rc != OK || !remote) {
			in->rev = git_rev(r, in, ref);
			if (!in->rev) {
				rc = error(
					ERR_NOTFOUND,
					"cannot resolve '%s' of fstests at '%s' (is the URL right "
					"and reachable?)",
					ref, in->url);
				goto out;
			}
			if (r->bus)
				emit_warning(
					r->bus,
					"cannot reach '%s'; using fstests %.12s fetched before",
					in->url, in->rev);
			rc = OK;
			goto out;
		}
		in->rev = git_rev(r, in, remote);
		if (!in->rev) {
			progress(r, "fetching fstests", 0);
			rc = run_capture(r,
					 (const char *const[]){ in->tools.git, "--git-dir",
								in->clone, "fetch", "--quiet",
								"--force", in->url,
								"+refs/heads/*:refs/heads/*",
								"+refs/tags/*:refs/tags/*", NULL },
					 &out);
			in->rev = git_rev(r, in, remote);
			if (!in->rev) {
				rc = run_capture(r,
						 (const char *const[]){ in->tools.git, "--git-dir",
									in->clone, "fetch",
									"--quiet", in->url, remote,
									NULL },
						 &out);
				in->rev = git_rev(r, in, remote);
			}
			if (!in->rev) {
				rc = error(ERR_CHILD, "cannot fetch fstests %s from '%s'", remote,
					   in->url);
				goto out;
			}
		}
	}
	rc = OK;
	if (!in->rev)
		rc = error(ERR_NOTFOUND, "fstests at '%s' has no '%s'", in->url, ref);
out:
	free(cache);
	free(tmp);
	free(remote);
	strbuf_release(&out);
	return rc;
}

/* ---- resolving ---- */

static enum status
resolve_inputs(struct runner *r, const struct appliance_opts *o, struct inputs *in)
{
	char *cfg_release = NULL, *cfg_mirror = NULL;
	const char *src =
		o->fstests_src && *o->fstests_src ? o->fstests_src : APPLIANCE_FSTESTS_URL;
	struct sha sha;
	enum status rc;

	memset(in, 0, sizeof(*in));
	strvec_init(&in->files);
	strvec_init(&in->packages);
	rc = probe(&in->tools, NULL);
	if (rc != OK)
		return rc;
	rc = appliance_config_read(NULL, &cfg_release, &cfg_mirror);
	if (rc != OK)
		goto out;
	if (o->release && *o->release)
		in->release = xstrdup(o->release);
	else if (cfg_release)
		in->release = xstrdup(cfg_release);
	else if ((rc = appliance_host_release(NULL, &in->release)) != OK)
		goto out;
	for (const char *p = in->release; *p; p++)
		if (!(p[0] >= 'a' && p[0] <= 'z') && !(p[0] >= '0' && p[0] <= '9') && *p != '-') {
			rc = error(ERR_INVALID,
				   "release '%s' is not a release name like 'bookworm'",
				   in->release);
			goto out;
		}
	if (o->mirror && *o->mirror)
		in->mirror = xstrdup(o->mirror);
	else if (cfg_mirror)
		in->mirror = xstrdup(cfg_mirror);
	else if ((rc = appliance_host_mirror(NULL, in->release, &in->mirror)) != OK)
		goto out;
	if (!mirror_scheme_ok(in->mirror)) {
		rc = error(ERR_INVALID,
			   "mirror '%s' is not an http://, https://, ftp:// or file:/ URL",
			   in->mirror);
		goto out;
	}

	for (const char *const *p = o->packages ? o->packages : appliance_packages; *p; p++) {
		if (!**p || strpbrk(*p, ", \t\n'\"")) {
			rc = error(ERR_INVALID, "package name '%s' is not valid", *p);
			goto out;
		}
		strvec_push(&in->packages, *p);
	}
	in->jobs = o->jobs ? o->jobs : (unsigned)sysconf(_SC_NPROCESSORS_ONLN);
	if (!in->jobs)
		in->jobs = 1;

	in->is_url = appliance_src_is_url(src);
	if (in->is_url) {
		const char *hash = strrchr(src, '#');

		in->src = xstrdup(src);
		in->url = hash ? xstrndup(src, (size_t)(hash - src)) : xstrdup(src);
		in->ref = hash && hash[1] ? xstrdup(hash + 1) : NULL;
		rc = resolve_url(r, in);
		if (rc != OK)
			goto out;
		in->build_fstests = true; /* checked again once it is unpacked */
	} else {
		char real[PATH_MAX];

		if (!realpath(src, real)) {
			rc = error(ERR_NOTFOUND,
				   "fstests source '%s': %s; give a directory or a git URL", src,
				   strerror(errno));
			goto out;
		}
		in->src = xstrdup(real);
		rc = appliance_fstests_files(r->loop, in->src, &in->files, in->src_digest);
		if (rc != OK)
			goto out;
		if (!strvec_contains(&in->files, "check")) {
			rc = error(ERR_INVALID,
				   "'%s' does not look like fstests: it has no 'check' script",
				   in->src);
			goto out;
		}
		in->rev = xasprintf("dir:%.16s", in->src_digest);
		in->build_fstests = appliance_has_default_target(in->src);
	}

	in->agent_dir = rootfs_agent_dir();
	if (!in->agent_dir) {
		char *datadir = fswb_datadir();

		rc = error(
			ERR_NOTFOUND,
			"the guest agent (fswb-agent, fswb-init) is neither in '%s/agent' nor in "
			"'%s/src/rootfs/agent': reinstall fswb or set FSWB_DATADIR",
			datadir, datadir);
		free(datadir);
		goto out;
	}
	sha_init(&sha);
	for (const char *const *f = (const char *const[]){ "fswb-agent", "fswb-init", NULL }; *f;
	     f++) {
		char *p = path_join(in->agent_dir, *f), *text = NULL;
		size_t len = 0;

		rc = read_file(p, MAX_AGENT, &text, &len);
		free(p);
		if (rc != OK) {
			char dummy[65];

			sha_hex(&sha, dummy);
			goto out;
		}
		sha_adds(&sha, *f);
		sha_add(&sha, text, len);
		free(text);
	}
	sha_hex(&sha, in->agent_digest);

	sha_init(&sha);
	sha_addf(&sha, "fswb-appliance %d", APPLIANCE_FORMAT);
	sha_addf(&sha, "tool %s",
		 in->tools.tool == TOOL_DEBOOTSTRAP ? "debootstrap" : "mmdebstrap");
	sha_addf(&sha, "release %s", in->release);
	sha_addf(&sha, "mirror %s", in->mirror);
	sha_addf(&sha, "packages %zu", in->packages.n);
	for (size_t i = 0; i < in->packages.n; i++)
		sha_adds(&sha, in->packages.v[i]);
	sha_addf(&sha, "fstests %s %s", in->is_url ? in->url : "dir", in->rev);
	if (!in->is_url)
		sha_adds(&sha, in->src_digest);
	sha_addf(&sha, "agent %s", in->agent_digest);
	sha_hex(&sha, in->key);
out:
	free(cfg_release);
	free(cfg_mirror);
	return rc;
}

/* ---- the cache ---- */

static enum status
cache_dir(char **out)
{
	return fswb_dir_make(DIR_CACHE, "appliances", out);
}

void
appliance_release(struct appliance *a)
{
	free(a->key);
	free(a->id);
	free(a->dir);
	free(a->image);
	free(a->release);
	free(a->mirror);
	free(a->fstests_src);
	free(a->fstests_rev);
	free(a->tool);
	memset(a, 0, sizeof(*a));
}

static char *
json_str_dup(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? xstrdup(s) : NULL;
}

/* Read DIR/appliance.json into *a. */
static enum status
meta_read(const char *dir, struct appliance *a)
{
	char *path = path_join(dir, "appliance.json");
	char *text = NULL;
	json_t *root = NULL, *f;
	json_error_t jerr;
	enum status rc;

	memset(a, 0, sizeof(*a));
	rc = read_file(path, MAX_META, &text, NULL);
	if (rc != OK)
		goto out;
	root = json_loads(text, 0, &jerr);
	if (!root || !json_is_object(root)) {
		rc = error(ERR_PARSE, "'%s' line %d: %s", path, jerr.line, jerr.text);
		goto out;
	}
	a->key = json_str_dup(root, "key");
	if (!a->key || !is_hex(a->key, 64)) {
		rc = error(ERR_PARSE, "'%s' has no key", path);
		goto out;
	}
	a->id = xstrndup(a->key, 12);
	a->dir = xstrdup(dir);
	a->image = path_join(dir, "root.img");
	a->release = json_str_dup(root, "release");
	a->mirror = json_str_dup(root, "mirror");
	a->tool = json_str_dup(root, "tool");
	f = json_object_get(root, "fstests");
	if (json_is_object(f)) {
		a->fstests_src = json_str_dup(f, "source");
		a->fstests_rev = json_str_dup(f, "revision");
	}
	a->image_size = (uint64_t)json_integer_value(json_object_get(root, "image_size"));
	a->image_used = (uint64_t)json_integer_value(json_object_get(root, "image_used"));
	a->build_seconds = json_number_value(json_object_get(root, "build_seconds"));
	a->built = (int64_t)json_integer_value(json_object_get(root, "built"));
	a->packages = (unsigned)json_array_size(json_object_get(root, "packages"));
out:
	if (rc != OK)
		appliance_release(a);
	json_decref(root);
	free(text);
	free(path);
	return rc;
}

static enum status
meta_write(const char *dir, const struct inputs *in, double seconds, uint64_t size, uint64_t used)
{
	json_t *o = json_object(), *pk = json_array(), *f = json_object();
	char *path = path_join(dir, "appliance.json");
	char *text;
	enum status rc;

	for (size_t i = 0; i < in->packages.n; i++)
		json_array_append_new(pk, json_string(in->packages.v[i]));
	json_object_set_new(o, "format", json_integer(APPLIANCE_FORMAT));
	json_object_set_new(o, "key", json_string(in->key));
	json_object_set_new(o, "release", json_string(in->release));
	json_object_set_new(o, "mirror", json_string(in->mirror));
	json_object_set_new(
		o, "tool",
		json_string(in->tools.tool == TOOL_DEBOOTSTRAP ? "debootstrap" : "mmdebstrap"));
	json_object_set_new(o, "mode",
			    json_string(in->tools.tool == TOOL_DEBOOTSTRAP ? "root"
					: in->tools.unshare		   ? "unshare"
									   : "root"));
	json_object_set_new(o, "packages", pk);
	json_object_set_new(f, "source", json_string(in->src));
	json_object_set_new(f, "revision", json_string(in->rev));
	json_object_set_new(f, "built", json_boolean(in->build_fstests));
	json_object_set_new(o, "fstests", f);
	json_object_set_new(o, "agent", json_string(in->agent_digest));
	json_object_set_new(o, "built", json_integer((json_int_t)time(NULL)));
	json_object_set_new(o, "build_seconds", json_real(seconds));
	json_object_set_new(o, "image", json_string("root.img"));
	json_object_set_new(o, "image_size", json_integer((json_int_t)size));
	json_object_set_new(o, "image_used", json_integer((json_int_t)used));
	text = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(o);
	if (!text)
		BUG("cannot encode appliance.json");
	{
		size_t len = strlen(text);
		char *withnl = xasprintf("%s\n", text);

		rc = write_file_atomic(path, withnl, len + 1, 0644);
		free(withnl);
	}
	free(text);
	free(path);
	return rc;
}

static bool
complete(const char *dir)
{
	char *img = path_join(dir, "root.img");
	char *meta = path_join(dir, "appliance.json");
	bool ok = path_exists(img) && path_exists(meta);

	free(img);
	free(meta);
	return ok;
}

/* Lock KEY.lock; waits (in the loop) while another process holds it. */
static enum status
lock_key(struct runner *r, const char *cache, const char *key, int *fd_out, bool wait)
{
	char *path = xasprintf("%s/%s.lock", cache, key);
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	bool said = false;

	*fd_out = -1;
	if (fd < 0) {
		enum status rc = error(ERR_IO, "cannot open '%s': %s", path, strerror(errno));

		free(path);
		return rc;
	}
	for (;;) {
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			break;
		if (errno != EWOULDBLOCK && errno != EINTR) {
			enum status rc =
				error(ERR_IO, "cannot lock '%s': %s", path, strerror(errno));

			close(fd);
			free(path);
			return rc;
		}
		if (!wait) {
			close(fd);
			free(path);
			return error(ERR_BUSY, "appliance %.12s is being built by another fswb",
				     key);
		}
		if (!said && r) {
			progress(r, "waiting for another fswb building this appliance", -1);
			said = true;
		}
		if (r && cancelled(r)) {
			close(fd);
			free(path);
			return error(ERR_INTERRUPTED, "interrupted while waiting for another fswb");
		}
		if (r)
			loop_run_once(r->loop, LOCK_POLL_MS);
		else
			usleep(LOCK_POLL_MS * 1000);
	}
	free(path);
	*fd_out = fd;
	return OK;
}

/* The mount points below dir, deepest first (from /proc/self/mounts). */
static void
mounts_below(const char *dir, struct strvec *out)
{
	char *text = NULL;
	struct strvec lines = STRVEC_INIT;
	char *prefix = xasprintf("%s/", dir);

	if (read_file("/proc/self/mounts", MAX_SOURCES, &text, NULL) != OK) {
		error_clear();
		free(prefix);
		return;
	}
	strvec_split(&lines, text, "\n");
	for (size_t i = lines.n; i-- > 0;) {
		struct strvec w = STRVEC_INIT;

		strvec_split(&w, lines.v[i], " ");
		if (w.n >= 2 && (str_startswith(w.v[1], prefix) || !strcmp(w.v[1], dir)))
			strvec_push(out, w.v[1]);
		strvec_clear(&w);
	}
	strvec_clear(&lines);
	free(text);
	free(prefix);
}

/* Remove a build directory: unmount what a killed mmdebstrap left, then rm. */
static enum status
remove_build(struct runner *r, const struct tools *t, const char *dir)
{
	struct strvec mounts = STRVEC_INIT;
	struct strbuf out = STRBUF_INIT;
	enum status rc;
	bool saved = r->interrupted;
	const bool *saved_cancel = r->cancel;

	if (!path_exists(dir))
		return OK;
	/* cleaning up must run even when cancelled */
	r->interrupted = false;
	r->cancel = NULL;
	mounts_below(dir, &mounts);
	for (size_t i = 0; i < mounts.n && geteuid() == 0; i++)
		run_capture(r, (const char *const[]){ "umount", "-l", mounts.v[i], NULL }, &out);
	strvec_clear(&mounts);
	if (t->tool == TOOL_MMDEBSTRAP && t->unshare) {
		rc = run_capture(r,
				 (const char *const[]){ t->bootstrap, "--unshare-helper", "rm",
							"-rf", "--one-file-system", dir, NULL },
				 &out);
		error_clear();
	}
	rc = remove_tree(dir);
	if (rc != OK)
		rc = error_prefix(rc, "cannot remove the unfinished build '%s'", dir);
	r->interrupted = saved;
	r->cancel = saved_cancel;
	strbuf_release(&out);
	return rc;
}

/*
 * Build leftovers: every KEY.tmp.* of key (stale, since we hold its lock),
 * and those of other keys whose process is gone and whose lock is free (a
 * fswb that was killed outright).
 */
static void
remove_stale(struct runner *r, const struct tools *t, const char *cache, const char *key)
{
	DIR *d = opendir(cache);
	struct dirent *de;
	struct strvec stale = STRVEC_INIT;

	if (!d)
		return;
	while ((de = readdir(d))) {
		const char *tmp = strstr(de->d_name, ".tmp.");
		char *end;
		long pid;

		if (!tmp || tmp - de->d_name != 64 || strspn(de->d_name, "0123456789abcdef") != 64)
			continue;
		if (!strncmp(de->d_name, key, 64)) {
			strvec_push(&stale, de->d_name);
			continue;
		}
		errno = 0;
		pid = strtol(tmp + 5, &end, 10);
		if (*end || pid <= 0 || (kill((pid_t)pid, 0) < 0 && errno == ESRCH))
			strvec_push(&stale, de->d_name);
	}
	closedir(d);
	for (size_t i = 0; i < stale.n; i++) {
		char *p = path_join(cache, stale.v[i]);
		char *k = xstrndup(stale.v[i], 64);
		int fd = -1;

		if (!strcmp(k, key) || lock_key(NULL, cache, k, &fd, false) == OK) {
			if (remove_build(r, t, p) != OK)
				error_clear();
		}
		error_clear();
		if (fd >= 0)
			close(fd);
		free(k);
		free(p);
	}
	strvec_clear(&stale);
}

/* ---- the build ---- */

enum step_kind {
	STEP_RUN,     /* args: a command run in the root filesystem */
	STEP_SYNC_IN, /* args: SRC DST: the contents of SRC into DST */
	STEP_COPY_IN, /* args: FILE... DST: the files into directory DST */
};

struct step {
	enum step_kind kind;
	const char *label;
	struct strvec args;
	bool builds; /* fstests' make: most of the steps' time */
};

struct steps {
	struct step *v;
	size_t n, alloc;
};

static void
step_add(struct steps *s, enum step_kind kind, const char *label, const char *const *args)
{
	struct step *st;

	ALLOC_GROW(s->v, s->n + 1, s->alloc);
	st = &s->v[s->n++];
	st->kind = kind;
	st->label = label;
	strvec_init(&st->args);
	strvec_pushv(&st->args, args);
}

/*
 * Where step i starts on the progress bar: the steps share 0.70 to 0.90,
 * and fstests' make takes three quarters of that.
 */
static double
steps_fraction(const struct steps *s, size_t i)
{
	double before = 0, total = 0;

	for (size_t j = 0; j < s->n; j++) {
		double w = s->v[j].builds ? 3.0 * (double)(s->n > 1 ? s->n - 1 : 1) : 1.0;

		total += w;
		if (j < i)
			before += w;
	}
	return 0.70 + 0.20 * (total > 0 ? before / total : 0);
}

/* The next step begins (mmdebstrap's hook, or debootstrap's own loop). */
static void
begin_step(struct runner *r)
{
	size_t i = r->hook++;

	r->build_done = 0;
	if (r->steps && i < r->steps->n)
		progress(r, r->steps->v[i].label, steps_fraction(r->steps, i));
	else
		progress(r, "customizing", 0.90);
}

/* A line of the step running now: fstests' build moves within its share. */
static void
step_line(struct runner *r, const char *line)
{
	size_t i = r->hook - 1;
	double lo, hi, f;

	if (!r->steps || !r->hook || i >= r->steps->n || !r->steps->v[i].builds ||
	    !r->build_units || !appliance_build_line(line))
		return;
	lo = steps_fraction(r->steps, i);
	hi = steps_fraction(r->steps, i + 1);
	f = (double)++r->build_done / (double)r->build_units;
	progress(r, r->steps->v[i].label, lo + (hi - lo) * (f > 1 ? 1 : f));
}

static void
steps_release(struct steps *s)
{
	for (size_t i = 0; i < s->n; i++)
		strvec_clear(&s->v[i].args);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

/* What is done in the root filesystem once the packages are in. */
static void
make_steps(const struct inputs *in, const char *stage, const char *fstests, struct steps *s)
{
	char jobs[16];
	char *agent = path_join(in->agent_dir, "fswb-agent");
	char *init = path_join(in->agent_dir, "fswb-init");
	char *hostname = path_join(stage, "hostname");
	char *hosts = path_join(stage, "hosts");
	char *info = path_join(stage, "fswb-appliance");

	snprintf(jobs, sizeof(jobs), "%u", in->jobs);
	step_add(s, STEP_RUN, "build fstests",
		 (const char *const[]){ "mkdir", "-p", "/opt/fstests", NULL });
	step_add(s, STEP_SYNC_IN, "build fstests",
		 (const char *const[]){ fstests, "/opt/fstests", NULL });
	step_add(s, STEP_RUN, "build fstests",
		 (const char *const[]){ "chown", "-R", "0:0", "/opt/fstests", NULL });
	if (in->build_fstests) {
		step_add(s, STEP_RUN, "build fstests",
			 (const char *const[]){ "make", "-C", "/opt/fstests", "-j", jobs, NULL });
		s->v[s->n - 1].builds = true;
	}
	step_add(s, STEP_RUN, "users",
		 (const char *const[]){ "useradd", "-m", "-U", "fsgqa", NULL });
	step_add(s, STEP_RUN, "users",
		 (const char *const[]){ "useradd", "-m", "-U", "fsgqa2", NULL });
	step_add(s, STEP_RUN, "users",
		 (const char *const[]){ "useradd", "-U", "123456-fsgqa", NULL });
	step_add(s, STEP_COPY_IN, "agent",
		 (const char *const[]){ agent, init, "/usr/local/sbin", NULL });
	step_add(s, STEP_RUN, "agent",
		 (const char *const[]){ "chown", "0:0", "/usr/local/sbin/fswb-agent",
					"/usr/local/sbin/fswb-init", NULL });
	step_add(s, STEP_RUN, "agent",
		 (const char *const[]){ "chmod", "0755", "/usr/local/sbin/fswb-agent",
					"/usr/local/sbin/fswb-init", NULL });
	step_add(s, STEP_COPY_IN, "agent",
		 (const char *const[]){ hostname, hosts, info, "/etc", NULL });
	step_add(s, STEP_RUN, "agent",
		 (const char *const[]){ "chown", "0:0", "/etc/hostname", "/etc/hosts",
					"/etc/fswb-appliance", NULL });
	step_add(s, STEP_RUN, "agent",
		 (const char *const[]){ "mkdir", "-p", "/lib/modules", NULL });
	free(agent);
	free(init);
	free(hostname);
	free(hosts);
	free(info);
}

static void
hook_text(const struct step *st, struct strbuf *sb)
{
	strbuf_reset(sb);
	switch (st->kind) {
	case STEP_RUN:
		strbuf_adds(sb, "chroot \"$1\" ");
		sq_quote_argv(sb, (const char *const *)st->args.v);
		break;
	case STEP_SYNC_IN:
	case STEP_COPY_IN:
		strbuf_adds(sb, st->kind == STEP_SYNC_IN ? "sync-in" : "copy-in");
		for (size_t i = 0; i < st->args.n; i++) {
			strbuf_addch(sb, ' ');
			sq_quote(sb, st->args.v[i]);
		}
		break;
	}
}

/* mmdebstrap's lines, as progress. */
static void
on_mmdebstrap_line(struct runner *r, const char *line)
{
	unsigned a, b;

	if (str_startswith(line, "I: running apt-get update")) {
		progress(r, "bootstrap", 0.02);
	} else if (str_startswith(line, "I: downloading packages")) {
		progress(r, "bootstrap", 0.04);
	} else if (str_startswith(line, "I: extracting archives")) {
		progress(r, "bootstrap", 0.08);
	} else if (str_startswith(line, "I: installing essential packages")) {
		r->phase = 1;
		r->done = 0;
		progress(r, "bootstrap", 0.10);
	} else if (str_startswith(line, "I: installing remaining packages")) {
		r->phase = 2;
		r->done = 0;
		r->total = 0;
		progress(r, "packages", 0.25);
	} else if (str_startswith(line, "I: running --customize-hook") ||
		   str_startswith(line, "I: running special hook")) {
		r->phase = 3;
		begin_step(r);
	} else if (str_startswith(line, "I: cleaning package lists")) {
		r->phase = 4;
		progress(r, "cleaning up", 0.90);
	} else if (sscanf(line, "%u upgraded, %u newly installed", &a, &b) == 2) {
		r->total = b;
	} else if (r->phase == 1 || r->phase == 2) {
		bool counted = str_startswith(line, "Unpacking ") ||
			       str_startswith(line, "Setting up ") ||
			       (r->phase == 2 && str_startswith(line, "Get:"));

		if (counted && r->total) {
			double per = r->phase == 1 ? 2.0 : 3.0;
			double lo = r->phase == 1 ? 0.10 : 0.25, span = r->phase == 1 ? 0.15 : 0.45;
			double f = (double)++r->done / (per * r->total);

			progress(r, r->phase == 1 ? "bootstrap" : "packages",
				 lo + span * (f > 1 ? 1 : f));
		}
	} else if (r->phase == 3) {
		step_line(r, line);
	}
}

static void
on_plain_line(struct runner *r, const char *line)
{
	step_line(r, line);
}

/* debootstrap's "I: ..." lines, as progress. */
static void
on_debootstrap_line(struct runner *r, const char *line)
{
	static const struct {
		const char *prefix, *detail;
		double fraction;
	} steps[] = {
		{ "I: Retrieving Release", "bootstrap", 0.02 },
		{ "I: Retrieving Packages", "bootstrap", 0.04 },
		{ "I: Retrieving ", "bootstrap", 0.06 },
		{ "I: Extracting ", "bootstrap", 0.20 },
		{ "I: Installing core packages", "bootstrap", 0.25 },
		{ "I: Unpacking the base system", "packages", 0.35 },
		{ "I: Configuring the base system", "packages", 0.55 },
		{ "I: Base system installed", "packages", 0.65 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(steps); i++)
		if (str_startswith(line, steps[i].prefix)) {
			progress(r, steps[i].detail, steps[i].fraction);
			return;
		}
}

/* Copy src (a file, link or directory) to dst, recursively. */
static enum status
copy_one(const char *src, const char *dst)
{
	struct stat st;
	enum status rc = OK;

	if (lstat(src, &st) < 0)
		return error(ERR_IO, "cannot read '%s': %s", src, strerror(errno));
	if (S_ISDIR(st.st_mode)) {
		DIR *d;
		struct dirent *de;

		if (mkdir(dst, st.st_mode & 07777) < 0 && errno != EEXIST)
			return error(ERR_IO, "cannot create '%s': %s", dst, strerror(errno));
		d = opendir(src);
		if (!d)
			return error(ERR_IO, "cannot read '%s': %s", src, strerror(errno));
		while (rc == OK && (de = readdir(d))) {
			char *s, *t;

			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			s = path_join(src, de->d_name);
			t = path_join(dst, de->d_name);
			rc = copy_one(s, t);
			free(s);
			free(t);
		}
		closedir(d);
		return rc;
	}
	if (S_ISLNK(st.st_mode)) {
		char target[PATH_MAX];
		ssize_t n = readlink(src, target, sizeof(target) - 1);

		if (n < 0)
			return error(ERR_IO, "cannot read link '%s': %s", src, strerror(errno));
		target[n] = '\0';
		unlink(dst);
		if (symlink(target, dst) < 0)
			return error(ERR_IO, "cannot create '%s': %s", dst, strerror(errno));
		return OK;
	}
	if (S_ISREG(st.st_mode)) {
		int in = open(src, O_RDONLY | O_CLOEXEC);
		int out;
		char buf[65536];
		ssize_t n;

		if (in < 0)
			return error(ERR_IO, "cannot read '%s': %s", src, strerror(errno));
		unlink(dst);
		out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, st.st_mode & 07777);
		if (out < 0) {
			close(in);
			return error(ERR_IO, "cannot create '%s': %s", dst, strerror(errno));
		}
		while (rc == OK && (n = read(in, buf, sizeof(buf))) != 0) {
			if (n < 0) {
				if (errno == EINTR)
					continue;
				rc = error(ERR_IO, "cannot read '%s': %s", src, strerror(errno));
				break;
			}
			for (ssize_t off = 0; rc == OK && off < n;) {
				ssize_t w = write(out, buf + off, (size_t)(n - off));

				if (w < 0 && errno == EINTR)
					continue;
				if (w <= 0)
					rc = error(ERR_IO, "cannot write '%s': %s", dst,
						   w < 0 ? strerror(errno) : "short write");
				else
					off += w;
			}
		}
		fchmod(out, st.st_mode & 07777);
		futimens(out, (struct timespec[]){ st.st_atim, st.st_mtim });
		close(in);
		if (close(out) < 0 && rc == OK)
			rc = error(ERR_IO, "cannot write '%s': %s", dst, strerror(errno));
		return rc;
	}
	return OK; /* sockets, fifos, devices: not part of a source tree */
}

/* Copy the listed files of a directory source into dst. */
static enum status
copy_listed(const char *src, const struct strvec *files, const char *dst)
{
	enum status rc = mkdir_p(dst, 0755);

	for (size_t i = 0; rc == OK && i < files->n; i++) {
		char *s = path_join(src, files->v[i]);
		char *t = path_join(dst, files->v[i]);
		struct stat st;

		if (lstat(s, &st) == 0 && S_ISDIR(st.st_mode)) {
			if (mkdir(t, (st.st_mode & 07777) | 0700) < 0 && errno != EEXIST)
				rc = error(ERR_IO, "cannot create '%s': %s", t, strerror(errno));
		} else {
			rc = copy_one(s, t);
		}
		free(s);
		free(t);
	}
	return rc;
}

static enum status
stage_fstests(struct runner *r, const struct inputs *in, const char *tmp, const char *dst)
{
	struct strbuf out = STRBUF_INIT;
	enum status rc;

	progress(r, "preparing fstests", 0);
	if (!in->is_url)
		return copy_listed(in->src, &in->files, dst);
	{
		char *tar = path_join(tmp, "fstests.tar");

		rc = mkdir_p(dst, 0755);
		if (rc == OK)
			rc = run_capture(
				r,
				(const char *const[]){ in->tools.git, "-c", "tar.umask=0022",
						       "--git-dir", in->clone, "archive",
						       "--format=tar", "-o", tar, in->rev, NULL },
				&out);
		if (rc == OK)
			rc = run_capture(r,
					 (const char *const[]){ in->tools.tar, "-x", "-f", tar,
								"-C", dst, NULL },
					 &out);
		unlink(tar);
		free(tar);
	}
	strbuf_release(&out);
	return rc;
}

static enum status
write_stage_files(const struct inputs *in, const char *stage)
{
	struct strbuf info = STRBUF_INIT;
	char *p;
	enum status rc;

	rc = mkdir_p(stage, 0755);
	if (rc != OK)
		return rc;
	p = path_join(stage, "hostname");
	rc = write_file_atomic(p, "fswb\n", 5, 0644);
	free(p);
	if (rc == OK) {
		static const char hosts[] = "127.0.0.1\tlocalhost\n127.0.1.1\tfswb\n"
					    "::1\tlocalhost ip6-localhost ip6-loopback\n";

		p = path_join(stage, "hosts");
		rc = write_file_atomic(p, hosts, sizeof(hosts) - 1, 0644);
		free(p);
	}
	if (rc == OK) {
		strbuf_addf(&info,
			    "# fswb's test appliance\n"
			    "FSWB_APPLIANCE_FORMAT=%d\n"
			    "FSWB_APPLIANCE_KEY=%s\n"
			    "FSWB_APPLIANCE_RELEASE=%s\n"
			    "FSWB_FSTESTS_REVISION=%s\n",
			    APPLIANCE_FORMAT, in->key, in->release, in->rev);
		p = path_join(stage, "fswb-appliance");
		rc = write_file_atomic(p, info.buf, info.len, 0644);
		free(p);
	}
	strbuf_release(&info);
	return rc;
}

static enum status
bootstrap_mmdebstrap(struct runner *r, const struct inputs *in, const struct steps *steps,
		     const char *root)
{
	struct strvec argv = STRVEC_INIT;
	struct strbuf sb = STRBUF_INIT;
	enum status rc;

	strvec_push(&argv, in->tools.bootstrap);
	strvec_push(&argv, in->tools.unshare ? "--mode=unshare" : "--mode=root");
	strvec_pushv(&argv, (const char *const[]){ "--variant=apt", "--format=directory",
						   "--verbose", NULL });
	if (in->packages.n) {
		char *list = strvec_join(&in->packages, ",");

		strvec_pushf(&argv, "--include=%s", list);
		free(list);
	}
	for (const char *const *x = dpkg_excludes; *x; x++)
		strvec_pushf(&argv, "--dpkgopt=%s", *x);
	for (size_t i = 0; i < steps->n; i++) {
		hook_text(&steps->v[i], &sb);
		strvec_pushf(&argv, "--customize-hook=%s", sb.buf);
	}
	strvec_pushv(&argv, (const char *const[]){ in->release, root, in->mirror, NULL });
	r->on_line = on_mmdebstrap_line;
	r->steps = steps;
	r->hook = 0;
	r->phase = 0;
	progress(r, "bootstrap", 0.01);
	rc = run(r, (const char *const *)argv.v, (const char *const[]){ "LC_ALL=C", NULL });
	r->on_line = on_plain_line;
	r->steps = NULL;
	strvec_clear(&argv);
	strbuf_release(&sb);
	return rc;
}

static enum status
bootstrap_debootstrap(struct runner *r, const struct inputs *in, const struct steps *steps,
		      const char *root)
{
	struct strvec argv = STRVEC_INIT;
	enum status rc;

	strvec_push(&argv, in->tools.bootstrap);
	strvec_pushv(&argv,
		     (const char *const[]){ "--variant=minbase", "--components=main", NULL });
	if (in->packages.n) {
		char *list = strvec_join(&in->packages, ",");

		strvec_pushf(&argv, "--include=%s", list);
		free(list);
	}
	strvec_pushv(&argv, (const char *const[]){ in->release, root, in->mirror, NULL });
	r->on_line = on_debootstrap_line;
	progress(r, "bootstrap", 0.01);
	rc = run(r, (const char *const *)argv.v, (const char *const[]){ "LC_ALL=C", NULL });
	r->on_line = on_plain_line;
	r->steps = steps;
	r->hook = 0;
	strvec_clear(&argv);
	for (size_t i = 0; rc == OK && i < steps->n; i++) {
		const struct step *st = &steps->v[i];
		struct strvec cmd = STRVEC_INIT;
		const char *dst;
		char *target;

		begin_step(r);
		switch (st->kind) {
		case STEP_RUN:
			strvec_pushv(&cmd, (const char *const[]){ "chroot", root, NULL });
			strvec_pushv(&cmd, (const char *const *)st->args.v);
			rc = run(r, (const char *const *)cmd.v,
				 (const char *const[]){ "LC_ALL=C", NULL });
			break;
		case STEP_SYNC_IN:
			target = path_join(root, st->args.v[1]);
			rc = copy_one(st->args.v[0], target);
			free(target);
			break;
		case STEP_COPY_IN:
			dst = st->args.v[st->args.n - 1];
			for (size_t j = 0; rc == OK && j + 1 < st->args.n; j++) {
				const char *base = strrchr(st->args.v[j], '/');
				char *d = path_join(root, dst);

				target = path_join(d, base ? base + 1 : st->args.v[j]);
				rc = copy_one(st->args.v[j], target);
				free(target);
				free(d);
			}
			break;
		}
		strvec_clear(&cmd);
	}
	if (rc == OK) {
		struct strvec cmd = STRVEC_INIT;

		strvec_pushv(&cmd,
			     (const char *const[]){ "chroot", root, "apt-get", "clean", NULL });
		rc = run(r, (const char *const *)cmd.v, NULL);
		strvec_clear(&cmd);
	}
	if (rc == OK) {
		/* what mmdebstrap's cleanup does: no package lists in the image */
		char *lists = path_join(root, "var/lib/apt/lists");
		DIR *d = opendir(lists);
		struct dirent *de;

		while (d && rc == OK && (de = readdir(d))) {
			char *p;

			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
			    !strcmp(de->d_name, "partial") || !strcmp(de->d_name, "lock"))
				continue;
			p = path_join(lists, de->d_name);
			rc = remove_tree(p);
			free(p);
		}
		if (d)
			closedir(d);
		free(lists);
	}
	r->steps = NULL;
	return rc;
}

/* mkfs.ext4 -d of root into image, sized from what root uses. */
static enum status
make_image(struct runner *r, const struct tools *t, const char *root, const char *image)
{
	struct strvec argv = STRVEC_INIT;
	struct strbuf out = STRBUF_INIT;
	unsigned long long kib = 0, mib;
	char size[32];
	enum status rc;

	progress(r, "image", 0.92);
	if (t->unshare)
		strvec_pushv(&argv,
			     (const char *const[]){ t->bootstrap, "--unshare-helper", NULL });
	strvec_pushv(&argv, (const char *const[]){ t->du, "-s", "-x", "-k", root, NULL });
	rc = run_capture(r, (const char *const *)argv.v, &out);
	strvec_clear(&argv);
	if (rc == OK && sscanf(out.buf, "%llu", &kib) != 1)
		rc = error(ERR_PARSE, "cannot read du's output '%s'", out.buf);
	if (rc != OK)
		goto out;
	mib = kib * 3 / 2 / 1024 + HEADROOM_MIB;
	snprintf(size, sizeof(size), "%lluM", mib);
	if (t->unshare)
		strvec_pushv(&argv,
			     (const char *const[]){ t->bootstrap, "--unshare-helper", NULL });
	strvec_pushv(&argv, (const char *const[]){ t->mkfs, "-q", "-F", "-T", "default", "-b",
						   "4096", "-m", "0", "-L", APPLIANCE_LABEL, "-d",
						   root, image, size, NULL });
	rc = run_capture(r, (const char *const *)argv.v, &out);
	strvec_clear(&argv);
	if (rc != OK)
		rc = error_prefix(rc, "making the image");
	else
		progress(r, "image", 0.99);
out:
	strbuf_release(&out);
	return rc;
}

static enum status
build(struct runner *r, struct inputs *in, const char *cache, struct appliance *out)
{
	char *final = path_join(cache, in->key);
	char *tmp = xasprintf("%s/%s.tmp.%ld", cache, in->key, (long)getpid());
	char *root = path_join(tmp, "root"), *stage = path_join(tmp, "stage");
	char *fstests = path_join(tmp, "fstests"), *image = path_join(tmp, "root.img");
	char *log = path_join(tmp, "build.log");
	char *failed_log = xasprintf("%s/%s.failed.log", cache, in->key);
	struct steps steps = { 0 };
	uint64_t start = loop_now_ms();
	struct stat st;
	enum status rc;

	rc = mkdir_p(tmp, 0755);
	if (rc != OK)
		goto out;
	r->logfd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_APPEND, 0644);
	rc = write_stage_files(in, stage);
	if (rc == OK)
		rc = stage_fstests(r, in, tmp, fstests);
	if (rc != OK)
		goto fail;
	if (in->is_url) {
		/* now that it is unpacked: is there something to build? */
		in->build_fstests = appliance_has_default_target(fstests);
	}
	make_steps(in, stage, fstests, &steps);
	r->build_units = in->build_fstests ? appliance_build_units(fstests) : 0;
	if (in->tools.tool == TOOL_DEBOOTSTRAP)
		rc = bootstrap_debootstrap(r, in, &steps, root);
	else
		rc = bootstrap_mmdebstrap(r, in, &steps, root);
	if (rc != OK)
		goto fail;
	rc = make_image(r, &in->tools, root, image);
	if (rc != OK)
		goto fail;
	rc = remove_build(r, &in->tools, root);
	if (rc == OK)
		rc = remove_tree(stage);
	if (rc == OK)
		rc = remove_tree(fstests);
	if (rc != OK)
		goto fail;
	if (stat(image, &st) < 0) {
		rc = error(ERR_IO, "cannot stat '%s': %s", image, strerror(errno));
		goto fail;
	}
	rc = meta_write(tmp, in, (double)(loop_now_ms() - start) / 1000.0, (uint64_t)st.st_size,
			(uint64_t)st.st_blocks * 512);
	if (rc != OK)
		goto fail;
	if (path_exists(final)) {
		/* --force: the new build replaces the old one */
		char *old = xasprintf("%s.old.%ld", final, (long)getpid());

		if (rename(final, old) == 0)
			remove_tree(old);
		free(old);
	}
	if (rename(tmp, final) < 0) {
		rc = error(ERR_IO, "cannot rename '%s' to '%s': %s", tmp, final, strerror(errno));
		goto fail;
	}
	unlink(failed_log);
	rc = meta_read(final, out);
	goto out;
fail : {
	enum status code = rc;
	char *msg = xstrdup(error_msg());

	if (r->logfd >= 0) {
		close(r->logfd);
		r->logfd = -1;
	}
	if (code == ERR_INTERRUPTED || r->interrupted) {
		unlink(failed_log);
		remove_build(r, &in->tools, tmp);
		rc = error(ERR_INTERRUPTED,
			   "the appliance build was interrupted; nothing of it was kept");
	} else {
		bool kept = rename(log, failed_log) == 0;

		remove_build(r, &in->tools, tmp);
		rc = error(code, "building the appliance failed: %s%s%s", msg,
			   kept ? "\nthe whole log: " : "", kept ? failed_log : "");
	}
	free(msg);
}
out:
	steps_release(&steps);
	free(final);
	free(tmp);
	free(root);
	free(stage);
	free(fstests);
	free(image);
	free(log);
	free(failed_log);
	return rc;
}

static void
fill_resolved(const struct inputs *in, const char *cache, struct appliance *a)
{
	memset(a, 0, sizeof(*a));
	a->key = xstrdup(in->key);
	a->id = xstrndup(in->key, 12);
	a->dir = path_join(cache, in->key);
	a->image = path_join(a->dir, "root.img");
	a->release = xstrdup(in->release);
	a->mirror = xstrdup(in->mirror);
	a->fstests_src = xstrdup(in->src);
	a->fstests_rev = xstrdup(in->rev);
	a->tool = xstrdup(in->tools.tool == TOOL_DEBOOTSTRAP ? "debootstrap" : "mmdebstrap");
	a->packages = (unsigned)in->packages.n;
}

enum status
appliance_resolve(struct loop *loop, struct event_bus *bus, const struct appliance_opts *opts,
		  struct appliance *out, bool *cached)
{
	struct runner r = { .loop = loop, .bus = bus, .cancel = opts->cancel, .logfd = -1 };
	struct inputs in;
	char *cache = NULL;
	enum status rc;

	memset(out, 0, sizeof(*out));
	strbuf_init(&r.partial);
	strvec_init(&r.tail);
	*cached = false;
	rc = resolve_inputs(&r, opts, &in);
	if (rc == OK)
		rc = cache_dir(&cache);
	if (rc == OK) {
		fill_resolved(&in, cache, out);
		*cached = complete(out->dir);
	}
	inputs_release(&in);
	runner_release(&r);
	free(cache);
	return rc;
}

static void
stage_end(struct event_bus *bus, enum status rc, const char *detail)
{
	struct event ev = { .type = EV_STAGE_END };

	if (!bus)
		return;
	ev.u.stage.stage = STAGE;
	ev.u.stage.detail = detail;
	ev.u.stage.fraction = rc == OK ? 1.0 : -1;
	ev.u.stage.code = rc;
	ev.u.stage.message = rc == OK ? NULL : error_msg();
	event_emit(bus, &ev);
}

enum status
appliance_ensure(struct loop *loop, struct event_bus *bus, const struct appliance_opts *opts,
		 struct appliance *out)
{
	struct runner r = { .loop = loop, .bus = bus, .cancel = opts->cancel, .logfd = -1 };
	struct inputs in;
	char *cache = NULL, *dir = NULL;
	int lockfd = -1;
	enum status rc;

	memset(out, 0, sizeof(*out));
	strbuf_init(&r.partial);
	strvec_init(&r.tail);
	r.fraction = -1;
	if (bus)
		emit_stage(bus, EV_STAGE_BEGIN, STAGE, "appliance", -1);
	rc = resolve_inputs(&r, opts, &in);
	if (rc == OK)
		rc = cache_dir(&cache);
	if (rc != OK)
		goto out;
	dir = path_join(cache, in.key);
	if (!opts->force && complete(dir) && meta_read(dir, out) == OK) {
		out->reused = true;
		goto reused;
	}
	error_clear();
	rc = lock_key(&r, cache, in.key, &lockfd, true);
	if (rc != OK)
		goto out;
	/* another fswb may have built it while we waited */
	if (!opts->force && complete(dir) && meta_read(dir, out) == OK) {
		out->reused = true;
		goto reused;
	}
	error_clear();
	remove_stale(&r, &in.tools, cache, in.key);
	if (path_exists(dir) && !complete(dir))
		remove_tree(dir);
	rc = build(&r, &in, cache, out);
	goto out;
reused : {
	char detail[64];

	snprintf(detail, sizeof(detail), "reusing %s", out->id);
	progress(&r, detail, 1.0);
}
out:
	if (lockfd >= 0)
		close(lockfd);
	stage_end(bus, rc, rc == OK && out->reused ? "reused" : "appliance");
	inputs_release(&in);
	runner_release(&r);
	free(cache);
	free(dir);
	return rc;
}

/* ---- list and remove ---- */

static int
cmp_built_desc(const void *a, const void *b)
{
	const struct appliance *x = a, *y = b;

	if (x->built != y->built)
		return x->built < y->built ? 1 : -1;
	return strcmp(x->key, y->key);
}

enum status
appliance_list(struct appliance **out, size_t *n)
{
	char *cache = NULL;
	DIR *d;
	struct dirent *de;
	struct appliance *v = NULL;
	size_t alloc = 0;
	enum status rc;

	*out = NULL;
	*n = 0;
	rc = cache_dir(&cache);
	if (rc != OK)
		return rc;
	d = opendir(cache);
	if (!d) {
		rc = error(ERR_IO, "cannot read '%s': %s", cache, strerror(errno));
		free(cache);
		return rc;
	}
	while ((de = readdir(d))) {
		char *dir;
		struct appliance a;

		if (strlen(de->d_name) != 64 || !is_hex(de->d_name, 64))
			continue;
		dir = path_join(cache, de->d_name);
		if (complete(dir) && meta_read(dir, &a) == OK) {
			ALLOC_GROW(v, *n + 1, alloc);
			v[(*n)++] = a;
		}
		error_clear();
		free(dir);
	}
	closedir(d);
	if (*n > 1)
		qsort(v, *n, sizeof(*v), cmp_built_desc);
	*out = v;
	free(cache);
	return OK;
}

void
appliance_list_free(struct appliance *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		appliance_release(&v[i]);
	free(v);
}

static enum status
remove_key(const char *cache, const char *key)
{
	char *dir = path_join(cache, key);
	char *failed = xasprintf("%s/%s.failed.log", cache, key);
	int fd;
	enum status rc = lock_key(NULL, cache, key, &fd, false);

	if (rc == OK) {
		rc = remove_tree(dir);
		unlink(failed);
		close(fd);
	}
	free(dir);
	free(failed);
	return rc;
}

enum status
appliance_remove(const char *id)
{
	char *cache = NULL;
	DIR *d;
	struct dirent *de;
	struct strvec match = STRVEC_INIT;
	enum status rc;

	if (!id || strlen(id) < 4 || !is_hex(id, 4) || strlen(id) > 64)
		return error(ERR_INVALID,
			     "'%s' is not an appliance id (4 to 64 hex digits, as 'fswb appliance "
			     "list' shows)",
			     id ? id : "");
	rc = cache_dir(&cache);
	if (rc != OK)
		return rc;
	d = opendir(cache);
	if (d) {
		while ((de = readdir(d)))
			if (strlen(de->d_name) == 64 && is_hex(de->d_name, 64) &&
			    str_startswith(de->d_name, id))
				strvec_push(&match, de->d_name);
		closedir(d);
	}
	if (!match.n)
		rc = error(ERR_NOTFOUND, "no appliance '%s' in '%s'; see 'fswb appliance list'", id,
			   cache);
	else if (match.n > 1)
		rc = error(ERR_INVALID, "'%s' names %zu appliances; give more of its id", id,
			   match.n);
	else
		rc = remove_key(cache, match.v[0]);
	strvec_clear(&match);
	free(cache);
	return rc;
}

enum status
appliance_remove_all(unsigned *removed)
{
	char *cache = NULL;
	DIR *d;
	struct dirent *de;
	struct strvec names = STRVEC_INIT;
	enum status rc, first = OK;
	char msg[1024] = "";

	*removed = 0;
	rc = cache_dir(&cache);
	if (rc != OK)
		return rc;
	d = opendir(cache);
	if (d) {
		while ((de = readdir(d)))
			if (de->d_name[0] != '.')
				strvec_push(&names, de->d_name);
		closedir(d);
	}
	for (size_t i = 0; i < names.n; i++) {
		const char *name = names.v[i];
		char *p = path_join(cache, name);

		if (strlen(name) == 64 && is_hex(name, 64)) {
			rc = remove_key(cache, name);
			if (rc == OK)
				(*removed)++;
		} else if (str_endswith(name, ".failed.log")) {
			rc = unlink(p) == 0 ? OK : error(ERR_IO, "cannot remove '%s'", p);
		} else if (strstr(name, ".tmp.") || strstr(name, ".old.")) {
			/* a leftover, unless its build is still running */
			char *key = xstrndup(name, strcspn(name, "."));
			int fd;

			rc = lock_key(NULL, cache, key, &fd, false);
			if (rc == OK) {
				rc = remove_tree(p);
				close(fd);
			}
			free(key);
		} else {
			rc = OK;
		}
		if (rc != OK && first == OK) {
			first = rc;
			snprintf(msg, sizeof(msg), "%s", error_msg());
		}
		free(p);
	}
	strvec_clear(&names);
	free(cache);
	if (first != OK)
		return error(first, "%s", msg);
	return OK;
}
