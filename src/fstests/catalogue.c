/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "fstests/catalogue.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "core/paths.h"

/* Test files are small; a header larger than this is not a test's. */
#define TEST_FILE_MAX (4u << 20)

static int
cmp_test(const void *a, const void *b)
{
	return strcmp(((const struct catalogue_test *)a)->name,
		      ((const struct catalogue_test *)b)->name);
}

static int
cmp_group(const void *a, const void *b)
{
	return strcmp(((const struct catalogue_group *)a)->name,
		      ((const struct catalogue_group *)b)->name);
}

/* Sorted, without duplicates. */
static void
sort_uniq(struct strvec *sv)
{
	size_t j = 0;

	strvec_sort(sv);
	for (size_t i = 0; i < sv->n; i++) {
		if (j && !strcmp(sv->v[j - 1], sv->v[i])) {
			free(sv->v[i]);
			continue;
		}
		sv->v[j++] = sv->v[i];
	}
	sv->n = j;
	sv->v[j] = NULL;
}

/* check's get_all_tests: three digits first, no '.', not group or Makefile. */
static bool
is_test_name(const char *name)
{
	if (!isdigit((unsigned char)name[0]) || !isdigit((unsigned char)name[1]) ||
	    !isdigit((unsigned char)name[2]))
		return false;
	return !strchr(name, '.') && !strstr(name, "group") && !strstr(name, "Makefile");
}

/* The names in dir (sorted), only regular files or only directories. */
static enum status
list_dir(const char *dir, bool dirs, struct strvec *out)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	if (!d)
		return error(errno == ENOENT ? ERR_NOTFOUND : ERR_IO, "cannot read '%s': %s", dir,
			     strerror(errno));
	while ((de = readdir(d))) {
		struct stat st;
		char *p;

		if (de->d_name[0] == '.')
			continue;
		p = path_join(dir, de->d_name);
		if (stat(p, &st) == 0 && (dirs ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode)))
			strvec_push(out, de->d_name);
		free(p);
	}
	closedir(d);
	strvec_sort(out);
	return OK;
}

/* Split "NAME g1 g2 # comment" style text after the name into groups. */
static void
add_groups(struct strvec *groups, const char *text, size_t len)
{
	char *s = xstrndup(text, len);
	char *hash = strchr(s, '#');

	if (hash)
		*hash = '\0';
	strvec_split(groups, s, " \t\r");
	free(s);
}

static bool
header_noise(const char *t)
{
	/* t is the comment text after '#' and leading blanks. */
	if (!*t)
		return true;
	if (strcasestr(t, "SPDX-License-Identifier") || strcasestr(t, "copyright") ||
	    strcasestr(t, "all rights reserved"))
		return true;
	if (!strncasecmp(t, "FS QA Test", 10) || !strncasecmp(t, "FSQA Test", 9) ||
	    !strncasecmp(t, "QA Test", 7))
		return true;
	/* a line of dashes or other punctuation only */
	for (const char *p = t; *p; p++)
		if (isalnum((unsigned char)*p))
			return false;
	return true;
}

/*
 * Description and _begin_fstest groups from a test's text. The header is
 * the run of comment (and blank) lines at the top; the description is its
 * first line that is not noise.
 */
static void
scan_test(const char *text, char **description, struct strvec *groups, bool want_groups)
{
	bool in_header = true;
	const char *line = text;

	*description = NULL;
	while (*line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);

		if (in_header && len && line[0] == '#') {
			if (!*description && (len < 2 || line[1] != '!')) {
				char *t = xstrndup(line + 1, len - 1);
				char *tt = str_trim(t);

				if (!header_noise(tt))
					*description = xstrdup(tt);
				free(t);
			}
		} else if (len && strspn(line, " \t\r") < len) {
			in_header = false;
		}
		if (str_startswith(line, "_begin_fstest") &&
		    (len == 13 || line[13] == ' ' || line[13] == '\t')) {
			if (want_groups)
				add_groups(groups, line + 13, len - 13);
			break; /* the header is behind us */
		}
		if (!nl)
			break;
		line = nl + 1;
	}
	if (!*description)
		*description = xstrdup("");
}

