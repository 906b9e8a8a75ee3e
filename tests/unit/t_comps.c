/*
 * t_comps: a folded exit log's compilers (src/rm-summarize/comps.c), 16
 * bytes each, give each stage's count, p95 (nearest rank) and largest
 * peak, and the sweep's events in time order (an end before a start at
 * the same time, a survivor's end the run's last), exactly as sorting
 * doubles with qsort(3) does: over random compilers with whole and
 * fractional peaks and times, unknown ones, and ties.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "../../src/rm-summarize/comps.c"

/* What comps.c calls of the rest of rm-summarize. */
void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		abort();
	return p;
}

void *xrealloc(void *p, size_t n)
{
	if (!(p = realloc(p, n ? n : 1)))
		abort();
	return p;
}

/* Seven stages by whole second; no time: none (-1, the unnamed one). */
int stage_at(const struct report *r, double epoch)
{
	(void)r;
	return isnan(epoch) ? -1 : (int)((long)epoch % 7);
}

int stage_intern(struct report *r, const char *raw, size_t len)
{
	(void)r;
	(void)raw;
	(void)len;
	return 7;
}

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

struct ev {
	double t;
	int d;
};

/* model.c's cev_cmp. */
static int ev_cmp(const void *a, const void *b)
{
	const struct ev *x = a, *y = b;

	if (x->t != y->t)
		return (x->t > y->t) - (x->t < y->t);
	return x->d - y->d;
}

static double pick(int one_in, double v)
{
	return rand() % one_in == 0 ? NAN : v;
}

static void random_compilers(void)
{
	srand(1);
	for (int round = 0; round < 300; round++) {
		struct comps c;
		struct report r;
		struct stage st[8];
		size_t n = (size_t)(rand() % 3000), nst[8] = { 0 }, ne = 0, k = 0;
		double *pk = malloc((n + 1) * sizeof(*pk)), *pt = malloc((n + 1) * sizeof(*pt));
		double *by[8], last = 5000.5, t;
		struct ev *ev = malloc((2 * n + 1) * sizeof(*ev));
		int d;

		memset(&c, 0, sizeof(c));
		memset(&r, 0, sizeof(r));
		memset(st, 0, sizeof(st));
		r.stages = st;
		r.nstages = 8;
		for (size_t i = 0; i < n; i++) {
			/* whole and fractional KiB; ms and tenths of ms; ties */
			double peak = pick(5, rand() % 3 ? (double)(rand() % 1000) : rand() % 1000 + 0.25);
			double at = pick(9, (rand() % 2000) / 10.0);
			double s = pick(8, rand() % 3 ? (rand() % 40000) / 1000.0 : (rand() % 400000) / 10000.0);
			double e = pick(6, (isnan(s) ? 1.0 : s) + (rand() % 5000) / 1000.0);
			comps_add(&c, peak, at, s, e, rand() % 2);
			pk[i] = peak;
			pt[i] = at;
			if (!isnan(s)) {
				ev[ne++] = (struct ev){ s, 1 };
				ev[ne++] = (struct ev){ isnan(e) ? last : e, -1 };
			}
		}
		for (int j = 0; j < 8; j++)
			by[j] = malloc((n + 1) * sizeof(double));
		for (size_t i = 0; i < n; i++) {
			int si;
			if (isnan(pk[i]))
				continue;
			si = stage_at(&r, isnan(pt[i]) ? NAN : 100 + pt[i]);
			si = si < 0 ? 7 : si;
			by[si][nst[si]++] = pk[i];
		}
		comps_stage_peaks(&c, &r, 100);
		for (int j = 0; j < 8; j++) {
			CHECK_U64(st[j].ncp, nst[j]);
			if (nst[j]) {
				size_t rank = (size_t)ceil(0.95 * (double)nst[j]);
				qsort(by[j], nst[j], sizeof(double), dbl_cmp);
				CHECK(st[j].cp_folded);
				CHECK(st[j].cp_p95 == by[j][(rank ? rank : 1) - 1]);
				CHECK(st[j].cp_max == by[j][nst[j] - 1]);
			}
			free(by[j]);
		}
		qsort(ev, ne, sizeof(*ev), ev_cmp);
		while (comps_next(&c, last, &t, &d)) {
			CHECK(k < ne);
			if (k >= ne)
				break;
			CHECK(t == ev[k].t && d == ev[k].d);
			k++;
		}
		CHECK_U64(k, ne);
		comps_free(&c);
		free(pk);
		free(pt);
		free(ev);
		if (tap_cur)
			break;
	}
}

int main(void)
{
	RUN(random_compilers);
	return tap_done();
}
