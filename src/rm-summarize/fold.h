/*
 * fold.h: the exit log folded as it is read (fold.c), for the text and
 * Markdown reports and the JSON of --top N: per-command and per-unit
 * aggregates, a bounded set of rows (the top N, the top 5 by I/O, the
 * largest, the largest ended, survivors and killed compilers), the
 * compilers' peaks and times, and the pid links that count each unit's
 * compiles.  A report folds when its
 * options allow (fold_options_ok, main.c) and procs.c finds it has one
 * exit log and no OOM kill: then r->procs holds only the kept rows, and
 * r->nrows counts every one.
 */
#ifndef RM_SUMMARIZE_FOLD_H
#define RM_SUMMARIZE_FOLD_H

#include "report.h"

struct filt;

/* The I/O section's figures over the shown rows (scopeout.c's io_derive),
 * and how many rows each of its lists keeps (its IO_TOP). */
#define FOLD_IO_TOP 5
struct fold_io {
	int has_io, has_delay;
	double read_kib, write_kib, majflt, delay_ms[5];
	double *stage_reclaim;  /* per stage, ms */
	int nstages;
	size_t exact, sampled;
};
const struct fold_io *fold_io(const struct report *r);
/* Empty sums (NaN: nothing read) over nstages stages. */
void fold_io_init(struct fold_io *io, int nstages);
/* A shown row into the sums; stage: its stage for reclaim (-1 none). */
void fold_io_add(struct fold_io *io, const struct proc *p, int stage);

/* Whether comm is a compiler's, asked once a name; the row read next is
 * this command's (fold_row takes its figures there). */
int fold_compiler(struct report *r, const char *comm);
/* Take one in-scope row (its cmd and unit are the fold's to keep or free). */
void fold_row(struct report *r, struct proc *p);
/* Every row read: the kept ones into r->procs (read order). */
void fold_gather(struct report *r);
/* Groups and units into r->groups and r->units (model.c's derive_lists). */
void fold_lists(struct report *r);
/* Each stage's compiler count, p95 and largest peak (model.c's
 * derive_perjob: cp_folded). */
void fold_cpeaks(struct report *r, double off);
/* The compilers' starts and ends as the sweep's events, in time order:
 * the next in *t and *d (+1, -1), 0 after the last (comps_next). */
int fold_comp_next(struct report *r, double last, double *t, int *d);
/* A uid of the build's rows (procs_hide_cmdlines). */
int fold_has_uid(const struct report *r, long uid);
/* The filter figures (fmt.c's filtered). */
void fold_filt(const struct report *r, struct filt *f);
void fold_free(struct report *r);

#endif
