/*
 * report.h: the report a set of input files makes, as data: the system
 * CSV's peaks, runs, stages and OOM kills (sys.c), rm-tree's processes,
 * job and timeline (procs.c), what is derived from them (model.c), and
 * verdicts as kinds and numbers (sys.c, oom.c).  Renderers (render_*.c,
 * scopeout.c, svg.c, series.c, trace.c, csvout.c) only format it, in
 * the words of fmt.c and verdict.c.  report.c holds the stage table every
 * part shares.  Unknown
 * numbers are NaN throughout.
 */
#ifndef RM_SUMMARIZE_REPORT_H
#define RM_SUMMARIZE_REPORT_H

#include <math.h>
#include <regex.h>
#include <stddef.h>

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
	int series;            /* --series */
	regex_t inc, exc;
	int has_inc, has_exc;
	const char *inc_pat, *exc_pat;   /* as given, for the filter metadata */
	long rows_lost;        /* -1: not known (no --rows-lost) */
	const char *rows_lost_from;
	long stage_fallback;   /* rows staged by the log's name; -1: not known */
	const char *trace;     /* --trace FILE */
	long events_dropped;   /* the samplers' dropped-event bursts (--sampler-status);
				* -1 not known */
	int elsewhere_cmdlines; /* --elsewhere-cmdlines: other users' command
				 * lines under "Elsewhere on this host" */
	int fold;              /* the outputs asked for allow an exit log folded as
				* read (fold.c): not --compare, --fail-on, --memwatch... */
	int list_spill;        /* the process list is read from the report's sort
				* (spill.c): --top over 1000 (all), or --json without
				* --top, which lists every process */
	int stream;            /* a renderer may write out what it has made so far
				* (rm_out), its lines never revisited: no --fail-on */
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

/* How an OOM victim was tied to the run (oomev.vtie). */
enum vtie {
	VT_NONE,               /* none: a kernel-log kill near a rise of the counter */
	VT_PID,                /* named by PID and name in an exit log: exact */
	VT_CTR,                /* in a container's cgroup (containers companion): exact */
	VT_CGROUP,             /* in the run's cgroup (kernel log against --stats): exact */
	VT_EXIT,               /* no kernel log: the cgroup's counter rose, and a row
				* of the build ended by SIGKILL then: inferred */
};

/* A process of the killed one's cgroup at the kill: from the kernel's OOM
 * task dump (its resident memory then), or, without a dump, a compiler
 * of the build alive then (its peak). */
struct oomtask {
	int pid;
	double kib;
	int from_dump;
	char name[16];           /* sanitized */
	const struct proc *row;  /* its exit-log row; NULL: none */
};

/* oom.c: one victim of the build, in full. */
struct oomvictim {
	const struct proc *row;  /* its exit-log row (PID, name, end nearest the kill); NULL */
	double epoch;            /* the kill: the row's end, else the sample's */
	int from_row;            /* 1: epoch is the exit row's end */
	int stage;
	const char *ctx;         /* the context read last before the kill */
	double ctx_age;          /* how long before the kill it was read; NaN: not known */
	double limit_kib, usage_kib;   /* the cgroup's at the kill; NaN: not logged */
	int dump;                /* the kernel logged a task dump */
	struct oomtask *beside;  /* the others of its cgroup, heaviest first */
	int nbeside;
};

struct oomev {
	double epoch, prev_epoch;
	int stage;
	long kills;
	long cg_kills;         /* rise of the build's cgroup's oom_kill then, -1 unknown */
	char ctx[CTX_RAW];
	size_t ctxlen;
	char pctx[CTX_RAW];      /* the row before's context (read at prev_epoch) */
	size_t pctxlen;
	int has_prev;            /* a row came before */
	double cg_limit_mb;      /* the row's cg_mem_limit_mb; NaN */
	int nv;
	int vpid[MAX_VICTIMS];
	char vname[MAX_VICTIMS][64];
	/* oom.c: each victim's scope (1 the build's, 0 elsewhere on this
	 * host, -1 not known: counted as the build's), constraint (enum
	 * rm_oom_constraint) and the cgroup whose limit it hit. */
	int vscope[MAX_VICTIMS];
	int vcons[MAX_VICTIMS];
	char vmemcg[MAX_VICTIMS][128];
	int vctr[MAX_VICTIMS];   /* the container (index) whose cgroup it was in, -1 none */
	/* oom.c: how the victim was tied to the run (enum vtie) and, where
	 * its row was inferred, that row's PID (a PID namespace's), else 0. */
	int vtie[MAX_VICTIMS];
	int vrow[MAX_VICTIMS];
	struct oomvictim vx[MAX_VICTIMS];   /* the build's victims only */
	long else_kills;       /* of kills, those whose victim was elsewhere */
};

