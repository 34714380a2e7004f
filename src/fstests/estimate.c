/* SPDX-License-Identifier: GPL-2.0-or-later */
/* How long tests take: earlier runs, SOAK_DURATION, groups (estimate.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/paths.h"
#include "core/rundir.h"
#include "fstests/catalogue.h"
#include "fstests/estimate.h"

const char *
est_basis_str(enum est_basis b)
{
	static const char *const words[EST_BASIS_COUNT] = {
		[EST_BASIS_HISTORY_KERNEL] = "earlier runs of this configuration and kernel",
		[EST_BASIS_HISTORY_CONFIG] = "earlier runs of this configuration",
		[EST_BASIS_HISTORY_ANY] = "its time on other configurations",
		[EST_BASIS_SOAK] = "SOAK_DURATION",
		[EST_BASIS_GROUPS] = "the tests' groups",
	};

	return b < EST_BASIS_COUNT ? words[b] : "nothing";
}

void
estimator_init(struct estimator *est, bool slow)
{
	memset(est, 0, sizeof(*est));
	est->slow = slow;
	est->soak = -1;
}

void
estimator_release(struct estimator *est)
{
	for (size_t i = 0; i < est->n; i++) {
		free(est->v[i].config);
		free(est->v[i].kernel);
		free(est->v[i].test);
	}
	free(est->v);
	estimator_init(est, est->slow);
}

double
soak_duration_seconds(const char *value)
{
	static const struct {
		char unit;
		double seconds;
	} units[] = { { 's', 1 }, { 'm', 60 }, { 'h', 3600 }, { 'd', 86400 }, { 'w', 604800 } };
	const char *p;
	char *end;
	size_t letters;
	double n;

	/* check: digits and dots, then letters of which the last is the unit ("3m", "1.5h") */
	if (!value || strspn(value, "0123456789.") == 0)
		return -1;
	n = strtod(value, &end);
	if (end == value || !isfinite(n) || n < 0)
		return -1;
	p = end;
	letters = strspn(p, "abcdefghijklmnopqrstuvwxyz");
	if (p[letters])
		return -1;
	if (!letters)
		return floor(n);
	for (size_t i = 0; i < ARRAY_SIZE(units); i++)
		if (p[letters - 1] == units[i].unit)
			return floor(n * units[i].seconds);
	return -1;
}

enum status
estimator_set_env(struct estimator *est, const struct strvec *env)
{
	for (size_t i = 0; env && i < env->n; i++) {
		const char *v = env->v[i];
		double s;

		if (strncmp(v, "SOAK_DURATION=", 14))
			continue;
		v += 14;
		if (!*v) {
			est->soak = -1;
			continue;
		}
		s = soak_duration_seconds(v);
		if (s < 0)
			return error(
				ERR_INVALID,
				"SOAK_DURATION '%s' is not a duration check reads: give seconds "
				"(180), or a number with s, m, h, d or w",
				v);
		est->soak = s;
	}
	return OK;
}

static void
add_sample(struct estimator *est, const char *config, const char *kernel, const char *test,
	   double seconds)
{
	struct est_sample *s;

	if (est->n == est->alloc) {
		est->alloc = est->alloc ? 2 * est->alloc : 64;
		est->v = xrealloc(est->v, est->alloc * sizeof(*est->v));
	}
	s = &est->v[est->n++];
	s->config = config ? xstrdup(config) : NULL;
	s->kernel = kernel ? xstrdup(kernel) : NULL;
	s->test = xstrdup(test);
	s->seconds = seconds;
}

void
estimator_add_test(struct estimator *est, const char *config, const char *kernel, const char *test,
		   double seconds)
{
	if (seconds >= 0 && isfinite(seconds) && seconds <= 7 * 86400)
		add_sample(est, config, kernel, test, seconds);
}

void
estimator_add_run(struct estimator *est, const struct run_record *rec)
{
	size_t before = est->n;

	for (size_t i = 0; i < rec->nsections; i++) {
		const struct section_result *sec = &rec->sections[i];
		const char *config = sec->config ? sec->config : sec->name;

		for (size_t j = 0; j < sec->ntests; j++) {
			const struct test_result *t = &sec->tests[j];

			if (t->status == TS_PASS || t->status == TS_FAIL || t->status == TS_NOTRUN)
				estimator_add_test(est, config, rec->kernel, t->test, t->seconds);
		}
	}
	if (est->n > before)
		est->runs++;
}

