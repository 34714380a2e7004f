/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "fstests/results.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/jread.h"
#include "core/paths.h"
#include "fstests/catalogue.h"
#include "fstests/check_parser.h"

/* Caps on what is read from results directories. */
#define XML_MAX	     (256u << 20)
#define LOG_MAX	     (64u << 20)
#define NOTRUN_MAX   (64u << 10)
#define STDOUT_MAX   (1u << 30)
#define XML_TEXT_MAX (4u << 20) /* of one system-out/err */

/* ------------------------------------------------------------------ */
/* The record */

static void
replace(char **dst, const char *src)
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

static void
test_result_release(struct test_result *t)
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
		test_result_release(&s->tests[i]);
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

static bool
is_failure(enum test_status st)
{
	return st == TS_FAIL || st == TS_CRASHED || st == TS_HUNG;
}

static void
push_iteration(struct test_result *t, enum test_status status, double seconds)
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
		*failed += is_failure(t->iterations[i].status);
	}
	if (!t->niterations) {
		*passed = t->status == TS_PASS;
		*failed = is_failure(t->status);
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
			push_iteration(t, t->status, t->seconds);
		push_iteration(t, status, seconds);
		t->reruns++;
		if (is_failure(status) && !is_failure(t->status)) {
			t->status = status;
			t->reasons = reasons;
			replace(&t->reason, reason);
			replace(&t->detail, detail);
			replace(&t->hints, hints);
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

static void
counts_sum(struct test_counts *to, const struct test_counts *c)
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
		counts_sum(&rec->counts, &s->counts);
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
static char *
file_if_there(const char *dir, const char *test, const char *ext)
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
			t->out_bad = file_if_there(report_dir, t->test, ".out.bad");
		if (!t->full)
			t->full = file_if_there(report_dir, t->test, ".full");
		if (!t->dmesg)
			t->dmesg = file_if_there(report_dir, t->test, ".dmesg");
		if (!t->kmsg)
			t->kmsg = file_if_there(report_dir, t->test, ".kmsg");
		if (is_failure(t->status) && !t->hints &&
		    (p = file_if_there(report_dir, t->test, ".hints"))) {
			t->hints = read_small(p, CHECK_REASON_MAX);
			free(p);
		}
		if (t->status == TS_NOTRUN && !t->reason &&
		    (p = file_if_there(report_dir, t->test, ".notrun"))) {
			t->reason = read_small(p, NOTRUN_MAX);
			free(p);
		}
	}
}

/* ------------------------------------------------------------------ */
/* Times */

static void
format_time_ms(uint64_t ms, char *buf, size_t len, bool millis)
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
static uint64_t
parse_iso_time(const char *s)
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

/* ------------------------------------------------------------------ */
/* run.json */

/* A JSON string; text that is not UTF-8 gets '?' for its bad bytes. */
static json_t *
jstr(const char *s)
{
	json_t *j;
	char *clean;

	if (!s)
		return json_null();
	if ((j = json_string(s)))
		return j;
	clean = utf8_clean(s);
	j = json_string(clean);
	free(clean);
	return j ? j : json_string("");
}

static json_t *
jtime(uint64_t ms)
{
	char buf[80];

	if (!ms)
		return json_null();
	format_time_ms(ms, buf, sizeof(buf), true);
	return json_string(buf);
}

static json_t *
jcounts(const struct test_counts *c)
{
	return json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:f}", "ran", (json_int_t)c->ran, "passed",
			 (json_int_t)c->passed, "failed", (json_int_t)c->failed, "notrun",
			 (json_int_t)c->notrun, "expunged", (json_int_t)c->expunged, "crashed",
			 (json_int_t)c->crashed, "hung", (json_int_t)c->hung, "seconds",
			 c->seconds);
}

static json_t *
jtest(const struct test_result *t)
{
	json_t *o = json_object(), *r = json_array(), *a = json_object();

	json_object_set_new(o, "test", jstr(t->test));
	json_object_set_new(o, "status", json_string(test_status_str(t->status)));
	json_object_set_new(o, "seconds", t->seconds >= 0 ? json_real(t->seconds) : json_null());
	json_object_set_new(o, "reason", jstr(t->reason));
	for (int b = 0; b < FAIL_REASON_COUNT; b++)
		if (t->reasons & (1u << b))
			json_array_append_new(r, json_string(fail_reason_key(b)));
	json_object_set_new(o, "reasons", r);
	json_object_set_new(o, "detail", jstr(t->detail));
	json_object_set_new(o, "hints", jstr(t->hints));
	json_object_set_new(o, "reruns", json_integer(t->reruns));
	if (t->shard)
		json_object_set_new(o, "shard", json_integer(t->shard));
	if (t->niterations) {
		json_t *its = json_array();

		for (size_t i = 0; i < t->niterations; i++)
			json_array_append_new(
				its, json_pack("{s:s,s:o}", "status",
					       test_status_str(t->iterations[i].status), "seconds",
					       t->iterations[i].seconds >= 0
						       ? json_real(t->iterations[i].seconds)
						       : json_null()));
		json_object_set_new(o, "iterations", its);
	}
	if (t->out_bad)
		json_object_set_new(a, "out_bad", jstr(t->out_bad));
	if (t->full)
		json_object_set_new(a, "full", jstr(t->full));
	if (t->dmesg)
		json_object_set_new(a, "dmesg", jstr(t->dmesg));
	if (t->kmsg)
		json_object_set_new(a, "kmsg", jstr(t->kmsg));
	json_object_set_new(o, "artifacts", a);
	return o;
}

char *
run_record_to_json(const struct run_record *rec)
{
	json_t *root = json_object(), *secs = json_array();
	struct test_counts total = { 0 };
	struct test_counts *sc = xcalloc(rec->nsections + 1, sizeof(*sc));
	char *text;

	/* counts as the tests say, whatever the caller kept */
	for (size_t i = 0; i < rec->nsections; i++) {
		for (size_t j = 0; j < rec->sections[i].ntests; j++)
			test_counts_add(&sc[i], rec->sections[i].tests[j].status,
					rec->sections[i].tests[j].seconds);
		counts_sum(&total, &sc[i]);
	}
	json_object_set_new(root, "version", json_integer(RUN_JSON_VERSION));
	json_object_set_new(root, "id", jstr(rec->id));
	json_object_set_new(root, "start", jtime(rec->start_ms));
	json_object_set_new(root, "end", jtime(rec->end_ms));
	json_object_set_new(root, "kernel", jstr(rec->kernel));
	json_object_set_new(root, "hostname", jstr(rec->hostname));
	json_object_set_new(root, "finished", json_boolean(rec->finished));
	json_object_set_new(root, "interrupted", json_boolean(rec->interrupted));
	json_object_set_new(root, "stopped_at", jstr(rec->stopped_at));
	json_object_set_new(root, "exit_code",
			    rec->exit_code >= 0 ? json_integer(rec->exit_code) : json_null());
	json_object_set_new(root, "error", jstr(rec->error));
	if (rec->shards > 1)
		json_object_set_new(root, "shards", json_integer(rec->shards));
	json_object_set_new(root, "counts", jcounts(&total));
	for (size_t i = 0; i < rec->nsections; i++) {
		const struct section_result *s = &rec->sections[i];
		json_t *o = json_object(), *tests = json_array();

		json_object_set_new(o, "name", jstr(s->name));
		json_object_set_new(o, "config", jstr(s->config));
		json_object_set_new(o, "fstyp", jstr(s->fstyp));
		json_object_set_new(o, "mkfs_options", jstr(s->mkfs_options));
		json_object_set_new(o, "mount_options", jstr(s->mount_options));
		json_object_set_new(o, "interrupted", json_boolean(s->interrupted));
		json_object_set_new(o, "stopped_at", jstr(s->stopped_at));
		if (s->nstopped) {
			json_t *a = json_array();

			for (size_t k = 0; k < s->nstopped; k++)
				json_array_append_new(
					a, json_pack("{s:s,s:o}", "test", s->stopped[k].test,
						     "seconds",
						     s->stopped[k].seconds >= 0
							     ? json_real(s->stopped[k].seconds)
							     : json_null()));
			json_object_set_new(o, "stopped", a);
		}
		if (s->unreached.n)
			json_object_set_new(o, "unreached", json_strvec(&s->unreached));
		json_object_set_new(o, "counts", jcounts(&sc[i]));
		if (s->properties.n) {
			json_t *p = json_object();

			for (size_t k = 0; k < s->properties.n; k++) {
				const char *eq = strchr(s->properties.v[k], '=');
				char *key = xstrndup(s->properties.v[k],
						     eq ? (size_t)(eq - s->properties.v[k])
							: strlen(s->properties.v[k]));

				char *ckey = utf8_clean(key);

				json_object_set_new(p, ckey, jstr(eq ? eq + 1 : ""));
				free(ckey);
				free(key);
			}
			json_object_set_new(o, "properties", p);
		}
		for (size_t j = 0; j < s->ntests; j++)
			json_array_append_new(tests, jtest(&s->tests[j]));
		json_object_set_new(o, "tests", tests);
		json_array_append_new(secs, o);
	}
	json_object_set_new(root, "sections", secs);
	free(sc);
	text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII);
	json_decref(root);
	if (!text)
		BUG("cannot serialise a run record");
	{
		char *out = xasprintf("%s\n", text);

		free(text);
		return out;
	}
}

