/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The docs as a site: the pages of docs/getting-started (under
 * fswb_datadir()) in reading order -- README.md's links first, then the
 * rest by name -- each with its first heading, and README.md's first
 * paragraph. Shared by the docs' views (reference counted).
 */
#ifndef FSWB_VIEW_DOCSITE_H
#define FSWB_VIEW_DOCSITE_H

#include <stdbool.h>
#include <stddef.h>

struct docs_page {
	char *file;  /* "first-run.md" */
	char *title; /* its first heading, or the file name */
};

struct docs_site {
	int refs;
	char *dir;
	char *error; /* why there are no docs, or NULL */
	struct docs_page *pages;
	size_t n, alloc;
	char *intro; /* README.md's first paragraph */
};

/* The site (never NULL: ->error says why there are no pages); one reference. */
struct docs_site *docs_site_load(void);
struct docs_site *docs_site_ref(struct docs_site *s);
void docs_site_unref(struct docs_site *s);
/* Whether file is a page of the site. */
bool docs_site_has_page(const struct docs_site *s, const char *file);
/* A page's text (NULL, the error cleared, when it cannot be read); *len its length. */
char *docs_site_read(const char *dir, const char *file, size_t *len);
/* A relative link to a page of the docs: its file name (and *anchor), else NULL. */
char *docs_site_link(const char *dir, const char *url, char **anchor);

#endif
