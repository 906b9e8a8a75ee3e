/*
 * oom.c: whose OOM kills they were.  The system CSV's oom_kills counter
 * (/proc/vmstat, host-wide) says when the kernel killed; the kernel log
 * says whom, why (the constraint) and under which cgroup's limit.
 *
 * A kill is matched to a process by the PID and name its OOM record
 * gives, against the exit logs' rows: a scope=in row makes it the
 * build's, a scope=out row (rm-tree --elsewhere) makes it another
 * program's.  The kernel log's time (local_clock, not CLOCK_MONOTONIC,
 * and never the wall clock) only orders the kills: the run's kills are
 * handed, in log order, to the samples whose oom_kills rose, each sample
 * taking as many as its counter rose.  A kill no row names belongs to
 * the run when its log time falls between a rise of the counter and the
 * sample before (turned into wall time with this boot's offset, with
 * slack for the drift of the two clocks); it is
 * elsewhere when the exit log holds the whole scope (the --stats file of
 * a tree or cgroup scope, or scope=out rows, say so), and of unknown
 * scope, counted as the build's as before, when it does not (rm-tree
 * --match follows only the compilers).
 *
 * A run made in a PID namespace (a container: the --stats row's pid_ns is
 * not the initial one) has the namespace's PIDs, never the kernel log's:
 * there a kill is the run's when the cgroup the log names (task_memcg=,
 * else oom_memcg=) is the cgroup the run recorded (--stats cgroup) or
 * below it, which is exact; the victim's row is then inferred, by name
 * and an end between the samples around the kill, and said to be.
 * Without a kernel log (inside a container there is none), the build's
 * cgroup's own counter (cg_oom_kills) says exactly how many kills were
 * the build's; in a PID namespace the rest of the host-wide count was
 * elsewhere, and a row of the build that ended by SIGKILL then is the
 * inferred victim.
 *
 * Each of the build's victims is then told in full (struct oomvictim):
 * its exit-log row (the row of its PID and name whose end lies nearest
 * the samples around the kill), the kill's time (that row's end, the
 * moment the process ended, else the sample that saw the counter rise),
 * the stage then, the context read last before it (the row before the
 * kill's, or the kill's own row when the kill came after it) and its
 * age, the usage and limit of the cgroup whose limit acted (the kernel's
 * "memory: usage, limit" line), and the other processes of that cgroup
 * with their memory at the kill, from the kernel's task dump (resident
 * pages times this host's page size), each matched to its exit-log row
 * by PID; without a dump, the build's compilers alive then, with their
 * peaks.
 *
 * This file is long because it ties each kill to the run four ways (PID,
 * container, the run's cgroup, the cgroup's own counter) and then tells
 * each of the build's victims in full; the steps share the kill list.
 */
#include <err.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "containers.h"
#include "kmsg.h"
#include "oom.h"

#define MAX_KILLS 4096
#define MAX_BESIDE 64      /* processes told beside one victim */

struct kill {
	struct rm_oom_kill k;
	int scope;             /* 1 build, 0 elsewhere, -1 unknown */
	int matched;           /* named by an exit-log row, or tied by cgroup */
	int tie;               /* enum vtie */
	struct rm_oom_task *tasks;   /* the kernel's dump, copied */
	size_t ntasks;
};

/* The initial namespaces' inode numbers (PROC_PID_INIT_INO,
 * PROC_CGROUP_INIT_INO): fixed by the kernel. */
#define PID_NS_INIT 4026531836UL
#define CGROUP_NS_INIT 4026531835UL

struct kills {
	struct kill *v;
	size_t n, cap;
};

