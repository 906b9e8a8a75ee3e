/*
 * now.h: --now LIVE, a running build at this moment (now.c), for
 * `rm-monitor status`: how long it has run, the last sample's age, the
 * stage and context now, memory and headroom now and at the worst so far,
 * the build's processes now (from rm-tree --live's snapshot LIVE: count,
 * tree total, the three largest with their units), the OOM kills so far.
 */
#ifndef RM_SUMMARIZE_NOW_H
#define RM_SUMMARIZE_NOW_H

#include "report.h"

/* The status of r, its system CSV csv (its last row read again) and the
 * snapshot live (NULL or unreadable: said), as text or --json. */
void print_now(struct rm_buf *b, const struct report *r, const char *csv, const char *live,
	       const struct opts *o);

#endif
