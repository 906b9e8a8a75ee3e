/*
 * rm-sample: one system-wide row per tick, for the build monitor.
 *
 * Usage and options: the table cli below (rm-sample --help prints it).
 *
 * Without -i, prints the header and one row, its CPU % measured over a
 * short window.  With -i, prints a row every SEC seconds (on absolute
 * deadlines) until COUNT rows, the end of PID (then one last row, so a
 * kill that ended it is recorded), or SIGINT/SIGTERM/SIGHUP.
 * --energy and --gpu append their columns after the default ones (lib/energy
 * and lib/gpu; empty where there is no RAPL or GPU, or it is not readable).
 */
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

static const char prog[] = "rm-sample";
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

static const struct rm_col cols[C_NCOLS] = {
	{ "epoch", RM_P_NONE, NULL, NULL, 0 },
	{ "iso", RM_P_NONE, NULL, NULL, 0 },
	{ "elapsed_s", RM_P_NONE, NULL, NULL, 0 },
	{ "load1", RM_P_GAUGE, "rm_load1", "One-minute load average.", 0 },
	{ "cpu_pct", RM_P_GAUGE, "rm_cpu_busy_ratio", "Machine CPU busy over the last interval (1 = every core busy).", 0.01 },
	{ "mem_used_mb", RM_P_GAUGE, "rm_memory_used_bytes", "MemTotal minus MemAvailable.", 1048576.0 },
	{ "mem_avail_mb", RM_P_GAUGE, "rm_memory_available_bytes", "MemAvailable.", 1048576.0 },
	{ "mem_pct", RM_P_GAUGE, "rm_memory_used_ratio", "Memory used over MemTotal.", 0.01 },
	{ "swap_used_mb", RM_P_GAUGE, "rm_swap_used_bytes", "SwapTotal minus SwapFree.", 1048576.0 },
	{ "disk_avail_gb", RM_P_GAUGE, "rm_disk_available_bytes", "Bytes a non-root user can still write on the disk path.", GIB },
	{ "disk_pct", RM_P_GAUGE, "rm_disk_used_ratio", "Disk used as df computes it.", 0.01 },
	{ "compilers", RM_P_GAUGE, "rm_compilers", "Live compiler and linker processes.", 0 },
	{ "stage", RM_P_LABEL, "stage", NULL, 0 },
	{ "context", RM_P_NONE, NULL, NULL, 0 },
	{ "oom_kills", RM_P_COUNTER, "rm_oom_kills_total", "OOM kills since the stream started.", 0 },
	{ "psi_mem_some", RM_P_GAUGE, "rm_pressure_memory_some_ratio", "PSI memory some avg10.", 0.01 },
	{ "psi_mem_full", RM_P_GAUGE, "rm_pressure_memory_full_ratio", "PSI memory full avg10.", 0.01 },
	{ "psi_io_full", RM_P_GAUGE, "rm_pressure_io_full_ratio", "PSI io full avg10.", 0.01 },
	{ "psi_cpu_some", RM_P_GAUGE, "rm_pressure_cpu_some_ratio", "PSI cpu some avg10.", 0.01 },
	{ "pkg_w", RM_P_GAUGE, "rm_package_power_watts", "CPU package power over the last interval, all packages.", 0 },
	{ "gpu_busy_pct", RM_P_GAUGE, "rm_gpus_busy_max_ratio", "Highest busy ratio over the GPUs.", 0.01 },
	{ "gpu_vram_used_mb", RM_P_GAUGE, "rm_gpus_vram_used_bytes", "VRAM in use, summed over the GPUs.", 1048576.0 },
	{ "gpu_vram_total_mb", RM_P_GAUGE, "rm_gpus_vram_total_bytes", "VRAM size, summed over the GPUs.", 1048576.0 },
	{ "cg_mem_used_mb", RM_P_GAUGE, "rm_cg_mem_used_bytes", "Memory charged to the cgroup.", 1048576.0 },
	{ "cg_mem_limit_mb", RM_P_GAUGE, "rm_cg_mem_limit_bytes", "Tightest memory limit of the cgroup and its ancestors.", 1048576.0 },
	{ "cg_mem_avail_mb", RM_P_GAUGE, "rm_cg_mem_available_bytes", "Limit minus working set (usage minus inactive file).", 1048576.0 },
	{ "cg_swap_used_mb", RM_P_GAUGE, "rm_cg_swap_used_bytes", "Swap charged to the cgroup.", 1048576.0 },
	{ "cg_oom_kills", RM_P_COUNTER, "rm_cg_oom_kills_total", "OOM kills in the cgroup since the stream started.", 0 },
	{ "cg_psi_mem_full", RM_P_GAUGE, "rm_cg_pressure_memory_full_ratio", "PSI memory full avg10 of the cgroup.", 0.01 },
	{ "cores", RM_P_GAUGE, "rm_effective_cores", "CPU affinity capped by the tightest CPU quota, rounded up.", 0 },
};

/* The columns printed: the defaults, then those --energy and --gpu add. */
static struct rm_col ocols[C_NCOLS];
static int osel[C_NCOLS], nout;

/* RAPL and the GPUs, opened only when asked; closed at exit (NVML's
 * shutdown is owed however the process ends). */
static struct rm_rapl rapl = { .dirfd = -1 };
static struct rm_gpus gpus = { .drm_fd = -1 };
static struct rm_gpu_reading gpu_r[RM_GPU_MAX];
static double pkg_prev;         /* monotonic time of the last RAPL reading */
static struct rm_cg cgrp;       /* --cgroup-path */
static int cg_cores;

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

#define OFF(f) offsetof(struct opts, f)
enum { O_WATCH = RM_CLI_LONG, O_DISK, O_STAGEFILE, O_LOGDIR, O_CTX, O_COMP, O_ENERGY, O_GPU,
       O_PROMFILE, O_PROMLABEL, O_LISTEN, O_MINAGE, O_EXPOSE, O_CGPATH, O_STATUS, O_CHECK,
       O_SEED };

