/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The workbench without a terminal (FSWB_NO_DISPLAY): curses draws into a
 * virtual screen of FSWB_SCREEN columns and rows (default 80x24), a key
 * script (FSWB_SCRIPT) drives it one line at a time, and :save-screen writes
 * the screen as text. The screen is drawn after every line, so what a line
 * of keys did is on the screen when the next line runs.
 *
 * A script line is one of
 *	keys			typed as they are; <Name> for a named key:
 *				<Enter> <Esc> <Tab> <S-Tab> <Up> <Down> <Left>
 *				<Right> <Home> <End> <PgUp> <PgDn> <Space> <BS>
 *				<Del> <F1> <C-x> (Ctrl and a letter) <lt> ('<')
 *	:save-screen FILE	the screen as text: one line per row, trailing
 *				blanks cut, written atomically
 *	:resize COLSxROWS	the terminal changes size
 *	:sleep MS		the loop runs MS milliseconds (a child, a run)
 *	:wait-run		the loop runs until no run is going
 *	# comment, or blank
 * At the script's end the workbench quits as on Q (a run is stopped).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "core/paths.h"
#include "core/status.h"
#include "ui/ui.h"
#include "ui/ui_int.h"

static const struct {
	const char *name;
	int key;
} key_names[] = {
	{ "Enter", K_ENTER }, { "Esc", K_ESC },	  { "Tab", K_TAB },   { "S-Tab", K_BTAB },
	{ "Up", K_UP },	      { "Down", K_DOWN }, { "Left", K_LEFT }, { "Right", K_RIGHT },
	{ "Home", K_HOME },   { "End", K_END },	  { "PgUp", K_PGUP }, { "PgDn", K_PGDN },
	{ "Space", ' ' },     { "BS", K_BS },	  { "Del", K_DEL },   { "F1", K_F1 },
	{ "lt", '<' },
};

/* The screen as text, row by row, trailing blanks cut. */
static enum status
save_screen(struct ui *ui, const char *path)
{
	struct strbuf sb = STRBUF_INIT;
	wchar_t *row = xmalloc(((size_t)ui->cols + 1) * sizeof(*row));
	enum status st;

	for (int y = 0; y < ui->rows; y++) {
		int n = mvwinnwstr(stdscr, y, 0, row, ui->cols);
		size_t len;

		len = n > 0 ? (size_t)n : 0;
		while (len && row[len - 1] == L' ')
			len--;
		for (size_t i = 0; i < len; i++)
			strbuf_add_utf8(&sb, (unsigned long)row[i]);
		strbuf_addch(&sb, '\n');
	}
	free(row);
	st = write_file_atomic(path, sb.buf ? sb.buf : "", sb.len, 0644);
	strbuf_release(&sb);
	return st;
}

/*
 * Draw; and when views wait for answers they asked for, run the loop until
 * those came and draw again, so that a saved screen shows answers.
 */
static void
settle(struct ui *ui)
{
	ui_draw_now(ui);
	while (ui->pending && !ui->quit) {
		loop_run_once(ui->loop, 100);
		ui_serve_requests(ui);
		ui_draw_now(ui);
	}
}

/* Type the keys of one line; ERR_INVALID naming an unknown <Name>. */
static enum status
type_keys(struct ui *ui, const char *line)
{
	mbstate_t mbs;
	const char *p = line;

	memset(&mbs, 0, sizeof(mbs));
	while (*p && !ui->quit) {
		int key = -1;

		if (*p == '<' && strchr(p, '>')) {
			const char *end = strchr(p, '>');
			size_t n = (size_t)(end - p - 1);

			for (size_t i = 0; i < ARRAY_SIZE(key_names); i++)
				if (strlen(key_names[i].name) == n &&
				    !strncmp(p + 1, key_names[i].name, n))
					key = key_names[i].key;
			if (key < 0 && n == 3 && !strncmp(p + 1, "C-", 2) && p[3] >= 'a' &&
			    p[3] <= 'z')
				key = K_CTRL(p[3]);
			if (key < 0)
				return error(
					ERR_INVALID,
					"unknown key '%.*s': the names are <Enter>, <Esc>, "
					"<Tab>, <Up>, <PgDn>, <C-u>, ... (see src/ui/script.c)",
					(int)n + 2, p);
			p = end + 1;
		} else {
			wchar_t wc;
			size_t n = mbrtowc(&wc, p, strlen(p), &mbs);

			if (n == (size_t)-1 || n == (size_t)-2 || n == 0)
				return error(ERR_INVALID, "the keys are not valid UTF-8");
			key = (int)wc;
			p += n;
		}
		ui_feed_key(ui, key);
		settle(ui);
	}
	return OK;
}

/* Run the loop for ms milliseconds, drawing as the views ask. */
static void
run_for(struct ui *ui, uint64_t ms)
{
	uint64_t end = loop_now_ms() + ms;

	for (uint64_t now = loop_now_ms(); now < end && !ui->quit; now = loop_now_ms()) {
		loop_run_once(ui->loop, (int)(end - now));
		ui_serve_requests(ui);
	}
	settle(ui);
}

static enum status
run_line(struct ui *ui, char *line)
{
	char *arg;

	if (line[0] != ':')
		return type_keys(ui, line);
	arg = strchr(line, ' ');
	if (arg) {
		*arg++ = '\0';
		arg += strspn(arg, " \t");
	}
	if (!strcmp(line, ":save-screen") && arg && *arg)
		return save_screen(ui, arg);
	if (!strcmp(line, ":resize") && arg) {
		int cols, rows;

		enum status st = ui_parse_size(arg, &cols, &rows);

		if (st != OK)
			return st;
		resizeterm(rows, cols);
		getmaxyx(stdscr, ui->rows, ui->cols);
		ui_dirty(ui);
		settle(ui);
		return OK;
	}
	if (!strcmp(line, ":sleep") && arg) {
		char *end;
		unsigned long ms = strtoul(arg, &end, 10);

		if (*end || ms > 3600000)
			return error(ERR_INVALID, "':sleep %s': give milliseconds, at most 3600000",
				     arg);
		run_for(ui, ms);
		return OK;
	}
	if (!strcmp(line, ":wait-run") && !arg) {
		while (ui_run_active(ui) && !ui->quit) {
			loop_run_once(ui->loop, -1);
			ui_serve_requests(ui);
		}
		settle(ui);
		return OK;
	}
	return error(ERR_INVALID,
		     "'%s' is not a script command: the commands are :save-screen FILE, "
		     ":resize COLSxROWS, :sleep MS and :wait-run",
		     line);
}

void
ui_run_script(struct ui *ui, const char *path)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	unsigned lineno = 0;
	ssize_t n;

	if (!f) {
		fprintf(stderr, "fswb: cannot read the key script '%s': %s\n", path,
			strerror(errno));
		ui->exit_code = 2;
		ui->quit = true;
		return;
	}
	settle(ui);
	while (!ui->quit && ui->depth && (n = getline(&line, &cap, f)) >= 0) {
		lineno++;
		while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = '\0';
		if (!n || line[0] == '#')
			continue;
		if (run_line(ui, line) != OK) {
			fprintf(stderr, "fswb: %s:%u: %s\n", path, lineno, error_msg());
			ui->exit_code = 2;
			break;
		}
		/* what is ready at once (a child's output, a signal) */
		loop_run_once(ui->loop, 0);
		ui_serve_requests(ui);
		settle(ui);
	}
	free(line);
	fclose(f);
	ui->quit = true;
}
