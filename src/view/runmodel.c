/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "view/runmodel.h"

#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "view/text.h"

void
run_model_init(struct run_model *m)
{
	memset(m, 0, sizeof(*m));
	logring_init(&m->log, RUN_MODEL_LOG_LINES, RUN_MODEL_LOG_BYTES);
	strvec_init(&m->messages);
	m->running = -1;
	m->exit_code = -1;
}

static void
test_release(struct rm_test *t)
{
	free(t->name);
	free(t->config);
	free(t->reason);
	free(t->detail);
	free(t->hints);
}

void
run_model_release(struct run_model *m)
{
	for (size_t i = 0; i < m->ntests; i++)
		test_release(&m->tests[i]);
	free(m->tests);
	free(m->hash);
	for (size_t i = 0; i < m->nstages; i++) {
		free(m->stages[i].name);
		free(m->stages[i].detail);
		free(m->stages[i].message);
	}
	for (size_t i = 0; i < m->nshards; i++) {
		free(m->shards[i].config);
		free(m->shards[i].message);
	}
	free(m->shards);
	logring_release(&m->log);
	strvec_clear(&m->messages);
	free(m->id);
	free(m->config);
	memset(m, 0, sizeof(*m));
	m->running = -1;
}

static uint64_t
hash_key(const char *config, const char *name)
{
	uint64_t h = 1469598103934665603ull;

	for (const char *p = config ? config : ""; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	h = (h ^ '\t') * 1099511628211ull;
	for (const char *p = name; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	return h;
}

static bool
same_config(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

static void
hash_insert(struct run_model *m, size_t idx)
{
	size_t mask = m->hash_size - 1;
	size_t h = (size_t)hash_key(m->tests[idx].config, m->tests[idx].name) & mask;

	while (m->hash[h])
		h = (h + 1) & mask;
	m->hash[h] = idx + 1;
}

static void
hash_grow(struct run_model *m)
{
	free(m->hash);
	m->hash_size = m->hash_size ? m->hash_size * 2 : 64;
	m->hash = xcalloc(m->hash_size, sizeof(*m->hash));
	for (size_t i = 0; i < m->ntests; i++)
		hash_insert(m, i);
}

static ssize_t
find_index(const struct run_model *m, const char *config, const char *name)
{
	size_t mask, h;

	if (!m->hash_size || !name)
		return -1;
	mask = m->hash_size - 1;
	h = (size_t)hash_key(config, name) & mask;
	while (m->hash[h]) {
		const struct rm_test *t = &m->tests[m->hash[h] - 1];

		if (!strcmp(t->name, name) && same_config(t->config, config))
			return (ssize_t)(m->hash[h] - 1);
		h = (h + 1) & mask;
	}
	return -1;
}

struct rm_test *
run_model_find(struct run_model *m, const char *config, const char *name)
{
	ssize_t i = find_index(m, config, name);

	return i < 0 ? NULL : &m->tests[i];
}

static size_t
add_test(struct run_model *m, const char *config, const char *name)
{
	struct rm_test *t;
	ssize_t i = find_index(m, config, name);

	if (i >= 0)
		return (size_t)i;
	ALLOC_GROW(m->tests, m->ntests + 1, m->alloc);
	t = &m->tests[m->ntests++];
	memset(t, 0, sizeof(*t));
	t->name = xstrdup(name);
	t->config = config ? xstrdup(config) : NULL;
	t->seconds = -1;
	t->prev = -1;
	if (m->ntests * 2 > m->hash_size)
		hash_grow(m);
	else
		hash_insert(m, m->ntests - 1);
	return m->ntests - 1;
}

void
run_model_add_pending(struct run_model *m, const char *config, const char *name, double prev)
{
	size_t i = add_test(m, config, name);

	if (prev >= 0)
		m->tests[i].prev = prev;
	m->gen++;
}

static void
set_str(char **dst, const char *src)
{
	free(*dst);
	*dst = src ? xstrdup(src) : NULL;
}

static struct rm_stage *
stage_get(struct run_model *m, const char *name)
{
	struct rm_stage *s;

	for (size_t i = 0; i < m->nstages; i++)
		if (!strcmp(m->stages[i].name, name))
			return &m->stages[i];
	if (m->nstages == RUN_MODEL_STAGES) {
		/* forget the oldest: the view has room for a few only */
		free(m->stages[0].name);
		free(m->stages[0].detail);
		free(m->stages[0].message);
		memmove(m->stages, m->stages + 1, (RUN_MODEL_STAGES - 1) * sizeof(*m->stages));
		m->nstages--;
	}
	s = &m->stages[m->nstages++];
	memset(s, 0, sizeof(*s));
	s->name = xstrdup(name);
	s->fraction = -1;
	return s;
}

static void
add_message(struct run_model *m, const char *kind, const char *text)
{
	if (m->messages.n >= RUN_MODEL_MESSAGES) {
		free(m->messages.v[0]);
		memmove(m->messages.v, m->messages.v + 1, m->messages.n * sizeof(char *));
		m->messages.n--;
	}
	strvec_pushf(&m->messages, "%s: %s", kind, text ? text : "(no message)");
}

/* Shard k of the event, made when first seen; NULL in a run of one guest. */
static struct rm_shard *
shard_get(struct run_model *m, unsigned k)
{
	if (!k || k > RUN_MODEL_SHARDS)
		return NULL;
	if (k > m->nshards) {
		m->shards = xrealloc(m->shards, k * sizeof(*m->shards));
		memset(m->shards + m->nshards, 0, (k - m->nshards) * sizeof(*m->shards));
		for (unsigned i = m->nshards; i < k; i++)
			m->shards[i].test = -1;
		m->nshards = k;
	}
	return &m->shards[k - 1];
}

/* The test that started last of those running in some shard, or -1. */
static int
latest_running(const struct run_model *m)
{
	int best = -1;

	for (size_t k = 0; k < m->nshards; k++) {
		int i = m->shards[k].test;

		if (i >= 0 && (best < 0 || m->tests[i].start_ms >= m->tests[best].start_ms))
			best = i;
	}
	return best;
}

/* A guest's boot, tests or results stage: its shard's state, not the run's stages. */
static void
shard_stage(struct run_model *m, struct rm_shard *sh, const struct event *ev)
{
	const char *name = ev->u.stage.stage;

	if (ev->type == EV_STAGE_BEGIN) {
		sh->since_ms = ev->wall_ms;
		if (!strcmp(name, "boot")) {
			sh->state = RMS_BOOTING;
			sh->boots++;
		} else if (!strcmp(name, "tests")) {
			sh->state = RMS_TESTING;
		} else if (!strcmp(name, "results")) {
			sh->state = RMS_RESULTS;
		}
		if (ev->config)
			set_str(&sh->config, ev->config);
	} else if (ev->type == EV_STAGE_END) {
		if (ev->u.stage.code == OK) {
			sh->state = RMS_IDLE;
		} else if (ev->u.stage.code == ERR_PREEMPTED || ev->u.stage.code == ERR_NOROOM) {
			/* its machine was taken away, or never came (the engine warned): its
			 * test waits again */
			if (sh->test >= 0 && m->tests[sh->test].state == RM_RUNNING)
				m->tests[sh->test].state = RM_PENDING;
			sh->test = -1;
			sh->state = RMS_IDLE;
		} else {
			char *msg;

			sh->state = RMS_FAILED;
			set_str(&sh->message, ev->u.stage.message ? ev->u.stage.message : "failed");
			msg = xasprintf("shard %u: %s", ev->shard, sh->message);
			add_message(m, "error", msg);
			free(msg);
		}
	}
}

static void
test_end(struct run_model *m, const struct event *ev)
{
	size_t i = add_test(m, ev->config, ev->u.test_end.test);
	struct rm_test *t = &m->tests[i];
	struct rm_shard *sh;
	bool first = t->state != RM_DONE;

	if (!first) {
		/* a rerun (check -L, -i): count it, keep a failure */
		t->reruns++;
		if (ev->u.test_end.status == TS_FAIL && t->status != TS_FAIL) {
			t->status = TS_FAIL;
			t->reasons |= ev->u.test_end.reasons;
			set_str(&t->reason, ev->u.test_end.reason);
			set_str(&t->detail, ev->u.test_end.detail);
			set_str(&t->hints, ev->u.test_end.hints);
		}
	} else {
		t->state = RM_DONE;
		t->status = ev->u.test_end.status;
		t->seconds = ev->u.test_end.seconds;
		t->reasons = ev->u.test_end.reasons;
		set_str(&t->reason, ev->u.test_end.reason);
		set_str(&t->detail, ev->u.test_end.detail);
		set_str(&t->hints, ev->u.test_end.hints);
		test_counts_add(&m->counts, t->status, t->seconds > 0 ? t->seconds : 0);
		/* excluded: listed, but not one of the tests to run */
		if (t->status == TS_EXPUNGED)
			m->nexpunged++;
		else
			m->done++;
	}
	sh = shard_get(m, ev->shard);
	if (sh) {
		if (sh->test == (int)i)
			sh->test = -1;
		t->shard = ev->shard;
		if (first)
			sh->done++;
		if (ev->u.test_end.status == TS_CRASHED || ev->u.test_end.status == TS_HUNG)
			sh->crashes++;
	}
	if (m->running == (int)i)
		m->running = sh ? latest_running(m) : -1;
}

/*
 * Push text as log lines: one per line of it, each as a terminal would show
 * it at its end (the carriage returns and backspaces of progress meters
 * applied: mke2fs prints those).
 */
static void
push_lines(struct run_model *m, const char *text, unsigned flags, int owner, unsigned shard)
{
	struct strbuf line = STRBUF_INIT;

	for (const char *p = text;;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);

		strbuf_reset(&line);
		text_overstrike(p, n, &line);
		logring_push(&m->log, line.buf, flags, owner, shard);
		if (!nl || !nl[1])
			break;
		p = nl + 1;
	}
	strbuf_release(&line);
}

void
run_model_event(struct run_model *m, const struct event *ev)
{
	struct rm_shard *sh =
		run_model_sharded(m) || ev->shard > 1 ? shard_get(m, ev->shard) : NULL;
	struct rm_stage *s;
	struct rm_test *t;
	size_t i;
	int owner;

	if (ev->wall_ms)
		m->last_ms = ev->wall_ms;
	switch (ev->type) {
	case EV_RUN_BEGIN:
		set_str(&m->id, ev->u.run.id);
		if (ev->u.run.total_tests > m->total)
			m->total = ev->u.run.total_tests;
		m->estimate = ev->u.run.expected_seconds;
		if (ev->u.run.shards > 1)
			shard_get(m, ev->u.run.shards);
		m->begun = true;
		m->start_ms = ev->wall_ms;
		break;
	case EV_STAGE_BEGIN:
	case EV_STAGE_PROGRESS:
	case EV_STAGE_END:
		if (!ev->u.stage.stage)
			break;
		if (ev->type == EV_STAGE_BEGIN && !m->boot_ms && !strcmp(ev->u.stage.stage, "boot"))
			m->boot_ms = ev->wall_ms ? ev->wall_ms : 1;
		if (!strcmp(ev->u.stage.stage, "shell"))
			/* a check run by hand in the shell is no test of the run */
			m->in_shell = ev->type != EV_STAGE_END;
		if (sh) {
			shard_stage(m, sh, ev);
			break;
		}
		s = stage_get(m, ev->u.stage.stage);
		if (ev->type == EV_STAGE_BEGIN) {
			s->begin_ms = ev->wall_ms;
			s->state = RM_STAGE_RUNNING;
			s->fraction = -1;
		}
		if (ev->u.stage.detail)
			set_str(&s->detail, ev->u.stage.detail);
		if (ev->type == EV_STAGE_PROGRESS && ev->u.stage.fraction >= 0)
			s->fraction = ev->u.stage.fraction;
		if (ev->type == EV_STAGE_END && ev->u.stage.code == ERR_PREEMPTED) {
			/* the guest was taken away (the engine warned): a new one runs
			 * the stage again, and the test it ran waits again */
			if (m->running >= 0 && m->tests[m->running].state == RM_RUNNING)
				m->tests[m->running].state = RM_PENDING;
			m->running = -1;
		} else if (ev->type == EV_STAGE_END) {
			s->end_ms = ev->wall_ms;
			s->state = ev->u.stage.code == OK ? RM_STAGE_OK : RM_STAGE_FAILED;
			set_str(&s->message, ev->u.stage.message);
			if (s->state == RM_STAGE_FAILED)
				add_message(m, "error", ev->u.stage.message);
		}
		break;
	case EV_SECTION:
		set_str(&m->config, ev->config ? ev->config : ev->u.section.name);
		break;
	case EV_TEST_START:
		if (!ev->u.test_start.test)
			break;
		i = add_test(m, ev->config, ev->u.test_start.test);
		t = &m->tests[i];
		if (t->state != RM_DONE) {
			t->state = RM_RUNNING;
			t->start_ms = ev->wall_ms;
			t->log_seq = m->log.next_seq;
		}
		if (ev->u.test_start.prev_seconds >= 0)
			t->prev = ev->u.test_start.prev_seconds;
		else if (ev->u.test_start.expected_seconds > 0)
			t->prev = ev->u.test_start.expected_seconds;
		if (sh) {
			/* a test of its that never ended (its guest went away) is not running */
			if (sh->test >= 0 && sh->test != (int)i &&
			    m->tests[sh->test].state == RM_RUNNING)
				m->tests[sh->test].state = RM_PENDING;
			sh->test = (int)i;
			sh->state = RMS_TESTING;
			t->shard = ev->shard;
			if (ev->config)
				set_str(&sh->config, ev->config);
		}
		m->running = (int)i;
		break;
	case EV_TEST_END:
		if (ev->u.test_end.test)
			test_end(m, ev);
		break;
	case EV_KMSG:
	case EV_CONSOLE:
		if (!ev->u.line.text)
			break;
		owner = m->in_shell ? -1 : sh ? sh->test : run_model_sharded(m) ? -1 : m->running;
		if (ev->u.line.test && !m->in_shell)
			owner = (int)add_test(m, ev->config, ev->u.line.test);
		push_lines(m, ev->u.line.text,
			   ev->type == EV_CONSOLE ? LOGF_CONSOLE : ev->u.line.flags, owner,
			   sh ? ev->shard : 0);
		if (ev->type == EV_KMSG && (ev->u.line.flags & KMSG_BAD) && owner >= 0)
			m->tests[owner].bad_lines++;
		break;
	case EV_SUMMARY:
		break;
	case EV_WARNING:
		add_message(m, "warning", ev->u.error.message);
		break;
	case EV_ERROR:
		add_message(m, "error", ev->u.error.message);
		break;
	case EV_RUN_END:
		m->ended = true;
		m->interrupted = ev->u.end.interrupted;
		m->exit_code = ev->u.end.exit_code;
		m->end_ms = ev->wall_ms;
		for (size_t k = 0; k < m->nstages; k++) {
			struct rm_stage *st = &m->stages[k];

			if (st->state != RM_STAGE_RUNNING)
				continue;
			st->state = RM_STAGE_FAILED;
			free(st->message);
			st->message = xstrdup("stopped");
			st->end_ms = ev->wall_ms;
		}
		/* a test still running was cut off by the stop, after what it had run */
		for (size_t k = 0; k < m->ntests; k++) {
			t = &m->tests[k];
			if (t->state != RM_RUNNING)
				continue;
			t->state = ev->u.end.interrupted ? RM_STOPPED : RM_PENDING;
			t->seconds = t->start_ms && ev->wall_ms >= t->start_ms
					     ? (double)(ev->wall_ms - t->start_ms) / 1000
					     : -1;
		}
		m->running = -1;
		for (size_t k = 0; k < m->nshards; k++) {
			struct rm_shard *x = &m->shards[k];

			x->test = -1;
			if (x->state != RMS_FAILED)
				x->state = RMS_DONE;
		}
		for (size_t k = 0; ev->u.end.unreached && ev->u.end.unreached[k]; k++) {
			const char *cfg =
				ev->u.end.unreached_config && *ev->u.end.unreached_config[k]
					? ev->u.end.unreached_config[k]
					: NULL;

			i = add_test(m, cfg, ev->u.end.unreached[k]);
			if (m->tests[i].state == RM_PENDING)
				m->tests[i].state = RM_UNREACHED;
		}
		break;
	default:
		break;
	}
	m->gen++;
}

static void
on_event(void *data, const struct event *ev)
{
	run_model_event(data, ev);
}

const char *
run_model_failure(const struct run_model *m)
{
	const char *last = NULL;

	if (m->interrupted || m->done || m->counts.ran || m->counts.notrun)
		return NULL;
	for (size_t k = 0; k < m->nstages; k++)
		if (m->stages[k].state == RM_STAGE_FAILED && m->stages[k].message)
			return m->stages[k].message;
	for (size_t k = 0; k < m->messages.n; k++)
		if (!strncmp(m->messages.v[k], "error: ", 7))
			last = m->messages.v[k] + 7;
	return last;
}

struct listener
run_model_listener(struct run_model *m)
{
	struct listener l = { .on_event = on_event, .data = m };

	return l;
}

/* For qsort: by the configuration's place in the run, then by name. */
static const struct run_model *sort_model;
static const size_t *sort_rank;

static int
by_config_name(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	int c;

	if (sort_rank[x] != sort_rank[y])
		return sort_rank[x] < sort_rank[y] ? -1 : 1;
	c = strcmp(sort_model->tests[x].name, sort_model->tests[y].name);
	return c ? c : (x > y) - (x < y);
}

void
run_model_order(const struct run_model *m, size_t *order)
{
	size_t *rank = xcalloc(m->ntests + 1, sizeof(*rank));
	size_t *firsts = xcalloc(m->ntests + 1, sizeof(*firsts)), nfirsts = 0;

	for (size_t i = 0; i < m->ntests; i++) {
		size_t k = 0;

		/* the configurations' ranks: the order their first tests came in */
		while (k < nfirsts && !same_config(m->tests[firsts[k]].config, m->tests[i].config))
			k++;
		if (k == nfirsts)
			firsts[nfirsts++] = i;
		order[i] = i;
		rank[i] = k;
	}
	free(firsts);
	sort_model = m;
	sort_rank = rank;
	qsort(order, m->ntests, sizeof(*order), by_config_name);
	sort_model = NULL;
	sort_rank = NULL;
	free(rank);
}

size_t
run_model_total(const struct run_model *m)
{
	size_t listed = m->ntests - m->nexpunged;

	return m->total > listed ? m->total : listed;
}

size_t
run_model_to_go(const struct run_model *m)
{
	size_t total = run_model_total(m);

	return total > m->done ? total - m->done : 0;
}

/* Guests that will take tests from the queue: not failed, at most one per test left. */
static double
shards_working(const struct run_model *m)
{
	size_t working = 0, to_go = run_model_to_go(m);

	for (size_t k = 0; k < m->nshards; k++)
		working += m->shards[k].state != RMS_FAILED && m->shards[k].state != RMS_DONE;
	if (working > to_go)
		working = to_go;
	return working ? (double)working : 1;
}

double
run_model_eta(const struct run_model *m, uint64_t now_ms)
{
	double sum_done = 0, left = 0, longest = 0;
	size_t ndone = 0, unknown = 0, listed_left = 0;
	double avg;

	if (m->ended)
		return 0;
	for (size_t i = 0; i < m->ntests; i++) {
		const struct rm_test *t = &m->tests[i];

		if (t->state == RM_DONE && t->seconds >= 0 &&
		    (t->status == TS_PASS || t->status == TS_FAIL)) {
			sum_done += t->seconds;
			ndone++;
		}
	}
	avg = ndone ? sum_done / (double)ndone : -1;
	for (size_t i = 0; i < m->ntests; i++) {
		const struct rm_test *t = &m->tests[i];
		double expect;

		if (t->state == RM_DONE)
			continue;
		listed_left++;
		expect = t->prev >= 0 ? t->prev : avg;
		if (expect < 0) {
			unknown++;
			continue;
		}
		if (t->state == RM_RUNNING && t->start_ms && now_ms > t->start_ms) {
			double ran = (double)(now_ms - t->start_ms) / 1000.0;

			expect = expect > ran ? expect - ran : 0;
			if (expect > longest)
				longest = expect;
		}
		left += expect;
	}
	if (run_model_total(m) > m->ntests - m->nexpunged)
		unknown += run_model_total(m) - (m->ntests - m->nexpunged);
	if (unknown) {
		/* before any test ended: the run's own estimate (the guests' work),
		 * less what has passed since the first guest began to boot */
		if (avg < 0 && m->estimate > 0 && !ndone) {
			double gone = m->boot_ms && now_ms > m->boot_ms
					      ? (double)(now_ms - m->boot_ms) / 1000.0
					      : 0;

			return m->estimate > gone ? m->estimate - gone : 0;
		}
		if (avg < 0)
			return listed_left || unknown ? -1 : 0;
		left += avg * (double)unknown;
	}
	if (run_model_sharded(m)) {
		left /= shards_working(m);
		if (left < longest)
			left = longest;
	}
	return left;
}

bool
run_model_preparing(const struct run_model *m)
{
	return m->begun && !m->ended && !m->boot_ms;
}

double
run_model_elapsed(const struct run_model *m, uint64_t now_ms)
{
	uint64_t end = m->ended && m->end_ms ? m->end_ms : now_ms;

	if (!m->start_ms || end < m->start_ms)
		return 0;
	return (double)(end - m->start_ms) / 1000.0;
}
