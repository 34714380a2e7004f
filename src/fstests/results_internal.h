/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the files of the results module share, and nothing outside them
 * includes: results.c (the record), run_json.c, junit.c, xunit.c,
 * check_log.c, results_writer.c and results_import.c. Their public API is
 * fstests/results.h.
 */
#ifndef FSWB_FSTESTS_RESULTS_INTERNAL_H
#define FSWB_FSTESTS_RESULTS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fstests/results.h"

/* Caps on what is read from results directories. */
#define RESULTS_XML_MAX	   (256u << 20) /* result.xml, junit.xml, run.json */
#define RESULTS_LOG_MAX	   (64u << 20)	/* check.log, check.time, a test's .full */
#define RESULTS_NOTRUN_MAX (64u << 10)	/* TEST.notrun */
#define RESULTS_STDOUT_MAX (1u << 30)	/* a file of check's output */

/* *dst becomes a copy of src (NULL stays NULL); the old string is freed. */
void results_replace(char **dst, const char *src);
/* fail, crashed or hung */
bool results_is_failure(enum test_status st);
/* Free a test's strings and iterations (not the struct). */
void results_test_release(struct test_result *t);
void results_push_iteration(struct test_result *t, enum test_status status, double seconds);
void results_counts_sum(struct test_counts *to, const struct test_counts *c);
/*
 * dir/TEST.ext when it is a regular file reached without a symlink and test
 * is a test name, else NULL (free() it).
 */
char *results_file_if_there(const char *dir, const char *test, const char *ext);
/* UTC: "2026-12-03T07:51:54.000Z" (millis) or "2026-12-03T07:51:54+00:00". */
void results_format_time(uint64_t ms, char *buf, size_t len, bool millis);
/*
 * "2026-12-03T07:51:54.000Z", "2026-12-03T07:51:54+01:00",
 * "2026-12-03T07:51:54Z": ms since the epoch, 0 when it is not one.
 */
uint64_t results_parse_iso_time(const char *s);

#endif
