/*
 * spawner: paced posix_spawn generators for the exact-rate bench.
 *
 *   spawner GO RATE SECONDS LOG CHILD
 *
 * Waits until the file GO exists, then forks two generators, each of
 * which posix_spawns CHILD at RATE per second (paced on CLOCK_MONOTONIC:
 * the i-th spawn is due at i / RATE; one that falls behind spawns at once
 * and never catches up in a burst larger than its delay) for SECONDS.
 * Every process of the tree is logged to LOG, one line each:
 *
 *   ROLE PID STARTTIME
 *
 * ROLE is launcher, gen or child; STARTTIME is field 22 of /proc/PID/stat
 * (clock ticks since boot), read before the child is reaped, so that
 * (PID, STARTTIME) names one process even across PID wrap-around.  The
 * last line is "done SPAWNED WALL_NS" per generator.  The launcher then
 * waits until the file GO.end exists (so that a monitor following it
 * stays until the bench has read its CPU) and exits.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static unsigned long long starttime(pid_t pid)
{
	char path[64], buf[1024];
	int fd;
	ssize_t n;
	char *p;
	unsigned long long v = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	if (!p)
		return 0;
	/* field 3 (state) follows ") "; starttime is field 22 */
	p += 2;
	for (int f = 3; f < 22 && p; f++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	if (p)
		v = strtoull(p, NULL, 10);
	return v;
}

static long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void wait_file(const char *path)
{
	struct stat sb;

	while (stat(path, &sb) < 0) {
		struct timespec ts = { 0, 5 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
}

static int gen(double rate, double secs, FILE *log, const char *child)
{
	long long t0 = now_ns(), period = (long long)(1e9 / rate), end = t0 + (long long)(secs * 1e9);
	char *argv[] = { (char *)child, NULL };
	long long i = 0, spawned = 0;
	pid_t pid;
	int st;

	for (;;) {
		long long due = t0 + i * period, t = now_ns();
		if (due >= end || t >= end)
			break;
		if (due > t) {
			struct timespec ts = { due / 1000000000LL, due % 1000000000LL };
			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		} else if (t - due > period) {
			/* Behind: pace from now, no burst. */
			i = (t - t0) / period;
		}
		i++;
		if (posix_spawn(&pid, child, NULL, NULL, argv, environ) != 0) {
			perror("spawner: posix_spawn");
			continue;
		}
		fprintf(log, "child %d %llu\n", (int)pid, starttime(pid));
		spawned++;
		while (waitpid(-1, &st, WNOHANG) > 0)
			;
	}
	while (waitpid(-1, &st, 0) > 0 || errno == EINTR)
		;
	fprintf(log, "done %lld %lld\n", spawned, now_ns() - t0);
	return 0;
}

int main(int argc, char **argv)
{
	char end[4096];
	pid_t g[2];
	double rate, secs;
	FILE *log;
	int st;

	if (argc != 6) {
		fprintf(stderr, "usage: spawner GO RATE SECONDS LOG CHILD\n");
		return 2;
	}
	rate = atof(argv[2]);
	secs = atof(argv[3]);
	if (rate <= 0 || secs <= 0) {
		fprintf(stderr, "spawner: RATE and SECONDS must be > 0\n");
		return 2;
	}
	wait_file(argv[1]);
	log = fopen(argv[4], "w");
	if (!log) {
		perror("spawner: log");
		return 1;
	}
	setvbuf(log, NULL, _IOFBF, 1 << 16);
	fprintf(log, "launcher %d %llu\n", (int)getpid(), starttime(getpid()));
	fflush(log);
	for (int k = 0; k < 2; k++) {
		g[k] = fork();
		if (g[k] < 0) {
			perror("spawner: fork");
			return 1;
		}
		if (g[k] == 0) {
			char path[4096];
			FILE *l;
			snprintf(path, sizeof(path), "%s.%d", argv[4], k);
			l = fopen(path, "w");
			if (!l) {
				perror("spawner: log");
				_exit(1);
			}
			setvbuf(l, NULL, _IOFBF, 1 << 16);
			fprintf(l, "gen %d %llu\n", (int)getpid(), starttime(getpid()));
			gen(rate, secs, l, argv[5]);
			fclose(l);
			_exit(0);
		}
	}
	for (int k = 0; k < 2; k++)
		waitpid(g[k], &st, 0);
	fclose(log);
	snprintf(end, sizeof(end), "%s.end", argv[1]);
	wait_file(end);
	return 0;
}
