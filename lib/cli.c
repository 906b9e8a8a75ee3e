/*
 * cli: see cli.h.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int rm_parse_seconds(const char *s, double min, double max, double *out)
{
	const char *p = s;
	int digits = 0;
	char *end;
	double v;

	/* Only [0-9]+(.[0-9]*)? or .[0-9]+ is accepted: strtod alone would
	 * take "inf", "nan", "1e3", "0x10" and leading spaces. */
	for (; *p >= '0' && *p <= '9'; p++)
		digits++;
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9'; p++)
			digits++;
	if (*p || !digits)
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int rm_parse_long(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	if (!*s || (*s != '-' && (*s < '0' || *s > '9')))
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int rm_parse_pid(const char *s, pid_t *out)
{
	long v;

	if (rm_parse_long(s, 1, 4194304, &v) < 0)
		return -1;
	*out = (pid_t)v;
	return 0;
}
