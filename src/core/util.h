/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Small helpers every module uses: allocation, growing strings, string
 * vectors, sizes and durations, and shell quoting for display.
 *
 * Allocation: x*alloc() never return NULL. Running out of memory is the one
 * failure that is not passed up as ERR_NOMEM: it runs the fatal hook (which
 * restores the terminal), prints "fswb: out of memory" and exits with 3.
 */
#ifndef FSWB_CORE_UTIL_H
#define FSWB_CORE_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/status.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Grow *arr (of *alloc elements of size sz) to hold at least n elements. */
#define ALLOC_GROW(arr, n, alloc)                                             \
	do {                                                                  \
		if ((size_t)(n) > (alloc)) {                                  \
			size_t new_alloc_ = (alloc) ? (alloc)*2 : 8;          \
			while (new_alloc_ < (size_t)(n))                      \
				new_alloc_ *= 2;                              \
			(arr) = xrealloc((arr), new_alloc_ * sizeof(*(arr))); \
			(alloc) = new_alloc_;                                 \
		}                                                             \
	} while (0)

/*
 * A growing, always NUL-terminated string. STRBUF_INIT or strbuf_init();
 * strbuf_release() frees and leaves it empty and reusable.
 */
struct strbuf {
	char *buf; /* never NULL after init: "" when empty */
	size_t len;
	size_t alloc;
};

#define STRBUF_INIT                                        \
	{                                                  \
		.buf = strbuf_empty_, .len = 0, .alloc = 0 \
	}
extern char strbuf_empty_[1];

void strbuf_init(struct strbuf *sb);
void strbuf_release(struct strbuf *sb);
void strbuf_reset(struct strbuf *sb);
void strbuf_grow(struct strbuf *sb, size_t extra);
void strbuf_add(struct strbuf *sb, const void *data, size_t len);
void strbuf_adds(struct strbuf *sb, const char *s);
void strbuf_addch(struct strbuf *sb, int c);
/* Code point cp (at most 0x10ffff; the caller rejects invalid ones) as UTF-8. */
void strbuf_add_utf8(struct strbuf *sb, unsigned long cp);
void strbuf_addf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void strbuf_setlen(struct strbuf *sb, size_t len);
/* Drop the first n bytes (those written out of a queue). */
void strbuf_drop_front(struct strbuf *sb, size_t n);
/* Hand the buffer to the caller (free() it); sb is left empty. */
char *strbuf_detach(struct strbuf *sb);

/*
 * A NULL-terminated vector of owned strings, usable directly as an argv.
 * STRVEC_INIT or strvec_init(); strvec_clear() frees everything.
 */
struct strvec {
	char **v; /* never NULL after init: { NULL } when empty */
	size_t n;
	size_t alloc;
};

#define STRVEC_INIT                                    \
	{                                              \
		.v = strvec_empty_, .n = 0, .alloc = 0 \
	}
extern char *strvec_empty_[1];

