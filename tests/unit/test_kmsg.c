/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The kernel-log splitter: the fixtures' dmesg.txt and serial console fed
 * whole, a byte at a time and in random chunks; their markers against the
 * tests check started (from stdout.txt, through the check parser); the
 * slices on disk against the log cut by hand; the console's slices against
 * dmesg's; check's _check_dmesg words; line cleaning (CR LF, ANSI, NUL,
 * bad UTF-8, long lines); the tail; write failures; bounded memory.
 */
#include "testlib.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "core/event.h"
#include "core/paths.h"
#include "core/util.h"
#include "fstests/check_parser.h"
#include "fstests/kmsg.h"

static const char *const cases[] = {
	"A-plain-pass-notrun", "B-mismatch",	"D-exit-status",	   "E-fsck",
	"G-exclude",	       "H-interrupted", "H2-interrupted-mid-test", "J-loop",
};

/* ---- recording ---- */

struct line {
	char *text, *test;
	unsigned flags;
	enum event_type type;
};

struct recorder {
	struct line *v;
	size_t n, alloc;
};

static void
on_event(void *data, const struct event *ev)
{
	struct recorder *r = data;
	struct line *l;

	ALLOC_GROW(r->v, r->n + 1, r->alloc);
	l = &r->v[r->n++];
	l->type = ev->type;
	if (ev->type == EV_KMSG) {
		assert_non_null(ev->u.line.text);
		l->text = xstrdup(ev->u.line.text);
		l->test = ev->u.line.test ? xstrdup(ev->u.line.test) : NULL;
		l->flags = ev->u.line.flags;
	} else {
		assert_int_equal(ev->type, EV_WARNING);
		l->text = xstrdup(ev->u.error.message);
		l->test = NULL;
		l->flags = 0;
	}
}

static void
recorder_release(struct recorder *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->v[i].text);
		free(r->v[i].test);
	}
	free(r->v);
	memset(r, 0, sizeof(*r));
}

static void
serialize(const struct recorder *r, struct strbuf *sb)
{
	for (size_t i = 0; i < r->n; i++)
		strbuf_addf(sb, "%d %s %#x %s\n", (int)r->v[i].type,
			    r->v[i].test ? r->v[i].test : "-", r->v[i].flags, r->v[i].text);
}

static uint32_t
lcg(uint32_t *state)
{
	*state = *state * 1103515245u + 12345u;
	return *state >> 8;
}

/* Feed text in chunks (0: whole, 1: bytes, else random with that seed). */
static void
feed(struct kmsg *k, const char *text, size_t len, uint32_t how)
{
	size_t i = 0;
	uint32_t seed = how;

	while (i < len) {
		size_t n = how == 0   ? len
			   : how == 1 ? 1
				      : 1 + lcg(&seed) % (lcg(&seed) % 2 ? 7 : 3000);

		if (n > len - i)
			n = len - i;
		kmsg_feed(k, text + i, n);
		i += n;
	}
}

/* Split text into r; slices go below dir when it is not NULL. */
static void
split(const char *text, size_t len, uint32_t how, const char *dir, struct recorder *r)
{
	struct event_bus bus = EVENT_BUS_INIT;
	struct kmsg *k;

	memset(r, 0, sizeof(*r));
	event_bus_add(&bus, (struct listener){ on_event, r });
	k = kmsg_new(&bus, "ext4/4k");
	if (dir)
		assert_int_equal(kmsg_set_slice_dir(k, dir), OK);
	feed(k, text, len, how);
	kmsg_finish(k);
	assert_int_equal(kmsg_status(k, NULL), OK);
	kmsg_free(k);
	event_bus_release(&bus);
}

/* Whole, bytes and random chunks give the same events; r gets them. */
static void
split_every_way(const char *what, const char *text, size_t len, const char *dir, struct recorder *r)
{
	struct strbuf want = STRBUF_INIT, got = STRBUF_INIT;

	split(text, len, 0, dir, r);
	serialize(r, &want);
	for (uint32_t how = 1; how < 4; how++) {
		struct recorder other;

		split(text, len, how == 1 ? 1 : 0xfeed + how, NULL, &other);
		strbuf_reset(&got);
		serialize(&other, &got);
		if (strcmp(want.buf, got.buf))
			fail_msg("%s: the lines depend on how the input was cut", what);
		recorder_release(&other);
	}
	strbuf_release(&want);
	strbuf_release(&got);
}

/* ---- text checks ---- */

