/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * run.json: a run record as fswb's own file (the schema is in
 * fstests/results.h) and back, every field checked and named in messages.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jread.h"
#include "core/paths.h"
#include "fstests/catalogue.h"
#include "fstests/results.h"
#include "fstests/results_internal.h"

/* A JSON string; text that is not UTF-8 gets '?' for its bad bytes. */
static json_t *
jstr(const char *s)
{
	json_t *j;
	char *clean;

	if (!s)
		return json_null();
	if ((j = json_string(s)))
		return j;
	clean = utf8_clean(s);
	j = json_string(clean);
	free(clean);
	return j ? j : json_string("");
}

static json_t *
jtime(uint64_t ms)
{
	char buf[80];

	if (!ms)
		return json_null();
	results_format_time(ms, buf, sizeof(buf), true);
	return json_string(buf);
}

static json_t *
jcounts(const struct test_counts *c)
{
	return json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:f}", "ran", (json_int_t)c->ran, "passed",
			 (json_int_t)c->passed, "failed", (json_int_t)c->failed, "notrun",
			 (json_int_t)c->notrun, "expunged", (json_int_t)c->expunged, "crashed",
			 (json_int_t)c->crashed, "hung", (json_int_t)c->hung, "seconds",
			 c->seconds);
}

static json_t *
jtest(const struct test_result *t)
{
	json_t *o = json_object(), *r = json_array(), *a = json_object();

	json_object_set_new(o, "test", jstr(t->test));
	json_object_set_new(o, "status", json_string(test_status_str(t->status)));
	json_object_set_new(o, "seconds", t->seconds >= 0 ? json_real(t->seconds) : json_null());
	json_object_set_new(o, "reason", jstr(t->reason));
	for (int b = 0; b < FAIL_REASON_COUNT; b++)
		if (t->reasons & (1u << b))
			json_array_append_new(r, json_string(fail_reason_key(b)));
	json_object_set_new(o, "reasons", r);
	json_object_set_new(o, "detail", jstr(t->detail));
	json_object_set_new(o, "hints", jstr(t->hints));
	json_object_set_new(o, "reruns", json_integer(t->reruns));
	if (t->shard)
		json_object_set_new(o, "shard", json_integer(t->shard));
	if (t->niterations) {
		json_t *its = json_array();

		for (size_t i = 0; i < t->niterations; i++)
			json_array_append_new(
				its, json_pack("{s:s,s:o}", "status",
					       test_status_str(t->iterations[i].status), "seconds",
					       t->iterations[i].seconds >= 0
						       ? json_real(t->iterations[i].seconds)
						       : json_null()));
		json_object_set_new(o, "iterations", its);
	}
	if (t->out_bad)
		json_object_set_new(a, "out_bad", jstr(t->out_bad));
	if (t->full)
		json_object_set_new(a, "full", jstr(t->full));
	if (t->dmesg)
		json_object_set_new(a, "dmesg", jstr(t->dmesg));
	if (t->kmsg)
		json_object_set_new(a, "kmsg", jstr(t->kmsg));
	json_object_set_new(o, "artifacts", a);
	return o;
}

