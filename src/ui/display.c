/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The display: curses set-up and tear-down, colours or their absence,
 * UTF-8 or ASCII marks, and the drawing helpers every view uses.
 */
#include <errno.h>
#include <langinfo.h>
#include <locale.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "view/text.h"
#include "ui/ui.h"
#include "ui/ui_int.h"

static const struct glyphs utf8_glyphs = {
	.hline = "\xe2\x94\x80",      /* ─ */
	.vline = "\xe2\x94\x82",      /* │ */
	.cross_down = "\xe2\x94\xac", /* ┬ */
	.cross_up = "\xe2\x94\xb4",   /* ┴ */
	.corner_tl = "\xe2\x94\x8c",  /* ┌ */
	.corner_tr = "\xe2\x94\x90",  /* ┐ */
	.corner_bl = "\xe2\x94\x94",  /* └ */
	.corner_br = "\xe2\x94\x98",  /* ┘ */
	.pass = "\xe2\x9c\x93",	      /* ✓ */
	.fail = "\xe2\x9c\x97",	      /* ✗ */
	.notrun = "\xe2\x80\x93",     /* – */
	.running = "\xe2\x96\xb8",    /* ▸ */
	.pending = " ",
	.expunged = "\xc2\xb7",	     /* · */
	.sel = "\xe2\x96\xb8",	     /* ▸ */
	.bar_full = "\xe2\x96\x88",  /* █ */
	.bar_empty = "\xe2\x96\x91", /* ░ */
	.ok = "\xe2\x9c\x93",	     /* ✓ */
	.warn = "!",		     /* ! */
	.no = "\xe2\x9c\x97",	     /* ✗ */
	.follow = "\xe2\x96\xbc",    /* ▼ */
	.arrow = "\xe2\x86\x92",     /* → */
	.bullet = "\xe2\x80\xa2",    /* • */
	.mark = "\xe2\x96\xb6",	     /* ▶ */
	.dot = "\xc2\xb7",	     /* · */
	.ellipsis = "\xe2\x80\xa6",  /* … */
};

static const struct glyphs ascii_glyphs = {
	.hline = "-",
	.vline = "|",
	.cross_down = "+",
	.cross_up = "+",
	.corner_tl = "+",
	.corner_tr = "+",
	.corner_bl = "+",
	.corner_br = "+",
	.pass = "+",
	.fail = "x",
	.notrun = "-",
	.running = ">",
	.pending = " ",
	.expunged = ".",
	.sel = ">",
	.bar_full = "#",
	.bar_empty = ".",
	.ok = "+",
	.warn = "!",
	.no = "x",
	.follow = "v",
	.arrow = "->",
	.bullet = "*",
	.mark = ">",
	.dot = "-",
	.ellipsis = "...",
};

static struct ui *fatal_ui;

bool
ui_headless(void)
{
	const char *v = getenv("FSWB_NO_DISPLAY");

	return v && *v;
}

enum status
ui_parse_size(const char *s, int *cols, int *rows)
{
	char *end;
	long c, r;

	errno = 0;
	c = strtol(s, &end, 10);
	if (*end != 'x' || errno || c < 1 || c > 1000)
		goto bad;
	r = strtol(end + 1, &end, 10);
	if (*end || errno || r < 1 || r > 1000)
		goto bad;
	*cols = (int)c;
	*rows = (int)r;
	return OK;
bad:
	return error(ERR_INVALID, "'%s' is not a screen size: give COLSxROWS, e.g. 80x24", s);
}

static void
fatal_hook(void)
{
	if (fatal_ui && !isendwin())
		endwin();
}

static bool
env_set(const char *name)
{
	const char *v = getenv(name);

	return v && *v;
}

/*
 * The virtual screen: curses writes to /dev/null at FSWB_SCREEN's size
 * (LINES and COLUMNS, which curses honours when its output is no terminal)
 * with one terminal description everywhere, so screens are the same on
 * every machine.
 */
