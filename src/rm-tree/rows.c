/*
 * rm-tree's rows: the exit log (one row per process, log_row, called by
 * table.c alone, which counts the job's totals first), the timeline (a row per tick), the job row (--exec), their headers, and
 * the output files they go to.  The columns are lib/schema.h's; each
 * writer writes its fields in the table's order.
 */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "outfile.h"
#include "schema.h"
#include "stream.h"

static void put(struct stream *s, int fd, const char *what, int *ok)
{
	if (*ok && rm_buf_write(fd, &s->b) < 0) {
		*ok = 0;
		if (errno != EPIPE) {
			tree_warnx("cannot write %s: %s", what, strerror(errno));
			s->status = RM_EXIT_FAIL;
		}
		/* A stream with nowhere to go is over; a job runs on. */
		if (!s->exec)
			s->stop = 1;
	}
	rm_buf_reset(&s->b);
}

/* The columns after cmd: read_kib,write_kib,majflt, five delays (ms),
 * source, scope, emulated, uid.  Empty where the mode gives no reading;
 * emulated is empty where it is not known (emul.c), never "no" by
 * default; uid is the exit record's (exact) or the status file's (sampled),
 * a number: rm-summarize names it. */
static void log_cols(struct rm_buf *b, const struct rm_pnode *n, int out)
{
	if (n->has_io)
		rm_buf_addf(b, ",%llu,%llu", (unsigned long long)n->read_kib,
			    (unsigned long long)n->write_kib);
	else
		rm_buf_adds(b, ",,");
	rm_buf_addc(b, ',');
	if (n->has_majflt)
		rm_buf_addf(b, "%llu", (unsigned long long)n->majflt);
	for (int i = 0; i < 5; i++) {
		rm_buf_addc(b, ',');
		if (n->has_delay)
			rm_buf_num(b, n->delay_ms[i], 3);
	}
	rm_buf_adds(b, n->exact ? ",exact" : ",sampled");
	rm_buf_adds(b, out ? ",out" : ",in");
	rm_buf_adds(b, n->emulated == RM_EMU_YES ? ",yes" : n->emulated == RM_EMU_NO ? ",no" : ",");
	rm_buf_addc(b, ',');
	if (n->has_uid)
		rm_buf_addf(b, "%lu", (unsigned long)n->uid);
}

/* One exit-log row; end < 0 for a survivor; out: an --elsewhere row. */
void log_row(struct stream *s, const struct rm_pnode *n, double end, int out)
{
	char txt[RM_TEXT_MAX + 1];
	struct rm_buf *b = &s->b;
	const char *cmd = n->cmd;
	double start;

	if (!cmd && s->exec && n->pid == s->root && s->cmdline[0])
		cmd = s->cmdline;
	rm_buf_addf(b, "%d,%d,", n->pid, n->ppid);
	rm_sanitize(n->comm, strlen(n->comm), txt, sizeof(txt));
	rm_buf_csv(b, txt);
	rm_buf_addc(b, ',');
	/* Start times are whole clock ticks: one born in the stream's first
	 * tick would read a few ms before 0. */
	start = (double)n->start / (double)s->hz - s->boot0;
	if (n->start >= s->boot0_ticks && start < 0)
		start = 0;
	if (!n->start && n->has_start_el)
		start = n->start_el;
	if (n->start || n->has_start_el)
		rm_buf_num(b, start, 3);
	rm_buf_addc(b, ',');
	/* An end is the time of the tick or read that met it: one taken just
	 * before a process that lived less than a tick started. */
	if (end >= 0 && (n->start || n->has_start_el) && end < start)
		end = start;
	if (end >= 0)
		rm_buf_num(b, end, 3);
	rm_buf_addc(b, ',');
	if (n->has_peak)
		rm_buf_addf(b, "%llu", (unsigned long long)n->peak_kib);
	rm_buf_addc(b, ',');
	if (n->has_peak && n->peak_at >= 0)
		rm_buf_num(b, n->peak_at, 3);
	rm_buf_addc(b, ',');
	/* An exact row's CPU time is the kernel's, in microseconds: to the
	 * ms, so that thousands of processes of under 5 ms each (a configure
	 * run's) do not round to 0.00 and vanish from the totals. */
	if (n->exact && n->has_ticks)
		rm_buf_num(b, (double)n->cpu_us / 1e6, 3);
	else if (n->has_ticks)
		rm_buf_num(b, (double)n->ticks / (double)s->hz, 2);
	rm_buf_addc(b, ',');
	if (n->exit >= 0)
		rm_buf_addf(b, "%d", n->exit);
	rm_buf_addc(b, ',');
	if (cmd)
		rm_buf_csv(b, cmd);
	log_cols(b, n, out);
	rm_buf_addc(b, '\n');
	put(s, s->log_fd, "the exit log", &s->log_ok);
}

