/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The run record (fstests/results.h): a run's sections and tests, how a
 * test that ran again is kept, the counts, the artifacts a results
 * directory holds for each test, and the times the other files of the
 * module write and read. run.json, junit.xml, result.xml, check.log, the
 * listener and the import have files of their own (results_internal.h
 * names them).
 */
#include "fstests/results.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/paths.h"
#include "fstests/catalogue.h"
#include "fstests/check_parser.h"
#include "fstests/results_internal.h"

void
results_replace(char **dst, const char *src)
{
	char *n = src ? xstrdup(src) : NULL;

	free(*dst);
	*dst = n;
}

void
run_record_init(struct run_record *rec)
{
	memset(rec, 0, sizeof(*rec));
	rec->exit_code = -1;
}

void
results_test_release(struct test_result *t)
{
	free(t->test);
	free(t->reason);
	free(t->detail);
	free(t->hints);
	free(t->out_bad);
	free(t->full);
	free(t->dmesg);
	free(t->kmsg);
	free(t->iterations);
}

static void
section_release(struct section_result *s)
{
	for (size_t i = 0; i < s->ntests; i++)
		results_test_release(&s->tests[i]);
	free(s->tests);
	free(s->name);
	free(s->config);
	free(s->fstyp);
	free(s->mkfs_options);
	free(s->mount_options);
	free(s->stopped_at);
	strvec_clear(&s->properties);
	for (size_t i = 0; i < s->nstopped; i++)
		free(s->stopped[i].test);
	free(s->stopped);
	strvec_clear(&s->unreached);
}

void
run_record_release(struct run_record *rec)
{
	for (size_t i = 0; i < rec->nsections; i++)
		section_release(&rec->sections[i]);
	free(rec->sections);
	free(rec->id);
	free(rec->kernel);
	free(rec->hostname);
	free(rec->backend);
	free(rec->stopped_at);
	free(rec->error);
	run_record_init(rec);
}

