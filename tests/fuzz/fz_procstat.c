/*
 * fz_procstat: the aggregate cpu line of /proc/stat (rm_cputimes_parse)
 * and /proc/loadavg (rm_loadavg_parse).  The input is split at the first
 * NUL into two /proc/stat readings; the busy % between them is unknown
 * (-1) or within 0..100, never anything else.
 */
#include <math.h>

#include "fuzz.h"
#include "sysinfo.h"

static int fz_procstat(const uint8_t *data, size_t size)
{
	struct rm_cputimes a, b;
	struct rm_loadavg la;
	char *s = fz_cstr(data, size);
	const char *second;
	double pct;

	if (!s)
		return 0;
	second = s + strlen(s);
	if ((size_t)(second - s) < size)
		second++;
	if (rm_cputimes_parse(s, &a) == 0)
		FZ_ASSERT(a.known);
	else
		FZ_ASSERT(!a.known);
	rm_cputimes_parse(second, &b);
	pct = rm_cputimes_pct(&a, &b);
	FZ_ASSERT(pct == -1 || (pct >= 0 && pct <= 100));
	if (rm_loadavg_parse(s, &la) == 0)
		FZ_ASSERT(la.known);
	free(s);
	return 0;
}

FZ_MAIN(fz_procstat)
