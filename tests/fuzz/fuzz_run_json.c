/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The run.json reader (fswb results, the TUI's history) on anything: what
 * it takes is written back and must read again.
 *
 * fuzz-sources: src/fstests/results.c src/fstests/run_json.c src/fstests/junit.c src/fstests/catalogue.c src/fstests/check_parser.c src/core/event.c src/core/util.c src/core/status.c src/core/paths.c src/core/jread.c
 * fuzz-seeds: tests/fuzz/seeds/run.json
 * fuzz-options: -max_len=100000
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "core/util.h"
#include "fstests/results.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = xstrndup((const char *)data, size);
	struct run_record rec, back;
	struct strbuf junit = STRBUF_INIT;

	run_record_init(&rec);
	if (run_record_from_json(text, "fuzz.json", &rec) == OK) {
		char *json;

		run_record_recount(&rec);
		json = run_record_to_json(&rec);
		run_record_init(&back);
		if (run_record_from_json(json, "again.json", &back) != OK)
			abort();
		run_record_release(&back);
		results_junit(&rec, &junit);
		free(json);
	}
	run_record_release(&rec);
	strbuf_release(&junit);
	free(text);
	error_clear();
	return 0;
}