static bool
same_name(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

struct section_result *
run_record_section(struct run_record *rec, const char *name, const char *config)
{
	struct section_result *s;

	for (size_t i = 0; i < rec->nsections; i++) {
		s = &rec->sections[i];
		if (same_name(s->name, name)) {
			if (!s->config && config)
				s->config = xstrdup(config);
			return s;
		}
	}
	ALLOC_GROW(rec->sections, rec->nsections + 1, rec->alloc);
	s = &rec->sections[rec->nsections++];
	memset(s, 0, sizeof(*s));
	strvec_init(&s->properties);
	s->name = name ? xstrdup(name) : NULL;
	s->config = config ? xstrdup(config) : NULL;
	return s;
}

struct test_result *
section_find_test(struct section_result *sec, const char *test)
{
	for (size_t i = 0; i < sec->ntests; i++)
		if (!strcmp(sec->tests[i].test, test))
			return &sec->tests[i];
	return NULL;
}

bool
results_is_failure(enum test_status st)
{
	return st == TS_FAIL || st == TS_CRASHED || st == TS_HUNG;
}

void
results_push_iteration(struct test_result *t, enum test_status status, double seconds)
{
	ALLOC_GROW(t->iterations, t->niterations + 1, t->alloc_iterations);
	t->iterations[t->niterations++] = (struct test_iteration){ status, seconds };
}

void
test_result_run_counts(const struct test_result *t, unsigned *passed, unsigned *failed)
{
	*passed = *failed = 0;
	for (size_t i = 0; i < t->niterations; i++) {
		*passed += t->iterations[i].status == TS_PASS;
		*failed += results_is_failure(t->iterations[i].status);
	}
	if (!t->niterations) {
		*passed = t->status == TS_PASS;
		*failed = results_is_failure(t->status);
	}
}

struct test_result *
section_add_test(struct section_result *sec, const char *test, enum test_status status,
		 double seconds, unsigned reasons, const char *reason, const char *detail,
		 const char *hints)
{
	struct test_result *t = section_find_test(sec, test);

	if (t) {
		if (!t->niterations)
			results_push_iteration(t, t->status, t->seconds);
		results_push_iteration(t, status, seconds);
		t->reruns++;
		if (results_is_failure(status) && !results_is_failure(t->status)) {
			t->status = status;
			t->reasons = reasons;
			results_replace(&t->reason, reason);
			results_replace(&t->detail, detail);
			results_replace(&t->hints, hints);
		}
		return t;
	}
	ALLOC_GROW(sec->tests, sec->ntests + 1, sec->alloc);
	t = &sec->tests[sec->ntests++];
	memset(t, 0, sizeof(*t));
	t->test = xstrdup(test);
	t->status = status;
	t->seconds = seconds;
	t->reasons = reasons;
	t->reason = reason ? xstrdup(reason) : NULL;
	t->detail = detail ? xstrdup(detail) : NULL;
	t->hints = hints ? xstrdup(hints) : NULL;
	return t;
}

void
results_counts_sum(struct test_counts *to, const struct test_counts *c)
{
	to->ran += c->ran;
	to->passed += c->passed;
	to->failed += c->failed;
	to->notrun += c->notrun;
	to->expunged += c->expunged;
	to->crashed += c->crashed;
	to->hung += c->hung;
	to->seconds += c->seconds;
}

void
run_record_recount(struct run_record *rec)
{
	memset(&rec->counts, 0, sizeof(rec->counts));
	for (size_t i = 0; i < rec->nsections; i++) {
		struct section_result *s = &rec->sections[i];

		memset(&s->counts, 0, sizeof(s->counts));
		for (size_t j = 0; j < s->ntests; j++)
			test_counts_add(&s->counts, s->tests[j].status, s->tests[j].seconds);
		results_counts_sum(&rec->counts, &s->counts);
	}
}

bool
results_seconds_ok(double seconds)
{
	return isfinite(seconds) && seconds >= 0 && seconds <= RESULTS_SECONDS_MAX;
}

/*
 * dir/TEST.ext when it is a regular file reached without a symlink and test
 * is a test name, else NULL (free() it).
 */
char *
results_file_if_there(const char *dir, const char *test, const char *ext)
{
	char *rel = xasprintf("%s%s", test, ext);
	char *p = NULL;

	if (catalogue_test_name_ok(test) && file_beneath(dir, rel))
		p = xasprintf("%s/%s", dir, rel);
	free(rel);
	return p;
}

/* A small file's text without trailing white space, or NULL. */
static char *
read_small(const char *path, size_t max)
{
	char *text = NULL;
	size_t len;

	if (read_file(path, max, &text, &len) != OK) {
		error_clear();
		return NULL;
	}
	while (len && isspace((unsigned char)text[len - 1]))
		text[--len] = '\0';
	return text;
}

void
section_attach_artifacts(struct section_result *sec, const char *report_dir)
{
	for (size_t i = 0; i < sec->ntests; i++) {
		struct test_result *t = &sec->tests[i];
		char *p;

		if (!t->out_bad)
			t->out_bad = results_file_if_there(report_dir, t->test, ".out.bad");
		if (!t->full)
			t->full = results_file_if_there(report_dir, t->test, ".full");
		if (!t->dmesg)
			t->dmesg = results_file_if_there(report_dir, t->test, ".dmesg");
		if (!t->kmsg)
			t->kmsg = results_file_if_there(report_dir, t->test, ".kmsg");
		if (results_is_failure(t->status) && !t->hints &&
		    (p = results_file_if_there(report_dir, t->test, ".hints"))) {
			t->hints = read_small(p, CHECK_REASON_MAX);
			free(p);
		}
		if (t->status == TS_NOTRUN && !t->reason &&
		    (p = results_file_if_there(report_dir, t->test, ".notrun"))) {
			t->reason = read_small(p, RESULTS_NOTRUN_MAX);
			free(p);
		}
	}
}

void
section_add_stop(struct section_result *sec, const char *test, double seconds)
{
	sec->stopped = xrealloc(sec->stopped, (sec->nstopped + 1) * sizeof(*sec->stopped));
	sec->stopped[sec->nstopped].test = xstrdup(test);
	sec->stopped[sec->nstopped].seconds = seconds;
	sec->nstopped++;
}

void
results_format_time(uint64_t ms, char *buf, size_t len, bool millis)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;

	gmtime_r(&t, &tm);
	if (millis)
		snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03uZ", tm.tm_year + 1900,
			 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
			 (unsigned)(ms % 1000));
	else
		snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d+00:00", tm.tm_year + 1900,
			 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

/*
 * "2026-12-03T07:51:54.000Z", "2026-12-03T07:51:54+01:00",
 * "2026-12-03T07:51:54Z": ms since the epoch, 0 when it is not one.
 */
uint64_t
results_parse_iso_time(const char *s)
{
	struct tm tm = { 0 };
	int y, mo, d, h, mi, sec, n = 0;
	unsigned ms = 0;
	long off = 0;
	time_t t;

	if (!s || sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &sec, &n) != 6)
		return 0;
	s += n;
	if (*s == '.') {
		unsigned scale = 100;

		for (s++; isdigit((unsigned char)*s); s++) {
			ms += (unsigned)(*s - '0') * scale;
			scale /= 10;
		}
	}
	if (*s == '+' || *s == '-') {
		int oh, om;

		if (sscanf(s + 1, "%2d:%2d", &oh, &om) != 2)
			return 0;
		off = (oh * 60L + om) * 60L * (*s == '-' ? -1 : 1);
	} else if (*s != 'Z' && *s) {
		return 0;
	}
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = sec;
	t = timegm(&tm);
	if (t == (time_t)-1)
		return 0;
	return (uint64_t)(t - off) * 1000 + ms;
}
