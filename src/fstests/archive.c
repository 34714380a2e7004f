/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "fstests/archive.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "core/paths.h"

#define BLOCK	     512
#define META_MAX     65536 /* a GNU long name or a pax header */
#define STREAM_RATIO 4	   /* the decompressed stream may pass max_bytes this many times */

struct tar {
	gzFile gz;
	int destfd;
	uint64_t pos, stream_max, max_bytes;
	unsigned members;
	struct archive_report *r;
	char *long_name; /* from a GNU 'L' member or a pax path, for the next member */
	uint64_t pax_size;
	bool has_pax_size;
};

void
archive_report_init(struct archive_report *r)
{
	memset(r, 0, sizeof(*r));
	strvec_init(&r->skipped);
}

void
archive_report_release(struct archive_report *r)
{
	strvec_clear(&r->skipped);
	free(r->stopped);
	archive_report_init(r);
}

char *
archive_report_text(const struct archive_report *r)
{
	struct strbuf sb = STRBUF_INIT;
	char *clean;

	if (r->nskipped) {
		strbuf_addf(&sb, "%zu member%s of the results archive left out:", r->nskipped,
			    r->nskipped == 1 ? "" : "s");
		for (size_t i = 0; i < r->skipped.n; i++)
			strbuf_addf(&sb, "%s %s", i ? ";" : "", r->skipped.v[i]);
		if (r->nskipped > r->skipped.n)
			strbuf_addf(&sb, "; and %zu more", r->nskipped - r->skipped.n);
	}
	if (r->stopped)
		strbuf_addf(&sb, "%s%s", sb.len ? "; " : "", r->stopped);
	clean = term_clean(sb.buf ? sb.buf : "");
	strbuf_release(&sb);
	return clean;
}

static void
skip_note(struct tar *t, const char *name, const char *why)
{
	t->r->nskipped++;
	if (t->r->skipped.n < ARCHIVE_NAMED_MAX)
		strvec_pushf(&t->r->skipped, "'%.200s' (%s)", name, why);
}

/*
 * Exactly n bytes, or fewer at the end of the stream; -1 on a read error,
 * or when the decompressed stream would pass its cap (a gzip bomb: then
 * the report says the unpacking stopped).
 */
static ssize_t
read_full(struct tar *t, void *buf, size_t n)
{
	size_t got = 0;

	if (n > t->stream_max - t->pos) {
		if (!t->r->stopped) {
			char cap[32];

			format_size(t->stream_max, cap, sizeof(cap));
			t->r->stopped = xasprintf("the archive unpacks to more than %s: the rest "
						  "was left out",
						  cap);
		}
		return -1;
	}
	while (got < n) {
		int k = gzread(t->gz, (char *)buf + got, (unsigned)(n - got));

		if (k < 0)
			return -1;
		if (k == 0)
			break;
		got += (size_t)k;
	}
	t->pos += got;
	return (ssize_t)got;
}

/* A short read: the archive is damaged, unless a cap stopped the reading. */
static enum status
damaged(struct tar *t, const char *what)
{
	int zerr = 0;
	const char *zmsg = gzerror(t->gz, &zerr);

	if (t->r->stopped)
		return OK;
	return error(ERR_PARSE, "the results archive is damaged at byte %llu: %s%s%s",
		     (unsigned long long)t->pos, what, zerr < 0 ? ": " : "", zerr < 0 ? zmsg : "");
}

/* Read and drop n bytes (a member's data left out, its padding). */
static enum status
skip_bytes(struct tar *t, uint64_t n)
{
	char buf[8192];

	while (n) {
		size_t k = n < sizeof(buf) ? (size_t)n : sizeof(buf);

		if (read_full(t, buf, k) != (ssize_t)k)
			return damaged(t, "it ends inside a member");
		n -= k;
	}
	return OK;
}

static uint64_t
padding(uint64_t size)
{
	return (BLOCK - size % BLOCK) % BLOCK;
}