static enum status
jget_time(struct jreader *c, json_t *o, const char *field, uint64_t *out)
{
	char *s = NULL;
	enum status rc = jread_str(c, o, field, true, &s);

	if (rc == OK && s) {
		*out = parse_iso_time(s);
		/* from 1970 to the year 9999: anything else is not a run's time */
		if (!*out || *out > UINT64_C(253402300799999))
			rc = jread_bad_at(c, field, "is not a time like 2026-12-03T07:51:54.000Z");
	}
	free(s);
	return rc;
}

/* "iterations": [ { "status": ..., "seconds": ... } ], when there. */
static enum status
read_iterations(struct jreader *c, json_t *a, struct test_result *t)
{
	size_t i;
	json_t *it;

	if (!a || json_is_null(a))
		return OK;
	if (!json_is_array(a))
		return jread_bad_at(c, "iterations", "must be a list");
	json_array_foreach(a, i, it)
	{
		json_t *st = json_object_get(it, "status"), *secs = json_object_get(it, "seconds");
		enum test_status status;

		if (!json_is_string(st) || test_status_parse(json_string_value(st), &status) != OK)
			return jread_bad_at(c, "iterations", "holds a run without a known status");
		if (secs && !json_is_null(secs) && !json_is_number(secs))
			return jread_bad_at(c, "iterations",
					    "holds a run whose seconds are not a number");
		push_iteration(t, status, json_is_number(secs) ? json_number_value(secs) : -1);
	}
	return OK;
}

static enum status
read_test(struct jreader *c, json_t *o, struct section_result *sec)
{
	char *test = NULL, *status = NULL, *reason = NULL, *detail = NULL, *hints = NULL;
	json_t *v, *a;
	enum test_status st;
	double seconds = -1;
	unsigned reasons = 0, reruns = 0;
	struct test_result *t;
	enum status rc;

	if (!json_is_object(o))
		return jread_bad(c, "must be an object");
	if ((rc = jread_str(c, o, "test", true, &test)) != OK ||
	    (rc = jread_str(c, o, "status", true, &status)))
		goto out;
	if (!test || !*test) {
		rc = jread_bad_at(c, "test", "is missing");
		goto out;
	}
	if (!catalogue_test_name_ok(test)) {
		rc = jread_bad_at(c, "test", "is not a test name like generic/001");
		goto out;
	}
	if (!status) {
		rc = jread_bad_at(c, "status", "is missing");
		goto out;
	}
	if (test_status_parse(status, &st) != OK) {
		char what[128];

		snprintf(what, sizeof(what), "unknown status '%.60s'", status);
		rc = jread_bad_at(c, "status", "%s", what);
		goto out;
	}
	v = json_object_get(o, "seconds");
	if (v && !json_is_null(v)) {
		if (!json_is_number(v)) {
			rc = jread_bad_at(c, "seconds", "must be a number or null");
			goto out;
		}
		seconds = json_number_value(v);
		if (!results_seconds_ok(seconds)) {
			rc = jread_bad_at(c, "seconds",
					  "must be a number of seconds from 0 to 10000000");
			goto out;
		}
	}
	v = json_object_get(o, "reruns");
	if (v && !json_is_null(v)) {
		if (!json_is_integer(v) || json_integer_value(v) < 0) {
			rc = jread_bad_at(c, "reruns", "must be a whole number");
			goto out;
		}
		reruns = (unsigned)json_integer_value(v);
	}
	a = json_object_get(o, "reasons");
	if (a && !json_is_null(a)) {
		size_t i;

		if (!json_is_array(a)) {
			rc = jread_bad_at(c, "reasons", "must be a list");
			goto out;
		}
		json_array_foreach(a, i, v)
		{
			int b;

			for (b = 0; b < FAIL_REASON_COUNT; b++)
				if (json_is_string(v) &&
				    !strcmp(json_string_value(v), fail_reason_key(b)))
					break;
			if (b == FAIL_REASON_COUNT) {
				rc = jread_bad_at(c, "reasons", "holds an unknown reason");
				goto out;
			}
			reasons |= 1u << b;
		}
	}
	if ((rc = jread_str(c, o, "reason", true, &reason)) != OK ||
	    (rc = jread_str(c, o, "detail", true, &detail)) != OK ||
	    (rc = jread_str(c, o, "hints", true, &hints)) != OK)
		goto out;
	t = section_add_test(sec, test, st, seconds, reasons, reason, detail, hints);
	t->reruns = reruns;
	if ((rc = jread_count(c, o, "shard", 64, &t->shard)) != OK)
		goto out;
	if ((rc = read_iterations(c, json_object_get(o, "iterations"), t)) != OK)
		goto out;
	a = json_object_get(o, "artifacts");
	if (a && !json_is_null(a)) {
		if (!json_is_object(a)) {
			rc = jread_bad_at(c, "artifacts", "must be an object");
			goto out;
		}
		size_t len;

		jread_push(c, "artifacts", &len);
		if ((rc = jread_str(c, a, "out_bad", true, &t->out_bad)) != OK ||
		    (rc = jread_str(c, a, "full", true, &t->full)) != OK ||
		    (rc = jread_str(c, a, "dmesg", true, &t->dmesg)) != OK ||
		    (rc = jread_str(c, a, "kmsg", true, &t->kmsg)) != OK)
			goto out;
		strbuf_setlen(&c->path, len);
	}
out:
	free(test);
	free(status);
	free(reason);
	free(detail);
	free(hints);
	return rc;
}

void
section_add_stop(struct section_result *sec, const char *test, double seconds)
{
	sec->stopped = xrealloc(sec->stopped, (sec->nstopped + 1) * sizeof(*sec->stopped));
	sec->stopped[sec->nstopped].test = xstrdup(test);
	sec->stopped[sec->nstopped].seconds = seconds;
	sec->nstopped++;
}

/* "stopped": [ { "test": ..., "seconds": ... } ], when there. */
static enum status
read_stopped(struct jreader *c, json_t *a, struct section_result *sec)
{
	json_t *it;
	size_t i;

	if (!a || json_is_null(a))
		return OK;
	if (!json_is_array(a))
		return jread_bad_at(c, "stopped", "must be a list");
	json_array_foreach(a, i, it)
	{
		const char *test = json_string_value(json_object_get(it, "test"));
		json_t *secs = json_object_get(it, "seconds");
		double seconds = -1;

		if (!test || !catalogue_test_name_ok(test))
			return jread_bad_at(c, "stopped", "holds an entry without a test name");
		if (secs && !json_is_null(secs)) {
			seconds = json_is_number(secs) ? json_number_value(secs) : -2;
			if (!results_seconds_ok(seconds))
				return jread_bad_at(c, "stopped",
						    "holds seconds that are not 0 to 10000000");
		}
		section_add_stop(sec, test, seconds);
	}
	return OK;
}

static enum status
read_section(struct jreader *c, json_t *o, struct run_record *rec)
{
	char *name = NULL, *config = NULL;
	struct section_result *sec;
	json_t *tests, *props, *v;
	enum status rc;
	size_t base = c->path.len;

	if (!json_is_object(o))
		return jread_bad(c, "must be an object");
	if ((rc = jread_str(c, o, "name", true, &name)) != OK ||
	    (rc = jread_str(c, o, "config", true, &config)) != OK) {
		free(name);
		free(config);
		return rc;
	}
	sec = run_record_section(rec, name, config);
	free(name);
	free(config);
	if ((rc = jread_str(c, o, "fstyp", true, &sec->fstyp)) != OK ||
	    (rc = jread_str(c, o, "mkfs_options", true, &sec->mkfs_options)) != OK ||
	    (rc = jread_str(c, o, "mount_options", true, &sec->mount_options)) != OK ||
	    (rc = jread_bool(c, o, "interrupted", &sec->interrupted)) != OK ||
	    (rc = jread_str(c, o, "stopped_at", true, &sec->stopped_at)) != OK ||
	    (rc = read_stopped(c, json_object_get(o, "stopped"), sec)) != OK ||
	    (rc = jread_strvec(c, o, "unreached", &sec->unreached)) != OK)
		return rc;
	for (size_t i = 0; i < sec->unreached.n; i++)
		if (!catalogue_test_name_ok(sec->unreached.v[i]))
			return jread_bad_at(c, "unreached", "holds a name that is not a test name");
	props = json_object_get(o, "properties");
	if (props && !json_is_null(props)) {
		const char *key;

		if (!json_is_object(props))
			return jread_bad_at(c, "properties", "must be an object");
		json_object_foreach(props, key, v)
		{
			if (!json_is_string(v))
				return jread_bad_at(c, "properties", "values must be strings");
			strvec_pushf(&sec->properties, "%s=%s", key, json_string_value(v));
		}
	}
	tests = json_object_get(o, "tests");
	if (!tests || json_is_null(tests))
		return OK;
	if (!json_is_array(tests))
		return jread_bad_at(c, "tests", "must be a list");
	for (size_t i = 0; i < json_array_size(tests); i++) {
		strbuf_setlen(&c->path, base);
		strbuf_addf(&c->path, "%stests[%zu]", base ? "." : "", i);
		if ((rc = read_test(c, json_array_get(tests, i), sec)) != OK)
			return rc;
	}
	strbuf_setlen(&c->path, base);
	return OK;
}