static const struct rm_cli_opt options[] = {
	{ 'i', "interval", "SEC", .kind = RM_CLI_INTERVAL, .off = OFF(interval),
	  .help = "seconds between rows (0.001 to 86400)" },
	{ 'n', "count", "COUNT", .kind = RM_CLI_COUNT, .off = OFF(count),
	  .help = "stop after COUNT rows" },
	{ O_WATCH, "watch-pid", "PID",
	  .help = "stop as soon as PID ends, after one last row; given\n"
		  "more than once (at most 8), when any of them ends" },
	{ 'f', "format", "FMT", .kind = RM_CLI_FORMAT, .off = OFF(fmt), .synarg = "csv|jsonl|prom",
	  .help = "csv (default), jsonl or prom" },
	{ 'H', "no-header", NULL, .kind = RM_CLI_FALSE, .off = OFF(header),
	  .help = "no CSV header line" },
	{ 'o', "output", "FILE", .kind = RM_CLI_STRING, .off = OFF(output),
	  .help = "append rows to FILE (the header only when it is empty);\n"
		  "rows a full or failing filesystem refuses are counted,\n"
		  "sampling goes on, and the count is reported at the end" },
	{ O_DISK, "disk-path", "PATH", .kind = RM_CLI_STRING, .off = OFF(disk_path),
	  .help = "filesystem for disk_avail_gb, disk_pct (default /)" },
	{ O_STAGEFILE, "stage-file", "FILE", .kind = RM_CLI_STRING, .off = OFF(stage_file),
	  .help = "stage = first line of FILE, trimmed" },
	{ O_LOGDIR, "stage-log-dir", "DIR", .kind = RM_CLI_STRING, .off = OFF(log_dir),
	  .help = "stage = newest *.log in DIR (without .log) unless\n"
		  "--stage-file has one; context = its last non-empty line" },
	{ O_CTX, "context-match", "ERE",
	  .help = "context = the last line matching ERE instead" },
	{ O_COMP, "compilers", "LIST",
	  .help = "comma-separated names counted in compilers (default:\n"
		  "gcc's cc1*, clang, rustc, LTO and the linkers, as\n"
		  "rm-tree --compilers lists them)" },
	{ O_ENERGY, "energy", NULL, .kind = RM_CLI_TRUE, .off = OFF(energy),
	  .help = "add pkg_w: CPU package watts over the last interval" },
	{ O_GPU, "gpu", NULL, .kind = RM_CLI_TRUE, .off = OFF(gpu),
	  .help = "add gpu_busy_pct (max over cards), gpu_vram_used_mb\n"
		  "and gpu_vram_total_mb (sums over cards)" },
	{ O_PROMFILE, "prom-file", "FILE", .kind = RM_CLI_STRING, .off = OFF(prom_file),
	  .help = "after every row also replace FILE, atomically, with\n"
		  "the row as Prometheus text" },
	{ O_PROMLABEL, "prom-label", "NAME=VALUE",
	  .help = "add this label to every --prom-file sample (repeatable)" },
	{ O_LISTEN, "listen", "ADDR:PORT", .kind = RM_CLI_STRING, .off = OFF(listen),
	  .help = "serve GET /metrics (Prometheus), /usage?pid=N (JSON)\n"
		  "and /healthz; \":PORT\" is 127.0.0.1, \"[::1]:PORT\" IPv6,\n"
		  "other addresses written out; port 0 picks a free one" },
	{ O_MINAGE, "min-age", "SEC",
	  .help = "without -i, a scrape reuses a sample younger than SEC\n"
		  "(default 1; 0: every scrape takes a sample)" },
	{ O_EXPOSE, "expose-cmdline", NULL, .kind = RM_CLI_TRUE, .off = OFF(expose_cmd),
	  .help = "/usage shows command lines even when the address is\n"
		  "not a loopback one" },
	{ O_CGPATH, "cgroup-path", "PATH|auto",
	  .help = "add cg_mem_used_mb, cg_mem_limit_mb, cg_mem_avail_mb,\n"
		  "cg_swap_used_mb, cg_oom_kills, cg_psi_mem_full of this\n"
		  "memory cgroup (auto: --watch-pid's, else our own), and\n"
		  "cores (affinity capped by CPU quotas)" },
	{ O_STATUS, "status", "FILE", .kind = RM_CLI_STRING, .off = OFF(status_file),
	  .help = "keep FILE (replaced atomically) saying rows_written,\n"
		  "rows_lost, first_lost, gaps, stage_fallback and\n"
		  "final=1 at a clean end" },
	{ O_SEED, "seed-columns", NULL, .kind = RM_CLI_TRUE, .off = OFF(seed_cols),
	  .help = "only the seed monitor's 14 columns, in its formats:\n"
		  "whole numbers (epoch in seconds, ISO time without a\n"
		  "fraction), load1 with 2 decimals, context quoted" },
	{ O_CHECK, "check", NULL, .kind = RM_CLI_TRUE, .off = OFF(check),
	  .help = "check every option and the files, then exit 0" },
	RM_CLI_END,
};

static const struct rm_cli cli = {
	prog,
	(const char *const[]){
		"[-H] [-i] [-n] [--watch-pid]... [-f]\n"
		"[-o] [--disk-path] [--stage-file] [--stage-log-dir]\n"
		"[--context-match] [--compilers] [--energy] [--gpu]\n"
		"[--prom-file] [--prom-label] [--status] [--check]\n"
		"[--listen [--min-age] [--expose-cmdline]]\n"
		"[--cgroup-path] [--seed-columns]",
		NULL,
	},
	"Print one system-wide row: load, CPU, memory, swap, disk, live compilers,\n"
	"build stage and log context, OOM kills and pressure.  With -i, a row\n"
	"every SEC seconds.",
	options,
	NULL,
};

/*
 * Where rows go: stdout, or with -o a file whose write failures are
 * counted rather than fatal, so a full disk costs rows, not the monitor.
 */
static int out_fd = STDOUT_FILENO;
static int header_pending;
static long rows_lost;
static double lost_from;        /* epoch of the first row lost */
static int lost_errno;

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

/* --listen (defined before main): the HTTP server beside the stream. */
static void serve_check_args(struct opts *o);
static void serve_keep(const struct rm_val *v);

static void split_names(struct opts *o, const char *list)
{
	char *p, *tok, *save = NULL;

	free(o->names_store);
	o->names_store = strdup(list);
	if (!o->names_store)
		errx(RM_EXIT_FAIL, "out of memory");
	o->nnames = 0;
	for (p = o->names_store; (tok = strtok_r(p, ",", &save)) != NULL; p = NULL) {
		if (o->nnames == MAX_NAMES)
			rm_cli_usage_error(&cli, "too many names in --compilers (at most %d)", MAX_NAMES);
		o->names[o->nnames++] = tok;
	}
	if (o->nnames == 0)
		rm_cli_usage_error(&cli, "empty --compilers list");
}

/* NAME=VALUE, NAME a Prometheus label name, added to o->prom_labels. */
static void add_prom_label(struct opts *o, const char *arg)
{
	const char *eq = strchr(arg, '=');
	char clean[RM_TEXT_MAX + 1];
	size_t n = eq ? (size_t)(eq - arg) : 0;
	int ok = n > 0 && !(arg[0] >= '0' && arg[0] <= '9') && strncmp(arg, "__", 2) != 0;

	for (size_t i = 0; ok && i < n; i++)
		ok = (arg[i] >= 'a' && arg[i] <= 'z') || (arg[i] >= 'A' && arg[i] <= 'Z') ||
		     (arg[i] >= '0' && arg[i] <= '9') || arg[i] == '_';
	if (!ok || (n == 5 && strncmp(arg, "stage", 5) == 0))
		rm_cli_usage_error(&cli,
				   "invalid --prom-label '%s': NAME=VALUE, NAME a label name other than stage", arg);
	if (o->prom_labels.len)
		rm_buf_addc(&o->prom_labels, ',');
	rm_buf_add(&o->prom_labels, arg, n);
	rm_buf_addc(&o->prom_labels, '=');
	rm_sanitize(eq + 1, strlen(eq + 1), clean, sizeof(clean));
	rm_buf_prom_label(&o->prom_labels, clean);
}

