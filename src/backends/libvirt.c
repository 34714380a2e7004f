/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The libvirt backend: the qemu backend's guest as a transient libvirt
 * domain, through libvirt's C API (no virsh), so that it shows in virsh and
 * virt-manager and runs under the daemon a host already has.
 *
 * URIs (-o uri=URI[,URI...], default $LIBVIRT_DEFAULT_URI, else
 * qemu:///system): qemu:///system and qemu:///session (a daemon's socket;
 * ?socket=PATH names another), qemu:///embed?root=DIR (libvirt's QEMU
 * driver inside fswb's worker, no daemon; one directory per shard), and
 * qemu+ssh://USER@HOST/system (another machine's daemon; ssh never asks on
 * fswb's terminal). Several URIs are several machines: one session each.
 * For /session and embed, QEMU runs as fswb's user: the session's files
 * (the overlay of the appliance, the disks) are made here and named in the
 * XML. A /system or remote daemon's QEMU runs as another user, on another
 * host perhaps: the worker uploads the kernel, initramfs and appliance into
 * the storage pool "fswb" (once each, kept by key) and makes the session's
 * overlay and disks there, deleted at its end (pool mode).
 *
 * The domain is the qemu backend's guest: direct kernel boot, the appliance
 * through a per-session qcow2 overlay, virtio disks, a virtio-serial channel
 * org.fswb.ctl for the agent, a pty serial console for the kernel log, ACPI,
 * on_poweroff/reboot/crash=destroy (the kernel panics with panic=-1: the
 * domain ends as QEMU does with -no-reboot). It is created paused with
 * VIR_DOMAIN_START_AUTODESTROY (gone when the connection closes, even when
 * the worker is killed), its console and channel are opened as virStreams,
 * then it is resumed: no early byte is lost. type='kvm' only when KVM
 * really runs a guest here (kvm.h: libvirt advertises kvm whenever /dev/kvm
 * exists), else type='qemu' with the emulator's longer limits.
 *
 * The connection lives in a worker process (spawn's fn mode) with libvirt's
 * default event implementation driven by its own loop; its stdin/stdout
 * are the agent's channel, one more pipe carries the console, and its last
 * stderr line says why it ended (agentpipe.h). Lifecycle events end it: a
 * power-off is a clean end, a domain destroyed from outside, a crash, a
 * QEMU failure or a pause on an I/O error (a full disk) say so.
 *
 * Leases: the session's directory, the domain ("domain URI NAME") and in
 * pool mode its volumes ("volumes URI NAME"); the next start destroys what
 * a killed fswb left (an embedded driver's domain outlives its process: its
 * QEMU is killed by the pid file).
 */
#include <errno.h>
#include <fcntl.h>
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backends/agentpipe.h"
#include "backends/backend.h"
#include "backends/kvm.h"
#include "backends/libvirt_int.h"
#include "core/paths.h"
#include "core/sha.h"
#include "core/spawn.h"

#define URI_DEFAULT "qemu:///system"
#define SILENCE_KVM 90
#define SILENCE_TCG 300
#define BOOT_KVM    120 /* seconds from start to the agent's HELLO */
#define BOOT_TCG    300
#define CHUNK	    65536
#define INQ_MAX	    (1u << 20)
#define NAME_MAX_   48
#define DISKS_MAX   25		     /* vdb..vdz */
#define CTL_PORT    "org.fswb.ctl"   /* the agent's channel (agent_proto.h) */
#define SHELL_PORT  "org.fswb.shell" /* the shell's, once the agent starts one */

/* The worker's exit codes: how the domain ended, for release. */
enum {
	WK_GONE = 0,	/* the domain is gone (powered off, or stopped by the worker) */
	WK_FAILED = 10, /* it is gone, or never was: the last stderr line says why */
	WK_LEFT = 11,	/* it may still exist (the connection broke): release destroys it */
};

/* ---- URIs ----------------------------------------------------------------------- */

void
lv_uri_release(struct lv_uri *u)
{
	free(u->driver);
	free(u->host);
	free(u->path);
	free(u->root);
	memset(u, 0, sizeof(*u));
}

static bool
uri_chars_ok(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p <= ' ' || *p >= 0x7f || *p == ',' || *p == '\'' || *p == '"' || *p == '\\')
			return false;
	return true;
}

enum status
lv_uri_parse(const char *uri, struct lv_uri *out)
{
	const char *p = strstr(uri, "://"), *slash, *q;
	enum status rc = OK;

	memset(out, 0, sizeof(*out));
	if (!*uri || !uri_chars_ok(uri))
		return error(ERR_INVALID, "a libvirt URI has no spaces, quotes, commas or control "
					  "characters: qemu:///system, qemu:///session or "
					  "qemu:///embed?root=DIR");
	if (!p || p == uri)
		return error(ERR_INVALID,
			     "'%s' is not a libvirt URI: give qemu:///system, "
			     "qemu:///session or qemu:///embed?root=DIR",
			     uri);
	out->driver = xstrndup(uri, (size_t)(p - uri));
	p += 3;
	slash = strchr(p, '/');
	if (!slash) {
		rc = error(ERR_INVALID, "'%s' has no path: qemu:///system, not qemu://system", uri);
		goto fail;
	}
	if (slash > p)
		out->host = xstrndup(p, (size_t)(slash - p));
	q = strchr(slash, '?');
	out->path = q ? xstrndup(slash, (size_t)(q - slash)) : xstrdup(slash);
	if (strcmp(out->driver, "qemu") && !str_startswith(out->driver, "qemu+")) {
		rc = error(ERR_INVALID,
			   "'%s': fswb's libvirt backend runs QEMU guests: the URI starts with "
			   "qemu:// (qemu:///system, qemu:///session, qemu:///embed?root=DIR)",
			   uri);
		goto fail;
	}
	if (strcmp(out->driver, "qemu") && strcmp(out->driver, "qemu+ssh")) {
		rc = error(ERR_UNSUPPORTED,
			   "'%s': fswb reaches a remote libvirt over ssh only: "
			   "qemu+ssh://USER@HOST/system",
			   uri);
		goto fail;
	}
	if (!out->host != !strcmp(out->driver, "qemu")) {
		rc = error(ERR_INVALID,
			   out->host
				   ? "'%s': a remote host is reached over ssh: qemu+ssh://%s%s"
				   : "'%s': qemu+ssh:// needs a host: qemu+ssh://USER@HOST/system",
			   uri, out->host ? out->host : "", out->path);
		goto fail;
	}
	/* the host and user reach ssh's command line: no option can hide there */
	if (out->host && (out->host[0] == '-' || strstr(out->host, "@-") || out->host[0] == '@' ||
			  !out->host[strspn(out->host, "@:.-_[]")])) {
		rc = error(ERR_INVALID, "'%s': '%s' is not a host name", uri, out->host);
		goto fail;
	}
	if (strcmp(out->path, "/system") && strcmp(out->path, "/session") &&
	    strcmp(out->path, "/embed")) {
		rc = error(ERR_INVALID, "'%s': the path is /system, /session or /embed", uri);
		goto fail;
	}
	if (out->host && strcmp(out->path, "/system")) {
		rc = error(ERR_INVALID, "'%s': a remote host's libvirt is its /system one", uri);
		goto fail;
	}
	/* the query: socket=PATH for a daemon's, root=DIR for embed; nothing else */
	for (const char *k = q ? q + 1 : NULL; k && *k;) {
		const char *amp = strchr(k, '&'), *end = amp ? amp : k + strlen(k);
		bool is_root = !strncmp(k, "root=", 5), is_sock = !strncmp(k, "socket=", 7);
		bool is_key = out->host && !strncmp(k, "keyfile=", 8);
		const char *v = k + (is_root ? 5 : is_key ? 8 : 7);

		if ((!is_root && !is_sock && !is_key) ||
		    (is_root != !strcmp(out->path, "/embed"))) {
			rc = error(ERR_INVALID,
				   "'%s': fswb takes only root=DIR (with qemu:///embed), "
				   "socket=PATH (with /system or /session) or keyfile=PATH "
				   "(with qemu+ssh://) after the '?'",
				   uri);
			goto fail;
		}
		if (v >= end || *v != '/' || strstr(v, "/../") ||
		    memchr(v, '%', (size_t)(end - v))) {
			rc = error(ERR_INVALID, "'%s': %s must be an absolute path", uri,
				   is_root  ? "root"
				   : is_key ? "keyfile"
					    : "socket");
			goto fail;
		}
		if (is_root) {
			free(out->root);
			out->root = xstrndup(v, (size_t)(end - v));
		}
		k = amp ? amp + 1 : NULL;
	}
	if (!strcmp(out->path, "/embed") && !out->root) {
		rc = error(ERR_INVALID,
			   "'%s': an embedded driver needs its directory: qemu:///embed?root=DIR",
			   uri);
		goto fail;
	}
	return OK;
fail:
	lv_uri_release(out);
	return rc;
}

