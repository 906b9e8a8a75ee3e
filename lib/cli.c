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

int rm_parse_duration(const char *s, double min, double max, double *out)
{
	static const struct { const char *name; double scale; } units[] = {
		{ "ms", 0.001 }, { "s", 1 }, { "m", 60 }, { "h", 3600 },
	};
	char num[64];
	size_t n = strspn(s, "0123456789.");
	double v, scale = 1;

	if (n == 0 || n >= sizeof(num))
		return -1;
	if (s[n]) {
		size_t i;

		for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (strcmp(s + n, units[i].name) == 0)
				break;
		if (i == sizeof(units) / sizeof(units[0]))
			return -1;
		scale = units[i].scale;
	}
	memcpy(num, s, n);
	num[n] = '\0';
	if (rm_parse_seconds(num, 0, 1e12, &v) < 0)
		return -1;
	v *= scale;
	if (v < min || v > max)
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
