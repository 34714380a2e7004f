/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Status codes, errors and broken invariants.
 *
 * Every fallible function below src/ui returns an enum status. When it fails
 * it records a message with error() (which returns the code, so the idiom is
 * `return error(ERR_IO, "cannot read '%s': %s", path, strerror(errno));`).
 * The caller either handles it or passes the code up; main() prints
 * error_msg() once.
 *
 * Message style (as git's): lower case, no full stop, the subject in single
 * quotes, and where the user can do something about it, say what.
 *
 * The message buffer is per thread and holds the most recent error only.
 * error_prefix() adds context to it on the way up:
 *	return error_prefix(rc, "profile '%s'", name);
 * turns "unknown key 'foo'" into "profile 'ext4/4k': unknown key 'foo'".
 */
#ifndef FSWB_CORE_STATUS_H
#define FSWB_CORE_STATUS_H

#include <stdarg.h>

/* One list for the enum and its messages. */
#define STATUS_LIST(X)                                 \
	X(OK, "success")                               \
	X(ERR_NOMEM, "out of memory")                  \
	X(ERR_IO, "input/output error")                \
	X(ERR_INVALID, "invalid input")                \
	X(ERR_PARSE, "cannot parse")                   \
	X(ERR_NOTFOUND, "not found")                   \
	X(ERR_EXISTS, "already exists")                \
	X(ERR_BUSY, "in use by another process")       \
	X(ERR_SPAWN, "cannot start a program")         \
	X(ERR_CHILD, "a program failed")               \
	X(ERR_UNSUPPORTED, "not supported here")       \
	X(ERR_TIMEOUT, "timed out")                    \
	X(ERR_INTERRUPTED, "interrupted")              \
	X(ERR_PROTOCOL, "protocol error")              \
	X(ERR_LIMIT, "too large")                      \
	X(ERR_PREEMPTED, "taken away by its provider") \
	X(ERR_NOROOM, "no room at its provider")

enum status {
#define STATUS_ENUM(name, msg) name,
	STATUS_LIST(STATUS_ENUM)
#undef STATUS_ENUM
		STATUS_COUNT
};

/* The fixed description of a code, e.g. "timed out". */
const char *status_str(enum status code);

/* The symbolic name of a code, e.g. "ERR_TIMEOUT". */
const char *status_name(enum status code);

/* Record a message for the current failure and return code. */
enum status error(enum status code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
enum status verror(enum status code, const char *fmt, va_list ap);

/* Prefix the recorded message with "<prefix>: " and return code. */
enum status error_prefix(enum status code, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The most recent message; status_str() of the last code when none was set. */
const char *error_msg(void);

/* Forget the recorded message. */
void error_clear(void);

/*
 * A broken invariant: a bug in fswb, never a user error. Runs the fatal hook
 * (which restores the terminal), prints where, and aborts.
 */
#define BUG(...) bug_at(__FILE__, __LINE__, __VA_ARGS__)
_Noreturn void bug_at(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * The fatal hook runs before BUG() or die() writes anything, so that the
 * terminal is back to normal first. The UI sets it; NULL clears it.
 */
void set_fatal_hook(void (*hook)(void));
void run_fatal_hook(void);

#endif
