/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What a run's report and page say beyond its record, found in its run
 * directory: how the kernel was got (plan.json), which fstests (plan.json,
 * and the revision of the appliance it reused: events.jsonl and the
 * appliance cache), the `fswb run` command that runs one test again as
 * the run did, and which of its tests were flaky lately (history). No
 * curses: `fswb results report|html` and the TUI's detail view share it.
 *
 *	struct run_words w;
 *	run_words_load(run_dir, &w);          run.json must read
 *	report_text(&w.in, &sb);              w.in is filled in
 *	run_words_release(&w);
 */
#ifndef FSWB_RUN_REPORTCTX_H
#define FSWB_RUN_REPORTCTX_H

#include <stdbool.h>

#include "core/plan.h"
#include "core/status.h"
#include "fstests/history.h"
#include "fstests/report.h"
#include "fstests/results.h"

struct report_ctx {
	struct plan plan;
	bool have_plan;
	const char *kernel_release;
	char *cmd;
};

struct run_words {
	struct report_ctx ctx;
	struct report_input in;
	struct run_record rec;
	struct flaky flaky; /* the last FLAKY_RUNS_DEFAULT runs of its kernel (history) */
	char *dir, *kernel, *fstests;
};

/*
 * The plan that runs test of config (NULL: the run's configurations) again
 * alone as the run in run_dir had it: its plan.json narrowed by
 * plan_one_test (the test set's settings kept), the kernel pinned to the
 * release run.json names when the run took the default one. An error when
 * plan.json does not read (an imported run has none).
 */
enum status run_plan_again(const char *run_dir, const char *config, const char *test,
			   struct plan *out);

enum status run_words_load(const char *dir, struct run_words *w);
void run_words_release(struct run_words *w);

#endif
