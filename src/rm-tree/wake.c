/*
 * wake.c: when exact mode's events wake rm-tree (and sampled mode's, with
 * membership from the connector).
 *
 * A fork or an exec of a member must wake us at once (a command line is
 * only there while the process lives), but every other process on the
 * host forks and execs too: on a busy host that is hundreds of wake-ups a
 * second for nothing.  So while no member forks or execs ("cold"), the
 * events socket (events.c's) is read only on the tick, and a second
 * connector socket, ours, wakes us, with a kernel filter that passes only
 * the forks, execs and comm changes of the members (at most 255; more,
 * and we stay "hot").  The member set changes only through a member's
 * own events, which wake us: then the events socket wakes us again
 * ("hot") until a pump sees none, unless the filter still passes every
 * member that lives after the pump (the new ones ended in it: a build's
 * short processes one at a time stay cold, two wake-ups each).  Only
 * tree selections (PIDs, --exec) go cold: --match, --in-cgroup and
 * "every process" take members from anyone's exec.
 *
 * An attach costs about 60 us (the kernel compiles the filter, and frees
 * the old one's image with a TLB flush: a quarter of exact mode's CPU
 * under a fork loop when it was done for one short process in four), so
 * the filter is attached again only when a member it does not pass lives
 * on: it stays while hot, and passing a member that ended costs nothing
 * until its PID comes round (then the wake-up for nothing attaches the
 * members alone).  And a member it does not pass is most often a short
 * process whose record comes a pump or two later: we stay hot for up to
 * POSTPONE pumps (a few us each) before attaching for it.  A build of
 * short processes one at a time attaches it once or twice in all, not
 * three times a process.
 *
 * After each pump events.c asks wake_pumped what to do; WAKE_REDRAIN
 * means "read the events socket once more and tell me" (wake_redrained):
 * what came before a new filter did, or the event whose copy woke us
 * after the pump had read the socket.  Reads the table, writes nothing
 * in it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "procev.h"
#include "tree.h"

enum { CN_EACH = 512, BATCH = 64 };

static struct {
	int cw;         /* our connector socket, or -1: always hot */
	int ep, cn;     /* events.c's epoll set and events socket */
	pid_t self;     /* --exec: rm-tree, which forks CMD */
	int hot;        /* cn wakes us (else only cw's members' events) */
	int after;      /* what the redrain is for: AFTER_* */
	int filt[255];  /* the TGIDs cw's filter passes, sorted */
	int nfilt;      /* -1: it passes nothing */
	int postponed;  /* pumps in a row that stayed hot instead of attaching */
} W = { .cw = -1, .ep = -1, .cn = -1, .nfilt = -1 };

enum { AFTER_NONE, AFTER_WOKE, AFTER_FILTER };
enum { POSTPONE = 3 };

/* Copies of the members' events, read to be dropped. */
static unsigned char wbuf[BATCH * CN_EACH] __attribute__((aligned(8)));

void wake_start(int ep, int cn, pid_t self)
{
	char why[160];
	struct epoll_event ev = { .events = EPOLLIN };
	const char *no = getenv("RM_EV_HOT");

	if (no && strcmp(no, "1") == 0)
		return;
	W.cw = rm_pe_open(1 << 20, RM_PE_WANT_FORK | RM_PE_WANT_EXEC | RM_PE_WANT_COMM, why,
			  sizeof(why));
	if (W.cw < 0)
		return;
	ev.data.fd = W.cw;
	if (rm_pe_filter_tgids(W.cw, NULL, -1) < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, W.cw, &ev) < 0) {
		close(W.cw);
		W.cw = -1;
		return;
	}
	W.ep = ep;
	W.cn = cn;
	W.self = self;
	W.hot = 1;      /* events.c's epoll set starts with cn in it */
	/* touched now: the resident size is the same at the end */
	memset(wbuf, 0, sizeof(wbuf));
}

static void go_hot(void)
{
	struct epoll_event ev = { .events = EPOLLIN };

	/* cw keeps its filter: its copies are read and dropped by each
	 * pump, and it is still right when we go cold again with the same
	 * members. */
	ev.data.fd = W.cn;
	if (epoll_ctl(W.ep, EPOLL_CTL_ADD, W.cn, &ev) == 0 || errno == EEXIST)
		W.hot = 1;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* The members' TGIDs (and our own, which forks --exec's command), sorted;
 * -1 when more than the filter takes. */