/* Without -o uri: libvirt's own LIBVIRT_DEFAULT_URI when set, else qemu:///system. */
static const char *
uri_default(void)
{
	const char *env = getenv("LIBVIRT_DEFAULT_URI");

	return env && *env ? env : URI_DEFAULT;
}

/*
 * The URI fswb connects with: a remote one gets no_tty=1, so that ssh never
 * asks on fswb's terminal (an unknown host key, a password): it fails, and
 * the message says what to do.
 */
static char *
conn_uri(const char *uri)
{
	if (!strncmp(uri, "qemu+ssh:", 9))
		return xasprintf("%s%sno_tty=1", uri, strchr(uri, '?') ? "&" : "?");
	return xstrdup(uri);
}

/* The plan's or session's URIs, split; an error when one is bad. */
static enum status
uri_list(const char *value, struct strvec *out)
{
	strvec_split(out, value ? value : uri_default(), ",");
	if (!out->n)
		return error(ERR_INVALID, "no URI given: qemu:///system, qemu:///session or "
					  "qemu:///embed?root=DIR");
	for (size_t i = 0; i < out->n; i++) {
		struct lv_uri u;
		enum status rc = lv_uri_parse(out->v[i], &u);

		if (rc != OK && !value) {
			char *why = xstrdup(error_msg());

			rc = error(rc, "LIBVIRT_DEFAULT_URI: %s (or give -o uri=URI)", why);
			free(why);
		}
		if (rc != OK)
			return rc;
		lv_uri_release(&u);
	}
	return OK;
}

static enum status
uri_check(const char *value)
{
	struct strvec v = STRVEC_INIT;
	enum status rc = uri_list(value, &v);

	strvec_clear(&v);
	return rc;
}

/* ---- the domain's XML ----------------------------------------------------------- */

static void
add_xml(struct strbuf *sb, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&':
			strbuf_adds(sb, "&amp;");
			break;
		case '<':
			strbuf_adds(sb, "&lt;");
			break;
		case '>':
			strbuf_adds(sb, "&gt;");
			break;
		case '\'':
			strbuf_adds(sb, "&apos;");
			break;
		case '"':
			strbuf_adds(sb, "&quot;");
			break;
		default:
			strbuf_addch(sb, *s);
		}
	}
}

/* <tag>escaped value</tag> on a line of its own. */
static void
add_elem(struct strbuf *sb, const char *indent, const char *tag, const char *value)
{
	strbuf_addf(sb, "%s<%s>", indent, tag);
	add_xml(sb, value);
	strbuf_addf(sb, "</%s>\n", tag);
}

static void
add_disk(struct strbuf *sb, const char *file, const char *format, char dev)
{
	strbuf_addf(sb,
		    "    <disk type='file' device='disk'>\n"
		    "      <driver name='qemu' type='%s' cache='unsafe'/>\n"
		    "      <source file='",
		    format);
	add_xml(sb, file);
	strbuf_addf(sb,
		    "'/>\n"
		    "      <target dev='vd%c' bus='virtio'/>\n"
		    "    </disk>\n",
		    dev);
}

char *
lv_domain_xml(const struct lv_domain *d)
{
	struct strbuf sb = STRBUF_INIT;

	if (d->ndisks > DISKS_MAX)
		BUG("%zu disks for a domain", d->ndisks);
	strbuf_addf(&sb, "<domain type='%s'>\n", d->kvm ? "kvm" : "qemu");
	add_elem(&sb, "  ", "name", d->name);
	strbuf_addf(&sb, "  <memory unit='KiB'>%llu</memory>\n  <vcpu>%u</vcpu>\n",
		    (unsigned long long)(d->mem >> 10), d->cpus ? d->cpus : 1);
	strbuf_adds(&sb, "  <os>\n    <type arch='");
	add_xml(&sb, d->machine);
	strbuf_adds(&sb, "'>hvm</type>\n");
	add_elem(&sb, "    ", "kernel", d->kernel);
	if (d->initrd)
		add_elem(&sb, "    ", "initrd", d->initrd);
	add_elem(&sb, "    ", "cmdline", d->cmdline);
	strbuf_addf(&sb,
		    "  </os>\n"
		    "  <features><acpi/></features>\n"
		    "  <cpu mode='%s'/>\n"
		    "  <clock offset='utc'/>\n"
		    "  <on_poweroff>destroy</on_poweroff>\n"
		    "  <on_reboot>destroy</on_reboot>\n"
		    "  <on_crash>destroy</on_crash>\n"
		    "  <devices>\n",
		    d->kvm ? "host-passthrough" : "maximum");
	add_disk(&sb, d->root, "qcow2", 'a');
	for (size_t i = 0; i < d->ndisks; i++)
		add_disk(&sb, d->disks[i], "raw", (char)('b' + i));
	strbuf_adds(&sb, "    <controller type='usb' model='none'/>\n"
			 "    <serial type='pty'><target port='0'/></serial>\n"
			 "    <console type='pty'><target type='serial' port='0'/></console>\n"
			 "    <channel type='unix'>\n"
			 "      <source mode='bind'/>\n"
			 "      <target type='virtio' name='" CTL_PORT "'/>\n"
			 "    </channel>\n"
			 "    <channel type='unix'>\n"
			 "      <source mode='bind'/>\n"
			 "      <target type='virtio' name='" SHELL_PORT "'/>\n"
			 "    </channel>\n"
			 "    <rng model='virtio'><backend model='random'>/dev/urandom</backend>"
			 "</rng>\n"
			 "    <memballoon model='none'/>\n"
			 "  </devices>\n"
			 "</domain>\n");
	return strbuf_detach(&sb);
}

