/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Results from elsewhere into fswb's history, so that runs made without
 * fswb count for compare, baselines and flaky tests:
 *
 *	check's results directory		RESULT_BASE: result.xml, check.log,
 *						per-test files; or one directory per
 *						section below it (results_import())
 *	xfstests-bld's results			kvm-xfstests and gce-xfstests:
 *						RESULTS/runtests.log (check's output),
 *						RESULTS/run-stats ("KERNEL: kernel\t
 *						RELEASE VERSION MACHINE", ...), and per
 *						configuration RESULTS/FS/results-TC/,
 *						check's RESULT_BASE with a "config"
 *						file of "NAME: value" lines
 *	a tarball of either			unpacked by the caller (import_purge()
 *						first), then read as a directory
 *
 * What is imported is untrusted: only regular files and directories are
 * read or copied, never through a symlink; files are copied up to
 * IMPORT_FILE_MAX bytes and trees IMPORT_DEPTH_MAX deep.
 */
#ifndef FSWB_FSTESTS_IMPORT_H
#define FSWB_FSTESTS_IMPORT_H

#include <stdbool.h>

#include "core/status.h"
#include "core/util.h"
#include "fstests/results.h"

#define IMPORT_FILE_MAX	 (16u << 20)
#define IMPORT_DEPTH_MAX 8

/* Is dir xfstests-bld's results (a FS/results-TC/ directory below it)? */
bool import_is_bld(const char *dir);

/*
 * The record of path (see above; results_import() for check's forms), and
 * for each of its sections the directory its files are in (NULL in dirs
 * when none: check's stdout). A section of xfstests-bld's results is the
 * configuration FS/TC ("ext4/4k", as fswb names them), with its FSTYP and
 * mkfs and mount options from the config file when result.xml lacks them.
 */
enum status import_results(const char *path, struct run_record *out, struct strvec *dirs);

/*
 * Remove from the tree at dir everything that is neither a regular file
 * nor a directory (symlinks, devices, fifos), without following a link;
 * deeper than IMPORT_DEPTH_MAX is removed too. For an unpacked tarball.
 */
enum status import_purge(const char *dir);

/*
 * Keep rec as a run in history: DATA/runs/ID/ (ID from its start time,
 * else now, "-2"... when taken) with run.json and each section's files
 * copied from dirs[i] to results/SLUG/ (SLUG: its configuration, '/' as
 * '-'), where report and html find them; the artifact paths are set to
 * the copies. *id is the new id (free() it).
 */
enum status import_keep(struct run_record *rec, const struct strvec *dirs, char **id);

#endif
