/*
 * svg.h: the SVG timeline of a report (svg.c).
 */
#ifndef RM_SUMMARIZE_SVG_H
#define RM_SUMMARIZE_SVG_H

#include "report.h"

/* 0, or -1 with errno. */
int write_svg(const struct report *r, const struct opts *o, const char *path);

#endif
