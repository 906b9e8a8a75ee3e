/*
 * sys.c: a system CSV (rm-sample's, or the seed script's 14 columns)
 * folded row by row into what the summary prints.  Nothing here grows
 * with rows except the stage table and its change points, and the OOM
 * kills; the SVG series are kept in a fixed number of time buckets that
 * double their width when the run outgrows them.
 *
 * This file is long because one pass over the rows feeds every fold
 * (peaks, runs, stages, cgroup, OOM, energy, disk) and the verdicts read
 * what those folds kept: each fold is short and the file reads top down,
 * row in (sys_row), then the disk fit, then the verdicts (sys_finish).
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "containers.h"
#include "oom.h"
#include "schema.h"
#include "sys.h"

/* The columns read (report.h's SC_ order), by their place in rm-sample's
 * table (lib/schema.h): the name is the writer's. */
static const int sc_cols[SC_N] = {
	RM_SC_EPOCH, RM_SC_ELAPSED_S, RM_SC_LOAD1, RM_SC_CPU_PCT, RM_SC_MEM_USED_MB,
	RM_SC_MEM_AVAIL_MB, RM_SC_MEM_PCT, RM_SC_SWAP_USED_MB, RM_SC_DISK_AVAIL_GB, RM_SC_DISK_PCT,
	RM_SC_COMPILERS, RM_SC_STAGE, RM_SC_CONTEXT, RM_SC_OOM_KILLS, RM_SC_PSI_MEM_FULL,
	RM_SC_PKG_W, RM_SC_GPU_BUSY_PCT, RM_SC_GPU_VRAM_USED_MB, RM_SC_GPU_VRAM_TOTAL_MB,
	RM_SC_CG_MEM_AVAIL_MB, RM_SC_CG_MEM_LIMIT_MB, RM_SC_CORES, RM_SC_CG_OOM_KILLS,
};

int sys_is_header(const struct rm_csv *hdr)
{
	static const char *const any[] = {
		"load1", "cpu_pct", "mem_used_mb", "mem_avail_mb", "swap_used_mb",
		"disk_avail_gb", "compilers", "pkg_w", "gpu_busy_pct",
	};

	if (header_col(hdr->f, hdr->nf, "epoch") < 0)
		return 0;
	for (size_t i = 0; i < sizeof(any) / sizeof(any[0]); i++)
		if (header_col(hdr->f, hdr->nf, any[i]) >= 0)
			return 1;
	return 0;
}

struct sys *sys_new(const char *file, const struct rm_csv *hdr)
{
	struct sys *s = xmalloc(sizeof(*s));

	memset(s, 0, sizeof(*s));
	s->file = xstrndup(file, strlen(file));
	s->ncols = hdr->nf;
	for (int i = 0; i < SC_N; i++)
		s->col[i] = header_col(hdr->f, hdr->nf, rm_sc_names[sc_cols[i]]);
	/* The seed's 14 columns are the first 14 of rm-sample's table. */
	s->seed = hdr->nf == RM_SC_SEED_N;
	for (int i = 0; i < RM_SC_SEED_N && s->seed; i++)
		if (hdr->f[i].len != strlen(rm_sc_names[i]) ||
		    memcmp(hdr->f[i].p, rm_sc_names[i], hdr->f[i].len) != 0)
			s->seed = 0;
	s->format = s->seed ? "seed" : header_col(hdr->f, hdr->nf, "pkg_j") >= 0 ? "rm-energy" : "rm-sample";
	for (int i = 0; i < PK_N; i++) {
		s->pk[i].stage = -1;
		s->pk[i].aux = NAN;
	}
	s->near.first_stage = s->low.first_stage = -1;
	s->first_epoch = s->last_epoch = s->prev_epoch = s->first_elapsed = NAN;
	s->origin = s->prev_el = NAN;
	s->oom_prev = s->cg_oom_prev = NAN;
	s->disk_first = s->disk_last = s->swap_first = s->swap_last = NAN;
	s->mem_total_mb = s->vram_total_mb = NAN;
	s->cur_stage = -1;
	s->bw = 0.125;
	s->cg_avail.stage = -1;
	s->cg_avail.aux = s->cg_host_avail = s->cg_limit_min = s->cg_limit_last = NAN;
	return s;
}

