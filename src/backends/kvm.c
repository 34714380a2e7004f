/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Trying KVM: see kvm.h.
 */
#include "backends/kvm.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backends/backend.h"
#include "core/paths.h"
#include "core/spawn.h"
#include "core/util.h"

#define OUTPUT_MAX	 (64u << 10)
#define KVM_BOOT_MS	 6000
#define KVM_API_VERSION_ 12

enum kvm_try
kvm_try_device(const char *dev, char **why)
{
	const char *env = getenv("FSWB_KVM_DEV");
	const char *path = dev ? dev : env && *env ? env : "/dev/kvm";
	char *msg = NULL;
	enum kvm_try r = KVM_TRY_OK;
	int fd, v, vm;

	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;

		if (e == ENOENT || e == ENODEV || e == ENXIO) {
			r = KVM_TRY_NODEV;
			msg = xasprintf("there is no %s (no hardware virtualisation, or the kvm "
					"module is not loaded)",
					path);
		} else if (e == EACCES || e == EPERM) {
			r = KVM_TRY_NOPERM;
			msg = xasprintf("%s exists but this user may not open it (not in the "
					"'kvm' group)",
					path);
		} else {
			r = KVM_TRY_BROKEN;
			msg = xasprintf("%s cannot be opened: %s", path, strerror(e));
		}
		goto out;
	}
	v = ioctl(fd, KVM_GET_API_VERSION, 0);
	if (v != KVM_API_VERSION_) {
		r = KVM_TRY_BROKEN;
		msg = v < 0 ? xasprintf("%s is not a KVM device (KVM_GET_API_VERSION: %s)", path,
					strerror(errno))
			    : xasprintf("%s speaks KVM API version %d, not %d", path, v,
					KVM_API_VERSION_);
		goto out;
	}
	vm = ioctl(fd, KVM_CREATE_VM, 0);
	if (vm < 0) {
		r = KVM_TRY_NOVM;
		msg = xasprintf("KVM refuses to create a VM (KVM_CREATE_VM: %s): the kvm module "
				"or nested virtualisation refuses",
				strerror(errno));
		goto out;
	}
	close(vm);
out:
	if (fd >= 0)
		close(fd);
	if (why)
		*why = msg;
	else
		free(msg);
	return r;
}

enum kvm_try
kvm_try_boot(struct loop *loop, const char *qemu, const char *kernel, unsigned timeout_ms,
	     char **why)
{
	static const char *const env[] = { "LC_ALL=C", NULL };
	const char *argv[] = { qemu,
			       "-accel",
			       "kvm",
			       "-cpu",
			       "host",
			       "-m",
			       "256",
			       "-display",
			       "none",
			       "-nodefaults",
			       "-no-user-config",
			       "-no-reboot",
			       "-serial",
			       "stdio",
			       "-kernel",
			       kernel,
			       "-append",
			       "console=ttyS0 panic=-1 init=/fswb-kvm-test",
			       NULL };
	struct spawn_run run = { .argv = argv,
				 .env = env,
				 .err_to_out = true,
				 .new_pgrp = true,
				 .max_out = OUTPUT_MAX,
				 .timeout_ms = (int)(timeout_ms ? timeout_ms : KVM_BOOT_MS),
				 .until = "Linux version" };
	struct strbuf out = STRBUF_INIT;
	bool timed_out = false;
	enum kvm_try r = KVM_TRY_OK;
	char *msg = NULL;
	enum status rc;

	rc = spawn_run_opts(loop, &run, &out, NULL, &timed_out);
	if (rc != OK) {
		r = KVM_TRY_UNTRIED;
		msg = xasprintf("cannot start QEMU to try KVM: %s", error_msg());
	} else if (!strstr(out.buf, "Linux version")) {
		char *text = str_trim(out.buf);
		char *nl = strchr(text, '\n');

		if (nl)
			*nl = '\0';
		if (strstr(text, "ould not load") || strstr(text, "ould not open")) {
			r = KVM_TRY_UNTRIED;
			msg = xasprintf("QEMU cannot load '%s' to try KVM: %.200s", kernel, text);
		} else if (timed_out || !*text) {
			r = KVM_TRY_NOBOOT;
			msg = xasprintf(
				"KVM accepts a VM, but a guest kernel printed nothing in %u "
				"s (nested virtualisation is not working on this host)",
				(timeout_ms ? timeout_ms : KVM_BOOT_MS) / 1000);
		} else {
			r = KVM_TRY_NOBOOT;
			msg = xasprintf("QEMU cannot use KVM: %.200s", text);
		}
	}
	strbuf_release(&out);
	if (why)
		*why = msg;
	else
		free(msg);
	return r;
}

