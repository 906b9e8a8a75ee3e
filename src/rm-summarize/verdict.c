/*
 * verdict.c: verdicts in words.  sys.c and oom.c judge (kind, time,
 * stage, numbers); this says it as the seed's "Reading the results" did.
 * Each part is cut to the size it always had, so a long context cuts the
 * sentence where it always did.
 */
#include <stdio.h>
#include <string.h>

#include "fmt.h"
#include "kmsg.h"
#include "verdict.h"

/* " in stage S, while: CONTEXT" for a peak or event, or "". */
static void where(const struct report *r, int stage, const char *ctx, char *buf, size_t size)
{
	const char *sn = stage >= 0 ? r->stages[stage].name : "";
	int n = 0;

	buf[0] = '\0';
	if (sn[0])
		n = snprintf(buf, size, " in stage %s", sn);
	if (ctx && ctx[0] && n >= 0 && (size_t)n < size)
		snprintf(buf + n, size - (size_t)n, ", while: %s", ctx);
}

static const char *es(long n)
{
	return n == 1 ? "" : "es";
}

/* Kills of other programs only: named, not blamed on the build. */
static void oom_elsewhere(const struct verdict *v, char *buf, size_t size)
{
	const struct oomev *e = v->ev;
	char vict[200] = "";
	int k = v->victim;

	if (e && k >= 0) {
		const char *why = oom_cause(e->vcons[k]);
		snprintf(vict, sizeof(vict), " (first: %s, PID %d%s%s%s%s)", e->vname[k], e->vpid[k],
			 why[0] ? ", " : "", why, e->vcons[k] == RM_OOM_MEMCG && e->vmemcg[k][0] ? " " : "",
			 e->vcons[k] == RM_OOM_MEMCG ? e->vmemcg[k] : "");
	}
	snprintf(buf, size, "No OOM kill in the build: the kernel killed %ld process%s elsewhere on this host%s.",
		 v->count, es(v->count), vict);
}

/* "`UNIT` (COMM, PID N)", or "COMM (PID N)" when its row names no unit. */
void oom_who(const struct oomev *e, int k, char *buf, size_t size)
{
	const struct proc *p = e->vx[k].row;

	if (p && p->unit)
		snprintf(buf, size, "`%s` (%s, PID %d)", p->unit, e->vname[k], e->vpid[k]);
	else
		snprintf(buf, size, "%s (PID %d)", e->vname[k], e->vpid[k]);
}

/* ", with `A` (N MiB) and `B` (M MiB) compiling beside it": the units of
 * the victim's cgroup at the kill, heaviest first, at most three. */
static void beside_words(const struct oomvictim *x, char *buf, size_t size)
{
	int n = 0, units = 0;
	size_t len;

	buf[0] = '\0';
	for (int i = 0; i < x->nbeside; i++)
		units += x->beside[i].row && x->beside[i].row->unit;
	if (!units)
		return;
	len = (size_t)snprintf(buf, size, ", with ");
	for (int i = 0; i < x->nbeside && n < 3 && len < size; i++) {
		const struct oomtask *t = &x->beside[i];
		char kib[40];
		if (!t->row || !t->row->unit)
			continue;
		fmt_kib(t->kib, kib, sizeof(kib));
		n++;
		len += (size_t)snprintf(buf + len, size - len, "%s`%s` (%s%s)",
					n == 1 ? "" : n == (units < 3 ? units : 3) ? " and " : ", ",
					t->row->unit, t->from_dump ? "" : "alive then, peak ", kib);
	}
	if (len < size)
		snprintf(buf + len, size - len, " compiling beside it");
}

/* No kernel log (inside a container): e's kills were counted by the build's
 * own cgroup, whose limit (into lim) is the one that bound.  1 when so. */
static int cg_counted(const struct report *r, const struct oomev *e, char *lim, size_t size)
{
	if (!e || e->cg_kills <= 0 || r->sys->kmsg_state > 0 || isnan(r->sys->cg_limit_min))
		return 0;
	fmt_mib(r->sys->cg_limit_min, lim, size);
	return 1;
}

/* The build's kills: the first victim, its unit, when, beside what, and
 * why the kernel killed. */
