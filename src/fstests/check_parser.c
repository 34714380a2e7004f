/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "fstests/check_parser.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* check prints "       " (seven spaces) after the name when it has no previous time. */
#define LASTTIME_BLANK 7

struct header {
	bool active;	   /* a header block is being collected */
	bool have_name;	   /* SECTION line seen */
	bool have_fstyp;   /* FSTYP line seen: the block can be emitted */
	bool recreating;   /* RECREATING line seen */
	bool just_section; /* the previous line was SECTION: a recap if '=' follows */
	struct strbuf name, fstyp, platform, mkfs, mount;
	struct strbuf section_line; /* the SECTION line, for CONSOLE when it is a recap */
};

struct summary {
	bool active;
	bool interrupted;
	bool have_ran, have_notrun, have_failures;
	unsigned n_ran, n_notrun, n_failures;
	struct strbuf ran, notrun, failures;
};

enum pstate {
	ST_PREAMBLE, /* before check's first header */
	ST_IDLE,     /* in a section, between tests */
	ST_RECAP,    /* the closing per-section recap of a run with sections */
};

struct check_parser {
	struct event_bus *bus;
	char *config;  /* from check_parser_new(), may be NULL */
	char *section; /* check's SECTION name, NULL without sections */
	enum pstate st;

	/* the line being assembled */
	struct line_asm la; /* the line so far */
	bool line_checked;  /* the partial line is known not to start a test */
	bool line_is_test;  /* TEST_START was emitted for the partial line */
	size_t line_rest;   /* where the outcome text starts in it */
	size_t lines, cut;

	struct header hdr;
	struct summary sum;

	/* the test in progress */
	bool in_test;
	bool test_line_done; /* its own line ended */
	char test[CHECK_NAME_MAX + 1];
	unsigned rerun;
	struct check_outcome out;
	struct strbuf detail;
	size_t detail_lines, detail_dropped, detail_blanks;
	struct strbuf hints; /* its TEST.hints, which check prints after a failure */
	bool in_hints;
	size_t hint_blanks;

	/* the test before, for -L rerun loops */
	char last_test[CHECK_NAME_MAX + 1];
	bool last_failed;
	unsigned last_rerun;
	bool loop;
	char loop_test[CHECK_NAME_MAX + 1];
	unsigned loop_runs;

	/* a test check was cut off in (its line got the summary, or the stream ended) */
	bool have_unfinished;
	char unfinished[CHECK_NAME_MAX + 1];
	unsigned unfinished_rerun;

	/* this section's tallies of TEST_ENDs (first runs only) */
	unsigned sec_notrun, sec_expunged;
	double sec_seconds;

	bool interrupted;
	unsigned summaries;
	char *xunit;
	struct strbuf scratch;
	bool finished;
};

/* ---- small text helpers ---- */

static bool
is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static bool
is_alnum(int c)
{
	return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool
has_prefix(const char *s, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);

	return len >= n && !memcmp(s, prefix, n);
}

static size_t
rtrim_len(const char *s, size_t len)
{
	while (len && (s[len - 1] == ' ' || s[len - 1] == '\t' || s[len - 1] == '\r'))
		len--;
	return len;
}

static bool
all_blank(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] != ' ' && s[i] != '\t')
			return false;
	return true;
}

/* Parse digits at s; returns how many, 0 when none. Saturates. */
static size_t
parse_uint(const char *s, size_t len, unsigned long *val)
{
	size_t i = 0;
	unsigned long v = 0;

	while (i < len && is_digit(s[i])) {
		if (v < 100000000ul)
			v = v * 10 + (unsigned long)(s[i] - '0');
		i++;
	}
	*val = v;
	return i;
}

static unsigned
count_words(const char *s, size_t len)
{
	unsigned n = 0;
	bool in = false;

	for (size_t i = 0; i < len; i++) {
		bool sp = s[i] == ' ' || s[i] == '\t';

		if (!sp && !in)
			n++;
		in = !sp;
	}
	return n;
}

static void
copy_name(char *dst, const char *src, size_t len)
{
	if (len > CHECK_NAME_MAX)
		len = CHECK_NAME_MAX;
	memcpy(dst, src, len);
	dst[len] = '\0';
}

size_t
check_test_name_len(const char *s, size_t len)
{
	size_t i = 0, digits = 0;

	if (!len || !is_alnum(s[0]))
		return 0;
	while (i < len && (is_alnum(s[i]) || s[i] == '_' || s[i] == '-'))
		i++;
	if (i >= len || s[i] != '/')
		return 0;
	i++;
	while (i < len && is_digit(s[i]) && digits < 3) {
		i++;
		digits++;
	}
	if (digits < 3)
		return 0;
	while (i < len && (is_alnum(s[i]) || s[i] == '-'))
		i++;
	if (i > CHECK_NAME_MAX)
		return 0;
	if (i < len && s[i] != ' ' && s[i] != '\t')
		return 0;
	return i;
}

/* ---- one test's outcome ---- */

void
check_outcome_init(struct check_outcome *o)
{
	memset(o, 0, sizeof(*o));
	o->seconds = -1;
	o->prev_seconds = -1;
	o->stamp_start = -1;
	o->stamp_end = -1;
	o->exit_status = -1;
	strbuf_init(&o->reason);
}

void
check_outcome_release(struct check_outcome *o)
{
	strbuf_release(&o->reason);
}

