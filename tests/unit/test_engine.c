/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The run engine through the stdio backend: the real guest agent
 * (src/rootfs/agent/fswb-agent --stdio) on this host, with the fstests
 * tree of tests/fixtures/engine-fstests, whose tests say what happens
 * (pass, fail, not run, hang, crash, a frame the agent would not send).
 * Every case ends with a run.json that says what ran and nothing left:
 * no process, no lease, no guest directory.
 */
#include "testlib.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backends/backend.h"
#include "run/engine.h"
#include "core/paths.h"
#include "core/plan.h"
#include "core/profile.h"
#include "core/spawn.h"
#include "core/util.h"
#include "fstests/results.h"

#define RUN_LIMIT_MS 60000

static struct profiles profiles;

struct ctx {
	struct loop *loop;
	struct engine *e;
	struct strbuf log;     /* "start generic/001", "end generic/001 pass", "stage+ boot"... */
	const char *cancel_at; /* a stage name, or "test:NAME": engine_cancel there */
	const char *kill_at;   /* kill the agent (SIGKILL) when this test starts */
	bool timed_out;
	char *dir;		       /* the run directory */
	unsigned running, max_running; /* tests running at once */
	unsigned cancel_running;       /* engine_cancel once this many run at once */
	bool look;		       /* engine_look at the first test's start */
	enum status look_rc;
	char *look_msg;
};

/* A tree of the fixture's check and tests named "generic/001=pass". */
static char *
make_tree(const char *const *tests)
{
	static unsigned n;
	char *rel = xasprintf("fstests-%u", ++n), *dir = test_tmp(rel);
	char *src = test_path("tests/fixtures/engine-fstests/check");
	char *check = path_join(dir, "check"), *text = test_read(src);

	test_write(check, text);
	assert_int_equal(chmod(check, 0755), 0);
	for (size_t i = 0; tests[i]; i++) {
		const char *eq = strchr(tests[i], '=');
		char *name = xstrndup(tests[i], (size_t)(eq - tests[i]));
		char *p = xasprintf("%s/tests/%s", dir, name), *what = xasprintf("%s\n", eq + 1);

		test_write(p, what);
		free(name);
		free(p);
		free(what);
	}
	free(rel);
	free(src);
	free(check);
	free(text);
	return dir;
}

static void
plan_for(struct plan *plan, const char *const *tests)
{
	char *tree = make_tree(tests);

	plan_init(plan);
	free(plan->backend);
	plan->backend = xstrdup("stdio");
	plan_set_backend_opt(plan, "fstests", tree);
	for (size_t i = 0; tests[i]; i++)
		strvec_push(&plan->tests.tests, tests[i]);
	for (size_t i = 0; i < plan->tests.tests.n; i++)
		*strchr(plan->tests.tests.v[i], '=') = '\0';
	plan_defaults(plan);
	plan->shards = 1; /* one guest at a time, whatever this host could hold */
	free(tree);
}

/* The agent's pid, from the lease of the session whose text has needle (NULL: any). */
static pid_t
agent_pid(const char *needle)
{
	char *dir = test_tmp("home/data/leases");
	DIR *d = opendir(dir);
	struct dirent *de;
	long pid = 0;

	assert_non_null(d);
	while (!pid && (de = readdir(d))) {
		char *p, *text;
		const char *line;

		if (de->d_name[0] == '.')
			continue;
		p = path_join(dir, de->d_name);
		text = test_read(p);
		line = strstr(text, "\npid ");
		if (line && (!needle || strstr(text, needle)))
			pid = strtol(line + 5, NULL, 10);
		free(text);
		free(p);
	}
	closedir(d);
	free(dir);
	assert_true(pid > 1);
	return (pid_t)pid;
}

static void
cancel_now(struct loop *loop, void *data)
{
	struct ctx *c = data;

	engine_cancel(c->e);
}

static void
on_event(void *data, const struct event *ev)
{
	struct ctx *c = data;
	const char *at = NULL;

	switch (ev->type) {
	case EV_RUN_BEGIN:
		at = "run";
		break;
	case EV_STAGE_BEGIN:
		strbuf_addf(&c->log, "stage+ %s\n", ev->u.stage.stage);
		at = ev->u.stage.stage;
		break;
	case EV_STAGE_END:
		strbuf_addf(&c->log, "stage- %s %s%s\n", ev->u.stage.stage,
			    ev->u.stage.code == OK ? "ok" : "failed: ",
			    ev->u.stage.code == OK || !ev->u.stage.message ? ""
									   : ev->u.stage.message);
		break;
	case EV_TEST_START:
		strbuf_addf(&c->log, "start %s\n", ev->u.test_start.test);
		if (c->look && !c->look_msg) {
			c->look_rc = engine_look(c->e);
			c->look_msg = xstrdup(c->look_rc == OK ? "" : error_msg());
			error_clear();
		}
		if (++c->running > c->max_running)
			c->max_running = c->running;
		if (c->cancel_running && c->running == c->cancel_running)
			loop_add_timer(c->loop, 0, false, cancel_now, c);
		if (c->kill_at && !strcmp(c->kill_at, ev->u.test_start.test)) {
			char needle[64];

			/* the agent of the guest that runs it: its workdir names the shard */
			snprintf(needle, sizeof(needle), "guest-ext4-4k-%u\n", ev->shard);
			kill(agent_pid(ev->shard ? needle : NULL), SIGKILL);
			c->kill_at = NULL;
		}
		if (c->cancel_at && str_startswith(c->cancel_at, "test:") &&
		    !strcmp(c->cancel_at + 5, ev->u.test_start.test))
			loop_add_timer(c->loop, 0, false, cancel_now, c);
		break;
	case EV_TEST_END:
		strbuf_addf(&c->log, "end %s %s\n", ev->u.test_end.test,
			    test_status_str(ev->u.test_end.status));
		if (!ev->u.test_end.rerun && c->running)
			c->running--;
		break;
	case EV_ERROR:
		strbuf_addf(&c->log, "error %s\n", ev->u.error.message);
		break;
	case EV_WARNING:
		strbuf_addf(&c->log, "warning %s\n", ev->u.error.message);
		break;
	case EV_KMSG:
	case EV_CONSOLE:
		strbuf_addf(&c->log, "line %s\n", ev->u.line.text);
		break;
	case EV_RUN_END:
		strbuf_addf(&c->log, "end of run %d%s\n", ev->u.end.exit_code,
			    ev->u.end.interrupted ? " interrupted" : "");
		loop_quit(c->loop, 0);
		break;
	default:
		break;
	}
	/* Ctrl-C while the stage runs: from the loop, as a signal would come */
	if (at && c->cancel_at && !strcmp(at, c->cancel_at))
		loop_add_timer(c->loop, 0, false, cancel_now, c);
}

