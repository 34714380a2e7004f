/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "core/plan.h"

#include <ctype.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/jread.h"
#include "core/paths.h"

static const char *const kernel_kinds[] = {
	[KERNEL_AUTO] = "auto",
	[KERNEL_INSTALLED] = "installed",
	[KERNEL_TREE] = "tree",
	[KERNEL_IMAGE] = "image",
};

static const char *const arches[] = { "x86_64", "arm64" };

const char *
kernel_kind_str(enum kernel_kind kind)
{
	if ((unsigned)kind >= ARRAY_SIZE(kernel_kinds))
		BUG("bad kernel kind %d", (int)kind);
	return kernel_kinds[kind];
}

void
plan_init(struct plan *plan)
{
	memset(plan, 0, sizeof(*plan));
	strvec_init(&plan->kernel.debug);
	strvec_init(&plan->configs);
	strvec_init(&plan->backend_opts);
	strvec_init(&plan->tests.groups);
	strvec_init(&plan->tests.xgroups);
	strvec_init(&plan->tests.tests);
	strvec_init(&plan->tests.exclude);
	strvec_init(&plan->tests.exclude_files);
}

void
plan_release(struct plan *plan)
{
	free(plan->kernel.spec);
	free(plan->kernel.modules);
	free(plan->kernel.arch);
	strvec_clear(&plan->kernel.debug);
	strvec_clear(&plan->configs);
	free(plan->backend);
	strvec_clear(&plan->backend_opts);
	free(plan->tests.preset);
	strvec_clear(&plan->tests.groups);
	strvec_clear(&plan->tests.xgroups);
	strvec_clear(&plan->tests.tests);
	strvec_clear(&plan->tests.exclude);
	strvec_clear(&plan->tests.exclude_files);
	free(plan->tests.settings_from);
	free(plan->fstests_src);
	plan_init(plan);
}

static char *
dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

void
plan_copy(struct plan *dst, const struct plan *src)
{
	plan_release(dst);
	dst->kernel.kind = src->kernel.kind;
	dst->kernel.spec = dup_or_null(src->kernel.spec);
	dst->kernel.modules = dup_or_null(src->kernel.modules);
	dst->kernel.own_config = src->kernel.own_config;
	strvec_copy(&dst->kernel.debug, &src->kernel.debug);
	dst->kernel.arch = dup_or_null(src->kernel.arch);
	strvec_copy(&dst->configs, &src->configs);
	dst->backend = dup_or_null(src->backend);
	strvec_copy(&dst->backend_opts, &src->backend_opts);
	dst->tests.preset = dup_or_null(src->tests.preset);
	strvec_copy(&dst->tests.groups, &src->tests.groups);
	strvec_copy(&dst->tests.xgroups, &src->tests.xgroups);
	strvec_copy(&dst->tests.tests, &src->tests.tests);
	strvec_copy(&dst->tests.exclude, &src->tests.exclude);
	strvec_copy(&dst->tests.exclude_files, &src->tests.exclude_files);
	dst->tests.settings_from = dup_or_null(src->tests.settings_from);
	dst->fstests_src = dup_or_null(src->fstests_src);
	dst->shards = src->shards;
	dst->test_timeout = src->test_timeout;
	dst->rerun_failures = src->rerun_failures;
	dst->stop_on_crash = src->stop_on_crash;
	dst->detach = src->detach;
	dst->max_results = src->max_results;
	dst->dry_run = src->dry_run;
	dst->shell = src->shell;
	dst->cpus = src->cpus;
	dst->mem = src->mem;
}

void
plan_defaults(struct plan *plan)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	if (!plan->kernel.arch)
		plan->kernel.arch = xstrdup("x86_64");
	if (!plan->configs.n)
		strvec_push(&plan->configs, "ext4/4k");
	if (!plan->backend)
		plan->backend = xstrdup("qemu");
	if (!plan->tests.preset && !plan->tests.groups.n && !plan->tests.tests.n)
		plan->tests.preset = xstrdup("smoke");
	if (!plan->cpus)
		plan->cpus = ncpu > 0 && ncpu < 2 ? (unsigned)ncpu : 2;
	if (!plan->mem)
		plan->mem = 2ull << 30;
}