static void kill_cb(void *arg, const struct rm_oom_kill *k)
{
	struct kills *ks = arg;

	if (ks->n >= MAX_KILLS)
		return;
	if (ks->n == ks->cap) {
		ks->cap = ks->cap ? ks->cap * 2 : 16;
		ks->v = xrealloc(ks->v, ks->cap * sizeof(*ks->v));
	}
	memset(&ks->v[ks->n], 0, sizeof(ks->v[0]));
	ks->v[ks->n].k = *k;
	ks->v[ks->n].k.tasks = NULL;
	if (k->ntasks) {
		ks->v[ks->n].tasks = xmalloc(k->ntasks * sizeof(*k->tasks));
		memcpy(ks->v[ks->n].tasks, k->tasks, k->ntasks * sizeof(*k->tasks));
		ks->v[ks->n].ntasks = k->ntasks;
	}
	ks->n++;
}

static void kills_free(struct kills *ks)
{
	for (size_t i = 0; i < ks->n; i++)
		free(ks->v[i].tasks);
	free(ks->v);
}

const char *kmsg_why(int e)
{
	if (e == EBADMSG)
		return "not a kernel log (no /dev/kmsg record in its first 64 KiB)";
	if (e == EFBIG)
		return "over 256 MiB, not read further";
	return strerror(e);
}

int scope_complete(const struct report *r)
{
	return r->stats.known || r->nothers > 0;
}

/* A row of procs[0..n) with this PID and name (comm is at most 15 bytes). */
static int named_in(const struct proc *procs, size_t n, int pid, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (procs[i].pid == pid && strncmp(procs[i].comm, name, 15) == 0)
			return 1;
	return 0;
}

/* The run's PIDs are a PID namespace's, not the kernel log's. */
static int run_in_pidns(const struct report *r)
{
	return r->stats.known && r->stats.pid_ns && r->stats.pid_ns != PID_NS_INIT;
}

/* A kill whose victim's cgroup is the run's or below it: the run's,
 * exactly, where the run's PIDs cannot name it and its cgroup path is
 * the kernel's (written in the initial cgroup namespace). */
static int in_run_cgroup(const struct report *r, const struct rm_oom_kill *k)
{
	const char *run = r->stats.cgroup;
	const char *cg = k->task_memcg[0] ? k->task_memcg : k->oom_memcg;
	size_t n = strlen(run);

	if (!run_in_pidns(r) || r->stats.cgroup_ns != CGROUP_NS_INIT || n < 2 || !cg[0])
		return 0;
	return strncmp(cg, run, n) == 0 && (cg[n] == '\0' || cg[n] == '/');
}

/* The kill's log time, as wall time, falls between a rise of the counter
 * and the sample before: 2 s and 100 ppm of uptime of slack for the drift
 * of the two clocks. */
static int near_rise(const struct sys *s, const struct rm_oom_kill *k, double boot)
{
	double at = boot + k->klog_s, tol = 2.0 + 1e-4 * k->klog_s;

	for (size_t j = 0; j < s->nev; j++)
		if (at >= s->ev[j].prev_epoch - tol && at <= s->ev[j].epoch + tol)
			return 1;
	return 0;
}

/*
 * The container whose cgroup the victim was in (task_memcg), or whose
 * limit it hit (oom_memcg), or -1.  A kill in a tied container's cgroup
 * is the build's, whatever its PID: the exit log may hold it under a
 * namespace's PID, or as another program's row (findings #13, #16).
 */
static int kill_ctr(const struct report *r, const struct rm_oom_kill *k)
{
	int c = containers_of_cgroup(r, k->task_memcg);

	return c >= 0 ? c : containers_of_cgroup(r, k->oom_memcg);
}

/*
 * The kills of the kernel log that belong to the run, in log order, into
 * run[]: named by an exit log's row (scope from the row), or unnamed with
 * a log time in the run.  Returns how many.
 */
