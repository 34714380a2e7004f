/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The TUI: `fswb` with no arguments, or `fswb tui [OPTIONS]`.
 *
 * argv[0] is the command's name ("fswb" or "tui"); the options:
 *	--history	start in the list of past runs
 *	--open RUN	open a past run (an id under DATA/runs, or a run directory)
 *	--docs [PAGE]	start in the docs (PAGE: a file of docs/getting-started)
 * Returns fswb's exit status: 0, or what the run's engine says when a run
 * was watched to its end (1 a test failed, 2 nothing could run).
 *
 * Environment: NO_COLOR (no colours, attributes only); a locale that is not
 * UTF-8 gives ASCII marks and borders (FSWB_ASCII=1 forces it); DISPLAY or
 * WAYLAND_DISPLAY lets the docs open links with xdg-open.
 *
 * Without a terminal (tests, demos): FSWB_NO_DISPLAY=1 draws into a virtual
 * screen of FSWB_SCREEN=COLSxROWS (default 80x24) and FSWB_SCRIPT=FILE
 * drives it with keys and :save-screen FILE (src/ui/script.c).
 */
#ifndef FSWB_UI_UI_H
#define FSWB_UI_UI_H

#include <stdbool.h>

int ui_main(int argc, char **argv);
/* FSWB_NO_DISPLAY is set: the workbench needs no terminal. */
bool ui_headless(void);

#endif
