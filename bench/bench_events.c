/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench_events: fswb's peak memory (RSS) over a run of 1,000 tests.
 *
 * The listeners of a real run, driven as the engine drives them: check's
 * stdout for 1,000 tests (passes, not-runs, output mismatches with their
 * diffs, dmesg failures) goes through the check parser, the serial console
 * (each test's "run fstests" marker and kernel lines, a WARNING in the
 * dmesg failures) through the kernel-log splitter with per-test slice
 * files; every event is written to events.jsonl as JSON and every kernel
 * line to kernel.log, the results writer rewrites run.json after each test
 * start and end, and at the end junit.xml is written and the headless
 * printer's end-of-run report is printed (to a file). Its per-test line
 * printer is static in src/cmd/run.c, so that part is not driven here.
 *
 * Peak RSS is the process's high-water mark (VmHWM in /proc/self/status;
 * getrusage's ru_maxrss as well): target under 20 MiB. It exits 1 only
 * when it could not measure (the run did not produce the 1,000 tests).
 *
 *	build/bench/bench_events [TESTS]     default 1000
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "bench.h"
#include "core/event.h"
#include "core/event_json.h"
#include "core/paths.h"
#include "core/util.h"
#include "fstests/check_parser.h"
#include "fstests/kmsg.h"
#include "fstests/results.h"

#define TARGET_KIB (20u * 1024)
#define CONFIG	   "ext4/4k"

struct sink {
	struct event_bus *own; /* the run's bus: check events are passed on to it */
	int events_fd, kernel_fd;
	bool write_failed;
	unsigned starts, ends, kmsgs, summaries;
	struct test_counts counts;
};

static void
write_all(struct sink *s, int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n <= 0) {
			s->write_failed = true;
			return;
		}
		buf += n;
		len -= (size_t)n;
	}
}

/* As the engine's own listener: events.jsonl, kernel.log, counts. */
static void
on_own_event(void *data, const struct event *ev)
{
	struct sink *s = data;
	struct strbuf sb = STRBUF_INIT;

	event_to_json(ev, &sb);
	write_all(s, s->events_fd, sb.buf, sb.len);
	strbuf_release(&sb);
	switch (ev->type) {
	case EV_TEST_START:
		s->starts++;
		break;
	case EV_TEST_END:
		s->ends++;
		if (!ev->u.test_end.rerun)
			test_counts_add(&s->counts, ev->u.test_end.status, ev->u.test_end.seconds);
		break;
	case EV_KMSG:
		s->kmsgs++;
		write_all(s, s->kernel_fd, ev->u.line.text, strlen(ev->u.line.text));
		write_all(s, s->kernel_fd, "\n", 1);
		break;
	case EV_SUMMARY:
		s->summaries++;
		break;
	default:
		break;
	}
}

/* The check parser's events go on to the run's bus, as the engine passes them. */
static void
on_check_event(void *data, const struct event *ev)
{
	struct sink *s = data;
	struct event copy = *ev;

	event_emit(s->own, &copy);
}

/* Feed text in two pieces, as a stream comes in chunks. */
static void
feed_check(struct check_parser *p, const char *text)
{
	size_t len = strlen(text), half = len / 2;

	check_parser_feed(p, text, half);
	check_parser_feed(p, text + half, len - half);
}

static void
feed_kmsg(struct kmsg *k, const char *text)
{
	kmsg_feed(k, text, strlen(text));
}

static void
test_name(unsigned i, char *buf, size_t len)
{
	/* generic/001..generic/700, then xfs/001.. */
	if (i < 700)
		snprintf(buf, len, "generic/%03u", i + 1);
	else
		snprintf(buf, len, "xfs/%03u", i - 699);
}

/* One test: its line on check's stdout, its kernel log on the console. */
static void
one_test(struct check_parser *p, struct kmsg *k, unsigned i, double *uptime, struct strvec *notrun,
	 struct strvec *failed)
{
	const char *rb = "/opt/fstests/results/";
	char name[32], buf[1024];
	unsigned kind = i % 10;

