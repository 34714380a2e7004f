/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A plan checked against everything this fswb has: see plan_check.h.
 */
#include "run/plan_check.h"

#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "core/paths.h"
#include "core/util.h"
#include "rootfs/appliance.h"
#include "fstests/catalogue.h"
#include "fstests/estimate.h"
#include "run/inventory.h"

/*
 * Each named test must be for one of the configurations' filesystems:
 * check would run xfs/001 on ext4 and it would fail there.
 */
static enum status
check_test_dirs(const struct plan *plan, const struct profiles *profiles)
{
	for (size_t i = 0; i < plan->tests.tests.n; i++) {
		const char *t = plan->tests.tests.v[i];
		int dirlen = (int)strcspn(t, "/");
		const struct fs_config *for_it = NULL;
		bool fits = false;
		char *dir;

		for (size_t j = 0; !fits && j < plan->configs.n; j++) {
			const struct fs_config *c = profiles_config(profiles, plan->configs.v[j]);

			fits = c && catalogue_name_fits(t, c->fstyp);
		}
		if (fits)
			continue;
		dir = xstrndup(t, (size_t)dirlen);
		if (profiles_resolve_config(profiles, dir, &for_it) != OK)
			for_it = NULL;
		free(dir);
		if (for_it)
			return error(ERR_INVALID,
				     "tests.tests[%zu]: '%s' is a test for %.*s, and no chosen "
				     "configuration is %.*s (check would run it anyway, and it "
				     "would fail); add one, e.g. -c %s, or leave the test out",
				     i, t, dirlen, t, dirlen, t, for_it->name);
		return error(ERR_INVALID,
			     "tests.tests[%zu]: '%s' is a test for %.*s, and fswb has no "
			     "configuration for %.*s (check would run it anyway, and it would "
			     "fail); leave the test out",
			     i, t, dirlen, t, dirlen, t);
	}
	return OK;
}

enum status
plan_check_fstests_src(const char *src)
{
	if (!src || path_is_dir(src) || appliance_src_is_url(src))
		return OK;
	if (path_exists(src))
		return error(ERR_INVALID,
			     "fstests_src: '%s' is a file; give an fstests tree (a directory) or a "
			     "git URL",
			     src);
	return error(ERR_NOTFOUND,
		     "fstests_src: '%s' does not exist and is not a git URL; give an fstests "
		     "tree (a directory) or a git URL",
		     src);
}

enum status
plan_check_cost(const struct plan *plan, const struct profiles *profiles)
{
	const struct backend_ops *ops = backend_find(plan->backend);
	struct strbuf basis = STRBUF_INIT;
	struct est_total t;
	char *cost;
	enum status rc;

	if (!ops || !(ops->caps & BACKEND_COSTS) || plan_backend_opt(plan, "cost"))
		return OK;
	inventory_expect(plan, profiles, &t, &basis);
	cost = backend_cost(ops, plan, t.shards, t.ntests ? t.wall : 0);
	if (t.ntests)
		rc = error(ERR_INVALID,
			   "%s; the duration is estimated %s; give -o cost=ok to accept it", cost,
			   basis.buf);
	else
		rc = error(ERR_INVALID,
			   "%s (its tests are known once fswb has the fstests tree: --fstests-src "
			   "DIR); give -o cost=ok to accept it",
			   cost);
	free(cost);
	strbuf_release(&basis);
	return rc;
}

enum status
plan_check(const struct plan *plan, const struct profiles *profiles)
{
	enum status rc = plan_validate(plan, profiles, backend_names());

	if (rc != OK || (rc = plan_check_fstests_src(plan->fstests_src)) != OK)
		return rc;
	rc = check_test_dirs(plan, profiles);
	if (rc == OK)
		rc = backend_check_plan(plan);
	if (rc == OK && plan->shell) {
		const struct backend_ops *ops = backend_find(plan->backend);

		if (ops && !(ops->caps & BACKEND_SHELL))
			rc = error(ERR_INVALID,
				   "the '%s' backend gives no shell in its machine: log in to it "
				   "yourself (ssh%s%s)",
				   ops->name, plan_backend_opt(plan, "host") ? " " : "",
				   plan_backend_opt(plan, "host") ? plan_backend_opt(plan, "host")
								  : "");
	}
	if (rc == OK && plan->detach) {
		const struct backend_ops *ops = backend_find(plan->backend);

		if (ops && !(ops->caps & BACKEND_DETACHES))
			rc = error(ERR_INVALID,
				   "--detach: the '%s' backend's machines stop with fswb; only a "
				   "cloud's (--backend gce) run on without it",
				   ops->name);
		else if (plan->shell)
			rc = error(ERR_INVALID, "--detach and --shell: a shell needs fswb there; "
						"leave out one of them");
		else if (plan->dry_run)
			rc = error(ERR_INVALID, "--detach and -n: check -n runs no test, so there "
						"is nothing to leave running; leave out --detach");
	}
	return rc;
}

/* Up to 3 names of cat close to name, as ", "-separated words in sb; how many. */
static size_t
close_tests(const struct catalogue *cat, const char *name, struct strbuf *sb)
{
	const char **names = xcalloc(cat->ntests + 1, sizeof(*names));
	const char *best[3];
	size_t n;

	for (size_t i = 0; i < cat->ntests; i++)
		names[i] = cat->tests[i].name;
	n = close_matches(name, names, cat->ntests, best, ARRAY_SIZE(best));
	for (size_t i = 0; i < n; i++)
		strbuf_addf(sb, "%s%s", i ? ", " : "", best[i]);
	free(names);
	return n;
}