/* ---- the verdict of a boot trial, per host boot ---- */

static char *
verdict_path(void)
{
	char *dir = NULL, *p;

	if (fswb_dir_make(DIR_CACHE, "qemu", &dir) != OK)
		return NULL;
	p = path_join(dir, "kvm-verdict");
	free(dir);
	return p;
}

/* "BOOT_ID QEMU_PATH QEMU_MTIME": a verdict is for one host boot and binary. */
static char *
verdict_key(const char *qemu)
{
	char *boot = NULL;
	size_t len;
	struct stat st;
	char *key;

	if (read_file("/proc/sys/kernel/random/boot_id", 128, &boot, &len) != OK)
		boot = xstrdup("unknown");
	str_trim(boot);
	if (stat(qemu, &st))
		st.st_mtime = 0;
	key = xasprintf("%s %s %lld", boot, qemu, (long long)st.st_mtime);
	free(boot);
	return key;
}

int
kvm_verdict(const char *qemu, char **why)
{
	char *path = verdict_path(), *text = NULL, *key = verdict_key(qemu);
	size_t len, klen = strlen(key);
	int v = -1;

	if (path && read_file(path, 4096, &text, &len) == OK && len > klen + 2 &&
	    !strncmp(text, key, klen) && text[klen] == '\n') {
		v = text[klen + 1] == '1';
		if (!v && why) {
			*why = xstrdup(text + klen + 3);
			str_trim(*why);
		}
	}
	error_clear();
	free(path);
	free(text);
	free(key);
	return v;
}

void
kvm_verdict_save(const char *qemu, bool works, const char *why)
{
	char *path = verdict_path(), *key = verdict_key(qemu);
	char *text = xasprintf("%s\n%d %s\n", key, works, why ? why : "");

	if (path)
		write_file_atomic(path, text, strlen(text), 0644);
	error_clear();
	free(path);
	free(key);
	free(text);
}

/* The step that makes KVM usable, or NULL when there is none to give. */
const char *
kvm_fix_step(enum kvm_try k)
{
	switch (k) {
	case KVM_TRY_NODEV:
		return "enable virtualisation (VT-x/AMD-V) in the firmware or use a VM type with "
		       "nested virtualisation, then: sudo modprobe kvm_intel (or kvm_amd)";
	case KVM_TRY_NOPERM:
		return "sudo usermod -aG kvm $USER (then log out and in again)";
	case KVM_TRY_NOVM:
	case KVM_TRY_NOBOOT:
		return "enable nested virtualisation on the host (kvm_intel nested=1 or "
		       "kvm_amd nested=1) or run on bare metal";
	case KVM_TRY_OK:
	case KVM_TRY_BROKEN:
	case KVM_TRY_UNTRIED:
		break;
	}
	return NULL;
}

/* Why the KVM device is not usable (kvm_try_device), or NULL when it is. */
char *
kvm_device_problem(char **fix)
{
	char *why = NULL;

	enum kvm_try k = kvm_try_device(NULL, &why);

	*fix = NULL;
	if (k == KVM_TRY_OK || k == KVM_TRY_UNTRIED) {
		free(why);
		return NULL;
	}
	if (kvm_fix_step(k))
		*fix = xstrdup(kvm_fix_step(k));
	return why;
}

bool
kvm_choose(struct loop *loop, const struct session_spec *spec, const char *qemu, char **warning)
{
	const char *accel = session_spec_opt(spec, "accel");
	char *fix = NULL, *why;
	int v;
	bool ok;

	if (accel && !strcmp(accel, "tcg"))
		return false;
	if (strcmp(spec->arch->machine, "x86_64")) {
		*warning = xstrdup("KVM is not used for a foreign architecture: emulating "
				   "(slower, with longer timeouts)");
		return false;
	}
	why = kvm_device_problem(&fix);
	if (why) {
		*warning = xasprintf("KVM is not usable: %s%s%s; emulating instead (TCG: "
				     "slower, with longer timeouts)",
				     why, fix ? "; fix: " : "", fix ? fix : "");
		free(why);
		free(fix);
		return false;
	}
	v = kvm_verdict(qemu, &why);
	if (v < 0) {
		why = NULL;
		ok = kvm_try_boot(loop, qemu, spec->kernel, KVM_BOOT_MS, &why) == KVM_TRY_OK;
		kvm_verdict_save(qemu, ok, why);
		v = ok;
	}
	if (!v) {
		*warning = xasprintf("KVM is not usable: %s; emulating instead (TCG: slower, "
				     "with longer timeouts)",
				     why ? why : "it failed before");
		free(why);
	}
	return v == 1;
}
