/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `fswb results compare A B`, `fswb results baseline set|list|rm` and
 * `fswb results flaky`: what changed between runs, the runs later runs are
 * compared with, and the tests that both passed and failed lately.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "core/paths.h"
#include "fstests/baseline.h"
#include "fstests/compare.h"
#include "fstests/history.h"
#include "fstests/report.h"

enum { OPT_JSON = 256, OPT_ALL, OPT_THRESHOLD, OPT_MIN_SECONDS, OPT_CONFIG, OPT_RUNS };

static double
parse_number(const char *cmd, const char *opt, const char *arg, double max)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end || v < 0 || v > max)
		die("fswb results %s: --%s: '%s' is not a number from 0 to %.0f", cmd, opt, arg,
		    max);
	return v;
}

/* Print text from run records (names, statuses) through the plain-text filter. */
static void
print_plain(const struct strbuf *sb)
{
	struct strbuf clean = STRBUF_INIT;

	text_plain(&clean, sb->buf, sb->len);
	fwrite(clean.buf, 1, clean.len, stdout);
	strbuf_release(&clean);
}

/* Load the run spec names; dies with the message when it cannot. */
static char *
load_run(const char *cmd, const char *spec, struct run_record *rec)
{
	char *id;

	if (history_resolve(spec, &id) != OK || history_load(id, rec) != OK)
		die("fswb results %s: %s", cmd, error_msg());
	return id;
}

static const char compare_usage[] =
	"usage: fswb results compare A B [--json] [--all] [--threshold PCT]\n"
	"                                [--min-seconds S]\n"
	"What changed from run A to run B, per configuration: new failures, still\n"
	"failing, fixed, not run in one only, and the times that changed by PCT percent\n"
	"(default 50) and S seconds (default 5) or more. Flaky tests (passed and failed\n"
	"in the last 10 runs of B's kernel) are marked. A and B: an id, last, last~N.\n"
	"Exit status: 1 when B has new failures, else 0.\n";

int
cmd_results_compare(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, OPT_JSON },
		{ "all", no_argument, NULL, OPT_ALL },
		{ "threshold", required_argument, NULL, OPT_THRESHOLD },
		{ "min-seconds", required_argument, NULL, OPT_MIN_SECONDS },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct compare_opts co = { COMPARE_PERCENT_DEFAULT, COMPARE_MIN_SECONDS };
	struct run_record a, b;
	struct run_compare c;
	struct flaky f;
	bool json = false, all = false;
	char *ida, *idb;
	int ch, code;

	opterr = 0;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case OPT_JSON:
			json = true;
			break;
		case OPT_ALL:
			all = true;
			break;
		case OPT_THRESHOLD:
			co.percent = parse_number("compare", "threshold", optarg, 100000);
			break;
		case OPT_MIN_SECONDS:
			co.min_seconds = parse_number("compare", "min-seconds", optarg, 1e7);
			break;
		case 'h':
			fputs(compare_usage, stdout);
			return 0;
		default:
			cmd_bad_option("results compare", argv[optind - 1], opts);
		}
	}
	if (argc - optind != 2) {
		fputs(compare_usage, stderr);
		return 2;
	}
	ida = load_run("compare", argv[optind], &a);
	idb = load_run("compare", argv[optind + 1], &b);
	run_compare(&a, &b, &co, &c);
	flaky_init(&f);
	flaky_scan_history(&f, &b, FLAKY_RUNS_DEFAULT);
	flaky_mark(&f, &c);
	if (json) {
		json_t *o = run_compare_json(&c, all);

		json_object_set_new(o, "old", json_string(ida));
		json_object_set_new(o, "new", json_string(idb));
		print_json_text(json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER));
		json_decref(o);
	} else {
		struct strbuf sb = STRBUF_INIT;

		strbuf_addf(&sb, "Compare %s (%s)\n     -> %s (%s)\n\n", ida,
			    a.kernel ? a.kernel : "kernel unknown", idb,
			    b.kernel ? b.kernel : "kernel unknown");
		run_compare_text(&c, all, &sb);
		print_plain(&sb);
		strbuf_release(&sb);
	}
	code = c.count[CMP_NEW_FAILURE] ? 1 : 0;
	flaky_release(&f);
	run_compare_release(&c);
	run_record_release(&a);
	run_record_release(&b);
	free(ida);
	free(idb);
	return code;
}

