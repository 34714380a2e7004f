/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The run view's model and what it is fed: the bounded kernel-log ring,
 * the model built from events (a recorded run replayed from its
 * events.jsonl, as the history opens it), counts and ETA; the diff of a
 * golden output; the `fswb run` line of a plan. The modules come from
 * libfswb.a (src/view).
 */
#include "testlib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/event_json.h"
#include "core/paths.h"
#include "view/diff.h"
#include "view/logring.h"
#include "view/planutil.h"
#include "view/runmodel.h"

static void
test_logring_bounds(void **state)
{
	struct logring r;
	char line[64];

	logring_init(&r, 100, 1 << 20);
	for (int i = 0; i < 1000; i++) {
		snprintf(line, sizeof(line), "line %d", i);
		logring_push(&r, line, 0, -1, 0);
	}
	assert_int_equal(r.n, 100);
	assert_int_equal(r.dropped, 900);
	assert_string_equal(logring_get(&r, 0)->text, "line 900");
	assert_string_equal(logring_get(&r, 99)->text, "line 999");
	assert_int_equal(logring_get(&r, 99)->seq, 999);
	assert_int_equal(logring_index_of(&r, 950), 50);
	assert_int_equal(logring_index_of(&r, 10), (size_t)-1);
	assert_int_equal(logring_index_of(&r, 1000), (size_t)-1);
	assert_null(logring_get(&r, 100));
	logring_release(&r);

	/* the byte bound, and long lines cut */
	logring_init(&r, 1000, 10000);
	{
		char *big = xmalloc(5000);

		memset(big, 'x', 4999);
		big[4999] = 0;
		for (int i = 0; i < 10; i++)
			logring_push(&r, big, KMSG_WARNING, 3, 2);
		free(big);
	}
	assert_true(r.bytes <= 10000);
	assert_int_equal(strlen(logring_get(&r, 0)->text), LOGRING_LINE_MAX + 3);
	assert_true(str_endswith(logring_get(&r, 0)->text, "..."));
	assert_int_equal(logring_get(&r, 0)->flags, KMSG_WARNING);
	assert_int_equal(logring_get(&r, 0)->test, 3);
	logring_release(&r);
}

static void
emit(struct run_model *m, struct event *ev)
{
	run_model_event(m, ev);
	memset(ev, 0, sizeof(*ev));
}

