/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "core/profile.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core/paths.h"

/* A profile file larger than this is a mistake, not a profile. */
#define PROFILE_MAX_BYTES (256 * 1024)

enum key_type {
	TYPE_STRING,
	TYPE_SIZE,
	TYPE_COUNT,
	TYPE_LIST,
};

/* Checks on a value beyond its type. */
enum key_check {
	CHECK_NONE,
	CHECK_FSTYP,   /* a lower-case word: ext4, xfs */
	CHECK_NONZERO, /* a size above 0 */
	CHECK_RANGE,   /* a count in [min, max] */
	CHECK_KCONFIG, /* kernel option names without CONFIG_ */
	CHECK_GROUPS,  /* fstests group names */
	CHECK_ENV,     /* NAME=value */
	CHECK_RELPATH, /* a path below the profiles directory */
};

struct key {
	const char *name;
	enum key_type type;
	bool required;
	size_t offset;
	enum key_check check;
	unsigned min, max;
};

#define FS(field)  offsetof(struct fs_config, field)
#define SET(field) offsetof(struct test_set, field)

static const struct key fs_keys[] = {
	{ "description", TYPE_STRING, true, FS(description), CHECK_NONE, 0, 0 },
	{ "fstyp", TYPE_STRING, true, FS(fstyp), CHECK_FSTYP, 0, 0 },
	{ "mkfs_options", TYPE_STRING, false, FS(mkfs_options), CHECK_NONE, 0, 0 },
	{ "mount_options", TYPE_STRING, false, FS(mount_options), CHECK_NONE, 0, 0 },
	{ "test_size", TYPE_SIZE, true, FS(test_size), CHECK_NONZERO, 0, 0 },
	{ "scratch_size", TYPE_SIZE, true, FS(scratch_size), CHECK_NONZERO, 0, 0 },
	{ "pool_devices", TYPE_COUNT, false, FS(pool_devices), CHECK_RANGE, 2, 16 },
	{ "logdev_size", TYPE_SIZE, false, FS(logdev_size), CHECK_NONZERO, 0, 0 },
	{ "rtdev_size", TYPE_SIZE, false, FS(rtdev_size), CHECK_NONZERO, 0, 0 },
	{ "kconfig", TYPE_LIST, true, FS(kconfig), CHECK_KCONFIG, 0, 0 },
	{ "exclude", TYPE_STRING, false, FS(exclude), CHECK_RELPATH, 0, 0 },
};

static const struct key set_keys[] = {
	{ "description", TYPE_STRING, true, SET(description), CHECK_NONE, 0, 0 },
	{ "groups", TYPE_LIST, false, SET(groups), CHECK_GROUPS, 0, 0 },
	{ "xgroups", TYPE_LIST, false, SET(xgroups), CHECK_GROUPS, 0, 0 },
	{ "env", TYPE_LIST, false, SET(env), CHECK_ENV, 0, 0 },
};

#define MAX_KEYS 16

static bool
all_chars(const char *s, const char *extra, bool upper, bool lower)
{
	if (!*s)
		return false;
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (isdigit(c) || (upper && isupper(c)) || (lower && islower(c)) ||
		    (c && strchr(extra, c)))
			continue;
		return false;
	}
	return true;
}

