/*
 * rm-summarize --trace: the run as a Chrome Trace Event JSON file, which
 * Perfetto's UI (ui.perfetto.dev, offline once loaded) and
 * chrome://tracing open.
 *
 * pid and tid are synthetic: pid 1 is the build; each tid is a lane,
 * named with an M thread_name event.  A process's real PID is in its
 * args.  Every process of the exit log is one complete (X) event named
 * by its compile unit, or its comm, with peak MiB, CPU s, read and write
 * KiB, exit and command in its args, on a lane packed so that no two
 * overlapping processes share one.  Stages are spans on their own lane,
 * OOM kills instant (i) events naming the victim, and the system CSV (or
 * an rm-run timeline) gives counter (C) tracks.  Times are microseconds
 * from the run's origin: the moment rm-tree's start_s counts from (the
 * same origin the report maps peaks with), so every track shares it.
 *
 * The report gives the processes (in start order, from its sort:
 * spill.c), stages and OOM kills; the counter series are read here from
 * the report's files.  The file is written as it is made, a buffer at a
 * time, so that neither the rows nor the events are ever all held; the
 * lanes' names come last, once the packing knows how many there are.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "oom.h"
#include "outfile.h"
#include "spill.h"
#include "trace.h"
#include "util.h"

#define TID_STAGES 1
#define TID_OOM 2
#define TID_OOM_ELSE 3     /* other programs' kills, muted */
#define TID_LANE0 10

#define FLUSH_AT 65536

struct scan {
	struct rm_buf *b;
	int fd;                  /* the file being written */
	int err;                 /* errno of the first failed write */
	double origin;
	int kind;                /* 0 unknown, 1 system CSV, 2 timeline */
	int col[8];
	long counters;
};

enum { K_SYS = 1, K_TL };
/* Columns by kind: system CSV, timeline. */
static const char *const sys_cols[] = { "epoch", "mem_used_mb", "mem_avail_mb", "cpu_pct",
					"disk_avail_gb", "swap_used_mb", NULL };
static const char *const tl_cols[] = { "epoch", "rss_kib", "cpu_pct", "procs", NULL };

/* What is made so far to the file, once there is enough of it (or at the
 * end, force): the first failure is kept and the rest dropped. */
static void flush(struct scan *s, int force)
{
	if (!force && s->b->len < FLUSH_AT)
		return;
	if (!s->err && s->b->oom)
		s->err = ENOMEM;
	else if (!s->err && rm_buf_write(s->fd, s->b) < 0)
		s->err = errno;
	rm_buf_reset(s->b);   /* after a failure, dropped rather than held */
}

static double fnum(const struct rm_csv *c, int col)
{
	if (col < 0 || col >= c->nf)
		return NAN;
	return field_num(&c->f[col]);
}

static void ev_head(struct rm_buf *b, const char *ph, long long ts, int tid)
{
	rm_buf_addf(b, ",\n{\"ph\":\"%s\",\"pid\":1,\"tid\":%d,\"ts\":%lld,", ph, tid, ts);
}

static long long us(double s)
{
	return (long long)llround(s * 1e6);
}

/* A counter event with one or two series; unknown values are left out. */
static void counter(struct scan *s, const char *name, double epoch, const char *k1, double v1,
		    const char *k2, double v2)
{
	int first = 1;

	if (isnan(v1) && (!k2 || isnan(v2)))
		return;
	ev_head(s->b, "C", us(epoch - s->origin), 0);
	rm_buf_adds(s->b, "\"name\":");
	rm_buf_json(s->b, name);
	rm_buf_adds(s->b, ",\"args\":{");
	if (!isnan(v1)) {
		rm_buf_addf(s->b, "\"%s\":", k1);
		rm_buf_num(s->b, v1, 2);
		first = 0;
	}
	if (k2 && !isnan(v2)) {
		rm_buf_addf(s->b, "%s\"%s\":", first ? "" : ",", k2);
		rm_buf_num(s->b, v2, 2);
	}
	rm_buf_adds(s->b, "}}");
	s->counters++;
}