/* Parse tests/DIR/group.list into (name, groups) pairs. */
static void
read_group_list(const char *text, struct strvec *names, struct strvec *lines)
{
	const char *line = text;

	while (*line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		size_t w = 0;

		while (w < len && !isspace((unsigned char)line[w]) && line[w] != '#')
			w++;
		if (w && line[0] != '#') {
			char *name = xstrndup(line, w);

			strvec_push(names, name);
			free(name);
			name = xstrndup(line + w, len - w);
			strvec_push(lines, name);
			free(name);
		}
		if (!nl)
			break;
		line = nl + 1;
	}
}

static enum status
load_dir(struct catalogue *cat, const char *dirname, size_t *alloc)
{
	char *dir = xasprintf("%s/tests/%s", cat->root, dirname);
	char *gl_path = path_join(dir, "group.list");
	struct strvec files = STRVEC_INIT, gl_names = STRVEC_INIT, gl_groups = STRVEC_INIT;
	char *gl = NULL;
	size_t gl_len = 0;
	enum status rc;

	if ((rc = list_dir(dir, false, &files)) != OK)
		goto out;
	if (path_exists(gl_path)) {
		if ((rc = read_file(gl_path, 64u << 20, &gl, &gl_len)) != OK)
			goto out;
		if (gl_len) {
			read_group_list(gl, &gl_names, &gl_groups);
			cat->built_dirs++;
		}
	}
	for (size_t i = 0; i < files.n; i++) {
		struct catalogue_test *t;
		char *path, *text = NULL;
		size_t len;

		if (!is_test_name(files.v[i]))
			continue;
		path = path_join(dir, files.v[i]);
		rc = read_file(path, TEST_FILE_MAX, &text, &len);
		free(path);
		if (rc != OK)
			goto out;
		ALLOC_GROW(cat->tests, cat->ntests + 1, *alloc);
		t = &cat->tests[cat->ntests++];
		memset(t, 0, sizeof(*t));
		t->name = xasprintf("%s/%s", dirname, files.v[i]);
		t->dir = xstrdup(dirname);
		strvec_init(&t->groups);
		scan_test(text, &t->description, &t->groups, !gl_len);
		free(text);
		if (gl_len) {
			for (size_t k = 0; k < gl_names.n; k++) {
				if (!strcmp(gl_names.v[k], files.v[i])) {
					add_groups(&t->groups, gl_groups.v[k],
						   strlen(gl_groups.v[k]));
					break;
				}
			}
		}
	}
	rc = OK;
out:
	free(gl);
	free(gl_path);
	free(dir);
	strvec_clear(&files);
	strvec_clear(&gl_names);
	strvec_clear(&gl_groups);
	return rc;
}

static struct catalogue_group *
group_add(struct catalogue *cat, size_t *alloc, const char *name)
{
	for (size_t i = 0; i < cat->ngroups; i++)
		if (!strcmp(cat->groups[i].name, name))
			return &cat->groups[i];
	ALLOC_GROW(cat->groups, cat->ngroups + 1, *alloc);
	cat->groups[cat->ngroups].name = xstrdup(name);
	cat->groups[cat->ngroups].description = xstrdup("");
	cat->groups[cat->ngroups].ntests = 0;
	return &cat->groups[cat->ngroups++];
}

/* doc/group-names.txt: "name<blanks>words", continuation lines indented. */
static void
read_group_doc(struct catalogue *cat, size_t *alloc, const char *text)
{
	struct catalogue_group *last = NULL;
	const char *line = text;

	while (*line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		char *l = xstrndup(line, len);
		char *t = str_trim(l);

		if (!*t || *t == '=' || !strncasecmp(t, "Group Name:", 11)) {
			if (!*t)
				last = NULL;
		} else if (isspace((unsigned char)l[0])) {
			if (last) {
				char *d = *last->description
						  ? xasprintf("%s %s", last->description, t)
						  : xstrdup(t);

				free(last->description);
				last->description = d;
			}
		} else {
			size_t w = strcspn(t, " \t");
			char *name = xstrndup(t, w);

			last = group_add(cat, alloc, name);
			free(last->description);
			last->description = xstrdup(str_trim(t + w));
			free(name);
		}
		free(l);
		if (!nl)
			break;
		line = nl + 1;
	}
}

