/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * check.time's reader, on anything; every test it read can be looked up.
 *
 * fuzz-sources: src/fstests/results.c src/fstests/check_log.c src/fstests/catalogue.c src/fstests/check_parser.c src/core/event.c src/core/util.c src/core/status.c src/core/paths.c src/core/jread.c
 * fuzz-seeds: fixtures:results/check.time
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "fstests/results.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct check_time ct = { 0 };

	check_time_parse((const char *)data, size, &ct);
	for (size_t i = 0; i < ct.tests.n; i++) {
		if (check_time_get(&ct, ct.tests.v[i]) < 0 && ct.seconds[i] >= 0) {
			fprintf(stderr, "check_time: '%s' read but not found\n", ct.tests.v[i]);
			abort();
		}
	}
	check_time_release(&ct);
	return 0;
}
