/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `fswb results report RUN [TEST]`: a run's failures as plain text for a
 * mailing list (fstests/report.h builds it), and `fswb results html RUN`:
 * the run as a page (fstests/html.h), with what run/reportctx.h finds
 * beyond the record.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "core/paths.h"
#include "fstests/baseline.h"
#include "fstests/history.h"
#include "fstests/html.h"
#include "fstests/report.h"
#include "run/reportctx.h"

/* Write text to output (a message says so), or print it. */
static int
emit(const char *cmd, const char *what, const struct run_words *w, const struct strbuf *sb,
     const char *output)
{
	if (!output) {
		fwrite(sb->buf, 1, sb->len, stdout);
		return 0;
	}
	if (write_file_atomic(output, sb->buf, sb->len, 0644) != OK)
		return cmd_fail(cmd);
	printf("Wrote %s of run %s to %s\n", what, w->rec.id, output);
	return 0;
}

static const char report_usage[] =
	"usage: fswb results report RUN [TEST] [-o FILE]\n"
	"A run's failures (or one test) as plain text for a mailing list: the kernel\n"
	"and fstests, the configuration with its mkfs and mount options, each\n"
	"failure's diff and first kernel warning, and the commands that reproduce\n"
	"it with fswb and with check. RUN: an id, last, last~N.\n";

static const char html_usage[] =
	"usage: fswb results html RUN -o FILE\n"
	"The run as one self-contained HTML page (no network, no scripts): summary,\n"
	"each configuration's tests with status and time, a chart of the longest\n"
	"tests, what changed against the baseline, and each failure's diff, .full\n"
	"and kernel log (folded), with the commands that reproduce it.\n";

/* report and html: RUN [TEST] -o FILE. */
static int
report_or_html(const char *cmd, const char *usage, bool html, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct strbuf sb = STRBUF_INIT;
	const char *output = NULL;
	struct regressions reg;
	struct run_words w;
	char *id, *dir;
	int ch, code = 0, max_args = html ? 1 : 2;

	opterr = 0;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (ch) {
		case 'o':
			output = optarg;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			cmd_bad_option(cmd, argv[optind - 1], opts);
		}
	}
	if (argc - optind < 1 || argc - optind > max_args || (html && !output)) {
		fputs(usage, stderr);
		return 2;
	}
	if (history_resolve(argv[optind], &id) != OK)
		die("fswb %s: %s", cmd, error_msg());
	dir = history_run_dir(id);
	if (run_words_load(dir, &w) != OK)
		die("fswb %s: %s", cmd, error_msg());
	free(dir);
	free(id);
	if (html) {
		if (regressions_find(&w.rec, &reg) != OK)
			term_fprintf(stderr, "fswb: warning: %s\n", error_msg());
		w.in.reg = &reg;
		run_html(&w.in, &sb);
		regressions_release(&reg);
		code = emit(cmd, "the page", &w, &sb, output);
	} else {
		w.in.test = argc - optind == 2 ? argv[optind + 1] : NULL;
		code = report_text(&w.in, &sb) == OK ? emit(cmd, "the report", &w, &sb, output)
						     : cmd_fail(cmd);
	}
	strbuf_release(&sb);
	run_words_release(&w);
	return code;
}

int
cmd_results_report(int argc, char **argv)
{
	return report_or_html("results report", report_usage, false, argc, argv);
}

int
cmd_results_html(int argc, char **argv)
{
	return report_or_html("results html", html_usage, true, argc, argv);
}
