/*
 * fz_psi: a /proc/pressure/{cpu,memory,io} file (rm_psi_parse).  Success means a some
 * or a full line with an avg10 was there.
 */
#include "fuzz.h"
#include "sysinfo.h"

static int fz_psi(const uint8_t *data, size_t size)
{
	struct rm_psi p;
	char *s = fz_cstr(data, size);
	int rc;

	if (!s)
		return 0;
	rc = rm_psi_parse(s, &p);
	FZ_ASSERT((rc == 0) == (p.has_some || p.has_full));
	if (p.has_some)
		FZ_ASSERT(strstr(s, "some ") != NULL);
	if (p.has_full)
		FZ_ASSERT(strstr(s, "full ") != NULL);
	if (rc == 0)
		FZ_ASSERT(strstr(s, "avg10=") != NULL);
	free(s);
	return 0;
}

FZ_MAIN(fz_psi)
