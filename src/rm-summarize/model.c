/*
 * model.c: the model builder.  Each input is opened once and read once
 * through the CSV parser (a header pass to classify it, keeping what it
 * read of a pipe, then the full pass), folded into its report by sys.c or
 * procs.c, and then what the report derives once every file is read: the
 * heaviest processes, groups by command, compile units, and the memory a
 * compile job needs per stage.  Anything that is not such a CSV exits 1
 * with a message.
 *
 * This file is long because the derivations that need every file read
 * (the process order, units, groups, memory per job, the OOM and
 * container judgements) run here in one place, in the order each needs
 * the one before.
 */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"
#include "containers.h"
#include "fold.h"
#include "model.h"
#include "oom.h"
#include "procs.h"
#include "spill.h"
#include "sys.h"
#include "unitwalk.h"

#define READ_BUF (1024 * 1024)

struct reader {
	struct report *r;
	struct input *in;
	int header;            /* 1: only read the header */
	int kind_known;
	enum fkind kind;
	long rows;
	char why[320];
};

static int classify(struct reader *rd, struct rm_csv *c)
{
	enum pkind pk = procs_kind(c);
	char hdr[81];

	if (pk == PK_JOB)
		rd->kind = F_JOB;
	else if (pk == PK_EXITLOG)
		rd->kind = F_EXITLOG;
	else if (pk == PK_TIMELINE)
		rd->kind = F_TIMELINE;
	else if (pk == PK_STATS)
		rd->kind = F_STATS;
	else if (containers_is_header(c))
		rd->kind = F_CONTAINERS;
	else if (sys_is_header(c))
		rd->kind = F_SYS;
	else {
		size_t n = 0;
		char raw[200];
		for (int i = 0; i < c->nf && n < sizeof(raw) - 1; i++) {
			size_t m = c->f[i].len;
			if (i)
				raw[n++] = ',';
			if (m > sizeof(raw) - 1 - n)
				m = sizeof(raw) - 1 - n;
			memcpy(raw + n, c->f[i].p, m);
			n += m;
		}
		rm_sanitize(raw, n, hdr, sizeof(hdr));
		snprintf(rd->why, sizeof(rd->why),
			 "not a CSV rm-summarize reads (header '%s'); want rm-sample's, rm-tree's or the seed script's columns",
			 hdr);
		return -1;
	}
	rd->kind_known = 1;
	return 0;
}

static enum pkind pk_of(enum fkind k)
{
	return k == F_JOB ? PK_JOB : k == F_EXITLOG ? PK_EXITLOG : k == F_STATS ? PK_STATS : PK_TIMELINE;
}

static int on_record(void *arg, struct rm_csv *c)
{
	struct reader *rd = arg;
	char why[200];
	int rc;

	if (c->bad_quote) {
		snprintf(rd->why, sizeof(rd->why),
			 "line %lu: a quoted field opened here is never closed (at the end of the file or after %zu KiB); not a CSV this toolkit writes",
			 c->rec_line, c->max_quoted / 1024);
		return 1;
	}
	if (!rd->kind_known) {
		/* Old Mac text: the whole file reads as one line. */
		if (c->lone_cr) {
			snprintf(rd->why, sizeof(rd->why),
				 "line %lu: lines end in a lone CR (old Mac text), not LF or CRLF; convert it with tr '\\r' '\\n'",
				 c->rec_line);
			return 1;
		}
		if (classify(rd, c) < 0)
			return 1;
		if (rd->header)
			return 1;
		if (rd->kind == F_SYS) {
			rd->r->sys = sys_new(rd->in->path, c);
		} else if (rd->kind == F_CONTAINERS) {
			containers_header(rd->r, c);
		} else {
			procs_header(rd->r, pk_of(rd->kind), c);
		}
		return 0;
	}
	rd->rows++;
	if (rd->kind == F_SYS)
		rc = sys_row(rd->r, c, why, sizeof(why));
	else if (rd->kind == F_CONTAINERS)
		rc = containers_row(rd->r, c, why, sizeof(why));
	else
		rc = procs_row(rd->r, pk_of(rd->kind), c, why, sizeof(why));
	if (rc < 0) {
		snprintf(rd->why, sizeof(rd->why), "line %lu: %s", c->rec_line, why);
		return 1;
	}
	return 0;
}

