/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "fstests/baseline.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/jread.h"
#include "core/paths.h"
#include "fstests/history.h"

#define BASELINES_VERSION 1
#define BASELINES_MAX	  (4u << 20)

char *
baselines_path(void)
{
	char *data = fswb_dir(DIR_DATA), *p = path_join(data, "baselines.json");

	free(data);
	return p;
}

void
baselines_release(struct baselines *b)
{
	for (size_t i = 0; i < b->n; i++) {
		free(b->v[i].kernel);
		free(b->v[i].config);
		free(b->v[i].run);
		free(b->v[i].set);
	}
	free(b->v);
	memset(b, 0, sizeof(*b));
}

static const char *
field(json_t *o, const char *key, const char *path, size_t i, enum status *rc)
{
	json_t *v = json_object_get(o, key);

	if (json_is_string(v) && *json_string_value(v))
		return json_string_value(v);
	if (*rc == OK)
		*rc = error(ERR_PARSE,
			    "%s: baselines[%zu].%s: missing or not a string; fix or remove the "
			    "file ('fswb results baseline set' writes it again)",
			    path, i, key);
	return NULL;
}

enum status
baselines_load(struct baselines *b)
{
	char *path = baselines_path(), *text = NULL;
	json_t *root = NULL, *list;
	json_error_t jerr;
	enum status rc;
	size_t len;

	memset(b, 0, sizeof(*b));
	if (!path_exists(path)) {
		free(path);
		return OK;
	}
	rc = read_file(path, BASELINES_MAX, &text, &len);
	if (rc != OK)
		goto out;
	root = json_loadb(text, len, 0, &jerr);
	if (!root) {
		rc = error(ERR_PARSE, "%s:%d: %s", path, jerr.line, jerr.text);
		goto out;
	}
	list = json_object_get(root, "baselines");
	if (json_integer_value(json_object_get(root, "version")) != BASELINES_VERSION ||
	    !json_is_array(list)) {
		rc = error(ERR_PARSE,
			   "%s: not a baselines file of version %d (no \"baselines\" list)", path,
			   BASELINES_VERSION);
		goto out;
	}
	for (size_t i = 0; i < json_array_size(list) && rc == OK; i++) {
		json_t *o = json_array_get(list, i);
		const char *k = field(o, "kernel", path, i, &rc),
			   *c = field(o, "config", path, i, &rc),
			   *r = field(o, "run", path, i, &rc);
		json_t *set = json_object_get(o, "set");

		if (rc != OK)
			break;
		ALLOC_GROW(b->v, b->n + 1, b->alloc);
		b->v[b->n].kernel = xstrdup(k);
		b->v[b->n].config = xstrdup(c);
		b->v[b->n].run = xstrdup(r);
		b->v[b->n].set = json_is_string(set) ? xstrdup(json_string_value(set)) : NULL;
		b->n++;
	}
out:
	if (rc != OK)
		baselines_release(b);
	json_decref(root);
	free(text);
	free(path);
	return rc;
}

enum status
baselines_save(const struct baselines *b)
{
	json_t *root = json_object(), *list = json_array();
	char *data = NULL, *path = NULL, *text;
	enum status rc;

	json_object_set_new(root, "version", json_integer(BASELINES_VERSION));
	for (size_t i = 0; i < b->n; i++)
		json_array_append_new(list, json_pack("{s:s,s:s,s:s,s:s?}", "kernel",
						      b->v[i].kernel, "config", b->v[i].config,
						      "run", b->v[i].run, "set", b->v[i].set));
	json_object_set_new(root, "baselines", list);
	text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(root);
	rc = fswb_dir_make(DIR_DATA, NULL, &data);
	if (rc == OK) {
		path = baselines_path();
		rc = write_file_atomic(path, text, strlen(text), 0644);
	}
	free(text);
	free(path);
	free(data);
	return rc;
}