static bool
valid_utf8(const unsigned char *s)
{
	while (*s) {
		size_t n = *s < 0x80 ? 1 : (*s & 0xe0) == 0xc0 ? 2 : (*s & 0xf0) == 0xe0 ? 3 : 4;

		if (*s >= 0x80 && (*s < 0xc2 || *s > 0xf4))
			return false;
		for (size_t i = 1; i < n; i++)
			if ((s[i] & 0xc0) != 0x80)
				return false;
		s += n;
	}
	return true;
}

static void
assert_clean(const struct recorder *r)
{
	for (size_t i = 0; i < r->n; i++) {
		const char *t = r->v[i].text;

		assert_true(*t);
		for (const char *c = t; *c; c++)
			if ((unsigned char)*c < 0x20 && *c != '\t')
				fail_msg("control byte %#x in '%s'", *c, t);
		assert_true(valid_utf8((const unsigned char *)t));
		assert_false(t[strlen(t) - 1] == ' ');
	}
}

/* ---- the fixtures ---- */

static char *
case_read(const char *fixture_case, const char *rel, size_t *len)
{
	char *c = test_fixture(fixture_case);
	char *p = path_join(c, rel);
	char *text = NULL;
	size_t n;

	if (read_file(p, 1u << 26, &text, &n) != OK)
		fail_msg("cannot read '%s': %s", p, error_msg());
	free(p);
	free(c);
	if (len)
		*len = n;
	return text;
}

static bool
have_fixtures(void)
{
	char *p = test_fixture("A-plain-pass-notrun/dmesg.txt");
	bool ok = path_exists(p);

	if (!ok)
		fprintf(stderr, "# SKIP the fstests fixtures are not there (%s)\n", p);
	free(p);
	return ok;
}

/*
 * The tests check started, from its stdout, through the check parser (an
 * expunged test gets no marker: check skips it before writing one).
 */
static void
on_check_event(void *data, const struct event *ev)
{
	struct strvec *sv = data;

	if (ev->type == EV_TEST_START) {
		strvec_push(sv, ev->u.test_start.test);
	} else if (ev->type == EV_TEST_END && ev->u.test_end.status == TS_EXPUNGED) {
		assert_string_equal(sv->v[sv->n - 1], ev->u.test_end.test);
		free(sv->v[--sv->n]);
		sv->v[sv->n] = NULL;
	}
}

static void
started_tests(const char *fixture_case, struct strvec *out)
{
	struct event_bus bus = EVENT_BUS_INIT;
	struct check_parser *p;
	size_t len;
	char *text = case_read(fixture_case, "stdout.txt", &len);

	event_bus_add(&bus, (struct listener){ on_check_event, out });
	p = check_parser_new(&bus, NULL);
	check_parser_feed(p, text, len);
	check_parser_finish(p);
	check_parser_free(p);
	event_bus_release(&bus);
	free(text);
}

/*
 * The slice of test cut from dmesg text by hand: every line from each
 * marker of the test up to the next marker of any test.
 */
static char *
slice_by_hand(const char *text, const char *test)
{
	struct strbuf out = STRBUF_INIT;
	char *marker = xasprintf("] run fstests %s at ", test);
	bool in = false;
	const char *line = text;

	while (*line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		char *l = xstrndup(line, len);

		if (strstr(l, "] run fstests "))
			in = strstr(l, marker) != NULL;
		if (in) {
			strbuf_adds(&out, l);
			strbuf_addch(&out, '\n');
		}
		free(l);
		line += len + (nl ? 1 : 0);
	}
	free(marker);
	return strbuf_detach(&out);
}

/* The lines of a slice file that carry a kernel stamp. */
static char *
kernel_lines(const char *text)
{
	struct strbuf out = STRBUF_INIT;
	struct strvec lines = STRVEC_INIT;

	strvec_split(&lines, text, "\n");
	for (size_t i = 0; i < lines.n; i++) {
		const char *l = lines.v[i], *dot = strchr(l, '.'), *close = strchr(l, ']');

		if (l[0] == '[' && dot && close && close - dot == 7) {
			strbuf_adds(&out, l);
			strbuf_addch(&out, '\n');
		}
	}
	strvec_clear(&lines);
	return strbuf_detach(&out);
}

