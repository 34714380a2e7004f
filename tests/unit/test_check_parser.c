/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The check-output parser: every real fixture fed whole, a byte at a time
 * and in random chunks (the same events each time), checked against its
 * truth.tsv and against what check itself left in results/ (check.time,
 * check.log, result.xml); then inputs of our own in the formats check
 * prints (tests/fixtures/check-output: sections and the recap, -T, -L, -n,
 * -b, -d, the other failure words, interrupts, no final newline) and
 * generated ones (a 10 MB diff, binary garbage, long lines, CR LF).
 */
#include "testlib.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/event.h"
#include "core/paths.h"
#include "core/util.h"
#include "fstests/check_parser.h"
#include "fstests/results.h"

/* ---- recording events ---- */

struct rec_event {
	enum event_type type;
	size_t pos; /* bytes fed when it came */
	char *config, *name, *fstyp, *platform, *mkfs, *mount, *reason, *detail, *hints;
	char *line_test;
	char *failed_tests, *notrun_tests, *ran_tests;
	enum test_status status;
	double seconds, prev;
	unsigned rerun, reasons, flags;
	bool recreating, interrupted;
	struct test_counts counts;
};

struct recorder {
	struct rec_event *ev;
	size_t n, alloc;
	size_t fed; /* bytes fed so far */
	/* the parser's state after finish() */
	char *current, *xunit;
	unsigned current_rerun, summaries;
	bool interrupted;
	size_t lines, cut;
};

static char *
dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

static void
on_event(void *data, const struct event *ev)
{
	struct recorder *r = data;
	struct rec_event *e;

	ALLOC_GROW(r->ev, r->n + 1, r->alloc);
	e = &r->ev[r->n++];
	memset(e, 0, sizeof(*e));
	e->type = ev->type;
	e->pos = r->fed;
	e->config = dup_or_null(ev->config);
	e->seconds = e->prev = -1;
	switch (ev->type) {
	case EV_SECTION:
		e->name = dup_or_null(ev->u.section.name);
		e->fstyp = dup_or_null(ev->u.section.fstyp);
		e->platform = dup_or_null(ev->u.section.platform);
		e->mkfs = dup_or_null(ev->u.section.mkfs_options);
		e->mount = dup_or_null(ev->u.section.mount_options);
		e->recreating = ev->u.section.recreating;
		break;
	case EV_TEST_START:
		e->name = dup_or_null(ev->u.test_start.test);
		e->prev = ev->u.test_start.prev_seconds;
		e->rerun = ev->u.test_start.rerun;
		break;
	case EV_TEST_END:
		e->name = dup_or_null(ev->u.test_end.test);
		e->status = ev->u.test_end.status;
		e->seconds = ev->u.test_end.seconds;
		e->reasons = ev->u.test_end.reasons;
		e->reason = dup_or_null(ev->u.test_end.reason);
		e->detail = dup_or_null(ev->u.test_end.detail);
		e->hints = dup_or_null(ev->u.test_end.hints);
		e->rerun = ev->u.test_end.rerun;
		break;
	case EV_CONSOLE:
	case EV_KMSG:
		e->name = dup_or_null(ev->u.line.text);
		e->flags = ev->u.line.flags;
		e->line_test = dup_or_null(ev->u.line.test);
		break;
	case EV_SUMMARY:
		e->counts = ev->u.summary.counts;
		e->interrupted = ev->u.summary.interrupted;
		e->failed_tests = dup_or_null(ev->u.summary.failed_tests);
		e->notrun_tests = dup_or_null(ev->u.summary.notrun_tests);
		e->ran_tests = dup_or_null(ev->u.summary.ran_tests);
		break;
	case EV_WARNING:
	case EV_ERROR:
		e->name = dup_or_null(ev->u.error.message);
		break;
	default:
		fail_msg("the parser emitted a %s event", event_type_str(ev->type));
	}
}

static void
recorder_release(struct recorder *r)
{
	for (size_t i = 0; i < r->n; i++) {
		struct rec_event *e = &r->ev[i];

		free(e->config);
		free(e->name);
		free(e->fstyp);
		free(e->platform);
		free(e->mkfs);
		free(e->mount);
		free(e->reason);
		free(e->detail);
		free(e->hints);
		free(e->line_test);
		free(e->failed_tests);
		free(e->notrun_tests);
		free(e->ran_tests);
	}
	free(r->ev);
	free(r->current);
	free(r->xunit);
	memset(r, 0, sizeof(*r));
}

static const char *
nn(const char *s)
{
	return s ? s : "(null)";
}

/* The events from the first on as text, positions left out. */
static void
serialize_events(const struct recorder *r, size_t first, struct strbuf *sb)
{
	for (size_t i = first; i < r->n; i++) {
		const struct rec_event *e = &r->ev[i];
		const struct test_counts *c = &e->counts;

		strbuf_addf(sb, "%s [%s] %s", event_type_str(e->type), nn(e->config), nn(e->name));
		switch (e->type) {
		case EV_SECTION:
			strbuf_addf(sb, " fstyp=%s platform=%s mkfs=%s mount=%s recreating=%d",
				    nn(e->fstyp), nn(e->platform), nn(e->mkfs), nn(e->mount),
				    e->recreating);
			break;
		case EV_TEST_START:
			strbuf_addf(sb, " prev=%.3f rerun=%u", e->prev, e->rerun);
			break;
		case EV_TEST_END:
			strbuf_addf(sb, " %s seconds=%.3f reasons=%#x rerun=%u reason=%s detail=%s",
				    test_status_str(e->status), e->seconds, e->reasons, e->rerun,
				    nn(e->reason), nn(e->detail));
			break;
		case EV_CONSOLE:
			strbuf_addf(sb, " test=%s flags=%u", nn(e->line_test), e->flags);
			break;
		case EV_SUMMARY:
			strbuf_addf(
				sb,
				" ran=%u passed=%u failed=%u notrun=%u expunged=%u seconds=%.3f "
				"interrupted=%d failed=%s notrun=%s ran=%s",
				c->ran, c->passed, c->failed, c->notrun, c->expunged, c->seconds,
				e->interrupted, nn(e->failed_tests), nn(e->notrun_tests),
				nn(e->ran_tests));
			break;
		default:
			break;
		}
		strbuf_addch(sb, '\n');
	}
}

/* Every event and the final state as text. */
static void
serialize(const struct recorder *r, struct strbuf *sb)
{
	serialize_events(r, 0, sb);
	strbuf_addf(sb,
		    "STATE current=%s rerun=%u interrupted=%d summaries=%u xunit=%s lines=%zu "
		    "cut=%zu\n",
		    nn(r->current), r->current_rerun, r->interrupted, r->summaries, nn(r->xunit),
		    r->lines, r->cut);
}

/* ---- feeding ---- */

enum feed_mode { FEED_WHOLE, FEED_BYTES, FEED_RANDOM };

/* A small fixed-seed generator, so that every run cuts the same way. */
static uint32_t
lcg(uint32_t *state)
{
	*state = *state * 1103515245u + 12345u;
	return *state >> 8;
}

static size_t
chunk_size(uint32_t *state)
{
	uint32_t r = lcg(state);

	switch (r % 4) {
	case 0:
		return 1 + r / 4 % 3; /* 1..3: cuts inside words */
	case 1:
		return 1 + r / 4 % 17;
	case 2:
		return 1 + r / 4 % 200;
	default:
		return 1 + r / 4 % 5000;
	}
}

static void
feed_mode(struct check_parser *p, struct recorder *r, const char *text, size_t len,
	  enum feed_mode mode, uint32_t seed)
{
	size_t i = 0;

