/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The local QEMU backend: qemu-system-* started directly, no daemon.
 *
 * A session's files live in spec->workdir: the root overlay (qcow2 over the
 * appliance, which is never written), one sparse file per disk, and two
 * FIFO pairs for the character devices: con.{in,out} for the serial
 * console (the kernel log) and ctl.{in,out} for the virtio-serial port
 * org.fswb.ctl (the agent). fswb opens the FIFOs before QEMU starts, so not
 * a byte of early boot output is lost, and holds both ends of each, so a
 * FIFO never reads as closed; the end of the machine is QEMU's exit.
 *
 * KVM is used when it really works. A /dev/kvm node is not proof (nested
 * virtualisation can accept ioctls and then never run a guest), so the
 * first session after each host boot boots the kernel once under KVM and
 * waits for its first console line; the verdict is kept in the cache dir
 * per boot and QEMU binary. Otherwise TCG, with a warning and longer
 * timeouts.
 *
 * Backend options (-o KEY=VALUE, the table at the end): qemu=PATH the QEMU
 * binary; accel=tcg never try KVM; silence=SECONDS how long a silent guest
 * may be before it counts as hung (default 90 with KVM, 300 emulated). The
 * agent must say HELLO within 120 seconds of QEMU's start under KVM, 300
 * emulated.
 *
 * The lease holds the session's directory and QEMU's pid; QEMU also dies
 * with fswb (spawn's die_with_fswb).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "backends/backend.h"
#include "backends/kvm.h"
#include "core/paths.h"
#include "core/spawn.h"

#define KVM_TEST_MS   6000 /* a kernel's first console line comes in < 1 s under KVM */
#define STDERR_MAX    8192 /* QEMU's own complaints kept for messages */
#define OUTQ_MAX      (64u << 20)
#define KILL_GRACE_MS 3000
#define SILENCE_KVM   90
#define SILENCE_TCG   300
#define BOOT_KVM      120 /* seconds from QEMU's start to the agent's HELLO */
#define BOOT_TCG      300
#define READ_CHUNK    65536

struct qemu {
	struct loop *loop;
	struct session_callbacks cb;
	void *data;
	char *workdir;
	struct child *child;
	int con_rd, con_wr; /* our read end, and a writer we hold */
	int ctl_rd, ctl_wr;
	int ctl_in;	      /* the agent's input: we write here */
	int dummy_rd;	      /* a reader we hold on ctl.in */
	int shell;	      /* the shell port's socket, once open */
	struct strbuf outq;   /* bytes for the agent not written yet */
	struct strbuf shellq; /* keys for the shell not written yet */
	struct strbuf err;    /* QEMU's stderr */
	bool kvm;
	unsigned silence; /* seconds; 0: the default for KVM or TCG */
	bool exited, cancelled, notified;
	uint64_t kill_timer;
	char *why_exit;
	char *notice; /* why not KVM */
};

/* ---- finding QEMU and KVM ---- */

/* The plan's architecture; the host's when it names none. */
static const struct arch_info *
plan_arch(const struct plan *plan)
{
	const struct arch_info *a = arch_find(plan ? plan->kernel.arch : NULL);

	return a ? a : arch_find("x86_64");
}

/*
 * A QEMU option value: prefix, then value with each ',' doubled (QEMU reads
 * ",," as a comma, so a path cannot add options), then suffix.
 */
static void
push_opt(struct strvec *argv, const char *prefix, const char *value, const char *suffix)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_adds(&sb, prefix);
	for (const char *p = value; *p; p++) {
		strbuf_addch(&sb, *p);
		if (*p == ',')
			strbuf_addch(&sb, ',');
	}
	strbuf_adds(&sb, suffix);
	strvec_push(argv, sb.buf);
	strbuf_release(&sb);
}

/* The QEMU binary: the backend option qemu=PATH (opt), else qemu-system-ARCH in PATH. */
static char *
find_qemu(const char *opt, const struct arch_info *arch)
{
	char name[64];

	if (opt)
		return access(opt, X_OK) ? NULL : xstrdup(opt);
	snprintf(name, sizeof(name), "qemu-system-%s", arch->machine);
	return path_which(name, NULL, NULL);
}