char *
lv_domain_name(const char *name, long pid, unsigned serial)
{
	struct strbuf sb = STRBUF_INIT;
	char tail[48];

	snprintf(tail, sizeof(tail), "-%ld-%u", pid, serial);
	strbuf_adds(&sb, "fswb-");
	for (const char *p = name; *p && sb.len + strlen(tail) < NAME_MAX_; p++)
		strbuf_addch(&sb, (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
						  (*p >= '0' && *p <= '9') || *p == '.' || *p == '_'
					  ? *p
					  : '-');
	strbuf_adds(&sb, tail);
	return strbuf_detach(&sb);
}

int
lv_event_verdict(int event, int detail, const char **why)
{
	*why = NULL;
	switch (event) {
	case VIR_DOMAIN_EVENT_STOPPED:
		switch (detail) {
		case VIR_DOMAIN_EVENT_STOPPED_SHUTDOWN:
			return 1;
		case VIR_DOMAIN_EVENT_STOPPED_DESTROYED:
			*why = "the domain was destroyed outside fswb (virsh destroy?)";
			return 2;
		case VIR_DOMAIN_EVENT_STOPPED_CRASHED:
			*why = "the guest crashed";
			return 2;
		case VIR_DOMAIN_EVENT_STOPPED_FAILED:
			*why = "QEMU failed: libvirt's log of the domain says why "
			       "(/var/log/libvirt/qemu/NAME.log for qemu:///system)";
			return 2;
		default:
			*why = "the domain was saved or migrated away outside fswb";
			return 2;
		}
	case VIR_DOMAIN_EVENT_SUSPENDED:
		if (detail == VIR_DOMAIN_EVENT_SUSPENDED_IOERROR) {
			*why = "the domain paused on an I/O error on one of its disks: is the "
			       "disk that holds fswb's data full?";
			return 2;
		}
		return 0; /* a pause: the worker's tick decides (fswb starts it paused) */
	default:
		return 0;
	}
}

/* ---- libvirt's errors, in newcomer words ------------------------------------------ */

static void
quiet(void *data, virErrorPtr e)
{
}

/* The first directory above path that others cannot search, with its mode; or NULL. */
static char *
closed_dir(const char *path)
{
	char *p = xstrdup(path), *s;
	char *found = NULL;
	struct stat st;

	for (s = strchr(p + 1, '/'); s && !found; s = strchr(s + 1, '/')) {
		*s = 0;
		if (!stat(p, &st) && S_ISDIR(st.st_mode) && !(st.st_mode & S_IXOTH))
			found = xasprintf("%s (mode %04o)", p, (unsigned)(st.st_mode & 07777));
		*s = '/';
	}
	free(p);
	return found;
}

/*
 * What libvirt said (its last error), turned into what to do when it is a
 * known case: no daemon, no permission on its socket, QEMU unable to read a
 * file, virtlogd missing, a QEMU or KVM missing.
 */
static char *
lv_explain(const char *uri, const char *doing)
{
	virErrorPtr e = virGetLastError();
	const char *msg = e && e->message ? e->message : "no reason given";
	char *clean = term_clean(msg), *out, *dir = NULL;

	if (strstr(msg, "Host key verification failed")) {
		out = xasprintf("%s: ssh does not know the host key of the host in %s; ssh to it "
				"once yourself to check the key and accept it, then run again",
				doing, uri);
	} else if (strstr(msg, "Permission denied (publickey")) {
		out = xasprintf("%s: the host in %s refused the ssh login (%s); add "
				"keyfile=PATH to the URI, or your key to that user's "
				"authorized_keys",
				doing, uri, clean);
	} else if (strstr(msg, "Failed to parse user")) {
		out = xasprintf("%s: %s: libvirt's QEMU driver wants the user its package makes "
				"(Debian: apt-get install libvirt-daemon-system)",
				doing, clean);
	} else if (strstr(msg, "virtlogd")) {
		out = xasprintf("%s: libvirt's log daemon virtlogd is not running (%s); start it "
				"(sudo systemctl start virtlogd, or virtlogd -d)",
				doing, clean);
	} else if (strstr(msg, "Failed to connect socket") && strstr(msg, "No such file")) {
		out = xasprintf("%s: libvirt's daemon is not running at %s (%s); start it (sudo "
				"systemctl start libvirtd, or libvirtd -d, with virtlogd -d), or "
				"use -o uri=qemu:///embed?root=DIR, which needs none",
				doing, uri, clean);
	} else if (strstr(msg, "Failed to connect socket") && strstr(msg, "ermission")) {
		out = xasprintf("%s: no permission on libvirt's socket for %s (%s); join the "
				"group that owns it (sudo usermod -aG libvirt $USER, then log in "
				"again) or use qemu:///session",
				doing, uri, clean);
	} else if (strstr(msg, "Permission denied") || strstr(msg, "ermission denied")) {
		const char *q = strchr(msg, '\'');
		char *file = q ? xstrdup(q + 1) : NULL;

		if (file && strchr(file, '\''))
			*strchr(file, '\'') = 0;
		dir = file && *file == '/' ? closed_dir(file) : NULL;
		out = xasprintf("%s: libvirt's QEMU cannot read fswb's files (%s); it runs as the "
				"user its qemu.conf names%s%s: use qemu:///system (fswb puts its "
				"files into libvirt's storage pool), or let that user search the "
				"directory",
				doing, clean, dir ? ", which cannot search " : "", dir ? dir : "");
		free(file);
	} else if (strstr(msg, "no supported architecture") || strstr(msg, "Cannot find") ||
		   strstr(msg, "emulator")) {
		out = xasprintf("%s: %s; install QEMU on the host (Debian: apt-get install "
				"qemu-system-x86)",
				doing, clean);
	} else {
		out = xasprintf("%s: %s", doing, clean);
	}
	free(clean);
	free(dir);
	return out;
}

/* ---- the worker -------------------------------------------------------------------- */

struct lv_session {
	struct agent_pipe pipe;
	int con[2];
	int shell[2];	      /* a socket pair: the worker's end of the shell channel, and ours */
	bool shell_open;      /* ours is read (after the agent's SHELLREADY) */
	struct strbuf shellq; /* keys for the shell not written yet */
	char *uri, *name, *xml, *workdir, *notice, *item;
	struct lv_uri u;
	bool kvm;
	unsigned silence;
	size_t ndisks;
	/*
	 * Pool mode (/system, remote hosts): the daemon's QEMU runs as another
	 * user, perhaps elsewhere, which cannot read fswb's files, so the
	 * worker uploads the kernel, the
	 * initramfs and the appliance into the storage pool "fswb" (once each,
	 * kept by key) and makes the session's overlay and disks there.
	 */
	bool pool;
	bool tcg;	    /* -o accel=tcg */
	struct lv_domain d; /* its paths are this host's; the worker's XML names volumes */
	struct strvec disk_roles;
	uint64_t disk_size[DISKS_MAX];
	char *kernel, *initrd, *appliance, *cmdline;
};

/*
 * A stream of the domain and this side of it: bytes from the domain go to
 * out; bytes read from in (-1: none) are queued and sent to the domain.
 */
struct chan {
	struct wk *w;
	virStreamPtr st;
	int in, out;
	int watch; /* in's handle, or -1 */
	bool open, in_open;
	bool ends; /* its end is the domain's (console, agent): else it may just close */
	struct strbuf q;
};

struct wk {
	const struct lv_session *s;
	virConnectPtr conn;
	virDomainPtr dom;
	struct chan con, ctl, shell;
	int tick;
	int paused; /* ticks paused for, from 1 */
	bool done, stopped;
	int code;
	uint64_t done_at;
};

static void
finish(struct wk *w, int code, const char *why)
{
	if (w->done)
		return;
	if (why)
		agent_worker_say("%s", why);
	w->done = true;
	w->code = code;
}

static void
chan_update(struct chan *c)
{
	if (c->open)
		virStreamEventUpdateCallback(c->st,
					     VIR_STREAM_EVENT_READABLE | VIR_STREAM_EVENT_ERROR |
						     VIR_STREAM_EVENT_HANGUP |
						     (c->q.len ? VIR_STREAM_EVENT_WRITABLE : 0));
	if (c->watch >= 0)
		virEventUpdateHandle(
			c->watch, c->in_open && c->q.len < INQ_MAX ? VIR_EVENT_HANDLE_READABLE : 0);
}

static void
chan_flush(struct chan *c)
{
	while (c->q.len && c->open) {
		int n = virStreamSend(c->st, c->q.buf, c->q.len);

		if (n == -2)
			break;
		if (n < 0) {
			c->open = false;
			break;
		}
		strbuf_drop_front(&c->q, (size_t)n);
	}
	chan_update(c);
}

static void
on_stream(virStreamPtr st, int events, void *opaque)
{
	struct chan *c = opaque;
	char buf[CHUNK];
	int n;

	if (!c->open)
		return;
	if (events & VIR_STREAM_EVENT_WRITABLE)
		chan_flush(c);
	while ((n = virStreamRecv(st, buf, sizeof(buf))) > 0)
		agent_write_all(c->out, buf, (size_t)n);
	if (n == 0 || n == -1 ||
	    (n == -2 && (events & (VIR_STREAM_EVENT_ERROR | VIR_STREAM_EVENT_HANGUP)))) {
		c->open = false;
		virStreamEventRemoveCallback(st);
		/* the domain's end: its lifecycle event says how */
		if (c->ends && !c->w->done_at)
			c->w->done_at = 1;
		/* the shell's end: fswb's side reads it as the end of the socket */
		if (!c->ends && c->out >= 0)
			shutdown(c->out, SHUT_WR);
	}
}

static void
on_in(int watch, int fd, int events, void *opaque)
{
	struct chan *c = opaque;
	char buf[CHUNK];
	ssize_t n = read(fd, buf, sizeof(buf));

	if (n > 0) {
		strbuf_add(&c->q, buf, (size_t)n);
		chan_flush(c);
	} else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
		c->in_open = false; /* fswb is done with it */
		chan_update(c);
	}
}

