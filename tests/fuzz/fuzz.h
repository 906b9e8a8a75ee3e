/*
 * fuzz: what the libFuzzer targets in tests/fuzz share.
 *
 * Each fz_NAME.c defines one static function, int fz_NAME(data, size),
 * that feeds the bytes to a pure parser and checks what the parser
 * promises (FZ_ASSERT aborts, which libFuzzer reports as a crash), then
 * FZ_MAIN(fz_NAME) makes it the LLVMFuzzerTestOneInput of that binary.
 * tests/unit/t_regress.c defines FZ_NO_MAIN and includes every target, so
 * the crash fixtures in tests/fixtures/fuzz-regress/NAME/ replay through
 * exactly the code the fuzzer ran, in `make check`.
 */
#ifndef RM_FUZZ_H
#define RM_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef FZ_NO_MAIN
#define FZ_MAIN(fn)
#else
#define FZ_MAIN(fn) \
	int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size); \
	int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) \
	{ \
		return fn(data, size); \
	}
#endif

#define FZ_ASSERT(c) do { \
	if (!(c)) { \
		fprintf(stderr, "%s:%d: broken promise: %s\n", __FILE__, __LINE__, #c); \
		abort(); \
	} \
} while (0)

/*
 * A NUL-terminated heap copy of the input, sized exactly, so that ASan
 * catches a parser reading past the terminator.  NULL only on ENOMEM.
 */
static inline char *fz_cstr(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		return NULL;
	if (size)
		memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/* Length of a valid UTF-8 sequence at s, 0 when invalid (C1 included). */
static inline size_t fz_utf8(const unsigned char *s, size_t n)
{
	unsigned c = s[0], cp, min;
	size_t len;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2, min = 0x80, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3, min = 0x800, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4, min = 0x10000, cp = c & 0x07;
	else
		return 0;
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) ||
	    (cp >= 0x80 && cp <= 0x9f))
		return 0;
	return len;
}

/*
 * What rm_sanitize promises of its output s (n bytes, out buffer of
 * size bytes): NUL-terminated at n, within size-1 and RM_TEXT_MAX (512)
 * bytes, no control character, DEL or ESC, valid UTF-8, no trailing
 * space.
 */
static inline void fz_check_clean(const char *s, size_t n, size_t size)
{
	const unsigned char *u = (const unsigned char *)s;

	FZ_ASSERT(n < size);
	FZ_ASSERT(n <= 512);
	FZ_ASSERT(strlen(s) == n);
	for (size_t i = 0; i < n;) {
		size_t l;
		FZ_ASSERT(u[i] >= 0x20 && u[i] != 0x7f);
		l = fz_utf8(u + i, n - i);
		FZ_ASSERT(l > 0);
		i += l;
	}
	FZ_ASSERT(n == 0 || s[n - 1] != ' ');
}

#endif
