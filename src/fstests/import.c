/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "fstests/import.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/paths.h"
#include "core/rundir.h"
#include "fstests/history.h"
#include "fstests/report.h"

static bool
lstat_is(const char *path, mode_t type)
{
	struct stat st;

	return !lstat(path, &st) && (st.st_mode & S_IFMT) == type;
}

/* The names in dir of real directories (no links), sorted; with prefix only those. */
static void
subdirs(const char *dir, const char *prefix, struct strvec *out)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	while (d && (de = readdir(d))) {
		char *p;

		if (de->d_name[0] == '.' || !str_startswith(de->d_name, prefix))
			continue;
		p = path_join(dir, de->d_name);
		if (lstat_is(p, S_IFDIR))
			strvec_push(out, de->d_name);
		free(p);
	}
	if (d)
		closedir(d);
	strvec_sort(out);
}

bool
import_is_bld(const char *dir)
{
	struct strvec fs = STRVEC_INIT;
	bool found = false;

	subdirs(dir, "", &fs);
	for (size_t i = 0; i < fs.n && !found; i++) {
		struct strvec tc = STRVEC_INIT;
		char *p = path_join(dir, fs.v[i]);

		subdirs(p, "results-", &tc);
		found = tc.n > 0;
		strvec_clear(&tc);
		free(p);
	}
	strvec_clear(&fs);
	return found;
}

/* A "NAME: value" file's value of the first name ending in suffix, or NULL. */
static char *
config_value(const char *text, const char *suffix)
{
	for (const char *s = text; s && *s;) {
		size_t n = strcspn(s, "\n");
		const char *colon = memchr(s, ':', n);

		if (colon) {
			char *name = xstrndup(s, (size_t)(colon - s));
			bool match = str_endswith(name, suffix);

			free(name);
			if (match) {
				char *v = xstrndup(colon + 1, n - (size_t)(colon + 1 - s));
				char *t = xstrdup(str_trim(v));

				free(v);
				if (*t)
					return t;
				free(t);
			}
		}
		s += n + (s[n] == '\n');
	}
	return NULL;
}

/* Set field to value when it is empty (result.xml's are more exact: they win). */
static void
set_if_unset(char **field, char *value)
{
	if (value && (!*field || !**field)) {
		free(*field);
		*field = value;
	} else {
		free(value);
	}
}

/* run-stats: "KERNEL: kernel\tRELEASE VERSION MACHINE": the release. */
static char *
bld_kernel(const char *dir)
{
	char *path = path_join(dir, "run-stats"), *text = read_regular(path, 1u << 20, NULL);
	char *kernel = NULL;

	for (const char *s = text; s && *s && !kernel;) {
		size_t n = strcspn(s, "\n");

		if (n > 15 && !strncmp(s, "KERNEL: kernel", 14)) {
			const char *r = s + 14;
			size_t len;

			r += strspn(r, " \t");
			len = strcspn(r, " \t\n");
			if (len)
				kernel = xstrndup(r, len);
		}
		s += n + (s[n] == '\n');
	}
	free(text);
	free(path);
	return kernel;
}

