/*
 * sysinfo: the system-wide readers: /proc/meminfo, the aggregate line of
 * /proc/stat, /proc/loadavg, oom_kill in /proc/vmstat and the PSI files in
 * /proc/pressure.
 *
 * Each reader is a pure parser (text in, struct out) under a thin function
 * that reads the file from the proc root.  A value the text does not hold
 * is flagged unknown, never set to 0: callers print it as an empty field.
 */
#ifndef RM_SYSINFO_H
#define RM_SYSINFO_H

#include <stdint.h>

/* Bits of rm_meminfo.has. */
enum {
	RM_MI_TOTAL = 1 << 0,
	RM_MI_AVAIL = 1 << 1,
	RM_MI_FREE = 1 << 2,
	RM_MI_SWAPTOTAL = 1 << 3,
	RM_MI_SWAPFREE = 1 << 4,
};

struct rm_meminfo {
	uint64_t total_kib, avail_kib, free_kib, swap_total_kib, swap_free_kib;
	unsigned has;
};

/* Returns 0, or -1 when MemTotal is missing (not a meminfo at all). */
int rm_meminfo_parse(const char *buf, struct rm_meminfo *mi);
int rm_meminfo_read(struct rm_meminfo *mi);

/*
 * Jiffies of the aggregate "cpu" line.  busy excludes idle and iowait;
 * guest and guest_nice are already inside user and nice, so they are not
 * added again; steal counts as busy (the core was not ours to use).
 */
struct rm_cputimes {
	uint64_t total, idle;
	int known;
};

int rm_cputimes_parse(const char *buf, struct rm_cputimes *ct);
int rm_cputimes_read(struct rm_cputimes *ct);

/*
 * Busy percent between two readings (100 = every core busy).  Returns -1
 * when unknown: either reading missing, or no time passed.
 */
double rm_cputimes_pct(const struct rm_cputimes *a, const struct rm_cputimes *b);

struct rm_loadavg {
	double load1, load5, load15;
	int known;
};

int rm_loadavg_parse(const char *buf, struct rm_loadavg *la);
int rm_loadavg_read(struct rm_loadavg *la);

/* oom_kill from vmstat text: 0 and *out set, or -1 when the line is absent. */
int rm_vmstat_oom_parse(const char *buf, uint64_t *out);
int rm_vmstat_oom_read(uint64_t *out);

/* One /proc/pressure/<res> file: avg10 of the some and full lines. */
struct rm_psi {
	double some10, full10;
	int has_some, has_full;
};

int rm_psi_parse(const char *buf, struct rm_psi *p);
/* res is "cpu", "memory" or "io"; -1 when the file is missing. */
int rm_psi_read(const char *res, struct rm_psi *p);

/* Online CPU count from sysconf; at least 1. */
int rm_ncpu(void);

#endif
