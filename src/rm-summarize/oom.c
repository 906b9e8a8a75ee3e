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
 */
#include <err.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kmsg.h"
#include "summarize.h"

#define MAX_KILLS 4096

struct kill {
	struct rm_oom_kill k;
	int scope;             /* 1 build, 0 elsewhere, -1 unknown */
	int matched;           /* named by an exit-log row */
};

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
	ks->v[ks->n++].k = *k;
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

const char *oom_cause(int constraint)
{
	switch (constraint) {
	case RM_OOM_MEMCG:
		return "killed by the limit of cgroup";
	case RM_OOM_CPUSET:
		return "killed when the memory nodes of its cpuset ran out";
	case RM_OOM_MEMORY_POLICY:
		return "killed when the memory nodes of its memory policy ran out";
	case RM_OOM_NONE:
		return "killed when the host ran out of memory";
	default:
		return "";
	}
}

void oom_attribute(struct report *r, const struct opts *o)
{
	struct sys *s = r->sys;
	struct kills ks = { 0 };
	const char *path = o->kmsg ? o->kmsg : "/dev/kmsg";
	double boot = rm_now_epoch() - rm_now_mono();
	int complete = scope_complete(r);
	size_t *run, nrun = 0, ev = 0;
	long used = 0;

	if (rm_kmsg_read_ooms(path, kill_cb, &ks) < 0) {
		s->kmsg_state = -1;
		s->kmsg_errno = errno;
		free(ks.v);
		/* A log the user named is worth a word on stderr. */
		if (o->kmsg) {
			char *shown = sanitized(o->kmsg, strlen(o->kmsg));
			warnx("--kmsg '%s': %s", shown, kmsg_why(s->kmsg_errno));
			free(shown);
		}
		return;
	}
	s->kmsg_state = 1;
	run = xmalloc((ks.n ? ks.n : 1) * sizeof(*run));
	for (size_t i = 0; i < ks.n; i++) {
		struct kill *k = &ks.v[i];
		char name[64];
		/* Sanitized as the exit logs' comm is, to compare the two. */
		rm_sanitize(k->k.name, strlen(k->k.name), name, sizeof(name));
		memcpy(k->k.name, name, sizeof(name));
		if (named_in(r->procs, r->nproc, k->k.pid, name)) {
			k->scope = 1;
			k->matched = 1;
		} else if (named_in(r->others, r->nothers, k->k.pid, name)) {
			k->scope = 0;
			k->matched = 1;
		} else {
			/* Log time as wall time, only to tell whether an
			 * unnamed kill fell in the run: 2 s and 100 ppm of
			 * uptime of slack for the drift of the two clocks. */
			double at = boot + k->k.klog_s, tol = 2.0 + 1e-4 * k->k.klog_s;
			int near = 0;
			for (size_t j = 0; j < s->nev && !near; j++)
				near = at >= s->ev[j].prev_epoch - tol && at <= s->ev[j].epoch + tol;
			if (!near)
				continue;
			k->scope = complete ? 0 : -1;
		}
		run[nrun++] = i;
	}
	/* More kills than the counter saw: the earliest unnamed ones go. */
	while (nrun > (size_t)(s->oom_total > 0 ? s->oom_total : 0)) {
		size_t drop = 0;
		for (size_t j = 0; j < nrun; j++)
			if (!ks.v[run[j]].matched) {
				drop = j;
				break;
			}
		memmove(run + drop, run + drop + 1, (nrun - drop - 1) * sizeof(*run));
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
			e->vcons[v] = k->k.constraint;
			rm_sanitize(k->k.oom_memcg, strlen(k->k.oom_memcg), e->vmemcg[v],
				    sizeof(e->vmemcg[v]));
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
	free(ks.v);
}

long oom_build_kills(const struct sys *s)
{
	return s->oom_total - s->oom_else;
}

int oom_event_is_build(const struct oomev *e)
{
	return e->kills > e->else_kills;
}

/* " in stage S, while: CONTEXT", or "". */
static void oom_where(const struct report *r, int stage, const char *ctx, char *buf, size_t size)
{
	const char *sn = stage >= 0 ? r->stages[stage].name : "";
	int n = 0;

	buf[0] = '\0';
	if (sn[0])
		n = snprintf(buf, size, " in stage %s", sn);
	if (ctx && ctx[0] && n >= 0 && (size_t)n < size)
		snprintf(buf + n, size - (size_t)n, ", while: %s", ctx);
}

/* The first victim of e in the wanted scope (build: 1 or -1), or -1. */
static int first_victim(const struct oomev *e, int build)
{
	for (int k = 0; k < e->nv; k++)
		if (build ? e->vscope[k] != 0 : e->vscope[k] == 0)
			return k;
	return -1;
}

/* The verdicts on OOM kills; 1 when the build had one. */
int oom_verdict(struct report *r, const struct opts *o)
{
	struct sys *s = r->sys;
	long build = oom_build_kills(s);
	char w[CTX_RAW + 200], clock[32], vict[200] = "";
	const struct oomev *e = NULL;
	int v = -1;

	(void)o;
	if (s->nev == 0)
		return 0;
	if (build <= 0) {
		/* Only other programs' kills: named, not blamed on the build. */
		for (size_t i = 0; i < s->nev && v < 0; i++) {
			e = &s->ev[i];
			v = first_victim(e, 0);
		}
		if (e && v >= 0) {
			const char *why = oom_cause(e->vcons[v]);
			snprintf(vict, sizeof(vict), " (first: %s, PID %d%s%s%s%s)", e->vname[v], e->vpid[v],
				 why[0] ? ", " : "", why, e->vcons[v] == RM_OOM_MEMCG && e->vmemcg[v][0] ? " " : "",
				 e->vcons[v] == RM_OOM_MEMCG ? e->vmemcg[v] : "");
		}
		verdict_add(r, "oom-elsewhere",
			    "No OOM kill in the build: the kernel killed %ld process%s elsewhere on this host%s.",
			    s->oom_else, s->oom_else == 1 ? "" : "es", vict);
		return 0;
	}
	for (size_t i = 0; i < s->nev; i++)
		if (oom_event_is_build(&s->ev[i])) {
			e = &s->ev[i];
			break;
		}
	fmt_clock(e->epoch - s->first_epoch, clock, sizeof(clock));
	oom_where(r, e->stage, e->ctx, w, sizeof(w));
	v = first_victim(e, 1);
	if (v >= 0)
		snprintf(vict, sizeof(vict), " (killed %s, PID %d)", e->vname[v], e->vpid[v]);
	if (v >= 0 && e->vcons[v] == RM_OOM_MEMCG) {
		verdict_add(r, "oom-kill",
			    "OOM: the kernel killed %ld process%s of the build; the first at +%s%s%s. It was killed by the limit of cgroup %s, not for want of memory on the host: raise that cgroup's memory limit, or make the build fit under it.",
			    build, build == 1 ? "" : "es", clock, vict, w,
			    e->vmemcg[v][0] ? e->vmemcg[v] : "(not logged)");
	} else if (v >= 0 && (e->vcons[v] == RM_OOM_CPUSET || e->vcons[v] == RM_OOM_MEMORY_POLICY)) {
		verdict_add(r, "oom-kill",
			    "OOM: the kernel killed %ld process%s of the build; the first at +%s%s%s. It was %s (%s), not for want of memory on the host: allow it more memory nodes.",
			    build, build == 1 ? "" : "es", clock, vict, w, oom_cause(e->vcons[v]),
			    rm_kmsg_constraint_name(e->vcons[v]));
	} else {
		verdict_add(r, "oom-kill",
			    "OOM: the kernel killed %ld process%s%s; the first at +%s%s%s. Lower the memory per job (-j) for that stage, or add RAM.",
			    build, build == 1 ? "" : "es", s->oom_else > 0 ? " of the build" : "", clock, vict, w);
	}
	if (s->oom_else > 0)
		verdict_add(r, "oom-elsewhere",
			    "The kernel also killed %ld process%s elsewhere on this host (see \"Elsewhere on this host\").",
			    s->oom_else, s->oom_else == 1 ? "" : "es");
	return 1;
}