static void parse_args(int argc, char **argv, struct opts *o)
{
	int c, rc;

	memset(o, 0, sizeof(*o));
	o->header = 1;
	o->disk_path = "/";
	o->min_age = -1;   /* 1 unless given: see serve_check_args */
	split_names(o, DEFAULT_COMPILERS);
	/* The table stores the plain options; the rest are here. */
	while ((c = rm_cli_next(&cli, 0, argc, argv, o)) != -1) {
		switch (c) {
		case O_WATCH:
			/* Given more than once: the stream ends when any ends. */
			if (o->nwatch == RM_TICK_WATCH_MAX)
				rm_cli_usage_error(&cli, "at most %d --watch-pid", RM_TICK_WATCH_MAX);
			rm_cli_value(&cli, RM_CLI_WATCH_PID, optarg, &o->watch[o->nwatch++]);
			o->watch_pid = o->watch[0];
			break;
		case O_CTX:
			if (o->has_re)
				regfree(&o->ctx_re);
			rc = regcomp(&o->ctx_re, optarg, REG_EXTENDED | REG_NOSUB);
			if (rc != 0) {
				char msg[256];
				regerror(rc, &o->ctx_re, msg, sizeof(msg));
				rm_cli_usage_error(&cli, "invalid --context-match '%s': %s", optarg, msg);
			}
			o->has_re = 1;
			break;
		case O_COMP:
			split_names(o, optarg);
			break;
		case O_PROMLABEL:
			add_prom_label(o, optarg);
			break;
		case O_MINAGE:
			if (rm_parse_duration(optarg, 0, 86400, &o->min_age) < 0)
				rm_cli_usage_error(&cli, "invalid --min-age '%s': seconds, 0 to 86400", optarg);
			break;
		case O_CGPATH:
			if (!optarg[0])
				rm_cli_usage_error(&cli, "empty --cgroup-path");
			o->cgroup_path = optarg;
			break;
		}
	}
	if (optind < argc)
		rm_cli_usage_error(&cli, "unexpected argument '%s'", argv[optind]);
	if (o->count && !o->interval)
		o->interval = 1;
	serve_check_args(o);
	if (o->seed_cols && (o->fmt != RM_FMT_CSV || o->energy || o->gpu || o->cgroup_path))
		rm_cli_usage_error(&cli, "--seed-columns writes the seed's 14 CSV columns: "
				   "not with -f, --energy, --gpu or --cgroup-path");
	if (o->watch_pid && !o->interval && !o->listen)
		rm_cli_usage_error(&cli, "--watch-pid needs -i SEC");
	if (o->prom_file && !o->prom_file[0])
		rm_cli_usage_error(&cli, "empty --prom-file");
	if (o->output && o->prom_file && rm_out_same_path(o->output, o->prom_file))
		rm_cli_usage_error(&cli, "'%s' is named for two outputs", o->output);
	if (o->status_file && ((o->output && rm_out_same_path(o->output, o->status_file)) ||
			       (o->prom_file && rm_out_same_path(o->prom_file, o->status_file))))
		rm_cli_usage_error(&cli, "'%s' is named for two outputs", o->status_file);
}

/*
 * --status FILE: what the monitor needs to know of this run, replaced
 * atomically (temporary file beside it + rename) whenever it changes.
 */
static long rows_written, gaps;
static double gap_max;
static long stage_fallback;     /* rows staged by the log: no stage file */

static void status_write(const struct opts *o, int final)
{
	static int told;
	char tmp[4200], iso[40] = "", line[512];
	const char *slash;
	struct rm_buf b = { 0 };
	int fd;

	if (!o->status_file)
		return;
	slash = strrchr(o->status_file, '/');
	if (slash)
		snprintf(tmp, sizeof(tmp), "%.*s/.%s.XXXXXX", (int)(slash - o->status_file),
			 o->status_file, slash + 1);
	else
		snprintf(tmp, sizeof(tmp), ".%s.XXXXXX", o->status_file);
	if (rows_lost)
		rm_fmt_iso(lost_from, iso, sizeof(iso));
	snprintf(line, sizeof(line),
		 "rows_written=%ld\nrows_lost=%ld\nfirst_lost=%s\nlost_error=%s\n"
		 "gaps=%ld\nlongest_gap_s=", rows_written, rows_lost, iso,
		 rows_lost ? strerror(lost_errno) : "", gaps);
	rm_buf_adds(&b, line);
	if (gaps)
		rm_buf_num(&b, gap_max, 3);
	rm_buf_addf(&b, "\nstage_fallback=%ld\nfinal=%d\n", stage_fallback, final);
	fd = mkstemp(tmp);
	if (fd < 0 || fchmod(fd, 0644) < 0 || rm_buf_write(fd, &b) < 0 || close(fd) < 0 ||
	    rename(tmp, o->status_file) < 0) {
		if (fd >= 0)
			unlink(tmp);
		if (!told++)
			warn("cannot write --status '%s'", o->status_file);
	}
	rm_buf_free(&b);
}

/* The directory of --prom-file must be one we can write, from the start. */
static void check_prom_dir(const struct opts *o)
{
	char dir[4096];
	const char *slash = strrchr(o->prom_file, '/');
	struct stat st;

	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == o->prom_file)
		snprintf(dir, sizeof(dir), "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - o->prom_file), o->prom_file);
	if (stat(dir, &st) < 0 || (!S_ISDIR(st.st_mode) && (errno = ENOTDIR)) ||
	    access(dir, W_OK | X_OK) < 0)
		err(RM_EXIT_FAIL, "cannot write --prom-file '%s'", o->prom_file);
}

/* A write failure that costs rows but not the stream (only with -o). */
static int lost_is_tolerable(int e)
{
	return e == ENOSPC || e == EDQUOT || e == EFBIG || e == EIO;
}

/* Write b to the output; with -o, count what the filesystem refuses. */
static void out_write(struct rm_buf *b, double epoch)
{
	if (out_fd == STDOUT_FILENO) {
		rm_out(b);
		rows_written++;
		return;
	}
	if (rm_buf_write(out_fd, b) == 0) {
		rows_written++;
	} else {
		if (!lost_is_tolerable(errno))
			err(RM_EXIT_FAIL, "cannot write to output");
		if (rows_lost++ == 0) {
			lost_from = epoch;
			lost_errno = errno;
		}
	}
	rm_buf_reset(b);
}

