/*
 * kmsg: the OOM killer's victims from the kernel log.  rm_kmsg_oom_parse()
 * reads one /dev/kmsg record ("PRIO,SEQ,USEC,FLAGS;MESSAGE") and
 * recognises the two lines the OOM killer prints for each kill
 * (mm/oom_kill.c):
 *   "oom-kill:constraint=CONSTRAINT_X,nodemask=...,cpuset=...,mems_allowed=...,
 *    oom_memcg=PATH,task_memcg=PATH,task=NAME,pid=PID,uid=UID"
 * (oom_memcg only for a memory cgroup's own OOM) and
 *   "Out of memory: Killed process PID (NAME) ..." or
 *   "Memory cgroup out of memory: Killed process PID (NAME) ...".
 * USEC is the kernel log's clock (local_clock(), the scheduler clock),
 * NOT CLOCK_MONOTONIC: it drifts from both the monotonic and the real
 * clock, so it only orders kills; a kill is matched to a process by its
 * PID and name.  A cgroup name may hold ",task=", so the oom-kill line
 * alone cannot always tell the path from the name; when both lines of a
 * kill are read, the name is the "Killed process" line's, and what the
 * oom-kill line took for the start of the name goes back to task_memcg.
 * rm_kmsg_read_ooms() reads the whole ring buffer once,
 * without blocking, and hands each kill (the two lines of one kill
 * merged) to a callback; rm_kmsg_mark() and rm_kmsg_oom_since() do the
 * same for the kills of one cgroup logged after a mark.  Names and paths are raw: sanitize them before
 * printing.
 *
 * Before those two lines the kernel prints its report of the kill
 * (mm/oom_kill.c dump_header): for a memory cgroup's OOM
 *   "memory: usage NkB, limit NkB, failcnt N"
 * (the cgroup whose limit acted, at that moment), and, when
 * vm.oom_dump_tasks is 1 (the default), the task dump of the cgroup (or
 * of the whole host for a system OOM):
 *   "Tasks state (memory values in pages):"
 *   "[  pid  ]   uid  tgid total_vm      rss ... name"
 *   "[  14773]     0 14773   125000   112000 ... cc1plus"
 * The reader hands each kill the usage, limit and tasks printed since the
 * last "invoked oom-killer" line before it.
 */
#ifndef RM_KMSG_H
#define RM_KMSG_H

#include <stddef.h>
#include <stdint.h>

/* What the kill was constrained by (the kernel's enum oom_constraint). */
enum rm_oom_constraint {
	RM_OOM_UNKNOWN = 0,     /* only the "Killed process" line was seen */
	RM_OOM_NONE,            /* the whole system ran out */
	RM_OOM_CPUSET,          /* the NUMA nodes of a cpuset ran out */
	RM_OOM_MEMORY_POLICY,   /* the nodes of a mempolicy ran out */
	RM_OOM_MEMCG,           /* a memory cgroup reached its limit */
};

/* One task of the kernel's OOM task dump, with its memory at the kill. */
struct rm_oom_task {
	int pid, uid, tgid;
	long long rss_pages;    /* resident pages (anon + file + shmem) */
	char name[16];          /* comm, raw */
};

/* The most tasks kept of one kill's dump (a system OOM dumps every task). */
#define RM_OOM_MAX_TASKS 1024

struct rm_oom_kill {
	double klog_s;          /* kernel log time (local_clock), to order kills only */
	int pid;
	int constraint;         /* enum rm_oom_constraint */
	char name[64];
	char oom_memcg[256];    /* the cgroup whose limit was hit ("" if none) */
	char task_memcg[256];   /* the victim's cgroup ("" if not logged) */
	int killed_line;        /* name from "Killed process PID (NAME)" */
	/* From the kernel's report before the kill lines (the reader only;
	 * rm_kmsg_oom_parse leaves usage and limit -1, no tasks): */
	long long mem_usage_kib, mem_limit_kib;   /* "memory: usage, limit"; -1 not logged */
	const struct rm_oom_task *tasks;   /* the dump's tasks, valid during the callback */
	size_t ntasks;
	int dump_seen;          /* a "Tasks state" header came before this kill */
};

