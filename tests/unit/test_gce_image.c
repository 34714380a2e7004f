/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The GCE disk image: its layout (1 MiB aligned, whole GiB), its kernel
 * command line (root=UUID= of the appliance), what is left on a failure, a
 * small image made and read back (GPT, the ESP's files, the appliance's
 * bytes at partition 2, sparse, one tar member disk.raw), and the
 * initramfs packing GCE's disk and network modules.
 *
 * A real appliance's image, imported and booted under OVMF, is in
 * tests/e2e/run-gce.sh.
 */
#include "testlib.h"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backends/gce_image.h"
#include "core/loop.h"
#include "core/paths.h"
#include "core/spawn.h"
#include "core/util.h"
#include "rootfs/initramfs.h"

#define MIB (UINT64_C(1) << 20)
#define GIB (UINT64_C(1) << 30)

static struct loop *loop;

static int
setup(void **state)
{
	test_setup_hermetic(state);
	loop = loop_new();
	return 0;
}

static int
teardown(void **state)
{
	loop_free(loop);
	return test_teardown_hermetic(state);
}

/* Run argv; its exit status (-1: could not start), its output in out (may be NULL). */
static int
sh(const char *const *argv, struct strbuf *out)
{
	struct child_exit ex;

	if (spawn_run(loop, argv, NULL, true, 1u << 20, out, &ex) != OK) {
		error_clear();
		return -1;
	}
	return ex.exited ? ex.code : 128;
}

static bool
have(const char *prog)
{
	return path_has_program(prog);
}

/* A small ext4 image with a known UUID, or NULL (no mkfs.ext4). */
static char *
small_ext4(const char *name, const char *uuid, const char *size)
{
	char *img = test_tmp(name), *root = test_tmp("ext4-root"), *init;

	mkdir_p(root, 0755);
	init = path_join(root, "hello");
	write_file_atomic(init, "hello from the appliance\n", 25, 0644);
	free(init);
	unlink(img);
	if (sh((const char *const[]){ "mkfs.ext4", "-q", "-F", "-U", uuid, "-L", "fswb-t", "-d",
				      root, img, size, NULL },
	       NULL)) {
		free(img);
		img = NULL;
	}
	free(root);
	return img;
}

static void
test_layout(void **state)
{
	struct gce_layout l;

	(void)state;
	gce_image_layout(1365245952, &l); /* a real appliance: 1302 MiB */
	assert_int_equal(l.esp_start, MIB);
	assert_int_equal(l.esp_size, 100 * MIB);
	assert_int_equal(l.root_start, 101 * MIB);
	assert_int_equal(l.root_size, 1302 * MIB);
	assert_int_equal(l.disk_size, 2 * GIB);

	/* the partition is whole MiB; the backup GPT needs room after it */
	gce_image_layout(922 * MIB, &l);
	assert_int_equal(l.disk_size, GIB);
	gce_image_layout(922 * MIB + 1, &l);
	assert_int_equal(l.root_size, 923 * MIB);
	assert_int_equal(l.disk_size, 2 * GIB);
	gce_image_layout(5 * GIB, &l);
	assert_int_equal(l.disk_size, 6 * GIB);
	for (uint64_t a = 1; a < 10 * GIB; a = a * 3 + 12345) {
		gce_image_layout(a, &l);
		assert_int_equal(l.disk_size % GIB, 0);
		assert_int_equal(l.root_start % MIB, 0);
		assert_true(l.root_size >= a);
		assert_true(l.root_start + l.root_size + 33 * 512 <= l.disk_size);
	}
}

static void
test_cmdline(void **state)
{
	const char *uuid = "0b6f2a5e-1c3d-4e5f-8a9b-0c1d2e3f4a5b";
	char *img = small_ext4("uuid.img", uuid, "8M"), *c, got[37];
	char *notfs = test_tmp("notfs.img");

	(void)state;
	if (!img)
		skip();
	assert_int_equal(gce_image_uuid(img, got), OK);
	assert_string_equal(got, uuid);
	c = gce_image_cmdline(img, NULL);
	assert_string_equal(c,
			    "console=ttyS0,115200 root=UUID=0b6f2a5e-1c3d-4e5f-8a9b-0c1d2e3f4a5b "
			    "rw rootfstype=ext4 init=/usr/local/sbin/fswb-init panic=-1 "
			    "printk.devkmsg=on systemd.show_status=0 fswb.gce=1");
	free(c);
	c = gce_image_cmdline(img, "");
	assert_true(str_endswith(c, "fswb.gce=1"));
	free(c);
	c = gce_image_cmdline(img, "fswb.debug=shell quiet");
	assert_true(str_endswith(c, "fswb.gce=1 fswb.debug=shell quiet"));
	free(c);

	write_file_atomic(notfs, "not a filesystem", 16, 0644);
	assert_null(gce_image_cmdline(notfs, NULL));
	assert_non_null(strstr(error_msg(), "not an ext4 filesystem"));
	assert_null(gce_image_cmdline("/nonexistent/root.img", NULL));
	assert_non_null(strstr(error_msg(), "/nonexistent/root.img"));
	error_clear();
	free(notfs);
	free(img);
}

