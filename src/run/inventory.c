/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What a front end asks before a run: see inventory.h.
 */
#include "run/inventory.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jread.h"
#include "core/paths.h"
#include "core/rundir.h"
#include "run/plan_check.h"
#include "run/shards.h"

void
inventory_host(struct loop *loop, const struct profiles *prof, bool full, struct hostcheck *out)
{
	struct hostcheck_opts o = HOSTCHECK_OPTS_INIT;

	o.run_programs = full;
	o.profiles = prof;
	memset(out, 0, sizeof(*out));
	if (hostcheck_run(loop, &o, out) != OK)
		error_clear();
}

static int
trials_worker(void *arg)
{
	struct hostcheck hc;

	inventory_host(loop_new(), arg, true, &hc);
	return 0;
}

enum status
inventory_trials_start(struct loop *loop, const struct profiles *prof,
		       void (*done)(void *data, const struct job_result *r), void *data,
		       struct job **out)
{
	struct job_opts o = JOB_OPTS_INIT;

	o.fn = trials_worker;
	o.fn_arg = (void *)prof;
	o.fn_name = "the host's trials";
	o.stderr_apart = true;
	o.on_done = done;
	o.data = data;
	return job_start(loop, &o, out);
}

#define PROBE_ANSWER_MAX (64 * 1024)

struct probe_ask {
	struct job *job;
	char *backend;
	const struct plan *plan; /* read by the worker only, in its copy */
	struct strbuf out;
	bool over;
	void (*done)(void *data, struct backend_probe *probe);
	/* inventory_forget_start's: backend_forget first */
	void (*forget_done)(void *data, struct backend_probe *probe, const char *said);
	void *data;
};

/* In the worker: the probe, as one JSON object on stdout. */
static int
probe_worker(void *arg)
{
	struct probe_ask *a = arg;
	struct backend_probe p;
	json_t *j;
	char *text, *said = NULL;

	if (a->forget_done) {
		const struct backend_ops *ops = backend_find(a->backend);

		if (!ops || backend_forget(ops, a->plan, &said) != OK) {
			free(said);
			said = xstrdup(ops ? error_msg() : "no such backend");
		}
		error_clear();
	}
	inventory_probe(a->backend, a->plan, &p);
	j = json_pack("{s:b,s:b,s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "usable", p.usable, "slow", p.slow,
		      "summary", json_str_or_null(p.summary), "why", json_str_or_null(p.why), "fix",
		      json_str_or_null(p.fix), "confirm", json_str_or_null(p.confirm),
		      "confirm_opt", json_str_or_null(p.confirm_opt), "kept",
		      json_str_or_null(p.kept), "said", json_str_or_null(said));
	free(said);
	backend_probe_release(&p);
	text = j ? json_dumps(j, JSON_COMPACT) : NULL;
	if (text)
		fputs(text, stdout);
	free(text);
	json_decref(j);
	return text ? 0 : 1;
}

static void
probe_bytes(void *data, const char *buf, size_t len)
{
	struct probe_ask *a = data;

	if (a->out.len + len > PROBE_ANSWER_MAX)
		a->over = true;
	else
		strbuf_add(&a->out, buf, len);
}

static void
probe_done(void *data, const struct job_result *r)
{
	struct probe_ask *a = data;
	json_t *j = a->over ? NULL : json_loads(a->out.buf ? a->out.buf : "", 0, NULL);
	struct backend_probe p = { 0 };
	char *said = NULL;

	if (json_is_object(j) && json_is_string(json_object_get(j, "summary"))) {
		p.usable = json_is_true(json_object_get(j, "usable"));
		p.slow = json_is_true(json_object_get(j, "slow"));
		p.summary = json_strdup_member(j, "summary");
		p.why = json_strdup_member(j, "why");
		p.fix = json_strdup_member(j, "fix");
		p.confirm = json_strdup_member(j, "confirm");
		p.confirm_opt = json_strdup_member(j, "confirm_opt");
		p.kept = json_strdup_member(j, "kept");
		said = json_strdup_member(j, "said");
	} else {
		char how[128];

		p.summary = xstrdup("cannot tell: the probe did not answer");
		p.why = xasprintf("the probe of '%s' %s", a->backend,
				  child_exit_str(&r->exit, how, sizeof(how)));
	}
	json_decref(j);
	if (a->forget_done)
		a->forget_done(a->data, &p, said ? said : "the backend said nothing");
	else
		a->done(a->data, &p);
	free(said);
	inventory_probe_stop(a);
}

