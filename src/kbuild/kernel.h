/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Kernels: the three kinds fswb boots, found on this machine, resolved from
 * the plan and checked against what the chosen filesystem configurations
 * need.
 *
 *	tree       a kernel source tree: built out of tree by kbuild.h
 *	image      a prebuilt bzImage (or arm64 Image), with an optional modules
 *	           directory or modules tarball
 *	installed  /boot/vmlinuz-VERSION with /lib/modules/VERSION (and
 *	           /boot/config-VERSION, /boot/initrd.img-VERSION when there)
 *
 * KERNEL_AUTO resolves to the tree in the current directory when it is one,
 * else to the installed kernel. An installed kernel without a version
 * (spec NULL) is the running one when it is installed, else the newest
 * installed one (versions compared as strverscmp(3) does).
 *
 * The roots of installed kernels are $FSWB_BOOT_DIR (default /boot) and
 * $FSWB_MODULES_DIR (default /lib/modules), so tests can use a fake /boot.
 *
 * The run engine's call sequence:
 *	struct kernel_needs needs;
 *	struct kernel k;
 *	kernel_needs_init(&needs, profiles, &plan->configs, &plan->kernel.debug);
 *	kernel_resolve(loop, &plan->kernel, &k);        (k is set up even on failure:
 *	                                                  kernel_release() it)
 *	if (k.kind == KERNEL_TREE)
 *		kbuild_build(loop, bus, &opts, &k);     (kbuild.h: configure, check, build;
 *	                                                  sets image, modules, config, report)
 *	else
 *		kernel_check(loop, &k, &needs);         (sets report from k.config)
 *	if (k.report.nneeded) ... a filesystem configuration cannot run ...
 *	boot k.image (+ k.initrd when set), give the guest k.modules
 *	kernel_release(&k);
 *	kernel_needs_release(&needs);
 */
#ifndef FSWB_KBUILD_KERNEL_H
#define FSWB_KBUILD_KERNEL_H

#include <stdbool.h>
#include <stddef.h>

#include "core/loop.h"
#include "core/plan.h"
#include "core/profile.h"
#include "core/status.h"
#include "core/util.h"
#include "kbuild/kconfig.h"

/* ---- architectures ---- */

struct kernel_arch {
	const char *name;      /* the plan's name: "x86_64", "arm64" */
	const char *make_arch; /* make ARCH= */
	const char *srcarch;   /* the directory under arch/, Kconfig's $(SRCARCH) */
	const char *defconfig; /* the base config, relative to the tree */
	const char *image;     /* the boot image, relative to the build directory */
	const char *machine;   /* uname -m of a host that builds it natively */
	const char *cross;     /* CROSS_COMPILE prefix on any other host */
};

/* NULL for an architecture fswb does not know. */
const struct kernel_arch *kernel_arch_find(const char *name);
/* "x86_64, arm64", for messages. */
const char *kernel_arch_names(void);

/* ---- what the filesystem configurations need ---- */

struct kernel_needs {
	struct strvec fragments; /* fragment files, in merge order */
	struct strvec names;	 /* their names: "fstests.config", "ext4.config", ... */
	struct strvec configs;	 /* the filesystem configurations: "ext4/4k" */
	struct kconfig_requests req;
};

/*
 * From the profiles: kconfig/fstests.config, then kconfig/FSTYP.config for
 * each configuration's filesystem (once each, when the file exists), then
 * kconfig/debug-NAME.config for each debug name. The fragments' options are
 * wanted (KCONFIG_WANT); those of the debug fragments, and each
 * configuration's kconfig key, are needed (KCONFIG_NEED) by "--debug NAME"
 * and by "FS/CFG". ERR_NOTFOUND naming an unknown configuration or a
 * missing debug fragment; ERR_PARSE from a bad fragment.
 */
enum status kernel_needs_init(struct kernel_needs *n, const struct profiles *p,
			      const struct strvec *configs, const struct strvec *debug);
void kernel_needs_release(struct kernel_needs *n);

/* ---- a resolved kernel ---- */

/*
 * Is path a kernel tree: a Makefile with VERSION and PATCHLEVEL lines, a
 * Kconfig, an arch/ directory? ERR_INVALID naming what is missing
 * otherwise. *version (may be NULL) gets "VERSION.PATCHLEVEL.SUBLEVEL" plus
 * EXTRAVERSION, from the Makefile.
 */
