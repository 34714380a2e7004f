/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "testlib.h"

#include <stdlib.h>
#include <string.h>

#include "core/loop.h"
#include "core/spawn.h"
#include "core/util.h"

static void
test_xalloc(void **state)
{
	char *s = xstrdup("hello");
	char *n = xstrndup("hello world", 5);
	char *f = xasprintf("%s-%d-%05.1f", "x", 42, 3.14159);
	int *z = xcalloc(16, sizeof(int));
	char *m = xmalloc(0);

	assert_string_equal(s, "hello");
	assert_string_equal(n, "hello");
	assert_string_equal(f, "x-42-003.1");
	for (int i = 0; i < 16; i++)
		assert_int_equal(z[i], 0);
	z = xrealloc(z, 1000 * sizeof(int));
	z[999] = 7;
	assert_int_equal(z[0], 0);
	assert_int_equal(z[999], 7);
	free(s);
	free(n);
	free(f);
	free(z);
	free(m);
}

static void
test_alloc_grow(void **state)
{
	int *arr = NULL;
	size_t alloc = 0;

	ALLOC_GROW(arr, 1, alloc);
	assert_true(alloc >= 1);
	arr[0] = 1;
	ALLOC_GROW(arr, 100, alloc);
	assert_true(alloc >= 100);
	for (int i = 0; i < 100; i++)
		arr[i] = i;
	ALLOC_GROW(arr, 50, alloc); /* never shrinks */
	assert_true(alloc >= 100);
	assert_int_equal(arr[99], 99);
	free(arr);
}

static void
test_strbuf(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	char *s;

	/* Empty but usable before any allocation. */
	assert_non_null(sb.buf);
	assert_string_equal(sb.buf, "");
	assert_int_equal(sb.len, 0);
	strbuf_setlen(&sb, 0);
	strbuf_reset(&sb);
	assert_string_equal(sb.buf, "");

	strbuf_adds(&sb, "abc");
	strbuf_addch(&sb, 'd');
	strbuf_add(&sb, "efgh", 2);
	strbuf_add(&sb, "zzz", 0);
	strbuf_addf(&sb, "[%d:%s]", 12, "x");
	assert_string_equal(sb.buf, "abcdef[12:x]");
	assert_int_equal(sb.len, 12);
	strbuf_setlen(&sb, 3);
	assert_string_equal(sb.buf, "abc");
	strbuf_drop_front(&sb, 1);
	assert_string_equal(sb.buf, "bc");
	strbuf_drop_front(&sb, 2);
	assert_string_equal(sb.buf, "");
	strbuf_adds(&sb, "abc");
	strbuf_reset(&sb);
	assert_string_equal(sb.buf, "");
	assert_int_equal(sb.len, 0);

	/* Embedded NULs are kept; the buffer is still terminated. */
	strbuf_add(&sb, "a\0b", 3);
	assert_int_equal(sb.len, 3);
	assert_memory_equal(sb.buf, "a\0b", 3);
	assert_int_equal(sb.buf[3], '\0');
	strbuf_reset(&sb);

	/* Growth across many reallocations. */
	for (int i = 0; i < 10000; i++)
		strbuf_addf(&sb, "%04d", i % 10000);
	assert_int_equal(sb.len, 40000);
	assert_memory_equal(sb.buf, "000000010002", 12);
	assert_memory_equal(sb.buf + 39996, "9999", 4);
	assert_true(sb.alloc > sb.len);
	strbuf_grow(&sb, 100000);
	assert_true(sb.alloc >= sb.len + 100001);
	assert_int_equal(sb.len, 40000);

	/* A long formatted string in one go. */
	strbuf_reset(&sb);
	strbuf_addf(&sb, "%5000d|", 1);
	assert_int_equal(sb.len, 5001);
	assert_int_equal(sb.buf[4999], '1');

	s = strbuf_detach(&sb);
	assert_int_equal(strlen(s), 5001);
	assert_string_equal(sb.buf, "");
	assert_int_equal(sb.len, 0);
	free(s);

	/* Detaching an empty buffer gives an owned "". */
	s = strbuf_detach(&sb);
	assert_string_equal(s, "");
	free(s);

	/* Released buffers are reusable. */
	strbuf_adds(&sb, "again");
	strbuf_release(&sb);
	assert_string_equal(sb.buf, "");
	strbuf_adds(&sb, "and again");
	assert_string_equal(sb.buf, "and again");
	strbuf_release(&sb);
	strbuf_init(&sb);
	strbuf_release(&sb);
}