/*
 * A container of the run, from the containers companion (containers.c):
 * one per container ID, whatever its number of rows.  Sizes in KiB, NaN
 * where never read; times are epochs.
 */
#define CT_LIMITS 8            /* limit changes kept (the first ones) */
#define CT_RISES 8             /* oom_kills rises kept (the first ones) */
struct ctr_stage {
	int stage;
	double min_avail_kib;  /* limit - usage, lowest in this stage */
	double limit_kib;      /* its tightest limit in this stage */
};
struct ctr {
	char id[80], shortid[16], name[128], cgroup[320], tied[24];   /* sanitized */
	char *rawcg;           /* the cgroup as read, to compare with the kernel log's */
	double first_epoch, last_epoch, last_read;   /* last_read: the last `run` row */
	int gone;              /* its last row says `gone` */
	long rows;
	double limit[CT_LIMITS], limit_at[CT_LIMITS];
	int nlimits;           /* values kept in limit[] */
	long limit_changes;    /* every change, kept or not */
	long nread;            /* its rows read */
	int start_stage;       /* begun in a stage change (stage_begun), or -2 */
	double start_until;    /* until that stage's first sample */
	double limit_cur;      /* the last limit read */
	double peak_kib, peak_epoch;
	int peak_col;          /* a peak_kib reading (the kernel's high-water mark) */
	double oom_last;       /* the last oom_kills read */
	long oom_kills;        /* rises of oom_kills over its rows */
	double rise_at[CT_RISES];
	long rise_n[CT_RISES];
	int nrises;
	long kmsg_kills;       /* kernel-log kills under its cgroup (oom.c) */
	double min_avail_kib, min_avail_epoch, min_avail_limit;
	int min_avail_stage;
	long near;             /* readings near-OOM by its own limit */
	double near_first;
	int near_first_stage;
	struct ctr_stage *st;
	int nst;
};

/* The run's containers, and the container clients of the build. */
struct ctrs {
	int known;             /* a containers companion was read */
	struct ctr *v;
	size_t n, cap;
	size_t *hash;          /* open addressing over v by id: index + 1, 0 empty */
	size_t hcap;
	long ntied;            /* containers tied to the build */
	long clients;          /* the build's docker/podman run/create/start/exec processes */
	const struct ctr *bind;  /* the tied container with the least left, or NULL */
};

struct stage {
	char *name;            /* sanitized */
	char *raw;             /* as in the CSV, to compare rows cheaply */
	size_t rawlen;
	double first_epoch, duration, peak_used, min_avail, min_disk, max_comp, energy_j;
	double build_comp;     /* most of the build's compilers alive at once (exit-log times); NaN */
	long samples, near_oom;
	double min_cg_avail;   /* cg_mem_avail_mb, NaN without */
	double *cpeaks;        /* compiler peaks (KiB) that fell in this stage */
	size_t ncp, capcp;
	size_t ncp_emu;        /* of them emulated (rm-tree's emulated = yes) */
	int cp_folded;         /* a folded log's: cpeaks empty, its p95 and max */
	double cp_p95, cp_max; /* computed (comps.c) */
};

struct seg {
	double epoch;
	int stage;
	double before;         /* the row before it (the last of the stage before) */
};

enum { SV_USED, SV_AVAIL, SV_SWAP, SV_DISK, SV_CPU, SV_COMP, SV_CG_USED, SV_CG_LIMIT, SV_N };

struct bucket {
	float min[SV_N], max[SV_N];
	unsigned has;
};

/* System CSV columns, found by header name. */
enum { SC_EPOCH, SC_ELAPSED, SC_LOAD1, SC_CPU, SC_USED, SC_AVAIL, SC_MEMPCT, SC_SWAP,
       SC_DISK, SC_DISKPCT, SC_COMP, SC_STAGE, SC_CONTEXT, SC_OOM, SC_PSI_MEM_FULL,
       SC_PKG_W, SC_GPU_BUSY, SC_GPU_VRAM, SC_GPU_VRAM_TOTAL,
       SC_CG_AVAIL, SC_CG_LIMIT, SC_CORES, SC_CG_OOM, SC_N };

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
	int has_cg_oom;        /* the cg_oom_kills column (rm-sample --cgroup-path) */
	double cg_oom_prev;
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
	double cg_limit_last;  /* the last row's cg_mem_limit_mb, NaN */
	/* The cgroup's limit changed during the run: when, from, to (MiB). */
