/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The agent protocol's framing: a reader for the guest's stream, builders
 * for the host's frames, and job.env. See agent_proto.h.
 */
#include "agent/agent_proto.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum reader_state {
	ST_LINE = 0, /* reading a header line (or a noise line) */
	ST_PAYLOAD,  /* reading a payload, delivering it in pieces */
	ST_SKIP,     /* skipping the payload of an unknown frame */
};

enum payload_rule {
	P_NONE,	    /* the type takes no payload */
	P_REQUIRED, /* the type always has one */
};

enum arg_rule {
	A_ANY = 0,
	A_NUMBER, /* decimal digits */
	A_OCTAL,  /* octal digits, at most 07777 */
	A_FILE,	  /* agent_file_name_ok() */
	A_TEST,	  /* a test name (RERUN) */
};

struct type_info {
	const char *name;
	enum agent_type type;
	size_t min_args;
	enum payload_rule payload;
	enum arg_rule arg0, arg1;
	const char *usage;
};

static const struct type_info types[] = {
	{ "HELLO", AGENT_HELLO, 1, P_NONE, A_ANY, A_ANY,
	  "HELLO <proto> <agent-version> <arch> <kernel-release>" },
	{ "READY", AGENT_READY, 0, P_NONE, A_ANY, A_ANY, "READY" },
	{ "HB", AGENT_HB, 1, P_NONE, A_NUMBER, A_ANY, "HB <uptime-seconds> [<busy-percent>]" },
	{ "OUT", AGENT_OUT, 0, P_REQUIRED, A_ANY, A_ANY, "OUT +LEN" },
	{ "LOG", AGENT_LOG, 0, P_REQUIRED, A_ANY, A_ANY, "LOG +LEN" },
	{ "ERR", AGENT_ERR, 0, P_REQUIRED, A_ANY, A_ANY, "ERR +LEN" },
	{ "RESULT", AGENT_RESULT, 0, P_REQUIRED, A_ANY, A_ANY, "RESULT +LEN" },
	{ "EXIT", AGENT_EXIT, 1, P_NONE, A_NUMBER, A_ANY, "EXIT <status>" },
	{ "SHELLREADY", AGENT_SHELLREADY, 0, P_NONE, A_ANY, A_ANY, "SHELLREADY" },
	{ "BYE", AGENT_BYE, 0, P_NONE, A_ANY, A_ANY, "BYE" },
	{ "FILE", AGENT_FILE, 2, P_REQUIRED, A_FILE, A_OCTAL, "FILE <name> <mode> +LEN" },
	{ "RUN", AGENT_RUN, 0, P_NONE, A_ANY, A_ANY, "RUN" },
	{ "RERUN", AGENT_RERUN, 1, P_NONE, A_TEST, A_ANY, "RERUN <test>" },
	{ "SHELL", AGENT_SHELL, 0, P_NONE, A_ANY, A_ANY, "SHELL" },
	{ "POWEROFF", AGENT_POWEROFF, 0, P_NONE, A_ANY, A_ANY, "POWEROFF" },
};

const char *
agent_type_name(enum agent_type type)
{
	if (type == AGENT_UNKNOWN)
		return "unknown";
	if (type == AGENT_NOISE)
		return "noise";
	for (size_t i = 0; i < ARRAY_SIZE(types); i++)
		if (types[i].type == type)
			return types[i].name;
	return "unknown";
}

static const struct type_info *
type_lookup(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(types); i++)
		if (!strcmp(types[i].name, name))
			return &types[i];
	return NULL;
}

/* Character classes of the protocol. */
static bool
is_type_char(char c, bool first)
{
	if (c >= 'A' && c <= 'Z')
		return true;
	return !first && ((c >= '0' && c <= '9') || c == '_');
}

static bool
is_arg_char(char c)
{
	return c > ' ' && c <= '~';
}

static bool
is_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

static bool
type_ok(const char *s, size_t len)
{
	if (len == 0 || len > AGENT_TYPE_MAX)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!is_type_char(s[i], i == 0))
			return false;
	return true;
}

/* "+" and digits only: the payload marker (its length not checked here). */
static bool
is_len_marker(const char *s)
{
	return s[0] == '+' && is_digits(s + 1);
}

