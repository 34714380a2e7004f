/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Events as JSON lines: every type round-trips, bad lines are named, replay. */
#include "testlib.h"

#include <stdlib.h>
#include <string.h>

#include "core/event_json.h"
#include "core/util.h"

/* Collects what a bus emits, as JSON lines. */
static void
collect(void *data, const struct event *ev)
{
	event_to_json(ev, data);
}

static void
roundtrip(const struct event *ev)
{
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;
	struct event_owned back;

	event_to_json(ev, &a);
	assert_int_equal(a.buf[a.len - 1], '\n');
	assert_null(memchr(a.buf, '\n', a.len - 1));
	assert_int_equal(event_from_json(a.buf, &back), OK);
	assert_int_equal(back.ev.type, ev->type);
	event_to_json(&back.ev, &b);
	assert_string_equal(a.buf, b.buf);
	event_json_release(&back);
	strbuf_release(&a);
	strbuf_release(&b);
}

static void
test_every_type_roundtrips(void **state)
{
	struct event ev;

	for (int t = 0; t < EV_TYPE_COUNT; t++) {
		memset(&ev, 0, sizeof(ev));
		ev.type = (enum event_type)t;
		ev.wall_ms = 1764768000123ull;
		ev.config = "ext4/4k";
		switch (ev.type) {
		case EV_RUN_BEGIN:
			ev.u.run.id = "20261203-1";
			ev.u.run.total_tests = 7;
			break;
		case EV_STAGE_BEGIN:
		case EV_STAGE_PROGRESS:
		case EV_STAGE_END:
			ev.u.stage.stage = "appliance";
			ev.u.stage.detail = "packages";
			ev.u.stage.fraction = 0.25;
			ev.u.stage.code = ERR_CHILD;
			ev.u.stage.message = "mmdebstrap failed";
			break;
		case EV_SECTION:
			ev.u.section.name = "ext4_4k";
			ev.u.section.fstyp = "ext4";
			ev.u.section.recreating = true;
			break;
		case EV_TEST_START:
			ev.u.test_start.test = "generic/001";
			ev.u.test_start.prev_seconds = 3;
			ev.u.test_start.rerun = 2;
			break;
		case EV_TEST_END:
			ev.u.test_end.test = "generic/002";
			ev.u.test_end.status = TS_FAIL;
			ev.u.test_end.seconds = 4.5;
			ev.u.test_end.reasons = FAIL_MISMATCH | FAIL_DMESG;
			ev.u.test_end.reason = "output mismatch (see \"x\")";
			ev.u.test_end.detail = "--- a\n+++ b\n\ttab \x01";
			break;
		case EV_KMSG:
		case EV_CONSOLE:
			ev.u.line.text = "[    1.0] WARNING: at fs/ext4/inode.c";
			ev.u.line.flags = KMSG_WARNING;
			ev.u.line.test = "generic/003";
			break;
		case EV_SUMMARY:
			ev.u.summary.counts.ran = 5;
			ev.u.summary.counts.failed = 1;
			ev.u.summary.counts.passed = 4;
			ev.u.summary.counts.seconds = 12;
			ev.u.summary.failed_tests = "generic/002";
			ev.u.summary.interrupted = true;
			break;
		case EV_WARNING:
		case EV_ERROR:
			ev.u.error.code = ERR_TIMEOUT;
			ev.u.error.message = "the guest stopped answering";
			break;
		case EV_RUN_END:
			ev.u.end.exit_code = 1;
			ev.u.end.counts.ran = 5;
			ev.u.end.counts.hung = 1;
			break;
		case EV_TYPE_COUNT:
			break;
		}
		roundtrip(&ev);
	}
}

static void
test_test_end_fields(void **state)
{
	struct event ev = { .type = EV_TEST_END, .wall_ms = 1 };
	struct strbuf sb = STRBUF_INIT;

	ev.u.test_end.test = "generic/001";
	ev.u.test_end.status = TS_PASS;
	ev.u.test_end.seconds = 3;
	event_to_json(&ev, &sb);
	assert_non_null(strstr(sb.buf, "\"test\":\"generic/001\""));
	assert_non_null(strstr(sb.buf, "\"status\":\"pass\""));
	assert_non_null(strstr(sb.buf, "\"seconds\":3"));
	/* Unknown seconds are left out rather than written as -1. */
	strbuf_reset(&sb);
	ev.u.test_end.seconds = -1;
	event_to_json(&ev, &sb);
	assert_null(strstr(sb.buf, "seconds"));
	strbuf_release(&sb);
}

/* A kernel-log line that is not UTF-8 keeps its text, bad bytes as '?'. */
static void
test_text_that_is_not_utf8(void **state)
{
	struct event ev = { .type = EV_KMSG, .wall_ms = 1 };
	struct strbuf sb = STRBUF_INIT;

	ev.u.line.text = "caf\xc3\xa9 \xff\xfe sector \xc0\x80 end";
	event_to_json(&ev, &sb);
	assert_non_null(strstr(sb.buf, "\"text\":\"caf\\u00E9 ?? sector ?? end\""));
	strbuf_release(&sb);
}

static void
test_bad_lines_are_named(void **state)
{
	struct event_owned e;

	assert_int_equal(event_from_json("{\"event\":\"nope\"}", &e), ERR_INVALID);
	assert_non_null(strstr(error_msg(), "'nope'"));
	event_json_release(&e);
	assert_int_equal(event_from_json("{\"event\":\"test_end\",\"test\":\"a/1\"}", &e),
			 ERR_INVALID);
	assert_non_null(strstr(error_msg(), "'status'"));
	event_json_release(&e);
	assert_int_equal(event_from_json("{\"event\":\"test_end\",", &e), ERR_INVALID);
	event_json_release(&e);
	assert_int_equal(event_from_json("[1]", &e), ERR_INVALID);
	event_json_release(&e);
}

static void
test_replay_skips_a_torn_last_line(void **state)
{
	struct strbuf got = STRBUF_INIT;
	struct event_bus bus = EVENT_BUS_INIT;
	char *path = test_tmp("events.jsonl");
	unsigned skipped = 9;
	const char *text = "{\"event\":\"run_begin\",\"time\":5,\"id\":\"r1\",\"total_tests\":2}\n"
			   "\n"
			   "{\"event\":\"test_start\",\"time\":6,\"test\":\"generic/001\"}\n"
			   "{\"event\":\"test_end\",\"time\":7,\"test\":\"gen";

	test_write(path, text);
	event_bus_add(&bus, (struct listener){ collect, &got });
	assert_int_equal(event_replay_file(path, &bus, &skipped), OK);
	assert_int_equal(skipped, 1);
	assert_string_equal(got.buf,
			    "{\"event\":\"run_begin\",\"time\":5,\"id\":\"r1\","
			    "\"total_tests\":2}\n"
			    "{\"event\":\"test_start\",\"time\":6,\"test\":\"generic/001\"}\n");
	test_write(path, "garbage\n");
	assert_int_equal(event_replay_file(path, &bus, NULL), ERR_INVALID);
	assert_non_null(strstr(error_msg(), "line 1"));
	event_bus_release(&bus);
	strbuf_release(&got);
	free(path);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_type_roundtrips),
		cmocka_unit_test(test_test_end_fields),
		cmocka_unit_test(test_text_that_is_not_utf8),
		cmocka_unit_test(test_bad_lines_are_named),
		cmocka_unit_test(test_replay_skips_a_torn_last_line),
	};

	return cmocka_run_group_tests(tests, test_setup_hermetic, test_teardown_hermetic);
}
