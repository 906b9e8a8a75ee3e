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
#include "fold.h"
#include "procs.h"
#include "schema.h"

/* The exit log's, the job row's and the timeline's columns are
 * lib/schema.h's (rm-tree writes them from the same tables). */

/* rm-tree --stats, one row. */
enum { ST_MODE, ST_LOST, ST_RESYNCS, ST_DELAYACCT, ST_ERROR, ST_PIDNS, ST_CGNS, ST_CGROUP, ST_N };
static const char *const st_names[ST_N] = {
	"mode", "events_lost", "resyncs", "delayacct", "taskstats_error",
	"pid_ns", "cgroup_ns", "cgroup",
};

/* The column map of the file being read (files are read one at a time),
 * as long as the longest of the four lists. */
#define PCOL_MAX(a, b) ((int)(a) > (int)(b) ? (int)(a) : (int)(b))
static int pcol[PCOL_MAX(PCOL_MAX(RM_JOB_N, RM_XL_N), PCOL_MAX(RM_TL_N, ST_N))];
static int pncols;

enum pkind procs_kind(const struct rm_csv *h)
{
	if (header_col(h->f, h->nf, "mode") >= 0 && header_col(h->f, h->nf, "events_lost") >= 0 &&
	    header_col(h->f, h->nf, "delayacct") >= 0)
		return PK_STATS;
	if (header_col(h->f, h->nf, rm_job_names[RM_JOB_START_EPOCH]) >= 0 &&
	    header_col(h->f, h->nf, rm_job_names[RM_JOB_MAX_PROC_RSS_KIB]) >= 0)
		return PK_JOB;
	if (header_col(h->f, h->nf, rm_xl_names[RM_XL_PID]) >= 0 &&
	    header_col(h->f, h->nf, rm_xl_names[RM_XL_PEAK_RSS_KIB]) >= 0)
		return PK_EXITLOG;
	if (header_col(h->f, h->nf, rm_tl_names[RM_TL_EPOCH]) >= 0 &&
	    header_col(h->f, h->nf, rm_tl_names[RM_TL_PROCS]) >= 0 &&
	    header_col(h->f, h->nf, rm_tl_names[RM_TL_RSS_KIB]) >= 0)
		return PK_TIMELINE;
	return PK_NONE;
}

void procs_header(struct report *r, enum pkind k, const struct rm_csv *h)
{
	const char *const *names = k == PK_JOB ? rm_job_names : k == PK_EXITLOG ? rm_xl_names :
				   k == PK_STATS ? st_names : rm_tl_names;
	int n = k == PK_JOB ? RM_JOB_N : k == PK_EXITLOG ? RM_XL_N : k == PK_STATS ? ST_N : RM_TL_N;

	for (int i = 0; i < n; i++)
		pcol[i] = header_col(h->f, h->nf, names[i]);
	pncols = h->nf;
	if (k == PK_EXITLOG) {
		/* The text or Markdown report folds its one exit log as read,
		 * unless the system CSV (read first) has OOM kills to tie to
		 * rows. */
		r->fold = r->opt && r->opt->fold && r->nexitlogs == 0 && r->fold_one_log &&
			  (!r->sys || r->sys->nev == 0);
		r->nexitlogs++;
		if (pcol[RM_XL_SCOPE] >= 0)
			r->has_scope = 1;
	}
	if (k == PK_TIMELINE)
		r->tl.given = 1;
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
	const struct rm_csv_field *f = pf(c, n, RM_XL_EMULATED);

	if (f && f->len == 3 && memcmp(f->p, "yes", 3) == 0)
		return 1;
	if (f && f->len == 2 && memcmp(f->p, "no", 2) == 0)
		return 0;
	return -1;
}

/* A row is in scope unless its scope column says "out". */
static int row_in_scope(const struct rm_csv *c, int n)
{
	const struct rm_csv_field *f = pf(c, n, RM_XL_SCOPE);
	return !(f && f->len == 3 && memcmp(f->p, "out", 3) == 0);
}

static void exitlog_row(struct report *r, const struct rm_csv *c, int n)
{
	struct proc *p, folded;
	char unit[RM_TEXT_MAX + 1];
	double uid;
	int in = row_in_scope(c, n);

	/* Only in-scope rows are the build's: the others are kept apart,
	 * for "Elsewhere on this host". */
	if (in && r->fold) {
		p = &folded;
	} else if (in && r->nproc == r->capproc) {
		r->capproc = r->capproc ? r->capproc * 2 : 64;
		r->procs = xrealloc(r->procs, r->capproc * sizeof(*r->procs));
	}
	if (!in && r->nothers == r->capothers) {
		r->capothers = r->capothers ? r->capothers * 2 : 16;
		r->others = xrealloc(r->others, r->capothers * sizeof(*r->others));
	}
	if (!(in && r->fold))
		p = in ? &r->procs[r->nproc++] : &r->others[r->nothers++];
	memset(p, 0, sizeof(*p));
	p->scope = in;
	p->read_kib = pnum(c, n, RM_XL_READ_KIB);
	p->write_kib = pnum(c, n, RM_XL_WRITE_KIB);
	p->majflt = pnum(c, n, RM_XL_MAJFLT);
	for (int i = 0; i < 5; i++)
		p->delay_ms[i] = pnum(c, n, RM_XL_CPU_DELAY_MS + i);
	pstr(c, n, RM_XL_SOURCE, p->source, sizeof(p->source));
	p->pid = to_int(pnum(c, n, RM_XL_PID));
	p->ppid = to_int(pnum(c, n, RM_XL_PPID));
	pstr(c, n, RM_XL_COMM, p->comm, sizeof(p->comm));
	p->start_s = pnum(c, n, RM_XL_START_S);
	p->end_s = pnum(c, n, RM_XL_END_S);
	p->peak_kib = pnum(c, n, RM_XL_PEAK_RSS_KIB);
	p->peak_at = pnum(c, n, RM_XL_PEAK_AT_S);
	p->cpu_s = pnum(c, n, RM_XL_CPU_S);
	pstr(c, n, RM_XL_EXIT, p->exit, sizeof(p->exit));
	p->cmd = pdup(c, n, RM_XL_CMD);
	p->stage = -1;
	p->peak_epoch = NAN;
	p->compiler = p == &folded ? fold_compiler(r, p->comm) : rm_cu_is_compiler(p->comm);
	p->emulated = row_emulated(c, n);
	/* The uid column (newer exit logs): -1 where absent or empty. */
	uid = pnum(c, n, RM_XL_UID);
	p->uid = uid >= 0 && uid <= 4294967295.0 ? (long)uid : -1;
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
	if (p == &folded)
		fold_row(r, p);
}

