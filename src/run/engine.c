/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "run/engine.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent/agent_proto.h"
#include "backends/backend.h"
#include "core/event_json.h"
#include "core/logfile.h"
#include "core/paths.h"
#include "core/spawn.h"
#include "fstests/archive.h"
#include "fstests/catalogue.h"
#include "fstests/estimate.h"
#include "fstests/check_parser.h"
#include "fstests/kmsg.h"
#include "fstests/localconfig.h"
#include "fstests/results.h"
#include "run/plan_check.h"
#include "kbuild/kbuild.h"
#include "kbuild/kernel.h"
#include "rootfs/appliance.h"
#include "rootfs/initramfs.h"
#include "run/inventory.h"

#define WATCH_MS	 1000
#define SHELL_OUT_MAX	 (1u << 20)  /* shell output queued for a front end that does not read */
#define CONSOLE_TAIL	 80	     /* kernel-log lines kept with a crashed or hung test */
#define CONSOLE_LINE_MAX (64u << 10) /* a longer line of check -n is cut */
/* A test's limit without --test-timeout: TEST_LIMIT_FACTOR times its expected time
 * (fstests/estimate.h: earlier runs, SOAK_DURATION, its groups; stretched under emulation),
 * at least TEST_LIMIT_MIN seconds. */
#define TEST_LIMIT_FACTOR 5
#define TEST_LIMIT_MIN	  600
#define TEST_LONG_FACTOR  2 /* a test past twice its expected time is flagged */

enum phase {
	PH_IDLE,
	PH_PREPARE,
	PH_BOOT,  /* session started, no HELLO yet */
	PH_TESTS, /* RUN sent */
	PH_SHELL, /* SHELL sent (plan.shell), then a shell on shell_fd */
	PH_DONE,  /* POWEROFF sent, or the guest is being stopped */
};

struct engine {
	struct plan plan;
	const struct profiles *profiles;
	struct loop *loop;
	struct event_bus *bus; /* the caller's: listeners of the front end */
	struct event_bus own;  /* ours: files of the run, then the caller's bus */
	char *id, *dir;

	/* run-wide files and listeners */
	struct results_writer results;
	struct logfile events, console, kernel_log;
	bool files_failed;
	/*
	 * Results were lost: 2 when this host could not keep them (a full disk),
	 * 1 when a guest sent a damaged archive; the least exit code of the run.
	 */
	int lost_exit;

	/* what the stages produced */
	const struct backend_ops *backend;
	struct backend_run *run;
	struct kernel kernel;
	bool have_kernel;
	struct appliance appliance;
	bool have_appliance;
	char *initrd;

	/* the configuration running now */
	size_t cfg_index;
	const struct fs_config *cfg;
	char *cfg_slug; /* "ext4-4k": file names */
	struct session *session;
	struct agent_reader reader;
	struct agent_order order;
	bool broke_protocol; /* this guest's agent did: nothing more is read from it */
	struct check_parser *parser;
	struct kmsg *kmsg;
	enum phase phase;
	uint64_t phase_ms, last_heard_ms, watch_timer;
	char *current_test;
	uint64_t test_started_ms;
	double current_expected; /* seconds it should take (estimate_test) */
	enum est_basis current_basis;
	bool current_flagged;	 /* the user was told it runs long */
	uint64_t last_output_ms; /* the guest's last kernel-log or check output */
	int guest_busy;		 /* % of the guest's CPU time busy (its heartbeat), -1: unknown */
	/*
	 * The tests of this configuration that ended, over all its guests: a
	 * guest started after a crash or a hang leaves them out (-E), and the
	 * events of its check about them (expunged) are dropped.
	 */
	struct strvec ended;
	unsigned ended_here;	    /* tests that ended in this guest */
	unsigned kmsg_bad;	    /* KMSG_BAD flags of this guest\'s kernel log */
	bool restart;		    /* start a new guest for the remaining tests */
	int shell_fd;		    /* the front end's end of the shell (plan.shell), or -1 */
	int shell_mine;		    /* ours: relayed to and from the session's shell stream */
	struct strbuf shell_out;    /* shell output the front end has not read yet */
	bool dry_run_ok;	    /* check -n ran and said which tests would run */
	struct line_asm out_line;   /* check -n's output, line by line */
	struct event_bus check_bus; /* the parser's events, through on_check_event */
	bool got_exit, got_result, boot_end_sent, job_sent;
	/*
	 * unpack_results runs tar and the loop meanwhile: a guest that ends
	 * then (Ctrl-C) must not end the configuration under it.
	 */
	bool unpacking, done_pending;
	int check_status;
	int result_fd;
	char *result_path;

	/* how long tests take: earlier runs, SOAK_DURATION, the tests' groups */
	struct estimator est;
	struct catalogue cat;
	bool have_cat;

	/* the whole run */
	struct test_counts counts;
	bool interrupted, started, done, any_test;
	int exit_code;
};

static void next_config(struct engine *e);
static void start_config(struct engine *e);
static void deferred_config_done(struct loop *loop, void *data);

static void
push_owned(struct strvec *sv, char *s)
{
	strvec_push(sv, s);
	free(s);
}

static void
close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}
static void finish_run(struct engine *e);

/* ---- events ---- */

static void
emit(struct engine *e, struct event *ev)
{
	if (!ev->config && e->cfg)
		ev->config = e->cfg->name;
	event_emit(&e->own, (struct event *)ev);
}

static void
stage(struct engine *e, enum event_type type, const char *name, const char *detail, double fraction)
{
	struct event ev = { .type = type };

	ev.u.stage.stage = name;
	ev.u.stage.detail = detail;
	ev.u.stage.fraction = fraction;
	emit(e, &ev);
}

static void
stage_end(struct engine *e, const char *name, enum status code, const char *message)
{
	struct event ev = { .type = EV_STAGE_END };

	ev.u.stage.stage = name;
	ev.u.stage.fraction = code == OK ? 1 : -1;
	ev.u.stage.code = code;
	ev.u.stage.message = message;
	emit(e, &ev);
}

static void
warn(struct engine *e, const char *msg)
{
	struct event ev = { .type = EV_WARNING };

	ev.u.error.message = msg;
	emit(e, &ev);
}

static void
fail_event(struct engine *e, enum status code, const char *msg)
{
	struct event ev = { .type = EV_ERROR };

	ev.u.error.code = code;
	ev.u.error.message = msg;
	emit(e, &ev);
}

/* Append to a log of the run (capped), or remember that the run's files failed. */
static void
log_write(struct engine *e, struct logfile *f, const char *buf, size_t len)
{
	char *msg;

	switch (logfile_write(f, buf, len)) {
	case LOGFILE_CUT:
		msg = xasprintf("'%s' reached its cap and was cut there; later lines are dropped",
				f->path);
		warn(e, msg);
		free(msg);
		break;
	case LOGFILE_ERROR:
		if (!e->files_failed) {
			msg = xasprintf("cannot write the run's files in '%s': %s; free some space",
					e->dir, strerror(errno));
			e->files_failed = true;
			warn(e, msg);
			free(msg);
		}
		break;
	default:
		break;
	}
}

/* The line events.jsonl ends with when it is cut: a warning event (free() it). */
static char *
events_cut_note(void)
{
	struct event ev = { .type = EV_WARNING };
	struct strbuf sb = STRBUF_INIT;

	ev.u.error.message = "events.jsonl reached its cap and was cut here";
	event_to_json(&ev, &sb);
	return strbuf_detach(&sb);
}

/*
 * The groups a test is known by: the catalogue's when fswb has the tree, else
 * the -g groups check was given (what the run declares).
 */