void sys_free(struct sys *s)
{
	if (!s)
		return;
	free(s->file);
	for (size_t i = 0; i < s->nev; i++)
		for (int k = 0; k < MAX_VICTIMS; k++)
			free(s->ev[i].vx[k].beside);
	free(s->ev);
	free(s->segs);
	free(s);
}

/* The row being folded: its fields, and how many of them count. */
struct row {
	struct rm_csv *c;
	int n;
	const struct sys *s;
};

static const struct rm_csv_field *fld(const struct row *w, int k)
{
	int i = w->s->col[k];
	return i >= 0 && i < w->n ? &w->c->f[i] : NULL;
}

static double val(const struct row *w, int k)
{
	const struct rm_csv_field *f = fld(w, k);
	return f ? field_num(f) : NAN;
}

/*
 * Copy the row's context, raw, into dst.  A seed CSV's context is its
 * last column and the seed script did not quote it, so fields past the
 * header's count are the rest of that line and are joined back.
 */
static size_t ctx_copy(const struct row *w, char *dst, size_t size)
{
	const struct rm_csv_field *f = fld(w, SC_CONTEXT);
	size_t n = 0;
	int last;

	if (!f)
		return 0;
	last = w->s->col[SC_CONTEXT] == w->s->ncols - 1 ? w->n - 1 : w->s->col[SC_CONTEXT];
	for (int i = w->s->col[SC_CONTEXT]; i <= last && n < size; i++) {
		const struct rm_csv_field *g = &w->c->f[i];
		size_t m = g->len;
		if (i > w->s->col[SC_CONTEXT])
			dst[n++] = ',';
		if (m > size - n)
			m = size - n;
		memcpy(dst + n, g->p, m);
		n += m;
	}
	return n;
}

static void peak_set(struct peak *p, double v, double epoch, int auxcol, int stage,
		     const struct row *w)
{
	p->known = 1;
	p->v = v;
	p->epoch = epoch;
	p->aux = auxcol >= 0 ? val(w, auxcol) : NAN;
	p->stage = stage;
	p->ctxlen = ctx_copy(w, p->ctx, sizeof(p->ctx));
}

/* Keep the first row with the highest (dir 1) or lowest (dir -1) value. */
/* auxcol: a column read only when the peak moves (mem_pct, disk_pct), or -1. */
static void peak_fold(struct peak *p, int dir, double v, double epoch, int auxcol, int stage,
		      const struct row *w)
{
	if (isnan(v))
		return;
	if (!p->known || (dir > 0 ? v > p->v : v < p->v))
		peak_set(p, v, epoch, auxcol, stage, w);
}

static void run_fold(struct runstat *rs, int cond, double epoch, int stage)
{
	if (!cond) {
		rs->cur = 0;
		return;
	}
	if (rs->samples++ == 0) {
		rs->first_epoch = epoch;
		rs->first_stage = stage;
	}
	if (rs->cur++ == 0)
		rs->cur_start = epoch;
	if (rs->cur > rs->longest) {
		rs->longest = rs->cur;
		rs->longest_start = rs->cur_start;
		rs->longest_end = epoch;
	}
}

static void bucket_fold(struct sys *s, double t, const double *v)
{
	long i;

	if (t < 0)
		t = 0;
	i = (long)(t / s->bw);
	while (i >= SVG_NB) {
		/* Halve the resolution: merge neighbours, double the width. */
		for (int k = 0; k < SVG_NB / 2; k++) {
			struct bucket m = s->b[2 * k];
			const struct bucket *o = &s->b[2 * k + 1];
			for (int j = 0; j < SV_N; j++) {
				unsigned bit = 1u << j;
				if (!(o->has & bit))
					continue;
				if (!(m.has & bit)) {
					m.min[j] = o->min[j];
					m.max[j] = o->max[j];
				} else {
					if (o->min[j] < m.min[j])
						m.min[j] = o->min[j];
					if (o->max[j] > m.max[j])
						m.max[j] = o->max[j];
				}
				m.has |= bit;
			}
			s->b[k] = m;
		}
		memset(&s->b[SVG_NB / 2], 0, sizeof(s->b[0]) * (SVG_NB / 2));
		s->bw *= 2;
		s->nb = (s->nb + 1) / 2;
		i = (long)(t / s->bw);
	}
	struct bucket *b = &s->b[i];
	for (int j = 0; j < SV_N; j++) {
		unsigned bit = 1u << j;
		float f;
		if (isnan(v[j]))
			continue;
		f = (float)v[j];
		if (!(b->has & bit)) {
			b->min[j] = b->max[j] = f;
			b->has |= bit;
		} else {
			if (f < b->min[j])
				b->min[j] = f;
			if (f > b->max[j])
				b->max[j] = f;
		}
	}
	if (i + 1 > s->nb)
		s->nb = (int)i + 1;
}