/* Open the domain's console (port NULL) or channel port as c; errors are said. */
static bool
chan_open(struct wk *w, struct chan *c, const char *port, int in, int out, bool ends)
{
	char *why, *what;

	*c = (struct chan){ .w = w, .in = in, .out = out, .watch = -1, .ends = ends };
	strbuf_init(&c->q);
	c->st = virStreamNew(w->conn, VIR_STREAM_NONBLOCK);
	if (c->st &&
	    (port ? virDomainOpenChannel(w->dom, port, c->st, VIR_DOMAIN_CHANNEL_FORCE)
		  : virDomainOpenConsole(w->dom, NULL, c->st, VIR_DOMAIN_CONSOLE_FORCE)) == 0) {
		c->open = true;
		virStreamEventAddCallback(c->st,
					  VIR_STREAM_EVENT_READABLE | VIR_STREAM_EVENT_ERROR |
						  VIR_STREAM_EVENT_HANGUP,
					  on_stream, c, NULL);
		if (in >= 0) {
			fcntl(in, F_SETFL, fcntl(in, F_GETFL) | O_NONBLOCK);
			c->in_open = true;
			c->watch = virEventAddHandle(in, VIR_EVENT_HANDLE_READABLE, on_in, c, NULL);
		}
		return true;
	}
	what = port ? xasprintf("cannot open the guest's channel %s", port)
		    : xstrdup("cannot open the guest's serial console");
	why = lv_explain(w->s->uri, what);
	agent_worker_say("%s", why);
	free(why);
	free(what);
	return false;
}

static int
on_lifecycle(virConnectPtr conn, virDomainPtr dom, int event, int detail, void *opaque)
{
	struct wk *w = opaque;
	const char *why;
	int v;

	if (strcmp(virDomainGetName(dom), w->s->name))
		return 0;
	if (event == VIR_DOMAIN_EVENT_SUSPENDED)
		w->paused = 1;
	else if (event == VIR_DOMAIN_EVENT_RESUMED)
		w->paused = 0;
	v = lv_event_verdict(event, detail, &why);
	if (v == 1) {
		w->stopped = true;
		finish(w, WK_GONE, NULL);
	} else if (v == 2) {
		if (event == VIR_DOMAIN_EVENT_STOPPED)
			w->stopped = true;
		finish(w, WK_FAILED, why);
	}
	return 0;
}

static void
on_close(virConnectPtr conn, int reason, void *opaque)
{
	struct wk *w = opaque;
	char *why = xasprintf("the connection to libvirt at %s broke%s", w->s->uri,
			      reason == VIR_CONNECT_CLOSE_REASON_KEEPALIVE
				      ? ": the host stopped answering"
				      : " (was libvirtd restarted?)");

	finish(w, WK_LEFT, why);
	free(why);
}

static void
on_tick(int timer, void *opaque)
{
	struct wk *w = opaque;

	if (agent_worker_stop)
		finish(w, WK_FAILED, "the guest was stopped");
	/* paused for 5 s after fswb resumed it: by someone else */
	if (w->paused && ++w->paused > 25)
		finish(w, WK_FAILED,
		       "the domain was paused outside fswb (virsh suspend?): fswb stopped it");
	/*
	 * Both streams ended and no lifecycle event came (a loaded daemon can be
	 * slow with it): after 10 s the domain's state says how it ended, as
	 * far as it still exists (a transient domain is gone once it stops).
	 */
	if (!w->done && w->done_at && ++w->done_at > 50) {
		int st = 0, reason = 0;
		const char *why = NULL;

		if (virDomainGetState(w->dom, &st, &reason, 0) < 0) {
			w->stopped = true;
			finish(w, WK_GONE, NULL);
		} else if (st == VIR_DOMAIN_SHUTOFF) {
			/* the shutoff reasons, from 1, are the stopped details, from 0 */
			int v = lv_event_verdict(VIR_DOMAIN_EVENT_STOPPED,
						 reason > 0 ? reason - 1 : 0, &why);

			w->stopped = true;
			finish(w, v == 1 ? WK_GONE : WK_FAILED, why);
		}
	}
}

/* ---- pool mode: the session's files as volumes of the pool "fswb" ------------------ */

#define POOL_NAME "fswb"
#define POOL_DIR  "/var/lib/libvirt/images/fswb"

static virStorageVolPtr
vol_create(virStoragePoolPtr pool, const char *name, uint64_t size, const char *format,
	   const char *backing)
{
	struct strbuf x = STRBUF_INIT;
	virStorageVolPtr v;

	strbuf_adds(&x, "<volume><name>");
	add_xml(&x, name);
	strbuf_addf(&x,
		    "</name><capacity unit='bytes'>%llu</capacity><allocation>0</allocation>"
		    "<target><format type='%s'/></target>",
		    (unsigned long long)size, format);
	if (backing) {
		strbuf_adds(&x, "<backingStore><path>");
		add_xml(&x, backing);
		strbuf_adds(&x, "</path><format type='raw'/></backingStore>");
	}
	strbuf_adds(&x, "</volume>");
	v = virStorageVolCreateXML(pool, x.buf, 0);
	strbuf_release(&x);
	return v;
}

/* A sparse upload: data as read, holes (SEEK_DATA/SEEK_HOLE) only said. */
static int
send_chunk(virStreamPtr st, char *buf, size_t n, void *opaque)
{
	ssize_t r = read(*(int *)opaque, buf, n);

	return r < 0 ? -1 : (int)r;
}

static int
send_section(virStreamPtr st, int *in_data, long long *length, void *opaque)
{
	int fd = *(int *)opaque;
	off_t cur = lseek(fd, 0, SEEK_CUR), data, hole;

	if (cur < 0)
		return -1;
	data = lseek(fd, cur, SEEK_DATA);
	if (data < 0 && errno != ENXIO)
		return -1;
	if (data < 0) {
		/* a hole to the end: the implicit one at the end of every file */
		*in_data = 0;
		*length = 0;
	} else if (data > cur) {
		*in_data = 0;
		*length = data - cur;
	} else {
		hole = lseek(fd, cur, SEEK_HOLE);
		if (hole < 0)
			return -1;
		*in_data = 1;
		*length = hole - cur;
	}
	return lseek(fd, cur, SEEK_SET) < 0 ? -1 : 0;
}

static int
send_skip(virStreamPtr st, long long length, void *opaque)
{
	return lseek(*(int *)opaque, (off_t)length, SEEK_CUR) < 0 ? -1 : 0;
}

/*
 * A new WHAT was uploaded as KEEP: the older ones go (a domain running from
 * one keeps its open file; the pool would otherwise grow by an appliance
 * each time the appliance changes).
 */
static void
vols_prune(virStoragePoolPtr pool, const char *what, const char *keep)
{
	virStorageVolPtr *vols = NULL;
	int n = virStoragePoolListAllVolumes(pool, &vols, 0);
	char *prefix = xasprintf("fswb-%s-", what);

	for (int i = 0; i < n; i++) {
		const char *name = virStorageVolGetName(vols[i]);

		if (name && str_startswith(name, prefix) && strncmp(name, keep, strlen(keep)))
			virStorageVolDelete(vols[i], 0);
		virStorageVolFree(vols[i]);
	}
	free(vols);
	free(prefix);
}

