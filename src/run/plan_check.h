/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A plan checked against everything this fswb has: plan_validate() (the
 * fields, the profiles, the backends' names), where fstests comes from,
 * then what needs fstests' knowledge: each named test is for one of the chosen configurations'
 * filesystems (check would run xfs/001 on ext4, and it would fail there);
 * then the backend's options (backend_check_options: keys it takes, values).
 * Front ends call this before they save or run a plan. And what check is
 * asked to run for each configuration of a checked plan (below).
 */
#ifndef FSWB_RUN_PLAN_CHECK_H
#define FSWB_RUN_PLAN_CHECK_H

#include "core/plan.h"
#include "core/profile.h"
#include "core/status.h"
#include "fstests/catalogue.h"

/* OK, or the error naming the bad field and the choices (error_msg()). */
enum status plan_check(const struct plan *plan, const struct profiles *profiles);

/*
 * A plan about to start machines: a backend that costs money (BACKEND_COSTS)
 * runs only with the user's -o cost=ok, given having seen its cost line for
 * the run's expected duration (inventory_expect); else ERR_INVALID with that
 * line and what to give.
 */
enum status plan_check_cost(const struct plan *plan, const struct profiles *profiles);

/*
 * Where fstests comes from (plan.fstests_src; NULL: upstream): a directory
 * or a git URL (appliance_src_is_url), else ERR_NOTFOUND or ERR_INVALID
 * saying what to give. plan_check() asks it; the wizard as it is typed.
 */
enum status plan_check_fstests_src(const char *src);

/*
 * With a local fstests tree (its catalogue, cat): each named test and
 * pattern of plan is in it, as check resolves names (catalogue.h), before
 * anything is built; check would only say "unknown test, ignored" once a
 * guest has booted. ERR_NOTFOUND naming the first that is not, with the
 * tree's closest names ("did you mean generic/099, generic/199?") or, for a
 * pattern, that it matches nothing.
 */
enum status plan_check_tests(const struct plan *plan, const struct catalogue *cat);

/*
 * What check is asked to run for configuration cfg, as data: the -g groups
 * (the test set's, then the plan's), the -x groups (the test set's, the
 * plan's, then the configuration's from the profiles' exclude files), the
 * -e entries (the plan's), the tests the profiles' exclude files leave out
 * (global, the filesystem's, the configuration's own: check -e too), the -E
 * files (the plan's, host paths), the named tests that are for cfg's
 * filesystem (the others in other_fs: check would run them there and they
 * would fail), and the settings the test set gives check (NAME=value: the
 * preset's, else those of tests.settings_from, without its tests). The
 * engine turns it into check's words; `fswb run -n` resolves it on the host
 * with the catalogue.
 */
struct check_selection {
	struct strvec groups, xgroups, exclude, exclude_files;
	struct strvec config_tests; /* cfg->exclude_tests */
	struct strvec tests, other_fs;
	struct strvec env;
};

/*
 * Named tests that are globs ("*\/001", "generic/00?") become the tests of
 * cat they match that are for fstyp's directories: check would expand
 * "*\/001" into every directory, btrfs/001 on ext4 included. Those of other
 * directories go to other_fs. Without a catalogue (fstests from a URL) check
 * expands them itself.
 */
void check_selection_expand(struct check_selection *sel, const struct catalogue *cat,
			    const char *fstyp);

/* Every -e entry of sel: the plan's, then the profiles'. */
void check_selection_excluded(const struct check_selection *sel, struct strvec *out);

void plan_check_selection(const struct plan *plan, const struct profiles *profiles,
			  const struct fs_config *cfg, struct check_selection *out);
void check_selection_release(struct check_selection *sel);

#endif