	while (i < len) {
		size_t n = mode == FEED_WHOLE	? len - i
			   : mode == FEED_BYTES ? 1
						: chunk_size(&seed);

		if (n > len - i)
			n = len - i;
		r->fed = i + n;
		check_parser_feed(p, text + i, n);
		i += n;
	}
}

static void
finish(struct check_parser *p, struct recorder *r)
{
	const char *cur;

	check_parser_finish(p);
	cur = check_parser_current_test(p, &r->current_rerun);
	r->current = dup_or_null(cur);
	r->xunit = dup_or_null(check_parser_xunit(p));
	r->interrupted = check_parser_interrupted(p);
	r->summaries = check_parser_summaries(p);
	r->lines = check_parser_lines(p);
	r->cut = check_parser_cut_lines(p);
}

static void
parse(const char *text, size_t len, const char *config, enum feed_mode mode, uint32_t seed,
      struct recorder *r)
{
	struct event_bus bus = EVENT_BUS_INIT;
	struct check_parser *p;

	memset(r, 0, sizeof(*r));
	event_bus_add(&bus, (struct listener){ on_event, r });
	p = check_parser_new(&bus, config);
	feed_mode(p, r, text, len, mode, seed);
	finish(p, r);
	check_parser_free(p);
	event_bus_release(&bus);
}

/*
 * Parse text whole, a byte at a time and in random chunks of three seeds;
 * assert that every way gives the same events, and leave the whole-feed
 * events in *r (bytes: the byte-at-a-time ones, for positions).
 */
static void
parse_every_way(const char *what, const char *text, size_t len, const char *config,
		struct recorder *r, struct recorder *bytes)
{
	struct strbuf want = STRBUF_INIT, got = STRBUF_INIT;
	struct recorder other;

	parse(text, len, config, FEED_WHOLE, 0, r);
	serialize(r, &want);
	for (int way = 0; way < 4; way++) {
		parse(text, len, config, way ? FEED_RANDOM : FEED_BYTES, 0x5eed + (uint32_t)way,
		      &other);
		strbuf_reset(&got);
		serialize(&other, &got);
		if (strcmp(want.buf, got.buf)) {
			size_t at = 0, from;

			while (want.buf[at] == got.buf[at])
				at++;
			from = at > 200 ? at - 200 : 0;
			fprintf(stderr, "# %s: fed whole:\n%.400s\n# fed %s:\n%.400s\n", what,
				want.buf + from, way ? "in random chunks" : "a byte at a time",
				got.buf + from);
			fail_msg("%s: the events depend on how the input was cut", what);
		}
		if (!way && bytes)
			*bytes = other;
		else
			recorder_release(&other);
	}
	strbuf_release(&want);
	strbuf_release(&got);
}

static void
parse_file(const char *path, const char *config, struct recorder *r, struct recorder *bytes)
{
	char *text = NULL;
	size_t len;

	assert_int_equal(read_file(path, 1u << 26, &text, &len), OK);
	parse_every_way(path, text, len, config, r, bytes);
	free(text);
}

static void
parse_ours(const char *name, struct recorder *r)
{
	char *rel = xasprintf("tests/fixtures/check-output/%s", name);
	char *path = test_path(rel);

	parse_file(path, NULL, r, NULL);
	free(path);
	free(rel);
}

/* ---- looking at events ---- */

static size_t
count(const struct recorder *r, enum event_type type)
{
	size_t n = 0;

	for (size_t i = 0; i < r->n; i++)
		n += r->ev[i].type == type;
	return n;
}

/* The nth (0-based) event of a type, failing when there is none. */
static const struct rec_event *
nth(const struct recorder *r, enum event_type type, size_t nth_one)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->ev[i].type == type && !nth_one--)
			return &r->ev[i];
	fail_msg("no %s event number %zu", event_type_str(type), nth_one);
	return NULL;
}

/* The TEST_END of a test's run (rerun), or NULL. */
static const struct rec_event *
end_of(const struct recorder *r, const char *test, unsigned rerun)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->ev[i].type == EV_TEST_END && !strcmp(r->ev[i].name, test) &&
		    r->ev[i].rerun == rerun)
			return &r->ev[i];
	return NULL;
}

static const struct rec_event *
must_end(const struct recorder *r, const char *test, unsigned rerun)
{
	const struct rec_event *e = end_of(r, test, rerun);

	if (!e)
		fail_msg("no TEST_END for %s (run %u)", test, rerun);
	return e;
}

static bool
has_warning(const struct recorder *r, const char *words)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->ev[i].type == EV_WARNING && strstr(r->ev[i].name, words))
			return true;
	return false;
}

/* Every TEST_START is followed by its TEST_END before the next TEST_START. */
static void
assert_paired(const struct recorder *r, bool last_open)
{
	const char *open = NULL;

	for (size_t i = 0; i < r->n; i++) {
		const struct rec_event *e = &r->ev[i];

		if (e->type == EV_TEST_START) {
			if (open)
				fail_msg("TEST_START %s while %s had no TEST_END", e->name, open);
			open = e->name;
		} else if (e->type == EV_TEST_END) {
			if (!open || strcmp(open, e->name))
				fail_msg("TEST_END %s without its TEST_START", e->name);
			open = NULL;
		}
	}
	assert_true(last_open == (open != NULL));
}

/* ---- the real fixtures ---- */

struct fixture_case {
	const char *name;
	const char *current; /* the test check was cut off in */
	bool summary;	     /* check's summary reached stdout */
	struct {
		const char *test;
		unsigned reasons;
	} fails[2];
	unsigned reruns; /* -L runs after the first */
};

static const struct fixture_case cases[] = {
	{ "A-plain-pass-notrun", NULL, true, { { 0 } }, 0 },
	{ "B-mismatch", NULL, true, { { "generic/002", FAIL_MISMATCH } }, 0 },
	{ "D-exit-status", NULL, true, { { "generic/006", FAIL_EXIT | FAIL_MISMATCH } }, 0 },
	{ "E-fsck", NULL, true, { { "generic/015", FAIL_FSCK } }, 0 },
	{ "G-exclude", NULL, true, { { 0 } }, 0 },
	{ "H-interrupted", "generic/014", true, { { 0 } }, 0 },
	{ "H2-interrupted-mid-test", "generic/029", false, { { 0 } }, 0 },
	{ "J-loop", NULL, true, { { "generic/002", FAIL_MISMATCH } }, 2 },
};

static char *
case_path(const char *fixture_case, const char *rel)
{
	char *c = test_fixture(fixture_case);
	char *p = path_join(c, rel);

	free(c);
	return p;
}

static bool
have_fixtures(void)
{
	char *p = test_fixture("A-plain-pass-notrun/stdout.txt");
	bool ok = path_exists(p);

	if (!ok)
		fprintf(stderr, "# SKIP the fstests fixtures are not there (%s)\n", p);
	free(p);
	return ok;
}

static char *
case_read(const char *fixture_case, const char *rel, size_t *len)
{
	char *p = case_path(fixture_case, rel);
	char *text = NULL;
	size_t n;

	if (read_file(p, 1u << 26, &text, &n) != OK)
		fail_msg("cannot read '%s': %s", p, error_msg());
	free(p);
	if (len)
		*len = n;
	return text;
}

static unsigned
expected_reasons(const struct fixture_case *fc, const char *test)
{
	for (size_t i = 0; i < ARRAY_SIZE(fc->fails); i++)
		if (fc->fails[i].test && !strcmp(fc->fails[i].test, test))
			return fc->fails[i].reasons;
	fail_msg("%s: %s failed, which its README does not say", fc->name, test);
	return 0;
}

