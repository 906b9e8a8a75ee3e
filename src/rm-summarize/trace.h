/*
 * trace.h: the run as Chrome Trace Event JSON (trace.c).
 */
#ifndef RM_SUMMARIZE_TRACE_H
#define RM_SUMMARIZE_TRACE_H

#include "report.h"

/* 0, or -1 with errno. */
int write_trace(const struct report *r, const char *path);

#endif