static void stage_track(struct report *r, struct sys *s, const struct row *w, double epoch)
{
	const struct rm_csv_field *f = fld(w, SC_STAGE);
	const char *p = f ? f->p : "";
	size_t len = f ? f->len : 0;
	int idx;

	if (!f && s->col[SC_STAGE] >= 0 && s->cur_stage >= 0)
		return; /* a cut last row: still the same stage */
	if (s->cur_stage >= 0) {
		const struct stage *cur = &r->stages[s->cur_stage];
		if (cur->rawlen == len && memcmp(cur->raw, p, len) == 0)
			return;
	}
	idx = stage_intern(r, p, len);
	if (idx == s->cur_stage)
		return;
	s->cur_stage = idx;
	if (s->nseg == s->capseg) {
		s->capseg = s->capseg ? s->capseg * 2 : 16;
		s->segs = xrealloc(s->segs, s->capseg * sizeof(*s->segs));
	}
	s->segs[s->nseg].epoch = epoch;
	s->segs[s->nseg].stage = idx;
	s->segs[s->nseg].before = s->prev_epoch;
	s->nseg++;
}

static void oom_event(struct sys *s, const struct row *w, double epoch, long kills)
{
	struct oomev *e;

	if (s->nev == s->capev) {
		s->capev = s->capev ? s->capev * 2 : 8;
		s->ev = xrealloc(s->ev, s->capev * sizeof(*s->ev));
	}
	e = &s->ev[s->nev++];
	memset(e, 0, sizeof(*e));
	e->epoch = epoch;
	e->prev_epoch = isnan(s->prev_epoch) ? epoch - 1 : s->prev_epoch;
	e->stage = s->cur_stage;
	e->kills = kills;
	e->cg_kills = -1;
	e->ctxlen = ctx_copy(w, e->ctx, sizeof(e->ctx));
	/* The kill came after the row before: its context is the last read
	 * before the kill (oom.c picks by the kill's time). */
	e->has_prev = s->nrows_ctx > 0;
	memcpy(e->pctx, s->lastctx, s->lastctxlen);
	e->pctxlen = s->lastctxlen;
	e->pctx[e->pctxlen] = '\0';
	e->cg_limit_mb = val(w, SC_CG_LIMIT);
}

/*
 * The build's cgroup (rm-sample --cgroup-path): its lowest available
 * memory, its tightest limit, the effective cores.  Returns 1 when the
 * row is near-OOM by the cgroup: available below the smaller of
 * --near-oom-mb and 15 % of its limit.
 */
static int cgroup_fold(struct sys *s, struct stage *st, const struct row *w, double host_avail,
		       double epoch, const struct opts *o)
{
	double av = val(w, SC_CG_AVAIL), lim = val(w, SC_CG_LIMIT), cores = val(w, SC_CORES);
	double thr;

	if (!isnan(cores) && cores >= 1 && cores < 1e6)
		s->cores = (int)cores;
	if (st->samples == 1)
		st->min_cg_avail = NAN;
	if (isnan(av) || isnan(lim))
		return 0;
	if (isnan(st->min_cg_avail) || av < st->min_cg_avail)
		st->min_cg_avail = av;
	if (isnan(s->cg_limit_min) || lim < s->cg_limit_min)
		s->cg_limit_min = lim;
	if (!isnan(s->cg_limit_last) && lim != s->cg_limit_last && s->nlimch < MAX_LIMCH) {
		s->limch[s->nlimch].epoch = epoch;
		s->limch[s->nlimch].from = s->cg_limit_last;
		s->limch[s->nlimch].to = lim;
		s->nlimch++;
	}
	s->cg_limit_last = lim;
	if (!s->cg_avail.known || av < s->cg_avail.v) {
		peak_set(&s->cg_avail, av, epoch, SC_CG_LIMIT, s->cur_stage, w);
		s->cg_host_avail = host_avail;
	}
	thr = 0.15 * lim < o->near_oom_mb ? 0.15 * lim : o->near_oom_mb;
	return av < thr;
}

