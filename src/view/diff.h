/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A line diff for the golden output (.out) against what a test printed
 * (.out.bad), in unified form with context, as `diff -u` prints it. No
 * curses here.
 *
 *	struct strvec out = STRVEC_INIT;
 *	diff_unified(golden, bad, "tests/generic/006.out", "006.out.bad", 3, &out);
 *	...each out.v[i] is a line: "--- ...", "+++ ...", "@@ ... @@", " x", "-x", "+x"
 * Nothing is added when the texts are the same. Inputs larger than
 * DIFF_MAX_LINES lines are cut there (with a last line saying so).
 */
#ifndef FSWB_VIEW_DIFF_H
#define FSWB_VIEW_DIFF_H

#include "core/util.h"

#define DIFF_MAX_LINES 20000

/* Returns the number of changed lines (added + removed). */
size_t diff_unified(const char *a, const char *b, const char *a_name, const char *b_name,
		    int context, struct strvec *out);

#endif
