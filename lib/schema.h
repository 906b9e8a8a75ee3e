/*
 * schema: the columns of the files rm-sample and rm-tree write and
 * rm-summarize reads (the sample CSV, the exit log, the --job row, the
 * --timeline), one table each, in the order they are written.  The
 * writer prints its header from the table (rm-sample through lib/emit,
 * rm-tree's rows.c through rm_schema_cols) and writes its fields in the
 * same order; the reader looks each column up by the table's name
 * (rm-summarize's sys.c and procs.c).  So a column is named once: renamed here, it is
 * renamed for both; an enum name changed or removed here is a compile
 * error in both.  A new column goes at the end of its table (readers
 * look columns up by name, so an older file without it still reads),
 * with its field in the writer.  sysstat's activity table is the model.
 */
#ifndef RM_SCHEMA_H
#define RM_SCHEMA_H

#include "emit.h"
#include "text.h"

/*
 * rm-sample's CSV (also its JSON lines and Prometheus text): one row per
 * tick.  Each column: its name, how Prometheus shows it (lib/emit.h), the
 * metric or label name, its help, and the scale to base units (0 = 1).
 * The seed monitor's 14 columns come first, in its order; the columns of
 * --energy, --gpu and --cgroup-path after the default ones, in groups
 * (rm-sample's open_extras picks the printed columns by these ranges).
 */
#define RM_SC_COLUMNS(X) \
	X(EPOCH, "epoch", RM_P_NONE, NULL, NULL, 0) \
	X(ISO, "iso", RM_P_NONE, NULL, NULL, 0) \
	X(ELAPSED_S, "elapsed_s", RM_P_NONE, NULL, NULL, 0) \
	X(LOAD1, "load1", RM_P_GAUGE, "rm_load1", "One-minute load average.", 0) \
	X(CPU_PCT, "cpu_pct", RM_P_GAUGE, "rm_cpu_busy_ratio", "Machine CPU busy over the last interval (1 = every core busy).", 0.01) \
	X(MEM_USED_MB, "mem_used_mb", RM_P_GAUGE, "rm_memory_used_bytes", "MemTotal minus MemAvailable.", 1048576.0) \
	X(MEM_AVAIL_MB, "mem_avail_mb", RM_P_GAUGE, "rm_memory_available_bytes", "MemAvailable.", 1048576.0) \
	X(MEM_PCT, "mem_pct", RM_P_GAUGE, "rm_memory_used_ratio", "Memory used over MemTotal.", 0.01) \
	X(SWAP_USED_MB, "swap_used_mb", RM_P_GAUGE, "rm_swap_used_bytes", "SwapTotal minus SwapFree.", 1048576.0) \
	X(DISK_AVAIL_GB, "disk_avail_gb", RM_P_GAUGE, "rm_disk_available_bytes", "Bytes a non-root user can still write on the disk path.", 1073741824.0) \
	X(DISK_PCT, "disk_pct", RM_P_GAUGE, "rm_disk_used_ratio", "Disk used as df computes it.", 0.01) \
	X(COMPILERS, "compilers", RM_P_GAUGE, "rm_compilers", "Live compiler and linker processes.", 0) \
	X(STAGE, "stage", RM_P_LABEL, "stage", NULL, 0) \
	X(CONTEXT, "context", RM_P_NONE, NULL, NULL, 0) \
	X(OOM_KILLS, "oom_kills", RM_P_COUNTER, "rm_oom_kills_total", "OOM kills since the stream started.", 0) \
	X(PSI_MEM_SOME, "psi_mem_some", RM_P_GAUGE, "rm_pressure_memory_some_ratio", "PSI memory some avg10.", 0.01) \
	X(PSI_MEM_FULL, "psi_mem_full", RM_P_GAUGE, "rm_pressure_memory_full_ratio", "PSI memory full avg10.", 0.01) \
	X(PSI_IO_FULL, "psi_io_full", RM_P_GAUGE, "rm_pressure_io_full_ratio", "PSI io full avg10.", 0.01) \
	X(PSI_CPU_SOME, "psi_cpu_some", RM_P_GAUGE, "rm_pressure_cpu_some_ratio", "PSI cpu some avg10.", 0.01) \
	X(PKG_W, "pkg_w", RM_P_GAUGE, "rm_package_power_watts", "CPU package power over the last interval, all packages.", 0) \
	X(GPU_BUSY_PCT, "gpu_busy_pct", RM_P_GAUGE, "rm_gpus_busy_max_ratio", "Highest busy ratio over the GPUs.", 0.01) \
	X(GPU_VRAM_USED_MB, "gpu_vram_used_mb", RM_P_GAUGE, "rm_gpus_vram_used_bytes", "VRAM in use, summed over the GPUs.", 1048576.0) \
	X(GPU_VRAM_TOTAL_MB, "gpu_vram_total_mb", RM_P_GAUGE, "rm_gpus_vram_total_bytes", "VRAM size, summed over the GPUs.", 1048576.0) \
	X(CG_MEM_USED_MB, "cg_mem_used_mb", RM_P_GAUGE, "rm_cg_mem_used_bytes", "Memory charged to the cgroup.", 1048576.0) \
	X(CG_MEM_LIMIT_MB, "cg_mem_limit_mb", RM_P_GAUGE, "rm_cg_mem_limit_bytes", "Tightest memory limit of the cgroup and its ancestors.", 1048576.0) \
	X(CG_MEM_AVAIL_MB, "cg_mem_avail_mb", RM_P_GAUGE, "rm_cg_mem_available_bytes", "Limit minus working set (usage minus inactive file).", 1048576.0) \
	X(CG_SWAP_USED_MB, "cg_swap_used_mb", RM_P_GAUGE, "rm_cg_swap_used_bytes", "Swap charged to the cgroup.", 1048576.0) \
	X(CG_OOM_KILLS, "cg_oom_kills", RM_P_COUNTER, "rm_cg_oom_kills_total", "OOM kills in the cgroup since the stream started.", 0) \
	X(CG_PSI_MEM_FULL, "cg_psi_mem_full", RM_P_GAUGE, "rm_cg_pressure_memory_full_ratio", "PSI memory full avg10 of the cgroup.", 0.01) \
	X(CORES, "cores", RM_P_GAUGE, "rm_effective_cores", "CPU affinity capped by the tightest CPU quota, rounded up.", 0)
