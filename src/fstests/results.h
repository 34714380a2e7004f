/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Results: the record of a run, and every form it is kept or found in.
 *
 *	struct run_record	what ran, per config/section, per test (results.c)
 *	run.json		fswb's own file of it (schema below; run_json.c)
 *	junit.xml		the same as an xunit report that validates against
 *				fstests' doc/xunit.xsd, shaped like check's result.xml
 *				(junit.c)
 *	result.xml		read: check's xunit report (-R xunit; xunit.c)
 *	check.log, check.time	read: check's running log and its test times
 *				(check_log.c)
 *	results_writer		a listener that builds the record from events and
 *				rewrites run.json after every test (results_writer.c)
 *	results_import()	a record from a results directory or check's stdout
 *				(results_import.c)
 *
 * run.json (version 1), written atomically (write_file_atomic):
 *
 *	{
 *	  "version": 1,
 *	  "id": "...",                        the run's id, or null
 *	  "start": "2026-12-03T07:51:54.000Z", "end": ...,   UTC, or null
 *	  "kernel": "6.1.0-57-cloud-amd64", "hostname": "...",   or null
 *	  "finished": true,      the record is complete (RUN_END seen, or imported)
 *	  "interrupted": false,  the run did not come to its end
 *	  "stopped_at": null,    the test it stopped in, when one was cut off
 *	  "exit_code": 0,        check's (0 passed, 1 failed, 2 nothing ran), or null
 *	  "error": null,         the last error message of the run
 *	  "counts": { "ran": 5, "passed": 3, "failed": 0, "notrun": 2, "expunged": 0,
 *	              "crashed": 0, "hung": 0, "seconds": 18 },
 *	  "sections": [
 *	    { "name": "ext4_4k",          check's section name, null without sections
 *	      "config": "ext4/4k",        the configuration, or null
 *	      "fstyp": "ext4", "mkfs_options": "-F /dev/vdc", "mount_options": "...",
 *	      "interrupted": false, "stopped_at": null,
 *	      "counts": { ... },
 *	      "properties": { "KERNEL": "..." },     result.xml's, may be absent
 *	      "tests": [
 *	        { "test": "generic/002",
 *	          "status": "fail",                  pass fail notrun expunged crashed hung
 *	          "seconds": 10,                     or null when unknown
 *	          "reason": "- output mismatch (see ...)",   or null
 *	          "reasons": [ "mismatch" ],         fail_reason keys (event.h)
 *	          "detail": "--- tests/generic/002.out ...",  or null
 *	          "hints": "HINT: You _MAY_ be missing kernel fix:\n      939b656bc8ab ...",
 *	                                             or null
 *	          "reruns": 2,                       -L/-i runs after the first
 *	          "iterations": [ { "status": "fail", "seconds": 3 }, ... ],
 *	                                             every run, when there are reruns
 *	          "artifacts": { "out_bad": "...", "full": "...", "dmesg": "...",
 *	                         "kmsg": "..." } }   each may be absent
 *	      ] } ] }
 *
 * `fswb run` adds "baseline" after the run when a baseline matches it: its
 * regressions and expected failures (fstests/baseline.h has the schema).
 * This file's reader ignores it and the writer does not write it.
 *
 * Reading checks types and names the field in its message
 * ("run.json: sections[0].tests[3].status: unknown status 'passed'"); fields
 * it does not know are ignored; counts are recomputed from the tests.
 *
 * A test appears once per section. A test check ran again (-L after a
 * failure, -i iterations) keeps the status of its first run unless a later
 * one failed, and counts the others in reruns.
 *
 * Ownership: every string in the record is owned by it; run_record_release()
 * frees everything and leaves it empty (run_record_init() state).
 */
#ifndef FSWB_FSTESTS_RESULTS_H
#define FSWB_FSTESTS_RESULTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/event.h"
#include "core/status.h"
#include "core/util.h"

#define RUN_JSON_VERSION 1
/* Bytes of a test's .full, .dmesg or kernel log put in junit.xml. */
#define RESULTS_JUNIT_LOG_MAX (1u << 20)

/* One run of a test that check ran more than once (-L after a failure, -i). */
struct test_iteration {
	enum test_status status;
	double seconds; /* < 0 when unknown */
};

struct test_result {
	char *test; /* "generic/001" */
	enum test_status status;
	double seconds;	  /* < 0 when unknown */
	unsigned reasons; /* enum fail_reason */
	char *reason;	  /* not-run reason, failure words; may be NULL */
	char *detail;	  /* the diff and what else check printed; may be NULL */
	char *hints;	  /* check's hints after a failure (TEST.hints); may be NULL */
	unsigned reruns;
	unsigned
		shard; /* the guest that ran it in a run of several at once (1..N); 0: not sharded */
	/*
	 * Every run of the test in order, the first one included, when it ran
	 * more than once (none in a run.json written before they were kept).
	 */
	struct test_iteration *iterations;
	size_t niterations, alloc_iterations;
	/* artifact paths; NULL when there is none */
	char *out_bad, *full, *dmesg, *kmsg;
};

