/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Inside the docs browser (see docs.c): what its files share.
 */
#ifndef FSWB_UI_DOCS_INT_H
#define FSWB_UI_DOCS_INT_H

#include "view/docsite.h"
#include "view/markdown.h"
#include "ui/ui_int.h"

#define DOCS_TEXT_MAX 100 /* columns of text at most: long lines are hard to read */

/* ---- docs_draw.c ---- */

int docs_cols(const char *s, size_t n, bool ascii);
int docs_text_cols(const struct ui *ui);
attr_t docs_emph_attr(void);
attr_t docs_style_attr(struct ui *ui, unsigned st, int level);
int docs_put_clip(struct ui *ui, int y, int x, int width, int skip, attr_t a, const char *s,
		  size_t n);
size_t docs_find_all(const char *line, const char *needle, size_t *from, size_t *to, size_t max);
void docs_draw_md_line(struct ui *ui, int y, int x, int width, int skip, const struct md_line *l,
		       long sel, const char *find);
void docs_draw_box(struct ui *ui, const char *title, const struct strvec *lines);

struct box {
	char *title;
	struct strvec lines;
	bool shown;
};

void docs_box_clear(struct box *b);
void docs_box_url(struct ui *ui, struct box *b, const char *why, const char *url);
void docs_box_keys(struct box *b, const char *const *help);
void docs_open_external(struct ui *ui, struct box *b, const char *url);

struct prompt {
	bool on;
	bool all; /* search every page */
	struct lineedit le;
};

int docs_prompt_key(struct prompt *p, int key);
void docs_prompt_start(struct prompt *p, bool all);
void docs_prompt_draw(struct ui *ui, const struct prompt *p);

/* ---- the views ---- */

void docs_page_open(struct ui *ui, struct docs_site *site, const char *file, const char *anchor,
		    const char *find, size_t at_src);
void docs_results_open(struct ui *ui, struct docs_site *site, const char *query);
void docs_index_open(struct ui *ui, struct docs_site *site);

#endif
