/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "fstests/kmsg.h"

#include <dirent.h>
#include <stdarg.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/paths.h"
#include "fstests/check_parser.h"

#define ESC 0x1b
#define BEL 0x07

struct kmsg {
	struct event_bus *bus;
	char *config;

	/* the line being received */
	struct line_asm raw;
	size_t lines, cut;
	struct strbuf clean; /* scratch: the cleaned line */
	struct strbuf piece; /* scratch: one piece of it, NUL-terminated */

	/* the open slice */
	bool in_slice;
	bool no_slices; /* kmsg_stop_slices(): markers open none */
	char test[CHECK_NAME_MAX + 1];
	unsigned slice_flags;

	/* slices on disk */
	char *dir;
	int fd;
	uint64_t slice_bytes;
	bool slice_cut;
	enum status status;
	char *message;

	/* the tail: a ring of the last tail_max lines */
	char **tail;
	unsigned tail_max, tail_n, tail_head;

	bool finished;
};

/* ---- text ---- */

static bool
is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static bool
is_word(int c)
{
	return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool
has(const char *s, size_t len, const char *needle)
{
	return memmem(s, len, needle, strlen(needle)) != NULL;
}

/* How many bytes the escape sequence at s (s[0] == ESC) takes. */
static size_t
escape_len(const unsigned char *s, size_t len)
{
	size_t i = 2;

	if (len < 2)
		return len;
	switch (s[1]) {
	case '[': /* CSI: parameters, intermediates, one final byte */
		while (i < len && s[i] >= 0x30 && s[i] <= 0x3f)
			i++;
		while (i < len && s[i] >= 0x20 && s[i] <= 0x2f)
			i++;
		if (i < len && s[i] >= 0x40 && s[i] <= 0x7e)
			i++;
		return i;
	case ']': /* OSC, up to BEL or ST */
	case 'P': /* DCS, SOS, PM, APC: up to ST */
	case 'X':
	case '^':
	case '_':
		while (i < len) {
			if (s[i] == BEL && s[1] == ']')
				return i + 1;
			if (s[i] == ESC && i + 1 < len && s[i + 1] == '\\')
				return i + 2;
			i++;
		}
		return len;
	default:
		if (s[1] >= 0x20 && s[1] <= 0x2f) /* "ESC ( B" and the like */
			return len > 2 ? 3 : 2;
		if (s[1] >= 0x30 && s[1] <= 0x7e) /* "ESC c", "ESC 7" */
			return 2;
		return 1;
	}
}

/* The raw line into out: no escapes, no CR or NUL, valid UTF-8. */
static void
clean_line(const char *raw, size_t len, struct strbuf *out)
{
	const unsigned char *s = (const unsigned char *)raw;
	size_t i = 0;

	strbuf_reset(out);
	while (i < len) {
		unsigned char c = s[i];
		size_t n;

		if (c == ESC) {
			i += escape_len(s + i, len - i);
			continue;
		}
		if (c == '\r' || c == '\0') {
			i++;
			continue;
		}
		if ((c < 0x20 && c != '\t') || c == 0x7f) {
			strbuf_addch(out, '?');
			i++;
			continue;
		}
		n = c < 0x80 ? 1 : utf8_len(s + i, s + len);
		if (!n) {
			strbuf_addch(out, '?');
			i++;
			continue;
		}
		strbuf_add(out, s + i, n);
		i += n;
	}
}

/* A kernel stamp "[" blanks digits "." six digits "]" at s: its length, else 0. */
static size_t
kernel_stamp_len(const char *s, size_t len)
{
	size_t i = 1, d = 0;

	if (!len || s[0] != '[')
		return 0;
	while (i < len && s[i] == ' ')
		i++;
	while (i < len && is_digit(s[i])) {
		i++;
		d++;
	}
	if (!d || i >= len || s[i] != '.')
		return 0;
	i++;
	for (d = 0; d < 6; d++, i++)
		if (i >= len || !is_digit(s[i]))
			return 0;
	if (i >= len || s[i] != ']')
		return 0;
	return i + 1;
}

/* Nothing but blanks and bracketed stamps ("[    1.25] ", "[ 3.141592]"). */
static bool
only_stamps(const char *s, size_t len)
{
	size_t i = 0;

	while (i < len) {
		if (s[i] == ' ' || s[i] == '\t') {
			i++;
		} else if (s[i] == '[') {
			size_t j = i + 1;

			while (j < len && (s[j] == ' ' || s[j] == '.' || is_digit(s[j])))
				j++;
			if (j >= len || s[j] != ']' || j == i + 1)
				return false;
			i = j + 1;
		} else {
			return false;
		}
	}
	return true;
}

size_t
kmsg_marker(const char *text, size_t len, const char **name)
{
	static const char word[] = "run fstests ";
	const size_t wl = sizeof(word) - 1;
	const char *s = text, *end = text + len;

	while ((s = memmem(s, (size_t)(end - s), word, wl))) {
		const char *t = s + wl;
		size_t n;

		if (s == text || s[-1] == ' ' || s[-1] == ']' || s[-1] == ';' || s[-1] == '>') {
			n = check_test_name_len(t, (size_t)(end - t));
			if (n && (size_t)(end - t) >= n + 4 && !memcmp(t + n, " at ", 4)) {
				if (name)
					*name = t;
				return n;
			}
		}
		s++;
	}
	return 0;
}

unsigned
kmsg_classify(const char *s, size_t len)
{
	unsigned f = 0;
	const char *p;

	/* check's _check_dmesg_filter drops these lines first */
	if (has(s, len, "BUG: MAX_LOCKDEP_CHAIN_HLOCKS too low") ||
	    has(s, len, "BUG: MAX_STACK_TRACE_ENTRIES too low") ||
	    has(s, len, "WARNING: Reset corrupted AGFL"))
		return 0;
	if (has(s, len, "kernel BUG at"))
		f |= KMSG_BUG;
	for (p = s; (p = memmem(p, len - (size_t)(p - s), "BUG:", 4)); p++) {
		if (p == s || !is_word((unsigned char)p[-1])) {
			f |= KMSG_BUG;
			break;
		}
	}
	if ((p = memmem(s, len, "BUG ", 4)) &&
	    memmem(p + 4, len - (size_t)(p + 4 - s), " remaining", 10))
		f |= KMSG_BUG;
	if (has(s, len, "WARNING:"))
		f |= KMSG_WARNING;
	if (has(s, len, "Oops:") || has(s, len, "general protection fault"))
		f |= KMSG_OOPS;
	if (has(s, len, "possible recursive locking detected") ||
	    has(s, len, "suspicious RCU usage") ||
	    has(s, len, "possible circular locking dependency detected"))
		f |= KMSG_LOCKDEP;
	if (has(s, len, "Kernel panic"))
		f |= KMSG_PANIC;
	if (has(s, len, "oom-kill") || has(s, len, "Out of memory") || has(s, len, "UBSAN:"))
		f |= KMSG_OTHER_BAD;
	if ((p = memmem(s, len, "INFO: task ", 11)) &&
	    memmem(p + 11, len - (size_t)(p + 11 - s), " blocked for more than ", 23))
		f |= KMSG_OTHER_BAD;
	return f;
}

/* ---- slices ---- */

char *
kmsg_slice_path(const char *dir, const char *test)
{
	char *p = path_join(dir, test);
	char *out = xasprintf("%s.kmsg", p);

	free(p);
	return out;
}

static enum status
write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return ERR_IO;
		}
		buf += n;
		len -= (size_t)n;
	}
	return OK;
}

