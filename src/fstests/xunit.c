/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * result.xml: check's xunit report (or fswb's junit.xml) read into a run
 * record, robust to a report cut short by a run that stopped.
 *
 * libxml2 parses, as a push parser fed in chunks with SAX2 callbacks and no
 * tree: the report is untrusted (it comes from a test machine or an
 * imported directory), so
 *	- the caller caps its size (RESULTS_XML_MAX) before it is read;
 *	- there is no network (XML_PARSE_NONET), no entity substitution
 *	  (no XML_PARSE_NOENT), no DTD loading (no XML_PARSE_DTDLOAD) and no
 *	  lifted limits (no XML_PARSE_HUGE: attribute values and names keep
 *	  libxml2's caps);
 *	- a DOCTYPE is refused before its internal subset is read (an xunit
 *	  report has none, and entity declarations are what billion-laughs and
 *	  external-entity documents need), and elements nested deeper than
 *	  XUNIT_DEPTH_MAX are refused;
 *	- libxml2 prints nothing: its first error is kept and put in fswb's
 *	  message, with the file and the line.
 * Only complete elements count: a document cut anywhere gives the testcases
 * that were closed, and an error that comes only when the input ends is a
 * cut, not a refusal. Text after the root element is not read.
 */
#include <ctype.h>
#include <libxml/SAX2.h>
#include <libxml/parser.h>
#include <libxml/xmlerror.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "fstests/catalogue.h"
#include "fstests/results.h"
#include "fstests/results_internal.h"

/* Bytes kept of one <system-err> or message. */
#define XML_TEXT_MAX (4u << 20)
/* An xunit report nests 5 deep (testsuites testsuite testcase failure ...). */
#define XUNIT_DEPTH_MAX 64
/* Bytes given to libxml2 at a time. */
#define XUNIT_CHUNK (64u << 10)
/* The longest piece of a CDATA section libxml2 is given (see feed_document). */
#define XUNIT_CDATA_MAX (1u << 20)

/* libxml2 2.12 made the structured error handler's error const. */
#if LIBXML_VERSION >= 21200
#define XUNIT_ERROR const xmlError
#else
#define XUNIT_ERROR xmlError
#endif

/* An attribute without a namespace prefix, as the callbacks below see it. */
struct xml_attr {
	char *name, *value;
};

static const char *
attr_get(const struct xml_attr *a, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(a[i].name, name))
			return a[i].value;
	return NULL;
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
	/* the XML parser */
	xmlParserCtxtPtr parser;
	size_t line0; /* lines skipped before the document */
	int depth;    /* elements open */
	/*
	 * The input is all given: libxml2 now reads what it held back as
	 * incomplete (and reports the start of a tag that has no end), so
	 * nothing more is taken, and an error now is a cut.
	 */
	bool ending;
	bool stopped;	 /* the root element closed, or the document was refused */
	char *refused;	 /* why fswb stopped reading it (a DOCTYPE, deep nesting) */
	char *xml_error; /* the first error that stopped libxml2, cleaned */
	int xml_error_line;
	bool xml_error_at_end; /* it came when the input ended: the report is cut */
};