/* "KEY=value" of local.config ("export KEY=value" lines), or NULL. */
static char *
config_value(const char *config_text, const char *key)
{
	char *want = xasprintf("export %s=", key);
	const char *p = strstr(config_text, want);
	char *v = NULL;

	if (p) {
		p += strlen(want);
		v = xstrndup(p, strcspn(p, "\n"));
	}
	free(want);
	return v;
}

/* The START of every test came mid-line, right after the name and padding. */
static void
assert_start_early(const struct fixture_case *fc, const char *text, const struct recorder *bytes)
{
	for (size_t i = 0; i < bytes->n; i++) {
		const struct rec_event *e = &bytes->ev[i];
		size_t start, name_len;

		if (e->type != EV_TEST_START)
			continue;
		assert_true(e->pos > 0);
		if (text[e->pos - 1] == '\n')
			fail_msg("%s: TEST_START %s came only at the end of its line", fc->name,
				 e->name);
		start = e->pos - 1;
		while (start && text[start - 1] != '\n')
			start--;
		name_len = strlen(e->name);
		assert_memory_equal(text + start, e->name, name_len);
		/* the name, its padding to 12 and check's seven blanks, no more */
		if (e->pos - start > 19)
			fail_msg("%s: TEST_START %s came %zu bytes into its line", fc->name,
				 e->name, e->pos - start);
	}
}

static void
check_fixture(const struct fixture_case *fc)
{
	struct recorder r, bytes;
	struct strvec truth = STRVEC_INIT;
	struct check_time ct;
	struct check_log log = { 0 };
	struct run_record xr;
	struct section_result *xs;
	char *stdout_path = case_path(fc->name, "stdout.txt");
	char *text, *truth_text, *time_text, *log_text, *xml, *config;
	size_t len, tlen, llen, xlen, ends = 0, reruns = 0, expunged = 0;
	double seconds = 0;
	const struct check_log_block *blk;

	text = case_read(fc->name, "stdout.txt", &len);
	parse_every_way(stdout_path, text, len, "ext4/4k", &r, &bytes);
	assert_start_early(fc, text, &bytes);

	/* the header: check's words, as local.config, check.log and result.xml have them */
	config = case_read(fc->name, "local.config", NULL);
	log_text = case_read(fc->name, "results/check.log", &llen);
	check_log_parse(log_text, llen, &log);
	assert_true(log.n >= 1);
	blk = &log.blocks[log.n - 1];
	xml = case_read(fc->name, "results/result.xml", &xlen);
	run_record_init(&xr);
	assert_int_equal(results_read_xunit(xml, xlen, "result.xml", &xr, NULL), OK);
	assert_int_equal(xr.nsections, 1);
	xs = &xr.sections[0];
	assert_int_equal(count(&r, EV_SECTION), 1);
	{
		const struct rec_event *s = nth(&r, EV_SECTION, 0);
		char *fstyp = config_value(config, "FSTYP");
		char *dev = config_value(config, "SCRATCH_DEV");
		char *mnt = config_value(config, "SCRATCH_MNT");
		char *mkfs = xasprintf("-F %s", dev);
		char *mount = xasprintf("-o acl,user_xattr %s %s", dev, mnt);

		assert_ptr_equal(s, &r.ev[0]);
		assert_null(s->name);
		assert_string_equal(s->config, "ext4/4k");
		assert_string_equal(s->fstyp, fstyp);
		assert_string_equal(s->fstyp, xs->fstyp);
		assert_string_equal(s->mkfs, mkfs);
		assert_string_equal(s->mount, mount);
		assert_true(str_startswith(s->platform, "Linux/x86_64 "));
		assert_non_null(strstr(s->platform, blk->kernel));
		assert_false(s->recreating);
		free(fstyp);
		free(dev);
		free(mnt);
		free(mkfs);
		free(mount);
	}

	/* every first run against truth.tsv, in order */
	truth_text = case_read(fc->name, "truth.tsv", &tlen);
	strvec_split(&truth, truth_text, "\n");
	time_text = case_read(fc->name, "results/check.time", &tlen);
	check_time_parse(time_text, tlen, &ct);
	for (size_t i = 0; i < r.n; i++) {
		const struct rec_event *e = &r.ev[i];
		char *want;

		if (e->type != EV_TEST_END)
			continue;
		assert_string_equal(e->config, "ext4/4k");
		if (e->rerun) {
			reruns++;
			assert_int_equal(e->status, TS_FAIL);
			assert_int_equal(e->reasons, expected_reasons(fc, e->name));
			continue;
		}
		if (ends >= truth.n)
			fail_msg("%s: a TEST_END for %s that truth.tsv does not have", fc->name,
				 e->name);
		want = xasprintf("%s\t%s", e->name, test_status_str(e->status));
		assert_string_equal(want, truth.v[ends]);
		free(want);
		ends++;
		if (e->seconds > 0)
			seconds += e->seconds;
		switch (e->status) {
		case TS_PASS:
			/* check.time holds check's own times of passing tests */
			assert_true(e->seconds == check_time_get(&ct, e->name));
			assert_int_equal(e->reasons, 0);
			assert_null(e->reason);
			assert_null(e->detail);
			break;
		case TS_NOTRUN: {
			struct test_result *t = section_find_test(xs, e->name);

			assert_non_null(t);
			assert_int_equal(t->status, TS_NOTRUN);
			assert_string_equal(e->reason, t->reason);
			break;
		}
		case TS_FAIL:
			assert_int_equal(e->reasons, expected_reasons(fc, e->name));
			assert_non_null(e->reason);
			assert_non_null(e->detail);
			assert_true(e->seconds < 0);
			if (e->reasons & FAIL_MISMATCH) {
				char *see = xasprintf("output mismatch (see "
						      "/root/xfstests/results//%s.out.bad)",
						      e->name);
				char *head = xasprintf("--- tests/%s.out\t", e->name);

				assert_non_null(strstr(e->reason, see));
				assert_true(str_startswith(e->detail, head));
				assert_non_null(strstr(e->detail, "\n...\n(Run 'diff -u "));
				assert_null(strstr(e->detail, "\n    "));
				free(see);
				free(head);
			}
			if (e->reasons & FAIL_EXIT)
				assert_true(str_startswith(e->reason, "failed, exit status 1; "));
			if (e->reasons & FAIL_FSCK) {
				assert_string_equal(e->reason,
						    "_check_generic_filesystem: "
						    "filesystem on /dev/vdc is inconsistent");
				assert_string_equal(e->detail,
						    "(see /root/xfstests/results//generic/015.full "
						    "for details)");
			}
			break;
		case TS_EXPUNGED:
			expunged++;
			assert_null(e->reason);
			break;
		default:
			fail_msg("%s: %s is %s", fc->name, e->name, test_status_str(e->status));
		}
	}
	assert_int_equal(ends, truth.n);
	assert_int_equal(reruns, fc->reruns);
	assert_paired(&r, fc->current != NULL);
	if (fc->reruns) {
		size_t runs = 0;

		/* result.xml has a testcase per run */
		for (size_t i = 0; i < xs->ntests; i++)
			if (!strcmp(xs->tests[i].test, fc->fails[0].test))
				runs += 1 + xs->tests[i].reruns;
		assert_int_equal(runs, fc->reruns + 1);
		assert_int_equal(nth(&r, EV_TEST_START, 2)->rerun, 2);
	}

	/* the summary, as check.log has it */
	if (fc->summary) {
		const struct rec_event *s = nth(&r, EV_SUMMARY, 0);
		char *ran = strvec_join(&blk->ran, " ");
		char *failures = strvec_join(&blk->failures, " ");
		char *notrun = strvec_join(&blk->notrun, " ");

		assert_int_equal(count(&r, EV_SUMMARY), 1);
		assert_ptr_equal(s, &r.ev[r.n - 1]);
		assert_string_equal(s->config, "ext4/4k");
		assert_int_equal(s->counts.failed, blk->failures.n);
		assert_int_equal(s->counts.notrun, blk->notrun.n);
		assert_int_equal(s->counts.ran, blk->ran.n - blk->notrun.n);
		assert_int_equal(s->counts.passed, s->counts.ran - s->counts.failed);
		assert_int_equal(s->counts.expunged, expunged);
		assert_true(s->counts.seconds == seconds);
		assert_int_equal(blk->total, (int)blk->ran.n);
		assert_true(s->interrupted == blk->interrupted);
		assert_true(r.interrupted == blk->interrupted);
		assert_string_equal(s->ran_tests, ran);
		if (blk->failures.n)
			assert_string_equal(s->failed_tests, failures);
		else
			assert_null(s->failed_tests);
		if (blk->notrun.n)
			assert_string_equal(s->notrun_tests, notrun);
		else
			assert_null(s->notrun_tests);
		assert_int_equal(r.summaries, 1);
		assert_string_equal(r.xunit, "/root/xfstests/results//result.xml");
		free(ran);
		free(failures);
		free(notrun);
	} else {
		/* check's summary went to check.log alone */
		assert_true(blk->interrupted);
		assert_int_equal(count(&r, EV_SUMMARY), 0);
		assert_int_equal(r.summaries, 0);
		assert_false(r.interrupted);
		assert_null(r.xunit);
	}
	if (fc->current) {
		assert_non_null(r.current);
		assert_string_equal(r.current, fc->current);
		assert_int_equal(r.current_rerun, 0);
		/* its name is check.log's last Ran: entry */
		assert_string_equal(r.current, blk->ran.v[blk->ran.n - 1]);
	} else {
		assert_null(r.current);
	}
	assert_int_equal(count(&r, EV_WARNING), 0);
	assert_int_equal(r.cut, 0);

	run_record_release(&xr);
	check_log_release(&log);
	check_time_release(&ct);
	strvec_clear(&truth);
	recorder_release(&r);
	recorder_release(&bytes);
	free(stdout_path);
	free(text);
	free(truth_text);
	free(time_text);
	free(log_text);
	free(xml);
	free(config);
}

