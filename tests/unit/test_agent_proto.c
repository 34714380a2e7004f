/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The agent protocol: the host's framing (reader, builders, job.env as
 * real shells read it), and the real agent (src/agent/fswb-agent,
 * --stdio) under dash, bash and busybox sh, driven through the reader and
 * the builders, with a stand-in for fstests' check in a scratch directory.
 * (The agent with the real mini-fstests on loop devices, as root, is
 * tests/e2e/agent-local.sh.)
 */
#include "testlib.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/agent_proto.h"
#include "core/loop.h"
#include "core/paths.h"
#include "core/spawn.h"
#include "core/util.h"

/* ---- recording what a reader delivers -------------------------------- */

struct rec {
	enum agent_type type;
	char *name;
	char *args; /* argv joined with ' ' */
	int64_t value;
	bool has_payload;
	uint64_t total;
	struct strbuf payload; /* every piece, concatenated */
	size_t pieces;
};

struct recs {
	struct rec *v;
	size_t n, alloc;
	enum status fail_on; /* callback returns this for type fail_type */
	enum agent_type fail_type;
};

static void
recs_clear(struct recs *rs)
{
	for (size_t i = 0; i < rs->n; i++) {
		free(rs->v[i].name);
		free(rs->v[i].args);
		strbuf_release(&rs->v[i].payload);
	}
	free(rs->v);
	memset(rs, 0, sizeof(*rs));
}

static enum status
record(const struct agent_msg *m, void *data)
{
	struct recs *rs = data;
	struct rec *r;

	/* the chunking contract */
	assert_true(m->len <= AGENT_CHUNK_MAX);
	assert_int_equal(m->data[m->len], '\0');
	if (m->has_payload && m->type != AGENT_UNKNOWN) {
		if (m->total <= AGENT_CHUNK_MAX) {
			assert_int_equal(m->len, m->total);
			assert_true(m->last);
		} else if (!m->last) {
			assert_int_equal(m->len, AGENT_CHUNK_MAX);
		}
		assert_true(m->offset + m->len <= m->total);
		assert_int_equal(m->last, m->offset + m->len == m->total);
	} else {
		assert_int_equal(m->len, m->type == AGENT_NOISE ? m->len : 0);
		assert_true(m->last);
	}
	if (rs->fail_on != OK && m->type == rs->fail_type)
		return error(rs->fail_on, "the consumer gave up on '%s'", m->name);

	if (m->offset == 0) {
		struct strbuf args = STRBUF_INIT;

		ALLOC_GROW(rs->v, rs->n + 1, rs->alloc);
		r = &rs->v[rs->n++];
		memset(r, 0, sizeof(*r));
		r->type = m->type;
		r->name = xstrdup(m->name);
		for (size_t i = 0; i < m->argc; i++) {
			if (i)
				strbuf_addch(&args, ' ');
			strbuf_adds(&args, m->argv[i]);
		}
		assert_null(m->argv[m->argc]);
		r->args = strbuf_detach(&args);
		r->value = m->value;
		r->has_payload = m->has_payload;
		r->total = m->total;
		strbuf_init(&r->payload);
	} else {
		assert_true(rs->n > 0);
		r = &rs->v[rs->n - 1];
		assert_int_equal(r->type, m->type);
		assert_int_equal(r->payload.len, m->offset);
	}
	strbuf_add(&r->payload, m->data, m->len);
	r->pieces++;
	return OK;
}

/* One line per record: "TYPE|args|value|len|payload" (payload as is). */
static char *
recs_dump_len(const struct recs *rs, size_t *lenp)
{
	struct strbuf sb = STRBUF_INIT;

	for (size_t i = 0; i < rs->n; i++) {
		const struct rec *r = &rs->v[i];

		strbuf_addf(&sb, "%s|%s|%s|%lld|%s%llu|", agent_type_name(r->type), r->name,
			    r->args, (long long)r->value, r->has_payload ? "+" : "",
			    (unsigned long long)r->total);
		strbuf_add(&sb, r->payload.buf, r->payload.len);
		strbuf_addch(&sb, '\n');
	}
	if (lenp)
		*lenp = sb.len;
	return strbuf_detach(&sb);
}

/* Payloads may hold NULs: compare dumps with memcmp via their lengths. */
static char *
recs_dump(const struct recs *rs)
{
	size_t len;
	char *d = recs_dump_len(rs, &len);

	/* make embedded NULs visible so that strcmp sees everything */
	for (size_t i = 0; i < len; i++)
		if (d[i] == '\0')
			d[i] = '@';
	return d;
}

/* Feed a whole stream in pieces of the given sizes (cycled), then EOF. */
static enum status
feed_pieces(const char *s, size_t len, const size_t *sizes, size_t nsizes, unsigned flags,
	    struct recs *rs)
{
	struct agent_reader r;
	enum status rc = OK;
	size_t off = 0, k = 0;

	agent_reader_init(&r, flags);
	while (off < len && rc == OK) {
		size_t n = sizes[k++ % nsizes];

		if (n > len - off)
			n = len - off;
		rc = agent_reader_feed(&r, s + off, n, record, rs);
		off += n;
	}
	if (rc == OK)
		rc = agent_reader_eof(&r, record, rs);
	agent_reader_release(&r);
	return rc;
}

static enum status
feed_all(const char *s, size_t len, unsigned flags, struct recs *rs)
{
	size_t all = len ? len : 1;

	return feed_pieces(s, len, &all, 1, flags, rs);
}

/* A guest's session, made with the protocol's own rules. */
static void
make_session(struct strbuf *s, size_t result_len)
{
	struct strbuf result = STRBUF_INIT;

	for (size_t i = 0; i < result_len; i++)
		strbuf_addch(&result, (char)(i * 7 + i / 251));
	strbuf_adds(s, "\nHELLO 1 0.1.0 x86_64 6.1.0-18-cloud-amd64\nREADY\n");
	agent_frame(s, "LOG", NULL, "fswb-agent: mkfs\n", 17);
	agent_frame(s, "OUT", NULL, "generic/001 ", 12);
	agent_frame(s, "HB", "42", NULL, 0);
	agent_frame(s, "OUT", NULL, " 1s\n\0bin\n", 9);
	agent_frame(s, "LOG", NULL, "", 0);
	agent_frame(s, "RESULT", NULL, result.buf, result.len);
	agent_frame(s, "EXIT", "1", NULL, 0);
	strbuf_adds(s, "\n");
	agent_frame(s, "READY", NULL, NULL, 0);
	agent_frame(s, "ERR", NULL, "mkfs failed", 11);
	agent_frame(s, "SHELLREADY", NULL, NULL, 0);
	agent_frame(s, "BYE", NULL, NULL, 0);
	strbuf_release(&result);
}

/* ---- framing ---------------------------------------------------------- */

static void
test_reader_session(void **state)
{
	struct strbuf s = STRBUF_INIT;
	struct recs rs = { 0 };
	char *dump;

	make_session(&s, 1000);
	assert_int_equal(feed_all(s.buf, s.len, 0, &rs), OK);
	assert_int_equal(rs.n, 13);
	assert_int_equal(rs.v[0].type, AGENT_HELLO);
	assert_string_equal(rs.v[0].args, "1 0.1.0 x86_64 6.1.0-18-cloud-amd64");
	assert_int_equal(rs.v[1].type, AGENT_READY);
	assert_int_equal(rs.v[2].type, AGENT_LOG);
	assert_string_equal(rs.v[2].payload.buf, "fswb-agent: mkfs\n");
	assert_int_equal(rs.v[3].type, AGENT_OUT);
	assert_string_equal(rs.v[3].payload.buf, "generic/001 ");
	assert_int_equal(rs.v[4].type, AGENT_HB);
	assert_int_equal(rs.v[4].value, 42);
	assert_int_equal(rs.v[5].payload.len, 9);
	assert_memory_equal(rs.v[5].payload.buf, " 1s\n\0bin\n", 9);
	assert_int_equal(rs.v[6].type, AGENT_LOG);
	assert_true(rs.v[6].has_payload);
	assert_int_equal(rs.v[6].total, 0);
	assert_int_equal(rs.v[7].type, AGENT_RESULT);
	assert_int_equal(rs.v[7].payload.len, 1000);
	assert_int_equal(rs.v[7].pieces, 1);
	assert_int_equal(rs.v[8].type, AGENT_EXIT);
	assert_int_equal(rs.v[8].value, 1);
	assert_int_equal(rs.v[9].type, AGENT_READY);
	assert_int_equal(rs.v[10].type, AGENT_ERR);
	assert_string_equal(rs.v[10].payload.buf, "mkfs failed");
	assert_int_equal(rs.v[11].type, AGENT_SHELLREADY);
	assert_int_equal(rs.v[12].type, AGENT_BYE);
	dump = recs_dump(&rs);
	assert_true(str_endswith(
		dump, "\nEXIT|EXIT|1|1|0|\nREADY|READY||0|0|\nERR|ERR||0|+11|mkfs failed\n"
		      "SHELLREADY|SHELLREADY||0|0|\nBYE|BYE||0|0|\n"));
	free(dump);
	recs_clear(&rs);
	strbuf_release(&s);
}