static void fail(const struct input *in, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));

static void fail(const struct input *in, const char *fmt, ...)
{
	va_list ap;
	char msg[512];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	errx(RM_EXIT_FAIL, "'%s': %s", in->shown, msg);
}

/* Read up to n bytes of in, retrying EINTR; exits 1 on an error. */
static size_t read_some(struct input *in, char *buf, size_t n)
{
	for (;;) {
		ssize_t k = read(in->fd, buf, n);
		if (k >= 0)
			return (size_t)k;
		if (errno != EINTR) 
			err(RM_EXIT_FAIL, "cannot read '%s'", in->shown);
	}
}

/* Open in once: "-" is standard input.  Exits 1 when it cannot be read. */
static void open_input(struct input *in)
{
	if (strcmp(in->path, "-") == 0) {
		in->fd = STDIN_FILENO;
	} else {
		/* O_NONBLOCK: a FIFO with no writer (one planted at a monitor's
		 * CSV) reads as empty instead of blocking the open for ever. */
		in->fd = open(in->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
		if (in->fd < 0) 
			err(RM_EXIT_FAIL, "cannot open '%s'", in->shown);
		int fl = fcntl(in->fd, F_GETFL);
		if (fl < 0 || fcntl(in->fd, F_SETFL, fl & ~O_NONBLOCK) < 0)
			err(RM_EXIT_FAIL, "cannot read '%s'", in->shown);
	}
	if (fstat(in->fd, &in->st) < 0) 
		err(RM_EXIT_FAIL, "cannot read '%s'", in->shown);
	if (S_ISDIR(in->st.st_mode))
		fail(in, "a directory; not a CSV");
	if (S_ISREG(in->st.st_mode))
		posix_fadvise(in->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
}

/* Bytes of a pipe kept while looking for its header. */
#define MAX_PRE (16u * 1024 * 1024)

/*
 * Read a file through the CSV parser: only its header (to classify it),
 * or all of it into report r.  Each file is opened once and read once:
 * the header pass keeps what it read of a pipe, FIFO or terminal and the
 * full pass starts with those bytes (a regular file is read again from
 * its start on the same descriptor).  Exits 1 with a message on anything
 * that is not such a CSV.
 */
static void read_input(struct input *in, struct report *r, int header_only)
{
	static char *buf;
	struct reader rd = { r, in, header_only, 0, F_SYS, 0, "" };
	struct rm_csv c;
	enum rm_csv_err e = RM_CSV_OK;
	uint64_t total = 0;
	int seekable;

	if (!buf)
		buf = xmalloc(READ_BUF);
	if (header_only)
		open_input(in);
	seekable = S_ISREG(in->st.st_mode);
	if (!header_only && seekable && lseek(in->fd, 0, SEEK_SET) < 0) 
		err(RM_EXIT_FAIL, "cannot read '%s'", in->shown);
	if (rm_csv_init(&c, 0, 0) < 0)
		errx(RM_EXIT_FAIL, "out of memory");
	if (!header_only && in->npre) {
		total = in->npre;
		e = rm_csv_feed(&c, in->pre, in->npre, on_record, &rd);
		free(in->pre);
		in->pre = NULL;
		in->npre = 0;
	}
	while (!e) {
		size_t n = read_some(in, buf, READ_BUF);
		if (n == 0) {
			e = rm_csv_finish(&c, on_record, &rd);
			break;
		}
		total += (uint64_t)n;
		if (header_only && !seekable) {
			if (in->npre + n > MAX_PRE)
				fail(in, "no header in the first %u MiB; not a CSV", MAX_PRE >> 20);
			in->pre = xrealloc(in->pre, in->npre + n);
			memcpy(in->pre + in->npre, buf, n);
			in->npre += n;
		}
		e = rm_csv_feed(&c, buf, n, on_record, &rd);
	}
	if (e == RM_CSV_ESTOP && header_only && rd.kind_known) {
		in->kind = rd.kind;
		rm_csv_free(&c);
		return;
	}
	if (e == RM_CSV_ESTOP)
		fail(in, "%s", rd.why);
	if (e == RM_CSV_ETOOLONG)
		fail(in, "line %lu: a record longer than %zu bytes; not a CSV this toolkit writes",
		     c.err_line, c.max_record);
	if (e == RM_CSV_ETOOMANY)
		fail(in, "line %lu: more than %d fields; not a CSV this toolkit writes", c.err_line,
		     c.max_fields);
	if (e)
		fail(in, "line %lu: %s; not a CSV", c.err_line, rm_csv_strerror(e));
	if (total == 0 || !rd.kind_known)
		fail(in, "empty file; not a CSV");
	rm_csv_free(&c);
	if (header_only) {
		in->kind = rd.kind;
		return;
	}
	if (in->fd != STDIN_FILENO)
		close(in->fd);
	in->fd = -1;
	if (rd.rows == 0 && (rd.kind == F_SYS || rd.kind == F_JOB))
		fail(in, "no rows after the header");
	if (rd.kind == F_SYS && r->sys->samples == 0)
		fail(in, "no row has a time (epoch)");
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

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Each unit of a shown row a number (uid[i] of row i, -1 none), then the
 * walk over the rows in read order that counts the units' runs, as fold.c
 * counts them (unitwalk.c).  byu: room for every row. */
static struct uwalk *unit_runs(struct report *r, struct proc **byu, int *uid)
{
	struct uwalk *uw = uwalk_new();
	size_t nu = 0;

	for (size_t i = 0; i < r->nproc; i++) {
		uid[i] = -1;
		if (r->procs[i].shown && r->procs[i].unit)
			byu[nu++] = &r->procs[i];
	}
	qsort(byu, nu, sizeof(*byu), by_unit);
	for (size_t i = 0, id = 0; i < nu; i++) {
		if (i && strcmp(byu[i]->unit, byu[i - 1]->unit) != 0)
			id++;
		uid[byu[i] - r->procs] = (int)id;
	}
	for (size_t i = 0; i < r->nproc; i++)
		if (r->procs[i].shown)
			uwalk_row(uw, r->procs[i].pid, r->procs[i].ppid, r->procs[i].start_s,
				  r->procs[i].end_s, uid[i], !isnan(r->procs[i].peak_kib));
	return uw;
}

/* Groups by command name and compile units, over the shown processes. */
static void derive_lists(struct report *r)
{
	struct proc **v = xmalloc((r->nproc ? r->nproc : 1) * sizeof(*v));
	struct proc **byu = xmalloc((r->nproc ? r->nproc : 1) * sizeof(*byu));
	int *uid = xmalloc((r->nproc ? r->nproc : 1) * sizeof(*uid));
	struct uwalk *uw;
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
			g->emulated = v[i]->emulated;
		}
		g = &r->groups[r->ngroups - 1];
		g->count++;
		if (v[i]->emulated == 1 || (v[i]->emulated < 0 && g->emulated == 0))
			g->emulated = v[i]->emulated;
		if (!isnan(v[i]->peak_kib) && v[i]->peak_kib > g->peak_kib)
			g->peak_kib = v[i]->peak_kib;
		if (!isnan(v[i]->cpu_s))
			g->cpu_s += v[i]->cpu_s;
	}
	qsort(r->groups, r->ngroups, sizeof(*r->groups), report_group_cmp);

	uw = unit_runs(r, byu, uid);
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
			u->count = (int)uwalk_runs(uw, uid[v[i] - r->procs]);
			u->stage = -1;
		}
		u = &r->units[r->nunits - 1];
		if (v[i]->peak_kib > u->peak_kib) {
			u->peak_kib = v[i]->peak_kib;
			u->comm = v[i]->comm;
			u->stage = v[i]->stage;
			u->emulated = v[i]->emulated;
		}
	}
	qsort(r->units, r->nunits, sizeof(*r->units), report_unit_cmp);
	uwalk_free(uw);
	free(uid);
	free(byu);
	free(v);
}

