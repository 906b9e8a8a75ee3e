/*
 * rm-tree exact mode: the kernel's process events.
 *
 * With the proc connector and a taskstats listener open, membership
 * grows from fork events (the forking parent is known whoever later
 * reaps or adopts the child, so a process that calls setsid or is
 * reparented stays in scope), a member's command line is read at its
 * exec event, and every member's exit-log row is written from its
 * taskstats exit record: the kernel's high-water RSS (what wait4's
 * ru_maxrss reads), CPU, I/O, major faults and delay totals, however
 * short its life and whoever reaps it.  The tick's /proc scan goes on for
 * what only a sample gives (the timeline, the time of a peak), and its
 * view of a member that ended is parked here until its record comes.  A
 * parked member whose record never came (events lost when the socket
 * buffer was full) gets the sampled row it would have had.
 *
 * Without taskstats (sampled mode), a tree selection (PIDs, --exec) still
 * takes its membership from the connector where it is allowed (any user
 * since 6.6): a tick reads the members' own files, not a listing of
 * /proc; every reading stays a sample and the rows say so.
 *
 * Times are the kernel's.  A row's end is its start plus the leader's
 * record's ac_etime (the kernel's elapsed time of the task); its start is
 * /proc/PID/stat's starttime (CLOCK_BOOTTIME ticks, see rows.c) where it
 * was read, else its fork event's timestamp_ns (ktime_get_ns,
 * CLOCK_MONOTONIC, the clock elapsed_s counts on, from the tick's start).
 * A main thread's exit event's timestamp, read before the records of each
 * batch, is the end.  A start known neither way is the end less
 * ac_etime.  Only a row whose process was never seen by an event keeps
 * the time it was read.
 *
 * Which process a record is of: records name a PID, and a PID is given
 * again once its process is reaped, but the two sockets are read one
 * after the other: a fork read from the connector may be of a process
 * that took the PID of one whose record is still unread (a foreign
 * sleep's record read as the row of the build's process that took its
 * PID, and that process's own record dropped).  Every main thread's end
 * gives one exit event and one record with pid == tgid, and every record
 * of a process is queued before its PID is free, so the exits of the
 * whole host are asked for (read at the pump, they wake nothing while a
 * tree's build is quiet) and E.ends counts per PID the records still to
 * come (lib/pidctr says how).  A process whose fork is read takes them as
 * the records of older processes on its PID to pass over before its own
 * (older()).  The fork of a process may still come before the exit event
 * of the one whose PID it took (that one is reaped between its
 * exit_notify and its exit event); the PID is then given again at once,
 * which only kernel.ns_last_pid does, and the record may be taken for the
 * new one.  Without ac_tgid (taskstats before version 12) nothing is
 * counted.
 *
 * Records come per exiting thread; the last one of a process carries
 * AGROUP, followed in the same message by the TGID aggregate when the
 * process had threads.  Threads' CPU, I/O and faults are summed, the
 * high-water mark (one per mm) is their max, the delays come from the
 * aggregate when there is one.
 *
 * What an event does to a process it does through table.c's transitions
 * (the only writer of a process's state and of exit-log rows); this file
 * decides which.  It is long because it does two jobs: membership from
 * fork and exec, and taskstats records into rows (with which process a
 * record is of, above); the --stats file is written here too.  The
 * wake-up filter is wake.c's, the --elsewhere sweep elsewhere.c's.
 */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "outfile.h"
#include "pidctr.h"
#include "procev.h"
#include "procfs.h"
#include "tree.h"

static struct {
	int cn, ts, family, ep;
	int mev;                 /* members' fork and exec events this pump */
	int exact, on;
	int memb;                /* sampled, but membership from the connector */
	int replay;              /* a recorded session (replay.c), no socket */
	char why[160];
	uint64_t lost, resyncs;
	int delayacct;           /* /proc/sys/kernel/task_delayacct, -1 unknown */
	double el;
	int resync;
	int got;                 /* datagrams read by the last pump */
	struct events_host h;    /* the stream's (events_start) */
	struct rm_pidctr ends;   /* exact: records still to come, per PID */
	int uncounted;           /* a record without ac_tgid: E.ends is off */
} E = { .cn = -1, .ts = -1, .ep = -1, .delayacct = -1 };

static unsigned char rbuf[64 * 4096] __attribute__((aligned(8)));
/* Connector events, read while rbuf holds taskstats records. */
static unsigned char cnbuf[64 * 512] __attribute__((aligned(8)));

/* A kernel event time (CLOCK_MONOTONIC ns) as seconds of the stream. */
static double ev_el(uint64_t ns)
{
	const struct timespec *t0 = E.h.t0;

	if (!ns || !t0)
		return -1;
	return (double)((int64_t)ns - ((int64_t)t0->tv_sec * 1000000000 + t0->tv_nsec)) / 1e9;
}

int events_exact(void)
{
	return E.exact;
}

int events_on(void)
{
	return E.on;
}

/* Let events gather: 2 ms (tree.h says why). */
static void gather(void)
{
	const struct timespec ts = { 0, 2 * 1000 * 1000 };

	nanosleep(&ts, NULL);
}

void events_coalesce(void)
{
	if (E.on && E.got && !wake_cold())
		gather();
	E.got = 0;
}

void events_settle(void)
{
	if (E.on && wake_cold())
		gather();
}

int events_members_only(void)
{
	return E.exact || E.memb;
}

int events_from_connector(void)
{
	return E.memb;
}

int events_resync_due(void)
{
	int r = E.resync;

	E.resync = 0;
	return r;
}

static int read_delayacct(void)
{
	char b[16];
	ssize_t n = rm_read_at(AT_FDCWD, "/proc/sys/kernel/task_delayacct", b, sizeof(b));

	if (n <= 0)
		return -1;
	return b[0] == '1' ? 1 : b[0] == '0' ? 0 : -1;
}

/* Wake-ups (wake.c) for tree selections only: --match, --in-cgroup and
 * "every process" take members from anyone's exec. */
static void wake_begin(void)
{
	const struct opts *o = E.h.o;

	if (o->sel == SEL_PIDS || o->sel == SEL_EXEC)
		wake_start(E.ep, E.cn, E.h.self);
}