static enum status
ask_start(struct loop *loop, const char *backend, const struct plan *plan,
	  void (*done)(void *data, struct backend_probe *probe),
	  void (*forget_done)(void *data, struct backend_probe *probe, const char *said),
	  void *data, struct probe_ask **out)
{
	struct job_opts o = JOB_OPTS_INIT;
	struct probe_ask *a = xcalloc(1, sizeof(*a));
	enum status rc;

	a->backend = xstrdup(backend);
	a->plan = plan;
	a->done = done;
	a->forget_done = forget_done;
	a->data = data;
	strbuf_init(&a->out);
	o.fn = probe_worker;
	o.fn_arg = a;
	o.fn_name = "the backend's probe";
	o.stderr_apart = true;
	o.on_bytes = probe_bytes;
	o.on_done = probe_done;
	o.data = a;
	rc = job_start(loop, &o, &a->job);
	if (rc != OK) {
		inventory_probe_stop(a);
		return rc;
	}
	*out = a;
	return OK;
}

enum status
inventory_probe_start(struct loop *loop, const char *backend, const struct plan *plan,
		      void (*done)(void *data, struct backend_probe *probe), void *data,
		      struct probe_ask **out)
{
	return ask_start(loop, backend, plan, done, NULL, data, out);
}

enum status
inventory_forget_start(struct loop *loop, const char *backend, const struct plan *plan,
		       void (*done)(void *data, struct backend_probe *probe, const char *said),
		       void *data, struct probe_ask **out)
{
	return ask_start(loop, backend, plan, NULL, done, data, out);
}

void
inventory_probe_stop(struct probe_ask *a)
{
	if (!a)
		return;
	job_free(a->job);
	strbuf_release(&a->out);
	free(a->backend);
	free(a);
}

void
inventory_probe(const char *backend, const struct plan *plan, struct backend_probe *out)
{
	const struct backend_ops *ops = backend_find(backend);

	memset(out, 0, sizeof(*out));
	if (!ops || backend_probe(ops, plan, out) != OK) {
		error_clear();
		backend_probe_release(out);
		out->summary = xstrdup("cannot tell");
	}
}

enum status
inventory_kernels(struct loop *loop, const struct plan *plan, const struct profiles *prof,
		  struct kernel_list *out)
{
	struct kernel_needs needs;
	enum status rc;

	memset(out, 0, sizeof(*out));
	rc = kernel_list(loop, plan->kernel.arch ? plan->kernel.arch : "x86_64", out);
	if (rc != OK)
		return rc;
	if (!prof || kernel_needs_init(&needs, prof, &plan->configs, &plan->kernel.debug) != OK) {
		error_clear();
		return OK;
	}
	for (size_t i = 0; i < out->n; i++)
		if (kernel_check(loop, &out->v[i], &needs) != OK)
			error_clear();
	kernel_needs_release(&needs);
	return OK;
}

enum status
inventory_catalogue(const struct plan *plan, struct catalogue *out)
{
	const char *src = plan->fstests_src;

	if (!src || !path_is_dir(src))
		return error(
			ERR_UNSUPPORTED, "%s",
			src ? "the fstests source is a URL: its groups are known once the "
			      "appliance is built"
			    : "fswb builds upstream fstests into the appliance: pick a group "
			      "or a test by name after pointing at a local fstests tree with f");
	return catalogue_load(src, out);
}

