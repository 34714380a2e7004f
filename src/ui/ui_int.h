/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Inside the TUI: the display, the view stack and what the views share.
 * Only src/ui includes curses.
 *
 * A view is a struct view_ops (one file per view, as in tig) and its
 * private data. The top of the stack is drawn and gets the keys. Views
 * never act on the world directly for long: a key handler returns a
 * reaction (redraw, back, quit), and what a view wants of the TUI beyond
 * itself (the docs, the history, stopping the run, a test again, the
 * shell) it asks with ui_want_*(): input.c serves those requests after the
 * key, click or callback that made them, as htop's reactions.
 *
 * The files call one way (scripts/lint checks it):
 *	display.c, prompt.c  <-  stack.c  <-  the views (pager, the docs'
 *	files, detail, history, runview, run_live, wizard; each calls only
 *	the ones before it in this list)  <-  input.c  <-  script.c  <-  ui.c
 *
 * Drawing is rate-limited: ui_dirty() asks for a frame, at most one per
 * UI_FRAME_MS; nothing is drawn while nothing changes.
 */
#ifndef FSWB_UI_UI_INT_H
#define FSWB_UI_UI_INT_H

#include <stdbool.h>
#include <stdint.h>

/* before curses.h, whose OK macro would clash with enum status */
#include "core/loop.h"
#include "core/plan.h"
#include "core/profile.h"
#include "core/status.h"
#include "view/layout.h"
#include "view/runmodel.h"
#include "view/text.h"

#include <curses.h>

#define UI_FRAME_MS  50
#define UI_MAX_VIEWS 16

/* Keys: characters are their code points; curses' function keys are moved above Unicode. */
#define UIK(k)	  (0x110000 + (k))
#define K_UP	  UIK(KEY_UP)
#define K_DOWN	  UIK(KEY_DOWN)
#define K_LEFT	  UIK(KEY_LEFT)
#define K_RIGHT	  UIK(KEY_RIGHT)
#define K_PGUP	  UIK(KEY_PPAGE)
#define K_PGDN	  UIK(KEY_NPAGE)
#define K_HOME	  UIK(KEY_HOME)
#define K_END	  UIK(KEY_END)
#define K_ENTER	  '\n'
#define K_ESC	  27
#define K_TAB	  '\t'
#define K_BTAB	  UIK(KEY_BTAB)
#define K_BS	  UIK(KEY_BACKSPACE)
#define K_DEL	  UIK(KEY_DC)
#define K_F1	  UIK(KEY_F(1))
#define K_RESIZE  UIK(KEY_RESIZE)
#define K_CTRL(c) ((c)&0x1f)

enum role {
	R_NORMAL,
	R_TITLE,
	R_DIM,
	R_SEL,
	R_PASS,
	R_FAIL,
	R_NOTRUN,
	R_RUN,
	R_WARN,
	R_BAD,
	R_MARK,
	R_ADD,
	R_DEL,
	R_HUNK,
	R_HEAD,
	R_CODE,
	R_LINK,
	R_KEY,
	R_BOLD,
	R_COUNT
};

struct glyphs {
	const char *hline, *vline, *cross_down, *cross_up;
	const char *corner_tl, *corner_tr, *corner_bl, *corner_br;
	const char *pass, *fail, *notrun, *running, *pending, *expunged;
	const char *sel, *bar_full, *bar_empty, *ok, *warn, *no;
	const char *follow, *arrow, *bullet, *mark, *dot, *ellipsis;
};

enum reaction {
	REACT_NONE,
	REACT_REDRAW,
	REACT_BACK, /* pop this view */
	REACT_QUIT, /* leave the TUI (asks first while a run is going) */
	REACT_PASS, /* not handled: the global keys (?, q, Esc) apply */
};

struct ui;
struct view;

/* What a view asks of the TUI, served by input.c (ui_serve_requests()). */
enum ui_request_kind {
	UI_REQ_DOCS,	    /* open the docs at page */
	UI_REQ_DOCS_SEARCH, /* the docs' results of a search (page) of every page */
	UI_REQ_HISTORY,	    /* open the list of past runs */
	UI_REQ_RUN_STOP,    /* stop the live run */
	UI_REQ_TEST_AGAIN,  /* run test of config again (run_dir's plan), with the shell or not */
	UI_REQ_SHELL,	    /* the live run's shell is waiting: give it the terminal */
	UI_REQ_LOOK,	    /* a look into the guest of the live run's test (engine_look) */
	UI_REQ_SCREEN_BACK, /* the shell ended: the terminal is the TUI's again */
};

