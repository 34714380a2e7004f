/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "core/event_json.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "core/paths.h"

/* A string field; text that is not UTF-8 (a kernel-log line can be anything) gets '?'s. */
static void
set_str(json_t *o, const char *key, const char *v)
{
	json_t *j;
	char *clean;

	if (!v)
		return;
	j = json_string(v);
	if (!j) {
		clean = utf8_clean(v);
		j = json_string(clean);
		free(clean);
	}
	json_object_set_new(o, key, j);
}

static void
set_secs(json_t *o, const char *key, double v)
{
	if (v >= 0)
		json_object_set_new(o, key, json_real((double)(long long)(v * 1000 + 0.5) / 1000));
}

static json_t *
reasons_json(unsigned reasons)
{
	json_t *a = json_array();

	for (unsigned b = 0; b < FAIL_REASON_COUNT; b++)
		if (reasons & (1u << b))
			json_array_append_new(
				a, json_string(fail_reason_key((enum fail_reason_bit)b)));
	return a;
}

static json_t *
counts_json(const struct test_counts *c)
{
	json_t *o = json_object();

	json_object_set_new(o, "ran", json_integer(c->ran));
	json_object_set_new(o, "passed", json_integer(c->passed));
	json_object_set_new(o, "failed", json_integer(c->failed));
	json_object_set_new(o, "notrun", json_integer(c->notrun));
	json_object_set_new(o, "expunged", json_integer(c->expunged));
	json_object_set_new(o, "crashed", json_integer(c->crashed));
	json_object_set_new(o, "hung", json_integer(c->hung));
	set_secs(o, "seconds", c->seconds);
	return o;
}