static void
test_model_events(void **state)
{
	struct run_model m;
	struct event ev = { 0 };
	struct rm_test *t;

	run_model_init(&m);
	run_model_add_pending(&m, "ext4/4k", "generic/001", 10);
	run_model_add_pending(&m, "ext4/4k", "generic/002", 20);
	run_model_add_pending(&m, "ext4/4k", "generic/003", -1);
	assert_int_equal(run_model_total(&m), 3);
	assert_int_equal(run_model_to_go(&m), 3);

	ev.type = EV_RUN_BEGIN;
	ev.wall_ms = 1000000;
	ev.u.run.id = "r1";
	emit(&m, &ev);
	ev.type = EV_STAGE_BEGIN;
	ev.u.stage.stage = "boot";
	emit(&m, &ev);
	ev.type = EV_STAGE_PROGRESS;
	ev.u.stage.stage = "boot";
	ev.u.stage.fraction = 0.5;
	ev.u.stage.detail = "booting";
	emit(&m, &ev);
	assert_int_equal(m.nstages, 1);
	assert_true(m.stages[0].fraction == 0.5);
	assert_string_equal(m.stages[0].detail, "booting");
	ev.type = EV_STAGE_END;
	ev.u.stage.stage = "boot";
	ev.u.stage.code = OK;
	emit(&m, &ev);
	assert_int_equal(m.stages[0].state, RM_STAGE_OK);

	/* the marker comes before TEST_START: the line is the test's already */
	ev.type = EV_KMSG;
	ev.config = "ext4/4k";
	ev.u.line.text = "[ 1.0] run fstests generic/001 at 2026-12-03";
	ev.u.line.flags = KMSG_MARKER;
	ev.u.line.test = "generic/001";
	emit(&m, &ev);
	ev.type = EV_TEST_START;
	ev.config = "ext4/4k";
	ev.wall_ms = 1001000;
	ev.u.test_start.test = "generic/001";
	ev.u.test_start.prev_seconds = -1;
	emit(&m, &ev);
	assert_int_equal(m.running, 0);
	ev.type = EV_KMSG;
	ev.config = "ext4/4k";
	ev.u.line.text = "[ 2.0] WARNING: CPU: 1 PID: 22 at fs/x.c";
	ev.u.line.flags = KMSG_WARNING;
	emit(&m, &ev);
	/* a console line with a progress meter's backspaces, two lines in one */
	ev.type = EV_CONSOLE;
	ev.config = "ext4/4k";
	ev.u.line.text = "Writing  0/40\b\b\b\b\b10/40\rWriting done \nnext line";
	emit(&m, &ev);
	assert_int_equal(m.log.n, 4);
	assert_string_equal(logring_get(&m.log, 2)->text, "Writing done ");
	assert_string_equal(logring_get(&m.log, 3)->text, "next line");
	assert_true(logring_get(&m.log, 3)->flags & LOGF_CONSOLE);
	assert_int_equal(logring_get(&m.log, 0)->test, 0);
	assert_int_equal(logring_get(&m.log, 1)->test, 0);
	assert_int_equal(m.tests[0].bad_lines, 1);

	/* ETA: the running test's rest (10 - 4 s), 20 s, and the mean of none: unknown */
	assert_true(run_model_eta(&m, 1005000) < 0);
	ev.type = EV_TEST_END;
	ev.config = "ext4/4k";
	ev.wall_ms = 1012000;
	ev.u.test_end.test = "generic/001";
	ev.u.test_end.status = TS_PASS;
	ev.u.test_end.seconds = 11;
	emit(&m, &ev);
	/* now: 20 s (its previous time) + 11 s (the mean so far) */
	assert_true(run_model_eta(&m, 1012000) > 30.9 && run_model_eta(&m, 1012000) < 31.1);
	ev.type = EV_TEST_END;
	ev.config = "ext4/4k";
	ev.u.test_end.test = "generic/002";
	ev.u.test_end.status = TS_FAIL;
	ev.u.test_end.reasons = FAIL_MISMATCH;
	ev.u.test_end.seconds = 3;
	ev.u.test_end.reason = "output mismatch";
	emit(&m, &ev);
	/* a rerun that passes keeps the failure */
	ev.type = EV_TEST_END;
	ev.config = "ext4/4k";
	ev.u.test_end.test = "generic/002";
	ev.u.test_end.status = TS_PASS;
	ev.u.test_end.rerun = 1;
	emit(&m, &ev);
	t = run_model_find(&m, "ext4/4k", "generic/002");
	assert_non_null(t);
	assert_int_equal(t->status, TS_FAIL);
	assert_int_equal(t->reruns, 1);
	assert_string_equal(t->reason, "output mismatch");
	assert_int_equal(m.counts.passed, 1);
	assert_int_equal(m.counts.failed, 1);
	assert_int_equal(m.done, 2);
	assert_int_equal(run_model_to_go(&m), 1);
	assert_null(run_model_find(&m, "xfs/4k", "generic/002"));

	ev.type = EV_WARNING;
	ev.u.error.message = "KVM is not usable";
	emit(&m, &ev);
	assert_string_equal(m.messages.v[m.messages.n - 1], "warning: KVM is not usable");
	ev.type = EV_RUN_END;
	ev.wall_ms = 1100000;
	ev.u.end.exit_code = 1;
	emit(&m, &ev);
	assert_true(m.ended);
	assert_int_equal(m.exit_code, 1);
	assert_true(run_model_eta(&m, 1100000) == 0);
	assert_true(run_model_elapsed(&m, 5000000) == 100);
	run_model_release(&m);
}

/* The engine's estimates: the run's before any test ended, then each test's. */
static void
test_model_estimates(void **state)
{
	struct run_model m;
	struct event ev = { 0 };

	run_model_init(&m);
	ev.type = EV_RUN_BEGIN;
	ev.wall_ms = 1000000;
	ev.u.run.id = "r1";
	ev.u.run.total_tests = 3;
	ev.u.run.expected_seconds = 600;
	emit(&m, &ev);
	assert_true(m.estimate == 600);
	/* the appliance is built for 60 s: the estimate (the guests' work) is
	 * all left, once built */
	ev.type = EV_STAGE_BEGIN;
	ev.u.stage.stage = "appliance";
	emit(&m, &ev);
	assert_true(run_model_preparing(&m));
	assert_true(run_model_eta(&m, 1060000) == 600);
	/* then the guest boots for 40 s: 560 s are left */
	ev.type = EV_STAGE_BEGIN;
	ev.wall_ms = 1060000;
	ev.u.stage.stage = "boot";
	emit(&m, &ev);
	assert_false(run_model_preparing(&m));
	assert_true(run_model_eta(&m, 1100000) == 560);
	/* a test that check has no time for gets fswb's expectation */
	ev.type = EV_TEST_START;
	ev.config = "ext4/4k";
	ev.wall_ms = 1100000;
	ev.u.test_start.test = "generic/476";
	ev.u.test_start.prev_seconds = -1;
	ev.u.test_start.expected_seconds = 260;
	ev.u.test_start.expected_from = "SOAK_DURATION";
	emit(&m, &ev);
	assert_true(run_model_find(&m, "ext4/4k", "generic/476")->prev == 260);
	ev.type = EV_TEST_END;
	ev.config = "ext4/4k";
	ev.wall_ms = 1350000;
	ev.u.test_end.test = "generic/476";
	ev.u.test_end.status = TS_PASS;
	ev.u.test_end.seconds = 250;
	emit(&m, &ev);
	/* two more tests to go, at the mean of those done */
	assert_true(run_model_eta(&m, 1350000) == 500);
	run_model_release(&m);
}