static void oom_kill(const struct report *r, const struct verdict *v, char *buf, size_t size)
{
	const struct oomev *e = v->ev;
	char w[CTX_RAW + 200], clock[32], who[600], by[400] = "", beside[900], had[80] = "",
	     log[CTX_RAW + 100] = "", count[120], lim[40], kib[40];
	int k = v->victim;
	const struct oomvictim *x;

	fmt_clock(v->at, clock, sizeof(clock));
	if (k < 0) {
		where(r, v->stage, v->ctx, w, sizeof(w));
		if (cg_counted(r, e, lim, sizeof(lim)))
			snprintf(buf, size,
				 "OOM: the kernel killed %ld process%s of the build; the first at +%s%s. The build's own cgroup counted it (no kernel log here to say more), whose limit is %s: raise that limit (docker run --memory), or make the build fit under it.",
				 v->count, es(v->count), clock, w, lim);
		else
			snprintf(buf, size,
				 "OOM: the kernel killed %ld process%s%s; the first at +%s%s. Lower the memory per job (-j) for that stage, or add RAM.",
				 v->count, es(v->count), v->flags & VF_OF_BUILD ? " of the build" : "", clock, w);
		return;
	}
	x = &e->vx[k];
	if (x->from_row)
		fmt_clock_tenths(v->at, clock, sizeof(clock));
	oom_who(e, k, who, sizeof(who));
	where(r, v->stage, NULL, w, sizeof(w));
	if (e->vcons[k] == RM_OOM_MEMCG) {
		char use[80] = "";
		fmt_mib(x->limit_kib / 1024.0, lim, sizeof(lim));
		if (!isnan(x->usage_kib)) {
			fmt_kib(x->usage_kib, kib, sizeof(kib));
			snprintf(use, sizeof(use), " (usage %s)", kib);
		}
		snprintf(by, sizeof(by), " by the %s%slimit of cgroup %s%s", isnan(x->limit_kib) ? "" : lim,
			 isnan(x->limit_kib) ? "" : " ", e->vmemcg[k][0] ? e->vmemcg[k] : "(not logged)", use);
	}
	beside_words(x, beside, sizeof(beside));
	if (x->row && !isnan(x->row->peak_kib)) {
		fmt_kib(x->row->peak_kib, kib, sizeof(kib));
		snprintf(had, sizeof(had), "; it had at least %s when killed", kib);
	}
	if (v->ctx && v->ctx[0]) {
		char age[40];
		fmt_dur(x->ctx_age, age, sizeof(age));
		if (!isnan(x->ctx_age))
			snprintf(log, sizeof(log), " The log then (read %s before the kill): %s.", age, v->ctx);
		else
			snprintf(log, sizeof(log), " The log then: %s.", v->ctx);
	}
	snprintf(count, sizeof(count), " The kernel killed %ld process%s of the build.", v->count, es(v->count));
	if (e->vcons[k] == RM_OOM_MEMCG)
		snprintf(buf, size,
			 "OOM: %s was killed at +%s%s%s%s%s.%s%s It was killed by the limit of cgroup %s, not for want of memory on the host: raise that cgroup's memory limit, or make the build fit under it.",
			 who, clock, w, by, beside, had, log, count,
			 e->vmemcg[k][0] ? e->vmemcg[k] : "(not logged)");
	else if (e->vcons[k] == RM_OOM_CPUSET || e->vcons[k] == RM_OOM_MEMORY_POLICY)
		snprintf(buf, size,
			 "OOM: %s was killed at +%s%s%s%s.%s%s It was %s (%s), not for want of memory on the host: allow it more memory nodes.",
			 who, clock, w, beside, had, log, count, oom_cause(e->vcons[k]),
			 rm_kmsg_constraint_name(e->vcons[k]));
	else if (cg_counted(r, e, lim, sizeof(lim)))
		snprintf(buf, size,
			 "OOM: %s was killed at +%s%s%s%s.%s%s The build's own cgroup counted it (no kernel log here to say more), whose limit is %s: raise that limit (docker run --memory), or make the build fit under it.",
			 who, clock, w, beside, had, log, count, lim);
	else
		snprintf(buf, size,
			 "OOM: %s was killed at +%s%s%s%s.%s%s Lower the memory per job (-j) for that stage, or add RAM.",
			 who, clock, w, beside, had, log, count);
}