static void
check_case(const char *fixture_case)
{
	struct recorder dm, con;
	struct strvec started = STRVEC_INIT, markers = STRVEC_INIT, con_markers = STRVEC_INIT;
	char *dtext, *ctext;
	size_t dlen, clen;
	char *ddir = test_tmp("slices-dmesg"), *cdir = test_tmp("slices-console");
	char *what = xasprintf("%s/dmesg.txt", fixture_case);

	remove_tree(ddir);
	remove_tree(cdir);
	dtext = case_read(fixture_case, "dmesg.txt", &dlen);
	ctext = case_read(fixture_case, "console.log", &clen);
	split_every_way(what, dtext, dlen, ddir, &dm);
	free(what);
	what = xasprintf("%s/console.log", fixture_case);
	split_every_way(what, ctext, clen, cdir, &con);
	assert_clean(&dm);
	assert_clean(&con);

	/* dmesg: one line each, in order, no line flagged in these healthy runs */
	{
		size_t lines = 0;

		for (const char *c = dtext; *c; c++)
			lines += *c == '\n';
		assert_int_equal(dm.n, lines);
	}
	for (size_t i = 0; i < dm.n; i++) {
		const struct line *l = &dm.v[i];

		assert_int_equal(l->type, EV_KMSG);
		assert_int_equal(l->flags & KMSG_BAD, 0);
		if (l->flags & KMSG_MARKER) {
			strvec_push(&markers, l->test);
			assert_non_null(strstr(l->text, "] run fstests "));
		}
		if (!markers.n)
			assert_null(l->test);
		else
			assert_string_equal(l->test, markers.v[markers.n - 1]);
	}
	for (size_t i = 0; i < con.n; i++)
		if (con.v[i].flags & KMSG_MARKER)
			strvec_push(&con_markers, con.v[i].test);

	/* the markers are the tests check started, -L reruns included */
	started_tests(fixture_case, &started);
	assert_true(started.n > 0);
	assert_int_equal(markers.n, started.n);
	assert_int_equal(con_markers.n, started.n);
	for (size_t i = 0; i < started.n; i++) {
		assert_string_equal(markers.v[i], started.v[i]);
		assert_string_equal(con_markers.v[i], started.v[i]);
	}

	/* the slices on disk: as cut by hand; the console's hold dmesg's */
	for (size_t i = 0; i < started.n; i++) {
		char *dp = kmsg_slice_path(ddir, started.v[i]);
		char *cp = kmsg_slice_path(cdir, started.v[i]);
		char *want = slice_by_hand(dtext, started.v[i]);
		char *got = test_read(dp);
		char *con_text = test_read(cp);
		char *con_kernel = kernel_lines(con_text);

		assert_string_equal(got, want);
		if (i + 1 < started.n && strcmp(started.v[i], started.v[started.n - 1]))
			assert_string_equal(con_kernel, want);
		else /* the console goes on after dmesg was taken */
			assert_true(str_startswith(con_kernel, want));
		free(dp);
		free(cp);
		free(want);
		free(got);
		free(con_text);
		free(con_kernel);
	}

	recorder_release(&dm);
	recorder_release(&con);
	strvec_clear(&started);
	strvec_clear(&markers);
	strvec_clear(&con_markers);
	free(dtext);
	free(ctext);
	free(ddir);
	free(cdir);
	free(what);
}

static void
test_fixtures(void **state)
{
	(void)state;
	if (!have_fixtures())
		skip();
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		check_case(cases[i]);
}

/* With -T the start stamp on check's line is the marker's time. */
static void
test_fixture_times(void **state)
{
	struct recorder r;
	size_t len, slen;
	char *text, *out;
	const char *s;
	size_t found = 0;

	(void)state;
	if (!have_fixtures())
		skip();
	text = case_read("A-plain-pass-notrun", "dmesg.txt", &len);
	out = case_read("A-plain-pass-notrun", "stdout.txt", &slen);
	split(text, len, 0, NULL, &r);
	for (size_t i = 0; i < r.n; i++) {
		char *want;

		if (!(r.v[i].flags & KMSG_MARKER))
			continue;
		want = xasprintf("\n%s", r.v[i].test);
		s = strstr(out, want) ? strstr(strstr(out, want), "[") : NULL;
		assert_non_null(s);
		/* "[07:52:04]" against the marker's "... at 2026-12-03 07:52:04" */
		assert_memory_equal(s + 1, strrchr(r.v[i].text, ' ') + 1, 8);
		free(want);
		found++;
	}
	assert_int_equal(found, 5);
	recorder_release(&r);
	free(text);
	free(out);
}

/* ---- check's words ---- */

