/*
 * churn: start RATE short-lived processes a second for SECONDS seconds,
 * the storm a parallel build makes, so that tests can run the samplers
 * through it.
 *
 * usage: churn RATE SECONDS [NAME]
 *
 * Every child renames itself NAME (default "cc1", so that rm-sample's
 * compiler count and rm-tree --match read processes as they vanish),
 * lives 0 to 2 ms and exits; every fourth one first forks a grandchild
 * and exits without waiting for it, so the grandchild is orphaned and
 * reparented mid-life (to a subreaper such as rm-tree --exec, or init).
 * Forks are paced on absolute deadlines, one batch a millisecond.  At the
 * end, after reaping every child, prints how many processes it started.
 * Exits 1 when a fork fails for a reason other than EAGAIN.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void nap_us(long us)
{
	struct timespec ts = { 0, us * 1000 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static void child(const char *name, unsigned long k)
{
	prctl(PR_SET_NAME, name, 0, 0, 0);
	if (k % 4 == 0 && fork() == 0) {
		prctl(PR_SET_NAME, name, 0, 0, 0);
		nap_us((long)(k * 7919 % 2000));
		_exit(0);
	}
	nap_us((long)(k * 104729 % 2000));
	_exit(0);
}

static void reap(int block)
{
	while (waitpid(-1, NULL, block ? 0 : WNOHANG) > 0)
		;
}

int main(int argc, char **argv)
{
	struct timespec start, due;
	const char *name = argc > 3 ? argv[3] : "cc1";
	long rate, secs, ms;
	unsigned long started = 0;
	double carry = 0;

	if (argc < 3 || (rate = atol(argv[1])) <= 0 || (secs = atol(argv[2])) <= 0) {
		fprintf(stderr, "usage: churn RATE SECONDS [NAME]\n");
		return 2;
	}
	signal(SIGCHLD, SIG_DFL);
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (ms = 0; ms < secs * 1000; ms++) {
		long batch;

		carry += (double)rate / 1000.0;
		batch = (long)carry;
		carry -= (double)batch;
		for (long i = 0; i < batch; i++) {
			pid_t pid = fork();
			if (pid == 0)
				child(name, started);
			if (pid < 0) {
				if (errno != EAGAIN) {
					perror("churn: fork");
					return 1;
				}
				reap(0);
				continue;
			}
			started++;
		}
		reap(0);
		due.tv_sec = start.tv_sec + (ms + 1) / 1000;
		due.tv_nsec = start.tv_nsec + ((ms + 1) % 1000) * 1000000L;
		if (due.tv_nsec >= 1000000000L) {
			due.tv_sec++;
			due.tv_nsec -= 1000000000L;
		}
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &due, NULL) == EINTR)
			;
	}
	reap(1);
	printf("%lu\n", started);
	return 0;
}
