/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Backends: where tests run (contract v2). One file per backend (qemu.c,
 * stdio.c; libvirt.c, gce.c, ssh.c and adb.c follow the same table), each
 * exporting one const struct backend_ops. backend.c is the only caller of
 * the table: the engine and the front ends use the backend_* and session_*
 * functions below, and what they may assume is only what this file says.
 *
 * A backend gives the engine *sessions*: one test machine each (a VM, an
 * instance, a device, a process on this host) running fswb's guest agent,
 * with three byte streams from it:
 *	control	the agent's protocol (src/agent/agent_proto.h), both ways
 *	console	the kernel log (serial console, or `dmesg -w` on a device)
 *	shell	a shell in the machine, once asked for (BACKEND_SHELL)
 * The console is separate so that a panic is seen even when the agent died.
 * Everything on these streams is untrusted (DESIGN.md, the trust boundary).
 *
 * Call sequence (all on the loop's thread; callbacks come from the loop):
 *
 *	backends_init();                          process-wide, once (main)
 *	ops = backend_find(plan->backend);
 *	backend_check_options(plan);              at plan time: unknown keys,
 *	                                          bad values, with the fix
 *	backend_probe(ops, plan, &probe);         usable here? why not, the fix
 *	                                          (front ends: in a worker)
 *	backend_doctor(ops, loop, &o, v, max);    `fswb doctor`: beyond ops->programs
 *	backend_prepare(ops, loop, plan, &run);   run-wide artifacts (an image
 *	                                          upload); nothing for local ones
 *	  session_start(ops, loop, run, &spec, &cb, data, &s);
 *	    session_boot_limit(s), session_silence_limit(s)   the watchdog's limits
 *	    cb.on_console(data, bytes, n)*          kernel log as it comes
 *	    cb.on_control(data, bytes, n)*          agent bytes as they come
 *	    session_send(s, bytes, n)*              to the agent
 *	    session_shell_open(s)                   after the agent's SHELLREADY:
 *	      cb.on_shell(data, bytes, n)*            the shell's output; n == 0: it ended
 *	      session_shell_send(s, bytes, n)*        keys for it
 *	    session_cancel(s)                       stop the machine now (hung, Ctrl-C)
 *	    cb.on_exit(data, code, why)             once: the machine is gone
 *	  session_release(s)                        after on_exit, or instead of
 *	                                            waiting for it: kills what is left
 *	backend_discard(run);                     run-wide artifacts removed
 *	backends_cleanup();                       process-wide, once (main)
 *
 * After session_release nothing of the session remains: no process, no
 * overlay, no device file, no socket (DESIGN.md: nothing left behind).
 * Callbacks are never called from inside session_start, session_send,
 * session_shell_*, session_cancel or session_release.
 *
 * Leases: what would outlive a killed fswb (a process, a directory, an
 * instance) is written down before it exists, in a lease file of the
 * session (lease_add_pid, lease_add_path: see below), and the lease is
 * dropped by session_release. backend_leases_reap() at the next start
 * finds the leases of an fswb that is gone and removes what they hold;
 * backend_leases_list() shows them (`fswb doctor`).
 *
 * Caps, which the engine honours: no kernel is resolved or built without
 * BACKEND_BOOTS_KERNEL, no appliance without BACKEND_APPLIANCE; before a
 * BACKEND_WIPES backend formats anything, every existing device of the
 * session must be named in the backend option wipe=DEV[,DEV...] (the
 * user's confirmation; the engine refuses the session and names the
 * devices otherwise); a BACKEND_COSTS backend takes the option cost=ok, the
 * user's acceptance of its cost line, without which plan_check refuses the
 * plan and shows the line (for the run's expected duration); when the run
 * starts, the line is shown again as a warning. A BACKEND_DETACHES
 * backend's machine can run its job to the end without fswb (fswb run
 * --detach): once the engine has sent it the whole job and POWEROFF, it
 * calls session_detach(), which gives a token naming the machine; the
 * machine then keeps its output, sends its results where the backend reads
 * them later, and ends itself. A session started with spec->follow set to
 * that token (fswb results fetch) creates nothing: it passes on what the
 * machine sent from its start, as if it were live, and drops what the
 * engine sends it.
 */
#ifndef FSWB_BACKENDS_BACKEND_H
#define FSWB_BACKENDS_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/loop.h"
#include "core/plan.h"
#include "core/status.h"
#include "core/util.h"

/* What a backend can do; the engine and the wizard read these. */
enum backend_cap {
	BACKEND_BOOTS_KERNEL = 1u << 0, /* boots the kernel fswb chose (else: the machine's own) */
	BACKEND_APPLIANCE = 1u << 1,	/* runs fswb's appliance image (else: a prepared host) */
	BACKEND_PARALLEL = 1u << 2,	/* several sessions at once (shards) */
	BACKEND_SHELL = 1u << 3,	/* a shell in the test machine */
	BACKEND_COSTS = 1u << 4,	/* costs money while it runs (cloud) */
	BACKEND_WIPES = 1u << 5,	/* destroys data on the test machine (a device) */
	BACKEND_DETACHES = 1u << 6,	/* its machines can run on without fswb (a cloud) */
};

/* The answer of a probe, in words a newcomer can act on. */
struct backend_probe {
	bool usable;   /* a session can start here */
	char *summary; /* "ready: KVM", "ready: no KVM, emulation (slower)", "not usable" */
	char *why;     /* why not, or a caveat (KVM missing); may be NULL */
	char *fix;     /* the exact command or step that fixes it; may be NULL */
	bool slow;     /* works, but slowly (TCG): timeouts are multiplied */
	/*
	 * What the user must confirm before a run can start, in words ("trust
	 * the host key ED25519 SHA256:... of root@box:22", "format /dev/vdb
	 * (8.0 GiB, ext4) on root@box:22, destroying what it holds"), and the
	 * backend option that confirming sets ("hostkey=SHA256:...",
	 * "wipe=/dev/vdb"); both NULL when nothing waits for the user.
	 */
	char *confirm;
	char *confirm_opt;
	/*
	 * What the backend keeps on the machine between runs, which its forget
	 * slot removes ("a chroot in /data/fswb on SERIAL"), or NULL.
	 */
	char *kept;
};

void backend_probe_release(struct backend_probe *p);

/* A key a backend accepts in -o KEY=VALUE (plan.backend.options). */
struct backend_option {
	const char *key;   /* "qemu", "accel", "silence" */
	const char *value; /* what the value is, for messages: "PATH", "tcg" */
	/* Optional. OK, or an error saying what a good value is (the caller names the key). */
	enum status (*check)(const char *value);
};

/* A program a backend needs on this host; `fswb doctor` looks for it (src/run/hostcheck). */
struct backend_program {
	const char *name;	  /* "qemu-system-x86_64" */
	const char *version_flag; /* what makes it print its version ("--version"), or NULL */
	const char *why;	  /* what the backend does with it */
	bool required;		  /* the default path (a local QEMU guest) needs it */
};

/* What a backend's doctor slot found beyond its programs (KVM). */
enum finding_state {
	FINDING_OK,	 /* there and usable */
	FINDING_WARN,	 /* usable, with a caveat */
	FINDING_MISSING, /* not usable */
};

struct backend_finding {
	enum finding_state state;
	bool slow;    /* guests will run slowly (emulated) */
	bool untried; /* known only once a trial runs (with run_programs: a KVM boot) */
	const char *name;
	char *detail; /* owned: free() it */
	char *fix;    /* owned, or NULL */
};

/* Add a finding to out (up to max, *n so far), or drop it (freeing detail and fix) when full. */
void backend_finding_add(struct backend_finding *out, size_t max, size_t *n,
			 enum finding_state state, const char *name, char *detail, char *fix);

/* What a doctor slot may look at: every field can point a test at fake files. */
struct backend_doctor_opts {
	const char *path;    /* PATH for programs; NULL: $PATH */
	const char *kvm_dev; /* NULL: /dev/kvm */
	const char *kernel;  /* a kernel to boot for a trial, or NULL */
	bool run_programs;   /* it may run programs (boot a guest for a trial) */
	unsigned trial_ms;   /* such a trial's limit; 0: the backend's */
	/* the user's plan (fswb doctor --backend NAME -o KEY=VALUE): its machine; or NULL */
	const struct plan *plan;
};

/* One architecture, as the plan names it and as machines spell it. */
struct arch_info {
	const char *name;    /* the plan's: "x86_64", "arm64" */
	const char *machine; /* uname -m, QEMU's suffix: "x86_64", "aarch64" */
	const char *console; /* the kernel's serial console: "ttyS0", "ttyAMA0" */
};

/* For backend_option.check: whole seconds, 1 to 86400. */
enum status backend_option_seconds(const char *value);
/* For backend_option.check of accel=: only "tcg" (never KVM). */
enum status backend_option_tcg(const char *value);
/* A sparse file of size bytes at path, which must not exist: a disk of a local backend. */
enum status backend_make_disk(const char *path, uint64_t size);
/* A qcow2 overlay at overlay over the raw image appliance (never written): a guest's root. */
enum status backend_make_overlay(struct loop *loop, const char *appliance, const char *overlay);

/* The architecture called name (the plan's), or this host's for NULL; NULL when unknown. */
const struct arch_info *arch_find(const char *name);

/* A device the test machine gets (TEST_DEV, SCRATCH_DEV, a pool member...). */
struct session_disk {
	const char *role; /* "test", "scratch", "pool1".."poolN", "logdev", "rtdev" */
	uint64_t size;	  /* bytes, when the backend creates it (a sparse file locally) */
	const char *path; /* or an existing device on the machine (BACKEND_WIPES); NULL: create */
};

/* What one session needs. Every pointer stays valid until session_release. */
struct session_spec {
	const char *name;	      /* for messages and file names: "ext4-4k" */
	unsigned slot;		      /* the shard, from 0: which of several machines */
	const char *fstyp;	      /* the file system the disks get ("ext4"; an overlay's
					 base), for the tools a prepared machine needs; or NULL */
	const char *workdir;	      /* private scratch dir on this host; removed by release */
	const struct arch_info *arch; /* never NULL */
	const char *kernel;	      /* kernel image (BACKEND_BOOTS_KERNEL), else NULL */
	const char *initrd;	      /* initramfs, or NULL when the kernel needs none */
	const char *cmdline;	      /* a fragment for the kernel command line, or NULL */
	const char *appliance;	      /* root filesystem image (BACKEND_APPLIANCE, or when
					 fstests_from_appliance said yes), never written */
	const char *agent;	      /* fswb-agent on this host: for a machine without the
					 appliance, the backend runs or installs it */
	const struct session_disk *disks;
	size_t ndisks;
	unsigned cpus;
	uint64_t mem;		    /* bytes */
	const char *const *options; /* "key=value", checked by backend_check_options; may be NULL */
	/*
	 * BACKEND_DETACHES: > 0 when the engine may detach the session: the
	 * machine, left alone, ends itself after this many seconds at most
	 */
	unsigned detach;
	/* BACKEND_DETACHES: follow the detached machine this token names (detach) */
	const char *follow;
};

/* The value of option key in spec->options, or NULL. */
const char *session_spec_opt(const struct session_spec *spec, const char *key);
/* Option key as seconds (checked at plan time by backend_option_seconds), or dflt. */
unsigned session_spec_seconds(const struct session_spec *spec, const char *key, unsigned dflt);

/*
 * Where things are on the machine, for the job the engine sends. NULL
 * fields: the appliance's (AGENT_FSTESTS_DIR, AGENT_JOB_DIR, /mnt).
 */
struct session_layout {
	const char *fstests_dir; /* the fstests tree check runs in */
	const char *job_dir;	 /* where the agent keeps the job's FILEs */
	const char *mnt_dir;	 /* the mount points TEST_DIR and SCRATCH_MNT are made in */
	/*
	 * check's RESULT_BASE; NULL: FSTESTS/results. A backend whose sessions
	 * share one fstests tree (stdio) gives each its own.
	 */
	const char *results_dir;
};

struct session_callbacks {
	void (*on_control)(void *data, const char *buf, size_t len);
	void (*on_console)(void *data, const char *buf, size_t len);
	/* The shell's output after session_shell_open; len 0 once: the shell ended. */
	void (*on_shell)(void *data, const char *buf, size_t len);
	/*
	 * The machine is gone: OK for a clean power-off, else why (a crash, a
	 * kill); ERR_PREEMPTED: its provider took it away (a spot instance),
	 * and the test it ran goes back to the queue; ERR_NOROOM: its
	 * provider had no room to start it (a quota), and the run goes on with
	 * the machines it has.
	 */
	void (*on_exit)(void *data, enum status code, const char *why);
};

struct session;
struct lease;
/* A run's backend state (backend_prepare); NULL is a run with nothing prepared. */
struct backend_run;

struct backend_ops {
	const char *name;	 /* "qemu" */
	const char *description; /* one line for the wizard and --help */
	unsigned caps;		 /* enum backend_cap */
	bool internal;		 /* not offered to users: fswb's own tests use it (stdio) */
	/* The keys it accepts; { NULL } ends the list. Others are refused at plan time. */
	const struct backend_option *options;

	/* Optional. Process-wide set-up and tear-down (an event implementation, a library). */
	enum status (*init)(void);
	void (*cleanup)(void);

	/* Programs it needs on this host ({ NULL } ends it), for `fswb doctor`; NULL: none. */
	const struct backend_program *programs;
	/*
	 * Optional. `fswb doctor`'s findings beyond programs: up to max into
	 * out; returns how many. It may run programs when o->run_programs.
	 */
	size_t (*doctor)(struct loop *loop, const struct backend_doctor_opts *o,
			 struct backend_finding *out, size_t max);

	/*
	 * Required. Fill *out; return OK even when not usable (out says why).
	 * A front end asks it in a worker (run/inventory.h), so it may wait on
	 * a network (a handshake, a REST call) for a few seconds; it never
	 * boots or changes anything.
	 */
	enum status (*probe)(const struct plan *plan, struct backend_probe *out);

	/*
	 * Optional (NULL: nothing run-wide). Make what every session of the
	 * run shares (an uploaded image, a bucket); *priv goes to start and
	 * discard. What outlives the process goes into lease first.
	 */
	enum status (*prepare)(struct loop *loop, const struct plan *plan, struct lease *lease,
			       void **priv);
	/* Optional, with prepare. Remove what prepare made. */
	void (*discard)(void *priv);

	/*
	 * Required. Start a machine for spec; callbacks as above. Every
	 * process and file that outlives fswb if it is killed goes into lease
	 * (lease_add_pid, lease_add_path) as soon as it exists. On failure
	 * nothing is left behind and the message says what to do.
	 */
	enum status (*start)(struct loop *loop, void *run, const struct session_spec *spec,
			     const struct session_callbacks *cb, void *data, struct lease *lease,
			     void **priv);

	/* Required. Queue bytes for the agent; never blocks. */
	enum status (*send)(void *priv, const void *buf, size_t len);

	/* Required. Stop the machine now; on_exit follows from the loop. */
	void (*cancel)(void *priv);

	/*
	 * Required. The disk's device (or file) on the machine; free() it.
	 * NULL only for an optional role the machine has no device for
	 * ("logwrites" on a device the user named no log-writes device):
	 * the engine leaves that variable out and fstests says what did not run.
	 */
	char *(*disk_path)(void *priv, size_t index);

	/* Optional (NULL: the appliance's). Where things are on the machine. */
	const struct session_layout *(*layout)(void *priv);

	/*
	 * Optional (NULL: no shell; needs BACKEND_SHELL). Connect the shell
	 * stream, once the agent said SHELLREADY; its output comes to
	 * on_shell. shell_send queues keys for it.
	 */
	enum status (*shell_open)(void *priv);
	enum status (*shell_send)(void *priv, const void *buf, size_t len);

	/* Required. Kill what is left and remove every file of the session. */
	void (*release)(void *priv);

	/* Required. Seconds from start to the agent's HELLO before the machine counts as hung. */
	unsigned (*boot_limit)(void *priv);
	/* Required. Seconds a machine may be silent (no frame, no kernel log) before it is hung. */
	unsigned (*silence_limit)(void *priv);

	/* Optional. Something the user should know about this session ("no KVM"), or NULL. */
	const char *(*notice)(void *priv);

	/* Optional (NULL: no). The machine is slow (emulated): test limits are stretched. */
	bool (*slow)(void *priv);

	/*
	 * Optional (NULL: as many as the host or --shards say). How many
	 * machines the plan names (ssh's host=a,b,c): one session runs on each,
	 * session_spec.slot says which; 0: none named.
	 */
	unsigned (*machines)(const struct plan *plan);

	/*
	 * Optional (NULL: no). A backend without BACKEND_APPLIANCE whose machine
	 * has no fstests of its own for this plan: the engine makes the
	 * appliance anyway and the session takes fstests from it
	 * (spec->appliance).
	 */
	bool (*fstests_from_appliance)(const struct plan *plan);

	/*
	 * Optional, with lease_add_item. Remove what item names (a domain left
	 * by a killed fswb), at the next start; errors are not reported.
	 */
	void (*reap)(const char *item);

	/*
	 * Optional (NULL: qemu and stdio's sessions run here, others' do not).
	 * The plan's machines are this host (a local libvirt URI): shards are
	 * counted from its cores and memory.
	 */
	bool (*here)(const struct plan *plan);

	/*
	 * Optional (NULL: the plan's). The architecture of the plan's machine
	 * ("arm64", a device's), which the appliance is made for when the plan
	 * names none of its own (its arch is this host's); NULL when it cannot
	 * be told now (the session says why). It may wait on the machine: the
	 * engine asks it in its preparation worker.
	 */
	const char *(*machine_arch)(const struct plan *plan);

	/*
	 * Optional, with probe's kept. Remove what the backend keeps on the
	 * plan's machine between runs (adb: the chroot); *said (free() it) says
	 * what went. It may wait on the machine: a front end asks it in a worker.
	 */
	enum status (*forget)(const struct plan *plan, char **said);

	/*
	 * Optional. A plan about to run (backend_check_plan), after every option
	 * passed its check: what the options say together (a key the backend
	 * needs, the cost accepted); OK, or an error saying what to give.
	 */
	enum status (*check_plan)(const struct plan *plan);

	/*
	 * Optional, required with BACKEND_COSTS: what the run will cost, one
	 * line; free() it. machines: how many at once (0: the plan's shards,
	 * else 1); seconds: how long the run is expected to take (0: not known).
	 */
	char *(*cost)(const struct plan *plan, unsigned machines, double seconds);

	/*
	 * Required with BACKEND_DETACHES. Everything the machine needs was sent
	 * (the job, then POWEROFF; spec->detach was set): pass it on, then let
	 * the machine run on alone. Returns the token that names it for
	 * spec->follow (free() it), or NULL with an error. on_exit follows with
	 * OK once the machine has all it was sent; release then leaves it
	 * running, and the lease no longer holds it.
	 */
	char *(*detach)(void *priv, struct lease *lease);
};

/* Process-wide init and cleanup of every backend (main, once each). */
enum status backends_init(void);
void backends_cleanup(void);

/* The backends a user may choose, NULL-terminated names (plan_validate, the wizard, --help). */
const char *const *backend_names(void);
/* The backend called name, or NULL; "stdio" too, which backend_names() leaves out. */
const struct backend_ops *backend_find(const char *name);
/* The backend called name runs tests on a machine with its own kernel and packages (ssh). */
bool backend_own_machine(const char *name);

/* The plan's backend exists and takes its options: else an error naming the key and the fix. */
enum status backend_check_options(const struct plan *plan);
/* A plan about to run: backend_check_options, then what the backend's check_plan says. */
enum status backend_check_plan(const struct plan *plan);

enum status backend_probe(const struct backend_ops *ops, const struct plan *plan,
			  struct backend_probe *out);
/* `fswb doctor`: the backend's own findings (beyond ops->programs), up to max; how many. */
/* Remove what ops keeps on the plan's machine (ops->forget); ERR_UNSUPPORTED without one. */
enum status backend_forget(const struct backend_ops *ops, const struct plan *plan, char **said);
size_t backend_doctor(const struct backend_ops *ops, struct loop *loop,
		      const struct backend_doctor_opts *o, struct backend_finding *out, size_t max);

/* Run-wide: backend_prepare before the first session, backend_discard after the last. */
enum status backend_prepare(const struct backend_ops *ops, struct loop *loop,
			    const struct plan *plan, struct backend_run **out);
void backend_discard(struct backend_run *run);
/* The cost line of a BACKEND_COSTS backend (ops->cost); NULL for others. free() it. */
char *backend_cost(const struct backend_ops *ops, const struct plan *plan, unsigned machines,
		   double seconds);

enum status session_start(const struct backend_ops *ops, struct loop *loop, struct backend_run *run,
			  const struct session_spec *spec, const struct session_callbacks *cb,
			  void *data, struct session **out);
const struct backend_ops *session_ops(const struct session *s);
enum status session_send(struct session *s, const void *buf, size_t len);
void session_cancel(struct session *s);
/* The machine's device for spec->disks[index] ("/dev/vdb"), NULL for a missing optional one; free() it. */
char *session_disk_path(struct session *s, size_t index);
/* Where things are on the machine; never NULL (the appliance's when the backend says nothing). */
struct session_layout session_layout(struct session *s);
enum status session_shell_open(struct session *s);
enum status session_shell_send(struct session *s, const void *buf, size_t len);
unsigned session_boot_limit(struct session *s);
unsigned session_silence_limit(struct session *s);
/* What the user should know about the session (say, emulation instead of KVM), or NULL. */
const char *session_notice(struct session *s);
/* The machine is emulated or otherwise slow: the engine stretches its test limits. */
bool session_slow(struct session *s);
/* BACKEND_DETACHES: let the machine run on alone (ops->detach); its token, or NULL. */
char *session_detach(struct session *s);
void session_release(struct session *s);

/*
 * A lease: a file in DATA/leases/ naming the fswb process that holds it and
 * what a backend made that must not outlive it. Paths are absolute and
 * inside fswb's data or cache directory (others are refused).
 */
enum status lease_add_pid(struct lease *l, pid_t pid);
enum status lease_add_path(struct lease *l, const char *path);
/* Something only the backend knows how to remove (a libvirt domain): one line, its reap's. */
enum status lease_add_item(struct lease *l, const char *what);
/* The lease no longer holds the item (a machine detached to run on alone). */
enum status lease_drop_item(struct lease *l, const char *what);

/*
 * Leases of fswb processes that are gone: remove what they hold (SIGKILL to
 * each process still running as the same process, each path removed) and
 * the lease. One line per lease into *done ("qemu: pid 1234, /.../guest-ext4-4k").
 */
void backend_leases_reap(struct strvec *done);
/* Every lease, one line each, "held by fswb (pid N)" or "left by a killed fswb". */
void backend_leases_list(struct strvec *out);
/* The items (lease_add_item) that running fswbs hold for backend, into *items. */
void backend_leases_held(const char *backend, struct strvec *items);

extern const struct backend_ops qemu_backend;
extern const struct backend_ops stdio_backend;
extern const struct backend_ops ssh_backend;
extern const struct backend_ops libvirt_backend;
extern const struct backend_ops adb_backend;
extern const struct backend_ops gce_backend;

/*
 * `fswb appliance rm --device SERIAL`: what fswb keeps on an adb device in
 * work (NULL: /data/fswb), the chroot with it, removed.
 */
enum status adb_remove_work(const char *serial, const char *work);

#endif
