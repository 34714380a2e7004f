/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A run as one self-contained HTML page: no network, no script, no
 * external font or style; what `fswb results html` writes.
 *
 *	header		the run, kernel, fstests, counts (#summary)
 *	#configs	per configuration its options and a table of its tests
 *			with status and duration
 *	#durations	an inline SVG chart of the longest tests
 *	#baseline	what changed against the baseline (in->reg), if any
 *	#failures	each failure (article.failure): reason, then its diff,
 *			.full and kernel-log slice in closed <details>, check's
 *			hints, and the commands that reproduce it
 *
 * Everything that came from the run is escaped for HTML (& < > " ') after
 * text_plain(). The layout is one column that fits 390 pixels; tables
 * scroll sideways inside their box on a narrow screen.
 */
#ifndef FSWB_FSTESTS_HTML_H
#define FSWB_FSTESTS_HTML_H

#include "core/util.h"
#include "fstests/report.h"

#define HTML_FILE_MAX	 (64u << 10) /* bytes of a .full or kernel log shown */
#define HTML_CHART_TESTS 40	     /* tests in the duration chart */

/* Append s escaped for HTML text and attribute values (after text_plain()). */
void html_escape(struct strbuf *out, const char *s, size_t len);

/* The page of in->rec (in->test is ignored). */
void run_html(const struct report_input *in, struct strbuf *out);

#endif