static enum status
qemu_probe(const struct plan *plan, struct backend_probe *out)
{
	char *qemu = find_qemu(plan ? plan_backend_opt(plan, "qemu") : NULL, plan_arch(plan));
	char *fix = NULL, *why, *cached = NULL;
	int v;

	if (!qemu) {
		out->usable = false;
		out->summary = xstrdup("not usable: QEMU is not installed");
		out->why = xasprintf("no qemu-system-%s in PATH", plan_arch(plan)->machine);
		out->fix = xstrdup(access("/usr/bin/dnf", X_OK)
					   ? "sudo apt-get install qemu-system-x86 qemu-utils"
					   : "sudo dnf install qemu-system-x86 qemu-img");
		return OK;
	}
	out->usable = true;
	why = kvm_device_problem(&fix);
	if (!why) {
		v = kvm_verdict(qemu, &cached);
		if (v == 1) {
			out->summary = xstrdup("ready: KVM");
		} else if (v == 0) {
			why = cached;
			cached = NULL;
		} else {
			out->summary = xstrdup(
				"ready: KVM not known yet (known once a guest boots under it)");
		}
	}
	if (why) {
		out->slow = true;
		out->summary = xstrdup("ready: no KVM, so guests run emulated (slower)");
		out->why = xasprintf("KVM is not usable: %s", why);
		out->fix = fix;
		free(why);
	}
	free(cached);
	free(qemu);
	return OK;
}

/* ---- a session ---- */

static void notify_exit(struct qemu *q);

static void
drain(struct qemu *q, int fd, void (*fn)(void *, const char *, size_t))
{
	char buf[READ_CHUNK];
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0)
		if (fn)
			fn(q->data, buf, (size_t)n);
}

static void
on_console(struct loop *loop, int fd, short revents, void *data)
{
	struct qemu *q = data;

	drain(q, fd, q->cb.on_console);
}

static void
on_control(struct loop *loop, int fd, short revents, void *data)
{
	struct qemu *q = data;

	drain(q, fd, q->cb.on_control);
}

static void
on_stderr(struct loop *loop, int fd, short revents, void *data)
{
	struct qemu *q = data;
	char buf[4096];
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0)
		if (q->err.len < STDERR_MAX)
			strbuf_add(&q->err, buf, (size_t)n);
	if (n == 0)
		loop_del_fd(loop, fd);
}

static void
flush_outq(struct qemu *q)
{
	while (q->outq.len) {
		ssize_t n = write(q->ctl_in, q->outq.buf, q->outq.len);

		if (n <= 0)
			break;
		strbuf_drop_front(&q->outq, (size_t)n);
	}
	loop_mod_fd(q->loop, q->ctl_in, q->outq.len ? POLLOUT : 0);
}

static void
on_ctl_writable(struct loop *loop, int fd, short revents, void *data)
{
	flush_outq(data);
}

static void
notify_exit(struct qemu *q)
{
	enum status code = OK;
	char buf[128];

	if (q->notified)
		return;
	q->notified = true;
	drain(q, q->con_rd, q->cb.on_console);
	drain(q, q->ctl_rd, q->cb.on_control);
	str_trim(q->err.buf);
	if (q->cancelled) {
		code = ERR_INTERRUPTED;
		q->why_exit = xstrdup("the guest was stopped");
	} else if (!q->child->exit.exited || q->child->exit.code) {
		code = ERR_CHILD;
		q->why_exit = xasprintf("QEMU %s%s%.500s",
					child_exit_str(&q->child->exit, buf, sizeof(buf)),
					q->err.len ? ": " : "", q->err.buf);
	}
	if (q->cb.on_exit)
		q->cb.on_exit(q->data, code, q->why_exit);
}

static void
on_qemu_exit(struct child *c, void *data)
{
	struct qemu *q = data;

	q->exited = true;
	if (q->kill_timer) {
		loop_del_timer(q->loop, q->kill_timer);
		q->kill_timer = 0;
	}
	on_stderr(q->loop, c->err, POLLIN, q);
	notify_exit(q);
}

