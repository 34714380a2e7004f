/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Events: what the run engine tells the world.
 *
 * Producers (the engine, the fstests parser, kbuild, rootfs, backends) emit
 * events to a bus; listeners (the UI, the headless printer, the results
 * writer) receive them in the order emitted, synchronously, on the loop's
 * thread. Listeners never call back into producers; they may keep copies of
 * what they need (every pointer in an event is valid only during the call).
 *
 * The sequence of one run:
 *	RUN_BEGIN
 *	  (STAGE_BEGIN STAGE_PROGRESS* STAGE_END)*           kernel, appliance, boot
 *	  ( SECTION?                                         one per config/section
 *	    (TEST_START (KMSG | CONSOLE)* TEST_END)*
 *	    SUMMARY )*
 *	  KMSG, CONSOLE, WARNING and ERROR may come at any point
 *	RUN_END
 * A test that never finished (crash, hang, interrupt) still gets a TEST_END
 * with status crashed or hung, or no TEST_END when the run was interrupted;
 * RUN_END always comes.
 */
#ifndef FSWB_CORE_EVENT_H
#define FSWB_CORE_EVENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

enum event_type {
	EV_RUN_BEGIN,
	EV_STAGE_BEGIN,
	EV_STAGE_PROGRESS,
	EV_STAGE_END,
	EV_SECTION,
	EV_TEST_START,
	EV_TEST_END,
	EV_KMSG,
	EV_CONSOLE,
	EV_SUMMARY,
	EV_WARNING,
	EV_ERROR,
	EV_RUN_END,
	EV_TYPE_COUNT
};

/* The outcome of one test. The names are what run.json and --json use. */
#define TEST_STATUS_LIST(X)        \
	X(TS_PASS, "pass")         \
	X(TS_FAIL, "fail")         \
	X(TS_NOTRUN, "notrun")     \
	X(TS_EXPUNGED, "expunged") \
	X(TS_CRASHED, "crashed")   \
	X(TS_HUNG, "hung")

enum test_status {
#define TS_ENUM(e, s) e,
	TEST_STATUS_LIST(TS_ENUM)
#undef TS_ENUM
		TS_COUNT
};

const char *test_status_str(enum test_status st);
/* ERR_INVALID for an unknown name. */
enum status test_status_parse(const char *name, enum test_status *st);

/* Why a test failed; check can give several at once. */
#define FAIL_REASON_LIST(X)                                                \
	X(FAIL_MISMATCH, "mismatch", "output mismatch")                    \
	X(FAIL_FSCK, "fsck", "filesystem inconsistent")                    \
	X(FAIL_DMESG, "dmesg", "something found in dmesg")                 \
	X(FAIL_EXIT, "exit", "failed exit status")                         \
	X(FAIL_CORE, "core", "dumped core")                                \
	X(FAIL_KMEMLEAK, "kmemleak", "kmemleak found leaks")               \
	X(FAIL_NO_QUALIFIED, "no-qualified-output", "no qualified output") \
	X(FAIL_NO_SUCH_TEST, "no-such-test", "no such test")               \
	X(FAIL_OTHER, "other", "failed")

enum fail_reason_bit {
#define FR_BIT(e, k, s) e##_BIT,
	FAIL_REASON_LIST(FR_BIT)
#undef FR_BIT
		FAIL_REASON_COUNT
};
enum fail_reason {
#define FR_FLAG(e, k, s) e = 1u << e##_BIT,
	FAIL_REASON_LIST(FR_FLAG)
#undef FR_FLAG
};

/* The key ("mismatch") and the words ("output mismatch") of one bit. */
const char *fail_reason_key(enum fail_reason_bit bit);
const char *fail_reason_str(enum fail_reason_bit bit);

/* Flags on a kernel-log line, as check's _check_dmesg would see it. */
enum kmsg_flag {
	KMSG_MARKER = 1u << 0,	  /* check's "run fstests <test> at <date>" */
	KMSG_WARNING = 1u << 1,	  /* WARNING: */
	KMSG_BUG = 1u << 2,	  /* BUG:, kernel BUG at */
	KMSG_OOPS = 1u << 3,	  /* Oops:, general protection fault */
	KMSG_LOCKDEP = 1u << 4,	  /* possible recursive locking, circular locking, suspicious RCU */
	KMSG_PANIC = 1u << 5,	  /* Kernel panic */
	KMSG_OTHER_BAD = 1u << 6, /* oom-kill, UBSAN:, hung task ... */
};
/* A CONSOLE line that check printed (check -n's list), not the agent's own words. */
#define CONSOLE_CHECK 1u

#define KMSG_BAD (KMSG_WARNING | KMSG_BUG | KMSG_OOPS | KMSG_LOCKDEP | KMSG_PANIC | KMSG_OTHER_BAD)

