/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The adb backend's parts that need no device: what the adb server and the
 * device say (devices -l, shell v2 packets, df), read as untrusted text;
 * ABIs; options checked at plan time. Real devices (an adbd written for the
 * tests, behind the real adb server) run end to end in tests/e2e/run-adb.sh.
 */
#include "testlib.h"

#include <stdlib.h>
#include <string.h>

#include "backends/adb_int.h"
#include "backends/backend.h"
#include "core/plan.h"
#include "core/util.h"

static void
test_devices(void **state)
{
	struct adb_device *d;
	size_t n = adb_devices_parse(
		"127.0.0.1:5555         device product:sdk_x86_64 model:Pixel_6 device:oriole "
		"transport_id:3\n"
		"emulator-5554\tunauthorized transport_id:1\n"
		"\n"
		"-bad device\n"
		"R58M\x1b[31m device\n"
		"0123456789ABCDEF       device product:p model:\x1b]0;x\x07m device:d\n"
		"lonely\n",
		&d);

	(void)state;
	assert_int_equal(n, 3);
	assert_string_equal(d[0].serial, "127.0.0.1:5555");
	assert_string_equal(d[0].state, "device");
	assert_string_equal(d[0].model, "Pixel_6");
	assert_string_equal(d[0].product, "sdk_x86_64");
	assert_string_equal(d[0].device, "oriole");
	assert_string_equal(d[1].serial, "emulator-5554");
	assert_string_equal(d[1].state, "unauthorized");
	assert_null(d[1].model);
	assert_string_equal(d[2].serial, "0123456789ABCDEF");
	/* a terminal escape in a model name never reaches the screen */
	assert_null(strchr(d[2].model, '\x1b'));
	assert_null(strchr(d[2].model, '\x07'));
	adb_devices_free(d, n);
	assert_int_equal(adb_devices_parse(NULL, &d), 0);
	adb_devices_free(d, 0);
}

static void
test_v2_packets(void **state)
{
	const char pk[] = "\x01\x03\x00\x00\x00"
			  "abc"
			  "\x03\x01\x00\x00\x00"
			  "\x07"
			  "\x02\xff\xff";
	const char *data;
	size_t len, used;
	int id;

	(void)state;
	used = adb_v2_next(pk, sizeof(pk) - 1, &id, &data, &len);
	assert_int_equal(used, 8);
	assert_int_equal(id, 1);
	assert_int_equal(len, 3);
	assert_memory_equal(data, "abc", 3);
	used = adb_v2_next(pk + 8, sizeof(pk) - 1 - 8, &id, &data, &len);
	assert_int_equal(used, 6);
	assert_int_equal(id, 3);
	assert_int_equal((unsigned char)data[0], 7);
	/* a header cut short: not complete, never read past the buffer */
	assert_int_equal(adb_v2_next(pk + 14, 3, &id, &data, &len), 0);
	/* one that promises 4 GiB or just over 1 MiB: a broken stream, never buffered */
	assert_int_equal(adb_v2_next("\x02\xff\xff\xff\xff", 5, &id, &data, &len), SIZE_MAX);
	assert_int_equal(adb_v2_next("\x01\x01\x00\x10\x00", 5, &id, &data, &len), SIZE_MAX);
	assert_int_equal(adb_v2_next("\x01\x00\x00\x10\x00", 5, &id, &data, &len), 0);
	assert_int_equal(adb_v2_next("", 0, &id, &data, &len), 0);
}

static void
test_df(void **state)
{
	uint64_t kib = 0;

	(void)state;
	assert_true(adb_df_free_kib("Filesystem     1K-blocks    Used Available Use% Mounted on\n"
				    "/dev/block/dm-5 116318304 9218048 107100256   8% /data\n",
				    &kib));
	assert_int_equal(kib, 107100256);
	assert_true(adb_df_free_kib("Filesystem 1K-blocks Used Available Use% Mounted on\n"
				    "tmpfs 65536 65536 0 100% /data\n",
				    &kib));
	assert_int_equal(kib, 0);
	assert_false(adb_df_free_kib("df: /data: Permission denied\n", &kib));
	assert_false(adb_df_free_kib("", &kib));
	assert_false(adb_df_free_kib("a b c -5 e\n", &kib));
}

static void
test_abi(void **state)
{
	(void)state;
	assert_string_equal(adb_abi_arch("arm64-v8a"), "arm64");
	assert_string_equal(adb_abi_arch("x86_64"), "x86_64");
	assert_null(adb_abi_arch("armeabi-v7a"));
	assert_null(adb_abi_arch("x86"));
	assert_null(adb_abi_arch(""));
	assert_null(adb_abi_arch(NULL));
}

static void
expect_opt(const char *key, const char *value, bool good)
{
	struct plan p;

	plan_init(&p);
	plan_defaults(&p);
	free(p.backend);
	p.backend = xstrdup("adb");
	plan_set_backend_opt(&p, key, value);
	if (good && backend_check_options(&p) != OK)
		fail_msg("-o %s=%s refused: %s", key, value, error_msg());
	if (!good && backend_check_options(&p) == OK)
		fail_msg("-o %s=%s accepted", key, value);
	error_clear();
	plan_release(&p);
}

static void
test_options(void **state)
{
	(void)state;
	expect_opt("serial", "127.0.0.1:5555", true);
	expect_opt("serial", "emulator-5554,R58M123", true);
	expect_opt("serial", "a b", false);
	expect_opt("serial", "x;reboot", false);
	expect_opt("serial", "$(reboot)", false);
	expect_opt("serial", "-s", false);
	expect_opt("serial", "'q'", false);
	expect_opt("workdir", "/data/fswb", true);
	expect_opt("workdir", "data/fswb", false);
	expect_opt("workdir", "/data/../system", false);
	expect_opt("workdir", "/data/f swb", false);
	expect_opt("workdir", "/", false);
	expect_opt("test", "/dev/block/by-name/userdata_b", true);
	expect_opt("test", "/dev/x`id`", false);
	expect_opt("pool", "/dev/block/sda1,/dev/block/sda2", true);
	expect_opt("wipe", "/dev/fswb/test,/dev/fswb/scratch", true);
	expect_opt("uri", "qemu:///system", false);
	expect_opt("boot", "600", true);
	expect_opt("boot", "soon", false);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_devices), cmocka_unit_test(test_v2_packets),
		cmocka_unit_test(test_df),	cmocka_unit_test(test_abi),
		cmocka_unit_test(test_options),
	};

	backends_init();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
