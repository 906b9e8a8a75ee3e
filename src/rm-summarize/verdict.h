/*
 * verdict.h: a verdict's words (verdict.c), from its data: the sentence
 * the text, Markdown and JSON reports print.
 */
#ifndef RM_SUMMARIZE_VERDICT_H
#define RM_SUMMARIZE_VERDICT_H

#include "report.h"

#define VERDICT_MAX 1536   /* a verdict's sentence, cut to this */

/* The sentence for v, into buf[VERDICT_MAX]. */
void verdict_text(const struct report *r, const struct verdict *v, char *buf, size_t size);

#endif
