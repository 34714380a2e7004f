/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `fswb results import PATH [--keep] [--json]`: results fstests wrote
 * elsewhere (check's results directory, with sections or not; a saved copy
 * of its stdout; xfstests-bld's results from kvm-xfstests or gce-xfstests;
 * a tarball of any of those), printed, and with --keep kept in history as
 * a run (fstests/import.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "core/loop.h"
#include "core/paths.h"
#include "core/spawn.h"
#include "fstests/archive.h"
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

/* The program that makes a plain tar of path, or NULL (gzip and plain tar are read as they are). */
static const char *
decompressor(const char *path)
{
	static const struct {
		const char *suffix, *program;
	} d[] = { { ".tar.xz", "xz" },
		  { ".txz", "xz" },
		  { ".tar.bz2", "bzip2" },
		  { ".tar.zst", "zstd" } };

	for (size_t i = 0; i < ARRAY_SIZE(d); i++)
		if (str_endswith(path, d[i].suffix))
			return d[i].program;
	return NULL;
}

/* The tar stream of prog -dc tarball, unpacked as an archive from a test machine. */
static enum status
unpack_through(const char *prog, const char *tarball, const char *dir, struct archive_report *r)
{
	const char *argv[] = { prog, "-dc", "--", tarball, NULL };
	struct spawn_opts o = SPAWN_OPTS_INIT;
	struct loop *loop = loop_new();
	struct child *c = NULL;
	enum status rc, wait;
	int dfd;

	o.argv = argv;
	o.out = SPAWN_PIPE;
	rc = spawn_start(loop, &o, &c);
	dfd = rc == OK ? open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
	if (rc == OK && dfd < 0)
		rc = error(ERR_IO, "cannot open '%s': %s", dir, strerror(errno));
	if (rc == OK && fcntl(c->out, F_SETFL, fcntl(c->out, F_GETFL) & ~O_NONBLOCK) < 0)
		rc = error(ERR_IO, "cannot read from %s: %s", prog, strerror(errno));
	if (rc == OK)
		rc = archive_unpack_fd(c->out, dfd, ARCHIVE_MAX_DEFAULT, r);
	if (dfd >= 0)
		close(dfd);
	if (c) {
		child_kill(c, SIGTERM); /* a limit stopped the unpacking: the rest is not wanted */
		wait = child_wait(c, 10000);
		if (rc == OK && wait == OK && !r->stopped && (!c->exit.exited || c->exit.code))
			rc = error(ERR_CHILD, "%s cannot decompress '%s'", prog, tarball);
		child_free(c);
	}
	loop_free(loop);
	return rc;
}

/*
 * Unpack a tarball into a new directory of the cache (*dir) with the reader
 * of results from test machines (fstests/archive.h: regular files and
 * directories only, nothing followed, a size cap), then keep only its
 * regular files and directories.
 */
static enum status
unpack(const char *tarball, char **dir)
{
	struct archive_report r;
	const char *prog = decompressor(tarball);
	char *cache = NULL, *text;
	enum status rc;

	*dir = NULL;
	rc = fswb_dir_make(DIR_CACHE, "import", &cache);
	if (rc != OK)
		return rc;
	/* named NAME.tmp.PID: what a killed import leaves is reaped (paths_reap_stale) */
	*dir = xasprintf("%s/unpack.tmp.%ld", cache, (long)getpid());
	free(cache);
	if (remove_tree(*dir) != OK || mkdir(*dir, 0700) < 0) {
		rc = error(ERR_IO, "cannot make the directory '%s': %s; check the disk", *dir,
			   strerror(errno));
		free(*dir);
		*dir = NULL;
		return rc;
	}
	archive_report_init(&r);
	rc = prog ? unpack_through(prog, tarball, *dir, &r)
		  : archive_unpack(tarball, *dir, ARCHIVE_MAX_DEFAULT, &r);
	text = archive_report_text(&r);
	if (*text)
		fprintf(stderr, "fswb: warning: %s: %s\n", tarball, text);
	free(text);
	archive_report_release(&r);
	if (rc != OK)
		rc = error_prefix(rc, "cannot unpack '%s'", tarball);
	else
		rc = import_purge(*dir);
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