static void
test_strbuf_utf8(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	/* one code point of each length, at the edges of the lengths */
	strbuf_add_utf8(&sb, 'A');
	strbuf_add_utf8(&sb, 0x7f);
	strbuf_add_utf8(&sb, 0xe9); /* é */
	strbuf_add_utf8(&sb, 0x7ff);
	strbuf_add_utf8(&sb, 0x2713); /* ✓ */
	strbuf_add_utf8(&sb, 0xffff);
	strbuf_add_utf8(&sb, 0x1f600); /* 😀 */
	strbuf_add_utf8(&sb, 0x10ffff);
	assert_string_equal(sb.buf, "A\x7f\xc3\xa9\xdf\xbf\xe2\x9c\x93\xef\xbf\xbf"
				    "\xf0\x9f\x98\x80\xf4\x8f\xbf\xbf");
	strbuf_release(&sb);
}

static void
test_strvec(void **state)
{
	struct strvec sv = STRVEC_INIT, copy = STRVEC_INIT;
	const char *const more[] = { "c", "d", NULL };
	char *j;

	assert_non_null(sv.v);
	assert_null(sv.v[0]);
	j = strvec_join(&sv, ",");
	assert_string_equal(j, "");
	free(j);
	assert_false(strvec_contains(&sv, ""));

	strvec_push(&sv, "a");
	strvec_pushf(&sv, "b%d", 2);
	strvec_pushv(&sv, more);
	strvec_pushv(&sv, NULL);
	assert_int_equal(sv.n, 4);
	assert_string_equal(sv.v[0], "a");
	assert_string_equal(sv.v[1], "b2");
	assert_string_equal(sv.v[3], "d");
	assert_null(sv.v[4]);
	assert_true(strvec_contains(&sv, "b2"));
	assert_false(strvec_contains(&sv, "b"));
	j = strvec_join(&sv, ", ");
	assert_string_equal(j, "a, b2, c, d");
	free(j);

	/* sorting is bytewise, and keeps the NULL at the end */
	{
		struct strvec u = STRVEC_INIT;
		char *k;

		strvec_split(&u, "b a B 10 9", " ");
		strvec_sort(&u);
		k = strvec_join(&u, " ");
		assert_string_equal(k, "10 9 B a b");
		assert_null(u.v[u.n]);
		free(k);
		strvec_clear(&u);
	}

	/* Copies own their strings. */
	strvec_push(&copy, "old");
	strvec_copy(&copy, &sv);
	assert_int_equal(copy.n, 4);
	assert_false(strvec_contains(&copy, "old"));
	assert_true(copy.v[0] != sv.v[0]);
	strvec_clear(&sv);
	assert_int_equal(sv.n, 0);
	assert_null(sv.v[0]);
	assert_string_equal(copy.v[2], "c");
	strvec_clear(&copy);

	/* Split drops empty fields, at any separator. */
	strvec_split(&sv, "  generic/001,, generic/002\txfs/100  ", " ,\t");
	assert_int_equal(sv.n, 3);
	assert_string_equal(sv.v[0], "generic/001");
	assert_string_equal(sv.v[1], "generic/002");
	assert_string_equal(sv.v[2], "xfs/100");
	/* Splitting appends. */
	strvec_split(&sv, "one", ",");
	assert_int_equal(sv.n, 4);
	assert_string_equal(sv.v[3], "one");
	j = strvec_join(&sv, "|");
	assert_string_equal(j, "generic/001|generic/002|xfs/100|one");
	free(j);
	strvec_clear(&sv);
	strvec_split(&sv, ",,,", ",");
	assert_int_equal(sv.n, 0);
	strvec_split(&sv, "", ",");
	assert_int_equal(sv.n, 0);

	/* Many pushes. */
	for (int i = 0; i < 1000; i++)
		strvec_pushf(&sv, "%d", i);
	assert_int_equal(sv.n, 1000);
	assert_string_equal(sv.v[999], "999");
	assert_null(sv.v[1000]);
	assert_true(strvec_contains(&sv, "500"));
	strvec_clear(&sv);
}

