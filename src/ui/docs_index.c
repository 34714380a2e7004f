/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The docs browser's index of the pages.
 */
#include <stdlib.h>

#include "ui/docs_int.h"

/* ---- the index ---- */

struct docs_index {
	struct docs_site *site;
	struct listpos lp;
	int body_y, list_y, rows;
	struct prompt prompt;
	struct box box;
};

static const char *const index_help[] = {
	"Up/Down j/k   move",		"Enter         open the page",
	"1-9           open that page", "s  /          search every page",
	"q  Esc        back",		NULL,
};

static void
index_draw(struct ui *ui, struct view *v)
{
	struct docs_index *ix = v->priv;
	struct docs_site *s = ix->site;
	static const struct keybar_item keys[] = {
		{ "Enter", "open", K_ENTER },
		{ "s", "search all pages", 's' },
		{ "?", "keys", '?' },
		{ "Esc", "back", K_ESC },
	};
	int body_h, y0, y, tw = 0;

	y0 = ui_frame(ui, "fswb \xc2\xb7 docs", "getting started", &body_h);
	ix->body_y = y = y0;
	if (s->error) {
		struct strvec lines = STRVEC_INIT;

		text_wrap(s->error, ui->cols - 4, false, &lines);
		for (size_t i = 0; i < lines.n; i++)
			ui_put(ui, y + 1 + (int)i, 2, ui->cols - 4, R_FAIL, lines.v[i]);
		strvec_clear(&lines);
		ui_keybar(ui, keys + 3, 1);
		return;
	}
	if (s->intro) {
		struct strvec lines = STRVEC_INIT;

		text_wrap(s->intro, docs_text_cols(ui), false, &lines);
		for (size_t i = 0; i < lines.n && y < y0 + body_h / 3; i++)
			ui_put(ui, ++y, 2, ui->cols - 4, R_NORMAL, lines.v[i]);
		strvec_clear(&lines);
		y += 2;
	}
	ix->list_y = y;
	ix->rows = y0 + body_h - y > 0 ? y0 + body_h - y : 1;
	listpos_fix(&ix->lp, s->n, (size_t)ix->rows);
	for (size_t i = 0; i < s->n; i++) {
		int w = text_width(s->pages[i].title, ui->ascii);

		if (w > tw)
			tw = w;
	}
	if (tw > ui->cols - 30)
		tw = ui->cols - 30;
	for (int r = 0; r < ix->rows; r++) {
		size_t i = ix->lp.top + (size_t)r;
		bool sel = i == ix->lp.sel;

		if (i >= s->n)
			break;
		ui_put(ui, y + r, 2, 2, R_BOLD, sel ? ui->g.sel : " ");
		ui_putf(ui, y + r, 4, 3, R_DIM, "%zu", i + 1);
		ui_put(ui, y + r, 8, tw, sel ? R_SEL : R_BOLD, s->pages[i].title);
		ui_put(ui, y + r, 8 + tw + 3, ui->cols - 12 - tw, R_DIM, s->pages[i].file);
	}
	if (ix->box.shown)
		docs_draw_box(ui, ix->box.title, &ix->box.lines);
	if (ix->prompt.on)
		docs_prompt_draw(ui, &ix->prompt);
	ui_keybar(ui, keys, ARRAY_SIZE(keys));
}

static enum reaction
index_key(struct ui *ui, struct view *v, int key)
{
	struct docs_index *ix = v->priv;
	struct docs_site *s = ix->site;
	enum list_move mv;

	if (ix->prompt.on) {
		if (docs_prompt_key(&ix->prompt, key) > 0 && ix->prompt.le.text.len)
			docs_results_open(ui, s, ix->prompt.le.text.buf);
		return REACT_REDRAW;
	}
	if (ix->box.shown) {
		docs_box_clear(&ix->box);
		return REACT_REDRAW;
	}
	if (s->error)
		return REACT_PASS;
	if (ui_list_key(key, &mv)) {
		listpos_move(&ix->lp, mv, s->n, (size_t)ix->rows);
		return REACT_REDRAW;
	}
	if (key >= '1' && key <= '9' && (size_t)(key - '1') < s->n) {
		ix->lp.sel = (size_t)(key - '1');
		key = K_ENTER;
	}
	switch (key) {
	case K_ENTER:
	case K_RIGHT:
		if (ix->lp.sel < s->n)
			docs_page_open(ui, s, s->pages[ix->lp.sel].file, NULL, NULL, SIZE_MAX);
		return REACT_REDRAW;
	case 's':
	case '/':
		docs_prompt_start(&ix->prompt, true);
		return REACT_REDRAW;
	case '?':
	case K_F1:
		docs_box_keys(&ix->box, index_help);
		return REACT_REDRAW;
	default:
		return REACT_PASS;
	}
}

static enum reaction
index_click(struct ui *ui, struct view *v, int y, int x, bool dbl)
{
	struct docs_index *ix = v->priv;
	size_t row;

	if (ix->box.shown) {
		docs_box_clear(&ix->box);
		return REACT_REDRAW;
	}
	if (ix->site->error || y < ix->list_y ||
	    !listpos_hit(&ix->lp, ix->site->n, (size_t)(y - ix->list_y), &row))
		return REACT_NONE;
	ix->lp.sel = row;
	docs_page_open(ui, ix->site, ix->site->pages[row].file, NULL, NULL, SIZE_MAX);
	return REACT_REDRAW;
}

static void
index_free(struct view *v)
{
	struct docs_index *ix = v->priv;

	docs_site_unref(ix->site);
	lineedit_release(&ix->prompt.le);
	docs_box_clear(&ix->box);
	free(ix);
}

static const struct view_ops index_ops = {
	.name = "docs-index",
	.draw = index_draw,
	.key = index_key,
	.click = index_click,
	.free = index_free,
	.docs = NULL,
};

void
docs_index_open(struct ui *ui, struct docs_site *site)
{
	struct docs_index *ix = xcalloc(1, sizeof(*ix));

	ix->site = docs_site_ref(site);
	lineedit_init(&ix->prompt.le, "");
	strvec_init(&ix->box.lines);
	ui_push(ui, &index_ops, ix);
}