static void edge_cgroup(const struct report *r, const struct verdict *v, char *buf, size_t size)
{
	char lim[40], free_[40], host_s[80] = "", clock[32], w[700];

	fmt_mib(v->n[1], lim, sizeof(lim));
	if (!isnan(v->n[2])) {
		fmt_mib(v->n[2], free_, sizeof(free_));
		snprintf(host_s, sizeof(host_s), " (host RAM: %s free)", free_);
	}
	fmt_clock(v->at, clock, sizeof(clock));
	where(r, v->stage, v->ctx, w, sizeof(w));
	snprintf(buf, size,
		 "OOM edge: available within the build's cgroup fell to %.0f MiB of its %s limit at +%s%s%s. Lower the memory per job for that stage, or raise the cgroup's memory limit.",
		 v->n[0], lim, clock, host_s, w);
}

static void edge_host(const struct report *r, const struct verdict *v, char *buf, size_t size)
{
	char w[CTX_RAW + 100], clock[32], swaps[200] = "", fell[80] = "";
	int avail = !isnan(v->n[0]), swap = !isnan(v->n[1]);

	if (avail)
		snprintf(fell, sizeof(fell), "available memory fell to %.0f MiB%s", v->n[0],
			 swap ? "; " : "");
	if (swap)
		snprintf(swaps, sizeof(swaps), "swap in use up to %.0f MiB%s%s", v->n[1],
			 v->flags & VF_CLIMBING ? " and climbing" : "",
			 avail ? "" : " (available memory not recorded)");
	fmt_clock(v->at, clock, sizeof(clock));
	where(r, v->stage, v->ctx, w, sizeof(w));
	snprintf(buf, size, "OOM edge: %s%s, at +%s%s. Lower the memory per job for that stage, or add RAM.",
		 fell, swaps, clock, w);
}

static void low_disk(const struct report *r, const struct verdict *v, char *buf, size_t size)
{
	char w[CTX_RAW + 100], clock[32];

	fmt_clock(v->at, clock, sizeof(clock));
	where(r, v->stage, NULL, w, sizeof(w));
	snprintf(buf, size,
		 "Low disk: available space was below %g GiB in %ld sample%s, first at +%s%s (minimum %.2f GiB). Prune build caches before the next run.",
		 v->n[0], v->count, v->count == 1 ? "" : "s", clock, w, v->n[1]);
}

static void disk_falling(const struct verdict *v, char *buf, size_t size)
{
	char span[40], t[6][40];

	fmt_dur(v->n[VD_SPAN], span, sizeof(span));
	for (int k = 0; k < 6; k++)
		fmt_dur(v->n[VD_H_THR + k] * 3600, t[k], sizeof(t[k]));
	snprintf(buf, size,
		 "Disk falling: %.2f GiB/h (95 %% interval %.2f to %.2f, fitted over %s and %ld samples); at that rate it crosses the %g GiB threshold in %s (%s to %s) and is full in %s (%s to %s). Prune build caches before the next run.",
		 -v->n[VD_RATE], -v->n[VD_HI], -v->n[VD_LO], span, v->count, v->n[VD_THR], t[0], t[1],
		 t[2], t[3], t[4], t[5]);
}

/* " (safe -j 1 at 320 MiB per job)": the stage's advice from c's limit, or "". */
static void ctr_jobs(const struct report *r, const struct ctr *c, int stage, char *buf, size_t size)
{
	buf[0] = '\0';
	for (size_t i = 0; i < r->nperjob; i++) {
		const struct perjob *pj = &r->perjob[i];
		if (pj->stage == stage && pj->ctr == c && pj->safe_j > 0)
			snprintf(buf, size, " (safe -j %ld at %.0f MiB per job)", safe_jobs(r, pj), pj->suggest_mb);
	}
}