/* The epoll set the tick waits on: the connector and what woke it
 * before.  0, or -1 with errno. */
static int ep_start(int *wake_fd)
{
	struct epoll_event ev = { .events = EPOLLIN };
	/* Exit records wait for the tick (the socket buffer holds many
	 * seconds of them); a fork or an exec wakes us, since a command line
	 * is only there while the process lives. */
	int fds[2] = { E.cn, *wake_fd };

	if ((E.ep = epoll_create1(EPOLL_CLOEXEC)) < 0)
		return -1;
	for (int i = 0; i < 2; i++) {
		if (fds[i] < 0)
			continue;
		ev.data.fd = fds[i];
		if (epoll_ctl(E.ep, EPOLL_CTL_ADD, fds[i], &ev) < 0)
			return -1;
	}
	E.on = 1;
	*wake_fd = E.ep;
	/* The batch buffers are touched now, not when a burst first fills
	 * them: a run's resident size is then the same at its start as at
	 * its end (a long test reads it for leaks). */
	memset(rbuf, 0, sizeof(rbuf));
	memset(cnbuf, 0, sizeof(cnbuf));
	return 0;
}

/*
 * Sampled mode with the connector allowed (any user since 6.6): a tree
 * selection (PIDs, --exec) takes its membership from fork and exec
 * events, as exact mode does, so a tick reads the members' own files
 * instead of listing /proc; the readings stay samples.  Silent when the
 * connector is refused: the mode is sampled either way.
 */
static void members_start(int *wake_fd)
{
	const struct opts *o = E.h.o;
	char why[160];

	if (o->sel != SEL_PIDS && o->sel != SEL_EXEC)
		return;
	E.cn = rm_pe_open(8 << 20, RM_PE_WANT_FORK | RM_PE_WANT_EXEC | RM_PE_WANT_COMM, why,
			  sizeof(why));
	if (E.cn < 0)
		return;
	if (ep_start(wake_fd) < 0) {
		close(E.cn);
		if (E.ep >= 0)
			close(E.ep);
		E.cn = E.ep = -1;
		E.on = 0;
		return;
	}
	E.memb = 1;
	wake_begin();
}

/* Does the regex of --match take this name? */
static int wanted(const char *comm)
{
	return E.h.o->sel == SEL_MATCH && regexec(&E.h.o->re, comm, 0, NULL, 0) == 0;
}

void events_start(const struct events_host *h, int *wake_fd)
{
	const char *no = getenv("RM_NO_EVENTS");
	char why[160];
	int memb = 0;

	E.h = *h;
	E.delayacct = read_delayacct();
	if (replay_start() == REPLAY_REPLAY) {
		/* The recorded session's rm-tree, clock and family; its forks
		 * are the job's. */
		const struct opts *o = E.h.o;
		const struct replay_head *r = replay_head();
		if (o->sel != SEL_PIDS || o->npids != 1 || o->pids[0] != r->self)
			errx(RM_EXIT_FAIL, "RM_EV_REPLAY: give the recorded rm-tree's PID, %d, alone",
			     (int)r->self);
		E.h.self = r->self;
		E.h.t0 = r->t0;
		E.family = r->family;
		E.delayacct = r->delayacct;
		E.replay = E.exact = E.on = 1;
		return;
	}
	if (no && strcmp(no, "1") == 0) {
		snprintf(E.why, sizeof(E.why), "RM_NO_EVENTS=1");
	} else if (strcmp(rm_proc_root(), "/proc") != 0) {
		/* A fixture tree: the kernel's events are not its processes. */
		snprintf(E.why, sizeof(E.why), "RM_PROC_ROOT is not /proc");
	} else if ((E.ts = rm_ts_open(8 << 20, &E.family, why, sizeof(why))) < 0) {
		snprintf(E.why, sizeof(E.why), "%s", why);
		memb = 1;
	} else if ((E.cn = rm_pe_open(8 << 20, RM_PE_WANT_FORK | RM_PE_WANT_EXEC | RM_PE_WANT_COMM |
					       RM_PE_WANT_EXIT, why, sizeof(why))) < 0) {
		snprintf(E.why, sizeof(E.why), "%s", why);
		close(E.ts);
		E.ts = -1;
	} else if (ep_start(wake_fd) < 0) {
		snprintf(E.why, sizeof(E.why), "epoll: %s", strerror(errno));
		E.on = 0;
	} else {
		E.exact = 1;
		wake_begin();
	}
	/* Said once on stderr: with --exec unless --job (rm-run: its job
	 * row says it, and stderr is CMD's); a stream says it only to a
	 * terminal (rm-monitor's log stays quiet; --stats records it). */
	const struct opts *o = E.h.o;
	int say = o->sel == SEL_EXEC ? !o->job : (!o->stats && isatty(STDERR_FILENO));
	if (!E.exact) {
		if (E.cn >= 0)
			close(E.cn);
		if (E.ts >= 0)
			close(E.ts);
		if (E.ep >= 0)
			close(E.ep);
		E.cn = E.ts = E.ep = -1;
		if (memb)
			members_start(wake_fd);
		if (say)
			warnx("sampled mode: %s", E.why);
	} else if (say) {
		warnx("exact mode (proc connector, taskstats)");
	}
}

int events_replaying(void)
{
	return E.replay;
}

int events_replay_done(void)
{
	return replay_done();
}

int events_excluded_pid(const struct opts *o, int pid)
{
	for (int i = 0; i < o->nexclude; i++)
		if (o->exclude[i] == pid)
			return 1;
	return 0;
}

/* Is path (as /proc/PID/cgroup writes it) want or below it? */
static int under(const char *path, size_t plen, const char *want)
{
	size_t wl = strlen(want);

	if (wl == 1 && want[0] == '/')
		return 1;
	return plen >= wl && memcmp(path, want, wl) == 0 && (plen == wl || path[wl] == '/');
}

