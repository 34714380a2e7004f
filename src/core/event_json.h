/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Events as JSON lines: what `fswb run --json` prints and what a run
 * directory's events.jsonl holds, one object per line, so that a finished run
 * can be replayed to the same listeners as a live one (the TUI's history).
 *
 * Shape: {"event": "test_end", "time": 1764768000123, "config": "ext4/4k",
 * ...the fields of the union member, named as in struct event...}. Test
 * statuses and fail reasons use their names ("pass", "mismatch"). Keys that
 * are NULL or unknown (< 0 seconds) are left out.
 *
 *	event_to_json(ev, &sb);              append one line (with '\n')
 *	event_from_json(line, &owned);       parse one line back
 *	event_json_release(&owned);          frees what the parsed event points to
 *	event_replay_file(path, bus);        emit every event of a file on bus
 */
#ifndef FSWB_CORE_EVENT_JSON_H
#define FSWB_CORE_EVENT_JSON_H

#include "core/event.h"
#include "core/util.h"

/* Append ev as one JSON line, newline included. */
void event_to_json(const struct event *ev, struct strbuf *out);

/* A parsed event and the strings it points to. */
struct event_owned {
	struct event ev;
	struct strvec strings;			   /* owns every string ev points to */
	struct strvec unreached, unreached_config; /* RUN_END's lists */
};

/* Parse one line; ERR_INVALID with a message naming the bad field. */
enum status event_from_json(const char *line, struct event_owned *out);
void event_json_release(struct event_owned *e);

/*
 * Emit every event of an events.jsonl file on bus, in order. A line that does
 * not parse (a run killed mid-write leaves half a line) is reported in the
 * message of the return value only when nothing at all could be read; else it
 * is skipped and *skipped (may be NULL) counts it.
 */
enum status event_replay_file(const char *path, struct event_bus *bus, unsigned *skipped);

#endif
