/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The wizard: welcome, kernel, filesystem, backend, tests, review. Each
 * step fills the plan; the review shows the `fswb run` line that makes the
 * same plan, the estimate, and starts the run. Values are checked as they
 * are typed (fstests' source, a guest's CPUs and memory against this host).
 * The plan of a run whose first test started is remembered for next time
 * (ui_run_start); one that failed to start is not.
 */
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "run/inventory.h"
#include "run/plan_check.h"
#include "run/shards.h"
#include "core/paths.h"
#include "core/status.h"
#include "fstests/catalogue.h"
#include "kbuild/kernel.h"
#include "ui/pager.h"
#include "view/planutil.h"
#include "view/text.h"
#include "ui/ui_int.h"

enum step { S_WELCOME, S_KERNEL, S_FS, S_BACKEND, S_TESTS, S_REVIEW, S_COUNT };

static const char *const step_names[S_COUNT] = {
	"fstests workbench", "kernel", "filesystem", "backend", "tests", "review",
};
/* Pages of docs/getting-started ('#' a heading's anchor), one per step. */
static const char *const step_docs[S_COUNT] = {
	"what-is-fstests.md",
	"first-run.md#3-what-the-run-does",
	"what-is-fstests.md#configuration-and-sections",
	"backends.md",
	"first-run.md#4-choosing-what-to-run",
	"first-run.md",
};

/* What the tests step offers, in order. */
enum test_choice_kind { TC_PRESET, TC_GROUP, TC_TEST };

struct test_choice {
	enum test_choice_kind kind;
	const char *name; /* the preset's name */
};

enum prompt_kind {
	P_NONE,
	P_KERNEL_PATH,
	P_CPUS,
	P_MEM,
	P_SHARDS,
	P_FSTESTS,
	P_XGROUP,
	P_EXCLUDE,
	P_BOPTS,
	P_CONFIRM,
	P_FORGET,
	P_SEARCH
};

struct wizard {
	enum step step;
	struct plan plan;
	char *plan_note; /* why the last plan was not used */

	/* welcome */
	struct hostcheck hc;
	bool hc_done, hc_full;
	struct backend_probe probe; /* the chosen backend's */
	bool probed;
	struct probe_ask *probe_ask; /* it, being asked (a worker) */

	/* kernel */
	struct kernel_list kl;
	bool kl_done;
	char *kl_error;
	struct listpos lp_kernel;

	/* filesystem */
	struct listpos lp_fs;

	/* backend */
	const char *const *backends;
	size_t nbackends;
	struct backend_probe *probes; /* every backend's, for step 4 */
	struct probe_ask **asks;      /* those being asked; NULL once answered */
	struct wizard_slot *slots;    /* what each answer's callback gets */
	struct strvec *bopts;	      /* each backend's options (-o), kept while it is not chosen */
	struct listpos lp_backend;

	/* tests */
	struct catalogue cat;
	bool cat_done, have_cat;
	char *cat_error;
	struct listpos lp_tests;
	int tests_mode; /* 0 the choices, 1 groups, 2 tests (search) */
	struct listpos lp_pick;
	size_t *pick; /* indexes of groups or tests matching the search */
	size_t npick;

	/* a one-line prompt */
	enum prompt_kind prompt;
	struct lineedit le;

	/* review */
	size_t ntests; /* selected tests, or 0 when unknown */
	struct strvec selection;
	struct estimator est; /* earlier runs, SOAK_DURATION (inventory_estimator) */
	bool hist_done;

	struct ui *ui;
	uint64_t ask_timer;    /* the answers asked for, pending */
	uint64_t doctor_timer; /* the whole host check, pending */
	struct job *trials;    /* the quick check's untried findings, tried in the background */
	int list_h;
};

/* ---- the plan, remembered ---- */

static const struct backend_ops *chosen_backend(struct wizard *w);

/* Whether a guest of the plan fits this host (shards_guest_fits); else error_msg(). */
static enum status
fits_here(struct wizard *w)
{
	struct host_size host;

	host_size_read(&host);
	return shards_guest_fits(&w->plan, chosen_backend(w), &host);
}

static void
load_plan(struct ui *ui, struct wizard *w)
{
	char *path = ui_last_plan_path();
	const struct profiles *prof = ui_profiles(ui);

	plan_init(&w->plan);
	if (path_exists(path)) {
		if (plan_load(path, &w->plan) != OK || (prof && plan_check(&w->plan, prof) != OK) ||
		    fits_here(w) != OK) {
			w->plan_note =
				xasprintf("the remembered choices were not used: %s", error_msg());
			plan_release(&w->plan);
			plan_init(&w->plan);
		}
	}
	error_clear();
	plan_defaults(&w->plan);
	free(path);
}

/* ---- loading what the steps show ---- */

static const struct backend_ops *
chosen_backend(struct wizard *w)
{
	return backend_find(w->plan.backend ? w->plan.backend : "qemu");
}

static void forget_probes(struct wizard *w);

struct wizard_slot {
	struct wizard *w;
	size_t i;
};

/* The chosen backend's probe answered (from its worker). */
static void
on_probe(void *data, struct backend_probe *p)
{
	struct wizard *w = data;

	w->probe_ask = NULL;
	w->ui->pending--;
	w->probe = *p;
	w->probed = true;
	ui_dirty(w->ui);
}

/* One backend's probe of step 4 answered. */
static void
on_slot_probe(void *data, struct backend_probe *p)
{
	struct wizard_slot *s = data;
	struct wizard *w = s->w;

	w->asks[s->i] = NULL;
	w->ui->pending--;
	w->probes[s->i] = *p;
	ui_dirty(w->ui);
}

/* A backend's x (what it keeps on the machine, removed) has ended: the probe is fresh. */
static void
on_slot_forget(void *data, struct backend_probe *p, const char *said)
{
	struct wizard_slot *s = data;

	on_slot_probe(data, p);
	ui_msg(s->w->ui, !str_startswith(said, "removed"), "%s", said);
}

/* The background trials ended: their verdicts are kept, the quick check reads them. */
static void
on_trials(void *data, const struct job_result *r)
{
	struct wizard *w = data;
	struct ui *ui = w->ui;

	job_free(w->trials);
	w->trials = NULL;
	if (w->hc_full)
		return; /* doctor has checked everything meanwhile */
	hostcheck_release(&w->hc);
	inventory_host(ui->loop, ui_profiles(ui), false, &w->hc);
	forget_probes(w);
	ui_dirty(ui);
}

static void
load_welcome(struct ui *ui, struct wizard *w)
{
	if (!w->hc_done) {
		/* the quick checks: programs and the KVM boot trial are fswb doctor's */
		inventory_host(ui->loop, ui_profiles(ui), false, &w->hc);
		w->hc_done = true;
		/* what only a trial tells (KVM running a guest): tried at once, aside */
		if (w->hc.untried && inventory_trials_start(ui->loop, ui_profiles(ui), on_trials, w,
							    &w->trials) != OK)
			error_clear();
	}
	if (!w->probed && !w->probe_ask && chosen_backend(w)) {
		if (inventory_probe_start(ui->loop, w->plan.backend ? w->plan.backend : "qemu",
					  &w->plan, on_probe, w, &w->probe_ask) == OK) {
			ui->pending++;
		} else {
			w->probe = (struct backend_probe){ .summary = xasprintf("cannot tell: %s",
										error_msg()) };
			error_clear();
			w->probed = true;
		}
	}
}

static bool
slow_here(struct wizard *w)
{
	return (w->probed && w->probe.slow) || (w->hc_done && w->hc.slow);
}

static void
load_kernels(struct ui *ui, struct wizard *w)
{
	if (w->kl_done)
		return;
	w->kl_done = true;
	free(w->kl_error);
	w->kl_error = NULL;
	if (inventory_kernels(ui->loop, &w->plan, ui_profiles(ui), &w->kl) != OK)
		w->kl_error = xstrdup(error_msg());
}

/* The probes are asked again: the KVM verdict they read has changed (doctor tried it). */
static void
forget_probes(struct wizard *w)
{
	if (w->probe_ask) {
		inventory_probe_stop(w->probe_ask);
		w->probe_ask = NULL;
		w->ui->pending--;
	}
	if (w->probed)
		backend_probe_release(&w->probe);
	w->probed = false;
	for (size_t i = 0; w->probes && i < w->nbackends; i++) {
		if (w->asks[i]) {
			inventory_probe_stop(w->asks[i]);
			w->ui->pending--;
		}
		backend_probe_release(&w->probes[i]);
	}
	free(w->probes);
	free(w->asks);
	free(w->slots);
	w->probes = NULL;
	w->asks = NULL;
	w->slots = NULL;
}

/* Backend i is asked (again), with its own options. */
static void
probe_backend(struct wizard *w, size_t i)
{
	struct ui *ui = w->ui;
	struct plan p;

	if (w->asks[i]) {
		inventory_probe_stop(w->asks[i]);
		w->asks[i] = NULL;
		ui->pending--;
	}
	backend_probe_release(&w->probes[i]);
	plan_init(&p);
	plan_copy(&p, &w->plan);
	free(p.backend);
	p.backend = xstrdup(w->backends[i]);
	strvec_clear(&p.backend_opts);
	strvec_copy(&p.backend_opts, &w->bopts[i]);
	/* the worker has its copy of p once it started */
	if (inventory_probe_start(ui->loop, w->backends[i], &p, on_slot_probe, &w->slots[i],
				  &w->asks[i]) == OK) {
		ui->pending++;
	} else {
		w->probes[i].summary = xasprintf("cannot tell: %s", error_msg());
		error_clear();
	}
	plan_release(&p);
}

