/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A plan checked against everything this fswb has: plan_validate() (the
 * fields, the profiles, the backends' names), then what needs fstests'
 * knowledge: each named test is for one of the chosen configurations'
 * filesystems (check would run xfs/001 on ext4, and it would fail there).
 * Front ends call this before they save or run a plan.
 */
#ifndef FSWB_RUN_PLAN_CHECK_H
#define FSWB_RUN_PLAN_CHECK_H

#include "core/plan.h"
#include "core/profile.h"
#include "core/status.h"

/* OK, or the error naming the bad field and the choices (error_msg()). */
enum status plan_check(const struct plan *plan, const struct profiles *profiles);

#endif
