/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Text for the screen, without curses: display width of UTF-8, fitting a
 * string into a number of columns, word wrapping, and the one-line editor
 * the search and path prompts use.
 *
 * Everything drawn goes through text_fit() first, so that nothing from a
 * kernel log, a test's output or a file name can move the cursor: control
 * characters become '?', bad UTF-8 becomes '?', tabs become spaces, and in
 * ASCII mode (a terminal that is not UTF-8) every non-ASCII character
 * becomes '?' (a few common ones get an ASCII spelling: '…' is "...").
 *
 * Widths come from wcwidth(3), so the locale's LC_CTYPE must be UTF-8 for
 * wide characters to count as two columns (setlocale(LC_ALL, "") first).
 */
#ifndef FSWB_VIEW_TEXT_H
#define FSWB_VIEW_TEXT_H

#include <stdbool.h>
#include <stddef.h>

#include "core/util.h"

/* Decode one UTF-8 sequence at s (n bytes left): the code point, or -1 when
 * bad; *len its bytes. */
long utf8_decode(const char *s, size_t n, size_t *len);

/* Columns s takes once sanitised (see above). */
int text_width(const char *s, bool ascii);

/*
 * Append to out the sanitised s cut to at most width columns; when it is
 * cut and ellipsis is set, its last column is an ellipsis ("…", or "~" in
 * ASCII). Returns the columns appended.
 */
int text_fit(const char *s, int width, bool ascii, bool ellipsis, struct strbuf *out);

/*
 * The sanitised s starting skip columns in (for horizontal scrolling), cut
 * to width columns. Returns the columns appended.
 */
int text_slice(const char *s, int skip, int width, bool ascii, struct strbuf *out);

/*
 * Word-wrap s to width columns, one entry per line, appended to lines.
 * Newlines in s end lines; words longer than a line are broken; leading
 * white space of the first line is kept as indentation for continuation
 * lines only when keep_indent is set. An empty s gives one empty line.
 */
void text_wrap(const char *s, int width, bool keep_indent, struct strvec *lines);

/*
 * Append to out the line s (n bytes, no newline) as a terminal would show it
 * at its end: a carriage return goes back to the first column and a
 * backspace one character back, and what follows overwrites what was there
 * (mke2fs's "Writing inode tables: 3/8\b\b\b4/8" ends as "Writing inode
 * tables: 8/8"). Call it before the text is cleaned of control characters;
 * other bytes are copied as they are.
 */
void text_overstrike(const char *s, size_t n, struct strbuf *out);

/* Case-insensitive substring search (ASCII letters). */
bool text_contains_ci(const char *haystack, const char *needle);

/* ---- a one-line editor ---- */

struct lineedit {
	struct strbuf text;
	size_t cursor; /* byte offset, at a character boundary */
};

void lineedit_init(struct lineedit *le, const char *initial);
void lineedit_release(struct lineedit *le);
void lineedit_set(struct lineedit *le, const char *text);

/* Editing keys, as the TUI maps them (not curses codes). */
enum lineedit_key {
	LE_LEFT,
	LE_RIGHT,
	LE_HOME,
	LE_END,
	LE_BACKSPACE,
	LE_DELETE,
	LE_KILL_LINE,	/* ^U: delete everything before the cursor */
	LE_KILL_WORD,	/* ^W: delete the word before the cursor */
	LE_KILL_TO_END, /* ^K */
};

/* Insert the UTF-8 bytes of one character (or a pasted run) at the cursor. */
void lineedit_insert(struct lineedit *le, const char *bytes, size_t n);
/* Apply an editing key; false when it changed nothing. */
bool lineedit_key(struct lineedit *le, enum lineedit_key key);
/* Columns from the start of the text to the cursor. */
int lineedit_cursor_col(const struct lineedit *le, bool ascii);

#endif
