/*
 * gate.h: --fail-on, a budget gate on a built report (gate.c).  The list
 * is parsed once (gate_parse); gate_eval judges a report, and with
 * --compare the older run beside it, and words one line per condition
 * that holds.  rm-summarize then exits RM_EXIT_GATE (3).
 */
#ifndef RM_SUMMARIZE_GATE_H
#define RM_SUMMARIZE_GATE_H

#include "report.h"

#define RM_EXIT_GATE 3
#define GATE_MAX 16

enum gate_kind { G_OOM, G_NEAR_OOM, G_SWAP, G_LOW_DISK, G_PEAK, G_UNIT, G_USED,
		 G_GROW, G_GROW_TIME, G_GROW_CPU };

struct gate_cond {
	enum gate_kind k;
	double v;              /* KiB for the sizes, percent for grow */
	char text[64];         /* as given, for the messages */
};

struct gate {
	int n;
	struct gate_cond c[GATE_MAX];
};

/* Add the conditions of the comma list s to g: 0, or -1 with why filled. */
int gate_parse(struct gate *g, const char *s, char *why, size_t wsize);
/* Does g hold a condition that needs an older run (grow=...)? */
int gate_needs_compare(const struct gate *g);
/*
 * The conditions of g that hold for cur (old: the older run, NULL
 * without --compare), one line each, "fail-on COND: WHY\n", into out.
 * Returns how many hold.  A condition the inputs cannot answer (no exit
 * log for unit=, no disk column for low-disk) holds not, and gets a line
 * "fail-on COND: not judged: WHY\n" in notes.
 */
int gate_eval(const struct gate *g, const struct report *old, const struct report *cur,
	      struct rm_buf *out, struct rm_buf *notes);

/*
 * The fired lines at the top of what b holds from offset from on (text,
 * Markdown as a list), or, json, as "fail_on" in the object b ends with.
 */
void gate_lines(struct rm_buf *b, const struct rm_buf *lines, size_t from, int json, int md);
/* Each line on stderr, one write a line. */
void gate_stderr(const struct rm_buf *lines);

#endif
