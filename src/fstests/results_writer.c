/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The results writer: a listener on the event bus that builds the run
 * record as the run goes and rewrites run.json after every step, so that a
 * run killed at any point leaves a file that says how far it came.
 */
#include <stdlib.h>
#include <string.h>

#include "core/event.h"
#include "fstests/results.h"
#include "fstests/results_internal.h"

static enum status
writer_save(struct results_writer *w)
{
	enum status rc;

	if (!w->path)
		return OK;
	rc = run_record_save(w->path, &w->rec);
	if (rc != OK && w->status == OK) {
		w->status = rc;
		w->message = xstrdup(error_msg());
	}
	return rc;
}

/* check's PLATFORM: "Linux/x86_64 HOST KERNEL #1 SMP ...". */
static void
platform_words(struct run_record *rec, const char *platform)
{
	struct strvec w = STRVEC_INIT;

	if (!platform)
		return;
	strvec_split(&w, platform, " \t");
	if (w.n >= 3 && strchr(w.v[0], '/')) {
		if (!rec->hostname)
			rec->hostname = xstrdup(w.v[1]);
		if (!rec->kernel)
			rec->kernel = xstrdup(w.v[2]);
	}
	strvec_clear(&w);
}

/* A test started: "CONFIG\tTEST" and when, until it ends. */
static void
running_add(struct results_writer *w, const struct event *ev)
{
	w->running_ms = xrealloc(w->running_ms, (w->running.n + 1) * sizeof(*w->running_ms));
	w->running_ms[w->running.n] = ev->wall_ms;
	strvec_pushf(&w->running, "%s\t%s", ev->config ? ev->config : "", ev->u.test_start.test);
}

static void
running_drop(struct results_writer *w, const char *config, const char *test)
{
	char *key = xasprintf("%s\t%s", config ? config : "", test);

	for (size_t i = 0; i < w->running.n; i++) {
		if (strcmp(w->running.v[i], key))
			continue;
		free(w->running.v[i]);
		memmove(&w->running.v[i], &w->running.v[i + 1],
			(w->running.n - i) * sizeof(char *));
		memmove(&w->running_ms[i], &w->running_ms[i + 1],
			(w->running.n - i - 1) * sizeof(*w->running_ms));
		w->running.n--;
		break;
	}
	free(key);
}

/* The run ends: the tests a stop cut off, and those it never reached. */
static void
run_end_tests(struct results_writer *w, const struct event *ev)
{
	struct section_result *sec;

	for (size_t i = 0; ev->u.end.interrupted && i < w->running.n; i++) {
		char *tab = strchr(w->running.v[i], '\t');
		char *config = xstrndup(w->running.v[i], (size_t)(tab - w->running.v[i]));

		sec = run_record_section(&w->rec, *config ? config : NULL, *config ? config : NULL);
		section_add_stop(sec, tab + 1,
				 ev->wall_ms >= w->running_ms[i]
					 ? (double)(ev->wall_ms - w->running_ms[i]) / 1000
					 : -1);
		free(config);
	}
	strvec_clear(&w->running);
	for (size_t i = 0; ev->u.end.unreached && ev->u.end.unreached[i]; i++) {
		const char *config = ev->u.end.unreached_config && *ev->u.end.unreached_config[i]
					     ? ev->u.end.unreached_config[i]
					     : NULL;

		sec = run_record_section(&w->rec, config, config);
		strvec_push(&sec->unreached, ev->u.end.unreached[i]);
	}
}