static void
too_long(struct loop *loop, void *data)
{
	struct ctx *c = data;

	c->timed_out = true;
	loop_quit(loop, 1);
}

/* Processes whose parent is this one and that still run (zombies are reaped). */
static unsigned
children_running(struct strbuf *names)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	unsigned n = 0;

	strbuf_reset(names);
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	while (d && (de = readdir(d))) {
		char path[300], *text = NULL, *p;
		size_t len;
		long ppid;
		char state;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
		if (read_file(path, 4096, &text, &len) != OK) {
			error_clear();
			continue;
		}
		p = strrchr(text, ')');
		if (p && sscanf(p + 1, " %c %ld", &state, &ppid) == 2 && ppid == getpid() &&
		    state != 'Z') {
			n++;
			strbuf_addf(names, " %s", text);
		}
		free(text);
	}
	if (d)
		closedir(d);
	return n;
}

static void
assert_nothing_left(const char *run_dir)
{
	struct strbuf names = STRBUF_INIT;
	char *leases = test_tmp("home/data/leases"), *guest;
	unsigned n = 0;
	DIR *d;
	struct dirent *de;

	for (int i = 0; i < 50 && (n = children_running(&names)); i++)
		usleep(100 * 1000);
	if (n)
		fail_msg("%u processes left running:%s", n, names.buf);
	strbuf_release(&names);
	d = opendir(leases);
	while (d && (de = readdir(d)))
		if (de->d_name[0] != '.')
			fail_msg("a lease is left: %s", de->d_name);
	if (d)
		closedir(d);
	free(leases);
	/* no guest's scratch directory, no results being unpacked */
	d = opendir(run_dir);
	assert_non_null(d);
	while ((de = readdir(d))) {
		guest = de->d_name;
		if (str_startswith(guest, "guest-") || str_startswith(guest, "unpack-"))
			fail_msg("'%s' is left in the run directory", guest);
	}
	closedir(d);
}

/* Run the plan to its end; the engine's run.json, parsed. */
static json_t *
run(struct ctx *c, const struct plan *plan)
{
	struct event_bus bus = { 0 };
	json_error_t jerr;
	json_t *root;
	char *path;
	uint64_t guard;

	c->loop = loop_new();
	strbuf_init(&c->log);
	event_bus_add(&bus, (struct listener){ on_event, c });
	assert_int_equal(engine_new(plan, &profiles, c->loop, &bus, &c->e), OK);
	assert_int_equal(engine_start(c->e), OK);
	guard = loop_add_timer(c->loop, RUN_LIMIT_MS, false, too_long, c);
	loop_run(c->loop);
	loop_del_timer(c->loop, guard);
	if (c->timed_out)
		fail_msg("the run did not end in %d ms:\n%s", RUN_LIMIT_MS, c->log.buf);
	assert_true(engine_done(c->e));
	path = path_join(engine_run_dir(c->e), "run.json");
	root = json_load_file(path, 0, &jerr);
	if (!root)
		fail_msg("run.json: %s\n%s", jerr.text, c->log.buf);
	free(path);
	c->dir = xstrdup(engine_run_dir(c->e));
	engine_free(c->e);
	loop_free(c->loop);
	event_bus_release(&bus);
	assert_nothing_left(c->dir);
	return root;
}

/* Run tests ("generic/001=pass"...) with a test limit (0: the default). */
static json_t *
run_named(struct ctx *c, const char *const *tests, unsigned test_timeout)
{
	struct plan plan;
	json_t *root;

	plan_for(&plan, tests);
	plan.test_timeout = test_timeout;
	root = run(c, &plan);
	plan_release(&plan);
	return root;
}

static void
ctx_release(struct ctx *c, json_t *root)
{
	json_decref(root);
	strbuf_release(&c->log);
	free(c->dir);
}

/* The status run.json gives test, or NULL when it has none. */
static const char *
status_of(json_t *root, const char *test)
{
	json_t *secs = json_object_get(root, "sections"), *sec, *t;
	size_t i, j;

	json_array_foreach(secs, i, sec)
	{
		json_array_foreach(json_object_get(sec, "tests"), j, t)
		{
			if (!strcmp(json_string_value(json_object_get(t, "test")), test))
				return json_string_value(json_object_get(t, "status"));
		}
	}
	return NULL;
}

static void
assert_status(struct ctx *c, json_t *root, const char *test, const char *want)
{
	const char *got = status_of(root, test);

	if (!got || strcmp(got, want))
		fail_msg("%s: run.json says %s, expected %s\nevents:\n%s", test,
			 got ? got : "nothing", want, c->log.buf);
}

static void
assert_log(struct ctx *c, const char *line)
{
	if (!strstr(c->log.buf, line))
		fail_msg("no '%s' in the events:\n%s", line, c->log.buf);
}