int events_in_cgroup(const struct opts *o, int pid)
{
	char buf[4096];
	char *line, *save = NULL;

	if (!o->in_cgroup)
		return 0;
	if (rm_pfile_read(NULL, pid, "cgroup", buf, sizeof(buf), 0) <= 0)
		return 0;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		/* ID:CONTROLLERS:PATH */
		char *c1 = strchr(line, ':'), *c2, *ctl, *csave = NULL;
		char full[4096];
		if (!c1 || !(c2 = strchr(c1 + 1, ':')))
			continue;
		*c2 = '\0';
		if (under(c2 + 1, strlen(c2 + 1), o->in_cgroup))
			return 1;
		/* Under /sys/fs/cgroup a v1 hierarchy is a directory named
		 * after its controllers (and links named after each one). */
		snprintf(full, sizeof(full), "/%s%s", c1 + 1, strcmp(c2 + 1, "/") ? c2 + 1 : "");
		if (c1[1] && under(full, strlen(full), o->in_cgroup))
			return 1;
		for (ctl = strtok_r(c1 + 1, ",", &csave); ctl; ctl = strtok_r(NULL, ",", &csave)) {
			if (strncmp(ctl, "name=", 5) == 0)
				ctl += 5;
			snprintf(full, sizeof(full), "/%s%s", ctl, strcmp(c2 + 1, "/") ? c2 + 1 : "");
			if (under(full, strlen(full), o->in_cgroup))
				return 1;
		}
	}
	return 0;
}

/* Is n an rm-tree (its comm; its parent's events may not have named it)?
 * Read once per program: an exec forgets it. */
static int is_rm_tree(struct rm_pnode *n)
{
	char comm[RM_COMM_MAX];
	ssize_t len;

	if (!n->rmtree_known) {
		len = rm_pfile_read(NULL, n->pid, "comm", comm, sizeof(comm), 0);
		n->rmtree = len == 8 && memcmp(comm, "rm-tree\n", 8) == 0;
		n->rmtree_known = len > 0;
	}
	return n->rmtree;
}

/* An excluded rm-tree (not this one) forks only the job of its --exec
 * (rm-run's too): a monitor's other children are its helpers, but that
 * job is no monitor, and is the build's where the monitors above it were
 * started by the build (monitor_in). */
int events_monitor_job(struct rm_pnode *p)
{
	return table_is_excluded(p) && p->pid != E.h.self && is_rm_tree(p);
}

/* What a stat read says of n: parent, group, state, name (its main
 * thread's, as comm's). */
void events_take_stat(struct rm_pnode *n, const struct rm_pstat *st)
{
	n->ppid = st->ppid;
	n->pgrp = st->pgrp;
	n->state = st->state;
	memcpy(n->comm, st->comm, sizeof(n->comm));
	n->comm_ok = 1;
}

/* A node for pid, read from /proc now (start 0 when it is already gone),
 * or, lazy, not read: a member's child at its fork (fork_stat). */
struct rm_pnode *events_add_node(int pid, const struct rm_pnode *parent, int lazy)
{
	struct rm_pstat st;
	struct rm_pnode *n, *pp;
	int ok = !lazy && rm_pstat_read(pid, &st) == 0;

	n = table_meet_decided(pid, ok ? st.starttime : 0);
	if (ok) {
		events_take_stat(n, &st);
	} else if (parent) {
		/* A fork's child is named as its parent, until it execs. */
		n->ppid = parent->pid;
		n->pgrp = parent->pgrp;
		memcpy(n->comm, parent->comm, sizeof(n->comm));
		n->comm_ok = parent->comm_ok;
	}
	/* --exclude-tree: an event may bring a process before any scan has
	 * met it (events_decide sees only what a scan meets). */
	pp = table_find(n->ppid);
	if (events_excluded_pid(E.h.o, pid) ||
	    (pp && pp != n && table_is_excluded(pp) && !events_monitor_job(pp))) {
		table_exclude(n);
		if (pp && pp != n && table_is_monitor_in(pp))
			table_monitor_in(n);
	}
	return n;
}

/*
 * Members' children whose stat was not read at their fork: a short
 * process has ended by the end of the pump (its record read in it), and
 * its row needs no stat (its start is the fork event's time).  Those
 * still there are read then (fork_stat), before any scan compares their
 * start time, and so is one whose exec is read while it lives.
 */
enum { PEND_MAX = 4096 };
static int pend[PEND_MAX], npend;

/*
 * Members whose command line is read at the end of the batch of events,
 * not at the fork or exec event that asked for it: a short process's exit
 * event is most often in the same batch (a build's /bin/true, sed or echo), and its
 * command line is gone then, as its memory is.  Its read (an open, a
 * read and a close, 14 us of CPU a system call on a hypervisor's guest)
 * is not made for nothing.  They are read once the batch of events that
 * asked is handled (drain_cn), before any record: a process alive then
 * has its command line in its row, as when it was read at its event.  A
 * child forked in the same batch reads its parent's first (cmd_now).
 */
static int cmd_pend[PEND_MAX], ncmd_pend;

/*
 * Is p, n's parent at its fork, alive and not exiting?  A child changes
 * parent only in its parent's exit (reparented to a subreaper or init),
 * so a process on n's pid with another parent while p lives is not n:
 * it took the pid once n ended (a foreign row, with n's own lost, under
 * a fork storm).  An orphan whose parent has gone or is exiting is n.
 */
static int parent_lives(int ppid)
{
	struct rm_pnode *p = table_find(ppid);
	struct rm_pstat ps;

	return p && p->start && !table_is_ended(p) && rm_pstat_read(ppid, &ps) == 0 &&
	       ps.starttime == p->start && ps.state != 'Z' && ps.state != 'X' &&
	       !(ps.flags & PF_EXITING);
}

/* n's stat, not read at its fork: its start time (the pid's identity),
 * parent, group, state and name.  A process on the pid that is not n (the
 * pid came round) is not taken for it: not one of another parent while
 * n's parent lives, not one that did not start at n's fork event.  n then
 * keeps the fork's time.  1 when read: its name is then stat's, the main
 * thread's, as comm's. */
