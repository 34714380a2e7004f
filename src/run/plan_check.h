/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A plan checked against everything this fswb has: plan_validate() (the
 * fields, the profiles, the backends' names), then what needs fstests'
 * knowledge: each named test is for one of the chosen configurations'
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

/* OK, or the error naming the bad field and the choices (error_msg()). */
enum status plan_check(const struct plan *plan, const struct profiles *profiles);

/*
 * What check is asked to run for configuration cfg, as data: the -g groups
 * (the test set's, then the plan's), the -x groups, the -e entries, the -E
 * files (the plan's; the configuration's exclude file apart, host paths),
 * the named tests that are for cfg's filesystem (the others in other_fs:
 * check would run them there and they would fail), and the settings the
 * test set gives check (NAME=value). The engine turns it into check's
 * words; `fswb run -n` resolves it on the host with the catalogue.
 */
struct check_selection {
	struct strvec groups, xgroups, exclude, exclude_files;
	const char *config_exclude; /* cfg->exclude, or NULL */
	struct strvec tests, other_fs;
	struct strvec env;
};

void plan_check_selection(const struct plan *plan, const struct profiles *profiles,
			  const struct fs_config *cfg, struct check_selection *out);
void check_selection_release(struct check_selection *sel);

#endif
