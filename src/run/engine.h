/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The run engine: a plan in, events out, a run directory left behind.
 *
 * Stages, each with STAGE_BEGIN, STAGE_PROGRESS* and STAGE_END events:
 *	kernel		resolve the plan's kernel (build a tree when asked)
 *	appliance	build or reuse the test appliance; the initramfs for a
 *			modular kernel
 *	boot		start a session per filesystem configuration, until the
 *			guest agent says hello
 *	tests		check runs; its stdout is parsed into test events, the
 *			kernel log into KMSG events
 *	results		the results directory comes back and is unpacked;
 *			junit.xml and run.json are written
 * With one guest at a time (plan.shards 1, or what run/shards.h chooses
 * on this host), configurations run one after another, each in its own
 * guest (its devices are sized for it) as one check with the whole
 * selection. With N guests at once (shards), the run is one queue of
 * (configuration, test) items: each configuration's tests, when this host
 * knows them (the catalogue of a local fstests tree, or the tests the plan
 * names), longest first by earlier runs; a guest takes a batch at a time,
 * one check naming its tests (with the run's -x, -e and -E; TEST_DEV is
 * made for the guest's first batch and kept for the next ones), large
 * batches first and small ones at the end; a guest moves to another
 * configuration when its own has nothing left. Without the tests known,
 * each configuration is one item. Every event of a guest carries its
 * shard; each test's record says which shard ran it.
 * A guest that crashes ends its test as crashed; one that stays silent
 * past the backend's limit is stopped and its test ends as hung; a new
 * guest goes on with what is left (the others never wait for it), unless
 * that guest ended no test at all.
 *
 * The run directory (DATA/runs/ID/): plan.json, events.jsonl (every event,
 * as `fswb run --json` prints them), run.json (rewritten as each test
 * ends), junit.xml, console.log (the whole serial console; console-N.log
 * for shard N), kernel.log (the kernel-log lines, "[N] " before shard N's),
 * and results/CONFIG/ (check's results directory: per test .out.bad,
 * .full, .dmesg, and the test's kernel-log slice .kmsg; the results of
 * every check of the configuration merged: check.log appended, check.time
 * merged, other files that two checks both wrote, such as result.xml, kept
 * under batches/SHARD.N/).
 *
 * Call sequence, on the loop's thread:
 *	engine_new(plan, profiles, loop, bus, &e);   the plan is copied
 *	engine_start(e);                             returns at once; events follow
 *	... loop_run(loop) ...                       RUN_END is the last event
 *	engine_cancel(e);                            any time: stops cleanly (RUN_END
 *	                                             follows, interrupted)
 *	engine_exit_code(e)                          after RUN_END: 0 all passed,
 *	                                             1 a test failed, 2 nothing ran
 *	engine_free(e);                              nothing is left running
 * Every guest is powered off when its work is done; running one test again
 * is a new run whose plan names that test. With plan.shell the last guest
 * stays up after its tests with a shell (stage "shell" begins):
 *	engine_shell_fd(e)                           >= 0 while it waits: the
 *	                                             front end relays the terminal
 *	                                             until AGENT_SHELL_END comes on it,
 *	                                             it closes, or the user leaves
 *	engine_shell_end(e);                         then the guest powers off
 */
#ifndef FSWB_RUN_ENGINE_H
#define FSWB_RUN_ENGINE_H

#include "core/event.h"
#include "core/loop.h"
#include "core/plan.h"
#include "core/profile.h"
#include "core/status.h"

struct engine;

enum status engine_new(const struct plan *plan, const struct profiles *profiles, struct loop *loop,
		       struct event_bus *bus, struct engine **out);
/* Make the run directory and start the first stage. */
enum status engine_start(struct engine *e);
/*
 * A run of plan.detach whose machines run on alone (DIR/detached.json):
 * follow them to the end in its run directory DIR, as if they were live,
 * the plan being DIR's plan.json. The events the run had are replayed to
 * the bus first; RUN_END ends it as any run.
 */
#define DETACHED_JSON "detached.json"
/* One at a time: DIR/.fetch.lock is held until engine_free (another: ERR_BUSY). */
enum status engine_follow(struct engine *e, const char *dir);
void engine_cancel(struct engine *e);
/* True after RUN_END, or once plan.detach's machines run alone. */
bool engine_done(const struct engine *e);
int engine_exit_code(const struct engine *e);
/* The run directory, once started; NULL before. */
const char *engine_run_dir(const struct engine *e);
/* The shell in the guest (plan.shell), a byte stream both ways; -1 when there is none. */
int engine_shell_fd(const struct engine *e);
/*
 * A look into the guest of a running test (the agent keeps a shell as the
 * unprivileged user fsgqa on the shell port while check runs): its stream
 * is engine_shell_fd() until engine_shell_end() or the end of the guest's
 * check, and the tests go on meanwhile. ERR_UNSUPPORTED naming why when no
 * test runs in a guest or its backend gives no shell.
 */
enum status engine_look(struct engine *e);
/* Done with the shell: close it and power the guest off (a look: just close it). */
void engine_shell_end(struct engine *e);
void engine_free(struct engine *e);

#endif
