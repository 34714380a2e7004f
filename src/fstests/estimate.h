/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * How long tests take: one estimator for the wizard, `fswb profiles`, the
 * run view's ETA and the engine's watchdog, each number with what it is
 * based on.
 *
 * A test's expected time is the first of these that applies:
 *	history	its median time in earlier runs on this host: the same
 *		configuration and kernel first, then the same configuration,
 *		then any configuration. Only tests that ended (passed, failed
 *		or were not run) count: a crash, a hang, an interrupted test
 *		or a shell session says nothing about the test's own time.
 *	soak	a test of the group "soak" when SOAK_DURATION is set: that
 *		many seconds (check's units: s, m, h, d, w) plus EST_QUICK for
 *		making and checking the filesystem
 *	groups	by its groups: EST_QUICK for "quick" tests, EST_LONG for
 *		"long_rw", "stress" or "soak" tests, EST_TEST otherwise
 * The defaults of soak and groups are for KVM; under emulation (slow) they
 * are multiplied by EST_SLOW (a soak test's duration is wall-clock time and
 * is not). History is real time on this host and is taken as it is.
 *
 * A run on several guests at once (shards) takes its makespan: the engine
 * hands out the longest tests first, in batches (estimate_batch_target()),
 * each to the guest that is free first, and check starts afresh for each
 * batch (EST_BATCH); every guest boots once (EST_BOOT).
 * estimate_makespan() is that schedule.
 *
 * Call sequence:
 *	estimator_init(&est, slow);
 *	estimator_set_env(&est, &env);            SOAK_DURATION=..., may repeat
 *	estimator_add_run(&est, &record)*;        or estimator_load_runs(&est, dir, max)
 *	estimate_test(&est, config, kernel, name, groups, &basis)*
 *	estimator_release(&est);
 */
#ifndef FSWB_FSTESTS_ESTIMATE_H
#define FSWB_FSTESTS_ESTIMATE_H

#include <stdbool.h>
#include <stddef.h>

#include "core/status.h"
#include "core/util.h"
#include "fstests/results.h"

#define EST_QUICK	8   /* seconds, under KVM (many quick tests end as not run) */
#define EST_TEST	60  /* seconds, under KVM */
#define EST_LONG	300 /* seconds, under KVM */
#define EST_SLOW	4   /* emulation (TCG) against KVM */
#define EST_BOOT	15  /* a guest's boot, under KVM */
#define EST_BATCH	10  /* check's start-up before a batch of tests, under KVM */
#define EST_BATCH_SPLIT 2
#define EST_BATCH_MIN	60 /* seconds, under KVM */
#define EST_RUNS	50 /* earlier runs estimator_load_runs() reads at most */

enum est_basis {
	EST_BASIS_HISTORY_KERNEL, /* earlier runs, same configuration and kernel */
	EST_BASIS_HISTORY_CONFIG, /* earlier runs, same configuration */
	EST_BASIS_HISTORY_ANY,	  /* earlier runs, another configuration */
	EST_BASIS_SOAK,		  /* SOAK_DURATION */
	EST_BASIS_GROUPS,	  /* the test's groups */
	EST_BASIS_COUNT
};

/* Words for a basis: "earlier runs of this configuration and kernel" ... */
const char *est_basis_str(enum est_basis b);

struct est_sample {
	char *config, *kernel, *test;
	double seconds;
};

struct estimator {
	bool slow;
	double soak; /* SOAK_DURATION in seconds, < 0 when not set */
	struct est_sample *v;
	size_t n, alloc;
	size_t runs;  /* runs that gave samples */
	double batch; /* check's start-up as a run measures it (seconds); 0: EST_BATCH */
};

void estimator_init(struct estimator *est, bool slow);
void estimator_release(struct estimator *est);

/*
 * Read SOAK_DURATION from "NAME=value" settings, as check converts it. A
 * value check would refuse is ERR_INVALID naming it; est is unchanged.
 */
enum status estimator_set_env(struct estimator *est, const struct strvec *env);

/* SOAK_DURATION in seconds as check converts it ("180", "3m", "1.5h": the last letter is the unit); < 0 when check would refuse it. */
double soak_duration_seconds(const char *value);

/* The tests of one earlier run that ended on their own. */
void estimator_add_run(struct estimator *est, const struct run_record *rec);
/* One test's time as a run measured it (the engine adds those of the run going on, so a
 * test's time on one configuration informs its estimate on the next); others are ignored. */
void estimator_add_test(struct estimator *est, const char *config, const char *kernel,
			const char *test, double seconds);

/*
 * The newest max runs (at most EST_RUNS) in runs_dir (DATA/runs), each
 * DIR/run.json; runs that cannot be read are passed over. Returns how many
 * were read.
 */
size_t estimator_load_runs(struct estimator *est, const char *runs_dir, size_t max);

/*
 * Seconds test (in configuration config, kernel release kernel; either may be
 * NULL) is expected to take, and why in *basis (may be NULL). groups: the
 * test's groups, NULL when not known.
 */
double estimate_test(const struct estimator *est, const char *config, const char *kernel,
		     const char *test, const struct strvec *groups, enum est_basis *basis);

/* A guest's boot, in seconds. */
double estimate_boot(const struct estimator *est);
/* check's start-up before a batch of tests, in seconds: est->batch when measured. */
double estimate_batch(const struct estimator *est);

/*
 * The seconds of tests the next batch of a run on shards guests takes
 * (the engine's rule, and the makespan's): what is left (left seconds of
 * tests waiting) divided by EST_BATCH_SPLIT times the shards, so batches
 * are large at first and small at the end and the guests end close
 * together; at least EST_BATCH_MIN seconds (stretched under emulation),
 * check's start-up being paid once a batch, but never more than an equal
 * share of what is left, nor less than two start-ups (estimate_batch()).
 */
double estimate_batch_target(const struct estimator *est, double left, unsigned shards);

/*
 * The wall-clock seconds n tests (secs[i] each) take on shards guests
 * (0 counts as 1) as the engine hands them out: longest first, in batches
 * of estimate_batch_target(), each to the guest that is free first, each
 * costing estimate_batch() more. Boots are not included. secs is not
 * changed.
 */
double estimate_makespan(const struct estimator *est, const double *secs, size_t n,
			 unsigned shards);

/* What a run is expected to take, and on what that rests. */
struct est_total {
	double seconds;		    /* the tests and a boot per configuration, one after another */
	double wall;		    /* what the run takes on shards guests (inventory_estimate) */
	unsigned shards;	    /* guests at once that wall is for; 0: wall not known */
	size_t ntests;		    /* over all configurations */
	size_t by[EST_BASIS_COUNT]; /* how many of them each basis gave */
};

struct catalogue;

/*
 * Add one configuration's tests (n names) and its boot to *t. A test's
 * groups are the catalogue's (cat may be NULL), else groups (the groups the
 * tests were selected by; may be NULL). each (may be NULL): n entries, each
 * test's seconds, for estimate_makespan().
 */
void estimate_config(const struct estimator *est, const char *config, const char *kernel,
		     const struct catalogue *cat, const char *const *tests, size_t n,
		     const struct strvec *groups, struct est_total *t, double *each);

/* What *t rests on, in words: "from earlier runs (3 of 7 tests), SOAK_DURATION; TCG". */
void est_total_basis(const struct est_total *t, const struct estimator *est, struct strbuf *out);

#endif