static const char baseline_usage[] =
	"usage: fswb results baseline set RUN [--config CFG]\n"
	"       fswb results baseline list [--json]\n"
	"       fswb results baseline rm KERNEL|RUN [--config CFG]\n"
	"A baseline is kept per kernel and configuration: the kernel release without\n"
	"what a build of a changed tree adds (\"-00012-gabcdef12\", \"-dirty\", \"+\"),\n"
	"so a patched kernel is compared with the run of the tree it came from.\n"
	"A later 'fswb run' on that kernel and configuration reports regressions\n"
	"against it (and exits 1 only for them with --fail-on regressions).\n";

static int
baseline_set(const char *spec, const char *config)
{
	struct run_record rec;
	struct baselines b;
	char *id = load_run("baseline", spec, &rec), *key = history_kernel_key(rec.kernel);
	struct strbuf sb = STRBUF_INIT;
	size_t set = 0;
	int code = 0;

	if (baselines_load(&b) != OK)
		die("fswb results baseline: %s", error_msg());
	for (size_t s = 0; s < rec.nsections; s++) {
		const char *cfg = section_config_name(&rec.sections[s]);

		if (config && strcmp(cfg, config))
			continue;
		baselines_set(&b, key, cfg, id);
		strbuf_addf(&sb, "Baseline of %s on %s: run %s\n", *cfg ? cfg : "check", key, id);
		set++;
	}
	if (!set) {
		fprintf(stderr, "fswb results baseline: run %s has %s\n", id,
			config ? "no such configuration" : "no results");
		code = 2;
	} else if (baselines_save(&b) != OK) {
		code = cmd_fail("results baseline");
	} else {
		print_plain(&sb);
	}
	strbuf_release(&sb);
	baselines_release(&b);
	run_record_release(&rec);
	free(key);
	free(id);
	return code;
}

static int
baseline_list(bool json)
{
	struct baselines b;
	struct strbuf sb = STRBUF_INIT;
	json_t *list = json_array();

	if (baselines_load(&b) != OK)
		die("fswb results baseline: %s", error_msg());
	if (!json && !b.n)
		strbuf_adds(&sb, "No baselines yet; set one with 'fswb results baseline set "
				 "RUN'.\n");
	else if (!json)
		strbuf_addf(&sb, "%-26s %-14s %-16s %s\n", "KERNEL", "CONFIG", "RUN", "SET");
	for (size_t i = 0; i < b.n; i++) {
		const struct baseline *e = &b.v[i];

		json_array_append_new(list,
				      json_pack("{s:s,s:s,s:s,s:s?}", "kernel", e->kernel, "config",
						e->config, "run", e->run, "set", e->set));
		strbuf_addf(&sb, "%-26s %-14s %-16s %s\n", e->kernel, e->config, e->run,
			    e->set ? e->set : "-");
	}
	if (json)
		print_json_text(json_dumps(list, JSON_INDENT(2) | JSON_PRESERVE_ORDER));
	else
		print_plain(&sb);
	json_decref(list);
	strbuf_release(&sb);
	baselines_release(&b);
	return 0;
}

static int
baseline_rm(const char *what, const char *config)
{
	struct baselines b;
	size_t n;
	int code = 0;

	if (baselines_load(&b) != OK)
		die("fswb results baseline: %s", error_msg());
	n = baselines_remove(&b, what, config);
	if (!n) {
		fprintf(stderr,
			"fswb results baseline: no baseline of kernel or run '%s'%s%s; 'fswb "
			"results baseline list' shows them\n",
			what, config ? " and configuration " : "", config ? config : "");
		code = 2;
	} else if (baselines_save(&b) != OK) {
		code = cmd_fail("results baseline");
	} else {
		printf("Removed %zu baseline%s.\n", n, n == 1 ? "" : "s");
	}
	baselines_release(&b);
	return code;
}