static void
close_slice(struct kmsg *k)
{
	if (k->fd >= 0)
		close(k->fd);
	k->fd = -1;
}

/* Saving slices failed: say so once, keep the message, save no more. */
static void __attribute__((format(printf, 2, 3))) slice_fail(struct kmsg *k, const char *fmt, ...)
{
	struct event ev = { .type = EV_WARNING };
	va_list ap;

	close_slice(k);
	if (k->status != OK)
		return;
	va_start(ap, fmt);
	k->status = verror(ERR_IO, fmt, ap);
	va_end(ap);
	k->message = xstrdup(error_msg());
	ev.config = k->config;
	ev.u.error.code = OK;
	ev.u.error.message = k->message;
	event_emit(k->bus, &ev);
}

static void
open_slice(struct kmsg *k)
{
	char *rel, *path;
	int dfd;

	k->slice_bytes = 0;
	k->slice_cut = false;
	if (!k->dir || k->status != OK)
		return;
	/* below the slice directory, nothing is followed: every component O_NOFOLLOW */
	rel = xasprintf("%s.kmsg", k->test);
	dfd = open(k->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	k->fd = dfd < 0 ? -1 : openat_beneath(dfd, rel, O_WRONLY | O_CREAT | O_APPEND, 0644, true);
	if (k->fd < 0) {
		int e = errno;

		path = kmsg_slice_path(k->dir, k->test);
		slice_fail(k, "cannot open '%s' for the kernel log of '%s': %s%s; check the disk",
			   path, k->test, strerror(e),
			   e == ELOOP || e == ENOTDIR ? " (a symlink or a file on its way: not "
							"followed)"
						      : "");
		free(path);
	}
	if (dfd >= 0)
		close(dfd);
	free(rel);
}

static void
slice_write(struct kmsg *k, const char *line, size_t len)
{
	if (k->fd < 0 || k->slice_cut)
		return;
	if (k->slice_bytes + len + 1 > KMSG_SLICE_MAX) {
		char note[CHECK_NAME_MAX + 64];
		int n = snprintf(note, sizeof(note), "[fswb: kernel log of %s cut at %u MiB]\n",
				 k->test, KMSG_SLICE_MAX >> 20);

		k->slice_cut = true;
		if (write_all(k->fd, note, (size_t)n) != OK)
			slice_fail(k,
				   "cannot write the kernel log of '%s' below '%s': %s; check the "
				   "disk",
				   k->test, k->dir, strerror(errno));
		return;
	}
	k->slice_bytes += len + 1;
	if (write_all(k->fd, line, len) != OK || write_all(k->fd, "\n", 1) != OK)
		slice_fail(k, "cannot write the kernel log of '%s' below '%s': %s; check the disk",
			   k->test, k->dir, strerror(errno));
}

/* ---- the tail ---- */

static void
tail_push(struct kmsg *k, const char *line)
{
	if (!k->tail_max)
		return;
	free(k->tail[k->tail_head]);
	k->tail[k->tail_head] = xstrdup(line);
	k->tail_head = (k->tail_head + 1) % k->tail_max;
	if (k->tail_n < k->tail_max)
		k->tail_n++;
}

void
kmsg_set_tail(struct kmsg *k, unsigned lines)
{
	char **ring;
	unsigned keep;

	if (lines > KMSG_TAIL_MAX)
		lines = KMSG_TAIL_MAX;
	ring = lines ? xcalloc(lines, sizeof(*ring)) : NULL;
	keep = k->tail_n < lines ? k->tail_n : lines;
	/* the newest keep lines, oldest first */
	for (unsigned i = 0; i < k->tail_n; i++) {
		unsigned at = (k->tail_head + k->tail_max - k->tail_n + i) % k->tail_max;

		if (i >= k->tail_n - keep)
			ring[i - (k->tail_n - keep)] = k->tail[at];
		else
			free(k->tail[at]);
	}
	free(k->tail);
	k->tail = ring;
	k->tail_max = lines;
	k->tail_n = keep;
	k->tail_head = lines ? keep % lines : 0;
}

void
kmsg_tail(const struct kmsg *k, struct strbuf *out)
{
	for (unsigned i = 0; i < k->tail_n; i++) {
		unsigned at = (k->tail_head + k->tail_max - k->tail_n + i) % k->tail_max;

		strbuf_adds(out, k->tail[at]);
		strbuf_addch(out, '\n');
	}
}

/* ---- lines ---- */

static void
emit_piece(struct kmsg *k, const char *s, size_t len)
{
	struct event ev = { .type = EV_KMSG };
	const char *name;
	size_t n;
	unsigned flags;

	while (len && (s[len - 1] == ' ' || s[len - 1] == '\t'))
		len--;
	if (!len || only_stamps(s, len))
		return;
	strbuf_reset(&k->piece);
	strbuf_add(&k->piece, s, len);
	s = k->piece.buf;
	flags = kmsg_classify(s, len);
	if (!k->no_slices && (n = kmsg_marker(s, len, &name))) {
		close_slice(k);
		memcpy(k->test, name, n);
		k->test[n] = '\0';
		k->in_slice = true;
		k->slice_flags = 0;
		flags |= KMSG_MARKER;
		open_slice(k);
	}
	if (k->in_slice) {
		k->slice_flags |= flags & KMSG_BAD;
		slice_write(k, s, len);
	}
	tail_push(k, s);
	k->lines++;
	ev.config = k->config;
	ev.u.line.text = s;
	ev.u.line.flags = flags;
	ev.u.line.test = k->in_slice ? k->test : NULL;
	event_emit(k->bus, &ev);
}

static void
line_done(void *data, char *line, size_t line_len, bool cut)
{
	struct kmsg *k = data;
	const char *s;
	size_t len, start = 0;

	if (cut)
		k->cut++;
	clean_line(line, line_len, &k->clean);
	s = k->clean.buf;
	len = k->clean.len;
	/* cut before every kernel stamp that does not start the line */
	for (size_t i = 1; i < len; i++) {
		if (s[i] == '[' && kernel_stamp_len(s + i, len - i)) {
			emit_piece(k, s + start, i - start);
			start = i;
		}
	}
	emit_piece(k, s + start, len - start);
}

/* ---- the public interface ---- */

struct kmsg *
kmsg_new(struct event_bus *bus, const char *config)
{
	struct kmsg *k = xcalloc(1, sizeof(*k));

	k->bus = bus;
	k->config = config ? xstrdup(config) : NULL;
	k->fd = -1;
	k->status = OK;
	line_asm_init(&k->raw, KMSG_LINE_MAX, false);
	strbuf_init(&k->clean);
	strbuf_init(&k->piece);
	kmsg_set_tail(k, KMSG_TAIL_DEFAULT);
	return k;
}

void
kmsg_free(struct kmsg *k)
{
	if (!k)
		return;
	close_slice(k);
	kmsg_set_tail(k, 0);
	line_asm_release(&k->raw);
	strbuf_release(&k->clean);
	strbuf_release(&k->piece);
	free(k->config);
	free(k->dir);
	free(k->message);
	free(k);
}

enum status
kmsg_set_slice_dir(struct kmsg *k, const char *dir)
{
	free(k->dir);
	k->dir = NULL;
	if (mkdir_p(dir, 0755) != OK)
		return error_prefix(ERR_IO, "cannot keep the per-test kernel logs in '%s'", dir);
	k->dir = xstrdup(dir);
	if (k->in_slice && k->fd < 0)
		open_slice(k);
	return OK;
}

void
kmsg_feed(struct kmsg *k, const char *buf, size_t len)
{
	if (k->finished)
		BUG("kmsg_feed() after kmsg_finish()");
	line_asm_feed(&k->raw, buf, len, line_done, k);
}

void
kmsg_stop_slices(struct kmsg *k)
{
	kmsg_end_slice(k);
	k->no_slices = true;
}

void
kmsg_end_slice(struct kmsg *k)
{
	close_slice(k);
	k->in_slice = false;
	k->slice_flags = 0;
	k->test[0] = '\0';
}

void
kmsg_finish(struct kmsg *k)
{
	if (k->finished)
		return;
	line_asm_finish(&k->raw, line_done, k);
	close_slice(k);
	k->finished = true;
}

const char *
kmsg_current_test(const struct kmsg *k)
{
	return k->in_slice ? k->test : NULL;
}

unsigned
kmsg_slice_flags(const struct kmsg *k)
{
	return k->in_slice ? k->slice_flags : 0;
}

size_t
kmsg_lines(const struct kmsg *k)
{
	return k->lines;
}

size_t
kmsg_cut_lines(const struct kmsg *k)
{
	return k->cut;
}

enum status
kmsg_status(const struct kmsg *k, const char **message)
{
	if (message)
		*message = k->message;
	return k->status;
}

/* ---- copying slices ---- */

static enum status
copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in, out;
	enum status rc = OK;

	in = open(from, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (in < 0)
		return error(ERR_IO, "cannot read '%s': %s", from, strerror(errno));
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (out < 0) {
		rc = error(ERR_IO, "cannot write '%s': %s; check the disk", to, strerror(errno));
		close(in);
		return rc;
	}
	for (;;) {
		ssize_t n = read(in, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = error(ERR_IO, "cannot read '%s': %s", from, strerror(errno));
			break;
		}
		if (!n)
			break;
		if (write_all(out, buf, (size_t)n) != OK) {
			rc = error(ERR_IO, "cannot write '%s': %s; check the disk", to,
				   strerror(errno));
			break;
		}
	}
	if (close(out) && rc == OK)
		rc = error(ERR_IO, "cannot write '%s': %s; check the disk", to, strerror(errno));
	close(in);
	return rc;
}

static bool
same_dir(const char *a, const char *b)
{
	struct stat sa, sb;

	if (!strcmp(a, b))
		return true;
	return !stat(a, &sa) && !stat(b, &sb) && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

static bool
lstat_reg(const char *p)
{
	struct stat st;

	return !lstat(p, &st) && S_ISREG(st.st_mode);
}

static bool
lstat_dir(const char *p)
{
	struct stat st;

	return !lstat(p, &st) && S_ISDIR(st.st_mode);
}

/* Copy the GROUP/NAME.kmsg files of one group directory (regular files, nothing followed). */
static enum status
copy_group(const char *src, const char *dst)
{
	DIR *d = opendir(src);
	struct dirent *de;
	enum status rc = OK;
	bool made = false;

	if (!d)
		return error(ERR_IO, "cannot read '%s': %s", src, strerror(errno));
	while (rc == OK && (de = readdir(d))) {
		char *from, *to;

		if (!str_endswith(de->d_name, ".kmsg") || de->d_name[0] == '.')
			continue;
		from = path_join(src, de->d_name);
		if (lstat_reg(from)) {
			if (!made && (rc = mkdir_p(dst, 0755)) == OK)
				made = true;
			if (rc == OK) {
				to = path_join(dst, de->d_name);
				rc = copy_file(from, to);
				free(to);
			}
		}
		free(from);
	}
	closedir(d);
	return rc;
}

enum status
kmsg_write_slices(struct kmsg *k, const char *dest)
{
	DIR *d;
	struct dirent *de;
	enum status rc = OK;

	if (!k->dir || same_dir(k->dir, dest))
		return OK;
	d = opendir(k->dir);
	if (!d)
		return error(ERR_IO, "cannot read '%s': %s", k->dir, strerror(errno));
	while (rc == OK && (de = readdir(d))) {
		char *src, *dst;

		if (de->d_name[0] == '.')
			continue;
		src = path_join(k->dir, de->d_name);
		if (lstat_dir(src)) {
			dst = path_join(dest, de->d_name);
			rc = copy_group(src, dst);
			free(dst);
		}
		free(src);
	}
	closedir(d);
	if (rc != OK)
		return error_prefix(rc, "cannot copy the per-test kernel logs to '%s'", dest);
	return rc;
}
