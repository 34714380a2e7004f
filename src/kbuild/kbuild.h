/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kbuild: configure and build a kernel tree, out of tree, with a config
 * that has what fstests needs.
 *
 * The build directory (make's O=) is fswb_dir_make(DIR_CACHE,
 * "kernels/KEY"), KEY = "<tree's name>-<arch>-<16 hex digits>" of a hash of
 * the tree's real path, the architecture and the fragments' names and
 * contents: one directory per tree and config, so building again reuses it
 * and make rebuilds only what changed. The user's tree is never written.
 * Kept there:
 *	.config			the resulting config
 *	fswb-merged.config	what went into olddefconfig
 *	fswb-config.log		olddefconfig's output
 *	fswb-build.log		the full output of the last build
 *	fswb-modules/		modules_install's INSTALL_MOD_PATH (when there are modules)
 *	fswb-kernel.json	written after a build finished: tree, arch, version,
 *				image, modules (kernel_list() reads it)
 *
 * The config: the architecture's defconfig, kernel/configs/kvm_guest.config
 * (when the tree has it), then needs->fragments in order, merged with later
 * lines winning, written as BUILD/.config; then `make olddefconfig` in
 * BUILD; then kconfig_check() of every requested option with the tree's
 * Kconfig (KCONFIG_MERGED), so each dropped option is named with its cause.
 * When the merged text is what it was the last time and BUILD/.config is
 * there, olddefconfig is not run again (an unchanged config rebuilds
 * nothing). The defconfig and kvm_guest.config are the base, not requests:
 * their options are not checked.
 *
 * make refuses O= when the tree was configured or built in place (it has
 * .config, include/config/ or arch/SRCARCH/include/generated/): that is
 * ERR_INVALID before anything starts, naming the two ways out: --own-config
 * (build the tree in place with its own .config), or `make mrproper` in the
 * tree, which deletes its .config and build outputs (fswb never runs it).
 *
 * own_config: the tree's own .config, built in the tree itself (no O=):
 * nothing is merged, and the check runs without KCONFIG_MERGED, so a
 * missing option reads "not set" or names the dependency that keeps it out.
 *
 * Programs (make, through `nice -n N` when o->nice) run as jobs (core/job.h)
 * with LC_ALL=C; the build waits in the loop (job_wait(): other watchers
 * keep running) until make exits, so it may be called from a loop callback. If the loop is told to quit meanwhile (loop_quit(), e.g.
 * from a SIGINT watcher) or *o->cancel becomes true, make's process group
 * gets SIGTERM (SIGKILL 10 s later) and the result is ERR_INTERRUPTED. The
 * loop must not be done on entry (loop_reset()).
 *
 * One fswb at a time configures or builds a tree: kbuild_configure() and
 * kbuild_build() lock kernels/tree-HASH.lock in the cache (core/lockfile.h)
 * and wait, in the loop, while another fswb holds it (detail "waiting for
 * another fswb building this kernel tree"; *o->cancel or the loop's quit
 * stop the wait with ERR_INTERRUPTED).
 *
 * Events: kbuild emits only EV_STAGE_PROGRESS for stage "kernel" (detail
 * "configuring", "CC fs/ext4/inode.o (1234 of ~3100)", "installing
 * modules"; fraction = objects built / estimate, < 0 when unknown, as for a
 * rebuild of a finished build). EV_STAGE_BEGIN and EV_STAGE_END are the
 * caller's. bus may be NULL.
 */
#ifndef FSWB_KBUILD_KBUILD_H
#define FSWB_KBUILD_KBUILD_H

#include <stdbool.h>
#include <stddef.h>

#include "core/event.h"
#include "core/loop.h"
#include "core/status.h"
#include "core/util.h"
#include "kbuild/kconfig.h"
#include "kbuild/kernel.h"

struct kbuild_opts {
	const struct kernel_needs *needs; /* required */
	unsigned jobs;			  /* make -jN; 0: the number of online CPUs */
	int nice;			  /* run make under nice -n N; 0: as is */
	bool force;			  /* build even when a needed option was dropped */
	const bool *cancel; /* optional: set (from a loop callback) to stop the build */
};

