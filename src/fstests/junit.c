/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * junit.xml: a run record written as an xunit report shaped like check's
 * result.xml, that fstests' doc/xunit.xsd validates (fstests/results.h has
 * what goes where).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/paths.h"
#include "fstests/results.h"
#include "fstests/results_internal.h"

/* Append s as XML text or attribute value: escaped, '?' for what XML cannot hold. */
static void
xml_escape(struct strbuf *sb, const char *s, size_t len, bool attr, bool cdata)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + len;

	while (p < end) {
		unsigned c = *p;
		size_t n = 1;

		if (c >= 0x80) {
			size_t need = utf8_len(p, end);

			if (need) {
				strbuf_add(sb, p, need);
				p += need;
			} else {
				strbuf_addch(sb, '?');
				p++;
			}
			continue;
		}
		if (cdata) {
			if (c == ']' && end - p >= 3 && p[1] == ']' && p[2] == '>') {
				strbuf_adds(sb, "]]]]><![CDATA[>");
				p += 3;
				continue;
			}
			if (c < 0x20 && c != '\n' && c != '\t' && c != '\r')
				strbuf_addch(sb, '?');
			else
				strbuf_addch(sb, (int)c);
			p += n;
			continue;
		}
		switch (c) {
		case '&':
			strbuf_adds(sb, "&amp;");
			break;
		case '<':
			strbuf_adds(sb, "&lt;");
			break;
		case '>':
			strbuf_adds(sb, "&gt;");
			break;
		case '"':
			strbuf_adds(sb, attr ? "&quot;" : "\"");
			break;
		case '\'':
			strbuf_adds(sb, attr ? "&apos;" : "'");
			break;
		case '\n':
			strbuf_adds(sb, attr ? "&#10;" : "\n");
			break;
		case '\t':
			strbuf_adds(sb, attr ? "&#9;" : "\t");
			break;
		case '\r':
			strbuf_adds(sb, "&#13;");
			break;
		default:
			if (c < 0x20 || c == 0x7f)
				strbuf_addch(sb, '?');
			else
				strbuf_addch(sb, (int)c);
		}
		p += n;
	}
}

static void
xml_attr(struct strbuf *sb, const char *name, const char *value)
{
	strbuf_addf(sb, " %s=\"", name);
	xml_escape(sb, value ? value : "", value ? strlen(value) : 0, true, false);
	strbuf_addch(sb, '"');
}

static void
xml_cdata_block(struct strbuf *sb, const char *tag, const char *text, size_t len)
{
	strbuf_addf(sb, "\t\t<%s>\n<![CDATA[\n", tag);
	xml_escape(sb, text, len, false, true);
	if (len && text[len - 1] != '\n')
		strbuf_addch(sb, '\n');
	strbuf_addf(sb, "]]>\n\t\t</%s>\n", tag);
}

/* The end of a file, at most max bytes, in a CDATA block; nothing when absent or empty. */
static void
xml_file_block(struct strbuf *sb, const char *tag, const char *path)
{
	FILE *f;
	struct stat st;
	char *buf;
	size_t n;

	int fd = path ? open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC) : -1;

	if (fd < 0)
		return;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size <= 0 || !(f = fdopen(fd, "rb"))) {
		close(fd);
		return;
	}
	if ((uint64_t)st.st_size > RESULTS_JUNIT_LOG_MAX)
		fseeko(f, st.st_size - (off_t)RESULTS_JUNIT_LOG_MAX, SEEK_SET);
	buf = xmalloc(RESULTS_JUNIT_LOG_MAX);
	n = fread(buf, 1, RESULTS_JUNIT_LOG_MAX, f);
	fclose(f);
	if (n)
		xml_cdata_block(sb, tag, buf, n);
	free(buf);
}

static void
fmt_seconds(char *buf, size_t len, double s)
{
	if (s < 0)
		s = 0;
	if (s == (double)(long long)s)
		snprintf(buf, len, "%lld", (long long)s);
	else
		snprintf(buf, len, "%.3f", s);
}

