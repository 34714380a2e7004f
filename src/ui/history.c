/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * History: the runs under DATA/runs, newest first, with their summaries.
 * Enter opens one in a run view by replaying its events.jsonl through the
 * same model a live run fills; Space marks runs, and with two marked, c
 * shows what changed between them.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/event_json.h"
#include "core/paths.h"
#include "core/rundir.h"
#include "core/status.h"
#include "fstests/results.h"
#include "fstests/compare.h"
#include "fstests/history.h"
#include "view/text.h"
#include "ui/ui_int.h"

struct hist_run {
	char *id, *dir;
	struct run_record rec;
	bool loaded; /* rec came from run.json */
	char *why;   /* why it could not be read */
	char *configs;
	const char *kind; /* not a test run: "shell session", "dry run" (static) */
	bool marked;
};

struct history {
	struct hist_run *v;
	size_t n, alloc;
	struct listpos lp;
	int list_h;
	char *runs_dir;
};

static void
hist_run_release(struct hist_run *r)
{
	free(r->id);
	free(r->dir);
	run_record_release(&r->rec);
	free(r->why);
	free(r->configs);
}

static char *
record_configs(const struct run_record *rec)
{
	struct strvec sv = STRVEC_INIT;
	char *s;

	for (size_t i = 0; i < rec->nsections; i++) {
		const char *c =
			rec->sections[i].config ? rec->sections[i].config : rec->sections[i].name;

		if (c && !strvec_contains(&sv, c))
			strvec_push(&sv, c);
	}
	s = strvec_join(&sv, ",");
	strvec_clear(&sv);
	return s;
}

static void
history_scan(struct history *h)
{
	struct strvec ids = STRVEC_INIT;

	for (size_t i = 0; i < h->n; i++)
		hist_run_release(&h->v[i]);
	h->n = 0;
	rundir_list(h->runs_dir, &ids);
	/* newest first */
	for (size_t i = ids.n; i-- > 0;) {
		struct hist_run *r;
		char *json;

		ALLOC_GROW(h->v, h->n + 1, h->alloc);
		r = &h->v[h->n++];
		memset(r, 0, sizeof(*r));
		r->id = xstrdup(ids.v[i]);
		r->dir = path_join(h->runs_dir, ids.v[i]);
		json = path_join(r->dir, "run.json");
		run_record_init(&r->rec);
		if (path_exists(json) && run_record_load(json, &r->rec) == OK) {
			r->loaded = true;
		} else {
			run_record_release(&r->rec);
			run_record_init(&r->rec);
			r->why = xstrdup(path_exists(json) ? error_msg() : "no run.json");
		}
		r->configs = record_configs(&r->rec);
		r->kind = history_run_kind(r->dir);
		free(json);
	}
	strvec_clear(&ids);
}

static void
run_mark(const struct ui *ui, const struct hist_run *r, const char **mark, enum role *role)
{
	const struct test_counts *c = &r->rec.counts;

	if (!r->loaded || r->kind) {
		*mark = r->loaded ? ui->g.dot : "?";
		*role = R_DIM;
	} else if (c->failed || c->crashed || c->hung || history_run_failure(&r->rec)) {
		*mark = ui->g.fail;
		*role = R_FAIL;
	} else if (r->rec.interrupted || !r->rec.finished) {
		*mark = ui->g.warn;
		*role = R_WARN;
	} else if (c->ran) {
		*mark = ui->g.pass;
		*role = R_PASS;
	} else {
		*mark = ui->g.notrun;
		*role = R_NOTRUN;
	}
}

static void
run_summary(const struct hist_run *r, struct strbuf *sb)
{
	const struct test_counts *c = &r->rec.counts;
	unsigned bad = c->failed + c->crashed + c->hung;
	char d[32];

	if (!r->loaded) {
		strbuf_addf(sb, "(%s)", r->why ? r->why : "unreadable");
		return;
	}
	if (r->kind && !strcmp(r->kind, "detached")) {
		strbuf_adds(sb, "detached: its machines run on; Enter follows it and collects "
				"its results");
	} else if (r->kind) {
		strbuf_adds(sb, r->kind);
	} else if (history_run_failure(&r->rec)) {
		strbuf_addf(sb, "failed: %s", r->rec.error);
		return; /* the whole cause is below the list */
	} else {
		strbuf_addf(sb, "%u passed", c->passed);
		if (bad)
			strbuf_addf(sb, ", %u failed", bad);
		if (c->notrun)
			strbuf_addf(sb, ", %u not run", c->notrun);
	}
	if (r->rec.start_ms && r->rec.end_ms > r->rec.start_ms)
		strbuf_addf(sb, "  %s",
			    format_duration((double)(r->rec.end_ms - r->rec.start_ms) / 1000.0, d,
					    sizeof(d)));
	if (r->rec.interrupted)
		strbuf_adds(sb, "  stopped");
	else if (!r->rec.finished)
		strbuf_adds(sb, "  unfinished");
}