/* Whatever the split, the same messages come out. */
static void
test_reader_split_everywhere(void **state)
{
	struct strbuf s = STRBUF_INIT;
	struct recs ref = { 0 };
	char *want;

	make_session(&s, 300);
	assert_int_equal(feed_all(s.buf, s.len, 0, &ref), OK);
	want = recs_dump(&ref);
	/* in two pieces, cut at every byte */
	for (size_t cut = 0; cut <= s.len; cut++) {
		struct recs rs = { 0 };
		struct agent_reader r;
		char *got;

		agent_reader_init(&r, 0);
		assert_int_equal(agent_reader_feed(&r, s.buf, cut, record, &rs), OK);
		assert_int_equal(agent_reader_feed(&r, s.buf + cut, s.len - cut, record, &rs), OK);
		assert_int_equal(agent_reader_eof(&r, record, &rs), OK);
		assert_int_equal(r.pos, s.len);
		agent_reader_release(&r);
		got = recs_dump(&rs);
		if (strcmp(got, want))
			fail_msg("cut at byte %zu:\n%s\nwanted:\n%s", cut, got, want);
		free(got);
		recs_clear(&rs);
	}
	/* a byte at a time, and in pieces of 2, 3, 5 and 7 */
	for (size_t n = 1; n <= 7; n++) {
		struct recs rs = { 0 };
		char *got;

		assert_int_equal(feed_pieces(s.buf, s.len, &n, 1, 0, &rs), OK);
		got = recs_dump(&rs);
		assert_string_equal(got, want);
		free(got);
		recs_clear(&rs);
	}
	free(want);
	recs_clear(&ref);
	strbuf_release(&s);
}

/* A large payload comes in pieces of AGENT_CHUNK_MAX, memory stays bounded. */
static void
test_reader_chunks(void **state)
{
	size_t big = 3 * AGENT_CHUNK_MAX + 17;
	struct strbuf s = STRBUF_INIT;
	struct recs ref = { 0 };
	size_t odd[] = { 1, 4095, 65536, 100000, 13 };
	char *want, *copy;

	make_session(&s, big);
	copy = xmalloc(AGENT_CHUNK_MAX); /* s.buf moves as s grows */
	memcpy(copy, s.buf, AGENT_CHUNK_MAX);
	agent_frame(&s, "RESULT", NULL, copy, AGENT_CHUNK_MAX); /* exactly one chunk */
	free(copy);
	assert_int_equal(feed_all(s.buf, s.len, 0, &ref), OK);
	assert_int_equal(ref.v[7].type, AGENT_RESULT);
	assert_int_equal(ref.v[7].total, big);
	assert_int_equal(ref.v[7].payload.len, big);
	assert_int_equal(ref.v[7].pieces, 4);
	for (size_t i = 0; i < big; i++)
		if (ref.v[7].payload.buf[i] != (char)(i * 7 + i / 251))
			fail_msg("RESULT byte %zu differs", i);
	assert_int_equal(ref.n, 14);
	assert_int_equal(ref.v[13].type, AGENT_RESULT);
	assert_int_equal(ref.v[13].pieces, 1);
	assert_int_equal(ref.v[13].payload.len, AGENT_CHUNK_MAX);
	want = recs_dump(&ref);
	for (size_t n = 1; n <= 3; n++) {
		struct recs rs = { 0 };
		char *got;

		if (n == 1)
			assert_int_equal(feed_pieces(s.buf, s.len, odd, ARRAY_SIZE(odd), 0, &rs),
					 OK);
		else if (n == 2)
			assert_int_equal(feed_pieces(s.buf, s.len, &(size_t){ 1 }, 1, 0, &rs), OK);
		else
			assert_int_equal(feed_pieces(s.buf, s.len, &(size_t){ 65537 }, 1, 0, &rs),
					 OK);
		got = recs_dump(&rs);
		assert_string_equal(got, want);
		free(got);
		recs_clear(&rs);
	}
	free(want);
	recs_clear(&ref);
	strbuf_release(&s);
}

/* Unknown types are skipped with their payload; extra arguments are fine. */
static void
test_reader_unknown_and_extra(void **state)
{
	struct strbuf s = STRBUF_INIT;
	struct strbuf big = STRBUF_INIT;
	struct recs rs = { 0 };

	strbuf_grow(&big, 2 * AGENT_CHUNK_MAX);
	for (size_t i = 0; i < 2 * AGENT_CHUNK_MAX; i++)
		strbuf_addch(&big, i % 3 ? '\n' : 'R');
	strbuf_adds(&s, "ZAP a b +5\nREADYZAP2 +0\nX9_Y\n");
	agent_frame(&s, "FUTURE", "x", big.buf, big.len);
	strbuf_adds(&s, "EXIT 3 signal=9 more\nOUT extra +2\nab");
	agent_frame(&s, "READY", "later-arg", NULL, 0);
	assert_int_equal(feed_all(s.buf, s.len, 0, &rs), OK);
	assert_int_equal(rs.n, 7);
	assert_int_equal(rs.v[0].type, AGENT_UNKNOWN);
	assert_string_equal(rs.v[0].name, "ZAP");
	assert_string_equal(rs.v[0].args, "a b");
	assert_int_equal(rs.v[0].total, 5);
	assert_int_equal(rs.v[0].payload.len, 0); /* skipped, not delivered */
	assert_int_equal(rs.v[1].type, AGENT_UNKNOWN);
	assert_string_equal(rs.v[1].name, "ZAP2");
	assert_int_equal(rs.v[2].type, AGENT_UNKNOWN);
	assert_string_equal(rs.v[2].name, "X9_Y");
	assert_false(rs.v[2].has_payload);
	assert_int_equal(rs.v[3].type, AGENT_UNKNOWN);
	assert_int_equal(rs.v[3].total, big.len);
	assert_int_equal(rs.v[4].type, AGENT_EXIT);
	assert_int_equal(rs.v[4].value, 3);
	assert_string_equal(rs.v[4].args, "3 signal=9 more");
	assert_int_equal(rs.v[5].type, AGENT_OUT);
	assert_string_equal(rs.v[5].payload.buf, "ab");
	assert_int_equal(rs.v[6].type, AGENT_READY);
	recs_clear(&rs);
	strbuf_release(&s);
	strbuf_release(&big);
}

/* Header lengths: AGENT_HEADER_MAX bytes pass, one more is an error. */
static void
test_reader_header_limit(void **state)
{
	struct strbuf s = STRBUF_INIT;
	struct recs rs = { 0 };
	struct agent_reader r;
	enum status rc;
	char *msg;

	/* "LONG " + arg + "\n" == AGENT_HEADER_MAX */
	strbuf_adds(&s, "LONG ");
	while (s.len < AGENT_HEADER_MAX - 1)
		strbuf_addch(&s, 'a');
	strbuf_adds(&s, "\nREADY\n");
	assert_int_equal(feed_all(s.buf, s.len, 0, &rs), OK);
	assert_int_equal(rs.n, 2);
	recs_clear(&rs);

	strbuf_reset(&s);
	strbuf_adds(&s, "READY\nLONG ");
	while (s.len < 6 + AGENT_HEADER_MAX)
		strbuf_addch(&s, 'b');
	strbuf_adds(&s, "\nREADY\n");
	for (size_t n = 1; n <= 2; n++) {
		size_t piece = n == 1 ? s.len : 1;

		rc = feed_pieces(s.buf, s.len, &piece, 1, 0, &rs);
		assert_int_equal(rc, ERR_PROTOCOL);
		assert_non_null(strstr(error_msg(), "longer than 1024 bytes"));
		assert_non_null(strstr(error_msg(), "at byte 6"));
		assert_non_null(strstr(error_msg(), "it starts 'LONG bbb"));
		assert_non_null(strstr(error_msg(), "rebuild the appliance"));
		assert_int_equal(rs.n, 1); /* the READY before it */
		recs_clear(&rs);
	}

	/* found without waiting for a newline, and sticky */
	agent_reader_init(&r, 0);
	strbuf_reset(&s);
	for (int i = 0; i < 5000; i++)
		strbuf_addch(&s, 'A');
	assert_int_equal(agent_reader_feed(&r, s.buf, s.len, record, &rs), ERR_PROTOCOL);
	msg = xstrdup(error_msg());
	error_clear();
	assert_int_equal(agent_reader_feed(&r, "READY\n", 6, record, &rs), ERR_PROTOCOL);
	assert_string_equal(error_msg(), msg);
	assert_int_equal(agent_reader_eof(&r, record, &rs), ERR_PROTOCOL);
	assert_int_equal(rs.n, 0);
	free(msg);
	agent_reader_release(&r);
	strbuf_release(&s);
}

