/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Results: import of the real fstests fixtures both ways against their
 * truth.tsv, the fallbacks (no result.xml, a truncated one, a stale
 * check.log), a results directory with sections, the xunit reader and
 * writer (validated with xmllint against fstests' doc/xunit.xsd when
 * FSWB_FSTESTS_SRC names a tree), run.json and the listener.
 */
#include "testlib.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/event.h"
#include "core/loop.h"
#include "core/paths.h"
#include "core/spawn.h"
#include "core/util.h"
#include "fstests/results.h"

static const char *const cases[] = {
	"A-plain-pass-notrun", "B-mismatch",	"D-exit-status",	   "E-fsck",
	"G-exclude",	       "H-interrupted", "H2-interrupted-mid-test", "J-loop",
};

/* A path below a fixture case (free() it). */
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
	char *p = test_fixture("A-plain-pass-notrun/truth.tsv");
	bool ok = path_exists(p);

	if (!ok)
		fprintf(stderr, "# SKIP the fstests fixtures are not there (%s)\n", p);
	free(p);
	return ok;
}

/* Run argv; its exit code (stdout and stderr into out when not NULL). */
static int
run(const char *const *argv, struct strbuf *out)
{
	struct loop *loop = loop_new();
	struct strbuf buf = STRBUF_INIT;
	struct child_exit ex;

	assert_int_equal(spawn_run(loop, argv, NULL, true, 4 << 20, &buf, &ex), OK);
	loop_free(loop);
	if (out)
		strbuf_add(out, buf.buf, buf.len);
	strbuf_release(&buf);
	return ex.exited ? ex.code : 128 + ex.signo;
}

/* A scratch copy of a fixture's results/ directory. */
static char *
copy_results(const char *fixture_case, const char *name)
{
	char *src = case_path(fixture_case, "results");
	char *dst = test_tmp(name);
	const char *argv[] = { "cp", "-r", src, dst, NULL };
	const char *chmod[] = { "chmod", "-R", "u+w", dst, NULL };

	assert_int_equal(run(argv, NULL), 0);
	assert_int_equal(run(chmod, NULL), 0);
	free(src);
	return dst;
}

static void
rm(const char *dir, const char *name)
{
	char *p = path_join(dir, name);

	assert_int_equal(unlink(p), 0);
	free(p);
}

static struct test_result *
find(struct run_record *rec, const char *test)
{
	for (size_t i = 0; i < rec->nsections; i++) {
		struct test_result *t = section_find_test(&rec->sections[i], test);

		if (t)
			return t;
	}
	return NULL;
}

static size_t
ntests(const struct run_record *rec)
{
	size_t n = 0;

	for (size_t i = 0; i < rec->nsections; i++)
		n += rec->sections[i].ntests;
	return n;
}

/*
 * rec against truth.tsv: every line's test with its status, and nothing
 * else; expunged lines skipped when the record cannot know them.
 */
static void
expect_truth(const char *fixture_case, struct run_record *rec, bool expunged_known, const char *how)
{
	char *path = case_path(fixture_case, "truth.tsv");
	char *text = test_read(path);
	size_t want = 0;

	for (char *save = NULL, *line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *tab = strchr(line, '\t');
		struct test_result *t;

		assert_non_null(tab);
		*tab = '\0';
		if (!strcmp(tab + 1, "expunged") && !expunged_known) {
			if (find(rec, line))
				fail_msg("%s (%s): '%s' should not be known", fixture_case, how,
					 line);
			continue;
		}
		want++;
		t = find(rec, line);
		if (!t)
			fail_msg("%s (%s): '%s' missing", fixture_case, how, line);
		if (strcmp(test_status_str(t->status), tab + 1))
			fail_msg("%s (%s): '%s' is %s, want %s", fixture_case, how, line,
				 test_status_str(t->status), tab + 1);
	}
	if (ntests(rec) != want)
		fail_msg("%s (%s): %zu tests, want %zu", fixture_case, how, ntests(rec), want);
	free(text);
	free(path);
}

static void
import_case(const char *fixture_case, bool from_stdout, struct run_record *rec)
{
	char *p = case_path(fixture_case, from_stdout ? "stdout.txt" : "results");

	if (results_import(p, rec) != OK)
		fail_msg("import of '%s': %s", p, error_msg());
	free(p);
}

static void
test_import_fixtures(void **state)
{
	(void)state;
	if (!have_fixtures())
		skip();
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		for (int way = 0; way < 2; way++) {
			struct run_record rec;
			bool out = way == 1;
			const char *how = out ? "stdout.txt" : "results/";
			bool h = !strcmp(cases[i], "H-interrupted");
			bool h2 = !strcmp(cases[i], "H2-interrupted-mid-test");

			import_case(cases[i], out, &rec);
			expect_truth(cases[i], &rec, out, how);
			assert_true(rec.finished);
			assert_int_equal(rec.nsections, 1);
			assert_null(rec.sections[0].name);
			if (h || h2) {
				assert_true(rec.interrupted);
				assert_non_null(rec.stopped_at);
				assert_string_equal(rec.stopped_at,
						    h ? "generic/014" : "generic/029");
			} else {
				assert_false(rec.interrupted);
				assert_null(rec.stopped_at);
			}
			if (!out) {
				assert_string_equal(rec.kernel, "6.1.0-57-cloud-amd64");
				assert_string_equal(rec.hostname, "fstests-guest");
				assert_true(rec.start_ms > 0 && rec.end_ms >= rec.start_ms);
				assert_string_equal(rec.sections[0].fstyp, "ext4");
			}
			run_record_release(&rec);
		}
	}
}