static int fork_stat(struct rm_pnode *n)
{
	struct rm_pstat st;
	double at;

	if (n->start || !n->has_start_el || table_is_ended(n) || rm_pstat_read(n->pid, &st) < 0)
		return 0;
	if (st.ppid != n->ppid && parent_lives(n->ppid))
		return 0;
	at = (double)st.starttime / (double)rm_clk_tck() - (E.h.boot0 ? *E.h.boot0 : 0);
	if (at < n->start_el - 0.5 || at > n->start_el + 0.5)
		return 0;
	n->start = st.starttime;
	events_take_stat(n, &st);
	return 1;
}

static void fork_stat_pending(void)
{
	for (int i = 0; i < npend; i++) {
		struct rm_pnode *n = table_find(pend[i]);
		if (n)
			fork_stat(n);
	}
	npend = 0;
}

static void cmd_pending(void);

/* n's command line, read once the batch's events are in. */
static void cmd_later(struct rm_pnode *n)
{
	if (n->cmd_due)
		return;
	if (ncmd_pend == PEND_MAX)
		cmd_pending();
	n->cmd_due = 1;
	n->cmd_read = 1;
	cmd_pend[ncmd_pend++] = n->pid;
}

/* The read cmd_later put off, now (before a child takes it). */
static void cmd_now(struct rm_pnode *n)
{
	if (!n || !n->cmd_due)
		return;
	n->cmd_due = 0;
	if (!n->has_kend && !table_is_ended(n))
		events_read_cmd(n);
}

static void cmd_pending(void)
{
	for (int i = 0; i < ncmd_pend; i++)
		cmd_now(table_find(cmd_pend[i]));
	ncmd_pend = 0;
}

static void read_comm(struct rm_pnode *n)
{
	char comm[RM_COMM_MAX];
	ssize_t len = rm_pfile_read(NULL, n->pid, "comm", comm, sizeof(comm), 0);

	if (len > 0) {
		/* /proc/PID/comm is the main thread's name: at an exec the
		 * file's base name. */
		if (comm[len - 1] == '\n')
			comm[len - 1] = '\0';
		memcpy(n->comm, comm, sizeof(n->comm));
		n->comm_ok = 1;
	}
}

/* Its command line and name, read while it lives.  The command line
 * first: empty, the process is gone or a zombie (its memory freed), and
 * its name is its exit record's, so comm is not read for nothing (at a
 * high fork rate most short processes are gone by their exec event). */
void events_read_cmd(struct rm_pnode *n)
{
	char buf[4096];
	ssize_t len;

	len = rm_pfile_read(NULL, n->pid, "cmdline", buf, sizeof(buf), 0);
	if (len > 0) {
		/* Its start names it to containers.c; stat gives its name. */
		if (!fork_stat(n))
			read_comm(n);
		containers_cmdline(n, buf, len);
		/* Read while it lives: emulated or not is known now. */
		n->emulated = (unsigned)cmd_emulated(n->pid, buf, (size_t)len, n->comm);
		free(n->cmd);
		n->cmd = cmd_dup(buf, len);
	}
	n->cmd_read = 1;
	n->cmd_due = 0;
}

/*
 * A process of a container the build started (containers.c ties it):
 * the build's, as a member's fork is.  A container's init and what it
 * runs are children of containerd-shim (or conmon), not of the watched
 * tree, so nothing else would make them members.  A process already
 * followed, excluded (another monitor), ended or not alive is left.
 */
void events_adopt(int pid)
{
	struct rm_pnode *n = table_find(pid);
	struct rm_pstat st;

	/* Every tick lists the container's processes again: the followed
	 * ones cost a lookup, no read. */
	if (pid <= 0 || (n && !table_is_ended(n) && (table_is_member(n) || table_is_excluded(n))))
		return;
	if (rm_pstat_read(pid, &st) < 0 || st.state == 'Z' || st.state == 'X' ||
	    (st.flags & RM_PF_KTHREAD))
		return;
	if (n && (n->start != st.starttime || table_is_ended(n) || table_is_outsider(n)))
		return;  /* (a reused PID: the next scan settles it) */
	if (!n)
		n = events_add_node(pid, table_find(st.ppid), 0);
	if (table_is_excluded(n))
		return;
	table_join(n);
	events_read_cmd(n);
	E.mev++;
}

/* Would the selection take this process on its own (not as a child)? */
static int selected(struct rm_pnode *n)
{
	const struct opts *o = E.h.o;

	switch (o->sel) {
	case SEL_ALL:
		return 1;
	case SEL_MATCH:
		return wanted(n->comm);
	case SEL_CGROUP:
		return events_in_cgroup(o, n->pid);
	default:
		return 0;
	}
}

/*
 * A member's child, at its fork: it runs its parent's program (the
 * kernel copied its memory, argv with it), so it takes the parent's
 * command line and emulated flag instead of reading /proc three times
 * for them (comm, cmdline, binfmt_misc): most children exec at once and
 * their exec reads the new program's.  cmd_read stays 0, so a child
 * that lives to the tick without an exec is read there (probe.c's
 * take), as its own.  Only a member parent whose command line was read
 * lends it: what rm-tree itself forks, a monitor's job and the child of
 * an ended parent are read as they are.  1 when taken.
 */
static int inherit_cmd(struct rm_pnode *n, struct rm_pnode *p)
{
	if (!p || p->pid == E.h.self || !table_is_member(p) || table_is_ended(p) ||
	    table_is_excluded(p))
		return 0;
	cmd_now(p);
	if (!p->cmd)
		return 0;
	free(n->cmd);
	if (!(n->cmd = strdup(p->cmd)))
		tree_oom();
	n->emulated = p->emulated;
	n->cmd_read = 0;
	return 1;
}

/* E.ends's clock: milliseconds of the stream, as of the pump. */
static uint32_t ends_now(void)
{
	return (uint32_t)(E.el * 1000);
}

static void ends_forget(void);

/* n's fork event is read: the records on its pid still to come before
 * its own are those of the processes whose exit was read before it. */
static void forked(struct rm_pnode *n)
{
	n->forked = 1;
	rm_older_take(&n->older, &E.ends, n->pid);
}

/* Is this record (of a main thread: lead; its process's last: final) an
 * older process's than n?  Passes it over in n's counts if so. */
