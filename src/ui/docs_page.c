/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The docs browser's page view and links view.
 */
#include <stdlib.h>
#include <string.h>

#include "ui/docs_int.h"

/*
 * Follow a link of page from (a file of the site): another page, a heading
 * of the same page (*same_anchor gets it, the caller jumps), or the world.
 */
static void
follow(struct ui *ui, struct docs_site *site, const char *from, struct box *b, const char *url,
       char **same_anchor)
{
	char *anchor = NULL, *page;

	if (md_url_is_external(url)) {
		docs_open_external(ui, b, url);
		return;
	}
	if (url[0] == '#') {
		if (same_anchor)
			*same_anchor = xstrdup(url + 1);
		return;
	}
	page = docs_site_link(site->dir, url, &anchor);
	if (page && from && !strcmp(page, from) && same_anchor) {
		*same_anchor = anchor;
		anchor = NULL;
	} else if (page) {
		docs_page_open(ui, site, page, anchor, NULL, SIZE_MAX);
	} else {
		ui_msg(ui, true, "'%s' is not a docs page: it is a file of fswb's source tree",
		       url);
	}
	free(anchor);
	free(page);
}

/* ---- the page view ---- */

struct page {
	struct docs_site *site;
	char *file;
	char *text;
	size_t len;
	struct md_doc doc;
	int width; /* rendered at; 0 before the first draw */
	bool ascii;
	size_t top;
	int hskip, body_h, body_y;
	long sel; /* the link occurrence picked with Tab, or -1 */
	char *find;
	long found; /* the line found last, or -1 */
	struct prompt prompt;
	struct box box;
	char *anchor;  /* jump there at the first draw */
	size_t at_src; /* or to the line of this source offset (SIZE_MAX: none) */
};

static size_t
page_max_top(const struct page *p)
{
	size_t h = p->body_h > 0 ? (size_t)p->body_h : 1;

	return p->doc.n > h ? p->doc.n - h : 0;
}

static void
page_show(struct page *p, size_t line)
{
	size_t h = p->body_h > 0 ? (size_t)p->body_h : 1;

	if (line < p->top || line >= p->top + h)
		p->top = line > h / 3 ? line - h / 3 : 0;
	if (p->top > page_max_top(p))
		p->top = page_max_top(p);
}

static void
page_find(struct ui *ui, struct page *p, int dir, bool quiet)
{
	long n = (long)p->doc.n, start;

	if (!p->find || !*p->find || !n)
		return;
	start = p->found >= 0 ? p->found : (dir > 0 ? (long)p->top - 1 : (long)p->top);
	for (long k = 1; k <= n; k++) {
		long i = ((start + dir * k) % n + n) % n;

		if (text_contains_ci(p->doc.lines[i].text, p->find)) {
			p->found = i;
			page_show(p, (size_t)i);
			return;
		}
	}
	p->found = -1;
	if (!quiet)
		ui_msg(ui, true, "'%s' is not on this page", p->find);
}

static void
page_jump_anchor(struct ui *ui, struct page *p, const char *anchor)
{
	long line = md_find_anchor(&p->doc, anchor);

	if (line < 0) {
		ui_msg(ui, true, "there is no heading '#%s' on this page", anchor);
		return;
	}
	p->top = (size_t)line;
	if (p->top > page_max_top(p))
		p->top = page_max_top(p);
}