static void
test_groups(struct engine *e, const char *test, struct strvec *out)
{
	const struct catalogue_test *t = e->have_cat ? catalogue_find(&e->cat, test) : NULL;
	struct check_selection sel;

	if (t) {
		strvec_pushv(out, (const char *const *)t->groups.v);
		return;
	}
	if (!e->cfg)
		return;
	plan_check_selection(&e->plan, e->profiles, e->cfg, &sel);
	strvec_pushv(out, (const char *const *)sel.groups.v);
	check_selection_release(&sel);
}

/* How long test should take, and why (in *basis). */
static double
expect_test(struct engine *e, const char *test, enum est_basis *basis)
{
	struct strvec groups = STRVEC_INIT;
	double s;

	test_groups(e, test, &groups);
	s = estimate_test(&e->est, e->cfg ? e->cfg->name : NULL, e->kernel.version, test, &groups,
			  basis);
	strvec_clear(&groups);
	return s;
}

/* The engine's own listener: the run's files, counts, the test in progress. */
static void
on_own_event(void *data, const struct event *ev)
{
	struct engine *e = data;
	struct strbuf sb = STRBUF_INIT;

	event_to_json(ev, &sb);
	log_write(e, &e->events, sb.buf, sb.len);
	switch (ev->type) {
	case EV_TEST_START:
		free(e->current_test);
		e->current_test = xstrdup(ev->u.test_start.test);
		e->test_started_ms = loop_now_ms();
		e->current_expected = ev->u.test_start.expected_seconds;
		e->current_flagged = false;
		e->any_test = true;
		break;
	case EV_TEST_END:
		if (!ev->u.test_end.rerun && e->cfg) {
			strvec_push(&e->ended, ev->u.test_end.test);
			e->ended_here++;
		}
		if (!ev->u.test_end.rerun)
			test_counts_add(&e->counts, ev->u.test_end.status, ev->u.test_end.seconds);
		free(e->current_test);
		e->current_test = NULL;
		break;
	case EV_KMSG:
		e->kmsg_bad |= ev->u.line.flags & KMSG_BAD;
		strbuf_reset(&sb);
		strbuf_addf(&sb, "%s\n", ev->u.line.text);
		log_write(e, &e->kernel_log, sb.buf, sb.len);
		break;
	default:
		break;
	}
	strbuf_release(&sb);
	/* Then the front end's listeners, in their order. */
	for (size_t i = 0; i < e->bus->n; i++)
		e->bus->listeners[i].on_event(e->bus->listeners[i].data, ev);
}

/* ---- set-up ---- */

enum status
engine_new(const struct plan *plan, const struct profiles *profiles, struct loop *loop,
	   struct event_bus *bus, struct engine **out)
{
	struct engine *e = xcalloc(1, sizeof(*e));

	plan_init(&e->plan);
	plan_copy(&e->plan, plan);
	e->profiles = profiles;
	e->loop = loop;
	e->bus = bus;
	e->events.fd = e->console.fd = e->kernel_log.fd = e->result_fd = e->shell_fd = -1;
	e->shell_mine = -1;
	line_asm_init(&e->out_line, CONSOLE_LINE_MAX, false);
	strbuf_init(&e->shell_out);
	e->exit_code = 2;
	e->guest_busy = -1;
	strvec_init(&e->ended);
	estimator_init(&e->est, false);
	*out = e;
	return OK;
}

/*
 * What the watchdog and the run view expect: the durations of earlier runs,
 * the run's SOAK_DURATION, the groups of the tree's tests (when fswb has the
 * tree), and from those the whole run's estimate for RUN_BEGIN.
 */
static void
load_expectations(struct engine *e, struct event *begin)
{
	struct backend_probe probe = { 0 };
	struct est_total total;

	inventory_probe(e->plan.backend, &e->plan, &probe);
	inventory_estimator(&e->plan, e->profiles, probe.slow, &e->est);
	backend_probe_release(&probe);
	e->have_cat = inventory_catalogue(&e->plan, &e->cat) == OK;
	error_clear();
	inventory_estimate(&e->plan, e->profiles, e->have_cat ? &e->cat : NULL, &e->est,
			   e->plan.tests.preset, NULL, &total);
	if (total.ntests) {
		begin->u.run.total_tests = (unsigned)total.ntests;
		begin->u.run.expected_seconds = total.seconds;
	}
}

/* A new run id: the UTC time, and a suffix when that directory exists. */
static enum status
make_run_dir(struct engine *e)
{
	char stamp[32], *runs = NULL;
	time_t now = time(NULL);
	struct tm tm;
	enum status rc;

	rc = fswb_dir_make(DIR_DATA, "runs", &runs);
	if (rc != OK)
		return rc;
	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	for (unsigned n = 1; n < 1000; n++) {
		char *id = n == 1 ? xstrdup(stamp) : xasprintf("%s-%u", stamp, n);
		char *dir = path_join(runs, id);

		if (!mkdir(dir, 0755)) {
			e->id = id;
			e->dir = dir;
			free(runs);
			return OK;
		}
		free(id);
		free(dir);
		if (errno != EEXIST) {
			rc = error(ERR_IO, "cannot make a run directory in '%s': %s", runs,
				   strerror(errno));
			free(runs);
			return rc;
		}
	}
	free(runs);
	return error(ERR_BUSY, "too many runs started this second");
}

/* ---- stages: kernel and appliance ---- */

/* A needed kernel option is missing: tests of that configuration would not run. */
static void
warn_kernel_report(struct engine *e)
{
	const struct kconfig_report *r = &e->kernel.report;

	for (size_t i = 0; i < r->n; i++) {
		const struct kconfig_result *k = &r->v[i];
		char *msg;

		if (k->need != KCONFIG_NEED || k->verdict == KV_SET || k->verdict == KV_MODULE)
			continue;
		msg = xasprintf("the kernel lacks CONFIG_%s, which %s needs%s%s; tests that need "
				"it will not run",
				k->name, k->needed_by ? k->needed_by : "the run",
				k->why ? ": " : "", k->why ? k->why : "");
		warn(e, msg);
		free(msg);
	}
}

static enum status
prepare_kernel(struct engine *e)
{
	struct kernel_needs needs;
	enum status rc;

	stage(e, EV_STAGE_BEGIN, "kernel", kernel_kind_str(e->plan.kernel.kind), -1);
	kernel_init(&e->kernel);
	e->have_kernel = true;
	rc = kernel_needs_init(&needs, e->profiles, &e->plan.configs, &e->plan.kernel.debug);
	if (rc != OK) {
		stage_end(e, "kernel", rc, error_msg());
		return rc;
	}
	rc = kernel_resolve(e->loop, &e->plan.kernel, &e->kernel);
	if (rc == OK && e->kernel.kind == KERNEL_TREE) {
		struct kbuild_opts o = { .needs = &needs, .nice = 10, .cancel = &e->interrupted };

		rc = kbuild_build(e->loop, &e->own, &o, &e->kernel);
	} else if (rc == OK) {
		rc = kernel_check(e->loop, &e->kernel, &needs);
	}
	if (rc == OK) {
		char *what = xasprintf("%s %s", e->kernel.version ? e->kernel.version : "kernel",
				       e->kernel.image);

		warn_kernel_report(e);
		stage_end(e, "kernel", OK, what);
		free(what);
	} else {
		stage_end(e, "kernel", rc, error_msg());
	}
	kernel_needs_release(&needs);
	return rc;
}

/*
 * The appliance (appliance_ensure() reports its own stage), then the
 * initramfs a modular kernel needs: fswb's own, which loads the virtio and
 * filesystem modules; a kernel without modules boots with what it has.
 */