static int older(struct rm_pnode *n, int lead, int final)
{
	return n && n->forked && rm_older_pass(&n->older, lead, final);
}

/*
 * Is n an outsider only because a scan met it as a zombie?  A scan takes
 * a zombie for a member's only when its parent is one already; when the
 * parent's own fork event was not read yet either (a chain of shells
 * forked during the first scan, under load), the zombie was left out and
 * its record dropped.  Its fork event, from a member, says whose it is.
 * Not a member that a scan found gone (was_member: its copy is parked
 * for its record; joining again gave it a second, sampled row at the
 * end), nor a kernel thread, which no member forks.
 */
static int met_zombie(const struct rm_pnode *n)
{
	return (n->state == 'Z' || n->state == 'X') && !table_was_member(n);
}

static void on_fork(const struct rm_pe *e)
{
	const struct opts *o = E.h.o;
	struct rm_pnode *p = table_find(e->ptgid), *n;
	pid_t self = E.h.self;
	int member, excluded, job_of_monitor = 0, lazy;

	if (e->pid != e->tgid)
		return;  /* a thread */
	/* Its parent's command line first, if its read waits for the end of
	 * the batch: it may be a monitor's, whose children are not the
	 * build's (containers_cmdline). */
	cmd_now(p);
	excluded = p && table_is_excluded(p);
	if (excluded && events_monitor_job(p)) {
		excluded = 0;
		job_of_monitor = table_is_monitor_in(p);
	}
	/* A fork is reported before its parent's end, but the parent's end
	 * may be met first (a scan, or a record read in the same pump): a
	 * member that has ended still hands membership to what it forked. */
	member = !excluded &&
		 (((p && ((table_is_member(p) && !table_is_ended(p)) || table_was_member(p))) ||
		   table_parked_find(e->ptgid)) &&
		  !(o->sel == SEL_PIDS && o->no_children));
	member = member || (!excluded && self > 0 && e->ptgid == self) ||
		 (job_of_monitor && o->sel != SEL_MATCH && o->sel != SEL_ALL);
	n = table_find(e->pid);
	if (n && !n->forked && !n->has_kend) {
		struct rm_pstat st;
		int gone = rm_pstat_read(e->pid, &st) < 0;
		/* A scan may have met the child before its event came: the
		 * same process (same start time, or gone by now) stays.  In
		 * sampled mode only the members are read between listings: a
		 * non-member not met by the last scan may be an old process
		 * whose pid this one has taken. */
		if ((gone && (E.exact || table_is_member(n) || n->seen == table_gen())) ||
		    (!gone && st.starttime == n->start)) {
			forked(n);
			if (!table_is_member(n) && !table_is_excluded(n) && !table_is_ended(n) &&
			    member && (!table_is_outsider(n) || met_zombie(n)))
				table_join(n);
			return;
		}
	}
	if (n) {
		/* The pid was another process's, ended unnoticed: a node
		 * whose fork or exit event was read is never the process a
		 * later fork event names. */
		table_reused(n, E.el);
	}
	if (!member && !excluded && o->sel != SEL_ALL && o->sel != SEL_CGROUP)
		return;  /* the scan meets it, if it lives that long */
	/* A member's child (not --exec's command: the reaper reads that)
	 * is read at the pump's end, unless it ended by then. */
	lazy = member && !excluded && p && table_is_member(p) && !table_is_ended(p) &&
	       !table_is_excluded(p) && p->pid != self && ev_el(e->ts_ns) >= 0;
	if (lazy && npend == PEND_MAX)
		fork_stat_pending();
	n = events_add_node(e->pid, p, lazy);
	forked(n);
	if (lazy)
		pend[npend++] = e->pid;
	if (!n->start && !n->has_start_el && ev_el(e->ts_ns) >= 0) {
		/* Gone before its stat was read: the fork's own time. */
		n->start_el = ev_el(e->ts_ns);
		n->has_start_el = 1;
	}
	if (excluded || table_is_excluded(n)) {
		table_exclude(n);
		return;
	}
	if (member || selected(n)) {
		table_join(n);
		if (!inherit_cmd(n, p))
			cmd_later(n);
		E.mev++;
	}
}

static void on_exec(const struct rm_pe *e)
{
	struct rm_pnode *n = table_find(e->tgid);
	struct rm_pnode *pk = table_parked_find(e->tgid);

	/* Ended, its record not read yet: the command line kept from its
	 * fork was its parent's. */
	if (pk && e->what == RM_PE_EXEC) {
		free(pk->cmd);
		pk->cmd = NULL;
	}
	if (n)
		n->rmtree_known = 0;  /* a new program, or a new name */
	if (n && (table_is_excluded(n) || table_is_ended(n)))
		return;
	if (n && table_is_member(n)) {
		/* A new program: the command line read at the fork was the
		 * parent's.  Unknown is better than wrong when it is gone. */
		free(n->cmd);
		n->cmd = NULL;
		if (e->what == RM_PE_EXEC)
			n->comm_ok = 0;
		cmd_later(n);
		/* The main thread renamed itself (PR_SET_NAME): the event
		 * says to what, whenever it is read. */
		if (e->what == RM_PE_COMM) {
			memcpy(n->comm, e->comm, sizeof(e->comm));
			n->comm_ok = 1;
		}
		E.mev++;
		return;
	}
	if (e->what == RM_PE_EXEC && containers_pid_tied(e->tgid)) {
		/* docker exec into a container of the build, or its init
		 * once the container is known to be the build's. */
		events_adopt(e->tgid);
		return;
	}
	if (E.h.o->sel != SEL_MATCH && E.h.o->sel != SEL_CGROUP &&
	    E.h.o->sel != SEL_ALL)
		return;
	if (!n)
		n = events_add_node(e->tgid, NULL, 0);
	else if (n->state == 'Z' || n->state == 'X')
		return;
	if (table_is_excluded(n))
		return;
	/* Its name decides (--match); its command line is read only once
	 * it is selected: another program's exec costs no cmdline read, and
	 * its command line is not kept (a heavy outsider's is read by
	 * exact_outsiders, once). */
	if (e->what == RM_PE_COMM) {
		memcpy(n->comm, e->comm, sizeof(e->comm));
		n->comm_ok = 1;
	} else {
		n->comm_ok = 0;
		free(n->cmd);
		n->cmd = NULL;
		n->cmd_read = 0;
		read_comm(n);
	}
	if (selected(n)) {
		table_join(n);
		if (!n->cmd_read)
			events_read_cmd(n);
	}
}

