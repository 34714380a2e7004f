/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The inventory: what a front end asks about this machine and the plan it
 * is making before a run -- the host checks, the backends' probes, the
 * kernels with their configs checked against the chosen configurations,
 * the fstests catalogue of a local tree, and the seconds per test of the
 * earlier runs. The wizard asks these from a loop callback, never while it
 * draws, and draws the answers when they have come.
 *
 * Each call fills *out (released by the caller with the type's release)
 * and clears the errors it met: an answer that cannot be known is an empty
 * one, with a message where the call says so.
 */
#ifndef FSWB_RUN_INVENTORY_H
#define FSWB_RUN_INVENTORY_H

#include <stdbool.h>
#include <stddef.h>

#include "backends/backend.h"
#include "core/loop.h"
#include "core/plan.h"
#include "core/profile.h"
#include "fstests/catalogue.h"
#include "kbuild/kernel.h"
#include "run/hostcheck.h"

/*
 * The host checks: quick (no programs run, no KVM boot trial: what a screen
 * can wait for) or full (what `fswb doctor` does).
 */
void inventory_host(struct loop *loop, const struct profiles *prof, bool full,
		    struct hostcheck *out);

/* The probe of backend for plan; its summary says "cannot tell" when it failed. */
void inventory_probe(const char *backend, const struct plan *plan, struct backend_probe *out);

/*
 * The kernels for plan's architecture, each checked against what plan's
 * configurations and debug options need (when prof is not NULL). ERR_* with
 * the message when they cannot be listed.
 */
enum status inventory_kernels(struct loop *loop, const struct plan *plan,
			      const struct profiles *prof, struct kernel_list *out);

/*
 * The catalogue of plan's fstests source when it is a local directory;
 * otherwise ERR_UNSUPPORTED with what to do to get one.
 */
enum status inventory_catalogue(const struct plan *plan, struct catalogue *out);

/*
 * Seconds per test over the last (at most 5) finished runs with as many
 * configurations as plan (wall clock); *runs gets how many went into it
 * (0: no estimate, *per_test is 0).
 */
void inventory_history(const struct plan *plan, double *per_test, size_t *runs);

#endif
