/*
 * cgroup_read: CPU per rm_cg_read() of this process's own memory cgroup
 * (what rm-sample --cgroup-path adds to every tick), measured alone.
 *
 * usage: cgroup_read COUNT   prints "MS_PER_READ" (CPU milliseconds)
 */
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
	printf("%.5f\n", ((double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6) / (double)n);
	return 0;
}
