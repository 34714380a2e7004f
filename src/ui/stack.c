/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The view stack: push and pop, the top view drawn once per frame when
 * something changed, the message line, the yes/no question, and the
 * requests views make of the TUI (see ui_int.h). It knows no view by
 * name; src/ui/input.c serves the requests.
 */
#include <stdlib.h>
#include <string.h>

#include "core/paths.h"
#include "core/status.h"
#include "view/text.h"
#include "ui/ui_int.h"

static void ui_draw(struct ui *ui);

static void
on_frame(struct loop *loop, void *data)
{
	struct ui *ui = data;

	ui->frame_timer = 0;
	if (ui->dirty)
		ui_draw(ui);
}

void
ui_dirty(struct ui *ui)
{
	uint64_t now, wait = 0;

	ui->dirty = true;
	if (ui->frame_timer || !ui->loop)
		return;
	now = loop_now_ms();
	if (ui->last_frame_ms && now < ui->last_frame_ms + UI_FRAME_MS)
		wait = ui->last_frame_ms + UI_FRAME_MS - now;
	ui->frame_timer = loop_add_timer(ui->loop, wait, false, on_frame, ui);
}

struct view *
ui_top(struct ui *ui)
{
	return ui->depth ? &ui->stack[ui->depth - 1] : NULL;
}

void
ui_push(struct ui *ui, const struct view_ops *ops, void *priv)
{
	if (ui->depth == UI_MAX_VIEWS) {
		/* drop the oldest above the first: deep chains of views are rare */
		struct view *v = &ui->stack[1];

		if (v->ops->free)
			v->ops->free(v);
		memmove(&ui->stack[1], &ui->stack[2], (UI_MAX_VIEWS - 2) * sizeof(*v));
		ui->depth--;
	}
	ui->stack[ui->depth].ops = ops;
	ui->stack[ui->depth].priv = priv;
	ui->depth++;
	ui_dirty(ui);
}

void
ui_pop(struct ui *ui)
{
	struct view *v;

	if (!ui->depth)
		return;
	v = &ui->stack[--ui->depth];
	if (v->ops->free)
		v->ops->free(v);
	memset(v, 0, sizeof(*v));
	if (ui->depth && ui_top(ui)->ops->resume)
		ui_top(ui)->ops->resume(ui, ui_top(ui));
	if (!ui->depth)
		ui->quit = true;
	ui_dirty(ui);
}

void
ui_ask(struct ui *ui, const char *question, void (*fn)(struct ui *ui, bool yes))
{
	free(ui->ask);
	ui->ask = xstrdup(question);
	ui->ask_fn = fn;
	ui_dirty(ui);
}

bool
ui_list_key(int key, enum list_move *mv)
{
	switch (key) {
	case K_UP:
	case 'k':
		*mv = LM_UP;
		return true;
	case K_DOWN:
	case 'j':
		*mv = LM_DOWN;
		return true;
	case K_PGUP:
	case K_CTRL('b'):
		*mv = LM_PGUP;
		return true;
	case K_PGDN:
	case K_CTRL('f'):
	case ' ':
		*mv = LM_PGDN;
		return true;
	case K_HOME:
	case 'g':
		*mv = LM_HOME;
		return true;
	case K_END:
	case 'G':
		*mv = LM_END;
		return true;
	default:
		return false;
	}
}

const struct profiles *
ui_profiles(struct ui *ui)
{
	char *datadir, *dir;

	if (ui->have_profiles)
		return &ui->profiles;
	if (ui->profiles_error)
		return NULL;
	datadir = fswb_datadir();
	dir = path_join(datadir, "profiles");
	if (profiles_load(dir, &ui->profiles) == OK)
		ui->have_profiles = true;
	else
		ui->profiles_error = xstrdup(error_msg());
	free(datadir);
	free(dir);
	return ui->have_profiles ? &ui->profiles : NULL;
}

void
ui_msg(struct ui *ui, bool is_error, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = xstrdup("");
	va_end(ap);
	free(ui->message);
	ui->message = s;
	ui->message_error = is_error;
	ui_dirty(ui);
}