static void
test_classify(void **state)
{
	static const struct {
		const char *line;
		unsigned flags;
	} t[] = {
		{ "[   12.345678] EXT4-fs (vdb): mounted filesystem", 0 },
		{ "[    1.0] WARNING: CPU: 1 PID: 42 at fs/xfs/xfs_log.c:123 xlog_x+0x1/0x2 [xfs]",
		  KMSG_WARNING },
		{ "kernel BUG at fs/ext4/inode.c:1234!", KMSG_BUG },
		{ "[  3.000000] BUG: KASAN: use-after-free in ext4_x+0x1/0x2", KMSG_BUG },
		{ "BUG: soft lockup - CPU#0 stuck for 22s! [fsstress:123]", KMSG_BUG },
		{ "DEBUG: not a bug", 0 },
		{ "XFS_BUG: a word, not the word", 0 },
		{ "BUG kmalloc-64 (Not tainted): Objects remaining in kmalloc-64 on "
		  "__kmem_cache_shutdown()",
		  KMSG_BUG },
		{ "BUG kmalloc-64: nothing left", 0 },
		{ "Oops: 0000 [#1] PREEMPT SMP NOPTI", KMSG_OOPS },
		{ "general protection fault, probably for non-canonical address "
		  "0xdffffc0000000000: 0000 [#1] SMP KASAN",
		  KMSG_OOPS },
		{ "WARNING: possible recursive locking detected", KMSG_WARNING | KMSG_LOCKDEP },
		{ "WARNING: possible circular locking dependency detected",
		  KMSG_WARNING | KMSG_LOCKDEP },
		{ "WARNING: suspicious RCU usage", KMSG_WARNING | KMSG_LOCKDEP },
		{ "INFO: possible circular locking dependency detected", KMSG_LOCKDEP },
		{ "Kernel panic - not syncing: Fatal exception", KMSG_PANIC },
		{ "fsstress invoked oom-killer: gfp_mask=0x0", KMSG_OTHER_BAD },
		{ "oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null)", KMSG_OTHER_BAD },
		{ "Out of memory: Killed process 123 (fsstress)", KMSG_OTHER_BAD },
		{ "UBSAN: shift-out-of-bounds in fs/ext4/super.c:99:3", KMSG_OTHER_BAD },
		{ "INFO: task kworker/u4:2:77 blocked for more than 120 seconds.", KMSG_OTHER_BAD },
		{ "INFO: task is fine", 0 },
		/* check's own filter */
		{ "BUG: MAX_LOCKDEP_CHAIN_HLOCKS too low!", 0 },
		{ "BUG: MAX_STACK_TRACE_ENTRIES too low!", 0 },
		{ "XFS (vdb): WARNING: Reset corrupted AGFL on AG 0. 1 blocks leaked.", 0 },
		/* case matters, as in check's grep */
		{ "warning: lower case", 0 },
		{ "kernel panic", 0 },
		{ "run fstests generic/001 at 2026-12-03 07:52:04", 0 },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		unsigned f = kmsg_classify(t[i].line, strlen(t[i].line));

		if (f != t[i].flags)
			fail_msg("'%s': flags %#x, want %#x", t[i].line, f, t[i].flags);
	}
	/* the length is honoured: no match past it */
	assert_int_equal(kmsg_classify("WARNING:", 7), 0);
}

static void
test_marker(void **state)
{
	static const struct {
		const char *line;
		const char *test;
	} t[] = {
		{ "[   28.968477] run fstests generic/002 at 2026-12-03 08:03:27", "generic/002" },
		{ "run fstests xfs/1234-foo at 2026-12-03 08:03:27", "xfs/1234-foo" },
		{ "6,1234,5678901,-;run fstests btrfs/001 at 2026-12-03 08:03:27", "btrfs/001" },
		{ "<12>run fstests ext4/001 at x", "ext4/001" },
		{ "fstests: run fstests generic/001 at x", "generic/001" },
		{ "xrun fstests generic/001 at x", NULL },
		{ "run fstests generic/01 at x", NULL },
		{ "run fstests generic/001", NULL },
		{ "run fstests generic/001 on x", NULL },
		{ "run xfstest generic/001", NULL },
		{ "run fstests  generic/001 at x", NULL },
		{ "[ 1.0] run fstests bad at x run fstests generic/003 at y", "generic/003" },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		const char *name = NULL;
		size_t n = kmsg_marker(t[i].line, strlen(t[i].line), &name);

		if (!t[i].test) {
			if (n)
				fail_msg("'%s' is no marker", t[i].line);
			continue;
		}
		if (n != strlen(t[i].test) || memcmp(name, t[i].test, n))
			fail_msg("'%s': marker of '%.*s'", t[i].line, (int)n, n ? name : "");
	}
}

/* ---- cleaning and cutting lines ---- */

