/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The docs browser's results of a search of every page.
 */
#include <stdlib.h>
#include <string.h>

#include "ui/docs_int.h"

#define DOCS_MATCHES_MAX 500

/* ---- search results across the pages ---- */

struct match {
	size_t page;
	size_t src;
	char *text;
};

struct results {
	struct docs_site *site;
	char *query;
	struct match *v;
	size_t n, alloc;
	size_t npages;
	bool capped;
	struct listpos lp;
	int body_y, rows;
};

static void
results_draw(struct ui *ui, struct view *v)
{
	struct results *rs = v->priv;
	static const struct keybar_item keys[] = {
		{ "Enter", "open", K_ENTER },
		{ "Esc", "back", K_ESC },
	};
	int body_h, y0, tw = 0;
	char *left = xasprintf("fswb \xc2\xb7 docs \xc2\xb7 search '%s'", rs->query);

	y0 = ui_frame(ui, left, NULL, &body_h);
	free(left);
	if (!rs->n) {
		ui_putf(ui, y0 + 1, 2, ui->cols - 4, R_BOLD, "No page mentions '%s'.", rs->query);
		ui_put(ui, y0 + 3, 2, ui->cols - 4, R_DIM,
		       "Esc goes back; s on a page or in the index searches again.");
		ui_keybar(ui, keys + 1, 1);
		return;
	}
	ui_putf(ui, y0, 2, ui->cols - 4, R_BOLD, "%s%zu %s in %zu %s",
		rs->capped ? "the first " : "", rs->n, rs->n == 1 ? "match" : "matches", rs->npages,
		rs->npages == 1 ? "page" : "pages");
	rs->body_y = y0 + 2;
	rs->rows = body_h - 2 > 0 ? body_h - 2 : 1;
	listpos_fix(&rs->lp, rs->n, (size_t)rs->rows);
	for (size_t i = 0; i < rs->n; i++) {
		int w = text_width(rs->site->pages[rs->v[i].page].title, ui->ascii);

		if (w > tw)
			tw = w;
	}
	if (tw > ui->cols / 3)
		tw = ui->cols / 3;
	for (int r = 0; r < rs->rows; r++) {
		size_t i = rs->lp.top + (size_t)r;
		bool sel = i == rs->lp.sel;
		size_t mf[16], mt[16], nm, at = 0;
		const char *t;
		int x;

		if (i >= rs->n)
			break;
		t = rs->v[i].text;
		ui_put(ui, rs->body_y + r, 1, 2, R_BOLD, sel ? ui->g.sel : " ");
		ui_put(ui, rs->body_y + r, 3, tw, sel ? R_SEL : R_DIM,
		       rs->site->pages[rs->v[i].page].title);
		x = 3 + tw + 2;
		/* the line, its matches in bold */
		nm = docs_find_all(t, rs->query, mf, mt, 16);
		for (size_t m = 0; m <= nm && x < ui->cols - 1; m++) {
			size_t end = m < nm ? mf[m] : strlen(t);

			if (end > at)
				x += docs_put_clip(ui, rs->body_y + r, x, ui->cols - 1 - x, 0,
						   ui_attr(ui, R_NORMAL), t + at, end - at);
			if (m < nm)
				x += docs_put_clip(ui, rs->body_y + r, x, ui->cols - 1 - x, 0,
						   ui_attr(ui, R_BOLD) | A_UNDERLINE, t + mf[m],
						   mt[m] - mf[m]);
			at = m < nm ? mt[m] : end;
		}
	}
	ui_keybar(ui, keys, ARRAY_SIZE(keys));
}

static void
results_go(struct ui *ui, struct results *rs)
{
	const struct match *m;

	if (rs->lp.sel >= rs->n)
		return;
	m = &rs->v[rs->lp.sel];
	docs_page_open(ui, rs->site, rs->site->pages[m->page].file, NULL, rs->query, m->src);
}

static enum reaction
results_key(struct ui *ui, struct view *v, int key)
{
	struct results *rs = v->priv;
	enum list_move mv;

	if (ui_list_key(key, &mv)) {
		listpos_move(&rs->lp, mv, rs->n, (size_t)rs->rows);
		return REACT_REDRAW;
	}
	if (key == K_ENTER) {
		results_go(ui, rs);
		return REACT_REDRAW;
	}
	return REACT_PASS;
}

static enum reaction
results_click(struct ui *ui, struct view *v, int y, int x, bool dbl)
{
	struct results *rs = v->priv;
	size_t row;

	if (y < rs->body_y || !listpos_hit(&rs->lp, rs->n, (size_t)(y - rs->body_y), &row))
		return REACT_NONE;
	rs->lp.sel = row;
	results_go(ui, rs);
	return REACT_REDRAW;
}

static void
results_free(struct view *v)
{
	struct results *rs = v->priv;

	for (size_t i = 0; i < rs->n; i++)
		free(rs->v[i].text);
	free(rs->v);
	docs_site_unref(rs->site);
	free(rs->query);
	free(rs);
}

static const struct view_ops results_ops = {
	.name = "docs-search",
	.draw = results_draw,
	.key = results_key,
	.click = results_click,
	.free = results_free,
	.docs = NULL,
};

void
docs_results_open(struct ui *ui, struct docs_site *site, const char *query)
{
	struct results *rs = xcalloc(1, sizeof(*rs));
	struct md_opts o = { .width = docs_text_cols(ui), .ascii = ui->ascii };

	rs->site = docs_site_ref(site);
	rs->query = xstrdup(query);
	for (size_t p = 0; p < site->n && !rs->capped; p++) {
		struct md_doc doc;
		size_t len, before = rs->n;
		char *text = docs_site_read(site->dir, site->pages[p].file, &len);

		if (!text)
			continue;
		md_doc_init(&doc);
		if (md_render(text, len, &o, &doc) != OK)
			error_clear();
		for (size_t i = 0; i < doc.n; i++) {
			const char *t = doc.lines[i].text;

			if (!text_contains_ci(t, query))
				continue;
			if (rs->n == DOCS_MATCHES_MAX) {
				rs->capped = true;
				break;
			}
			while (*t == ' ')
				t++;
			ALLOC_GROW(rs->v, rs->n + 1, rs->alloc);
			rs->v[rs->n++] = (struct match){ .page = p,
							 .src = doc.lines[i].src,
							 .text = xstrdup(t) };
		}
		if (rs->n > before)
			rs->npages++;
		md_doc_release(&doc);
		free(text);
	}
	ui_push(ui, &results_ops, rs);
}