static enum status
check_list(const char *file, unsigned line, const struct key *k, const struct strvec *sv)
{
	for (size_t i = 0; i < sv->n; i++) {
		const char *w = sv->v[i];

		switch (k->check) {
		case CHECK_KCONFIG:
			if (str_startswith(w, "CONFIG_"))
				return error(ERR_PARSE, "%s:%u: key '%s': write '%s', not '%s'",
					     file, line, k->name, w + strlen("CONFIG_"), w);
			if (!all_chars(w, "_", true, false))
				return error(ERR_PARSE,
					     "%s:%u: key '%s': '%s' is not a kernel option name; "
					     "write it like EXT4_FS",
					     file, line, k->name, w);
			break;
		case CHECK_GROUPS:
			if (strchr(w, ','))
				return error(ERR_PARSE,
					     "%s:%u: key '%s': '%s': separate groups with spaces, "
					     "not commas",
					     file, line, k->name, w);
			if (!all_chars(w, "_-", true, true))
				return error(ERR_PARSE,
					     "%s:%u: key '%s': '%s' is not a group name; "
					     "write it like quick or auto",
					     file, line, k->name, w);
			break;
		case CHECK_ENV: {
			const char *eq = strchr(w, '=');
			char *var = eq ? xstrndup(w, (size_t)(eq - w)) : NULL;
			bool ok = var && all_chars(var, "_", true, true) &&
				  !isdigit((unsigned char)var[0]);

			free(var);
			if (!ok)
				return error(ERR_PARSE,
					     "%s:%u: key '%s': '%s' is not NAME=value; "
					     "write it like SOAK_DURATION=3m",
					     file, line, k->name, w);
			for (size_t j = 0; j < i; j++)
				if (!strncmp(sv->v[j], w, (size_t)(eq - w) + 1))
					return error(ERR_PARSE,
						     "%s:%u: key '%s': '%.*s' is set twice", file,
						     line, k->name, (int)(eq - w), w);
			continue;
		}
		default:
			break;
		}
		for (size_t j = 0; j < i; j++)
			if (!strcmp(sv->v[j], w))
				return error(ERR_PARSE, "%s:%u: key '%s': '%s' is listed twice",
					     file, line, k->name, w);
	}
	return OK;
}

static bool
is_relpath_below(const char *p)
{
	const char *s = p;

	if (!*p || *p == '/')
		return false;
	while (*s) {
		size_t n = strcspn(s, "/");

		if (n == 0 || (n == 2 && !strncmp(s, "..", 2)) || (n == 1 && *s == '.'))
			return false;
		s += n;
		if (*s)
			s++;
	}
	return p[strlen(p) - 1] != '/';
}

static enum status
set_value(const char *file, unsigned line, const struct key *k, const char *value, void *obj)
{
	char *field = (char *)obj + k->offset;
	size_t len = strlen(value);

	if (len >= 2 && (value[0] == '"' || value[0] == '\'') && value[len - 1] == value[0])
		return error(ERR_PARSE,
			     "%s:%u: key '%s': drop the quotes; the value is the rest of the "
			     "line as written",
			     file, line, k->name);
	if (!*value && (k->required || k->type != TYPE_STRING || k->check != CHECK_NONE))
		return error(ERR_PARSE, "%s:%u: key '%s' has no value; %s", file, line, k->name,
			     k->required ? "give it one" : "give it one or leave the line out");

	switch (k->type) {
	case TYPE_STRING:
		if (k->check == CHECK_FSTYP && !all_chars(value, "", false, true))
			return error(ERR_PARSE,
				     "%s:%u: key '%s': '%s' is not a filesystem type; "
				     "write it the way mount -t takes it, like ext4",
				     file, line, k->name, value);
		if (k->check == CHECK_RELPATH && !is_relpath_below(value))
			return error(ERR_PARSE,
				     "%s:%u: key '%s': '%s' must be a path below the profiles "
				     "directory, like exclude/ext4/1k.exclude",
				     file, line, k->name, value);
		*(char **)field = xstrdup(value);
		return OK;
	case TYPE_SIZE: {
		uint64_t v;

		if (parse_size(value, &v) != OK)
			return error_prefix(ERR_PARSE, "%s:%u: key '%s'", file, line, k->name);
		if (k->check == CHECK_NONZERO && v == 0)
			return error(ERR_PARSE, "%s:%u: key '%s': the size must be more than 0",
				     file, line, k->name);
		*(uint64_t *)field = v;
		return OK;
	}
	case TYPE_COUNT: {
		unsigned long v;
		char *end;

		errno = 0;
		v = strtoul(value, &end, 10);
		if (!isdigit((unsigned char)value[0]) || *end || errno || v > 1000000)
			return error(ERR_PARSE,
				     "%s:%u: key '%s': '%s' is not a whole number; write it like 4",
				     file, line, k->name, value);
		if (k->check == CHECK_RANGE && (v < k->min || v > k->max))
			return error(ERR_PARSE,
				     "%s:%u: key '%s': %lu is out of range; use %u to %u", file,
				     line, k->name, v, k->min, k->max);
		*(unsigned *)field = (unsigned)v;
		return OK;
	}
	case TYPE_LIST: {
		struct strvec *sv = (struct strvec *)field;

		strvec_split(sv, value, " \t");
		return check_list(file, line, k, sv);
	}
	}
	BUG("key '%s' has no type", k->name);
}

