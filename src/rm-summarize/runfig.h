/*
 * runfig.h: a run's figures as the gate, --compare, --history and --now
 * read them (runfig.c), each the one the summary prints.
 */
#ifndef RM_SUMMARIZE_RUNFIG_H
#define RM_SUMMARIZE_RUNFIG_H

#include "report.h"

/* NaN when not known. */
double run_duration(const struct report *r);
double run_cpu(const struct report *r);
/* The build's OOM kills (0 when recorded and none; NaN not recorded). */
double run_ooms(const struct report *r);
/* The build's peak memory in KiB and whether it is exact (a cgroup's
 * peak: the job's --cgroup, the largest of its tied containers', or the
 * monitored cgroup's limit less its least available) or sampled (the tree
 * total); NaN when not known. */
double run_used_kib(const struct report *r, int *exact);
/* The cgroup's lowest available MiB, NaN without a cgroup. */
double run_cg_avail(const struct report *r);

#endif