/* Nothing but the names in keep is in dir. */
static void
assert_only(const char *dir, const char *const *keep)
{
	struct strbuf out = STRBUF_INIT;
	struct strvec names = STRVEC_INIT;

	assert_int_equal(sh((const char *const[]){ "ls", "-A", dir, NULL }, &out), 0);
	strvec_split(&names, out.buf ? out.buf : "", "\n");
	for (size_t i = 0; i < names.n; i++) {
		bool ok = false;

		for (size_t j = 0; keep[j]; j++)
			ok = ok || !strcmp(names.v[i], keep[j]);
		if (!ok)
			fail_msg("'%s' was left in %s", names.v[i], dir);
	}
	strvec_clear(&names);
	strbuf_release(&out);
}

static void
test_make_errors(void **state)
{
	char *dir = test_tmp("errors"), *out,
	     *app = small_ext4("err.img", "11111111-2222-4333-8444-555555555555", "8M");
	char *kernel;
	struct gce_image_in in = { 0 };

	(void)state;
	if (!app)
		skip();
	mkdir_p(dir, 0755);
	out = path_join(dir, "image.tar.gz");
	kernel = path_join(dir, "vmlinuz");
	write_file_atomic(kernel, "not really a kernel", 19, 0644);

	in.appliance = app;
	in.kernel = "/nonexistent/vmlinuz";
	assert_int_equal(gce_image_make(loop, &in, out), ERR_NOTFOUND);
	assert_non_null(strstr(error_msg(), "/nonexistent/vmlinuz"));

	in.kernel = kernel;
	in.initrd = "/nonexistent/initrd";
	assert_int_equal(gce_image_make(loop, &in, out), ERR_NOTFOUND);
	assert_non_null(strstr(error_msg(), "initramfs"));

	in.initrd = NULL;
	in.cmdline = "a=$(reboot)";
	assert_int_equal(gce_image_make(loop, &in, out), ERR_INVALID);
	in.cmdline = "x\nlinux /evil";
	assert_int_equal(gce_image_make(loop, &in, out), ERR_INVALID);

	in.cmdline = NULL;
	in.appliance = kernel; /* not ext4 */
	assert_int_equal(gce_image_make(loop, &in, out), ERR_INVALID);
	assert_non_null(strstr(error_msg(), "not an ext4"));

	/* a failure late (the output's directory cannot take the tar) leaves nothing either */
	{
		char *bad = path_join(dir, "no/such/dir/image.tar.gz");

		in.appliance = app;
		assert_int_not_equal(gce_image_make(loop, &in, bad), OK);
		free(bad);
	}
	error_clear();
	assert_only(dir, (const char *const[]){ "vmlinuz", NULL });
	assert_no_children();
	free(kernel);
	free(out);
	free(app);
	free(dir);
}

static uint32_t
get32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t
get64(const unsigned char *p)
{
	return get32(p) | (uint64_t)get32(p + 4) << 32;
}

static uint32_t
crc32_ref(const unsigned char *p, size_t n)
{
	uint32_t c = 0xffffffffu;

	while (n--) {
		c ^= *p++;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0xedb88320u : c >> 1;
	}
	return ~c;
}