static enum status
prepare_appliance(struct engine *e)
{
	struct appliance_opts o = { .fstests_src = e->plan.fstests_src, .cancel = &e->interrupted };
	enum status rc;

	rc = appliance_ensure(e->loop, &e->own, &o, &e->appliance);
	if (rc != OK)
		return rc;
	e->have_appliance = true;
	if (e->kernel.modules) {
		rc = initramfs_ensure(e->loop, &e->own, e->kernel.version, e->kernel.modules,
				      &e->initrd);
		if (rc != OK) {
			char *msg = xasprintf("cannot make the initramfs of kernel %s: %s",
					      e->kernel.version, error_msg());

			stage_end(e, "appliance", rc, msg);
			free(msg);
		}
	}
	return rc;
}

/* ---- the guest ---- */

/* Quote the last lines of the kernel log into a message. */
static void
add_console_tail(struct engine *e, struct strbuf *sb)
{
	struct strbuf tail = STRBUF_INIT;

	if (e->kmsg)
		kmsg_tail(e->kmsg, &tail);
	if (tail.len) {
		strbuf_adds(sb, "\nthe last kernel-log lines:\n");
		strbuf_add(sb, tail.buf, tail.len);
	}
	strbuf_release(&tail);
}

/* Why the guest died, from its kernel log. */
static const char *
death_cause(const struct engine *e)
{
	if (e->kmsg_bad & KMSG_PANIC)
		return "the kernel panicked";
	if (e->kmsg_bad & (KMSG_OOPS | KMSG_BUG))
		return "the kernel oopsed and the guest died";
	return "the guest died";
}

static bool
done_already(const struct engine *e, const char *test)
{
	for (size_t i = 0; i < e->ended.n; i++)
		if (!strcmp(e->ended.v[i], test))
			return true;
	return false;
}

/* check's events; a later guest's check expunges the tests done before: not news. */
static void
on_check_event(void *data, const struct event *ev)
{
	struct engine *e = data;

	struct event start;

	if ((ev->type == EV_TEST_START && done_already(e, ev->u.test_start.test)) ||
	    (ev->type == EV_TEST_END && !ev->u.test_end.rerun &&
	     done_already(e, ev->u.test_end.test)))
		return;
	if (ev->type == EV_TEST_START) {
		/* what fswb expects of it: the watchdog's measure and the run view's ETA */
		start = *ev;
		start.u.test_start.expected_seconds =
			expect_test(e, ev->u.test_start.test, &e->current_basis);
		start.u.test_start.expected_from = est_basis_str(e->current_basis);
		ev = &start;
	}
	event_emit(&e->own, (struct event *)ev);
}

static void
on_console(void *data, const char *buf, size_t len)
{
	struct engine *e = data;

	e->last_heard_ms = e->last_output_ms = loop_now_ms();
	log_write(e, &e->console, buf, len);
	kmsg_feed(e->kmsg, buf, len);
}

static void
send_frame(struct engine *e, const struct strbuf *frame)
{
	if (session_send(e->session, frame->buf, frame->len) != OK)
		warn(e, error_msg());
}

static char *
disk_role_path(struct engine *e, const struct session_disk *disks, size_t n, const char *role)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(disks[i].role, role))
			return session_disk_path(e->session, i);
	return NULL;
}

/* The disks a configuration needs, in the order the guest sees them. */
static size_t
config_disks(const struct fs_config *c, struct session_disk *d, char names[][16])
{
	size_t n = 0;

	d[n++] = (struct session_disk){ .role = "test", .size = c->test_size };
	if (c->pool_devices) {
		for (unsigned i = 0; i < c->pool_devices && i < 16; i++) {
			snprintf(names[i], 16, "pool%u", i + 1);
			d[n++] = (struct session_disk){ .role = names[i], .size = c->scratch_size };
		}
	} else if (c->scratch_size) {
		d[n++] = (struct session_disk){ .role = "scratch", .size = c->scratch_size };
	}
	/* TEST and SCRATCH each get their own external log and realtime devices,
	 * as xfstests-bld gives them */
	if (c->logdev_size) {
		d[n++] = (struct session_disk){ .role = "test_logdev", .size = c->logdev_size };
		d[n++] = (struct session_disk){ .role = "logdev", .size = c->logdev_size };
	}
	if (c->rtdev_size) {
		d[n++] = (struct session_disk){ .role = "test_rtdev", .size = c->rtdev_size };
		d[n++] = (struct session_disk){ .role = "rtdev", .size = c->rtdev_size };
	}
	/* LOGWRITES_DEV for the log-replay tests (dm-log-writes), scratch-sized */
	if (c->scratch_size)
		d[n++] = (struct session_disk){ .role = "logwrites", .size = c->scratch_size };
	return n;
}

/*
 * The mkfs command line for TEST_DEV, as the configuration formats SCRATCH_DEV;
 * logdev and rtdev (may be NULL) are TEST_LOGDEV and TEST_RTDEV, which an xfs
 * TEST_DEV is made with as fstests mounts and checks it.
 */
static void
mkfs_words(const struct fs_config *c, const char *dev, const char *logdev, const char *rtdev,
	   struct strvec *out)
{
	static const struct {
		const char *fstyp, *force;
	} force[] = { { "ext2", "-F" }, { "ext3", "-F" },  { "ext4", "-F" },
		      { "xfs", "-f" },	{ "btrfs", "-f" }, { "f2fs", "-f" } };

	strvec_pushf(out, "mkfs.%s", c->fstyp);
	for (size_t i = 0; i < ARRAY_SIZE(force); i++)
		if (!strcmp(force[i].fstyp, c->fstyp))
			strvec_push(out, force[i].force);
	strvec_split(out, c->mkfs_options, " \t");
	if (!strcmp(c->fstyp, "xfs") && logdev)
		strvec_pushf(out, "-llogdev=%s", logdev);
	if (!strcmp(c->fstyp, "xfs") && rtdev)
		strvec_pushf(out, "-rrtdev=%s", rtdev);
	strvec_push(out, dev);
}

/*
 * check's test selection for the plan (plan_check_selection(): the groups,
 * exclusions and named tests) and the settings it gives check.
 */
static void
check_words(struct engine *e, const struct agent_job *job, struct strvec *out, struct strvec *env)
{
	struct check_selection sel;
	struct strvec excluded = STRVEC_INIT;

	plan_check_selection(&e->plan, e->profiles, e->cfg, &sel);
	if (e->have_cat)
		check_selection_expand(&sel, &e->cat, e->cfg->fstyp);
	for (size_t i = 0; i < sel.env.n; i++)
		strvec_push(env, sel.env.v[i]);
	for (size_t i = 0; i < sel.groups.n; i++)
		strvec_pushv(out, (const char *const[]){ "-g", sel.groups.v[i], NULL });
	for (size_t i = 0; i < sel.xgroups.n; i++)
		strvec_pushv(out, (const char *const[]){ "-x", sel.xgroups.v[i], NULL });
	if (e->plan.rerun_failures) { /* check -L N */
		strvec_push(out, "-L");
		strvec_pushf(out, "%u", e->plan.rerun_failures);
	}
	check_selection_excluded(&sel, &excluded);
	if (excluded.n) {
		char *list = strvec_join(&excluded, ",");

		strvec_pushv(out, (const char *const[]){ "-e", list, NULL });
		free(list);
	}
	strvec_clear(&excluded);
	for (size_t i = 0; i < sel.exclude_files.n; i++) {
		char name[32];

		snprintf(name, sizeof(name), "exclude-%zu", i);
		strvec_push(out, "-E");
		push_owned(out, agent_job_path(job, name));
	}
	if (e->ended.n) {
		strvec_push(out, "-E");
		push_owned(out, agent_job_path(job, "exclude-done"));
	}
	for (size_t i = 0; i < sel.tests.n; i++)
		strvec_push(out, sel.tests.v[i]);
	check_selection_release(&sel);
}

/* results/CONFIG-SLUG/: check's results directory and the kernel-log slices. */
static char *
results_dir(struct engine *e)
{
	char *rel = xasprintf("results/%s", e->cfg_slug);
	char *dir = path_join(e->dir, rel);

	free(rel);
	return dir;
}

