/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * check.log's reader, on anything.
 *
 * fuzz-sources: src/fstests/results.c src/fstests/check_log.c src/fstests/catalogue.c src/fstests/check_parser.c src/core/event.c src/core/util.c src/core/status.c src/core/paths.c src/core/jread.c
 * fuzz-seeds: fixtures:results/check.log
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fstests/results.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct check_log log = { 0 };

	check_log_parse((const char *)data, size, &log);
	for (size_t i = 0; i < log.n; i++) {
		const struct check_log_block *b = &log.blocks[i];
		const struct strvec *lists[] = { &b->ran, &b->notrun, &b->failures };

		/* every list holds words: no empty or blank entries */
		for (size_t l = 0; l < 3; l++) {
			for (size_t j = 0; j < lists[l]->n; j++) {
				const char *w = lists[l]->v[j];

				if (!*w || strpbrk(w, " \t\n")) {
					fprintf(stderr, "check_log: list entry '%s'\n", w);
					abort();
				}
			}
		}
	}
	check_log_release(&log);
	return 0;
}