void
baselines_set(struct baselines *b, const char *kernel, const char *config, const char *run)
{
	struct baseline *e = NULL;
	char now[32];
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(now, sizeof(now), "%Y-%m-%dT%H:%M:%SZ", &tm);
	for (size_t i = 0; i < b->n && !e; i++)
		if (!strcmp(b->v[i].kernel, kernel) && !strcmp(b->v[i].config, config))
			e = &b->v[i];
	if (e) {
		free(e->run);
		free(e->set);
	} else {
		ALLOC_GROW(b->v, b->n + 1, b->alloc);
		e = &b->v[b->n++];
		e->kernel = xstrdup(kernel);
		e->config = xstrdup(config);
	}
	e->run = xstrdup(run);
	e->set = xstrdup(now);
}

size_t
baselines_remove(struct baselines *b, const char *what, const char *config)
{
	size_t kept = 0, removed = 0;

	for (size_t i = 0; i < b->n; i++) {
		struct baseline *e = &b->v[i];

		if ((!strcmp(e->kernel, what) || !strcmp(e->run, what)) &&
		    (!config || !strcmp(e->config, config))) {
			free(e->kernel);
			free(e->config);
			free(e->run);
			free(e->set);
			removed++;
			continue;
		}
		b->v[kept++] = *e;
	}
	b->n = kept;
	return removed;
}

const struct baseline *
baselines_find(const struct baselines *b, const char *kernel, const char *config)
{
	for (size_t i = 0; i < b->n; i++)
		if (!strcmp(b->v[i].kernel, kernel) && !strcmp(b->v[i].config, config))
			return &b->v[i];
	return NULL;
}

/* A copy of sec's tests (statuses and times) as a section of dst. */
static void
copy_section(struct run_record *dst, const struct section_result *sec)
{
	const char *cfg = section_config_name(sec);
	struct section_result *d = run_record_section(dst, cfg, cfg);

	for (size_t t = 0; t < sec->ntests; t++) {
		const struct test_result *tr = &sec->tests[t];

		section_add_test(d, tr->test, tr->status, tr->seconds, tr->reasons, NULL, NULL,
				 NULL);
	}
}

static const struct section_result *
find_section(const struct run_record *rec, const char *config)
{
	for (size_t s = 0; s < rec->nsections; s++)
		if (!strcmp(section_config_name(&rec->sections[s]), config))
			return &rec->sections[s];
	return NULL;
}

/* Did (config, test) fail in rec? */
static bool
failed_in(const struct run_record *rec, const char *config, const char *test)
{
	const struct section_result *sec = find_section(rec, config);

	for (size_t t = 0; sec && t < sec->ntests; t++)
		if (!strcmp(sec->tests[t].test, test))
			return test_status_failed(sec->tests[t].status);
	return false;
}

/* The oldest run of the kernel key in history with each expected failure. */
static void
find_first_seen(struct regressions *r, const char *own_id)
{
	struct strvec ids = STRVEC_INIT;
	size_t left = r->cmp.count[CMP_STILL_FAILING];

	history_list(&ids);
	for (size_t i = 0; i < ids.n && left; i++) {
		struct run_record rec;
		char *key;

		if (own_id && !strcmp(ids.v[i], own_id))
			break;
		if (history_load(ids.v[i], &rec) != OK) {
			error_clear();
			continue;
		}
		key = history_kernel_key(rec.kernel);
		for (size_t j = 0; j < r->cmp.n && !strcmp(key, r->kernel_key); j++) {
			const struct cmp_entry *e = &r->cmp.v[j];

			if (e->kind != CMP_STILL_FAILING || r->first_seen[j] ||
			    !failed_in(&rec, e->config ? e->config : "", e->test))
				continue;
			r->first_seen[j] = xstrdup(ids.v[i]);
			left--;
		}
		free(key);
		run_record_release(&rec);
	}
	strvec_clear(&ids);
}

static void
add_without(struct regressions *r, const struct section_result *sec)
{
	const struct test_counts *k = &sec->counts;

	strvec_push(&r->without, section_config_name(sec));
	if (k->failed + k->crashed + k->hung)
		strvec_push(&r->without_failing, section_config_name(sec));
}