/* The exit log's header (unless -H) and the timeline's. */
void rows_headers(struct stream *s)
{
	const struct opts *o = s->o;

	if (o->header) {
		rm_schema_cols(&s->b, rm_xl_names, 0, RM_XL_N);
		rm_buf_addc(&s->b, '\n');
		put(s, s->log_fd, "the exit log", &s->log_ok);
	}
	if (s->tl_fd >= 0) {
		rm_schema_cols(&s->b, rm_tl_names, 0, RM_TL_N);
		rm_buf_addc(&s->b, '\n');
		put(s, s->tl_fd, "the timeline", &s->tl_ok);
	}
}

/* One timeline row: the live members, their memory (known: every one
 * read) and their CPU since the last row. */
void timeline_row(struct stream *s, double el, size_t procs, uint64_t rss, int known)
{
	/* The wall time of the tick's own moment (el), not of this write: a
	 * scan that took seconds under load moved the row's epoch later. */
	double epoch = rm_now_epoch() - (rm_tick_elapsed(&s->tick) - el);
	char iso[40];
	rm_fmt_iso(epoch, iso, sizeof(iso));
	rm_buf_num(&s->b, epoch, 3);
	rm_buf_addf(&s->b, ",%s,", iso);
	rm_buf_num(&s->b, el, 3);
	rm_buf_addf(&s->b, ",%zu,", procs);
	if (known)
		rm_buf_addf(&s->b, "%llu", (unsigned long long)rss);
	rm_buf_addc(&s->b, ',');
	if (s->have_last_row && el > s->last_row)
		rm_buf_num(&s->b, 100.0 * (double)s->acc_ticks / (double)s->hz / (el - s->last_row), 1);
	rm_buf_addc(&s->b, '\n');
	put(s, s->tl_fd, "the timeline", &s->tl_ok);
	s->acc_ticks = 0;
	s->last_row = el;
	s->have_last_row = 1;
}

/* A streamed output: "-", /dev/stdout, /dev/stderr, /dev/fd/N are the
 * descriptors we were given (N above 2 is not CMD's: closed on its exec).
 * A name may be in a directory another user writes: lib/outfile opens it
 * through the directory's descriptor, only a regular file (emptied once it
 * is open) or a device; a symlink, a FIFO or a directory there is refused,
 * its target untouched, and nothing waits on a FIFO. */
int open_out(const char *path, const char *what)
{
	char why[256];
	int fd = rm_out_open_stream(path, why, sizeof(why));

	if (fd < 0)
		errx(RM_EXIT_FAIL, "cannot open %s '%s': %s", what, path, why);
	if (fd > STDERR_FILENO && rm_out_inherited_fd(path) == fd)
		(void)fcntl(fd, F_SETFD, FD_CLOEXEC);
	return fd;
}

/* Two outputs on one path would write over one another. */
void check_outs(const struct opts *o)
{
	const char *p[3] = { o->log, o->timeline, o->job };

	for (int i = 0; i < 3; i++)
		for (int j = i + 1; j < 3; j++)
			if (p[i] && p[j] && rm_out_same_path(p[i], p[j]))
				errx(RM_EXIT_USAGE, "'%s' is named for two outputs", p[j]);
}

/* The first OOM victim of the job's cgroup in the kernel log. */
struct victim {
	int found, pid;
	char name[64];
};

static void first_victim(void *arg, const struct rm_oom_kill *o)
{
	struct victim *v = arg;

	if (v->found)
		return;
	v->found = 1;
	v->pid = o->pid;
	rm_sanitize(o->name, strlen(o->name), v->name, sizeof(v->name));
}

/* --memory-max: the budget, the OOM kills inside it and the first victim. */
static void budget_cols(struct stream *s)
{
	uint64_t kills;
	struct victim v = { 0 };

	rm_buf_addf(&s->b, ",%llu,", (unsigned long long)(s->o->mem_max / 1024));
	if (!s->cg.ok || rm_cg_child_oom_kills(&s->cg, &kills) < 0) {
		rm_buf_addc(&s->b, ',');
		rm_kmsg_unmark(&s->kmark);
		return;
	}
	rm_buf_addf(&s->b, "%llu,", (unsigned long long)kills);
	/* Another cgroup's kill at the same moment is not the job's. */
	if (kills > 0)
		rm_kmsg_oom_since(&s->kmark, s->cg.name, first_victim, &v);
	if (v.found) {
		char text[100];
		snprintf(text, sizeof(text), "%s (PID %d)", v.name, v.pid);
		rm_buf_csv(&s->b, text);
	}
	rm_kmsg_unmark(&s->kmark);
}

