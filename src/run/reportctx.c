/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "run/reportctx.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/paths.h"
#include "rootfs/appliance.h"
#include "view/planutil.h"

/* How the plan got its kernel, in words. */
static char *
kernel_words(const struct plan *p)
{
	struct strbuf sb = STRBUF_INIT;

	switch (p->kernel.kind) {
	case KERNEL_TREE:
		strbuf_addf(&sb, "built from the tree %s%s", p->kernel.spec ? p->kernel.spec : "?",
			    p->kernel.own_config ? " with its own .config" : "");
		break;
	case KERNEL_IMAGE:
		strbuf_addf(&sb, "the image %s", p->kernel.spec ? p->kernel.spec : "?");
		break;
	default:
		strbuf_adds(&sb, "an installed kernel");
		break;
	}
	if (p->kernel.debug.n) {
		char *d = strvec_join(&p->kernel.debug, ", ");

		strbuf_addf(&sb, "; debug: %s", d);
		free(d);
	}
	if (p->kernel.arch && strcmp(p->kernel.arch, "x86_64"))
		strbuf_addf(&sb, "; %s", p->kernel.arch);
	return strbuf_detach(&sb);
}

/* The appliance id events.jsonl says the run reused ("reusing ID"), or NULL. */
static char *
reused_appliance(const char *run_dir)
{
	char *path = path_join(run_dir, "events.jsonl"), *id = NULL;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
	char line[16384];

	for (unsigned n = 0; f && !id && n < 2000 && fgets(line, sizeof(line), f); n++) {
		const char *p = strstr(line, "\"detail\":\"reusing ");

		if (p && strstr(line, "\"stage\":\"appliance\"")) {
			p += strlen("\"detail\":\"reusing ");
			id = xstrndup(p, strspn(p, "0123456789abcdef"));
		}
	}
	if (f)
		fclose(f);
	else if (fd >= 0)
		close(fd);
	free(path);
	return id;
}

/*
 * Which fstests: the plan's source, and the revision of the appliance it
 * ran in. NULL for a run without a plan (imported): nothing says.
 */
static char *
fstests_words(const struct report_ctx *c, const char *run_dir)
{
	const char *src = c->plan.fstests_src ? c->plan.fstests_src : APPLIANCE_FSTESTS_URL;
	char *id, *words;
	struct appliance *v = NULL;
	const char *rev = NULL;
	size_t n = 0;

	if (!c->have_plan)
		return NULL;
	id = reused_appliance(run_dir);
	if (id && appliance_list(&v, &n) == OK) {
		for (size_t i = 0; i < n && !rev; i++)
			if (!strcmp(v[i].id, id))
				rev = v[i].fstests_rev;
	}
	error_clear();
	if (rev)
		words = xasprintf("%s (revision %s)", src, rev);
	else if (id)
		words = xasprintf("%s (appliance %s)", src, id);
	else
		words = xstrdup(src);
	appliance_list_free(v, n);
	free(id);
	return words;
}

/* The kernel the run had (release, NULL: not known) when it took the default one. */
static void
pin_kernel(struct plan *p, const char *release)
{
	if (p->kernel.kind != KERNEL_AUTO || !release)
		return;
	p->kernel.kind = KERNEL_INSTALLED;
	free(p->kernel.spec);
	p->kernel.spec = xstrdup(release);
}

enum status
run_plan_again(const char *run_dir, const char *config, const char *test, struct plan *out)
{
	char *path = path_join(run_dir, "plan.json");
	struct run_record rec;
	enum status rc = plan_load(path, out);

	free(path);
	if (rc != OK)
		return rc;
	plan_one_test(out, config, test);
	run_record_init(&rec);
	path = path_join(run_dir, "run.json");
	if (path_exists(path) && run_record_load(path, &rec) == OK)
		pin_kernel(out, rec.kernel);
	error_clear();
	run_record_release(&rec);
	free(path);
	return OK;
}

static const char *
fswb_cmd(void *data, const char *config, const char *test)
{
	struct report_ctx *c = data;
	struct strbuf sb = STRBUF_INIT;
	struct plan p;

	plan_init(&p);
	if (c->have_plan) {
		p.kernel.kind = c->plan.kernel.kind;
		p.kernel.spec = c->plan.kernel.spec ? xstrdup(c->plan.kernel.spec) : NULL;
		p.kernel.own_config = c->plan.kernel.own_config;
		strvec_copy(&p.kernel.debug, &c->plan.kernel.debug);
		if (c->plan.fstests_src)
			p.fstests_src = xstrdup(c->plan.fstests_src);
	}
	pin_kernel(&p, c->kernel_release);
	if (c->have_plan && plan_settings_set(&c->plan))
		p.tests.settings_from = xstrdup(plan_settings_set(&c->plan));
	if (*config)
		strvec_push(&p.configs, config);
	strvec_push(&p.tests.tests, test);
	plan_defaults(&p);
	plan_cmdline(&p, &sb);
	plan_release(&p);
	free(c->cmd);
	c->cmd = strbuf_detach(&sb);
	return c->cmd;
}

enum status
run_words_load(const char *dir, struct run_words *w)
{
	char *plan_path, *json = path_join(dir, "run.json");
	enum status rc;

	memset(w, 0, sizeof(*w));
	rc = run_record_load(json, &w->rec);
	free(json);
	if (rc != OK)
		return rc;
	if (!w->rec.id) { /* an imported record kept as a run: its directory's name */
		const char *slash = strrchr(dir, '/');

		w->rec.id = xstrdup(slash ? slash + 1 : dir);
	}
	w->dir = xstrdup(dir);
	plan_path = path_join(w->dir, "plan.json");
	w->ctx.have_plan = plan_load(plan_path, &w->ctx.plan) == OK;
	error_clear();
	free(plan_path);
	w->ctx.kernel_release = w->rec.kernel;
	if (w->ctx.have_plan)
		w->kernel = kernel_words(&w->ctx.plan);
	w->fstests = fstests_words(&w->ctx, w->dir);
	w->in.rec = &w->rec;
	w->in.run_dir = w->dir;
	w->in.kernel = w->kernel;
	w->in.fstests = w->fstests;
	w->in.fswb_cmd = fswb_cmd;
	w->in.data = &w->ctx;
	flaky_init(&w->flaky);
	flaky_scan_history(&w->flaky, &w->rec, FLAKY_RUNS_DEFAULT);
	w->in.flaky = &w->flaky;
	return OK;
}

void
run_words_release(struct run_words *w)
{
	if (w->ctx.have_plan)
		plan_release(&w->ctx.plan);
	free(w->ctx.cmd);
	free(w->kernel);
	free(w->fstests);
	free(w->dir);
	flaky_release(&w->flaky);
	run_record_release(&w->rec);
}