enum status
inventory_selection(const struct plan *plan, const struct profiles *prof,
		    const struct catalogue *cat, const char *preset, const struct fs_config *cfg,
		    struct catalogue_selection *out)
{
	struct catalogue_query q = { 0 };
	struct check_selection sel;
	struct strvec excluded = STRVEC_INIT;
	struct plan p;
	enum status rc;

	plan_init(&p);
	plan_copy(&p, plan);
	if (preset) {
		/* the test set instead of the plan's own choice of tests */
		free(p.tests.preset);
		p.tests.preset = xstrdup(preset);
		strvec_clear(&p.tests.groups);
		strvec_clear(&p.tests.tests);
	}
	plan_check_selection(&p, prof, cfg, &sel);
	check_selection_expand(&sel, cat, cfg->fstyp);
	check_selection_excluded(&sel, &excluded);
	q.fstyp = cfg->fstyp;
	q.tests = &sel.tests;
	q.groups = &sel.groups;
	q.xgroups = &sel.xgroups;
	q.exclude = &excluded;
	q.exclude_files = &sel.exclude_files;
	rc = catalogue_select(cat, &q, out);
	strvec_clear(&excluded);
	check_selection_release(&sel);
	plan_release(&p);
	return rc;
}

void
inventory_estimator(const struct plan *plan, const struct profiles *prof, bool slow,
		    struct estimator *out)
{
	const struct test_set *set = plan_settings_set(plan) && prof
					     ? profiles_set(prof, plan_settings_set(plan))
					     : NULL;
	char *root = rundir_root();

	estimator_init(out, slow);
	estimator_load_runs(out, root, EST_RUNS);
	if (set && estimator_set_env(out, &set->env) != OK)
		error_clear();
	free(root);
}

/*
 * out->wall and out->shards of out->ntests tests (secs[i] seconds each) of
 * nconfigs configurations: every configuration's tests in one pool; a guest
 * is made for one configuration, so each guest boots once per configuration
 * it takes.
 */
static void
estimate_wall(const struct plan *plan, const struct estimator *est, const double *secs,
	      size_t nconfigs, struct est_total *out)
{
	struct host_size host;
	size_t boots;

	if (!out->ntests)
		return;
	host_size_read(&host);
	out->shards = shards_choose(plan, backend_find(plan->backend), &host, out->ntests, NULL);
	boots = (nconfigs + out->shards - 1) / out->shards;
	/* one guest at a time runs one check per configuration: no batches */
	out->wall = out->shards == 1
			    ? out->seconds
			    : (double)boots * estimate_boot(est) +
				      estimate_makespan(est, secs, out->ntests, out->shards);
}

void
inventory_estimate(const struct plan *plan, const struct profiles *prof,
		   const struct catalogue *cat, const struct estimator *est, const char *preset,
		   const char *kernel, struct est_total *out)
{
	double *secs = NULL;
	size_t nconfigs = 0;
	const struct test_set *set = preset && prof ? profiles_set(prof, preset) : NULL;
	struct estimator with_set;

	memset(out, 0, sizeof(*out));
	/* the set's own settings (SOAK_DURATION), whatever the plan has now: the
	 * wizard estimates every set while the plan names one, or tests */
	if (set) {
		with_set = *est; /* only its soak changes: the samples stay est's */
		if (estimator_set_env(&with_set, &set->env) == OK)
			est = &with_set;
		else
			error_clear();
	}
	for (size_t i = 0; cat && i < plan->configs.n; i++) {
		const struct fs_config *c = prof ? profiles_config(prof, plan->configs.v[i]) : NULL;
		struct catalogue_selection sel;
		struct strvec run = STRVEC_INIT;

		if (!c || inventory_selection(plan, prof, cat, preset, c, &sel) != OK) {
			error_clear();
			continue;
		}
		for (size_t j = 0; j < sel.tests.n; j++)
			if (!strvec_contains(&sel.expunged, sel.tests.v[j]))
				strvec_push(&run, sel.tests.v[j]);
		/* every test came from cat, which knows its groups */
		nconfigs += run.n > 0;
		secs = xrealloc(secs, (out->ntests + run.n + 1) * sizeof(*secs));
		estimate_config(est, c->name, kernel, cat, (const char *const *)run.v, run.n, NULL,
				out, secs + out->ntests);
		strvec_clear(&run);
		catalogue_selection_release(&sel);
	}
	estimate_wall(plan, est, secs, nconfigs, out);
	free(secs);
}