/* Broken headers: each one a protocol error with a message saying why. */
static void
test_reader_bad_headers(void **state)
{
	static const struct {
		const char *in;
		size_t len;
		const char *why;
	} cases[] = {
		{ "READY\r\n", 7, "carriage return" },
		{ "ready\n", 6, "frame type" },
		{ "9READY\n", 7, "frame type" },
		{ "AVERYLONGTYPENAME17\n", 20, "frame type" },
		{ "READY  x\n", 9, "single spaces" },
		{ " READY\n", 7, "single spaces" },
		{ "READY \n", 7, "single spaces" },
		{ "OUT\n", 4, "'OUT +LEN'" },
		{ "OUT 12\n", 7, "'OUT +LEN'" },
		{ "RESULT\n", 7, "'RESULT +LEN'" },
		{ "EXIT\n", 5, "'EXIT <status>'" },
		{ "EXIT x1\n", 8, "'EXIT <status>'" },
		{ "EXIT -1\n", 8, "'EXIT <status>'" },
		{ "HB\n", 3, "'HB <uptime-seconds> [<busy-percent>]'" },
		{ "HELLO\n", 6, "'HELLO <proto>" },
		{ "READY +3\nabc", 12, "'READY'" },
		{ "FILE ../x 0644 +1\nx", 19, "'FILE <name> <mode> +LEN'" },
		{ "FILE x 0999 +1\nx", 16, "'FILE <name> <mode> +LEN'" },
		{ "RERUN -g\n", 9, "'RERUN <test>'" },
		{ "OUT +99999999999999999999\n", 26, "payload length" },
		{ "OUT +68719476737\n", 17, "payload length" },
		{ "READY\001\n", 7, "byte 0x01" },
		{ "OUT \xc3\xa9 +1\nx", 12, "byte 0xc3" },
		{ "A 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17\n", 45, "more than 16 arguments" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct recs rs = { 0 };
		enum status rc = feed_all(cases[i].in, cases[i].len, 0, &rs);

		if (rc != ERR_PROTOCOL)
			fail_msg("'%s' was accepted", cases[i].in);
		if (!strstr(error_msg(), cases[i].why))
			fail_msg("'%s': the message '%s' does not say '%s'", cases[i].in,
				 error_msg(), cases[i].why);
		assert_int_equal(rs.n, 0);
		recs_clear(&rs);
	}
	/* 16 arguments are fine, +LEN and FILE within limits too */
	{
		const char *ok = "A 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\nFILE x.y_z-1+ 7777 +0\n"
				 "OUT +68719476736\n";
		struct recs rs = { 0 };
		struct agent_reader r;

		agent_reader_init(&r, 0);
		assert_int_equal(agent_reader_feed(&r, ok, strlen(ok), record, &rs), OK);
		assert_int_equal(rs.n, 2);
		assert_int_equal(rs.v[1].type, AGENT_FILE);
		assert_int_equal(rs.v[1].value, 07777);
		assert_false(agent_reader_idle(&r));
		agent_reader_release(&r);
		recs_clear(&rs);
	}
}

/* The end of the stream: fine between frames, an error inside one. */
static void
test_reader_eof(void **state)
{
	struct recs rs = { 0 };
	struct agent_reader r;

	agent_reader_init(&r, 0);
	assert_int_equal(agent_reader_feed(&r, "READY\nRESU", 10, record, &rs), OK);
	assert_false(agent_reader_idle(&r));
	assert_int_equal(agent_reader_eof(&r, record, &rs), ERR_PROTOCOL);
	assert_non_null(strstr(error_msg(), "in the middle of a frame header ('RESU')"));
	agent_reader_release(&r);

	agent_reader_init(&r, 0);
	assert_int_equal(agent_reader_feed(&r, "RESULT +10\nabc", 14, record, &rs), OK);
	assert_int_equal(agent_reader_eof(&r, record, &rs), ERR_PROTOCOL);
	assert_non_null(strstr(error_msg(), "'RESULT' frame: 3 of its 10 payload bytes"));
	agent_reader_release(&r);

	agent_reader_init(&r, 0);
	assert_true(agent_reader_idle(&r));
	assert_int_equal(agent_reader_feed(&r, "ZAP +4\nab", 9, record, &rs), OK);
	assert_false(agent_reader_idle(&r));
	assert_int_equal(agent_reader_feed(&r, "cd", 2, record, &rs), OK);
	assert_true(agent_reader_idle(&r));
	assert_int_equal(agent_reader_eof(&r, record, &rs), OK);
	assert_int_equal(r.frames, 1);
	assert_int_equal(r.pos, 11);
	agent_reader_release(&r);
	recs_clear(&rs);
}

/* A consumer's error stops the feed and stays. */
static void
test_reader_callback_error(void **state)
{
	struct recs rs = { 0 };
	struct agent_reader r;
	const char *s = "READY\nOUT +2\nabEXIT 0\n";

	rs.fail_on = ERR_IO;
	rs.fail_type = AGENT_OUT;
	agent_reader_init(&r, 0);
	assert_int_equal(agent_reader_feed(&r, s, strlen(s), record, &rs), ERR_IO);
	assert_string_equal(error_msg(), "the consumer gave up on 'OUT'");
	assert_int_equal(rs.n, 1);
	assert_int_equal(agent_reader_feed(&r, "READY\n", 6, record, &rs), ERR_IO);
	assert_string_equal(error_msg(), "the consumer gave up on 'OUT'");
	assert_int_equal(rs.n, 1);
	agent_reader_release(&r);
	recs_clear(&rs);
}

/* AGENT_READER_SYNC: noise before HELLO is passed on; after it, an error. */
static void
test_reader_sync(void **state)
{
	struct strbuf s = STRBUF_INIT;
	struct recs rs = { 0 };

	strbuf_adds(&s, "Welcome to Debian\r\nHELLO there, friend\nOUT +3\n$ \n");
	for (int i = 0; i < 2 * AGENT_HEADER_MAX; i++)
		strbuf_addch(&s, 'x');
	strbuf_adds(&s, "\n\nHELLO 1 0.1.0 aarch64 5.15.0\nREADY\n");
	for (size_t n = 1; n <= 2; n++) {
		size_t piece = n == 1 ? s.len : 1;

		assert_int_equal(feed_pieces(s.buf, s.len, &piece, 1, AGENT_READER_SYNC, &rs), OK);
		assert_int_equal(rs.n, 9);
		assert_int_equal(rs.v[0].type, AGENT_NOISE);
		assert_string_equal(rs.v[0].payload.buf, "Welcome to Debian\r");
		assert_string_equal(rs.v[1].payload.buf, "HELLO there, friend");
		assert_string_equal(rs.v[2].payload.buf, "OUT +3");
		assert_string_equal(rs.v[3].payload.buf, "$ ");
		assert_int_equal(rs.v[4].payload.len, AGENT_HEADER_MAX - 1);
		assert_int_equal(rs.v[5].payload.len, AGENT_HEADER_MAX - 1);
		assert_int_equal(rs.v[6].payload.len,
				 2 * AGENT_HEADER_MAX - 2 * (AGENT_HEADER_MAX - 1));
		assert_int_equal(rs.v[7].type, AGENT_HELLO);
		assert_int_equal(rs.v[8].type, AGENT_READY);
		recs_clear(&rs);
	}
	/* without the flag the first line is an error */
	assert_int_equal(feed_all(s.buf, s.len, 0, &rs), ERR_PROTOCOL);
	recs_clear(&rs);
	/* after HELLO, noise is an error */
	strbuf_reset(&s);
	strbuf_adds(&s, "hi\nHELLO 1 a b c\nhi\n");
	assert_int_equal(feed_all(s.buf, s.len, AGENT_READER_SYNC, &rs), ERR_PROTOCOL);
	assert_int_equal(rs.n, 2);
	recs_clear(&rs);
	/* a partial noise line at EOF is delivered */
	assert_int_equal(
		feed_all("ssh: connect to host x: Connection refused", 42, AGENT_READER_SYNC, &rs),
		OK);
	assert_int_equal(rs.n, 1);
	assert_string_equal(rs.v[0].payload.buf, "ssh: connect to host x: Connection refused");
	recs_clear(&rs);
	strbuf_release(&s);
}

/* ---- builders and HELLO ------------------------------------------------ */

static void
test_builders(void **state)
{
	struct strbuf s = STRBUF_INIT;
	struct recs rs = { 0 };
	static const char *const bad_files[] = {
		"",   "../x", "a/b",  ".hidden",     "..",  "-rf",
		"+x", "a b",  "x\ny", "caf\xc3\xa9", "a;b", "$(x)"
	};
	static const char *const bad_tests[] = { "",	  "-g",	       "/etc/passwd", "a b",
						 "x;y",	  "generic/*", ".hidden",     "g\n1",
						 "$(id)", "a\\b" };
	char long_name[AGENT_NAME_MAX + 2];

	agent_frame_run(&s);
	agent_frame_shell(&s);
	agent_frame_poweroff(&s);
	assert_int_equal(agent_frame_rerun(&s, "generic/001"), OK);
	assert_int_equal(agent_frame_rerun(&s, "xfs/123-some_name.v2"), OK);
	assert_int_equal(agent_frame_file(&s, "job.env", 0644, "A=1\n", 4), OK);
	assert_int_equal(agent_frame_file(&s, "exclude", 0600, NULL, 0), OK);
	agent_frame(&s, "OUT", NULL, "", 0);
	agent_frame(&s, "HB", "7", NULL, 0);
	assert_string_equal(s.buf, "RUN\nSHELL\nPOWEROFF\nRERUN generic/001\n"
				   "RERUN xfs/123-some_name.v2\nFILE job.env 0644 +4\nA=1\n"
				   "FILE exclude 0600 +0\nOUT +0\nHB 7\n");
	/* and the reader reads them back */
	assert_int_equal(feed_all(s.buf, s.len, 0, &rs), OK);
	assert_int_equal(rs.n, 9);
	assert_int_equal(rs.v[0].type, AGENT_RUN);
	assert_int_equal(rs.v[3].type, AGENT_RERUN);
	assert_string_equal(rs.v[3].args, "generic/001");
	assert_int_equal(rs.v[5].type, AGENT_FILE);
	assert_string_equal(rs.v[5].args, "job.env 0644");
	assert_int_equal(rs.v[5].value, 0644);
	assert_string_equal(rs.v[5].payload.buf, "A=1\n");
	recs_clear(&rs);

	memset(long_name, 'a', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	strbuf_reset(&s);
	for (size_t i = 0; i < ARRAY_SIZE(bad_files); i++) {
		assert_false(agent_file_name_ok(bad_files[i]));
		assert_int_equal(agent_frame_file(&s, bad_files[i], 0644, "x", 1), ERR_INVALID);
		assert_non_null(strstr(error_msg(), "job file name"));
	}
	assert_int_equal(agent_frame_file(&s, long_name, 0644, "x", 1), ERR_INVALID);
	long_name[AGENT_NAME_MAX] = '\0';
	assert_int_equal(agent_frame_file(&s, long_name, 0644, "x", 1), OK);
	strbuf_reset(&s);
	assert_int_equal(agent_frame_file(&s, "x", 010000, "x", 1), ERR_INVALID);
	assert_non_null(strstr(error_msg(), "mode 10000"));
	for (size_t i = 0; i < ARRAY_SIZE(bad_tests); i++) {
		assert_int_equal(agent_frame_rerun(&s, bad_tests[i]), ERR_INVALID);
		assert_non_null(strstr(error_msg(), "cannot rerun"));
	}
	assert_int_equal(s.len, 0);
	strbuf_release(&s);
}

/* ---- the order of a session's frames -------------------------------- */

struct order_run {
	struct agent_order order;
	const char *sent; /* commands the host sends when a READY comes, in turn */
};

static enum status
check_order(const struct agent_msg *m, void *data)
{
	struct order_run *o = data;
	enum status rc = agent_order_check(&o->order, m);

	if (rc == OK && m->type == AGENT_READY && *o->sent) {
		static const struct {
			char c;
			enum agent_type t;
		} cmds[] = { { 'R', AGENT_RUN }, { 'S', AGENT_SHELL }, { 'P', AGENT_POWEROFF } };

		for (size_t i = 0; i < ARRAY_SIZE(cmds); i++)
			if (cmds[i].c == *o->sent)
				agent_order_sent(&o->order, cmds[i].t);
		o->sent++;
	}
	return rc;
}

/* Feed the guest's stream; the host answers each READY with the next of sent. */
static enum status
order_of(const char *stream, const char *sent, size_t pad, uint64_t result_max)
{
	struct order_run o = { .sent = sent };
	struct agent_reader r;
	struct strbuf sb = STRBUF_INIT;
	enum status rc;

	strbuf_adds(&sb, stream);
	for (size_t i = 0; i < pad; i++)
		strbuf_addch(&sb, 'x'); /* a payload's first bytes */
	agent_order_init(&o.order, result_max);
	agent_reader_init(&r, 0);
	rc = agent_reader_feed(&r, sb.buf, sb.len, check_order, &o);
	strbuf_release(&sb);
	agent_reader_release(&r);
	return rc;
}

static void
test_order(void **state)
{
	static const struct {
		const char *stream, *sent, *error; /* error NULL: in order */
	} cases[] = {
		{ "HELLO 1 v a k\nREADY\nOUT +2\nhiRESULT +1\nxEXIT 0\nREADY\nBYE\n", "RP", NULL },
		{ "HELLO 1 v a k\nREADY\nLOG +1\nxERR +2\nnoREADY\nBYE\n", "RP", NULL },
		{ "HELLO 1 v a k\nREADY\nSHELLREADY\nREADY\nREADY\nBYE\n", "SP", NULL },
		{ "HELLO 1 v a k\nHB 3\nLOG +1\nxFROB +2\nzzREADY\nBYE\n", "P", NULL },
		{ "READY\n", "", "READY came out of order (before HELLO" },
		{ "OUT +1\nx", "", "OUT came out of order (before HELLO" },
		{ "HELLO 1 v a k\nHELLO 1 v a k\n", "",
		  "HELLO came out of order (between HELLO and READY" },
		{ "HELLO 1 v a k\nREADY\nOUT +1\nx", "",
		  "OUT came out of order (while the agent waits" },
		{ "HELLO 1 v a k\nREADY\nEXIT 0\n", "R", "EXIT came out of order (before RESULT" },
		{ "HELLO 1 v a k\nREADY\nRESULT +0\nRESULT +0\n", "R",
		  "RESULT came out of order (twice for one RUN" },
		{ "HELLO 1 v a k\nREADY\nRESULT +0\nEXIT 0\nEXIT 1\n", "R",
		  "EXIT came out of order (twice" },
		{ "HELLO 1 v a k\nREADY\nRESULT +0\nEXIT 0\nRESULT +0\n", "R",
		  "RESULT came out of order (twice for one RUN" },
		{ "HELLO 1 v a k\nREADY\nRESULT +0\nEXIT 0\nOUT +1\nx", "R",
		  "OUT came out of order (after RESULT" },
		{ "HELLO 1 v a k\nREADY\nRESULT +0\nOUT +1\nx", "R",
		  "OUT came out of order (after RESULT" },
		{ "HELLO 1 v a k\nREADY\nERR +1\nxRESULT +0\n", "R",
		  "RESULT came out of order (after ERR" },
		{ "HELLO 1 v a k\nREADY\nOUT +1\nxREADY\n", "R",
		  "READY came out of order (before the RUN's EXIT" },
		{ "HELLO 1 v a k\nREADY\nSHELLREADY\n", "R",
		  "SHELLREADY came out of order (while check runs" },
		{ "HELLO 1 v a k\nREADY\nBYE\n", "R", "BYE came out of order (while check runs" },
		{ "HELLO 1 v a k\nREADY\nRUN\n", "R", "RUN came out of order (while check runs" },
		{ "HELLO 1 v a k\nREADY\nSHELLREADY\nSHELLREADY\n", "S",
		  "SHELLREADY came out of order (as the answer" },
		{ "HELLO 1 v a k\nREADY\nOUT +1\nx", "P", "OUT came out of order (after POWEROFF" },
		{ "HELLO 1 v a k\nREADY\nBYE\nLOG +1\nx", "P", "LOG came out of order (after BYE" },
		{ "HELLO 1 v a k\nREADY\nBYE\nBYE\n", "P", "BYE came out of order (after BYE" },
		/* caps */
		{ "HELLO 1 v a k\nREADY\nRESULT +2000\n", "R",
		  "RESULT of 2.0 KiB: larger than the results may be (1 KiB; --max-results)" },
		{ "HELLO 1 v a k\nREADY\nRESULT +68719476736\n", "R", "RESULT of 64 GiB" },
		{ "HELLO 1 v a k\nREADY\nOUT +65537\n", "R", "OUT of 65537 bytes" },
		{ "HELLO 1 v a k\nLOG +70000\n", "", "LOG of 70000 bytes" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		enum status rc = order_of(
			cases[i].stream, cases[i].sent,
			cases[i].error && strstr(cases[i].error, " of ") ? 70000 : 0, 1024);

		if (!cases[i].error) {
			if (rc != OK)
				fail_msg("case %zu: %s", i, error_msg());
			continue;
		}
		if (rc != ERR_PROTOCOL || !strstr(error_msg(), cases[i].error))
			fail_msg("case %zu: want '%s', got %s: %s", i, cases[i].error,
				 status_name(rc), rc == OK ? "" : error_msg());
	}
}

static enum status
first_msg(const struct agent_msg *m, void *data)
{
	struct agent_hello *h = data;

	return agent_hello_parse(m, h);
}

static enum status
hello_of(const char *line, struct agent_hello *h)
{
	struct agent_reader r;
	enum status rc;

	agent_reader_init(&r, 0);
	rc = agent_reader_feed(&r, line, strlen(line), first_msg, h);
	agent_reader_release(&r);
	return rc;
}

static void
test_hello(void **state)
{
	struct agent_hello h;

	assert_int_equal(hello_of("HELLO 1 0.1.0 x86_64 6.1.0-18-cloud-amd64 more\n", &h), OK);
	assert_int_equal(h.proto, 1);
	assert_string_equal(h.agent_version, "0.1.0");
	assert_string_equal(h.arch, "x86_64");
	assert_string_equal(h.kernel_release, "6.1.0-18-cloud-amd64");
	assert_int_equal(hello_of("HELLO 2 0.9.0 x86_64 6.9\n", &h), ERR_PROTOCOL);
	assert_non_null(strstr(error_msg(), "speaks protocol 2 (agent 0.9.0)"));
	assert_non_null(strstr(error_msg(), "speaks protocol 1: rebuild the appliance"));
	assert_int_equal(hello_of("HELLO 0\n", &h), ERR_PROTOCOL);
	assert_non_null(strstr(error_msg(), "rebuild the appliance"));
	assert_int_equal(hello_of("HELLO 1 0.1.0\n", &h), ERR_PROTOCOL);
	assert_non_null(strstr(error_msg(), "HELLO <proto>"));
	assert_int_equal(hello_of("HELLO v1 a b c\n", &h), ERR_PROTOCOL);
	assert_non_null(strstr(error_msg(), "no protocol version"));
	assert_int_equal(hello_of("READY\n", &h), ERR_PROTOCOL);
	assert_non_null(strstr(error_msg(), "began with 'READY' instead of 'HELLO'"));
}

/* ---- job.env, as shells read it --------------------------------------- */

/* Shells to try: argv prefixes; missing ones are skipped. */
struct shell {
	const char *name;
	const char *argv[3];
};

static const struct shell shells[] = {
	{ "dash", { "dash", NULL } },
	{ "bash", { "bash", NULL } },
	{ "busybox sh", { "busybox", "sh", NULL } },
	{ "sh", { "sh", NULL } },
};

static bool
in_path(const char *prog)
{
	const char *path = getenv("PATH");
	struct strvec dirs = STRVEC_INIT;
	bool found = false;

	strvec_split(&dirs, path ? path : "/usr/bin:/bin", ":");
	for (size_t i = 0; i < dirs.n && !found; i++) {
		char *p = path_join(dirs.v[i], prog);

		found = access(p, X_OK) == 0;
		free(p);
	}
	strvec_clear(&dirs);
	return found;
}

/* Run script under shell with args; stdout into out; returns the exit code. */
static int
run_shell(const struct shell *sh, const char *script, const char *const *args, struct strbuf *out)
{
	struct loop *loop = loop_new();
	struct strvec argv = STRVEC_INIT;
	struct child_exit ex;
	const char *env[] = { "LC_ALL=C", NULL };

	strvec_pushv(&argv, sh->argv);
	strvec_push(&argv, "-c");
	strvec_push(&argv, script);
	strvec_push(&argv, "sh");
	strvec_pushv(&argv, args);
	assert_int_equal(
		spawn_run(loop, (const char *const *)argv.v, env, false, 1 << 20, out, &ex), OK);
	strvec_clear(&argv);
	loop_free(loop);
	return ex.exited ? ex.code : 128 + ex.signo;
}

/* The NUL-separated fields of buf. */
static void
split_nul(const struct strbuf *buf, struct strvec *out)
{
	size_t start = 0;

	for (size_t i = 0; i < buf->len; i++) {
		if (buf->buf[i] == '\0') {
			strvec_push(out, buf->buf + start);
			start = i + 1;
		}
	}
}

static const char read_job[] = ". \"$1\" || exit 9\n"
			       "printf '%s\\0' \"$FSWB_PROTO\" \"$FSWB_JOB_DIR\" "
			       "\"$FSWB_FSTESTS_DIR\" \"$FSWB_FSTYP\" \\\n"
			       "	\"$FSWB_CONFIG\" \"$FSWB_RESULT_BASE\"\n"
			       "for v in FSWB_MOUNT_POINTS FSWB_MKFS_TEST FSWB_CHECK_OPTS "
			       "FSWB_CHECK_TESTS FSWB_CHECK_ENV; "
			       "do\n"
			       "	eval \"val=\\$$v\"\n"
			       "	eval \"set -- $val\"\n"
			       "	printf '%s\\0' \"$v\" \"$#\"\n"
			       "	for a; do printf '%s\\0' \"$a\"; done\n"
			       "done\n";

static void
test_job_env(void **state)
{
	static const char *const mounts[] = { "/mnt/test", "/mnt/scr atch", NULL };
	static const char *const mkfs[] = { "mkfs.ext4", "-F",
					    "-E",	 "lazy_itable_init=0,nodiscard",
					    "-L",	 "it's a \"label\" $x `y` \\z\nnext",
					    "/dev/vdb",	 NULL };
	static const char *const opts[] = { "-R", "xunit", "-T", "-s", "ext4_4k", NULL };
	static const char *const tests[] = { "-g",	    "quick", "-x",
					     "dangerous",   "-E",    "/run/fswb/job/exclude",
					     "generic/00*", "~root", "{a,b}",
					     "#c",	    "a;b",   NULL };
	static const char *const env[] = { "SOAK_DURATION=3m", "X=a b 'c' $d\nline2 \\ `e`",
					   "EMPTY=", "_u=x=y", NULL };
	struct agent_job job = {
		.fstests_dir = "/opt/fs tests/it's",
		.fstyp = "ext4",
		.config = "local.config",
		.result_base = "/r/$HOME `x` \"q\"\nnl",
		.mount_points = mounts,
		.mkfs_test = mkfs,
		.check_opts = opts,
		.check_tests = tests,
		.env = env,
	};
	struct strbuf text = STRBUF_INIT;
	char *path = test_tmp("job.env");
	const char *args[] = { path, NULL };
	size_t ran = 0;

	assert_int_equal(agent_job_env(&text, &job), OK);
	assert_non_null(strstr(text.buf, "\nFSWB_PROTO=1\n"));
	assert_non_null(strstr(text.buf, "\nFSWB_JOB_DIR=/run/fswb/job\n"));
	assert_non_null(strstr(text.buf, "\nFSWB_CHECK_OPTS='-R xunit -T -s ext4_4k'\n"));
	test_write(path, text.buf);

	for (size_t i = 0; i < ARRAY_SIZE(shells); i++) {
		struct strbuf out = STRBUF_INIT;
		struct strvec f = STRVEC_INIT;
		size_t k = 0;

		if (!in_path(shells[i].argv[0]))
			continue;
		ran++;
		assert_int_equal(run_shell(&shells[i], read_job, args, &out), 0);
		split_nul(&out, &f);
#define NEXT(want)                                                                             \
	do {                                                                                   \
		assert_true(k < f.n);                                                          \
		if (strcmp(f.v[k], (want)))                                                    \
			fail_msg("%s: field %zu is '%s', not '%s'", shells[i].name, k, f.v[k], \
				 (want));                                                      \
		k++;                                                                           \
	} while (0)
#define NEXT_LIST(name, list, count)                  \
	do {                                          \
		NEXT(name);                           \
		NEXT(count);                          \
		for (size_t j_ = 0; (list)[j_]; j_++) \
			NEXT((list)[j_]);             \
	} while (0)
		NEXT("1");
		NEXT("/run/fswb/job");
		NEXT("/opt/fs tests/it's");
		NEXT("ext4");
		NEXT("local.config");
		NEXT("/r/$HOME `x` \"q\"\nnl");
		NEXT_LIST("FSWB_MOUNT_POINTS", mounts, "2");
		NEXT_LIST("FSWB_MKFS_TEST", mkfs, "7");
		NEXT_LIST("FSWB_CHECK_OPTS", opts, "5");
		NEXT_LIST("FSWB_CHECK_TESTS", tests, "11");
		NEXT_LIST("FSWB_CHECK_ENV", env, "4");
		assert_int_equal(k, f.n);
#undef NEXT
#undef NEXT_LIST
		strvec_clear(&f);
		strbuf_release(&out);
	}
	assert_true(ran > 0);
	free(path);
	strbuf_release(&text);
}

/* A served file system: the scratch mkfs, the exports and their type, quoted. */
static void
test_job_env_nfs(void **state)
{
	static const char *const mkfs[] = { "mkfs.ext4", "-F", "/dev/vdc", NULL };
	static const char *const exports[] = { "/dev/vdb", "/srv/fswb/test", "/dev/vdc",
					       "/srv/fswb/it's a dir", NULL };
	static const char *const odd[] = { "/dev/vdb", "/srv/fswb/test", "/dev/vdc", NULL };
	static const char *const rel[] = { "/dev/vdb", "srv/test", NULL };
	static const char script[] = ". \"$1\" || exit 9\n"
				     "printf '%s\\0' \"$FSWB_NFS_BASE\"\n"
				     "for v in FSWB_MKFS_SCRATCH FSWB_NFS_EXPORTS; do\n"
				     "	eval \"val=\\$$v\"\n"
				     "	eval \"set -- $val\"\n"
				     "	printf '%s\\0' \"$#\"\n"
				     "	for a; do printf '%s\\0' \"$a\"; done\n"
				     "done\n";
	struct agent_job job = { .mkfs_scratch = mkfs, .nfs_exports = exports, .nfs_base = "ext4" };
	struct strbuf text = STRBUF_INIT, out = STRBUF_INIT;
	struct strvec f = STRVEC_INIT;
	char *path = test_tmp("jobnfs.env");
	const char *args[] = { path, NULL };
	const char *want[] = {
		"ext4", "3",	    "mkfs.ext4",      "-F",	  "/dev/vdc",
		"4",	"/dev/vdb", "/srv/fswb/test", "/dev/vdc", "/srv/fswb/it's a dir"
	};

	(void)state;
	assert_int_equal(agent_job_env(&text, &job), OK);
	test_write(path, text.buf);
	assert_int_equal(run_shell(&shells[3], script, args, &out), 0);
	split_nul(&out, &f);
	assert_int_equal(f.n, ARRAY_SIZE(want));
	for (size_t i = 0; i < ARRAY_SIZE(want); i++)
		assert_string_equal(f.v[i], want[i]);
	strvec_clear(&f);
	strbuf_release(&out);

	strbuf_reset(&text);
	job.nfs_exports = odd;
	assert_int_equal(agent_job_env(&text, &job), ERR_INVALID);
	assert_string_equal(error_msg(), "job: the nfs exports are not pairs of a device and a "
					 "directory (3 words)");
	job.nfs_exports = rel;
	assert_int_equal(agent_job_env(&text, &job), ERR_INVALID);
	assert_string_equal(error_msg(), "job: the nfs export 'srv/test' is not an absolute path");
	job.nfs_exports = exports;
	job.nfs_base = "ext4; reboot";
	assert_int_equal(agent_job_env(&text, &job), ERR_INVALID);
	assert_string_equal(error_msg(), "job: the nfs exports need the file system type to mount "
					 "them as (like ext4), not 'ext4; reboot'");
	assert_int_equal(text.len, 0);
	free(path);
	strbuf_release(&text);
}

static void
test_job_env_empty_and_bad(void **state)
{
	struct agent_job job = { 0 };
	struct strbuf text = STRBUF_INIT;
	char *path = test_tmp("job0.env");
	const char *args[] = { path, NULL };
	struct strbuf out = STRBUF_INIT;
	struct strvec f = STRVEC_INIT;
	static const char *const bad_env1[] = { "NOEQUALS", NULL };
	static const char *const bad_env2[] = { "1X=y", NULL };
	static const char *const bad_env3[] = { "A-B=y", NULL };
	static const char *const bad_env4[] = { "=y", NULL };
	static const char *const empty_word[] = { "mkfs.xfs", "", "/dev/vdb", NULL };
	static const char *const *const bad_envs[] = { bad_env1, bad_env2, bad_env3, bad_env4 };
	char *p;

	/* defaults, and empty lists */
	assert_int_equal(agent_job_env(&text, &job), OK);
	test_write(path, text.buf);
	assert_int_equal(run_shell(&shells[3], read_job, args, &out), 0);
	split_nul(&out, &f);
	assert_int_equal(f.n, 16);
	assert_string_equal(f.v[2], AGENT_FSTESTS_DIR);
	assert_string_equal(f.v[4], "");
	assert_string_equal(f.v[6], "FSWB_MOUNT_POINTS");
	assert_string_equal(f.v[7], "0");
	assert_string_equal(f.v[9], "0");
	strvec_clear(&f);
	strbuf_release(&out);

	strbuf_reset(&text);
	for (size_t i = 0; i < ARRAY_SIZE(bad_envs); i++) {
		job.env = bad_envs[i];
		assert_int_equal(agent_job_env(&text, &job), ERR_INVALID);
		assert_non_null(strstr(error_msg(), bad_envs[i][0]));
	}
	job.env = NULL;
	job.mkfs_test = empty_word;
	assert_int_equal(agent_job_env(&text, &job), ERR_INVALID);
	assert_string_equal(error_msg(), "job: word 2 of the mkfs command is empty");
	job.mkfs_test = NULL;
	job.fstests_dir = "opt/fstests";
	assert_int_equal(agent_job_env(&text, &job), ERR_INVALID);
	assert_non_null(strstr(error_msg(), "not an absolute path"));
	job.fstests_dir = NULL;
	job.job_dir = "run/x";
	assert_int_equal(agent_job_env(&text, &job), ERR_INVALID);
	job.job_dir = NULL;
	job.config = "../local.config";
	assert_int_equal(agent_job_env(&text, &job), ERR_INVALID);
	assert_int_equal(text.len, 0);

	job.config = NULL;
	job.job_dir = "/srv/job";
	p = agent_job_path(&job, "exclude");
	assert_string_equal(p, "/srv/job/exclude");
	free(p);
	job.job_dir = NULL;
	p = agent_job_path(&job, "exclude");
	assert_string_equal(p, "/run/fswb/job/exclude");
	free(p);
	free(path);
	strbuf_release(&text);
}

/* ---- the real agent ---------------------------------------------------- */

/*
 * A stand-in for fstests' check: prints its arguments and environment,
 * streams a test's name before its outcome, prints more than one OUT
 * frame's worth, writes results/ and exits 1. FAKE_MODE (from the job's
 * environment) makes it die by SIGKILL (oom) or hang (hang).
 */
static const char fake_check[] =
	"#!/bin/sh\n"
	"printf 'args:'; for a; do printf ' [%s]' \"$a\"; done; echo\n"
	"printf 'env: FSWB_GUEST=%s RESULT_BASE=%s SOAK=%s\\n' \"$FSWB_GUEST\" "
	"\"${RESULT_BASE-unset}\" \"$SOAK\"\n"
	"echo \"config: $HOST_OPTIONS: $(cat \"$HOST_OPTIONS\")\"\n"
	"echo \"pwd: $(pwd)\"\n"
	"echo \"exclude: $(cat \"${HOST_OPTIONS%/*}/exclude\")\"\n"
	"rb=${RESULT_BASE:-results}\n"
	"mkdir -p \"$rb/generic\"\n"
	"case $FAKE_MODE in\n"
	"oom) echo 'eating memory'; kill -9 $$ ;;\n"
	"hang) echo $$ >\"$FAKE_PIDFILE\"; echo hanging; exec sleep 300 ;;\n"
	"esac\n"
	"case \" $* \" in *' generic/002 '*) ;; *)\n"
	"	printf 'generic/001 '; sleep 1.5; echo ' 2s' ;; esac\n"
	"awk 'BEGIN { for (i = 0; i < 3000; i++) printf \"line %d of a long output, more than one "
	"frame\\n\", i }'\n"
	"printf 'no newline at the end'\n"
	"echo '<?xml version=\"1.0\"?><testsuite name=\"fake\"/>' >\"$rb/result.xml\"\n"
	"echo \"$*\" >>\"$rb/generic/001.full\"\n"
	"exit 1\n";

static const char fake_mkfs[] = "#!/bin/sh\n"
				"echo \"fake mkfs $*\"\n"
				"if [ \"$1\" = fail ]; then\n"
				"	echo 'fake mkfs: cannot open /dev/nope' >&2; exit 1\n"
				"fi\n"
				"last=; for a; do last=$a; done\n"
				"echo \"$*\" >\"$last\"\n";

/* The scratch fstests tree and tools, made once. */
static char *fake_dir, *fake_mkfs_path;

static int
setup_fake(void **state)
{
	char *check;

	if (test_setup_hermetic(state))
		return -1;
	fake_dir = test_tmp("fstests");
	check = path_join(fake_dir, "check");
	test_write(check, fake_check);
	chmod(check, 0755);
	free(check);
	fake_mkfs_path = test_tmp("fake-mkfs");
	test_write(fake_mkfs_path, fake_mkfs);
	chmod(fake_mkfs_path, 0755);
	return 0;
}

static int
teardown_fake(void **state)
{
	free(fake_dir);
	free(fake_mkfs_path);
	return test_teardown_hermetic(state);
}

/* One agent and its channel, driven from the loop. */
struct conn {
	struct loop *loop;
	struct child *child;
	struct agent_reader reader;
	struct recs rs;
	size_t next; /* first record not looked at yet */
	struct strbuf outq;
	size_t outq_off;
	bool writing;
	bool eof;
	enum status rc;
	char *work;
	int errfd;
	/* the real agent's frames checked against the order the host expects */
	struct agent_order order;
	struct agent_reader sent; /* what the host queued, to see its commands */
	size_t sent_off;
};

/* Each frame from the agent is in the order agent_order_check() wants. */
static enum status
record_in_order(const struct agent_msg *m, void *data)
{
	struct conn *c = data;

	if (agent_order_check(&c->order, m) != OK)
		fail_msg("the agent's %s is out of order: %s", agent_type_name(m->type),
			 error_msg());
	return record(m, &c->rs);
}

static enum status
note_command(const struct agent_msg *m, void *data)
{
	struct conn *c = data;

	if (m->offset == 0)
		agent_order_sent(&c->order, m->type);
	return OK;
}

static void
on_agent_out(struct loop *loop, int fd, short revents, void *data)
{
	struct conn *c = data;
	char buf[8192];
	ssize_t n = read(fd, buf, sizeof(buf));

	if (n > 0) {
		if (c->rc == OK)
			c->rc = agent_reader_feed(&c->reader, buf, (size_t)n, record_in_order, c);
		if (c->rc != OK)
			fail_msg("protocol error from the agent: %s", error_msg());
		return;
	}
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	loop_del_fd(loop, fd);
	close(fd);
	c->child->out = -1;
	c->eof = true;
	if (c->rc == OK)
		c->rc = agent_reader_eof(&c->reader, record_in_order, c);
}

static void
on_agent_in(struct loop *loop, int fd, short revents, void *data)
{
	struct conn *c = data;
	ssize_t n = write(fd, c->outq.buf + c->outq_off, c->outq.len - c->outq_off);

	if (n < 0) {
		if (errno == EAGAIN || errno == EINTR)
			return;
		fail_msg("writing to the agent: %s", strerror(errno));
	}
	c->outq_off += (size_t)n;
	if (c->outq_off == c->outq.len) {
		strbuf_reset(&c->outq);
		c->outq_off = c->sent_off = 0;
		loop_del_fd(loop, fd);
		c->writing = false;
	}
}

/* Queue what the builders put in c->outq. */
static void
flush(struct conn *c)
{
	/* the commands the host sent (a malformed one, sent on purpose, ends this) */
	if (c->outq.len > c->sent_off &&
	    agent_reader_feed(&c->sent, c->outq.buf + c->sent_off, c->outq.len - c->sent_off,
			      note_command, c) != OK) {
		/* a malformed command, sent on purpose: the agent refuses it */
		agent_order_sent(&c->order, AGENT_UNKNOWN);
		agent_reader_release(&c->sent);
		agent_reader_init(&c->sent, 0);
	}
	c->sent_off = c->outq.len;
	if (c->outq.len > c->outq_off && !c->writing) {
		assert_int_equal(loop_add_fd(c->loop, c->child->in, POLLOUT, on_agent_in, c), OK);
		c->writing = true;
	}
}

static void
send_raw(struct conn *c, const char *s, size_t len)
{
	strbuf_add(&c->outq, s, len);
	flush(c);
}

static void
conn_start(struct conn *c, const struct shell *sh, const char *tag)
{
	char *agent = test_path("src/agent/fswb-agent");
	char *errlog = test_tmp(tag);
	struct strvec argv = STRVEC_INIT;
	struct spawn_opts o = SPAWN_OPTS_INIT;
	const char *env[] = { "FSWB_AGENT_HB=1", NULL };

	memset(c, 0, sizeof(*c));
	c->loop = loop_new();
	agent_reader_init(&c->reader, 0);
	agent_reader_init(&c->sent, 0);
	agent_order_init(&c->order, UINT64_C(1) << 30);
	strbuf_init(&c->outq);
	c->work = xasprintf("%s/work-%s", test_scratch, tag);
	c->errfd = open(errlog, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(c->errfd >= 0);
	strvec_pushv(&argv, sh->argv);
	strvec_push(&argv, agent);
	strvec_push(&argv, "--stdio");
	strvec_push(&argv, "--workdir");
	strvec_push(&argv, c->work);
	o.argv = (const char *const *)argv.v;
	o.env = env;
	o.in = SPAWN_PIPE;
	o.out = SPAWN_PIPE;
	o.err = SPAWN_FD;
	o.err_fd = c->errfd;
	o.new_pgrp = true;
	assert_int_equal(spawn_start(c->loop, &o, &c->child), OK);
	assert_int_equal(loop_add_fd(c->loop, c->child->out, POLLIN, on_agent_out, c), OK);
	strvec_clear(&argv);
	free(agent);
	free(errlog);
}

static void
conn_free(struct conn *c)
{
	if (c->child && c->child->in >= 0)
		loop_del_fd(c->loop, c->child->in);
	if (c->child && c->child->out >= 0)
		loop_del_fd(c->loop, c->child->out);
	child_free(c->child);
	agent_reader_release(&c->reader);
	agent_reader_release(&c->sent);
	recs_clear(&c->rs);
	strbuf_release(&c->outq);
	loop_free(c->loop);
	close(c->errfd);
	free(c->work);
}

/* Run the loop until a record of type arrives; returns its index. */
static size_t
expect(struct conn *c, enum agent_type type, int timeout_ms)
{
	uint64_t end = loop_now_ms() + (uint64_t)timeout_ms;

	for (;;) {
		for (size_t i = c->next; i < c->rs.n; i++) {
			if (c->rs.v[i].type == type) {
				c->next = i + 1;
				return i;
			}
		}
		if (c->eof || loop_now_ms() > end) {
			char *dump = recs_dump(&c->rs);

			fail_msg("no %s from the agent (%s); it sent:\n%.3000s",
				 agent_type_name(type),
				 c->eof ? "it closed the channel" : "timed out", dump);
		}
		assert_int_equal(loop_run_once(c->loop, 100), OK);
	}
}

/* The agent's messages of type from index from to to (exclusive), joined. */
static char *
joined(const struct conn *c, size_t from, size_t to, enum agent_type type, size_t *frames)
{
	struct strbuf sb = STRBUF_INIT;

	if (frames)
		*frames = 0;
	for (size_t i = from; i < to; i++) {
		if (c->rs.v[i].type != type)
			continue;
		strbuf_add(&sb, c->rs.v[i].payload.buf, c->rs.v[i].payload.len);
		if (frames)
			(*frames)++;
	}
	return strbuf_detach(&sb);
}

static void
wait_exit(struct conn *c, int timeout_ms)
{
	uint64_t end = loop_now_ms() + (uint64_t)timeout_ms;

	while (c->child->running) {
		if (loop_now_ms() > end)
			fail_msg("the agent did not end");
		assert_int_equal(loop_run_once(c->loop, 100), OK);
	}
}

static const char *
job_dir_of(const struct conn *c, char *buf, size_t len)
{
	snprintf(buf, len, "%s/job", c->work);
	return buf;
}

/* FILE job.env (+ local.config, exclude) for this connection. */
static void
send_job(struct conn *c, const char *const *mkfs, const char *const *env, const char *result_base,
	 const char *proto_override)
{
	char jobdir[4096];
	char *mnt1 = xasprintf("%s/mnt/test", c->work);
	char *mnt2 = xasprintf("%s/mnt/scr atch", c->work);
	const char *mounts[] = { mnt1, mnt2, NULL };
	static const char *const opts[] = { "-R", "xunit", "-T", NULL };
	char *excl;
	const char *tests[] = { "-g", "quick", "-E", NULL, "generic/00*", NULL };
	struct agent_job job = {
		.fstests_dir = fake_dir,
		.job_dir = job_dir_of(c, jobdir, sizeof(jobdir)),
		.fstyp = "ext4",
		.config = "local.config",
		.result_base = result_base,
		.mount_points = mounts,
		.mkfs_test = mkfs,
		.check_opts = opts,
		.check_tests = tests,
		.env = env,
	};
	struct strbuf text = STRBUF_INIT;

	excl = agent_job_path(&job, "exclude");
	tests[3] = excl;
	assert_int_equal(agent_job_env(&text, &job), OK);
	if (proto_override) {
		char *p = strstr(text.buf, "FSWB_PROTO=1\n");

		assert_non_null(p);
		p[11] = *proto_override;
	}
	assert_int_equal(agent_frame_file(&c->outq, "job.env", 0644, text.buf, text.len), OK);
	assert_int_equal(agent_frame_file(&c->outq, "local.config", 0644,
					  "export FSTYP=ext4\nexport TEST_DEV=/dev/fake\n", 42),
			 OK);
	assert_int_equal(agent_frame_file(&c->outq, "exclude", 0600, "generic/003 # flaky\n", 20),
			 OK);
	flush(c);
	strbuf_release(&text);
	free(excl);
	free(mnt1);
	free(mnt2);
}

static void
send_run(struct conn *c)
{
	agent_frame_run(&c->outq);
	flush(c);
}

/* HELLO and READY, checked. */
static void
expect_hello(struct conn *c)
{
	struct agent_hello h;
	size_t i = expect(c, AGENT_HELLO, 10000);
	struct agent_msg m = { 0 };
	char *args = xstrdup(c->rs.v[i].args);
	char *save = NULL;

	m.type = AGENT_HELLO;
	m.name = "HELLO";
	for (char *w = strtok_r(args, " ", &save); w && m.argc < AGENT_ARGS_MAX;
	     w = strtok_r(NULL, " ", &save))
		m.argv[m.argc++] = w;
	assert_int_equal(i, 0);
	assert_int_equal(agent_hello_parse(&m, &h), OK);
	assert_int_equal(h.proto, AGENT_PROTO_VERSION);
	assert_string_equal(h.agent_version, "0.1.0");
	assert_true(h.arch[0] && h.kernel_release[0]);
	free(args);
	assert_int_equal(expect(c, AGENT_READY, 5000), 1);
}

static bool
file_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/* Unpack a RESULT payload; returns the directory (free() it). */
static char *
unpack(const struct rec *r, const char *tag)
{
	char *tgz = test_tmp(tag);
	char *dir = xasprintf("%s.d", tgz);
	struct loop *loop = loop_new();
	const char *argv[] = { "tar", "-xzf", tgz, "-C", dir, NULL };
	struct child_exit ex;

	assert_int_equal(r->type, AGENT_RESULT);
	assert_true(r->payload.len > 0);
	assert_int_equal(write_file_atomic(tgz, r->payload.buf, r->payload.len, 0644), OK);
	assert_int_equal(mkdir_p(dir, 0755), OK);
	assert_int_equal(spawn_run(loop, argv, NULL, true, 4096, NULL, &ex), OK);
	assert_true(ex.exited && ex.code == 0);
	loop_free(loop);
	free(tgz);
	return dir;
}

static const struct shell *
shell_of(void **state)
{
	const struct shell *sh = *state;

	if (!in_path(sh->argv[0]))
		skip();
	return sh;
}

/* A whole session: job, RUN, RERUN, bad commands, POWEROFF. */
static void
test_agent_session(void **state)
{
	const struct shell *sh = shell_of(state);
	struct conn c;
	char tag[64], jobdir[4096], *mkfs_mark, *out, *log, *path, *dir, *text;
	const char *mkfs[] = { fake_mkfs_path, "-b", "4096", NULL, NULL };
	static const char *const env[] = { "SOAK=a 'b' $c", NULL };
	size_t run_at, exit_at, i, frames, r1;
	bool streamed = false, hb = false;
	int busy = -1;
	struct stat st;

	snprintf(tag, sizeof(tag), "session-%s", sh->argv[0]);
	conn_start(&c, sh, tag);
	mkfs_mark = xasprintf("%s.mkfs", c.work);
	mkfs[3] = mkfs_mark;
	expect_hello(&c);
	send_job(&c, mkfs, env, NULL, NULL);
	run_at = c.rs.n;
	send_run(&c);
	r1 = expect(&c, AGENT_RESULT, 30000);
	exit_at = expect(&c, AGENT_EXIT, 5000);
	assert_int_equal(exit_at, r1 + 1);
	assert_int_equal(c.rs.v[exit_at].value, 1);

	/* mkfs ran, with its arguments, its output as LOG */
	text = test_read(mkfs_mark);
	path = xasprintf("-b 4096 %s\n", mkfs_mark);
	assert_string_equal(text, path);
	free(path);
	free(text);
	log = joined(&c, run_at, exit_at, AGENT_LOG, NULL);
	assert_non_null(strstr(log, "making the test filesystem"));
	assert_non_null(strstr(log, "fake mkfs -b 4096 "));
	free(log);
	/* the mount points were made */
	path = xasprintf("%s/mnt/scr atch", c.work);
	assert_true(file_exists(path));
	free(path);

	/* OUT is exactly what check printed, streamed before the newline */
	out = joined(&c, run_at, exit_at, AGENT_OUT, &frames);
	path = xasprintf("%s/check.out", c.work);
	text = test_read(path);
	assert_string_equal(out, text);
	free(text);
	free(path);
	assert_true(frames >= 3); /* more than AGENT_CHUNK_MAX bytes */
	assert_true(strlen(out) > AGENT_CHUNK_MAX);
	assert_non_null(strstr(out, "args: [-R] [xunit] [-T] [-g] [quick] [-E] ["));
	assert_non_null(strstr(out, "/job/exclude] [generic/00*]\n"));
	assert_non_null(strstr(out, "env: FSWB_GUEST=1 RESULT_BASE=unset SOAK=a 'b' $c\n"));
	assert_non_null(strstr(out, "/job/local.config: export FSTYP=ext4\nexport TEST_DEV"));
	assert_non_null(strstr(out, "exclude: generic/003 # flaky\n"));
	text = xasprintf("pwd: %s\n", fake_dir);
	assert_non_null(strstr(out, text));
	free(text);
	assert_non_null(strstr(out, "generic/001  2s\n"));
	assert_true(str_endswith(out, "frame\nno newline at the end"));
	free(out);
	for (i = run_at; i < exit_at; i++) {
		const struct rec *r = &c.rs.v[i];

		if (r->type == AGENT_OUT && str_endswith(r->payload.buf, "generic/001 "))
			streamed = true;
		if (r->type == AGENT_HB && streamed && r->value > 0)
			hb = true;
		/* after the first heartbeat, each says how busy the CPUs were */
		if (r->type == AGENT_HB && strchr(r->args, ' '))
			busy = atoi(strchr(r->args, ' ') + 1);
	}
	assert_true(streamed);
	assert_true(hb);
	assert_in_range(busy, 0, 100);

	/* the job's files are where job.env says, with their modes */
	path = xasprintf("%s/exclude", job_dir_of(&c, jobdir, sizeof(jobdir)));
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	free(path);

	/* RESULT unpacks to the results directory */
	dir = unpack(&c.rs.v[r1], tag);
	path = xasprintf("%s/result.xml", dir);
	text = test_read(path);
	assert_non_null(strstr(text, "<testsuite name=\"fake\"/>"));
	free(text);
	free(path);
	path = xasprintf("%s/generic/001.full", dir);
	assert_true(file_exists(path));
	free(path);
	free(dir);
	expect(&c, AGENT_READY, 5000);

	/* RERUN: check's options and the one test, results kept */
	run_at = c.rs.n;
	assert_int_equal(agent_frame_rerun(&c.outq, "generic/002"), OK);
	flush(&c);
	r1 = expect(&c, AGENT_RESULT, 30000);
	exit_at = expect(&c, AGENT_EXIT, 5000);
	assert_int_equal(c.rs.v[exit_at].value, 1);
	out = joined(&c, run_at, exit_at, AGENT_OUT, NULL);
	assert_true(str_startswith(out, "args: [-R] [xunit] [-T] [generic/002]\n"));
	free(out);
	dir = unpack(&c.rs.v[r1], tag);
	path = xasprintf("%s/generic/001.full", dir);
	text = test_read(path);
	assert_non_null(strstr(text, "-g quick"));
	assert_non_null(strstr(text, "-R xunit -T generic/002"));
	free(text);
	free(path);
	free(dir);
	expect(&c, AGENT_READY, 5000);

	/* commands the agent refuses: each an ERR, then READY */
	send_raw(&c, "RERUN -g\n", 9);
	i = expect(&c, AGENT_ERR, 5000);
	assert_non_null(strstr(c.rs.v[i].payload.buf, "cannot rerun '-g'"));
	expect(&c, AGENT_READY, 5000);
	send_raw(&c, "FROB x +4\nabcdRERUN\n", 20);
	i = expect(&c, AGENT_LOG, 5000);
	assert_non_null(strstr(c.rs.v[i].payload.buf, "unknown command 'FROB' skipped"));
	expect(&c, AGENT_READY, 5000);
	i = expect(&c, AGENT_ERR, 5000);
	assert_non_null(strstr(c.rs.v[i].payload.buf, "cannot rerun ''"));
	expect(&c, AGENT_READY, 5000);
	agent_frame_shell(&c.outq);
	flush(&c);
	i = expect(&c, AGENT_ERR, 5000);
	assert_non_null(strstr(c.rs.v[i].payload.buf, "no shell over this channel (--stdio)"));
	expect(&c, AGENT_READY, 5000);
	/* a FILE with a path in its name is refused, and RUN with it */
	send_raw(&c, "FILE ../evil 0644 +3\nbad", 24);
	i = expect(&c, AGENT_ERR, 5000);
	assert_non_null(strstr(c.rs.v[i].payload.buf, "job file refused: '../evil'"));
	path = xasprintf("%s/evil", c.work);
	assert_false(file_exists(path));
	free(path);
	send_run(&c);
	i = expect(&c, AGENT_ERR, 5000);
	assert_non_null(strstr(c.rs.v[i].payload.buf, "'../evil' was refused"));
	expect(&c, AGENT_READY, 5000);

	/* POWEROFF: BYE, the end, nothing left behind */
	agent_frame_poweroff(&c.outq);
	flush(&c);
	expect(&c, AGENT_BYE, 15000);
	wait_exit(&c, 15000);
	assert_true(c.child->exit.exited);
	assert_int_equal(c.child->exit.code, 0);
	assert_true(c.eof);
	assert_int_equal(c.rc, OK);
	assert_false(file_exists(c.work));
	free(mkfs_mark);
	conn_free(&c);
}

/* mkfs failing, a job for another protocol, check killed: ERRs and EXIT 137. */
static void
test_agent_failures(void **state)
{
	const struct shell *sh = shell_of(state);
	struct conn c;
	char tag[64], *rb, *path;
	const char *mkfs_fail[] = { fake_mkfs_path, "fail", NULL };
	static const char *const oom[] = { "FAKE_MODE=oom", NULL };
	size_t i, start, ex;

	snprintf(tag, sizeof(tag), "failures-%s", sh->argv[0]);
	conn_start(&c, sh, tag);
	assert_int_equal(mkdir_p(c.work, 0755), OK); /* the agent must not remove it */
	expect_hello(&c);

	/* before any job */
	send_run(&c);
	i = expect(&c, AGENT_ERR, 5000);
	assert_non_null(strstr(c.rs.v[i].payload.buf, "no job: send FILE job.env before RUN"));
	expect(&c, AGENT_READY, 5000);
	assert_int_equal(agent_frame_rerun(&c.outq, "generic/001"), OK);
	flush(&c);
	i = expect(&c, AGENT_ERR, 5000);
	assert_non_null(strstr(c.rs.v[i].payload.buf, "no job has run yet"));
	expect(&c, AGENT_READY, 5000);

	/* mkfs fails: ERR with its output, no check */
	start = c.rs.n;
	send_job(&c, mkfs_fail, NULL, NULL, NULL);
	send_run(&c);
	i = expect(&c, AGENT_ERR, 10000);
	assert_non_null(strstr(c.rs.v[i].payload.buf, "mkfs of the test device failed"));
	assert_non_null(strstr(c.rs.v[i].payload.buf, "status 1"));
	assert_non_null(strstr(c.rs.v[i].payload.buf, "fake mkfs: cannot open /dev/nope"));
	expect(&c, AGENT_READY, 5000);
	for (size_t k = start; k < c.rs.n; k++)
		assert_true(c.rs.v[k].type != AGENT_OUT && c.rs.v[k].type != AGENT_RESULT);

	/* a job for another protocol version */
	send_job(&c, NULL, NULL, NULL, "7");
	send_run(&c);
	i = expect(&c, AGENT_ERR, 5000);
	assert_non_null(strstr(c.rs.v[i].payload.buf, "protocol '7'"));
	assert_non_null(strstr(c.rs.v[i].payload.buf, "rebuild the appliance"));
	expect(&c, AGENT_READY, 5000);

	/* check killed by SIGKILL (as by the OOM killer), RESULT_BASE elsewhere */
	rb = xasprintf("%s/rb", test_scratch);
	start = c.rs.n;
	send_job(&c, NULL, oom, rb, NULL);
	send_run(&c);
	i = expect(&c, AGENT_RESULT, 20000);
	ex = expect(&c, AGENT_EXIT, 5000);
	assert_int_equal(c.rs.v[ex].value, 137);
	{
		char *out = joined(&c, start, ex, AGENT_OUT, NULL);

		assert_non_null(strstr(out, "RESULT_BASE="));
		assert_non_null(strstr(out, "/rb SOAK="));
		assert_true(str_endswith(out, "eating memory\n"));
		free(out);
	}
	assert_true(c.rs.v[i].payload.len > 0); /* rb/ held an empty generic/ */
	path = xasprintf("%s/generic", rb);
	assert_true(file_exists(path));
	free(path);
	expect(&c, AGENT_READY, 5000);

	/* the host closes the channel while the agent waits: it ends */
	close(c.child->in);
	c.child->in = -1;
	wait_exit(&c, 15000);
	assert_true(c.child->exit.exited);
	assert_int_equal(c.child->exit.code, 0);
	/* a workdir it did not make stays, its files go */
	assert_true(file_exists(c.work));
	path = xasprintf("%s/job", c.work);
	assert_false(file_exists(path));
	free(path);
	free(rb);
	conn_free(&c);
}

/* The state of a process: its /proc stat letter, or 0 when it is gone. */
static char
proc_state(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

/* The channel closes while a test hangs: the agent stops check and ends. */
static void
test_agent_channel_closes_mid_test(void **state)
{
	const struct shell *sh = shell_of(state);
	struct conn c;
	char tag[64], *pidfile, *env0, *text;
	const char *env[] = { "FAKE_MODE=hang", NULL, NULL };
	uint64_t end;
	pid_t pid;
	char st;

	snprintf(tag, sizeof(tag), "hang-%s", sh->argv[0]);
	pidfile = xasprintf("%s/hang-%s.pid", test_scratch, sh->argv[0]);
	env0 = xasprintf("FAKE_PIDFILE=%s", pidfile);
	env[1] = env0;
	conn_start(&c, sh, tag);
	expect_hello(&c);
	send_job(&c, NULL, env, NULL, NULL);
	send_run(&c);
	end = loop_now_ms() + 20000;
	for (;;) {
		char *out = joined(&c, 0, c.rs.n, AGENT_OUT, NULL);
		bool seen = strstr(out, "hanging\n") != NULL;

		free(out);
		if (seen && file_exists(pidfile))
			break;
		assert_true(loop_now_ms() < end);
		assert_int_equal(loop_run_once(c.loop, 100), OK);
	}
	expect(&c, AGENT_HB, 5000); /* it keeps the host informed */
	text = test_read(pidfile);
	pid = (pid_t)atoi(text);
	free(text);
	assert_true(pid > 0);
	assert_true(proc_state(pid) != 0);

	/* the host goes away: both directions close */
	loop_del_fd(c.loop, c.child->out);
	close(c.child->out);
	c.child->out = -1;
	close(c.child->in);
	c.child->in = -1;
	wait_exit(&c, 20000);
	assert_true(c.child->exit.exited);
	end = loop_now_ms() + 5000;
	while ((st = proc_state(pid)) != 0 && st != 'Z') {
		if (loop_now_ms() > end)
			fail_msg("the hanging check (pid %d) is still running (%c)", (int)pid, st);
		usleep(100 * 1000);
	}
	assert_false(file_exists(c.work));
	free(pidfile);
	free(env0);
	conn_free(&c);
}

int
main(void)
{
	static const struct CMUnitTest framing[] = {
		cmocka_unit_test(test_reader_session),
		cmocka_unit_test(test_reader_split_everywhere),
		cmocka_unit_test(test_reader_chunks),
		cmocka_unit_test(test_reader_unknown_and_extra),
		cmocka_unit_test(test_reader_header_limit),
		cmocka_unit_test(test_reader_bad_headers),
		cmocka_unit_test(test_reader_eof),
		cmocka_unit_test(test_reader_callback_error),
		cmocka_unit_test(test_reader_sync),
		cmocka_unit_test(test_builders),
		cmocka_unit_test(test_hello),
		cmocka_unit_test(test_order),
		cmocka_unit_test(test_job_env),
		cmocka_unit_test(test_job_env_empty_and_bad),
		cmocka_unit_test(test_job_env_nfs),
	};
#define AGENT_TESTS(i)                                                              \
	cmocka_unit_test_prestate(test_agent_session, (void *)&shells[i]),          \
		cmocka_unit_test_prestate(test_agent_failures, (void *)&shells[i]), \
		cmocka_unit_test_prestate(test_agent_channel_closes_mid_test, (void *)&shells[i])
	static const struct CMUnitTest agent[] = { AGENT_TESTS(0), AGENT_TESTS(1), AGENT_TESTS(2) };
	int failed = 0;

	signal(SIGPIPE, SIG_IGN);
	failed += cmocka_run_group_tests_name("agent protocol framing", framing,
					      test_setup_hermetic, test_teardown_hermetic);
	failed +=
		cmocka_run_group_tests_name("fswb-agent --stdio", agent, setup_fake, teardown_fake);
	return failed;
}
