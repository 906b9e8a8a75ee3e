/*
 * pidctr: a few small counters per PID, for the PIDs that have any
 * (rm-tree's exact mode: what the proc connector said of a PID that
 * taskstats has not said yet).  Open addressing on the PID, removal by
 * shifting back (no tombstones), so that a table through which every
 * PID of the host passes stays the size of what is pending in it.
 */
#ifndef RM_PIDCTR_H
#define RM_PIDCTR_H

#include <stddef.h>
#include <stdint.h>

struct rm_pidctr_e {
	int pid;                 /* 0: an empty slot */
	int a, b;                /* the counters */
	uint32_t stamp;          /* the caller's, e.g. when a last changed */
};

struct rm_pidctr {
	struct rm_pidctr_e *slot;
	size_t cap, n;
};

/* pid's entry, or NULL where it has none. */
struct rm_pidctr_e *rm_pidctr_find(const struct rm_pidctr *m, int pid);

/* pid's entry, a new one (counters 0) where it had none; NULL with errno
 * ENOMEM or EINVAL (pid <= 0).  Entries found before may move. */
struct rm_pidctr_e *rm_pidctr_get(struct rm_pidctr *m, int pid);

/* Take pid's entry out, if it has one.  Entries found before may move. */
void rm_pidctr_del(struct rm_pidctr *m, int pid);

/* Take out every entry keep() says no to (arg is passed on); keep may be
 * asked twice of an entry and must say the same. */
void rm_pidctr_sweep(struct rm_pidctr *m, int (*keep)(struct rm_pidctr_e *, void *),
		     void *arg);

void rm_pidctr_clear(struct rm_pidctr *m);
void rm_pidctr_free(struct rm_pidctr *m);

#endif
