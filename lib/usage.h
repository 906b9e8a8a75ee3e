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
 *
 * Who may see what: where the proc root is mounted with hidepid (1, 2
 * or ptraceable: rm_usage_hidepid), a user sees only its own processes
 * in /proc, and rm_usage_begin's uid does the same for an answer: only
 * processes whose /proc/PID is owned by that uid are listed (a process
 * that is not dumpable is root's there, as hidepid hides it too), and
 * RM_USAGE_NO_UID lists none (a peer with no uid).  The tree is still
 * walked whole, so a visible descendant of a hidden process is found.
 *
 * The seed's 0.3.7 keys come from struct rm_usage_extra: package_watts
 * is the RAPL package energy (lib/energy, wrap corrected) read at the
 * start and at the end of the same window as cpu_percent, over the time
 * between the two readings; null when there is no RAPL, a counter is
 * root-only, or a reading failed.  gpus is one object per card of
 * lib/gpu (the readings rm-gpu prints), read once at the end of the
 * window, with the seed's gpu_json keys: card, driver, busy_percent,
 * vram_used, vram_total, gtt_used, gtt_total (sizes in bytes; a reading
 * the card does not give is null); [] when there is no GPU.  Neither
 * adds any wait to the window.
 */
#ifndef RM_USAGE_H
#define RM_USAGE_H

#include <stddef.h>
#include <stdint.h>

#include "energy.h"
#include "gpu.h"
#include "proctab.h"
#include "ptree.h"
#include "text.h"

/*
 * A live process's resident memory as the seed read it (VmRSS): statm's
 * second number, in KiB; stat_kib (its stat field 24) where statm cannot
 * be read (a fixture tree).
 */
uint64_t rm_usage_resident_kib(int pid, uint64_t stat_kib);

struct rm_usage_proc {
	int pid;
	const char *comm;        /* raw: sanitized here */
	uint64_t rss_kib;
	double cpu_pct;          /* < 0: unknown (null) */
	const char *cmd;         /* sanitized command line, or NULL */
};

/* One card of "gpus". */
struct rm_usage_gpu {
	char card[32], driver[64];
	struct rm_gpu_reading r;
};

/* package_watts and gpus: begin at the window's start, end at its end. */
struct rm_usage_extra {
	struct rm_rapl rapl;
	int rapl_on;             /* zones open and the first reading taken */
	double rapl_t0;          /* monotonic time of the first reading */
	double watts;            /* package_watts; < 0: null */
	struct rm_usage_gpu *gpu;
	int ngpu;
};

/* The first RAPL reading (none of this fails: what is missing is null). */
void rm_usage_extra_begin(struct rm_usage_extra *x);

/*
 * The second RAPL reading, then the GPUs: g when the caller keeps them
 * open (NVML comes up once per program), else opened and closed here.
 */
void rm_usage_extra_end(struct rm_usage_extra *x, struct rm_gpus *g);

void rm_usage_extra_free(struct rm_usage_extra *x);

/*
 * Append the usage object (and a newline) to b; with_cmd adds "cmd".
 * "cores" is the effective cores of cores_pid (0: this process): its
 * affinity capped by its cgroups' CPU quotas.  x gives package_watts and
 * gpus (NULL: null and []).
 */
void rm_usage_json(struct rm_buf *b, const char *source, const struct rm_usage_proc *p,
		   size_t n, double window, int with_cmd, int cores_pid,
		   const struct rm_usage_extra *x);

/* rm_usage_begin's uid: every process, or none. */
#define RM_USAGE_ANY_UID (-1L)
#define RM_USAGE_NO_UID (-2L)

/*
 * The hidepid option of the proc root's mount: 0 (off), 1 (noaccess),
 * 2 (invisible), 4 (ptraceable), or -1 when the mount is not found.
 * rm_usage_hidepid_parse reads a mountinfo text for the mount at point
 * (the last one there wins: mounts stack); rm_usage_hidepid reads this
 * process's mountinfo for the proc root (RM_PROC_ROOT).
 */
int rm_usage_hidepid_parse(const char *mountinfo, size_t len, const char *point);
int rm_usage_hidepid(void);

struct rm_usage {
	struct rm_ptree t;
	struct rm_pnode **v;
	size_t n, cap;
	double t0;               /* monotonic time of the first readings */
	int with_cmd;
	long uid;                /* only this uid's processes (RM_USAGE_ANY_UID: all) */
	int first_pid;           /* the first PID asked for: whose cores */
	struct rm_usage_extra x;
	struct rm_gpus *gpus;    /* may be set after rm_usage_begin: open GPUs
				  * rm_usage_end reads (NULL: it opens them) */
	/* In steps (rm_usage_start, _scan, _read): where each one stands. */
	int pids[64], npids;
	struct rm_procscan ps;
	int scanning;
	size_t members, next, k;
	struct rm_usage_proc *p;
};

/*
 * First readings of pids[0..npids) and their descendants, of uid's
 * processes only (RM_USAGE_ANY_UID: all; RM_USAGE_NO_UID: none, and
 * /proc is not read).  Returns the number of processes selected (0 when
 * none is alive or visible), or -1 with errno (ENOMEM, or the proc root
 * unreadable); rm_usage_free() in every case.
 */
int rm_usage_begin(struct rm_usage *u, const int *pids, int npids, int with_cmd, long uid);

/*
 * The same in steps, for a caller whose other work has deadlines (a
 * server between ticks): rm_usage_start sets up (0, or -1 with errno,
 * then rm_usage_free); rm_usage_scan takes first readings until the
 * monotonic time until (0: no bound) and returns 1 when every process is
 * read (the members chosen, u->members), 0 when stopped by the clock
 * with more to read, -1 with errno ENOMEM; rm_usage_read takes the
 * second readings the same way (1 when done).  At most 16 processes are
 * read past until.  Each process's CPU share is over its own time
 * between its two readings.
 */
int rm_usage_start(struct rm_usage *u, const int *pids, int npids, int with_cmd, long uid);
int rm_usage_scan(struct rm_usage *u, double until);
int rm_usage_read(struct rm_usage *u, double until);

/* Second readings (what rm_usage_read left) and the JSON (window:
 * seconds, as reported); frees u. */
void rm_usage_end(struct rm_usage *u, const char *source, double window, struct rm_buf *b);

void rm_usage_free(struct rm_usage *u);

#endif
