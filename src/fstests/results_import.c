/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * results import: a run record from a results directory check left
 * (result.xml, result.xml.new, check.log, check.time and each test's files,
 * with or without sections), from one xunit file, or from a file of check's
 * output, every file reached without a symlink and read under a cap.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/paths.h"
#include "fstests/check_parser.h"
#include "fstests/results.h"
#include "fstests/results_internal.h"

static bool
is_dir(const char *p)
{
	return path_is_dir(p);
}

/* The path the user gave is a regular file (a FIFO would block the read). */
static bool
is_regular(const char *p)
{
	struct stat st;

	return !stat(p, &st) && S_ISREG(st.st_mode);
}

/* A regular file, reached without a symlink. */
static bool
has_file(const char *dir, const char *name)
{
	return file_beneath(dir, name);
}

static bool
is_report_dir(const char *dir)
{
	return has_file(dir, "result.xml") || has_file(dir, "check.log") ||
	       has_file(dir, "result.xml.new");
}

/* A failure's reasons from the files check left (and its .full). */
static void
refine_failure(struct test_result *t, const char *report_dir)
{
	char *p;

	if (!results_is_failure(t->status))
		return;
	if (t->out_bad)
		t->reasons |= FAIL_MISMATCH;
	if (t->dmesg)
		t->reasons |= FAIL_DMESG;
	if ((p = results_file_if_there(report_dir, t->test, ".full"))) {
		char *full = NULL;
		size_t len;

		if (read_file(p, RESULTS_LOG_MAX, &full, &len) == OK) {
			const char *m = strstr(full, "_check_");

			for (; m; m = strstr(m + 1, "_check_")) {
				const char *eol = strchr(m, '\n');
				size_t l = eol ? (size_t)(eol - m) : strlen(m);
				char *line = xstrndup(m, l);

				if (strstr(line, "filesystem on") && strstr(line, "inconsistent")) {
					t->reasons |= FAIL_FSCK;
					if (!t->reason || strstr(t->reason, "reason unknown"))
						results_replace(&t->reason, line);
					free(line);
					break;
				}
				free(line);
			}
			free(full);
		} else {
			error_clear();
		}
		free(p);
	}
	if (!t->reasons)
		t->reasons = FAIL_OTHER;
}

/*
 * Read the xunit file dir/name into a fresh record; false when it is not
 * there (or not a regular file) or unreadable.
 */
static bool
read_xml_file(const char *dir, const char *name, struct run_record *rec, struct xunit_info *info)
{
	char *text = NULL, *path = path_join(dir, name);
	size_t len;
	bool ok = false;

	run_record_init(rec);
	memset(info, 0, sizeof(*info));
	if (!has_file(dir, name) ||
	    read_file_beneath(dir, name, RESULTS_XML_MAX, &text, &len) != OK) {
		error_clear();
	} else if (results_read_xunit(text, len, path, rec, info) != OK) {
		error_clear();
		run_record_release(rec);
		xunit_info_release(info);
	} else {
		ok = true;
	}
	free(text);
	free(path);
	return ok;
}

static size_t
record_tests(const struct run_record *r)
{
	size_t n = 0;

	for (size_t i = 0; i < r->nsections; i++)
		n += r->sections[i].ntests;
	return n;
}

