/*
 * render_json.h: a report as one JSON object a line (render_json.c).
 */
#ifndef RM_SUMMARIZE_RENDER_JSON_H
#define RM_SUMMARIZE_RENDER_JSON_H

#include "report.h"

void print_json(struct rm_buf *b, const struct report *r, const struct opts *o);

#endif