const char *
plan_settings_set(const struct plan *plan)
{
	return plan->tests.preset ? plan->tests.preset : plan->tests.settings_from;
}

void
plan_one_test(struct plan *plan, const char *config, const char *test)
{
	struct plan_tests *t = &plan->tests;
	char *set = plan_settings_set(plan) ? xstrdup(plan_settings_set(plan)) : NULL;

	if (config) {
		strvec_clear(&plan->configs);
		strvec_push(&plan->configs, config);
	}
	free(t->preset);
	t->preset = NULL;
	free(t->settings_from);
	t->settings_from = set;
	strvec_clear(&t->groups);
	strvec_clear(&t->xgroups);
	strvec_clear(&t->tests);
	strvec_clear(&t->exclude);
	strvec_clear(&t->exclude_files);
	strvec_push(&t->tests, test);
	plan->rerun_failures = 0;
	plan->dry_run = false;
	plan->shell = false;
}

void
plan_set_backend_opt(struct plan *plan, const char *key, const char *value)
{
	size_t klen = strlen(key);

	for (size_t i = 0; i < plan->backend_opts.n; i++) {
		char *kv = plan->backend_opts.v[i];

		if (!strncmp(kv, key, klen) && kv[klen] == '=') {
			free(kv);
			plan->backend_opts.v[i] = xasprintf("%s=%s", key, value);
			return;
		}
	}
	strvec_pushf(&plan->backend_opts, "%s=%s", key, value);
}

enum status
plan_set_backend_kv(struct plan *plan, const char *kv)
{
	const char *eq = strchr(kv, '=');
	char *key;

	if (!eq || eq == kv)
		return error(ERR_INVALID, "'%s' is not KEY=VALUE", kv);
	key = xstrndup(kv, (size_t)(eq - kv));
	plan_set_backend_opt(plan, key, eq + 1);
	free(key);
	return OK;
}

const char *
plan_backend_opt(const struct plan *plan, const char *key)
{
	size_t klen = strlen(key);

	for (size_t i = 0; i < plan->backend_opts.n; i++) {
		const char *kv = plan->backend_opts.v[i];

		if (!strncmp(kv, key, klen) && kv[klen] == '=')
			return kv + klen + 1;
	}
	return NULL;
}

/* ---- JSON out ---- */

/*
 * Backend options that name a program to run (qemu=PATH): taken from the
 * command line only. A plan file is data: it cannot name a program, so
 * they are neither written into one nor read from one.
 */
static bool
program_opt(const char *key, size_t len)
{
	return len == 4 && !strncmp(key, "qemu", 4);
}

/* A size as people write it ("2 GiB") when that reads back exactly, else in bytes. */
static json_t *
json_size(uint64_t bytes)
{
	char buf[32];
	uint64_t back;

	format_size(bytes, buf, sizeof(buf));
	if (parse_size(buf, &back) == OK && back == bytes)
		return json_string(buf);
	error_clear();
	return json_integer((json_int_t)bytes);
}