static enum status
headless_init(void)
{
	const char *size = getenv("FSWB_SCREEN");
	int cols = 80, rows = 24;
	char buf[16];
	FILE *out, *in;

	if (size && *size && ui_parse_size(size, &cols, &rows) != OK)
		return error_prefix(ERR_INVALID, "FSWB_SCREEN");
	snprintf(buf, sizeof(buf), "%d", rows);
	setenv("LINES", buf, 1);
	snprintf(buf, sizeof(buf), "%d", cols);
	setenv("COLUMNS", buf, 1);
	use_env(TRUE);
	out = fopen("/dev/null", "w");
	in = fopen("/dev/null", "r");
	if (!out || !in || !newterm("xterm-256color", out, in)) {
		if (out)
			fclose(out);
		if (in)
			fclose(in);
		return error(ERR_NOTFOUND, "no virtual screen: curses cannot open the terminal "
					   "'xterm-256color' (install ncurses-base)");
	}
	return OK;
}

enum status
ui_display_init(struct ui *ui)
{
	const char *codeset;

	setlocale(LC_ALL, "");
	codeset = nl_langinfo(CODESET);
	ui->ascii = env_set("FSWB_ASCII") || !codeset || strcasecmp(codeset, "UTF-8");
	ui->g = ui->ascii ? ascii_glyphs : utf8_glyphs;

	if (ui_headless()) {
		enum status st = headless_init();

		if (st != OK)
			return st;
	} else {
		initscr();
	}
	fatal_ui = ui;
	set_fatal_hook(fatal_hook);
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	set_escdelay(25);
	curs_set(0);
	mousemask(BUTTON1_CLICKED | BUTTON1_DOUBLE_CLICKED | BUTTON4_PRESSED | BUTTON5_PRESSED,
		  NULL);
	mouseinterval(200);

	ui->color = !env_set("NO_COLOR") && has_colors();
	if (ui->color) {
		start_color();
		use_default_colors();
		init_pair(1, COLOR_GREEN, -1);
		init_pair(2, COLOR_RED, -1);
		init_pair(3, COLOR_YELLOW, -1);
		init_pair(4, COLOR_CYAN, -1);
		init_pair(5, COLOR_BLUE, -1);
		init_pair(6, COLOR_MAGENTA, -1);
		init_pair(7, COLOR_WHITE, COLOR_BLUE);
		init_pair(8, COLOR_WHITE, COLOR_RED);
	}
	getmaxyx(stdscr, ui->rows, ui->cols);
	return OK;
}

void
ui_display_end(struct ui *ui)
{
	if (!isendwin())
		endwin();
	set_fatal_hook(NULL);
	fatal_ui = NULL;
}

attr_t
ui_attr(const struct ui *ui, enum role role)
{
	if (!ui->color) {
		switch (role) {
		case R_TITLE:
		case R_HEAD:
		case R_BOLD:
		case R_KEY:
		case R_FAIL:
		case R_MARK:
			return A_BOLD;
		case R_SEL:
			return A_REVERSE;
		case R_BAD:
			return A_BOLD | A_REVERSE;
		case R_WARN:
		case R_LINK:
		case R_HUNK:
			return A_UNDERLINE;
		case R_DIM:
			return A_DIM;
		default:
			return A_NORMAL;
		}
	}
	switch (role) {
	case R_TITLE:
		return A_BOLD;
	case R_DIM:
		return A_DIM;
	case R_SEL:
		return A_REVERSE;
	case R_PASS:
		return COLOR_PAIR(1);
	case R_FAIL:
		return COLOR_PAIR(2) | A_BOLD;
	case R_NOTRUN:
		return COLOR_PAIR(3);
	case R_RUN:
		return COLOR_PAIR(4) | A_BOLD;
	case R_WARN:
		return COLOR_PAIR(3) | A_BOLD;
	case R_BAD:
		return COLOR_PAIR(8) | A_BOLD;
	case R_MARK:
		return COLOR_PAIR(5) | A_BOLD;
	case R_ADD:
		return COLOR_PAIR(1);
	case R_DEL:
		return COLOR_PAIR(2);
	case R_HUNK:
		return COLOR_PAIR(4);
	case R_HEAD:
		return COLOR_PAIR(6) | A_BOLD;
	case R_CODE:
		return COLOR_PAIR(4);
	case R_LINK:
		return COLOR_PAIR(5) | A_UNDERLINE;
	case R_KEY:
		return A_BOLD;
	case R_BOLD:
		return A_BOLD;
	default:
		return A_NORMAL;
	}
}

