/*
 * csvout.h: --csv FILE, the shown processes' peaks (csvout.c).
 */
#ifndef RM_SUMMARIZE_CSVOUT_H
#define RM_SUMMARIZE_CSVOUT_H

#include "report.h"

/* 0, or -1 with errno. */
int write_proc_csv(const struct report *r, const char *path);

#endif