char *
run_record_to_json(const struct run_record *rec)
{
	json_t *root = json_object(), *secs = json_array();
	struct test_counts total = { 0 };
	struct test_counts *sc = xcalloc(rec->nsections + 1, sizeof(*sc));
	char *text;

	/* counts as the tests say, whatever the caller kept */
	for (size_t i = 0; i < rec->nsections; i++) {
		for (size_t j = 0; j < rec->sections[i].ntests; j++)
			test_counts_add(&sc[i], rec->sections[i].tests[j].status,
					rec->sections[i].tests[j].seconds);
		results_counts_sum(&total, &sc[i]);
	}
	json_object_set_new(root, "version", json_integer(RUN_JSON_VERSION));
	json_object_set_new(root, "id", jstr(rec->id));
	json_object_set_new(root, "start", jtime(rec->start_ms));
	json_object_set_new(root, "end", jtime(rec->end_ms));
	json_object_set_new(root, "kernel", jstr(rec->kernel));
	json_object_set_new(root, "hostname", jstr(rec->hostname));
	json_object_set_new(root, "finished", json_boolean(rec->finished));
	json_object_set_new(root, "interrupted", json_boolean(rec->interrupted));
	json_object_set_new(root, "stopped_at", jstr(rec->stopped_at));
	json_object_set_new(root, "exit_code",
			    rec->exit_code >= 0 ? json_integer(rec->exit_code) : json_null());
	json_object_set_new(root, "error", jstr(rec->error));
	if (rec->shards > 1)
		json_object_set_new(root, "shards", json_integer(rec->shards));
	if (rec->backend)
		json_object_set_new(root, "backend", json_string(rec->backend));
	json_object_set_new(root, "counts", jcounts(&total));
	for (size_t i = 0; i < rec->nsections; i++) {
		const struct section_result *s = &rec->sections[i];
		json_t *o = json_object(), *tests = json_array();

		json_object_set_new(o, "name", jstr(s->name));
		json_object_set_new(o, "config", jstr(s->config));
		json_object_set_new(o, "fstyp", jstr(s->fstyp));
		json_object_set_new(o, "mkfs_options", jstr(s->mkfs_options));
		json_object_set_new(o, "mount_options", jstr(s->mount_options));
		json_object_set_new(o, "interrupted", json_boolean(s->interrupted));
		json_object_set_new(o, "stopped_at", jstr(s->stopped_at));
		if (s->nstopped) {
			json_t *a = json_array();

			for (size_t k = 0; k < s->nstopped; k++)
				json_array_append_new(
					a, json_pack("{s:s,s:o}", "test", s->stopped[k].test,
						     "seconds",
						     s->stopped[k].seconds >= 0
							     ? json_real(s->stopped[k].seconds)
							     : json_null()));
			json_object_set_new(o, "stopped", a);
		}
		if (s->unreached.n)
			json_object_set_new(o, "unreached", json_strvec(&s->unreached));
		json_object_set_new(o, "counts", jcounts(&sc[i]));
		if (s->properties.n) {
			json_t *p = json_object();

			for (size_t k = 0; k < s->properties.n; k++) {
				const char *eq = strchr(s->properties.v[k], '=');
				char *key = xstrndup(s->properties.v[k],
						     eq ? (size_t)(eq - s->properties.v[k])
							: strlen(s->properties.v[k]));

				char *ckey = utf8_clean(key);

				json_object_set_new(p, ckey, jstr(eq ? eq + 1 : ""));
				free(ckey);
				free(key);
			}
			json_object_set_new(o, "properties", p);
		}
		for (size_t j = 0; j < s->ntests; j++)
			json_array_append_new(tests, jtest(&s->tests[j]));
		json_object_set_new(o, "tests", tests);
		json_array_append_new(secs, o);
	}
	json_object_set_new(root, "sections", secs);
	free(sc);
	text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII);
	json_decref(root);
	if (!text)
		BUG("cannot serialise a run record");
	{
		char *out = xasprintf("%s\n", text);

		free(text);
		return out;
	}
}

static enum status
jget_time(struct jreader *c, json_t *o, const char *field, uint64_t *out)
{
	char *s = NULL;
	enum status rc = jread_str(c, o, field, true, &s);

	if (rc == OK && s) {
		*out = results_parse_iso_time(s);
		/* from 1970 to the year 9999: anything else is not a run's time */
		if (!*out || *out > UINT64_C(253402300799999))
			rc = jread_bad_at(c, field, "is not a time like 2026-12-03T07:51:54.000Z");
	}
	free(s);
	return rc;
}