/* After any time a CSV can hold (the year 10000): an epoch past this, or
 * before 1970, is not a time and its row is skipped. */
#define EPOCH_MAX 253402300800.0

/*
 * The row's time on one monotonic axis: the epoch of the first
 * timed row plus the elapsed_s offset, when the CSV has elapsed_s (a
 * clock step moves epoch, never elapsed_s); epoch alone in CSVs without
 * it (the seed's).  Every interval is measured on this axis; epoch is
 * only its origin, for printing absolute times.  NaN: no usable time.
 */
static double row_time(struct sys *s, const struct row *w)
{
	double epoch = val(w, SC_EPOCH), el = val(w, SC_ELAPSED);

	if (!(epoch >= 0 && epoch < EPOCH_MAX))
		return NAN;
	if (!(el >= 0 && el < EPOCH_MAX))
		return epoch;
	/* elapsed_s going back is a new run appended to the file (rm-sample
	 * -o twice): its own origin, from its own epoch. */
	if (isnan(s->origin) || el < s->prev_el)
		s->origin = epoch - el;
	s->prev_el = el;
	return s->origin + el;
}

/* a + b for input-fed counts: saturates instead of overflowing. */
static long add_sat(long a, double b)
{
	if (!(b > 0))
		return a;
	if (b >= (double)LONG_MAX || (long)b > LONG_MAX - a)
		return LONG_MAX;
	return a + (long)b;
}

/* A stage's own peaks and troughs (its first sample resets them). */
static void stage_fold(struct stage *st, double used, double avail, double disk, double comp)
{
	if (!isnan(used) && (isnan(st->peak_used) || st->samples == 1 || used > st->peak_used))
		st->peak_used = used;
	if (!isnan(avail) && (isnan(st->min_avail) || st->samples == 1 || avail < st->min_avail))
		st->min_avail = avail;
	if (!isnan(disk) && (isnan(st->min_disk) || st->samples == 1 || disk < st->min_disk))
		st->min_disk = disk;
	if (!isnan(comp) && (isnan(st->max_comp) || st->samples == 1 || comp > st->max_comp))
		st->max_comp = comp;
}

/* The disk's first and last readings, and the least-squares moments:
 * count, means and co-moments of (t, disk), updated row by row. */
static void disk_fold(struct sys *s, double t, double disk)
{
	double et, ed;

	if (isnan(disk))
		return;
	if (isnan(s->disk_first))
		s->disk_first = disk;
	s->disk_last = disk;
	if (s->dn == 0 || t < s->dtmin)
		s->dtmin = t;
	if (s->dn == 0 || t > s->dtmax)
		s->dtmax = t;
	s->dn += 1;
	et = t - s->dmt;
	ed = disk - s->dmd;
	s->dmt += et / s->dn;
	s->dmd += ed / s->dn;
	s->dctt += et * (t - s->dmt);
	s->dctd += et * (disk - s->dmd);
	s->dcdd += ed * (disk - s->dmd);
}

/* The rise of a counter column since its last reading (0 first time: both
 * counters count from the stream's start); *prev follows it. */
static long counter_rise(double v, double *prev)
{
	long k = 0;

	if (isnan(v))
		return 0;
	if (isnan(*prev) ? v > 0 : v > *prev)
		k = add_sat(0, v - (isnan(*prev) ? 0 : *prev));
	*prev = v;
	return k;
}

/* The oom_kills counter (host-wide): a rise is an OOM event of that many
 * kills; the build cgroup's cg_oom_kills rise beside it says how many of
 * them were in the build's cgroup, exactly. */
