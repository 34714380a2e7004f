/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Markdown to styled lines (see markdown.h). md4c calls back for every
 * block and span; inline text collects in a styled buffer (bytes, each with
 * its style, link and source offset) that is wrapped and emitted as lines
 * when its block ends, behind the prefix the enclosing blocks give (quote
 * bars, list markers, hanging indents).
 */
#include "view/markdown.h"

#include <ctype.h>
#include <md4c.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "view/text.h"

#define NOSRC	  SIZE_MAX
#define MAX_DEPTH 64
#define MIN_WIDTH 10

/* ---- styled text ---- */

struct attr {
	unsigned style;
	int link, ref;
	size_t src;
};

struct stext {
	struct strbuf s;
	struct attr *a;
	size_t alloc;
};

static void
st_init(struct stext *t)
{
	strbuf_init(&t->s);
	t->a = NULL;
	t->alloc = 0;
}

static void
st_release(struct stext *t)
{
	strbuf_release(&t->s);
	free(t->a);
	t->a = NULL;
	t->alloc = 0;
}

static void
st_reset(struct stext *t)
{
	strbuf_reset(&t->s);
}

static void
st_add(struct stext *t, const char *p, size_t n, unsigned style, int link, int ref, size_t src)
{
	ALLOC_GROW(t->a, t->s.len + n + 1, t->alloc);
	for (size_t i = 0; i < n; i++) {
		t->a[t->s.len + i] = (struct attr){ .style = style,
						    .link = link,
						    .ref = ref,
						    .src = src == NOSRC ? NOSRC : src + i };
	}
	strbuf_add(&t->s, p, n);
}

static void
st_adds(struct stext *t, const char *s, unsigned style)
{
	st_add(t, s, strlen(s), style, -1, -1, NOSRC);
}

static void
st_add_range(struct stext *dst, const struct stext *src, size_t from, size_t to)
{
	ALLOC_GROW(dst->a, dst->s.len + (to - from) + 1, dst->alloc);
	memcpy(dst->a + dst->s.len, src->a + from, (to - from) * sizeof(*src->a));
	strbuf_add(&dst->s, src->s.buf + from, to - from);
}

static void
st_pad(struct stext *t, int n)
{
	for (int i = 0; i < n; i++)
		st_adds(t, " ", MDS_TEXT);
}

static int
width_of(const char *s, size_t n, bool ascii)
{
	char *tmp = xstrndup(s, n);
	int w = text_width(tmp, ascii);

	free(tmp);
	return w;
}

static bool
st_blank(const struct stext *t)
{
	for (size_t i = 0; i < t->s.len; i++)
		if (t->s.buf[i] != ' ' && t->s.buf[i] != '\n')
			return false;
	return true;
}

/* ---- wrapping ---- */

struct stlines {
	struct stext *v;
	size_t n, alloc;
};

static struct stext *
stl_new(struct stlines *l)
{
	ALLOC_GROW(l->v, l->n + 1, l->alloc);
	st_init(&l->v[l->n]);
	return &l->v[l->n++];
}

