/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench_shards: what several guests at once gain. The same list of tests
 * runs through the engine twice, with the stdio backend (fswb's agent on
 * this host, the fstests-shaped tree of tests/fixtures/engine-fstests,
 * each test keeping one CPU busy for its time): on 1 guest, then on N
 * guests (N: this host's cores, at most 4; at least 2). The durations vary
 * by 10x; the first run is the history the second one's queue is ordered
 * by, longest first.
 *
 *	build/bench/bench_shards [-n TESTS] [-s SECONDS] [-g GUESTS]
 *
 * It prints the wall-clock time of each run, the speed-up divided by N
 * (target: at least 0.85) and the sharded run's makespan divided by the
 * sum of its test times over N (target: at most 1.10). It exits 1 only
 * when it could not measure (a run failed), 0 otherwise; missing a target
 * is printed as such.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"
#include "core/loop.h"
#include "core/paths.h"
#include "core/plan.h"
#include "core/profile.h"
#include "core/util.h"
#include "fstests/results.h"
#include "run/engine.h"

struct outcome {
	double wall;  /* RUN_BEGIN to RUN_END */
	double tests; /* the sum of the tests' times, TEST_START to TEST_END */
	unsigned ended, shards_used;
	int exit_code;
};

struct watch {
	struct loop *loop;
	double begin, end;
	unsigned ended;
	struct strvec running; /* "TEST" of the tests started, by start[] */
	double start[1024], tests;
};

static void
on_event(void *data, const struct event *ev)
{
	struct watch *w = data;

	if (ev->type == EV_RUN_BEGIN)
		w->begin = now_s();
	if (ev->type == EV_TEST_START && w->running.n < 1024) {
		w->start[w->running.n] = now_s();
		strvec_push(&w->running, ev->u.test_start.test);
	}
	if (ev->type == EV_TEST_END && !ev->u.test_end.rerun) {
		w->ended++;
		for (size_t i = 0; i < w->running.n; i++)
			if (!strcmp(w->running.v[i], ev->u.test_end.test))
				w->tests += now_s() - w->start[i];
	}
	if (ev->type == EV_RUN_END) {
		w->end = now_s();
		loop_quit(w->loop, 0);
	}
}

/* One run of tests (names) on shards guests. */
static int
run_once(const struct profiles *prof, const char *tree, const struct strvec *tests, unsigned shards,
	 struct outcome *out)
{
	struct watch w = { .running = STRVEC_INIT };
	struct event_bus bus = { 0 };
	struct engine *e;
	struct plan plan;
	struct run_record rec;
	char *path;
	int rc = 0;

	plan_init(&plan);
	free(plan.backend);
	plan.backend = xstrdup("stdio");
	plan_set_backend_opt(&plan, "fstests", tree);
	strvec_copy(&plan.tests.tests, tests);
	plan_defaults(&plan);
	plan.shards = shards;
	plan.cpus = 1;
	w.loop = loop_new();
	event_bus_add(&bus, (struct listener){ on_event, &w });
	if (engine_new(&plan, prof, w.loop, &bus, &e) != OK || engine_start(e) != OK) {
		fprintf(stderr, "bench_shards: cannot start a run: %s\n", error_msg());
		return 1;
	}
	loop_run(w.loop);
	out->wall = w.end - w.begin;
	out->ended = w.ended;
	out->exit_code = engine_exit_code(e);
	out->tests = w.tests;
	out->shards_used = 0;
	strvec_clear(&w.running);
	path = path_join(engine_run_dir(e), "run.json");
	run_record_init(&rec);
	if (run_record_load(path, &rec) == OK) {
		unsigned used = 0;

		for (size_t i = 0; i < rec.nsections; i++)
			for (size_t j = 0; j < rec.sections[i].ntests; j++) {
				const struct test_result *t = &rec.sections[i].tests[j];

				used |= 1u << (t->shard < 31 ? t->shard : 31);
			}
		out->shards_used = (unsigned)__builtin_popcount(used);
	} else {
		fprintf(stderr, "bench_shards: %s\n", error_msg());
		rc = 1;
	}
	run_record_release(&rec);
	free(path);
	engine_free(e);
	loop_free(w.loop);
	event_bus_release(&bus);
	plan_release(&plan);
	return rc;
}

/* A tree of the fixture's check and n tests, burning from min to 10 * min seconds. */
static char *
make_tree(const char *home, unsigned n, double min, struct strvec *tests)
{
	char *tree = path_join(home, "fstests"), *src, *check, *text = NULL;
	size_t len;

	src = xasprintf("%s/tests/fixtures/engine-fstests/check",
			getenv("FSWB_SRCDIR") ? getenv("FSWB_SRCDIR") : ".");
	check = path_join(tree, "check");
	if (mkdir_p(tree, 0755) != OK || read_file(src, 1 << 20, &text, &len) != OK ||
	    write_file_atomic(check, text, len, 0755) != OK) {
		fprintf(stderr, "bench_shards: cannot make the tree: %s\n", error_msg());
		exit(1);
	}
	for (unsigned i = 0; i < n; i++) {
		/* from min to 10 * min, in an order that is not the queue's */
		double secs = min + 9 * min * (double)((i * 7) % n) / (n > 1 ? n - 1 : 1);
		char *name = xasprintf("generic/%03u", i + 1);
		char *p = xasprintf("%s/tests/%s", tree, name);
		char *what = xasprintf("burn %.2f\n", secs);
		char *dir = xasprintf("%s/tests/generic", tree);

		if (mkdir_p(dir, 0755) != OK ||
		    write_file_atomic(p, what, strlen(what), 0644) != OK)
			exit(1);
		strvec_push(tests, name);
		free(name);
		free(p);
		free(what);
		free(dir);
	}
	free(src);
	free(check);
	free(text);
	return tree;
}

int
main(int argc, char **argv)
{
	unsigned n = 24, guests = 0;
	double min = 1;
	char home[] = "/tmp/fswb-bench-shards.XXXXXX", *tree, *profdir;
	struct strvec tests = STRVEC_INIT;
	struct profiles prof;
	struct outcome one, many;
	long cores = sysconf(_SC_NPROCESSORS_ONLN), maxrss;
	int opt;

	while ((opt = getopt(argc, argv, "n:s:g:")) != -1) {
		if (opt == 'n')
			n = (unsigned)atoi(optarg);
		else if (opt == 's')
			min = atof(optarg);
		else if (opt == 'g')
			guests = (unsigned)atoi(optarg);
		else
			return fprintf(stderr,
				       "usage: bench_shards [-n TESTS] [-s SECONDS] [-g GUESTS]\n"),
			       2;
	}
	if (!guests)
		guests = cores > 4 ? 4 : cores < 2 ? 2 : (unsigned)cores;
	if (!mkdtemp(home)) {
		perror("mkdtemp");
		return 1;
	}
	setenv("FSWB_HOME", home, 1);
	setenv("HOME", home, 1);
	unsetenv("XDG_CACHE_HOME");
	unsetenv("XDG_DATA_HOME");
	unsetenv("XDG_CONFIG_HOME");
	if (!getenv("FSWB_DATADIR"))
		setenv("FSWB_DATADIR", ".", 1);
	profdir = xasprintf("%s/profiles", getenv("FSWB_DATADIR"));
	if (profiles_load(profdir, &prof) != OK) {
		fprintf(stderr, "bench_shards: %s\n", error_msg());
		return 1;
	}
	tree = make_tree(home, n, min, &tests);
	printf("%u tests of %.1f to %.1f s of one busy CPU each, %ld cores\n", n, min, 10 * min,
	       cores);
	if (run_once(&prof, tree, &tests, 1, &one) || run_once(&prof, tree, &tests, guests, &many))
		return 1;
	if (one.ended != n || many.ended != n) {
		fprintf(stderr, "bench_shards: %u and %u of %u tests ended\n", one.ended,
			many.ended, n);
		return 1;
	}
	printf("1 guest:  %6.1f s wall, %6.1f s of tests\n", one.wall, one.tests);
	printf("%u guests: %6.1f s wall, %6.1f s of tests, %u guests ran tests\n", guests,
	       many.wall, many.tests, many.shards_used);
	printf("speed-up / guests: %.2f (target >= 0.85)%s\n", one.wall / many.wall / guests,
	       one.wall / many.wall / guests >= 0.85 ? "" : "  MISSED");
	printf("makespan / (test time / guests): %.2f (target <= 1.10)%s\n",
	       many.wall / (many.tests / guests),
	       many.wall / (many.tests / guests) <= 1.10 ? "" : "  MISSED");
	printf("peak RSS: %ld KiB\n", peak_kib(&maxrss));
	profiles_release(&prof);
	strvec_clear(&tests);
	free(tree);
	free(profdir);
	if (remove_tree(home) != OK)
		fprintf(stderr, "bench_shards: %s\n", error_msg());
	return 0;
}