enum status kernel_tree_check(const char *path, char **version);

enum kernel_config_source {
	KCONF_NONE,	/* no config known */
	KCONF_TREE,	/* a tree's .config (its own, or the build directory's) */
	KCONF_BOOT,	/* /boot/config-VERSION */
	KCONF_EMBEDDED, /* extracted from the image (CONFIG_IKCONFIG) into the cache */
};

const char *kernel_config_source_str(enum kernel_config_source s);

struct kernel {
	enum kernel_kind kind; /* KERNEL_TREE, KERNEL_IMAGE or KERNEL_INSTALLED; never AUTO */
	char *version;	       /* the kernel release, "6.1.0-57-cloud-amd64"; for a tree not
				  built yet the Makefile's "6.1.192"; NULL when unknown */
	char *arch;	       /* "x86_64", "arm64" */
	char *image;	       /* the bootable image; NULL for a tree until it is built */
	char *modules;	       /* a directory shaped like /lib/modules/VERSION (modules.dep
				  and kernel/ inside), or NULL when there are no modules */
	char *initrd;	       /* INSTALLED: /boot/initrd.img-VERSION (or initramfs-VERSION.img)
				  when there is one; NULL otherwise */
	char *config;	       /* the config file checked, or NULL */
	enum kernel_config_source config_source;
	char *config_note; /* why there is no config, when config is NULL; may be NULL */
	bool modular;	   /* the config has CONFIG_MODULES=y (false when unknown) */

	/* KERNEL_TREE */
	char *tree;	 /* the source tree, absolute */
	char *build_dir; /* make's O= directory (the tree itself with own_config); set by
			    kbuild_configure() */
	char *log;	 /* the last build's full log, or NULL */
	bool own_config; /* build with the tree's .config, in the tree */
	bool built;	 /* image is the result of a finished build */

	/* after kernel_check(), kbuild_configure() or kbuild_build() */
	bool checked; /* false when there was no config to check */
	struct kconfig_report report;
};

void kernel_init(struct kernel *k);
void kernel_release(struct kernel *k);

/*
 * Resolve the plan's kernel. pk->arch NULL means x86_64. Checks that a tree
 * is a kernel tree, that an image is a kernel image of pk->arch (ERR_INVALID
 * naming both architectures otherwise), that an installed version exists
 * (ERR_NOTFOUND listing the installed ones), and finds the modules: for an
 * image, pk->modules is a /lib/modules/VERSION directory, a directory
 * holding lib/modules/VERSION, or a tarball of either (unpacked into the
 * cache, once per tarball, under the lock kernels/modules-KEY.lock: another
 * fswb unpacking it is waited for). Starts programs only to read a
 * compressed image's architecture and to unpack a tarball.
 */
enum status kernel_resolve(struct loop *loop, const struct plan_kernel *pk, struct kernel *out);

/*
 * Check k's config against needs into k->report (KCONFIG_MODULES_OK when
 * k has modules). An image or installed kernel with no config file gets
 * its embedded config extracted into the cache first, when it has one
 * (under the lock of the image's cache directory; written whole, then
 * renamed).
 * When no config can be found, k->checked stays false and it is OK.
 * For a tree the tree's Kconfig files explain what is missing.
 */
enum status kernel_check(struct loop *loop, struct kernel *k, const struct kernel_needs *needs);

/* ---- discovery ---- */

/* $FSWB_BOOT_DIR or /boot; $FSWB_MODULES_DIR or /lib/modules. free() them. */
char *kernel_boot_dir(void);
char *kernel_modules_root(void);

struct kernel_list {
	struct kernel *v;
	size_t n, alloc;
	size_t auto_index; /* the one KERNEL_AUTO picks, or (size_t)-1 when none */
};

void kernel_list_release(struct kernel_list *l);

/* The installed kernels, newest first (none is OK: n == 0). */
enum status kernel_list_installed(struct kernel_list *out);

/*
 * Everything fswb finds: the tree in the current directory and ~/linux when
 * they are trees, the trees built before (kbuild's build directories in the
 * cache), the installed kernels. Not checked: call kernel_check() on each.
 */
enum status kernel_list(struct loop *loop, const char *arch, struct kernel_list *out);

/* Whether path looks like a kernel tree (Makefile with VERSION, Kconfig, arch/). */
bool kernel_is_tree(const char *path);

#endif
