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
 * line).  A sweep lists /proc and reads each outsider's statm and, once
 * its resident size reached the --elsewhere threshold, its status
 * (VmHWM, Uid) and command line, once: never a read per exec on the host.
 * A sweep starts at most every tenth tick and reads at most SWEEP_EACH
 * statm files a tick, going on from where it stopped at the next: on a
 * host of N processes a sweep takes max(10, N / SWEEP_EACH) ticks, so a
 * tick's cost does not grow with the host's idle processes (an outsider
 * that ended before the sweep came to it has a row without a command
 * line).  Only heavy ones get a node; finalize writes their rows with it.
 */
enum { SWEEP_EACH = 64, SWEEP_TICKS = 10 };

static struct {
	struct rm_procscan ps;
	int on;                  /* a sweep is under way */
	long started;            /* W.ticks at its start, -1 before the first */
} X = { .started = -1 };

static void sweep_end(void)
{
	if (X.on)
		rm_procscan_close(&X.ps);
	X.on = 0;
}

static void exact_outsiders(void)
{
	const struct opts *o = W.o;
	int pid, reads = 0;

	if (!X.on) {
		if (X.started >= 0 && W.ticks - X.started < SWEEP_TICKS)
			return;
		if (rm_procscan_open(&X.ps) < 0)
			return;
		X.on = 1;
		X.started = W.ticks;
	}
	while (reads < SWEEP_EACH && (pid = rm_procscan_next(&X.ps)) > 0) {
		struct rm_pnode *n = table_find(pid);
		struct rm_pstatus pst;
		struct rm_pstat st;
		uint64_t res_kib;
		char buf[4096];

		if (pid == W.self || pid == W.me ||
		    (n && (table_is_member(n) || table_is_excluded(n) || table_is_ended(n) ||
			   table_is_outsider(n) || n->cmd_read)))
			continue;
		/* statm first (its resident size): a fraction of what status
		 * costs the kernel to write, for every process on the host. */
		reads++;
		if (rm_pstatm_resident_kib(pid, &res_kib) < 0 || res_kib < o->elsewhere_kib)
			continue;
		if (rm_pfile_read(NULL, pid, "status", buf, sizeof(buf), 0) <= 0 ||
		    rm_pstatus_parse(buf, &pst) < 0 || !pst.has_hwm || pst.hwm_kib < o->elsewhere_kib)
			continue;
		if (rm_pstat_read(pid, &st) < 0)
			continue;
		if (n && n->start != st.starttime) {
			table_forget(n);  /* its pid is another process's now */
			n = NULL;
		}
		if (!n && (!(n = events_add_node(pid, NULL, 0))->start || table_is_excluded(n)))
			continue;
		if (pst.has_uid) {
			n->uid = pst.uid;
			n->has_uid = 1;
		}
		events_read_cmd(n);
	}
	if (reads < SWEEP_EACH)
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