/* A failure's TEST.hints in a results directory; a pass keeps none. */
static void
test_attach_hints(void **state)
{
	struct run_record rec;
	struct section_result *s;
	char *dir = test_tmp("hints"), *gen = path_join(dir, "generic"), *f;

	(void)state;
	assert_int_equal(mkdir_p(gen, 0755), OK);
	f = path_join(gen, "362.hints");
	test_write(f, "HINT: You _MAY_ be missing kernel fix:\n      939b656bc8ab btrfs: fix\n\n");
	free(f);
	f = path_join(gen, "005.hints");
	test_write(f, "HINT: You _MAY_ be missing kernel fix:\n      0123456789ab ext4: x\n\n");
	free(f);
	run_record_init(&rec);
	s = run_record_section(&rec, NULL, NULL);
	section_add_test(s, "generic/362", TS_FAIL, 3, FAIL_MISMATCH, "output mismatch", NULL,
			 NULL);
	section_add_test(s, "generic/005", TS_PASS, 3, 0, NULL, NULL, NULL);
	section_attach_artifacts(s, dir);
	assert_string_equal(
		find(&rec, "generic/362")->hints,
		"HINT: You _MAY_ be missing kernel fix:\n      939b656bc8ab btrfs: fix");
	assert_null(find(&rec, "generic/005")->hints);
	run_record_release(&rec);
	free(gen);
	free(dir);
}

/* What each case says beyond statuses: seconds, reasons, reruns, artifacts. */
static void
test_import_details(void **state)
{
	(void)state;
	if (!have_fixtures())
		skip();
	for (int way = 0; way < 2; way++) {
		struct run_record rec;
		struct test_result *t;

		import_case("A-plain-pass-notrun", way, &rec);
		t = find(&rec, "generic/026");
		assert_string_equal(t->reason, "ext4 does not define maximum ACL count");
		t = find(&rec, "generic/455");
		assert_string_equal(t->reason, "This test requires a valid $LOGWRITES_DEV");
		assert_true(find(&rec, "generic/029")->seconds == 6);
		assert_true(find(&rec, "generic/031")->seconds == 7);
		assert_int_equal(rec.counts.passed, 3);
		assert_int_equal(rec.counts.notrun, 2);
		assert_non_null(find(&rec, "generic/035")->full);
		run_record_release(&rec);

		import_case("B-mismatch", way, &rec);
		t = find(&rec, "generic/002");
		assert_true(t->reasons & FAIL_MISMATCH);
		/* in the stdout parser's words either way, without check's "- " */
		assert_true(str_startswith(t->reason, "output mismatch (see "));
		assert_non_null(t->out_bad);
		assert_true(str_endswith(t->out_bad, "results/generic/002.out.bad"));
		assert_non_null(strstr(t->detail, "fixgen: injected line"));
		assert_int_equal(rec.counts.failed, 1);
		run_record_release(&rec);

		import_case("D-exit-status", way, &rec);
		t = find(&rec, "generic/006");
		assert_true(t->reasons & FAIL_MISMATCH);
		if (way) /* only stdout shows the exit status */
			assert_true(t->reasons & FAIL_EXIT);
		run_record_release(&rec);

		import_case("E-fsck", way, &rec);
		t = find(&rec, "generic/015");
		assert_true(t->reasons & FAIL_FSCK);
		assert_non_null(strstr(t->reason, "filesystem on /dev/vdc is inconsistent"));
		run_record_release(&rec);

		import_case("J-loop", way, &rec);
		t = find(&rec, "generic/002");
		assert_int_equal(t->status, TS_FAIL);
		assert_int_equal(t->reruns, 2);
		assert_int_equal(rec.counts.failed, 1);
		assert_int_equal(rec.counts.passed, 1);
		run_record_release(&rec);
	}
}

/* Without result.xml (or with a cut one, or a stale check.log). */
static void
test_import_fallbacks(void **state)
{
	struct run_record rec;
	char *dir, *xml, *text;
	struct test_result *t;

	(void)state;
	if (!have_fixtures())
		skip();

	/* A without result.xml: check.log, .notrun files and check.time. */
	dir = copy_results("A-plain-pass-notrun", "A-noxml");
	rm(dir, "result.xml");
	assert_int_equal(results_import(dir, &rec), OK);
	expect_truth("A-plain-pass-notrun", &rec, false, "check.log");
	assert_string_equal(find(&rec, "generic/026")->reason,
			    "ext4 does not define maximum ACL count");
	assert_true(find(&rec, "generic/031")->seconds == 7);
	assert_string_equal(rec.kernel, "6.1.0-57-cloud-amd64");
	assert_false(rec.interrupted);
	run_record_release(&rec);

	/* ... and with result.xml cut in the middle of the third testcase. */
	xml = test_fixture("A-plain-pass-notrun/results/result.xml");
	text = test_read(xml);
	free(xml);
	xml = path_join(dir, "result.xml");
	{
		char *cut = strstr(text, "name=\"generic/031\"");

		assert_non_null(cut);
		cut[10] = '\0';
		test_write(xml, text);
	}
	assert_int_equal(results_import(dir, &rec), OK);
	expect_truth("A-plain-pass-notrun", &rec, false, "cut result.xml");
	assert_true(find(&rec, "generic/029")->seconds == 6); /* from the xml */
	run_record_release(&rec);
	free(xml);
	free(text);
	free(dir);

	/* B without result.xml: the failure from check.log, mismatch from .out.bad. */
	dir = copy_results("B-mismatch", "B-noxml");
	rm(dir, "result.xml");
	assert_int_equal(results_import(dir, &rec), OK);
	expect_truth("B-mismatch", &rec, false, "check.log");
	t = find(&rec, "generic/002");
	assert_true(t->reasons & FAIL_MISMATCH);
	run_record_release(&rec);
	free(dir);

	/* E without result.xml: fsck found in the test's .full. */
	dir = copy_results("E-fsck", "E-noxml");
	rm(dir, "result.xml");
	assert_int_equal(results_import(dir, &rec), OK);
	expect_truth("E-fsck", &rec, false, "check.log");
	assert_true(find(&rec, "generic/015")->reasons & FAIL_FSCK);
	run_record_release(&rec);
	free(dir);

	/* H2 with neither result.xml nor result.xml.new. */
	dir = copy_results("H2-interrupted-mid-test", "H2-noxml");
	rm(dir, "result.xml");
	rm(dir, "result.xml.new");
	assert_int_equal(results_import(dir, &rec), OK);
	expect_truth("H2-interrupted-mid-test", &rec, false, "check.log");
	assert_true(rec.interrupted);
	assert_string_equal(rec.stopped_at, "generic/029");
	assert_true(find(&rec, "generic/014")->seconds == 5);
	run_record_release(&rec);
	free(dir);

	/* H2 with only result.xml.new (the trap's report). */
	dir = copy_results("H2-interrupted-mid-test", "H2-new");
	rm(dir, "result.xml");
	assert_int_equal(results_import(dir, &rec), OK);
	expect_truth("H2-interrupted-mid-test", &rec, false, "result.xml.new");
	assert_string_equal(rec.stopped_at, "generic/029");
	run_record_release(&rec);
	free(dir);

	/* A stale check.log (another run's) is not believed. */
	dir = copy_results("B-mismatch", "B-stale");
	{
		char *a = test_fixture("A-plain-pass-notrun/results/check.log");
		char *alog = test_read(a);
		char *log = path_join(dir, "check.log");

		test_write(log, alog);
		free(a);
		free(alog);
		free(log);
	}
	assert_int_equal(results_import(dir, &rec), OK);
	expect_truth("B-mismatch", &rec, false, "stale check.log");
	run_record_release(&rec);
	free(dir);

	/* The case directory itself (results/ below it) works too. */
	dir = test_fixture("G-exclude");
	assert_int_equal(results_import(dir, &rec), OK);
	expect_truth("G-exclude", &rec, false, "case dir");
	run_record_release(&rec);
	free(dir);

	/* Not results at all. */
	dir = test_tmp("empty");
	assert_int_equal(mkdir_p(dir, 0755), OK);
	assert_int_equal(results_import(dir, &rec), ERR_NOTFOUND);
	assert_non_null(strstr(error_msg(), "holds no fstests results"));
	assert_int_equal(results_import("/nonexistent/results", &rec), ERR_NOTFOUND);
	free(dir);
}

