/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The adb backend's inside, for its unit tests (adb.c). */
#ifndef FSWB_BACKENDS_ADB_INT_H
#define FSWB_BACKENDS_ADB_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/status.h"
#include "core/util.h"

/* One line of the adb server's `devices -l` (host:devices-l); strings owned. */
struct adb_device {
	char *serial, *state;		/* "127.0.0.1:5555", "device" | "unauthorized" | ... */
	char *product, *model, *device; /* NULL when the line has none */
};

/* The devices in text (host:devices-l's reply, untrusted); how many into *out (free with adb_devices_free). */
size_t adb_devices_parse(const char *text, struct adb_device **out);
void adb_devices_free(struct adb_device *d, size_t n);

/* The plan's arch for an Android ABI ("arm64-v8a" -> "arm64"), or NULL when fswb has none. */
const char *adb_abi_arch(const char *abi);

/* The longest shell-v2 packet fswb takes (adbd sends at most its max payload, 1 MiB). */
#define ADB_V2_MAX (1u << 20)

/*
 * The shell protocol v2's packets (id, then its length, little-endian, then
 * the data) in buf: the first complete one as *id, *data, *len; how many
 * bytes it took, 0 when buf holds no complete packet yet, SIZE_MAX when the
 * next one says it is longer than ADB_V2_MAX (a broken or hostile stream).
 */
size_t adb_v2_next(const char *buf, size_t n, int *id, const char **data, size_t *len);

/* The free KiB in toybox's or coreutils' `df -k DIR` output (untrusted); false when unreadable. */
bool adb_df_free_kib(const char *text, uint64_t *kib);

/* A device serial as fswb takes it: printable, no quotes, spaces or shell metacharacters. */
enum status adb_serial_check(const char *value);

#endif