/* The headroom kept free under a limit: the near-OOM threshold, at most
 * a quarter of it. */
static double ctr_reserve(const struct opts *o, double limit_mb)
{
	return o->near_oom_mb < limit_mb / 4 ? o->near_oom_mb : limit_mb / 4;
}

/*
 * The binding headroom of a stage run in containers tied to the build:
 * the tightest of their limits, when below the RAM (or cgroup limit) the
 * -j advice would have; it names the container.
 */
static void perjob_container(const struct report *r, struct perjob *pj)
{
	const struct ctr *c;
	double lim = ctr_stage_limit(r, pj->stage, &c) / 1024.0;

	if (!c || isnan(lim) || (!isnan(pj->budget_mb) && lim >= pj->budget_mb))
		return;
	pj->budget_mb = lim;
	pj->ctr = c;
	snprintf(pj->bound, sizeof(pj->bound), "container %s memory", c->shortid);
}

/* Did the kernel kill a process of the build in stage si? */
static int stage_oom_killed(const struct report *r, int si)
{
	if (!r->sys)
		return 0;
	for (size_t i = 0; i < r->sys->nev; i++)
		if (r->sys->ev[i].stage == si && oom_event_is_build(&r->sys->ev[i]))
			return 1;
	return 0;
}

/*
 * Memory per compile job, per stage: the p95 (nearest rank) of the peaks
 * of every compiler process whose peak fell in that stage, rounded up to
 * 64 MiB; and the -j this machine's RAM allows at that size, keeping the
 * near-OOM headroom (at most a quarter of RAM) free.  A stage where the
 * build was OOM-killed is sized by its largest compiler instead: there the
 * heavy units met, and a p95 of many small ones would call the -j that
 * was killed safe.
 */