static int on_row(void *arg, struct rm_csv *c)
{
	struct scan *s = arg;
	const char *const *names;

	if (c->records == 1) {
		/* The header: what the file is, and where its columns are. */
		s->kind = header_col(c->f, c->nf, "mem_avail_mb") >= 0 ? K_SYS :
			  header_col(c->f, c->nf, "peak_rss_kib") >= 0 ? 0 :
			  header_col(c->f, c->nf, "procs") >= 0 && header_col(c->f, c->nf, "rss_kib") >= 0 ? K_TL : 0;
		/* An exit log's rows are the report's (write_procs). */
		if (!s->kind)
			return 1;
		names = s->kind == K_SYS ? sys_cols : tl_cols;
		for (int i = 0; i < 8; i++)
			s->col[i] = -1;
		for (int i = 0; s->kind && names[i]; i++)
			s->col[i] = header_col(c->f, c->nf, names[i]);
		return 0;
	}
	if (s->kind == K_SYS) {
		double e = fnum(c, s->col[0]);
		if (isnan(e))
			return 0;
		counter(s, "memory MiB", e, "used", fnum(c, s->col[1]), "available", fnum(c, s->col[2]));
		counter(s, "CPU busy %", e, "busy", fnum(c, s->col[3]), NULL, NAN);
		counter(s, "disk available GiB", e, "available", fnum(c, s->col[4]), NULL, NAN);
		counter(s, "swap used MiB", e, "used", fnum(c, s->col[5]), NULL, NAN);
	} else if (s->kind == K_TL) {
		double e = fnum(c, s->col[0]);
		if (isnan(e))
			return 0;
		counter(s, "job RSS MiB", e, "rss", fnum(c, s->col[1]) / 1024.0, NULL, NAN);
		counter(s, "job CPU %", e, "cpu", fnum(c, s->col[2]), NULL, NAN);
		counter(s, "job processes", e, "procs", fnum(c, s->col[3]), NULL, NAN);
	}
	flush(s, 0);
	return 0;
}

/* Read one input file through on_row; a file that fails was already
 * refused by main.c, so a failure here only leaves its tracks out. */
static void scan_file(struct scan *s, const char *path)
{
	static char buf[1 << 16];
	struct rm_csv c;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return;
	if (rm_csv_init(&c, 0, 0) < 0) {
		close(fd);
		return;
	}
	s->kind = 0;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		if (rm_csv_feed(&c, buf, (size_t)n, on_row, s) != RM_CSV_OK)
			break;
	if (n == 0)
		rm_csv_finish(&c, on_row, s);
	rm_csv_free(&c);
	close(fd);
}

static void thread_name(struct rm_buf *b, int tid, const char *name, int sort)
{
	rm_buf_addf(b, ",\n{\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"ts\":0,\"name\":\"thread_name\","
		    "\"args\":{\"name\":", tid);
	rm_buf_json(b, name);
	rm_buf_adds(b, "}}");
	rm_buf_addf(b, ",\n{\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"ts\":0,\"name\":\"thread_sort_index\","
		    "\"args\":{\"sort_index\":%d}}", tid, sort);
}

static void arg_num(struct rm_buf *b, const char *k, double v, int prec)
{
	rm_buf_addf(b, ",\"%s\":", k);
	if (isnan(v))
		rm_buf_adds(b, "null");
	else
		rm_buf_num(b, v, prec);
}

/* The processes as complete events, in start order, each on the lowest
 * lane free since it started (first fit), written as they come; the
 * lanes' names after them.  Returns the lanes used. */