static bool
flag_of(json_t *root, const char *key)
{
	return json_is_true(json_object_get(root, key));
}

static void
test_pass_fail_notrun(void **state)
{
	static const char *const tests[] = { "generic/001=pass", "generic/002=fail",
					     "generic/003=notrun", NULL };
	struct ctx c = { 0 };
	json_t *root = run_named(&c, tests, 0);
	assert_status(&c, root, "generic/001", "pass");
	assert_status(&c, root, "generic/002", "fail");
	assert_status(&c, root, "generic/003", "notrun");
	assert_log(&c, "stage- results ok");
	assert_log(&c, "end of run 1\n");
	assert_false(strstr(c.log.buf, "stage+ kernel") || strstr(c.log.buf, "stage+ appliance"));
	assert_true(flag_of(root, "finished"));
	assert_false(flag_of(root, "interrupted"));
	ctx_release(&c, root);
}

static void
test_crash_then_new_session(void **state)
{
	static const char *const tests[] = { "generic/001=pass", "generic/002=crash",
					     "generic/003=pass", NULL };
	struct ctx c = { .kill_at = "generic/002" };
	json_t *root = run_named(&c, tests, 0);
	assert_status(&c, root, "generic/001", "pass");
	assert_status(&c, root, "generic/002", "crashed");
	assert_status(&c, root, "generic/003", "pass");
	/* two sessions: the second ran only what was left */
	assert_int_equal(strstr(strstr(c.log.buf, "stage+ boot") + 1, "stage+ boot") != NULL, 1);
	assert_log(&c, "end of run 1\n");
	ctx_release(&c, root);
}

static void
test_hang_caught(void **state)
{
	static const char *const tests[] = { "generic/001=pass", "generic/002=hang",
					     "generic/003=pass", NULL };
	struct ctx c = { 0 };
	json_t *root = run_named(&c, tests, 2);
	assert_status(&c, root, "generic/001", "pass");
	assert_status(&c, root, "generic/002", "hung");
	assert_status(&c, root, "generic/003", "pass");
	assert_log(&c, "end of run 1\n");
	ctx_release(&c, root);
}

/*
 * A test past twice what earlier runs took is flagged at once, with what the
 * guest does and when it will count as hung; then it counts as hung there.
 */
static void
test_long_test_flagged(void **state)
{
	static const char *const tests[] = { "generic/001=pass", "generic/002=hang", NULL };
	char *earlier = test_tmp("home/data/runs/20260101-000000/run.json");
	char *dir = test_tmp("home/data/runs/20260101-000000");
	struct ctx c = { 0 };
	json_t *root;

	test_write(earlier, "{\"version\":1,\"id\":\"20260101-000000\",\"finished\":true,"
			    "\"sections\":[{\"name\":\"ext4/4k\",\"config\":\"ext4/4k\","
			    "\"tests\":[{\"test\":\"generic/002\",\"status\":\"pass\","
			    "\"seconds\":1}]}]}");
	root = run_named(&c, tests, 5);
	assert_log(&c, "warning generic/002 has run ");
	assert_log(&c, "s, over twice the 1s expected (from earlier runs of this configuration)");
	assert_log(&c, "It counts as hung at 5s (--test-timeout)");
	assert_status(&c, root, "generic/002", "hung");
	assert_true(strstr(c.log.buf, "warning generic/002") <
		    strstr(c.log.buf, "end generic/002"));
	ctx_release(&c, root);
	assert_int_equal(remove_tree(dir), OK);
	free(earlier);
	free(dir);
}

/* A guest that says nothing for longer than the backend's silence limit counts as hung. */
static void
test_silence_caught(void **state)
{
	static const char *const tests[] = { "generic/001=pass", "generic/002=hang",
					     "generic/003=pass", NULL };
	struct ctx c = { 0 };
	struct plan plan;
	json_t *root;

	plan_for(&plan, tests);
	plan_set_backend_opt(&plan, "silence", "2"); /* the agent's heartbeat comes every 5 s */
	root = run(&c, &plan);
	assert_status(&c, root, "generic/002", "hung");
	assert_log(&c, "was silent for 2 seconds");
	assert_status(&c, root, "generic/003", "pass");
	ctx_release(&c, root);
	plan_release(&plan);
}

/* Ctrl-C in a stage: the run ends interrupted, with what ran before it. */
static void
cancel_in(const char *where, const char *ran, const char *status)
{
	static const char *const tests[] = { "generic/001=pass", "generic/002=hang", NULL };
	static const char *const short_tests[] = { "generic/001=big", NULL };
	struct ctx c = { .cancel_at = where };
	/* at "results" the hang would never let the tests end */
	json_t *root = run_named(&c, strcmp(where, "results") ? tests : short_tests, 0);
	/* stopping has its own exit status */
	assert_log(&c, "end of run 130 interrupted\n");
	assert_true(flag_of(root, "interrupted"));
	if (ran)
		assert_status(&c, root, ran, status);
	else
		assert_null(status_of(root, "generic/001"));
	ctx_release(&c, root);
}

static void
test_cancel_at_start(void **state)
{
	cancel_in("run", NULL, NULL);
}

static void
test_cancel_in_boot(void **state)
{
	cancel_in("boot", NULL, NULL);
}

static void
test_cancel_in_tests(void **state)
{
	cancel_in("test:generic/002", "generic/001", "pass");
}

/* Ctrl-C while the results unpack: the configuration stays until they are. */
static void
test_cancel_in_results(void **state)
{
	cancel_in("results", "generic/001", "pass");
}