/* xfstests-bld's results: every FS/results-TC as the section FS/TC. */
static enum status
import_bld(const char *dir, struct run_record *rec, struct strvec *dirs)
{
	struct strvec fs = STRVEC_INIT;
	enum status rc = OK;

	subdirs(dir, "", &fs);
	for (size_t i = 0; i < fs.n && rc == OK; i++) {
		struct strvec tc = STRVEC_INIT;
		char *fsdir = path_join(dir, fs.v[i]);

		subdirs(fsdir, "results-", &tc);
		for (size_t j = 0; j < tc.n && rc == OK; j++) {
			char *base = path_join(fsdir, tc.v[j]),
			     *cfgpath = path_join(base, "config");
			char *config = xasprintf("%s/%s", fs.v[i], tc.v[j] + strlen("results-"));
			char *text = read_regular(cfgpath, 1u << 20, NULL);
			struct run_record sub;

			rc = results_import(base, &sub);
			if (rc != OK) {
				rc = error_prefix(rc, "%s", config);
			} else {
				if (!rec->kernel && sub.kernel)
					rec->kernel = xstrdup(sub.kernel);
				if (sub.start_ms &&
				    (!rec->start_ms || sub.start_ms < rec->start_ms))
					rec->start_ms = sub.start_ms;
				if (sub.end_ms > rec->end_ms)
					rec->end_ms = sub.end_ms;
				for (size_t s = 0; s < sub.nsections; s++) {
					struct section_result *sec;

					ALLOC_GROW(rec->sections, rec->nsections + 1, rec->alloc);
					sec = &rec->sections[rec->nsections++];
					*sec = sub.sections[s];
					free(sec->config);
					sec->config = xstrdup(config);
					set_if_unset(&sec->fstyp, config_value(text, "FS"));
					set_if_unset(&sec->mkfs_options,
						     config_value(text, "MKFS_OPTIONS"));
					set_if_unset(&sec->mount_options,
						     config_value(text, "MOUNT_OPTIONS"));
					/* a section with its own name keeps its subdirectory */
					if (sec->name) {
						char *p = path_join(base, sec->name);

						strvec_push(dirs, lstat_is(p, S_IFDIR) ? p : base);
						free(p);
					} else {
						/* run.json tells sections apart by name, as fswb's runs */
						sec->name = xstrdup(config);
						strvec_push(dirs, base);
					}
				}
				sub.nsections = 0; /* the sections moved to rec */
				run_record_release(&sub);
			}
			free(text);
			free(config);
			free(cfgpath);
			free(base);
		}
		strvec_clear(&tc);
		free(fsdir);
	}
	strvec_clear(&fs);
	if (rc == OK && !rec->nsections)
		rc = error(ERR_NOTFOUND, "'%s' has no configuration results (FS/results-TC)", dir);
	return rc;
}

enum status
import_results(const char *path, struct run_record *out, struct strvec *dirs)
{
	enum status rc;

	strvec_init(dirs);
	if (lstat_is(path, S_IFDIR) && import_is_bld(path)) {
		run_record_init(out);
		rc = import_bld(path, out, dirs);
		if (rc == OK) {
			char *k = bld_kernel(path);

			if (k) {
				free(out->kernel);
				out->kernel = k;
			}
			out->finished = true;
			run_record_recount(out);
		} else {
			run_record_release(out);
			strvec_clear(dirs);
		}
		return rc;
	}
	rc = results_import(path, out);
	if (rc != OK)
		return rc;
	for (size_t s = 0; s < out->nsections; s++) {
		const struct section_result *sec = &out->sections[s];
		char *root = path_join(path, "results"), *dir;

		if (!lstat_is(path, S_IFDIR)) {
			/* check's stdout: the results directory beside it, if any */
			char *parent = xstrdup(path), *slash = strrchr(parent, '/');

			free(root);
			if (slash)
				*slash = '\0';
			root = path_join(slash ? parent : ".", "results");
			free(parent);
		} else if (!lstat_is(root, S_IFDIR) || import_is_bld(root)) {
			free(root);
			root = xstrdup(path);
		}
		dir = sec->name ? path_join(root, sec->name) : xstrdup(root);
		strvec_push(dirs, lstat_is(dir, S_IFDIR) ? dir : "");
		free(dir);
		free(root);
	}
	return OK;
}

static enum status
purge(const char *dir, unsigned depth)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	enum status rc = OK;

	if (!d)
		return error(ERR_IO, "cannot read '%s': %s", dir, strerror(errno));
	while (rc == OK && (de = readdir(d))) {
		char *p;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		p = path_join(dir, de->d_name);
		if (lstat_is(p, S_IFDIR) && depth < IMPORT_DEPTH_MAX)
			rc = purge(p, depth + 1);
		else if (lstat_is(p, S_IFDIR))
			rc = remove_tree(p);
		else if (!lstat_is(p, S_IFREG) && unlink(p))
			rc = error(ERR_IO, "cannot remove '%s': %s", p, strerror(errno));
		free(p);
	}
	closedir(d);
	return rc;
}