/* A process ended: the kernel's time of it, for its row (the record
 * comes on the other socket, before or after). */
static void on_exit_event(const struct rm_pe *e)
{
	struct rm_pnode *n = table_parked_find(e->tgid);
	double el = ev_el(e->ts_ns);

	if (E.exact && !E.uncounted && rm_pidctr_exit(&E.ends, e->tgid, ends_now()) < 0)
		tree_oom();

	if (!n)
		n = table_find(e->tgid);
	/* Every node: a later fork event on its pid is another process's. */
	if (!n || el < 0 || n->has_kend)
		return;
	n->kend_el = el;
	n->has_kend = 1;
}

static void on_pe(void *arg, const struct rm_pe *e)
{
	(void)arg;
	if (e->what == RM_PE_FORK)
		on_fork(e);
	else if (e->what == RM_PE_EXEC)
		on_exec(e);
	else if (e->what == RM_PE_COMM && e->pid == e->tgid)
		on_exec(e);
	else if (e->what == RM_PE_EXIT && e->pid == e->tgid)
		on_exit_event(e);
}

/* The records of one message, folded. */
struct acc {
	struct rm_ts r;          /* the last task's record */
	int have, final;
	uint64_t cpu_us, majflt, rd, wr, hiwater;
	uint64_t delay[5];
	int agg_delay;
};

static struct acc msg[8];
static int nmsg;

static void fold_into(struct rm_pnode *f, const struct rm_ts *r)
{
	/* The main thread's own record, at its exit: the process's name
	 * (a thread of it may outlive it under another name). */
	if (r->pid == r->tgid && r->comm[0]) {
		snprintf(f->comm, sizeof(f->comm), "%s", r->comm);
		f->comm_ok = 1;
	}
	f->ticks += r->utime_us + r->stime_us;
	f->majflt += r->majflt;
	f->read_kib += r->read_bytes;
	f->write_kib += r->write_bytes;
	if (r->hiwater_rss_kib > f->peak_kib)
		f->peak_kib = r->hiwater_rss_kib;
	f->delay_ms[0] += (double)r->cpu_delay;
	f->delay_ms[1] += (double)r->blkio_delay;
	f->delay_ms[2] += (double)r->swapin_delay;
	f->delay_ms[3] += (double)r->freepages_delay;
	f->delay_ms[4] += (double)r->thrashing_delay;
}

static void on_ts(void *arg, const struct rm_ts *r)
{
	(void)arg;
	if (r->tgid_aggr) {
		/* The aggregate after the last task's record. */
		for (int i = nmsg - 1; i >= 0; i--) {
			if (msg[i].final && msg[i].r.tgid == r->id) {
				msg[i].delay[0] = r->cpu_delay;
				msg[i].delay[1] = r->blkio_delay;
				msg[i].delay[2] = r->swapin_delay;
				msg[i].delay[3] = r->freepages_delay;
				msg[i].delay[4] = r->thrashing_delay;
				msg[i].agg_delay = r->has_delay;
				break;
			}
		}
		return;
	}
	if (nmsg == (int)(sizeof(msg) / sizeof(msg[0])) || !r->has_basic)
		return;
	struct acc *a = &msg[nmsg++];
	memset(a, 0, sizeof(*a));
	a->r = *r;
	if (!r->has_tgid)
		a->r.tgid = r->pid;
	a->have = 1;
	a->final = (r->flags & RM_TS_AGROUP) != 0;
}

/*
 * n's end on the kernel's clock: its exit event's time; else, from the
 * leader's own record, its start plus ac_etime (a thread's record counts
 * from the thread's start); else read, the time it was met gone.  A
 * start not known is the end less ac_etime.
 */
static double kernel_end(struct rm_pnode *n, const struct rm_ts *r, double read)
{
	double end = read;

	if (n->has_kend) {
		end = n->kend_el;
	} else if (r->pid == r->tgid && (n->start || n->has_start_el)) {
		/* stat's starttime: CLOCK_BOOTTIME clock ticks (as rows.c). */
		double start = !n->start ? n->start_el
			: (double)n->start / (double)rm_clk_tck() - (E.h.boot0 ? *E.h.boot0 : 0);
		if (start + (double)r->etime_us / 1e6 < read)
			end = start + (double)r->etime_us / 1e6;
		/* stat's start is whole clock ticks, up to one before the
		 * fork: a process of a millisecond born in the stream's first
		 * tick would end before 0 (a survivor's row, with no end). */
		if (end < 0)
			end = 0;
	}
	if (!n->start && !n->has_start_el) {
		n->start_el = end - (double)r->etime_us / 1e6;
		if (n->start_el < 0)
			n->start_el = 0;
		n->has_start_el = 1;
	}
	return end;
}

/*
 * The name of the process whose last task's record is r (f: what its
 * threads' records left), into n->comm.  taskstats sends the process's
 * record with its last task's, which carries that task's name: a
 * multi-threaded program's may be a worker's (rustc's "ctrl-c", so the
 * rustc unit vanished).  The name is the main thread's: its own record
 * (pid == tgid, now or before), else what was read from the process
 * (exec, /proc, its comm events), and the last task's only where nothing
 * else is known (an exec read after the process was gone).
 */
static void exit_name(struct rm_pnode *n, const struct rm_ts *r, const struct rm_pnode *f)
{
	if (r->comm[0] && r->pid == r->tgid)
		snprintf(n->comm, sizeof(n->comm), "%s", r->comm);
	else if (f && f->comm_ok)
		memcpy(n->comm, f->comm, sizeof(n->comm));
	else if (!(n->comm_ok && n->comm[0]) && r->comm[0])
		snprintf(n->comm, sizeof(n->comm), "%s", r->comm);
}

/* n's row from its record (a) and its threads' (f); elsewhere: an
 * --elsewhere row. */
