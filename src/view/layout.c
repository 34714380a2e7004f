/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "view/layout.h"

#include <stdio.h>
#include <string.h>

void
listpos_fix(struct listpos *lp, size_t n, size_t height)
{
	if (height == 0)
		height = 1;
	if (n == 0) {
		lp->sel = lp->top = 0;
		return;
	}
	if (lp->sel >= n)
		lp->sel = n - 1;
	if (lp->top > lp->sel)
		lp->top = lp->sel;
	if (lp->sel >= lp->top + height)
		lp->top = lp->sel - height + 1;
	/* no empty space at the end when the list could fill it */
	if (n >= height && lp->top > n - height)
		lp->top = n - height;
	if (n < height)
		lp->top = 0;
}

bool
listpos_move(struct listpos *lp, enum list_move mv, size_t n, size_t height)
{
	struct listpos old = *lp;
	size_t page = height > 1 ? height - 1 : 1;

	if (n == 0)
		return false;
	switch (mv) {
	case LM_UP:
		if (lp->sel)
			lp->sel--;
		break;
	case LM_DOWN:
		if (lp->sel + 1 < n)
			lp->sel++;
		break;
	case LM_PGUP:
		lp->sel = lp->sel > page ? lp->sel - page : 0;
		lp->top = lp->top > page ? lp->top - page : 0;
		break;
	case LM_PGDN:
		lp->sel = lp->sel + page < n ? lp->sel + page : n - 1;
		lp->top += page;
		break;
	case LM_HOME:
		lp->sel = 0;
		break;
	case LM_END:
		lp->sel = n - 1;
		break;
	}
	listpos_fix(lp, n, height);
	return lp->sel != old.sel || lp->top != old.top;
}

bool
listpos_hit(const struct listpos *lp, size_t n, size_t y, size_t *row)
{
	if (lp->top + y >= n)
		return false;
	*row = lp->top + y;
	return true;
}

void
run_layout(int body_y, int body_h, int cols, struct run_layout *out)
{
	memset(out, 0, sizeof(*out));
	if (body_h < 1)
		body_h = 1;
	if (cols < 1)
		cols = 1;
	if (cols >= 72) {
		int lw = cols * 2 / 5;

		if (lw < 34)
			lw = 34;
		if (lw > 60)
			lw = 60;
		out->side_by_side = true;
		out->tests = (struct pane){ body_y, 0, body_h, lw };
		out->sep = lw;
		out->log = (struct pane){ body_y, lw + 1, body_h, cols - lw - 1 };
	} else {
		int lh = body_h * 2 / 5;

		if (lh < 3)
			lh = 3;
		if (lh > body_h - 2)
			lh = body_h - 2;
		if (lh < 1)
			lh = 1;
		out->tests = (struct pane){ body_y, 0, lh, cols };
		out->sep = body_y + lh;
		out->log = (struct pane){ body_y + lh + 1, 0, body_h - lh - 1, cols };
		if (out->log.h < 1)
			out->log.h = 1;
	}
}

static int
cols_of(const char *s)
{
	int n = 0;

	for (; *s; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			n++;
	return n;
}

size_t
keybar_place(const struct keybar_item *items, size_t n, int width, int *xs, int *ws)
{
	int x = 1;
	size_t fit = 0;

	for (size_t i = 0; i < n; i++) {
		int w = cols_of(items[i].key) + 1 + cols_of(items[i].what);

		xs[i] = x;
		ws[i] = 0;
		if (x + w > width)
			continue;
		ws[i] = w;
		x += w + 3;
		fit++;
	}
	return fit;
}

int
keybar_hit(const struct keybar_item *items, size_t n, const int *xs, const int *ws, int x)
{
	for (size_t i = 0; i < n; i++)
		if (ws[i] && x >= xs[i] - 1 && x <= xs[i] + ws[i])
			return items[i].code;
	return 0;
}

void
progress_bar(size_t done, size_t total, int width, const char *full, const char *empty,
	     struct strbuf *out)
{
	int filled;

	if (width <= 0)
		return;
	if (total == 0)
		filled = 0;
	else if (done >= total)
		filled = width;
	else
		filled = (int)((double)done * width / (double)total);
	for (int i = 0; i < width; i++)
		strbuf_adds(out, i < filled ? full : empty);
}

const char *
format_eta(double seconds, char *buf, size_t len)
{
	long m;

	if (seconds < 0) {
		snprintf(buf, len, "?");
		return buf;
	}
	if (seconds < 60) {
		snprintf(buf, len, "<1 min");
		return buf;
	}
	m = (long)(seconds / 60 + 0.5);
	if (m < 60)
		snprintf(buf, len, "~%ld min", m);
	else
		snprintf(buf, len, "~%ld h %02ld min", m / 60, m % 60);
	return buf;
}

const char *
format_clock(double seconds, char *buf, size_t len)
{
	long s = seconds < 0 ? 0 : (long)seconds;

	if (s >= 3600)
		snprintf(buf, len, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
	else
		snprintf(buf, len, "%ld:%02ld", s / 60, s % 60);
	return buf;
}