static void
test_str_helpers(void **state)
{
	char buf[64];

	assert_true(str_startswith("generic/001", "generic/"));
	assert_true(str_startswith("abc", ""));
	assert_false(str_startswith("gen", "generic"));
	assert_true(str_endswith("test.out.bad", ".bad"));
	assert_true(str_endswith("abc", ""));
	assert_false(str_endswith("bad", ".bad"));

	strcpy(buf, " \t hello world \n ");
	assert_string_equal(str_trim(buf), "hello world");
	strcpy(buf, "   ");
	assert_string_equal(str_trim(buf), "");
	strcpy(buf, "x");
	assert_string_equal(str_trim(buf), "x");
}

static void
size_ok(const char *text, uint64_t want)
{
	uint64_t got = 12345;

	if (parse_size(text, &got) != OK)
		fail_msg("parse_size(\"%s\"): %s", text, error_msg());
	if (got != want)
		fail_msg("parse_size(\"%s\") = %llu, want %llu", text, (unsigned long long)got,
			 (unsigned long long)want);
}

static void
size_bad(const char *text)
{
	uint64_t got = 12345;
	char *want;

	error_clear();
	if (parse_size(text, &got) != ERR_INVALID)
		fail_msg("parse_size(\"%s\") accepted it as %llu", text, (unsigned long long)got);
	assert_int_equal(got, 12345);
	want = xasprintf("'%s' is not a size", text);
	if (!strstr(error_msg(), want))
		fail_msg("parse_size(\"%s\"): message '%s' does not name it", text, error_msg());
	free(want);
}

static void
test_parse_size(void **state)
{
	size_ok("0", 0);
	size_ok("512", 512);
	size_ok("7B", 7);
	size_ok("64K", 64 << 10);
	size_ok("64k", 64 << 10);
	size_ok("64KiB", 64 << 10);
	size_ok("64KB", 64 << 10);
	size_ok("512M", 512ull << 20);
	size_ok("5G", 5ull << 30);
	size_ok("5g", 5ull << 30);
	size_ok("2GiB", 2ull << 30);
	size_ok("1.5T", 3ull << 39);
	size_ok("0.5M", 512 << 10);
	size_ok("1P", 1ull << 50);
	size_ok(" 10G", 10ull << 30);
	size_ok("10 G", 10ull << 30);
	size_ok("10G ", 10ull << 30);
	size_ok("18446744073709549568", 18446744073709549568ull);

	size_bad("");
	size_bad("G");
	size_bad("abc");
	size_bad("-5G");
	size_bad("5X");
	size_bad("5GiBs");
	size_bad("5 GB extra");
	size_bad("5BB");
	size_bad("5iB");
	size_bad(".5G");
	size_bad("16384P");
	size_bad("18446744073709551616");
	size_bad("5G; rm -rf /");
	/* The message says how to write one. */
	size_bad("lots");
	assert_string_equal(error_msg(), "'lots' is not a size; write it like 512M, 5G or 2GiB");
}

static void
size_str(uint64_t bytes, const char *want)
{
	char buf[32];

	assert_string_equal(format_size(bytes, buf, sizeof(buf)), want);
}

static void
test_format_size(void **state)
{
	char small[4];

	size_str(0, "0 B");
	size_str(7, "7 B");
	size_str(1023, "1023 B");
	size_str(1024, "1 KiB");
	size_str(1536, "1.5 KiB");
	size_str(12 << 10, "12 KiB");
	size_str(512ull << 20, "512 MiB");
	size_str(5ull << 30, "5 GiB");
	size_str(3ull << 29, "1.5 GiB");
	size_str(1ull << 40, "1 TiB");
	size_str(1ull << 50, "1 PiB");
	size_str(1ull << 60, "1024 PiB");
	/* It round-trips through parse_size for whole units. */
	{
		uint64_t back;

		assert_int_equal(parse_size("512 MiB", &back), OK);
		assert_int_equal(back, 512ull << 20);
	}
	/* Never overruns the buffer. */
	assert_string_equal(format_size(5ull << 30, small, sizeof(small)), "5 G");
}

static void
dur_str(double s, const char *want)
{
	char buf[32];

	assert_string_equal(format_duration(s, buf, sizeof(buf)), want);
}

static void
test_format_duration(void **state)
{
	dur_str(0, "0s");
	dur_str(0.4, "0s");
	dur_str(0.6, "1s");
	dur_str(-5, "0s");
	dur_str(42, "42s");
	dur_str(59.4, "59s");
	dur_str(59.6, "1m00s");
	dur_str(60, "1m00s");
	dur_str(185, "3m05s");
	dur_str(3599, "59m59s");
	dur_str(3600, "1h00m");
	dur_str(3720, "1h02m");
	dur_str(90000, "25h00m");
}

