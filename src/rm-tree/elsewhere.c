/*
 * rm-tree --elsewhere: the heavy processes outside the selection, named
 * by user and command, so that a build short of memory can see what else
 * held it.  In exact mode their rows come from the exit records
 * (events.c's finalize writes a row for an outsider's record over the
 * threshold, with the node made here); this file finds them while they
 * live, to read their command lines and users, which the records do not
 * carry.  In sampled mode it reads the outsiders a scan met every tenth
 * tick, and writes the rows of those that ended (elsewhere_outsider_gone)
 * and, at the end, of those still alive.
 */
#include <stdlib.h>
#include <unistd.h>

#include "procev.h"
#include "procfs.h"
#include "tree.h"

static struct {
	const struct opts *o;
	pid_t self;              /* --exec: rm-tree's pid, else 0 */
	pid_t me;                /* getpid(), asked once */
	long ticks;              /* elsewhere_scan calls so far */
} W;

void elsewhere_start(const struct opts *o, pid_t self)
{
	W.o = o;
	W.self = self;
	W.me = getpid();
	W.ticks = 0;
}

int elsewhere_lists_now(void)
{
	return W.o && W.o->elsewhere && !events_exact() && W.ticks % 10 == 0;
}

/* An outsider's readings for --elsewhere: VmHWM and its command. */
static void outsider_read(struct rm_pnode *n)
{
	char buf[4096];
	struct rm_pstatus pst;

	if (rm_pfile_read(NULL, n->pid, "status", buf, sizeof(buf), 0) > 0 &&
	    rm_pstatus_parse(buf, &pst) == 0 && pst.has_hwm) {
		n->hwm_kib = pst.hwm_kib;
		n->has_hwm = 1;
		if (pst.has_uid) {
			n->uid = pst.uid;
			n->has_uid = 1;
		}
	}
}

/* Sampled mode with membership from events lists /proc only now and
 * then: an outsider met by an earlier listing may have ended since, and
 * its pid be another process's.  The node becomes that process's (the
 * old one owed no row: it was not heavy).  0 when the pid is gone. */
static int renew(struct rm_pnode *n)
{
	struct rm_pstat st;

	if (rm_pstat_read(n->pid, &st) < 0)
		return 0;
	if (st.starttime == n->start)
		return 1;
	n->start = st.starttime;
	events_take_stat(n, &st);
	free(n->cmd);
	n->cmd = NULL;
	n->cmd_read = 0;
	n->emulated = RM_EMU_UNKNOWN;
	n->has_ticks = 0;
	n->rmtree_known = 0;
	return 1;
}

/*
 * Exact mode: the heavy outsiders' command lines and users, read while
 * they live (their rows come from exit records, which carry no command
 * line).  A sweep lists /proc and asks taskstats about each outsider, a
 * batch of up to SWEEP_EACH in one datagram (TASKSTATS_CMD_GET: its
 * VmHWM and user); one whose VmHWM reached the --elsewhere threshold has
 * its command line read, once: never a read per exec on the host.
 * Where taskstats cannot be asked (or its records carry no VmHWM: a
 * kernel without TASK_XACCT), each outsider's statm is read instead
 * (its resident size, then status for VmHWM and user): three system
 * calls a process, where a batch takes two or three in all.
 * A sweep starts at most every tenth tick and asks about at most
 * SWEEP_EACH processes a tick, going on from where it stopped at the
 * next: on a host of N processes a sweep takes max(10, N / SWEEP_EACH)
 * ticks, so a tick's cost does not grow with the host's idle processes
 * (an outsider that ended before the sweep came to it has a row without
 * a command line).  Only heavy ones get a node; finalize writes their
 * rows with it.
 */
enum { SWEEP_EACH = RM_TS_QUERY_MAX, SWEEP_TICKS = 10 };

static struct {
	struct rm_procscan ps;
	int on;                  /* a sweep is under way */
	long started;            /* W.ticks at its start, -1 before the first */
	int q;                   /* the taskstats query socket + 1; 0 not yet opened, -1 none */
	int family;
	int xacct;               /* a record carried a VmHWM: the kernel counts it */
} X = { .started = -1 };

static void sweep_end(void)
{
	if (X.on)
		rm_procscan_close(&X.ps);
	X.on = 0;
}

/* pid is an outsider not yet read (not us, not a member, ended, excluded
 * or already named). */
static int unread_outsider(int pid)
{
	struct rm_pnode *n = table_find(pid);

	return pid != W.self && pid != W.me &&
	       !(n && (table_is_member(n) || table_is_excluded(n) || table_is_ended(n) ||
		       table_is_outsider(n) || n->cmd_read));
}

/* An outsider found heavy: a node for its row, its user and command line. */
static void heavy(int pid, uint32_t uid, int has_uid)
{
	struct rm_pnode *n = table_find(pid);
	struct rm_pstat st;

	if (rm_pstat_read(pid, &st) < 0)
		return;
	if (n && n->start != st.starttime) {
		table_forget(n);  /* its pid is another process's now */
		n = NULL;
	}
	if (!n && (!(n = events_add_node(pid, NULL, 0))->start || table_is_excluded(n)))
		return;
	if (has_uid) {
		n->uid = uid;
		n->has_uid = 1;
	}
	events_read_cmd(n);
}

