/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The initramfs: module names, the newc writer (read back by cpio(1)), ELF
 * linking, choosing modules from a fake modules directory and from the
 * installed Debian kernel's, and a whole image built and unpacked again.
 * Booting it is tests/e2e/appliance-initramfs.sh.
 */
#include "testlib.h"

#include <dirent.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/event.h"
#include "core/loop.h"
#include "core/paths.h"
#include "core/spawn.h"
#include "core/util.h"
#include "rootfs/initramfs.h"

static struct loop *loop;

static int
setup(void **state)
{
	char *src;

	if (test_setup_hermetic(state))
		return -1;
	unsetenv("FSWB_CACHE_DIR");
	src = test_srcdir();
	setenv("FSWB_DATADIR", src, 1);
	free(src);
	loop = loop_new();
	return 0;
}

static int
teardown(void **state)
{
	loop_free(loop);
	loop = NULL;
	return test_teardown_hermetic(state);
}

static char *
run_out(const char *const *argv, const char *cwd)
{
	struct spawn_opts o = SPAWN_OPTS_INIT;
	struct child *child;
	struct strbuf out = STRBUF_INIT;
	char buf[65536];
	ssize_t n;

	o.argv = argv;
	o.cwd = cwd;
	o.out = SPAWN_PIPE;
	o.err = SPAWN_STDOUT;
	assert_int_equal(spawn_start(loop, &o, &child), OK);
	for (;;) {
		n = read(child->out, buf, sizeof(buf));
		if (n > 0)
			strbuf_add(&out, buf, (size_t)n);
		else if (n == 0)
			break;
		else
			loop_run_once(loop, 50); /* EAGAIN: the pipe is non-blocking */
	}
	assert_int_equal(child_wait(child, 60000), OK);
	if (!(child->exit.exited && child->exit.code == 0))
		fail_msg("%s failed: %s", argv[0], out.buf);
	child_free(child);
	return strbuf_detach(&out);
}

static void
sh(const char *script, const char *cwd)
{
	free(run_out((const char *const[]){ "sh", "-c", script, NULL }, cwd));
}

/* ---- names, ELF, cpio ---- */

static void
test_module_name(void **state)
{
	const struct {
		const char *path, *name;
	} cases[] = {
		{ "kernel/fs/xfs/xfs.ko", "xfs" },
		{ "kernel/drivers/md/dm-thin-pool.ko.xz", "dm_thin_pool" },
		{ "kernel/drivers/block/virtio_blk.ko.zst", "virtio_blk" },
		{ "crc32c-intel", "crc32c_intel" },
		{ "extra/foo.ko.gz", "foo" },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char *n = initramfs_module_name(cases[i].path);

		assert_string_equal(n, cases[i].name);
		free(n);
	}
}

static void
test_elf_static(void **state)
{
	bool st = false;
	char *txt = test_tmp("not-elf");

	(void)state;
	if (path_exists("/bin/busybox")) {
		assert_int_equal(elf_is_static("/bin/busybox", &st), OK);
		assert_true(st);
	}
	assert_int_equal(elf_is_static("/bin/ls", &st), OK);
	assert_false(st);
	test_write(txt, "#!/bin/sh\necho not an ELF file\n");
	assert_int_equal(elf_is_static(txt, &st), ERR_INVALID);
	assert_int_equal(elf_is_static("/nonexistent", &st), ERR_NOTFOUND);
	free(txt);
}

