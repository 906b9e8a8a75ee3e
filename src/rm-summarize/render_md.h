/*
 * render_md.h: a report as Markdown (render_md.c).
 */
#ifndef RM_SUMMARIZE_RENDER_MD_H
#define RM_SUMMARIZE_RENDER_MD_H

#include "report.h"

void print_markdown(struct rm_buf *b, const struct report *r, const struct opts *o);

#endif