/* The kernel's word for a constraint ("CONSTRAINT_MEMCG"), "" if unknown. */
const char *rm_kmsg_constraint_name(int constraint);

/* 1 when rec[0..len) is an OOM kill line (o filled), else 0. */
int rm_kmsg_oom_parse(const char *rec, size_t len, struct rm_oom_kill *o);

/* 1 when msg[0..len) (a record's message, after the ';') is a task line
 * of the OOM task dump (t filled).  ncols: the numbers after "[pid]" up
 * to the name, as the dump's header counts them (10 on kernel 6.x, 7 on
 * 5.x; 0: 10). */
int rm_kmsg_task_parse(const char *msg, size_t len, int ncols, struct rm_oom_task *t);

/* 1 when msg[0..len) is a memory cgroup's "memory: usage NkB, limit NkB"
 * line (usage and limit filled, KiB). */
int rm_kmsg_memcg_parse(const char *msg, size_t len, long long *usage_kib, long long *limit_kib);

/* 1 when rec[0..len) starts as a /dev/kmsg record does ("N,N,N[,...];"). */
int rm_kmsg_is_record(const char *rec, size_t len);

/* Bounds of rm_kmsg_read_ooms: a file with no record in its first
 * RM_KMSG_PROBE bytes is not a kernel log (EBADMSG); nothing past
 * RM_KMSG_MAX bytes is read (EFBIG). */
#define RM_KMSG_PROBE (64 * 1024)
#define RM_KMSG_MAX (256L * 1024 * 1024)

/*
 * Read path (normally "/dev/kmsg"; a regular file of records one a line
 * also works) and call cb for every kill, in log order.  Returns the
 * number of kills, or -1 with errno when it cannot be opened or read
 * (EPERM/EACCES where dmesg_restrict keeps it from this user, EBADMSG
 * when it is not a kernel log, EFBIG past RM_KMSG_MAX bytes).  Every read
 * is bounded: /dev/zero or an endless pipe returns, with an error.
 */
int rm_kmsg_read_ooms(const char *path, void (*cb)(void *arg, const struct rm_oom_kill *o),
		      void *arg);

/*
 * The kills of one cgroup since a moment: rm_kmsg_mark opens the log and
 * marks its end, then rm_kmsg_oom_since reads only the records logged
 * after the mark.  A sequence mark, no clock: a record's stamp is the
 * kernel log's clock, which on a host up for days trails CLOCK_MONOTONIC
 * by seconds, so comparing stamps with a start time skips real kills.
 */
struct rm_kmsg_mark {
	int ok;                 /* marked: fd is open */
	int fd, is_dev;
};

/*
 * Mark path's end now (NULL: $RM_KMSG where set, a file of records the
 * tests write, else "/dev/kmsg").  Returns 0, or -1 with errno (m->ok 0:
 * EPERM/EACCES where dmesg_restrict keeps the log from this user).
 */
int rm_kmsg_mark(struct rm_kmsg_mark *m, const char *path);

/*
 * Each kill logged after the mark (or after the last call) whose
 * oom_memcg, the cgroup whose limit acted, is memcg or ends in "/memcg"
 * (memcg NULL: every kill), to cb in log order.  Returns their number, or
 * -1 with errno (EBADF when not marked), as rm_kmsg_read_ooms.
 */
int rm_kmsg_oom_since(struct rm_kmsg_mark *m, const char *memcg,
		      void (*cb)(void *arg, const struct rm_oom_kill *o), void *arg);

/* Close the log; the mark is gone. */
void rm_kmsg_unmark(struct rm_kmsg_mark *m);

#endif