static void
test_fixtures(void **state)
{
	(void)state;
	if (!have_fixtures())
		skip();
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		check_fixture(&cases[i]);
}

/* CR LF line ends (a serial console, a Windows share) change nothing. */
static void
test_fixtures_crlf(void **state)
{
	(void)state;
	if (!have_fixtures())
		skip();
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct recorder lf, crlf;
		struct strbuf a = STRBUF_INIT, b = STRBUF_INIT, text = STRBUF_INIT;
		size_t len;
		char *raw = case_read(cases[i].name, "stdout.txt", &len);

		for (size_t j = 0; j < len; j++) {
			if (raw[j] == '\n')
				strbuf_addch(&text, '\r');
			strbuf_addch(&text, raw[j]);
		}
		parse(raw, len, NULL, FEED_WHOLE, 0, &lf);
		parse_every_way(cases[i].name, text.buf, text.len, NULL, &crlf, NULL);
		serialize(&lf, &a);
		serialize(&crlf, &b);
		assert_string_equal(a.buf, b.buf);
		recorder_release(&lf);
		recorder_release(&crlf);
		strbuf_release(&a);
		strbuf_release(&b);
		strbuf_release(&text);
		free(raw);
	}
}

/* ---- streaming ---- */

struct stream {
	struct event_bus bus;
	struct check_parser *p;
	struct recorder r;
};

static void
stream_open(struct stream *s)
{
	memset(s, 0, sizeof(*s));
	event_bus_add(&s->bus, (struct listener){ on_event, &s->r });
	s->p = check_parser_new(&s->bus, NULL);
}

static void
stream_feed(struct stream *s, const char *text)
{
	check_parser_feed(s->p, text, strlen(text));
}

static void
stream_close(struct stream *s)
{
	check_parser_free(s->p);
	event_bus_release(&s->bus);
	recorder_release(&s->r);
}

static const char header[] = "FSTYP         -- ext4\n"
			     "PLATFORM      -- Linux/x86_64 guest 6.1.0\n"
			     "MKFS_OPTIONS  -- -F /dev/vdc\n"
			     "MOUNT_OPTIONS -- -o acl,user_xattr /dev/vdc /mnt/scratch\n"
			     "\n";

/* Events come as soon as check's bytes settle them, not at the line's end. */
static void
test_streaming(void **state)
{
	struct stream s;
	unsigned rerun = 9;

	(void)state;
	stream_open(&s);
	stream_feed(&s, header);
	assert_int_equal(s.r.n, 1);
	assert_int_equal(s.r.ev[0].type, EV_SECTION);
	assert_string_equal(s.r.ev[0].fstyp, "ext4");
	assert_string_equal(s.r.ev[0].platform, "Linux/x86_64 guest 6.1.0");

	/* the name and one blank of padding: could still be anything */
	stream_feed(&s, "generic/005 ");
	assert_int_equal(s.r.n, 1);
	assert_null(check_parser_current_test(s.p, NULL));
	/* check's seven blanks for "no previous time": the test runs */
	stream_feed(&s, "     ");
	assert_int_equal(s.r.n, 1);
	stream_feed(&s, " ");
	assert_int_equal(s.r.n, 2);
	stream_feed(&s, " ");
	assert_int_equal(s.r.ev[1].type, EV_TEST_START);
	assert_string_equal(s.r.ev[1].name, "generic/005");
	assert_true(s.r.ev[1].prev < 0);
	assert_string_equal(check_parser_current_test(s.p, &rerun), "generic/005");
	assert_int_equal(rerun, 0);
	/* its time, then the newline: the pass is certain at the line's end */
	stream_feed(&s, " 7s");
	assert_int_equal(s.r.n, 2);
	stream_feed(&s, "\n");
	assert_int_equal(s.r.n, 3);
	assert_int_equal(s.r.ev[2].type, EV_TEST_END);
	assert_int_equal(s.r.ev[2].status, TS_PASS);
	assert_true(s.r.ev[2].seconds == 7);
	assert_null(check_parser_current_test(s.p, NULL));

	/* a previous time from check.time: " 5s ... " */
	stream_feed(&s, "generic/006  5s");
	assert_int_equal(s.r.n, 3);
	stream_feed(&s, " ..");
	assert_int_equal(s.r.n, 3);
	stream_feed(&s, ". ");
	assert_int_equal(s.r.n, 4);
	assert_string_equal(s.r.ev[3].name, "generic/006");
	assert_true(s.r.ev[3].prev == 5);

	/* a failure is settled only when check goes on: a diff may follow */
	stream_feed(&s, "- output mismatch (see /r/generic/006.out.bad)\n");
	assert_int_equal(s.r.n, 4);
	stream_feed(&s, "    --- tests/generic/006.out\n    +++ /r/generic/006.out.bad\n");
	assert_int_equal(s.r.n, 4);
	stream_feed(&s, "generic/007        ");
	assert_int_equal(s.r.n, 6);
	assert_int_equal(s.r.ev[4].type, EV_TEST_END);
	assert_int_equal(s.r.ev[4].status, TS_FAIL);
	assert_string_equal(s.r.ev[4].detail,
			    "--- tests/generic/006.out\n+++ /r/generic/006.out.bad");
	assert_int_equal(s.r.ev[5].type, EV_TEST_START);
	assert_string_equal(s.r.ev[5].name, "generic/007");

	stream_feed(&s, " 1s\n");
	assert_int_equal(must_end(&s.r, "generic/007", 0)->status, TS_PASS);

	/* "NAME - unknown test, ignored" is not the start of a test */
	stream_feed(&s, "generic/999 - unknown test");
	assert_int_equal(s.r.n, 7);
	stream_feed(&s, ", ignored\n");
	assert_int_equal(s.r.n, 8);
	assert_int_equal(s.r.ev[7].type, EV_WARNING);
	assert_non_null(strstr(s.r.ev[7].name, "'generic/999'"));
	/* but " - no such test?" is, once it cannot be that warning */
	stream_feed(&s, "generic/998 - ");
	assert_int_equal(s.r.n, 8);
	stream_feed(&s, "n");
	assert_int_equal(s.r.n, 9);
	assert_int_equal(s.r.ev[8].type, EV_TEST_START);
	stream_feed(&s, "o such test?\n");
	assert_int_equal(must_end(&s.r, "generic/998", 0)->reasons, FAIL_NO_SUCH_TEST);

	/* a -T not-run waits for its reason line */
	stream_feed(&s, "generic/010         [10:00:00] [10:00:02] [not run]\n");
	assert_null(end_of(&s.r, "generic/010", 0));
	stream_feed(&s, "\tgeneric/010 -- no reflink\n");
	assert_string_equal(must_end(&s.r, "generic/010", 0)->reason, "no reflink");
	assert_true(must_end(&s.r, "generic/010", 0)->seconds == 2);

	check_parser_finish(s.p);
	check_parser_finish(s.p); /* twice is fine */
	assert_int_equal(check_parser_summaries(s.p), 0);
	assert_paired(&s.r, false);
	stream_close(&s);
}