static void
add_reason(struct check_outcome *o, const char *text, size_t len)
{
	len = rtrim_len(text, len);
	if (!len)
		return;
	if (o->reason.len >= CHECK_REASON_MAX)
		return;
	if (o->reason.len)
		strbuf_adds(&o->reason, "; ");
	if (o->reason.len + len > CHECK_REASON_MAX)
		len = CHECK_REASON_MAX - o->reason.len;
	strbuf_add(&o->reason, text, len);
}

/* "[HH:MM:SS]" (check's -T); returns its length and the seconds of the day. */
static size_t
match_stamp(const char *s, size_t len, int *secs)
{
	if (len < 10 || s[0] != '[' || s[3] != ':' || s[6] != ':' || s[9] != ']')
		return 0;
	for (int i = 1; i < 9; i++)
		if (i != 3 && i != 6 && !is_digit(s[i]))
			return 0;
	*secs = ((s[1] - '0') * 10 + (s[2] - '0')) * 3600 +
		((s[4] - '0') * 10 + (s[5] - '0')) * 60 + (s[7] - '0') * 10 + (s[8] - '0');
	return 10;
}

/* "Ns ... " from check.time: length matched, 0 when not (complete) */
static size_t
match_prev(const char *s, size_t len, double *prev)
{
	unsigned long v;
	size_t n = parse_uint(s, len, &v);

	if (!n || !has_prefix(s + n, len - n, "s ..."))
		return 0;
	*prev = (double)v;
	return n + 5;
}

/* "N" or "N.N" then "s" then only blanks: check's time of a passing test */
static bool
match_pass_time(const char *s, size_t len, double *secs)
{
	unsigned long v, frac = 0;
	size_t n = parse_uint(s, len, &v), f = 0;
	double d;

	if (!n)
		return false;
	if (n < len && s[n] == '.') {
		f = parse_uint(s + n + 1, len - n - 1, &frac);
		if (!f)
			return false;
		n += f + 1;
	}
	if (n >= len || s[n] != 's' || !all_blank(s + n + 1, len - n - 1))
		return false;
	d = (double)v;
	if (f) {
		double scale = 1;

		for (size_t i = 0; i < f && i < 8; i++)
			scale *= 10;
		d += (double)frac / scale;
	}
	*secs = d;
	return true;
}

/* "[failed, exit status N]" */
static size_t
match_exit(const char *s, size_t len, int *status)
{
	static const char pre[] = "[failed, exit status ";
	size_t n = sizeof(pre) - 1, d;
	unsigned long v;

	if (!has_prefix(s, len, pre))
		return 0;
	d = parse_uint(s + n, len - n, &v);
	if (!d || n + d >= len || s[n + d] != ']')
		return 0;
	*status = (int)v;
	return n + d + 1;
}

/* " tests" (or " test") and nothing else */
static bool
is_tests_word(const char *s, size_t len)
{
	return (len == 6 && !memcmp(s, " tests", 6)) || (len == 5 && !memcmp(s, " test", 5));
}

/* "Failed N of M tests" / "Passed all N tests" */
static bool
match_total(const char *s, size_t len, unsigned long *failed, unsigned long *tried)
{
	size_t n;

	len = rtrim_len(s, len);
	if (has_prefix(s, len, "Passed all ")) {
		s += 11;
		len -= 11;
		n = parse_uint(s, len, tried);
		*failed = 0;
		return n && is_tests_word(s + n, len - n);
	}
	if (has_prefix(s, len, "Failed ")) {
		s += 7;
		len -= 7;
		n = parse_uint(s, len, failed);
		if (!n || !has_prefix(s + n, len - n, " of "))
			return false;
		s += n + 4;
		len -= n + 4;
		n = parse_uint(s, len, tried);
		return n && is_tests_word(s + n, len - n);
	}
	return false;
}

/*
 * The lines of check's summary, exactly as check words them (test output,
 * mkfs errors and the like may well start with "Failed ").
 */
static bool
is_summary_line(const char *s, size_t len)
{
	unsigned long failed, tried;

	len = rtrim_len(s, len);
	if (has_prefix(s, len, "Ran:"))
		return len == 4 || s[4] == ' ';
	if (has_prefix(s, len, "Not run: ") || has_prefix(s, len, "Failures: "))
		return true;
	if (len == 12 && !memcmp(s, "Interrupted!", 12))
		return true;
	return match_total(s, len, &failed, &tried);
}

/*
 * "_name: words": the messages of check's post-test checks. Returns the
 * reason bit, 0 when s is not one.
 */
static unsigned
match_check_message(const char *s, size_t len)
{
	size_t i = 1;

	if (!len || s[0] != '_')
		return 0;
	while (i < len && (is_alnum(s[i]) || s[i] == '_'))
		i++;
	if (i < 2 || i + 1 >= len || s[i] != ':' || s[i + 1] != ' ')
		return 0;
	if (i == 12 && !memcmp(s, "_check_dmesg", 12))
		return FAIL_DMESG;
	if (i == 15 && !memcmp(s, "_check_kmemleak", 15))
		return FAIL_KMEMLEAK;
	if (memmem(s, i, "filesystem", 10) || memmem(s, i, "_fs", 3) || memmem(s, i, "fsck", 4) ||
	    memmem(s, i, "repair", 6))
		return FAIL_FSCK;
	return FAIL_OTHER;
}

