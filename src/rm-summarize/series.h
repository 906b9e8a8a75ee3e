/*
 * series.h: a system CSV's or rm-tree timeline's rows as columns over
 * time (series.c), for --series and the SVG of a timeline.
 */
#ifndef RM_SERIES_H
#define RM_SERIES_H

#include "report.h"

/* Input columns read: a system CSV's, or (SE_TL_*) a timeline's. */
enum { SE_EPOCH, SE_ELAPSED, SE_USED, SE_AVAIL, SE_SWAP, SE_DISK, SE_CPU, SE_LOAD, SE_COMP,
       SE_DISKPCT, SE_NSYS };
enum { SE_TL_RSS = 2, SE_TL_PROCS, SE_TL_CPU, SE_NTL };

/* Row columns: elapsed_s, then SE_USED..SE_COMP, then disk size (GiB);
 * a timeline's: elapsed_s, job RSS (MiB), processes, CPU %. */
#define SE_NCOL 9

struct series {
	int timeline;          /* 1: an rm-tree timeline */
	double t0;             /* epoch of the first row */
	double *v;             /* n rows of SE_NCOL, NaN where no reading */
	size_t n, cap;
};

int series_load(const char *path, struct series *s);
void series_free(struct series *s);
/* --series of the first report with a system CSV or timeline: an exit status. */
int print_series(struct rm_buf *b, const struct report *reps, int nrep);
const char *series_file(const struct report *r);

#endif
