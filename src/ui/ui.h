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
 */
#ifndef FSWB_UI_UI_H
#define FSWB_UI_UI_H

int ui_main(int argc, char **argv);

#endif
