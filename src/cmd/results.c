/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `fswb results`: the runs kept under the data directory, one run's summary
 * again, and the import of results fstests wrote elsewhere (a results/
 * directory, or a saved copy of check's stdout).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd/cmd.h"
#include "backends/backend.h"
#include "core/paths.h"
#include "core/profile.h"
#include "core/rundir.h"
#include "fstests/history.h"
#include "fstests/notrun.h"
#include "fstests/results.h"
#include "rootfs/appliance.h"

static const char results_usage[] =
	"usage: fswb results [--json]              list the runs\n"
	"       fswb results show RUN [--json]     a run's summary (--json: its run.json)\n"
	"       fswb results import PATH [--keep] [--json]  read results from elsewhere\n"
	"                                          (check's, xfstests-bld's, a tarball);\n"
	"                                          --keep: into the history\n"
	"       fswb results compare A B           what changed from run A to run B\n"
	"       fswb results baseline set|list|rm  the runs later runs are compared with\n"
	"       fswb results flaky [RUN]           tests that passed and failed lately\n"
	"       fswb results report RUN [TEST]     a failure report for a mailing list\n"
	"       fswb results html RUN -o FILE      the run as one HTML page\n"
	"       fswb results fetch RUN [--json]    follow a run of fswb run --detach to its\n"
	"                                          end and collect its results\n"
	"RUN is a run's id, last, or last~N (the Nth before the last).\n";

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
} subcommands[] = {
	{ "import", cmd_results_import },     { "compare", cmd_results_compare },
	{ "baseline", cmd_results_baseline }, { "flaky", cmd_results_flaky },
	{ "report", cmd_results_report },     { "html", cmd_results_html },
	{ "fetch", cmd_results_fetch },
};

static const char *
section_label(const struct section_result *s)
{
	const char *const choices[] = { s->config, s->name, s->fstyp };

	for (size_t i = 0; i < ARRAY_SIZE(choices); i++)
		if (choices[i] && *choices[i])
			return choices[i];
	return "check";
}

/* check's hints (HINT: You _MAY_ be missing kernel fix: / the commit), indented. */
static void
print_hints(const char *hints)
{
	for (const char *s = hints; *s;) {
		size_t n = strcspn(s, "\n");

		if (n)
			term_fprintf(stdout, "      %.*s\n", (int)n, s);
		s += n + (s[n] == '\n');
	}
}

static void
print_failures(const struct section_result *s)
{
	bool header = false;

	for (size_t i = 0; i < s->ntests; i++) {
		const struct test_result *t = &s->tests[i];

		if (t->status != TS_FAIL && t->status != TS_CRASHED && t->status != TS_HUNG)
			continue;
		if (!header)
			term_fprintf(stdout, "\nFailures on %s:\n", section_label(s));
		header = true;
		if (t->shard)
			term_fprintf(stdout, "  %s  %s (shard %u)%s%s\n", t->test,
				     test_status_str(t->status), t->shard, t->reason ? ": " : "",
				     t->reason ? t->reason : "");
		else
			term_fprintf(stdout, "  %s  %s%s%s\n", t->test, test_status_str(t->status),
				     t->reason ? ": " : "", t->reason ? t->reason : "");
		if (t->niterations > 1) {
			unsigned passed, failed;

			test_result_run_counts(t, &passed, &failed);
			term_fprintf(stdout, "      ran %zu times: %u passed, %u failed\n",
				     t->niterations, passed, failed);
		}
		if (t->out_bad)
			term_fprintf(stdout, "      %s\n", t->out_bad);
		if (t->full)
			term_fprintf(stdout, "      %s\n", t->full);
		if (t->dmesg)
			term_fprintf(stdout, "      %s\n", t->dmesg);
		if (t->hints)
			print_hints(t->hints);
	}
}

/* One group's lines: count, cause, tests, and the fix or why there is none. */
static void
print_notrun_group(const struct notrun_group *g)
{
	char *list = strvec_join(&g->tests, " ");

	term_fprintf(stdout, "  %3zu %-5s %s\n", g->tests.n, g->tests.n == 1 ? "test" : "tests",
		     g->cause);
	term_fprintf(stdout, "            %s\n", list);
	if (g->fix)
		term_fprintf(stdout, "            %s%s\n", g->natural ? "" : "fix: ", g->fix);
	free(list);
}

