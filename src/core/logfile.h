/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A log file of a run that something outside fswb makes grow (a guest's
 * console, its kernel log, the events of its tests): appended to until a
 * cap, and then cut, with a line saying where and why.
 *
 * Call sequence:
 *	struct logfile f;
 *	logfile_open(&f, dir, "console.log", LOG_CAP_CONSOLE, note);
 *	logfile_write(&f, buf, len) ...  (LOGFILE_CUT once, when the cap is met)
 *	logfile_close(&f);
 * note is the line written at the cut (with its '\n'); NULL for the default
 * "[fswb: NAME was cut here: it reached its cap of SIZE]". The file is
 * created new (O_EXCL, O_NOFOLLOW): it is never written through a symlink.
 */
#ifndef FSWB_CORE_LOGFILE_H
#define FSWB_CORE_LOGFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

#define LOG_CAP_CONSOLE (UINT64_C(256) << 20) /* console.log */
#define LOG_CAP_KERNEL	(UINT64_C(256) << 20) /* kernel.log */
#define LOG_CAP_EVENTS	(UINT64_C(256) << 20) /* events.jsonl */
#define LOG_CAP_SLICE	(UINT64_C(16) << 20)  /* one test's kernel-log slice */

struct logfile {
	int fd; /* -1 when closed or not opened */
	char *path;
	char *note;
	uint64_t size, cap;
	bool cut;
};

enum logfile_result {
	LOGFILE_OK,
	LOGFILE_CUT,	 /* this write met the cap: what fit, then the note, was written */
	LOGFILE_DROPPED, /* cut before, or not open: nothing written */
	LOGFILE_ERROR,	 /* a write failed (errno; a full disk) */
};

/* ERR_IO naming the file when it cannot be created (then writes drop). */
enum status logfile_open(struct logfile *f, const char *dir, const char *name, uint64_t cap,
			 const char *note);
/* The same, appending to the file if it exists (a run followed later). */
enum status logfile_append(struct logfile *f, const char *dir, const char *name, uint64_t cap,
			   const char *note);
enum logfile_result logfile_write(struct logfile *f, const void *buf, size_t len);
void logfile_close(struct logfile *f);

#endif