/* ---- inputs of our own ---- */

static void
test_sections(void **state)
{
	struct recorder r;
	const struct rec_event *s1, *s2, *sum1, *sum2;
	size_t i, recap;

	(void)state;
	parse_ours("sections.txt", &r);
	assert_int_equal(count(&r, EV_SECTION), 2);
	assert_int_equal(count(&r, EV_SUMMARY), 2);
	s1 = nth(&r, EV_SECTION, 0);
	s2 = nth(&r, EV_SECTION, 1);
	assert_string_equal(s1->name, "ext4_4k");
	assert_string_equal(s1->config, "ext4_4k");
	assert_string_equal(s1->fstyp, "ext4");
	assert_string_equal(s1->mkfs, "-F /dev/vdc");
	assert_false(s1->recreating);
	assert_string_equal(s2->name, "xfs_4k");
	assert_string_equal(s2->fstyp, "xfs (non-debug)");
	assert_string_equal(s2->mkfs, "-f /dev/vdc");
	assert_string_equal(s2->mount, "/dev/vdc /mnt/scratch");
	assert_true(s2->recreating);

	/* events belong to their section */
	for (i = 0; &r.ev[i] != s2; i++)
		if (r.ev[i].type != EV_WARNING)
			assert_string_equal(r.ev[i].config, "ext4_4k");
	sum1 = nth(&r, EV_SUMMARY, 0);
	assert_true(sum1 < s2);
	assert_int_equal(sum1->counts.ran, 2);
	assert_int_equal(sum1->counts.passed, 1);
	assert_int_equal(sum1->counts.failed, 1);
	assert_string_equal(sum1->failed_tests, "generic/002");
	assert_true(sum1->counts.seconds == 5);
	assert_true(nth(&r, EV_TEST_START, 0)->prev == 4);
	assert_true(must_end(&r, "generic/001", 0)->seconds == 5);

	sum2 = nth(&r, EV_SUMMARY, 1);
	assert_string_equal(sum2->config, "xfs_4k");
	assert_int_equal(sum2->counts.ran, 2);
	assert_int_equal(sum2->counts.passed, 2);
	assert_int_equal(sum2->counts.notrun, 1);
	assert_string_equal(sum2->notrun_tests, "xfs/001");
	assert_string_equal(must_end(&r, "xfs/001", 0)->reason,
			    "this test requires a valid $SCRATCH_RTDEV");
	assert_string_equal(must_end(&r, "generic/001", 0)->config, "ext4_4k");
	assert_string_equal(r.ev[(size_t)(sum2 - r.ev) - 2].config, "xfs_4k");

	/* the closing recap is console text, not more summaries or sections */
	recap = (size_t)(sum2 - r.ev) + 1;
	assert_int_equal(r.n - recap, 10);
	for (i = recap; i < r.n; i++) {
		assert_int_equal(r.ev[i].type, EV_CONSOLE);
		assert_null(r.ev[i].line_test);
	}
	assert_string_equal(r.ev[recap].name, "SECTION       -- ext4_4k");
	assert_string_equal(r.ev[recap + 1].name, "=========================");
	assert_string_equal(r.ev[recap + 9].name, "Passed all 3 tests");
	assert_string_equal(r.xunit, "/root/xfstests/results//xfs_4k/result.xml");
	assert_int_equal(r.summaries, 2);
	assert_paired(&r, false);
	assert_int_equal(count(&r, EV_WARNING), 0);
	recorder_release(&r);
}

static void
test_timestamps(void **state)
{
	struct recorder r;
	const struct rec_event *e;
	const struct rec_event *sum;

	(void)state;
	parse_ours("timestamps.txt", &r);
	assert_true(must_end(&r, "generic/001", 0)->seconds == 5);
	e = must_end(&r, "generic/002", 0);
	assert_int_equal(e->status, TS_FAIL);
	assert_int_equal(e->reasons, FAIL_MISMATCH);
	assert_true(e->seconds == 3); /* from the stamps */
	e = must_end(&r, "generic/003", 0);
	assert_int_equal(e->reasons, FAIL_DMESG);
	assert_string_equal(e->reason, "_check_dmesg: something found in dmesg (see "
				       "/root/xfstests/results//generic/003.dmesg)");
	assert_true(e->seconds == 5);
	assert_null(e->detail);
	e = must_end(&r, "generic/004", 0);
	assert_int_equal(e->status, TS_NOTRUN);
	assert_string_equal(e->reason, "this test requires a valid $LOGWRITES_DEV");
	assert_true(e->seconds == 1);
	e = must_end(&r, "generic/005", 0);
	assert_int_equal(e->status, TS_PASS);
	assert_true(e->seconds == 5);
	assert_true(nth(&r, EV_TEST_START, 4)->prev == 4);
	e = must_end(&r, "generic/006", 0);
	assert_int_equal(e->reasons, FAIL_EXIT | FAIL_MISMATCH);
	assert_true(e->seconds == 6);
	assert_string_equal(e->reason, "failed, exit status 1; output mismatch (see "
				       "/root/xfstests/results//generic/006.out.bad)");
	sum = nth(&r, EV_SUMMARY, 0);
	assert_int_equal(sum->counts.ran, 5);
	assert_int_equal(sum->counts.failed, 3);
	assert_int_equal(sum->counts.passed, 2);
	assert_int_equal(sum->counts.notrun, 1);
	assert_true(sum->counts.seconds == 5 + 3 + 5 + 1 + 5 + 6);
	assert_paired(&r, false);
	assert_int_equal(count(&r, EV_CONSOLE), 0);
	assert_int_equal(count(&r, EV_WARNING), 0);
	recorder_release(&r);
}

