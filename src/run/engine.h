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
 * Configurations run one after another, each in its own guest (its devices
 * are sized for it). A guest that crashes ends its test as crashed; one
 * that stays silent past the backend's limit is stopped and its test ends
 * as hung; the next configuration still runs.
 *
 * The run directory (DATA/runs/ID/): plan.json, events.jsonl (every event,
 * as `fswb run --json` prints them), run.json (rewritten as each test
 * ends), junit.xml, console.log (the whole serial console), kernel.log (the
 * kernel-log lines), and results/CONFIG/ (check's results directory: per
 * test .out.bad, .full, .dmesg, and the test's kernel-log slice .kmsg).
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
 * Every guest is powered off when its configuration is done; running one
 * test again is a new run whose plan names that test. With plan.shell the
 * last guest stays up after its tests with a shell (stage "shell" begins):
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
void engine_cancel(struct engine *e);
/* True after RUN_END. */
bool engine_done(const struct engine *e);
int engine_exit_code(const struct engine *e);
/* The run directory, once started; NULL before. */
const char *engine_run_dir(const struct engine *e);
/* The shell in the guest (plan.shell), a byte stream both ways; -1 when there is none. */
int engine_shell_fd(const struct engine *e);
/* Done with the shell: close it and power the guest off. */
void engine_shell_end(struct engine *e);
void engine_free(struct engine *e);

#endif
