/* SPDX-License-Identifier: GPL-2.0-or-later */
/* How many guests a run has at once, and why (shards.h). */
#include "run/shards.h"

#include <string.h>
#include <unistd.h>

void
host_size_read(struct host_size *out)
{
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);

	out->cores = cores > 0 ? (unsigned)cores : 1;
	out->mem = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
}

/* Guests on this host: the backends whose sessions run here. */
static bool
local_backend(const struct backend_ops *ops, const struct plan *plan)
{
	if (ops->here)
		return ops->here(plan);
	return !strcmp(ops->name, "qemu") || !strcmp(ops->name, "stdio");
}

/* n capped by units (0: no cap) and PLAN_SHARDS_MAX; what capped it goes to why. */
static unsigned
cap(unsigned n, size_t units, struct strbuf *why)
{
	if (units && n > units) {
		n = (unsigned)units;
		strbuf_addf(why, "; only %zu to run", units);
	}
	if (n > PLAN_SHARDS_MAX) {
		n = PLAN_SHARDS_MAX;
		strbuf_addf(why, "; fswb runs at most %d", PLAN_SHARDS_MAX);
	}
	return n;
}

static void
head(struct strbuf *why, unsigned n)
{
	if (n == 1)
		strbuf_adds(why, "1 guest");
	else
		strbuf_addf(why, "%u guests at once", n);
}

/* Auto on this host: as many as its cores and its memory hold. */
static unsigned
by_host(const struct plan *plan, const struct host_size *host, size_t units, struct strbuf *why)
{
	unsigned cpus = plan->cpus ? plan->cpus : 1, cores = host->cores ? host->cores : 1;
	/* QEMU's own threads and fswb need a core beside the guests' CPUs */
	unsigned usable = cores > SHARDS_HOST_CORES ? cores - SHARDS_HOST_CORES : 1;
	uint64_t mem = plan->mem ? plan->mem : 1;
	uint64_t avail = host->mem > SHARDS_HOST_KEEP ? host->mem - SHARDS_HOST_KEEP : 0;
	uint64_t by_cpu = usable / cpus, by_mem = avail / mem;
	uint64_t fit = by_mem < by_cpu ? by_mem : by_cpu;
	struct strbuf tail = STRBUF_INIT;
	char has[32], keep[32], each[32];
	/* fit <= by_cpu <= cores */
	unsigned n = cap(fit ? (unsigned)fit : 1, units, &tail);

	format_size(host->mem, has, sizeof(has));
	format_size(SHARDS_HOST_KEEP, keep, sizeof(keep));
	format_size(mem, each, sizeof(each));
	head(why, n);
	if (fit > 1) {
		strbuf_addf(why,
			    ": (%u cores - %u for this host) / %u CPU%s per guest = %llu, (%s - %s "
			    "for this host) / %s per guest = %llu",
			    cores, SHARDS_HOST_CORES, cpus, cpus == 1 ? "" : "s",
			    (unsigned long long)by_cpu, has, keep, each,
			    (unsigned long long)by_mem);
	} else if (by_cpu <= by_mem) {
		strbuf_addf(why, ": this host has %u core%s", cores, cores == 1 ? "" : "s");
		if (cores > SHARDS_HOST_CORES)
			strbuf_addf(why, ", keeps %u for itself,", SHARDS_HOST_CORES);
		strbuf_addf(why, " and each guest takes %u", cpus);
		/* fewer CPUs each would run more */
		if (usable > 1 && by_mem > 1)
			strbuf_addf(why, " (--cpus 1 --shards %llu runs %llu at once)",
				    (unsigned long long)(by_mem < usable ? by_mem : usable),
				    (unsigned long long)(by_mem < usable ? by_mem : usable));
	} else {
		strbuf_addf(why, ": this host has %s, keeps %s for itself, and each guest takes %s",
			    has, keep, each);
	}
	strbuf_add(why, tail.buf, tail.len);
	strbuf_release(&tail);
	return n;
}

enum status
shards_guest_fits(const struct plan *plan, const struct backend_ops *ops,
		  const struct host_size *host)
{
	char each[32], has[32], keep[32], most[32], least[32];

	if (!ops || !local_backend(ops, plan))
		return OK;
	if (plan->cpus > host->cores && host->cores == 1)
		return error(ERR_INVALID,
			     "cpus: %u per guest is more than this host's 1 core; give 1",
			     plan->cpus);
	if (plan->cpus > host->cores)
		return error(ERR_INVALID,
			     "cpus: %u per guest is more than this host's %u cores; give 1 to %u",
			     plan->cpus, host->cores, host->cores);
	if (!host->mem || plan->mem + SHARDS_HOST_KEEP <= host->mem)
		return OK;
	format_size(plan->mem, each, sizeof(each));
	format_size(host->mem, has, sizeof(has));
	format_size(SHARDS_HOST_KEEP, keep, sizeof(keep));
	format_size(PLAN_MEM_MIN, least, sizeof(least));
	if (host->mem < PLAN_MEM_MIN + SHARDS_HOST_KEEP)
		return error(ERR_INVALID,
			     "mem: this host has %s and keeps %s for itself: too little for a "
			     "guest of %s or more; use a backend whose machines are elsewhere",
			     has, keep, least);
	format_size(host->mem - SHARDS_HOST_KEEP, most, sizeof(most));
	return error(ERR_INVALID,
		     "mem: %s per guest is more than this host can give: it has %s and keeps %s "
		     "for itself; give %s to %s",
		     each, has, keep, least, most);
}

unsigned
shards_choose(const struct plan *plan, const struct backend_ops *ops, const struct host_size *host,
	      size_t units, struct strbuf *why)
{
	const char *name = ops ? ops->name : plan->backend ? plan->backend : "chosen";
	struct strbuf sb = STRBUF_INIT, tail = STRBUF_INIT;
	/* the machines the plan names (ssh's hosts: a file may be read) */
	unsigned n, machines = ops && ops->machines ? ops->machines(plan) : 0;

	if (!ops || !(ops->caps & BACKEND_PARALLEL)) {
		n = 1;
		strbuf_addf(&sb, "1 guest: the %s backend runs one machine at a time", name);
	} else if (machines && (!plan->shards || plan->shards > machines)) {
		n = cap(machines, units, &tail);
		head(&sb, n);
		strbuf_addf(&sb, ": one on each of the %s backend's %u machine%s%s", name, machines,
			    machines == 1 ? "" : "s",
			    plan->shards ? " (name more machines for more at once)" : "");
		strbuf_add(&sb, tail.buf, tail.len);
	} else if (plan->shards) {
		n = cap(plan->shards, units, &tail);
		head(&sb, n);
		strbuf_addf(&sb, " (--shards %u%s)", plan->shards, tail.buf);
	} else if (!local_backend(ops, plan)) {
		n = 1;
		strbuf_addf(&sb,
			    "1 guest: the %s backend's machines are not on this host and fswb "
			    "does not know their size; give --shards N to run N at once",
			    name);
	} else {
		n = by_host(plan, host, units, &sb);
	}
	if (why)
		strbuf_add(why, sb.buf, sb.len);
	strbuf_release(&sb);
	strbuf_release(&tail);
	return n;
}
