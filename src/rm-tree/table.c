/*
 * rm-tree's process table: every process a stream has met, keyed by pid
 * and start time (lib/ptree), and the state each is in.  This file is
 * the only reader and writer of a process's state (lib/ptree's member,
 * fresh and outsider bits, and the life bits below, which no other file
 * can name) and the only caller of the exit-log row writer (rows.c's
 * log_row): probe.c, events.c, job.c and containers.c ask the state
 * through table_is_member and its like, decide, and move a node by one of
 * the named transitions below (tests/rm-tree.bats reads the sources and
 * the objects for it).  It also holds the other
 * pid-keyed tables of the stream (parked, fold, w4, reaped), so that no
 * other part reaches lib/ptree (tests/rm-tree.bats checks the objects).
 *
 *            table_meet (a scan)            table_meet_decided (an event,
 *                  |                         a reaped child of ours)
 *                  v                                 |
 *   fresh: membership not decided  ------------------+
 *     |              |                  |
 *     | table_join,  | table_settle     | table_outsider (kernel thread,
 *     | table_select,| (not selected)   |   zombie), table_exclude
 *     | table_adopt  |                  |   (+ table_monitor_in: a
 *     v              v                  v    monitor the build ran)
 *   member        plain node        outsider [+ excluded [+ monitor_in]]
 *     |           (an --elsewhere   never joins; what an excluded node
 *     |            row at most:     forks is excluded too, except the
 *     |            table_elsewhere_row)  job of an rm-tree the build ran;
 *     |                             a zombie a scan met before its
 *     |                             fork event joins at that event
 *     |                             when the parent is a member
 *     | it ends
 *     +-- sampled: table_end writes its row now
 *     +-- exact:   table_end parks a copy (table_park: ended, awaiting
 *     |            its taskstats record); events.c writes the row from
 *     |            the record (table_row, table_parked_forget), or
 *     |            table_parked_rows from the readings when none came
 *     +-- a record read while it still is a member: table_row, then
 *     |            table_member_done
 *     v
 *   ended (+ was_member, outsider): its row is written, never a member
 *   again (table_done marks a node whose row was written elsewhere); a
 *   fork read late still hands membership to its child; the node goes
 *   (table_forget) when its pid is gone or met with another start time.
 *
 * A child reaped before its fork event was read comes back with that
 * event as a member with no process behind it: table_drop_ghosts takes
 * it out again (and the count it added).
 */
#include <string.h>

#include "stream.h"

/* A node's life bits (struct rm_pnode's life): what it has been beyond
 * member, fresh and outsider. */
enum {
	L_ENDED = 1,       /* its row is written: never a member again */
	L_WAS_MEMBER = 2,  /* followed until it ended: what it forked is */
	L_EXCLUDED = 4,    /* --exclude-tree, a monitor: never a member */
	L_MONITOR_IN = 8,  /* an excluded monitor the build ran: the job an
			    * rm-tree among them runs (--exec's CMD, rm-run's)
			    * is the build's */
};

static struct {
	struct stream *s;
	struct rm_ptree t;       /* the processes met */
	struct rm_ptree parked;  /* members ended, waiting for their record */
	struct rm_ptree fold;    /* threads' records of processes still alive */
	struct rm_ptree w4;      /* direct children's wait4 maxrss */
	struct rm_ptree reaped;  /* children reaped since the last pump */
} T;

void table_start(struct stream *s)
{
	T.s = s;
	rm_ptree_init(&T.t);
	rm_ptree_init(&T.parked);
	rm_ptree_init(&T.fold);
	rm_ptree_init(&T.w4);
	rm_ptree_init(&T.reaped);
}

void table_free(void)
{
	rm_ptree_free(&T.t);
	rm_ptree_free(&T.parked);
	rm_ptree_free(&T.fold);
	rm_ptree_free(&T.w4);
	rm_ptree_free(&T.reaped);
}

struct rm_pnode *table_find(int pid)
{
	return rm_ptree_find(&T.t, pid);
}

struct rm_pnode *table_next(size_t *it)
{
	return rm_ptree_next(&T.t, it);
}

uint32_t table_gen(void)
{
	return T.t.gen;
}

uint32_t table_new_gen(void)
{
	return ++T.t.gen;
}

struct rm_pnode *table_meet(int pid, uint64_t start)
{
	struct rm_pnode *n = rm_ptree_add(&T.t, pid, start);

	if (!n)
		tree_oom();
	return n;
}

