/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The live run: the engine on the TUI's loop, its events into a run model
 * (the same model a replay fills) and into the UI's redraw. Stopping asks
 * the engine (engine_cancel) and waits for RUN_END, so that no guest is
 * left behind when the TUI exits. A run that ended is compared with its
 * baseline, as `fswb run` does.
 */
#include <stdlib.h>
#include <string.h>

#include "run/engine.h"
#include "run/reportctx.h"
#include "run/shell.h"
#include "core/paths.h"
#include "core/status.h"
#include "fstests/baseline.h"
#include "fstests/catalogue.h"
#include "ui/ui_int.h"

struct live_run {
	struct engine *e;
	struct event_bus bus;
	struct run_model *m;
	struct ui *ui;
	bool ended;
	uint64_t shell_timer;
	uint64_t baseline_timer;
	struct shell_relay *relay; /* the shell on the terminal, or NULL */
	bool looking;		   /* it is a look (engine_look) */
	struct plan *remember;	   /* saved as the last plan at the first test's start */
	struct live_run *older;	   /* runs that ended before this one */
};

static void
on_tick(struct loop *loop, void *data)
{
	ui_dirty(data);
}

static void
shell_ended(void *data)
{
	struct ui *ui = data;

	if (ui->live)
		ui->live->looking = false;
	ui_want_screen_back(ui);
}

/* A relay that has ended (a look the user left) makes way for the next. */
static void
drop_ended_relay(struct live_run *lr)
{
	if (lr && lr->relay && shell_relay_ended(lr->relay)) {
		shell_relay_free(lr->relay);
		lr->relay = NULL;
	}
}

bool
ui_run_shell(struct ui *ui)
{
	struct live_run *lr = ui->live;

	drop_ended_relay(lr);
	if (!lr || lr->relay || engine_shell_fd(lr->e) < 0)
		return false;
	if (lr->looking)
		printf("fswb: a look into the guest while its test runs, as the user fsgqa, who "
		       "cannot disturb it; press Enter for a prompt; 'exit' or Ctrl-] goes back\n");
	else
		printf("fswb: a shell in the guest of this run; 'exit' or Ctrl-] ends it and goes "
		       "back\n");
	fflush(stdout);
	lr->relay = shell_relay_start(ui->loop, lr->e, lr->looking, shell_ended, ui);
	return true;
}

bool
ui_run_look(struct ui *ui)
{
	struct live_run *lr = ui->live;

	drop_ended_relay(lr);
	if (!lr || lr->relay || lr->ended)
		return false;
	if (engine_look(lr->e) != OK) {
		ui_msg(ui, true, "cannot look into the guest: %s", error_msg());
		error_clear();
		return false;
	}
	lr->looking = true;
	return true;
}

/* The engine's shell is waiting: the terminal is its until it ends. */
static void
start_shell(struct loop *loop, void *data)
{
	struct live_run *lr = data;

	lr->shell_timer = 0;
	if (engine_shell_fd(lr->e) >= 0)
		ui_want_shell(lr->ui);
}

/*
 * Once the engine is past RUN_END (its run.json is final): the regressions
 * against the baseline, kept in run.json and said, when one matches.
 */
static void
against_baseline(struct loop *loop, void *data)
{
	struct live_run *lr = data;
	const char *dir = engine_run_dir(lr->e);
	struct regressions r;

	lr->baseline_timer = 0;
	if (!dir)
		return;
	if (regressions_of_run(dir, &r) != OK)
		ui_msg(lr->ui, true, "the baseline: %s", error_msg());
	else if (r.configs.n)
		ui_msg(lr->ui, regressions_any(&r),
		       "the run has ended; against the baseline: %zu regressions, %zu expected "
		       "failures, %zu fixed",
		       r.cmp.count[CMP_NEW_FAILURE] + r.without_failing.n,
		       r.cmp.count[CMP_STILL_FAILING], r.cmp.count[CMP_FIXED]);
	regressions_release(&r);
	ui_dirty(lr->ui);
}

char *
ui_last_plan_path(void)
{
	char *dir = fswb_dir(DIR_CONFIG), *p = path_join(dir, "last-plan.json");

	free(dir);
	return p;
}

/* The run got as far as a test: its plan is the last plan (ui_run_start). */
static void
remember_plan(struct live_run *lr)
{
	char *dir = NULL, *path;

	if (fswb_dir_make(DIR_CONFIG, "", &dir) != OK) {
		ui_msg(lr->ui, true, "cannot remember the choices: %s", error_msg());
	} else {
		struct strvec *o = &lr->remember->backend_opts;
		size_t k = 0;

		/* a cloud run's cost is accepted for that run: the next one asks again */
		for (size_t i = 0; i < o->n; i++)
			if (str_startswith(o->v[i], "cost="))
				free(o->v[i]);
			else
				o->v[k++] = o->v[i];
		if (k < o->n) {
			o->n = k;
			o->v[k] = NULL;
		}
		path = ui_last_plan_path();
		if (plan_save(path, lr->remember) != OK)
			ui_msg(lr->ui, true, "cannot remember the choices: %s", error_msg());
		free(path);
	}
	error_clear();
	free(dir);
	plan_release(lr->remember);
	free(lr->remember);
	lr->remember = NULL;
}