static enum status
unknown_key(const char *file, unsigned line, const char *key, const struct key *keys, size_t n)
{
	const char *names[MAX_KEYS];
	const char *best;
	struct strbuf sb = STRBUF_INIT;
	enum status rc;

	for (size_t i = 0; i < n; i++)
		names[i] = keys[i].name;
	best = closest_match(key, names, n);
	if (best)
		return error(ERR_PARSE, "%s:%u: unknown key '%s' (did you mean '%s'?)", file, line,
			     key, best);
	for (size_t i = 0; i < n; i++)
		strbuf_addf(&sb, "%s%s", i ? ", " : "", names[i]);
	rc = error(ERR_PARSE, "%s:%u: unknown key '%s'; the keys are: %s", file, line, key, sb.buf);
	strbuf_release(&sb);
	return rc;
}

/*
 * Parse text into obj by the key table; lines[i] gets the line keys[i] was on
 * (0: not given).
 */
static enum status
parse_keys(const char *file, const char *text, const struct key *keys, size_t nkeys, void *obj,
	   unsigned *lines)
{
	const char *p = text;
	unsigned lineno = 0;
	enum status rc = OK;

	if (nkeys > MAX_KEYS)
		BUG("too many keys");
	for (size_t i = 0; i < nkeys; i++)
		lines[i] = 0;
	while (*p && rc == OK) {
		size_t n = strcspn(p, "\n");
		char *buf = xstrndup(p, n);
		char *line = str_trim(buf);
		char *eq, *key, *value;
		size_t i;

		lineno++;
		p += n;
		if (*p)
			p++;
		if (!*line || *line == '#') {
			free(buf);
			continue;
		}
		eq = strchr(line, '=');
		if (!eq) {
			rc = error(ERR_PARSE,
				   "%s:%u: no '=' in '%.60s%s'; write it as 'key = value'", file,
				   lineno, line, strlen(line) > 60 ? "..." : "");
			free(buf);
			break;
		}
		*eq = '\0';
		key = str_trim(line);
		value = str_trim(eq + 1);
		if (!*key) {
			rc = error(ERR_PARSE, "%s:%u: no key before '='; write it as 'key = value'",
				   file, lineno);
			free(buf);
			break;
		}
		for (i = 0; i < nkeys; i++)
			if (!strcmp(keys[i].name, key))
				break;
		if (i == nkeys)
			rc = unknown_key(file, lineno, key, keys, nkeys);
		else if (lines[i])
			rc = error(ERR_PARSE, "%s:%u: key '%s' given twice (first on line %u)",
				   file, lineno, key, lines[i]);
		else {
			lines[i] = lineno;
			rc = set_value(file, lineno, &keys[i], value, obj);
		}
		free(buf);
	}
	if (rc != OK)
		return rc;
	for (size_t i = 0; i < nkeys; i++)
		if (keys[i].required && !lines[i])
			return error(ERR_PARSE, "%s: missing key '%s'", file, keys[i].name);
	return OK;
}

static enum status
fs_config_parse_lines(const char *file, const char *name, const char *text, struct fs_config *out,
		      unsigned *lines)
{
	enum status rc;
	const char *slash = strchr(name, '/');

	memset(out, 0, sizeof(*out));
	strvec_init(&out->kconfig);
	out->name = xstrdup(name);
	out->file = xstrdup(file);
	rc = parse_keys(file, text, fs_keys, ARRAY_SIZE(fs_keys), out, lines);
	if (rc == OK && slash &&
	    (strlen(out->fstyp) != (size_t)(slash - name) ||
	     strncmp(out->fstyp, name, (size_t)(slash - name)))) {
		unsigned line = 0;

		for (size_t i = 0; i < ARRAY_SIZE(fs_keys); i++)
			if (!strcmp(fs_keys[i].name, "fstyp"))
				line = lines[i];
		rc = error(ERR_PARSE,
			   "%s:%u: key 'fstyp': '%s' does not match the directory '%.*s'; "
			   "a configuration lives in profiles/fs/FSTYP/",
			   file, line, out->fstyp, (int)(slash - name), name);
	}
	if (rc != OK) {
		fs_config_release(out);
		return rc;
	}
	if (!out->mkfs_options)
		out->mkfs_options = xstrdup("");
	if (!out->mount_options)
		out->mount_options = xstrdup("");
	return OK;
}