/* A member's data and its padding, left out. */
static enum status
skip_member(struct tar *t, uint64_t size)
{
	enum status rc = skip_bytes(t, size);

	return rc == OK ? skip_bytes(t, padding(size)) : rc;
}

/* A numeric header field: octal, or GNU base-256 (high bit of the first byte). */
static bool
parse_num(const unsigned char *f, size_t n, uint64_t *out)
{
	uint64_t v = 0;
	size_t i = 0;

	if (f[0] & 0x80) {
		if (f[0] != 0x80)
			return false; /* negative, or more than 64 bits */
		for (i = 1; i < n; i++) {
			if (v >> 56)
				return false;
			v = v << 8 | f[i];
		}
		*out = v;
		return true;
	}
	while (i < n && f[i] == ' ')
		i++;
	for (; i < n && f[i] >= '0' && f[i] <= '7'; i++) {
		if (v >> 60)
			return false;
		v = v << 3 | (uint64_t)(f[i] - '0');
	}
	if (i < n && f[i] != ' ' && f[i] != '\0')
		return false;
	*out = v;
	return true;
}

static bool
checksum_ok(const unsigned char *h)
{
	uint64_t want;
	unsigned sum = 0;

	if (!parse_num(h + 148, 8, &want))
		return false;
	for (size_t i = 0; i < BLOCK; i++)
		sum += i >= 148 && i < 156 ? ' ' : h[i];
	return sum == want;
}

static char *
field_str(const unsigned char *f, size_t n)
{
	return xstrndup((const char *)f, strnlen((const char *)f, n));
}

/*
 * The member's name made relative ("./generic/001.full" -> "generic/001.full",
 * no trailing '/'); NULL with why set when it is not one fswb writes, and
 * NULL with why NULL for the top directory itself.
 */
static char *
clean_name(const char *name, const char **why)
{
	const char *p = name;
	size_t len;
	char *out;

	*why = NULL;
	if (*p == '/') {
		*why = "an absolute name";
		return NULL;
	}
	while (p[0] == '.' && p[1] == '/')
		p += 2;
	len = strlen(p);
	while (len && p[len - 1] == '/')
		len--;
	if (!len || (len == 1 && p[0] == '.'))
		return NULL;
	out = xstrndup(p, len);
	for (const char *c = out; *c; c++) {
		if ((unsigned char)*c < 0x20 || *c == 0x7f) {
			*why = "a name with control characters";
			break;
		}
	}
	for (const char *c = out; !*why && *c;) {
		size_t n = strcspn(c, "/");

		if (!n || n > 255 || (n == 1 && c[0] == '.') || (n == 2 && !strncmp(c, "..", 2)))
			*why = n > 255 ? "a name part longer than 255 bytes"
				       : "a name with '..' or '//'";
		c += n;
		if (*c)
			c++;
	}
	if (*why) {
		free(out);
		return NULL;
	}
	return out;
}

/* The data of a GNU long name or pax header member, NUL-terminated. */
static enum status
read_meta(struct tar *t, uint64_t size, char **out)
{
	char *buf;

	if (size > META_MAX)
		return damaged(t, "a long name or pax header larger than 64 KiB");
	buf = xmalloc((size_t)size + 1);
	if (read_full(t, buf, (size_t)size) != (ssize_t)size) {
		free(buf);
		return damaged(t, "it ends inside a member");
	}
	buf[size] = '\0';
	*out = buf;
	return skip_bytes(t, padding(size));
}