static void
test_cpio(void **state)
{
	struct cpio c;
	char *arc = test_tmp("t.cpio");
	char *src = test_tmp("file.txt");
	char *out = test_tmp("unpacked");
	char *list, *p, *text;
	struct stat st;

	(void)state;
	test_write(src, "from a file\n");
	chmod(src, 0750);
	assert_int_equal(cpio_open(&c, arc), OK);
	cpio_add_dir(&c, "bin", 0755);
	cpio_add_dir(&c, "etc", 0700);
	cpio_add_data(&c, "etc/conf", 0644, 1000000000, "a=1\n", 4);
	cpio_add_data(&c, "etc/odd", 0600, 0, "xyz", 3); /* padding */
	cpio_add_file(&c, "bin/tool", src);
	cpio_add_symlink(&c, "bin/sh", "tool");
	cpio_add_node(&c, "console", S_IFCHR | 0600, 5, 1);
	assert_int_equal(cpio_finish(&c), OK);
	assert_int_equal(stat(arc, &st), 0);
	assert_int_equal(st.st_size % 512, 0);

	list = run_out((const char *const[]){ "cpio", "-itv", "-F", arc, NULL }, NULL);
	assert_non_null(strstr(list, "etc/conf"));
	assert_non_null(strstr(list, "bin/sh -> tool"));
	assert_non_null(strstr(list, "crw-------"));
	assert_non_null(strstr(list, "drwx------"));
	free(list);

	assert_int_equal(mkdir_p(out, 0755), OK);
	free(run_out((const char *const[]){ "cpio", "-id", "--no-absolute-filenames", "-F", arc,
					    "bin/tool", "etc/conf", "etc/odd", NULL },
		     out));
	p = path_join(out, "bin/tool");
	text = test_read(p);
	assert_string_equal(text, "from a file\n");
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0750);
	free(text);
	free(p);
	p = path_join(out, "etc/odd");
	text = test_read(p);
	assert_string_equal(text, "xyz");
	free(text);
	free(p);

	/* errors stick */
	assert_int_equal(cpio_open(&c, arc), OK);
	cpio_add_file(&c, "missing", "/nonexistent/file");
	cpio_add_dir(&c, "later", 0755);
	assert_int_equal(cpio_finish(&c), ERR_IO);
	assert_non_null(strstr(error_msg(), "/nonexistent/file"));
	{
		char *nodir = test_tmp("no/such/dir/x.cpio");

		assert_int_equal(cpio_open(&c, nodir), ERR_IO);
		free(nodir);
	}
	free(arc);
	free(src);
	free(out);
}

/* ---- choosing modules ---- */

/*
 * A fake modules directory: virtio as modules, ext4 built in, xfs with a
 * dependency outside the chosen directories, a sound module nobody needs.
 */
static char *
fake_modules(const char *name, bool ext4_builtin, bool compress)
{
	char *dir = test_tmp(name);
	const char *ext = compress ? ".ko.xz" : ".ko";
	const char *mods[] = { "kernel/drivers/virtio/virtio",
			       "kernel/drivers/virtio/virtio_ring",
			       "kernel/drivers/virtio/virtio_pci",
			       "kernel/drivers/virtio/virtio_pci_modern_dev",
			       "kernel/drivers/block/virtio_blk",
			       "kernel/drivers/char/virtio_console",
			       "kernel/fs/xfs/xfs",
			       "kernel/lib/libcrc32c",
			       "kernel/crypto/crc32c_generic",
			       "kernel/net/sunrpc/sunrpc",
			       "kernel/fs/nfs/nfs",
			       "kernel/sound/core/snd",
			       "kernel/fs/ext4/ext4",
			       "kernel/fs/jbd2/jbd2",
			       "kernel/lib/crc16" };
	struct strbuf dep = STRBUF_INIT;

	strbuf_addf(&dep, "kernel/drivers/virtio/virtio_ring%s:\n", ext);
	strbuf_addf(&dep, "kernel/drivers/virtio/virtio%s: kernel/drivers/virtio/virtio_ring%s\n",
		    ext, ext);
	strbuf_addf(&dep, "kernel/drivers/virtio/virtio_pci_modern_dev%s:\n", ext);
	strbuf_addf(
		&dep,
		"kernel/drivers/virtio/virtio_pci%s: kernel/drivers/virtio/virtio_pci_modern_dev%s "
		"kernel/drivers/virtio/virtio%s kernel/drivers/virtio/virtio_ring%s\n",
		ext, ext, ext, ext);
	strbuf_addf(&dep,
		    "kernel/drivers/block/virtio_blk%s: kernel/drivers/virtio/virtio%s "
		    "kernel/drivers/virtio/virtio_ring%s\n",
		    ext, ext, ext);
	strbuf_addf(&dep,
		    "kernel/drivers/char/virtio_console%s: kernel/drivers/virtio/virtio%s "
		    "kernel/drivers/virtio/virtio_ring%s\n",
		    ext, ext, ext);
	strbuf_addf(&dep, "kernel/fs/xfs/xfs%s: kernel/lib/libcrc32c%s\n", ext, ext);
	strbuf_addf(&dep, "kernel/lib/libcrc32c%s:\n", ext);
	strbuf_addf(&dep, "kernel/crypto/crc32c_generic%s:\n", ext);
	strbuf_addf(&dep, "kernel/net/sunrpc/sunrpc%s:\n", ext);
	strbuf_addf(&dep, "kernel/fs/nfs/nfs%s: kernel/net/sunrpc/sunrpc%s\n", ext, ext);
	strbuf_addf(&dep, "kernel/sound/core/snd%s:\n", ext);
	if (!ext4_builtin) {
		strbuf_addf(&dep, "kernel/lib/crc16%s:\n", ext);
		strbuf_addf(&dep, "kernel/fs/jbd2/jbd2%s:\n", ext);
		strbuf_addf(&dep,
			    "kernel/fs/ext4/ext4%s: kernel/fs/jbd2/jbd2%s kernel/lib/crc16%s\n",
			    ext, ext, ext);
	}
	{
		char *p = path_join(dir, "modules.dep");

		test_write(p, dep.buf);
		free(p);
	}
	{
		char *p = path_join(dir, "modules.builtin");

		test_write(p, ext4_builtin ? "kernel/fs/ext4/ext4.ko\nkernel/fs/jbd2/jbd2.ko\n"
					   : "kernel/fs/mbcache.ko\n");
		free(p);
	}
	{
		char *p = path_join(dir, "modules.softdep");

		test_write(p, "# Soft dependencies\nsoftdep ext4 pre: crc32c post: nothing\n");
		free(p);
		p = path_join(dir, "modules.alias");
		test_write(p, "alias crc32c crc32c_generic\nalias pci:v00001AF4d*sv* virtio_pci\n");
		free(p);
	}
	for (size_t i = 0; i < ARRAY_SIZE(mods); i++) {
		char *rel = xasprintf("%s.ko", mods[i]);
		char *p = path_join(dir, rel);
		char *content = xasprintf("fake module %s\n", mods[i]);

		if (ext4_builtin && (strstr(rel, "/ext4.ko") || strstr(rel, "/jbd2.ko") ||
				     strstr(rel, "/crc16.ko"))) {
			free(rel);
			free(p);
			free(content);
			continue;
		}
		test_write(p, content);
		if (compress) {
			char *cmd = xasprintf("xz -z -f '%s'", p);

			sh(cmd, NULL);
			free(cmd);
		}
		free(rel);
		free(p);
		free(content);
	}
	strbuf_release(&dep);
	return dir;
}

