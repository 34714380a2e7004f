/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * check's result.xml reader, on anything; what it reads is written back as
 * run.json and junit.xml and read again, so the writers meet odd strings.
 *
 * fuzz-sources: src/fstests/results.c src/fstests/run_json.c src/fstests/junit.c src/fstests/xunit.c src/fstests/catalogue.c src/fstests/check_parser.c src/core/event.c src/core/util.c src/core/status.c src/core/paths.c src/core/jread.c
 * fuzz-seeds: fixtures:results/result.xml fixtures:results/result.xml.new
 * fuzz-options: -max_len=200000
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "fstests/results.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct run_record rec, back;
	struct xunit_info info = { 0 };
	struct strbuf junit = STRBUF_INIT;

	run_record_init(&rec);
	if (results_read_xunit((const char *)data, size, "fuzz.xml", &rec, &info) == OK) {
		char *json;

		run_record_recount(&rec);
		json = run_record_to_json(&rec);
		run_record_init(&back);
		if (json && run_record_from_json(json, "fuzz.json", &back) == OK)
			run_record_release(&back);
		free(json);
		results_junit(&rec, &junit);
		run_record_init(&back);
		if (results_read_xunit(junit.buf, junit.len, "junit.xml", &back, NULL) == OK)
			run_record_release(&back);
	}
	run_record_release(&rec);
	xunit_info_release(&info);
	strbuf_release(&junit);
	error_clear();
	return 0;
}