enum status
fs_config_parse(const char *file, const char *name, const char *text, struct fs_config *out)
{
	unsigned lines[MAX_KEYS];

	return fs_config_parse_lines(file, name, text, out, lines);
}

enum status
test_set_parse(const char *file, const char *name, const char *text, struct test_set *out)
{
	unsigned lines[MAX_KEYS];
	enum status rc;

	memset(out, 0, sizeof(*out));
	strvec_init(&out->groups);
	strvec_init(&out->xgroups);
	strvec_init(&out->env);
	out->name = xstrdup(name);
	out->file = xstrdup(file);
	rc = parse_keys(file, text, set_keys, ARRAY_SIZE(set_keys), out, lines);
	if (rc != OK)
		test_set_release(out);
	return rc;
}

void
fs_config_release(struct fs_config *c)
{
	free(c->name);
	free(c->file);
	free(c->description);
	free(c->fstyp);
	free(c->mkfs_options);
	free(c->mount_options);
	strvec_clear(&c->kconfig);
	free(c->exclude);
	memset(c, 0, sizeof(*c));
	strvec_init(&c->kconfig);
}

void
test_set_release(struct test_set *s)
{
	free(s->name);
	free(s->file);
	free(s->description);
	strvec_clear(&s->groups);
	strvec_clear(&s->xgroups);
	strvec_clear(&s->env);
	memset(s, 0, sizeof(*s));
	strvec_init(&s->groups);
	strvec_init(&s->xgroups);
	strvec_init(&s->env);
}

void
profiles_release(struct profiles *p)
{
	for (size_t i = 0; i < p->nconfigs; i++)
		fs_config_release(&p->configs[i]);
	for (size_t i = 0; i < p->nsets; i++)
		test_set_release(&p->sets[i]);
	free(p->configs);
	free(p->sets);
	free(p->dir);
	memset(p, 0, sizeof(*p));
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The entries of dir not starting with '.', sorted. */
static enum status
list_dir(const char *dir, struct strvec *out)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return error(errno == ENOENT ? ERR_NOTFOUND : ERR_IO,
			     "cannot open '%s': %s; set FSWB_DATADIR to the directory holding "
			     "profiles/",
			     dir, strerror(errno));
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			strvec_push(out, e->d_name);
	closedir(d);
	if (out->n)
		qsort(out->v, out->n, sizeof(*out->v), cmp_str);
	return OK;
}

/* A name usable on a command line and in a comma-separated list. */
static bool
good_name(const char *s)
{
	return all_chars(s, "_.-", true, true);
}

static enum status
read_profile(const char *file, char **text)
{
	size_t len;
	enum status rc = read_file(file, PROFILE_MAX_BYTES, text, &len);

	if (rc != OK)
		return rc;
	if (strlen(*text) != len) {
		free(*text);
		*text = NULL;
		return error(ERR_PARSE, "%s: contains a NUL byte; a profile is a text file", file);
	}
	return OK;
}

static enum status
check_exclude(const char *dir, struct fs_config *c, const unsigned *lines)
{
	unsigned line = 0;
	char *path;

	if (!c->exclude)
		return OK;
	for (size_t i = 0; i < ARRAY_SIZE(fs_keys); i++)
		if (!strcmp(fs_keys[i].name, "exclude"))
			line = lines[i];
	path = path_join(dir, c->exclude);
	if (!path_exists(path) || path_is_dir(path)) {
		enum status rc = error(ERR_PARSE,
				       "%s:%u: key 'exclude': there is no file '%s'; create it or "
				       "drop the line",
				       c->file, line, path);

		free(path);
		return rc;
	}
	free(c->exclude);
	c->exclude = path;
	return OK;
}

