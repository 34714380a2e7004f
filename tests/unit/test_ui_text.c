/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The TUI's pure text and layout logic: UTF-8 widths and fitting, word
 * wrapping, the line editor, scrolling lists, pane layout, the key bar,
 * the progress bar. The modules come from libfswb.a
 * (src/view).
 */
#include "testlib.h"

#include <locale.h>
#include <stdlib.h>
#include <string.h>

#include "view/layout.h"
#include "view/text.h"

static void
fit(const char *s, int w, bool ascii, bool ell, const char *want, int want_cols)
{
	struct strbuf sb = STRBUF_INIT;
	int cols = text_fit(s, w, ascii, ell, &sb);

	assert_string_equal(sb.buf, want);
	assert_int_equal(cols, want_cols);
	strbuf_release(&sb);
}

static void
test_fit(void **state)
{
	fit("hello", 10, false, true, "hello", 5);
	fit("hello world", 8, false, true, "hello w\xe2\x80\xa6", 8);
	fit("hello world", 8, true, true, "hello w~", 8);
	fit("hello world", 8, false, false, "hello wo", 8);
	/* control characters and bad UTF-8 never reach the screen */
	fit("a\033[2Jb", 10, false, true, "a?[2Jb", 6);
	fit("x\xff\xfey", 10, false, true, "x??y", 4);
	/* tabs to the next multiple of 8 */
	fit("a\tb", 20, false, true, "a       b", 9);
	/* ASCII: marks spelled out or '?' */
	fit("\xe2\x9c\x93 ok \xe2\x80\xa6", 20, true, true, "? ok ...", 8);
	fit("\xe2\x94\x80\xe2\x94\x80", 20, true, true, "--", 2);
	/* wide characters count two columns and are never cut in half */
	fit("\xe6\x97\xa5\xe6\x9c\xac", 3, false, false, "\xe6\x97\xa5", 2);
	assert_int_equal(text_width("\xe6\x97\xa5\xe6\x9c\xac", false), 4);
	assert_int_equal(text_width("\xe2\x9c\x93", false), 1);
	fit("abc", 0, false, true, "", 0);
}

static void
test_slice(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	assert_int_equal(text_slice("0123456789", 3, 4, false, &sb), 4);
	assert_string_equal(sb.buf, "3456");
	strbuf_reset(&sb);
	assert_int_equal(text_slice("0123", 10, 4, false, &sb), 0);
	assert_string_equal(sb.buf, "");
	strbuf_release(&sb);
}

static void
test_wrap(void **state)
{
	struct strvec l = STRVEC_INIT;

	text_wrap("the quick brown fox jumps over the lazy dog", 10, false, &l);
	assert_int_equal(l.n, 5);
	assert_string_equal(l.v[0], "the quick");
	assert_string_equal(l.v[1], "brown fox");
	assert_string_equal(l.v[4], "dog");
	for (size_t i = 0; i < l.n; i++)
		assert_true(text_width(l.v[i], false) <= 10);
	strvec_clear(&l);

	/* a word longer than the line is broken */
	text_wrap("abcdefghijklmnop", 6, false, &l);
	assert_int_equal(l.n, 3);
	assert_string_equal(l.v[0], "abcdef");
	assert_string_equal(l.v[2], "mnop");
	strvec_clear(&l);

	/* newlines end lines; indentation carries over */
	text_wrap("  - one two three\nfour", 9, true, &l);
	assert_string_equal(l.v[0], "  - one");
	assert_string_equal(l.v[1], "  two");
	assert_string_equal(l.v[2], "  three");
	assert_string_equal(l.v[3], "four");
	strvec_clear(&l);

	text_wrap("", 10, false, &l);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.v[0], "");
	strvec_clear(&l);
}

static void
test_lineedit(void **state)
{
	struct lineedit le;

	lineedit_init(&le, "generic");
	lineedit_insert(&le, "/00", 3);
	assert_string_equal(le.text.buf, "generic/00");
	assert_true(lineedit_key(&le, LE_BACKSPACE));
	assert_string_equal(le.text.buf, "generic/0");
	lineedit_key(&le, LE_HOME);
	assert_false(lineedit_key(&le, LE_BACKSPACE));
	lineedit_key(&le, LE_DELETE);
	assert_string_equal(le.text.buf, "eneric/0");
	lineedit_key(&le, LE_END);
	lineedit_key(&le, LE_KILL_WORD);
	assert_string_equal(le.text.buf, "eneric/");
	/* multibyte characters move and delete whole */
	lineedit_set(&le, "a\xc3\xa9");
	lineedit_key(&le, LE_LEFT);
	assert_int_equal(le.cursor, 1);
	assert_int_equal(lineedit_cursor_col(&le, false), 1);
	lineedit_key(&le, LE_DELETE);
	assert_string_equal(le.text.buf, "a");
	lineedit_key(&le, LE_KILL_LINE);
	assert_string_equal(le.text.buf, "");
	lineedit_release(&le);
}