#define MAX_LIMCH 16
	struct { double epoch, from, to; } limch[MAX_LIMCH];
	int nlimch;
	int cores;             /* the cores column (effective cores), 0: none */
	long oom_else;         /* oom.c: kills whose victim was elsewhere */
	char lastctx[CTX_RAW]; /* the last row's context, for the next OOM event */
	size_t lastctxlen;
	int nrows_ctx;         /* rows whose context was kept */
};

struct proc {
	int pid, ppid;
	char comm[64];
	double start_s, end_s, peak_kib, peak_at, cpu_s, peak_epoch;
	char exit[24];
	char *cmd;
	const char *rcmd;      /* the real program's part of cmd (past an emulator's
				* binfmt prefix), for "unit or cmd" */
	char *unit;
	int stage;
	int compiler, shown;
	/* rm-tree's event-mode columns (NaN / "" when absent). */
	double read_kib, write_kib, majflt;
	double delay_ms[5];    /* cpu, io, swapin, reclaim, thrash */
	char source[12];
	int scope;             /* 1 in (or no scope column), 0 out */
	int emulated;          /* rm-tree's emulated: 1 yes, 0 no, -1 unknown (empty,
				* or an exit log from before the column) */
	long uid;              /* its real user (the uid column); -1 unknown */
	int cmd_hidden;        /* scope=out: another user's command line, not
				* copied into the report (procs_hide_cmdlines) */
};

/* rm-tree --stats: how the process data was collected. */
struct stats {
	int known;
	char mode[16];         /* "exact", "sampled" */
	double events_lost, resyncs, delayacct;
	char error[200];       /* why not exact */
	/* Where the run was: its PID and cgroup namespaces (inode numbers,
	 * 0 unknown) and the followed tree's memory cgroup ("" unknown). */
	unsigned long pid_ns, cgroup_ns;
	char cgroup[256];
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
	int given;             /* a timeline file was read, rows or not */
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
	int emulated;          /* of the process whose peak it is */
};

struct group {
	const char *comm;
	long count;
	double peak_kib, cpu_s;
	int emulated;          /* 1 any of them was, 0 none was, -1 not known */
};

struct perjob {
	int stage;
	size_t n, nemu;        /* compilers, of them emulated */
	double p95_kib, max_kib;
	double suggest_mb;
	long safe_j;
	double budget_mb;      /* the memory -j is sized from (RAM, a cgroup's or a container's limit) */
	const struct ctr *ctr; /* a tied container whose limit binds, or NULL */
	char bound[40];        /* "container ID memory" when it does */
	int by_max;            /* sized by the largest (above the p95): the build was OOM-killed in the stage */
};

/*
 * A verdict, as data: what kind, when (seconds after the run's start),
 * in which stage, and its numbers; fmt.c words it.  n[] by kind:
 *   V_EDGE_CGROUP   available, limit, host available (NaN: not read)
 *   V_EDGE_HOST     available (NaN: not recorded), swap in use (NaN: none)
 *   V_RAM_BOUND     threshold MiB, mean compilers; count: cores
 *   V_LOW_DISK      threshold GiB, minimum GiB; count: samples
 *   V_DISK_FALLING  the VD_* numbers; count: samples fitted
 *   V_OK            threshold MiB, cgroup's lowest (NaN: none), disk
 *                   threshold GiB (NaN: disk not recorded)
 * The OOM kinds name the kill ev and its victim (-1: none); count: kills.
 *   V_OOM_CONTAINER a kill of the build in a tied container (ctr): ev and
 *                   victim when the kernel log named it (count: the
 *                   build's kills), else at its oom_kill count's first
 *                   rise (count: the tied containers' kills)
 *   V_OOM_UNTIED    the build ran container clients but none of its
 *                   containers is tied, and one of the run's containers
 *                   (ctr) was OOM-killed: count its kills, at its first,
 *                   ev and victim when the kernel log named one; n[0]:
 *                   the other kills elsewhere on this host
 *   V_CTR_UNTIED    count: the build's container clients, none tied;
 *                   n[0]: the containers that ran on the host meanwhile
 *   V_EDGE_CONTAINER a tied container (ctr) ran short by its own limit:
 *                   available n[0] MiB of its n[1] MiB limit (the
 *                   threshold n[2]); count: its readings below it
 */
enum verdict_kind { V_OOM_ELSEWHERE, V_OOM_KILL, V_OOM_ALSO_ELSEWHERE, V_EDGE_CGROUP,
		    V_EDGE_HOST, V_RAM_BOUND, V_LOW_DISK, V_DISK_FALLING, V_OK, V_EDGE_CONTAINER,
		    V_OOM_CONTAINER, V_OOM_UNTIED, V_CTR_UNTIED };