/* A broken agent's frame in the middle of a test: the guest's protocol error, never fswb's. */
static void
frame_case(const char *frame, const char *says)
{
	char *bad = xasprintf("generic/002=frame %s", frame);
	const char *const tests[] = { "generic/001=pass", bad, "generic/003=pass", NULL };
	struct ctx c = { 0 };
	json_t *root = run_named(&c, tests, 0);

	assert_status(&c, root, "generic/001", "pass");
	assert_status(&c, root, "generic/002", "crashed");
	assert_log(&c, says);
	assert_log(&c, "end of run 1\n");
	ctx_release(&c, root);
	free(bad);
}

/* RESULT and EXIT while check runs, then check's own output: out of order. */
static void
test_frame_out_of_order(void **state)
{
	frame_case("RESULT +3\\nabcEXIT 0\\n", "came out of order");
}

/*
 * The disk fills up while the results unpack: the run says what was lost, in
 * run.json's error too, exits 2, and leaves no archive. (Root only: a small
 * tmpfs over the runs directory, in a mount namespace of this test's own.)
 */
static void
test_results_disk_full(void **state)
{
	static const char *const tests[] = { "generic/001=big", NULL };
	char *runs = test_tmp("home/data/runs");
	struct ctx c = { 0 };
	json_t *root;
	const char *err;

	if (geteuid() != 0 || unshare(CLONE_NEWNS) ||
	    mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL)) {
		free(runs);
		skip();
	}
	mkdir_p(runs, 0755);
	assert_int_equal(mount("fswb-test", runs, "tmpfs", 0, "size=8m"), 0);
	root = run_named(&c, tests, 0);
	assert_log(&c, "were lost");
	assert_log(&c, "No space left on device");
	assert_log(&c, "end of run 2\n");
	err = json_string_value(json_object_get(root, "error"));
	if (!err || !strstr(err, "the results of 'ext4/4k' were lost"))
		fail_msg("run.json's error: %s", err ? err : "null");
	ctx_release(&c, root);
	umount2(runs, MNT_DETACH);
	free(runs);
}

/* Check's output after its EXIT: the guest's protocol error, never fswb's BUG(). */
static void
test_frame_after_exit(void **state)
{
	frame_case("RESULT +0\\nEXIT 0\\nOUT +1\\nx", "OUT came out of order (after RESULT)");
}

/* A second EXIT for one RUN. */
static void
test_frame_exit_twice(void **state)
{
	frame_case("RESULT +0\\nEXIT 0\\nEXIT 1\\n", "EXIT came out of order (twice for one RUN)");
}

/* A payload longer than the protocol allows. */
static void
test_frame_oversized(void **state)
{
	frame_case("OUT +999999999999\\n", "broke the protocol");
}

static int
setup(void **state)
{
	char *dir;

	test_setup_hermetic(state);
	dir = test_srcdir();
	setenv("FSWB_DATADIR", dir, 1); /* the agent, from this tree */
	free(dir);
	/* orphans of a killed agent come here, so that the checks above see them */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	dir = test_path("profiles");
	assert_int_equal(profiles_load(dir, &profiles), OK);
	free(dir);
	return 0;
}

/* ---- several guests at once (plan.shards) ---- */

/* How many times run.json has test, and the shard of the last one (0: none). */
static unsigned
count_of(json_t *root, const char *test, unsigned *shard)
{
	json_t *secs = json_object_get(root, "sections"), *sec, *t;
	size_t i, j;
	unsigned n = 0;

	json_array_foreach(secs, i, sec)
	{
		json_array_foreach(json_object_get(sec, "tests"), j, t)
		{
			if (strcmp(json_string_value(json_object_get(t, "test")), test))
				continue;
			n++;
			*shard = (unsigned)json_integer_value(json_object_get(t, "shard"));
		}
	}
	return n;
}

/* How many lines of the events' log have what. */
static unsigned
count_lines(const struct ctx *c, const char *what)
{
	unsigned n = 0;

	for (const char *p = c->log.buf; (p = strstr(p, what)); p++)
		n++;
	return n;
}

/* Every test of tests ran once, in shard 1 or 2, and both shards ran some. */
static void
assert_once_each(struct ctx *c, json_t *root, const char *const *tests)
{
	unsigned used = 0;

	for (size_t i = 0; tests[i]; i++) {
		char *name = xstrndup(tests[i], strcspn(tests[i], "="));
		unsigned shard = 0, n = count_of(root, name, &shard);

		if (n != 1 || shard < 1 || shard > 2)
			fail_msg("%s: %u times in run.json, shard %u\nevents:\n%s", name, n, shard,
				 c->log.buf);
		used |= 1u << shard;
		free(name);
	}
	if (used != 6)
		fail_msg("the tests did not run in both shards\nevents:\n%s", c->log.buf);
	assert_int_equal(json_integer_value(json_object_get(root, "shards")), 2);
}

/*
 * No earlier run: the fixture's tests take a second, and a queue ordered by
 * earlier runs would rightly give them all to one guest (a batch is never
 * shorter than two start-ups of check).
 */
static void
forget_runs(void)
{
	char *runs = test_tmp("home/data/runs");

	assert_int_equal(remove_tree(runs), OK);
	free(runs);
}

static json_t *
run_sharded(struct ctx *c, const char *const *tests, unsigned test_timeout)
{
	struct plan plan;
	json_t *root;

	plan_for(&plan, tests);
	plan.shards = 2;
	plan.test_timeout = test_timeout;
	forget_runs(); /* estimates from the tests' groups: each test a batch's worth */
	root = run(c, &plan);
	plan_release(&plan);
	return root;
}

static bool
run_file(const struct ctx *c, const char *rel)
{
	char *p = path_join(c->dir, rel);
	bool there = path_exists(p);

	free(p);
	return there;
}

/*
 * Two guests at once from one queue, in batches: every test once, with the
 * shard that ran it; one results directory as if one guest ran them all.
 */
