/*
 * fz_vmstat: oom_kill in /proc/vmstat (rm_vmstat_oom_parse).  Success
 * means an "oom_kill " line with a number was there.
 */
#include "fuzz.h"
#include "sysinfo.h"

static int fz_vmstat(const uint8_t *data, size_t size)
{
	uint64_t v = 12345;
	char *s = fz_cstr(data, size);

	if (!s)
		return 0;
	if (rm_vmstat_oom_parse(s, &v) == 0)
		FZ_ASSERT(strstr(s, "oom_kill ") != NULL);
	free(s);
	return 0;
}

FZ_MAIN(fz_vmstat)