/* Import one REPORT_DIR into sec (name given for sectioned layouts). */
static void
import_report_dir(struct run_record *rec, const char *dir, const char *name)
{
	struct run_record xr, nr, *use = NULL;
	struct xunit_info xi, ni, *info = NULL;
	bool have_x = read_xml_file(dir, "result.xml", &xr, &xi);
	bool have_n = read_xml_file(dir, "result.xml.new", &nr, &ni);
	struct check_log log = { 0 };
	struct check_time ct;
	struct check_log_block *blk = NULL;
	struct section_result *sec;
	char *text = NULL;
	size_t len;

	/* result.xml, or result.xml.new when that one is more complete */
	if (have_x)
		use = &xr, info = &xi;
	if (have_n && (!have_x || record_tests(&nr) > record_tests(&xr) ||
		       (record_tests(&nr) == record_tests(&xr) && ni.complete && !ni.partial &&
			(xi.partial || !xi.complete))))
		use = &nr, info = &ni;

	if (read_file_beneath(dir, "check.log", RESULTS_LOG_MAX, &text, &len) == OK) {
		check_log_parse(text, len, &log);
		free(text);
		text = NULL;
		if (log.n)
			blk = &log.blocks[log.n - 1];
	} else {
		error_clear();
	}
	memset(&ct, 0, sizeof(ct));
	strvec_init(&ct.tests);
	if (read_file_beneath(dir, "check.time", RESULTS_LOG_MAX, &text, &len) == OK) {
		check_time_release(&ct);
		check_time_parse(text, len, &ct);
		free(text);
	} else {
		error_clear();
	}

	/* the section, named as the layout or the xml says */
	{
		const char *xname = NULL;

		if (use && use->nsections)
			xname = use->sections[0].name;
		sec = run_record_section(rec, name ? name : xname, NULL);
	}
	if (use) {
		for (size_t s = 0; s < use->nsections; s++) {
			struct section_result *from = &use->sections[s];

			results_replace(&sec->fstyp, from->fstyp);
			results_replace(&sec->mkfs_options, from->mkfs_options);
			results_replace(&sec->mount_options, from->mount_options);
			strvec_clear(&sec->properties);
			strvec_copy(&sec->properties, &from->properties);
			for (size_t i = 0; i < from->ntests; i++) {
				struct test_result *t = &from->tests[i];
				struct test_result *n = section_add_test(
					sec, t->test, t->status, t->seconds, t->reasons, t->reason,
					t->detail, t->hints);

				if (t->reruns)
					n->reruns += t->reruns;
			}
		}
		if (use->kernel && !rec->kernel)
			rec->kernel = xstrdup(use->kernel);
		if (use->hostname && !rec->hostname)
			rec->hostname = xstrdup(use->hostname);
		if (use->start_ms && (!rec->start_ms || use->start_ms < rec->start_ms))
			rec->start_ms = use->start_ms;
		if (use->end_ms > rec->end_ms)
			rec->end_ms = use->end_ms;
	}

	/*
	 * check.log's last entry, when it is this run's: it must list every
	 * test the report has and not be older than the report's start.
	 */
	if (blk && use) {
		bool stale = false;

		for (size_t i = 0; i < sec->ntests && !stale; i++)
			stale = !strvec_contains(&blk->ran, sec->tests[i].test);
		if (blk->date_ms && use->start_ms && blk->date_ms + 1000 < use->start_ms)
			stale = true;
		if (stale)
			blk = NULL;
	}
	if (blk) {
		if (blk->kernel && !rec->kernel)
			rec->kernel = xstrdup(blk->kernel);
		if (blk->date_ms > rec->end_ms)
			rec->end_ms = blk->date_ms;
		if (blk->interrupted)
			sec->interrupted = true;
		for (size_t i = 0; i < blk->ran.n; i++) {
			const char *test = blk->ran.v[i];
			bool last = i + 1 == blk->ran.n;
			bool failed = strvec_contains(&blk->failures, test);
			bool notrun = strvec_contains(&blk->notrun, test);
			struct test_result *t;

			if (section_find_test(sec, test))
				continue;
			if (last && blk->interrupted && !failed && !notrun) {
				results_replace(&sec->stopped_at, test);
				continue;
			}
			t = section_add_test(sec, test,
					     failed   ? TS_FAIL
					     : notrun ? TS_NOTRUN
						      : TS_PASS,
					     -1, 0, NULL, NULL, NULL);
			if (t->status == TS_PASS)
				t->seconds = check_time_get(&ct, test);
		}
	} else if (info && (info->partial || !info->complete)) {
		/* a report written before a test, with nothing to say which */
		sec->interrupted = true;
	}

	section_attach_artifacts(sec, dir);
	for (size_t i = 0; i < sec->ntests; i++)
		refine_failure(&sec->tests[i], dir);

	if (sec->interrupted) {
		rec->interrupted = true;
		if (sec->stopped_at)
			results_replace(&rec->stopped_at, sec->stopped_at);
	}
	if (have_x) {
		run_record_release(&xr);
		xunit_info_release(&xi);
	}
	if (have_n) {
		run_record_release(&nr);
		xunit_info_release(&ni);
	}
	check_log_release(&log);
	check_time_release(&ct);
}

