/*
 * disk: see disk.h.
 */
#include <sys/statvfs.h>

#include "disk.h"

int rm_disk_read(const char *path, struct rm_disk *d)
{
	struct statvfs sv;
	uint64_t used, nonroot;

	if (statvfs(path, &sv) < 0)
		return -1;
	d->size_bytes = (uint64_t)sv.f_blocks * sv.f_frsize;
	d->avail_bytes = (uint64_t)sv.f_bavail * sv.f_frsize;
	used = (uint64_t)(sv.f_blocks - sv.f_bfree);
	nonroot = used + sv.f_bavail;
	/* df rounds the percentage up: a disk 99.1 % full shows 100 %. */
	d->used_pct = nonroot ? (double)((used * 100 + nonroot - 1) / nonroot) : 0;
	return 0;
}