static void
test_loop(void **state)
{
	struct recorder r;
	const struct rec_event *agg = NULL, *sum;

	(void)state;
	parse_ours("loop-flaky.txt", &r);
	assert_int_equal(must_end(&r, "generic/002", 0)->status, TS_FAIL);
	assert_int_equal(must_end(&r, "generic/002", 1)->status, TS_PASS);
	assert_true(must_end(&r, "generic/002", 1)->seconds == 6);
	assert_int_equal(must_end(&r, "generic/002", 2)->status, TS_PASS);
	assert_null(end_of(&r, "generic/002", 3));
	assert_int_equal(must_end(&r, "generic/035", 0)->status, TS_PASS);
	for (size_t i = 0; i < r.n; i++)
		if (r.ev[i].type == EV_CONSOLE)
			agg = &r.ev[i];
	assert_non_null(agg);
	assert_string_equal(agg->line_test, "generic/002");
	assert_true(str_startswith(agg->name, "generic/002 aggregate results across 3 runs: "));
	sum = nth(&r, EV_SUMMARY, 0);
	assert_int_equal(sum->counts.ran, 2);
	assert_int_equal(sum->counts.failed, 1);
	/* reruns are not counted, as check does not count them */
	assert_true(sum->counts.seconds == 5);
	assert_paired(&r, false);
	recorder_release(&r);
}

static void
test_list_only(void **state)
{
	struct recorder r;
	static const char *const listed[] = { "generic/001", "generic/002",
					      "generic/1234-long-name", "xfs/001" };

	(void)state;
	parse_ours("list-only.txt", &r);
	for (size_t i = 0; i < ARRAY_SIZE(listed); i++) {
		const struct rec_event *e = must_end(&r, listed[i], 0);

		assert_int_equal(e->status, TS_NOTRUN);
		assert_string_equal(e->reason, "listed by check -n");
		assert_int_equal(e->reasons, 0);
	}
	assert_int_equal(must_end(&r, "generic/003", 0)->status, TS_EXPUNGED);
	assert_int_equal(count(&r, EV_TEST_END), 5);
	assert_int_equal(count(&r, EV_SUMMARY), 0);
	assert_int_equal(count(&r, EV_WARNING), 0);
	assert_null(r.current);
	assert_paired(&r, false);
	recorder_release(&r);
}

static void
test_outcomes(void **state)
{
	struct recorder r;
	const struct rec_event *e;

	(void)state;
	parse_ours("outcomes.txt", &r);
	e = must_end(&r, "generic/010", 0);
	assert_int_equal(e->reasons, FAIL_CORE | FAIL_EXIT | FAIL_MISMATCH);
	assert_string_equal(e->reason, "dumped core; failed, exit status 139; output mismatch "
				       "(see /root/xfstests/results//generic/010.out.bad)");
	/* the diff, then an empty line and the test's hints, apart */
	assert_string_equal(e->detail, "--- tests/generic/010.out\n"
				       "+++ /root/xfstests/results//generic/010.out.bad\n"
				       "@@ -1 +1 @@\n"
				       "-ok");
	assert_string_equal(e->hints, "HINT: You _MAY_ be missing kernel fix:\n"
				      "      0123456789ab ext4: fix the thing the test checks\n"
				      "\n"
				      "This test wants kernel fix:\n"
				      "      ba9876543210 ext4: make the thing testable");
	assert_null(must_end(&r, "generic/011", 0)->hints);
	e = must_end(&r, "generic/011", 0);
	assert_int_equal(e->reasons, FAIL_KMEMLEAK);
	assert_null(e->detail);
	e = must_end(&r, "xfs/012", 0);
	assert_int_equal(e->reasons, FAIL_FSCK);
	assert_string_equal(e->detail, "(see /root/xfstests/results//xfs/012.full for details)\n"
				       "Trying to repair broken TEST_DEV file system");
	assert_int_equal(must_end(&r, "generic/013", 0)->reasons, FAIL_NO_QUALIFIED);
	e = must_end(&r, "generic/999", 0);
	assert_int_equal(e->status, TS_FAIL);
	assert_int_equal(e->reasons, FAIL_NO_SUCH_TEST);
	e = must_end(&r, "generic/014", 0);
	assert_int_equal(e->reasons, FAIL_EXIT);
	assert_string_equal(e->reason, "failed, exit status 1");
	e = must_end(&r, "generic/015", 0);
	assert_int_equal(e->status, TS_NOTRUN);
	assert_string_equal(e->reason, "fio utility required, skipped this test");
	assert_true(must_end(&r, "generic/016", 0)->seconds == 12);
	e = nth(&r, EV_SUMMARY, 0);
	assert_int_equal(e->counts.ran, 6);
	assert_int_equal(e->counts.failed, 5);
	assert_int_equal(e->counts.passed, 1);
	assert_int_equal(e->counts.notrun, 1);
	assert_int_equal(count(&r, EV_CONSOLE), 0);
	assert_int_equal(count(&r, EV_WARNING), 0);
	assert_null(r.xunit);
	assert_paired(&r, false);
	recorder_release(&r);
}

static void
test_brief(void **state)
{
	struct recorder r;
	const struct rec_event *sum;

	(void)state;
	parse_ours("brief.txt", &r);
	/* check's warning about a name it does not know */
	assert_int_equal(r.ev[0].type, EV_WARNING);
	assert_non_null(strstr(r.ev[0].name, "'generic/998'"));
	assert_int_equal(r.ev[1].type, EV_SECTION);
	assert_null(end_of(&r, "generic/998", 0));
	/* -b: no Ran: or Not run: lines; the not-run count comes from the tests */
	sum = nth(&r, EV_SUMMARY, 0);
	assert_null(sum->ran_tests);
	assert_null(sum->notrun_tests);
	assert_string_equal(sum->failed_tests, "generic/003");
	assert_int_equal(sum->counts.ran, 2);
	assert_int_equal(sum->counts.passed, 1);
	assert_int_equal(sum->counts.failed, 1);
	assert_int_equal(sum->counts.notrun, 1);
	assert_paired(&r, false);
	recorder_release(&r);
}

static void
test_dump_output(void **state)
{
	struct recorder r;
	const struct rec_event *sum;
	size_t lines = 0;

	(void)state;
	parse_ours("dump-output.txt", &r);
	/* the test's own output, even where it reads like check's summary */
	for (size_t i = 0; i < r.n; i++) {
		if (r.ev[i].type != EV_CONSOLE)
			continue;
		assert_non_null(r.ev[i].line_test);
		lines++;
	}
	assert_int_equal(lines, 5);
	assert_int_equal(must_end(&r, "generic/001", 0)->status, TS_PASS);
	assert_true(must_end(&r, "generic/001", 0)->seconds == 4);
	assert_int_equal(must_end(&r, "generic/002", 0)->status, TS_PASS);
	assert_int_equal(count(&r, EV_SUMMARY), 1);
	sum = nth(&r, EV_SUMMARY, 0);
	assert_int_equal(sum->counts.ran, 2);
	assert_int_equal(sum->counts.passed, 2);
	assert_int_equal(count(&r, EV_WARNING), 0);
	recorder_release(&r);
}