static void
print_notrun(const struct section_result *s, const struct profiles *profiles, bool own_machine)
{
	struct strvec tests = STRVEC_INIT, reasons = STRVEC_INIT;
	struct notrun_context ctx = { profiles, s->fstyp, appliance_packages, own_machine };
	struct notrun_groups g;

	for (size_t i = 0; i < s->ntests; i++) {
		if (s->tests[i].status != TS_NOTRUN)
			continue;
		strvec_push(&tests, s->tests[i].test);
		strvec_push(&reasons, s->tests[i].reason ? s->tests[i].reason : "");
	}
	if (tests.n) {
		bool natural_header = false;

		notrun_group((const char *const *)tests.v, (const char *const *)reasons.v, tests.n,
			     &ctx, &g);
		if (g.n && !g.groups[0].natural)
			term_fprintf(stdout, "\nNot run on %s, with a cause to fix:\n",
				     section_label(s));
		for (size_t j = 0; j < g.n; j++) {
			if (g.groups[j].natural && !natural_header) {
				term_fprintf(
					stdout,
					"\nNot run on %s, not applying here (nothing to fix):\n",
					section_label(s));
				natural_header = true;
			}
			print_notrun_group(&g.groups[j]);
		}
		notrun_groups_release(&g);
	}
	strvec_clear(&tests);
	strvec_clear(&reasons);
}

#define UNREACHED_SHOWN 12 /* names of unreached tests shown per configuration */

/* A run the user stopped: the tests it cut off, with their time, and those it never reached. */
static void
print_stopped(const struct run_record *rec)
{
	term_fprintf(stdout, "\nStopped by you.\n");
	for (size_t i = 0; i < rec->nsections; i++) {
		const struct section_result *s = &rec->sections[i];
		char took[32];

		for (size_t k = 0; k < s->nstopped; k++)
			term_fprintf(
				stdout, "%s: %s was interrupted after %s\n", section_label(s),
				s->stopped[k].test,
				s->stopped[k].seconds >= 0
					? format_duration(s->stopped[k].seconds, took, sizeof(took))
					: "an unknown time");
		if (!s->unreached.n)
			continue;
		term_fprintf(stdout, "%s: %zu test%s never reached:", section_label(s),
			     s->unreached.n, s->unreached.n == 1 ? "" : "s");
		for (size_t k = 0; k < s->unreached.n && k < UNREACHED_SHOWN; k++)
			term_fprintf(stdout, " %s", s->unreached.v[k]);
		if (s->unreached.n > UNREACHED_SHOWN)
			term_fprintf(stdout, " and %zu more (run.json lists them)",
				     s->unreached.n - UNREACHED_SHOWN);
		term_fprintf(stdout, "\n");
	}
}

void
print_run_summary(const struct run_record *rec)
{
	struct profiles profiles;
	char *datadir = fswb_datadir(), *dir = path_join(datadir, "profiles");
	bool have_profiles = profiles_load(dir, &profiles) == OK;

	if (!have_profiles)
		error_clear(); /* the explanations then name no configuration */
	if (rec->nsections)
		putchar('\n');
	for (size_t i = 0; i < rec->nsections; i++) {
		const struct section_result *s = &rec->sections[i];
		const struct test_counts *k = &s->counts;
		unsigned failures = k->failed + k->crashed + k->hung;

		term_fprintf(stdout, "%s: %u tests, %u failures, %u skipped, %.0f seconds%s\n",
			     section_label(s), k->passed + failures + k->notrun, failures,
			     k->notrun, k->seconds, s->interrupted ? " (interrupted)" : "");
	}
	if (rec->shards > 1) {
		char tests[32], wall[32];

		term_fprintf(stdout, "On %u guests at once: %s of tests", rec->shards,
			     format_duration(rec->counts.seconds, tests, sizeof(tests)));
		if (rec->start_ms && rec->end_ms > rec->start_ms)
			term_fprintf(stdout, " in %s",
				     format_duration((double)(rec->end_ms - rec->start_ms) / 1000.0,
						     wall, sizeof(wall)));
		term_fprintf(stdout, ".\n");
	}
	for (size_t i = 0; i < rec->nsections; i++)
		print_failures(&rec->sections[i]);
	for (size_t i = 0; i < rec->nsections; i++)
		print_notrun(&rec->sections[i], have_profiles ? &profiles : NULL,
			     backend_own_machine(rec->backend));
	if (rec->interrupted)
		print_stopped(rec);
	else if (rec->stopped_at)
		term_fprintf(stdout, "\nThe run stopped in %s.\n", rec->stopped_at);
	if (history_run_failure(rec))
		term_fprintf(stdout, "\nThe run failed before its first test: %s\n", rec->error);
	else if (rec->error)
		term_fprintf(stdout, "\nError: %s\n", rec->error);
	if (have_profiles)
		profiles_release(&profiles);
	free(dir);
	free(datadir);
}

void
print_run_dir_summary(const char *dir)
{
	struct run_record rec;
	char *path;

	if (!dir)
		return;
	path = path_join(dir, "run.json");
	if (run_record_load(path, &rec) == OK) {
		print_run_summary(&rec);
		run_record_release(&rec);
	} else if (path_exists(path)) {
		term_fprintf(stderr, "fswb: error: %s\n", error_msg());
	}
	term_fprintf(stdout, "\nResults: %s\n", dir);
	free(path);
}

void
print_json_text(char *text)
{
	fputs(text, stdout);
	if (*text && text[strlen(text) - 1] != '\n')
		putchar('\n');
	free(text);
}

