/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The results archive reader against hostile archives built here: symlinks
 * to host files, setuid files, device nodes, FIFOs, hard links, ../ and
 * absolute names, a symlink planted in the destination, oversized files, a
 * damaged header. Nothing may be written, read or created outside dest.
 */
#include "testlib.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "core/paths.h"
#include "core/util.h"
#include "fstests/archive.h"

/* A tar being built: ustar headers with their checksums, then the data. */
static void
tar_member(struct strbuf *tar, const char *name, char type, unsigned mode, const char *link,
	   const char *data, size_t len)
{
	unsigned char h[512] = { 0 };
	unsigned sum = 0;

	snprintf((char *)h, 100, "%s", name);
	snprintf((char *)h + 100, 8, "%07o", mode);
	snprintf((char *)h + 108, 8, "%07o", 0);
	snprintf((char *)h + 116, 8, "%07o", 0);
	snprintf((char *)h + 124, 12, "%011llo", (unsigned long long)len);
	snprintf((char *)h + 136, 12, "%011o", 0);
	h[156] = (unsigned char)type;
	if (link)
		snprintf((char *)h + 157, 100, "%s", link);
	memcpy(h + 257, "ustar", 6);
	memcpy(h + 263, "00", 2);
	memset(h + 148, ' ', 8);
	for (size_t i = 0; i < 512; i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum);
	strbuf_add(tar, h, 512);
	if (len) {
		static const char zeros[512];

		strbuf_add(tar, data, len);
		strbuf_add(tar, zeros, (512 - len % 512) % 512);
	}
}

static void
tar_end(struct strbuf *tar)
{
	static const char zeros[1024];

	strbuf_add(tar, zeros, sizeof(zeros));
}

/* Write tar gzip'd to path. */
static void
write_gz(const char *path, const struct strbuf *tar)
{
	gzFile gz = gzopen(path, "wb");

	assert_non_null(gz);
	assert_int_equal(gzwrite(gz, tar->buf, (unsigned)tar->len), (int)tar->len);
	assert_int_equal(gzclose(gz), Z_OK);
}

static enum status
unpack(const struct strbuf *tar, const char *dest, uint64_t max, struct archive_report *r)
{
	char *gz = test_tmp("results.tar.gz");
	enum status rc;

	unlink(gz);
	write_gz(gz, tar);
	mkdir_p(dest, 0755);
	archive_report_init(r);
	rc = archive_unpack(gz, dest, max, r);
	free(gz);
	return rc;
}

static mode_t
lmode(const char *dir, const char *rel)
{
	char *p = path_join(dir, rel);
	struct stat st;
	mode_t m = lstat(p, &st) ? 0 : st.st_mode;

	free(p);
	return m;
}

static bool
report_names(const struct archive_report *r, const char *what)
{
	for (size_t i = 0; i < r->skipped.n; i++)
		if (strstr(r->skipped.v[i], what))
			return true;
	return false;
}

static void
test_plain_files_and_modes(void **state)
{
	struct strbuf tar = STRBUF_INIT;
	struct archive_report r;
	char *dest = test_tmp("plain"), *text, *p;

	tar_member(&tar, "./", '5', 0700, NULL, NULL, 0);
	tar_member(&tar, "./generic/", '5', 0777, NULL, NULL, 0);
	tar_member(&tar, "./generic/001.out.bad", '0', 0600, NULL, "bad\n", 4);
	tar_member(&tar, "./generic/001.full", '0', 0777, NULL, "full\n", 5);
	tar_member(&tar, "./result.xml", '\0', 0644, NULL, "<x/>", 4);
	tar_member(&tar, "./ext4/deep/er/f", '0', 0644, NULL, "x", 1); /* parents made */
	tar_end(&tar);
	assert_int_equal(unpack(&tar, dest, ARCHIVE_MAX_DEFAULT, &r), OK);
	assert_int_equal(r.files, 4);
	assert_int_equal(r.dirs, 1);
	assert_int_equal(r.nskipped, 0);
	assert_int_equal(r.bytes, 14);
	assert_int_equal(lmode(dest, "generic") & 07777, 0755);
	assert_int_equal(lmode(dest, "generic/001.out.bad") & 07777, 0644);
	assert_int_equal(lmode(dest, "generic/001.full") & 07777, 0755);
	p = path_join(dest, "generic/001.full");
	text = test_read(p);
	assert_string_equal(text, "full\n");
	free(text);
	free(p);
	text = archive_report_text(&r);
	assert_string_equal(text, "");
	free(text);
	archive_report_release(&r);
	strbuf_release(&tar);
	free(dest);
}

