/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The not-run explainer: why check skipped a test, and what to do about it.
 *
 * check prints "[not run]" with the words of the test's _notrun call
 * ("This test requires a valid $LOGWRITES_DEV", "fio utility required,
 * skipped this test", "Installed kernel not built with CONFIG_XFS_DEBUG",
 * ...). notrun_explain() maps those words to a cause and a fix in plain
 * language; notrun_group() sorts many such skips into one group per cause
 * so that a run with 300 skips reads as a handful of lines:
 *
 *	212 tests  no scratch device pool (SCRATCH_DEV_POOL) ...  fix: ...
 *	 40 tests  the program 'fio' is not in the test appliance   fix: ...
 *
 * Causes that name something (a program, a kernel option, a dm target, an
 * xfs_io command, a kernel feature) are one group per thing named; a
 * reason no rule knows is a group of its own, under its own words, with no
 * fix. Matching ignores case and the white space at the ends.
 */
#ifndef FSWB_FSTESTS_NOTRUN_H
#define FSWB_FSTESTS_NOTRUN_H

#include <stdbool.h>
#include <stddef.h>

#include "core/util.h"

struct notrun_explanation {
	const char *id; /* the rule: "scratch-pool", "program", "kconfig", ...; NULL when unknown */
	char *subject;	/* what it names ("fio", "CONFIG_XFS_DEBUG", "flakey"), or NULL */
	char *cause;	/* plain words; the reason itself when unknown */
	char *fix;	/* what to do; NULL when unknown */
	bool natural;	/* nothing is wrong: the test does not apply here */
};

/* Explain one reason. false (with out->cause the reason) when no rule knows it. */
bool notrun_explain(const char *reason, struct notrun_explanation *out);
void notrun_explanation_release(struct notrun_explanation *e);

struct notrun_group {
	const char *id; /* as above; NULL for an unknown reason */
	char *subject, *cause, *fix;
	bool natural;
	struct strvec tests;   /* in the order given */
	struct strvec reasons; /* the distinct reasons, in the order first seen */
};

struct notrun_groups {
	struct notrun_group *groups; /* biggest first; ties by cause */
	size_t n, alloc;
};

/*
 * Group n (tests[i], reasons[i]) pairs by cause into *out (initialised
 * here; release with notrun_groups_release()). A NULL or empty reason is
 * grouped as "no reason given".
 */
void notrun_group(const char *const *tests, const char *const *reasons, size_t n,
		  struct notrun_groups *out);
void notrun_groups_release(struct notrun_groups *g);

#endif