static enum status
import_results_dir(const char *dir, struct run_record *rec)
{
	if (is_report_dir(dir)) {
		/* a run with sections also keeps a global check.log at the top */
		DIR *d = opendir(dir);
		struct strvec subs = STRVEC_INIT;
		struct dirent *de;

		while (d && (de = readdir(d))) {
			char *p;

			if (de->d_name[0] == '.')
				continue;
			p = path_join(dir, de->d_name);
			if (dir_beneath(dir, de->d_name) &&
			    (has_file(p, "result.xml") || has_file(p, "result.xml.new") ||
			     has_file(p, "check.log")))
				strvec_push(&subs, de->d_name);
			free(p);
		}
		if (d)
			closedir(d);
		if (!subs.n) {
			import_report_dir(rec, dir, NULL);
			strvec_clear(&subs);
			return OK;
		}
		strvec_clear(&subs);
	}
	{
		DIR *d = opendir(dir);
		struct strvec subs = STRVEC_INIT;
		struct dirent *de;

		if (!d)
			return error(ERR_IO, "cannot read '%s': %s", dir, strerror(errno));
		while ((de = readdir(d))) {
			char *p;

			if (de->d_name[0] == '.')
				continue;
			p = path_join(dir, de->d_name);
			if (dir_beneath(dir, de->d_name) && is_report_dir(p))
				strvec_push(&subs, de->d_name);
			free(p);
		}
		closedir(d);
		strvec_sort(&subs);
		if (!subs.n) {
			strvec_clear(&subs);
			return error(ERR_NOTFOUND,
				     "'%s' holds no fstests results: no result.xml or check.log "
				     "in it or in a section directory below it; give check's "
				     "results directory or a file of its output",
				     dir);
		}
		for (size_t i = 0; i < subs.n; i++) {
			char *p = path_join(dir, subs.v[i]);

			import_report_dir(rec, p, subs.v[i]);
			free(p);
		}
		strvec_clear(&subs);
	}
	return OK;
}

static enum status
import_stdout(const char *path, struct run_record *out)
{
	struct event_bus bus = EVENT_BUS_INIT;
	struct results_writer w;
	struct check_parser *p;
	const char *cur;
	char *text = NULL, *dir, *slash, *results;
	size_t len;
	enum status rc = read_file(path, RESULTS_STDOUT_MAX, &text, &len);

	if (rc != OK)
		return rc;
	results_writer_init(&w, NULL);
	event_bus_add(&bus, results_writer_listener(&w));
	p = check_parser_new(&bus, NULL);
	check_parser_feed(p, text, len);
	check_parser_finish(p);
	free(text);

	cur = check_parser_current_test(p, NULL);
	if (!w.rec.nsections)
		run_record_section(&w.rec, NULL, NULL);
	if (cur) {
		struct section_result *sec = &w.rec.sections[w.rec.nsections - 1];

		results_replace(&sec->stopped_at, cur);
		results_replace(&w.rec.stopped_at, cur);
		sec->interrupted = true;
	}
	if (cur || check_parser_interrupted(p) || !check_parser_summaries(p))
		w.rec.interrupted = true;
	if (check_parser_interrupted(p))
		w.rec.sections[w.rec.nsections - 1].interrupted = true;
	check_parser_free(p);
	event_bus_release(&bus);

	/* artifacts from DIR/results beside the file, when it is there */
	dir = xstrdup(path);
	slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	results = slash ? path_join(dir, "results") : xstrdup("results");
	if (dir_beneath(slash ? dir : ".", "results")) {
		for (size_t i = 0; i < w.rec.nsections; i++) {
			struct section_result *sec = &w.rec.sections[i];
			char *rd = sec->name ? path_join(results, sec->name) : xstrdup(results);

			section_attach_artifacts(sec, rd);
			free(rd);
		}
	}
	free(results);
	free(dir);

	w.rec.finished = true;
	run_record_recount(&w.rec);
	*out = w.rec;
	run_record_init(&w.rec);
	results_writer_release(&w);
	return OK;
}

enum status
results_import(const char *path, struct run_record *out)
{
	struct run_record rec;
	enum status rc;

	run_record_init(&rec);
	if (is_dir(path)) {
		char *sub = path_join(path, "results");

		if (!is_report_dir(path) && dir_beneath(path, "results"))
			rc = import_results_dir(sub, &rec);
		else
			rc = import_results_dir(path, &rec);
		free(sub);
		if (rc == OK) {
			rec.finished = true;
			run_record_recount(&rec);
		}
	} else if (path_exists(path) && !is_regular(path)) {
		rc = error(ERR_INVALID,
			   "'%s' is not a regular file; give check's results directory or "
			   "a file of its output",
			   path);
	} else if (path_exists(path)) {
		char head[16] = { 0 };
		FILE *f = fopen(path, "rb");
		size_t n = f ? fread(head, 1, sizeof(head) - 1, f) : 0;

		if (f)
			fclose(f);
		(void)n;
		if (str_startswith(head, "<?xml") || str_startswith(head, "<testsuite")) {
			char *text = NULL;
			size_t len;

			rc = read_file(path, RESULTS_XML_MAX, &text, &len);
			if (rc == OK)
				rc = results_read_xunit(text, len, path, &rec, NULL);
			free(text);
			rec.finished = true;
			run_record_recount(&rec);
		} else {
			rc = import_stdout(path, &rec);
		}
	} else {
		rc = error(ERR_NOTFOUND,
			   "'%s' does not exist; give check's results directory or "
			   "a file of its output",
			   path);
	}
	if (rc == OK)
		*out = rec;
	else
		run_record_release(&rec);
	return rc;
}
