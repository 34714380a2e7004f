/* SPDX-License-Identifier: GPL-2.0-or-later */
/* .config files, fragments and requests: see kconfig.h. */
#include "kbuild/kconfig_int.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "core/paths.h"

/* ---- a string-keyed hash map (keys are not owned) ---- */

static uint64_t
hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ull;
	}
	return h;
}

void *
kc_map_get(const struct kc_map *m, const char *key)
{
	size_t i;

	if (!m->cap)
		return NULL;
	for (i = hash_str(key) & (m->cap - 1); m->keys[i]; i = (i + 1) & (m->cap - 1))
		if (!strcmp(m->keys[i], key))
			return m->vals[i];
	return NULL;
}

static void
map_grow(struct kc_map *m)
{
	struct kc_map bigger = { 0 };

	bigger.cap = m->cap ? m->cap * 2 : 64;
	bigger.keys = xcalloc(bigger.cap, sizeof(*bigger.keys));
	bigger.vals = xcalloc(bigger.cap, sizeof(*bigger.vals));
	for (size_t i = 0; i < m->cap; i++)
		if (m->keys[i])
			kc_map_put(&bigger, m->keys[i], m->vals[i]);
	free(m->keys);
	free(m->vals);
	*m = bigger;
}

void
kc_map_put(struct kc_map *m, const char *key, void *val)
{
	size_t i;

	if ((m->n + 1) * 2 > m->cap)
		map_grow(m);
	for (i = hash_str(key) & (m->cap - 1); m->keys[i]; i = (i + 1) & (m->cap - 1))
		if (!strcmp(m->keys[i], key)) {
			m->vals[i] = val;
			return;
		}
	m->keys[i] = key;
	m->vals[i] = val;
	m->n++;
}

void
kc_map_free(struct kc_map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

/* ---- .config values ---- */

struct kconfig_values *
kconfig_values_new(void)
{
	return xcalloc(1, sizeof(struct kconfig_values));
}

void
kconfig_values_free(struct kconfig_values *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->n; i++) {
		free(v->v[i].name);
		free(v->v[i].value);
	}
	free(v->v);
	kc_map_free(&v->map);
	free(v);
}

void
kconfig_values_set(struct kconfig_values *v, const char *name, const char *value)
{
	uintptr_t idx = (uintptr_t)kc_map_get(&v->map, name);

	if (idx) {
		free(v->v[idx - 1].value);
		v->v[idx - 1].value = xstrdup(value);
		return;
	}
	ALLOC_GROW(v->v, v->n + 1, v->alloc);
	v->v[v->n].name = xstrdup(name);
	v->v[v->n].value = xstrdup(value);
	v->n++;
	/* the names are separate allocations: the map's keys survive the array moving */
	kc_map_put(&v->map, v->v[v->n - 1].name, (void *)(uintptr_t)v->n);
}

const char *
kconfig_value(const struct kconfig_values *v, const char *name)
{
	uintptr_t idx = v ? (uintptr_t)kc_map_get(&v->map, name) : 0;

	return idx ? v->v[idx - 1].value : NULL;
}

size_t
kconfig_values_count(const struct kconfig_values *v)
{
	return v->n;
}

void
kconfig_values_at(const struct kconfig_values *v, size_t i, const char **name, const char **value)
{
	*name = v->v[i].name;
	*value = v->v[i].value;
}

void
kconfig_values_format(const struct kconfig_values *v, struct strbuf *out)
{
	for (size_t i = 0; i < v->n; i++) {
		if (!strcmp(v->v[i].value, "n"))
			strbuf_addf(out, "# CONFIG_%s is not set\n", v->v[i].name);
		else
			strbuf_addf(out, "CONFIG_%s=%s\n", v->v[i].name, v->v[i].value);
	}
}

static bool
is_sym_char(int c)
{
	return isalnum(c) || c == '_';
}

/*
 * Parse one line of a .config; name and value point into line (modified).
 * 0: nothing there, 1: an option, -1: a malformed line.
 */
static int
parse_config_line(char *line, char **name, char **value)
{
	char *s = str_trim(line);
	size_t len;

	if (!*s)
		return 0;
	if (*s == '#') {
		const char *suffix = " is not set";

		s++;
		while (*s == ' ')
			s++;
		len = strlen(s);
		if (str_startswith(s, "CONFIG_") && str_endswith(s, suffix)) {
			char *n = s + strlen("CONFIG_");
			char *end = s + len - strlen(suffix);

			*end = '\0';
			for (char *p = n; *p; p++)
				if (!is_sym_char((unsigned char)*p))
					return 0; /* just a comment */
			if (!*n)
				return 0;
			*name = n;
			*value = "n";
			return 1;
		}
		return 0;
	}
	if (!str_startswith(s, "CONFIG_"))
		return -1;
	s += strlen("CONFIG_");
	*name = s;
	while (is_sym_char((unsigned char)*s))
		s++;
	if (s == *name || *s != '=')
		return -1;
	*s++ = '\0';
	if (!*s)
		return -1;
	*value = s;
	return 1;
}

