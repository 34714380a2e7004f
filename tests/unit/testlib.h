/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Helpers for the cmocka unit tests.
 *
 * Include this instead of <cmocka.h>. test_setup_hermetic() gives the test
 * a scratch FSWB_HOME and HOME under a fresh temporary directory and TZ=UTC;
 * test_teardown_hermetic() removes it.
 */
#ifndef FSWB_TESTS_TESTLIB_H
#define FSWB_TESTS_TESTLIB_H

/* clang-format off */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
/* clang-format on */

#include <stdbool.h>

/* The scratch directory of the current hermetic test, or NULL. */
extern char *test_scratch;

/* cmocka group setup/teardown: a scratch FSWB_HOME, HOME and TZ=UTC. */
int test_setup_hermetic(void **state);
int test_teardown_hermetic(void **state);

/* No child of this process is left, reaped or not (fails the test otherwise). */
void assert_no_children(void);

/* The fswb source tree (FSWB_SRCDIR, else the build's). free() it. */
char *test_srcdir(void);
/* A path below the source tree: test_path("profiles"). free() it. */
char *test_path(const char *rel);
/*
 * The real fstests fixtures (tests/fixtures/fstests-runs, or
 * FSWB_FIXTURES): test_fixture("A-plain-pass-notrun/stdout.txt"). free() it.
 */
char *test_fixture(const char *rel);
/* A path in the scratch directory. free() it. */
char *test_tmp(const char *rel);
/* Write text to path, creating parent directories. */
void test_write(const char *path, const char *text);
/* Read a whole file (fails the test when it cannot). free() it. */
char *test_read(const char *path);

#endif