/*
 * The programs and headers a build needs, checked before starting: make,
 * the C compiler (CROSS_COMPILE's for another architecture), ld, flex,
 * bison, bc, perl, libelf's gelf.h (objtool, for x86_64), and when cfg says
 * so openssl's headers (module signing, trusted keys) and pahole (BTF).
 * cfg NULL: only what configuring needs (make, the compiler, flex, bison).
 * ERR_NOTFOUND listing everything missing with the Debian package to
 * install.
 */
enum status kbuild_tools_check(const struct kernel_arch *arch, const struct kconfig_values *cfg);

/*
 * Configure k (a KERNEL_TREE from kernel_resolve()): the build directory,
 * the config, the check. Sets k->build_dir, k->config, k->modular,
 * k->report, k->checked. With own_config only the check runs.
 */
enum status kbuild_configure(struct loop *loop, const struct kbuild_opts *o, struct kernel *k);

/*
 * Configure (as above), then build: checks the tools; refuses with
 * ERR_INVALID when a needed option was dropped (unless o->force), naming
 * each; runs make -jN; then, when the config builds modules, make
 * modules_install into BUILD/fswb-modules. Sets k->image, k->modules,
 * k->version (include/config/kernel.release), k->log, k->built. A failed
 * build is ERR_CHILD with the first error lines and the log's path.
 */
enum status kbuild_build(struct loop *loop, struct event_bus *bus, const struct kbuild_opts *o,
			 struct kernel *k);

/* The build directory kbuild_configure() would use for tree, arch, needs. free() it. */
enum status kbuild_build_dir(const char *tree, const struct kernel_arch *arch,
			     const struct kernel_needs *needs, char **out);

/* ---- reading make's output ---- */

/*
 * kbuild prints one line per step: "  CC      fs/ext4/inode.o",
 * "  CC [M]  fs/xfs/xfs_buf.o", "  AS      arch/x86/entry/entry_64.o",
 * "  LD [M]  fs/xfs/xfs.ko". An object is a CC or AS line whose target ends
 * in ".o" (not ".mod.o", the module stubs); HOSTCC and the rest are steps
 * but not objects. Error lines are the compiler's and linker's ("file:N:M:
 * error: ...", "fatal error:", "undefined reference"), make's "*** ...
 * Error N" and a few kbuild ones; the first ones are kept.
 */
#define KBUILD_MAX_ERRORS 12

struct kbuild_progress {
	size_t objects;	 /* objects compiled so far */
	size_t estimate; /* what the build should compile; 0 when unknown */
	size_t lines;
	char current[256]; /* the last step, "CC fs/ext4/inode.o" */
	struct strvec errors;
	struct strvec make_errors; /* make's "*** [...] Error 1" lines */
	struct line_asm partial;   /* an unfinished line */
};

void kbuild_progress_init(struct kbuild_progress *p, size_t estimate);
void kbuild_progress_release(struct kbuild_progress *p);
/* One line without its newline; true when it was an object. */
bool kbuild_progress_line(struct kbuild_progress *p, const char *line);
/* Any bytes; whole lines go to kbuild_progress_line(). */
void kbuild_progress_feed(struct kbuild_progress *p, const char *data, size_t len);
/* objects / estimate, at most 0.99 until make is done; < 0 when the estimate is unknown. */
double kbuild_progress_fraction(const struct kbuild_progress *p);
/* The first error lines, "  file:line: error: ...\n..." (for messages); free(). */
char *kbuild_progress_errors(const struct kbuild_progress *p);

/*
 * An estimate of the objects a build compiles, from the tree's Kbuild and
 * Makefile files: starting from the top Kbuild (and the top and arch
 * Makefiles' core-y, drivers-y, libs-y lists), each directory's obj-y,
 * obj-m, lib-y and extra-y objects and the parts of its composite objects
 * (NAME-y, NAME-objs, NAME-$(CONFIG_X)), counted when their CONFIG_ is y or
 * m in cfg, and the subdirectories they enable, visited once. ifdef/ifeq
 * on a CONFIG_ are followed; other conditionals count both ways. It misses
 * objects made by special rules (the boot code, generated sources) and
 * counts a few that a conditional it cannot read leaves out. subdir: only
 * that directory and below ("fs/ext4"), NULL for the whole tree.
 */
enum status kbuild_estimate(const char *srctree, const char *srcarch,
			    const struct kconfig_values *cfg, const char *subdir, size_t *objects);

#endif
