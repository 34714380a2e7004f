/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What a front end asks before a run: see inventory.h.
 */
#include "run/inventory.h"

#include <stdlib.h>
#include <string.h>

#include "core/paths.h"
#include "core/rundir.h"
#include "fstests/results.h"

#define HISTORY_RUNS 5

void
inventory_host(struct loop *loop, const struct profiles *prof, bool full, struct hostcheck *out)
{
	struct hostcheck_opts o = HOSTCHECK_OPTS_INIT;

	o.run_programs = full;
	o.profiles = prof;
	memset(out, 0, sizeof(*out));
	if (hostcheck_run(loop, &o, out) != OK)
		error_clear();
}

void
inventory_probe(const char *backend, const struct plan *plan, struct backend_probe *out)
{
	const struct backend_ops *ops = backend_find(backend);

	memset(out, 0, sizeof(*out));
	if (!ops || backend_probe(ops, plan, out) != OK) {
		error_clear();
		backend_probe_release(out);
		out->summary = xstrdup("cannot tell");
	}
}

enum status
inventory_kernels(struct loop *loop, const struct plan *plan, const struct profiles *prof,
		  struct kernel_list *out)
{
	struct kernel_needs needs;
	enum status rc;

	memset(out, 0, sizeof(*out));
	rc = kernel_list(loop, plan->kernel.arch ? plan->kernel.arch : "x86_64", out);
	if (rc != OK)
		return rc;
	if (!prof || kernel_needs_init(&needs, prof, &plan->configs, &plan->kernel.debug) != OK) {
		error_clear();
		return OK;
	}
	for (size_t i = 0; i < out->n; i++)
		if (kernel_check(loop, &out->v[i], &needs) != OK)
			error_clear();
	kernel_needs_release(&needs);
	return OK;
}

enum status
inventory_catalogue(const struct plan *plan, struct catalogue *out)
{
	const char *src = plan->fstests_src;

	if (!src || !path_is_dir(src))
		return error(
			ERR_UNSUPPORTED, "%s",
			src ? "the fstests source is a URL: its groups are known once the "
			      "appliance is built"
			    : "fswb builds upstream fstests into the appliance: pick a group "
			      "or a test by name after pointing at a local fstests tree with f");
	return catalogue_load(src, out);
}

void
inventory_history(const struct plan *plan, double *per_test, size_t *runs)
{
	char *root = rundir_root();
	struct strvec ids = STRVEC_INIT;
	double secs = 0;
	size_t tests = 0;

	*per_test = 0;
	*runs = 0;
	rundir_list(root, &ids);
	for (size_t i = ids.n; i-- > 0 && *runs < HISTORY_RUNS;) {
		char *dir = path_join(root, ids.v[i]), *json = path_join(dir, "run.json");
		struct run_record rec;

		run_record_init(&rec);
		if (path_exists(json) && run_record_load(json, &rec) == OK && rec.finished &&
		    !rec.interrupted && rec.end_ms > rec.start_ms && rec.counts.ran &&
		    rec.nsections == plan->configs.n) {
			size_t n = 0;

			for (size_t s = 0; s < rec.nsections; s++)
				n += rec.sections[s].ntests;
			if (n) {
				secs += (double)(rec.end_ms - rec.start_ms) / 1000.0;
				tests += n;
				(*runs)++;
			}
		}
		error_clear();
		run_record_release(&rec);
		free(dir);
		free(json);
	}
	if (tests)
		*per_test = secs / (double)tests;
	strvec_clear(&ids);
	free(root);
}
