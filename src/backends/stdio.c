/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The stdio backend: fswb's guest agent (fswb-agent --stdio) run on this
 * host over pipes, in the session's scratch directory. No kernel, no
 * appliance (caps say so): the agent runs check in the fstests tree given
 * as -o fstests=DIR, on disks that are plain files in the scratch directory
 * (or the existing files a spec names), with the mount points in it too.
 *
 * It is the engine's test double (tests/unit/test_engine.c) and the
 * skeleton of the backends that reach an agent over a byte stream (ssh,
 * adb). It is not offered to users: backend_names() leaves it out, since
 * check on this host would need root and real block devices, and run its
 * tests against this machine.
 *
 * Streams: control is the agent's stdin and stdout; console is its stderr
 * (there is no kernel log of a machine of its own). The agent starts check
 * in a session of its own; release stops that session too (the agent writes
 * its process group into WORKDIR/agent/bg.pgid), so nothing is left running
 * even when the agent was killed.
 *
 * check's results go to a directory of the session's own in fswb's cache
 * (RESULT_BASE): sessions at once share the fstests tree.
 *
 * Options: fstests=DIR (required), boot=SECONDS (default 30) and
 * silence=SECONDS (default 60), the watchdog's limits.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends/agentpipe.h"
#include "core/paths.h"

#define BOOT_DEFAULT  30
#define QUIET_DEFAULT 60

struct stdio_session {
	struct agent_pipe pipe;
	char *workdir, *agent_work;
	struct strvec disks;
	struct session_layout layout;
	char *fstests, *job_dir, *mnt_dir, *results_dir;
	unsigned boot, silence;
};

static enum status
stdio_probe(const struct plan *plan, struct backend_probe *out)
{
	out->usable = plan && plan_backend_opt(plan, "fstests");
	if (out->usable) {
		out->summary = xstrdup("ready: the agent on this host");
	} else {
		out->summary = xstrdup("not usable: no fstests tree");
		out->fix = xstrdup("give -o fstests=DIR");
	}
	return OK;
}

/*
 * check's RESULT_BASE for one session: sessions share the fstests tree, so
 * each gets a directory of its own in fswb's cache (not in the session's
 * scratch directory, which lives with the run's files).
 */
static enum status
results_dir_make(struct lease *lease, char **out)
{
	char *base = NULL, *dir;
	enum status rc = fswb_dir_make(DIR_CACHE, "stdio", &base);

	if (rc != OK)
		return rc;
	dir = path_join(base, "results.XXXXXX");
	free(base);
	if (!mkdtemp(dir)) {
		rc = error(ERR_IO, "cannot make a results directory in fswb's cache: %s",
			   strerror(errno));
		free(dir);
		return rc;
	}
	rc = lease_add_path(lease, dir);
	if (rc != OK) {
		rmdir(dir);
		free(dir);
		return rc;
	}
	*out = dir;
	return OK;
}

/* The agent's process group for check (bg.pgid), stopped with everything in it. */
static void
kill_check(void *owner)
{
	struct stdio_session *s = owner;
	char *path = path_join(s->agent_work, "bg.pgid"), *text = NULL;
	size_t len;
	long pgid;

	if (!path_exists(path)) {
		free(path);
		return;
	}
	if (read_file(path, 64, &text, &len) == OK && sscanf(text, "%ld", &pgid) == 1 && pgid > 1 &&
	    (pid_t)pgid != getpgrp())
		kill(-(pid_t)pgid, SIGKILL);
	error_clear();
	free(text);
	free(path);
}

static void
stdio_release(void *priv)
{
	struct stdio_session *s = priv;

	agent_pipe_release(&s->pipe); /* kills and reaps the agent when still running */
	if (s->agent_work)
		kill_check(s);
	/* a start that failed keeps its message */
	if (s->workdir && remove_tree(s->workdir) != OK)
		error_clear();
	if (s->results_dir && remove_tree(s->results_dir) != OK)
		error_clear();
	free(s->workdir);
	free(s->agent_work);
	free(s->fstests);
	free(s->job_dir);
	free(s->mnt_dir);
	free(s->results_dir);
	strvec_clear(&s->disks);
	free(s);
}