/* A container of the build ran short by its own limit. */
static void edge_container(const struct report *r, const struct verdict *v, char *buf, size_t size)
{
	char lim[40], thr[40], clock[32], w[CTX_RAW + 100], nm[200], jobs[80];

	fmt_mib(v->n[1], lim, sizeof(lim));
	fmt_mib(v->n[2], thr, sizeof(thr));
	fmt_clock(v->at, clock, sizeof(clock));
	where(r, v->stage, NULL, w, sizeof(w));
	fmt_ctr_name(v->ctr, nm, sizeof(nm));
	ctr_jobs(r, v->ctr, v->stage, jobs, sizeof(jobs));
	snprintf(buf, size,
		 "OOM edge: available within container %s fell to %.0f MiB of its %s limit at +%s%s (%ld reading%s below %s). Lower the memory per job for that stage%s, or raise the container's memory limit (docker run --memory).",
		 nm, v->n[0], lim, clock, w, v->count, v->count == 1 ? "" : "s", thr, jobs);
}

/* "`UNIT` (COMM, PID N)" from the build's row of the victim, else "COMM (PID N)". */
static void victim_words(const struct report *r, const struct oomev *e, int k, char *buf, size_t size)
{
	if (e->vx[k].row) {
		size_t n;
		oom_who(e, k, buf, size);   /* the row nearest the kill */
		n = strlen(buf);
		/* "... PID N)" -> "... PID N, emulated)" */
		if (e->vx[k].row->emulated == 1 && n && buf[n - 1] == ')' && n + 11 < size)
			snprintf(buf + n - 1, size - n + 1, ", emulated)");
		return;
	}
	for (size_t i = 0; i < r->nproc; i++) {
		const struct proc *p = &r->procs[i];
		if (p->pid == e->vpid[k] && !strncmp(p->comm, e->vname[k], 15) && p->unit) {
			snprintf(buf, size, "`%s` (%s, PID %d%s)", p->unit, e->vname[k], e->vpid[k],
				 p->emulated == 1 ? ", emulated" : "");
			return;
		}
	}
	snprintf(buf, size, "%s (PID %d)", e->vname[k], e->vpid[k]);
}

/* A kill of the build in one of its containers: the container, its limit
 * then, and the advice from that limit. */
static void oom_container(const struct report *r, const struct verdict *v, char *buf, size_t size)
{
	const struct oomev *e = v->ev;
	const struct ctr *c = v->ctr;
	char nm[200], w[CTX_RAW + 200], clock[32], who[400] = "", lim[40] = "", jobs[80], limit[80] = "";
	double t = e ? e->epoch : c->nrises ? c->rise_at[0] : NAN;
	double l = ctr_limit_at(c, t);

	fmt_ctr_name(c, nm, sizeof(nm));
	fmt_clock(v->at, clock, sizeof(clock));
	where(r, v->stage, v->ctx, w, sizeof(w));
	if (e && v->victim >= 0) {
		char vw[300];
		victim_words(r, e, v->victim, vw, sizeof(vw));
		snprintf(who, sizeof(who), " (killed %s)", vw);
	}
	if (!isnan(l)) {
		fmt_mib(l / 1024, lim, sizeof(lim));
		snprintf(limit, sizeof(limit), ", %s", lim);
	}
	ctr_jobs(r, c, v->stage, jobs, sizeof(jobs));
	snprintf(buf, size,
		 "OOM: the kernel killed %ld process%s of the build in container %s; the first at +%s%s%s%s. It was killed by the container's memory limit%s, not for want of memory on the host: raise that limit (docker run --memory) or run fewer jobs in it%s.",
		 v->count, es(v->count), nm, clock, who, w,
		 e ? "" : " (its own oom_kill count rose; the kernel log names no victim)", limit, jobs);
}

/* A container of the run, not tied to the build, was OOM-killed during it. */
static void oom_untied(const struct report *r, const struct verdict *v, char *buf, size_t size)
{
	const struct ctr *c = v->ctr;
	const struct oomev *e = v->ev;
	char nm[200], clock[32], w[200], who[300] = "", lim[40] = "none", also[160] = "";
	double l = ctr_limit_at(c, e ? e->epoch : c->nrises ? c->rise_at[0] : NAN);

	fmt_ctr_name(c, nm, sizeof(nm));
	fmt_clock(v->at, clock, sizeof(clock));
	where(r, v->stage, NULL, w, sizeof(w));
	if (!isnan(l))
		fmt_mib(l / 1024, lim, sizeof(lim));
	if (e && v->victim >= 0)
		snprintf(who, sizeof(who), " (victim %s, PID %d)", e->vname[v->victim], e->vpid[v->victim]);
	if (v->n[0] > 0)
		snprintf(also, sizeof(also), " The kernel also killed %.0f process%s elsewhere on this host.",
			 v->n[0], v->n[0] == 1 ? "" : "es");
	snprintf(buf, size,
		 "A container not tied to the build was OOM-killed during it: %s, memory limit %s, %ld kill%s, the first at +%s%s%s. The build ran container clients whose containers could not be tied to it, so this may have been the build's own kill: tie them (see below) to know, and raise that container's limit or run fewer jobs in it.%s",
		 nm, lim, v->count, v->count == 1 ? "" : "s", clock, who, w, also);
}

