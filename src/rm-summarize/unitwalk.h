/*
 * unitwalk.h: a compile unit's runs, counted as the exit log is read.
 *
 * A unit's run is a row of the unit, with a peak, none of whose ancestors
 * (by parent PID: the row of that PID that started no later than the row
 * below it and had not ended before it started; at most 64 up) is a row
 * of the same unit: a gcc driver, its cc1plus, its collect2
 * and their ld are one run.  Rows come in the order they end, so most
 * parents come after their children: a walk waits for its parent's row,
 * and the walks waiting on one PID for one unit are one entry.  A parent
 * read before its child (an orphan, or a sampled log's rows of one tick,
 * written parent first) is found among the last row of each PID modulo
 * 65,536.  The memory is then bounded by the units and the processes
 * still awaited, not by the rows.
 */
#ifndef RM_SUMMARIZE_UNITWALK_H
#define RM_SUMMARIZE_UNITWALK_H

struct uwalk;

struct uwalk *uwalk_new(void);
/* A shown row, in read order: unit its unit's number (from 0; -1 none),
 * counted when it has a peak (a run of its unit unless below its own);
 * start_s and end_s NaN where unknown. */
void uwalk_row(struct uwalk *w, int pid, int ppid, double start_s, double end_s, int unit,
	       int counted);
/* The runs of unit, once every row is read (the walks still waiting
 * count: their parent has no row). */
long uwalk_runs(struct uwalk *w, int unit);
void uwalk_free(struct uwalk *w);

#endif
