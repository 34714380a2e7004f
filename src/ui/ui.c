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

#define STOP_WAIT_MS 120000 /* for the run's end when the TUI is left */

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
		ui_watch_tty(&ui);
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
	while (!ui.quit && ui.depth) {
		loop_run_once(ui.loop, -1);
		ui_serve_requests(&ui);
	}

	/* nothing is left running: stop the run and wait for its end */
	if (ui_run_active(&ui)) {
		uint64_t deadline = loop_now_ms() + STOP_WAIT_MS;

		ui_run_stop(&ui);
		while (ui_run_active(&ui) && loop_now_ms() < deadline)
			loop_run_once(ui.loop, 200);
	}
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
	for (size_t i = 0; i < ui.nrequests; i++)
		ui_request_release(&ui.requests[i]);
	return ui.exit_code;
}