/* Step 4's probes: each backend's asked at once, answers drawn as they come. */
static void
load_probes(struct wizard *w)
{
	if (w->probes)
		return;
	w->backends = backend_names();
	for (w->nbackends = 0; w->backends[w->nbackends]; w->nbackends++)
		;
	if (!w->bopts) {
		w->bopts = xcalloc(w->nbackends + 1, sizeof(*w->bopts));
		for (size_t i = 0; i < w->nbackends; i++) {
			strvec_init(&w->bopts[i]);
			if (w->plan.backend && !strcmp(w->plan.backend, w->backends[i]))
				strvec_copy(&w->bopts[i], &w->plan.backend_opts);
		}
	}
	w->probes = xcalloc(w->nbackends + 1, sizeof(*w->probes));
	w->asks = xcalloc(w->nbackends + 1, sizeof(*w->asks));
	w->slots = xcalloc(w->nbackends + 1, sizeof(*w->slots));
	for (size_t i = 0; i < w->nbackends; i++) {
		w->slots[i] = (struct wizard_slot){ w, i };
		probe_backend(w, i);
	}
}

/* KEY=VALUE words for the backend the cursor is on: checked as plan time checks them. */
static void
apply_bopts(struct ui *ui, struct wizard *w, const char *text)
{
	size_t i = w->lp_backend.sel;
	struct strvec words = STRVEC_INIT;
	struct plan p;

	if (i >= w->nbackends)
		return;
	plan_init(&p);
	p.backend = xstrdup(w->backends[i]);
	strvec_split(&words, text, " ");
	for (size_t k = 0; k < words.n; k++) {
		if (plan_set_backend_kv(&p, words.v[k]) != OK) {
			ui_msg(ui, true, "%s", error_msg());
			error_clear();
			goto out;
		}
	}
	if (backend_check_options(&p) != OK) {
		ui_msg(ui, true, "%s", error_msg());
		error_clear();
		goto out;
	}
	strvec_clear(&w->bopts[i]);
	strvec_copy(&w->bopts[i], &p.backend_opts);
	probe_backend(w, i);
out:
	strvec_clear(&words);
	plan_release(&p);
}

/* The user typed yes to what backend i's probe asked: its option is set, and it is asked again. */
static void
apply_confirm(struct ui *ui, struct wizard *w, const char *text)
{
	size_t i = w->lp_backend.sel;
	const char *opt = i < w->nbackends ? w->probes[i].confirm_opt : NULL;
	struct plan p;

	if (!opt)
		return;
	if (strcmp(text, "yes")) {
		ui_msg(ui, true, "not confirmed (type yes to confirm)");
		return;
	}
	plan_init(&p);
	strvec_copy(&p.backend_opts, &w->bopts[i]);
	if (plan_set_backend_kv(&p, opt) == OK) {
		strvec_clear(&w->bopts[i]);
		strvec_copy(&w->bopts[i], &p.backend_opts);
	}
	error_clear(); /* a probe's confirm_opt is KEY=VALUE */
	plan_release(&p);
	probe_backend(w, i);
}

/* The user typed yes to x: what backend i keeps on its machine goes, in a worker. */
static void
apply_forget(struct ui *ui, struct wizard *w, const char *text)
{
	size_t i = w->lp_backend.sel;
	struct plan p;

	if (i >= w->nbackends || !w->probes[i].kept || w->asks[i])
		return;
	if (strcmp(text, "yes")) {
		ui_msg(ui, true, "nothing removed (type yes to remove it)");
		return;
	}
	plan_init(&p);
	plan_copy(&p, &w->plan);
	free(p.backend);
	p.backend = xstrdup(w->backends[i]);
	strvec_clear(&p.backend_opts);
	strvec_copy(&p.backend_opts, &w->bopts[i]);
	backend_probe_release(&w->probes[i]);
	if (inventory_forget_start(ui->loop, w->backends[i], &p, on_slot_forget, &w->slots[i],
				   &w->asks[i]) == OK) {
		ui->pending++;
		ui_msg(ui, false, "removing...");
	} else {
		w->probes[i].summary = xasprintf("cannot tell: %s", error_msg());
		error_clear();
	}
	plan_release(&p);
}

/* Backend i's probe has not answered yet. */
static bool
probe_pending(const struct wizard *w, size_t i)
{
	return w->asks && w->asks[i];
}

static void
load_catalogue(struct wizard *w)
{
	if (w->cat_done)
		return;
	w->cat_done = true;
	free(w->cat_error);
	w->cat_error = NULL;
	if (inventory_catalogue(&w->plan, &w->cat) != OK)
		w->cat_error = xstrdup(error_msg());
	else
		w->have_cat = true;
	error_clear();
}

/* Count the tests a plan's test choice selects (0 when it cannot be known). */
static size_t
count_tests(struct ui *ui, struct wizard *w, const char *preset, struct strvec *names)
{
	struct catalogue_selection sel;
	size_t n = 0;

	const struct profiles *prof = ui_profiles(ui);
	const struct fs_config *c =
		prof && w->plan.configs.n ? profiles_config(prof, w->plan.configs.v[0]) : NULL;

	if (!w->have_cat || !c)
		return 0;
	if (inventory_selection(&w->plan, prof, &w->cat, preset, c, &sel) == OK) {
		n = sel.tests.n - sel.expunged.n;
		for (size_t i = 0; names && i < sel.tests.n; i++)
			if (!strvec_contains(&sel.expunged, sel.tests.v[i]))
				strvec_push(names, sel.tests.v[i]);
		catalogue_selection_release(&sel);
	}
	error_clear();
	return n;
}

static void
load_history(struct ui *ui, struct wizard *w)
{
	if (w->hist_done)
		return;
	estimator_release(&w->est);
	inventory_estimator(&w->plan, ui_profiles(ui), false, &w->est);
	w->hist_done = true;
}

/*
 * What a run of preset (NULL: the plan's own tests) takes here, in *t; slow:
 * emulated. t->ntests is 0 when the tests are not known yet.
 */
static void
estimate_here(struct ui *ui, struct wizard *w, const char *preset, bool slow, struct est_total *t)
{
	w->est.slow = slow;
	inventory_estimate(&w->plan, ui_profiles(ui), w->have_cat ? &w->cat : NULL, &w->est, preset,
			   NULL, t);
}

/*
 * What backend i's probe asks to confirm; for one that costs money, its cost
 * line for this plan's run on it, for as long as the run is expected to take.
 * free() it.
 */
static char *
confirm_text(struct ui *ui, struct wizard *w, size_t i)
{
	const struct backend_ops *ops = backend_find(w->backends[i]);
	struct est_total t;
	struct plan p;
	char *s;

	if (!ops || !(ops->caps & BACKEND_COSTS))
		return xstrdup(w->probes[i].confirm);
	plan_init(&p);
	plan_copy(&p, &w->plan);
	free(p.backend);
	p.backend = xstrdup(ops->name);
	strvec_clear(&p.backend_opts);
	strvec_copy(&p.backend_opts, &w->bopts[i]);
	w->est.slow = false; /* a cloud's machines are not emulated */
	inventory_estimate(&p, ui_profiles(ui), w->have_cat ? &w->cat : NULL, &w->est, NULL, NULL,
			   &t);
	s = backend_cost(ops, &p, t.shards, t.ntests ? t.wall : 0);
	plan_release(&p);
	return s;
}

/* t's time on its guests at once: "~8 min", "~3 min on 2 guests". */
static const char *
est_words(const struct est_total *t, char *buf, size_t len)
{
	char eta[32];

	format_eta(t->wall, eta, sizeof(eta));
	if (t->shards > 1)
		snprintf(buf, len, "%s on %u guests", eta, t->shards);
	else
		snprintf(buf, len, "%s", eta);
	return buf;
}

/* How many guests at once for the plan on this host, and why (units: 0 not known). */
static void
shards_here(struct wizard *w, size_t units, struct strbuf *why)
{
	struct host_size host;

	host_size_read(&host);
	shards_choose(&w->plan, chosen_backend(w), &host, units, why);
}

/*
 * What the current step shows, asked of the inventory from the loop (never
 * while drawing); the screen is drawn again when the answers are in.
 */
static void
on_answers(struct loop *loop, void *data)
{
	struct wizard *w = data;
	struct ui *ui = w->ui;

	w->ask_timer = 0;
	ui->pending--;
	switch (w->step) {
	case S_WELCOME:
		load_welcome(ui, w);
		load_catalogue(w);
		load_history(ui, w);
		break;
	case S_KERNEL:
		load_kernels(ui, w);
		break;
	case S_BACKEND:
		load_probes(w);
		break;
	case S_TESTS:
		load_catalogue(w);
		load_history(ui, w);
		break;
	case S_REVIEW:
		load_welcome(ui, w);
		load_catalogue(w);
		load_history(ui, w);
		if (w->plan.kernel.kind == KERNEL_AUTO)
			load_kernels(ui, w); /* what automatic is now */
		break;
	default:
		break;
	}
	ui_dirty(ui);
}

/* The step's answers are missing: ask for them (once). */
static void
ask(struct ui *ui, struct wizard *w)
{
	if (w->ask_timer)
		return;
	ui->pending++;
	w->ask_timer = loop_add_timer(ui->loop, 0, false, on_answers, w);
}

static bool
welcome_known(struct wizard *w)
{
	return w->hc_done && (w->probed || w->probe_ask || !chosen_backend(w));
}

/* ---- drawing helpers ---- */

