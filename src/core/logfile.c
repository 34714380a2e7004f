/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "core/logfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/paths.h"
#include "core/util.h"

static enum status
open_log(struct logfile *f, const char *dir, const char *name, uint64_t cap, const char *note,
	 bool append)
{
	char size[32];
	struct stat st;
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	memset(f, 0, sizeof(*f));
	f->cap = cap;
	f->path = path_join(dir, name);
	f->note = note ? xstrdup(note)
		       : xasprintf("\n[fswb: %s was cut here: it reached its cap of %s]\n", name,
				   format_size(cap, size, sizeof(size)));
	f->fd = dfd < 0 ? -1
			: openat_beneath(dfd, name,
					 O_WRONLY | O_CREAT | (append ? 0 : O_EXCL) | O_APPEND,
					 0644, false);
	if (f->fd < 0) {
		int saved = errno;

		if (dfd >= 0)
			close(dfd);
		return error(ERR_IO, "cannot create '%s': %s", f->path, strerror(saved));
	}
	close(dfd);
	if (append && !fstat(f->fd, &st))
		f->size = (uint64_t)st.st_size;
	return OK;
}

enum status
logfile_open(struct logfile *f, const char *dir, const char *name, uint64_t cap, const char *note)
{
	return open_log(f, dir, name, cap, note, false);
}

enum status
logfile_append(struct logfile *f, const char *dir, const char *name, uint64_t cap, const char *note)
{
	return open_log(f, dir, name, cap, note, true);
}

enum logfile_result
logfile_write(struct logfile *f, const void *buf, size_t len)
{
	size_t fit = len;

	if (f->fd < 0 || f->cut)
		return LOGFILE_DROPPED;
	if (f->size + len > f->cap)
		fit = (size_t)(f->cap - f->size);
	if (!write_fd_all(f->fd, buf, fit))
		return LOGFILE_ERROR;
	f->size += fit;
	if (fit == len)
		return LOGFILE_OK;
	f->cut = true;
	if (!write_fd_all(f->fd, f->note, strlen(f->note)))
		return LOGFILE_ERROR;
	return LOGFILE_CUT;
}

void
logfile_close(struct logfile *f)
{
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
	free(f->path);
	free(f->note);
	f->path = f->note = NULL;
}
