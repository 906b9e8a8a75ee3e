/*
 * tap: a minimal TAP producer for the C unit tests.  Each TEST is one
 * TAP line; CHECKs inside it print a diagnostic and fail that test.
 */
#ifndef RM_TAP_H
#define RM_TAP_H

#include <math.h>
#include <stdio.h>
#include <string.h>

static int tap_n, tap_failed, tap_cur;

#define CHECK(c) do { \
	if (!(c)) { \
		printf("#   %s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #c); \
		tap_cur = 1; \
	} \
} while (0)

#define CHECK_STR(a, b) do { \
	const char *a_ = (a), *b_ = (b); \
	if (!a_ || !b_ || strcmp(a_, b_) != 0) { \
		printf("#   %s:%d: '%s' != '%s'\n", __FILE__, __LINE__, a_ ? a_ : "(null)", b_ ? b_ : "(null)"); \
		tap_cur = 1; \
	} \
} while (0)

#define CHECK_U64(a, b) do { \
	unsigned long long a_ = (a), b_ = (b); \
	if (a_ != b_) { \
		printf("#   %s:%d: %s = %llu, expected %llu\n", __FILE__, __LINE__, #a, a_, b_); \
		tap_cur = 1; \
	} \
} while (0)

#define CHECK_NEAR(a, b, eps) do { \
	double a_ = (a), b_ = (b); \
	if (!(fabs(a_ - b_) <= (eps))) { \
		printf("#   %s:%d: %s = %g, expected %g\n", __FILE__, __LINE__, #a, a_, b_); \
		tap_cur = 1; \
	} \
} while (0)

static inline void tap_run(const char *name, void (*fn)(void))
{
	tap_cur = 0;
	fn();
	tap_n++;
	if (tap_cur)
		tap_failed++;
	printf("%sok %d - %s\n", tap_cur ? "not " : "", tap_n, name);
	fflush(stdout);
}

#define RUN(fn) tap_run(#fn, fn)

static inline int tap_done(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

#endif
