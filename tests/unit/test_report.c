/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The failure report for a mailing list, to the byte: a run record built
 * here with a run directory holding local.config and kernel-log slices;
 * the kernel log's first warning; folding and the control-character
 * filter; and the HTML page of a run.
 */
#include "testlib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/paths.h"
#include "fstests/history.h"
#include "fstests/html.h"
#include "fstests/report.h"

static void
build_run(struct run_record *rec, char **dir)
{
	struct section_result *s;
	char *p;

	run_record_init(rec);
	rec->id = xstrdup("20261204-101500");
	rec->kernel = xstrdup("6.7.0-rc1-00012-gabcdef12+");
	s = run_record_section(rec, "ext4/4k", "ext4/4k");
	s->fstyp = xstrdup("ext4");
	s->mkfs_options = xstrdup("-b 4096");
	s->mount_options = xstrdup("-o acl,user_xattr");
	section_add_test(s, "generic/001", TS_PASS, 3, 0, NULL, NULL, NULL);
	section_add_test(
		s, "generic/006", TS_FAIL, 6, 0,
		"- output mismatch (see /opt/fstests/results//generic/006.out.bad)",
		"--- tests/generic/006.out\n+++ /opt/fstests/results//generic/006.out.bad\n"
		"@@ -1,3 +1,3 @@\n QA output created by 006\n-size 8192\n"
		"+size 4096\x1b[2J\n",
		NULL);
	section_add_test(s, "generic/008", TS_FAIL, 11, 0, "_check_dmesg: something found in dmesg",
			 NULL,
			 "HINT: You _MAY_ be missing kernel fix:\n      0123456789ab ext4: fix it");
	run_record_recount(rec);
	*dir = test_tmp("run");
	p = path_join(*dir, "results/ext4-4k/local.config");
	test_write(p, "# ext4/4k: the local.config check read in the guest (HOST_OPTIONS)\n"
		      "# TEST_DEV was made with: mkfs.ext4 -F -q -b 4096 /dev/vdb\n"
		      "export FSTYP=ext4\nexport TEST_DEV=/dev/vdb\nexport TEST_DIR=/mnt/test\n"
		      "export SCRATCH_DEV=/dev/vdc\nexport SCRATCH_MNT=/mnt/scratch\n"
		      "export MKFS_OPTIONS='-b 4096'\n");
	free(p);
	p = path_join(*dir, "results/ext4-4k/generic/008.kmsg");
	test_write(p, "[   12.000001] run fstests generic/008 at 2026-12-04 10:16:00\n"
		      "[   12.500000] EXT4-fs (vdb): mounted filesystem\n"
		      "[   13.000000] WARNING: CPU: 1 PID: 4242 at fs/ext4/inode.c:1234 "
		      "ext4_do_writepages+0x10/0x20 [ext4]\n"
		      "[   13.000100] Modules linked in: ext4\n"
		      "[   13.000200] CPU: 1 PID: 4242 Comm: xfs_io Not tainted 6.7.0-rc1+ #1\n");
	free(p);
}

static const char *
fswb_cmd(void *data, const char *config, const char *test)
{
	static char buf[256];

	snprintf(buf, sizeof(buf),
		 "fswb run -c %s --kernel /home/someone/src/linux --fstests-src "
		 "/home/someone/src/xfstests-dev %s",
		 config, test);
	return buf;
}

