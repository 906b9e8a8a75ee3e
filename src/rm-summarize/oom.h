/*
 * oom.h: whose OOM kills they were (oom.c): victims from the kernel log
 * matched to the exit logs' rows, and the verdicts on them, as data.
 */
#ifndef RM_SUMMARIZE_OOM_H
#define RM_SUMMARIZE_OOM_H

#include "report.h"

/* Does the exit log hold the whole scope (a --stats file, scope=out rows)? */
int scope_complete(const struct report *r);
/* Why the kernel log could not be read, in words. */
const char *kmsg_why(int e);
void oom_attribute(struct report *r, const struct opts *o);
/* Add the verdicts on OOM kills; 1 when the build had one. */
int oom_verdict(struct report *r);
long oom_build_kills(const struct sys *s);
int oom_event_is_build(const struct oomev *e);
/* OOM kills in the run's tied (1) or untied (0) containers: the larger of
 * each one's oom_kill rises and its kernel-log kills; *first the
 * container that rose first. */
long oom_ctr_kills(const struct report *r, int tied, const struct ctr **first);

#endif
