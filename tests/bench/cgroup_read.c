/*
 * cgroup_read: CPU per rm_cg_read() of this process's own memory cgroup
 * (what rm-sample --cgroup-path adds to every tick), measured alone.
 *
 * usage: cgroup_read COUNT   prints "MS_PER_READ FLOOR_MS BY_FILE" (CPU
 * milliseconds): FLOOR_MS is the kernel's part, the same preads of the
 * same cgroup files (the descriptors rm_cg_read keeps, found in
 * /proc/self/fd) with nothing parsed; BY_FILE that part file by file,
 * NAME=MS joined by commas (what a tick pays for each file it reads).
 */
#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cgroup.h"

int main(int argc, char **argv)
{
	struct rm_cg cg;
	struct rm_cg_reading r;
	struct timespec t0, t1;
	char why[256];
	long n = argc > 1 ? atol(argv[1]) : 2000;

	if (n < 1 || rm_cg_open(&cg, 0, NULL, why, sizeof(why)) < 0) {
		fprintf(stderr, "cgroup_read: %s\n", n < 1 ? "bad count" : why);
		return 1;
	}
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
	for (long i = 0; i < n; i++)
		rm_cg_read(&cg, &r);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
	double ours = ((double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6) / (double)n;

	/* The floor: every kept descriptor on a cgroup file, read as rm_cg_read
	 * reads it (pread from 0). */
	int fds[32], nfd = 0;
	char names[32][64];
	static char buf[16384];
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	while (d && (de = readdir(d)) != NULL && nfd < 32) {
		char link[64], to[4096];
		ssize_t len;
		int fd = atoi(de->d_name);
		if (fd <= 2 || fd == dirfd(d))
			continue;
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		len = readlink(link, to, sizeof(to) - 1);
		if (len <= 0)
			continue;
		to[len] = '\0';
		if (strncmp(to, "/sys/fs/cgroup/", 15) == 0) {
			const char *base = strrchr(to, '/');
			snprintf(names[nfd], sizeof(names[nfd]), "%s", base ? base + 1 : to);
			fds[nfd++] = fd;
		}
	}
	if (d)
		closedir(d);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
	for (long i = 0; i < n; i++)
		for (int k = 0; k < nfd; k++)
			if (pread(fds[k], buf, sizeof(buf) - 1, 0) < 0)
				break;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
	printf("%.5f %.5f ", ours,
	       ((double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6) / (double)n);
	for (int k = 0; k < nfd; k++) {
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
		for (long i = 0; i < n; i++)
			if (pread(fds[k], buf, sizeof(buf) - 1, 0) < 0)
				break;
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
		printf("%s%s=%.5f", k ? "," : "", names[k],
		       ((double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6) / (double)n);
	}
	printf("%s\n", nfd ? "" : "-");
	return 0;
}
