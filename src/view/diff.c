/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Myers' O(ND) diff, with the whole trace of V arrays kept to walk the
 * edit path back: step d keeps the diagonals -d-1..d+1 only, so the
 * memory is about D * D longs for D changes; beyond DIFF_MAX_CHANGES the
 * diff gives up on finesse and shows everything removed, then added.
 */
#include "view/diff.h"

#include <stdlib.h>
#include <string.h>

#define DIFF_MAX_CHANGES 1500

static void
split(const char *s, struct strvec *lines, bool *cut)
{
	const char *p = s;

	*cut = false;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);

		if (lines->n == DIFF_MAX_LINES) {
			*cut = true;
			break;
		}
		strvec_push(lines, "");
		free(lines->v[lines->n - 1]);
		lines->v[lines->n - 1] = xstrndup(p, n);
		if (!nl)
			break;
		p = nl + 1;
	}
}

/* ops: ' ' same, '-' from a, '+' from b; in order. */
struct edit {
	char op;
	size_t ai, bi;
};

struct edits {
	struct edit *v;
	size_t n, alloc;
};

static void
push(struct edits *e, char op, size_t ai, size_t bi)
{
	ALLOC_GROW(e->v, e->n + 1, e->alloc);
	e->v[e->n++] = (struct edit){ op, ai, bi };
}

static void
myers(char **a, size_t n, char **b, size_t m, struct edits *out)
{
	long max = (long)(n + m), off = max;
	long *v = xcalloc((size_t)(2 * max + 2), sizeof(long));
	long **trace = NULL;
	size_t ntrace = 0, talloc = 0;
	long d, k, x, y;
	bool done = false;
	struct edits rev = { 0 };

	if (n + m == 0) {
		free(v);
		return;
	}
	for (d = 0; d <= max && !done; d++) {
		if (d > DIFF_MAX_CHANGES)
			break;
		ALLOC_GROW(trace, ntrace + 1, talloc);
		/* only the diagonals -d-1..d+1 are read back (clamped to the array) */
		trace[ntrace] = xcalloc((size_t)(2 * d + 3), sizeof(long));
		for (long j = -d - 1; j <= d + 1; j++)
			if (off + j >= 0 && off + j < 2 * max + 2)
				trace[ntrace][j + d + 1] = v[off + j];
		ntrace++;
		for (k = -d; k <= d; k += 2) {
			if (k == -d || (k != d && v[off + k - 1] < v[off + k + 1]))
				x = v[off + k + 1];
			else
				x = v[off + k - 1] + 1;
			y = x - k;
			while (x < (long)n && y < (long)m && !strcmp(a[x], b[y])) {
				x++;
				y++;
			}
			v[off + k] = x;
			if (x >= (long)n && y >= (long)m) {
				done = true;
				break;
			}
		}
	}
	if (!done) {
		/* too many changes: everything removed, then everything added */
		for (size_t i = 0; i < n; i++)
			push(out, '-', i, 0);
		for (size_t i = 0; i < m; i++)
			push(out, '+', n, i);
		goto out;
	}
	/* walk back from (n, m) through the trace */
	x = (long)n;
	y = (long)m;
	for (d = (long)ntrace - 1; d >= 0; d--) {
		long *tv = trace[d] + d + 1, pk, px, py;

		k = x - y;
		if (k == -d || (k != d && tv[k - 1] < tv[k + 1]))
			pk = k + 1;
		else
			pk = k - 1;
		px = tv[pk];
		py = px - pk;
		while (x > px && y > py) {
			x--;
			y--;
			push(&rev, ' ', (size_t)x, (size_t)y);
		}
		if (d > 0) {
			if (x == px)
				push(&rev, '+', (size_t)x, (size_t)py);
			else
				push(&rev, '-', (size_t)px, (size_t)y);
		}
		x = px;
		y = py;
	}
	for (size_t i = rev.n; i > 0; i--)
		push(out, rev.v[i - 1].op, rev.v[i - 1].ai, rev.v[i - 1].bi);
out:
	for (size_t i = 0; i < ntrace; i++)
		free(trace[i]);
	free(trace);
	free(rev.v);
	free(v);
}

size_t
diff_unified(const char *a, const char *b, const char *a_name, const char *b_name, int context,
	     struct strvec *out)
{
	struct strvec la = STRVEC_INIT, lb = STRVEC_INIT;
	struct edits e = { 0 };
	bool cut_a, cut_b;
	size_t changes = 0, i = 0;

	split(a, &la, &cut_a);
	split(b, &lb, &cut_b);
	myers(la.v, la.n, lb.v, lb.n, &e);
	for (size_t k = 0; k < e.n; k++)
		if (e.v[k].op != ' ')
			changes++;
	if (!changes)
		goto out;
	strvec_pushf(out, "--- %s", a_name);
	strvec_pushf(out, "+++ %s", b_name);
	while (i < e.n) {
		size_t start, end, j, a0, b0, an = 0, bn = 0;

		/* the next change */
		while (i < e.n && e.v[i].op == ' ')
			i++;
		if (i == e.n)
			break;
		start = i >= (size_t)context ? i - (size_t)context : 0;
		/* extend while changes are closer than 2 * context */
		end = i;
		for (j = i; j < e.n; j++) {
			if (e.v[j].op != ' ') {
				end = j;
				continue;
			}
			if (j - end > (size_t)(2 * context))
				break;
		}
		end = end + (size_t)context + 1 < e.n ? end + (size_t)context + 1 : e.n;
		a0 = e.v[start].ai;
		b0 = e.v[start].bi;
		for (j = start; j < end; j++) {
			an += e.v[j].op != '+';
			bn += e.v[j].op != '-';
		}
		strvec_pushf(out, "@@ -%zu,%zu +%zu,%zu @@", an ? a0 + 1 : a0, an, bn ? b0 + 1 : b0,
			     bn);
		for (j = start; j < end; j++) {
			const char *text = e.v[j].op == '+' ? lb.v[e.v[j].bi] : la.v[e.v[j].ai];

			strvec_pushf(out, "%c%s", e.v[j].op, text);
		}
		i = end;
	}
	if (cut_a || cut_b)
		strvec_pushf(out, "(only the first %d lines were compared)", DIFF_MAX_LINES);
out:
	strvec_clear(&la);
	strvec_clear(&lb);
	free(e.v);
	return changes;
}
