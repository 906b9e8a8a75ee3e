/*
 * rm-gpu: load, memory, power and temperature of each GPU.
 *
 * Usage and options: the table cli below (rm-gpu --help prints it).
 *
 * Prints a row per GPU: card, driver, busy_pct, vram_used_mb,
 * vram_total_mb, gtt_used_mb, gtt_total_mb, power_w, temp_c.  drm cards
 * (class/drm/cardN) come first, then NVIDIA GPUs read through NVML, named
 * nvidiaN by NVML index; while NVML works the nvidia driver's own drm
 * cards are not listed, so no GPU appears twice.  With -i, the rows again
 * every SEC seconds, each with epoch and elapsed_s after the columns.
 *
 * A reading that fails or is not supported is an empty field.  Exit 1
 * when there is no GPU at all.
 */
#include <err.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpu.h"
#include "procfs.h"
#include "rmtools.h"

static const char prog[] = "rm-gpu";

#define MIB (1024.0 * 1024.0)

enum {
	C_CARD, C_DRIVER, C_BUSY, C_VRAM_USED, C_VRAM_TOTAL, C_GTT_USED, C_GTT_TOTAL,
	C_POWER, C_TEMP, C_EPOCH, C_ELAPSED, C_NCOLS
};

static const struct rm_col cols[C_NCOLS] = {
	{ "card", RM_P_LABEL, "card", NULL, 0 },
	{ "driver", RM_P_LABEL, "driver", NULL, 0 },
	{ "busy_pct", RM_P_GAUGE, "rm_gpu_busy_ratio", "GPU busy (1 = always busy over the driver's window).", 0.01 },
	{ "vram_used_mb", RM_P_GAUGE, "rm_gpu_vram_used_bytes", "VRAM in use.", MIB },
	{ "vram_total_mb", RM_P_GAUGE, "rm_gpu_vram_total_bytes", "VRAM size.", MIB },
	{ "gtt_used_mb", RM_P_GAUGE, "rm_gpu_gtt_used_bytes", "System memory mapped for the GPU (GTT) in use.", MIB },
	{ "gtt_total_mb", RM_P_GAUGE, "rm_gpu_gtt_total_bytes", "GTT size.", MIB },
	{ "power_w", RM_P_GAUGE, "rm_gpu_power_watts", "GPU power draw.", 0 },
	{ "temp_c", RM_P_GAUGE, "rm_gpu_temperature_celsius", "GPU temperature.", 0 },
	/* Streaming only. */
	{ "epoch", RM_P_NONE, NULL, NULL, 0 },
	{ "elapsed_s", RM_P_NONE, NULL, NULL, 0 },
};

struct opts {
	double interval;
	long count;
	pid_t watch_pid;
	enum rm_fmt fmt;
	int header;
};

#define OFF(f) offsetof(struct opts, f)
enum { O_WATCH = RM_CLI_LONG };

static const struct rm_cli_opt options[] = {
	{ 'i', "interval", "SEC", .kind = RM_CLI_INTERVAL, .off = OFF(interval),
	  .help = "seconds between samples (0.001 to 86400)" },
	{ 'n', "count", "COUNT", .kind = RM_CLI_COUNT, .off = OFF(count),
	  .help = "stop after COUNT samples" },
	{ O_WATCH, "watch-pid", "PID", .kind = RM_CLI_WATCH_PID, .off = OFF(watch_pid),
	  .help = "stop as soon as PID ends, after one last row" },
	{ 'f', "format", "FMT", .kind = RM_CLI_FORMAT, .off = OFF(fmt), .synarg = "csv|jsonl|prom",
	  .help = "csv (default), jsonl or prom" },
	{ 'H', "no-header", NULL, .kind = RM_CLI_FALSE, .off = OFF(header),
	  .help = "no CSV header line" },
	RM_CLI_END,
};

static const struct rm_cli cli = {
	prog,
	(const char *const[]){ "[-H] [-i] [-n] [--watch-pid] [-f]", NULL },
	"Print a row per GPU: busy %, VRAM and GTT used and total (MiB), power (W)\n"
	"and temperature (C).  amdgpu from sysfs, NVIDIA through NVML, other\n"
	"drivers as rows without readings.  With -i, the rows every SEC seconds.",
	options,
	NULL,
};

static struct rm_gpus gpus;

static void close_gpus(void)
{
	rm_gpu_close(&gpus);
}

static void parse_args(int argc, char **argv, struct opts *o)
{
	memset(o, 0, sizeof(*o));
	o->header = 1;
	/* Every option is the table's to store. */
	while (rm_cli_next(&cli, 0, argc, argv, o) != -1)
		;
	if (optind < argc)
		rm_cli_usage_error(&cli, "unexpected argument '%s'", argv[optind]);
	if (o->count && !o->interval)
		o->interval = 1;
	if (o->watch_pid && !o->interval)
		rm_cli_usage_error(&cli, "--watch-pid needs -i SEC");
}