static void
test_lines(void **state)
{
	static const char text[] =
		"\x1b"
		"c\x1b[?7l\x1b[2J\x1b[0mSeaBIOS (version 1.16)\r\n"
		"[    0.000000] Linux version 6.1.0\r\r\n"
		"\r\n"
		"   \t \n"
		"[    1.25] [    0.000000] Command line: console=ttyS0\n"
		"generic/002        [   28.968477] run fstests generic/002 at 2026-12-03 08:03:27\n"
		"\x1b]0;a title\x07[   29.000000] EXT4-fs (vdb): mounted\n"
		"a\0b\x01"
		"c\x7f"
		"d\n"
		"bad utf-8: \xff\xc3(\xe2\x82 ok: \xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\n"
		"[   30.000000] WARNING: CPU: 0 PID: 1 at x\n"
		"\x1b(B\x1b[1;31m[   31.000000] BUG: KASAN: use-after-free\x1b[0m\n"
		"no newline at the end";
	static const struct {
		const char *text;
		const char *test;
		unsigned flags;
	} want[] = {
		{ "SeaBIOS (version 1.16)", NULL, 0 },
		{ "[    0.000000] Linux version 6.1.0", NULL, 0 },
		{ "[    0.000000] Command line: console=ttyS0", NULL, 0 },
		{ "generic/002", NULL, 0 },
		{ "[   28.968477] run fstests generic/002 at 2026-12-03 08:03:27", "generic/002",
		  KMSG_MARKER },
		{ "[   29.000000] EXT4-fs (vdb): mounted", "generic/002", 0 },
		{ "ab?c?d", "generic/002", 0 },
		{ "bad utf-8: ?"
		  "?(?? ok: \xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80",
		  "generic/002", 0 },
		{ "[   30.000000] WARNING: CPU: 0 PID: 1 at x", "generic/002", KMSG_WARNING },
		{ "[   31.000000] BUG: KASAN: use-after-free", "generic/002", KMSG_BUG },
		{ "no newline at the end", "generic/002", 0 },
	};
	struct recorder r;

	(void)state;
	split_every_way("lines", text, sizeof(text) - 1, NULL, &r);
	assert_int_equal(r.n, ARRAY_SIZE(want));
	for (size_t i = 0; i < r.n; i++) {
		assert_string_equal(r.v[i].text, want[i].text);
		if (want[i].test)
			assert_string_equal(r.v[i].test, want[i].test);
		else
			assert_null(r.v[i].test);
		assert_int_equal(r.v[i].flags, want[i].flags);
	}
	assert_clean(&r);
	recorder_release(&r);
}

/* After the tests (a shell follows), a check run by hand names no test and writes no slice. */
static void
test_stop_slices(void **state)
{
	struct event_bus bus = EVENT_BUS_INIT;
	struct recorder r = { 0 };
	char *dir = test_tmp("stop-slices"), *slice;
	struct kmsg *k;
	static const char during[] = "[ 1.0] run fstests generic/001 at x\n[ 2.0] in the test\n";
	static const char after[] = "[ 9.0] run fstests generic/002 at y\n[ 9.5] by hand\n";

	(void)state;
	event_bus_add(&bus, (struct listener){ on_event, &r });
	k = kmsg_new(&bus, "ext4/4k");
	assert_int_equal(kmsg_set_slice_dir(k, dir), OK);
	kmsg_feed(k, during, sizeof(during) - 1);
	kmsg_stop_slices(k);
	kmsg_feed(k, after, sizeof(after) - 1);
	kmsg_finish(k);
	assert_int_equal(r.n, 4);
	assert_string_equal(r.v[1].test, "generic/001");
	assert_null(r.v[2].test);
	assert_int_equal(r.v[2].flags & KMSG_MARKER, 0);
	assert_null(r.v[3].test);
	slice = path_join(dir, "generic/002.kmsg");
	assert_false(path_exists(slice));
	free(slice);
	slice = path_join(dir, "generic/001.kmsg");
	assert_true(path_exists(slice));
	free(slice);
	kmsg_free(k);
	event_bus_release(&bus);
	recorder_release(&r);
	free(dir);
}