/* One GPT header (at lba) and its entries: valid, and the two partitions where l says. */
static void
check_gpt(int fd, uint64_t lba, const struct gce_layout *l)
{
	unsigned char h[512], e[128 * 128], hz[92];
	uint64_t last = l->disk_size / 512 - 1;

	assert_int_equal(pread(fd, h, sizeof(h), (off_t)(lba * 512)), (ssize_t)sizeof(h));
	assert_memory_equal(h, "EFI PART", 8);
	memcpy(hz, h, 92);
	memset(hz + 16, 0, 4);
	assert_int_equal(get32(h + 16), crc32_ref(hz, 92));
	assert_int_equal(get64(h + 24), lba);
	assert_int_equal(get64(h + 32), lba == 1 ? last : 1);
	assert_int_equal(get64(h + 40), 34);
	assert_int_equal(get64(h + 48), last - 33);
	assert_int_equal(get32(h + 80), 128);
	assert_int_equal(get32(h + 84), 128);
	assert_int_equal(pread(fd, e, sizeof(e), (off_t)(get64(h + 72) * 512)), (ssize_t)sizeof(e));
	assert_int_equal(get32(h + 88), crc32_ref(e, sizeof(e)));
	/* EFI System, Linux filesystem */
	assert_memory_equal(e, "\x28\x73\x2a\xc1\x1f\xf8\xd2\x11\xba\x4b\x00\xa0\xc9\x3e\xc9\x3b",
			    16);
	assert_int_equal(get64(e + 32), l->esp_start / 512);
	assert_int_equal(get64(e + 40), (l->esp_start + l->esp_size) / 512 - 1);
	assert_memory_equal(e + 128,
			    "\xaf\x3d\xc6\x0f\x83\x84\x72\x47\x8e\x79\x3d\x69\xd8\x47\x7d\xe4", 16);
	assert_int_equal(get64(e + 128 + 32), l->root_start / 512);
	assert_int_equal(get64(e + 128 + 40), (l->root_start + l->root_size) / 512 - 1);
	assert_true(get64(e + 128 + 40) <= last - 33);
	for (size_t i = 2 * 128; i < sizeof(e); i++)
		assert_int_equal(e[i], 0);
}

static void
test_make_small(void **state)
{
	char *dir = test_tmp("small"), *out, *kernel, *initrd, *app, *x, *disk, *at;
	struct strbuf o = STRBUF_INIT;
	struct gce_image_in in = { 0 };
	struct gce_layout l;
	unsigned char mbr[512];
	struct stat st, ast;
	int fd;

	(void)state;
	if (!(have("grub-mkstandalone") || have("grub2-mkstandalone")) || !have("mformat") ||
	    !have("mcopy") || !path_is_dir("/usr/lib/grub/x86_64-efi"))
		skip();
	app = small_ext4("small.img", "0b6f2a5e-1c3d-4e5f-8a9b-0c1d2e3f4a5b", "40M");
	if (!app)
		skip();
	mkdir_p(dir, 0755);
	out = path_join(dir, "image.tar.gz");
	kernel = path_join(dir, "vmlinuz");
	initrd = path_join(dir, "initrd.img");
	write_file_atomic(kernel, "not really a kernel\n", 20, 0644);
	write_file_atomic(initrd, "not really an initramfs\n", 24, 0644);
	in.appliance = app;
	in.kernel = kernel;
	in.initrd = initrd;
	in.cmdline = "fswb.debug=shell";
	if (gce_image_make(loop, &in, out) != OK)
		fail_msg("%s", error_msg());
	assert_only(dir, (const char *const[]){ "vmlinuz", "initrd.img", "image.tar.gz", NULL });

	/* one member, disk.raw */
	assert_int_equal(sh((const char *const[]){ "tar", "-tzf", out, NULL }, &o), 0);
	assert_string_equal(o.buf, "disk.raw\n");
	x = test_tmp("small-x");
	mkdir_p(x, 0755);
	assert_int_equal(sh((const char *const[]){ "tar", "-xzf", out, "-C", x, NULL }, NULL), 0);
	disk = path_join(x, "disk.raw");
	assert_int_equal(stat(disk, &st), 0);
	assert_int_equal(stat(app, &ast), 0);
	gce_image_layout((uint64_t)ast.st_size, &l);
	assert_int_equal(st.st_size, GIB);
	assert_int_equal((uint64_t)st.st_size, l.disk_size);
	assert_true((uint64_t)st.st_blocks * 512 < 200 * MIB); /* sparse, as tar gave it back */

	fd = open(disk, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, mbr, 512, 0), 512);
	assert_int_equal(mbr[446 + 4], 0xee);
	assert_int_equal(mbr[510], 0x55);
	assert_int_equal(mbr[511], 0xaa);
	check_gpt(fd, 1, &l);
	check_gpt(fd, l.disk_size / 512 - 1, &l);
	close(fd);

	/* partition 2: the appliance's bytes */
	{
		char *skip1 =
			xasprintf("--ignore-initial=%llu:0", (unsigned long long)l.root_start);
		char *n = xasprintf("--bytes=%llu", (unsigned long long)ast.st_size);

		assert_int_equal(sh((const char *const[]){ "cmp", skip1, n, disk, app, NULL }, &o),
				 0);
		free(skip1);
		free(n);
	}
	/* partition 1: FAT with the boot loader, the kernel, the initramfs */
	at = xasprintf("%s@@%llu", disk, (unsigned long long)l.esp_start);
	strbuf_reset(&o);
	assert_int_equal(sh((const char *const[]){ "mtype", "-i", at, "::/vmlinuz", NULL }, &o), 0);
	assert_string_equal(o.buf, "not really a kernel\n");
	strbuf_reset(&o);
	assert_int_equal(sh((const char *const[]){ "mtype", "-i", at, "::/initrd.img", NULL }, &o),
			 0);
	assert_string_equal(o.buf, "not really an initramfs\n");
	strbuf_reset(&o);
	assert_int_equal(
		sh((const char *const[]){ "mdir", "-b", "-i", at, "::/EFI/BOOT", NULL }, &o), 0);
	assert_non_null(strstr(o.buf, "BOOTX64.EFI"));
	{
		/* the EFI program, with the command line in its embedded grub.cfg */
		char *efi = path_join(x, "BOOTX64.EFI");
		char *text = NULL;
		size_t len = 0;

		assert_int_equal(sh((const char *const[]){ "mcopy", "-i", at,
							   "::/EFI/BOOT/BOOTX64.EFI", efi, NULL },
				    NULL),
				 0);
		assert_int_equal(read_file(efi, 64u << 20, &text, &len), OK);
		assert_true(len > 4096 && text[0] == 'M' && text[1] == 'Z');
		free(text);
		free(efi);
	}
	free(at);
	free(disk);
	free(x);
	strbuf_release(&o);
	assert_no_children();
	free(kernel);
	free(initrd);
	free(out);
	free(app);
	free(dir);
}