char *
plan_to_json(const struct plan *plan)
{
	json_t *root = json_object(), *k = json_object(), *b = json_object();
	json_t *opts = json_object(), *t = json_object();
	char *text, *out;

	json_object_set_new(root, "version", json_integer(PLAN_VERSION));
	json_object_set_new(k, "kind", json_string(kernel_kind_str(plan->kernel.kind)));
	json_object_set_new(k, "spec", json_str_or_null(plan->kernel.spec));
	json_object_set_new(k, "modules", json_str_or_null(plan->kernel.modules));
	json_object_set_new(k, "own_config", json_boolean(plan->kernel.own_config));
	json_object_set_new(k, "debug", json_strvec(&plan->kernel.debug));
	json_object_set_new(k, "arch", json_str_or_null(plan->kernel.arch));
	json_object_set_new(root, "kernel", k);
	json_object_set_new(root, "configs", json_strvec(&plan->configs));
	json_object_set_new(b, "name", json_str_or_null(plan->backend));
	for (size_t i = 0; i < plan->backend_opts.n; i++) {
		const char *kv = plan->backend_opts.v[i];
		const char *eq = strchr(kv, '=');
		char *key = xstrndup(kv, eq ? (size_t)(eq - kv) : strlen(kv));

		if (!program_opt(key, strlen(key)))
			json_object_set_new(opts, key, json_string(eq ? eq + 1 : ""));
		free(key);
	}
	json_object_set_new(b, "options", opts);
	json_object_set_new(root, "backend", b);
	json_object_set_new(t, "preset", json_str_or_null(plan->tests.preset));
	json_object_set_new(t, "groups", json_strvec(&plan->tests.groups));
	json_object_set_new(t, "exclude_groups", json_strvec(&plan->tests.xgroups));
	json_object_set_new(t, "tests", json_strvec(&plan->tests.tests));
	json_object_set_new(t, "exclude_tests", json_strvec(&plan->tests.exclude));
	json_object_set_new(t, "exclude_files", json_strvec(&plan->tests.exclude_files));
	if (plan->tests.settings_from)
		json_object_set_new(t, "settings_from", json_string(plan->tests.settings_from));
	json_object_set_new(root, "tests", t);
	json_object_set_new(root, "fstests_src", json_str_or_null(plan->fstests_src));
	json_object_set_new(root, "shards",
			    plan->shards ? json_integer(plan->shards) : json_string("auto"));
	json_object_set_new(root, "cpus", json_integer(plan->cpus));
	if (plan->test_timeout)
		json_object_set_new(root, "test_timeout", json_integer(plan->test_timeout));
	if (plan->rerun_failures)
		json_object_set_new(root, "rerun_failures", json_integer(plan->rerun_failures));
	if (plan->stop_on_crash)
		json_object_set_new(root, "stop_on_crash", json_true());
	if (plan->max_results)
		json_object_set_new(root, "max_results", json_size(plan->max_results));
	if (plan->dry_run)
		json_object_set_new(root, "dry_run", json_true());
	if (plan->shell)
		json_object_set_new(root, "shell", json_true());
	if (plan->detach)
		json_object_set_new(root, "detach", json_true());
	if (plan->mem)
		json_object_set_new(root, "mem", json_size(plan->mem));
	else
		json_object_set_new(root, "mem", json_null());
	text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(root);
	if (!text)
		BUG("json_dumps failed");
	out = xasprintf("%s\n", text);
	free(text);
	return out;
}

/* ---- JSON in ---- */

#define PLAN_SIZE_MAX (UINT64_C(1) << 50) /* 1 PiB: a larger size is a mistake */

static enum status
read_size(struct jreader *r, json_t *obj, const char *key, uint64_t *out)
{
	json_t *v = json_object_get(obj, key);
	enum status rc = OK;
	size_t mark;

	if (!v || json_is_null(v))
		return OK;
	jread_push(r, key, &mark);
	if (json_is_integer(v) && json_integer_value(v) > 0) {
		*out = (uint64_t)json_integer_value(v);
	} else if (json_is_string(v)) {
		if (parse_size(json_string_value(v), out) != OK)
			rc = jread_bad(r, "%s", error_msg());
	} else {
		rc = jread_bad(r, "expected a size such as \"2G\", got %s", jread_type(v));
	}
	if (rc == OK && (!*out || *out > PLAN_SIZE_MAX))
		rc = jread_bad(r, "a size from 1 byte to 1 PiB, such as \"2G\"");
	strbuf_setlen(&r->path, mark);
	return rc;
}

/* "auto" (0) or a whole number from 1 to PLAN_SHARDS_MAX. */
static enum status
read_shards(struct jreader *r, json_t *obj, unsigned *out)
{
	json_t *v = json_object_get(obj, "shards");
	enum status rc = OK;
	size_t mark;

	if (!v || json_is_null(v))
		return OK;
	jread_push(r, "shards", &mark);
	if (json_is_string(v) && !strcmp(json_string_value(v), "auto"))
		*out = 0;
	else if (json_is_integer(v) && json_integer_value(v) >= 1 &&
		 json_integer_value(v) <= PLAN_SHARDS_MAX)
		*out = (unsigned)json_integer_value(v);
	else
		rc = jread_bad(r, "expected \"auto\" or a whole number from 1 to %d",
			       PLAN_SHARDS_MAX);
	strbuf_setlen(&r->path, mark);
	return rc;
}