static bool
name_chars_ok(const char *name, const char *extra, const char *bad_first)
{
	size_t n = strlen(name);

	if (n == 0 || n > AGENT_NAME_MAX || strchr(bad_first, name[0]))
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      strchr(extra, c)))
			return false;
	}
	return true;
}

bool
agent_file_name_ok(const char *name)
{
	return name_chars_ok(name, "._-+", ".-+");
}

static bool
test_name_ok(const char *name)
{
	return name_chars_ok(name, "._-/", "-/.");
}

/*
 * A short, printable rendering of untrusted bytes for messages: at most
 * max characters, others as \xNN.
 */
static void
add_excerpt(struct strbuf *sb, const char *s, size_t len, size_t max)
{
	size_t shown = 0;

	for (size_t i = 0; i < len && shown < max; i++, shown++) {
		unsigned char c = (unsigned char)s[i];

		if (c >= ' ' && c <= '~' && c != '\\')
			strbuf_addch(sb, (char)c);
		else
			strbuf_addf(sb, "\\x%02x", c);
	}
	if (len > max)
		strbuf_adds(sb, "...");
}

/* Record a protocol error: sticky, returned by every later call. */
static enum status reader_fail(struct agent_reader *r, enum status code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static enum status
reader_fail(struct agent_reader *r, enum status code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verror(code, fmt, ap);
	va_end(ap);
	r->failed = code;
	free(r->failed_msg);
	r->failed_msg = xstrdup(error_msg());
	return code;
}

/* The callback failed: keep its message. */
static enum status
reader_fail_cb(struct agent_reader *r, enum status code)
{
	r->failed = code;
	free(r->failed_msg);
	r->failed_msg = xstrdup(error_msg());
	return code;
}

void
agent_reader_init(struct agent_reader *r, unsigned flags)
{
	memset(r, 0, sizeof(*r));
	r->flags = flags;
	r->state = ST_LINE;
	strbuf_init(&r->chunk);
}

void
agent_reader_release(struct agent_reader *r)
{
	strbuf_release(&r->chunk);
	free(r->failed_msg);
	r->failed_msg = NULL;
}

bool
agent_reader_idle(const struct agent_reader *r)
{
	return r->state == ST_LINE && r->line_len == 0;
}

/*
 * Parse the header line r->line (r->line_len bytes, no '\n') into r->hdr
 * and r->msg. On failure nothing is recorded: the message is left in *why
 * (a static string or one made into why_buf) for the caller to report.
 */
static bool
parse_header(struct agent_reader *r, struct strbuf *why)
{
	struct agent_msg *m = &r->msg;
	const struct type_info *ti;
	char *words[AGENT_ARGS_MAX + 2];
	size_t nwords = 0;
	char *p;

	for (size_t i = 0; i < r->line_len; i++) {
		unsigned char c = (unsigned char)r->line[i];

		if (c == '\r') {
			strbuf_adds(why,
				    "a carriage return in the header: the channel is a terminal "
				    "(pty); connect the agent without one (ssh without -t, "
				    "adb exec-out)");
			return false;
		}
		if (c < ' ' || c > '~') {
			strbuf_addf(why, "byte 0x%02x in the header", c);
			return false;
		}
	}
	if (r->line[0] == ' ' || r->line[r->line_len - 1] == ' ' ||
	    memmem(r->line, r->line_len, "  ", 2)) {
		strbuf_adds(why, "the header's words are not separated by single spaces");
		return false;
	}
	memcpy(r->hdr, r->line, r->line_len);
	r->hdr[r->line_len] = '\0';
	for (p = r->hdr;;) {
		char *sp = strchr(p, ' ');

		if (nwords == ARRAY_SIZE(words)) {
			strbuf_addf(why, "more than %d arguments", AGENT_ARGS_MAX);
			return false;
		}
		words[nwords++] = p;
		if (!sp)
			break;
		*sp = '\0';
		p = sp + 1;
	}
	if (nwords - 1 > AGENT_ARGS_MAX) {
		strbuf_addf(why, "more than %d arguments", AGENT_ARGS_MAX);
		return false;
	}
	if (!type_ok(words[0], strlen(words[0]))) {
		strbuf_adds(why, "the frame type is not 1 to 16 of A-Z, 0-9 and '_' starting with "
				 "a letter");
		return false;
	}

	memset(m, 0, sizeof(*m));
	m->name = words[0];
	m->data = "";
	m->argc = nwords - 1;
	for (size_t i = 1; i < nwords; i++)
		m->argv[i - 1] = words[i];
	if (m->argc > 0 && is_len_marker(m->argv[m->argc - 1])) {
		const char *digits = m->argv[m->argc - 1] + 1;

		if (strlen(digits) > 19 || strtoull(digits, NULL, 10) > AGENT_PAYLOAD_MAX) {
			strbuf_addf(why, "a payload length of more than %llu bytes",
				    (unsigned long long)AGENT_PAYLOAD_MAX);
			return false;
		}
		m->has_payload = true;
		m->total = strtoull(digits, NULL, 10);
		m->argc--;
		m->argv[m->argc] = NULL;
	}

	ti = type_lookup(m->name);
	if (!ti) {
		m->type = AGENT_UNKNOWN;
		return true;
	}
	m->type = ti->type;
	if (m->argc < ti->min_args || (ti->payload == P_REQUIRED) != m->has_payload)
		goto bad_shape;
	for (size_t i = 0; i < 2 && i < m->argc; i++) {
		enum arg_rule rule = i == 0 ? ti->arg0 : ti->arg1;
		const char *a = m->argv[i];

		switch (rule) {
		case A_ANY:
			break;
		case A_NUMBER:
			if (!is_digits(a) || strlen(a) > 18)
				goto bad_shape;
			m->value = strtoll(a, NULL, 10);
			break;
		case A_OCTAL:
			if (strlen(a) > 5 || strspn(a, "01234567") != strlen(a) || !*a ||
			    strtol(a, NULL, 8) > 07777)
				goto bad_shape;
			m->value = strtol(a, NULL, 8);
			break;
		case A_FILE:
			if (!agent_file_name_ok(a))
				goto bad_shape;
			break;
		case A_TEST:
			if (!test_name_ok(a))
				goto bad_shape;
			break;
		}
	}
	return true;

bad_shape:
	strbuf_addf(why, "a '%s' frame must be '%s'", ti->name, ti->usage);
	return false;
}

/* Deliver r->msg with the given payload piece. */
static enum status
deliver(struct agent_reader *r, const char *data, size_t len, uint64_t offset, bool last,
	agent_msg_fn *fn, void *cbdata)
{
	enum status rc;

	r->msg.data = data;
	r->msg.len = len;
	r->msg.offset = offset;
	r->msg.last = last;
	rc = fn(&r->msg, cbdata);
	if (rc != OK)
		return reader_fail_cb(r, rc);
	return OK;
}

static enum status
deliver_noise(struct agent_reader *r, agent_msg_fn *fn, void *cbdata)
{
	struct agent_msg *m = &r->msg;

	memset(m, 0, sizeof(*m));
	m->type = AGENT_NOISE;
	m->name = "";
	memcpy(r->hdr, r->line, r->line_len);
	r->hdr[r->line_len] = '\0';
	return deliver(r, r->hdr, r->line_len, 0, true, fn, cbdata);
}

/* A complete header line is in r->line: act on it. */
static enum status
header_done(struct agent_reader *r, uint64_t start, agent_msg_fn *fn, void *cbdata)
{
	struct strbuf why = STRBUF_INIT;
	struct strbuf shown = STRBUF_INIT;
	enum status rc;
	bool ok;

	if (r->line_len == 0)
		return OK; /* an empty line: not a frame */
	ok = parse_header(r, &why);
	if ((r->flags & AGENT_READER_SYNC) && !r->synced) {
		if (!ok || r->msg.type != AGENT_HELLO || !is_digits(r->msg.argv[0])) {
			strbuf_release(&why);
			return deliver_noise(r, fn, cbdata);
		}
		r->synced = true;
	}
	if (!ok) {
		add_excerpt(&shown, r->line, r->line_len, 60);
		rc = reader_fail(
			r, ERR_PROTOCOL,
			"bad frame from the agent at byte %llu ('%s'): %s; the guest's agent "
			"does not speak fswb's protocol: rebuild the appliance",
			(unsigned long long)start, shown.buf, why.buf);
		strbuf_release(&why);
		strbuf_release(&shown);
		return rc;
	}
	strbuf_release(&why);
	r->line_len = 0;

	if (!r->msg.has_payload || r->msg.type == AGENT_UNKNOWN) {
		rc = deliver(r, "", 0, 0, true, fn, cbdata);
		if (rc != OK)
			return rc;
		if (r->msg.has_payload && r->msg.total > 0) {
			r->state = ST_SKIP;
			r->remaining = r->msg.total;
			return OK;
		}
		r->frames++;
		return OK;
	}
	if (r->msg.total == 0) {
		r->frames++;
		return deliver(r, "", 0, 0, true, fn, cbdata);
	}
	r->state = ST_PAYLOAD;
	r->remaining = r->msg.total;
	strbuf_reset(&r->chunk);
	return OK;
}

/* Consume header bytes; returns how many were used in *used. */
static enum status
feed_line(struct agent_reader *r, const char *buf, size_t len, size_t *used, agent_msg_fn *fn,
	  void *cbdata)
{
	const char *nl = memchr(buf, '\n', len);
	size_t take = nl ? (size_t)(nl - buf) : len;
	size_t room = AGENT_HEADER_MAX - 1 - r->line_len;
	uint64_t start = r->pos - r->line_len;
	struct strbuf shown = STRBUF_INIT;
	enum status rc;

	if (take > room) {
		/* the line does not fit */
		memcpy(r->line + r->line_len, buf, room);
		r->line_len += room;
		*used = room;
		if ((r->flags & AGENT_READER_SYNC) && !r->synced) {
			rc = deliver_noise(r, fn, cbdata);
			r->line_len = 0;
			return rc;
		}
		add_excerpt(&shown, r->line, r->line_len, 40);
		rc = reader_fail(
			r, ERR_PROTOCOL,
			"a frame header from the agent at byte %llu is longer than %d bytes "
			"(it starts '%s'): the guest's agent does not speak fswb's "
			"protocol, or something else writes to its channel; rebuild the "
			"appliance",
			(unsigned long long)start, AGENT_HEADER_MAX, shown.buf);
		strbuf_release(&shown);
		return rc;
	}
	memcpy(r->line + r->line_len, buf, take);
	r->line_len += take;
	if (!nl) {
		*used = take;
		return OK;
	}
	*used = take + 1;
	r->line[r->line_len] = '\0';
	rc = header_done(r, start, fn, cbdata);
	r->line_len = 0;
	return rc;
}

static enum status
feed_payload(struct agent_reader *r, const char *buf, size_t len, size_t *used, agent_msg_fn *fn,
	     void *cbdata)
{
	size_t want = AGENT_CHUNK_MAX - r->chunk.len;
	size_t take = len;
	uint64_t offset;
	bool last;

	if (take > want)
		take = want;
	if (take > r->remaining)
		take = (size_t)r->remaining;
	strbuf_add(&r->chunk, buf, take);
	r->remaining -= take;
	*used = take;
	if (r->chunk.len < AGENT_CHUNK_MAX && r->remaining > 0)
		return OK;
	offset = r->msg.total - r->remaining - r->chunk.len;
	last = r->remaining == 0;
	if (last) {
		r->state = ST_LINE;
		r->frames++;
	}
	/* deliver from the buffer, then empty it (the callback sees a stable copy) */
	{
		enum status rc = deliver(r, r->chunk.buf, r->chunk.len, offset, last, fn, cbdata);

		strbuf_reset(&r->chunk);
		return rc;
	}
}

enum status
agent_reader_feed(struct agent_reader *r, const char *buf, size_t len, agent_msg_fn *fn, void *data)
{
	if (r->failed != OK)
		return error(r->failed, "%s", r->failed_msg);
	while (len > 0) {
		size_t used = 0;
		enum status rc = OK;

		switch (r->state) {
		case ST_LINE:
			rc = feed_line(r, buf, len, &used, fn, data);
			break;
		case ST_PAYLOAD:
			rc = feed_payload(r, buf, len, &used, fn, data);
			break;
		case ST_SKIP:
			used = len < r->remaining ? len : (size_t)r->remaining;
			r->remaining -= used;
			if (r->remaining == 0) {
				r->state = ST_LINE;
				r->frames++;
			}
			break;
		default:
			BUG("agent reader in state %d", r->state);
		}
		r->pos += used;
		buf += used;
		len -= used;
		if (rc != OK)
			return rc;
	}
	return OK;
}

enum status
agent_reader_eof(struct agent_reader *r, agent_msg_fn *fn, void *data)
{
	struct strbuf shown = STRBUF_INIT;
	enum status rc;

	if (r->failed != OK)
		return error(r->failed, "%s", r->failed_msg);
	if (r->state == ST_LINE) {
		if (r->line_len == 0)
			return OK;
		if ((r->flags & AGENT_READER_SYNC) && !r->synced) {
			rc = deliver_noise(r, fn, data);
			r->line_len = 0;
			return rc;
		}
		add_excerpt(&shown, r->line, r->line_len, 40);
		rc = reader_fail(
			r, ERR_PROTOCOL,
			"the agent's channel closed in the middle of a frame header ('%s')",
			shown.buf);
		strbuf_release(&shown);
		return rc;
	}
	return reader_fail(r, ERR_PROTOCOL,
			   "the agent's channel closed in the middle of a '%s' frame: %llu of its "
			   "%llu payload bytes came",
			   r->msg.name, (unsigned long long)(r->msg.total - r->remaining),
			   (unsigned long long)r->msg.total);
}

static void
copy_field(char *dst, size_t size, const char *src)
{
	snprintf(dst, size, "%s", src ? src : "");
}

enum status
agent_hello_parse(const struct agent_msg *msg, struct agent_hello *hello)
{
	unsigned long proto;

	memset(hello, 0, sizeof(*hello));
	if (msg->type != AGENT_HELLO)
		return error(ERR_PROTOCOL,
			     "the agent began with '%s' instead of 'HELLO': it does not speak "
			     "fswb's protocol; rebuild the appliance",
			     msg->name);
	if (msg->argc < 1 || !is_digits(msg->argv[0]) || strlen(msg->argv[0]) > 9)
		return error(ERR_PROTOCOL,
			     "the agent's HELLO has no protocol version: rebuild the appliance");
	proto = strtoul(msg->argv[0], NULL, 10);
	if (proto != AGENT_PROTO_VERSION)
		return error(ERR_PROTOCOL,
			     "the guest's agent speaks protocol %lu (agent %s) and this fswb "
			     "speaks protocol %d: rebuild the appliance with this fswb",
			     proto, msg->argc > 1 ? msg->argv[1] : "of unknown version",
			     AGENT_PROTO_VERSION);
	if (msg->argc < 4)
		return error(ERR_PROTOCOL, "the agent's HELLO must be '%s': rebuild the appliance",
			     "HELLO <proto> <agent-version> <arch> <kernel-release>");
	hello->proto = (unsigned)proto;
	copy_field(hello->agent_version, sizeof(hello->agent_version), msg->argv[1]);
	copy_field(hello->arch, sizeof(hello->arch), msg->argv[2]);
	copy_field(hello->kernel_release, sizeof(hello->kernel_release), msg->argv[3]);
	return OK;
}

/* Builders. */

static bool
args_ok(const char *args, size_t *count, const char **last)
{
	size_t n = 0;
	const char *word = args;

	if (!*args)
		return false;
	for (const char *p = args;; p++) {
		if (*p == ' ' || *p == '\0') {
			if (p == word)
				return false; /* empty word: leading, trailing or double space */
			n++;
			*last = word;
			if (!*p)
				break;
			word = p + 1;
		} else if (!is_arg_char(*p)) {
			return false;
		}
	}
	*count = n;
	return true;
}

void
agent_frame(struct strbuf *out, const char *type, const char *args, const void *payload, size_t len)
{
	size_t nargs = 0, start = out->len;
	const char *last = NULL;

	if (!type_ok(type, strlen(type)))
		BUG("bad agent frame type '%s'", type);
	if (args && !args_ok(args, &nargs, &last))
		BUG("bad agent frame arguments '%s'", args);
	if (last && is_len_marker(last))
		BUG("agent frame argument '%s' would read as a payload length", last);
	if (nargs + (payload ? 1 : 0) > AGENT_ARGS_MAX)
		BUG("agent frame '%s' has too many arguments", type);
	strbuf_adds(out, type);
	if (args) {
		strbuf_addch(out, ' ');
		strbuf_adds(out, args);
	}
	if (payload)
		strbuf_addf(out, " +%zu", len);
	strbuf_addch(out, '\n');
	if (out->len - start > AGENT_HEADER_MAX)
		BUG("agent frame header '%s' is longer than %d bytes", type, AGENT_HEADER_MAX);
	if (payload)
		strbuf_add(out, payload, len);
}

enum status
agent_frame_file(struct strbuf *out, const char *name, unsigned mode, const void *data, size_t len)
{
	char args[AGENT_NAME_MAX + 16];

	if (!agent_file_name_ok(name))
		return error(ERR_INVALID,
			     "job file name '%s' is not 1 to %d of A-Z a-z 0-9 . _ - + (not "
			     "starting with '.', '-' or '+'): rename it",
			     name, AGENT_NAME_MAX);
	if (mode > 07777)
		return error(ERR_INVALID, "job file '%s': mode %o is not a file mode", name, mode);
	snprintf(args, sizeof(args), "%s %04o", name, mode);
	agent_frame(out, "FILE", args, data ? data : "", len);
	return OK;
}

void
agent_frame_run(struct strbuf *out)
{
	agent_frame(out, "RUN", NULL, NULL, 0);
}

enum status
agent_frame_rerun(struct strbuf *out, const char *test)
{
	if (!test_name_ok(test))
		return error(ERR_INVALID,
			     "cannot rerun '%s': a test name is 1 to %d of A-Z a-z 0-9 . _ - / "
			     "like 'generic/001'",
			     test, AGENT_NAME_MAX);
	agent_frame(out, "RERUN", test, NULL, 0);
	return OK;
}

void
agent_frame_shell(struct strbuf *out)
{
	agent_frame(out, "SHELL", NULL, NULL, 0);
}

void
agent_frame_poweroff(struct strbuf *out)
{
	agent_frame(out, "POWEROFF", NULL, NULL, 0);
}

/* job.env */

static bool
env_name_ok(const char *s, size_t len)
{
	if (len == 0 ||
	    !((s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z') || s[0] == '_'))
		return false;
	for (size_t i = 1; i < len; i++) {
		char c = s[i];

		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      c == '_'))
			return false;
	}
	return true;
}

static void
env_var(struct strbuf *out, const char *name, const char *value)
{
	strbuf_adds(out, name);
	strbuf_addch(out, '=');
	sq_quote(out, value ? value : "");
	strbuf_addch(out, '\n');
}

/* NAME='quoted words', after checking no word is empty. */
static enum status
env_words(struct strbuf *out, const char *name, const char *what, const char *const *words)
{
	struct strbuf w = STRBUF_INIT;

	for (size_t i = 0; words && words[i]; i++)
		if (!*words[i])
			return error(ERR_INVALID, "job: word %zu of the %s is empty", i + 1, what);
	if (words)
		sq_quote_argv(&w, words);
	env_var(out, name, w.buf);
	strbuf_release(&w);
	return OK;
}

enum status
agent_job_env(struct strbuf *out, const struct agent_job *job)
{
	const char *fstests = job->fstests_dir ? job->fstests_dir : AGENT_FSTESTS_DIR;
	const char *jobdir = job->job_dir ? job->job_dir : AGENT_JOB_DIR;
	struct strbuf sb = STRBUF_INIT;
	enum status rc;

	if (fstests[0] != '/')
		return error(ERR_INVALID, "job: the fstests directory '%s' is not an absolute path",
			     fstests);
	if (jobdir[0] != '/')
		return error(ERR_INVALID, "job: the job directory '%s' is not an absolute path",
			     jobdir);
	if (job->config && !agent_file_name_ok(job->config))
		return error(ERR_INVALID, "job: the config file name '%s' is not a plain file name",
			     job->config);
	for (size_t i = 0; job->env && job->env[i]; i++) {
		const char *eq = strchr(job->env[i], '=');

		if (!eq)
			return error(ERR_INVALID,
				     "job: environment setting '%s' has no '=': write NAME=value",
				     job->env[i]);
		if (!env_name_ok(job->env[i], (size_t)(eq - job->env[i])))
			return error(ERR_INVALID,
				     "job: environment setting '%s': the name must be letters, "
				     "digits and '_', not starting with a digit",
				     job->env[i]);
	}

	if (job->nfs_exports) {
		size_t n = 0;

		for (; job->nfs_exports[n]; n++)
			if (n % 2 && job->nfs_exports[n][0] != '/')
				return error(ERR_INVALID,
					     "job: the nfs export '%s' is not an absolute path",
					     job->nfs_exports[n]);
		if (n % 2)
			return error(ERR_INVALID,
				     "job: the nfs exports are not pairs of a device and a "
				     "directory (%zu words)",
				     n);
		if (n &&
		    (!job->nfs_base || !*job->nfs_base ||
		     job->nfs_base[strspn(job->nfs_base, "abcdefghijklmnopqrstuvwxyz0123456789")]))
			return error(ERR_INVALID,
				     "job: the nfs exports need the file system type to mount them "
				     "as (like ext4), not '%s'",
				     job->nfs_base ? job->nfs_base : "");
	}

	strbuf_adds(&sb, "# fswb job, sourced by fswb-agent (see src/agent/agent_proto.h)\n");
	strbuf_addf(&sb, "FSWB_PROTO=%d\n", AGENT_PROTO_VERSION);
	env_var(&sb, "FSWB_JOB_DIR", jobdir);
	env_var(&sb, "FSWB_FSTESTS_DIR", fstests);
	env_var(&sb, "FSWB_FSTYP", job->fstyp);
	env_var(&sb, "FSWB_CONFIG", job->config);
	env_var(&sb, "FSWB_RESULT_BASE", job->result_base);
	env_var(&sb, "FSWB_NFS_BASE", job->nfs_base);
	if ((rc = env_words(&sb, "FSWB_MOUNT_POINTS", "mount points", job->mount_points)) != OK ||
	    (rc = env_words(&sb, "FSWB_MKFS_TEST", "mkfs command", job->mkfs_test)) != OK ||
	    (rc = env_words(&sb, "FSWB_MKFS_SCRATCH", "scratch mkfs command", job->mkfs_scratch)) !=
		    OK ||
	    (rc = env_words(&sb, "FSWB_NFS_EXPORTS", "nfs exports", job->nfs_exports)) != OK ||
	    (rc = env_words(&sb, "FSWB_CHECK_OPTS", "check options", job->check_opts)) != OK ||
	    (rc = env_words(&sb, "FSWB_CHECK_TESTS", "check tests", job->check_tests)) != OK ||
	    (rc = env_words(&sb, "FSWB_CHECK_ENV", "environment", job->env)) != OK) {
		strbuf_release(&sb);
		return rc;
	}
	strbuf_add(out, sb.buf, sb.len);
	strbuf_release(&sb);
	return OK;
}

char *
agent_job_path(const struct agent_job *job, const char *name)
{
	const char *jobdir = job->job_dir ? job->job_dir : AGENT_JOB_DIR;

	return xasprintf("%s/%s", jobdir, name);
}

/* ---- the order of a session's frames ---- */

enum order_state {
	ORD_BOOT,     /* no HELLO yet */
	ORD_GREETED,  /* HELLO came, READY not yet */
	ORD_IDLE,     /* READY came: the agent waits for a command */
	ORD_RUN,      /* RUN or RERUN sent */
	ORD_SHELL,    /* SHELL sent */
	ORD_POWEROFF, /* POWEROFF sent */
	ORD_BYE,      /* BYE came */
};

void
agent_order_init(struct agent_order *o, uint64_t result_max)
{
	memset(o, 0, sizeof(*o));
	o->state = ORD_BOOT;
	o->result_max = result_max;
}

void
agent_order_sent(struct agent_order *o, enum agent_type command)
{
	if (o->state == ORD_BOOT || o->state == ORD_BYE || command == AGENT_FILE)
		return;
	o->result = o->exit = o->err = o->shellready = false;
	switch (command) {
	case AGENT_RUN:
	case AGENT_RERUN:
		o->state = ORD_RUN;
		break;
	case AGENT_SHELL:
		o->state = ORD_SHELL;
		break;
	case AGENT_POWEROFF:
		o->state = ORD_POWEROFF;
		break;
	default:
		/* a command the agent does not know: it skips it and answers READY */
		o->state = ORD_RUN;
		o->err = true;
		break;
	}
}

static enum status
out_of_order(const struct agent_msg *m, const char *where)
{
	return error(ERR_PROTOCOL, "%s came out of order (%s)", agent_type_name(m->type), where);
}

static enum status
order_run(struct agent_order *o, const struct agent_msg *m)
{
	switch (m->type) {
	case AGENT_OUT:
		if (o->result || o->exit || o->err)
			return out_of_order(m, o->err ? "after ERR" : "after RESULT");
		return OK;
	case AGENT_ERR:
		if (o->result || o->exit)
			return out_of_order(m, "after RESULT");
		o->err = true;
		return OK;
	case AGENT_RESULT:
		if (o->result || o->exit || o->err)
			return out_of_order(m, o->result ? "twice for one RUN"
					       : o->exit ? "after EXIT"
							 : "after ERR");
		o->result = true;
		return OK;
	case AGENT_EXIT:
		if (o->exit || !o->result)
			return out_of_order(m, o->exit ? "twice for one RUN" : "before RESULT");
		o->exit = true;
		return OK;
	case AGENT_READY:
		if (!o->exit && !o->err)
			return out_of_order(m, "before the RUN's EXIT");
		o->state = ORD_IDLE;
		return OK;
	default:
		return out_of_order(m, "while check runs");
	}
}

enum status
agent_order_check(struct agent_order *o, const struct agent_msg *m)
{
	if (m->type == AGENT_UNKNOWN || m->type == AGENT_NOISE || m->offset > 0)
		return OK;
	if ((m->type == AGENT_OUT || m->type == AGENT_LOG || m->type == AGENT_ERR) &&
	    m->total > AGENT_CHUNK_MAX)
		return error(ERR_PROTOCOL, "%s of %llu bytes (at most %d a frame)",
			     agent_type_name(m->type), (unsigned long long)m->total,
			     AGENT_CHUNK_MAX);
	if (m->type == AGENT_RESULT && m->total > o->result_max) {
		char got[32], max[32];

		return error(ERR_PROTOCOL,
			     "RESULT of %s: larger than the results may be (%s; --max-results)",
			     format_size(m->total, got, sizeof(got)),
			     format_size(o->result_max, max, sizeof(max)));
	}
	if (o->state == ORD_BYE)
		return out_of_order(m, "after BYE");
	if (m->type == AGENT_LOG || (m->type == AGENT_HB && o->state != ORD_BOOT))
		return OK;
	switch (o->state) {
	case ORD_BOOT:
		if (m->type != AGENT_HELLO)
			return out_of_order(m, "before HELLO");
		o->state = ORD_GREETED;
		return OK;
	case ORD_GREETED:
		if (m->type != AGENT_READY)
			return out_of_order(m, "between HELLO and READY");
		o->state = ORD_IDLE;
		return OK;
	case ORD_IDLE:
		if (m->type != AGENT_ERR && m->type != AGENT_READY)
			return out_of_order(m, "while the agent waits for a command");
		return OK;
	case ORD_RUN:
		return order_run(o, m);
	case ORD_SHELL:
		if (m->type == AGENT_SHELLREADY && !o->shellready && !o->err)
			o->shellready = true;
		else if (m->type == AGENT_ERR && !o->shellready)
			o->err = true;
		else if (m->type == AGENT_READY && (o->shellready || o->err))
			o->state = ORD_IDLE;
		else
			return out_of_order(m, "as the answer to SHELL");
		return OK;
	default: /* ORD_POWEROFF */
		if (m->type == AGENT_BYE)
			o->state = ORD_BYE;
		else if (m->type != AGENT_READY && m->type != AGENT_ERR)
			return out_of_order(m, "after POWEROFF");
		return OK;
	}
}