bool
regressions_any(const struct regressions *r)
{
	return r->cmp.count[CMP_NEW_FAILURE] || r->without_failing.n;
}

enum status
regressions_find(const struct run_record *rec, struct regressions *out)
{
	struct baselines b;
	struct run_record older, newer;
	enum status rc;

	memset(out, 0, sizeof(*out));
	strvec_init(&out->configs);
	strvec_init(&out->runs);
	strvec_init(&out->without);
	strvec_init(&out->without_failing);
	out->kernel_key = history_kernel_key(rec->kernel);
	run_record_init(&older);
	run_record_init(&newer);
	rc = baselines_load(&b);
	for (size_t s = 0; s < rec->nsections && rc == OK; s++) {
		const struct section_result *sec = &rec->sections[s];
		const char *cfg = section_config_name(sec);
		const struct baseline *base = baselines_find(&b, out->kernel_key, cfg);
		const struct section_result *bsec;
		struct run_record brec;

		if (!base) {
			add_without(out, sec);
			continue;
		}
		rc = history_load(base->run, &brec);
		if (rc != OK) {
			rc = error_prefix(rc, "the baseline of %s on %s (run %s)", cfg,
					  out->kernel_key, base->run);
			break;
		}
		bsec = find_section(&brec, cfg);
		if (bsec) {
			strvec_push(&out->configs, cfg);
			strvec_push(&out->runs, base->run);
			copy_section(&older, bsec);
			copy_section(&newer, sec);
		} else {
			add_without(out, sec);
		}
		run_record_release(&brec);
	}
	baselines_release(&b);
	run_compare(&older, &newer, NULL, &out->cmp);
	out->first_seen = xcalloc(out->cmp.n + 1, sizeof(*out->first_seen));
	if (rc == OK)
		find_first_seen(out, rec->id);
	for (size_t j = 0; j < out->cmp.n; j++) {
		const struct cmp_entry *e = &out->cmp.v[j];

		if (e->kind != CMP_STILL_FAILING || out->first_seen[j])
			continue;
		for (size_t k = 0; k < out->configs.n; k++)
			if (!strcmp(out->configs.v[k], e->config ? e->config : ""))
				out->first_seen[j] = xstrdup(out->runs.v[k]);
	}
	run_record_release(&older);
	run_record_release(&newer);
	return rc;
}

void
regressions_release(struct regressions *r)
{
	for (size_t i = 0; r->first_seen && i < r->cmp.n; i++)
		free(r->first_seen[i]);
	free(r->first_seen);
	run_compare_release(&r->cmp);
	strvec_clear(&r->configs);
	strvec_clear(&r->runs);
	strvec_clear(&r->without);
	strvec_clear(&r->without_failing);
	free(r->kernel_key);
	memset(r, 0, sizeof(*r));
}

json_t *
regressions_json(const struct regressions *r)
{
	json_t *o = json_object(), *cfgs = json_array(), *reg = json_array(), *exp = json_array(),
	       *fixed = json_array();

	json_object_set_new(o, "kernel_key", json_string(r->kernel_key));
	for (size_t i = 0; i < r->configs.n; i++)
		json_array_append_new(cfgs, json_pack("{s:s,s:s}", "config", r->configs.v[i], "run",
						      r->runs.v[i]));
	json_object_set_new(o, "configs", cfgs);
	json_object_set_new(o, "without", json_strvec(&r->without));
	json_object_set_new(o, "without_failing", json_strvec(&r->without_failing));
	for (size_t i = 0; i < r->cmp.n; i++) {
		const struct cmp_entry *e = &r->cmp.v[i];
		const char *cfg = e->config ? e->config : "";

		if (e->kind == CMP_NEW_FAILURE)
			json_array_append_new(
				reg,
				json_pack("{s:s,s:s,s:s,s:o}", "config", cfg, "test", e->test,
					  "status", test_status_str(e->new_status),
					  "baseline_status",
					  e->in_old ? json_string(test_status_str(e->old_status))
						    : json_null()));
		else if (e->kind == CMP_STILL_FAILING)
			json_array_append_new(exp, json_pack("{s:s,s:s,s:s,s:s?}", "config", cfg,
							     "test", e->test, "status",
							     test_status_str(e->new_status),
							     "first_seen", r->first_seen[i]));
		else if (e->kind == CMP_FIXED)
			json_array_append_new(
				fixed, json_pack("{s:s,s:s}", "config", cfg, "test", e->test));
	}
	json_object_set_new(o, "regressions", reg);
	json_object_set_new(o, "expected_failures", exp);
	json_object_set_new(o, "fixed", fixed);
	return o;
}