static int write_procs(struct scan *sc, const struct report *r, double run_end)
{
	struct rm_buf *b = sc->b;
	long long *lane_end = NULL;
	int nlanes = 0, got = 0;
	struct proc p;

	if (!r->sp_start)
		return 0;
	if (spill_rewind(r->sp_start) < 0) {
		sc->err = errno;
		return 0;
	}
	while (!sc->err && (got = spill_next(r->sp_start, &p)) > 0) {
		double end = isnan(p.end_s) ? run_end : p.end_s;
		long long ts, te;
		int l = 0;
		if (isnan(end))
			continue;
		ts = us(p.start_s);
		te = us(end);
		if (te < ts)
			te = ts;
		while (l < nlanes && lane_end[l] > ts)
			l++;
		if (l == nlanes) {
			lane_end = xrealloc(lane_end, (size_t)(nlanes + 1) * sizeof(*lane_end));
			nlanes++;
		}
		lane_end[l] = te;

		char *comm = sanitized(p.comm, strlen(p.comm));
		ev_head(b, "X", ts, TID_LANE0 + l);
		rm_buf_addf(b, "\"dur\":%lld,\"name\":", te - ts);
		rm_buf_json(b, p.unit ? p.unit : comm);
		rm_buf_adds(b, ",\"cat\":\"process\",\"args\":{\"pid\":");
		rm_buf_addf(b, "%d", p.pid);
		rm_buf_adds(b, ",\"comm\":");
		rm_buf_json(b, comm);
		arg_num(b, "peak_mib", p.peak_kib / 1024.0, 1);
		arg_num(b, "cpu_s", p.cpu_s, 2);
		arg_num(b, "read_kib", p.read_kib, 0);
		arg_num(b, "write_kib", p.write_kib, 0);
		rm_buf_adds(b, ",\"exit\":");
		if (p.exit[0])
			rm_buf_json(b, p.exit);
		else
			rm_buf_adds(b, "null");
		rm_buf_adds(b, ",\"command\":");
		if (p.cmd && p.cmd[0])
			rm_buf_json(b, p.cmd);
		else
			rm_buf_adds(b, "null");
		rm_buf_adds(b, p.emulated == 1 ? ",\"emulated\":true" :
			       p.emulated == 0 ? ",\"emulated\":false" : ",\"emulated\":null");
		rm_buf_adds(b, "}}");
		free(comm);
		flush(sc, 0);
	}
	if (got < 0 && !sc->err)
		sc->err = errno;
	for (int l = 0; l < nlanes; l++) {
		char name[32];
		snprintf(name, sizeof(name), "processes %d", l + 1);
		thread_name(b, TID_LANE0 + l, name, TID_LANE0 + l);
	}
	free(lane_end);
	return nlanes;
}

/* Stages as spans from each change to the next (the last to the end). */
static void write_stages(struct rm_buf *b, const struct report *r, double origin)
{
	const struct sys *s = r->sys;
	int named = 0;

	for (size_t i = 0; s && i < s->nseg; i++) {
		const char *name = stage_name(r, s->segs[i].stage);
		double end = i + 1 < s->nseg ? s->segs[i + 1].epoch : s->last_epoch;
		if (!name || !name[0] || isnan(end))
			continue;
		if (!named++)
			thread_name(b, TID_STAGES, "stages", TID_STAGES);
		ev_head(b, "X", us(s->segs[i].epoch - origin), TID_STAGES);
		rm_buf_addf(b, "\"dur\":%lld,\"cat\":\"stage\",\"name\":",
			    us(end - origin) - us(s->segs[i].epoch - origin));
		rm_buf_json(b, name);
		rm_buf_adds(b, "}");
	}
}

/* One lane's kills: the build's (build 1) at each first victim's own
 * time, with its unit, or other programs' (build 0), muted. */