/* The volume of a file of this host, uploaded once: NAME and NAME.done (kept by key). */
static char *
vol_upload(struct wk *w, virStoragePoolPtr pool, const char *what, const char *file)
{
	struct stat st;
	struct sha h;
	char key[65], *name, *done, *path = NULL, *why;
	virStorageVolPtr v, d;
	virStreamPtr str;
	int fd;

	if (stat(file, &st)) {
		agent_worker_say("cannot read %s '%s': %s", what, file, strerror(errno));
		return NULL;
	}
	sha_init(&h);
	sha_adds(&h, file);
	sha_addf(&h, "%lld %lld", (long long)st.st_size, (long long)st.st_mtime);
	sha_hex(&h, key);
	name = xasprintf("fswb-%s-%.16s", what, key);
	done = xasprintf("%s.done", name);
	v = virStorageVolLookupByName(pool, name);
	d = virStorageVolLookupByName(pool, done);
	if (v && d) {
		path = virStorageVolGetPath(v);
		goto out;
	}
	/* a volume without its .done: an upload that did not finish */
	if (v)
		virStorageVolDelete(v, 0), virStorageVolFree(v);
	if (d)
		virStorageVolDelete(d, 0), virStorageVolFree(d);
	v = d = NULL;
	fd = open(file, O_RDONLY | O_CLOEXEC);
	{
		char msg[512];
		int n = snprintf(
			msg, sizeof(msg),
			"fswb: uploading the %s (%lld MiB of data in %lld MiB) to libvirt's "
			"pool " POOL_NAME " at %s\n",
			what, (long long)(st.st_blocks >> 11), (long long)(st.st_size >> 20),
			w->s->uri);

		if (n > 0)
			agent_write_all(w->s->con[1], msg,
					(size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg) - 1);
	}
	v = fd < 0 ? NULL : vol_create(pool, name, (uint64_t)st.st_size, "raw", NULL);
	str = v ? virStreamNew(w->conn, 0) : NULL;
	if (!str ||
	    virStorageVolUpload(v, str, 0, (unsigned long long)st.st_size,
				VIR_STORAGE_VOL_UPLOAD_SPARSE_STREAM) < 0 ||
	    virStreamSparseSendAll(str, send_chunk, send_section, send_skip, &fd) < 0 ||
	    virStreamFinish(str) < 0 || !(d = vol_create(pool, done, 0, "raw", NULL))) {
		why = lv_explain(w->s->uri, "cannot upload to libvirt's storage pool " POOL_NAME);
		agent_worker_say("%s (the %s, %s)", why, what, file);
		free(why);
		if (str)
			virStreamAbort(str);
		if (v)
			virStorageVolDelete(v, 0);
	} else {
		path = virStorageVolGetPath(v);
		vols_prune(pool, what, name);
	}
	if (str)
		virStreamFree(str);
	if (fd >= 0)
		close(fd);
out:
	if (v)
		virStorageVolFree(v);
	if (d)
		virStorageVolFree(d);
	free(name);
	free(done);
	return path;
}

/* The pool "fswb", made (transient, its directory built) when the daemon has none. */
static virStoragePoolPtr
pool_get(struct wk *w)
{
	virStoragePoolPtr p = virStoragePoolLookupByName(w->conn, POOL_NAME);

	if (!p)
		p = virStoragePoolCreateXML(w->conn,
					    "<pool type='dir'><name>" POOL_NAME
					    "</name><target><path>" POOL_DIR
					    "</path></target></pool>",
					    VIR_STORAGE_POOL_CREATE_WITH_BUILD);
	else if (virStoragePoolIsActive(p) != 1 && virStoragePoolCreate(p, 0) < 0)
		virStoragePoolFree(p), p = NULL;
	if (p)
		virStoragePoolRefresh(p, 0);
	return p;
}

/* Delete the session's volumes (PREFIX-*), of pool at conn. */
static void
vols_delete(virConnectPtr conn, const char *prefix)
{
	virStoragePoolPtr p = virStoragePoolLookupByName(conn, POOL_NAME);
	virStorageVolPtr *vols = NULL;
	int n = p ? virStoragePoolListAllVolumes(p, &vols, 0) : -1;
	size_t plen = strlen(prefix);

	for (int i = 0; i < n; i++) {
		const char *name = virStorageVolGetName(vols[i]);

		if (name && !strncmp(name, prefix, plen) && name[plen] == '-')
			virStorageVolDelete(vols[i], 0);
		virStorageVolFree(vols[i]);
	}
	free(vols);
	if (p)
		virStoragePoolFree(p);
}

/* The domain's XML with its files in the pool; NULL when that failed (said). */
static char *
pool_stage(struct wk *w)
{
	const struct lv_session *s = w->s;
	virStoragePoolPtr pool = pool_get(w);
	struct lv_domain d = s->d;
	struct strvec disks = STRVEC_INIT;
	char *kernel = NULL, *initrd = NULL, *appliance = NULL, *root = NULL, *xml = NULL, *why;
	virStorageVolPtr v;
	struct stat st;

	if (!pool) {
		why = lv_explain(s->uri,
				 "cannot make libvirt's storage pool " POOL_NAME " (" POOL_DIR ")");
		agent_worker_say("%s", why);
		free(why);
		return NULL;
	}
	kernel = vol_upload(w, pool, "kernel", s->kernel);
	if (kernel && s->initrd)
		initrd = vol_upload(w, pool, "initramfs", s->initrd);
	if (kernel && (initrd || !s->initrd))
		appliance = vol_upload(w, pool, "appliance", s->appliance);
	if (!appliance || stat(s->appliance, &st))
		goto out;
	{
		char *name = xasprintf("%s-root.qcow2", s->name);

		v = vol_create(pool, name, (uint64_t)st.st_size, "qcow2", appliance);
		free(name);
		if (!v)
			goto fail;
		root = virStorageVolGetPath(v);
		virStorageVolFree(v);
	}
	for (size_t i = 0; i < s->disk_roles.n; i++) {
		char *name = xasprintf("%s-%s.img", s->name, s->disk_roles.v[i]);

		v = vol_create(pool, name, s->disk_size[i], "raw", NULL);
		free(name);
		if (!v)
			goto fail;
		{
			char *p = virStorageVolGetPath(v);

			strvec_push(&disks, p ? p : "");
			free(p);
		}
		virStorageVolFree(v);
	}
	if (s->u.host && !s->tcg) {
		char *caps = virConnectGetCapabilities(w->conn);

		d.kvm = caps && strstr(caps, "<domain type='kvm'");
		free(caps);
	}
	d.kernel = kernel;
	d.initrd = initrd;
	d.root = root;
	d.disks = (const char *const *)disks.v;
	d.ndisks = disks.n;
	xml = lv_domain_xml(&d);
	goto out;
fail:
	why = lv_explain(s->uri,
			 "cannot make the guest's disks in libvirt's storage pool " POOL_NAME);
	agent_worker_say("%s", why);
	free(why);
out:
	free(kernel);
	free(initrd);
	free(appliance);
	free(root);
	strvec_clear(&disks);
	virStoragePoolFree(pool);
	return xml;
}

static int
worker(void *arg)
{
	const struct lv_session *s = arg;
	struct wk w = { .s = s, .tick = -1, .code = WK_FAILED };
	char *why, *xml = NULL;

	agent_worker_signals();
	close(s->con[0]);
	close(s->shell[0]);
	virSetErrorFunc(NULL, quiet);
	if (virEventRegisterDefaultImpl() < 0) {
		agent_worker_say("libvirt's event loop cannot start");
		return WK_FAILED;
	}
	why = conn_uri(s->uri);
	w.conn = virConnectOpen(why);
	free(why);
	if (!w.conn) {
		why = lv_explain(s->uri, "cannot connect to libvirt");
		agent_worker_say("%s", why);
		free(why);
		return WK_FAILED;
	}
	virConnectRegisterCloseCallback(w.conn, on_close, &w, NULL);
	if (s->u.host)
		virConnectSetKeepAlive(w.conn, 5, 6);
	virConnectDomainEventRegisterAny(w.conn, NULL, VIR_DOMAIN_EVENT_ID_LIFECYCLE,
					 VIR_DOMAIN_EVENT_CALLBACK(on_lifecycle), &w, NULL);
	xml = s->pool ? pool_stage(&w) : xstrdup(s->xml);
	if (!xml)
		goto out;
	/* an embedded driver has no autodestroy: its domain dies with the worker's release */
	w.dom = virDomainCreateXML(w.conn, xml,
				   VIR_DOMAIN_START_PAUSED |
					   (s->u.root ? 0 : VIR_DOMAIN_START_AUTODESTROY));
	if (!w.dom) {
		why = lv_explain(s->uri, "libvirt cannot start the guest");
		agent_worker_say("%s", why);
		free(why);
		goto out;
	}
	/* the shell's channel carries nothing until the agent starts a shell on it */
	if (!chan_open(&w, &w.con, NULL, -1, s->con[1], true) ||
	    !chan_open(&w, &w.ctl, CTL_PORT, 0, 1, true) ||
	    !chan_open(&w, &w.shell, SHELL_PORT, s->shell[1], s->shell[1], false))
		goto out;
	w.tick = virEventAddTimeout(200, on_tick, &w, NULL);
	if (virDomainResume(w.dom) < 0) {
		why = lv_explain(s->uri, "libvirt cannot resume the guest");
		agent_worker_say("%s", why);
		free(why);
		goto out;
	}
	while (!w.done)
		if (virEventRunDefaultImpl() < 0)
			finish(&w, WK_LEFT, "libvirt's event loop failed");
	/* what the streams still hold */
	on_stream(w.ctl.st, VIR_STREAM_EVENT_READABLE, &w.ctl);
	on_stream(w.con.st, VIR_STREAM_EVENT_READABLE, &w.con);
out:
	/*
	 * A domain still running is stopped, its streams first. Nothing else
	 * is freed: the worker's process ends here, and closing a stream while
	 * the driver tears down a stopped domain's consoles can deadlock in an
	 * embedded driver (the stream's lock against the console's).
	 */
	if (w.dom && !w.stopped && w.code != WK_LEFT) {
		struct chan *cs[] = { &w.con, &w.ctl, &w.shell };

		for (size_t i = 0; i < ARRAY_SIZE(cs); i++)
			if (cs[i]->st)
				virStreamAbort(cs[i]->st);
		if (virDomainDestroy(w.dom) < 0 && w.code == WK_GONE)
			w.code = WK_LEFT;
	}
	if (s->pool && w.code != WK_LEFT)
		vols_delete(w.conn, s->name);
	free(xml);
	return w.code;
}