/*
 * Replace the Prometheus file with this row: a new temporary file beside
 * it (O_EXCL through mkstemp), then rename(2), so a scraper reads the old
 * file or the new one, never half of one.  A failure skips this tick.
 */
static void prom_file_write(const struct opts *o, const struct rm_val *v)
{
	static struct rm_buf pb;
	char tmp[4096];
	const char *slash = strrchr(o->prom_file, '/');
	int fd;

	if (slash)
		snprintf(tmp, sizeof(tmp), "%.*s/.%s.XXXXXX", (int)(slash - o->prom_file),
			 o->prom_file, slash + 1);
	else
		snprintf(tmp, sizeof(tmp), ".%s.XXXXXX", o->prom_file);
	rm_buf_reset(&pb);
	rm_emit_prom(&pb, ocols, v, nout, 1, o->prom_labels.len ? o->prom_labels.p : NULL);
	fd = mkstemp(tmp);
	if (fd < 0)
		return;
	if (fchmod(fd, 0644) < 0 || rm_buf_write(fd, &pb) < 0 || close(fd) < 0 ||
	    rename(tmp, o->prom_file) < 0) {
		unlink(tmp);
		return;
	}
}

/* Stage and context: what the build is doing now. */
static void read_stage(const struct opts *o, struct state *s)
{
	char stage[RM_TEXT_MAX + 1] = "", skipped[256];
	static int told_skip, told_link;
	int have_log = 0, file_rc;

	if (o->log_dir) {
		static struct rm_logwatch lw = { .ifd = -1 };
		have_log = rm_logwatch_newest(&lw, o->log_dir, s->log_path, sizeof(s->log_path),
					      stage, sizeof(stage), skipped, sizeof(skipped),
					      &s->log_owner) == 0;
		if (skipped[0] && !told_skip++) {
			char txt[RM_TEXT_MAX + 1];
			rm_sanitize(skipped, strlen(skipped), txt, sizeof(txt));
			warnx("--stage-log-dir: skipping '%s': owned by neither this "
			      "user nor the directory's owner", txt);
		}
	}
	file_rc = o->stage_file ? rm_first_line(o->stage_file, s->stage, sizeof(s->stage)) : 0;
	if (file_rc < 0 && errno == ELOOP && !told_link++)
		warnx("--stage-file '%s': %s", o->stage_file, RM_OUT_SYMLINK_WHY);
	if (file_rc <= 0) {
		/* No stage file, or it is missing or empty: the newest log's
		 * name, counted for the summary's note (--status). */
		s->stage[0] = '\0';
		if (have_log) {
			rm_sanitize(stage, strlen(stage), s->stage, sizeof(s->stage));
			rm_trim_space(s->stage);
			if (o->stage_file && s->stage[0])
				stage_fallback++;
		}
	}
	if (have_log) {
		/* No match in the tail keeps the previous context. */
		char ctx[RM_TEXT_MAX + 1];
		if (rm_log_last_line(s->log_path, s->log_owner, o->has_re ? &o->ctx_re : NULL, ctx,
				     sizeof(ctx)) == 1)
			memcpy(s->context, ctx, sizeof(ctx));
	}
}

static void close_extras(void)
{
	rm_rapl_close(&rapl);
	rm_gpu_close(&gpus);
}

/* --cgroup-path: the cgroup found once; its columns stay empty if none. */
static void open_cgroup(const struct opts *o)
{
	char why[256];
	int aut = strcmp(o->cgroup_path, "auto") == 0;

	if (rm_cg_open(&cgrp, aut ? o->watch_pid : 0, aut ? NULL : o->cgroup_path, why, sizeof(why)) < 0)
		warnx("cg_* columns stay empty: %s", why);
	cg_cores = rm_cg_cores(o->watch_pid);
}

static void sample_cgroup(struct rm_val *v)
{
	struct rm_cg_reading r;

	v[C_CORES] = rm_num(cg_cores, 0);
	rm_cg_read(&cgrp, &r);
	if (r.has & RM_CG_USED)
		v[C_CG_USED] = rm_num((double)r.used / 1048576.0, 0);
	if (r.has & RM_CG_LIMIT)
		v[C_CG_LIMIT] = rm_num((double)r.limit / 1048576.0, 0);
	if (r.has & RM_CG_AVAIL)
		v[C_CG_AVAIL] = rm_num((double)r.avail / 1048576.0, 0);
	if (r.has & RM_CG_SWAP)
		v[C_CG_SWAP] = rm_num((double)r.swap / 1048576.0, 0);
	if (r.has & RM_CG_OOM)
		v[C_CG_OOM] = rm_num((double)r.oom_kills, 0);
	if (r.has & RM_CG_PSI_FULL)
		v[C_CG_PSI_FULL] = rm_num(r.psi_full10, 2);
}

/* Pick the printed columns, open RAPL and the GPUs if asked, and read the
 * energy baselines with the CPU's, so the first row has watts too. */
static void open_extras(const struct opts *o)
{
	struct rm_rapl_step st;

	for (int i = 0; i < C_NCOLS; i++) {
		if ((i == C_PKG_W && !o->energy) || (i > C_PKG_W && i <= C_GPU_VRAM_TOTAL && !o->gpu) ||
		    (i >= C_CG_USED && !o->cgroup_path) || (o->seed_cols && i > C_CONTEXT))
			continue;
		ocols[nout] = cols[i];
		osel[nout++] = i;
	}
	atexit(close_extras);
	if (o->energy && rm_rapl_open(&rapl) > 0) {
		if (rm_rapl_sample(&rapl, &st) == 0)
			pkg_prev = st.mono;
		else
			warnx("pkg_w stays empty: energy_uj is root-only since "
			      "Linux 5.10 (see rm-energy(1))");
	}
	if (o->gpu)
		rm_gpu_open(&gpus);
	if (o->cgroup_path)
		open_cgroup(o);
}

/* Package watts since the previous reading; empty if any package failed. */
static void sample_energy(struct rm_val *v)
{
	struct rm_rapl_step st;

	if (rapl.n == 0 || rm_rapl_sample(&rapl, &st) < 0)
		return;
	if (st.pkg_ok && pkg_prev > 0 && st.mono > pkg_prev)
		v[C_PKG_W] = rm_num((double)st.pkg_uj / 1e6 / (st.mono - pkg_prev), 2);
	pkg_prev = st.mono;
}

static void sample_gpu(struct rm_val *v)
{
	struct rm_gpu_agg a;

	for (int i = 0; i < gpus.n; i++)
		rm_gpu_read(&gpus, i, RM_GPU_BUSY | RM_GPU_VRAM_USED | RM_GPU_VRAM_TOTAL, &gpu_r[i]);
	rm_gpu_aggregate(gpu_r, gpus.n, &a);
	if (a.has & RM_GPU_BUSY)
		v[C_GPU_BUSY] = rm_num(a.busy_max, 0);
	if (a.has & RM_GPU_VRAM_USED) {
		v[C_GPU_VRAM_USED] = rm_num((double)a.vram_used / 1048576.0, 0);
		v[C_GPU_VRAM_TOTAL] = rm_num((double)a.vram_total / 1048576.0, 0);
	}
}