static void
test_shards_split(void **state)
{
	static const char *const tests[] = {
		"generic/001=sleep 1", "generic/002=sleep 1", "generic/003=sleep 1",
		"generic/004=sleep 1", "generic/005=sleep 1", "generic/006=fail",
		"generic/007=notrun",  "generic/008=sleep 1", NULL
	};
	struct ctx c = { 0 };
	json_t *root = run_sharded(&c, tests, 0);
	char *log, *path;

	assert_once_each(&c, root, tests);
	assert_status(&c, root, "generic/006", "fail");
	assert_status(&c, root, "generic/007", "notrun");
	/* several batches, but each guest made its TEST_DEV once */
	assert_true(strstr(c.log.buf, "stage+ tests") != NULL);
	assert_int_equal(count_lines(&c, "making the test filesystem"), 2);
	assert_true(count_lines(&c, "start generic/") == 8);
	assert_status(&c, root, "generic/001", "pass");
	assert_int_equal(c.max_running, 2);
	assert_log(&c, "end of run 1\n");
	/* the results of every batch, merged: each test's files, one check.log */
	assert_true(run_file(&c, "results/ext4-4k/generic/006.out.bad"));
	assert_true(run_file(&c, "results/ext4-4k/generic/001.full"));
	assert_true(run_file(&c, "results/ext4-4k/generic/008.full"));
	assert_true(run_file(&c, "console-1.log") && run_file(&c, "console-2.log"));
	path = path_join(c.dir, "results/ext4-4k/check.log");
	log = test_read(path);
	for (size_t i = 0; tests[i]; i++) {
		char *name = xstrndup(tests[i], strcspn(tests[i], "="));

		if (!strstr(log, name))
			fail_msg("check.log lacks %s:\n%s", name, log);
		free(name);
	}
	free(log);
	free(path);
	/* one SECTION for the configuration, no per-batch summaries in the events */
	path = path_join(c.dir, "events.jsonl");
	log = test_read(path);
	assert_non_null(strstr(log, "\"event\":\"section\""));
	assert_null(strstr(strstr(log, "\"event\":\"section\"") + 1, "\"event\":\"section\""));
	assert_null(strstr(log, "\"event\":\"summary\""));
	assert_non_null(strstr(log, "\"shard\":2"));
	free(log);
	free(path);
	ctx_release(&c, root);
}

/* A guest that dies: its test is crashed, a new guest goes on with the queue. */
static void
test_shards_crash(void **state)
{
	static const char *const tests[] = { "generic/001=sleep 1",
					     "generic/002=sleep 1",
					     "generic/003=crash",
					     "generic/004=sleep 1",
					     "generic/005=sleep 1",
					     "generic/006=sleep 1",
					     NULL };
	struct ctx c = { .kill_at = "generic/003" };
	json_t *root = run_sharded(&c, tests, 0);

	assert_once_each(&c, root, tests);
	assert_status(&c, root, "generic/003", "crashed");
	assert_status(&c, root, "generic/006", "pass");
	assert_log(&c, "starting a new guest for the remaining tests of 'ext4/4k'");
	assert_log(&c, "end of run 1\n");
	ctx_release(&c, root);
}

/* A test that hangs in one guest is stopped there; the others never wait for it. */
static void
test_shards_hang(void **state)
{
	static const char *const tests[] = { "generic/001=sleep 1", "generic/002=hang",
					     "generic/003=sleep 1", "generic/004=sleep 1",
					     "generic/005=sleep 1", NULL };
	struct ctx c = { 0 };
	json_t *root = run_sharded(&c, tests, 3);

	assert_once_each(&c, root, tests);
	assert_status(&c, root, "generic/002", "hung");
	assert_status(&c, root, "generic/005", "pass");
	ctx_release(&c, root);
}

/* Ctrl-C stops every guest and leaves one consistent run. */
static void
test_shards_cancel(void **state)
{
	static const char *const tests[] = { "generic/001=hang", "generic/002=hang",
					     "generic/003=pass", NULL };
	struct ctx c = { .cancel_running = 2 };
	json_t *root = run_sharded(&c, tests, 0);
	json_t *sec = json_array_get(json_object_get(root, "sections"), 0);
	json_t *stopped = json_object_get(sec, "stopped");
	json_t *unreached = json_object_get(sec, "unreached");

	assert_int_equal(c.max_running, 2);
	assert_log(&c, "end of run 130 interrupted\n");
	assert_true(flag_of(root, "interrupted"));
	assert_true(flag_of(root, "finished"));
	/* both running tests are recorded as cut off, with their time; the third never started */
	assert_int_equal(json_array_size(stopped), 2);
	assert_true(json_number_value(json_object_get(json_array_get(stopped, 0), "seconds")) >= 0);
	assert_int_equal(json_array_size(unreached), 1);
	assert_string_equal(json_string_value(json_array_get(unreached, 0)), "generic/003");
	ctx_release(&c, root);
}

/* Configurations are shards too: two at once, each with all its tests. */
static void
test_shards_configs(void **state)
{
	static const char *const tests[] = { "generic/001=sleep 1", "generic/002=sleep 1", NULL };
	struct ctx c = { 0 };
	struct plan plan;
	json_t *root, *secs;

	plan_for(&plan, tests);
	strvec_clear(&plan.configs);
	strvec_push(&plan.configs, "ext4/4k");
	strvec_push(&plan.configs, "ext4/1k");
	plan.shards = 2;
	forget_runs();
	root = run(&c, &plan);
	secs = json_object_get(root, "sections");
	assert_int_equal(json_array_size(secs), 2);
	for (size_t i = 0; i < 2; i++)
		assert_int_equal(json_array_size(json_object_get(json_array_get(secs, i), "tests")),
				 2);
	assert_int_equal(c.max_running, 2);
	assert_log(&c, "end of run 0\n");
	ctx_release(&c, root);
	plan_release(&plan);
}