static const char *
run_date(const struct hist_run *r, char *buf, size_t len)
{
	time_t t = (time_t)(r->rec.start_ms / 1000);
	struct tm tm;

	if (!r->rec.start_ms) {
		snprintf(buf, len, "%s", r->id);
		return buf;
	}
	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%d %H:%M", &tm);
	return buf;
}

static size_t
marked_count(const struct history *h)
{
	size_t n = 0;

	for (size_t i = 0; i < h->n; i++)
		n += h->v[i].marked;
	return n;
}

static void
history_draw(struct ui *ui, struct view *v)
{
	struct history *h = v->priv;
	int body_h, y0 = ui_frame(ui, "fswb \xc2\xb7 history", NULL, &body_h);
	static const struct keybar_item keys[] = {
		{ "Enter", "open", K_ENTER }, { "Space", "mark", ' ' }, { "c", "compare", 'c' },
		{ "R", "reload", 'R' },	      { "?", "docs", '?' },	{ "q", "back", 'q' },
	};
	struct strvec cause = STRVEC_INIT;
	char date[64];

	if (!h->n) {
		ui_put(ui, y0 + 1, 2, ui->cols - 4, R_NORMAL, "No runs yet.");
		ui_putf(ui, y0 + 3, 2, ui->cols - 4, R_DIM, "Runs are kept in %s", h->runs_dir);
		ui_put(ui, y0 + 4, 2, ui->cols - 4, R_DIM,
		       "Start one from the wizard, or with 'fswb run'.");
		ui_keybar(ui, keys + 4, 2);
		return;
	}
	ui_putf(ui, y0, 2, ui->cols - 4, R_DIM, "%zu run%s%s", h->n, h->n == 1 ? "" : "s",
		marked_count(h) ? "; marked runs have a *" : "");
	h->list_h = body_h - 1;
	if (h->lp.sel < h->n && h->v[h->lp.sel].loaded && !h->v[h->lp.sel].kind &&
	    history_run_failure(&h->v[h->lp.sel].rec)) {
		/* the selected run failed to start: its whole cause under the list */
		char *why = xasprintf("failed: %s", h->v[h->lp.sel].rec.error);

		text_wrap(why, ui->cols - 4, false, &cause);
		free(why);
		size_t shown = cause.n < (size_t)(body_h / 2) ? cause.n : (size_t)(body_h / 2);

		h->list_h -= (int)shown + 1;
		for (size_t k = 0; k < shown; k++)
			ui_putf(ui, y0 + 2 + h->list_h + (int)k, 2, ui->cols - 4, R_FAIL, "%s%s",
				cause.v[k],
				k + 1 == shown && shown < cause.n ? ui->g.ellipsis : "");
		strvec_clear(&cause);
	}
	listpos_fix(&h->lp, h->n, (size_t)h->list_h);
	for (int row = 0; row < h->list_h; row++) {
		size_t i = h->lp.top + (size_t)row;
		struct hist_run *r;
		struct strbuf sb = STRBUF_INIT;
		const char *mark;
		enum role role;
		int y = y0 + 1 + row, x;
		bool sel;

		if (i >= h->n)
			break;
		r = &h->v[i];
		sel = i == h->lp.sel;
		run_mark(ui, r, &mark, &role);
		run_summary(r, &sb);
		if (sel)
			attron(A_REVERSE);
		if (sel)
			ui_fill(ui, y, 0, ui->cols, R_SEL);
		ui_put(ui, y, 1, 1, R_BOLD, r->marked ? "*" : " ");
		ui_put(ui, y, 3, 1, sel ? R_NORMAL : role, mark);
		x = 5 + ui_put(ui, y, 5, 16, R_NORMAL, run_date(r, date, sizeof(date)));
		x += 2;
		x += ui_put(ui, y, x, 18, sel ? R_NORMAL : R_BOLD,
			    r->configs && *r->configs ? r->configs : "-");
		x = x < 43 ? 43 : x + 2;
		ui_put(ui, y, x, ui->cols - x - 1, R_NORMAL, sb.buf);
		if (sel)
			attroff(A_REVERSE);
		strbuf_release(&sb);
	}
	ui_keybar(ui, keys, ARRAY_SIZE(keys));
}