static void oom_fold(struct sys *s, const struct row *w, double epoch)
{
	double oom = val(w, SC_OOM), cg = val(w, SC_CG_OOM);
	long k, cgk;

	if (!isnan(cg))
		s->has_cg_oom = 1;
	cgk = counter_rise(cg, &s->cg_oom_prev);
	if (isnan(oom))
		return;
	s->has_oom = 1;
	k = counter_rise(oom, &s->oom_prev);
	if (k > 0) {
		oom_event(s, w, epoch, k);
		s->oom_total = add_sat(s->oom_total, (double)k);
		if (!isnan(cg))
			s->ev[s->nev - 1].cg_kills = cgk < k ? cgk : k;
	}
}

/* Package power: its peak, and energy integrated over the rows' time. */
static void energy_fold(struct sys *s, struct stage *st, const struct row *w, double epoch)
{
	double watts = val(w, SC_PKG_W), j;

	if (isnan(watts))
		return;
	peak_fold(&s->pk[PK_PKG_W], 1, watts, epoch, -1, s->cur_stage, w);
	if (s->samples > 1 && epoch > s->prev_epoch) {
		j = watts * (epoch - s->prev_epoch);
		s->energy_j += j;
		s->energy_s += epoch - s->prev_epoch;
		st->energy_j = (isnan(st->energy_j) ? 0 : st->energy_j) + j;
	}
}

/* The row's time, its stage, and the run's first and last times; the
 * stage it falls in, or NULL when the row has no time. */
static struct stage *time_fold(struct report *r, struct sys *s, const struct row *w, double *epoch)
{
	struct stage *st;

	*epoch = row_time(s, w);
	if (isnan(*epoch)) {
		s->skipped++;
		return NULL;
	}
	if (s->samples > 0 && s->cur_stage >= 0) {
		double dt = *epoch - s->prev_epoch;
		if (dt > 0)
			r->stages[s->cur_stage].duration += dt;
	}
	stage_track(r, s, w, *epoch);
	st = &r->stages[s->cur_stage];
	if (st->samples++ == 0)
		st->first_epoch = *epoch;
	if (s->samples++ == 0) {
		s->first_epoch = *epoch;
		s->first_elapsed = val(w, SC_ELAPSED);
		if (isnan(s->first_elapsed))
			s->first_elapsed = 0;
	}
	/* Rows out of order (hand-made) never make the run shorter. */
	if (isnan(s->last_epoch) || *epoch > s->last_epoch)
		s->last_epoch = *epoch;
	return st;
}