static void
test_import_sections(void **state)
{
	char *dir = test_path("tests/fixtures/results/sections/results");
	struct run_record rec;
	struct section_result *a, *b;
	struct test_result *t;

	(void)state;
	assert_int_equal(results_import(dir, &rec), OK);
	assert_int_equal(rec.nsections, 2);
	a = &rec.sections[0];
	b = &rec.sections[1];
	assert_string_equal(a->name, "ext4_4k");
	assert_string_equal(b->name, "xfs_1k");
	assert_int_equal(a->ntests, 3);
	assert_int_equal(b->ntests, 3);
	assert_string_equal(a->fstyp, "ext4");
	assert_string_equal(a->mkfs_options, "-b 4096");
	assert_string_equal(rec.hostname, "sections-host");
	assert_string_equal(rec.kernel, "6.6.0-test");

	assert_int_equal(section_find_test(a, "generic/001")->status, TS_PASS);
	t = section_find_test(a, "generic/002");
	assert_int_equal(t->status, TS_FAIL);
	/* entities and character references, decoded */
	assert_string_equal(t->reason, "output mismatch & <x> \"q\" 'a' caf\xc3\xa9 \xe2\x98\xba");
	/* CDATA, with check's split of "]]>" joined again */
	assert_non_null(strstr(t->detail, "+a line with ]]> in it & <raw>"));
	assert_true(t->reasons & FAIL_MISMATCH);
	assert_non_null(t->out_bad);
	t = section_find_test(a, "generic/003");
	assert_int_equal(t->status, TS_NOTRUN);
	assert_string_equal(t->reason, "fio utility required, skipped this test");
	assert_false(a->interrupted);

	assert_int_equal(section_find_test(b, "generic/001")->status, TS_PASS);
	assert_true(section_find_test(b, "generic/001")->seconds == 2);
	t = section_find_test(b, "generic/002");
	assert_int_equal(t->status, TS_FAIL);
	assert_true(t->reasons & FAIL_MISMATCH);
	assert_non_null(t->full);
	t = section_find_test(b, "generic/004");
	assert_int_equal(t->status, TS_NOTRUN);
	assert_string_equal(t->reason, "xfs_io fiemap support is missing");
	assert_null(section_find_test(b, "generic/005"));
	assert_true(b->interrupted);
	assert_string_equal(b->stopped_at, "generic/005");
	assert_true(rec.interrupted);
	assert_string_equal(rec.stopped_at, "generic/005");
	assert_int_equal(rec.counts.passed, 2);
	assert_int_equal(rec.counts.failed, 2);
	assert_int_equal(rec.counts.notrun, 2);
	run_record_release(&rec);
	free(dir);
}

static void
test_read_xunit(void **state)
{
	struct run_record rec;
	struct xunit_info info;
	const char *doc = "<?xml version='1.0'?><testsuites><testsuite name='x' time='1'>"
			  "<properties><property name='SECTION' value='s1'/></properties>"
			  "<testcase classname='xfstests.s1' name='generic/001' time='1.5'/>"
			  "<testcase classname='xfstests.s1' name='generic/002' time='2'>"
			  "<failure message='crash' type='TestCrash'/></testcase>"
			  "</testsuite><testsuite name='x' time=''>"
			  "<testcase classname='xfstests.s2' name='generic/003' time='1'>"
			  "<skipped>text &amp; more</skipped></testcase></testsuite></testsuites>";

	(void)state;
	run_record_init(&rec);
	assert_int_equal(results_read_xunit(doc, strlen(doc), "doc", &rec, &info), OK);
	assert_true(info.complete);
	assert_true(info.partial);
	assert_int_equal(info.testcases, 3);
	assert_int_equal(rec.nsections, 2);
	assert_string_equal(rec.sections[0].name, "s1");
	assert_string_equal(rec.sections[1].name, "s2");
	assert_true(rec.sections[0].tests[0].seconds == 1.5);
	assert_int_equal(rec.sections[0].tests[1].status, TS_CRASHED);
	assert_int_equal(rec.sections[1].tests[0].status, TS_NOTRUN);
	assert_string_equal(rec.sections[1].tests[0].reason, "text & more");
	xunit_info_release(&info);
	run_record_release(&rec);

	/* cut anywhere: never more than the complete testcases, never a crash */
	for (size_t cut = 0; cut < strlen(doc); cut++) {
		run_record_init(&rec);
		if (results_read_xunit(doc, cut, "doc", &rec, &info) == OK) {
			assert_true(info.testcases <= 3);
			assert_int_equal(ntests(&rec), info.testcases);
			assert_false(info.complete);
		}
		xunit_info_release(&info);
		run_record_release(&rec);
	}
	run_record_init(&rec);
	assert_int_equal(results_read_xunit("not xml at all", 14, "junk.xml", &rec, NULL),
			 ERR_PARSE);
	assert_non_null(strstr(error_msg(), "'junk.xml' is not an xunit report"));
	run_record_release(&rec);
}