static enum status
load_configs(const char *dir, struct profiles *out)
{
	char *fsdir = path_join(dir, "fs");
	struct strvec fstypes = STRVEC_INIT;
	size_t alloc = 0;
	enum status rc = list_dir(fsdir, &fstypes);

	for (size_t i = 0; rc == OK && i < fstypes.n; i++) {
		char *sub = path_join(fsdir, fstypes.v[i]);
		struct strvec files = STRVEC_INIT;

		if (!path_is_dir(sub)) {
			if (str_endswith(fstypes.v[i], ".conf"))
				rc = error(ERR_PARSE,
					   "%s: a configuration belongs in a filesystem directory; "
					   "move it to %s/FSTYP/%s",
					   sub, fsdir, fstypes.v[i]);
			free(sub);
			continue;
		}
		rc = list_dir(sub, &files);
		for (size_t j = 0; rc == OK && j < files.n; j++) {
			const char *f = files.v[j];
			char *file, *text = NULL, *cfg, *name;
			unsigned lines[MAX_KEYS];

			if (!str_endswith(f, ".conf"))
				continue;
			file = path_join(sub, f);
			cfg = xstrndup(f, strlen(f) - strlen(".conf"));
			name = xasprintf("%s/%s", fstypes.v[i], cfg);
			if (!good_name(fstypes.v[i]) || !good_name(cfg)) {
				rc = error(ERR_PARSE,
					   "%s: '%s' is not a usable configuration name; use only "
					   "letters, digits, '-', '_' and '.'",
					   file, name);
			} else if ((rc = read_profile(file, &text)) == OK) {
				ALLOC_GROW(out->configs, out->nconfigs + 1, alloc);
				rc = fs_config_parse_lines(file, name, text,
							   &out->configs[out->nconfigs], lines);
				if (rc == OK) {
					out->nconfigs++;
					rc = check_exclude(dir, &out->configs[out->nconfigs - 1],
							   lines);
				}
			}
			free(text);
			free(name);
			free(cfg);
			free(file);
		}
		strvec_clear(&files);
		free(sub);
	}
	if (rc == OK && !out->nconfigs)
		rc = error(ERR_NOTFOUND,
			   "'%s' has no filesystem configurations; they are files FSTYP/NAME.conf",
			   fsdir);
	strvec_clear(&fstypes);
	free(fsdir);
	return rc;
}

static enum status
load_sets(const char *dir, struct profiles *out)
{
	char *setdir = path_join(dir, "sets");
	struct strvec files = STRVEC_INIT;
	size_t alloc = 0;
	enum status rc = list_dir(setdir, &files);

	for (size_t i = 0; rc == OK && i < files.n; i++) {
		const char *f = files.v[i];
		char *file, *text = NULL, *name;

		if (!str_endswith(f, ".conf"))
			continue;
		file = path_join(setdir, f);
		name = xstrndup(f, strlen(f) - strlen(".conf"));
		if (!good_name(name)) {
			rc = error(ERR_PARSE,
				   "%s: '%s' is not a usable test set name; use only letters, "
				   "digits, '-', '_' and '.'",
				   file, name);
		} else if ((rc = read_profile(file, &text)) == OK) {
			ALLOC_GROW(out->sets, out->nsets + 1, alloc);
			rc = test_set_parse(file, name, text, &out->sets[out->nsets]);
			if (rc == OK)
				out->nsets++;
		}
		free(text);
		free(name);
		free(file);
	}
	if (rc == OK && !out->nsets)
		rc = error(ERR_NOTFOUND, "'%s' has no test sets; they are files NAME.conf", setdir);
	strvec_clear(&files);
	free(setdir);
	return rc;
}

static int
cmp_config(const void *a, const void *b)
{
	return strcmp(((const struct fs_config *)a)->name, ((const struct fs_config *)b)->name);
}

static int
cmp_set(const void *a, const void *b)
{
	return strcmp(((const struct test_set *)a)->name, ((const struct test_set *)b)->name);
}

enum status
profiles_load(const char *dir, struct profiles *out)
{
	enum status rc;

	memset(out, 0, sizeof(*out));
	out->dir = xstrdup(dir);
	rc = load_configs(dir, out);
	if (rc == OK)
		rc = load_sets(dir, out);
	if (rc != OK) {
		profiles_release(out);
		return rc;
	}
	qsort(out->configs, out->nconfigs, sizeof(*out->configs), cmp_config);
	qsort(out->sets, out->nsets, sizeof(*out->sets), cmp_set);
	return OK;
}

const struct fs_config *
profiles_config(const struct profiles *p, const char *name)
{
	for (size_t i = 0; i < p->nconfigs; i++)
		if (!strcmp(p->configs[i].name, name))
			return &p->configs[i];
	return NULL;
}

