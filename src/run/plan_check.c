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
	return check_test_dirs(plan, profiles);
}
