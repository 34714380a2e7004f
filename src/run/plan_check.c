/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A plan checked against everything this fswb has: see plan_check.h.
 */
#include "run/plan_check.h"

#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "core/util.h"
#include "fstests/catalogue.h"

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
plan_check(const struct plan *plan, const struct profiles *profiles)
{
	enum status rc = plan_validate(plan, profiles, backend_names());

	if (rc != OK)
		return rc;
	rc = check_test_dirs(plan, profiles);
	return rc == OK ? backend_check_options(plan) : rc;
}

void
plan_check_selection(const struct plan *plan, const struct profiles *profiles,
		     const struct fs_config *cfg, struct check_selection *out)
{
	const struct plan_tests *t = &plan->tests;
	const struct test_set *set = t->preset ? profiles_set(profiles, t->preset) : NULL;

	memset(out, 0, sizeof(*out));
	strvec_init(&out->groups);
	strvec_init(&out->xgroups);
	strvec_init(&out->exclude);
	strvec_init(&out->exclude_files);
	strvec_init(&out->tests);
	strvec_init(&out->other_fs);
	strvec_init(&out->env);
	if (set) {
		strvec_copy(&out->groups, &set->groups);
		strvec_copy(&out->xgroups, &set->xgroups);
		strvec_copy(&out->env, &set->env);
	}
	for (size_t i = 0; i < t->groups.n; i++)
		strvec_push(&out->groups, t->groups.v[i]);
	for (size_t i = 0; i < t->xgroups.n; i++)
		strvec_push(&out->xgroups, t->xgroups.v[i]);
	strvec_copy(&out->exclude, &t->exclude);
	strvec_copy(&out->exclude_files, &t->exclude_files);
	out->config_exclude = cfg->exclude;
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
	strvec_clear(&sel->tests);
	strvec_clear(&sel->other_fs);
	strvec_clear(&sel->env);
	sel->config_exclude = NULL;
}
