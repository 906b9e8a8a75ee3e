/*
 * rm-tree: what the parts of the command share (see main.c for the
 * usage text).  The parts, each reached only from those above it:
 *
 *   main.c     options, then snapshot_run or stream_run
 *   snap.c     a snapshot (and the column names)
 *   stream.c   a stream's loop; its parts (stream.h): job.c --exec,
 *              probe.c the /proc readings, rows.c the rows
 *   events.c   kernel events, for the stream (which hands it an
 *              events_host: the options and the clocks); replay.c
 *              records its datagrams or reads them back, for tests
 *   containers.c  --containers (the host's container cgroups, tied to
 *              the build by its clients' command lines) and which
 *              processes are rm-tools' own monitors, for the stream,
 *              probe.c and events.c
 *   table.c    the processes met and their states: the transitions,
 *              the only writer of a state, and the exit-log rows
 *   util.c     cmd_dup, tree_oom, tree_warnx, for all of them
 *
 * Messages name the program by program_invocation_short_name, which
 * main() sets first, so that err(3) and tree_warnx say the same.
 */
#ifndef RM_TREE_H
#define RM_TREE_H

#include <regex.h>
#include <signal.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <time.h>

#include "ptree.h"
#include "rmtools.h"

/* Snapshot columns, in their default order. */
enum {
	K_PID, K_PPID, K_COMM, K_STATE, K_THREADS, K_RSS, K_HWM, K_CPUPCT,
	K_CPUS, K_CMD, K_PSS, K_NCOLS
};
#define K_NDEFAULT K_PSS

extern const char *const col_names[K_NCOLS];  /* snap.c */

/* PF_EXITING from include/linux/sched.h: the flags bit of a process in exit(). */
#define PF_EXITING 0x00000004u

enum sel { SEL_ALL, SEL_PIDS, SEL_MATCH, SEL_EXEC, SEL_CGROUP };

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
	int check;            /* --check: the options checked, nothing run */
	int json;
	double window;
	double interval;         /* 0: snapshot */
	long count;
	pid_t watch_pid;
	const char *timeline, *job, *log;
	int pss, cgroup;
	uint64_t mem_max;        /* --memory-max bytes, 0: none */
	const char *in_cgroup;   /* --in-cgroup PATH, normalised */
	pid_t *exclude;          /* --exclude-tree PID... */
	int nexclude;
	int elsewhere;           /* --elsewhere */
	uint64_t elsewhere_kib;
	const char *stats;       /* --stats FILE */
	const char *containers;  /* --containers FILE */
	const char *live;        /* --live FILE */
	int live_tty;            /* --live-tty */
	/* Dispositions at entry, restored in CMD before it runs. */
	struct rm_entry entry;           /* signals CMD gets back (lib/tick) */
	/* Resource limits at entry (we raise RLIMIT_NOFILE), restored too. */
	struct rlimit entry_rlim[RLIM_NLIMITS];
	int entry_rlim_ok[RLIM_NLIMITS];
	/* --exec: after CMD ends, wait for descendants that left its session:
	 * < 0 not at all (default), 0 without a limit, > 0 at most SEC. */
	double wait_orphans;
	int init;                /* --init: CMD's init (init.c) */
};

int snapshot_run(const struct opts *o);
int stream_run(const struct opts *o);
/* --init: run o->argv as its init would; CMD's exit status. */
int init_run(const struct opts *o);
/* where.c: ",PID_NS,CGROUP_NS,CGROUP", the --stats row's last three fields. */
const char *where_cols(const struct opts *o);

/* util.c.  Sanitize a command line read from /proc into a heap string
 * (NULL when empty or out of memory). */
char *cmd_dup(char *raw, ssize_t len);
/*
 * emul.c.  Is the process pid, whose /proc/PID/cmdline (NUL-separated)
 * is raw[0..len) and comm comm, emulated (argv[0] a binfmt_misc entry's
 * interpreter)?  RM_EMU_YES, RM_EMU_NO (its registrations were read and
 * argv[0] is none of them) or RM_EMU_UNKNOWN.
 */
