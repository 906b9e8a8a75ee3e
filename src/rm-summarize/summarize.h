/*
 * rm-summarize's own header: the report a set of input files makes, and
 * the functions of its parts.  main.c reads the files and groups them
 * into reports; sys.c folds system CSV rows (rm-sample's and the seed
 * script's) into peaks, runs, stages and OOM kills; procs.c reads rm-tree's
 * exit log, job row and timeline; out.c prints text, Markdown and JSON;
 * svg.c draws the timeline.  Unknown numbers are NaN throughout.
 */
#ifndef RM_SUMMARIZE_H
#define RM_SUMMARIZE_H

#include <math.h>
#include <regex.h>
#include <stddef.h>

#include "csvread.h"
#include "rmtools.h"
#include "util.h"

#define CTX_RAW 1024     /* raw context kept at a peak, sanitized at the end */
#define MAX_VICTIMS 4    /* victims named per OOM kill row */
#define SVG_NB 1024      /* time buckets of the SVG series */

struct opts {
	int json, markdown, color;
	const char *svg;
	const char *csv;
	const char *kmsg;      /* NULL: /dev/kmsg */
	double near_oom_mb, low_disk_gb;
	int cores;             /* for the RAM-bound rule */
	int top;               /* rows shown in the process and unit lists */
	int top_set;           /* --top given: the JSON process list keeps to it */
	regex_t inc, exc;
	int has_inc, has_exc;
	const char *inc_pat, *exc_pat;   /* as given, for the filter metadata */
	long rows_lost;        /* -1: not known (no --rows-lost) */
	const char *rows_lost_from;
	long stage_fallback;   /* rows staged by the log's name; -1: not known */
	const char *trace;     /* --trace FILE */
};

/* A peak (or trough) of one column, with when and during what. */
enum { PK_MEM_USED, PK_MEM_AVAIL, PK_SWAP, PK_DISK, PK_LOAD, PK_CPU,
       PK_PKG_W, PK_GPU_BUSY, PK_GPU_VRAM, PK_N };

struct peak {
	int known;
	double v, epoch;
	double aux;            /* mem_pct, disk_pct or VRAM total; NaN if none */
	int stage;
	char ctx[CTX_RAW];
	size_t ctxlen;
};

/* Samples meeting a condition (near-OOM, low disk). */
struct runstat {
	long samples, cur, longest;
	double first_epoch, cur_start, longest_start, longest_end;
	int first_stage;
};

struct oomev {
	double epoch, prev_epoch;
	int stage;
	long kills;
	char ctx[CTX_RAW];
	size_t ctxlen;
	int nv;
	int vpid[MAX_VICTIMS];
	char vname[MAX_VICTIMS][64];
	/* oom.c: each victim's scope (1 the build's, 0 elsewhere on this
	 * host, -1 not known: counted as the build's), constraint (enum
	 * rm_oom_constraint) and the cgroup whose limit it hit. */
	int vscope[MAX_VICTIMS];
	int vcons[MAX_VICTIMS];
	char vmemcg[MAX_VICTIMS][128];
	long else_kills;       /* of kills, those whose victim was elsewhere */
};

struct stage {
	char *name;            /* sanitized */
	char *raw;             /* as in the CSV, to compare rows cheaply */
	size_t rawlen;
	double first_epoch, duration, peak_used, min_avail, min_disk, max_comp, energy_j;
	long samples, near_oom;
	double min_cg_avail;   /* cg_mem_avail_mb, NaN without */
	double *cpeaks;        /* compiler peaks (KiB) that fell in this stage */
	size_t ncp, capcp;
};

struct seg {
	double epoch;
	int stage;
};

enum { SV_USED, SV_AVAIL, SV_SWAP, SV_DISK, SV_CPU, SV_COMP, SV_N };

struct bucket {
	float min[SV_N], max[SV_N];
	unsigned has;
};

/* System CSV columns, found by header name. */
enum { SC_EPOCH, SC_ELAPSED, SC_LOAD1, SC_CPU, SC_USED, SC_AVAIL, SC_MEMPCT, SC_SWAP,
       SC_DISK, SC_DISKPCT, SC_COMP, SC_STAGE, SC_CONTEXT, SC_OOM, SC_PSI_MEM_FULL,
       SC_PKG_W, SC_GPU_BUSY, SC_GPU_VRAM, SC_GPU_VRAM_TOTAL,
       SC_CG_AVAIL, SC_CG_LIMIT, SC_CORES, SC_N };

