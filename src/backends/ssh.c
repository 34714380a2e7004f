/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The ssh backend: a prepared test machine reached over ssh (libssh; no
 * ssh program is run). The machine boots its own kernel and has fstests
 * built (-o fstests=DIR on it), or takes the appliance's: read out of the
 * image, packed once per appliance in fswb's cache and pushed over SFTP
 * into WORK/fstests-KEY, where a second run finds it (the engine makes the
 * appliance for that: fstests_from_appliance). fswb pushes its agent, runs it over one
 * exec channel with --stdio and reads the kernel log on a second one
 * (dmesg --follow-new, else journalctl -kf). TEST, SCRATCH and the other
 * disks are the machine's devices, named as options.
 *
 * The connection lives in a worker process (a fork of fswb, spawn's fn
 * mode), so that nothing of libssh's blocking calls (the handshake, a
 * reconnect that waits for a rebooting machine) ever runs on fswb's loop:
 * its stdin and stdout are the agent's control stream, its stderr says
 * what it does and why it ended, and one more pipe carries the kernel log.
 * The rest is agentpipe.c, shared with the stdio backend.
 *
 * Host keys are checked strictly against fswb's own known_hosts
 * (DATA/ssh/known_hosts; -o known-hosts=user adds ~/.ssh/known_hosts): an
 * unknown key is refused with its SHA256 fingerprint unless the user
 * confirmed that very key (-o hostkey=SHA256:..., which the wizard sets
 * once the user typed yes to the fingerprint it showed) or any new key
 * (-o hostkey=accept-new, --accept-new-host-key); a changed key is always
 * refused. Credentials are never
 * printed or logged: a key is named by its path, never shown.
 *
 * Before the agent starts, the machine is inspected (a script on the exec
 * channel's stdin): fstests' check is there, the tools the configuration
 * needs are installed (else the install command for its distribution), and
 * every device exists, is not mounted, is not swap and is not held by
 * another device (LVM, md), and the user named it in -o wipe= (what each
 * holds now is in the message).
 *
 * A machine that went away (a panic, a reboot, a dropped connection) ends
 * the session; the engine records the test as crashed and starts another,
 * whose worker connects again as soon as the machine is back, within the
 * boot limit. Several hosts (-o host=a,b,c) are one machine per shard.
 */
#include <errno.h>
#include <fcntl.h>
#include <libssh/libssh.h>
#include <libssh/sftp.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "backends/agentpipe.h"
#include "backends/ssh_int.h"
#include "core/paths.h"

#define BOOT_DEFAULT	   300 /* a reboot of real hardware takes minutes */
#define QUIET_DEFAULT	   120
#define CONNECT_TIMEOUT	   10
#define RETRY_MS	   3000
#define FIRST_TRY_S	   15 /* a machine not reached yet in this run: a typo, not a reboot */
#define WORK_DEFAULT	   "/var/tmp/fswb"
#define LOCK_WAIT	   60
#define EXIT_LOCKED	   75
#define INSPECT_OUT_MAX	   (64u << 10)
#define KEEPALIVE_EVERY_MS 10000
/* the agent beats every 5 s: this long without a byte, the machine is asked to answer */
#define QUIET_PROBE_MS 20000
#define CHUNK	       32768

/* Worker exit codes, for the parent's messages (the worker says why on stderr). */
enum {
	WK_OK = 0,
	WK_FAIL = 1,	/* refused or broken: said on stderr */
	WK_LOST = 3,	/* the connection went away */
	WK_STOPPED = 4, /* SIGTERM from fswb */
};

/* Where and how to connect; every string owned. */
struct target {
	char *host, *user, *key, *known_hosts;
	char *hostkey_fp; /* the SHA256 fingerprint the user confirmed, or NULL */
	unsigned port;
	bool user_known_hosts, accept_new, use_config;
};

struct ssh_session_priv {
	struct agent_kept kept; /* first: agent_kept_send and _cancel take the session */
	struct target t;
	char *work, *run_dir, *fstests, *job_dir, *mnt_dir, *results_dir;
	char *agent, *agent_remote; /* fswb-agent here, and where it goes on the machine */
	char *appliance, *fskey;    /* fstests from this appliance image (its key), or NULL */
	struct strvec disks;	    /* the device of each spec disk, "" when the machine has none */
	struct strvec wipe;	    /* the devices the user named in wipe= */
	char *fstyp;
	unsigned boot, silence;
	struct session_layout layout;
	char *notice;
};

/* ---- options ---------------------------------------------------------------- */

static bool
plain_word(const char *v, const char *extra)
{
	if (!v || !*v || *v == '-')
		return false;
	for (const char *p = v; *p; p++)
		if (!(*p >= 'a' && *p <= 'z') && !(*p >= 'A' && *p <= 'Z') &&
		    !(*p >= '0' && *p <= '9') && !strchr(extra, *p))
			return false;
	return true;
}

typedef const char *opt_fn(const void *src, const char *key);

static const char *
plan_opt(const void *src, const char *key)
{
	return plan_backend_opt(src, key);
}

static const char *
spec_opt(const void *src, const char *key)
{
	return session_spec_opt(src, key);
}

/* Each host once, each a host name or address. */
static enum status
hosts_valid(const struct strvec *v, const char *where)
{
	if (!v->n)
		return error(ERR_INVALID, "name the test machine: a host name or address%s", where);
	for (size_t i = 0; i < v->n; i++) {
		if (!plain_word(v->v[i], ".-_:"))
			return error(
				ERR_INVALID,
				"'%s'%s is not a host name or address (letters, digits, . - _ :)",
				v->v[i], where);
		for (size_t j = 0; j < i; j++)
			if (!strcmp(v->v[i], v->v[j]))
				return error(ERR_INVALID,
					     "'%s'%s is named twice: each machine runs one session "
					     "(its work directory is locked)",
					     v->v[i], where);
	}
	return OK;
}

static enum status
hosts_check(const char *value)
{
	struct strvec v = STRVEC_INIT;
	enum status rc;

	strvec_split(&v, value, ",");
	rc = hosts_valid(&v, "");
	strvec_clear(&v);
	return rc;
}

#define HOSTS_FILE_MAX (64u << 10)

/* The machines of a hosts file: one per line; blank lines and # comments are skipped. */
static enum status
hosts_file_read(const char *path, struct strvec *out)
{
	char *text = NULL, *where;
	size_t len;
	struct strvec lines = STRVEC_INIT;
	enum status rc = read_file(path, HOSTS_FILE_MAX, &text, &len);

	if (rc != OK)
		return rc;
	strvec_split(&lines, text, "\n");
	for (size_t i = 0; i < lines.n; i++) {
		char *l = lines.v[i], *hash = strchr(l, '#'), *end;

		if (hash)
			*hash = 0;
		while (*l == ' ' || *l == '\t')
			l++;
		end = l + strlen(l);
		while (end > l && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
			*--end = 0;
		if (*l)
			strvec_push(out, l);
	}
	where = xasprintf(" (in %s)", path);
	rc = hosts_valid(out, where);
	free(where);
	strvec_clear(&lines);
	free(text);
	return rc;
}

static enum status
hosts_file_check(const char *value)
{
	struct strvec v = STRVEC_INIT;
	enum status rc = hosts_file_read(value, &v);

	strvec_clear(&v);
	return rc;
}

/* The machines the options name: host=a,b,c or hosts=FILE. */
static enum status
host_list(opt_fn *opt, const void *src, struct strvec *out)
{
	const char *hosts = opt(src, "host"), *file = opt(src, "hosts");

	if (hosts && file)
		return error(ERR_INVALID, "give the machines either as -o host=A,B or in a file "
					  "with -o hosts=FILE, not both");
	if (file)
		return hosts_file_read(file, out);
	if (hosts)
		strvec_split(out, hosts, ",");
	if (!out->n)
		return error(ERR_INVALID, "the ssh backend needs the test machine: -o host=HOST");
	return OK;
}

static enum status
port_check(const char *value)
{
	char *end;
	unsigned long n = strtoul(value, &end, 10);

	if (!*value || *end || n < 1 || n > 65535)
		return error(ERR_INVALID, "give a TCP port, 1 to 65535");
	return OK;
}

static enum status
user_check(const char *value)
{
	return plain_word(value, "._-")
		       ? OK
		       : error(ERR_INVALID, "give a user name (letters, digits, . _ -)");
}

static enum status
key_check(const char *value)
{
	if (access(value, R_OK))
		return error(ERR_INVALID, "no readable key file there: give the path of a private "
					  "key (its .pub is not enough)");
	return OK;
}

static enum status
yes_no_check(const char *value)
{
	return !strcmp(value, "yes") || !strcmp(value, "no") ? OK
							     : error(ERR_INVALID, "give yes or no");
}

static enum status
hostkey_check(const char *value)
{
	if (!strcmp(value, "strict") || !strcmp(value, "accept-new") ||
	    (!strncmp(value, "SHA256:", 7) && strlen(value) > 20 && plain_word(value + 7, "+/=")))
		return OK;
	return error(ERR_INVALID, "give strict (known keys only), accept-new (an unknown key "
				  "is added; a changed one is still refused) or the SHA256:... "
				  "fingerprint of the one key to add");
}

static enum status
known_check(const char *value)
{
	return !strcmp(value, "fswb") || !strcmp(value, "user")
		       ? OK
		       : error(ERR_INVALID, "give fswb (fswb's own known_hosts) or user (also "
					    "~/.ssh/known_hosts)");
}

/* An absolute path on the machine, in characters no shell or option reads twice. */
static enum status
remote_dir_check(const char *value)
{
	if (value[0] != '/' || strstr(value, "/../") || !plain_word(value + 1, "/._+-") ||
	    strstr(value, "//"))
		return error(ERR_INVALID, "give an absolute path on the test machine (letters, "
					  "digits, / . _ + -)");
	return OK;
}

static enum status
dev_check(const char *value)
{
	if (strncmp(value, "/dev/", 5) || strstr(value, "..") || !plain_word(value + 5, "/._+:-"))
		return error(ERR_INVALID, "give a device of the test machine: /dev/...");
	return OK;
}

static enum status
devs_check(const char *value)
{
	struct strvec v = STRVEC_INIT;
	enum status rc = OK;

	strvec_split(&v, value, ",");
	if (!v.n)
		rc = error(ERR_INVALID, "give one or more devices: /dev/X[,/dev/Y...]");
	for (size_t i = 0; rc == OK && i < v.n; i++)
		rc = dev_check(v.v[i]);
	strvec_clear(&v);
	return rc;
}

static const struct backend_option ssh_options[] = {
	{ "host", "HOST[,HOST...]", hosts_check }, /* the machines; one per shard */
	{ "hosts", "FILE", hosts_file_check },	   /* or in a file, one a line */
	{ "port", "PORT", port_check },		   /* 22 */
	{ "user", "NAME", user_check },		   /* root; else sudo -n on the machine */
	{ "key", "FILE", key_check },		   /* else ssh-agent, then ~/.ssh's keys */
	{ "hostkey", "strict|accept-new|SHA256:...", hostkey_check }, /* strict */
	{ "known-hosts", "fswb|user", known_check }, /* fswb: fswb's own file only */
	{ "ssh-config", "yes|no", yes_no_check },    /* no: ~/.ssh/config is not read */
	{ "fstests", "DIR", remote_dir_check }, /* fstests on the machine, else the appliance's */
	{ "workdir", "DIR", remote_dir_check }, /* /var/tmp/fswb on the machine */
	{ "test", "DEV", dev_check },
	{ "scratch", "DEV", dev_check },
	{ "pool", "DEV,DEV...", devs_check },
	{ "logdev", "DEV", dev_check },
	{ "rtdev", "DEV", dev_check },
	{ "test_logdev", "DEV", dev_check },
	{ "test_rtdev", "DEV", dev_check },
	{ "logwrites", "DEV", dev_check },
	{ "wipe", "DEV[,DEV...]", devs_check },		  /* the user's confirmation */
	{ "boot", "SECONDS", backend_option_seconds },	  /* to reconnect after a reboot */
	{ "silence", "SECONDS", backend_option_seconds }, /* quiet this long: hung */
	{ NULL, NULL, NULL },
};

/* ---- the target ------------------------------------------------------------- */

static void
target_release(struct target *t)
{
	free(t->host);
	free(t->user);
	free(t->key);
	free(t->known_hosts);
	free(t->hostkey_fp);
	memset(t, 0, sizeof(*t));
}

/* The target of machine slot (its host in host=a,b,c, round robin). */
static enum status
target_make(opt_fn *opt, const void *src, unsigned slot, struct target *t)
{
	struct strvec hv = STRVEC_INIT;
	const char *v;
	char *dir = NULL;
	enum status rc;

	memset(t, 0, sizeof(*t));
	rc = host_list(opt, src, &hv);
	if (rc != OK) {
		strvec_clear(&hv);
		return rc;
	}
	t->host = xstrdup(hv.v[slot % hv.n]);
	strvec_clear(&hv);
	t->port = (v = opt(src, "port")) ? (unsigned)strtoul(v, NULL, 10) : 22;
	t->user = xstrdup((v = opt(src, "user")) ? v : "root");
	t->key = (v = opt(src, "key")) ? xstrdup(v) : NULL;
	t->accept_new = (v = opt(src, "hostkey")) && !strcmp(v, "accept-new");
	t->hostkey_fp = v && !strncmp(v, "SHA256:", 7) ? xstrdup(v) : NULL;
	t->user_known_hosts = (v = opt(src, "known-hosts")) && !strcmp(v, "user");
	t->use_config = (v = opt(src, "ssh-config")) && !strcmp(v, "yes");
	rc = fswb_dir_make(DIR_DATA, "ssh", &dir);
	if (rc != OK) {
		target_release(t);
		return rc;
	}
	t->known_hosts = path_join(dir, "known_hosts");
	free(dir);
	return OK;
}

/* "root@host:22", for messages. */
static char *
target_name(const struct target *t)
{
	return xasprintf("%s@%s:%u", t->user, t->host, t->port);
}

/* ---- libssh, in a worker or a probe ------------------------------------------ */

static char *
fingerprint(ssh_session ss, char **type)
{
	ssh_key key = NULL;
	unsigned char *hash = NULL;
	size_t len = 0;
	char *fp = NULL, *out;

	*type = NULL;
	if (ssh_get_server_publickey(ss, &key) != SSH_OK)
		return xstrdup("(no key)");
	*type = xstrdup(ssh_key_type_to_char(ssh_key_type(key)));
	if (ssh_get_publickey_hash(key, SSH_PUBLICKEY_HASH_SHA256, &hash, &len) == 0)
		fp = ssh_get_fingerprint_hash(SSH_PUBLICKEY_HASH_SHA256, hash, len);
	out = xstrdup(fp ? fp : "(unknown)");
	ssh_string_free_char(fp);
	ssh_clean_pubkey_hash(&hash);
	ssh_key_free(key);
	return out;
}

/* An unknown host key, for the user to confirm (the probe asks). */
struct seen_key {
	char *type, *fp;
};

/* Host key check; the refusals say what to do. An unknown key goes to *seen (may be NULL). */
static enum status
check_host_key(ssh_session ss, const struct target *t, struct seen_key *seen)
{
	char *type = NULL, *fp = fingerprint(ss, &type), *name = target_name(t);
	char hostspec[300];
	enum status rc = OK;

	if (t->port == 22)
		snprintf(hostspec, sizeof(hostspec), "%s", t->host);
	else
		snprintf(hostspec, sizeof(hostspec), "[%s]:%u", t->host, t->port);
	switch (ssh_session_is_known_server(ss)) {
	case SSH_KNOWN_HOSTS_OK:
		break;
	case SSH_KNOWN_HOSTS_CHANGED:
	case SSH_KNOWN_HOSTS_OTHER:
		rc = error(ERR_INVALID,
			   "REFUSED: the host key of %s has CHANGED: it now shows %s key %s, "
			   "which is not the key recorded in %s. Either the machine was "
			   "reinstalled or someone is between you and it. Check the key on the "
			   "machine (ssh-keygen -lf /etc/ssh/ssh_host_%s_key.pub); only if it "
			   "matches, remove the old line (ssh-keygen -R '%s' -f %s) and run again",
			   name, type ? type : "a", fp, t->known_hosts,
			   type && !strncmp(type, "ssh-", 4) ? type + 4 : "ed25519", hostspec,
			   t->known_hosts);
		break;
	case SSH_KNOWN_HOSTS_NOT_FOUND:
	case SSH_KNOWN_HOSTS_UNKNOWN:
		if (t->hostkey_fp && strcmp(t->hostkey_fp, fp)) {
			rc = error(ERR_INVALID,
				   "REFUSED: the host key of %s is %s key %s, not the %s that was "
				   "confirmed: check the machine before you trust it",
				   name, type ? type : "a", fp, t->hostkey_fp);
			break;
		}
		if (t->accept_new || t->hostkey_fp) {
			if (ssh_session_update_known_hosts(ss) != SSH_OK)
				rc = error(ERR_IO, "cannot record the host key of %s in %s: %s",
					   name, t->known_hosts, ssh_get_error(ss));
			break;
		}
		rc = error(ERR_INVALID,
			   "the host key of %s is not known: %s key %s. Compare it with the "
			   "machine's own (ssh-keygen -lf /etc/ssh/ssh_host_%s_key.pub on it); if "
			   "it is the same, accept it in fswb's wizard or run again with "
			   "--accept-new-host-key (it is then kept in %s)",
			   name, type ? type : "a", fp,
			   type && !strncmp(type, "ssh-", 4) ? type + 4 : "ed25519",
			   t->known_hosts);
		if (seen) {
			seen->type = type ? xstrdup(type) : NULL;
			seen->fp = xstrdup(fp);
		}
		break;
	default:
		rc = error(ERR_IO, "cannot check the host key of %s against %s: %s", name,
			   t->known_hosts, ssh_get_error(ss));
		break;
	}
	free(type);
	free(fp);
	free(name);
	return rc;
}

static enum status
authenticate(ssh_session ss, const struct target *t)
{
	char *name = target_name(t);
	enum status rc = OK;
	int r = SSH_AUTH_DENIED;

	if (t->key) {
		ssh_key pk = NULL;

		if (ssh_pki_import_privkey_file(t->key, NULL, NULL, NULL, &pk) != SSH_OK) {
			rc = error(
				ERR_INVALID,
				"cannot use the key %s: not a private key, or protected by a "
				"passphrase (load such a key into ssh-agent and leave out -o key)",
				t->key);
			goto out;
		}
		r = ssh_userauth_publickey(ss, NULL, pk);
		ssh_key_free(pk);
	} else {
		if (getenv("SSH_AUTH_SOCK"))
			r = ssh_userauth_agent(ss, NULL);
		if (r != SSH_AUTH_SUCCESS)
			r = ssh_userauth_publickey_auto(ss, NULL, NULL);
	}
	if (r != SSH_AUTH_SUCCESS)
		rc = error(
			ERR_INVALID,
			"%s refused the key %s%s: add its public key to ~%s/.ssh/authorized_keys "
			"on the machine, or give the right one with -o key=FILE",
			name, t->key ? t->key : "(ssh-agent and ~/.ssh)", "", t->user);
out:
	free(name);
	return rc;
}

/* TCP keepalives and a user timeout: a machine that vanished is seen in about half a minute. */
static void
tcp_watch(ssh_session ss)
{
	int fd = ssh_get_fd(ss), one = 1, idle = 10, intvl = 5, cnt = 4;
	unsigned user_timeout = 30000;

	if (fd < 0)
		return;
	setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
	setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout, sizeof(user_timeout));
}

/*
 * Connect, check the host key, log in. *network says the failure was the
 * network's (worth trying again while a machine reboots), not a refusal.
 */
/* How far ssh_open got: the doctor's findings. */
enum open_stage {
	STAGE_CONNECT,
	STAGE_HOSTKEY,
	STAGE_LOGIN,
	STAGE_DONE,
};

static enum status
ssh_open_staged(const struct target *t, ssh_session *out, bool *network, struct seen_key *seen,
		enum open_stage *stage)
{
	ssh_session ss = ssh_new();
	long timeout = CONNECT_TIMEOUT;
	int nodelay = 1, verbosity = SSH_LOG_NOLOG;
	bool yes = true, no = false;
	char *user_kh = NULL, *name = target_name(t);
	enum status rc = OK;

	*out = NULL;
	*network = false;
	*stage = STAGE_CONNECT;
	if (!ss) {
		free(name);
		return error(ERR_NOMEM, "cannot make an ssh session");
	}
	user_kh = getenv("HOME") ? path_join(getenv("HOME"), ".ssh/known_hosts") : NULL;
	ssh_options_set(ss, SSH_OPTIONS_LOG_VERBOSITY, &verbosity);
	ssh_options_set(ss, SSH_OPTIONS_PROCESS_CONFIG, t->use_config ? &yes : &no);
	ssh_options_set(ss, SSH_OPTIONS_HOST, t->host);
	if (t->use_config)
		ssh_options_parse_config(ss, NULL);
	ssh_options_set(ss, SSH_OPTIONS_PORT, &t->port);
	ssh_options_set(ss, SSH_OPTIONS_USER, t->user);
	ssh_options_set(ss, SSH_OPTIONS_TIMEOUT, &timeout);
	ssh_options_set(ss, SSH_OPTIONS_NODELAY, &nodelay);
	ssh_options_set(ss, SSH_OPTIONS_KNOWNHOSTS, t->known_hosts);
	ssh_options_set(ss, SSH_OPTIONS_GLOBAL_KNOWNHOSTS,
			t->user_known_hosts && user_kh ? user_kh : "/dev/null");
	if (ssh_connect(ss) != SSH_OK) {
		*network = true;
		rc = error(ERR_IO, "cannot reach %s: %s", name, ssh_get_error(ss));
		goto out;
	}
	tcp_watch(ss);
	*stage = STAGE_HOSTKEY;
	rc = check_host_key(ss, t, seen);
	if (rc == OK) {
		*stage = STAGE_LOGIN;
		rc = authenticate(ss, t);
	}
	if (rc == OK)
		*stage = STAGE_DONE;
out:
	free(user_kh);
	free(name);
	if (rc != OK) {
		ssh_disconnect(ss);
		ssh_free(ss);
		return rc;
	}
	*out = ss;
	return OK;
}

static enum status
ssh_open(const struct target *t, ssh_session *out, bool *network, struct seen_key *seen)
{
	enum open_stage stage = STAGE_CONNECT;

	return ssh_open_staged(t, out, network, seen, &stage);
}

static void
ssh_close(ssh_session ss)
{
	if (!ss)
		return;
	ssh_disconnect(ss);
	ssh_free(ss);
}

/* cmd run as root on the machine: as it is for root, under sudo -n for others. */
static char *
as_root(const struct target *t, const char *cmd)
{
	struct strbuf sb = STRBUF_INIT;

	if (!strcmp(t->user, "root"))
		return xstrdup(cmd);
	strbuf_adds(&sb, "sudo -n sh -c ");
	sq_quote(&sb, cmd);
	return strbuf_detach(&sb);
}

/*
 * Run cmd on the machine with input on its stdin; its stdout (at most
 * INSPECT_OUT_MAX) into out, its exit status into *status.
 */
static enum status
run_remote(ssh_session ss, const char *cmd, const char *input, size_t inlen, struct strbuf *out,
	   int *status)
{
	ssh_channel ch = ssh_channel_new(ss);
	char buf[CHUNK];
	enum status rc = OK;
	int n;

	*status = -1;
	if (!ch || ssh_channel_open_session(ch) != SSH_OK ||
	    ssh_channel_request_exec(ch, cmd) != SSH_OK) {
		rc = error(ERR_IO, "cannot run a command on the test machine: %s",
			   ssh_get_error(ss));
		goto out;
	}
	while (inlen) {
		n = ssh_channel_write(ch, input, (uint32_t)(inlen > CHUNK ? CHUNK : inlen));
		if (n <= 0) {
			rc = error(ERR_IO, "the test machine stopped reading: %s",
				   ssh_get_error(ss));
			goto out;
		}
		input += n;
		inlen -= (size_t)n;
	}
	ssh_channel_send_eof(ch);
	while ((n = ssh_channel_read(ch, buf, sizeof(buf), 0)) > 0)
		if (out && out->len < INSPECT_OUT_MAX)
			strbuf_add(out, buf, (size_t)n);
	while (ssh_channel_read(ch, buf, sizeof(buf), 1) > 0)
		; /* its stderr is not ours to show */
	if (n < 0) {
		rc = error(ERR_IO, "the connection broke: %s", ssh_get_error(ss));
		goto out;
	}
	*status = ssh_channel_get_exit_status(ch);
out:
	if (ch) {
		ssh_channel_close(ch);
		ssh_channel_free(ch);
	}
	return rc;
}

/* ---- the inspection -------------------------------------------------------- */

/*
 * What the machine has, one line each: OS ID ID_LIKE; NOCHECK; MISSING
 * TOOL; DEV path size fstype label mountpoint swap holders (tabs). Run as
 * root with the fstests dir, the work dir, the tools and the devices as
 * arguments; it makes the work dir.
 */
static const char inspect_script[] =
	"set -u\n"
	"fst=$1 work=$2 tools=$3\n"
	"shift 3\n"
	"id=unknown like=\n"
	"if [ -r /etc/os-release ]; then\n"
	"  id=$(. /etc/os-release; echo \"${ID:-unknown}\")\n"
	"  like=$(. /etc/os-release; echo \"${ID_LIKE:-}\")\n"
	"fi\n"
	"printf 'OS\\t%s\\t%s\\n' \"$id\" \"$like\"\n"
	"[ \"$fst\" = - ] || [ -x \"$fst/check\" ] || echo NOCHECK\n"
	"for t in $tools; do command -v \"$t\" >/dev/null 2>&1 || printf 'MISSING\\t%s\\n' \"$t\"; "
	"done\n"
	"[ \"$work\" = - ] || { mkdir -p \"$work\" && chmod 0700 \"$work\"; } || echo NOWORK\n"
	"for d; do\n"
	"  if [ ! -b \"$d\" ]; then printf 'DEV\\t%s\\tnone\\n' \"$d\"; continue; fi\n"
	"  size=$(blockdev --getsize64 \"$d\" 2>/dev/null || echo 0)\n"
	"  fs=$(blkid -p -o value -s TYPE \"$d\" 2>/dev/null)\n"
	"  label=$(blkid -p -o value -s LABEL \"$d\" 2>/dev/null)\n"
	"  real=$(readlink -f \"$d\")\n"
	"  mnt=$(lsblk -nro MOUNTPOINT \"$real\" 2>/dev/null | grep -v '^$' | head -n 1)\n"
	"  [ -n \"$mnt\" ] || mnt=$(awk -v d=\"$real\" '$1 == d { print $2; exit }' /proc/mounts)\n"
	"  swap=$(awk -v d=\"$real\" 'NR > 1 && $1 == d { print \"yes\"; exit }' /proc/swaps)\n"
	"  b=${real##*/}\n"
	"  hold=$(ls /sys/class/block/\"$b\"/holders 2>/dev/null | tr '\\n' ' ')\n"
	"  printf 'DEV\\t%s\\t%s\\t%s\\t%s\\t%s\\t%s\\t%s\\n' \"$d\" \"$size\" \"${fs:--}\" "
	"\"${label:--}\" \"${mnt:--}\" \"${swap:--}\" \"${hold:--}\"\n"
	"done\n";

/* The package that has a tool, by distribution family. */
static const char *
package_of(const char *tool, bool rpm)
{
	static const struct {
		const char *tool, *deb, *rpm;
	} map[] = {
		{ "xfs_io", "xfsprogs", "xfsprogs" },
		{ "mkfs.xfs", "xfsprogs", "xfsprogs" },
		{ "mkfs.ext4", "e2fsprogs", "e2fsprogs" },
		{ "mkfs.ext3", "e2fsprogs", "e2fsprogs" },
		{ "mkfs.ext2", "e2fsprogs", "e2fsprogs" },
		{ "mkfs.btrfs", "btrfs-progs", "btrfs-progs" },
		{ "mkfs.f2fs", "f2fs-tools", "f2fs-tools" },
		{ "mkfs.exfat", "exfatprogs", "exfatprogs" },
		{ "mkfs.vfat", "dosfstools", "dosfstools" },
		{ "mkfs.udf", "udftools", "udftools" },
		{ "awk", "gawk", "gawk" },
		{ "bash", "bash", "bash" },
		{ "blkid", "util-linux", "util-linux" },
		{ "lsblk", "util-linux", "util-linux" },
		{ "blockdev", "util-linux", "util-linux" },
		{ "flock", "util-linux", "util-linux" },
		{ "dmesg", "util-linux", "util-linux" },
		{ "tar", "tar", "tar" },
		{ "gzip", "gzip", "gzip" },
	};

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(map[i].tool, tool))
			return rpm ? map[i].rpm : map[i].deb;
	return tool;
}