static void derive_perjob(struct report *r, const struct opts *o)
{
	double reserve = o->near_oom_mb < r->ram_mb / 4 ? o->near_oom_mb : r->ram_mb / 4;

	if (r->fold)
		fold_cpeaks(r, r->tree_off);
	for (size_t i = 0; !r->fold && i < r->nproc; i++) {
		struct proc *p = &r->procs[i];
		int si = p->stage;
		if (!p->compiler || isnan(p->peak_kib))
			continue;
		stage_add_cpeak(r, si, p->peak_kib, p->emulated == 1);
	}
	r->perjob = xmalloc((size_t)(r->nstages ? r->nstages : 1) * sizeof(*r->perjob));
	for (int i = 0; i < r->nstages; i++) {
		struct stage *st = &r->stages[i];
		struct perjob *pj;
		size_t rank;
		if (!st->ncp)
			continue;
		pj = &r->perjob[r->nperjob++];
		pj->stage = i;
		pj->n = st->ncp;
		pj->nemu = st->ncp_emu;
		if (st->cp_folded) {
			pj->p95_kib = st->cp_p95;
			pj->max_kib = st->cp_max;
		} else {
			qsort(st->cpeaks, st->ncp, sizeof(double), dbl_cmp);
			rank = (size_t)ceil(0.95 * (double)st->ncp);
			pj->p95_kib = st->cpeaks[(rank ? rank : 1) - 1];
			pj->max_kib = st->cpeaks[st->ncp - 1];
		}
		pj->by_max = pj->max_kib > pj->p95_kib && stage_oom_killed(r, i);
		pj->suggest_mb = ceil((pj->by_max ? pj->max_kib : pj->p95_kib) / 1024.0 / 64.0) * 64.0;
		if (pj->suggest_mb < 64)
			pj->suggest_mb = 64;
		pj->budget_mb = r->ram_mb;
		pj->ctr = NULL;
		pj->bound[0] = '\0';
		perjob_container(r, pj);
		pj->safe_j = isnan(pj->budget_mb) ? -1 :
			     (long)floor((pj->budget_mb - (pj->ctr ? ctr_reserve(o, pj->budget_mb) : reserve)) / pj->suggest_mb);
		if (pj->safe_j == 0)
			pj->safe_j = 1;
	}
}

