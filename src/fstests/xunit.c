/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * result.xml: check's xunit report (or fswb's junit.xml) read into a run
 * record, robust to a report cut short by a run that stopped.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "fstests/catalogue.h"
#include "fstests/results.h"
#include "fstests/results_internal.h"

/* Bytes kept of one <system-err> or message. */
#define XML_TEXT_MAX (4u << 20)

struct xml_attr {
	char *name, *value;
};

struct xml_handler {
	void (*start)(void *ctx, const char *name, const struct xml_attr *attrs, size_t n);
	void (*end)(void *ctx, const char *name);
	void (*text)(void *ctx, const char *text, size_t len);
	void *ctx;
};

static void
utf8_put(struct strbuf *sb, unsigned long cp)
{
	if (cp == 0 || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		strbuf_addch(sb, '?');
	else
		strbuf_add_utf8(sb, cp);
}

/* Decode entities and character references; unknown ones stay as written. */
static void
xml_decode(struct strbuf *sb, const char *s, size_t len)
{
	static const struct {
		const char *name;
		char ch;
	} ents[] = {
		{ "amp", '&' }, { "lt", '<' }, { "gt", '>' }, { "quot", '"' }, { "apos", '\'' }
	};

	for (size_t i = 0; i < len; i++) {
		const char *semi;
		size_t n;

		if (s[i] != '&' || !(semi = memchr(s + i, ';', len - i)) || semi - (s + i) > 12) {
			strbuf_addch(sb, s[i]);
			continue;
		}
		n = (size_t)(semi - (s + i)) - 1; /* between '&' and ';' */
		if (n >= 2 && s[i + 1] == '#') {
			char num[16];
			char *endp;
			bool hex = s[i + 2] == 'x' || s[i + 2] == 'X';
			unsigned long cp;

			memcpy(num, s + i + 2 + hex, n - 1 - hex);
			num[n - 1 - hex] = '\0';
			cp = strtoul(num, &endp, hex ? 16 : 10);
			if (*num && !*endp) {
				utf8_put(sb, cp);
				i += n + 1;
				continue;
			}
		} else {
			size_t k;

			for (k = 0; k < ARRAY_SIZE(ents); k++)
				if (strlen(ents[k].name) == n &&
				    !strncmp(s + i + 1, ents[k].name, n))
					break;
			if (k < ARRAY_SIZE(ents)) {
				strbuf_addch(sb, ents[k].ch);
				i += n + 1;
				continue;
			}
		}
		strbuf_addch(sb, s[i]);
	}
}

static const char *
find(const char *p, const char *end, const char *what)
{
	size_t wl = strlen(what);

	for (; p + wl <= end; p++)
		if (*p == *what && !memcmp(p, what, wl))
			return p;
	return NULL;
}

/* Parse; true when the root element was closed. */
static bool
xml_parse(const char *s, size_t len, const struct xml_handler *h)
{
	const char *p = s, *end = s + len;
	int depth = 0;
	bool root_closed = false;
	struct strbuf sb = STRBUF_INIT;

	while (p < end && !root_closed) {
		if (*p != '<') {
			const char *lt = memchr(p, '<', (size_t)(end - p));
			const char *stop = lt ? lt : end;

			if (depth > 0 && h->text) {
				strbuf_reset(&sb);
				xml_decode(&sb, p, (size_t)(stop - p));
				h->text(h->ctx, sb.buf, sb.len);
			}
			p = stop;
			continue;
		}
		if (end - p >= 4 && !memcmp(p, "<!--", 4)) {
			const char *e = find(p + 4, end, "-->");

			if (!e)
				break;
			p = e + 3;
		} else if (end - p >= 9 && !memcmp(p, "<![CDATA[", 9)) {
			const char *e = find(p + 9, end, "]]>");

			if (!e)
				break;
			if (depth > 0 && h->text)
				h->text(h->ctx, p + 9, (size_t)(e - (p + 9)));
			p = e + 3;
		} else if (end - p >= 2 && (p[1] == '?' || p[1] == '!')) {
			const char *e = find(p + 2, end, p[1] == '?' ? "?>" : ">");

			if (!e)
				break;
			p = e + (p[1] == '?' ? 2 : 1);
		} else if (end - p >= 2 && p[1] == '/') {
			const char *gt = memchr(p, '>', (size_t)(end - p));
			char *name;

			if (!gt)
				break;
			name = xstrndup(p + 2, (size_t)(gt - p - 2));
			str_trim(name);
			if (h->end)
				h->end(h->ctx, str_trim(name));
			free(name);
			if (--depth <= 0)
				root_closed = true;
			p = gt + 1;
		} else {
			/* <name attr="v" ...> or .../> */
			const char *q = p + 1;
			struct xml_attr *attrs = NULL;
			size_t na = 0, aalloc = 0;
			char *name;
			bool empty = false, ok = false;

			while (q < end && !isspace((unsigned char)*q) && *q != '>' && *q != '/')
				q++;
			name = xstrndup(p + 1, (size_t)(q - p - 1));
			for (;;) {
				const char *ns, *ne, *vs;
				char quote;

				while (q < end && isspace((unsigned char)*q))
					q++;
				if (q >= end)
					break;
				if (*q == '>') {
					ok = true;
					q++;
					break;
				}
				if (*q == '/' && q + 1 < end && q[1] == '>') {
					ok = empty = true;
					q += 2;
					break;
				}
				ns = q;
				while (q < end && *q != '=' && !isspace((unsigned char)*q) &&
				       *q != '>')
					q++;
				ne = q;
				while (q < end && isspace((unsigned char)*q))
					q++;
				if (q >= end || *q != '=' || ne == ns)
					break;
				q++;
				while (q < end && isspace((unsigned char)*q))
					q++;
				if (q >= end || (*q != '"' && *q != '\''))
					break;
				quote = *q++;
				vs = q;
				while (q < end && *q != quote)
					q++;
				if (q >= end)
					break;
				ALLOC_GROW(attrs, na + 1, aalloc);
				attrs[na].name = xstrndup(ns, (size_t)(ne - ns));
				strbuf_reset(&sb);
				xml_decode(&sb, vs, (size_t)(q - vs));
				attrs[na].value = xstrdup(sb.buf);
				na++;
				q++;
			}
			if (ok && *name) {
				if (h->start)
					h->start(h->ctx, name, attrs, na);
				if (empty) {
					if (h->end)
						h->end(h->ctx, name);
					if (depth == 0)
						root_closed = true;
				} else {
					depth++;
				}
			}
			for (size_t i = 0; i < na; i++) {
				free(attrs[i].name);
				free(attrs[i].value);
			}
			free(attrs);
			free(name);
			if (!ok)
				break;
			p = q;
		}
	}
	strbuf_release(&sb);
	return root_closed;
}

static const char *
attr_get(const struct xml_attr *a, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(a[i].name, name))
			return a[i].value;
	return NULL;
}

