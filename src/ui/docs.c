/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The docs browser: the pages of docs/getting-started rendered by
 * markdown.c. Four views:
 *
 *	index	the pages in reading order (README.md's links first), each
 *		with its first heading; Enter opens, s searches every page
 *	page	one page, re-wrapped to the terminal's width; Tab steps
 *		through its links, Enter follows one (another page opens on
 *		top, q comes back), / and n find text, l lists the links
 *	links	the links of a page with their URLs; Enter follows one
 *	results	the lines of every page that contain a search
 *
 * A link out of the docs opens with xdg-open (through core/spawn) when a
 * display exists (DISPLAY or WAYLAND_DISPLAY); otherwise, or when xdg-open
 * is missing, its URL is shown whole in a box to copy.
 *
 * The pages are in DATADIR/docs/getting-started (fswb_datadir(): $FSWB_DATADIR,
 * the source tree, or PREFIX/share/fswb), read when a view opens.
 */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/paths.h"
#include "core/spawn.h"
#include "core/status.h"
#include "view/markdown.h"
#include "view/text.h"
#include "ui/ui_int.h"

#define DOCS_FILE_MAX	 (1u << 20)
#define DOCS_TEXT_MAX	 100 /* columns of text at most: long lines are hard to read */
#define DOCS_MATCHES_MAX 500

/* ---- small helpers ---- */

/* Columns of the n bytes at s. */
static int
width_cols(const char *s, size_t n, bool ascii)
{
	char *tmp = xstrndup(s, n);
	int w = text_width(tmp, ascii);

	free(tmp);
	return w;
}

/* ---- the pages ---- */

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

static char *
read_page(const char *dir, const char *file, size_t *len)
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

	if (site_has(s, file) || !(text = read_page(s->dir, file, &len)))
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

/* A relative link to a page of the docs: its file name (and *anchor), else NULL. */
static char *
page_of_link(const char *dir, const char *url, char **anchor)
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

static struct docs_site *
site_load(void)
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
	text = read_page(s->dir, "README.md", &len);
	if (text) {
		struct md_opts o = { .width = 1000, .ascii = false };
		struct md_doc doc;

		md_doc_init(&doc);
		if (md_render(text, len, &o, &doc) == OK) {
			for (size_t i = 0; i < doc.nlinks; i++) {
				char *page = page_of_link(s->dir, doc.links[i].url, NULL);

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

static struct docs_site *
site_ref(struct docs_site *s)
{
	s->refs++;
	return s;
}

static void
site_unref(struct docs_site *s)
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

static bool
page_exists(const struct docs_site *s, const char *file)
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

/* ---- drawing helpers ---- */

static int
text_cols(const struct ui *ui)
{
	int w = ui->cols - 4;

	if (w > DOCS_TEXT_MAX)
		w = DOCS_TEXT_MAX;
	return w < 10 ? 10 : w;
}

static attr_t
emph_attr(void)
{
	static int italic = -1;

	if (italic < 0) {
		char *cap = tigetstr("sitm");

		italic = cap && cap != (char *)-1;
	}
	return italic ? A_ITALIC : A_UNDERLINE;
}

static attr_t
style_attr(struct ui *ui, unsigned st, int level)
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
		a |= emph_attr();
	if (st & MDS_DEL)
		a |= A_DIM;
	if ((st & MDS_HEAD) && !(st & MDS_RULE) && level >= 3)
		a |= A_UNDERLINE;
	return a;
}

/* Draw bytes s[0..n) clipped: skip columns in, at most width columns. */
static int
put_clip(struct ui *ui, int y, int x, int width, int skip, attr_t a, const char *s, size_t n)
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
static size_t
find_all(const char *line, const char *needle, size_t *from, size_t *to, size_t max)
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
static void
draw_md_line(struct ui *ui, int y, int x, int width, int skip, const struct md_line *l, long sel,
	     const char *find)
{
	size_t mf[32], mt[32], nm = find ? find_all(l->text, find, mf, mt, 32) : 0;
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
			at = style_attr(ui, sp->style, l->level);
			if (hit || (sel >= 0 && sp->ref == sel))
				at |= A_REVERSE;
			w = width_cols(l->text + a, b - a, ui->ascii);
			if (col + w > skip) {
				int sk = col < skip ? skip - col : 0;

				drawn += put_clip(ui, y, x + drawn, width - drawn, sk, at,
						  l->text + a, b - a);
			}
			col += w;
			a = b;
		}
	}
	total = width_cols(l->text, strlen(l->text), ui->ascii);
	if (total - skip > width && width > 1) {
		/* cut on the right: say so */
		attrset(ui_attr(ui, R_DIM));
		mvaddstr(y, x + width - 1, ui->ascii ? ">" : "\xe2\x80\xba");
		attrset(A_NORMAL);
	}
}

/* A box over the lower body with lines of text (a URL to copy, the keys). */
static void
draw_box(struct ui *ui, const char *title, const struct strvec *lines)
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

struct box {
	char *title;
	struct strvec lines;
	bool shown;
};

static void
box_clear(struct box *b)
{
	free(b->title);
	b->title = NULL;
	strvec_clear(&b->lines);
	b->shown = false;
}

static void
box_url(struct ui *ui, struct box *b, const char *why, const char *url)
{
	int w = ui->cols - 8;
	struct strbuf sb = STRBUF_INIT;

	box_clear(b);
	b->title = xstrdup(why);
	/* the URL whole, cut into lines only where the screen ends */
	for (const char *p = url; *p;) {
		size_t len;
		int cw;

		utf8_decode(p, strlen(p), &len);
		cw = width_cols(p, len, ui->ascii);
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

static void
box_keys(struct box *b, const char *const *help)
{
	box_clear(b);
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
static void
open_external(struct ui *ui, struct box *b, const char *url)
{
	struct spawn_opts o = SPAWN_OPTS_INIT;
	const char *argv[] = { "xdg-open", url, NULL };
	struct opener *op;
	struct child *child;

	if (!env_set("DISPLAY") && !env_set("WAYLAND_DISPLAY")) {
		box_url(ui, b, "No display to open a browser on: copy the link", url);
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
		box_url(ui, b, "xdg-open is not installed: copy the link", url);
		return;
	}
	ui_msg(ui, false, "opening %s", url);
}

static void page_open(struct ui *ui, struct docs_site *site, const char *file, const char *anchor,
		      const char *find, size_t at_src);
static void index_open(struct ui *ui, struct docs_site *site);

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
		open_external(ui, b, url);
		return;
	}
	if (url[0] == '#') {
		if (same_anchor)
			*same_anchor = xstrdup(url + 1);
		return;
	}
	page = page_of_link(site->dir, url, &anchor);
	if (page && from && !strcmp(page, from) && same_anchor) {
		*same_anchor = anchor;
		anchor = NULL;
	} else if (page) {
		page_open(ui, site, page, anchor, NULL, SIZE_MAX);
	} else {
		ui_msg(ui, true, "'%s' is not a docs page: it is a file of fswb's source tree",
		       url);
	}
	free(anchor);
	free(page);
}

/* ---- a search prompt ---- */

struct prompt {
	bool on;
	bool all; /* search every page */
	struct lineedit le;
};

/* Feed a key to an open prompt: 1 when Enter ended it, 0 when it goes on, -1 cancelled. */
static int
prompt_key(struct prompt *p, int key)
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

static void
prompt_start(struct prompt *p, bool all)
{
	lineedit_release(&p->le);
	lineedit_init(&p->le, "");
	p->on = true;
	p->all = all;
}

static void
prompt_draw(struct ui *ui, const struct prompt *p)
{
	const char *lead = p->all ? "Search all pages: " : "Find: ";
	int lw = text_width(lead, ui->ascii);

	ui_fill(ui, ui->rows - 2, 0, ui->cols, R_NORMAL);
	ui_put(ui, ui->rows - 2, 1, ui->cols - 2, R_BOLD, lead);
	ui_putf(ui, ui->rows - 2, 1 + lw, ui->cols - 2 - lw, R_NORMAL, "%s_", p->le.text.buf);
}

static void results_open(struct ui *ui, struct docs_site *site, const char *query);

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
	struct md_opts o = { .width = text_cols(ui), .ascii = ui->ascii, .link_list = true };
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

	if (p->width != text_cols(ui) || p->ascii != ui->ascii)
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
		draw_md_line(ui, y0 + row, 2, ui->cols - 3, skip, l, p->sel, p->find);
	}
	if (!p->doc.n)
		ui_put(ui, y0 + 1, 2, ui->cols - 4, R_DIM, "(this page is empty)");
	if (p->box.shown)
		draw_box(ui, p->box.title, &p->box.lines);
	if (p->prompt.on)
		prompt_draw(ui, &p->prompt);
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
		int r = prompt_key(&p->prompt, key);

		if (r > 0 && p->prompt.le.text.len) {
			if (p->prompt.all) {
				results_open(ui, p->site, p->prompt.le.text.buf);
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
		box_clear(&p->box);
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
		prompt_start(&p->prompt, false);
		return REACT_REDRAW;
	case 's':
		prompt_start(&p->prompt, true);
		return REACT_REDRAW;
	case 'n':
		page_find(ui, p, 1, false);
		return REACT_REDRAW;
	case 'N':
		page_find(ui, p, -1, false);
		return REACT_REDRAW;
	case 'i':
		index_open(ui, p->site);
		return REACT_REDRAW;
	case '?':
	case K_F1:
		box_keys(&p->box, page_help);
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
		box_clear(&p->box);
		return REACT_REDRAW;
	}
	if (y < p->body_y || y >= p->body_y + p->body_h || i >= p->doc.n || x < 2)
		return REACT_NONE;
	l = &p->doc.lines[i];
	at = x - 2 + (l->kind == MDL_CODE || l->kind == MDL_TABLE ? p->hskip : 0);
	col = 0;
	for (size_t s = 0; s < l->nspans; s++) {
		int w = width_cols(l->text + l->spans[s].off, l->spans[s].len, ui->ascii);

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

	site_unref(p->site);
	md_doc_release(&p->doc);
	free(p->file);
	free(p->text);
	free(p->find);
	free(p->anchor);
	lineedit_release(&p->prompt.le);
	box_clear(&p->box);
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

static void
page_open(struct ui *ui, struct docs_site *site, const char *file, const char *anchor,
	  const char *find, size_t at_src)
{
	struct page *p;
	size_t len;
	char *text = read_page(site->dir, file, &len);

	if (!text) {
		ui_msg(ui, true, "cannot read the docs page '%s' in '%s'", file, site->dir);
		return;
	}
	p = xcalloc(1, sizeof(*p));
	p->site = site_ref(site);
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
		draw_box(ui, k->box.title, &k->box.lines);
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
		struct docs_site *site = site_ref(k->site);
		char *file = xstrdup(k->file);

		ui_pop(ui);
		page_open(ui, site, file, url + 1, NULL, SIZE_MAX);
		site_unref(site);
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
		box_clear(&k->box);
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
		box_clear(&k->box);
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

	site_unref(k->site);
	free(k->file);
	free(k->title);
	strvec_clear(&k->urls);
	strvec_clear(&k->texts);
	box_clear(&k->box);
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

	k->site = site_ref(p->site);
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
		nm = find_all(t, rs->query, mf, mt, 16);
		for (size_t m = 0; m <= nm && x < ui->cols - 1; m++) {
			size_t end = m < nm ? mf[m] : strlen(t);

			if (end > at)
				x += put_clip(ui, rs->body_y + r, x, ui->cols - 1 - x, 0,
					      ui_attr(ui, R_NORMAL), t + at, end - at);
			if (m < nm)
				x += put_clip(ui, rs->body_y + r, x, ui->cols - 1 - x, 0,
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
	page_open(ui, rs->site, rs->site->pages[m->page].file, NULL, rs->query, m->src);
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
	site_unref(rs->site);
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

static void
results_open(struct ui *ui, struct docs_site *site, const char *query)
{
	struct results *rs = xcalloc(1, sizeof(*rs));
	struct md_opts o = { .width = text_cols(ui), .ascii = ui->ascii };

	rs->site = site_ref(site);
	rs->query = xstrdup(query);
	for (size_t p = 0; p < site->n && !rs->capped; p++) {
		struct md_doc doc;
		size_t len, before = rs->n;
		char *text = read_page(site->dir, site->pages[p].file, &len);

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

		text_wrap(s->intro, text_cols(ui), false, &lines);
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
		draw_box(ui, ix->box.title, &ix->box.lines);
	if (ix->prompt.on)
		prompt_draw(ui, &ix->prompt);
	ui_keybar(ui, keys, ARRAY_SIZE(keys));
}

static enum reaction
index_key(struct ui *ui, struct view *v, int key)
{
	struct docs_index *ix = v->priv;
	struct docs_site *s = ix->site;
	enum list_move mv;

	if (ix->prompt.on) {
		if (prompt_key(&ix->prompt, key) > 0 && ix->prompt.le.text.len)
			results_open(ui, s, ix->prompt.le.text.buf);
		return REACT_REDRAW;
	}
	if (ix->box.shown) {
		box_clear(&ix->box);
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
			page_open(ui, s, s->pages[ix->lp.sel].file, NULL, NULL, SIZE_MAX);
		return REACT_REDRAW;
	case 's':
	case '/':
		prompt_start(&ix->prompt, true);
		return REACT_REDRAW;
	case '?':
	case K_F1:
		box_keys(&ix->box, index_help);
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
		box_clear(&ix->box);
		return REACT_REDRAW;
	}
	if (ix->site->error || y < ix->list_y ||
	    !listpos_hit(&ix->lp, ix->site->n, (size_t)(y - ix->list_y), &row))
		return REACT_NONE;
	ix->lp.sel = row;
	page_open(ui, ix->site, ix->site->pages[row].file, NULL, NULL, SIZE_MAX);
	return REACT_REDRAW;
}

static void
index_free(struct view *v)
{
	struct docs_index *ix = v->priv;

	site_unref(ix->site);
	lineedit_release(&ix->prompt.le);
	box_clear(&ix->box);
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

static void
index_open(struct ui *ui, struct docs_site *site)
{
	struct docs_index *ix = xcalloc(1, sizeof(*ix));

	ix->site = site_ref(site);
	lineedit_init(&ix->prompt.le, "");
	strvec_init(&ix->box.lines);
	ui_push(ui, &index_ops, ix);
}

/* ---- the entry ---- */

void
docs_open(struct ui *ui, const char *page)
{
	struct docs_site *site = site_load();
	char *file = NULL, *anchor = NULL, *hash;

	if (page && *page) {
		file = xstrdup(page);
		if ((hash = strchr(file, '#'))) {
			*hash = 0;
			anchor = hash[1] ? xstrdup(hash + 1) : NULL;
		}
		/* "first-run" is first-run.md */
		if (*file && !str_endswith(file, ".md")) {
			char *f = xasprintf("%s.md", file);

			free(file);
			file = f;
		}
	}
	if (site->error || !file || !*file) {
		index_open(ui, site);
	} else if (!page_exists(site, file)) {
		index_open(ui, site);
		ui_msg(ui, true, "there is no docs page '%s': here are the pages there are", file);
	} else {
		page_open(ui, site, file, anchor, NULL, SIZE_MAX);
		if (!ui->depth)
			index_open(ui, site);
	}
	site_unref(site);
	free(file);
	free(anchor);
}
