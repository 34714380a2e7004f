/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * JSON: json_strvec() for writing a list of strings, and reading JSON into
 * typed fields, with messages that name the source and
 * the field ("plan.json: field 'tests.groups[1]': expected a string, got a
 * whole number") and the valid keys of an object. A missing key leaves the
 * field as it was.
 *
 *	struct jreader r = { .source = path };
 *	strbuf_init(&r.path);
 *	jread_keys(&r, root, keys, n);             unknown keys are errors
 *	jread_str(&r, root, "name", true, &name);  ... one call per field
 *	jread_push(&r, "kernel", &mark); ... strbuf_setlen(&r.path, mark);
 *	strbuf_release(&r.path);
 */
#ifndef FSWB_CORE_JREAD_H
#define FSWB_CORE_JREAD_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/status.h"
#include "core/util.h"

/* A new JSON array of sv's strings. */
json_t *json_strvec(const struct strvec *sv);
/* s as a JSON string, or null when s is NULL (or not UTF-8). */
json_t *json_str_or_null(const char *s);
/* A copy of obj's string member key, or NULL when it is missing or not a string. */
char *json_strdup_member(json_t *obj, const char *key);

struct jreader {
	const char *source;
	struct strbuf path;   /* the field being read, "tests.groups[2]" */
	bool null_is_missing; /* a null value leaves the field as it is */
};

/* ERR_INVALID: "SOURCE: field 'PATH': MESSAGE". */
enum status jread_bad(struct jreader *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The same about key of the current object. */
enum status jread_bad_at(struct jreader *r, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* "an object", "a list", "a string", "a whole number", ... */
const char *jread_type(const json_t *v);
/* The keys of obj must be among valid (n of them); names the bad one and the closest. */
enum status jread_keys(struct jreader *r, json_t *obj, const char *const *valid, size_t n);
/* Add key to the path (*mark: where to cut it back with strbuf_setlen). */
void jread_push(struct jreader *r, const char *key, size_t *mark);
/* A string (nullable: null too, which sets *out to NULL); *out is replaced. */
enum status jread_str(struct jreader *r, json_t *obj, const char *key, bool nullable, char **out);
/* A list of strings; *out is replaced. */
enum status jread_strvec(struct jreader *r, json_t *obj, const char *key, struct strvec *out);
enum status jread_bool(struct jreader *r, json_t *obj, const char *key, bool *out);
/* A whole number from 1 to max. */
enum status jread_count(struct jreader *r, json_t *obj, const char *key, unsigned max,
			unsigned *out);
/* An object (*out; NULL when the key is missing). */
enum status jread_object(struct jreader *r, json_t *parent, const char *key, json_t **out);

#endif
