/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The host's half of the agent protocol on anything a guest may send: the
 * frame reader, fed in pieces of sizes the input's first byte picks, and
 * the frame order (agent_order), with the host answering each READY as
 * fswb does (the job and RUN, then POWEROFF), and every HELLO parsed.
 *
 * fuzz-sources: src/agent/agent_proto.c src/core/util.c src/core/status.c
 * fuzz-seeds: tests/fuzz/seeds/agent-session.txt tests/fuzz/seeds/agent-bad.txt
 * fuzz-options: -max_len=300000
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent_proto.h"
#include "core/status.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct host {
	struct agent_order order;
	unsigned readies;
};

static enum status
on_msg(const struct agent_msg *m, void *data)
{
	struct host *h = data;
	struct agent_hello hello;
	enum status rc = agent_order_check(&h->order, m);

	if (rc != OK)
		return rc;
	if (m->type == AGENT_HELLO)
		(void)agent_hello_parse(m, &hello);
	if (m->type == AGENT_READY)
		agent_order_sent(&h->order, h->readies++ ? AGENT_POWEROFF : AGENT_RUN);
	/* the message's fields are what the header says */
	if (m->has_payload && (m->offset + m->len > m->total || m->len > AGENT_CHUNK_MAX))
		abort();
	return OK;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct host h = { 0 };
	struct agent_reader r;
	size_t piece, off = 1;
	enum status rc = OK;

	if (!size)
		return 0;
	piece = data[0] ? data[0] : 4096;
	agent_order_init(&h.order, 100000);
	agent_reader_init(&r, data[0] & 1 ? AGENT_READER_SYNC : 0);
	while (rc == OK && off < size) {
		size_t n = size - off < piece ? size - off : piece;

		rc = agent_reader_feed(&r, (const char *)data + off, n, on_msg, &h);
		off += n;
	}
	if (rc == OK)
		(void)agent_reader_eof(&r, on_msg, &h);
	agent_reader_release(&r);
	error_clear();
	return 0;
}
