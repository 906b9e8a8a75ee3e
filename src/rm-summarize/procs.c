/*
 * procs.c: rm-tree's files read into the report: the exit log (the
 * build's rows, and scope=out rows apart), the --job row, the --timeline
 * and the --stats row.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cu.h"
#include "procs.h"

enum { XL_PID, XL_PPID, XL_COMM, XL_START, XL_END, XL_PEAK, XL_PEAK_AT, XL_CPU, XL_EXIT,
       XL_CMD, XL_READ, XL_WRITE, XL_MAJFLT, XL_DELAY, XL_SOURCE = XL_DELAY + 5, XL_SCOPE,
       XL_EMULATED, XL_N };
static const char *const xl_names[XL_N] = {
	"pid", "ppid", "comm", "start_s", "end_s", "peak_rss_kib", "peak_at_s", "cpu_s",
	"exit", "cmd", "read_kib", "write_kib", "majflt", "cpu_delay_ms", "io_delay_ms",
	"swapin_delay_ms", "reclaim_delay_ms", "thrash_delay_ms", "source", "scope",
	"emulated",
};

/* rm-tree --stats, one row. */
enum { ST_MODE, ST_LOST, ST_RESYNCS, ST_DELAYACCT, ST_ERROR, ST_PIDNS, ST_CGNS, ST_CGROUP, ST_N };
static const char *const st_names[ST_N] = {
	"mode", "events_lost", "resyncs", "delayacct", "taskstats_error",
	"pid_ns", "cgroup_ns", "cgroup",
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

/* The column map of the file being read (files are read one at a time),
 * as long as the longest of the four lists. */
#define PCOL_MAX(a, b) ((int)(a) > (int)(b) ? (int)(a) : (int)(b))
static int pcol[PCOL_MAX(PCOL_MAX(JB_N, XL_N), PCOL_MAX(TL_N, ST_N))];
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

/* The emulated column: 1 yes, 0 no, -1 empty, absent or anything else. */
static int row_emulated(const struct rm_csv *c, int n)
{
	const struct rm_csv_field *f = pf(c, n, XL_EMULATED);

	if (f && f->len == 3 && memcmp(f->p, "yes", 3) == 0)
		return 1;
	if (f && f->len == 2 && memcmp(f->p, "no", 2) == 0)
		return 0;
	return -1;
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
	p->emulated = row_emulated(c, n);
	if (in && p->emulated == 1)
		r->nemulated++;
	/* An emulated process's command line starts with the interpreter
	 * (qemu-user through binfmt_misc): its unit and what "unit or cmd"
	 * shows are the real program's.  rm-tree said whether argv[0] is an
	 * interpreter; where it could not, its name says (qemu-*). */
	p->rcmd = p->cmd + rm_cu_real_start(p->cmd, strlen(p->cmd), p->emulated, -1);
	if (p->compiler &&
	    rm_cu_source_as(p->cmd, strlen(p->cmd), p->emulated, -1, unit, sizeof(unit)))
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
	/* Where the run was (rm-tree since issue 19): 0 and "" unknown. */
	st->pid_ns = isnan(pnum(c, n, ST_PIDNS)) ? 0 : (unsigned long)pnum(c, n, ST_PIDNS);
	st->cgroup_ns = isnan(pnum(c, n, ST_CGNS)) ? 0 : (unsigned long)pnum(c, n, ST_CGNS);
	pstr(c, n, ST_CGROUP, st->cgroup, sizeof(st->cgroup));
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
