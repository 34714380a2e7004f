/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Screen arithmetic without curses: scrolling lists, where the run view's
 * panes go at a given size, the key bar's item positions (for mouse
 * clicks) and the progress bar. Pure functions, unit-tested.
 */
#ifndef FSWB_VIEW_LAYOUT_H
#define FSWB_VIEW_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>

#include "core/util.h"

/* ---- a scrolling list: the selected row and the first row shown ---- */

struct listpos {
	size_t sel;
	size_t top;
};

enum list_move {
	LM_UP,
	LM_DOWN,
	LM_PGUP,
	LM_PGDN,
	LM_HOME,
	LM_END,
};

/* Keep sel inside n rows and visible in a window of height rows. */
void listpos_fix(struct listpos *lp, size_t n, size_t height);
/* Move; false when nothing moved. */
bool listpos_move(struct listpos *lp, enum list_move mv, size_t n, size_t height);
/* The row under screen row y of the window (0-based), or false when none. */
bool listpos_hit(const struct listpos *lp, size_t n, size_t y, size_t *row);

/* ---- the run view ---- */

struct pane {
	int y, x, h, w;
};

struct run_layout {
	bool side_by_side; /* tests left, log right; else tests above the log */
	struct pane tests;
	struct pane log;
	int sep; /* the separating column (side by side) or row (stacked) */
};

/*
 * Split the body (rows body_h from body_y, cols wide) between the test list
 * and the kernel log. Side by side from 72 columns: the list gets 40% of
 * the width (at least 34 columns, at most 60); stacked below that, the list
 * gets the top 40% (at least 3 rows). Tiny screens still get panes of at
 * least one row or column.
 */
void run_layout(int body_y, int body_h, int cols, struct run_layout *out);

/* ---- the key bar ---- */

struct keybar_item {
	const char *key;  /* as shown: "Enter", "q", "?" */
	const char *what; /* "next", "quit" */
	int code;	  /* the key a click sends */
};

/*
 * Lay the items out on one line of width columns ("key what" separated by
 * three spaces, after a leading space). xs[i] and ws[i] get each item's
 * column and width; items that do not fit get ws[i] = 0. Returns how many
 * fit. Widths count bytes as columns except for UTF-8 continuation bytes.
 */
size_t keybar_place(const struct keybar_item *items, size_t n, int width, int *xs, int *ws);
/* The code of the item at column x, or 0. */
int keybar_hit(const struct keybar_item *items, size_t n, const int *xs, const int *ws, int x);

/* ---- progress ---- */

/* A bar of width cells, done of total filled (full and empty are one cell
 * each). */
void progress_bar(size_t done, size_t total, int width, const char *full, const char *empty,
		  struct strbuf *out);
/* "~31 min", "~2 h 05 min", "<1 min", "?" for < 0. */
const char *format_eta(double seconds, char *buf, size_t len);
/* "12:41" (m:ss) or "1:02:03" (h:mm:ss). */
const char *format_clock(double seconds, char *buf, size_t len);

#endif
