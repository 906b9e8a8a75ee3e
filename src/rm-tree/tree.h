/*
 * rm-tree: what the parts of the command share (see main.c for the
 * usage text).
 */
#ifndef RM_TREE_H
#define RM_TREE_H

#include <regex.h>
#include <signal.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "ptree.h"
#include "rmtools.h"

extern const char prog[];

/* Snapshot columns, in their default order. */
enum {
	K_PID, K_PPID, K_COMM, K_STATE, K_THREADS, K_RSS, K_HWM, K_CPUPCT,
	K_CPUS, K_CMD, K_PSS, K_NCOLS
};
#define K_NDEFAULT K_PSS

extern const char *const col_names[K_NCOLS];

enum sel { SEL_ALL, SEL_PIDS, SEL_MATCH, SEL_EXEC };

struct opts {
	enum sel sel;
	int no_children;
	pid_t *pids;
	int npids;
	regex_t re;
	char **argv;             /* --exec: CMD and its arguments */
	int cols[K_NCOLS];
	int ncols;
	int header;
	int json;
	double window;
	double interval;         /* 0: snapshot */
	long count;
	pid_t watch_pid;
	const char *timeline, *job, *log;
	int pss, cgroup;
	uint64_t mem_max;        /* --memory-max bytes, 0: none */
	/* Dispositions at entry, restored in CMD before it runs. */
	struct sigaction entry_sig[4];   /* INT, TERM, HUP, PIPE */
	sigset_t entry_mask;
	/* Resource limits at entry (we raise RLIMIT_NOFILE), restored too. */
	struct rlimit entry_rlim[RLIM_NLIMITS];
	int entry_rlim_ok[RLIM_NLIMITS];
	/* --exec: after CMD ends, wait for descendants that left its session:
	 * < 0 not at all (default), 0 without a limit, > 0 at most SEC. */
	double wait_orphans;
};

int snapshot_run(const struct opts *o);
int stream_run(const struct opts *o);

/* Sanitize a command line read from /proc into a heap string (NULL when
 * empty or out of memory). */
char *cmd_dup(char *raw, ssize_t len);

/* The memory cgroup of an --exec job. */
struct cgroup {
	char dir[4096];
	int v2;
	int ok;
};

/* Create a child memory cgroup of our own; -1 with a reason in why. */
int cgroup_create(struct cgroup *cg, char *why, size_t wsize);
/* Move pid into it; -1 with errno. */
int cgroup_enter(const struct cgroup *cg, pid_t pid);
/* The peak of everything that ran in it, KiB; -1 when unreadable. */
int cgroup_peak(const struct cgroup *cg, uint64_t *kib);
/* Remove it (it must be empty); -1 with errno. */
int cgroup_remove(const struct cgroup *cg);
/* --memory-max: set the limit (and swap's); -1 with a reason in why. */
int cgroup_limit(const struct cgroup *cg, uint64_t bytes, char *why, size_t wsize);
/* OOM kills inside it so far; -1 when unreadable. */
int cgroup_oom_kills(const struct cgroup *cg, uint64_t *n);
/* The first OOM victim the kernel logged inside it since CLOCK_MONOTONIC
 * mono_from; -1 when none or the log is closed to us. */
int cgroup_victim(const struct cgroup *cg, double mono_from, char *name, size_t nsize, int *pid);

#endif