static int member_list(int *tg)
{
	int n = 0;
	struct rm_pnode *m;
	size_t it = 0;

	if (W.self > 0)
		tg[n++] = W.self;
	while ((m = table_next(&it)) != NULL) {
		if (!table_is_member(m) || table_is_ended(m) || table_is_excluded(m))
			continue;
		if (n == 255)
			return -1;
		tg[n++] = m->pid;
	}
	qsort(tg, (size_t)n, sizeof(*tg), cmp_int);
	return n;
}

/* Does the filter pass every one of these N sorted TGIDs?  The ones it
 * passes beyond them (members that ended since) cost at most a wake-up
 * for nothing, should their PIDs come round: cheaper than an attach. */
static int filt_covers(const int *tg, int n)
{
	int j = 0;

	for (int i = 0; i < n; i++) {
		while (j < W.nfilt && W.filt[j] < tg[i])
			j++;
		if (j == W.nfilt || W.filt[j] != tg[i])
			return 0;
	}
	return W.nfilt >= 0;
}

/* Let only the members' events wake us: 0 (the filter passes them
 * already, and only them if EXACT), 1 (attached now), or -1 (more
 * members than the filter takes, the attach postponed, or the attach
 * failed: stay as we are, or go hot). */
static int set_cold_filter(int exact)
{
	int tg[255], n = member_list(tg);

	if (n < 0)
		return -1;
	if (exact ? n == W.nfilt && memcmp(tg, W.filt, sizeof(*tg) * (size_t)n) == 0 :
		    filt_covers(tg, n)) {
		W.postponed = 0;
		return 0;
	}
	if (W.postponed < POSTPONE) {
		W.postponed++;
		return -1;
	}
	W.postponed = 0;
	if (rm_pe_filter_tgids(W.cw, tg, n) < 0) {
		/* the old filter stays, which the members may have outgrown */
		rm_pe_filter_tgids(W.cw, NULL, -1);
		W.nfilt = -1;
		return -1;
	}
	memcpy(W.filt, tg, sizeof(*tg) * (size_t)n);
	W.nfilt = n;
	return 1;
}

static int go_cold(void)
{
	if (set_cold_filter(0) < 0)
		return -1;
	if (epoll_ctl(W.ep, EPOLL_CTL_DEL, W.cn, NULL) < 0)
		return -1;
	W.hot = 0;
	return 0;
}

/* Cold: members a scan added change the filter; so does a wake-up for
 * nothing (WOKE: the PID of a member that ended came round), which
 * attaches the members' list alone. */
static int cold_decide(int mev, int lost, int woke)
{
	int tg[255], n, c;

	if (lost)
		c = -1;
	else if (!mev)
		c = set_cold_filter(woke);
	else
		/* Members' events: cold still when the filter passes every
		 * member that lives (the new ones ended within the pump: a
		 * build's short processes, one at a time), else hot: the new
		 * ones' execs must wake us. */
		c = (n = member_list(tg)) >= 0 && filt_covers(tg, n) ? 0 : -1;

	if (c < 0) {
		go_hot();
		return WAKE_DONE;
	}
	if (c > 0) {
		W.after = AFTER_FILTER;
		return WAKE_REDRAIN;
	}
	return WAKE_DONE;
}

int wake_pumped(int mev, int lost, int resync)
{
	size_t lens[BATCH];
	int woke = 0, got;

	if (W.cw < 0)
		return WAKE_DONE;
	/* Once the pump read the records: a member whose record came is
	 * not one the filter needs. */
	while ((got = rm_nl_recvm(W.cw, wbuf, CN_EACH, BATCH, lens)) > 0) {
		woke = 1;
		if (got < BATCH)
			break;
	}
	W.after = AFTER_NONE;
	if (W.hot) {
		if (mev || lost || resync || go_cold() < 0)
			return WAKE_DONE;
		/* Cold from now; what came before the filter did is read
		 * once more. */
		W.after = AFTER_FILTER;
		return WAKE_REDRAIN;
	}
	if (woke && !mev && !lost) {
		/* Woken: its event may have come after the pump's read. */
		W.after = AFTER_WOKE;
		return WAKE_REDRAIN;
	}
	return cold_decide(mev, lost, 0);
}

int wake_cold(void)
{
	return W.cw >= 0 && !W.hot;
}

int wake_redrained(int mev, int lost)
{
	int after = W.after;

	W.after = AFTER_NONE;
	if (after == AFTER_WOKE)
		return cold_decide(mev, lost, 1);
	if (mev || lost)
		go_hot();
	return WAKE_DONE;
}
