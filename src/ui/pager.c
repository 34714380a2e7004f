/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "ui/pager.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view/text.h"

void
textdoc_add(struct textdoc *d, enum role role, const char *text)
{
	ALLOC_GROW(d->v, d->n + 1, d->alloc);
	d->v[d->n].text = xstrdup(text ? text : "");
	d->v[d->n].role = role;
	d->n++;
}

void
textdoc_addf(struct textdoc *d, enum role role, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	textdoc_add(d, role, s ? s : "");
	free(s);
}

void
textdoc_add_lines(struct textdoc *d, enum role role, const char *text)
{
	struct strbuf line = STRBUF_INIT;
	const char *p = text ? text : "";

	for (;;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);

		strbuf_reset(&line);
		text_overstrike(p, n, &line);
		textdoc_add(d, role, line.buf);
		if (!nl || !nl[1])
			break;
		p = nl + 1;
	}
	strbuf_release(&line);
}

void
textdoc_add_wrapped(struct textdoc *d, enum role role, const char *text, int width)
{
	struct strvec lines = STRVEC_INIT;

	text_wrap(text ? text : "", width, true, &lines);
	for (size_t i = 0; i < lines.n; i++)
		textdoc_add(d, role, lines.v[i]);
	strvec_clear(&lines);
}

void
textdoc_clear(struct textdoc *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->v[i].text);
	free(d->v);
	memset(d, 0, sizeof(*d));
}

struct pager *
pager_new(const char *title)
{
	struct pager *p = xcalloc(1, sizeof(*p));

	p->title = xstrdup(title);
	p->found = -1;
	lineedit_init(&p->prompt, "");
	return p;
}

struct textdoc *
pager_tab(struct pager *p, const char *name)
{
	if (p->ntabs == PAGER_TABS)
		return &p->tabs[PAGER_TABS - 1];
	p->tab_name[p->ntabs] = xstrdup(name);
	return &p->tabs[p->ntabs++];
}

void
pager_show_line(struct pager *p, size_t line)
{
	p->top[p->tab] = line;
}

static struct textdoc *
cur(struct pager *p)
{
	return &p->tabs[p->tab];
}

static void
pager_draw(struct ui *ui, struct view *v)
{
	struct pager *p = v->priv;
	struct textdoc *d;
	struct keybar_item keys[14];
	size_t nk = 0;
	int body_h, y0 = ui_frame(ui, p->title, p->right, &body_h), y, x;

	if (p->hooks && p->hooks->relayout && p->width != ui->cols - 2) {
		p->hooks->relayout(ui, p, ui->cols - 2);
		p->width = ui->cols - 2;
	}
	p->width = ui->cols - 2;
	y = y0;
	if (p->ntabs > 1) {
		x = 1;
		for (size_t i = 0; i < p->ntabs; i++) {
			char label[96];

			snprintf(label, sizeof(label), i == p->tab ? "[%s]" : " %s ",
				 p->tab_name[i]);
			x += ui_put(ui, y, x, ui->cols - x - 1, i == p->tab ? R_BOLD : R_DIM,
				    label) +
			     2;
		}
		y++;
		body_h--;
	}
	if (p->footer) {
		body_h--;
		ui_put(ui, y0 + (p->ntabs > 1) + body_h, 1, ui->cols - 2, R_DIM, p->footer);
	}
	p->height = body_h;
	d = cur(p);
	if (d->n && p->top[p->tab] >= d->n)
		p->top[p->tab] = d->n - 1;
	for (int row = 0; row < body_h; row++) {
		size_t i = p->top[p->tab] + (size_t)row;
		enum role role;

		if (i >= d->n)
			break;
		role = d->v[i].role;
		if ((long)i == p->found)
			role = R_SEL;
		ui_put_slice(ui, y + row, 1, ui->cols - 2, p->hskip, role, d->v[i].text);
	}
	if (d->n == 0)
		ui_put(ui, y + 1, 2, ui->cols - 4, R_DIM, "(nothing here)");
	if (p->prompting) {
		ui_fill(ui, ui->rows - 2, 0, ui->cols, R_NORMAL);
		ui_putf(ui, ui->rows - 2, 1, ui->cols - 2, R_BOLD, "/%s_", p->prompt.text.buf);
	}
	if (p->hooks)
		for (size_t i = 0; i < p->hooks->nkeys && nk < ARRAY_SIZE(keys) - 5; i++)
			keys[nk++] = p->hooks->keys[i];
	if (p->ntabs > 1)
		keys[nk++] = (struct keybar_item){ "Tab", "next pane", K_TAB };
	keys[nk++] = (struct keybar_item){ "/", "search", '/' };
	keys[nk++] = (struct keybar_item){ "?", "docs", '?' };
	keys[nk++] = (struct keybar_item){ "Esc", "back", K_ESC };
	ui_keybar(ui, keys, nk);
}