enum { RM_EMU_UNKNOWN, RM_EMU_NO, RM_EMU_YES };
int cmd_emulated(int pid, const char *raw, size_t len, const char *comm);
/* "rm-tree: out of memory", exit 1. */
void tree_oom(void) __attribute__((noreturn));
/*
 * warnx(3) in one write(2), for what is said once a stream runs: other
 * processes write the same stderr then (CMD's tree with --exec,
 * rm-monitor's other samplers), and a line of ours must not be cut.
 */
void tree_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * What events.c needs of the stream, handed to it by events_start.  It
 * calls nothing of the stream's: what an event does to a process, it
 * does through table.c's transitions.
 */
struct events_host {
	const struct opts *o;
	pid_t self;              /* --exec: rm-tree's pid, else 0 */
	/* CLOCK_MONOTONIC at elapsed 0 (the tick's start, set after
	 * events_start): the kernel's event times on the rows' clock. */
	const struct timespec *t0;
	const double *boot0;     /* CLOCK_BOOTTIME seconds at elapsed 0 */
};

/*
 * table.c: the stream's processes and their states (its top comment
 * draws them).  The only reader and writer of a process's state and the
 * only caller of the exit-log row writer; every other part asks a node's
 * state below and moves it by a transition.
 */
void table_free(void);
struct rm_pnode *table_find(int pid);
struct rm_pnode *table_next(size_t *it);  /* *it = 0 first; no add/forget during */
uint32_t table_gen(void);                 /* the scan generation */
uint32_t table_new_gen(void);             /* a new scan: its generation */
struct rm_pnode *table_meet(int pid, uint64_t start);          /* fresh */
struct rm_pnode *table_meet_decided(int pid, uint64_t start);  /* not fresh */
void table_forget(struct rm_pnode *n);
/* A node's state. */
int table_is_member(const struct rm_pnode *n);   /* followed (sticky) */
int table_is_outsider(const struct rm_pnode *n); /* never joins */
int table_is_ended(const struct rm_pnode *n);    /* its row is written */
int table_was_member(const struct rm_pnode *n);  /* followed until it ended */
int table_is_excluded(const struct rm_pnode *n); /* --exclude-tree, a monitor */
int table_is_monitor_in(const struct rm_pnode *n); /* an excluded monitor the build ran */
int table_is_plain(const struct rm_pnode *n);    /* none of these: a node met, no more */
/* Transitions. */
void table_join(struct rm_pnode *n);     /* -> member, counted as followed */
void table_select(struct rm_pnode *n);   /* a scan's decision: member (counted at its join) */
void table_settle(struct rm_pnode *n);   /* membership decided (fresh no more) */
void table_outsider(struct rm_pnode *n); /* kernel thread, zombie: never joins */
void table_exclude(struct rm_pnode *n);  /* --exclude-tree, another monitor */
void table_monitor_in(struct rm_pnode *n); /* an excluded monitor the build ran */
void table_adopt(struct rm_pnode **v, size_t nv, int self_pid, int pgrp);
/* A member has ended: its row (sampled), or parked until its record
 * (exact); then it is a member no more. */
void table_end(struct rm_pnode *n, double el);
/* Its pid is another process's now: a member's row as table_end would
 * write it (parked in exact mode), and the node goes. */
void table_reused(struct rm_pnode *n, double el);
void table_done(struct rm_pnode *n);         /* its row is written: ended */
void table_member_done(struct rm_pnode *n);  /* a member whose row is written */
/* n's exit-log row (end < 0: a survivor), the job's totals counted;
 * n need not be in the table (a record's process met by nothing). */