enum status
catalogue_load(const char *fstests_dir, struct catalogue *out)
{
	struct catalogue cat = { 0 };
	size_t talloc = 0, galloc = 0;
	char *tests_dir = path_join(fstests_dir, "tests");
	char *doc = NULL;
	size_t doc_len;
	enum status rc;

	strvec_init(&cat.dirs);
	cat.root = xstrdup(fstests_dir);
	if (!path_is_dir(tests_dir)) {
		rc = error(ERR_NOTFOUND,
			   "'%s' is not an fstests tree: it has no tests/ directory; give the "
			   "top of an fstests (xfstests) checkout",
			   fstests_dir);
		goto fail;
	}
	if ((rc = list_dir(tests_dir, true, &cat.dirs)) != OK)
		goto fail;
	for (size_t i = 0; i < cat.dirs.n; i++)
		if ((rc = load_dir(&cat, cat.dirs.v[i], &talloc)) != OK)
			goto fail;
	if (cat.ntests > 1)
		qsort(cat.tests, cat.ntests, sizeof(*cat.tests), cmp_test);

	{
		char *docpath = path_join(fstests_dir, "doc/group-names.txt");

		if (path_exists(docpath) && read_file(docpath, 16u << 20, &doc, &doc_len) == OK)
			read_group_doc(&cat, &galloc, doc);
		free(docpath);
		free(doc);
	}
	for (size_t i = 0; i < cat.ntests; i++) {
		struct catalogue_test *t = &cat.tests[i];

		for (size_t g = 0; g < t->groups.n; g++) {
			bool seen = false;

			for (size_t h = 0; h < g && !seen; h++)
				seen = !strcmp(t->groups.v[h], t->groups.v[g]);
			if (!seen)
				group_add(&cat, &galloc, t->groups.v[g])->ntests++;
		}
	}
	for (size_t g = 0; g < cat.ngroups; g++)
		if (!strcmp(cat.groups[g].name, "all")) /* check's -g all: every test */
			cat.groups[g].ntests = cat.ntests;
	if (cat.ngroups > 1)
		qsort(cat.groups, cat.ngroups, sizeof(*cat.groups), cmp_group);
	free(tests_dir);
	*out = cat;
	return OK;
fail:
	free(tests_dir);
	catalogue_release(&cat);
	return rc;
}

void
catalogue_release(struct catalogue *cat)
{
	for (size_t i = 0; i < cat->ntests; i++) {
		free(cat->tests[i].name);
		free(cat->tests[i].dir);
		free(cat->tests[i].description);
		strvec_clear(&cat->tests[i].groups);
	}
	free(cat->tests);
	for (size_t i = 0; i < cat->ngroups; i++) {
		free(cat->groups[i].name);
		free(cat->groups[i].description);
	}
	free(cat->groups);
	strvec_clear(&cat->dirs);
	free(cat->root);
	memset(cat, 0, sizeof(*cat));
	strvec_init(&cat->dirs);
}

const struct catalogue_test *
catalogue_find(const struct catalogue *cat, const char *name)
{
	struct catalogue_test key = { .name = (char *)name };

	if (!cat->ntests)
		return NULL;
	return bsearch(&key, cat->tests, cat->ntests, sizeof(*cat->tests), cmp_test);
}

const struct catalogue_group *
catalogue_group(const struct catalogue *cat, const char *name)
{
	struct catalogue_group key = { .name = (char *)name };

	if (!cat->ngroups)
		return NULL;
	return bsearch(&key, cat->groups, cat->ngroups, sizeof(*cat->groups), cmp_group);
}

bool
catalogue_test_in_group(const struct catalogue_test *t, const char *group)
{
	return strvec_contains(&t->groups, group);
}

void
catalogue_fs_dirs(const struct catalogue *cat, const char *fstyp, bool for_groups,
		  struct strvec *out)
{
	const char *fsdir = fstyp;

	if (for_groups && fstyp && (!strcmp(fstyp, "ext2") || !strcmp(fstyp, "ext3")))
		fsdir = "ext4";
	if (strvec_contains(&cat->dirs, "generic"))
		strvec_push(out, "generic");
	if (fsdir && *fsdir && strcmp(fsdir, "generic") && strvec_contains(&cat->dirs, fsdir))
		strvec_push(out, fsdir);
}

