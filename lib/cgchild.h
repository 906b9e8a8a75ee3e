/*
 * cgchild: a child memory cgroup of our own for a command we run
 * (rm-tree --cgroup, --memory-max): created, entered, limited, its peak
 * and OOM kills read, removed.  Its peak counter is the exact peak of
 * everything that ran in it however short the spike.  cgroup v2 first
 * (memory.peak, where the memory controller is enabled for our
 * children), else v1 (memory.max_usage_in_bytes).  The child is created
 * under our own cgroup, so whatever limits apply to us still apply to
 * it.  Where it goes is found by lib/cgroup (mountinfo and
 * /proc/self/cgroup under RM_PROC_ROOT, mounts under RM_SYS_ROOT), so a
 * fixture tree stands in for the kernel's.  The victims of its OOM kills
 * are in the kernel log: lib/kmsg's rm_kmsg_oom_since with its name.
 */
#ifndef RM_CGCHILD_H
#define RM_CGCHILD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct rm_cg_child {
	char dir[4096];        /* its directory */
	char name[64];         /* its last component, as the kernel log ends its path */
	int v2;
	int ok;
};

/*
 * The directory a child cgroup called name would have under our own
 * cgroup: in the v2 hierarchy (v2 set) or the v1 memory one.  Returns 0,
 * or -1 with errno (ENOENT: no such hierarchy, or we are not in what it
 * mounts).
 */
int rm_cg_child_where(int v2, const char *name, char *dir, size_t size);

/*
 * Create the child cgroup name under our own (v2, else v1), replacing an
 * empty one of that name; one without a peak counter is removed again.
 * Returns 0, or -1 with a reason in why.
 */
int rm_cg_child_create(struct rm_cg_child *cg, const char *name, char *why, size_t wsize);
/* Move pid into it; -1 with errno. */
int rm_cg_child_enter(const struct rm_cg_child *cg, pid_t pid);
/* The peak of everything that ran in it, KiB; -1 when unreadable. */
int rm_cg_child_peak(const struct rm_cg_child *cg, uint64_t *kib);
/* Remove it (it must be empty: waits 2 s for the last task to leave);
 * -1 with errno. */
int rm_cg_child_remove(const struct rm_cg_child *cg);
/* A memory budget: the limit (and swap's, so the budget is RAM); -1 with
 * a reason in why. */
int rm_cg_child_limit(const struct rm_cg_child *cg, uint64_t bytes, char *why, size_t wsize);
/* OOM kills inside it so far; -1 when unreadable. */
int rm_cg_child_oom_kills(const struct rm_cg_child *cg, uint64_t *n);

#endif