void table_row(struct rm_pnode *n, double end);
void table_elsewhere_row(struct rm_pnode *n, double end); /* --elsewhere's */
void table_joined_at_exit(void);  /* a process followed from its record alone */
void table_survivors(void);       /* the end: rows of the members alive */
struct rm_pnode *table_parked_find(int pid);
void table_parked_forget(struct rm_pnode *p);  /* its row is written */
void table_parked_rows(void);     /* rows of parked members no record came for */
/* Threads' records of a live process, folded until its last. */
struct rm_pnode *table_fold_find(int tgid);
struct rm_pnode *table_fold_get(int tgid);
void table_fold_forget(struct rm_pnode *f);
/* --exec: a direct child's wait4 maxrss (its exact row takes it), a
 * child reaped (a fork event read later must not bring it back), and
 * after a pump, the nodes such late events brought back dropped. */
void table_w4_note(int pid, uint64_t start, uint64_t maxrss_kib);
void table_reaped_note(int pid, uint64_t start);
void table_drop_ghosts(void);

/* events.c: kernel process events (exact mode, and membership in sampled
 * mode where the proc connector is allowed). */
/* Open the event sources as the options and privileges allow; say the
 * mode on stderr.  *wake_fd: the fd the tick waits on (in: the existing
 * one or -1; out: one that also wakes on events).  *h is copied. */
/* wake.c: when the events wake us (the hot/cold wake-up filter). */
enum { WAKE_DONE, WAKE_REDRAIN };
/* Open the wake-up socket into epoll set EP, beside events socket CN,
 * which is in EP (hot); SELF: --exec's rm-tree, else 0.  Nothing where
 * RM_EV_HOT=1 or the socket is refused: always hot. */
void wake_start(int ep, int cn, pid_t self);
/* After a pump that saw MEV members' events (and LOST, RESYNC): hot or
 * cold from now.  WAKE_REDRAIN: read CN once more, then wake_redrained. */
int wake_pumped(int mev, int lost, int resync);
int wake_redrained(int mev, int lost);
/* Cold: only the members' forks and execs wake us (the filter). */
int wake_cold(void);

void events_start(const struct events_host *h, int *wake_fd);
/* A recorded session replayed (RM_EV_REPLAY): the stream only pumps,
 * until no recorded pump is left. */
int events_replaying(void);
int events_replay_done(void);
int events_exact(void);                    /* exit rows come from the kernel */
int events_on(void);                       /* any event source is open */
/* May a tick read the members only, not list /proc?  Exact mode, and
 * sampled mode with membership from the connector (a tree selection),
 * whose --elsewhere lists /proc now and then (elsewhere_lists_now). */
int events_members_only(void);
/* Events were lost: the next tick lists /proc (once; clears the flag). */
int events_resync_due(void);
/* Let events gather 2 ms (longer would leave more short processes'
 * command lines unread).  events_settle: woken while cold (a member forked
 * or exec'd), before the pump, so that a short child's fork, exec and exit
 * are most often read in one pump: its command line is not read for
 * nothing, and we stay cold (two wake-ups a process, not four).
 * events_coalesce: after a pump that read events while hot, so a busy
 * host costs a wake per 2 ms at most, not one per event, while an exec
 * that wakes us is read at once. */
void events_settle(void);
void events_coalesce(void);
/* Read what the kernel sent: membership from fork/exec, rows from exit
 * records; rows of members that ended without a record (lost) last. */
void events_pump(double el);
/* A process met by a scan: is it excluded, or in --in-cgroup? */
int events_excluded_pid(const struct opts *o, int pid);
/* Does p, an excluded rm-tree (not this one), fork the job of its --exec? */
int events_monitor_job(struct rm_pnode *p);
int events_in_cgroup(const struct opts *o, int pid);
void events_adopt(int pid);          /* a tied container's process joins */
/* Sampled mode with membership from the connector (a tree selection
 * without taskstats). */
int events_from_connector(void);
/* For elsewhere.c: a node for pid read from /proc now (lazy: a member's
 * child at its fork, read at the pump's end), what a stat read says of
 * a node, and a live process's command line and name. */
