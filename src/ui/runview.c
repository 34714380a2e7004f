/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The run view: stages, the test list, the progress bar with counts and
 * ETA, and the kernel log beside (or below) it with follow mode and
 * scrollback. It draws a run_model, which events fill, live or replayed.
 * Every frame draws only what is on screen, so its cost does not grow with
 * the number of tests or log lines.
 *
 * A sharded run (several guests at once) gets a line per guest above the
 * body (its configuration and what it does: the test with its time and
 * expected time, a boot, a failure), and the log shows every guest's lines
 * (each with its guest's number) or one guest's: Tab goes from the tests to
 * the log of all guests, then of guest 1, 2, ... and back to the tests; the
 * line above the log says which it is.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/util.h"
#include "view/text.h"
#include "ui/ui.h"
#include "ui/ui_int.h"

struct runview {
	struct run_model *m;
	bool owned, live;
	char *title, *run_dir;
	struct listpos lp;
	bool focus_log;
	bool follow;	    /* the log shows its newest lines */
	uint64_t log_top;   /* when not following: the seq of the top line */
	bool track;	    /* the selection follows the running test */
	bool hide_console;  /* only the kernel's lines */
	bool log_only;	    /* the log takes the whole body */
	int hskip;	    /* columns scrolled right in the log */
	unsigned log_shard; /* a sharded run: the guest whose log is shown, 0 all */
	struct run_layout lay;
	int body_y, body_h;
	int shards_y, shards_h; /* the guests' lines (a sharded run) */
	size_t *order, *row_of; /* row -> test and test -> row (run_model_order) */
	size_t norder;		/* tests they cover */
};

/* The list's order, for the tests the model has now. */
static void
order_fix(struct runview *rv)
{
	const struct run_model *m = rv->m;

	if (rv->norder == m->ntests && rv->order)
		return;
	free(rv->order);
	free(rv->row_of);
	rv->order = xcalloc(m->ntests + 1, sizeof(*rv->order));
	rv->row_of = xcalloc(m->ntests + 1, sizeof(*rv->row_of));
	run_model_order(m, rv->order);
	for (size_t r = 0; r < m->ntests; r++)
		rv->row_of[rv->order[r]] = r;
	rv->norder = m->ntests;
}

/* The test on row of the list (row < ntests). */
static size_t
row_test(struct runview *rv, size_t row)
{
	order_fix(rv);
	return rv->order[row];
}

/*
 * The time the view shows: the wall clock while a live run goes, else the
 * last event's (a finished run stays as it ended). Without a display the
 * events alone decide, so saved screens do not depend on when they were taken.
 */
static uint64_t
view_now_ms(const struct runview *rv)
{
	struct timespec ts;

	if (!rv->live || rv->m->ended || ui_headless())
		return rv->m->last_ms;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ---- the test list ---- */

static void
test_mark(const struct ui *ui, const struct rm_test *t, const char **mark, enum role *role)
{
	if (t->state == RM_RUNNING) {
		*mark = ui->g.running;
		*role = R_RUN;
		return;
	}
	if (t->state == RM_PENDING || t->state == RM_UNREACHED) {
		*mark = ui->g.pending;
		*role = R_DIM;
		return;
	}
	if (t->state == RM_STOPPED) {
		*mark = ui->g.pending;
		*role = R_NOTRUN;
		return;
	}
	switch (t->status) {
	case TS_PASS:
		*mark = ui->g.pass;
		*role = R_PASS;
		break;
	case TS_NOTRUN:
		*mark = ui->g.notrun;
		*role = R_NOTRUN;
		break;
	case TS_EXPUNGED:
		*mark = ui->g.expunged;
		*role = R_DIM;
		break;
	default:
		*mark = ui->g.fail;
		*role = R_FAIL;
		break;
	}
}

/* The words after the time: the previous time, or why it did not pass. */
static void
test_words(const struct rm_test *t, uint64_t now, char *buf, size_t len)
{
	char d[32];

	buf[0] = 0;
	if (t->state == RM_RUNNING) {
		if (t->shard)
			snprintf(buf, len, "on shard %u", t->shard);
		else
			snprintf(buf, len, "running");
		return;
	}
	if (t->state == RM_PENDING) {
		if (t->prev >= 0)
			snprintf(buf, len, "(%s)", format_duration(t->prev, d, sizeof(d)));
		return;
	}
	if (t->state == RM_UNREACHED) {
		snprintf(buf, len, "not reached");
		return;
	}
	if (t->state == RM_STOPPED) {
		if (t->seconds >= 1) /* a run cut off by a killed fswb gives no time */
			snprintf(buf, len, "interrupted after %s",
				 format_duration(t->seconds, d, sizeof(d)));
		else
			snprintf(buf, len, "interrupted");
		return;
	}
	switch (t->status) {
	case TS_PASS:
		if (t->prev >= 0)
			snprintf(buf, len, "(%s)", format_duration(t->prev, d, sizeof(d)));
		break;
	case TS_NOTRUN:
		snprintf(buf, len, "not run");
		break;
	case TS_EXPUNGED:
		snprintf(buf, len, "excluded");
		break;
	case TS_CRASHED:
		snprintf(buf, len, "crashed");
		break;
	case TS_HUNG:
		snprintf(buf, len, "hung");
		break;
	case TS_FAIL:
		for (int b = 0; b < FAIL_REASON_COUNT; b++)
			if (t->reasons & (1u << b)) {
				snprintf(buf, len, "%s", fail_reason_key((enum fail_reason_bit)b));
				return;
			}
		snprintf(buf, len, "failed");
		break;
	default:
		break;
	}
}

static bool
several_configs(const struct run_model *m)
{
	for (size_t i = 1; i < m->ntests; i++) {
		const char *a = m->tests[0].config, *b = m->tests[i].config;

		if ((a == NULL) != (b == NULL) || (a && strcmp(a, b)))
			return true;
	}
	return false;
}

static void
draw_tests(struct ui *ui, struct runview *rv, const struct pane *p)
{
	struct run_model *m = rv->m;
	uint64_t now = view_now_ms(rv);
	bool cfgs = several_configs(m);
	int namew = 12;

	if (m->ntests == 0) {
		const char *what = m->ended ? "No test ran." : "Tests appear here once they start.";

		ui_put(ui, p->y + 1, p->x + 2, p->w - 3, R_DIM, what);
		return;
	}
	for (size_t i = 0; i < m->ntests; i++) {
		int w = text_width(m->tests[i].name, ui->ascii);

		if (cfgs && m->tests[i].config)
			w += 1 + text_width(m->tests[i].config, ui->ascii);
		if (w > namew)
			namew = w;
		if (i > 2000)
			break; /* good enough: the width only pads */
	}
	if (namew > p->w - 18)
		namew = p->w - 18;
	if (namew < 8)
		namew = 8;
	listpos_fix(&rv->lp, m->ntests, (size_t)p->h);
	for (int row = 0; row < p->h; row++) {
		size_t i = rv->lp.top + (size_t)row;
		const struct rm_test *t;
		const char *mark;
		enum role role;
		char secs[32], words[64], name[256];
		bool sel;
		int x = p->x;

		if (i >= m->ntests)
			break;
		t = &m->tests[row_test(rv, i)];
		sel = i == rv->lp.sel;
		test_mark(ui, t, &mark, &role);
		if (cfgs && t->config)
			snprintf(name, sizeof(name), "%s %s", t->config, t->name);
		else
			snprintf(name, sizeof(name), "%s", t->name);
		secs[0] = 0;
		if (t->state == RM_DONE && t->seconds >= 0)
			format_duration(t->seconds, secs, sizeof(secs));
		else if (t->state == RM_RUNNING && t->start_ms && now > t->start_ms)
			format_duration((double)(now - t->start_ms) / 1000.0, secs, sizeof(secs));
		test_words(t, now, words, sizeof(words));
		if (sel)
			ui_fill(ui, p->y + row, p->x, p->w, rv->focus_log ? R_DIM : R_SEL);
		if (sel && !rv->focus_log) {
			attron(A_REVERSE);
			ui_put(ui, p->y + row, x + 1, 1, R_NORMAL, mark);
			ui_put(ui, p->y + row, x + 3, namew, R_NORMAL, name);
			ui_putf(ui, p->y + row, x + 4 + namew, p->w - namew - 4, R_NORMAL,
				"%6s  %s", secs, words);
			attroff(A_REVERSE);
			continue;
		}
		ui_put(ui, p->y + row, x + 1, 1, role, mark);
		ui_put(ui, p->y + row, x + 3, namew, t->state == RM_PENDING ? R_DIM : R_NORMAL,
		       name);
		ui_putf(ui, p->y + row, x + 4 + namew, 7, R_NORMAL, "%6s", secs);
		ui_put(ui, p->y + row, x + 12 + namew, p->w - namew - 12,
		       t->state == RM_DONE && t->status != TS_PASS ? role : R_DIM, words);
	}
}

/* ---- the kernel log ---- */

static bool
line_shown(const struct runview *rv, const struct log_line *l)
{
	if (rv->log_shard && l->shard != rv->log_shard)
		return false;
	return !(rv->hide_console && (l->flags & LOGF_CONSOLE));
}

/* Index of the first line of the last h shown lines, and how many there are. */
static size_t
log_tail_start(const struct runview *rv, int h, int *count)
{
	const struct logring *r = &rv->m->log;
	size_t i = r->n;
	int got = 0;

	while (i > 0 && got < h) {
		i--;
		if (line_shown(rv, logring_get(r, i)))
			got++;
	}
	*count = got;
	return i;
}

static size_t
log_top_index(struct runview *rv, int h)
{
	const struct logring *r = &rv->m->log;
	size_t idx;
	int count;

	if (rv->follow)
		return log_tail_start(rv, h, &count);
	idx = logring_index_of(r, rv->log_top);
	if (idx == (size_t)-1) {
		/* dropped from the ring: the oldest held */
		idx = 0;
		rv->log_top = r->n ? logring_get(r, 0)->seq : 0;
	}
	return idx;
}

static enum role
line_role(unsigned flags)
{
	if (flags & (KMSG_BUG | KMSG_OOPS | KMSG_PANIC))
		return R_BAD;
	if (flags & (KMSG_WARNING | KMSG_LOCKDEP | KMSG_OTHER_BAD))
		return R_WARN;
	if (flags & KMSG_MARKER)
		return R_MARK;
	if (flags & LOGF_CONSOLE)
		return R_DIM;
	return R_NORMAL;
}

static void
draw_log(struct ui *ui, struct runview *rv, const struct pane *p)
{
	const struct logring *r = &rv->m->log;
	size_t i = log_top_index(rv, p->h);
	int row = 0;
	const char *state;
	char buf[64];

	if (r->n == 0) {
		ui_put(ui, p->y + 1, p->x + 1, p->w - 2, R_DIM,
		       "The kernel log appears here once a guest boots.");
		return;
	}
	for (; i < r->n && row < p->h; i++) {
		const struct log_line *l = logring_get(r, i);
		enum role role;
		int x = p->x + 1, w = p->w - 1;

		if (!line_shown(rv, l))
			continue;
		role = line_role(l->flags);
		if (run_model_sharded(rv->m) && !rv->log_shard) {
			/* every guest's lines: each says whose it is */
			if (l->shard)
				ui_putf(ui, p->y + row, x, 3, R_DIM, "%u", l->shard);
			x += 3;
			w -= 3;
		}
		if (l->flags & KMSG_MARKER) {
			x += ui_put(ui, p->y + row, x, w, R_MARK, ui->g.mark) + 1;
			w = p->x + p->w - x;
		}
		if (role == R_BAD || role == R_WARN)
			ui_fill(ui, p->y + row, x, w, role == R_BAD ? R_BAD : R_NORMAL);
		ui_put_slice(ui, p->y + row, x, w, rv->hskip, role, l->text);
		row++;
	}
	if (rv->follow)
		snprintf(buf, sizeof(buf), " follow %s ", ui->g.follow);
	else
		snprintf(buf, sizeof(buf), " scrolled (f follows) ");
	state = buf;
	if (p->w > 30) {
		int w = text_width(state, ui->ascii);

		ui_put(ui, p->y + p->h - 1, p->x + p->w - w, w, rv->follow ? R_DIM : R_WARN, state);
	}
}

static void
log_scroll(struct runview *rv, int delta, int h)
{
	const struct logring *r = &rv->m->log;
	size_t i = log_top_index(rv, h), tail;
	int count;

	if (!r->n)
		return;
	tail = log_tail_start(rv, h, &count);
	while (delta < 0 && i > 0) {
		i--;
		if (line_shown(rv, logring_get(r, i)))
			delta++;
	}
	while (delta > 0 && i < tail) {
		i++;
		if (i < r->n && line_shown(rv, logring_get(r, i)))
			delta--;
	}
	if (i >= tail) {
		rv->follow = true;
		return;
	}
	rv->follow = false;
	rv->log_top = logring_get(r, i)->seq;
}

/* ---- the guests of a sharded run ---- */

/* What a guest does, in words after its configuration. */
static void
shard_words(const struct run_model *m, const struct rm_shard *sh, uint64_t now, struct strbuf *out)
{
	char a[32], b[32];

	if (sh->test >= 0) {
		const struct rm_test *t = &m->tests[sh->test];

		strbuf_addf(out, "%-14s %s", t->name,
			    format_duration(now > t->start_ms ? (double)(now - t->start_ms) / 1000.0
							      : 0,
					    a, sizeof(a)));
		if (t->prev >= 0)
			strbuf_addf(out, " / ~%s", format_duration(t->prev, b, sizeof(b)));
		return;
	}
	switch (sh->state) {
	case RMS_WAITING:
		strbuf_adds(out, "waiting to start");
		break;
	case RMS_BOOTING:
		strbuf_addf(out, "booting %s",
			    format_duration(
				    now > sh->since_ms ? (double)(now - sh->since_ms) / 1000.0 : 0,
				    a, sizeof(a)));
		break;
	case RMS_TESTING:
		strbuf_adds(out, "between tests");
		break;
	case RMS_RESULTS:
		strbuf_adds(out, "collecting the results");
		break;
	case RMS_IDLE:
		strbuf_adds(out, "waiting for tests");
		break;
	case RMS_FAILED:
		strbuf_adds(out, sh->message ? sh->message : "failed");
		break;
	case RMS_DONE:
		strbuf_addf(out, "finished: %zu test%s", sh->done, sh->done == 1 ? "" : "s");
		break;
	}
	if (sh->state != RMS_WAITING && sh->boots > 1)
		strbuf_addf(out, " \xc2\xb7 %u guests booted", sh->boots);
	if (sh->crashes)
		strbuf_addf(out, " \xc2\xb7 %u crashed", sh->crashes);
}

static void
draw_shards(struct ui *ui, struct runview *rv)
{
	const struct run_model *m = rv->m;
	uint64_t now = view_now_ms(rv);
	int cfgw = 7, shown = rv->shards_h;
	struct strbuf sb = STRBUF_INIT;

	for (unsigned k = 0; k < m->nshards; k++)
		if (m->shards[k].config && (int)strlen(m->shards[k].config) > cfgw)
			cfgw = (int)strlen(m->shards[k].config);
	if ((unsigned)shown < m->nshards)
		shown--; /* the last line says how many more */
	for (int k = 0; k < shown; k++) {
		const struct rm_shard *sh = &m->shards[k];
		int y = rv->shards_y + k, x;
		bool sel = rv->log_shard == (unsigned)k + 1;
		const char *mark = sh->test >= 0	     ? ui->g.running
				   : sh->state == RMS_FAILED ? ui->g.no
				   : sh->state == RMS_DONE   ? ui->g.ok
							     : ui->g.pending;
		enum role role = sh->test >= 0		   ? R_RUN
				 : sh->state == RMS_FAILED ? R_FAIL
				 : sh->state == RMS_DONE   ? R_PASS
							   : R_DIM;

		ui_put(ui, y, 1, 1, role, mark);
		x = 3 +
		    ui_putf(ui, y, 3, ui->cols - 4, sel ? R_BOLD : R_NORMAL, "shard %-2u", k + 1);
		ui_put(ui, y, x + 1, cfgw, R_NORMAL, sh->config ? sh->config : "");
		x += 3 + cfgw;
		strbuf_reset(&sb);
		shard_words(m, sh, now, &sb);
		ui_put(ui, y, x, ui->cols - x - 1, sh->state == RMS_FAILED ? R_FAIL : R_NORMAL,
		       sb.buf);
	}
	if ((unsigned)shown < m->nshards)
		ui_putf(ui, rv->shards_y + shown, 3, ui->cols - 4, R_DIM,
			"and %u more guests (Tab shows each one's log)",
			m->nshards - (unsigned)shown);
	strbuf_release(&sb);
}

/* The line above the log says whose log it is. */
static void
draw_log_title(struct ui *ui, struct runview *rv, int y, int x)
{
	const struct run_model *m = rv->m;
	const struct rm_shard *sh = rv->log_shard ? &m->shards[rv->log_shard - 1] : NULL;

	if (sh)
		ui_putf(ui, y, x, ui->cols - x - 1, rv->focus_log ? R_BOLD : R_NORMAL,
			" kernel log of shard %u%s%s ", rv->log_shard,
			sh->config ? " \xc2\xb7 " : "", sh->config ? sh->config : "");
	else
		ui_put(ui, y, x, ui->cols - x - 1, rv->focus_log ? R_BOLD : R_NORMAL,
		       " kernel log of every guest ");
}

/* ---- the top: title, progress, stages ---- */

static void
draw_progress(struct ui *ui, struct runview *rv, int y)
{
	struct run_model *m = rv->m;
	struct strbuf sb = STRBUF_INIT, bar = STRBUF_INIT;
	size_t total = run_model_total(m);
	uint64_t now = view_now_ms(rv);
	unsigned failed = m->counts.failed + m->counts.crashed + m->counts.hung;
	char eta[32];
	int bw, x;

	strbuf_addf(&sb, "%zu/%zu   %s %u  %s %u  %s %u", m->done, total, ui->g.pass,
		    m->counts.passed, ui->g.fail, failed, ui->g.notrun, m->counts.notrun);
	if (m->ended)
		strbuf_addf(&sb, "   %s", m->interrupted ? "stopped" : "done");
	else if (m->begun)
		strbuf_addf(&sb, "   ETA %s%s", format_eta(run_model_eta(m, now), eta, sizeof(eta)),
			    run_model_preparing(m) ? " once built" : "");
	bw = ui->cols - text_width(sb.buf, ui->ascii) - 4;
	if (bw > 40)
		bw = 40;
	x = 1;
	if (bw >= 8) {
		progress_bar(m->done, total, bw, ui->g.bar_full, ui->g.bar_empty, &bar);
		ui_put(ui, y, x, bw, failed ? R_FAIL : R_PASS, bar.buf);
		x += bw + 2;
	}
	ui_put(ui, y, x, ui->cols - x - 1, R_NORMAL, sb.buf);
	strbuf_release(&sb);
	strbuf_release(&bar);
}

static void
draw_stages(struct ui *ui, struct runview *rv, int y)
{
	struct run_model *m = rv->m;
	int x = 1;

	if (!m->nstages) {
		ui_put(ui, y, 1, ui->cols - 2, R_DIM,
		       m->begun ? "starting..." : "waiting to start");
		return;
	}
	for (size_t i = 0; i < m->nstages && x < ui->cols - 2; i++) {
		const struct rm_stage *s = &m->stages[i];
		const char *mark = s->state == RM_STAGE_OK	 ? ui->g.ok
				   : s->state == RM_STAGE_FAILED ? ui->g.no
								 : ui->g.running;
		enum role role = s->state == RM_STAGE_OK       ? R_PASS
				 : s->state == RM_STAGE_FAILED ? R_FAIL
							       : R_RUN;

		x += ui_put(ui, y, x, ui->cols - x - 1, R_NORMAL, s->name) + 1;
		x += ui_put(ui, y, x, ui->cols - x - 1, role, mark);
		if (s->state == RM_STAGE_RUNNING) {
			char pct[16] = "";

			if (s->fraction >= 0)
				snprintf(pct, sizeof(pct), " %.0f%%", s->fraction * 100);
			x += ui_putf(ui, y, x, ui->cols - x - 1, R_RUN, "%s%s%s", pct,
				     s->detail ? " " : "", s->detail ? s->detail : "");
		} else if (s->state == RM_STAGE_FAILED && s->message) {
			x += 1 + ui_put(ui, y, x + 1, ui->cols - x - 2, R_FAIL, s->message);
		}
		x += 3;
	}
}

static void
runview_draw(struct ui *ui, struct view *v)
{
	struct runview *rv = v->priv;
	struct run_model *m = rv->m;
	uint64_t now = view_now_ms(rv);
	char clock[32], right[64];
	int body_y = 4, body_h = ui->rows - 6;
	static const struct keybar_item keys[] = {
		{ "Enter", "details", K_ENTER },
		{ "Tab", "pane", K_TAB },
		{ "f", "follow", 'f' },
		{ "l", "log", 'l' },
		{ "r", "rerun", 'r' },
		{ "s", "shell", 's' },
		{ "?", "docs", '?' },
		{ "q", "back", 'q' },
	};
	static const struct keybar_item live_keys[] = {
		{ "Enter", "details", K_ENTER },
		{ "Tab", "pane", K_TAB },
		{ "f", "follow", 'f' },
		{ "l", "log", 'l' },
		{ "c", "console", 'c' },
		{ "s", "look in", 's' },
		{ "?", "docs", '?' },
		{ "q", "stop", 'q' },
	};

	snprintf(right, sizeof(right), "%s %s",
		 format_clock(run_model_elapsed(m, now), clock, sizeof(clock)),
		 m->ended ? "total" : "elapsed");
	ui_put(ui, 0, 1, ui->cols - 16, R_TITLE, rv->title);
	ui_put(ui, 0, ui->cols - (int)strlen(right) - 1, (int)strlen(right), R_DIM, right);
	draw_progress(ui, rv, 1);
	draw_stages(ui, rv, 2);
	ui_hline(ui, 3, 0, ui->cols);
	if (m->messages.n) {
		const char *msg = m->messages.v[m->messages.n - 1];

		int w = ui_put(ui, 3, 2, ui->cols - 4,
			       str_startswith(msg, "error") ? R_FAIL : R_WARN, msg);

		ui_put(ui, 3, 1, 1, R_NORMAL, " ");
		ui_put(ui, 3, 2 + w, 1, R_NORMAL, " ");
	}
	if (run_model_sharded(m)) {
		/* a line per guest (a third of the body at most), a line under them */
		int most = body_h / 3 > 1 ? body_h / 3 : 1;

		rv->shards_y = body_y;
		rv->shards_h = (int)m->nshards < most ? (int)m->nshards : most;
		draw_shards(ui, rv);
		body_y += rv->shards_h + 1;
		body_h -= rv->shards_h + 1;
		ui_hline(ui, body_y - 1, 0, ui->cols);
	}
	if (body_h < 2)
		body_h = 2;
	rv->body_y = body_y;
	rv->body_h = body_h;
	if (rv->log_only) {
		rv->lay.side_by_side = true;
		rv->lay.tests = (struct pane){ body_y, 0, body_h, 0 };
		rv->lay.log = (struct pane){ body_y, 0, body_h, ui->cols };
		draw_log(ui, rv, &rv->lay.log);
	} else {
		int track = m->running;

		if (run_model_sharded(m) && rv->log_shard)
			track = m->shards[rv->log_shard - 1].test;
		run_layout(body_y, body_h, ui->cols, &rv->lay);
		if (rv->track && track >= 0) {
			order_fix(rv);
			rv->lp.sel = rv->row_of[track];
		}
		draw_tests(ui, rv, &rv->lay.tests);
		if (rv->lay.side_by_side)
			ui_vline(ui, body_y, rv->lay.sep, body_h);
		else
			ui_hline(ui, rv->lay.sep, 0, ui->cols);
		draw_log(ui, rv, &rv->lay.log);
	}
	if (run_model_sharded(m))
		draw_log_title(ui, rv, rv->lay.log.y - 1, rv->lay.log.x + 1);
	ui_hline(ui, ui->rows - 2, 0, ui->cols);
	if (ui->message) {
		int w = ui_put(ui, ui->rows - 2, 1, ui->cols - 3,
			       ui->message_error ? R_FAIL : R_BOLD, ui->message);

		ui_put(ui, ui->rows - 2, 1 + w, 1, R_NORMAL, " ");
	}
	{
		/* a sharded run's Tab goes through each guest's log too */
		bool going = rv->live && !m->ended;
		struct keybar_item k[ARRAY_SIZE(keys)];
		size_t n = going ? ARRAY_SIZE(live_keys) : ARRAY_SIZE(keys);

		memcpy(k, going ? live_keys : keys, n * sizeof(*k));
		if (run_model_sharded(m))
			k[1].what = "pane/guest";
		ui_keybar(ui, k, n);
	}
}

/* Show guest k's log (0: every guest's), from its newest lines. */
static void
show_shard_log(struct runview *rv, unsigned k)
{
	if (k != rv->log_shard) {
		rv->log_shard = k;
		rv->follow = true;
	}
	rv->focus_log = true;
}

/*
 * A sharded run's Tab: the tests, the log of every guest, of guest 1, ...
 * of guest N, the tests again (the tests are left out while the log takes
 * the whole body).
 */
static void
tab_cycle(struct runview *rv, int dir)
{
	int n = (int)rv->m->nshards, lo = rv->log_only ? 0 : -1;
	int pos = rv->focus_log || rv->log_only ? (int)rv->log_shard : -1;

	pos += dir;
	if (pos > n)
		pos = lo;
	else if (pos < lo)
		pos = n;
	if (pos < 0)
		rv->focus_log = false;
	else
		show_shard_log(rv, (unsigned)pos);
}

static void
stop_answer(struct ui *ui, bool yes)
{
	if (yes)
		ui_want_run_stop(ui);
}

static enum reaction
runview_key(struct ui *ui, struct view *v, int key)
{
	struct runview *rv = v->priv;
	struct run_model *m = rv->m;
	enum list_move mv;

	if (ui_list_key(key, &mv)) {
		if (rv->focus_log || rv->log_only) {
			int h = rv->lay.log.h;
			int d = mv == LM_UP	? -1
				: mv == LM_DOWN ? 1
				: mv == LM_PGUP ? -(h - 1)
				: mv == LM_PGDN ? h - 1
				: mv == LM_HOME ? -(int)m->log.n
						: (int)m->log.n;

			log_scroll(rv, d, h);
		} else {
			listpos_move(&rv->lp, mv, m->ntests, (size_t)rv->lay.tests.h);
			rv->track = false;
		}
		return REACT_REDRAW;
	}
	switch (key) {
	case K_TAB:
	case K_BTAB:
		if (run_model_sharded(m))
			tab_cycle(rv, key == K_TAB ? 1 : -1);
		else
			rv->focus_log = !rv->focus_log;
		return REACT_REDRAW;
	case 'f':
		rv->follow = !rv->follow;
		if (!rv->follow) {
			size_t i = log_top_index(rv, rv->lay.log.h);

			rv->follow = false;
			if (i < m->log.n)
				rv->log_top = logring_get(&m->log, i)->seq;
		} else {
			rv->track = rv->live;
		}
		return REACT_REDRAW;
	case 'l':
		rv->log_only = !rv->log_only;
		return REACT_REDRAW;
	case 'c':
		rv->hide_console = !rv->hide_console;
		ui_msg(ui, false, "%s",
		       rv->hide_console ? "kernel log only" : "console lines shown");
		return REACT_REDRAW;
	case '>':
		rv->hskip += 20;
		return REACT_REDRAW;
	case '<':
		rv->hskip = rv->hskip > 20 ? rv->hskip - 20 : 0;
		return REACT_REDRAW;
	case K_ENTER:
		if (rv->lp.sel < m->ntests)
			detail_open(ui, m, row_test(rv, rv->lp.sel), rv->run_dir, rv->live);
		return REACT_REDRAW;
	case 'r':
		if (rv->lp.sel < m->ntests) {
			if (ui_run_active(ui)) {
				ui_msg(ui, true, "a run is going: rerun a test when it has ended");
				return REACT_REDRAW;
			}
			ui_want_test_again(ui, rv->run_dir,
					   m->tests[row_test(rv, rv->lp.sel)].config,
					   m->tests[row_test(rv, rv->lp.sel)].name, false);
		}
		return REACT_REDRAW;
	case 's':
		if (rv->live && ui_run_active(ui)) {
			ui_want_look(ui); /* the guest of the running test, as fsgqa */
			return REACT_REDRAW;
		}
		if (rv->lp.sel < m->ntests) {
			if (ui_run_active(ui)) {
				ui_msg(ui, true, "a run is going: open a shell when it has ended");
				return REACT_REDRAW;
			}
			ui_want_test_again(ui, rv->run_dir,
					   m->tests[row_test(rv, rv->lp.sel)].config,
					   m->tests[row_test(rv, rv->lp.sel)].name, true);
		}
		return REACT_REDRAW;
	case 'h':
		ui_want_history(ui);
		return REACT_REDRAW;
	case 'q':
	case K_ESC:
		if (rv->live && ui_run_active(ui)) {
			ui_ask(ui, "Stop the run?", stop_answer);
			return REACT_REDRAW;
		}
		return REACT_BACK;
	default:
		return REACT_PASS;
	}
}

static enum reaction
runview_click(struct ui *ui, struct view *v, int y, int x, bool dbl)
{
	struct runview *rv = v->priv;
	const struct pane *t = &rv->lay.tests, *l = &rv->lay.log;
	size_t row;

	if (!rv->log_only && y >= t->y && y < t->y + t->h && x >= t->x && x < t->x + t->w) {
		rv->focus_log = false;
		if (listpos_hit(&rv->lp, rv->m->ntests, (size_t)(y - t->y), &row)) {
			bool again = row == rv->lp.sel;

			rv->lp.sel = row;
			rv->track = false;
			if (dbl || again)
				return runview_key(ui, v, K_ENTER);
		}
		return REACT_REDRAW;
	}
	if (y >= l->y && y < l->y + l->h && x >= l->x) {
		rv->focus_log = true;
		return REACT_REDRAW;
	}
	if (run_model_sharded(rv->m) && y >= rv->shards_y && y < rv->shards_y + rv->shards_h &&
	    (unsigned)(y - rv->shards_y) < rv->m->nshards) {
		show_shard_log(rv, (unsigned)(y - rv->shards_y) + 1);
		return REACT_REDRAW;
	}
	return REACT_NONE;
}

static void
runview_free(struct view *v)
{
	struct runview *rv = v->priv;

	if (rv->owned) {
		run_model_release(rv->m);
		free(rv->m);
	}
	free(rv->title);
	free(rv->run_dir);
	free(rv->order);
	free(rv->row_of);
	free(rv);
}

static const struct view_ops runview_ops = {
	.name = "run",
	.draw = runview_draw,
	.key = runview_key,
	.click = runview_click,
	.free = runview_free,
	.docs = "first-run.md#5-reading-the-summary",
};

void
runview_open(struct ui *ui, struct run_model *m, bool owned, bool live, const char *title,
	     const char *run_dir)
{
	struct runview *rv = xcalloc(1, sizeof(*rv));

	rv->m = m;
	rv->owned = owned;
	rv->live = live;
	rv->title = xstrdup(title ? title : "fswb");
	rv->run_dir = run_dir ? xstrdup(run_dir) : NULL;
	rv->follow = true;
	rv->track = live;
	if (!live) {
		/* a finished run: start at its first failure, if any */
		for (size_t r = 0; r < m->ntests; r++) {
			const struct rm_test *t = &m->tests[row_test(rv, r)];

			if (t->state == RM_DONE && t->status != TS_PASS && t->status != TS_NOTRUN &&
			    t->status != TS_EXPUNGED) {
				rv->lp.sel = r;
				break;
			}
		}
	}
	ui_push(ui, &runview_ops, rv);
}
