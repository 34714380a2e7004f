/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "run/engine.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent/agent_proto.h"
#include "backends/backend.h"
#include "core/event_json.h"
#include "core/job.h"
#include "core/jread.h"
#include "core/logfile.h"
#include "core/paths.h"
#include "core/spawn.h"
#include "fstests/archive.h"
#include "fstests/catalogue.h"
#include "fstests/check_parser.h"
#include "fstests/estimate.h"
#include "fstests/history.h"
#include "fstests/kmsg.h"
#include "fstests/localconfig.h"
#include "fstests/results.h"
#include "kbuild/kbuild.h"
#include "kbuild/kernel.h"
#include "rootfs/appliance.h"
#include "rootfs/initramfs.h"
#include "run/inventory.h"
#include "run/plan_check.h"
#include "run/shards.h"

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
/* A batch (one check of a shard) takes estimate_batch_target() seconds of tests, at most: */
#define BATCH_MAX_TESTS 400
/* A shard's guests taken away in a row (no test ending between) before the next is a crash. */
#define PREEMPTED_MAX 3

enum phase {
	PH_IDLE,
	PH_BOOT,  /* session started, no HELLO yet */
	PH_TESTS, /* RUN sent */
	PH_SHELL, /* SHELL sent (plan.shell), then a shell on shell_fd */
	PH_DONE,  /* POWEROFF sent, or the guest is being stopped */
};

/* A test waiting in a configuration's queue. */
struct item {
	char *test;
	double secs; /* expected */
};

/*
 * The work of one configuration. Listed (a sharded run whose tests are
 * known on this host): its tests wait in todo, longest first, and each
 * guest takes a batch at a time. Else it is one unit: one guest runs
 * check with the whole selection, and a guest started after a crash runs
 * it again without the tests that ended (-E).
 */
struct work {
	const struct fs_config *cfg;
	char *slug; /* "ext4-4k": file names */
	bool listed;
	struct item *todo;
	size_t ntodo, alloc;
	struct strvec ended; /* tests that ended, over all its guests */
	bool taken;	     /* unit: a guest has it */
	bool done;	     /* unit: its guest ran it to the end */
	bool abandoned;	     /* no more guests for it */
	unsigned failures;   /* its guests that ended no test */
	bool section_sent;   /* a sharded run says its SECTION once */
};

/* One guest slot: the guests it starts one after another, each with a session. */
struct shard {
	struct engine *e;
	unsigned no;	/* 1..nshards */
	struct work *w; /* what its guest runs; NULL: none yet */
	struct session *session;
	struct event_bus bus; /* the check parser's and kmsg's events, through on_shard_event */
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
	struct strvec batch;	 /* listed: the batch's tests that have not ended */
	unsigned ended_here;	 /* tests that ended in this guest */
	unsigned preempted;	 /* its guests taken away in a row, no test ending between */
	unsigned kmsg_bad;	 /* KMSG_BAD flags of this guest's kernel log */
	unsigned batches;	 /* batches this shard ran: names of kept files */
	uint64_t batch_sent_ms; /* a later batch of this guest was sent: its start-up is measured */
	bool restart;		/* start a new guest for the remaining tests */
	bool taken;		/* the guest was taken away (preempted): no crash */
	bool failed;		/* the guest crashed, hung or never started */
	bool job_failed;	/* the agent could not run the job (ERR) */
	struct logfile console;
	struct line_asm out_line; /* check -n's output, line by line */
	bool got_exit, got_result, boot_end_sent, job_sent, tests_open;
	/*
	 * unpack_results may take a while: a guest that ends then (Ctrl-C)
	 * must not end the shard's guest under it.
	 */
	bool unpacking, done_pending;
	int result_fd;
	char *result_path;
	bool idle;    /* no guest, nothing left to take */
	bool retired; /* its provider had no room for its machine: the others go on */
	/*
	 * plan.detach: the shard's one guest runs the whole share (its
	 * configuration w, and these tests when listed), then is detached;
	 * following it (fswb results fetch), follow names it
	 */
	bool has_share, listed_share, guest_started, detached;
	struct strvec share;
	char *follow;
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
	struct logfile events, kernel_log;
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
	struct job *prep; /* the kernel and appliance stages' worker */
	struct strbuf prep_tail;
	bool prep_result; /* its result line came */

	/* the work and the guests */
	struct work *works;
	size_t nworks;
	struct shard *shards;
	unsigned nshards;
	bool sharded; /* nshards > 1: events say their shard */

	/* the shell after the tests (plan.shell), in the last guest */
	struct shard *shell_shard;
	bool looking;		 /* the shell is a look into a guest whose tests run */
	int shell_fd;		 /* the front end's end of the shell, or -1 */
	int shell_mine;		 /* ours: relayed to and from the session's shell stream */
	struct strbuf shell_out; /* shell output the front end has not read yet */

	bool dry_run_any, dry_run_failed; /* check -n ran, and said which tests would run */
	bool following;			  /* engine_follow: the guests are detached ones */
	uint64_t follow_events_at, follow_kernel_at; /* the logs' sizes when following began */
	int follow_lock;       /* DIR/.fetch.lock, held while following (-1: none) */
	struct strvec notices; /* the sessions' notices said so far */
	struct strvec stopped; /* "CONFIG\tTEST" a stop cut off */

	/* how long tests take: earlier runs, SOAK_DURATION, the tests' groups */
	struct estimator est;
	struct catalogue cat;
	bool have_cat;
	unsigned expected_machines; /* the run's estimate: guests at once (0: not known) */
	double expected_wall;	    /* and seconds (0: not known) */

	/* the whole run */
	struct test_counts counts;
	bool interrupted, started, done, any_test;
	int exit_code;
};

static void shard_go(struct shard *sh);
static void detach_guest(struct shard *sh);
static void deferred_shard_done(struct loop *loop, void *data);
static void finish_run(struct engine *e);
static void go(struct engine *e);

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

static const char *
shard_config(const struct shard *sh)
{
	return sh && sh->w ? sh->w->cfg->name : NULL;
}

/* ---- events ---- */

/* An event of the run (sh NULL) or of a shard's guest (its configuration and number). */
static void
emit(struct engine *e, struct shard *sh, struct event *ev)
{
	if (sh) {
		if (!ev->config)
			ev->config = shard_config(sh);
		ev->shard = e->sharded ? sh->no : 0;
	}
	event_emit(&e->own, ev);
}

static void
stage(struct engine *e, struct shard *sh, enum event_type type, const char *name,
      const char *detail, double fraction)
{
	struct event ev = { .type = type };

	ev.u.stage.stage = name;
	ev.u.stage.detail = detail;
	ev.u.stage.fraction = fraction;
	emit(e, sh, &ev);
}

static void
stage_end(struct engine *e, struct shard *sh, const char *name, enum status code,
	  const char *message)
{
	struct event ev = { .type = EV_STAGE_END };

	ev.u.stage.stage = name;
	ev.u.stage.fraction = code == OK ? 1 : -1;
	ev.u.stage.code = code;
	ev.u.stage.message = message;
	emit(e, sh, &ev);
}

static void
warn(struct engine *e, struct shard *sh, const char *msg)
{
	struct event ev = { .type = EV_WARNING };

	ev.u.error.message = msg;
	emit(e, sh, &ev);
}