static void
test_model_many(void **state)
{
	struct run_model m;
	struct event ev = { 0 };
	char name[32];

	/* 5000 tests and 100000 log lines: memory stays bounded */
	run_model_init(&m);
	for (int i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "generic/%04d", i);
		ev.type = EV_TEST_START;
		ev.config = "xfs/4k";
		ev.u.test_start.test = name;
		ev.u.test_start.prev_seconds = -1;
		run_model_event(&m, &ev);
		for (int k = 0; k < 20; k++) {
			memset(&ev, 0, sizeof(ev));
			ev.type = EV_KMSG;
			ev.config = "xfs/4k";
			ev.u.line.text = "[ 12.345678] XFS (vdc): Mounting V5 Filesystem";
			run_model_event(&m, &ev);
		}
		memset(&ev, 0, sizeof(ev));
		ev.type = EV_TEST_END;
		ev.config = "xfs/4k";
		ev.u.test_end.test = name;
		ev.u.test_end.status = i % 10 ? TS_PASS : TS_NOTRUN;
		ev.u.test_end.seconds = 2;
		run_model_event(&m, &ev);
		memset(&ev, 0, sizeof(ev));
	}
	assert_int_equal(m.ntests, 5000);
	assert_int_equal(m.counts.passed, 4500);
	assert_int_equal(m.counts.notrun, 500);
	assert_int_equal(m.log.n, RUN_MODEL_LOG_LINES);
	assert_int_equal(m.log.dropped, 100000 - RUN_MODEL_LOG_LINES);
	assert_non_null(run_model_find(&m, "xfs/4k", "generic/4999"));
	assert_int_equal(run_model_find(&m, "xfs/4k", "generic/2500") - m.tests, 2500);
	run_model_release(&m);
}

static void
shard_event(struct run_model *m, enum event_type type, unsigned shard, const char *config,
	    uint64_t ms, const char *what)
{
	struct event ev = { .type = type, .shard = shard, .config = config, .wall_ms = ms };

	switch (type) {
	case EV_STAGE_BEGIN:
	case EV_STAGE_END:
		ev.u.stage.stage = what;
		ev.u.stage.detail = config;
		break;
	case EV_TEST_START:
		ev.u.test_start.test = what;
		ev.u.test_start.prev_seconds = -1;
		break;
	case EV_TEST_END:
		ev.u.test_end.test = what;
		ev.u.test_end.status = TS_PASS;
		break;
	default:
		ev.u.line.text = what;
		break;
	}
	run_model_event(m, &ev);
}

static void
shard_test_end(struct run_model *m, unsigned shard, const char *config, uint64_t ms,
	       const char *test, enum test_status st, double seconds)
{
	struct event ev = { .type = EV_TEST_END, .shard = shard, .config = config, .wall_ms = ms };

	ev.u.test_end.test = test;
	ev.u.test_end.status = st;
	ev.u.test_end.seconds = seconds;
	run_model_event(m, &ev);
}

/*
 * Two guests at once: each shard's stages, test and log; two tests running;
 * a guest that crashes and boots again; the ETA divided over the guests.
 */
