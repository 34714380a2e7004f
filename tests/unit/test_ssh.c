/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The ssh backend's parts that need no machine: its options, checked at
 * plan time; the verdict on what the inspection of a machine printed
 * (untrusted text); one session per named machine. The connection itself
 * is tested end to end against a real sshd (tests/e2e/run-ssh.sh).
 */
#include "testlib.h"

#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "backends/ssh_int.h"
#include "core/plan.h"
#include "core/util.h"
#include "run/shards.h"

static void
set_opt(struct plan *p, const char *kv)
{
	const char *eq = strchr(kv, '=');
	char *key = xstrndup(kv, (size_t)(eq - kv));

	plan_set_backend_opt(p, key, eq + 1);
	free(key);
}

static void
expect_option(const char *kv, const char *words)
{
	struct plan p;

	plan_init(&p);
	plan_defaults(&p);
	free(p.backend);
	p.backend = xstrdup("ssh");
	set_opt(&p, kv);
	if (!words) {
		if (backend_check_options(&p) != OK)
			fail_msg("-o %s refused: %s", kv, error_msg());
	} else {
		assert_int_equal(backend_check_options(&p), ERR_INVALID);
		if (!strstr(error_msg(), words))
			fail_msg("-o %s: '%s' does not say '%s'", kv, error_msg(), words);
	}
	plan_release(&p);
}

static void
test_options(void **state)
{
	(void)state;
	expect_option("host=lab-box.example.org", NULL);
	expect_option("host=10.0.0.1,10.0.0.2", NULL);
	expect_option("host=-oProxyCommand=x", "not a host name");
	expect_option("host=a;b", "not a host name");
	expect_option("host=a,a", "named twice");
	expect_option("port=0", "1 to 65535");
	expect_option("port=22x", "1 to 65535");
	expect_option("user=$(id)", "a user name");
	expect_option("key=/nonexistent/id_ed25519", "no readable key file");
	expect_option("hostkey=yes", "strict");
	expect_option("hostkey=accept-new", NULL);
	expect_option("hostkey=SHA256:fp+v7DPtKswKoo+FwNaOSrE108S2rvwW0SVjUJdHI7s", NULL);
	expect_option("hostkey=SHA256:x;y", "fingerprint");
	expect_option("fstests=relative/xfstests", "absolute path");
	expect_option("fstests=/root/xfs'tests", "absolute path");
	expect_option("fstests=/root/../etc", "absolute path");
	expect_option("fstests=/root/xfstests-dev", NULL);
	expect_option("test=/dev/nvme0n1p1", NULL);
	expect_option("test=/dev/../etc/passwd", "/dev/");
	expect_option("scratch=/home/x.img", "/dev/");
	expect_option("pool=/dev/sdb,/dev/sdc", NULL);
	expect_option("pool=/dev/sdb,sdc", "/dev/");
	expect_option("wipe=/dev/sdb,/dev/sd c", "/dev/");
	expect_option("accel=tcg", "takes no option 'accel'");
	expect_option("hosts=/nonexistent/hosts", "/nonexistent/hosts");
}

/* A hosts file: one machine a line, comments and blank lines skipped, each once. */
static void
test_hosts_file(void **state)
{
	char *good = test_tmp("hosts"), *bad = test_tmp("bad");
	char *kv;
	struct plan p;

	(void)state;
	test_write(good, "# the lab\nbox1.lab  # NVMe\n\n  box2.lab\r\nbox3\n");
	test_write(bad, "box1\nbox1 ; rm -rf /\n");
	kv = xasprintf("hosts=%s", good);
	expect_option(kv, NULL);
	free(kv);
	kv = xasprintf("hosts=%s", bad);
	expect_option(kv, "not a host name");
	free(kv);
	plan_init(&p);
	plan_defaults(&p);
	free(p.backend);
	p.backend = xstrdup("ssh");
	plan_set_backend_opt(&p, "hosts", good);
	assert_int_equal(backend_find("ssh")->machines(&p), 3);
	plan_release(&p);
	free(good);
	free(bad);
}

static enum status
verdict(const char *text, const char *wipe)
{
	struct strvec w = STRVEC_INIT;
	struct ssh_machine m = { "root@box:22", "/root/xfstests", "/var/tmp/fswb", &w };
	enum status rc;

	if (wipe)
		strvec_split(&w, wipe, ",");
	rc = ssh_inspect_verdict(text, &m, NULL);
	strvec_clear(&w);
	return rc;
}

static void
expect_says(const char *text, const char *wipe, const char *const *words)
{
	assert_int_equal(verdict(text, wipe), ERR_INVALID);
	for (; *words; words++)
		if (!strstr(error_msg(), *words))
			fail_msg("'%s' does not say '%s'", error_msg(), *words);
}

