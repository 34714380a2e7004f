/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The not-run explainer, on any reason text: each line alone, then all of
 * them grouped.
 *
 * fuzz-sources: src/fstests/notrun.c src/core/paths.c src/core/util.c src/core/status.c
 * fuzz-seeds: fixtures:results/generic
 * fuzz-options: -max_len=4096
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "fstests/notrun.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = xstrndup((const char *)data, size);
	struct strvec lines = STRVEC_INIT, tests = STRVEC_INIT;
	struct notrun_groups groups;
	size_t total = 0;

	strvec_split(&lines, text, "\n");
	for (size_t i = 0; i < lines.n; i++) {
		struct notrun_explanation e;

		notrun_explain(lines.v[i], NULL, &e);
		if (!e.cause) {
			fprintf(stderr, "notrun: no cause for '%s'\n", lines.v[i]);
			abort();
		}
		notrun_explanation_release(&e);
		strvec_pushf(&tests, "generic/%03zu", i);
	}
	notrun_group((const char *const *)tests.v, (const char *const *)lines.v, lines.n, NULL,
		     &groups);
	for (size_t i = 0; i < groups.n; i++)
		total += groups.groups[i].tests.n;
	if (total != lines.n) {
		fprintf(stderr, "notrun: %zu tests grouped, %zu given\n", total, lines.n);
		abort();
	}
	notrun_groups_release(&groups);
	strvec_clear(&lines);
	strvec_clear(&tests);
	free(text);
	return 0;
}