static enum status
read_kernel(struct jreader *r, json_t *k, struct plan *plan)
{
	static const char *const keys[] = {
		"kind", "spec", "modules", "own_config", "debug", "arch"
	};
	char *kind = NULL;
	enum status rc;
	size_t mark;

	jread_push(r, "kernel", &mark);
	if ((rc = jread_keys(r, k, keys, ARRAY_SIZE(keys))) != OK ||
	    (rc = jread_str(r, k, "kind", false, &kind)) != OK ||
	    (rc = jread_str(r, k, "spec", true, &plan->kernel.spec)) != OK ||
	    (rc = jread_str(r, k, "modules", true, &plan->kernel.modules)) != OK ||
	    (rc = jread_bool(r, k, "own_config", &plan->kernel.own_config)) != OK ||
	    (rc = jread_strvec(r, k, "debug", &plan->kernel.debug)) != OK ||
	    (rc = jread_str(r, k, "arch", true, &plan->kernel.arch)) != OK)
		goto out;
	if (kind) {
		size_t i;

		for (i = 0; i < ARRAY_SIZE(kernel_kinds); i++)
			if (!strcmp(kind, kernel_kinds[i]))
				break;
		if (i == ARRAY_SIZE(kernel_kinds)) {
			strbuf_adds(&r->path, ".kind");
			rc = jread_bad(
				r, "'%s' is not a kernel kind; valid: auto, installed, tree, image",
				kind);
			goto out;
		}
		plan->kernel.kind = (enum kernel_kind)i;
	}
out:
	free(kind);
	strbuf_setlen(&r->path, mark);
	return rc;
}

static enum status
read_backend(struct jreader *r, json_t *b, struct plan *plan)
{
	static const char *const keys[] = { "name", "options" };
	json_t *opts;
	enum status rc;
	size_t mark;

	jread_push(r, "backend", &mark);
	if ((rc = jread_keys(r, b, keys, ARRAY_SIZE(keys))) != OK ||
	    (rc = jread_str(r, b, "name", true, &plan->backend)) != OK ||
	    (rc = jread_object(r, b, "options", &opts)) != OK)
		goto out;
	if (opts) {
		const char *key;
		json_t *v;

		strvec_clear(&plan->backend_opts);
		json_object_foreach(opts, key, v)
		{
			if (!json_is_string(v)) {
				strbuf_addf(&r->path, ".options.%s", key);
				rc = jread_bad(r, "expected a string, got %s", jread_type(v));
				goto out;
			}
			if (program_opt(key, strlen(key))) {
				strbuf_addf(&r->path, ".options.%s", key);
				rc = jread_bad(r,
					       "a plan file cannot name a program to run; give "
					       "-o %s=PATH on the command line instead",
					       key);
				goto out;
			}
			plan_set_backend_opt(plan, key, json_string_value(v));
		}
	}
out:
	strbuf_setlen(&r->path, mark);
	return rc;
}

static enum status
read_tests(struct jreader *r, json_t *t, struct plan *plan)
{
	static const char *const keys[] = { "preset",	    "groups",	     "exclude_groups",
					    "tests",	    "exclude_tests", "exclude_files",
					    "settings_from" };
	enum status rc;
	size_t mark;

	jread_push(r, "tests", &mark);
	if ((rc = jread_keys(r, t, keys, ARRAY_SIZE(keys))) != OK ||
	    (rc = jread_str(r, t, "preset", true, &plan->tests.preset)) != OK ||
	    (rc = jread_strvec(r, t, "groups", &plan->tests.groups)) != OK ||
	    (rc = jread_strvec(r, t, "exclude_groups", &plan->tests.xgroups)) != OK ||
	    (rc = jread_strvec(r, t, "tests", &plan->tests.tests)) != OK ||
	    (rc = jread_strvec(r, t, "exclude_tests", &plan->tests.exclude)) != OK ||
	    (rc = jread_strvec(r, t, "exclude_files", &plan->tests.exclude_files)) != OK ||
	    (rc = jread_str(r, t, "settings_from", true, &plan->tests.settings_from)) != OK)
		goto out;
out:
	strbuf_setlen(&r->path, mark);
	return rc;
}

