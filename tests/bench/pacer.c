/*
 * pacer: a build that starts RATE short processes a second for SECONDS
 * seconds (0: until killed), each one PROG (default /bin/true), reaped as
 * it ends, on a steady clock (a late start is not made up in a burst).
 * For the monitor-cost section: the build rm-monitor follows.
 *
 * usage: pacer RATE SECONDS [PROG ARG...]
 */
#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

int main(int argc, char **argv)
{
	char *def[] = {"/bin/true", NULL};
	char **prog = argc > 3 ? argv + 3 : def;
	struct timespec t0, next;
	double rate, secs;
	long k;

	if (argc < 3 || (rate = atof(argv[1])) <= 0 || (secs = atof(argv[2])) < 0) {
		fprintf(stderr, "usage: pacer RATE SECONDS [PROG ARG...]\n");
		return 2;
	}
	signal(SIGCHLD, SIG_DFL);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (k = 0; secs == 0 || k < (long)(rate * secs); k++) {
		double at = (double)k / rate;
		pid_t pid;

		next.tv_sec = t0.tv_sec + (time_t)at;
		next.tv_nsec = t0.tv_nsec + (long)((at - (double)(time_t)at) * 1e9);
		if (next.tv_nsec >= 1000000000L) {
			next.tv_sec++;
			next.tv_nsec -= 1000000000L;
		}
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR)
			;
		if (posix_spawn(&pid, prog[0], NULL, NULL, prog, environ) != 0) {
			perror("pacer: posix_spawn");
			return 1;
		}
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
	}
	while (wait(NULL) > 0)
		;
	return 0;
}
