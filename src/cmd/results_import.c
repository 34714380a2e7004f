/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `fswb results import PATH [--keep] [--json]`: results fstests wrote
 * elsewhere (check's results directory, with sections or not; a saved copy
 * of its stdout; xfstests-bld's results from kvm-xfstests or gce-xfstests;
 * a tarball of any of those), printed, and with --keep kept in history as
 * a run (fstests/import.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "core/loop.h"
#include "core/paths.h"
#include "core/spawn.h"
#include "fstests/import.h"

static bool
is_tarball(const char *path)
{
	static const char *const suffixes[] = { ".tar", ".tar.gz",  ".tgz",    ".tar.xz",
						".txz", ".tar.bz2", ".tar.zst" };

	if (path_is_dir(path))
		return false;
	for (size_t i = 0; i < ARRAY_SIZE(suffixes); i++)
		if (str_endswith(path, suffixes[i]))
			return true;
	return false;
}

/*
 * Unpack a tarball into a new directory of the cache (*dir), then keep
 * only its regular files and directories.
 */
static enum status
unpack(const char *tarball, char **dir)
{
	const char *argv[] = {
		"tar", "-xf", tarball, "-C", NULL, "--no-same-owner", "--no-same-permissions", NULL
	};
	struct strbuf out = STRBUF_INIT;
	struct child_exit ex;
	struct loop *loop;
	char *cache = NULL;
	enum status rc;

	*dir = NULL;
	rc = fswb_dir_make(DIR_CACHE, "import", &cache);
	if (rc != OK)
		return rc;
	*dir = path_join(cache, "XXXXXX");
	free(cache);
	if (!mkdtemp(*dir)) {
		rc = error(ERR_IO, "cannot make a directory like '%s'; check the disk", *dir);
		free(*dir);
		*dir = NULL;
		return rc;
	}
	argv[4] = *dir;
	loop = loop_new();
	rc = spawn_run(loop, argv, NULL, true, 8192, &out, &ex);
	loop_free(loop);
	if (rc == OK && (!ex.exited || ex.code))
		rc = error(ERR_CHILD, "cannot unpack '%s': %s", tarball, out.buf);
	if (rc == OK)
		rc = import_purge(*dir);
	strbuf_release(&out);
	return rc;
}

static const char import_usage[] =
	"usage: fswb results import PATH [--keep] [--json]\n"
	"Read results fstests wrote elsewhere and print their summary (--json: as\n"
	"run.json): check's results directory (with sections or not), a saved copy\n"
	"of its output, xfstests-bld's results (kvm-xfstests, gce-xfstests: a\n"
	"directory with FS/results-CFG/ in it), or a tarball of one of those.\n"
	"--keep keeps them in fswb's history as a run, for compare, baselines,\n"
	"flaky, report and html.\n";

int
cmd_results_import(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "keep", no_argument, NULL, 'k' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool json = false, keep = false;
	struct run_record rec;
	struct strvec dirs;
	char *tmp = NULL, *id = NULL;
	const char *path;
	int ch, code = 0;

	opterr = 0;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case 'k':
			keep = true;
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			fputs(import_usage, stdout);
			return 0;
		default:
			cmd_bad_option("results import", argv[optind - 1], opts);
		}
	}
	if (argc - optind != 1) {
		fputs(import_usage, stderr);
		return 2;
	}
	path = argv[optind];
	if (is_tarball(path) && unpack(path, &tmp) != OK) {
		code = cmd_fail("results import");
		goto out;
	}
	if (import_results(tmp ? tmp : path, &rec, &dirs) != OK) {
		code = cmd_fail("results import");
		goto out;
	}
	if (keep && import_keep(&rec, &dirs, &id) != OK)
		code = cmd_fail("results import");
	if (json)
		print_json_text(run_record_to_json(&rec));
	else
		print_run_summary(&rec);
	if (id)
		printf("\nKept as run %s ('fswb results show %s').\n", id, id);
	run_record_release(&rec);
	strvec_clear(&dirs);
out:
	if (tmp)
		remove_tree(tmp);
	free(tmp);
	free(id);
	return code;
}