/* (Re)render at the width the screen has now, keeping the place. */
static void
page_layout(struct ui *ui, struct page *p)
{
	struct md_opts o = { .width = docs_text_cols(ui), .ascii = ui->ascii, .link_list = true };
	size_t top_src = p->doc.n ? p->doc.lines[p->top].src : 0;
	size_t found_src = p->found >= 0 ? p->doc.lines[p->found].src : SIZE_MAX;
	bool first = p->width == 0;

	if (md_render(p->text, p->len, &o, &p->doc) != OK) {
		ui_msg(ui, true, "%s: %s", p->file, error_msg());
		error_clear();
	}
	p->width = o.width;
	p->ascii = ui->ascii;
	if (!p->doc.n)
		return;
	if (first) {
		p->top = 0;
		if (p->anchor)
			page_jump_anchor(ui, p, p->anchor);
		if (p->at_src != SIZE_MAX) {
			p->top = md_line_at_src(&p->doc, p->at_src);
			if (p->find) {
				p->found = -1;
				p->top = p->top ? p->top - 1 : 0;
				page_find(ui, p, 1, false);
			}
		}
		return;
	}
	p->top = md_line_at_src(&p->doc, top_src);
	if (found_src != SIZE_MAX) {
		size_t i = md_line_at_src(&p->doc, found_src);

		p->found = -1;
		for (; i < p->doc.n && p->found < 0; i++)
			if (p->find && text_contains_ci(p->doc.lines[i].text, p->find))
				p->found = (long)i;
	}
}

static const char *const page_help[] = {
	"Up/Down j/k, PgUp/PgDn, Space, g/G   scroll",
	"Tab / Shift-Tab   the next / previous link",
	"Enter             follow the link picked (another page opens on top)",
	"l                 the links of this page, with their addresses",
	"/  n  N           find on this page, the next, the previous",
	"s                 search every page",
	">  <              scroll code blocks and tables sideways",
	"i                 the list of pages",
	"q  Esc            back",
	NULL,
};

static void
page_draw(struct ui *ui, struct view *v)
{
	struct page *p = v->priv;
	static const struct keybar_item keys[] = {
		{ "Tab", "link", K_TAB }, { "Enter", "follow", K_ENTER }, { "l", "links", 'l' },
		{ "/", "find", '/' },	  { "s", "all pages", 's' },	  { "i", "index", 'i' },
		{ "Esc", "back", K_ESC },
	};
	char right[96];
	int body_h, y0;
	const char *title;
	size_t pct;

	if (p->width != docs_text_cols(ui) || p->ascii != ui->ascii)
		page_layout(ui, p);
	title = p->doc.title ? p->doc.title : p->file;
	pct = p->doc.n > (size_t)(ui->rows - 4) ? (p->top * 100 + page_max_top(p) / 2) /
							  (page_max_top(p) ? page_max_top(p) : 1)
						: 100;
	snprintf(right, sizeof(right), "%s  %zu%%", p->file, pct > 100 ? 100 : pct);
	{
		char *left = xasprintf("fswb \xc2\xb7 docs \xc2\xb7 %s", title);

		y0 = ui_frame(ui, left, right, &body_h);
		free(left);
	}
	p->body_h = body_h;
	p->body_y = y0;
	if (p->top > page_max_top(p))
		p->top = page_max_top(p);
	for (int row = 0; row < body_h; row++) {
		size_t i = p->top + (size_t)row;
		const struct md_line *l;
		int skip;

		if (i >= p->doc.n)
			break;
		l = &p->doc.lines[i];
		skip = l->kind == MDL_CODE || l->kind == MDL_TABLE ? p->hskip : 0;
		docs_draw_md_line(ui, y0 + row, 2, ui->cols - 3, skip, l, p->sel, p->find);
	}
	if (!p->doc.n)
		ui_put(ui, y0 + 1, 2, ui->cols - 4, R_DIM, "(this page is empty)");
	if (p->box.shown)
		docs_draw_box(ui, p->box.title, &p->box.lines);
	if (p->prompt.on)
		docs_prompt_draw(ui, &p->prompt);
	ui_keybar(ui, keys, ARRAY_SIZE(keys));
}

