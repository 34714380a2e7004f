/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What every benchmark program measures with: a monotonic clock in seconds
 * and the peak RSS so far.
 */
#ifndef FSWB_BENCH_BENCH_H
#define FSWB_BENCH_BENCH_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static inline double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The peak RSS so far in KiB: VmHWM, or ru_maxrss when /proc is not there. */
static inline long
peak_kib(long *maxrss)
{
	struct rusage ru;
	char line[256];
	long hwm = -1;
	FILE *f;

	getrusage(RUSAGE_SELF, &ru);
	*maxrss = ru.ru_maxrss;
	f = fopen("/proc/self/status", "r");
	if (f) {
		while (fgets(line, sizeof(line), f))
			if (!strncmp(line, "VmHWM:", 6))
				hwm = strtol(line + 6, NULL, 10);
		fclose(f);
	}
	return hwm >= 0 ? hwm : *maxrss;
}

#endif
