/*
 * verdict.h: a verdict's words (verdict.c), from its data: the sentence
 * the text, Markdown and JSON reports print.
 */
#ifndef RM_SUMMARIZE_VERDICT_H
#define RM_SUMMARIZE_VERDICT_H

#include "report.h"

#define VERDICT_MAX 2048   /* a verdict's sentence, cut to this */

/* The sentence for v, into buf[VERDICT_MAX]. */
void verdict_text(const struct report *r, const struct verdict *v, char *buf, size_t size);
/* Victim k of e as the verdict names it: "`UNIT` (COMM, PID N)", or
 * "COMM (PID N)" without a unit. */
void oom_who(const struct oomev *e, int k, char *buf, size_t size);

#endif