struct cev {
	double t;
	int d;                 /* +1 a start, -1 an end */
};

static int cev_cmp(const void *a, const void *b)
{
	const struct cev *x = a, *y = b;

	if (x->t != y->t)
		return (x->t > y->t) - (x->t < y->t);
	return x->d - y->d;    /* an end before a start at the same time */
}

static void comp_max(struct report *r, int stage, int n)
{
	struct stage *st;

	if (stage < 0)
		return;
	st = &r->stages[stage];
	if (isnan(st->build_comp) || n > st->build_comp)
		st->build_comp = n;
}

/*
 * Each stage's most compilers of the build alive at once: a sweep over
 * the exit log's start and end times (the kernel's in exact mode), the
 * count at every start and end and at every stage change.  A survivor
 * runs to the end of the run.
 */
static void derive_build_comp(struct report *r, double off)
{
	const struct sys *s = r->sys;
	struct cev *v = NULL, e;
	size_t n = 0, j = 0;
	int cur = 0;

	if (!s || isnan(off) || !r->nexitlogs)
		return;
	r->has_build_comp = 1;
	if (!r->fold) {
		v = xmalloc((2 * r->nproc + 1) * sizeof(*v));
		for (size_t i = 0; i < r->nproc; i++) {
			const struct proc *p = &r->procs[i];
			double end = isnan(p->end_s) ? s->last_epoch - off : p->end_s;
			if (!p->compiler || isnan(p->start_s))
				continue;
			v[n++] = (struct cev){ p->start_s, 1 };
			v[n++] = (struct cev){ end, -1 };
		}
		qsort(v, n, sizeof(*v), cev_cmp);
	}
	for (int i = 0; i < r->nstages; i++)
		if (r->stages[i].samples)
			r->stages[i].build_comp = 0;
	/* A folded log's events come sorted from its compilers' arrays, in
	 * the order cev_cmp gives (comps.c), without a copy of them. */
	for (size_t i = 0; r->fold ? fold_comp_next(r, s->last_epoch - off, &e.t, &e.d) : i < n; i++) {
		if (!r->fold)
			e = v[i];
		for (; j < s->nseg && s->segs[j].epoch <= off + e.t; j++)
			comp_max(r, s->segs[j].stage, cur);
		cur += e.d;
		comp_max(r, stage_at(r, off + e.t), cur);
	}
	free(v);
}

static void report_finish(struct report *r, const struct opts *o)
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
	/* rm-tree's times are seconds since it started: its timeline or job
	 * row says when that was; with neither, a monitor's rm-tree started
	 * with its rm-sample.  (oom.c times a kill by its victim's exit.) */
	off = report_tree_off(r);
	r->tree_off = off;
	if (r->ctrs.known)
		containers_finish(r);
	if (r->sys)
		sys_finish(r, o);
	/* rm-run --memory-max: the budget binds, as a cgroup limit does. */
	if (r->job.known && r->job.mem_max_kib > 0 &&
	    (isnan(r->ram_mb) || r->job.mem_max_kib / 1024.0 < r->ram_mb)) {
		if (isnan(r->host_ram_mb))
			r->host_ram_mb = r->ram_mb;
		r->ram_mb = r->job.mem_max_kib / 1024.0;
		r->ram_budget = 1;
	}

	if (r->fold)
		fold_gather(r);
	for (size_t i = 0; i < r->nproc; i++) {
		struct proc *p = &r->procs[i];
		if (!isnan(p->peak_at))
			p->peak_epoch = off + p->peak_at;
		p->stage = proc_stage(r, p, off);
		p->shown = (!o->has_inc || matches(&o->inc, p)) && !(o->has_exc && matches(&o->exc, p));
		if (r->fold)
			continue;
		spill_row(r, p);
		r->nrows++;
		r->nshown += p->shown;
		if (!isnan(p->cpu_s))
			r->cpu_all += p->cpu_s;
		r->nnocmd += !p->cmd || !p->cmd[0];
	}
	for (size_t i = 0; i < r->nothers; i++) {
		struct proc *p = &r->others[i];
		if (!isnan(p->peak_at))
			p->peak_epoch = off + p->peak_at;
		p->stage = proc_stage(r, p, off);
	}
	procs_hide_cmdlines(r, o);
	r->oorder = xmalloc((r->nothers ? r->nothers : 1) * sizeof(*r->oorder));
	for (size_t i = 0; i < r->nothers; i++)
		r->oorder[i] = &r->others[i];
	qsort(r->oorder, r->nothers, sizeof(*r->oorder), by_peak);
	r->order = xmalloc((r->nproc ? r->nproc : 1) * sizeof(*r->order));
	for (size_t i = 0; i < r->nproc; i++)
		r->order[i] = &r->procs[i];
	qsort(r->order, r->nproc, sizeof(*r->order), by_peak);
	if (r->fold)
		fold_lists(r);
	else
		derive_lists(r);
	derive_perjob(r, o);
	derive_build_comp(r, off);
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
	spill_free(r->sp_peak);
	spill_free(r->sp_start);
	for (int i = 0; i < r->nstages; i++) {
		free(r->stages[i].name);
		free(r->stages[i].raw);
		free(r->stages[i].cpeaks);
	}
	sys_free(r->sys);
	fold_free(r);
	containers_free(&r->ctrs);
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

