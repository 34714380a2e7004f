/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Kernel images: what a bzImage (or an arm64 Image, or an ELF vmlinux) says
 * about itself, and the config some of them carry.
 *
 * kimage_probe() reads headers only and never starts a program:
 *	x86 bzImage	"HdrS" at 0x202 and 0xAA55 at 0x1fe; the version string is
 *			at 0x200 + the 16-bit kernel_version field at 0x20e; the
 *			arch is x86_64 when xloadflags (0x236) has XLF_KERNEL_64,
 *			else i386; the payload (the compressed vmlinux) is at
 *			(setup_sects + 1) * 512 + payload_offset (0x248), of
 *			payload_length (0x24c) bytes, and its magic names the
 *			compression
 *	arm64 Image	"ARM\x64" at 0x38; no version in the header
 *	ELF vmlinux	e_machine gives the arch; the version is looked for as
 *			"Linux version " in the file
 *	gzip file	(Image.gz): arch and version are unknown until decompressed
 *
 * kimage_decompress() and kimage_config() start the decompressor the payload's
 * magic names (gzip, bzip2, xz, lzma through xz, lzop, lz4, zstd) through
 * spawn.h, with the loop given. The kernel appends the uncompressed size to
 * some payloads, which some tools report as trailing garbage: their output
 * is used whatever their exit status when they wrote any.
 *
 * The embedded config (CONFIG_IKCONFIG) is a gzip stream between the markers
 * "IKCFG_ST" and "IKCFG_ED" in the decompressed kernel; a kernel built with
 * IKCONFIG=m keeps it in the module configs.ko instead, which is not read.
 */
#ifndef FSWB_KBUILD_IMAGE_H
#define FSWB_KBUILD_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "core/loop.h"
#include "core/status.h"

enum kimage_format {
	KIMAGE_BZIMAGE,
	KIMAGE_ARM64,
	KIMAGE_ELF,
	KIMAGE_COMPRESSED, /* a whole file compressed (Image.gz) */
};

struct kimage_info {
	enum kimage_format format;
	char *arch;	   /* "x86_64", "i386", "arm64"; NULL when unknown */
	char *version;	   /* "6.1.0-57-cloud-amd64"; NULL when the header does not say */
	char *banner;	   /* the whole version string of a bzImage, or NULL */
	char *compression; /* of the payload: "gzip", "lz4", ...; NULL when none or unknown */
	uint64_t payload_offset, payload_length; /* bzImage / whole compressed file */
};

/*
 * Read what the headers say. ERR_INVALID naming path when it is none of
 * the formats above, ERR_NOTFOUND/ERR_IO when it cannot be read.
 */
enum status kimage_probe(const char *path, struct kimage_info *out);
void kimage_info_release(struct kimage_info *info);

/* The payload's compression from its first bytes ("gzip"...), or NULL. */
const char *kimage_compression(const unsigned char *data, size_t len);

/*
 * Write the decompressed kernel of image to out_path (the file itself for
 * an uncompressed arm64 Image or ELF). ERR_UNSUPPORTED when the tool for
 * its compression is not installed (the message names the package).
 */
enum status kimage_decompress(struct loop *loop, const char *image, const char *out_path);

/*
 * Find "Linux version X" in the decompressed kernel at path; *version gets
 * X (free()). ERR_NOTFOUND when there is none.
 */
enum status kimage_find_version(const char *path, char **version);

/*
 * Extract the embedded config of image into out_path. ERR_NOTFOUND when the
 * kernel was built without CONFIG_IKCONFIG (the message says so). work is a
 * directory for temporary files (removed afterwards).
 */
enum status kimage_config(struct loop *loop, const char *image, const char *work,
			  const char *out_path);

/* The same on a decompressed kernel (or any file holding the markers). */
enum status kimage_config_from(struct loop *loop, const char *vmlinux, const char *work,
			       const char *out_path);

#endif