enum status
regressions_save(const char *run_json, const struct regressions *r)
{
	json_error_t jerr;
	json_t *root = json_load_file(run_json, 0, &jerr);
	enum status rc;
	char *text;

	if (!json_is_object(root)) {
		json_decref(root);
		return error(ERR_PARSE, "%s: %s", run_json, jerr.text);
	}
	json_object_set_new(root, "baseline", regressions_json(r));
	text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(root);
	rc = write_file_atomic(run_json, text, strlen(text), 0644);
	free(text);
	return rc;
}

enum status
regressions_of_run(const char *run_dir, struct regressions *r)
{
	char *path = path_join(run_dir, "run.json");
	struct run_record rec;
	enum status rc = run_record_load(path, &rec);

	if (rc != OK) {
		run_record_init(&rec);
		regressions_find(&rec, r); /* empty: nothing to compare */
	} else {
		rc = regressions_find(&rec, r);
		if (rc == OK && r->configs.n)
			rc = regressions_save(path, r);
	}
	run_record_release(&rec);
	free(path);
	return rc;
}

void
regressions_text(const struct regressions *r, struct strbuf *out)
{
	size_t nreg = r->cmp.count[CMP_NEW_FAILURE], nexp = r->cmp.count[CMP_STILL_FAILING];

	if (!r->configs.n) {
		strbuf_addf(out,
			    "No baseline for kernel %s; set one with 'fswb results baseline "
			    "set RUN'.\n",
			    r->kernel_key);
		return;
	}
	for (size_t i = 0; i < r->configs.n; i++)
		strbuf_addf(out, "Baseline of %s on %s: run %s\n", r->configs.v[i], r->kernel_key,
			    r->runs.v[i]);
	if (!nreg)
		strbuf_adds(out, "No regressions.\n");
	else
		strbuf_addf(out, "%zu regression%s (failing now, not in the baseline):\n", nreg,
			    nreg == 1 ? "" : "s");
	for (size_t i = 0; i < r->cmp.n; i++) {
		const struct cmp_entry *e = &r->cmp.v[i];

		if (e->kind == CMP_NEW_FAILURE)
			strbuf_addf(out, "  %-10s %-18s %s (baseline: %s)\n",
				    e->config ? e->config : "", e->test,
				    test_status_str(e->new_status),
				    e->in_old ? test_status_str(e->old_status) : "not there");
	}
	if (nexp)
		strbuf_addf(out, "%zu expected failure%s (failing in the baseline too):\n", nexp,
			    nexp == 1 ? "" : "s");
	for (size_t i = 0; i < r->cmp.n; i++) {
		const struct cmp_entry *e = &r->cmp.v[i];

		if (e->kind == CMP_STILL_FAILING)
			strbuf_addf(out, "  %-10s %-18s first seen in run %s\n",
				    e->config ? e->config : "", e->test,
				    r->first_seen[i] ? r->first_seen[i] : "?");
	}
	if (r->cmp.count[CMP_FIXED])
		strbuf_addf(out, "%zu fixed (failing in the baseline, passing now)\n",
			    r->cmp.count[CMP_FIXED]);
	for (size_t i = 0; i < r->without.n; i++)
		strbuf_addf(out, "No baseline for %s on %s%s.\n", r->without.v[i], r->kernel_key,
			    strvec_contains(&r->without_failing, r->without.v[i])
				    ? ": its failures count as regressions"
				    : "");
}
