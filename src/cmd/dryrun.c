/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `fswb run -n` with a local fstests tree: what each configuration would
 * run, resolved on this host with the catalogue the way check resolves it
 * (plan_check_selection() gives what the engine gives check), no guest
 * booted. Per configuration: each test with its description and groups,
 * the count, and every test left out with what left it out: an exclude
 * file (the configuration's or -E), -e, an -x group, or a named test of
 * another filesystem. Named tests that are not in the tree are listed as
 * check ignores them.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "core/jread.h"
#include "core/paths.h"
#include "core/plan.h"
#include "core/profile.h"
#include "fstests/catalogue.h"
#include "run/inventory.h"
#include "run/plan_check.h"
#include "run/shards.h"
#include "view/layout.h"

/* One configuration's list: what runs, what is left out and why. */
struct dry_config {
	const struct fs_config *cfg;
	struct check_selection sel;
	struct catalogue_selection cs;
	struct strvec out_tests, out_why; /* left out: the test, and why */
	char *error;			  /* the selection failed: why */
};

/* The first entry of an exclusion list (an -E file's) that excludes test, or NULL. */
static const char *
excluding_entry(const struct strvec *entries, const char *test)
{
	for (size_t i = 0; i < entries->n; i++)
		if (catalogue_entry_excludes(entries->v[i], test))
			return entries->v[i];
	return NULL;
}

/* A path below the profiles directory, for messages. */
static const char *
below_profiles(const struct profiles *profiles, const char *path)
{
	size_t dirlen = strlen(profiles->dir);

	return !strncmp(path, profiles->dir, dirlen) && path[dirlen] == '/' ? path + dirlen + 1
									    : path;
}

/* The first of files (exclusion files) that leaves test out, or NULL. */
static const char *
excluding_file(const char *const *files, size_t n, const char *test)
{
	const char *found = NULL;

	for (size_t i = 0; !found && i < n; i++) {
		struct strvec entries = STRVEC_INIT;

		if (files[i] && catalogue_read_exclude_file(files[i], &entries) == OK &&
		    excluding_entry(&entries, test))
			found = files[i];
		error_clear();
		strvec_clear(&entries);
	}
	return found;
}

/*
 * Why an expunged test is left out: the -e entry, the -E file, or the
 * profiles' exclude file (global, the filesystem's, the configuration's own:
 * named below the profiles directory).
 */
static char *
why_expunged(const struct check_selection *sel, const struct profiles *profiles,
	     const struct fs_config *cfg, const char *test)
{
	const char *e = excluding_entry(&sel->exclude, test), *f;
	char *global = path_join(profiles->dir, "exclude/global.exclude");
	char *fs = xasprintf("%s/exclude/%s.exclude", profiles->dir, cfg->fstyp);
	const char *files[] = { global, fs, cfg->exclude };
	char *why = NULL;

	if (e)
		why = xasprintf("-e %s", e);
	else if ((f = excluding_file((const char *const *)sel->exclude_files.v,
				     sel->exclude_files.n, test)))
		why = xasprintf("-E %s", f);
	else if ((f = excluding_file(files, ARRAY_SIZE(files), test)))
		why = xasprintf("%s %s",
				f == cfg->exclude ? "the configuration's exclude file"
						  : "the exclude file",
				below_profiles(profiles, f));
	free(global);
	free(fs);
	return why;
}

/* The catalogue's query for sel: with or without its -x groups, excluded its -e entries. */
static void
query_of(const struct check_selection *sel, const char *fstyp, bool with_x,
	 const struct strvec *excluded, struct catalogue_query *q)
{
	memset(q, 0, sizeof(*q));
	q->fstyp = fstyp;
	q->tests = &sel->tests;
	q->groups = &sel->groups;
	q->xgroups = with_x ? &sel->xgroups : NULL;
	q->exclude = excluded;
	q->exclude_files = &sel->exclude_files;
}

static void
dry_config_resolve(const struct catalogue *cat, const struct plan *plan,
		   const struct profiles *profiles, struct dry_config *d)
{
	struct catalogue_query q;
	struct catalogue_selection all;
	struct strvec excluded = STRVEC_INIT;

	plan_check_selection(plan, profiles, d->cfg, &d->sel);
	check_selection_expand(&d->sel, cat, d->cfg->fstyp);
	strvec_init(&d->out_tests);
	strvec_init(&d->out_why);
	check_selection_excluded(&d->sel, &excluded);
	query_of(&d->sel, d->cfg->fstyp, true, &excluded, &q);
	if (catalogue_select(cat, &q, &d->cs) != OK) {
		d->error = xstrdup(error_msg());
		error_clear();
		strvec_clear(&excluded);
		return;
	}
	/* what the -x groups took: the selection without them, less the one with them */
	query_of(&d->sel, d->cfg->fstyp, false, &excluded, &q);
	if (d->sel.xgroups.n && catalogue_select(cat, &q, &all) == OK) {
		for (size_t i = 0; i < all.tests.n; i++) {
			const struct catalogue_test *t = catalogue_find(cat, all.tests.v[i]);

			if (strvec_contains(&d->cs.tests, all.tests.v[i]) || !t)
				continue;
			for (size_t g = 0; g < d->sel.xgroups.n; g++) {
				if (catalogue_test_in_group(t, d->sel.xgroups.v[g])) {
					strvec_push(&d->out_tests, t->name);
					strvec_pushf(&d->out_why, "-x %s", d->sel.xgroups.v[g]);
					break;
				}
			}
		}
	}
	if (d->sel.xgroups.n)
		catalogue_selection_release(&all);
	error_clear();
	for (size_t i = 0; i < d->cs.expunged.n; i++) {
		char *why = why_expunged(&d->sel, profiles, d->cfg, d->cs.expunged.v[i]);

		strvec_push(&d->out_tests, d->cs.expunged.v[i]);
		strvec_push(&d->out_why, why ? why : "an exclusion");
		free(why);
	}
	for (size_t i = 0; i < d->sel.other_fs.n; i++) {
		strvec_push(&d->out_tests, d->sel.other_fs.v[i]);
		strvec_pushf(&d->out_why,
			     "not a test for %s (check would run it and it would fail)",
			     d->cfg->fstyp);
	}
	strvec_clear(&excluded);
}

static void
dry_config_release(struct dry_config *d)
{
	check_selection_release(&d->sel);
	catalogue_selection_release(&d->cs);
	strvec_clear(&d->out_tests);
	strvec_clear(&d->out_why);
	free(d->error);
}

/* What the selection asks for, in check's words: "-g quick -x dangerous". */
static char *
selection_words(const struct check_selection *sel)
{
	struct strbuf sb = STRBUF_INIT;

	for (size_t i = 0; i < sel->groups.n; i++)
		strbuf_addf(&sb, " -g %s", sel->groups.v[i]);
	for (size_t i = 0; i < sel->xgroups.n; i++)
		strbuf_addf(&sb, " -x %s", sel->xgroups.v[i]);
	for (size_t i = 0; i < sel->exclude.n; i++)
		strbuf_addf(&sb, " -e %s", sel->exclude.v[i]);
	for (size_t i = 0; i < sel->exclude_files.n; i++)
		strbuf_addf(&sb, " -E %s", sel->exclude_files.v[i]);
	for (size_t i = 0; i < sel->tests.n; i++)
		strbuf_addf(&sb, " %s", sel->tests.v[i]);
	for (size_t i = 0; i < sel->env.n; i++)
		strbuf_addf(&sb, " %s", sel->env.v[i]);
	return sb.len ? xstrdup(sb.buf + 1) : strbuf_detach(&sb);
}

static size_t
to_run(const struct dry_config *d)
{
	return d->error ? 0 : d->cs.tests.n - d->cs.expunged.n;
}

static void
print_config(const struct catalogue *cat, const struct dry_config *d)
{
	char *words = selection_words(&d->sel);

	printf("%s (FSTYP %s): %s\n", d->cfg->name, d->cfg->fstyp, words);
	free(words);
	if (d->error) {
		printf("  cannot select: %s\n\n", d->error);
		return;
	}
	for (size_t i = 0; i < d->cs.tests.n; i++) {
		const struct catalogue_test *t = catalogue_find(cat, d->cs.tests.v[i]);
		char *groups;

		if (strvec_contains(&d->cs.expunged, d->cs.tests.v[i]) || !t)
			continue;
		groups = strvec_join(&t->groups, " ");
		printf("  %-14s %s%s[%s]\n", t->name, t->description, *t->description ? "  " : "",
		       groups);
		free(groups);
	}
	for (size_t i = 0; i < d->out_tests.n; i++)
		printf("  %-14s left out: %s\n", d->out_tests.v[i], d->out_why.v[i]);
	for (size_t i = 0; i < d->cs.warnings.n; i++)
		printf("  warning: %s\n", d->cs.warnings.v[i]);
	printf("%s: %zu %s to run, %zu left out\n\n", d->cfg->name, to_run(d),
	       to_run(d) == 1 ? "test" : "tests", d->out_tests.n);
}

static json_t *
config_json(const struct catalogue *cat, const struct dry_config *d)
{
	json_t *o = json_object(), *tests = json_array(), *out = json_array();

	json_object_set_new(o, "config", json_string(d->cfg->name));
	json_object_set_new(o, "fstyp", json_string(d->cfg->fstyp));
	json_object_set_new(o, "groups", json_strvec(&d->sel.groups));
	json_object_set_new(o, "exclude_groups", json_strvec(&d->sel.xgroups));
	json_object_set_new(o, "env", json_strvec(&d->sel.env));
	if (d->error) {
		json_object_set_new(o, "error", json_string(d->error));
	} else {
		for (size_t i = 0; i < d->cs.tests.n; i++) {
			const struct catalogue_test *t = catalogue_find(cat, d->cs.tests.v[i]);
			json_t *jt;

			if (strvec_contains(&d->cs.expunged, d->cs.tests.v[i]) || !t)
				continue;
			jt = json_object();
			json_object_set_new(jt, "name", json_string(t->name));
			json_object_set_new(jt, "description", json_string(t->description));
			json_object_set_new(jt, "groups", json_strvec(&t->groups));
			json_array_append_new(tests, jt);
		}
		json_object_set_new(o, "warnings", json_strvec(&d->cs.warnings));
	}
	for (size_t i = 0; i < d->out_tests.n; i++) {
		json_t *x = json_object();

		json_object_set_new(x, "name", json_string(d->out_tests.v[i]));
		json_object_set_new(x, "why", json_string(d->out_why.v[i]));
		json_array_append_new(out, x);
	}
	json_object_set_new(o, "count", json_integer((json_int_t)to_run(d)));
	json_object_set_new(o, "tests", tests);
	json_object_set_new(o, "left_out", out);
	return o;
}

/*
 * How many guests at once and why, and how long it would take here on that
 * many: the estimate every screen gives (fstests/estimate.h, run/shards.h).
 */
static void
print_estimate(const struct plan *plan, const struct profiles *profiles,
	       const struct catalogue *cat)
{
	struct backend_probe probe = { 0 };
	struct host_size host;
	struct estimator est;
	struct est_total t;
	struct strbuf sb = STRBUF_INIT;
	char eta[32], sum[32];

	inventory_probe(plan->backend, plan, &probe);
	inventory_estimator(plan, profiles, probe.slow, &est);
	inventory_estimate(plan, profiles, cat, &est, plan->tests.preset, NULL, &t);
	if (t.ntests) {
		host_size_read(&host);
		shards_choose(plan, backend_find(plan->backend), &host, t.ntests, &sb);
		printf("shards: %s\n", sb.buf);
		strbuf_reset(&sb);
		est_total_basis(&t, &est, &sb);
		if (t.shards > 1)
			printf("estimate: %s on %u guests at once (%s; one guest after another: "
			       "%s)\n",
			       format_eta(t.wall, eta, sizeof(eta)), t.shards, sb.buf,
			       format_eta(t.seconds, sum, sizeof(sum)));
		else
			printf("estimate: %s (%s)\n", format_eta(t.wall, eta, sizeof(eta)), sb.buf);
	}
	strbuf_release(&sb);
	estimator_release(&est);
	backend_probe_release(&probe);
}

int
run_dry(const struct plan *plan, const struct profiles *profiles, bool json)
{
	struct catalogue cat;
	struct dry_config *d;
	json_t *root = NULL, *configs = NULL;
	size_t total = 0, failed = 0;

	if (catalogue_load(plan->fstests_src, &cat) != OK)
		return cmd_fail("run");
	d = xcalloc(plan->configs.n ? plan->configs.n : 1, sizeof(*d));
	if (json) {
		root = json_object();
		configs = json_array();
		json_object_set_new(root, "fstests", json_string(cat.root));
	}
	for (size_t i = 0; i < plan->configs.n; i++) {
		d[i].cfg = profiles_config(profiles, plan->configs.v[i]);
		if (!d[i].cfg)
			die("no configuration '%s'", plan->configs.v[i]); /* plan_validate saw it */
		dry_config_resolve(&cat, plan, profiles, &d[i]);
		total += to_run(&d[i]);
		failed += d[i].error != NULL;
		if (json)
			json_array_append_new(configs, config_json(&cat, &d[i]));
		else
			print_config(&cat, &d[i]);
	}
	if (json) {
		char *text;

		json_object_set_new(root, "configs", configs);
		json_object_set_new(root, "count", json_integer((json_int_t)total));
		text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		puts(text);
		free(text);
		json_decref(root);
	} else {
		printf("%zu %s to run in %zu %s, from %s; nothing was run (-n)\n", total,
		       total == 1 ? "test" : "tests", plan->configs.n,
		       plan->configs.n == 1 ? "configuration" : "configurations", cat.root);
		print_estimate(plan, profiles, &cat);
	}
	for (size_t i = 0; i < plan->configs.n; i++)
		dry_config_release(&d[i]);
	free(d);
	catalogue_release(&cat);
	return failed ? 2 : 0;
}