enum status
plan_check_tests(const struct plan *plan, const struct catalogue *cat)
{
	enum status rc = OK;

	for (size_t i = 0; rc == OK && i < plan->tests.tests.n; i++) {
		const char *t = plan->tests.tests.v[i];
		struct strvec one = STRVEC_INIT;
		struct catalogue_query q = { .fstyp = "", .tests = &one };
		struct catalogue_selection found;
		struct strbuf near = STRBUF_INIT;

		strvec_push(&one, t);
		rc = catalogue_select(cat, &q, &found);
		if (rc == OK && found.unknown.n) {
			if (strpbrk(t, "*?["))
				rc = error(ERR_NOTFOUND,
					   "tests.tests[%zu]: '%s' matches no test of the fstests "
					   "tree %s",
					   i, t, cat->root);
			else if (close_tests(cat, t, &near))
				rc = error(ERR_NOTFOUND,
					   "tests.tests[%zu]: '%s' is not a test of the fstests "
					   "tree %s (did you mean %s?)",
					   i, t, cat->root, near.buf);
			else
				rc = error(ERR_NOTFOUND,
					   "tests.tests[%zu]: '%s' is not a test of the fstests "
					   "tree %s",
					   i, t, cat->root);
		}
		catalogue_selection_release(&found);
		strvec_clear(&one);
		strbuf_release(&near);
	}
	return rc;
}

void
plan_check_selection(const struct plan *plan, const struct profiles *profiles,
		     const struct fs_config *cfg, struct check_selection *out)
{
	const struct plan_tests *t = &plan->tests;
	const struct test_set *set = t->preset ? profiles_set(profiles, t->preset) : NULL;
	const struct test_set *settings =
		plan_settings_set(plan) ? profiles_set(profiles, plan_settings_set(plan)) : NULL;

	memset(out, 0, sizeof(*out));
	strvec_init(&out->groups);
	strvec_init(&out->xgroups);
	strvec_init(&out->exclude);
	strvec_init(&out->exclude_files);
	strvec_init(&out->config_tests);
	strvec_init(&out->tests);
	strvec_init(&out->other_fs);
	strvec_init(&out->env);
	if (set) {
		strvec_copy(&out->groups, &set->groups);
		strvec_copy(&out->xgroups, &set->xgroups);
	}
	if (settings)
		strvec_copy(&out->env, &settings->env);
	for (size_t i = 0; i < t->groups.n; i++)
		strvec_push(&out->groups, t->groups.v[i]);
	for (size_t i = 0; i < t->xgroups.n; i++)
		strvec_push(&out->xgroups, t->xgroups.v[i]);
	for (size_t i = 0; i < cfg->xgroups.n; i++)
		if (!strvec_contains(&out->xgroups, cfg->xgroups.v[i]))
			strvec_push(&out->xgroups, cfg->xgroups.v[i]);
	strvec_copy(&out->exclude, &t->exclude);
	strvec_copy(&out->exclude_files, &t->exclude_files);
	strvec_copy(&out->config_tests, &cfg->exclude_tests);
	for (size_t i = 0; i < t->tests.n; i++)
		strvec_push(catalogue_name_fits(t->tests.v[i], cfg->fstyp) ? &out->tests
									   : &out->other_fs,
			    t->tests.v[i]);
}

void
check_selection_release(struct check_selection *sel)
{
	strvec_clear(&sel->groups);
	strvec_clear(&sel->xgroups);
	strvec_clear(&sel->exclude);
	strvec_clear(&sel->exclude_files);
	strvec_clear(&sel->config_tests);
	strvec_clear(&sel->tests);
	strvec_clear(&sel->other_fs);
	strvec_clear(&sel->env);
}

void
check_selection_expand(struct check_selection *sel, const struct catalogue *cat, const char *fstyp)
{
	struct strvec tests = STRVEC_INIT;

	for (size_t i = 0; i < sel->tests.n; i++) {
		const char *t = sel->tests.v[i];
		struct strvec one = STRVEC_INIT;
		struct catalogue_query q = { .fstyp = fstyp, .tests = &one };
		struct catalogue_selection found;

		if (!strpbrk(t, "*?[")) {
			strvec_push(&tests, t);
			continue;
		}
		strvec_push(&one, t);
		if (catalogue_select(cat, &q, &found) == OK) {
			for (size_t j = 0; j < found.tests.n; j++)
				strvec_push(catalogue_name_fits(found.tests.v[j], fstyp)
						    ? &tests
						    : &sel->other_fs,
					    found.tests.v[j]);
			/* matching nothing: check says it ignores it */
			strvec_pushv(&tests, (const char *const *)found.unknown.v);
			catalogue_selection_release(&found);
		} else {
			strvec_push(&tests, t); /* check says what is wrong with it */
		}
		error_clear();
		strvec_clear(&one);
	}
	strvec_clear(&sel->tests);
	sel->tests = tests;
}

void
check_selection_excluded(const struct check_selection *sel, struct strvec *out)
{
	strvec_pushv(out, (const char *const *)sel->exclude.v);
	strvec_pushv(out, (const char *const *)sel->config_tests.v);
}