static size_t kills_of_run(const struct report *r, struct kills *ks, size_t *run)
{
	const struct sys *s = r->sys;
	double boot = rm_now_epoch() - rm_now_mono();
	int complete = scope_complete(r);
	size_t nrun = 0;

	for (size_t i = 0; i < ks->n; i++) {
		struct kill *k = &ks->v[i];
		char name[64];
		int c = kill_ctr(r, &k->k);
		/* Sanitized as the exit logs' comm is, to compare the two. */
		rm_sanitize(k->k.name, strlen(k->k.name), name, sizeof(name));
		memcpy(k->k.name, name, sizeof(name));
		if (c >= 0 && ctr_tied(&r->ctrs.v[c])) {
			k->scope = 1;
			k->matched = 1;
			k->tie = VT_CTR;
		} else if (named_in(r->procs, r->nproc, k->k.pid, name)) {
			k->scope = 1;
			k->matched = 1;
			k->tie = VT_PID;
		} else if (named_in(r->others, r->nothers, k->k.pid, name) || c >= 0) {
			/* Another program's row, or a container of the run not
			 * tied to the build. */
			k->scope = 0;
			k->matched = 1;
			k->tie = c >= 0 ? VT_CTR : VT_PID;
		} else if (!near_rise(s, &k->k, boot)) {
			/* Log time as wall time, only to tell whether an
			 * unnamed kill fell in the run. */
			continue;
		} else if (in_run_cgroup(r, &k->k)) {
			/* In the run's cgroup, when the counter rose: the
			 * same cgroup at another time is another run's. */
			k->scope = 1;
			k->matched = 1;
			k->tie = VT_CGROUP;
		} else {
			k->scope = complete ? 0 : -1;
		}
		run[nrun++] = i;
	}
	return nrun;
}

static int killed_row(const struct proc *p)
{
	return strcmp(p->exit, "137") == 0 || strcmp(p->exit, "SIGKILL") == 0;
}

/* Row p ended between the sample before e's kill and 10 s after the
 * sample that counted it (a sampled row ends when it is seen gone). */
static int ended_near(const struct report *r, const struct proc *p, const struct oomev *e)
{
	double end = r->sys->first_epoch - r->sys->first_elapsed + p->end_s;

	return !isnan(p->end_s) && end >= e->prev_epoch - 2 && end <= e->epoch + 10;
}

/* A child of p ended then too: p's 137 may be its child's, passed on by
 * a shell, not a SIGKILL of its own. */
static int child_ended_near(const struct report *r, const struct proc *p, const struct oomev *e)
{
	for (size_t i = 0; i < r->nproc; i++)
		if (r->procs[i].ppid == p->pid && ended_near(r, &r->procs[i], e))
			return 1;
	return 0;
}

/*
 * The build's row that is e's victim, of those that ended near it: named
 * name, one that ended by SIGKILL taken before others; or, name NULL, the
 * one that ended by SIGKILL (exit 137) with no child that ended then.
 * Returns its index, or -1 when no row, or more than one, fits.
 */
static long infer_row(const struct report *r, const struct oomev *e, const char *name)
{
	long found = -1, nfound = 0;

	for (int pass = 0; pass < (name ? 2 : 1) && nfound == 0; pass++)
		for (size_t i = 0; i < r->nproc; i++) {
			const struct proc *p = &r->procs[i];
			if (!ended_near(r, p, e) || (name && strncmp(p->comm, name, 15) != 0) ||
			    (pass == 0 && !killed_row(p)) || (!name && child_ended_near(r, p, e)))
				continue;
			found = (long)i;
			nfound++;
		}
	return nfound == 1 ? found : -1;
}

/* The victims tied by cgroup: each its row, where one fits. */
static void infer_rows(struct report *r)
{
	struct sys *s = r->sys;

	for (size_t i = 0; i < s->nev; i++) {
		struct oomev *e = &s->ev[i];
		for (int v = 0; v < e->nv; v++) {
			long j;
			if (e->vtie[v] != VT_CGROUP || (j = infer_row(r, e, e->vname[v])) < 0)
				continue;
			e->vrow[v] = r->procs[j].pid;
		}
	}
}

/*
 * No kernel log: the build cgroup's counter rose by cg_kills in the
 * sample each event was counted in.  Those are the build's; in a PID
 * namespace (a container, whose build is all in that cgroup) the rest
 * were elsewhere.  A row of the build that ended by SIGKILL then is the
 * inferred victim.
 */