static size_t
index_of(const struct strvec *sv, const char *suffix)
{
	for (size_t i = 0; i < sv->n; i++)
		if (strstr(sv->v[i], suffix))
			return i;
	fail_msg("'%s' is not in the list", suffix);
	return 0;
}

static void
test_plan_fake(void **state)
{
	char *dir = fake_modules("mods1", true, false);
	struct initramfs_plan p;

	(void)state;
	assert_int_equal(initramfs_plan("9.9.9-test", dir, &p), OK);
	assert_true(p.needed);
	/* boot: dependencies first */
	assert_int_equal(p.boot.n, 6);
	assert_true(index_of(&p.boot, "/virtio_ring.ko") < index_of(&p.boot, "/virtio.ko"));
	assert_true(index_of(&p.boot, "/virtio.ko") < index_of(&p.boot, "/virtio_pci.ko"));
	assert_true(index_of(&p.boot, "/virtio_pci_modern_dev.ko") <
		    index_of(&p.boot, "/virtio_pci.ko"));
	assert_true(index_of(&p.boot, "/virtio.ko") < index_of(&p.boot, "/virtio_blk.ko"));
	assert_true(strvec_contains(&p.builtin, "ext4"));
	/* chosen: the fs, block, char, lib, crypto ones and what they need */
	assert_true(strvec_contains(&p.modules, "kernel/fs/xfs/xfs.ko"));
	assert_true(strvec_contains(&p.modules, "kernel/lib/libcrc32c.ko"));
	assert_true(strvec_contains(&p.modules, "kernel/fs/nfs/nfs.ko"));
	assert_true(strvec_contains(&p.modules, "kernel/net/sunrpc/sunrpc.ko"));
	assert_true(strvec_contains(&p.modules, "kernel/drivers/block/virtio_blk.ko"));
	assert_false(strvec_contains(&p.modules, "kernel/sound/core/snd.ko"));
	assert_int_equal(strlen(p.digest), 64);
	{
		/* the digest follows the modules */
		char digest[65];
		char *ko = path_join(dir, "kernel/fs/xfs/xfs.ko");

		memcpy(digest, p.digest, sizeof(digest));
		initramfs_plan_release(&p);
		test_write(ko, "a rebuilt xfs module, longer than before\n");
		assert_int_equal(initramfs_plan("9.9.9-test", dir, &p), OK);
		assert_string_not_equal(digest, p.digest);
		free(ko);
	}
	initramfs_plan_release(&p);
	free(dir);
}