static void
test_model_shards(void **state)
{
	struct run_model m;
	struct event ev = { 0 };
	struct rm_test *a, *b;

	run_model_init(&m);
	ev.type = EV_RUN_BEGIN;
	ev.wall_ms = 1000000;
	ev.u.run.id = "r2";
	ev.u.run.total_tests = 4;
	ev.u.run.expected_seconds = 300;
	ev.u.run.shards = 2;
	ev.u.run.shards_why = "2 cores, 1 per guest";
	emit(&m, &ev);
	assert_true(run_model_sharded(&m));
	assert_int_equal(m.nshards, 2);
	assert_int_equal(m.shards[1].state, RMS_WAITING);
	assert_int_equal(m.shards[1].test, -1);
	/* the run's own stage, then the guests' */
	shard_event(&m, EV_STAGE_BEGIN, 0, NULL, 1000000, "kernel");
	shard_event(&m, EV_STAGE_BEGIN, 1, "ext4/4k", 1001000, "boot");
	shard_event(&m, EV_STAGE_BEGIN, 2, "xfs/4k", 1001000, "boot");
	assert_int_equal(m.nstages, 1);
	assert_string_equal(m.stages[0].name, "kernel");
	assert_int_equal(m.shards[0].state, RMS_BOOTING);
	assert_int_equal(m.shards[0].boots, 1);
	assert_string_equal(m.shards[0].config, "ext4/4k");
	assert_string_equal(m.shards[1].config, "xfs/4k");
	shard_event(&m, EV_STAGE_END, 1, "ext4/4k", 1009000, "boot");
	assert_int_equal(m.shards[0].state, RMS_IDLE);
	shard_event(&m, EV_STAGE_BEGIN, 1, "ext4/4k", 1009000, "tests");
	assert_int_equal(m.shards[0].state, RMS_TESTING);

	/* two tests at once, with the engine's expectations */
	ev.type = EV_TEST_START;
	ev.shard = 1;
	ev.config = "ext4/4k";
	ev.wall_ms = 1010000;
	ev.u.test_start.test = "generic/001";
	ev.u.test_start.prev_seconds = -1;
	ev.u.test_start.expected_seconds = 100;
	emit(&m, &ev);
	ev.type = EV_TEST_START;
	ev.shard = 2;
	ev.config = "xfs/4k";
	ev.wall_ms = 1020000;
	ev.u.test_start.test = "generic/002";
	ev.u.test_start.prev_seconds = 40;
	emit(&m, &ev);
	a = run_model_find(&m, "ext4/4k", "generic/001");
	b = run_model_find(&m, "xfs/4k", "generic/002");
	assert_int_equal(a->state, RM_RUNNING);
	assert_int_equal(b->state, RM_RUNNING);
	assert_int_equal(a->shard, 1);
	assert_int_equal(b->shard, 2);
	assert_int_equal(m.shards[0].test, a - m.tests);
	assert_int_equal(m.shards[1].test, b - m.tests);
	assert_int_equal(m.running, b - m.tests);
	assert_true(a->prev == 100);

	/* each guest's kernel log goes to its own test, tagged with its shard */
	shard_event(&m, EV_KMSG, 2, "xfs/4k", 1021000, "[ 3.0] XFS (vdc): Mounting V5");
	ev.type = EV_KMSG;
	ev.shard = 1;
	ev.config = "ext4/4k";
	ev.u.line.text = "[ 4.0] WARNING: CPU: 0 PID: 7 at fs/ext4/inode.c";
	ev.u.line.flags = KMSG_WARNING;
	emit(&m, &ev);
	shard_event(&m, EV_CONSOLE, 0, NULL, 1022000, "fswb: a line of the run's own");
	assert_int_equal(m.log.n, 3);
	assert_int_equal(logring_get(&m.log, 0)->shard, 2);
	assert_int_equal(logring_get(&m.log, 0)->test, b - m.tests);
	assert_int_equal(logring_get(&m.log, 1)->shard, 1);
	assert_int_equal(logring_get(&m.log, 1)->test, a - m.tests);
	assert_int_equal(logring_get(&m.log, 2)->shard, 0);
	assert_int_equal(logring_get(&m.log, 2)->test, -1);
	assert_int_equal(a->bad_lines, 1);
	assert_int_equal(b->bad_lines, 0);

	/* before a test ended: the run's estimate (wall clock on 2 guests) less
	 * the time since the first guest began to boot */
	assert_true(run_model_eta(&m, 1030000) == 271);
	shard_test_end(&m, 2, "xfs/4k", 1055000, "generic/002", TS_PASS, 35);
	assert_int_equal(m.running, a - m.tests);
	assert_int_equal(m.shards[1].test, -1);
	assert_int_equal(m.shards[1].done, 1);
	assert_int_equal(m.done, 1);
	/* left: generic/001's 50 s and two unknown tests at the mean (35 s), on 2 guests */
	assert_true(run_model_eta(&m, 1060000) == 60);
	shard_event(&m, EV_TEST_START, 2, "xfs/4k", 1060000, "generic/003");
	run_model_find(&m, "xfs/4k", "generic/003")->prev = 10;
	/* (50 + 10 + 35) / 2 is less than generic/001's 50 s still to go */
	assert_true(run_model_eta(&m, 1060000) == 50);

	/* shard 1's guest crashes: the test ends so, the stage fails, a new guest boots */
	shard_test_end(&m, 1, "ext4/4k", 1070000, "generic/001", TS_CRASHED, 60);
	ev.type = EV_STAGE_END;
	ev.shard = 1;
	ev.config = "ext4/4k";
	ev.u.stage.stage = "tests";
	ev.u.stage.code = ERR_CHILD;
	ev.u.stage.message = "the guest crashed";
	emit(&m, &ev);
	assert_int_equal(m.shards[0].state, RMS_FAILED);
	assert_int_equal(m.shards[0].crashes, 1);
	assert_string_equal(m.messages.v[m.messages.n - 1], "error: shard 1: the guest crashed");
	assert_int_equal(m.counts.crashed, 1);
	/* a failed guest takes no more tests: the rest is on one */
	assert_true(run_model_eta(&m, 1070000) > 34.9 && run_model_eta(&m, 1070000) < 35.1);
	shard_event(&m, EV_STAGE_BEGIN, 1, "ext4/4k", 1071000, "boot");
	assert_int_equal(m.shards[0].boots, 2);
	assert_int_equal(m.shards[0].state, RMS_BOOTING);
	shard_event(&m, EV_TEST_START, 1, "ext4/4k", 1080000, "generic/004");
	assert_int_equal(m.running, run_model_find(&m, "ext4/4k", "generic/004") - m.tests);

	/* stopped: nothing is left running */
	ev.type = EV_RUN_END;
	ev.wall_ms = 1090000;
	ev.u.end.interrupted = true;
	emit(&m, &ev);
	assert_int_equal(run_model_find(&m, "ext4/4k", "generic/004")->state, RM_STOPPED);
	assert_int_equal(run_model_find(&m, "xfs/4k", "generic/003")->state, RM_STOPPED);
	assert_int_equal(m.shards[0].state, RMS_DONE);
	assert_int_equal(m.shards[0].test, -1);
	assert_int_equal(m.shards[1].test, -1);
	assert_int_equal(m.running, -1);
	run_model_release(&m);

	/* a run of one guest has no shards */
	run_model_init(&m);
	ev.type = EV_RUN_BEGIN;
	ev.u.run.shards = 1;
	emit(&m, &ev);
	shard_event(&m, EV_STAGE_BEGIN, 0, "ext4/4k", 1001000, "boot");
	assert_false(run_model_sharded(&m));
	assert_int_equal(m.nshards, 0);
	assert_int_equal(m.nstages, 1);
	run_model_release(&m);
}