	test_name(i, name, sizeof(name));
	snprintf(buf, sizeof(buf), "%-12s       ", name);
	feed_check(p, buf);
	snprintf(buf, sizeof(buf), "[%5u.%06u] run fstests %s at 2026-12-03 08:%02u:%02u\n",
		 (unsigned)*uptime, (unsigned)(*uptime * 1e6) % 1000000, name, i / 60 % 60, i % 60);
	feed_kmsg(k, buf);
	for (unsigned j = 0; j < 3; j++) {
		*uptime += 0.7;
		snprintf(buf, sizeof(buf),
			 "[%5u.%06u] EXT4-fs (vdc): mounted filesystem %08x-0000-4000-8000-%012x "
			 "r/w with ordered data mode. Quota mode: none.\n",
			 (unsigned)*uptime, (unsigned)(*uptime * 1e6) % 1000000, i, j);
		feed_kmsg(k, buf);
	}
	switch (kind) {
	case 6:
		feed_check(p, "[not run] this test requires a valid $SCRATCH_DEV\n");
		strvec_push(notrun, name);
		break;
	case 7:
		snprintf(buf, sizeof(buf),
			 "- output mismatch (see %s/%s.out.bad)\n"
			 "    --- tests/%s.out\t2026-12-03 06:43:10.000000000 +0000\n"
			 "    +++ %s/%s.out.bad\t2026-12-03 07:56:27.092000000 +0000\n"
			 "    @@ -1,3 +1,3 @@\n"
			 "     QA output created by %s\n"
			 "    -Silence is golden\n"
			 "    +wrote 4096 bytes, expected 8192\n"
			 "    ...\n"
			 "    (Run 'diff -u /opt/fstests/tests/%s.out %s/%s.out.bad'  to see the "
			 "entire diff)\n",
			 rb, name, name, rb, name, name + strcspn(name, "/") + 1, name, rb, name);
		feed_check(p, buf);
		strvec_push(failed, name);
		break;
	case 8:
		*uptime += 0.1;
		snprintf(buf, sizeof(buf),
			 "[%5u.%06u] WARNING: CPU: 1 PID: %u at fs/ext4/inode.c:1234 "
			 "ext4_writepages+0x1a/0x40 [ext4]\n",
			 (unsigned)*uptime, (unsigned)(*uptime * 1e6) % 1000000, 1000 + i);
		feed_kmsg(k, buf);
		snprintf(buf, sizeof(buf),
			 " 3s _check_dmesg: something found in dmesg (see %s/%s.dmesg)\n", rb,
			 name);
		feed_check(p, buf);
		strvec_push(failed, name);
		break;
	default:
		snprintf(buf, sizeof(buf), " %us\n", 2 + i % 7);
		feed_check(p, buf);
		break;
	}
	*uptime += 1.3;
}

/* The end-of-run report, as `fswb run` prints it, into a file. */
static void
print_report(const char *dir)
{
	char *path = path_join(dir, "report.txt");
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int saved;

	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	if (fd >= 0 && saved >= 0) {
		dup2(fd, STDOUT_FILENO);
		print_run_dir_summary(dir);
		fflush(stdout);
		dup2(saved, STDOUT_FILENO);
	}
	if (fd >= 0)
		close(fd);
	if (saved >= 0)
		close(saved);
	free(path);
}

static enum status
run(unsigned ntests, const char *dir, struct sink *s, struct run_record *loaded)
{
	struct event_bus own = EVENT_BUS_INIT, check_bus = EVENT_BUS_INIT;
	struct results_writer w;
	struct strvec ran = STRVEC_INIT, notrun = STRVEC_INIT, failed = STRVEC_INIT;
	struct strbuf sb = STRBUF_INIT;
	struct check_parser *p;
	struct kmsg *k;
	char *path, *slices, *list;
	double uptime = 20.5;
	struct event ev;
	enum status rc;

	path = path_join(dir, "events.jsonl");
	s->events_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	free(path);
	path = path_join(dir, "kernel.log");
	s->kernel_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	free(path);
	if (s->events_fd < 0 || s->kernel_fd < 0)
		return error(ERR_IO, "cannot create the run files in '%s'", dir);

	path = path_join(dir, "run.json");
	results_writer_init(&w, path);
	free(path);
	s->own = &own;
	event_bus_add(&own, results_writer_listener(&w));
	event_bus_add(&own, (struct listener){ on_own_event, s });
	event_bus_add(&check_bus, (struct listener){ on_check_event, s });

	memset(&ev, 0, sizeof(ev));
	ev.type = EV_RUN_BEGIN;
	ev.u.run.id = "20261203-080000";
	ev.u.run.total_tests = ntests;
	event_emit(&own, &ev);
	emit_stage(&own, EV_STAGE_BEGIN, "tests", CONFIG, -1);

	p = check_parser_new(&check_bus, CONFIG);
	k = kmsg_new(&own, CONFIG);
	kmsg_set_tail(k, 40);
	slices = path_join(dir, "results/ext4-4k");
	rc = kmsg_set_slice_dir(k, slices);
	free(slices);
	if (rc != OK)
		goto out;

	feed_check(p, "FSTYP         -- ext4\n"
		      "PLATFORM      -- Linux/x86_64 fswb 6.1.0-57-cloud-amd64 #1 SMP "
		      "PREEMPT_DYNAMIC Debian 6.1.192-3 (2026-11-26)\n"
		      "MKFS_OPTIONS  -- -F -b 4096 /dev/vdc\n"
		      "MOUNT_OPTIONS -- -o acl,user_xattr /dev/vdc /mnt/scratch\n\n");
	for (unsigned i = 0; i < ntests; i++) {
		char name[32];

		test_name(i, name, sizeof(name));
		strvec_push(&ran, name);
		one_test(p, k, i, &uptime, &notrun, &failed);
	}
	list = strvec_join(&ran, " ");
	strbuf_addf(&sb, "Ran: %s\n", list);
	free(list);
	list = strvec_join(&notrun, " ");
	strbuf_addf(&sb, "Not run: %s\n", list);
	free(list);
	list = strvec_join(&failed, " ");
	strbuf_addf(&sb, "Failures: %s\n", list);
	free(list);
	strbuf_addf(&sb, "Failed %zu of %u tests\n\n", failed.n, ntests);
	check_parser_feed(p, sb.buf, sb.len);
	check_parser_finish(p);
	kmsg_end_slice(k);
	kmsg_finish(k);
	emit_stage(&own, EV_STAGE_END, "tests", CONFIG, 1.0);

	memset(&ev, 0, sizeof(ev));
	ev.type = EV_RUN_END;
	ev.u.end.exit_code = failed.n ? 1 : 0;
	ev.u.end.counts = s->counts;
	event_emit(&own, &ev);

	rc = results_writer_flush(&w);
	if (rc == OK)
		rc = results_writer_status(&w);
	if (rc == OK) {
		path = path_join(dir, "junit.xml");
		rc = results_write_junit(path, &w.rec);
		free(path);
	}
	if (rc == OK) {
		print_report(dir);
		path = path_join(dir, "run.json");
		rc = run_record_load(path, loaded);
		free(path);
	}
out:
	check_parser_free(p);
	kmsg_free(k);
	results_writer_release(&w);
	event_bus_release(&own);
	event_bus_release(&check_bus);
	strvec_clear(&ran);
	strvec_clear(&notrun);
	strvec_clear(&failed);
	strbuf_release(&sb);
	close(s->events_fd);
	close(s->kernel_fd);
	return rc;
}