static void
xunit_start(struct xunit_ctx *x, const char *name, const struct xml_attr *a, size_t n)
{
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
xunit_text(struct xunit_ctx *x, const char *text, size_t len)
{ /* system-out and kernel-log repeat the .full and .dmesg files: not kept */
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
xunit_end(struct xunit_ctx *x, const char *name)
{
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

/* ---- libxml2's callbacks ---- */

static int
parser_line(const struct xunit_ctx *x)
{
	return (x->parser ? xmlSAX2GetLineNumber(x->parser) : 0) + (int)x->line0;
}

/* Stop reading: the root element closed, or the document is refused. */
static void
stop(struct xunit_ctx *x, const char *refused)
{
	if (refused && !x->refused)
		x->refused = xasprintf("line %d: %s", parser_line(x), refused);
	x->stopped = true;
	xmlStopParser(x->parser);
}

static void
sax_doctype(void *data, const xmlChar *name, const xmlChar *external_id, const xmlChar *system_id)
{
	stop(data, "a DOCTYPE is not allowed in an xunit report (fswb reads no DTD and no "
		   "entity declarations)");
}

/*
 * An attribute's value as SAX2 gives it. Without entity substitution
 * libxml2 hands a '&' of the value (written "&amp;" or "&#38;") over as
 * "&#38;", for a tree builder to parse again; no other '&' can reach here
 * (a DOCTYPE, where entities would be declared, is refused, and an
 * undeclared entity is an error), so every "&#38;" is one '&'.
 */
static char *
attr_value(const char *v, size_t len)
{
	struct strbuf sb = STRBUF_INIT;
	const char *end = v + len, *amp;

	while ((amp = memchr(v, '&', (size_t)(end - v)))) {
		strbuf_add(&sb, v, (size_t)(amp - v) + 1);
		v = amp + 1;
		if (end - v >= 4 && !memcmp(v, "#38;", 4))
			v += 4;
	}
	strbuf_add(&sb, v, (size_t)(end - v));
	return strbuf_detach(&sb);
}

static void
sax_start(void *data, const xmlChar *localname, const xmlChar *prefix, const xmlChar *uri,
	  int nb_namespaces, const xmlChar **namespaces, int nb_attributes, int nb_defaulted,
	  const xmlChar **attributes)
{
	struct xunit_ctx *x = data;
	struct xml_attr *a = xcalloc((size_t)nb_attributes + 1, sizeof(*a));
	size_t n = 0;

	if (x->stopped || x->ending)
		goto out;
	if (++x->depth > XUNIT_DEPTH_MAX) {
		char *why = xasprintf("elements are nested more than %d deep; an xunit report "
				      "nests 5",
				      XUNIT_DEPTH_MAX);

		stop(x, why);
		free(why);
		goto out;
	}
	/* localname, prefix, URI, value, end of value: five per attribute */
	for (int i = 0; i < nb_attributes; i++) {
		const xmlChar **at = attributes + 5 * i;

		if (at[1])
			continue;
		a[n].name = xstrdup((const char *)at[0]);
		a[n].value = attr_value((const char *)at[3], (size_t)(at[4] - at[3]));
		n++;
	}
	xunit_start(x, (const char *)localname, a, n);
out:
	for (size_t i = 0; i < n; i++) {
		free(a[i].name);
		free(a[i].value);
	}
	free(a);
}

static void
sax_end(void *data, const xmlChar *localname, const xmlChar *prefix, const xmlChar *uri)
{
	struct xunit_ctx *x = data;

	if (x->stopped || x->ending)
		return;
	xunit_end(x, (const char *)localname);
	if (--x->depth == 0) {
		x->info->complete = true;
		stop(x, NULL);
	}
}

static void
sax_text(void *data, const xmlChar *text, int len)
{
	struct xunit_ctx *x = data;

	if (!x->stopped && !x->ending && len > 0)
		xunit_text(x, (const char *)text, (size_t)len);
}

/* libxml2's words, on one line, without control characters, not too long. */
static char *
clean_message(const char *msg)
{
	struct strbuf sb = STRBUF_INIT;
	size_t n = msg ? strcspn(msg, "\n") : 0;
	char *s;

	if (n > 200)
		n = 200;
	for (size_t i = 0; i < n; i++)
		strbuf_addch(&sb, iscntrl((unsigned char)msg[i]) ? '?' : msg[i]);
	s = utf8_clean(sb.buf);
	strbuf_release(&sb);
	str_trim(s);
	if (!*s) {
		free(s);
		s = xstrdup("not well-formed XML");
	}
	return s;
}

/* libxml2 stopped at one of its limits (10 MB in one piece, 50000 in a name). */
static bool
too_large(const char *msg)
{
	static const char *const words[] = { "huge", "too long", "too big", "too large",
					     "excessive" };

	for (size_t i = 0; i < ARRAY_SIZE(words); i++)
		if (strcasestr(msg, words[i]))
			return true;
	return false;
}

/* The first error that stops the parser is the one that says why. */
static void
sax_error(void *data, XUNIT_ERROR *e)
{
	struct xunit_ctx *x = data;

	if (!e || e->level < XML_ERR_FATAL || x->xml_error || x->stopped)
		return;
	x->xml_error = clean_message(e->message);
	/* an error raised without the parser's context has no line: where it is now */
	x->xml_error_line = e->line > 0 ? e->line + (int)x->line0 : parser_line(x);
	x->xml_error_at_end = x->ending;
}

/* Give libxml2 the next bytes, a chunk at a time, until it stops. */
static void
feed(struct xunit_ctx *x, const char *p, size_t len)
{
	while (len && !x->stopped && !x->xml_error) {
		size_t n = len < XUNIT_CHUNK ? len : XUNIT_CHUNK;

		xmlParseChunk(x->parser, p, (int)n, 0);
		p += n;
		len -= n;
	}
}

static const char *
find(const char *p, const char *end, const char *what)
{
	return memmem(p, (size_t)(end - p), what, strlen(what));
}

/* A CDATA section's text from p, and its end: in pieces; returns what follows. */
static const char *
feed_cdata(struct xunit_ctx *x, const char *p, const char *end)
{
	while (p < end && !x->stopped && !x->xml_error) {
		size_t room = (size_t)(end - p);
		const char *close =
			find(p, room > XUNIT_CDATA_MAX + 2 ? p + XUNIT_CDATA_MAX + 2 : end, "]]>");
		const char *cut;

		if (close || room <= XUNIT_CDATA_MAX) {
			const char *next = close ? close + 3 : end;

			feed(x, p, (size_t)(next - p));
			return next;
		}
		/* not in the middle of a UTF-8 character */
		cut = p + XUNIT_CDATA_MAX;
		for (int i = 0; i < 3 && ((unsigned char)*cut & 0xc0) == 0x80; i++)
			cut--;
		feed(x, p, (size_t)(cut - p));
		feed(x, "]]><![CDATA[", 12);
		p = cut;
	}
	return end;
}

/*
 * Feed the document, with every CDATA section longer than XUNIT_CDATA_MAX
 * cut in pieces: check writes a test's whole .full in one section, and
 * libxml2 refuses a section over 10 MB without XML_PARSE_HUGE. A cut is
 * "]]><![CDATA[" between two characters, which leaves the text as it was.
 * Comments and processing instructions are skipped whole, so that what
 * they hold is not taken for a section; a '<' cannot be in an attribute
 * value, so nothing else can start one.
 */
static void
feed_document(struct xunit_ctx *x, const char *p, size_t len)
{
	static const char cdata[] = "<![CDATA[";
	const size_t cl = sizeof(cdata) - 1;
	const char *end = p + len;

	while (p < end && !x->stopped && !x->xml_error) {
		const char *lt = memchr(p, '<', (size_t)(end - p)), *e, *next;

		if (!lt) {
			next = end;
		} else if (end - lt >= 4 && !memcmp(lt, "<!--", 4)) {
			e = find(lt + 4, end, "-->");
			next = e ? e + 3 : end;
		} else if (end - lt >= 2 && lt[1] == '?') {
			e = find(lt + 2, end, "?>");
			next = e ? e + 2 : end;
		} else if ((size_t)(end - lt) >= cl && !memcmp(lt, cdata, cl)) {
			feed(x, p, (size_t)(lt + cl - p));
			p = feed_cdata(x, lt + cl, end);
			continue;
		} else {
			next = lt + 1;
		}
		feed(x, p, (size_t)(next - p));
		p = next;
	}
}

/* What libxml2 would print to stderr (a failed encoding conversion): nothing. */
static void
silent(void *ctx, const char *msg, ...)
{
}

/* Parse; the callbacks fill x. */
static void
xunit_parse(struct xunit_ctx *x, const char *text, size_t len)
{
	xmlSAXHandler sax;
	xmlGenericErrorFunc generic;
	xmlStructuredErrorFunc structured;
	void *generic_ctx, *structured_ctx;

	/* white space before the declaration is not XML's, and was always taken */
	while (len && isspace((unsigned char)*text)) {
		x->line0 += *text == '\n';
		text++;
		len--;
	}
	memset(&sax, 0, sizeof(sax));
	sax.initialized = XML_SAX2_MAGIC;
	sax.internalSubset = sax_doctype;
	sax.startElementNs = sax_start;
	sax.endElementNs = sax_end;
	sax.characters = sax_text;
	sax.cdataBlock = sax_text;
	sax.serror = sax_error;

	xmlInitParser();
	/*
	 * The few errors libxml2 raises without the parser's context (an
	 * encoding the document declares failing to convert) go to this
	 * thread's handlers: ours while it parses, the caller's again after.
	 */
	generic = xmlGenericError;
	generic_ctx = xmlGenericErrorContext;
	structured = xmlStructuredError;
	structured_ctx = xmlStructuredErrorContext;
	xmlSetGenericErrorFunc(NULL, silent);
	xmlSetStructuredErrorFunc(x, sax_error);
	x->parser = xmlCreatePushParserCtxt(&sax, x, NULL, 0, NULL);
	if (x->parser) {
		xmlCtxtUseOptions(x->parser,
				  XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
		feed_document(x, text, len);
		x->ending = true;
		if (!x->stopped && !x->xml_error)
			xmlParseChunk(x->parser, NULL, 0, 1);
		xmlFreeParserCtxt(x->parser);
		x->parser = NULL;
	} else { /* only when out of memory */
		x->refused = xstrdup("libxml2 cannot start a parser (out of memory)");
	}
	xmlSetGenericErrorFunc(generic_ctx, generic);
	xmlSetStructuredErrorFunc(structured_ctx, structured);
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
	const char *src = source ? source : "result.xml";
	enum status rc = OK;

	memset(x.info, 0, sizeof(*x.info));
	strvec_init(&x.props);
	strbuf_init(&x.err);
	strbuf_init(&x.msg);
	if (len > RESULTS_XML_MAX)
		x.refused = xasprintf("it is larger than %u MiB; an xunit report is not",
				      RESULTS_XML_MAX >> 20);
	else
		xunit_parse(&x, text, len);
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
	if (x.refused)
		rc = error(ERR_INVALID, "'%s': %s", src, x.refused);
	else if (x.bad)
		rc = error(ERR_INVALID, "'%s': %s", src, x.bad);
	else if (!x.suites && x.xml_error)
		rc = error(ERR_PARSE,
			   "'%s' is not an xunit report: it has no <testsuite> (line %d: %s)", src,
			   x.xml_error_line, x.xml_error);
	else if (!x.suites)
		rc = error(ERR_PARSE, "'%s' is not an xunit report: it has no <testsuite>", src);
	else if (x.xml_error && !x.xml_error_at_end && too_large(x.xml_error))
		rc = error(
			ERR_INVALID,
			"'%s': line %d: refused: an attribute, tag, name or comment in it is too "
			"large (libxml2: %s)",
			src, x.xml_error_line, x.xml_error);
	else if (x.xml_error && !x.xml_error_at_end)
		rc = error(ERR_PARSE, "'%s': line %d: not well-formed XML: %s", src,
			   x.xml_error_line, x.xml_error);
	free(x.refused);
	free(x.bad);
	free(x.xml_error);
	return rc;
}