/* A stage ended by ERR_PREEMPTED on shard (0: a run of one guest). */
static void
preempt(struct run_model *m, unsigned shard)
{
	struct event ev = { .type = EV_STAGE_END, .shard = shard, .config = "ext4/4k" };

	ev.u.stage.stage = "tests";
	ev.u.stage.code = ERR_PREEMPTED;
	ev.u.stage.message = "Compute Engine preempted the instance fswb-1";
	run_model_event(m, &ev);
}

/*
 * A guest taken away by its provider (a spot instance): no crash, no error;
 * its test waits again, and runs on the next guest.
 */
static void
test_model_preempted(void **state)
{
	struct run_model m;
	struct event ev = { 0 };
	size_t said;

	(void)state;
	run_model_init(&m);
	ev.type = EV_RUN_BEGIN;
	ev.u.run.shards = 2;
	emit(&m, &ev);
	shard_event(&m, EV_STAGE_BEGIN, 1, "ext4/4k", 1000, "tests");
	shard_event(&m, EV_TEST_START, 1, "ext4/4k", 2000, "generic/010");
	said = m.messages.n;
	preempt(&m, 1);
	assert_int_equal(run_model_find(&m, "ext4/4k", "generic/010")->state, RM_PENDING);
	assert_int_equal(m.shards[0].state, RMS_IDLE);
	assert_int_equal(m.shards[0].test, -1);
	assert_int_equal(m.shards[0].crashes, 0);
	assert_int_equal(m.messages.n, said); /* the engine's warning says it */
	shard_event(&m, EV_TEST_START, 2, "ext4/4k", 3000, "generic/010");
	assert_int_equal(run_model_find(&m, "ext4/4k", "generic/010")->state, RM_RUNNING);
	assert_int_equal(run_model_find(&m, "ext4/4k", "generic/010")->shard, 2);
	run_model_release(&m);

	/* one guest: the run's tests stage goes on with the next guest */
	run_model_init(&m);
	shard_event(&m, EV_STAGE_BEGIN, 0, "ext4/4k", 1000, "tests");
	shard_event(&m, EV_TEST_START, 0, "ext4/4k", 2000, "generic/010");
	said = m.messages.n;
	preempt(&m, 0);
	assert_int_equal(run_model_find(&m, "ext4/4k", "generic/010")->state, RM_PENDING);
	assert_int_equal(m.running, -1);
	assert_int_equal(m.messages.n, said);
	assert_int_equal(m.stages[0].state, RM_STAGE_RUNNING);
	run_model_release(&m);

	/* no room for a shard's machine (a quota): it is idle, the run goes on, no error */
	run_model_init(&m);
	ev.type = EV_RUN_BEGIN;
	ev.u.run.shards = 2;
	emit(&m, &ev);
	shard_event(&m, EV_STAGE_BEGIN, 2, "ext4/4k", 1000, "boot");
	said = m.messages.n;
	{
		struct event end = { .type = EV_STAGE_END, .shard = 2, .config = "ext4/4k" };

		end.u.stage.stage = "boot";
		end.u.stage.code = ERR_NOROOM;
		end.u.stage.message = "no room: the run goes on with 1 machine instead of 2";
		run_model_event(&m, &end);
	}
	assert_int_equal(m.shards[1].state, RMS_IDLE);
	assert_int_equal(m.messages.n, said);
	run_model_release(&m);
}