/*
 * A test's time on one configuration is what fswb expects of it on the next
 * one of the same run (not its groups' guess), and says so.
 */
static void
test_estimate_within_run(void **state)
{
	static const char *const tests[] = { "generic/001=sleep 2", NULL };
	struct ctx c = { 0 };
	struct plan plan;
	json_t *root;
	char *path, *log, *second;

	(void)state;
	plan_for(&plan, tests);
	strvec_clear(&plan.configs);
	strvec_push(&plan.configs, "ext4/4k");
	strvec_push(&plan.configs, "ext4/1k");
	forget_runs();
	root = run(&c, &plan);
	path = path_join(c.dir, "events.jsonl");
	log = test_read(path);
	/* the first from its groups, the second from the first's time */
	assert_non_null(strstr(log, "\"expected_from\":\"the tests' groups\""));
	second = strstr(log, "\"config\":\"ext4/1k\",\"test\":\"generic/001\"");
	assert_non_null(second);
	assert_non_null(strstr(second, "\"expected_from\":\"its time on other configurations\""));
	free(log);
	free(path);
	ctx_release(&c, root);
	plan_release(&plan);
}

/* A configuration without devices (tmpfs): no disk, no mkfs, TEST_DEV by name. */
static void
test_no_devices(void **state)
{
	static const char *const tests[] = { "generic/001=sleep 1", NULL };
	struct ctx c = { 0 };
	struct plan plan;
	json_t *root;
	char *path, *lc;

	(void)state;
	plan_for(&plan, tests);
	strvec_clear(&plan.configs);
	strvec_push(&plan.configs, "tmpfs/default");
	root = run(&c, &plan);
	assert_status(&c, root, "generic/001", "pass");
	assert_int_equal(count_lines(&c, "making the test filesystem"), 0);
	path = path_join(c.dir, "results/tmpfs-default/local.config");
	lc = test_read(path);
	assert_non_null(strstr(lc, "# TEST_DEV is no device: nothing was formatted\n"));
	assert_non_null(strstr(lc, "TEST_DEV=tmpfs_test\n"));
	assert_non_null(strstr(lc, "SCRATCH_DEV=tmpfs_scratch\n"));
	free(lc);
	free(path);
	ctx_release(&c, root);
	plan_release(&plan);
}

/*
 * A file system served over NFS (nfs/loopback): both disks are made as the
 * base, check is told HOST:/PATH, and a machine without the NFS server's
 * tools says which packages it needs instead of running check. (This host's
 * agent must not export anything: the test runs only where rpcbind is not
 * installed, as on a build machine.)
 */
static void
test_served_nfs(void **state)
{
	static const char *const tests[] = { "generic/001=pass", NULL };
	struct ctx c = { 0 };
	struct plan plan;
	json_t *root;
	char *path, *lc;

	(void)state;
	if (system("command -v rpcbind >/dev/null 2>&1 || command -v exportfs >/dev/null 2>&1") ==
	    0)
		skip();
	plan_for(&plan, tests);
	strvec_clear(&plan.configs);
	strvec_push(&plan.configs, "nfs/loopback");
	root = run(&c, &plan);
	/* TEST's disk, then SCRATCH's, each made as ext4 */
	assert_int_equal(count_lines(&c, "making the test filesystem: mkfs.ext4 -F"), 1);
	assert_int_equal(count_lines(&c, "making the scratch filesystem to export: mkfs.ext4 -F"),
			 1);
	assert_true(count_lines(&c,
				"'rpcbind' is not on this machine: a configuration served "
				"over NFS needs the packages nfs-kernel-server and rpcbind") > 0);
	assert_int_equal(count_lines(&c, "start generic/001"), 0);
	path = path_join(c.dir, "results/nfs-loopback/local.config");
	lc = test_read(path);
	assert_non_null(strstr(lc, "\nexport FSTYP=nfs\n"));
	assert_non_null(strstr(lc, "\nexport TEST_DEV=127.0.0.1:/srv/fswb/test\n"));
	assert_non_null(strstr(lc, "\nexport SCRATCH_DEV=127.0.0.1:/srv/fswb/scratch\n"));
	assert_non_null(strstr(lc, "\nexport NFS_MOUNT_OPTIONS='-o rw,relatime,nfsvers=4.2'\n"));
	assert_null(strstr(lc, "LOGWRITES_DEV"));
	assert_non_null(strstr(lc, "# TEST_DEV is exported over nfs by the guest; its disk was "
				   "made with: mkfs.ext4 -F "));
	free(lc);
	free(path);
	ctx_release(&c, root);
	plan_release(&plan);
}

/*
 * An overlay (overlay/ext4): check -overlay mounts TEST and SCRATCH as the
 * base and only empties SCRATCH, so the guest makes both disks as ext4
 * first (as xfstests-bld does), and check is told -overlay.
 */
static void
test_overlay_base(void **state)
{
	static const char *const tests[] = { "generic/001=pass", NULL };
	struct ctx c = { 0 };
	struct plan plan;
	json_t *root;
	unsigned shard;

	(void)state;
	plan_for(&plan, tests);
	strvec_clear(&plan.configs);
	strvec_push(&plan.configs, "overlay/ext4");
	root = run(&c, &plan);
	assert_int_equal(count_lines(&c, "making the test filesystem: mkfs.ext4 -F"), 1);
	assert_int_equal(count_lines(&c, "making the scratch filesystem under the overlay: "
					 "mkfs.ext4 -F"),
			 1);
	assert_int_equal(count_of(root, "generic/001", &shard), 1);
	ctx_release(&c, root);
	plan_release(&plan);
}