size_t
estimator_load_runs(struct estimator *est, const char *runs_dir, size_t max)
{
	struct strvec ids = STRVEC_INIT;
	size_t read = 0;

	if (max > EST_RUNS || max == 0)
		max = EST_RUNS;
	if (runs_dir)
		rundir_list(runs_dir, &ids);
	for (size_t i = ids.n; i-- > 0 && read < max;) {
		char *dir = path_join(runs_dir, ids.v[i]);
		char *path = path_join(dir, "run.json");
		struct run_record rec;

		run_record_init(&rec);
		if (path_exists(path) && run_record_load(path, &rec) == OK) {
			estimator_add_run(est, &rec);
			read++;
		}
		run_record_release(&rec);
		error_clear();
		free(path);
		free(dir);
	}
	strvec_clear(&ids);
	return read;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The median of the samples of test that match config and kernel (NULL: any). */
static double
median(const struct estimator *est, const char *test, const char *config, const char *kernel)
{
	double *v = NULL, m = -1;
	size_t n = 0;

	for (size_t i = 0; i < est->n; i++) {
		const struct est_sample *s = &est->v[i];

		if (strcmp(s->test, test))
			continue;
		if (config && (!s->config || strcmp(s->config, config)))
			continue;
		if (kernel && (!s->kernel || strcmp(s->kernel, kernel)))
			continue;
		v = xrealloc(v, (n + 1) * sizeof(*v));
		v[n++] = s->seconds;
	}
	if (n) {
		qsort(v, n, sizeof(*v), cmp_double);
		m = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	}
	free(v);
	return m;
}

double
estimate_test(const struct estimator *est, const char *config, const char *kernel, const char *test,
	      const struct strvec *groups, enum est_basis *basis)
{
	double slow = est->slow ? EST_SLOW : 1, s;
	enum est_basis b;

	if (config && kernel && (s = median(est, test, config, kernel)) >= 0) {
		b = EST_BASIS_HISTORY_KERNEL;
	} else if (config && (s = median(est, test, config, NULL)) >= 0) {
		b = EST_BASIS_HISTORY_CONFIG;
	} else if ((s = median(est, test, NULL, NULL)) >= 0) {
		b = EST_BASIS_HISTORY_ANY;
	} else {
		bool quick = groups && strvec_contains(groups, "quick");
		bool soak = groups && strvec_contains(groups, "soak");
		bool lng = groups && (soak || strvec_contains(groups, "long_rw") ||
				      strvec_contains(groups, "stress"));

		if (soak && est->soak >= 0) {
			/* the soak is most of it: making and checking the filesystem is the rest */
			s = est->soak + EST_QUICK * slow;
			b = EST_BASIS_SOAK;
		} else {
			s = (quick ? EST_QUICK : lng ? EST_LONG : EST_TEST) * slow;
			b = EST_BASIS_GROUPS;
		}
	}
	if (basis)
		*basis = b;
	return s;
}

double
estimate_boot(const struct estimator *est)
{
	return EST_BOOT * (est->slow ? EST_SLOW : 1);
}

double
estimate_batch(const struct estimator *est)
{
	if (est->batch > 0)
		return est->batch;
	return EST_BATCH * (est->slow ? EST_SLOW : 1);
}

static int
cmp_double_desc(const void *a, const void *b)
{
	return cmp_double(b, a);
}

double
estimate_batch_target(const struct estimator *est, double left, unsigned shards)
{
	double target, floor;

	if (!shards)
		shards = 1;
	target = left / (EST_BATCH_SPLIT * shards);
	floor = EST_BATCH_MIN * (est->slow ? EST_SLOW : 1);
	if (floor > left / shards)
		floor = left / shards;
	/* a batch shorter than two start-ups costs more than it shares out */
	if (floor < 2 * estimate_batch(est))
		floor = 2 * estimate_batch(est);
	return target < floor ? floor : target;
}

double
estimate_makespan(const struct estimator *est, const double *secs, size_t n, unsigned shards)
{
	double *v, *load, end = 0, left = 0;

	if (!n)
		return 0;
	if (!shards)
		shards = 1;
	v = xcalloc(n, sizeof(*v));
	load = xcalloc(shards, sizeof(*load));
	memcpy(v, secs, n * sizeof(*v));
	qsort(v, n, sizeof(*v), cmp_double_desc);
	for (size_t i = 0; i < n; i++)
		left += v[i];
	for (size_t i = 0; i < n;) {
		double target = estimate_batch_target(est, left, shards), sum = 0;
		unsigned free_first = 0;

		for (unsigned g = 1; g < shards; g++)
			if (load[g] < load[free_first])
				free_first = g;
		for (size_t k = 0; i < n && (!k || sum + v[i] <= target); k++)
			sum += v[i++];
		load[free_first] += estimate_batch(est) + sum;
		left -= sum;
	}
	for (unsigned g = 0; g < shards; g++)
		if (load[g] > end)
			end = load[g];
	free(load);
	free(v);
	return end;
}

void
estimate_config(const struct estimator *est, const char *config, const char *kernel,
		const struct catalogue *cat, const char *const *tests, size_t n,
		const struct strvec *groups, struct est_total *t, double *each)
{
	for (size_t i = 0; i < n; i++) {
		const struct catalogue_test *ct = cat ? catalogue_find(cat, tests[i]) : NULL;
		enum est_basis b;
		double s =
			estimate_test(est, config, kernel, tests[i], ct ? &ct->groups : groups, &b);

		t->seconds += s;
		if (each)
			each[i] = s;
		t->by[b]++;
		t->ntests++;
	}
	t->seconds += estimate_boot(est);
}

void
est_total_basis(const struct est_total *t, const struct estimator *est, struct strbuf *out)
{
	size_t hist = t->by[EST_BASIS_HISTORY_KERNEL] + t->by[EST_BASIS_HISTORY_CONFIG] +
		      t->by[EST_BASIS_HISTORY_ANY];
	const char *sep = "from ";

	if (!t->ntests) {
		strbuf_adds(out, "no tests");
		return;
	}
	if (hist) {
		strbuf_addf(out, "%searlier runs (%zu of %zu tests)", sep, hist, t->ntests);
		sep = ", ";
	}
	if (t->by[EST_BASIS_SOAK]) {
		strbuf_addf(out, "%sSOAK_DURATION", sep);
		sep = ", ";
	}
	if (t->by[EST_BASIS_GROUPS])
		strbuf_addf(out, "%stest groups", sep);
	if (!hist)
		strbuf_adds(out, "; no runs yet");
	if (est->slow)
		strbuf_adds(out, "; TCG");
}
