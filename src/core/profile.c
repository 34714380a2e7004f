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
	CHECK_FSTYP,	 /* a lower-case word: ext4, xfs */
	CHECK_NONZERO,	 /* a size above 0 */
	CHECK_RANGE,	 /* a count in [min, max] */
	CHECK_KCONFIG,	 /* kernel option names without CONFIG_ */
	CHECK_GROUPS,	 /* fstests group names */
	CHECK_ENV,	 /* NAME=value */
	CHECK_RELPATH,	 /* a path below the profiles directory */
	CHECK_NAMES,	 /* configuration names without the filesystem */
	CHECK_NONE_WORD, /* the word "none" */
	CHECK_NFS_WORD,	 /* the word "nfs" */
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
	{ "devices", TYPE_STRING, false, FS(devices), CHECK_NONE_WORD, 0, 0 },
	{ "base", TYPE_STRING, false, FS(base), CHECK_FSTYP, 0, 0 },
	{ "serve", TYPE_STRING, false, FS(serve), CHECK_NFS_WORD, 0, 0 },
	{ "test_size", TYPE_SIZE, false, FS(test_size), CHECK_NONZERO, 0, 0 },
	{ "scratch_size", TYPE_SIZE, false, FS(scratch_size), CHECK_NONZERO, 0, 0 },
	{ "pool_devices", TYPE_COUNT, false, FS(pool_devices), CHECK_RANGE, 2, 16 },
	{ "logdev_size", TYPE_SIZE, false, FS(logdev_size), CHECK_NONZERO, 0, 0 },
	{ "rtdev_size", TYPE_SIZE, false, FS(rtdev_size), CHECK_NONZERO, 0, 0 },
	{ "kconfig", TYPE_LIST, true, FS(kconfig), CHECK_KCONFIG, 0, 0 },
	{ "aliases", TYPE_LIST, false, FS(aliases), CHECK_NAMES, 0, 0 },
	{ "env", TYPE_LIST, false, FS(env), CHECK_ENV, 0, 0 },
	{ "exclude", TYPE_STRING, false, FS(exclude), CHECK_RELPATH, 0, 0 },
};

static const struct key set_keys[] = {
	{ "description", TYPE_STRING, true, SET(description), CHECK_NONE, 0, 0 },
	{ "groups", TYPE_LIST, false, SET(groups), CHECK_GROUPS, 0, 0 },
	{ "xgroups", TYPE_LIST, false, SET(xgroups), CHECK_GROUPS, 0, 0 },
	{ "env", TYPE_LIST, false, SET(env), CHECK_ENV, 0, 0 },
};

#define MAX_KEYS 20

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

/* How fstests reads a variable a profile may set. */
enum env_kind {
	ENV_DURATION, /* seconds; stored converted from check's suffixes */
	ENV_FACTOR,   /* a whole number of at least 1, used in shell arithmetic */
	ENV_OPTIONS,  /* program options, word-split unquoted into a command line */
	ENV_COMMANDS, /* xfs_io command names */
	ENV_SWITCH,   /* on when it is exactly 1 ([ "$X" == "1" ]) */
};

static const struct {
	const char *name;
	enum env_kind kind;
} env_vars[] = {
	{ "SOAK_DURATION", ENV_DURATION }, { "FUZZ_REWRITE_DURATION", ENV_DURATION },
	{ "TIME_FACTOR", ENV_FACTOR },	   { "LOAD_FACTOR", ENV_FACTOR },
	{ "FSX_AVOID", ENV_OPTIONS },	   { "FSSTRESS_AVOID", ENV_OPTIONS },
	{ "XFS_IO_AVOID", ENV_COMMANDS },  { "DISABLE_UDF_TEST", ENV_SWITCH },
};

/* The variables src/fstests/localconfig.c writes itself. */
static const char *const fswb_vars[] = {
	"FSTYP",
	"TEST_DEV",
	"TEST_DIR",
	"SCRATCH_DEV",
	"SCRATCH_DEV_POOL",
	"SCRATCH_MNT",
	"MKFS_OPTIONS",
	"MOUNT_OPTIONS",
	"USE_EXTERNAL",
	"TEST_LOGDEV",
	"SCRATCH_LOGDEV",
	"TEST_RTDEV",
	"SCRATCH_RTDEV",
	"LOGWRITES_DEV",
	"RESULT_BASE",
	"TEST_FS_MOUNT_OPTS",
	"NFS_MOUNT_OPTIONS",
};

