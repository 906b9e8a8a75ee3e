/*
 * pcount: how many live processes on the host have one of a list of
 * names (rm-sample's compilers column), kept from the proc connector's
 * fork, exec, comm and exit events instead of reading every
 * /proc/PID/comm on every tick.
 *
 * One /proc scan at the start (after the socket listens, so that nothing
 * falls between them) and one after the kernel dropped events (ENOBUFS:
 * counted in lost); between them only the comm of a process that exec'd
 * is read.  The count means what rm_proc_count_names() counts: a process
 * whose main thread's name is in the list, zombies left out.  Where the
 * connector is not allowed (before Linux 6.6 without CAP_NET_ADMIN), is
 * turned off (RM_NO_EVENTS=1) or the proc root is a fixture
 * (RM_PROC_ROOT), every call scans, as before.
 */
#ifndef RM_PCOUNT_H
#define RM_PCOUNT_H

#include <stddef.h>
#include <stdint.h>

#include "pidctr.h"

/* A set of PIDs: lib/pidctr's table, its counters unused. */
struct rm_pset {
	struct rm_pidctr m;      /* m.n: the PIDs in it */
};

struct rm_pcount {
	const char *const *names;
	int nnames;
	int fd;                  /* the connector, -1 when scanning */
	int tried;               /* the connector was tried */
	int resync;              /* a scan is due */
	struct rm_pset counted;  /* the PIDs counted */
	struct rm_pset pending;  /* exec'd since the last call: comm unread */
	uint64_t events, lost, scans, comm_reads;
	char why[160];           /* why the connector is not used */
};

/* Before the first rm_pcount_get: names[0..n) must outlive pc. */
void rm_pcount_init(struct rm_pcount *pc, const char *const *names, int n);

/*
 * The count now: opens the connector on the first call (events 0: scan
 * every time), drains its events, reads the comm of processes that
 * exec'd, scans when due.  Returns the count, or -1 when /proc cannot
 * be read.
 */
long rm_pcount_get(struct rm_pcount *pc, int events);

/* 1 when counts come from events. */
int rm_pcount_events(const struct rm_pcount *pc);

void rm_pcount_close(struct rm_pcount *pc);

/* A set of PIDs (exposed for the unit test).  0, or -1 out of memory. */
int rm_pset_add(struct rm_pset *s, int pid);
int rm_pset_has(const struct rm_pset *s, int pid);
void rm_pset_del(struct rm_pset *s, int pid);
void rm_pset_clear(struct rm_pset *s);
void rm_pset_free(struct rm_pset *s);

/*
 * Apply one datagram of connector events (for the unit test and the
 * drain): fork, exec, comm and exit change counted and pending.
 */
void rm_pcount_apply(struct rm_pcount *pc, const void *buf, size_t len);

#endif
