/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "view/text.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <wchar.h>

long
utf8_decode(const char *str, size_t n, size_t *len)
{
	const unsigned char *s = (const unsigned char *)str;
	long cp;
	size_t need;

	*len = 1;
	if (n == 0)
		return -1;
	if (s[0] < 0x80)
		return s[0];
	if ((s[0] & 0xe0) == 0xc0) {
		cp = s[0] & 0x1f;
		need = 1;
	} else if ((s[0] & 0xf0) == 0xe0) {
		cp = s[0] & 0x0f;
		need = 2;
	} else if ((s[0] & 0xf8) == 0xf0) {
		cp = s[0] & 0x07;
		need = 3;
	} else {
		return -1;
	}
	if (n < need + 1)
		return -1;
	for (size_t i = 1; i <= need; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return -1;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	/* overlong forms, surrogates, beyond Unicode */
	if ((need == 1 && cp < 0x80) || (need == 2 && cp < 0x800) || (need == 3 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return -1;
	*len = need + 1;
	return cp;
}

/* ASCII spellings of the characters fswb's own text uses. */
static const char *
ascii_spelling(long cp)
{
	switch (cp) {
	case 0x2026:
		return "...";
	case 0x2013:
	case 0x2014:
	case 0x2500:
		return "-";
	case 0x2192:
		return "->";
	case 0x2190:
		return "<-";
	case 0x2018:
	case 0x2019:
		return "'";
	case 0x201c:
	case 0x201d:
		return "\"";
	case 0x00b7:
		return "-";
	case 0x2502:
		return "|";
	case 0x00a0:
		return " ";
	default:
		return "?";
	}
}

/*
 * The next display unit of s at *i: its bytes in buf (NUL-terminated) and
 * its columns. col is the column it starts at (for tabs). 0 at the end.
 */
static int
next_unit(const char *s, size_t *i, int col, bool ascii, char *buf, int *cols)
{
	size_t len, n = strlen(s + *i);
	long cp;
	int w;

	if (n == 0)
		return 0;
	cp = utf8_decode(s + *i, n, &len);
	*i += len;
	if (cp == '\t') {
		w = 8 - col % 8;
		memset(buf, ' ', (size_t)w);
		buf[w] = 0;
		*cols = w;
		return 1;
	}
	if (cp < 0 || term_is_control(cp)) {
		strcpy(buf, "?");
		*cols = 1;
		return 1;
	}
	if (cp < 0x80) {
		buf[0] = (char)cp;
		buf[1] = 0;
		*cols = 1;
		return 1;
	}
	if (ascii) {
		strcpy(buf, ascii_spelling(cp));
		*cols = (int)strlen(buf);
		return 1;
	}
	w = wcwidth((wchar_t)cp);
	if (w < 0) {
		strcpy(buf, "?");
		*cols = 1;
		return 1;
	}
	memcpy(buf, s + *i - len, len);
	buf[len] = 0;
	*cols = w;
	return 1;
}

int
text_width(const char *s, bool ascii)
{
	char buf[16];
	size_t i = 0;
	int col = 0, w;

	while (next_unit(s, &i, col, ascii, buf, &w))
		col += w;
	return col;
}

int
text_fit(const char *s, int width, bool ascii, bool ellipsis, struct strbuf *out)
{
	const char *ell = ascii ? "~" : "\xe2\x80\xa6";
	char buf[16];
	size_t i = 0, mark_len = out->len;
	int col = 0, w, mark_col = 0;

	if (width <= 0)
		return 0;
	while (next_unit(s, &i, col, ascii, buf, &w)) {
		if (col + w > width) {
			if (!ellipsis)
				return col;
			/* cut back to leave one column for the ellipsis */
			strbuf_setlen(out, mark_len);
			strbuf_adds(out, ell);
			return mark_col + 1;
		}
		if (col + w <= width - 1) {
			mark_len = out->len + strlen(buf);
			mark_col = col + w;
		}
		strbuf_adds(out, buf);
		col += w;
	}
	return col;
}

int
text_slice(const char *s, int skip, int width, bool ascii, struct strbuf *out)
{
	char buf[16];
	size_t i = 0;
	int col = 0, w, used = 0;

	while (next_unit(s, &i, col, ascii, buf, &w)) {
		if (col >= skip) {
			if (used + w > width)
				break;
			strbuf_adds(out, buf);
			used += w;
		} else if (col + w > skip) {
			/* a wide character cut by the left edge */
			for (int k = 0; k < col + w - skip && used < width; k++, used++)
				strbuf_addch(out, ' ');
		}
		col += w;
	}
	return used;
}

/* Wrap one paragraph (no newlines). */
static void
wrap_para(const char *s, size_t n, int width, bool keep_indent, struct strvec *lines)
{
	struct strbuf line = STRBUF_INIT, word = STRBUF_INIT;
	char *para = xstrndup(s, n);
	int indent = 0, col = 0, wcol;
	size_t i = 0;
	const char *p = para;

	if (width < 1)
		width = 1;
	if (keep_indent) {
		while (p[indent] == ' ')
			indent++;
		if (indent > width / 2)
			indent = width / 2;
	}
	/* leading indentation stays on the first line */
	while (para[i] == ' ') {
		if (col < width) {
			strbuf_addch(&line, ' ');
			col++;
		}
		i++;
	}
	while (para[i]) {
		size_t start = i;

		while (para[i] && para[i] != ' ')
			i++;
		strbuf_reset(&word);
		strbuf_add(&word, para + start, i - start);
		wcol = text_width(word.buf, false);
		if (col > 0 && line.len && line.buf[line.len - 1] != ' ' &&
		    col + 1 + wcol > width) {
			strvec_push(lines, line.buf);
			strbuf_reset(&line);
			col = 0;
			for (int k = 0; k < indent; k++, col++)
				strbuf_addch(&line, ' ');
		} else if (col > 0 && line.len && line.buf[line.len - 1] != ' ') {
			strbuf_addch(&line, ' ');
			col++;
		}
		/* break a word longer than the line */
		while (col + wcol > width) {
			struct strbuf part = STRBUF_INIT;
			size_t len, j = 0;
			int used = 0;

			while (word.buf[j]) {
				long cp = utf8_decode(word.buf + j, word.len - j, &len);
				int w = cp < 0x20 ? 1 : (cp < 0x80 ? 1 : wcwidth((wchar_t)cp));

				if (w < 0)
					w = 1;
				if (col + used + w > width)
					break;
				strbuf_add(&part, word.buf + j, len);
				used += w;
				j += len;
			}
			if (j == 0 && col == indent) {
				/* not even one character fits: take one anyway */
				utf8_decode(word.buf, word.len, &len);
				strbuf_add(&part, word.buf, len);
				j = len;
			}
			strbuf_add(&line, part.buf, part.len);
			strbuf_release(&part);
			strvec_push(lines, line.buf);
			strbuf_reset(&line);
			col = 0;
			for (int k = 0; k < indent; k++, col++)
				strbuf_addch(&line, ' ');
			memmove(word.buf, word.buf + j, word.len - j + 1);
			word.len -= j;
			wcol = text_width(word.buf, false);
		}
		strbuf_add(&line, word.buf, word.len);
		col += wcol;
		while (para[i] == ' ')
			i++;
	}
	strvec_push(lines, line.buf);
	strbuf_release(&line);
	strbuf_release(&word);
	free(para);
}

void
text_wrap(const char *s, int width, bool keep_indent, struct strvec *lines)
{
	const char *p = s;

	for (;;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);

		wrap_para(p, n, width, keep_indent, lines);
		if (!nl)
			break;
		p = nl + 1;
		if (!*p)
			break;
	}
}

void
text_overstrike(const char *s, size_t n, struct strbuf *out)
{
	size_t base = out->len, col = base; /* col: the byte offset of the cursor in out */

	for (size_t i = 0; i < n;) {
		size_t len = 1, old = 1;

		if (s[i] == '\r') {
			col = base;
			i++;
			continue;
		}
		if (s[i] == '\b') {
			/* one character back: over UTF-8 continuation bytes */
			while (col > base && ((unsigned char)out->buf[--col] & 0xc0) == 0x80)
				;
			i++;
			continue;
		}
		if (utf8_decode(s + i, n - i, &len) < 0)
			len = 1;
		if (col < out->len && utf8_decode(out->buf + col, out->len - col, &old) < 0)
			old = 1;
		if (col < out->len) {
			/* overwrite the character under the cursor */
			size_t tail = out->len - col - old;
			char *rest = xstrndup(out->buf + col + old, tail);

			strbuf_setlen(out, col);
			strbuf_add(out, s + i, len);
			strbuf_add(out, rest, tail);
			free(rest);
		} else {
			strbuf_add(out, s + i, len);
		}
		col += len;
		i += len;
	}
}

bool
text_contains_ci(const char *haystack, const char *needle)
{
	size_t n = strlen(needle);

	if (!n)
		return true;
	for (const char *h = haystack; *h; h++)
		if (!strncasecmp(h, needle, n))
			return true;
	return false;
}

/* ---- the line editor ---- */

void
lineedit_init(struct lineedit *le, const char *initial)
{
	strbuf_init(&le->text);
	strbuf_adds(&le->text, initial ? initial : "");
	le->cursor = le->text.len;
}

void
lineedit_release(struct lineedit *le)
{
	strbuf_release(&le->text);
	le->cursor = 0;
}

void
lineedit_set(struct lineedit *le, const char *text)
{
	strbuf_reset(&le->text);
	strbuf_adds(&le->text, text);
	le->cursor = le->text.len;
}

void
lineedit_insert(struct lineedit *le, const char *bytes, size_t n)
{
	size_t tail = le->text.len - le->cursor;

	strbuf_grow(&le->text, n);
	memmove(le->text.buf + le->cursor + n, le->text.buf + le->cursor, tail + 1);
	memcpy(le->text.buf + le->cursor, bytes, n);
	le->text.len += n;
	le->cursor += n;
}

static size_t
prev_char(const struct lineedit *le, size_t at)
{
	if (at == 0)
		return 0;
	at--;
	while (at > 0 && ((unsigned char)le->text.buf[at] & 0xc0) == 0x80)
		at--;
	return at;
}

static size_t
next_char(const struct lineedit *le, size_t at)
{
	size_t len;

	if (at >= le->text.len)
		return le->text.len;
	utf8_decode(le->text.buf + at, le->text.len - at, &len);
	return at + len;
}

static void
delete_range(struct lineedit *le, size_t from, size_t to)
{
	memmove(le->text.buf + from, le->text.buf + to, le->text.len - to + 1);
	le->text.len -= to - from;
	le->cursor = from;
}

bool
lineedit_key(struct lineedit *le, enum lineedit_key key)
{
	size_t old = le->cursor, oldlen = le->text.len, at;

	switch (key) {
	case LE_LEFT:
		le->cursor = prev_char(le, le->cursor);
		break;
	case LE_RIGHT:
		le->cursor = next_char(le, le->cursor);
		break;
	case LE_HOME:
		le->cursor = 0;
		break;
	case LE_END:
		le->cursor = le->text.len;
		break;
	case LE_BACKSPACE:
		if (le->cursor)
			delete_range(le, prev_char(le, le->cursor), le->cursor);
		break;
	case LE_DELETE:
		if (le->cursor < le->text.len)
			delete_range(le, le->cursor, next_char(le, le->cursor));
		break;
	case LE_KILL_LINE:
		delete_range(le, 0, le->cursor);
		break;
	case LE_KILL_WORD:
		at = le->cursor;
		while (at > 0 && le->text.buf[at - 1] == ' ')
			at--;
		while (at > 0 && le->text.buf[at - 1] != ' ' && le->text.buf[at - 1] != '/')
			at--;
		if (at == le->cursor && at > 0)
			at--;
		delete_range(le, at, le->cursor);
		break;
	case LE_KILL_TO_END:
		strbuf_setlen(&le->text, le->cursor);
		break;
	}
	return le->cursor != old || le->text.len != oldlen;
}

int
lineedit_cursor_col(const struct lineedit *le, bool ascii)
{
	char *head = xstrndup(le->text.buf, le->cursor);
	int w = text_width(head, ascii);

	free(head);
	return w;
}
