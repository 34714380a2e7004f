/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench_ui: the live run view's cost: one frame, sitting idle, its memory.
 *
 * The run view of a live run, drawn by the real code into a real curses
 * screen: stdin and stdout are the slave of a pseudo-terminal (TERM=
 * xterm-256color, LC_ALL=C.UTF-8, colours on), ui_display_init() sets
 * curses up as the TUI does, and a child process drains the master so
 * that writes never block (its CPU is not the bench's). The run is 5,000
 * tests of ext4/4k, all listed as pending with earlier times (as
 * ui_run_start() lists them), 4,000 finished (passed, failed with an
 * output mismatch, a WARNING or a BUG in dmesg, not run, excluded), one
 * running, 999 to go. Its events go through the same path as a live
 * run's: a bus with run_model_listener() and a listener that calls
 * ui_dirty() (as run_live.c's does); test and stage events are emitted on
 * it, and the serial console's text (check's "run fstests TEST at ..."
 * markers, mount messages, WARNING/BUG/Oops lines with call traces) goes
 * through the kernel-log splitter (kmsg_feed()) into KMSG events, the way
 * the engine feeds it, with the loop run after each chunk so frames are
 * drawn, rate-limited, while it comes.
 *
 *  1. A frame with 100,000 kernel-log lines: the time of one frame of the
 *     run view as the TUI draws it (ui_dirty(), then the loop runs the
 *     frame timer: erase(), which marks every cell changed, the view's
 *     draw, refresh()), at 200x60 and 80x24: following the log with a new
 *     kernel line before each frame; the same with the whole screen
 *     repainted (clearok(curscr), as after Ctrl-L or a resize); and
 *     scrolled back to the middle of the log (through the view's own keys:
 *     Tab, Home, Down). The median and the worst of FRAMES frames each;
 *     target: a median under 5 ms.
 *  2. Idle: the live run view with nothing happening for 3 s, in the loop
 *     as ui_main() waits in it (loop_run_once(loop, -1), the tty watched,
 *     the 1 s clock of a live run redrawing the elapsed time, as
 *     run_live.c's tick timer does). CPU (getrusage(RUSAGE_SELF) user+sys)
 *     over wall time; target: under 1% of a core. A live run's engine has
 *     its own 1 s watch timer too, not driven here (there is no guest).
 *  3. Memory: peak RSS (VmHWM in /proc/self/status) of the process after
 *     the same run with a 1,000,000-line kernel log drawn live at 200x60;
 *     measured first, so nothing else has raised the high-water mark;
 *     target: under 64 MiB.
 *
 * No hook in the UI: the frame timings clear ui.last_frame_ms before each
 * frame so that the UI_FRAME_MS rate limit does not pace them, and the
 * tick timer is the one ui_run_start() adds (ui.tick_timer, calling
 * ui_dirty()), since a live run cannot be started without a guest.
 * It also prints how many bytes curses wrote to the terminal in all (the
 * drainer counts them), to show the frames were really put out. It
 * exits 1 only when it could not measure (no pseudo-terminal, no curses
 * screen of the size asked, events that did not reach the model).
 *
 *	build/bench/bench_ui [FRAMES]     default 200
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "core/event.h"
#include "core/loop.h"
#include "core/util.h"
#include "fstests/kmsg.h"
#include "view/runmodel.h"
#include "ui/ui_int.h" /* last: it includes curses */

#define TARGET_FRAME_MS 5.0
#define TARGET_IDLE_PCT 1.0
#define TARGET_PEAK_KIB (64u * 1024)
#define NTESTS		5000u
#define NDONE		4000u /* then one running, the rest to go */
#define FRAME_LINES	100000u
#define MEM_LINES	1000000u
#define BOOT_LINES	400u
#define IDLE_MS		3000
#define READ_CHUNK	65536 /* what the QEMU backend reads from the console at once */
#define CONFIG		"ext4/4k"
#define RESULTS		"/opt/fstests/results/ext4-4k"

/* ---- the pseudo-terminal ---- */

static pid_t drainer = -1;
static int drained_fd = -1; /* the drainer writes there how many bytes it read */

/* A pty of rows x cols; its slave in *slave; a child reads its master until the end. */
static bool
pty_open(int rows, int cols, int *slave)
{
	struct winsize ws = { .ws_row = (unsigned short)rows, .ws_col = (unsigned short)cols };
	int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC), s, p[2];
	const char *name;

	if (m < 0 || grantpt(m) || unlockpt(m) || !(name = ptsname(m))) {
		fprintf(stderr, "bench_ui: could not measure: no pseudo-terminal: %s\n",
			strerror(errno));
		return false;
	}
	s = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (s < 0 || ioctl(s, TIOCSWINSZ, &ws) < 0) {
		fprintf(stderr, "bench_ui: could not measure: cannot open '%s': %s\n", name,
			strerror(errno));
		return false;
	}
	if (pipe2(p, O_CLOEXEC) < 0) {
		fprintf(stderr, "bench_ui: could not measure: pipe: %s\n", strerror(errno));
		return false;
	}
	fflush(NULL);
	drainer = fork();
	if (drainer < 0) {
		fprintf(stderr, "bench_ui: could not measure: fork: %s\n", strerror(errno));
		return false;
	}
	if (drainer == 0) {
		/* the terminal: read everything until the last slave is closed */
		static char buf[READ_CHUNK];
		unsigned long long total = 0;
		ssize_t n;

		close(s);
		close(p[0]);
		while ((n = read(m, buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR))
			if (n > 0)
				total += (unsigned long long)n;
		_exit(write(p[1], &total, sizeof(total)) == sizeof(total) ? 0 : 1);
	}
	close(m);
	close(p[1]);
	drained_fd = p[0];
	*slave = s;
	return true;
}

/* The terminal changes size: what ui.c's SIGWINCH callback does. */
static bool
term_resize(struct ui *ui, int slave, int rows, int cols)
{
	struct winsize ws = { .ws_row = (unsigned short)rows, .ws_col = (unsigned short)cols };

	if (ioctl(slave, TIOCSWINSZ, &ws) < 0)
		return false;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row && ws.ws_col)
		resizeterm(ws.ws_row, ws.ws_col);
	getmaxyx(stdscr, ui->rows, ui->cols);
	clearok(stdscr, TRUE);
	ui_dirty(ui);
	return ui->rows == rows && ui->cols == cols;
}

/* ---- measuring ---- */

static double
cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* ---- the run ---- */

enum kind { KIND_PASS, KIND_MISMATCH, KIND_DMESG, KIND_FSCK, KIND_NOTRUN, KIND_EXPUNGED };

/* 80% pass, 4% fail (mismatch, WARNING in dmesg, fsck with a BUG), 10% not run, 2% excluded */
static enum kind
kind_of(unsigned i)
{
	unsigned k = i % 50;

	if (k < 40)
		return KIND_PASS;
	if (k < 42)
		return KIND_MISMATCH;
	if (k == 42)
		return KIND_DMESG;
	if (k == 43)
		return KIND_FSCK;
	return k < 49 ? KIND_NOTRUN : KIND_EXPUNGED;
}

static void
test_name(unsigned i, char *buf, size_t len)
{
	static const char *const groups[] = { "generic", "xfs", "ext4", "btrfs", "overlay" };

	snprintf(buf, len, "%s/%03u", groups[i / 1000 % ARRAY_SIZE(groups)], i % 1000 + 1);
}

/* An earlier run's time, or -1 for a test new since. */
static double
prev_of(unsigned i)
{
	if (i % 13 == 5)
		return -1;
	return i % 101 == 0 ? 600 + i % 7 : 1 + (double)(i * 37 % 97) / 3.0;
}

struct feeder {
	struct ui *ui;
	struct run_model *m;
	struct event_bus bus;
	struct kmsg *k;
	struct strbuf con; /* console text not fed yet */
	double uptime;
	uint64_t lines;	 /* kernel-log lines written to the console */
	uint64_t frames; /* frames drawn while feeding */
	uint64_t last_frame;
};

/* run_live.c's listener: a burst of events is one frame, rate-limited. */
static void
on_ui_event(void *data, const struct event *ev)
{
	ui_dirty(data);
}

/* After a read, the TUI's loop runs what is due: the frame timer among it. */
static void
feeder_loop(struct feeder *f)
{
	loop_run_once(f->ui->loop, 0);
	if (f->ui->last_frame_ms != f->last_frame) {
		f->last_frame = f->ui->last_frame_ms;
		f->frames++;
	}
}

/* The console's text so far goes to the kernel-log splitter, as the engine's on_console. */
static void
feeder_flush(struct feeder *f)
{
	if (f->con.len) {
		kmsg_feed(f->k, f->con.buf, f->con.len);
		strbuf_reset(&f->con);
	}
	feeder_loop(f);
}

/* One kernel line on the console, with its stamp. */
static void kline(struct feeder *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
kline(struct feeder *f, const char *fmt, ...)
{
	unsigned s = (unsigned)f->uptime, us = (unsigned)((f->uptime - s) * 1e6);
	char text[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	strbuf_addf(&f->con, "[%5u.%06u] %s\n", s, us, text);
	f->lines++;
	f->uptime += 0.0137;
	if (f->con.len >= READ_CHUNK)
		feeder_flush(f);
}

static void
emit(struct feeder *f, struct event *ev)
{
	feeder_flush(f); /* the console's lines so far came first */
	ev->config = CONFIG;
	event_emit(&f->bus, ev);
	feeder_loop(f);
}

/* Line j of test i's kernel log (j 0 is check's marker). */
static void
test_line(struct feeder *f, unsigned i, unsigned j, const char *name)
{
	enum kind kind = kind_of(i);
	unsigned pid = 1000 + i * 7 % 30000;

	if (j == 0) {
		kline(f, "run fstests %s at 2026-12-03 %02u:%02u:%02u", name, 8 + i / 3600 % 12,
		      i / 60 % 60, i % 60);
		return;
	}
	if (kind == KIND_DMESG && j == 1) {
		kline(f,
		      "WARNING: CPU: 1 PID: %u at fs/ext4/inode.c:1234 ext4_writepages+0x1a/0x40 "
		      "[ext4]",
		      pid);
		return;
	}
	if (kind == KIND_FSCK && j == 1) {
		if (i % 1000 == 43)
			kline(f,
			      "Oops: general protection fault, probably for non-canonical address "
			      "0xdead000000000122: 0000 [#1] PREEMPT SMP NOPTI");
		else
			kline(f, "BUG: KASAN: use-after-free in ext4_xattr_set_entry+0x2a/0x90 "
				 "[ext4]");
		return;
	}
	if ((kind == KIND_DMESG || kind == KIND_FSCK) && j < 8) {
		static const char *const trace[] = {
			"CPU: 1 PID: %u Comm: fsstress Not tainted 6.1.0-57-cloud-amd64 #1",
			"Call Trace:",
			" <TASK>",
			" do_writepages+0xc1/0x1d0",
			" filemap_fdatawrite_wbc+0x5e/0x80",
			" </TASK>",
		};

		kline(f, trace[j - 2], pid);
		return;
	}
	switch ((i + j) % 6) {
	case 0:
		kline(f,
		      "EXT4-fs (vdc): mounted filesystem %08x-0000-4000-8000-%012x r/w with "
		      "ordered data mode. Quota mode: none.",
		      i, j);
		break;
	case 1:
		kline(f, "EXT4-fs (vdc): unmounting filesystem %08x-0000-4000-8000-%012x.", i, j);
		break;
	case 2:
		kline(f, "loop%u: detected capacity change from 0 to %u", j % 8,
		      8192 * (1 + j % 5));
		break;
	case 3:
		kline(f, "XFS (vdb): Mounting V5 Filesystem %08x-1111-4222-8333-%012x", i, j);
		break;
	case 4:
		kline(f, "XFS (vdb): Ending clean mount");
		break;
	default:
		kline(f, "systemd-journald[%u]: Data hash table of /run/log/journal is %u%% full.",
		      pid, 10 + j % 80);
		break;
	}
}

/* The run up to test NDONE running, with nlines kernel-log lines. */
static void
feed_run(struct feeder *f, unsigned nlines)
{
	unsigned started = NDONE + 1, per = (nlines - BOOT_LINES) / started;
	unsigned extra = (nlines - BOOT_LINES) % started;
	struct event ev;
	char name[32], reason[256], detail[1024];

	/* as ui_run_start(): the tests expected, pending */
	for (unsigned i = 0; i < NTESTS; i++) {
		test_name(i, name, sizeof(name));
		run_model_add_pending(f->m, CONFIG, name, prev_of(i));
	}
	memset(&ev, 0, sizeof(ev));
	ev.type = EV_RUN_BEGIN;
	ev.u.run.id = "20261203-080000";
	ev.u.run.total_tests = NTESTS;
	emit(f, &ev);
	emit_stage(&f->bus, EV_STAGE_BEGIN, "kernel", "6.1.0-57-cloud-amd64", -1);
	emit_stage(&f->bus, EV_STAGE_END, "kernel", NULL, 1);
	emit_stage(&f->bus, EV_STAGE_BEGIN, "appliance", "cached", -1);
	emit_stage(&f->bus, EV_STAGE_END, "appliance", NULL, 1);
	emit_stage(&f->bus, EV_STAGE_BEGIN, "boot", "qemu-system-x86_64 (KVM)", -1);
	for (unsigned j = 0; j < BOOT_LINES; j++)
		kline(f,
		      "virtio_blk virtio%u: [vd%c] 4194304 512-byte logical blocks (2.15 GB/2.00 "
		      "GiB)",
		      j % 4, 'a' + j % 4);
	emit_stage(&f->bus, EV_STAGE_END, "boot", NULL, 1);
	emit_stage(&f->bus, EV_STAGE_BEGIN, "tests", CONFIG, 0);
	memset(&ev, 0, sizeof(ev));
	ev.type = EV_SECTION;
	ev.u.section.name = CONFIG;
	ev.u.section.fstyp = "ext4";
	emit(f, &ev);

	for (unsigned i = 0; i < started; i++) {
		unsigned nl = per + (i < extra ? 1 : 0);
		enum kind kind = kind_of(i);
		double prev = prev_of(i);

		test_name(i, name, sizeof(name));
		memset(&ev, 0, sizeof(ev));
		ev.type = EV_TEST_START;
		ev.u.test_start.test = name;
		ev.u.test_start.prev_seconds = prev;
		emit(f, &ev);
		for (unsigned j = 0; j < nl; j++)
			test_line(f, i, j, name);
		if (i == NDONE)
			break; /* running */

		memset(&ev, 0, sizeof(ev));
		ev.type = EV_TEST_END;
		ev.u.test_end.test = name;
		ev.u.test_end.seconds = prev >= 0 ? prev * (0.9 + (double)(i % 5) / 20) : 3;
		switch (kind) {
		case KIND_PASS:
			ev.u.test_end.status = TS_PASS;
			break;
		case KIND_MISMATCH:
			ev.u.test_end.status = TS_FAIL;
			ev.u.test_end.reasons = FAIL_MISMATCH;
			snprintf(reason, sizeof(reason), "output mismatch (see %s/%s.out.bad)",
				 RESULTS, name);
			snprintf(detail, sizeof(detail),
				 "--- tests/%s.out\n+++ %s/%s.out.bad\n@@ -1,3 +1,3 @@\n QA output "
				 "created by %s\n-Silence is golden\n+wrote 4096 bytes, expected "
				 "8192\n",
				 name, RESULTS, name, name + strcspn(name, "/") + 1);
			ev.u.test_end.reason = reason;
			ev.u.test_end.detail = detail;
			break;
		case KIND_DMESG:
		case KIND_FSCK:
			ev.u.test_end.status = TS_FAIL;
			ev.u.test_end.reasons =
				FAIL_DMESG | (kind == KIND_FSCK ? (unsigned)FAIL_FSCK : 0u);
			snprintf(reason, sizeof(reason),
				 "_check_dmesg: something found in dmesg (see %s/%s.dmesg)",
				 RESULTS, name);
			ev.u.test_end.reason = reason;
			break;
		case KIND_NOTRUN:
			ev.u.test_end.status = TS_NOTRUN;
			ev.u.test_end.seconds = 0;
			ev.u.test_end.reason = "this test requires a valid $SCRATCH_DEV";
			break;
		case KIND_EXPUNGED:
			ev.u.test_end.status = TS_EXPUNGED;
			ev.u.test_end.seconds = -1;
			break;
		}
		emit(f, &ev);
		if (i % 50 == 49)
			emit_stage(&f->bus, EV_STAGE_PROGRESS, "tests", CONFIG,
				   (double)(i + 1) / NTESTS);
	}
	feeder_flush(f);
}

static void
feeder_init(struct feeder *f, struct ui *ui, struct run_model *m)
{
	memset(f, 0, sizeof(*f));
	f->ui = ui;
	f->m = m;
	strbuf_init(&f->con);
	f->uptime = 2.5;
	f->last_frame = ui->last_frame_ms;
	run_model_init(m);
	event_bus_add(&f->bus, run_model_listener(m));
	event_bus_add(&f->bus, (struct listener){ .on_event = on_ui_event, .data = ui });
	f->k = kmsg_new(&f->bus, CONFIG);
	kmsg_set_tail(f->k, 80); /* as the engine's CONSOLE_TAIL */
}

static void
feeder_release(struct feeder *f)
{
	kmsg_finish(f->k);
	kmsg_free(f->k);
	event_bus_release(&f->bus);
	strbuf_release(&f->con);
	run_model_release(f->m);
}

/* Did every event reach the model? */
static bool
model_complete(const struct run_model *m, uint64_t lines, const char *what)
{
	if (m->ntests == NTESTS && m->done == NDONE && m->running == (int)NDONE &&
	    m->log.next_seq == lines)
		return true;
	fprintf(stderr,
		"bench_ui: could not measure (%s): the model has %zu tests, %zu done, test %d "
		"running and %llu log lines; expected %u, %u, %u and %llu\n",
		what, m->ntests, m->done, m->running, (unsigned long long)m->log.next_seq, NTESTS,
		NDONE, NDONE, (unsigned long long)lines);
	return false;
}

/* ---- 1. frames ---- */

enum frame_mode { FM_FOLLOW, FM_REPAINT, FM_SCROLLED };

static const char *const mode_words[] = {
	[FM_FOLLOW] = "following the log, a new line each frame",
	[FM_REPAINT] = "following, whole screen repainted",
	[FM_SCROLLED] = "scrolled back to the middle of the log",
};

struct frame_result {
	int rows, cols;
	enum frame_mode mode;
	double median, worst; /* ms */
	unsigned over;	      /* frames over the target */
};

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* One frame as the TUI draws it (when its timer is due); false when none came. */
static bool
one_frame(struct ui *ui)
{
	ui_dirty(ui);
	for (int tries = 0; ui->dirty && tries < 100; tries++)
		loop_run_once(ui->loop, 2 * UI_FRAME_MS);
	if (ui->dirty)
		fprintf(stderr, "bench_ui: could not measure: the frame was not drawn\n");
	return !ui->dirty;
}

static bool
measure_frames(struct feeder *f, enum frame_mode mode, unsigned n, unsigned *line_no,
	       struct frame_result *res)
{
	struct ui *ui = f->ui;
	double *t = xcalloc(n, sizeof(*t));
	char name[32];
	bool ok = true;

	test_name(NDONE, name, sizeof(name));
	memset(res, 0, sizeof(*res));
	res->rows = ui->rows;
	res->cols = ui->cols;
	res->mode = mode;
	for (unsigned i = 0; i < n && ok; i++) {
		double t0;

		ui->last_frame_ms = 0; /* not paced by UI_FRAME_MS */
		if (mode != FM_SCROLLED) {
			/* the running test prints a line: the log moves under the view */
			test_line(f, NDONE, (*line_no)++, name);
			kmsg_feed(f->k, f->con.buf, f->con.len);
			strbuf_reset(&f->con);
		}
		if (mode == FM_REPAINT)
			clearok(curscr, TRUE);
		t0 = now_s();
		ok = one_frame(ui);
		t[i] = (now_s() - t0) * 1000;
		if (t[i] >= TARGET_FRAME_MS)
			res->over++;
	}
	if (ok) {
		qsort(t, n, sizeof(*t), cmp_double);
		res->median = n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
		res->worst = t[n - 1];
	}
	free(t);
	return ok;
}

/* The view's own keys, as the tty would give them. */
static void
key(struct ui *ui, int k)
{
	struct view *v = ui_top(ui);

	v->ops->key(ui, v, k);
}

/* Follow, follow with repaints, scrolled back: at the current size. */
static bool
frames_at_size(struct feeder *f, unsigned n, unsigned *line_no, struct frame_result *res)
{
	size_t half;

	if (!one_frame(f->ui)) /* the size's first frame, to lay the panes out */
		return false;
	if (!measure_frames(f, FM_FOLLOW, n, line_no, &res[0]) ||
	    !measure_frames(f, FM_REPAINT, n, line_no, &res[1]))
		return false;
	key(f->ui, K_TAB); /* the log has the keys */
	key(f->ui, K_HOME);
	half = f->m->log.n / 2;
	for (size_t i = 0; i < half; i++)
		key(f->ui, K_DOWN);
	if (!measure_frames(f, FM_SCROLLED, n, line_no, &res[2]))
		return false;
	key(f->ui, K_END); /* following again */
	key(f->ui, K_TAB);
	return true;
}

/* ---- 2. idle ---- */

struct idle {
	struct ui *ui;
	unsigned ticks;
	bool done;
};

/* run_live.c's 1 s clock while a run is live */
static void
on_tick(struct loop *loop, void *data)
{
	struct idle *id = data;

	id->ticks++;
	ui_dirty(id->ui);
}

static void
on_idle_end(struct loop *loop, void *data)
{
	((struct idle *)data)->done = true;
}

/* The tty, watched as ui.c's on_tty does (nothing is typed). */
static void
on_idle_tty(struct loop *loop, int fd, short revents, void *data)
{
	wint_t wch;

	if (revents & (POLLHUP | POLLERR)) {
		loop_del_fd(loop, fd);
		return;
	}
	while (get_wch(&wch) != ERR)
		;
}

static void
on_idle_winch(struct loop *loop, int signo, void *data)
{
	ui_dirty(data);
}

static void
measure_idle(struct ui *ui, double *wall, double *cpu, unsigned *ticks)
{
	struct idle id = { .ui = ui };
	uint64_t end;
	double w0, c0;

	loop_add_fd(ui->loop, STDIN_FILENO, POLLIN, on_idle_tty, ui);
	loop_watch_signal(ui->loop, SIGWINCH, on_idle_winch, ui);
	ui->tick_timer = loop_add_timer(ui->loop, 1000, true, on_tick, &id);
	one_frame(ui);
	end = loop_add_timer(ui->loop, IDLE_MS, false, on_idle_end, &id);
	w0 = now_s();
	c0 = cpu_s();
	/* ui_main()'s loop */
	while (!id.done)
		loop_run_once(ui->loop, -1);
	*cpu = cpu_s() - c0;
	*wall = now_s() - w0;
	*ticks = id.ticks;
	(void)end;
	loop_del_timer(ui->loop, ui->tick_timer);
	ui->tick_timer = 0;
	loop_del_fd(ui->loop, STDIN_FILENO);
}

/* ---- main ---- */

static void
open_view(struct ui *ui, struct run_model *m)
{
	runview_open(ui, m, false, true, "fswb \xc2\xb7 " CONFIG, NULL);
}

int
main(int argc, char **argv)
{
	unsigned nframes = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 200;
	struct frame_result res[6];
	struct run_model mem_model, model;
	struct feeder f;
	struct ui ui;
	struct test_counts counts = { 0 };
	long base_kib = 0, peak = 0, maxrss = 0, base_maxrss;
	double feed_s = 0, mem_feed_s = 0, idle_wall = 0, idle_cpu = 0;
	unsigned ticks = 0, line_no, mem_frames = 0;
	size_t held = 0, held_bytes = 0;
	unsigned long long drained = 0;
	uint64_t dropped = 0;
	int slave, saved_in, saved_out, code = 0, status;
	bool ok = false, ascii, color;

	if (!nframes || nframes > 100000) {
		fprintf(stderr, "bench_ui: give the number of frames, 1 to 100000\n");
		return 2;
	}
	setenv("TERM", "xterm-256color", 1);
	setenv("LC_ALL", "C.UTF-8", 1);
	unsetenv("NO_COLOR");
	unsetenv("FSWB_ASCII");
	unsetenv("LINES");
	unsetenv("COLUMNS");
	if (!pty_open(60, 200, &slave))
		return 1;
	saved_in = dup(STDIN_FILENO);
	saved_out = dup(STDOUT_FILENO);
	if (saved_in < 0 || saved_out < 0 || dup2(slave, STDIN_FILENO) < 0 ||
	    dup2(slave, STDOUT_FILENO) < 0) {
		fprintf(stderr, "bench_ui: could not measure: dup2: %s\n", strerror(errno));
		return 1;
	}

	memset(&ui, 0, sizeof(ui));
	ui.loop = loop_new();
	ui_display_init(&ui);
	ascii = ui.ascii;
	color = ui.color;
	if (ui.rows != 60 || ui.cols != 200) {
		fprintf(stderr, "bench_ui: could not measure: the screen is %dx%d, not 200x60\n",
			ui.cols, ui.rows);
		goto out;
	}
	base_kib = peak_kib(&base_maxrss);

	/* 3. memory: first, so the high-water mark is this run's */
	feeder_init(&f, &ui, &mem_model);
	open_view(&ui, &mem_model);
	mem_feed_s = now_s();
	feed_run(&f, MEM_LINES);
	mem_feed_s = now_s() - mem_feed_s;
	one_frame(&ui);
	mem_frames = (unsigned)f.frames + 1;
	peak = peak_kib(&maxrss);
	if (!model_complete(&mem_model, f.lines, "memory"))
		goto out;
	held = mem_model.log.n;
	held_bytes = mem_model.log.bytes;
	dropped = mem_model.log.dropped;
	ui_pop(&ui);
	feeder_release(&f);

	/* 1. frames */
	feeder_init(&f, &ui, &model);
	open_view(&ui, &model);
	feed_s = now_s();
	feed_run(&f, FRAME_LINES);
	feed_s = now_s() - feed_s;
	if (!model_complete(&model, f.lines, "frames"))
		goto out_model;
	counts = model.counts;
	line_no = (FRAME_LINES - BOOT_LINES) / (NDONE + 1);
	if (!frames_at_size(&f, nframes, &line_no, &res[0]))
		goto out_model;
	if (!term_resize(&ui, slave, 24, 80)) {
		fprintf(stderr, "bench_ui: could not measure: the screen did not go to 80x24\n");
		goto out_model;
	}
	if (!frames_at_size(&f, nframes, &line_no, &res[3]))
		goto out_model;

	/* 2. idle, at the larger size */
	if (!term_resize(&ui, slave, 60, 200)) {
		fprintf(stderr, "bench_ui: could not measure: the screen did not go to 200x60\n");
		goto out_model;
	}
	measure_idle(&ui, &idle_wall, &idle_cpu, &ticks);
	ok = true;
out_model:
	while (ui.depth)
		ui_pop(&ui);
	feeder_release(&f);
out:
	while (ui.depth)
		ui_pop(&ui);
	ui_display_end(&ui);
	loop_free(ui.loop);
	free(ui.message);
	free(ui.ask);
	fflush(stdout);
	dup2(saved_in, STDIN_FILENO);
	dup2(saved_out, STDOUT_FILENO);
	close(saved_in);
	close(saved_out);
	close(slave);
	/* the drainer sees the terminal close and ends */
	while (waitpid(drainer, &status, 0) < 0 && errno == EINTR)
		;
	if (read(drained_fd, &drained, sizeof(drained)) != sizeof(drained))
		drained = 0;
	close(drained_fd);
	if (!ok)
		return 1;

	printf("live run view of %u tests of %s (%u done: %u passed, %u failed, %u not run, %u "
	       "excluded; 1 running; %u to go), %s, %s, TERM=xterm-256color on a pty\n",
	       NTESTS, CONFIG, NDONE, counts.passed, counts.failed, counts.notrun, counts.expunged,
	       NTESTS - NDONE - 1, ascii ? "ASCII" : "UTF-8", color ? "colours" : "no colours");
	printf("the terminal got %.1f MiB from curses in all\n", drained / 1048576.0);
	printf("frames: %u kernel-log lines fed in %.2f s (the view's ring holds the last %u), "
	       "%u frames each\n",
	       FRAME_LINES, feed_s, RUN_MODEL_LOG_LINES, nframes);
	for (size_t i = 0; i < ARRAY_SIZE(res); i++) {
		const struct frame_result *r = &res[i];

		printf("  frame %3dx%-2d %-42s median %6.3f ms, worst %6.3f ms", r->cols, r->rows,
		       mode_words[r->mode], r->median, r->worst);
		printf("; target under %.0f ms: %s", TARGET_FRAME_MS,
		       r->median < TARGET_FRAME_MS ? "met" : "MISSED");
		if (r->over)
			printf(" (%u of %u frames over)", r->over, nframes);
		printf("\n");
	}
	printf("idle: %.2f s of the live view with nothing happening (the 1 s clock: %u "
	       "frames): %.4f s CPU, %.3f%% of a core; target under %.0f%%: %s\n",
	       idle_wall, ticks, idle_cpu, 100 * idle_cpu / idle_wall, TARGET_IDLE_PCT,
	       100 * idle_cpu / idle_wall < TARGET_IDLE_PCT ? "met" : "MISSED");
	printf("memory: %u kernel-log lines fed in %.2f s, drawn live at 200x60 (%u frames); "
	       "the ring held %zu lines, %.1f MiB, %llu dropped\n",
	       MEM_LINES, mem_feed_s, mem_frames, held, held_bytes / 1048576.0,
	       (unsigned long long)dropped);
	printf("peak RSS: %.1f MiB (VmHWM; ru_maxrss %.1f MiB), %.1f MiB after curses set-up\n",
	       peak / 1024.0, maxrss / 1024.0, base_kib / 1024.0);
	printf("target: under %u MiB; ratio %.2f of the target: %s\n", TARGET_PEAK_KIB / 1024,
	       (double)peak / TARGET_PEAK_KIB, peak < (long)TARGET_PEAK_KIB ? "met" : "MISSED");
	(void)base_maxrss;
	return code;
}
