/*
 * comps.h: every compiler's peak, peak time, start and end, as a folded
 * exit log keeps them: 16 bytes and a bit a compiler, for each stage's
 * p95 and largest peak (Memory per compile job) and the sweep of the
 * compilers alive at once.  Both are computed by sorting these arrays in
 * place, so neither takes a copy.
 */
#ifndef RM_SUMMARIZE_COMPS_H
#define RM_SUMMARIZE_COMPS_H

#include <stddef.h>
#include <stdint.h>

struct report;

struct comps {
	uint32_t *peak, *t, *start, *end;   /* encoded: comps.c */
	unsigned char *emu;                 /* a bit a compiler: emulated */
	size_t n, cap;
	double *side;                       /* the figures no u32 holds exactly */
	size_t nside, capside;
	size_t ns, is, ie;                  /* the sweep: its events of each kind, */
	int sorted;                         /* the next start and end */
};

/* A compiler's row: peak KiB, peak time, start and end (rm-tree's
 * seconds; NaN unknown), emulated (rm-tree's yes). */
void comps_add(struct comps *c, double peak, double t, double start, double end, int emulated);
/* Into each stage (stage_at of off + t; no time: the unnamed stage, as
 * stage_add_cpeak does): the count, the emulated count, the p95 (nearest
 * rank) and the largest peak.  The peaks and times are freed after. */
void comps_stage_peaks(struct comps *c, struct report *r, double off);
/* The compilers with a start, as a sweep's events in time order (an end
 * before a start at the same time; a survivor ends at last): each call
 * gives the next in *t and *d (+1 a start, -1 an end), 0 after the last.
 * The first call sorts the starts and ends in place; every call passes
 * the same last. */
int comps_next(struct comps *c, double last, double *t, int *d);
void comps_free(struct comps *c);

#endif