static void
test_hostile_members_skipped(void **state)
{
	struct strbuf tar = STRBUF_INIT, name = STRBUF_INIT;
	struct archive_report r;
	char *dest = test_tmp("hostile/run/results"), *outside = test_tmp("hostile/escape");
	char *text;

	tar_member(&tar, "./generic/001.full", '2', 0777, "/etc/passwd", NULL, 0);
	tar_member(&tar, "./generic/002.full", '1', 0644, "/etc/passwd", NULL, 0);
	tar_member(&tar, "./sh", '0', 04755, NULL, "#!/bin/sh\n", 10);
	tar_member(&tar, "./mem", '3', 0666, NULL, NULL, 0);
	tar_member(&tar, "./sda", '4', 0666, NULL, NULL, 0);
	tar_member(&tar, "./fifo", '6', 0666, NULL, NULL, 0);
	tar_member(&tar, "../../escape", '0', 0644, NULL, "out", 3);
	tar_member(&tar, "./a/../../../escape2", '0', 0644, NULL, "out", 3);
	tar_member(&tar, "/tmp/absolute", '0', 0644, NULL, "abs", 3);
	tar_member(&tar, "./esc\033]0;title\007", '0', 0644, NULL, "x", 1);
	/* a GNU long name that climbs out */
	strbuf_addf(&name, "./%0200d/../../../../escape3", 0);
	tar_member(&tar, "././@LongLink", 'L', 0644, NULL, name.buf, name.len + 1);
	tar_member(&tar, "./short", '0', 0644, NULL, "x", 1);
	tar_member(&tar, "./generic/001.full", '0', 0644, NULL, "real", 4);
	tar_member(&tar, "./generic/001.full", '0', 0644, NULL, "again", 5);
	tar_end(&tar);
	assert_int_equal(unpack(&tar, dest, ARCHIVE_MAX_DEFAULT, &r), OK);

	/* only the regular files, the setuid one without its bits */
	assert_true(S_ISREG(lmode(dest, "generic/001.full")));
	assert_int_equal(lmode(dest, "generic/002.full"), 0);
	assert_int_equal(lmode(dest, "sh") & 07777, 0755);
	assert_int_equal(lmode(dest, "mem"), 0);
	assert_int_equal(lmode(dest, "sda"), 0);
	assert_int_equal(lmode(dest, "fifo"), 0);
	assert_int_equal(lmode(outside, ""), 0);
	{
		char *p = test_tmp("hostile/escape2"), *q = test_tmp("hostile/escape3");

		assert_false(path_exists(p));
		assert_false(path_exists(q));
		free(p);
		free(q);
	}
	{
		char *p = path_join(dest, "generic/001.full"), *t = test_read(p);

		assert_string_equal(t, "real");
		free(t);
		free(p);
	}
	assert_int_equal(r.files, 2);
	assert_int_equal(lmode(dest, "short"), 0); /* it had the long name */
	assert_true(report_names(&r, "a symlink"));
	assert_true(report_names(&r, "a hard link"));
	assert_true(report_names(&r, "a character device"));
	assert_true(report_names(&r, "a block device"));
	assert_true(report_names(&r, "a FIFO"));
	assert_true(report_names(&r, "setuid"));
	assert_true(report_names(&r, "an absolute name"));
	assert_true(report_names(&r, "'../../escape' (a name with '..'"));
	assert_true(report_names(&r, "control characters"));
	assert_true(report_names(&r, "already there"));
	/* the warning text reaches a terminal: no escape in it */
	text = archive_report_text(&r);
	assert_null(strchr(text, '\033'));
	assert_null(strchr(text, '\007'));
	assert_non_null(strstr(text, "members of the results archive left out"));
	free(text);
	archive_report_release(&r);
	strbuf_release(&tar);
	strbuf_release(&name);
	free(dest);
	free(outside);
}