static int
para(struct ui *ui, int y, int x, int width, int maxy, enum role role, const char *text)
{
	struct strvec lines = STRVEC_INIT;

	text_wrap(text, width, true, &lines);
	for (size_t i = 0; i < lines.n && y < maxy; i++)
		ui_put(ui, y++, x, width, role, lines.v[i]);
	strvec_clear(&lines);
	return y;
}

static void
frame(struct ui *ui, struct wizard *w, int *y0, int *body_h)
{
	char left[96], right[32];

	snprintf(left, sizeof(left), "fswb %s %s", ui->g.dot, step_names[w->step]);
	snprintf(right, sizeof(right), "step %d of %d", (int)w->step + 1, (int)S_COUNT);
	*y0 = ui_frame(ui, left, right, body_h);
}

static void
hint(struct ui *ui, int y0, int body_h, const char *text)
{
	ui_put(ui, y0 + body_h - 1, 2, ui->cols - 4, R_DIM, text);
}

static void
draw_prompt(struct ui *ui, struct wizard *w, const char *label)
{
	int y = ui->rows - 2, x;

	ui_fill(ui, y, 0, ui->cols, R_NORMAL);
	x = 1 + ui_put(ui, y, 1, ui->cols - 2, R_BOLD, label);
	x += 1;
	ui_put(ui, y, x, ui->cols - x - 1, R_NORMAL, w->le.text.buf);
	ui_put(ui, y, x + lineedit_cursor_col(&w->le, ui->ascii), 1, R_SEL, " ");
}

static const char *
prompt_label(enum prompt_kind k)
{
	switch (k) {
	case P_KERNEL_PATH:
		return "kernel tree, bzImage or installed version:";
	case P_CPUS:
		return "CPUs per guest:";
	case P_MEM:
		return "memory per guest (2G, 1536M):";
	case P_SHARDS:
		return "guests at once (auto, or 1 to 64):";
	case P_FSTESTS:
		return "fstests tree (a directory) or git URL:";
	case P_XGROUP:
		return "leave out groups (check -x; commas):";
	case P_EXCLUDE:
		return "leave out tests (check -e; commas):";
	case P_BOPTS:
		return "options (KEY=VALUE, spaces between):";
	case P_CONFIRM:
		return "type yes to confirm:";
	case P_FORGET:
		return "type yes to remove it:";
	case P_SEARCH:
		return "search:";
	default:
		return "";
	}
}

/* ---- step 1: welcome ---- */

static void
draw_welcome(struct ui *ui, struct wizard *w, int y0, int body_h)
{
	int y = y0 + 1, maxy = y0 + body_h - 1, width = ui->cols - 4;
	char est[64], est2[64];
	struct est_total smoke, kvm;
	char *s;

	if (!welcome_known(w) || !w->cat_done || !w->hist_done)
		ask(ui, w);
	y = para(ui, y, 2, width, maxy, R_NORMAL,
		 "fstests is the Linux filesystem test suite. Each test exercises one behaviour "
		 "of a filesystem and compares what happened with the expected output.");
	y++;
	s = xasprintf("fswb will:  pick a kernel %s pick a filesystem %s pick where to run %s "
		      "pick the tests %s build what is missing %s run and show you",
		      ui->g.arrow, ui->g.arrow, ui->g.arrow, ui->g.arrow, ui->g.arrow);
	y = para(ui, y, 2, width, maxy, R_NORMAL, s);
	free(s);
	y++;
	if (y < maxy)
		ui_put(ui, y++, 2, width, R_BOLD, "This machine");
	if (w->hc_done && w->hc.n) {
		for (size_t i = 0; i < w->hc.n && y < maxy - 3; i++) {
			const struct hc_finding *f = &w->hc.v[i];
			const char *mark = f->state == HC_OK	 ? ui->g.ok
					   : f->state == HC_WARN ? ui->g.warn
								 : ui->g.no;
			enum role role = f->state == HC_OK     ? R_PASS
					 : f->state == HC_WARN ? R_WARN
							       : R_FAIL;

			if (!f->required && f->state == HC_OK && !f->shown)
				continue;
			ui_put(ui, y, 4, 1, role, mark);
			ui_putf(ui, y++, 6, width - 4, R_NORMAL, "%s%s%s%s%s%s", f->name,
				f->detail ? ": " : "", f->detail ? f->detail : "",
				f->fix && f->state != HC_OK ? " (fix: " : "",
				f->fix && f->state != HC_OK ? f->fix : "",
				f->fix && f->state != HC_OK ? ")" : "");
		}
		if (w->trials && y < maxy - 3) {
			ui_put(ui, y, 4, 1, R_DIM, ui->g.running);
			ui_put(ui, y++, 6, width - 4, R_DIM,
			       "trying a guest under KVM in the background (a few seconds)");
		}
	} else if (w->probed) {
		ui_put(ui, y, 4, 1, w->probe.usable ? R_PASS : R_FAIL,
		       w->probe.usable ? ui->g.ok : ui->g.no);
		ui_put(ui, y++, 6, width - 4, R_NORMAL, w->probe.summary);
	}
	estimate_here(ui, w, "smoke", slow_here(w), &smoke);
	if (!smoke.ntests) {
		s = xstrdup("How long a smoke run takes is known once fswb has the fstests tree.");
	} else if (slow_here(w)) {
		estimate_here(ui, w, "smoke", false, &kvm);
		s = xasprintf("A smoke run (%zu tests) takes %s here under TCG instead of %s with "
			      "KVM.",
			      smoke.ntests, est_words(&smoke, est, sizeof(est)),
			      est_words(&kvm, est2, sizeof(est2)));
	} else {
		s = xasprintf("A smoke run (%zu tests) takes %s here%s.", smoke.ntests,
			      est_words(&smoke, est, sizeof(est)),
			      w->trials ? " if KVM works (being tried)" : "");
	}
	if (y < maxy - 1) {
		ui_put(ui, y, 4, 1, slow_here(w) ? R_WARN : R_PASS,
		       slow_here(w) ? ui->g.warn : ui->g.ok);
		y = para(ui, y, 6, width - 4, maxy, R_NORMAL, s);
	}
	free(s);
	y++;
	if (w->plan_note && y < maxy)
		y = para(ui, y, 2, width, maxy, R_WARN, w->plan_note);
	para(ui, y, 2, width, maxy + 1, R_NORMAL,
	     "Press Enter to start with sensible defaults, or ? to read what fstests is.");
}

#define DOCTOR_INDENT 17 /* "qemu     WARN    " */

static void doctor_details(struct ui *ui, struct wizard *w);

/*
 * The whole check, KVM boot trial included (seconds): from the loop, after
 * the frame that says so; keys wait meanwhile. Then the findings.
 */
static void
on_doctor(struct loop *loop, void *data)
{
	struct wizard *w = data;
	struct ui *ui = w->ui;

	w->doctor_timer = 0;
	ui->pending--;
	job_free(w->trials); /* the whole check tries again */
	w->trials = NULL;
	loop_mod_fd(ui->loop, 0, 0);
	if (w->hc_done)
		hostcheck_release(&w->hc);
	inventory_host(ui->loop, ui_profiles(ui), true, &w->hc);
	loop_mod_fd(ui->loop, 0, POLLIN);
	w->hc_done = w->hc_full = true;
	forget_probes(w);
	free(ui->message);
	ui->message = NULL;
	doctor_details(ui, w);
}

/* head (DOCTOR_INDENT columns), then text wrapped under its start: read whole. */
static void
doctor_line(struct textdoc *d, enum role role, const char *head, const char *text, int width)
{
	struct strvec lines = STRVEC_INIT;

	text_wrap(text, width - DOCTOR_INDENT, false, &lines);
	for (size_t i = 0; i < lines.n; i++)
		textdoc_addf(d, role, "%-*s%s", DOCTOR_INDENT, i ? "" : head, lines.v[i]);
	strvec_clear(&lines);
}

static void
doctor_details(struct ui *ui, struct wizard *w)
{
	struct pager *p;
	struct textdoc *d;

	if (!w->hc_full) {
		if (!w->doctor_timer) {
			ui_msg(ui, false, "checking this machine (a few seconds)...");
			ui->pending++;
			w->doctor_timer =
				loop_add_timer(ui->loop, 2 * UI_FRAME_MS, false, on_doctor, w);
		}
		return;
	}
	p = pager_new("fswb \xc2\xb7 this machine");
	d = pager_tab(p, "findings");
	for (size_t i = 0; i < w->hc.n; i++) {
		const struct hc_finding *f = &w->hc.v[i];

		enum role role = f->state == HC_OK     ? R_PASS
				 : f->state == HC_WARN ? R_WARN
						       : (f->required ? R_FAIL : R_DIM);
		char head[32], *s = xasprintf("%s%s%s", f->name, *f->detail ? ": " : "", f->detail);

		snprintf(head, sizeof(head), "%-8s %-7s ", f->group, hc_state_str(f->state));
		doctor_line(d, role, head, s, ui->cols - 2);
		free(s);
		if (f->fix) {
			s = xasprintf("fix: %s", f->fix);
			doctor_line(d, R_NORMAL, "", s, ui->cols - 2);
			free(s);
		}
	}
	if (!w->hc.n)
		textdoc_add(d, R_DIM, "No findings.");
	textdoc_add(d, R_NORMAL, "");
	textdoc_add(d, R_DIM,
		    "'fswb doctor' checks the same, and also tries a KVM boot and the versions.");
	pager_open(ui, p, NULL, NULL);
}

/* ---- step 2: kernel ---- */

static size_t
kernel_rows(struct wizard *w)
{
	return 1 + w->kl.n + 1; /* automatic, the found ones, a path */
}