/* The next link occurrence from the current one (or from the top), dir +1/-1. */
static void
page_tab(struct ui *ui, struct page *p, int dir)
{
	const struct md_doc *d = &p->doc;
	size_t h = p->body_h > 0 ? (size_t)p->body_h : 1;
	long i, n = (long)d->nrefs;
	bool visible = p->sel >= 0 && p->sel < n && d->refs[p->sel].last_line >= p->top &&
		       d->refs[p->sel].first_line < p->top + h;

	if (!n) {
		ui_msg(ui, true, "this page has no links");
		return;
	}
	if (visible) {
		i = p->sel + dir;
	} else if (dir > 0) {
		for (i = 0; i < n && d->refs[i].first_line < p->top; i++)
			;
	} else {
		for (i = n - 1; i >= 0 && d->refs[i].first_line >= p->top + h; i--)
			;
	}
	/* skip occurrences that drew nothing; wrap around */
	for (long k = 0; k < n; k++, i += dir) {
		i = (i % n + n) % n;
		if (d->refs[i].first_line != SIZE_MAX)
			break;
	}
	p->sel = i;
	if (d->refs[i].first_line < p->top || d->refs[i].last_line >= p->top + h)
		page_show(p, d->refs[i].first_line);
}

static void links_open(struct ui *ui, struct page *p);

static void
page_follow(struct ui *ui, struct page *p, int link)
{
	char *anchor = NULL, *url = xstrdup(p->doc.links[link].url);

	follow(ui, p->site, p->file, &p->box, url, &anchor);
	if (anchor)
		page_jump_anchor(ui, p, anchor);
	free(anchor);
	free(url);
}

static enum reaction
page_key(struct ui *ui, struct view *v, int key)
{
	struct page *p = v->priv;
	size_t page = p->body_h > 1 ? (size_t)p->body_h - 1 : 1, max = page_max_top(p);

	if (p->prompt.on) {
		int r = docs_prompt_key(&p->prompt, key);

		if (r > 0 && p->prompt.le.text.len) {
			if (p->prompt.all) {
				ui_want_docs_search(ui, p->prompt.le.text.buf);
			} else {
				free(p->find);
				p->find = xstrdup(p->prompt.le.text.buf);
				p->found = -1;
				page_find(ui, p, 1, false);
			}
		}
		return REACT_REDRAW;
	}
	if (p->box.shown) {
		docs_box_clear(&p->box);
		return REACT_REDRAW;
	}
	switch (key) {
	case K_UP:
	case 'k':
		if (p->top)
			p->top--;
		return REACT_REDRAW;
	case K_DOWN:
	case 'j':
		if (p->top < max)
			p->top++;
		return REACT_REDRAW;
	case K_PGUP:
	case 'b':
	case K_CTRL('b'):
		p->top = p->top > page ? p->top - page : 0;
		return REACT_REDRAW;
	case K_PGDN:
	case ' ':
	case K_CTRL('f'):
		p->top = p->top + page < max ? p->top + page : max;
		return REACT_REDRAW;
	case K_HOME:
	case 'g':
		p->top = 0;
		return REACT_REDRAW;
	case K_END:
	case 'G':
		p->top = max;
		return REACT_REDRAW;
	case K_RIGHT:
	case '>':
		p->hskip += 8;
		return REACT_REDRAW;
	case K_LEFT:
	case '<':
		if (!p->hskip)
			return key == '<' ? REACT_NONE : REACT_PASS;
		p->hskip = p->hskip > 8 ? p->hskip - 8 : 0;
		return REACT_REDRAW;
	case K_TAB:
		page_tab(ui, p, 1);
		return REACT_REDRAW;
	case K_BTAB:
		page_tab(ui, p, -1);
		return REACT_REDRAW;
	case K_ENTER:
		if (p->sel >= 0 && (size_t)p->sel < p->doc.nrefs)
			page_follow(ui, p, p->doc.refs[p->sel].link);
		else
			ui_msg(ui, false, "Tab picks a link, Enter follows it");
		return REACT_REDRAW;
	case 'l':
		links_open(ui, p);
		return REACT_REDRAW;
	case '/':
		docs_prompt_start(&p->prompt, false);
		return REACT_REDRAW;
	case 's':
		docs_prompt_start(&p->prompt, true);
		return REACT_REDRAW;
	case 'n':
		page_find(ui, p, 1, false);
		return REACT_REDRAW;
	case 'N':
		page_find(ui, p, -1, false);
		return REACT_REDRAW;
	case 'i':
		ui_want_docs(ui, NULL);
		return REACT_REDRAW;
	case '?':
	case K_F1:
		docs_box_keys(&p->box, page_help);
		return REACT_REDRAW;
	default:
		return REACT_PASS;
	}
}

