/*
 * rm-sample's private header: what its four files share.
 *   main.c    options, setup, the loop over ticks, the end
 *   sample.c  one row of readings into v[], and the columns printed
 *             (the column table is lib/schema.h's)
 *   out.c     the row written: -o and lost rows, the CSV header,
 *             --status, --prom-file
 *   serve.c   --listen: the HTTP server beside the stream
 * main.c calls the other three; serve.c calls sample.c for a scrape
 * without -i; out.c hands each row to serve.c for /metrics.
 */
#ifndef RM_SAMPLE_H
#define RM_SAMPLE_H

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <regex.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cu.h"
#include "cgroup.h"
#include "energy.h"
#include "gpu.h"
#include "httpd.h"
#include "outfile.h"
#include "pcount.h"
#include "rmtools.h"
#include "schema.h"
#include "usage.h"

#define DEFAULT_COMPILERS rm_cu_compilers()
#define MAX_NAMES 64
#define GIB (1024.0 * 1024.0 * 1024.0)

/* The columns, by their short names here: lib/schema.h's sample CSV table
 * (rm-sample's and rm-summarize's one list). */
enum {
	C_EPOCH = RM_SC_EPOCH, C_ISO = RM_SC_ISO, C_ELAPSED = RM_SC_ELAPSED_S,
	C_LOAD1 = RM_SC_LOAD1, C_CPU = RM_SC_CPU_PCT, C_MEMUSED = RM_SC_MEM_USED_MB,
	C_MEMAVAIL = RM_SC_MEM_AVAIL_MB, C_MEMPCT = RM_SC_MEM_PCT, C_SWAP = RM_SC_SWAP_USED_MB,
	C_DISKAVAIL = RM_SC_DISK_AVAIL_GB, C_DISKPCT = RM_SC_DISK_PCT,
	C_COMPILERS = RM_SC_COMPILERS, C_STAGE = RM_SC_STAGE, C_CONTEXT = RM_SC_CONTEXT,
	C_OOM = RM_SC_OOM_KILLS, C_PSI_MEM_SOME = RM_SC_PSI_MEM_SOME,
	C_PSI_MEM_FULL = RM_SC_PSI_MEM_FULL, C_PSI_IO_FULL = RM_SC_PSI_IO_FULL,
	C_PSI_CPU_SOME = RM_SC_PSI_CPU_SOME, C_PKG_W = RM_SC_PKG_W,
	C_GPU_BUSY = RM_SC_GPU_BUSY_PCT, C_GPU_VRAM_USED = RM_SC_GPU_VRAM_USED_MB,
	C_GPU_VRAM_TOTAL = RM_SC_GPU_VRAM_TOTAL_MB, C_CG_USED = RM_SC_CG_MEM_USED_MB,
	C_CG_LIMIT = RM_SC_CG_MEM_LIMIT_MB, C_CG_AVAIL = RM_SC_CG_MEM_AVAIL_MB,
	C_CG_SWAP = RM_SC_CG_SWAP_USED_MB, C_CG_OOM = RM_SC_CG_OOM_KILLS,
	C_CG_PSI_FULL = RM_SC_CG_PSI_MEM_FULL, C_CORES = RM_SC_CORES, C_NCOLS = RM_SC_N,
};

struct opts {
	double interval;
	long count;
	pid_t watch_pid;            /* the first --watch-pid: the build's */
	pid_t watch[RM_TICK_WATCH_MAX];
	int nwatch;
	enum rm_fmt fmt;
	int header;
	const char *disk_path;
	const char *stage_file;
	const char *log_dir;
	regex_t ctx_re;
	int has_re;
	char *names_store;
	const char *names[MAX_NAMES];
	int nnames;
	int energy, gpu;
	const char *output;
	const char *prom_file;
	const char *cgroup_path;    /* --cgroup-path, NULL: none */
	struct rm_buf prom_labels;  /* name="value",... for --prom-file */
	const char *listen;         /* --listen ADDR:PORT */
	double min_age;
	int expose_cmd;
	const char *status_file;
	int check;
	int seed_cols;              /* --seed-columns */
};

struct state {
	struct rm_cputimes cpu_prev;
	uint64_t oom_base;
	int oom_known;
	char stage[RM_TEXT_MAX + 1];
	char context[RM_TEXT_MAX + 1];
	char log_path[4096];
	uid_t log_owner;
	char iso[40];
};

/* main.c */
extern const char prog[];
extern const struct rm_cli cli;

/* sample.c: the columns printed (the defaults, then those --energy,
 * --gpu and --cgroup-path add), their indexes in v[], and how many. */
extern struct rm_col ocols[C_NCOLS];
extern int osel[C_NCOLS], nout;
extern struct rm_gpus gpus;
extern struct rm_pcount compilers_pc;
void open_extras(const struct opts *o);
long count_compilers(const struct opts *o);
void compilers_done(void);
void sample(const struct opts *o, struct state *s, double elapsed,
	    struct rm_val *v);

/* out.c */
extern long rows_written, gaps, rows_lost, stage_fallback;
extern double gap_max;
void status_write(const struct opts *o, int final);
void check_prom_dir(const struct opts *o);
void emit(const struct opts *o, struct rm_buf *b, const struct rm_val *all);
void open_output(const struct opts *o, int create);
int report_lost(const struct opts *o);
void start_header(const struct opts *o, struct rm_buf *b);

/* serve.c: --listen */
void serve_check_args(struct opts *o);
void serve_keep(const struct rm_val *v);
int serve_start(const struct opts *o, struct state *s, struct rm_tick *t);
void serve_stop(void);
int serve_only(struct rm_tick *t);

#endif