bool
profiles_fswb_var(const char *name, size_t len)
{
	for (size_t i = 0; i < ARRAY_SIZE(fswb_vars); i++)
		if (strlen(fswb_vars[i]) == len && !strncmp(fswb_vars[i], name, len))
			return true;
	return false;
}

/*
 * A duration as check converts SOAK_DURATION (a number, then s, m, h, d or
 * w), in whole seconds; false when it is not one.
 */
static bool
parse_duration(const char *v, unsigned long long *secs)
{
	static const struct {
		char suffix;
		unsigned long long mult;
	} units[] = { { '\0', 1 },   { 's', 1 },     { 'm', 60 },
		      { 'h', 3600 }, { 'd', 86400 }, { 'w', 604800 } };
	size_t len = strspn(v, "0123456789."), dots = 0;
	double n;

	for (size_t i = 0; i < len; i++)
		dots += v[i] == '.';
	/* digits, at most one '.', then at most one suffix letter */
	if (!isdigit((unsigned char)v[0]) || len > 15 || dots > 1 || (v[len] && v[len + 1]))
		return false;
	n = strtod(v, NULL);
	for (size_t i = 0; i < ARRAY_SIZE(units); i++)
		if (v[len] == units[i].suffix) {
			*secs = (unsigned long long)(n * (double)units[i].mult);
			return true;
		}
	return false;
}

/* Characters a value fstests splits into words unquoted must not hold. */
static const char shell_special[] = "'\"\\$`;&|<>()*?[]{}~!#";

/*
 * Check one "NAME=value" for how fstests reads NAME; *word may be replaced
 * (a duration becomes seconds).
 */
static enum status
check_env_word(const char *file, unsigned line, const char *key, char **word)
{
	const char *w = *word, *eq = strchr(w, '=');
	size_t nlen = eq ? (size_t)(eq - w) : 0;
	const char *value = eq ? eq + 1 : NULL;
	struct strbuf known = STRBUF_INIT;
	enum status rc;

	if (profiles_fswb_var(w, nlen))
		return error(ERR_PARSE,
			     "%s:%u: key '%s': fswb sets %.*s itself, from the "
			     "configuration and the devices it gives it",
			     file, line, key, (int)nlen, w);
	for (size_t i = 0; i < ARRAY_SIZE(env_vars); i++) {
		unsigned long long secs;
		char *end;

		if (strlen(env_vars[i].name) != nlen || strncmp(env_vars[i].name, w, nlen))
			continue;
		switch (env_vars[i].kind) {
		case ENV_DURATION:
			if (!parse_duration(value, &secs))
				return error(ERR_PARSE,
					     "%s:%u: key '%s': %s '%s' is not a duration; write "
					     "seconds (180) or a number with s, m, h, d or w (3m)",
					     file, line, key, env_vars[i].name, value);
			free(*word);
			*word = xasprintf("%s=%llu", env_vars[i].name, secs);
			return OK;
		case ENV_FACTOR:
			errno = 0;
			if (!isdigit((unsigned char)value[0]) || strtoul(value, &end, 10) < 1 ||
			    *end || errno)
				return error(ERR_PARSE,
					     "%s:%u: key '%s': %s '%s' is not a whole number of "
					     "at least 1; fstests multiplies with it",
					     file, line, key, env_vars[i].name, value);
			return OK;
		case ENV_SWITCH:
			if (strcmp(value, "1"))
				return error(ERR_PARSE,
					     "%s:%u: key '%s': %s '%s': fstests takes only 1 "
					     "as on; write 1, or leave the setting out",
					     file, line, key, env_vars[i].name, value);
			return OK;
		case ENV_OPTIONS:
		case ENV_COMMANDS:
			if (!*value || strpbrk(value, shell_special))
				return error(ERR_PARSE,
					     "%s:%u: key '%s': %s '%s': fstests puts it unquoted "
					     "on a command line; give words without quotes or "
					     "shell characters",
					     file, line, key, env_vars[i].name, value);
			if (env_vars[i].kind == ENV_OPTIONS && value[0] != '-')
				return error(ERR_PARSE,
					     "%s:%u: key '%s': %s '%s' must start with an option, "
					     "like -C",
					     file, line, key, env_vars[i].name, value);
			return OK;
		}
	}
	for (size_t i = 0; i < ARRAY_SIZE(env_vars); i++)
		strbuf_addf(&known, "%s%s", i ? ", " : "", env_vars[i].name);
	rc = error(ERR_PARSE,
		   "%s:%u: key '%s': fswb does not know how fstests reads '%.*s'; the "
		   "variables it takes are %s",
		   file, line, key, (int)nlen, w, known.buf);
	strbuf_release(&known);
	return rc;
}

