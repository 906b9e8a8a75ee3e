/*
 * history.h: a host's builds, run by run (history.c).
 *
 * --run-csv FILE writes one row for a run: its start, duration, the
 * watched build's exit when known, peak memory (and whose: a cgroup's,
 * the sampled tree total, or the host's), OOM kills, near-OOM samples,
 * the heaviest unit and the largest process with their peaks.  rm-monitor
 * writes it beside the run's CSV as resources-ID.run.csv.
 *
 * --history DIR lists the runs of DIR from those files, oldest first,
 * each with the change of its peak from the previous run of the same
 * series (the run-id less a -N suffix and a -YYYYMMDD-HHMMSS date, so
 * "build-41", "build-42" and "demo-20261203-072347" go with their kin).
 */
#ifndef RM_SUMMARIZE_HISTORY_H
#define RM_SUMMARIZE_HISTORY_H

#include "report.h"

#define RUN_CSV_HEADER "run_id,start,start_epoch,duration_s,exit,peak_used_mib,peak_used_source," \
		       "oom_kills,near_oom_samples,heaviest_unit,heaviest_unit_mib," \
		       "largest_process,largest_process_mib"

/* The run row of r (header and one row) into path, whole; -1 with errno. */
int write_run_csv(const struct report *r, const char *path);
/* The runs of dir as text or --json on stdout, or as CSV into o->csv;
 * an exit status. */
int print_history(const char *dir, const struct opts *o);

#endif