static const char expected[] =
	"fstests results of run 20261204-101500\n"
	"\n"
	"Kernel:   6.7.0-rc1-00012-gabcdef12+ (built from the tree /src/linux)\n"
	"fstests:  git://example.org/xfstests-dev.git (revision 63a29724)\n"
	"Results:  ext4/4k: 3 tests, 2 failed, 0 not run, 20 seconds\n"
	"\n"
	"Configuration ext4/4k:\n"
	"  FSTYP=ext4\n"
	"  MKFS_OPTIONS=-b 4096\n"
	"  MOUNT_OPTIONS=-o acl,user_xattr\n"
	"  local.config, as check read it in the test machine:\n"
	"    # TEST_DEV was made with: mkfs.ext4 -F -q -b 4096 /dev/vdb\n"
	"    export FSTYP=ext4\n"
	"    export TEST_DEV=/dev/vdb\n"
	"    export TEST_DIR=/mnt/test\n"
	"    export SCRATCH_DEV=/dev/vdc\n"
	"    export SCRATCH_MNT=/mnt/scratch\n"
	"    export MKFS_OPTIONS='-b 4096'\n"
	"\n"
	"generic/006 on ext4/4k: fail after 6s\n"
	"  - output mismatch (see /opt/fstests/results//generic/006.out.bad)\n"
	"  What check printed:\n"
	"    --- tests/generic/006.out\n"
	"    +++ /opt/fstests/results//generic/006.out.bad\n"
	"    @@ -1,3 +1,3 @@\n"
	"     QA output created by 006\n"
	"    -size 8192\n"
	"    +size 4096?[2J\n"
	"  Reproduce it with fswb:\n"
	"    fswb run -c ext4/4k --kernel /home/someone/src/linux --fstests-src \\\n"
	"      /home/someone/src/xfstests-dev generic/006\n"
	"  Reproduce it with check by hand, in an fstests tree whose\n"
	"  local.config has the settings above (with your own TEST_DEV and\n"
	"  SCRATCH_DEV):\n"
	"    ./check generic/006\n"
	"\n"
	"generic/008 on ext4/4k: fail after 11s\n"
	"  _check_dmesg: something found in dmesg\n"
	"  The kernel log from its first warning:\n"
	"    WARNING: CPU: 1 PID: 4242 at fs/ext4/inode.c:1234 ext4_do_writepages+0x10/\n"
	"      0x20 [ext4]\n"
	"    Modules linked in: ext4\n"
	"    CPU: 1 PID: 4242 Comm: xfs_io Not tainted 6.7.0-rc1+ #1\n"
	"  check's hints:\n"
	"    HINT: You _MAY_ be missing kernel fix:\n"
	"          0123456789ab ext4: fix it\n"
	"  Reproduce it with fswb:\n"
	"    fswb run -c ext4/4k --kernel /home/someone/src/linux --fstests-src \\\n"
	"      /home/someone/src/xfstests-dev generic/008\n"
	"  Reproduce it with check by hand, in an fstests tree whose\n"
	"  local.config has the settings above (with your own TEST_DEV and\n"
	"  SCRATCH_DEV):\n"
	"    ./check generic/008\n";

static void
test_report_text(void **state)
{
	struct run_record rec;
	struct report_input in = { 0 };
	struct strbuf sb = STRBUF_INIT;
	char *dir;

	build_run(&rec, &dir);
	in.rec = &rec;
	in.run_dir = dir;
	in.kernel = "built from the tree /src/linux";
	in.fstests = "git://example.org/xfstests-dev.git (revision 63a29724)";
	in.fswb_cmd = fswb_cmd;
	assert_int_equal(report_text(&in, &sb), OK);
	assert_string_equal(sb.buf, expected);
	for (const char *s = sb.buf; *s;) {
		size_t n = strcspn(s, "\n");

		assert_true(n <= REPORT_WIDTH);
		s += n + (s[n] == '\n');
	}
	assert_null(strchr(sb.buf, '\x1b'));

	/* a test that passed and failed lately says so */
	{
		struct flaky f;
		struct run_record other;

		run_record_init(&other);
		section_add_test(run_record_section(&other, "ext4/4k", "ext4/4k"), "generic/008",
				 TS_PASS, 1, 0, NULL, NULL, NULL);
		flaky_init(&f);
		flaky_add(&f, &rec, NULL);
		flaky_add(&f, &other, NULL);
		in.flaky = &f;
		strbuf_reset(&sb);
		assert_int_equal(report_text(&in, &sb), OK);
		assert_non_null(strstr(sb.buf, "  _check_dmesg: something found in dmesg\n"
					       "  It is flaky: failed 1 of its last 2 runs.\n"));
		/* generic/006 failed each time: not flaky */
		assert_null(strstr(strstr(sb.buf, "It is flaky") + 1, "It is flaky"));
		in.flaky = NULL;
		flaky_release(&f);
		run_record_release(&other);
	}

	/* one test: only it; a test that is not there is an error naming it */
	strbuf_reset(&sb);
	in.test = "generic/008";
	assert_int_equal(report_text(&in, &sb), OK);
	assert_null(strstr(sb.buf, "generic/006 on"));
	assert_non_null(strstr(sb.buf, "generic/008 on ext4/4k: fail"));
	in.test = "generic/999";
	assert_int_equal(report_text(&in, &sb), ERR_NOTFOUND);
	assert_string_equal(error_msg(), "run 20261204-101500 has no test 'generic/999'");

	/* a passing run says so */
	strbuf_reset(&sb);
	in.test = NULL;
	rec.sections[0].ntests = 1;
	run_record_recount(&rec);
	assert_int_equal(report_text(&in, &sb), OK);
	assert_non_null(strstr(sb.buf, "\nNo test failed.\n"));
	rec.sections[0].ntests = 3;
	strbuf_release(&sb);
	run_record_release(&rec);
	free(dir);
}

