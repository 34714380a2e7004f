/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The results archive reader on anything (gzip'd or plain tar): each input
 * is unpacked into a fresh scratch directory, and nothing may appear
 * outside it nor be anything but a regular file or directory of mode
 * 0644/0755.
 *
 * fuzz-sources: src/fstests/archive.c src/core/paths.c src/core/util.c src/core/status.c
 * fuzz-seeds: tests/fuzz/seeds/results.tar tests/fuzz/seeds/results.tar.gz
 * fuzz-options: -max_len=100000
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/paths.h"
#include "core/status.h"
#include "core/util.h"
#include "fstests/archive.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *scratch;

/* Every entry below dir is a regular file 0644/0755 or a directory 0755. */
static void
check_tree(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	if (!d)
		abort();
	while ((de = readdir(d))) {
		char *p;
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		p = path_join(dir, de->d_name);
		if (lstat(p, &st))
			abort();
		if (S_ISDIR(st.st_mode)) {
			if ((st.st_mode & 07777) != 0755)
				abort();
			check_tree(p);
		} else if (!S_ISREG(st.st_mode) ||
			   ((st.st_mode & 07777) != 0644 && (st.st_mode & 07777) != 0755)) {
			abort();
		}
		free(p);
	}
	closedir(d);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct archive_report r;
	char *dest;
	int fd, dfd;

	if (!scratch) {
		char tmpl[] = "/tmp/fswb-fuzz-archive.XXXXXX";

		if (!mkdtemp(tmpl))
			abort();
		scratch = xstrdup(tmpl);
	}
	dest = path_join(scratch, "dest");
	if (mkdir(dest, 0755))
		abort();
	fd = memfd_create("archive", MFD_CLOEXEC);
	if (fd < 0 || !write_fd_all(fd, data, size) || lseek(fd, 0, SEEK_SET))
		abort();
	dfd = open(dest, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	archive_report_init(&r);
	(void)archive_unpack_fd(fd, dfd, 50000, &r);
	free(archive_report_text(&r));
	archive_report_release(&r);
	close(dfd);
	close(fd);
	check_tree(scratch);
	if (remove_tree(dest) != OK)
		abort();
	free(dest);
	error_clear();
	return 0;
}