enum status
plan_from_json(const char *text, const char *source, struct plan *out)
{
	static const char *const keys[] = {
		"version", "kernel",	     "configs",	      "backend",
		"tests",   "fstests_src",    "shards",	      "cpus",
		"mem",	   "test_timeout",   "stop_on_crash", "dry_run",
		"shell",   "rerun_failures", "max_results",   "detach"
	};
	struct jreader r = { .source = source ? source : "plan" };
	json_error_t jerr;
	json_t *root, *obj;
	struct plan plan;
	enum status rc;

	strbuf_init(&r.path);
	root = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
	if (!root)
		return error(ERR_INVALID, "%s:%d:%d: not valid JSON: %s", r.source, jerr.line,
			     jerr.column, jerr.text);
	plan_init(&plan);
	if (!json_is_object(root)) {
		rc = error(ERR_INVALID, "%s: a plan is a JSON object, got %s", r.source,
			   jread_type(root));
		goto out;
	}
	if ((rc = jread_keys(&r, root, keys, ARRAY_SIZE(keys))) != OK)
		goto out;
	obj = json_object_get(root, "version");
	if (obj && (!json_is_integer(obj) || json_integer_value(obj) != PLAN_VERSION)) {
		rc = error(ERR_INVALID,
			   "%s: field 'version': this fswb reads plan version %d; make the plan "
			   "again with 'fswb plan ... --dump'",
			   r.source, PLAN_VERSION);
		goto out;
	}
	if ((rc = jread_object(&r, root, "kernel", &obj)) != OK ||
	    (obj && (rc = read_kernel(&r, obj, &plan)) != OK) ||
	    (rc = jread_strvec(&r, root, "configs", &plan.configs)) != OK ||
	    (rc = jread_object(&r, root, "backend", &obj)) != OK ||
	    (obj && (rc = read_backend(&r, obj, &plan)) != OK) ||
	    (rc = jread_object(&r, root, "tests", &obj)) != OK ||
	    (obj && (rc = read_tests(&r, obj, &plan)) != OK) ||
	    (rc = jread_str(&r, root, "fstests_src", true, &plan.fstests_src)) != OK ||
	    (rc = read_shards(&r, root, &plan.shards)) != OK ||
	    (rc = jread_count(&r, root, "cpus", 1024, &plan.cpus)) != OK ||
	    (rc = jread_count(&r, root, "test_timeout", 7 * 86400, &plan.test_timeout)) != OK ||
	    (rc = jread_count(&r, root, "rerun_failures", PLAN_RERUN_MAX, &plan.rerun_failures)) !=
		    OK ||
	    (rc = jread_bool(&r, root, "stop_on_crash", &plan.stop_on_crash)) != OK ||
	    (rc = jread_bool(&r, root, "dry_run", &plan.dry_run)) != OK ||
	    (rc = jread_bool(&r, root, "shell", &plan.shell)) != OK ||
	    (rc = jread_bool(&r, root, "detach", &plan.detach)) != OK ||
	    (rc = read_size(&r, root, "mem", &plan.mem)) != OK ||
	    (rc = read_size(&r, root, "max_results", &plan.max_results)) != OK)
		goto out;
	plan_release(out);
	*out = plan;
	plan_init(&plan);
out:
	plan_release(&plan);
	json_decref(root);
	strbuf_release(&r.path);
	return rc;
}

enum status
plan_load(const char *path, struct plan *out)
{
	char *text;
	enum status rc = read_file(path, 1 << 20, &text, NULL);

	if (rc != OK)
		return rc;
	rc = plan_from_json(text, path, out);
	free(text);
	return rc;
}

enum status
plan_save(const char *path, const struct plan *plan)
{
	char *text = plan_to_json(plan);
	enum status rc = write_file_atomic(path, text, strlen(text), 0644);

	free(text);
	return rc;
}

/* ---- validation ---- */

static bool
is_word(const char *s, const char *extra)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr(extra, *s))
			return false;
	return true;
}

/*
 * "generic/001", "xfs/1*", "btrfs/[0-9]*", "*\/001": a test dir or glob, a
 * slash, a name or glob, as check expands them.
 */
static bool
is_test_name(const char *s)
{
	const char *slash = strchr(s, '/');
	char *dir;
	bool ok;

	if (!slash || slash == s || !slash[1] || strchr(slash + 1, '/'))
		return false;
	dir = xstrndup(s, (size_t)(slash - s));
	ok = is_word(dir, "-_*?[]") && is_word(slash + 1, "-_.*?[]");
	free(dir);
	return ok;
}