/* pax records "LEN key=value\n": path and size are the ones fswb takes. */
static void
parse_pax(struct tar *t, const char *p, size_t len)
{
	const char *end = p + len;

	while (p < end) {
		char *eq, *rec_end;
		unsigned long n = strtoul(p, &eq, 10);

		if (!n || n > (size_t)(end - p) || *eq != ' ')
			return;
		rec_end = (char *)p + n;
		if (rec_end[-1] != '\n')
			return;
		eq++;
		if (!strncmp(eq, "path=", 5)) {
			free(t->long_name);
			t->long_name = xstrndup(eq + 5, (size_t)(rec_end - 1 - (eq + 5)));
		} else if (!strncmp(eq, "size=", 5)) {
			char *stop;
			unsigned long long v = strtoull(eq + 5, &stop, 10);

			if (stop == rec_end - 1 && eq[5] >= '0' && eq[5] <= '9') {
				t->pax_size = v;
				t->has_pax_size = true;
			}
		}
		p = rec_end;
	}
}

/* A regular member's data into a new file. */
static enum status
write_member(struct tar *t, const char *name, uint64_t size, uint64_t mode)
{
	char buf[65536];
	uint64_t left = size;
	enum status rc = OK;
	int fd;

	if (mode & 07000)
		skip_note(t, name, "setuid, setgid or sticky bits dropped");
	fd = openat_beneath(t->destfd, name, O_WRONLY | O_CREAT | O_EXCL, mode & 0111 ? 0755 : 0644,
			    true);
	if (fd < 0) {
		if (errno == EEXIST || errno == ELOOP || errno == ENOTDIR || errno == EISDIR) {
			skip_note(t, name,
				  errno == EEXIST ? "already there" : "a non-directory on its way");
			return skip_member(t, size);
		}
		return error(ERR_IO, "cannot create '%s' from the results archive: %s", name,
			     strerror(errno));
	}
	while (left && rc == OK) {
		size_t k = left < sizeof(buf) ? (size_t)left : sizeof(buf);

		if (read_full(t, buf, k) != (ssize_t)k) {
			rc = damaged(t, "it ends inside a member");
			break;
		}
		left -= k;
		if (!write_fd_all(fd, buf, k))
			rc = error(ERR_IO, "cannot write '%s' from the results archive: %s", name,
				   strerror(errno));
	}
	if (close(fd) && rc == OK)
		rc = error(ERR_IO, "cannot write '%s' from the results archive: %s", name,
			   strerror(errno));
	if (rc != OK || t->r->stopped) {
		unlinkat(t->destfd, name, 0); /* only what was made here: O_EXCL */
		return rc;
	}
	t->r->files++;
	t->r->bytes += size;
	return skip_bytes(t, padding(size));
}

static enum status
make_dir(struct tar *t, const char *name)
{
	int fd = openat_beneath(t->destfd, name, O_RDONLY | O_DIRECTORY, 0, true);

	if (fd < 0) {
		if (errno == ELOOP || errno == ENOTDIR || errno == EEXIST) {
			skip_note(t, name, "a non-directory is there");
			return OK;
		}
		return error(ERR_IO, "cannot make the directory '%s' from the results archive: %s",
			     name, strerror(errno));
	}
	close(fd);
	t->r->dirs++;
	return OK;
}

static const char *
special_kind(char type)
{
	switch (type) {
	case '1':
		return "a hard link";
	case '2':
		return "a symlink";
	case '3':
		return "a character device";
	case '4':
		return "a block device";
	case '6':
		return "a FIFO";
	case 'S':
		return "a sparse file";
	default:
		return "a special member";
	}
}