struct sys {
	char *file;
	int seed;              /* the seed script's 14 columns */
	const char *format;    /* "seed", "rm-sample" or "rm-energy" */
	int ncols;
	int col[SC_N];
	long samples, skipped, cut_rows;
	double first_epoch, last_epoch, prev_epoch, first_elapsed;
	double origin;         /* epoch at elapsed_s 0 (NaN: no elapsed_s) */
	double prev_el;        /* the last row's elapsed_s */
	struct peak pk[PK_N];
	struct runstat near, low;
	int has_oom;
	double oom_prev;
	long oom_total;
	struct oomev *ev;
	size_t nev, capev;
	/* Disk least squares: count, means and co-moments of (t, disk)
	 * updated row by row (no cancellation), and the time span. */
	double dn, dmt, dmd, dctt, dctd, dcdd, dtmin, dtmax;
	double disk_first, disk_last, swap_first, swap_last;
	double energy_j, energy_s;
	double low_comp_sum;
	long low_comp_n;
	double cpu_sum;
	long cpu_n;
	double mem_total_mb, vram_total_mb;
	int cur_stage;
	struct seg *segs;
	size_t nseg, capseg;
	struct bucket b[SVG_NB];
	double bw;             /* bucket width, seconds */
	int nb;                /* buckets in use */
	int kmsg_state;        /* 0 not tried, 1 read, -1 unreadable */
	int kmsg_errno;
	/* rm-sample --cgroup-path: the build's memory cgroup. */
	struct peak cg_avail;  /* lowest cg_mem_avail_mb; aux: the limit then */
	double cg_host_avail;  /* host mem_avail_mb in that row */
	double cg_limit_min;   /* tightest cg_mem_limit_mb seen */
	int cores;             /* the cores column (effective cores), 0: none */
	long oom_else;         /* oom.c: kills whose victim was elsewhere */
};

struct proc {
	int pid, ppid;
	char comm[64];
	double start_s, end_s, peak_kib, peak_at, cpu_s, peak_epoch;
	char exit[24];
	char *cmd;
	char *unit;
	int stage;
	int compiler, shown;
	/* rm-tree's event-mode columns (NaN / "" when absent). */
	double read_kib, write_kib, majflt;
	double delay_ms[5];    /* cpu, io, swapin, reclaim, thrash */
	char source[12];
	int scope;             /* 1 in (or no scope column), 0 out */
};

/* rm-tree --stats: how the process data was collected. */
struct stats {
	int known;
	char mode[16];         /* "exact", "sampled" */
	double events_lost, resyncs, delayacct;
	char error[200];       /* why not exact */
};

struct job {
	int known;
	char *cmd;
	char exit[24];
	double start_epoch, end_epoch, elapsed, procs, peak_kib, peak_at, max_proc_kib,
	       cgroup_kib, user_s, sys_s;
	double mem_max_kib, oom_kills;   /* rm-tree --memory-max; NaN without */
	/* rm-tree --cgroup, at the sampled peak: the file-backed part of the
	 * sampled total, and the cgroup's page cache and kernel memory. */
	double peak_file_kib, cg_anon_kib, cg_file_kib, cg_kernel_kib;
	char victim[100];
};

struct tlpoint {
	double epoch, elapsed, procs, rss_kib, cpu_pct;
};

struct timeline {
	int known;
	long rows;
	struct tlpoint *pts;   /* every row, for the JSON */
	size_t npts, cappts;
	double off;            /* epoch - elapsed_s of its first row */
	double first_epoch, last_epoch, peak_kib, peak_epoch, peak_elapsed, max_procs, max_cpu;
};

struct unit {
	const char *name;
	const char *comm;
	double peak_kib;
	int stage, count;
};

struct group {
	const char *comm;
	long count;
	double peak_kib, cpu_s;
};

struct perjob {
	int stage;
	size_t n;
	double p95_kib, max_kib;
	double suggest_mb;
	long safe_j;
};

struct verdict {
	const char *kind;
	char text[1536];
};