/* Whether sv already sets the variable of "NAME=value" w (before index end). */
static bool
env_has(const struct strvec *sv, size_t end, const char *w)
{
	size_t n = strcspn(w, "=") + 1;

	for (size_t j = 0; j < end; j++)
		if (!strncmp(sv->v[j], w, n))
			return true;
	return false;
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
			enum status rc;

			free(var);
			if (!ok)
				return error(ERR_PARSE,
					     "%s:%u: key '%s': '%s' is not NAME=value; "
					     "write it like SOAK_DURATION=3m",
					     file, line, k->name, w);
			if (env_has(sv, i, w))
				return error(ERR_PARSE, "%s:%u: key '%s': '%.*s' is set twice",
					     file, line, k->name, (int)(eq - w), w);
			if ((rc = check_env_word(file, line, k->name, &sv->v[i])) != OK)
				return rc;
			continue;
		}
		case CHECK_NAMES:
			if (!all_chars(w, "_.-", true, true))
				return error(ERR_PARSE,
					     "%s:%u: key '%s': '%s' is not a configuration name; "
					     "use only letters, digits, '-', '_' and '.'",
					     file, line, k->name, w);
			break;
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
		if (k->check == CHECK_NONE_WORD && strcmp(value, "none"))
			return error(ERR_PARSE,
				     "%s:%u: key '%s': '%s' is not what it takes; write none "
				     "(no block devices), or leave the line out",
				     file, line, k->name, value);
		if (k->check == CHECK_NFS_WORD && strcmp(value, "nfs"))
			return error(ERR_PARSE,
				     "%s:%u: key '%s': '%s' is not what it takes; write nfs "
				     "(the base file systems exported over NFS in the guest), "
				     "or leave the line out",
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

/* `env.NAME = value`: one variable, the value running to the end of the line. */
static enum status
set_env_key(const char *file, unsigned line, const struct key *k, const char *name,
	    const char *value, void *obj)
{
	struct strvec *sv = (struct strvec *)((char *)obj + k->offset);
	enum status rc;
	char *word;

	if (!all_chars(name, "_", true, true) || isdigit((unsigned char)name[0]))
		return error(ERR_PARSE,
			     "%s:%u: 'env.%s' does not name a variable; write it like "
			     "env.FSX_AVOID = -C -I",
			     file, line, name);
	if (!*value)
		return error(ERR_PARSE, "%s:%u: key 'env.%s' has no value; give it one", file, line,
			     name);
	word = xasprintf("%s=%s", name, value);
	if (env_has(sv, sv->n, word)) {
		free(word);
		return error(ERR_PARSE, "%s:%u: key 'env.%s': '%s' is set twice", file, line, name,
			     name);
	}
	strvec_push(sv, word);
	free(word);
	word = xasprintf("env.%s", name);
	rc = check_env_word(file, line, word, &sv->v[sv->n - 1]);
	free(word);
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
			if (!strcmp(keys[i].name, key) ||
			    (keys[i].check == CHECK_ENV && str_startswith(key, "env.")))
				break;
		if (i == nkeys)
			rc = unknown_key(file, lineno, key, keys, nkeys);
		else if (strcmp(keys[i].name, key))
			rc = set_env_key(file, lineno, &keys[i], key + strlen("env."), value, obj);
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

/* The line of fs_keys' key name in lines (0: not given). */
static unsigned
key_line(const unsigned *lines, const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(fs_keys); i++)
		if (!strcmp(fs_keys[i].name, name))
			return lines[i];
	BUG("no key '%s'", name);
}

/*
 * The sizes are required unless `devices = none`, which refuses every key
 * that makes or formats a device.
 */
static enum status
check_devices(const char *file, const struct fs_config *c, const unsigned *lines)
{
	static const char *const device_keys[] = { "test_size",	  "scratch_size", "pool_devices",
						   "logdev_size", "rtdev_size",	  "mkfs_options" };

	for (size_t i = 0; i < ARRAY_SIZE(device_keys); i++) {
		unsigned line = key_line(lines, device_keys[i]);

		if (c->devices && line)
			return error(ERR_PARSE,
				     "%s:%u: key '%s': the configuration has no devices "
				     "(devices = none); leave the line out",
				     file, line, device_keys[i]);
		if (!c->devices && i < 2 && !line)
			return error(ERR_PARSE,
				     "%s: missing key '%s' (or devices = none, for a file system "
				     "without block devices)",
				     file, device_keys[i]);
	}
	return OK;
}

/*
 * base: an overlay requires one (the file system under it), and so does
 * `serve = nfs` (the file system exported over NFS); nothing else has one.
 */
static enum status
check_base(const char *file, const struct fs_config *c, const unsigned *lines)
{
	bool overlay = !strcmp(c->fstyp, "overlay");

	if (c->serve && strcmp(c->fstyp, c->serve))
		return error(ERR_PARSE,
			     "%s:%u: key 'serve': a configuration served over %s is of "
			     "fstyp = %s (the base key names the file system exported)",
			     file, key_line(lines, "serve"), c->serve, c->serve);
	if (c->serve && c->devices)
		return error(ERR_PARSE,
			     "%s:%u: key 'devices': a file system served over %s is exported "
			     "from TEST and SCRATCH disks; leave the line out",
			     file, key_line(lines, "devices"), c->serve);
	if (!c->base && overlay)
		return error(ERR_PARSE,
			     "%s: missing key 'base' (the file system under the overlay, like "
			     "base = ext4)",
			     file);
	if (!c->base && c->serve)
		return error(ERR_PARSE,
			     "%s: missing key 'base' (the file system exported over %s, like "
			     "base = ext4)",
			     file, c->serve);
	if (c->base && ((!overlay && !c->serve) || !strcmp(c->base, c->fstyp)))
		return error(ERR_PARSE,
			     "%s:%u: key 'base': only an overlay (fstyp = overlay) or a file "
			     "system served from local disks (serve = nfs) has a base, and it "
			     "is another file system",
			     file, key_line(lines, "base"));
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
	strvec_init(&out->aliases);
	strvec_init(&out->env);
	strvec_init(&out->exclude_tests);
	strvec_init(&out->xgroups);
	out->name = xstrdup(name);
	out->file = xstrdup(file);
	rc = parse_keys(file, text, fs_keys, ARRAY_SIZE(fs_keys), out, lines);
	if (rc == OK && slash &&
	    (strlen(out->fstyp) != (size_t)(slash - name) ||
	     strncmp(out->fstyp, name, (size_t)(slash - name)))) {
		rc = error(ERR_PARSE,
			   "%s:%u: key 'fstyp': '%s' does not match the directory '%.*s'; "
			   "a configuration lives in profiles/fs/FSTYP/",
			   file, key_line(lines, "fstyp"), out->fstyp, (int)(slash - name), name);
	}
	if (rc == OK)
		rc = check_devices(file, out, lines);
	if (rc == OK)
		rc = check_base(file, out, lines);
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
	free(c->devices);
	free(c->base);
	free(c->serve);
	strvec_clear(&c->kconfig);
	strvec_clear(&c->aliases);
	strvec_clear(&c->env);
	free(c->exclude);
	strvec_clear(&c->exclude_tests);
	strvec_clear(&c->xgroups);
	memset(c, 0, sizeof(*c));
	strvec_init(&c->kconfig);
	strvec_init(&c->aliases);
	strvec_init(&c->env);
	strvec_init(&c->exclude_tests);
	strvec_init(&c->xgroups);
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
	for (size_t i = 0; i < p->nlists; i++) {
		free(p->lists[i].name);
		free(p->lists[i].file);
		strvec_clear(&p->lists[i].configs);
	}
	free(p->configs);
	free(p->sets);
	free(p->lists);
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

/* "ext4/033": a test directory and a test, as check -E matches them. */
static bool
is_test_id(const char *s)
{
	const char *slash = strchr(s, '/');
	char *dir;
	bool ok;

	if (!slash || slash == s)
		return false;
	dir = xstrndup(s, (size_t)(slash - s));
	ok = all_chars(dir, "", false, true) && all_chars(slash + 1, "_-", true, true);
	free(dir);
	return ok;
}

/* Add the entries of one exclude file (see profile.h) to c. */
static enum status
read_exclude_file(const char *path, struct fs_config *c)
{
	char *text = NULL;
	const char *p;
	unsigned lineno = 0;
	enum status rc = read_profile(path, &text);

	for (p = text; rc == OK && p && *p;) {
		size_t n = strcspn(p, "\n");
		char *buf = xstrndup(p, n);
		char *line = str_trim(buf), *hash = strchr(line, '#'), *entry;

		lineno++;
		p += n + (p[n] ? 1 : 0);
		if (!*line || hash == line) {
			free(buf);
			continue;
		}
		if (!hash) {
			rc = error(ERR_PARSE, "%s:%u: '%s' does not say why; add '# the reason'",
				   path, lineno, line);
			free(buf);
			break;
		}
		*hash = '\0';
		entry = str_trim(line);
		if (str_startswith(entry, "-x") && isspace((unsigned char)entry[2])) {
			const char *group = str_trim(entry + 2);

			if (!all_chars(group, "_-", true, true))
				rc = error(ERR_PARSE,
					   "%s:%u: '%s' is not a group name; write it like "
					   "'-x dax'",
					   path, lineno, group);
			else if (!strvec_contains(&c->xgroups, group))
				strvec_push(&c->xgroups, group);
		} else if (!is_test_id(entry)) {
			rc = error(ERR_PARSE,
				   "%s:%u: '%s' is neither a test (ext4/033) nor '-x GROUP'", path,
				   lineno, entry);
		} else if (!strvec_contains(&c->exclude_tests, entry)) {
			strvec_push(&c->exclude_tests, entry);
		}
		free(buf);
	}
	free(text);
	return rc;
}

/*
 * Fill c's exclude_tests and xgroups from global.exclude, FS.exclude and
 * its own file.
 */
static enum status
load_excludes(const char *dir, struct fs_config *c)
{
	char *files[3];
	enum status rc = OK;

	files[0] = xasprintf("%s/exclude/global.exclude", dir);
	files[1] = xasprintf("%s/exclude/%s.exclude", dir, c->fstyp);
	files[2] = c->exclude ? xstrdup(c->exclude) : NULL;
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		if (rc == OK && files[i] && path_exists(files[i]))
			rc = read_exclude_file(files[i], c);
		free(files[i]);
	}
	if (c->exclude_tests.n)
		qsort(c->exclude_tests.v, c->exclude_tests.n, sizeof(char *), cmp_str);
	return rc;
}

/*
 * Call fn for each file profiles/fs/FS/NAME<suffix>, in order, with FS,
 * NAME, the file's path and an allocation count it may keep; what (a
 * "configuration", a "list") names it in messages. Stops at the first error.
 */
static enum status
walk_fs_files(const char *dir, const char *suffix, const char *what,
	      enum status (*fn)(struct profiles *, const char *, const char *, const char *,
				const char *, size_t *),
	      struct profiles *out)
{
	char *fsdir = path_join(dir, "fs");
	struct strvec fstypes = STRVEC_INIT;
	size_t alloc = 0;
	enum status rc = list_dir(fsdir, &fstypes);

	for (size_t i = 0; rc == OK && i < fstypes.n; i++) {
		char *sub = path_join(fsdir, fstypes.v[i]);
		struct strvec files = STRVEC_INIT;

		if (!path_is_dir(sub)) {
			if (str_endswith(fstypes.v[i], suffix))
				rc = error(ERR_PARSE,
					   "%s: a %s belongs in a filesystem directory; "
					   "move it to %s/FSTYP/%s",
					   sub, what, fsdir, fstypes.v[i]);
			free(sub);
			continue;
		}
		rc = list_dir(sub, &files);
		for (size_t j = 0; rc == OK && j < files.n; j++) {
			const char *f = files.v[j];
			char *file, *base, *name;

			if (!str_endswith(f, suffix))
				continue;
			file = path_join(sub, f);
			base = xstrndup(f, strlen(f) - strlen(suffix));
			name = xasprintf("%s/%s", fstypes.v[i], base);
			if (!good_name(fstypes.v[i]) || !good_name(base))
				rc = error(ERR_PARSE,
					   "%s: '%s' is not a usable %s name; use only "
					   "letters, digits, '-', '_' and '.'",
					   file, name, what);
			else
				rc = fn(out, dir, fstypes.v[i], base, file, &alloc);
			free(name);
			free(base);
			free(file);
		}
		strvec_clear(&files);
		free(sub);
	}
	strvec_clear(&fstypes);
	free(fsdir);
	return rc;
}

static enum status
config_file(struct profiles *out, const char *dir, const char *fs, const char *cfg,
	    const char *file, size_t *alloc)
{
	char *text = NULL, *name = xasprintf("%s/%s", fs, cfg);
	unsigned lines[MAX_KEYS];
	enum status rc = read_profile(file, &text);

	if (rc == OK) {
		ALLOC_GROW(out->configs, out->nconfigs + 1, *alloc);
		rc = fs_config_parse_lines(file, name, text, &out->configs[out->nconfigs], lines);
	}
	if (rc == OK) {
		out->nconfigs++;
		rc = check_exclude(dir, &out->configs[out->nconfigs - 1], lines);
	}
	if (rc == OK)
		rc = load_excludes(dir, &out->configs[out->nconfigs - 1]);
	free(text);
	free(name);
	return rc;
}

static enum status
load_configs(const char *dir, struct profiles *out)
{
	enum status rc = walk_fs_files(dir, ".conf", "configuration", config_file, out);

	if (rc == OK && !out->nconfigs)
		rc = error(ERR_NOTFOUND,
			   "'%s/fs' has no filesystem configurations; they are files "
			   "FSTYP/NAME.conf",
			   dir);
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

static int
cmp_list(const void *a, const void *b)
{
	return strcmp(((const struct config_list *)a)->name, ((const struct config_list *)b)->name);
}

/* "ext4" for "ext4/4k": the length of the filesystem part. */
static size_t
fs_len(const char *name)
{
	return strcspn(name, "/");
}

static bool
same_fs(const char *name, const char *fs, size_t len)
{
	return fs_len(name) == len && !strncmp(name, fs, len);
}

/* The configuration of filesystem fs (len bytes) named or aliased cfg. */
static const struct fs_config *
find_config(const struct profiles *p, const char *fs, size_t len, const char *cfg)
{
	for (size_t i = 0; i < p->nconfigs; i++) {
		const struct fs_config *c = &p->configs[i];

		if (!same_fs(c->name, fs, len))
			continue;
		if (!strcmp(c->name + len + 1, cfg) || strvec_contains(&c->aliases, cfg))
			return c;
	}
	return NULL;
}

/* An alias may not be another configuration's name or alias. */
static enum status
check_aliases(const struct profiles *p)
{
	for (size_t i = 0; i < p->nconfigs; i++) {
		const struct fs_config *c = &p->configs[i];
		size_t len = fs_len(c->name);

		for (size_t j = 0; j < c->aliases.n; j++) {
			const char *a = c->aliases.v[j];

			for (size_t k = 0; k < p->nconfigs; k++) {
				const struct fs_config *o = &p->configs[k];

				if (o == c || !same_fs(o->name, c->name, len))
					continue;
				if (!strcmp(o->name + len + 1, a) ||
				    strvec_contains(&o->aliases, a))
					return error(ERR_PARSE,
						     "%s: key 'aliases': '%s' already names %s; "
						     "choose another",
						     c->file, a, o->name);
			}
		}
	}
	return OK;
}

/* One FS/NAME.list file: configuration names of FS, one per line. */
static enum status
read_list(const struct profiles *p, const char *file, const char *fs, const char *name,
	  struct config_list *out)
{
	char *text = NULL;
	unsigned lineno = 0;
	enum status rc = read_profile(file, &text);

	out->name = xasprintf("%s/%s", fs, name);
	out->file = xstrdup(file);
	strvec_init(&out->configs);
	if (rc == OK && find_config(p, fs, strlen(fs), name))
		rc = error(ERR_PARSE, "%s: '%s' is already a configuration; rename the list", file,
			   out->name);
	for (const char *q = text; rc == OK && *q;) {
		size_t n = strcspn(q, "\n");
		char *buf = xstrndup(q, n);
		char *hash = strchr(buf, '#'), *line;
		const struct fs_config *c;

		if (hash)
			*hash = '\0';
		line = str_trim(buf);
		lineno++;
		q += n + (q[n] ? 1 : 0);
		if (*line) {
			c = find_config(p, fs, strlen(fs), line);
			if (!c)
				rc = error(ERR_PARSE, "%s:%u: %s has no configuration '%s'", file,
					   lineno, fs, line);
			else if (!strvec_contains(&out->configs, c->name))
				strvec_push(&out->configs, c->name);
		}
		free(buf);
	}
	if (rc == OK && !out->configs.n)
		rc = error(ERR_PARSE, "%s: names no configuration", file);
	free(text);
	return rc;
}

static enum status
list_file(struct profiles *out, const char *dir, const char *fs, const char *name, const char *file,
	  size_t *alloc)
{
	(void)dir;
	ALLOC_GROW(out->lists, out->nlists + 1, *alloc);
	/* counted even on failure: read_list leaves it for profiles_release() */
	return read_list(out, file, fs, name, &out->lists[out->nlists++]);
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
	if (rc == OK) {
		qsort(out->configs, out->nconfigs, sizeof(*out->configs), cmp_config);
		qsort(out->sets, out->nsets, sizeof(*out->sets), cmp_set);
		rc = check_aliases(out);
	}
	if (rc == OK)
		rc = walk_fs_files(dir, ".list", "list", list_file, out);
	if (rc != OK) {
		profiles_release(out);
		return rc;
	}
	if (out->nlists)
		qsort(out->lists, out->nlists, sizeof(*out->lists), cmp_list);
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

static bool
has_fstyp(const struct profiles *p, const char *fs, size_t len)
{
	for (size_t i = 0; i < p->nconfigs; i++)
		if (same_fs(p->configs[i].name, fs, len))
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

		if (fs && !same_fs(n, fs, len))
			continue;
		strbuf_addf(sb, "%s%s", first ? "" : ", ", n);
		first = false;
	}
}

/* The filesystems of p's configurations, once each, in their order, to sb. */
static void
list_filesystems(const struct profiles *p, struct strbuf *sb)
{
	struct strvec seen = STRVEC_INIT;

	for (size_t i = 0; i < p->nconfigs; i++) {
		const char *n = p->configs[i].name;
		char *fs = xstrndup(n, fs_len(n));

		if (!strvec_contains(&seen, fs)) {
			strbuf_addf(sb, "%s%s", seen.n ? ", " : "", fs);
			strvec_push(&seen, fs);
		}
		free(fs);
	}
	strvec_clear(&seen);
}

/*
 * "FS/CFG" where CFG is a configuration, an alias or a list of FS: its
 * names appended to out; false when FS has nothing of that name.
 */
static bool
resolve_in_fs(const struct profiles *p, const char *fs, size_t len, const char *cfg,
	      struct strvec *out)
{
	const struct fs_config *c = find_config(p, fs, len, cfg);

	if (c) {
		if (!strvec_contains(out, c->name))
			strvec_push(out, c->name);
		return true;
	}
	for (size_t i = 0; i < p->nlists; i++) {
		const struct config_list *l = &p->lists[i];

		if (!same_fs(l->name, fs, len) || strcmp(l->name + len + 1, cfg))
			continue;
		for (size_t j = 0; j < l->configs.n; j++)
			if (!strvec_contains(out, l->configs.v[j]))
				strvec_push(out, l->configs.v[j]);
		return true;
	}
	return false;
}

/* xfstests-bld's primary filesystem: where a name without one is looked up first. */
#define PRIMARY_FS "ext4"

static enum status
not_found(const struct profiles *p, const char *arg)
{
	struct strvec cands = STRVEC_INIT;
	struct strbuf sb = STRBUF_INIT;
	const char *best;
	enum status rc;

	for (size_t i = 0; i < p->nconfigs; i++) {
		const char *n = p->configs[i].name;
		char *fs = xstrndup(n, fs_len(n));

		strvec_push(&cands, n);
		if (!strvec_contains(&cands, fs))
			strvec_push(&cands, fs);
		free(fs);
	}
	for (size_t i = 0; i < p->nlists; i++)
		strvec_push(&cands, p->lists[i].name);
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
			list_filesystems(p, &sb);
			rc = error(ERR_NOTFOUND,
				   "unknown configuration '%s'; fswb has configurations for %s "
				   "(ext4/4k, xfs/4k...; 'fswb profiles' lists them all)",
				   arg, sb.buf);
		}
		free(fs);
	}
	strvec_clear(&cands);
	strbuf_release(&sb);
	return rc;
}