static void
fail_event(struct engine *e, struct shard *sh, enum status code, const char *msg)
{
	struct event ev = { .type = EV_ERROR };

	ev.u.error.code = code;
	ev.u.error.message = msg;
	emit(e, sh, &ev);
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
		warn(e, NULL, msg);
		free(msg);
		break;
	case LOGFILE_ERROR:
		if (!e->files_failed) {
			msg = xasprintf("cannot write the run's files in '%s': %s; free some space",
					e->dir, strerror(errno));
			e->files_failed = true;
			warn(e, NULL, msg);
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
test_groups(struct engine *e, const struct fs_config *cfg, const char *test, struct strvec *out)
{
	const struct catalogue_test *t = e->have_cat ? catalogue_find(&e->cat, test) : NULL;
	struct check_selection sel;

	if (t) {
		strvec_pushv(out, (const char *const *)t->groups.v);
		return;
	}
	plan_check_selection(&e->plan, e->profiles, cfg, &sel);
	strvec_pushv(out, (const char *const *)sel.groups.v);
	check_selection_release(&sel);
}

/* How long test should take in cfg, and why (in *basis). */
static double
expect_test(struct engine *e, const struct fs_config *cfg, const char *test, enum est_basis *basis)
{
	struct strvec groups = STRVEC_INIT;
	double s;

	test_groups(e, cfg, test, &groups);
	s = estimate_test(&e->est, cfg->name, e->kernel.version, test, &groups, basis);
	strvec_clear(&groups);
	return s;
}

/* The engine's own listener: the run's files, counts; then the front end's listeners. */
static void
on_own_event(void *data, const struct event *ev)
{
	struct engine *e = data;
	struct strbuf sb = STRBUF_INIT;

	event_to_json(ev, &sb);
	log_write(e, &e->events, sb.buf, sb.len);
	switch (ev->type) {
	case EV_TEST_START:
		e->any_test = true;
		break;
	case EV_TEST_END:
		if (!ev->u.test_end.rerun)
			test_counts_add(&e->counts, ev->u.test_end.status, ev->u.test_end.seconds);
		break;
	case EV_KMSG:
		strbuf_reset(&sb);
		if (ev->shard)
			strbuf_addf(&sb, "[%u] ", ev->shard);
		strbuf_addf(&sb, "%s\n", ev->u.line.text);
		log_write(e, &e->kernel_log, sb.buf, sb.len);
		break;
	default:
		break;
	}
	strbuf_release(&sb);
	for (size_t i = 0; i < e->bus->n; i++)
		e->bus->listeners[i].on_event(e->bus->listeners[i].data, ev);
}

static bool
done_already(const struct work *w, const char *test)
{
	return strvec_contains(&w->ended, test);
}

static void
batch_drop(struct shard *sh, const char *test)
{
	for (size_t i = 0; i < sh->batch.n; i++) {
		if (strcmp(sh->batch.v[i], test))
			continue;
		free(sh->batch.v[i]);
		memmove(&sh->batch.v[i], &sh->batch.v[i + 1], (sh->batch.n - i) * sizeof(char *));
		sh->batch.n--;
		return;
	}
}

/*
 * A guest's check and kernel-log events: what the shard keeps of them, then
 * the run's. A later guest's check expunges the tests done before (unit
 * work): not news. A sharded run says a configuration's SECTION once and
 * leaves out each batch's SUMMARY (RUN_END has the run's).
 */
static void
on_shard_event(void *data, const struct event *cev)
{
	struct shard *sh = data;
	struct engine *e = sh->e;
	struct work *w = sh->w;
	struct event ev = *cev;

	switch (ev.type) {
	case EV_SECTION:
		if (e->sharded && w->section_sent)
			return;
		w->section_sent = true;
		break;
	case EV_SUMMARY:
		if (e->sharded)
			return;
		break;
	case EV_TEST_START:
		if (done_already(w, ev.u.test_start.test))
			return;
		/* what fswb expects of it: the watchdog's measure and the run view's ETA */
		ev.u.test_start.expected_seconds =
			expect_test(e, w->cfg, ev.u.test_start.test, &sh->current_basis);
		ev.u.test_start.expected_from = est_basis_str(sh->current_basis);
		free(sh->current_test);
		sh->current_test = xstrdup(ev.u.test_start.test);
		sh->test_started_ms = loop_now_ms();
		if (sh->batch_sent_ms) {
			/* what a batch costs before its first test: the batch rule's measure */
			double took = (double)(sh->test_started_ms - sh->batch_sent_ms) / 1000;

			e->est.batch = e->est.batch > 0 ? (e->est.batch + took) / 2 : took;
			sh->batch_sent_ms = 0;
		}
		sh->current_expected = ev.u.test_start.expected_seconds;
		sh->current_flagged = false;
		break;
	case EV_TEST_END:
		if (ev.u.test_end.rerun)
			break;
		if (done_already(w, ev.u.test_end.test))
			return;
		strvec_push(&w->ended, ev.u.test_end.test);
		sh->ended_here++;
		sh->preempted = 0;
		/* its time informs its estimate on the configurations still to come
		 * (not a not-run's: not applying to one file system says nothing of
		 * how long it takes on another) */
		if (ev.u.test_end.status == TS_PASS || ev.u.test_end.status == TS_FAIL)
			estimator_add_test(&e->est, w->cfg->name, e->kernel.version,
					   ev.u.test_end.test, ev.u.test_end.seconds);
		batch_drop(sh, ev.u.test_end.test);
		free(sh->current_test);
		sh->current_test = NULL;
		break;
	case EV_KMSG:
		sh->kmsg_bad |= ev.u.line.flags & KMSG_BAD;
		break;
	default:
		break;
	}
	emit(e, sh, &ev);
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
	e->events.fd = e->kernel_log.fd = e->shell_fd = e->shell_mine = e->follow_lock = -1;
	strbuf_init(&e->shell_out);
	e->exit_code = 2;
	estimator_init(&e->est, false);
	strvec_init(&e->notices);
	strvec_init(&e->stopped);
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
	const struct backend_ops *ops = backend_find(e->plan.backend);

	/* whether guests are emulated (slow); a machine of its own (ssh) or a cloud's is
	 * what it is, and its probe would wait on the network here, on the loop */
	if (ops && (ops->caps & BACKEND_BOOTS_KERNEL) && !(ops->caps & BACKEND_COSTS))
		inventory_probe(e->plan.backend, &e->plan, &probe);
	inventory_estimator(&e->plan, e->profiles, probe.slow, &e->est);
	backend_probe_release(&probe);
	e->have_cat = inventory_catalogue(&e->plan, &e->cat) == OK;
	error_clear();
	inventory_estimate(&e->plan, e->profiles, e->have_cat ? &e->cat : NULL, &e->est,
			   e->plan.tests.preset, NULL, &total);
	if (total.ntests) {
		begin->u.run.total_tests = (unsigned)total.ntests;
		begin->u.run.expected_seconds = total.wall;
		e->expected_machines = total.shards;
		e->expected_wall = total.wall;
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
		warn(e, NULL, msg);
		free(msg);
	}
}

static enum status
prepare_kernel(struct engine *e)
{
	struct kernel_needs needs;
	enum status rc;

	stage(e, NULL, EV_STAGE_BEGIN, "kernel", kernel_kind_str(e->plan.kernel.kind), -1);
	kernel_init(&e->kernel);
	e->have_kernel = true;
	rc = kernel_needs_init(&needs, e->profiles, &e->plan.configs, &e->plan.kernel.debug);
	if (rc != OK) {
		stage_end(e, NULL, "kernel", rc, error_msg());
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
		stage_end(e, NULL, "kernel", OK, what);
		free(what);
	} else {
		stage_end(e, NULL, "kernel", rc, error_msg());
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
	struct appliance_opts o = { .fstests_src = e->plan.fstests_src,
				    .arch = e->plan.kernel.arch,
				    .cancel = &e->interrupted };
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

			stage_end(e, NULL, "appliance", rc, msg);
			free(msg);
		}
	}
	return rc;
}

/*
 * The kernel and appliance stages run in a worker (core/job.h): a child of
 * fswb with its own loop, so that minutes of building never stop this loop
 * (the front end, Ctrl-C, the clock). The worker sends its events as JSON
 * lines ("E " and the event) and, when both stages are done, one result
 * line ("R " and what the sessions need of the kernel and the appliance);
 * the engine emits the events as its own and goes on from the job's end.
 */
#define PREP_EVENT    "E "
#define PREP_RESULT   "R "
#define PREP_LINE_MAX (256 * 1024)
#define PREP_GRACE_MS 30000 /* the worker stops make and mmdebstrap first */

static void
prep_send(const char *prefix, const char *text, size_t len)
{
	fputs(prefix, stdout);
	fwrite(text, 1, len, stdout);
	fflush(stdout);
}

static void
prep_event_out(void *data, const struct event *ev)
{
	struct strbuf sb = STRBUF_INIT;

	event_to_json(ev, &sb);
	prep_send(PREP_EVENT, sb.buf, sb.len);
	strbuf_release(&sb);
}

static void
prep_on_term(struct loop *loop, int signo, void *data)
{
	((struct engine *)data)->interrupted = true;
}

/* The appliance is made: the machine runs it, or takes its fstests from it. */
static bool
uses_appliance(const struct engine *e)
{
	return (e->backend->caps & BACKEND_APPLIANCE) ||
	       (e->backend->fstests_from_appliance && e->backend->fstests_from_appliance(&e->plan));
}

/*
 * A machine that decides the architecture (an adb device): the appliance is
 * made for it, unless the plan names another than this host's (then the
 * session says they differ).
 */
static void
machine_arch(struct engine *e)
{
	const char *a = e->backend->machine_arch ? e->backend->machine_arch(&e->plan) : NULL;
	const struct arch_info *here = arch_find(NULL);

	error_clear();
	if (!a || !arch_find(a) || !strcmp(a, e->plan.kernel.arch) || !here ||
	    strcmp(e->plan.kernel.arch, here->name))
		return;
	free(e->plan.kernel.arch);
	e->plan.kernel.arch = xstrdup(a);
}

/* The worker: both stages, on its own loop; its exit status says how they went. */
static int
prepare_worker(void *data)
{
	struct engine *e = data;
	enum status rc = OK;

	e->loop = loop_new();
	e->own = (struct event_bus)EVENT_BUS_INIT; /* the parent's listeners stay there */
	event_bus_add(&e->own, (struct listener){ prep_event_out, e });
	loop_watch_signal(e->loop, SIGTERM, prep_on_term, e);
	if (e->backend->caps & BACKEND_BOOTS_KERNEL)
		rc = prepare_kernel(e);
	if (rc == OK && !e->interrupted && uses_appliance(e))
		machine_arch(e);
	if (rc == OK && !e->interrupted && uses_appliance(e))
		rc = prepare_appliance(e);
	if (rc == OK && !e->interrupted) {
		json_t *r = json_object();
		char *text;

		if (e->have_kernel)
			json_object_set_new(r, "kernel",
					    json_pack("{s:o,s:o,s:o,s:o}", "version",
						      json_str_or_null(e->kernel.version), "image",
						      json_str_or_null(e->kernel.image), "modules",
						      json_str_or_null(e->kernel.modules), "config",
						      json_str_or_null(e->kernel.config)));
		if (e->have_appliance)
			json_object_set_new(r, "appliance", json_string(e->appliance.image));
		json_object_set_new(r, "initrd", json_str_or_null(e->initrd));
		json_object_set_new(r, "arch", json_string(e->plan.kernel.arch));
		text = json_dumps(r, JSON_COMPACT);
		prep_send(PREP_RESULT, text, strlen(text));
		fputc('\n', stdout);
		free(text);
		json_decref(r);
	}
	return rc == OK ? 0 : 1;
}

static void
prep_take_result(struct engine *e, const char *text)
{
	json_t *r = json_loads(text, 0, NULL), *k;

	if (!r)
		return;
	k = json_object_get(r, "kernel");
	if (json_is_object(k)) {
		kernel_init(&e->kernel);
		e->have_kernel = true;
		e->kernel.version = json_strdup_member(k, "version");
		e->kernel.image = json_strdup_member(k, "image");
		e->kernel.modules = json_strdup_member(k, "modules");
		e->kernel.config = json_strdup_member(k, "config");
	}
	if (json_is_string(json_object_get(r, "appliance"))) {
		e->have_appliance = true;
		e->appliance.image = json_strdup_member(r, "appliance");
	}
	e->initrd = json_strdup_member(r, "initrd");
	if (json_is_string(json_object_get(r, "arch")) &&
	    arch_find(json_string_value(json_object_get(r, "arch")))) {
		free(e->plan.kernel.arch);
		e->plan.kernel.arch = json_strdup_member(r, "arch");
	}
	e->prep_result = true;
	json_decref(r);
}

static void
prep_line(void *data, char *line, size_t len, bool cut)
{
	struct engine *e = data;

	if (!cut && str_startswith(line, PREP_EVENT)) {
		struct event_owned ev;

		if (event_from_json(line + strlen(PREP_EVENT), &ev) == OK) {
			event_emit(&e->own, &ev.ev);
			event_json_release(&ev);
			return;
		}
		event_json_release(&ev);
	} else if (!cut && str_startswith(line, PREP_RESULT)) {
		prep_take_result(e, line + strlen(PREP_RESULT));
		return;
	}
	/* anything else (a message of fswb's own on stderr): the last lines */
	if (e->prep_tail.len > 2048)
		strbuf_drop_front(&e->prep_tail, e->prep_tail.len - 1024);
	strbuf_addf(&e->prep_tail, "%.*s\n", (int)(len > 512 ? 512 : len), line);
}

static void
prep_done(void *data, const struct job_result *r)
{
	struct engine *e = data;
	const struct job_result res = *r;

	job_free(e->prep);
	e->prep = NULL;
	if (res.exit.exited && res.exit.code == 0 && e->prep_result && !e->interrupted) {
		go(e);
		return;
	}
	if (!e->interrupted && !(res.exit.exited && res.exit.code == 1)) {
		/* it ended without saying why: fswb's own failure */
		char how[128];
		char *msg = xasprintf("the kernel and appliance stages ended abruptly (%s)%s%s",
				      child_exit_str(&res.exit, how, sizeof(how)),
				      e->prep_tail.len ? ": " : "", e->prep_tail.buf);

		str_trim(msg);
		fail_event(e, NULL, ERR_CHILD, msg);
		free(msg);
	}
	finish_run(e);
}

static void
start_prepare(struct engine *e)
{
	struct job_opts o = JOB_OPTS_INIT;
	enum status rc;

	o.fn = prepare_worker;
	o.fn_arg = e;
	o.fn_name = "the kernel and appliance stages";
	o.line_max = PREP_LINE_MAX;
	o.kill_grace_ms = PREP_GRACE_MS;
	o.on_line = prep_line;
	o.on_done = prep_done;
	o.data = e;
	rc = job_start(e->loop, &o, &e->prep);
	if (rc != OK) {
		fail_event(e, NULL, rc, error_msg());
		finish_run(e);
	}
}

/* ---- the queue ---- */

static double
work_left(const struct work *w)
{
	double s = 0;

	for (size_t i = 0; i < w->ntodo; i++)
		s += w->todo[i].secs;
	return s;
}

/* Tests of w a guest can take now (a batch, or the whole unit). */
static bool
work_open(const struct work *w)
{
	if (w->abandoned)
		return false;
	return w->listed ? w->ntodo > 0 : !w->taken && !w->done;
}

static bool
any_work_open(const struct engine *e)
{
	for (size_t i = 0; i < e->nworks; i++)
		if (work_open(&e->works[i]))
			return true;
	return false;
}

static void
work_push(struct work *w, const char *test, double secs, bool front)
{
	if (w->ntodo == w->alloc) {
		w->alloc = w->alloc ? 2 * w->alloc : 16;
		w->todo = xrealloc(w->todo, w->alloc * sizeof(*w->todo));
	}
	if (front) {
		memmove(&w->todo[1], &w->todo[0], w->ntodo * sizeof(*w->todo));
		w->todo[0] = (struct item){ xstrdup(test), secs };
	} else {
		w->todo[w->ntodo] = (struct item){ xstrdup(test), secs };
	}
	w->ntodo++;
}

static int
longest_first(const void *a, const void *b)
{
	const struct item *x = a, *y = b;

	if (x->secs != y->secs)
		return x->secs < y->secs ? 1 : -1;
	return strcmp(x->test, y->test);
}

static void
work_release(struct work *w)
{
	for (size_t i = 0; i < w->ntodo; i++)
		free(w->todo[i].test);
	free(w->todo);
	w->todo = NULL;
	w->ntodo = w->alloc = 0;
	strvec_clear(&w->ended);
	free(w->slug);
	w->slug = NULL;
}

/*
 * No more guests for w: its tests that are still waiting will not run
 * (said, with how many).
 */
static void
work_abandon(struct engine *e, struct work *w, const char *why)
{
	char *msg;

	if (w->abandoned)
		return;
	w->abandoned = true;
	if (!w->ntodo)
		return;
	/* they stay in todo: the run's end lists them as never reached */
	msg = xasprintf("%zu test%s of '%s' will not run: %s", w->ntodo, w->ntodo == 1 ? "" : "s",
			w->cfg->name, why);
	warn(e, NULL, msg);
	free(msg);
}

/*
 * The next batch of w for a shard (estimate_batch_target()), moved from
 * w->todo to out; the tests of every listed configuration count as what is
 * left.
 */
static void
take_batch(struct engine *e, struct work *w, struct strvec *out)
{
	double left = 0, target, sum = 0;
	size_t n = 0;

	for (size_t i = 0; i < e->nworks; i++)
		if (!e->works[i].abandoned)
			left += work_left(&e->works[i]);
	target = estimate_batch_target(&e->est, left, e->nshards);
	while (n < w->ntodo && n < BATCH_MAX_TESTS && (!n || sum + w->todo[n].secs <= target)) {
		sum += w->todo[n].secs;
		strvec_push(out, w->todo[n].test);
		free(w->todo[n].test);
		n++;
	}
	memmove(w->todo, w->todo + n, (w->ntodo - n) * sizeof(*w->todo));
	w->ntodo -= n;
}

/* plan.detach: the shard's share of its listed configuration, moved from w->todo to its batch. */
static void
take_share(struct shard *sh)
{
	struct work *w = sh->w;
	size_t k = 0;

	for (size_t i = 0; i < w->ntodo; i++) {
		if (strvec_contains(&sh->share, w->todo[i].test)) {
			strvec_push(&sh->batch, w->todo[i].test);
			free(w->todo[i].test);
		} else {
			w->todo[k++] = w->todo[i];
		}
	}
	w->ntodo = k;
}

/*
 * plan.detach: each guest takes its whole share at once, as nothing hands
 * out batches once it runs alone. Each configuration gets a shard at
 * least; the rest go where most time is left per shard; a listed
 * configuration's tests are split longest first onto its least loaded
 * shard. False (said) when the configurations outnumber the shards.
 */
static bool
detach_shares(struct engine *e)
{
	unsigned *count, next = 0, left;
	char *msg;

	if (e->nworks > e->nshards) {
		msg = xasprintf("--detach runs each configuration on machines of its own: %zu "
				"configurations need %zu machines at once, and this run has %u "
				"(--shards %zu)",
				e->nworks, e->nworks, e->nshards, e->nworks);
		fail_event(e, NULL, ERR_INVALID, msg);
		free(msg);
		return false;
	}
	count = xcalloc(e->nworks + 1, sizeof(*count));
	for (size_t i = 0; i < e->nworks; i++)
		count[i] = 1;
	for (left = e->nshards - (unsigned)e->nworks; left; left--) {
		size_t best = e->nworks;
		double most = -1;

		for (size_t i = 0; i < e->nworks; i++) {
			double per = work_left(&e->works[i]) / count[i];

			if (e->works[i].listed && e->works[i].ntodo > count[i] && per > most) {
				most = per;
				best = i;
			}
		}
		if (best == e->nworks)
			break;
		count[best]++;
	}
	for (size_t i = 0; i < e->nworks; i++) {
		struct work *w = &e->works[i];
		double *sums = xcalloc(count[i], sizeof(*sums));

		for (unsigned j = 0; j < count[i]; j++) {
			e->shards[next + j].w = w;
			e->shards[next + j].has_share = true;
			e->shards[next + j].listed_share = w->listed;
		}
		for (size_t t = 0; w->listed && t < w->ntodo; t++) {
			unsigned least = 0;

			for (unsigned j = 1; j < count[i]; j++)
				if (sums[j] < sums[least])
					least = j;
			strvec_push(&e->shards[next + least].share, w->todo[t].test);
			sums[least] += w->todo[t].secs;
		}
		free(sums);
		next += count[i];
	}
	free(count);
	return true;
}

/* plan.detach: at most how long the shard's machine may run alone (seconds). */
static unsigned
detach_limit(struct shard *sh)
{
	struct engine *e = sh->e;
	double secs = 0;

	if (sh->listed_share)
		for (size_t i = 0; i < sh->share.n; i++)
			secs += expect_test(e, sh->w->cfg, sh->share.v[i], NULL);
	else
		secs = e->expected_wall;
	if (secs <= 0)
		return 24 * 3600;
	/* three times what it should take, and an hour to boot and send the results */
	return secs * 3 + 3600 > 7 * 86400 ? 7 * 86400 : (unsigned)(secs * 3) + 3600;
}

/*
 * Named tests of other filesystems are left out of configuration cfg
 * (plan_check saw that some configuration takes each), with a warning into
 * notes. False when that leaves it nothing to run.
 */
static bool
config_has_tests(struct engine *e, const struct fs_config *cfg, struct strvec *notes)
{
	const struct plan_tests *t = &e->plan.tests;
	struct strvec other = STRVEC_INIT;
	bool any;
	char *list;

	for (size_t i = 0; i < t->tests.n; i++)
		if (!catalogue_name_fits(t->tests.v[i], cfg->fstyp))
			strvec_push(&other, t->tests.v[i]);
	any = t->preset || t->groups.n || other.n < t->tests.n;
	if (other.n) {
		list = strvec_join(&other, " ");
		push_owned(
			notes,
			any ? xasprintf("%s: leaving out %s, not tests for %s (check would run "
					"them and they would fail)",
					cfg->name, list, cfg->fstyp)
			    : xasprintf("%s: nothing to run: the tests named (%s) are not for %s",
					cfg->name, list, cfg->fstyp));
		free(list);
	}
	strvec_clear(&other);
	return any;
}

/*
 * The tests check would run for w, when this host knows them: the
 * catalogue's selection, or the plan's named tests when it names nothing
 * else (no test set, group or pattern). False when they are not known.
 */
static bool
work_list(struct engine *e, struct work *w)
{
	const struct plan_tests *t = &e->plan.tests;
	struct strvec tests = STRVEC_INIT;

	if (e->have_cat) {
		struct catalogue_selection sel;

		if (inventory_selection(&e->plan, e->profiles, &e->cat, NULL, w->cfg, &sel) != OK) {
			error_clear();
			return false;
		}
		strvec_copy(&tests, &sel.tests);
		catalogue_selection_release(&sel);
	} else {
		if (t->preset || t->groups.n)
			return false;
		for (size_t i = 0; i < t->tests.n; i++) {
			if (strpbrk(t->tests.v[i], "*?["))
				goto unknown;
			if (catalogue_name_fits(t->tests.v[i], w->cfg->fstyp))
				strvec_push(&tests, t->tests.v[i]);
		}
	}
	for (size_t i = 0; i < tests.n; i++)
		work_push(w, tests.v[i], expect_test(e, w->cfg, tests.v[i], NULL), false);
	if (w->ntodo)
		qsort(w->todo, w->ntodo, sizeof(*w->todo), longest_first);
	strvec_clear(&tests);
	w->listed = true;
	return true;
unknown:
	strvec_clear(&tests);
	return false;
}

static void
work_init(struct work *w, const struct fs_config *cfg)
{
	w->cfg = cfg;
	strvec_init(&w->ended);
	w->slug = xstrdup(cfg->name);
	for (char *p = w->slug; *p; p++)
		if (*p == '/')
			*p = '-';
}

static void
alloc_shards(struct engine *e)
{
	e->shards = xcalloc(e->nshards, sizeof(*e->shards));
	for (unsigned i = 0; i < e->nshards; i++) {
		struct shard *sh = &e->shards[i];

		sh->e = e;
		sh->no = i + 1;
		sh->result_fd = -1;
		sh->console.fd = -1;
		sh->guest_busy = -1;
		strvec_init(&sh->batch);
		strvec_init(&sh->share);
		line_asm_init(&sh->out_line, CONSOLE_LINE_MAX, false);
		event_bus_add(&sh->bus, (struct listener){ on_shard_event, sh });
	}
}

/*
 * The run's work, one per configuration with tests, and how many guests run
 * at once (run/shards.h; *why says how). Messages for after RUN_BEGIN go to
 * notes (warnings) and errors.
 */
static void
plan_work(struct engine *e, struct strvec *notes, struct strvec *errors, struct strbuf *why)
{
	const struct backend_ops *ops = backend_find(e->plan.backend);
	struct host_size host;
	size_t units = 0;
	bool listed = true;

	e->works = xcalloc(e->plan.configs.n ? e->plan.configs.n : 1, sizeof(*e->works));
	for (size_t i = 0; i < e->plan.configs.n; i++) {
		const struct fs_config *c;

		if (profiles_resolve_config(e->profiles, e->plan.configs.v[i], &c) != OK) {
			strvec_push(errors, error_msg());
			error_clear();
			continue;
		}
		if (!config_has_tests(e, c, notes))
			continue;
		work_init(&e->works[e->nworks++], c);
	}
	/* tests are split over guests only when there may be several, and not by check -n */
	for (size_t i = 0; e->plan.shards != 1 && !e->plan.dry_run && i < e->nworks; i++)
		listed = work_list(e, &e->works[i]) && listed;
	for (size_t i = 0; i < e->nworks; i++)
		units += e->works[i].listed ? e->works[i].ntodo : 1;
	host_size_read(&host);
	e->nshards = shards_choose(&e->plan, ops, &host, units, why);
	if (e->nshards > 1 && !listed)
		push_owned(notes,
			   xstrdup("the tests are not known on this host before the appliance has "
				   "fstests (a URL or the default source): each configuration runs "
				   "in one guest, configurations side by side"));
	else if (e->plan.shards > 1 && e->nshards == 1)
		push_owned(notes, xasprintf("--shards %u: %s", e->plan.shards, why->buf));
	e->sharded = e->nshards > 1;
	if (!e->sharded) {
		/* one guest at a time: each configuration is one check, as by hand */
		for (size_t i = 0; i < e->nworks; i++) {
			struct work *w = &e->works[i];

			for (size_t j = 0; j < w->ntodo; j++)
				free(w->todo[j].test);
			w->ntodo = 0;
			w->listed = false;
		}
	}
	alloc_shards(e);
}

/* Once the kernel is known: each queue in the order its history for that kernel gives. */
static void
work_reorder(struct engine *e)
{
	for (size_t i = 0; i < e->nworks; i++) {
		struct work *w = &e->works[i];

		for (size_t j = 0; j < w->ntodo; j++)
			w->todo[j].secs = expect_test(e, w->cfg, w->todo[j].test, NULL);
		if (w->ntodo)
			qsort(w->todo, w->ntodo, sizeof(*w->todo), longest_first);
	}
}

/* The work a free shard takes next: its own configuration's, else the one with most left. */
static struct work *
pick_work(struct engine *e, struct work *prefer)
{
	struct work *best = NULL;
	double best_left = -1;

	if (prefer && work_open(prefer))
		return prefer;
	for (size_t i = 0; i < e->nworks; i++) {
		struct work *w = &e->works[i];
		double left;

		if (!work_open(w))
			continue;
		if (!w->listed)
			return w; /* units in the plan's order */
		left = work_left(w);
		if (left > best_left) {
			best = w;
			best_left = left;
		}
	}
	return best;
}
/* ---- the guest ---- */

/* Quote the last lines of the kernel log into a message. */
static void
add_console_tail(struct shard *sh, struct strbuf *sb)
{
	struct strbuf tail = STRBUF_INIT;

	if (sh->kmsg)
		kmsg_tail(sh->kmsg, &tail);
	if (tail.len) {
		strbuf_adds(sb, "\nthe last kernel-log lines:\n");
		strbuf_add(sb, tail.buf, tail.len);
	}
	strbuf_release(&tail);
}

/* Why the guest died, from its kernel log. */
static const char *
death_cause(const struct shard *sh)
{
	if (sh->kmsg_bad & KMSG_PANIC)
		return "the kernel panicked";
	if (sh->kmsg_bad & (KMSG_OOPS | KMSG_BUG))
		return "the kernel oopsed and the guest died";
	return "the guest died";
}

static void
on_console(void *data, const char *buf, size_t len)
{
	struct shard *sh = data;

	sh->last_heard_ms = sh->last_output_ms = loop_now_ms();
	log_write(sh->e, &sh->console, buf, len);
	kmsg_feed(sh->kmsg, buf, len);
}

static void
send_frame(struct shard *sh, const struct strbuf *frame)
{
	if (session_send(sh->session, frame->buf, frame->len) != OK)
		warn(sh->e, sh, error_msg());
}

static char *
disk_role_path(struct shard *sh, const struct session_disk *disks, size_t n, const char *role)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(disks[i].role, role))
			return session_disk_path(sh->session, i);
	return NULL;
}

