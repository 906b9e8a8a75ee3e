/*
 * rm-tree's stream, private to its files (tree.h is what every part of
 * rm-tree shares).  Each reaches only those below it:
 *
 *   stream.c   the loop: start, the ticks, the end
 *   job.c      --exec: CMD started, children reaped, orphans, the job's end
 *   probe.c    /proc readings of the members: scans, samples, totals
 *   table.c    the processes met, their states, the exit-log rows
 *   rows.c     the exit-log, timeline and job rows, their headers and files
 *
 * and all of them may call events.c (which calls table.c) and util.c.  The job's memory cgroup
 * is lib/cgchild's, the victims of its OOM kills lib/kmsg's.
 */
#ifndef RM_TREE_STREAM_H
#define RM_TREE_STREAM_H

#include "cgchild.h"
#include "kmsg.h"
#include "tree.h"

struct vec {
	struct rm_pnode **v;
	size_t n, cap;
};

struct stream {
	const struct opts *o;
	int exec;
	int exact;                    /* exit rows come from the kernel (events.c) */
	struct rm_tick tick;
	struct rm_buf b;
	int log_fd, tl_fd, job_fd;
	int log_ok, tl_ok;
	int stop, status;
	double boot0;                 /* CLOCK_BOOTTIME seconds at elapsed 0 */
	uint64_t boot0_ticks;
	uint64_t page_kib;
	long hz;
	struct vec undecided, gone;   /* a scan's fresh nodes; nodes to end or drop */
	int first_scan;
	uint64_t procs;               /* processes followed, ever */
	uint64_t acc_ticks;           /* CPU of followed processes since the last row */
	double last_row;
	int have_last_row;
	uint64_t peak_total, max_proc;
	double peak_total_at;
	int has_peak_total, has_max_proc;
	size_t live;
	/* --exec */
	pid_t self, root;
	int root_done, root_status, children_left;
	double root_end;              /* elapsed when CMD ended */
	double start_epoch;
	char cmdline[RM_TEXT_MAX + 1];
	struct rm_cg_child cg;        /* --cgroup, --memory-max */
	struct rm_kmsg_mark kmark;    /* the kernel log at the job's start (--memory-max) */
	double mono0;                 /* CLOCK_MONOTONIC at the job's start */
	int tty;
	int chld_rfd;                 /* the SIGCHLD self-pipe (events.c owns extra_fd) */
	/* Totals of the exact rows in scope, for the job row. */
	uint64_t tot_rd, tot_wr, tot_maj;
	double tot_delay[5];
	int has_tot_io, has_tot_delay;
	/* --cgroup: where the sampled total and the cgroup's peak part ways.
	 * file_acc sums the members' RssFile + RssShmem read this tick; at a
	 * new sampled peak it is kept with the cgroup's own breakdown. */
	uint64_t file_acc, peak_file, cg_anon, cg_file, cg_kern;
	int has_gap;
};


/* job.c: --exec */
void exec_setup(struct stream *s);
void launch(struct stream *s);
void reap(struct stream *s, double el);
int job_over(struct stream *s, double el);
void tell_orphans(struct stream *s);
void tty_give_back(int fd);
void drain(int fd);

/* probe.c: /proc readings */
void note_peak(struct stream *s, struct rm_pnode *n, uint64_t kib, double at);
void note_ticks(struct stream *s, struct rm_pnode *n, uint64_t ticks);
void scan(struct stream *s, double el);
void scan_members(struct stream *s, double el);
void totals(struct stream *s, double el, int row);

/* table.c (the rest is in tree.h): the table of this stream */
void table_start(struct stream *s);

/* live.c: --live FILE and --live-tty, once a tick */
void live_tick(struct stream *s, double el, size_t procs, uint64_t rss, int known);
void live_end(struct stream *s);

/* rows.c: rows and the files they go to */
int open_out(const char *path, const char *what);
void check_outs(const struct opts *o);
void close_out(struct stream *s, int fd, const char *what);
void rows_headers(struct stream *s);
void log_row(struct stream *s, const struct rm_pnode *n, double end, int out);
void timeline_row(struct stream *s, double el, size_t procs, uint64_t rss, int known);
void job_row(struct stream *s, double el);

#endif