struct rm_pnode *table_meet_decided(int pid, uint64_t start)
{
	struct rm_pnode *n = table_meet(pid, start);

	n->fresh = 0;
	return n;
}

void table_forget(struct rm_pnode *n)
{
	rm_ptree_remove(&T.t, n);
}

/* --- what state a node is in --- */

int table_is_member(const struct rm_pnode *n)
{
	return n->member;
}

int table_is_outsider(const struct rm_pnode *n)
{
	return n->outsider;
}

int table_is_ended(const struct rm_pnode *n)
{
	return !!(n->life & L_ENDED);
}

int table_was_member(const struct rm_pnode *n)
{
	return !!(n->life & L_WAS_MEMBER);
}

int table_is_excluded(const struct rm_pnode *n)
{
	return !!(n->life & L_EXCLUDED);
}

int table_is_monitor_in(const struct rm_pnode *n)
{
	return !!(n->life & L_MONITOR_IN);
}

int table_is_plain(const struct rm_pnode *n)
{
	return !n->member && !n->fresh && !n->outsider && !n->life;
}

/* --- transitions --- */

/* Its kept descriptors (stat, status, its /proc directory) closed. */
static void drop_fds(struct rm_pnode *n)
{
	rm_pfile_close(&n->stat_fd);
	rm_pfile_close(&n->status_fd);
	rm_pfile_close(&n->dir_fd);
}

void table_join(struct rm_pnode *n)
{
	n->member = 1;
	n->outsider = 0;
	n->fresh = 0;
	T.s->procs++;
}

void table_select(struct rm_pnode *n)
{
	n->member = 1;
}

void table_settle(struct rm_pnode *n)
{
	n->fresh = 0;
}

void table_outsider(struct rm_pnode *n)
{
	n->outsider = 1;
}

void table_exclude(struct rm_pnode *n)
{
	n->member = 0;
	n->life |= L_EXCLUDED;
	n->outsider = 1;
	/* Never read as a member again (a member found to be a monitor). */
	drop_fds(n);
}

void table_monitor_in(struct rm_pnode *n)
{
	n->life |= L_MONITOR_IN;
}

void table_adopt(struct rm_pnode **v, size_t nv, int self_pid, int pgrp)
{
	rm_ptree_adopt(&T.t, v, nv, self_pid, pgrp);
}

void table_done(struct rm_pnode *n)
{
	n->life |= L_ENDED;
}

/* A member's row is written: it is one no longer (a zombie still listed,
 * or gone), and its kept descriptors are closed. */
static void member_gone(struct rm_pnode *n)
{
	n->member = 0;
	n->life |= L_WAS_MEMBER;
	n->outsider = 1;
	drop_fds(n);
}

void table_member_done(struct rm_pnode *n)
{
	member_gone(n);
	n->life |= L_ENDED;
}

/* The row of an exact record or an event (end < 0: a survivor), with the
 * job's totals counted; an --elsewhere row (out) counts in no total. */
static void row(struct rm_pnode *n, double end, int out)
{
	struct stream *s = T.s;
	struct rm_pnode *w = out ? NULL : rm_ptree_find(&T.w4, n->pid);

	/* A direct child's own maxrss from wait4: the figure the job row's
	 * largest process is, so its row and that line agree. */
	if (w) {
		if ((!n->start || n->start == w->start) && n->has_peak && w->peak_kib > n->peak_kib)
			n->peak_kib = w->peak_kib;
		rm_ptree_remove(&T.w4, w);
	}
	if (out) {
		log_row(s, n, end, 1);
		return;
	}
	if (n->has_peak && (!s->has_max_proc || n->peak_kib > s->max_proc)) {
		s->max_proc = n->peak_kib;
		s->has_max_proc = 1;
	}
	if (n->has_io && n->has_majflt) {
		s->tot_rd += n->read_kib;
		s->tot_wr += n->write_kib;
		s->tot_maj += n->majflt;
		s->has_tot_io = 1;
	}
	if (n->has_delay) {
		for (int i = 0; i < 5; i++)
			s->tot_delay[i] += n->delay_ms[i];
		s->has_tot_delay = 1;
	}
	log_row(s, n, end, 0);
}

void table_row(struct rm_pnode *n, double end)
{
	row(n, end, 0);
}

void table_elsewhere_row(struct rm_pnode *n, double end)
{
	row(n, end, 1);
}

void table_joined_at_exit(void)
{
	T.s->procs++;
}

