/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The docs as a site: see docsite.h.
 */
#include "view/docsite.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "core/paths.h"
#include "core/util.h"
#include "view/markdown.h"

#define DOCS_FILE_MAX (1u << 20)

char *
docs_site_read(const char *dir, const char *file, size_t *len)
{
	char *path = path_join(dir, file), *text = NULL;

	if (read_file(path, DOCS_FILE_MAX, &text, len) != OK) {
		error_clear();
		text = NULL;
	}
	free(path);
	return text;
}

static bool
site_has(const struct docs_site *s, const char *file)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->pages[i].file, file))
			return true;
	return false;
}

static void
site_add(struct docs_site *s, const char *file)
{
	struct md_opts o = { .width = 80, .ascii = true };
	struct md_doc doc;
	char *text;
	size_t len;

	if (site_has(s, file) || !(text = docs_site_read(s->dir, file, &len)))
		return;
	md_doc_init(&doc);
	if (md_render(text, len, &o, &doc) != OK)
		error_clear();
	ALLOC_GROW(s->pages, s->n + 1, s->alloc);
	s->pages[s->n].file = xstrdup(file);
	s->pages[s->n].title = xstrdup(doc.title ? doc.title : file);
	s->n++;
	md_doc_release(&doc);
	free(text);
}

char *
docs_site_link(const char *dir, const char *url, char **anchor)
{
	char *path = xstrdup(url), *hash = strchr(path, '#'), *res = NULL;
	char *full, real_dir[PATH_MAX], real[PATH_MAX];
	const char *base;

	if (anchor)
		*anchor = hash && hash[1] ? xstrdup(hash + 1) : NULL;
	if (hash)
		*hash = 0;
	if (!*path || !str_endswith(path, ".md")) {
		free(path);
		return NULL;
	}
	full = path_join(dir, path);
	base = strrchr(full, '/') ? strrchr(full, '/') + 1 : full;
	if (realpath(dir, real_dir) && realpath(full, real)) {
		size_t n = strlen(real_dir);

		if (!strncmp(real, real_dir, n) && real[n] == '/' && !strchr(real + n + 1, '/'))
			res = xstrdup(base);
	}
	free(full);
	free(path);
	if (!res && anchor) {
		free(*anchor);
		*anchor = NULL;
	}
	return res;
}

struct docs_site *
docs_site_load(void)
{
	struct docs_site *s = xcalloc(1, sizeof(*s));
	char *datadir = fswb_datadir();
	struct strvec rest = STRVEC_INIT;
	DIR *d;
	struct dirent *de;
	char *text;
	size_t len;

	s->refs = 1;
	s->dir = path_join(datadir, "docs/getting-started");
	free(datadir);
	if (!path_is_dir(s->dir)) {
		s->error = xasprintf("the docs are not in '%s': set FSWB_DATADIR to the directory "
				     "that holds docs/getting-started (or install fswb again)",
				     s->dir);
		return s;
	}
	/* README.md's links give the reading order */
	text = docs_site_read(s->dir, "README.md", &len);
	if (text) {
		struct md_opts o = { .width = 1000, .ascii = false };
		struct md_doc doc;

		md_doc_init(&doc);
		if (md_render(text, len, &o, &doc) == OK) {
			for (size_t i = 0; i < doc.nlinks; i++) {
				char *page = docs_site_link(s->dir, doc.links[i].url, NULL);

				if (page && strcmp(page, "README.md"))
					site_add(s, page);
				free(page);
			}
			for (size_t i = 0; i < doc.n && !s->intro; i++)
				if (doc.lines[i].kind == MDL_TEXT)
					s->intro = xstrdup(doc.lines[i].text);
		}
		error_clear();
		md_doc_release(&doc);
		free(text);
	}
	/* then any other page, by name */
	d = opendir(s->dir);
	while (d && (de = readdir(d))) {
		if (de->d_name[0] != '.' && str_endswith(de->d_name, ".md") &&
		    strcmp(de->d_name, "README.md"))
			strvec_push(&rest, de->d_name);
	}
	if (d)
		closedir(d);
	strvec_sort(&rest);
	for (size_t i = 0; i < rest.n; i++)
		site_add(s, rest.v[i]);
	strvec_clear(&rest);
	if (!s->n && !s->error)
		s->error = xasprintf("there are no pages in '%s'", s->dir);
	return s;
}

struct docs_site *
docs_site_ref(struct docs_site *s)
{
	s->refs++;
	return s;
}

void
docs_site_unref(struct docs_site *s)
{
	if (!s || --s->refs > 0)
		return;
	for (size_t i = 0; i < s->n; i++) {
		free(s->pages[i].file);
		free(s->pages[i].title);
	}
	free(s->pages);
	free(s->dir);
	free(s->error);
	free(s->intro);
	free(s);
}

bool
docs_site_has_page(const struct docs_site *s, const char *file)
{
	char *path;
	bool ok;

	if (!strcmp(file, "README.md") || site_has(s, file))
		return true;
	if (strchr(file, '/'))
		return false;
	path = path_join(s->dir, file);
	ok = path_exists(path);
	free(path);
	return ok;
}
