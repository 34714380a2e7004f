/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The run model: what the run view shows, built from events alone, so that
 * a live run (the engine's bus) and a recorded one (events.jsonl replayed
 * with event_replay_file) are the same code path. No curses here.
 *
 *	struct run_model m;
 *	run_model_init(&m);
 *	run_model_add_pending(&m, "ext4/4k", "generic/001", 12.0);   optional:
 *	                            the tests expected, with earlier times
 *	event_bus_add(&bus, run_model_listener(&m));
 *	... events ... (m.gen changes whenever something visible changed)
 *	run_model_eta(&m, now_ms)   seconds to go, or -1
 *	run_model_release(&m);
 *
 * Memory is bounded: the kernel log is a logring (RUN_MODEL_LOG_LINES lines,
 * RUN_MODEL_LOG_BYTES bytes); warnings and errors keep the last
 * RUN_MODEL_MESSAGES; tests are one entry per (config, test).
 *
 * A sharded run (RUN_BEGIN's shards > 1) runs up to that many tests at once,
 * one per guest: every event of a guest carries its shard (1..N), and the
 * model keeps per shard its state, configuration and test (shards[k - 1]),
 * tags each kernel-log line with the shard it came from, and keeps the
 * guests' boot, tests and results stages out of the run's own stages (they
 * repeat per shard). `running` is then the test that started last of those
 * running. A run of one guest at a time has no shards (nshards <= 1).
 */
#ifndef FSWB_VIEW_RUNMODEL_H
#define FSWB_VIEW_RUNMODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/event.h"
#include "core/util.h"
#include "view/logring.h"

#define RUN_MODEL_LOG_LINES 20000
#define RUN_MODEL_LOG_BYTES (8u << 20)
#define RUN_MODEL_MESSAGES  64
#define RUN_MODEL_STAGES    8
#define RUN_MODEL_SHARDS    64 /* plan.shards' bound: a shard beyond it is not kept */

enum rm_state {
	RM_PENDING,
	RM_RUNNING,
	RM_DONE,
	RM_STOPPED,   /* cut off when the user stopped the run: seconds is how long it had run */
	RM_UNREACHED, /* the stopped run never started it (RUN_END's unreached) */
};

struct rm_test {
	char *name;   /* "generic/001" */
	char *config; /* "ext4/4k", or NULL */
	enum rm_state state;
	enum test_status status; /* when RM_DONE */
	double seconds;		 /* when RM_DONE or RM_STOPPED; < 0 unknown */
	double prev;		 /* an earlier run's seconds; < 0 unknown */
	unsigned reasons;	 /* enum fail_reason */
	char *reason, *detail;	 /* may be NULL */
	char *hints;		 /* check's hints after a failure; may be NULL */
	uint64_t start_ms;	 /* wall clock of TEST_START */
	uint64_t log_seq;	 /* the log's next_seq at TEST_START */
	unsigned bad_lines;	 /* kernel-log lines with KMSG_BAD flags during it */
	unsigned reruns;
	unsigned shard; /* the guest that ran it last in a sharded run (1..N), else 0 */
};

enum rm_stage_state {
	RM_STAGE_RUNNING,
	RM_STAGE_OK,
	RM_STAGE_FAILED,
};

struct rm_stage {
	char *name;   /* "kernel", "appliance", "boot", "tests", "results" */
	char *detail; /* the latest progress words, may be NULL */
	double fraction;
	enum rm_stage_state state;
	char *message; /* when failed */
	uint64_t begin_ms, end_ms;
};

enum rm_shard_state {
	RMS_WAITING, /* nothing from it yet */
	RMS_BOOTING,
	RMS_TESTING, /* its tests stage: a test running, or check between two */
	RMS_RESULTS,
	RMS_IDLE,   /* its last stage ended well: it may boot again (another configuration) */
	RMS_FAILED, /* its last stage failed (message); a restart boots it again */
	RMS_DONE,   /* the run has ended */
};

struct rm_shard {
	enum rm_shard_state state;
	char *config;	   /* its guest's configuration; may be NULL */
	int test;	   /* the index of the test it runs, or -1 */
	char *message;	   /* why its last stage failed; may be NULL */
	unsigned boots;	   /* guests it booted: a crash or another configuration boots again */
	unsigned crashes;  /* its tests that crashed or hung */
	size_t done;	   /* tests it finished */
	uint64_t since_ms; /* when its current stage began */
};

struct run_model {
	char *id;
	unsigned total;	       /* tests expected (RUN_BEGIN); see run_model_total() */
	double estimate;       /* the run's estimate in seconds (RUN_BEGIN); 0 when unknown */
	struct rm_test *tests; /* in the order they appeared */
	size_t ntests, alloc;
	size_t *hash; /* open addressing: index + 1, 0 empty */
	size_t hash_size;
	struct rm_stage stages[RUN_MODEL_STAGES];
	size_t nstages;
	struct test_counts counts; /* of finished tests */
	size_t done;		   /* tests finished, the excluded ones not counted */
	size_t nexpunged;	   /* tests check left out as excluded ([expunged]) */
	struct logring log;
	struct strvec messages;	 /* "warning: ...", "error: ..." (the last few) */
	char *config;		 /* the current section's config */
	int running;		 /* index of the test running (started last), or -1 */
	unsigned nshards;	 /* guests at once (RUN_BEGIN); 0 or 1: one at a time */
	struct rm_shard *shards; /* nshards of them when nshards > 1: shard k is shards[k - 1] */
	bool begun, ended, interrupted;
	bool in_shell; /* the shell stage began: what the guest logs now is no test's */
	int exit_code; /* after RUN_END */
	uint64_t start_ms, last_ms, end_ms;
	uint64_t boot_ms; /* the first guest's boot began (0: still building what it needs) */
	unsigned gen;	  /* bumped on every change */
};

void run_model_init(struct run_model *m);
void run_model_release(struct run_model *m);
struct listener run_model_listener(struct run_model *m);
void run_model_event(struct run_model *m, const struct event *ev);

/* A test expected to run, shown as pending until it starts. */
void run_model_add_pending(struct run_model *m, const char *config, const char *name, double prev);
/*
 * Why a run failed before any test ended: the message of the first stage
 * that failed (the kernel, the appliance, a boot), else the last error;
 * NULL when a test ended, or nothing failed, or the user stopped the run.
 */
const char *run_model_failure(const struct run_model *m);
/* Find a test; NULL when it is not in the model. */
struct rm_test *run_model_find(struct run_model *m, const char *config, const char *name);

/* Several guests at once. */
static inline bool
run_model_sharded(const struct run_model *m)
{
	return m->nshards > 1;
}

/*
 * The order the run view lists tests in, live or replayed: by configuration
 * in the order the run took them, then by name, as check runs them (the
 * order they started in differs: longest first across guests). Fills
 * order[0 .. ntests-1] with test indexes.
 */
void run_model_order(const struct run_model *m, size_t *order);

/*
 * The tests to run: RUN_BEGIN's total, or more when more are listed; an
 * excluded test (check's [expunged]) is listed but not one of them.
 */
size_t run_model_total(const struct run_model *m);
/* Tests not finished yet: run_model_total() - done. */
size_t run_model_to_go(const struct run_model *m);
/* Seconds left, estimated from earlier times and the tests done so far; -1 when
 * unknown. In a sharded run the tests left are divided over the guests still
 * working (at most one per test left), and it is never less than the rest of
 * the longest test running. */
double run_model_eta(const struct run_model *m, uint64_t now_ms);
/* No guest has begun to boot yet: the kernel or the appliance is being made,
 * which the ETA (of the guests' work) does not count. */
bool run_model_preparing(const struct run_model *m);
/* Seconds since RUN_BEGIN (to RUN_END when ended). */
double run_model_elapsed(const struct run_model *m, uint64_t now_ms);

#endif