static enum status
stdio_start(struct loop *loop, void *run, const struct session_spec *spec,
	    const struct session_callbacks *cb, void *data, struct lease *lease, void **priv)
{
	struct stdio_session *s = xcalloc(1, sizeof(*s));
	struct spawn_opts o = SPAWN_OPTS_INIT;
	const char *fstests = session_spec_opt(spec, "fstests");
	enum status rc;

	agent_pipe_init(&s->pipe, loop, cb, data);
	s->pipe.on_gone = kill_check;
	s->pipe.owner = s;
	strvec_init(&s->disks);
	s->boot = session_spec_seconds(spec, "boot", BOOT_DEFAULT);
	s->silence = session_spec_seconds(spec, "silence", QUIET_DEFAULT);
	if (!fstests) {
		rc = error(ERR_INVALID, "the stdio backend needs -o fstests=DIR");
		goto fail;
	}
	if (!spec->agent)
		BUG("a stdio session without the agent");
	rc = lease_add_path(lease, spec->workdir);
	if (rc == OK)
		rc = mkdir_p(spec->workdir, 0700);
	if (rc != OK)
		goto fail;
	s->workdir = xstrdup(spec->workdir);
	s->agent_work = path_join(s->workdir, "agent");
	s->fstests = xstrdup(fstests);
	s->job_dir = path_join(s->agent_work, "job");
	s->mnt_dir = path_join(s->workdir, "mnt");
	rc = results_dir_make(lease, &s->results_dir);
	if (rc != OK)
		goto fail;
	s->layout = (struct session_layout){ s->fstests, s->job_dir, s->mnt_dir, s->results_dir };
	for (size_t i = 0; rc == OK && i < spec->ndisks; i++) {
		if (spec->disks[i].path) {
			strvec_push(&s->disks, spec->disks[i].path);
			continue;
		}
		strvec_pushf(&s->disks, "%s/%s.img", s->workdir, spec->disks[i].role);
		rc = backend_make_disk(s->disks.v[i], spec->disks[i].size);
	}
	if (rc != OK)
		goto fail;

	o.argv = (const char *const[]){ "sh",	     spec->agent,   "--stdio",
					"--workdir", s->agent_work, NULL };
	o.cwd = s->workdir;
	o.new_pgrp = true;
	o.die_with_fswb = true;
	rc = agent_pipe_start(&s->pipe, &o, lease, -1);
	if (rc != OK)
		goto fail;
	*priv = s;
	return OK;
fail:
	stdio_release(s);
	return rc;
}

static enum status
stdio_send(void *priv, const void *buf, size_t len)
{
	return agent_pipe_send(&((struct stdio_session *)priv)->pipe, buf, len);
}

/* SIGTERM: the agent stops check and cleans up; SIGKILL when it takes too long. */
static void
stdio_cancel(void *priv)
{
	agent_pipe_cancel(&((struct stdio_session *)priv)->pipe);
}

static char *
stdio_disk_path(void *priv, size_t index)
{
	struct stdio_session *s = priv;

	if (index >= s->disks.n)
		BUG("disk index %zu out of range", index);
	return xstrdup(s->disks.v[index]);
}

static const struct session_layout *
stdio_layout(void *priv)
{
	return &((struct stdio_session *)priv)->layout;
}

static unsigned
stdio_boot_limit(void *priv)
{
	return ((struct stdio_session *)priv)->boot;
}

static unsigned
stdio_silence_limit(void *priv)
{
	return ((struct stdio_session *)priv)->silence;
}

static enum status
dir_check(const char *value)
{
	char *check = path_join(value, "check");
	bool ok = value[0] == '/' && !access(check, X_OK);

	free(check);
	return ok ? OK
		  : error(ERR_INVALID, "give the absolute path of an fstests tree (with an "
				       "executable check)");
}

static const struct backend_option stdio_options[] = {
	{ "fstests", "DIR", dir_check },		  /* the fstests tree check runs in */
	{ "boot", "SECONDS", backend_option_seconds },	  /* until the agent's HELLO */
	{ "silence", "SECONDS", backend_option_seconds }, /* quiet this long: hung */
	{ NULL, NULL, NULL },
};

const struct backend_ops stdio_backend = {
	.name = "stdio",
	.description = "the guest agent on this host over pipes (fswb's own tests)",
	.caps = BACKEND_PARALLEL,
	.internal = true,
	.options = stdio_options,
	.probe = stdio_probe,
	.start = stdio_start,
	.send = stdio_send,
	.cancel = stdio_cancel,
	.disk_path = stdio_disk_path,
	.layout = stdio_layout,
	.release = stdio_release,
	.boot_limit = stdio_boot_limit,
	.silence_limit = stdio_silence_limit,
};