static int
cmp_prop(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void
junit_properties(struct strbuf *sb, const struct run_record *rec, const struct section_result *s)
{
	struct strvec props = STRVEC_INIT;

	strvec_copy(&props, &s->properties);
	/* what check always reports, when result.xml did not give it */
#define ADD_PROP(key, val)                                                            \
	do {                                                                          \
		bool have_ = false;                                                   \
		for (size_t i_ = 0; i_ < props.n; i_++)                               \
			have_ = have_ || (str_startswith(props.v[i_], key "=") != 0); \
		if (!have_ && (val) && *(val))                                        \
			strvec_pushf(&props, "%s=%s", key, (val));                    \
	} while (0)
	ADD_PROP("SECTION", s->name ? s->name : "-no-sections-");
	ADD_PROP("FSTYP", s->fstyp);
	ADD_PROP("MKFS_OPTIONS", s->mkfs_options);
	ADD_PROP("MOUNT_OPTIONS", s->mount_options);
	ADD_PROP("KERNEL", rec->kernel);
	ADD_PROP("FSWB_CONFIG", s->config);
#undef ADD_PROP
	if (props.n > 1)
		qsort(props.v, props.n, sizeof(*props.v), cmp_prop);
	strbuf_adds(sb, "\t<properties>\n");
	for (size_t i = 0; i < props.n; i++) {
		const char *eq = strchr(props.v[i], '=');
		char *key;

		if (!eq || eq == props.v[i] || !eq[1])
			continue; /* check leaves out empty values */
		key = xstrndup(props.v[i], (size_t)(eq - props.v[i]));
		strbuf_adds(sb, "\t\t<property");
		xml_attr(sb, "name", key);
		xml_attr(sb, "value", eq + 1);
		strbuf_adds(sb, "/>\n");
		free(key);
	}
	strbuf_adds(sb, "\t</properties>\n");
	strvec_clear(&props);
}

static void
junit_failure(struct strbuf *sb, enum test_status status, const char *msg)
{
	strbuf_adds(sb, "\t\t<failure");
	xml_attr(sb, "message", msg);
	xml_attr(sb, "type",
		 status == TS_FAIL	? "TestFail"
		 : status == TS_CRASHED ? "TestCrash"
					: "TestHang");
	strbuf_adds(sb, "/>\n");
}

static void
junit_testcase(struct strbuf *sb, const char *classname, const struct test_result *t)
{
	char secs[32];

	fmt_seconds(secs, sizeof(secs), t->seconds);
	strbuf_adds(sb, "\t<testcase");
	xml_attr(sb, "classname", classname);
	xml_attr(sb, "name", t->test);
	xml_attr(sb, "time", secs);
	strbuf_adds(sb, ">\n");
	if (t->status == TS_NOTRUN) {
		strbuf_adds(sb, "\t\t<skipped");
		if (t->reason)
			xml_attr(sb, "message", t->reason);
		strbuf_adds(sb, "/>\n");
	} else if (results_is_failure(t->status)) {
		char *msg = t->reason ? xstrdup(t->reason)
				      : xasprintf("Test %s failed, reason unknown", t->test);

		junit_failure(sb, t->status, msg);
		free(msg);
		xml_file_block(sb, "system-out", t->full);
		xml_file_block(sb, "kernel-log", t->kmsg ? t->kmsg : t->dmesg);
		if (t->detail && *t->detail)
			xml_cdata_block(sb, "system-err", t->detail, strlen(t->detail));
		else
			xml_file_block(sb, "system-err", t->out_bad);
	}
	strbuf_adds(sb, "\t</testcase>\n");
	for (size_t i = 1; i < t->niterations; i++) {
		const struct test_iteration *it = &t->iterations[i];

		fmt_seconds(secs, sizeof(secs), it->seconds);
		strbuf_adds(sb, "\t<testcase");
		xml_attr(sb, "classname", classname);
		xml_attr(sb, "name", t->test);
		xml_attr(sb, "time", secs);
		if (it->status == TS_PASS) {
			strbuf_adds(sb, "/>\n");
			continue;
		}
		strbuf_adds(sb, ">\n");
		if (results_is_failure(it->status)) {
			char *msg = xasprintf("Test %s failed again (run %zu of %zu)", t->test,
					      i + 1, t->niterations);

			junit_failure(sb, it->status, msg);
			free(msg);
		} else {
			strbuf_adds(sb, "\t\t<skipped message=\"not run\"/>\n");
		}
		strbuf_adds(sb, "\t</testcase>\n");
	}
}

static void
junit_suite(struct strbuf *sb, const struct run_record *rec, const struct section_result *s,
	    bool nested, size_t id, uint64_t now_ms)
{
	static const char ns[] = "https://git.kernel.org/pub/scm/fs/xfs/xfstests-dev.git";
	struct test_counts c = { 0 };
	char classname[300], secs[32], start[80], ts[80], report[80], idbuf[24];

	for (size_t i = 0; i < s->ntests; i++)
		test_counts_add(&c, s->tests[i].status, s->tests[i].seconds);
	snprintf(classname, sizeof(classname), "xfstests.%s", s->name ? s->name : "global");
	fmt_seconds(secs, sizeof(secs), c.seconds);
	results_format_time(rec->start_ms ? rec->start_ms : now_ms, start, sizeof(start), false);
	results_format_time(rec->end_ms ? rec->end_ms : now_ms, ts, sizeof(ts), false);
	results_format_time(now_ms, report, sizeof(report), false);

	strbuf_adds(sb, nested ? "<testsuite" : "<testsuite\n xmlns=\"");
	if (!nested) {
		strbuf_adds(sb, ns);
		strbuf_adds(sb, "\"\n xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\"\n"
				" xsi:schemaLocation=\"");
		strbuf_addf(sb, "%s %s/tree/doc/xunit.xsd\"\n", ns, ns);
	}
	if (nested) {
		snprintf(idbuf, sizeof(idbuf), "%zu", id);
		xml_attr(sb, "package", "xfstests");
		xml_attr(sb, "id", idbuf);
	}
	xml_attr(sb, "name", "xfstests");
	strbuf_addf(sb, " failures=\"%u\" skipped=\"%u\" tests=\"%u\"",
		    c.failed + c.crashed + c.hung, c.notrun, c.ran + c.notrun);
	xml_attr(sb, "time", secs);
	xml_attr(sb, "hostname", rec->hostname && *rec->hostname ? rec->hostname : "localhost");
	xml_attr(sb, "start_timestamp", start);
	xml_attr(sb, "timestamp", ts);
	xml_attr(sb, "report_timestamp", report);
	strbuf_adds(sb, ">\n");
	junit_properties(sb, rec, s);
	for (size_t i = 0; i < s->ntests; i++)
		if (s->tests[i].status != TS_EXPUNGED)
			junit_testcase(sb, classname, &s->tests[i]);
	strbuf_adds(sb, "</testsuite>\n");
}

void
results_junit(const struct run_record *rec, struct strbuf *out)
{
	uint64_t now = (uint64_t)time(NULL) * 1000;
	static const struct section_result empty = { 0 };

	strbuf_adds(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	if (rec->nsections <= 1) {
		junit_suite(out, rec, rec->nsections ? &rec->sections[0] : &empty, false, 0, now);
		return;
	}
	strbuf_adds(out, "<testsuites\n xmlns=\"https://git.kernel.org/pub/scm/fs/xfs/"
			 "xfstests-dev.git\">\n");
	for (size_t i = 0; i < rec->nsections; i++)
		junit_suite(out, rec, &rec->sections[i], true, i, now);
	strbuf_adds(out, "</testsuites>\n");
}

enum status
results_write_junit(const char *path, const struct run_record *rec)
{
	struct strbuf sb = STRBUF_INIT;
	enum status rc;

	results_junit(rec, &sb);
	rc = write_file_atomic(path, sb.buf, sb.len, 0644);
	strbuf_release(&sb);
	return rc;
}