enum status
profiles_resolve_configs(const struct profiles *p, const char *arg, struct strvec *out)
{
	struct strvec found = STRVEC_INIT;
	struct strbuf sb = STRBUF_INIT;
	const char *slash = strchr(arg, '/');
	size_t matches = 0;
	enum status rc = OK;

	if (!*arg)
		return error(ERR_NOTFOUND, "no configuration named; give one like ext4/4k");
	if (slash) {
		if (!resolve_in_fs(p, arg, (size_t)(slash - arg), slash + 1, &found))
			return not_found(p, arg);
	} else if (has_fstyp(p, arg, strlen(arg))) {
		if (!resolve_in_fs(p, arg, strlen(arg), "default", &found)) {
			list_configs(p, arg, &sb);
			rc = error(ERR_NOTFOUND,
				   "'%s' has no default configuration; choose one of: %s", arg,
				   sb.buf);
		}
	} else if (!resolve_in_fs(p, PRIMARY_FS, strlen(PRIMARY_FS), arg, &found)) {
		/* the one other filesystem that has it */
		for (size_t i = 0; i < p->nconfigs; i++) {
			const char *n = p->configs[i].name;
			struct strvec one = STRVEC_INIT;

			if (i && same_fs(n, p->configs[i - 1].name, fs_len(n)))
				continue;
			if (resolve_in_fs(p, n, fs_len(n), arg, &one)) {
				strbuf_addf(&sb, "%s%.*s/%s", matches ? ", " : "", (int)fs_len(n),
					    n, arg);
				if (!matches++)
					strvec_copy(&found, &one);
			}
			strvec_clear(&one);
		}
		if (!matches)
			rc = not_found(p, arg);
		else if (matches > 1)
			rc = error(ERR_INVALID, "configuration '%s' is ambiguous; say which: %s",
				   arg, sb.buf);
	}
	for (size_t i = 0; rc == OK && i < found.n; i++)
		if (!strvec_contains(out, found.v[i]))
			strvec_push(out, found.v[i]);
	strvec_clear(&found);
	strbuf_release(&sb);
	return rc;
}

enum status
profiles_resolve_config(const struct profiles *p, const char *arg, const struct fs_config **out)
{
	struct strvec names = STRVEC_INIT;
	enum status rc = profiles_resolve_configs(p, arg, &names);

	*out = NULL;
	if (rc == OK && names.n != 1)
		rc = error(ERR_INVALID, "'%s' names %zu configurations; name one of them", arg,
			   names.n);
	if (rc == OK)
		*out = profiles_config(p, names.v[0]);
	strvec_clear(&names);
	return rc;
}