/* Fill row's values for card i; epoch and elapsed only when streaming. */
static void sample(int i, double epoch, double elapsed, struct rm_val *v)
{
	const struct rm_gpu_card *c = &gpus.card[i];
	struct rm_gpu_reading r;

	rm_gpu_read(&gpus, i, RM_GPU_ALL, &r);
	for (int k = 0; k < C_NCOLS; k++)
		v[k] = rm_none();
	v[C_CARD] = rm_str(c->card);
	v[C_DRIVER] = rm_str(c->driver);
	if (r.has & RM_GPU_BUSY)
		v[C_BUSY] = rm_num(r.busy_pct, 0);
	if (r.has & RM_GPU_VRAM_USED)
		v[C_VRAM_USED] = rm_num((double)r.vram_used / MIB, 0);
	if (r.has & RM_GPU_VRAM_TOTAL)
		v[C_VRAM_TOTAL] = rm_num((double)r.vram_total / MIB, 0);
	if (r.has & RM_GPU_GTT_USED)
		v[C_GTT_USED] = rm_num((double)r.gtt_used / MIB, 0);
	if (r.has & RM_GPU_GTT_TOTAL)
		v[C_GTT_TOTAL] = rm_num((double)r.gtt_total / MIB, 0);
	if (r.has & RM_GPU_POWER)
		v[C_POWER] = rm_num(r.power_w, 2);
	if (r.has & RM_GPU_TEMP)
		v[C_TEMP] = rm_num(r.temp_c, 1);
	if (epoch > 0) {
		v[C_EPOCH] = rm_num(epoch, 3);
		v[C_ELAPSED] = rm_num(elapsed, 3);
	}
}

/* Every card's row, as one write. */
static void emit(const struct opts *o, struct rm_buf *b, struct rm_val *v, int ncols,
		 double epoch, double elapsed)
{
	for (int i = 0; i < gpus.n; i++)
		sample(i, epoch, elapsed, v + (size_t)i * C_NCOLS);
	for (int i = 0; i < gpus.n && o->fmt != RM_FMT_PROM; i++) {
		/* Rows are laid out C_NCOLS apart; a one-shot row stops early. */
		if (o->fmt == RM_FMT_CSV)
			rm_emit_csv_row(b, cols, v + (size_t)i * C_NCOLS, ncols);
		else
			rm_emit_jsonl(b, cols, v + (size_t)i * C_NCOLS, ncols);
	}
	if (o->fmt == RM_FMT_PROM)
		rm_emit_prom(b, cols, v, C_NCOLS, gpus.n, NULL);
	rm_out(b);
}

/* An NVIDIA GPU may be here: a drm card of the nvidia driver, or the
 * driver's module loaded. */
static int nvidia_seen(void)
{
	char path[4096];

	for (int i = 0; i < gpus.n; i++)
		if (strcmp(gpus.card[i].driver, "nvidia") == 0)
			return 1;
	return rm_pathf(path, sizeof(path), "%s/module/nvidia", rm_sys_root()) == 0 &&
	       access(path, F_OK) == 0;
}

/* Say what became of NVML when it matters: asked for, or there but failing. */
static void report_nvml(void)
{
	const char *lib = getenv("RM_NVML_LIB");

	if (gpus.nvml == RM_NVML_OK || (gpus.nvml == RM_NVML_ABSENT && !(lib && *lib)))
		return;
	/* A static build says so where an NVIDIA GPU may be there to read. */
	if (gpus.nvml == RM_NVML_STATIC && !(lib && *lib) && !nvidia_seen())
		return;
	warnx("NVML: %s; NVIDIA GPUs are not read", gpus.nvml_msg);
}

/*
 * Find the GPUs, then print their rows once or on every tick.
 */
int main(int argc, char **argv)
{
	struct opts o;
	struct rm_tick t;
	struct rm_buf b = { 0 };
	struct rm_val *v;
	int ncols;

	rm_set_prog(prog);
	signal(SIGPIPE, SIG_IGN);
	parse_args(argc, argv, &o);
	rm_gpu_open(&gpus);
	atexit(close_gpus);
	report_nvml();
	if (gpus.n == 0)
		errx(RM_EXIT_FAIL, "no GPUs: no cards under '%s/class/drm' and none through NVML",
		     rm_sys_root());
	v = calloc((size_t)gpus.n * C_NCOLS, sizeof(*v));
	if (!v)
		errx(RM_EXIT_FAIL, "out of memory");
	ncols = o.interval ? C_NCOLS : C_EPOCH;
	if (o.header && o.fmt == RM_FMT_CSV) {
		rm_emit_csv_header(&b, cols, ncols);
		rm_out(&b);
	}
	if (!o.interval) {
		emit(&o, &b, v, ncols, 0, 0);
	} else {
		if (rm_tick_init(&t, o.interval, o.count, o.watch_pid) < 0) {
			warn("cannot watch PID %d", (int)o.watch_pid);
			rm_buf_free(&b);
			free(v);
			return RM_EXIT_FAIL;
		}
		while (rm_tick_next(&t))
			emit(&o, &b, v, ncols, rm_now_epoch(), rm_tick_elapsed(&t));
		/* The watched PID ended inside an interval: one last row, as
		 * rm-sample and rm-energy write. */
		if (t.end == RM_END_PID)
			emit(&o, &b, v, ncols, rm_now_epoch(), rm_tick_elapsed(&t));
	}
	rm_buf_free(&b);
	free(v);
	return rm_finish_stdout(RM_EXIT_OK);
}