int sys_row(struct report *r, struct rm_csv *c, char *why, size_t wsize)
{
	struct sys *s = r->sys;
	struct row w = { c, c->nf, s };
	double epoch, used, avail, swap, disk, comp, cpu, t;
	const struct opts *o = r->opt;
	struct stage *st;
	int near;

	if (c->nf < s->ncols && !c->cut) {
		snprintf(why, wsize, "%d field%s where the header has %d", c->nf,
			 c->nf == 1 ? "" : "s", s->ncols);
		return -1;
	}
	if (c->cut) {
		/* The last row, cut short by the end of the file: its last
		 * field may be cut too, so it is not read. */
		w.n--;
		s->cut_rows++;
	}
	st = time_fold(r, s, &w, &epoch);
	if (!st)
		return 0;
	t = epoch - s->first_epoch;
	used = val(&w, SC_USED);
	avail = val(&w, SC_AVAIL);
	swap = val(&w, SC_SWAP);
	disk = val(&w, SC_DISK);
	comp = val(&w, SC_COMP);
	cpu = val(&w, SC_CPU);

	if (isnan(s->mem_total_mb) && !isnan(used) && !isnan(avail))
		s->mem_total_mb = used + avail;
	peak_fold(&s->pk[PK_MEM_USED], 1, used, epoch, SC_MEMPCT, s->cur_stage, &w);
	peak_fold(&s->pk[PK_MEM_AVAIL], -1, avail, epoch, -1, s->cur_stage, &w);
	peak_fold(&s->pk[PK_SWAP], 1, swap, epoch, -1, s->cur_stage, &w);
	peak_fold(&s->pk[PK_DISK], -1, disk, epoch, SC_DISKPCT, s->cur_stage, &w);
	peak_fold(&s->pk[PK_LOAD], 1, val(&w, SC_LOAD1), epoch, -1, s->cur_stage, &w);
	peak_fold(&s->pk[PK_CPU], 1, cpu, epoch, -1, s->cur_stage, &w);

	near = !isnan(avail) && avail < o->near_oom_mb;
	near |= cgroup_fold(s, st, &w, avail, epoch, o);
	run_fold(&s->near, near, epoch, s->cur_stage);
	run_fold(&s->low, !isnan(disk) && disk < o->low_disk_gb, epoch, s->cur_stage);
	if (near) {
		st->near_oom++;
		if (!isnan(comp)) {
			s->low_comp_sum += comp;
			s->low_comp_n++;
		}
	}
	stage_fold(st, used, avail, disk, comp);
	disk_fold(s, t, disk);
	if (!isnan(swap)) {
		if (isnan(s->swap_first))
			s->swap_first = swap;
		s->swap_last = swap;
	}
	if (!isnan(cpu)) {
		s->cpu_sum += cpu;
		s->cpu_n++;
	}
	oom_fold(s, &w, epoch);
	energy_fold(s, st, &w, epoch);
	peak_fold(&s->pk[PK_GPU_BUSY], 1, val(&w, SC_GPU_BUSY), epoch, -1, s->cur_stage, &w);
	peak_fold(&s->pk[PK_GPU_VRAM], 1, val(&w, SC_GPU_VRAM), epoch, SC_GPU_VRAM_TOTAL, s->cur_stage, &w);
	if (!isnan(val(&w, SC_GPU_VRAM_TOTAL)))
		s->vram_total_mb = val(&w, SC_GPU_VRAM_TOTAL);
	{
		double cl = val(&w, SC_CG_LIMIT), ca = val(&w, SC_CG_AVAIL);
		double v[SV_N] = { used, avail, swap, disk, cpu, comp, cl - ca, cl };
		bucket_fold(s, t, v);
	}
	s->prev_epoch = epoch;
	if (s->has_oom) {
		s->lastctxlen = ctx_copy(&w, s->lastctx, sizeof(s->lastctx) - 1);
		s->nrows_ctx++;
	}
	return 0;
}

/* Student's t, two-sided 95 %, for df >= 1: the Cornish-Fisher series
 * in 1/df (within 0.001 of the tables from df 10 up; the fit needs 18). */