struct test_stop {
	char *test;
	double seconds; /* it had run when the run stopped; < 0 when unknown */
};

struct section_result {
	char *name;   /* check's section name; NULL without sections */
	char *config; /* the configuration; may be NULL */
	char *fstyp, *mkfs_options, *mount_options; /* may be NULL */
	struct strvec properties;		    /* "NAME=value", from result.xml */
	struct test_result *tests;		    /* in the order they ran */
	size_t ntests, alloc;
	struct test_counts counts;
	bool interrupted;
	char *stopped_at; /* the test it was cut off in, or NULL */
	/* A stopped run (Ctrl-C): the tests it cut off, with how long each had run. */
	struct test_stop *stopped;
	size_t nstopped;
	struct strvec unreached; /* the tests it would have run and never started */
};

struct run_record {
	char *id;
	uint64_t start_ms, end_ms; /* ms since the epoch, 0 when unknown */
	char *kernel, *hostname;
	struct section_result *sections;
	size_t nsections, alloc;
	struct test_counts counts;
	bool finished, interrupted;
	char *stopped_at;
	int exit_code; /* -1 when unknown */
	char *error;
	unsigned shards; /* guests at once (plan.shards); 0 or 1: one at a time */
	char *backend;	 /* where it ran ("qemu", "ssh"), or NULL (an import, an older run) */
};

/*
 * A test's seconds from a test machine or an imported file: finite, from 0
 * to RESULTS_SECONDS_MAX (115 days); anything else is refused with the file
 * and the field.
 */
#define RESULTS_SECONDS_MAX 10000000.0
bool results_seconds_ok(double seconds);

void run_record_init(struct run_record *rec);
void run_record_release(struct run_record *rec);

/*
 * The section with this name (NULL for the unnamed one), added at the end
 * when there is none. config is stored when the section has none yet.
 */
struct section_result *run_record_section(struct run_record *rec, const char *name,
					  const char *config);
/* A test of a section, or NULL. */
struct test_result *section_find_test(struct section_result *sec, const char *test);
/*
 * Record one run of a test: a new entry, or (the test is there already)
 * one more rerun of it, failing it when this run failed. The strings are
 * copied. Returns the entry.
 */
/* A test a stopped run cut off after seconds (< 0: unknown). */
void section_add_stop(struct section_result *sec, const char *test, double seconds);
struct test_result *section_add_test(struct section_result *sec, const char *test,
				     enum test_status status, double seconds, unsigned reasons,
				     const char *reason, const char *detail, const char *hints);
/*
 * How many runs of a test passed and failed (fail, crashed, hung): its
 * iterations when it has them, else its status once.
 */
void test_result_run_counts(const struct test_result *t, unsigned *passed, unsigned *failed);
/* Recompute every section's counts and the run's. */
void run_record_recount(struct run_record *rec);
/*
 * Set the artifact paths of a section's tests from the files in
 * report_dir (check's REPORT_DIR: results/ or results/SECTION/):
 * TEST.out.bad, TEST.full, TEST.dmesg and TEST.kmsg (its kernel-log
 * slice). A not-run test without a reason gets the text of TEST.notrun.
 */
void section_attach_artifacts(struct section_result *sec, const char *report_dir);

/* run.json text (free() it), and back. source names the text in messages. */
char *run_record_to_json(const struct run_record *rec);
enum status run_record_from_json(const char *text, const char *source, struct run_record *out);
enum status run_record_save(const char *path, const struct run_record *rec);
enum status run_record_load(const char *path, struct run_record *out);

/*
 * junit.xml: one <testsuite> per section (inside <testsuites> when there
 * are several), in fstests' namespace so that doc/xunit.xsd validates it;
 * attributes, properties and testcases as check's result.xml has them:
 * classname "xfstests.SECTION" ("xfstests.global" without sections),
 * <skipped message=.../> for a not-run test, <failure message=... type=
 * "TestFail"/> (TestCrash, TestHang) for the others, with the test's .full
 * as <system-out>, its kernel log (kmsg slice, else .dmesg) as <kernel-log>
 * and its detail (the diff) or .out.bad as <system-err>; a test that
 * ran again (-L) gets one more <testcase> per rerun, with its own status
 * and time, as check writes one per iteration. Expunged tests
 * are left out, as check leaves them out. Text that XML cannot hold
 * (control characters, bad UTF-8) becomes '?'.
 */
void results_junit(const struct run_record *rec, struct strbuf *out);
enum status results_write_junit(const char *path, const struct run_record *rec);