enum status
kconfig_values_parse(struct kconfig_values *v, const char *text, const char *source)
{
	const char *p = text;
	unsigned lineno = 0;

	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		char *line = xstrndup(p, len);
		char *name, *value;
		int r;

		lineno++;
		r = parse_config_line(line, &name, &value);
		if (r < 0) {
			char *shown = str_trim(line);
			enum status rc;

			if (strlen(shown) > 60)
				shown[60] = '\0';
			rc = error(ERR_PARSE,
				   "%s:%u: '%s' is not an option line; write CONFIG_NAME=VALUE or "
				   "'# CONFIG_NAME is not set'",
				   source, lineno, shown);
			free(line);
			return rc;
		}
		if (r > 0)
			kconfig_values_set(v, name, value);
		free(line);
		p += len;
		if (*p == '\n')
			p++;
	}
	return OK;
}

enum status
kconfig_values_load(struct kconfig_values *v, const char *path)
{
	char *text;
	enum status rc = read_file(path, 16u << 20, &text, NULL);

	if (rc != OK)
		return rc;
	rc = kconfig_values_parse(v, text, path);
	free(text);
	return rc;
}

/* ---- requests ---- */

void
kconfig_requests_init(struct kconfig_requests *r)
{
	memset(r, 0, sizeof(*r));
}

void
kconfig_requests_release(struct kconfig_requests *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->v[i].name);
		free(r->v[i].value);
		free(r->v[i].source);
		free(r->v[i].needed_by);
	}
	free(r->v);
	memset(r, 0, sizeof(*r));
}

static struct kconfig_request *
find_request(const struct kconfig_requests *r, const char *name)
{
	for (size_t i = 0; i < r->n; i++)
		if (!strcmp(r->v[i].name, name))
			return &r->v[i];
	return NULL;
}

const struct kconfig_request *
kconfig_requests_find(const struct kconfig_requests *r, const char *name)
{
	return find_request(r, name);
}

void
kconfig_requests_set(struct kconfig_requests *r, const char *name, const char *value,
		     const char *source, enum kconfig_need need)
{
	struct kconfig_request *q = find_request(r, name);

	if (!q) {
		ALLOC_GROW(r->v, r->n + 1, r->alloc);
		q = &r->v[r->n++];
		memset(q, 0, sizeof(*q));
		q->name = xstrdup(name);
		q->need = need;
	}
	free(q->value);
	free(q->source);
	q->value = xstrdup(value);
	q->source = xstrdup(source ? source : "");
	if (need > q->need)
		q->need = need;
}

enum status
kconfig_requests_add_fragment(struct kconfig_requests *r, const char *path, const char *display,
			      enum kconfig_need need)
{
	char *text;
	const char *p;
	unsigned lineno = 0;
	enum status rc = read_file(path, 1u << 20, &text, NULL);

	if (rc != OK)
		return error_prefix(rc, "config fragment '%s'", display);
	for (p = text; *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		char *line = xstrndup(p, len);
		char *name, *value;
		int k;

		lineno++;
		k = parse_config_line(line, &name, &value);
		if (k < 0) {
			char *shown = str_trim(line);

			if (strlen(shown) > 60)
				shown[60] = '\0';
			rc = error(ERR_PARSE,
				   "%s:%u: '%s' is not an option line; write CONFIG_NAME=VALUE or "
				   "'# CONFIG_NAME is not set'",
				   display, lineno, shown);
			free(line);
			break;
		}
		if (k > 0) {
			char *src = xasprintf("%s:%u", display, lineno);

			kconfig_requests_set(r, name, value, src, need);
			free(src);
		}
		free(line);
		p += len;
		if (*p == '\n')
			p++;
	}
	free(text);
	return rc;
}

void
kconfig_requests_need(struct kconfig_requests *r, const char *name, const char *who)
{
	struct kconfig_request *q = find_request(r, name);

	if (!q) {
		kconfig_requests_set(r, name, "y", who, KCONFIG_NEED);
		q = find_request(r, name);
	}
	q->need = KCONFIG_NEED;
	if (!who)
		return;
	if (!q->needed_by) {
		q->needed_by = xstrdup(who);
	} else {
		struct strvec words = STRVEC_INIT;

		strvec_split(&words, q->needed_by, " ");
		if (!strvec_contains(&words, who)) {
			char *joined = xasprintf("%s %s", q->needed_by, who);

			free(q->needed_by);
			q->needed_by = joined;
		}
		strvec_clear(&words);
	}
}