int
ui_put(struct ui *ui, int y, int x, int width, enum role role, const char *text)
{
	struct strbuf sb = STRBUF_INIT;
	int n;

	if (y < 0 || y >= ui->rows || x >= ui->cols || width <= 0)
		return 0;
	if (x + width > ui->cols)
		width = ui->cols - x;
	n = text_fit(text ? text : "", width, ui->ascii, true, &sb);
	attrset(ui_attr(ui, role));
	mvaddstr(y, x, sb.buf);
	attrset(A_NORMAL);
	strbuf_release(&sb);
	return n;
}

int
ui_putf(struct ui *ui, int y, int x, int width, enum role role, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	n = ui_put(ui, y, x, width, role, s ? s : "");
	free(s);
	return n;
}

int
ui_put_slice(struct ui *ui, int y, int x, int width, int skip, enum role role, const char *text)
{
	struct strbuf sb = STRBUF_INIT;
	int n;

	if (y < 0 || y >= ui->rows || x >= ui->cols || width <= 0)
		return 0;
	if (x + width > ui->cols)
		width = ui->cols - x;
	n = text_slice(text ? text : "", skip, width, ui->ascii, &sb);
	attrset(ui_attr(ui, role));
	mvaddstr(y, x, sb.buf);
	attrset(A_NORMAL);
	strbuf_release(&sb);
	return n;
}

void
ui_fill(struct ui *ui, int y, int x, int width, enum role role)
{
	if (y < 0 || y >= ui->rows)
		return;
	if (x + width > ui->cols)
		width = ui->cols - x;
	attrset(ui_attr(ui, role));
	for (int i = 0; i < width; i++)
		mvaddch(y, x + i, ' ');
	attrset(A_NORMAL);
}

void
ui_hline(struct ui *ui, int y, int x, int width)
{
	if (y < 0 || y >= ui->rows)
		return;
	if (x + width > ui->cols)
		width = ui->cols - x;
	attrset(ui_attr(ui, R_DIM));
	move(y, x);
	for (int i = 0; i < width; i++)
		addstr(ui->g.hline);
	attrset(A_NORMAL);
}

void
ui_vline(struct ui *ui, int y, int x, int height)
{
	if (x < 0 || x >= ui->cols)
		return;
	attrset(ui_attr(ui, R_DIM));
	for (int i = 0; i < height && y + i < ui->rows; i++)
		mvaddstr(y + i, x, ui->g.vline);
	attrset(A_NORMAL);
}

int
ui_frame(struct ui *ui, const char *left, const char *right, int *body_h)
{
	int rw = right ? text_width(right, ui->ascii) : 0;
	int lw;

	lw = ui_put(ui, 0, 1, ui->cols - 2, R_TITLE, left);
	if (right && rw + lw + 4 <= ui->cols)
		ui_put(ui, 0, ui->cols - rw - 1, rw, R_DIM, right);
	ui_hline(ui, 1, 0, ui->cols);
	ui_hline(ui, ui->rows - 2, 0, ui->cols);
	if (ui->message) {
		int w = text_width(ui->message, ui->ascii);

		if (w > ui->cols - 2)
			w = ui->cols - 2;
		ui_fill(ui, ui->rows - 2, 0, w + 3, R_NORMAL);
		ui_put(ui, ui->rows - 2, 1, ui->cols - 2, ui->message_error ? R_FAIL : R_BOLD,
		       ui->message);
	}
	*body_h = ui->rows - 4;
	if (*body_h < 1)
		*body_h = 1;
	return 2;
}

void
ui_keybar(struct ui *ui, const struct keybar_item *items, size_t n)
{
	int y = ui->rows - 1;

	if (n > ARRAY_SIZE(ui->keys))
		n = ARRAY_SIZE(ui->keys);
	memcpy(ui->keys, items, n * sizeof(*items));
	ui->nkeys = n;
	keybar_place(ui->keys, n, ui->cols, ui->key_x, ui->key_w);
	for (size_t i = 0; i < n; i++) {
		int kw;

		if (!ui->key_w[i])
			continue;
		kw = ui_put(ui, y, ui->key_x[i], ui->key_w[i], R_KEY, items[i].key);
		ui_put(ui, y, ui->key_x[i] + kw + 1, ui->key_w[i] - kw - 1, R_NORMAL,
		       items[i].what);
	}
}
