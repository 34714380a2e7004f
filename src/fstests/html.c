/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "fstests/html.h"

#include <stdlib.h>
#include <string.h>

#include "fstests/baseline.h"
#include "fstests/compare.h"
#include "fstests/history.h"

/* One style sheet, no external resource: one column up to 72em, tables that scroll. */
static const char style[] =
	"*{box-sizing:border-box}"
	"body{margin:0;font:15px/1.45 system-ui,sans-serif;color:#1b1b1b;background:#fafafa}"
	"main{max-width:72em;margin:0 auto;padding:1em}"
	"h1{font-size:1.4em;margin:.2em 0 .6em;overflow-wrap:anywhere}"
	"h2{font-size:1.15em;margin:1.6em 0 .5em;border-bottom:1px solid #ccc}"
	"h3{font-size:1em;margin:0 0 .4em;overflow-wrap:anywhere}"
	"dl{display:grid;grid-template-columns:max-content 1fr;gap:.2em 1em;margin:0}"
	"dt{font-weight:600}dd{margin:0;overflow-wrap:anywhere}"
	".scroll{overflow-x:auto;max-width:100%}"
	"table{border-collapse:collapse;margin:.4em 0 1em;font-size:.95em}"
	"th,td{text-align:left;padding:.25em .7em;border-bottom:1px solid #e2e2e2;"
	"white-space:nowrap}"
	"td.num,th.num{text-align:right}"
	".pass{color:#14672a}.fail,.crashed,.hung{color:#b00020;font-weight:600}"
	".notrun,.expunged{color:#6b6b6b}"
	"article.failure{background:#fff;border:1px solid #ddd;border-left:4px solid #b00020;"
	"padding:.7em;margin:.8em 0;border-radius:4px}"
	"details{margin:.4em 0}summary{cursor:pointer;font-weight:600}"
	"pre{background:#f1f1f1;padding:.6em;overflow-x:auto;font:13px/1.35 monospace;"
	"margin:.3em 0;white-space:pre}"
	"svg{width:100%;height:auto;display:block;max-width:40em;min-width:420px}"
	"svg text{font:12px sans-serif;fill:#1b1b1b}"
	"p.note{color:#555}";

void
html_escape(struct strbuf *out, const char *s, size_t len)
{
	struct strbuf clean = STRBUF_INIT;

	text_plain(&clean, s, len);
	for (size_t i = 0; i < clean.len; i++) {
		switch (clean.buf[i]) {
		case '&':
			strbuf_adds(out, "&amp;");
			break;
		case '<':
			strbuf_adds(out, "&lt;");
			break;
		case '>':
			strbuf_adds(out, "&gt;");
			break;
		case '"':
			strbuf_adds(out, "&quot;");
			break;
		case '\'':
			strbuf_adds(out, "&#39;");
			break;
		default:
			strbuf_addch(out, clean.buf[i]);
		}
	}
	strbuf_release(&clean);
}

static void
esc(struct strbuf *out, const char *s)
{
	html_escape(out, s ? s : "", s ? strlen(s) : 0);
}