static void
on_event(void *data, const struct event *ev)
{
	struct live_run *lr = data;
	struct ui *ui = lr->ui;

	if (ev->type == EV_TEST_START && lr->remember)
		remember_plan(lr);
	if (ev->type == EV_RUN_END) {
		const struct test_counts *c = &ev->u.end.counts;

		lr->ended = true;
		ui->run_going = false;
		ui->exit_code = ev->u.end.exit_code;
		if (ui->tick_timer) {
			loop_del_timer(ui->loop, ui->tick_timer);
			ui->tick_timer = 0;
		}
		if (ev->u.end.interrupted)
			ui_msg(ui, true, "the run was stopped: %u passed, %u failed, %u not run",
			       c->passed, c->failed + c->crashed + c->hung, c->notrun);
		else if (run_model_failure(lr->m))
			ui_msg(ui, true, "the run failed before its first test: %s",
			       run_model_failure(lr->m));
		else
			ui_msg(ui, c->failed + c->crashed + c->hung > 0,
			       "the run has ended: %u passed, %u failed, %u not run; Enter on a "
			       "test shows its details",
			       c->passed, c->failed + c->crashed + c->hung, c->notrun);
		if (!ev->u.end.interrupted && !lr->baseline_timer)
			lr->baseline_timer =
				loop_add_timer(ui->loop, 0, false, against_baseline, lr);
	}
	if (ev->type != EV_RUN_END && !lr->ended && lr->e && engine_done(lr->e)) {
		/* no RUN_END: the machines run on (detached, or following them stopped) */
		lr->ended = true;
		ui->run_going = false;
		ui->exit_code = engine_exit_code(lr->e);
		if (ui->tick_timer) {
			loop_del_timer(ui->loop, ui->tick_timer);
			ui->tick_timer = 0;
		}
		ui_msg(ui, false, "%s",
		       ev->type == EV_WARNING ? ev->u.error.message : "the run's machines run on");
	}
	if (ev->type == EV_STAGE_BEGIN && !strcmp(ev->u.stage.stage, "shell") && !lr->shell_timer)
		lr->shell_timer = loop_add_timer(ui->loop, 0, false, start_shell, lr);
	/* drawing is rate-limited: a burst of kernel-log lines is one frame */
	ui_dirty(ui);
}

void
ui_run_stop(struct ui *ui)
{
	if (!ui_run_active(ui))
		return;
	ui_msg(ui, false, "stopping the run...");
	engine_cancel(ui->live->e);
}

static void
live_free_one(struct live_run *lr)
{
	if (lr->shell_timer)
		loop_del_timer(lr->ui->loop, lr->shell_timer);
	if (lr->baseline_timer)
		loop_del_timer(lr->ui->loop, lr->baseline_timer);
	shell_relay_free(lr->relay);
	if (lr->remember) {
		plan_release(lr->remember);
		free(lr->remember);
	}
	engine_free(lr->e);
	event_bus_release(&lr->bus);
	run_model_release(lr->m);
	free(lr->m);
	free(lr);
}

void
ui_run_free(struct ui *ui)
{
	struct live_run *lr = ui->live;

	if (ui->tick_timer) {
		loop_del_timer(ui->loop, ui->tick_timer);
		ui->tick_timer = 0;
	}
	/* the views that show these models go first */
	while (ui->depth)
		ui_pop(ui);
	while (lr) {
		struct live_run *older = lr->older;

		live_free_one(lr);
		lr = older;
	}
	ui->live = NULL;
	ui->run_going = false;
}