static void
kernel_words(const struct kernel *k, struct strbuf *sb)
{
	const char *kind = k->kind == KERNEL_TREE    ? "tree"
			   : k->kind == KERNEL_IMAGE ? "image"
						     : "installed";

	strbuf_addf(sb, "%-9s %s", kind,
		    k->kind == KERNEL_TREE ? k->tree : (k->version ? k->version : k->image));
	if (k->kind == KERNEL_TREE && k->version)
		strbuf_addf(sb, " (%s%s)", k->version, k->built ? "" : ", not built");
}

static void
kernel_check_words(const struct kernel *k, struct strbuf *sb)
{
	if (!k->checked)
		strbuf_adds(sb,
			    k->kind == KERNEL_TREE ? "configured when built" : "config unknown");
	else if (k->report.nneeded)
		strbuf_addf(sb, "config lacks %zu needed option%s", k->report.nneeded,
			    k->report.nneeded == 1 ? "" : "s");
	else
		strbuf_adds(sb, "config ok");
}

static void
draw_kernel(struct ui *ui, struct wizard *w, int y0, int body_h)
{
	size_t n;
	char *cfgs = strvec_join(&w->plan.configs, ", ");

	if (!w->kl_done)
		ask(ui, w);
	n = kernel_rows(w);
	ui_putf(ui, y0, 2, ui->cols - 4, R_DIM, "The kernel the guest boots; checked for %s.",
		cfgs);
	free(cfgs);
	w->list_h = body_h - 3;
	listpos_fix(&w->lp_kernel, n, (size_t)w->list_h);
	for (int row = 0; row < w->list_h; row++) {
		size_t i = w->lp_kernel.top + (size_t)row;
		struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;
		bool sel, chosen = false;
		int y = y0 + 1 + row;

		if (i >= n)
			break;
		sel = i == w->lp_kernel.sel;
		if (i == 0) {
			strbuf_adds(&a, "automatic (a tree here, else installed)");
			if (w->kl.auto_index != (size_t)-1 && w->kl.auto_index < w->kl.n) {
				const struct kernel *k = &w->kl.v[w->kl.auto_index];

				strbuf_addf(&b, "now %s",
					    k->kind == KERNEL_TREE
						    ? k->tree
						    : (k->version ? k->version : ""));
			}
			chosen = w->plan.kernel.kind == KERNEL_AUTO;
		} else if (i <= w->kl.n) {
			const struct kernel *k = &w->kl.v[i - 1];

			kernel_words(k, &a);
			kernel_check_words(k, &b);
			chosen = w->plan.kernel.kind != KERNEL_AUTO && w->plan.kernel.spec &&
				 ((k->version && !strcmp(w->plan.kernel.spec, k->version)) ||
				  (k->tree && !strcmp(w->plan.kernel.spec, k->tree)));
		} else {
			strbuf_adds(&a, "another: a path or a version (p)");
			if (w->plan.kernel.kind == KERNEL_TREE ||
			    w->plan.kernel.kind == KERNEL_IMAGE)
				strbuf_addf(&b, "now: %s", w->plan.kernel.spec);
		}
		if (sel)
			ui_fill(ui, y, 0, ui->cols, R_SEL);
		ui_put(ui, y, 2, 1, sel ? R_SEL : R_BOLD, chosen ? ui->g.sel : " ");
		{
			int aw = ui->cols >= 100 ? 60 : 42;

			ui_put(ui, y, 4, aw, sel ? R_SEL : R_NORMAL, a.buf);
			ui_put(ui, y, 5 + aw, ui->cols - aw - 6, sel ? R_SEL : R_DIM, b.buf);
		}
		strbuf_release(&a);
		strbuf_release(&b);
	}
	if (w->kl_error)
		ui_put(ui, y0 + body_h - 2, 2, ui->cols - 4, R_FAIL, w->kl_error);
	hint(ui, y0, body_h,
	     "Enter picks it. A tree is built with a config fstests can run (fswb kernel build).");
}

static bool
pick_kernel(struct ui *ui, struct wizard *w)
{
	size_t i = w->lp_kernel.sel;

	if (i == 0) {
		w->plan.kernel.kind = KERNEL_AUTO;
		free(w->plan.kernel.spec);
		w->plan.kernel.spec = NULL;
		return true;
	}
	if (i <= w->kl.n) {
		const struct kernel *k = &w->kl.v[i - 1];

		free(w->plan.kernel.spec);
		if (k->kind == KERNEL_TREE) {
			w->plan.kernel.kind = KERNEL_TREE;
			w->plan.kernel.spec = xstrdup(k->tree);
		} else if (k->kind == KERNEL_IMAGE) {
			w->plan.kernel.kind = KERNEL_IMAGE;
			w->plan.kernel.spec = xstrdup(k->image);
		} else {
			w->plan.kernel.kind = KERNEL_INSTALLED;
			w->plan.kernel.spec = k->version ? xstrdup(k->version) : NULL;
		}
		return true;
	}
	w->prompt = P_KERNEL_PATH;
	lineedit_set(&w->le, w->plan.kernel.spec ? w->plan.kernel.spec : "");
	return false;
}

/* ---- step 3: filesystem ---- */

static void
draw_fs(struct ui *ui, struct wizard *w, int y0, int body_h)
{
	const struct profiles *prof = ui_profiles(ui);
	int lw = ui->cols >= 72 ? ui->cols / 2 - 4 : ui->cols - 2, y, x = lw + 2;
	const struct fs_config *c;
	char a[32], b[32];

	if (!prof) {
		para(ui, y0 + 1, 2, ui->cols - 4, y0 + body_h, R_FAIL, ui->profiles_error);
		return;
	}
	w->list_h = body_h - 1;
	listpos_fix(&w->lp_fs, prof->nconfigs, (size_t)w->list_h);
	for (int row = 0; row < w->list_h; row++) {
		size_t i = w->lp_fs.top + (size_t)row;
		bool sel, chosen;

		if (i >= prof->nconfigs)
			break;
		c = &prof->configs[i];
		sel = i == w->lp_fs.sel;
		chosen = strvec_contains(&w->plan.configs, c->name);
		if (sel)
			ui_fill(ui, y0 + row, 0, lw, R_SEL);
		ui_put(ui, y0 + row, 1, 1, sel ? R_SEL : R_BOLD, chosen ? ui->g.sel : " ");
		ui_put(ui, y0 + row, 3, 16, sel ? R_SEL : (chosen ? R_BOLD : R_NORMAL), c->name);
		ui_put(ui, y0 + row, 20, lw - 21, sel ? R_SEL : R_DIM, c->description);
	}
	if (ui->cols < 72 || w->lp_fs.sel >= prof->nconfigs)
		goto hint;
	c = &prof->configs[w->lp_fs.sel];
	ui_vline(ui, y0, lw + 1, body_h - 1);
	y = y0;
	ui_put(ui, y++, x + 1, ui->cols - x - 2, R_BOLD, c->name);
	y = para(ui, y, x + 1, ui->cols - x - 2, y0 + body_h - 6, R_NORMAL, c->description);
	y++;
	ui_putf(ui, y++, x + 1, ui->cols - x - 2, R_NORMAL, "mkfs   %s",
		*c->mkfs_options ? c->mkfs_options : "(defaults)");
	ui_putf(ui, y++, x + 1, ui->cols - x - 2, R_NORMAL, "mount  %s",
		*c->mount_options ? c->mount_options : "(defaults)");
	if (c->devices)
		ui_putf(ui, y++, x + 1, ui->cols - x - 2, R_NORMAL, "disks  none (%s in memory)",
			c->fstyp);
	else if (c->pool_devices)
		ui_putf(ui, y++, x + 1, ui->cols - x - 2, R_NORMAL,
			"disks  TEST %s, SCRATCH pool %u x %s",
			format_size(c->test_size, a, sizeof(a)), c->pool_devices,
			format_size(c->scratch_size, b, sizeof(b)));
	else if (c->serve)
		ui_putf(ui, y++, x + 1, ui->cols - x - 2, R_NORMAL,
			"disks  TEST %s, SCRATCH %s, %s served over %s",
			format_size(c->test_size, a, sizeof(a)),
			format_size(c->scratch_size, b, sizeof(b)), c->base, c->serve);
	else
		ui_putf(ui, y++, x + 1, ui->cols - x - 2, R_NORMAL, "disks  TEST %s, SCRATCH %s",
			format_size(c->test_size, a, sizeof(a)),
			format_size(c->scratch_size, b, sizeof(b)));
	if (c->logdev_size || c->rtdev_size)
		ui_putf(ui, y++, x + 1, ui->cols - x - 2, R_NORMAL, "       %s%s %s%s",
			c->logdev_size ? "LOG " : "",
			c->logdev_size ? format_size(c->logdev_size, a, sizeof(a)) : "",
			c->rtdev_size ? "RT " : "",
			c->rtdev_size ? format_size(c->rtdev_size, b, sizeof(b)) : "");
	{
		char *k = strvec_join(&c->kconfig, " ");

		ui_putf(ui, y++, x + 1, ui->cols - x - 2, R_NORMAL, "kernel needs  %s", k);
		free(k);
	}
	y++;
	para(ui, y, x + 1, ui->cols - x - 2, y0 + body_h - 1, R_DIM,
	     "Tip: pick several with Space to run them one after another.");
hint:
	hint(ui, y0, body_h, "");
}

/* ---- step 4: backend ---- */

