/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The initramfs for a modular kernel: what lets a kernel whose virtio and
 * filesystem drivers are modules reach fswb's appliance, and gives the
 * guest the modules fstests loads later (xfs, btrfs, dm-*, loop, overlay,
 * scsi_debug ...).
 *
 * It is a newc cpio, gzip-compressed, holding:
 *	/init			src/rootfs/initramfs-init (busybox sh)
 *	/bin/busybox, /bin/sh	the host's static busybox (busybox-static)
 *	/dev/console		the console node, for init's stdio
 *	/lib/modules/VERSION/	the chosen modules as the kernel ships them
 *				(compressed or not) and every modules.* index
 *	/lib/fswb-boot/NAME.ko	the boot modules, uncompressed when the kernel's
 *				are compressed (busybox insmod reads plain .ko)
 *	/etc/fswb-initramfs	VERSION= and BOOT_MODULES= (absolute paths, in
 *				dependency order), read by /init
 * /init loads the boot modules, waits for root= (default /dev/vda), mounts
 * it at /newroot (rootfstype=, rootflags=, ro|rw), mounts a tmpfs at
 * /newroot/lib/modules/VERSION and copies the modules there (so modprobe
 * works in the guest), moves /dev, /proc and /sys, and runs `switch_root
 * /newroot INIT` with init= from the kernel command line (default
 * /usr/local/sbin/fswb-init). On failure it says why on the console and
 * powers off (fswb.debug=shell: a shell instead).
 *
 * The chosen modules: everything under kernel/fs, kernel/drivers/block,
 * kernel/drivers/md, kernel/drivers/virtio, kernel/drivers/char,
 * kernel/lib, kernel/crypto, kernel/arch/ARCH/crypto and kernel/mm, plus
 * scsi_debug, then everything those depend on (modules.dep). The boot
 * modules: virtio_pci, virtio_blk, virtio_console and ext4, each with its
 * dependencies and soft dependencies, when they are modules.
 *
 * Needed or not: a kernel with no modules directory, or whose modules
 * directory holds none of the chosen modules, needs no initramfs (everything
 * fswb needs is built in): *out_path is NULL. A boot module that is neither
 * built in (modules.builtin) nor a module is ERR_NOTFOUND naming the
 * CONFIG_ option to enable.
 *
 * Cache: fswb_dir_make(DIR_CACHE, "initramfs/VERSION-DIGEST")/initramfs.img,
 * DIGEST from the kernel version, modules.dep, modules.builtin, the size and
 * mtime of every chosen module, the init script, busybox and the format
 * version below. A second call with the same inputs returns the cached image
 * at once. The image is written to a temporary file and renamed into place,
 * so an interrupted build leaves no half-written image.
 *
 * Programs (gzip; xz, zstd or gzip to uncompress boot modules) run through
 * spawn.h; the call runs the loop itself until they exit.
 *
 * Events: STAGE_BEGIN, STAGE_PROGRESS (detail "initramfs ...") and
 * STAGE_END for stage "appliance", only when an image is built (not for a
 * cache hit or a kernel that needs none). bus may be NULL.
 */
#ifndef FSWB_ROOTFS_INITRAMFS_H
#define FSWB_ROOTFS_INITRAMFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/event.h"
#include "core/loop.h"
#include "core/status.h"
#include "core/util.h"

/* Changes whenever the layout or the choice of modules changes. */
#define INITRAMFS_FORMAT 1

/*
 * Build or reuse the initramfs for kernel_version. modules_dir: the
 * kernel's modules directory (holding modules.dep); NULL means
 * /lib/modules/VERSION. *out_path (free() it) is the image, or NULL when
 * the kernel needs none.
 */
enum status initramfs_ensure(struct loop *loop, struct event_bus *bus, const char *kernel_version,
			     const char *modules_dir, char **out_path);

/* Where the init script is: DATADIR/initramfs-init or DATADIR/src/rootfs/initramfs-init. */
char *initramfs_init_script(void);

/* ---- the pieces, for tests ---- */

/* What initramfs_ensure() would put in, read from a modules directory. */
struct initramfs_plan {
	char *version;
	char *modules_dir;
	struct strvec modules; /* relative paths ("kernel/fs/xfs/xfs.ko"), sorted */
	struct strvec boot;    /* relative paths of the boot modules, dependency order */
	struct strvec builtin; /* boot modules found built in, by name ("virtio_blk") */
	bool needed;	       /* false: everything needed is built in */
	char digest[65];       /* of the modules' inputs (not the init script or busybox) */
};

/*
 * Read modules.dep, modules.builtin and modules.softdep of modules_dir and
 * choose. ERR_NOTFOUND for a boot module that is neither built in nor a
 * module; a missing modules directory gives needed = false.
 */
enum status initramfs_plan(const char *kernel_version, const char *modules_dir,
			   struct initramfs_plan *p);
void initramfs_plan_release(struct initramfs_plan *p);

/* A module's name from its path: "kernel/fs/xfs/xfs.ko.zst" -> "xfs" ("-" becomes "_"). */
char *initramfs_module_name(const char *path);

/*
 * A newc cpio writer. Names are relative ("bin/sh"); parent directories
 * must be added first. Errors stick: after one, later calls do nothing and
 * cpio_finish() returns it.
 */
struct cpio {
	int fd;
	uint32_t ino;
	uint64_t off;
	enum status err;
	char *path;
};

enum status cpio_open(struct cpio *c, const char *path);
void cpio_add_dir(struct cpio *c, const char *name, mode_t mode);
void cpio_add_data(struct cpio *c, const char *name, mode_t mode, int64_t mtime, const void *data,
		   size_t len);
/* A copy of the regular file src (its mode and mtime). */
void cpio_add_file(struct cpio *c, const char *name, const char *src);
void cpio_add_symlink(struct cpio *c, const char *name, const char *target);
/* A character (S_IFCHR) or block (S_IFBLK) device node, in mode. */
void cpio_add_node(struct cpio *c, const char *name, mode_t mode, unsigned major, unsigned minor);
/* Write the trailer and close; the status of the whole archive. */
enum status cpio_finish(struct cpio *c);

/* Whether an ELF file is statically linked (no PT_INTERP). ERR_INVALID for non-ELF. */
enum status elf_is_static(const char *path, bool *is_static);

#endif