static void
test_interrupted(void **state)
{
	struct recorder r;
	const struct rec_event *sum;
	size_t i;

	(void)state;
	parse_ours("interrupted-sections.txt", &r);
	assert_int_equal(must_end(&r, "generic/002", 0)->status, TS_FAIL);
	assert_null(end_of(&r, "generic/003", 0));
	assert_string_equal(r.current, "generic/003");
	assert_true(r.interrupted);
	sum = nth(&r, EV_SUMMARY, 0);
	assert_true(sum->interrupted);
	assert_string_equal(sum->config, "ext4_4k");
	assert_int_equal(sum->counts.ran, 2);
	assert_int_equal(sum->counts.failed, 1);
	assert_int_equal(count(&r, EV_SUMMARY), 1);
	for (i = (size_t)(sum - r.ev) + 1; i < r.n; i++)
		assert_int_equal(r.ev[i].type, EV_CONSOLE);
	assert_paired(&r, true);
	recorder_release(&r);

	/* the guest died in a test after a failure: the failure still ends */
	{
		const char text[] = "generic/002        - output mismatch (see /r/002.out.bad)\n"
				    "    --- a\n"
				    "generic/003        ";
		struct strbuf all = STRBUF_INIT;

		strbuf_adds(&all, header);
		strbuf_adds(&all, text);
		parse_every_way("died", all.buf, all.len, NULL, &r, NULL);
		assert_int_equal(must_end(&r, "generic/002", 0)->status, TS_FAIL);
		assert_null(end_of(&r, "generic/003", 0));
		assert_string_equal(r.current, "generic/003");
		assert_false(r.interrupted);
		assert_int_equal(r.summaries, 0);
		recorder_release(&r);
		strbuf_release(&all);
	}
	/* and when it died during a failing test's diff, that test fails */
	{
		const char text[] = "generic/002        - output mismatch (see /r/002.out.bad)\n"
				    "    --- a\n    +++ b\n    @@ -1 +1 @@";
		struct strbuf all = STRBUF_INIT;

		strbuf_adds(&all, header);
		strbuf_adds(&all, text);
		parse_every_way("died in a diff", all.buf, all.len, NULL, &r, NULL);
		assert_string_equal(must_end(&r, "generic/002", 0)->detail,
				    "--- a\n+++ b\n@@ -1 +1 @@");
		assert_null(r.current);
		recorder_release(&r);
		strbuf_release(&all);
	}
}

static void
test_no_newline(void **state)
{
	struct recorder r;

	(void)state;
	parse_ours("no-newline.txt", &r);
	assert_int_equal(count(&r, EV_SUMMARY), 1);
	assert_int_equal(nth(&r, EV_SUMMARY, 0)->counts.passed, 2);
	assert_null(r.current);
	recorder_release(&r);

	parse_ours("no-newline-test.txt", &r);
	assert_int_equal(must_end(&r, "generic/002", 0)->status, TS_PASS);
	assert_true(must_end(&r, "generic/002", 0)->seconds == 4);
	assert_int_equal(count(&r, EV_SUMMARY), 0);
	assert_null(r.current);
	assert_paired(&r, false);
	recorder_release(&r);
}

/* ---- generated inputs ---- */

