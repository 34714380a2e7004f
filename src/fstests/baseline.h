/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Baselines: the run a later run is compared with, per kernel key and
 * configuration, and the regressions of a run against them.
 *
 * A baseline is keyed by (kernel key, configuration): the kernel key is
 * history_kernel_key() of the run's kernel release (a patched build of a
 * tree matches the unpatched one: "6.7.0-rc1-00012-gabcdef12+" and
 * "6.7.0-rc1+" both give "6.7.0-rc1": the runs of a branch match its
 * base). They are kept in DATA/baselines.json:
 *
 *	{ "version": 1,
 *	  "baselines": [ { "kernel": "6.1.0-57-cloud-amd64", "config": "ext4/4k",
 *	                   "run": "20261203-170239", "set": "2026-12-04T10:00:00Z" } ] }
 *
 * Reading checks every field and names it in its message.
 */
#ifndef FSWB_FSTESTS_BASELINE_H
#define FSWB_FSTESTS_BASELINE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/status.h"
#include "core/util.h"
#include "fstests/compare.h"
#include "fstests/results.h"

struct baseline {
	char *kernel, *config, *run, *set; /* set: when, UTC, ISO 8601 */
};

struct baselines {
	struct baseline *v;
	size_t n, alloc;
};

/* DATA/baselines.json (free() it). */
char *baselines_path(void);
/* Read them; no file is no baselines. */
enum status baselines_load(struct baselines *b);
enum status baselines_save(const struct baselines *b);
void baselines_release(struct baselines *b);
/* Set (or replace) the baseline of (kernel, config). */
void baselines_set(struct baselines *b, const char *kernel, const char *config, const char *run);
/*
 * Remove the baselines whose kernel key or run is what (and whose config is
 * config when it is not NULL). Returns how many.
 */
size_t baselines_remove(struct baselines *b, const char *what, const char *config);
const struct baseline *baselines_find(const struct baselines *b, const char *kernel,
				      const char *config);

/*
 * A run against its baselines: for each configuration of rec with a
 * baseline for (history_kernel_key(rec->kernel), config), what changed
 * (cmp: the baseline's sections as the older run, rec's as the newer).
 * first_seen[i], for an expected failure (cmp.v[i] still failing), is the
 * oldest run in history of the same kernel key whose same configuration
 * failed that test (else the baseline's run); NULL for other entries.
 *
 *	struct regressions r;
 *	regressions_find(&rec, &r);           OK, or a baseline's run unreadable
 *	r.cmp.count[CMP_NEW_FAILURE]          the regressions
 *	regressions_release(&r);
 */
struct regressions {
	char *kernel_key;
	struct strvec configs, runs;   /* configurations with a baseline, and its run */
	struct strvec without;	       /* configurations without one */
	struct strvec without_failing; /* those of them with a failed test */
	struct run_compare cmp;
	char **first_seen; /* cmp.n entries */
};

enum status regressions_find(const struct run_record *rec, struct regressions *out);
/*
 * Did the run regress: a new failure against a baseline, or a failure in a
 * configuration that has no baseline (nothing says it is expected)?
 */
bool regressions_any(const struct regressions *r);
void regressions_release(struct regressions *r);

/*
 * run.json's "baseline" field, added after the run by `fswb run`:
 *
 *	"baseline": {
 *	  "kernel_key": "6.1.0-57-cloud-amd64",
 *	  "configs": [ { "config": "ext4/4k", "run": "20261203-170239" } ],
 *	  "without": [ "xfs/4k" ],              configurations with no baseline
 *	  "without_failing": [ "xfs/4k" ],      those with a failure (a regression)
 *	  "regressions": [ { "config": "ext4/4k", "test": "generic/001",
 *	                     "status": "fail", "baseline_status": "pass" | null } ],
 *	  "expected_failures": [ { "config": ..., "test": ..., "status": "fail",
 *	                           "first_seen": "20261201-090000" } ],
 *	  "fixed": [ { "config": ..., "test": ... } ] }
 */
json_t *regressions_json(const struct regressions *r);
/* Set it in the run.json at path (rewritten atomically). */
enum status regressions_save(const char *run_json, const struct regressions *r);
/*
 * After a run: its regressions (*r) from RUN_DIR/run.json, set in that
 * run.json when a baseline matched. OK, or the first error: run.json
 * unreadable (r empty), a baseline's run unreadable (r has what was found
 * before it), run.json not rewritten. r is to be released either way.
 */
enum status regressions_of_run(const char *run_dir, struct regressions *r);

/*
 * Plain text for the end of a run, under 80 columns: which baseline, the
 * regressions, the expected failures with the run that first showed them,
 * the fixed tests, the configurations without a baseline (whose failures
 * count as regressions).
 */
void regressions_text(const struct regressions *r, struct strbuf *out);

#endif