static void
test_long_lines(void **state)
{
	struct event_bus bus = EVENT_BUS_INIT;
	struct recorder r = { 0 };
	struct kmsg *k;
	struct strbuf text = STRBUF_INIT;
	size_t base, peak = 0;
	uint32_t seed = 42;

	(void)state;
	/* exactly the limit, and one more, wherever the chunks end */
	for (size_t i = 0; i < KMSG_LINE_MAX; i++)
		strbuf_addch(&text, 'x');
	strbuf_addch(&text, '\n');
	for (size_t i = 0; i <= KMSG_LINE_MAX; i++)
		strbuf_addch(&text, 'y');
	strbuf_adds(&text, "\nafter\n");
	split_every_way("long lines", text.buf, text.len, NULL, &r);
	assert_int_equal(r.n, 3);
	assert_int_equal(strlen(r.v[0].text), KMSG_LINE_MAX);
	assert_int_equal(strlen(r.v[1].text), KMSG_LINE_MAX);
	assert_string_equal(r.v[2].text, "after");
	recorder_release(&r);

	/* 32 MB of binary noise: memory stays at a line and the tail */
	event_bus_add(&bus, (struct listener){ on_event, &r });
	k = kmsg_new(&bus, NULL);
	kmsg_set_tail(k, 5);
	base = mallinfo2().uordblks + mallinfo2().hblkhd;
	for (int round = 0; round < 512; round++) {
		strbuf_reset(&text);
		for (int i = 0; i < 65536; i++) {
			uint32_t v = lcg(&seed);

			char c = (char)(v >> 4);

			strbuf_addch(&text, v % 20000 == 0 ? '\n' : c == '\n' ? 'n' : c);
		}
		kmsg_feed(k, text.buf, text.len);
		recorder_release(&r);
		{
			size_t now = mallinfo2().uordblks + mallinfo2().hblkhd;

			if (now > base && now - base > peak)
				peak = now - base;
		}
	}
	kmsg_finish(k);
	assert_true(kmsg_cut_lines(k) > 0);
	assert_true(kmsg_lines(k) > 0);
	/* a line, its cleaned copies, the tail of 5, the feed buffer: well under 1 MiB */
	assert_true(peak < (1u << 20) + text.alloc);
	kmsg_free(k);
	event_bus_release(&bus);
	recorder_release(&r);
	strbuf_release(&text);
}

/* ---- slices, the tail, failures ---- */

static void
feed_str(struct kmsg *k, const char *s)
{
	kmsg_feed(k, s, strlen(s));
}

static void
test_slices(void **state)
{
	struct event_bus bus = EVENT_BUS_INIT;
	struct recorder r = { 0 };
	struct kmsg *k;
	char *dir = test_tmp("slices"), *copy = test_tmp("copied"), *p, *text;
	struct strbuf big = STRBUF_INIT;

	(void)state;
	event_bus_add(&bus, (struct listener){ on_event, &r });
	k = kmsg_new(&bus, "xfs/4k");
	assert_int_equal(kmsg_set_slice_dir(k, dir), OK);
	feed_str(k, "[    1.000000] booting\n");
	assert_null(kmsg_current_test(k));
	feed_str(k, "[    2.000000] run fstests generic/002 at 2026-12-03 08:03:27\n");
	assert_string_equal(kmsg_current_test(k), "generic/002");
	assert_int_equal(kmsg_slice_flags(k), 0);
	feed_str(k, "[    3.000000] WARNING: CPU: 0 PID: 1 at fs/xfs/x.c:1\n");
	assert_int_equal(kmsg_slice_flags(k), KMSG_WARNING);
	/* -L: the same test again; its slice file gets this run too */
	feed_str(k, "[    4.000000] run fstests generic/002 at 2026-12-03 08:03:43\n");
	assert_int_equal(kmsg_slice_flags(k), 0);
	feed_str(k, "[    5.000000] second run\n");
	feed_str(k, "[    6.000000] run fstests xfs/123 at 2026-12-03 08:04:00\n");
	feed_str(k, "[    7.000000] in xfs/123\n");
	kmsg_end_slice(k);
	assert_null(kmsg_current_test(k));
	feed_str(k, "[    8.000000] unmounting after the run\n");
	/* a run of one test far over KMSG_SLICE_MAX: the file is cut */
	feed_str(k, "[    9.000000] run fstests generic/100 at 2026-12-03 08:05:00\n");
	for (size_t i = 0; i < KMSG_LINE_MAX - 2; i++)
		strbuf_addch(&big, 'b');
	strbuf_addch(&big, '\n');
	for (size_t n = 0; n <= KMSG_SLICE_MAX / big.len + 1; n++)
		kmsg_feed(k, big.buf, big.len);
	feed_str(k, "[   10.000000] Kernel panic - not syncing: Fatal exception");
	kmsg_finish(k);
	assert_int_equal(kmsg_status(k, NULL), OK);
	assert_int_equal(r.v[r.n - 1].flags, KMSG_PANIC);
	assert_string_equal(r.v[r.n - 1].test, "generic/100");
	for (size_t i = 0; i < r.n; i++)
		assert_int_equal(r.v[i].type, EV_KMSG);

	p = kmsg_slice_path(dir, "generic/002");
	assert_true(str_endswith(p, "/slices/generic/002.kmsg"));
	text = test_read(p);
	assert_string_equal(text, "[    2.000000] run fstests generic/002 at 2026-12-03 08:03:27\n"
				  "[    3.000000] WARNING: CPU: 0 PID: 1 at fs/xfs/x.c:1\n"
				  "[    4.000000] run fstests generic/002 at 2026-12-03 08:03:43\n"
				  "[    5.000000] second run\n");
	free(text);
	free(p);
	p = kmsg_slice_path(dir, "xfs/123");
	text = test_read(p);
	assert_string_equal(text, "[    6.000000] run fstests xfs/123 at 2026-12-03 08:04:00\n"
				  "[    7.000000] in xfs/123\n");
	free(text);
	free(p);
	p = kmsg_slice_path(dir, "generic/100");
	text = test_read(p);
	assert_true(strlen(text) <= KMSG_SLICE_MAX + 100);
	assert_true(str_endswith(text, "[fswb: kernel log of generic/100 cut at 16 MiB]\n"));
	free(text);
	free(p);

	/* copied elsewhere with the same names; to itself, nothing happens */
	assert_int_equal(kmsg_write_slices(k, copy), OK);
	assert_int_equal(kmsg_write_slices(k, dir), OK);
	{
		char *a = kmsg_slice_path(dir, "xfs/123"), *b = kmsg_slice_path(copy, "xfs/123");
		char *ta = test_read(a), *tb = test_read(b);

		assert_string_equal(ta, tb);
		free(a);
		free(b);
		free(ta);
		free(tb);
		b = kmsg_slice_path(copy, "generic/100");
		assert_true(path_exists(b));
		free(b);
	}
	kmsg_free(k);
	recorder_release(&r);
	strbuf_release(&big);

	/* without a slice directory nothing is written and copying is a no-op */
	k = kmsg_new(&bus, NULL);
	feed_str(k, "run fstests generic/001 at x\n");
	kmsg_finish(k);
	assert_int_equal(kmsg_write_slices(k, copy), OK);
	kmsg_free(k);
	recorder_release(&r);

	event_bus_release(&bus);
	free(dir);
	free(copy);
}