static void ooms_lane(struct rm_buf *b, const struct report *r, double origin, int build)
{
	const struct sys *s = r->sys;
	int tid = build ? TID_OOM : TID_OOM_ELSE, named = 0;

	for (size_t i = 0; s && i < s->nev; i++) {
		const struct oomev *e = &s->ev[i];
		char name[600];
		double at = e->epoch;
		int first = -1, n = 0;
		if (build ? !oom_event_is_build(e) : e->else_kills <= 0)
			continue;
		for (int k = 0; k < e->nv && first < 0; k++)
			if ((e->vscope[k] != 0) == build)
				first = k;
		if (!named++)
			thread_name(b, tid, build ? "OOM kills" : "OOM kills elsewhere on this host", tid);
		if (first >= 0 && build && e->vx[first].row && e->vx[first].row->unit)
			snprintf(name, sizeof(name), "OOM kill: %s (%s, PID %d)", e->vx[first].row->unit,
				 e->vname[first], e->vpid[first]);
		else if (first >= 0)
			snprintf(name, sizeof(name), "OOM kill%s: %s (PID %d)", build ? "" : " elsewhere",
				 e->vname[first], e->vpid[first]);
		else
			snprintf(name, sizeof(name), "OOM kill (victim unknown)");
		if (first >= 0 && build)
			at = e->vx[first].epoch;
		ev_head(b, "i", us(at - origin), tid);
		rm_buf_addf(b, "\"s\":\"%s\",\"cat\":\"%s\",%s\"name\":", build ? "g" : "t", build ? "oom" : "oom-elsewhere",
			    build ? "" : "\"cname\":\"grey\",");
		rm_buf_json(b, name);
		rm_buf_addf(b, ",\"args\":{\"kills\":%ld,\"victims\":[",
			    build ? e->kills - e->else_kills : e->else_kills);
		for (int k = 0; k < e->nv; k++) {
			if ((e->vscope[k] != 0) != build)
				continue;
			rm_buf_adds(b, n++ ? ",{\"name\":" : "{\"name\":");
			rm_buf_json(b, e->vname[k]);
			rm_buf_addf(b, ",\"pid\":%d", e->vpid[k]);
			if (build && e->vx[k].row && e->vx[k].row->unit) {
				rm_buf_adds(b, ",\"unit\":");
				rm_buf_json(b, e->vx[k].row->unit);
			}
			rm_buf_adds(b, "}");
		}
		rm_buf_adds(b, "]}}");
	}
}

static void write_ooms(struct rm_buf *b, const struct report *r, double origin)
{
	ooms_lane(b, r, origin, 1);
	ooms_lane(b, r, origin, 0);
}

int write_trace(const struct report *r, const char *path)
{
	struct rm_buf b = { 0 };
	struct rm_outfile o;
	struct scan s;
	double origin = NAN, run_end = NAN;
	char why[128];
	int e = 0;

	/* Whole or not at all, through the directory's descriptor (outfile.h):
	 * a symlink or FIFO at the name is refused, a file only replaced. */
	if (rm_out_open(path, &o, why, sizeof(why)) < 0)
		return -1;
	/* The origin rm-tree's times count from, as report_finish finds it;
	 * with no exit log, the system CSV's own. */
	if (r->tl.known)
		origin = r->tl.off;
	else if (r->job.known && !isnan(r->job.start_epoch))
		origin = r->job.start_epoch;
	else if (r->sys && r->sys->samples)
		origin = r->sys->first_epoch - r->sys->first_elapsed;
	if (isnan(origin))
		origin = 0;
	memset(&s, 0, sizeof(s));
	s.b = &b;
	s.fd = o.fd;
	s.origin = origin;
	rm_buf_adds(&b, "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"producer\":\"rm-summarize " RM_VERSION
		    "\",\"origin_epoch\":");
	rm_buf_num(&b, origin, 3);
	rm_buf_adds(&b, "},\"traceEvents\":[\n{\"ph\":\"M\",\"pid\":1,\"tid\":0,\"ts\":0,"
		    "\"name\":\"process_name\",\"args\":{\"name\":\"build\"}}");
	for (int i = 0; i < r->nfiles; i++)
		scan_file(&s, r->files[i]);
	if (r->sys && r->sys->samples)
		run_end = r->sys->last_epoch - origin;
	if (r->tl.known && !isnan(r->tl.last_epoch) && (isnan(run_end) || r->tl.last_epoch - origin > run_end))
		run_end = r->tl.last_epoch - origin;
	write_stages(&b, r, origin);
	write_ooms(&b, r, origin);
	write_procs(&s, r, run_end);
	rm_buf_adds(&b, "\n]}\n");
	flush(&s, 1);
	if (s.err) {
		e = s.err;
		rm_out_abort(&o);
	} else if (rm_out_commit(&o, why, sizeof(why)) < 0) {
		e = errno;
	}
	rm_buf_free(&b);
	errno = e;
	return e ? -1 : 0;
}
