/*
 * cgroup: the headroom a process sees inside its control groups (read
 * side).  Finds the memory cgroup of a PID (v2 where the cgroup has
 * memory.current, else the v1 `memory` hierarchy), its tightest limit
 * over the ancestors, the working set (usage minus inactive file pages,
 * the kubelet's rule), swap, OOM kills and memory PSI; and the effective
 * cores of a PID: its CPU affinity capped by the tightest CPU quota (v2
 * cpu.max, v1 cpu.cfs_quota_us / cpu.cfs_period_us), rounded up.
 *
 * Pure parsers first (tested on strings), then readers.  The readers go
 * through procfs: mountinfo and PID/cgroup under RM_PROC_ROOT, and mount
 * points under /sys re-rooted to RM_SYS_ROOT, so fixture trees stand in
 * for the kernel's.
 */
#ifndef RM_CGROUP_H
#define RM_CGROUP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* v1's "no limit": PAGE_COUNTER_MAX pages, rounded to a page. */
#define RM_CG_V1_UNLIMITED 0x7FFFFFFFFFFFF000ULL

/* One mountinfo line, split; strings point into the (modified) line. */
struct rm_cg_mount {
	const char *root;      /* field 4: root of the mount in its hierarchy */
	const char *point;     /* field 5: mount point (octal escapes undone) */
	const char *fstype;
	const char *super;     /* super options (v1 controllers: "rw,memory") */
};

/*
 * Split a mountinfo line in place.  Returns 0, or -1 when it is not a
 * mountinfo line.
 */
int rm_cg_parse_mountinfo_line(char *line, struct rm_cg_mount *m);

/* 1 when the comma-separated list has the token. */
int rm_cg_has_token(const char *list, const char *tok);

/*
 * From /proc/PID/cgroup text, the path of the v2 line ("0::PATH", ctrl
 * NULL) or of the v1 line whose controller list has ctrl.  Returns 0, or
 * -1 when there is no such line or the path does not fit.
 */
int rm_cg_parse_proc_cgroup(const char *text, const char *ctrl, char *path, size_t size);

/*
 * The value of "KEY VALUE" lines (memory.stat, memory.events,
 * memory.oom_control).  Returns 0, or -1 when the key is absent.
 */
int rm_cg_parse_kv(const char *text, const char *key, uint64_t *out);

/*
 * A memory limit file: "max" (v2) or a byte count; v1's huge "no limit"
 * is no limit too.  Returns 1 with *bytes for a limit, 0 for none, -1 when
 * it is not a limit.
 */
int rm_cg_parse_limit(const char *text, uint64_t *bytes);

/*
 * v2 cpu.max ("max 100000" or "150000 100000").  Returns 1 with the quota
 * and period, 0 for no quota, -1 when malformed.
 */
int rm_cg_parse_cpu_max(const char *text, long long *quota, long long *period);

/* ceil(quota / period), at least 1; the quota capped by affinity n. */
int rm_cg_quota_cores(long long quota, long long period, int affinity);

/*
 * A size: bytes, or a number with K, M, G or T (binary, an optional
 * trailing B or iB: "64M", "8GiB", "1.5G").  Returns 0, or -1 when it is
 * not a size or is 0.
 */
int rm_cg_parse_size(const char *s, uint64_t *bytes);

/*
 * Our own cgroup's directory in the v2 hierarchy (ctrl NULL) or in the v1
 * hierarchy with controller ctrl, as mounted here (a mount under /sys
 * re-rooted to RM_SYS_ROOT).  Where the mount shows only part of the
 * hierarchy and our cgroup is outside it, there is none.  Returns 0, or
 * -1 with errno (ENOENT: no such hierarchy, or our cgroup not in it).
 */
int rm_cg_own_dir(const char *ctrl, char *dir, size_t size);

/* A memory cgroup found for reading. */
/* The levels of a v2 limit walk whose memory.max stays open. */
#define RM_CG_WALK_KEPT 16

struct rm_cg {
	int ok;
	int v2;                /* memory from the v2 hierarchy */
	char dir[4096];        /* the memory cgroup's directory */
	char mnt[4096];        /* its hierarchy's mount point (walks stop there) */
	char psi[4200];        /* v2 memory.pressure to read, or "" */
	int oom_known;
	uint64_t oom_base;     /* oom_kill when opened */
	/* descriptor + 1 of each file read every tick, 0 none: memory.stat,
	 * the usage, the limit (v1), the OOM count, the pressure, the swap
	 * (v2), then each memory.max of the v2 limit walk, the cgroup's first */
	int kept[6 + RM_CG_WALK_KEPT];
};

/*
 * Find the memory cgroup of pid (0: our own) or, with path non-NULL, the
 * cgroup at path: as /proc/PID/cgroup writes it (relative to the
 * hierarchy's root) or an absolute directory under /sys/fs/cgroup.
 * Returns 0, or -1 with a reason in why.
 */
int rm_cg_open(struct rm_cg *cg, pid_t pid, const char *path, char *why, size_t wsize);

enum {
	RM_CG_USED = 1, RM_CG_LIMIT = 2, RM_CG_AVAIL = 4, RM_CG_SWAP = 8,
	RM_CG_OOM = 16, RM_CG_PSI_FULL = 32,
};

struct rm_cg_reading {
	unsigned has;
	uint64_t used, limit, avail, swap;  /* bytes */
	uint64_t oom_kills;                 /* since rm_cg_open */
	double psi_full10;                  /* percent */
};

/* One reading; what cannot be read is left out of has.  Returns 0. */
int rm_cg_read(struct rm_cg *cg, struct rm_cg_reading *r);

/*
 * Effective cores of pid (0: our own; a PID we cannot ask falls back to
 * our own affinity): the CPUs it may run on, capped by the tightest CPU
 * quota of its cgroup and ancestors, rounded up.  At least 1.
 */
int rm_cg_cores(pid_t pid);

#endif