/* Element names without a namespace prefix. */
static const char *
local_name(const char *name)
{
	const char *c = strchr(name, ':');

	return c ? c + 1 : name;
}

enum xtext {
	XT_NONE,
	XT_OUT,
	XT_ERR,
	XT_KLOG,
	XT_MSG, /* text inside <failure> or <skipped> */
};

struct xunit_ctx {
	struct run_record *rec;
	struct xunit_info *info;
	size_t suites;
	/* the suite being read */
	bool in_suite;
	struct strvec props;
	char *classname_section;
	struct test_result *pending; /* tests of the suite so far */
	size_t npending, apending;
	/* the testcase being read */
	bool in_case;
	struct test_result cur;
	enum xtext text;
	struct strbuf err, msg;
	char *bad; /* the first testcase fswb refuses, and why */
};

static void
xunit_start(void *data, const char *qname, const struct xml_attr *a, size_t n)
{
	struct xunit_ctx *x = data;
	const char *name = local_name(qname);

	if (!strcmp(name, "testsuite")) {
		const char *t = attr_get(a, n, "time");

		x->in_suite = true;
		x->suites++;
		strvec_clear(&x->props);
		free(x->classname_section);
		x->classname_section = NULL;
		if (t && !*t)
			x->info->partial = true;
		results_replace(&x->info->start_timestamp, attr_get(a, n, "start_timestamp"));
		results_replace(&x->info->timestamp, attr_get(a, n, "timestamp"));
		results_replace(&x->info->report_timestamp, attr_get(a, n, "report_timestamp"));
		if (attr_get(a, n, "hostname"))
			results_replace(&x->rec->hostname, attr_get(a, n, "hostname"));
		if (!x->rec->start_ms)
			x->rec->start_ms =
				results_parse_iso_time(attr_get(a, n, "start_timestamp"));
		{
			uint64_t r = results_parse_iso_time(attr_get(a, n, "report_timestamp"));

			if (r > x->rec->end_ms)
				x->rec->end_ms = r;
		}
	} else if (!strcmp(name, "property") && x->in_suite && !x->in_case) {
		const char *k = attr_get(a, n, "name"), *v = attr_get(a, n, "value");

		if (k && *k)
			strvec_pushf(&x->props, "%s=%s", k, v ? v : "");
	} else if (!strcmp(name, "testcase") && x->in_suite && !x->in_case) {
		const char *cn = attr_get(a, n, "classname"), *tn = attr_get(a, n, "name");
		const char *t = attr_get(a, n, "time");

		x->in_case = true;
		memset(&x->cur, 0, sizeof(x->cur));
		x->cur.test = xstrdup(tn ? tn : "");
		x->cur.status = TS_PASS;
		x->cur.seconds = t && *t ? strtod(t, NULL) : -1;
		if (!x->bad && !catalogue_test_name_ok(x->cur.test))
			x->bad = xasprintf("testcase %zu: name '%.80s' is not a test name like "
					   "generic/001",
					   x->info->testcases + 1, x->cur.test);
		else if (!x->bad && t && *t && !results_seconds_ok(x->cur.seconds))
			x->bad = xasprintf("testcase %zu (%s): time '%.40s' is not a number of "
					   "seconds from 0 to 10000000",
					   x->info->testcases + 1, x->cur.test, t);
		strbuf_reset(&x->err);
		strbuf_reset(&x->msg);
		if (cn && str_startswith(cn, "xfstests.") && !x->classname_section)
			x->classname_section = xstrdup(cn + 9);
	} else if (x->in_case) {
		if (!strcmp(name, "skipped")) {
			x->cur.status = TS_NOTRUN;
			results_replace(&x->cur.reason, attr_get(a, n, "message"));
			x->text = XT_MSG;
		} else if (!strcmp(name, "failure") || !strcmp(name, "error")) {
			const char *type = attr_get(a, n, "type");

			x->cur.status = type && !strcmp(type, "TestCrash")  ? TS_CRASHED
					: type && !strcmp(type, "TestHang") ? TS_HUNG
									    : TS_FAIL;
			results_replace(&x->cur.reason, attr_get(a, n, "message"));
			x->text = XT_MSG;
		} else if (!strcmp(name, "system-out")) {
			x->text = XT_OUT;
		} else if (!strcmp(name, "system-err")) {
			x->text = XT_ERR;
		} else if (!strcmp(name, "kernel-log")) {
			x->text = XT_KLOG;
		}
	}
}

