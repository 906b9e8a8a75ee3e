/*
 * runfig.c: a run's figures (see runfig.h).
 */
#include <math.h>

#include "oom.h"
#include "runfig.h"

double run_duration(const struct report *r)
{
	if (r->sys && r->sys->samples > 0)
		return r->sys->last_epoch - r->sys->first_epoch;
	if (r->job.known && !isnan(r->job.elapsed))
		return r->job.elapsed;
	if (r->tl.known && r->tl.rows > 0)
		return r->tl.last_epoch - r->tl.first_epoch;
	return NAN;
}

double run_cpu(const struct report *r)
{
	double cpu = 0;
	int any = 0;

	if (r->job.known && !isnan(r->job.user_s) && !isnan(r->job.sys_s))
		return r->job.user_s + r->job.sys_s;
	for (size_t i = 0; i < r->nproc; i++)
		if (!isnan(r->procs[i].cpu_s)) {
			cpu += r->procs[i].cpu_s;
			any = 1;
		}
	return any ? cpu : NAN;
}

double run_ooms(const struct report *r)
{
	double n = NAN;

	if (r->sys && r->sys->has_oom)
		n = (double)oom_build_kills(r->sys);
	if (r->job.known && !isnan(r->job.oom_kills))
		n = (isnan(n) ? 0 : n) + r->job.oom_kills;
	return n;
}

double run_cg_avail(const struct report *r)
{
	return r->sys && r->sys->cg_avail.known ? r->sys->cg_avail.v : NAN;
}

double run_used_kib(const struct report *r, int *exact)
{
	const struct sys *s = r->sys;

	*exact = 1;
	if (r->job.known && !isnan(r->job.cgroup_kib))
		return r->job.cgroup_kib;
	/* The build in containers: the largest peak of its tied containers'
	 * cgroups (each stage a container of its own). */
	if (r->ctrs.ntied > 0) {
		double best = NAN;
		for (size_t i = 0; i < r->ctrs.n; i++) {
			const struct ctr *c = &r->ctrs.v[i];
			if (c->tied[0] && !isnan(c->peak_kib) && (isnan(best) || c->peak_kib > best))
				best = c->peak_kib;
		}
		if (!isnan(best))
			return best;
	}
	/* rm-monitor with a cgroup: its limit less the least it had left. */
	if (s && s->cg_avail.known && !isnan(s->cg_avail.aux))
		return (s->cg_avail.aux - s->cg_avail.v) * 1024.0;
	*exact = 0;
	if (r->job.known && !isnan(r->job.peak_kib))
		return r->job.peak_kib;
	if (r->tl.known && !isnan(r->tl.peak_kib))
		return r->tl.peak_kib;
	return NAN;
}