/* Open paths[0..n) once each and classify each by its header. */
struct input *inputs_open(char *const *paths, int n)
{
	struct input *in = xmalloc((size_t)(n ? n : 1) * sizeof(*in));

	for (int i = 0; i < n; i++) {
		in[i].path = paths[i];
		in[i].shown = sanitized(paths[i], strlen(paths[i]));
		in[i].pre = NULL;
		in[i].npre = 0;
	}
	for (int i = 0; i < n; i++)
		read_input(&in[i], NULL, 1);
	return in;
}

void inputs_free(struct input *in, int n)
{
	for (int i = 0; i < n; i++)
		free(in[i].shown);
	free(in);
}

/*
 * Group the inputs into reports (a system CSV opens a new report unless
 * the current one has none yet; every other file joins the current
 * report), read each report's files, system CSVs first (the other files'
 * times map onto them), and derive.  Every file is read before anything
 * is printed: bad input fails with no partial report on stdout.
 */
struct report *model_build(struct input *in, int nin, const struct opts *o, int *nrep_out)
{
	struct report *reps = xmalloc((size_t)(nin ? nin : 1) * sizeof(*reps));
	int *has_sys = xmalloc((size_t)(nin ? nin : 1) * sizeof(int)), nrep = 0;

	memset(reps, 0, (size_t)(nin ? nin : 1) * sizeof(*reps));
	for (int i = 0; i < nin; i++) {
		if (nrep == 0 || (in[i].kind == F_SYS && has_sys[nrep - 1])) {
			reps[nrep].files = xmalloc((size_t)nin * sizeof(char *));
			reps[nrep].opt = o;
			has_sys[nrep++] = 0;
		}
		reps[nrep - 1].files[reps[nrep - 1].nfiles++] = in[i].path;
		reps[nrep - 1].fold_one_log += in[i].kind == F_EXITLOG;
		if (in[i].kind == F_SYS)
			has_sys[nrep - 1] = 1;
	}
	for (int k = 0; k < nrep; k++) {
		struct report *r = &reps[k];
		r->fold_one_log = r->fold_one_log == 1;
		/* System CSVs, then the job row, timeline, stats and
		 * containers, then exit logs: a row's stage is then known as
		 * it is read (fold.c). */
		for (int pass = 0; pass < 3; pass++)
			for (int i = 0; i < nin; i++) {
				int mine = 0;
				for (int f = 0; f < r->nfiles; f++)
					mine |= r->files[f] == in[i].path;
				if (mine && pass == (in[i].kind == F_SYS ? 0 : in[i].kind == F_EXITLOG ? 2 : 1))
					read_input(&in[i], r, 0);
			}
		report_finish(r, o);
	}
	free(has_sys);
	*nrep_out = nrep;
	return reps;
}