int
cmd_results_baseline(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, OPT_CONFIG },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *config = NULL;
	bool json = false;
	int ch;

	opterr = 0;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "c:h", opts, NULL)) != -1) {
		switch (ch) {
		case OPT_CONFIG:
		case 'c':
			config = optarg;
			break;
		case OPT_JSON:
			json = true;
			break;
		case 'h':
			fputs(baseline_usage, stdout);
			return 0;
		default:
			cmd_bad_option("results baseline", argv[optind - 1], opts);
		}
	}
	argc -= optind;
	argv += optind;
	if (argc == 2 && !strcmp(argv[0], "set"))
		return baseline_set(argv[1], config);
	if (argc == 1 && !strcmp(argv[0], "list"))
		return baseline_list(json);
	if (argc == 2 && !strcmp(argv[0], "rm"))
		return baseline_rm(argv[1], config);
	fputs(baseline_usage, stderr);
	return 2;
}

static const char flaky_usage[] =
	"usage: fswb results flaky [RUN] [--runs N] [--json]\n"
	"The tests that both passed and failed in RUN (default: last) and the N-1\n"
	"runs before it (default N: 10) of the same configuration and kernel, with\n"
	"how often they failed.\n";

int
cmd_results_flaky(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "runs", required_argument, NULL, OPT_RUNS },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	size_t runs = FLAKY_RUNS_DEFAULT, found = 0;
	struct strbuf sb = STRBUF_INIT;
	struct run_record rec;
	json_t *list = json_array();
	bool json = false;
	struct flaky f;
	char *id, *key;
	int ch;

	opterr = 0;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case OPT_RUNS:
			runs = (size_t)parse_number("flaky", "runs", optarg, 1000);
			if (runs < 2 || (double)runs != strtod(optarg, NULL))
				die("fswb results flaky: --runs: '%s' is not a whole number of "
				    "runs "
				    "from 2 to 1000",
				    optarg);
			break;
		case OPT_JSON:
			json = true;
			break;
		case 'h':
			fputs(flaky_usage, stdout);
			return 0;
		default:
			cmd_bad_option("results flaky", argv[optind - 1], opts);
		}
	}
	if (argc - optind > 1) {
		fputs(flaky_usage, stderr);
		return 2;
	}
	id = load_run("flaky", optind < argc ? argv[optind] : "last", &rec);
	key = history_kernel_key(rec.kernel);
	flaky_init(&f);
	flaky_scan_history(&f, &rec, runs);
	for (size_t i = 0; i < f.n; i++) {
		const struct flaky_entry *e = &f.v[i];
		unsigned total = e->passed + e->failed;

		if (!flaky_entry_flaky(e))
			continue;
		found++;
		json_array_append_new(list,
				      json_pack("{s:s,s:s,s:i,s:i,s:f}", "config", e->config,
						"test", e->test, "passed", e->passed, "failed",
						e->failed, "rate", (double)e->failed / total));
		strbuf_addf(&sb, "  %-14s %-18s failed %u of %u (%.0f%%)\n", e->config, e->test,
			    e->failed, total, 100.0 * e->failed / total);
	}
	if (json) {
		print_json_text(json_dumps(list, JSON_INDENT(2) | JSON_PRESERVE_ORDER));
	} else {
		struct strbuf head = STRBUF_INIT;

		strbuf_addf(&head,
			    "Flaky tests on %s, up to %zu runs per configuration up to %s:\n", key,
			    runs, id);
		if (!found)
			strbuf_adds(&head,
				    "  none: every test passed each time or failed each time\n");
		strbuf_add(&head, sb.buf, sb.len);
		print_plain(&head);
		strbuf_release(&head);
	}
	json_decref(list);
	strbuf_release(&sb);
	flaky_release(&f);
	run_record_release(&rec);
	free(key);
	free(id);
	return 0;
}

int
run_against_baseline(const char *run_dir, bool json, enum fail_on fail_on, int code)
{
	struct strbuf sb = STRBUF_INIT;
	struct regressions r;
	bool sure = true;

	if (!run_dir || code == 2) /* nothing ran */
		return code;
	if (regressions_of_run(run_dir, &r) != OK) {
		term_fprintf(stderr, "fswb: warning: %s\n", error_msg());
		sure = false; /* the failures may be regressions: keep the exit status */
	}
	if (!json && (r.configs.n || fail_on == FAIL_ON_REGRESSIONS)) {
		strbuf_addch(&sb, '\n');
		regressions_text(&r, &sb);
		print_plain(&sb);
	}
	if (fail_on == FAIL_ON_REGRESSIONS && code == 1 && sure && !regressions_any(&r))
		code = 0;
	strbuf_release(&sb);
	regressions_release(&r);
	return code;
}
