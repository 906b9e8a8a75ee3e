/*
 * scopeout.h: the parts of the report that rm-tree's event mode and scope
 * add (scopeout.c), in text, Markdown and JSON.
 */
#ifndef RM_SUMMARIZE_SCOPEOUT_H
#define RM_SUMMARIZE_SCOPEOUT_H

#include "report.h"

void text_scope(struct rm_buf *b, const struct report *r, const struct opts *o, const char *bold,
		const char *off);
void md_scope(struct rm_buf *b, const struct report *r, const struct opts *o);
void json_scope(struct rm_buf *b, int *first, const struct report *r, const struct opts *o);

#endif
