/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `fswb run` without a terminal UI: the headless printer. A line per test as
 * it ends, then per configuration the summary xfstests-bld users know, the
 * failures, and the not-run causes grouped with their fixes. --json prints
 * the events as JSON lines instead. In a run on several guests at once each
 * line of a guest starts with its shard ("[2] generic/013 ..."), and on a
 * terminal the line of what runs names every guest's test.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "core/paths.h"
#include "core/profile.h"
#include "fstests/history.h"
#include "run/engine.h"
#include "run/shell.h"
#include "core/event_json.h"
#include "core/loop.h"

/* plan.shards' bound */
#define RUN_SHARDS_MAX 64

struct printer {
	bool json, tty;
	bool console;	    /* print console lines too (check -n's list) */
	bool console_said;  /* the heading of that list is printed */
	bool progress_line; /* a \r line is on screen */
	bool any_test;	    /* a test ended */
	bool any_ran;	    /* a test ran (not "not run") */
	int last_decile;
	struct strvec errors;
	const char *run_dir;
	unsigned shards;		   /* guests at once (RUN_BEGIN); <= 1: one */
	char *running[RUN_SHARDS_MAX + 1]; /* a sharded run: each shard's test, or NULL */
};

/* "[2] " before a line of guest 2 in a sharded run; "" otherwise. */
static const char *
shard_tag(const struct printer *p, const struct event *ev, char *buf, size_t len)
{
	buf[0] = 0;
	if (p->shards > 1 && ev->shard)
		snprintf(buf, len, "[%u] ", ev->shard);
	return buf;
}

/* The \r line of a sharded run: every guest's test, as much as the terminal shows. */
static void
print_running(struct printer *p)
{
	struct strbuf sb = STRBUF_INIT;
	struct winsize ws;
	size_t cols = ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col ? ws.ws_col : 80;

	for (unsigned k = 1; k <= p->shards && k <= RUN_SHARDS_MAX; k++)
		if (p->running[k])
			strbuf_addf(&sb, "%s[%u] %s", sb.len ? "  " : "running: ", k,
				    p->running[k]);
	if (sb.len) {
		if (sb.len > cols - 1)
			strbuf_setlen(&sb, cols - 1);
		term_fprintf(stdout, "%s", sb.buf);
		p->progress_line = true;
		fflush(stdout);
	}
	strbuf_release(&sb);
}

static void
clear_progress(struct printer *p)
{
	if (p->progress_line) {
		fputs("\r\033[K", stdout);
		p->progress_line = false;
	}
}

static void
print_stage(struct printer *p, const struct event *ev)
{
	const char *s = ev->u.stage.stage;
	const char *d = ev->u.stage.detail;
	char tag[16];

	shard_tag(p, ev, tag, sizeof(tag));
	switch (ev->type) {
	case EV_STAGE_BEGIN:
		clear_progress(p);
		p->last_decile = -1;
		term_fprintf(stdout, "%s[%s] %s%s\n", tag, s,
			     ev->config && !strcmp(s, "boot") ? "starting a guest for " : "",
			     d ? d : (ev->config ? ev->config : "..."));
		break;
	case EV_STAGE_PROGRESS:
		if (p->tty) {
			clear_progress(p);
			if (ev->u.stage.fraction >= 0)
				term_fprintf(stdout, "[%s] %s %3.0f%%", s, d ? d : "",
					     ev->u.stage.fraction * 100);
			else
				term_fprintf(stdout, "[%s] %s", s, d ? d : "");
			p->progress_line = true;
		} else if (d && ev->u.stage.fraction < 0) {
			term_fprintf(stdout, "[%s] %s\n", s, d);
		} else if (ev->u.stage.fraction >= 0 &&
			   (int)(ev->u.stage.fraction * 10) > p->last_decile) {
			p->last_decile = (int)(ev->u.stage.fraction * 10);
			term_fprintf(stdout, "[%s] %s %d%%\n", s, d ? d : "", p->last_decile * 10);
		}
		break;
	case EV_STAGE_END:
		clear_progress(p);
		if (ev->u.stage.code == OK) {
			if (ev->u.stage.message)
				term_fprintf(stdout, "%s[%s] ready: %s\n", tag, s,
					     ev->u.stage.message);
		} else {
			term_fprintf(stdout, "%s[%s] failed: %s\n", tag, s,
				     ev->u.stage.message ? ev->u.stage.message : "unknown error");
			strvec_pushf(&p->errors, "%s: %s", s,
				     ev->u.stage.message ? ev->u.stage.message : "failed");
		}
		break;
	default:
		break;
	}
}

