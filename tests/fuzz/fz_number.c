/*
 * fz_number: the number readers of sysfs and powercap files and of the
 * command line.  rm_parse_u64 (what rm_read_u64 and the energy, GPU and
 * cgroup readers use) must accept exactly blanks, digits, trailing white
 * space, and give back the digits' value; rm_parse_seconds, rm_parse_long
 * and rm_parse_pid must keep their ranges.
 */
#include <inttypes.h>
#include <math.h>

#include "fuzz.h"
#include "cli.h"
#include "procfs.h"

static void fz_u64(const char *s)
{
	uint64_t v;
	const char *p = s, *d;
	char back[32];

	if (rm_parse_u64(s, &v) < 0)
		return;
	while (*p == ' ' || *p == '\t')
		p++;
	FZ_ASSERT(*p >= '0' && *p <= '9');
	d = p;
	while (*p >= '0' && *p <= '9')
		p++;
	FZ_ASSERT(strspn(p, " \t\r\n") == strlen(p));
	while (d + 1 < p && *d == '0')
		d++;
	snprintf(back, sizeof(back), "%" PRIu64, v);
	FZ_ASSERT(strlen(back) == (size_t)(p - d) && memcmp(back, d, (size_t)(p - d)) == 0);
}

static int fz_number(const uint8_t *data, size_t size)
{
	char *s = fz_cstr(data, size);
	double sec;
	long l;
	pid_t pid;

	if (!s)
		return 0;
	fz_u64(s);
	if (rm_parse_seconds(s, 0.001, 86400, &sec) == 0)
		FZ_ASSERT(isfinite(sec) && sec >= 0.001 && sec <= 86400);
	if (rm_parse_long(s, -5, 1000000000L, &l) == 0)
		FZ_ASSERT(l >= -5 && l <= 1000000000L);
	if (rm_parse_pid(s, &pid) == 0)
		FZ_ASSERT(pid >= 1 && pid <= 4194304);
	free(s);
	return 0;
}

FZ_MAIN(fz_number)