static void job_row(struct report *r, const struct rm_csv *c, int n)
{
	struct job *j = &r->job;

	free(j->cmd);
	j->known = 1;
	j->cmd = pdup(c, n, RM_JOB_CMD);
	pstr(c, n, RM_JOB_EXIT, j->exit, sizeof(j->exit));
	j->start_epoch = pnum(c, n, RM_JOB_START_EPOCH);
	j->end_epoch = pnum(c, n, RM_JOB_END_EPOCH);
	j->elapsed = pnum(c, n, RM_JOB_ELAPSED_S);
	j->procs = pnum(c, n, RM_JOB_PROCS);
	j->peak_kib = pnum(c, n, RM_JOB_PEAK_RSS_KIB);
	j->peak_at = pnum(c, n, RM_JOB_PEAK_AT_S);
	j->max_proc_kib = pnum(c, n, RM_JOB_MAX_PROC_RSS_KIB);
	j->cgroup_kib = pnum(c, n, RM_JOB_CGROUP_PEAK_KIB);
	j->user_s = pnum(c, n, RM_JOB_USER_S);
	j->sys_s = pnum(c, n, RM_JOB_SYS_S);
	j->mem_max_kib = pnum(c, n, RM_JOB_MEM_MAX_KIB);
	j->oom_kills = pnum(c, n, RM_JOB_OOM_KILLS);
	pstr(c, n, RM_JOB_OOM_VICTIM, j->victim, sizeof(j->victim));
	j->peak_file_kib = pnum(c, n, RM_JOB_PEAK_FILE_KIB);
	j->cg_anon_kib = pnum(c, n, RM_JOB_CGROUP_ANON_KIB);
	j->cg_file_kib = pnum(c, n, RM_JOB_CGROUP_FILE_KIB);
	j->cg_kernel_kib = pnum(c, n, RM_JOB_CGROUP_KERNEL_KIB);
	/* rm-tree --exec says its mode in the job row (rm-run has no
	 * --stats file): the same line in the summary. */
	if (!r->stats.known && pf(c, n, RM_JOB_MODE) && pf(c, n, RM_JOB_MODE)->len) {
		r->stats.known = 1;
		pstr(c, n, RM_JOB_MODE, r->stats.mode, sizeof(r->stats.mode));
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
	/* Where the run was (newer rm-tree --stats rows): 0 and "" unknown. */
	st->pid_ns = isnan(pnum(c, n, ST_PIDNS)) ? 0 : (unsigned long)pnum(c, n, ST_PIDNS);
	st->cgroup_ns = isnan(pnum(c, n, ST_CGNS)) ? 0 : (unsigned long)pnum(c, n, ST_CGNS);
	pstr(c, n, ST_CGROUP, st->cgroup, sizeof(st->cgroup));
}

static void timeline_row(struct report *r, const struct rm_csv *c, int n)
{
	struct timeline *t = &r->tl;
	double epoch = pnum(c, n, RM_TL_EPOCH), el = pnum(c, n, RM_TL_ELAPSED_S);
	double rss = pnum(c, n, RM_TL_RSS_KIB);

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
	t->pts[t->npts++] = (struct tlpoint){ epoch, el, pnum(c, n, RM_TL_PROCS), rss,
					      pnum(c, n, RM_TL_CPU_PCT) };
	if (!isnan(rss) && (isnan(t->peak_kib) || rss > t->peak_kib)) {
		t->peak_kib = rss;
		t->peak_epoch = epoch;
		t->peak_elapsed = el;
	}
	t->max_procs = nmax(t->max_procs, pnum(c, n, RM_TL_PROCS));
	t->max_cpu = nmax(t->max_cpu, pnum(c, n, RM_TL_CPU_PCT));
}

void procs_hide_cmdlines(struct report *r, const struct opts *o)
{
	r->others_hidden = r->others_hidden_nouid = 0;
	if (o->elsewhere_cmdlines)
		return;
	for (size_t i = 0; i < r->nothers; i++) {
		struct proc *p = &r->others[i];
		int mine = r->fold && p->uid >= 0 && fold_has_uid(r, p->uid);
		for (size_t k = 0; !r->fold && p->uid >= 0 && k < r->nproc && !mine; k++)
			mine = r->procs[k].uid == p->uid;
		if (mine)
			continue;
		if (p->cmd[0]) {
			r->others_hidden++;
			r->others_hidden_nouid += p->uid < 0;
		}
		p->cmd[0] = '\0';
		p->rcmd = p->cmd;
		free(p->unit);
		p->unit = NULL;
		p->cmd_hidden = 1;
	}
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