static void
search(struct ui *ui, struct pager *p, int dir)
{
	struct textdoc *d = cur(p);
	long start, i;

	if (!p->search || !*p->search || !d->n)
		return;
	start = p->found >= 0 ? p->found : (long)p->top[p->tab] - (dir > 0 ? 1 : 0);
	for (long k = 1; k <= (long)d->n; k++) {
		i = ((start + dir * k) % (long)d->n + (long)d->n) % (long)d->n;
		if (text_contains_ci(d->v[i].text, p->search)) {
			p->found = i;
			if ((size_t)i < p->top[p->tab] ||
			    (size_t)i >= p->top[p->tab] + (size_t)p->height)
				p->top[p->tab] = (size_t)i > 2 ? (size_t)i - 2 : 0;
			return;
		}
	}
	p->found = -1;
	ui_msg(ui, true, "'%s' is not in this page", p->search);
}

static enum reaction
pager_key(struct ui *ui, struct view *v, int key)
{
	struct pager *p = v->priv;
	struct textdoc *d = cur(p);
	size_t *top = &p->top[p->tab];
	size_t page = p->height > 1 ? (size_t)p->height - 1 : 1;
	size_t max = d->n > (size_t)p->height ? d->n - (size_t)p->height : 0;
	enum reaction r;

	if (p->prompting) {
		if (key == K_ENTER) {
			p->prompting = false;
			free(p->search);
			p->search = xstrdup(p->prompt.text.buf);
			p->found = -1;
			search(ui, p, 1);
		} else if (key == K_ESC) {
			p->prompting = false;
		} else {
			prompt_edit_key(&p->prompt, key);
		}
		return REACT_REDRAW;
	}
	if (p->hooks && p->hooks->key) {
		r = p->hooks->key(ui, p, key);
		if (r != REACT_PASS)
			return r;
	}
	switch (key) {
	case K_UP:
	case 'k':
		if (*top)
			(*top)--;
		return REACT_REDRAW;
	case K_DOWN:
	case 'j':
		if (*top < max)
			(*top)++;
		return REACT_REDRAW;
	case K_PGUP:
	case 'b':
		*top = *top > page ? *top - page : 0;
		return REACT_REDRAW;
	case K_PGDN:
	case ' ':
		*top = *top + page < max ? *top + page : max;
		return REACT_REDRAW;
	case K_HOME:
	case 'g':
		*top = 0;
		return REACT_REDRAW;
	case K_END:
	case 'G':
		*top = max;
		return REACT_REDRAW;
	case K_RIGHT:
	case '>':
		p->hskip += 20;
		return REACT_REDRAW;
	case '<':
		p->hskip = p->hskip > 20 ? p->hskip - 20 : 0;
		return REACT_REDRAW;
	case K_TAB:
		if (p->ntabs > 1) {
			p->tab = (p->tab + 1) % p->ntabs;
			p->found = -1;
		}
		return REACT_REDRAW;
	case K_BTAB:
		if (p->ntabs > 1) {
			p->tab = (p->tab + p->ntabs - 1) % p->ntabs;
			p->found = -1;
		}
		return REACT_REDRAW;
	case '/':
		p->prompting = true;
		lineedit_set(&p->prompt, "");
		return REACT_REDRAW;
	case 'n':
		search(ui, p, 1);
		return REACT_REDRAW;
	case 'N':
		search(ui, p, -1);
		return REACT_REDRAW;
	case '?':
		ui_want_docs(ui, p->hooks && p->hooks->docs ? p->hooks->docs : NULL);
		return REACT_REDRAW;
	default:
		return REACT_PASS;
	}
}

static enum reaction
pager_click(struct ui *ui, struct view *v, int y, int x, bool dbl)
{
	struct pager *p = v->priv;

	if (p->ntabs > 1 && y == 2) {
		int col = 1;

		for (size_t i = 0; i < p->ntabs; i++) {
			int w = text_width(p->tab_name[i], ui->ascii) + 2;

			if (x >= col && x < col + w) {
				p->tab = i;
				p->found = -1;
				return REACT_REDRAW;
			}
			col += w + 2;
		}
	}
	return REACT_NONE;
}

static void
pager_free(struct view *v)
{
	struct pager *p = v->priv;

	if (p->hooks && p->hooks->free)
		p->hooks->free(p->data);
	for (size_t i = 0; i < p->ntabs; i++) {
		free(p->tab_name[i]);
		textdoc_clear(&p->tabs[i]);
	}
	free(p->title);
	free(p->right);
	free(p->search);
	free(p->footer);
	lineedit_release(&p->prompt);
	free(p);
}

static const struct view_ops pager_ops = {
	.name = "pager",
	.draw = pager_draw,
	.key = pager_key,
	.click = pager_click,
	.free = pager_free,
	.docs = NULL,
};

void
pager_open(struct ui *ui, struct pager *p, const struct pager_hooks *hooks, void *data)
{
	p->hooks = hooks;
	p->data = data;
	ui_push(ui, &pager_ops, p);
}
