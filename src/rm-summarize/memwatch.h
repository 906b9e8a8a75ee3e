/*
 * memwatch.h: a job's report in memwatch's names and shapes (memwatch.c),
 * for `rm-run run`: its JSON, its text summary, its per-process CSV and
 * its timeline CSV.  --include and --exclude are memwatch's Rust regexes
 * (lib/rxrust), matched against each process's command line.
 */
#ifndef RM_SUMMARIZE_MEMWATCH_H
#define RM_SUMMARIZE_MEMWATCH_H

#include "report.h"

struct mwopts {
	int on;                  /* --memwatch */
	const char *csv, *timeline;
	double interval_ms;      /* NaN: not given */
	char **argv;             /* --memwatch-arg, in order: CMD's argv */
	int argc;
	regex_t inc, exc;
	int has_inc, has_exc;
	const char *inc_pat, *exc_pat;
};

extern struct mwopts g_mw;

/* A Rust regex for --include (inc 1) or --exclude; 0, or -1 with why. */
int memwatch_filter(int inc, const char *rx, char *why, size_t whysz);
/* The JSON object (json 1) or the text summary of r into b. */
void print_memwatch(struct rm_buf *b, const struct report *r, int json);
/* --memwatch-csv and --memwatch-timeline; 0, or -1 with a message said. */
int write_memwatch_files(const struct report *r);

#endif
