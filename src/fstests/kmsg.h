/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The kernel-log splitter: a serial console or `dmesg -w` stream in, one
 * KMSG event per line out, cut into per-test slices at check's markers.
 *
 * Before each test check writes "run fstests TEST at YYYY-MM-DD HH:MM:SS"
 * to /dev/kmsg; the kernel prints it like any message:
 *
 *	[   28.968477] run fstests generic/002 at 2026-12-03 08:03:27
 *
 * (with printk.time=0 there is no stamp; read raw from /dev/kmsg it comes
 * as "12,345,6789,-;run fstests ..."). check's _check_dmesg takes the log
 * from that marker on as the test's, and so does this module: a marker
 * line and every line after it, up to the next marker, belong to its test.
 * A test run again (-L, -i) has a marker, and a slice, per run.
 *
 * Input: bytes in any chunks. Lines end at '\n'; every '\r' (CR LF endings,
 * "\r\r\n" of serial drivers) and NUL is dropped; ANSI escape sequences
 * (CSI "ESC [ ... final", OSC "ESC ] ... BEL", and two- and three-byte ones
 * such as "ESC c") are removed; other control bytes but TAB become '?',
 * and so does every byte that is not part of valid UTF-8, so that the text
 * of every event is valid UTF-8. A line that comes to nothing but blanks
 * is dropped. A console mixes the kernel's lines with other output that
 * has no newline of its own ("generic/002        [   28.968477] run
 * fstests ..."): a line is cut before every kernel stamp ("[" blanks
 * digits "." six digits "]") that does not start it, and a piece that
 * holds nothing but blanks and bracketed stamps is dropped. A line longer
 * than KMSG_LINE_MAX bytes (as received) is cut there and the rest of it,
 * up to its newline, dropped. Nothing is emitted for a line before its
 * newline, or before kmsg_finish() for a last line without one.
 *
 * Events (synchronously from feed() and finish(); pointers valid during
 * the call only; config is the one given to kmsg_new(), may be NULL):
 *	KMSG	u.line.text the cleaned line (its stamp kept), u.line.flags
 *		enum kmsg_flag (core/event.h: KMSG_MARKER on a marker, the
 *		KMSG_BAD bits as kmsg_classify() gives them), u.line.test the
 *		test whose slice the line is in, NULL before the first marker
 *		or after kmsg_end_slice()
 *	WARNING	once, when a slice file cannot be written (kmsg_status() then
 *		has the message); slices stop, events go on
 *
 * Call sequence:
 *	k = kmsg_new(bus, config);
 *	kmsg_set_slice_dir(k, "RUN/results/CONFIG");   optional, before feeding
 *	kmsg_set_tail(k, 40);                          optional
 *	kmsg_feed(k, buf, len);                        any number of times
 *	kmsg_end_slice(k);                             optional: check is done
 *	kmsg_finish(k);                                once, at the end
 *	kmsg_tail(k, &sb) ... kmsg_status(k) ...       any time
 *	kmsg_write_slices(k, dest);                    optional, after finish
 *	kmsg_free(k);
 *
 * Slices on disk: with a slice directory DIR, each line of a test's slice
 * is appended, as the event's text and '\n', to DIR/TEST.kmsg as it comes:
 * DIR/generic/002.kmsg, beside the generic/002.full check leaves in its
 * results directory (DIR is that directory: RESULT_BASE, or RESULT_BASE/
 * SECTION). Files are opened to append, so every run of a test (-L, -i)
 * lands in one file, each run starting with its own marker line; give a
 * directory of this run alone. At most KMSG_SLICE_MAX bytes are written
 * per run of a test, then one line "[fswb: kernel log of TEST cut at N
 * MiB]" and nothing more until the next marker. The files are complete
 * up to the last line fed, so a guest that dies leaves the slice of the
 * test it died in.
 *
 * Memory is bounded whatever the input: one line of KMSG_LINE_MAX bytes,
 * the tail (at most KMSG_TAIL_MAX lines of at most KMSG_LINE_MAX bytes).
 */
#ifndef FSWB_FSTESTS_KMSG_H
#define FSWB_FSTESTS_KMSG_H

#include <stdbool.h>
#include <stddef.h>

#include "core/event.h"
#include "core/status.h"
#include "core/util.h"