/* A refusal of doc: its status, and the message names the file and says why. */
static void
expect_refused(const char *doc, size_t len, enum status want, const char *words)
{
	struct run_record rec;

	run_record_init(&rec);
	assert_int_equal(results_read_xunit(doc, len, "evil.xml", &rec, NULL), want);
	if (!strstr(error_msg(), words))
		fail_msg("'%s' does not say '%s'", error_msg(), words);
	run_record_release(&rec);
	error_clear();
}

/* Hostile XML: each one refused at once, with the file and the line, nothing read. */
static void
test_read_xunit_hostile(void **state)
{
	struct strbuf doc = STRBUF_INIT;
	char *secret = test_tmp("secret"), *xxe;

	(void)state;
	/* billion laughs: refused at the DOCTYPE, before one entity is declared */
	strbuf_adds(&doc, "<?xml version='1.0'?>\n<!DOCTYPE lolz [\n<!ENTITY lol 'lol'>\n");
	for (int i = 2; i <= 9; i++) {
		strbuf_addf(&doc, "<!ENTITY lol%d '", i);
		for (int k = 0; k < 10; k++)
			strbuf_addf(&doc, i == 2 ? "&lol;" : "&lol%d;", i - 1);
		strbuf_adds(&doc, "'>\n");
	}
	strbuf_adds(&doc, "]>\n<testsuite name='x' time='1'><testcase classname='xfstests.global' "
			  "name='generic/001' time='1'><failure message='&lol9;'/></testcase>"
			  "</testsuite>\n");
	expect_refused(doc.buf, doc.len, ERR_INVALID,
		       "'evil.xml': line 2: a DOCTYPE is not allowed in an xunit report");

	/* an external entity naming a host file: refused, the file never read */
	test_write(secret, "HOST-SECRET\n");
	xxe = xasprintf("<?xml version='1.0'?>\n<!DOCTYPE t [ <!ENTITY xxe SYSTEM 'file://%s'> ]>\n"
			"<testsuite name='x' time='1'><testcase classname='xfstests.global' "
			"name='generic/001' time='1'><failure message='&xxe;'>&xxe;</failure>"
			"</testcase></testsuite>\n",
			secret);
	expect_refused(xxe, strlen(xxe), ERR_INVALID, "'evil.xml': line 2: a DOCTYPE");
	free(xxe);
	/* ... and without a DOCTYPE an entity is not declared: not well-formed */
	xxe = "<testsuite name='x' time='1'>\n<testcase classname='xfstests.global' "
	      "name='generic/001' time='1'><failure message='&xxe;'/></testcase></testsuite>";
	expect_refused(xxe, strlen(xxe), ERR_PARSE,
		       "'evil.xml': line 2: not well-formed XML: Entity 'xxe' not defined");

	/* nesting without end: refused at the 65th level, whatever follows */
	strbuf_reset(&doc);
	strbuf_adds(&doc, "<?xml version='1.0'?>\n<testsuite name='x' time='1'>\n");
	for (int i = 0; i < 100000; i++)
		strbuf_adds(&doc, "<a>");
	expect_refused(doc.buf, doc.len, ERR_INVALID,
		       "'evil.xml': line 3: elements are nested more than 64 deep");

	/* an attribute larger than libxml2 takes (10 MB) */
	strbuf_reset(&doc);
	strbuf_adds(&doc, "<?xml version='1.0'?>\n<testsuite name='x' time='1'>\n"
			  "<testcase classname='xfstests.global' name='generic/001' time='1'>"
			  "<failure message='");
	for (int i = 0; i < 12 << 10; i++)
		strbuf_addf(&doc, "%01023d\n", 0);
	strbuf_adds(&doc, "'/></testcase></testsuite>\n");
	expect_refused(doc.buf, doc.len, ERR_INVALID,
		       "'evil.xml': line 3: refused: an attribute, tag, name or comment in it is "
		       "too large");

	/* a document over the cap is refused before it is read */
	expect_refused("<", (size_t)1 << 30, ERR_INVALID, "'evil.xml': it is larger than 256 MiB");

	/* a tag that does not close in the middle of the report */
	xxe = "<testsuite name='x' time='1'>\n<testcase classname='xfstests.global' "
	      "name='generic/001' time='1'>\n</testsuite>\n<testcase name='generic/002'/>";
	expect_refused(xxe, strlen(xxe), ERR_PARSE,
		       "'evil.xml': line 3: not well-formed XML: Opening and ending tag mismatch");

	/* an encoding that fails to convert: refused, and libxml2 prints nothing */
	{
		char *errfile = test_tmp("stderr"), *printed;
		int fd = open(errfile, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		int saved = dup(2);

		assert_true(fd >= 0 && saved >= 0);
		xxe = "<?xml version='1.0' encoding='UTF-7'?>\n<testsuite name='x' time='1'>\n"
		      "\xc1\xc1\xc1\xc1</testsuite>\n";
		fflush(stderr);
		dup2(fd, 2);
		expect_refused(xxe, strlen(xxe), ERR_PARSE, "'evil.xml'");
		fflush(stderr);
		dup2(saved, 2);
		close(saved);
		close(fd);
		printed = test_read(errfile);
		assert_string_equal(printed, "");
		free(printed);
		free(errfile);
	}
	strbuf_release(&doc);
	free(secret);
}

/* What libxml2 hands over as the reader needs it. */
static void
test_read_xunit_xml(void **state)
{
	struct run_record rec;
	struct xunit_info info;
	struct strbuf doc = STRBUF_INIT, err = STRBUF_INIT;
	const struct test_result *t;

	(void)state;
	/* '&' in attributes (libxml2 gives "&#38;"), references, CDATA, comments */
	strbuf_adds(&doc, "\n  <?xml version='1.0' encoding='UTF-8'?>\n<!-- <![CDATA[ -->\n"
			  "<testsuite xmlns='urn:x' name='x' time='1'><properties>"
			  "<property name='SECTION' value='a&amp;b&#38;c&amp;#38;d&lt;&#x263a;'/>"
			  "</properties><testcase classname='xfstests.global' name='generic/001' "
			  "time='1'><failure message='- output mismatch &amp; more'/><system-err>"
			  "<![CDATA[one ]]]]><![CDATA[> two]]> &amp; three</system-err></testcase>"
			  "<?pi <testcase name='generic/009'/> ?>");
	/*
	 * A .full of 12 MB in one CDATA section, as check writes it (libxml2
	 * takes 10 MB in one), and a diff of 6 MB, whose pieces of 1 MB fall
	 * in the middle of an 'é' (17 bytes a line: 1 MB is 16 lines and 16
	 * bytes).
	 */
	for (int i = 0; i < 370000; i++)
		strbuf_addf(&err, "%015d\xc3\xa9", i);
	assert_int_equal((1 << 20) % 17, 16);
	strbuf_adds(&doc, "<testcase classname='xfstests.global' name='generic/002' time='2'>"
			  "<failure message='x'/><system-out><![CDATA[");
	for (int i = 0; i < 12 << 10; i++)
		strbuf_addf(&doc, "%01023d\n", i);
	strbuf_adds(&doc, "]]></system-out><system-err><![CDATA[");
	strbuf_add(&doc, err.buf, err.len);
	strbuf_adds(&doc, "]]></system-err></testcase></testsuite>\n<junk after the end");

	run_record_init(&rec);
	assert_int_equal(results_read_xunit(doc.buf, doc.len, "doc", &rec, &info), OK);
	assert_true(info.complete);
	assert_int_equal(info.testcases, 2);
	assert_int_equal(rec.nsections, 1);
	assert_string_equal(rec.sections[0].name, "a&b&c&#38;d<\xe2\x98\xba");
	t = &rec.sections[0].tests[0];
	assert_string_equal(t->test, "generic/001");
	assert_string_equal(t->reason, "output mismatch & more");
	assert_string_equal(t->detail, "one ]]> two & three");
	t = &rec.sections[0].tests[1];
	assert_string_equal(t->test, "generic/002");
	/* the diff as it was, up to the 4 MB that are kept */
	assert_int_equal(strlen(t->detail), 4u << 20);
	assert_memory_equal(t->detail, err.buf, 4u << 20);
	xunit_info_release(&info);
	run_record_release(&rec);

	/* cut inside a start tag: the testcase that did not start is not taken */
	strbuf_reset(&doc);
	strbuf_adds(&doc, "<testsuite name='x' time='1'><testcase classname='xfstests.global' "
			  "name='generic/001' time='1'/><testcase classname='xfst");
	run_record_init(&rec);
	assert_int_equal(results_read_xunit(doc.buf, doc.len, "doc", &rec, &info), OK);
	assert_false(info.complete);
	assert_int_equal(info.testcases, 1);
	assert_int_equal(ntests(&rec), 1);
	xunit_info_release(&info);
	run_record_release(&rec);
	strbuf_release(&doc);
	strbuf_release(&err);
}

static void
test_check_log_time(void **state)
{
	const char *log = "\nKernel version: 6.1.0\nThu Dec  3 07:53:01 UTC 2026\n"
			  "Ran: a/001 a/002\nPassed all 2 tests\n\n"
			  "Kernel version: 6.2.0\nFri Dec  4 08:00:00 UTC 2026\n"
			  "Ran: a/001 a/002 a/003\nInterrupted!\nNot run: a/002\n"
			  "Failures: a/001\nFailed 1 of 3 tests\n";
	struct check_log cl;
	struct check_time ct;
	const char *times = "a/001 5\na/002 17\ngarbage\na/001 6\n";

	(void)state;
	check_log_parse(log, strlen(log), &cl);
	assert_int_equal(cl.n, 2);
	assert_string_equal(cl.blocks[0].kernel, "6.1.0");
	assert_true(cl.blocks[0].passed_all);
	assert_int_equal(cl.blocks[0].total, 2);
	assert_int_equal(cl.blocks[0].date_ms, 1796284381000ull);
	assert_true(cl.blocks[1].interrupted);
	assert_int_equal(cl.blocks[1].ran.n, 3);
	assert_string_equal(cl.blocks[1].notrun.v[0], "a/002");
	assert_string_equal(cl.blocks[1].failures.v[0], "a/001");
	assert_int_equal(cl.blocks[1].failed, 1);
	assert_int_equal(cl.blocks[1].total, 3);
	check_log_release(&cl);

	check_time_parse(times, strlen(times), &ct);
	assert_int_equal(ct.tests.n, 2);
	assert_true(check_time_get(&ct, "a/001") == 6);
	assert_true(check_time_get(&ct, "a/002") == 17);
	assert_true(check_time_get(&ct, "a/003") < 0);
	check_time_release(&ct);
}

static const char *
xsd(void)
{
	static char path[4096];
	const char *src = getenv("FSWB_FSTESTS_SRC");

	if (!src || !*src)
		return NULL;
	snprintf(path, sizeof(path), "%s/doc/xunit.xsd", src);
	return path_exists(path) ? path : NULL;
}

static void
validate(const char *file)
{
	struct strbuf out = STRBUF_INIT;
	const char *argv[] = { "xmllint", "--noout", "--schema", xsd(), file, NULL };

	if (run(argv, &out) != 0)
		fail_msg("'%s' does not validate against %s:\n%s\n%s", file, xsd(), out.buf,
			 test_read(file));
	strbuf_release(&out);
}

/* A record with every kind of test and hostile text. */
static void
nasty_record(struct run_record *rec, const char *dir)
{
	struct section_result *s;
	struct test_result *t;
	char *full = path_join(dir, "nasty.full");

	test_write(full, "full log ]]> with \x01 control and \xff\xfe bad utf-8 and caf\xc3\xa9\n");
	run_record_init(rec);
	rec->start_ms = 1796284381000ull;
	rec->end_ms = 1796284481000ull;
	rec->kernel = xstrdup("6.6.0");
	s = run_record_section(rec, "ext4_4k", "ext4/4k");
	s->fstyp = xstrdup("ext4");
	s->mkfs_options = xstrdup("-b 4096 \"q\" <&>");
	section_add_test(s, "generic/001", TS_PASS, 3, 0, NULL, NULL, NULL);
	section_add_test(s, "generic/002", TS_NOTRUN, 0.5, 0, "needs <\"'&'\">\ttab\nnewline", NULL,
			 NULL);
	section_add_test(s, "generic/003", TS_EXPUNGED, -1, 0, NULL, NULL, NULL);
	t = section_add_test(s, "generic/004", TS_FAIL, 7.25, FAIL_MISMATCH | FAIL_DMESG,
			     "- output mismatch \x02 \xc3", "--- a\n+++ b\n]]>\n\x1b[0m\n",
			     "HINT: You _MAY_ be missing kernel fix:\n      0123456789ab x");
	t->full = xstrdup(full);
	t->kmsg = xstrdup(full);
	section_add_test(s, "generic/005", TS_CRASHED, -1, FAIL_OTHER, NULL, NULL, NULL);
	section_add_test(s, "generic/006", TS_HUNG, 600, 0, "hung", NULL, NULL);
	s = run_record_section(rec, "xfs_1k", "xfs/1k");
	section_add_test(s, "xfs/001", TS_PASS, 1, 0, NULL, NULL, NULL);
	run_record_recount(rec);
	free(full);
}

static void
test_junit(void **state)
{
	struct run_record rec, back;
	struct strbuf sb = STRBUF_INIT;
	char *file = test_tmp("junit.xml");
	char *dir = test_tmp("");

	(void)state;
	if (!xsd())
		fprintf(stderr, "# FSWB_FSTESTS_SRC has no doc/xunit.xsd: the schema check is "
				"skipped, the rest runs\n");

	/* every fixture, imported, written out as junit.xml */
	for (size_t i = 0; have_fixtures() && i < ARRAY_SIZE(cases); i++) {
		import_case(cases[i], false, &rec);
		assert_int_equal(results_write_junit(file, &rec), OK);
		if (xsd())
			validate(file);
		/* and read back: the same tests, statuses and reasons */
		run_record_init(&back);
		assert_int_equal(results_import(file, &back), OK);
		assert_int_equal(ntests(&back), ntests(&rec));
		for (size_t j = 0; j < rec.sections[0].ntests; j++) {
			struct test_result *a = &rec.sections[0].tests[j];
			struct test_result *b = find(&back, a->test);

			assert_non_null(b);
			assert_int_equal(a->status, b->status);
			if (a->status != TS_PASS && a->reason)
				assert_string_equal(a->reason, b->reason);
		}
		run_record_release(&back);
		run_record_release(&rec);
	}

	/* one section: a <testsuite> like check's */
	nasty_record(&rec, dir);
	rec.nsections = 1;
	results_junit(&rec, &sb);
	assert_non_null(strstr(sb.buf, "<testsuite\n xmlns=\"https://git.kernel.org/pub/scm/fs/"
				       "xfs/xfstests-dev.git\""));
	assert_non_null(strstr(sb.buf, "classname=\"xfstests.ext4_4k\""));
	assert_non_null(strstr(sb.buf, "failures=\"3\" skipped=\"1\" tests=\"5\""));
	assert_non_null(strstr(sb.buf, "<property name=\"SECTION\" value=\"ext4_4k\"/>"));
	assert_non_null(strstr(sb.buf, "start_timestamp=\"2026-12-03T07:53:01+00:00\""));
	assert_null(strstr(sb.buf, "generic/003")); /* expunged: left out, as check does */
	assert_non_null(strstr(sb.buf, "type=\"TestCrash\""));
	assert_non_null(strstr(sb.buf, "type=\"TestHang\""));
	assert_non_null(strstr(sb.buf, "<kernel-log>"));
	assert_non_null(strstr(sb.buf, "]]]]><![CDATA[>"));
	assert_int_equal(write_file_atomic(file, sb.buf, sb.len, 0644), OK);
	if (xsd())
		validate(file);
	rec.nsections = 2;
	/* several: <testsuites> */
	assert_int_equal(results_write_junit(file, &rec), OK);
	if (xsd())
		validate(file);
	run_record_init(&back);
	assert_int_equal(results_import(file, &back), OK);
	assert_int_equal(back.nsections, 2);
	assert_string_equal(back.sections[0].name, "ext4_4k");
	assert_string_equal(back.sections[0].config, "ext4/4k");
	assert_string_equal(back.sections[1].name, "xfs_1k");
	assert_int_equal(back.sections[0].ntests, 5);
	assert_string_equal(find(&back, "generic/002")->reason, "needs <\"'&'\">\ttab\nnewline");
	assert_true(find(&back, "generic/004")->seconds == 7.25);
	assert_non_null(strstr(find(&back, "generic/004")->detail, "]]>"));
	assert_int_equal(find(&back, "generic/005")->status, TS_CRASHED);
	assert_int_equal(find(&back, "generic/006")->status, TS_HUNG);
	run_record_release(&back);
	run_record_release(&rec);

	/* an empty record is still a valid report */
	run_record_init(&rec);
	assert_int_equal(results_write_junit(file, &rec), OK);
	if (xsd())
		validate(file);
	run_record_release(&rec);
	strbuf_release(&sb);
	free(file);
	free(dir);
}

static void
test_run_json(void **state)
{
	struct run_record rec, back;
	char *dir = test_tmp("");
	char *path = test_tmp("run.json");
	char *a, *b;

	(void)state;
	nasty_record(&rec, dir);
	rec.id = xstrdup("run-1");
	rec.exit_code = 1;
	rec.interrupted = true;
	rec.stopped_at = xstrdup("generic/007");
	strvec_push(&rec.sections[0].properties, "KERNEL=6.6.0");
	rec.sections[0].tests[0].reruns = 2;
	a = run_record_to_json(&rec);
	assert_int_equal(run_record_from_json(a, "a", &back), OK);
	b = run_record_to_json(&back);
	assert_string_equal(a, b);
	assert_int_equal(back.counts.failed, 1);
	assert_int_equal(back.counts.crashed, 1);
	assert_int_equal(back.counts.hung, 1);
	assert_int_equal(back.counts.expunged, 1);
	assert_int_equal(back.start_ms, rec.start_ms);
	assert_true(find(&back, "generic/003")->seconds < 0);
	assert_int_equal(find(&back, "generic/004")->reasons, FAIL_MISMATCH | FAIL_DMESG);
	assert_non_null(strstr(a, "\"test\": \"generic/004\""));
	assert_non_null(strstr(a, "\"status\": \"fail\""));
	assert_non_null(strstr(a, "\"reason\": \"- output mismatch"));
	assert_non_null(strstr(a, "\"hints\": \"HINT: You _MAY_ be missing kernel fix:\\n"));
	assert_non_null(strstr(a, "\"seconds\": 7.25"));
	free(b);
	run_record_release(&back);

	assert_int_equal(run_record_save(path, &rec), OK);
	assert_int_equal(run_record_load(path, &back), OK);
	b = run_record_to_json(&back);
	assert_string_equal(a, b);
	free(b);
	run_record_release(&back);
	free(a);
	run_record_release(&rec);

	/* bad input names the field */
	assert_int_equal(run_record_from_json("{", "x.json", &back), ERR_PARSE);
	assert_int_equal(
		run_record_from_json("{\"version\": 2, \"sections\": []}", "x.json", &back),
		ERR_INVALID);
	assert_non_null(strstr(error_msg(), "x.json: version"));
	assert_int_equal(run_record_from_json("{\"version\": 1, \"sections\": [{\"tests\": "
					      "[{\"test\": \"g/1\", \"status\": \"pass\"}, "
					      "{\"test\": \"g/2\", \"status\": \"passed\"}]}]}",
					      "x.json", &back),
			 ERR_INVALID);
	assert_non_null(strstr(error_msg(), "x.json: field 'sections[0].tests[1].status': unknown "
					    "status 'passed'"));
	assert_int_equal(run_record_from_json("{\"version\": 1, \"sections\": [{\"tests\": "
					      "[{\"test\": \"g/1\", \"status\": \"pass\", "
					      "\"seconds\": \"3\"}]}]}",
					      "x.json", &back),
			 ERR_INVALID);
	assert_non_null(strstr(error_msg(), "sections[0].tests[0].seconds"));
	assert_int_equal(run_record_from_json("{\"version\": 1}", "x.json", &back), ERR_INVALID);
	assert_non_null(strstr(error_msg(), "field 'sections': must be a list"));
	free(path);
	free(dir);
}

static void
emit_test(struct event_bus *bus, const char *config, const char *test, enum test_status st,
	  double secs, unsigned rerun)
{
	struct event s = { .type = EV_TEST_START, .config = config };
	struct event e = { .type = EV_TEST_END, .config = config };

	s.u.test_start.test = test;
	s.u.test_start.prev_seconds = -1;
	s.u.test_start.rerun = rerun;
	event_emit(bus, &s);
	e.u.test_end.test = test;
	e.u.test_end.status = st;
	e.u.test_end.seconds = secs;
	e.u.test_end.rerun = rerun;
	e.u.test_end.reason = st == TS_FAIL ? "- output mismatch" : NULL;
	e.u.test_end.reasons = st == TS_FAIL ? FAIL_MISMATCH : 0;
	event_emit(bus, &e);
}

static void
test_writer(void **state)
{
	struct event_bus bus = EVENT_BUS_INIT;
	struct results_writer w;
	struct run_record disk;
	char *path = test_tmp("runs/r1/run.json");
	char *dir = test_tmp("runs/r1");
	struct event ev = { .type = EV_RUN_BEGIN };

	(void)state;
	assert_int_equal(mkdir_p(dir, 0755), OK);
	results_writer_init(&w, path);
	event_bus_add(&bus, results_writer_listener(&w));
	ev.u.run.id = "r1";
	ev.u.run.backend = "ssh";
	ev.wall_ms = 1796284381000ull;
	event_emit(&bus, &ev);
	memset(&ev, 0, sizeof(ev));
	ev.type = EV_SECTION;
	ev.config = "ext4/4k";
	ev.u.section.fstyp = "ext4";
	ev.u.section.platform = "Linux/x86_64 guest 6.6.0-fswb #1 SMP PREEMPT_DYNAMIC";
	ev.u.section.mkfs_options = "-F /dev/vdc";
	event_emit(&bus, &ev);

	emit_test(&bus, "ext4/4k", "generic/001", TS_PASS, 5, 0);
	/* run.json is on disk after every test */
	assert_int_equal(run_record_load(path, &disk), OK);
	assert_int_equal(ntests(&disk), 1);
	assert_false(disk.finished);
	assert_string_equal(disk.id, "r1");
	assert_string_equal(disk.kernel, "6.6.0-fswb");
	assert_string_equal(disk.hostname, "guest");
	assert_string_equal(disk.backend, "ssh"); /* where it ran: the not-run fixes read it */
	assert_string_equal(disk.sections[0].config, "ext4/4k");
	assert_string_equal(disk.sections[0].fstyp, "ext4");
	run_record_release(&disk);

	emit_test(&bus, "ext4/4k", "generic/002", TS_FAIL, 3, 0);
	emit_test(&bus, "ext4/4k", "generic/002", TS_FAIL, 3, 1);
	emit_test(&bus, "ext4/4k", "generic/002", TS_FAIL, 3, 2);
	/* a test that starts and never ends: the run was killed here */
	memset(&ev, 0, sizeof(ev));
	ev.type = EV_TEST_START;
	ev.config = "ext4/4k";
	ev.u.test_start.test = "generic/003";
	event_emit(&bus, &ev);

	assert_int_equal(run_record_load(path, &disk), OK);
	assert_int_equal(ntests(&disk), 2);
	assert_int_equal(find(&disk, "generic/002")->reruns, 2);
	assert_int_equal(disk.counts.failed, 1);
	/* killed now, run.json says where */
	assert_string_equal(disk.stopped_at, "generic/003");
	assert_string_equal(disk.sections[0].stopped_at, "generic/003");
	assert_false(disk.finished);
	run_record_release(&disk);
	assert_int_equal(results_writer_flush(&w), OK);

	memset(&ev, 0, sizeof(ev));
	ev.type = EV_RUN_END;
	ev.wall_ms = 1796284481000ull;
	ev.u.end.exit_code = 1;
	ev.u.end.interrupted = true;
	event_emit(&bus, &ev);
	assert_int_equal(results_writer_status(&w), OK);
	assert_int_equal(run_record_load(path, &disk), OK);
	assert_true(disk.finished);
	assert_true(disk.interrupted);
	assert_int_equal(disk.exit_code, 1);
	assert_int_equal(disk.end_ms, 1796284481000ull);
	run_record_release(&disk);
	results_writer_release(&w);
	event_bus_release(&bus);

	/* a write that fails is reported, and the run goes on */
	results_writer_init(&w, "/nonexistent/dir/run.json");
	event_bus_add(&bus, results_writer_listener(&w));
	emit_test(&bus, NULL, "generic/001", TS_PASS, 1, 0);
	emit_test(&bus, NULL, "generic/002", TS_PASS, 1, 0);
	assert_int_equal(ntests(&w.rec), 2);
	assert_int_not_equal(results_writer_status(&w), OK);
	assert_non_null(strstr(error_msg(), "/nonexistent/dir/run.json"));
	results_writer_release(&w);
	event_bus_release(&bus);
	free(path);
	free(dir);
}

/* check -L: every run of a test kept in order, in run.json and junit.xml, and read back. */
static void
test_iterations(void **state)
{
	struct run_record rec, back;
	struct section_result *s;
	struct test_result *t;
	struct strbuf sb = STRBUF_INIT;
	unsigned passed, failed;
	char *a, *b;
	const char *p;
	size_t ncases = 0;

	(void)state;
	run_record_init(&rec);
	s = run_record_section(&rec, "ext4_4k", "ext4/4k");
	section_add_test(s, "generic/001", TS_PASS, 1, 0, NULL, NULL, NULL);
	t = section_add_test(s, "generic/006", TS_FAIL, 2, FAIL_MISMATCH, "- output mismatch",
			     "-size 8192\n+size 4096\n", NULL);
	test_result_run_counts(t, &passed, &failed);
	assert_int_equal(passed, 0);
	assert_int_equal(failed, 1);
	section_add_test(s, "generic/006", TS_PASS, 3, 0, NULL, NULL, NULL);
	section_add_test(s, "generic/006", TS_FAIL, 4, FAIL_MISMATCH, "- output mismatch", NULL,
			 NULL);
	run_record_recount(&rec);
	assert_int_equal(t->reruns, 2);
	assert_int_equal(t->niterations, 3);
	assert_int_equal(t->status, TS_FAIL);
	assert_true(t->iterations[1].status == TS_PASS && t->iterations[1].seconds == 3);
	test_result_run_counts(t, &passed, &failed);
	assert_int_equal(passed, 1);
	assert_int_equal(failed, 2);
	assert_int_equal(rec.counts.failed, 1); /* one test, failed */

	a = run_record_to_json(&rec);
	assert_non_null(strstr(a, "\"iterations\": [\n            {\n              \"status\": "
				  "\"fail\",\n              \"seconds\": 2.0\n            },"));
	assert_int_equal(run_record_from_json(a, "a", &back), OK);
	b = run_record_to_json(&back);
	assert_string_equal(a, b);
	free(b);
	run_record_release(&back);
	assert_int_equal(run_record_from_json("{\"version\": 1, \"sections\": [{\"tests\": "
					      "[{\"test\": \"generic/001\", \"status\": \"pass\", "
					      "\"iterations\": [{\"status\": \"passed\"}]}]}]}",
					      "bad.json", &back),
			 ERR_INVALID);
	assert_non_null(strstr(error_msg(), "iterations': holds a run without a known status"));

	/* junit.xml: one testcase per run, as check writes with -L */
	results_junit(&rec, &sb);
	for (p = sb.buf; (p = strstr(p, "name=\"generic/006\"")); p++)
		ncases++;
	assert_int_equal(ncases, 3);
	assert_non_null(strstr(sb.buf, "message=\"Test generic/006 failed again (run 3 of 3)\""));
	run_record_init(&back);
	assert_int_equal(results_read_xunit(sb.buf, sb.len, "junit.xml", &back, NULL), OK);
	t = &back.sections[0].tests[1];
	assert_string_equal(t->test, "generic/006");
	assert_int_equal(t->niterations, 3);
	assert_int_equal(t->iterations[1].status, TS_PASS);
	assert_int_equal(t->iterations[2].status, TS_FAIL);
	run_record_release(&back);
	strbuf_release(&sb);
	free(a);
	run_record_release(&rec);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_import_fixtures),	   cmocka_unit_test(test_import_details),
		cmocka_unit_test(test_attach_hints),	   cmocka_unit_test(test_import_fallbacks),
		cmocka_unit_test(test_import_sections),	   cmocka_unit_test(test_read_xunit),
		cmocka_unit_test(test_read_xunit_hostile), cmocka_unit_test(test_read_xunit_xml),
		cmocka_unit_test(test_check_log_time),	   cmocka_unit_test(test_junit),
		cmocka_unit_test(test_run_json),	   cmocka_unit_test(test_writer),
		cmocka_unit_test(test_iterations),
	};

	return cmocka_run_group_tests_name("results", tests, test_setup_hermetic,
					   test_teardown_hermetic);
}