/*
 * --seed-columns: the seed's formats, as its bash printf wrote them:
 * `date +%s` and `date +%FT%TZ` of the same second, whole numbers cut by
 * integer arithmetic (df -BG rounds the free GiB up), load1 as
 * /proc/loadavg has it.
 */
static void seed_values(struct state *s, struct rm_val *v)
{
	static const int cut[] = { C_ELAPSED, C_CPU, C_MEMUSED, C_MEMAVAIL, C_MEMPCT, C_SWAP,
				   C_DISKPCT, C_COMPILERS };
	time_t sec = (time_t)floor(v[C_EPOCH].num);
	struct tm tm;

	v[C_EPOCH] = rm_num((double)sec, 0);
	if (gmtime_r(&sec, &tm) && strftime(s->iso, sizeof(s->iso), "%Y-%m-%dT%H:%M:%SZ", &tm))
		v[C_ISO] = rm_str(s->iso);
	for (size_t i = 0; i < sizeof(cut) / sizeof(cut[0]); i++)
		if (v[cut[i]].type == RM_V_NUM)
			v[cut[i]] = rm_num(floor(v[cut[i]].num), 0);
	if (v[C_DISKAVAIL].type == RM_V_NUM)
		v[C_DISKAVAIL] = rm_num(ceil(v[C_DISKAVAIL].num), 0);
}

/*
 * The compilers column, host-wide: kept from the proc connector's events
 * while streaming where the kernel allows it (lib/pcount), else one
 * /proc scan per row.
 */
static struct rm_pcount compilers_pc;

static long count_compilers(const struct opts *o)
{
	if (!compilers_pc.names)
		rm_pcount_init(&compilers_pc, o->names, o->nnames);
	/* Streaming, or serving (the server's poll drains the events
	 * between scrapes): events.  One row: one scan. */
	return rm_pcount_get(&compilers_pc, o->interval > 0 || o->listen);
}

/* Never lost silently: said once at the end. */
static void compilers_done(void)
{
	if (compilers_pc.lost)
		warnx("%llu times the kernel dropped process events (socket buffer "
		      "full); each was followed by a /proc scan",
		      (unsigned long long)compilers_pc.lost);
	if (getenv("RM_PCOUNT_STATS"))
		warnx("compilers from %s: %llu events, %llu comm reads, %llu scans",
		      rm_pcount_events(&compilers_pc) ? "events" : "scans",
		      (unsigned long long)compilers_pc.events,
		      (unsigned long long)compilers_pc.comm_reads,
		      (unsigned long long)compilers_pc.scans);
	rm_pcount_close(&compilers_pc);
}

static void sample(const struct opts *o, struct state *s, double elapsed,
		   struct rm_val *v)
{
	struct rm_loadavg la;
	struct rm_cputimes ct;
	struct rm_meminfo mi;
	struct rm_disk dk;
	struct rm_psi psi;
	uint64_t oom;
	double epoch = rm_now_epoch();
	double pct;
	long comp;

	for (int i = 0; i < C_NCOLS; i++)
		v[i] = rm_none();
	v[C_EPOCH] = rm_num(epoch, 3);
	rm_fmt_iso(epoch, s->iso, sizeof(s->iso));
	v[C_ISO] = rm_str(s->iso);
	v[C_ELAPSED] = rm_num(elapsed, 3);
	/* At elapsed_s, before the /proc scan, so watts match its times. */
	if (o->energy)
		sample_energy(v);

	if (rm_loadavg_read(&la) == 0)
		v[C_LOAD1] = rm_num(la.load1, 2);
	rm_cputimes_read(&ct);
	pct = rm_cputimes_pct(&s->cpu_prev, &ct);
	if (pct >= 0)
		v[C_CPU] = rm_num(pct, 1);
	s->cpu_prev = ct;

	if (rm_meminfo_read(&mi) == 0) {
		if (mi.has & RM_MI_AVAIL) {
			uint64_t used = mi.total_kib > mi.avail_kib ? mi.total_kib - mi.avail_kib : 0;
			v[C_MEMUSED] = rm_num((double)used / 1024.0, 0);
			v[C_MEMAVAIL] = rm_num((double)mi.avail_kib / 1024.0, 0);
			if (mi.total_kib)
				v[C_MEMPCT] = rm_num(100.0 * (double)used / (double)mi.total_kib, 1);
		}
		if ((mi.has & RM_MI_SWAPTOTAL) && (mi.has & RM_MI_SWAPFREE)) {
			uint64_t su = mi.swap_total_kib > mi.swap_free_kib ? mi.swap_total_kib - mi.swap_free_kib : 0;
			v[C_SWAP] = rm_num((double)su / 1024.0, 0);
		}
	}
	if (rm_disk_read(o->disk_path, &dk) == 0) {
		v[C_DISKAVAIL] = rm_num((double)dk.avail_bytes / GIB, 2);
		v[C_DISKPCT] = rm_num(dk.used_pct, 0);
	}
	comp = count_compilers(o);
	if (comp >= 0)
		v[C_COMPILERS] = rm_num((double)comp, 0);

	read_stage(o, s);
	v[C_STAGE] = rm_str(s->stage);
	v[C_CONTEXT] = rm_str(s->context);

	if (s->oom_known && rm_vmstat_oom_read(&oom) == 0)
		v[C_OOM] = rm_num((double)(oom >= s->oom_base ? oom - s->oom_base : 0), 0);
	if (rm_psi_read("memory", &psi) == 0) {
		if (psi.has_some)
			v[C_PSI_MEM_SOME] = rm_num(psi.some10, 2);
		if (psi.has_full)
			v[C_PSI_MEM_FULL] = rm_num(psi.full10, 2);
	}
	if (rm_psi_read("io", &psi) == 0 && psi.has_full)
		v[C_PSI_IO_FULL] = rm_num(psi.full10, 2);
	if (rm_psi_read("cpu", &psi) == 0 && psi.has_some)
		v[C_PSI_CPU_SOME] = rm_num(psi.some10, 2);
	if (o->gpu)
		sample_gpu(v);
	if (o->cgroup_path)
		sample_cgroup(v);
	if (o->seed_cols)
		seed_values(s, v);
}

