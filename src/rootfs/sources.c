/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * An fstests tree as the appliance takes it: its files, its build's size and
 * progress lines.
 */
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <string.h>
#include <sys/stat.h>

#include "core/paths.h"
#include "core/sha.h"
#include "core/spawn.h"
#include "rootfs/appliance_int.h"

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
	char *git = path_which("git", NULL, SBIN_DIRS);
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