enum status
run_record_from_json(const char *text, const char *source, struct run_record *out)
{
	struct jreader c = { .source = source ? source : "run.json", .null_is_missing = true };
	json_error_t jerr;
	json_t *root = json_loads(text, 0, &jerr), *v, *secs;
	struct run_record rec;
	enum status rc = OK;

	run_record_init(&rec);
	if (!root)
		return error(ERR_PARSE, "%s:%d: %s", c.source, jerr.line, jerr.text);
	strbuf_init(&c.path);
	if (!json_is_object(root)) {
		rc = error(ERR_INVALID, "%s: not a run record (a JSON object)", c.source);
		goto out;
	}
	v = json_object_get(root, "version");
	if (!json_is_integer(v) || json_integer_value(v) < 1 ||
	    json_integer_value(v) > RUN_JSON_VERSION) {
		rc = error(ERR_INVALID,
			   "%s: version: must be %d (this fswb reads run records up to version "
			   "%d; a newer fswb wrote this one)",
			   c.source, RUN_JSON_VERSION, RUN_JSON_VERSION);
		goto out;
	}
	if ((rc = jread_str(&c, root, "id", true, &rec.id)) != OK ||
	    (rc = jget_time(&c, root, "start", &rec.start_ms)) != OK ||
	    (rc = jget_time(&c, root, "end", &rec.end_ms)) != OK ||
	    (rc = jread_str(&c, root, "kernel", true, &rec.kernel)) != OK ||
	    (rc = jread_str(&c, root, "hostname", true, &rec.hostname)) != OK ||
	    (rc = jread_bool(&c, root, "finished", &rec.finished)) != OK ||
	    (rc = jread_bool(&c, root, "interrupted", &rec.interrupted)) != OK ||
	    (rc = jread_str(&c, root, "stopped_at", true, &rec.stopped_at)) != OK ||
	    (rc = jread_str(&c, root, "error", true, &rec.error)) != OK ||
	    (rc = jread_count(&c, root, "shards", 64, &rec.shards)) != OK)
		goto out;
	v = json_object_get(root, "exit_code");
	if (v && !json_is_null(v)) {
		if (!json_is_integer(v)) {
			rc = jread_bad_at(&c, "exit_code", "must be a whole number or null");
			goto out;
		}
		rec.exit_code = (int)json_integer_value(v);
	}
	secs = json_object_get(root, "sections");
	if (!json_is_array(secs)) {
		rc = jread_bad_at(&c, "sections", "must be a list");
		goto out;
	}
	for (size_t i = 0; i < json_array_size(secs); i++) {
		strbuf_reset(&c.path);
		strbuf_addf(&c.path, "sections[%zu]", i);
		if ((rc = read_section(&c, json_array_get(secs, i), &rec)) != OK)
			goto out;
	}
	run_record_recount(&rec);
out:
	json_decref(root);
	strbuf_release(&c.path);
	if (rc == OK)
		*out = rec;
	else
		run_record_release(&rec);
	return rc;
}

enum status
run_record_save(const char *path, const struct run_record *rec)
{
	char *text = run_record_to_json(rec);
	enum status rc = write_file_atomic(path, text, strlen(text), 0644);

	free(text);
	return rc;
}

enum status
run_record_load(const char *path, struct run_record *out)
{
	char *text = NULL;
	size_t len;
	enum status rc = read_file(path, XML_MAX, &text, &len);

	if (rc != OK)
		return rc;
	rc = run_record_from_json(text, path, out);
	free(text);
	return rc;
}

/* ------------------------------------------------------------------ */
/* junit.xml */

/* Append s as XML text or attribute value: escaped, '?' for what XML cannot hold. */
static void
xml_escape(struct strbuf *sb, const char *s, size_t len, bool attr, bool cdata)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + len;

	while (p < end) {
		unsigned c = *p;
		size_t n = 1;

		if (c >= 0x80) {
			size_t need = utf8_len(p, end);

			if (need) {
				strbuf_add(sb, p, need);
				p += need;
			} else {
				strbuf_addch(sb, '?');
				p++;
			}
			continue;
		}
		if (cdata) {
			if (c == ']' && end - p >= 3 && p[1] == ']' && p[2] == '>') {
				strbuf_adds(sb, "]]]]><![CDATA[>");
				p += 3;
				continue;
			}
			if (c < 0x20 && c != '\n' && c != '\t' && c != '\r')
				strbuf_addch(sb, '?');
			else
				strbuf_addch(sb, (int)c);
			p += n;
			continue;
		}
		switch (c) {
		case '&':
			strbuf_adds(sb, "&amp;");
			break;
		case '<':
			strbuf_adds(sb, "&lt;");
			break;
		case '>':
			strbuf_adds(sb, "&gt;");
			break;
		case '"':
			strbuf_adds(sb, attr ? "&quot;" : "\"");
			break;
		case '\'':
			strbuf_adds(sb, attr ? "&apos;" : "'");
			break;
		case '\n':
			strbuf_adds(sb, attr ? "&#10;" : "\n");
			break;
		case '\t':
			strbuf_adds(sb, attr ? "&#9;" : "\t");
			break;
		case '\r':
			strbuf_adds(sb, "&#13;");
			break;
		default:
			if (c < 0x20 || c == 0x7f)
				strbuf_addch(sb, '?');
			else
				strbuf_addch(sb, (int)c);
		}
		p += n;
	}
}

static void
xml_attr(struct strbuf *sb, const char *name, const char *value)
{
	strbuf_addf(sb, " %s=\"", name);
	xml_escape(sb, value ? value : "", value ? strlen(value) : 0, true, false);
	strbuf_addch(sb, '"');
}

static void
xml_cdata_block(struct strbuf *sb, const char *tag, const char *text, size_t len)
{
	strbuf_addf(sb, "\t\t<%s>\n<![CDATA[\n", tag);
	xml_escape(sb, text, len, false, true);
	if (len && text[len - 1] != '\n')
		strbuf_addch(sb, '\n');
	strbuf_addf(sb, "]]>\n\t\t</%s>\n", tag);
}

/* The end of a file, at most max bytes, in a CDATA block; nothing when absent or empty. */
static void
xml_file_block(struct strbuf *sb, const char *tag, const char *path)
{
	FILE *f;
	struct stat st;
	char *buf;
	size_t n;

	int fd = path ? open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC) : -1;

	if (fd < 0)
		return;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size <= 0 || !(f = fdopen(fd, "rb"))) {
		close(fd);
		return;
	}
	if ((uint64_t)st.st_size > RESULTS_JUNIT_LOG_MAX)
		fseeko(f, st.st_size - (off_t)RESULTS_JUNIT_LOG_MAX, SEEK_SET);
	buf = xmalloc(RESULTS_JUNIT_LOG_MAX);
	n = fread(buf, 1, RESULTS_JUNIT_LOG_MAX, f);
	fclose(f);
	if (n)
		xml_cdata_block(sb, tag, buf, n);
	free(buf);
}

static void
fmt_seconds(char *buf, size_t len, double s)
{
	if (s < 0)
		s = 0;
	if (s == (double)(long long)s)
		snprintf(buf, len, "%lld", (long long)s);
	else
		snprintf(buf, len, "%.3f", s);
}

