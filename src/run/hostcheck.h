/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Host checks: what this machine has for each backend, in findings a
 * newcomer can act on. `fswb doctor` prints them; the TUI's welcome screen
 * shows the same list. Nothing here prints or draws.
 *
 * A finding is one thing looked at ("qemu-system-x86_64", "KVM", "cache
 * disk") with its state, a detail (the version or place when it is fine,
 * what is missing and why when it is not) and, when something is to be
 * done, the exact command that fixes it on this distribution
 * ("sudo apt-get install xfsprogs"; /etc/os-release decides: Debian and
 * Ubuntu use apt-get, Fedora dnf).
 *
 * Findings come in groups: "host" (kernel, cache disk, mkfs tools, the
 * appliance build), then one per backend of this fswb (backend_names()), from
 * what the backend declares (backend.h: its programs, and its doctor slot's
 * own findings, such as qemu's KVM). No list of backends lives here: a
 * backend that does not exist has no findings. Only the findings marked
 * required decide whether the default path -- a local QEMU guest booting an
 * installed kernel with the appliance, ext4/4k -- can work.
 *
 *	required, decides `ready`:
 *	    qemu-system-x86_64, qemu-img, an installed kernel (or a kernel tree in
 *	    the current directory), mkfs.ext4, a way to build the appliance
 *	    (appliance_probe()), at least HOSTCHECK_DISK_MIN free in the cache
 *	warnings that leave it ready:
 *	    no usable KVM (sets `slow`), less than HOSTCHECK_DISK_WARN free
 *	informational:
 *	    mkfs.xfs, mkfs.btrfs, mkfs.f2fs (per filesystem of the profiles)
 *
 * KVM is decided by trying (qemu's doctor slot, backends/kvm.h), never by
 * the device node alone; its boot trial boots the installed kernel for at
 * most opts->kvm_boot_ms.
 *
 * Call sequence:
 *	struct hostcheck hc;
 *	struct hostcheck_opts o = HOSTCHECK_OPTS_INIT;   every field NULL: the real host
 *	hostcheck_run(loop, &o, &hc);                    runs programs through spawn.h
 *	for (size_t i = 0; i < hc.n; i++) ... hc.v[i] ...  in group order
 *	hc.ready, hc.slow
 *	hostcheck_release(&hc);
 *
 * Programs run (each through spawn.h with a timeout, in its own process
 * group, only when found and opts->run_programs): QEMU and the mkfs tools for
 * their versions, and the KVM boot trial. The loop must not
 * be done on entry; other watchers keep running meanwhile.
 *
 * Every path, the PATH and the environment values it reads can be given in
 * opts, so tests point it at fake files. Strings are owned by the struct.
 */
#ifndef FSWB_RUN_HOSTCHECK_H
#define FSWB_RUN_HOSTCHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/loop.h"
#include "core/plan.h"
#include "core/profile.h"
#include "core/status.h"
#include "core/util.h"

#define HOSTCHECK_DISK_MIN  (4ull << 30)  /* below this the appliance does not fit */
#define HOSTCHECK_DISK_WARN (10ull << 30) /* below this: a warning */

/* The group of the host's own findings; the others are named as their backends. */
#define HC_HOST "host"

/* What the group is about, one line: the host's, or the backend's description. */
const char *hc_group_title(const char *group);

enum hc_state {
	HC_OK,	    /* there and usable */
	HC_WARN,    /* usable, with a caveat (emulation, little disk) */
	HC_MISSING, /* not there or not usable */
};

/* "ok", "WARN", "MISSING". */
const char *hc_state_str(enum hc_state s);

struct hc_finding {
	const char *group; /* HC_HOST or a backend's name (a static string) */
	enum hc_state state;
	bool required; /* part of the default local QEMU path */
	bool shown;    /* worth showing on the welcome screen even when fine (a backend's own) */
	char *name;    /* "qemu-system-x86_64", "KVM", "mkfs.xfs", "cache disk" */
	char *detail; /* "7.2.22", "75 GiB free in ~/.cache/fswb", "(xfs configurations need it)" */
	char *fix;    /* the command or step that fixes it; NULL when nothing is to do */
};

/* ---- distributions ---- */

enum hc_family {
	HC_FAMILY_UNKNOWN,
	HC_FAMILY_DEBIAN, /* Debian, Ubuntu and their derivatives: apt-get */
	HC_FAMILY_FEDORA, /* Fedora, RHEL, CentOS: dnf */
};

struct hc_os {
	enum hc_family family;
	char *id;     /* ID= ("debian", "ubuntu", "fedora"), or NULL */
	char *pretty; /* PRETTY_NAME=, or NULL */
};

/*
 * Read an os-release file (NULL: /etc/os-release). The family comes from ID,
 * then ID_LIKE. A missing file is OK with HC_FAMILY_UNKNOWN; ERR_IO when it
 * cannot be read. hc_os_release() frees the strings.
 */
enum status hostcheck_os(const char *os_release, struct hc_os *out);
void hc_os_release(struct hc_os *os);

/*
 * The package that holds prog ("mkfs.xfs", "qemu-img", "mmdebstrap",
 * "newuidmap", "adb", "ssh", "gcloud", "libvirtd") on family; NULL for a
 * program this table does not know.
 */
const char *hostcheck_package(enum hc_family family, const char *prog);
/*
 * The command that installs prog's package: "sudo apt-get install xfsprogs",
 * "sudo dnf install xfsprogs", or for an unknown family "install xfsprogs
 * (Debian's name) with your package manager". free() it; NULL when the
 * package is unknown.
 */
char *hostcheck_install_cmd(const struct hc_os *os, const char *prog);

/* ---- the pieces ---- */

/* The first "1.2" or "v1.2.3"-shaped word of text ("7.2.22"), or NULL. free() it. */
char *hostcheck_version(const char *text);

/*
 * Free bytes for an unprivileged user in dir's filesystem; a dir that does
 * not exist yet is measured at its nearest existing parent. ERR_IO naming
 * the path when statvfs fails.
 */
enum status hostcheck_free_space(const char *dir, uint64_t *bytes);

/* ---- all of it ---- */

struct hostcheck_opts {
	const char *path;	/* PATH for programs; NULL: $PATH */
	const char *sbin;	/* also searched for sbin tools (mkfs.*); NULL: /usr/sbin:/sbin;
				   "" none */
	const char *os_release; /* NULL: /etc/os-release */
	const char *kvm_dev;	/* NULL: /dev/kvm */
	const char *cache_dir;	/* NULL: fswb_dir(DIR_CACHE) */
	const char *cwd;	/* for a kernel tree here; NULL: the current directory */
	const struct profiles *profiles; /* the filesystems to check mkfs for; NULL: ext4,
					    xfs, btrfs, f2fs */
	bool run_programs;		 /* versions, the KVM boot trial */
	unsigned kvm_boot_ms;		 /* the boot trial's limit; 0: 6000 */
	unsigned timeout_ms;		 /* any other program's limit; 0: 5000 */
	const struct plan *plan; /* a backend's options to check its machine with; or NULL */
};

#define HOSTCHECK_OPTS_INIT          \
	{                            \
		.run_programs = true \
	}

struct hostcheck {
	struct hc_finding *v; /* in group order, then the order checked */
	size_t n, alloc;
	struct hc_os os;
	bool ready;   /* every required finding is not HC_MISSING */
	bool slow;    /* ready, but guests run slowly (a backend says so: no KVM) */
	bool untried; /* a backend's finding is known only after the full check's trial */
	char *kernel; /* the kernel the default path boots, or NULL */
};

/*
 * Check everything into *out (hostcheck_release() it, also on failure).
 * OK even when things are missing: that is what the findings say.
 */
enum status hostcheck_run(struct loop *loop, const struct hostcheck_opts *opts,
			  struct hostcheck *out);
void hostcheck_release(struct hostcheck *hc);

/* The findings of one group, in order: a helper for views. Returns how many. */
size_t hostcheck_group(const struct hostcheck *hc, const char *group,
		       const struct hc_finding **first);

#endif
