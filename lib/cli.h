/*
 * cli: the argument conventions every command shares: strict numbers,
 * intervals in seconds with decimals, PIDs, and the one-line usage error.
 */
#ifndef RM_CLI_H
#define RM_CLI_H

#include <sys/types.h>

/*
 * Parse a number of seconds with optional decimals ("0.2", "15") within
 * [min, max].  Returns 0, or -1 when s is not such a number or out of
 * range.  No exponents, no hex, no trailing text.
 */
int rm_parse_seconds(const char *s, double min, double max, double *out);

/*
 * Parse a duration: the same number as rm_parse_seconds, optionally
 * followed by one unit: "ms", "s", "m" or "h" ("200ms", "1.5s", "2m").
 * A bare number is seconds.  The result, in seconds, must lie within
 * [min, max].  Returns 0, or -1 on junk, an unknown unit, or out of range.
 */
int rm_parse_duration(const char *s, double min, double max, double *out);

/* Parse a decimal integer within [min, max]; -1 on any junk. */
int rm_parse_long(const char *s, long min, long max, long *out);

/* A PID: 1 to 4194304 (PID_MAX_LIMIT). */
int rm_parse_pid(const char *s, pid_t *out);

#endif