/*
 * Where a file system served over NFS (serve = nfs) is exported in the
 * guest, and the address check mounts it from: HOST:DIR is its TEST_DEV
 * and SCRATCH_DEV.
 */
#define NFS_HOST	   "127.0.0.1"
#define NFS_TEST_EXPORT	   "/srv/fswb/test"
#define NFS_SCRATCH_EXPORT "/srv/fswb/scratch"

/* The disks a configuration needs, in the order the guest sees them. */
static size_t
config_disks(const struct fs_config *c, struct session_disk *d, char names[][16])
{
	size_t n = 0;

	if (c->devices) /* devices = none: tmpfs */
		return 0;
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
	/* LOGWRITES_DEV for the log-replay tests (dm-log-writes), scratch-sized;
	 * not for a served file system, which is no block device */
	if (c->scratch_size && !c->serve)
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

	const char *fstyp = c->base ? c->base : c->fstyp; /* an overlay's is its base's */

	strvec_pushf(out, "mkfs.%s", fstyp);
	for (size_t i = 0; i < ARRAY_SIZE(force); i++)
		if (!strcmp(force[i].fstyp, fstyp))
			strvec_push(out, force[i].force);
	strvec_split(out, c->mkfs_options, " \t");
	if (!strcmp(fstyp, "xfs") && logdev)
		strvec_pushf(out, "-llogdev=%s", logdev);
	if (!strcmp(fstyp, "xfs") && rtdev)
		strvec_pushf(out, "-rrtdev=%s", rtdev);
	strvec_push(out, dev);
}

/*
 * check's test selection for the shard's guest (plan_check_selection(): the
 * groups, exclusions and named tests) and the settings it gives check. A
 * batch names its tests instead of the groups: check still leaves out the
 * -x groups and expunges the -e and -E tests among them, as it would in
 * one run.
 */
static void
check_words(struct shard *sh, const struct agent_job *job, struct strvec *out, struct strvec *env)
{
	struct engine *e = sh->e;
	struct work *w = sh->w;
	struct check_selection sel;
	struct strvec excluded = STRVEC_INIT;

	plan_check_selection(&e->plan, e->profiles, w->cfg, &sel);
	if (e->have_cat)
		check_selection_expand(&sel, &e->cat, w->cfg->fstyp);
	for (size_t i = 0; i < sel.env.n; i++)
		strvec_push(env, sel.env.v[i]);
	for (size_t i = 0; !w->listed && i < sel.groups.n; i++)
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
	if (w->listed) {
		strvec_pushv(out, (const char *const *)sh->batch.v);
	} else {
		if (w->ended.n) {
			strvec_push(out, "-E");
			push_owned(out, agent_job_path(job, "exclude-done"));
		}
		strvec_pushv(out, (const char *const *)sel.tests.v);
	}
	check_selection_release(&sel);
}