/* The initramfs of the installed kernel packs what a GCE guest needs. */
static void
test_initramfs_gce_modules(void **state)
{
	glob_t g;
	struct initramfs_plan p;
	char *version = NULL, *dir = NULL;

	(void)state;
	if (glob("/lib/modules/*/modules.dep", 0, NULL, &g) == 0 && g.gl_pathc > 0) {
		dir = xstrndup(g.gl_pathv[0], strlen(g.gl_pathv[0]) - strlen("/modules.dep"));
		version = xstrdup(strrchr(dir, '/') + 1);
	}
	globfree(&g);
	if (!dir)
		skip();
	assert_int_equal(initramfs_plan(version, dir, &p), OK);
	for (const char *const *m = (const char *const[]){ "virtio_scsi.ko", "sd_mod.ko", NULL };
	     *m; m++) {
		bool boot = false, packed = false;
		char *mp = xasprintf("kernel/drivers/scsi/%s", *m);

		for (size_t i = 0; i < p.boot.n; i++)
			boot = boot || str_endswith(p.boot.v[i], *m);
		for (size_t i = 0; i < p.modules.n; i++)
			packed = packed || str_startswith(p.modules.v[i], mp);
		/* a module of this kernel: loaded at boot; built in: nothing to do */
		if (packed && !boot)
			fail_msg("%s is packed but not loaded at boot", *m);
		free(mp);
	}
	for (const char *const *m = (const char *const[]){ "kernel/drivers/net/virtio_net.ko",
							   "kernel/net/core/failover.ko", NULL };
	     *m; m++) {
		char *full = path_join(dir, *m);
		bool packed = false;

		for (size_t i = 0; i < p.modules.n; i++)
			packed = packed || str_startswith(p.modules.v[i], *m);
		if (path_exists(full) && !packed)
			fail_msg("%s is a module of %s but not packed", *m, version);
		free(full);
	}
	/* the qemu guest's boot is unchanged: virtio_blk is loaded first of the disks */
	initramfs_plan_release(&p);
	free(dir);
	free(version);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_cmdline),
		cmocka_unit_test(test_make_errors),
		cmocka_unit_test(test_make_small),
		cmocka_unit_test(test_initramfs_gce_modules),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
