/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Whether KVM works here, decided by trying: the device's ioctls, then a
 * real boot of a kernel under KVM (nested virtualisation can accept the
 * ioctls and never run a guest). The qemu backend and the host checks ask.
 */
#ifndef FSWB_BACKENDS_KVM_H
#define FSWB_BACKENDS_KVM_H

#include <stdbool.h>

#include "core/loop.h"

struct session_spec;

enum kvm_try {
	KVM_TRY_OK,	 /* opens, API 12, creates a VM */
	KVM_TRY_NODEV,	 /* no such device */
	KVM_TRY_NOPERM,	 /* EACCES/EPERM: not in the kvm group */
	KVM_TRY_BROKEN,	 /* opens, but is not a KVM device or has another API version */
	KVM_TRY_NOVM,	 /* KVM_CREATE_VM fails: the module or nesting refuses */
	KVM_TRY_NOBOOT,	 /* accepts a VM, but a guest kernel never runs */
	KVM_TRY_UNTRIED, /* the ioctls work; no guest was tried (no QEMU or kernel) */
};

/*
 * Try the KVM device dev (NULL: /dev/kvm) with the ioctls above. *why (may
 * be NULL) gets a sentence for anything but KVM_TRY_OK (free() it).
 */
enum kvm_try kvm_try_device(const char *dev, char **why);

/*
 * Boot kernel with qemu (-accel kvm, no root filesystem) and wait at most
 * timeout_ms for the kernel's "Linux version" banner on the serial console.
 * KVM_TRY_OK when it came, KVM_TRY_NOBOOT with *why when it did not.
 */
enum kvm_try kvm_try_boot(struct loop *loop, const char *qemu, const char *kernel,
			  unsigned timeout_ms, char **why);

/*
 * The verdict of the boot trial with qemu on this host boot, kept in fswb's
 * cache dir (qemu/kvm-verdict) under the key "BOOT_ID QEMU_PATH QEMU_MTIME"
 * (BOOT_ID from /proc/sys/kernel/random/boot_id): 1 KVM runs a guest, 0 it
 * does not (*why, may be NULL, gets why: free() it), -1 not tried yet on
 * this boot with this QEMU. Sessions, the probe and `fswb doctor` read the
 * same verdict, so each screen says the same and the trial is made once per
 * host boot.
 */
int kvm_verdict(const char *qemu, char **why);
/* Keep a trial's verdict for this host boot (errors are ignored: it is a cache). */
void kvm_verdict_save(const char *qemu, bool works, const char *why);

/* The step that makes KVM usable after kvm_try_device said k, or NULL when there is none. */
const char *kvm_fix_step(enum kvm_try k);
/* Why the KVM device is not usable (kvm_try_device), or NULL when it is; *fix its step or NULL. */
char *kvm_device_problem(char **fix);
/*
 * KVM or TCG for a session of spec with the QEMU binary qemu: the device,
 * then the boot trial (made once per host boot, kept by kvm_verdict_save).
 * accel=tcg in spec's options never tries. *warning gets why not KVM.
 */
bool kvm_choose(struct loop *loop, const struct session_spec *spec, const char *qemu,
		char **warning);

#endif
