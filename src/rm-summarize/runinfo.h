/*
 * runinfo: what rm-summarize is told of a monitored run beyond its CSVs,
 * so that rm-monitor only starts the samplers, waits and hands over files.
 *
 * Its six options are in main.c's table.  Beyond --help: the status
 * files are summed (rows lost, the first lost, rows staged by the log's
 * name, gaps, the longest gap, the kernel's dropped-event bursts); every file is read once under whatever
 * name, and --companions adds X.csv's companions.
 *
 * It depends on lib only; main.c calls it and passes what it needs.
 */
#ifndef RM_SUMMARIZE_RUNINFO_H
#define RM_SUMMARIZE_RUNINFO_H

#include "text.h"

enum { RI_STATUS, RI_NOTE, RI_COMPANIONS, RI_KEEP_ERROR, RI_CHECK, RI_PROCS_GAP };

/* Record one of the options above (arg NULL for a flag). */
void runinfo_opt(int which, const char *arg);

/* 1 after --check, --keep-error: main.c's parse_args acts on them. */
extern int runinfo_check, runinfo_keep_error;

/*
 * After the options: add the companion files to the inputs argv[optind..]
 * (a new array in *argv; returns the new argc), read the status files
 * into the counts (a count given as an option is added to), and with
 * --keep-error start keeping standard error for out (the -o FILE).
 * Exits 1 with a message on a status file it cannot read.
 */
int runinfo_start(int argc, char ***argv, int optind_, const char *out, int json,
		  long *rows_lost, const char **rows_lost_from, long *stage_fallback);

/* The samplers' dropped-event bursts (events_dropped summed over the
 * status files), or -1 when no status file said. */
long runinfo_events_dropped(void);

/*
 * The --procs-gap texts (each also a gap note), *n of them: the process log
 * (rm-tree) died during the run, so its rows are not every process.
 */
const char *const *runinfo_procs_gaps(int *n);

/* After the reports: the "Gaps in sampling" section, when text is 1. */
void runinfo_text(struct rm_buf *b, int text);

#endif
