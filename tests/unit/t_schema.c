/*
 * t_schema: the column tables of lib/schema.h, which rm-sample and
 * rm-tree write their headers from and rm-summarize reads by: names
 * unique and plain (a CSV header field needs no quoting), the groups of
 * the job row where the writer cuts them, the five delays side by side
 * (the reader takes them as a run), and the header text as written.
 */
#include <string.h>

#include "schema.h"
#include "tap.h"

static int plain_unique(const char *const *names, int n)
{
	for (int i = 0; i < n; i++) {
		if (!names[i] || !names[i][0] || strspn(names[i], "abcdefghijklmnopqrstuvwxyz0123456789_") !=
						     strlen(names[i]))
			return 0;
		for (int j = 0; j < i; j++)
			if (strcmp(names[i], names[j]) == 0)
				return 0;
	}
	return 1;
}

static void names_are_plain_and_unique(void)
{
	CHECK(plain_unique(rm_sc_names, RM_SC_N));
	CHECK(plain_unique(rm_xl_names, RM_XL_N));
	CHECK(plain_unique(rm_job_names, RM_JOB_N));
	CHECK(plain_unique(rm_tl_names, RM_TL_N));
}

static void groups_and_runs_where_the_code_takes_them(void)
{
	CHECK_STR(rm_job_names[RM_JOB_BASE_END - 1], "mode");
	CHECK_STR(rm_job_names[RM_JOB_BASE_END], "mem_max_kib");
	CHECK_STR(rm_job_names[RM_JOB_MEMMAX_END - 1], "oom_victim");
	CHECK_STR(rm_job_names[RM_JOB_MEMMAX_END], "peak_file_kib");
	CHECK(RM_XL_THRASH_DELAY_MS == RM_XL_CPU_DELAY_MS + 4);
	CHECK(RM_XL_SOURCE == RM_XL_CPU_DELAY_MS + 5);
	CHECK(RM_JOB_THRASH_DELAY_MS == RM_JOB_CPU_DELAY_MS + 4);
	CHECK_STR(rm_xl_names[0], "pid");
}

/* The seed monitor's 14 columns, first and in its order: rm-summarize
 * knows a seed CSV by them. */
static void sample_table_starts_with_the_seed(void)
{
	struct rm_buf b = { 0 };

	rm_schema_cols(&b, rm_sc_names, 0, RM_SC_SEED_N);
	rm_buf_addc(&b, 0);
	CHECK_STR(b.p, "epoch,iso,elapsed_s,load1,cpu_pct,mem_used_mb,mem_avail_mb,mem_pct,"
		  "swap_used_mb,disk_avail_gb,disk_pct,compilers,stage,context");
	rm_buf_free(&b);
	for (int i = 0; i < RM_SC_N; i++)
		CHECK_STR(rm_sc_cols[i].name, rm_sc_names[i]);
	CHECK(rm_sc_cols[RM_SC_DISK_AVAIL_GB].scale == 1024.0 * 1024.0 * 1024.0);
}

static void header_as_written(void)
{
	struct rm_buf b = { 0 };

	rm_schema_cols(&b, rm_tl_names, 0, RM_TL_N);
	rm_buf_addc(&b, 0);
	CHECK_STR(b.p, "epoch,iso,elapsed_s,procs,rss_kib,cpu_pct");
	rm_buf_reset(&b);
	rm_schema_cols(&b, rm_job_names, RM_JOB_BASE_END, RM_JOB_MEMMAX_END);
	rm_buf_addc(&b, 0);
	CHECK_STR(b.p, ",mem_max_kib,oom_kills,oom_victim");
	rm_buf_free(&b);
}

int main(void)
{
	RUN(names_are_plain_and_unique);
	RUN(groups_and_runs_where_the_code_takes_them);
	RUN(sample_table_starts_with_the_seed);
	RUN(header_as_written);
	return tap_done();
}
