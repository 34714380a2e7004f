/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The docs browser's drawing, its box, links out and its prompt.
 */
#include <stdlib.h>
#include <string.h>

#include "core/spawn.h"
#include "ui/docs_int.h"

/* ---- small helpers ---- */

/* Columns of the n bytes at s. */
int
docs_cols(const char *s, size_t n, bool ascii)
{
	char *tmp = xstrndup(s, n);
	int w = text_width(tmp, ascii);

	free(tmp);
	return w;
}

/* ---- drawing helpers ---- */

int
docs_text_cols(const struct ui *ui)
{
	int w = ui->cols - 4;

	if (w > DOCS_TEXT_MAX)
		w = DOCS_TEXT_MAX;
	return w < 10 ? 10 : w;
}

attr_t
docs_emph_attr(void)
{
	static int italic = -1;

	if (italic < 0) {
		char *cap = tigetstr("sitm");

		italic = cap && cap != (char *)-1;
	}
	return italic ? A_ITALIC : A_UNDERLINE;
}

attr_t
docs_style_attr(struct ui *ui, unsigned st, int level)
{
	enum role role = R_NORMAL;
	attr_t a;

	if (st & MDS_PRE)
		role = R_CODE;
	else if (st & MDS_CODE)
		role = ui->color ? R_CODE : R_BOLD;
	else if (st & MDS_LINK)
		role = R_LINK;
	else if (st & MDS_HEAD)
		role = R_HEAD;
	else if (st & (MDS_MARK | MDS_DIM))
		role = R_DIM;
	a = ui_attr(ui, role);
	if (st & (MDS_STRONG | MDS_TH))
		a |= A_BOLD;
	if (st & MDS_EMPH)
		a |= docs_emph_attr();
	if (st & MDS_DEL)
		a |= A_DIM;
	if ((st & MDS_HEAD) && !(st & MDS_RULE) && level >= 3)
		a |= A_UNDERLINE;
	return a;
}

/* Draw bytes s[0..n) clipped: skip columns in, at most width columns. */
int
docs_put_clip(struct ui *ui, int y, int x, int width, int skip, attr_t a, const char *s, size_t n)
{
	struct strbuf sb = STRBUF_INIT;
	char *tmp = xstrndup(s, n);
	int used;

	used = text_slice(tmp, skip, width, ui->ascii, &sb);
	attrset(a);
	mvaddstr(y, x, sb.buf);
	attrset(A_NORMAL);
	strbuf_release(&sb);
	free(tmp);
	return used;
}

/* The byte ranges of line matching needle (ASCII case-insensitive); how many. */
size_t
docs_find_all(const char *line, const char *needle, size_t *from, size_t *to, size_t max)
{
	size_t n = strlen(needle), k = 0;

	if (!n)
		return 0;
	for (const char *p = line; *p && k < max; p++) {
		if (!strncasecmp(p, needle, n)) {
			from[k] = (size_t)(p - line);
			to[k++] = (size_t)(p - line) + n;
			p += n - 1;
		}
	}
	return k;
}

/*
 * Draw a line of a page at y, x in width columns: its spans in their
 * styles, the link occurrence sel reversed, matches of find reversed.
 */
void
docs_draw_md_line(struct ui *ui, int y, int x, int width, int skip, const struct md_line *l,
		  long sel, const char *find)
{
	size_t mf[32], mt[32], nm = find ? docs_find_all(l->text, find, mf, mt, 32) : 0;
	int col = 0, drawn = 0, total;

	for (size_t s = 0; s < l->nspans && drawn < width; s++) {
		const struct md_span *sp = &l->spans[s];
		size_t a = sp->off, end = sp->off + sp->len;

		while (a < end && drawn < width) {
			size_t b = end;
			bool hit = false;
			attr_t at;
			int w;

			/* cut at the matches' edges */
			for (size_t m = 0; m < nm; m++) {
				if (mf[m] <= a && a < mt[m]) {
					hit = true;
					if (mt[m] < b)
						b = mt[m];
				} else if (mf[m] > a && mf[m] < b) {
					b = mf[m];
				}
			}
			at = docs_style_attr(ui, sp->style, l->level);
			if (hit || (sel >= 0 && sp->ref == sel))
				at |= A_REVERSE;
			w = docs_cols(l->text + a, b - a, ui->ascii);
			if (col + w > skip) {
				int sk = col < skip ? skip - col : 0;

				drawn += docs_put_clip(ui, y, x + drawn, width - drawn, sk, at,
						       l->text + a, b - a);
			}
			col += w;
			a = b;
		}
	}
	total = docs_cols(l->text, strlen(l->text), ui->ascii);
	if (total - skip > width && width > 1) {
		/* cut on the right: say so */
		attrset(ui_attr(ui, R_DIM));
		mvaddstr(y, x + width - 1, ui->ascii ? ">" : "\xe2\x80\xba");
		attrset(A_NORMAL);
	}
}