static bool
start_or_follow(struct ui *ui, const struct plan *plan, const char *title,
		const struct strvec *tests, bool remember, const char *follow)
{
	const struct profiles *prof = ui_profiles(ui);
	struct live_run *lr;
	char *full;

	if (ui_run_active(ui)) {
		ui_msg(ui, true, "a run is going already");
		return false;
	}
	if (!prof) {
		ui_msg(ui, true, "%s", ui->profiles_error);
		return false;
	}
	lr = xcalloc(1, sizeof(*lr));
	lr->ui = ui;
	lr->m = xmalloc(sizeof(*lr->m));
	run_model_init(lr->m);
	if (tests) {
		const char *config = plan->configs.n ? plan->configs.v[0] : NULL;

		for (size_t c = 0; c < (plan->configs.n ? plan->configs.n : 1); c++) {
			const struct fs_config *fc;

			if (plan->configs.n)
				config = plan->configs.v[c];
			fc = config ? profiles_config(prof, config) : NULL;
			for (size_t i = 0; i < tests->n; i++)
				if (!fc || catalogue_name_fits(tests->v[i], fc->fstyp))
					run_model_add_pending(lr->m, config, tests->v[i], -1);
		}
	}
	event_bus_add(&lr->bus, run_model_listener(lr->m));
	event_bus_add(&lr->bus, (struct listener){ .on_event = on_event, .data = lr });
	if (engine_new(plan, prof, ui->loop, &lr->bus, &lr->e) != OK) {
		ui_msg(ui, true, "cannot start the run: %s", error_msg());
		event_bus_release(&lr->bus);
		run_model_release(lr->m);
		free(lr->m);
		free(lr);
		return false;
	}
	if ((follow ? engine_follow(lr->e, follow) : engine_start(lr->e)) != OK) {
		ui_msg(ui, true, "cannot %s the run: %s", follow ? "follow" : "start", error_msg());
		live_free_one(lr);
		return false;
	}
	if (remember) {
		lr->remember = xmalloc(sizeof(*lr->remember));
		plan_init(lr->remember);
		plan_copy(lr->remember, plan);
	}
	lr->older = ui->live;
	ui->live = lr;
	ui->run_going = true;
	if (!ui->tick_timer)
		ui->tick_timer = loop_add_timer(ui->loop, 1000, true, on_tick, ui);
	full = xasprintf("fswb \xc2\xb7 %s", title ? title : "run");
	runview_open(ui, lr->m, false, true, full, engine_run_dir(lr->e));
	free(full);
	return true;
}

bool
ui_run_start(struct ui *ui, const struct plan *plan, const char *title, const struct strvec *tests,
	     bool remember)
{
	return start_or_follow(ui, plan, title, tests, remember, NULL);
}

bool
ui_run_follow(struct ui *ui, const char *dir)
{
	char *path = path_join(dir, "plan.json"), *title;
	const char *id = strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir;
	struct plan plan;
	bool ok;

	plan_init(&plan);
	if (plan_load(path, &plan) != OK) {
		ui_msg(ui, true, "cannot follow the run: %s", error_msg());
		error_clear();
		ok = false;
	} else {
		title = xasprintf("run %s, detached", id);
		ok = start_or_follow(ui, &plan, title, NULL, false, dir);
		free(title);
	}
	plan_release(&plan);
	free(path);
	return ok;
}

/* What a test run again keeps of its run, in words (free() it). */
static char *
kept_words(const struct plan *p, const struct profiles *prof, const char *from)
{
	const char *name = plan_settings_set(p);
	const struct test_set *set = name && prof ? profiles_set(prof, name) : NULL;
	struct strbuf sb = STRBUF_INIT;
	char *list;

	strbuf_addf(&sb, "as %s had it: ", from);
	list = strvec_join(&p->configs, ", ");
	strbuf_adds(&sb, list);
	free(list);
	if (set && set->env.n) {
		list = strvec_join(&set->env, " ");
		strbuf_addf(&sb, ", %s's settings (%s)", set->name, list);
		free(list);
	}
	strbuf_addf(&sb, ", kernel %s", p->kernel.spec ? p->kernel.spec : "chosen by default");
	if (p->fstests_src)
		strbuf_addf(&sb, ", fstests from %s", p->fstests_src);
	strbuf_addf(&sb, ", %u CPUs", p->cpus);
	return strbuf_detach(&sb);
}

bool
ui_run_test_again(struct ui *ui, const char *run_dir, const char *config, const char *test,
		  bool shell)
{
	struct plan plan;
	struct strvec one = STRVEC_INIT;
	char *title, *kept;
	const char *from = "its run";
	bool ok;

	plan_init(&plan);
	if (!run_dir || run_plan_again(run_dir, config, test, &plan) != OK) {
		char *last = ui_last_plan_path();

		/* a run without a plan (imported): the last plan's choices */
		plan_release(&plan);
		plan_init(&plan);
		from = "the last plan";
		if (!path_exists(last) || plan_load(last, &plan) != OK) {
			plan_release(&plan);
			plan_init(&plan);
			from = "the defaults";
		}
		error_clear();
		plan_one_test(&plan, config, test);
		free(last);
	}
	plan.shell = shell;
	plan_defaults(&plan);
	strvec_push(&one, test);
	title = xasprintf("%s%s%s alone%s%s", config ? config : "", config ? " \xc2\xb7 " : "",
			  test, plan_settings_set(&plan) ? ", settings of " : "",
			  plan_settings_set(&plan) ? plan_settings_set(&plan) : "");
	kept = kept_words(&plan, ui_profiles(ui), from);
	ok = ui_run_start(ui, &plan, title, &one, false);
	if (ok)
		ui_msg(ui, false, "%s alone, %s", test, kept);
	free(kept);
	free(title);
	strvec_clear(&one);
	plan_release(&plan);
	return ok;
}