static void
test_slice_failures(void **state)
{
	struct event_bus bus = EVENT_BUS_INIT;
	struct recorder r = { 0 };
	struct kmsg *k;
	char *dir = test_tmp("blocked"), *file = test_tmp("blocked/generic");
	char *notdir = test_tmp("a-file"), *below = test_tmp("a-file/sub");
	const char *msg = NULL;

	(void)state;
	/* the slice directory cannot be made */
	test_write(notdir, "x");
	k = kmsg_new(&bus, NULL);
	assert_int_equal(kmsg_set_slice_dir(k, below), ERR_IO);
	assert_non_null(strstr(error_msg(), below));
	kmsg_free(k);

	/* a group directory that cannot be made: one warning, lines go on */
	test_write(file, "in the way");
	event_bus_add(&bus, (struct listener){ on_event, &r });
	k = kmsg_new(&bus, "ext4/4k");
	assert_int_equal(kmsg_set_slice_dir(k, dir), OK);
	feed_str(k, "run fstests generic/001 at x\nline\n");
	feed_str(k, "run fstests generic/002 at x\nline\n");
	kmsg_finish(k);
	assert_int_equal(kmsg_status(k, &msg), ERR_IO);
	assert_non_null(msg);
	assert_non_null(strstr(msg, "'generic/001'"));
	assert_non_null(strstr(msg, "check the disk"));
	assert_int_equal(r.n, 5);
	assert_int_equal(r.v[0].type, EV_WARNING);
	assert_string_equal(r.v[0].text, msg);
	for (size_t i = 1; i < r.n; i++)
		assert_int_equal(r.v[i].type, EV_KMSG);
	kmsg_free(k);
	recorder_release(&r);
	event_bus_release(&bus);
	free(dir);
	free(file);
	free(notdir);
	free(below);
}

/*
 * A symlink below the slice directory (the group directory, or the slice
 * file itself) is never written through: the slice is left out, said once.
 */
