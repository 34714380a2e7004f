/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The catalogue's readers: the input, cut at lines of "%%", becomes a
 * scratch fstests tree's tests/generic/group.list, tests/generic/001,
 * doc/group-names.txt and an -E exclude file; the tree is loaded and a
 * selection made from it.
 *
 * fuzz-sources: src/fstests/catalogue.c src/core/paths.c src/core/util.c src/core/status.c
 * fuzz-seeds: tests/fuzz/seeds/catalogue-tree.txt
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/paths.h"
#include "core/util.h"
#include "fstests/catalogue.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *root;

static void
remove_root(void)
{
	if (root)
		remove_tree(root);
}

/* A plain write: write_file_atomic()'s fsyncs would slow every run down. */
static void
put(const char *rel, const char *text, size_t len)
{
	char *p = path_join(root, rel);
	FILE *f = fopen(p, "w");

	if (!f || fwrite(text, 1, len, f) != len || fclose(f)) {
		fprintf(stderr, "catalogue: cannot write '%s'\n", p);
		abort();
	}
	free(p);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const files[] = { "tests/generic/group.list", "tests/generic/001",
					     "doc/group-names.txt", "exclude" };
	const char *s = (const char *)data, *end = s + size;
	struct catalogue cat;
	char *exclude;

	if (!root) {
		char tmpl[] = "/tmp/fswb-fuzz-catalogue.XXXXXX";
		char *dirs[2];

		if (!mkdtemp(tmpl))
			abort();
		root = xstrdup(tmpl);
		atexit(remove_root);
		dirs[0] = path_join(root, "tests/generic");
		dirs[1] = path_join(root, "doc");
		if (mkdir_p(dirs[0], 0755) != OK || mkdir_p(dirs[1], 0755) != OK)
			abort();
		free(dirs[0]);
		free(dirs[1]);
	}
	for (size_t f = 0; f < 4; f++) {
		const char *cut = s < end ? memmem(s, (size_t)(end - s), "\n%%\n", 4) : NULL;
		size_t n = cut ? (size_t)(cut - s) : (size_t)(end - s);

		put(files[f], s, n);
		s = cut ? cut + 4 : end;
	}
	exclude = path_join(root, "exclude");
	if (catalogue_load(root, &cat) == OK) {
		struct strvec tests = STRVEC_INIT, groups = STRVEC_INIT, ex = STRVEC_INIT;
		struct strvec files_e = STRVEC_INIT, entries = STRVEC_INIT;
		struct catalogue_query q = { "ext4", &tests, &groups, NULL, &ex, &files_e };
		struct catalogue_selection sel;

		strvec_push(&tests, "generic/0*");
		strvec_push(&groups, cat.ngroups ? cat.groups[0].name : "auto");
		strvec_push(&ex, "generic/001");
		strvec_push(&files_e, exclude);
		catalogue_select(&cat, &q, &sel);
		catalogue_selection_release(&sel);
		for (size_t i = 0; i < cat.ntests; i++)
			if (!catalogue_find(&cat, cat.tests[i].name))
				abort();
		if (catalogue_read_exclude_file(exclude, &entries) == OK)
			for (size_t i = 0; i < entries.n; i++)
				catalogue_entry_excludes(entries.v[i], "generic/001");
		strvec_clear(&tests);
		strvec_clear(&groups);
		strvec_clear(&ex);
		strvec_clear(&files_e);
		strvec_clear(&entries);
		catalogue_release(&cat);
	}
	free(exclude);
	error_clear();
	return 0;
}
