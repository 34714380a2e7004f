/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "fstests/compare.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const struct {
	const char *name, *key;
} kinds[CMP_KIND_COUNT] = {
	[CMP_NEW_FAILURE] = { "new failure", "new_failure" },
	[CMP_STILL_FAILING] = { "still failing", "still_failing" },
	[CMP_FIXED] = { "fixed", "fixed" },
	[CMP_NOW_NOTRUN] = { "now not run", "now_notrun" },
	[CMP_NOW_RUNS] = { "now runs", "now_runs" },
	[CMP_ONLY_OLD] = { "only in the older run", "only_old" },
	[CMP_ONLY_NEW] = { "only in the newer run", "only_new" },
	[CMP_SAME] = { "same", "same" },
};

const char *
cmp_kind_str(enum cmp_kind k)
{
	return k < CMP_KIND_COUNT ? kinds[k].name : "?";
}

const char *
cmp_kind_key(enum cmp_kind k)
{
	return k < CMP_KIND_COUNT ? kinds[k].key : "?";
}

bool
test_status_failed(enum test_status st)
{
	return st == TS_FAIL || st == TS_CRASHED || st == TS_HUNG;
}

static const char *
sec_config(const struct section_result *s)
{
	return s->config ? s->config : s->name;
}

static bool
same_config(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

struct cmp_entry *
run_compare_find(struct run_compare *c, const char *config, const char *test)
{
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->v[i].test, test) && same_config(c->v[i].config, config))
			return &c->v[i];
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
		return test_status_failed(e->new_status) ? CMP_NEW_FAILURE : CMP_ONLY_NEW;
	if (test_status_failed(e->new_status))
		return test_status_failed(e->old_status) ? CMP_STILL_FAILING : CMP_NEW_FAILURE;
	if (test_status_failed(e->old_status))
		return e->new_status == TS_PASS ? CMP_FIXED : CMP_NOW_NOTRUN;
	if (e->old_status == e->new_status)
		return CMP_SAME;
	if (e->new_status == TS_NOTRUN || e->new_status == TS_EXPUNGED)
		return CMP_NOW_NOTRUN;
	return CMP_NOW_RUNS;
}

static bool
ran(enum test_status st)
{
	return st == TS_PASS || st == TS_FAIL;
}

