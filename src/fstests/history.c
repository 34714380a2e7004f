/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "fstests/history.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/paths.h"
#include "core/plan.h"
#include "core/rundir.h"

/* How many of the newest runs the flaky scan reads at most. */
#define HISTORY_SCAN_MAX 500

char *
history_run_dir(const char *id)
{
	char *runs = rundir_root(), *dir = path_join(runs, id);

	free(runs);
	return dir;
}

void
history_list(struct strvec *ids)
{
	char *runs = rundir_root();

	rundir_list(runs, ids);
	free(runs);
}

enum status
history_resolve(const char *spec, char **id)
{
	struct strvec ids = STRVEC_INIT;
	char *runs = rundir_root();
	enum status rc = OK;

	*id = NULL;
	history_list(&ids);
	if (!strcmp(spec, "last") || str_startswith(spec, "last~")) {
		unsigned long back = 0;

		if (spec[4]) {
			char *end;

			errno = 0;
			back = strtoul(spec + 5, &end, 10);
			if (errno || end == spec + 5 || *end || !isdigit((unsigned char)spec[5])) {
				rc = error(ERR_INVALID,
					   "'%s' is not a run: write last, last~1, last~2 ...",
					   spec);
				goto out;
			}
		}
		if (!ids.n)
			rc = error(ERR_NOTFOUND,
				   "there are no runs yet in %s; start one with "
				   "'fswb run'",
				   runs);
		else if (back >= ids.n)
			rc = error(ERR_NOTFOUND, "'%s': there are only %zu runs in %s", spec, ids.n,
				   runs);
		else
			*id = xstrdup(ids.v[ids.n - 1 - back]);
	} else if (strvec_contains(&ids, spec)) {
		*id = xstrdup(spec);
	} else {
		const char *close = closest_match(spec, (const char **)ids.v, ids.n);

		rc = error(ERR_NOTFOUND, "no run '%s' in %s%s%s%s; 'fswb results' lists them", spec,
			   runs, close ? " (did you mean '" : "", close ? close : "",
			   close ? "'?)" : "");
	}
out:
	strvec_clear(&ids);
	free(runs);
	return rc;
}

enum status
history_load(const char *id, struct run_record *out)
{
	char *dir = history_run_dir(id), *path = path_join(dir, "run.json");
	enum status rc = run_record_load(path, out);

	free(path);
	free(dir);
	return rc;
}

bool
history_run_finished(const char *dir)
{
	char *path = path_join(dir, "run.json");
	struct run_record rec;
	bool done = false;

	if (run_record_load(path, &rec) == OK) {
		done = rec.finished;
		run_record_release(&rec);
	}
	error_clear();
	free(path);
	return done;
}

const char *
history_run_kind(const char *dir)
{
	char *path = path_join(dir, "plan.json");
	const char *kind = NULL;
	struct plan plan;

	plan_init(&plan);
	if (plan_load(path, &plan) == OK && plan.dry_run)
		kind = plan.shell ? "shell session" : "dry run";
	else if (plan.detach && !history_run_finished(dir))
		kind = "detached";
	plan_release(&plan);
	error_clear();
	free(path);
	return kind;
}

const char *
history_run_failure(const struct run_record *rec)
{
	const struct test_counts *k = &rec->counts;

	if (!rec->error || k->ran || k->notrun || k->expunged || k->crashed || k->hung)
		return NULL;
	return rec->error;
}

/* Does s (of n bytes) end with git describe's "-N-gHEX"? Its length, else 0. */
static size_t
describe_suffix(const char *s, size_t n)
{
	size_t i = n, hex = 0, digits = 0;

	while (i && isxdigit((unsigned char)s[i - 1]))
		i--, hex++;
	if (hex < 7 || i < 2 || s[i - 1] != 'g' || s[i - 2] != '-')
		return 0;
	i -= 2;
	while (i && isdigit((unsigned char)s[i - 1]))
		i--, digits++;
	if (!digits || !i || s[i - 1] != '-')
		return 0;
	return n - (i - 1);
}

char *
history_kernel_key(const char *release)
{
	size_t n;

	if (!release || !*release)
		return xstrdup("unknown");
	n = strlen(release);
	for (;;) {
		size_t cut = 0;

		if (n && release[n - 1] == '+')
			cut = 1;
		else if (n > 6 && !strncmp(release + n - 6, "-dirty", 6))
			cut = 6;
		else
			cut = describe_suffix(release, n);
		if (!cut || cut >= n)
			break;
		n -= cut;
	}
	return xstrndup(release, n);
}