static enum reaction
page_click(struct ui *ui, struct view *v, int y, int x, bool dbl)
{
	struct page *p = v->priv;
	size_t i = p->top + (size_t)(y - p->body_y);
	const struct md_line *l;
	int col, at;

	if (p->box.shown) {
		docs_box_clear(&p->box);
		return REACT_REDRAW;
	}
	if (y < p->body_y || y >= p->body_y + p->body_h || i >= p->doc.n || x < 2)
		return REACT_NONE;
	l = &p->doc.lines[i];
	at = x - 2 + (l->kind == MDL_CODE || l->kind == MDL_TABLE ? p->hskip : 0);
	col = 0;
	for (size_t s = 0; s < l->nspans; s++) {
		int w = docs_cols(l->text + l->spans[s].off, l->spans[s].len, ui->ascii);

		if (at >= col && at < col + w && l->spans[s].link >= 0) {
			p->sel = l->spans[s].ref;
			page_follow(ui, p, l->spans[s].link);
			return REACT_REDRAW;
		}
		col += w;
	}
	return REACT_NONE;
}

static void
page_free(struct view *v)
{
	struct page *p = v->priv;

	docs_site_unref(p->site);
	md_doc_release(&p->doc);
	free(p->file);
	free(p->text);
	free(p->find);
	free(p->anchor);
	lineedit_release(&p->prompt.le);
	docs_box_clear(&p->box);
	free(p);
}

static const struct view_ops page_ops = {
	.name = "docs-page",
	.draw = page_draw,
	.key = page_key,
	.click = page_click,
	.free = page_free,
	.docs = NULL,
};

void
docs_page_open(struct ui *ui, struct docs_site *site, const char *file, const char *anchor,
	       const char *find, size_t at_src)
{
	struct page *p;
	size_t len;
	char *text = docs_site_read(site->dir, file, &len);

	if (!text) {
		ui_msg(ui, true, "cannot read the docs page '%s' in '%s'", file, site->dir);
		return;
	}
	p = xcalloc(1, sizeof(*p));
	p->site = docs_site_ref(site);
	p->file = xstrdup(file);
	p->text = text;
	p->len = len;
	md_doc_init(&p->doc);
	p->sel = -1;
	p->found = -1;
	p->find = find ? xstrdup(find) : NULL;
	p->anchor = anchor ? xstrdup(anchor) : NULL;
	p->at_src = at_src;
	lineedit_init(&p->prompt.le, "");
	strvec_init(&p->box.lines);
	ui_push(ui, &page_ops, p);
}

/* ---- the links of a page ---- */

struct links {
	struct docs_site *site;
	char *file, *title;
	struct strvec urls, texts;
	struct listpos lp;
	int body_y, rows;
	struct box box;
};

static void
links_draw(struct ui *ui, struct view *v)
{
	struct links *k = v->priv;
	static const struct keybar_item keys[] = {
		{ "Enter", "follow", K_ENTER },
		{ "Esc", "back", K_ESC },
	};
	int body_h, y0;
	char *left = xasprintf("fswb \xc2\xb7 docs \xc2\xb7 links of %s", k->title);

	y0 = ui_frame(ui, left, k->file, &body_h);
	free(left);
	k->body_y = y0;
	k->rows = body_h / 2 > 0 ? body_h / 2 : 1;
	listpos_fix(&k->lp, k->urls.n, (size_t)k->rows);
	for (int r = 0; r < k->rows; r++) {
		size_t i = k->lp.top + (size_t)r;
		bool sel = i == k->lp.sel;
		char num[32];
		int w;

		if (i >= k->urls.n)
			break;
		snprintf(num, sizeof(num), "[%zu]", i + 1);
		ui_put(ui, y0 + 2 * r, 1, 2, R_BOLD, sel ? ui->g.sel : " ");
		w = ui_put(ui, y0 + 2 * r, 3, 6, R_DIM, num);
		ui_put(ui, y0 + 2 * r, 3 + w + 1, ui->cols - 5 - w, sel ? R_SEL : R_BOLD,
		       k->texts.v[i]);
		ui_put(ui, y0 + 2 * r + 1, 8, ui->cols - 9, R_LINK, k->urls.v[i]);
	}
	if (!k->urls.n)
		ui_put(ui, y0 + 1, 2, ui->cols - 4, R_DIM, "This page has no links.");
	if (k->box.shown)
		docs_draw_box(ui, k->box.title, &k->box.lines);
	ui_keybar(ui, keys, ARRAY_SIZE(keys));
}

