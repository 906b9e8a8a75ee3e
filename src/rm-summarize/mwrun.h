/*
 * mwrun.h: rm-summarize --memwatch-run, memwatch's command line (mwrun.c).
 */
#ifndef RM_SUMMARIZE_MWRUN_H
#define RM_SUMMARIZE_MWRUN_H

#include "report.h"

/* argv[0] is "--memwatch-run"; CMD's exit status (or 1, 2 of ours). */
int memwatch_run(int argc, char **argv, struct opts *o);

#endif