static void
draw_backend(struct ui *ui, struct wizard *w, int y0, int body_h)
{
	int y = y0 + 1, maxy = y0 + body_h - 1;
	struct strbuf why = STRBUF_INIT;
	char mem[32];

	if (!w->probes)
		ask(ui, w);
	for (size_t i = 0; i < w->nbackends && y < maxy; i++) {
		const struct backend_ops *ops = backend_find(w->backends[i]);
		const struct backend_probe *pr = &w->probes[i];
		bool sel = i == w->lp_backend.sel;
		bool chosen = w->plan.backend && !strcmp(w->plan.backend, w->backends[i]);
		int attr = pr->usable ? (pr->slow ? R_WARN : R_PASS) : R_FAIL;
		const char *glyph = pr->usable ? (pr->slow ? ui->g.warn : ui->g.ok) : ui->g.no;
		const char *summary = pr->summary ? pr->summary : "";

		if (sel)
			ui_fill(ui, y, 0, ui->cols, R_SEL);
		ui_put(ui, y, 2, 1, sel ? R_SEL : R_BOLD, chosen ? ui->g.sel : " ");
		ui_put(ui, y, 4, 10, sel ? R_SEL : R_BOLD, w->backends[i]);
		if (probe_pending(w, i)) {
			attr = R_DIM;
			glyph = ui->g.running;
			summary = "checking...";
		}
		if (!sel) {
			/* one line each: the one under the cursor says what it is, and more */
			ui_put(ui, y, 15, 1, attr, glyph);
			ui_put(ui, y++, 17, ui->cols - 18, attr == R_DIM ? R_DIM : R_NORMAL,
			       summary);
			continue;
		}
		ui_put(ui, y, 15, ui->cols - 16, R_SEL,
		       ops && ops->description ? ops->description : "");
		y++;
		ui_put(ui, y, 6, 1, attr, glyph);
		ui_put(ui, y++, 8, ui->cols - 9, attr == R_DIM ? R_DIM : R_NORMAL, summary);
		if (probe_pending(w, i)) {
			y++;
			continue;
		}
		if (pr->why && y < maxy)
			y = para(ui, y, 8, ui->cols - 10, maxy, R_DIM, pr->why);
		if (pr->fix && y < maxy) {
			char *s = xasprintf("fix: %s", pr->fix);

			y = para(ui, y, 8, ui->cols - 10, maxy, R_NORMAL, s);
			free(s);
		}
		if (w->bopts && w->bopts[i].n && y < maxy) {
			char *opts = strvec_join(&w->bopts[i], " "),
			     *s = xasprintf("options: %s", opts);

			y = para(ui, y, 8, ui->cols - 10, maxy, R_DIM, s);
			free(s);
			free(opts);
		}
		if (pr->kept && y < maxy) {
			char *s = xasprintf("kept: %s  (x removes it)", pr->kept);

			y = para(ui, y, 8, ui->cols - 10, maxy, R_DIM, s);
			free(s);
		}
		if (pr->confirm && y < maxy) {
			char *what = confirm_text(ui, w, i);
			char *s = xasprintf("to confirm: %s%s", what,
					    sel ? "  (a, then type yes)" : "");

			free(what);

			ui_put(ui, y, 6, 1, R_WARN, ui->g.warn);
			y = para(ui, y, 8, ui->cols - 10, maxy, R_WARN, s);
			free(s);
		}
		y++;
	}
	if (w->nbackends && w->lp_backend.sel + 1 != w->nbackends)
		y++; /* the last one's details end with a blank line, the others' not */
	if (y < maxy) {
		ui_put(ui, y, 2, 16, R_BOLD, "Each guest gets");
		ui_putf(ui, y++, 18, ui->cols - 19, R_NORMAL,
			"%u %s and %s memory  (c, m change them)", w->plan.cpus,
			w->plan.cpus == 1 ? "CPU" : "CPUs",
			format_size(w->plan.mem, mem, sizeof(mem)));
	}
	if (y + 1 < maxy) {
		ui_put(ui, y, 2, 16, R_BOLD, "Guests at once");
		if (w->plan.shards)
			ui_putf(ui, y++, 18, ui->cols - 19, R_NORMAL, "%-5u (s changes it)",
				w->plan.shards);
		else
			ui_put(ui, y++, 18, ui->cols - 19, R_NORMAL,
			       "auto  (s changes it: picks from this host's cores and "
			       "memory)");
		shards_here(w, 0, &why);
		y = para(ui, y, 4, ui->cols - 6, maxy, R_DIM, why.buf);
	}
	strbuf_release(&why);
	hint(ui, y0, body_h,
	     "o sets options: gce zone= bucket= key= cost=ok, ssh host=, adb serial=");
}

/* ---- step 5: tests ---- */

static size_t
test_choices(struct ui *ui, struct test_choice *out, size_t max)
{
	const struct profiles *prof = ui_profiles(ui);
	size_t n = 0;

	for (size_t i = 0; prof && i < prof->nsets && n < max - 2; i++)
		out[n++] = (struct test_choice){ TC_PRESET, prof->sets[i].name };
	out[n++] = (struct test_choice){ TC_GROUP, NULL };
	out[n++] = (struct test_choice){ TC_TEST, NULL };
	return n;
}

/* Whether one of the chosen configurations can run the test (by its directory). */
static bool
fits_chosen(const struct profiles *prof, const struct wizard *w, const char *test)
{
	for (size_t i = 0; i < w->plan.configs.n; i++) {
		const struct fs_config *c =
			prof ? profiles_config(prof, w->plan.configs.v[i]) : NULL;

		if (!c || catalogue_name_fits(test, c->fstyp))
			return true;
	}
	return !w->plan.configs.n;
}

static void
refilter(const struct profiles *prof, struct wizard *w)
{
	const char *q = w->le.text.buf;

	free(w->pick);
	w->npick = 0;
	if (!w->have_cat) {
		w->pick = NULL;
		return;
	}
	if (w->tests_mode == 1) {
		w->pick = xcalloc(w->cat.ngroups + 1, sizeof(*w->pick));
		for (size_t i = 0; i < w->cat.ngroups; i++)
			if (text_contains_ci(w->cat.groups[i].name, q) ||
			    text_contains_ci(w->cat.groups[i].description, q))
				w->pick[w->npick++] = i;
	} else {
		w->pick = xcalloc(w->cat.ntests + 1, sizeof(*w->pick));
		for (size_t i = 0; i < w->cat.ntests; i++)
			if ((text_contains_ci(w->cat.tests[i].name, q) ||
			     text_contains_ci(w->cat.tests[i].description, q)) &&
			    fits_chosen(prof, w, w->cat.tests[i].name))
				w->pick[w->npick++] = i;
	}
	listpos_fix(&w->lp_pick, w->npick, (size_t)(w->list_h > 0 ? w->list_h : 1));
}

static void
draw_pick(struct ui *ui, struct wizard *w, int y0, int body_h)
{
	w->list_h = body_h - 3;
	ui_putf(ui, y0, 2, ui->cols - 4, R_BOLD, "%s matching '%s': %zu",
		w->tests_mode == 1 ? "Groups" : "Tests", w->le.text.buf, w->npick);
	listpos_fix(&w->lp_pick, w->npick, (size_t)w->list_h);
	for (int row = 0; row < w->list_h; row++) {
		size_t i = w->lp_pick.top + (size_t)row;
		bool sel;
		int y = y0 + 1 + row;

		if (i >= w->npick)
			break;
		sel = i == w->lp_pick.sel;
		if (sel)
			ui_fill(ui, y, 0, ui->cols, R_SEL);
		if (w->tests_mode == 1) {
			const struct catalogue_group *g = &w->cat.groups[w->pick[i]];

			ui_put(ui, y, 2, 16, sel ? R_SEL : R_BOLD, g->name);
			ui_putf(ui, y, 19, 10, sel ? R_SEL : R_DIM, "%4zu %s", g->ntests,
				g->ntests == 1 ? "test" : "tests");
			ui_put(ui, y, 31, ui->cols - 32, sel ? R_SEL : R_NORMAL, g->description);
		} else {
			const struct catalogue_test *t = &w->cat.tests[w->pick[i]];

			ui_put(ui, y, 2, 16, sel ? R_SEL : R_BOLD, t->name);
			ui_put(ui, y, 19, ui->cols - 20, sel ? R_SEL : R_NORMAL, t->description);
		}
	}
	hint(ui, y0, body_h, "Type to narrow the list; Enter picks; Esc goes back.");
}

