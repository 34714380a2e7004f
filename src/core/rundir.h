/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Run directories: DATA/runs/ID, one per run (the engine makes them; ID is
 * the start time, so that ids sort in time). The one scanner of them, for
 * `fswb results`, the history and the estimates.
 */
#ifndef FSWB_CORE_RUNDIR_H
#define FSWB_CORE_RUNDIR_H

#include "core/util.h"

/* DATA/runs (free() it); it may not exist yet. */
char *rundir_root(void);

/*
 * Fill ids (empty on entry) with the ids of the run directories under
 * root, oldest first: directories (a symbolic link is not followed) that
 * hold plan.json, run.json or events.jsonl. None when root does not exist.
 */
void rundir_list(const char *root, struct strvec *ids);

#endif