/* One member from its header h. */
static enum status
member(struct tar *t, const unsigned char *h)
{
	char type = (char)h[156];
	uint64_t size, mode;
	char *raw, *name;
	const char *why;
	enum status rc;

	if (!parse_num(h + 124, 12, &size) || !parse_num(h + 100, 8, &mode))
		return damaged(t, "a header with a bad size or mode");
	if (type == 'L' || type == 'x') {
		char *meta = NULL;

		rc = read_meta(t, size, &meta);
		if (rc != OK || !meta)
			return rc;
		if (type == 'L') {
			free(t->long_name);
			t->long_name = meta;
		} else {
			parse_pax(t, meta, (size_t)size);
			free(meta);
		}
		return OK;
	}
	if (type == 'K' || type == 'g')
		return skip_member(t, size);
	if (t->has_pax_size)
		size = t->pax_size;
	if (t->long_name) {
		raw = t->long_name;
		t->long_name = NULL;
	} else if (!memcmp(h + 257, "ustar", 5) && h[345]) {
		char *prefix = field_str(h + 345, 155), *base = field_str(h, 100);

		raw = xasprintf("%s/%s", prefix, base);
		free(prefix);
		free(base);
	} else {
		raw = field_str(h, 100);
	}
	t->has_pax_size = false;
	if (++t->members > ARCHIVE_MEMBERS_MAX) {
		free(raw);
		t->r->stopped = xasprintf("the archive holds more than %d members: the rest was "
					  "left out",
					  ARCHIVE_MEMBERS_MAX);
		return OK;
	}
	name = clean_name(raw, &why);
	if (!name || (type != '0' && type != '\0' && type != '7' && type != '5')) {
		if (why || name)
			skip_note(t, name ? name : raw, why ? why : special_kind(type));
		rc = skip_member(t, size);
	} else if (type == '5') {
		rc = make_dir(t, name);
		if (rc == OK)
			rc = skip_member(t, size); /* a directory's data (GNU dumpdir) */
	} else if (size > t->max_bytes - t->r->bytes) {
		char cap[32], *why_cap;

		format_size(t->max_bytes, cap, sizeof(cap));
		why_cap =
			xasprintf("it would take the unpacked results past %s: --max-results", cap);
		skip_note(t, name, why_cap);
		free(why_cap);
		rc = skip_member(t, size);
	} else {
		rc = write_member(t, name, size, mode);
	}
	free(name);
	free(raw);
	return rc;
}

enum status
archive_unpack_fd(int fd, int destfd, uint64_t max_bytes, struct archive_report *r)
{
	struct tar t = { .destfd = destfd, .max_bytes = max_bytes, .r = r };
	unsigned char h[BLOCK];
	enum status rc = OK;
	int dfd = dup(fd);

	t.stream_max =
		max_bytes > UINT64_MAX / STREAM_RATIO ? UINT64_MAX : max_bytes * STREAM_RATIO;
	if (dfd < 0 || !(t.gz = gzdopen(dfd, "rb"))) {
		if (dfd >= 0)
			close(dfd);
		return error(ERR_IO, "cannot read the results archive: %s", strerror(errno));
	}
	gzbuffer(t.gz, 65536);
	while (rc == OK && !r->stopped) {
		ssize_t n = read_full(&t, h, BLOCK);
		bool zero = true;

		if (n == 0)
			break;
		if (n != BLOCK) {
			rc = n < 0 ? damaged(&t, "cannot decompress it")
				   : damaged(&t, "a short header");
			break;
		}
		for (size_t i = 0; i < BLOCK && zero; i++)
			zero = !h[i];
		if (zero)
			break; /* the end-of-archive blocks */
		if (!checksum_ok(h)) {
			rc = damaged(&t, "not a tar header (bad checksum)");
			break;
		}
		rc = member(&t, h);
	}
	free(t.long_name);
	gzclose(t.gz);
	return rc;
}

enum status
archive_unpack(const char *path, const char *dest, uint64_t max_bytes, struct archive_report *r)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	int dfd;
	struct stat st;
	enum status rc;

	if (fd < 0)
		return error(ERR_IO, "cannot open the results archive '%s': %s", path,
			     strerror(errno));
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return error(ERR_INVALID, "'%s' is not a regular file", path);
	}
	dfd = open(dest, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0) {
		rc = error(ERR_IO, "cannot open '%s': %s", dest, strerror(errno));
		close(fd);
		return rc;
	}
	rc = archive_unpack_fd(fd, dfd, max_bytes, r);
	close(dfd);
	close(fd);
	return rc;
}