/* ---- leases ---------------------------------------------------------------------- */

/*
 * An embedded driver's domain has no daemon to ask once its process is
 * gone: its QEMU is found by the pid file the driver keeps under the root
 * and killed when its command line names the domain.
 */
static void
kill_embedded(const char *root, const char *name)
{
	char *pidfile = xasprintf("%s/run/qemu/%s.pid", root, name), *text = NULL;
	char *cmdfile = NULL, *cmd = NULL, *guest = xasprintf("guest=%s,", name);
	size_t len = 0;
	long pid;

	if (read_file(pidfile, 64, &text, &len) == OK && (pid = strtol(text, NULL, 10)) > 1) {
		cmdfile = xasprintf("/proc/%ld/cmdline", pid);
		if (read_file(cmdfile, 1u << 16, &cmd, &len) == OK &&
		    memmem(cmd, len, guest, strlen(guest)))
			kill((pid_t)pid, SIGKILL);
	}
	error_clear();
	unlink(pidfile);
	free(pidfile);
	free(cmdfile);
	free(text);
	free(cmd);
	free(guest);
}

/*
 * "domain URI NAME": destroy the domain NAME at URI when it is there;
 * "volumes URI NAME": delete its volumes (NAME-*) in the pool.
 */
static void
lv_reap(const char *item)
{
	struct strvec v = STRVEC_INIT;
	struct lv_uri u;

	strvec_split(&v, item, " ");
	if (v.n == 3 && !strcmp(v.v[0], "volumes") && lv_uri_parse(v.v[1], &u) == OK) {
		virConnectPtr c;

		char *cu = conn_uri(v.v[1]);

		virSetErrorFunc(NULL, quiet);
		c = virConnectOpen(cu);
		free(cu);
		if (c) {
			vols_delete(c, v.v[2]);
			virConnectClose(c);
		}
		lv_uri_release(&u);
	} else if (v.n == 3 && !strcmp(v.v[0], "domain") && lv_uri_parse(v.v[1], &u) == OK) {
		if (u.root) {
			kill_embedded(u.root, v.v[2]);
		} else {
			virConnectPtr c;
			virDomainPtr d;

			char *cu = conn_uri(v.v[1]);

			virSetErrorFunc(NULL, quiet);
			c = virConnectOpen(cu);
			free(cu);
			d = c ? virDomainLookupByName(c, v.v[2]) : NULL;
			if (d) {
				virDomainDestroy(d);
				virDomainFree(d);
			}
			if (c)
				virConnectClose(c);
		}
		lv_uri_release(&u);
	}
	error_clear();
	strvec_clear(&v);
}

/* ---- the session ------------------------------------------------------------------ */

static void
lv_release(void *priv)
{
	struct lv_session *s = priv;
	struct child *c = s->pipe.child;
	/* the worker said the domain is gone (or never was): else destroy it here */
	bool gone = c && !c->running && c->exit.exited &&
		    (c->exit.code == WK_GONE || c->exit.code == WK_FAILED);
	bool started = c != NULL;

	agent_pipe_release(&s->pipe);
	if (started && !gone && s->item)
		lv_reap(s->item);
	if (started && !gone && s->pool) {
		char *item = xasprintf("volumes %s %s", s->uri, s->name);

		lv_reap(item);
		free(item);
	}
	if (s->con[1] >= 0)
		close(s->con[1]);
	if (s->shell_open)
		loop_del_fd(s->pipe.loop, s->shell[0]);
	for (int i = 0; i < 2; i++)
		if (s->shell[i] >= 0)
			close(s->shell[i]);
	strbuf_release(&s->shellq);
	if (s->workdir && remove_tree(s->workdir) != OK)
		error_clear();
	lv_uri_release(&s->u);
	free(s->uri);
	free(s->name);
	free(s->xml);
	free(s->workdir);
	free(s->notice);
	free(s->item);
	free(s->kernel);
	free(s->initrd);
	free(s->appliance);
	free(s->cmdline);
	strvec_clear(&s->disk_roles);
	free(s);
}

/*
 * An embedded driver's directory, made when missing, with its qemu.conf:
 * unless the user wrote one, QEMU runs as the user running fswb and its
 * output goes to a file (no virtlogd runs for an embedded driver).
 */
static enum status
embed_root(const char *root)
{
	char *etc = path_join(root, "etc"), *conf = path_join(etc, "qemu.conf"), *text;
	enum status rc = mkdir_p(etc, 0700);

	if (rc == OK && access(conf, F_OK)) {
		text = xasprintf("# made by fswb: QEMU runs as the user who runs fswb, and its\n"
				 "# output goes to a file (no virtlogd: the driver has no daemon)\n"
				 "user = \"+%u\"\ngroup = \"+%u\"\nstdio_handler = \"file\"\n",
				 (unsigned)getuid(), (unsigned)getgid());
		rc = write_file_atomic(conf, text, strlen(text), 0600);
		free(text);
	}
	free(etc);
	free(conf);
	return rc;
}

