/*
 * fz_meminfo: /proc/meminfo (rm_meminfo_parse).  Success means MemTotal
 * was there; a value not in the text is flagged unknown and left 0.
 */
#include "fuzz.h"
#include "sysinfo.h"

static int fz_meminfo(const uint8_t *data, size_t size)
{
	struct rm_meminfo mi;
	char *s = fz_cstr(data, size);
	int rc;

	if (!s)
		return 0;
	rc = rm_meminfo_parse(s, &mi);
	FZ_ASSERT((rc == 0) == ((mi.has & RM_MI_TOTAL) != 0));
	FZ_ASSERT((mi.has & ~0x1fu) == 0);
	if (!(mi.has & RM_MI_AVAIL))
		FZ_ASSERT(mi.avail_kib == 0);
	if (mi.has & RM_MI_AVAIL)
		FZ_ASSERT(strstr(s, "MemAvailable:") != NULL);
	if (!(mi.has & RM_MI_SWAPFREE))
		FZ_ASSERT(mi.swap_free_kib == 0);
	free(s);
	return 0;
}

FZ_MAIN(fz_meminfo)
