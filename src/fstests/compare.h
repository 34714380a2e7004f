/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What changed between two runs: per (configuration, test), its status in
 * the older run and in the newer one, and whether its time changed beyond a
 * threshold. One comparison for every front end: `fswb results compare`,
 * the regressions against a baseline after `fswb run`, the report, the
 * HTML page and the TUI's history. No curses here.
 *
 *	struct run_compare c;
 *	run_compare(&older, &newer, NULL, &c);      NULL: the default thresholds
 *	for (size_t i = 0; i < c.n; i++) c.v[i] ...
 *	run_compare_text(&c, false, &sb);           plain text, under 80 columns
 *	run_compare_release(&c);
 *
 * A test's configuration is its section's config (else the section's name).
 * A failure is fail, crashed or hung.
 */
#ifndef FSWB_FSTESTS_COMPARE_H
#define FSWB_FSTESTS_COMPARE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/util.h"
#include "fstests/results.h"

enum cmp_kind {
	CMP_NEW_FAILURE, /* passed (or was not there) before, fails now */
	CMP_STILL_FAILING,
	CMP_FIXED,	/* failed before, passes now */
	CMP_NOW_NOTRUN, /* ran before, not run now */
	CMP_NOW_RUNS,	/* not run before, passes now */
	CMP_ONLY_OLD,	/* not in the newer run */
	CMP_ONLY_NEW,	/* only in the newer run (and it passed or was not run) */
	CMP_SAME,	/* same status */
	CMP_KIND_COUNT
};

/* "new failure", "still failing", "fixed", ... */
const char *cmp_kind_str(enum cmp_kind k);
/* The JSON key of a kind: "new_failure", "still_failing", "fixed", ... */
const char *cmp_kind_key(enum cmp_kind k);

/* Is this status a failure (fail, crashed, hung)? */
bool test_status_failed(enum test_status st);
/* A test's time as people read it ("3m05s"), or "?" when unknown (< 0). */
void strbuf_add_seconds(struct strbuf *sb, double seconds);

/*
 * A time changed when both runs ran the test (passed or failed) with a
 * known time, and the new time differs from the old one by at least
 * min_seconds and by at least percent of the old one.
 */
#define COMPARE_PERCENT_DEFAULT 50.0
#define COMPARE_MIN_SECONDS	5.0

struct compare_opts {
	double percent;
	double min_seconds;
};

struct cmp_entry {
	char *config; /* may be NULL */
	char *test;
	bool in_old, in_new;
	enum test_status old_status, new_status;
	double old_seconds, new_seconds; /* < 0 unknown */
	enum cmp_kind kind;
	bool time_changed; /* beyond the thresholds (see above) */
	/* set by flaky_mark() (history.h): passed and failed in recent runs */
	unsigned flaky_passed, flaky_failed;
};

struct run_compare {
	struct cmp_entry *v; /* sorted by kind, then config, then test */
	size_t n, alloc;
	size_t count[CMP_KIND_COUNT];
	size_t time_changed;
	struct strvec configs; /* every configuration of either run, sorted */
	struct compare_opts opts;
};

void run_compare(const struct run_record *older, const struct run_record *newer,
		 const struct compare_opts *opts, struct run_compare *out);
void run_compare_release(struct run_compare *c);
/* The entry of (config, test), or NULL. */
struct cmp_entry *run_compare_find(struct run_compare *c, const char *config, const char *test);

/*
 * Plain text, lines under 80 columns, per configuration: a count line,
 * then the tests by change (new failures first), and the times that
 * changed. Unchanged tests only with all. Flaky entries say so with their
 * counts. Names come from run records: the caller filters what it prints.
 */
void run_compare_text(const struct run_compare *c, bool all, struct strbuf *out);

/*
 * As JSON: { "percent": 50, "min_seconds": 5,
 *            "counts": { "new_failure": 1, ... , "time_changed": 0 },
 *            "configs": [ { "config": "ext4/4k", "tests": [
 *              { "test": "generic/001", "change": "new_failure",
 *                "old": "pass" | null, "new": "fail" | null,
 *                "old_seconds": 3 | null, "new_seconds": 4 | null,
 *                "time_changed": false,
 *                "flaky": null | { "passed": 2, "failed": 1 } } ] } ] }
 * Unchanged tests (same status, same time) only with all.
 */
json_t *run_compare_json(const struct run_compare *c, bool all);

#endif