static bool
time_changed(const struct cmp_entry *e, const struct compare_opts *o)
{
	double d;

	if (!e->in_old || !e->in_new || !ran(e->old_status) || !ran(e->new_status) ||
	    e->old_seconds < 0 || e->new_seconds < 0)
		return false;
	d = fabs(e->new_seconds - e->old_seconds);
	return d >= o->min_seconds && d * 100.0 >= o->percent * e->old_seconds;
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
run_compare(const struct run_record *older, const struct run_record *newer,
	    const struct compare_opts *opts, struct run_compare *out)
{
	memset(out, 0, sizeof(*out));
	strvec_init(&out->configs);
	out->opts = opts ? *opts
			 : (struct compare_opts){ COMPARE_PERCENT_DEFAULT, COMPARE_MIN_SECONDS };
	for (int side = 0; side < 2; side++) {
		const struct run_record *rec = side ? newer : older;

		for (size_t s = 0; s < rec->nsections; s++) {
			const struct section_result *sec = &rec->sections[s];
			const char *cfg = sec_config(sec);

			if (!strvec_contains(&out->configs, cfg ? cfg : ""))
				strvec_push(&out->configs, cfg ? cfg : "");
			for (size_t t = 0; t < sec->ntests; t++) {
				const struct test_result *tr = &sec->tests[t];
				struct cmp_entry *e = run_compare_find(out, cfg, tr->test);

				if (!e)
					e = add(out, cfg, tr->test);
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
		struct cmp_entry *e = &out->v[i];

		e->kind = classify(e);
		out->count[e->kind]++;
		e->time_changed = time_changed(e, &out->opts);
		out->time_changed += e->time_changed;
	}
	if (out->n)
		qsort(out->v, out->n, sizeof(*out->v), cmp_entries);
	strvec_sort(&out->configs);
}

void
run_compare_release(struct run_compare *c)
{
	for (size_t i = 0; i < c->n; i++) {
		free(c->v[i].config);
		free(c->v[i].test);
	}
	free(c->v);
	strvec_clear(&c->configs);
	memset(c, 0, sizeof(*c));
}

static const char *
status_or_dash(bool in, enum test_status st)
{
	return in ? test_status_str(st) : "-";
}

void
strbuf_add_seconds(struct strbuf *sb, double s)
{
	char buf[32];

	strbuf_adds(sb, s < 0 ? "?" : format_duration(s, buf, sizeof(buf)));
}

/* Is e of configuration cfg ("" for the one without a name)? */
static bool
of_config(const struct cmp_entry *e, const char *cfg)
{
	return !strcmp(e->config ? e->config : "", cfg);
}

void
run_compare_text(const struct run_compare *c, bool all, struct strbuf *out)
{
	for (size_t k = 0; k < c->configs.n; k++) {
		const char *cfg = c->configs.v[k];
		size_t count[CMP_KIND_COUNT] = { 0 }, times = 0, listed = 0;

		for (size_t i = 0; i < c->n; i++)
			if (of_config(&c->v[i], cfg)) {
				count[c->v[i].kind]++;
				times += c->v[i].time_changed;
			}
		strbuf_addf(out, "%s%s:", k ? "\n" : "", *cfg ? cfg : "check");
		for (int j = 0; j < CMP_KIND_COUNT; j++)
			if (j != CMP_SAME && count[j])
				strbuf_addf(out, "%s %zu %s", listed++ ? "," : "", count[j],
					    cmp_kind_str((enum cmp_kind)j));
		strbuf_addf(out, "%s %zu the same\n", listed ? ";" : "", count[CMP_SAME]);
		for (size_t i = 0; i < c->n; i++) {
			const struct cmp_entry *e = &c->v[i];

			if (!of_config(e, cfg) || (e->kind == CMP_SAME && !all))
				continue;
			strbuf_addf(out, "  %-22s %-18s %s -> %s", cmp_kind_str(e->kind), e->test,
				    status_or_dash(e->in_old, e->old_status),
				    status_or_dash(e->in_new, e->new_status));
			strbuf_addch(out, '\n');
			if (e->flaky_passed && e->flaky_failed)
				strbuf_addf(out, "%25sflaky: failed %u of its last %u runs\n", "",
					    e->flaky_failed, e->flaky_passed + e->flaky_failed);
		}
		if (!times)
			continue;
		strbuf_addf(out, "  times that changed by %.0f%% and %.0fs or more:\n",
			    c->opts.percent, c->opts.min_seconds);
		for (size_t i = 0; i < c->n; i++) {
			const struct cmp_entry *e = &c->v[i];

			if (!of_config(e, cfg) || !e->time_changed)
				continue;
			strbuf_addf(out, "  %-22s %-18s ",
				    e->new_seconds > e->old_seconds ? "slower" : "faster", e->test);
			strbuf_add_seconds(out, e->old_seconds);
			strbuf_adds(out, " -> ");
			strbuf_add_seconds(out, e->new_seconds);
			if (e->old_seconds > 0)
				strbuf_addf(out, " (%+.0f%%)",
					    (e->new_seconds - e->old_seconds) * 100.0 /
						    e->old_seconds);
			strbuf_addch(out, '\n');
		}
	}
}

static json_t *
seconds_json(double s)
{
	return s < 0 ? json_null() : json_real(s);
}

json_t *
run_compare_json(const struct run_compare *c, bool all)
{
	json_t *root = json_object(), *counts = json_object(), *cfgs = json_array();

	json_object_set_new(root, "percent", json_real(c->opts.percent));
	json_object_set_new(root, "min_seconds", json_real(c->opts.min_seconds));
	for (int k = 0; k < CMP_KIND_COUNT; k++)
		json_object_set_new(counts, cmp_kind_key((enum cmp_kind)k),
				    json_integer((json_int_t)c->count[k]));
	json_object_set_new(counts, "time_changed", json_integer((json_int_t)c->time_changed));
	json_object_set_new(root, "counts", counts);
	for (size_t k = 0; k < c->configs.n; k++) {
		json_t *o = json_object(), *tests = json_array();
		const char *cfg = c->configs.v[k];

		json_object_set_new(o, "config", *cfg ? json_string(cfg) : json_null());
		for (size_t i = 0; i < c->n; i++) {
			const struct cmp_entry *e = &c->v[i];
			json_t *t;

			if (!of_config(e, cfg) || (e->kind == CMP_SAME && !e->time_changed && !all))
				continue;
			t = json_object();
			json_object_set_new(t, "test", json_string(e->test));
			json_object_set_new(t, "change", json_string(cmp_kind_key(e->kind)));
			json_object_set_new(t, "old",
					    e->in_old ? json_string(test_status_str(e->old_status))
						      : json_null());
			json_object_set_new(t, "new",
					    e->in_new ? json_string(test_status_str(e->new_status))
						      : json_null());
			json_object_set_new(t, "old_seconds", seconds_json(e->old_seconds));
			json_object_set_new(t, "new_seconds", seconds_json(e->new_seconds));
			json_object_set_new(t, "time_changed", json_boolean(e->time_changed));
			json_object_set_new(t, "flaky",
					    e->flaky_passed && e->flaky_failed
						    ? json_pack("{s:I,s:I}", "passed",
								(json_int_t)e->flaky_passed,
								"failed",
								(json_int_t)e->flaky_failed)
						    : json_null());
			json_array_append_new(tests, t);
		}
		json_object_set_new(o, "tests", tests);
		json_array_append_new(cfgs, o);
	}
	json_object_set_new(root, "configs", cfgs);
	return root;
}