void job_row(struct stream *s, double el)
{
	struct rusage ru;
	uint64_t cg_kib = 0, maxp = s->max_proc;
	int has_cg = 0, has_maxp = s->has_max_proc;
	double end = rm_now_epoch();

	getrusage(RUSAGE_CHILDREN, &ru);
	/* In exact mode every process has a row with the kernel's own peak
	 * (taskstats, or wait4 for a direct child): the largest process is
	 * the largest row.  RUSAGE_CHILDREN's maxrss is the largest over the
	 * tree, but names no process; sampled rows may have missed a peak,
	 * so there it still counts. */
	if (ru.ru_maxrss > 0 && (!has_maxp || !s->exact) &&
	    (!has_maxp || (uint64_t)ru.ru_maxrss > maxp)) {
		maxp = (uint64_t)ru.ru_maxrss;
		has_maxp = 1;
	}
	if (s->cg.ok) {
		has_cg = rm_cg_child_peak(&s->cg, &cg_kib) == 0;
		if (!has_cg)
			tree_warnx("--cgroup: cannot read the peak in '%s': %s", s->cg.dir,
				   strerror(errno));
	}
	rm_schema_cols(&s->b, rm_job_names, 0, RM_JOB_BASE_END);
	if (s->o->mem_max)
		rm_schema_cols(&s->b, rm_job_names, RM_JOB_BASE_END, RM_JOB_MEMMAX_END);
	if (s->cg.ok)
		rm_schema_cols(&s->b, rm_job_names, RM_JOB_MEMMAX_END, RM_JOB_CGROUP_END);
	rm_buf_addc(&s->b, '\n');
	rm_buf_csv(&s->b, s->cmdline);
	rm_buf_addc(&s->b, ',');
	rm_buf_num(&s->b, s->start_epoch, 3);
	rm_buf_addc(&s->b, ',');
	rm_buf_num(&s->b, end, 3);
	rm_buf_addc(&s->b, ',');
	rm_buf_num(&s->b, el, 3);
	rm_buf_addf(&s->b, ",%d,%llu,", rm_exit_column(s->root_status),
		    (unsigned long long)s->procs);
	if (s->has_peak_total) {
		rm_buf_addf(&s->b, "%llu,", (unsigned long long)s->peak_total);
		rm_buf_num(&s->b, s->peak_total_at, 3);
	} else {
		rm_buf_addc(&s->b, ',');
	}
	rm_buf_addc(&s->b, ',');
	if (has_maxp)
		rm_buf_addf(&s->b, "%llu", (unsigned long long)maxp);
	rm_buf_addc(&s->b, ',');
	if (has_cg)
		rm_buf_addf(&s->b, "%llu", (unsigned long long)cg_kib);
	rm_buf_addc(&s->b, ',');
	rm_buf_num(&s->b, (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6, 3);
	rm_buf_addc(&s->b, ',');
	rm_buf_num(&s->b, (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6, 3);
	/* Exact mode: the sums of every process's exit record. */
	if (s->has_tot_io)
		rm_buf_addf(&s->b, ",%llu,%llu,%llu", (unsigned long long)s->tot_rd,
			    (unsigned long long)s->tot_wr, (unsigned long long)s->tot_maj);
	else
		rm_buf_adds(&s->b, ",,,");
	for (int i = 0; i < 5; i++) {
		rm_buf_addc(&s->b, ',');
		if (s->has_tot_delay)
			rm_buf_num(&s->b, s->tot_delay[i], 3);
	}
	rm_buf_adds(&s->b, s->exact ? ",exact" : ",sampled");
	if (s->o->mem_max)
		budget_cols(s);
	if (s->cg.ok && s->has_gap)
		rm_buf_addf(&s->b, ",%llu,%llu,%llu,%llu", (unsigned long long)s->peak_file,
			    (unsigned long long)s->cg_anon, (unsigned long long)s->cg_file,
			    (unsigned long long)s->cg_kern);
	else if (s->cg.ok)
		rm_buf_adds(&s->b, ",,,,");
	rm_buf_addc(&s->b, '\n');
	int ok = 1;
	put(s, s->job_fd, "the job file", &ok);
}

void close_out(struct stream *s, int fd, const char *what)
{
	if (fd > STDERR_FILENO && close(fd) < 0) {
		tree_warnx("cannot write %s: %s", what, strerror(errno));
		s->status = RM_EXIT_FAIL;
	}
}