static void
test_verdict(void **state)
{
	(void)state;
	/* a clean machine with confirmed devices */
	assert_int_equal(verdict("OS\tdebian\t\nDEV\t/dev/vdb\t8589934592\t-\t-\t-\t-\t-\n"
				 "DEV\t/dev/vdc\t8589934592\text4\tdata\t-\t-\t-\n",
				 "/dev/vdb,/dev/vdc"),
			 OK);
	/* not confirmed: what each holds, and the flag that confirms */
	expect_says("DEV\t/dev/vdb\t8589934592\text4\tdata\t-\t-\t-\nDEV\t/dev/"
		    "vdc\t1024\t-\t-\t-\t-\t-\n",
		    "/dev/vdc",
		    (const char *const[]){ "/dev/vdb (8.0 GiB, ext4 labelled 'data')",
					   "--yes-destroy /dev/vdb", NULL });
	/* mounted, root, swap, held: refused even when confirmed */
	expect_says("DEV\t/dev/sda\t1\text4\t-\t/\t-\t-\n", "/dev/sda",
		    (const char *const[]){ "root file system", NULL });
	expect_says("DEV\t/dev/sdb\t1\txfs\t-\t/home\t-\t-\n", "/dev/sdb",
		    (const char *const[]){ "mounted on /home", "unmount it", NULL });
	expect_says("DEV\t/dev/sdc\t1\tswap\t-\t-\tyes\t-\n", "/dev/sdc",
		    (const char *const[]){ "swap", NULL });
	expect_says("DEV\t/dev/sdd\t1\tLVM2_member\t-\t-\t-\tdm-0 \n", "/dev/sdd",
		    (const char *const[]){ "in use by dm-0", NULL });
	expect_says("DEV\t/dev/nope\tnone\n", "/dev/nope",
		    (const char *const[]){ "/dev/nope is not a block device", NULL });
	/* no fstests, missing tools with the distribution's install command */
	expect_says("OS\tubuntu\tdebian\nNOCHECK\nMISSING\txfs_io\nMISSING\tmkfs.btrfs\n", NULL,
		    (const char *const[]){ "no fstests in /root/xfstests",
					   "apt-get install xfsprogs btrfs-progs", NULL });
	expect_says("OS\trocky\trhel centos fedora\nMISSING\tmkfs.xfs\nMISSING\txfs_io\n", NULL,
		    (const char *const[]){ "dnf install xfsprogs", NULL });
	/* hostile text: escapes never reach the message, unknown lines are ignored */
	expect_says("OS\t\033]0;pwned\007\t\nGARBAGE\nDEV\t/dev/vdb\t1\t\033[2J\t-\t-\t-\t-\n",
		    NULL, (const char *const[]){ "/dev/vdb", NULL });
	if (strchr(error_msg(), '\033'))
		fail_msg("an escape reached the message: %s", error_msg());
	assert_int_equal(verdict("", NULL), OK);
}

/* What a front end asks the user: the devices to confirm, apart from what blocks the run. */
static void
test_verdict_to_confirm(void **state)
{
	struct strvec w = STRVEC_INIT;
	struct ssh_machine m = { "root@box:22", "/root/xfstests", "/var/tmp/fswb", &w };
	struct ssh_verdict v = { false, STRVEC_INIT, STRVEC_INIT };

	(void)state;
	strvec_push(&w, "/dev/vdb");
	assert_int_equal(ssh_inspect_verdict("DEV\t/dev/vdb\t1\t-\t-\t-\t-\t-\n"
					     "DEV\t/dev/vdc\t1073741824\txfs\t-\t-\t-\t-\n",
					     &m, &v),
			 ERR_INVALID);
	assert_false(v.blocked);
	assert_int_equal(v.unconfirmed.n, 1);
	assert_string_equal(v.unconfirmed.v[0], "/dev/vdc");
	assert_string_equal(v.holds.v[0], "/dev/vdc (1.0 GiB, xfs)");
	strvec_clear(&v.unconfirmed);
	strvec_clear(&v.holds);
	/* a mounted device blocks: confirming cannot help */
	assert_int_equal(ssh_inspect_verdict("DEV\t/dev/vdb\t1\t-\t-\t/mnt\t-\t-\n", &m, &v),
			 ERR_INVALID);
	assert_true(v.blocked);
	strvec_clear(&v.unconfirmed);
	strvec_clear(&v.holds);
	strvec_clear(&w);
}

static void
test_one_session_per_machine(void **state)
{
	struct plan p;
	struct host_size host = { .cores = 64, .mem = 256ull << 30 };
	struct strbuf why = STRBUF_INIT;
	const struct backend_ops *ssh = backend_find("ssh");

	(void)state;
	plan_init(&p);
	plan_defaults(&p);
	set_opt(&p, "host=a,b,c");
	assert_int_equal(shards_choose(&p, ssh, &host, 0, &why), 3);
	assert_non_null(strstr(why.buf, "one on each of the ssh backend's 3 machines"));
	strbuf_reset(&why);
	/* never more sessions than machines, fewer when asked or fewer tests */
	p.shards = 5;
	assert_int_equal(shards_choose(&p, ssh, &host, 0, &why), 3);
	assert_non_null(strstr(why.buf, "name more machines"));
	p.shards = 2;
	assert_int_equal(shards_choose(&p, ssh, &host, 0, NULL), 2);
	p.shards = 0;
	assert_int_equal(shards_choose(&p, ssh, &host, 1, NULL), 1);
	strbuf_release(&why);
	plan_release(&p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_options),
		cmocka_unit_test_setup_teardown(test_hosts_file, test_setup_hermetic,
						test_teardown_hermetic),
		cmocka_unit_test(test_verdict),
		cmocka_unit_test(test_verdict_to_confirm),
		cmocka_unit_test(test_one_session_per_machine),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