/* A recorded run (tests/ui/fixtures) replayed through a bus into the model. */
static void
test_model_replay(void **state)
{
	char *path = test_path("tests/ui/fixtures/runs/20261203-170239/events.jsonl");
	struct event_bus bus = EVENT_BUS_INIT;
	struct run_model m;
	unsigned skipped = 0;
	struct rm_test *t;
	size_t markers = 0;

	run_model_init(&m);
	event_bus_add(&bus, run_model_listener(&m));
	assert_int_equal(event_replay_file(path, &bus, &skipped), OK);
	assert_int_equal(skipped, 0);
	assert_string_equal(m.id, "20261203-170239");
	assert_int_equal(m.ntests, 5);
	assert_int_equal(m.done, 5);
	assert_int_equal(m.counts.passed, 2);
	assert_int_equal(m.counts.failed, 2);
	assert_int_equal(m.counts.notrun, 1);
	assert_true(m.ended);
	assert_int_equal(m.exit_code, 1);
	assert_int_equal(m.nstages, 5);
	t = run_model_find(&m, "ext4/4k", "generic/006");
	assert_non_null(t);
	assert_int_equal(t->status, TS_FAIL);
	assert_true(t->reasons & FAIL_MISMATCH);
	assert_non_null(strstr(t->detail, "+size 4096"));
	t = run_model_find(&m, "ext4/4k", "generic/008");
	assert_true(t->bad_lines >= 1);
	for (size_t i = 0; i < m.log.n; i++)
		if (logring_get(&m.log, i)->flags & KMSG_MARKER)
			markers++;
	assert_int_equal(markers, 5);
	event_bus_release(&bus);
	run_model_release(&m);
	free(path);

	/* a run on two guests (the screens' fixture): each test keeps its guest */
	path = test_path("tests/ui/fixtures/sharded/20261205-101500/events.jsonl");
	run_model_init(&m);
	event_bus_add(&bus, run_model_listener(&m));
	assert_int_equal(event_replay_file(path, &bus, &skipped), OK);
	assert_int_equal(skipped, 0);
	assert_int_equal(m.nshards, 2);
	assert_int_equal(m.ntests, 9);
	assert_int_equal(m.done, 9);
	assert_int_equal(m.nstages, 2);
	assert_int_equal(run_model_find(&m, "xfs/4k", "generic/004")->shard, 2);
	t = run_model_find(&m, "ext4/4k", "generic/008");
	assert_int_equal(t->shard, 1);
	assert_int_equal(t->status, TS_CRASHED);
	assert_int_equal(t->bad_lines, 2);
	assert_int_equal(m.shards[0].boots, 2);
	assert_int_equal(m.shards[0].crashes, 1);
	assert_int_equal(m.shards[1].done, 5);
	assert_string_equal(m.shards[1].config, "ext4/4k");
	for (size_t i = 0; i < m.log.n; i++)
		assert_true(logring_get(&m.log, i)->shard == 1 ||
			    logring_get(&m.log, i)->shard == 2);
	event_bus_release(&bus);
	run_model_release(&m);
	free(path);
}

static void
diff_is(const char *a, const char *b, const char *want, size_t want_changes)
{
	struct strvec out = STRVEC_INIT;
	char *got;

	assert_int_equal(diff_unified(a, b, "a", "b", 3, &out), want_changes);
	got = strvec_join(&out, "\n");
	assert_string_equal(got, want);
	free(got);
	strvec_clear(&out);
}

static void
test_diff(void **state)
{
	diff_is("x\ny\n", "x\ny\n", "", 0);
	diff_is("QA output created by 006\nsize 8192\nSilence is golden\n",
		"QA output created by 006\nsize 4096\nSilence is golden\n",
		"--- a\n+++ b\n@@ -1,3 +1,3 @@\n QA output created by 006\n-size 8192\n+size "
		"4096\n Silence is golden",
		2);
	diff_is("", "new\n", "--- a\n+++ b\n@@ -0,0 +1,1 @@\n+new", 1);
	diff_is("old\n", "", "--- a\n+++ b\n@@ -1,1 +0,0 @@\n-old", 1);
	/* two changes far apart are two hunks */
	diff_is("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n", "1\nX\n3\n4\n5\n6\n7\n8\n9\n10\nY\n12\n",
		"--- a\n+++ b\n@@ -1,5 +1,5 @@\n 1\n-2\n+X\n 3\n 4\n 5\n@@ -8,5 +8,5 @@\n 8\n 9\n "
		"10\n-11\n+Y\n 12",
		4);
}

static void
test_diff_big(void **state)
{
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;
	struct strvec out = STRVEC_INIT;
	size_t n;

	for (int i = 0; i < 5000; i++) {
		strbuf_addf(&a, "line %d\n", i);
		strbuf_addf(&b, "line %d\n", i % 100 == 1 ? -i : i);
	}
	n = diff_unified(a.buf, b.buf, "a", "b", 3, &out);
	assert_int_equal(n, 100);
	assert_int_equal(out.n, 2 + 7 + 49 * 9);
	strvec_clear(&out);
	strbuf_release(&a);
	strbuf_release(&b);
}

static void
cmdline_is(struct plan *p, const char *want)
{
	struct strbuf sb = STRBUF_INIT;

	plan_cmdline(p, &sb);
	assert_string_equal(sb.buf, want);
	strbuf_release(&sb);
}