/* One part of a test name: its length, 0 when it is not one. */
static size_t
test_part_len(const char *s)
{
	size_t n = 0;

	if (*s == '.' || *s == '-')
		return 0;
	while (isalnum((unsigned char)s[n]) || s[n] == '.' || s[n] == '_' || s[n] == '-')
		n++;
	return n <= 64 ? n : 0;
}

bool
catalogue_test_name_ok(const char *name)
{
	size_t n = test_part_len(name);

	if (!n || name[n] != '/')
		return false;
	name += n + 1;
	n = test_part_len(name);
	return n && !name[n];
}

bool
catalogue_name_fits(const char *name, const char *fstyp)
{
	static const char *const every[] = { "generic", "shared", "selftest", "perf" };
	size_t len = strcspn(name, "/");
	char *dir;
	bool fits;

	if (!name[len])
		return true;
	dir = xstrndup(name, len);
	/* a glob ("*\/001") fits when it takes in one of fstyp's directories */
	fits = !fnmatch(dir, fstyp, 0) ||
	       (!fnmatch(dir, "ext4", 0) && (!strcmp(fstyp, "ext2") || !strcmp(fstyp, "ext3")));
	for (size_t i = 0; !fits && i < ARRAY_SIZE(every); i++)
		fits = !fnmatch(dir, every[i], 0);
	free(dir);
	return fits;
}

/* Tests of group in the directories dirs, appended to out. */
static void
group_tests(const struct catalogue *cat, const char *group, const struct strvec *dirs,
	    struct strvec *out)
{
	bool all = !strcmp(group, "all");

	for (size_t i = 0; i < cat->ntests; i++) {
		const struct catalogue_test *t = &cat->tests[i];

		if (!strvec_contains(dirs, t->dir))
			continue;
		if (all || catalogue_test_in_group(t, group))
			strvec_push(out, t->name);
	}
}

/* The tests a -g or -x argument names, for fstyp. */
static void
resolve_group(const struct catalogue *cat, const char *fstyp, const char *arg, struct strvec *out)
{
	const char *slash = strrchr(arg, '/');
	struct strvec dirs = STRVEC_INIT;

	if (slash && slash != arg) {
		char *sub = xstrndup(arg, (size_t)(slash - arg));

		if (strvec_contains(&cat->dirs, sub)) {
			strvec_push(&dirs, sub);
			group_tests(cat, slash + 1, &dirs, out);
			free(sub);
			strvec_clear(&dirs);
			return;
		}
		free(sub);
	}
	catalogue_fs_dirs(cat, fstyp, strcmp(arg, "all") != 0, &dirs);
	group_tests(cat, arg, &dirs, out);
	strvec_clear(&dirs);
}

static bool
has_glob(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

/* A named test or glob; false when it matched nothing. */
static bool
resolve_name(const struct catalogue *cat, const char *arg, struct strvec *out)
{
	bool found = false;

	if (has_glob(arg)) {
		for (size_t i = 0; i < cat->ntests; i++) {
			if (!fnmatch(arg, cat->tests[i].name, FNM_PATHNAME | FNM_PERIOD)) {
				strvec_push(out, cat->tests[i].name);
				found = true;
			}
		}
		return found;
	}
	if (catalogue_find(cat, arg)) {
		strvec_push(out, arg);
		return true;
	}
	/* "generic/001" for "generic/001-some-name": the shortest such name. */
	const char *best = NULL;
	size_t len = strlen(arg);

	for (size_t i = 0; i < cat->ntests; i++) {
		const char *n = cat->tests[i].name;

		if (!strncmp(n, arg, len) && n[len] == '-' && (!best || strlen(n) < strlen(best)))
			best = n;
	}
	if (best)
		strvec_push(out, best);
	return best != NULL;
}

static void
remove_all(struct strvec *list, const struct strvec *drop)
{
	size_t j = 0;

	for (size_t i = 0; i < list->n; i++) {
		if (strvec_contains(drop, list->v[i])) {
			free(list->v[i]);
			continue;
		}
		list->v[j++] = list->v[i];
	}
	list->n = j;
	list->v[j] = NULL;
}

bool
catalogue_entry_excludes(const char *entry, const char *test)
{
	size_t len = strlen(test);
	unsigned char next;

	if (strncmp(entry, test, len))
		return false;
	next = (unsigned char)entry[len];
	return !next || !(isalnum(next) || next == '_');
}

enum status
catalogue_read_exclude_file(const char *path, struct strvec *entries)
{
	char *text = NULL;
	size_t len;
	enum status rc = read_file(path, 16u << 20, &text, &len);
	char *line, *save = NULL;

	if (rc != OK)
		return error_prefix(rc, "exclude file");
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *hash = strchr(line, '#');
		size_t l;

		if (hash)
			*hash = '\0';
		l = strlen(line);
		while (l && isspace((unsigned char)line[l - 1]))
			line[--l] = '\0';
		if (l && strspn(line, " \t") < l)
			strvec_push(entries, line);
	}
	free(text);
	return OK;
}