/* ---- compare ---- */

struct compare_view {
	struct run_compare c;
	char *title;
	bool all; /* show unchanged tests too */
	size_t *rows, nrows;
	struct listpos lp;
	int list_h;
};

static void
compare_rows(struct compare_view *cv)
{
	free(cv->rows);
	cv->rows = xcalloc(cv->c.n + 1, sizeof(*cv->rows));
	cv->nrows = 0;
	for (size_t i = 0; i < cv->c.n; i++)
		if (cv->all || cv->c.v[i].kind != CMP_SAME)
			cv->rows[cv->nrows++] = i;
}

static const char *
status_word(bool in, enum test_status st)
{
	return in ? test_status_str(st) : "-";
}

static void
compare_draw(struct ui *ui, struct view *v)
{
	struct compare_view *cv = v->priv;
	int body_h, y0 = ui_frame(ui, cv->title, NULL, &body_h);
	struct strbuf sb = STRBUF_INIT;
	static const struct keybar_item keys[] = {
		{ "a", "all tests", 'a' },
		{ "?", "docs", '?' },
		{ "q", "back", 'q' },
	};

	for (int k = 0; k < CMP_KIND_COUNT; k++)
		if (k != CMP_SAME && cv->c.count[k])
			strbuf_addf(&sb, "%s%zu %s", sb.len ? ", " : "", cv->c.count[k],
				    cmp_kind_str((enum cmp_kind)k));
	if (!sb.len)
		strbuf_adds(&sb, "no test changed");
	strbuf_addf(&sb, "; %zu the same", cv->c.count[CMP_SAME]);
	ui_put(ui, y0, 2, ui->cols - 4, R_BOLD, sb.buf);
	strbuf_release(&sb);
	ui_putf(ui, y0 + 1, 2, ui->cols - 4, R_DIM, "%-22s %-24s %-10s %s", "change", "test",
		"before", "now");
	cv->list_h = body_h - 2;
	listpos_fix(&cv->lp, cv->nrows, (size_t)cv->list_h);
	for (int row = 0; row < cv->list_h; row++) {
		size_t i = cv->lp.top + (size_t)row;
		const struct cmp_entry *e;
		enum role role;
		char name[300];

		if (i >= cv->nrows)
			break;
		e = &cv->c.v[cv->rows[i]];
		role = e->kind == CMP_NEW_FAILURE || e->kind == CMP_STILL_FAILING ? R_FAIL
		       : e->kind == CMP_FIXED					  ? R_PASS
		       : e->kind == CMP_SAME					  ? R_DIM
										  : R_NOTRUN;
		snprintf(name, sizeof(name), "%s%s%s", e->config ? e->config : "",
			 e->config ? " " : "", e->test);
		if (i == cv->lp.sel)
			ui_fill(ui, y0 + 2 + row, 0, ui->cols, R_SEL);
		ui_put(ui, y0 + 2 + row, 2, 22, i == cv->lp.sel ? R_SEL : role,
		       cmp_kind_str(e->kind));
		ui_putf(ui, y0 + 2 + row, 25, ui->cols - 26, i == cv->lp.sel ? R_SEL : R_NORMAL,
			"%-24s %-10s %s", name, status_word(e->in_old, e->old_status),
			status_word(e->in_new, e->new_status));
	}
	ui_keybar(ui, keys, ARRAY_SIZE(keys));
}

static enum reaction
compare_key(struct ui *ui, struct view *v, int key)
{
	struct compare_view *cv = v->priv;
	enum list_move mv;

	if (ui_list_key(key, &mv)) {
		listpos_move(&cv->lp, mv, cv->nrows, (size_t)cv->list_h);
		return REACT_REDRAW;
	}
	if (key == 'a') {
		cv->all = !cv->all;
		compare_rows(cv);
		return REACT_REDRAW;
	}
	return REACT_PASS;
}

static void
compare_free(struct view *v)
{
	struct compare_view *cv = v->priv;

	run_compare_release(&cv->c);
	free(cv->rows);
	free(cv->title);
	free(cv);
}

