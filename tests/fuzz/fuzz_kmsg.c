/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The kernel-log splitter, fed the input whole and again in chunks drawn
 * from the input: the same lines both ways, each clean (no control bytes,
 * valid UTF-8, at most KMSG_LINE_MAX bytes) and, on a marker, naming the
 * test the marker names.
 *
 * fuzz-sources: src/fstests/kmsg.c src/fstests/check_parser.c src/core/event.c src/core/util.c src/core/status.c src/core/paths.c
 * fuzz-seeds: fixtures:dmesg.txt fixtures:console.log
 * fuzz-options: -max_len=32768
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/event.h"
#include "fstests/check_parser.h"
#include "fstests/kmsg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct digest {
	uint64_t h;
	size_t lines;
};

static void
need(bool ok, const char *what, const char *text)
{
	if (!ok) {
		fprintf(stderr, "kmsg: %s: '%s'\n", what, text ? text : "");
		abort();
	}
}

static void
mix(struct digest *d, const void *p, size_t n)
{
	const unsigned char *s = p;

	for (size_t i = 0; i < n; i++)
		d->h = (d->h ^ s[i]) * 0x100000001b3ull;
}

static bool
valid_utf8(const unsigned char *s)
{
	while (*s) {
		size_t n = 1;

		if (*s >= 0x80) {
			if (*s < 0xc2 || *s > 0xf4)
				return false;
			n = *s < 0xe0 ? 2 : *s < 0xf0 ? 3 : 4;
			for (size_t i = 1; i < n; i++)
				if ((s[i] & 0xc0) != 0x80)
					return false;
		}
		s += n;
	}
	return true;
}

static void
on_event(void *data, const struct event *ev)
{
	struct digest *d = data;
	const char *t = ev->u.line.text;
	size_t len;

	need(ev->type == EV_KMSG, "an event other than KMSG", NULL);
	need(t && *t, "an empty line", t);
	len = strlen(t);
	need(len <= KMSG_LINE_MAX, "a line over KMSG_LINE_MAX", t);
	for (size_t i = 0; i < len; i++)
		need((unsigned char)t[i] >= 0x20 || t[i] == '\t', "a control byte", t);
	need(t[len - 1] != ' ' && t[len - 1] != '\t', "trailing blanks", t);
	need(valid_utf8((const unsigned char *)t), "bad UTF-8", t);
	if (ev->u.line.flags & KMSG_MARKER) {
		const char *name = NULL;
		size_t n = kmsg_marker(t, len, &name);

		need(n && ev->u.line.test && strlen(ev->u.line.test) == n &&
			     !memcmp(ev->u.line.test, name, n),
		     "a marker that names another test", t);
	}
	if (ev->u.line.test)
		need(check_test_name_len(ev->u.line.test, strlen(ev->u.line.test)) ==
			     strlen(ev->u.line.test),
		     "a slice of something that is no test name", ev->u.line.test);
	need((ev->u.line.flags & ~(KMSG_BAD | KMSG_MARKER)) == 0, "unknown flags", t);
	d->lines++;
	mix(d, t, len + 1);
	mix(d, &ev->u.line.flags, sizeof(unsigned));
	if (ev->u.line.test)
		mix(d, ev->u.line.test, strlen(ev->u.line.test) + 1);
}

static uint64_t
split(const uint8_t *data, size_t size, uint64_t seed, bool chunked, struct strbuf *tail)
{
	struct digest d = { .h = 0xcbf29ce484222325ull };
	struct event_bus bus = EVENT_BUS_INIT;
	struct kmsg *k;
	size_t i = 0;

	event_bus_add(&bus, (struct listener){ on_event, &d });
	k = kmsg_new(&bus, NULL);
	kmsg_set_tail(k, (unsigned)(seed % 7));
	while (i < size) {
		size_t n = size - i;

		if (chunked) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			n = 1 + (seed >> 33) % ((seed >> 60) ? 16 : 2048);
			if (n > size - i)
				n = size - i;
		}
		kmsg_feed(k, (const char *)data + i, n);
		i += n;
	}
	kmsg_finish(k);
	need(kmsg_lines(k) == d.lines, "kmsg_lines() is not the lines emitted", NULL);
	kmsg_tail(k, tail);
	kmsg_free(k);
	event_bus_release(&bus);
	return d.h;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;

	for (size_t i = 0; i < size && i < 64; i++)
		seed = (seed ^ data[i]) * 0x100000001b3ull;
	seed ^= size;
	if (split(data, size, seed, false, &a) != split(data, size, seed, true, &b))
		need(false, "the lines depend on how the input was cut", NULL);
	need(!strcmp(a.buf, b.buf), "the tail depends on how the input was cut", NULL);
	strbuf_release(&a);
	strbuf_release(&b);
	return 0;
}
