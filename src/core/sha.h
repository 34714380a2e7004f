/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * SHA-256 for cache keys (appliances, initramfs images): what went in,
 * hashed in order, as 64 hex digits.
 *
 *	struct sha s;
 *	sha_init(&s);
 *	sha_adds(&s, "release"); sha_addf(&s, "%u", n); sha_add(&s, buf, len);
 *	sha_hex(&s, key);                 ends it: key holds 64 digits and a NUL
 *
 * sha_adds() and sha_addf() hash the string with its NUL, so that fields
 * never run together ("ab" + "c" differs from "a" + "bc").
 */
#ifndef FSWB_CORE_SHA_H
#define FSWB_CORE_SHA_H

#include <stddef.h>

struct sha {
	void *ctx; /* libcrypto's EVP_MD_CTX */
};

void sha_init(struct sha *s);
void sha_add(struct sha *s, const void *data, size_t len);
void sha_adds(struct sha *s, const char *str);
void sha_addf(struct sha *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sha_hex(struct sha *s, char out[65]);

#endif
