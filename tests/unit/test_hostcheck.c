/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Host checks: os-release and the install commands, finding programs,
 * versions, the KVM device and boot trial (with stand-in QEMU scripts),
 * free space, sockets, ssh keys, GCE credentials, adb's device list, and a
 * whole check against a fake host (a scratch PATH, /boot, HOME and
 * libvirt directory).
 */
#include "testlib.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "backends/backend.h"
#include "backends/kvm.h"
#include "run/hostcheck.h"
#include "core/loop.h"
#include "core/paths.h"
#include "core/profile.h"
#include "core/util.h"

static struct loop *loop;

static int
setup(void **state)
{
	if (test_setup_hermetic(state))
		return -1;
	unsetenv("FSWB_CACHE_DIR");
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

/* Write an executable script. */
static void
script(const char *path, const char *body)
{
	char *text = xasprintf("#!/bin/sh\n%s", body);

	test_write(path, text);
	assert_int_equal(chmod(path, 0755), 0);
	free(text);
}

static void
link_real(const char *bindir, const char *prog)
{
	char *real = path_which(prog, "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", NULL);
	char *dst = path_join(bindir, prog);

	if (!real)
		fail_msg("'%s' is not installed here; the test needs it", prog);
	assert_int_equal(symlink(real, dst), 0);
	free(real);
	free(dst);
}

static const struct hc_finding *
finding(const struct hostcheck *hc, const char *name)
{
	for (size_t i = 0; i < hc->n; i++)
		if (!strcmp(hc->v[i].name, name))
			return &hc->v[i];
	fail_msg("no finding '%s'", name);
	return NULL;
}

/* ---- os-release ---- */

static void
test_os_release(void **state)
{
	char *p = test_tmp("os/debian");
	struct hc_os os;
	char *cmd;

	test_write(p, "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nNAME=\"Debian GNU/Linux\"\n"
		      "VERSION_CODENAME=bookworm\nID=debian\n");
	assert_int_equal(hostcheck_os(p, &os), OK);
	assert_int_equal(os.family, HC_FAMILY_DEBIAN);
	assert_string_equal(os.id, "debian");
	assert_string_equal(os.pretty, "Debian GNU/Linux 12 (bookworm)");
	cmd = hostcheck_install_cmd(&os, "mkfs.xfs");
	assert_string_equal(cmd, "sudo apt-get install xfsprogs");
	free(cmd);
	cmd = hostcheck_install_cmd(&os, "qemu-img");
	assert_string_equal(cmd, "sudo apt-get install qemu-utils");
	free(cmd);
	cmd = hostcheck_install_cmd(&os, "kernel");
	assert_string_equal(cmd, "sudo apt-get install linux-image-cloud-amd64");
	free(cmd);
	assert_null(hostcheck_install_cmd(&os, "no-such-program"));
	hc_os_release(&os);
	free(p);

	p = test_tmp("os/ubuntu");
	test_write(p, "NAME=\"Ubuntu\"\nID=ubuntu\nID_LIKE=debian\n");
	assert_int_equal(hostcheck_os(p, &os), OK);
	assert_int_equal(os.family, HC_FAMILY_DEBIAN);
	cmd = hostcheck_install_cmd(&os, "kernel");
	assert_string_equal(cmd, "sudo apt-get install linux-image-generic");
	free(cmd);
	hc_os_release(&os);
	free(p);

	/* a derivative known only through ID_LIKE, with single quotes */
	p = test_tmp("os/like");
	test_write(p, "ID='someos'\nID_LIKE='rhel centos fedora'\n");
	assert_int_equal(hostcheck_os(p, &os), OK);
	assert_int_equal(os.family, HC_FAMILY_FEDORA);
	assert_string_equal(os.id, "someos");
	cmd = hostcheck_install_cmd(&os, "qemu-system-x86_64");
	assert_string_equal(cmd, "sudo dnf install qemu-system-x86");
	free(cmd);
	cmd = hostcheck_install_cmd(&os, "newuidmap");
	assert_string_equal(cmd, "sudo dnf install shadow-utils");
	free(cmd);
	hc_os_release(&os);
	free(p);

	/* IDs that only start like a known one are not it */
	p = test_tmp("os/other");
	test_write(p, "ID=debianish\nIDX=fedora\n");
	assert_int_equal(hostcheck_os(p, &os), OK);
	assert_int_equal(os.family, HC_FAMILY_UNKNOWN);
	cmd = hostcheck_install_cmd(&os, "mkfs.btrfs");
	assert_non_null(strstr(cmd, "btrfs-progs"));
	assert_null(strstr(cmd, "sudo"));
	free(cmd);
	hc_os_release(&os);
	free(p);

	p = test_tmp("os/absent");
	assert_int_equal(hostcheck_os(p, &os), OK);
	assert_int_equal(os.family, HC_FAMILY_UNKNOWN);
	assert_null(os.id);
	hc_os_release(&os);
	free(p);
}

/* ---- programs and versions ---- */

static void
test_find(void **state)
{
	char *bin = test_tmp("find/bin"), *sbin = test_tmp("find/sbin");
	char *p = path_join(bin, "tool"), *q = path_join(sbin, "stool");
	char *r = path_join(bin, "plain"), *d = path_join(bin, "dir");
	char *path = xasprintf("/nonexistent:%s", bin);
	char *found;

	script(p, "exit 0\n");
	script(q, "exit 0\n");
	test_write(r, "not executable\n");
	assert_int_equal(mkdir_p(d, 0755), OK);

	found = path_which("tool", path, NULL);
	assert_string_equal(found, p);
	free(found);
	assert_null(path_which("plain", path, NULL));
	assert_null(path_which("dir", path, NULL));
	assert_null(path_which("stool", path, NULL));
	found = path_which("stool", path, sbin);
	assert_string_equal(found, q);
	free(found);
	free(bin);
	free(sbin);
	free(p);
	free(q);
	free(r);
	free(d);
	free(path);
}

static void
test_version(void **state)
{
	static const struct {
		const char *text, *want;
	} cases[] = {
		{ "QEMU emulator version 7.2.22 (Debian 1:7.2+dfsg-7+deb12u18+b3)\n", "7.2.22" },
		{ "qemu-img version 8.2.1\nCopyright (c) 2003-2023\n", "8.2.1" },
		{ "mke2fs 1.47.0 (5-Feb-2023)\n\tUsing EXT2FS Library version 1.47.0\n", "1.47.0" },
		{ "mkfs.xfs version 6.1.0\n", "6.1.0" },
		{ "mkfs.btrfs, part of btrfs-progs v6.2\n", "6.2" },
		{ "mkfs.f2fs 1.15.0 (2022-05-13)\n", "1.15.0" },
		{ "debootstrap 1.0.128+nmu2+deb12u2\n", "1.0.128" },
		{ "no version here, 12 or .5 or 3.\n", NULL },
		{ "", NULL },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char *v = hostcheck_version(cases[i].text);

		if (cases[i].want) {
			assert_non_null(v);
			assert_string_equal(v, cases[i].want);
		} else {
			assert_null(v);
		}
		free(v);
	}
}

/* ---- KVM ---- */

static void
test_kvm_device(void **state)
{
	char *none = test_tmp("kvm/none"), *file = test_tmp("kvm/file");
	char *why = NULL;

	assert_int_equal(kvm_try_device(none, &why), KVM_TRY_NODEV);
	assert_non_null(strstr(why, none));
	free(why);

	test_write(file, "not a device\n");
	assert_int_equal(kvm_try_device(file, &why), KVM_TRY_BROKEN);
	assert_non_null(strstr(why, "not a KVM device"));
	free(why);

	/* a character device that is not KVM */
	assert_int_equal(kvm_try_device("/dev/null", &why), KVM_TRY_BROKEN);
	free(why);
	/* FSWB_KVM_DEV in place of /dev/kvm (the UI tests' host without KVM) */
	setenv("FSWB_KVM_DEV", none, 1);
	assert_int_equal(kvm_try_device(NULL, &why), KVM_TRY_NODEV);
	assert_non_null(strstr(why, none));
	free(why);
	unsetenv("FSWB_KVM_DEV");

	if (geteuid() != 0) {
		assert_int_equal(chmod(file, 0), 0);
		assert_int_equal(kvm_try_device(file, &why), KVM_TRY_NOPERM);
		assert_non_null(strstr(why, "'kvm' group"));
		free(why);
	}
	free(none);
	free(file);
}

/* One verdict per host boot and QEMU: what sessions, the probe and doctor all read. */
static void
test_kvm_verdict(void **state)
{
	char *qemu = test_tmp("verdict/qemu-system-x86_64"), *other = test_tmp("verdict/other");
	char *why = NULL;

	test_write(qemu, "");
	test_write(other, "");
	assert_int_equal(kvm_verdict(qemu, &why), -1);
	assert_null(why);
	kvm_verdict_save(qemu, false, "a guest kernel printed nothing in 6 s");
	assert_int_equal(kvm_verdict(qemu, &why), 0);
	assert_string_equal(why, "a guest kernel printed nothing in 6 s");
	free(why);
	why = NULL;
	/* another QEMU was not tried */
	assert_int_equal(kvm_verdict(other, NULL), -1);
	kvm_verdict_save(qemu, true, NULL);
	assert_int_equal(kvm_verdict(qemu, &why), 1);
	assert_null(why);
	free(qemu);
	free(other);
}

static void
test_kvm_boot(void **state)
{
	char *q = test_tmp("kvmboot/qemu"), *why = NULL;
	uint64_t t0;

	/* the banner comes: KVM works (and the trial does not wait for the exit) */
	script(q, "echo 'Linux version 9.9.9 (x@y) #1'\nsleep 30\n");
	t0 = loop_now_ms();
	assert_int_equal(kvm_try_boot(loop, q, "/boot/k", 5000, &why), KVM_TRY_OK);
	assert_true(loop_now_ms() - t0 < 4000);
	assert_null(why);

	/* silence until the limit: nested virtualisation that never runs a guest */
	script(q, "sleep 30\n");
	t0 = loop_now_ms();
	assert_int_equal(kvm_try_boot(loop, q, "/boot/k", 300, &why), KVM_TRY_NOBOOT);
	assert_true(loop_now_ms() - t0 < 3000);
	assert_non_null(strstr(why, "nested virtualisation"));
	free(why);

	/* QEMU says why it cannot */
	script(q, "echo 'Could not access KVM kernel module: Permission denied' >&2\n"
		  "echo 'qemu-system-x86_64: failed to initialize kvm' >&2\nexit 1\n");
	assert_int_equal(kvm_try_boot(loop, q, "/boot/k", 3000, &why), KVM_TRY_NOBOOT);
	assert_non_null(strstr(why, "Could not access KVM kernel module"));
	free(why);

	/* a kernel QEMU cannot load says nothing about KVM */
	script(q, "echo 'qemu: could not load kernel /boot/k: Permission denied' >&2\nexit 1\n");
	assert_int_equal(kvm_try_boot(loop, q, "/boot/k", 3000, &why), KVM_TRY_UNTRIED);
	assert_non_null(strstr(why, "/boot/k"));
	free(why);

	/* no such program */
	assert_int_equal(kvm_try_boot(loop, "/nonexistent/qemu", "/boot/k", 3000, &why),
			 KVM_TRY_UNTRIED);
	free(why);
	free(q);
}

/* ---- disk, sockets, keys, credentials, adb ---- */

static void
test_free_space(void **state)
{
	char *deep = test_tmp("not/yet/made");
	uint64_t bytes = 0;
	struct statvfs st;

	assert_int_equal(hostcheck_free_space(deep, &bytes), OK);
	assert_int_equal(statvfs(test_scratch, &st), 0);
	/* the same filesystem, measured a moment apart */
	assert_true(bytes > 0);
	assert_true(bytes / (1u << 20) <= (uint64_t)st.f_bavail * st.f_frsize / (1u << 20) + 64);
	assert_false(path_exists(deep));
	free(deep);
}

/* ---- the whole check on a fake host ---- */

struct fake {
	char *bin, *boot, *mods, *home, *osr, *kvm;
	char *old_path;
};

static void
fake_host(struct fake *f)
{
	char *p = test_tmp("host");

	/* each test gets a fresh host */
	assert_int_equal(remove_tree(p), OK);
	free(p);
	f->bin = test_tmp("host/bin");
	f->boot = test_tmp("host/boot");
	f->mods = test_tmp("host/lib/modules");
	f->home = test_tmp("host/home");
	f->osr = test_tmp("host/os-release");
	f->kvm = test_tmp("host/dev/kvm"); /* never created */
	assert_int_equal(mkdir_p(f->bin, 0755), OK);
	assert_int_equal(mkdir_p(f->home, 0755), OK);
	test_write(f->osr, "ID=fedora\nPRETTY_NAME=\"Fedora Linux 40\"\n");
	p = path_join(f->boot, "vmlinuz-6.9.0-test");
	test_write(p, "not really a kernel\n");
	free(p);
	p = path_join(f->mods, "6.9.0-test/modules.dep");
	test_write(p, "");
	free(p);
	setenv("FSWB_BOOT_DIR", f->boot, 1);
	setenv("FSWB_MODULES_DIR", f->mods, 1);
	/* what the appliance probe needs, found through $PATH as it does */
	link_real(f->bin, "mmdebstrap");
	link_real(f->bin, "du");
	link_real(f->bin, "tar");
	link_real(f->bin, "sh");
	link_real(f->bin, "sleep");
	link_real(f->bin, "mkfs.ext4");
	f->old_path = xstrdup(getenv("PATH") ? getenv("PATH") : "");
	setenv("PATH", f->bin, 1);
}

static void
fake_release(struct fake *f)
{
	setenv("PATH", f->old_path, 1);
	unsetenv("FSWB_BOOT_DIR");
	unsetenv("FSWB_MODULES_DIR");
	free(f->bin);
	free(f->boot);
	free(f->mods);
	free(f->home);
	free(f->osr);
	free(f->kvm);
	free(f->old_path);
}

static void
fake_opts(const struct fake *f, struct hostcheck_opts *o)
{
	o->path = f->bin;
	o->sbin = "";
	o->os_release = f->osr;
	o->kvm_dev = f->kvm;
	o->cwd = f->home; /* not a kernel tree */
}

static void
assert_ready_matches(const struct hostcheck *hc)
{
	bool ready = true;

	for (size_t i = 0; i < hc->n; i++)
		if (hc->v[i].required && hc->v[i].state == HC_MISSING)
			ready = false;
	assert_int_equal(hc->ready, ready);
	/* in group order: a group's findings are together, host first */
	assert_string_equal(hc->v[0].group, HC_HOST);
	for (size_t i = 1; i < hc->n; i++)
		for (size_t j = 0; j + 1 < i; j++)
			if (!strcmp(hc->v[j].group, hc->v[i].group))
				assert_string_equal(hc->v[i - 1].group, hc->v[i].group);
}

static void
test_run_without_qemu(void **state)
{
	struct hostcheck_opts o = HOSTCHECK_OPTS_INIT;
	struct hostcheck hc;
	const struct hc_finding *f, *first;
	struct profiles prof;
	char *dir = test_path("profiles");
	struct fake fk;

	fake_host(&fk);
	fake_opts(&fk, &o);
	assert_int_equal(profiles_load(dir, &prof), OK);
	o.profiles = &prof;
	o.run_programs = false;
	assert_int_equal(hostcheck_run(loop, &o, &hc), OK);
	assert_int_equal(hc.os.family, HC_FAMILY_FEDORA);
	assert_false(hc.ready);
	assert_ready_matches(&hc);

	f = finding(&hc, "qemu-system-x86_64");
	assert_string_equal(f->group, "qemu");
	assert_int_equal(f->state, HC_MISSING);
	assert_true(f->required);
	assert_string_equal(f->fix, "sudo dnf install qemu-system-x86");
	f = finding(&hc, "qemu-img");
	assert_int_equal(f->state, HC_MISSING);
	assert_string_equal(f->fix, "sudo dnf install qemu-img");

	f = finding(&hc, "kernel");
	assert_int_equal(f->state, HC_OK);
	assert_non_null(strstr(f->detail, "6.9.0-test"));
	assert_non_null(hc.kernel);

	f = finding(&hc, "mkfs.ext4");
	assert_int_equal(f->state, HC_OK);
	assert_true(f->required);
	/* every filesystem of the profiles, not needed for the default */
	f = finding(&hc, "mkfs.xfs");
	assert_int_equal(f->state, HC_MISSING);
	assert_false(f->required);
	assert_string_equal(f->detail, "(xfs configurations need it)");
	assert_string_equal(f->fix, "sudo dnf install xfsprogs");
	f = finding(&hc, "mkfs.btrfs");
	assert_int_equal(f->state, HC_MISSING);
	f = finding(&hc, "mkfs.f2fs");
	assert_int_equal(f->state, HC_MISSING);
	f = finding(&hc, "mkfs.vfat");
	assert_string_equal(f->fix, "sudo dnf install dosfstools");
	/* tmpfs has no device to format */
	for (size_t i = 0; i < hc.n; i++)
		assert_string_not_equal(hc.v[i].name, "mkfs.tmpfs");

	f = finding(&hc, "KVM");
	assert_int_equal(f->state, HC_WARN);
	assert_true(f->shown);
	assert_false(f->required);
	assert_non_null(strstr(f->detail, "no KVM: guests run under emulation (TCG)"));
	assert_non_null(f->fix);

	/* a group per backend of this fswb, and none for backends it does not have */
	for (size_t i = 0; i < hc.n; i++)
		assert_true(!strcmp(hc.v[i].group, HC_HOST) || backend_find(hc.v[i].group));
	assert_int_equal(hostcheck_group(&hc, "nope", &first), 0);
	/* gce: its programs only (no project named), nothing of it on the welcome screen */
	assert_true(hostcheck_group(&hc, "gce", &first) > 0);
	for (size_t i = 0; i < hc.n; i++)
		if (!strcmp(hc.v[i].group, "gce")) {
			assert_false(hc.v[i].shown);
			assert_false(hc.v[i].required);
		}
	/* adb: not chosen, so no device is looked at, and nothing of it on the welcome screen */
	assert_true(hostcheck_group(&hc, "adb", &first) > 0);
	for (size_t i = 0; i < hc.n; i++)
		if (!strcmp(hc.v[i].group, "adb"))
			assert_false(hc.v[i].shown);
	assert_true(hostcheck_group(&hc, "qemu", &first) > 0);
	/* libvirt: not chosen, so its daemon is not asked about, and nothing MISSING */
	assert_int_equal(hostcheck_group(&hc, "libvirt", &first), 1);
	assert_int_equal(first->state, HC_OK);
	assert_false(first->shown);
	assert_non_null(
		strstr(first->detail, "not tried (fswb doctor --backend libvirt tries it)"));
	/* ssh: no machine named, so only how to name one, and nothing MISSING */
	assert_int_equal(hostcheck_group(&hc, "ssh", &first), 1);
	assert_int_equal(first->state, HC_OK);
	assert_non_null(strstr(first->detail, "fswb doctor --backend ssh -o host=HOST"));
	hostcheck_release(&hc);
	profiles_release(&prof);
	free(dir);
	fake_release(&fk);
}

static void
test_run_with_qemu(void **state)
{
	struct hostcheck_opts o = HOSTCHECK_OPTS_INIT;
	struct hostcheck hc;
	const struct hc_finding *f;
	struct fake fk;

	fake_host(&fk);
	fake_opts(&fk, &o);
	link_real(fk.bin, "qemu-system-x86_64");
	link_real(fk.bin, "qemu-img");
	o.run_programs = true;
	assert_int_equal(hostcheck_run(loop, &o, &hc), OK);
	assert_ready_matches(&hc);

	f = finding(&hc, "qemu-system-x86_64");
	assert_int_equal(f->state, HC_OK);
	/* the version QEMU printed, then where it is */
	assert_true(f->detail[0] >= '0' && f->detail[0] <= '9');
	assert_non_null(strstr(f->detail, fk.bin));
	assert_int_equal(finding(&hc, "qemu-img")->state, HC_OK);
	assert_int_equal(finding(&hc, "mkfs.ext4")->state, HC_OK);
	f = finding(&hc, "appliance build");
	if (f->state == HC_OK)
		assert_non_null(strstr(f->detail, "mmdebstrap"));
	/* ready exactly when nothing required is missing; qemu is not what is missing */
	if (!hc.ready)
		assert_int_equal(finding(&hc, "qemu-system-x86_64")->state, HC_OK);
	assert_non_null(strstr(finding(&hc, "KVM")->detail, "no KVM"));
	assert_int_equal(hc.slow, hc.ready);

	hostcheck_release(&hc);
	fake_release(&fk);
}

static void
test_names(void **state)
{
	assert_string_equal(hc_group_title(HC_HOST), "the kernel, disk and tools on this machine");
	assert_string_equal(hc_group_title("nope"), "?");
	assert_string_equal(hc_group_title("gce"), gce_backend.description);
	assert_string_equal(hc_group_title("adb"), adb_backend.description);
	assert_string_equal(hc_group_title("qemu"), qemu_backend.description);
	assert_string_equal(hc_state_str(HC_OK), "ok");
	assert_string_equal(hc_state_str(HC_MISSING), "MISSING");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_os_release),    cmocka_unit_test(test_find),
		cmocka_unit_test(test_version),	      cmocka_unit_test(test_kvm_device),
		cmocka_unit_test(test_kvm_verdict),   cmocka_unit_test(test_kvm_boot),
		cmocka_unit_test(test_free_space),    cmocka_unit_test(test_run_without_qemu),
		cmocka_unit_test(test_run_with_qemu), cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
