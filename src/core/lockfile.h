/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A lock between fswb processes on what they build into the cache (a
 * kernel's build directory, unpacked modules, a kernel image's config), as
 * the appliance builder locks its key: flock(2) on a file PATH, created
 * 0644. The kernel drops it when the holder exits, even by SIGKILL, so a
 * killed fswb never leaves a lock behind.
 *
 *	int fd;
 *	if (lockfile_take(loop, path, cancel, waiting, data, &fd) != OK) ...
 *	... build ...
 *	lockfile_release(fd);
 *
 * While another process holds it, lockfile_take() waits: it runs the loop
 * (other watchers, timers and signals go on) when one is given and it is
 * not inside one of the loop's callbacks, else it sleeps, trying again
 * every LOCKFILE_POLL_MS. waiting(data) is called once,
 * the first time it has to wait (to say so). It gives up with
 * ERR_INTERRUPTED when *cancel becomes true or the loop is told to quit.
 */
#ifndef FSWB_CORE_LOCKFILE_H
#define FSWB_CORE_LOCKFILE_H

#include <stdbool.h>

#include "core/loop.h"
#include "core/status.h"

#define LOCKFILE_POLL_MS 200

enum status lockfile_take(struct loop *loop, const char *path, const bool *cancel,
			  void (*waiting)(void *data), void *data, int *fd_out);
/* Drop the lock (fd < 0: nothing to drop). */
void lockfile_release(int fd);

#endif
