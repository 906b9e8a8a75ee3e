/*
 * procs.c: rm-tree's files (the exit log, the --job row, the --timeline)
 * and what the report derives from them once every file is read: the
 * heaviest processes, groups by command, compile units, and the memory a
 * compile job needs per stage.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"
#include "cu.h"
#include "summarize.h"

enum { XL_PID, XL_PPID, XL_COMM, XL_START, XL_END, XL_PEAK, XL_PEAK_AT, XL_CPU, XL_EXIT,
       XL_CMD, XL_READ, XL_WRITE, XL_MAJFLT, XL_DELAY, XL_SOURCE = XL_DELAY + 5, XL_SCOPE,
       XL_N };
static const char *const xl_names[XL_N] = {
	"pid", "ppid", "comm", "start_s", "end_s", "peak_rss_kib", "peak_at_s", "cpu_s",
	"exit", "cmd", "read_kib", "write_kib", "majflt", "cpu_delay_ms", "io_delay_ms",
	"swapin_delay_ms", "reclaim_delay_ms", "thrash_delay_ms", "source", "scope",
};

/* rm-tree --stats, one row. */
enum { ST_MODE, ST_LOST, ST_RESYNCS, ST_DELAYACCT, ST_ERROR, ST_N };
static const char *const st_names[ST_N] = {
	"mode", "events_lost", "resyncs", "delayacct", "taskstats_error",
};

enum { JB_CMD, JB_START, JB_END, JB_ELAPSED, JB_EXIT, JB_PROCS, JB_PEAK, JB_PEAK_AT,
       JB_MAXPROC, JB_CGROUP, JB_USER, JB_SYS, JB_MEMMAX, JB_OOMK, JB_VICTIM, JB_MODE,
       JB_PFILE, JB_CGANON, JB_CGFILE, JB_CGKERN, JB_N };
static const char *const jb_names[JB_N] = {
	"cmd", "start_epoch", "end_epoch", "elapsed_s", "exit", "procs", "peak_rss_kib",
	"peak_at_s", "max_proc_rss_kib", "cgroup_peak_kib", "user_s", "sys_s",
	"mem_max_kib", "oom_kills", "oom_victim",   /* rm-tree --memory-max */
	"mode",
	"peak_file_kib", "cgroup_anon_kib", "cgroup_file_kib", "cgroup_kernel_kib",   /* rm-tree --cgroup */
};

enum { TL_EPOCH, TL_ELAPSED, TL_PROCS, TL_RSS, TL_CPU, TL_N };
static const char *const tl_names[TL_N] = { "epoch", "elapsed_s", "procs", "rss_kib", "cpu_pct" };

/* The column map of the file being read (files are read one at a time). */
static int pcol[32];
static int pncols;

enum pkind procs_kind(const struct rm_csv *h)
{
	if (header_col(h->f, h->nf, "mode") >= 0 && header_col(h->f, h->nf, "events_lost") >= 0 &&
	    header_col(h->f, h->nf, "delayacct") >= 0)
		return PK_STATS;
	if (header_col(h->f, h->nf, "start_epoch") >= 0 &&
	    header_col(h->f, h->nf, "max_proc_rss_kib") >= 0)
		return PK_JOB;
	if (header_col(h->f, h->nf, "pid") >= 0 && header_col(h->f, h->nf, "peak_rss_kib") >= 0)
		return PK_EXITLOG;
	if (header_col(h->f, h->nf, "epoch") >= 0 && header_col(h->f, h->nf, "procs") >= 0 &&
	    header_col(h->f, h->nf, "rss_kib") >= 0)
		return PK_TIMELINE;
	return PK_NONE;
}