/* A symlink planted in the destination is never written through. */
static void
test_planted_symlink_not_followed(void **state)
{
	struct strbuf tar = STRBUF_INIT;
	struct archive_report r;
	char *dest = test_tmp("planted/results"), *target = test_tmp("planted/host");
	char *link = path_join(dest, "generic"), *file = path_join(dest, "result.xml");
	char *victim = test_tmp("planted/host/001.full");

	mkdir_p(dest, 0755);
	mkdir_p(target, 0755);
	assert_int_equal(symlink(target, link), 0);
	test_write(victim, "host file\n");
	assert_int_equal(symlink(victim, file), 0);
	tar_member(&tar, "./generic/001.full", '0', 0644, NULL, "guest", 5);
	tar_member(&tar, "./generic/new", '0', 0644, NULL, "guest", 5);
	tar_member(&tar, "./result.xml", '0', 0644, NULL, "guest", 5);
	tar_member(&tar, "./generic/", '5', 0755, NULL, NULL, 0);
	tar_end(&tar);
	assert_int_equal(unpack(&tar, dest, ARCHIVE_MAX_DEFAULT, &r), OK);
	{
		char *t = test_read(victim), *n = path_join(target, "new");

		assert_string_equal(t, "host file\n");
		assert_false(path_exists(n));
		free(t);
		free(n);
	}
	assert_int_equal(r.files, 0);
	assert_int_equal(r.nskipped, 4);
	archive_report_release(&r);
	strbuf_release(&tar);
	free(dest);
	free(target);
	free(link);
	free(file);
	free(victim);
}

static void
test_size_caps(void **state)
{
	struct strbuf tar = STRBUF_INIT;
	struct archive_report r;
	char *dest = test_tmp("caps"), *big = xmalloc(3000), *text;

	memset(big, 'x', 3000);
	tar_member(&tar, "./a", '0', 0644, NULL, big, 600);
	tar_member(&tar, "./generic/001.full", '0', 0644, NULL, big, 3000);
	tar_member(&tar, "./b", '0', 0644, NULL, big, 300);
	tar_end(&tar);
	assert_int_equal(unpack(&tar, dest, 2000, &r), OK);
	assert_null(r.stopped);
	assert_int_equal(r.files, 2);
	assert_int_equal(r.bytes, 900);
	assert_int_equal(lmode(dest, "generic/001.full"), 0);
	assert_true(report_names(&r, "--max-results"));
	archive_report_release(&r);

	/* a stream far larger than the cap (a gzip bomb) stops the unpacking */
	strbuf_reset(&tar);
	for (int i = 0; i < 10; i++) {
		char n[32];

		snprintf(n, sizeof(n), "./f%d", i);
		tar_member(&tar, n, '0', 0644, NULL, big, 3000);
	}
	tar_end(&tar);
	assert_int_equal(unpack(&tar, dest, 1000, &r), OK);
	assert_non_null(r.stopped);
	text = archive_report_text(&r);
	assert_non_null(strstr(text, "unpacks to more than"));
	free(text);
	archive_report_release(&r);
	strbuf_release(&tar);
	free(big);
	free(dest);
}

static void
test_damaged(void **state)
{
	struct strbuf tar = STRBUF_INIT;
	struct archive_report r;
	char *dest = test_tmp("damaged");

	tar_member(&tar, "./ok", '0', 0644, NULL, "fine", 4);
	tar_member(&tar, "./bad", '0', 0644, NULL, "x", 1);
	tar.buf[512 + 512 + 148] ^= 1; /* the second header's checksum */
	tar_end(&tar);
	assert_int_equal(unpack(&tar, dest, ARCHIVE_MAX_DEFAULT, &r), ERR_PARSE);
	assert_non_null(strstr(error_msg(), "damaged at byte 1536"));
	assert_true(S_ISREG(lmode(dest, "ok")));
	archive_report_release(&r);

	/* ends inside a member's data */
	strbuf_reset(&tar);
	tar_member(&tar, "./cut", '0', 0644, NULL, "0123456789", 10);
	strbuf_setlen(&tar, 512 + 5);
	assert_int_equal(unpack(&tar, dest, ARCHIVE_MAX_DEFAULT, &r), ERR_PARSE);
	assert_int_equal(lmode(dest, "cut"), 0); /* no partial file */
	archive_report_release(&r);

	/* not an archive at all; a symlink as the archive */
	{
		char *p = test_tmp("damaged.tgz"), *l = test_tmp("link.tgz");

		test_write(p, "hello, this is not a tar archive at all\n");
		archive_report_init(&r);
		assert_int_equal(archive_unpack(p, dest, ARCHIVE_MAX_DEFAULT, &r), ERR_PARSE);
		assert_int_equal(symlink(p, l), 0);
		assert_int_not_equal(archive_unpack(l, dest, ARCHIVE_MAX_DEFAULT, &r), OK);
		archive_report_release(&r);
		free(p);
		free(l);
	}
	strbuf_release(&tar);
	free(dest);
}