static int
cmp_prop(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void
junit_properties(struct strbuf *sb, const struct run_record *rec, const struct section_result *s)
{
	struct strvec props = STRVEC_INIT;

	strvec_copy(&props, &s->properties);
	/* what check always reports, when result.xml did not give it */
#define ADD_PROP(key, val)                                                            \
	do {                                                                          \
		bool have_ = false;                                                   \
		for (size_t i_ = 0; i_ < props.n; i_++)                               \
			have_ = have_ || (str_startswith(props.v[i_], key "=") != 0); \
		if (!have_ && (val) && *(val))                                        \
			strvec_pushf(&props, "%s=%s", key, (val));                    \
	} while (0)
	ADD_PROP("SECTION", s->name ? s->name : "-no-sections-");
	ADD_PROP("FSTYP", s->fstyp);
	ADD_PROP("MKFS_OPTIONS", s->mkfs_options);
	ADD_PROP("MOUNT_OPTIONS", s->mount_options);
	ADD_PROP("KERNEL", rec->kernel);
	ADD_PROP("FSWB_CONFIG", s->config);
#undef ADD_PROP
	if (props.n > 1)
		qsort(props.v, props.n, sizeof(*props.v), cmp_prop);
	strbuf_adds(sb, "\t<properties>\n");
	for (size_t i = 0; i < props.n; i++) {
		const char *eq = strchr(props.v[i], '=');
		char *key;

		if (!eq || eq == props.v[i] || !eq[1])
			continue; /* check leaves out empty values */
		key = xstrndup(props.v[i], (size_t)(eq - props.v[i]));
		strbuf_adds(sb, "\t\t<property");
		xml_attr(sb, "name", key);
		xml_attr(sb, "value", eq + 1);
		strbuf_adds(sb, "/>\n");
		free(key);
	}
	strbuf_adds(sb, "\t</properties>\n");
	strvec_clear(&props);
}

static void
junit_failure(struct strbuf *sb, enum test_status status, const char *msg)
{
	strbuf_adds(sb, "\t\t<failure");
	xml_attr(sb, "message", msg);
	xml_attr(sb, "type",
		 status == TS_FAIL	? "TestFail"
		 : status == TS_CRASHED ? "TestCrash"
					: "TestHang");
	strbuf_adds(sb, "/>\n");
}

static void
junit_testcase(struct strbuf *sb, const char *classname, const struct test_result *t)
{
	char secs[32];

	fmt_seconds(secs, sizeof(secs), t->seconds);
	strbuf_adds(sb, "\t<testcase");
	xml_attr(sb, "classname", classname);
	xml_attr(sb, "name", t->test);
	xml_attr(sb, "time", secs);
	strbuf_adds(sb, ">\n");
	if (t->status == TS_NOTRUN) {
		strbuf_adds(sb, "\t\t<skipped");
		if (t->reason)
			xml_attr(sb, "message", t->reason);
		strbuf_adds(sb, "/>\n");
	} else if (is_failure(t->status)) {
		char *msg = t->reason ? xstrdup(t->reason)
				      : xasprintf("Test %s failed, reason unknown", t->test);

		junit_failure(sb, t->status, msg);
		free(msg);
		xml_file_block(sb, "system-out", t->full);
		xml_file_block(sb, "kernel-log", t->kmsg ? t->kmsg : t->dmesg);
		if (t->detail && *t->detail)
			xml_cdata_block(sb, "system-err", t->detail, strlen(t->detail));
		else
			xml_file_block(sb, "system-err", t->out_bad);
	}
	strbuf_adds(sb, "\t</testcase>\n");
	for (size_t i = 1; i < t->niterations; i++) {
		const struct test_iteration *it = &t->iterations[i];

		fmt_seconds(secs, sizeof(secs), it->seconds);
		strbuf_adds(sb, "\t<testcase");
		xml_attr(sb, "classname", classname);
		xml_attr(sb, "name", t->test);
		xml_attr(sb, "time", secs);
		if (it->status == TS_PASS) {
			strbuf_adds(sb, "/>\n");
			continue;
		}
		strbuf_adds(sb, ">\n");
		if (is_failure(it->status)) {
			char *msg = xasprintf("Test %s failed again (run %zu of %zu)", t->test,
					      i + 1, t->niterations);

			junit_failure(sb, it->status, msg);
			free(msg);
		} else {
			strbuf_adds(sb, "\t\t<skipped message=\"not run\"/>\n");
		}
		strbuf_adds(sb, "\t</testcase>\n");
	}
}

static void
junit_suite(struct strbuf *sb, const struct run_record *rec, const struct section_result *s,
	    bool nested, size_t id, uint64_t now_ms)
{
	static const char ns[] = "https://git.kernel.org/pub/scm/fs/xfs/xfstests-dev.git";
	struct test_counts c = { 0 };
	char classname[300], secs[32], start[80], ts[80], report[80], idbuf[24];

	for (size_t i = 0; i < s->ntests; i++)
		test_counts_add(&c, s->tests[i].status, s->tests[i].seconds);
	snprintf(classname, sizeof(classname), "xfstests.%s", s->name ? s->name : "global");
	fmt_seconds(secs, sizeof(secs), c.seconds);
	format_time_ms(rec->start_ms ? rec->start_ms : now_ms, start, sizeof(start), false);
	format_time_ms(rec->end_ms ? rec->end_ms : now_ms, ts, sizeof(ts), false);
	format_time_ms(now_ms, report, sizeof(report), false);

	strbuf_adds(sb, nested ? "<testsuite" : "<testsuite\n xmlns=\"");
	if (!nested) {
		strbuf_adds(sb, ns);
		strbuf_adds(sb, "\"\n xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\"\n"
				" xsi:schemaLocation=\"");
		strbuf_addf(sb, "%s %s/tree/doc/xunit.xsd\"\n", ns, ns);
	}
	if (nested) {
		snprintf(idbuf, sizeof(idbuf), "%zu", id);
		xml_attr(sb, "package", "xfstests");
		xml_attr(sb, "id", idbuf);
	}
	xml_attr(sb, "name", "xfstests");
	strbuf_addf(sb, " failures=\"%u\" skipped=\"%u\" tests=\"%u\"",
		    c.failed + c.crashed + c.hung, c.notrun, c.ran + c.notrun);
	xml_attr(sb, "time", secs);
	xml_attr(sb, "hostname", rec->hostname && *rec->hostname ? rec->hostname : "localhost");
	xml_attr(sb, "start_timestamp", start);
	xml_attr(sb, "timestamp", ts);
	xml_attr(sb, "report_timestamp", report);
	strbuf_adds(sb, ">\n");
	junit_properties(sb, rec, s);
	for (size_t i = 0; i < s->ntests; i++)
		if (s->tests[i].status != TS_EXPUNGED)
			junit_testcase(sb, classname, &s->tests[i]);
	strbuf_adds(sb, "</testsuite>\n");
}

void
results_junit(const struct run_record *rec, struct strbuf *out)
{
	uint64_t now = (uint64_t)time(NULL) * 1000;
	static const struct section_result empty = { 0 };

	strbuf_adds(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	if (rec->nsections <= 1) {
		junit_suite(out, rec, rec->nsections ? &rec->sections[0] : &empty, false, 0, now);
		return;
	}
	strbuf_adds(out, "<testsuites\n xmlns=\"https://git.kernel.org/pub/scm/fs/xfs/"
			 "xfstests-dev.git\">\n");
	for (size_t i = 0; i < rec->nsections; i++)
		junit_suite(out, rec, &rec->sections[i], true, i, now);
	strbuf_adds(out, "</testsuites>\n");
}

enum status
results_write_junit(const char *path, const struct run_record *rec)
{
	struct strbuf sb = STRBUF_INIT;
	enum status rc;

	results_junit(rec, &sb);
	rc = write_file_atomic(path, sb.buf, sb.len, 0644);
	strbuf_release(&sb);
	return rc;
}

/* ------------------------------------------------------------------ */
/* A small XML reader: enough for xunit reports, robust to truncation. */

struct xml_attr {
	char *name, *value;
};

struct xml_handler {
	void (*start)(void *ctx, const char *name, const struct xml_attr *attrs, size_t n);
	void (*end)(void *ctx, const char *name);
	void (*text)(void *ctx, const char *text, size_t len);
	void *ctx;
};

static void
utf8_put(struct strbuf *sb, unsigned long cp)
{
	if (cp == 0 || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		strbuf_addch(sb, '?');
	else
		strbuf_add_utf8(sb, cp);
}

/* Decode entities and character references; unknown ones stay as written. */
static void
xml_decode(struct strbuf *sb, const char *s, size_t len)
{
	static const struct {
		const char *name;
		char ch;
	} ents[] = {
		{ "amp", '&' }, { "lt", '<' }, { "gt", '>' }, { "quot", '"' }, { "apos", '\'' }
	};

	for (size_t i = 0; i < len; i++) {
		const char *semi;
		size_t n;

		if (s[i] != '&' || !(semi = memchr(s + i, ';', len - i)) || semi - (s + i) > 12) {
			strbuf_addch(sb, s[i]);
			continue;
		}
		n = (size_t)(semi - (s + i)) - 1; /* between '&' and ';' */
		if (n >= 2 && s[i + 1] == '#') {
			char num[16];
			char *endp;
			bool hex = s[i + 2] == 'x' || s[i + 2] == 'X';
			unsigned long cp;

			memcpy(num, s + i + 2 + hex, n - 1 - hex);
			num[n - 1 - hex] = '\0';
			cp = strtoul(num, &endp, hex ? 16 : 10);
			if (*num && !*endp) {
				utf8_put(sb, cp);
				i += n + 1;
				continue;
			}
		} else {
			size_t k;

			for (k = 0; k < ARRAY_SIZE(ents); k++)
				if (strlen(ents[k].name) == n &&
				    !strncmp(s + i + 1, ents[k].name, n))
					break;
			if (k < ARRAY_SIZE(ents)) {
				strbuf_addch(sb, ents[k].ch);
				i += n + 1;
				continue;
			}
		}
		strbuf_addch(sb, s[i]);
	}
}

static const char *
find(const char *p, const char *end, const char *what)
{
	size_t wl = strlen(what);

	for (; p + wl <= end; p++)
		if (*p == *what && !memcmp(p, what, wl))
			return p;
	return NULL;
}

/* Parse; true when the root element was closed. */
static bool
xml_parse(const char *s, size_t len, const struct xml_handler *h)
{
	const char *p = s, *end = s + len;
	int depth = 0;
	bool root_closed = false;
	struct strbuf sb = STRBUF_INIT;

	while (p < end && !root_closed) {
		if (*p != '<') {
			const char *lt = memchr(p, '<', (size_t)(end - p));
			const char *stop = lt ? lt : end;

			if (depth > 0 && h->text) {
				strbuf_reset(&sb);
				xml_decode(&sb, p, (size_t)(stop - p));
				h->text(h->ctx, sb.buf, sb.len);
			}
			p = stop;
			continue;
		}
		if (end - p >= 4 && !memcmp(p, "<!--", 4)) {
			const char *e = find(p + 4, end, "-->");

			if (!e)
				break;
			p = e + 3;
		} else if (end - p >= 9 && !memcmp(p, "<![CDATA[", 9)) {
			const char *e = find(p + 9, end, "]]>");

			if (!e)
				break;
			if (depth > 0 && h->text)
				h->text(h->ctx, p + 9, (size_t)(e - (p + 9)));
			p = e + 3;
		} else if (end - p >= 2 && (p[1] == '?' || p[1] == '!')) {
			const char *e = find(p + 2, end, p[1] == '?' ? "?>" : ">");

			if (!e)
				break;
			p = e + (p[1] == '?' ? 2 : 1);
		} else if (end - p >= 2 && p[1] == '/') {
			const char *gt = memchr(p, '>', (size_t)(end - p));
			char *name;

			if (!gt)
				break;
			name = xstrndup(p + 2, (size_t)(gt - p - 2));
			str_trim(name);
			if (h->end)
				h->end(h->ctx, str_trim(name));
			free(name);
			if (--depth <= 0)
				root_closed = true;
			p = gt + 1;
		} else {
			/* <name attr="v" ...> or .../> */
			const char *q = p + 1;
			struct xml_attr *attrs = NULL;
			size_t na = 0, aalloc = 0;
			char *name;
			bool empty = false, ok = false;

			while (q < end && !isspace((unsigned char)*q) && *q != '>' && *q != '/')
				q++;
			name = xstrndup(p + 1, (size_t)(q - p - 1));
			for (;;) {
				const char *ns, *ne, *vs;
				char quote;

				while (q < end && isspace((unsigned char)*q))
					q++;
				if (q >= end)
					break;
				if (*q == '>') {
					ok = true;
					q++;
					break;
				}
				if (*q == '/' && q + 1 < end && q[1] == '>') {
					ok = empty = true;
					q += 2;
					break;
				}
				ns = q;
				while (q < end && *q != '=' && !isspace((unsigned char)*q) &&
				       *q != '>')
					q++;
				ne = q;
				while (q < end && isspace((unsigned char)*q))
					q++;
				if (q >= end || *q != '=' || ne == ns)
					break;
				q++;
				while (q < end && isspace((unsigned char)*q))
					q++;
				if (q >= end || (*q != '"' && *q != '\''))
					break;
				quote = *q++;
				vs = q;
				while (q < end && *q != quote)
					q++;
				if (q >= end)
					break;
				ALLOC_GROW(attrs, na + 1, aalloc);
				attrs[na].name = xstrndup(ns, (size_t)(ne - ns));
				strbuf_reset(&sb);
				xml_decode(&sb, vs, (size_t)(q - vs));
				attrs[na].value = xstrdup(sb.buf);
				na++;
				q++;
			}
			if (ok && *name) {
				if (h->start)
					h->start(h->ctx, name, attrs, na);
				if (empty) {
					if (h->end)
						h->end(h->ctx, name);
					if (depth == 0)
						root_closed = true;
				} else {
					depth++;
				}
			}
			for (size_t i = 0; i < na; i++) {
				free(attrs[i].name);
				free(attrs[i].value);
			}
			free(attrs);
			free(name);
			if (!ok)
				break;
			p = q;
		}
	}
	strbuf_release(&sb);
	return root_closed;
}

static const char *
attr_get(const struct xml_attr *a, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(a[i].name, name))
			return a[i].value;
	return NULL;
}

/* Element names without a namespace prefix. */
static const char *
local_name(const char *name)
{
	const char *c = strchr(name, ':');

	return c ? c + 1 : name;
}

enum xtext {
	XT_NONE,
	XT_OUT,
	XT_ERR,
	XT_KLOG,
	XT_MSG, /* text inside <failure> or <skipped> */
};

struct xunit_ctx {
	struct run_record *rec;
	struct xunit_info *info;
	size_t suites;
	/* the suite being read */
	bool in_suite;
	struct strvec props;
	char *classname_section;
	struct test_result *pending; /* tests of the suite so far */
	size_t npending, apending;
	/* the testcase being read */
	bool in_case;
	struct test_result cur;
	enum xtext text;
	struct strbuf err, msg;
	char *bad; /* the first testcase fswb refuses, and why */
};

static void
xunit_start(void *data, const char *qname, const struct xml_attr *a, size_t n)
{
	struct xunit_ctx *x = data;
	const char *name = local_name(qname);

	if (!strcmp(name, "testsuite")) {
		const char *t = attr_get(a, n, "time");

		x->in_suite = true;
		x->suites++;
		strvec_clear(&x->props);
		free(x->classname_section);
		x->classname_section = NULL;
		if (t && !*t)
			x->info->partial = true;
		replace(&x->info->start_timestamp, attr_get(a, n, "start_timestamp"));
		replace(&x->info->timestamp, attr_get(a, n, "timestamp"));
		replace(&x->info->report_timestamp, attr_get(a, n, "report_timestamp"));
		if (attr_get(a, n, "hostname"))
			replace(&x->rec->hostname, attr_get(a, n, "hostname"));
		if (!x->rec->start_ms)
			x->rec->start_ms = parse_iso_time(attr_get(a, n, "start_timestamp"));
		{
			uint64_t r = parse_iso_time(attr_get(a, n, "report_timestamp"));

			if (r > x->rec->end_ms)
				x->rec->end_ms = r;
		}
	} else if (!strcmp(name, "property") && x->in_suite && !x->in_case) {
		const char *k = attr_get(a, n, "name"), *v = attr_get(a, n, "value");

		if (k && *k)
			strvec_pushf(&x->props, "%s=%s", k, v ? v : "");
	} else if (!strcmp(name, "testcase") && x->in_suite && !x->in_case) {
		const char *cn = attr_get(a, n, "classname"), *tn = attr_get(a, n, "name");
		const char *t = attr_get(a, n, "time");

		x->in_case = true;
		memset(&x->cur, 0, sizeof(x->cur));
		x->cur.test = xstrdup(tn ? tn : "");
		x->cur.status = TS_PASS;
		x->cur.seconds = t && *t ? strtod(t, NULL) : -1;
		if (!x->bad && !catalogue_test_name_ok(x->cur.test))
			x->bad = xasprintf("testcase %zu: name '%.80s' is not a test name like "
					   "generic/001",
					   x->info->testcases + 1, x->cur.test);
		else if (!x->bad && t && *t && !results_seconds_ok(x->cur.seconds))
			x->bad = xasprintf("testcase %zu (%s): time '%.40s' is not a number of "
					   "seconds from 0 to 10000000",
					   x->info->testcases + 1, x->cur.test, t);
		strbuf_reset(&x->err);
		strbuf_reset(&x->msg);
		if (cn && str_startswith(cn, "xfstests.") && !x->classname_section)
			x->classname_section = xstrdup(cn + 9);
	} else if (x->in_case) {
		if (!strcmp(name, "skipped")) {
			x->cur.status = TS_NOTRUN;
			replace(&x->cur.reason, attr_get(a, n, "message"));
			x->text = XT_MSG;
		} else if (!strcmp(name, "failure") || !strcmp(name, "error")) {
			const char *type = attr_get(a, n, "type");

			x->cur.status = type && !strcmp(type, "TestCrash")  ? TS_CRASHED
					: type && !strcmp(type, "TestHang") ? TS_HUNG
									    : TS_FAIL;
			replace(&x->cur.reason, attr_get(a, n, "message"));
			x->text = XT_MSG;
		} else if (!strcmp(name, "system-out")) {
			x->text = XT_OUT;
		} else if (!strcmp(name, "system-err")) {
			x->text = XT_ERR;
		} else if (!strcmp(name, "kernel-log")) {
			x->text = XT_KLOG;
		}
	}
}

static void
xunit_text(void *data, const char *text, size_t len)
{
	struct xunit_ctx *x = data;
	/* system-out and kernel-log repeat the .full and .dmesg files: not kept */
	struct strbuf *sb = x->text == XT_ERR ? &x->err : x->text == XT_MSG ? &x->msg : NULL;

	if (!sb || sb->len >= XML_TEXT_MAX)
		return;
	if (len > XML_TEXT_MAX - sb->len)
		len = XML_TEXT_MAX - sb->len;
	strbuf_add(sb, text, len);
}

/* A failure's reasons from check's words. */
static unsigned
reasons_from_words(const char *s)
{
	unsigned r = 0;

	if (!s)
		return 0;
	if (strstr(s, "output mismatch"))
		r |= FAIL_MISMATCH;
	if (strstr(s, "is inconsistent") || strstr(s, "filesystem check failed"))
		r |= FAIL_FSCK;
	if (strstr(s, "something found in dmesg") || strstr(s, "_check_dmesg"))
		r |= FAIL_DMESG;
	if (strstr(s, "exit status"))
		r |= FAIL_EXIT;
	if (strstr(s, "dumped core"))
		r |= FAIL_CORE;
	if (strstr(s, "kmemleak"))
		r |= FAIL_KMEMLEAK;
	if (strstr(s, "no qualified output"))
		r |= FAIL_NO_QUALIFIED;
	if (strstr(s, "no such test"))
		r |= FAIL_NO_SUCH_TEST;
	return r;
}

static char *
trimmed_copy(const struct strbuf *sb)
{
	size_t s = 0, e = sb->len;

	while (s < e && (sb->buf[s] == '\n' || sb->buf[s] == '\r'))
		s++;
	while (e > s && isspace((unsigned char)sb->buf[e - 1]))
		e--;
	return e > s ? xstrndup(sb->buf + s, e - s) : NULL;
}

/*
 * result.xml's failure message in the words the stdout parser gives: check's
 * "- output mismatch (see ...)" and "[dumped core]" without their marks.
 */
static void
failure_words(char *s)
{
	size_t n;

	if (!s)
		return;
	if (str_startswith(s, "- "))
		memmove(s, s + 2, strlen(s + 2) + 1);
	n = strlen(s);
	if (n > 2 && s[0] == '[' && s[n - 1] == ']' && !memchr(s + 1, ']', n - 2)) {
		memmove(s, s + 1, n - 2);
		s[n - 2] = '\0';
	}
}

static void
xunit_end(void *data, const char *qname)
{
	struct xunit_ctx *x = data;
	const char *name = local_name(qname);

	if (!strcmp(name, "testcase") && x->in_case) {
		x->in_case = false;
		x->text = XT_NONE;
		if (!x->cur.reason && x->msg.len)
			x->cur.reason = trimmed_copy(&x->msg);
		if (is_failure(x->cur.status)) {
			failure_words(x->cur.reason);
			x->cur.reasons = reasons_from_words(x->cur.reason);
			x->cur.detail = trimmed_copy(&x->err);
		}
		ALLOC_GROW(x->pending, x->npending + 1, x->apending);
		x->pending[x->npending++] = x->cur;
		memset(&x->cur, 0, sizeof(x->cur));
		x->info->testcases++;
	} else if (x->in_case && (!strcmp(name, "system-out") || !strcmp(name, "system-err") ||
				  !strcmp(name, "kernel-log") || !strcmp(name, "failure") ||
				  !strcmp(name, "error") || !strcmp(name, "skipped"))) {
		x->text = XT_NONE;
	} else if (!strcmp(name, "testsuite") && x->in_suite) {
		/* commit the suite */
		const char *section = NULL;
		struct section_result *sec;

		for (size_t i = 0; i < x->props.n; i++)
			if (str_startswith(x->props.v[i], "SECTION="))
				section = x->props.v[i] + 8;
		if (!section && x->classname_section && strcmp(x->classname_section, "global"))
			section = x->classname_section;
		if (section && !strcmp(section, "-no-sections-"))
			section = NULL;
		sec = run_record_section(x->rec, section, NULL);
		for (size_t i = 0; i < x->props.n; i++) {
			const char *p = x->props.v[i];

			if (str_startswith(p, "FSTYP="))
				replace(&sec->fstyp, p + 6);
			else if (str_startswith(p, "MKFS_OPTIONS="))
				replace(&sec->mkfs_options, p + 13);
			else if (str_startswith(p, "MOUNT_OPTIONS="))
				replace(&sec->mount_options, p + 14);
			else if (str_startswith(p, "KERNEL="))
				replace(&x->rec->kernel, p + 7);
			else if (str_startswith(p, "FSWB_CONFIG=") && !sec->config)
				sec->config = xstrdup(p + 12);
		}
		strvec_clear(&sec->properties);
		strvec_copy(&sec->properties, &x->props);
		for (size_t i = 0; i < x->npending; i++) {
			struct test_result *p = &x->pending[i];
			struct test_result *t =
				section_add_test(sec, p->test, p->status, p->seconds, p->reasons,
						 p->reason, p->detail, NULL);

			(void)t;
			test_result_release(p);
		}
		x->npending = 0;
		x->in_suite = false;
	}
}

void
xunit_info_release(struct xunit_info *info)
{
	free(info->start_timestamp);
	free(info->timestamp);
	free(info->report_timestamp);
	memset(info, 0, sizeof(*info));
}

enum status
results_read_xunit(const char *text, size_t len, const char *source, struct run_record *rec,
		   struct xunit_info *info)
{
	struct xunit_info local = { 0 };
	struct xunit_ctx x = { .rec = rec, .info = info ? info : &local };
	struct xml_handler h = { xunit_start, xunit_end, xunit_text, &x };

	memset(x.info, 0, sizeof(*x.info));
	strvec_init(&x.props);
	strbuf_init(&x.err);
	strbuf_init(&x.msg);
	x.info->complete = xml_parse(text, len, &h);
	if (x.in_case)
		test_result_release(&x.cur);
	if (x.in_suite) /* truncated: keep the complete testcases */
		xunit_end(&x, "testsuite");
	for (size_t i = 0; i < x.npending; i++)
		test_result_release(&x.pending[i]);
	free(x.pending);
	free(x.classname_section);
	strvec_clear(&x.props);
	strbuf_release(&x.err);
	strbuf_release(&x.msg);
	if (!info)
		xunit_info_release(&local);
	if (x.bad) {
		enum status rc =
			error(ERR_INVALID, "'%s': %s", source ? source : "result.xml", x.bad);

		free(x.bad);
		return rc;
	}
	if (!x.suites)
		return error(ERR_PARSE, "'%s' is not an xunit report: it has no <testsuite>",
			     source ? source : "result.xml");
	return OK;
}

/* ------------------------------------------------------------------ */
/* check.log and check.time */

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

/* ------------------------------------------------------------------ */
/* The listener */

static enum status
writer_save(struct results_writer *w)
{
	enum status rc;

	if (!w->path)
		return OK;
	rc = run_record_save(w->path, &w->rec);
	if (rc != OK && w->status == OK) {
		w->status = rc;
		w->message = xstrdup(error_msg());
	}
	return rc;
}

/* check's PLATFORM: "Linux/x86_64 HOST KERNEL #1 SMP ...". */
static void
platform_words(struct run_record *rec, const char *platform)
{
	struct strvec w = STRVEC_INIT;

	if (!platform)
		return;
	strvec_split(&w, platform, " \t");
	if (w.n >= 3 && strchr(w.v[0], '/')) {
		if (!rec->hostname)
			rec->hostname = xstrdup(w.v[1]);
		if (!rec->kernel)
			rec->kernel = xstrdup(w.v[2]);
	}
	strvec_clear(&w);
}

/* A test started: "CONFIG\tTEST" and when, until it ends. */
static void
running_add(struct results_writer *w, const struct event *ev)
{
	w->running_ms = xrealloc(w->running_ms, (w->running.n + 1) * sizeof(*w->running_ms));
	w->running_ms[w->running.n] = ev->wall_ms;
	strvec_pushf(&w->running, "%s\t%s", ev->config ? ev->config : "", ev->u.test_start.test);
}

static void
running_drop(struct results_writer *w, const char *config, const char *test)
{
	char *key = xasprintf("%s\t%s", config ? config : "", test);

	for (size_t i = 0; i < w->running.n; i++) {
		if (strcmp(w->running.v[i], key))
			continue;
		free(w->running.v[i]);
		memmove(&w->running.v[i], &w->running.v[i + 1],
			(w->running.n - i) * sizeof(char *));
		memmove(&w->running_ms[i], &w->running_ms[i + 1],
			(w->running.n - i - 1) * sizeof(*w->running_ms));
		w->running.n--;
		break;
	}
	free(key);
}

/* The run ends: the tests a stop cut off, and those it never reached. */
static void
run_end_tests(struct results_writer *w, const struct event *ev)
{
	struct section_result *sec;

	for (size_t i = 0; ev->u.end.interrupted && i < w->running.n; i++) {
		char *tab = strchr(w->running.v[i], '\t');
		char *config = xstrndup(w->running.v[i], (size_t)(tab - w->running.v[i]));

		sec = run_record_section(&w->rec, *config ? config : NULL, *config ? config : NULL);
		section_add_stop(sec, tab + 1,
				 ev->wall_ms >= w->running_ms[i]
					 ? (double)(ev->wall_ms - w->running_ms[i]) / 1000
					 : -1);
		free(config);
	}
	strvec_clear(&w->running);
	for (size_t i = 0; ev->u.end.unreached && ev->u.end.unreached[i]; i++) {
		const char *config = ev->u.end.unreached_config && *ev->u.end.unreached_config[i]
					     ? ev->u.end.unreached_config[i]
					     : NULL;

		sec = run_record_section(&w->rec, config, config);
		strvec_push(&sec->unreached, ev->u.end.unreached[i]);
	}
}

static void
writer_event(void *data, const struct event *ev)
{
	struct results_writer *w = data;
	struct run_record *rec = &w->rec;
	struct section_result *sec;

	switch (ev->type) {
	case EV_RUN_BEGIN:
		replace(&rec->id, ev->u.run.id);
		rec->start_ms = ev->wall_ms;
		rec->shards = ev->u.run.shards;
		rec->finished = false;
		writer_save(w);
		break;
	case EV_SECTION:
		sec = run_record_section(rec, ev->config, ev->config);
		if (ev->u.section.name && !sec->name)
			sec->name = xstrdup(ev->u.section.name);
		replace(&sec->fstyp, ev->u.section.fstyp);
		replace(&sec->mkfs_options, ev->u.section.mkfs_options);
		replace(&sec->mount_options, ev->u.section.mount_options);
		platform_words(rec, ev->u.section.platform);
		writer_save(w);
		break;
	case EV_TEST_START:
		sec = run_record_section(rec, ev->config, ev->config);
		replace(&sec->stopped_at, ev->u.test_start.test);
		replace(&rec->stopped_at, ev->u.test_start.test);
		if (!ev->u.test_start.rerun)
			running_add(w, ev);
		writer_save(w);
		break;
	case EV_TEST_END: {
		const char *name = ev->u.test_end.test;
		struct test_result *t;

		sec = run_record_section(rec, ev->config, ev->config);
		running_drop(w, ev->config, name);
		t = section_find_test(sec, name);
		if (!t || ev->u.test_end.rerun == 0 || t->reruns < ev->u.test_end.rerun) {
			t = section_add_test(sec, name, ev->u.test_end.status,
					     ev->u.test_end.seconds, ev->u.test_end.reasons,
					     ev->u.test_end.reason, ev->u.test_end.detail,
					     ev->u.test_end.hints);
			if (ev->u.test_end.rerun)
				t->reruns = ev->u.test_end.rerun;
			t->shard = ev->shard;
		}
		if (sec->stopped_at && !strcmp(sec->stopped_at, name)) {
			free(sec->stopped_at);
			sec->stopped_at = NULL;
		}
		if (rec->stopped_at && !strcmp(rec->stopped_at, name)) {
			free(rec->stopped_at);
			rec->stopped_at = NULL;
		}
		run_record_recount(rec);
		writer_save(w);
		break;
	}
	case EV_SUMMARY:
		sec = run_record_section(rec, ev->config, ev->config);
		if (ev->u.summary.interrupted)
			sec->interrupted = rec->interrupted = true;
		break;
	case EV_ERROR:
		if (ev->u.error.message)
			replace(&rec->error, ev->u.error.message);
		break;
	case EV_STAGE_END:
		/* a stage that failed (the kernel, the appliance, a boot) is the run's error */
		if (ev->u.stage.code != OK && ev->u.stage.message)
			replace(&rec->error, ev->u.stage.message);
		break;
	case EV_RUN_END:
		run_end_tests(w, ev);
		rec->end_ms = ev->wall_ms;
		rec->exit_code = ev->u.end.exit_code;
		if (ev->u.end.interrupted)
			rec->interrupted = true;
		rec->finished = true;
		run_record_recount(rec);
		writer_save(w);
		break;
	default:
		break;
	}
}

void
results_writer_init(struct results_writer *w, const char *path)
{
	memset(w, 0, sizeof(*w));
	run_record_init(&w->rec);
	strvec_init(&w->running);
	w->path = path ? xstrdup(path) : NULL;
	w->status = OK;
}

void
results_writer_release(struct results_writer *w)
{
	run_record_release(&w->rec);
	strvec_clear(&w->running);
	free(w->running_ms);
	w->running_ms = NULL;
	free(w->path);
	free(w->message);
	w->path = w->message = NULL;
}

struct listener
results_writer_listener(struct results_writer *w)
{
	struct listener l = { writer_event, w };

	return l;
}

enum status
results_writer_status(const struct results_writer *w)
{
	if (w->status != OK && w->message)
		return error(w->status, "%s", w->message);
	return w->status;
}

enum status
results_writer_flush(struct results_writer *w)
{
	run_record_recount(&w->rec);
	return writer_save(w);
}

/* ------------------------------------------------------------------ */
/* Import */

static bool
is_dir(const char *p)
{
	return path_is_dir(p);
}

/* The path the user gave is a regular file (a FIFO would block the read). */
static bool
is_regular(const char *p)
{
	struct stat st;

	return !stat(p, &st) && S_ISREG(st.st_mode);
}

/* A regular file, reached without a symlink. */
static bool
has_file(const char *dir, const char *name)
{
	return file_beneath(dir, name);
}

static bool
is_report_dir(const char *dir)
{
	return has_file(dir, "result.xml") || has_file(dir, "check.log") ||
	       has_file(dir, "result.xml.new");
}

/* A failure's reasons from the files check left (and its .full). */
static void
refine_failure(struct test_result *t, const char *report_dir)
{
	char *p;

	if (!is_failure(t->status))
		return;
	if (t->out_bad)
		t->reasons |= FAIL_MISMATCH;
	if (t->dmesg)
		t->reasons |= FAIL_DMESG;
	if ((p = file_if_there(report_dir, t->test, ".full"))) {
		char *full = NULL;
		size_t len;

		if (read_file(p, LOG_MAX, &full, &len) == OK) {
			const char *m = strstr(full, "_check_");

			for (; m; m = strstr(m + 1, "_check_")) {
				const char *eol = strchr(m, '\n');
				size_t l = eol ? (size_t)(eol - m) : strlen(m);
				char *line = xstrndup(m, l);

				if (strstr(line, "filesystem on") && strstr(line, "inconsistent")) {
					t->reasons |= FAIL_FSCK;
					if (!t->reason || strstr(t->reason, "reason unknown"))
						replace(&t->reason, line);
					free(line);
					break;
				}
				free(line);
			}
			free(full);
		} else {
			error_clear();
		}
		free(p);
	}
	if (!t->reasons)
		t->reasons = FAIL_OTHER;
}

/*
 * Read the xunit file dir/name into a fresh record; false when it is not
 * there (or not a regular file) or unreadable.
 */
static bool
read_xml_file(const char *dir, const char *name, struct run_record *rec, struct xunit_info *info)
{
	char *text = NULL, *path = path_join(dir, name);
	size_t len;
	bool ok = false;

	run_record_init(rec);
	memset(info, 0, sizeof(*info));
	if (!has_file(dir, name) || read_file_beneath(dir, name, XML_MAX, &text, &len) != OK) {
		error_clear();
	} else if (results_read_xunit(text, len, path, rec, info) != OK) {
		error_clear();
		run_record_release(rec);
		xunit_info_release(info);
	} else {
		ok = true;
	}
	free(text);
	free(path);
	return ok;
}

static size_t
record_tests(const struct run_record *r)
{
	size_t n = 0;

	for (size_t i = 0; i < r->nsections; i++)
		n += r->sections[i].ntests;
	return n;
}

/* Import one REPORT_DIR into sec (name given for sectioned layouts). */
static void
import_report_dir(struct run_record *rec, const char *dir, const char *name)
{
	struct run_record xr, nr, *use = NULL;
	struct xunit_info xi, ni, *info = NULL;
	bool have_x = read_xml_file(dir, "result.xml", &xr, &xi);
	bool have_n = read_xml_file(dir, "result.xml.new", &nr, &ni);
	struct check_log log = { 0 };
	struct check_time ct;
	struct check_log_block *blk = NULL;
	struct section_result *sec;
	char *text = NULL;
	size_t len;

	/* result.xml, or result.xml.new when that one is more complete */
	if (have_x)
		use = &xr, info = &xi;
	if (have_n && (!have_x || record_tests(&nr) > record_tests(&xr) ||
		       (record_tests(&nr) == record_tests(&xr) && ni.complete && !ni.partial &&
			(xi.partial || !xi.complete))))
		use = &nr, info = &ni;

	if (read_file_beneath(dir, "check.log", LOG_MAX, &text, &len) == OK) {
		check_log_parse(text, len, &log);
		free(text);
		text = NULL;
		if (log.n)
			blk = &log.blocks[log.n - 1];
	} else {
		error_clear();
	}
	memset(&ct, 0, sizeof(ct));
	strvec_init(&ct.tests);
	if (read_file_beneath(dir, "check.time", LOG_MAX, &text, &len) == OK) {
		check_time_release(&ct);
		check_time_parse(text, len, &ct);
		free(text);
	} else {
		error_clear();
	}

	/* the section, named as the layout or the xml says */
	{
		const char *xname = NULL;

		if (use && use->nsections)
			xname = use->sections[0].name;
		sec = run_record_section(rec, name ? name : xname, NULL);
	}
	if (use) {
		for (size_t s = 0; s < use->nsections; s++) {
			struct section_result *from = &use->sections[s];

			replace(&sec->fstyp, from->fstyp);
			replace(&sec->mkfs_options, from->mkfs_options);
			replace(&sec->mount_options, from->mount_options);
			strvec_clear(&sec->properties);
			strvec_copy(&sec->properties, &from->properties);
			for (size_t i = 0; i < from->ntests; i++) {
				struct test_result *t = &from->tests[i];
				struct test_result *n = section_add_test(
					sec, t->test, t->status, t->seconds, t->reasons, t->reason,
					t->detail, t->hints);

				if (t->reruns)
					n->reruns += t->reruns;
			}
		}
		if (use->kernel && !rec->kernel)
			rec->kernel = xstrdup(use->kernel);
		if (use->hostname && !rec->hostname)
			rec->hostname = xstrdup(use->hostname);
		if (use->start_ms && (!rec->start_ms || use->start_ms < rec->start_ms))
			rec->start_ms = use->start_ms;
		if (use->end_ms > rec->end_ms)
			rec->end_ms = use->end_ms;
	}

	/*
	 * check.log's last entry, when it is this run's: it must list every
	 * test the report has and not be older than the report's start.
	 */
	if (blk && use) {
		bool stale = false;

		for (size_t i = 0; i < sec->ntests && !stale; i++)
			stale = !strvec_contains(&blk->ran, sec->tests[i].test);
		if (blk->date_ms && use->start_ms && blk->date_ms + 1000 < use->start_ms)
			stale = true;
		if (stale)
			blk = NULL;
	}
	if (blk) {
		if (blk->kernel && !rec->kernel)
			rec->kernel = xstrdup(blk->kernel);
		if (blk->date_ms > rec->end_ms)
			rec->end_ms = blk->date_ms;
		if (blk->interrupted)
			sec->interrupted = true;
		for (size_t i = 0; i < blk->ran.n; i++) {
			const char *test = blk->ran.v[i];
			bool last = i + 1 == blk->ran.n;
			bool failed = strvec_contains(&blk->failures, test);
			bool notrun = strvec_contains(&blk->notrun, test);
			struct test_result *t;

			if (section_find_test(sec, test))
				continue;
			if (last && blk->interrupted && !failed && !notrun) {
				replace(&sec->stopped_at, test);
				continue;
			}
			t = section_add_test(sec, test,
					     failed   ? TS_FAIL
					     : notrun ? TS_NOTRUN
						      : TS_PASS,
					     -1, 0, NULL, NULL, NULL);
			if (t->status == TS_PASS)
				t->seconds = check_time_get(&ct, test);
		}
	} else if (info && (info->partial || !info->complete)) {
		/* a report written before a test, with nothing to say which */
		sec->interrupted = true;
	}

	section_attach_artifacts(sec, dir);
	for (size_t i = 0; i < sec->ntests; i++)
		refine_failure(&sec->tests[i], dir);

	if (sec->interrupted) {
		rec->interrupted = true;
		if (sec->stopped_at)
			replace(&rec->stopped_at, sec->stopped_at);
	}
	if (have_x) {
		run_record_release(&xr);
		xunit_info_release(&xi);
	}
	if (have_n) {
		run_record_release(&nr);
		xunit_info_release(&ni);
	}
	check_log_release(&log);
	check_time_release(&ct);
}

static enum status
import_results_dir(const char *dir, struct run_record *rec)
{
	if (is_report_dir(dir)) {
		/* a run with sections also keeps a global check.log at the top */
		DIR *d = opendir(dir);
		struct strvec subs = STRVEC_INIT;
		struct dirent *de;

		while (d && (de = readdir(d))) {
			char *p;

			if (de->d_name[0] == '.')
				continue;
			p = path_join(dir, de->d_name);
			if (dir_beneath(dir, de->d_name) &&
			    (has_file(p, "result.xml") || has_file(p, "result.xml.new") ||
			     has_file(p, "check.log")))
				strvec_push(&subs, de->d_name);
			free(p);
		}
		if (d)
			closedir(d);
		if (!subs.n) {
			import_report_dir(rec, dir, NULL);
			strvec_clear(&subs);
			return OK;
		}
		strvec_clear(&subs);
	}
	{
		DIR *d = opendir(dir);
		struct strvec subs = STRVEC_INIT;
		struct dirent *de;

		if (!d)
			return error(ERR_IO, "cannot read '%s': %s", dir, strerror(errno));
		while ((de = readdir(d))) {
			char *p;

			if (de->d_name[0] == '.')
				continue;
			p = path_join(dir, de->d_name);
			if (dir_beneath(dir, de->d_name) && is_report_dir(p))
				strvec_push(&subs, de->d_name);
			free(p);
		}
		closedir(d);
		strvec_sort(&subs);
		if (!subs.n) {
			strvec_clear(&subs);
			return error(ERR_NOTFOUND,
				     "'%s' holds no fstests results: no result.xml or check.log "
				     "in it or in a section directory below it; give check's "
				     "results directory or a file of its output",
				     dir);
		}
		for (size_t i = 0; i < subs.n; i++) {
			char *p = path_join(dir, subs.v[i]);

			import_report_dir(rec, p, subs.v[i]);
			free(p);
		}
		strvec_clear(&subs);
	}
	return OK;
}

static enum status
import_stdout(const char *path, struct run_record *out)
{
	struct event_bus bus = EVENT_BUS_INIT;
	struct results_writer w;
	struct check_parser *p;
	const char *cur;
	char *text = NULL, *dir, *slash, *results;
	size_t len;
	enum status rc = read_file(path, STDOUT_MAX, &text, &len);

	if (rc != OK)
		return rc;
	results_writer_init(&w, NULL);
	event_bus_add(&bus, results_writer_listener(&w));
	p = check_parser_new(&bus, NULL);
	check_parser_feed(p, text, len);
	check_parser_finish(p);
	free(text);

	cur = check_parser_current_test(p, NULL);
	if (!w.rec.nsections)
		run_record_section(&w.rec, NULL, NULL);
	if (cur) {
		struct section_result *sec = &w.rec.sections[w.rec.nsections - 1];

		replace(&sec->stopped_at, cur);
		replace(&w.rec.stopped_at, cur);
		sec->interrupted = true;
	}
	if (cur || check_parser_interrupted(p) || !check_parser_summaries(p))
		w.rec.interrupted = true;
	if (check_parser_interrupted(p))
		w.rec.sections[w.rec.nsections - 1].interrupted = true;
	check_parser_free(p);
	event_bus_release(&bus);

	/* artifacts from DIR/results beside the file, when it is there */
	dir = xstrdup(path);
	slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	results = slash ? path_join(dir, "results") : xstrdup("results");
	if (dir_beneath(slash ? dir : ".", "results")) {
		for (size_t i = 0; i < w.rec.nsections; i++) {
			struct section_result *sec = &w.rec.sections[i];
			char *rd = sec->name ? path_join(results, sec->name) : xstrdup(results);

			section_attach_artifacts(sec, rd);
			free(rd);
		}
	}
	free(results);
	free(dir);

	w.rec.finished = true;
	run_record_recount(&w.rec);
	*out = w.rec;
	run_record_init(&w.rec);
	results_writer_release(&w);
	return OK;
}

enum status
results_import(const char *path, struct run_record *out)
{
	struct run_record rec;
	enum status rc;

	run_record_init(&rec);
	if (is_dir(path)) {
		char *sub = path_join(path, "results");

		if (!is_report_dir(path) && dir_beneath(path, "results"))
			rc = import_results_dir(sub, &rec);
		else
			rc = import_results_dir(path, &rec);
		free(sub);
		if (rc == OK) {
			rec.finished = true;
			run_record_recount(&rec);
		}
	} else if (path_exists(path) && !is_regular(path)) {
		rc = error(ERR_INVALID,
			   "'%s' is not a regular file; give check's results directory or "
			   "a file of its output",
			   path);
	} else if (path_exists(path)) {
		char head[16] = { 0 };
		FILE *f = fopen(path, "rb");
		size_t n = f ? fread(head, 1, sizeof(head) - 1, f) : 0;

		if (f)
			fclose(f);
		(void)n;
		if (str_startswith(head, "<?xml") || str_startswith(head, "<testsuite")) {
			char *text = NULL;
			size_t len;

			rc = read_file(path, XML_MAX, &text, &len);
			if (rc == OK)
				rc = results_read_xunit(text, len, path, &rec, NULL);
			free(text);
			rec.finished = true;
			run_record_recount(&rec);
		} else {
			rc = import_stdout(path, &rec);
		}
	} else {
		rc = error(ERR_NOTFOUND,
			   "'%s' does not exist; give check's results directory or "
			   "a file of its output",
			   path);
	}
	if (rc == OK)
		*out = rec;
	else
		run_record_release(&rec);
	return rc;
}