/*
 * results/CONFIG/local.config: what check read in the guest, with the command
 * that made TEST_DEV, so that a user can see and reproduce the setup. Written
 * when the job is sent, so a guest that never sends results still leaves it.
 */
static void
keep_localconfig(struct engine *e, const struct strbuf *lc, const struct strvec *mkfs)
{
	struct strbuf text = STRBUF_INIT;
	char *dir = results_dir(e), *path = path_join(dir, "local.config");

	strbuf_addf(&text, "# %s: the local.config check read in the guest (HOST_OPTIONS)\n",
		    e->cfg->name);
	strbuf_adds(&text, "# TEST_DEV was made with: ");
	sq_quote_argv(&text, (const char *const *)mkfs->v);
	strbuf_addf(&text, "\n%s", lc->buf);
	if (mkdir_p(dir, 0755) != OK || write_file_atomic(path, text.buf, text.len, 0644) != OK)
		warn(e, error_msg());
	error_clear();
	strbuf_release(&text);
	free(path);
	free(dir);
}

/* Append a FILE frame holding a host file (an exclude file). */
static enum status
frame_host_file(struct strbuf *frame, const char *name, const char *path)
{
	char *text = NULL;
	size_t len;
	enum status rc;

	rc = read_file(path, 16u << 20, &text, &len);
	if (rc == OK)
		rc = agent_frame_file(frame, name, 0644, text, len);
	free(text);
	return rc;
}

/*
 * A backend that destroys data on the test machine formats only devices the
 * user named in -o wipe=DEV[,DEV...]; else the error names them all.
 */
static enum status
wipe_confirmed(struct engine *e, size_t ndisks)
{
	const char *wipe = plan_backend_opt(&e->plan, "wipe");
	struct strvec ok = STRVEC_INIT, missing = STRVEC_INIT, all = STRVEC_INIT;
	enum status rc = OK;

	if (!(e->backend->caps & BACKEND_WIPES))
		return OK;
	if (wipe)
		strvec_split(&ok, wipe, ",");
	for (size_t i = 0; i < ndisks; i++) {
		char *dev = session_disk_path(e->session, i);

		strvec_push(&all, dev);
		if (!strvec_contains(&ok, dev))
			strvec_push(&missing, dev);
		free(dev);
	}
	if (missing.n) {
		char *list = strvec_join(&all, ","), *miss = strvec_join(&missing, ", ");

		rc = error(ERR_INVALID,
			   "the tests of '%s' would format %s on the test machine, destroying "
			   "what is on it; if that is what you want, confirm with -o wipe=%s",
			   e->cfg->name, miss, list);
		free(list);
		free(miss);
	}
	strvec_clear(&ok);
	strvec_clear(&missing);
	strvec_clear(&all);
	return rc;
}

/* READY came: send the job (as FILEs) and RUN. */
static void
send_job(struct engine *e)
{
	struct session_disk disks[24];
	char names[16][16];
	size_t ndisks = config_disks(e->cfg, disks, names);
	struct localconfig_devices dev = { 0 };
	struct localconfig_section sec;
	struct strvec mkfs = STRVEC_INIT, opts = STRVEC_INIT, tests = STRVEC_INIT;
	struct strvec env = STRVEC_INIT, pool = STRVEC_INIT;
	struct strbuf lc = STRBUF_INIT, jobenv = STRBUF_INIT, frame = STRBUF_INIT;
	struct session_layout where = session_layout(e->session);
	char *test_mnt = path_join(where.mnt_dir, "test");
	char *scratch_mnt = path_join(where.mnt_dir, "scratch");
	const char *const mounts[] = { test_mnt, scratch_mnt, NULL };
	struct agent_job job = { .fstests_dir = where.fstests_dir,
				 .job_dir = where.job_dir,
				 .fstyp = e->cfg->fstyp,
				 .config = "local.config",
				 .mount_points = mounts };
	char *test_dev = disk_role_path(e, disks, ndisks, "test");
	char *scratch = disk_role_path(e, disks, ndisks, "scratch");
	char *logdev = disk_role_path(e, disks, ndisks, "logdev");
	char *rtdev = disk_role_path(e, disks, ndisks, "rtdev");
	char *test_logdev = disk_role_path(e, disks, ndisks, "test_logdev");
	char *test_rtdev = disk_role_path(e, disks, ndisks, "test_rtdev");
	char *logwrites = disk_role_path(e, disks, ndisks, "logwrites");
	char *kconfig = NULL;
	enum status rc;

	for (size_t i = 0; i < ndisks; i++)
		if (!strncmp(disks[i].role, "pool", 4))
			push_owned(&pool, session_disk_path(e->session, i));
	dev.test_dev = test_dev;
	dev.test_dir = mounts[0];
	dev.scratch_dev = scratch;
	dev.scratch_pool = pool.n ? (const char *const *)pool.v : NULL;
	dev.scratch_mnt = mounts[1];
	dev.scratch_logdev = logdev;
	dev.scratch_rtdev = rtdev;
	dev.test_logdev = test_logdev;
	dev.test_rtdev = test_rtdev;
	dev.logwrites_dev = logwrites;
	sec.config = e->cfg;
	sec.dev = &dev;
	strvec_pushv(&opts, (const char *const[]){ "-R", "xunit", "-T", NULL });
	if (e->plan.dry_run)
		strvec_push(&tests, "-n");
	check_words(e, &job, &tests, &env);
	/* the kernel's config, where fstests' _require_kernel_config looks first */
	if (e->kernel.config) {
		kconfig = agent_job_path(&job, "kernel.config");
		strvec_pushf(&env, "KCONFIG_PATH=%s", kconfig);
	}
	mkfs_words(e->cfg, test_dev, test_logdev, test_rtdev, &mkfs);
	job.mkfs_test = (const char *const *)mkfs.v;
	job.check_opts = (const char *const *)opts.v;
	job.check_tests = (const char *const *)tests.v;
	rc = wipe_confirmed(e, ndisks);
	if (rc == OK)
		rc = localconfig_write(&sec, 1, NULL, &env, &lc);
	if (rc == OK) {
		keep_localconfig(e, &lc, &mkfs);
		rc = agent_job_env(&jobenv, &job);
	}
	if (rc == OK)
		rc = agent_frame_file(&frame, "job.env", 0644, jobenv.buf, jobenv.len);
	if (rc == OK)
		rc = agent_frame_file(&frame, "local.config", 0644, lc.buf, lc.len);
	for (size_t i = 0; rc == OK && i < e->plan.tests.exclude_files.n; i++) {
		char name[32];

		snprintf(name, sizeof(name), "exclude-%zu", i);
		rc = frame_host_file(&frame, name, e->plan.tests.exclude_files.v[i]);
	}
	if (rc == OK && kconfig)
		rc = frame_host_file(&frame, "kernel.config", e->kernel.config);
	if (rc == OK && e->ended.n) {
		char *list = strvec_join(&e->ended, "\n");

		rc = agent_frame_file(&frame, "exclude-done", 0644, list, strlen(list));
		free(list);
	}
	if (rc == OK) {
		agent_frame_run(&frame);
		send_frame(e, &frame);
		agent_order_sent(&e->order, AGENT_RUN);
		e->job_sent = true;
		e->phase = PH_TESTS;
		e->phase_ms = e->last_heard_ms = loop_now_ms();
		stage(e, EV_STAGE_BEGIN, "tests", e->cfg->name, -1);
	} else {
		char *msg =
			xasprintf("the job for '%s' cannot be made: %s", e->cfg->name, error_msg());

		fail_event(e, rc, msg);
		free(msg);
		e->phase = PH_DONE;
		session_cancel(e->session);
	}
	free(test_mnt);
	free(scratch_mnt);
	free(test_dev);
	free(scratch);
	free(logdev);
	free(rtdev);
	free(test_logdev);
	free(test_rtdev);
	free(logwrites);
	free(kconfig);
	strvec_clear(&pool);
	strvec_clear(&mkfs);
	strvec_clear(&opts);
	strvec_clear(&tests);
	strvec_clear(&env);
	strbuf_release(&lc);
	strbuf_release(&jobenv);
	strbuf_release(&frame);
}

