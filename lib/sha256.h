/*
 * sha256: SHA-256 (FIPS 180-4) of a byte string, as lowercase hex.
 *
 * Used to find a docker context's metadata: the CLI keeps context NAME
 * under contexts/meta/HEX/meta.json, HEX the SHA-256 of NAME.  Not for
 * anything secret: no care is taken against timing or for wiping.
 */
#ifndef RM_SHA256_H
#define RM_SHA256_H

#include <stddef.h>

/* The digest of s[0..n) into hex (65 bytes: 64 digits and a NUL). */
void rm_sha256_hex(const void *s, size_t n, char hex[65]);

#endif