static void
test_plan_modular_ext4(void **state)
{
	char *dir = fake_modules("mods2", false, false);
	struct initramfs_plan p;

	(void)state;
	assert_int_equal(initramfs_plan("9.9.9-test", dir, &p), OK);
	/* ext4 with its dependencies and its soft dependency crc32c (an alias) */
	assert_true(index_of(&p.boot, "/jbd2.ko") < index_of(&p.boot, "/ext4.ko"));
	assert_true(index_of(&p.boot, "/crc16.ko") < index_of(&p.boot, "/ext4.ko"));
	assert_true(index_of(&p.boot, "/crc32c_generic.ko") < index_of(&p.boot, "/ext4.ko"));
	assert_false(strvec_contains(&p.builtin, "ext4"));
	initramfs_plan_release(&p);
	free(dir);
}

static void
test_plan_missing_and_none(void **state)
{
	char *dir = fake_modules("mods3", true, false);
	char *builtin = path_join(dir, "modules.builtin");
	char *dep = path_join(dir, "modules.dep");
	struct initramfs_plan p;

	(void)state;
	/* virtio_blk neither a module nor built in */
	test_write(dep, "kernel/fs/xfs/xfs.ko:\n");
	assert_int_equal(initramfs_plan("9.9.9-test", dir, &p), ERR_NOTFOUND);
	assert_non_null(strstr(error_msg(), "virtio_pci"));
	assert_non_null(strstr(error_msg(), "CONFIG_VIRTIO_PCI"));
	initramfs_plan_release(&p);

	/* everything built in, no modules of interest: no initramfs */
	test_write(builtin,
		   "kernel/drivers/virtio/virtio_pci.ko\nkernel/drivers/block/virtio_blk.ko\n"
		   "kernel/drivers/char/virtio_console.ko\nkernel/fs/ext4/ext4.ko\n");
	test_write(dep, "kernel/sound/core/snd.ko:\n");
	assert_int_equal(initramfs_plan("9.9.9-test", dir, &p), OK);
	assert_false(p.needed);
	assert_int_equal(p.builtin.n, 4);
	initramfs_plan_release(&p);

	/* built in boot modules, but xfs a module: needed, to give the guest xfs */
	test_write(dep, "kernel/fs/xfs/xfs.ko:\n");
	assert_int_equal(initramfs_plan("9.9.9-test", dir, &p), OK);
	assert_true(p.needed);
	assert_int_equal(p.boot.n, 0);
	initramfs_plan_release(&p);

	/* a module in modules.dep that is not there */
	test_write(dep, "kernel/fs/btrfs/btrfs.ko:\n");
	assert_int_equal(initramfs_plan("9.9.9-test", dir, &p), ERR_NOTFOUND);
	assert_non_null(strstr(error_msg(), "btrfs.ko"));
	initramfs_plan_release(&p);

	/* no modules directory: nothing to do */
	{
		char *none = test_tmp("no-modules-here");

		assert_int_equal(initramfs_plan("9.9.9-test", none, &p), OK);
		assert_false(p.needed);
		initramfs_plan_release(&p);
		free(none);
	}
	/* modules but no modules.dep */
	unlink(dep);
	assert_int_equal(initramfs_plan("9.9.9-test", dir, &p), ERR_NOTFOUND);
	assert_non_null(strstr(error_msg(), "depmod"));
	initramfs_plan_release(&p);
	assert_int_equal(initramfs_plan("../etc", dir, &p), ERR_INVALID);
	initramfs_plan_release(&p);
	free(builtin);
	free(dep);
	free(dir);
}

/* The installed Debian cloud kernel, when there is one. */
static char *
installed_modules(char **version)
{
	glob_t g;
	char *dir = NULL;

	if (glob("/lib/modules/*-cloud-amd64/modules.dep", 0, NULL, &g) == 0 && g.gl_pathc) {
		char *slash;

		dir = xstrdup(g.gl_pathv[g.gl_pathc - 1]);
		slash = strrchr(dir, '/');
		*slash = '\0';
		*version = xstrdup(strrchr(dir, '/') + 1);
	}
	globfree(&g);
	return dir;
}

static void
test_plan_installed(void **state)
{
	char *version = NULL;
	char *dir = installed_modules(&version);
	struct initramfs_plan p;

	(void)state;
	if (!dir)
		skip();
	assert_int_equal(initramfs_plan(version, dir, &p), OK);
	assert_true(p.needed);
	assert_true(index_of(&p.boot, "/virtio.ko") < index_of(&p.boot, "/virtio_blk.ko"));
	assert_true(index_of(&p.boot, "/virtio_pci") < p.boot.n);
	index_of(&p.boot, "/virtio_console.ko");
	index_of(&p.modules, "kernel/fs/xfs/xfs.ko");
	index_of(&p.modules, "kernel/fs/btrfs/btrfs.ko");
	index_of(&p.modules, "kernel/fs/overlayfs/overlay.ko");
	index_of(&p.modules, "kernel/drivers/block/loop.ko");
	index_of(&p.modules, "kernel/drivers/md/dm-");
	index_of(&p.modules, "kernel/drivers/scsi/scsi_debug.ko");
	for (size_t i = 0; i < p.modules.n; i++)
		assert_null(strstr(p.modules.v[i], "kernel/sound/"));
	initramfs_plan_release(&p);
	free(dir);
	free(version);
}