void
event_to_json(const struct event *ev, struct strbuf *out)
{
	json_t *o = json_object();
	char *text;

	json_object_set_new(o, "event", json_string(event_type_str(ev->type)));
	json_object_set_new(o, "time", json_integer((json_int_t)ev->wall_ms));
	set_str(o, "config", ev->config);
	if (ev->shard)
		json_object_set_new(o, "shard", json_integer(ev->shard));
	switch (ev->type) {
	case EV_RUN_BEGIN:
		set_str(o, "id", ev->u.run.id);
		if (ev->u.run.backend)
			set_str(o, "backend", ev->u.run.backend);
		json_object_set_new(o, "total_tests", json_integer(ev->u.run.total_tests));
		if (ev->u.run.expected_seconds > 0)
			set_secs(o, "expected_seconds", ev->u.run.expected_seconds);
		if (ev->u.run.shards > 1) {
			json_object_set_new(o, "shards", json_integer(ev->u.run.shards));
			set_str(o, "shards_why", ev->u.run.shards_why);
		}
		break;
	case EV_STAGE_BEGIN:
	case EV_STAGE_PROGRESS:
	case EV_STAGE_END:
		set_str(o, "stage", ev->u.stage.stage);
		set_str(o, "detail", ev->u.stage.detail);
		if (ev->u.stage.fraction >= 0)
			json_object_set_new(o, "fraction", json_real(ev->u.stage.fraction));
		if (ev->type == EV_STAGE_END) {
			json_object_set_new(o, "ok", json_boolean(ev->u.stage.code == OK));
			if (ev->u.stage.code != OK)
				json_object_set_new(o, "code",
						    json_string(status_name(ev->u.stage.code)));
			set_str(o, "message", ev->u.stage.message);
		}
		break;
	case EV_SECTION:
		set_str(o, "name", ev->u.section.name);
		set_str(o, "fstyp", ev->u.section.fstyp);
		set_str(o, "platform", ev->u.section.platform);
		set_str(o, "mkfs_options", ev->u.section.mkfs_options);
		set_str(o, "mount_options", ev->u.section.mount_options);
		if (ev->u.section.recreating)
			json_object_set_new(o, "recreating", json_true());
		break;
	case EV_TEST_START:
		set_str(o, "test", ev->u.test_start.test);
		set_secs(o, "prev_seconds", ev->u.test_start.prev_seconds);
		if (ev->u.test_start.expected_seconds > 0) {
			set_secs(o, "expected_seconds", ev->u.test_start.expected_seconds);
			set_str(o, "expected_from", ev->u.test_start.expected_from);
		}
		if (ev->u.test_start.rerun)
			json_object_set_new(o, "rerun", json_integer(ev->u.test_start.rerun));
		break;
	case EV_TEST_END:
		set_str(o, "test", ev->u.test_end.test);
		json_object_set_new(o, "status",
				    json_string(test_status_str(ev->u.test_end.status)));
		set_secs(o, "seconds", ev->u.test_end.seconds);
		if (ev->u.test_end.reasons)
			json_object_set_new(o, "reasons", reasons_json(ev->u.test_end.reasons));
		set_str(o, "reason", ev->u.test_end.reason);
		set_str(o, "detail", ev->u.test_end.detail);
		set_str(o, "hints", ev->u.test_end.hints);
		if (ev->u.test_end.rerun)
			json_object_set_new(o, "rerun", json_integer(ev->u.test_end.rerun));
		break;
	case EV_KMSG:
	case EV_CONSOLE:
		set_str(o, "text", ev->u.line.text);
		if (ev->u.line.flags)
			json_object_set_new(o, "flags", json_integer(ev->u.line.flags));
		set_str(o, "test", ev->u.line.test);
		break;
	case EV_SUMMARY:
		json_object_set_new(o, "counts", counts_json(&ev->u.summary.counts));
		if (ev->u.summary.interrupted)
			json_object_set_new(o, "interrupted", json_true());
		set_str(o, "failed_tests", ev->u.summary.failed_tests);
		set_str(o, "notrun_tests", ev->u.summary.notrun_tests);
		set_str(o, "ran_tests", ev->u.summary.ran_tests);
		break;
	case EV_WARNING:
	case EV_ERROR:
		if (ev->u.error.code != OK)
			json_object_set_new(o, "code", json_string(status_name(ev->u.error.code)));
		set_str(o, "message", ev->u.error.message);
		break;
	case EV_RUN_END:
		json_object_set_new(o, "exit_code", json_integer(ev->u.end.exit_code));
		if (ev->u.end.interrupted)
			json_object_set_new(o, "interrupted", json_true());
		json_object_set_new(o, "counts", counts_json(&ev->u.end.counts));
		if (ev->u.end.unreached && ev->u.end.unreached[0]) {
			json_t *a = json_array();

			for (size_t i = 0; ev->u.end.unreached[i]; i++)
				json_array_append_new(
					a, json_pack("{s:s,s:s?}", "test", ev->u.end.unreached[i],
						     "config",
						     ev->u.end.unreached_config
							     ? ev->u.end.unreached_config[i]
							     : NULL));
			json_object_set_new(o, "unreached", a);
		}
		break;
	case EV_TYPE_COUNT:
		BUG("bad event type");
	}
	text = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII);
	strbuf_adds(out, text);
	strbuf_addch(out, '\n');
	free(text);
	json_decref(o);
}

/* ---- reading ---- */

static const char *
get_str(json_t *o, const char *key, struct event_owned *e)
{
	json_t *v = json_object_get(o, key);

	if (!json_is_string(v))
		return NULL;
	strvec_push(&e->strings, json_string_value(v));
	return e->strings.v[e->strings.n - 1];
}

static double
get_num(json_t *o, const char *key, double dflt)
{
	json_t *v = json_object_get(o, key);

	return json_is_number(v) ? json_number_value(v) : dflt;
}

static unsigned
get_uint(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_integer(v) && json_integer_value(v) >= 0 ? (unsigned)json_integer_value(v)
								: 0;
}

static enum status
get_code(json_t *o, enum status *code)
{
	json_t *v = json_object_get(o, "code");

	*code = OK;
	if (!v)
		return OK;
	for (int c = 0; json_is_string(v) && c < STATUS_COUNT; c++) {
		if (!strcmp(json_string_value(v), status_name((enum status)c))) {
			*code = (enum status)c;
			return OK;
		}
	}
	return error(ERR_INVALID, "field 'code': not a status name");
}

static void
get_counts(json_t *o, struct test_counts *c)
{
	memset(c, 0, sizeof(*c));
	if (!json_is_object(o))
		return;
	c->ran = get_uint(o, "ran");
	c->passed = get_uint(o, "passed");
	c->failed = get_uint(o, "failed");
	c->notrun = get_uint(o, "notrun");
	c->expunged = get_uint(o, "expunged");
	c->crashed = get_uint(o, "crashed");
	c->hung = get_uint(o, "hung");
	c->seconds = get_num(o, "seconds", 0);
}