static void
print_test_end(struct printer *p, const struct event *ev)
{
	const char *reason = ev->u.test_end.reason;
	char secs[32] = "", tag[16];

	if (ev->u.test_end.seconds >= 0)
		snprintf(secs, sizeof(secs), "%.0fs", ev->u.test_end.seconds);
	clear_progress(p);
	term_fprintf(stdout, "%s%-14s %-9s %5s%s%s%s\n", shard_tag(p, ev, tag, sizeof(tag)),
		     ev->u.test_end.test, test_status_str(ev->u.test_end.status), secs,
		     ev->u.test_end.rerun ? "  (rerun)" : "", reason ? "  " : "",
		     reason ? reason : "");
	fflush(stdout);
}

static void
on_event(void *data, const struct event *ev)
{
	struct printer *p = data;

	if (p->json) {
		struct strbuf sb = STRBUF_INIT;

		event_to_json(ev, &sb);
		fwrite(sb.buf, 1, sb.len, stdout);
		fflush(stdout);
		strbuf_release(&sb);
		return;
	}
	switch (ev->type) {
	case EV_RUN_BEGIN:
		p->shards = ev->u.run.shards;
		term_fprintf(stdout, "fswb: run %s\n", ev->u.run.id);
		if (p->shards > 1)
			term_fprintf(stdout, "fswb: on %u guests at once%s%s\n", p->shards,
				     ev->u.run.shards_why ? ": " : "",
				     ev->u.run.shards_why ? ev->u.run.shards_why : "");
		break;
	case EV_STAGE_BEGIN:
	case EV_STAGE_PROGRESS:
	case EV_STAGE_END:
		print_stage(p, ev);
		break;
	case EV_SECTION:
		clear_progress(p);
		if (ev->u.section.fstyp)
			term_fprintf(stdout, "%s: FSTYP %s%s%s\n",
				     ev->config ? ev->config : "check", ev->u.section.fstyp,
				     ev->u.section.mkfs_options ? ", MKFS_OPTIONS " : "",
				     ev->u.section.mkfs_options ? ev->u.section.mkfs_options : "");
		break;
	case EV_TEST_START:
		if (p->shards > 1 && ev->shard && ev->shard <= RUN_SHARDS_MAX) {
			free(p->running[ev->shard]);
			p->running[ev->shard] = xstrdup(ev->u.test_start.test);
			if (p->tty) {
				clear_progress(p);
				print_running(p);
			}
		} else if (p->tty) {
			clear_progress(p);
			term_fprintf(stdout, "%-14s running...", ev->u.test_start.test);
			p->progress_line = true;
			fflush(stdout);
		}
		break;
	case EV_TEST_END:
		p->any_test = true;
		p->any_ran |= ev->u.test_end.status != TS_NOTRUN;
		print_test_end(p, ev);
		if (p->shards > 1 && ev->shard && ev->shard <= RUN_SHARDS_MAX) {
			free(p->running[ev->shard]);
			p->running[ev->shard] = NULL;
			if (p->tty)
				print_running(p);
		}
		break;
	case EV_CONSOLE:
		if (p->console && (ev->u.line.flags & CONSOLE_CHECK)) {
			clear_progress(p);
			if (!p->console_said)
				term_fprintf(stdout, "fswb: what check -n in the guest says this "
						     "selection would run (no test runs):\n");
			p->console_said = true;
			term_fprintf(stdout, "%s\n", ev->u.line.text);
		}
		break;
	case EV_WARNING:
		clear_progress(p);
		fflush(stdout);
		term_fprintf(stderr, "fswb: warning: %s\n", ev->u.error.message);
		break;
	case EV_ERROR:
		clear_progress(p);
		fflush(stdout);
		term_fprintf(stderr, "fswb: error: %s\n", ev->u.error.message);
		strvec_push(&p->errors, ev->u.error.message);
		break;
	default:
		break;
	}
}

/* The run on the loop: it ends with RUN_END (or a second Ctrl-C); a shell when one waits. */
struct control {
	struct loop *loop;
	struct engine *e;
	struct shell_relay *relay;
	unsigned stop_requests;
};

static void
on_stop(struct loop *loop, int signo, void *data)
{
	struct control *c = data;

	if (++c->stop_requests == 1)
		term_fprintf(stderr, "\nfswb: stopping the run (Ctrl-C again to stop at once)\n");
	else
		loop_quit(loop, 0);
	engine_cancel(c->e);
}

static void
start_shell(struct loop *loop, void *data)
{
	struct control *c = data;

	if (!c->relay && engine_shell_fd(c->e) >= 0)
		c->relay = shell_relay_start(loop, c->e, false, NULL, NULL);
}

