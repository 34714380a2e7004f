/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "view/compare.h"

#include <stdlib.h>
#include <string.h>

static const char *const kind_names[CMP_KIND_COUNT] = {
	[CMP_NEW_FAILURE] = "new failure",
	[CMP_STILL_FAILING] = "still failing",
	[CMP_FIXED] = "fixed",
	[CMP_NOW_NOTRUN] = "now not run",
	[CMP_NOW_RUNS] = "now runs",
	[CMP_ONLY_OLD] = "only in the older run",
	[CMP_ONLY_NEW] = "only in the newer run",
	[CMP_SAME] = "same",
};

const char *
cmp_kind_str(enum cmp_kind k)
{
	return k < CMP_KIND_COUNT ? kind_names[k] : "?";
}

static bool
failed(enum test_status st)
{
	return st == TS_FAIL || st == TS_CRASHED || st == TS_HUNG;
}

static const char *
sec_config(const struct section_result *s)
{
	return s->config ? s->config : s->name;
}

static struct cmp_entry *
find(struct run_compare *c, const char *config, const char *test)
{
	for (size_t i = 0; i < c->n; i++) {
		struct cmp_entry *e = &c->v[i];

		if (strcmp(e->test, test))
			continue;
		if ((!e->config && !config) || (e->config && config && !strcmp(e->config, config)))
			return e;
	}
	return NULL;
}

static struct cmp_entry *
add(struct run_compare *c, const char *config, const char *test)
{
	struct cmp_entry *e;

	ALLOC_GROW(c->v, c->n + 1, c->alloc);
	e = &c->v[c->n++];
	memset(e, 0, sizeof(*e));
	e->config = config ? xstrdup(config) : NULL;
	e->test = xstrdup(test);
	e->old_seconds = e->new_seconds = -1;
	return e;
}

static enum cmp_kind
classify(const struct cmp_entry *e)
{
	if (!e->in_new)
		return CMP_ONLY_OLD;
	if (!e->in_old)
		return failed(e->new_status) ? CMP_NEW_FAILURE : CMP_ONLY_NEW;
	if (failed(e->new_status))
		return failed(e->old_status) ? CMP_STILL_FAILING : CMP_NEW_FAILURE;
	if (failed(e->old_status))
		return e->new_status == TS_PASS ? CMP_FIXED : CMP_NOW_NOTRUN;
	if (e->old_status == e->new_status)
		return CMP_SAME;
	if (e->new_status == TS_NOTRUN || e->new_status == TS_EXPUNGED)
		return CMP_NOW_NOTRUN;
	return CMP_NOW_RUNS;
}

static int
cmp_entries(const void *a, const void *b)
{
	const struct cmp_entry *x = a, *y = b;
	int r;

	if (x->kind != y->kind)
		return (int)x->kind - (int)y->kind;
	r = strcmp(x->config ? x->config : "", y->config ? y->config : "");
	return r ? r : strcmp(x->test, y->test);
}

void
run_compare(const struct run_record *older, const struct run_record *newer, struct run_compare *out)
{
	memset(out, 0, sizeof(*out));
	for (int side = 0; side < 2; side++) {
		const struct run_record *rec = side ? newer : older;

		for (size_t s = 0; s < rec->nsections; s++) {
			const struct section_result *sec = &rec->sections[s];

			for (size_t t = 0; t < sec->ntests; t++) {
				const struct test_result *tr = &sec->tests[t];
				struct cmp_entry *e = find(out, sec_config(sec), tr->test);

				if (!e)
					e = add(out, sec_config(sec), tr->test);
				if (side) {
					e->in_new = true;
					e->new_status = tr->status;
					e->new_seconds = tr->seconds;
				} else {
					e->in_old = true;
					e->old_status = tr->status;
					e->old_seconds = tr->seconds;
				}
			}
		}
	}
	for (size_t i = 0; i < out->n; i++) {
		out->v[i].kind = classify(&out->v[i]);
		out->count[out->v[i].kind]++;
	}
	if (out->n)
		qsort(out->v, out->n, sizeof(*out->v), cmp_entries);
}

void
run_compare_release(struct run_compare *c)
{
	for (size_t i = 0; i < c->n; i++) {
		free(c->v[i].config);
		free(c->v[i].test);
	}
	free(c->v);
	memset(c, 0, sizeof(*c));
}