size_t
check_outcome_scan(struct check_outcome *o, const char *s, size_t len, bool *summary)
{
	bool first = !o->any && o->prev_seconds < 0 && o->stamp_start < 0;
	size_t i = 0;

	if (summary)
		*summary = false;
	len = rtrim_len(s, len);
	for (;;) {
		const char *t;
		size_t n, m;
		unsigned bit;
		int v;
		double d;

		while (i < len && s[i] == ' ')
			i++;
		if (i >= len)
			return len;
		t = s + i;
		n = len - i;
		if ((m = match_stamp(t, n, &v))) {
			if (o->stamp_start < 0)
				o->stamp_start = v;
			else
				o->stamp_end = v;
			first = false;
			i += m;
			continue;
		}
		if (first && (m = match_prev(t, n, &d))) {
			o->prev_seconds = d;
			first = false;
			i += m;
			continue;
		}
		first = false;
		if (has_prefix(t, n, "[dumped core]")) {
			o->any = true;
			o->reasons |= FAIL_CORE;
			add_reason(o, "dumped core", 11);
			i += 13;
			continue;
		}
		if ((m = match_exit(t, n, &v))) {
			o->any = true;
			o->reasons |= FAIL_EXIT;
			o->exit_status = v;
			add_reason(o, t + 1, m - 2);
			i += m;
			continue;
		}
		if (has_prefix(t, n, "[expunged]")) {
			o->any = o->expunged = o->settled = true;
			i += 10;
			continue;
		}
		if (has_prefix(t, n, "[not run]")) {
			o->any = o->notrun = true;
			strbuf_reset(&o->reason);
			if (n == 9 && o->stamp_start >= 0) {
				/* -T: the reason comes on the next line */
				o->want_notrun_reason = true;
			} else {
				size_t r = 9 + (n > 9 && t[9] == ' ');

				add_reason(o, t + r, n - r);
				o->settled = true;
			}
			return len;
		}
		if (has_prefix(t, n, "- output mismatch")) {
			o->any = o->in_diff = true;
			o->reasons |= FAIL_MISMATCH;
			add_reason(o, t + 2, n - 2);
			return len;
		}
		if (has_prefix(t, n, "- no such test?")) {
			o->any = o->settled = true;
			o->reasons |= FAIL_NO_SUCH_TEST;
			add_reason(o, "no such test", 12);
			return len;
		}
		if (has_prefix(t, n, "no qualified output")) {
			o->any = o->settled = true;
			o->reasons |= FAIL_NO_QUALIFIED;
			add_reason(o, t, n);
			return len;
		}
		if ((bit = match_check_message(t, n))) {
			o->any = true;
			o->reasons |= bit;
			add_reason(o, t, n);
			return len;
		}
		if (has_prefix(t, n, "!!! failed to remount")) {
			o->any = true;
			o->reasons |= FAIL_OTHER;
			add_reason(o, t + 4, n - 4);
			return len;
		}
		if (match_pass_time(t, n, &d)) {
			o->any = true;
			o->seconds = d;
			if (!o->reasons && !o->notrun && !o->expunged)
				o->settled = true;
			return len;
		}
		if (is_summary_line(t, n) && summary)
			*summary = true;
		return i;
	}
}

bool
check_outcome_notrun_reason(struct check_outcome *o, const char *line, size_t len)
{
	const char *sep;

	if (!len || line[0] != '\t')
		return false;
	sep = memmem(line, len, " -- ", 4);
	if (!sep)
		return false;
	strbuf_reset(&o->reason);
	add_reason(o, sep + 4, len - (size_t)(sep + 4 - line));
	o->want_notrun_reason = false;
	o->settled = true;
	return true;
}

bool
check_outcome_status(const struct check_outcome *o, enum test_status *st)
{
	if (o->listed || o->notrun)
		*st = TS_NOTRUN;
	else if (o->expunged)
		*st = TS_EXPUNGED;
	else if (o->reasons)
		*st = TS_FAIL;
	else if (o->seconds >= 0)
		*st = TS_PASS;
	else
		return false;
	return true;
}

double
check_outcome_seconds(const struct check_outcome *o)
{
	if (o->seconds >= 0)
		return o->seconds;
	if (o->stamp_start >= 0 && o->stamp_end >= 0) {
		int d = o->stamp_end - o->stamp_start;

		return d < 0 ? d + 86400 : d;
	}
	return -1;
}

/* ---- emitting ---- */

static const char *
cur_config(const struct check_parser *p)
{
	return p->section ? p->section : p->config;
}

static void
emit(struct check_parser *p, struct event *ev)
{
	ev->config = cur_config(p);
	event_emit(p->bus, ev);
}

static const char *
scratch_str(struct check_parser *p, const char *s, size_t len)
{
	strbuf_reset(&p->scratch);
	strbuf_add(&p->scratch, s, len);
	return p->scratch.buf;
}

static void
emit_console(struct check_parser *p, const char *s, size_t len, const char *test)
{
	struct event ev = { .type = EV_CONSOLE };

	ev.u.line.text = scratch_str(p, s, rtrim_len(s, len));
	ev.u.line.flags = 0;
	ev.u.line.test = test;
	emit(p, &ev);
}

static void
console(struct check_parser *p, const char *s, size_t len)
{
	emit_console(p, s, len, p->in_test ? p->test : NULL);
}

static void __attribute__((format(printf, 2, 3))) warn(struct check_parser *p, const char *fmt, ...)
{
	struct event ev = { .type = EV_WARNING };
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ev.u.error.code = OK;
	ev.u.error.message = msg;
	emit(p, &ev);
}

/* ---- the header block ---- */

static void
header_reset(struct header *h)
{
	h->active = h->have_name = h->have_fstyp = h->recreating = h->just_section = false;
	strbuf_reset(&h->name);
	strbuf_reset(&h->fstyp);
	strbuf_reset(&h->platform);
	strbuf_reset(&h->mkfs);
	strbuf_reset(&h->mount);
	strbuf_reset(&h->section_line);
}

