/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The adb backend: a rooted Android device (a phone, a board) reached
 * through the adb server, as android-xfstests does. The device runs its own
 * kernel; fstests runs in a Debian chroot on it: the appliance's root file
 * system, packed once per appliance in fswb's cache as a tarball, pushed to
 * WORK/chroot-KEY.tar.gz (WORK: -o workdir=, /data/fswb) over adb's sync
 * protocol and unpacked with the device's toybox into WORK/root-KEY, where
 * later runs find it (WORK/root-KEY.done says it is whole); a newer
 * appliance's chroot replaces the older one. `fswb appliance rm --device
 * SERIAL` removes WORK.
 *
 * fswb speaks the adb server's smart-socket protocol on its port
 * ($ANDROID_ADB_SERVER_PORT, 5037; the server is started with `adb
 * start-server` when none answers): host:devices-l for the list, then
 * host:transport:SERIAL and a device service. Every command on the device
 * uses the shell protocol v2 (separate stdout and stderr, and the exit
 * status; a device without it is refused: without exit statuses a failed
 * mkfs would pass for a good one), as root (adbd running as root after
 * `adb root`, else su). On the device only sh and toybox are assumed; what
 * runs there beyond one-line queries is the helper script below, pushed to
 * WORK/fswb-adb.sh each session.
 *
 * One session is one shell-v2 stream running the helper's `agent`: it
 * refuses when another fswb's agent runs on the device, cleans what a
 * killed run or a reboot left (processes in the chroot, mounts under WORK,
 * loop devices of WORK/disks), makes a loop file in WORK/disks for every
 * disk the user did not name a device for (its block device node is
 * /dev/fswb/ROLE, the name the job gets), binds /proc, /sys and /dev into
 * the chroot and execs the agent there (--stdio --kept-machine). A second
 * stream is `dmesg -w`, from a marker written to /dev/kmsg on. At the end
 * the helper's `cleanup` unmounts, detaches and removes the loop files.
 *
 * All of it runs in a worker process (spawn's fn mode, like ssh's): its
 * stdin and stdout are the agent's control stream, its stderr says why it
 * ended, one more pipe carries the kernel log and what it does. A device
 * that drops off (a kernel panic reboots it) ends the session; the engine
 * records the test as crashed and starts another, whose worker waits for
 * the device to come back (adb connect again for a device on the network)
 * within the boot limit.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "backends/adb_int.h"
#include "backends/agentpipe.h"
#include "core/paths.h"

#define PORT_DEFAULT   5037
#define BOOT_DEFAULT   300 /* a phone's reboot after a panic takes minutes */
#define QUIET_DEFAULT  120
#define FIRST_TRY_S    15 /* a device not reached yet in this run: unplugged, a typo */
#define RETRY_MS       2000
#define IO_MS	       30000
#define WORK_DEFAULT   "/data/fswb"
#define IN_ROOT	       "/var/lib/fswb" /* fswb's directory inside the chroot */
#define EXIT_BUSY      75
#define EXIT_SETUP     76
#define SYNC_CHUNK     65536
#define REPLY_MAX      (1u << 20)
#define ID_STDIN       0
#define ID_STDOUT      1
#define ID_STDERR      2
#define ID_EXIT	       3
#define ID_CLOSE_STDIN 4
#define KMSG_MARK      "fswb: the kernel log of an fswb session starts here"

enum {
	WK_OK = 0,
	WK_FAIL = 1,	/* refused or broken: said on stderr */
	WK_LOST = 3,	/* the device went away */
	WK_STOPPED = 4, /* SIGTERM from fswb */
};

/*
 * The helper on the device: sh WORK/fswb-adb.sh WORK COMMAND [ARGS]. POSIX sh
 * and toybox only (Android's mksh, toybox's applets); runs as root.
 */
static const char helper_script[] =
	"# fswb's helper on an adb device: sh fswb-adb.sh WORK COMMAND [ARGS]\n"
	"W=$1 cmd=$2\n"
	"shift 2\n"
	"say() { echo \"fswb: $*\" >&2; }\n"
	"busy() {\n"
	"	[ -s \"$W/agent.pid\" ] || return 1\n"
	"	read -r p < \"$W/agent.pid\"\n"
	"	case $(tr '\\000' ' ' < \"/proc/$p/cmdline\" 2>/dev/null) in\n"
	"	*fswb-agent*) return 0 ;;\n"
	"	esac\n"
	"	return 1\n"
	"}\n"
	"settle() {\n"
	"	for p in /proc/[0-9]*; do\n"
	"		case $(readlink \"$p/root\" 2>/dev/null) in\n"
	"		\"$W\"/*) kill -KILL \"${p#/proc/}\" 2>/dev/null ;;\n"
	"		esac\n"
	"	done\n"
	"	for m in $(cut -d' ' -f2 /proc/mounts | grep \"^$W/\" | sort -r); do\n"
	"		umount \"$m\" 2>/dev/null || umount -l \"$m\" 2>/dev/null ||\n"
	"			say \"cannot unmount $m\"\n"
	"	done\n"
	"	for f in \"$W\"/disks/*.img; do\n"
	"		[ -e \"$f\" ] || continue\n"
	"		for l in $(losetup -j \"$f\" | cut -d: -f1); do losetup -d \"$l\"; done\n"
	"		rm -f \"$f\"\n"
	"	done\n"
	"	rm -rf /dev/fswb \"$W/agent.pid\"\n"
	"}\n"
	"case $cmd in\n"
	"unpack)\n"
	"	busy && { say 'another fswb run is using this device'; exit 75; }\n"
	"	R=$W/root-$1\n"
	"	rm -rf \"$R\" \"$R.done\" && mkdir -p \"$R\" || exit 76\n"
	"	zcat \"$W/chroot-$1.tar.gz\" | tar -xf - -C \"$R\" ||\n"
	"		{ say \"cannot unpack the chroot into $R\"; rm -rf \"$R\"; exit 76; }\n"
	"	rm -f \"$W/chroot-$1.tar.gz\"\n"
	"	mkdir -p \"$R/proc\" \"$R/sys\" \"$R/dev\" \"$R" IN_ROOT
	"\" && : > \"$R.done\" || exit 76\n"
	"	for d in \"$W\"/root-* \"$W\"/chroot-*; do\n"
	"		case $d in \"$R\" | \"$R.done\") ;; *) rm -rf \"$d\" ;; esac\n"
	"	done\n"
	"	;;\n"
	"agent)\n"
	"	busy && { say 'another fswb run is using this device'; exit 75; }\n"
	"	settle\n"
	"	R=$W/root-$1\n"
	"	shift\n"
	"	[ -e \"$R.done\" ] || { say \"no chroot in $R\"; exit 76; }\n"
	"	cp \"$W/fswb-agent\" \"$R" IN_ROOT "/fswb-agent\" || exit 76\n"
	"	mkdir -p \"$W/disks\" /dev/fswb || exit 76\n"
	"	for d; do\n"
	"		role=${d%%:*} size=${d#*:}\n"
	"		f=$W/disks/$role.img\n"
	"		truncate -s \"$size\" \"$f\" || { say \"cannot make $f\"; exit 76; }\n"
	"		l=$(losetup -fs \"$f\") && [ -b \"$l\" ] ||\n"
	"			{ say \"no loop device for $f\"; exit 76; }\n"
	"		mm=$(stat -Lc '%t %T' \"$l\")\n"
	"		mknod \"/dev/fswb/$role\" b \"$(printf %d \"0x${mm% *}\")\" "
	"\"$(printf %d \"0x${mm#* }\")\" ||\n"
	"			{ say \"cannot make /dev/fswb/$role for $l\"; exit 76; }\n"
	"	done\n"
	"	for m in proc sys dev; do\n"
	"		mount -o bind \"/$m\" \"$R/$m\" ||\n"
	"			{ say \"cannot bind /$m into the chroot $R\"; settle; exit 76; }\n"
	"	done\n"
	"	echo \"$$\" > \"$W/agent.pid\"\n"
	"	exec chroot \"$R\" /usr/bin/env -i "
	"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \\\n"
	"		HOME=/root LANG=C.UTF-8 /bin/sh " IN_ROOT
	"/fswb-agent --stdio --kept-machine \\\n"
	"		--workdir " IN_ROOT "/run\n"
	"	;;\n"
	"cleanup) busy || settle ;;\n"
	"remove)\n"
	"	busy && { say 'another fswb run is using this device'; exit 75; }\n"
	"	settle\n"
	"	rm -rf \"$W\"\n"
	"	;;\n"
	"*) say \"unknown command $cmd\"; exit 2 ;;\n"
	"esac\n";

/* One line of facts about the device, as the probe and the worker read them. */
static const char facts_command[] =
	"echo \"uid=$(id -u)\"; echo \"abi=$(getprop ro.product.cpu.abi)\"; "
	"echo \"release=$(getprop ro.build.version.release)\"; "
	"echo \"selinux=$(cat /sys/fs/selinux/enforce 2>/dev/null)\"";

/* How commands become root on the device. */
enum root_way { ROOT_ADBD, ROOT_SU0, ROOT_SUC };

struct target {
	char *serial; /* NULL: the only device the server lists */
	char *work;
	enum root_way root;
};

struct adb_session_priv {
	struct agent_kept kept; /* first: agent_kept_send and _cancel take the session */
	struct target t;
	char *agent, *appliance, *key; /* fswb-agent here; the appliance and its key */
	char *fstests, *job_dir, *mnt_dir, *results_dir;
	struct strvec disks; /* the device of each spec disk on the machine */
	struct strvec loops; /* "ROLE:SIZE" for each disk fswb makes as a loop file */
	uint64_t loop_bytes;
	const char *arch; /* the plan's */
	unsigned boot, silence;
	struct session_layout layout;
	char *notice;
};

/* ---- parsing (adb_int.h) ------------------------------------------------------ */

static char *
word_value(const char *w, const char *key)
{
	size_t n = strlen(key);

	return !strncmp(w, key, n) && w[n] == ':' ? xstrdup(w + n + 1) : NULL;
}

size_t
adb_devices_parse(const char *text, struct adb_device **out)
{
	struct strvec lines = STRVEC_INIT;
	struct adb_device *d = NULL;
	size_t n = 0;

	strvec_split(&lines, text ? text : "", "\n");
	for (size_t i = 0; i < lines.n; i++) {
		struct strvec w = STRVEC_INIT;

		strvec_split(&w, lines.v[i], " \t\r");
		if (w.n >= 2 && adb_serial_check(w.v[0]) == OK) {
			struct adb_device *x;

			d = xrealloc(d, (n + 1) * sizeof(*d));
			x = &d[n++];
			memset(x, 0, sizeof(*x));
			x->serial = xstrdup(w.v[0]);
			x->state = term_clean(w.v[1]);
			for (size_t j = 2; j < w.n; j++) {
				char *v;

				if ((v = word_value(w.v[j], "product")))
					free(x->product), x->product = term_clean(v);
				else if ((v = word_value(w.v[j], "model")))
					free(x->model), x->model = term_clean(v);
				else if ((v = word_value(w.v[j], "device")))
					free(x->device), x->device = term_clean(v);
				free(v);
			}
		}
		error_clear();
		strvec_clear(&w);
	}
	strvec_clear(&lines);
	*out = d;
	return n;
}

void
adb_devices_free(struct adb_device *d, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(d[i].serial);
		free(d[i].state);
		free(d[i].product);
		free(d[i].model);
		free(d[i].device);
	}
	free(d);
}

const char *
adb_abi_arch(const char *abi)
{
	if (!abi)
		return NULL;
	if (!strcmp(abi, "arm64-v8a"))
		return "arm64";
	if (!strcmp(abi, "x86_64"))
		return "x86_64";
	return NULL;
}

size_t
adb_v2_next(const char *buf, size_t n, int *id, const char **data, size_t *len)
{
	const unsigned char *u = (const unsigned char *)buf;
	uint32_t l;

	if (n < 5)
		return 0;
	l = (uint32_t)u[1] | (uint32_t)u[2] << 8 | (uint32_t)u[3] << 16 | (uint32_t)u[4] << 24;
	if (l > ADB_V2_MAX)
		return SIZE_MAX;
	if (n - 5 < l)
		return 0;
	*id = u[0];
	*data = buf + 5;
	*len = l;
	return 5 + (size_t)l;
}

bool
adb_df_free_kib(const char *text, uint64_t *kib)
{
	struct strvec lines = STRVEC_INIT, w = STRVEC_INIT;
	bool ok = false;

	strvec_split(&lines, text ? text : "", "\n");
	/* the last line with a number in the fourth column: "FS 1K-blocks Used Available ..." */
	for (size_t i = lines.n; i-- > 0 && !ok;) {
		char *end;
		unsigned long long v;

		strvec_clear(&w);
		strvec_split(&w, lines.v[i], " \t");
		if (w.n < 4 || w.v[3][0] < '0' || w.v[3][0] > '9')
			continue;
		errno = 0;
		v = strtoull(w.v[3], &end, 10);
		if (!errno && end != w.v[3] && !*end) {
			*kib = v;
			ok = true;
		}
	}
	strvec_clear(&w);
	strvec_clear(&lines);
	return ok;
}

enum status
adb_serial_check(const char *value)
{
	if (!value || !*value || *value == '-' || strlen(value) > 128)
		return error(ERR_INVALID, "a device serial as `adb devices` shows it");
	for (const char *p = value; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || strchr("._:-[]%", *p)))
			return error(ERR_INVALID,
				     "a device serial as `adb devices` shows it (letters, digits, "
				     "'.', '_', ':', '-')");
	return OK;
}

/* ---- options ------------------------------------------------------------------ */

static enum status
serials_check(const char *value)
{
	struct strvec v = STRVEC_INIT;
	enum status rc = OK;

	strvec_split(&v, value, ",");
	if (!v.n)
		rc = error(ERR_INVALID, "SERIAL[,SERIAL...] as `adb devices` shows them");
	for (size_t i = 0; i < v.n && rc == OK; i++)
		rc = adb_serial_check(v.v[i]);
	strvec_clear(&v);
	return rc;
}

/* A path on the device: absolute, plain characters (it reaches the device's shell). */
static enum status
dev_path_check(const char *value)
{
	if (!value || value[0] != '/' || !value[1] || strstr(value, ".."))
		return error(ERR_INVALID, "an absolute path on the device, such as /data/fswb");
	for (const char *p = value; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || strchr("/._-", *p)))
			return error(ERR_INVALID,
				     "an absolute path on the device of letters, digits, '/', '.', "
				     "'_' and '-'");
	return OK;
}

static enum status
dev_paths_check(const char *value)
{
	struct strvec v = STRVEC_INIT;
	enum status rc = OK;

	strvec_split(&v, value, ",");
	if (!v.n)
		rc = error(ERR_INVALID, "DEV[,DEV...]: block devices on the device");
	for (size_t i = 0; i < v.n && rc == OK; i++)
		rc = dev_path_check(v.v[i]);
	strvec_clear(&v);
	return rc;
}

static const struct backend_option adb_options[] = {
	{ "serial", "SERIAL[,SERIAL...]", serials_check }, /* one device per shard */
	{ "workdir", "DIR", dev_path_check },		   /* /data/fswb on the device */
	{ "test", "DEV", dev_path_check },		   /* else a loop file in WORK/disks */
	{ "scratch", "DEV", dev_path_check },
	{ "pool", "DEV,DEV...", dev_paths_check },
	{ "logdev", "DEV", dev_path_check },
	{ "rtdev", "DEV", dev_path_check },
	{ "test_logdev", "DEV", dev_path_check },
	{ "test_rtdev", "DEV", dev_path_check },
	{ "logwrites", "DEV", dev_path_check }, /* else none: the log-replay tests do not run */
	{ "wipe", "DEV[,DEV...]", dev_paths_check },	  /* the user's confirmation */
	{ "boot", "SECONDS", backend_option_seconds },	  /* to wait for a rebooting device */
	{ "silence", "SECONDS", backend_option_seconds }, /* quiet this long: hung */
	{ NULL, NULL, NULL },
};

/* The serial of slot in serial=a,b (round robin), or NULL: the only device. */
static char *
slot_serial(const char *opt, unsigned slot)
{
	struct strvec v = STRVEC_INIT;
	char *s = NULL;

	if (opt)
		strvec_split(&v, opt, ",");
	if (v.n)
		s = xstrdup(v.v[slot % v.n]);
	strvec_clear(&v);
	return s;
}

/* ---- the adb server's smart sockets (blocking, with limits) ---------------------- */

static unsigned
server_port(void)
{
	const char *p = getenv("ANDROID_ADB_SERVER_PORT");
	char *end;
	unsigned long v;

	if (!p || !*p)
		return PORT_DEFAULT;
	v = strtoul(p, &end, 10);
	return !*end && v > 0 && v < 65536 ? (unsigned)v : PORT_DEFAULT;
}

/* All of len, within ms; false (errno set) when the socket ends or the time runs out. */
static bool
io_all(int fd, void *buf, size_t len, bool wr, int ms)
{
	char *p = buf;
	uint64_t until = loop_now_ms() + (uint64_t)ms;

	while (len) {
		struct pollfd pf = { fd, wr ? POLLOUT : POLLIN, 0 };
		uint64_t now = loop_now_ms();
		ssize_t n;

		if (now >= until) {
			errno = ETIMEDOUT;
			return false;
		}
		if (poll(&pf, 1, (int)(until - now)) < 0 && errno != EINTR)
			return false;
		if (!pf.revents)
			continue;
		n = wr ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = ECONNRESET;
			return false;
		}
		p += n;
		len -= (size_t)n;
	}
	return true;
}

static bool server_down; /* the last srv_connect found no server */

static int
srv_connect(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons((uint16_t)server_port()),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	server_down = false;
	if (fd >= 0 && !connect(fd, (struct sockaddr *)&a, sizeof(a)))
		return fd;
	server_down = true;
	if (fd >= 0)
		close(fd);
	error(ERR_NOTFOUND, "no adb server answers on port %u", server_port());
	return -1;
}

/* A 4-hex-digit length and that many bytes (a reply, a FAIL's words), cleaned for a terminal. */
static enum status
srv_read_counted(int fd, struct strbuf *out)
{
	char hex[5] = { 0 }, *end;
	unsigned long n;
	char *buf;

	if (!io_all(fd, hex, 4, false, IO_MS))
		return error(ERR_IO, "the adb server stopped answering: %s", strerror(errno));
	n = strtoul(hex, &end, 16);
	if (*end)
		return error(ERR_PROTOCOL, "the adb server sent a bad length '%s'", hex);
	buf = xmalloc(n + 1);
	if (!io_all(fd, buf, n, false, IO_MS)) {
		free(buf);
		return error(ERR_IO, "the adb server stopped answering: %s", strerror(errno));
	}
	buf[n] = 0;
	strbuf_add(out, buf, n);
	free(buf);
	return OK;
}

/* Send a request; OK on OKAY, else the server's words (FAIL) as the error. */
static enum status
srv_request(int fd, const char *req)
{
	char hdr[8], st[5] = { 0 };
	size_t n = strlen(req);
	struct strbuf msg = STRBUF_INIT;
	enum status rc;

	if (n > 0xffff)
		return error(ERR_LIMIT, "an adb request of %zu bytes", n);
	snprintf(hdr, sizeof(hdr), "%04zx", n);
	if (!io_all(fd, hdr, 4, true, IO_MS) || !io_all(fd, (char *)req, n, true, IO_MS) ||
	    !io_all(fd, st, 4, false, IO_MS))
		return error(ERR_IO, "the adb server stopped answering: %s", strerror(errno));
	if (!strcmp(st, "OKAY"))
		return OK;
	if (strcmp(st, "FAIL"))
		return error(ERR_PROTOCOL, "the adb server answered '%.4s'", st);
	rc = srv_read_counted(fd, &msg);
	if (rc == OK) {
		char *clean = term_clean(msg.buf ? msg.buf : "");

		rc = error(ERR_INVALID, "%s", clean);
		free(clean);
	}
	strbuf_release(&msg);
	return rc;
}

/* A host service with a counted reply (host:devices-l, host-serial:S:features). */
static enum status
host_query(const char *req, struct strbuf *out)
{
	int fd = srv_connect();
	enum status rc;

	if (fd < 0)
		return ERR_NOTFOUND;
	rc = srv_request(fd, req);
	if (rc == OK)
		rc = srv_read_counted(fd, out);
	close(fd);
	return rc;
}

/* A stream to service on serial's device (host:transport, then the service). */
static enum status
device_open(const char *serial, const char *service, int *out)
{
	char *req = xasprintf("host:transport:%s", serial);
	int fd = srv_connect();
	enum status rc = fd < 0 ? ERR_NOTFOUND : srv_request(fd, req);

	free(req);
	if (rc == OK)
		rc = srv_request(fd, service);
	if (rc != OK) {
		if (fd >= 0)
			close(fd);
		return rc;
	}
	*out = fd;
	return OK;
}

/* The command as root (t->root), quoted for the device's sh. */
static char *
as_root(const struct target *t, const char *cmd)
{
	struct strbuf sb = STRBUF_INIT;

	switch (t->root) {
	case ROOT_ADBD:
		return xstrdup(cmd);
	case ROOT_SU0:
		strbuf_adds(&sb, "su 0 sh -c ");
		break;
	case ROOT_SUC:
		strbuf_adds(&sb, "su -c ");
		break;
	}
	sq_quote(&sb, cmd);
	return strbuf_detach(&sb);
}

static void
v2_packet(struct strbuf *sb, int id, const void *data, size_t len)
{
	unsigned char h[5] = { (unsigned char)id, (unsigned char)len, (unsigned char)(len >> 8),
			       (unsigned char)(len >> 16), (unsigned char)(len >> 24) };

	strbuf_add(sb, h, 5);
	if (len)
		strbuf_add(sb, data, len);
}

/*
 * cmd on the device (already wrapped for root, or not) over the shell
 * protocol v2: input on its stdin, its stdout and stderr into out and err
 * (capped; either may be NULL), *status its exit status. Within ms.
 */
static enum status
dev_run(const char *serial, const char *cmd, const char *in, size_t inlen, struct strbuf *out,
	struct strbuf *err, int *status, int ms)
{
	char *svc = xasprintf("shell,v2,raw:%s", cmd);
	struct strbuf send = STRBUF_INIT, buf = STRBUF_INIT;
	uint64_t until = loop_now_ms() + (uint64_t)ms;
	enum status rc;
	int fd;

	rc = device_open(serial, svc, &fd);
	free(svc);
	if (rc != OK)
		return rc;
	for (size_t off = 0; off < inlen; off += SYNC_CHUNK)
		v2_packet(&send, ID_STDIN, in + off,
			  inlen - off < SYNC_CHUNK ? inlen - off : SYNC_CHUNK);
	v2_packet(&send, ID_CLOSE_STDIN, NULL, 0);
	if (!io_all(fd, send.buf, send.len, true, ms)) {
		rc = error(ERR_IO, "the device %s stopped answering: %s", serial, strerror(errno));
		goto out;
	}
	*status = -1;
	for (;;) {
		char chunk[16384];
		struct pollfd pf = { fd, POLLIN, 0 };
		uint64_t now = loop_now_ms();
		ssize_t n;
		size_t used;
		const char *data;
		size_t len;
		int id;

		while ((used = adb_v2_next(buf.buf, buf.len, &id, &data, &len))) {
			if (used == SIZE_MAX) {
				rc = error(
					ERR_PROTOCOL,
					"the device %s sent a shell packet of more than %u bytes",
					serial, ADB_V2_MAX);
				goto out;
			}
			struct strbuf *to = id == ID_STDOUT ? out : id == ID_STDERR ? err : NULL;

			if (to && to->len + len <= REPLY_MAX)
				strbuf_add(to, data, len);
			if (id == ID_EXIT && len >= 1)
				*status = (unsigned char)data[0];
			strbuf_drop_front(&buf, used);
			if (id == ID_EXIT)
				goto out;
		}
		if (now >= until) {
			rc = error(ERR_TIMEOUT, "the device %s did not finish '%.60s' in %d s",
				   serial, cmd, ms / 1000);
			goto out;
		}
		if (poll(&pf, 1, (int)(until - now)) <= 0)
			continue;
		n = recv(fd, chunk, sizeof(chunk), 0);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0) {
			rc = error(ERR_IO, "the device %s dropped the connection", serial);
			goto out;
		}
		strbuf_add(&buf, chunk, (size_t)n);
	}
out:
	close(fd);
	strbuf_release(&send);
	strbuf_release(&buf);
	return rc;
}

/* Push the local file to remote (mode 0644) over the sync protocol; note_cb says progress. */
static enum status
sync_push(const char *serial, const char *local, const char *remote)
{
	struct strbuf sb = STRBUF_INIT;
	char *spec = xasprintf("%s,%d", remote, 0644);
	unsigned char hdr[8];
	char *buf = xmalloc(SYNC_CHUNK);
	enum status rc;
	ssize_t n;
	int fd, in = open(local, O_RDONLY | O_CLOEXEC);

	if (in < 0) {
		free(spec);
		free(buf);
		return error(ERR_IO, "cannot read %s: %s", local, strerror(errno));
	}
	rc = device_open(serial, "sync:", &fd);
	if (rc != OK)
		goto done_noconn;
#define LE32(p, v)                                   \
	do {                                         \
		(p)[0] = (unsigned char)(v);         \
		(p)[1] = (unsigned char)((v) >> 8);  \
		(p)[2] = (unsigned char)((v) >> 16); \
		(p)[3] = (unsigned char)((v) >> 24); \
	} while (0)
	memcpy(hdr, "SEND", 4);
	LE32(hdr + 4, (uint32_t)strlen(spec));
	strbuf_add(&sb, hdr, 8);
	strbuf_adds(&sb, spec);
	if (!io_all(fd, sb.buf, sb.len, true, IO_MS))
		goto broke;
	while ((n = read(in, buf, SYNC_CHUNK)) > 0) {
		memcpy(hdr, "DATA", 4);
		LE32(hdr + 4, (uint32_t)n);
		if (!io_all(fd, hdr, 8, true, IO_MS) || !io_all(fd, buf, (size_t)n, true, IO_MS))
			goto broke;
	}
	if (n < 0) {
		rc = error(ERR_IO, "cannot read %s: %s", local, strerror(errno));
		goto done;
	}
	memcpy(hdr, "DONE", 4);
	LE32(hdr + 4, (uint32_t)time(NULL));
	if (!io_all(fd, hdr, 8, true, IO_MS) || !io_all(fd, hdr, 8, false, 10 * IO_MS))
		goto broke;
	if (!memcmp(hdr, "FAIL", 4)) {
		uint32_t len =
			hdr[4] | hdr[5] << 8 | (uint32_t)hdr[6] << 16 | (uint32_t)hdr[7] << 24;
		char msg[512] = { 0 };
		char *clean;

		len = len < sizeof(msg) - 1 ? len : sizeof(msg) - 1;
		io_all(fd, msg, len, false, IO_MS);
		clean = term_clean(msg);
		rc = error(ERR_IO, "the device %s refused %s: %s", serial, remote, clean);
		free(clean);
		goto done;
	}
	if (memcmp(hdr, "OKAY", 4)) {
		rc = error(ERR_PROTOCOL, "the device %s answered a push with '%.4s'", serial,
			   (char *)hdr);
		goto done;
	}
	memcpy(hdr, "QUIT", 4);
	LE32(hdr + 4, 0);
	io_all(fd, hdr, 8, true, IO_MS);
#undef LE32
	goto done;
broke:
	rc = error(ERR_IO,
		   "pushing %s to %s on %s broke: %s (the device dropped off, or its /data is "
		   "full)",
		   local, remote, serial, strerror(errno));
done:
	close(fd);
done_noconn:
	close(in);
	strbuf_release(&sb);
	free(spec);
	free(buf);
	return rc;
}

/* ---- the device --------------------------------------------------------------------- */

/* The devices the server lists; starts the server first when asked and none answers. */
static enum status
list_devices(bool start, struct adb_device **d, size_t *n)
{
	struct strbuf out = STRBUF_INIT;
	enum status rc = host_query("host:devices-l", &out);

	if (rc != OK && server_down && start) {
		struct loop *loop = loop_new();
		struct strbuf log = STRBUF_INIT;
		struct child_exit ex;

		error_clear();
		rc = spawn_run(loop, (const char *const[]){ "adb", "start-server", NULL }, NULL,
			       true, 16u << 10, &log, &ex);
		if (rc == OK && (!ex.exited || ex.code))
			rc = error(ERR_CHILD, "adb start-server failed: %.200s",
				   log.buf ? log.buf : "");
		else if (rc != OK)
			rc = error(ERR_SPAWN,
				   "no adb server answers on port %u and adb cannot be run (%s): "
				   "install adb",
				   server_port(), error_msg());
		loop_free(loop);
		strbuf_release(&log);
		if (rc == OK)
			rc = host_query("host:devices-l", &out);
	}
	if (rc == OK)
		*n = adb_devices_parse(out.buf, d);
	strbuf_release(&out);
	return rc;
}

/* The one device to use: serial, or the only one listed. */
static enum status
pick_device(const char *serial, const struct adb_device *d, size_t n, const struct adb_device **out)
{
	struct strvec names = STRVEC_INIT;
	enum status rc;

	*out = NULL;
	for (size_t i = 0; i < n; i++) {
		if (serial && !strcmp(d[i].serial, serial)) {
			*out = &d[i];
			strvec_clear(&names);
			return OK;
		}
		strvec_pushf(&names, "%s%s%s%s", d[i].serial, d[i].model ? " (" : "",
			     d[i].model ? d[i].model : "", d[i].model ? ")" : "");
	}
	if (!serial && n == 1) {
		*out = &d[0];
		strvec_clear(&names);
		return OK;
	}
	if (serial) {
		char *list = strvec_join(&names, ", ");

		rc = error(ERR_NOTFOUND,
			   "no device %s is attached to the adb server (it lists: %s): plug it in "
			   "and enable USB debugging, or `adb connect HOST:PORT` for one on the "
			   "network",
			   serial, n ? list : "none");
		free(list);
	} else if (!n) {
		rc = error(ERR_NOTFOUND,
			   "the adb server lists no device: plug one in with USB debugging on "
			   "(Settings, Developer options), or `adb connect HOST:PORT`");
	} else {
		char *list = strvec_join(&names, ", ");

		rc = error(ERR_INVALID,
			   "several devices are attached (%s): pick one with -o serial=", list);
		free(list);
	}
	strvec_clear(&names);
	return rc;
}

static enum status
state_verdict(const struct adb_device *d)
{
	if (!strcmp(d->state, "device"))
		return OK;
	if (!strcmp(d->state, "unauthorized"))
		return error(ERR_INVALID,
			     "the device %s has not authorized this computer: unlock it and accept "
			     "'Allow USB debugging?' (tick 'Always allow')",
			     d->serial);
	return error(ERR_INVALID, "the device %s is %s, not ready: wait for it, or replug it",
		     d->serial, d->state);
}

/* The device has the shell protocol v2 (exit statuses), else why fswb refuses it. */
static enum status
check_features(const char *serial)
{
	char *req = xasprintf("host-serial:%s:features", serial);
	struct strbuf f = STRBUF_INIT;
	struct strvec v = STRVEC_INIT;
	enum status rc = host_query(req, &f);

	free(req);
	if (rc == OK) {
		strvec_split(&v, f.buf ? f.buf : "", ",\n");
		if (!strvec_contains(&v, "shell_v2"))
			rc = error(
				ERR_UNSUPPORTED,
				"the device %s's adbd has no shell protocol v2 (Android 7 and "
				"later have it): without it the exit status of a command on the "
				"device is lost, so a failed mkfs or mount would pass for a good "
				"one; fswb does not run tests on it",
				serial);
	}
	strvec_clear(&v);
	strbuf_release(&f);
	return rc;
}

/* What facts_command said: the value of key, or "". */
static const char *
fact(const struct strvec *facts, const char *key)
{
	size_t n = strlen(key);

	for (size_t i = 0; i < facts->n; i++)
		if (!strncmp(facts->v[i], key, n) && facts->v[i][n] == '=')
			return facts->v[i] + n + 1;
	return "";
}

/*
 * Learn how commands run as root on the device (t->root) and its facts
 * (facts_command's lines, cleaned), or say why not.
 */
static enum status
find_root(struct target *t, const char *serial, struct strvec *facts)
{
	static const enum root_way ways[] = { ROOT_ADBD, ROOT_SU0, ROOT_SUC };
	enum status rc = OK;

	for (size_t i = 0; i < ARRAY_SIZE(ways); i++) {
		struct strbuf out = STRBUF_INIT;
		char *cmd, *clean;
		int st = -1;

		t->root = ways[i];
		cmd = as_root(t, facts_command);
		rc = dev_run(serial, cmd, NULL, 0, &out, NULL, &st, IO_MS);
		free(cmd);
		clean = term_clean(out.buf ? out.buf : "");
		strvec_clear(facts);
		strvec_split(facts, clean, "\n");
		free(clean);
		strbuf_release(&out);
		if (rc != OK)
			return rc;
		if (!strcmp(fact(facts, "uid"), "0"))
			return OK;
	}
	t->root = ROOT_ADBD;
	return error(ERR_INVALID,
		     "fswb needs root on the device %s and has none: `adb -s %s root` (a "
		     "userdebug or eng build), or a rooted device with su",
		     serial, serial);
}

/* The free KiB where WORK is (its parent, when WORK does not exist yet). */
static enum status
free_kib(const struct target *t, const char *serial, uint64_t *kib)
{
	struct strbuf q = STRBUF_INIT, out = STRBUF_INIT;
	char *cmd;
	int st = -1;
	enum status rc;

	strbuf_adds(&q, "d=");
	sq_quote(&q, t->work);
	strbuf_adds(&q, "; while [ ! -d \"$d\" ]; do d=${d%/*}; [ -n \"$d\" ] || d=/; done; "
			"df -k \"$d\"");
	cmd = as_root(t, q.buf);
	rc = dev_run(serial, cmd, NULL, 0, &out, NULL, &st, IO_MS);
	if (rc == OK && (st || !adb_df_free_kib(out.buf, kib)))
		rc = error(ERR_PARSE, "cannot tell the free space in %s on %s (df -k)", t->work,
			   serial);
	free(cmd);
	strbuf_release(&q);
	strbuf_release(&out);
	return rc;
}

static const char *
selinux_words(const struct strvec *facts)
{
	return !strcmp(fact(facts, "selinux"), "1")
		       ? "SELinux is enforcing: if the chroot's mounts or loop devices are "
			 "denied, `adb shell setenforce 0` (until the next reboot)"
		       : NULL;
}

/* ---- the worker ------------------------------------------------------------------- */

/* A host:port serial (a device on the network): adb connect it again after a drop. */
static bool
network_serial(const char *serial)
{
	const char *c = strrchr(serial, ':');

	return c && c != serial && c[1] && strspn(c + 1, "0123456789") == strlen(c + 1);
}

/*
 * Wait for the device to be listed as ready: for the boot limit when it was
 * reached before in this run (it is rebooting), else FIRST_TRY_S. A device
 * on the network is connected again on each try. The serial found into
 * *serial (when none was named: the only device).
 */
static int
wait_device(const struct adb_session_priv *s, char **serial)
{
	unsigned limit = s->kept.reconnect ? s->boot : FIRST_TRY_S;
	uint64_t until = loop_now_ms() + (uint64_t)limit * 1000;
	bool said = false;

	for (;;) {
		struct adb_device *d = NULL;
		const struct adb_device *one;
		size_t n = 0;
		enum status rc = list_devices(true, &d, &n);

		if (rc == OK)
			rc = pick_device(s->t.serial, d, n, &one);
		if (rc == OK)
			rc = state_verdict(one);
		if (rc == OK) {
			*serial = xstrdup(one->serial);
			adb_devices_free(d, n);
			if (said)
				agent_worker_note("the device %s is back", *serial);
			return WK_OK;
		}
		adb_devices_free(d, n);
		if (agent_worker_stop)
			return WK_STOPPED;
		if (loop_now_ms() + RETRY_MS >= until || (server_down && !s->kept.reconnect)) {
			if (s->kept.reconnect)
				agent_worker_say("%s (waited %u s: the -o boot=SECONDS limit)",
						 error_msg(), s->boot);
			else
				agent_worker_say("%s", error_msg());
			return WK_FAIL;
		}
		if (!said)
			agent_worker_note("%s; waiting for up to %u s", error_msg(), limit);
		said = true;
		error_clear();
		if (s->t.serial && network_serial(s->t.serial)) {
			char *req = xasprintf("host:connect:%s", s->t.serial);
			struct strbuf out = STRBUF_INIT;

			host_query(req, &out);
			error_clear();
			free(req);
			strbuf_release(&out);
		}
		usleep(RETRY_MS * 1000);
	}
}

/* The chroot's tarball in fswb's cache (packed once per appliance), and its unpacked size. */
static enum status
chroot_tarball(const struct adb_session_priv *s, char **out, uint64_t *unpacked)
{
	char *cache = NULL, *tarball, *tmp = NULL, *tmptar = NULL;
	struct loop *loop = NULL;
	struct strbuf log = STRBUF_INIT;
	struct child_exit ex;
	struct stat st;
	enum status rc = fswb_dir_make(DIR_CACHE, "adb", &cache);

	if (rc != OK)
		return rc;
	if (stat(s->appliance, &st)) {
		free(cache);
		return error(ERR_IO, "cannot read the appliance %s: %s", s->appliance,
			     strerror(errno));
	}
	*unpacked = (uint64_t)st.st_blocks * 512;
	tarball = xasprintf("%s/chroot-%s.tar.gz", cache, s->key);
	if (path_exists(tarball))
		goto done;
	agent_worker_note("packing the appliance as a chroot for the device (once per appliance)");
	tmp = xasprintf("%s/chroot-%s.XXXXXX", cache, s->key);
	if (!mkdtemp(tmp)) {
		rc = error(ERR_IO, "cannot make a directory in %s: %s", cache, strerror(errno));
		free(tmp);
		tmp = NULL;
		goto done;
	}
	loop = loop_new();
	{
		char *rdump = xasprintf("rdump / %s", tmp);

		rc = spawn_run(loop,
			       (const char *const[]){ "debugfs", "-R", rdump, s->appliance, NULL },
			       NULL, true, 64u << 10, &log, &ex);
		free(rdump);
	}
	if (rc == OK) {
		char *check = xasprintf("%s/opt/fstests/check", tmp);

		if (!path_exists(check))
			rc = error(
				ERR_NOTFOUND,
				"the appliance %s has no fstests in /opt/fstests (debugfs: %.200s)",
				s->appliance, log.buf ? log.buf : "");
		free(check);
	}
	tmptar = xasprintf("%s.tar.gz", tmp);
	if (rc == OK) {
		strbuf_reset(&log);
		rc = spawn_run(loop,
			       (const char *const[]){ "tar", "--numeric-owner", "-czf", tmptar,
						      "-C", tmp, ".", NULL },
			       NULL, true, 64u << 10, &log, &ex);
		if (rc == OK && (!ex.exited || ex.code))
			rc = error(ERR_CHILD, "cannot pack the appliance as a chroot: tar: %.200s",
				   log.buf ? log.buf : "");
	}
	if (rc == OK && rename(tmptar, tarball))
		rc = error(ERR_IO, "cannot write %s: %s", tarball, strerror(errno));
	if (rc != OK)
		unlink(tmptar);
done:
	if (tmp && remove_tree(tmp) != OK && rc == OK)
		error_clear();
	if (loop)
		loop_free(loop);
	strbuf_release(&log);
	free(tmp);
	free(tmptar);
	free(cache);
	if (rc != OK) {
		free(tarball);
		return rc;
	}
	*out = tarball;
	return OK;
}

/* The helper `sh WORK/fswb-adb.sh WORK ARGS` as root, its stderr into err. */
static enum status
helper(const struct adb_session_priv *s, const char *serial, const char *args, struct strbuf *err,
       int *status, int ms)
{
	struct strbuf q = STRBUF_INIT;
	char *script = path_join(s->t.work, "fswb-adb.sh"), *cmd;
	enum status rc;

	strbuf_adds(&q, "sh ");
	sq_quote(&q, script);
	strbuf_addch(&q, ' ');
	sq_quote(&q, s->t.work);
	strbuf_addf(&q, " %s", args);
	cmd = as_root(&s->t, q.buf);
	rc = dev_run(serial, cmd, NULL, 0, NULL, err, status, ms);
	free(cmd);
	free(script);
	strbuf_release(&q);
	return rc;
}

/* The last line of a helper's stderr, cleaned, for a message (until the next call). */
static const char *
last_line(const struct strbuf *err)
{
	static char line[512];
	char *clean = term_clean(err->buf ? err->buf : ""), *p = clean + strlen(clean);

	while (p > clean && p[-1] == '\n')
		*--p = 0;
	p = strrchr(clean, '\n');
	snprintf(line, sizeof(line), "%s", p ? p + 1 : clean);
	free(clean);
	return line;
}

/* A file from this host to path on the device, through a temporary file written in full. */
static enum status
push_file(const struct adb_session_priv *s, const char *serial, const char *local, const char *path)
{
	char *part = xasprintf("%s.part", path);
	struct strbuf q = STRBUF_INIT;
	enum status rc = sync_push(serial, local, part);

	if (rc == OK) {
		char *cmd;
		int st = -1;

		strbuf_adds(&q, "mv -f ");
		sq_quote(&q, part);
		strbuf_addch(&q, ' ');
		sq_quote(&q, path);
		cmd = as_root(&s->t, q.buf);
		rc = dev_run(serial, cmd, NULL, 0, NULL, NULL, &st, IO_MS);
		if (rc == OK && st)
			rc = error(ERR_IO, "cannot move %s into place on %s", path, serial);
		free(cmd);
	}
	strbuf_release(&q);
	free(part);
	return rc;
}

/* The helper script to WORK/fswb-adb.sh, through a private file in fswb's cache. */
static enum status
push_helper(const struct adb_session_priv *s, const char *serial)
{
	char *cache = NULL, *tmp, *path;
	enum status rc = fswb_dir_make(DIR_CACHE, "adb", &cache);
	int fd;

	if (rc != OK)
		return rc;
	tmp = xasprintf("%s/fswb-adb.sh.XXXXXX", cache);
	fd = mkstemp(tmp);
	if (fd < 0 || !write_fd_all(fd, helper_script, sizeof(helper_script) - 1)) {
		rc = error(ERR_IO, "cannot write %s: %s", tmp, strerror(errno));
		if (fd >= 0)
			close(fd), unlink(tmp);
		free(tmp);
		free(cache);
		return rc;
	}
	close(fd);
	path = path_join(s->t.work, "fswb-adb.sh");
	rc = push_file(s, serial, tmp, path);
	unlink(tmp);
	free(tmp);
	free(path);
	free(cache);
	return rc;
}

/* Everything the agent's start needs on the device: WORK, the helper, the chroot, the agent. */
static int
prepare_device(struct adb_session_priv *s, const char *serial)
{
	struct strvec facts = STRVEC_INIT;
	struct strbuf q = STRBUF_INIT, err = STRBUF_INIT;
	char *cmd = NULL, *path = NULL, *tarball = NULL;
	const char *arch;
	uint64_t kib = 0, unpacked = 0, need;
	enum status rc;
	int st = -1, code = WK_FAIL;
	bool have;

	rc = check_features(serial);
	if (rc == OK)
		rc = find_root(&s->t, serial, &facts);
	if (rc != OK)
		goto out;
	arch = adb_abi_arch(fact(&facts, "abi"));
	if (!arch || strcmp(arch, s->arch)) {
		rc = error(ERR_UNSUPPORTED, "the device %s is %s, the appliance is for %s: %s",
			   serial, *fact(&facts, "abi") ? fact(&facts, "abi") : "of an unknown ABI",
			   s->arch,
			   arch ? "leave --arch out (the appliance follows the device) or give "
				  "the device's"
				: "fswb makes chroots for arm64-v8a and x86_64 devices");
		goto out;
	}
	if (selinux_words(&facts))
		agent_worker_note("%s: %s", serial, selinux_words(&facts));
	/* WORK, the helper (in full: a half-written one must not run) */
	strbuf_adds(&q, "mkdir -p ");
	sq_quote(&q, s->t.work);
	strbuf_adds(&q, " && chmod 0700 ");
	sq_quote(&q, s->t.work);
	strbuf_adds(&q, " && [ -e ");
	sq_quote(&q, s->t.work);
	strbuf_adds(&q, "/root-");
	strbuf_adds(&q, s->key);
	strbuf_adds(&q, ".done ] && echo have || echo none");
	cmd = as_root(&s->t, q.buf);
	strbuf_reset(&q);
	rc = dev_run(serial, cmd, NULL, 0, &q, &err, &st, IO_MS);
	if (rc == OK && st)
		rc = error(ERR_IO, "cannot make %s on %s: %s", s->t.work, serial, last_line(&err));
	if (rc != OK)
		goto out;
	have = q.buf && str_startswith(q.buf, "have");
	rc = free_kib(&s->t, serial, &kib);
	if (rc != OK)
		goto out;
	if (!have) {
		rc = chroot_tarball(s, &tarball, &unpacked);
		if (rc != OK)
			goto out;
	}
	{
		struct stat tst = { 0 };

		if (tarball)
			stat(tarball, &tst);
		need = (have ? 0 : (uint64_t)tst.st_size + unpacked) + s->loop_bytes;
		if (kib * 1024 < need) {
			char a[32], b[32], c[32], e[32];

			rc = error(ERR_LIMIT,
				   "the device %s has %s free in %s; fswb needs %s (%s for the "
				   "chroot, %s for the test disks' loop files): free space there, "
				   "or name partitions for the disks (-o test=DEV -o scratch=DEV)",
				   serial, format_size(kib * 1024, a, sizeof(a)), s->t.work,
				   format_size(need, b, sizeof(b)),
				   format_size(need - s->loop_bytes, c, sizeof(c)),
				   format_size(s->loop_bytes, e, sizeof(e)));
			goto out;
		}
	}
	rc = push_helper(s, serial);
	if (rc != OK)
		goto out;
	if (!have) {
		char *remote = xasprintf("%s/chroot-%s.tar.gz", s->t.work, s->key);
		struct stat tst;

		stat(tarball, &tst);
		agent_worker_note("pushing the chroot (%lld MiB) to %s:%s",
				  (long long)(tst.st_size >> 20), serial, remote);
		rc = push_file(s, serial, tarball, remote);
		free(remote);
		if (rc == OK) {
			char *args = xasprintf("unpack %s", s->key);

			agent_worker_note("unpacking the chroot on %s", serial);
			strbuf_reset(&err);
			rc = helper(s, serial, args, &err, &st, 30 * 60 * 1000);
			free(args);
			if (rc == OK && st == EXIT_BUSY)
				rc = error(ERR_BUSY,
					   "another fswb run is using the device %s: wait "
					   "for it",
					   serial);
			else if (rc == OK && st)
				rc = error(ERR_IO, "cannot unpack the chroot on %s: %s", serial,
					   last_line(&err));
		}
		if (rc != OK)
			goto out;
	}
	path = path_join(s->t.work, "fswb-agent");
	rc = push_file(s, serial, s->agent, path);
	if (rc == OK)
		code = WK_OK;
out:
	if (rc != OK)
		agent_worker_say("%s", error_msg());
	free(path);
	free(cmd);
	free(tarball);
	strvec_clear(&facts);
	strbuf_release(&q);
	strbuf_release(&err);
	return code;
}

/* A shell-v2 stream the worker pumps. */
struct stream {
	int fd;
	struct strbuf in;
	int status; /* -1 until the exit packet */
	bool open;
};

/* Read what fd has; the packets to out/err; false when the stream ended. */
static bool
stream_pump(struct stream *st, int out, int err, struct strbuf *errtail,
	    void (*filter)(int fd, const char *buf, size_t len))
{
	char chunk[32768];
	ssize_t n = recv(st->fd, chunk, sizeof(chunk), MSG_DONTWAIT);
	size_t used, len;
	const char *data;
	int id;

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return true;
	if (n <= 0)
		return st->open = false;
	strbuf_add(&st->in, chunk, (size_t)n);
	while ((used = adb_v2_next(st->in.buf, st->in.len, &id, &data, &len))) {
		if (used == SIZE_MAX) /* a broken stream: its end */
			return st->open = false;
		if (id == ID_STDOUT && out >= 0)
			filter ? filter(out, data, len) : (void)agent_write_all(out, data, len);
		else if (id == ID_STDERR) {
			if (err >= 0)
				agent_write_all(err, data, len);
			if (errtail) {
				strbuf_add(errtail, data, len);
				if (errtail->len > 4096)
					strbuf_drop_front(errtail, errtail->len - 4096);
			}
		} else if (id == ID_EXIT && len >= 1)
			st->status = (unsigned char)data[0];
		strbuf_drop_front(&st->in, used);
	}
	return true;
}

/* The kernel log from the marker on (everything, when the marker could not be written). */
static bool klog_marked, klog_seen;
static char klog_mark[128]; /* this session's: earlier ones are in the log too */
static struct strbuf klog_line = STRBUF_INIT;

static void
klog_filter(int fd, const char *buf, size_t len)
{
	if (!klog_marked || klog_seen) {
		agent_write_all(fd, buf, len);
		return;
	}
	for (size_t i = 0; i < len; i++) {
		if (buf[i] != '\n') {
			if (klog_line.len < 4096)
				strbuf_addch(&klog_line, buf[i]);
			continue;
		}
		if (klog_line.buf && strstr(klog_line.buf, klog_mark)) {
			klog_seen = true;
			agent_write_all(fd, buf + i + 1, len - i - 1);
			return;
		}
		strbuf_reset(&klog_line);
	}
}

static int
worker(void *arg)
{
	struct adb_session_priv *s = arg;
	struct stream agent = { -1, STRBUF_INIT, -1, false }, klog = { -1, STRBUF_INIT, -1, false };
	struct strbuf errtail = STRBUF_INIT, q = STRBUF_INIT;
	char *serial = NULL, *cmd;
	bool in_open = true;
	int code, con = agent_kept_worker(&s->kept), st = -1;

	code = wait_device(s, &serial);
	if (code == WK_OK)
		code = prepare_device(s, serial);
	if (code != WK_OK)
		goto out;
	/* the kernel log first, then a marker in it: what came before is not this session's */
	cmd = as_root(&s->t, "dmesg -w");
	{
		char *svc = xasprintf("shell,v2,raw:%s", cmd);

		if (device_open(serial, svc, &klog.fd) == OK)
			klog.open = true;
		else
			agent_worker_note("no kernel log from %s: %s (the run goes on without it)",
					  serial, error_msg());
		free(svc);
	}
	free(cmd);
	snprintf(klog_mark, sizeof(klog_mark), "%s (%d.%llu)", KMSG_MARK, (int)getpid(),
		 (unsigned long long)loop_now_ms());
	{
		char *echo = xasprintf("echo '%s' > /dev/kmsg", klog_mark);

		cmd = as_root(&s->t, echo);
		free(echo);
	}
	klog_marked = dev_run(serial, cmd, NULL, 0, NULL, NULL, &st, IO_MS) == OK && st == 0;
	error_clear();
	free(cmd);
	strbuf_addf(&q, "agent %s", s->key);
	for (size_t i = 0; i < s->loops.n; i++) {
		strbuf_addch(&q, ' ');
		sq_quote(&q, s->loops.v[i]);
	}
	{
		struct strbuf h = STRBUF_INIT;
		char *script = path_join(s->t.work, "fswb-adb.sh"), *svc;

		strbuf_adds(&h, "sh ");
		sq_quote(&h, script);
		strbuf_addch(&h, ' ');
		sq_quote(&h, s->t.work);
		strbuf_addf(&h, " %s", q.buf);
		cmd = as_root(&s->t, h.buf);
		svc = xasprintf("shell,v2,raw:%s", cmd);
		if (device_open(serial, svc, &agent.fd) != OK) {
			agent_worker_say("cannot start the agent on %s: %s", serial, error_msg());
			code = WK_FAIL;
		}
		agent.open = agent.fd >= 0;
		free(svc);
		free(cmd);
		free(script);
		strbuf_release(&h);
		if (code != WK_OK)
			goto out;
	}
	while (agent.open) {
		struct pollfd p[3] = { { agent.fd, POLLIN, 0 },
				       { klog.open ? klog.fd : -1, POLLIN, 0 },
				       { in_open ? 0 : -1, POLLIN, 0 } };
		char buf[SYNC_CHUNK];

		if (agent_worker_stop) {
			code = WK_STOPPED;
			break;
		}
		poll(p, 3, 200);
		if (p[2].revents & (POLLIN | POLLHUP | POLLERR)) {
			ssize_t n = read(0, buf, sizeof(buf));
			struct strbuf pk = STRBUF_INIT;

			if (n > 0)
				v2_packet(&pk, ID_STDIN, buf, (size_t)n);
			else if (n == 0 || errno != EINTR) {
				in_open = false; /* fswb is done with the agent */
				v2_packet(&pk, ID_CLOSE_STDIN, NULL, 0);
			}
			if (pk.len && !io_all(agent.fd, pk.buf, pk.len, true, IO_MS))
				agent.open = false;
			strbuf_release(&pk);
		}
		if (p[1].revents && !stream_pump(&klog, con, -1, NULL, klog_filter))
			close(klog.fd), klog.fd = -1;
		if (p[0].revents)
			stream_pump(&agent, 1, con, &errtail, NULL);
	}
	if (code == WK_STOPPED && agent.open) {
		/* the agent stops check and cleans up at the end of its input */
		struct strbuf pk = STRBUF_INIT;
		uint64_t until = loop_now_ms() + 5000;

		v2_packet(&pk, ID_CLOSE_STDIN, NULL, 0);
		io_all(agent.fd, pk.buf, pk.len, true, 1000);
		strbuf_release(&pk);
		while (agent.open && loop_now_ms() < until) {
			struct pollfd p = { agent.fd, POLLIN, 0 };

			if (poll(&p, 1, 200) > 0)
				stream_pump(&agent, 1, con, &errtail, NULL);
		}
	} else if (agent.status < 0) {
		struct adb_device *d = NULL;
		const struct adb_device *one;
		size_t n = 0;
		bool there;

		usleep(500000);
		there = list_devices(false, &d, &n) == OK &&
			pick_device(serial, d, n, &one) == OK && !strcmp(one->state, "device");
		error_clear();
		adb_devices_free(d, n);
		agent_worker_say(there ? "the connection to the device %s broke"
				       : "the device %s dropped off (a reboot, or a kernel panic)",
				 serial);
		code = WK_LOST;
		goto out;
	} else if (agent.status == EXIT_BUSY) {
		agent_worker_say("another fswb run is using the device %s: wait for it", serial);
		code = WK_FAIL;
	} else if (agent.status == EXIT_SETUP) {
		agent_worker_say("cannot set up the chroot on %s: %s", serial, last_line(&errtail));
		code = WK_FAIL;
	} else if (agent.status) {
		agent_worker_say("the agent on %s ended with status %d", serial, agent.status);
		code = WK_FAIL;
	}
	/* the mounts, loop devices and loop files go; a device that is gone has none */
	strbuf_reset(&errtail);
	if (helper(s, serial, "cleanup", &errtail, &st, 120000) != OK || st)
		agent_worker_note("cannot clean up on %s: %s", serial,
				  errtail.len ? errtail.buf : error_msg());
	error_clear();
out:
	if (agent.fd >= 0)
		close(agent.fd);
	if (klog.fd >= 0)
		close(klog.fd);
	strbuf_release(&agent.in);
	strbuf_release(&klog.in);
	strbuf_release(&errtail);
	strbuf_release(&q);
	free(serial);
	return code;
}

/* ---- the session ---------------------------------------------------------------- */

static void
adb_release(void *priv)
{
	struct adb_session_priv *s = priv;

	agent_kept_release(&s->kept);
	free(s->t.serial);
	free(s->t.work);
	free(s->agent);
	free(s->appliance);
	free(s->key);
	free(s->fstests);
	free(s->job_dir);
	free(s->mnt_dir);
	free(s->results_dir);
	free(s->notice);
	strvec_clear(&s->disks);
	strvec_clear(&s->loops);
	free(s);
}

/* The device the user named for role (pool1..N from pool=), or NULL: a loop file. */
static const char *
named_device(const struct session_spec *spec, const char *role, struct strvec *pool)
{
	if (!strncmp(role, "pool", 4) && role[4] >= '1' && role[4] <= '9') {
		size_t i = strtoul(role + 4, NULL, 10);

		return i <= pool->n ? pool->v[i - 1] : NULL;
	}
	return session_spec_opt(spec, role);
}

static enum status
adb_start(struct loop *loop, void *run, const struct session_spec *spec,
	  const struct session_callbacks *cb, void *data, struct lease *lease, void **priv)
{
	struct adb_session_priv *s = xcalloc(1, sizeof(*s));
	struct strvec pool = STRVEC_INIT;
	const char *v;
	enum status rc;

	agent_kept_init(&s->kept, loop, run, spec->slot, cb, data);
	strvec_init(&s->disks);
	strvec_init(&s->loops);
	s->boot = session_spec_seconds(spec, "boot", BOOT_DEFAULT);
	s->silence = session_spec_seconds(spec, "silence", QUIET_DEFAULT);
	s->t.serial = slot_serial(session_spec_opt(spec, "serial"), spec->slot);
	s->t.work = xstrdup((v = session_spec_opt(spec, "workdir")) ? v : WORK_DEFAULT);
	s->arch = spec->arch->name;
	if (!spec->appliance || !spec->agent)
		BUG("an adb session without the appliance or the agent");
	s->agent = xstrdup(spec->agent);
	s->appliance = xstrdup(spec->appliance);
	{
		/* the appliance's cache directory is named by its key */
		char *dir = xstrdup(spec->appliance), *slash = strrchr(dir, '/');
		const char *base;

		if (slash)
			*slash = 0;
		base = strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir;
		s->key = xstrndup(base, 16);
		for (const char *p = s->key; *p; p++)
			if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-' ||
			      *p == '_'))
				BUG("an appliance directory named '%s'", base);
		free(dir);
	}
	s->fstests = xstrdup("/opt/fstests");
	s->job_dir = xstrdup(IN_ROOT "/run/job");
	s->mnt_dir = xstrdup(IN_ROOT "/run/mnt");
	s->results_dir = xstrdup(IN_ROOT "/run/results");
	s->layout = (struct session_layout){ s->fstests, s->job_dir, s->mnt_dir, s->results_dir };
	if ((v = session_spec_opt(spec, "pool")))
		strvec_split(&pool, v, ",");
	for (size_t i = 0; i < spec->ndisks; i++) {
		const char *role = spec->disks[i].role, *dev = named_device(spec, role, &pool);

		if (dev || !strcmp(role, "logwrites")) {
			strvec_push(&s->disks, dev ? dev : "");
			continue;
		}
		strvec_pushf(&s->disks, "/dev/fswb/%s", role);
		strvec_pushf(&s->loops, "%s:%llu", role, (unsigned long long)spec->disks[i].size);
		s->loop_bytes += spec->disks[i].size;
	}
	strvec_clear(&pool);
	for (size_t i = 0; i < s->disks.n; i++)
		for (size_t j = 0; j < i; j++)
			if (*s->disks.v[i] && !strcmp(s->disks.v[i], s->disks.v[j])) {
				rc = error(ERR_INVALID,
					   "%s is named for both %s and %s: each role needs a "
					   "device of its own",
					   s->disks.v[i], spec->disks[j].role, spec->disks[i].role);
				goto fail;
			}
	rc = agent_kept_start(&s->kept, worker, s, "fswb adb", lease);
	if (rc != OK)
		goto fail;
	s->notice = xasprintf("the test machine is the Android device %s, running its own kernel; "
			      "fstests runs in a chroot in %s",
			      s->t.serial ? s->t.serial : "attached", s->t.work);
	*priv = s;
	return OK;
fail:
	adb_release(s);
	return rc;
}

static char *
adb_disk_path(void *priv, size_t index)
{
	struct adb_session_priv *s = priv;

	if (index >= s->disks.n)
		BUG("disk index %zu out of range", index);
	return *s->disks.v[index] ? xstrdup(s->disks.v[index]) : NULL;
}

static const struct session_layout *
adb_layout(void *priv)
{
	return &((struct adb_session_priv *)priv)->layout;
}

static unsigned
adb_boot_limit(void *priv)
{
	/* the worker waits boot seconds for the device; then the chroot's push and unpack */
	return ((struct adb_session_priv *)priv)->boot + 30 * 60;
}

static unsigned
adb_silence_limit(void *priv)
{
	return ((struct adb_session_priv *)priv)->silence;
}

static const char *
adb_notice(void *priv)
{
	return ((struct adb_session_priv *)priv)->notice;
}

static unsigned
adb_machines(const struct plan *plan)
{
	struct strvec v = STRVEC_INIT;
	const char *opt = plan_backend_opt(plan, "serial");
	unsigned n;

	if (opt)
		strvec_split(&v, opt, ",");
	n = (unsigned)v.n;
	strvec_clear(&v);
	return n ? n : 1;
}

/* The first device's ABI as the plan's arch (the appliance is made for it), or NULL. */
static const char *
adb_machine_arch(const struct plan *plan)
{
	struct adb_device *d = NULL;
	const struct adb_device *one;
	struct strbuf out = STRBUF_INIT;
	char *serial = slot_serial(plan_backend_opt(plan, "serial"), 0), *clean;
	const char *arch = NULL;
	size_t n = 0;
	int st = -1;

	if (list_devices(true, &d, &n) == OK && pick_device(serial, d, n, &one) == OK &&
	    state_verdict(one) == OK &&
	    dev_run(one->serial, "getprop ro.product.cpu.abi", NULL, 0, &out, NULL, &st, IO_MS) ==
		    OK &&
	    st == 0) {
		clean = term_clean(out.buf ? out.buf : "");
		arch = adb_abi_arch(str_trim(clean));
		free(clean);
	}
	error_clear();
	adb_devices_free(d, n);
	strbuf_release(&out);
	free(serial);
	return arch;
}

static bool
adb_fstests_from_appliance(const struct plan *plan)
{
	return true;
}

/* ---- probe, doctor ------------------------------------------------------------- */

/* The device's line for the wizard: "SERIAL (MODEL, PRODUCT)". */
static char *
device_words(const struct adb_device *d)
{
	if (d->model && d->product)
		return xasprintf("%s (%s, %s)", d->serial, d->model, d->product);
	if (d->model || d->product)
		return xasprintf("%s (%s)", d->serial, d->model ? d->model : d->product);
	return xstrdup(d->serial);
}

/* What fswb keeps in WORK on the device ("fswb's chroot and files in ... (700 MiB)"), or NULL. */
static char *
kept_words(const struct target *t, const char *serial)
{
	struct strbuf q = STRBUF_INIT, out = STRBUF_INIT;
	char *cmd, *words = NULL;
	unsigned long long kib;
	int st = -1;

	strbuf_adds(&q, "cd ");
	sq_quote(&q, t->work);
	strbuf_adds(&q, " 2>/dev/null && du -sk .");
	cmd = as_root(t, q.buf);
	if (dev_run(serial, cmd, NULL, 0, &out, NULL, &st, IO_MS) == OK && st == 0 && out.buf &&
	    out.buf[0] >= '0' && out.buf[0] <= '9' && sscanf(out.buf, "%llu", &kib) == 1) {
		char sz[32];

		words = xasprintf("fswb's chroot and files in %s on %s (%s)", t->work, serial,
				  format_size((uint64_t)kib * 1024, sz, sizeof(sz)));
	}
	error_clear();
	free(cmd);
	strbuf_release(&q);
	strbuf_release(&out);
	return words;
}

/*
 * What the device is, for the probe and doctor: its line, and why it cannot
 * be used (an error) or what the user should know.
 */
static enum status
inspect_device(const struct plan *plan, char **name, char **facts_line, char **caveat, char **kept)
{
	struct adb_device *d = NULL;
	const struct adb_device *one = NULL;
	struct strvec facts = STRVEC_INIT;
	struct target t = { 0 };
	size_t n = 0;
	uint64_t kib = 0;
	const char *arch,
		*want = arch_find(plan->kernel.arch) ? arch_find(plan->kernel.arch)->name
						     : "x86_64",
		*host = arch_find(NULL) ? arch_find(NULL)->name : "x86_64";
	enum status rc = list_devices(false, &d, &n);

	*name = *facts_line = *caveat = *kept = NULL;
	if (rc == OK)
		rc = pick_device(plan_backend_opt(plan, "serial") ? plan_backend_opt(plan, "serial")
								  : NULL,
				 d, n, &one);
	if (one)
		*name = device_words(one);
	if (rc == OK)
		rc = state_verdict(one);
	if (rc == OK)
		rc = check_features(one->serial);
	if (rc == OK)
		rc = find_root(&t, one->serial, &facts);
	if (rc == OK) {
		const char *abi = fact(&facts, "abi");

		arch = adb_abi_arch(abi);
		if (!arch)
			rc = error(
				ERR_UNSUPPORTED,
				"the device %s is %s: fswb makes chroots for arm64-v8a and x86_64 "
				"devices",
				one->serial, *abi ? abi : "of an unknown ABI");
		else if (strcmp(arch, want) && strcmp(want, host))
			rc = error(ERR_UNSUPPORTED,
				   "the device %s is %s, but --arch says %s: leave --arch out (the "
				   "appliance follows the device) or give --arch %s",
				   one->serial, abi, want, arch);
		else if (strcmp(arch, host) && !binfmt_runs(arch_find(arch)->machine))
			rc = error(
				ERR_UNSUPPORTED,
				"the device %s is %s: its appliance is built for %s, whose "
				"programs run here through qemu-user-static, and binfmt_misc has "
				"no qemu-%s: apt-get install qemu-user-static binfmt-support "
				"arch-test, then update-binfmts --enable qemu-%s (without "
				"systemd: mount -t binfmt_misc binfmt_misc "
				"/proc/sys/fs/binfmt_misc first)",
				one->serial, abi, arch, arch_find(arch)->machine,
				arch_find(arch)->machine);
		else if (strcmp(arch, host))
			*caveat =
				xasprintf("its appliance is built for %s through qemu-user-static "
					  "(slower, once)",
					  arch);
	}
	if (rc == OK) {
		char sz[32];

		t.work = (char *)(plan_backend_opt(plan, "workdir")
					  ? plan_backend_opt(plan, "workdir")
					  : WORK_DEFAULT);
		if (free_kib(&t, one->serial, &kib) != OK)
			error_clear();
		*facts_line = xasprintf("Android %s, %s, root %s, %s free for %s",
					*fact(&facts, "release") ? fact(&facts, "release") : "?",
					fact(&facts, "abi"),
					t.root == ROOT_ADBD ? "(adbd)" : "through su",
					format_size(kib * 1024, sz, sizeof(sz)), t.work);
		if (selinux_words(&facts)) {
			char *both = *caveat ? xasprintf("%s; %s", *caveat, selinux_words(&facts))
					     : xstrdup(selinux_words(&facts));

			free(*caveat);
			*caveat = both;
		}
		*kept = kept_words(&t, one->serial);
	}
	strvec_clear(&facts);
	adb_devices_free(d, n);
	return rc;
}

/* The devices the run would format: the named ones and /dev/fswb/test,scratch otherwise. */
static void
run_devices(const struct plan *plan, struct strvec *out)
{
	static const char *const roles[] = { "test", "scratch", NULL };

	for (size_t i = 0; roles[i]; i++) {
		const char *v = plan_backend_opt(plan, roles[i]);

		strvec_pushf(out, "%s%s", v ? "" : "/dev/fswb/", v ? v : roles[i]);
	}
	if (plan_backend_opt(plan, "pool"))
		strvec_split(out, plan_backend_opt(plan, "pool"), ",");
}

/* Several devices and no serial= named: the list to pick from, into out; false otherwise. */
static bool
probe_pick(const struct plan *plan, struct backend_probe *out)
{
	struct adb_device *d = NULL;
	struct strvec names = STRVEC_INIT;
	size_t n = 0;
	char *list;

	if (plan_backend_opt(plan, "serial") || list_devices(false, &d, &n) != OK || n < 2) {
		error_clear();
		adb_devices_free(d, n);
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		char *w = device_words(&d[i]);

		strvec_pushf(&names, "%s%s%s", w, strcmp(d[i].state, "device") ? ": " : "",
			     strcmp(d[i].state, "device") ? d[i].state : "");
		free(w);
	}
	list = strvec_join(&names, "; ");
	out->summary = xasprintf("not usable yet: %zu devices are attached, pick one", n);
	out->why = xasprintf("attached: %s", list);
	out->fix = xasprintf("o, then serial=%s (one of them; several: serial=A,B)", d[0].serial);
	free(list);
	strvec_clear(&names);
	adb_devices_free(d, n);
	return true;
}

static enum status
adb_probe(const struct plan *plan, struct backend_probe *out)
{
	char *name, *facts, *caveat, *kept;
	enum status rc;

	if (probe_pick(plan, out))
		return OK;
	rc = inspect_device(plan, &name, &facts, &caveat, &kept);
	out->kept = kept;

	if (rc != OK && server_down) {
		char *adb = path_which("adb", NULL, NULL);

		out->summary = xstrdup("not usable yet: no adb server is running");
		out->why = xstrdup(error_msg());
		out->fix = adb ? xstrdup("adb start-server (fswb also starts it when a run begins)")
			       : xstrdup("install adb (Debian: apt-get install adb)");
		free(adb);
	} else if (rc != OK) {
		out->summary = xasprintf("not usable: %s", name ? name : "no device");
		out->why = xstrdup(error_msg());
	} else {
		struct strvec devs = STRVEC_INIT, wipe = STRVEC_INIT, missing = STRVEC_INIT;

		run_devices(plan, &devs);
		if (plan_backend_opt(plan, "wipe"))
			strvec_split(&wipe, plan_backend_opt(plan, "wipe"), ",");
		for (size_t i = 0; i < devs.n; i++)
			if (!strvec_contains(&wipe, devs.v[i]))
				strvec_push(&missing, devs.v[i]);
		if (missing.n) {
			char *list = strvec_join(&devs, ","), *m = strvec_join(&missing, ", ");

			out->summary = xasprintf("not usable yet: %s, devices to confirm", name);
			out->confirm = xasprintf(
				"format %s on %s (/dev/fswb/ are loop files fswb makes in /data); "
				"the tests write gigabytes: they wear the device's flash",
				m, name);
			out->confirm_opt = xasprintf("wipe=%s", list);
			free(list);
			free(m);
		} else {
			out->usable = true;
			out->summary = xasprintf("ready: %s", name);
		}
		out->why = caveat ? xasprintf("%s; %s", facts, caveat) : xstrdup(facts);
		strvec_clear(&devs);
		strvec_clear(&wipe);
		strvec_clear(&missing);
	}
	error_clear();
	free(name);
	free(facts);
	free(caveat);
	return OK;
}

/* `fswb doctor --backend adb [-o serial=]`: the server, the devices, the chosen one. */
static size_t
adb_doctor(struct loop *loop, const struct backend_doctor_opts *o, struct backend_finding *out,
	   size_t max)
{
	const struct plan *plan =
		o->plan && o->plan->backend && !strcmp(o->plan->backend, "adb") ? o->plan : NULL;
	struct adb_device *d = NULL;
	size_t n = 0, k = 0;
	char *name, *facts, *caveat, *kept;

	if (!plan) {
		backend_finding_add(
			out, max, &k, FINDING_OK, "devices",
			xstrdup("not looked at; fswb doctor --backend adb [-o serial=SERIAL] "
				"checks "
				"them"),
			NULL);
		return k;
	}
	{
		bool arm = arch_find(NULL) && !strcmp(arch_find(NULL)->name, "arm64");
		const char *other = arm ? "x86_64" : "arm64", *qemu = arm ? "x86_64" : "aarch64";

		if (binfmt_runs(qemu))
			backend_finding_add(
				out, max, &k, FINDING_OK, "other chroots",
				xasprintf("%s appliances can be built here (qemu-user-static)",
					  other),
				NULL);
		else
			backend_finding_add(
				out, max, &k, FINDING_WARN, "other chroots",
				xasprintf(
					"%s devices need --arch %s, which runs %s programs through "
					"qemu-user-static: binfmt_misc has no qemu-%s here",
					other, other, other, qemu),
				xasprintf("apt-get install qemu-user-static binfmt-support "
					  "arch-test; "
					  "update-binfmts --enable qemu-%s (without systemd: mount "
					  "-t "
					  "binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc first)",
					  qemu));
	}
	if (list_devices(false, &d, &n) != OK) {
		backend_finding_add(out, max, &k, FINDING_MISSING, "adb server",
				    xstrdup(error_msg()), xstrdup("adb start-server"));
		error_clear();
		return k;
	}
	backend_finding_add(
		out, max, &k, FINDING_OK, "adb server",
		xasprintf("answers on port %u, %zu device%s", server_port(), n, n == 1 ? "" : "s"),
		NULL);
	for (size_t i = 0; i < n && i < 4; i++) {
		char *w = device_words(&d[i]);

		backend_finding_add(out, max, &k,
				    strcmp(d[i].state, "device") ? FINDING_WARN : FINDING_OK,
				    "device", xasprintf("%s: %s", w, d[i].state), NULL);
		free(w);
	}
	adb_devices_free(d, n);
	if (inspect_device(plan, &name, &facts, &caveat, &kept) != OK)
		backend_finding_add(out, max, &k, FINDING_MISSING, "test device",
				    xstrdup(error_msg()), NULL);
	else
		backend_finding_add(out, max, &k, caveat ? FINDING_WARN : FINDING_OK, "test device",
				    xasprintf("%s: %s%s%s", name, facts, caveat ? "; " : "",
					      caveat ? caveat : ""),
				    NULL);
	if (kept)
		backend_finding_add(out, max, &k, FINDING_OK, "kept", xasprintf("%s", kept),
				    xstrdup("fswb appliance rm --device SERIAL removes it"));
	error_clear();
	free(name);
	free(facts);
	free(caveat);
	free(kept);
	return k;
}

/*
 * The chroot and everything of fswb's in work on serial's device (NULL: the
 * only one); *used: its serial.
 */
static enum status
remove_work(const char *serial, const char *work, char **used)
{
	struct adb_session_priv s = { 0 };
	struct strvec facts = STRVEC_INIT;
	struct adb_device *d = NULL;
	const struct adb_device *one = NULL;
	struct strbuf err = STRBUF_INIT, q = STRBUF_INIT;
	size_t n = 0;
	int st = -1;
	enum status rc;

	*used = NULL;
	s.t.work = (char *)(work ? work : WORK_DEFAULT);
	if ((serial && adb_serial_check(serial) != OK) || dev_path_check(s.t.work) != OK)
		return error(ERR_INVALID, "a device serial and an absolute directory on it");
	rc = list_devices(true, &d, &n);
	if (rc == OK)
		rc = pick_device(serial, d, n, &one);
	if (rc == OK)
		rc = state_verdict(one);
	if (rc == OK)
		rc = check_features(one->serial);
	if (rc == OK)
		rc = find_root(&s.t, one->serial, &facts);
	if (rc != OK)
		goto out;
	*used = xstrdup(one->serial);
	strbuf_adds(&q, "[ -d ");
	sq_quote(&q, s.t.work);
	strbuf_adds(&q, " ]");
	{
		char *cmd = as_root(&s.t, q.buf);

		rc = dev_run(*used, cmd, NULL, 0, NULL, NULL, &st, IO_MS);
		free(cmd);
	}
	if (rc == OK && st)
		rc = error(ERR_NOTFOUND, "%s has nothing of fswb's in %s", *used, s.t.work);
	if (rc == OK)
		rc = push_helper(&s, *used);
	if (rc == OK)
		rc = helper(&s, *used, "remove", &err, &st, 10 * 60 * 1000);
	if (rc == OK && st == EXIT_BUSY)
		rc = error(ERR_BUSY, "an fswb run is using the device %s: wait for it", *used);
	else if (rc == OK && st)
		rc = error(ERR_IO, "cannot remove %s on %s: %s", s.t.work, *used, last_line(&err));
out:
	strvec_clear(&facts);
	strbuf_release(&err);
	strbuf_release(&q);
	adb_devices_free(d, n);
	return rc;
}

enum status
adb_remove_work(const char *serial, const char *work)
{
	char *used;
	enum status rc = remove_work(serial, work, &used);

	free(used);
	return rc;
}

/* The wizard's x: what fswb keeps on the plan's devices, removed. */
static enum status
adb_forget(const struct plan *plan, char **said)
{
	struct strvec serials = STRVEC_INIT, done = STRVEC_INIT;
	const char *work = plan_backend_opt(plan, "workdir");
	enum status rc = OK;

	if (plan_backend_opt(plan, "serial"))
		strvec_split(&serials, plan_backend_opt(plan, "serial"), ",");
	for (size_t i = 0; rc == OK && i < (serials.n ? serials.n : 1); i++) {
		char *used;

		rc = remove_work(serials.n ? serials.v[i] : NULL, work, &used);
		if (rc == OK)
			strvec_pushf(&done, "%s on %s", work ? work : WORK_DEFAULT, used);
		free(used);
	}
	if (rc == OK) {
		char *list = strvec_join(&done, ", ");

		*said = xasprintf("removed %s", list);
		free(list);
	}
	strvec_clear(&serials);
	strvec_clear(&done);
	return rc;
}

static const struct backend_program adb_programs[] = {
	{ "adb", "version", "talks to Android devices (the adb server)", false },
	{ "debugfs", "-V", "packs the appliance as a chroot for the device", false },
	{ NULL, NULL, NULL, false },
};

const struct backend_ops adb_backend = {
	.name = "adb",
	.description = "a rooted Android device over adb: its own kernel, fstests in a chroot",
	.caps = BACKEND_PARALLEL | BACKEND_WIPES,
	.options = adb_options,
	.programs = adb_programs,
	.probe = adb_probe,
	.start = adb_start,
	.send = agent_kept_send,
	.cancel = agent_kept_cancel,
	.disk_path = adb_disk_path,
	.layout = adb_layout,
	.release = adb_release,
	.boot_limit = adb_boot_limit,
	.silence_limit = adb_silence_limit,
	.notice = adb_notice,
	.prepare = agent_reach_prepare,
	.discard = agent_reach_discard,
	.machines = adb_machines,
	.fstests_from_appliance = adb_fstests_from_appliance,
	.machine_arch = adb_machine_arch,
	.doctor = adb_doctor,
	.forget = adb_forget,
};