void procs_header(struct report *r, enum pkind k, const struct rm_csv *h)
{
	const char *const *names = k == PK_JOB ? jb_names : k == PK_EXITLOG ? xl_names :
				   k == PK_STATS ? st_names : tl_names;
	int n = k == PK_JOB ? JB_N : k == PK_EXITLOG ? XL_N : k == PK_STATS ? ST_N : TL_N;

	for (int i = 0; i < n; i++)
		pcol[i] = header_col(h->f, h->nf, names[i]);
	pncols = h->nf;
	if (k == PK_EXITLOG) {
		r->nexitlogs++;
		if (pcol[XL_SCOPE] >= 0)
			r->has_scope = 1;
	}
	if (k == PK_TIMELINE && !r->tl.known) {
		r->tl.off = r->tl.first_epoch = r->tl.last_epoch = NAN;
		r->tl.peak_kib = r->tl.peak_epoch = r->tl.peak_elapsed = NAN;
		r->tl.max_procs = r->tl.max_cpu = NAN;
	}
}

static const struct rm_csv_field *pf(const struct rm_csv *c, int n, int k)
{
	return pcol[k] >= 0 && pcol[k] < n ? &c->f[pcol[k]] : NULL;
}

static double pnum(const struct rm_csv *c, int n, int k)
{
	const struct rm_csv_field *f = pf(c, n, k);
	return f ? field_num(f) : NAN;
}

static void pstr(const struct rm_csv *c, int n, int k, char *out, size_t size)
{
	const struct rm_csv_field *f = pf(c, n, k);

	out[0] = '\0';
	if (f)
		rm_sanitize(f->p, f->len, out, size);
}

static char *pdup(const struct rm_csv *c, int n, int k)
{
	const struct rm_csv_field *f = pf(c, n, k);
	return f ? sanitized(f->p, f->len) : xstrndup("", 0);
}

static double nmax(double a, double b)
{
	return isnan(a) || b > a ? b : a;
}

/* A PID column: 0 when unknown or not a PID (a cast of NaN is undefined). */
static int to_int(double v)
{
	return v >= 0 && v <= 4194304 ? (int)v : 0;
}

/* A row is in scope unless its scope column says "out". */
static int row_in_scope(const struct rm_csv *c, int n)
{
	const struct rm_csv_field *f = pf(c, n, XL_SCOPE);
	return !(f && f->len == 3 && memcmp(f->p, "out", 3) == 0);
}

static void exitlog_row(struct report *r, const struct rm_csv *c, int n)
{
	struct proc *p;
	char unit[RM_TEXT_MAX + 1];
	int in = row_in_scope(c, n);

	/* Only in-scope rows are the build's: the others are kept apart,
	 * for "Elsewhere on this host". */
	if (in && r->nproc == r->capproc) {
		r->capproc = r->capproc ? r->capproc * 2 : 64;
		r->procs = xrealloc(r->procs, r->capproc * sizeof(*r->procs));
	}
	if (!in && r->nothers == r->capothers) {
		r->capothers = r->capothers ? r->capothers * 2 : 16;
		r->others = xrealloc(r->others, r->capothers * sizeof(*r->others));
	}
	p = in ? &r->procs[r->nproc++] : &r->others[r->nothers++];
	memset(p, 0, sizeof(*p));
	p->scope = in;
	p->read_kib = pnum(c, n, XL_READ);
	p->write_kib = pnum(c, n, XL_WRITE);
	p->majflt = pnum(c, n, XL_MAJFLT);
	for (int i = 0; i < 5; i++)
		p->delay_ms[i] = pnum(c, n, XL_DELAY + i);
	pstr(c, n, XL_SOURCE, p->source, sizeof(p->source));
	p->pid = to_int(pnum(c, n, XL_PID));
	p->ppid = to_int(pnum(c, n, XL_PPID));
	pstr(c, n, XL_COMM, p->comm, sizeof(p->comm));
	p->start_s = pnum(c, n, XL_START);
	p->end_s = pnum(c, n, XL_END);
	p->peak_kib = pnum(c, n, XL_PEAK);
	p->peak_at = pnum(c, n, XL_PEAK_AT);
	p->cpu_s = pnum(c, n, XL_CPU);
	pstr(c, n, XL_EXIT, p->exit, sizeof(p->exit));
	p->cmd = pdup(c, n, XL_CMD);
	p->stage = -1;
	p->peak_epoch = NAN;
	p->compiler = rm_cu_is_compiler(p->comm);
	if (p->compiler && rm_cu_source(p->cmd, strlen(p->cmd), unit, sizeof(unit)))
		p->unit = xstrndup(unit, strlen(unit));
}