static void
section_reset(struct check_parser *p)
{
	p->sec_notrun = p->sec_expunged = 0;
	p->sec_seconds = 0;
	p->last_test[0] = '\0';
	p->last_failed = false;
	p->loop = false;
}

static void
emit_section(struct check_parser *p)
{
	struct header *h = &p->hdr;
	struct event ev = { .type = EV_SECTION };

	free(p->section);
	p->section = h->have_name ? xstrdup(h->name.buf) : NULL;
	ev.u.section.name = p->section;
	ev.u.section.fstyp = h->fstyp.buf;
	ev.u.section.platform = h->platform.len ? h->platform.buf : NULL;
	ev.u.section.mkfs_options = h->mkfs.len ? h->mkfs.buf : NULL;
	ev.u.section.mount_options = h->mount.len ? h->mount.buf : NULL;
	ev.u.section.recreating = h->recreating;
	section_reset(p);
	p->st = ST_IDLE;
	emit(p, &ev);
	header_reset(h); /* after the event: its strings are the header's */
}

static void
flush_header(struct check_parser *p)
{
	if (p->hdr.active && p->hdr.have_fstyp)
		emit_section(p);
}

/* "KEY   -- value": which key, and the value. */
enum hkey { HK_NONE, HK_SECTION, HK_RECREATING, HK_FSTYP, HK_PLATFORM, HK_MKFS, HK_MOUNT };

static enum hkey
match_header(const char *s, size_t len, size_t *val)
{
	static const struct {
		const char *word;
		enum hkey key;
	} keys[] = {
		{ "SECTION", HK_SECTION },   { "RECREATING", HK_RECREATING },
		{ "FSTYP", HK_FSTYP },	     { "PLATFORM", HK_PLATFORM },
		{ "MKFS_OPTIONS", HK_MKFS }, { "MOUNT_OPTIONS", HK_MOUNT },
	};

	for (size_t k = 0; k < ARRAY_SIZE(keys); k++) {
		size_t n = strlen(keys[k].word), i;

		if (!has_prefix(s, len, keys[k].word))
			continue;
		i = n;
		while (i < len && s[i] == ' ')
			i++;
		if (i == n || !has_prefix(s + i, len - i, "--"))
			return HK_NONE;
		i += 2;
		if (i < len && s[i] == ' ')
			i++;
		*val = i;
		return keys[k].key;
	}
	return HK_NONE;
}

/* ---- tests ---- */

static void
detail_line(struct check_parser *p, const char *s, size_t len)
{
	len = rtrim_len(s, len);
	if (!len) {
		p->detail_blanks++;
		return;
	}
	for (;;) {
		bool blank = p->detail_blanks > 0;
		const char *t = blank ? "" : s;
		size_t n = blank ? 0 : len;

		if (p->detail_lines >= CHECK_DETAIL_LINES ||
		    p->detail.len + n + 1 > CHECK_DETAIL_MAX) {
			p->detail_dropped++;
		} else {
			if (p->detail.len)
				strbuf_addch(&p->detail, '\n');
			strbuf_add(&p->detail, t, n);
			p->detail_lines++;
		}
		if (!blank)
			break;
		p->detail_blanks--;
	}
}

static void
end_test(struct check_parser *p)
{
	struct event ev = { .type = EV_TEST_END };
	struct check_outcome *o = &p->out;
	enum test_status st;
	double secs;

	if (!p->in_test)
		return;
	if (o->listed && !o->reason.len)
		strbuf_adds(&o->reason, "listed by check -n");
	if (!check_outcome_status(o, &st)) {
		warn(p, "check printed no result for '%s' before going on", p->test);
		st = TS_FAIL;
		o->reasons |= FAIL_OTHER;
		add_reason(o, "check printed no result", 23);
	}
	if (p->detail_dropped)
		strbuf_addf(&p->detail, "%s... (%zu more lines)", p->detail.len ? "\n" : "",
			    p->detail_dropped);
	secs = check_outcome_seconds(o);
	ev.u.test_end.test = p->test;
	ev.u.test_end.status = st;
	ev.u.test_end.seconds = secs;
	ev.u.test_end.reasons = st == TS_FAIL ? o->reasons : 0;
	ev.u.test_end.reason = o->reason.len ? o->reason.buf : NULL;
	ev.u.test_end.detail = p->detail.len ? p->detail.buf : NULL;
	ev.u.test_end.hints = p->hints.len ? p->hints.buf : NULL;
	ev.u.test_end.rerun = p->rerun;
	if (!p->rerun) {
		if (st == TS_NOTRUN)
			p->sec_notrun++;
		else if (st == TS_EXPUNGED)
			p->sec_expunged++;
		if (secs > 0)
			p->sec_seconds += secs;
	}
	memcpy(p->last_test, p->test, sizeof(p->test));
	p->last_failed = st == TS_FAIL;
	p->last_rerun = p->rerun;
	p->in_test = false;
	emit(p, &ev);
}

/*
 * Something else than this test's output came: the test ends, unless its own
 * line was cut off (same_line), when it stays unfinished.
 */
static void
settle_test(struct check_parser *p, bool same_line)
{
	if (!p->in_test)
		return;
	if (p->out.any || (!same_line && p->test_line_done)) {
		end_test(p);
		return;
	}
	p->have_unfinished = true;
	memcpy(p->unfinished, p->test, sizeof(p->test));
	p->unfinished_rerun = p->rerun;
	p->in_test = false;
}

