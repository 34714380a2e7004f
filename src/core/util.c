/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "core/util.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char strbuf_empty_[1];
char *strvec_empty_[1];

static _Noreturn void
out_of_memory(void)
{
	run_fatal_hook();
	fputs("fswb: out of memory\n", stderr);
	exit(3);
}

void *
xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		out_of_memory();
	return p;
}

void *
xcalloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);

	if (!p)
		out_of_memory();
	return p;
}

void *
xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		out_of_memory();
	return p;
}

char *
xstrdup(const char *s)
{
	char *p = strdup(s);

	if (!p)
		out_of_memory();
	return p;
}

char *
xstrndup(const char *s, size_t n)
{
	char *p = strndup(s, n);

	if (!p)
		out_of_memory();
	return p;
}

char *
xasprintf(const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		BUG("bad format '%s'", fmt);
	strbuf_grow(&sb, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(sb.buf, (size_t)n + 1, fmt, ap);
	va_end(ap);
	sb.len = (size_t)n;
	return strbuf_detach(&sb);
}

void
strbuf_init(struct strbuf *sb)
{
	sb->buf = strbuf_empty_;
	sb->len = 0;
	sb->alloc = 0;
}

void
strbuf_release(struct strbuf *sb)
{
	if (sb->alloc)
		free(sb->buf);
	strbuf_init(sb);
}

void
strbuf_reset(struct strbuf *sb)
{
	strbuf_setlen(sb, 0);
}

void
strbuf_grow(struct strbuf *sb, size_t extra)
{
	size_t want = sb->len + extra + 1;

	if (want <= sb->alloc)
		return;
	if (!sb->alloc)
		sb->buf = NULL;
	ALLOC_GROW(sb->buf, want, sb->alloc);
	if (sb->len == 0)
		sb->buf[0] = '\0';
}

void
strbuf_setlen(struct strbuf *sb, size_t len)
{
	if (len > sb->len)
		BUG("strbuf_setlen beyond the end");
	sb->len = len;
	if (sb->alloc)
		sb->buf[len] = '\0';
}

void
strbuf_drop_front(struct strbuf *sb, size_t n)
{
	if (n > sb->len)
		BUG("strbuf_drop_front beyond the end");
	memmove(sb->buf, sb->buf + n, sb->len - n);
	strbuf_setlen(sb, sb->len - n);
}

void
strbuf_add(struct strbuf *sb, const void *data, size_t len)
{
	if (!len)
		return;
	strbuf_grow(sb, len);
	memcpy(sb->buf + sb->len, data, len);
	sb->len += len;
	sb->buf[sb->len] = '\0';
}

void
strbuf_adds(struct strbuf *sb, const char *s)
{
	strbuf_add(sb, s, strlen(s));
}

void
strbuf_addch(struct strbuf *sb, int c)
{
	char ch = (char)c;

	strbuf_add(sb, &ch, 1);
}

void
strbuf_add_utf8(struct strbuf *sb, unsigned long cp)
{
	if (cp < 0x80) {
		strbuf_addch(sb, (int)cp);
	} else if (cp < 0x800) {
		strbuf_addch(sb, (int)(0xc0 | (cp >> 6)));
		strbuf_addch(sb, (int)(0x80 | (cp & 0x3f)));
	} else if (cp < 0x10000) {
		strbuf_addch(sb, (int)(0xe0 | (cp >> 12)));
		strbuf_addch(sb, (int)(0x80 | ((cp >> 6) & 0x3f)));
		strbuf_addch(sb, (int)(0x80 | (cp & 0x3f)));
	} else {
		strbuf_addch(sb, (int)(0xf0 | (cp >> 18)));
		strbuf_addch(sb, (int)(0x80 | ((cp >> 12) & 0x3f)));
		strbuf_addch(sb, (int)(0x80 | ((cp >> 6) & 0x3f)));
		strbuf_addch(sb, (int)(0x80 | (cp & 0x3f)));
	}
}

void
strbuf_addf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		BUG("bad format '%s'", fmt);
	strbuf_grow(sb, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	sb->len += (size_t)n;
}

char *
strbuf_detach(struct strbuf *sb)
{
	char *p = sb->alloc ? sb->buf : xstrdup("");

	strbuf_init(sb);
	return p;
}

void
strvec_init(struct strvec *sv)
{
	sv->v = strvec_empty_;
	sv->n = 0;
	sv->alloc = 0;
}

void
strvec_clear(struct strvec *sv)
{
	for (size_t i = 0; i < sv->n; i++)
		free(sv->v[i]);
	if (sv->alloc)
		free(sv->v);
	strvec_init(sv);
}

void
strvec_push(struct strvec *sv, const char *s)
{
	if (!sv->alloc)
		sv->v = NULL;
	ALLOC_GROW(sv->v, sv->n + 2, sv->alloc);
	sv->v[sv->n++] = xstrdup(s);
	sv->v[sv->n] = NULL;
}

void
strvec_pushf(struct strvec *sv, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	strbuf_grow(&sb, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(sb.buf, (size_t)n + 1, fmt, ap);
	va_end(ap);
	sb.len = (size_t)n;
	strvec_push(sv, sb.buf);
	strbuf_release(&sb);
}

void
strvec_pushv(struct strvec *sv, const char *const *v)
{
	for (; v && *v; v++)
		strvec_push(sv, *v);
}

void
strvec_copy(struct strvec *dst, const struct strvec *src)
{
	strvec_clear(dst);
	strvec_pushv(dst, (const char *const *)src->v);
}

bool
strvec_contains(const struct strvec *sv, const char *s)
{
	for (size_t i = 0; i < sv->n; i++)
		if (!strcmp(sv->v[i], s))
			return true;
	return false;
}

void
strvec_split(struct strvec *sv, const char *s, const char *seps)
{
	while (*s) {
		size_t n = strcspn(s, seps);

		if (n) {
			char *field = xstrndup(s, n);

			strvec_push(sv, field);
			free(field);
		}
		s += n;
		if (*s)
			s++;
	}
}

char *
strvec_join(const struct strvec *sv, const char *sep)
{
	struct strbuf sb = STRBUF_INIT;

	for (size_t i = 0; i < sv->n; i++) {
		if (i)
			strbuf_adds(&sb, sep);
		strbuf_adds(&sb, sv->v[i]);
	}
	return strbuf_detach(&sb);
}

bool
str_startswith(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

bool
str_endswith(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

char *
str_trim(char *s)
{
	size_t n;

	while (isspace((unsigned char)*s))
		s++;
	n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	return s;
}

enum status
parse_size(const char *text, uint64_t *bytes)
{
	static const char units[] = "BKMGTP";
	const char *p, *u;
	char *end;
	double v;
	int shift;

	errno = 0;
	p = text;
	while (isspace((unsigned char)*p))
		p++;
	if (!isdigit((unsigned char)*p))
		goto bad;
	v = strtod(p, &end);
	if (errno || end == p || v < 0)
		goto bad;
	while (isspace((unsigned char)*end))
		end++;
	if (!*end) {
		shift = 0;
	} else {
		u = strchr(units, toupper((unsigned char)*end));
		if (!u || !*u)
			goto bad;
		shift = (int)(u - units) * 10;
		end++;
		if (*end == 'i' || *end == 'I')
			end++;
		if ((*end == 'B' || *end == 'b') && shift)
			end++;
		while (isspace((unsigned char)*end))
			end++;
		if (*end)
			goto bad;
	}
	v = ldexp(v, shift);
	if (v >= 18446744073709551616.0)
		goto bad;
	*bytes = (uint64_t)v;
	return OK;
bad:
	return error(ERR_INVALID, "'%s' is not a size; write it like 512M, 5G or 2GiB", text);
}

const char *
format_size(uint64_t bytes, char *buf, size_t len)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	double v = (double)bytes;
	size_t u = 0;

	while (v >= 1024 && u + 1 < ARRAY_SIZE(units)) {
		v /= 1024;
		u++;
	}
	if (u == 0 || v == floor(v))
		snprintf(buf, len, "%.0f %s", v, units[u]);
	else
		snprintf(buf, len, "%.1f %s", v, units[u]);
	return buf;
}

const char *
format_duration(double seconds, char *buf, size_t len)
{
	long s = seconds < 0 ? 0 : (long)(seconds + 0.5);

	if (s < 60)
		snprintf(buf, len, "%lds", s);
	else if (s < 3600)
		snprintf(buf, len, "%ldm%02lds", s / 60, s % 60);
	else
		snprintf(buf, len, "%ldh%02ldm", s / 3600, (s % 3600) / 60);
	return buf;
}

static bool
is_shell_safe(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("-_./:=,+@%", *s))
			return false;
	return true;
}

void
sq_quote(struct strbuf *sb, const char *s)
{
	if (is_shell_safe(s)) {
		strbuf_adds(sb, s);
		return;
	}
	strbuf_addch(sb, '\'');
	for (; *s; s++) {
		if (*s == '\'')
			strbuf_adds(sb, "'\\''");
		else
			strbuf_addch(sb, *s);
	}
	strbuf_addch(sb, '\'');
}

void
sq_quote_argv(struct strbuf *sb, const char *const *argv)
{
	for (size_t i = 0; argv[i]; i++) {
		if (i)
			strbuf_addch(sb, ' ');
		sq_quote(sb, argv[i]);
	}
}

size_t
edit_distance(const char *a, const char *b)
{
	size_t n = strlen(a), m = strlen(b);
	size_t *row = xcalloc(m + 1, sizeof(*row));
	size_t result;

	for (size_t j = 0; j <= m; j++)
		row[j] = j;
	for (size_t i = 1; i <= n; i++) {
		size_t diag = row[0];

		row[0] = i;
		for (size_t j = 1; j <= m; j++) {
			size_t up = row[j];
			size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
			size_t best = diag + cost;

			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			if (up + 1 < best)
				best = up + 1;
			row[j] = best;
			diag = up;
		}
	}
	result = row[m];
	free(row);
	return result;
}

/*
 * How far candidate is from word for a suggestion: 0 when word (2 characters
 * or more) is its start, else the edit distance; SIZE_MAX when not close.
 */
static size_t
suggest_distance(const char *word, const char *candidate)
{
	size_t len = strlen(word), d;

	if (len >= 2 && !strncmp(candidate, word, len))
		return 0;
	d = edit_distance(word, candidate);
	return d <= len / 3 + 1 ? d : SIZE_MAX;
}

size_t
close_matches(const char *word, const char *const *candidates, size_t n, const char **out,
	      size_t max)
{
	size_t *dist = max ? xcalloc(max, sizeof(*dist)) : NULL;
	size_t found = 0;

	for (size_t i = 0; i < n && max; i++) {
		size_t d = suggest_distance(word, candidates[i]), at;

		if (d == SIZE_MAX)
			continue;
		for (at = found; at > 0 && dist[at - 1] > d; at--)
			;
		if (at == max)
			continue;
		if (found < max)
			found++;
		memmove(&out[at + 1], &out[at], (found - 1 - at) * sizeof(*out));
		memmove(&dist[at + 1], &dist[at], (found - 1 - at) * sizeof(*dist));
		out[at] = candidates[i];
		dist[at] = d;
	}
	free(dist);
	return found;
}

const char *
closest_match(const char *word, const char *const *candidates, size_t n)
{
	const char *best;

	return close_matches(word, candidates, n, &best, 1) ? best : NULL;
}

/* The length of the valid UTF-8 sequence at p (a byte >= 0x80), or 0. */
size_t
utf8_len(const unsigned char *p, const unsigned char *end)
{
	unsigned c = *p;
	size_t need = c >= 0xf0 && c < 0xf5   ? 4
		      : c >= 0xe0 && c < 0xf0 ? 3
		      : c >= 0xc2 && c < 0xe0 ? 2
					      : 0;
	bool ok = need && (size_t)(end - p) >= need;

	for (size_t i = 1; ok && i < need; i++)
		ok = (p[i] & 0xc0) == 0x80;
	if (ok && need == 3 && c == 0xe0 && p[1] < 0xa0)
		ok = false; /* overlong */
	if (ok && need == 3 && c == 0xed && p[1] >= 0xa0)
		ok = false; /* surrogates */
	if (ok && need == 4 && ((c == 0xf0 && p[1] < 0x90) || (c == 0xf4 && p[1] >= 0x90)))
		ok = false;
	if (ok && need == 3 && c == 0xef && p[1] == 0xbf && (p[2] == 0xbe || p[2] == 0xbf))
		ok = false; /* U+FFFE, U+FFFF: not characters XML allows */
	return ok ? need : 0;
}

/* s with every byte that is not valid UTF-8 made '?' (free() it). */
char *
utf8_clean(const char *s)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + strlen(s);
	struct strbuf sb = STRBUF_INIT;

	while (p < end) {
		size_t n = *p < 0x80 ? 1 : utf8_len(p, end);

		if (n)
			strbuf_add(&sb, p, n);
		else
			strbuf_addch(&sb, '?');
		p += n ? n : 1;
	}
	return strbuf_detach(&sb);
}

bool
term_is_control(long cp)
{
	return cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0);
}