static void
test_run_dir_file(void **state)
{
	char *dir = test_tmp("files"), *p = path_join(dir, "results/xfs-4k/a"), *q, *text;

	test_write(p, "hello\n");
	text = run_dir_file(dir, "xfs/4k", "a");
	assert_string_equal(text, "hello\n");
	free(text);
	/* a symlink is never followed */
	q = path_join(dir, "results/xfs-4k/b");
	assert_int_equal(symlink(p, q), 0);
	assert_null(run_dir_file(dir, "xfs/4k", "b"));
	assert_null(run_dir_file(dir, "xfs/4k", "none"));
	free(q);
	free(p);
	free(dir);
}

static void
test_klog_first_bad(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	klog_first_bad("[ 1.0] fine\n[ 2.0] BUG: kernel NULL pointer dereference\n[ 2.1] a\n"
		       "[ 2.2] b\n[ 2.3] c\n",
		       2, &sb);
	assert_string_equal(sb.buf, "BUG: kernel NULL pointer dereference\na\n...\n");
	strbuf_reset(&sb);
	klog_first_bad("[ 1.0] all fine\n", 5, &sb);
	assert_string_equal(sb.buf, "");
	strbuf_release(&sb);
}

static size_t
count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static void
test_html(void **state)
{
	struct run_record rec;
	struct report_input in = { 0 };
	struct strbuf sb = STRBUF_INIT;
	char *dir, *p;

	build_run(&rec, &dir);
	p = path_join(dir, "results/ext4-4k/generic/006.full");
	test_write(p, "mkfs output </pre><script>alert(1)</script>\n");
	free(p);
	/* a name from the test machine that tries to break out of the page */
	section_add_test(&rec.sections[0], "generic/<img src=x onerror=alert(2)>", TS_NOTRUN, -1, 0,
			 "needs \"quotes\" & 'apostrophes'", NULL, NULL);
	run_record_recount(&rec);
	in.rec = &rec;
	in.run_dir = dir;
	in.fswb_cmd = fswb_cmd;
	run_html(&in, &sb);
	assert_true(str_startswith(sb.buf, "<!DOCTYPE html>\n<html lang=\"en\">"));
	assert_true(str_endswith(sb.buf, "</html>\n"));
	assert_non_null(strstr(sb.buf, "<meta name=\"viewport\""));
	/* nothing from elsewhere: no script, no link, no url() */
	assert_null(strstr(sb.buf, "<script"));
	assert_null(strstr(sb.buf, "<link"));
	assert_null(strstr(sb.buf, "url("));
	assert_null(strstr(sb.buf, "<img"));
	assert_null(strstr(sb.buf, "\x1b"));
	assert_non_null(strstr(sb.buf, "&lt;/pre&gt;&lt;script&gt;alert(1)&lt;/script&gt;"));
	assert_non_null(strstr(sb.buf, "generic/&lt;img src=x onerror=alert(2)&gt;"));
	assert_non_null(strstr(sb.buf, "needs &quot;quotes&quot; &amp; &#39;apostrophes&#39;"));
	/* the sections, two failures each with its diff/.full/kmsg folded */
	{
		static const char *const ids[] = { "summary", "configs", "durations", "baseline",
						   "failures" };

		for (size_t i = 0; i < ARRAY_SIZE(ids); i++) {
			char *attr = xasprintf("id=\"%s\"", ids[i]);

			assert_int_equal(count(sb.buf, attr), 1);
			free(attr);
		}
	}
	assert_int_equal(count(sb.buf, "<article class=\"failure\""), 2);
	assert_non_null(strstr(sb.buf, "id=\"fail-ext4-4k-generic-006\""));
	assert_non_null(strstr(sb.buf, "href=\"#fail-ext4-4k-generic-008\""));
	assert_int_equal(count(sb.buf, "<details"), 3); /* 006: diff, .full; 008: kmsg */
	assert_null(strstr(sb.buf, "<details open"));
	assert_int_equal(count(sb.buf, "<rect "), 3); /* the tests with a time */
	assert_non_null(strstr(sb.buf, "No baseline for this kernel"));
	assert_int_equal(count(sb.buf, "<pre class=\"reproduce\">"), 4);
	strbuf_release(&sb);
	run_record_release(&rec);
	free(dir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_report_text),
		cmocka_unit_test(test_run_dir_file),
		cmocka_unit_test(test_klog_first_bad),
		cmocka_unit_test(test_html),
	};

	return cmocka_run_group_tests_name("report", tests, test_setup_hermetic,
					   test_teardown_hermetic);
}
