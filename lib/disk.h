/*
 * disk: free space of a filesystem as df(1) reports it.
 */
#ifndef RM_DISK_H
#define RM_DISK_H

#include <stdint.h>

struct rm_disk {
	uint64_t size_bytes;   /* f_blocks * f_frsize */
	uint64_t avail_bytes;  /* f_bavail: what a non-root user can write */
	double used_pct;       /* df's Use%: used / (used + avail), rounded up */
};

/* statvfs of path.  Returns 0, or -1 with errno. */
int rm_disk_read(const char *path, struct rm_disk *d);

#endif
