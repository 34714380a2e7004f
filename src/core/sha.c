/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "core/sha.h"

#include <openssl/evp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"

void
sha_init(struct sha *s)
{
	s->ctx = EVP_MD_CTX_new();
	if (!s->ctx || EVP_DigestInit_ex(s->ctx, EVP_sha256(), NULL) != 1)
		BUG("cannot start a sha256 digest");
}

void
sha_add(struct sha *s, const void *data, size_t len)
{
	EVP_DigestUpdate(s->ctx, data, len);
}

void
sha_adds(struct sha *s, const char *str)
{
	sha_add(s, str, strlen(str) + 1);
}

void
sha_addf(struct sha *s, const char *fmt, ...)
{
	va_list ap;
	char *str;

	va_start(ap, fmt);
	if (vasprintf(&str, fmt, ap) < 0)
		BUG("vasprintf failed");
	va_end(ap);
	sha_adds(s, str);
	free(str);
}

void
sha_hex(struct sha *s, char out[65])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned n = 0;

	EVP_DigestFinal_ex(s->ctx, md, &n);
	EVP_MD_CTX_free(s->ctx);
	s->ctx = NULL;
	for (unsigned i = 0; i < n && i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
	out[64] = '\0';
}