static enum status
unknown_choice(const char *field, const char *value, const char *const *valid, size_t n)
{
	struct strbuf sb = STRBUF_INIT;
	const char *close = closest_match(value, valid, n);
	enum status rc;

	for (size_t i = 0; i < n; i++)
		strbuf_addf(&sb, "%s%s", i ? ", " : "", valid[i]);
	if (close)
		rc = error(ERR_INVALID, "%s: unknown '%s' (did you mean '%s'?); valid: %s", field,
			   value, close, sb.buf);
	else
		rc = error(ERR_INVALID, "%s: unknown '%s'; valid: %s", field, value, sb.buf);
	strbuf_release(&sb);
	return rc;
}

static enum status
validate_debug(const struct plan *plan, const struct profiles *profiles)
{
	static const char *const known[] = { "kasan", "lockdep", "kmemleak" };

	for (size_t i = 0; i < plan->kernel.debug.n; i++) {
		const char *d = plan->kernel.debug.v[i];
		bool found = false;

		for (size_t j = 0; j < ARRAY_SIZE(known) && !found; j++)
			found = !strcmp(d, known[j]);
		if (!found)
			return unknown_choice("kernel.debug", d, known, ARRAY_SIZE(known));
		if (profiles && profiles->dir) {
			char *frag = xasprintf("%s/kconfig/debug-%s.config", profiles->dir, d);
			bool there = path_exists(frag);

			free(frag);
			if (!there)
				return error(ERR_NOTFOUND,
					     "kernel.debug: the fragment 'kconfig/debug-%s.config' "
					     "is missing from '%s'; reinstall fswb",
					     d, profiles->dir);
		}
	}
	return OK;
}

static enum status
validate_list(const char *field, const struct strvec *sv, bool (*ok)(const char *),
	      const char *what)
{
	for (size_t i = 0; i < sv->n; i++)
		if (!ok(sv->v[i]))
			return error(ERR_INVALID, "%s[%zu]: '%s' is not %s", field, i, sv->v[i],
				     what);
	return OK;
}

static bool
is_group(const char *s)
{
	return is_word(s, "-_");
}

static bool
is_nonempty(const char *s)
{
	return *s != '\0';
}

/* name (NULL: none) is a test set of profiles (NULL: not checked). */
static enum status
known_set(const char *field, const char *name, const struct profiles *profiles)
{
	const char **names;
	enum status rc;

	if (!name || !profiles || profiles_set(profiles, name))
		return OK;
	names = xcalloc(profiles->nsets, sizeof(*names));
	for (size_t j = 0; j < profiles->nsets; j++)
		names[j] = profiles->sets[j].name;
	rc = unknown_choice(field, name, names, profiles->nsets);
	free(names);
	return rc;
}