void strvec_init(struct strvec *sv);
void strvec_clear(struct strvec *sv);
void strvec_push(struct strvec *sv, const char *s);
/* Sort the strings (strcmp order). */
void strvec_sort(struct strvec *sv);
void strvec_pushf(struct strvec *sv, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void strvec_pushv(struct strvec *sv, const char *const *v);
void strvec_copy(struct strvec *dst, const struct strvec *src);
bool strvec_contains(const struct strvec *sv, const char *s);
/* Split s at any of the characters in seps, dropping empty fields. */
void strvec_split(struct strvec *sv, const char *s, const char *seps);
/* Join with sep into a new string (free() it). */
char *strvec_join(const struct strvec *sv, const char *sep);

bool str_startswith(const char *s, const char *prefix);
bool str_endswith(const char *s, const char *suffix);
/* Strip leading and trailing white space in place; returns s advanced. */
char *str_trim(char *s);

/*
 * Sizes as people write them: "512", "64K", "5G", "2GiB", "1.5T" (powers of
 * 1024; a bare number is bytes). ERR_INVALID with a message naming the text
 * on anything else.
 */
enum status parse_size(const char *text, uint64_t *bytes);
/* "5 GiB", "512 MiB", "1.5 GiB", "12 KiB", "7 B" into buf. */
const char *format_size(uint64_t bytes, char *buf, size_t len);
/* "0s", "42s", "3m05s", "1h02m" into buf. */
const char *format_duration(double seconds, char *buf, size_t len);

/*
 * Quote s for a POSIX shell, appending to sb: plain words stay as they are,
 * anything else goes in single quotes with embedded ones as '\''.
 */
void sq_quote(struct strbuf *sb, const char *s);
/* The argv as one shell-safe command line (for display and docs). */
void sq_quote_argv(struct strbuf *sb, const char *const *argv);

/* Levenshtein distance, for "did you mean ...?" suggestions. */
size_t edit_distance(const char *a, const char *b);
/*
 * The candidates close to word, closest first (ties in the order given), at
 * most max of them, in out; how many. Close: an edit distance of at most a
 * third of word's length plus one ("ext5" for "ext4", not "nosuchfs" for
 * "btrfs"), or word (2 characters or more) is the candidate's start (the
 * closest of all).
 */
size_t close_matches(const char *word, const char *const *candidates, size_t n, const char **out,
		     size_t max);
/* The candidate closest to word (see close_matches), or NULL when none is close. */
const char *closest_match(const char *word, const char *const *candidates, size_t n);

/*
 * UTF-8: the length of the valid sequence at p (a byte >= 0x80, end the
 * end of the text), or 0 when it is not one (overlong forms, surrogates and
 * U+FFFE/U+FFFF count as invalid: XML refuses them); and a copy of s with
 * every byte that is not valid UTF-8 made '?' (free() it).
 */
size_t utf8_len(const unsigned char *p, const unsigned char *end);
char *utf8_clean(const char *s);

/*
 * The one filter for text from a test machine or an imported result on its
 * way to a terminal: valid UTF-8 stays, tab and newline stay; every other
 * C0 control, DEL and ESC becomes caret notation ("^[", "^M", "^?"), a C1
 * control (U+0080..U+009F) and every byte that is not valid UTF-8 become
 * '?'. So no escape sequence of any kind reaches the terminal.
 * term_is_control() says whether a code point is one the filter replaces
 * (tab and newline included: callers that lay text out treat those).
 */
bool term_is_control(long cp);
void strbuf_add_term_clean(struct strbuf *sb, const char *s, size_t len);
char *term_clean(const char *s);
/* printf to stream, the formatted text through the filter. */
int term_fprintf(FILE *stream, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * The value of KEY= in os-release text (/etc/os-release's format), without
 * its quotes; NULL when the key is absent. free() it.
 */
char *os_release_value(const char *text, const char *key);

/*
 * Lines out of a byte stream (a child's output, a guest's console), each
 * at most max bytes: a longer line is handed over cut at max (cut is true)
 * as soon as bytes beyond max are there, and the rest of it up to its
 * newline is dropped; a line of exactly max bytes is whole. The newline is
 * not part of the line; with cr_ends a '\r' ends a line too (progress
 * output). fn gets the line NUL-terminated in a buffer it may change.
 *
 *	struct line_asm la;
 *	line_asm_init(&la, 4096, false);
 *	line_asm_feed(&la, buf, n, on_line, data);   as often as bytes come
 *	line_asm_finish(&la, on_line, data);         the last line without a newline
 *	line_asm_release(&la);
 *
 * la.line holds the line so far, for a reader that looks at it early.
 */
struct line_asm {
	struct strbuf line;
	size_t max;
	bool cr_ends;
	bool discarding; /* dropping the rest of a cut line */
};

typedef void line_asm_fn(void *data, char *line, size_t len, bool cut);

void line_asm_init(struct line_asm *la, size_t max, bool cr_ends);
void line_asm_release(struct line_asm *la);
void line_asm_feed(struct line_asm *la, const char *buf, size_t len, line_asm_fn *fn, void *data);
void line_asm_finish(struct line_asm *la, line_asm_fn *fn, void *data);
/* Drop a partial line (a new stream begins). */
void line_asm_reset(struct line_asm *la);

#endif
