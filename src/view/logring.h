/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The kernel log the run view shows: a ring of lines with a bound on both
 * their number and their bytes, so that a guest printing a million lines
 * costs the same memory as one printing ten thousand. The oldest lines go
 * first; every line has a sequence number that keeps counting, so a view
 * can tell which lines it has already shown and what was dropped.
 *
 *	struct logring r;
 *	logring_init(&r, 20000, 8 << 20);
 *	logring_push(&r, "[  1.0] EXT4-fs ...", KMSG_WARNING, 3, 0);
 *	for (size_t i = 0; i < r.n; i++) logring_get(&r, i)->text ...
 *	logring_release(&r);
 */
#ifndef FSWB_VIEW_LOGRING_H
#define FSWB_VIEW_LOGRING_H

#include <stddef.h>
#include <stdint.h>

/* A line longer than this is cut (and ends with "..."). */
#define LOGRING_LINE_MAX 2048

/* Flags beyond enum kmsg_flag. */
#define LOGF_CONSOLE (1u << 16) /* a console line, not the kernel's */

struct log_line {
	char *text;
	unsigned flags; /* enum kmsg_flag, LOGF_* */
	int test;	/* the owner's test index, or -1 */
	unsigned shard; /* the guest it came from (1..N) in a sharded run, else 0 */
	uint64_t seq;	/* 0 for the first line ever pushed */
};

struct logring {
	struct log_line *v;
	size_t cap;	  /* max lines */
	size_t head;	  /* index of the oldest line in v */
	size_t n;	  /* lines held */
	size_t bytes;	  /* text bytes held */
	size_t max_bytes; /* bound on bytes */
	uint64_t next_seq;
	uint64_t dropped; /* lines pushed out so far */
};

void logring_init(struct logring *r, size_t max_lines, size_t max_bytes);
void logring_release(struct logring *r);
/* Copy a line in (cut at LOGRING_LINE_MAX bytes); drops the oldest when full.
 */
void logring_push(struct logring *r, const char *text, unsigned flags, int test, unsigned shard);
/* Line i, 0 the oldest held, n-1 the newest. */
const struct log_line *logring_get(const struct logring *r, size_t i);
/* The index of the line with sequence seq, or (size_t)-1 when dropped or not
 * yet seen. */
size_t logring_index_of(const struct logring *r, uint64_t seq);

#endif
