/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "fstests/report.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fstests/compare.h"
#include "fstests/history.h"
#include "fstests/kmsg.h"

void
text_plain(struct strbuf *out, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + len;
	size_t col = 0;

	while (p < end) {
		size_t n;

		if (*p == '\n') {
			strbuf_addch(out, '\n');
			col = 0;
			p++;
		} else if (*p == '\t') {
			do
				strbuf_addch(out, ' ');
			while (++col % 8);
			p++;
		} else if (*p < 0x20 || *p == 0x7f) {
			strbuf_addch(out, '?');
			col++;
			p++;
		} else if (*p < 0x80) {
			strbuf_addch(out, *p++);
			col++;
		} else if ((n = utf8_len(p, end)) == 0 || (p[0] == 0xc2 && p[1] < 0xa0)) {
			/* not UTF-8, or a C1 control (U+0080..U+009F) */
			strbuf_addch(out, '?');
			col++;
			p += n ? n : 1;
		} else {
			strbuf_add(out, p, n);
			col++;
			p += n;
		}
	}
}

static char *
config_slug(const char *config)
{
	char *slug = xstrdup(config && *config ? config : "check");

	for (char *p = slug; *p; p++)
		if (*p == '/')
			*p = '-';
	return slug;
}

char *
read_regular(const char *path, size_t max, size_t *len)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct strbuf sb = STRBUF_INIT;
	struct stat st;
	char buf[65536];
	ssize_t n = 0;

	if (len)
		*len = 0;
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return NULL;
	}
	while (sb.len < max && (n = read(fd, buf, sizeof(buf))) > 0)
		strbuf_add(&sb, buf, (size_t)n);
	close(fd);
	if (n < 0) {
		strbuf_release(&sb);
		return NULL;
	}
	if (sb.len > max)
		strbuf_setlen(&sb, max);
	if (len)
		*len = sb.len;
	return strbuf_detach(&sb);
}

char *
run_dir_file(const char *run_dir, const char *config, const char *name)
{
	char *slug = config_slug(config);
	char *path = xasprintf("%s/results/%s/%s", run_dir, slug, name);
	size_t len;
	char *text = read_regular(path, REPORT_FILE_MAX + 1, &len);

	if (text && len > REPORT_FILE_MAX) {
		struct strbuf sb = STRBUF_INIT;

		strbuf_add(&sb, text, REPORT_FILE_MAX);
		strbuf_adds(&sb, "\n[cut: the file is longer]\n");
		free(text);
		text = strbuf_detach(&sb);
	}
	free(slug);
	free(path);
	return text;
}

/* Skip a "[  12.345678] " stamp. */
static const char *
skip_stamp(const char *s, size_t *len)
{
	const char *end = s + *len, *p = s;

	if (p < end && *p == '[') {
		const char *close = memchr(p, ']', (size_t)(end - p));

		if (close && strspn(p + 1, " 0123456789.") == (size_t)(close - p - 1)) {
			p = close + 1;
			if (p < end && *p == ' ')
				p++;
		}
	}
	*len = (size_t)(end - p);
	return p;
}

void
klog_first_bad(const char *log, size_t max_lines, struct strbuf *out)
{
	size_t taken = 0;
	bool found = false;

	for (const char *s = log; *s && taken <= max_lines;) {
		size_t n = strcspn(s, "\n"), len = n;
		const char *text = skip_stamp(s, &len);

		if (!found && (kmsg_classify(s, n) & KMSG_BAD))
			found = true;
		if (found) {
			if (taken == max_lines) {
				strbuf_adds(out, "...\n");
				break;
			}
			strbuf_add(out, text, len);
			strbuf_addch(out, '\n');
			taken++;
		}
		s += n + (s[n] == '\n');
	}
}

/* Append text with every line indented, at most max_lines of it. */
static void
add_block(struct strbuf *out, const char *indent, const char *text, size_t max_lines)
{
	size_t lines = 0;

	for (const char *s = text; *s; lines++) {
		size_t n = strcspn(s, "\n");

		if (lines == max_lines) {
			strbuf_addf(out, "%s[cut: the rest is in the run directory]\n", indent);
			break;
		}
		strbuf_addf(out, "%s%.*s\n", n ? indent : "", (int)n, s);
		s += n + (s[n] == '\n');
	}
}

/*
 * Fold every line of text (plain already) to REPORT_WIDTH columns: the
 * rest goes on lines indented two more than the line itself.
 */
