/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * An agent behind a child process's pipes: the part the backends that
 * reach the guest agent over a byte stream share (stdio runs the agent
 * itself; ssh runs a worker that holds the connection).
 *
 * The child's stdin is a socket (writing after its end is EPIPE, not
 * SIGPIPE) fed from a queue that never blocks the loop; its stdout is the
 * agent's control stream; its stderr and, when given, one more fd are the
 * console (the kernel log, messages). on_exit is called once, from the
 * loop, when the child has exited and every stream has ended; its why is
 * how the child ended (or, with why_from_err, the last line it wrote on
 * stderr).
 *
 *	agent_pipe_init(&p, loop, cb, data);
 *	agent_pipe_start(&p, &spawn_opts, lease, console_fd);   argv or fn
 *	agent_pipe_send(&p, bytes, n)*
 *	agent_pipe_cancel(&p)            SIGTERM now, SIGKILL after a grace
 *	agent_pipe_release(&p)           kills and reaps what is left
 */
#ifndef FSWB_BACKENDS_AGENTPIPE_H
#define FSWB_BACKENDS_AGENTPIPE_H

#include <signal.h>

#include "backends/backend.h"
#include "core/spawn.h"

struct agent_pipe {
	struct loop *loop;
	struct session_callbacks cb;
	void *data;
	struct child *child;
	int in;	 /* the child's stdin, fswb's end */
	int con; /* one more console stream, or -1 */
	struct strbuf outq;
	struct strbuf errline; /* the last complete line on stderr, and the one being read */
	char *last_err;
	bool cancelled, notified, out_open, err_open, con_open;
	bool close_in; /* the child's stdin ends once the queue is sent */
	uint64_t kill_timer;
	char *why_exit;
	/*
	 * stderr is the child's own words, not console: why it ended is the
	 * last line it wrote there (a worker that holds a connection)
	 */
	bool why_from_err;
	/* the child's exit status that says its machine was taken away (a spot
	   instance preempted): on_exit's code is ERR_PREEMPTED; 0: none */
	int preempted_exit;
	/* the exit status that says the machine's provider had no room for it
	   (a quota): on_exit's code is ERR_NOROOM; 0: none */
	int noroom_exit;
	/* optional: called when the child is gone or killed (stdio stops check's group) */
	void (*on_gone)(void *owner);
	void *owner;
};

void agent_pipe_init(struct agent_pipe *p, struct loop *loop, const struct session_callbacks *cb,
		     void *data);
/*
 * Start o (its in, out, err and on_exit are set here) and watch its
 * streams; con_fd (or -1) is read as console too and closed by release.
 */
enum status agent_pipe_start(struct agent_pipe *p, struct spawn_opts *o, struct lease *lease,
			     int con_fd);
enum status agent_pipe_send(struct agent_pipe *p, const void *buf, size_t len);
void agent_pipe_cancel(struct agent_pipe *p);
/* Once what is queued is sent, the child's stdin ends (it reads EOF). */
void agent_pipe_close_input(struct agent_pipe *p);
void agent_pipe_release(struct agent_pipe *p);

/*
 * Machines that are kept (ssh hosts, adb devices): the run remembers whose
 * agent spoke (agent_reach_prepare and _discard are the backends' prepare
 * and discard slots), so that a later session of a machine that went away
 * waits for it to come back (a reboot) instead of failing at once. A
 * session's agent_kept passes the engine's callbacks through its pipe and
 * marks its machine reached at the agent's first bytes.
 */
enum status agent_reach_prepare(struct loop *loop, const struct plan *plan, struct lease *lease,
				void **priv);
void agent_reach_discard(void *priv);

struct agent_kept {
	struct agent_pipe pipe;	     /* why_from_err: a worker holds the machine */
	struct session_callbacks cb; /* the engine's */
	void *data;
	bool *reached;	/* this machine's mark in the run's, or NULL */
	bool reconnect; /* it was reached before in this run: it may be rebooting */
	int notes[2];	/* the worker's notes and kernel log: the pipe's ends */
};

/* k for machine slot of run (agent_reach_prepare's, or NULL), with the engine's cb and data. */
void agent_kept_init(struct agent_kept *k, struct loop *loop, void *run, unsigned slot,
		     const struct session_callbacks *cb, void *data);
/*
 * Start fn(arg), the worker that holds the machine, behind k's pipe: its
 * own process group, dying with fswb; in it, agent_kept_worker() first.
 */
enum status agent_kept_start(struct agent_kept *k, int (*fn)(void *), void *arg, const char *name,
			     struct lease *lease);
/* In the worker: its signals (agent_worker_signals), its notes to the console; the console's fd. */
int agent_kept_worker(struct agent_kept *k);
void agent_kept_release(struct agent_kept *k);
/* The send and cancel slots of a backend whose session's first member is its agent_kept. */
enum status agent_kept_send(void *priv, const void *buf, size_t len);
void agent_kept_cancel(void *priv);

/*
 * For a worker (spawn's fn mode) behind an agent pipe: agent_worker_signals()
 * makes SIGTERM set agent_worker_stop (the worker stops its machine and
 * ends) and ignores SIGPIPE; agent_worker_say() writes why it ends, a line
 * on stderr (the session's why, with why_from_err).
 */
extern volatile sig_atomic_t agent_worker_stop;
void agent_worker_signals(void);
void agent_worker_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * What the worker does, "fswb: ..." lines on agent_worker_note_fd (the
 * console the user reads beside the kernel log; nothing while it is -1).
 */
extern int agent_worker_note_fd;
void agent_worker_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* All of buf to fd, through EINTR and (a non-blocking fd) EAGAIN; false when it cannot. */
bool agent_write_all(int fd, const char *buf, size_t len);

#endif
