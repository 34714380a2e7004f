/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Reading JSON into typed fields: see jread.h.
 */
#include "core/jread.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum status
jread_bad(struct jreader *r, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return error(ERR_INVALID, "%s: field '%s': %s", r->source, r->path.buf, msg);
}

enum status
jread_bad_at(struct jreader *r, const char *key, const char *fmt, ...)
{
	char msg[1024];
	size_t mark;
	enum status rc;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	jread_push(r, key, &mark);
	rc = jread_bad(r, "%s", msg);
	strbuf_setlen(&r->path, mark);
	return rc;
}

/* A key that is not there (or null, when null means missing). */
static bool
absent(const struct jreader *r, const json_t *v)
{
	return !v || (r->null_is_missing && json_is_null(v));
}

const char *
jread_type(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "a list";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
		return "a whole number";
	case JSON_REAL:
		return "a number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "true or false";
	case JSON_NULL:
		return "null";
	}
	return "something else";
}

/* Keys of obj must be among valid; names the bad one and the choices. */
enum status
jread_keys(struct jreader *r, json_t *obj, const char *const *valid, size_t n)
{
	const char *key;
	json_t *v;

	json_object_foreach(obj, key, v)
	{
		bool found = false;

		for (size_t i = 0; i < n && !found; i++)
			found = !strcmp(key, valid[i]);
		if (!found) {
			struct strbuf choices = STRBUF_INIT;
			const char *close = closest_match(key, valid, n);
			enum status rc;
			size_t mark = r->path.len;

			for (size_t i = 0; i < n; i++)
				strbuf_addf(&choices, "%s%s", i ? ", " : "", valid[i]);
			strbuf_addf(&r->path, "%s%s", r->path.len ? "." : "", key);
			if (close)
				rc = jread_bad(r, "unknown field (did you mean '%s'?); valid: %s",
					       close, choices.buf);
			else
				rc = jread_bad(r, "unknown field; valid: %s", choices.buf);
			strbuf_setlen(&r->path, mark);
			strbuf_release(&choices);
			return rc;
		}
	}
	return OK;
}

void
jread_push(struct jreader *r, const char *key, size_t *mark)
{
	*mark = r->path.len;
	strbuf_addf(&r->path, "%s%s", r->path.len ? "." : "", key);
}

enum status
jread_str(struct jreader *r, json_t *obj, const char *key, bool nullable, char **out)
{
	json_t *v = json_object_get(obj, key);
	enum status rc = OK;
	size_t mark;

	if (absent(r, v))
		return OK;
	jread_push(r, key, &mark);
	if (json_is_null(v) && nullable) {
		free(*out);
		*out = NULL;
	} else if (!json_is_string(v)) {
		rc = jread_bad(r, "expected a string%s, got %s", nullable ? " or null" : "",
			       jread_type(v));
	} else {
		free(*out);
		*out = xstrdup(json_string_value(v));
	}
	strbuf_setlen(&r->path, mark);
	return rc;
}

enum status
jread_strvec(struct jreader *r, json_t *obj, const char *key, struct strvec *out)
{
	json_t *v = json_object_get(obj, key), *item;
	enum status rc = OK;
	size_t mark, i;

	if (absent(r, v))
		return OK;
	jread_push(r, key, &mark);
	if (!json_is_array(v)) {
		rc = jread_bad(r, "expected a list of strings, got %s", jread_type(v));
		goto out;
	}
	strvec_clear(out);
	json_array_foreach(v, i, item)
	{
		if (!json_is_string(item)) {
			strbuf_addf(&r->path, "[%zu]", i);
			rc = jread_bad(r, "expected a string, got %s", jread_type(item));
			goto out;
		}
		strvec_push(out, json_string_value(item));
	}
out:
	strbuf_setlen(&r->path, mark);
	return rc;
}

enum status
jread_bool(struct jreader *r, json_t *obj, const char *key, bool *out)
{
	json_t *v = json_object_get(obj, key);
	enum status rc = OK;
	size_t mark;

	if (absent(r, v))
		return OK;
	jread_push(r, key, &mark);
	if (!json_is_boolean(v))
		rc = jread_bad(r, "expected true or false, got %s", jread_type(v));
	else
		*out = json_is_true(v);
	strbuf_setlen(&r->path, mark);
	return rc;
}

enum status
jread_count(struct jreader *r, json_t *obj, const char *key, unsigned max, unsigned *out)
{
	json_t *v = json_object_get(obj, key);
	enum status rc = OK;
	size_t mark;

	if (absent(r, v))
		return OK;
	jread_push(r, key, &mark);
	if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > max)
		rc = jread_bad(r, "expected a whole number from 1 to %u", max);
	else
		*out = (unsigned)json_integer_value(v);
	strbuf_setlen(&r->path, mark);
	return rc;
}

enum status
jread_object(struct jreader *r, json_t *parent, const char *key, json_t **out)
{
	json_t *v = json_object_get(parent, key);
	size_t mark;
	enum status rc = OK;

	*out = NULL;
	if (absent(r, v))
		return OK;
	jread_push(r, key, &mark);
	if (!json_is_object(v))
		rc = jread_bad(r, "expected an object, got %s", jread_type(v));
	else
		*out = v;
	strbuf_setlen(&r->path, mark);
	return rc;
}

json_t *
json_str_or_null(const char *s)
{
	json_t *v = s ? json_string(s) : NULL;

	return v ? v : json_null();
}

char *
json_strdup_member(json_t *obj, const char *key)
{
	const char *v = json_string_value(json_object_get(obj, key));

	return v ? xstrdup(v) : NULL;
}

json_t *
json_strvec(const struct strvec *sv)
{
	json_t *a = json_array();

	for (size_t i = 0; i < sv->n; i++)
		json_array_append_new(a, json_string(sv->v[i]));
	return a;
}