static void job_row(struct report *r, const struct rm_csv *c, int n)
{
	struct job *j = &r->job;

	free(j->cmd);
	j->known = 1;
	j->cmd = pdup(c, n, JB_CMD);
	pstr(c, n, JB_EXIT, j->exit, sizeof(j->exit));
	j->start_epoch = pnum(c, n, JB_START);
	j->end_epoch = pnum(c, n, JB_END);
	j->elapsed = pnum(c, n, JB_ELAPSED);
	j->procs = pnum(c, n, JB_PROCS);
	j->peak_kib = pnum(c, n, JB_PEAK);
	j->peak_at = pnum(c, n, JB_PEAK_AT);
	j->max_proc_kib = pnum(c, n, JB_MAXPROC);
	j->cgroup_kib = pnum(c, n, JB_CGROUP);
	j->user_s = pnum(c, n, JB_USER);
	j->sys_s = pnum(c, n, JB_SYS);
	j->mem_max_kib = pnum(c, n, JB_MEMMAX);
	j->oom_kills = pnum(c, n, JB_OOMK);
	pstr(c, n, JB_VICTIM, j->victim, sizeof(j->victim));
	j->peak_file_kib = pnum(c, n, JB_PFILE);
	j->cg_anon_kib = pnum(c, n, JB_CGANON);
	j->cg_file_kib = pnum(c, n, JB_CGFILE);
	j->cg_kernel_kib = pnum(c, n, JB_CGKERN);
	/* rm-tree --exec says its mode in the job row (rm-run has no
	 * --stats file): the same line in the summary. */
	if (!r->stats.known && pf(c, n, JB_MODE) && pf(c, n, JB_MODE)->len) {
		r->stats.known = 1;
		pstr(c, n, JB_MODE, r->stats.mode, sizeof(r->stats.mode));
		r->stats.events_lost = r->stats.resyncs = r->stats.delayacct = NAN;
	}
}

static void stats_row(struct report *r, const struct rm_csv *c, int n)
{
	struct stats *st = &r->stats;

	st->known = 1;
	pstr(c, n, ST_MODE, st->mode, sizeof(st->mode));
	st->events_lost = pnum(c, n, ST_LOST);
	st->resyncs = pnum(c, n, ST_RESYNCS);
	st->delayacct = pnum(c, n, ST_DELAYACCT);
	pstr(c, n, ST_ERROR, st->error, sizeof(st->error));
}

static void timeline_row(struct report *r, const struct rm_csv *c, int n)
{
	struct timeline *t = &r->tl;
	double epoch = pnum(c, n, TL_EPOCH), el = pnum(c, n, TL_ELAPSED);
	double rss = pnum(c, n, TL_RSS);

	if (isnan(epoch))
		return;
	if (t->rows++ == 0) {
		t->known = 1;
		t->first_epoch = epoch;
		t->off = epoch - (isnan(el) ? 0 : el);
	}
	t->last_epoch = epoch;
	if (t->npts == t->cappts) {
		t->cappts = t->cappts ? t->cappts * 2 : 256;
		t->pts = xrealloc(t->pts, t->cappts * sizeof(*t->pts));
	}
	t->pts[t->npts++] = (struct tlpoint){ epoch, el, pnum(c, n, TL_PROCS), rss,
					      pnum(c, n, TL_CPU) };
	if (!isnan(rss) && (isnan(t->peak_kib) || rss > t->peak_kib)) {
		t->peak_kib = rss;
		t->peak_epoch = epoch;
		t->peak_elapsed = el;
	}
	t->max_procs = nmax(t->max_procs, pnum(c, n, TL_PROCS));
	t->max_cpu = nmax(t->max_cpu, pnum(c, n, TL_CPU));
}

