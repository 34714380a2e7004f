/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The subcommands beyond run, plan and profiles: one file each under
 * src/cmd/, called by main.c's dispatch table with argv starting at the
 * command's name (argv[0] is "kernel", "appliance", ...).
 *
 * A command prints to stdout and stderr (it is the front end, not the
 * engine) and returns fswb's exit status: 0 success, 1 the thing checked
 * is not fine (a failed test, a doctor finding), 2 it could not do what was
 * asked (bad input, a missing tool), with a message naming what and why.
 */
#ifndef FSWB_CMD_CMD_H
#define FSWB_CMD_CMD_H

#include <getopt.h>
#include <stdbool.h>

int cmd_kernel(int argc, char **argv);
int cmd_appliance(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_results(int argc, char **argv);
/*
 * The subcommands of `fswb results` (argv[0] is "compare", "baseline"...):
 * results_import.c has import; results_compare.c compare, baseline and
 * flaky; results_report.c report and html.
 */
int cmd_results_import(int argc, char **argv);
int cmd_results_compare(int argc, char **argv);
int cmd_results_baseline(int argc, char **argv);
int cmd_results_flaky(int argc, char **argv);
int cmd_results_report(int argc, char **argv);
int cmd_results_html(int argc, char **argv);
/* Print JSON text (free()d) with a final newline. */
void print_json_text(char *text);

struct plan;
struct profiles;
/* What makes `fswb run` exit 1 (--fail-on). */
enum fail_on {
	FAIL_ON_FAILURES,    /* any failed, crashed or hung test (the default) */
	FAIL_ON_REGRESSIONS, /* only failures the baseline does not have */
};
/*
 * Run a plan without the TUI: prints as it goes (JSON lines with json),
 * then the summary and the regressions against the baseline; the exit
 * status.
 */
int run_headless(const struct plan *plan, const struct profiles *profiles, bool json,
		 enum fail_on fail_on);
/* fswb results fetch RUN: follow a detached run (engine_follow) as run_headless runs one. */
int cmd_results_fetch(int argc, char **argv);
/*
 * After a run: its regressions against the matching baselines, printed
 * (unless json), set in its run.json ("baseline"), and the exit status
 * for fail_on given the engine's code (2, nothing ran, stays; a baseline
 * that cannot be read keeps 1).
 */
int run_against_baseline(const char *run_dir, bool json, enum fail_on fail_on, int code);

/*
 * fswb run -n with plan->fstests_src a local tree: per configuration, what
 * check would run (each test with its description and groups), the count,
 * and what is left out and why, resolved on this host; no guest. JSON
 * with json. 0, or 2 when the tree cannot be read or a selection fails.
 */
int run_dry(const struct plan *plan, const struct profiles *profiles, bool json);

struct run_record;
/*
 * The end-of-run report: per section "ext4/4k: N tests, N failures, N
 * skipped, N seconds", then the failures with their files, then the not-run
 * causes grouped with their fixes.
 */
void print_run_summary(const struct run_record *rec);
/* The same from a run directory's run.json (a message when it has none). */
void print_run_dir_summary(const char *dir);

/* Print "fswb: error: ...", restore what must be restored, exit 2. */
_Noreturn void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Print "fswb CMD: error: <the recorded error>" to stderr; returns 2. */
int cmd_fail(const char *cmd);
/*
 * An unknown or malformed option of command cmd: prints what was wrong and
 * the closest option in opts, then exits 2.
 */
_Noreturn void cmd_bad_option(const char *cmd, const char *arg, const struct option *opts);

#endif
