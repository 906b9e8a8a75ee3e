/*
 * oomer: allocate and touch MIB mebibytes, 1 MiB at a time with STEP_MS
 * milliseconds between steps, then hold them for HOLD_S seconds.  Run in
 * a memory cgroup with a smaller limit, the kernel's OOM killer ends it:
 * the test of rm-monitor's OOM kill report.
 *
 * usage: oomer MIB [STEP_MS [HOLD_S]]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long mib, step_ms = 5, hold_s = 5;
	struct timespec ts;

	if (argc < 2 || argc > 4) {
		fprintf(stderr, "usage: oomer MIB [STEP_MS [HOLD_S]]\n");
		return 2;
	}
	mib = atol(argv[1]);
	if (argc > 2)
		step_ms = atol(argv[2]);
	if (argc > 3)
		hold_s = atol(argv[3]);
	ts.tv_sec = step_ms / 1000;
	ts.tv_nsec = (step_ms % 1000) * 1000000L;
	for (long i = 0; i < mib; i++) {
		char *p = malloc(1 << 20);
		if (!p) {
			fprintf(stderr, "oomer: malloc failed at %ld MiB\n", i);
			return 1;
		}
		memset(p, (int)(i & 0xff) | 1, 1 << 20);
		nanosleep(&ts, NULL);
	}
	sleep((unsigned)hold_s);
	return 0;
}