/* The test that was running ends as crashed or hung. */
static void
end_current_test(struct engine *e, enum test_status st, const char *why)
{
	struct event ev = { .type = EV_TEST_END };
	struct strbuf detail = STRBUF_INIT;
	char *test;

	if (!e->current_test)
		return;
	test = xstrdup(e->current_test);
	add_console_tail(e, &detail);
	ev.u.test_end.test = test;
	ev.u.test_end.status = st;
	ev.u.test_end.seconds = (double)(loop_now_ms() - e->test_started_ms) / 1000;
	ev.u.test_end.reason = why;
	ev.u.test_end.detail = detail.len ? detail.buf : NULL;
	emit(e, &ev);
	strbuf_release(&detail);
	free(test);
}

/* The cap on a configuration's results, archive and unpacked (--max-results). */
static uint64_t
max_results(const struct engine *e)
{
	return e->plan.max_results ? e->plan.max_results : ARCHIVE_MAX_DEFAULT;
}

/*
 * A configuration's results could not be kept (code: ERR_IO when this host
 * could not write them, else the guest's archive was bad): said as the run's
 * error (run.json, the summary), fswb exits non-zero (see lost_exit), and no
 * partial archive stays.
 */
static void
results_lost(struct engine *e, const char *why, enum status code)
{
	char *msg = xasprintf("the results of '%s' were lost: %s; the outcomes above come from "
			      "check's output, its files (.out.bad, .full, result.xml) are not "
			      "in the run directory",
			      e->cfg->name, why);

	if (e->lost_exit < (code == ERR_IO ? 2 : 1))
		e->lost_exit = code == ERR_IO ? 2 : 1;
	close_fd(&e->result_fd);
	if (e->result_path)
		unlink(e->result_path);
	e->got_result = false;
	fail_event(e, code, msg);
	free(msg);
}

/* Unpack the results archive (fstests/archive.h) and attach its files to the record. */
static void
unpack_results(struct engine *e)
{
	char *dest = results_dir(e), *text;
	struct archive_report rep;
	struct section_result *sec;
	enum status rc;

	stage(e, EV_STAGE_BEGIN, "results", e->cfg->name, -1);
	archive_report_init(&rep);
	rc = mkdir_p(dest, 0755);
	e->unpacking = true;
	if (rc == OK)
		rc = archive_unpack(e->result_path, dest, max_results(e), &rep);
	e->unpacking = false;
	unlink(e->result_path);
	text = archive_report_text(&rep);
	if (*text)
		warn(e, text);
	if (rc == OK) {
		sec = run_record_section(&e->results.rec, e->cfg->name, e->cfg->name);
		section_attach_artifacts(sec, dest);
		results_writer_flush(&e->results);
		stage_end(e, "results", OK, NULL);
	} else {
		char *why = xstrdup(error_msg());

		stage_end(e, "results", rc, why);
		results_lost(e, why, rc);
		free(why);
	}
	free(text);
	archive_report_release(&rep);
	free(dest);
	if (e->done_pending) {
		e->done_pending = false;
		loop_add_timer(e->loop, 0, false, deferred_config_done, e);
	}
}

