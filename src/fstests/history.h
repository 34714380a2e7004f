/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The runs kept under the data directory (DATA/runs/ID/, the ones with a
 * plan.json), named the way `fswb results` takes them, and what several of
 * them say together: flaky tests.
 *
 *	ID		a run's directory name ("20261203-170725")
 *	last		the newest run
 *	last~N		the Nth before it (last~0 is last)
 *
 * Ids sort by time: the run directories are named by their start.
 */
#ifndef FSWB_FSTESTS_HISTORY_H
#define FSWB_FSTESTS_HISTORY_H

#include <stdbool.h>
#include <stddef.h>

#include "core/status.h"
#include "core/util.h"
#include "fstests/compare.h"
#include "fstests/results.h"

/* The ids of the runs in DATA/runs (core/rundir.h), oldest first. */
void history_list(struct strvec *ids);
/*
 * The id that spec names (free() it). ERR_NOTFOUND with a message naming
 * spec, the runs directory and the closest id; ERR_INVALID for a bad last~N.
 */
enum status history_resolve(const char *spec, char **id);
/* DATA/runs/ID (free() it). */
char *history_run_dir(const char *id);
/* A run's run.json; the message names the file. */
enum status history_load(const char *id, struct run_record *out);
/*
 * What the run directory dir holds when it is not a test run, in words
 * for a list: "shell session" (fswb shell: check -n, then a shell), "dry
 * run" (check -n in a guest), "detached" (fswb run --detach, its results
 * not fetched yet); NULL for a test run, or when its plan.json does not read.
 */
const char *history_run_kind(const char *dir);
/* The run in dir ended (its run.json says so, RUN_END). */
bool history_run_finished(const char *dir);
/* The cause of a run that failed before any test ended (its error), else NULL. */
const char *history_run_failure(const struct run_record *rec);

/*
 * What a baseline and the flaky count match runs by: the kernel release
 * without what a build of a changed tree adds to it, so that a patched
 * kernel matches the one it was built from: a "+" and "-dirty" at the end
 * and git describe's "-N-gHASH" are dropped ("6.7.0-rc1-00012-gabcdef12+"
 * gives "6.7.0-rc1"; "6.1.0-57-cloud-amd64" stays). NULL gives "unknown".
 * free() it.
 */
char *history_kernel_key(const char *release);

/* The configuration of a section (its config, else its name, else ""). */
const char *section_config_name(const struct section_result *s);

/*
 * Flaky tests: over a set of runs (the caller picks them: the last N of
 * the same configuration and kernel key), how often each (config, test)
 * passed and failed. A test that did both is flaky.
 *
 *	struct flaky f;
 *	flaky_init(&f);
 *	flaky_add(&f, &rec);                  for each run
 *	flaky_find(&f, "ext4/4k", "generic/001")
 *	flaky_release(&f);
 */
struct flaky_entry {
	char *config, *test;
	unsigned passed, failed; /* failed counts fail, crashed and hung */
};

struct flaky {
	struct flaky_entry *v;
	size_t n, alloc;
};

void flaky_init(struct flaky *f);
void flaky_release(struct flaky *f);
/* Count one run; only sections of configuration config when it is not NULL. */
void flaky_add(struct flaky *f, const struct run_record *rec, const char *config);
/* The counts of (config, test) when it both passed and failed, else NULL. */
const struct flaky_entry *flaky_find(const struct flaky *f, const char *config, const char *test);
/* Is it flaky? */
bool flaky_entry_flaky(const struct flaky_entry *e);

/*
 * The recent history of the run newer: the up to n runs before it and
 * itself (ids in history, oldest first) whose kernel key is newer's,
 * counted into f. Runs without a readable run.json are skipped.
 */
void flaky_scan_history(struct flaky *f, const struct run_record *newer, size_t n);
#define FLAKY_RUNS_DEFAULT 10
/* Set the flaky counts of c's entries that f has as flaky. */
void flaky_mark(const struct flaky *f, struct run_compare *c);

#endif