static enum status
lv_start(struct loop *loop, void *run, const struct session_spec *spec,
	 const struct session_callbacks *cb, void *data, struct lease *lease, void **priv)
{
	static unsigned serial;
	struct lv_session *s = xcalloc(1, sizeof(*s));
	struct spawn_opts o = SPAWN_OPTS_INIT;
	struct strvec uris = STRVEC_INIT, disks = STRVEC_INIT;
	struct lv_domain d = { 0 };
	char *overlay = NULL, *qemu = NULL;
	enum status rc;

	s->con[0] = s->con[1] = s->shell[0] = s->shell[1] = -1;
	strbuf_init(&s->shellq);
	strvec_init(&s->disk_roles);
	agent_pipe_init(&s->pipe, loop, cb, data);
	s->pipe.why_from_err = true;
	if (!spec->kernel || !spec->appliance)
		BUG("libvirt session without a kernel or an appliance");
	if (spec->ndisks > DISKS_MAX)
		BUG("%zu disks for a libvirt session", spec->ndisks);
	rc = uri_list(session_spec_opt(spec, "uri"), &uris);
	if (rc != OK)
		goto fail;
	s->uri = xstrdup(uris.v[spec->slot % uris.n]);
	rc = lv_uri_parse(s->uri, &s->u);
	if (rc != OK)
		goto fail;
	s->name = lv_domain_name(spec->name, (long)getpid(), ++serial);
	s->silence = session_spec_seconds(spec, "silence", 0);
	s->ndisks = spec->ndisks;
	if (s->u.root) {
		/* an embedded driver's directory is one process's: one for each shard */
		char *uri = xasprintf("qemu:///embed?root=%s/shard%u", s->u.root, spec->slot + 1);

		free(s->uri);
		s->uri = uri;
		lv_uri_release(&s->u);
		rc = lv_uri_parse(s->uri, &s->u);
		if (rc == OK)
			rc = embed_root(s->u.root);
		if (rc != OK)
			goto fail;
	}
	rc = lease_add_path(lease, spec->workdir);
	if (rc == OK)
		rc = mkdir_p(spec->workdir, 0700);
	if (rc != OK)
		goto fail;
	s->workdir = xstrdup(spec->workdir);
	s->tcg = session_spec_opt(spec, "accel") != NULL;
	if (s->u.host) {
		/* KVM when that host offers it (the worker reads its capabilities) */
		s->notice = xstrdup("the guest runs on a remote host: with KVM when it offers "
				    "it (-o accel=tcg: never), with the emulator's limits here");
		goto made_kvm;
	}
	qemu = path_which(strcmp(spec->arch->machine, "x86_64") ? "qemu-system-aarch64"
								: "qemu-system-x86_64",
			  NULL, NULL);
	if (!qemu) {
		rc = error(ERR_NOTFOUND,
			   "no 'qemu-system-%s' on this host, for libvirt to run the guest with; "
			   "install it (Debian: apt-get install qemu-system-x86 qemu-utils)",
			   spec->arch->machine);
		goto fail;
	}
	s->kvm = kvm_choose(loop, spec, qemu, &s->notice);
made_kvm:
	s->cmdline = xasprintf("console=%s,115200 root=/dev/vda rw rootfstype=ext4 "
			       "init=/usr/local/sbin/fswb-init panic=-1 printk.devkmsg=on "
			       "systemd.show_status=0%s%s",
			       spec->arch->console, spec->cmdline ? " " : "",
			       spec->cmdline ? spec->cmdline : "");
	s->d = (struct lv_domain){ .name = s->name,
				   .kvm = s->kvm,
				   .machine = spec->arch->machine,
				   .cpus = spec->cpus,
				   .mem = spec->mem,
				   .cmdline = s->cmdline };
	for (size_t i = 0; i < spec->ndisks; i++) {
		if (spec->disks[i].path)
			BUG("libvirt makes its own disks; '%s' given", spec->disks[i].path);
		strvec_push(&s->disk_roles, spec->disks[i].role);
		s->disk_size[i] = spec->disks[i].size;
	}
	/* a daemon's QEMU runs as the user qemu.conf names: the files go to its pool */
	s->pool = !strcmp(s->u.path, "/system");
	if (s->pool) {
		s->kernel = xstrdup(spec->kernel);
		s->initrd = spec->initrd ? xstrdup(spec->initrd) : NULL;
		s->appliance = xstrdup(spec->appliance);
		char *vols = xasprintf("volumes %s %s", s->uri, s->name);

		rc = lease_add_item(lease, vols);
		free(vols);
		if (rc != OK)
			goto fail;
	} else {
		overlay = path_join(s->workdir, "root.qcow2");
		rc = backend_make_overlay(loop, spec->appliance, overlay);
		if (rc != OK)
			goto fail;
		for (size_t i = 0; i < spec->ndisks; i++) {
			char *disk = xasprintf("%s/%s.img", s->workdir, spec->disks[i].role);

			rc = backend_make_disk(disk, spec->disks[i].size);
			strvec_push(&disks, disk);
			free(disk);
			if (rc != OK)
				goto fail;
		}
		d = s->d;
		d.kernel = spec->kernel;
		d.initrd = spec->initrd;
		d.root = overlay;
		d.disks = (const char *const *)disks.v;
		d.ndisks = disks.n;
		s->xml = lv_domain_xml(&d);
	}
	s->item = xasprintf("domain %s %s", s->uri, s->name);
	rc = lease_add_item(lease, s->item);
	if (rc != OK)
		goto fail;
	if (pipe2(s->con, O_CLOEXEC) ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, s->shell)) {
		rc = error(ERR_IO, "cannot make a pipe: %s", strerror(errno));
		goto fail;
	}
	fcntl(s->con[0], F_SETFL, O_NONBLOCK);
	fcntl(s->shell[0], F_SETFL, O_NONBLOCK);
	o.fn = worker;
	o.fn_arg = s;
	o.fn_name = "fswb libvirt";
	o.new_pgrp = true;
	o.die_with_fswb = true;
	rc = agent_pipe_start(&s->pipe, &o, lease, s->con[0]);
	s->con[0] = -1; /* the pipe's now */
	if (rc != OK)
		goto fail;
	close(s->con[1]);
	close(s->shell[1]);
	s->con[1] = s->shell[1] = -1;
	{
		char *n = xasprintf("the guest is the libvirt domain %s at %s%s%s", s->name, s->uri,
				    s->notice ? "; " : "", s->notice ? s->notice : "");

		free(s->notice);
		s->notice = n;
	}
	*priv = s;
	goto out;
fail:
	if (s->con[0] >= 0)
		close(s->con[0]);
	lv_release(s);
out:
	free(overlay);
	free(qemu);
	strvec_clear(&uris);
	strvec_clear(&disks);
	return rc;
}

static void
on_shell(struct loop *loop, int fd, short revents, void *data)
{
	struct lv_session *s = data;
	char buf[CHUNK];
	ssize_t n;

	if (revents & POLLOUT)
		while (s->shellq.len && (n = write(fd, s->shellq.buf, s->shellq.len)) > 0)
			strbuf_drop_front(&s->shellq, (size_t)n);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		s->pipe.cb.on_shell(s->pipe.data, buf, (size_t)n);
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		loop_del_fd(loop, fd);
		s->shell_open = false;
		s->pipe.cb.on_shell(s->pipe.data, "", 0);
		return;
	}
	loop_mod_fd(loop, fd, POLLIN | (s->shellq.len ? POLLOUT : 0));
}

/* The guest's shell port: the worker has it open; its bytes come through our socket. */
static enum status
lv_shell_open(void *priv)
{
	struct lv_session *s = priv;

	if (s->shell[0] < 0)
		return error(ERR_IO, "the guest's shell port is closed");
	if (!s->shell_open)
		loop_add_fd(s->pipe.loop, s->shell[0], POLLIN, on_shell, s);
	s->shell_open = true;
	return OK;
}

static enum status
lv_shell_send(void *priv, const void *buf, size_t len)
{
	struct lv_session *s = priv;

	if (!s->shell_open)
		return error(ERR_IO, "the guest's shell is closed");
	if (s->shellq.len + len > INQ_MAX * 64)
		return error(ERR_LIMIT, "the guest's shell is not reading");
	strbuf_add(&s->shellq, buf, len);
	loop_mod_fd(s->pipe.loop, s->shell[0], POLLIN | POLLOUT);
	return OK;
}

static enum status
lv_send(void *priv, const void *buf, size_t len)
{
	return agent_pipe_send(&((struct lv_session *)priv)->pipe, buf, len);
}

static void
lv_cancel(void *priv)
{
	agent_pipe_cancel(&((struct lv_session *)priv)->pipe);
}

/* The guest's disks come after the root (/dev/vda): /dev/vdb is disks[0]. */
static char *
lv_disk_path(void *priv, size_t index)
{
	if (index >= ((struct lv_session *)priv)->ndisks)
		BUG("disk index %zu out of range", index);
	return xasprintf("/dev/vd%c", (char)('b' + index));
}

static unsigned
lv_boot_limit(void *priv)
{
	return ((struct lv_session *)priv)->kvm ? BOOT_KVM : BOOT_TCG;
}

static unsigned
lv_silence_limit(void *priv)
{
	struct lv_session *s = priv;

	if (s->silence)
		return s->silence;
	return s->kvm ? SILENCE_KVM : SILENCE_TCG;
}

static const char *
lv_notice(void *priv)
{
	return ((struct lv_session *)priv)->notice;
}

static bool
lv_slow(void *priv)
{
	return !((struct lv_session *)priv)->kvm;
}

/* ---- probe, doctor, plan ------------------------------------------------------------ */