static void cg_attribute(struct report *r)
{
	struct sys *s = r->sys;

	for (size_t i = 0; i < s->nev; i++) {
		struct oomev *e = &s->ev[i];
		long j;
		if (e->cg_kills < 0)
			continue;
		if (run_in_pidns(r) && e->kills > e->cg_kills) {
			e->else_kills = e->kills - e->cg_kills;
			s->oom_else += e->else_kills;
		}
		if (e->cg_kills == 0 || e->nv >= MAX_VICTIMS || (j = infer_row(r, e, NULL)) < 0)
			continue;
		e->vpid[e->nv] = e->vrow[e->nv] = r->procs[j].pid;
		snprintf(e->vname[e->nv], sizeof(e->vname[0]), "%s", r->procs[j].comm);
		e->vscope[e->nv] = 1;
		e->vtie[e->nv] = VT_EXIT;
		e->vctr[e->nv] = -1;
		e->nv++;
	}
}

/* The row of this PID and name whose end lies nearest the samples around
 * e (inside them: distance 0), or NULL. */
static const struct proc *victim_row(const struct report *r, const struct oomev *e, int pid,
				     const char *name)
{
	const struct proc *best = NULL;
	double bd = INFINITY;

	for (size_t i = 0; i < r->nproc; i++) {
		const struct proc *p = &r->procs[i];
		double end, d;
		if (p->pid != pid || strncmp(p->comm, name, 15) != 0)
			continue;
		end = r->tree_off + p->end_s;
		d = isnan(end) ? 1e300 : end < e->prev_epoch ? e->prev_epoch - end
			: end > e->epoch ? end - e->epoch : 0;
		if (d < bd) {
			bd = d;
			best = p;
		}
	}
	return best;
}

/* The build's row of PID alive at epoch t (2 s of slack), or NULL. */
static const struct proc *alive_row(const struct report *r, int pid, double t)
{
	const struct proc *best = NULL;
	double bd = INFINITY;

	for (size_t i = 0; i < r->nproc; i++) {
		const struct proc *p = &r->procs[i];
		double a = r->tree_off + p->start_s, b = r->tree_off + p->end_s, d;
		if (p->pid != pid)
			continue;
		d = isnan(a) || isnan(b) ? 1e300 : t < a ? a - t : t > b ? t - b : 0;
		if (d < bd) {
			bd = d;
			best = p;
		}
	}
	return bd <= 2.0 || isnan(t) ? best : NULL;
}

static int by_kib(const void *a, const void *b)
{
	const struct oomtask *x = a, *y = b;

	return (x->kib < y->kib) - (x->kib > y->kib);
}

/* The others of the victim's cgroup: the kernel's dump (a system OOM's
 * dump holds every task of the host: only the build's are told), else
 * the build's compilers alive at the kill. */
static void victim_beside(const struct report *r, const struct kill *k, struct oomvictim *x)
{
	long page = sysconf(_SC_PAGESIZE);
	int memcg = k && k->k.constraint == RM_OOM_MEMCG;

	x->dump = k && k->k.dump_seen;
	x->beside = xmalloc(MAX_BESIDE * sizeof(*x->beside));
	if (page <= 0)
		page = 4096;
	if (x->dump) {
		for (size_t i = 0; i < k->ntasks && x->nbeside < MAX_BESIDE; i++) {
			const struct rm_oom_task *t = &k->tasks[i];
			struct oomtask *o = &x->beside[x->nbeside];
			if (t->tgid == k->k.pid)
				continue;
			memset(o, 0, sizeof(*o));
			o->row = alive_row(r, t->tgid, x->epoch);
			if (!memcg && !o->row)
				continue;
			o->pid = t->tgid;
			o->kib = (double)t->rss_pages * (double)page / 1024.0;
			o->from_dump = 1;
			rm_sanitize(t->name, strlen(t->name), o->name, sizeof(o->name));
			x->nbeside++;
		}
	} else if (!isnan(r->tree_off) && x->from_row) {
		double t = x->epoch - r->tree_off;
		for (size_t i = 0; i < r->nproc && x->nbeside < MAX_BESIDE; i++) {
			const struct proc *p = &r->procs[i];
			struct oomtask *o = &x->beside[x->nbeside];
			if (p == x->row || !p->unit || !(p->start_s <= t && p->end_s >= t))
				continue;
			memset(o, 0, sizeof(*o));
			o->row = p;
			o->pid = p->pid;
			o->kib = p->peak_kib;
			memcpy(o->name, p->comm, sizeof(o->name) - 1);
			o->name[sizeof(o->name) - 1] = '\0';
			x->nbeside++;
		}
	}
	qsort(x->beside, (size_t)x->nbeside, sizeof(*x->beside), by_kib);
}