struct report {
	const char **files;
	int nfiles;
	struct sys *sys;
	struct proc *procs;
	size_t nproc, capproc;
	int nexitlogs;
	/* scope=out rows of the exit logs: elsewhere on this host. */
	struct proc *others;
	size_t nothers, capothers;
	struct proc **oorder;  /* others, heaviest first */
	int has_scope;         /* an exit log with a scope column */
	struct stats stats;
	struct job job;
	struct timeline tl;
	struct stage *stages;
	int nstages, capst;
	int *stage_hash;       /* open addressing over stages, by raw name */
	size_t stage_hcap;
	/* Derived by report_finish. */
	struct proc **order;   /* every process, heaviest first */
	struct unit *units;
	size_t nunits;
	struct group *groups;
	size_t ngroups;
	struct perjob *perjob;
	size_t nperjob;
	double ram_mb;
	double host_ram_mb;    /* RAM when ram_mb is a cgroup's limit, else NaN */
	int cores;
	struct verdict *verdicts;
	int nverdicts;
};

/* main.c */
extern struct opts g_opt;
int stage_intern(struct report *r, const char *raw, size_t len);

/* sys.c */
struct sys *sys_new(const char *file, const struct rm_csv *hdr);
int sys_is_header(const struct rm_csv *hdr);
int sys_row(struct report *r, struct rm_csv *c, char *why, size_t wsize);
void sys_finish(struct report *r, const struct opts *o);
int stage_at(const struct report *r, double epoch);
void verdict_add(struct report *r, const char *kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/*
 * The disk rate, GiB per hour, by least squares with a 95 % interval:
 * fitted only over at least DISK_FIT_MIN_S seconds and DISK_FIT_MIN_N
 * samples (else rate, lo and hi are NaN).  A time to full is projected
 * only when hi < 0, the whole interval below zero.
 */
#define DISK_FIT_MIN_S 600.0
#define DISK_FIT_MIN_N 20
struct disk_fit {
	int fitted;
	long n;                /* samples with a disk reading */
	double span_s;         /* seconds between the first and the last */
	double rate, lo, hi;
};
void sys_disk_fit(const struct sys *s, struct disk_fit *f);
/* Hours until the disk's last reading reaches level at each rate of the
 * fit (h, from the interval's fast end h_lo to its slow end h_hi); 0 when
 * the disk does not fall surely (f->hi >= 0). */
int disk_hours(const struct sys *s, const struct disk_fit *f, double level,
	       double *h, double *h_lo, double *h_hi);
void sys_free(struct sys *s);

/* procs.c */
enum pkind { PK_NONE, PK_EXITLOG, PK_JOB, PK_TIMELINE, PK_STATS };
enum pkind procs_kind(const struct rm_csv *hdr);
void procs_header(struct report *r, enum pkind k, const struct rm_csv *hdr);
int procs_row(struct report *r, enum pkind k, struct rm_csv *c, char *why, size_t wsize);
void report_finish(struct report *r, const struct opts *o);
void report_free(struct report *r);
int write_proc_csv(const struct report *r, const char *path);

/* oom.c */
int scope_complete(const struct report *r);
const char *kmsg_why(int e);
void oom_attribute(struct report *r, const struct opts *o);
int oom_verdict(struct report *r, const struct opts *o);
long oom_build_kills(const struct sys *s);
int oom_event_is_build(const struct oomev *e);
const char *oom_cause(int constraint);

/* scopeout.c */
void text_scope(struct rm_buf *b, const struct report *r, const struct opts *o, const char *bold,
		const char *off);
void md_scope(struct rm_buf *b, const struct report *r, const struct opts *o);
void json_scope(struct rm_buf *b, int *first, const struct report *r, const struct opts *o);

/* out.c */
void fmt_clock(double s, char *buf, size_t size);
void fmt_dur(double s, char *buf, size_t size);
void print_text(struct rm_buf *b, const struct report *r, const struct opts *o);
void print_markdown(struct rm_buf *b, const struct report *r, const struct opts *o);
void print_json(struct rm_buf *b, const struct report *r, const struct opts *o);
const char *stage_name(const struct report *r, int i);
const char *peak_label(int k);

/* trace.c */
int write_trace(const struct report *r, const char *path);

/* svg.c */
int write_svg(const struct report *r, const struct opts *o, const char *path);

#endif