/* ---- a whole image ---- */

static void
test_ensure_fake(void **state)
{
	char *dir = fake_modules("mods-xz", true, true);
	char *path = NULL, *again = NULL, *out = test_tmp("unpacked");
	struct event_bus bus = EVENT_BUS_INIT;
	struct stat st1, st2;
	char *cmd, *p, *text;

	(void)state;
	if (!path_exists("/bin/busybox"))
		skip();
	assert_int_equal(initramfs_ensure(loop, &bus, "9.9.9-test", dir, &path), OK);
	assert_non_null(path);
	assert_true(str_endswith(path, "/initramfs.img"));
	assert_non_null(strstr(path, "/initramfs/9.9.9-test-"));
	assert_int_equal(stat(path, &st1), 0);

	/* unpack it as the kernel would */
	assert_int_equal(mkdir_p(out, 0755), OK);
	cmd = xasprintf("gzip -dc '%s' | cpio -id --no-absolute-filenames 2>/dev/null", path);
	sh(cmd, out);
	free(cmd);
	p = path_join(out, "init");
	assert_int_equal(stat(p, &st2), 0);
	assert_true(st2.st_mode & 0100);
	free(p);
	p = path_join(out, "bin/busybox");
	assert_true(path_exists(p));
	free(p);
	p = path_join(out, "dev/console");
	assert_int_equal(lstat(p, &st2), 0);
	assert_true(S_ISCHR(st2.st_mode));
	free(p);
	/* the chosen modules as shipped (compressed), the index, not the sound one */
	p = path_join(out, "lib/modules/9.9.9-test/kernel/fs/xfs/xfs.ko.xz");
	assert_true(path_exists(p));
	free(p);
	p = path_join(out, "lib/modules/9.9.9-test/modules.dep");
	assert_true(path_exists(p));
	free(p);
	p = path_join(out, "lib/modules/9.9.9-test/kernel/sound/core/snd.ko.xz");
	assert_false(path_exists(p));
	free(p);
	/* boot modules uncompressed for busybox insmod */
	p = path_join(out, "lib/fswb-boot/virtio_blk.ko");
	text = test_read(p);
	assert_string_equal(text, "fake module kernel/drivers/block/virtio_blk\n");
	free(text);
	free(p);
	p = path_join(out, "etc/fswb-initramfs");
	text = test_read(p);
	assert_non_null(strstr(text, "VERSION='9.9.9-test'"));
	assert_non_null(strstr(text, "/lib/fswb-boot/virtio_ring.ko /lib/fswb-boot/virtio.ko"));
	assert_non_null(strstr(text, "DEFAULT_INIT='/usr/local/sbin/fswb-init'"));
	free(text);
	free(p);

	/* the second time: the same image, not rebuilt */
	assert_int_equal(initramfs_ensure(loop, NULL, "9.9.9-test", dir, &again), OK);
	assert_string_equal(path, again);
	assert_int_equal(stat(again, &st2), 0);
	assert_int_equal(st1.st_mtim.tv_sec, st2.st_mtim.tv_sec);
	assert_int_equal(st1.st_mtim.tv_nsec, st2.st_mtim.tv_nsec);
	free(again);
	{
		/* no temporary files left beside it */
		char *d = xstrdup(path);
		DIR *dd;
		struct dirent *de;
		unsigned n = 0;

		*strrchr(d, '/') = '\0';
		dd = opendir(d);
		while ((de = readdir(dd)))
			if (de->d_name[0] != '.')
				n++;
		closedir(dd);
		assert_int_equal(n, 1);
		free(d);
	}

	/* a kernel with no modules needs none */
	{
		char *none = test_tmp("none");

		assert_int_equal(initramfs_ensure(loop, NULL, "9.9.9-none", none, &again), OK);
		assert_null(again);
		free(none);
	}
	free(path);
	free(out);
	free(dir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_module_name),
		cmocka_unit_test(test_elf_static),
		cmocka_unit_test(test_cpio),
		cmocka_unit_test(test_plan_fake),
		cmocka_unit_test(test_plan_modular_ext4),
		cmocka_unit_test(test_plan_missing_and_none),
		cmocka_unit_test(test_plan_installed),
		cmocka_unit_test(test_ensure_fake),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