/* What results_read_xunit() learned about the document itself. */
struct xunit_info {
	bool complete;	  /* the root element was closed */
	bool partial;	  /* a testsuite had time="": check wrote it before a test */
	size_t testcases; /* complete <testcase> elements */
	char *start_timestamp, *timestamp, *report_timestamp; /* of the last testsuite */
};
void xunit_info_release(struct xunit_info *info);

/*
 * Read check's result.xml (or fswb's junit.xml) into rec: one section per
 * <testsuite>, named by its SECTION property (none for "-no-sections-") or
 * its testcases' classname. libxml2 parses (xunit.c has how it is kept
 * safe); a truncated document gives the testcases that were complete
 * (info->complete false). Errors name source, and the line where there is
 * one: ERR_PARSE when there is no testsuite at all or the XML is not
 * well-formed before its end; ERR_INVALID for a testcase fswb refuses (its
 * name or time), a DOCTYPE, nesting deeper than 64, something larger than
 * libxml2 takes (10 MB in one attribute), or len over 256 MiB. rec may
 * hold part of the document after an error. info may be NULL.
 */
enum status results_read_xunit(const char *text, size_t len, const char *source,
			       struct run_record *rec, struct xunit_info *info);

/* One run's entry in check.log (check appends one per section run). */
struct check_log_block {
	char *kernel;			     /* "Kernel version: X", or NULL */
	char *date;			     /* the date line as written, or NULL */
	uint64_t date_ms;		     /* that date when it is in UTC, else 0 */
	struct strvec ran, notrun, failures; /* "Ran:", "Not run:", "Failures:" */
	bool interrupted;		     /* "Interrupted!" */
	bool passed_all;		     /* "Passed all N tests" */
	int failed, total; /* "Failed N of M tests" / "Passed all M", -1 when absent */
};

struct check_log {
	struct check_log_block *blocks; /* oldest first */
	size_t n, alloc;
};

/* Parse check.log text; lines it does not know are skipped. */
void check_log_parse(const char *text, size_t len, struct check_log *out);
void check_log_release(struct check_log *log);

/* check.time: "TEST SECONDS" lines. */
struct check_time {
	struct strvec tests;
	double *seconds;
	size_t alloc;
};
void check_time_parse(const char *text, size_t len, struct check_time *out);
void check_time_release(struct check_time *ct);
/* Seconds of a test, or -1. */
double check_time_get(const struct check_time *ct, const char *test);

/*
 * A listener that builds a record from events and, when path is not NULL,
 * rewrites run.json there after RUN_BEGIN, SECTION, every TEST_START and
 * TEST_END, and RUN_END, so that a run killed at any point leaves a file
 * that says what ran and the test it was in (stopped_at, finished false).
 *
 *	struct results_writer w;
 *	results_writer_init(&w, "RUNDIR/run.json");
 *	event_bus_add(&bus, results_writer_listener(&w));
 *	... events ...
 *	results_writer_status(&w)      OK, or the first failed write (message kept)
 *	results_writer_release(&w);
 *
 * Sections are keyed by the events' config. TEST_START marks the test as
 * running (stopped_at) until its TEST_END; a TEST_END with rerun > 0 adds
 * a rerun; RUN_END sets end, exit code, interrupted and finished.
 */
struct results_writer {
	struct run_record rec;
	char *path;
	enum status status;
	char *message; /* of the first failed write */
	/* the tests started and not ended: "CONFIG\tTEST", and when they started */
	struct strvec running;
	uint64_t *running_ms;
};

void results_writer_init(struct results_writer *w, const char *path);
void results_writer_release(struct results_writer *w);
struct listener results_writer_listener(struct results_writer *w);
enum status results_writer_status(const struct results_writer *w);
/* Write run.json now (also after the run, to add what was learned). */
enum status results_writer_flush(struct results_writer *w);

/*
 * Build a record from path:
 *	a results directory (result.xml and/or check.log in it, or in one
 *	subdirectory per section; a directory holding results/ also works):
 *	result.xml (or result.xml.new when that is the more complete one) is
 *	preferred; tests it lacks are taken from the last entry of check.log
 *	(its Ran:, Not run: and Failures: lists, with TEST.notrun for reasons
 *	and check.time for seconds), and a test that entry ran last in an
 *	interrupted run with no result anywhere is where the run stopped.
 *	Tests check expunged appear in neither file, so they are not in such
 *	a record. Section directories are taken in name order.
 *	a file of check's stdout: read with the check parser; when a results
 *	directory lies beside it (DIR/results), the artifacts come from there.
 * ERR_NOTFOUND when path is neither, ERR_IO when it cannot be read.
 */
enum status results_import(const char *path, struct run_record *out);

#endif
