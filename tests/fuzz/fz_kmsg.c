/*
 * fz_kmsg: a /dev/kmsg record (rm_kmsg_oom_parse), the kernel log line
 * that names an OOM kill's victim.  The record is read from an exactly
 * sized buffer (the parser takes a length, not a string); a kill it finds
 * has a positive PID, a NUL-terminated name and cgroup paths, a known
 * constraint and a finite time.
 */
#include <math.h>

#include "fuzz.h"
#include "kmsg.h"

static int fz_kmsg(const uint8_t *data, size_t size)
{
	struct rm_oom_kill o;
	char *rec = malloc(size ? size : 1);

	if (!rec)
		return 0;
	if (size)
		memcpy(rec, data, size);
	memset(&o, 'x', sizeof(o));
	(void)rm_kmsg_is_record(rec, size);
	if (rm_kmsg_oom_parse(rec, size, &o) == 1) {
		FZ_ASSERT(o.pid > 0);
		FZ_ASSERT(memchr(o.name, '\0', sizeof(o.name)) != NULL);
		FZ_ASSERT(isfinite(o.klog_s) && o.klog_s >= 0);
		FZ_ASSERT(memchr(o.oom_memcg, '\0', sizeof(o.oom_memcg)) != NULL);
		FZ_ASSERT(memchr(o.task_memcg, '\0', sizeof(o.task_memcg)) != NULL);
		FZ_ASSERT(o.constraint >= RM_OOM_UNKNOWN && o.constraint <= RM_OOM_MEMCG);
	}
	{
		struct rm_oom_task t;
		long long u, l;
		memset(&t, 'x', sizeof(t));
		for (int nc = 0; nc <= 17; nc += 7)
			if (rm_kmsg_task_parse(rec, size, nc, &t) == 1) {
				FZ_ASSERT(t.pid > 0 && t.tgid > 0 && t.rss_pages >= 0);
				FZ_ASSERT(memchr(t.name, '\0', sizeof(t.name)) != NULL);
			}
		if (rm_kmsg_memcg_parse(rec, size, &u, &l) == 1)
			FZ_ASSERT(u >= 0 && l >= 0);
	}
	free(rec);
	return 0;
}

FZ_MAIN(fz_kmsg)
