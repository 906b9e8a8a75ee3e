/*
 * util.c: see util.h.  Errors go through err(3): glibc names the program
 * by program_invocation_short_name, which main sets.
 */
#include <err.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outfile.h"
#include "util.h"

const char prog[] = "rm-summarize";

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		errx(RM_EXIT_FAIL, "out of memory");
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		errx(RM_EXIT_FAIL, "out of memory");
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		errx(RM_EXIT_FAIL, "out of memory");
	return p;
}

char *xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *sanitized(const char *s, size_t n)
{
	char tmp[RM_TEXT_MAX + 1];
	size_t m = rm_sanitize(s, n, tmp, sizeof(tmp));

	return xstrndup(tmp, m);
}

/* Powers of ten for the fraction, as multipliers (a multiply is several
 * times cheaper than a divide, and the last-bit difference is far below
 * any reading's precision). */
static const double negpow10[] = {
	1e0, 1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10, 1e-11, 1e-12,
	1e-13, 1e-14, 1e-15, 1e-16, 1e-17, 1e-18,
};

/*
 * A CSV number: [-]digits[.digits], surrounding spaces allowed.  NaN when
 * the field is empty or anything else (no exponents, no "nan").  Hand
 * rolled because it runs for every field of a million-row file.
 */
double field_num(const struct rm_csv_field *f)
{
	const unsigned char *p = (const unsigned char *)f->p, *e = p + f->len;
	uint64_t ip = 0, fp = 0;
	int neg = 0, nd = 0, fd = 0;
	double v;

	while (p < e && *p == ' ')
		p++;
	while (e > p && e[-1] == ' ')
		e--;
	if (p < e && (*p == '-' || *p == '+'))
		neg = *p++ == '-';
	while (p < e && (unsigned)(*p - '0') < 10) {
		if (nd >= 18)
			return NAN; /* not a reading any of our files holds */
		ip = ip * 10 + (uint64_t)(*p++ - '0');
		nd++;
	}
	if (p < e && *p == '.') {
		p++;
		while (p < e && (unsigned)(*p - '0') < 10) {
			if (fd < 18) {
				fp = fp * 10 + (uint64_t)(*p - '0');
				fd++;
			}
			p++;
			nd++;
		}
	}
	if (p != e || nd == 0)
		return NAN;
	v = (double)ip + (double)fp * negpow10[fd];
	return neg ? -v : v;
}

int header_col(const struct rm_csv_field *f, int n, const char *name)
{
	size_t len = strlen(name);

	for (int i = 0; i < n; i++) {
		const char *p = f[i].p;
		size_t l = f[i].len;
		if (i == 0 && l >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0) {
			p += 3; /* a UTF-8 byte order mark from a spreadsheet */
			l -= 3;
		}
		while (l && p[0] == ' ') {
			p++;
			l--;
		}
		while (l && p[l - 1] == ' ')
			l--;
		if (l == len && memcmp(p, name, len) == 0)
			return i;
	}
	return -1;
}

/*
 * Write b to path as a whole: a temporary file renamed into place, so an
 * existing file is replaced only by a complete one (see outfile.h).
 * Returns 0, or -1 with errno set (ELOOP: a symlink at path).
 */
int write_whole(const char *path, const struct rm_buf *b)
{
	struct rm_outfile o;
	char why[128];

	if (b->oom) {
		errno = ENOMEM;
		return -1;
	}
	if (rm_out_open(path, &o, why, sizeof(why)) < 0)
		return -1;
	if (rm_buf_write(o.fd, b) < 0) {
		rm_out_abort(&o);
		return -1;
	}
	return rm_out_commit(&o, why, sizeof(why));
}

/* Why an output file could not be written, in words. */
const char *write_why(int e)
{
	/* A symlink planted where the output goes is refused. */
	return e == ELOOP ? RM_OUT_SYMLINK_WHY : e == ENXIO ? "a FIFO with no reader" : strerror(e);
}
