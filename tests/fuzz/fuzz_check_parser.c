/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The check-output parser, fed the input whole and again cut at points
 * drawn from the input itself: both must give the same events, and every
 * TEST_END must close the TEST_START before it.
 *
 * fuzz-sources: src/fstests/check_parser.c src/core/event.c src/core/util.c src/core/status.c
 * fuzz-seeds: fixtures:stdout.txt tests/fixtures/check-output
 * fuzz-options: -max_len=600000
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/event.h"
#include "fstests/check_parser.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct digest {
	uint64_t h;
	size_t events;
	char open[CHECK_NAME_MAX + 1]; /* the test started last */
	bool is_open;
};

static void
mix(struct digest *d, const void *p, size_t n)
{
	const unsigned char *s = p;

	for (size_t i = 0; i < n; i++)
		d->h = (d->h ^ s[i]) * 0x100000001b3ull;
}

static void
mix_str(struct digest *d, const char *s)
{
	if (s)
		mix(d, s, strlen(s) + 1);
	else
		mix(d, "\xff", 1);
}

static void
mix_num(struct digest *d, double v)
{
	long long n = (long long)(v * 1000);

	mix(d, &n, sizeof(n));
}

static void
need(bool ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "check_parser: %s\n", what);
		abort();
	}
}

static void
on_event(void *data, const struct event *ev)
{
	struct digest *d = data;
	const struct test_counts *c = &ev->u.summary.counts;

	d->events++;
	mix(d, &ev->type, sizeof(ev->type));
	mix_str(d, ev->config);
	switch (ev->type) {
	case EV_SECTION:
		need(ev->u.section.fstyp != NULL, "SECTION without fstyp");
		mix_str(d, ev->u.section.name);
		mix_str(d, ev->u.section.fstyp);
		mix_str(d, ev->u.section.platform);
		mix_str(d, ev->u.section.mkfs_options);
		mix_str(d, ev->u.section.mount_options);
		mix(d, &ev->u.section.recreating, sizeof(bool));
		break;
	case EV_TEST_START:
		need(ev->u.test_start.test != NULL, "TEST_START without a test");
		need(strlen(ev->u.test_start.test) <= CHECK_NAME_MAX, "TEST_START name too long");
		mix_str(d, ev->u.test_start.test);
		mix_num(d, ev->u.test_start.prev_seconds);
		mix(d, &ev->u.test_start.rerun, sizeof(unsigned));
		strcpy(d->open, ev->u.test_start.test);
		d->is_open = true;
		break;
	case EV_TEST_END:
		need(ev->u.test_end.test != NULL, "TEST_END without a test");
		need(d->is_open && !strcmp(d->open, ev->u.test_end.test),
		     "TEST_END without its TEST_START");
		need(ev->u.test_end.status < TS_COUNT, "TEST_END with a bad status");
		need(ev->u.test_end.status == TS_FAIL || !ev->u.test_end.reasons,
		     "fail reasons on a test that did not fail");
		need(!ev->u.test_end.reason || strlen(ev->u.test_end.reason) <= CHECK_REASON_MAX,
		     "reason over CHECK_REASON_MAX");
		need(!ev->u.test_end.detail ||
			     strlen(ev->u.test_end.detail) <= CHECK_DETAIL_MAX + 64,
		     "detail over CHECK_DETAIL_MAX");
		d->is_open = false;
		mix_str(d, ev->u.test_end.test);
		mix(d, &ev->u.test_end.status, sizeof(ev->u.test_end.status));
		mix_num(d, ev->u.test_end.seconds);
		mix(d, &ev->u.test_end.reasons, sizeof(unsigned));
		mix_str(d, ev->u.test_end.reason);
		mix_str(d, ev->u.test_end.detail);
		mix(d, &ev->u.test_end.rerun, sizeof(unsigned));
		break;
	case EV_CONSOLE:
		need(ev->u.line.text != NULL, "CONSOLE without text");
		need(strlen(ev->u.line.text) <= CHECK_LINE_MAX, "CONSOLE line over CHECK_LINE_MAX");
		mix_str(d, ev->u.line.text);
		mix_str(d, ev->u.line.test);
		break;
	case EV_SUMMARY:
		need(c->passed <= c->ran, "more passed than ran");
		mix(d, &c->ran, sizeof(unsigned));
		mix(d, &c->passed, sizeof(unsigned));
		mix(d, &c->failed, sizeof(unsigned));
		mix(d, &c->notrun, sizeof(unsigned));
		mix(d, &c->expunged, sizeof(unsigned));
		mix_num(d, c->seconds);
		mix(d, &ev->u.summary.interrupted, sizeof(bool));
		mix_str(d, ev->u.summary.failed_tests);
		mix_str(d, ev->u.summary.notrun_tests);
		mix_str(d, ev->u.summary.ran_tests);
		break;
	case EV_WARNING:
		need(ev->u.error.message != NULL, "WARNING without a message");
		mix_str(d, ev->u.error.message);
		break;
	default:
		need(false, "an event the parser does not emit");
	}
}

static uint64_t
parse(const uint8_t *data, size_t size, uint64_t seed, bool chunked, size_t *events)
{
	struct digest d = { .h = 0xcbf29ce484222325ull };
	struct event_bus bus = EVENT_BUS_INIT;
	struct check_parser *p;
	size_t i = 0;
	unsigned rerun = 0;

	event_bus_add(&bus, (struct listener){ on_event, &d });
	p = check_parser_new(&bus, seed & 1 ? "ext4/4k" : NULL);
	while (i < size) {
		size_t n = size - i;

		if (chunked) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			n = 1 + (seed >> 33) % ((seed >> 60) ? 16 : 4096);
			if (n > size - i)
				n = size - i;
		}
		check_parser_feed(p, (const char *)data + i, n);
		i += n;
	}
	check_parser_finish(p);
	mix_str(&d, check_parser_current_test(p, &rerun));
	mix(&d, &rerun, sizeof(rerun));
	mix_str(&d, check_parser_xunit(p));
	need(check_parser_lines(p) >= check_parser_cut_lines(p), "more cut lines than lines");
	{
		bool in = check_parser_interrupted(p);
		unsigned s = check_parser_summaries(p);
		size_t l = check_parser_lines(p), c = check_parser_cut_lines(p);

		mix(&d, &in, sizeof(in));
		mix(&d, &s, sizeof(s));
		mix(&d, &l, sizeof(l));
		mix(&d, &c, sizeof(c));
	}
	check_parser_free(p);
	event_bus_release(&bus);
	*events = d.events;
	return d.h;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t seed = 0x9e3779b97f4a7c15ull, whole, cut;
	size_t ew, ec;

	/* the split points come from the input itself */
	for (size_t i = 0; i < size && i < 64; i++)
		seed = (seed ^ data[i]) * 0x100000001b3ull;
	seed ^= size;
	whole = parse(data, size, seed, false, &ew);
	cut = parse(data, size, seed, true, &ec);
	if (whole != cut) {
		fprintf(stderr,
			"check_parser: %zu events fed whole, %zu fed in chunks: they differ\n", ew,
			ec);
		abort();
	}
	return 0;
}