static const struct view_ops compare_ops = {
	.name = "compare",
	.draw = compare_draw,
	.key = compare_key,
	.free = compare_free,
	.docs = "reading-failures.md",
};

static void
compare_open(struct ui *ui, struct history *h)
{
	struct hist_run *a = NULL, *b = NULL;
	struct compare_view *cv;

	/* the list is newest first: the second marked is the older */
	for (size_t i = 0; i < h->n; i++)
		if (h->v[i].marked) {
			if (!b)
				b = &h->v[i];
			else if (!a)
				a = &h->v[i];
		}
	if (!a || !b) {
		ui_msg(ui, true, "mark two runs with Space first");
		return;
	}
	if (!a->loaded || !b->loaded) {
		ui_msg(ui, true, "run '%s' has no readable run.json", a->loaded ? b->id : a->id);
		return;
	}
	cv = xcalloc(1, sizeof(*cv));
	run_compare(&a->rec, &b->rec, NULL, &cv->c);
	cv->title = xasprintf("fswb \xc2\xb7 compare %s \xe2\x86\x92 %s", a->id, b->id);
	compare_rows(cv);
	ui_push(ui, &compare_ops, cv);
}

/* ---- keys ---- */

static enum reaction
history_key(struct ui *ui, struct view *v, int key)
{
	struct history *h = v->priv;
	enum list_move mv;

	if (key != ' ' && ui_list_key(key, &mv)) {
		listpos_move(&h->lp, mv, h->n, (size_t)h->list_h);
		return REACT_REDRAW;
	}
	switch (key) {
	case K_ENTER:
	case K_RIGHT:
		if (h->lp.sel < h->n && h->v[h->lp.sel].kind &&
		    !strcmp(h->v[h->lp.sel].kind, "detached"))
			ui_run_follow(ui, h->v[h->lp.sel].dir); /* fswb results fetch */
		else if (h->lp.sel < h->n)
			history_open_run(ui, h->v[h->lp.sel].dir);
		return REACT_REDRAW;
	case ' ':
		if (h->lp.sel < h->n) {
			struct hist_run *r = &h->v[h->lp.sel];

			if (!r->marked && marked_count(h) >= 2) {
				ui_msg(ui, true,
				       "two runs are marked already: Space on one unmarks it");
				return REACT_REDRAW;
			}
			r->marked = !r->marked;
			if (marked_count(h) == 2)
				ui_msg(ui, false, "two runs marked: c compares them");
			listpos_move(&h->lp, LM_DOWN, h->n, (size_t)h->list_h);
		}
		return REACT_REDRAW;
	case 'c':
		compare_open(ui, h);
		return REACT_REDRAW;
	case 'R':
		history_scan(h);
		return REACT_REDRAW;
	default:
		return REACT_PASS;
	}
}

static enum reaction
history_click(struct ui *ui, struct view *v, int y, int x, bool dbl)
{
	struct history *h = v->priv;
	size_t row;

	if (y < 3 || !listpos_hit(&h->lp, h->n, (size_t)(y - 3), &row))
		return REACT_NONE;
	if (dbl || row == h->lp.sel) {
		h->lp.sel = row;
		return history_key(ui, v, K_ENTER);
	}
	h->lp.sel = row;
	return REACT_REDRAW;
}

static void
history_free(struct view *v)
{
	struct history *h = v->priv;

	for (size_t i = 0; i < h->n; i++)
		hist_run_release(&h->v[i]);
	free(h->v);
	free(h->runs_dir);
	free(h);
}

static void
history_resume(struct ui *ui, struct view *v)
{
	struct history *h = v->priv;
	size_t sel = h->lp.sel;
	char *keep = sel < h->n ? xstrdup(h->v[sel].id) : NULL;

	/* a run may have finished meanwhile */
	history_scan(h);
	for (size_t i = 0; keep && i < h->n; i++)
		if (!strcmp(h->v[i].id, keep))
			h->lp.sel = i;
	free(keep);
}

static const struct view_ops history_ops = {
	.name = "history",
	.draw = history_draw,
	.key = history_key,
	.click = history_click,
	.resume = history_resume,
	.free = history_free,
	.docs = "first-run.md#5-reading-the-summary",
};

void
history_open(struct ui *ui)
{
	struct history *h = xcalloc(1, sizeof(*h));

	h->runs_dir = rundir_root();
	history_scan(h);
	ui_push(ui, &history_ops, h);
}