void
strbuf_add_term_clean(struct strbuf *sb, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + len;

	while (p < end) {
		size_t n = *p < 0x80 ? 1 : utf8_len(p, end);

		if (*p == '\t' || *p == '\n') {
			strbuf_addch(sb, *p);
		} else if (*p < 0x20 || *p == 0x7f) {
			strbuf_addch(sb, '^');
			strbuf_addch(sb, *p ^ 0x40);
		} else if (!n || (*p == 0xc2 && p[1] < 0xa0)) {
			/* not UTF-8, or a C1 control (U+0080..U+009F: 0xc2 0x80..0x9f) */
			strbuf_addch(sb, '?');
		} else {
			strbuf_add(sb, p, n);
		}
		p += n ? n : 1;
	}
}

char *
term_clean(const char *s)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_add_term_clean(&sb, s, strlen(s));
	return strbuf_detach(&sb);
}

int
term_fprintf(FILE *stream, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	char *text;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&text, fmt, ap);
	va_end(ap);
	if (n < 0)
		return n;
	strbuf_add_term_clean(&sb, text, (size_t)n);
	n = (int)fwrite(sb.buf, 1, sb.len, stream);
	free(text);
	strbuf_release(&sb);
	return n;
}

char *
os_release_value(const char *text, const char *key)
{
	size_t klen = strlen(key);

	for (const char *line = text, *end; *line; line = end ? end + 1 : line + strlen(line)) {
		size_t len;
		char *v;
		size_t vlen;

		end = strchr(line, '\n');
		len = end ? (size_t)(end - line) : strlen(line);
		if (len <= klen || strncmp(line, key, klen) || line[klen] != '=')
			continue;
		v = xstrndup(line + klen + 1, len - klen - 1);
		vlen = strlen(v);
		if (vlen >= 2 && (v[0] == '"' || v[0] == '\'') && v[vlen - 1] == v[0]) {
			memmove(v, v + 1, vlen - 2);
			v[vlen - 2] = '\0';
		}
		return v;
	}
	return NULL;
}

