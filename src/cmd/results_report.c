/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `fswb results report RUN [TEST]`: a run's failures as plain text for a
 * mailing list (fstests/report.h builds it), and `fswb results html RUN`:
 * the run as a page (fstests/html.h); this file finds what the record
 * does not hold: how the kernel was got, which fstests, and the
 * fswb command that reruns a test (from the run's plan.json).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "core/paths.h"
#include "core/plan.h"
#include "fstests/baseline.h"
#include "fstests/history.h"
#include "fstests/html.h"
#include "fstests/report.h"
#include "rootfs/appliance.h"
#include "ui/planutil.h"

struct report_ctx {
	struct plan plan;
	bool have_plan;
	const char *kernel_release;
	char *cmd;
};

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
	/* pin the kernel the run had when it took the default one */
	if (p.kernel.kind == KERNEL_AUTO && c->kernel_release) {
		p.kernel.kind = KERNEL_INSTALLED;
		free(p.kernel.spec);
		p.kernel.spec = xstrdup(c->kernel_release);
	}
	if (*config)
		strvec_push(&p.configs, config);
	strvec_push(&p.tests.tests, test);
	plan_defaults(&p);
	free(p.tests.preset);
	p.tests.preset = NULL;
	plan_cmdline(&p, &sb);
	plan_release(&p);
	free(c->cmd);
	c->cmd = strbuf_detach(&sb);
	return c->cmd;
}

/* What report and html share: the run, its directory, and the words about it. */
struct run_words {
	struct report_ctx ctx;
	struct report_input in;
	struct run_record rec;
	char *id, *dir, *kernel, *fstests;
};

static void
run_words_load(const char *cmd, const char *spec, struct run_words *w)
{
	char *plan_path;

	memset(w, 0, sizeof(*w));
	if (history_resolve(spec, &w->id) != OK || history_load(w->id, &w->rec) != OK)
		die("fswb results %s: %s", cmd, error_msg());
	if (!w->rec.id) /* an imported record kept as a run */
		w->rec.id = xstrdup(w->id);
	w->dir = history_run_dir(w->id);
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
}

static void
run_words_release(struct run_words *w)
{
	if (w->ctx.have_plan)
		plan_release(&w->ctx.plan);
	free(w->ctx.cmd);
	free(w->kernel);
	free(w->fstests);
	free(w->dir);
	free(w->id);
	run_record_release(&w->rec);
}

/* Write text to output (a message says so), or print it. */
static int
emit(const char *cmd, const char *what, const struct run_words *w, const struct strbuf *sb,
     const char *output)
{
	if (!output) {
		fwrite(sb->buf, 1, sb->len, stdout);
		return 0;
	}
	if (write_file_atomic(output, sb->buf, sb->len, 0644) != OK)
		return cmd_fail(cmd);
	printf("Wrote %s of run %s to %s\n", what, w->id, output);
	return 0;
}

static const char report_usage[] =
	"usage: fswb results report RUN [TEST] [-o FILE]\n"
	"A run's failures (or one test) as plain text for a mailing list: the kernel\n"
	"and fstests, the configuration with its mkfs and mount options, each\n"
	"failure's diff and first kernel warning, and the commands that reproduce\n"
	"it with fswb and with check. RUN: an id, last, last~N.\n";

static const char html_usage[] =
	"usage: fswb results html RUN -o FILE\n"
	"The run as one self-contained HTML page (no network, no scripts): summary,\n"
	"each configuration's tests with status and time, a chart of the longest\n"
	"tests, what changed against the baseline, and each failure's diff, .full\n"
	"and kernel log (folded), with the commands that reproduce it.\n";

/* report and html: RUN [TEST] -o FILE. */
static int
report_or_html(const char *cmd, const char *usage, bool html, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct strbuf sb = STRBUF_INIT;
	const char *output = NULL;
	struct regressions reg;
	struct run_words w;
	int ch, code = 0, max_args = html ? 1 : 2;

	opterr = 0;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (ch) {
		case 'o':
			output = optarg;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			cmd_bad_option(cmd, argv[optind - 1], opts);
		}
	}
	if (argc - optind < 1 || argc - optind > max_args || (html && !output)) {
		fputs(usage, stderr);
		return 2;
	}
	run_words_load(html ? "html" : "report", argv[optind], &w);
	if (html) {
		if (regressions_find(&w.rec, &reg) != OK)
			fprintf(stderr, "fswb: warning: %s\n", error_msg());
		w.in.reg = &reg;
		run_html(&w.in, &sb);
		regressions_release(&reg);
		code = emit(cmd, "the page", &w, &sb, output);
	} else {
		w.in.test = argc - optind == 2 ? argv[optind + 1] : NULL;
		code = report_text(&w.in, &sb) == OK ? emit(cmd, "the report", &w, &sb, output)
						     : cmd_fail(cmd);
	}
	strbuf_release(&sb);
	run_words_release(&w);
	return code;
}

int
cmd_results_report(int argc, char **argv)
{
	return report_or_html("results report", report_usage, false, argc, argv);
}

int
cmd_results_html(int argc, char **argv)
{
	return report_or_html("results html", html_usage, true, argc, argv);
}