static void
stl_release(struct stlines *l)
{
	for (size_t i = 0; i < l->n; i++)
		st_release(&l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* Bytes of the UTF-8 character at s[i] (at least 1). */
static size_t
char_len(const struct stext *t, size_t i)
{
	size_t len;

	utf8_decode(t->s.buf + i, t->s.len - i, &len);
	return len ? len : 1;
}

/*
 * Word-wrap in to width columns: spaces separate words (runs of them count
 * as one), '\n' ends a line, a link's " [n]" stays with its last word, and
 * a word longer than a line is broken. At least one line comes out.
 */
static void
wrap(const struct stext *in, int width, bool ascii, struct stlines *out)
{
	const char *b = in->s.buf;
	size_t n = in->s.len, i = 0, sep = NOSRC;
	struct stext *cur = stl_new(out);
	bool have_word = false;
	int col = 0;

	if (width < 1)
		width = 1;
	while (i < n) {
		size_t j;
		int w;

		if (b[i] == '\n') {
			cur = stl_new(out);
			col = 0;
			have_word = false;
			sep = NOSRC;
			i++;
			continue;
		}
		if (b[i] == ' ') {
			if (have_word && sep == NOSRC)
				sep = i;
			i++;
			continue;
		}
		j = i;
		while (j < n && b[j] != ' ' && b[j] != '\n')
			j++;
		/* keep a link's marker with the word before it */
		while (j + 1 < n && b[j] == ' ' && (in->a[j + 1].style & MDS_MARK)) {
			j++;
			while (j < n && b[j] != ' ' && b[j] != '\n')
				j++;
		}
		w = width_of(b + i, j - i, ascii);
		if (have_word) {
			if (col + 1 + w <= width) {
				if (sep != NOSRC)
					st_add_range(cur, in, sep, sep + 1);
				else
					st_adds(cur, " ", MDS_TEXT);
				col++;
			} else {
				cur = stl_new(out);
				col = 0;
			}
		}
		/* a word longer than what is left of the line: break it */
		while (col + w > width) {
			size_t k = i;
			int used = 0;

			while (k < j) {
				size_t cl = char_len(in, k);
				int cw = width_of(b + k, cl, ascii);

				if (col + used + cw > width)
					break;
				used += cw;
				k += cl;
			}
			if (k == i && col == 0)
				k = i + char_len(in, i); /* not one character fits: take one */
			if (k > i)
				st_add_range(cur, in, i, k);
			cur = stl_new(out);
			col = 0;
			i = k;
			w = width_of(b + i, j - i, ascii);
		}
		st_add_range(cur, in, i, j);
		col += w;
		have_word = true;
		sep = NOSRC;
		i = j;
	}
}

/* ---- the renderer ---- */

enum ctx_kind {
	C_DOC,
	C_QUOTE,
	C_UL,
	C_OL,
	C_LI,
	C_CODE,
	C_HTML,
	C_P,
	C_H,
	C_TABLE,
	C_OTHER,
};

struct ctx {
	enum ctx_kind kind;
	bool tight;
	unsigned num;	  /* lists: the next item's number */
	int level;	  /* headings */
	int mark_w;	  /* list items: the marker's columns */
	char marker[24];  /* list items: "• ", "12. " */
	bool mark_strong; /* numbers are bold, bullets dim */
	bool marker_pending;
};

struct trow {
	struct stext *cells;
	size_t n, alloc;
	bool head;
};

struct table {
	unsigned ncols;
	MD_ALIGN *align;
	struct trow *rows;
	size_t nrows, alloc;
	bool in_head;
};

struct r {
	const char *src;
	size_t srclen;
	const struct md_opts *o;
	struct md_doc *doc;
	int width;
	struct ctx stack[MAX_DEPTH];
	int depth, skipped; /* blocks deeper than MAX_DEPTH are counted, not kept */

	struct stext in;   /* inline text of the current block */
	struct stext code; /* the current code block */
	int em, strong, del, code_span, img;
	int link, ref;
	size_t link_start;

	bool need_blank;
	struct table *table;
	struct stext *cell;
};

static size_t
src_of(const struct r *r, const char *p)
{
	if (p >= r->src && p < r->src + r->srclen)
		return (size_t)(p - r->src);
	return NOSRC;
}

static unsigned
cur_style(const struct r *r)
{
	unsigned s = 0;

	if (r->em)
		s |= MDS_EMPH;
	if (r->strong)
		s |= MDS_STRONG;
	if (r->del)
		s |= MDS_DEL;
	if (r->code_span)
		s |= MDS_CODE;
	if (r->link >= 0)
		s |= MDS_LINK;
	return s;
}

static struct stext *
target(struct r *r)
{
	return r->cell ? r->cell : &r->in;
}

static struct ctx *
top(struct r *r)
{
	return r->depth ? &r->stack[r->depth - 1] : NULL;
}

static bool
inside(const struct r *r, enum ctx_kind kind)
{
	for (int i = 0; i < r->depth; i++)
		if (r->stack[i].kind == kind)
			return true;
	return false;
}

/* The prefix of the next line: quote bars, list markers or their indent. */
static void
make_prefix(struct r *r, struct stext *out, bool consume)
{
	for (int i = 0; i < r->depth; i++) {
		struct ctx *c = &r->stack[i];

		if (c->kind == C_QUOTE) {
			st_adds(out, r->o->ascii ? "| " : "\xe2\x94\x82 ", MDS_DIM);
		} else if (c->kind == C_LI) {
			if (c->marker_pending && consume) {
				st_adds(out, c->marker, c->mark_strong ? MDS_STRONG : MDS_DIM);
				st_pad(out, c->mark_w - width_of(c->marker, strlen(c->marker),
								 r->o->ascii));
				c->marker_pending = false;
			} else {
				st_pad(out, c->mark_w);
			}
		}
	}
}

static int
prefix_width(struct r *r)
{
	int w = 0;

	for (int i = 0; i < r->depth; i++) {
		if (r->stack[i].kind == C_QUOTE)
			w += 2;
		else if (r->stack[i].kind == C_LI)
			w += r->stack[i].mark_w;
	}
	return w;
}

static int
content_width(struct r *r)
{
	int w = r->width - prefix_width(r);

	/* deep nesting on a narrow screen: overflow rather than one letter a line */
	return w < 4 ? 4 : w;
}

/* Append a line: its text and spans from t (consumed). */
static void
push_line(struct r *r, struct stext *t, enum md_kind kind, int level)
{
	struct md_doc *d = r->doc;
	struct md_line *l;
	size_t src = NOSRC;

	if (kind != MDL_BLANK && r->need_blank && d->n && d->lines[d->n - 1].kind != MDL_BLANK) {
		struct stext blank;

		r->need_blank = false;
		st_init(&blank);
		push_line(r, &blank, MDL_BLANK, 0);
		st_release(&blank);
	}
	if (kind != MDL_BLANK)
		r->need_blank = false;
	ALLOC_GROW(d->lines, d->n + 1, d->alloc);
	l = &d->lines[d->n];
	memset(l, 0, sizeof(*l));
	l->kind = kind;
	l->level = level;
	/* trailing spaces are of no use */
	while (t->s.len && t->s.buf[t->s.len - 1] == ' ')
		strbuf_setlen(&t->s, t->s.len - 1);
	l->text = xstrdup(t->s.buf);
	for (size_t i = 0; i < t->s.len;) {
		size_t j = i + 1;
		struct md_span *sp;

		while (j < t->s.len && t->a[j].style == t->a[i].style &&
		       t->a[j].link == t->a[i].link && t->a[j].ref == t->a[i].ref)
			j++;
		l->spans = xrealloc(l->spans, (l->nspans + 1) * sizeof(*l->spans));
		sp = &l->spans[l->nspans++];
		*sp = (struct md_span){ .off = i,
					.len = j - i,
					.style = t->a[i].style,
					.link = t->a[i].link,
					.ref = t->a[i].ref };
		if (sp->ref >= 0 && (size_t)sp->ref < d->nrefs) {
			struct md_ref *rf = &d->refs[sp->ref];

			if (rf->first_line == SIZE_MAX)
				rf->first_line = d->n;
			rf->last_line = d->n;
		}
		i = j;
	}
	for (size_t i = 0; i < t->s.len && src == NOSRC; i++)
		src = t->a[i].src;
	if (src == NOSRC)
		src = d->n ? d->lines[d->n - 1].src : 0;
	l->src = src;
	d->n++;
}

/* Plain text of t, soft breaks as spaces. */
static char *
flatten(const struct stext *t, size_t from, size_t to)
{
	char *s = xstrndup(t->s.buf + from, to - from);

	for (char *p = s; *p; p++)
		if (*p == '\n')
			*p = ' ';
	return s;
}

static void
add_heading(struct r *r, int level, const struct stext *t, size_t line)
{
	struct md_doc *d = r->doc;
	struct md_heading *h;
	char *text = flatten(t, 0, t->s.len);
	size_t a = 0, b = strlen(text);

	while (a < b && text[a] == ' ')
		a++;
	while (b > a && text[b - 1] == ' ')
		b--;
	ALLOC_GROW(d->headings, d->nheadings + 1, d->headings_alloc);
	h = &d->headings[d->nheadings++];
	h->level = level;
	h->line = line;
	h->text = xstrndup(text + a, b - a);
	h->anchor = md_anchor(h->text);
	if (!d->title)
		d->title = xstrdup(h->text);
	free(text);
}

/* Wrap the block's inline text behind the prefix and emit it. */
static void
flush_inline(struct r *r)
{
	struct stlines lines = { 0 };
	struct ctx *c = top(r);
	bool heading = c && c->kind == C_H;
	int level = heading ? c->level : 0;
	size_t first = r->doc->n;
	int maxw = 0;

	if (st_blank(&r->in)) {
		st_reset(&r->in);
		return;
	}
	wrap(&r->in, content_width(r), r->o->ascii, &lines);
	for (size_t i = 0; i < lines.n; i++) {
		struct stext line;
		int w = width_of(lines.v[i].s.buf, lines.v[i].s.len, r->o->ascii);

		if (w > maxw)
			maxw = w;
		st_init(&line);
		make_prefix(r, &line, true);
		if (heading)
			for (size_t k = 0; k < lines.v[i].s.len; k++)
				lines.v[i].a[k].style |= MDS_HEAD;
		st_add_range(&line, &lines.v[i], 0, lines.v[i].s.len);
		push_line(r, &line, heading ? MDL_HEADING : MDL_TEXT, level);
		if (i == 0)
			first = r->doc->n - 1;
		st_release(&line);
	}
	if (heading) {
		add_heading(r, level, &r->in, first);
		if (level <= 2) {
			struct stext rule;
			const char *g = r->o->ascii
						? (level == 1 ? "=" : "-")
						: (level == 1 ? "\xe2\x95\x90" : "\xe2\x94\x80");

			st_init(&rule);
			make_prefix(r, &rule, false);
			for (int k = 0; k < maxw; k++)
				st_adds(&rule, g, MDS_RULE | MDS_HEAD);
			push_line(r, &rule, MDL_RULE, level);
			st_release(&rule);
		}
	}
	stl_release(&lines);
	st_reset(&r->in);
}

static void
flush_code(struct r *r)
{
	const struct stext *t = &r->code;
	size_t i = 0, n = t->s.len;

	if (n && t->s.buf[n - 1] == '\n')
		n--;
	while (i <= n) {
		size_t j = i;
		struct stext line;
		int col = 0;

		while (j < n && t->s.buf[j] != '\n')
			j++;
		st_init(&line);
		make_prefix(r, &line, true);
		st_adds(&line, "    ", MDS_TEXT);
		for (size_t k = i; k < j;) {
			size_t cl = char_len(t, k);

			if (t->s.buf[k] == '\t') {
				int sp = 8 - col % 8;

				for (int s = 0; s < sp; s++)
					st_add(&line, " ", 1, MDS_PRE, -1, -1, t->a[k].src);
				col += sp;
			} else {
				st_add_range(&line, t, k, k + cl);
				col += width_of(t->s.buf + k, cl, r->o->ascii);
			}
			k += cl;
		}
		push_line(r, &line, MDL_CODE, 0);
		st_release(&line);
		i = j + 1;
	}
	st_reset(&r->code);
}

/* ---- tables ---- */

static void
table_free(struct table *tb)
{
	if (!tb)
		return;
	for (size_t i = 0; i < tb->nrows; i++) {
		for (size_t c = 0; c < tb->rows[i].n; c++)
			st_release(&tb->rows[i].cells[c]);
		free(tb->rows[i].cells);
	}
	free(tb->rows);
	free(tb->align);
	free(tb);
}

static void
cell_lines(struct r *r, const struct stext *cell, int w, struct stlines *out)
{
	struct stext flat;

	/* a cell is one paragraph: soft breaks are spaces */
	st_init(&flat);
	st_add_range(&flat, cell, 0, cell->s.len);
	for (size_t i = 0; i < flat.s.len; i++)
		if (flat.s.buf[i] == '\n')
			flat.s.buf[i] = ' ';
	wrap(&flat, w, r->o->ascii, out);
	st_release(&flat);
}

static void
flush_table(struct r *r)
{
	struct table *tb = r->table;
	unsigned nc = tb->ncols;
	int *w, *minw, total, avail = content_width(r);
	const char *sep = r->o->ascii ? " | " : " \xe2\x94\x82 ";
	const char *hl = r->o->ascii ? "-" : "\xe2\x94\x80";
	const char *cross = r->o->ascii ? "-+-" : "\xe2\x94\x80\xe2\x94\xbc\xe2\x94\x80";

	for (size_t i = 0; i < tb->nrows; i++)
		if (tb->rows[i].n > nc)
			nc = (unsigned)tb->rows[i].n;
	if (!nc)
		return;
	w = xcalloc(nc, sizeof(*w));
	minw = xcalloc(nc, sizeof(*minw));
	for (size_t i = 0; i < tb->nrows; i++) {
		for (size_t c = 0; c < tb->rows[i].n; c++) {
			struct stext *cell = &tb->rows[i].cells[c];
			char *flat = flatten(cell, 0, cell->s.len);
			int cw = text_width(flat, r->o->ascii);

			if (cw > w[c])
				w[c] = cw;
			for (char *p = strtok(flat, " "); p; p = strtok(NULL, " ")) {
				int ww = text_width(p, r->o->ascii);

				if (ww > minw[c])
					minw[c] = ww;
			}
			free(flat);
		}
	}
	total = 3 * (int)(nc - 1);
	for (unsigned c = 0; c < nc; c++) {
		if (w[c] < 1)
			w[c] = 1;
		total += w[c];
	}
	/* too wide: narrow the widest column, first down to its longest word */
	while (total > avail) {
		int best = -1;

		for (unsigned c = 0; c < nc; c++)
			if (w[c] > minw[c] && (best < 0 || w[c] > w[best]))
				best = (int)c;
		if (best < 0)
			for (unsigned c = 0; c < nc; c++)
				if (w[c] > 1 && (best < 0 || w[c] > w[best]))
					best = (int)c;
		if (best < 0)
			break;
		w[best]--;
		total--;
	}
	for (size_t i = 0; i < tb->nrows; i++) {
		struct trow *row = &tb->rows[i];
		struct stlines *cl = xcalloc(nc, sizeof(*cl));
		size_t h = 1;

		for (unsigned c = 0; c < nc; c++) {
			if (c < row->n)
				cell_lines(r, &row->cells[c], w[c], &cl[c]);
			else
				stl_new(&cl[c]);
			if (cl[c].n > h)
				h = cl[c].n;
		}
		for (size_t k = 0; k < h; k++) {
			struct stext line;

			st_init(&line);
			make_prefix(r, &line, true);
			for (unsigned c = 0; c < nc; c++) {
				struct stext *t = k < cl[c].n ? &cl[c].v[k] : NULL;
				int tw = t ? width_of(t->s.buf, t->s.len, r->o->ascii) : 0;
				int pad = w[c] - tw, left = 0;
				MD_ALIGN al = c < tb->ncols && tb->align ? tb->align[c]
									 : MD_ALIGN_DEFAULT;

				if (pad < 0)
					pad = 0;
				if (al == MD_ALIGN_RIGHT)
					left = pad;
				else if (al == MD_ALIGN_CENTER)
					left = pad / 2;
				if (c)
					st_adds(&line, sep, MDS_DIM);
				st_pad(&line, left);
				if (t) {
					if (row->head)
						for (size_t b = 0; b < t->s.len; b++)
							t->a[b].style |= MDS_TH;
					st_add_range(&line, t, 0, t->s.len);
				}
				if (c + 1 < nc)
					st_pad(&line, pad - left);
			}
			push_line(r, &line, MDL_TABLE, 0);
			st_release(&line);
		}
		for (unsigned c = 0; c < nc; c++)
			stl_release(&cl[c]);
		free(cl);
		if (row->head && (i + 1 == tb->nrows || !tb->rows[i + 1].head)) {
			struct stext line;

			st_init(&line);
			make_prefix(r, &line, false);
			for (unsigned c = 0; c < nc; c++) {
				if (c)
					st_adds(&line, cross, MDS_DIM | MDS_RULE);
				for (int k = 0; k < w[c]; k++)
					st_adds(&line, hl, MDS_DIM | MDS_RULE);
			}
			push_line(r, &line, MDL_TABLE, 0);
			st_release(&line);
		}
	}
	free(w);
	free(minw);
}

/* ---- links ---- */

static int
link_add(struct md_doc *d, const char *url)
{
	for (size_t i = 0; i < d->nlinks; i++)
		if (!strcmp(d->links[i].url, url))
			return (int)i;
	ALLOC_GROW(d->links, d->nlinks + 1, d->links_alloc);
	d->links[d->nlinks].url = xstrdup(url);
	d->links[d->nlinks].text = NULL;
	return (int)d->nlinks++;
}

static int
ref_add(struct md_doc *d, int link)
{
	ALLOC_GROW(d->refs, d->nrefs + 1, d->refs_alloc);
	d->refs[d->nrefs] =
		(struct md_ref){ .link = link, .first_line = SIZE_MAX, .last_line = SIZE_MAX };
	return (int)d->nrefs++;
}

static void
put_utf8(struct strbuf *sb, unsigned long cp)
{
	if (cp == 0 || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		cp = 0xfffd;
	strbuf_add_utf8(sb, cp);
}

/* An entity ("&amp;", "&#8212;", "&#x2014;") as UTF-8; unknown ones as written. */
static void
decode_entity(const char *e, size_t n, struct strbuf *out)
{
	static const struct {
		const char *name, *utf8;
	} named[] = {
		{ "amp", "&" },
		{ "lt", "<" },
		{ "gt", ">" },
		{ "quot", "\"" },
		{ "apos", "'" },
		{ "nbsp", "\xc2\xa0" },
		{ "mdash", "\xe2\x80\x94" },
		{ "ndash", "\xe2\x80\x93" },
		{ "hellip", "\xe2\x80\xa6" },
		{ "copy", "\xc2\xa9" },
		{ "rarr", "\xe2\x86\x92" },
		{ "larr", "\xe2\x86\x90" },
		{ "middot", "\xc2\xb7" },
	};

	if (n >= 4 && e[0] == '&' && e[1] == '#' && e[n - 1] == ';') {
		char *num = xstrndup(e + 2, n - 3);
		char *end;
		unsigned long cp = (num[0] == 'x' || num[0] == 'X') ? strtoul(num + 1, &end, 16)
								    : strtoul(num, &end, 10);

		if (!*end && end != num) {
			put_utf8(out, cp);
			free(num);
			return;
		}
		free(num);
	} else if (n >= 3 && e[0] == '&' && e[n - 1] == ';') {
		for (size_t i = 0; i < ARRAY_SIZE(named); i++) {
			if (strlen(named[i].name) == n - 2 &&
			    !memcmp(named[i].name, e + 1, n - 2)) {
				strbuf_adds(out, named[i].utf8);
				return;
			}
		}
	}
	strbuf_add(out, e, n);
}

static char *
attr_str(const MD_ATTRIBUTE *a)
{
	struct strbuf sb = STRBUF_INIT;

	if (!a->text)
		return xstrdup("");
	if (!a->substr_offsets) {
		strbuf_add(&sb, a->text, a->size);
		return strbuf_detach(&sb);
	}
	for (unsigned i = 0; a->substr_offsets[i] < a->size; i++) {
		const char *p = a->text + a->substr_offsets[i];
		size_t n = a->substr_offsets[i + 1] - a->substr_offsets[i];

		if (a->substr_types[i] == MD_TEXT_ENTITY)
			decode_entity(p, n, &sb);
		else if (a->substr_types[i] == MD_TEXT_NULLCHAR)
			strbuf_adds(&sb, "\xef\xbf\xbd");
		else
			strbuf_add(&sb, p, n);
	}
	return strbuf_detach(&sb);
}

/* ---- md4c's callbacks ---- */

static void
push_ctx(struct r *r, enum ctx_kind kind)
{
	if (r->depth == MAX_DEPTH) {
		r->skipped++;
		return;
	}
	memset(&r->stack[r->depth], 0, sizeof(r->stack[0]));
	r->stack[r->depth++].kind = kind;
}

static void
pop_ctx(struct r *r)
{
	if (r->skipped) {
		r->skipped--;
		return;
	}
	if (r->depth)
		r->depth--;
}

static int
list_depth(const struct r *r)
{
	int n = 0;

	for (int i = 0; i < r->depth; i++)
		if (r->stack[i].kind == C_UL || r->stack[i].kind == C_OL)
			n++;
	return n;
}

static void
begin_item(struct r *r, const MD_BLOCK_LI_DETAIL *det)
{
	struct ctx *list = top(r);
	struct ctx *li;
	char mark[24];
	bool strong = false;

	if (list && list->kind == C_OL) {
		snprintf(mark, sizeof(mark), "%u.", list->num++);
		strong = true;
	} else {
		int d = list_depth(r);

		if (r->o->ascii)
			snprintf(mark, sizeof(mark), "%s", d % 2 ? "*" : "-");
		else
			snprintf(mark, sizeof(mark), "%s", d % 2 ? "\xe2\x80\xa2" : "\xe2\x97\xa6");
	}
	if (det && det->is_task) {
		size_t l = strlen(mark);

		snprintf(mark + l, sizeof(mark) - l, " [%c]", det->task_mark == ' ' ? ' ' : 'x');
	}
	push_ctx(r, C_LI);
	li = top(r);
	if (!li || li->kind != C_LI)
		return;
	snprintf(li->marker, sizeof(li->marker), "%s", mark);
	li->mark_w = width_of(mark, strlen(mark), r->o->ascii) + 1;
	if (list && list->kind == C_OL && li->mark_w < 3)
		li->mark_w = 3;
	li->mark_strong = strong;
	li->marker_pending = true;
	li->tight = list ? list->tight : true;
}

static int
on_enter_block(MD_BLOCKTYPE type, void *detail, void *data)
{
	struct r *r = data;
	struct ctx *c;

	if (!r->table && type != MD_BLOCK_DOC)
		flush_inline(r);
	switch (type) {
	case MD_BLOCK_DOC:
		push_ctx(r, C_DOC);
		break;
	case MD_BLOCK_QUOTE:
		push_ctx(r, C_QUOTE);
		break;
	case MD_BLOCK_UL:
		push_ctx(r, C_UL);
		if ((c = top(r)) && c->kind == C_UL)
			c->tight = ((MD_BLOCK_UL_DETAIL *)detail)->is_tight;
		break;
	case MD_BLOCK_OL:
		push_ctx(r, C_OL);
		if ((c = top(r)) && c->kind == C_OL) {
			c->tight = ((MD_BLOCK_OL_DETAIL *)detail)->is_tight;
			c->num = ((MD_BLOCK_OL_DETAIL *)detail)->start;
		}
		break;
	case MD_BLOCK_LI:
		begin_item(r, detail);
		break;
	case MD_BLOCK_HR: {
		struct stext line;

		push_ctx(r, C_OTHER);
		st_init(&line);
		make_prefix(r, &line, true);
		for (int k = content_width(r); k > 0; k--)
			st_adds(&line, r->o->ascii ? "-" : "\xe2\x94\x80", MDS_DIM | MDS_RULE);
		push_line(r, &line, MDL_RULE, 0);
		st_release(&line);
		r->need_blank = true;
		break;
	}
	case MD_BLOCK_H:
		push_ctx(r, C_H);
		if ((c = top(r)) && c->kind == C_H)
			c->level = (int)((MD_BLOCK_H_DETAIL *)detail)->level;
		break;
	case MD_BLOCK_CODE:
		push_ctx(r, C_CODE);
		st_reset(&r->code);
		break;
	case MD_BLOCK_HTML:
		push_ctx(r, C_HTML);
		break;
	case MD_BLOCK_P:
		push_ctx(r, C_P);
		break;
	case MD_BLOCK_TABLE: {
		MD_BLOCK_TABLE_DETAIL *det = detail;

		push_ctx(r, C_TABLE);
		table_free(r->table);
		r->table = xcalloc(1, sizeof(*r->table));
		r->table->ncols = det->col_count;
		r->table->align = xcalloc(det->col_count ? det->col_count : 1, sizeof(MD_ALIGN));
		break;
	}
	case MD_BLOCK_THEAD:
	case MD_BLOCK_TBODY:
		push_ctx(r, C_OTHER);
		if (r->table)
			r->table->in_head = type == MD_BLOCK_THEAD;
		break;
	case MD_BLOCK_TR:
		push_ctx(r, C_OTHER);
		if (r->table) {
			struct table *tb = r->table;

			ALLOC_GROW(tb->rows, tb->nrows + 1, tb->alloc);
			memset(&tb->rows[tb->nrows], 0, sizeof(tb->rows[0]));
			tb->rows[tb->nrows++].head = tb->in_head;
		}
		break;
	case MD_BLOCK_TH:
	case MD_BLOCK_TD:
		push_ctx(r, C_OTHER);
		if (r->table && r->table->nrows) {
			struct table *tb = r->table;
			struct trow *row = &tb->rows[tb->nrows - 1];

			if (row->n < tb->ncols)
				tb->align[row->n] = ((MD_BLOCK_TD_DETAIL *)detail)->align;
			ALLOC_GROW(row->cells, row->n + 1, row->alloc);
			st_init(&row->cells[row->n]);
			r->cell = &row->cells[row->n++];
		}
		break;
	}
	return 0;
}

static int
on_leave_block(MD_BLOCKTYPE type, void *detail, void *data)
{
	struct r *r = data;
	struct ctx *c;

	switch (type) {
	case MD_BLOCK_P:
	case MD_BLOCK_H:
		flush_inline(r);
		r->need_blank = true;
		break;
	case MD_BLOCK_CODE:
		flush_code(r);
		r->need_blank = true;
		break;
	case MD_BLOCK_LI:
		flush_inline(r);
		c = top(r);
		if (c && c->kind == C_LI && c->marker_pending) {
			/* an empty item still shows its marker */
			struct stext line;

			st_init(&line);
			make_prefix(r, &line, true);
			push_line(r, &line, MDL_TEXT, 0);
			st_release(&line);
		}
		break;
	case MD_BLOCK_UL:
	case MD_BLOCK_OL:
	case MD_BLOCK_QUOTE:
	case MD_BLOCK_DOC:
		flush_inline(r);
		break;
	case MD_BLOCK_TH:
	case MD_BLOCK_TD:
		r->cell = NULL;
		break;
	case MD_BLOCK_TABLE:
		if (r->table)
			flush_table(r);
		table_free(r->table);
		r->table = NULL;
		r->need_blank = true;
		break;
	default:
		break;
	}
	pop_ctx(r);
	if (type == MD_BLOCK_UL || type == MD_BLOCK_OL) {
		/* a list nested in a tight item runs on without a blank line */
		c = top(r);
		r->need_blank = !(c && c->kind == C_LI && c->tight);
	} else if (type == MD_BLOCK_QUOTE) {
		r->need_blank = true;
	}
	(void)detail;
	return 0;
}

static int
on_enter_span(MD_SPANTYPE type, void *detail, void *data)
{
	struct r *r = data;

	switch (type) {
	case MD_SPAN_EM:
		r->em++;
		break;
	case MD_SPAN_STRONG:
		r->strong++;
		break;
	case MD_SPAN_DEL:
		r->del++;
		break;
	case MD_SPAN_CODE:
		r->code_span++;
		break;
	case MD_SPAN_IMG:
		r->img++;
		break;
	case MD_SPAN_A: {
		char *url = attr_str(&((MD_SPAN_A_DETAIL *)detail)->href);

		if (r->link < 0) {
			r->link = link_add(r->doc, url);
			r->ref = ref_add(r->doc, r->link);
			r->link_start = target(r)->s.len;
		}
		free(url);
		break;
	}
	default:
		break;
	}
	return 0;
}

static int
on_leave_span(MD_SPANTYPE type, void *detail, void *data)
{
	struct r *r = data;

	switch (type) {
	case MD_SPAN_EM:
		r->em--;
		break;
	case MD_SPAN_STRONG:
		r->strong--;
		break;
	case MD_SPAN_DEL:
		r->del--;
		break;
	case MD_SPAN_CODE:
		r->code_span--;
		break;
	case MD_SPAN_IMG:
		r->img--;
		break;
	case MD_SPAN_A:
		if (r->link >= 0) {
			struct stext *t = target(r);
			struct md_link *l = &r->doc->links[r->link];
			char mark[32];

			if (!l->text) {
				char *s = flatten(t, r->link_start, t->s.len);

				l->text = xstrdup(s);
				free(s);
			}
			snprintf(mark, sizeof(mark), "[%d]", r->link + 1);
			st_add(t, " ", 1, MDS_MARK, r->link, r->ref, NOSRC);
			st_add(t, mark, strlen(mark), MDS_MARK, r->link, r->ref, NOSRC);
			r->link = r->ref = -1;
		}
		break;
	default:
		break;
	}
	(void)detail;
	return 0;
}

static int
on_text(MD_TEXTTYPE type, const MD_CHAR *text, MD_SIZE size, void *data)
{
	struct r *r = data;
	struct ctx *c = top(r);
	struct stext *t;
	size_t src = src_of(r, text);
	unsigned style = cur_style(r);

	if (type == MD_TEXT_HTML || (c && c->kind == C_HTML) || inside(r, C_HTML))
		return 0;
	if (c && c->kind == C_CODE) {
		st_add(&r->code, text, size, MDS_PRE, -1, -1, src);
		return 0;
	}
	t = target(r);
	switch (type) {
	case MD_TEXT_NULLCHAR:
		st_add(t, "\xef\xbf\xbd", 3, style, r->link, r->ref, src);
		break;
	case MD_TEXT_BR:
		st_add(t, "\n", 1, style, r->link, r->ref, src);
		break;
	case MD_TEXT_SOFTBR:
		st_add(t, " ", 1, style, r->link, r->ref, src);
		break;
	case MD_TEXT_ENTITY: {
		struct strbuf sb = STRBUF_INIT;

		decode_entity(text, size, &sb);
		st_add(t, sb.buf, sb.len, style, r->link, r->ref, src);
		strbuf_release(&sb);
		break;
	}
	default: {
		size_t from = t->s.len;

		st_add(t, text, size, style | (type == MD_TEXT_CODE ? MDS_CODE : 0), r->link,
		       r->ref, src);
		/* inline text is one line: tabs and stray newlines are spaces */
		for (size_t i = from; i < t->s.len; i++)
			if (t->s.buf[i] == '\t' || t->s.buf[i] == '\n' || t->s.buf[i] == '\r')
				t->s.buf[i] = ' ';
		break;
	}
	}
	return 0;
}

/* ---- the API ---- */

void
md_doc_init(struct md_doc *doc)
{
	memset(doc, 0, sizeof(*doc));
}

void
md_doc_release(struct md_doc *doc)
{
	for (size_t i = 0; i < doc->n; i++) {
		free(doc->lines[i].text);
		free(doc->lines[i].spans);
	}
	free(doc->lines);
	for (size_t i = 0; i < doc->nlinks; i++) {
		free(doc->links[i].url);
		free(doc->links[i].text);
	}
	free(doc->links);
	free(doc->refs);
	for (size_t i = 0; i < doc->nheadings; i++) {
		free(doc->headings[i].text);
		free(doc->headings[i].anchor);
	}
	free(doc->headings);
	free(doc->title);
	memset(doc, 0, sizeof(*doc));
}

static void
link_list(struct r *r)
{
	struct md_doc *d = r->doc;
	struct stext head;
	char mark[32];
	int mw;

	if (!d->nlinks)
		return;
	r->need_blank = true;
	st_init(&head);
	st_adds(&head, "Links", MDS_STRONG);
	push_line(r, &head, MDL_LINKS, 0);
	st_release(&head);
	snprintf(mark, sizeof(mark), "[%zu] ", d->nlinks);
	mw = (int)strlen(mark);
	for (size_t i = 0; i < d->nlinks; i++) {
		struct stlines lines = { 0 };
		struct stext url;
		int ref = ref_add(d, (int)i);

		st_init(&url);
		st_add(&url, d->links[i].url, strlen(d->links[i].url), MDS_LINK, (int)i, ref,
		       NOSRC);
		wrap(&url, r->width - mw > 4 ? r->width - mw : 4, r->o->ascii, &lines);
		for (size_t k = 0; k < lines.n; k++) {
			struct stext line;

			st_init(&line);
			if (k == 0) {
				snprintf(mark, sizeof(mark), "[%zu]", i + 1);
				st_add(&line, mark, strlen(mark), MDS_MARK, (int)i, ref, NOSRC);
				st_pad(&line, mw - (int)strlen(mark));
			} else {
				st_pad(&line, mw);
			}
			st_add_range(&line, &lines.v[k], 0, lines.v[k].s.len);
			push_line(r, &line, MDL_LINKS, 0);
			st_release(&line);
		}
		stl_release(&lines);
		st_release(&url);
	}
}

enum status
md_render(const char *src, size_t len, const struct md_opts *o, struct md_doc *doc)
{
	MD_PARSER parser = {
		.abi_version = 0,
		.flags = MD_FLAG_TABLES | MD_FLAG_STRIKETHROUGH | MD_FLAG_PERMISSIVEURLAUTOLINKS |
			 MD_FLAG_TASKLISTS,
		.enter_block = on_enter_block,
		.leave_block = on_leave_block,
		.enter_span = on_enter_span,
		.leave_span = on_leave_span,
		.text = on_text,
	};
	struct r r;
	int rc;

	md_doc_release(doc);
	memset(&r, 0, sizeof(r));
	r.src = src;
	r.srclen = len;
	r.o = o;
	r.doc = doc;
	r.width = o->width < MIN_WIDTH ? MIN_WIDTH : o->width;
	r.link = r.ref = -1;
	st_init(&r.in);
	st_init(&r.code);
	rc = md_parse(src, (MD_SIZE)len, &parser, &r);
	flush_inline(&r);
	table_free(r.table);
	st_release(&r.in);
	st_release(&r.code);
	if (rc != 0)
		return error(ERR_PARSE, "cannot parse the Markdown text (md4c said %d)", rc);
	if (o->link_list)
		link_list(&r);
	return OK;
}

long
md_find_anchor(const struct md_doc *doc, const char *anchor)
{
	for (size_t i = 0; i < doc->nheadings; i++)
		if (!strcmp(doc->headings[i].anchor, anchor))
			return (long)doc->headings[i].line;
	return -1;
}

size_t
md_line_at_src(const struct md_doc *doc, size_t src)
{
	for (size_t i = 0; i < doc->n; i++)
		if (doc->lines[i].src >= src)
			return i;
	return doc->n ? doc->n - 1 : 0;
}

char *
md_anchor(const char *heading)
{
	struct strbuf sb = STRBUF_INIT;

	for (const unsigned char *p = (const unsigned char *)heading; *p; p++) {
		if (*p >= 0x80 || isalnum(*p) || *p == '_' || *p == '-')
			strbuf_addch(&sb, *p >= 0x80 ? *p : tolower(*p));
		else if (*p == ' ')
			strbuf_addch(&sb, '-');
	}
	return strbuf_detach(&sb);
}

bool
md_url_is_external(const char *url)
{
	const char *p = url;

	if (!isalpha((unsigned char)*p))
		return false;
	while (isalnum((unsigned char)*p) || *p == '+' || *p == '.' || *p == '-')
		p++;
	return *p == ':';
}