static void
quote_is(const char *s, const char *want)
{
	struct strbuf sb = STRBUF_INIT;

	sq_quote(&sb, s);
	assert_string_equal(sb.buf, want);
	strbuf_release(&sb);
}

static void
test_sq_quote_forms(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	const char *argv[] = { "qemu-system-x86_64",  "-m", "2G",   "-append",
			       "console=ttyS0 quiet", "",   "it's", NULL };

	quote_is("plain", "plain");
	quote_is("generic/001", "generic/001");
	quote_is("a=b,c:d@e%f+g", "a=b,c:d@e%f+g");
	quote_is("", "''");
	quote_is("a b", "'a b'");
	quote_is("it's", "'it'\\''s'");
	quote_is("'", "''\\'''");
	quote_is("$HOME", "'$HOME'");
	quote_is("~", "'~'");
	quote_is("*", "'*'");

	/* Appends. */
	strbuf_adds(&sb, "cmd ");
	sq_quote(&sb, "x y");
	assert_string_equal(sb.buf, "cmd 'x y'");
	strbuf_reset(&sb);
	sq_quote_argv(&sb, argv);
	assert_string_equal(sb.buf, "qemu-system-x86_64 -m 2G -append 'console=ttyS0 quiet' '' "
				    "'it'\\''s'");
	strbuf_release(&sb);
}

static const char *const nasty[] = {
	"plain",
	"",
	"two words",
	"  leading and trailing  ",
	"it's",
	"'",
	"''",
	"'''quoted'''",
	"\"double\"",
	"$HOME",
	"${HOME}",
	"$(echo pwned)",
	"`echo pwned`",
	"back\\slash",
	"\\",
	"new\nline",
	"\n",
	"tab\there",
	"*",
	"?",
	"[a-z]",
	"~",
	"~root",
	"!",
	"!!",
	"a;b",
	"a&&b",
	"a|b",
	"a>b",
	"<a",
	"#comment",
	"-n",
	"--",
	"%s%d",
	"a=b c",
	"x'y\"z`w$v\\u",
	"caf\xc3\xa9",
	"\x01\x7f",
};

/* sq_quote's output, run by a real shell, gives back the very bytes. */
static void
test_sq_quote_round_trip(void **state)
{
	struct loop *loop = loop_new();
	struct strbuf cmd = STRBUF_INIT, out = STRBUF_INIT;
	struct child_exit ex;

	for (size_t i = 0; i < ARRAY_SIZE(nasty); i++) {
		const char *argv[] = { "/bin/sh", "-c", NULL, NULL };

		strbuf_reset(&cmd);
		strbuf_adds(&cmd, "printf %s ");
		sq_quote(&cmd, nasty[i]);
		argv[2] = cmd.buf;
		strbuf_reset(&out);
		assert_int_equal(spawn_run(loop, argv, NULL, true, 4096, &out, &ex), OK);
		if (!ex.exited || ex.code != 0)
			fail_msg("sh -c \"%s\" failed: %s", cmd.buf, out.buf);
		if (out.len != strlen(nasty[i]) || memcmp(out.buf, nasty[i], out.len))
			fail_msg("sh -c \"%s\" printed \"%s\"", cmd.buf, out.buf);
	}

	/* The whole argv as one command line: each word comes back as itself. */
	{
		struct strvec sv = STRVEC_INIT;
		struct strbuf want = STRBUF_INIT;
		const char *argv[] = { "/bin/sh", "-c", NULL, NULL };

		strvec_push(&sv, "printf");
		strvec_push(&sv, "<%s>");
		for (size_t i = 0; i < ARRAY_SIZE(nasty); i++) {
			strvec_push(&sv, nasty[i]);
			strbuf_addf(&want, "<%s>", nasty[i]);
		}
		strbuf_reset(&cmd);
		sq_quote_argv(&cmd, (const char *const *)sv.v);
		argv[2] = cmd.buf;
		strbuf_reset(&out);
		assert_int_equal(spawn_run(loop, argv, NULL, true, 65536, &out, &ex), OK);
		assert_true(ex.exited && ex.code == 0);
		assert_int_equal(out.len, want.len);
		assert_memory_equal(out.buf, want.buf, want.len);
		strvec_clear(&sv);
		strbuf_release(&want);
	}
	strbuf_release(&cmd);
	strbuf_release(&out);
	loop_free(loop);
}