static void emit_summary(struct check_parser *p, bool complete);

/* Whatever is pending before a new block (test, header, summary) starts. */
static void
anchor(struct check_parser *p, bool keep_summary)
{
	settle_test(p, false);
	flush_header(p);
	if (!keep_summary && p->sum.active)
		emit_summary(p, false);
}

static void
start_test(struct check_parser *p, const char *name, size_t name_len, double prev)
{
	struct event ev = { .type = EV_TEST_START };
	char buf[CHECK_NAME_MAX + 1];

	copy_name(buf, name, name_len);
	anchor(p, false);
	p->hdr.just_section = false;
	if (p->loop && !strcmp(p->loop_test, buf)) {
		p->rerun = ++p->loop_runs;
	} else if (p->last_failed && !p->last_rerun && !strcmp(p->last_test, buf)) {
		p->loop = true;
		memcpy(p->loop_test, buf, sizeof(buf));
		p->loop_runs = 1;
		p->rerun = 1;
	} else {
		p->loop = false;
		p->rerun = 0;
	}
	p->have_unfinished = false;
	p->in_test = true;
	p->test_line_done = false;
	memcpy(p->test, buf, sizeof(buf));
	check_outcome_release(&p->out);
	check_outcome_init(&p->out);
	p->out.prev_seconds = prev;
	strbuf_reset(&p->detail);
	p->detail_lines = p->detail_dropped = p->detail_blanks = 0;
	strbuf_reset(&p->hints);
	p->in_hints = false;
	p->hint_blanks = 0;
	if (p->st == ST_PREAMBLE || p->st == ST_RECAP)
		p->st = ST_IDLE;
	ev.u.test_start.test = p->test;
	ev.u.test_start.prev_seconds = prev;
	ev.u.test_start.rerun = p->rerun;
	emit(p, &ev);
}

enum start_rule { SR_NOT_TEST, SR_WAIT, SR_FIRE };

enum line_end {
	LE_NONE,    /* a partial line: more may come */
	LE_NEWLINE, /* ended by a newline (or cut at CHECK_LINE_MAX) */
	LE_EOF,	    /* the stream ended without a newline */
};

/*
 * Does s start a test line? Decides from the bytes alone, the same for any
 * prefix that decides (so chunking never changes the events): the name,
 * then check's seven blanks, or " Ns ... ", or " -" (no such test, not
 * "NAME - unknown test, ignored"), or a line end (-n lists tests so).
 */
static enum start_rule
start_rule(const struct check_parser *p, const char *s, size_t len, enum line_end end,
	   size_t *name_len, size_t *rest, double *prev)
{
	size_t n, k = 0, m;
	const char *t;

	*prev = -1;
	if (end == LE_NONE) {
		size_t i = 0;

		while (i < len && s[i] != ' ' && s[i] != '\t' && i <= CHECK_NAME_MAX) {
			if (!is_alnum(s[i]) && s[i] != '_' && s[i] != '-' && s[i] != '/')
				return SR_NOT_TEST;
			i++;
		}
		if (i == len)
			return i <= CHECK_NAME_MAX ? SR_WAIT : SR_NOT_TEST;
		if (p->st == ST_PREAMBLE)
			return SR_WAIT;
	}
	n = check_test_name_len(s, len);
	if (!n)
		return SR_NOT_TEST;
	*name_len = n;
	*rest = n;
	t = s + n;
	len -= n;
	while (k < len && t[k] == ' ')
		k++;
	if (k >= LASTTIME_BLANK)
		return SR_FIRE;
	if (k == len)
		return end == LE_NONE ? SR_WAIT : SR_FIRE;
	if (!k)
		return SR_NOT_TEST; /* a tab after the name: not check's padding */
	if (is_digit(t[k])) {
		if ((m = match_prev(t + k, len - k, prev))) {
			*rest = n + k + m;
			return SR_FIRE;
		}
		if (end == LE_NONE) {
			unsigned long v;
			size_t d = parse_uint(t + k, len - k, &v);
			const char *tail = "s ...";
			size_t have = len - k - d;

			if (have < 5 && !memcmp(t + k + d, tail, have))
				return SR_WAIT;
		}
		return SR_FIRE;
	}
	if (t[k] == '-') {
		static const char unknown[] = "- unknown test, ignored";
		size_t have = len - k, u = sizeof(unknown) - 1;

		/* wait while it may still be that warning (see process_line()) */
		if (k == 1 && end == LE_NONE &&
		    (have <= u ? !memcmp(t + k, unknown, have)
			       : !memcmp(t + k, unknown, u) && all_blank(t + k + u, have - u)))
			return SR_WAIT;
		return SR_FIRE;
	}
	return SR_NOT_TEST;
}

static void summary_line(struct check_parser *p, const char *s, size_t len);

/*
 * A summary line that comes while a test is in progress: check's own, or
 * the test's output (check -d)? Once the test has an outcome, or the
 * summary has begun, only check prints. Before that check can only be
 * cut off in the test (a signal), and then its "Ran:" list ends with the
 * test (check adds a test to it before running it); with -b the summary
 * begins with "Interrupted!".
 */
static bool
summary_is_checks(const struct check_parser *p, const char *s, size_t len)
{
	size_t n;

	if (!p->in_test || p->out.any || p->sum.active)
		return true;
	len = rtrim_len(s, len);
	if (len == 12 && !memcmp(s, "Interrupted!", 12))
		return true;
	n = strlen(p->test);
	return has_prefix(s, len, "Ran: ") && len >= n + 5 && s[len - n - 1] == ' ' &&
	       !memcmp(s + len - n, p->test, n);
}