/* "iterations": [ { "status": ..., "seconds": ... } ], when there. */
static enum status
read_iterations(struct jreader *c, json_t *a, struct test_result *t)
{
	size_t i;
	json_t *it;

	if (!a || json_is_null(a))
		return OK;
	if (!json_is_array(a))
		return jread_bad_at(c, "iterations", "must be a list");
	json_array_foreach(a, i, it)
	{
		json_t *st = json_object_get(it, "status"), *secs = json_object_get(it, "seconds");
		enum test_status status;

		if (!json_is_string(st) || test_status_parse(json_string_value(st), &status) != OK)
			return jread_bad_at(c, "iterations", "holds a run without a known status");
		if (secs && !json_is_null(secs) && !json_is_number(secs))
			return jread_bad_at(c, "iterations",
					    "holds a run whose seconds are not a number");
		results_push_iteration(t, status,
				       json_is_number(secs) ? json_number_value(secs) : -1);
	}
	return OK;
}

static enum status
read_test(struct jreader *c, json_t *o, struct section_result *sec)
{
	char *test = NULL, *status = NULL, *reason = NULL, *detail = NULL, *hints = NULL;
	json_t *v, *a;
	enum test_status st;
	double seconds = -1;
	unsigned reasons = 0, reruns = 0;
	struct test_result *t;
	enum status rc;

	if (!json_is_object(o))
		return jread_bad(c, "must be an object");
	if ((rc = jread_str(c, o, "test", true, &test)) != OK ||
	    (rc = jread_str(c, o, "status", true, &status)))
		goto out;
	if (!test || !*test) {
		rc = jread_bad_at(c, "test", "is missing");
		goto out;
	}
	if (!catalogue_test_name_ok(test)) {
		rc = jread_bad_at(c, "test", "is not a test name like generic/001");
		goto out;
	}
	if (!status) {
		rc = jread_bad_at(c, "status", "is missing");
		goto out;
	}
	if (test_status_parse(status, &st) != OK) {
		char what[128];

		snprintf(what, sizeof(what), "unknown status '%.60s'", status);
		rc = jread_bad_at(c, "status", "%s", what);
		goto out;
	}
	v = json_object_get(o, "seconds");
	if (v && !json_is_null(v)) {
		if (!json_is_number(v)) {
			rc = jread_bad_at(c, "seconds", "must be a number or null");
			goto out;
		}
		seconds = json_number_value(v);
		if (!results_seconds_ok(seconds)) {
			rc = jread_bad_at(c, "seconds",
					  "must be a number of seconds from 0 to 10000000");
			goto out;
		}
	}
	v = json_object_get(o, "reruns");
	if (v && !json_is_null(v)) {
		if (!json_is_integer(v) || json_integer_value(v) < 0) {
			rc = jread_bad_at(c, "reruns", "must be a whole number");
			goto out;
		}
		reruns = (unsigned)json_integer_value(v);
	}
	a = json_object_get(o, "reasons");
	if (a && !json_is_null(a)) {
		size_t i;

		if (!json_is_array(a)) {
			rc = jread_bad_at(c, "reasons", "must be a list");
			goto out;
		}
		json_array_foreach(a, i, v)
		{
			int b;

			for (b = 0; b < FAIL_REASON_COUNT; b++)
				if (json_is_string(v) &&
				    !strcmp(json_string_value(v), fail_reason_key(b)))
					break;
			if (b == FAIL_REASON_COUNT) {
				rc = jread_bad_at(c, "reasons", "holds an unknown reason");
				goto out;
			}
			reasons |= 1u << b;
		}
	}
	if ((rc = jread_str(c, o, "reason", true, &reason)) != OK ||
	    (rc = jread_str(c, o, "detail", true, &detail)) != OK ||
	    (rc = jread_str(c, o, "hints", true, &hints)) != OK)
		goto out;
	t = section_add_test(sec, test, st, seconds, reasons, reason, detail, hints);
	t->reruns = reruns;
	if ((rc = jread_count(c, o, "shard", 64, &t->shard)) != OK)
		goto out;
	if ((rc = read_iterations(c, json_object_get(o, "iterations"), t)) != OK)
		goto out;
	a = json_object_get(o, "artifacts");
	if (a && !json_is_null(a)) {
		if (!json_is_object(a)) {
			rc = jread_bad_at(c, "artifacts", "must be an object");
			goto out;
		}
		size_t len;

		jread_push(c, "artifacts", &len);
		if ((rc = jread_str(c, a, "out_bad", true, &t->out_bad)) != OK ||
		    (rc = jread_str(c, a, "full", true, &t->full)) != OK ||
		    (rc = jread_str(c, a, "dmesg", true, &t->dmesg)) != OK ||
		    (rc = jread_str(c, a, "kmsg", true, &t->kmsg)) != OK)
			goto out;
		strbuf_setlen(&c->path, len);
	}
out:
	free(test);
	free(status);
	free(reason);
	free(detail);
	free(hints);
	return rc;
}

