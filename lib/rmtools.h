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
 * The program's name for err(3), warn(3) and the like: the command's fixed
 * name, so that a copy of the binary under another name still says
 * "rm-energy: ...".  It also line-buffers stderr, so that each message
 * leaves in one write(2), whole, as an fprintf to an unbuffered stderr
 * did.  Call it first thing in main.
 */
void rm_set_prog(const char *prog);

/*
 * Parse the next option of argv by c's table (cli.h), getopt_long style:
 * returns the key of an RM_CLI_CALLER option (optarg holds its argument),
 * or -1 at the end of the options (optind is the first operand).  Every
 * other kind is done here: its value parsed and stored at dst + off
 * (dst: the command's struct opts), -h and --version printed with exit 0,
 * and a bad value, an unknown option or a missing value is a usage error
 * (exit 2).  flags: RM_CLI_IN_ORDER to stop at the first operand.
 */
int rm_cli_next(const struct rm_cli *c, int flags, int argc, char **argv, void *dst);

/*
 * Parse arg as an option of this kind (RM_CLI_INTERVAL, RM_CLI_COUNT,
 * RM_CLI_FORMAT, RM_CLI_WATCH_PID, RM_CLI_STRING, RM_CLI_TRUE or
 * RM_CLI_FALSE) into *field, worded the same in every command; a bad
 * value is a usage error (exit 2).  For an RM_CLI_CALLER option that
 * stores in its own way (rm-sample's repeated --watch-pid).
 */
void rm_cli_value(const struct rm_cli *c, enum rm_cli_kind kind, const char *arg, void *field);

/* "PROG: msg", then c's usage lines, on stderr; exit 2. */
void rm_cli_usage_error(const struct rm_cli *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));

/*
 * Flush stdout at exit and report a failed write ("PROG: cannot write
 * output: why", then status 1), staying quiet on EPIPE.  Returns the
 * status to exit with.  PROG is rm_set_prog's name (err(3)).
 */
int rm_finish_stdout(int status);

/* Write a buffer to stdout; on EPIPE exit 0 quietly, on other errors
 * print "PROG: cannot write output: why" and exit 1. */
void rm_out(struct rm_buf *b);

#endif