static void
writer_event(void *data, const struct event *ev)
{
	struct results_writer *w = data;
	struct run_record *rec = &w->rec;
	struct section_result *sec;

	switch (ev->type) {
	case EV_RUN_BEGIN:
		results_replace(&rec->id, ev->u.run.id);
		rec->start_ms = ev->wall_ms;
		rec->shards = ev->u.run.shards;
		if (ev->u.run.backend)
			results_replace(&rec->backend, ev->u.run.backend);
		rec->finished = false;
		writer_save(w);
		break;
	case EV_SECTION:
		sec = run_record_section(rec, ev->config, ev->config);
		if (ev->u.section.name && !sec->name)
			sec->name = xstrdup(ev->u.section.name);
		results_replace(&sec->fstyp, ev->u.section.fstyp);
		results_replace(&sec->mkfs_options, ev->u.section.mkfs_options);
		results_replace(&sec->mount_options, ev->u.section.mount_options);
		platform_words(rec, ev->u.section.platform);
		writer_save(w);
		break;
	case EV_TEST_START:
		sec = run_record_section(rec, ev->config, ev->config);
		results_replace(&sec->stopped_at, ev->u.test_start.test);
		results_replace(&rec->stopped_at, ev->u.test_start.test);
		if (!ev->u.test_start.rerun)
			running_add(w, ev);
		writer_save(w);
		break;
	case EV_TEST_END: {
		const char *name = ev->u.test_end.test;
		struct test_result *t;

		sec = run_record_section(rec, ev->config, ev->config);
		running_drop(w, ev->config, name);
		t = section_find_test(sec, name);
		if (!t || ev->u.test_end.rerun == 0 || t->reruns < ev->u.test_end.rerun) {
			t = section_add_test(sec, name, ev->u.test_end.status,
					     ev->u.test_end.seconds, ev->u.test_end.reasons,
					     ev->u.test_end.reason, ev->u.test_end.detail,
					     ev->u.test_end.hints);
			if (ev->u.test_end.rerun)
				t->reruns = ev->u.test_end.rerun;
			t->shard = ev->shard;
		}
		if (sec->stopped_at && !strcmp(sec->stopped_at, name)) {
			free(sec->stopped_at);
			sec->stopped_at = NULL;
		}
		if (rec->stopped_at && !strcmp(rec->stopped_at, name)) {
			free(rec->stopped_at);
			rec->stopped_at = NULL;
		}
		run_record_recount(rec);
		writer_save(w);
		break;
	}
	case EV_SUMMARY:
		sec = run_record_section(rec, ev->config, ev->config);
		if (ev->u.summary.interrupted)
			sec->interrupted = rec->interrupted = true;
		break;
	case EV_ERROR:
		if (ev->u.error.message)
			results_replace(&rec->error, ev->u.error.message);
		break;
	case EV_STAGE_END:
		/* a stage that failed (the kernel, the appliance, a boot) is the run's error */
		if (ev->u.stage.code != OK && ev->u.stage.code != ERR_PREEMPTED &&
		    ev->u.stage.code != ERR_NOROOM && ev->u.stage.message)
			results_replace(&rec->error, ev->u.stage.message);
		break;
	case EV_RUN_END:
		run_end_tests(w, ev);
		rec->end_ms = ev->wall_ms;
		rec->exit_code = ev->u.end.exit_code;
		if (ev->u.end.interrupted)
			rec->interrupted = true;
		rec->finished = true;
		run_record_recount(rec);
		writer_save(w);
		break;
	default:
		break;
	}
}

void
results_writer_init(struct results_writer *w, const char *path)
{
	memset(w, 0, sizeof(*w));
	run_record_init(&w->rec);
	strvec_init(&w->running);
	w->path = path ? xstrdup(path) : NULL;
	w->status = OK;
}

void
results_writer_release(struct results_writer *w)
{
	run_record_release(&w->rec);
	strvec_clear(&w->running);
	free(w->running_ms);
	w->running_ms = NULL;
	free(w->path);
	free(w->message);
	w->path = w->message = NULL;
}

struct listener
results_writer_listener(struct results_writer *w)
{
	struct listener l = { writer_event, w };

	return l;
}

enum status
results_writer_status(const struct results_writer *w)
{
	if (w->status != OK && w->message)
		return error(w->status, "%s", w->message);
	return w->status;
}

enum status
results_writer_flush(struct results_writer *w)
{
	run_record_recount(&w->rec);
	return writer_save(w);
}