static void emit(const struct opts *o, struct rm_buf *b, const struct rm_val *all)
{
	struct rm_val v[C_NCOLS];

	for (int i = 0; i < nout; i++)
		v[i] = all[osel[i]];
	if (header_pending) {
		/* A header the disk refused is tried again before the next row. */
		rm_emit_csv_header(b, ocols, nout);
		if (rm_buf_write(out_fd, b) == 0)
			header_pending = 0;
		rm_buf_reset(b);
		if (header_pending) {
			if (rows_lost++ == 0) {
				lost_from = all[C_EPOCH].num;
				lost_errno = errno;
			}
			status_write(o, 0);
			return;
		}
	}
	switch (o->fmt) {
	case RM_FMT_CSV:
		if (o->seed_cols) {
			/* The seed quoted its context always: "%s" with "" inside. */
			rm_emit_csv_row(b, ocols, v, nout - 1);
			b->len--;
			rm_buf_adds(b, ",\"");
			for (const char *p = v[nout - 1].str; p && *p; p++) {
				if (*p == '"')
					rm_buf_addc(b, '"');
				rm_buf_addc(b, *p);
			}
			rm_buf_adds(b, "\"\n");
		} else {
			rm_emit_csv_row(b, ocols, v, nout);
		}
		break;
	case RM_FMT_JSONL:
		rm_emit_jsonl(b, ocols, v, nout);
		break;
	case RM_FMT_PROM:
		rm_emit_prom(b, ocols, v, nout, 1, NULL);
		break;
	}
	out_write(b, all[C_EPOCH].num);
	status_write(o, 0);
	if (o->prom_file)
		prom_file_write(o, v);
	serve_keep(v);
}

/*
 * An existing, non-empty -o file must hold what we would write: our CSV
 * header, JSON lines, or Prometheus text; rows of another shape appended
 * to it would make a file no reader takes.
 */
