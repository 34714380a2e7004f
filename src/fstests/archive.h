/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The results archive a test machine sends back (the agent's RESULT: a
 * gzip-compressed tar of check's results directory), unpacked as the
 * untrusted input it is.
 *
 * The archive is read here (zlib and a tar reader of our own: ustar, GNU
 * long names, pax path and size records), so that fswb decides what each
 * member becomes, not tar:
 *   - regular files and directories only, created below dest with openat()
 *     and O_NOFOLLOW (every component) and O_EXCL (a file is never opened
 *     twice, nothing that was there is written through); files 0644, or
 *     0755 when the archive gave any execute bit; directories 0755;
 *   - skipped, and named in the report: symlinks, hard links, devices,
 *     FIFOs, sparse and other special members; absolute names and names
 *     with ".." or control characters; setuid, setgid and sticky bits
 *     (the file is kept, the bits are not); a file that is already there;
 *     a file that would take the unpacked size past max_bytes;
 *   - the unpacking stops, with what came so far kept, at ARCHIVE_MEMBERS_MAX
 *     members or when the decompressed stream passes 4 * max_bytes (a
 *     gzip bomb), and says so in the report.
 * A damaged archive (a bad header checksum, the stream ending inside a
 * member) keeps what came before it, and is ERR_PARSE naming the offset.
 */
#ifndef FSWB_FSTESTS_ARCHIVE_H
#define FSWB_FSTESTS_ARCHIVE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/status.h"
#include "core/util.h"

#define ARCHIVE_MAX_DEFAULT (UINT64_C(2) << 30) /* --max-results: 2 GiB */
#define ARCHIVE_MEMBERS_MAX 100000
#define ARCHIVE_NAMED_MAX   20 /* skipped members named one by one in the report */

struct archive_report {
	unsigned files, dirs;
	uint64_t bytes;	       /* unpacked */
	size_t nskipped;       /* members left out */
	struct strvec skipped; /* "NAME: why" for the first ARCHIVE_NAMED_MAX of them */
	char *stopped;	       /* why the unpacking stopped before the end (a limit), or NULL */
};

void archive_report_init(struct archive_report *r);
void archive_report_release(struct archive_report *r);
/*
 * One text for a warning: what was left out and why (names passed through
 * term_clean()), "" when nothing was; free() it.
 */
char *archive_report_text(const struct archive_report *r);

/*
 * Unpack the archive read from fd (gzip or plain tar; fd is not closed)
 * below the directory destfd. max_bytes caps the sum of the files' sizes.
 * OK when the archive was read to its end or a limit stopped it (see the
 * report); ERR_PARSE for a damaged archive, ERR_IO when a file cannot be
 * written (a full disk), each with what came before it unpacked.
 */
enum status archive_unpack_fd(int fd, int destfd, uint64_t max_bytes, struct archive_report *r);
/* The same for the file path (never a symlink) into the directory dest. */
enum status archive_unpack(const char *path, const char *dest, uint64_t max_bytes,
			   struct archive_report *r);

#endif