/* Victim v of e, the build's, in full; k: its kernel-log kill, NULL
 * when the log named none (the cgroup's counter did). */
static void victim_detail(const struct report *r, struct oomev *e, int v, const struct kill *k)
{
	struct oomvictim *x = &e->vx[v];
	/* In a PID namespace the row's PID is the namespace's (vrow). */
	const struct proc *p = victim_row(r, e, e->vrow[v] > 0 ? e->vrow[v] : e->vpid[v], e->vname[v]);

	x->row = p;
	x->epoch = e->epoch;
	if (p && !isnan(r->tree_off) && !isnan(p->end_s)) {
		x->epoch = r->tree_off + p->end_s;
		x->from_row = 1;
	}
	x->stage = x->from_row ? stage_at(r, x->epoch) : e->stage;
	if (x->stage < 0)
		x->stage = e->stage;
	/* Context is read once a tick: the last one read before the kill. */
	x->ctx_age = NAN;
	if (!x->from_row) {
		x->ctx = e->ctx;
	} else if (x->epoch >= e->epoch || !e->has_prev) {
		x->ctx = e->ctx;
		x->ctx_age = x->epoch >= e->epoch ? x->epoch - e->epoch : NAN;
	} else {
		x->ctx = e->pctx;
		x->ctx_age = x->epoch - e->prev_epoch;
		if (x->ctx_age < 0)
			x->ctx_age = 0;
	}
	x->limit_kib = k && k->k.mem_limit_kib >= 0 ? (double)k->k.mem_limit_kib : NAN;
	x->usage_kib = k && k->k.mem_usage_kib >= 0 ? (double)k->k.mem_usage_kib : NAN;
	if (isnan(x->limit_kib) && e->vcons[v] == RM_OOM_MEMCG && !isnan(e->cg_limit_mb))
		x->limit_kib = e->cg_limit_mb * 1024.0;
	victim_beside(r, k, x);
}

/* Every victim of the build in full, once the rows are tied; vk: each
 * victim's kill (MAX_VICTIMS an event), NULL entries or all NULL. */
static void victims_detail(struct report *r, const struct kill *const *vk)
{
	struct sys *s = r->sys;

	for (size_t i = 0; i < s->nev; i++)
		for (int v = 0; v < s->ev[i].nv; v++)
			if (s->ev[i].vscope[v] != 0)
				victim_detail(r, &s->ev[i], v, vk ? vk[i * MAX_VICTIMS + v] : NULL);
}

