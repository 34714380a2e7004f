/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Text made to travel: what fswb prints from a run's record (names,
 * reasons, diffs, kernel logs came from a test machine) as plain text, and
 * a run's failure report for a mailing list.
 */
#ifndef FSWB_FSTESTS_REPORT_H
#define FSWB_FSTESTS_REPORT_H

#include <stddef.h>

#include "core/status.h"
#include "core/util.h"
#include "fstests/results.h"

struct flaky;
struct regressions;

#define REPORT_WIDTH	  78	     /* columns of a report line at most */
#define REPORT_DIFF_LINES 60	     /* lines of a failure's diff */
#define REPORT_KLOG_LINES 20	     /* lines of kernel log from the first warning */
#define REPORT_FILE_MAX	  (1u << 20) /* bytes read of a run directory's file */

/*
 * Append s (len bytes) to out as plain text: newlines kept, a tab becomes
 * spaces to the next multiple of 8 columns, every other control character
 * (ESC, CR, DEL, the C1 controls) and every byte that is not valid UTF-8
 * becomes '?'. Nothing that moves a terminal's cursor or changes its
 * colours gets through.
 */
void text_plain(struct strbuf *out, const char *s, size_t len);

/*
 * A regular file's bytes (a symlink is not followed), at most max of them,
 * NUL-terminated; *len (when not NULL) is how many. NULL when path is not
 * a regular file or cannot be read. free() it.
 */
char *read_regular(const char *path, size_t max, size_t *len);

/*
 * A run directory's file (results/SLUG/TEST.EXT, local.config...): read
 * only when it is a regular file (no symlink is followed), at most
 * REPORT_FILE_MAX bytes (the rest is cut and it says so). NULL when there
 * is none. free() it.
 */
char *run_dir_file(const char *run_dir, const char *config, const char *name);

/*
 * The first warning, BUG, oops, panic, lockdep report or other bad line of
 * a kernel log (kmsg_classify()) and up to max_lines after it, each line
 * without its "[  12.345678] " stamp. Empty when there is none.
 */
void klog_first_bad(const char *log, size_t max_lines, struct strbuf *out);

/* What the report says beyond the run's record; every field may be NULL. */
struct report_input {
	const struct run_record *rec;
	const char *run_dir; /* where results/SLUG/ is (SLUG: the config, '/' as '-') */
	const char *test;    /* only this test, else every failure */
	const char *kernel;  /* how it was got: "the installed kernel", "tree /src/linux" */
	const char *fstests; /* which fstests: "git://... (revision 63a29724)" */
	/* the fswb command that reruns a test, without it: "fswb run -c ext4/4k" */
	const char *(*fswb_cmd)(void *data, const char *config, const char *test);
	void *data;
	const struct regressions *reg; /* against the baseline (the HTML page shows it) */
	const struct flaky *flaky;     /* the recent runs' flaky tests: failures say so */
};

/* The fswb command that reruns test on config (in->fswb_cmd, else a plain one). free() it. */
char *report_fswb_command(const struct report_input *in, const char *config, const char *test);
/*
 * "flaky: failed 2 of its last 5 runs" when in->flaky has config's test as
 * flaky, else NULL. free() it.
 */
char *report_flaky_words(const struct report_input *in, const char *config, const char *test);
/* The configuration's name as reports show it ("check" when it has none). */
const char *report_config_name(const struct section_result *sec);

/*
 * The report: a header (kernel release and how it was built, fstests, the
 * run, the counts), then per configuration with a failure its options
 * (FSTYP, MKFS_OPTIONS, MOUNT_OPTIONS and local.config's settings), then
 * each failure: its status and reason, its diff (REPORT_DIFF_LINES), the
 * first bad kernel-log lines of its slice (REPORT_KLOG_LINES), check's
 * hints, and how to reproduce it with fswb and with check by hand. Lines
 * are folded to REPORT_WIDTH columns and pass text_plain().
 * ERR_NOTFOUND when in->test is not in the run.
 */
enum status report_text(const struct report_input *in, struct strbuf *out);

#endif