static void
fold(struct strbuf *out, const char *text)
{
	for (const char *s = text; *s;) {
		size_t n = strcspn(s, "\n"), col = 0, start = 0, indent = strspn(s, " ");

		if (indent > REPORT_WIDTH / 2)
			indent = 0;
		for (size_t i = 0; i < n; i++) {
			if (((unsigned char)s[i] & 0xc0) == 0x80)
				continue; /* a UTF-8 continuation byte takes no column */
			if (col == REPORT_WIDTH) {
				strbuf_add(out, s + start, i - start);
				strbuf_addf(out, "\n%*s", (int)indent + 2, "");
				start = i;
				col = indent + 2;
			}
			col++;
		}
		strbuf_add(out, s + start, n - start);
		strbuf_addch(out, '\n');
		s += n + (s[n] == '\n');
	}
}

/*
 * A command line, indented by 4, broken at spaces into lines that end
 * with " \\" so that it can be pasted into a shell as it is.
 */
static void
add_command(struct strbuf *raw, const char *cmd)
{
	size_t col = 4, width = REPORT_WIDTH - 2;

	strbuf_adds(raw, "    ");
	for (const char *s = cmd; *s;) {
		size_t word = strcspn(s, " ");

		if (col > 4 && col + 1 + word > width) {
			strbuf_adds(raw, " \\\n      ");
			col = 6;
		} else if (col > 4) {
			strbuf_addch(raw, ' ');
			col++;
		}
		strbuf_add(raw, s, word);
		col += word;
		s += word;
		s += strspn(s, " ");
	}
	strbuf_addch(raw, '\n');
}

char *
report_flaky_words(const struct report_input *in, const char *config, const char *test)
{
	const struct flaky_entry *e = in->flaky ? flaky_find(in->flaky, config, test) : NULL;

	return e ? xasprintf("flaky: failed %u of its last %u runs", e->failed,
			     e->passed + e->failed)
		 : NULL;
}

char *
report_fswb_command(const struct report_input *in, const char *config, const char *test)
{
	if (in->fswb_cmd)
		return xstrdup(in->fswb_cmd(in->data, config, test));
	return xasprintf("fswb run -c %s %s", *config ? config : "CONFIG", test);
}

static const struct section_result *
report_section(const struct report_input *in, const struct section_result *sec, size_t *nfail)
{
	*nfail = 0;
	for (size_t t = 0; t < sec->ntests; t++) {
		const struct test_result *tr = &sec->tests[t];

		if (in->test ? !strcmp(tr->test, in->test) : test_status_failed(tr->status))
			(*nfail)++;
	}
	return *nfail ? sec : NULL;
}

const char *
report_config_name(const struct section_result *sec)
{
	return *section_config_name(sec) ? section_config_name(sec) : "check";
}

/* The configuration's options, and local.config's settings when it was kept. */
static void
add_config(const struct report_input *in, const struct section_result *sec, struct strbuf *raw)
{
	char *lc = in->run_dir ? run_dir_file(in->run_dir, section_config_name(sec), "local.config")
			       : NULL;

	strbuf_addf(raw, "Configuration %s:\n", report_config_name(sec));
	strbuf_addf(raw, "  FSTYP=%s\n", sec->fstyp ? sec->fstyp : "?");
	strbuf_addf(raw, "  MKFS_OPTIONS=%s\n", sec->mkfs_options ? sec->mkfs_options : "");
	strbuf_addf(raw, "  MOUNT_OPTIONS=%s\n", sec->mount_options ? sec->mount_options : "");
	if (lc) {
		strbuf_adds(raw, "  local.config, as check read it in the test machine:\n");
		for (const char *s = lc; *s;) {
			size_t n = strcspn(s, "\n");

			if (n && (*s != '#' || !strncmp(s, "# TEST_DEV was made", 19)))
				strbuf_addf(raw, "    %.*s\n", (int)n, s);
			s += n + (s[n] == '\n');
		}
	}
	strbuf_addch(raw, '\n');
	free(lc);
}