/* Without taskstats: statm first (its resident size, a fraction of what
 * status costs the kernel to write), then status for VmHWM and user. */
static void read_outsider(int pid)
{
	struct rm_pstatus pst;
	uint64_t res_kib;
	char buf[4096];

	if (rm_pstatm_resident_kib(pid, &res_kib) < 0 || res_kib < W.o->elsewhere_kib)
		return;
	if (rm_pfile_read(NULL, pid, "status", buf, sizeof(buf), 0) <= 0 ||
	    rm_pstatus_parse(buf, &pst) < 0 || !pst.has_hwm || pst.hwm_kib < W.o->elsewhere_kib)
		return;
	heavy(pid, pst.uid, pst.has_uid);
}

/* A record of the batch: a heavy one is named at once.  A VmHWM of 0 is
 * a kernel thread's (no memory of its own: status has no VmHWM either),
 * or every record's where the kernel does not count it. */
static void on_record(void *arg, const struct rm_ts *r)
{
	(void)arg;
	if (r->tgid_aggr || !r->has_mem || r->hiwater_rss_kib == 0)
		return;
	X.xacct = 1;
	if (r->hiwater_rss_kib >= W.o->elsewhere_kib)
		heavy((int)r->id, r->uid, 1);
}

/* Ask taskstats about batch[0..n): 0, or -1 when it cannot be asked
 * (the socket is closed then, and statm read from now on). */
static int query(const int *batch, int n)
{
	char why[256];

	if (!X.q) {
		/* RM_EV_NO_QUERY (tests): as where taskstats cannot be asked. */
		const char *knob = getenv("RM_EV_NO_QUERY");
		int fd = knob && *knob ? -1 : rm_ts_query_open(&X.family, why, sizeof(why));
		X.q = fd < 0 ? -1 : fd + 1;
	}
	if (X.q < 0)
		return -1;
	if (rm_ts_query(X.q - 1, X.family, batch, n, on_record, NULL) < 0 || !X.xacct) {
		/* No record of the first batch (PID 1's, as a rule) had a VmHWM:
		 * the kernel does not count it (no TASK_XACCT).  Were they all
		 * kernel threads, statm is still right, only dearer. */
		close(X.q - 1);
		X.q = -1;
		return -1;
	}
	return 0;
}

static void exact_outsiders(void)
{
	int pid, batch[SWEEP_EACH], n = 0;

	if (!X.on) {
		if (X.started >= 0 && W.ticks - X.started < SWEEP_TICKS)
			return;
		if (rm_procscan_open(&X.ps) < 0)
			return;
		X.on = 1;
		X.started = W.ticks;
	}
	while (n < SWEEP_EACH && (pid = rm_procscan_next(&X.ps)) > 0)
		if (unread_outsider(pid))
			batch[n++] = pid;
	if (n > 0 && query(batch, n) < 0)
		for (int i = 0; i < n; i++)
			read_outsider(batch[i]);
	if (n < SWEEP_EACH)
		sweep_end();  /* the listing's end */
}

void elsewhere_scan(double el, int final)
{
	const struct opts *o = W.o;
	struct rm_pnode *n;
	size_t it = 0;

	if (!o->elsewhere)
		return;
	if (events_exact() && !final) {
		exact_outsiders();
		W.ticks++;
		return;
	}
	if (events_exact())
		sweep_end();
	if (!final && W.ticks++ % 10 != 0)
		return;
	while ((n = table_next(&it)) != NULL) {
		if (table_is_member(n) || table_is_excluded(n) || table_is_ended(n) || n->pid == W.me ||
		    n->state == 'Z' || n->state == 'X')
			continue;
		if (table_is_outsider(n)) {
			/* kernel threads have no memory of their own */
			char b[8];
			if (rm_pfile_read(NULL, n->pid, "statm", b, sizeof(b), 0) <= 0 || b[0] == '0')
				continue;
		}
		outsider_read(n);
		if (!n->has_hwm || n->hwm_kib < o->elsewhere_kib)
			continue;
		if (events_from_connector() && !renew(n)) {
			n->has_hwm = 0;
			continue;
		}
		if (!n->cmd_read)
			events_read_cmd(n);
		if (final) {
			struct rm_pstat st;
			n->peak_kib = n->hwm_kib;
			n->has_peak = 1;
			n->peak_at = -1;
			if (rm_pstat_read(n->pid, &st) == 0 && st.starttime == n->start) {
				n->ticks = st.utime + st.stime;
				n->has_ticks = 1;
			}
			table_elsewhere_row(n, -1);
			n->has_peak = 0;
		}
	}
	(void)el;
}

/* Sampled mode: an outsider the scan no longer sees. */
void elsewhere_outsider_gone(struct rm_pnode *n, double el)
{
	const struct opts *o = W.o;

	if (!o->elsewhere || events_exact() || table_is_excluded(n) || table_is_ended(n) || !n->has_hwm ||
	    n->hwm_kib < o->elsewhere_kib)
		return;
	n->peak_kib = n->hwm_kib;
	n->has_peak = 1;
	n->peak_at = -1;
	table_elsewhere_row(n, el);
}