int procs_row(struct report *r, enum pkind k, struct rm_csv *c, char *why, size_t wsize)
{
	int n = c->nf;

	if (n < pncols && !c->cut) {
		snprintf(why, wsize, "%d field%s where the header has %d", n, n == 1 ? "" : "s", pncols);
		return -1;
	}
	if (c->cut)
		n--;
	switch (k) {
	case PK_EXITLOG:
		exitlog_row(r, c, n);
		break;
	case PK_JOB:
		job_row(r, c, n);
		break;
	case PK_TIMELINE:
		timeline_row(r, c, n);
		break;
	case PK_STATS:
		stats_row(r, c, n);
		break;
	case PK_NONE:
		break;
	}
	return 0;
}

static int matches(const regex_t *re, const struct proc *p)
{
	return regexec(re, p->comm, 0, NULL, 0) == 0 || regexec(re, p->cmd, 0, NULL, 0) == 0 ||
	       (p->unit && regexec(re, p->unit, 0, NULL, 0) == 0);
}

static int by_peak(const void *a, const void *b)
{
	const struct proc *x = *(struct proc *const *)a, *y = *(struct proc *const *)b;
	double px = isnan(x->peak_kib) ? -1 : x->peak_kib, py = isnan(y->peak_kib) ? -1 : y->peak_kib;

	if (px != py)
		return px < py ? 1 : -1;
	return x->pid - y->pid;
}

static int by_comm(const void *a, const void *b)
{
	const struct proc *x = *(struct proc *const *)a, *y = *(struct proc *const *)b;
	return strcmp(x->comm, y->comm);
}

static int by_unit(const void *a, const void *b)
{
	const struct proc *x = *(struct proc *const *)a, *y = *(struct proc *const *)b;
	return strcmp(x->unit, y->unit);
}

static int group_cmp(const void *a, const void *b)
{
	const struct group *x = a, *y = b;
	if (x->peak_kib != y->peak_kib)
		return x->peak_kib < y->peak_kib ? 1 : -1;
	return strcmp(x->comm, y->comm);
}

static int unit_cmp(const void *a, const void *b)
{
	const struct unit *x = a, *y = b;
	if (x->peak_kib != y->peak_kib)
		return x->peak_kib < y->peak_kib ? 1 : -1;
	return strcmp(x->name, y->name);
}

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Groups by command name and compile units, over the shown processes. */
static void derive_lists(struct report *r)
{
	struct proc **v = xmalloc((r->nproc ? r->nproc : 1) * sizeof(*v));
	size_t n = 0;

	for (size_t i = 0; i < r->nproc; i++)
		if (r->procs[i].shown)
			v[n++] = &r->procs[i];
	qsort(v, n, sizeof(*v), by_comm);
	r->groups = xmalloc((n ? n : 1) * sizeof(*r->groups));
	for (size_t i = 0; i < n; i++) {
		struct group *g;
		if (r->ngroups == 0 || strcmp(r->groups[r->ngroups - 1].comm, v[i]->comm) != 0) {
			g = &r->groups[r->ngroups++];
			g->comm = v[i]->comm;
			g->count = 0;
			g->peak_kib = 0;
			g->cpu_s = 0;
		}
		g = &r->groups[r->ngroups - 1];
		g->count++;
		if (!isnan(v[i]->peak_kib) && v[i]->peak_kib > g->peak_kib)
			g->peak_kib = v[i]->peak_kib;
		if (!isnan(v[i]->cpu_s))
			g->cpu_s += v[i]->cpu_s;
	}
	qsort(r->groups, r->ngroups, sizeof(*r->groups), group_cmp);

	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (v[i]->unit && !isnan(v[i]->peak_kib))
			v[m++] = v[i];
	qsort(v, m, sizeof(*v), by_unit);
	r->units = xmalloc((m ? m : 1) * sizeof(*r->units));
	for (size_t i = 0; i < m; i++) {
		struct unit *u;
		if (r->nunits == 0 || strcmp(r->units[r->nunits - 1].name, v[i]->unit) != 0) {
			u = &r->units[r->nunits++];
			u->name = v[i]->unit;
			u->comm = v[i]->comm;
			u->peak_kib = -1;
			u->count = 0;
			u->stage = -1;
		}
		u = &r->units[r->nunits - 1];
		u->count++;
		if (v[i]->peak_kib > u->peak_kib) {
			u->peak_kib = v[i]->peak_kib;
			u->comm = v[i]->comm;
			u->stage = v[i]->stage;
		}
	}
	qsort(r->units, r->nunits, sizeof(*r->units), unit_cmp);
	free(v);
}

