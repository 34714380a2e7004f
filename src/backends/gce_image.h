/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The disk image Google Compute Engine imports and boots with UEFI.
 *
 * disk.raw: a GPT disk, 1 MiB aligned, its size a multiple of 1 GiB (GCE
 * refuses others), a sparse file:
 *	partition 1	EFI system partition (FAT32, 100 MiB): /EFI/BOOT/BOOTX64.EFI
 *			(a standalone GRUB with its grub.cfg embedded), /vmlinuz,
 *			/initrd.img
 *	partition 2	Linux filesystem: the appliance's bytes (its ext4, booted
 *			as root=UUID= of that filesystem)
 * packed as the only member, disk.raw, of a gzip'd GNU tar with sparse files
 * (what `gcloud compute images create --source-uri` takes).
 *
 * Needs grub-mkstandalone (or grub2-mkstandalone) with the x86_64-efi
 * modules, mtools (mformat, mmd, mcopy) and tar with gzip. The GPT is
 * written here, not with sfdisk.
 */
#ifndef FSWB_BACKENDS_GCE_IMAGE_H
#define FSWB_BACKENDS_GCE_IMAGE_H

#include <stdint.h>

#include "core/loop.h"
#include "core/status.h"

struct gce_image_in {
	const char *appliance; /* raw ext4 image, never written */
	const char *kernel;    /* bzImage */
	const char *initrd;    /* or NULL */
	const char *cmdline;   /* extra kernel command line words, or NULL */
};

/* Where everything goes on the disk, in bytes. */
struct gce_layout {
	uint64_t esp_start, esp_size;	/* partition 1 */
	uint64_t root_start, root_size; /* partition 2: the appliance, rounded up to 1 MiB */
	uint64_t disk_size;		/* rounded up to a multiple of 1 GiB */
};

/* The layout for an appliance of appliance_size bytes. */
void gce_image_layout(uint64_t appliance_size, struct gce_layout *l);

/*
 * Write the tar.gz to out (atomically: out.part then rename); nothing
 * half-written is left, and the temporary files (a directory out.tmp.PID)
 * are removed on every path. Runs its programs to completion with spawn_run()
 * on loop (tens of seconds for a 1 GiB appliance: mostly gzip).
 */
enum status gce_image_make(struct loop *loop, const struct gce_image_in *in, const char *out);

/*
 * The kernel command line the image boots with (free() it): console on
 * ttyS0, root=UUID= of the appliance's ext4, the init, and the words of the
 * qemu backend, fswb.gce=1, then extra (may be NULL). NULL with error() set
 * when the appliance's UUID cannot be read.
 */
char *gce_image_cmdline(const char *appliance, const char *extra);

/* The appliance's ext4 UUID, "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", from its superblock. */
enum status gce_image_uuid(const char *appliance, char uuid[37]);

#endif