/* "stopped": [ { "test": ..., "seconds": ... } ], when there. */
static enum status
read_stopped(struct jreader *c, json_t *a, struct section_result *sec)
{
	json_t *it;
	size_t i;

	if (!a || json_is_null(a))
		return OK;
	if (!json_is_array(a))
		return jread_bad_at(c, "stopped", "must be a list");
	json_array_foreach(a, i, it)
	{
		const char *test = json_string_value(json_object_get(it, "test"));
		json_t *secs = json_object_get(it, "seconds");
		double seconds = -1;

		if (!test || !catalogue_test_name_ok(test))
			return jread_bad_at(c, "stopped", "holds an entry without a test name");
		if (secs && !json_is_null(secs)) {
			seconds = json_is_number(secs) ? json_number_value(secs) : -2;
			if (!results_seconds_ok(seconds))
				return jread_bad_at(c, "stopped",
						    "holds seconds that are not 0 to 10000000");
		}
		section_add_stop(sec, test, seconds);
	}
	return OK;
}

static enum status
read_section(struct jreader *c, json_t *o, struct run_record *rec)
{
	char *name = NULL, *config = NULL;
	struct section_result *sec;
	json_t *tests, *props, *v;
	enum status rc;
	size_t base = c->path.len;

	if (!json_is_object(o))
		return jread_bad(c, "must be an object");
	if ((rc = jread_str(c, o, "name", true, &name)) != OK ||
	    (rc = jread_str(c, o, "config", true, &config)) != OK) {
		free(name);
		free(config);
		return rc;
	}
	sec = run_record_section(rec, name, config);
	free(name);
	free(config);
	if ((rc = jread_str(c, o, "fstyp", true, &sec->fstyp)) != OK ||
	    (rc = jread_str(c, o, "mkfs_options", true, &sec->mkfs_options)) != OK ||
	    (rc = jread_str(c, o, "mount_options", true, &sec->mount_options)) != OK ||
	    (rc = jread_bool(c, o, "interrupted", &sec->interrupted)) != OK ||
	    (rc = jread_str(c, o, "stopped_at", true, &sec->stopped_at)) != OK ||
	    (rc = read_stopped(c, json_object_get(o, "stopped"), sec)) != OK ||
	    (rc = jread_strvec(c, o, "unreached", &sec->unreached)) != OK)
		return rc;
	for (size_t i = 0; i < sec->unreached.n; i++)
		if (!catalogue_test_name_ok(sec->unreached.v[i]))
			return jread_bad_at(c, "unreached", "holds a name that is not a test name");
	props = json_object_get(o, "properties");
	if (props && !json_is_null(props)) {
		const char *key;

		if (!json_is_object(props))
			return jread_bad_at(c, "properties", "must be an object");
		json_object_foreach(props, key, v)
		{
			if (!json_is_string(v))
				return jread_bad_at(c, "properties", "values must be strings");
			strvec_pushf(&sec->properties, "%s=%s", key, json_string_value(v));
		}
	}
	tests = json_object_get(o, "tests");
	if (!tests || json_is_null(tests))
		return OK;
	if (!json_is_array(tests))
		return jread_bad_at(c, "tests", "must be a list");
	for (size_t i = 0; i < json_array_size(tests); i++) {
		strbuf_setlen(&c->path, base);
		strbuf_addf(&c->path, "%stests[%zu]", base ? "." : "", i);
		if ((rc = read_test(c, json_array_get(tests, i), sec)) != OK)
			return rc;
	}
	strbuf_setlen(&c->path, base);
	return OK;
}