/* What libvirt at uri is: "libvirt 9.0.0, QEMU 7.2.0"; or NULL and *why. */
static char *
lv_connect_summary(const char *uri, char **why)
{
	virConnectPtr c;
	unsigned long lib = 0, hv = 0;
	char *caps, *out;

	char *cu = conn_uri(uri);

	*why = NULL;
	virSetErrorFunc(NULL, quiet);
	c = virConnectOpen(cu);
	free(cu);
	if (!c) {
		*why = lv_explain(uri, "cannot connect to libvirt");
		return NULL;
	}
	virConnectGetLibVersion(c, &lib);
	virConnectGetVersion(c, &hv);
	caps = virConnectGetCapabilities(c);
	if (!caps || !strstr(caps, "<domain type='qemu'")) {
		*why = xasprintf("libvirt at %s can run no QEMU guest: install QEMU on the host "
				 "(Debian: apt-get install qemu-system-x86)",
				 uri);
		out = NULL;
	} else {
		out = xasprintf("libvirt %lu.%lu.%lu, QEMU %lu.%lu.%lu", lib / 1000000,
				lib / 1000 % 1000, lib % 1000, hv / 1000000, hv / 1000 % 1000,
				hv % 1000);
	}
	free(caps);
	virConnectClose(c);
	return out;
}

/*
 * Usable when libvirt answers at each URI with a QEMU it can run (an
 * embedded driver is not opened here: it would start QEMU's driver in this
 * process; its directory and QEMU are checked instead).
 */
static enum status
lv_probe(const struct plan *plan, struct backend_probe *out)
{
	struct strvec uris = STRVEC_INIT;
	struct strbuf ready = STRBUF_INIT;
	char *fix = NULL, *kvm_why = kvm_device_problem(&fix);

	if (uri_list(plan_backend_opt(plan, "uri"), &uris) != OK) {
		out->summary = xstrdup("not usable: a bad URI");
		out->why = xstrdup(error_msg());
		error_clear();
		goto out;
	}
	out->usable = true;
	for (size_t i = 0; i < uris.n && out->usable; i++) {
		struct lv_uri u;
		char *sum = NULL, *why = NULL;

		lv_uri_parse(uris.v[i], &u);
		if (u.root) {
			char *q = path_which("qemu-system-x86_64", NULL, NULL);

			if (!q)
				why = xstrdup("no qemu-system-x86_64 on this host for the embedded "
					      "driver: apt-get install qemu-system-x86 qemu-utils");
			else
				sum = xasprintf("an embedded driver in %s", u.root);
			free(q);
		} else {
			sum = lv_connect_summary(uris.v[i], &why);
		}
		if (why) {
			char *cache = fswb_dir(DIR_CACHE);

			out->usable = false;
			out->summary = xasprintf("not usable: %s", uris.v[i]);
			out->why = why;
			/* what works without a daemon: libvirt's driver inside fswb */
			if (!plan_backend_opt(plan, "uri") && cache)
				out->fix =
					xasprintf("start libvirtd, or set the option "
						  "uri=qemu:///embed?root=%s/libvirt (no daemon)",
						  cache);
			free(cache);
		} else {
			strbuf_addf(&ready, "%s%s (%s)", ready.len ? ", " : "", uris.v[i], sum);
		}
		free(sum);
		lv_uri_release(&u);
	}
	if (out->usable) {
		out->slow = kvm_why != NULL;
		out->summary =
			xasprintf("ready: %s%s", ready.buf,
				  kvm_why ? "; no KVM, so guests run emulated (slower)" : "");
		if (kvm_why) {
			out->why = xasprintf("KVM is not usable: %s", kvm_why);
			out->fix = fix;
			fix = NULL;
		}
	}
out:
	free(kvm_why);
	free(fix);
	strbuf_release(&ready);
	strvec_clear(&uris);
	return OK;
}

/* fswb doctor: each URI the plan names (or the default), connected to. */
static size_t
lv_doctor(struct loop *loop, const struct backend_doctor_opts *o, struct backend_finding *out,
	  size_t max)
{
	struct strvec uris = STRVEC_INIT;
	size_t n = 0;
	/* the user asked about libvirt (fswb doctor --backend libvirt) */
	bool asked = o->plan && o->plan->backend && !strcmp(o->plan->backend, "libvirt");

	strvec_split(&uris,
		     asked && plan_backend_opt(o->plan, "uri") ? plan_backend_opt(o->plan, "uri")
							       : uri_default(),
		     ",");
	for (size_t i = 0; i < uris.n && n < max; i++) {
		struct lv_uri u;
		char *why = NULL, *sum = NULL;

		if (lv_uri_parse(uris.v[i], &u) != OK) {
			out[n++] = (struct backend_finding){ .state = FINDING_MISSING,
							     .name = "libvirt",
							     .detail = xstrdup(error_msg()) };
			error_clear();
			continue;
		}
		if (!u.root && o->run_programs)
			sum = lv_connect_summary(uris.v[i], &why);
		out[n] = (struct backend_finding){ .name = "libvirt" };
		if (u.root) {
			out[n].detail = xasprintf("%s: an embedded driver (no daemon); its state "
						  "lives in %s",
						  uris.v[i], u.root);
		} else if (sum) {
			out[n].detail = xasprintf("%s answers: %s", uris.v[i], sum);
		} else if (!o->run_programs) {
			/* only those who choose libvirt wait for its answer */
			out[n].state = asked ? FINDING_WARN : FINDING_OK;
			out[n].untried = asked;
			out[n].detail =
				xasprintf("%s: not tried (fswb doctor --backend libvirt tries it)",
					  uris.v[i]);
		} else if (asked) {
			out[n].state = FINDING_MISSING;
			out[n].detail = why;
			why = NULL;
		} else {
			/* not the default path: only those who choose libvirt need it */
			out[n].detail =
				xasprintf("not used here (only --backend libvirt needs it): "
					  "%s",
					  why);
		}
		n++;
		free(sum);
		free(why);
		lv_uri_release(&u);
	}
	strvec_clear(&uris);
	return n;
}

/* Several URIs: one machine each; one URI is this host, counted by its size. */
static unsigned
lv_machines(const struct plan *plan)
{
	struct strvec uris = STRVEC_INIT;
	unsigned n;

	strvec_split(&uris,
		     plan_backend_opt(plan, "uri") ? plan_backend_opt(plan, "uri") : uri_default(),
		     ",");
	n = uris.n > 1 || (uris.n == 1 && strstr(uris.v[0], "://") &&
			   strstr(uris.v[0], "://")[3] != '/')
		    ? (unsigned)uris.n
		    : 0;
	strvec_clear(&uris);
	return n;
}

static bool
lv_here(const struct plan *plan)
{
	const char *v = plan_backend_opt(plan, "uri");

	return !strstr(v ? v : uri_default(), "qemu+ssh:");
}

static enum status
lv_init(void)
{
	if (virInitialize() < 0)
		return error(ERR_INVALID, "libvirt cannot start");
	virSetErrorFunc(NULL, quiet);
	return OK;
}

static const struct backend_option lv_options[] = {
	{ "uri", "URI[,URI...]", uri_check },		  /* where the domains run */
	{ "accel", "tcg", backend_option_tcg },		  /* never KVM */
	{ "silence", "SECONDS", backend_option_seconds }, /* quiet this long: hung */
	{ NULL, NULL, NULL },
};

const struct backend_ops libvirt_backend = {
	.name = "libvirt",
	.description = "a libvirt domain (qemu:///system, qemu:///session, or embedded)",
	.caps = BACKEND_BOOTS_KERNEL | BACKEND_APPLIANCE | BACKEND_PARALLEL | BACKEND_SHELL,
	.options = lv_options,
	.init = lv_init,
	.doctor = lv_doctor,
	.probe = lv_probe,
	.start = lv_start,
	.send = lv_send,
	.cancel = lv_cancel,
	.disk_path = lv_disk_path,
	.release = lv_release,
	.boot_limit = lv_boot_limit,
	.silence_limit = lv_silence_limit,
	.slow = lv_slow,
	.notice = lv_notice,
	.machines = lv_machines,
	.reap = lv_reap,
	.here = lv_here,
	.shell_open = lv_shell_open,
	.shell_send = lv_shell_send,
};