static void
test_cmdline(void **state)
{
	struct plan p;

	plan_init(&p);
	plan_defaults(&p);
	cmdline_is(&p, "fswb run");
	strvec_push(&p.configs, "xfs/1k");
	p.kernel.kind = KERNEL_INSTALLED;
	p.kernel.spec = xstrdup("6.1.0-57-cloud-amd64");
	free(p.tests.preset);
	p.tests.preset = xstrdup("quick");
	strvec_push(&p.tests.xgroups, "dangerous");
	strvec_push(&p.tests.exclude, "generic/475");
	p.cpus = 4;
	p.mem = 3ull << 29;
	p.fstests_src = xstrdup("/src/xfs tests");
	cmdline_is(&p, "fswb run -c ext4/4k,xfs/1k --preset quick -x dangerous -e generic/475 "
		       "--kernel 6.1.0-57-cloud-amd64 --fstests-src '/src/xfs tests' --cpus 4 "
		       "--mem 1536M");
	free(p.tests.preset);
	p.tests.preset = NULL;
	strvec_push(&p.tests.tests, "generic/001");
	cmdline_is(&p, "fswb run -c ext4/4k,xfs/1k -x dangerous -e generic/475 --kernel "
		       "6.1.0-57-cloud-amd64 --fstests-src '/src/xfs tests' --cpus 4 --mem 1536M "
		       "generic/001");
	plan_release(&p);
}

/*
 * The shell stage: a check run by hand in the shell writes its markers to
 * the kernel log; they make no test of the run, and the lines are no
 * test's.
 */
static void
test_model_shell(void **state)
{
	struct run_model m;
	struct event ev = { 0 };

	run_model_init(&m);
	run_model_add_pending(&m, "ext4/4k", "generic/001", -1);
	ev.type = EV_RUN_BEGIN;
	ev.u.run.id = "r";
	emit(&m, &ev);
	ev.type = EV_TEST_START;
	ev.config = "ext4/4k";
	ev.u.test_start.test = "generic/001";
	ev.u.test_start.prev_seconds = -1;
	emit(&m, &ev);
	ev.type = EV_TEST_END;
	ev.config = "ext4/4k";
	ev.u.test_end.test = "generic/001";
	ev.u.test_end.status = TS_PASS;
	ev.u.test_end.seconds = 3;
	emit(&m, &ev);
	ev.type = EV_STAGE_BEGIN;
	ev.u.stage.stage = "shell";
	emit(&m, &ev);
	assert_true(m.in_shell);
	ev.type = EV_KMSG;
	ev.config = "ext4/4k";
	ev.u.line.text = "[ 90.0] run fstests generic/002 at 2026-12-03 08:03:27";
	ev.u.line.flags = KMSG_MARKER;
	ev.u.line.test = "generic/002";
	emit(&m, &ev);
	ev.type = EV_KMSG;
	ev.config = "ext4/4k";
	ev.u.line.text = "[ 91.0] run fstests generic/001 at 2026-12-03 08:03:30";
	ev.u.line.flags = KMSG_MARKER;
	ev.u.line.test = "generic/001";
	emit(&m, &ev);
	assert_int_equal(m.ntests, 1);
	assert_null(run_model_find(&m, "ext4/4k", "generic/002"));
	assert_int_equal(m.log.n, 2);
	assert_int_equal(logring_get(&m.log, 0)->test, -1);
	assert_int_equal(logring_get(&m.log, 1)->test, -1);
	ev.type = EV_STAGE_END;
	ev.u.stage.stage = "shell";
	emit(&m, &ev);
	assert_false(m.in_shell);
	ev.type = EV_RUN_END;
	ev.u.end.counts.ran = ev.u.end.counts.passed = 1;
	emit(&m, &ev);
	assert_int_equal(m.ntests, 1);
	assert_null(run_model_failure(&m));
	run_model_release(&m);
}

/* A run that failed before its first test says why; a stopped one does not. */
static void
test_model_failure(void **state)
{
	struct run_model m;
	struct event ev = { 0 };

	for (int stop = 0; stop < 2; stop++) {
		run_model_init(&m);
		run_model_add_pending(&m, "ext4/4k", "generic/001", -1);
		ev.type = EV_RUN_BEGIN;
		emit(&m, &ev);
		ev.type = EV_STAGE_BEGIN;
		ev.u.stage.stage = "kernel";
		emit(&m, &ev);
		ev.type = EV_STAGE_END;
		ev.u.stage.stage = "kernel";
		ev.u.stage.code = OK;
		emit(&m, &ev);
		ev.type = EV_STAGE_BEGIN;
		ev.u.stage.stage = "appliance";
		emit(&m, &ev);
		assert_null(run_model_failure(&m));
		ev.type = EV_STAGE_END;
		ev.u.stage.stage = "appliance";
		ev.u.stage.code = ERR_CHILD;
		ev.u.stage.message = "debootstrap failed: see appliance.log";
		emit(&m, &ev);
		ev.type = EV_ERROR;
		ev.u.error.code = ERR_CHILD;
		ev.u.error.message = "nothing could run";
		emit(&m, &ev);
		ev.type = EV_RUN_END;
		ev.u.end.exit_code = 2;
		ev.u.end.interrupted = stop;
		emit(&m, &ev);
		if (stop)
			assert_null(run_model_failure(&m));
		else
			assert_string_equal(run_model_failure(&m),
					    "debootstrap failed: see appliance.log");
		run_model_release(&m);
	}
	/* no stage failed: the last error */
	run_model_init(&m);
	ev.type = EV_RUN_BEGIN;
	emit(&m, &ev);
	ev.type = EV_ERROR;
	ev.u.error.message = "cannot make the run directory";
	emit(&m, &ev);
	ev.type = EV_RUN_END;
	ev.u.end.exit_code = 2;
	emit(&m, &ev);
	assert_string_equal(run_model_failure(&m), "cannot make the run directory");
	run_model_release(&m);
}