#define KMSG_LINE_MAX	  (8u * 1024) /* longer lines are cut */
#define KMSG_TAIL_DEFAULT 40u	      /* lines kept for kmsg_tail() */
#define KMSG_TAIL_MAX	  1000u	      /* kmsg_set_tail() limit */
#define KMSG_SLICE_MAX	  (16u << 20) /* bytes written per run of a test */

struct kmsg;

/* bus receives the events; config names them (may be NULL). */
struct kmsg *kmsg_new(struct event_bus *bus, const char *config);
/* Closes the slice file; NULL is fine. */
void kmsg_free(struct kmsg *k);

/*
 * Save each slice below dir (see above); dir is created when missing.
 * ERR_IO when it cannot be (message set; no slices are saved then).
 */
enum status kmsg_set_slice_dir(struct kmsg *k, const char *dir);
/* Keep the last lines lines (at most KMSG_TAIL_MAX; 0 keeps none). */
void kmsg_set_tail(struct kmsg *k, unsigned lines);

/* Feed the next len bytes of the log. Never fails. */
void kmsg_feed(struct kmsg *k, const char *buf, size_t len);
/*
 * check has ended (its summary came): lines from now on belong to no test
 * until the next marker.
 */
void kmsg_end_slice(struct kmsg *k);
/*
 * The tests are over (a shell in the guest follows): the slice ends, and
 * markers from now on (a check run by hand) open no slice and name no test.
 */
void kmsg_stop_slices(struct kmsg *k);
/* The stream ended: emit a last line without newline, close the slice. */
void kmsg_finish(struct kmsg *k);

/* The test whose slice is open, or NULL. */
const char *kmsg_current_test(const struct kmsg *k);
/* KMSG_BAD bits seen in the open slice (0 when none is open). */
unsigned kmsg_slice_flags(const struct kmsg *k);
/* The last lines (as emitted, oldest first), each with '\n', appended to out. */
void kmsg_tail(const struct kmsg *k, struct strbuf *out);
/* Lines emitted, and lines cut at KMSG_LINE_MAX. */
size_t kmsg_lines(const struct kmsg *k);
size_t kmsg_cut_lines(const struct kmsg *k);
/* OK, or the first failure to write a slice (its message in *message, may be NULL). */
enum status kmsg_status(const struct kmsg *k, const char **message);

/*
 * Copy every slice file written so far (DIR/GROUP/NAME.kmsg) into dest,
 * with the same relative paths, replacing files of the same name. OK with
 * nothing to do when no slice directory was set or dest is that directory.
 */
enum status kmsg_write_slices(struct kmsg *k, const char *dest);

/* The slice file of test below dir: "DIR/generic/002.kmsg" (free() it). */
char *kmsg_slice_path(const char *dir, const char *test);

/*
 * The flags of one line of kernel log, as check's _check_dmesg sees it:
 *	KMSG_BUG	"kernel BUG at", "BUG:" (not after a letter, digit or
 *			'_'), "BUG ... remaining" (slab leaks)
 *	KMSG_WARNING	"WARNING:"
 *	KMSG_OOPS	"Oops:", "general protection fault"
 *	KMSG_LOCKDEP	"possible recursive locking detected", "suspicious RCU
 *			usage", "possible circular locking dependency detected"
 *	KMSG_OTHER_BAD	"oom-kill", "UBSAN:"
 * and, beyond what check looks for, KMSG_PANIC for "Kernel panic",
 * KMSG_OTHER_BAD for "Out of memory" and "INFO: task ... blocked for more
 * than". Case matters, as in check's grep. check's own filter applies:
 * "BUG: MAX_LOCKDEP_CHAIN_HLOCKS too low", "BUG: MAX_STACK_TRACE_ENTRIES too
 * low" and "WARNING: Reset corrupted AGFL" get no flag. Never KMSG_MARKER.
 */
unsigned kmsg_classify(const char *text, size_t len);

/*
 * Is text check's marker? The length of the test name in it (*name set to
 * where it starts), else 0. The marker may follow a stamp or a record
 * header ("[ 1.5] ", "6,12,34,-;"): "run fstests " must start the text or
 * follow ' ', ']', ';' or '>', and be followed by a test name and " at ".
 */
size_t kmsg_marker(const char *text, size_t len, const char **name);

#endif
