/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The catalogue: every test of an fstests tree, its groups and its one-line
 * description, and the selection of tests the way check makes it.
 *
 * Reading a tree (built or not):
 *	tests/DIR/NAME	a test when NAME starts with three digits and has no
 *			'.' (001, 1234, 999-the-mark-of-fstests), as check's
 *			get_all_tests finds them
 *	groups		tests/DIR/group.list when it exists and is not empty
 *			(the built tree: "NAME group group..." lines, '#'
 *			comments); else the `_begin_fstest group...` line of
 *			the test itself, which is what group.list is made from
 *	description	the first line of the test's header comment that is
 *			not the "#!" line, the SPDX or copyright lines or the
 *			"FS QA Test No. NNN" line; "" when there is none
 *	doc/group-names.txt	the group descriptions (optional)
 *
 * Selection (catalogue_select), as check's argument handling and
 * _prepare_test_list do it:
 *	1. named tests and globs ("generic/001", "generic/00*", "*\/001";
 *	   '*' and '?' do not cross '/'), each resolved against the
 *	   catalogue; "generic/001" also finds a named test "generic/001-x".
 *	   A name that matches nothing goes to `unknown` (check prints
 *	   "unknown test, ignored").
 *	2. -g groups, added to them (union). With no test named and no group
 *	   given, the group is "auto". A group "DIR/GROUP" (xfs/quick) takes
 *	   only that directory; any other group takes the directories check
 *	   uses for FSTYP: generic and the filesystem's own (ext4 for ext2 and
 *	   ext3). The group "all" is every test in generic and tests/FSTYP.
 *	   A group with no test in those directories is ERR_NOTFOUND.
 *	3. -x groups removed from the whole list, named tests included; an
 *	   -x group with no test is only a warning.
 *	4. sorted bytewise by name (check's `sort -n | uniq` under LC_ALL=C
 *	   compares the whole "tests/DIR/NAME" line), duplicates dropped.
 *	5. -e tests (split at commas and spaces) and -E files: the tests still listed (check prints a line
 *	   for each, "[expunged]") but also put in `expunged`. An entry
 *	   excludes a test when it starts with the test's name followed by the
 *	   end, white space or any character that is not a letter, digit or
 *	   '_' (check's `^NAME\b` match).
 *
 * Contract: catalogue_load() fills *out (release with catalogue_release());
 * on failure nothing is left allocated. catalogue_select() reads only.
 */
#ifndef FSWB_FSTESTS_CATALOGUE_H
#define FSWB_FSTESTS_CATALOGUE_H

#include <stdbool.h>
#include <stddef.h>

#include "core/status.h"
#include "core/util.h"

struct catalogue_test {
	char *name;	      /* "generic/001" */
	char *dir;	      /* "generic" */
	struct strvec groups; /* in the order the test lists them */
	char *description;    /* "" when there is none */
};

struct catalogue_group {
	char *name;
	char *description; /* from doc/group-names.txt, "" when not there */
	size_t ntests;	   /* tests in the group, across all directories */
};

struct catalogue {
	char *root;		      /* the fstests tree */
	struct catalogue_test *tests; /* sorted by name, bytewise */
	size_t ntests;
	struct catalogue_group *groups; /* every group named by a test or the doc, sorted */
	size_t ngroups;
	struct strvec dirs; /* the test directories, sorted ("btrfs", "ext4", ...) */
	size_t built_dirs;  /* how many of them had a group.list */
};

/*
 * Read the tree at fstests_dir. ERR_NOTFOUND when it has no tests/
 * directory (the message says what was expected), ERR_IO when a file
 * cannot be read.
 */
enum status catalogue_load(const char *fstests_dir, struct catalogue *out);
void catalogue_release(struct catalogue *cat);

/* By exact name; NULL when there is none. */
const struct catalogue_test *catalogue_find(const struct catalogue *cat, const char *name);
const struct catalogue_group *catalogue_group(const struct catalogue *cat, const char *name);
bool catalogue_test_in_group(const struct catalogue_test *t, const char *group);

/*
 * The test directories check uses for fstyp: generic and the filesystem's
 * own, those of them that exist. for_groups: the ones -g searches (ext2 and
 * ext3 use ext4's); else the ones "-g all" takes.
 */
void catalogue_fs_dirs(const struct catalogue *cat, const char *fstyp, bool for_groups,
		       struct strvec *out);

/*
 * Whether a named test ("xfs/001", "generic/00*") is for fstyp, by its
 * directory: generic, shared, selftest and perf hold tests for every
 * filesystem; any other directory is a filesystem's own (ext4's also
 * serves ext2 and ext3, as check's -g does). A glob in the directory
 * ("*\/001") fits when it matches one of those directories. check runs a
 * named test whatever FSTYP is, and another filesystem's test fails there.
 */
bool catalogue_name_fits(const char *name, const char *fstyp);

/*
 * Whether name, from a test machine or an imported result, is a test name
 * fswb takes, so that it can name files below a results directory:
 * "DIR/TEST" ("generic/001", "ext4/054", "xfs/1024"), each part 1 to 64
 * characters of A-Z a-z 0-9 '.' '_' '-', not starting with '.' or '-'.
 */
bool catalogue_test_name_ok(const char *name);

struct catalogue_query {
	const char *fstyp;	     /* required: "ext4" */
	const struct strvec *tests;  /* named tests and globs; may be NULL */
	const struct strvec *groups; /* -g; may be NULL */
	const struct strvec *xgroups;
	const struct strvec *exclude;	    /* -e entries */
	const struct strvec *exclude_files; /* -E files */
};

struct catalogue_selection {
	struct strvec tests;	/* what check runs, in its order (expunged ones too) */
	struct strvec expunged; /* of those, the ones it prints as [expunged] */
	struct strvec unknown;	/* named tests it ignores */
	struct strvec warnings; /* human words: an empty -x group */
};

/*
 * Resolve a query into *out (initialised here; release with
 * catalogue_selection_release(), also after a failure). ERR_NOTFOUND for a
 * -g group with no tests (with the closest group suggested), ERR_IO or
 * ERR_PARSE for an -E file that cannot be read.
 */
enum status catalogue_select(const struct catalogue *cat, const struct catalogue_query *q,
			     struct catalogue_selection *out);
void catalogue_selection_release(struct catalogue_selection *sel);

/*
 * An -E file's entries, appended to entries: one per line, everything from
 * '#' on dropped and trailing white space trimmed, blank lines skipped.
 * Leading white space is kept, as check keeps it (such an entry excludes
 * nothing). ERR_IO naming the file when it cannot be read.
 */
enum status catalogue_read_exclude_file(const char *path, struct strvec *entries);
/* Whether an exclusion entry excludes test (see 5. above). */
bool catalogue_entry_excludes(const char *entry, const char *test);

#endif