struct ui_request {
	enum ui_request_kind kind;
	char *page, *run_dir, *config, *test;
	bool shell;
};

#define UI_MAX_REQUESTS 8

struct view_ops {
	const char *name;
	void (*draw)(struct ui *ui, struct view *v);
	enum reaction (*key)(struct ui *ui, struct view *v, int key);
	/* Optional: a click at screen row y, column x in the body (double: a double click). */
	enum reaction (*click)(struct ui *ui, struct view *v, int y, int x, bool dbl);
	/* Optional: the view becomes the top again (something above it was popped). */
	void (*resume)(struct ui *ui, struct view *v);
	void (*free)(struct view *v);
	const char *docs; /* the docs page '?' opens */
};

struct view {
	const struct view_ops *ops;
	void *priv;
};

/* The run being watched live, if any (run_live.c). */
struct live_run;

struct ui {
	struct loop *loop;
	int rows, cols;
	bool ascii, color;
	struct glyphs g;
	struct view stack[UI_MAX_VIEWS];
	int depth;

	bool dirty, drawn_once;
	bool screen_away;     /* the terminal is the guest's shell's: nothing is drawn */
	unsigned pending;     /* answers views asked for and wait on (the key script waits too) */
	uint64_t frame_timer; /* pending one-shot, 0 when none */
	uint64_t last_frame_ms;
	uint64_t tick_timer; /* 1 s clock while a run is live */

	struct profiles profiles;
	bool have_profiles;
	char *profiles_error;

	/* the key bar last drawn, for clicks */
	struct keybar_item keys[16];
	int key_x[16], key_w[16];
	size_t nkeys;

	char *message; /* shown above the key bar until the next key */
	bool message_error;

	/* a yes/no question over everything (quit during a run) */
	char *ask;
	void (*ask_fn)(struct ui *ui, bool yes);

	struct ui_request requests[UI_MAX_REQUESTS];
	size_t nrequests;

	struct live_run *live;
	bool run_going; /* a live run has begun and not ended */
	int exit_code;
	bool quit;
};

/* ---- display.c ---- */
/* Curses on the terminal, or on a virtual screen when ui_headless(). */
enum status ui_display_init(struct ui *ui);
void ui_display_end(struct ui *ui);
attr_t ui_attr(const struct ui *ui, enum role role);
/* Sanitised text at y, x cut to width columns (ellipsis when cut); the columns drawn. */
int ui_put(struct ui *ui, int y, int x, int width, enum role role, const char *text);
int ui_putf(struct ui *ui, int y, int x, int width, enum role role, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));
/* Like ui_put from a column skip columns into the text (horizontal scrolling). */
int ui_put_slice(struct ui *ui, int y, int x, int width, int skip, enum role role,
		 const char *text);
void ui_fill(struct ui *ui, int y, int x, int width, enum role role);
void ui_hline(struct ui *ui, int y, int x, int width);
void ui_vline(struct ui *ui, int y, int x, int height);
/*
 * The frame every screen has: title (row 0: left words, right words),
 * a rule under it and above the key bar, and the key bar. Returns the first
 * body row; *body_h gets the body's height.
 */
int ui_frame(struct ui *ui, const char *left, const char *right, int *body_h);
void ui_keybar(struct ui *ui, const struct keybar_item *items, size_t n);
/* "COLSxROWS" */
enum status ui_parse_size(const char *s, int *cols, int *rows);

/* ---- prompt.c ---- */
/*
 * An editing key of a one-line prompt (Backspace, Del, arrows, Home/End,
 * ^A ^E ^U ^W ^K) or a character typed into it; false when the key is
 * neither. Backspace takes a whole character, never half of one.
 */
bool prompt_edit_key(struct lineedit *le, int key);