/* A RESULT piece: the results archive, streamed to a new file (none when empty). */
static void
save_result(struct engine *e, const struct agent_msg *m)
{
	if (m->offset == 0) {
		close_fd(&e->result_fd);
		free(e->result_path);
		e->result_path = NULL;
		e->got_result = false;
		if (!m->total)
			return; /* no results directory */
		e->result_path = xasprintf("%s/results-%s.tar.gz", e->dir, e->cfg_slug);
		e->result_fd = open(e->result_path,
				    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (e->result_fd < 0) {
			char *why = xasprintf("cannot create '%s': %s", e->result_path,
					      strerror(errno));

			free(e->result_path);
			e->result_path = NULL; /* not ours: never removed */
			results_lost(e, why, ERR_IO);
			free(why);
			return;
		}
	}
	if (e->result_fd < 0)
		return;
	if (!write_fd_all(e->result_fd, m->data, m->len)) {
		char *why = xasprintf("cannot write '%s': %s", e->result_path, strerror(errno));

		results_lost(e, why, ERR_IO);
		free(why);
		return;
	}
	if (m->last) {
		close_fd(&e->result_fd);
		e->got_result = true;
	}
}

static void
poweroff(struct engine *e)
{
	struct strbuf frame = STRBUF_INIT;

	e->phase = PH_DONE;
	agent_frame_poweroff(&frame);
	send_frame(e, &frame);
	agent_order_sent(&e->order, AGENT_POWEROFF);
	strbuf_release(&frame);
}

/* A shell after the tests: asked for, and this is the last configuration. */
static bool
want_shell(const struct engine *e)
{
	return e->plan.shell && !e->interrupted && e->cfg_index + 1 == e->plan.configs.n;
}

static void
console_line(void *data, char *line, size_t len, bool cut)
{
	struct engine *e = data;
	struct event ev = { .type = EV_CONSOLE };

	ev.u.line.text = str_trim(line);
	ev.u.line.flags = CONSOLE_CHECK;
	if (*ev.u.line.text)
		emit(e, &ev);
}

/* check -n's output: each whole line a CONSOLE event. */
static void
console_lines(struct engine *e, const char *buf, size_t len)
{
	line_asm_feed(&e->out_line, buf, len, console_line, e);
}

/* ---- the shell: a socket pair between the front end and the session's shell stream ---- */

static void
shell_close(struct engine *e)
{
	if (e->shell_mine >= 0)
		loop_del_fd(e->loop, e->shell_mine);
	close_fd(&e->shell_mine);
	close_fd(&e->shell_fd);
	strbuf_reset(&e->shell_out);
}

/* The front end's keys to the session; the session's output to the front end. */
static void
on_shell_fd(struct loop *loop, int fd, short revents, void *data)
{
	struct engine *e = data;
	char buf[4096];
	ssize_t n;

	while (e->shell_out.len && (n = write(fd, e->shell_out.buf, e->shell_out.len)) > 0) {
		strbuf_drop_front(&e->shell_out, (size_t)n);
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		if (e->session && session_shell_send(e->session, buf, (size_t)n) != OK)
			warn(e, error_msg());
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		loop_del_fd(loop, fd);
		close_fd(&e->shell_mine); /* the front end left; engine_shell_end follows */
		return;
	}
	loop_mod_fd(loop, fd, POLLIN | (e->shell_out.len ? POLLOUT : 0));
}

/* The session's shell output; len 0: the shell ended, so its end reaches the front end. */
static void
on_shell(void *data, const char *buf, size_t len)
{
	struct engine *e = data;

	if (e->shell_mine < 0)
		return;
	if (!len) {
		/* what is still queued is lost with the shell: its last words were sent */
		loop_del_fd(e->loop, e->shell_mine);
		close_fd(&e->shell_mine);
		return;
	}
	if (e->shell_out.len + len <= SHELL_OUT_MAX)
		strbuf_add(&e->shell_out, buf, len);
	on_shell_fd(e->loop, e->shell_mine, POLLOUT, e);
}

static enum status
shell_open(struct engine *e)
{
	int sv[2];
	enum status rc;

	if (e->shell_fd >= 0)
		return OK;
	rc = session_shell_open(e->session);
	if (rc != OK)
		return rc;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return error(ERR_IO, "cannot make a socket pair for the shell: %s",
			     strerror(errno));
	fcntl(sv[1], F_SETFL, fcntl(sv[1], F_GETFL) | O_NONBLOCK);
	e->shell_fd = sv[0];
	e->shell_mine = sv[1];
	loop_add_fd(e->loop, sv[1], POLLIN, on_shell_fd, e);
	return OK;
}

static enum status
on_agent_msg(const struct agent_msg *m, void *data)
{
	struct engine *e = data;
	struct agent_hello hello;
	struct event ev = { 0 };
	char *text;

	e->last_heard_ms = loop_now_ms();
	if (agent_order_check(&e->order, m) != OK)
		return ERR_PROTOCOL;
	switch (m->type) {
	case AGENT_HELLO:
		if (agent_hello_parse(m, &hello) != OK)
			return ERR_PROTOCOL;
		text = xasprintf("agent %s on kernel %s (%s)", hello.agent_version,
				 hello.kernel_release, hello.arch);
		stage_end(e, "boot", OK, text);
		free(text);
		e->boot_end_sent = true;
		break;
	case AGENT_READY:
		if (!e->boot_end_sent)
			return error(ERR_PROTOCOL, "READY before HELLO");
		if (!e->job_sent) {
			send_job(e);
		} else if (e->phase == PH_TESTS && want_shell(e)) {
			struct strbuf frame = STRBUF_INIT;

			e->phase = PH_SHELL;
			agent_frame_shell(&frame);
			send_frame(e, &frame);
			agent_order_sent(&e->order, AGENT_SHELL);
			strbuf_release(&frame);
		} else if (e->phase != PH_DONE && !(e->phase == PH_SHELL && e->shell_fd >= 0)) {
			poweroff(e);
		}
		break;
	case AGENT_HB:
		/* "HB UPTIME BUSY": how busy the guest's CPUs were since the last one */
		if (m->argc > 1 && strlen(m->argv[1]) <= 3 && strspn(m->argv[1], "0123456789") &&
		    !m->argv[1][strspn(m->argv[1], "0123456789")] && atoi(m->argv[1]) <= 100)
			e->guest_busy = atoi(m->argv[1]);
		break;
	case AGENT_OUT:
		if (e->phase != PH_TESTS || e->got_exit)
			break; /* after a hang was declared: the guest is being stopped */
		e->last_output_ms = e->last_heard_ms;
		if (e->plan.dry_run)
			console_lines(e, m->data, m->len);
		else
			check_parser_feed(e->parser, m->data, m->len);
		break;
	case AGENT_LOG:
		ev.type = EV_CONSOLE;
		text = xstrndup(m->data, m->len);
		ev.u.line.text = str_trim(text);
		ev.u.line.test = e->current_test;
		emit(e, &ev);
		free(text);
		break;
	case AGENT_ERR:
		if (e->phase == PH_SHELL) {
			text = xasprintf("no shell in the guest: %.*s", (int)m->len, m->data);
			warn(e, str_trim(text));
			free(text);
			break;
		}
		text = xasprintf("the guest cannot run the tests of '%s': %.*s", e->cfg->name,
				 (int)m->len, m->data);
		str_trim(text);
		fail_event(e, ERR_CHILD, text);
		if (e->phase == PH_TESTS)
			stage_end(e, "tests", ERR_CHILD, text);
		e->got_exit = true; /* nothing will run: said above */
		free(text);
		break;
	case AGENT_RESULT:
		save_result(e, m);
		break;
	case AGENT_SHELLREADY:
		if (shell_open(e) != OK) {
			warn(e, error_msg());
			break;
		}
		stage(e, EV_STAGE_BEGIN, "shell",
		      "a shell in the guest (the test filesystem is made, local.config is in "
		      "place); 'exit' or Ctrl-] ends it and powers the guest off",
		      -1);
		break;
	case AGENT_EXIT:
		if (e->phase != PH_TESTS || e->got_exit)
			break;
		e->got_exit = true;
		e->check_status = (int)m->value;
		if (e->plan.dry_run) {
			console_lines(e, "\n", 1);
			e->dry_run_ok = m->value == 0;
		}
		check_parser_finish(e->parser);
		kmsg_end_slice(e->kmsg);
		if (e->current_test)
			end_current_test(e, TS_CRASHED, "check stopped during the test");
		stage_end(e, "tests", OK, NULL);
		if (e->got_result)
			unpack_results(e);
		break;
	default:
		break;
	}
	return OK;
}

static void
on_control(void *data, const char *buf, size_t len)
{
	struct engine *e = data;
	struct strbuf msg = STRBUF_INIT;

	if (e->broke_protocol)
		return;
	if (agent_reader_feed(&e->reader, buf, len, on_agent_msg, e) == OK)
		return;
	/* A protocol error of this guest: its session ends, the run goes on. */
	e->broke_protocol = true;
	strbuf_addf(&msg, "the guest agent of '%s' broke the protocol: %s; its guest is stopped",
		    e->cfg->name, error_msg());
	add_console_tail(e, &msg);
	if (e->parser)
		check_parser_finish(e->parser);
	end_current_test(e, TS_CRASHED, "the guest agent broke the protocol");
	fail_event(e, ERR_PROTOCOL, msg.buf);
	if (!e->boot_end_sent)
		stage_end(e, "boot", ERR_PROTOCOL, msg.buf);
	else if (e->phase == PH_TESTS)
		stage_end(e, "tests", ERR_PROTOCOL, msg.buf);
	e->boot_end_sent = true;
	strbuf_release(&msg);
	e->got_exit = true; /* said above */
	e->phase = PH_DONE;
	session_cancel(e->session);
}

static void
config_done(struct engine *e)
{
	if (e->watch_timer)
		loop_del_timer(e->loop, e->watch_timer);
	e->watch_timer = 0;
	session_release(e->session);
	e->session = NULL;
	check_parser_free(e->parser);
	e->parser = NULL;
	kmsg_finish(e->kmsg);
	kmsg_free(e->kmsg);
	e->kmsg = NULL;
	agent_reader_release(&e->reader);
	close_fd(&e->result_fd);
	shell_close(e);
	line_asm_reset(&e->out_line);
	free(e->cfg_slug);
	e->cfg_slug = NULL;
	if (e->interrupted) {
		finish_run(e);
	} else if (e->restart) {
		char *msg = xasprintf("starting a new guest for the remaining tests of '%s'",
				      e->cfg->name);

		e->restart = false;
		warn(e, msg);
		free(msg);
		start_config(e);
	} else {
		e->cfg_index++;
		strvec_clear(&e->ended);
		next_config(e);
	}
}

static void
deferred_config_done(struct loop *loop, void *data)
{
	struct engine *e = data;

	if (e->unpacking) {
		e->done_pending = true; /* unpack_results ends the configuration */
		return;
	}
	config_done(e);
}

/*
 * After a crash or a hang: a new guest for the remaining tests, unless the
 * plan says to stop, or this guest ended no test (it would go on forever).
 */
static bool
can_restart(const struct engine *e)
{
	return !e->plan.stop_on_crash && !e->interrupted && e->ended_here > 0;
}

static void
on_guest_exit(void *data, enum status code, const char *why)
{
	struct engine *e = data;
	struct strbuf msg = STRBUF_INIT;

	if (e->parser)
		check_parser_finish(e->parser);
	if (!e->got_exit && !e->interrupted) {
		if (!e->boot_end_sent) {
			strbuf_addf(&msg, "the guest for '%s' stopped before its agent started%s%s",
				    e->cfg->name, why ? ": " : "", why ? why : "");
			add_console_tail(e, &msg);
			stage_end(e, "boot", code == OK ? ERR_CHILD : code, msg.buf);
			e->boot_end_sent = true;
		} else {
			const char *cause = death_cause(e);

			strbuf_addf(&msg, "%s during the tests of '%s'%s%s", cause, e->cfg->name,
				    why ? ": " : "", why ? why : "");
			end_current_test(e, TS_CRASHED, cause);
			fail_event(e, ERR_CHILD, msg.buf);
			if (e->phase == PH_TESTS)
				stage_end(e, "tests", ERR_CHILD, msg.buf);
			e->restart = can_restart(e);
		}
	}
	strbuf_release(&msg);
	/* Leave the backend's callback before releasing the session. */
	loop_add_timer(e->loop, 0, false, deferred_config_done, e);
}

/* Seconds the test in progress may run (see TEST_LIMIT_*). */
static unsigned
test_limit(const struct engine *e)
{
	double limit = e->current_expected * TEST_LIMIT_FACTOR;

	if (e->plan.test_timeout)
		return e->plan.test_timeout;
	return limit < TEST_LIMIT_MIN ? TEST_LIMIT_MIN : (unsigned)limit;
}

/*
 * The test runs past twice its expected time: say so at once, with what the
 * guest is doing and when it will count as hung.
 */
static void
flag_long_test(struct engine *e, uint64_t now)
{
	char ran[16], expected[16], quiet[16], limit[16];
	struct strbuf sb = STRBUF_INIT;

	e->current_flagged = true;
	strbuf_addf(&sb, "%s has run %s, over twice the %s expected (from %s)", e->current_test,
		    format_duration((double)(now - e->test_started_ms) / 1000, ran, sizeof(ran)),
		    format_duration(e->current_expected, expected, sizeof(expected)),
		    est_basis_str(e->current_basis));
	if (e->guest_busy >= 0)
		strbuf_addf(&sb, "; the guest's CPUs are %d%% busy", e->guest_busy);
	strbuf_addf(
		&sb, "; %s from the guest for %s",
		e->guest_busy >= 0 && e->guest_busy < 5 ? "nothing" : "no output",
		format_duration((double)(now - e->last_output_ms) / 1000, quiet, sizeof(quiet)));
	strbuf_addf(&sb, ". It counts as hung at %s (%s)",
		    format_duration(test_limit(e), limit, sizeof(limit)),
		    e->plan.test_timeout ? "--test-timeout" : "--test-timeout SECONDS changes it");
	warn(e, sb.buf);
	strbuf_release(&sb);
}

/* Once a second: is the guest still talking? */
static void
watch(struct loop *loop, void *data)
{
	struct engine *e = data;
	uint64_t now = loop_now_ms();
	unsigned silence = session_silence_limit(e->session), limit;
	char *msg;

	if (e->phase == PH_BOOT) {
		limit = session_boot_limit(e->session);
		if (now - e->phase_ms > limit * 1000ull) {
			struct strbuf sb = STRBUF_INIT;

			strbuf_addf(&sb,
				    "the guest for '%s' did not start its agent within %u seconds",
				    e->cfg->name, limit);
			add_console_tail(e, &sb);
			stage_end(e, "boot", ERR_TIMEOUT, sb.buf);
			strbuf_release(&sb);
			e->boot_end_sent = true;
			e->phase = PH_DONE;
			session_cancel(e->session);
		}
		return;
	}
	if (e->phase != PH_TESTS)
		return;
	limit = test_limit(e);
	if (now - e->last_heard_ms > silence * 1000ull)
		msg = xasprintf("the guest for '%s' was silent for %u seconds: it hung",
				e->cfg->name, silence);
	else if (e->current_test && now - e->test_started_ms > limit * 1000ull)
		msg = xasprintf(
			"%s ran longer than %u seconds (%s): it hung", e->current_test, limit,
			e->plan.test_timeout ? "--test-timeout"
					     : "five times its expected time, at least 10 minutes");
	else if (e->current_test && !e->current_flagged &&
		 now - e->test_started_ms > e->current_expected * TEST_LONG_FACTOR * 1000)
		return flag_long_test(e, now);
	else
		return;
	check_parser_finish(e->parser);
	end_current_test(e, TS_HUNG, msg);
	fail_event(e, ERR_TIMEOUT, msg);
	stage_end(e, "tests", ERR_TIMEOUT, msg);
	free(msg);
	e->phase = PH_DONE;
	e->got_exit = true; /* nothing more to report for it */
	e->restart = can_restart(e);
	session_cancel(e->session);
}

/* fswb-agent on this host (for a machine without the appliance), or NULL. */
static char *
agent_path(void)
{
	char *dir = rootfs_agent_dir(), *p;

	if (!dir)
		return NULL;
	p = path_join(dir, "fswb-agent");
	free(dir);
	return p;
}

static void
start_config(struct engine *e)
{
	struct session_disk disks[24];
	char names[16][16];
	struct session_spec spec = { 0 };
	struct session_callbacks cb = { on_control, on_console, on_shell, on_guest_exit };
	char *workdir, *slug, *slices, *agent;
	enum status rc;
	const char *notice;

	e->cfg_slug = slug = xstrdup(e->cfg->name);
	for (char *p = slug; *p; p++)
		if (*p == '/')
			*p = '-';
	e->got_exit = e->got_result = e->boot_end_sent = e->job_sent = false;
	e->broke_protocol = false;
	e->ended_here = 0;
	e->kmsg_bad = 0;
	e->parser = check_parser_new(&e->check_bus, e->cfg->name);
	e->kmsg = kmsg_new(&e->own, e->cfg->name);
	kmsg_set_tail(e->kmsg, CONSOLE_TAIL);
	slices = results_dir(e);
	if (kmsg_set_slice_dir(e->kmsg, slices) != OK)
		warn(e, error_msg());
	free(slices);
	agent_reader_init(&e->reader, 0);
	agent_order_init(&e->order, max_results(e));
	workdir = xasprintf("%s/guest-%s", e->dir, slug);
	spec.name = slug;
	spec.workdir = workdir;
	spec.arch = arch_find(e->plan.kernel.arch); /* plan_validate knows the names */
	if (!spec.arch)
		BUG("unknown arch '%s' in a validated plan", e->plan.kernel.arch);
	spec.kernel = e->have_kernel ? e->kernel.image : NULL;
	spec.initrd = e->initrd;
	spec.appliance = e->have_appliance ? e->appliance.image : NULL;
	spec.agent = agent = e->have_appliance ? NULL : agent_path();
	spec.disks = disks;
	spec.ndisks = config_disks(e->cfg, disks, names);
	spec.cpus = e->plan.cpus;
	spec.mem = e->plan.mem;
	spec.options = (const char *const *)e->plan.backend_opts.v;
	stage(e, EV_STAGE_BEGIN, "boot", e->cfg->name, -1);
	if (!e->have_appliance && !agent)
		rc = error(ERR_NOTFOUND, "the guest agent (fswb-agent) is not installed with "
					 "fswb: reinstall it (make install)");
	else
		rc = session_start(e->backend, e->loop, e->run, &spec, &cb, e, &e->session);
	free(workdir);
	free(agent);
	if (rc != OK) {
		stage_end(e, "boot", rc, error_msg());
		loop_add_timer(e->loop, 0, false, deferred_config_done, e);
		return;
	}
	notice = session_notice(e->session);
	if (notice)
		warn(e, notice);
	e->est.slow = session_slow(e->session);
	e->phase = PH_BOOT;
	e->phase_ms = e->last_heard_ms = loop_now_ms();
	e->watch_timer = loop_add_timer(e->loop, WATCH_MS, true, watch, e);
}

/*
 * Named tests of other filesystems are left out of this configuration
 * (plan_check saw that some configuration takes each), with a warning.
 * False when that leaves it nothing to run.
 */
static bool
config_has_tests(struct engine *e)
{
	const struct plan_tests *t = &e->plan.tests;
	struct strvec other = STRVEC_INIT;
	bool any;
	char *list, *msg;

	for (size_t i = 0; i < t->tests.n; i++)
		if (!catalogue_name_fits(t->tests.v[i], e->cfg->fstyp))
			strvec_push(&other, t->tests.v[i]);
	any = t->preset || t->groups.n || other.n < t->tests.n;
	if (other.n) {
		list = strvec_join(&other, " ");
		msg = any ? xasprintf("%s: leaving out %s, not tests for %s (check would run "
				      "them and they would fail)",
				      e->cfg->name, list, e->cfg->fstyp)
			  : xasprintf("%s: nothing to run: the tests named (%s) are not for %s",
				      e->cfg->name, list, e->cfg->fstyp);
		warn(e, msg);
		free(msg);
		free(list);
	}
	strvec_clear(&other);
	return any;
}

static void
next_config(struct engine *e)
{
	const struct fs_config *c;

	if (e->cfg_index >= e->plan.configs.n) {
		finish_run(e);
		return;
	}
	if (profiles_resolve_config(e->profiles, e->plan.configs.v[e->cfg_index], &c) != OK) {
		fail_event(e, ERR_NOTFOUND, error_msg());
		e->cfg_index++;
		next_config(e);
		return;
	}
	e->cfg = c;
	if (!config_has_tests(e)) {
		e->cfg_index++;
		next_config(e);
		return;
	}
	start_config(e);
}

static void
finish_run(struct engine *e)
{
	struct event ev = { .type = EV_RUN_END };
	char *junit;

	if (e->done)
		return;
	e->cfg = NULL;
	if (e->any_test) {
		junit = path_join(e->dir, "junit.xml");
		run_record_recount(&e->results.rec);
		if (results_write_junit(junit, &e->results.rec) != OK) {
			e->lost_exit = 2;
			fail_event(e, ERR_IO, error_msg());
		}
		free(junit);
	}
	if (e->files_failed) {
		char *msg = xasprintf("the run's logs in '%s' are incomplete: a write failed (see "
				      "the warning above)",
				      e->dir);

		e->lost_exit = 2;
		fail_event(e, ERR_IO, msg);
		free(msg);
	}
	if (e->plan.dry_run)
		e->exit_code = e->dry_run_ok && !e->interrupted ? 0 : 2;
	else if (!e->counts.ran && !e->counts.crashed && !e->counts.hung)
		e->exit_code = 2;
	else if (e->counts.failed || e->counts.crashed || e->counts.hung)
		e->exit_code = 1;
	else
		e->exit_code = e->interrupted ? 1 : 0;
	if (e->exit_code < e->lost_exit)
		e->exit_code = e->lost_exit;
	ev.u.end.exit_code = e->exit_code;
	ev.u.end.interrupted = e->interrupted;
	ev.u.end.counts = e->counts;
	backend_discard(e->run);
	e->run = NULL;
	e->done = true;
	emit(e, &ev);
	if (results_writer_flush(&e->results) != OK)
		e->exit_code = 2; /* run.json is not complete: said by the writer's status */
}

/*
 * The backend: its options, what a killed fswb left behind (removed), its
 * cost line, its run-wide artifacts.
 */
static enum status
prepare_backend(struct engine *e)
{
	struct strvec reaped = STRVEC_INIT;
	enum status rc;
	char *cost;

	rc = backend_check_options(&e->plan);
	if (rc != OK) {
		fail_event(e, rc, error_msg());
		return rc;
	}
	e->backend = backend_find(e->plan.backend);
	backend_leases_reap(&reaped);
	for (size_t i = 0; i < reaped.n; i++) {
		char *msg = xasprintf("removed what an earlier fswb left behind: %s", reaped.v[i]);

		warn(e, msg);
		free(msg);
	}
	strvec_clear(&reaped);
	cost = backend_cost(e->backend, &e->plan);
	if (cost) {
		warn(e, cost);
		free(cost);
	}
	rc = backend_prepare(e->backend, e->loop, &e->plan, &e->run);
	if (rc != OK) {
		char *msg = xasprintf("the '%s' backend cannot prepare the run: %s",
				      e->backend->name, error_msg());

		fail_event(e, rc, msg);
		free(msg);
	}
	return rc;
}

static void
begin(struct loop *loop, void *data)
{
	struct engine *e = data;
	struct event ev = { .type = EV_RUN_BEGIN };

	ev.u.run.id = e->id;
	load_expectations(e, &ev);
	emit(e, &ev);
	if (prepare_backend(e) != OK ||
	    ((e->backend->caps & BACKEND_BOOTS_KERNEL) && prepare_kernel(e) != OK) ||
	    e->interrupted ||
	    ((e->backend->caps & BACKEND_APPLIANCE) && prepare_appliance(e) != OK) ||
	    e->interrupted) {
		finish_run(e);
		return;
	}
	next_config(e);
}

enum status
engine_start(struct engine *e)
{
	char *p, *json;
	enum status rc;

	if (e->started)
		BUG("engine started twice");
	rc = make_run_dir(e);
	if (rc != OK)
		return rc;
	e->started = true;
	p = path_join(e->dir, "plan.json");
	json = plan_to_json(&e->plan);
	rc = write_file_atomic(p, json, strlen(json), 0644);
	free(json);
	free(p);
	if (rc != OK)
		return rc;
	json = events_cut_note();
	rc = logfile_open(&e->events, e->dir, "events.jsonl", LOG_CAP_EVENTS, json);
	free(json);
	if (rc == OK)
		rc = logfile_open(&e->console, e->dir, "console.log", LOG_CAP_CONSOLE, NULL);
	if (rc == OK)
		rc = logfile_open(&e->kernel_log, e->dir, "kernel.log", LOG_CAP_KERNEL, NULL);
	if (rc != OK)
		return rc;
	p = path_join(e->dir, "run.json");
	results_writer_init(&e->results, p);
	free(p);
	event_bus_add(&e->own, results_writer_listener(&e->results));
	event_bus_add(&e->own, (struct listener){ on_own_event, e });
	event_bus_add(&e->check_bus, (struct listener){ on_check_event, e });
	loop_add_timer(e->loop, 0, false, begin, e);
	return OK;
}

void
engine_cancel(struct engine *e)
{
	if (e->done || e->interrupted)
		return;
	e->interrupted = true;
	if (e->session)
		session_cancel(e->session);
}

int
engine_shell_fd(const struct engine *e)
{
	return e->shell_fd;
}

void
engine_shell_end(struct engine *e)
{
	if (e->shell_fd < 0)
		return;
	shell_close(e);
	stage_end(e, "shell", OK, NULL);
	if (e->session && e->phase == PH_SHELL)
		poweroff(e);
}

bool
engine_done(const struct engine *e)
{
	return e->done;
}

int
engine_exit_code(const struct engine *e)
{
	return e->exit_code;
}

const char *
engine_run_dir(const struct engine *e)
{
	return e->dir;
}

void
engine_free(struct engine *e)
{
	if (!e)
		return;
	if (e->watch_timer)
		loop_del_timer(e->loop, e->watch_timer);
	session_release(e->session);
	check_parser_free(e->parser);
	kmsg_free(e->kmsg);
	if (e->have_kernel)
		kernel_release(&e->kernel);
	if (e->have_appliance)
		appliance_release(&e->appliance);
	results_writer_release(&e->results);
	event_bus_release(&e->own);
	event_bus_release(&e->check_bus);
	strvec_clear(&e->ended);
	estimator_release(&e->est);
	if (e->have_cat)
		catalogue_release(&e->cat);
	logfile_close(&e->events);
	logfile_close(&e->console);
	logfile_close(&e->kernel_log);
	close_fd(&e->result_fd);
	shell_close(e);
	backend_discard(e->run);
	strbuf_release(&e->shell_out);
	line_asm_release(&e->out_line);
	plan_release(&e->plan);
	free(e->initrd);
	free(e->result_path);
	free(e->current_test);
	free(e->cfg_slug);
	free(e->id);
	free(e->dir);
	free(e);
}