/* A stop: the running test is interrupted after its time, the tests never started are listed. */
static void
test_model_stopped(void **state)
{
	static const char *const unreached[] = { "generic/003", NULL };
	static const char *const unreached_cfg[] = { "ext4/4k", NULL };
	struct run_model m;
	struct event ev = { 0 };

	run_model_init(&m);
	ev.type = EV_RUN_BEGIN;
	ev.wall_ms = 1000000;
	emit(&m, &ev);
	ev.type = EV_TEST_START;
	ev.wall_ms = 1000000;
	ev.config = "ext4/4k";
	ev.u.test_start.test = "generic/002";
	emit(&m, &ev);
	ev.type = EV_RUN_END;
	ev.wall_ms = 1000000 + 90000;
	ev.u.end.interrupted = true;
	ev.u.end.exit_code = EXIT_STOPPED;
	ev.u.end.unreached = unreached;
	ev.u.end.unreached_config = unreached_cfg;
	emit(&m, &ev);
	assert_int_equal(m.ntests, 2);
	assert_int_equal(m.tests[0].state, RM_STOPPED);
	assert_true(m.tests[0].seconds == 90);
	assert_string_equal(m.tests[1].name, "generic/003");
	assert_string_equal(m.tests[1].config, "ext4/4k");
	assert_int_equal(m.tests[1].state, RM_UNREACHED);
	assert_int_equal(m.exit_code, EXIT_STOPPED);
	run_model_release(&m);
}

/*
 * A test check leaves out as excluded ([expunged]) is listed, and not one
 * of the tests to run: the count stays what the review said.
 */
static void
test_model_expunged(void **state)
{
	static const char *const names[] = { "generic/001", "generic/002", "generic/003" };
	struct run_model m;
	struct event ev = { 0 };

	(void)state;
	run_model_init(&m);
	run_model_add_pending(&m, "ext4/4k", "generic/001", -1);
	run_model_add_pending(&m, "ext4/4k", "generic/003", -1);
	ev.type = EV_RUN_BEGIN;
	ev.u.run.total_tests = 2;
	emit(&m, &ev);
	for (size_t k = 0; k < ARRAY_SIZE(names); k++) {
		ev.type = EV_TEST_END;
		ev.config = "ext4/4k";
		ev.u.test_end.test = names[k];
		ev.u.test_end.status = k == 1 ? TS_EXPUNGED : TS_PASS;
		emit(&m, &ev);
		assert_int_equal(run_model_total(&m), 2);
	}
	assert_int_equal(m.ntests, 3);
	assert_int_equal(m.done, 2);
	assert_int_equal(run_model_to_go(&m), 0);
	assert_int_equal(m.counts.expunged, 1);
	run_model_release(&m);
}

/*
 * Live and replayed, the list is in one order: by configuration as the run
 * took them, then by name, however the tests started (longest first).
 */
static void
test_model_order(void **state)
{
	static const char *const started[][2] = {
		{ "ext4/4k", "generic/013" }, { "xfs/4k", "generic/002" },
		{ "ext4/4k", "generic/001" }, { "ext4/4k", "ext4/001" },
		{ "xfs/4k", "generic/001" },
	};
	static const size_t want[] = { 3, 2, 0, 4, 1 };
	struct run_model m;
	struct event ev = { 0 };
	size_t order[ARRAY_SIZE(started)];

	(void)state;
	run_model_init(&m);
	for (size_t k = 0; k < ARRAY_SIZE(started); k++) {
		ev.type = EV_TEST_START;
		ev.config = started[k][0];
		ev.u.test_start.test = started[k][1];
		emit(&m, &ev);
	}
	run_model_order(&m, order);
	for (size_t k = 0; k < ARRAY_SIZE(want); k++)
		assert_int_equal(order[k], want[k]);
	run_model_release(&m);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_logring_bounds),
		cmocka_unit_test(test_model_events),
		cmocka_unit_test(test_model_many),
		cmocka_unit_test(test_model_estimates),
		cmocka_unit_test(test_model_replay),
		cmocka_unit_test(test_model_shards),
		cmocka_unit_test(test_model_preempted),
		cmocka_unit_test(test_model_stopped),
		cmocka_unit_test(test_model_shell),
		cmocka_unit_test(test_model_failure),
		cmocka_unit_test(test_diff),
		cmocka_unit_test(test_diff_big),
		cmocka_unit_test(test_cmdline),
		cmocka_unit_test(test_model_expunged),
		cmocka_unit_test(test_model_order),
	};

	return cmocka_run_group_tests(tests, test_setup_hermetic, test_teardown_hermetic);
}
