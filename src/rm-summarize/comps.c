/*
 * comps.c: every compiler's figures in a folded exit log, 16 bytes and a
 * bit each (comps.h).  A figure is a u32: a time in whole milliseconds
 * (rm-tree writes three decimals, and ms / 1000.0 is then the very double
 * read) or a peak in whole KiB; any other value is kept as a double in
 * side[] and the u32 says where (C_SIDE); C_NAN is unknown.  Ten million
 * exit rows, one in eight a compiler, keep 20 MB here, where a struct of
 * doubles and the sweep's copies took 96 bytes a compiler.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "comps.h"
#include "report.h"
#include "util.h"

#define C_NAN 0xffffffffu
#define C_SIDE 0x80000000u

static uint32_t enc(struct comps *c, double v, double scale)
{
	if (isnan(v))
		return C_NAN;
	if (v >= 0 && v * scale < (double)(C_SIDE - 1)) {
		uint32_t x = (uint32_t)llround(v * scale);
		if ((double)x / scale == v)
			return x;
	}
	if (c->nside == c->capside) {
		c->capside = c->capside ? 2 * c->capside : 16;
		c->side = xrealloc(c->side, c->capside * sizeof(*c->side));
	}
	c->side[c->nside] = v;
	return C_SIDE | (uint32_t)c->nside++;
}

static double dec(const struct comps *c, uint32_t x, double scale)
{
	if (x == C_NAN)
		return NAN;
	if (x & C_SIDE)
		return c->side[x & ~C_SIDE];
	return (double)x / scale;
}

void comps_add(struct comps *c, double peak, double t, double start, double end, int emulated)
{
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 256;
		c->peak = xrealloc(c->peak, cap * sizeof(*c->peak));
		c->t = xrealloc(c->t, cap * sizeof(*c->t));
		c->start = xrealloc(c->start, cap * sizeof(*c->start));
		c->end = xrealloc(c->end, cap * sizeof(*c->end));
		c->emu = xrealloc(c->emu, cap / 8);
		memset(c->emu + c->cap / 8, 0, (cap - c->cap) / 8);
		c->cap = cap;
	}
	c->peak[c->n] = enc(c, peak, 1);
	c->t[c->n] = enc(c, t, 1000);
	c->start[c->n] = enc(c, start, 1000);
	c->end[c->n] = enc(c, end, 1000);
	if (emulated)
		c->emu[c->n / 8] |= (unsigned char)(1u << (c->n % 8));
	c->n++;
}

/* What a sort orders k[] by: pri[] first (whole numbers) where given,
 * then k's values (scale: 1 a peak, 1000 a time), unknown as nanv. */
struct by {
	const struct comps *c;
	uint32_t *k, *pri;
	double scale, nanv;
};

static double val(const struct by *b, size_t i)
{
	double v = dec(b->c, b->k[i], b->scale);

	/* Never NaN: the partition's sentinels need a total order. */
	if (isnan(v))
		v = b->nanv;
	return isnan(v) ? INFINITY : v;
}

static int cmp(const struct by *b, size_t i, size_t j)
{
	double x, y;

	if (b->pri && b->pri[i] != b->pri[j])
		return b->pri[i] < b->pri[j] ? -1 : 1;
	x = val(b, i);
	y = val(b, j);
	return (x > y) - (x < y);
}

static void swap(const struct by *b, size_t i, size_t j)
{
	uint32_t t = b->k[i];

	b->k[i] = b->k[j];
	b->k[j] = t;
	if (b->pri) {
		t = b->pri[i];
		b->pri[i] = b->pri[j];
		b->pri[j] = t;
	}
}

/* Quicksort of [lo, lo + n) in place (median of three, the smaller side
 * first so the stack stays short; insertion sort below 13): qsort(3)
 * would take a copy of what it sorts. */
