/*
 * compare.h: --compare OLD NEW, what changed between two runs of a build
 * (compare.c): run figures, stages, compile units, the -j advice.
 *
 * Units are matched by their path relative to the build directory: from
 * each run's absolute unit paths the longest directory prefix they all
 * share is stripped (another checkout, another build directory still
 * match); a unit left unmatched then matches the one unit of the other run
 * whose path ends in the same components; two or more such candidates
 * make it ambiguous, listed apart, never guessed.
 */
#ifndef RM_SUMMARIZE_COMPARE_H
#define RM_SUMMARIZE_COMPARE_H

#include "report.h"

struct upair {
	const struct unit *a, *b;  /* old, new; NULL: added or removed */
	const char *key;           /* the path the match was made on */
	int ambiguous;             /* candidates in the other run, when 2 or more */
};

struct cmp_units {
	struct upair *p;
	size_t n;
};

/* The units of a and b paired, the biggest change (MiB) first, then the
 * added, the removed and the ambiguous. */
void compare_units(const struct report *a, const struct report *b, struct cmp_units *out);
void compare_units_free(struct cmp_units *u);

/* The comparison of old and cur as text, Markdown or one JSON object. */
void print_compare(struct rm_buf *b, const struct report *old, const struct report *cur,
		   const struct opts *o);

#endif