static void put_row(struct rm_pnode *n, const struct acc *a, const struct rm_pnode *f,
		    double el, int elsewhere)
{
	const struct rm_ts *r = &a->r;
	uint64_t cpu = r->utime_us + r->stime_us, maj = r->majflt;
	uint64_t rd = r->read_bytes, wr = r->write_bytes, hw = r->hiwater_rss_kib;
	double d[5] = { (double)r->cpu_delay, (double)r->blkio_delay, (double)r->swapin_delay,
			(double)r->freepages_delay, (double)r->thrashing_delay };
	long hz = rm_clk_tck();

	if (f) {
		cpu += f->ticks;
		maj += f->majflt;
		rd += f->read_kib;
		wr += f->write_kib;
		if (f->peak_kib > hw)
			hw = f->peak_kib;
		for (int i = 0; i < 5; i++)
			d[i] += f->delay_ms[i];
	}
	if (a->agg_delay) {
		for (int i = 0; i < 5; i++)
			d[i] = (double)a->delay[i];
	}
	n->exact = 1;
	if (r->has_mem) {
		n->peak_kib = hw;
		if (!n->has_peak)
			n->peak_at = -1;
		n->has_peak = 1;
	}
	n->ticks = (cpu * (uint64_t)hz + 500000) / 1000000;
	n->cpu_us = cpu;
	n->has_ticks = 1;
	n->exit = rm_exit_column((int)r->exitcode);
	n->uid = r->uid;
	n->has_uid = 1;
	exit_name(n, r, f);
	if (!n->ppid)
		n->ppid = (int)r->ppid;
	n->majflt = maj;
	n->has_majflt = 1;
	n->has_io = r->has_io;
	n->read_kib = rd / 1024;
	n->write_kib = wr / 1024;
	n->has_delay = E.delayacct == 1 && r->has_delay && r->has_delay2;
	for (int i = 0; i < 5; i++)
		n->delay_ms[i] = d[i] / 1e6;
	double end = kernel_end(n, r, n->end_el > 0 ? n->end_el : el);
	if (elsewhere)
		table_elsewhere_row(n, end);
	else
		table_row(n, end);
}

static void finalize(const struct acc *a, double el)
{
	const struct opts *o = E.h.o;
	int tgid = (int)a->r.tgid, lead = a->r.pid == a->r.tgid;
	struct rm_pnode *n = table_find(tgid);
	struct rm_pnode *p = table_parked_find(tgid);
	struct rm_pnode *f = table_fold_find(tgid);
	/* The record of a process older than the parked one, or than the
	 * one met: of neither (n is then younger than p). */
	int pold = older(p, lead, 1), nold = older(n, lead, 1);

	if (p && pold)
		p = n = NULL;
	else if (nold && !p)
		n = NULL;
	if (p) {
		put_row(p, a, f, el, 0);
		table_parked_forget(p);
		if (n && !table_is_member(n) && !nold)
			table_done(n);
	} else if (n && table_is_member(n) && !table_is_ended(n)) {
		n->end_el = 0;
		put_row(n, a, f, el, 0);
		table_member_done(n);
	} else if (!(n && (table_is_excluded(n) || table_is_ended(n)))) {
		struct rm_pnode tmp;
		int member;
		memset(&tmp, 0, sizeof(tmp));
		tmp.pid = tgid;
		tmp.stat_fd = tmp.status_fd = tmp.dir_fd = -1;
		tmp.exit = -1;
		if (n) {
			memcpy(tmp.comm, n->comm, sizeof(tmp.comm));
			tmp.comm_ok = n->comm_ok;
		}
		exit_name(&tmp, &a->r, f);
		/* Met by no scan or event as a member: --match and "every
		 * process" decide by the name at exit; a kernel thread (no
		 * memory of its own, or met as one) is never listed. */
		member = !(n && table_is_outsider(n)) && !events_excluded_pid(o, tgid) &&
			 a->r.hiwater_rss_kib > 0 &&
			 (o->sel == SEL_ALL || (o->sel == SEL_MATCH && wanted(tmp.comm)));
		if (member) {
			table_joined_at_exit();
			put_row(&tmp, a, f, el, 0);
		} else if (o->elsewhere && a->r.has_mem && !(n && table_is_excluded(n))) {
			uint64_t hw = a->r.hiwater_rss_kib;
			if (f && f->peak_kib > hw)
				hw = f->peak_kib;
			if (hw >= o->elsewhere_kib) {
				if (n) {
					tmp.start = n->start;
					tmp.ppid = n->ppid;
					tmp.cmd = n->cmd;
					tmp.emulated = n->emulated;
				}
				put_row(&tmp, a, f, el, 1);
			}
		}
		if (n)
			table_done(n);
	}
	if (f)
		table_fold_forget(f);
}

static void handle_msg(double el)
{
	for (int i = 0; i < nmsg; i++) {
		struct acc *a = &msg[i];
		int tgid = (int)a->r.tgid, lead = a->r.pid == a->r.tgid;
		if (!a->r.has_tgid && !E.uncounted) {
			/* Every record looks like a main thread's. */
			E.uncounted = 1;
			ends_forget();
		}
		if (!E.uncounted && rm_pidctr_record(&E.ends, tgid, lead, a->final, ends_now()) < 0)
			tree_oom();
		if (a->final) {
			finalize(a, el);
		} else {
			/* A thread of a live process: keep its share.  A main
			 * thread that ended before its threads may be an older
			 * process's. */
			if (lead) {
				older(table_parked_find(tgid), 1, 0);
				older(table_find(tgid), 1, 0);
			}
			fold_into(table_fold_get(tgid), &a->r);
		}
	}
	nmsg = 0;
}

/* A record is queued before its exit event, so one still to come a
 * second after its exit event was read was lost (or sent before we
 * listened); an exit event may trail its record by as long as the
 * process takes to give back its memory and files, so one still to come
 * is given half a minute; so is a main thread's record after its
 * process's last.  A last record still to come after its main thread's
 * waits as long as its process's threads live. */
