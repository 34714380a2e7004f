/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The test detail: one test of a run in panes: the golden-output diff in
 * colour, its .full log, its kernel log alone, and what it means (the
 * not-run explainer, the failure's causes). r runs it again alone; m
 * writes its report for a mailing list (`fswb results report`) to a file
 * of the run directory.
 *
 * Files come from the run directory: run.json's artifact paths (moved
 * directories are looked up below run_dir/results/ too), else
 * results/CONFIG/TEST.* by name. The golden .out is in the fstests tree of
 * the run's plan.json when that is a directory; without it the diff check
 * printed (the test's detail) is shown.
 */
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "core/paths.h"
#include "core/profile.h"
#include "core/status.h"
#include "fstests/kmsg.h"
#include "fstests/notrun.h"
#include "fstests/results.h"
#include "rootfs/appliance.h"
#include "view/diff.h"
#include "ui/pager.h"
#include "run/reportctx.h"

#define DETAIL_FILE_MAX (4u << 20)

struct detail {
	char *run_dir, *config, *test;
};

/* An artifact path that exists: as recorded, else the same below run_dir. */
static char *
artifact(const char *recorded, const char *run_dir)
{
	const char *r;

	if (!recorded)
		return NULL;
	if (path_exists(recorded))
		return xstrdup(recorded);
	r = run_dir ? strstr(recorded, "/results/") : NULL;
	if (r) {
		char *p = path_join(run_dir, r + 1);

		if (path_exists(p))
			return p;
		free(p);
	}
	return NULL;
}

/* results/CONFIG/TEST.ext in the run directory, the way the engine names it. */
static char *
guess(const char *run_dir, const char *config, const char *test, const char *ext)
{
	char *cfg, *p;

	if (!run_dir)
		return NULL;
	cfg = xstrdup(config ? config : "");
	for (char *c = cfg; *c; c++)
		if (*c == '/')
			*c = '-';
	p = xasprintf("%s/results/%s%s%s%s", run_dir, cfg, *cfg ? "/" : "", test, ext);
	free(cfg);
	if (path_exists(p))
		return p;
	free(p);
	return NULL;
}

static char *
slurp(const char *path)
{
	char *text = NULL;
	size_t len;

	if (!path)
		return NULL;
	if (read_file(path, DETAIL_FILE_MAX, &text, &len) != OK) {
		error_clear();
		return NULL;
	}
	return text;
}

static char *
golden_out(const char *run_dir, const char *test)
{
	struct plan plan;
	char *planf, *p = NULL;

	if (!run_dir)
		return NULL;
	planf = path_join(run_dir, "plan.json");
	plan_init(&plan);
	if (path_exists(planf) && plan_load(planf, &plan) == OK && plan.fstests_src &&
	    path_is_dir(plan.fstests_src)) {
		p = xasprintf("%s/tests/%s.out", plan.fstests_src, test);
		if (!path_exists(p)) {
			free(p);
			p = NULL;
		}
	}
	error_clear();
	plan_release(&plan);
	free(planf);
	return p;
}

static enum role
diff_role(const char *line)
{
	if (str_startswith(line, "+++") || str_startswith(line, "---"))
		return R_BOLD;
	if (str_startswith(line, "@@"))
		return R_HUNK;
	if (line[0] == '+')
		return R_ADD;
	if (line[0] == '-')
		return R_DEL;
	return R_NORMAL;
}

static void
add_diff_lines(struct textdoc *d, const char *text)
{
	const char *p = text;

	for (;;) {
		const char *nl = strchr(p, '\n');
		char *line = nl ? xstrndup(p, (size_t)(nl - p)) : xstrdup(p);

		textdoc_add(d, diff_role(line), line);
		free(line);
		if (!nl || !nl[1])
			break;
		p = nl + 1;
	}
}

static void
add_kmsg_lines(struct textdoc *d, const char *text)
{
	const char *p = text;

	for (;;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		char *line = xstrndup(p, n);
		unsigned f = kmsg_classify(line, n);
		enum role role = f & (KMSG_BUG | KMSG_OOPS | KMSG_PANIC)	      ? R_BAD
				 : f & (KMSG_WARNING | KMSG_LOCKDEP | KMSG_OTHER_BAD) ? R_WARN
				 : strstr(line, "run fstests ")			      ? R_MARK
										      : R_NORMAL;

		textdoc_add(d, role, line);
		free(line);
		if (!nl || !nl[1])
			break;
		p = nl + 1;
	}
}

static const char *
reason_meaning(enum fail_reason_bit b)
{
	switch (b) {
	case FAIL_MISMATCH_BIT:
		return "the test printed something its golden output (.out) does not have, or "
		       "missed something it has: the diff shows which lines";
	case FAIL_FSCK_BIT:
		return "after the test, fsck found the filesystem inconsistent: the .full log has "
		       "fsck's output";
	case FAIL_DMESG_BIT:
		return "the kernel logged a warning, a BUG, an oops or a lockdep report during "
		       "the test: see its kernel log";
	case FAIL_EXIT_BIT:
		return "the test script failed with an error exit status";
	case FAIL_CORE_BIT:
		return "a program dumped core during the test";
	case FAIL_KMEMLEAK_BIT:
		return "kmemleak found memory the kernel leaked during the test";
	default:
		return NULL;
	}
}

static void
add_hints(struct textdoc *d, const struct rm_test *t, const struct notrun_context *ctx, int width)
{
	struct notrun_explanation ex;

	if (t->state == RM_STOPPED) {
		char took[32], *s = xasprintf("Interrupted%s%s: the run was stopped while it ran, "
					      "so it has no outcome.",
					      t->seconds >= 0 ? " after " : "",
					      t->seconds >= 0 ? format_duration(t->seconds, took,
										sizeof(took))
							      : "");

		textdoc_add_wrapped(d, R_BOLD, s, width);
		free(s);
		return;
	}
	if (t->state != RM_DONE) {
		textdoc_add(d, R_BOLD,
			    t->state == RM_RUNNING ? "This test is running."
			    : t->state == RM_UNREACHED
				    ? "Not reached: the run was stopped before it."
				    : "Not run yet.");
		return;
	}
	switch (t->status) {
	case TS_PASS:
		textdoc_add(d, R_PASS, "Passed: its output matched the golden output.");
		break;
	case TS_NOTRUN:
		notrun_explain(t->reason ? t->reason : "", ctx, &ex);
		textdoc_add(d, R_NOTRUN,
			    ex.natural ? "Not run: the test does not apply here (nothing is wrong)."
			    : ex.fix   ? "Not run: something it needs is missing, and can be fixed."
				       : "Not run: the test decided not to run.");
		textdoc_add(d, R_NORMAL, "");
		textdoc_add_wrapped(d, R_NORMAL, t->reason ? t->reason : "(no reason given)",
				    width);
		textdoc_add(d, R_NORMAL, "");
		if (ex.id) {
			char *s = xasprintf("Why: %s", ex.cause);

			textdoc_add_wrapped(d, R_BOLD, s, width);
			free(s);
		}
		if (ex.fix) {
			char *s = xasprintf("%s%s", ex.natural ? "" : "Fix: ", ex.fix);

			textdoc_add_wrapped(d, ex.natural ? R_DIM : R_NORMAL, s, width);
			free(s);
		}
		notrun_explanation_release(&ex);
		break;
	case TS_CRASHED:
		textdoc_add(d, R_FAIL, "Crashed: the guest died while this test ran.");
		textdoc_add_wrapped(d, R_NORMAL,
				    "Its kernel log usually shows why (a panic or an oops). The "
				    "tests after it ran in a new guest.",
				    width);
		break;
	case TS_HUNG:
		textdoc_add(d, R_FAIL, "Hung: the guest stopped answering during this test.");
		textdoc_add_wrapped(d, R_NORMAL,
				    "Its kernel log may show a hung task or a lockup. Give slow "
				    "tests more time with --test-timeout.",
				    width);
		break;
	case TS_EXPUNGED:
		textdoc_add(d, R_DIM,
			    "Excluded: an exclusion (-e, -E or the configuration's "
			    "exclude file) left it out.");
		break;
	default:
		textdoc_add(d, R_FAIL, "Failed.");
		if (t->reason)
			textdoc_add_wrapped(d, R_NORMAL, t->reason, width);
		textdoc_add(d, R_NORMAL, "");
		for (int b = 0; b < FAIL_REASON_COUNT; b++) {
			const char *m;
			char *s;

			if (!(t->reasons & (1u << b)))
				continue;
			m = reason_meaning((enum fail_reason_bit)b);
			s = xasprintf("%s: %s", fail_reason_str((enum fail_reason_bit)b),
				      m ? m : "see the .full log");
			textdoc_add_wrapped(d, R_BOLD, s, width);
			free(s);
		}
		textdoc_add(d, R_NORMAL, "");
		if (t->hints) {
			textdoc_add_wrapped(d, R_BOLD,
					    "The test names a fix for this failure: see whether "
					    "the kernel (or tool) under test has it.",
					    width);
			textdoc_add_lines(d, R_NORMAL, t->hints);
			textdoc_add(d, R_NORMAL, "");
		}
		textdoc_add_wrapped(d, R_DIM,
				    "r runs this test again alone, to see whether it fails "
				    "every time.",
				    width);
		break;
	}
}

/* m: the test's report for a mailing list, in RUN_DIR/report-TEST.txt. */
static void
write_report(struct ui *ui, const struct detail *dt)
{
	struct strbuf sb = STRBUF_INIT;
	struct run_words w;
	char *name, *path;

	if (!dt->run_dir || run_words_load(dt->run_dir, &w) != OK) {
		ui_msg(ui, true, "no report: %s", dt->run_dir ? error_msg() : "no run directory");
		return;
	}
	w.in.test = dt->test;
	name = xasprintf("report-%s.txt", dt->test);
	for (char *c = name; *c; c++)
		if (*c == '/')
			*c = '-';
	path = path_join(dt->run_dir, name);
	if (report_text(&w.in, &sb) != OK || write_file_atomic(path, sb.buf, sb.len, 0644) != OK)
		ui_msg(ui, true, "no report: %s", error_msg());
	else
		ui_msg(ui, false, "the report for the mailing list is in %s", path);
	free(path);
	free(name);
	strbuf_release(&sb);
	run_words_release(&w);
}

static enum reaction
detail_key(struct ui *ui, struct pager *p, int key)
{
	struct detail *dt = p->data;

	switch (key) {
	case 'r':
		if (ui_run_active(ui)) {
			ui_msg(ui, true, "a run is going: rerun a test when it has ended");
			return REACT_REDRAW;
		}
		ui_want_test_again(ui, dt->run_dir, dt->config, dt->test, false);
		return REACT_REDRAW;
	case 's':
		if (ui_run_active(ui)) {
			ui_msg(ui, true, "a run is going: open a shell when it has ended");
			return REACT_REDRAW;
		}
		ui_want_test_again(ui, dt->run_dir, dt->config, dt->test, true);
		return REACT_REDRAW;
	case 'm':
		write_report(ui, dt);
		return REACT_REDRAW;
	case '?':
		ui_want_docs(ui, "reading-failures.md");
		return REACT_REDRAW;
	default:
		return REACT_PASS;
	}
}

static void
detail_free(void *data)
{
	struct detail *dt = data;

	free(dt->run_dir);
	free(dt->config);
	free(dt->test);
	free(dt);
}

static const struct keybar_item detail_keys[] = {
	{ "r", "rerun alone", 'r' },
	{ "s", "shell", 's' },
	{ "m", "mail report", 'm' },
};

static const struct pager_hooks detail_hooks = {
	.key = detail_key,
	.keys = detail_keys,
	.nkeys = ARRAY_SIZE(detail_keys),
	.free = detail_free,
	.docs = "reading-failures.md",
};

static struct test_result *
record_test(struct run_record *rec, const char *config, const char *test)
{
	for (size_t s = 0; s < rec->nsections; s++) {
		struct section_result *sec = &rec->sections[s];
		const char *c = sec->config ? sec->config : sec->name;

		if (config && c && strcmp(c, config))
			continue;
		for (size_t i = 0; i < sec->ntests; i++)
			if (!strcmp(sec->tests[i].test, test))
				return &sec->tests[i];
	}
	return NULL;
}

void
detail_open(struct ui *ui, struct run_model *m, size_t idx, const char *run_dir, bool live)
{
	const struct rm_test *t = &m->tests[idx];
	struct run_record rec;
	struct test_result *tr = NULL;
	struct detail *dt = xcalloc(1, sizeof(*dt));
	struct pager *p;
	struct textdoc *d;
	char *json, *out_bad, *full, *kmsg, *dmesg, *golden, *title;
	char *text, *gtext;
	const char *what;
	int width = ui->cols - 4;

	run_record_init(&rec);
	json = run_dir ? path_join(run_dir, "run.json") : NULL;
	if (json && path_exists(json) && run_record_load(json, &rec) == OK)
		tr = record_test(&rec, t->config, t->name);
	error_clear();
	out_bad = artifact(tr ? tr->out_bad : NULL, run_dir);
	full = artifact(tr ? tr->full : NULL, run_dir);
	kmsg = artifact(tr ? tr->kmsg : NULL, run_dir);
	dmesg = artifact(tr ? tr->dmesg : NULL, run_dir);
	if (!out_bad)
		out_bad = guess(run_dir, t->config, t->name, ".out.bad");
	if (!full)
		full = guess(run_dir, t->config, t->name, ".full");
	if (!kmsg)
		kmsg = guess(run_dir, t->config, t->name, ".kmsg");
	if (!dmesg)
		dmesg = guess(run_dir, t->config, t->name, ".dmesg");
	golden = golden_out(run_dir, t->name);

	what = t->state == RM_RUNNING	  ? "running"
	       : t->state == RM_PENDING	  ? "not run yet"
	       : t->state == RM_STOPPED	  ? "interrupted"
	       : t->state == RM_UNREACHED ? "not reached"
	       : t->status == TS_FAIL ? (t->reasons & FAIL_MISMATCH ? "output mismatch" : "failed")
				      : test_status_str(t->status);
	title = xasprintf("fswb \xc2\xb7 %s \xc2\xb7 %s", t->name, what);
	p = pager_new(title);
	free(title);
	p->right = t->config ? xstrdup(t->config) : NULL;

	/* the diff */
	d = pager_tab(p, "diff");
	text = slurp(out_bad);
	gtext = slurp(golden);
	if (text && gtext) {
		struct strvec lines = STRVEC_INIT;
		char *an = xasprintf("tests/%s.out", t->name);
		char *bn = xasprintf("results/%s.out.bad", t->name);

		if (diff_unified(gtext, text, an, bn, 3, &lines) == 0)
			textdoc_add(d, R_PASS, "The output matches the golden output.");
		for (size_t i = 0; i < lines.n; i++)
			textdoc_add(d, diff_role(lines.v[i]), lines.v[i]);
		strvec_clear(&lines);
		free(an);
		free(bn);
	} else if (t->detail) {
		add_diff_lines(d, t->detail);
	} else if (text) {
		textdoc_add(d, R_DIM, "What the test printed (the golden output is not here):");
		textdoc_add_lines(d, R_NORMAL, text);
	} else {
		textdoc_add(d, R_DIM,
			    t->state == RM_DONE && t->status == TS_PASS
				    ? "No diff: the output matched the golden output."
				    : "No diff: the test left no .out.bad.");
	}
	free(text);
	free(gtext);

	/* .full */
	d = pager_tab(p, "full");
	text = slurp(full);
	if (text && *text)
		textdoc_add_lines(d, R_NORMAL, text);
	else
		textdoc_add(d, R_DIM, "No .full log for this test.");
	free(text);

	/* its kernel log */
	d = pager_tab(p, t->bad_lines ? "kernel log (!)" : "kernel log");
	text = slurp(kmsg);
	if (!text)
		text = slurp(dmesg);
	if (text && *text) {
		add_kmsg_lines(d, text);
	} else {
		size_t shown = 0;

		for (size_t i = 0; i < m->log.n; i++) {
			const struct log_line *l = logring_get(&m->log, i);

			if (l->test != (int)idx || (l->flags & LOGF_CONSOLE))
				continue;
			textdoc_add(d,
				    l->flags & (KMSG_BUG | KMSG_OOPS | KMSG_PANIC) ? R_BAD
				    : l->flags & KMSG_BAD			   ? R_WARN
				    : l->flags & KMSG_MARKER			   ? R_MARK
										   : R_NORMAL,
				    l->text);
			shown++;
		}
		if (!shown)
			textdoc_add(d, R_DIM, "No kernel-log lines for this test.");
	}
	free(text);

	/* what it means */
	d = pager_tab(p, "hints");
	{
		const struct profiles *prof = ui_profiles(ui);
		const struct fs_config *fc =
			prof && t->config ? profiles_config(prof, t->config) : NULL;
		struct notrun_context ctx = { prof, fc ? fc->fstyp : NULL, appliance_packages,
					      backend_own_machine(rec.backend) };

		add_hints(d, t, &ctx, width);
	}

	/* start in the pane that says most */
	if (t->state == RM_DONE && t->status == TS_NOTRUN)
		p->tab = 3;
	else if (t->state == RM_DONE && !(t->reasons & FAIL_MISMATCH) &&
		 (t->reasons & FAIL_DMESG || t->status == TS_CRASHED || t->status == TS_HUNG))
		p->tab = 2;

	dt->run_dir = run_dir ? xstrdup(run_dir) : NULL;
	dt->config = t->config ? xstrdup(t->config) : NULL;
	dt->test = xstrdup(t->name);
	pager_open(ui, p, &detail_hooks, dt);
	(void)live;
	run_record_release(&rec);
	free(json);
	free(out_bad);
	free(full);
	free(kmsg);
	free(dmesg);
	free(golden);
}