int
main(int argc, char **argv)
{
	unsigned ntests = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 1000;
	const char *tmp = getenv("TMPDIR");
	char *dir = xasprintf("%s/fswb-bench-events.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	struct sink s = { .events_fd = -1, .kernel_fd = -1 };
	struct run_record rec;
	long base_kib, peak, maxrss, base_maxrss;
	size_t ntests_json = 0;
	double t0, secs;
	enum status rc;
	int code = 0;

	if (!ntests || ntests > 100000) {
		fprintf(stderr, "bench_events: give the number of tests, 1 to 100000\n");
		return 2;
	}
	if (!mkdtemp(dir)) {
		fprintf(stderr, "bench_events: cannot create a scratch directory '%s'\n", dir);
		return 1;
	}
	run_record_init(&rec);
	base_kib = peak_kib(&base_maxrss);
	t0 = now_s();
	rc = run(ntests, dir, &s, &rec);
	secs = now_s() - t0;
	peak = peak_kib(&maxrss);
	for (size_t i = 0; i < rec.nsections; i++)
		ntests_json += rec.sections[i].ntests;

	if (rc != OK) {
		fprintf(stderr, "bench_events: could not measure: %s\n", error_msg());
		code = 1;
	} else if (s.write_failed) {
		fprintf(stderr,
			"bench_events: could not measure: writing events.jsonl or "
			"kernel.log in '%s' failed\n",
			dir);
		code = 1;
	} else if (s.starts != ntests || s.ends != ntests || ntests_json != ntests) {
		fprintf(stderr,
			"bench_events: could not measure: %u tests fed, but %u test starts, %u "
			"test ends and %zu tests in run.json\n",
			ntests, s.starts, s.ends, ntests_json);
		code = 1;
	} else {
		printf("run of %u synthetic tests: %u test events, %u kernel-log lines, %u "
		       "summary; %u passed, %u failed, %u not run; %.2f s\n",
		       ntests, s.starts + s.ends, s.kmsgs, s.summaries, s.counts.passed,
		       s.counts.failed, s.counts.notrun, secs);
		printf("listeners: check parser, kernel-log splitter with slices, events.jsonl, "
		       "kernel.log, results writer (run.json), junit.xml, end-of-run report\n");
		printf("peak RSS: %.1f MiB (VmHWM; ru_maxrss %.1f MiB), %.1f MiB at start\n",
		       peak / 1024.0, maxrss / 1024.0, base_kib / 1024.0);
		printf("target: under %u MiB; ratio %.2f of the target: %s\n", TARGET_KIB / 1024,
		       (double)peak / TARGET_KIB, peak < (long)TARGET_KIB ? "met" : "MISSED");
	}
	run_record_release(&rec);
	remove_tree(dir);
	free(dir);
	return code;
}