static void
draw_tests(struct ui *ui, struct wizard *w, int y0, int body_h)
{
	const struct profiles *prof = ui_profiles(ui);
	struct test_choice ch[16];
	size_t n;
	int y;

	if (!w->cat_done || !w->hist_done)
		ask(ui, w);
	if (w->tests_mode) {
		draw_pick(ui, w, y0, body_h);
		return;
	}
	n = test_choices(ui, ch, ARRAY_SIZE(ch));
	listpos_fix(&w->lp_tests, n, n);
	y = y0 + 1;
	for (size_t i = 0; i < n; i++, y++) {
		bool sel = i == w->lp_tests.sel, chosen = false;
		struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;

		if (ch[i].kind == TC_PRESET) {
			const struct test_set *s = profiles_set(prof, ch[i].name);
			struct est_total t;
			char est[64];

			size_t cnt = count_tests(ui, w, ch[i].name, NULL);

			estimate_here(ui, w, ch[i].name, slow_here(w), &t);
			strbuf_adds(&a, ch[i].name);
			if (cnt)
				strbuf_addf(&b, "%zu tests, %s: ", cnt,
					    est_words(&t, est, sizeof(est)));
			strbuf_addf(&b, "%s", s ? s->description : "");
			chosen = w->plan.tests.preset && !strcmp(w->plan.tests.preset, ch[i].name);
		} else if (ch[i].kind == TC_GROUP) {
			strbuf_adds(&a, "a group");
			if (!w->plan.tests.preset && w->plan.tests.groups.n) {
				char *g = strvec_join(&w->plan.tests.groups, ",");

				strbuf_addf(&b, "now: -g %s (%zu tests)", g,
					    count_tests(ui, w, NULL, NULL));
				free(g);
				chosen = true;
			} else {
				strbuf_adds(&b, "pick one from the catalogue");
			}
		} else {
			strbuf_adds(&a, "one test");
			if (!w->plan.tests.preset && w->plan.tests.tests.n) {
				char *t = strvec_join(&w->plan.tests.tests, " ");

				strbuf_addf(&b, "now: %s", t);
				free(t);
				chosen = true;
			} else {
				strbuf_adds(&b, "find it by name or description");
			}
		}
		if (sel)
			ui_fill(ui, y, 0, ui->cols, R_SEL);
		ui_put(ui, y, 2, 1, sel ? R_SEL : R_BOLD, chosen ? ui->g.sel : " ");
		ui_put(ui, y, 4, 10, sel ? R_SEL : R_BOLD, a.buf);
		ui_put(ui, y, 15, ui->cols - 16, sel ? R_SEL : R_NORMAL, b.buf);
		strbuf_release(&a);
		strbuf_release(&b);
	}
	y++;
	{
		char *x = strvec_join(&w->plan.tests.xgroups, ",");
		char *e = strvec_join(&w->plan.tests.exclude, ",");

		ui_putf(ui, y++, 2, ui->cols - 4, R_NORMAL, "leave out groups: %s   (x)",
			*x ? x : "none");
		ui_putf(ui, y++, 2, ui->cols - 4, R_NORMAL, "leave out tests:  %s   (e)",
			*e ? e : "none");
		free(x);
		free(e);
	}
	ui_putf(ui, y++, 2, ui->cols - 4, R_DIM, "fstests: %s   (f)",
		w->plan.fstests_src ? w->plan.fstests_src : "upstream, built into the appliance");
	/* a row keeps its count and time; the highlighted set's description is here whole */
	if (w->lp_tests.sel < n && ch[w->lp_tests.sel].kind == TC_PRESET) {
		const struct test_set *s = profiles_set(prof, ch[w->lp_tests.sel].name);
		char *words = xasprintf("%s: %s", ch[w->lp_tests.sel].name,
					s && *s->description ? s->description : "no description");

		y = para(ui, y + 1, 2, ui->cols - 4, y0 + body_h - 1, R_NORMAL, words);
		free(words);
	}
	if (w->cat_error)
		para(ui, y + 1, 2, ui->cols - 4, y0 + body_h - 1, R_DIM, w->cat_error);
	hint(ui, y0, body_h, "smoke is the quick check maintainers expect before a patch.");
}

/* ---- step 6: review ---- */

static void
draw_review(struct ui *ui, struct wizard *w, int y0, int body_h)
{
	struct strbuf sb = STRBUF_INIT;
	int y = y0 + 1, maxy = y0 + body_h - 1;
	char *cfgs = strvec_join(&w->plan.configs, ", ");
	char mem[32], est[64];
	const char *kernel;
	char *auto_now = NULL;
	struct est_total total;
	const struct backend_ops *ops = chosen_backend(w);
	bool boots_kernel = !ops || (ops->caps & BACKEND_BOOTS_KERNEL);

	/* the kernel list too, when automatic: it is made again once the
	 * configurations changed since step 2 */
	if (!welcome_known(w) || !w->cat_done || !w->hist_done ||
	    (w->plan.kernel.kind == KERNEL_AUTO && !w->kl_done))
		ask(ui, w);
	kernel = w->plan.kernel.kind == KERNEL_AUTO ? "automatic (the tree here, else installed)"
		 : w->plan.kernel.spec		    ? w->plan.kernel.spec
						    : "the installed one";
	/* automatic: what it is now, as step 2 says */
	if (w->plan.kernel.kind == KERNEL_AUTO && w->kl.auto_index < w->kl.n) {
		const struct kernel *k = &w->kl.v[w->kl.auto_index];

		if (k->kind == KERNEL_TREE || k->version)
			kernel = auto_now =
				xasprintf("automatic: now %s %s",
					  k->kind == KERNEL_TREE ? "the tree" : "installed",
					  k->kind == KERNEL_TREE ? k->tree : k->version);
	}
	if (!boots_kernel) {
		ui_put(ui, y++, 2, ui->cols - 4, R_NORMAL,
		       "kernel      the test machine's own (it boots it; fswb builds none)");
	} else {
		ui_putf(ui, y++, 2, ui->cols - 4, R_NORMAL, "kernel      %s %s",
			kernel_kind_str(w->plan.kernel.kind),
			w->plan.kernel.kind == KERNEL_AUTO ? "" : kernel);
		if (w->plan.kernel.kind == KERNEL_AUTO)
			ui_put(ui, y - 1, 14, ui->cols - 16, R_NORMAL, kernel);
	}
	ui_putf(ui, y++, 2, ui->cols - 4, R_NORMAL, "filesystem  %s", cfgs);
	if (!boots_kernel)
		ui_putf(ui, y++, 2, ui->cols - 4, R_NORMAL, "backend     %s %s %s", w->plan.backend,
			ui->g.dot,
			plan_backend_opt(&w->plan, "host") ? plan_backend_opt(&w->plan, "host")
							   : "");
	else
		ui_putf(ui, y++, 2, ui->cols - 4, R_NORMAL, "backend     %s %s %u CPU%s %s %s%s%s",
			w->plan.backend ? w->plan.backend : "qemu", ui->g.dot, w->plan.cpus,
			w->plan.cpus == 1 ? "" : "s", ui->g.dot,
			format_size(w->plan.mem, mem, sizeof(mem)),
			slow_here(w) ? " \xc2\xb7 " : "", slow_here(w) ? "TCG (no KVM)" : "");
	if (w->plan.tests.preset)
		strbuf_addf(&sb, "%s", w->plan.tests.preset);
	if (w->plan.tests.groups.n) {
		char *g = strvec_join(&w->plan.tests.groups, ",");

		strbuf_addf(&sb, "%sgroup %s", sb.len ? ", " : "", g);
		free(g);
	}
	if (w->plan.tests.tests.n) {
		char *t = strvec_join(&w->plan.tests.tests, " ");

		strbuf_addf(&sb, "%s%s", sb.len ? ", " : "", t);
		free(t);
	}
	strvec_clear(&w->selection);
	w->ntests = count_tests(ui, w, w->plan.tests.preset, &w->selection);
	if (w->ntests)
		strbuf_addf(&sb, "   (%zu test%s)", w->ntests, w->ntests == 1 ? "" : "s");
	ui_putf(ui, y++, 2, ui->cols - 4, R_NORMAL, "tests       %s", sb.buf);
	strbuf_reset(&sb);
	estimate_here(ui, w, w->plan.tests.preset, slow_here(w), &total);
	/* the tests of every configuration share the guests (the estimate's count) */
	ui_put(ui, y, 2, 12, R_NORMAL, "guests");
	shards_here(w, total.ntests ? total.ntests : w->plan.configs.n, &sb);
	y = para(ui, y, 14, ui->cols - 16, maxy, R_NORMAL, sb.buf);
	strbuf_reset(&sb);
	if (total.ntests) {
		est_total_basis(&total, &w->est, &sb);
		ui_putf(ui, y++, 2, ui->cols - 4, R_NORMAL, "estimate    %s (%s)",
			est_words(&total, est, sizeof(est)), sb.buf);
	} else if (w->have_cat) {
		ui_put(ui, y++, 2, ui->cols - 4, R_WARN,
		       "estimate    none: this choice selects no test for these configurations");
	} else {
		ui_put(ui, y++, 2, ui->cols - 4, R_NORMAL,
		       "estimate    known once fswb has the fstests tree (the appliance's)");
	}
	strbuf_reset(&sb);
	y++;
	ui_put(ui, y++, 2, ui->cols - 4, R_NORMAL, "The same run from a shell:");
	plan_cmdline(&w->plan, &sb);
	y = para(ui, y, 4, ui->cols - 6, maxy, R_CODE, sb.buf);
	strbuf_release(&sb);
	free(cfgs);
	free(auto_now);
	y++;
	if (y < maxy)
		para(ui, y, 2, ui->cols - 4, maxy, R_DIM,
		     boots_kernel
			     ? "What is missing (kernel build, appliance) is built first; the run "
			       "view then shows each test as it runs."
			     : "fswb checks the machine (fstests, tools, the devices), puts its "
			       "agent there and runs check; the run view shows each test as it "
			       "runs, beside the machine's kernel log.");
	hint(ui, y0, body_h,
	     "Enter starts. Your choices are remembered once the run's first test starts.");
}

/* ---- the view ---- */