/*
 * Memory per compile job, per stage: the p95 (nearest rank) of the peaks
 * of every compiler process whose peak fell in that stage, rounded up to
 * 64 MiB; and the -j this machine's RAM allows at that size, keeping the
 * near-OOM headroom (at most a quarter of RAM) free.
 */
static void derive_perjob(struct report *r, const struct opts *o)
{
	double reserve = o->near_oom_mb < r->ram_mb / 4 ? o->near_oom_mb : r->ram_mb / 4;

	for (size_t i = 0; i < r->nproc; i++) {
		struct proc *p = &r->procs[i];
		struct stage *st;
		int si = p->stage;
		if (!p->compiler || isnan(p->peak_kib))
			continue;
		if (si < 0)
			si = stage_intern(r, "", 0);
		st = &r->stages[si];
		if (st->ncp == st->capcp) {
			st->capcp = st->capcp ? st->capcp * 2 : 16;
			st->cpeaks = xrealloc(st->cpeaks, st->capcp * sizeof(double));
		}
		st->cpeaks[st->ncp++] = p->peak_kib;
	}
	r->perjob = xmalloc((size_t)(r->nstages ? r->nstages : 1) * sizeof(*r->perjob));
	for (int i = 0; i < r->nstages; i++) {
		struct stage *st = &r->stages[i];
		struct perjob *pj;
		size_t rank;
		if (!st->ncp)
			continue;
		qsort(st->cpeaks, st->ncp, sizeof(double), dbl_cmp);
		pj = &r->perjob[r->nperjob++];
		pj->stage = i;
		pj->n = st->ncp;
		rank = (size_t)ceil(0.95 * (double)st->ncp);
		pj->p95_kib = st->cpeaks[(rank ? rank : 1) - 1];
		pj->max_kib = st->cpeaks[st->ncp - 1];
		pj->suggest_mb = ceil(pj->p95_kib / 1024.0 / 64.0) * 64.0;
		if (pj->suggest_mb < 64)
			pj->suggest_mb = 64;
		pj->safe_j = isnan(r->ram_mb) ? -1 : (long)floor((r->ram_mb - reserve) / pj->suggest_mb);
		if (pj->safe_j == 0)
			pj->safe_j = 1;
	}
}

/*
 * When a process's peak was reached, for its stage: the sampled time of
 * its peak (an exit log's times are seconds after OFF), else its end (an exact row's peak is the kernel's high-water
 * mark at exit, reached by then at the latest), else its start.
 */
static double peak_bound(const struct proc *p, double off)
{
	double t = !isnan(p->peak_at) ? p->peak_at : !isnan(p->end_s) ? p->end_s : p->start_s;

	if (isnan(t))
		return NAN;
	return off + t;
}

