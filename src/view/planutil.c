/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "view/planutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void
add_arg(struct strbuf *out, const char *arg)
{
	strbuf_addch(out, ' ');
	sq_quote(out, arg);
}

static void
add_opt(struct strbuf *out, const char *opt, const char *value)
{
	add_arg(out, opt);
	add_arg(out, value);
}

static void
add_list(struct strbuf *out, const char *opt, const struct strvec *sv)
{
	char *joined;

	if (!sv->n)
		return;
	joined = strvec_join(sv, ",");
	add_opt(out, opt, joined);
	free(joined);
}

void
plan_cmdline(const struct plan *plan, struct strbuf *out)
{
	struct plan def;
	char buf[64];

	plan_init(&def);
	plan_defaults(&def);
	strbuf_adds(out, "fswb run");
	if (plan->configs.n && !(plan->configs.n == 1 && def.configs.n == 1 &&
				 !strcmp(plan->configs.v[0], def.configs.v[0])))
		add_list(out, "-c", &plan->configs);
	if (plan->tests.preset &&
	    (!def.tests.preset || strcmp(plan->tests.preset, def.tests.preset) ||
	     plan->tests.groups.n || plan->tests.tests.n))
		add_opt(out, "--preset", plan->tests.preset);
	if (plan->tests.settings_from)
		add_opt(out, "--settings-from", plan->tests.settings_from);
	add_list(out, "-g", &plan->tests.groups);
	add_list(out, "-x", &plan->tests.xgroups);
	add_list(out, "-e", &plan->tests.exclude);
	for (size_t i = 0; i < plan->tests.exclude_files.n; i++)
		add_opt(out, "-E", plan->tests.exclude_files.v[i]);
	if (plan->kernel.kind != KERNEL_AUTO && plan->kernel.spec)
		add_opt(out, "--kernel", plan->kernel.spec);
	if (plan->kernel.modules)
		add_opt(out, "--modules", plan->kernel.modules);
	if (plan->kernel.own_config)
		add_arg(out, "--own-config");
	add_list(out, "--debug", &plan->kernel.debug);
	if (plan->kernel.arch && strcmp(plan->kernel.arch, "x86_64"))
		add_opt(out, "--arch", plan->kernel.arch);
	if (plan->backend && (!def.backend || strcmp(plan->backend, def.backend)))
		add_opt(out, "--backend", plan->backend);
	for (size_t i = 0; i < plan->backend_opts.n; i++)
		add_opt(out, "-o", plan->backend_opts.v[i]);
	if (plan->fstests_src)
		add_opt(out, "--fstests-src", plan->fstests_src);
	if (plan->cpus && plan->cpus != def.cpus) {
		snprintf(buf, sizeof(buf), "%u", plan->cpus);
		add_opt(out, "--cpus", buf);
	}
	if (plan->mem && plan->mem != def.mem) {
		if (plan->mem % (1ull << 30) == 0)
			snprintf(buf, sizeof(buf), "%lluG", (unsigned long long)(plan->mem >> 30));
		else if (plan->mem % (1ull << 20) == 0)
			snprintf(buf, sizeof(buf), "%lluM", (unsigned long long)(plan->mem >> 20));
		else
			snprintf(buf, sizeof(buf), "%llu", (unsigned long long)plan->mem);
		add_opt(out, "--mem", buf);
	}
	if (plan->shards) {
		snprintf(buf, sizeof(buf), "%u", plan->shards);
		add_opt(out, "--shards", buf);
	}
	if (plan->test_timeout) {
		snprintf(buf, sizeof(buf), "%u", plan->test_timeout);
		add_opt(out, "--test-timeout", buf);
	}
	if (plan->rerun_failures) {
		snprintf(buf, sizeof(buf), "%u", plan->rerun_failures);
		add_opt(out, "--rerun-failures", buf);
	}
	if (plan->stop_on_crash)
		add_arg(out, "--stop-on-crash");
	for (size_t i = 0; i < plan->tests.tests.n; i++)
		add_arg(out, plan->tests.tests.v[i]);
	plan_release(&def);
}
