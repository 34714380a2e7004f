/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the wizard's review screen says about a plan, without curses: the
 * `fswb run ...` line that makes the same plan (so people learn the CLI),
 * and how long the run will take.
 */
#ifndef FSWB_VIEW_PLANUTIL_H
#define FSWB_VIEW_PLANUTIL_H

#include <stdbool.h>
#include <stddef.h>

#include "core/plan.h"
#include "core/util.h"

/*
 * Append the command line, shell-quoted, leaving out what is the default
 * (plan_defaults()): "fswb run -c ext4/4k,xfs/4k --preset quick --kernel
 * 6.1.0-57-cloud-amd64 --cpus 4". `fswb plan --dump` with the same
 * arguments gives the same plan.
 */
void plan_cmdline(const struct plan *plan, struct strbuf *out);

#endif