static void
links_follow(struct ui *ui, struct links *k)
{
	char *url;

	if (k->lp.sel >= k->urls.n)
		return;
	url = xstrdup(k->urls.v[k->lp.sel]);
	if (!md_url_is_external(url) && url[0] == '#') {
		/* a heading of the page below: back to it */
		struct docs_site *site = docs_site_ref(k->site);
		char *file = xstrdup(k->file);

		ui_pop(ui);
		docs_page_open(ui, site, file, url + 1, NULL, SIZE_MAX);
		docs_site_unref(site);
		free(file);
	} else {
		follow(ui, k->site, NULL, &k->box, url, NULL);
	}
	free(url);
}

static enum reaction
links_key(struct ui *ui, struct view *v, int key)
{
	struct links *k = v->priv;
	enum list_move mv;

	if (k->box.shown) {
		docs_box_clear(&k->box);
		return REACT_REDRAW;
	}
	if (ui_list_key(key, &mv) || key == K_TAB || key == K_BTAB) {
		if (key == K_TAB)
			mv = LM_DOWN;
		else if (key == K_BTAB)
			mv = LM_UP;
		listpos_move(&k->lp, mv, k->urls.n, (size_t)k->rows);
		return REACT_REDRAW;
	}
	if (key == K_ENTER) {
		links_follow(ui, k);
		return REACT_REDRAW;
	}
	if (key == 'l')
		return REACT_BACK;
	return REACT_PASS;
}

static enum reaction
links_click(struct ui *ui, struct view *v, int y, int x, bool dbl)
{
	struct links *k = v->priv;
	size_t row;

	if (k->box.shown) {
		docs_box_clear(&k->box);
		return REACT_REDRAW;
	}
	if (y < k->body_y || !listpos_hit(&k->lp, k->urls.n, (size_t)(y - k->body_y) / 2, &row))
		return REACT_NONE;
	k->lp.sel = row;
	links_follow(ui, k);
	return REACT_REDRAW;
}

static void
links_free(struct view *v)
{
	struct links *k = v->priv;

	docs_site_unref(k->site);
	free(k->file);
	free(k->title);
	strvec_clear(&k->urls);
	strvec_clear(&k->texts);
	docs_box_clear(&k->box);
	free(k);
}

static const struct view_ops links_ops = {
	.name = "docs-links",
	.draw = links_draw,
	.key = links_key,
	.click = links_click,
	.free = links_free,
	.docs = NULL,
};

static void
links_open(struct ui *ui, struct page *p)
{
	struct links *k = xcalloc(1, sizeof(*k));

	k->site = docs_site_ref(p->site);
	k->file = xstrdup(p->file);
	k->title = xstrdup(p->doc.title ? p->doc.title : p->file);
	strvec_init(&k->urls);
	strvec_init(&k->texts);
	strvec_init(&k->box.lines);
	for (size_t i = 0; i < p->doc.nlinks; i++) {
		const struct md_link *l = &p->doc.links[i];

		strvec_push(&k->urls, l->url);
		strvec_push(&k->texts, l->text && *l->text ? l->text : l->url);
	}
	/* start at the link picked on the page */
	if (p->sel >= 0 && (size_t)p->sel < p->doc.nrefs)
		k->lp.sel = (size_t)p->doc.refs[p->sel].link;
	ui_push(ui, &links_ops, k);
}