const struct test_set *
profiles_set(const struct profiles *p, const char *name)
{
	for (size_t i = 0; i < p->nsets; i++)
		if (!strcmp(p->sets[i].name, name))
			return &p->sets[i];
	return NULL;
}

/* "ext4" for "ext4/4k": the length of the filesystem part. */
static size_t
fs_len(const char *name)
{
	return strcspn(name, "/");
}

static bool
has_fstyp(const struct profiles *p, const char *fs, size_t len)
{
	for (size_t i = 0; i < p->nconfigs; i++)
		if (fs_len(p->configs[i].name) == len && !strncmp(p->configs[i].name, fs, len))
			return true;
	return false;
}

/* "ext4/1k, ext4/4k, ..." for the configurations of one filesystem (NULL: all). */
static void
list_configs(const struct profiles *p, const char *fs, struct strbuf *sb)
{
	size_t len = fs ? strlen(fs) : 0;
	bool first = true;

	for (size_t i = 0; i < p->nconfigs; i++) {
		const char *n = p->configs[i].name;

		if (fs && (fs_len(n) != len || strncmp(n, fs, len)))
			continue;
		strbuf_addf(sb, "%s%s", first ? "" : ", ", n);
		first = false;
	}
}

enum status
profiles_resolve_config(const struct profiles *p, const char *arg, const struct fs_config **out)
{
	const struct fs_config *c = profiles_config(p, arg);
	struct strbuf sb = STRBUF_INIT;
	struct strvec cands = STRVEC_INIT;
	const char *best;
	enum status rc;

	*out = NULL;
	if (c) {
		*out = c;
		return OK;
	}
	if (!*arg)
		return error(ERR_NOTFOUND, "no configuration named; give one like ext4/4k");
	if (!strchr(arg, '/')) {
		if (has_fstyp(p, arg, strlen(arg))) {
			char *def = xasprintf("%s/default", arg);
			char *k4 = xasprintf("%s/4k", arg);

			c = profiles_config(p, def);
			if (!c)
				c = profiles_config(p, k4);
			free(def);
			free(k4);
			if (c) {
				*out = c;
				return OK;
			}
			list_configs(p, arg, &sb);
			rc = error(ERR_NOTFOUND,
				   "'%s' has no default configuration; choose one of: %s", arg,
				   sb.buf);
			strbuf_release(&sb);
			return rc;
		}
		size_t matches = 0;

		for (size_t i = 0; i < p->nconfigs; i++) {
			const char *n = p->configs[i].name;

			if (!n[fs_len(n)] || strcmp(n + fs_len(n) + 1, arg))
				continue;
			strbuf_addf(&sb, "%s%s", matches ? ", " : "", n);
			c = &p->configs[i];
			matches++;
		}
		if (matches == 1) {
			strbuf_release(&sb);
			*out = c;
			return OK;
		}
		if (matches > 1) {
			rc = error(ERR_INVALID, "configuration '%s' is ambiguous; say which: %s",
				   arg, sb.buf);
			strbuf_release(&sb);
			return rc;
		}
	}

	/* Not found: suggest the closest full name or filesystem. */
	for (size_t i = 0; i < p->nconfigs; i++) {
		const char *n = p->configs[i].name;
		char *fs = xstrndup(n, fs_len(n));

		strvec_push(&cands, n);
		if (!strvec_contains(&cands, fs))
			strvec_push(&cands, fs);
		free(fs);
	}
	best = closest_match(arg, (const char *const *)cands.v, cands.n);
	if (best) {
		rc = error(ERR_NOTFOUND, "unknown configuration '%s' (did you mean '%s'?)", arg,
			   best);
	} else {
		char *fs = xstrndup(arg, fs_len(arg));

		if (strchr(arg, '/') && has_fstyp(p, fs, strlen(fs))) {
			list_configs(p, fs, &sb);
			rc = error(ERR_NOTFOUND, "unknown configuration '%s'; %s has: %s", arg, fs,
				   sb.buf);
		} else {
			list_configs(p, NULL, &sb);
			rc = error(ERR_NOTFOUND, "unknown configuration '%s'; choose one of: %s",
				   arg, sb.buf);
		}
		free(fs);
	}
	strvec_clear(&cands);
	strbuf_release(&sb);
	return rc;
}