static char *
install_command(const char *id, const char *like, const struct strvec *pkgs)
{
	struct strbuf sb = STRBUF_INIT;
	char *all = strvec_join(pkgs, " ");
	char fam[256];

	snprintf(fam, sizeof(fam), " %s %s ", id, like);
	if (strstr(fam, " debian ") || strstr(fam, " ubuntu "))
		strbuf_addf(&sb, "apt-get install %s", all);
	else if (strstr(fam, " fedora ") || strstr(fam, " rhel ") || strstr(fam, " centos "))
		strbuf_addf(&sb, "dnf install %s", all);
	else if (strstr(fam, " suse ") || strstr(fam, " opensuse "))
		strbuf_addf(&sb, "zypper install %s", all);
	else if (strstr(fam, " arch "))
		strbuf_addf(&sb, "pacman -S %s", all);
	else if (strstr(fam, " alpine "))
		strbuf_addf(&sb, "apk add %s", all);
	else
		strbuf_addf(&sb, "install %s with the machine's package manager", all);
	free(all);
	return strbuf_detach(&sb);
}

static void
human_size(const char *bytes, char *out, size_t len)
{
	double v = strtod(bytes, NULL);
	const char *unit[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	size_t u = 0;

	while (v >= 1024 && u < 5) {
		v /= 1024;
		u++;
	}
	snprintf(out, len, u ? "%.1f %s" : "%.0f %s", v, unit[u]);
}

enum status
ssh_inspect_verdict(const char *text, const struct ssh_machine *m, struct ssh_verdict *v)
{
	struct strvec lines = STRVEC_INIT, missing = STRVEC_INIT, pkgs = STRVEC_INIT;
	struct strvec unnamed = STRVEC_INIT, unnamed_devs = STRVEC_INIT;
	struct strbuf why = STRBUF_INIT;
	char *id = xstrdup("unknown"), *like = xstrdup("");
	bool rpm = false;
	enum status rc = OK;

	strvec_split(&lines, text, "\n");
	for (size_t i = 0; i < lines.n; i++) {
		struct strvec f = STRVEC_INIT;
		char *clean = term_clean(lines.v[i]);

		strvec_split(&f, clean, "\t");
		free(clean);
		if (f.n >= 2 && !strcmp(f.v[0], "OS")) {
			free(id);
			free(like);
			id = xstrdup(f.v[1]);
			like = xstrdup(f.n > 2 ? f.v[2] : "");
		} else if (f.n == 1 && !strcmp(f.v[0], "NOCHECK")) {
			strbuf_addf(
				&why,
				"%sthere is no fstests in %s on %s (no executable check): "
				"build fstests there, or give its directory with -o fstests=DIR",
				why.len ? "; " : "", m->fstests, m->name);
		} else if (f.n == 1 && !strcmp(f.v[0], "NOWORK")) {
			strbuf_addf(&why, "%scannot make %s on %s: give a writable -o workdir=DIR",
				    why.len ? "; " : "", m->work, m->name);
		} else if (f.n == 2 && !strcmp(f.v[0], "MISSING")) {
			strvec_push(&missing, f.v[1]);
		} else if (f.n >= 3 && !strcmp(f.v[0], "DEV")) {
			const char *dev = f.v[1];
			bool named = strvec_contains(m->wipe, dev);
			char size[32], *holds;

			if (f.n < 8) {
				strbuf_addf(&why, "%s%s is not a block device on %s",
					    why.len ? "; " : "", dev, m->name);
				strvec_clear(&f);
				continue;
			}
			human_size(f.v[2], size, sizeof(size));
			holds = xasprintf("%s (%s, %s%s%s%s%s%s)", dev, size,
					  strcmp(f.v[3], "-") ? f.v[3] : "no file system",
					  strcmp(f.v[4], "-") ? " labelled '" : "",
					  strcmp(f.v[4], "-") ? f.v[4] : "",
					  strcmp(f.v[4], "-") ? "'" : "",
					  strcmp(f.v[5], "-") ? ", mounted on " : "",
					  strcmp(f.v[5], "-") ? f.v[5] : "");
			if (!strcmp(f.v[5], "/"))
				strbuf_addf(&why, "%s%s holds the root file system of %s: never",
					    why.len ? "; " : "", holds, m->name);
			else if (strcmp(f.v[5], "-"))
				strbuf_addf(&why,
					    "%s%s is mounted: unmount it first, or name another "
					    "device",
					    why.len ? "; " : "", holds);
			else if (!strcmp(f.v[6], "yes"))
				strbuf_addf(&why, "%s%s is in use as swap: swapoff it first",
					    why.len ? "; " : "", holds);
			else if (strcmp(f.v[7], "-"))
				strbuf_addf(&why,
					    "%s%s is in use by %s (LVM, md or dm): free it first",
					    why.len ? "; " : "", holds, f.v[7]);
			else if (!named)
				strvec_push(&unnamed, holds);
			if (!named)
				strvec_push(&unnamed_devs, dev);
			free(holds);
		}
		strvec_clear(&f);
	}
	rpm = strstr(id, "fedora") || strstr(id, "rhel") || strstr(id, "centos") ||
	      strstr(like, "fedora") || strstr(like, "rhel") || strstr(like, "suse") ||
	      strstr(id, "suse");
	for (size_t i = 0; i < missing.n; i++) {
		const char *p = package_of(missing.v[i], rpm);

		if (!strvec_contains(&pkgs, p))
			strvec_push(&pkgs, p);
	}
	if (v) {
		v->blocked = why.len || missing.n;
		strvec_copy(&v->unconfirmed, &unnamed_devs);
		strvec_copy(&v->holds, &unnamed);
	}
	if (unnamed.n) {
		char *list = strvec_join(&unnamed, ", "), *devs = strvec_join(&unnamed_devs, ",");

		strbuf_addf(&why,
			    "%sthe tests format %s on %s, destroying what %s: if that is what you "
			    "want, confirm with --yes-destroy %s (-o wipe=%s)",
			    why.len ? "; " : "", list, m->name,
			    unnamed.n > 1 ? "they hold" : "it holds", devs, devs);
		free(list);
		free(devs);
	}
	if (missing.n) {
		char *tools = strvec_join(&missing, ", "), *cmd = install_command(id, like, &pkgs);

		strbuf_addf(&why, "%s%s lacks %s, which the tests need: %s", why.len ? "; " : "",
			    m->name, tools, cmd);
		free(tools);
		free(cmd);
	}
	if (why.len)
		rc = error(ERR_INVALID, "%s", why.buf);
	free(id);
	free(like);
	strvec_clear(&lines);
	strvec_clear(&missing);
	strvec_clear(&pkgs);
	strvec_clear(&unnamed);
	strvec_clear(&unnamed_devs);
	strbuf_release(&why);
	return rc;
}

/* ---- the worker -------------------------------------------------------------- */

/*
 * Connect, trying again while the network says no: for the boot limit when
 * the machine was reached before in this run (it is rebooting), else for
 * FIRST_TRY_S only (a wrong host or port is said at once).
 */
static int
connect_until(const struct ssh_session_priv *s, ssh_session *ss)
{
	unsigned limit = s->kept.reconnect ? s->boot : FIRST_TRY_S;
	uint64_t until = loop_now_ms() + (uint64_t)limit * 1000;
	char *name = target_name(&s->t);
	bool network, said = false;
	enum status rc;

	for (;;) {
		rc = ssh_open(&s->t, ss, &network, NULL);
		if (rc == OK)
			break;
		if (!network || agent_worker_stop || loop_now_ms() + RETRY_MS >= until) {
			if (network && s->kept.reconnect)
				agent_worker_say("%s (tried for %u s: the -o boot=SECONDS limit)",
						 error_msg(), s->boot);
			else if (network)
				agent_worker_say("%s (tried for %u s): check that it is up and its "
						 "sshd listens "
						 "there (-o port=PORT)",
						 error_msg(), limit);
			else
				agent_worker_say("%s", error_msg());
			free(name);
			return agent_worker_stop ? WK_STOPPED : WK_FAIL;
		}
		if (!said)
			agent_worker_note("%s; trying again for up to %u s", error_msg(), limit);
		said = true;
		error_clear();
		usleep(RETRY_MS * 1000);
	}
	if (said)
		agent_worker_note("connected to %s", name);
	free(name);
	return WK_OK;
}

static const char *const base_tools[] = { "bash",     "awk", "xfs_io", "blkid", "lsblk",
					  "blockdev", "tar", "gzip",   NULL };

/*
 * Inspect the machine (inspect_script) for fstests in fstests and the tools,
 * making work ("-" for either: not asked), with the devices; the verdict
 * into *v (may be NULL), OK when nothing stops a run.
 */
static enum status
inspect_machine(ssh_session ss, const struct target *t, const char *fstests, const char *work,
		const char *tools, const struct strvec *devs, const struct strvec *wipe,
		struct ssh_verdict *v)
{
	struct strbuf cmd = STRBUF_INIT, out = STRBUF_INIT;
	char *root_cmd, *name = target_name(t);
	int status;
	enum status rc;

	strbuf_adds(&cmd, "sh -s -- ");
	sq_quote(&cmd, fstests);
	strbuf_addch(&cmd, ' ');
	sq_quote(&cmd, work);
	strbuf_addch(&cmd, ' ');
	sq_quote(&cmd, tools);
	for (size_t i = 0; i < devs->n; i++) {
		if (!*devs->v[i])
			continue;
		strbuf_addch(&cmd, ' ');
		sq_quote(&cmd, devs->v[i]);
	}
	root_cmd = as_root(t, cmd.buf);
	rc = run_remote(ss, root_cmd, inspect_script, strlen(inspect_script), &out, &status);
	if (rc == OK && status != 0 && !out.len)
		rc = error(ERR_INVALID,
			   "cannot run commands as root on %s%s: log in as root, or let %s use "
			   "sudo without a password",
			   name, strcmp(t->user, "root") ? " (sudo -n failed)" : "", t->user);
	if (rc == OK) {
		struct ssh_machine m = { name, fstests, work, wipe };

		rc = ssh_inspect_verdict(out.buf, &m, v);
	}
	free(root_cmd);
	free(name);
	strbuf_release(&cmd);
	strbuf_release(&out);
	return rc;
}

static int
inspect(const struct ssh_session_priv *s, ssh_session ss)
{
	struct strbuf tools = STRBUF_INIT;
	enum status rc;

	for (size_t i = 0; base_tools[i]; i++)
		strbuf_addf(&tools, "%s ", base_tools[i]);
	if (s->disks.n && s->fstyp && strcmp(s->fstyp, "tmpfs"))
		strbuf_addf(&tools, "mkfs.%s", s->fstyp);
	rc = inspect_machine(ss, &s->t, s->fstests, s->work, tools.buf, &s->disks, &s->wipe, NULL);
	strbuf_release(&tools);
	if (rc != OK) {
		agent_worker_say("%s", error_msg());
		return WK_FAIL;
	}
	return WK_OK;
}

/*
 * The appliance's fstests as a tarball in fswb's cache, made once per
 * appliance: /opt/fstests read out of the image with debugfs (nothing is
 * mounted), then packed. *out gets its path.
 */
static enum status
fstests_tarball(const struct ssh_session_priv *s, char **out)
{
	char *cache = NULL, *tarball, *tmp = NULL, *tmptar = NULL, *rdump;
	struct loop *loop = NULL;
	struct strbuf log = STRBUF_INIT;
	struct child_exit ex;
	enum status rc = fswb_dir_make(DIR_CACHE, "ssh", &cache);

	if (rc != OK)
		return rc;
	tarball = xasprintf("%s/fstests-%s.tar.gz", cache, s->fskey);
	if (path_exists(tarball))
		goto done;
	agent_worker_note(
		"packing the appliance's fstests for the test machine (once per appliance)");
	tmp = xasprintf("%s/fstests-%s.XXXXXX", cache, s->fskey);
	if (!mkdtemp(tmp)) {
		rc = error(ERR_IO, "cannot make a directory in %s: %s", cache, strerror(errno));
		free(tmp);
		tmp = NULL;
		goto done;
	}
	loop = loop_new();
	rdump = xasprintf("rdump /opt/fstests %s", tmp);
	rc = spawn_run(loop, (const char *const[]){ "debugfs", "-R", rdump, s->appliance, NULL },
		       NULL, true, 64u << 10, &log, &ex);
	free(rdump);
	if (rc == OK) {
		char *check = xasprintf("%s/fstests/check", tmp);

		if (!path_exists(check))
			rc = error(ERR_NOTFOUND,
				   "the appliance %s has no fstests in /opt/fstests (debugfs: "
				   "%.200s): "
				   "build it with fstests, or give -o fstests=DIR on the machine",
				   s->appliance, log.buf ? log.buf : "");
		free(check);
	}
	tmptar = xasprintf("%s.tar.gz", tmp);
	if (rc == OK) {
		strbuf_reset(&log);
		rc = spawn_run(
			loop,
			(const char *const[]){ "tar", "-czf", tmptar, "-C", tmp, "fstests", NULL },
			NULL, true, 64u << 10, &log, &ex);
		if (rc == OK && (!ex.exited || ex.code))
			rc = error(ERR_CHILD, "cannot pack the appliance's fstests: tar: %.200s",
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

/* Copy a local file to path (relative: the login's home) over SFTP. */
static enum status
sftp_put(ssh_session ss, const char *local, const char *remote, char **abs)
{
	sftp_session sftp = sftp_new(ss);
	sftp_file f = NULL;
	char buf[CHUNK];
	FILE *in = fopen(local, "rb");
	enum status rc = OK;
	size_t n;

	*abs = NULL;
	if (!in)
		return error(ERR_IO, "cannot read %s: %s", local, strerror(errno));
	if (!sftp || sftp_init(sftp) != SSH_OK) {
		rc = error(ERR_IO, "the test machine has no SFTP (the sshd's sftp subsystem): %s",
			   ssh_get_error(ss));
		goto out;
	}
	f = sftp_open(sftp, remote, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (!f) {
		rc = error(ERR_IO, "cannot write %s on the test machine: %s", remote,
			   ssh_get_error(ss));
		goto out;
	}
	while (rc == OK && (n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (sftp_write(f, buf, n) != (ssize_t)n)
			rc = error(ERR_IO, "cannot write %s on the test machine: %s", remote,
				   ssh_get_error(ss));
	if (rc == OK && ferror(in))
		rc = error(ERR_IO, "cannot read %s", local);
	if (rc == OK) {
		char *p = sftp_canonicalize_path(sftp, remote);

		*abs = p ? xstrdup(p) : NULL;
		ssh_string_free_char(p);
		if (!*abs)
			rc = error(ERR_IO, "cannot tell where %s went on the test machine", remote);
	}
out:
	if (f)
		sftp_close(f);
	if (sftp)
		sftp_free(sftp);
	fclose(in);
	return rc;
}

/*
 * The appliance's fstests onto the machine, into WORK/fstests-KEY, unless
 * it is there already (a second run pushes nothing).
 */
static int
push_fstests(const struct ssh_session_priv *s, ssh_session ss)
{
	struct strbuf cmd = STRBUF_INIT;
	char *dir = xasprintf("%s/fstests-%s", s->work, s->fskey),
	     *done = path_join(dir, ".complete");
	char *root_cmd, *tarball = NULL;
	/* root writes into the work dir (settle made it); another user into its home */
	char *upload = strcmp(s->t.user, "root")
			       ? xasprintf(".fswb-fstests-%s.tar.gz", s->fskey)
			       : xasprintf("%s/fstests-%s.upload.tar.gz", s->work, s->fskey);
	char *abs = NULL;
	int status = -1;
	enum status rc;

	strbuf_adds(&cmd, "test -f ");
	sq_quote(&cmd, done);
	root_cmd = as_root(&s->t, cmd.buf);
	rc = run_remote(ss, root_cmd, NULL, 0, NULL, &status);
	free(root_cmd);
	if (rc == OK && status == 0)
		goto out; /* pushed by an earlier run */
	if (rc == OK)
		rc = fstests_tarball(s, &tarball);
	if (rc == OK) {
		agent_worker_note("putting the appliance's fstests on the test machine (%s)", dir);
		rc = sftp_put(ss, tarball, upload, &abs);
	}
	if (rc == OK) {
		/* unpacked aside, then moved: a half-unpacked tree is never taken for one */
		strbuf_reset(&cmd);
		strbuf_adds(&cmd, "set -e; w=");
		sq_quote(&cmd, s->work);
		strbuf_adds(&cmd, "; d=");
		sq_quote(&cmd, dir);
		strbuf_adds(&cmd, "; t=");
		sq_quote(&cmd, abs);
		strbuf_adds(&cmd, "; mkdir -p \"$w\"; chmod 0700 \"$w\"; rm -rf \"$d\" \"$d.tmp\"; "
				  "mkdir \"$d.tmp\"; tar -xzf \"$t\" -C \"$d.tmp\" "
				  "--no-same-owner; rm -f \"$t\"; mv \"$d.tmp\" \"$d\"; "
				  "touch \"$d/.complete\"");
		root_cmd = as_root(&s->t, cmd.buf);
		rc = run_remote(ss, root_cmd, NULL, 0, NULL, &status);
		free(root_cmd);
		if (rc == OK && status != 0)
			rc = error(ERR_IO,
				   "cannot unpack fstests into %s on the test machine (exit status "
				   "%d): is there room, and tar?",
				   dir, status);
	}
out:
	free(dir);
	free(done);
	free(tarball);
	free(upload);
	free(abs);
	strbuf_release(&cmd);
	if (rc != OK) {
		agent_worker_say("%s", error_msg());
		return WK_FAIL;
	}
	return WK_OK;
}

/* The agent into WORK/fswb-agent (cat on the exec channel: it works under sudo too). */
static int
push_agent(const struct ssh_session_priv *s, ssh_session ss)
{
	struct strbuf cmd = STRBUF_INIT;
	char *text = NULL, *root_cmd;
	size_t len = 0;
	int status = -1, code = WK_OK;
	enum status rc = read_file(s->agent, 1u << 20, &text, &len);

	strbuf_adds(&cmd, "cat > ");
	sq_quote(&cmd, s->agent_remote);
	root_cmd = as_root(&s->t, cmd.buf);
	if (rc == OK)
		rc = run_remote(ss, root_cmd, text, len, NULL, &status);
	if (rc == OK && status != 0)
		rc = error(ERR_IO,
			   "cannot write the agent to %s on the test machine (exit status %d)",
			   s->agent_remote, status);
	if (rc != OK) {
		agent_worker_say("%s", error_msg());
		code = WK_FAIL;
	}
	free(text);
	free(root_cmd);
	strbuf_release(&cmd);
	return code;
}

static ssh_channel
exec_channel(ssh_session ss, const char *cmd)
{
	ssh_channel ch = ssh_channel_new(ss);

	if (ch && ssh_channel_open_session(ch) == SSH_OK &&
	    ssh_channel_request_exec(ch, cmd) == SSH_OK)
		return ch;
	if (ch)
		ssh_channel_free(ch);
	return NULL;
}

/*
 * On the machine, as root: one agent per work dir. A stale agent (its
 * connection dropped, the machine still up) is stopped and the lock waited
 * for, so that its mounts are gone before the devices are looked at; then,
 * with run_agent, the agent runs holding the lock.
 */
static char *
agent_command(const struct ssh_session_priv *s, bool run_agent)
{
	struct strbuf sb = STRBUF_INIT, work = STRBUF_INIT, lock = STRBUF_INIT, pid = STRBUF_INIT,
		      agent = STRBUF_INIT, run = STRBUF_INIT;
	char *lockp = path_join(s->work, "lock"), *pidp = path_join(s->work, "agent.pid"), *out;

	sq_quote(&work, s->work);
	sq_quote(&lock, lockp);
	sq_quote(&pid, pidp);
	sq_quote(&agent, s->agent_remote);
	sq_quote(&run, s->run_dir);
	strbuf_addf(&sb,
		    "cd / || exit 1; mkdir -p %s && chmod 0700 %s || exit 1; "
		    "if [ -s %s ]; then read -r p < %s; "
		    "case $(tr '\\000' ' ' 2>/dev/null < /proc/$p/cmdline) in "
		    "*fswb-agent*) kill -TERM \"$p\" 2>/dev/null;; esac; fi; "
		    "exec 9> %s; "
		    "if command -v flock >/dev/null 2>&1; then flock -w %d 9 || exit %d; fi; ",
		    work.buf, work.buf, pid.buf, pid.buf, lock.buf, LOCK_WAIT, EXIT_LOCKED);
	if (run_agent)
		strbuf_addf(&sb, "echo $$ > %s; exec sh %s --stdio --kept-machine --workdir %s",
			    pid.buf, agent.buf, run.buf);
	else
		strbuf_adds(&sb, "exit 0");
	out = as_root(&s->t, sb.buf);
	free(lockp);
	free(pidp);
	strbuf_release(&sb);
	strbuf_release(&work);
	strbuf_release(&lock);
	strbuf_release(&pid);
	strbuf_release(&agent);
	strbuf_release(&run);
	return out;
}

/* A stale agent of this work dir stopped, its mounts gone (agent_command). */
static int
settle(const struct ssh_session_priv *s, ssh_session ss)
{
	char *cmd = agent_command(s, false), *name = target_name(&s->t);
	int status = -1, code = WK_OK;
	enum status rc = run_remote(ss, cmd, NULL, 0, NULL, &status);

	if (rc == OK && status == EXIT_LOCKED)
		rc = error(ERR_BUSY,
			   "another fswb run is using %s (its work directory %s is locked): wait "
			   "for it, or give another -o workdir=DIR",
			   name, s->work);
	else if (rc == OK && status != 0)
		rc = error(ERR_INVALID,
			   "cannot make %s on %s as root (exit status %d): log in as root, or let "
			   "%s use sudo without a password",
			   s->work, name, status, s->t.user);
	if (rc != OK) {
		agent_worker_say("%s", error_msg());
		code = WK_FAIL;
	}
	free(cmd);
	free(name);
	return code;
}

/*
 * The kernel log from now on: dmesg --follow-new (util-linux 2.36),
 * journalctl, dmesg -w; it ends with the channel (its stdin closing), not
 * at the next kernel message.
 */
static const char klog_command[] =
	"if dmesg --help 2>&1 | grep -q -e --follow-new; then dmesg --follow-new & "
	"elif command -v journalctl >/dev/null 2>&1; then journalctl -kf -n 0 & "
	"else dmesg -w & fi; p=$!; cat >/dev/null; kill $p 2>/dev/null";

/* Move what a channel has to fd; false when the channel or the connection is gone. */
static bool
pump(ssh_channel ch, int is_stderr, int fd)
{
	char buf[CHUNK];
	int n;

	while ((n = ssh_channel_read_nonblocking(ch, buf, sizeof(buf), is_stderr)) > 0)
		if (fd >= 0 && !agent_write_all(fd, buf, (size_t)n))
			return false;
	return n != SSH_ERROR;
}

static int
worker(void *arg)
{
	struct ssh_session_priv *s = arg;
	ssh_session ss = NULL;
	ssh_channel agent = NULL, klog = NULL;
	char *cmd, *name = target_name(&s->t);
	uint64_t last_alive = loop_now_ms(), last_heard = loop_now_ms();
	bool in_open = true;
	int code, con = agent_kept_worker(&s->kept);

	code = connect_until(s, &ss);
	if (code == WK_OK)
		code = settle(s, ss);
	if (code == WK_OK && s->appliance)
		code = push_fstests(s, ss);
	if (code == WK_OK)
		code = inspect(s, ss);
	if (code == WK_OK)
		code = push_agent(s, ss);
	if (code != WK_OK)
		goto out;
	cmd = agent_command(s, true);
	agent = exec_channel(ss, cmd);
	free(cmd);
	cmd = as_root(&s->t, klog_command);
	klog = exec_channel(ss, cmd);
	free(cmd);
	if (!agent) {
		agent_worker_say("cannot start the agent on %s: %s", name, ssh_get_error(ss));
		code = WK_FAIL;
		goto out;
	}
	if (!klog)
		agent_worker_note("no kernel log from %s: %s (the run goes on without it)", name,
				  ssh_get_error(ss));
	for (;;) {
		struct pollfd p[2] = { { ssh_get_fd(ss), POLLIN, 0 }, { 0, POLLIN, 0 } };
		char buf[CHUNK];

		if (agent_worker_stop) {
			code = WK_STOPPED;
			break;
		}
		poll(p, in_open ? 2 : 1, 100);
		if (in_open && (p[1].revents & (POLLIN | POLLHUP | POLLERR))) {
			ssize_t n = read(0, buf, sizeof(buf));

			if (n > 0) {
				if (ssh_channel_write(agent, buf, (uint32_t)n) != n) {
					agent_worker_say("the connection to %s broke: %s", name,
							 ssh_get_error(ss));
					code = WK_LOST;
					break;
				}
			} else if (n == 0 || errno != EINTR) {
				in_open = false; /* fswb is done with the agent */
				ssh_channel_send_eof(agent);
			}
		}
		if (ssh_channel_poll(agent, 0) > 0 || ssh_channel_poll(agent, 1) > 0)
			last_heard = loop_now_ms();
		if (!pump(agent, 0, 1) || !pump(agent, 1, con) || (klog && !pump(klog, 0, con))) {
			agent_worker_say("the connection to %s broke: %s", name, ssh_get_error(ss));
			code = WK_LOST;
			break;
		}
		if (ssh_channel_is_eof(agent) || ssh_channel_is_closed(agent)) {
			int st;

			pump(agent, 0, 1);
			st = ssh_channel_get_exit_status(agent);
			if (st == EXIT_LOCKED) {
				agent_worker_say(
					"another fswb run is using %s (its work directory %s is "
					"locked): "
					"wait for it, or give another -o workdir=DIR",
					name, s->work);
				code = WK_FAIL;
			} else if (st != 0) {
				agent_worker_say("the agent on %s ended with status %d", name, st);
				code = WK_FAIL;
			}
			break;
		}
		if (!ssh_is_connected(ss)) {
			agent_worker_say("the connection to %s was lost", name);
			code = WK_LOST;
			break;
		}
		if (loop_now_ms() - last_alive >= KEEPALIVE_EVERY_MS) {
			ssh_send_ignore(ss, "fswb");
			last_alive = loop_now_ms();
		}
		/*
		 * A silent agent on a connection that looks up (a panicked guest
		 * behind QEMU's user network, whose TCP end is QEMU's): the machine
		 * must answer a channel open within the connect timeout, else it is
		 * gone and the test crashed with it.
		 */
		if (loop_now_ms() - last_heard >= QUIET_PROBE_MS) {
			ssh_channel probe = ssh_channel_new(ss);

			if (!probe || ssh_channel_open_session(probe) != SSH_OK) {
				agent_worker_say(
					"the connection to %s broke: the machine stopped answering",
					name);
				if (probe)
					ssh_channel_free(probe);
				code = WK_LOST;
				break;
			}
			ssh_channel_close(probe);
			ssh_channel_free(probe);
			last_heard = loop_now_ms();
		}
	}
	if (code == WK_STOPPED && ssh_is_connected(ss)) {
		/* the agent stops check and cleans up at the end of its input */
		uint64_t until = loop_now_ms() + 5000;

		ssh_channel_send_eof(agent);
		while (loop_now_ms() < until && !ssh_channel_is_eof(agent) && pump(agent, 0, 1))
			usleep(50000);
	}
out:
	if (klog) {
		ssh_channel_close(klog);
		ssh_channel_free(klog);
	}
	if (agent) {
		ssh_channel_close(agent);
		ssh_channel_free(agent);
	}
	ssh_close(ss);
	free(name);
	return code;
}

/* ---- the session --------------------------------------------------------------- */

static void
ssh_release(void *priv)
{
	struct ssh_session_priv *s = priv;

	agent_kept_release(&s->kept);
	target_release(&s->t);
	free(s->work);
	free(s->run_dir);
	free(s->fstests);
	free(s->job_dir);
	free(s->mnt_dir);
	free(s->results_dir);
	free(s->agent);
	free(s->agent_remote);
	free(s->appliance);
	free(s->fskey);
	free(s->fstyp);
	free(s->notice);
	strvec_clear(&s->disks);
	strvec_clear(&s->wipe);
	free(s);
}

/* The device the user named for a disk's role: pool1..N from pool=, the others by name. */
static enum status
role_device(const struct session_spec *spec, const char *role, const char **out)
{
	const char *v;

	*out = NULL;
	if (!strncmp(role, "pool", 4) && role[4] >= '1' && role[4] <= '9') {
		static char dev[256];
		struct strvec pool = STRVEC_INIT;
		unsigned i = (unsigned)strtoul(role + 4, NULL, 10);

		v = session_spec_opt(spec, "pool");
		if (v)
			strvec_split(&pool, v, ",");
		if (i > pool.n) {
			enum status rc = error(ERR_INVALID,
					       "the configuration '%s' needs a pool of at least %u "
					       "devices on the machine: give -o pool=DEV,DEV,...",
					       spec->name, i);

			strvec_clear(&pool);
			return rc;
		}
		snprintf(dev, sizeof(dev), "%s", pool.v[i - 1]);
		strvec_clear(&pool);
		*out = dev;
		return OK;
	}
	*out = session_spec_opt(spec, role);
	if (*out || !strcmp(role, "logwrites"))
		return OK; /* no LOGWRITES_DEV: the log-replay tests say they did not run */
	return error(ERR_INVALID,
		     "the configuration '%s' needs a %s device on the test machine: give -o "
		     "%s=/dev/...",
		     spec->name, role, role);
}

static enum status
ssh_start(struct loop *loop, void *run, const struct session_spec *spec,
	  const struct session_callbacks *cb, void *data, struct lease *lease, void **priv)
{
	struct ssh_session_priv *s = xcalloc(1, sizeof(*s));
	const char *fstests = session_spec_opt(spec, "fstests"), *v;
	enum status rc;

	agent_kept_init(&s->kept, loop, run, spec->slot, cb, data);
	strvec_init(&s->disks);
	strvec_init(&s->wipe);
	s->boot = session_spec_seconds(spec, "boot", BOOT_DEFAULT);
	s->silence = session_spec_seconds(spec, "silence", QUIET_DEFAULT);
	rc = target_make(spec_opt, spec, spec->slot, &s->t);
	if (rc != OK)
		goto fail;
	if (!fstests && !spec->appliance)
		BUG("an ssh session with neither fstests on the machine nor an appliance");
	if (!spec->agent)
		BUG("an ssh session without the agent");
	s->agent = xstrdup(spec->agent);
	s->fstyp = spec->fstyp ? xstrdup(spec->fstyp) : NULL;
	s->work = xstrdup((v = session_spec_opt(spec, "workdir")) ? v : WORK_DEFAULT);
	if (fstests) {
		s->fstests = xstrdup(fstests);
	} else {
		/* the appliance's cache directory is named by its key */
		char *dir = xstrdup(spec->appliance), *slash = strrchr(dir, '/');
		const char *base;

		if (slash)
			*slash = 0;
		base = strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir;
		s->fskey = xstrndup(base, 16);
		if (!plain_word(s->fskey, "_-"))
			BUG("an appliance directory named '%s'", base);
		s->appliance = xstrdup(spec->appliance);
		s->fstests = xasprintf("%s/fstests-%s/fstests", s->work, s->fskey);
		free(dir);
	}
	s->agent_remote = path_join(s->work, "fswb-agent");
	s->run_dir = path_join(s->work, "run");
	s->job_dir = path_join(s->run_dir, "job");
	s->mnt_dir = path_join(s->run_dir, "mnt");
	s->results_dir = path_join(s->run_dir, "results");
	s->layout = (struct session_layout){ s->fstests, s->job_dir, s->mnt_dir, s->results_dir };
	if ((v = session_spec_opt(spec, "wipe")))
		strvec_split(&s->wipe, v, ",");
	for (size_t i = 0; i < spec->ndisks; i++) {
		const char *dev;

		rc = role_device(spec, spec->disks[i].role, &dev);
		if (rc != OK)
			goto fail;
		strvec_push(&s->disks, dev ? dev : "");
	}
	for (size_t i = 0; i < s->disks.n; i++)
		for (size_t j = 0; j < i; j++)
			if (*s->disks.v[i] && !strcmp(s->disks.v[i], s->disks.v[j])) {
				rc = error(
					ERR_INVALID,
					"%s is named for both %s and %s: each role needs a device "
					"of its own",
					s->disks.v[i], spec->disks[j].role, spec->disks[i].role);
				goto fail;
			}
	rc = agent_kept_start(&s->kept, worker, s, "fswb ssh", lease);
	if (rc != OK)
		goto fail;
	s->notice = xasprintf("the test machine is %s@%s:%u, running its own kernel", s->t.user,
			      s->t.host, s->t.port);
	*priv = s;
	return OK;
fail:
	ssh_release(s);
	return rc;
}

static char *
ssh_disk_path(void *priv, size_t index)
{
	struct ssh_session_priv *s = priv;

	if (index >= s->disks.n)
		BUG("disk index %zu out of range", index);
	return *s->disks.v[index] ? xstrdup(s->disks.v[index]) : NULL;
}

static const struct session_layout *
ssh_layout(void *priv)
{
	return &((struct ssh_session_priv *)priv)->layout;
}

static unsigned
ssh_boot_limit(void *priv)
{
	/* the worker tries to connect for boot seconds; then the inspection and the agent */
	return ((struct ssh_session_priv *)priv)->boot + 60;
}

static unsigned
ssh_silence_limit(void *priv)
{
	return ((struct ssh_session_priv *)priv)->silence;
}

static const char *
ssh_notice(void *priv)
{
	return ((struct ssh_session_priv *)priv)->notice;
}

/* ---- probe, doctor -------------------------------------------------------------- */

/* The devices the plan names, each once: every role's option and the pool's members. */
static void
named_devices(const struct plan *plan, struct strvec *out)
{
	static const char *const roles[] = { "test",	   "scratch",	"pool",
					     "logdev",	   "rtdev",	"test_logdev",
					     "test_rtdev", "logwrites", NULL };

	for (size_t i = 0; roles[i]; i++) {
		const char *v = plan_backend_opt(plan, roles[i]);
		struct strvec d = STRVEC_INIT;

		if (v)
			strvec_split(&d, v, ",");
		for (size_t j = 0; j < d.n; j++)
			if (!strvec_contains(out, d.v[j]))
				strvec_push(out, d.v[j]);
		strvec_clear(&d);
	}
}

/*
 * Usable when fswb can log in and run as root on the first machine, its
 * fstests is there and the devices the plan names may be formatted. What
 * waits for the user (an unknown host key, devices to confirm) is in
 * confirm and confirm_opt.
 */
static enum status
ssh_probe(const struct plan *plan, struct backend_probe *out)
{
	struct target t;
	struct seen_key seen = { 0 };
	struct ssh_verdict v = { .unconfirmed = STRVEC_INIT, .holds = STRVEC_INIT };
	struct strvec devs = STRVEC_INIT, wipe = STRVEC_INIT;
	const char *fstests = plan_backend_opt(plan, "fstests");
	ssh_session ss = NULL;
	bool network;
	char *name;
	enum status rc = target_make(plan_opt, plan, 0, &t);

	if (rc != OK) {
		out->summary = xstrdup("not usable yet: no test machine named");
		out->fix = xstrdup("host=HOST fstests=DIR test=DEV scratch=DEV (-o; o)");
		error_clear();
		return OK;
	}
	name = target_name(&t);
	rc = ssh_open(&t, &ss, &network, &seen);
	if (rc != OK) {
		out->summary =
			seen.fp ? xasprintf("not usable yet: %s, its host key is not known", name)
				: xasprintf("not usable: %s", name);
		if (!seen.fp)
			out->why = xstrdup(error_msg());
		if (seen.fp) {
			out->confirm = xasprintf("trust the host key %s %s of %s (compare it with "
						 "ssh-keygen -lf on the machine's host key)",
						 seen.type ? seen.type : "", seen.fp, name);
			out->confirm_opt = xasprintf("hostkey=%s", seen.fp);
		} else if (network) {
			out->fix =
				xstrdup("check that the machine is up and its sshd listens there "
					"(port=PORT)");
		}
		error_clear();
		goto out;
	}
	named_devices(plan, &devs);
	if (plan_backend_opt(plan, "wipe"))
		strvec_split(&wipe, plan_backend_opt(plan, "wipe"), ",");
	rc = inspect_machine(ss, &t, fstests ? fstests : "-", "-", "", &devs, &wipe, &v);
	if (rc == OK && !devs.n) {
		out->summary = xasprintf("not usable yet: no devices named on %s", name);
		out->fix =
			xstrdup("name its disks for the tests: test=DEV and scratch=DEV (they are "
				"formatted)");
	} else if (rc == OK) {
		char *list = strvec_join(&devs, ", ");

		out->usable = true;
		out->summary = xasprintf("ready: %s (its own kernel; formats %s)", name, list);
		if (!fstests)
			out->why =
				xstrdup("no fstests=DIR named: fswb puts the appliance's fstests "
					"there (built for this host's Debian release)");
		free(list);
	} else if (!v.blocked && v.unconfirmed.n) {
		char *holds = strvec_join(&v.holds, ", "), *list = strvec_join(&wipe, ",");
		char *more = strvec_join(&v.unconfirmed, ",");

		out->summary = xasprintf("not usable yet: %s, devices to confirm", name);
		out->confirm = xasprintf("format %s on %s, destroying what %s", holds, name,
					 v.unconfirmed.n > 1 ? "they hold" : "it holds");
		out->confirm_opt = xasprintf("wipe=%s%s%s", list, wipe.n ? "," : "", more);
		free(holds);
		free(list);
		free(more);
	} else {
		out->summary = xasprintf("not usable: %s", name);
		out->why = xstrdup(error_msg());
	}
	error_clear();
out:
	free(seen.type);
	free(seen.fp);
	strvec_clear(&v.unconfirmed);
	strvec_clear(&v.holds);
	strvec_clear(&devs);
	strvec_clear(&wipe);
	ssh_close(ss);
	free(name);
	target_release(&t);
	return OK;
}

/* One part of the inspection as a finding: OK, else what blocks (MISSING) or waits (WARN). */
static void
inspect_finding(ssh_session ss, const struct target *t, const char *fstests, const char *tools,
		const struct strvec *devs, const struct strvec *wipe, const char *name,
		char *ok_detail, struct backend_finding *out, size_t max, size_t *n)
{
	struct ssh_verdict v = { .unconfirmed = STRVEC_INIT, .holds = STRVEC_INIT };

	if (inspect_machine(ss, t, fstests, "-", tools, devs, wipe, &v) == OK)
		backend_finding_add(out, max, n, FINDING_OK, name, ok_detail, NULL);
	else {
		backend_finding_add(out, max, n, v.blocked ? FINDING_MISSING : FINDING_WARN, name,
				    xstrdup(error_msg()), NULL);
		free(ok_detail);
	}
	error_clear();
	strvec_clear(&v.unconfirmed);
	strvec_clear(&v.holds);
}

/*
 * `fswb doctor --backend ssh -o host=...`: the machine reached, its host key,
 * the login, root, fstests, the tools, the devices; without a machine named,
 * how to name one.
 */
static size_t
ssh_doctor(struct loop *loop, const struct backend_doctor_opts *o, struct backend_finding *out,
	   size_t max)
{
	const struct plan *plan =
		o->plan && o->plan->backend && !strcmp(o->plan->backend, "ssh") ? o->plan : NULL;
	struct target t;
	struct seen_key seen = { 0 };
	struct strvec devs = STRVEC_INIT, wipe = STRVEC_INIT, none = STRVEC_INIT;
	enum open_stage stage;
	ssh_session ss = NULL;
	bool network;
	char *name, *tools;
	const char *fstests;
	size_t n = 0;
	int status;

	if (!plan || target_make(plan_opt, plan, 0, &t) != OK) {
		error_clear();
		backend_finding_add(
			out, max, &n, FINDING_OK, "test machine",
			xstrdup("none named here; fswb doctor --backend ssh -o host=HOST [-o "
				"user=, "
				"key=, fstests=DIR, test=DEV, scratch=DEV] checks one"),
			NULL);
		return n;
	}
	name = target_name(&t);
	if (ssh_open_staged(&t, &ss, &network, &seen, &stage) != OK) {
		static const char *const what[] = { "connection", "host key", "login" };

		backend_finding_add(
			out, max, &n, FINDING_MISSING, what[stage], xstrdup(error_msg()),
			stage == STAGE_CONNECT
				? xstrdup("check that the machine is up and its sshd "
					  "listens there (-o port=PORT)")
			: seen.fp ? xasprintf("compare it with the machine's key, then pass "
					      "--accept-new-host-key (or -o hostkey=%s)",
					      seen.fp)
				  : NULL);
		error_clear();
		goto out;
	}
	backend_finding_add(out, max, &n, FINDING_OK, "connection", xasprintf("reached %s", name),
			    NULL);
	backend_finding_add(out, max, &n, FINDING_OK, "host key",
			    xasprintf("known, in %s", t.known_hosts), NULL);
	backend_finding_add(out, max, &n, FINDING_OK, "login", xstrdup("the key was accepted"),
			    NULL);
	{
		char *cmd = as_root(&t, "id -u");
		struct strbuf idout = STRBUF_INIT;

		if (run_remote(ss, cmd, NULL, 0, &idout, &status) != OK || status ||
		    strncmp(idout.buf ? idout.buf : "", "0", 1)) {
			backend_finding_add(
				out, max, &n, FINDING_MISSING, "root",
				xasprintf("cannot run commands as root on %s", name),
				xasprintf("log in as root, or let %s use sudo without a password",
					  t.user));
			error_clear();
			free(cmd);
			strbuf_release(&idout);
			goto out;
		}
		free(cmd);
		strbuf_release(&idout);
		backend_finding_add(
			out, max, &n, FINDING_OK, "root",
			xstrdup(strcmp(t.user, "root") ? "through sudo -n" : "logged in as root"),
			NULL);
	}
	fstests = plan_backend_opt(plan, "fstests");
	if (fstests)
		inspect_finding(ss, &t, fstests, "", &none, &none, "fstests",
				xasprintf("%s/check is there", fstests), out, max, &n);
	else
		backend_finding_add(out, max, &n, FINDING_WARN, "fstests", xstrdup("not named"),
				    xstrdup("-o fstests=DIR: a built fstests tree on the machine"));
	tools = xasprintf("bash awk xfs_io blkid lsblk blockdev tar gzip mkfs.ext4 mkfs.xfs "
			  "mkfs.btrfs");
	inspect_finding(ss, &t, "-", tools, &none, &none, "tools",
			xstrdup("fstests' tools and mkfs for ext4, xfs and btrfs are there"), out,
			max, &n);
	free(tools);
	named_devices(plan, &devs);
	if (plan_backend_opt(plan, "wipe"))
		strvec_split(&wipe, plan_backend_opt(plan, "wipe"), ",");
	if (devs.n) {
		char *list = strvec_join(&devs, ", ");

		inspect_finding(ss, &t, "-", "", &devs, &wipe, "devices",
				xasprintf("%s: there, not in use, confirmed", list), out, max, &n);
		free(list);
	} else {
		backend_finding_add(
			out, max, &n, FINDING_WARN, "devices", xstrdup("none named"),
			xstrdup("-o test=DEV -o scratch=DEV: devices the tests may format"));
	}
out:
	free(seen.type);
	free(seen.fp);
	strvec_clear(&devs);
	strvec_clear(&wipe);
	ssh_close(ss);
	free(name);
	target_release(&t);
	return n;
}

/* Without -o fstests the machine gets the appliance's. */
static bool
ssh_fstests_from_appliance(const struct plan *plan)
{
	return !plan_backend_opt(plan, "fstests");
}

static unsigned
ssh_machines(const struct plan *plan)
{
	struct strvec v = STRVEC_INIT;
	unsigned n = host_list(plan_opt, plan, &v) == OK ? (unsigned)v.n : 0;

	error_clear();
	strvec_clear(&v);
	return n;
}

static enum status
ssh_backend_init(void)
{
	return ssh_init() == 0 ? OK : error(ERR_IO, "cannot initialise libssh");
}

static void
ssh_backend_cleanup(void)
{
	ssh_finalize();
}

const struct backend_ops ssh_backend = {
	.name = "ssh",
	.description = "a prepared test machine over ssh: its own kernel, disks and fstests",
	.caps = BACKEND_PARALLEL | BACKEND_WIPES,
	.options = ssh_options,
	.init = ssh_backend_init,
	.cleanup = ssh_backend_cleanup,
	.probe = ssh_probe,
	.start = ssh_start,
	.send = agent_kept_send,
	.cancel = agent_kept_cancel,
	.disk_path = ssh_disk_path,
	.layout = ssh_layout,
	.release = ssh_release,
	.boot_limit = ssh_boot_limit,
	.silence_limit = ssh_silence_limit,
	.notice = ssh_notice,
	.prepare = agent_reach_prepare,
	.discard = agent_reach_discard,
	.machines = ssh_machines,
	.fstests_from_appliance = ssh_fstests_from_appliance,
	.doctor = ssh_doctor,
};