enum status
plan_validate(const struct plan *plan, const struct profiles *profiles, const char *const *backends)
{
	enum status rc;
	size_t nb = 0;

	switch (plan->kernel.kind) {
	case KERNEL_TREE:
	case KERNEL_IMAGE:
		if (!plan->kernel.spec || !*plan->kernel.spec)
			return error(ERR_INVALID, "kernel.spec: a kernel %s needs a path",
				     kernel_kind_str(plan->kernel.kind));
		break;
	case KERNEL_AUTO:
	case KERNEL_INSTALLED:
		break;
	}
	if (plan->kernel.modules && plan->kernel.kind != KERNEL_IMAGE)
		return error(ERR_INVALID,
			     "kernel.modules: only a prebuilt image takes a modules path");
	if (plan->kernel.own_config && plan->kernel.kind != KERNEL_TREE)
		return error(ERR_INVALID,
			     "kernel.own_config: only a kernel tree has its own config");
	if (plan->kernel.arch) {
		bool found = false;

		for (size_t i = 0; i < ARRAY_SIZE(arches) && !found; i++)
			found = !strcmp(plan->kernel.arch, arches[i]);
		if (!found)
			return unknown_choice("kernel.arch", plan->kernel.arch, arches,
					      ARRAY_SIZE(arches));
	}
	if ((rc = validate_debug(plan, profiles)) != OK)
		return rc;

	if (!plan->configs.n)
		return error(ERR_INVALID, "configs: name at least one, such as 'ext4/4k'");
	for (size_t i = 0; i < plan->configs.n; i++) {
		if (profiles && !profiles_config(profiles, plan->configs.v[i])) {
			const char **names = xcalloc(profiles->nconfigs, sizeof(*names));

			for (size_t j = 0; j < profiles->nconfigs; j++)
				names[j] = profiles->configs[j].name;
			rc = unknown_choice("configs", plan->configs.v[i], names,
					    profiles->nconfigs);
			free(names);
			return rc;
		}
		for (size_t j = 0; j < i; j++)
			if (!strcmp(plan->configs.v[i], plan->configs.v[j]))
				return error(ERR_INVALID, "configs: '%s' is named twice",
					     plan->configs.v[i]);
	}

	if (!plan->backend)
		return error(ERR_INVALID, "backend.name: missing; use 'qemu' for local guests");
	if (backends) {
		bool found = false;

		for (nb = 0; backends[nb]; nb++)
			found = found || !strcmp(backends[nb], plan->backend);
		if (!found)
			return unknown_choice("backend.name", plan->backend, backends, nb);
	}
	for (size_t i = 0; i < plan->backend_opts.n; i++) {
		const char *kv = plan->backend_opts.v[i];
		const char *eq = strchr(kv, '=');

		if (!eq || eq == kv)
			return error(ERR_INVALID, "backend.options: '%s' is not KEY=VALUE", kv);
	}

	if ((rc = known_set("tests.preset", plan->tests.preset, profiles)) != OK ||
	    (rc = known_set("tests.settings_from", plan->tests.settings_from, profiles)) != OK)
		return rc;
	if (plan->tests.preset && plan->tests.settings_from)
		return error(ERR_INVALID,
			     "tests.settings_from: '%s' with the preset '%s': the preset's "
			     "settings apply; give one of them",
			     plan->tests.settings_from, plan->tests.preset);
	if (!plan->tests.preset && !plan->tests.groups.n && !plan->tests.tests.n)
		return error(ERR_INVALID, "tests: choose a preset (smoke, quick, auto), a group "
					  "(-g GROUP) or tests (generic/001)");
	if ((rc = validate_list("tests.groups", &plan->tests.groups, is_group, "a group name")) !=
		    OK ||
	    (rc = validate_list("tests.exclude_groups", &plan->tests.xgroups, is_group,
				"a group name")) != OK ||
	    (rc = validate_list("tests.tests", &plan->tests.tests, is_test_name,
				"a test name such as generic/001")) != OK ||
	    (rc = validate_list("tests.exclude_tests", &plan->tests.exclude, is_test_name,
				"a test name such as generic/001")) != OK ||
	    (rc = validate_list("tests.exclude_files", &plan->tests.exclude_files, is_nonempty,
				"a file name")) != OK)
		return rc;
	for (size_t i = 0; i < plan->tests.exclude_files.n; i++)
		if (!path_exists(plan->tests.exclude_files.v[i]))
			return error(ERR_NOTFOUND, "tests.exclude_files: '%s' does not exist",
				     plan->tests.exclude_files.v[i]);

	if (plan->shards > PLAN_SHARDS_MAX)
		return error(ERR_INVALID, "shards: %u is out of range; use 1 to %d, or auto",
			     plan->shards, PLAN_SHARDS_MAX);
	if (plan->cpus < 1 || plan->cpus > 1024)
		return error(ERR_INVALID, "cpus: %u is out of range; use 1 to 1024", plan->cpus);
	if (plan->mem < PLAN_MEM_MIN)
		return error(ERR_INVALID, "mem: a guest needs at least 256M; fstests wants 2G");
	return OK;
}

enum status
plan_kernel_set(struct plan_kernel *pk, const char *spec)
{
	enum kernel_kind kind;

	if (path_is_dir(spec))
		kind = KERNEL_TREE;
	else if (path_exists(spec))
		kind = KERNEL_IMAGE;
	else if (strchr(spec, '/'))
		return error(ERR_NOTFOUND,
			     "'%s' does not exist; give a kernel tree, a bzImage or an installed "
			     "kernel version",
			     spec);
	else
		kind = KERNEL_INSTALLED;
	free(pk->spec);
	pk->spec = xstrdup(spec);
	pk->kind = kind;
	return OK;
}