/* ---- stack.c ---- */
/* Something changed: a frame comes within UI_FRAME_MS. */
void ui_dirty(struct ui *ui);
/* Draw at once when something changed (the key script's pace). */
void ui_draw_now(struct ui *ui);
void ui_push(struct ui *ui, const struct view_ops *ops, void *priv);
void ui_pop(struct ui *ui);
struct view *ui_top(struct ui *ui);
void ui_ask(struct ui *ui, const char *question, void (*fn)(struct ui *ui, bool yes));
/* A message over the rule above the key bar until the next key. */
void ui_msg(struct ui *ui, bool is_error, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Map an arrow/page key to a list move; false when it is not one. */
bool ui_list_key(int key, enum list_move *mv);
/* The loaded profiles, or NULL (the message is in ui->profiles_error). */
const struct profiles *ui_profiles(struct ui *ui);
/* Whether a live run is going (begun and not ended). */
bool ui_run_active(const struct ui *ui);
/* Requests (see struct ui_request); strings are copied. */
void ui_want_docs(struct ui *ui, const char *page); /* page: NULL for the index */
void ui_want_look(struct ui *ui);
void ui_want_docs_search(struct ui *ui, const char *query);
void ui_want_history(struct ui *ui);
void ui_want_run_stop(struct ui *ui);
void ui_want_test_again(struct ui *ui, const char *run_dir, const char *config, const char *test,
			bool shell);
void ui_want_shell(struct ui *ui);
void ui_want_screen_back(struct ui *ui);
void ui_request_release(struct ui_request *r);

/* ---- input.c ---- */
/* A key as if typed: the question, the top view, then ? q Esc Q; then the requests. */
void ui_feed_key(struct ui *ui, int key);
/* Serve the requests views made, in order. */
void ui_serve_requests(struct ui *ui);
/* Keys and the mouse from the terminal. */
void ui_watch_tty(struct ui *ui);

/* ---- script.c: the workbench without a terminal ---- */
/* Run the key script at path, then quit; exit_code 2 on a bad line (named). */
void ui_run_script(struct ui *ui, const char *path);

/* ---- wizard.c ---- */
void wizard_open(struct ui *ui);
/* The `fswb run ...` line equivalent to a plan (planutil.c). */

/* ---- runview.c ---- */
/*
 * Show a run model. owned: the view frees the model; live: it is the live
 * run (ui->live), keys stop it. title: the words at the top (copied).
 * run_dir: where its artifacts are, or NULL (copied).
 */
void runview_open(struct ui *ui, struct run_model *m, bool owned, bool live, const char *title,
		  const char *run_dir);

/* ---- detail.c ---- */
/* The detail of test t of model m, whose artifacts are under run_dir (may be NULL). */
void detail_open(struct ui *ui, struct run_model *m, size_t test, const char *run_dir, bool live);

/* ---- history.c ---- */
void history_open(struct ui *ui);
/* Open a past run (an id or a directory) in a run view; false (message shown) when it cannot. */
bool history_open_run(struct ui *ui, const char *run);

/* ---- docs.c ---- */
void docs_open(struct ui *ui, const char *page);
/* The results of a search of every page of the docs. */
void docs_search(struct ui *ui, const char *query);

/* ---- run_live.c ---- */
/*
 * Start plan in a run view. tests (may be NULL): the tests expected, shown
 * as pending with their earlier times. remember: once the run's first test
 * starts (the kernel, the appliance and the guest worked), plan becomes the
 * last plan (ui_last_plan_path()); a run that fails before never does.
 * false with a message when it cannot start.
 */
bool ui_run_start(struct ui *ui, const struct plan *plan, const char *title,
		  const struct strvec *tests, bool remember);
/* Follow the detached run in dir (fswb results fetch) in a run view; false (said) if not. */
bool ui_run_follow(struct ui *ui, const char *dir);
/* CONFIG/last-plan.json: the wizard's choices of the last run that started (free() it). */
char *ui_last_plan_path(void);
/* Stop the live run cleanly (engine_cancel); RUN_END follows. */
void ui_run_stop(struct ui *ui);
/*
 * Run one test again alone, with the live or a past run's plan; with shell,
 * then a shell in its guest (the screen gives way to it until it ends).
 */
bool ui_run_test_again(struct ui *ui, const char *run_dir, const char *config, const char *test,
		       bool shell);
/*
 * The live run's shell on this terminal (the screen was given away): false
 * when there is none; when it ends, ui_want_screen_back().
 */
bool ui_run_shell(struct ui *ui);
/* A look into the guest of the running test (engine_look): false, with a message, when none. */
bool ui_run_look(struct ui *ui);
/* Free the live runs (a live run is stopped and waited for first: see ui.c). */
void ui_run_free(struct ui *ui);

#endif