static size_t
heap_in_use(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

/* A 10 MB diff: the detail is capped and memory stays bounded. */
static void
test_big_diff(void **state)
{
	struct recorder r = { 0 };
	struct event_bus bus = EVENT_BUS_INIT;
	struct check_parser *p;
	struct strbuf chunk = STRBUF_INIT;
	const struct rec_event *e;
	size_t total = 0, lines = 0, base, peak = 0, kept = 1;
	const char *more;
	unsigned long dropped;

	(void)state;
	event_bus_add(&bus, (struct listener){ on_event, &r });
	p = check_parser_new(&bus, NULL);
	check_parser_feed(p, header, strlen(header));
	check_parser_feed(p, "generic/002        - output mismatch (see /r/002.out.bad)\n", 58);
	base = heap_in_use();
	while (total < (10u << 20)) {
		strbuf_reset(&chunk);
		for (int i = 0; i < 512; i++, lines++)
			strbuf_addf(&chunk, "    +line %zu of a test that printed far too much\n",
				    lines);
		/* cut at an odd place: lines span feeds */
		check_parser_feed(p, chunk.buf, 1000);
		check_parser_feed(p, chunk.buf + 1000, chunk.len - 1000);
		total += chunk.len;
		if (heap_in_use() > base && heap_in_use() - base > peak)
			peak = heap_in_use() - base;
	}
	check_parser_feed(p, "generic/003         1s\nRan: generic/002 generic/003\n", 52);
	check_parser_feed(p, "Failures: generic/002\nFailed 1 of 2 tests\n", 42);
	check_parser_finish(p);
	/* the detail (256 KiB) and a line; nowhere near the 10 MB fed */
	assert_true(peak < 2u * CHECK_DETAIL_MAX);

	e = must_end(&r, "generic/002", 0);
	assert_int_equal(e->reasons, FAIL_MISMATCH);
	assert_true(strlen(e->detail) <= CHECK_DETAIL_MAX + 64);
	assert_true(str_startswith(e->detail, "+line 0 of a test"));
	more = strrchr(e->detail, '\n');
	assert_non_null(more);
	assert_int_equal(sscanf(more, "\n... (%lu more lines)", &dropped), 1);
	for (const char *c = e->detail; c < more; c++)
		kept += *c == '\n';
	assert_int_equal(kept + dropped, lines);
	assert_int_equal(must_end(&r, "generic/003", 0)->status, TS_PASS);
	assert_int_equal(nth(&r, EV_SUMMARY, 0)->counts.failed, 1);
	/* the header's five, the mismatch line, the diff, a test and the summary */
	assert_int_equal(check_parser_lines(p), 5 + 1 + lines + 1 + 3);

	check_parser_free(p);
	event_bus_release(&bus);
	recorder_release(&r);
	strbuf_release(&chunk);

	/* the line cap too: 4000 short lines at most */
	{
		struct strbuf text = STRBUF_INIT;

		strbuf_adds(&text, header);
		strbuf_adds(&text, "generic/002        - output mismatch (see /r/002.out.bad)\n");
		for (int i = 0; i < 5000; i++)
			strbuf_addf(&text, "    -%d\n", i);
		parse(text.buf, text.len, NULL, FEED_RANDOM, 7, &r);
		e = must_end(&r, "generic/002", 0);
		assert_non_null(strstr(e->detail, "\n-3999\n... (1000 more lines)"));
		recorder_release(&r);
		strbuf_release(&text);
	}
}

/* Binary garbage changes nothing that follows it. */
static void
test_garbage(void **state)
{
	struct strbuf text = STRBUF_INIT, want = STRBUF_INIT, got = STRBUF_INIT;
	struct recorder r, clean;
	uint32_t seed = 0xbadc0de;
	size_t len, first;
	char *a;

	(void)state;
	if (!have_fixtures())
		skip();
	for (int i = 0; i < 200000; i++) {
		uint32_t v = lcg(&seed);

		strbuf_addch(&text, v % 700 == 0 ? '\n' : (char)(v >> 3));
	}
	/* a line far over CHECK_LINE_MAX, of NULs and high bytes */
	for (size_t i = 0; i < CHECK_LINE_MAX + 4096; i++)
		strbuf_addch(&text, i % 3 ? '\0' : (char)0xff);
	strbuf_addch(&text, '\n');
	a = case_read("A-plain-pass-notrun", "stdout.txt", &len);
	strbuf_add(&text, a, len);

	parse_every_way("garbage", text.buf, text.len, NULL, &r, NULL);
	assert_true(r.cut >= 1);
	assert_true(has_warning(&r, "longer than 256 KiB"));
	/* from check's header on, exactly what the fixture alone gives */
	parse(a, len, NULL, FEED_WHOLE, 0, &clean);
	for (first = r.n; first > 0; first--)
		if (r.ev[first - 1].type == EV_SECTION)
			break;
	assert_true(first > 0);
	serialize_events(&r, first - 1, &got);
	serialize_events(&clean, 0, &want);
	assert_string_equal(want.buf, got.buf);
	assert_string_equal(r.current ? r.current : "", clean.current ? clean.current : "");
	assert_int_equal(r.summaries, clean.summaries);
	recorder_release(&r);
	recorder_release(&clean);
	strbuf_release(&want);
	strbuf_release(&got);
	strbuf_release(&text);
	free(a);
}

/* Lines at and beyond CHECK_LINE_MAX. */
static void
test_long_lines(void **state)
{
	struct strbuf text = STRBUF_INIT;
	struct recorder r;

	(void)state;
	/* exactly the limit: no cut, wherever the chunks end */
	strbuf_adds(&text, header);
	for (size_t i = 0; i < CHECK_LINE_MAX; i++)
		strbuf_addch(&text, 'x');
	strbuf_adds(&text, "\ngeneric/001         2s\n");
	parse_every_way("a line of exactly CHECK_LINE_MAX", text.buf, text.len, NULL, &r, NULL);
	assert_int_equal(r.cut, 0);
	assert_int_equal(count(&r, EV_WARNING), 0);
	assert_int_equal(strlen(nth(&r, EV_CONSOLE, 0)->name), CHECK_LINE_MAX);
	assert_int_equal(must_end(&r, "generic/001", 0)->status, TS_PASS);
	recorder_release(&r);

	/* one byte more: cut, the rest up to the newline dropped, a warning */
	strbuf_reset(&text);
	strbuf_adds(&text, header);
	for (size_t i = 0; i <= CHECK_LINE_MAX; i++)
		strbuf_addch(&text, 'y');
	strbuf_adds(&text, "\ngeneric/001         2s\n");
	parse_every_way("a line of CHECK_LINE_MAX + 1", text.buf, text.len, NULL, &r, NULL);
	assert_int_equal(r.cut, 1);
	assert_true(has_warning(&r, "line 6 is longer than 256 KiB"));
	assert_int_equal(strlen(nth(&r, EV_CONSOLE, 0)->name), CHECK_LINE_MAX);
	assert_int_equal(count(&r, EV_CONSOLE), 1);
	assert_int_equal(must_end(&r, "generic/001", 0)->status, TS_PASS);
	recorder_release(&r);

	/* a test line with a very long -d output on it */
	strbuf_reset(&text);
	strbuf_adds(&text, header);
	strbuf_adds(&text, "generic/001        ");
	for (size_t i = 0; i < 2 * CHECK_LINE_MAX; i++)
		strbuf_addch(&text, 'z');
	strbuf_adds(&text, "\n 3s\n");
	parse_every_way("a long test line", text.buf, text.len, NULL, &r, NULL);
	assert_int_equal(r.cut, 1);
	assert_int_equal(must_end(&r, "generic/001", 0)->status, TS_PASS);
	assert_true(must_end(&r, "generic/001", 0)->seconds == 3);
	recorder_release(&r);
	strbuf_release(&text);
}

/* ---- the outcome API ---- */

static void
test_outcome_api(void **state)
{
	struct check_outcome o;
	enum test_status st;
	bool summary;
	const char *line;

	(void)state;
	assert_int_equal(check_test_name_len("generic/001", 11), 11);
	assert_int_equal(check_test_name_len("generic/001   5s", 16), 11);
	assert_int_equal(check_test_name_len("xfs/1234-foo\tx", 14), 12);
	assert_int_equal(check_test_name_len("generic/01", 10), 0);
	assert_int_equal(check_test_name_len("generic/001:", 12), 0);
	assert_int_equal(check_test_name_len("/001", 4), 0);
	assert_int_equal(check_test_name_len("Ran: generic/001", 16), 0);
	assert_int_equal(check_test_name_len("", 0), 0);

	check_outcome_init(&o);
	assert_false(check_outcome_status(&o, &st));
	assert_true(check_outcome_seconds(&o) < 0);
	line = " 3s ...  [10:00:00] [10:00:04] 4s";
	assert_int_equal(check_outcome_scan(&o, line, strlen(line), &summary), strlen(line));
	assert_false(summary);
	assert_true(o.settled);
	assert_true(o.prev_seconds == 3);
	assert_true(check_outcome_status(&o, &st));
	assert_int_equal(st, TS_PASS);
	assert_true(check_outcome_seconds(&o) == 4);
	check_outcome_release(&o);

	check_outcome_init(&o);
	line = "[not run] no dm-flakey";
	check_outcome_scan(&o, line, strlen(line), NULL);
	assert_true(o.settled);
	assert_true(check_outcome_status(&o, &st));
	assert_int_equal(st, TS_NOTRUN);
	assert_string_equal(o.reason.buf, "no dm-flakey");
	check_outcome_release(&o);

	check_outcome_init(&o);
	line = "[10:00:00] [10:00:01] [not run]";
	check_outcome_scan(&o, line, strlen(line), NULL);
	assert_true(o.want_notrun_reason);
	assert_false(o.settled);
	assert_false(check_outcome_notrun_reason(&o, "generic/001 -- x", 16));
	line = "\tgeneric/001 -- no xfs_io falloc";
	assert_true(check_outcome_notrun_reason(&o, line, strlen(line)));
	assert_string_equal(o.reason.buf, "no xfs_io falloc");
	assert_true(o.settled);
	check_outcome_release(&o);

	/* understood up to the summary check put on the line */
	check_outcome_init(&o);
	line = "[10:00:00]Ran: generic/001";
	assert_int_equal(check_outcome_scan(&o, line, strlen(line), &summary), 10);
	assert_true(summary);
	assert_false(check_outcome_status(&o, &st));
	check_outcome_release(&o);

	/* and up to text it does not know */
	check_outcome_init(&o);
	line = "[failed, exit status 2] QA output created by 001";
	assert_int_equal(check_outcome_scan(&o, line, strlen(line), &summary), 24);
	assert_false(summary);
	assert_int_equal(o.exit_status, 2);
	assert_true(check_outcome_status(&o, &st));
	assert_int_equal(st, TS_FAIL);
	assert_false(o.settled);
	check_outcome_release(&o);

	/* the reason is capped */
	check_outcome_init(&o);
	{
		struct strbuf big = STRBUF_INIT;

		strbuf_adds(&big, "[not run] ");
		for (int i = 0; i < 10000; i++)
			strbuf_addch(&big, 'r');
		check_outcome_scan(&o, big.buf, big.len, NULL);
		assert_int_equal(o.reason.len, CHECK_REASON_MAX);
		strbuf_release(&big);
	}
	check_outcome_release(&o);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixtures),    cmocka_unit_test(test_fixtures_crlf),
		cmocka_unit_test(test_streaming),   cmocka_unit_test(test_sections),
		cmocka_unit_test(test_timestamps),  cmocka_unit_test(test_loop),
		cmocka_unit_test(test_list_only),   cmocka_unit_test(test_outcomes),
		cmocka_unit_test(test_brief),	    cmocka_unit_test(test_dump_output),
		cmocka_unit_test(test_interrupted), cmocka_unit_test(test_no_newline),
		cmocka_unit_test(test_big_diff),    cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_long_lines),  cmocka_unit_test(test_outcome_api),
	};

	return cmocka_run_group_tests_name("check_parser", tests, test_setup_hermetic,
					   test_teardown_hermetic);
}