void report_finish(struct report *r, const struct opts *o)
{
	double off = NAN;

	r->cores = o->cores > 0 ? o->cores : rm_cg_cores(0);   /* sys_finish: the CSV's */
	r->ram_mb = r->sys ? r->sys->mem_total_mb : NAN;
	r->host_ram_mb = NAN;
	if (isnan(r->ram_mb)) {
		struct rm_meminfo mi;
		if (rm_meminfo_read(&mi) == 0)
			r->ram_mb = (double)mi.total_kib / 1024.0;
	}
	if (r->sys)
		sys_finish(r, o);

	/* rm-tree's times are seconds since it started: its timeline or job
	 * row says when that was; with neither, a monitor's rm-tree started
	 * with its rm-sample. */
	if (r->tl.known)
		off = r->tl.off;
	else if (r->job.known && !isnan(r->job.start_epoch))
		off = r->job.start_epoch;
	else if (r->sys && r->sys->samples)
		off = r->sys->first_epoch - r->sys->first_elapsed;
	for (size_t i = 0; i < r->nproc; i++) {
		struct proc *p = &r->procs[i];
		if (!isnan(p->peak_at))
			p->peak_epoch = off + p->peak_at;
		p->stage = stage_at(r, peak_bound(p, off));
		p->shown = (!o->has_inc || matches(&o->inc, p)) && !(o->has_exc && matches(&o->exc, p));
	}
	for (size_t i = 0; i < r->nothers; i++) {
		struct proc *p = &r->others[i];
		if (!isnan(p->peak_at))
			p->peak_epoch = off + p->peak_at;
		p->stage = stage_at(r, peak_bound(p, off));
	}
	r->oorder = xmalloc((r->nothers ? r->nothers : 1) * sizeof(*r->oorder));
	for (size_t i = 0; i < r->nothers; i++)
		r->oorder[i] = &r->others[i];
	qsort(r->oorder, r->nothers, sizeof(*r->oorder), by_peak);
	r->order = xmalloc((r->nproc ? r->nproc : 1) * sizeof(*r->order));
	for (size_t i = 0; i < r->nproc; i++)
		r->order[i] = &r->procs[i];
	qsort(r->order, r->nproc, sizeof(*r->order), by_peak);
	derive_lists(r);
	derive_perjob(r, o);
}

void report_free(struct report *r)
{
	for (size_t i = 0; i < r->nproc; i++) {
		free(r->procs[i].cmd);
		free(r->procs[i].unit);
	}
	for (size_t i = 0; i < r->nothers; i++) {
		free(r->others[i].cmd);
		free(r->others[i].unit);
	}
	free(r->others);
	free(r->oorder);
	for (int i = 0; i < r->nstages; i++) {
		free(r->stages[i].name);
		free(r->stages[i].raw);
		free(r->stages[i].cpeaks);
	}
	sys_free(r->sys);
	free(r->procs);
	free(r->stages);
	free(r->stage_hash);
	free(r->order);
	free(r->units);
	free(r->groups);
	free(r->perjob);
	free(r->verdicts);
	free(r->job.cmd);
	free(r->tl.pts);
	free(r->files);
	memset(r, 0, sizeof(*r));
}

static void num_or_empty(struct rm_buf *b, double v, int prec)
{
	if (!isnan(v))
		rm_buf_num(b, v, prec);
}

/* --csv FILE: the shown processes' peaks, heaviest first. */
int write_proc_csv(const struct report *r, const char *path)
{
	struct rm_buf b = { 0 };
	int rc;

	rm_buf_adds(&b, "pid,ppid,comm,start_s,end_s,peak_rss_kib,peak_at_s,cpu_s,exit,unit,cmd\n");
	for (size_t i = 0; i < r->nproc; i++) {
		const struct proc *p = r->order[i];
		if (!p->shown)
			continue;
		rm_buf_addf(&b, "%d,%d,", p->pid, p->ppid);
		rm_buf_csv(&b, p->comm);
		rm_buf_addc(&b, ',');
		num_or_empty(&b, p->start_s, 3);
		rm_buf_addc(&b, ',');
		num_or_empty(&b, p->end_s, 3);
		rm_buf_addc(&b, ',');
		num_or_empty(&b, p->peak_kib, 0);
		rm_buf_addc(&b, ',');
		num_or_empty(&b, p->peak_at, 3);
		rm_buf_addc(&b, ',');
		num_or_empty(&b, p->cpu_s, 2);
		rm_buf_addc(&b, ',');
		rm_buf_csv(&b, p->exit);
		rm_buf_addc(&b, ',');
		rm_buf_csv(&b, p->unit ? p->unit : "");
		rm_buf_addc(&b, ',');
		rm_buf_csv(&b, p->cmd);
		rm_buf_addc(&b, '\n');
	}
	if (b.oom) {
		errno = ENOMEM;
		rm_buf_free(&b);
		return -1;
	}
	rc = write_whole(path, &b);
	rm_buf_free(&b);
	return rc;
}
