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
 *
 * Every known cause is one of two kinds:
 *	does not apply	(natural) the test is for another filesystem, feature
 *			or setup (a zoned or DAX device, a tape, UBIFS, mount
 *			options it cannot run with): nothing to fix
 *	fix this	something fswb or the user can change, and the fix says
 *			how, with what fswb can do where it can: a configuration
 *			to pick (fswb run -c xfs/realtime: taken from the
 *			profiles, the run's filesystem first), a kernel option
 *			(the fragment of profiles/kconfig/ that has it, a
 *			--debug fragment when one does), a package of the
 *			appliance, a device fswb gives
 * A few rules only repeat the words ("the test requires X", "the test could
 * not set up what it needs"): their explanations are marked generic.
 */
#ifndef FSWB_FSTESTS_NOTRUN_H
#define FSWB_FSTESTS_NOTRUN_H

#include <stdbool.h>
#include <stddef.h>

#include "core/util.h"

struct profiles;

/* What the explainer may look at beyond the words; every field may be NULL. */
struct notrun_context {
	const struct profiles *profiles; /* configurations and kconfig fragments to name */
	const char *fstyp;		 /* the run's filesystem: its configurations first */
	const char *const *packages;	 /* the appliance's packages (NULL-terminated) */
	/* the tests ran on a machine with its own kernel, packages and devices (ssh): the
	 * fixes are done there, not in fswb's kernel or appliance */
	bool own_machine;
};

struct notrun_explanation {
	const char *id; /* the rule: "scratch-pool", "program", "kconfig", ...; NULL when unknown */
	char *subject;	/* what it names ("fio", "CONFIG_XFS_DEBUG", "flakey"), or NULL */
	char *cause;	/* plain words; the reason itself when unknown */
	char *fix;	/* what to do (for a natural cause: why nothing is); NULL when unknown */
	bool natural;	/* the test does not apply here: nothing is wrong */
	bool generic;	/* a catch-all rule: no specific cause */
};

/*
 * Explain one reason. false (with out->cause the reason) when no rule knows
 * it. ctx may be NULL (no configuration or fragment is named then).
 */
bool notrun_explain(const char *reason, const struct notrun_context *ctx,
		    struct notrun_explanation *out);
void notrun_explanation_release(struct notrun_explanation *e);

struct notrun_group {
	const char *id; /* as above; NULL for an unknown reason */
	char *subject, *cause, *fix;
	bool natural, generic;
	struct strvec tests;   /* in the order given */
	struct strvec reasons; /* the distinct reasons, in the order first seen */
};

struct notrun_groups {
	struct notrun_group *groups; /* causes to fix before those that do not apply; biggest
					first; ties by cause */
	size_t n, alloc;
};

/*
 * Group n (tests[i], reasons[i]) pairs by cause into *out (initialised
 * here; release with notrun_groups_release()). A NULL or empty reason is
 * grouped as "no reason given".
 */
void notrun_group(const char *const *tests, const char *const *reasons, size_t n,
		  const struct notrun_context *ctx, struct notrun_groups *out);
void notrun_groups_release(struct notrun_groups *g);

#endif