static void
wizard_draw(struct ui *ui, struct view *v)
{
	struct wizard *w = v->priv;
	int y0, body_h;
	static const struct keybar_item welcome_keys[] = {
		{ "Enter", "next", K_ENTER }, { "?", "docs", '?' }, { "d", "doctor details", 'd' },
		{ "h", "history", 'h' },      { "q", "quit", 'q' },
	};
	static const struct keybar_item list_keys[] = {
		{ "Enter", "next", K_ENTER }, { "Esc", "back", K_ESC }, { "1-6", "step", 0 },
		{ "?", "docs", '?' },	      { "q", "quit", 'Q' },
	};
	static const struct keybar_item fs_keys[] = {
		{ "Space", "select", ' ' }, { "Enter", "next", K_ENTER }, { "Esc", "back", K_ESC },
		{ "?", "docs", '?' },	    { "q", "quit", 'Q' },
	};
	static const struct keybar_item backend_keys[] = {
		{ "Enter", "next", K_ENTER }, { "o", "options", 'o' }, { "c", "CPUs", 'c' },
		{ "m", "memory", 'm' },	      { "s", "guests", 's' },  { "Esc", "back", K_ESC },
		{ "?", "docs", '?' },	      { "q", "quit", 'Q' },
	};
	static const struct keybar_item tests_keys[] = {
		{ "Enter", "pick", K_ENTER }, { "x", "exclude group", 'x' },
		{ "e", "exclude test", 'e' }, { "f", "fstests", 'f' },
		{ "Esc", "back", K_ESC },     { "?", "docs", '?' },
	};
	static const struct keybar_item review_keys[] = {
		{ "Enter", "start", K_ENTER }, { "1-5", "edit a step", 0 }, { "h", "history", 'h' },
		{ "Esc", "back", K_ESC },      { "?", "docs", '?' },	    { "q", "quit", 'Q' },
	};

	frame(ui, w, &y0, &body_h);
	switch (w->step) {
	case S_WELCOME:
		draw_welcome(ui, w, y0, body_h);
		ui_keybar(ui, welcome_keys, ARRAY_SIZE(welcome_keys));
		break;
	case S_KERNEL:
		draw_kernel(ui, w, y0, body_h);
		ui_keybar(ui, list_keys, ARRAY_SIZE(list_keys));
		break;
	case S_FS:
		draw_fs(ui, w, y0, body_h);
		ui_keybar(ui, fs_keys, ARRAY_SIZE(fs_keys));
		break;
	case S_BACKEND:
		draw_backend(ui, w, y0, body_h);
		ui_keybar(ui, backend_keys, ARRAY_SIZE(backend_keys));
		break;
	case S_TESTS:
		draw_tests(ui, w, y0, body_h);
		ui_keybar(ui, tests_keys, ARRAY_SIZE(tests_keys));
		break;
	case S_REVIEW:
		draw_review(ui, w, y0, body_h);
		ui_keybar(ui, review_keys, ARRAY_SIZE(review_keys));
		break;
	default:
		break;
	}
	if (w->prompt != P_NONE && w->prompt != P_SEARCH)
		draw_prompt(ui, w, prompt_label(w->prompt));
	else if (w->tests_mode && w->step == S_TESTS)
		draw_prompt(ui, w, w->tests_mode == 1 ? "group:" : "test:");
}

static void
go(struct ui *ui, struct wizard *w, enum step s)
{
	w->step = s;
	w->tests_mode = 0;
	if (s == S_REVIEW)
		w->hist_done = false; /* the configurations may have changed */
	if (s == S_TESTS && w->plan.tests.preset) {
		struct test_choice ch[16];
		size_t n = test_choices(ui, ch, ARRAY_SIZE(ch));

		for (size_t i = 0; i < n; i++)
			if (ch[i].kind == TC_PRESET && !strcmp(ch[i].name, w->plan.tests.preset))
				w->lp_tests.sel = i;
	}
	ui_dirty(ui);
}

static void
apply_prompt(struct ui *ui, struct wizard *w)
{
	const char *t = w->le.text.buf;
	uint64_t size;
	char *end;
	unsigned long n, was;

	switch (w->prompt) {
	case P_KERNEL_PATH:
		if (*t && plan_kernel_set(&w->plan.kernel, t) != OK)
			ui_msg(ui, true, "%s", error_msg());
		break;
	case P_CPUS:
		n = strtoul(t, &end, 10);
		was = w->plan.cpus;
		if (!*t || *end || n < 1 || n > 1024) {
			ui_msg(ui, true, "'%s' is not a number of CPUs from 1 to 1024", t);
		} else {
			w->plan.cpus = (unsigned)n;
			if (fits_here(w) != OK) {
				ui_msg(ui, true, "%s", error_msg());
				w->plan.cpus = (unsigned)was;
			}
		}
		error_clear();
		break;
	case P_MEM:
		size = w->plan.mem;
		if (parse_size(t, &w->plan.mem) != OK || w->plan.mem < PLAN_MEM_MIN) {
			ui_msg(ui, true, "'%s' is not a memory size of at least 256M", t);
			w->plan.mem = size;
		} else if (fits_here(w) != OK) {
			ui_msg(ui, true, "%s", error_msg());
			w->plan.mem = size;
		}
		error_clear();
		break;
	case P_SHARDS:
		n = strtoul(t, &end, 10);
		if (!*t || !strcmp(t, "auto"))
			w->plan.shards = 0;
		else if (*end || n < 1 || n > PLAN_SHARDS_MAX)
			ui_msg(ui, true, "'%s' is not auto or a number of guests from 1 to %d", t,
			       PLAN_SHARDS_MAX);
		else
			w->plan.shards = (unsigned)n;
		break;
	case P_FSTESTS:
		if (*t && plan_check_fstests_src(t) != OK) {
			ui_msg(ui, true, "%s", error_msg());
			error_clear();
			break;
		}
		free(w->plan.fstests_src);
		w->plan.fstests_src = *t ? xstrdup(t) : NULL;
		if (w->have_cat)
			catalogue_release(&w->cat);
		w->have_cat = w->cat_done = false;
		break;
	case P_XGROUP:
		strvec_clear(&w->plan.tests.xgroups);
		strvec_split(&w->plan.tests.xgroups, t, ", ");
		break;
	case P_EXCLUDE:
		strvec_clear(&w->plan.tests.exclude);
		strvec_split(&w->plan.tests.exclude, t, ", ");
		break;
	case P_BOPTS:
		apply_bopts(ui, w, t);
		break;
	case P_CONFIRM:
		apply_confirm(ui, w, t);
		break;
	case P_FORGET:
		apply_forget(ui, w, t);
		break;
	default:
		break;
	}
	w->prompt = P_NONE;
}

static enum reaction
pick_key(struct ui *ui, struct wizard *w, int key)
{
	enum list_move mv;

	if (key == K_ESC) {
		w->tests_mode = 0;
		return REACT_REDRAW;
	}
	if (key == K_ENTER) {
		if (w->lp_pick.sel < w->npick) {
			free(w->plan.tests.preset);
			w->plan.tests.preset = NULL;
			strvec_clear(&w->plan.tests.groups);
			strvec_clear(&w->plan.tests.tests);
			if (w->tests_mode == 1)
				strvec_push(&w->plan.tests.groups,
					    w->cat.groups[w->pick[w->lp_pick.sel]].name);
			else
				strvec_push(&w->plan.tests.tests,
					    w->cat.tests[w->pick[w->lp_pick.sel]].name);
			w->tests_mode = 0;
			go(ui, w, S_REVIEW);
		}
		return REACT_REDRAW;
	}
	if (key == K_UP || key == K_DOWN || key == K_PGUP || key == K_PGDN) {
		ui_list_key(key, &mv);
		listpos_move(&w->lp_pick, mv, w->npick, (size_t)w->list_h);
		return REACT_REDRAW;
	}
	if (prompt_edit_key(&w->le, key)) {
		w->lp_pick.sel = w->lp_pick.top = 0;
		refilter(ui_profiles(ui), w);
	}
	return REACT_REDRAW;
}

static void
start(struct ui *ui, struct wizard *w)
{
	const struct profiles *prof = ui_profiles(ui);
	char *cfgs, *title;
	struct strbuf what = STRBUF_INIT;

	if (!prof) {
		ui_msg(ui, true, "%s", ui->profiles_error);
		return;
	}
	if (plan_check(&w->plan, prof) != OK || fits_here(w) != OK ||
	    (w->have_cat && plan_check_tests(&w->plan, &w->cat) != OK) ||
	    plan_check_cost(&w->plan, prof) != OK) {
		ui_msg(ui, true, "%s", error_msg());
		error_clear();
		return;
	}
	cfgs = strvec_join(&w->plan.configs, ",");
	if (w->plan.tests.preset)
		strbuf_adds(&what, w->plan.tests.preset);
	else if (w->plan.tests.groups.n)
		strbuf_addf(&what, "-g %s", w->plan.tests.groups.v[0]);
	else if (w->plan.tests.tests.n)
		strbuf_adds(&what, w->plan.tests.tests.v[0]);
	title = xasprintf("%s %s", cfgs, what.buf);
	ui_run_start(ui, &w->plan, title, w->selection.n ? &w->selection : NULL, true);
	free(title);
	free(cfgs);
	strbuf_release(&what);
}