enum { VD_RATE, VD_HI, VD_LO, VD_SPAN, VD_THR, VD_H_THR, VD_THR_LO, VD_THR_HI, VD_H_FULL,
       VD_FULL_LO, VD_FULL_HI, VD_N };
#define VF_CLIMBING 1     /* V_EDGE_HOST: swap rose over the run */
#define VF_OF_BUILD 2     /* V_OOM_KILL: other programs were killed too */
#define VF_SWAP_KNOWN 4   /* V_OK */
#define VF_OOM_KNOWN 8    /* V_OK */

struct verdict {
	enum verdict_kind k;
	double at;             /* seconds after the start; NaN: no time */
	int stage;             /* -1: none */
	const char *ctx;       /* the row's context then, or NULL */
	const struct oomev *ev;
	int victim;
	long count;
	double n[VD_N];
	unsigned flags;
	const struct ctr *ctr;  /* the container kinds' container */
};

struct fold;
struct spill;

struct report {
	const struct opts *opt;  /* the options it was built with */
	/* The exit log folded as read (fold.c): procs holds only the rows
	 * the text report shows; nrows, nshown, cpu_all and nnocmd count
	 * every in-scope row, folded or not. */
	int fold;
	int fold_one_log;      /* model.c: the report has one exit log */
	struct fold *fd;
	size_t nrows, nshown, nnocmd;
	double cpu_all;
	long nclients;         /* folded: the container client rows */
	const char **files;
	int nfiles;
	struct sys *sys;
	struct proc *procs;
	size_t nproc, capproc;
	size_t nemulated;      /* in-scope processes rm-tree saw emulated */
	int nexitlogs;
	/* scope=out rows of the exit logs: elsewhere on this host. */
	struct proc *others;
	size_t nothers, capothers;
	struct proc **oorder;  /* others, heaviest first */
	/* The in-scope rows --csv and --top all list (shown, heaviest first)
	 * and --trace draws (with a start, in start order), put in order as
	 * read (spill.c); NULL where no output asks. */
	struct spill *sp_peak, *sp_start;
	size_t others_hidden;  /* others whose command line is not shown */
	size_t others_hidden_nouid; /* of which no uid was recorded */
	int has_scope;         /* an exit log with a scope column */
	struct stats stats;
	struct ctrs ctrs;      /* the containers companion (containers.c) */
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
	double tree_off;       /* epoch at rm-tree's time 0 (start_s, end_s); NaN */
	int ram_budget;        /* ram_mb is rm-run --memory-max's budget */
	int has_build_comp;    /* stages' build_comp known (an exit log was read) */
	int cores;
	struct verdict *verdicts;
	int nverdicts;
};

/* report.c: the stage table, and verdicts added as data. */
/* The index of the stage named raw[0..len), added when new. */
int stage_intern(struct report *r, const char *raw, size_t len);
/* A compiler's peak (KiB) into stage si's list (-1: the unnamed stage),
 * for the -j advice. */
void stage_add_cpeak(struct report *r, int si, double peak_kib, int emulated);
/* The order of the By command and compile unit lists: largest peak
 * first, then by name (qsort comparators of struct group, struct unit). */
int report_group_cmp(const void *a, const void *b);
int report_unit_cmp(const void *a, const void *b);
/* The stage at epoch (the system CSV's change points), or -1. */
int stage_at(const struct report *r, double epoch);
int stage_begun(const struct report *r, double epoch, double *until);
/* rm-tree's time 0 as an epoch (its times are seconds after it): its
 * timeline's or job row's start, else the system CSV's; NaN. */
double report_tree_off(const struct report *r);
/* When a process's peak was reached at the latest, in its exit log's
 * seconds: the sampled time of its peak, else its end (an exact row's
 * peak is the kernel's high-water mark at exit), else its start; NaN. */
double proc_peak_time(const struct proc *p);
/* The stage then (off: rm-tree's time 0 as an epoch), or -1. */
int proc_stage(const struct report *r, const struct proc *p, double off);
/* The stage's name, "" for -1 or none. */
const char *stage_name(const struct report *r, int i);
/* A new verdict of kind k, zeroed (no time, no stage, no victim). */
struct verdict *verdict_add(struct report *r, enum verdict_kind k);
/* "oom-kill", "ok", ...: the kind as the JSON names it. */
const char *verdict_kind_name(enum verdict_kind k);

#endif
