/*
 * rmtools: what every command includes: the version, the shared exit
 * codes, and the lib modules.
 *
 * Never call setlocale(): every strtod (rm_parse_seconds, the /proc
 * parsers) and every "%f" of the emitters assumes the C locale's '.'.
 */
#ifndef RM_RMTOOLS_H
#define RM_RMTOOLS_H

#ifndef RM_VERSION
#define RM_VERSION "0.1.0"
#endif

#define RM_EXIT_OK 0
#define RM_EXIT_FAIL 1
#define RM_EXIT_USAGE 2

#include "cli.h"
#include "disk.h"
#include "emit.h"
#include "logtail.h"
#include "procfs.h"
#include "proctab.h"
#include "sysinfo.h"
#include "text.h"
#include "tick.h"

/*
 * Print "PROG: msg" and the usage line to stderr and exit 2.  Defined in
 * lib so that every command words usage errors the same way.
 */
void rm_usage_error(const char *prog, const char *usage_line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4), noreturn));

/*
 * Flush stdout at exit and report a failed write ("PROG: write error:
 * why" and exit 1), staying quiet on EPIPE.  Returns the status to exit with.
 */
int rm_finish_stdout(const char *prog, int status);

/*
 * The options every command words the same way.  Each returns the parsed
 * value or, on a bad one, prints the usage error and exits 2: so the
 * messages cannot drift from command to command.
 */
double rm_opt_interval(const char *prog, const char *usage_line, const char *arg);
long rm_opt_count(const char *prog, const char *usage_line, const char *arg);
pid_t rm_opt_watch_pid(const char *prog, const char *usage_line, const char *arg);
enum rm_fmt rm_opt_format(const char *prog, const char *usage_line, const char *arg);
/* -h: the usage and help on stdout, exit 0.  --version: "PROG VERSION". */
void rm_opt_help(const char *prog, const char *usage_line, const char *help)
	__attribute__((noreturn));
void rm_opt_version(const char *prog) __attribute__((noreturn));
/* getopt's ':' (a value missing) or '?' (an unknown option): exit 2. */
void rm_opt_bad(const char *prog, const char *usage_line, int c, char **argv, int next)
	__attribute__((noreturn));

/* Write a buffer to stdout; on EPIPE exit 0 quietly, on other errors
 * print "PROG: cannot write output: why" and exit 1. */
void rm_out(const char *prog, struct rm_buf *b);

#endif