static const char *
closest_group(const struct catalogue *cat, const char *name)
{
	const char **names = xcalloc(cat->ngroups + 1, sizeof(*names));
	const char *best;

	for (size_t i = 0; i < cat->ngroups; i++)
		names[i] = cat->groups[i].name;
	best = closest_match(name, names, cat->ngroups);
	free(names);
	return best;
}

enum status
catalogue_select(const struct catalogue *cat, const struct catalogue_query *q,
		 struct catalogue_selection *out)
{
	struct strvec list = STRVEC_INIT, entries = STRVEC_INIT;
	const char *fstyp = q->fstyp ? q->fstyp : "";
	bool named = q->tests && q->tests->n;
	bool grouped = q->groups && q->groups->n;
	enum status rc = OK;

	strvec_init(&out->tests);
	strvec_init(&out->expunged);
	strvec_init(&out->unknown);
	strvec_init(&out->warnings);

	for (size_t i = 0; named && i < q->tests->n; i++)
		if (!resolve_name(cat, q->tests->v[i], &list))
			strvec_push(&out->unknown, q->tests->v[i]);

	if (grouped || !named) {
		const struct strvec *groups = q->groups;
		struct strvec dflt = STRVEC_INIT;

		if (!grouped) {
			strvec_push(&dflt, "auto");
			groups = &dflt;
		}
		for (size_t i = 0; i < groups->n && rc == OK; i++) {
			size_t before = list.n;

			resolve_group(cat, fstyp, groups->v[i], &list);
			if (list.n == before) {
				const char *near = closest_group(cat, groups->v[i]);

				rc = error(ERR_NOTFOUND,
					   "group '%s' has no tests for FSTYP '%s'%s%s%s",
					   groups->v[i], fstyp, near ? " (did you mean '" : "",
					   near ? near : "", near ? "'?)" : "");
			}
		}
		strvec_clear(&dflt);
		if (rc != OK)
			goto out;
	}

	for (size_t i = 0; q->xgroups && i < q->xgroups->n; i++) {
		struct strvec drop = STRVEC_INIT;

		resolve_group(cat, fstyp, q->xgroups->v[i], &drop);
		if (!drop.n)
			strvec_pushf(&out->warnings, "group '%s' to exclude has no tests",
				     q->xgroups->v[i]);
		remove_all(&list, &drop);
		strvec_clear(&drop);
	}
	sort_uniq(&list);

	for (size_t i = 0; q->exclude && i < q->exclude->n; i++)
		strvec_split(&entries, q->exclude->v[i], ", ");
	for (size_t i = 0; q->exclude_files && i < q->exclude_files->n; i++)
		if ((rc = catalogue_read_exclude_file(q->exclude_files->v[i], &entries)) != OK)
			goto out;
	for (size_t i = 0; i < list.n; i++) {
		strvec_push(&out->tests, list.v[i]);
		for (size_t e = 0; e < entries.n; e++) {
			if (catalogue_entry_excludes(entries.v[e], list.v[i])) {
				strvec_push(&out->expunged, list.v[i]);
				break;
			}
		}
	}
out:
	strvec_clear(&list);
	strvec_clear(&entries);
	return rc;
}

void
catalogue_selection_release(struct catalogue_selection *sel)
{
	strvec_clear(&sel->tests);
	strvec_clear(&sel->expunged);
	strvec_clear(&sel->unknown);
	strvec_clear(&sel->warnings);
}