static void
test_slice_symlinks(void **state)
{
	struct event_bus bus = EVENT_BUS_INIT;
	struct kmsg *k;
	char *dir = test_tmp("planted"), *outside = test_tmp("outside");
	char *group = test_tmp("planted/generic"), *victim = test_tmp("victim");
	char *slice = test_tmp("planted/xfs/001.kmsg"), *p, *text;
	const char *msg = NULL;

	(void)state;
	assert_int_equal(mkdir_p(outside, 0755), OK);
	assert_int_equal(mkdir_p(dir, 0755), OK);
	assert_int_equal(symlink(outside, group), 0);
	k = kmsg_new(&bus, "ext4/4k");
	assert_int_equal(kmsg_set_slice_dir(k, dir), OK);
	feed_str(k, "run fstests generic/001 at x\nsecret\n");
	kmsg_finish(k);
	p = path_join(outside, "001.kmsg");
	assert_false(path_exists(p));
	free(p);
	assert_int_equal(kmsg_status(k, &msg), ERR_IO);
	assert_non_null(strstr(msg, "not followed"));
	kmsg_free(k);

	test_write(victim, "host file\n");
	p = test_tmp("planted/xfs");
	assert_int_equal(mkdir_p(p, 0755), OK);
	free(p);
	assert_int_equal(symlink(victim, slice), 0);
	k = kmsg_new(&bus, "ext4/4k");
	assert_int_equal(kmsg_set_slice_dir(k, dir), OK);
	feed_str(k, "run fstests xfs/001 at x\nsecret\n");
	kmsg_finish(k);
	assert_int_equal(kmsg_status(k, NULL), ERR_IO);
	text = test_read(victim);
	assert_string_equal(text, "host file\n");
	free(text);
	kmsg_free(k);
	event_bus_release(&bus);
	free(dir);
	free(outside);
	free(group);
	free(victim);
	free(slice);
}

static void
test_tail(void **state)
{
	struct event_bus bus = EVENT_BUS_INIT;
	struct kmsg *k;
	struct strbuf sb = STRBUF_INIT, want = STRBUF_INIT;

	(void)state;
	k = kmsg_new(&bus, NULL);
	kmsg_tail(k, &sb);
	assert_string_equal(sb.buf, "");
	for (int i = 0; i < 100; i++) {
		char line[32];

		snprintf(line, sizeof(line), "line %d\n", i);
		feed_str(k, line);
	}
	/* the default: the last KMSG_TAIL_DEFAULT lines, oldest first */
	kmsg_tail(k, &sb);
	for (int i = 100 - (int)KMSG_TAIL_DEFAULT; i < 100; i++)
		strbuf_addf(&want, "line %d\n", i);
	assert_string_equal(sb.buf, want.buf);
	/* shrinking keeps the newest */
	kmsg_set_tail(k, 3);
	strbuf_reset(&sb);
	kmsg_tail(k, &sb);
	assert_string_equal(sb.buf, "line 97\nline 98\nline 99\n");
	feed_str(k, "line 100\n");
	strbuf_reset(&sb);
	kmsg_tail(k, &sb);
	assert_string_equal(sb.buf, "line 98\nline 99\nline 100\n");
	/* growing keeps what there is */
	kmsg_set_tail(k, 10);
	feed_str(k, "line 101\n");
	strbuf_reset(&sb);
	kmsg_tail(k, &sb);
	assert_string_equal(sb.buf, "line 98\nline 99\nline 100\nline 101\n");
	/* none, then more than the limit */
	kmsg_set_tail(k, 0);
	feed_str(k, "line 102\n");
	strbuf_reset(&sb);
	kmsg_tail(k, &sb);
	assert_string_equal(sb.buf, "");
	kmsg_set_tail(k, 100000);
	for (int i = 0; i < 1500; i++)
		feed_str(k, "again\n");
	strbuf_reset(&sb);
	kmsg_tail(k, &sb);
	assert_int_equal(sb.len, KMSG_TAIL_MAX * 6);
	assert_int_equal(kmsg_lines(k), 103 + 1500);
	kmsg_finish(k);
	kmsg_finish(k);
	kmsg_free(k);
	kmsg_free(NULL);
	event_bus_release(&bus);
	strbuf_release(&sb);
	strbuf_release(&want);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixtures),       cmocka_unit_test(test_fixture_times),
		cmocka_unit_test(test_classify),       cmocka_unit_test(test_marker),
		cmocka_unit_test(test_lines),	       cmocka_unit_test(test_long_lines),
		cmocka_unit_test(test_stop_slices),    cmocka_unit_test(test_slices),
		cmocka_unit_test(test_slice_failures), cmocka_unit_test(test_tail),
		cmocka_unit_test(test_slice_symlinks),
	};

	return cmocka_run_group_tests_name("kmsg", tests, test_setup_hermetic,
					   test_teardown_hermetic);
}