/* Many guests: four at once, every test once, each guest with some of them. */
static void
test_shards_many(void **state)
{
	static const char *const tests[] = {
		"generic/001=sleep 2", "generic/002=sleep 2", "generic/003=sleep 2",
		"generic/004=sleep 2", "generic/005=sleep 2", "generic/006=sleep 2",
		"generic/007=sleep 2", "generic/008=sleep 2", NULL
	};
	struct ctx c = { 0 };
	struct plan plan;
	json_t *root;
	unsigned used = 0;

	plan_for(&plan, tests);
	plan.shards = 4;
	forget_runs();
	root = run(&c, &plan);
	for (size_t i = 0; tests[i]; i++) {
		char *name = xstrndup(tests[i], strcspn(tests[i], "="));
		unsigned shard = 0;

		assert_int_equal(count_of(root, name, &shard), 1);
		assert_true(shard >= 1 && shard <= 4);
		used |= 1u << shard;
		free(name);
	}
	assert_int_equal(used, 0x1e);
	assert_true(c.max_running >= 3);
	assert_int_equal(json_integer_value(json_object_get(root, "shards")), 4);
	assert_log(&c, "end of run 0\n");
	ctx_release(&c, root);
	plan_release(&plan);
}

static int
teardown(void **state)
{
	profiles_release(&profiles);
	return test_teardown_hermetic(state);
}

/*
 * The kernel stage runs in a worker process: its events reach the run as the
 * engine's own, a build that fails fails the run with the compiler's words,
 * and Ctrl-C while it builds stops make at once and leaves nothing running.
 */
static void
plan_kernel_tree(struct plan *plan, const char *name)
{
	static const char *const tests[] = { "generic/001=pass", NULL };
	char *src = test_path("tests/fixtures/kbuild/fake-tree");
	char *dst = test_tmp(name);
	const char *argv[] = { "cp", "-a", src, dst, NULL };
	struct strbuf out = STRBUF_INIT;
	struct child_exit ex;
	struct loop *loop = loop_new();

	remove_tree(dst);
	assert_int_equal(spawn_run(loop, argv, NULL, true, 4096, &out, &ex), OK);
	assert_true(ex.exited && ex.code == 0);
	loop_free(loop);
	plan_for(plan, tests);
	free(plan->backend);
	plan->backend = xstrdup("qemu");
	strvec_clear(&plan->backend_opts);
	assert_int_equal(plan_kernel_set(&plan->kernel, dst), OK);
	strbuf_release(&out);
	free(src);
	free(dst);
}

/* A process still running whose command line names needle. */
static bool
process_naming(const char *needle)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	bool found = false;

	while (!found && d && (de = readdir(d))) {
		char path[300], *text = NULL;
		size_t len;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/cmdline", de->d_name);
		if (read_file(path, 65536, &text, &len) != OK) {
			error_clear();
			continue;
		}
		for (size_t i = 0; i < len; i++)
			if (!text[i])
				text[i] = ' ';
		found = len && memmem(text, len, needle, strlen(needle));
		free(text);
	}
	if (d)
		closedir(d);
	return found;
}

static void
test_kernel_stage_fails(void **state)
{
	struct ctx c = { 0 };
	struct plan plan;
	json_t *root;

	plan_kernel_tree(&plan, "tree-fails");
	setenv("FAKE_KBUILD_FAIL", "1", 1);
	root = run(&c, &plan);
	unsetenv("FAKE_KBUILD_FAIL");
	assert_log(&c, "stage+ kernel\n");
	assert_log(&c, "stage- kernel failed: ");
	assert_log(&c, "broken");
	assert_true(json_is_string(json_object_get(root, "error")));
	assert_null(strstr(c.log.buf, "stage+ boot"));
	ctx_release(&c, root);
	plan_release(&plan);
}

static void
test_cancel_in_kernel(void **state)
{
	struct ctx c = { .cancel_at = "kernel" };
	struct plan plan;
	uint64_t start = loop_now_ms();
	char *tree = test_tmp("tree-slow");
	json_t *root;

	plan_kernel_tree(&plan, "tree-slow");
	setenv("FAKE_KBUILD_SLOW", "1", 1);
	root = run(&c, &plan);
	unsetenv("FAKE_KBUILD_SLOW");
	assert_true(loop_now_ms() - start < 30000); /* not the minute the slow step takes */
	assert_log(&c, "end of run 130 interrupted\n");
	assert_true(flag_of(root, "interrupted"));
	assert_false(process_naming(tree));
	ctx_release(&c, root);
	plan_release(&plan);
	free(tree);
}

/* A look into a guest needs a backend with a shell: stdio has none, and says so. */
static void
test_look_needs_a_shell(void **state)
{
	static const char *const tests[] = { "generic/001=pass", NULL };
	struct ctx c = { .look = true };
	json_t *root = run_named(&c, tests, 0);

	assert_int_equal(c.look_rc, ERR_UNSUPPORTED);
	assert_non_null(strstr(c.look_msg, "the 'stdio' backend gives no shell"));
	assert_status(&c, root, "generic/001", "pass");
	free(c.look_msg);
	ctx_release(&c, root);
}

/*
 * fswb results fetch: the record of a detached run (detached.json) is read
 * as untrusted, each bad field named; a run not detached is refused.
 */
static void
follow_expect(const struct plan *plan, const char *dir, const char *record, const char *needle)
{
	struct event_bus bus = { 0 };
	struct loop *loop = loop_new();
	struct engine *e;
	char *path = path_join(dir, DETACHED_JSON);
	enum status rc;

	if (record)
		test_write(path, record);
	else
		unlink(path);
	assert_int_equal(engine_new(plan, &profiles, loop, &bus, &e), OK);
	rc = engine_follow(e, dir);
	if (!needle) {
		assert_int_equal(rc, OK);
	} else {
		if (rc == OK)
			fail_msg("followed, not refused with '%s'", needle);
		if (!strstr(error_msg(), needle))
			fail_msg("'%s' does not say '%s'", error_msg(), needle);
		error_clear();
	}
	engine_free(e);
	loop_free(loop);
	free(path);
}