/* Container clients whose containers could not be tied to the build. */
static void ctr_untied(const struct verdict *v, char *buf, size_t size)
{
	snprintf(buf, size,
		 "Containers not tied: the build ran %ld container client%s (docker or podman run, create, start or exec) whose containers could not be tied to it, so its processes, headroom and OOM kills leave out what ran in them and no headroom verdict is given (%.0f container%s ran on this host during the build: see \"Containers during the build (not tied to it)\"). To tie them, add --label rm-tools.run=$RUN_ID (or --cgroup-parent PARENT) to each docker run line.",
		 v->count, v->count == 1 ? "" : "s", v->n[0], v->n[0] == 1 ? "" : "s");
}

static void ok(const struct verdict *v, char *buf, size_t size)
{
	char cg[600] = "", rest[160];

	if (!isnan(v->n[1]))
		snprintf(cg, sizeof(cg), " (within the build's cgroup: lowest %.0f MiB of its limit)", v->n[1]);
	if (v->ctr && !isnan(v->n[3])) {
		char nm[200], lim[40];
		fmt_ctr_name(v->ctr, nm, sizeof(nm));
		fmt_mib(v->n[4], lim, sizeof(lim));
		snprintf(cg + strlen(cg), sizeof(cg) - strlen(cg),
			 " (within the build's containers: lowest %.0f MiB of the %s limit of %s)", v->n[3], lim, nm);
	}
	snprintf(rest, sizeof(rest), "%s, %s, ",
		 v->flags & VF_SWAP_KNOWN ? "no swap in use" : "swap not recorded",
		 v->flags & VF_OOM_KNOWN ? "no OOM kill" : "OOM kills not recorded");
	if (!isnan(v->n[2]))
		snprintf(buf, size, "No headroom problem: available memory stayed above %.0f MiB%s, %sdisk above %g GiB.",
			 v->n[0], cg, rest, v->n[2]);
	else
		snprintf(buf, size, "No headroom problem: available memory stayed above %.0f MiB%s, %sdisk not recorded.",
			 v->n[0], cg, rest);
}

void verdict_text(const struct report *r, const struct verdict *v, char *buf, size_t size)
{
	buf[0] = '\0';
	switch (v->k) {
	case V_OOM_ELSEWHERE:
		oom_elsewhere(v, buf, size);
		break;
	case V_OOM_KILL:
		oom_kill(r, v, buf, size);
		break;
	case V_OOM_ALSO_ELSEWHERE:
		snprintf(buf, size,
			 "The kernel also killed %ld process%s elsewhere on this host (see \"Elsewhere on this host\").",
			 v->count, es(v->count));
		break;
	case V_EDGE_CGROUP:
		edge_cgroup(r, v, buf, size);
		break;
	case V_EDGE_HOST:
		edge_host(r, v, buf, size);
		break;
	case V_RAM_BOUND:
		snprintf(buf, size,
			 "RAM-bound: while available memory was below %.0f MiB, %.1f compilers ran on average on %ld cores; more RAM, not more -j, is the lever.",
			 v->n[0], v->n[1], v->count);
		break;
	case V_LOW_DISK:
		low_disk(r, v, buf, size);
		break;
	case V_DISK_FALLING:
		disk_falling(v, buf, size);
		break;
	case V_OK:
		ok(v, buf, size);
		break;
	case V_EDGE_CONTAINER:
		edge_container(r, v, buf, size);
		break;
	case V_OOM_CONTAINER:
		oom_container(r, v, buf, size);
		break;
	case V_OOM_UNTIED:
		oom_untied(r, v, buf, size);
		break;
	case V_CTR_UNTIED:
		ctr_untied(v, buf, size);
		break;
	}
}
