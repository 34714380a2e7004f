/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The agent protocol: how fswb (the host) and its guest agent
 * (src/agent/fswb-agent) talk, and the host's half of it.
 *
 * This module is pure framing: it turns bytes into messages and messages
 * into bytes. It owns no fd and never waits; the backend owns the channel,
 * reads it from the loop and feeds what it read to an agent_reader, and
 * writes what the builders below append to a strbuf.
 *
 * THE CHANNEL
 *
 * One byte stream each way, 8-bit clean: the virtio-serial port named
 * org.fswb.ctl (QEMU, libvirt; the guest opens /dev/vportNpM), or the
 * agent's stdin and stdout (fswb-agent --stdio, over ssh or adb). It must
 * not be a terminal: a pty turns "\n" into "\r\n" and eats control bytes
 * (adb: `adb exec-out` or `adb shell -T`, ssh: no -t). On virtio-serial the
 * agent's first write (HELLO) waits until the host side is connected, and
 * a read that sees the host disconnect ends the agent.
 *
 * FRAMES
 *
 * A frame is a header line, optionally followed by a payload:
 *
 *	TYPE [ARG ...]\n
 *	TYPE [ARG ...] +LEN\n<exactly LEN bytes>
 *
 *   - TYPE: 1 to AGENT_TYPE_MAX characters of A-Z, 0-9 and '_', the first
 *     a letter.
 *   - ARGs: printable ASCII other than space (0x21-0x7e), one space before
 *     each, at most AGENT_ARGS_MAX of them (the +LEN included).
 *   - A frame carries a payload exactly when its last argument is '+'
 *     followed by 1 to 19 decimal digits; LEN is at most AGENT_PAYLOAD_MAX.
 *     The payload is raw bytes (it may hold NULs and newlines) and is not
 *     followed by anything: the next frame starts right after it. Because
 *     the marker is the same for every type, a receiver can skip a frame it
 *     does not know, payload included.
 *   - The header line, its '\n' included, is at most AGENT_HEADER_MAX bytes.
 *   - An empty line is not a frame; it is skipped. (The agent sends one
 *     before HELLO, so that HELLO starts a line after any noise.)
 *   - A frame of a type the receiver does not know is skipped, payload
 *     included; it is never an error. A known type may get more arguments
 *     in a later protocol version: receivers ignore arguments after the
 *     ones they know (but before the +LEN).
 *   - Anything else is a protocol error after which the stream cannot be
 *     trusted: a header that is too long, a bad character (a carriage
 *     return says the channel is a terminal), a bad +LEN, a known type with
 *     the wrong arguments, or the stream ending inside a frame.
 *
 * GUEST -> HOST
 *
 *   HELLO <proto> <agent-version> <arch> <kernel-release>
 *	First frame of every session. proto is AGENT_PROTO_VERSION of the
 *	agent; the host refuses any other (agent_hello_parse(): "rebuild the
 *	appliance"). arch is `uname -m`, kernel-release `uname -r` (spaces
 *	replaced by '_').
 *   READY
 *	The agent is waiting for a command. Sent after HELLO and at the end
 *	of every command but FILE and POWEROFF, whatever its outcome.
 *   HB <uptime> [<busy>]
 *	Heartbeat: the guest's uptime in whole seconds, every
 *	AGENT_HB_INTERVAL seconds while a command runs (mkfs, check, tar), so
 *	that the host can tell a hung guest from a long test; busy, when
 *	there, is the share of the guest's CPU time (0-100) spent busy since
 *	the last heartbeat (an idle guest in a long test is likely stuck).
 *	Between commands (after READY) the agent is silent.
 *   OUT +LEN
 *	The next bytes of check's stdout and stderr, as check wrote them
 *	(test names come before their outcome without a newline: a frame may
 *	end anywhere, even inside a line or a UTF-8 sequence). At most
 *	AGENT_CHUNK_MAX bytes a frame.
 *   LOG +LEN
 *	The agent's own messages and the output of what it runs for the job
 *	(mkfs, tar), as text for a log. At most AGENT_CHUNK_MAX bytes a frame.
 *   ERR +LEN
 *	A command could not be done: the text says why (a refused FILE, mkfs
 *	failed, no job.env, no fstests...). At most AGENT_CHUNK_MAX bytes.
 *   RESULT +LEN
 *	A gzip-compressed tar of check's results directory, its members
 *	relative to it ("./result.xml", "./generic/001.full"...); LEN 0 when
 *	there was no results directory. Can be large: see agent_reader.
 *   EXIT <status>
 *	check's exit status; 128+N when it was killed by signal N (137: the
 *	OOM killer's SIGKILL).
 *   SHELLREADY
 *	An interactive shell is waiting on the shell channel.
 *   BYE
 *	Last frame: the agent ends (and in a QEMU guest fswb-init powers off).
 *
 * HOST -> GUEST
 *
 *   FILE <name> <mode> +LEN
 *	A file of the job, stored in the agent's job directory (AGENT_JOB_DIR
 *	in a guest) with the octal mode. name: see agent_file_name_ok(). Not
 *	answered when stored; a refused FILE is answered with ERR, and then
 *	RUN refuses to run until the file is sent again properly.
 *   RUN
 *	Run the job described by the FILE job.env (see agent_job_env()):
 *	unmount and create the mount points, mkfs TEST_DEV (and, for a file
 *	system it serves, SCRATCH's disk), mount and export what it serves and
 *	start the NFS server, clear the results directory, run `./check OPTS
 *	TESTS` in the fstests directory, stream it, send the results. Answer:
 *		[LOG...] ERR READY				when it cannot run
 *		[LOG...] [OUT|HB|LOG...] RESULT EXIT READY	when check ran
 *	RUN may come again after READY: the job is done again from the start
 *	with whatever files were sent meanwhile.
 *   RERUN <test>
 *	After a RUN: run `./check OPTS <test>` again (no mkfs, results kept,
 *	the same job.env); answered as RUN is. ERR READY before any RUN.
 *   SHELL
 *	Start an interactive shell (bash, else sh, in a pty when `script` is
 *	there) on the shell channel: the virtio-serial port org.fswb.shell
 *	(QEMU) or --shell-port. Answer: SHELLREADY READY, or ERR READY (in
 *	--stdio mode without --shell-port there is no shell channel).
 *   POWEROFF
 *	The agent stops what it ran, unmounts the mount points and answers
 *	BYE; then it ends. (fswb-init powers the guest off when the agent
 *	ends; over ssh or adb the machine is left running.)
 *
 * The host sends a command only after READY (FILEs may come back to back,
 * and RUN right after them). Commands are read only between commands: while
 * check runs, the host can only wait, or end the guest.
 *
 * A SESSION
 *
 *	guest: HELLO 1 0.1.0 x86_64 6.1.0-18-cloud-amd64
 *	guest: READY
 *	host:  FILE job.env 0644 +412 / FILE local.config 0644 +160 /
 *	       FILE exclude 0644 +23 / RUN
 *	guest: LOG +..  OUT +12  HB 14  OUT +40 ...  RESULT +5120  EXIT 1  READY
 *	host:  RERUN generic/006
 *	guest: OUT ...  RESULT +5311  EXIT 1  READY
 *	host:  POWEROFF
 *	guest: BYE
 *
 * Over ssh or adb, the channel may carry noise before the agent starts (a
 * login banner, a shell's warning): a reader made with AGENT_READER_SYNC
 * passes lines before HELLO as AGENT_NOISE messages instead of failing.
 */
#ifndef FSWB_AGENT_AGENT_PROTO_H
#define FSWB_AGENT_AGENT_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/status.h"
#include "core/util.h"

#define AGENT_PROTO_VERSION 1
#define AGENT_HEADER_MAX    1024		 /* bytes in a header line, its '\n' included */
#define AGENT_TYPE_MAX	    16			 /* characters in a TYPE */
#define AGENT_ARGS_MAX	    16			 /* arguments in a header, the +LEN included */
#define AGENT_CHUNK_MAX	    65536		 /* payload bytes in one agent_msg */
#define AGENT_PAYLOAD_MAX   (UINT64_C(64) << 30) /* LEN: 64 GiB */
#define AGENT_HB_INTERVAL   5			 /* seconds between heartbeats */
#define AGENT_NAME_MAX	    128			 /* characters in a FILE name or RERUN test */

/* Where things are in a guest (fswb-agent's defaults). */
#define AGENT_FSTESTS_DIR "/opt/fstests"
#define AGENT_JOB_DIR	  "/run/fswb/job" /* fswb-agent --workdir /run/fswb */
#define AGENT_CTL_PORT	  "org.fswb.ctl"
#define AGENT_SHELL_PORT  "org.fswb.shell"
/* The line the agent writes on the shell channel when the shell has ended. */
#define AGENT_SHELL_END "[fswb: the shell in the guest ended]"

enum agent_type {
	AGENT_UNKNOWN = 0, /* a TYPE this fswb does not know: skipped */
	AGENT_NOISE,	   /* AGENT_READER_SYNC: a line before HELLO */
	/* guest -> host */
	AGENT_HELLO,
	AGENT_READY,
	AGENT_HB,
	AGENT_OUT,
	AGENT_LOG,
	AGENT_ERR,
	AGENT_RESULT,
	AGENT_EXIT,
	AGENT_SHELLREADY,
	AGENT_BYE,
	/* host -> guest (the reader parses them too: tests, fake agents) */
	AGENT_FILE,
	AGENT_RUN,
	AGENT_RERUN,
	AGENT_SHELL,
	AGENT_POWEROFF,
};

/* "HELLO", "OUT"...; "unknown" and "noise" for those two. */
const char *agent_type_name(enum agent_type type);

/*
 * One frame, or one piece of a frame's payload, as the reader delivers it.
 * Everything points into the reader and is valid only during the callback.
 *
 * A frame without payload is delivered once: has_payload false, data ""
 * and len 0, last true. A frame with a payload of at most AGENT_CHUNK_MAX
 * bytes is delivered once with the whole payload, however the bytes were
 * split when fed. A larger payload is delivered in pieces of exactly
 * AGENT_CHUNK_MAX bytes (the last one shorter), each with the header's
 * fields again, offset where the piece starts, total the whole LEN, and
 * last set on the final piece; so memory stays bounded by AGENT_CHUNK_MAX
 * whatever LEN is, and a consumer streams RESULT to a file piece by piece.
 *
 * An AGENT_UNKNOWN frame is delivered once, with its header (name, argv)
 * and total, but without its payload, which is skipped. An AGENT_NOISE
 * message has the line, without its '\n', in data (long lines come in
 * pieces of AGENT_HEADER_MAX bytes).
 */
struct agent_msg {
	enum agent_type type;
	const char *name;		      /* the TYPE as sent ("OUT"); "" for noise */
	size_t argc;			      /* arguments, the +LEN not counted */
	const char *argv[AGENT_ARGS_MAX + 1]; /* NULL-terminated */
	int64_t value;			      /* HB: uptime; EXIT: status; FILE: mode; else 0 */
	bool has_payload;
	const char *data; /* the payload or piece; NUL-terminated, may hold NULs */
	size_t len;
	uint64_t offset; /* of data in the payload */
	uint64_t total;	 /* LEN */
	bool last;	 /* the last message of this frame */
};

/*
 * Called once per message. Returning anything but OK (with error() set)
 * stops agent_reader_feed(), which returns that code; the reader is then
 * failed for good.
 */
typedef enum status agent_msg_fn(const struct agent_msg *msg, void *data);

enum agent_reader_flags {
	/*
	 * Until the first HELLO frame, every line that is not one is passed
	 * on as AGENT_NOISE instead of being a protocol error (ssh, adb).
	 */
	AGENT_READER_SYNC = 1 << 0,
};

/*
 * A reader turns the guest's bytes into messages.
 *
 * Call sequence:
 *	struct agent_reader r;
 *	agent_reader_init(&r, 0);               (or AGENT_READER_SYNC)
 *	while the channel gives bytes:
 *		rc = agent_reader_feed(&r, buf, n, on_msg, ctx);
 *		rc != OK: a protocol error (ERR_PROTOCOL, error_msg() says
 *		what was wrong and where) or the callback's code; stop
 *		reading and end the session
 *	at EOF:
 *		rc = agent_reader_eof(&r, on_msg, ctx);  ERR_PROTOCOL when the
 *		stream ended inside a frame
 *	agent_reader_release(&r);
 *
 * After a failure every later feed or eof fails again with the same code
 * and message. Memory: at most AGENT_HEADER_MAX + AGENT_CHUNK_MAX bytes of
 * buffers, whatever the guest sends.
 */
struct agent_reader {
	unsigned flags;
	uint64_t pos;	 /* bytes consumed so far (for messages) */
	uint64_t frames; /* complete frames so far */
	/* internal */
	int state;
	char line[AGENT_HEADER_MAX + 1]; /* the header being read */
	size_t line_len;
	char hdr[AGENT_HEADER_MAX + 1]; /* the current frame's header, split */
	struct agent_msg msg;		/* its fields */
	struct strbuf chunk;		/* payload bytes not delivered yet */
	uint64_t remaining;		/* payload bytes not read yet */
	bool synced;			/* a HELLO was seen (AGENT_READER_SYNC) */
	enum status failed;
	char *failed_msg;
};

void agent_reader_init(struct agent_reader *r, unsigned flags);
void agent_reader_release(struct agent_reader *r);

/* Consume len bytes of the stream (any split), calling fn per message. */
enum status agent_reader_feed(struct agent_reader *r, const char *buf, size_t len, agent_msg_fn *fn,
			      void *data);

/*
 * The stream ended. OK at a frame boundary (a partial noise line is
 * delivered first); ERR_PROTOCOL naming the frame and how much of it came
 * when it ended inside one.
 */
enum status agent_reader_eof(struct agent_reader *r, agent_msg_fn *fn, void *data);

/* True between frames: nothing half-read. */
bool agent_reader_idle(const struct agent_reader *r);

/*
 * HELLO, checked: proto must be AGENT_PROTO_VERSION, else ERR_PROTOCOL
 * saying which versions met and to rebuild the appliance. ERR_PROTOCOL too
 * for a msg that is not HELLO.
 */
struct agent_hello {
	unsigned proto;
	char agent_version[64];
	char arch[64];
	char kernel_release[256];
};
enum status agent_hello_parse(const struct agent_msg *msg, struct agent_hello *hello);

/*
 * The order of a session's frames, as the host checks it: what the guest
 * may send depends on the last command the host sent.
 *
 *	before HELLO		HELLO (then READY)
 *	after READY		nothing but ERR (a refused FILE) and READY (the
 *				answer to a command sent before that one)
 *	RUN, RERUN		[OUT|ERR...] RESULT EXIT READY, or ERR... READY:
 *				one RESULT, then one EXIT, then READY; no OUT
 *				after RESULT or ERR
 *	SHELL			SHELLREADY (once) or ERR, then READY
 *	POWEROFF		READY, ERR, then BYE; nothing after BYE
 *	another command		[ERR] READY (the agent skips what it does not know)
 * LOG and HB may come at any time after HELLO (and LOG before it); a frame
 * of an unknown type is skipped anywhere; a host command from the guest is
 * out of order anywhere. Payloads have caps: OUT, LOG and ERR at most
 * AGENT_CHUNK_MAX bytes, RESULT at most the result_max given.
 *
 * Call sequence:
 *	agent_order_init(&o, result_max);
 *	host sends a command: agent_order_sent(&o, AGENT_RUN...) (FILE: no change)
 *	each agent_msg: agent_order_check(&o, msg): OK, or ERR_PROTOCOL
 *	saying what came out of order (the session cannot be trusted after it)
 * Only the first piece of a frame (offset 0) is checked.
 */
struct agent_order {
	int state;
	uint64_t result_max;
	bool result, exit, err, shellready;
};

void agent_order_init(struct agent_order *o, uint64_t result_max);
void agent_order_sent(struct agent_order *o, enum agent_type command);
enum status agent_order_check(struct agent_order *o, const struct agent_msg *msg);

/*
 * Builders: each appends one frame to out.
 *
 * agent_frame() is the general one: type must be a valid TYPE and args
 * NULL or valid arguments separated by single spaces (the last of which
 * must not look like +LEN), and the header must fit AGENT_HEADER_MAX;
 * anything else is a bug in fswb (BUG()). With payload NULL the frame has
 * none; otherwise " +len" and the len bytes follow (len may be 0).
 */
void agent_frame(struct strbuf *out, const char *type, const char *args, const void *payload,
		 size_t len);

/*
 * A FILE name: 1 to AGENT_NAME_MAX characters of A-Z a-z 0-9 '.' '_' '-'
 * '+', not starting with '.', '-' or '+' (so no '/', no "..", no hidden
 * file, nothing an option parser takes). The agent checks the same.
 */
bool agent_file_name_ok(const char *name);

/* FILE: ERR_INVALID for a bad name or a mode above 07777. */
enum status agent_frame_file(struct strbuf *out, const char *name, unsigned mode, const void *data,
			     size_t len);
void agent_frame_run(struct strbuf *out);
/*
 * RERUN: test is a test name as check takes it ("generic/001"): 1 to
 * AGENT_NAME_MAX characters of A-Z a-z 0-9 '.' '_' '-' '/', not starting
 * with '-', '/' or '.'; ERR_INVALID otherwise. The agent checks the same.
 */
enum status agent_frame_rerun(struct strbuf *out, const char *test);
void agent_frame_shell(struct strbuf *out);
void agent_frame_poweroff(struct strbuf *out);

/*
 * The job: what the host tells the agent to do, written as job.env (sent
 * as FILE job.env, sourced by the agent's POSIX sh).
 */
struct agent_job {
	const char *fstests_dir; /* NULL: AGENT_FSTESTS_DIR */
	/*
	 * Where the agent stores the FILEs: NULL: AGENT_JOB_DIR. The agent
	 * refuses to run when its own job directory is another (a guest's
	 * agent started with another --workdir), since paths in check_tests
	 * (-E DIR/exclude) and config would then point nowhere.
	 */
	const char *job_dir;
	const char *fstyp; /* FSWB_FSTYP, for messages; may be NULL */
	/*
	 * The FILE holding local.config ("local.config"), run as check's
	 * HOST_OPTIONS=JOB_DIR/NAME, so the fstests tree is never changed;
	 * NULL: check reads the fstests tree's own local.config.
	 */
	const char *config;
	/* RESULT_BASE when local.config sets one; NULL: FSTESTS/results */
	const char *result_base;
	/*
	 * Directories check mounts on (TEST_DIR, SCRATCH_MNT): before the
	 * job each one is unmounted if something is mounted there, then
	 * created. NULL-terminated; NULL for none.
	 */
	const char *const *mount_points;
	/* mkfs for TEST_DEV as an argv ("mkfs.ext4", "-F", "/dev/vdb"); NULL: none */
	const char *const *mkfs_test;
	/*
	 * A file system served over NFS by the guest itself (serve = nfs,
	 * core/profile.h): mkfs_scratch makes the SCRATCH disk as mkfs_test
	 * makes TEST (first job of a guest only; NULL: none); nfs_exports is
	 * NULL-terminated pairs of a device and an absolute directory ("/dev/vdb",
	 * "/srv/fswb/test", ...), each mounted as nfs_base ("ext4") there and
	 * exported to 127.0.0.1 (rw, sync, no_root_squash, an fsid each) by
	 * an NFS server the agent starts (rpcbind, nfsd, mountd) before check
	 * runs; NULL: nothing served.
	 */
	const char *const *mkfs_scratch;
	const char *const *nfs_exports;
	const char *nfs_base;
	/* check's options, for RUN and RERUN ("-R", "xunit", "-T", "-s", "ext4_4k") */
	const char *const *check_opts;
	/* check's test selection, for RUN only ("-g", "quick", "-E", FILE, "generic/001") */
	const char *const *check_tests;
	/* "NAME=value" for check's environment (SOAK_DURATION=3m); NULL: none */
	const char *const *env;
};

/*
 * Append the job.env text for job to out. Every value is quoted with
 * sq_quote() (core/util.h), and the argv lists are kept as one variable of
 * quoted words each (sq_quote_argv(), then quoted again), which the agent
 * reads back with `eval "set -- $FSWB_CHECK_OPTS"`: values may hold any
 * byte but NUL (quotes, spaces, $, `, \ and newlines included).
 *
 * The variables:
 *	FSWB_PROTO		AGENT_PROTO_VERSION (the agent refuses others)
 *	FSWB_JOB_DIR		job->job_dir
 *	FSWB_FSTESTS_DIR	job->fstests_dir
 *	FSWB_FSTYP		job->fstyp or empty
 *	FSWB_CONFIG		job->config or empty
 *	FSWB_RESULT_BASE	job->result_base or empty
 *	FSWB_MOUNT_POINTS	quoted words
 *	FSWB_MKFS_TEST		quoted words (empty: no mkfs)
 *	FSWB_MKFS_SCRATCH	quoted words (empty: no mkfs)
 *	FSWB_NFS_EXPORTS	quoted words, DEV DIR pairs (empty: nothing served)
 *	FSWB_NFS_BASE		job->nfs_base or empty
 *	FSWB_CHECK_OPTS		quoted words
 *	FSWB_CHECK_TESTS	quoted words
 *	FSWB_CHECK_ENV		quoted words, each NAME=value
 *
 * ERR_INVALID (nothing appended) for an env entry without '=' or with a
 * NAME that is not [A-Za-z_][A-Za-z0-9_]*, for a job_dir or fstests_dir
 * that is not absolute, for a config that fails agent_file_name_ok(), or
 * for an empty word in mkfs_test or mkfs_scratch, for nfs_exports that are
 * not pairs or whose directories are not absolute, and for nfs_exports
 * without an nfs_base of lower-case letters and digits.
 */
enum status agent_job_env(struct strbuf *out, const struct agent_job *job);

/* JOB_DIR/name, the path the agent gives a FILE (for -E and the like). free() it. */
char *agent_job_path(const struct agent_job *job, const char *name);

#endif