/* An id attribute's value: letters, digits and '-' only. */
static void
add_id(struct strbuf *out, const char *prefix, const char *config, const char *test)
{
	strbuf_adds(out, prefix);
	for (const char *parts[] = { config, "-", test }, **p = parts; p < parts + 3; p++)
		for (const char *c = *p; c && *c; c++)
			strbuf_addch(out, (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
							  (*c >= '0' && *c <= '9')
						  ? *c
						  : '-');
}

static void
add_summary(const struct report_input *in, struct strbuf *out)
{
	const struct run_record *rec = in->rec;
	const struct test_counts *k = &rec->counts;

	strbuf_adds(out, "<h1>fstests run ");
	esc(out, rec->id ? rec->id : "(imported)");
	strbuf_adds(out, "</h1>\n<dl id=\"summary\">\n<dt>Kernel</dt><dd>");
	esc(out, rec->kernel ? rec->kernel : "unknown");
	if (in->kernel) {
		strbuf_adds(out, " (");
		esc(out, in->kernel);
		strbuf_adds(out, ")");
	}
	strbuf_adds(out, "</dd>\n<dt>fstests</dt><dd>");
	esc(out, in->fstests ? in->fstests : "unknown");
	strbuf_addf(out,
		    "</dd>\n<dt>Results</dt><dd>%u passed, %u failed, %u not run, %.0f seconds%s"
		    "</dd>\n",
		    k->passed, k->failed + k->crashed + k->hung, k->notrun, k->seconds,
		    rec->interrupted ? " (interrupted)" : "");
	if (rec->error) {
		strbuf_adds(out, "<dt>Error</dt><dd>");
		esc(out, rec->error);
		strbuf_adds(out, "</dd>\n");
	}
	strbuf_adds(out, "</dl>\n");
}

static void
add_configs(const struct report_input *in, struct strbuf *out)
{
	const struct run_record *rec = in->rec;

	strbuf_adds(out, "<section id=\"configs\">\n<h2>Configurations</h2>\n");
	for (size_t s = 0; s < rec->nsections; s++) {
		const struct section_result *sec = &rec->sections[s];
		const struct test_counts *k = &sec->counts;

		strbuf_adds(out, "<h3>");
		esc(out, report_config_name(sec));
		strbuf_addf(out, ": %u passed, %u failed, %u not run, %.0f seconds</h3>\n",
			    k->passed, k->failed + k->crashed + k->hung, k->notrun, k->seconds);
		strbuf_adds(out, "<dl>\n<dt>FSTYP</dt><dd>");
		esc(out, sec->fstyp ? sec->fstyp : "?");
		strbuf_adds(out, "</dd>\n<dt>MKFS_OPTIONS</dt><dd>");
		esc(out, sec->mkfs_options);
		strbuf_adds(out, "</dd>\n<dt>MOUNT_OPTIONS</dt><dd>");
		esc(out, sec->mount_options);
		strbuf_adds(out, "</dd>\n</dl>\n<div class=\"scroll\"><table class=\"tests\">\n"
				 "<tr><th>test</th><th>status</th><th class=\"num\">time</th>"
				 "<th>reason</th></tr>\n");
		for (size_t t = 0; t < sec->ntests; t++) {
			const struct test_result *tr = &sec->tests[t];
			const char *st = test_status_str(tr->status);

			strbuf_adds(out, "<tr><td>");
			if (test_status_failed(tr->status)) {
				strbuf_adds(out, "<a href=\"#");
				add_id(out, "fail-", section_config_name(sec), tr->test);
				strbuf_adds(out, "\">");
				esc(out, tr->test);
				strbuf_adds(out, "</a>");
			} else {
				esc(out, tr->test);
			}
			strbuf_addf(out, "</td><td class=\"%s\">%s</td><td class=\"num\">", st, st);
			strbuf_add_seconds(out, tr->seconds);
			strbuf_adds(out, "</td><td>");
			if (tr->reason && !test_status_failed(tr->status))
				esc(out, tr->reason);
			strbuf_adds(out, "</td></tr>\n");
		}
		strbuf_adds(out, "</table></div>\n");
	}
	strbuf_adds(out, "</section>\n");
}

struct bar {
	const char *config, *test;
	double seconds;
	enum test_status status;
};

static int
bar_cmp(const void *a, const void *b)
{
	const struct bar *x = a, *y = b;

	return x->seconds < y->seconds ? 1 : x->seconds > y->seconds ? -1 : 0;
}

/* The longest tests as horizontal bars; the SVG scales with its box. */
static void
add_chart(const struct report_input *in, struct strbuf *out)
{
	const struct run_record *rec = in->rec;
	struct bar *bars = NULL;
	size_t n = 0, alloc = 0;
	double max = 0;
	const int row = 18, label = 170, width = 480;

	for (size_t s = 0; s < rec->nsections; s++)
		for (size_t t = 0; t < rec->sections[s].ntests; t++) {
			const struct test_result *tr = &rec->sections[s].tests[t];

			if (tr->seconds <= 0)
				continue;
			ALLOC_GROW(bars, n + 1, alloc);
			bars[n++] = (struct bar){ section_config_name(&rec->sections[s]), tr->test,
						  tr->seconds, tr->status };
		}
	strbuf_adds(out, "<section id=\"durations\">\n<h2>Durations</h2>\n");
	if (!n) {
		strbuf_adds(out, "<p class=\"note\">No test has a known time.</p>\n</section>\n");
		return;
	}
	qsort(bars, n, sizeof(*bars), bar_cmp);
	if (n > HTML_CHART_TESTS)
		n = HTML_CHART_TESTS;
	max = bars[0].seconds;
	strbuf_addf(out,
		    "<div class=\"scroll\"><svg viewBox=\"0 0 %d %zu\" role=\"img\" "
		    "aria-label=\"the longest tests\">\n",
		    width, n * (size_t)row + 4);
	for (size_t i = 0; i < n; i++) {
		double w = (width - label - 60) * bars[i].seconds / max;
		const char *colour = test_status_failed(bars[i].status) ? "#b00020" : "#3a6ea5";

		strbuf_addf(out, "<text x=\"0\" y=\"%zu\">", i * (size_t)row + 13);
		esc(out, bars[i].test);
		if (rec->nsections > 1) {
			strbuf_adds(out, " ");
			esc(out, bars[i].config);
		}
		strbuf_addf(out,
			    "</text><rect x=\"%d\" y=\"%zu\" width=\"%.1f\" height=\"%d\" "
			    "fill=\"%s\"/><text x=\"%.1f\" y=\"%zu\">",
			    label, i * (size_t)row + 3, w < 1 ? 1 : w, row - 5, colour,
			    label + (w < 1 ? 1 : w) + 4, i * (size_t)row + 13);
		strbuf_add_seconds(out, bars[i].seconds);
		strbuf_adds(out, "</text>\n");
	}
	strbuf_adds(out, "</svg></div>\n</section>\n");
	free(bars);
}

static void
add_baseline(const struct report_input *in, struct strbuf *out)
{
	const struct regressions *r = in->reg;

	strbuf_adds(out, "<section id=\"baseline\">\n<h2>Against the baseline</h2>\n");
	if (!r || !r->configs.n) {
		strbuf_adds(out, "<p class=\"note\">No baseline for this kernel; set one with "
				 "<code>fswb results baseline set RUN</code>.</p>\n</section>\n");
		return;
	}
	strbuf_adds(out, "<ul>\n");
	for (size_t i = 0; i < r->configs.n; i++) {
		strbuf_adds(out, "<li>");
		esc(out, r->configs.v[i]);
		strbuf_adds(out, ": run ");
		esc(out, r->runs.v[i]);
		strbuf_adds(out, "</li>\n");
	}
	strbuf_addf(out,
		    "</ul>\n<p>Regressions: %zu; expected failures: %zu; fixed: %zu.</p>\n"
		    "<div class=\"scroll\"><table class=\"compare\">\n<tr><th>change</th>"
		    "<th>config</th><th>test</th><th>baseline</th><th>now</th><th>first seen</th>"
		    "</tr>\n",
		    r->cmp.count[CMP_NEW_FAILURE], r->cmp.count[CMP_STILL_FAILING],
		    r->cmp.count[CMP_FIXED]);
	for (size_t i = 0; i < r->cmp.n; i++) {
		const struct cmp_entry *e = &r->cmp.v[i];

		if (e->kind == CMP_SAME)
			continue;
		strbuf_addf(out, "<tr class=\"%s\"><td>%s</td><td>", cmp_kind_key(e->kind),
			    cmp_kind_str(e->kind));
		esc(out, e->config);
		strbuf_adds(out, "</td><td>");
		esc(out, e->test);
		strbuf_addf(out, "</td><td>%s</td><td>%s</td><td>",
			    e->in_old ? test_status_str(e->old_status) : "-",
			    e->in_new ? test_status_str(e->new_status) : "-");
		esc(out, r->first_seen[i]);
		strbuf_adds(out, "</td></tr>\n");
	}
	strbuf_adds(out, "</table></div>\n</section>\n");
}

/* A closed <details> with a file of the run directory, when it is there. */
static void
add_file(const struct report_input *in, const char *config, const char *test, const char *ext,
	 const char *what, struct strbuf *out)
{
	char *name = xasprintf("%s%s", test, ext);
	char *text = in->run_dir ? run_dir_file(in->run_dir, config, name) : NULL;
	size_t len = text ? strlen(text) : 0;

	if (len) {
		strbuf_addf(out, "<details class=\"%s\"><summary>%s</summary><pre>", ext + 1, what);
		html_escape(out, text, len > HTML_FILE_MAX ? HTML_FILE_MAX : len);
		if (len > HTML_FILE_MAX)
			strbuf_adds(out, "\n[cut: the rest is in the run directory]");
		strbuf_adds(out, "</pre></details>\n");
	}
	free(text);
	free(name);
}

static void
add_failures(const struct report_input *in, struct strbuf *out)
{
	const struct run_record *rec = in->rec;
	bool any = false;

	strbuf_adds(out, "<section id=\"failures\">\n<h2>Failures</h2>\n");
	for (size_t s = 0; s < rec->nsections; s++) {
		const struct section_result *sec = &rec->sections[s];
		const char *cfg = section_config_name(sec);

		for (size_t t = 0; t < sec->ntests; t++) {
			const struct test_result *tr = &sec->tests[t];
			char *cmd, *flaky;

			if (!test_status_failed(tr->status))
				continue;
			any = true;
			strbuf_adds(out, "<article class=\"failure\" id=\"");
			add_id(out, "fail-", cfg, tr->test);
			strbuf_adds(out, "\">\n<h3>");
			esc(out, tr->test);
			strbuf_adds(out, " on ");
			esc(out, report_config_name(sec));
			strbuf_addf(out, ": <span class=\"%s\">%s</span></h3>\n",
				    test_status_str(tr->status), test_status_str(tr->status));
			if (tr->reason) {
				strbuf_adds(out, "<p>");
				esc(out, tr->reason);
				strbuf_adds(out, "</p>\n");
			}
			if ((flaky = report_flaky_words(in, cfg, tr->test))) {
				strbuf_adds(out, "<p class=\"flaky\">It is ");
				esc(out, flaky);
				strbuf_adds(out, ".</p>\n");
				free(flaky);
			}
			if (tr->niterations > 1) {
				unsigned passed, failed;

				test_result_run_counts(tr, &passed, &failed);
				strbuf_addf(
					out,
					"<p class=\"iterations\">It ran %zu times: %u passed, %u "
					"failed.</p>\n",
					tr->niterations, passed, failed);
			}
			if (tr->detail && *tr->detail) {
				strbuf_adds(out,
					    "<details class=\"diff\"><summary>What check printed "
					    "(the diff)</summary><pre>");
				esc(out, tr->detail);
				strbuf_adds(out, "</pre></details>\n");
			}
			add_file(in, cfg, tr->test, ".full", "The test's .full log", out);
			add_file(in, cfg, tr->test, ".kmsg", "The kernel log of this test", out);
			if (tr->hints) {
				strbuf_adds(out, "<p>check's hints:</p><pre>");
				esc(out, tr->hints);
				strbuf_adds(out, "</pre>\n");
			}
			cmd = report_fswb_command(in, cfg, tr->test);
			strbuf_adds(out, "<p>Reproduce it with fswb:</p><pre class=\"reproduce\">");
			esc(out, cmd);
			strbuf_adds(out, "</pre>\n<p>or with check, in an fstests tree whose "
					 "local.config has this configuration's settings:</p>"
					 "<pre class=\"reproduce\">./check ");
			esc(out, tr->test);
			strbuf_adds(out, "</pre>\n</article>\n");
			free(cmd);
		}
	}
	if (!any)
		strbuf_adds(out, "<p class=\"note\">No test failed.</p>\n");
	strbuf_adds(out, "</section>\n");
}

void
run_html(const struct report_input *in, struct strbuf *out)
{
	strbuf_adds(out,
		    "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
		    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
		    "style-src 'unsafe-inline'\">\n<title>fstests run ");
	esc(out, in->rec->id ? in->rec->id : "(imported)");
	strbuf_addf(out, "</title>\n<style>%s</style>\n</head>\n<body>\n<main>\n", style);
	add_summary(in, out);
	add_configs(in, out);
	add_chart(in, out);
	add_baseline(in, out);
	add_failures(in, out);
	strbuf_adds(out, "<p class=\"note\">Written by fswb, the fstests workbench.</p>\n"
			 "</main>\n</body>\n</html>\n");
}
