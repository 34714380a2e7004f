/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Paths: where fswb keeps things, and writing files safely.
 *
 * Directories follow the XDG base-directory spec:
 *	config	$XDG_CONFIG_HOME/fswb	(~/.config/fswb)	config file, remembered choices
 *	cache	$XDG_CACHE_HOME/fswb	(~/.cache/fswb)		kernels, appliances (rebuildable)
 *	data	$XDG_DATA_HOME/fswb	(~/.local/share/fswb)	runs/ (results: never rebuildable)
 * FSWB_HOME=DIR overrides all three with DIR/config, DIR/cache and DIR/data,
 * so tests are hermetic. FSWB_CACHE_DIR=DIR overrides the cache alone (it
 * wins over FSWB_HOME), so hermetic tests can still share a built appliance.
 *
 * Data shipped with fswb (profiles/, docs/): $FSWB_DATADIR when set; else
 * the source tree, for the binary in the build directory it was built in;
 * else PREFIX/share/fswb beside the running binary (PREFIX/bin/fswb, as
 * `make install` puts it, wherever PREFIX is); else the $(PREFIX)/share/fswb
 * of the build. An installed fswb never reads the tree it was built from.
 *
 * Strings returned are owned by the caller (free()).
 */
#ifndef FSWB_CORE_PATHS_H
#define FSWB_CORE_PATHS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "core/status.h"

enum fswb_dir {
	DIR_CONFIG,
	DIR_CACHE,
	DIR_DATA,
};

/* The directory, without creating it. */
char *fswb_dir(enum fswb_dir which);
/*
 * The directory joined with sub ("runs", "appliances/abc"), created with
 * parents; the data directory itself is made 0700 (runs hold what guests
 * sent back).
 */
enum status fswb_dir_make(enum fswb_dir which, const char *sub, char **out);

/* Where shipped data lives: the dir holding profiles/ and docs/. */
char *fswb_datadir(void);
/* fswb_datadir() without $FSWB_DATADIR for the program exe (a path). */
char *datadir_for(const char *exe);
/* Set at build time: the source tree, its build directory, the install prefix's share dir. */
void paths_set_builtin(const char *srcdir, const char *builddir, const char *sharedir);
/* path is below dir (both resolved: symlinks, "..") and not dir itself. */
bool path_below(const char *path, const char *dir);

/* a/b without doubled slashes. */
char *path_join(const char *a, const char *b);
/* mkdir -p; OK when it exists. */
enum status mkdir_p(const char *path, mode_t mode);
/* rm -rf that never crosses into another filesystem or follows links. */
enum status remove_tree(const char *path);
bool path_exists(const char *path);
bool path_is_dir(const char *path);

/* write(2) all of buf; false with errno set on a failure (ENOSPC for a 0 write). */
bool write_fd_all(int fd, const void *buf, size_t len);
/*
 * The program prog as an executable file: prog itself when it holds a '/',
 * else the first in path (a PATH string; NULL: $PATH, and when that is unset
 * or empty /usr/local/bin:/usr/bin:/bin), then in the directories of extra
 * (a PATH string too; NULL: none). free() it; NULL when not found.
 */
char *path_which(const char *prog, const char *path, const char *extra);
/* Whether path_which(prog, NULL, NULL) finds it. */
bool path_has_program(const char *prog);
/*
 * Programs of the machine called machine ("aarch64", uname -m's spelling)
 * run here through qemu-user-static: binfmt_misc has qemu-MACHINE enabled.
 */
bool binfmt_runs(const char *machine);

/* Read a whole file (at most max bytes, else ERR_LIMIT) into *out (free()). */
enum status read_file(const char *path, size_t max, char **out, size_t *len);

/*
 * Directories whose contents are untrusted (a run directory, an imported
 * results directory): dir itself is the caller's and is taken as it is;
 * below it nothing follows a symlink or blocks on a FIFO.
 *
 * openat_beneath(): open rel below dirfd, each of rel's components with
 * O_NOFOLLOW (the ones before the last as directories; created 0755 when
 * make_dirs, and so is the last one when flags hold O_DIRECTORY). flags and mode as openat(2); O_NOFOLLOW and O_CLOEXEC are
 * added. rel must be relative, without empty, "." or ".." components
 * (EINVAL). An fd, or -1 with errno (ELOOP or ENOTDIR: a symlink).
 * open_beneath(): the same below the directory path dir, no make_dirs.
 * read_file_beneath(): read_file() of dir/rel: a regular file only, opened
 * without blocking (a FIFO, a device or a symlink is ERR_INVALID or ERR_IO,
 * the message naming it). file_beneath() and dir_beneath(): dir/rel is a
 * regular file, a directory, reached without a symlink.
 */
int openat_beneath(int dirfd, const char *rel, int flags, mode_t mode, bool make_dirs);
int open_beneath(const char *dir, const char *rel, int flags, mode_t mode);
enum status read_file_beneath(const char *dir, const char *rel, size_t max, char **out,
			      size_t *len);
bool file_beneath(const char *dir, const char *rel);
bool dir_beneath(const char *dir, const char *rel);

/*
 * What a killed fswb left: the NAME.tmp.PID entries of dir (files or
 * directories, as write_file_atomic() and the builders name them) whose
 * PID runs no longer, removed with remove_tree(); how many.
 * paths_reap_stale(): the same in every place fswb writes such names (the
 * config and data directories, each run directory, the cache's fstests
 * clones, initramfs images, kernels and imports; the appliance cache reaps
 * its own under its locks). Nothing of a running fswb is touched.
 */
unsigned reap_stale_tmp(const char *dir);
unsigned paths_reap_stale(void);

/*
 * Write a file atomically: write PATH.tmp.PID in the same directory, fsync
 * it, rename over PATH, fsync the directory. Readers see the old content or
 * the new one, never a mix; a failure leaves the old file and no temporary.
 */
enum status write_file_atomic(const char *path, const void *data, size_t len, mode_t mode);

#endif