static void check_append(const struct opts *o, int fd)
{
	char first[8192], self[64];
	struct rm_buf h = { 0 };
	ssize_t n;
	char *nl;
	int ok, rfd;

	/* fd is write-only: read the same file through /proc/self/fd. */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	rfd = open(self, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (rfd < 0)
		return;
	n = pread(rfd, first, sizeof(first) - 1, 0);
	close(rfd);
	if (n <= 0)
		return;
	first[n] = '\0';
	nl = strchr(first, '\n');
	if (nl)
		*nl = '\0';
	if (o->fmt == RM_FMT_CSV) {
		rm_emit_csv_header(&h, ocols, nout);
		ok = h.len > 0 && strlen(first) == h.len - 1 && memcmp(first, h.p, h.len - 1) == 0;
		if (!o->header)
			ok = first[0] != '{' && first[0] != '#' && strncmp(first, "epoch,", 6) != 0;
		rm_buf_free(&h);
	} else if (o->fmt == RM_FMT_JSONL) {
		ok = first[0] == '{';
	} else {
		ok = first[0] == '#';
	}
	if (!ok)
		errx(RM_EXIT_FAIL, "cannot append to '%s': it holds another format or other columns",
		     o->output);
}

/* -o FILE: append, never through a symlink; the header only when empty.
 * /dev/stdout and the like are the descriptors we were given.  Created
 * with the umask, and never readable by others when we are root. */
static void open_output(const struct opts *o, int create)
{
	struct stat st;
	int fd;

	if (!o->output)
		return;
	fd = rm_out_inherited_fd(o->output);
	if (fd >= 0) {
		out_fd = fd;
		return;
	}
	out_fd = open(o->output, O_WRONLY | (create ? O_CREAT : 0) | O_APPEND | O_NOFOLLOW |
		      O_CLOEXEC | O_NOCTTY, geteuid() == 0 ? 0640 : 0666);
	if (out_fd < 0 && !create && errno == ENOENT)
		return;
	if (out_fd < 0 && errno == ELOOP)
		errx(RM_EXIT_FAIL, "cannot open '%s': %s", o->output, RM_OUT_SYMLINK_WHY);
	if (out_fd < 0)
		err(RM_EXIT_FAIL, "cannot open '%s'", o->output);
	if (fstat(out_fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
		check_append(o, out_fd);
		header_pending = -1;
	}
}

/* The rows -o could not write, said once at the end; the exit status. */
static int report_lost(const struct opts *o)
{
	char iso[40];

	if (out_fd != STDOUT_FILENO && close(out_fd) < 0 && !lost_is_tolerable(errno)) {
		warn("cannot write to '%s'", o->output);
		return RM_EXIT_FAIL;
	}
	if (!rows_lost)
		return RM_EXIT_OK;
	if (o->status_file)
		return RM_EXIT_FAIL;   /* the count is in the status file */
	rm_fmt_iso(lost_from, iso, sizeof(iso));
	errno = lost_errno;
	warn("%ld rows lost from %s: cannot write to '%s'", rows_lost, iso, o->output);
	return RM_EXIT_FAIL;
}

/*
 * --listen: GET /metrics, /usage and /healthz served from the same poll
 * as the ticks (lib/httpd inside lib/tick's wait), so one thread answers
 * every client and one sample is shared by all of them.  /metrics is
 * the last tick's row with -i; without -i it is a sample younger than
 * --min-age, or one taken at once (the clients that arrive meanwhile
 * wait in the socket's queue and then share it).  /usage needs a CPU
 * window: its first readings are taken, the answer is made when the
 * window has passed, and requests for the same PIDs in between wait for
 * that one sample instead of starting their own.
 */
#define USAGE_WINDOW 0.5
#define USAGE_SLOTS 8
#define USAGE_MAX_PIDS 64

struct usage_slot {
	char key[USAGE_MAX_PIDS * 8];   /* sorted PIDs, "" = free */
	int pending;
	double end_at, done_at;         /* monotonic */
	struct rm_usage u;
	struct rm_buf json;
	uint64_t waiters[RM_HTTPD_MAX_CONN];
	int nwait;
};

static struct serve {
	struct rm_httpd h;
	int on;
	const struct opts *o;
	struct state *s;
	struct rm_tick *t;
	struct rm_buf prom;
	double prom_at;                 /* monotonic; 0: none yet */
	int with_cmd;
	struct usage_slot slot[USAGE_SLOTS];
} srv;

static void serve_check_args(struct opts *o)
{
	struct sockaddr_storage ss;
	unsigned len;
	int loop;

	if (o->listen && rm_http_addr_parse(o->listen, &ss, &len, &loop) < 0)
		rm_cli_usage_error(&cli,
				   "invalid --listen '%s': ADDR:PORT, :PORT or [IPV6]:PORT", o->listen);
	if (!o->listen && (o->min_age >= 0 || o->expose_cmd))
		rm_cli_usage_error(&cli, "%s needs --listen",
				   o->expose_cmd ? "--expose-cmdline" : "--min-age");
	if (o->min_age < 0)
		o->min_age = 1;
}

/* The row just sampled, as Prometheus text, for /metrics. */
static void serve_keep(const struct rm_val *v)
{
	if (!srv.on)
		return;
	rm_buf_reset(&srv.prom);
	rm_emit_prom(&srv.prom, ocols, v, nout, 1, NULL);
	srv.prom_at = rm_now_mono();
}

static void serve_metrics(uint64_t tk)
{
	double now = rm_now_mono();

	if (!srv.o->interval && (!srv.prom_at || now - srv.prom_at >= srv.o->min_age)) {
		struct rm_val all[C_NCOLS], v[C_NCOLS];
		sample(srv.o, srv.s, rm_tick_elapsed(srv.t), all);
		for (int i = 0; i < nout; i++)
			v[i] = all[osel[i]];
		serve_keep(v);
	}
	if (!srv.prom_at) {
		rm_httpd_reply(&srv.h, tk, 503, NULL, "no sample yet\n", 14);
		return;
	}
	rm_httpd_reply(&srv.h, tk, 200, "text/plain; version=0.0.4; charset=utf-8",
		       srv.prom.p, srv.prom.len);
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

static void usage_rearm(void)
{
	srv.h.wake_at = 0;
	for (int i = 0; i < USAGE_SLOTS; i++)
		if (srv.slot[i].pending && (!srv.h.wake_at || srv.slot[i].end_at < srv.h.wake_at))
			srv.h.wake_at = srv.slot[i].end_at;
}

/* Windows that have passed: make their answers and send them. */
static void usage_wake(void *arg, struct rm_httpd *h, double now)
{
	(void)arg;
	for (int i = 0; i < USAGE_SLOTS; i++) {
		struct usage_slot *u = &srv.slot[i];
		if (!u->pending || now < u->end_at)
			continue;
		rm_buf_reset(&u->json);
		rm_usage_end(&u->u, prog, USAGE_WINDOW, &u->json);
		u->pending = 0;
		u->done_at = rm_now_mono();
		for (int k = 0; k < u->nwait; k++)
			rm_httpd_reply(h, u->waiters[k], 200, "application/json", u->json.p, u->json.len);
		u->nwait = 0;
	}
	usage_rearm();
}

static int serve_usage(uint64_t tk, const char *query)
{
	int pids[USAGE_MAX_PIDS], n = 0;
	char val[32], key[sizeof(srv.slot[0].key)];
	size_t pos = 0, kl = 0;
	struct usage_slot *u = NULL, *old = NULL;
	double now = rm_now_mono();

	while (rm_http_query_next(query, &pos, "pid", val, sizeof(val))) {
		pid_t p;
		if (rm_parse_pid(val, &p) < 0) {
			char msg[96];
			int len = snprintf(msg, sizeof(msg), "invalid parameter pid: '%.32s'\n", val);
			return rm_httpd_reply(&srv.h, tk, 400, NULL, msg, (size_t)len), 0;
		}
		if (n == USAGE_MAX_PIDS)
			return rm_httpd_reply(&srv.h, tk, 400, NULL, "too many pid parameters (at most 64)\n", 37), 0;
		pids[n++] = (int)p;
	}
	if (!n && srv.o->watch_pid > 0)
		pids[n++] = (int)srv.o->watch_pid;
	if (!n)
		return rm_httpd_reply(&srv.h, tk, 400, NULL, "missing parameter: pid\n", 23), 0;
	qsort(pids, (size_t)n, sizeof(int), cmp_int);
	for (int i = 0; i < n; i++)
		if (!i || pids[i] != pids[i - 1])
			kl += (size_t)snprintf(key + kl, sizeof(key) - kl, "%s%d", kl ? "," : "", pids[i]);
	for (int i = 0; i < USAGE_SLOTS; i++) {
		struct usage_slot *c = &srv.slot[i];
		if (c->key[0] && strcmp(c->key, key) == 0)
			u = c;
		else if (!c->pending && (!old || c->done_at < old->done_at))
			old = c;
	}
	if (u && !u->pending && now - u->done_at < srv.o->min_age)
		return rm_httpd_reply(&srv.h, tk, 200, "application/json", u->json.p, u->json.len), 0;
	if (!u || (!u->pending && !old))
		u = u ? u : old;
	if (!u)
		return rm_httpd_reply(&srv.h, tk, 503, NULL, "busy: too many samples under way\n", 33), 0;
	if (!u->pending) {
		memcpy(u->key, key, kl + 1);
		if (rm_usage_begin(&u->u, pids, n, srv.with_cmd) < 0) {
			rm_usage_free(&u->u);
			u->key[0] = '\0';
			return rm_httpd_reply(&srv.h, tk, 500, NULL, "cannot read the processes\n", 26), 0;
		}
		u->u.gpus = &gpus;      /* opened once, in serve_start */
		u->pending = 1;
		u->end_at = u->u.t0 + USAGE_WINDOW;
		u->nwait = 0;
		usage_rearm();
	}
	if (u->nwait == RM_HTTPD_MAX_CONN) {
		/* Forget the waiters whose connections were closed meanwhile. */
		int k = 0;
		for (int i = 0; i < u->nwait; i++)
			if (rm_httpd_ticket_live(&srv.h, u->waiters[i]))
				u->waiters[k++] = u->waiters[i];
		u->nwait = k;
	}
	if (u->nwait == RM_HTTPD_MAX_CONN)
		return rm_httpd_reply(&srv.h, tk, 503, NULL, "busy: too many waiting\n", 23), 0;
	u->waiters[u->nwait++] = tk;
	return RM_HTTPD_LATER;
}

static int serve_request(void *arg, struct rm_httpd *h, uint64_t tk, const struct rm_http_req *req)
{
	const char *p = req->path;
	int known = !strcmp(p, "/metrics") || !strcmp(p, "/usage") || !strcmp(p, "/bankml/usage") ||
		    !strcmp(p, "/healthz");

	(void)arg;
	if (!known)
		return rm_httpd_reply(h, tk, 404, NULL, "not found\n", 10), 0;
	if (req->method != RM_HTTP_GET)
		return rm_httpd_reply_hdr(h, tk, 405, NULL, "Allow: GET\r\n", "method not allowed\n", 19), 0;
	if (!strcmp(p, "/metrics"))
		serve_metrics(tk);
	else if (!strcmp(p, "/healthz"))
		rm_httpd_reply(h, tk, 200, NULL, "ok\n", 3);
	else
		return serve_usage(tk, req->query);
	return 0;
}

/* The server's descriptors, and the compilers count's event socket, so
 * that its events are read as they come, not only when a scrape asks. */
static int serve_hook_fds(void *arg, struct pollfd *p, int max, double *timeout)
{
	int n;

	(void)arg;
	if (max < 2 || compilers_pc.fd < 0)
		return rm_httpd_fds(&srv.h, p, max, timeout);
	n = rm_httpd_fds(&srv.h, p, max - 1, timeout);
	p[n].fd = compilers_pc.fd;
	p[n].events = POLLIN;
	p[n].revents = 0;
	return n + 1;
}

static void serve_hook_ready(void *arg, const struct pollfd *p, int n)
{
	(void)arg;
	if (n > 0 && compilers_pc.fd >= 0 && p[n - 1].fd == compilers_pc.fd) {
		if (p[n - 1].revents)
			(void)rm_pcount_get(&compilers_pc, 1);
		n--;
	}
	rm_httpd_ready(&srv.h, p, n);
}

/* Listen and hook the server into the tick's wait; exits on failure. */
static int serve_start(const struct opts *o, struct state *s, struct rm_tick *t)
{
	struct sockaddr_storage ss;
	unsigned len;
	int loop = 0;
	char name[80];

	rm_http_addr_parse(o->listen, &ss, &len, &loop);
	if (rm_httpd_open(&srv.h, o->listen, serve_request, NULL) < 0)
		err(RM_EXIT_FAIL, "cannot listen on '%s'", o->listen);
	srv.on = 1;
	srv.o = o;
	srv.s = s;
	srv.t = t;
	srv.with_cmd = loop || o->expose_cmd;
	srv.h.on_wake = usage_wake;
	/* /usage's gpus: NVML comes up once, not per answer. */
	if (!o->gpu)
		rm_gpu_open(&gpus);
	(void)count_compilers(o);  /* the event socket, before the first scrape */
	t->hook_fds = serve_hook_fds;
	t->hook_ready = serve_hook_ready;
	t->hook_arg = &srv;
	if (rm_httpd_name(&srv.h, name, sizeof(name)) == 0)
		warnx("listening on %s", name);
	return 1;
}

static void serve_stop(void)
{
	if (!srv.on)
		return;
	rm_httpd_close(&srv.h);
	for (int i = 0; i < USAGE_SLOTS; i++) {
		if (srv.slot[i].pending)
			rm_usage_free(&srv.slot[i].u);
		rm_buf_free(&srv.slot[i].json);
	}
	rm_buf_free(&srv.prom);
	srv.on = 0;
}

/* --listen without -i: serve until a signal or the watched PID's end. */
static int serve_only(struct rm_tick *t)
{
	while (rm_tick_sleep_until(t, rm_tick_elapsed(t) + 1e6))
		;
	serve_stop();
	compilers_done();
	return rm_finish_stdout(RM_EXIT_OK);
}


/* Read the disk path, open /proc, set the tick up with its watched
 * PIDs, and open what the options ask for besides the output. */
static void setup(struct opts *o, struct state *s, struct rm_tick *t)
{
	struct rm_disk dk;

	if (rm_disk_read(o->disk_path, &dk) < 0)
		err(RM_EXIT_FAIL, "cannot read disk path '%s'", o->disk_path);
	if (rm_proc_dirfd() < 0)
		err(RM_EXIT_FAIL, "cannot open '%s'", rm_proc_root());
	if (rm_tick_init(t, o->interval, o->interval ? o->count : 1, o->watch_pid) < 0)
		err(RM_EXIT_FAIL, "cannot watch PID %d", (int)o->watch_pid);
	for (int i = 1; i < o->nwatch; i++)
		if (rm_tick_watch(t, o->watch[i]) < 0)
			err(RM_EXIT_FAIL, "cannot watch PID %d", (int)o->watch[i]);
	s->oom_known = rm_vmstat_oom_read(&s->oom_base) == 0;
	if (o->prom_file)
		check_prom_dir(o);
	open_extras(o);
}

/* The CSV header: now on stdout, with the first row in a file, or none
 * when appending to a file that has one. */
static void start_header(const struct opts *o, struct rm_buf *b)
{
	if (o->header && o->fmt == RM_FMT_CSV) {
		if (header_pending < 0) {
			header_pending = 0;   /* appending to a file that has one */
		} else if (out_fd == STDOUT_FILENO) {
			rm_emit_csv_header(b, ocols, nout);
			rm_out(b);
		} else {
			header_pending = 1;   /* written with the first row */
		}
	} else {
		header_pending = 0;
	}
}

/* Every row of the run: one per tick, and the one last row. */
static void sample_loop(struct opts *o, struct state *s, struct rm_tick *t, struct rm_buf *b)
{
	double t0_shift = 0;
	struct rm_val v[C_NCOLS];

	/* The first row's CPU % needs a window: 100 ms, or the interval when
	 * that is shorter.  A watched PID or a signal that ends it still
	 * gets the one row every run writes. */
	if (rm_tick_sleep_until(t, o->interval && o->interval < 0.1 ? o->interval : 0.1)) {
		double prev = -1, el;
		clock_gettime(CLOCK_MONOTONIC, &t->start);
		t0_shift = rm_t0_shift(&t->start); /* RM_T0: the monitor run's elapsed 0 */
		while (rm_tick_next(t)) {
			el = rm_tick_elapsed(t);
			/* A row that comes 3 ticks late (SIGSTOP, a frozen
			 * machine) leaves a gap in the time line: counted. */
			if (prev >= 0 && o->interval && el - prev > 3 * o->interval) {
				gaps++;
				if (el - prev > gap_max)
					gap_max = el - prev;
			}
			prev = el;
			sample(o, s, el + t0_shift, v);
			emit(o, b, v);
		}
	}
	if (t->end == RM_END_PID || (rows_written == 0 && rows_lost == 0)) {
		/* The watched build just ended: one last row records what ended
		 * it (an OOM kill of the orchestrator, say). */
		sample(o, s, rm_tick_elapsed(t) + t0_shift, v);
		emit(o, b, v);
	}
}

/* Stop the server, free what is held, report lost rows and write the
 * final status; returns the exit status. */
static int finish(struct opts *o, struct rm_buf *b)
{
	int rc;

	serve_stop();
	compilers_done();
	rm_buf_free(b);
	rm_buf_free(&o->prom_labels);
	free(o->names_store);
	if (o->has_re)
		regfree(&o->ctx_re);
	rc = rm_finish_stdout(report_lost(o));
	status_write(o, 1);
	return rc;
}

/*
 * Sample the system once, or on every tick of the stream, and print each
 * row whole with one write.
 */
int main(int argc, char **argv)
{
	/* static: what it points to stays reachable on every exit path. */
	static struct opts o;
	struct state s;
	struct rm_tick t;
	struct rm_buf b = { 0 };

	rm_set_prog(prog);
	signal(SIGPIPE, SIG_IGN);
	parse_args(argc, argv, &o);
	memset(&s, 0, sizeof(s));

	setup(&o, &s, &t);
	if (o.check) {
		/* Everything a run would refuse has been refused by now. */
		open_output(&o, 0);
		return RM_EXIT_OK;
	}
	rm_cputimes_read(&s.cpu_prev);

	if (o.listen && serve_start(&o, &s, &t) && !o.interval)
		return serve_only(&t);
	open_output(&o, 1);
	status_write(&o, 0);
	start_header(&o, &b);
	sample_loop(&o, &s, &t, &b);
	return finish(&o, &b);
}