enum status
run_record_from_json(const char *text, const char *source, struct run_record *out)
{
	struct jreader c = { .source = source ? source : "run.json", .null_is_missing = true };
	json_error_t jerr;
	json_t *root = json_loads(text, 0, &jerr), *v, *secs;
	struct run_record rec;
	enum status rc = OK;

	run_record_init(&rec);
	if (!root)
		return error(ERR_PARSE, "%s:%d: %s", c.source, jerr.line, jerr.text);
	strbuf_init(&c.path);
	if (!json_is_object(root)) {
		rc = error(ERR_INVALID, "%s: not a run record (a JSON object)", c.source);
		goto out;
	}
	v = json_object_get(root, "version");
	if (!json_is_integer(v) || json_integer_value(v) < 1 ||
	    json_integer_value(v) > RUN_JSON_VERSION) {
		rc = error(ERR_INVALID,
			   "%s: version: must be %d (this fswb reads run records up to version "
			   "%d; a newer fswb wrote this one)",
			   c.source, RUN_JSON_VERSION, RUN_JSON_VERSION);
		goto out;
	}
	if ((rc = jread_str(&c, root, "id", true, &rec.id)) != OK ||
	    (rc = jget_time(&c, root, "start", &rec.start_ms)) != OK ||
	    (rc = jget_time(&c, root, "end", &rec.end_ms)) != OK ||
	    (rc = jread_str(&c, root, "kernel", true, &rec.kernel)) != OK ||
	    (rc = jread_str(&c, root, "hostname", true, &rec.hostname)) != OK ||
	    (rc = jread_bool(&c, root, "finished", &rec.finished)) != OK ||
	    (rc = jread_bool(&c, root, "interrupted", &rec.interrupted)) != OK ||
	    (rc = jread_str(&c, root, "stopped_at", true, &rec.stopped_at)) != OK ||
	    (rc = jread_str(&c, root, "error", true, &rec.error)) != OK ||
	    (rc = jread_count(&c, root, "shards", 64, &rec.shards)) != OK ||
	    (rc = jread_str(&c, root, "backend", true, &rec.backend)) != OK)
		goto out;
	v = json_object_get(root, "exit_code");
	if (v && !json_is_null(v)) {
		if (!json_is_integer(v)) {
			rc = jread_bad_at(&c, "exit_code", "must be a whole number or null");
			goto out;
		}
		rec.exit_code = (int)json_integer_value(v);
	}
	secs = json_object_get(root, "sections");
	if (!json_is_array(secs)) {
		rc = jread_bad_at(&c, "sections", "must be a list");
		goto out;
	}
	for (size_t i = 0; i < json_array_size(secs); i++) {
		strbuf_reset(&c.path);
		strbuf_addf(&c.path, "sections[%zu]", i);
		if ((rc = read_section(&c, json_array_get(secs, i), &rec)) != OK)
			goto out;
	}
	run_record_recount(&rec);
out:
	json_decref(root);
	strbuf_release(&c.path);
	if (rc == OK)
		*out = rec;
	else
		run_record_release(&rec);
	return rc;
}

enum status
run_record_save(const char *path, const struct run_record *rec)
{
	char *text = run_record_to_json(rec);
	enum status rc = write_file_atomic(path, text, strlen(text), 0644);

	free(text);
	return rc;
}

enum status
run_record_load(const char *path, struct run_record *out)
{
	char *text = NULL;
	size_t len;
	enum status rc = read_file(path, RESULTS_XML_MAX, &text, &len);

	if (rc != OK)
		return rc;
	rc = run_record_from_json(text, path, out);
	free(text);
	return rc;
}