/*
 * The text after the name on the test line. A line that ends with nothing
 * after the name but blanks is check -n's listing (a running test's line
 * always gets its outcome before the newline), however many blanks its
 * padding came to and whether TEST_START came before the line ended.
 */
static void
test_line_rest(struct check_parser *p, const char *s, size_t len, enum line_end end)
{
	size_t n;
	bool summary;

	if (all_blank(s, len)) {
		if (end == LE_NONE || end == LE_EOF)
			return; /* cut off while the test ran */
		p->test_line_done = true;
		p->out.listed = p->out.settled = p->out.any = true;
		end_test(p);
		return;
	}
	n = check_outcome_scan(&p->out, s, len, &summary);
	if (summary && summary_is_checks(p, s + n, len - n)) {
		settle_test(p, true);
		summary_line(p, s + n, len - n);
		return;
	}
	if (n < len) {
		while (n < len && s[n] == ' ')
			n++;
		if (p->out.reasons)
			detail_line(p, s + n, len - n);
		else
			console(p, s + n, len - n);
	}
	if (end != LE_EOF)
		p->test_line_done = true;
	if (p->out.settled)
		end_test(p);
}

/*
 * After a failure check prints the test's hints (_fixed_by_kernel_commit and
 * the like): an empty line, then "HINT: You _MAY_ be missing kernel fix:" or
 * "This test wants kernel fix:", the commit indented, an empty line. True
 * when s was one of their lines.
 */
static bool
hint_line(struct check_parser *p, const char *s, size_t len)
{
	len = rtrim_len(s, len);
	if (!p->in_hints) {
		if (!has_prefix(s, len, "HINT: ") && !has_prefix(s, len, "This test wants "))
			return false;
		p->in_hints = true;
	} else if (is_summary_line(s, len)) {
		p->in_hints = false;
		return false;
	}
	if (!len) {
		p->hint_blanks++;
		return true;
	}
	if (p->hints.len + len + 2 <= CHECK_REASON_MAX) {
		if (p->hints.len)
			strbuf_adds(&p->hints, p->hint_blanks ? "\n\n" : "\n");
		strbuf_add(&p->hints, s, len);
	}
	p->hint_blanks = 0;
	return true;
}

/* A later line while a test is current: the rest of its outcome, a diff, details. */
static void
test_more(struct check_parser *p, const char *s, size_t len)
{
	size_t n;
	bool summary;

	if (p->out.reasons && hint_line(p, s, len))
		return;
	if (p->out.in_diff) {
		if (len >= 4 && !memcmp(s, "    ", 4)) {
			detail_line(p, s + 4, len - 4);
			return;
		}
		p->out.in_diff = false;
	}
	if (p->out.want_notrun_reason) {
		if (check_outcome_notrun_reason(&p->out, s, len)) {
			end_test(p);
			return;
		}
		p->out.want_notrun_reason = false;
		p->out.settled = true;
		end_test(p);
		return; /* the caller goes on with the line */
	}
	n = check_outcome_scan(&p->out, s, len, &summary);
	if (summary && summary_is_checks(p, s + n, len - n)) {
		settle_test(p, false);
		summary_line(p, s + n, len - n);
		return;
	}
	if (n < len) {
		if (p->out.reasons)
			detail_line(p, s + n, len - n);
		else
			console(p, s + n, len - n);
	} else if (!len && p->out.reasons) {
		detail_line(p, s, len);
	}
	if (p->out.settled)
		end_test(p);
}

/* ---- the summary ---- */

static void
emit_summary(struct check_parser *p, bool complete)
{
	struct summary *m = &p->sum;
	struct event ev = { .type = EV_SUMMARY };
	struct test_counts *c = &ev.u.summary.counts;
	unsigned tried = m->have_ran ? m->n_ran : 0;

	if (complete)
		tried = m->n_ran;
	c->notrun = m->have_notrun ? m->n_notrun : p->sec_notrun;
	if (!complete)
		m->n_failures = m->have_failures ? m->n_failures : 0;
	c->failed = m->n_failures;
	c->ran = tried >= c->notrun ? tried - c->notrun : 0;
	c->passed = c->ran >= c->failed ? c->ran - c->failed : 0;
	c->expunged = p->sec_expunged;
	c->seconds = p->sec_seconds;
	ev.u.summary.interrupted = m->interrupted;
	ev.u.summary.failed_tests = m->have_failures ? m->failures.buf : NULL;
	ev.u.summary.notrun_tests = m->have_notrun ? m->notrun.buf : NULL;
	ev.u.summary.ran_tests = m->have_ran ? m->ran.buf : NULL;
	p->summaries++;
	emit(p, &ev);
	m->active = m->interrupted = m->have_ran = m->have_notrun = m->have_failures = false;
	m->n_ran = m->n_notrun = m->n_failures = 0;
	strbuf_reset(&m->ran);
	strbuf_reset(&m->notrun);
	strbuf_reset(&m->failures);
	section_reset(p);
	p->st = ST_IDLE;
}

static void
list_value(struct strbuf *sb, unsigned *count, const char *s, size_t len)
{
	while (len && *s == ' ') {
		s++;
		len--;
	}
	len = rtrim_len(s, len);
	strbuf_reset(sb);
	strbuf_add(sb, s, len);
	*count = count_words(s, len);
}