static void sort(const struct by *b, size_t lo, size_t n)
{
	while (n > 12) {
		size_t m = lo + n / 2, i = lo, j = lo + n - 1;
		if (cmp(b, m, lo) < 0)
			swap(b, m, lo);
		if (cmp(b, j, lo) < 0)
			swap(b, j, lo);
		if (cmp(b, j, m) < 0)
			swap(b, j, m);
		/* The pivot to lo + 1, out of the way of the swaps. */
		swap(b, m, lo + 1);
		for (i = lo + 1, j = lo + n - 1;;) {
			do
				i++;
			while (cmp(b, i, lo + 1) < 0);
			do
				j--;
			while (cmp(b, lo + 1, j) < 0);
			if (i >= j)
				break;
			swap(b, i, j);
		}
		swap(b, lo + 1, j);
		/* [lo, j) <= pivot at j <= (j, lo + n) */
		if (j - lo < lo + n - j - 1) {
			sort(b, lo, j - lo);
			n = lo + n - j - 1;
			lo = j + 1;
		} else {
			sort(b, j + 1, lo + n - j - 1);
			n = j - lo;
		}
	}
	for (size_t i = lo + 1; i < lo + n; i++)
		for (size_t k = i; k > lo && cmp(b, k, k - 1) < 0; k--)
			swap(b, k, k - 1);
}

void comps_stage_peaks(struct comps *c, struct report *r, double off)
{
	size_t m = 0;

	if (!c->peak)
		return;  /* done, or no compiler */
	/* Each compiler with a peak: its stage into t[], packed to the front. */
	for (size_t i = 0; i < c->n; i++) {
		double peak = dec(c, c->peak[i], 1), t = dec(c, c->t[i], 1000);
		int si;
		if (isnan(peak))
			continue;
		si = stage_at(r, isnan(t) ? NAN : off + t);
		if (si < 0)
			si = stage_intern(r, "", 0);
		r->stages[si].ncp++;
		r->stages[si].ncp_emu += (c->emu[i / 8] >> (i % 8)) & 1;
		c->t[m] = (uint32_t)si;
		c->peak[m++] = c->peak[i];
	}
	sort(&(struct by){ c, c->peak, c->t, 1, NAN }, 0, m);
	for (size_t i = 0; i < m;) {
		struct stage *st = &r->stages[c->t[i]];
		size_t n = 0, rank;
		while (i + n < m && c->t[i + n] == c->t[i])
			n++;
		rank = (size_t)ceil(0.95 * (double)n);
		st->cp_p95 = dec(c, c->peak[i + (rank ? rank : 1) - 1], 1);
		st->cp_max = dec(c, c->peak[i + n - 1], 1);
		st->cp_folded = 1;
		i += n;
	}
	free(c->peak);
	free(c->t);
	free(c->emu);
	c->peak = c->t = NULL;
	c->emu = NULL;
}

int comps_next(struct comps *c, double last, double *t, int *d)
{
	double s, e;

	if (!c->sorted) {
		/* The compilers with a start; their ends, a survivor's last. */
		size_t k = 0;
		for (size_t i = 0; i < c->n; i++)
			if (c->start[i] != C_NAN) {
				c->start[k] = c->start[i];
				c->end[k++] = c->end[i];
			}
		c->ns = k;
		c->is = c->ie = 0;
		sort(&(struct by){ c, c->start, NULL, 1000, NAN }, 0, k);
		sort(&(struct by){ c, c->end, NULL, 1000, last }, 0, k);
		c->sorted = 1;
	}
	if (c->is == c->ns && c->ie == c->ns)
		return 0;
	e = c->ie < c->ns ? dec(c, c->end[c->ie], 1000) : NAN;
	if (c->ie < c->ns && isnan(e))
		e = last;
	s = c->is < c->ns ? dec(c, c->start[c->is], 1000) : NAN;
	/* An end before a start at the same time. */
	if (c->is == c->ns || (c->ie < c->ns && e <= s)) {
		*t = e;
		*d = -1;
		c->ie++;
	} else {
		*t = s;
		*d = 1;
		c->is++;
	}
	return 1;
}

void comps_free(struct comps *c)
{
	free(c->peak);
	free(c->t);
	free(c->start);
	free(c->end);
	free(c->emu);
	free(c->side);
	memset(c, 0, sizeof(*c));
}