static void
test_listpos(void **state)
{
	struct listpos lp = { 0 };

	assert_false(listpos_move(&lp, LM_UP, 100, 10));
	assert_true(listpos_move(&lp, LM_PGDN, 100, 10));
	assert_int_equal(lp.sel, 9);
	for (int i = 0; i < 5; i++)
		listpos_move(&lp, LM_DOWN, 100, 10);
	assert_int_equal(lp.sel, 14);
	assert_true(lp.sel >= lp.top && lp.sel < lp.top + 10);
	listpos_move(&lp, LM_END, 100, 10);
	assert_int_equal(lp.sel, 99);
	assert_int_equal(lp.top, 90);
	/* the list shrinks: the selection stays inside */
	listpos_fix(&lp, 5, 10);
	assert_int_equal(lp.sel, 4);
	assert_int_equal(lp.top, 0);
	size_t row;
	assert_true(listpos_hit(&lp, 5, 2, &row));
	assert_int_equal(row, 2);
	assert_false(listpos_hit(&lp, 5, 7, &row));
	listpos_fix(&lp, 0, 10);
	assert_int_equal(lp.sel, 0);
}

static void
test_run_layout(void **state)
{
	struct run_layout l;

	run_layout(4, 18, 80, &l);
	assert_true(l.side_by_side);
	assert_int_equal(l.tests.w, 34);
	assert_int_equal(l.log.x, 35);
	assert_int_equal(l.tests.w + 1 + l.log.w, 80);
	run_layout(4, 54, 200, &l);
	assert_int_equal(l.tests.w, 60);
	assert_int_equal(l.log.w, 139);
	/* narrow: stacked, and the panes fill the body */
	run_layout(4, 18, 60, &l);
	assert_false(l.side_by_side);
	assert_int_equal(l.tests.h + 1 + l.log.h, 18);
	assert_int_equal(l.log.y, l.sep + 1);
	run_layout(4, 1, 10, &l);
	assert_true(l.tests.h >= 1 && l.log.h >= 1);
}

static void
test_keybar(void **state)
{
	static const struct keybar_item items[] = {
		{ "Enter", "next", '\n' },
		{ "?", "docs", '?' },
		{ "q", "quit", 'q' },
	};
	int xs[3], ws[3];

	assert_int_equal(keybar_place(items, 3, 80, xs, ws), 3);
	assert_int_equal(xs[0], 1);
	assert_int_equal(ws[0], 10);
	assert_int_equal(xs[1], 14);
	assert_int_equal(keybar_hit(items, 3, xs, ws, 3), '\n');
	assert_int_equal(keybar_hit(items, 3, xs, ws, 15), '?');
	assert_int_equal(keybar_hit(items, 3, xs, ws, 79), 0);
	/* what does not fit is left out, not cut */
	assert_int_equal(keybar_place(items, 3, 19, xs, ws), 1);
	assert_int_equal(ws[1], 0);
	assert_int_equal(keybar_hit(items, 3, xs, ws, 15), 0);
}

static void
test_progress(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	char buf[32];

	progress_bar(4, 7, 7, "#", ".", &sb);
	assert_string_equal(sb.buf, "####...");
	strbuf_reset(&sb);
	progress_bar(0, 0, 3, "#", ".", &sb);
	assert_string_equal(sb.buf, "...");
	strbuf_reset(&sb);
	progress_bar(9, 7, 3, "#", ".", &sb);
	assert_string_equal(sb.buf, "###");
	strbuf_release(&sb);
	assert_string_equal(format_eta(-1, buf, sizeof(buf)), "?");
	assert_string_equal(format_eta(30, buf, sizeof(buf)), "<1 min");
	assert_string_equal(format_eta(31 * 60, buf, sizeof(buf)), "~31 min");
	assert_string_equal(format_eta(125 * 60, buf, sizeof(buf)), "~2 h 05 min");
	assert_string_equal(format_clock(761, buf, sizeof(buf)), "12:41");
	assert_string_equal(format_clock(3723, buf, sizeof(buf)), "1:02:03");
}

static void
overstrike(const char *in, const char *want)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_adds(&sb, ">");
	text_overstrike(in, strlen(in), &sb);
	assert_string_equal(sb.buf + 1, want);
	assert_int_equal(sb.buf[0], '>'); /* what was in the buffer before stays */
	strbuf_release(&sb);
}

static void
test_overstrike(void **state)
{
	/* mke2fs's progress: each count written over the last, then "done" and blanks */
	overstrike("Writing inode tables: 0/8\b\b\b1/8\b\b\b8/8\b\b\bdone     ",
		   "Writing inode tables: done     ");
	overstrike("50%\r60%\r100%", "100%");
	overstrike("abcdef\rXY", "XYcdef");			  /* overwritten, not cleared */
	overstrike("ab\b\b\b\bc", "cb");			  /* not back past the start */
	overstrike("line\r", "line");				  /* a CRLF line ending */
	overstrike("na\xc3\xafve\b\b\b\xc3\xaf", "na\xc3\xafve"); /* a character, not a byte */
	overstrike("a\x1b[2Jb", "a\x1b[2Jb"); /* the rest is left to the filter */
	overstrike("", "");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fit),	   cmocka_unit_test(test_slice),
		cmocka_unit_test(test_wrap),	   cmocka_unit_test(test_lineedit),
		cmocka_unit_test(test_listpos),	   cmocka_unit_test(test_run_layout),
		cmocka_unit_test(test_keybar),	   cmocka_unit_test(test_progress),
		cmocka_unit_test(test_overstrike),
	};

	if (!setlocale(LC_ALL, "C.UTF-8"))
		setlocale(LC_ALL, "en_US.UTF-8");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