static void
test_follow_record(void **state)
{
	char *dir = test_tmp("home/data/runs/20261206-010203"), *runjson;
	struct run_record rec;
	struct plan plan;

	(void)state;
	assert_int_equal(mkdir_p(dir, 0755), OK);
	plan_init(&plan);
	free(plan.backend);
	plan.backend = xstrdup("gce");
	strvec_push(&plan.configs, "ext4/4k");
	follow_expect(&plan, dir, NULL, "was not detached");
	plan.detach = true;
	follow_expect(&plan, dir, NULL, "no such file: the run was not detached");
	follow_expect(&plan, dir, "{\"version\": 1,", "detached.json: line");
	follow_expect(&plan, dir, "{\"version\": 1, \"shards\": [], \"extra\": 1}", "'extra'");
	follow_expect(&plan, dir, "{\"version\": 1, \"sharded\": false, \"shards\": []}",
		      "field 'shards': expected a list of 1 to");
	follow_expect(&plan, dir,
		      "{\"version\": 1, \"sharded\": false, \"shards\": [{\"shard\": 1, "
		      "\"config\": \"xfs/1k\", \"follow\": \"fswb-1-0-0\", \"tests\": null}]}",
		      "'xfs/1k' is not a configuration of the run");
	follow_expect(&plan, dir,
		      "{\"version\": 1, \"sharded\": true, \"shards\": [{\"shard\": 1, "
		      "\"config\": \"ext4/4k\", \"follow\": \"fswb-1-0-0\", \"tests\": "
		      "[\"generic/001\", \"../../etc/passwd\"]}]}",
		      "field 'shards[0].tests': '../../etc/passwd' is not a test name");
	follow_expect(&plan, dir, "{\"version\": 2, \"sharded\": true, \"shards\": []}",
		      "'version'");
	follow_expect(&plan, dir,
		      "{\"version\": 1, \"sharded\": true, \"shards\": [{\"shard\": 1, "
		      "\"config\": \"ext4/4k\", \"follow\": \"fswb-1-0-0\", \"tests\": "
		      "[\"generic/001\"]}, {\"shard\": 2, \"config\": \"ext4/4k\", \"follow\": "
		      "\"fswb-1-1-1\", \"tests\": null}]}",
		      "a list for some machines of 'ext4/4k', not for others");
	follow_expect(&plan, dir,
		      "{\"version\": 1, \"sharded\": true, \"shards\": [{\"shard\": 1, "
		      "\"config\": \"ext4/4k\", \"follow\": \"fswb-1-0-0\", \"tests\": "
		      "[\"generic/001\"]}, {\"shard\": 2, \"config\": \"ext4/4k\", \"follow\": "
		      "\"fswb-1-0-0\", \"tests\": [\"generic/002\"]}]}",
		      "field 'shards[1]': the machine or shard of shards[0] again");
	/* one follower at a time: another holds the lock */
	{
		char *lock = path_join(dir, ".fetch.lock");
		int fd = open(lock, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);

		assert_true(fd >= 0);
		assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), 0);
		follow_expect(&plan, dir, NULL, "another fswb follows the run 20261206-010203 now");
		assert_int_equal(access(lock, F_OK), 0); /* not ours: left */
		close(fd);
		unlink(lock);
		free(lock);
	}
	/* a run that ended is not followed again */
	runjson = path_join(dir, "run.json");
	run_record_init(&rec);
	rec.id = xstrdup("20261206-010203");
	rec.finished = true;
	assert_int_equal(run_record_save(runjson, &rec), OK);
	run_record_release(&rec);
	follow_expect(&plan, dir,
		      "{\"version\": 1, \"sharded\": false, \"shards\": [{\"shard\": 1, "
		      "\"config\": \"ext4/4k\", \"follow\": \"fswb-1-0-0\", \"tests\": null}]}",
		      "ended already");
	plan_release(&plan);
	free(runjson);
	free(dir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pass_fail_notrun),
		cmocka_unit_test(test_crash_then_new_session),
		cmocka_unit_test(test_hang_caught),
		cmocka_unit_test(test_long_test_flagged),
		cmocka_unit_test(test_silence_caught),
		cmocka_unit_test(test_cancel_at_start),
		cmocka_unit_test(test_cancel_in_boot),
		cmocka_unit_test(test_cancel_in_tests),
		cmocka_unit_test(test_cancel_in_results),
		cmocka_unit_test(test_kernel_stage_fails),
		cmocka_unit_test(test_cancel_in_kernel),
		cmocka_unit_test(test_look_needs_a_shell),
		cmocka_unit_test(test_frame_out_of_order),
		cmocka_unit_test(test_frame_oversized),
		cmocka_unit_test(test_frame_after_exit),
		cmocka_unit_test(test_frame_exit_twice),
		cmocka_unit_test(test_results_disk_full),
		cmocka_unit_test(test_shards_split),
		cmocka_unit_test(test_shards_crash),
		cmocka_unit_test(test_shards_hang),
		cmocka_unit_test(test_shards_cancel),
		cmocka_unit_test(test_shards_configs),
		cmocka_unit_test(test_shards_many),
		cmocka_unit_test(test_no_devices),
		cmocka_unit_test(test_served_nfs),
		cmocka_unit_test(test_overlay_base),
		cmocka_unit_test(test_estimate_within_run),
		cmocka_unit_test(test_follow_record),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
