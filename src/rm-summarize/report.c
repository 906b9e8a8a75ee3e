/*
 * report.c: the stage table every part of the report shares (names
 * interned once, found by hash), the stage at a time, and verdicts added
 * as data.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

#define MAX_STAGES 100000

static uint64_t hash(const char *p, size_t n)
{
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * 1099511628211ULL;
	return h;
}

static void stage_rehash(struct report *r)
{
	free(r->stage_hash);
	r->stage_hcap = r->stage_hcap ? r->stage_hcap * 2 : 64;
	r->stage_hash = xmalloc(r->stage_hcap * sizeof(int));
	for (size_t i = 0; i < r->stage_hcap; i++)
		r->stage_hash[i] = -1;
	for (int i = 0; i < r->nstages; i++) {
		size_t h = hash(r->stages[i].raw, r->stages[i].rawlen) & (r->stage_hcap - 1);
		while (r->stage_hash[h] >= 0)
			h = (h + 1) & (r->stage_hcap - 1);
		r->stage_hash[h] = i;
	}
}

/* The index of the stage named raw[0..len), added when new. */
int stage_intern(struct report *r, const char *raw, size_t len)
{
	static const char overflow[] = "(too many stages)";
	struct stage *st;
	size_t h;

	if ((size_t)r->nstages * 2 >= r->stage_hcap)
		stage_rehash(r);
	h = hash(raw, len) & (r->stage_hcap - 1);
	while (r->stage_hash[h] >= 0) {
		st = &r->stages[r->stage_hash[h]];
		if (st->rawlen == len && memcmp(st->raw, raw, len) == 0)
			return r->stage_hash[h];
		h = (h + 1) & (r->stage_hcap - 1);
	}
	if (r->nstages >= MAX_STAGES && (len != sizeof(overflow) - 1 || memcmp(raw, overflow, len)))
		return stage_intern(r, overflow, sizeof(overflow) - 1);
	if (r->nstages == r->capst) {
		r->capst = r->capst ? r->capst * 2 : 16;
		r->stages = xrealloc(r->stages, (size_t)r->capst * sizeof(*r->stages));
	}
	st = &r->stages[r->nstages];
	memset(st, 0, sizeof(*st));
	st->raw = xstrndup(raw, len);
	st->rawlen = len;
	st->name = sanitized(raw, len);
	st->first_epoch = st->peak_used = st->min_avail = st->min_disk = NAN;
	st->max_comp = st->energy_j = st->build_comp = NAN;
	r->stage_hash[h] = r->nstages;
	return r->nstages++;
}

/* The last change point at or before epoch (0 when none is). */
static size_t seg_at(const struct sys *s, double epoch)
{
	size_t lo = 0, hi = s->nseg;

	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->segs[mid].epoch <= epoch)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

int stage_at(const struct report *r, double epoch)
{
	const struct sys *s = r->sys;

	if (!s || !s->nseg || isnan(epoch))
		return -1;
	return s->segs[seg_at(s, epoch)].stage;
}

/*
 * Between the last sample of a stage and the first of the next, which
 * stage a container that first appeared at epoch belongs to: the next
 * (an orchestrator marks a stage, then starts its containers), with
 * *until the first sample of it; -2 when epoch is in no such window.
 */
int stage_begun(const struct report *r, double epoch, double *until)
{
	const struct sys *s = r->sys;
	size_t lo;

	if (!s || s->nseg < 2 || isnan(epoch))
		return -2;
	lo = seg_at(s, epoch);
	if (s->segs[lo].epoch > epoch)
		return -2;  /* before the first sample */
	if (lo + 1 >= s->nseg || isnan(s->segs[lo + 1].before) || epoch <= s->segs[lo + 1].before)
		return -2;
	*until = s->segs[lo + 1].epoch;
	return s->segs[lo + 1].stage;
}

const char *stage_name(const struct report *r, int i)
{
	return i >= 0 && i < r->nstages ? r->stages[i].name : "";
}

struct verdict *verdict_add(struct report *r, enum verdict_kind k)
{
	struct verdict *v;

	r->verdicts = xrealloc(r->verdicts, (size_t)(r->nverdicts + 1) * sizeof(*r->verdicts));
	v = &r->verdicts[r->nverdicts++];
	memset(v, 0, sizeof(*v));
	v->k = k;
	v->at = NAN;
	v->stage = -1;
	v->victim = -1;
	return v;
}

const char *verdict_kind_name(enum verdict_kind k)
{
	static const char *const names[] = {
		[V_OOM_ELSEWHERE] = "oom-elsewhere", [V_OOM_KILL] = "oom-kill",
		[V_OOM_ALSO_ELSEWHERE] = "oom-elsewhere", [V_EDGE_CGROUP] = "oom-edge",
		[V_EDGE_HOST] = "oom-edge", [V_RAM_BOUND] = "ram-bound", [V_LOW_DISK] = "low-disk",
		[V_DISK_FALLING] = "disk-falling", [V_OK] = "ok", [V_EDGE_CONTAINER] = "oom-edge",
		[V_OOM_CONTAINER] = "oom-kill", [V_OOM_UNTIED] = "oom-untied-container",
		[V_CTR_UNTIED] = "containers-not-tied",
	};
	return names[k];
}

double proc_peak_time(const struct proc *p)
{
	return !isnan(p->peak_at) ? p->peak_at : !isnan(p->end_s) ? p->end_s : p->start_s;
}

int proc_stage(const struct report *r, const struct proc *p, double off)
{
	double t = proc_peak_time(p);

	return stage_at(r, isnan(t) ? NAN : off + t);
}

double report_tree_off(const struct report *r)
{
	if (r->tl.known)
		return r->tl.off;
	if (r->job.known && !isnan(r->job.start_epoch))
		return r->job.start_epoch;
	if (r->sys && r->sys->samples)
		return r->sys->first_epoch - r->sys->first_elapsed;
	return NAN;
}

int report_group_cmp(const void *a, const void *b)
{
	const struct group *x = a, *y = b;
	if (x->peak_kib != y->peak_kib)
		return x->peak_kib < y->peak_kib ? 1 : -1;
	return strcmp(x->comm, y->comm);
}

int report_unit_cmp(const void *a, const void *b)
{
	const struct unit *x = a, *y = b;
	if (x->peak_kib != y->peak_kib)
		return x->peak_kib < y->peak_kib ? 1 : -1;
	return strcmp(x->name, y->name);
}

void stage_add_cpeak(struct report *r, int si, double peak_kib, int emulated)
{
	struct stage *st;

	if (si < 0)
		si = stage_intern(r, "", 0);
	st = &r->stages[si];
	if (st->ncp == st->capcp) {
		st->capcp = st->capcp ? st->capcp * 2 : 16;
		st->cpeaks = xrealloc(st->cpeaks, st->capcp * sizeof(double));
	}
	st->cpeaks[st->ncp++] = peak_kib;
	st->ncp_emu += emulated != 0;
}