/* --- ended members awaiting their record (exact mode) --- */

struct rm_pnode *table_parked_find(int pid)
{
	return rm_ptree_find(&T.parked, pid);
}

void table_parked_forget(struct rm_pnode *p)
{
	rm_ptree_remove(&T.parked, p);
}

/* A followed process has ended (exact mode): keep its sampled readings
 * for its exit record.  1 when kept (no row now), 0 otherwise. */
static int park(struct rm_pnode *n, double el)
{
	struct rm_pnode *c;

	if (!T.s->exact)
		return 0;
	c = rm_ptree_find(&T.parked, n->pid);
	if (c) {
		table_row(c, c->end_el);
		rm_ptree_remove(&T.parked, c);
	}
	c = rm_ptree_add(&T.parked, n->pid, n->start);
	if (!c)
		tree_oom();
	c->ppid = n->ppid;
	c->pgrp = n->pgrp;
	memcpy(c->comm, n->comm, sizeof(c->comm));
	c->comm_ok = n->comm_ok;
	c->cmd = n->cmd ? strdup(n->cmd) : NULL;
	c->emulated = n->emulated;
	c->peak_kib = n->peak_kib;
	c->peak_at = n->peak_at;
	c->has_peak = n->has_peak;
	c->ticks = n->ticks;
	c->has_ticks = n->has_ticks;
	c->exit = n->exit;
	c->member = 1;
	c->fresh = 0;
	c->start_el = n->start_el;
	c->has_start_el = n->has_start_el;
	c->end_el = el;
	c->kend_el = n->kend_el;
	c->has_kend = n->has_kend;
	c->forked = n->forked;
	c->older = n->older;
	return 1;
}

void table_end(struct rm_pnode *n, double el)
{
	if (!park(n, el))
		log_row(T.s, n, el, 0);
	member_gone(n);
}

void table_reused(struct rm_pnode *n, double el)
{
	if (n->member && !(n->life & L_ENDED) && !park(n, el))
		table_row(n, el);
	rm_ptree_remove(&T.t, n);
}

void table_parked_rows(void)
{
	size_t it = 0;
	struct rm_pnode *p;

	while ((p = rm_ptree_next(&T.parked, &it)) != NULL) {
		table_row(p, p->has_kend ? p->kend_el : p->end_el);
		rm_ptree_remove(&T.parked, p);
		it = 0;
	}
}

void table_survivors(void)
{
	struct rm_pnode *n;
	size_t it = 0;

	while ((n = rm_ptree_next(&T.t, &it)) != NULL)
		if (n->member)
			log_row(T.s, n, -1, 0);
}

/* --- threads' records of live processes (events.c) --- */

struct rm_pnode *table_fold_find(int tgid)
{
	return rm_ptree_find(&T.fold, tgid);
}

struct rm_pnode *table_fold_get(int tgid)
{
	struct rm_pnode *f = rm_ptree_find(&T.fold, tgid);

	if (!f && !(f = rm_ptree_add(&T.fold, tgid, 0)))
		tree_oom();
	return f;
}

void table_fold_forget(struct rm_pnode *f)
{
	rm_ptree_remove(&T.fold, f);
}

/* --- --exec's children (job.c) --- */

void table_w4_note(int pid, uint64_t start, uint64_t maxrss_kib)
{
	struct rm_pnode *w = rm_ptree_find(&T.w4, pid);

	if (!w && !(w = rm_ptree_add(&T.w4, pid, start)))
		tree_oom();
	w->start = start;
	w->peak_kib = maxrss_kib;
}

void table_reaped_note(int pid, uint64_t start)
{
	struct rm_pnode *g = rm_ptree_find(&T.reaped, pid);

	if (!g && !(g = rm_ptree_add(&T.reaped, pid, start)))
		tree_oom();
	g->start = start;
}

void table_drop_ghosts(void)
{
	struct rm_pnode *g, *n;
	size_t it = 0;

	while ((g = rm_ptree_next(&T.reaped, &it)) != NULL) {
		struct rm_pstat st;
		n = rm_ptree_find(&T.t, g->pid);
		if (n && n->member && !(n->life & L_ENDED) && (n->start == 0 || n->start == g->start) &&
		    (rm_pstat_read(g->pid, &st) < 0 || st.starttime == g->start)) {
			rm_ptree_remove(&T.t, n);
			if (T.s->procs)
				T.s->procs--;
		}
		rm_ptree_remove(&T.reaped, g);
		it = 0;
	}
}