void oom_attribute(struct report *r, const struct opts *o)
{
	struct sys *s = r->sys;
	struct kills ks = { 0 };
	const char *path = o->kmsg ? o->kmsg : "/dev/kmsg";
	size_t *run, nrun, ev = 0;
	long used = 0;
	const struct kill **vk;

	if (rm_kmsg_read_ooms(path, kill_cb, &ks) < 0) {
		s->kmsg_state = -1;
		s->kmsg_errno = errno;
		kills_free(&ks);
		/* A log the user named is worth a word on stderr. */
		if (o->kmsg) {
			char *shown = sanitized(o->kmsg, strlen(o->kmsg));
			warnx("--kmsg '%s': %s", shown, kmsg_why(s->kmsg_errno));
			free(shown);
		}
		if (s->has_cg_oom)
			cg_attribute(r);
		victims_detail(r, NULL);
		return;
	}
	s->kmsg_state = 1;
	run = xmalloc((ks.n ? ks.n : 1) * sizeof(*run));
	vk = xmalloc((s->nev * MAX_VICTIMS + 1) * sizeof(*vk));
	memset(vk, 0, (s->nev * MAX_VICTIMS + 1) * sizeof(*vk));
	nrun = kills_of_run(r, &ks, run);
	/* More kills than the counter saw: the earliest unnamed ones go. */
	while (nrun > (size_t)(s->oom_total > 0 ? s->oom_total : 0)) {
		size_t drop = 0;
		for (size_t j = 0; j < nrun; j++)
			if (!ks.v[run[j]].matched) {
				drop = j;
				break;
			}
		for (size_t j = drop; j + 1 < nrun; j++)
			run[j] = run[j + 1];
		nrun--;
	}
	/* In log order, each to the first sample whose counter rose and
	 * still has kills to name. */
	for (size_t j = 0; j < nrun && ev < s->nev; j++) {
		const struct kill *k = &ks.v[run[j]];
		struct oomev *e = &s->ev[ev];
		if (e->nv < MAX_VICTIMS) {
			int v = e->nv++;
			e->vpid[v] = k->k.pid;
			memcpy(e->vname[v], k->k.name, sizeof(e->vname[v]));
			e->vscope[v] = k->scope;
			e->vctr[v] = kill_ctr(r, &k->k);
			if (e->vctr[v] >= 0)
				r->ctrs.v[e->vctr[v]].kmsg_kills++;
			e->vtie[v] = k->tie;
			e->vrow[v] = 0;
			e->vcons[v] = k->k.constraint;
			rm_sanitize(k->k.oom_memcg, strlen(k->k.oom_memcg), e->vmemcg[v],
				    sizeof(e->vmemcg[v]));
			vk[ev * MAX_VICTIMS + (size_t)v] = k;
		}
		if (k->scope == 0) {
			e->else_kills++;
			s->oom_else++;
		}
		if (++used >= e->kills) {
			ev++;
			used = 0;
		}
	}
	free(run);
	infer_rows(r);
	victims_detail(r, vk);
	free(vk);
	kills_free(&ks);
}

long oom_build_kills(const struct sys *s)
{
	return s->oom_total - s->oom_else;
}

int oom_event_is_build(const struct oomev *e)
{
	return e->kills > e->else_kills;
}

/* The first victim of e in the wanted scope (build: 1 or -1), or -1. */
static int first_victim(const struct oomev *e, int build)
{
	for (int k = 0; k < e->nv; k++)
		if (build ? e->vscope[k] != 0 : e->vscope[k] == 0)
			return k;
	return -1;
}

long oom_ctr_kills(const struct report *r, int tied, const struct ctr **first)
{
	const struct ctrs *cs = &r->ctrs;
	long n = 0;

	*first = NULL;
	for (size_t i = 0; i < cs->n; i++) {
		const struct ctr *c = &cs->v[i];
		long k = c->oom_kills > c->kmsg_kills ? c->oom_kills : c->kmsg_kills;
		if (ctr_tied(c) != tied || k <= 0)
			continue;
		n += k;
		if (!*first || (c->nrises && (!(*first)->nrises || c->rise_at[0] < (*first)->rise_at[0])))
			*first = c;
	}
	return n;
}

/*
 * No kill of the build in the kernel log or the host's counter, but a
 * tied container's own oom_kill count rose: the build's kill, at its
 * first rise.  Returns 1 when given.
 */
static int ctr_kill_verdict(struct report *r)
{
	const struct sys *s = r->sys;
	const struct ctr *c;
	long n = oom_ctr_kills(r, 1, &c);
	struct verdict *v;

	if (n <= 0)
		return 0;
	v = verdict_add(r, V_OOM_CONTAINER);
	v->ctr = c;
	v->count = n;
	if (c->nrises) {
		v->at = c->rise_at[0] - s->first_epoch;
		v->stage = stage_at(r, c->rise_at[0]);
	}
	if (s->oom_else > 0) {
		v = verdict_add(r, V_OOM_ALSO_ELSEWHERE);
		v->count = s->oom_else;
	}
	return 1;
}