const char *
section_config_name(const struct section_result *s)
{
	return s->config ? s->config : s->name ? s->name : "";
}

void
flaky_init(struct flaky *f)
{
	memset(f, 0, sizeof(*f));
}

void
flaky_release(struct flaky *f)
{
	for (size_t i = 0; i < f->n; i++) {
		free(f->v[i].config);
		free(f->v[i].test);
	}
	free(f->v);
	flaky_init(f);
}

static struct flaky_entry *
flaky_get(struct flaky *f, const char *config, const char *test)
{
	for (size_t i = 0; i < f->n; i++)
		if (!strcmp(f->v[i].config, config) && !strcmp(f->v[i].test, test))
			return &f->v[i];
	return NULL;
}

void
flaky_add(struct flaky *f, const struct run_record *rec, const char *config)
{
	for (size_t s = 0; s < rec->nsections; s++) {
		const struct section_result *sec = &rec->sections[s];
		const char *cfg = section_config_name(sec);

		if (config && strcmp(cfg, config))
			continue;
		for (size_t t = 0; t < sec->ntests; t++) {
			const struct test_result *tr = &sec->tests[t];
			unsigned passed, failed;
			struct flaky_entry *e;

			test_result_run_counts(tr, &passed, &failed);
			if (!passed && !failed)
				continue;
			e = flaky_get(f, cfg, tr->test);
			if (!e) {
				ALLOC_GROW(f->v, f->n + 1, f->alloc);
				e = &f->v[f->n++];
				e->config = xstrdup(cfg);
				e->test = xstrdup(tr->test);
				e->passed = e->failed = 0;
			}
			/* check -L: a failure that passed when run again is flaky in one run */
			e->passed += passed;
			e->failed += failed;
		}
	}
}

bool
flaky_entry_flaky(const struct flaky_entry *e)
{
	return e && e->passed && e->failed;
}

const struct flaky_entry *
flaky_find(const struct flaky *f, const char *config, const char *test)
{
	const struct flaky_entry *e = flaky_get((struct flaky *)f, config, test);

	return flaky_entry_flaky(e) ? e : NULL;
}

static bool
has_config(const struct run_record *rec, const char *config)
{
	for (size_t s = 0; s < rec->nsections; s++)
		if (!strcmp(section_config_name(&rec->sections[s]), config))
			return true;
	return false;
}

void
flaky_scan_history(struct flaky *f, const struct run_record *newer, size_t n)
{
	struct strvec ids = STRVEC_INIT;
	char *key = history_kernel_key(newer->kernel);
	struct run_record *recs;
	size_t nrecs = 0, end;

	history_list(&ids);
	end = ids.n;
	for (size_t i = 0; newer->id && i < ids.n; i++)
		if (!strcmp(ids.v[i], newer->id))
			end = i; /* the runs before newer; newer itself is added below */
	recs = xcalloc(HISTORY_SCAN_MAX, sizeof(*recs));
	for (size_t i = end; i-- > 0 && nrecs < HISTORY_SCAN_MAX;) {
		char *k;

		if (history_load(ids.v[i], &recs[nrecs]) != OK) {
			error_clear();
			continue;
		}
		k = history_kernel_key(recs[nrecs].kernel);
		if (!strcmp(k, key))
			nrecs++;
		else
			run_record_release(&recs[nrecs]);
		free(k);
	}
	/* per configuration of newer: newer and the n - 1 runs before it that have it */
	for (size_t s = 0; s < newer->nsections; s++) {
		const char *cfg = section_config_name(&newer->sections[s]);
		size_t taken = 1;

		flaky_add(f, newer, cfg);
		for (size_t i = 0; i < nrecs && taken < n; i++)
			if (has_config(&recs[i], cfg)) {
				flaky_add(f, &recs[i], cfg);
				taken++;
			}
	}
	for (size_t i = 0; i < nrecs; i++)
		run_record_release(&recs[i]);
	free(recs);
	free(key);
	strvec_clear(&ids);
}

void
flaky_mark(const struct flaky *f, struct run_compare *c)
{
	for (size_t i = 0; i < c->n; i++) {
		struct cmp_entry *e = &c->v[i];
		const struct flaky_entry *fe = flaky_find(f, e->config ? e->config : "", e->test);

		e->flaky_passed = fe ? fe->passed : 0;
		e->flaky_failed = fe ? fe->failed : 0;
	}
}
