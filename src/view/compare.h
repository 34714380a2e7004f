/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What changed between two runs: per (configuration, test), its status in
 * the older run and in the newer one, sorted so that regressions come
 * first. No curses here.
 *
 *	struct run_compare c;
 *	run_compare(&older, &newer, &c);
 *	for (size_t i = 0; i < c.n; i++) c.v[i] ...
 *	run_compare_release(&c);
 */
#ifndef FSWB_VIEW_COMPARE_H
#define FSWB_VIEW_COMPARE_H

#include <stdbool.h>
#include <stddef.h>

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

struct cmp_entry {
	char *config; /* may be NULL */
	char *test;
	bool in_old, in_new;
	enum test_status old_status, new_status;
	double old_seconds, new_seconds; /* < 0 unknown */
	enum cmp_kind kind;
};

struct run_compare {
	struct cmp_entry *v; /* sorted by kind, then config, then test */
	size_t n, alloc;
	size_t count[CMP_KIND_COUNT];
};

void run_compare(const struct run_record *older, const struct run_record *newer,
		 struct run_compare *out);
void run_compare_release(struct run_compare *c);

#endif