static bool
same_strings(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static bool
same_list(const struct strvec *a, const struct strvec *b)
{
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->v[i], b->v[i]))
			return false;
	return true;
}

/* The two plans choose the same tests of the same configurations from the same fstests. */
static bool
same_choice(const struct plan *a, const struct plan *b)
{
	const struct plan_tests *x = &a->tests, *y = &b->tests;

	return same_list(&a->configs, &b->configs) &&
	       same_strings(a->fstests_src, b->fstests_src) && same_strings(x->preset, y->preset) &&
	       same_list(&x->groups, &y->groups) && same_list(&x->xgroups, &y->xgroups) &&
	       same_list(&x->tests, &y->tests) && same_list(&x->exclude, &y->exclude) &&
	       same_list(&x->exclude_files, &y->exclude_files);
}

/*
 * Without the tree's catalogue: the tests the newest earlier run of the same
 * choice of tests ran to its end (of its newest EST_RUNS), estimated as
 * inventory_estimate does; out->ntests stays 0 when there is none.
 */
static void
estimate_from_history(const struct plan *plan, const struct estimator *est, struct est_total *out)
{
	char *root = rundir_root();
	struct strvec ids = STRVEC_INIT;
	size_t tried = 0;

	if (root)
		rundir_list(root, &ids);
	for (size_t i = ids.n; i-- > 0 && !out->ntests && tried < EST_RUNS; tried++) {
		char *dir = path_join(root, ids.v[i]);
		char *pp = path_join(dir, "plan.json"), *rp = path_join(dir, "run.json");
		struct run_record rec;
		struct plan p;
		double *secs = NULL;
		size_t nconfigs = 0;

		plan_init(&p);
		run_record_init(&rec);
		if (plan_load(pp, &p) == OK && same_choice(plan, &p) &&
		    run_record_load(rp, &rec) == OK && rec.finished && !rec.interrupted) {
			for (size_t k = 0; k < rec.nsections; k++) {
				const struct section_result *sec = &rec.sections[k];
				struct strvec names = STRVEC_INIT;

				for (size_t j = 0; j < sec->ntests; j++)
					strvec_push(&names, sec->tests[j].test);
				nconfigs += names.n > 0;
				secs = xrealloc(secs, (out->ntests + names.n + 1) * sizeof(*secs));
				estimate_config(est, sec->config ? sec->config : sec->name, NULL,
						NULL, (const char *const *)names.v, names.n, NULL,
						out, secs + out->ntests);
				strvec_clear(&names);
			}
			estimate_wall(plan, est, secs, nconfigs, out);
		}
		error_clear();
		free(secs);
		plan_release(&p);
		run_record_release(&rec);
		free(rp);
		free(pp);
		free(dir);
	}
	strvec_clear(&ids);
	free(root);
}

void
inventory_expect(const struct plan *plan, const struct profiles *prof, struct est_total *out,
		 struct strbuf *basis)
{
	struct estimator est;
	struct catalogue cat;
	bool have_cat = inventory_catalogue(plan, &cat) == OK;

	error_clear();
	memset(out, 0, sizeof(*out));
	inventory_estimator(plan, prof, false, &est);
	if (have_cat)
		inventory_estimate(plan, prof, &cat, &est, plan->tests.preset, NULL, out);
	else
		estimate_from_history(plan, &est, out);
	if (basis)
		est_total_basis(out, &est, basis);
	if (have_cat)
		catalogue_release(&cat);
	estimator_release(&est);
}
