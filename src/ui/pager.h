/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The pager: a view of lines of text with styles, in one or more tabs,
 * scrollable, searchable ('/', n, N). The test detail, the doctor details
 * and the docs are pagers with their own keys on top.
 *
 *	struct pager *p = pager_new("fswb · generic/006");
 *	struct textdoc *d = pager_tab(p, "diff");
 *	textdoc_add(d, R_ADD, "+size 4096");
 *	pager_open(ui, p, &ops_extra, data);     pushes the view; the pager is its own
 */
#ifndef FSWB_UI_PAGER_H
#define FSWB_UI_PAGER_H

#include "ui/ui_int.h"

struct tline {
	char *text;
	enum role role;
};

struct textdoc {
	struct tline *v;
	size_t n, alloc;
};

void textdoc_add(struct textdoc *d, enum role role, const char *text);
void textdoc_addf(struct textdoc *d, enum role role, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Each line of text (split at newlines) as its own line, as a terminal shows it (text_overstrike). */
void textdoc_add_lines(struct textdoc *d, enum role role, const char *text);
/* Word-wrapped to width columns, each continuation indented like the first line. */
void textdoc_add_wrapped(struct textdoc *d, enum role role, const char *text, int width);
void textdoc_clear(struct textdoc *d);

#define PAGER_TABS 6

struct pager;

/* Extra behaviour of one kind of pager. All optional. */
struct pager_hooks {
	/* A key the pager does not know; REACT_PASS when this does not know it either. */
	enum reaction (*key)(struct ui *ui, struct pager *p, int key);
	/* Keys for the key bar, before the pager's own. */
	const struct keybar_item *keys;
	size_t nkeys;
	/* The width changed: rebuild width-dependent lines (docs re-wrap). */
	void (*relayout)(struct ui *ui, struct pager *p, int width);
	void (*free)(void *data);
	const char *docs;
};

struct pager {
	char *title, *right;
	char *tab_name[PAGER_TABS];
	struct textdoc tabs[PAGER_TABS];
	size_t ntabs, tab;
	size_t top[PAGER_TABS];
	int hskip;
	char *search; /* the last search, or NULL */
	long found;   /* the line found last, or -1 */
	bool prompting;
	struct lineedit prompt;
	char *footer; /* a line shown above the key bar, or NULL */
	const struct pager_hooks *hooks;
	void *data;
	int width, height; /* of the text area when last drawn */
};

struct pager *pager_new(const char *title);
/* Add a tab (up to PAGER_TABS); returns its lines. */
struct textdoc *pager_tab(struct pager *p, const char *name);
void pager_open(struct ui *ui, struct pager *p, const struct pager_hooks *hooks, void *data);
/* Scroll so that line is at the top. */
void pager_show_line(struct pager *p, size_t line);

#endif