#define RM_SC_SEED_N 14                       /* epoch .. context */

/* rm-tree's exit log: one row per process. */
#define RM_XL_COLUMNS(X) \
	X(PID, "pid") X(PPID, "ppid") X(COMM, "comm") X(START_S, "start_s") X(END_S, "end_s") \
	X(PEAK_RSS_KIB, "peak_rss_kib") X(PEAK_AT_S, "peak_at_s") X(CPU_S, "cpu_s") \
	X(EXIT, "exit") X(CMD, "cmd") X(READ_KIB, "read_kib") X(WRITE_KIB, "write_kib") \
	X(MAJFLT, "majflt") X(CPU_DELAY_MS, "cpu_delay_ms") X(IO_DELAY_MS, "io_delay_ms") \
	X(SWAPIN_DELAY_MS, "swapin_delay_ms") X(RECLAIM_DELAY_MS, "reclaim_delay_ms") \
	X(THRASH_DELAY_MS, "thrash_delay_ms") X(SOURCE, "source") X(SCOPE, "scope") \
	X(EMULATED, "emulated") X(UID, "uid")

/* rm-tree --exec --job: one row for the whole job.  The columns up to
 * mode always; those of --memory-max, then those of --cgroup, only with
 * the option. */
#define RM_JOB_COLUMNS(X) \
	X(CMD, "cmd") X(START_EPOCH, "start_epoch") X(END_EPOCH, "end_epoch") \
	X(ELAPSED_S, "elapsed_s") X(EXIT, "exit") X(PROCS, "procs") \
	X(PEAK_RSS_KIB, "peak_rss_kib") X(PEAK_AT_S, "peak_at_s") \
	X(MAX_PROC_RSS_KIB, "max_proc_rss_kib") X(CGROUP_PEAK_KIB, "cgroup_peak_kib") \
	X(USER_S, "user_s") X(SYS_S, "sys_s") X(READ_KIB, "read_kib") X(WRITE_KIB, "write_kib") \
	X(MAJFLT, "majflt") X(CPU_DELAY_MS, "cpu_delay_ms") X(IO_DELAY_MS, "io_delay_ms") \
	X(SWAPIN_DELAY_MS, "swapin_delay_ms") X(RECLAIM_DELAY_MS, "reclaim_delay_ms") \
	X(THRASH_DELAY_MS, "thrash_delay_ms") X(MODE, "mode") \
	X(MEM_MAX_KIB, "mem_max_kib") X(OOM_KILLS, "oom_kills") X(OOM_VICTIM, "oom_victim") \
	X(PEAK_FILE_KIB, "peak_file_kib") X(CGROUP_ANON_KIB, "cgroup_anon_kib") \
	X(CGROUP_FILE_KIB, "cgroup_file_kib") X(CGROUP_KERNEL_KIB, "cgroup_kernel_kib")

/* rm-tree --timeline: one row per tick. */
#define RM_TL_COLUMNS(X) \
	X(EPOCH, "epoch") X(ISO, "iso") X(ELAPSED_S, "elapsed_s") X(PROCS, "procs") \
	X(RSS_KIB, "rss_kib") X(CPU_PCT, "cpu_pct")

#define RM_SCHEMA_SC(id, name, prom, prom_name, help, scale) RM_SC_##id,
#define RM_SCHEMA_XL(id, name) RM_XL_##id,
#define RM_SCHEMA_JOB(id, name) RM_JOB_##id,
#define RM_SCHEMA_TL(id, name) RM_TL_##id,
enum rm_sc_col { RM_SC_COLUMNS(RM_SCHEMA_SC) RM_SC_N };
enum rm_xl_col { RM_XL_COLUMNS(RM_SCHEMA_XL) RM_XL_N };
enum rm_job_col { RM_JOB_COLUMNS(RM_SCHEMA_JOB) RM_JOB_N };
enum rm_tl_col { RM_TL_COLUMNS(RM_SCHEMA_TL) RM_TL_N };
#undef RM_SCHEMA_SC
#undef RM_SCHEMA_XL
#undef RM_SCHEMA_JOB
#undef RM_SCHEMA_TL

/* The groups of the job row. */
#define RM_JOB_BASE_END RM_JOB_MEM_MAX_KIB          /* cmd .. mode */
#define RM_JOB_MEMMAX_END RM_JOB_PEAK_FILE_KIB      /* --memory-max's */
#define RM_JOB_CGROUP_END RM_JOB_N                  /* --cgroup's */

/* rm-sample's columns whole (struct rm_col: name, Prometheus, help,
 * scale), and every table's names. */
extern const struct rm_col rm_sc_cols[RM_SC_N];
extern const char *const rm_sc_names[RM_SC_N];
extern const char *const rm_xl_names[RM_XL_N];
extern const char *const rm_job_names[RM_JOB_N];
extern const char *const rm_tl_names[RM_TL_N];

/* Append names[from] .. names[to - 1] to b as header fields: each after
 * a comma, but for the first column of a file (index 0). */
void rm_schema_cols(struct rm_buf *b, const char *const *names, int from, int to);

#endif