static void
xunit_text(void *data, const char *text, size_t len)
{
	struct xunit_ctx *x = data;
	/* system-out and kernel-log repeat the .full and .dmesg files: not kept */
	struct strbuf *sb = x->text == XT_ERR ? &x->err : x->text == XT_MSG ? &x->msg : NULL;

	if (!sb || sb->len >= XML_TEXT_MAX)
		return;
	if (len > XML_TEXT_MAX - sb->len)
		len = XML_TEXT_MAX - sb->len;
	strbuf_add(sb, text, len);
}

/* A failure's reasons from check's words. */
static unsigned
reasons_from_words(const char *s)
{
	unsigned r = 0;

	if (!s)
		return 0;
	if (strstr(s, "output mismatch"))
		r |= FAIL_MISMATCH;
	if (strstr(s, "is inconsistent") || strstr(s, "filesystem check failed"))
		r |= FAIL_FSCK;
	if (strstr(s, "something found in dmesg") || strstr(s, "_check_dmesg"))
		r |= FAIL_DMESG;
	if (strstr(s, "exit status"))
		r |= FAIL_EXIT;
	if (strstr(s, "dumped core"))
		r |= FAIL_CORE;
	if (strstr(s, "kmemleak"))
		r |= FAIL_KMEMLEAK;
	if (strstr(s, "no qualified output"))
		r |= FAIL_NO_QUALIFIED;
	if (strstr(s, "no such test"))
		r |= FAIL_NO_SUCH_TEST;
	return r;
}

static char *
trimmed_copy(const struct strbuf *sb)
{
	size_t s = 0, e = sb->len;

	while (s < e && (sb->buf[s] == '\n' || sb->buf[s] == '\r'))
		s++;
	while (e > s && isspace((unsigned char)sb->buf[e - 1]))
		e--;
	return e > s ? xstrndup(sb->buf + s, e - s) : NULL;
}

/*
 * result.xml's failure message in the words the stdout parser gives: check's
 * "- output mismatch (see ...)" and "[dumped core]" without their marks.
 */
static void
failure_words(char *s)
{
	size_t n;

	if (!s)
		return;
	if (str_startswith(s, "- "))
		memmove(s, s + 2, strlen(s + 2) + 1);
	n = strlen(s);
	if (n > 2 && s[0] == '[' && s[n - 1] == ']' && !memchr(s + 1, ']', n - 2)) {
		memmove(s, s + 1, n - 2);
		s[n - 2] = '\0';
	}
}