/* fswb's exit status when the user stopped the run (Ctrl-C), as a shell gives SIGINT's. */
#define EXIT_STOPPED 130

/* Test counts, as in check's summary and fswb's per-config line. */
struct test_counts {
	unsigned ran; /* check's "Ran:" count: tests that ran (pass + fail) */
	unsigned passed;
	unsigned failed;
	unsigned notrun;
	unsigned expunged;
	unsigned crashed;
	unsigned hung;
	double seconds; /* total test time */
};

struct event {
	enum event_type type;
	uint64_t wall_ms;   /* wall-clock time (ms since the epoch) when emitted */
	const char *config; /* the config or section this is about; may be NULL */
	/* The shard (guest) it comes from, 1..N in a run of several guests at
	 * once (plan.shards); 0 in a run of one guest at a time. */
	unsigned shard;
	union {
		struct {
			const char *id;		 /* the run's id */
			unsigned total_tests;	 /* expected tests, 0 when not known yet */
			double expected_seconds; /* the whole run's estimate; 0 when unknown */
			unsigned shards;	 /* guests at once; 0 or 1: one at a time */
			const char *shards_why;	 /* how that count was chosen; may be NULL */
			const char *backend;	 /* where it runs ("qemu", "ssh"); may be NULL */
		} run;
		struct {
			const char *stage;  /* "kernel", "appliance", "boot", "tests", "results" */
			const char *detail; /* human words: "building fstests", may be NULL */
			double fraction;    /* 0..1, or < 0 when unknown */
			enum status code;   /* STAGE_END: OK or the failure (message below) */
			const char *message;
		} stage;
		struct {
			const char *name; /* section name */
			const char *fstyp, *platform, *mkfs_options, *mount_options;
			bool recreating; /* check said RECREATING */
		} section;
		struct {
			const char *test;    /* "generic/001" */
			double prev_seconds; /* from check.time; < 0 when unknown */
			unsigned rerun;	     /* 0 for the first run, n for -L rerun n */
			/* fswb's estimate (fstests/estimate.h); 0 when unknown */
			double expected_seconds;
			const char *expected_from; /* what it rests on; may be NULL */
		} test_start;
		struct {
			const char *test;
			enum test_status status;
			double seconds;	  /* < 0 when unknown */
			unsigned reasons; /* enum fail_reason flags, for fail/crashed */
			const char *
				reason; /* not-run reason, failure words, crash cause; may be NULL */
			const char *detail; /* the diff lines, the console tail...; may be NULL */
			const char *
				hints; /* check's hints after a failure (TEST.hints); may be NULL */
			unsigned rerun; /* 0 for the first run, n for -L rerun n */
		} test_end;
		struct {
			const char *text; /* one line, no newline */
			unsigned
				flags; /* enum kmsg_flag for KMSG; CONSOLE_CHECK or 0 for CONSOLE */
			const char *test; /* the test running when it came, or NULL */
		} line;
		struct {
			struct test_counts counts;
			bool interrupted;
			const char *failed_tests; /* space-separated, may be NULL */
			const char *notrun_tests;
			const char *ran_tests; /* check's "Ran:" list, may be NULL */
		} summary;
		struct {
			enum status code;
			const char *message;
		} error; /* also WARNING, with code OK */
		struct {
			/* 0 all passed, 1 a test failed, 2 nothing could run,
			 * EXIT_STOPPED the user stopped it */
			int exit_code;
			bool interrupted;
			struct test_counts counts;
			/* the tests the run would have run and never started, each
			 * with its configuration: NULL-terminated lists; may be NULL */
			const char *const *unreached;
			const char *const *unreached_config;
		} end;
	} u;
};

/* The event's name: "run_begin", "test_end", ... (also its "event" in JSON). */
const char *event_type_str(enum event_type type);

/* A listener gets every event emitted on the bus it is added to. */
struct listener {
	void (*on_event)(void *data, const struct event *ev);
	void *data;
};

struct event_bus {
	struct listener *listeners;
	size_t n, alloc;
};

#define EVENT_BUS_INIT \
	{              \
		0      \
	}
void event_bus_add(struct event_bus *bus, struct listener l);
void event_bus_release(struct event_bus *bus);
/* Stamps ev->wall_ms when it is 0, then calls every listener in order. */
void event_emit(struct event_bus *bus, struct event *ev);

/* Convenience emitters. */
void emit_stage(struct event_bus *bus, enum event_type type, const char *stage, const char *detail,
		double fraction);
void emit_warning(struct event_bus *bus, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void emit_error(struct event_bus *bus, enum status code, const char *message);

/* Add a finished test to counts. */
void test_counts_add(struct test_counts *c, enum test_status st, double seconds);

#endif