static enum status
make_fifo_pair(const char *workdir, const char *name, int *rd, int *wr, int *in, int *in_rd)
{
	char *out = xasprintf("%s/%s.out", workdir, name);
	char *inp = xasprintf("%s/%s.in", workdir, name);
	enum status rc = OK;

	if (mkfifo(out, 0600) || mkfifo(inp, 0600)) {
		rc = error(ERR_IO, "cannot make a FIFO in '%s': %s", workdir, strerror(errno));
		goto out;
	}
	*rd = open(out, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	*wr = open(out, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	*in_rd = open(inp, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	*in = open(inp, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	if (*rd < 0 || *wr < 0 || *in < 0 || *in_rd < 0)
		rc = error(ERR_IO, "cannot open the FIFOs in '%s': %s", workdir, strerror(errno));
out:
	free(out);
	free(inp);
	return rc;
}

static void
close_fd(int *fd)
{
	if (*fd >= 0) {
		close(*fd);
		*fd = -1;
	}
}

static void
qemu_release(void *priv)
{
	struct qemu *q = priv;
	int fds[] = { q->con_rd, q->ctl_rd, q->ctl_in, q->shell };

	if (!q)
		return;
	if (q->kill_timer)
		loop_del_timer(q->loop, q->kill_timer);
	for (size_t i = 0; i < ARRAY_SIZE(fds); i++)
		if (fds[i] >= 0)
			loop_del_fd(q->loop, fds[i]);
	if (q->child) {
		if (q->child->err >= 0)
			loop_del_fd(q->loop, q->child->err);
		q->child->on_exit = NULL;
		child_free(q->child); /* kills and reaps it when still running */
	}
	close_fd(&q->con_rd);
	close_fd(&q->con_wr);
	close_fd(&q->ctl_rd);
	close_fd(&q->ctl_wr);
	close_fd(&q->ctl_in);
	close_fd(&q->dummy_rd);
	close_fd(&q->shell);
	/* a start that failed keeps its message */
	if (q->workdir && remove_tree(q->workdir) != OK)
		error_clear();
	free(q->workdir);
	free(q->why_exit);
	free(q->notice);
	strbuf_release(&q->outq);
	strbuf_release(&q->shellq);
	strbuf_release(&q->err);
	free(q);
}

static enum status
qemu_start(struct loop *loop, void *run, const struct session_spec *spec,
	   const struct session_callbacks *cb, void *data, struct lease *lease, void **priv)
{
	struct qemu *q = xcalloc(1, sizeof(*q));
	struct strvec argv = STRVEC_INIT;
	struct spawn_opts o = SPAWN_OPTS_INIT;
	char *qemu = find_qemu(session_spec_opt(spec, "qemu"), spec->arch), *overlay = NULL;
	char mem[32], cpus[16], *append = NULL;
	int dummy = -1;
	enum status rc;

	q->loop = loop;
	q->cb = *cb;
	q->data = data;
	q->con_rd = q->con_wr = q->ctl_rd = q->ctl_wr = q->ctl_in = q->dummy_rd = q->shell = -1;
	strbuf_init(&q->outq);
	strbuf_init(&q->shellq);
	strbuf_init(&q->err);
	if (!qemu) {
		rc = error(ERR_NOTFOUND,
			   "no 'qemu-system-%s' in PATH; install it (Debian: apt-get install "
			   "qemu-system-x86 qemu-utils) or give -o qemu=PATH",
			   spec->arch->machine);
		goto fail;
	}
	if (!spec->kernel || !spec->appliance)
		BUG("qemu session without a kernel or an appliance");
	rc = lease_add_path(lease, spec->workdir);
	if (rc == OK)
		rc = mkdir_p(spec->workdir, 0700);
	if (rc != OK)
		goto fail;
	q->workdir = xstrdup(spec->workdir);
	q->kvm = kvm_choose(loop, spec, qemu, &q->notice);
	if (session_spec_opt(spec, "qemu")) {
		/* a program named on the command line: said, never silent */
		char *n = xasprintf("running QEMU from '%s' (-o qemu=PATH)%s%s", qemu,
				    q->notice ? "; " : "", q->notice ? q->notice : "");

		free(q->notice);
		q->notice = n;
	}
	q->silence = session_spec_seconds(spec, "silence", 0);

	overlay = path_join(q->workdir, "root.qcow2");
	rc = backend_make_overlay(loop, spec->appliance, overlay);
	if (rc != OK)
		goto fail;
	rc = make_fifo_pair(q->workdir, "con", &q->con_rd, &q->con_wr, &dummy, &q->dummy_rd);
	close_fd(&dummy);
	close_fd(&q->dummy_rd);
	if (rc != OK)
		goto fail;
	rc = make_fifo_pair(q->workdir, "ctl", &q->ctl_rd, &q->ctl_wr, &q->ctl_in, &q->dummy_rd);
	if (rc != OK)
		goto fail;

	snprintf(mem, sizeof(mem), "%llu", (unsigned long long)(spec->mem >> 20));
	snprintf(cpus, sizeof(cpus), "%u", spec->cpus ? spec->cpus : 1);
	strvec_push(&argv, qemu);
	strvec_pushv(&argv,
		     (const char *const[]){ "-nodefaults", "-no-user-config", "-no-reboot",
					    "-display", "none", "-m", mem, "-smp", cpus, NULL });
	/* seccomp: QEMU may not spawn, elevate or use obsolete system calls */
	strvec_pushv(&argv,
		     (const char *const[]){ "-sandbox",
					    "on,obsolete=deny,elevateprivileges=deny,spawn=deny,"
					    "resourcecontrol=deny",
					    NULL });
	if (q->kvm)
		strvec_pushv(&argv, (const char *const[]){ "-accel", "kvm", "-cpu", "host", NULL });
	else
		strvec_pushv(&argv, (const char *const[]){ "-accel", "tcg,thread=multi", "-cpu",
							   "max", NULL });
	strvec_pushv(&argv, (const char *const[]){ "-kernel", spec->kernel, NULL });
	if (spec->initrd)
		strvec_pushv(&argv, (const char *const[]){ "-initrd", spec->initrd, NULL });
	append = xasprintf("console=%s,115200 root=/dev/vda rw rootfstype=ext4 "
			   "init=/usr/local/sbin/fswb-init panic=-1 printk.devkmsg=on "
			   "systemd.show_status=0%s%s",
			   spec->arch->console, spec->cmdline ? " " : "",
			   spec->cmdline ? spec->cmdline : "");
	strvec_pushv(&argv, (const char *const[]){ "-append", append, NULL });
	strvec_push(&argv, "-drive");
	push_opt(&argv, "file=", overlay, ",if=virtio,format=qcow2,cache=unsafe");
	for (size_t i = 0; i < spec->ndisks; i++) {
		char *disk = xasprintf("%s/%s.img", q->workdir, spec->disks[i].role);

		if (spec->disks[i].path)
			BUG("qemu makes its own disks; '%s' given", spec->disks[i].path);
		rc = backend_make_disk(disk, spec->disks[i].size);
		if (rc == OK) {
			strvec_push(&argv, "-drive");
			push_opt(&argv, "file=", disk, ",if=virtio,format=raw,cache=unsafe");
		}
		free(disk);
		if (rc != OK)
			goto fail;
	}
	strvec_push(&argv, "-chardev");
	push_opt(&argv, "pipe,id=con,path=", q->workdir, "/con");
	strvec_pushv(&argv, (const char *const[]){ "-serial", "chardev:con", "-device",
						   "virtio-serial-pci", "-chardev", NULL });
	push_opt(&argv, "pipe,id=ctl,path=", q->workdir, "/ctl");
	/* the shell port: a socket fswb connects to when a shell is asked for */
	strvec_push(&argv, "-chardev");
	push_opt(&argv, "socket,id=shell,path=", q->workdir, "/shell.sock,server=on,wait=off");
	strvec_pushv(&argv,
		     (const char *const[]){
			     "-device", "virtserialport,chardev=shell,name=org.fswb.shell", NULL });
	strvec_pushv(&argv, (const char *const[]){ "-device",
						   "virtserialport,chardev=ctl,name=org.fswb.ctl",
						   "-device", "virtio-rng-pci", NULL });

	o.argv = (const char *const *)argv.v;
	o.err = SPAWN_PIPE;
	o.new_pgrp = true;
	o.die_with_fswb = true;
	o.on_exit = on_qemu_exit;
	o.data = q;
	rc = spawn_start(loop, &o, &q->child);
	if (rc == OK)
		rc = lease_add_pid(lease, q->child->pid);
	if (rc != OK)
		goto fail;
	loop_add_fd(loop, q->child->err, POLLIN, on_stderr, q);
	loop_add_fd(loop, q->con_rd, POLLIN, on_console, q);
	loop_add_fd(loop, q->ctl_rd, POLLIN, on_control, q);
	loop_add_fd(loop, q->ctl_in, 0, on_ctl_writable, q);
	*priv = q;
	free(qemu);
	free(overlay);
	free(append);
	strvec_clear(&argv);
	return OK;
fail:
	free(qemu);
	free(overlay);
	free(append);
	strvec_clear(&argv);
	qemu_release(q);
	return rc;
}

static enum status
qemu_send(void *priv, const void *buf, size_t len)
{
	struct qemu *q = priv;

	if (q->exited)
		return error(ERR_IO, "the guest is gone");
	if (q->outq.len + len > OUTQ_MAX)
		return error(ERR_LIMIT, "the guest is not reading its control channel");
	strbuf_add(&q->outq, buf, len);
	flush_outq(q);
	return OK;
}

static void
kill_hard(struct loop *loop, void *data)
{
	struct qemu *q = data;

	q->kill_timer = 0;
	if (q->child && q->child->running)
		child_kill(q->child, SIGKILL);
}

static void
qemu_cancel(void *priv)
{
	struct qemu *q = priv;

	if (q->exited || !q->child)
		return;
	q->cancelled = true;
	child_kill(q->child, SIGTERM);
	if (!q->kill_timer)
		q->kill_timer = loop_add_timer(q->loop, KILL_GRACE_MS, false, kill_hard, q);
}

static unsigned
qemu_silence_limit(void *priv)
{
	struct qemu *q = priv;

	if (q->silence)
		return q->silence;
	return q->kvm ? SILENCE_KVM : SILENCE_TCG;
}

static void
on_shell(struct loop *loop, int fd, short revents, void *data)
{
	struct qemu *q = data;
	char buf[READ_CHUNK];
	ssize_t n;

	if (revents & POLLOUT) {
		while (q->shellq.len && (n = write(fd, q->shellq.buf, q->shellq.len)) > 0) {
			strbuf_drop_front(&q->shellq, (size_t)n);
		}
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		q->cb.on_shell(q->data, buf, (size_t)n);
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		loop_del_fd(loop, fd);
		close_fd(&q->shell);
		q->cb.on_shell(q->data, "", 0);
		return;
	}
	loop_mod_fd(loop, fd, POLLIN | (q->shellq.len ? POLLOUT : 0));
}

static enum status
qemu_shell_send(void *priv, const void *buf, size_t len)
{
	struct qemu *q = priv;

	if (q->shell < 0)
		return error(ERR_IO, "the guest's shell is closed");
	if (q->shellq.len + len > OUTQ_MAX)
		return error(ERR_LIMIT, "the guest's shell is not reading");
	strbuf_add(&q->shellq, buf, len);
	loop_mod_fd(q->loop, q->shell, POLLIN | POLLOUT);
	return OK;
}

/* The guest's shell port (org.fswb.shell), once the agent started a shell on it. */
static enum status
qemu_shell_open(void *priv)
{
	struct qemu *q = priv;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int s;

	if (q->shell >= 0)
		return OK;

	if ((size_t)snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/shell.sock", q->workdir) >=
	    sizeof(sa.sun_path))
		return error(ERR_INVALID, "the guest's directory '%s' is too long for a socket",
			     q->workdir);
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s < 0 || connect(s, (struct sockaddr *)&sa, sizeof(sa))) {
		enum status rc = error(ERR_IO, "cannot connect to the guest's shell port '%s': %s",
				       sa.sun_path, strerror(errno));

		if (s >= 0)
			close(s);
		return rc;
	}
	q->shell = s;
	loop_add_fd(q->loop, s, POLLIN, on_shell, q);
	return OK;
}

static unsigned
qemu_boot_limit(void *priv)
{
	return ((struct qemu *)priv)->kvm ? BOOT_KVM : BOOT_TCG;
}

/* The guest's disks come after the root (/dev/vda): /dev/vdb is disks[0]. */
static char *
qemu_disk_path(void *priv, size_t index)
{
	if (index > 24)
		BUG("disk index %zu out of range", index);
	return xasprintf("/dev/vd%c", (char)('b' + index));
}

static bool
qemu_slow(void *priv)
{
	return !((struct qemu *)priv)->kvm;
}

static const char *
qemu_notice(void *priv)
{
	return ((struct qemu *)priv)->notice;
}

/* fswb doctor: whether KVM really runs a guest (it boots o->kernel under KVM). */
static size_t
qemu_doctor(struct loop *loop, const struct backend_doctor_opts *o, struct backend_finding *out,
	    size_t max)
{
	char *qemu = path_which("qemu-system-x86_64", o->path, NULL), *why = NULL;
	enum kvm_try k = kvm_try_device(o->kvm_dev, &why);

	if (!max)
		BUG("no room for the KVM finding");
	/* the trial's verdict for this host boot, as sessions and the probe read it */
	int v = k == KVM_TRY_OK && qemu ? kvm_verdict(qemu, &why) : -1;

	if (v >= 0) {
		k = v ? KVM_TRY_OK : KVM_TRY_NOBOOT;
	} else if (k == KVM_TRY_OK && qemu && o->kernel && o->run_programs) {
		k = kvm_try_boot(loop, qemu, o->kernel, o->trial_ms ? o->trial_ms : KVM_TEST_MS,
				 &why);
		if (k != KVM_TRY_UNTRIED)
			kvm_verdict_save(qemu, k == KVM_TRY_OK, why);
	} else if (k == KVM_TRY_OK) {
		k = KVM_TRY_UNTRIED;
		why = xstrdup(!o->run_programs ? "not tried with a guest"
			      : !qemu	       ? "not tried with a guest (no QEMU)"
					       : "not tried with a guest (no kernel to boot)");
	}
	*out = (struct backend_finding){ .name = "KVM" };
	if (k == KVM_TRY_OK) {
		out->detail = xstrdup("a guest kernel runs under KVM: guests run at full speed");
	} else if (k == KVM_TRY_UNTRIED) {
		/* not known until a guest ran: never a tick before that */
		out->state = FINDING_WARN;
		out->untried = true;
		out->detail = xasprintf("not known yet: %s opens and creates a VM; %s",
					o->kvm_dev ? o->kvm_dev : "/dev/kvm", why);
	} else {
		out->state = FINDING_WARN;
		out->slow = true;
		out->detail = xasprintf("no KVM: guests run under emulation (TCG), several times "
					"slower: %s",
					why);
		out->fix = kvm_fix_step(k) ? xstrdup(kvm_fix_step(k)) : NULL;
	}
	free(why);
	free(qemu);
	return 1;
}

static const struct backend_program qemu_programs[] = {
	{ "qemu-system-x86_64", "--version", "the local QEMU backend runs the guests with it",
	  true },
	{ "qemu-img", "--version", "it makes each guest's overlay of the appliance", true },
	{ NULL, NULL, NULL, false },
};

static enum status
program_check(const char *value)
{
	if (value[0] != '/' || access(value, X_OK))
		return error(ERR_INVALID, "give the absolute path of an executable QEMU binary");
	return OK;
}

static const struct backend_option qemu_options[] = {
	{ "qemu", "PATH", program_check },		  /* the QEMU binary */
	{ "accel", "tcg", backend_option_tcg },		  /* never try KVM */
	{ "silence", "SECONDS", backend_option_seconds }, /* quiet this long: hung */
	{ NULL, NULL, NULL },
};

const struct backend_ops qemu_backend = {
	.name = "qemu",
	.description = "a local virtual machine started with QEMU (KVM when available)",
	.caps = BACKEND_BOOTS_KERNEL | BACKEND_APPLIANCE | BACKEND_PARALLEL | BACKEND_SHELL,
	.options = qemu_options,
	.programs = qemu_programs,
	.doctor = qemu_doctor,
	.probe = qemu_probe,
	.start = qemu_start,
	.send = qemu_send,
	.cancel = qemu_cancel,
	.disk_path = qemu_disk_path,
	.release = qemu_release,
	.boot_limit = qemu_boot_limit,
	.silence_limit = qemu_silence_limit,
	.slow = qemu_slow,
	.notice = qemu_notice,
	.shell_open = qemu_shell_open,
	.shell_send = qemu_shell_send,
};