static enum reaction
wizard_key(struct ui *ui, struct view *v, int key)
{
	struct wizard *w = v->priv;
	const struct profiles *prof = ui_profiles(ui);
	enum list_move mv;
	struct test_choice ch[16];
	size_t n;

	if (w->prompt != P_NONE) {
		if (key == K_ENTER)
			apply_prompt(ui, w);
		else if (key == K_ESC)
			w->prompt = P_NONE;
		else
			prompt_edit_key(&w->le, key);
		return REACT_REDRAW;
	}
	if (w->step == S_TESTS && w->tests_mode)
		return pick_key(ui, w, key);
	if (key >= '1' && key <= '6') {
		go(ui, w, (enum step)(key - '1'));
		return REACT_REDRAW;
	}
	if (key == K_ESC || key == K_LEFT) {
		if (w->step == S_WELCOME)
			return REACT_QUIT;
		go(ui, w, w->step - 1);
		return REACT_REDRAW;
	}
	if (key == 'q' && w->step == S_WELCOME)
		return REACT_QUIT;
	if (key == 'Q' || (key == 'q' && w->step != S_TESTS))
		return REACT_QUIT;
	if (key == 'h') {
		history_open(ui);
		return REACT_REDRAW;
	}
	if (key == '?') {
		ui_want_docs(ui, step_docs[w->step]);
		return REACT_REDRAW;
	}
	switch (w->step) {
	case S_WELCOME:
		if (key == K_ENTER)
			go(ui, w, S_KERNEL);
		else if (key == 'd')
			doctor_details(ui, w);
		return REACT_REDRAW;
	case S_KERNEL:
		load_kernels(ui, w);
		if (ui_list_key(key, &mv)) {
			listpos_move(&w->lp_kernel, mv, kernel_rows(w), (size_t)w->list_h);
		} else if (key == 'p') {
			w->prompt = P_KERNEL_PATH;
			lineedit_set(&w->le, w->plan.kernel.spec ? w->plan.kernel.spec : "");
		} else if (key == K_ENTER && pick_kernel(ui, w)) {
			go(ui, w, S_FS);
		}
		return REACT_REDRAW;
	case S_FS:
		if (!prof)
			return REACT_PASS;
		if (key != ' ' && ui_list_key(key, &mv)) {
			listpos_move(&w->lp_fs, mv, prof->nconfigs, (size_t)w->list_h);
		} else if (key == ' ' && w->lp_fs.sel < prof->nconfigs) {
			const char *name = prof->configs[w->lp_fs.sel].name;

			if (strvec_contains(&w->plan.configs, name)) {
				struct strvec keep = STRVEC_INIT;

				for (size_t i = 0; i < w->plan.configs.n; i++)
					if (strcmp(w->plan.configs.v[i], name))
						strvec_push(&keep, w->plan.configs.v[i]);
				strvec_clear(&w->plan.configs);
				w->plan.configs = keep;
			} else {
				strvec_push(&w->plan.configs, name);
			}
			/* the kernel checks depend on the configurations */
			kernel_list_release(&w->kl);
			w->kl_done = false;
		} else if (key == K_ENTER) {
			if (!w->plan.configs.n && w->lp_fs.sel < prof->nconfigs)
				strvec_push(&w->plan.configs, prof->configs[w->lp_fs.sel].name);
			if (w->plan.configs.n)
				go(ui, w, S_BACKEND);
			else
				ui_msg(ui, true, "pick a configuration with Space first");
		}
		return REACT_REDRAW;
	case S_BACKEND:
		load_probes(w);
		if (ui_list_key(key, &mv)) {
			listpos_move(&w->lp_backend, mv, w->nbackends, w->nbackends);
		} else if (key == 'c') {
			char buf[16];

			snprintf(buf, sizeof(buf), "%u", w->plan.cpus);
			w->prompt = P_CPUS;
			lineedit_set(&w->le, buf);
		} else if (key == 'm') {
			char buf[32];

			w->prompt = P_MEM;
			lineedit_set(&w->le, format_size(w->plan.mem, buf, sizeof(buf)));
		} else if (key == 's') {
			char buf[16];

			snprintf(buf, sizeof(buf), "%u", w->plan.shards);
			w->prompt = P_SHARDS;
			lineedit_set(&w->le, w->plan.shards ? buf : "auto");
		} else if (key == 'o' && w->lp_backend.sel < w->nbackends) {
			char *cur = strvec_join(&w->bopts[w->lp_backend.sel], " ");

			w->prompt = P_BOPTS;
			lineedit_set(&w->le, cur);
			free(cur);
		} else if (key == 'a' && w->lp_backend.sel < w->nbackends &&
			   !probe_pending(w, w->lp_backend.sel) &&
			   w->probes[w->lp_backend.sel].confirm_opt) {
			w->prompt = P_CONFIRM;
			lineedit_set(&w->le, "");
		} else if (key == 'x' && w->lp_backend.sel < w->nbackends &&
			   !probe_pending(w, w->lp_backend.sel) &&
			   w->probes[w->lp_backend.sel].kept) {
			w->prompt = P_FORGET;
			lineedit_set(&w->le, "");
		} else if (key == K_ENTER && w->lp_backend.sel < w->nbackends) {
			if (probe_pending(w, w->lp_backend.sel)) {
				ui_msg(ui, false, "still checking whether '%s' can run here",
				       w->backends[w->lp_backend.sel]);
				return REACT_REDRAW;
			}
			/* usable or not (a cloud's cost), nothing goes on unconfirmed */
			if (w->probes[w->lp_backend.sel].confirm) {
				ui_msg(ui, true, "'%s' waits for you to confirm: a, then type yes",
				       w->backends[w->lp_backend.sel]);
				return REACT_REDRAW;
			}
			if (!w->probes[w->lp_backend.sel].usable) {
				ui_msg(ui, true, "'%s' cannot run here: %s",
				       w->backends[w->lp_backend.sel],
				       w->probes[w->lp_backend.sel].why
					       ? w->probes[w->lp_backend.sel].why
					       : "see the fix above");
				return REACT_REDRAW;
			}
			free(w->plan.backend);
			w->plan.backend = xstrdup(w->backends[w->lp_backend.sel]);
			strvec_clear(&w->plan.backend_opts);
			strvec_copy(&w->plan.backend_opts, &w->bopts[w->lp_backend.sel]);
			go(ui, w, S_TESTS);
		}
		return REACT_REDRAW;
	case S_TESTS:
		load_catalogue(w);
		n = test_choices(ui, ch, ARRAY_SIZE(ch));
		if (ui_list_key(key, &mv)) {
			listpos_move(&w->lp_tests, mv, n, n);
		} else if (key == 'x' || key == 'e') {
			char *cur = strvec_join(
				key == 'x' ? &w->plan.tests.xgroups : &w->plan.tests.exclude, ",");

			w->prompt = key == 'x' ? P_XGROUP : P_EXCLUDE;
			lineedit_set(&w->le, cur);
			free(cur);
		} else if (key == 'f') {
			w->prompt = P_FSTESTS;
			lineedit_set(&w->le, w->plan.fstests_src ? w->plan.fstests_src : "");
		} else if (key == 'q') {
			return REACT_QUIT;
		} else if (key == K_ENTER && w->lp_tests.sel < n) {
			const struct test_choice *c = &ch[w->lp_tests.sel];

			if (c->kind == TC_PRESET) {
				free(w->plan.tests.preset);
				w->plan.tests.preset = xstrdup(c->name);
				strvec_clear(&w->plan.tests.groups);
				strvec_clear(&w->plan.tests.tests);
				go(ui, w, S_REVIEW);
			} else if (!w->have_cat) {
				ui_msg(ui, true, "%s",
				       w->cat_error ? w->cat_error : "no catalogue");
			} else {
				w->tests_mode = c->kind == TC_GROUP ? 1 : 2;
				lineedit_set(&w->le, "");
				w->lp_pick.sel = w->lp_pick.top = 0;
				refilter(ui_profiles(ui), w);
			}
		}
		return REACT_REDRAW;
	case S_REVIEW:
		if (key == K_ENTER)
			start(ui, w);
		return REACT_REDRAW;
	default:
		return REACT_PASS;
	}
}

static enum reaction
wizard_click(struct ui *ui, struct view *v, int y, int x, bool dbl)
{
	struct wizard *w = v->priv;
	struct listpos *lp = NULL;
	int first = 3;

	switch (w->step) {
	case S_KERNEL:
		lp = &w->lp_kernel;
		break;
	case S_FS:
		lp = &w->lp_fs;
		first = 2;
		break;
	default:
		return REACT_NONE;
	}
	if (y < first)
		return REACT_NONE;
	if (lp->top + (size_t)(y - first) == lp->sel || dbl)
		return wizard_key(ui, v, K_ENTER);
	lp->sel = lp->top + (size_t)(y - first);
	return REACT_REDRAW;
}

static void
wizard_free(struct view *v)
{
	struct wizard *w = v->priv;

	if (w->doctor_timer) {
		loop_del_timer(w->ui->loop, w->doctor_timer);
		w->ui->pending--;
	}
	if (w->ask_timer) {
		loop_del_timer(w->ui->loop, w->ask_timer);
		w->ui->pending--;
	}
	job_free(w->trials);
	plan_release(&w->plan);
	free(w->plan_note);
	if (w->hc_done)
		hostcheck_release(&w->hc);
	forget_probes(w);
	if (w->kl_done)
		kernel_list_release(&w->kl);
	free(w->kl_error);
	if (w->have_cat)
		catalogue_release(&w->cat);
	free(w->cat_error);
	free(w->pick);
	lineedit_release(&w->le);
	for (size_t i = 0; w->bopts && i < w->nbackends; i++)
		strvec_clear(&w->bopts[i]);
	free(w->bopts);
	strvec_clear(&w->selection);
	estimator_release(&w->est);
	free(w);
}

static const struct view_ops wizard_ops = {
	.name = "wizard",
	.draw = wizard_draw,
	.key = wizard_key,
	.click = wizard_click,
	.free = wizard_free,
	.docs = "what-is-fstests.md",
};

void
wizard_open(struct ui *ui)
{
	struct wizard *w = xcalloc(1, sizeof(*w));

	w->ui = ui;
	load_plan(ui, w);
	if (ui_profiles(ui) && w->plan.configs.n) {
		const struct profiles *prof = ui_profiles(ui);

		for (size_t i = 0; i < prof->nconfigs; i++)
			if (!strcmp(prof->configs[i].name, w->plan.configs.v[0]))
				w->lp_fs.sel = i;
	}
	lineedit_init(&w->le, "");
	strvec_init(&w->selection);
	estimator_init(&w->est, false);
	w->lp_kernel.sel = 0;
	ui_push(ui, &wizard_ops, w);
}
