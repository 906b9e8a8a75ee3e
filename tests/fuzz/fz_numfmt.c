/*
 * fz_numfmt: the number formatter every CSV, JSON and Prometheus row goes
 * through (rm_buf_num, rm_buf_json_num, rm_buf_u64, and the emitters).
 * Input: one byte of decimals (its value mod 10), then a number strtod
 * reads.  Round trip: what is printed parses back to the value, exactly
 * for integers, and within half a unit of the last printed digit for the
 * others.  NaN and infinity print as nothing (CSV) and null (JSON),
 * never as a number; no byte other than "-0123456789." is ever printed.
 * The same text read by strtoull must print back digit for digit.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>

#include "fuzz.h"
#include "emit.h"
#include "text.h"

static void fz_check_num(double v, int prec)
{
	struct rm_buf b = { 0 };
	char *end;
	double back, tol;

	rm_buf_num(&b, v, prec);
	FZ_ASSERT(!b.oom);
	if (!isfinite(v)) {
		FZ_ASSERT(b.len == 0);
		rm_buf_json_num(&b, v, prec);
		FZ_ASSERT(b.len == 4 && memcmp(b.p, "null", 4) == 0);
		rm_buf_free(&b);
		return;
	}
	FZ_ASSERT(b.len > 0 && b.len <= 1 + 309 + 1 + 17);
	FZ_ASSERT(strlen(b.p) == b.len);
	FZ_ASSERT(strspn(b.p, "-0123456789.") == b.len);
	FZ_ASSERT(b.p[0] != '.' && b.p[b.len - 1] != '.');
	/* The decimals asked for, no more, no fewer. */
	if (prec > 0) {
		const char *dot = strchr(b.p, '.');
		FZ_ASSERT(dot && (size_t)(b.p + b.len - dot - 1) == (size_t)prec);
	} else {
		FZ_ASSERT(!strchr(b.p, '.'));
	}
	errno = 0;
	back = strtod(b.p, &end);
	FZ_ASSERT(*end == '\0');
	FZ_ASSERT(isfinite(back));
	/* Never "-0": a negative print is a nonzero value. */
	if (b.p[0] == '-')
		FZ_ASSERT(back != 0);
	if (v == floor(v)) {
		FZ_ASSERT(back == v || (back == 0 && v == 0));
	} else {
		/* Half a unit of the last digit, plus the rounding of the
		 * decimal text back to the nearest double. */
		tol = 0.5 * pow(10, -prec) + fabs(v) * 4 * 2.220446049250313e-16;
		FZ_ASSERT(fabs(back - v) <= tol);
	}
	rm_buf_free(&b);
}

static void fz_check_u64(const char *s)
{
	struct rm_buf b = { 0 };
	char *end;
	uint64_t v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (end == s || errno)
		return;
	rm_buf_u64(&b, v);
	FZ_ASSERT(!b.oom && b.len > 0);
	FZ_ASSERT(strspn(b.p, "0123456789") == b.len);
	FZ_ASSERT(strtoull(b.p, NULL, 10) == v);
	rm_buf_free(&b);
}

/* One row of each emitter: a NaN is never printed as a number. */
static void fz_check_emit(double v, int prec)
{
	static const struct rm_col cols[2] = {
		{ "x", RM_P_GAUGE, "rm_x", "x.", 0 },
		{ "u", RM_P_COUNTER, "rm_u", "u.", 0 },
	};
	struct rm_val row[2] = { rm_num(v, prec), rm_u64(UINT64_MAX) };
	struct rm_buf b = { 0 };

	rm_emit_csv_row(&b, cols, row, 2);
	FZ_ASSERT(!b.oom);
	if (!isfinite(v))
		FZ_ASSERT(strcmp(b.p, ",18446744073709551615\n") == 0);
	else
		FZ_ASSERT(strlen(b.p) == b.len && strstr(b.p, ",18446744073709551615\n"));
	rm_buf_reset(&b);
	rm_emit_jsonl(&b, cols, row, 2);
	if (!isfinite(v))
		FZ_ASSERT(strcmp(b.p, "{\"x\":null,\"u\":18446744073709551615}\n") == 0);
	rm_buf_reset(&b);
	rm_emit_prom(&b, cols, row, 2, 1, NULL);
	FZ_ASSERT(strstr(b.p, "\nrm_u 18446744073709551615\n"));
	FZ_ASSERT(!isfinite(v) == !strstr(b.p, "rm_x "));
	rm_buf_free(&b);
}

static int fz_numfmt(const uint8_t *data, size_t size)
{
	char *s;
	int prec;
	double v;

	if (size < 1)
		return 0;
	prec = data[0] % 10;
	s = fz_cstr(data + 1, size - 1);
	if (!s)
		return 0;
	v = strtod(s, NULL);
	fz_check_num(v, prec);
	fz_check_num(-v, prec);
	fz_check_emit(v, prec);
	fz_check_u64(s);
	/* The raw bytes as a double: every NaN payload and subnormal. */
	if (size - 1 >= sizeof(double)) {
		memcpy(&v, data + 1, sizeof(v));
		fz_check_num(v, prec);
	}
	free(s);
	return 0;
}

FZ_MAIN(fz_numfmt)
