/*
 * rm-sample's private header: what its four files share.
 *   main.c    options, setup, the loop over ticks, the end
 *   sample.c  one row of readings into v[] (the column table), and the
 *             columns printed
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
#include "usage.h"

#define DEFAULT_COMPILERS rm_cu_compilers()
#define MAX_NAMES 64
#define GIB (1024.0 * 1024.0 * 1024.0)

enum {
	C_EPOCH, C_ISO, C_ELAPSED, C_LOAD1, C_CPU, C_MEMUSED, C_MEMAVAIL, C_MEMPCT,
	C_SWAP, C_DISKAVAIL, C_DISKPCT, C_COMPILERS, C_STAGE, C_CONTEXT,
	C_OOM, C_PSI_MEM_SOME, C_PSI_MEM_FULL, C_PSI_IO_FULL, C_PSI_CPU_SOME,
	C_PKG_W, C_GPU_BUSY, C_GPU_VRAM_USED, C_GPU_VRAM_TOTAL, /* when asked */
	C_CG_USED, C_CG_LIMIT, C_CG_AVAIL, C_CG_SWAP, C_CG_OOM, C_CG_PSI_FULL, C_CORES,
	C_NCOLS
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
