/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The streaming parser of fstests' `check` stdout.
 *
 * check prints, per section (a run without sections has one, unnamed):
 *
 *	SECTION       -- ext4_4k                 only with config sections
 *	RECREATING    -- ext4 on /dev/vdb        when TEST_DEV is remade
 *	FSTYP         -- ext4
 *	PLATFORM      -- Linux/x86_64 host 6.1.0 ...
 *	MKFS_OPTIONS  -- -F /dev/vdc             only with a SCRATCH_DEV
 *	MOUNT_OPTIONS -- -o acl /dev/vdc /mnt/scratch
 *	(empty line)
 *	generic/001  3s ...  4s                  name padded, previous time, outcome
 *	...
 *	Ran: generic/001 ...                     the summary
 *	Interrupted!                             after a signal or a fatal error
 *	Not run: ...
 *	Failures: ...
 *	Failed 1 of 5 tests | Passed all 5 tests
 *	Xunit report: /path/result.xml           with -R xunit
 *
 * and, after the last section of a run with sections, a recap of every
 * section ("SECTION -- name", a line of '=', its summary lines).
 *
 * A test line is the name, padded, printed the moment the test starts, then
 * (often minutes later) its outcome: " 4s", "[not run] reason" (with -T the
 * reason comes on the next line as "\tNAME -- reason"), "[expunged]",
 * "- output mismatch (see X.out.bad)" and the diff indented by four spaces,
 * "[failed, exit status N]", "[dumped core]", "_check_generic_filesystem:
 * filesystem on DEV is inconsistent" (and the other _check_*_filesystem
 * words) with "(see X.full for details)", "_check_dmesg: something found in
 * dmesg (see X.dmesg)", "_check_kmemleak: ...", "no qualified output",
 * "- no such test?", an empty line and hints after a failure, "[HH:MM:SS]"
 * stamps with -T. With -L N a failing test is run again at once and a line
 * "NAME aggregate results across N runs: fail=3 (100.0%)" closes the loop.
 *
 * Call sequence (one parser per check process):
 *
 *	p = check_parser_new(bus, config);
 *	check_parser_feed(p, buf, len);     any number of times, any chunk sizes
 *	check_parser_finish(p);             once, at the end of the stream
 *	... check_parser_current_test(p), check_parser_interrupted(p) ...
 *	check_parser_free(p);
 *
 * Events, emitted synchronously from feed() and finish() (the pointers in
 * them are valid only during the call):
 *
 *	SECTION     when a header block is complete (at its empty line, or at the
 *		    first line that is not part of it). name is NULL without
 *		    sections. RECREATING sets recreating.
 *	TEST_START  as soon as the name is certain, usually while the test is
 *		    still running: the name followed by seven blanks (check's
 *		    "no previous time" after its padding), or by " Ns ... "
 *		    (prev_seconds = N), or by " -" (not "- unknown test,
 *		    ignored"), or by a complete line. A name seven or more
 *		    columns shorter than check's padding starts at its seventh
 *		    blank, before a previous time can be seen (no fstests test
 *		    name is that short). The decision never depends on where
 *		    the chunks of input end. rerun counts -L reruns of the test just
 *		    failed: a test line naming the test that just failed (or that
 *		    is in a rerun loop) is its rerun 1, 2, ...; the aggregate line
 *		    ends the loop.
 *	TEST_END    pass, notrun (reason: check's words), expunged: at the end of
 *		    the line that settles them. fail: at the next line that
 *		    check prints for something else (the next test, the summary,
 *		    a header, the aggregate line) or at finish(), because a diff
 *		    and hints may follow. reasons: enum fail_reason bits; reason:
 *		    check's failure words joined with "; " ("failed, exit status
 *		    1; output mismatch (see ...)"); detail: what followed, with
 *		    the diff's four-space indent removed, at most
 *		    CHECK_DETAIL_MAX bytes or CHECK_DETAIL_LINES lines, then
 *		    "... (N more lines)". hints: the test's hints check printed
 *		    after the failure ("HINT: You _MAY_ be missing kernel fix:",
 *		    the commit on the next line; one empty line between two
 *		    hints), not in detail; at most CHECK_REASON_MAX bytes.
 *		    seconds: check's time for a pass, else the -T stamps'
 *		    difference, else < 0. "- no such test?" is a
 *		    fail with FAIL_NO_SUCH_TEST (check itself counts it nowhere).
 *		    A test line that ends with nothing but blanks after the name
 *		    is check -n's listing: notrun, reason "listed by check -n".
 *		    A test whose line ended and for which check went on to
 *		    something else without an outcome is a fail with FAIL_OTHER
 *		    (and a WARNING). Listeners count only rerun == 0 in totals,
 *		    as check does.
 *	SUMMARY     at "Failed N of M tests" / "Passed all N tests". counts.ran
 *		    is tests that ran (check's "Ran:" count less its not-run
 *		    ones), passed = ran - failed, notrun from "Not run:" (or the
 *		    section's not-run TEST_ENDs with -b), expunged and seconds
 *		    from the section's TEST_ENDs. Note that after an interrupt
 *		    check counts the test it was cut off in as run and passed.
 *		    The lists are check's, space-separated. The closing recap of
 *		    a run with sections is passed on as CONSOLE, not SUMMARY.
 *		    Summary lines are taken in check's exact words only ("Ran:",
 *		    "Not run: ", "Failures: ", "Interrupted!", "Failed N of M
 *		    tests", "Passed all N tests"); while a test is running and
 *		    has no outcome yet, only an "Interrupted!" or a "Ran:" list
 *		    that ends with that test (check adds a test to it before
 *		    running it) begins the summary: anything else is the test's
 *		    own output (-d).
 *	CONSOLE     every line that is none of the above (check's preamble,
 *		    mkfs errors, -d test output, garbage), with u.line.test the
 *		    test in progress. Empty lines between blocks are dropped.
 *	WARNING     "NAME - unknown test, ignored", a line longer than
 *		    CHECK_LINE_MAX (cut there, the warning after the line's
 *		    events; the rest up to its newline is dropped), a test that
 *		    check left without an outcome (before its FAIL_OTHER end).
 *
 * The test in progress. A test whose name was printed and for which no
 * outcome came (check killed, the guest crashed or hung, or a SIGINT: then
 * check's summary may follow on the same line) gets no TEST_END.
 * check_parser_current_test() names it, during the run and after finish():
 * the engine records it as crashed, hung or interrupted, as it knows best.
 *
 * Every event's config is check's section name, or the config given to
 * check_parser_new() when check prints no SECTION line (may be NULL).
 *
 * Memory is bounded whatever the input: one line of at most CHECK_LINE_MAX
 * bytes, one test's detail, one header, one summary.
 */
#ifndef FSWB_FSTESTS_CHECK_PARSER_H
#define FSWB_FSTESTS_CHECK_PARSER_H

#include <stdbool.h>
#include <stddef.h>

#include "core/event.h"
#include "core/util.h"

#define CHECK_LINE_MAX	   (256u * 1024) /* longer lines are cut */
#define CHECK_DETAIL_MAX   (256u * 1024) /* bytes of detail kept per test */
#define CHECK_DETAIL_LINES 4000u	 /* lines of detail kept per test */
#define CHECK_REASON_MAX   4096u	 /* bytes of reason text per test */
#define CHECK_NAME_MAX	   255u		 /* longer "names" are not test names */

struct check_parser;

/* bus receives the events; config names events when check prints no SECTION. */
struct check_parser *check_parser_new(struct event_bus *bus, const char *config);
void check_parser_free(struct check_parser *p);

/* Feed the next len bytes of check's stdout. Never fails. */
void check_parser_feed(struct check_parser *p, const char *buf, size_t len);
/* The stream ended: settle what is pending (see above). Call once. */
void check_parser_finish(struct check_parser *p);

/*
 * The test whose name check printed and whose outcome has not come, or NULL;
 * *rerun (may be NULL) gets its -L rerun number. After finish() it is the
 * test check was cut off in.
 */
const char *check_parser_current_test(const struct check_parser *p, unsigned *rerun);
/* check printed "Interrupted!" (a signal, or a fatal error mid-run). */
bool check_parser_interrupted(const struct check_parser *p);
/* SUMMARY events emitted: 0 means check's summary never reached stdout. */
unsigned check_parser_summaries(const struct check_parser *p);
/* The path of the last "Xunit report:" line, or NULL. */
const char *check_parser_xunit(const struct check_parser *p);
/* Lines seen, and lines cut at CHECK_LINE_MAX. */
size_t check_parser_lines(const struct check_parser *p);
size_t check_parser_cut_lines(const struct check_parser *p);

/*
 * One test's outcome, from the text check printed after its name: for an
 * importer of saved check output as much as for the parser above.
 *
 *	struct check_outcome o;
 *	check_outcome_init(&o);
 *	n = check_outcome_scan(&o, text, len);   the rest of the test line
 *	while (more lines about this test && !o.settled)
 *		check_outcome_scan(&o, line, len) or check_outcome_notrun_reason()
 *	check_outcome_status(&o, &st) ...
 *	check_outcome_release(&o);
 */
struct check_outcome {
	bool settled;		 /* nothing more will come for this test */
	bool notrun;		 /* "[not run]" */
	bool expunged;		 /* "[expunged]" */
	bool listed;		 /* check -n listed it */
	bool want_notrun_reason; /* -T: "\tNAME -- reason" comes on the next line */
	bool in_diff;		 /* after "- output mismatch": indented lines are the diff */
	bool any;		 /* some outcome token was seen */
	double seconds;		 /* check's time of a pass, < 0 when not printed */
	double prev_seconds;	 /* " Ns ... " from check.time, < 0 when not printed */
	int stamp_start;	 /* -T "[HH:MM:SS]" in seconds of the day, or -1 */
	int stamp_end;
	int exit_status;      /* "[failed, exit status N]", or -1 */
	unsigned reasons;     /* enum fail_reason */
	struct strbuf reason; /* the not-run reason, or the failure words */
};

void check_outcome_init(struct check_outcome *o);
void check_outcome_release(struct check_outcome *o);
/*
 * Scan one line (no newline) of what check printed about a test: the text
 * after the name on the test line, or a later line. Returns how many bytes
 * were understood: len, or the offset of text it does not know (test output
 * with -d, say), or of check's summary ("Ran:", "Interrupted!", ...) when
 * check was cut off in this test; *summary (may be NULL) tells which.
 */
size_t check_outcome_scan(struct check_outcome *o, const char *text, size_t len, bool *summary);
/* The -T reason line "\tNAME -- reason": true when line is one (then settled). */
bool check_outcome_notrun_reason(struct check_outcome *o, const char *line, size_t len);
/* The status the outcome amounts to; false when it says nothing yet. */
bool check_outcome_status(const struct check_outcome *o, enum test_status *st);
/* Seconds for a TEST_END: check's time, else the -T stamps' difference, else -1. */
double check_outcome_seconds(const struct check_outcome *o);

/*
 * The length of the test name ("generic/001", "xfs/1234-foo") at the start
 * of line, when what follows it is a space, a tab or the end; else 0.
 */
size_t check_test_name_len(const char *line, size_t len);

#endif