static void
test_edit_distance(void **state)
{
	assert_int_equal(edit_distance("", ""), 0);
	assert_int_equal(edit_distance("abc", ""), 3);
	assert_int_equal(edit_distance("", "abc"), 3);
	assert_int_equal(edit_distance("same", "same"), 0);
	assert_int_equal(edit_distance("kitten", "sitting"), 3);
	assert_int_equal(edit_distance("sitting", "kitten"), 3);
	assert_int_equal(edit_distance("flaw", "lawn"), 2);
	assert_int_equal(edit_distance("ext4", "ext3"), 1);
	assert_int_equal(edit_distance("xfs", "fsx"), 2);
	assert_int_equal(edit_distance("abc", "xyz"), 3);
	assert_int_equal(edit_distance("btrfs", "brtfs"), 2);
}

static void
test_closest_match(void **state)
{
	const char *const fs[] = { "ext4", "xfs", "btrfs", "f2fs", "overlay" };
	const char *const cmds[] = { "run", "list", "results", "build", "doctor" };

	assert_string_equal(closest_match("ext5", fs, ARRAY_SIZE(fs)), "ext4");
	assert_string_equal(closest_match("ext4", fs, ARRAY_SIZE(fs)), "ext4");
	assert_string_equal(closest_match("xsf", fs, ARRAY_SIZE(fs)), "xfs");
	assert_string_equal(closest_match("btfrs", fs, ARRAY_SIZE(fs)), "btrfs");
	assert_string_equal(closest_match("overlya", fs, ARRAY_SIZE(fs)), "overlay");
	assert_string_equal(closest_match("reslts", cmds, ARRAY_SIZE(cmds)), "results");
	assert_string_equal(closest_match("bulid", cmds, ARRAY_SIZE(cmds)), "build");
	/* Ties go to the first candidate. */
	assert_string_equal(closest_match("lis", cmds, ARRAY_SIZE(cmds)), "list");
	/* Nothing close. */
	assert_null(closest_match("qqqqqqqqqqqq", fs, ARRAY_SIZE(fs)));
	assert_null(closest_match("zzzzzzzz", cmds, ARRAY_SIZE(cmds)));
	assert_null(closest_match("ext4", fs, 0));
	/* a far name is not a typo: at most a third of its length, plus one */
	assert_null(closest_match("nosuchfs", fs, ARRAY_SIZE(fs)));
	assert_null(closest_match("nosuchfs", cmds, ARRAY_SIZE(cmds)));
	/* the start of a name is close, however far the rest */
	assert_string_equal(closest_match("over", fs, ARRAY_SIZE(fs)), "overlay");
	assert_string_equal(closest_match("doc", cmds, ARRAY_SIZE(cmds)), "doctor");
}

static void
test_close_matches(void **state)
{
	const char *const tests[] = { "generic/001", "generic/010", "generic/100", "generic/011",
				      "xfs/001" };
	const char *out[3];

	/* names it starts first, then the closest, ties in the order given, at most max */
	assert_int_equal(close_matches("generic/01", tests, ARRAY_SIZE(tests), out, 3), 3);
	assert_string_equal(out[0], "generic/010");
	assert_string_equal(out[1], "generic/011");
	assert_string_equal(out[2], "generic/001");
	assert_int_equal(close_matches("generic/0011", tests, ARRAY_SIZE(tests), out, 2), 2);
	assert_string_equal(out[0], "generic/001");
	assert_string_equal(out[1], "generic/011");
	assert_int_equal(close_matches("xfs/01", tests, ARRAY_SIZE(tests), out, 3), 1);
	assert_string_equal(out[0], "xfs/001");
	assert_int_equal(close_matches("zzzzzzzz", tests, ARRAY_SIZE(tests), out, 3), 0);
	assert_int_equal(close_matches("generic/001", tests, ARRAY_SIZE(tests), out, 0), 0);
}

