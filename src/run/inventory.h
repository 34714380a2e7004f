/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The inventory: what a front end asks about this machine and the plan it
 * is making before a run -- the host checks, the backends' probes, the
 * kernels with their configs checked against the chosen configurations,
 * the fstests catalogue of a local tree, the tests a plan selects, and how
 * long they take (fstests/estimate.h: one estimator for every screen). The wizard asks these from a loop callback, never while it
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
#include "core/job.h"
#include "core/loop.h"
#include "core/plan.h"
#include "core/profile.h"
#include "fstests/catalogue.h"
#include "fstests/estimate.h"
#include "kbuild/kernel.h"
#include "run/hostcheck.h"

/*
 * The host checks: quick (no programs run, no KVM boot trial: what a screen
 * can wait for) or full (what `fswb doctor` does).
 */
void inventory_host(struct loop *loop, const struct profiles *prof, bool full,
		    struct hostcheck *out);

/*
 * The trials the quick check leaves out (hc->untried: a guest booted under
 * KVM), made in the background: a worker runs the full check, whose
 * verdicts are kept for this host boot (backends/kvm.h), and done is
 * called from the loop when it has ended; ask inventory_host() again then.
 * *out is the job (job_free() it, which also stops it).
 */
enum status inventory_trials_start(struct loop *loop, const struct profiles *prof,
				   void (*done)(void *data, const struct job_result *r), void *data,
				   struct job **out);

/* The probe of backend for plan; its summary says "cannot tell" when it failed. */
void inventory_probe(const char *backend, const struct plan *plan, struct backend_probe *out);

/*
 * The same in a worker, for a front end on the loop (a probe may wait on a
 * network: an ssh handshake, a REST call): done(data, probe) comes from the
 * loop with the answer, which the callee then owns (backend_probe_release);
 * when the worker fails its summary says "cannot tell" and why. *out is
 * the question, valid until done is called; inventory_probe_stop() drops
 * it before that (done is not called then).
 */
struct probe_ask;
enum status inventory_probe_start(struct loop *loop, const char *backend, const struct plan *plan,
				  void (*done)(void *data, struct backend_probe *probe), void *data,
				  struct probe_ask **out);
void inventory_probe_stop(struct probe_ask *a);
/*
 * backend_forget() in a worker (what the backend keeps on the plan's
 * machine, removed: the wizard's x), then the probe again: done(data, probe,
 * said) from the loop, said what went or why not. Stopped as above.
 */
enum status inventory_forget_start(struct loop *loop, const char *backend, const struct plan *plan,
				   void (*done)(void *data, struct backend_probe *probe,
						const char *said),
				   void *data, struct probe_ask **out);

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
 * The tests check would run for plan in configuration cfg, selected from cat
 * as the engine asks check (plan_check_selection: the test set's and the
 * plan's groups, exclusions, the configuration's exclude file, the named
 * tests of cfg's filesystem); with preset not NULL, that test set instead of
 * the plan's own choice of tests.
 */
enum status inventory_selection(const struct plan *plan, const struct profiles *prof,
				const struct catalogue *cat, const char *preset,
				const struct fs_config *cfg, struct catalogue_selection *out);

/*
 * The estimator for plan (fstests/estimate.h): this host's earlier runs and
 * the SOAK_DURATION of plan's test set; slow: the guests are emulated.
 */
void inventory_estimator(const struct plan *plan, const struct profiles *prof, bool slow,
			 struct estimator *out);

/*
 * What plan would take with the test set preset (NULL: the plan's own
 * choice of tests) on kernel release kernel (may be NULL): each
 * configuration's selection from cat and a boot, one after another
 * (out->seconds); and on the guests at once that shards_choose() gives for
 * this host and the plan's backend, every configuration's tests in one pool
 * and a boot per guest and configuration it takes (out->wall, out->shards;
 * run/shards.h). out->ntests is 0 when cat is NULL (the tests are not known
 * before the appliance has the tree).
 */
void inventory_estimate(const struct plan *plan, const struct profiles *prof,
			const struct catalogue *cat, const struct estimator *est,
			const char *preset, const char *kernel, struct est_total *out);

/*
 * What plan's run is expected to take, its guests not emulated: with this
 * host's earlier runs, inventory_estimate of its own tests when its fstests
 * tree is a directory, else of the tests that the newest earlier run of the
 * same tests, configurations and fstests ran (out->ntests is 0 when there is
 * none); basis (may be NULL): on what that rests (est_total_basis).
 */
void inventory_expect(const struct plan *plan, const struct profiles *prof, struct est_total *out,
		      struct strbuf *basis);

#endif