/* A box over the lower body with lines of text (a URL to copy, the keys). */
void
docs_draw_box(struct ui *ui, const char *title, const struct strvec *lines)
{
	int w = ui->cols - 4, h = (int)lines->n + 4, y, x = 2;

	if (h > ui->rows - 4)
		h = ui->rows - 4;
	y = ui->rows - 2 - h;
	for (int i = 0; i < h; i++)
		ui_fill(ui, y + i, x, w, R_NORMAL);
	ui_hline(ui, y, x, w);
	ui_hline(ui, y + h - 1, x, w);
	ui_put(ui, y + 1, x + 2, w - 4, R_BOLD, title);
	for (int i = 0; i + 2 < h - 1 && (size_t)i < lines->n; i++)
		ui_put(ui, y + 2 + i, x + 2, w - 4, R_NORMAL, lines->v[i]);
}

/* ---- a box to show: a URL to copy, or the keys ---- */

void
docs_box_clear(struct box *b)
{
	free(b->title);
	b->title = NULL;
	strvec_clear(&b->lines);
	b->shown = false;
}

void
docs_box_url(struct ui *ui, struct box *b, const char *why, const char *url)
{
	int w = ui->cols - 8;
	struct strbuf sb = STRBUF_INIT;

	docs_box_clear(b);
	b->title = xstrdup(why);
	/* the URL whole, cut into lines only where the screen ends */
	for (const char *p = url; *p;) {
		size_t len;
		int cw;

		utf8_decode(p, strlen(p), &len);
		cw = docs_cols(p, len, ui->ascii);
		if (text_width(sb.buf, ui->ascii) + cw > (w < 10 ? 10 : w)) {
			strvec_push(&b->lines, sb.buf);
			strbuf_reset(&sb);
		}
		strbuf_add(&sb, p, len);
		p += len;
	}
	strvec_push(&b->lines, sb.buf);
	strvec_push(&b->lines, "");
	strvec_push(&b->lines, "(any key closes this)");
	strbuf_release(&sb);
	b->shown = true;
}

void
docs_box_keys(struct box *b, const char *const *help)
{
	docs_box_clear(b);
	b->title = xstrdup("Keys");
	for (size_t i = 0; help[i]; i++)
		strvec_push(&b->lines, help[i]);
	b->shown = true;
}

/* ---- opening links ---- */

struct opener {
	struct ui *ui;
	char *url;
};

static void
opener_exit(struct child *child, void *data)
{
	struct opener *op = data;
	char buf[128];

	if (!child->exit.exited || child->exit.code != 0)
		ui_msg(op->ui, true, "xdg-open could not open '%s': it %s", op->url,
		       child_exit_str(&child->exit, buf, sizeof(buf)));
	free(op->url);
	free(op);
	child_free(child);
}

static bool
env_set(const char *name)
{
	const char *v = getenv(name);

	return v && *v;
}

/* Open url in the browser, or show it in the box to copy. */
void
docs_open_external(struct ui *ui, struct box *b, const char *url)
{
	struct spawn_opts o = SPAWN_OPTS_INIT;
	const char *argv[] = { "xdg-open", url, NULL };
	struct opener *op;
	struct child *child;

	if (!env_set("DISPLAY") && !env_set("WAYLAND_DISPLAY")) {
		docs_box_url(ui, b, "No display to open a browser on: copy the link", url);
		return;
	}
	op = xcalloc(1, sizeof(*op));
	op->ui = ui;
	op->url = xstrdup(url);
	o.argv = argv;
	o.new_pgrp = true;
	o.on_exit = opener_exit;
	o.data = op;
	if (spawn_start(ui->loop, &o, &child) != OK) {
		error_clear();
		free(op->url);
		free(op);
		docs_box_url(ui, b, "xdg-open is not installed: copy the link", url);
		return;
	}
	ui_msg(ui, false, "opening %s", url);
}

/* ---- a search prompt ---- */

/* Feed a key to an open prompt: 1 when Enter ended it, 0 when it goes on, -1 cancelled. */
int
docs_prompt_key(struct prompt *p, int key)
{
	if (key == K_ENTER) {
		p->on = false;
		return 1;
	}
	if (key == K_ESC) {
		p->on = false;
		return -1;
	}
	prompt_edit_key(&p->le, key);
	return 0;
}

void
docs_prompt_start(struct prompt *p, bool all)
{
	lineedit_release(&p->le);
	lineedit_init(&p->le, "");
	p->on = true;
	p->all = all;
}

void
docs_prompt_draw(struct ui *ui, const struct prompt *p)
{
	const char *lead = p->all ? "Search all pages: " : "Find: ";
	int lw = text_width(lead, ui->ascii);

	ui_fill(ui, ui->rows - 2, 0, ui->cols, R_NORMAL);
	ui_put(ui, ui->rows - 2, 1, ui->cols - 2, R_BOLD, lead);
	ui_putf(ui, ui->rows - 2, 1 + lw, ui->cols - 2 - lw, R_NORMAL, "%s_", p->le.text.buf);
}
