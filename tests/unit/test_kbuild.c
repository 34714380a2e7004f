/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kbuild: make's output, object estimates, kernel trees, images, installed
 * kernels, and configuring and building (a small fake tree, and the real
 * configuration step on Debian's linux-source tree).
 */
#include "testlib.h"

#include <dirent.h>
#include <fcntl.h>
#include <glob.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/event.h"
#include "core/loop.h"
#include "core/paths.h"
#include "core/plan.h"
#include "core/profile.h"
#include "core/spawn.h"
#include "core/util.h"
#include "kbuild/image.h"
#include "kbuild/kbuild.h"
#include "kbuild/kconfig.h"
#include "kbuild/kernel.h"

static struct loop *loop;

/* ---- helpers ---- */

static void
run_ok(const char *const *argv)
{
	struct child_exit ex = { 0 };
	struct strbuf out = STRBUF_INIT;

	assert_int_equal(spawn_run(loop, argv, NULL, true, 1 << 20, &out, &ex), OK);
	if (!(ex.exited && ex.code == 0))
		fail_msg("%s failed: %s", argv[0], out.buf);
	strbuf_release(&out);
}

static void
write_bytes(const char *path, const void *data, size_t len)
{
	assert_int_equal(write_file_atomic(path, data, len, 0644), OK);
}

static char *
read_bytes(const char *path, size_t *len)
{
	char *buf = NULL;

	assert_int_equal(read_file(path, 1u << 30, &buf, len), OK);
	return buf;
}

/* A copy of the fake tree in the scratch directory. */
static char *
fake_tree(const char *name)
{
	char *src = test_path("tests/fixtures/kbuild/fake-tree");
	char *dst = test_tmp(name);
	const char *argv[] = { "cp", "-a", src, dst, NULL };

	remove_tree(dst);
	run_ok(argv);
	free(src);
	return dst;
}

static char *
linux_tree(void)
{
	const char *cache = getenv("FSWB_TEST_CACHE");
	const char *tarball = "/usr/src/linux-source-6.1.tar.xz";
	char *dir, *mk, *tmp, *unpacked;

	if (!cache || !*cache)
		cache = "/var/tmp/fswb-test-cache";
	dir = xasprintf("%s/linux-source-6.1", cache);
	mk = path_join(dir, "Kconfig");
	if (path_exists(mk)) {
		free(mk);
		return dir;
	}
	free(mk);
	if (!path_exists(tarball)) {
		print_message(
			"# no kernel tree: %s is not installed (apt install linux-source-6.1)\n",
			tarball);
		free(dir);
		return NULL;
	}
	tmp = xasprintf("%s/unpack.%d", cache, (int)getpid());
	assert_int_equal(mkdir_p(tmp, 0755), OK);
	{
		const char *argv[] = { "tar", "-xJf", tarball, "-C", tmp, NULL };

		run_ok(argv);
	}
	unpacked = path_join(tmp, "linux-source-6.1");
	if (rename(unpacked, dir) != 0)
		assert_true(path_exists(dir));
	remove_tree(tmp);
	free(unpacked);
	free(tmp);
	return dir;
}

static struct profiles profiles;

static int
setup(void **state)
{
	char *dir;

	if (test_setup_hermetic(state))
		return -1;
	loop = loop_new();
	dir = test_path("profiles");
	if (profiles_load(dir, &profiles) != OK) {
		fprintf(stderr, "%s\n", error_msg());
		return -1;
	}
	free(dir);
	return 0;
}

static int
teardown(void **state)
{
	profiles_release(&profiles);
	loop_free(loop);
	return test_teardown_hermetic(state);
}

/* ---- make's output ---- */

static void
test_progress_recorded(void **state)
{
	char *path = test_path("tests/fixtures/kbuild/ext4-build.log");
	size_t len;
	char *text = read_bytes(path, &len);
	struct kbuild_progress p;

	/* in small uneven pieces, as a pipe delivers it */
	kbuild_progress_init(&p, 100);
	for (size_t off = 0; off < len; off += 7)
		kbuild_progress_feed(&p, text + off, len - off < 7 ? len - off : 7);
	assert_int_equal(p.objects, 59);
	assert_int_equal(p.lines, 139);
	assert_string_equal(p.current, "AR fs/ext4/built-in.a");
	assert_int_equal(p.errors.n, 0);
	assert_int_equal(p.make_errors.n, 0);
	assert_true(kbuild_progress_fraction(&p) > 0.58 && kbuild_progress_fraction(&p) < 0.60);
	kbuild_progress_release(&p);

	kbuild_progress_init(&p, 0);
	assert_true(kbuild_progress_line(&p, "  CC      fs/ext4/inode.o"));
	assert_true(kbuild_progress_line(&p, "  CC [M]  fs/xfs/xfs_buf.o"));
	assert_true(kbuild_progress_line(&p, "  AS      arch/x86/entry/entry_64.o"));
	assert_false(kbuild_progress_line(&p, "  CC [M]  fs/xfs/xfs.mod.o"));
	assert_false(kbuild_progress_line(&p, "  HOSTCC  scripts/kconfig/conf.o"));
	assert_false(kbuild_progress_line(&p, "  LD [M]  fs/xfs/xfs.ko"));
	assert_string_equal(p.current, "LD [M] fs/xfs/xfs.ko");
	assert_false(kbuild_progress_line(&p, "  CC      kernel/bounds.s"));
	assert_int_equal(p.objects, 3);
	assert_true(kbuild_progress_fraction(&p) < 0);
	p.estimate = 2;
	assert_true(kbuild_progress_fraction(&p) == 0.99);
	kbuild_progress_release(&p);
	free(text);
	free(path);
}

static void
test_progress_failure(void **state)
{
	char *path = test_path("tests/fixtures/kbuild/fail-build.log");
	size_t len;
	char *text = read_bytes(path, &len), *errs;
	struct kbuild_progress p;

	kbuild_progress_init(&p, 0);
	kbuild_progress_feed(&p, text, len);
	assert_int_equal(p.objects, 2);
	assert_int_equal(p.errors.n, 2);
	assert_non_null(strstr(p.errors.v[0], "bad.c:4:16: error:"));
	assert_non_null(strstr(p.errors.v[0], "undeclared_thing"));
	assert_non_null(strstr(p.errors.v[1], "control reaches end of non-void function"));
	assert_int_equal(p.make_errors.n, 3);
	assert_non_null(strstr(p.make_errors.v[0], "Error 1"));
	errs = kbuild_progress_errors(&p);
	assert_true(str_startswith(errs, "  /var/tmp/"));
	assert_null(strstr(errs, "Waiting for unfinished jobs"));
	free(errs);
	kbuild_progress_release(&p);
	free(text);
	free(path);
}

/* ---- the object estimate ---- */

static void
test_estimate_small(void **state)
{
	char *root = test_tmp("est");
	struct kconfig_values *v = kconfig_values_new();
	size_t n;
	char *p;
	static const char *const files[] = {
		"Kbuild",
		"obj-y += a/\nobj-$(CONFIG_B) += b/\nobj-$(CONFIG_OFF) += off/\n",
		"a/Makefile",
		"obj-y := one.o two.o\n"
		"obj-$(CONFIG_C) += comp.o\n"
		"comp-y := c1.o c2.o \\\n\tc3.o\n"
		"comp-$(CONFIG_OFF) += c4.o\n"
		"ccflags-y += -DX=1 -Iinclude\n"
		"hostprogs += tool\n"
		"ifdef CONFIG_D\n"
		"obj-y += d.o\n"
		"else\n"
		"obj-y += notd.o\n"
		"endif\n"
		"ifeq ($(CONFIG_B),m)\n"
		"obj-y += bm.o\n"
		"endif\n"
		"ifneq ($(CC_THING),)\n"
		"obj-y += unknown.o\n"
		"endif\n",
		"b/Kbuild",
		"obj-m += bmod.o # a comment\nobj-$(subst m,y,$(CONFIG_B)) += bsub/\n",
		"b/Makefile",
		"obj-y += never-read.o\n",
		"b/bsub/Makefile",
		"lib-y += l.o\n",
		"off/Makefile",
		"obj-y += o1.o o2.o\n",
		"Makefile",
		"libs-y := lib/\n",
		"arch/x86/Makefile",
		"core-y += arch/x86/\ndrivers-$(CONFIG_OFF) += arch/x86/pci/\n",
		"arch/x86/Kbuild",
		"obj-y += x.o\n",
		"lib/Makefile",
		"lib-y := string.o\n",
		NULL
	};

	for (size_t i = 0; files[i]; i += 2) {
		p = path_join(root, files[i]);
		test_write(p, files[i + 1]);
		free(p);
	}
	assert_int_equal(kconfig_values_parse(v, "CONFIG_B=m\nCONFIG_C=y\nCONFIG_D=y\n", "t"), OK);
	assert_int_equal(kbuild_estimate(root, "x86", v, NULL, &n), OK);
	/* a: one two c1 c2 c3 d bm unknown (8), b: bmod l (2), x, string */
	assert_int_equal(n, 12);
	assert_int_equal(kbuild_estimate(root, "x86", v, "a", &n), OK);
	assert_int_equal(n, 8);
	kconfig_values_set(v, "D", "n");
	kconfig_values_set(v, "C", "n");
	assert_int_equal(kbuild_estimate(root, "x86", v, "a", &n), OK);
	assert_int_equal(n, 5); /* one two notd bm unknown */
	kconfig_values_free(v);
	free(root);
}

static void
test_estimate_linux(void **state)
{
	char *tree = linux_tree();
	char *cfgp = test_path("tests/fixtures/kbuild/ext4-build.config");
	char *logp = test_path("tests/fixtures/kbuild/ext4-build.log");
	struct kconfig_values *v = kconfig_values_new();
	size_t n, in_log = 0, len;
	char *log;

	if (!tree) {
		skip();
		return;
	}
	log = read_bytes(logp, &len);
	for (const char *p = log; (p = strstr(p, "\n  CC      fs/ext4/")); p++)
		in_log++;
	assert_int_equal(kconfig_values_load(v, cfgp), OK);
	assert_int_equal(kbuild_estimate(tree, "x86", v, "fs/ext4", &n), OK);
	assert_int_equal(n, in_log); /* what the recorded build really compiled there */
	kconfig_values_set(v, "EXT4_FS_POSIX_ACL", "n");
	assert_int_equal(kbuild_estimate(tree, "x86", v, "fs/ext4", &n), OK);
	assert_int_equal(n, in_log - 1); /* acl.o */
	kconfig_values_set(v, "EXT4_FS", "n");
	assert_int_equal(kbuild_estimate(tree, "x86", v, "fs", &n), OK);
	{
		size_t with_ext4;

		kconfig_values_set(v, "EXT4_FS", "y");
		assert_int_equal(kbuild_estimate(tree, "x86", v, "fs", &with_ext4), OK);
		assert_int_equal(with_ext4 - n, in_log - 1);
	}
	assert_int_equal(kbuild_estimate(tree, "x86", v, NULL, &n), OK);
	assert_true(n > 1500 && n < 6000);
	free(log);
	kconfig_values_free(v);
	free(cfgp);
	free(logp);
	free(tree);
}

/* ---- trees ---- */

static void
test_tree_check(void **state)
{
	char *dir = test_tmp("notatree"), *p, *version = NULL;
	char *fake = test_path("tests/fixtures/kbuild/fake-tree");
	char *tree;

	assert_int_equal(kernel_tree_check(dir, NULL), ERR_NOTFOUND);
	assert_non_null(strstr(error_msg(), "does not exist"));
	p = path_join(dir, "Makefile");
	test_write(p, "all:\n\techo hi\n");
	free(p);
	assert_int_equal(kernel_tree_check(dir, &version), ERR_INVALID);
	assert_null(version);
	assert_non_null(strstr(error_msg(),
			       "is not a kernel tree (its Makefile has no VERSION "
			       "and PATCHLEVEL lines, no Kconfig, no arch/ directory)"));
	p = path_join(dir, "Makefile");
	test_write(p, "VERSION = 6\nPATCHLEVEL = 2\nSUBLEVEL = 0\nEXTRAVERSION = -rc3\n");
	free(p);
	p = path_join(dir, "arch/x86/Kconfig");
	test_write(p, "\n");
	free(p);
	assert_int_equal(kernel_tree_check(dir, NULL), ERR_INVALID);
	assert_non_null(strstr(error_msg(), "(no Kconfig)"));
	assert_false(kernel_is_tree(dir));
	p = path_join(dir, "Kconfig");
	test_write(p, "\n");
	free(p);
	assert_int_equal(kernel_tree_check(dir, &version), OK);
	assert_string_equal(version, "6.2.0-rc3");
	free(version);
	assert_true(kernel_is_tree(dir));
	assert_int_equal(kernel_tree_check(fake, &version), OK);
	assert_string_equal(version, "9.9.0-fake");
	free(version);
	tree = linux_tree();
	if (tree) {
		assert_int_equal(kernel_tree_check(tree, &version), OK);
		assert_true(str_startswith(version, "6.1."));
		free(version);
	}
	free(tree);
	free(fake);
	free(dir);
}

/* ---- images ---- */

#define SETUP_SECTS 4
#define PM_START    ((SETUP_SECTS + 1) * 512)
#define PAYLOAD_OFF 0x100

static void
put16(unsigned char *p, unsigned v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
}

static void
put32(unsigned char *p, unsigned v)
{
	put16(p, v & 0xffff);
	put16(p + 2, v >> 16);
}

/* A bzImage as the x86 boot protocol lays it out, with payload inside. */
static void
craft_bzimage(const char *path, const char *banner, bool is64, const void *payload, size_t plen)
{
	size_t len = PM_START + PAYLOAD_OFF + plen + 64;
	unsigned char *img = xcalloc(1, len);

	img[0x1f1] = SETUP_SECTS;
	put16(img + 0x1fe, 0xaa55);
	memcpy(img + 0x202, "HdrS", 4);
	put16(img + 0x206, 0x020f);
	put16(img + 0x20e, 0x300);
	put16(img + 0x236, is64 ? 0x7f : 0);
	put32(img + 0x248, PAYLOAD_OFF);
	put32(img + 0x24c, (unsigned)plen);
	if (banner)
		memcpy(img + 0x500, banner, strlen(banner) + 1);
	if (plen)
		memcpy(img + PM_START + PAYLOAD_OFF, payload, plen);
	write_bytes(path, img, len);
	free(img);
}

static void
test_image_headers(void **state)
{
	char *p = test_tmp("bz64");
	struct kimage_info info;
	unsigned char arm[128], elf[128];

	craft_bzimage(p, "6.9.0-test (me@here) #1 SMP PREEMPT", true, "\x1f\x8b\x08", 3);
	assert_int_equal(kimage_probe(p, &info), OK);
	assert_int_equal(info.format, KIMAGE_BZIMAGE);
	assert_string_equal(info.arch, "x86_64");
	assert_string_equal(info.version, "6.9.0-test");
	assert_string_equal(info.banner, "6.9.0-test (me@here) #1 SMP PREEMPT");
	assert_string_equal(info.compression, "gzip");
	assert_int_equal(info.payload_offset, PM_START + PAYLOAD_OFF);
	assert_int_equal(info.payload_length, 3);
	kimage_info_release(&info);

	craft_bzimage(p, "4.19.0-i386", false, "\x28\xb5\x2f\xfd", 4);
	assert_int_equal(kimage_probe(p, &info), OK);
	assert_string_equal(info.arch, "i386");
	assert_string_equal(info.version, "4.19.0-i386");
	assert_string_equal(info.compression, "zstd");
	kimage_info_release(&info);

	memset(arm, 0, sizeof(arm));
	memcpy(arm + 0x38, "ARM\x64", 4);
	write_bytes(p, arm, sizeof(arm));
	assert_int_equal(kimage_probe(p, &info), OK);
	assert_int_equal(info.format, KIMAGE_ARM64);
	assert_string_equal(info.arch, "arm64");
	assert_null(info.version);
	kimage_info_release(&info);

	memset(elf, 0, sizeof(elf));
	memcpy(elf, "\177ELF\002\001\001", 7);
	put16(elf + 18, 62);
	memcpy(elf + 64, "Linux version 6.5.0-elf (x@y)", 29);
	write_bytes(p, elf, sizeof(elf));
	assert_int_equal(kimage_probe(p, &info), OK);
	assert_int_equal(info.format, KIMAGE_ELF);
	assert_string_equal(info.arch, "x86_64");
	assert_string_equal(info.version, "6.5.0-elf");
	kimage_info_release(&info);

	write_bytes(p, "#!/bin/sh\necho not a kernel\n", 28);
	assert_int_equal(kimage_probe(p, &info), ERR_INVALID);
	assert_non_null(strstr(error_msg(), "is not a kernel image"));
	assert_int_equal(kimage_probe("/nonexistent/bzImage", &info), ERR_NOTFOUND);
	free(p);
	p = test_tmp("");
	assert_int_equal(kimage_probe(p, &info), ERR_INVALID);
	assert_non_null(strstr(error_msg(), "not a regular file"));
	free(p);
}

/* The newest /boot/vmlinuz-*, or NULL. */
static char *
boot_image(char **version)
{
	glob_t g;
	char *found = NULL;

	if (glob("/boot/vmlinuz-*", 0, NULL, &g) == 0 && g.gl_pathc) {
		found = xstrdup(g.gl_pathv[g.gl_pathc - 1]);
		*version = xstrdup(found + strlen("/boot/vmlinuz-"));
	}
	globfree(&g);
	return found;
}

static void
test_image_boot(void **state)
{
	char *version = NULL, *img = boot_image(&version);
	struct kimage_info info;

	if (!img || access(img, R_OK) != 0) {
		print_message("# no readable /boot/vmlinuz-*\n");
		free(img);
		free(version);
		skip();
		return;
	}
	assert_int_equal(kimage_probe(img, &info), OK);
	assert_int_equal(info.format, KIMAGE_BZIMAGE);
	assert_string_equal(info.version, version);
	assert_string_equal(info.arch, "x86_64");
	assert_non_null(info.compression);
	kimage_info_release(&info);
	{
		/* the embedded config: there exactly when its config says IKCONFIG=y */
		char *work = test_tmp("bootcfg"), *out = test_tmp("bootcfg.out");
		char *cfgp = xasprintf("/boot/config-%s", version);
		struct kconfig_values *v = kconfig_values_new();
		enum status rc = kimage_config(loop, img, work, out);

		if (kconfig_values_load(v, cfgp) == OK) {
			const char *ik = kconfig_value(v, "IKCONFIG");

			if (ik && !strcmp(ik, "y")) {
				assert_int_equal(rc, OK);
			} else {
				assert_int_equal(rc, ERR_NOTFOUND);
				assert_non_null(strstr(error_msg(), "CONFIG_IKCONFIG"));
			}
		}
		kconfig_values_free(v);
		free(cfgp);
		free(work);
		free(out);
	}
	free(img);
	free(version);
}

/* gzip/lz4/zstd a file with the kernel's trailing 4-byte size; returns the bytes. */
static char *
compress_like_kernel(const char *tool, const char *path, size_t raw_len, size_t *len)
{
	char *out = xasprintf("%s.%s", path, tool);
	char *data;
	const char *gz[] = { "gzip", "-n", "-k", "-f", "-S", ".gzip", path, NULL };
	const char *lz4[] = { "lz4", "-q", "-l", "-f", path, out, NULL };
	const char *zstd[] = { "zstd", "-q", "-f", path, "-o", out, NULL };

	if (!strcmp(tool, "gzip"))
		run_ok(gz);
	else if (!strcmp(tool, "lz4"))
		run_ok(lz4);
	else
		run_ok(zstd);
	data = read_bytes(out, len);
	data = xrealloc(data, *len + 4);
	put32((unsigned char *)data + *len, (unsigned)raw_len);
	*len += 4;
	free(out);
	return data;
}

static void
test_image_decompress_config(void **state)
{
	static const char config[] = "#\n# Linux/x86 6.9.0 Kernel Configuration\n#\n"
				     "CONFIG_EXT4_FS=y\nCONFIG_IKCONFIG=y\n";
	static const char *const tools[] = { "gzip", "lz4", "zstd" };
	char *cfgfile = test_tmp("ik/config"), *blobp = test_tmp("ik/vmlinux");
	char *img = test_tmp("ik/bzImage"), *work = test_tmp("ik/work");
	char *outp = test_tmp("ik/out"), *gzp = xasprintf("%s.gz", cfgfile);
	const char *gz[] = { "gzip", "-n", "-k", "-f", cfgfile, NULL };
	struct strbuf blob = STRBUF_INIT;
	char *gzdata, *payload, *got, *version;
	size_t gzlen, plen, glen;

	test_write(cfgfile, config);
	run_ok(gz);
	gzdata = read_bytes(gzp, &gzlen);
	for (int i = 0; i < 2000; i++)
		strbuf_addf(&blob, "kernel code %d ", i);
	strbuf_adds(&blob, "IKCFG_ST");
	strbuf_add(&blob, gzdata, gzlen);
	strbuf_adds(&blob, "IKCFG_ED");
	strbuf_add(&blob, "\0Linux version 6.9.0-ik (x@y) #1\0", 33);
	write_bytes(blobp, blob.buf, blob.len);

	for (size_t t = 0; t < ARRAY_SIZE(tools); t++) {
		if (!path_has_program(tools[t])) {
			print_message("# %s is not installed: not tried\n", tools[t]);
			continue;
		}
		payload = compress_like_kernel(tools[t], blobp, blob.len, &plen);
		craft_bzimage(img, "6.9.0-ik (x@y) #1", true, payload, plen);
		free(payload);
		assert_int_equal(kimage_decompress(loop, img, outp), OK);
		got = read_bytes(outp, &glen);
		assert_int_equal(glen, blob.len);
		assert_memory_equal(got, blob.buf, blob.len);
		free(got);
		assert_int_equal(kimage_find_version(outp, &version), OK);
		assert_string_equal(version, "6.9.0-ik");
		free(version);
		unlink(outp);
		assert_int_equal(kimage_config(loop, img, work, outp), OK);
		got = read_bytes(outp, &glen);
		assert_string_equal(got, config);
		free(got);
	}

	/* a kernel without the markers */
	write_bytes(blobp, "just code, no config", 20);
	payload = compress_like_kernel("gzip", blobp, 20, &plen);
	craft_bzimage(img, "6.9.0-noik", true, payload, plen);
	free(payload);
	assert_int_equal(kimage_config(loop, img, work, outp), ERR_NOTFOUND);
	assert_non_null(strstr(error_msg(), "without CONFIG_IKCONFIG"));
	/* a payload compressed in a way nobody knows */
	craft_bzimage(img, "6.9.0-odd", true, "\x01\x02\x03\x04", 4);
	assert_int_equal(kimage_config(loop, img, work, outp), ERR_UNSUPPORTED);

	strbuf_release(&blob);
	free(gzdata);
	free(gzp);
	free(cfgfile);
	free(blobp);
	free(img);
	free(work);
	free(outp);
}

/* ---- installed kernels ---- */

static void
fake_installed(const char *boot, const char *mods, const char *version, const char *config,
	       bool modules, bool initrd)
{
	char *p = xasprintf("%s/vmlinuz-%s", boot, version);
	char *banner = xasprintf("%s (test@fswb) #1 SMP", version);

	assert_int_equal(mkdir_p(boot, 0755), OK);
	craft_bzimage(p, banner, true, "\x1f\x8b", 2);
	free(p);
	free(banner);
	if (config) {
		p = xasprintf("%s/config-%s", boot, version);
		test_write(p, config);
		free(p);
	}
	if (initrd) {
		p = xasprintf("%s/initrd.img-%s", boot, version);
		test_write(p, "initrd");
		free(p);
	}
	if (modules) {
		p = xasprintf("%s/%s/modules.dep", mods, version);
		test_write(p, "");
		free(p);
	}
}

static void
test_installed(void **state)
{
	char *boot = test_tmp("boot"), *mods = test_tmp("lib/modules");
	struct kernel_list l;
	struct plan_kernel pk = { 0 };
	struct kernel k;
	struct kernel_needs needs;
	struct strvec configs = STRVEC_INIT;
	const struct kconfig_result *r = NULL;

	setenv("FSWB_BOOT_DIR", boot, 1);
	setenv("FSWB_MODULES_DIR", mods, 1);

	/* nothing installed */
	pk.kind = KERNEL_INSTALLED;
	assert_int_equal(kernel_resolve(loop, &pk, &k), ERR_NOTFOUND);
	assert_non_null(strstr(error_msg(), "no installed kernel"));
	kernel_release(&k);

	fake_installed(boot, mods, "6.1.0-9-amd64", NULL, false, false);
	fake_installed(boot, mods, "6.1.0-10-amd64",
		       "CONFIG_MODULES=y\nCONFIG_EXT4_FS=m\n# CONFIG_EXT4_FS_SECURITY is not set\n",
		       true, true);
	{
		char *old = xasprintf("%s/vmlinuz-6.1.0-10-amd64.old", boot);

		test_write(old, "x");
		free(old);
	}
	assert_int_equal(kernel_list_installed(&l), OK);
	assert_int_equal(l.n, 2);
	assert_string_equal(l.v[0].version, "6.1.0-10-amd64"); /* newest first, as versions */
	assert_string_equal(l.v[1].version, "6.1.0-9-amd64");
	assert_string_equal(l.v[0].arch, "x86_64");
	assert_non_null(l.v[0].modules);
	assert_true(str_endswith(l.v[0].modules, "lib/modules/6.1.0-10-amd64"));
	assert_true(str_endswith(l.v[0].initrd, "boot/initrd.img-6.1.0-10-amd64"));
	assert_int_equal(l.v[0].config_source, KCONF_BOOT);
	assert_true(l.v[0].modular);
	assert_null(l.v[1].modules);
	assert_null(l.v[1].config);
	kernel_list_release(&l);

	/* the default: the running kernel is not among them, so the newest */
	assert_int_equal(kernel_resolve(loop, &pk, &k), OK);
	assert_int_equal(k.kind, KERNEL_INSTALLED);
	assert_string_equal(k.version, "6.1.0-10-amd64");
	kernel_release(&k);
	pk.spec = "6.1.0-9-amd64";
	assert_int_equal(kernel_resolve(loop, &pk, &k), OK);
	assert_string_equal(k.version, "6.1.0-9-amd64");
	assert_null(k.modules);
	kernel_release(&k);
	pk.spec = "7.0";
	assert_int_equal(kernel_resolve(loop, &pk, &k), ERR_NOTFOUND);
	assert_non_null(strstr(error_msg(), "no installed kernel '7.0'"));
	assert_non_null(strstr(error_msg(), "installed: 6.1.0-10-amd64, 6.1.0-9-amd64"));
	kernel_release(&k);
	pk.spec = "6.1.0-10-amd64";
	pk.arch = "arm64";
	assert_int_equal(kernel_resolve(loop, &pk, &k), ERR_INVALID);
	assert_non_null(strstr(error_msg(), "is for x86_64, but the architecture asked for is "
					    "arm64"));
	kernel_release(&k);
	pk.arch = NULL;

	/* its config against ext4/4k: EXT4_FS is m, fine with modules; SECURITY is not set */
	strvec_push(&configs, "ext4/4k");
	assert_int_equal(kernel_needs_init(&needs, &profiles, &configs, NULL), OK);
	assert_int_equal(kernel_resolve(loop, &pk, &k), OK);
	assert_int_equal(kernel_check(loop, &k, &needs), OK);
	assert_true(k.checked);
	for (size_t i = 0; i < k.report.n; i++)
		if (!strcmp(k.report.v[i].name, "EXT4_FS"))
			r = &k.report.v[i];
	assert_non_null(r);
	assert_int_equal(r->verdict, KV_MODULE);
	assert_int_equal(k.report.nneeded, 2); /* EXT4_FS_POSIX_ACL, EXT4_FS_SECURITY */
	kernel_release(&k);

	/* no config file and no embedded one: not checked, and it says why */
	pk.spec = "6.1.0-9-amd64";
	assert_int_equal(kernel_resolve(loop, &pk, &k), OK);
	assert_int_equal(kernel_check(loop, &k, &needs), OK);
	assert_false(k.checked);
	assert_non_null(k.config_note);
	assert_non_null(strstr(k.config_note, "no config-6.1.0-9-amd64 beside it"));
	kernel_release(&k);

	kernel_needs_release(&needs);
	strvec_clear(&configs);
	unsetenv("FSWB_BOOT_DIR");
	unsetenv("FSWB_MODULES_DIR");
	free(boot);
	free(mods);
}

static void
test_needs(void **state)
{
	struct strvec configs = STRVEC_INIT, debug = STRVEC_INIT;
	struct kernel_needs n;
	const struct kconfig_request *q;

	strvec_push(&configs, "ext4/4k");
	strvec_push(&configs, "xfs/realtime");
	strvec_push(&configs, "ext4/1k");
	strvec_push(&debug, "kasan");
	assert_int_equal(kernel_needs_init(&n, &profiles, &configs, &debug), OK);
	assert_int_equal(n.names.n, 4);
	assert_string_equal(n.names.v[0], "fstests.config");
	assert_string_equal(n.names.v[1], "ext4.config");
	assert_string_equal(n.names.v[2], "xfs.config");
	assert_string_equal(n.names.v[3], "debug-kasan.config");
	q = kconfig_requests_find(&n.req, "EXT4_FS");
	assert_int_equal(q->need, KCONFIG_NEED);
	assert_string_equal(q->needed_by, "ext4/4k ext4/1k");
	assert_true(str_startswith(q->source, "kconfig/ext4.config:"));
	q = kconfig_requests_find(&n.req, "XFS_RT");
	assert_string_equal(q->needed_by, "xfs/realtime");
	q = kconfig_requests_find(&n.req, "KASAN");
	assert_int_equal(q->need, KCONFIG_NEED);
	assert_string_equal(q->needed_by, "--debug kasan");
	q = kconfig_requests_find(&n.req, "DM_FLAKEY");
	assert_int_equal(q->need, KCONFIG_WANT);
	kernel_needs_release(&n);
	strvec_push(&configs, "ext9/4k");
	assert_int_equal(kernel_needs_init(&n, &profiles, &configs, NULL), ERR_NOTFOUND);
	assert_non_null(strstr(error_msg(), "'ext9/4k'"));
	strvec_clear(&configs);
	strvec_clear(&debug);
}

/* ---- images as kernels ---- */

static void
test_resolve_image(void **state)
{
	char *img = test_tmp("img/bzImage"), *arm = test_tmp("img/Image");
	char *mods = test_tmp("img/mods"), *tarball = test_tmp("img/modules.tar.gz");
	struct plan_kernel pk = { 0 };
	struct kernel k;
	unsigned char armhdr[128];
	char *p;

	assert_int_equal(mkdir_p(mods, 0755), OK);
	craft_bzimage(img, "6.9.1-img (x@y) #1", true, "\x1f\x8b", 2);
	pk.kind = KERNEL_IMAGE;
	pk.spec = img;
	assert_int_equal(kernel_resolve(loop, &pk, &k), OK);
	assert_int_equal(k.kind, KERNEL_IMAGE);
	assert_string_equal(k.version, "6.9.1-img");
	assert_string_equal(k.arch, "x86_64");
	assert_null(k.modules);
	kernel_release(&k);

	/* modules: a tarball of lib/modules/VERSION */
	p = xasprintf("%s/lib/modules/6.9.1-img/modules.dep", mods);
	test_write(p, "");
	free(p);
	{
		const char *argv[] = { "tar", "-czf", tarball, "-C", mods, "lib", NULL };

		run_ok(argv);
	}
	pk.modules = tarball;
	assert_int_equal(kernel_resolve(loop, &pk, &k), OK);
	assert_non_null(k.modules);
	assert_true(str_endswith(k.modules, "/lib/modules/6.9.1-img"));
	p = path_join(k.modules, "modules.dep");
	assert_true(path_exists(p));
	free(p);
	kernel_release(&k);
	/* the directory itself, and the directory holding lib/modules */
	p = xasprintf("%s/lib/modules/6.9.1-img", mods);
	pk.modules = p;
	assert_int_equal(kernel_resolve(loop, &pk, &k), OK);
	assert_string_equal(k.modules, p);
	kernel_release(&k);
	free(p);
	pk.modules = mods;
	assert_int_equal(kernel_resolve(loop, &pk, &k), OK);
	assert_true(str_endswith(k.modules, "img/mods/lib/modules/6.9.1-img"));
	kernel_release(&k);
	/* modules of another kernel */
	craft_bzimage(img, "6.9.2-other (x@y) #1", true, "\x1f\x8b", 2);
	assert_int_equal(kernel_resolve(loop, &pk, &k), ERR_INVALID);
	assert_non_null(
		strstr(error_msg(), "are for kernel 6.9.1-img but the image is 6.9.2-other"));
	kernel_release(&k);
	pk.modules = NULL;

	/* an arm64 Image where x86_64 is asked for */
	memset(armhdr, 0, sizeof(armhdr));
	memcpy(armhdr + 0x38, "ARM\x64", 4);
	write_bytes(arm, armhdr, sizeof(armhdr));
	pk.spec = arm;
	assert_int_equal(kernel_resolve(loop, &pk, &k), ERR_INVALID);
	assert_non_null(strstr(error_msg(), "is a kernel for arm64, but the architecture asked "
					    "for is x86_64"));
	kernel_release(&k);
	pk.arch = "arm64";
	assert_int_equal(kernel_resolve(loop, &pk, &k), OK);
	assert_string_equal(k.arch, "arm64");
	kernel_release(&k);
	pk.arch = "sparc";
	assert_int_equal(kernel_resolve(loop, &pk, &k), ERR_INVALID);
	assert_non_null(strstr(error_msg(), "unknown architecture 'sparc'"));
	kernel_release(&k);
	free(img);
	free(arm);
	free(mods);
	free(tarball);
}

/* ---- tools ---- */

static void
test_tools_missing(void **state)
{
	char *empty = test_tmp("emptybin");
	char *saved = xstrdup(getenv("PATH"));
	const struct kernel_arch *a = kernel_arch_find("x86_64");
	struct kconfig_values *v = kconfig_values_new();

	assert_int_equal(mkdir_p(empty, 0755), OK);
	assert_int_equal(kbuild_tools_check(a, v), OK);
	setenv("PATH", empty, 1);
	assert_int_equal(kbuild_tools_check(a, NULL), ERR_NOTFOUND);
	assert_non_null(strstr(error_msg(), "'make' (runs the build)"));
	assert_non_null(strstr(error_msg(), "'flex'"));
	assert_non_null(strstr(error_msg(), "'bison'"));
	assert_null(strstr(error_msg(), "'bc'")); /* configuring does not need bc */
	assert_non_null(strstr(error_msg(), "apt install make gcc flex bison"));
	kconfig_values_set(v, "KERNEL_ZSTD", "y");
	assert_int_equal(kbuild_tools_check(a, v), ERR_NOTFOUND);
	assert_non_null(strstr(error_msg(), "'bc'"));
	assert_non_null(strstr(error_msg(), "'zstd' (compresses the kernel image)"));
	setenv("PATH", saved, 1);
	kconfig_values_free(v);
	free(saved);
	free(empty);
}

/* ---- configuring and building the fake tree ---- */

struct seen {
	struct strvec details;
	double last;
};

static void
on_event(void *data, const struct event *ev)
{
	struct seen *s = data;

	if (ev->type == EV_STAGE_PROGRESS) {
		assert_string_equal(ev->u.stage.stage, "kernel");
		strvec_push(&s->details, ev->u.stage.detail ? ev->u.stage.detail : "");
		s->last = ev->u.stage.fraction;
	}
}

static void
tree_kernel(struct kernel *k, const char *tree, bool own)
{
	struct plan_kernel pk = { 0 };

	pk.kind = KERNEL_TREE;
	pk.spec = (char *)tree;
	pk.own_config = own;
	assert_int_equal(kernel_resolve(loop, &pk, k), OK);
	assert_int_equal(k->kind, KERNEL_TREE);
}

static size_t
count_lines(const char *path, const char *prefix)
{
	size_t len, n = 0;
	char *text = read_bytes(path, &len);

	for (char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		n += str_startswith(p, prefix);
	free(text);
	return n;
}

static void
test_build_fake(void **state)
{
	char *tree = fake_tree("fake");
	struct strvec configs = STRVEC_INIT;
	struct kernel_needs needs;
	struct kbuild_opts o = { 0 };
	struct event_bus bus = EVENT_BUS_INIT;
	struct seen seen = { STRVEC_INIT, 0 };
	struct kernel k;
	char *p, *cache, *first_dir;
	struct stat st1, st2;

	strvec_push(&configs, "ext4/4k");
	assert_int_equal(kernel_needs_init(&needs, &profiles, &configs, NULL), OK);
	o.needs = &needs;
	o.jobs = 2;
	event_bus_add(&bus, (struct listener){ on_event, &seen });
	tree_kernel(&k, tree, false);
	assert_string_equal(k.version, "9.9.0-fake");
	assert_null(k.image);
	assert_int_equal(kbuild_build(loop, &bus, &o, &k), OK);
	assert_true(k.built);
	assert_true(k.checked);
	assert_int_equal(k.report.ndropped, 0);
	cache = fswb_dir(DIR_CACHE);
	assert_true(str_startswith(k.build_dir, cache)); /* out of tree, in the cache */
	free(cache);
	assert_true(str_endswith(k.image, "/arch/x86/boot/bzImage"));
	assert_string_equal(k.version, "9.9.0-fake");
	assert_non_null(k.modules);
	assert_true(str_endswith(k.modules, "fswb-modules/lib/modules/9.9.0-fake"));
	p = path_join(k.modules, "modules.dep");
	assert_true(path_exists(p));
	free(p);
	assert_true(path_exists(k.log));
	assert_int_equal(count_lines(k.log, "  CC      "), 3);
	assert_int_equal(count_lines(k.log, "  CC [M]  "), 1);
	assert_string_equal(seen.details.v[0], "configuring");
	assert_string_equal(seen.details.v[seen.details.n - 1], "built");
	assert_true(seen.last == 1.0);
	p = path_join(tree, ".config");
	assert_false(path_exists(p)); /* the tree was not written */
	free(p);
	{
		/* the image is a bzImage the image reader reads */
		struct kimage_info info;

		assert_int_equal(kimage_probe(k.image, &info), OK);
		assert_string_equal(info.version, "9.9.0-fake");
		kimage_info_release(&info);
	}
	p = path_join(k.build_dir, ".config");
	assert_int_equal(stat(p, &st1), 0);
	free(p);
	first_dir = xstrdup(k.build_dir);
	kernel_release(&k);

	/* again, after touching one file: the same directory, one object rebuilt */
	sleep(1);
	p = path_join(tree, "fs/fake/inode.c");
	{
		const char *argv[] = { "touch", p, NULL };

		run_ok(argv);
	}
	free(p);
	tree_kernel(&k, tree, false);
	assert_int_equal(kbuild_build(loop, NULL, &o, &k), OK);
	assert_string_equal(k.build_dir, first_dir);
	assert_int_equal(count_lines(k.log, "  CC      "), 1);
	p = path_join(k.build_dir, ".config");
	assert_int_equal(stat(p, &st2), 0);
	free(p);
	assert_true(st1.st_mtim.tv_sec == st2.st_mtim.tv_sec &&
		    st1.st_mtim.tv_nsec == st2.st_mtim.tv_nsec); /* olddefconfig not rerun */
	p = path_join(k.build_dir, "olddefconfig.runs");
	assert_int_equal(count_lines(p, "run"), 1);
	free(p);
	kernel_release(&k);

	/* the list finds the build */
	{
		struct kernel_list l;
		bool found = false;

		setenv("FSWB_BOOT_DIR", "/nonexistent", 1);
		assert_int_equal(kernel_list(loop, "x86_64", &l), OK);
		for (size_t i = 0; i < l.n; i++)
			if (l.v[i].built && !strcmp(l.v[i].build_dir, first_dir)) {
				found = true;
				assert_string_equal(l.v[i].version, "9.9.0-fake");
				assert_string_equal(l.v[i].tree, tree);
			}
		assert_true(found);
		kernel_list_release(&l);
		unsetenv("FSWB_BOOT_DIR");
	}

	/* a failed build: the first errors and the log */
	setenv("FAKE_KBUILD_FAIL", "1", 1);
	tree_kernel(&k, tree, false);
	assert_int_equal(kbuild_build(loop, NULL, &o, &k), ERR_CHILD);
	unsetenv("FAKE_KBUILD_FAIL");
	assert_non_null(strstr(error_msg(), "the kernel build failed (make exited with status 2)"));
	assert_non_null(strstr(error_msg(), "fs/fake/broken.c:5:16: error: "
					    "'undeclared_in_fake_tree' undeclared"));
	assert_non_null(strstr(error_msg(), "the full log: "));
	assert_non_null(strstr(error_msg(), "fswb-build.log"));
	assert_false(k.built);
	kernel_release(&k);

	/* a needed option olddefconfig dropped (a new tree: olddefconfig runs): refused */
	free(tree);
	tree = fake_tree("fake-drop");
	setenv("FAKE_KBUILD_DROP", "EXT4_FS", 1);
	tree_kernel(&k, tree, false);
	assert_int_equal(kbuild_build(loop, NULL, &o, &k), ERR_INVALID);
	unsetenv("FAKE_KBUILD_DROP");
	assert_non_null(strstr(error_msg(), "CONFIG_EXT4_FS=y (needed by ext4/4k)"));
	assert_non_null(strstr(error_msg(), "--force"));
	kernel_release(&k);
	/* unless forced */
	o.force = true;
	tree_kernel(&k, tree, false);
	assert_int_equal(kbuild_build(loop, NULL, &o, &k), OK);
	assert_true(k.built);
	assert_int_equal(k.report.nneeded, 1);
	kernel_release(&k);

	event_bus_release(&bus);
	strvec_clear(&seen.details);
	kernel_needs_release(&needs);
	strvec_clear(&configs);
	free(first_dir);
	free(tree);
}

static void
quit_soon(struct loop *l, void *data)
{
	loop_quit(l, 130);
}

static bool cancelled;

static void
cancel_soon(struct loop *l, void *data)
{
	cancelled = true;
}

static void
test_build_interrupt(void **state)
{
	char *tree = fake_tree("slow");
	struct strvec configs = STRVEC_INIT;
	struct kernel_needs needs;
	struct kbuild_opts o = { 0 };
	struct kernel k;
	uint64_t start;

	strvec_push(&configs, "ext4/4k");
	assert_int_equal(kernel_needs_init(&needs, &profiles, &configs, NULL), OK);
	o.needs = &needs;
	setenv("FAKE_KBUILD_SLOW", "1", 1);
	tree_kernel(&k, tree, false);
	loop_add_timer(loop, 1500, false, quit_soon, NULL);
	start = loop_now_ms();
	assert_int_equal(kbuild_build(loop, NULL, &o, &k), ERR_INTERRUPTED);
	assert_true(loop_now_ms() - start < 20000); /* not the minute the step sleeps */
	loop_reset(loop);
	kernel_release(&k);

	/* the same through the cancel flag, the engine's way */
	cancelled = false;
	o.cancel = &cancelled;
	tree_kernel(&k, tree, false);
	loop_add_timer(loop, 1000, false, cancel_soon, NULL);
	start = loop_now_ms();
	assert_int_equal(kbuild_build(loop, NULL, &o, &k), ERR_INTERRUPTED);
	assert_true(loop_now_ms() - start < 20000);
	assert_false(loop_done(loop));
	unsetenv("FAKE_KBUILD_SLOW");
	kernel_release(&k);
	kernel_needs_release(&needs);
	strvec_clear(&configs);
	free(tree);
}

static void
test_configure_fake_refusals(void **state)
{
	char *tree = fake_tree("dirty");
	struct strvec configs = STRVEC_INIT;
	struct kernel_needs needs;
	struct kbuild_opts o = { 0 };
	struct kernel k;
	char *cfg = path_join(tree, ".config");
	const struct kconfig_result *r = NULL;

	strvec_push(&configs, "ext4/4k");
	assert_int_equal(kernel_needs_init(&needs, &profiles, &configs, NULL), OK);
	o.needs = &needs;

	/* configured in place: make O= would refuse; fswb says so first */
	test_write(cfg, "CONFIG_X86_64=y\nCONFIG_MODULES=y\nCONFIG_EXT4_FS=y\n");
	tree_kernel(&k, tree, false);
	assert_int_equal(kbuild_configure(loop, &o, &k), ERR_INVALID);
	assert_non_null(strstr(error_msg(), "was configured or built in place (it has '.config')"));
	assert_non_null(strstr(error_msg(), "--own-config"));
	assert_non_null(strstr(error_msg(), "mrproper"));
	kernel_release(&k);

	/* its own config: checked as it is */
	tree_kernel(&k, tree, true);
	assert_int_equal(kbuild_configure(loop, &o, &k), OK);
	assert_string_equal(k.build_dir, tree);
	assert_true(k.checked);
	for (size_t i = 0; i < k.report.n; i++)
		if (!strcmp(k.report.v[i].name, "EXT4_FS_POSIX_ACL"))
			r = &k.report.v[i];
	assert_non_null(r);
	assert_int_equal(r->verdict, KV_NOT_SET);
	assert_non_null(strstr(r->why, "its dependencies are met"));
	assert_true(k.report.nneeded >= 2); /* EXT4_FS_POSIX_ACL, EXT4_FS_SECURITY */
	kernel_release(&k);

	/* a .config for another architecture */
	test_write(cfg, "CONFIG_ARM64=y\n");
	tree_kernel(&k, tree, true);
	assert_int_equal(kbuild_configure(loop, &o, &k), ERR_INVALID);
	assert_non_null(strstr(error_msg(), "is not a config for x86_64"));
	kernel_release(&k);

	/* --own-config without a .config */
	unlink(cfg);
	tree_kernel(&k, tree, true);
	assert_int_equal(kbuild_configure(loop, &o, &k), ERR_NOTFOUND);
	assert_non_null(strstr(error_msg(), "has no .config of its own"));
	kernel_release(&k);

	kernel_needs_release(&needs);
	strvec_clear(&configs);
	free(cfg);
	free(tree);
}

/* ---- the configuration step on the real tree ---- */

static const struct kconfig_result *
find_result(const struct kernel *k, const char *name)
{
	for (size_t i = 0; i < k->report.n; i++)
		if (!strcmp(k->report.v[i].name, name))
			return &k->report.v[i];
	fail_msg("no result for CONFIG_%s", name);
	return NULL;
}

static void
test_configure_linux(void **state)
{
	char *tree = linux_tree();
	struct strvec configs = STRVEC_INIT;
	struct kernel_needs needs;
	struct kbuild_opts o = { 0 };
	struct kernel k;
	struct stat st1, st2;
	char *p;

	if (!tree) {
		skip();
		return;
	}
	strvec_push(&configs, "ext4/4k");
	strvec_push(&configs, "xfs/4k");
	strvec_push(&configs, "btrfs/default");
	strvec_push(&configs, "f2fs/default");
	assert_int_equal(kernel_needs_init(&needs, &profiles, &configs, NULL), OK);
	o.needs = &needs;
	o.nice = 10;
	tree_kernel(&k, tree, false);
	assert_int_equal(kbuild_configure(loop, &o, &k), OK);
	assert_true(k.checked);
	assert_int_equal(k.report.n, needs.req.n);
	for (size_t i = 0; i < k.report.n; i++)
		if (!kconfig_result_ok(&k.report.v[i]))
			fail_msg("CONFIG_%s=%s was dropped: %s", k.report.v[i].name,
				 k.report.v[i].wanted, k.report.v[i].why);
	assert_int_equal(find_result(&k, "EXT4_FS")->need, KCONFIG_NEED);
	assert_true(k.modular);
	p = path_join(tree, ".config");
	assert_false(path_exists(p)); /* the tree stays clean */
	free(p);
	p = path_join(tree, "include/config");
	assert_false(path_exists(p));
	free(p);
	p = path_join(k.build_dir, ".config");
	assert_int_equal(stat(p, &st1), 0);
	kernel_release(&k);

	/* the same again: olddefconfig does not run, the .config is not touched */
	tree_kernel(&k, tree, false);
	assert_int_equal(kbuild_configure(loop, &o, &k), OK);
	assert_int_equal(k.report.ndropped, 0);
	assert_int_equal(stat(p, &st2), 0);
	assert_true(st1.st_mtim.tv_sec == st2.st_mtim.tv_sec &&
		    st1.st_mtim.tv_nsec == st2.st_mtim.tv_nsec);
	free(p);
	kernel_release(&k);
	kernel_needs_release(&needs);
	strvec_clear(&configs);
	free(tree);
}

static void
test_configure_linux_drops(void **state)
{
	char *tree = linux_tree();
	char *frag = test_tmp("bad.config");
	struct strvec configs = STRVEC_INIT;
	struct kernel_needs needs;
	struct kbuild_opts o = { 0 };
	struct kernel k;
	const struct kconfig_result *r;

	if (!tree) {
		free(frag);
		skip();
		return;
	}
	test_write(frag, "# options this tree cannot give\n"
			 "CONFIG_FSWB_NO_SUCH_OPTION=y\n"
			 "CONFIG_XFS_ONLINE_REPAIR=y\n"
			 "# CONFIG_BLK_DEV_DM is not set\n");
	strvec_push(&configs, "ext4/4k");
	assert_int_equal(kernel_needs_init(&needs, &profiles, &configs, NULL), OK);
	strvec_push(&needs.fragments, frag);
	strvec_push(&needs.names, "bad.config");
	assert_int_equal(
		kconfig_requests_add_fragment(&needs.req, frag, "bad.config", KCONFIG_WANT), OK);
	o.needs = &needs;
	o.nice = 10;
	tree_kernel(&k, tree, false);
	assert_int_equal(kbuild_configure(loop, &o, &k), OK);

	r = find_result(&k, "FSWB_NO_SUCH_OPTION");
	assert_int_equal(r->verdict, KV_ABSENT);
	assert_string_equal(r->source, "bad.config:2");
	assert_non_null(strstr(r->why, "no 'config FSWB_NO_SUCH_OPTION'"));

	r = find_result(&k, "XFS_ONLINE_REPAIR"); /* xfs is not asked for */
	assert_int_equal(r->verdict, KV_DEPENDS);
	assert_non_null(strstr(r->why, "CONFIG_XFS_ONLINE_REPAIR needs CONFIG_XFS_FS (not set) "
				       "and CONFIG_XFS_ONLINE_SCRUB (not set)"));

	r = find_result(&k, "DM_FLAKEY"); /* fstests.config asks; bad.config took DM away */
	assert_int_equal(r->verdict, KV_DEPENDS);
	assert_non_null(strstr(r->why, "CONFIG_DM_FLAKEY needs CONFIG_BLK_DEV_DM (not set)"));
	assert_int_equal(find_result(&k, "BLK_DEV_DM")->verdict, KV_SET); /* asked off, off */

	assert_int_equal(find_result(&k, "EXT4_FS")->verdict, KV_SET);
	assert_int_equal(k.report.nneeded, 0);
	assert_true(k.report.ndropped >= 3);
	kernel_release(&k);
	kernel_needs_release(&needs);
	strvec_clear(&configs);
	free(frag);
	free(tree);
}

/* ---- locks between fswb processes ---- */

/* The lock files below the cache that match pattern (kernels/tree-*.lock). */
static void
cache_locks(const char *pattern, struct strvec *out)
{
	char *cache = fswb_dir(DIR_CACHE), *pat = path_join(cache, pattern);
	glob_t g;

	strvec_clear(out);
	if (glob(pat, 0, NULL, &g) == 0)
		for (size_t i = 0; i < g.gl_pathc; i++)
			strvec_push(out, g.gl_pathv[i]);
	globfree(&g);
	free(pat);
	free(cache);
}

/* The one lock file of after that is not in before. */
static char *
new_lock(const struct strvec *before, const struct strvec *after)
{
	char *found = NULL;

	for (size_t i = 0; i < after->n; i++)
		if (!strvec_contains(before, after->v[i])) {
			assert_null(found);
			found = xstrdup(after->v[i]);
		}
	assert_non_null(found);
	return found;
}

/* Another fswb, as this test plays it: the lock held until the timer drops it. */
struct holder {
	int fd;
	bool fired;
	char *absent; /* must not exist yet when the lock is dropped */
};

static int
hold(const char *lock)
{
	int fd = open(lock, O_RDWR | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), 0);
	return fd;
}

static void
drop(struct loop *l, void *data)
{
	struct holder *h = data;

	(void)l;
	h->fired = true;
	if (h->absent && path_exists(h->absent))
		fail_msg("'%s' was made while another fswb held the lock", h->absent);
	close(h->fd);
}

/*
 * Unpacking modules, an image's config and a tree's build wait for another
 * fswb doing the same (as appliance builds do), then use its work.
 */
static void
test_cache_locks(void **state)
{
	char *mods = test_tmp("lk/mods"), *tarball = test_tmp("lk/modules.tar.gz");
	char *img = test_tmp("lk/bzImage"), *tree, *lock, *p;
	struct strvec before = STRVEC_INIT, after = STRVEC_INIT, configs = STRVEC_INIT;
	struct plan_kernel pk = { 0 };
	struct holder h = { -1, false, NULL };
	struct kernel k;
	struct kernel_needs needs;
	struct kbuild_opts o = { 0 };
	struct event_bus bus = EVENT_BUS_INIT;
	struct seen seen = { STRVEC_INIT, 0 };

	(void)state;
	/* modules: the first use unpacks them; then, with the unpacking undone */
	p = xasprintf("%s/lib/modules/6.9.3-lk/modules.dep", mods);
	test_write(p, "");
	free(p);
	{
		const char *argv[] = { "tar", "-czf", tarball, "-C", mods, "lib", NULL };

		run_ok(argv);
	}
	craft_bzimage(img, "6.9.3-lk (x@y) #1", true, "\x1f\x8b", 2);
	pk.kind = KERNEL_IMAGE;
	pk.spec = img;
	pk.modules = tarball;
	cache_locks("kernels/modules-*.lock", &before);
	assert_int_equal(kernel_resolve(loop, &pk, &k), OK);
	cache_locks("kernels/modules-*.lock", &after);
	lock = new_lock(&before, &after);
	h.absent = xasprintf("%.*s/.fswb-unpacked", (int)(strlen(lock) - 5), lock);
	assert_true(path_exists(h.absent));
	kernel_release(&k);
	unlink(h.absent);
	h.fd = hold(lock);
	loop_add_timer(loop, 300, false, drop, &h);
	assert_int_equal(kernel_resolve(loop, &pk, &k), OK);
	assert_true(h.fired);
	assert_true(path_exists(h.absent));
	assert_non_null(k.modules);
	kernel_release(&k);
	free(lock);
	free(h.absent);

	/* a tree: configuring and building wait, and say so */
	tree = fake_tree("lk-tree");
	strvec_push(&configs, "ext4/4k");
	assert_int_equal(kernel_needs_init(&needs, &profiles, &configs, NULL), OK);
	o.needs = &needs;
	o.jobs = 2;
	tree_kernel(&k, tree, false);
	cache_locks("kernels/tree-*.lock", &before);
	assert_int_equal(kbuild_configure(loop, &o, &k), OK);
	cache_locks("kernels/tree-*.lock", &after);
	lock = new_lock(&before, &after);
	h.fired = false;
	h.absent = path_join(k.build_dir, "fswb-kernel.json"); /* a finished build's */
	h.fd = hold(lock);
	loop_add_timer(loop, 300, false, drop, &h);
	event_bus_add(&bus, (struct listener){ on_event, &seen });
	assert_int_equal(kbuild_build(loop, &bus, &o, &k), OK);
	assert_true(h.fired);
	assert_true(k.built);
	assert_string_equal(seen.details.v[0],
			    "waiting for another fswb building this kernel tree");
	assert_string_equal(seen.details.v[1], "configuring");
	/* told to stop while it waits: interrupted, nothing built */
	h.fd = hold(lock);
	{
		bool cancel = true;

		o.cancel = &cancel;
		assert_int_equal(kbuild_build(loop, NULL, &o, &k), ERR_INTERRUPTED);
		assert_non_null(strstr(error_msg(), "waiting for another fswb"));
		o.cancel = NULL;
	}
	close(h.fd);
	event_bus_release(&bus);
	kernel_release(&k);
	kernel_needs_release(&needs);
	strvec_clear(&seen.details);
	strvec_clear(&configs);
	strvec_clear(&before);
	strvec_clear(&after);
	free(h.absent);
	free(lock);
	free(tree);
	free(mods);
	free(tarball);
	free(img);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_progress_recorded),
		cmocka_unit_test(test_progress_failure),
		cmocka_unit_test(test_estimate_small),
		cmocka_unit_test(test_estimate_linux),
		cmocka_unit_test(test_tree_check),
		cmocka_unit_test(test_image_headers),
		cmocka_unit_test(test_image_boot),
		cmocka_unit_test(test_image_decompress_config),
		cmocka_unit_test(test_installed),
		cmocka_unit_test(test_needs),
		cmocka_unit_test(test_resolve_image),
		cmocka_unit_test(test_tools_missing),
		cmocka_unit_test(test_build_fake),
		cmocka_unit_test(test_build_interrupt),
		cmocka_unit_test(test_cache_locks),
		cmocka_unit_test(test_configure_fake_refusals),
		cmocka_unit_test(test_configure_linux),
		cmocka_unit_test(test_configure_linux_drops),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
