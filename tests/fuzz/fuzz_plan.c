/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The plan reader (fswb run --plan FILE) on anything: what it takes, with
 * the defaults filled in as fswb does, is written back as JSON and must read
 * again to the same text.
 *
 * fuzz-sources: src/core/plan.c src/core/profile.c src/fstests/catalogue.c src/core/paths.c src/core/util.c src/core/status.c src/core/jread.c
 * fuzz-seeds: tests/fuzz/seeds/plan.json
 * fuzz-options: -max_len=20000
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/plan.h"
#include "core/status.h"
#include "core/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = xstrndup((const char *)data, size);
	struct plan p, back;

	plan_init(&p);
	plan_init(&back);
	if (plan_from_json(text, "fuzz.json", &p) == OK) {
		char *json, *again;

		plan_defaults(&p); /* as fswb does before it writes a plan */
		json = plan_to_json(&p);

		if (plan_from_json(json, "again.json", &back) != OK)
			abort();
		again = plan_to_json(&back);
		if (strcmp(json, again))
			abort();
		free(again);
		free(json);
	}
	plan_release(&p);
	plan_release(&back);
	free(text);
	error_clear();
	return 0;
}