/* The terminal filter: no escape sequence of any kind survives it. */
static void
test_term_clean(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "plain text, tab\tand newline\n", "plain text, tab\tand newline\n" },
		{ "utf-8: \xc3\xa9t\xc3\xa9 \xe2\x80\xa6 \xf0\x9f\x90\xa7",
		  "utf-8: \xc3\xa9t\xc3\xa9 \xe2\x80\xa6 \xf0\x9f\x90\xa7" },
		/* CSI: clear the screen; OSC 0: the title; OSC 52: the clipboard */
		{ "\033[2J\033[H", "^[[2J^[[H" },
		{ "\033]0;pwned\007", "^[]0;pwned^G" },
		{ "\033]52;c;aGk=\033\\", "^[]52;c;aGk=^[\\" },
		{ "a\rb\bc\x7f", "a^Mb^Hc^?" },
		/* C1 controls as UTF-8 (U+009B is CSI) and as raw bytes */
		{ "\xc2\x9b"
		  "2J",
		  "?2J" },
		{ "\x9b"
		  "2J \x90q",
		  "?2J ?q" },
		{ "\xc2\xa0nbsp", "\xc2\xa0nbsp" },
		/* invalid UTF-8: overlong, truncated, surrogate */
		{ "\xc0\xaf \xe2\x80 \xed\xa0\x80", "?? ?? ???" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char *out = term_clean(cases[i].in);

		if (strcmp(out, cases[i].out))
			fail_msg("case %zu: got '%s', want '%s'", i, out, cases[i].out);
		free(out);
	}
	for (long cp = 0; cp < 0x20; cp++)
		assert_true(term_is_control(cp));
	assert_true(term_is_control(0x7f));
	assert_true(term_is_control(0x9b));
	assert_false(term_is_control('a'));
	assert_false(term_is_control(0xa0));
}

static void
collect_line(void *data, char *line, size_t len, bool cut)
{
	strbuf_addf(data, "%s%.*s|", cut ? "CUT:" : "", (int)len, line);
}

static void
test_line_asm(void **state)
{
	struct strbuf got = STRBUF_INIT;
	struct line_asm la;

	(void)state;
	line_asm_init(&la, 4, false);
	/* bytes in any chunks: a line of exactly 4 is whole, a longer one cut at once */
	line_asm_feed(&la, "ab", 2, collect_line, &got);
	line_asm_feed(&la, "cd\nabcde", 8, collect_line, &got);
	assert_string_equal(got.buf, "abcd|CUT:abcd|");
	line_asm_feed(&la, "fgh\nx\r\ny", 9, collect_line, &got);
	line_asm_finish(&la, collect_line, &got);
	assert_string_equal(got.buf, "abcd|CUT:abcd|x\r|y|");
	line_asm_release(&la);

	strbuf_reset(&got);
	line_asm_init(&la, 100, true);
	line_asm_feed(&la, "10%\r20%\rdone\n", 14, collect_line, &got);
	line_asm_feed(&la, "half", 4, collect_line, &got);
	line_asm_reset(&la);
	line_asm_finish(&la, collect_line, &got);
	assert_string_equal(got.buf, "10%|20%|done|");
	line_asm_release(&la);
	strbuf_release(&got);
}

static void
test_os_release(void **state)
{
	const char *text = "NAME=\"Debian GNU/Linux\"\nID=debian\nVERSION_CODENAME=bookworm\n"
			   "PRETTY_NAME='Debian 12'\n";
	char *v;

	(void)state;
	v = os_release_value(text, "ID");
	assert_string_equal(v, "debian");
	free(v);
	v = os_release_value(text, "PRETTY_NAME");
	assert_string_equal(v, "Debian 12");
	free(v);
	v = os_release_value(text, "NAME");
	assert_string_equal(v, "Debian GNU/Linux");
	free(v);
	assert_null(os_release_value(text, "VERSION_ID"));
	assert_null(os_release_value(text, "VERSION"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_xalloc),
		cmocka_unit_test(test_alloc_grow),
		cmocka_unit_test(test_strbuf_utf8),
		cmocka_unit_test(test_strbuf),
		cmocka_unit_test(test_strvec),
		cmocka_unit_test(test_str_helpers),
		cmocka_unit_test(test_parse_size),
		cmocka_unit_test(test_format_size),
		cmocka_unit_test(test_format_duration),
		cmocka_unit_test(test_sq_quote_forms),
		cmocka_unit_test(test_sq_quote_round_trip),
		cmocka_unit_test(test_edit_distance),
		cmocka_unit_test(test_closest_match),
		cmocka_unit_test(test_close_matches),
		cmocka_unit_test(test_line_asm),
		cmocka_unit_test(test_os_release),
		cmocka_unit_test(test_term_clean),
	};

	return cmocka_run_group_tests(tests, test_setup_hermetic, test_teardown_hermetic);
}
