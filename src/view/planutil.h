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

/* Rough seconds per test and per guest start when nothing better is known. */
#define EST_TEST_KVM 15.0
#define EST_TEST_TCG 45.0
#define EST_BOOT_KVM 8.0
#define EST_BOOT_TCG 25.0

/*
 * Seconds a run of ntests tests in nconfigs guests takes: from history
 * (seconds per test measured over earlier runs, wall clock; <= 0 when
 * none), else from the rough figures above for KVM or emulation (slow).
 */
double estimate_run(size_t ntests, size_t nconfigs, bool slow, double hist_per_test);

#endif
