/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "core/event.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "core/util.h"

static const char *const ts_names[] = {
#define TS_NAME(e, s) [e] = s,
	TEST_STATUS_LIST(TS_NAME)
#undef TS_NAME
};

static const char *const fr_keys[] = {
#define FR_KEY(e, k, s) [e##_BIT] = k,
	FAIL_REASON_LIST(FR_KEY)
#undef FR_KEY
};

static const char *const fr_words[] = {
#define FR_WORDS(e, k, s) [e##_BIT] = s,
	FAIL_REASON_LIST(FR_WORDS)
#undef FR_WORDS
};

static const char *const ev_names[] = {
	[EV_RUN_BEGIN] = "run_begin",
	[EV_STAGE_BEGIN] = "stage_begin",
	[EV_STAGE_PROGRESS] = "stage_progress",
	[EV_STAGE_END] = "stage_end",
	[EV_SECTION] = "section",
	[EV_TEST_START] = "test_start",
	[EV_TEST_END] = "test_end",
	[EV_KMSG] = "kmsg",
	[EV_CONSOLE] = "console",
	[EV_SUMMARY] = "summary",
	[EV_WARNING] = "warning",
	[EV_ERROR] = "error",
	[EV_RUN_END] = "run_end",
};

const char *
test_status_str(enum test_status st)
{
	if ((unsigned)st >= TS_COUNT)
		BUG("bad test status %d", (int)st);
	return ts_names[st];
}

enum status
test_status_parse(const char *name, enum test_status *st)
{
	for (unsigned i = 0; i < TS_COUNT; i++) {
		if (!strcmp(name, ts_names[i])) {
			*st = (enum test_status)i;
			return OK;
		}
	}
	return error(
		ERR_INVALID,
		"'%s' is not a test status; valid: pass, fail, notrun, expunged, crashed, hung",
		name);
}

const char *
fail_reason_key(enum fail_reason_bit bit)
{
	if ((unsigned)bit >= FAIL_REASON_COUNT)
		BUG("bad fail reason %d", (int)bit);
	return fr_keys[bit];
}

const char *
fail_reason_str(enum fail_reason_bit bit)
{
	if ((unsigned)bit >= FAIL_REASON_COUNT)
		BUG("bad fail reason %d", (int)bit);
	return fr_words[bit];
}

const char *
event_type_str(enum event_type type)
{
	if ((unsigned)type >= EV_TYPE_COUNT)
		BUG("bad event type %d", (int)type);
	return ev_names[type];
}

void
event_bus_add(struct event_bus *bus, struct listener l)
{
	ALLOC_GROW(bus->listeners, bus->n + 1, bus->alloc);
	bus->listeners[bus->n++] = l;
}

void
event_bus_release(struct event_bus *bus)
{
	free(bus->listeners);
	memset(bus, 0, sizeof(*bus));
}

void
event_emit(struct event_bus *bus, struct event *ev)
{
	if (!ev->wall_ms) {
		struct timeval tv;

		gettimeofday(&tv, NULL);
		ev->wall_ms = (uint64_t)tv.tv_sec * 1000 + (uint64_t)tv.tv_usec / 1000;
	}
	for (size_t i = 0; i < bus->n; i++)
		bus->listeners[i].on_event(bus->listeners[i].data, ev);
}

void
emit_stage(struct event_bus *bus, enum event_type type, const char *stage, const char *detail,
	   double fraction)
{
	struct event ev = { .type = type };

	ev.u.stage.stage = stage;
	ev.u.stage.detail = detail;
	ev.u.stage.fraction = fraction;
	event_emit(bus, &ev);
}

void
emit_warning(struct event_bus *bus, const char *fmt, ...)
{
	struct event ev = { .type = EV_WARNING };
	char msg[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ev.u.error.code = OK;
	ev.u.error.message = msg;
	event_emit(bus, &ev);
}

void
emit_error(struct event_bus *bus, enum status code, const char *message)
{
	struct event ev = { .type = EV_ERROR };

	ev.u.error.code = code;
	ev.u.error.message = message;
	event_emit(bus, &ev);
}

void
test_counts_add(struct test_counts *c, enum test_status st, double seconds)
{
	switch (st) {
	case TS_PASS:
		c->ran++;
		c->passed++;
		break;
	case TS_FAIL:
		c->ran++;
		c->failed++;
		break;
	case TS_NOTRUN:
		c->notrun++;
		break;
	case TS_EXPUNGED:
		c->expunged++;
		break;
	case TS_CRASHED:
		c->ran++;
		c->crashed++;
		break;
	case TS_HUNG:
		c->ran++;
		c->hung++;
		break;
	case TS_COUNT:
		BUG("bad test status");
	}
	if (seconds > 0)
		c->seconds += seconds;
}
