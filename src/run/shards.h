/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * How many guests a run has at once (its shards), and why, in words.
 *
 * A run is one queue of (configuration, test) items; each shard is a
 * session of the plan's backend with plan->cpus CPUs and plan->mem memory
 * that takes the next batch when it is free (DESIGN.md, Sharding).
 *
 * shards_choose() decides:
 *	given	plan->shards >= 1: that many, but 1 when the backend runs one
 *		machine at a time (no BACKEND_PARALLEL)
 *	auto	plan->shards 0: for a backend whose guests run on this host
 *		("qemu", "stdio"), as many as the host holds:
 *		min((cores - SHARDS_HOST_CORES) / plan->cpus,
 *		    (memory - SHARDS_HOST_KEEP) / plan->mem),
 *		at least 1. A backend that names its machines (ops->machines:
 *		ssh's host=a,b,c) runs one session on each, given or auto, never
 *		more. Other backends' machines are elsewhere (a remote
 *		host, the cloud, a device), whose size fswb does not know: 1,
 *		and why says to give --shards N.
 * Either way never more than units (the tests to run, or the
 * configurations when the tests are not known yet; 0: unknown, no cap),
 * and never more than PLAN_SHARDS_MAX.
 *
 *	struct host_size host;
 *	host_size_read(&host);                 once; tests pass their own
 *	n = shards_choose(plan, backend_find(plan->backend), &host, ntests, &why);
 */
#ifndef FSWB_RUN_SHARDS_H
#define FSWB_RUN_SHARDS_H

#include <stddef.h>
#include <stdint.h>

#include "backends/backend.h"
#include "core/plan.h"
#include "core/status.h"
#include "core/util.h"

/* Memory and cores auto leaves to the host itself (its own processes, QEMU's threads). */
#define SHARDS_HOST_KEEP  (UINT64_C(1) << 30)
#define SHARDS_HOST_CORES 1

/* What this host has for guests. */
struct host_size {
	unsigned cores; /* online CPUs */
	uint64_t mem;	/* physical memory, bytes */
};

/* This host's online CPUs and physical memory (sysconf); 1 core, 0 bytes when unknown. */
void host_size_read(struct host_size *out);

/*
 * Whether one guest of plan fits on host, for a backend whose guests run
 * here ("qemu", "stdio"; ops NULL or another backend: OK, its machines are
 * elsewhere): plan->cpus at most host->cores, plan->mem at most host->mem
 * less SHARDS_HOST_KEEP (not checked when host->mem is 0, unknown).
 * ERR_INVALID naming the field, the host's numbers and the range to give:
 * "mem: 100 TiB per guest is more than this host can give: it has 24 GiB
 * and keeps 1 GiB for itself; give 256 MiB to 23 GiB".
 */
enum status shards_guest_fits(const struct plan *plan, const struct backend_ops *ops,
			      const struct host_size *host);

/*
 * The number of guests at once for plan (1 to PLAN_SHARDS_MAX), as above.
 * ops: the plan's backend (NULL: treated as one machine at a time). why
 * (may be NULL) gets one line for a newcomer, appended: "2 guests at once:
 * 4 cores / 2 CPUs per guest = 2, (24 GiB - 1 GiB for this host) / 2 GiB
 * per guest = 11", "1 guest: this host has 2 cores and each guest takes 2
 * (--cpus 1 --shards 2 runs 2 at once)".
 */
unsigned shards_choose(const struct plan *plan, const struct backend_ops *ops,
		       const struct host_size *host, size_t units, struct strbuf *why);

#endif
