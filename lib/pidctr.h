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
	unsigned bits;           /* cap is 1 << bits */
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

/*
 * Which process a taskstats record is of, when a PID is given again
 * before the records of its last process were read (rm-tree's exact
 * mode, events.c).  Every main thread's end gives one proc connector exit
 * event and one record with pid == tgid, and every record of a process
 * is queued before its PID is free.  Per PID, a counts exit events read
 * less main threads' records read (records still to come; below 0 while
 * an exit event trails its record), and b main threads' records that
 * were not their process's last less last records of another thread and,
 * while above 0, last records of a main thread (a process's last record
 * still to come after its main thread's: pthread_exit, an exec from a
 * thread; below 0 while it came first).  lead: the record is a main
 * thread's (pid == tgid); final: its process's last (AGROUP).  Both
 * return -1 with errno ENOMEM; now is the caller's clock (stamp).
 */
int rm_pidctr_exit(struct rm_pidctr *m, int pid, uint32_t now);
int rm_pidctr_record(struct rm_pidctr *m, int pid, int lead, int final, uint32_t now);

/* A process whose fork was read: the records on its PID of older
 * processes still to come before its own (a and b of its PID then). */
struct rm_older {
	uint16_t lead;
	int16_t end;
};
void rm_older_take(struct rm_older *o, const struct rm_pidctr *m, int pid);
/* Is this record an older process's?  While any of theirs is still to
 * come, every record on the PID is; it is passed over in o. */
int rm_older_pass(struct rm_older *o, int lead, int final);

#endif
