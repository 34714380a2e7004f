/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "view/logring.h"

#include <stdlib.h>
#include <string.h>

#include "core/util.h"

void
logring_init(struct logring *r, size_t max_lines, size_t max_bytes)
{
	memset(r, 0, sizeof(*r));
	r->cap = max_lines ? max_lines : 1;
	r->max_bytes = max_bytes ? max_bytes : 1;
	r->v = xcalloc(r->cap, sizeof(*r->v));
}

void
logring_release(struct logring *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->v[(r->head + i) % r->cap].text);
	free(r->v);
	memset(r, 0, sizeof(*r));
}

static void
drop_oldest(struct logring *r)
{
	struct log_line *l = &r->v[r->head];

	r->bytes -= strlen(l->text) + 1;
	free(l->text);
	l->text = NULL;
	r->head = (r->head + 1) % r->cap;
	r->n--;
	r->dropped++;
}

void
logring_push(struct logring *r, const char *text, unsigned flags, int test, unsigned shard)
{
	size_t len = strlen(text);
	struct log_line *l;
	char *copy;

	if (len > LOGRING_LINE_MAX) {
		copy = xmalloc(LOGRING_LINE_MAX + 4);
		memcpy(copy, text, LOGRING_LINE_MAX);
		/* do not leave half a UTF-8 sequence before the dots */
		len = LOGRING_LINE_MAX;
		while (len > 0 && ((unsigned char)text[len] & 0xc0) == 0x80)
			len--;
		memcpy(copy + len, "...", 4);
		len += 3;
	} else {
		copy = xstrdup(text);
	}
	while (r->n && (r->n == r->cap || r->bytes + len + 1 > r->max_bytes))
		drop_oldest(r);
	l = &r->v[(r->head + r->n) % r->cap];
	l->text = copy;
	l->flags = flags;
	l->test = test;
	l->shard = shard;
	l->seq = r->next_seq++;
	r->n++;
	r->bytes += len + 1;
}

const struct log_line *
logring_get(const struct logring *r, size_t i)
{
	if (i >= r->n)
		return NULL;
	return &r->v[(r->head + i) % r->cap];
}

size_t
logring_index_of(const struct logring *r, uint64_t seq)
{
	uint64_t first = r->next_seq - r->n;

	if (seq < first || seq >= r->next_seq)
		return (size_t)-1;
	return (size_t)(seq - first);
}
