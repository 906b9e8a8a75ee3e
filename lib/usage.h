/*
 * usage: the seed's usage JSON (bankml's usage_json) for a set of
 * processes and their descendants, shared by `rm-tree -f json` and
 * rm-sample's GET /usage.
 *
 * rm_usage_json() builds the object from readings the caller already
 * has: machine totals (source, cores, mem_total_bytes,
 * mem_available_bytes, swap_total_bytes, swap_free_bytes), sums over the
 * processes (rss_bytes, cpu_percent), interval_ms, and processes[] with
 * name, pid, rss_bytes, cpu_percent (and cmd when asked).  A reading the
 * machine does not give is null, never 0.
 *
 * rm_usage_begin()/rm_usage_end() take those readings in two steps
 * around the CPU window, so a caller with its own poll loop (the HTTP
 * server) never sleeps through the window: begin scans /proc, selects
 * the given pids and their descendants and reads their CPU ticks; end,
 * called once the window has passed, reads the ticks again (a process
 * whose start time changed, or that ended, is left out), and writes the
 * JSON.  Memory follows the number of live processes.
 */
#ifndef RM_USAGE_H
#define RM_USAGE_H

#include <stddef.h>
#include <stdint.h>

#include "ptree.h"
#include "text.h"

struct rm_usage_proc {
	int pid;
	const char *comm;        /* raw: sanitized here */
	uint64_t rss_kib;
	double cpu_pct;          /* < 0: unknown (null) */
	const char *cmd;         /* sanitized command line, or NULL */
};

/*
 * Append the usage object (and a newline) to b; with_cmd adds "cmd".
 * "cores" is the effective cores of cores_pid (0: this process): its
 * affinity capped by its cgroups' CPU quotas.
 */
void rm_usage_json(struct rm_buf *b, const char *source, const struct rm_usage_proc *p,
		   size_t n, double window, int with_cmd, int cores_pid);

struct rm_usage {
	struct rm_ptree t;
	struct rm_pnode **v;
	size_t n, cap;
	double t0;               /* monotonic time of the first readings */
	int with_cmd;
	int first_pid;           /* the first PID asked for: whose cores */
};

/*
 * First readings of pids[0..npids) and their descendants.  Returns the
 * number of processes selected (0 when none is alive), or -1 with errno
 * (ENOMEM, or the proc root unreadable); rm_usage_free() in every case.
 */
int rm_usage_begin(struct rm_usage *u, const int *pids, int npids, int with_cmd);

/* Second readings and the JSON (window: seconds, as reported). */
void rm_usage_end(struct rm_usage *u, const char *source, double window, struct rm_buf *b);

void rm_usage_free(struct rm_usage *u);

#endif