enum status
import_purge(const char *dir)
{
	return purge(dir, 0);
}

/* Copy the regular files and directories of src below dst. */
static enum status
copy_tree(const char *src, const char *dst, unsigned depth)
{
	DIR *d = opendir(src);
	struct dirent *de;
	enum status rc = mkdir_p(dst, 0755);

	if (!d)
		return error(ERR_IO, "cannot read '%s': %s", src, strerror(errno));
	while (rc == OK && (de = readdir(d))) {
		char *from, *to;

		if (de->d_name[0] == '.')
			continue;
		from = path_join(src, de->d_name);
		to = path_join(dst, de->d_name);
		if (lstat_is(from, S_IFDIR) && depth < IMPORT_DEPTH_MAX) {
			rc = copy_tree(from, to, depth + 1);
		} else if (lstat_is(from, S_IFREG)) {
			size_t len = 0;
			char *data = read_regular(from, IMPORT_FILE_MAX, &len);

			if (data)
				rc = write_file_atomic(to, data, len, 0644);
			free(data);
		}
		free(to);
		free(from);
	}
	closedir(d);
	return rc;
}

static char *
new_id(const struct run_record *rec)
{
	time_t t = rec->start_ms ? (time_t)(rec->start_ms / 1000) : time(NULL);
	char base[32], *id = NULL, *dir;
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(base, sizeof(base), "%Y%m%d-%H%M%S", &tm);
	for (unsigned n = 1;; n++) {
		free(id);
		id = n == 1 ? xstrdup(base) : xasprintf("%s-%u", base, n);
		dir = history_run_dir(id);
		if (!path_exists(dir)) {
			free(dir);
			return id;
		}
		free(dir);
	}
}

enum status
import_keep(struct run_record *rec, const struct strvec *dirs, char **id)
{
	char *runs = rundir_root(), *dir = NULL, *json = NULL;
	enum status rc = mkdir_p(runs, 0755);

	*id = NULL;
	if (rc != OK)
		goto out;
	*id = new_id(rec);
	dir = path_join(runs, *id);
	rc = mkdir_p(dir, 0755);
	for (size_t s = 0; s < rec->nsections && rc == OK; s++) {
		struct section_result *sec = &rec->sections[s];
		char *slug =
			xstrdup(*section_config_name(sec) ? section_config_name(sec) : "check");
		char *rel, *dst;

		for (char *p = slug; *p; p++)
			if (*p == '/')
				*p = '-';
		rel = xasprintf("results/%s", slug);
		dst = path_join(dir, rel);
		for (size_t t = 0; t < sec->ntests; t++) {
			struct test_result *tr = &sec->tests[t];

			char **paths[] = { &tr->out_bad, &tr->full, &tr->dmesg, &tr->kmsg };

			for (size_t k = 0; k < ARRAY_SIZE(paths); k++) {
				free(*paths[k]);
				*paths[k] = NULL;
			}
		}
		if (s < dirs->n && *dirs->v[s]) {
			rc = copy_tree(dirs->v[s], dst, 0);
			if (rc == OK)
				section_attach_artifacts(sec, dst);
		}
		free(dst);
		free(rel);
		free(slug);
	}
	if (rc == OK) {
		free(rec->id);
		rec->id = xstrdup(*id);
		rec->finished = true;
		json = path_join(dir, "run.json");
		rc = run_record_save(json, rec);
	}
	if (rc != OK && dir)
		remove_tree(dir);
out:
	if (rc != OK) {
		free(*id);
		*id = NULL;
	}
	free(json);
	free(dir);
	free(runs);
	return rc;
}