/* ---- opening one run ---- */

/* Feed a run.json's tests to the model (a run without events.jsonl). */
static void
model_from_record(struct run_model *m, const struct run_record *rec)
{
	struct event ev;

	memset(&ev, 0, sizeof(ev));
	ev.type = EV_RUN_BEGIN;
	ev.wall_ms = rec->start_ms;
	ev.u.run.id = rec->id;
	run_model_event(m, &ev);
	for (size_t s = 0; s < rec->nsections; s++) {
		const struct section_result *sec = &rec->sections[s];

		for (size_t t = 0; t < sec->ntests; t++) {
			const struct test_result *tr = &sec->tests[t];

			memset(&ev, 0, sizeof(ev));
			ev.type = EV_TEST_END;
			ev.wall_ms = rec->start_ms;
			ev.config = sec->config ? sec->config : sec->name;
			ev.u.test_end.test = tr->test;
			ev.u.test_end.status = tr->status;
			ev.u.test_end.seconds = tr->seconds;
			ev.u.test_end.reasons = tr->reasons;
			ev.u.test_end.reason = tr->reason;
			ev.u.test_end.detail = tr->detail;
			ev.u.test_end.hints = tr->hints;
			run_model_event(m, &ev);
		}
	}
	memset(&ev, 0, sizeof(ev));
	ev.type = EV_RUN_END;
	ev.wall_ms = rec->end_ms ? rec->end_ms : rec->start_ms;
	ev.u.end.exit_code = rec->exit_code;
	ev.u.end.interrupted = rec->interrupted;
	ev.u.end.counts = rec->counts;
	run_model_event(m, &ev);
}

static char *
resolve_run(const char *run)
{
	char *runs, *dir;

	if (path_is_dir(run))
		return xstrdup(run);
	if (strchr(run, '/'))
		return NULL;
	runs = rundir_root();
	dir = path_join(runs, run);
	free(runs);
	if (path_is_dir(dir))
		return dir;
	free(dir);
	return NULL;
}

bool
history_open_run(struct ui *ui, const char *run)
{
	struct event_bus bus = EVENT_BUS_INIT;
	struct run_model *m;
	struct run_record rec;
	char *dir = resolve_run(run), *events, *json, *title, *configs = NULL;
	const char *base;
	unsigned skipped = 0;
	bool have_rec;

	if (!dir) {
		ui_msg(ui, true, "no run '%s': give a run id (see the history) or a run directory",
		       run);
		return false;
	}
	events = path_join(dir, "events.jsonl");
	json = path_join(dir, "run.json");
	run_record_init(&rec);
	have_rec = path_exists(json) && run_record_load(json, &rec) == OK;
	m = xmalloc(sizeof(*m));
	run_model_init(m);
	if (path_exists(events)) {
		event_bus_add(&bus, run_model_listener(m));
		if (event_replay_file(events, &bus, &skipped) != OK)
			ui_msg(ui, true, "%s", error_msg());
		else if (skipped)
			ui_msg(ui, false, "%u line%s of events.jsonl could not be read", skipped,
			       skipped == 1 ? "" : "s");
		event_bus_release(&bus);
		if (m->begun && !m->ended) {
			/* fswb was killed, or the machine stopped: the run ends where its events do */
			struct event ev;

			memset(&ev, 0, sizeof(ev));
			ev.type = EV_RUN_END;
			ev.wall_ms = m->last_ms;
			ev.u.end.exit_code = 2;
			ev.u.end.interrupted = true;
			run_model_event(m, &ev);
			ui_msg(ui, true, "this run was cut off before its summary (fswb killed?)");
		}
	} else if (have_rec) {
		model_from_record(m, &rec);
	} else {
		ui_msg(ui, true, "'%s' has neither events.jsonl nor a readable run.json", dir);
	}
	base = strrchr(dir, '/');
	base = base && base[1] ? base + 1 : dir;
	if (have_rec)
		configs = record_configs(&rec);
	title = xasprintf("fswb \xc2\xb7 run %s%s%s%s%s", m->id ? m->id : base,
			  configs && *configs ? " \xc2\xb7 " : "", configs ? configs : "",
			  rec.kernel ? " \xc2\xb7 " : "", rec.kernel ? rec.kernel : "");
	runview_open(ui, m, true, false, title, dir);
	free(title);
	free(configs);
	run_record_release(&rec);
	free(events);
	free(json);
	free(dir);
	return true;
}