static int
list_runs(bool json)
{
	struct strvec ids = STRVEC_INIT;
	char *runs = rundir_root();
	json_t *list = NULL;

	history_list(&ids);
	if (json)
		list = json_array();
	else if (!ids.n)
		term_fprintf(stdout, "No runs yet in %s; start one with 'fswb run'.\n", runs);
	else
		term_fprintf(stdout, "%-20s %-14s %-24s %s\n", "ID", "STATE", "CONFIGS", "RESULT");
	for (size_t i = 0; i < ids.n; i++) {
		char *path = xasprintf("%s/%s/run.json", runs, ids.v[i]);
		struct run_record rec;
		bool ok = run_record_load(path, &rec) == OK;
		struct strbuf cfgs = STRBUF_INIT;
		const struct test_counts *k = &rec.counts;
		char *dir = path_join(runs, ids.v[i]);
		const char *kind = history_run_kind(dir);

		if (json) {
			json_t *o = json_object();

			json_object_set_new(o, "id", json_string(ids.v[i]));
			json_object_set_new(o, "dir", json_string(dir));
			json_object_set_new(o, "kind", json_string(kind ? kind : "test run"));
			json_object_set_new(o, "finished", json_boolean(ok && rec.finished));
			json_object_set_new(o, "error",
					    ok && rec.error ? json_string(rec.error) : json_null());
			json_object_set_new(o, "interrupted", json_boolean(ok && rec.interrupted));
			json_object_set_new(o, "passed", json_integer(ok ? k->passed : 0));
			json_object_set_new(
				o, "failed",
				json_integer(ok ? k->failed + k->crashed + k->hung : 0));
			json_object_set_new(o, "notrun", json_integer(ok ? k->notrun : 0));
			json_array_append_new(list, o);
		} else if (kind && !strcmp(kind, "detached")) {
			term_fprintf(stdout, "%-20s %-14s %-24s fswb results fetch %s\n", ids.v[i],
				     kind, "-", ids.v[i]);
		} else if (!ok) {
			term_fprintf(stdout, "%-20s %-14s %-24s %s\n", ids.v[i], "no results", "-",
				     "stopped before its first test");
		} else {
			for (size_t j = 0; j < rec.nsections; j++)
				strbuf_addf(&cfgs, "%s%s", j ? "," : "",
					    section_label(&rec.sections[j]));
			term_fprintf(stdout, "%-20s %-14s %-24s ", ids.v[i],
				     kind			 ? kind
				     : history_run_failure(&rec) ? "failed"
				     : !rec.finished		 ? "incomplete"
				     : rec.interrupted		 ? "interrupted"
								 : "finished",
				     cfgs.len ? cfgs.buf : "-");
			if (kind)
				term_fprintf(stdout, "no tests run\n");
			else if (history_run_failure(&rec))
				term_fprintf(stdout, "%s\n", rec.error);
			else
				term_fprintf(stdout, "%u passed, %u failed, %u not run\n",
					     k->passed, k->failed + k->crashed + k->hung,
					     k->notrun);
		}
		if (ok)
			run_record_release(&rec);
		error_clear();
		strbuf_release(&cfgs);
		free(dir);
		free(path);
	}
	if (json) {
		print_json_text(json_dumps(list, JSON_INDENT(2)));
		json_decref(list);
	}
	strvec_clear(&ids);
	free(runs);
	return 0;
}

static int
show_run(const char *spec, bool json)
{
	char *id, *dir, *path;
	struct run_record rec;
	int code = 0;

	if (history_resolve(spec, &id) != OK)
		return cmd_fail("results");
	dir = history_run_dir(id);
	path = path_join(dir, "run.json");
	if (json) {
		if (run_record_load(path, &rec) != OK) {
			code = cmd_fail("results");
		} else {
			print_json_text(run_record_to_json(&rec));
			run_record_release(&rec);
		}
	} else {
		const char *kind = history_run_kind(dir);

		if (kind && !strcmp(kind, "detached"))
			term_fprintf(stdout,
				     "Run %s (detached: its machines run it without fswb; `fswb "
				     "results fetch %s` follows it and collects its results)\n",
				     id, id);
		else
			term_fprintf(stdout, "Run %s%s%s%s\n", id, kind ? " (" : "",
				     kind ? kind : "", kind ? ": no test ran)" : "");
		print_run_dir_summary(dir);
	}
	free(path);
	free(dir);
	free(id);
	return code;
}

int
cmd_results(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool json = false;
	int c;

	for (size_t i = 0; argc > 1 && i < ARRAY_SIZE(subcommands); i++)
		if (!strcmp(argv[1], subcommands[i].name))
			return subcommands[i].fn(argc - 1, argv + 1);
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'h':
			fputs(results_usage, stdout);
			return 0;
		default:
			cmd_bad_option("results", argv[optind - 1], opts);
		}
	}
	argc -= optind;
	argv += optind;
	if (!argc)
		return list_runs(json);
	if (!strcmp(argv[0], "show") && argc == 2)
		return show_run(argv[1], json);
	fputs(results_usage, stderr);
	return 2;
}
