/*
 * render_text.h: a report as text (render_text.c).
 */
#ifndef RM_SUMMARIZE_RENDER_TEXT_H
#define RM_SUMMARIZE_RENDER_TEXT_H

#include "report.h"

void print_text(struct rm_buf *b, const struct report *r, const struct opts *o);

#endif