static enum status
get_reasons(json_t *o, unsigned *reasons)
{
	json_t *a = json_object_get(o, "reasons"), *v;
	size_t i;

	*reasons = 0;
	if (!a)
		return OK;
	if (!json_is_array(a))
		return error(ERR_INVALID, "field 'reasons': not a list");
	json_array_foreach(a, i, v)
	{
		unsigned b;

		for (b = 0; b < FAIL_REASON_COUNT; b++)
			if (json_is_string(v) &&
			    !strcmp(json_string_value(v), fail_reason_key((enum fail_reason_bit)b)))
				break;
		if (b == FAIL_REASON_COUNT)
			return error(ERR_INVALID, "field 'reasons': unknown reason at %zu", i);
		*reasons |= 1u << b;
	}
	return OK;
}

/* RUN_END's "unreached": [ { "test": ..., "config": ... } ]; entries without a test are left out. */
static void
get_unreached(json_t *a, struct event_owned *e)
{
	json_t *it;
	size_t i;

	json_array_foreach(a, i, it)
	{
		const char *test = json_string_value(json_object_get(it, "test"));
		const char *config = json_string_value(json_object_get(it, "config"));

		if (!test)
			continue;
		strvec_push(&e->unreached, test);
		strvec_push(&e->unreached_config, config ? config : "");
	}
	if (e->unreached.n) {
		e->ev.u.end.unreached = (const char *const *)e->unreached.v;
		e->ev.u.end.unreached_config = (const char *const *)e->unreached_config.v;
	}
}

static enum status
parse_object(json_t *o, struct event_owned *e)
{
	struct event *ev = &e->ev;
	const char *name = json_string_value(json_object_get(o, "event"));
	const char *st;
	unsigned t;

	if (!name)
		return error(ERR_INVALID, "field 'event': missing");
	for (t = 0; t < EV_TYPE_COUNT; t++)
		if (!strcmp(name, event_type_str((enum event_type)t)))
			break;
	if (t == EV_TYPE_COUNT)
		return error(ERR_INVALID, "field 'event': unknown event '%s'", name);
	ev->type = (enum event_type)t;
	ev->wall_ms = (uint64_t)get_num(o, "time", 0);
	ev->config = get_str(o, "config", e);
	ev->shard = get_uint(o, "shard");
	switch (ev->type) {
	case EV_RUN_BEGIN:
		ev->u.run.id = get_str(o, "id", e);
		ev->u.run.total_tests = get_uint(o, "total_tests");
		ev->u.run.expected_seconds = get_num(o, "expected_seconds", 0);
		ev->u.run.shards = get_uint(o, "shards");
		ev->u.run.shards_why = get_str(o, "shards_why", e);
		ev->u.run.backend = get_str(o, "backend", e);
		break;
	case EV_STAGE_BEGIN:
	case EV_STAGE_PROGRESS:
	case EV_STAGE_END:
		ev->u.stage.stage = get_str(o, "stage", e);
		ev->u.stage.detail = get_str(o, "detail", e);
		ev->u.stage.fraction = get_num(o, "fraction", -1);
		ev->u.stage.message = get_str(o, "message", e);
		if (!ev->u.stage.stage)
			return error(ERR_INVALID, "field 'stage': missing");
		return get_code(o, &ev->u.stage.code);
	case EV_SECTION:
		ev->u.section.name = get_str(o, "name", e);
		ev->u.section.fstyp = get_str(o, "fstyp", e);
		ev->u.section.platform = get_str(o, "platform", e);
		ev->u.section.mkfs_options = get_str(o, "mkfs_options", e);
		ev->u.section.mount_options = get_str(o, "mount_options", e);
		ev->u.section.recreating = json_is_true(json_object_get(o, "recreating"));
		break;
	case EV_TEST_START:
		ev->u.test_start.test = get_str(o, "test", e);
		ev->u.test_start.prev_seconds = get_num(o, "prev_seconds", -1);
		ev->u.test_start.rerun = get_uint(o, "rerun");
		ev->u.test_start.expected_seconds = get_num(o, "expected_seconds", 0);
		ev->u.test_start.expected_from = get_str(o, "expected_from", e);
		if (!ev->u.test_start.test)
			return error(ERR_INVALID, "field 'test': missing");
		break;
	case EV_TEST_END:
		ev->u.test_end.test = get_str(o, "test", e);
		if (!ev->u.test_end.test)
			return error(ERR_INVALID, "field 'test': missing");
		st = json_string_value(json_object_get(o, "status"));
		if (!st || test_status_parse(st, &ev->u.test_end.status) != OK)
			return error(ERR_INVALID, "field 'status': missing or unknown");
		ev->u.test_end.seconds = get_num(o, "seconds", -1);
		ev->u.test_end.reason = get_str(o, "reason", e);
		ev->u.test_end.detail = get_str(o, "detail", e);
		ev->u.test_end.hints = get_str(o, "hints", e);
		ev->u.test_end.rerun = get_uint(o, "rerun");
		return get_reasons(o, &ev->u.test_end.reasons);
	case EV_KMSG:
	case EV_CONSOLE:
		ev->u.line.text = get_str(o, "text", e);
		ev->u.line.flags = get_uint(o, "flags");
		ev->u.line.test = get_str(o, "test", e);
		if (!ev->u.line.text)
			return error(ERR_INVALID, "field 'text': missing");
		break;
	case EV_SUMMARY:
		get_counts(json_object_get(o, "counts"), &ev->u.summary.counts);
		ev->u.summary.interrupted = json_is_true(json_object_get(o, "interrupted"));
		ev->u.summary.failed_tests = get_str(o, "failed_tests", e);
		ev->u.summary.notrun_tests = get_str(o, "notrun_tests", e);
		ev->u.summary.ran_tests = get_str(o, "ran_tests", e);
		break;
	case EV_WARNING:
	case EV_ERROR:
		ev->u.error.message = get_str(o, "message", e);
		return get_code(o, &ev->u.error.code);
	case EV_RUN_END:
		ev->u.end.exit_code = (int)get_uint(o, "exit_code");
		ev->u.end.interrupted = json_is_true(json_object_get(o, "interrupted"));
		get_counts(json_object_get(o, "counts"), &ev->u.end.counts);
		get_unreached(json_object_get(o, "unreached"), e);
		break;
	case EV_TYPE_COUNT:
		BUG("bad event type");
	}
	return OK;
}

