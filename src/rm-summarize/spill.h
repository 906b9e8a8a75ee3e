/*
 * spill.h: exit-log rows put in an order without holding them all
 * (spill.c).  Rows go in as they are read; once the rows held pass a
 * bound they are sorted and written to an unnamed temporary file
 * (O_TMPFILE in $TMPDIR, else /tmp) as one sorted run, and the runs are
 * merged as they are read back.  --csv (heaviest first), --trace (lanes
 * packed in start order), and the process list of --top all (over 1000)
 * and of the JSON without --top read the exit log this way.
 */
#ifndef RM_SUMMARIZE_SPILL_H
#define RM_SUMMARIZE_SPILL_H

#include <stddef.h>

struct proc;
struct report;
struct spill;

enum spill_order {
	SPILL_PEAK,   /* peak descending (unknown last), then PID, then read order */
	SPILL_START   /* start ascending to the microsecond, then the longest first */
};

/* A new, empty spill; run_bytes is the most held before a run is written
 * (0: the default, or RM_SUMMARIZE_SPILL_KIB from the environment). */
struct spill *spill_new(enum spill_order order, size_t run_bytes);
/* Copy p in (its numbers, comm, exit, unit and cmd) with its stage
 * (read back as p->stage).  A run that cannot be written is warned of
 * once and its rows held from then on: nothing is lost. */
void spill_add(struct spill *s, const struct proc *p, int stage);
/* Start reading back in order: 0, or -1 with errno. */
int spill_rewind(struct spill *s);
/* The next row into *p (its cmd and unit point into the spill, valid to
 * the next call): 1, 0 after the last, -1 with errno on a read error. */
int spill_next(struct spill *s, struct proc *p);
void spill_free(struct spill *s);

/*
 * An in-scope row, its shown known, into the report's spills that its
 * outputs read (made on the first row): the shown rows by peak for --csv
 * and a process list from the spill (opts.list_spill), the rows with a
 * start by start for --trace.  Called in read order, by
 * fold_row as it reads or by model.c once every row is held.
 */
void spill_row(struct report *r, const struct proc *p);

#endif