void
line_asm_init(struct line_asm *la, size_t max, bool cr_ends)
{
	strbuf_init(&la->line);
	la->max = max;
	la->cr_ends = cr_ends;
	la->discarding = false;
}

void
line_asm_release(struct line_asm *la)
{
	strbuf_release(&la->line);
}

static void
line_asm_hand(struct line_asm *la, line_asm_fn *fn, void *data, bool cut)
{
	fn(data, la->line.buf, la->line.len, cut);
	strbuf_reset(&la->line);
}

void
line_asm_feed(struct line_asm *la, const char *buf, size_t len, line_asm_fn *fn, void *data)
{
	while (len) {
		const char *end = memchr(buf, '\n', len);
		const char *cr =
			la->cr_ends ? memchr(buf, '\r', end ? (size_t)(end - buf) : len) : NULL;
		size_t seg;

		if (cr)
			end = cr;
		seg = end ? (size_t)(end - buf) : len;
		if (la->discarding) {
			la->discarding = !end;
		} else if (seg > la->max - la->line.len) {
			strbuf_add(&la->line, buf, la->max - la->line.len);
			line_asm_hand(la, fn, data, true);
			la->discarding = !end;
		} else {
			strbuf_add(&la->line, buf, seg);
			if (end)
				line_asm_hand(la, fn, data, false);
		}
		if (!end)
			break;
		buf = end + 1;
		len -= seg + 1;
	}
}

void
line_asm_reset(struct line_asm *la)
{
	strbuf_reset(&la->line);
	la->discarding = false;
}

void
line_asm_finish(struct line_asm *la, line_asm_fn *fn, void *data)
{
	if (la->line.len && !la->discarding)
		line_asm_hand(la, fn, data, false);
	line_asm_reset(la);
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void
strvec_sort(struct strvec *sv)
{
	if (sv->n > 1)
		qsort(sv->v, sv->n, sizeof(*sv->v), cmp_str);
}
