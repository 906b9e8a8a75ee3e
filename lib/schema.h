/*
 * schema: the columns of the files rm-tree writes and rm-summarize reads
 * (the exit log, the --job row, the --timeline), one table each, in the
 * order they are written.  The writer prints its header from the table
 * (rm_schema_cols) and writes its fields in the same order (rm-tree's
 * rows.c); the reader looks each column up by the table's name (rm-
 * summarize's procs.c).  So a column is named once: renamed here, it is
 * renamed for both; an enum name changed or removed here is a compile
 * error in both.  A new column goes at the end of its table (readers
 * look columns up by name, so an older file without it still reads),
 * with its field in the writer.  sysstat's activity table is the model.
 */
#ifndef RM_SCHEMA_H
#define RM_SCHEMA_H

#include "text.h"

/* rm-tree's exit log: one row per process. */
#define RM_XL_COLUMNS(X) \
	X(PID, "pid") X(PPID, "ppid") X(COMM, "comm") X(START_S, "start_s") X(END_S, "end_s") \
	X(PEAK_RSS_KIB, "peak_rss_kib") X(PEAK_AT_S, "peak_at_s") X(CPU_S, "cpu_s") \
	X(EXIT, "exit") X(CMD, "cmd") X(READ_KIB, "read_kib") X(WRITE_KIB, "write_kib") \
	X(MAJFLT, "majflt") X(CPU_DELAY_MS, "cpu_delay_ms") X(IO_DELAY_MS, "io_delay_ms") \
	X(SWAPIN_DELAY_MS, "swapin_delay_ms") X(RECLAIM_DELAY_MS, "reclaim_delay_ms") \
	X(THRASH_DELAY_MS, "thrash_delay_ms") X(SOURCE, "source") X(SCOPE, "scope") \
	X(EMULATED, "emulated")

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

#define RM_SCHEMA_XL(id, name) RM_XL_##id,
#define RM_SCHEMA_JOB(id, name) RM_JOB_##id,
#define RM_SCHEMA_TL(id, name) RM_TL_##id,
enum rm_xl_col { RM_XL_COLUMNS(RM_SCHEMA_XL) RM_XL_N };
enum rm_job_col { RM_JOB_COLUMNS(RM_SCHEMA_JOB) RM_JOB_N };
enum rm_tl_col { RM_TL_COLUMNS(RM_SCHEMA_TL) RM_TL_N };
#undef RM_SCHEMA_XL
#undef RM_SCHEMA_JOB
#undef RM_SCHEMA_TL

/* The groups of the job row. */
#define RM_JOB_BASE_END RM_JOB_MEM_MAX_KIB          /* cmd .. mode */
#define RM_JOB_MEMMAX_END RM_JOB_PEAK_FILE_KIB      /* --memory-max's */
#define RM_JOB_CGROUP_END RM_JOB_N                  /* --cgroup's */

extern const char *const rm_xl_names[RM_XL_N];
extern const char *const rm_job_names[RM_JOB_N];
extern const char *const rm_tl_names[RM_TL_N];

/* Append names[from] .. names[to - 1] to b as header fields: each after
 * a comma, but for the first column of a file (index 0). */
void rm_schema_cols(struct rm_buf *b, const char *const *names, int from, int to);

#endif