static double t975(double df)
{
	const double z = 1.959963985;
	double z3 = z * z * z, z5 = z3 * z * z, z7 = z5 * z * z;

	return z + (z3 + z) / (4 * df) + (5 * z5 + 16 * z3 + 3 * z) / (96 * df * df) +
	       (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / (384 * df * df * df);
}

void sys_disk_fit(const struct sys *s, struct disk_fit *f)
{
	double b, sse, se, half;

	f->n = (long)s->dn;
	f->span_s = s->dn > 0 ? s->dtmax - s->dtmin : 0;
	f->fitted = 0;
	f->rate = f->lo = f->hi = NAN;
	/* A short window is mostly other programs' writes and noise: no rate
	 * (a 25 s run once "fell" 19 GiB/h). */
	if (f->span_s < DISK_FIT_MIN_S || f->n < DISK_FIT_MIN_N || !(s->dctt > 0))
		return;
	b = s->dctd / s->dctt;
	sse = s->dcdd - b * s->dctd;
	if (!(sse > 0))
		sse = 0;
	se = sqrt(sse / (s->dn - 2) / s->dctt);
	half = t975(s->dn - 2) * se;
	f->fitted = 1;
	f->rate = b * 3600.0;
	f->lo = (b - half) * 3600.0;
	f->hi = (b + half) * 3600.0;
}

int disk_hours(const struct sys *s, const struct disk_fit *f, double level,
	       double *h, double *h_lo, double *h_hi)
{
	double room = s->disk_last - level;

	if (!f->fitted || !(f->hi < 0))
		return 0;
	if (room < 0)
		room = 0;
	*h = room / -f->rate;
	*h_lo = room / -f->lo;
	*h_hi = room / -f->hi;
	return 1;
}

static void sanitize_ctx(char *ctx, size_t *len)
{
	char tmp[RM_TEXT_MAX + 1];
	size_t n = rm_sanitize(ctx, *len, tmp, sizeof(tmp));

	memcpy(ctx, tmp, n + 1);
	*len = n;
}

/*
 * The OOM-edge verdict when the build's cgroup, not the host, ran short:
 * its lowest available memory fell below the smaller of --near-oom-mb and
 * 15 % of its limit, and no lower than the host's.  Returns 1 when given.
 */
static int cgroup_edge(struct report *r, const struct opts *o, const struct peak *host)
{
	const struct sys *s = r->sys;
	const struct peak *p = &s->cg_avail;
	struct verdict *v;
	double thr;

	if (!p->known || isnan(p->aux))
		return 0;
	thr = 0.15 * p->aux < o->near_oom_mb ? 0.15 * p->aux : o->near_oom_mb;
	if (p->v >= thr || (host->known && host->v < o->near_oom_mb && host->v < p->v))
		return 0;
	v = verdict_add(r, V_EDGE_CGROUP);
	v->at = p->epoch - s->first_epoch;
	v->stage = p->stage;
	v->ctx = p->ctx;
	v->n[0] = p->v;
	v->n[1] = p->aux;
	v->n[2] = s->cg_host_avail;
	return 1;
}

/*
 * The build's containers, each judged on its own by its own limit: one
 * that had less left than the smaller of --near-oom-mb and 15 % of its
 * limit.  Returns 1 when one did.
 */
static int container_edges(struct report *r, const struct opts *o)
{
	const struct ctrs *cs = &r->ctrs;
	int any = 0;

	for (size_t i = 0; i < cs->n; i++) {
		const struct ctr *c = &cs->v[i];
		struct verdict *v;
		if (!ctr_tied(c) || !c->near)
			continue;
		v = verdict_add(r, V_EDGE_CONTAINER);
		v->ctr = c;
		v->at = c->min_avail_epoch - r->sys->first_epoch;
		v->stage = c->min_avail_stage;
		v->n[0] = c->min_avail_kib / 1024;
		v->n[1] = c->min_avail_limit / 1024;
		v->n[2] = ctr_near_threshold(o, c->min_avail_limit) / 1024;
		v->count = c->near;
		any = 1;
	}
	return any;
}

/* The host ran short: available memory below --near-oom-mb, or swap in
 * use.  Returns 1 when given. */
static int host_edge(struct report *r, const struct opts *o)
{
	const struct sys *s = r->sys;
	const struct peak *av = &s->pk[PK_MEM_AVAIL], *sw = &s->pk[PK_SWAP], *at;
	struct verdict *v;

	if (!(sw->known && sw->v > 0) && !(av->known && av->v < o->near_oom_mb))
		return 0;
	at = av->known && av->v < o->near_oom_mb ? av : sw;
	v = verdict_add(r, V_EDGE_HOST);
	v->at = at->epoch - s->first_epoch;
	v->stage = at->stage;
	v->ctx = at->ctx;
	/* Without a mem_avail_mb reading, swap alone: never "nan MiB". */
	v->n[0] = av->known ? av->v : NAN;
	v->n[1] = sw->known && sw->v > 0 ? sw->v : NAN;
	if (s->swap_last > s->swap_first)
		v->flags |= VF_CLIMBING;
	return 1;
}

/* Few compilers ran while memory was short: RAM, not -j, bound it. */
static int ram_bound(struct report *r, const struct opts *o)
{
	const struct sys *s = r->sys;
	struct verdict *v;
	double mean;

	if (!(s->near.samples > 0 && s->low_comp_n > 0 && r->cores > 0))
		return 0;
	mean = s->low_comp_sum / (double)s->low_comp_n;
	if (!(mean < r->cores / 2.0))
		return 0;
	v = verdict_add(r, V_RAM_BOUND);
	v->n[0] = o->near_oom_mb;
	v->n[1] = mean;
	v->count = r->cores;
	return 1;
}

/* Disk below --low-disk-gb, or falling towards it within a day by the
 * whole 95 % interval of the fit.  Returns 1 when given. */
static int disk_verdict(struct report *r, const struct opts *o)
{
	const struct sys *s = r->sys;
	struct disk_fit df;
	struct verdict *v;
	double h[6];

	if (!(s->dn > 0))
		return 0;
	sys_disk_fit(s, &df);
	if (s->low.samples > 0) {
		v = verdict_add(r, V_LOW_DISK);
		v->at = s->low.first_epoch - s->first_epoch;
		v->stage = s->low.first_stage;
		v->n[0] = o->low_disk_gb;
		v->n[1] = s->pk[PK_DISK].v;
		v->count = s->low.samples;
		return 1;
	}
	if (!disk_hours(s, &df, o->low_disk_gb, &h[0], &h[1], &h[2]) || !(h[0] <= 24) ||
	    !disk_hours(s, &df, 0, &h[3], &h[4], &h[5]))
		return 0;
	v = verdict_add(r, V_DISK_FALLING);
	v->n[VD_RATE] = df.rate;
	v->n[VD_HI] = df.hi;
	v->n[VD_LO] = df.lo;
	v->n[VD_SPAN] = df.span_s;
	v->n[VD_THR] = o->low_disk_gb;
	for (int k = 0; k < 6; k++)
		v->n[VD_H_THR + k] = h[k];
	v->count = df.n;
	return 1;
}

/* The seed's "Reading the results" rules, as verdicts (data). */
static void sys_verdicts(struct report *r, const struct opts *o)
{
	struct sys *s = r->sys;
	int problem = 0;

	/* OOM kills: oom.c says whose they were and why. */
	if (oom_verdict(r))
		problem = 1;
	if (cgroup_edge(r, o, &s->pk[PK_MEM_AVAIL]) || host_edge(r, o))
		problem = 1;
	problem |= container_edges(r, o);
	/* Container clients whose containers are not tied: their headroom
	 * is not known, so it is never "no headroom problem". */
	if (ctr_untied_clients(r)) {
		struct verdict *v = verdict_add(r, V_CTR_UNTIED);
		v->count = r->ctrs.clients;
		v->n[0] = (double)r->ctrs.n;
		problem = 1;
	}
	problem |= ram_bound(r, o);
	problem |= disk_verdict(r, o);
	/* "No problem" only where there were memory readings to judge; of
	 * swap, OOM kills and disk it says only what was recorded. */
	if (!problem && s->pk[PK_MEM_AVAIL].known) {
		struct verdict *v = verdict_add(r, V_OK);
		v->n[0] = o->near_oom_mb;
		v->n[1] = s->cg_avail.known ? s->cg_avail.v : NAN;
		v->n[2] = s->pk[PK_DISK].known ? o->low_disk_gb : NAN;
		/* The build's containers: the one with the least left. */
		v->ctr = r->ctrs.bind;
		v->n[3] = v->ctr ? v->ctr->min_avail_kib / 1024 : NAN;
		v->n[4] = v->ctr ? v->ctr->min_avail_limit / 1024 : NAN;
		v->flags = (s->pk[PK_SWAP].known ? VF_SWAP_KNOWN : 0) | (s->has_oom ? VF_OOM_KNOWN : 0);
	}
}

void sys_finish(struct report *r, const struct opts *o)
{
	struct sys *s = r->sys;

	/* The headroom that binds: a cgroup limit below RAM is the RAM the
	 * -j advice has; the CSV's effective cores unless --cores. */
	if (!isnan(s->cg_limit_min) && (isnan(r->ram_mb) || s->cg_limit_min < r->ram_mb)) {
		r->host_ram_mb = r->ram_mb;
		r->ram_mb = s->cg_limit_min;
	}
	if (o->cores <= 0 && s->cores > 0)
		r->cores = s->cores;
	sanitize_ctx(s->cg_avail.ctx, &s->cg_avail.ctxlen);
	if (s->nev > 0)
		oom_attribute(r, o);
	for (int i = 0; i < PK_N; i++)
		sanitize_ctx(s->pk[i].ctx, &s->pk[i].ctxlen);
	for (size_t i = 0; i < s->nev; i++) {
		sanitize_ctx(s->ev[i].ctx, &s->ev[i].ctxlen);
		sanitize_ctx(s->ev[i].pctx, &s->ev[i].pctxlen);
	}
	sys_verdicts(r, o);
}
