/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Backends: where tests run. One file per backend (qemu.c today; libvirt.c,
 * gce.c, ssh.c and adb.c follow the same table), each exporting one
 * const struct backend_ops. backend.c is the only caller of the table: the
 * engine and the front ends use the backend_* and session_* functions below.
 *
 * A backend gives the engine a *session*: one test machine (a VM, an
 * instance, a device) running fswb's guest agent, and two byte streams from
 * it:
 *	control	the agent's protocol (src/agent/agent_proto.h), both ways
 *	console	the kernel log (serial console, or `dmesg -w` on a device)
 * The console is separate so that a panic is seen even when the agent died.
 *
 * Call sequence (all on the loop's thread; callbacks come from the loop):
 *
 *	ops = backend_find("qemu");
 *	backend_probe(ops, plan, &probe);          usable here? why not, the fix
 *	session_start(ops, loop, &spec, &cb, data, &s);
 *	    cb.on_console(data, bytes, n)*          kernel log as it comes
 *	    cb.on_control(data, bytes, n)*          agent bytes as they come
 *	    session_send(s, bytes, n)*              to the agent
 *	    session_cancel(s)                       stop the machine now (hung, Ctrl-C)
 *	    cb.on_exit(data, code, why)             once: the machine is gone
 *	session_release(s)                          after on_exit, or instead of
 *	                                            waiting for it: kills what is left
 *
 * After session_release nothing of the session remains: no process, no
 * overlay, no device file, no socket (DESIGN.md: nothing left behind).
 * Callbacks are never called from inside session_start, session_send,
 * session_cancel or session_release.
 */
#ifndef FSWB_BACKENDS_BACKEND_H
#define FSWB_BACKENDS_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/loop.h"
#include "core/plan.h"
#include "core/status.h"
#include "core/util.h"

/* What a backend can do; the wizard reads these to decide what to offer. */
enum backend_cap {
	BACKEND_BOOTS_KERNEL = 1u << 0, /* boots the kernel fswb chose (else: the device's own) */
	BACKEND_APPLIANCE = 1u << 1,	/* runs fswb's appliance image (else: a prepared host) */
	BACKEND_PARALLEL = 1u << 2,	/* several sessions at once (shards) */
	BACKEND_SHELL = 1u << 3,	/* a shell in the test machine */
	BACKEND_COSTS = 1u << 4,	/* costs money while it runs (cloud) */
	BACKEND_WIPES = 1u << 5,	/* destroys data on the test machine (a device) */
};

/* The answer of a probe, in words a newcomer can act on. */
struct backend_probe {
	bool usable;   /* a session can start here */
	char *summary; /* "ready: KVM", "ready: no KVM, emulation (slower)", "not usable" */
	char *why;     /* why not, or a caveat (KVM missing); may be NULL */
	char *fix;     /* the exact command or step that fixes it; may be NULL */
	bool slow;     /* works, but slowly (TCG): timeouts are multiplied */
};

void backend_probe_release(struct backend_probe *p);

/* A device the test machine gets (TEST_DEV, SCRATCH_DEV, a pool member...). */
struct session_disk {
	const char *role; /* "test", "scratch", "pool1".."poolN", "logdev", "rtdev" */
	uint64_t size;	  /* bytes; a sparse file on local backends */
};

/* What one session needs. Every pointer stays valid until session_release. */
struct session_spec {
	const char *name;      /* for messages and file names: "ext4-4k" */
	const char *workdir;   /* private scratch dir (overlays, sockets); removed by release */
	const char *kernel;    /* kernel image (BACKEND_BOOTS_KERNEL) */
	const char *initrd;    /* initramfs, or NULL when the kernel needs none */
	const char *cmdline;   /* extra kernel command line, or NULL */
	const char *appliance; /* root filesystem image (BACKEND_APPLIANCE), never written */
	const struct session_disk *disks;
	size_t ndisks;
	unsigned cpus;
	uint64_t mem;		 /* bytes */
	const struct plan *plan; /* backend options (plan_backend_opt) */
};

/*
 * The guest's disks appear in spec order after the root: /dev/vdb is
 * disks[0] on qemu. session_disk_path() tells the device name in the guest.
 */
struct session_callbacks {
	void (*on_control)(void *data, const char *buf, size_t len);
	void (*on_console)(void *data, const char *buf, size_t len);
	/* The machine is gone: OK for a clean power-off, else why (a crash, a kill). */
	void (*on_exit)(void *data, enum status code, const char *why);
};

struct session;

struct backend_ops {
	const char *name;	 /* "qemu" */
	const char *description; /* one line for the wizard */
	unsigned caps;		 /* enum backend_cap */

	/* Required. Fill *out; return OK even when not usable (out says why). */
	enum status (*probe)(const struct plan *plan, struct backend_probe *out);

	/*
	 * Required. Start a machine for spec; callbacks as above. On failure
	 * nothing is left behind and the message says what to do.
	 */
	enum status (*start)(struct loop *loop, const struct session_spec *spec,
			     const struct session_callbacks *cb, void *data, void **priv);

	/* Required. Queue bytes for the agent; never blocks. */
	enum status (*send)(void *priv, const void *buf, size_t len);

	/* Required. Stop the machine now; on_exit follows from the loop. */
	void (*cancel)(void *priv);

	/* Optional (NULL: /dev/vdb, /dev/vdc... in order). The disk's device in the guest. */
	char *(*disk_path)(void *priv, size_t index);

	/* Optional (NULL: no shell). A byte stream to a shell in the machine, as an fd. */
	enum status (*shell)(void *priv, int *fd);

	/* Required. Kill what is left and remove every file of the session. */
	void (*release)(void *priv);

	/* Optional. Seconds a guest may be silent before it counts as hung. */
	unsigned (*silence_limit)(void *priv);

	/* Optional. Something the user should know about this session ("no KVM"), or NULL. */
	const char *(*notice)(void *priv);

	/* Optional (NULL: no). The machine is slow (emulated): time limits are stretched. */
	bool (*slow)(void *priv);
};

/* The backends this fswb has, NULL-terminated names for plan_validate. */
const char *const *backend_names(void);
/* The backend called name, or NULL. */
const struct backend_ops *backend_find(const char *name);

enum status backend_probe(const struct backend_ops *ops, const struct plan *plan,
			  struct backend_probe *out);

enum status session_start(const struct backend_ops *ops, struct loop *loop,
			  const struct session_spec *spec, const struct session_callbacks *cb,
			  void *data, struct session **out);
enum status session_send(struct session *s, const void *buf, size_t len);
void session_cancel(struct session *s);
/* The guest's device for spec->disks[index] ("/dev/vdb"); free() it. */
char *session_disk_path(struct session *s, size_t index);
enum status session_shell(struct session *s, int *fd);
/* Seconds of silence (no heartbeat, no output) before the machine counts as hung. */
unsigned session_silence_limit(struct session *s);
/* What the user should know about the session (say, emulation instead of KVM), or NULL. */
const char *session_notice(struct session *s);
/* The machine is emulated or otherwise slow: the engine stretches its time limits. */
bool session_slow(struct session *s);
void session_release(struct session *s);

extern const struct backend_ops qemu_backend;

#endif