/*
 * What the agent sends: GNU tar's own archives (its default format, and
 * pax), long names included, unpack whole.
 */
static void
test_gnu_tar(void **state)
{
	static const char *const formats[] = { "gnu", "pax", "ustar" };
	char *src = test_tmp("gnu/src"), *gz = test_tmp("gnu.tgz");
	char *longname = xasprintf("generic/%090d/%050d.full", 7, 8), *p, *cmd, *text;
	struct archive_report r;

	p = path_join(src, longname);
	test_write(p, "long\n");
	free(p);
	p = path_join(src, "result.xml");
	test_write(p, "<testsuite/>\n");
	free(p);
	for (size_t i = 0; i < ARRAY_SIZE(formats); i++) {
		char *dest = xasprintf("%s/gnu/dest-%s", test_scratch, formats[i]);

		cmd = xasprintf("tar --format=%s -C '%s' -czf '%s' .", formats[i], src, gz);
		assert_int_equal(system(cmd), 0);
		free(cmd);
		mkdir_p(dest, 0755);
		archive_report_init(&r);
		assert_int_equal(archive_unpack(gz, dest, ARCHIVE_MAX_DEFAULT, &r), OK);
		assert_int_equal(r.files, 2);
		assert_int_equal(r.nskipped, 0);
		p = path_join(dest, longname);
		text = test_read(p);
		assert_string_equal(text, "long\n");
		free(text);
		free(p);
		archive_report_release(&r);
		free(dest);
	}
	free(longname);
	free(src);
	free(gz);
}

/*
 * A full disk: the unpacking fails with the file and the reason, and leaves
 * no partial file. (Root only: a small tmpfs in a mount namespace of this
 * test's own.)
 */
static void
test_disk_full(void **state)
{
	struct strbuf tar = STRBUF_INIT;
	struct archive_report r;
	char *dest = test_tmp("full"), *big = xmalloc(256 << 10);
	enum status rc;

	if (geteuid() != 0 || unshare(CLONE_NEWNS) ||
	    mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL)) {
		free(big);
		free(dest);
		skip();
	}
	mkdir_p(dest, 0755);
	assert_int_equal(mount("fswb-test", dest, "tmpfs", 0, "size=64k"), 0);
	memset(big, 'x', 256 << 10);
	tar_member(&tar, "./small", '0', 0644, NULL, "fits", 4);
	tar_member(&tar, "./generic/001.full", '0', 0644, NULL, big, 256 << 10);
	tar_end(&tar);
	{
		char *gz = test_tmp("full.tar.gz");

		write_gz(gz, &tar);
		archive_report_init(&r);
		rc = archive_unpack(gz, dest, ARCHIVE_MAX_DEFAULT, &r);
		free(gz);
	}
	assert_int_equal(rc, ERR_IO);
	assert_non_null(strstr(error_msg(), "cannot write 'generic/001.full'"));
	assert_non_null(strstr(error_msg(), "No space left on device"));
	assert_true(S_ISREG(lmode(dest, "small")));
	assert_int_equal(lmode(dest, "generic/001.full"), 0);
	umount(dest);
	archive_report_release(&r);
	strbuf_release(&tar);
	free(big);
	free(dest);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_files_and_modes),
		cmocka_unit_test(test_hostile_members_skipped),
		cmocka_unit_test(test_planted_symlink_not_followed),
		cmocka_unit_test(test_size_caps),
		cmocka_unit_test(test_damaged),
		cmocka_unit_test(test_gnu_tar),
		cmocka_unit_test(test_disk_full),
	};

	return cmocka_run_group_tests(tests, test_setup_hermetic, test_teardown_hermetic);
}