struct rm_pnode *events_add_node(int pid, const struct rm_pnode *parent, int lazy);
void events_take_stat(struct rm_pnode *n, const struct rm_pstat *st);
void events_read_cmd(struct rm_pnode *n);
/* Sampled membership of the processes a scan met: --exclude-tree,
 * --in-cgroup. */
void events_decide(struct rm_pnode **v, size_t nv);
/* The --stats file and the stderr line about lost events. */
void events_stats(int final);

/* replay.c: the connector's and taskstats' datagrams recorded
 * (RM_EV_RECORD=FILE) or read back instead of the kernel's
 * (RM_EV_REPLAY=FILE), for tests.  replay_start says which, from the
 * environment (a replay: the recording's header read). */
enum { REPLAY_LIVE, REPLAY_RECORD, REPLAY_REPLAY };
enum { REPLAY_CN, REPLAY_TS };
int replay_start(void);
/* A session: its rm-tree (whose forks are the job), taskstats family,
 * kernel.task_delayacct, and elapsed 0 (CLOCK_MONOTONIC). */
struct replay_head {
	pid_t self;
	int family, delayacct;
	const struct timespec *t0;
};
const struct replay_head *replay_head(void);  /* replayed: the recording's */
/* A pump begins at el: recorded (the session first, once); replayed,
 * the recorded pump's el. */
double replay_pump(double el, const struct replay_head *now);
/* rm_nl_recvm of the source src (recorded), or its next datagrams in
 * the recorded pump (replayed; -1 with ENOBUFS where they were lost). */
int replay_recvm(int src, int fd, void *buf, size_t each, int max, size_t *lens);
int replay_done(void);                   /* replayed: no pump left */

/* elsewhere.c: --elsewhere, the heavy processes outside the selection.
 * Exact mode: each tick reads a bounded share of a sweep of /proc for
 * them (their rows come from their exit records, events.c).  Sampled
 * mode: readings of outsiders every 10th tick, rows for those that ended
 * (elsewhere_outsider_gone); at the end (final) for the live ones. */
void elsewhere_start(const struct opts *o, pid_t self);
void elsewhere_scan(double el, int final);
void elsewhere_outsider_gone(struct rm_pnode *n, double el);
/* Does this tick list /proc for --elsewhere?  Sampled mode with
 * membership from the connector lists it every tenth tick for the
 * outsiders' readings. */
int elsewhere_lists_now(void);

/* containers.c: --containers FILE, a row per container cgroup per tick,
 * tied to the build by its clients' command lines. */
void containers_start(const struct opts *o);
/* A process's command line was read (raw: NUL-separated, len bytes,
 * before cmd_dup joins it): a member that is an rm-tools monitor is
 * excluded; a member container client's tying flags are kept. */
void containers_cmdline(struct rm_pnode *n, const char *raw, ssize_t len);
/* An rm-tools monitor (rm-monitor, rm-sample, rm-tree, rm-summarize,
 * resource-monitor.sh): never the build's, whoever started it. */
int containers_is_monitor(const char *comm, const char *raw, ssize_t len);
/* The same for a process a scan meets (its comm from stat; the command
 * line is read for a shell). */
int containers_monitor_pid(int pid, const char *comm);
/* n, still named rm-tree, is the job of an --exec between the fork and
 * the exec (or one whose exec failed), not a monitor: our own CMD
 * (containers_job), or the child of another rm-tree --exec (an excluded
 * monitor; rm-tree forks nothing else but sanitizer clones), which is
 * the build's where that rm-tree is a monitor the build ran. */
int containers_job_before_exec(const struct rm_pnode *n);
/* --exec has forked its CMD, pid. */
void containers_job(pid_t pid);
void containers_tick(double el);
int containers_pid_tied(int pid);    /* in a container of the build? */
/* The processes of the build's containers the last tick found (each
 * joins the build: events_adopt). */
const int *containers_adopted(size_t *n);
void containers_finish(double el);   /* the last rows; closes FILE */

#endif
