/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The TUI's main: the view stack, keys and mouse from the tty, resizing,
 * rate-limited drawing, and the yes/no question. Everything waits in the
 * one loop (core/loop.h), together with the live run's engine.
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "core/paths.h"
#include "core/status.h"
#include "view/text.h"
#include "ui/ui.h"
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
ui_open_docs(struct ui *ui, const char *page)
{
	docs_open(ui, page);
}

/* ---- drawing ---- */

static void
draw_ask(struct ui *ui)
{
	int w = text_width(ui->ask, ui->ascii) + 6;
	int y = ui->rows / 2 - 2, x;

	if (w > ui->cols - 2)
		w = ui->cols - 2;
	x = (ui->cols - w) / 2;
	for (int i = 0; i < 5; i++)
		ui_fill(ui, y + i, x, w, R_SEL);
	attron(ui_attr(ui, R_SEL));
	ui_put(ui, y + 1, x + 3, w - 6, R_SEL, ui->ask);
	ui_put(ui, y + 3, x + 3, w - 6, R_SEL, "y yes   n no");
	attroff(ui_attr(ui, R_SEL));
}

static void
ui_draw(struct ui *ui)
{
	struct view *v = ui_top(ui);

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

/* ---- input ---- */

static void
answer(struct ui *ui, bool yes)
{
	void (*fn)(struct ui *, bool) = ui->ask_fn;

	free(ui->ask);
	ui->ask = NULL;
	ui->ask_fn = NULL;
	if (fn)
		fn(ui, yes);
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
			ui_open_docs(ui, v->ops->docs);
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
}

static void on_tty(struct loop *loop, int fd, short revents, void *data);

void
ui_leave_screen(struct ui *ui, void (*fn)(void *data), void *data)
{
	loop_del_fd(ui->loop, STDIN_FILENO);
	def_prog_mode();
	endwin();
	fputs("\033[H\033[2J", stdout); /* the shell starts on a clean screen */
	fn(data);
	reset_prog_mode();
	clearok(curscr, TRUE); /* the shell drew over everything */
	refresh();
	loop_add_fd(ui->loop, STDIN_FILENO, POLLIN, on_tty, ui);
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

static void
on_winch(struct loop *loop, int signo, void *data)
{
	struct ui *ui = data;
	struct winsize ws;

	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row && ws.ws_col)
		resizeterm(ws.ws_row, ws.ws_col);
	getmaxyx(stdscr, ui->rows, ui->cols);
	clearok(stdscr, TRUE);
	ui_dirty(ui);
}

static void
stop_answer(struct ui *ui, bool yes)
{
	if (yes)
		ui_run_stop(ui);
}

static void
on_signal(struct loop *loop, int signo, void *data)
{
	struct ui *ui = data;

	if (signo == SIGINT && ui_run_active(ui) && !ui->ask) {
		ui_ask(ui, "Stop the run?", stop_answer);
		return;
	}
	ui->quit = true;
}

/* ---- main ---- */

static void
usage(FILE *f)
{
	fputs("usage: fswb [tui] [--history | --open RUN | --docs [PAGE]]\n"
	      "\n"
	      "With no command, fswb opens its workbench in the terminal: a wizard that\n"
	      "picks the kernel, filesystem, backend and tests, the live run view, the\n"
	      "details of a failed test, the docs and the past runs.\n"
	      "\n"
	      "  --history      start in the list of past runs\n"
	      "  --open RUN     open a past run (its id, or a run directory)\n"
	      "  --docs [PAGE]  start in the docs\n",
	      f);
}

int
ui_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "history", no_argument, NULL, 'H' },
		{ "open", required_argument, NULL, 'o' },
		{ "docs", optional_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ui ui;
	const char *open_run = NULL, *docs_page = NULL, *script = NULL;
	bool history = false, docs = false;
	int c;

	memset(&ui, 0, sizeof(ui));
	if (argc > 1 && !strcmp(argv[1], "tui")) {
		/* "fswb tui ..." handed over whole */
		argc--;
		argv++;
	}
	opterr = 0;
	optind = 1;
	while (argc > 1 && (c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (c) {
		case 'H':
			history = true;
			break;
		case 'o':
			open_run = optarg;
			break;
		case 'd':
			docs = true;
			docs_page = optarg;
			if (!docs_page && optind < argc && argv[optind][0] != '-')
				docs_page = argv[optind++];
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			fprintf(stderr, "fswb: unknown option '%s' of the TUI\n", argv[optind - 1]);
			usage(stderr);
			return 2;
		}
	}
	if (argc > 1 && optind < argc) {
		fprintf(stderr, "fswb: unexpected '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	if (ui_headless() && !(script = getenv("FSWB_SCRIPT"))) {
		fprintf(stderr, "fswb: FSWB_NO_DISPLAY is set but FSWB_SCRIPT is not: give the "
				"key script that drives the workbench\n");
		return 2;
	}
	if (!script && (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))) {
		fprintf(stderr, "fswb: the workbench needs a terminal; without one, use "
				"'fswb run' (see 'fswb --help')\n");
		return 2;
	}

	ui.loop = loop_new();
	if (ui_display_init(&ui) != OK) {
		fprintf(stderr, "fswb: %s\n", error_msg());
		loop_free(ui.loop);
		return 2;
	}
	if (!script) {
		loop_add_fd(ui.loop, STDIN_FILENO, POLLIN, on_tty, &ui);
		loop_watch_signal(ui.loop, SIGWINCH, on_winch, &ui);
	}
	loop_watch_signal(ui.loop, SIGINT, on_signal, &ui);
	loop_watch_signal(ui.loop, SIGTERM, on_signal, &ui);
	loop_watch_signal(ui.loop, SIGHUP, on_signal, &ui);

	if (open_run) {
		if (!history_open_run(&ui, open_run))
			wizard_open(&ui);
	} else if (history) {
		history_open(&ui);
	} else if (docs) {
		docs_open(&ui, docs_page);
	} else {
		wizard_open(&ui);
	}
	ui_dirty(&ui);
	if (script)
		ui_run_script(&ui, script);
	while (!ui.quit && ui.depth)
		loop_run_once(ui.loop, -1);

	/* nothing is left running: stop the run and wait for its end */
	ui_run_free(&ui);
	while (ui.depth)
		ui_pop(&ui);
	ui_display_end(&ui);
	loop_free(ui.loop);
	if (ui.have_profiles)
		profiles_release(&ui.profiles);
	free(ui.profiles_error);
	free(ui.message);
	free(ui.ask);
	return ui.exit_code;
}
