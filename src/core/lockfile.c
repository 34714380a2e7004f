/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "core/lockfile.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

enum status
lockfile_take(struct loop *loop, const char *path, const bool *cancel, void (*waiting)(void *data),
	      void *data, int *fd_out)
{
	int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
	bool said = false;

	*fd_out = -1;
	if (fd < 0)
		return error(ERR_IO, "cannot open the lock '%s': %s", path, strerror(errno));
	while (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno != EWOULDBLOCK && errno != EINTR) {
			enum status rc =
				error(ERR_IO, "cannot lock '%s': %s", path, strerror(errno));

			close(fd);
			return rc;
		}
		if ((cancel && *cancel) || (loop && loop_done(loop))) {
			close(fd);
			return error(ERR_INTERRUPTED,
				     "interrupted while waiting for another fswb (it holds '%s')",
				     path);
		}
		if (!said && waiting)
			waiting(data);
		said = true;
		if (loop && !loop_dispatching(loop)) /* a worker's or a command's own wait */
			loop_run_once(loop, LOCKFILE_POLL_MS);
		else
			usleep(LOCKFILE_POLL_MS * 1000);
	}
	*fd_out = fd;
	return OK;
}

void
lockfile_release(int fd)
{
	if (fd >= 0)
		close(fd); /* the lock goes with the last descriptor of the open file */
}