static void
xunit_end(void *data, const char *qname)
{
	struct xunit_ctx *x = data;
	const char *name = local_name(qname);

	if (!strcmp(name, "testcase") && x->in_case) {
		x->in_case = false;
		x->text = XT_NONE;
		if (!x->cur.reason && x->msg.len)
			x->cur.reason = trimmed_copy(&x->msg);
		if (results_is_failure(x->cur.status)) {
			failure_words(x->cur.reason);
			x->cur.reasons = reasons_from_words(x->cur.reason);
			x->cur.detail = trimmed_copy(&x->err);
		}
		ALLOC_GROW(x->pending, x->npending + 1, x->apending);
		x->pending[x->npending++] = x->cur;
		memset(&x->cur, 0, sizeof(x->cur));
		x->info->testcases++;
	} else if (x->in_case && (!strcmp(name, "system-out") || !strcmp(name, "system-err") ||
				  !strcmp(name, "kernel-log") || !strcmp(name, "failure") ||
				  !strcmp(name, "error") || !strcmp(name, "skipped"))) {
		x->text = XT_NONE;
	} else if (!strcmp(name, "testsuite") && x->in_suite) {
		/* commit the suite */
		const char *section = NULL;
		struct section_result *sec;

		for (size_t i = 0; i < x->props.n; i++)
			if (str_startswith(x->props.v[i], "SECTION="))
				section = x->props.v[i] + 8;
		if (!section && x->classname_section && strcmp(x->classname_section, "global"))
			section = x->classname_section;
		if (section && !strcmp(section, "-no-sections-"))
			section = NULL;
		sec = run_record_section(x->rec, section, NULL);
		for (size_t i = 0; i < x->props.n; i++) {
			const char *p = x->props.v[i];

			if (str_startswith(p, "FSTYP="))
				results_replace(&sec->fstyp, p + 6);
			else if (str_startswith(p, "MKFS_OPTIONS="))
				results_replace(&sec->mkfs_options, p + 13);
			else if (str_startswith(p, "MOUNT_OPTIONS="))
				results_replace(&sec->mount_options, p + 14);
			else if (str_startswith(p, "KERNEL="))
				results_replace(&x->rec->kernel, p + 7);
			else if (str_startswith(p, "FSWB_CONFIG=") && !sec->config)
				sec->config = xstrdup(p + 12);
		}
		strvec_clear(&sec->properties);
		strvec_copy(&sec->properties, &x->props);
		for (size_t i = 0; i < x->npending; i++) {
			struct test_result *p = &x->pending[i];
			struct test_result *t =
				section_add_test(sec, p->test, p->status, p->seconds, p->reasons,
						 p->reason, p->detail, NULL);

			(void)t;
			results_test_release(p);
		}
		x->npending = 0;
		x->in_suite = false;
	}
}

void
xunit_info_release(struct xunit_info *info)
{
	free(info->start_timestamp);
	free(info->timestamp);
	free(info->report_timestamp);
	memset(info, 0, sizeof(*info));
}

enum status
results_read_xunit(const char *text, size_t len, const char *source, struct run_record *rec,
		   struct xunit_info *info)
{
	struct xunit_info local = { 0 };
	struct xunit_ctx x = { .rec = rec, .info = info ? info : &local };
	struct xml_handler h = { xunit_start, xunit_end, xunit_text, &x };

	memset(x.info, 0, sizeof(*x.info));
	strvec_init(&x.props);
	strbuf_init(&x.err);
	strbuf_init(&x.msg);
	x.info->complete = xml_parse(text, len, &h);
	if (x.in_case)
		results_test_release(&x.cur);
	if (x.in_suite) /* truncated: keep the complete testcases */
		xunit_end(&x, "testsuite");
	for (size_t i = 0; i < x.npending; i++)
		results_test_release(&x.pending[i]);
	free(x.pending);
	free(x.classname_section);
	strvec_clear(&x.props);
	strbuf_release(&x.err);
	strbuf_release(&x.msg);
	if (!info)
		xunit_info_release(&local);
	if (x.bad) {
		enum status rc =
			error(ERR_INVALID, "'%s': %s", source ? source : "result.xml", x.bad);

		free(x.bad);
		return rc;
	}
	if (!x.suites)
		return error(ERR_PARSE, "'%s' is not an xunit report: it has no <testsuite>",
			     source ? source : "result.xml");
	return OK;
}