static void
summary_line(struct check_parser *p, const char *s, size_t len)
{
	struct summary *m = &p->sum;
	unsigned long failed, tried;

	flush_header(p);
	if (!is_summary_line(s, len)) {
		console(p, s, len);
		return;
	}
	m->active = true;
	if (has_prefix(s, len, "Ran:")) {
		m->have_ran = true;
		list_value(&m->ran, &m->n_ran, s + 4, len - 4);
	} else if (has_prefix(s, len, "Not run:")) {
		m->have_notrun = true;
		list_value(&m->notrun, &m->n_notrun, s + 8, len - 8);
	} else if (has_prefix(s, len, "Failures:")) {
		m->have_failures = true;
		list_value(&m->failures, &m->n_failures, s + 9, len - 9);
	} else if (has_prefix(s, len, "Interrupted!")) {
		m->interrupted = p->interrupted = true;
	} else if (match_total(s, len, &failed, &tried)) {
		m->n_failures = (unsigned)failed;
		m->n_ran = (unsigned)tried;
		emit_summary(p, true);
	}
}

/* ---- one line ---- */

static bool
is_rule(const char *s, size_t len)
{
	if (len < 3)
		return false;
	for (size_t i = 0; i < len; i++)
		if (s[i] != '=')
			return false;
	return true;
}

/* "NAME aggregate results across N runs: ..." (-L) */
static size_t
match_aggregate(const char *s, size_t len)
{
	size_t n = check_test_name_len(s, len);

	if (!n || !has_prefix(s + n, len - n, " aggregate results across "))
		return 0;
	return n;
}

static void
header_line(struct check_parser *p, enum hkey key, const char *s, size_t len, size_t val)
{
	struct header *h = &p->hdr;
	const char *v = s + val;
	size_t vl = rtrim_len(v, len - val);

	switch (key) {
	case HK_SECTION:
		anchor(p, false);
		header_reset(h);
		h->active = h->have_name = h->just_section = true;
		strbuf_add(&h->name, v, vl);
		strbuf_add(&h->section_line, s, len);
		break;
	case HK_RECREATING:
	case HK_FSTYP:
		if (!h->active || h->have_fstyp) {
			anchor(p, false);
			header_reset(h);
			h->active = true;
		}
		if (key == HK_RECREATING) {
			h->recreating = true;
		} else {
			h->have_fstyp = true;
			strbuf_add(&h->fstyp, v, vl);
		}
		break;
	case HK_PLATFORM:
	case HK_MKFS:
	case HK_MOUNT: {
		struct strbuf *sb = key == HK_PLATFORM ? &h->platform
				    : key == HK_MKFS   ? &h->mkfs
						       : &h->mount;

		if (!h->active || !h->have_fstyp || sb->len) {
			console(p, s, len);
			return;
		}
		strbuf_add(sb, v, vl);
		break;
	}
	case HK_NONE:
		break;
	}
	if (p->st == ST_PREAMBLE || p->st == ST_RECAP)
		p->st = ST_IDLE;
}

static void
process_line(struct check_parser *p, const char *s, size_t len, enum line_end end)
{
	size_t name_len, rest, val;
	double prev;
	enum hkey key;

	if (p->line_is_test) {
		test_line_rest(p, s + p->line_rest, len - p->line_rest, end);
		return;
	}
	if (p->in_test && p->out.want_notrun_reason) {
		test_more(p, s, len);
		if (p->in_test || !(s[0] != '\t' || !memmem(s, len, " -- ", 4)))
			return;
		/* it was not the reason line: go on with it */
	}
	if (p->hdr.just_section) {
		p->hdr.just_section = false;
		if (is_rule(s, rtrim_len(s, len))) {
			struct strbuf held = STRBUF_INIT;

			strbuf_add(&held, p->hdr.section_line.buf, p->hdr.section_line.len);
			header_reset(&p->hdr);
			p->st = ST_RECAP;
			console(p, held.buf, held.len);
			strbuf_release(&held);
			console(p, s, len);
			return;
		}
	}
	if ((key = match_header(s, len, &val)) != HK_NONE) {
		header_line(p, key, s, len, val);
		return;
	}
	if (!rtrim_len(s, len)) {
		if (p->hdr.active && p->hdr.have_fstyp)
			emit_section(p);
		else if (p->in_test)
			test_more(p, s, 0);
		else if (p->st == ST_RECAP)
			p->st = ST_IDLE;
		return;
	}
	if (p->st == ST_RECAP) {
		if (is_summary_line(s, len)) {
			console(p, s, len);
			return;
		}
		p->st = ST_IDLE;
	}
	if (is_summary_line(s, len) && summary_is_checks(p, s, len)) {
		settle_test(p, false);
		summary_line(p, s, len);
		return;
	}
	if (has_prefix(s, len, "Xunit report: ")) {
		free(p->xunit);
		p->xunit = xstrndup(s + 14, rtrim_len(s + 14, len - 14));
		return;
	}
	if ((name_len = match_aggregate(s, len))) {
		anchor(p, false);
		if (p->loop && strlen(p->loop_test) == name_len &&
		    !memcmp(p->loop_test, s, name_len))
			p->loop = false;
		char buf[CHECK_NAME_MAX + 1];

		copy_name(buf, s, name_len);
		p->last_failed = false;
		emit_console(p, s, len, buf);
		return;
	}
	if ((name_len = check_test_name_len(s, len)) && rtrim_len(s, len) == name_len + 24 &&
	    !memcmp(s + name_len, " - unknown test, ignored", 24)) {
		char buf[CHECK_NAME_MAX + 1];

		copy_name(buf, s, name_len);
		warn(p,
		     "check ignored '%s': not a test in its tree (no such name in its group list)",
		     buf);
		return;
	}
	if (start_rule(p, s, len, end, &name_len, &rest, &prev) == SR_FIRE) {
		start_test(p, s, name_len, prev);
		test_line_rest(p, s + rest, len - rest, end);
		return;
	}
	if (p->in_test) {
		test_more(p, s, len);
		return;
	}
	flush_header(p);
	console(p, s, len);
}