static void
add_failure(const struct report_input *in, const struct section_result *sec,
	    const struct test_result *tr, struct strbuf *raw)
{
	const char *cfg = section_config_name(sec);
	char *name = xasprintf("%s.kmsg", tr->test), *klog = NULL, *fallback, *cmd, *flaky;
	struct strbuf bad = STRBUF_INIT;
	char secs[32];

	strbuf_addf(raw, "%s on %s: %s", tr->test, *cfg ? cfg : "check",
		    test_status_str(tr->status));
	if (tr->seconds >= 0)
		strbuf_addf(raw, " after %s", format_duration(tr->seconds, secs, sizeof(secs)));
	strbuf_addch(raw, '\n');
	if (tr->reason)
		strbuf_addf(raw, "  %s\n", tr->reason);
	if (tr->niterations > 1) {
		unsigned passed, failed;

		test_result_run_counts(tr, &passed, &failed);
		strbuf_addf(raw, "  It ran %zu times: %u passed, %u failed.\n", tr->niterations,
			    passed, failed);
	}
	if ((flaky = report_flaky_words(in, cfg, tr->test))) {
		strbuf_addf(raw, "  It is %s.\n", flaky);
		free(flaky);
	}
	if (tr->detail && *tr->detail) {
		strbuf_adds(raw, "  What check printed:\n");
		add_block(raw, "    ", tr->detail, REPORT_DIFF_LINES);
	}
	if (in->run_dir) {
		klog = run_dir_file(in->run_dir, cfg, name);
		if (!klog) {
			fallback = xasprintf("%s.dmesg", tr->test);
			klog = run_dir_file(in->run_dir, cfg, fallback);
			free(fallback);
		}
	}
	if (klog)
		klog_first_bad(klog, REPORT_KLOG_LINES, &bad);
	if (bad.len) {
		strbuf_adds(raw, "  The kernel log from its first warning:\n");
		add_block(raw, "    ", bad.buf, SIZE_MAX);
	}
	if (tr->hints) {
		strbuf_adds(raw, "  check's hints:\n");
		add_block(raw, "    ", tr->hints, REPORT_DIFF_LINES);
	}
	strbuf_adds(raw, "  Reproduce it with fswb:\n");
	cmd = report_fswb_command(in, cfg, tr->test);
	add_command(raw, cmd);
	free(cmd);
	strbuf_adds(raw, "  Reproduce it with check by hand, in an fstests tree whose\n"
			 "  local.config has the settings above (with your own TEST_DEV and\n"
			 "  SCRATCH_DEV):\n");
	strbuf_addf(raw, "    ./check %s\n\n", tr->test);
	strbuf_release(&bad);
	free(klog);
	free(name);
}

enum status
report_text(const struct report_input *in, struct strbuf *out)
{
	const struct run_record *rec = in->rec;
	struct strbuf raw = STRBUF_INIT, clean = STRBUF_INIT;
	size_t total = 0;

	for (size_t s = 0; s < rec->nsections; s++) {
		size_t n;

		report_section(in, &rec->sections[s], &n);
		total += n;
	}
	if (in->test && !total)
		return error(ERR_NOTFOUND, "run %s has no test '%s'", rec->id ? rec->id : "?",
			     in->test);
	strbuf_addf(&raw, "fstests results of run %s\n\n", rec->id ? rec->id : "(imported)");
	strbuf_addf(&raw, "Kernel:   %s%s%s%s\n", rec->kernel ? rec->kernel : "unknown",
		    in->kernel ? " (" : "", in->kernel ? in->kernel : "", in->kernel ? ")" : "");
	strbuf_addf(&raw, "fstests:  %s\n", in->fstests ? in->fstests : "unknown");
	for (size_t s = 0; s < rec->nsections; s++) {
		const struct section_result *sec = &rec->sections[s];
		const struct test_counts *k = &sec->counts;
		unsigned fails = k->failed + k->crashed + k->hung;

		strbuf_addf(&raw, "%-9s %s: %u tests, %u failed, %u not run, %.0f seconds%s\n",
			    s ? "" : "Results:", report_config_name(sec),
			    k->passed + fails + k->notrun, fails, k->notrun, k->seconds,
			    sec->interrupted ? " (interrupted)" : "");
	}
	if (rec->error)
		strbuf_addf(&raw, "Error:    %s\n", rec->error);
	strbuf_addch(&raw, '\n');
	if (!total)
		strbuf_adds(&raw, "No test failed.\n");
	for (size_t s = 0; s < rec->nsections; s++) {
		const struct section_result *sec = &rec->sections[s];
		size_t n;

		if (!report_section(in, sec, &n))
			continue;
		add_config(in, sec, &raw);
		for (size_t t = 0; t < sec->ntests; t++) {
			const struct test_result *tr = &sec->tests[t];

			if (in->test ? !strcmp(tr->test, in->test) : test_status_failed(tr->status))
				add_failure(in, sec, tr, &raw);
		}
	}
	/* no blank line at the end */
	while (raw.len > 1 && raw.buf[raw.len - 1] == '\n' && raw.buf[raw.len - 2] == '\n')
		strbuf_setlen(&raw, raw.len - 1);
	text_plain(&clean, raw.buf, raw.len);
	fold(out, clean.buf);
	strbuf_release(&clean);
	strbuf_release(&raw);
	return OK;
}