static void
request(struct ui *ui, enum ui_request_kind kind, const char *page, const char *run_dir,
	const char *config, const char *test, bool shell)
{
	struct ui_request *r;

	if (ui->nrequests == UI_MAX_REQUESTS)
		return; /* a burst of keys: the first ones are served */
	r = &ui->requests[ui->nrequests++];
	r->kind = kind;
	r->page = page ? xstrdup(page) : NULL;
	r->run_dir = run_dir ? xstrdup(run_dir) : NULL;
	r->config = config ? xstrdup(config) : NULL;
	r->test = test ? xstrdup(test) : NULL;
	r->shell = shell;
}

void
ui_want_docs(struct ui *ui, const char *page)
{
	request(ui, UI_REQ_DOCS, page, NULL, NULL, NULL, false);
}

void
ui_want_docs_search(struct ui *ui, const char *query)
{
	request(ui, UI_REQ_DOCS_SEARCH, query, NULL, NULL, NULL, false);
}

void
ui_want_screen_back(struct ui *ui)
{
	request(ui, UI_REQ_SCREEN_BACK, NULL, NULL, NULL, NULL, false);
}

void
ui_want_history(struct ui *ui)
{
	request(ui, UI_REQ_HISTORY, NULL, NULL, NULL, NULL, false);
}

void
ui_want_run_stop(struct ui *ui)
{
	request(ui, UI_REQ_RUN_STOP, NULL, NULL, NULL, NULL, false);
}

void
ui_want_test_again(struct ui *ui, const char *run_dir, const char *config, const char *test,
		   bool shell)
{
	request(ui, UI_REQ_TEST_AGAIN, NULL, run_dir, config, test, shell);
}

void
ui_want_look(struct ui *ui)
{
	request(ui, UI_REQ_LOOK, NULL, NULL, NULL, NULL, false);
}

void
ui_want_shell(struct ui *ui)
{
	request(ui, UI_REQ_SHELL, NULL, NULL, NULL, NULL, false);
}

void
ui_request_release(struct ui_request *r)
{
	free(r->page);
	free(r->run_dir);
	free(r->config);
	free(r->test);
	memset(r, 0, sizeof(*r));
}

bool
ui_run_active(const struct ui *ui)
{
	return ui->run_going;
}

/* ---- drawing ---- */

/*
 * The question in a box of its own over the view: the cells around it are
 * cleared too (a wide character of the log cut at its edge would show
 * through), and the box is drawn with its frame and keys.
 */
static void
draw_ask(struct ui *ui)
{
	int w = text_width(ui->ask, ui->ascii) + 6, h = 7;
	int y = (ui->rows - h) / 2, x;

	if (w > ui->cols - 4)
		w = ui->cols - 4;
	x = (ui->cols - w) / 2;
	for (int i = -1; i <= h; i++)
		ui_fill(ui, y + i, x - 1, w + 2, R_NORMAL);
	ui_hline(ui, y, x + 1, w - 2);
	ui_hline(ui, y + h - 1, x + 1, w - 2);
	ui_vline(ui, y + 1, x, h - 2);
	ui_vline(ui, y + 1, x + w - 1, h - 2);
	ui_put(ui, y, x, 1, R_DIM, ui->g.corner_tl);
	ui_put(ui, y, x + w - 1, 1, R_DIM, ui->g.corner_tr);
	ui_put(ui, y + h - 1, x, 1, R_DIM, ui->g.corner_bl);
	ui_put(ui, y + h - 1, x + w - 1, 1, R_DIM, ui->g.corner_br);
	ui_put(ui, y + 2, x + 3, w - 6, R_BOLD, ui->ask);
	ui_put(ui, y + 4, x + 3, w - 6, R_NORMAL, "y yes   n no");
}

static void
ui_draw(struct ui *ui)
{
	struct view *v = ui_top(ui);

	if (ui->screen_away)
		return; /* drawn when the terminal is back */
	ui->dirty = false;
	ui->last_frame_ms = loop_now_ms();
	erase();
	if (ui->rows < 6 || ui->cols < 30) {
		ui_put(ui, 0, 0, ui->cols, R_BOLD, "fswb: the terminal is too small");
		ui_put(ui, 1, 0, ui->cols, R_NORMAL, "(at least 30x6; 80x24 is best)");
	} else if (v) {
		ui->nkeys = 0;
		v->ops->draw(ui, v);
		if (ui->ask)
			draw_ask(ui);
	}
	refresh();
	ui->drawn_once = true;
}

void
ui_draw_now(struct ui *ui)
{
	if (ui->dirty)
		ui_draw(ui);
}