static void
on_control(void *data, const struct event *ev)
{
	struct control *c = data;

	if (ev->type == EV_RUN_END || engine_done(c->e)) /* done: or detached */
		loop_quit(c->loop, 0);
	else if (ev->type == EV_STAGE_BEGIN && !strcmp(ev->u.stage.stage, "shell"))
		loop_add_timer(c->loop, 0, false, start_shell, c);
}

static int
run_or_follow(const struct plan *plan, const struct profiles *profiles, bool json,
	      enum fail_on fail_on, const char *follow)
{
	struct printer p = { .json = json,
			     .tty = !json && isatty(STDOUT_FILENO),
			     .console = plan->dry_run };
	struct event_bus bus = EVENT_BUS_INIT;
	struct loop *loop = loop_new();
	struct control c = { .loop = loop };
	struct engine *e;
	int code;

	strvec_init(&p.errors);
	event_bus_add(&bus, (struct listener){ on_event, &p });
	event_bus_add(&bus, (struct listener){ on_control, &c });
	engine_new(plan, profiles, loop, &bus, &e);
	c.e = e;
	if ((follow ? engine_follow(e, follow) : engine_start(e)) != OK) {
		code = cmd_fail(follow ? "results fetch" : "run");
		goto out;
	}
	p.run_dir = engine_run_dir(e);
	loop_watch_signal(loop, SIGINT, on_stop, &c);
	loop_watch_signal(loop, SIGTERM, on_stop, &c);
	loop_watch_signal(loop, SIGHUP, on_stop, &c);
	if (!engine_done(e))
		loop_run(loop);
	shell_relay_free(c.relay);
	code = engine_exit_code(e);
	if ((plan->detach && !follow && code == 0) || (follow && code == EXIT_STOPPED))
		goto out; /* the machines run on: fetch follows them (said) */
	if (!json) {
		clear_progress(&p);
		print_run_dir_summary(p.run_dir);
		if (code == EXIT_STOPPED)
			term_fprintf(stdout,
				     "The run was stopped (exit status %d); its run directory "
				     "keeps what ran.\n",
				     EXIT_STOPPED);
		else if (code == 2 && p.any_ran)
			term_fprintf(stdout, "Results were lost; see the error above.\n");
		else if (code == 2 && p.any_test)
			term_fprintf(stdout, "None of the tests could run here; each says why "
					     "above.\n");
		else if (code == 2)
			term_fprintf(stdout, "Nothing could run%s.\n",
				     p.errors.n ? "; see the error above" : "");
	}
	if (!plan->dry_run)
		code = run_against_baseline(p.run_dir, json, fail_on, code);
out:
	engine_free(e);
	loop_free(loop);
	event_bus_release(&bus);
	strvec_clear(&p.errors);
	for (size_t k = 0; k < ARRAY_SIZE(p.running); k++)
		free(p.running[k]);
	return code;
}

int
run_headless(const struct plan *plan, const struct profiles *profiles, bool json,
	     enum fail_on fail_on)
{
	return run_or_follow(plan, profiles, json, fail_on, NULL);
}

static const char fetch_usage[] =
	"usage: fswb results fetch RUN [--json]\n"
	"Follow a run that fswb run --detach left running (its machines run their\n"
	"tests without fswb) as fswb run follows one: the tests' outcomes as they\n"
	"come, then the results in the run's directory; it ends when every machine\n"
	"has. Ctrl-C stops following: the machines run on, fetch again later.\n"
	"RUN is a run's id, last, or last~N.\n";

int
cmd_results_fetch(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct profiles profiles;
	struct plan plan;
	char *id = NULL, *dir = NULL, *path, *datadir, *pdir;
	bool json = false;
	int c, code;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'h':
			fputs(fetch_usage, stdout);
			return 0;
		default:
			cmd_bad_option("results fetch", argv[optind - 1], opts);
		}
	}
	if (argc - optind != 1) {
		fputs(fetch_usage, stderr);
		return 2;
	}
	if (history_resolve(argv[optind], &id) != OK)
		return cmd_fail("results fetch");
	dir = history_run_dir(id);
	path = path_join(dir, "plan.json");
	plan_init(&plan);
	datadir = fswb_datadir();
	pdir = path_join(datadir, "profiles");
	if (plan_load(path, &plan) != OK || profiles_load(pdir, &profiles) != OK) {
		code = cmd_fail("results fetch");
	} else {
		code = run_or_follow(&plan, &profiles, json, FAIL_ON_FAILURES, dir);
		profiles_release(&profiles);
	}
	plan_release(&plan);
	free(pdir);
	free(datadir);
	free(path);
	free(dir);
	free(id);
	return code;
}
