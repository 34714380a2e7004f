/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Input: keys and the mouse from the tty (or the key script), the question's
 * answer, the reactions views return, and the requests views make (open the
 * docs or the history, stop the run, run a test again, the shell), served
 * here, above every view. Also giving the terminal away and back.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/status.h"
#include "ui/ui_int.h"

static void
answer(struct ui *ui, bool yes)
{
	void (*fn)(struct ui *, bool) = ui->ask_fn;

	free(ui->ask);
	ui->ask = NULL;
	ui->ask_fn = NULL;
	if (fn)
		fn(ui, yes);
	/* the next frame repaints every cell, not only those curses thinks changed */
	clearok(curscr, TRUE);
	ui_dirty(ui);
}

static void
quit_answer(struct ui *ui, bool yes)
{
	if (!yes)
		return;
	ui->quit = true;
}

static void
react(struct ui *ui, enum reaction r)
{
	switch (r) {
	case REACT_NONE:
	case REACT_PASS:
		break;
	case REACT_REDRAW:
		ui_dirty(ui);
		break;
	case REACT_BACK:
		if (ui->depth == 1 && ui_run_active(ui))
			ui_ask(ui, "A run is going. Stop it and quit?", quit_answer);
		else
			ui_pop(ui);
		break;
	case REACT_QUIT:
		if (ui_run_active(ui))
			ui_ask(ui, "A run is going. Stop it and quit?", quit_answer);
		else
			ui->quit = true;
		break;
	}
}

void
ui_feed_key(struct ui *ui, int key)
{
	struct view *v = ui_top(ui);
	enum reaction r;

	if (ui->ask) {
		if (key == 'y' || key == 'Y')
			answer(ui, true);
		else if (key == 'n' || key == 'N' || key == K_ESC || key == 'q')
			answer(ui, false);
		return;
	}
	if (ui->message) {
		free(ui->message);
		ui->message = NULL;
		ui_dirty(ui);
	}
	if (!v)
		return;
	r = v->ops->key(ui, v, key);
	if (r == REACT_PASS) {
		switch (key) {
		case '?':
		case K_F1:
			docs_open(ui, v->ops->docs);
			return;
		case 'q':
		case K_ESC:
		case K_LEFT:
			r = REACT_BACK;
			break;
		case 'Q':
			r = REACT_QUIT;
			break;
		default:
			break;
		}
	}
	react(ui, r);
	ui_serve_requests(ui);
}

static void
handle_mouse(struct ui *ui)
{
	struct view *v = ui_top(ui);
	MEVENT me;
	int code;

	if (getmouse(&me) != OK || !v)
		return;
	if (me.bstate & BUTTON4_PRESSED) {
		ui_feed_key(ui, K_UP);
		return;
	}
	if (me.bstate & BUTTON5_PRESSED) {
		ui_feed_key(ui, K_DOWN);
		return;
	}
	if (!(me.bstate & (BUTTON1_CLICKED | BUTTON1_DOUBLE_CLICKED)))
		return;
	if (ui->ask)
		return;
	if (me.y == ui->rows - 1) {
		code = keybar_hit(ui->keys, ui->nkeys, ui->key_x, ui->key_w, me.x);
		if (code)
			ui_feed_key(ui, code);
		return;
	}
	if (v->ops->click)
		react(ui, v->ops->click(ui, v, me.y, me.x, me.bstate & BUTTON1_DOUBLE_CLICKED));
	ui_serve_requests(ui);
}

static void on_tty(struct loop *loop, int fd, short revents, void *data);

void
ui_watch_tty(struct ui *ui)
{
	loop_add_fd(ui->loop, STDIN_FILENO, POLLIN, on_tty, ui);
}

/* Give the terminal away (curses ends, the tty is not watched)... */
static void
screen_leave(struct ui *ui)
{
	loop_del_fd(ui->loop, STDIN_FILENO);
	def_prog_mode();
	endwin();
	fputs("\033[H\033[2J", stdout); /* the shell starts on a clean screen */
	ui->screen_away = true;
}

/* ... and take it back. */
static void
screen_back(struct ui *ui)
{
	if (!ui->screen_away)
		return;
	ui->screen_away = false;
	reset_prog_mode();
	clearok(curscr, TRUE); /* the shell drew over everything */
	refresh();
	ui_watch_tty(ui);
	ui_dirty(ui);
}

static void
on_tty(struct loop *loop, int fd, short revents, void *data)
{
	struct ui *ui = data;
	wint_t wch;
	int r;

	if (revents & (POLLHUP | POLLERR)) {
		/* the terminal went away: stop the run, leave */
		ui->quit = true;
		loop_del_fd(loop, fd);
		return;
	}
	while ((r = get_wch(&wch)) != ERR) {
		if (r == KEY_CODE_YES) {
			if (wch == KEY_MOUSE)
				handle_mouse(ui);
			else if (wch == KEY_RESIZE)
				ui_dirty(ui);
			else if (wch == KEY_ENTER)
				ui_feed_key(ui, K_ENTER);
			else
				ui_feed_key(ui, UIK((int)wch));
		} else if (wch == '\r') {
			ui_feed_key(ui, K_ENTER);
		} else if (wch == 127 || wch == 8) {
			ui_feed_key(ui, K_BS);
		} else {
			ui_feed_key(ui, (int)wch);
		}
		if (ui->quit)
			break;
	}
}

void
ui_serve_requests(struct ui *ui)
{
	for (size_t i = 0; i < ui->nrequests; i++) {
		struct ui_request r = ui->requests[i];

		switch (r.kind) {
		case UI_REQ_DOCS:
			docs_open(ui, r.page);
			break;
		case UI_REQ_DOCS_SEARCH:
			docs_search(ui, r.page);
			break;
		case UI_REQ_HISTORY:
			history_open(ui);
			break;
		case UI_REQ_RUN_STOP:
			ui_run_stop(ui);
			break;
		case UI_REQ_TEST_AGAIN:
			ui_run_test_again(ui, r.run_dir, r.config, r.test, r.shell);
			break;
		case UI_REQ_LOOK:
			if (ui->screen_away || !ui_run_look(ui))
				break;
			/* its shell has the terminal now */
			__attribute__((fallthrough));
		case UI_REQ_SHELL:
			if (!ui->screen_away) {
				screen_leave(ui);
				if (!ui_run_shell(ui))
					screen_back(ui);
			}
			break;
		case UI_REQ_SCREEN_BACK:
			screen_back(ui);
			break;
		}
		ui_request_release(&ui->requests[i]);
	}
	ui->nrequests = 0;
}