/* results/CONFIG-SLUG/: check's results directory and the kernel-log slices. */
static char *
results_dir(struct engine *e, const struct work *w)
{
	char *rel = xasprintf("results/%s", w->slug);
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
keep_localconfig(struct shard *sh, const struct strbuf *lc, const struct strvec *mkfs)
{
	struct strbuf text = STRBUF_INIT;
	char *dir = results_dir(sh->e, sh->w), *path = path_join(dir, "local.config");

	strbuf_addf(&text, "# %s: the local.config check read in the guest (HOST_OPTIONS)\n",
		    sh->w->cfg->name);
	if (mkfs->n && sh->w->cfg->serve) {
		strbuf_addf(&text,
			    "# TEST_DEV is exported over %s by the guest; its disk was made with: ",
			    sh->w->cfg->serve);
		sq_quote_argv(&text, (const char *const *)mkfs->v);
	} else if (mkfs->n) {
		strbuf_adds(&text, "# TEST_DEV was made with: ");
		sq_quote_argv(&text, (const char *const *)mkfs->v);
	} else {
		strbuf_adds(&text, "# TEST_DEV is no device: nothing was formatted");
	}
	strbuf_addf(&text, "\n%s", lc->buf);
	if (mkdir_p(dir, 0755) != OK || write_file_atomic(path, text.buf, text.len, 0644) != OK)
		warn(sh->e, sh, error_msg());
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
wipe_confirmed(struct shard *sh, size_t ndisks)
{
	struct engine *e = sh->e;
	const char *wipe = plan_backend_opt(&e->plan, "wipe");
	struct strvec ok = STRVEC_INIT, missing = STRVEC_INIT, all = STRVEC_INIT;
	enum status rc = OK;

	if (!(e->backend->caps & BACKEND_WIPES))
		return OK;
	if (wipe)
		strvec_split(&ok, wipe, ",");
	for (size_t i = 0; i < ndisks; i++) {
		char *dev = session_disk_path(sh->session, i);

		if (!dev) /* the machine has none for this role */
			continue;
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
			   sh->w->cfg->name, miss, list);
		free(list);
		free(miss);
	}
	strvec_clear(&ok);
	strvec_clear(&missing);
	strvec_clear(&all);
	return rc;
}

static void
new_parser(struct shard *sh)
{
	check_parser_free(sh->parser);
	sh->parser = check_parser_new(&sh->bus, sh->w->cfg->name);
}

/* READY came: send the job (as FILEs) and RUN: the unit, or the next batch. */
static void
send_job(struct shard *sh)
{
	struct engine *e = sh->e;
	struct work *w = sh->w;
	struct session_disk disks[24];
	char names[16][16];
	size_t ndisks = config_disks(w->cfg, disks, names);
	struct localconfig_devices dev = { 0 };
	struct localconfig_section sec;
	struct strvec mkfs = STRVEC_INIT, opts = STRVEC_INIT, tests = STRVEC_INIT;
	struct strvec env = STRVEC_INIT, pool = STRVEC_INIT;
	struct strbuf lc = STRBUF_INIT, jobenv = STRBUF_INIT, frame = STRBUF_INIT;
	struct session_layout where = session_layout(sh->session);
	char *test_mnt = path_join(where.mnt_dir, "test");
	char *scratch_mnt = path_join(where.mnt_dir, "scratch");
	const char *const mounts[] = { test_mnt, scratch_mnt, NULL };
	struct agent_job job = { .fstests_dir = where.fstests_dir,
				 .job_dir = where.job_dir,
				 .fstyp = w->cfg->fstyp,
				 .config = "local.config",
				 .result_base = where.results_dir,
				 .mount_points = mounts };
	/* without devices (tmpfs) TEST_DEV and SCRATCH_DEV are only names; a
	 * served file system's are the exports of its disks */
	char *test_disk = disk_role_path(sh, disks, ndisks, "test");
	char *scratch_disk = disk_role_path(sh, disks, ndisks, "scratch");
	char *test_dev = w->cfg->devices ? xasprintf("%s_test", w->cfg->fstyp)
			 : w->cfg->serve ? xasprintf("%s:%s", NFS_HOST, NFS_TEST_EXPORT)
			 : test_disk	 ? xstrdup(test_disk)
					 : NULL;
	char *scratch = w->cfg->devices ? xasprintf("%s_scratch", w->cfg->fstyp)
			: w->cfg->serve ? xasprintf("%s:%s", NFS_HOST, NFS_SCRATCH_EXPORT)
			: scratch_disk	? xstrdup(scratch_disk)
					: NULL;
	struct strvec mkfs_scratch = STRVEC_INIT, exports = STRVEC_INIT;
	char *logdev = disk_role_path(sh, disks, ndisks, "logdev");
	char *rtdev = disk_role_path(sh, disks, ndisks, "rtdev");
	char *test_logdev = disk_role_path(sh, disks, ndisks, "test_logdev");
	char *test_rtdev = disk_role_path(sh, disks, ndisks, "test_rtdev");
	char *logwrites = disk_role_path(sh, disks, ndisks, "logwrites");
	char *kconfig = NULL;
	enum status rc;

	if (sh->listed_share)
		take_share(sh);
	else if (w->listed)
		take_batch(e, w, &sh->batch);
	else
		w->taken = true;
	sh->batches++;
	for (size_t i = 0; i < ndisks; i++)
		if (!strncmp(disks[i].role, "pool", 4))
			push_owned(&pool, session_disk_path(sh->session, i)); /* never NULL */
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
	sec.config = w->cfg;
	sec.dev = &dev;
	strvec_pushv(&opts, (const char *const[]){ "-R", "xunit", "-T", NULL });
	/* the overlay over TEST and SCRATCH formatted as its base (a served
	 * base is no overlay: check sees only nfs) */
	if (w->cfg->base && !w->cfg->serve)
		strvec_push(&opts, "-overlay");
	if (e->plan.dry_run)
		strvec_push(&tests, "-n");
	check_words(sh, &job, &tests, &env);
	/* the kernel's config, where fstests' _require_kernel_config looks first */
	if (e->kernel.config) {
		kconfig = agent_job_path(&job, "kernel.config");
		strvec_pushf(&env, "KCONFIG_PATH=%s", kconfig);
	}
	if (!w->cfg->devices)
		mkfs_words(w->cfg, test_disk, test_logdev, test_rtdev, &mkfs);
	/* check never formats the base of an overlay's or an nfs SCRATCH (it
	 * only empties it): the guest makes both disks, as xfstests-bld does */
	if (w->cfg->base && test_disk && scratch_disk)
		mkfs_words(w->cfg, scratch_disk, NULL, NULL, &mkfs_scratch);
	if (w->cfg->serve && test_disk && scratch_disk) {
		strvec_pushv(&exports,
			     (const char *const[]){ test_disk, NFS_TEST_EXPORT, scratch_disk,
						    NFS_SCRATCH_EXPORT, NULL });
		job.nfs_exports = (const char *const *)exports.v;
		job.nfs_base = w->cfg->base;
	}
	/* the guest's next batch goes on with its TEST_DEV, as one check would */
	job.mkfs_test = sh->job_sent || !mkfs.n ? NULL : (const char *const *)mkfs.v;
	job.mkfs_scratch =
		sh->job_sent || !mkfs_scratch.n ? NULL : (const char *const *)mkfs_scratch.v;
	job.check_opts = (const char *const *)opts.v;
	job.check_tests = (const char *const *)tests.v;
	rc = wipe_confirmed(sh, ndisks);
	if (rc == OK)
		rc = localconfig_write(&sec, 1, where.results_dir, &env, &lc);
	if (rc == OK) {
		keep_localconfig(sh, &lc, &mkfs);
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
	if (rc == OK && !w->listed && w->ended.n) {
		char *list = strvec_join(&w->ended, "\n");

		rc = agent_frame_file(&frame, "exclude-done", 0644, list, strlen(list));
		free(list);
	}
	if (rc != OK && e->following) {
		/* the machine has its job since the run began: this one is not sent */
		error_clear();
		rc = OK;
	}
	if (rc == OK) {
		agent_frame_run(&frame);
		send_frame(sh, &frame);
		agent_order_sent(&sh->order, AGENT_RUN);
		/* a guest's first batch makes TEST_DEV too: only the later ones are measured */
		sh->batch_sent_ms = sh->job_sent ? loop_now_ms() : 0;
		new_parser(sh);
		sh->job_sent = true;
		sh->got_exit = sh->got_result = false;
		sh->phase = PH_TESTS;
		sh->phase_ms = sh->last_heard_ms = loop_now_ms();
		if (!sh->tests_open)
			stage(e, sh, EV_STAGE_BEGIN, "tests", w->cfg->name, -1);
		sh->tests_open = true;
		if (e->plan.detach && !e->following)
			detach_guest(sh);
	} else {
		char *msg =
			xasprintf("the job for '%s' cannot be made: %s", w->cfg->name, error_msg());

		fail_event(e, sh, rc, msg);
		free(msg);
		sh->job_failed = true;
		sh->phase = PH_DONE;
		session_cancel(sh->session);
	}
	free(test_mnt);
	free(scratch_mnt);
	free(test_dev);
	free(scratch);
	free(test_disk);
	free(scratch_disk);
	strvec_clear(&mkfs_scratch);
	strvec_clear(&exports);
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
end_current_test(struct shard *sh, enum test_status st, const char *why)
{
	struct event ev = { .type = EV_TEST_END };
	struct strbuf detail = STRBUF_INIT;
	char *test;

	if (!sh->current_test)
		return;
	test = xstrdup(sh->current_test);
	add_console_tail(sh, &detail);
	ev.u.test_end.test = test;
	ev.u.test_end.status = st;
	ev.u.test_end.seconds = (double)(loop_now_ms() - sh->test_started_ms) / 1000;
	ev.u.test_end.reason = why;
	ev.u.test_end.detail = detail.len ? detail.buf : NULL;
	on_shard_event(sh, &ev);
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
 * A guest's results could not be kept (code: ERR_IO when this host could
 * not write them, else the guest's archive was bad): said as the run's
 * error (run.json, the summary), fswb exits non-zero (see lost_exit), and no
 * partial archive stays.
 */
static void
results_lost(struct shard *sh, const char *why, enum status code)
{
	struct engine *e = sh->e;
	char *msg = xasprintf("the results of '%s' were lost: %s; the outcomes above come from "
			      "check's output, its files (.out.bad, .full, result.xml) are not "
			      "in the run directory",
			      sh->w->cfg->name, why);

	if (e->lost_exit < (code == ERR_IO ? 2 : 1))
		e->lost_exit = code == ERR_IO ? 2 : 1;
	close_fd(&sh->result_fd);
	if (sh->result_path)
		unlink(sh->result_path);
	sh->got_result = false;
	fail_event(e, sh, code, msg);
	free(msg);
}

/* Append the file src to dst (check.log: one guest's lines after another's). */
static enum status
append_file(const char *src, const char *dst)
{
	char *text = NULL;
	size_t len;
	enum status rc = read_file(src, ARCHIVE_MAX_DEFAULT, &text, &len);
	int fd;

	if (rc != OK)
		return rc;
	fd = open(dst, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || !write_fd_all(fd, text, len))
		rc = error(ERR_IO, "cannot append to '%s': %s", dst, strerror(errno));
	if (fd >= 0)
		close(fd);
	free(text);
	return rc;
}

/* check.time of several checks: "TEST SECONDS" lines, the later one of a test kept. */
static enum status
merge_check_time(const char *src, const char *dst)
{
	char *old = NULL, *add = NULL;
	size_t lold, ladd;
	struct strvec lines = STRVEC_INIT, newer = STRVEC_INIT;
	struct strbuf out = STRBUF_INIT;
	enum status rc;

	rc = read_file(dst, 16u << 20, &old, &lold);
	if (rc == OK)
		rc = read_file(src, 16u << 20, &add, &ladd);
	if (rc == OK) {
		strvec_split(&lines, old, "\n");
		strvec_split(&newer, add, "\n");
		for (size_t i = 0; i < lines.n; i++) {
			size_t k = strcspn(lines.v[i], " ");
			bool replaced = false;

			for (size_t j = 0; j < newer.n && !replaced; j++)
				replaced =
					!strncmp(lines.v[i], newer.v[j], k) && newer.v[j][k] == ' ';
			if (!replaced)
				strbuf_addf(&out, "%s\n", lines.v[i]);
		}
		for (size_t j = 0; j < newer.n; j++)
			strbuf_addf(&out, "%s\n", newer.v[j]);
		rc = write_file_atomic(dst, out.buf, out.len, 0644);
	}
	free(old);
	free(add);
	strvec_clear(&lines);
	strvec_clear(&newer);
	strbuf_release(&out);
	return rc;
}

/*
 * Move one guest's unpacked results (src) into the configuration's results
 * directory (dst), as one check would have left them: new files and
 * directories move in; check.log and check.full are appended, check.time
 * merged; any other file that is there already (result.xml, the xunit
 * report of each check) is kept under aside/. Only regular files and
 * directories are there (the archive reader made them).
 */
static enum status
merge_tree(const char *src, const char *dst, const char *aside)
{
	DIR *d = opendir(src);
	struct dirent *de;
	enum status rc = OK;

	if (!d)
		return error(ERR_IO, "cannot read '%s': %s", src, strerror(errno));
	while (rc == OK && (de = readdir(d))) {
		char *from, *to;
		struct stat sf, st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		from = path_join(src, de->d_name);
		to = path_join(dst, de->d_name);
		if (lstat(from, &sf) || (!S_ISREG(sf.st_mode) && !S_ISDIR(sf.st_mode))) {
			/* nothing else is made by the archive reader */
		} else if (lstat(to, &st)) {
			if (rename(from, to))
				rc = error(ERR_IO, "cannot move '%s' to '%s': %s", from, to,
					   strerror(errno));
		} else if (S_ISDIR(sf.st_mode) && S_ISDIR(st.st_mode)) {
			char *sub = path_join(aside, de->d_name);

			rc = merge_tree(from, to, sub);
			free(sub);
		} else if (S_ISREG(sf.st_mode) && S_ISREG(st.st_mode) &&
			   (!strcmp(de->d_name, "check.log") ||
			    !strcmp(de->d_name, "check.full"))) {
			rc = append_file(from, to);
		} else if (S_ISREG(sf.st_mode) && S_ISREG(st.st_mode) &&
			   !strcmp(de->d_name, "check.time")) {
			rc = merge_check_time(from, to);
		} else {
			char *keep = path_join(aside, de->d_name);

			rc = mkdir_p(aside, 0755);
			if (rc == OK && rename(from, keep))
				rc = error(ERR_IO, "cannot move '%s' to '%s': %s", from, keep,
					   strerror(errno));
			free(keep);
		}
		free(from);
		free(to);
	}
	closedir(d);
	return rc;
}

/*
 * Unpack the results archive (fstests/archive.h) of the shard's last check
 * into a directory of its own, merge it into the configuration's results
 * and attach the files to the record.
 */
static void
unpack_results(struct shard *sh)
{
	struct engine *e = sh->e;
	char *dest = results_dir(e, sh->w), *text, *rel, *staging, *aside;
	struct archive_report rep;
	struct section_result *sec;
	enum status rc;

	if (!e->sharded)
		stage(e, sh, EV_STAGE_BEGIN, "results", sh->w->cfg->name, -1);
	archive_report_init(&rep);
	rel = xasprintf("unpack-%u", sh->no);
	staging = path_join(e->dir, rel);
	free(rel);
	rel = xasprintf("batches/%u.%u", sh->no, sh->batches);
	aside = path_join(dest, rel);
	free(rel);
	rc = remove_tree(staging);
	if (rc == OK)
		rc = mkdir_p(staging, 0755);
	if (rc == OK)
		rc = mkdir_p(dest, 0755);
	sh->unpacking = true;
	if (rc == OK)
		rc = archive_unpack(sh->result_path, staging, max_results(e), &rep);
	if (rc == OK || rc == ERR_PARSE) {
		/* what came before a damage is kept */
		enum status mrc = merge_tree(staging, dest, aside);

		if (rc == OK)
			rc = mrc;
	}
	sh->unpacking = false;
	if (remove_tree(staging) != OK)
		error_clear();
	free(staging);
	free(aside);
	unlink(sh->result_path);
	text = archive_report_text(&rep);
	if (*text)
		warn(e, sh, text);
	if (rc == OK) {
		sec = run_record_section(&e->results.rec, sh->w->cfg->name, sh->w->cfg->name);
		section_attach_artifacts(sec, dest);
		results_writer_flush(&e->results);
		if (!e->sharded)
			stage_end(e, sh, "results", OK, NULL);
	} else {
		char *why = xstrdup(error_msg());

		if (!e->sharded)
			stage_end(e, sh, "results", rc, why);
		results_lost(sh, why, rc);
		free(why);
	}
	free(text);
	archive_report_release(&rep);
	free(dest);
	if (sh->done_pending) {
		sh->done_pending = false;
		loop_add_timer(e->loop, 0, false, deferred_shard_done, sh);
	}
}

/* A RESULT piece: the results archive, streamed to a new file (none when empty). */
static void
save_result(struct shard *sh, const struct agent_msg *m)
{
	if (m->offset == 0) {
		close_fd(&sh->result_fd);
		free(sh->result_path);
		sh->result_path = NULL;
		sh->got_result = false;
		if (!m->total)
			return; /* no results directory */
		sh->result_path =
			xasprintf("%s/results-%s-%u.tar.gz", sh->e->dir, sh->w->slug, sh->no);
		sh->result_fd = open(sh->result_path,
				     O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (sh->result_fd < 0) {
			char *why = xasprintf("cannot create '%s': %s", sh->result_path,
					      strerror(errno));

			free(sh->result_path);
			sh->result_path = NULL; /* not ours: never removed */
			results_lost(sh, why, ERR_IO);
			free(why);
			return;
		}
	}
	if (sh->result_fd < 0)
		return;
	if (!write_fd_all(sh->result_fd, m->data, m->len)) {
		char *why = xasprintf("cannot write '%s': %s", sh->result_path, strerror(errno));

		results_lost(sh, why, ERR_IO);
		free(why);
		return;
	}
	if (m->last) {
		close_fd(&sh->result_fd);
		sh->got_result = true;
	}
}

static void
poweroff(struct shard *sh)
{
	struct strbuf frame = STRBUF_INIT;

	sh->phase = PH_DONE;
	agent_frame_poweroff(&frame);
	send_frame(sh, &frame);
	agent_order_sent(&sh->order, AGENT_POWEROFF);
	strbuf_release(&frame);
}

/*
 * plan.detach: the guest has its job; POWEROFF follows it, and the guest is
 * left to run alone (its machine keeps its output and ends itself).
 */
static void
detach_guest(struct shard *sh)
{
	struct engine *e = sh->e;
	struct strbuf frame = STRBUF_INIT, msg = STRBUF_INIT;
	char *token;

	agent_frame_poweroff(&frame);
	send_frame(sh, &frame);
	strbuf_release(&frame);
	sh->phase = PH_DONE;
	sh->got_exit = true; /* nothing more is read from it here */
	token = session_detach(sh->session);
	if (!token) {
		strbuf_addf(&msg, "the guest for '%s' cannot run on alone: %s", sh->w->cfg->name,
			    error_msg());
		error_clear();
		fail_event(e, sh, ERR_CHILD, msg.buf);
		stage_end(e, sh, "tests", ERR_CHILD, msg.buf);
		sh->tests_open = false;
		sh->failed = true;
		session_cancel(sh->session);
		strbuf_release(&msg);
		return;
	}
	sh->follow = token;
	sh->detached = true;
	if (sh->listed_share)
		strbuf_addf(&msg, "%zu test%s of '%s'", sh->batch.n, sh->batch.n == 1 ? "" : "s",
			    sh->w->cfg->name);
	else
		strbuf_addf(&msg, "the tests of '%s'", sh->w->cfg->name);
	strbuf_addf(&msg, " run on %s without fswb", token);
	stage_end(e, sh, "tests", OK, msg.buf);
	sh->tests_open = false;
	strbuf_release(&msg);
}

/* A shell after the tests: asked for, nothing is left to run, and this is the last guest. */
static bool
want_shell(const struct shard *sh)
{
	const struct engine *e = sh->e;

	if (!e->plan.shell || e->interrupted || any_work_open(e))
		return false;
	for (unsigned i = 0; i < e->nshards; i++)
		if (&e->shards[i] != sh && e->shards[i].session)
			return false;
	return true;
}

static void
console_line(void *data, char *line, size_t len, bool cut)
{
	struct shard *sh = data;
	struct event ev = { .type = EV_CONSOLE };

	ev.u.line.text = str_trim(line);
	ev.u.line.flags = CONSOLE_CHECK;
	if (*ev.u.line.text)
		emit(sh->e, sh, &ev);
}

/* check -n's output: each whole line a CONSOLE event. */
static void
console_lines(struct shard *sh, const char *buf, size_t len)
{
	line_asm_feed(&sh->out_line, buf, len, console_line, sh);
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

/* The look ends: its guest goes on with its tests. */
static void
look_end(struct engine *e)
{
	shell_close(e);
	e->looking = false;
	e->shell_shard = NULL;
}

/* The front end's keys to the session; the session's output to the front end. */
static void
on_shell_fd(struct loop *loop, int fd, short revents, void *data)
{
	struct engine *e = data;
	struct session *s = e->shell_shard ? e->shell_shard->session : NULL;
	char buf[4096];
	ssize_t n;

	while (e->shell_out.len && (n = write(fd, e->shell_out.buf, e->shell_out.len)) > 0) {
		strbuf_drop_front(&e->shell_out, (size_t)n);
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		if (s && session_shell_send(s, buf, (size_t)n) != OK)
			warn(e, e->shell_shard, error_msg());
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
	struct shard *sh = data;
	struct engine *e = sh->e;

	if (e->shell_shard != sh || e->shell_mine < 0)
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
shell_open(struct shard *sh)
{
	struct engine *e = sh->e;
	int sv[2];
	enum status rc;

	if (e->shell_fd >= 0)
		return OK;
	rc = session_shell_open(sh->session);
	if (rc != OK)
		return rc;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return error(ERR_IO, "cannot make a socket pair for the shell: %s",
			     strerror(errno));
	fcntl(sv[1], F_SETFL, fcntl(sv[1], F_GETFL) | O_NONBLOCK);
	e->shell_shard = sh;
	e->shell_fd = sv[0];
	e->shell_mine = sv[1];
	loop_add_fd(e->loop, sv[1], POLLIN, on_shell_fd, e);
	return OK;
}
/* The shard's guest is done with its work, or there is none left: shell or power-off. */
static void
guest_finish(struct shard *sh)
{
	struct engine *e = sh->e;

	if (sh->tests_open)
		stage_end(e, sh, "tests", OK, NULL);
	sh->tests_open = false;
	sh->got_exit = true; /* nothing more is expected of it */
	if (want_shell(sh)) {
		struct strbuf frame = STRBUF_INIT;

		sh->phase = PH_SHELL;
		/* what the user runs in the shell is no test of the run */
		kmsg_stop_slices(sh->kmsg);
		agent_frame_shell(&frame);
		send_frame(sh, &frame);
		agent_order_sent(&sh->order, AGENT_SHELL);
		strbuf_release(&frame);
	} else {
		poweroff(sh);
	}
}

/* More batches for the shard's guest after the one that ends now. */
static bool
more_batches(const struct shard *sh)
{
	return sh->w->listed && work_open(sh->w) && !sh->e->interrupted && !sh->job_failed;
}

/* The agent is READY: the first job, the next batch, or the end. */
static void
next_step(struct shard *sh)
{
	if (sh->phase == PH_SHELL || sh->phase == PH_DONE)
		return;
	if (!sh->job_sent ? !sh->e->interrupted && (!sh->w->listed || work_open(sh->w))
			  : more_batches(sh))
		send_job(sh);
	else
		guest_finish(sh);
}

/* check ended in the guest: its batch's end. */
static void
check_exited(struct shard *sh, int status)
{
	struct engine *e = sh->e;

	sh->got_exit = true;
	if (e->plan.dry_run) {
		console_lines(sh, "\n", 1);
		e->dry_run_any = true;
		e->dry_run_failed |= status != 0;
	}
	check_parser_finish(sh->parser);
	kmsg_end_slice(sh->kmsg);
	if (sh->current_test)
		end_current_test(sh, TS_CRASHED, "check stopped during the test");
	if (sh->batch.n) {
		char *list = strvec_join(&sh->batch, " ");
		char *msg = xasprintf("check did not report %s of '%s' (not tests of its tree?)",
				      list, sh->w->cfg->name);

		warn(e, sh, msg);
		free(msg);
		free(list);
		strvec_clear(&sh->batch);
	}
	if (!sh->w->listed)
		sh->w->done = true;
	if (!more_batches(sh)) {
		stage_end(e, sh, "tests", OK, NULL);
		sh->tests_open = false;
	}
	if (sh->got_result)
		unpack_results(sh);
}

static enum status
on_agent_msg(const struct agent_msg *m, void *data)
{
	struct shard *sh = data;
	struct engine *e = sh->e;
	struct agent_hello hello;
	struct event ev = { 0 };
	char *text;

	sh->last_heard_ms = loop_now_ms();
	if (agent_order_check(&sh->order, m) != OK)
		return ERR_PROTOCOL;
	switch (m->type) {
	case AGENT_HELLO:
		if (agent_hello_parse(m, &hello) != OK)
			return ERR_PROTOCOL;
		text = xasprintf("agent %s on kernel %s (%s)", hello.agent_version,
				 hello.kernel_release, hello.arch);
		stage_end(e, sh, "boot", OK, text);
		free(text);
		sh->boot_end_sent = true;
		break;
	case AGENT_READY:
		if (!sh->boot_end_sent)
			return error(ERR_PROTOCOL, "READY before HELLO");
		if (sh->phase == PH_SHELL && e->shell_fd < 0 && e->shell_shard != sh)
			poweroff(sh); /* no shell came of it */
		else
			next_step(sh);
		break;
	case AGENT_HB:
		/* "HB UPTIME BUSY": how busy the guest's CPUs were since the last one */
		if (m->argc > 1 && strlen(m->argv[1]) <= 3 && strspn(m->argv[1], "0123456789") &&
		    !m->argv[1][strspn(m->argv[1], "0123456789")] && atoi(m->argv[1]) <= 100)
			sh->guest_busy = atoi(m->argv[1]);
		break;
	case AGENT_OUT:
		if (sh->phase != PH_TESTS || sh->got_exit)
			break; /* after a hang was declared: the guest is being stopped */
		sh->last_output_ms = sh->last_heard_ms;
		if (e->plan.dry_run)
			console_lines(sh, m->data, m->len);
		else
			check_parser_feed(sh->parser, m->data, m->len);
		break;
	case AGENT_LOG:
		ev.type = EV_CONSOLE;
		text = xstrndup(m->data, m->len);
		ev.u.line.text = str_trim(text);
		ev.u.line.test = sh->current_test;
		emit(e, sh, &ev);
		free(text);
		break;
	case AGENT_ERR:
		if (sh->phase == PH_SHELL) {
			text = xasprintf("no shell in the guest: %.*s", (int)m->len, m->data);
			warn(e, sh, str_trim(text));
			free(text);
			break;
		}
		text = xasprintf("the guest cannot run the tests of '%s': %.*s", sh->w->cfg->name,
				 (int)m->len, m->data);
		str_trim(text);
		fail_event(e, sh, ERR_CHILD, text);
		if (sh->phase == PH_TESTS && sh->tests_open)
			stage_end(e, sh, "tests", ERR_CHILD, text);
		sh->tests_open = false;
		sh->got_exit = true; /* nothing will run: said above */
		sh->job_failed = true;
		free(text);
		break;
	case AGENT_RESULT:
		save_result(sh, m);
		break;
	case AGENT_SHELLREADY:
		if (shell_open(sh) != OK) {
			warn(e, sh, error_msg());
			break;
		}
		stage(e, sh, EV_STAGE_BEGIN, "shell",
		      "a shell in the guest (the test filesystem is made, local.config is in "
		      "place); 'exit' or Ctrl-] ends it and powers the guest off",
		      -1);
		break;
	case AGENT_EXIT:
		if (sh->phase != PH_TESTS || sh->got_exit)
			break;
		if (e->looking && e->shell_shard == sh)
			look_end(e); /* the agent stopped the look with check */
		check_exited(sh, (int)m->value);
		break;
	default:
		break;
	}
	return OK;
}

static void
on_control(void *data, const char *buf, size_t len)
{
	struct shard *sh = data;
	struct engine *e = sh->e;
	struct strbuf msg = STRBUF_INIT;

	if (sh->broke_protocol || sh->detached)
		return;
	if (agent_reader_feed(&sh->reader, buf, len, on_agent_msg, sh) == OK)
		return;
	/* A protocol error of this guest: its session ends, the run goes on. */
	sh->broke_protocol = true;
	strbuf_addf(&msg, "the guest agent of '%s' broke the protocol: %s; its guest is stopped",
		    sh->w->cfg->name, error_msg());
	add_console_tail(sh, &msg);
	if (sh->parser)
		check_parser_finish(sh->parser);
	end_current_test(sh, TS_CRASHED, "the guest agent broke the protocol");
	fail_event(e, sh, ERR_PROTOCOL, msg.buf);
	if (!sh->boot_end_sent)
		stage_end(e, sh, "boot", ERR_PROTOCOL, msg.buf);
	else if (sh->tests_open)
		stage_end(e, sh, "tests", ERR_PROTOCOL, msg.buf);
	sh->tests_open = false;
	sh->boot_end_sent = true;
	strbuf_release(&msg);
	sh->got_exit = true; /* said above */
	sh->job_failed = true;
	sh->phase = PH_DONE;
	session_cancel(sh->session);
}

static bool
all_idle(const struct engine *e)
{
	for (unsigned i = 0; i < e->nshards; i++)
		if (!e->shards[i].idle)
			return false;
	return true;
}

static void start_guest(struct shard *sh, struct work *w);

/* Shards that found nothing to do take what came back to the queue. */
static void
wake_idle(struct engine *e)
{
	if (e->plan.detach)
		return; /* each machine has its share, no more */
	for (unsigned i = 0; i < e->nshards && !e->interrupted; i++) {
		struct shard *sh = &e->shards[i];
		struct work *w;

		if (!sh->idle || sh->retired || !(w = pick_work(e, NULL)))
			continue;
		sh->idle = false;
		start_guest(sh, w);
	}
}

/*
 * The shard's guest is gone: what it had not run goes back to the queue
 * (after a crash or a hang), then the shard goes on with the queue.
 */
static void
shard_done(struct shard *sh)
{
	struct engine *e = sh->e;
	struct work *w = sh->w;
	bool failed = sh->failed;

	if (sh->watch_timer)
		loop_del_timer(e->loop, sh->watch_timer);
	sh->watch_timer = 0;
	session_release(sh->session);
	sh->session = NULL;
	check_parser_free(sh->parser);
	sh->parser = NULL;
	kmsg_finish(sh->kmsg);
	kmsg_free(sh->kmsg);
	sh->kmsg = NULL;
	agent_reader_release(&sh->reader);
	close_fd(&sh->result_fd);
	if (e->shell_shard == sh) {
		shell_close(e);
		e->looking = false;
		e->shell_shard = NULL;
	}
	line_asm_reset(&sh->out_line);
	sh->failed = false;
	if (sh->detached) /* its machine runs them */
		strvec_clear(&sh->batch);
	else if (e->plan.detach && !e->following) {
		char *msg = xasprintf("the tests of '%s' this guest was to run will not run: it "
				      "stopped before it was left to run them",
				      w->cfg->name);

		warn(e, sh, msg);
		free(msg);
	}
	/* the batch's tests that did not end wait for another guest (or are never reached) */
	for (size_t i = sh->batch.n; i-- > 0;)
		if (!sh->current_test || strcmp(sh->batch.v[i], sh->current_test))
			work_push(w, sh->batch.v[i], expect_test(e, w->cfg, sh->batch.v[i], NULL),
				  true);
	strvec_clear(&sh->batch);
	if (sh->current_test) /* cut off by a stop: no TEST_END */
		strvec_pushf(&e->stopped, "%s\t%s", w->cfg->name, sh->current_test);
	free(sh->current_test);
	sh->current_test = NULL;
	if (sh->retired) {
		if (!w->listed && !w->abandoned)
			w->taken = false; /* another machine runs the unit */
		sh->idle = true;
		if (all_idle(e))
			finish_run(e);
		else
			wake_idle(e);
		return;
	}
	if (sh->job_failed)
		work_abandon(e, w, "its guest cannot run them (see the error above)");
	else if (failed && !sh->restart && sh->ended_here == 0 && ++w->failures >= e->nshards)
		work_abandon(e, w, "its guests stopped before they ran a test");
	else if (failed && e->plan.stop_on_crash && !sh->taken)
		work_abandon(e, w, "the run stops a configuration at a crash (--stop-on-crash)");
	if (failed && !w->listed && !w->abandoned)
		w->taken = false; /* the unit is run again without the tests that ended */
	if (failed && !w->abandoned && !e->interrupted && sh->restart) {
		char *msg = xasprintf("starting a new guest for the remaining tests of '%s'",
				      w->cfg->name);

		warn(e, sh, msg);
		free(msg);
	}
	sh->restart = sh->taken = false;
	shard_go(sh);
	if (failed)
		wake_idle(e);
}

static void
deferred_shard_done(struct loop *loop, void *data)
{
	struct shard *sh = data;

	if (sh->unpacking) {
		sh->done_pending = true; /* unpack_results ends the guest */
		return;
	}
	shard_done(sh);
}

/*
 * After a crash or a hang: a new guest for the remaining tests, unless the
 * plan says to stop, or this guest ended no test (it would go on forever).
 */
static bool
can_restart(const struct shard *sh)
{
	return !sh->e->plan.stop_on_crash && !sh->e->interrupted && sh->ended_here > 0 &&
	       !sh->e->plan.detach;
}

/*
 * The guest's provider took it away (a spot instance preempted): nothing is
 * wrong with the test it ran, which goes back to the queue with the rest of
 * its batch, and a new guest takes them.
 */
static void
preempted(struct shard *sh, const char *why)
{
	struct strbuf msg = STRBUF_INIT;

	strbuf_addf(&msg, "%s", why ? why : "the guest was taken away by its provider");
	if (sh->current_test && sh->e->plan.detach)
		strbuf_addf(&msg, "; %s and what was left of its share did not run",
			    sh->current_test);
	else if (sh->current_test)
		strbuf_addf(&msg, "; %s goes back to the queue", sh->current_test);
	else
		strbuf_addf(&msg, " (the guest for '%s')", sh->w->cfg->name);
	/* not cut off by a stop (shard_done): it is run again */
	free(sh->current_test);
	sh->current_test = NULL;
	warn(sh->e, sh, msg.buf);
	if (!sh->boot_end_sent)
		stage_end(sh->e, sh, "boot", ERR_PREEMPTED, msg.buf);
	else if (sh->tests_open)
		stage_end(sh->e, sh, "tests", ERR_PREEMPTED, msg.buf);
	sh->boot_end_sent = true;
	sh->tests_open = false;
	sh->restart = !sh->e->plan.detach; /* a detached one's share is not handed out again */
	sh->taken = true;
	strbuf_release(&msg);
}

/* Another shard's machine is there or on its way (not idle, not retired). */
static bool
others_going(const struct shard *sh)
{
	for (unsigned i = 0; i < sh->e->nshards; i++) {
		const struct shard *o = &sh->e->shards[i];

		if (o != sh && !o->idle && !o->retired)
			return true;
	}
	return false;
}

/*
 * The provider had no room for the shard's machine (a quota), after trying
 * for a while, and other machines run: the run goes on with them, said.
 */
static void
no_room(struct shard *sh, const char *why)
{
	struct engine *e = sh->e;
	unsigned left = 0;
	char *msg;

	for (unsigned i = 0; i < e->nshards; i++)
		left += &e->shards[i] != sh && !e->shards[i].idle && !e->shards[i].retired;
	msg = xasprintf("%s: the run goes on with %u machine%s instead of %u",
			why ? why : "no room for another machine", left, left == 1 ? "" : "s",
			left + 1);
	warn(e, sh, msg);
	stage_end(e, sh, "boot", ERR_NOROOM, msg);
	sh->boot_end_sent = true;
	sh->retired = true;
	free(msg);
}

static void
on_guest_exit(void *data, enum status code, const char *why)
{
	struct shard *sh = data;
	struct engine *e = sh->e;
	struct strbuf msg = STRBUF_INIT;

	if (sh->parser)
		check_parser_finish(sh->parser);
	if (!sh->got_exit && !e->interrupted) {
		sh->failed = true;
		if (code == ERR_PREEMPTED && ++sh->preempted <= PREEMPTED_MAX) {
			preempted(sh, why);
		} else if (code == ERR_NOROOM && !sh->boot_end_sent && others_going(sh)) {
			no_room(sh, why);
		} else if (!sh->boot_end_sent) {
			strbuf_addf(&msg, "the guest for '%s' stopped before its agent started%s%s",
				    sh->w->cfg->name, why ? ": " : "", why ? why : "");
			add_console_tail(sh, &msg);
			stage_end(e, sh, "boot", code == OK ? ERR_CHILD : code, msg.buf);
			sh->boot_end_sent = true;
		} else {
			const char *cause = death_cause(sh);

			strbuf_addf(&msg, "%s during the tests of '%s'%s%s", cause,
				    sh->w->cfg->name, why ? ": " : "", why ? why : "");
			end_current_test(sh, TS_CRASHED, cause);
			fail_event(e, sh, ERR_CHILD, msg.buf);
			if (sh->tests_open)
				stage_end(e, sh, "tests", ERR_CHILD, msg.buf);
			sh->tests_open = false;
			sh->restart = can_restart(sh);
		}
	}
	strbuf_release(&msg);
	/* Leave the backend's callback before releasing the session. */
	loop_add_timer(e->loop, 0, false, deferred_shard_done, sh);
}

/* Seconds the test in progress may run (see TEST_LIMIT_*). */
static unsigned
test_limit(const struct shard *sh)
{
	double limit = sh->current_expected * TEST_LIMIT_FACTOR;

	if (sh->e->plan.test_timeout)
		return sh->e->plan.test_timeout;
	return limit < TEST_LIMIT_MIN ? TEST_LIMIT_MIN : (unsigned)limit;
}

/*
 * The test runs past twice its expected time: say so at once, with what the
 * guest is doing and when it will count as hung.
 */
static void
flag_long_test(struct shard *sh, uint64_t now)
{
	char ran[16], expected[16], quiet[16], limit[16];
	struct strbuf sb = STRBUF_INIT;

	sh->current_flagged = true;
	strbuf_addf(&sb, "%s has run %s, over twice the %s expected (from %s)", sh->current_test,
		    format_duration((double)(now - sh->test_started_ms) / 1000, ran, sizeof(ran)),
		    format_duration(sh->current_expected, expected, sizeof(expected)),
		    est_basis_str(sh->current_basis));
	if (sh->guest_busy >= 0)
		strbuf_addf(&sb, "; the guest's CPUs are %d%% busy", sh->guest_busy);
	strbuf_addf(
		&sb, "; %s from the guest for %s",
		sh->guest_busy >= 0 && sh->guest_busy < 5 ? "nothing" : "no output",
		format_duration((double)(now - sh->last_output_ms) / 1000, quiet, sizeof(quiet)));
	strbuf_addf(&sb, ". It counts as hung at %s (%s)",
		    format_duration(test_limit(sh), limit, sizeof(limit)),
		    sh->e->plan.test_timeout ? "--test-timeout"
					     : "--test-timeout SECONDS changes it");
	warn(sh->e, sh, sb.buf);
	strbuf_release(&sb);
}

/* Once a second: is the guest still talking? */
static void
watch(struct loop *loop, void *data)
{
	struct shard *sh = data;
	struct engine *e = sh->e;
	uint64_t now = loop_now_ms();
	unsigned silence = session_silence_limit(sh->session), limit;
	char *msg;

	/* a detached machine's output comes when it comes: it keeps its own time limit */
	if (e->following)
		return;
	if (sh->phase == PH_BOOT) {
		limit = session_boot_limit(sh->session);
		if (now - sh->phase_ms > limit * 1000ull) {
			struct strbuf sb = STRBUF_INIT;

			strbuf_addf(&sb,
				    "the guest for '%s' did not start its agent within %u seconds",
				    sh->w->cfg->name, limit);
			add_console_tail(sh, &sb);
			stage_end(e, sh, "boot", ERR_TIMEOUT, sb.buf);
			strbuf_release(&sb);
			sh->boot_end_sent = true;
			sh->failed = true;
			sh->got_exit = true; /* said above */
			sh->phase = PH_DONE;
			session_cancel(sh->session);
		}
		return;
	}
	if (sh->phase != PH_TESTS || sh->got_exit)
		return;
	limit = test_limit(sh);
	if (now - sh->last_heard_ms > silence * 1000ull)
		msg = xasprintf("the guest for '%s' was silent for %u seconds: it hung",
				sh->w->cfg->name, silence);
	else if (sh->current_test && now - sh->test_started_ms > limit * 1000ull)
		msg = xasprintf(
			"%s ran longer than %u seconds (%s): it hung", sh->current_test, limit,
			e->plan.test_timeout ? "--test-timeout"
					     : "five times its expected time, at least 10 minutes");
	else if (sh->current_test && !sh->current_flagged &&
		 now - sh->test_started_ms > sh->current_expected * TEST_LONG_FACTOR * 1000)
		return flag_long_test(sh, now);
	else
		return;
	check_parser_finish(sh->parser);
	end_current_test(sh, TS_HUNG, msg);
	fail_event(e, sh, ERR_TIMEOUT, msg);
	if (sh->tests_open)
		stage_end(e, sh, "tests", ERR_TIMEOUT, msg);
	sh->tests_open = false;
	free(msg);
	sh->phase = PH_DONE;
	sh->got_exit = true; /* nothing more to report for it */
	sh->failed = true;
	sh->restart = can_restart(sh);
	session_cancel(sh->session);
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

/* A guest for w in the shard. */
static void
start_guest(struct shard *sh, struct work *w)
{
	struct engine *e = sh->e;
	struct session_disk disks[24];
	char names[16][16];
	struct session_spec spec = { 0 };
	struct session_callbacks cb = { on_control, on_console, on_shell, on_guest_exit };
	char *workdir, *slices, *agent, *name;
	enum status rc;
	const char *notice;

	sh->w = w;
	if (!w->listed)
		w->taken = true;
	sh->got_exit = sh->got_result = sh->boot_end_sent = sh->job_sent = false;
	sh->broke_protocol = sh->tests_open = sh->job_failed = sh->failed = false;
	sh->ended_here = 0;
	sh->kmsg_bad = 0;
	sh->guest_busy = -1;
	sh->phase = PH_IDLE;
	if (sh->console.fd < 0) {
		name = e->sharded ? xasprintf("console-%u.log", sh->no) : xstrdup("console.log");
		if ((e->following ? logfile_append : logfile_open)(&sh->console, e->dir, name,
								   LOG_CAP_CONSOLE, NULL) != OK)
			warn(e, sh, error_msg());
		error_clear();
		free(name);
	}
	sh->kmsg = kmsg_new(&sh->bus, w->cfg->name);
	kmsg_set_tail(sh->kmsg, CONSOLE_TAIL);
	slices = results_dir(e, w);
	if (kmsg_set_slice_dir(sh->kmsg, slices) != OK)
		warn(e, sh, error_msg());
	free(slices);
	agent_reader_init(&sh->reader, 0);
	agent_order_init(&sh->order, max_results(e));
	workdir = e->sharded ? xasprintf("%s/guest-%s-%u", e->dir, w->slug, sh->no)
			     : xasprintf("%s/guest-%s", e->dir, w->slug);
	spec.name = w->slug;
	spec.slot = sh->no ? sh->no - 1 : 0;
	spec.fstyp = w->cfg->devices ? NULL : w->cfg->base ? w->cfg->base : w->cfg->fstyp;
	spec.workdir = workdir;
	spec.arch = arch_find(e->plan.kernel.arch); /* plan_validate knows the names */
	if (!spec.arch)
		BUG("unknown arch '%s' in a validated plan", e->plan.kernel.arch);
	spec.kernel = e->have_kernel ? e->kernel.image : NULL;
	spec.initrd = e->initrd;
	spec.appliance = e->have_appliance ? e->appliance.image : NULL;
	spec.agent = agent = e->backend->caps & BACKEND_APPLIANCE ? NULL : agent_path();
	spec.disks = disks;
	spec.ndisks = config_disks(w->cfg, disks, names);
	spec.cpus = e->plan.cpus;
	spec.mem = e->plan.mem;
	spec.options = (const char *const *)e->plan.backend_opts.v;
	spec.detach = e->plan.detach && !e->following ? detach_limit(sh) : 0;
	spec.follow = e->following ? sh->follow : NULL;
	sh->guest_started = true;
	stage(e, sh, EV_STAGE_BEGIN, "boot", w->cfg->name, -1);
	if (!(e->backend->caps & BACKEND_APPLIANCE) && !agent)
		rc = error(ERR_NOTFOUND, "the guest agent (fswb-agent) is not installed with "
					 "fswb: reinstall it (make install)");
	else
		rc = session_start(e->backend, e->loop, e->run, &spec, &cb, sh, &sh->session);
	free(workdir);
	free(agent);
	if (rc != OK) {
		stage_end(e, sh, "boot", rc, error_msg());
		sh->failed = true;
		loop_add_timer(e->loop, 0, false, deferred_shard_done, sh);
		return;
	}
	notice = session_notice(sh->session);
	if (notice && !strvec_contains(&e->notices, notice)) {
		strvec_push(&e->notices, notice); /* once a run, not once a guest */
		warn(e, sh, notice);
	}
	e->est.slow = session_slow(sh->session);
	sh->phase = PH_BOOT;
	sh->phase_ms = sh->last_heard_ms = loop_now_ms();
	sh->watch_timer = loop_add_timer(e->loop, WATCH_MS, true, watch, sh);
}

/* The shard has no guest: one for the next work, or it is idle (the run ends with the last). */
static void
shard_go(struct shard *sh)
{
	struct engine *e = sh->e;
	struct work *w = e->interrupted ? NULL : pick_work(e, sh->w);

	if (e->plan.detach) /* one guest, for its share */
		w = !e->interrupted && sh->has_share && !sh->guest_started ? sh->w : NULL;
	if (w) {
		start_guest(sh, w);
		return;
	}
	sh->idle = true;
	if (all_idle(e))
		finish_run(e);
}
/*
 * The tests the run would have run and never started: what waits in the
 * queues, and for a configuration run as one check that did not end, its
 * selection (when the catalogue gives it) less what ended or was cut off.
 */
static void
collect_unreached(struct engine *e, struct strvec *tests, struct strvec *configs)
{
	for (size_t i = 0; i < e->nworks; i++) {
		struct work *w = &e->works[i];
		struct catalogue_selection sel;
		char *key;

		for (size_t j = 0; j < w->ntodo; j++) {
			strvec_push(tests, w->todo[j].test);
			strvec_push(configs, w->cfg->name);
		}
		if (w->listed || w->done || !e->have_cat)
			continue;
		if (inventory_selection(&e->plan, e->profiles, &e->cat, NULL, w->cfg, &sel) != OK) {
			error_clear();
			continue;
		}
		for (size_t j = 0; j < sel.tests.n; j++) {
			const char *t = sel.tests.v[j];

			key = xasprintf("%s\t%s", w->cfg->name, t);
			if (!strvec_contains(&sel.expunged, t) && !done_already(w, t) &&
			    !strvec_contains(&e->stopped, key)) {
				strvec_push(tests, t);
				strvec_push(configs, w->cfg->name);
			}
			free(key);
		}
		catalogue_selection_release(&sel);
	}
}

/*
 * plan.detach, every guest detached or gone: DIR/detached.json names each
 * detached machine and its share, for engine_follow; the run has no
 * RUN_END until then.
 */
static void
finish_detached(struct engine *e)
{
	json_t *root = json_pack("{s:i, s:s, s:b, s:[]}", "version", 1, "backend", e->plan.backend,
				 "sharded", e->sharded, "shards");
	char *path = path_join(e->dir, DETACHED_JSON), *text, *msg;
	unsigned n = 0;

	for (unsigned i = 0; i < e->nshards; i++) {
		struct shard *sh = &e->shards[i];

		if (!sh->detached)
			continue;
		json_array_append_new(
			json_object_get(root, "shards"),
			json_pack("{s:i, s:s, s:s, s:o}", "shard", sh->no, "config",
				  sh->w->cfg->name, "follow", sh->follow, "tests",
				  sh->listed_share ? json_strvec(&sh->share) : json_null()));
		n++;
	}
	text = json_dumps(root, JSON_INDENT(2));
	json_decref(root);
	backend_discard(e->run);
	e->run = NULL;
	e->done = true;
	e->exit_code = 0;
	if (write_file_atomic(path, text, strlen(text), 0644) != OK) {
		msg = xasprintf("the detached machines run on, but %s", error_msg());
		error_clear();
		e->exit_code = 2;
		fail_event(e, NULL, ERR_IO, msg);
	} else {
		msg = xasprintf(
			"the run goes on without fswb on %u machine%s, which end themselves "
			"when they are done: `fswb results fetch %s` follows it and collects "
			"its results",
			n, n == 1 ? "" : "s", e->id);
		warn(e, NULL, msg);
	}
	free(msg);
	free(text);
	free(path);
}

/*
 * Following stopped (Ctrl-C): the machines run on. The logs go back to what
 * they were, as the next fetch reads their output from the start again.
 */
static void
follow_stopped(struct engine *e)
{
	char *msg = xasprintf("stopped following the run: its machines run on; `fswb results "
			      "fetch %s` follows it again",
			      e->id);

	backend_discard(e->run);
	e->run = NULL;
	e->done = true; /* before the last event: front ends end with it */
	e->exit_code = EXIT_STOPPED;
	warn(e, NULL, msg);
	free(msg);
	if (e->events.fd >= 0 && !ftruncate(e->events.fd, (off_t)e->follow_events_at))
		e->events.size = e->follow_events_at;
	if (e->kernel_log.fd >= 0 && !ftruncate(e->kernel_log.fd, (off_t)e->follow_kernel_at))
		e->kernel_log.size = e->follow_kernel_at;
}

static void
finish_run(struct engine *e)
{
	struct event ev = { .type = EV_RUN_END };
	struct strvec unreached = STRVEC_INIT, unreached_cfg = STRVEC_INIT;
	char *junit;

	if (e->done)
		return;
	if (e->following && e->interrupted) {
		follow_stopped(e);
		return;
	}
	if (e->plan.detach && !e->following) {
		bool any = false;

		for (unsigned i = 0; i < e->nshards; i++)
			any |= e->shards[i].detached;
		if (any) {
			finish_detached(e);
			return;
		}
	}
	if (e->any_test) {
		junit = path_join(e->dir, "junit.xml");
		run_record_recount(&e->results.rec);
		if (results_write_junit(junit, &e->results.rec) != OK) {
			e->lost_exit = 2;
			fail_event(e, NULL, ERR_IO, error_msg());
		}
		free(junit);
	}
	if (e->files_failed) {
		char *msg = xasprintf("the run's logs in '%s' are incomplete: a write failed (see "
				      "the warning above)",
				      e->dir);

		e->lost_exit = 2;
		fail_event(e, NULL, ERR_IO, msg);
		free(msg);
	}
	if (e->interrupted)
		e->exit_code = EXIT_STOPPED;
	else if (e->plan.dry_run)
		e->exit_code = e->dry_run_any && !e->dry_run_failed ? 0 : 2;
	else if (!e->counts.ran && !e->counts.crashed && !e->counts.hung)
		e->exit_code = 2;
	else if (e->counts.failed || e->counts.crashed || e->counts.hung)
		e->exit_code = 1;
	else
		e->exit_code = 0;
	if (e->exit_code < e->lost_exit)
		e->exit_code = e->lost_exit;
	ev.u.end.exit_code = e->exit_code;
	ev.u.end.interrupted = e->interrupted;
	ev.u.end.counts = e->counts;
	if (!e->plan.dry_run)
		collect_unreached(e, &unreached, &unreached_cfg);
	if (unreached.n) {
		ev.u.end.unreached = (const char *const *)unreached.v;
		ev.u.end.unreached_config = (const char *const *)unreached_cfg.v;
	}
	backend_discard(e->run);
	e->run = NULL;
	e->done = true;
	emit(e, NULL, &ev);
	strvec_clear(&unreached);
	strvec_clear(&unreached_cfg);
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
		fail_event(e, NULL, rc, error_msg());
		return rc;
	}
	e->backend = backend_find(e->plan.backend);
	backend_leases_reap(&reaped);
	for (size_t i = 0; i < reaped.n; i++) {
		char *msg = xasprintf("removed what an earlier fswb left behind: %s", reaped.v[i]);

		warn(e, NULL, msg);
		free(msg);
	}
	strvec_clear(&reaped);
	if ((e->backend->caps & BACKEND_COSTS) && !e->expected_wall) {
		struct est_total t; /* the fstests tree is not here: earlier runs may know */

		inventory_expect(&e->plan, e->profiles, &t, NULL);
		e->expected_machines = t.shards;
		e->expected_wall = t.wall;
	}
	cost = backend_cost(e->backend, &e->plan, e->expected_machines, e->expected_wall);
	if (cost) {
		warn(e, NULL, cost);
		free(cost);
	}
	rc = backend_prepare(e->backend, e->loop, &e->plan, &e->run);
	if (rc != OK) {
		char *msg = xasprintf("the '%s' backend cannot prepare the run: %s",
				      e->backend->name, error_msg());

		fail_event(e, NULL, rc, msg);
		free(msg);
	}
	return rc;
}

static void
begin(struct loop *loop, void *data)
{
	struct engine *e = data;
	struct event ev = { .type = EV_RUN_BEGIN };
	struct strvec notes = STRVEC_INIT, errors = STRVEC_INIT;
	struct strbuf why = STRBUF_INIT;

	ev.u.run.id = e->id;
	ev.u.run.backend = e->plan.backend;
	load_expectations(e, &ev);
	plan_work(e, &notes, &errors, &why);
	if (e->sharded) {
		ev.u.run.shards = e->nshards;
		ev.u.run.shards_why = why.buf;
		if (!ev.u.run.total_tests)
			for (size_t i = 0; i < e->nworks; i++)
				ev.u.run.total_tests += (unsigned)e->works[i].ntodo;
	}
	emit(e, NULL, &ev);
	strbuf_release(&why);
	for (size_t i = 0; i < errors.n; i++)
		fail_event(e, NULL, ERR_NOTFOUND, errors.v[i]);
	for (size_t i = 0; i < notes.n; i++)
		warn(e, NULL, notes.v[i]);
	strvec_clear(&notes);
	strvec_clear(&errors);
	if (prepare_backend(e) != OK || e->interrupted) {
		finish_run(e);
		return;
	}
	if ((e->backend->caps & BACKEND_BOOTS_KERNEL) || uses_appliance(e))
		start_prepare(e);
	else
		go(e);
}

/* The stages before the guests are done: the guests take the work. */
static void
go(struct engine *e)
{
	work_reorder(e);
	if (e->plan.detach && !detach_shares(e)) {
		finish_run(e);
		return;
	}
	for (unsigned i = 0; i < e->nshards && !e->done; i++)
		shard_go(&e->shards[i]);
}

/* The run's logs (appended to when following a run) and run.json's writer. */
static enum status
open_run_files(struct engine *e, bool append)
{
	enum status (*open_log)(struct logfile *, const char *, const char *, uint64_t,
				const char *) = append ? logfile_append : logfile_open;
	char *note = events_cut_note(), *p;
	enum status rc = open_log(&e->events, e->dir, "events.jsonl", LOG_CAP_EVENTS, note);

	free(note);
	if (rc == OK)
		rc = open_log(&e->kernel_log, e->dir, "kernel.log", LOG_CAP_KERNEL, NULL);
	if (rc != OK)
		return rc;
	p = path_join(e->dir, "run.json");
	results_writer_init(&e->results, p);
	free(p);
	return OK;
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
	rc = open_run_files(e, false);
	if (rc != OK)
		return rc;
	event_bus_add(&e->own, results_writer_listener(&e->results));
	event_bus_add(&e->own, (struct listener){ on_own_event, e });
	loop_add_timer(e->loop, 0, false, begin, e);
	return OK;
}

/* ---- following a detached run (fswb results fetch) ---- */

/* A test name of a record: what check takes ("generic/001"), nothing a path could abuse. */
static bool
record_test_ok(const char *t)
{
	size_t n = strlen(t);

	return n && n < 128 && t[0] != '.' && t[0] != '/' && !strstr(t, "..") &&
	       strspn(t, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./") == n;
}

/* DIR/detached.json into the engine's works and shards; the message names the field. */
static enum status
read_record(struct engine *e, const char *path)
{
	static const char *const keys[] = { "version", "backend", "sharded", "shards" };
	static const char *const shard_keys[] = { "shard", "config", "follow", "tests" };
	struct jreader r = { .source = path };
	json_error_t jerr;
	json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr), *list, *it;
	unsigned version = 0;
	enum status rc;
	size_t i;

	strbuf_init(&r.path);
	if (!root) {
		rc = !path_exists(path)
			     ? error(ERR_NOTFOUND,
				     "%s: no such file: the run was not detached (fswb run "
				     "--detach), or it is still being started",
				     path)
			     : error(ERR_INVALID, "%s: line %d: %s", path, jerr.line, jerr.text);
		strbuf_release(&r.path);
		return rc;
	}
	rc = jread_keys(&r, root, keys, ARRAY_SIZE(keys));
	if (rc == OK)
		rc = jread_count(&r, root, "version", 1, &version);
	if (rc == OK)
		rc = jread_bool(&r, root, "sharded", &e->sharded);
	list = json_object_get(root, "shards");
	if (rc == OK && (!json_is_array(list) || !json_array_size(list) ||
			 json_array_size(list) > PLAN_SHARDS_MAX))
		rc = jread_bad_at(&r, "shards", "expected a list of 1 to %d machines",
				  PLAN_SHARDS_MAX);
	if (rc == OK) {
		e->nshards = (unsigned)json_array_size(list);
		alloc_shards(e);
		e->works = xcalloc(e->nshards, sizeof(*e->works));
	}
	json_array_foreach(list, i, it)
	{
		struct shard *sh = &e->shards[i];
		struct strvec tests = STRVEC_INIT;
		char *config = NULL, *idx = xasprintf("shards[%zu]", i);
		const struct fs_config *cfg = NULL;
		struct work *w = NULL;
		unsigned no = 0;
		size_t mark;

		if (rc != OK) {
			free(idx);
			break;
		}
		jread_push(&r, idx, &mark);
		free(idx);
		if (!json_is_object(it))
			rc = jread_bad(&r, "expected an object, got %s", jread_type(it));
		if (rc == OK)
			rc = jread_keys(&r, it, shard_keys, ARRAY_SIZE(shard_keys));
		if (rc == OK)
			rc = jread_count(&r, it, "shard", PLAN_SHARDS_MAX, &no);
		if (rc == OK)
			rc = jread_str(&r, it, "config", false, &config);
		if (rc == OK)
			rc = jread_str(&r, it, "follow", false, &sh->follow);
		if (rc == OK && json_is_array(json_object_get(it, "tests")))
			rc = jread_strvec(&r, it, "tests", &tests);
		else if (rc == OK && !json_is_null(json_object_get(it, "tests")))
			rc = jread_bad_at(&r, "tests", "expected a list of tests or null");
		if (rc == OK && (!config || !strvec_contains(&e->plan.configs, config)))
			rc = jread_bad_at(&r, "config", "'%s' is not a configuration of the run",
					  config ? config : "");
		if (rc == OK && (rc = profiles_resolve_config(e->profiles, config, &cfg)) != OK)
			rc = jread_bad_at(&r, "config", "%s", error_msg());
		for (size_t k = 0; rc == OK && k < i; k++)
			if (e->shards[k].no == no || !strcmp(e->shards[k].follow, sh->follow))
				rc = jread_bad(&r, "the machine or shard of shards[%zu] again", k);
		for (size_t t = 0; rc == OK && t < tests.n; t++)
			if (!record_test_ok(tests.v[t]))
				rc = jread_bad_at(&r, "tests", "'%.80s' is not a test name",
						  tests.v[t]);
		for (size_t k = 0; rc == OK && k < e->nworks && !w; k++)
			if (e->works[k].cfg == cfg)
				w = &e->works[k];
		if (rc == OK && !w) {
			w = &e->works[e->nworks++];
			work_init(w, cfg);
			w->listed = json_is_array(json_object_get(it, "tests"));
		}
		if (rc == OK && w->listed != json_is_array(json_object_get(it, "tests")))
			rc = jread_bad_at(&r, "tests",
					  "a list for some machines of '%s', not for "
					  "others",
					  config);
		if (rc == OK) {
			sh->no = no;
			sh->w = w;
			sh->has_share = true;
			sh->listed_share = w->listed;
			for (size_t t = 0; t < tests.n; t++) {
				work_push(w, tests.v[t], 0, false);
				strvec_push(&sh->share, tests.v[t]);
			}
		}
		strbuf_setlen(&r.path, mark);
		strvec_clear(&tests);
		free(config);
	}
	json_decref(root);
	strbuf_release(&r.path);
	return rc;
}

static void
follow_begin(struct loop *loop, void *data)
{
	struct engine *e = data;
	struct event ev = { .type = EV_RUN_BEGIN };
	enum status rc = backend_check_options(&e->plan);

	if (rc != OK) {
		fail_event(e, NULL, rc, error_msg());
		finish_run(e);
		return;
	}
	e->backend = backend_find(e->plan.backend);
	load_expectations(e, &ev); /* the tests' expected times; RUN_BEGIN was said before */
	work_reorder(e);
	rc = backend_prepare(e->backend, e->loop, &e->plan, &e->run);
	if (rc != OK) {
		char *msg = xasprintf("the '%s' backend cannot follow the run: %s",
				      e->backend->name, error_msg());

		fail_event(e, NULL, rc, msg);
		free(msg);
		finish_run(e);
		return;
	}
	for (unsigned i = 0; i < e->nshards && !e->done; i++)
		shard_go(&e->shards[i]);
}

enum status
engine_follow(struct engine *e, const char *dir)
{
	struct event_bus replay = EVENT_BUS_INIT;
	char *p;
	unsigned skipped = 0;
	enum status rc;
	const struct backend_ops *ops = backend_find(e->plan.backend);

	if (e->started)
		BUG("engine started twice");
	if (!e->plan.detach || !ops || !(ops->caps & BACKEND_DETACHES))
		return error(ERR_INVALID,
			     "the run in %s was not detached (fswb run --detach): its results are "
			     "there already",
			     dir);
	e->dir = xstrdup(dir);
	e->id = xstrdup(strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir);
	p = path_join(dir, ".fetch.lock");
	e->follow_lock = open(p, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (e->follow_lock < 0 || flock(e->follow_lock, LOCK_EX | LOCK_NB)) {
		rc = e->follow_lock < 0
			     ? error(ERR_IO, "cannot make the lock '%s': %s", p, strerror(errno))
			     : error(ERR_BUSY, "another fswb follows the run %s now", e->id);
		close_fd(&e->follow_lock); /* not ours: left where it is */
		free(p);
		return rc;
	}
	free(p);
	if (history_run_finished(dir))
		return error(ERR_INVALID,
			     "the run %s ended already: `fswb results show %s` shows it", e->id,
			     e->id);
	p = path_join(dir, DETACHED_JSON);
	rc = read_record(e, p);
	free(p);
	if (rc != OK)
		return rc;
	rc = open_run_files(e, true);
	if (rc != OK)
		return rc;
	e->follow_events_at = e->events.size;
	e->follow_kernel_at = e->kernel_log.size;
	e->started = e->following = true;
	/* what the run said before it was detached: for run.json and the front end */
	event_bus_add(&replay, results_writer_listener(&e->results));
	for (size_t i = 0; i < e->bus->n; i++)
		event_bus_add(&replay, e->bus->listeners[i]);
	p = path_join(e->dir, "events.jsonl");
	rc = event_replay_file(p, &replay, &skipped);
	free(p);
	event_bus_release(&replay);
	if (rc != OK)
		return rc;
	event_bus_add(&e->own, results_writer_listener(&e->results));
	event_bus_add(&e->own, (struct listener){ on_own_event, e });
	loop_add_timer(e->loop, 0, false, follow_begin, e);
	return OK;
}

void
engine_cancel(struct engine *e)
{
	if (e->done || e->interrupted)
		return;
	e->interrupted = true;
	job_cancel(e->prep);
	for (unsigned i = 0; i < e->nshards; i++)
		if (e->shards[i].session)
			session_cancel(e->shards[i].session);
}

int
engine_shell_fd(const struct engine *e)
{
	return e->shell_fd;
}

enum status
engine_look(struct engine *e)
{
	struct shard *sh = NULL;
	enum status rc;

	if (e->shell_fd >= 0)
		return error(ERR_BUSY, "a shell in a guest is open already");
	for (unsigned i = 0; i < e->nshards && !sh; i++)
		if (e->shards[i].session && e->shards[i].phase == PH_TESTS &&
		    e->shards[i].current_test)
			sh = &e->shards[i];
	if (!sh)
		return error(ERR_UNSUPPORTED, "no test is running in a guest now");
	if (!(e->backend->caps & BACKEND_SHELL))
		return error(ERR_UNSUPPORTED, "the '%s' backend gives no shell in its machines",
			     e->backend->name);
	rc = shell_open(sh);
	if (rc != OK)
		return rc;
	e->looking = true;
	return OK;
}

void
engine_shell_end(struct engine *e)
{
	struct shard *sh = e->shell_shard;

	if (e->shell_fd < 0)
		return;
	if (e->looking) {
		look_end(e);
		return;
	}
	shell_close(e);
	stage_end(e, sh, "shell", OK, NULL);
	if (sh && sh->session && sh->phase == PH_SHELL)
		poweroff(sh);
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
	for (unsigned i = 0; i < e->nshards; i++) {
		struct shard *sh = &e->shards[i];

		if (sh->watch_timer)
			loop_del_timer(e->loop, sh->watch_timer);
		session_release(sh->session);
		check_parser_free(sh->parser);
		kmsg_free(sh->kmsg);
		agent_reader_release(&sh->reader);
		event_bus_release(&sh->bus);
		logfile_close(&sh->console);
		close_fd(&sh->result_fd);
		line_asm_release(&sh->out_line);
		strvec_clear(&sh->batch);
		strvec_clear(&sh->share);
		free(sh->follow);
		free(sh->result_path);
		free(sh->current_test);
	}
	free(e->shards);
	job_free(e->prep);
	strbuf_release(&e->prep_tail);
	for (size_t i = 0; i < e->nworks; i++)
		work_release(&e->works[i]);
	free(e->works);
	strvec_clear(&e->notices);
	strvec_clear(&e->stopped);
	if (e->have_kernel)
		kernel_release(&e->kernel);
	if (e->have_appliance)
		appliance_release(&e->appliance);
	results_writer_release(&e->results);
	event_bus_release(&e->own);
	estimator_release(&e->est);
	if (e->have_cat)
		catalogue_release(&e->cat);
	logfile_close(&e->events);
	logfile_close(&e->kernel_log);
	shell_close(e);
	backend_discard(e->run);
	strbuf_release(&e->shell_out);
	if (e->follow_lock >= 0) {
		char *lock = path_join(e->dir, ".fetch.lock");

		unlink(lock);
		free(lock);
		close_fd(&e->follow_lock);
	}
	plan_release(&e->plan);
	free(e->initrd);
	free(e->id);
	free(e->dir);
	free(e);
}