static int ends_keep(struct rm_pidctr_e *c, void *arg)
{
	uint32_t age = ends_now() - c->stamp;

	(void)arg;
	if ((c->a > 0 && age > 1000) || (c->a < 0 && age > 30000))
		c->a = 0;
	if (c->b < 0 && age > 30000)
		c->b = 0;
	return c->a || c->b;
}

/* Events were lost: what was counted no longer says which is which. */
static void ends_forget(void)
{
	struct rm_pnode *n;
	size_t it = 0;

	rm_pidctr_clear(&E.ends);
	while ((n = table_next(&it)) != NULL)
		memset(&n->older, 0, sizeof(n->older));
}

enum { CN_EACH = 512, TS_EACH = 4096, BATCH = 64 };

static void drain_cn(int *lost)
{
	size_t lens[BATCH];

	for (;;) {
		int got = replay_recvm(REPLAY_CN, E.cn, cnbuf, CN_EACH, BATCH, lens);
		if (got < 0 && errno == ENOBUFS) {
			*lost = 1;
			ends_forget();
			continue;
		}
		if (got <= 0)
			break;
		for (int i = 0; i < got; i++)
			rm_pe_parse(cnbuf + (size_t)i * CN_EACH, lens[i], on_pe, NULL);
		/* The batch's exit events are in: the others' command lines
		 * now, before any record is read (its row names it). */
		cmd_pending();
		E.got++;
		if (got < BATCH)
			break;
	}
}

void events_pump(double el)
{
	size_t lens[BATCH];
	int lost = 0;

	if (!E.on)
		return;
	if (E.exact) {
		struct replay_head now = { E.h.self, E.family, E.delayacct, E.h.t0 };
		el = replay_pump(el, &now);
	}
	E.el = el;
	/* Forks first: a record's process was forked before it ended.
	 * Up to 64 datagrams a system call: a connector event is about
	 * 100 bytes, a taskstats message (a task's record and its
	 * process's aggregate) about 1 KiB. */
	drain_cn(&lost);
	for (; E.ts >= 0 || E.replay;) {
		int got = replay_recvm(REPLAY_TS, E.ts, rbuf, TS_EACH, BATCH, lens);
		if (got < 0 && errno == ENOBUFS) {
			/* Records lost: what was counted no longer holds, for
			 * the records after them too. */
			lost = 1;
			ends_forget();
			continue;
		}
		if (got <= 0)
			break;
		E.got++;
		/* These processes' fork and exec events were sent before
		 * they ended, but may have come after the drain above: read
		 * them before their rows (once a batch). */
		drain_cn(&lost);
		for (int i = 0; i < got; i++) {
			nmsg = 0;
			rm_ts_parse(rbuf + (size_t)i * TS_EACH, lens[i], E.family, on_ts, NULL, NULL);
			handle_msg(el);
		}
		if (got < BATCH)
			break;
	}
	/* Hot or cold (wake.c), once the records are read. */
	for (int w = wake_pumped(E.mev, lost, E.resync); w == WAKE_REDRAIN;
	     w = wake_redrained(E.mev, lost))
		drain_cn(&lost);
	E.mev = 0;
	if (lost) {
		E.lost++;
		E.resyncs++;
		E.resync = 1;
	} else if (E.ends.n) {
		rm_pidctr_sweep(&E.ends, ends_keep, NULL);
	}
	fork_stat_pending();
	/* Members that ended before this pump and have no record: lost. */
	table_parked_rows();
}

void events_decide(struct rm_pnode **v, size_t nv)
{
	const struct opts *o = E.h.o;
	size_t round;

	if (o->nexclude) {
		do {
			round = 0;
			for (size_t i = 0; i < nv; i++) {
				struct rm_pnode *c = v[i], *p;
				if (table_is_excluded(c))
					continue;
				if (events_excluded_pid(o, c->pid) ||
				    ((p = table_find(c->ppid)) && table_is_excluded(p) && p != c)) {
					table_exclude(c);
					round++;
				}
			}
		} while (round);
	}
	if (o->sel == SEL_CGROUP)
		for (size_t i = 0; i < nv; i++)
			if (!table_is_outsider(v[i]) && !table_is_member(v[i]) &&
			    events_in_cgroup(o, v[i]->pid))
				table_select(v[i]);
}

void events_stats(int final)
{
	const struct opts *o = E.h.o;
	struct rm_outfile of = { .fd = -1 };
	char why[256] = "", row[4800];
	int len;

	if (final && E.lost)
		tree_warnx("%llu times the kernel dropped events (socket buffer full); "
			   "each was followed by a /proc scan", (unsigned long long)E.lost);
	if (!o->stats)
		return;
	len = snprintf(row, sizeof(row), "mode,events_lost,resyncs,delayacct,taskstats_error,"
		       "pid_ns,cgroup_ns,cgroup\n"
		       "%s,%llu,%llu,", E.exact ? "exact" : "sampled",
		       (unsigned long long)E.lost, (unsigned long long)E.resyncs);
	if (E.delayacct >= 0)
		len += snprintf(row + len, sizeof(row) - (size_t)len, "%d", E.delayacct);
	len += snprintf(row + len, sizeof(row) - (size_t)len, ",");
	if (!E.exact) {
		char q[200];
		rm_sanitize(E.why, strlen(E.why), q, sizeof(q));
		/* no commas or quotes in a reason: keep the row plain */
		for (char *c = q; *c; c++)
			if (*c == ',' || *c == '"')
				*c = ';';
		len += snprintf(row + len, sizeof(row) - (size_t)len, "%s", q);
	}
	len += snprintf(row + len, sizeof(row) - (size_t)len, "%s\n", where_cols(o));
	/* Written whole each time, beside its target, never through a link. */
	if (rm_out_open(o->stats, &of, why, sizeof(why)) < 0 ||
	    write(of.fd, row, (size_t)len) != len) {
		if (!why[0])
			snprintf(why, sizeof(why), "%s", strerror(errno));
		if (of.fd >= 0)
			rm_out_abort(&of);
		tree_warnx("cannot write the stats file '%s': %s", o->stats, why);
		return;
	}
	if (rm_out_commit(&of, why, sizeof(why)) < 0)
		tree_warnx("cannot write the stats file '%s': %s", o->stats, why);
}
