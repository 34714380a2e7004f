/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * check.log (check's running log: one entry per section run) and
 * check.time (each test's last time), read; lines they do not know are
 * skipped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fstests/catalogue.h"
#include "fstests/results.h"
#include "fstests/results_internal.h"

/* date(1)'s "Thu Dec  3 07:53:01 UTC 2026" when in UTC or GMT, else 0. */
static uint64_t
parse_date_line(const char *s)
{
	static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
	char wd[8], mon[8], tz[16];
	int d, h, mi, sec, y;
	struct tm tm = { 0 };
	const char *m;

	if (sscanf(s, "%7s %7s %d %d:%d:%d %15s %d", wd, mon, &d, &h, &mi, &sec, tz, &y) != 8)
		return 0;
	if (strcmp(tz, "UTC") && strcmp(tz, "GMT"))
		return 0;
	m = strlen(mon) == 3 ? strstr(months, mon) : NULL;
	if (!m || (m - months) % 3)
		return 0;
	tm.tm_year = y - 1900;
	tm.tm_mon = (int)((m - months) / 3);
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = sec;
	return (uint64_t)timegm(&tm) * 1000;
}

static struct check_log_block *
log_block_new(struct check_log *log)
{
	struct check_log_block *b;

	ALLOC_GROW(log->blocks, log->n + 1, log->alloc);
	b = &log->blocks[log->n++];
	memset(b, 0, sizeof(*b));
	strvec_init(&b->ran);
	strvec_init(&b->notrun);
	strvec_init(&b->failures);
	b->failed = b->total = -1;
	return b;
}

void
check_log_parse(const char *text, size_t len, struct check_log *out)
{
	const char *p = text, *end = text + len;
	struct check_log_block *b = NULL;
	bool want_date = false;

	memset(out, 0, sizeof(*out));
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
		char *line = xstrndup(p, l);
		char *t = str_trim(line);
		int a, c;

		if (str_startswith(t, "Kernel version:")) {
			b = log_block_new(out);
			b->kernel = xstrdup(str_trim(t + 15));
			want_date = true;
		} else if (!*t) {
			/* blank lines separate blocks */
		} else {
			if (!b)
				b = log_block_new(out);
			if (str_startswith(t, "Ran:")) {
				strvec_split(&b->ran, t + 4, " \t");
			} else if (str_startswith(t, "Not run:")) {
				strvec_split(&b->notrun, t + 8, " \t");
			} else if (str_startswith(t, "Failures:")) {
				strvec_split(&b->failures, t + 9, " \t");
			} else if (!strcmp(t, "Interrupted!")) {
				b->interrupted = true;
			} else if (sscanf(t, "Failed %d of %d tests", &a, &c) == 2) {
				b->failed = a;
				b->total = c;
			} else if (sscanf(t, "Passed all %d tests", &c) == 1) {
				b->passed_all = true;
				b->failed = 0;
				b->total = c;
			} else if (want_date && !b->date) {
				b->date = xstrdup(t);
				b->date_ms = parse_date_line(t);
			}
			want_date = false;
		}
		free(line);
		if (!nl)
			break;
		p = nl + 1;
	}
}

void
check_log_release(struct check_log *log)
{
	for (size_t i = 0; i < log->n; i++) {
		free(log->blocks[i].kernel);
		free(log->blocks[i].date);
		strvec_clear(&log->blocks[i].ran);
		strvec_clear(&log->blocks[i].notrun);
		strvec_clear(&log->blocks[i].failures);
	}
	free(log->blocks);
	memset(log, 0, sizeof(*log));
}

void
check_time_parse(const char *text, size_t len, struct check_time *out)
{
	const char *p = text, *end = text + len;

	strvec_init(&out->tests);
	out->seconds = NULL;
	out->alloc = 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
		char *line = xstrndup(p, l);
		char name[256];
		double s;

		if (sscanf(line, "%255s %lf", name, &s) == 2 && results_seconds_ok(s) &&
		    catalogue_test_name_ok(name)) {
			size_t i;

			for (i = 0; i < out->tests.n && strcmp(out->tests.v[i], name); i++)
				;
			if (i == out->tests.n) {
				strvec_push(&out->tests, name);
				ALLOC_GROW(out->seconds, out->tests.n, out->alloc);
			}
			out->seconds[i] = s;
		}
		free(line);
		if (!nl)
			break;
		p = nl + 1;
	}
}

void
check_time_release(struct check_time *ct)
{
	strvec_clear(&ct->tests);
	free(ct->seconds);
	ct->seconds = NULL;
	ct->alloc = 0;
}

double
check_time_get(const struct check_time *ct, const char *test)
{
	for (size_t i = 0; i < ct->tests.n; i++)
		if (!strcmp(ct->tests.v[i], test))
			return ct->seconds[i];
	return -1;
}