/* After a feed: does the partial line already name a starting test? */
static void
check_partial(struct check_parser *p)
{
	size_t len = p->la.line.len, name_len, rest;
	double prev;

	while (len && p->la.line.buf[len - 1] == '\r')
		len--;
	switch (start_rule(p, p->la.line.buf, len, LE_NONE, &name_len, &rest, &prev)) {
	case SR_FIRE:
		start_test(p, p->la.line.buf, name_len, prev);
		p->line_is_test = true;
		p->line_rest = rest;
		break;
	case SR_NOT_TEST:
		p->line_checked = true;
		break;
	case SR_WAIT:
		break;
	}
}

static void
line_done(struct check_parser *p, enum line_end end)
{
	size_t len = p->la.line.len;

	while (len && p->la.line.buf[len - 1] == '\r')
		len--;
	p->la.line.buf[len] = '\0';
	p->lines++;
	process_line(p, p->la.line.buf, len, end);
	strbuf_reset(&p->la.line);
	p->line_checked = p->line_is_test = false;
	p->line_rest = 0;
}

/* A whole line (or one cut at CHECK_LINE_MAX) from the line assembler. */
static void
on_line(void *data, char *line, size_t len, bool cut)
{
	struct check_parser *p = data;

	if (!cut) {
		line_done(p, LE_NEWLINE);
		return;
	}
	p->cut++;
	line_done(p, LE_NEWLINE);
	/* after the line: a TEST_START on it may have come already */
	warn(p, "check output line %zu is longer than %u KiB; cut there", p->lines,
	     CHECK_LINE_MAX / 1024);
}

/* ---- the public interface ---- */

struct check_parser *
check_parser_new(struct event_bus *bus, const char *config)
{
	struct check_parser *p = xcalloc(1, sizeof(*p));

	p->bus = bus;
	p->config = config ? xstrdup(config) : NULL;
	p->st = ST_PREAMBLE;
	line_asm_init(&p->la, CHECK_LINE_MAX, false);
	strbuf_init(&p->detail);
	strbuf_init(&p->scratch);
	strbuf_init(&p->hdr.name);
	strbuf_init(&p->hdr.fstyp);
	strbuf_init(&p->hdr.platform);
	strbuf_init(&p->hdr.mkfs);
	strbuf_init(&p->hdr.mount);
	strbuf_init(&p->hdr.section_line);
	strbuf_init(&p->sum.ran);
	strbuf_init(&p->sum.notrun);
	strbuf_init(&p->sum.failures);
	check_outcome_init(&p->out);
	return p;
}

void
check_parser_free(struct check_parser *p)
{
	if (!p)
		return;
	line_asm_release(&p->la);
	strbuf_release(&p->detail);
	strbuf_release(&p->hints);
	strbuf_release(&p->scratch);
	strbuf_release(&p->hdr.name);
	strbuf_release(&p->hdr.fstyp);
	strbuf_release(&p->hdr.platform);
	strbuf_release(&p->hdr.mkfs);
	strbuf_release(&p->hdr.mount);
	strbuf_release(&p->hdr.section_line);
	strbuf_release(&p->sum.ran);
	strbuf_release(&p->sum.notrun);
	strbuf_release(&p->sum.failures);
	check_outcome_release(&p->out);
	free(p->config);
	free(p->section);
	free(p->xunit);
	free(p);
}

void
check_parser_feed(struct check_parser *p, const char *buf, size_t len)
{
	if (p->finished)
		BUG("check_parser_feed() after check_parser_finish()");
	line_asm_feed(&p->la, buf, len, on_line, p);
	if (p->la.line.len && !p->line_checked && !p->line_is_test)
		check_partial(p);
}

void
check_parser_finish(struct check_parser *p)
{
	if (p->finished)
		return;
	if (p->la.line.len && !p->la.discarding)
		line_done(p, LE_EOF);
	line_asm_reset(&p->la);
	if (p->in_test && p->out.want_notrun_reason) {
		p->out.want_notrun_reason = false;
		p->out.settled = true;
	}
	if (p->in_test && p->out.any)
		end_test(p);
	flush_header(p);
	if (p->sum.active)
		emit_summary(p, false);
	p->finished = true;
}

const char *
check_parser_current_test(const struct check_parser *p, unsigned *rerun)
{
	if (p->in_test) {
		if (rerun)
			*rerun = p->rerun;
		return p->test;
	}
	if (p->have_unfinished) {
		if (rerun)
			*rerun = p->unfinished_rerun;
		return p->unfinished;
	}
	return NULL;
}

bool
check_parser_interrupted(const struct check_parser *p)
{
	return p->interrupted;
}

unsigned
check_parser_summaries(const struct check_parser *p)
{
	return p->summaries;
}

const char *
check_parser_xunit(const struct check_parser *p)
{
	return p->xunit;
}

size_t
check_parser_lines(const struct check_parser *p)
{
	return p->lines;
}

size_t
check_parser_cut_lines(const struct check_parser *p)
{
	return p->cut;
}
