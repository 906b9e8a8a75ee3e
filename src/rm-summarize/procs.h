/*
 * procs.h: rm-tree's files read into the report (procs.c): the exit
 * log, the --job row, the --timeline and the --stats row.
 */
#ifndef RM_SUMMARIZE_PROCS_H
#define RM_SUMMARIZE_PROCS_H

#include "report.h"

enum pkind { PK_NONE, PK_EXITLOG, PK_JOB, PK_TIMELINE, PK_STATS };
/* Which of rm-tree's files a header is, or PK_NONE. */
enum pkind procs_kind(const struct rm_csv *hdr);
void procs_header(struct report *r, enum pkind k, const struct rm_csv *hdr);
/* Read one row; -1 with why when it is not a row of this file. */
int procs_row(struct report *r, enum pkind k, struct rm_csv *c, char *why, size_t wsize);

/*
 * The command lines of other users' scope=out rows are not copied into
 * the report unless --elsewhere-cmdlines asks: a row's is kept when its
 * uid is one of the build's (an in-scope row's), else emptied (the unit
 * too) and counted in r->others_hidden.  A row without a uid (an exit log
 * from before the column) is another user's: nothing says otherwise.
 */
void procs_hide_cmdlines(struct report *r, const struct opts *o);

#endif