enum status
event_from_json(const char *line, struct event_owned *out)
{
	json_error_t jerr;
	json_t *o;
	enum status rc;

	memset(out, 0, sizeof(*out));
	strvec_init(&out->strings);
	strvec_init(&out->unreached);
	strvec_init(&out->unreached_config);
	o = json_loads(line, JSON_DECODE_ANY, &jerr);
	if (!o)
		return error(ERR_INVALID, "not JSON: %s", jerr.text);
	if (!json_is_object(o)) {
		json_decref(o);
		return error(ERR_INVALID, "not a JSON object");
	}
	rc = parse_object(o, out);
	json_decref(o);
	return rc;
}

void
event_json_release(struct event_owned *e)
{
	strvec_clear(&e->strings);
	strvec_clear(&e->unreached);
	strvec_clear(&e->unreached_config);
}

enum status
event_replay_file(const char *path, struct event_bus *bus, unsigned *skipped)
{
	char *text;
	size_t len;
	unsigned bad = 0, good = 0, lineno = 0, first_bad = 0;
	char *first_msg = NULL;
	char *p, *nl;

	if (read_file(path, (size_t)1 << 30, &text, &len) != OK)
		return ERR_IO;
	for (p = text; *p; p = nl ? nl + 1 : p + strlen(p)) {
		struct event_owned e;

		nl = strchr(p, '\n');
		if (nl)
			*nl = '\0';
		lineno++;
		if (!*p)
			continue;
		if (event_from_json(p, &e) == OK) {
			event_emit(bus, &e.ev);
			good++;
		} else if (!bad++) {
			first_bad = lineno;
			first_msg = xstrdup(error_msg());
		}
		event_json_release(&e);
		if (!nl)
			break;
	}
	free(text);
	if (skipped)
		*skipped = bad;
	if (!good && bad) {
		enum status rc = error(ERR_INVALID, "'%s' line %u: %s", path, first_bad, first_msg);

		free(first_msg);
		return rc;
	}
	free(first_msg);
	error_clear();
	return OK;
}