/*
 * The build ran container clients, none of whose containers could be
 * tied, and a container of the run was OOM-killed: it may have been the
 * build's, so it is never "no OOM kill in the build".  Returns 1 when
 * given.
 */
static int untied_kill_verdict(struct report *r)
{
	const struct sys *s = r->sys;
	const struct ctr *c;
	long n = ctr_untied_clients(r) ? oom_ctr_kills(r, 0, &c) : 0, inctr = 0;
	struct verdict *v;

	if (n <= 0)
		return 0;
	v = verdict_add(r, V_OOM_UNTIED);
	v->ctr = c;
	v->count = n;
	if (c->nrises) {
		v->at = c->rise_at[0] - s->first_epoch;
		v->stage = stage_at(r, c->rise_at[0]);
	}
	for (size_t i = 0; i < s->nev; i++)
		for (int k = 0; k < s->ev[i].nv; k++) {
			const struct oomev *e = &s->ev[i];
			if (e->vctr[k] < 0)
				continue;
			inctr++;
			if (&r->ctrs.v[e->vctr[k]] == c && !v->ev) {
				v->ev = e;
				v->victim = k;
				v->at = e->epoch - s->first_epoch;
				v->stage = e->stage;
			}
		}
	v->n[0] = (double)(s->oom_else - inctr);
	return 1;
}

/* The verdicts on OOM kills, as data; 1 when the build had one. */
int oom_verdict(struct report *r)
{
	struct sys *s = r->sys;
	long build = oom_build_kills(s);
	const struct oomev *e = NULL;
	struct verdict *v;
	int vi = -1;

	if (build <= 0 && (ctr_kill_verdict(r) || untied_kill_verdict(r)))
		return 1;
	if (s->nev == 0)
		return 0;
	if (build <= 0) {
		/* Only other programs' kills: named, not blamed on the build. */
		for (size_t i = 0; i < s->nev && vi < 0; i++) {
			e = &s->ev[i];
			vi = first_victim(e, 0);
		}
		v = verdict_add(r, V_OOM_ELSEWHERE);
		v->count = s->oom_else;
		v->ev = e;
		v->victim = e ? vi : -1;
		return 0;
	}
	for (size_t i = 0; i < s->nev; i++)
		if (oom_event_is_build(&s->ev[i])) {
			e = &s->ev[i];
			break;
		}
	v = verdict_add(r, V_OOM_KILL);
	v->count = build;
	v->at = e->epoch - s->first_epoch;
	v->stage = e->stage;
	v->ctx = e->ctx;
	v->ev = e;
	v->victim = first_victim(e, 1);
	if (v->victim >= 0) {
		/* The victim's own time, stage and the context then. */
		const struct oomvictim *x = &e->vx[v->victim];
		v->at = x->epoch - s->first_epoch;
		v->stage = x->stage;
		v->ctx = x->ctx;
	}
	/* In a container of the build: its limit, not a cgroup's. */
	if (v->victim >= 0 && e->vctr[v->victim] >= 0 && ctr_tied(&r->ctrs.v[e->vctr[v->victim]])) {
		v->k = V_OOM_CONTAINER;
		v->ctr = &r->ctrs.v[e->vctr[v->victim]];
	} else if (v->victim < 0) {
		/* The kernel log names no victim: a tied container's own
		 * count says where it was. */
		const struct ctr *c;
		if (oom_ctr_kills(r, 1, &c) > 0) {
			v->k = V_OOM_CONTAINER;
			v->ctr = c;
		}
	}
	if (s->oom_else > 0)
		v->flags |= VF_OF_BUILD;
	if (s->oom_else > 0) {
		v = verdict_add(r, V_OOM_ALSO_ELSEWHERE);
		v->count = s->oom_else;
	}
	return 1;
}
