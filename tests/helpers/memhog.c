/*
 * memhog: allocate and touch an exact amount of memory for an exact time,
 * for the rm-tree and rm-run tests and the bench.
 *
 * usage: memhog [-m MIB] [-t SEC] [-c MIB,MIB,...] [-N COUNT [-j JOBS]] [-g]
 *               [-s MIB] [-a SEC] [-S SEC] [-v] [-p SEC] [-n NAME] [-r FILE] [-- ARG...]
 *
 *   -m MIB   hold MIB MiB (default 0), every page written
 *   -t SEC   hold it for SEC seconds after it is touched (default 0)
 *   -c LIST  instead, start one child per size in LIST, each holding its
 *            size for SEC from the moment every child has touched its own
 *            (so all hold at once); the parent holds nothing and waits
 *   -N COUNT instead, start COUNT children in all, at most -j JOBS
 *            (default 100) at once, each holding MIB for SEC
 *   -g       instead, double-fork: a grandchild holds MIB for SEC while
 *            its parent exits at once and this process exits after that
 *   -s MIB   a spike: MIB more, touched at -a SEC (default 0) after the
 *            base is touched, held for -S SEC (default 0.05), then unmapped
 *   -p SEC   spin on the CPU for SEC seconds before holding
 *   -n NAME  set the process name (prctl PR_SET_NAME) first
 *   -v       print "spike START END" (epoch seconds) to stderr after a spike
 *   -r FILE  create FILE once the memory (of every child) is touched;
 *            with -N, once every child has started
 *   -- ARG   ignored: lets a test put any text in the command line
 *
 * Memory is mmap'd anonymous (huge pages asked for with madvise) and one
 * byte per page is written with a non-zero value, so every page is a
 * private resident page.  Exits 0, 2
 * on a usage error, 1 when memory cannot be had.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MIB (1024UL * 1024UL)

struct opts {
	double mib, hold, spike, spike_at, spike_for, spin;
	const char *children, *name, *ready;
	int dfork, verbose;
	long many, jobs;
};

static void usage(void)
{
	fprintf(stderr, "usage: memhog [-m MIB] [-t SEC] [-c MIB,MIB,...] [-N COUNT [-j JOBS]] [-g]\n"
			"              [-s MIB] [-a SEC] [-S SEC] [-v] [-p SEC] [-n NAME] [-r FILE] [-- ARG...]\n");
	exit(2);
}

static double num(const char *s)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || v < 0)
		usage();
	return v;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double epoch(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_until(double t)
{
	struct timespec ts;

	ts.tv_sec = (time_t)t;
	ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* Map and touch mib MiB; NULL for 0. */
static char *hog(double mib, size_t *len)
{
	long page = sysconf(_SC_PAGESIZE);
	char *p;

	*len = (size_t)(mib * (double)MIB);
	if (*len == 0)
		return NULL;
	p = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		fprintf(stderr, "memhog: cannot map %.0f MiB: %s\n", mib, strerror(errno));
		exit(1);
	}
	/* Huge pages where the kernel has them: a 300 MiB spike is then
	 * touched in tens of milliseconds, not a second of 4 KiB faults. */
	madvise(p, *len, MADV_HUGEPAGE);
	for (size_t i = 0; i < *len; i += (size_t)page)
		p[i] = 1;
	return p;
}

static void touch_file(const char *path)
{
	int fd;

	if (!path)
		return;
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0)
		close(fd);
}

static void spin(double sec)
{
	double end = now() + sec;
	volatile unsigned long x = 0;

	while (now() < end)
		for (int i = 0; i < 10000; i++)
			x++;
}

/* With -c: after touching, a child says so on `done` and waits for EOF
 * on `go`, so that every child holds its memory at the same time. */
static int barrier_done = -1, barrier_go = -1;

/* The work of one process: spin, hold, spike, let go. */
static void work(const struct opts *o, double mib, const char *ready)
{
	size_t len, slen;
	double t0, end;
	char *p;

	if (o->spin > 0)
		spin(o->spin);
	p = hog(mib, &len);
	if (barrier_done >= 0) {
		char c = 1;
		if (write(barrier_done, &c, 1) != 1)
			exit(1);
		while (read(barrier_go, &c, 1) < 0 && errno == EINTR)
			;
	}
	t0 = now();
	end = t0 + o->hold;
	touch_file(ready);
	if (o->spike > 0) {
		double at = t0 + o->spike_at, e0, e1;
		sleep_until(at);
		e0 = epoch();
		char *s = hog(o->spike, &slen);
		sleep_until(now() + o->spike_for);
		munmap(s, slen);
		e1 = epoch();
		if (o->verbose)
			fprintf(stderr, "spike %.3f %.3f\n", e0, e1);
		if (end < now())
			end = now();
	}
	sleep_until(end);
	if (p)
		munmap(p, len);
}

static void run_children(const struct opts *o)
{
	char *list = strdup(o->children), *tok, *save = NULL;
	pid_t pids[64];
	int n = 0, status, done[2], go[2];
	char c;

	if (!list || pipe(done) < 0 || pipe(go) < 0)
		exit(1);
	barrier_done = done[1];
	barrier_go = go[0];
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		double mib = num(tok);
		pid_t pid;
		if (n == 64)
			usage();
		pid = fork();
		if (pid < 0) {
			perror("memhog: fork");
			exit(1);
		}
		if (pid == 0) {
			close(go[1]);
			close(done[0]);
			work(o, mib, NULL);
			_exit(0);
		}
		pids[n++] = pid;
	}
	close(done[1]);
	close(go[0]);
	/* Every child has touched its memory: let them all hold it. */
	for (int i = 0; i < n; i++)
		while (read(done[0], &c, 1) < 0 && errno == EINTR)
			;
	close(go[1]);
	touch_file(o->ready);
	for (int i = 0; i < n; i++)
		while (waitpid(pids[i], &status, 0) < 0 && errno == EINTR)
			;
	close(done[0]);
	free(list);
}

static void run_many(const struct opts *o)
{
	long started = 0, running = 0;
	int status;

	while (started < o->many || running > 0) {
		if (started < o->many && running < o->jobs) {
			pid_t pid = fork();
			if (pid < 0) {
				perror("memhog: fork");
				exit(1);
			}
			if (pid == 0) {
				work(o, o->mib, NULL);
				_exit(0);
			}
			started++;
			running++;
			if (started == o->many)
				touch_file(o->ready);   /* all started */
			continue;
		}
		if (wait(&status) > 0)
			running--;
		else if (errno != EINTR)
			break;
	}
}

static void run_dfork(const struct opts *o)
{
	pid_t pid = fork(), gpid;
	int status;

	if (pid < 0) {
		perror("memhog: fork");
		exit(1);
	}
	if (pid == 0) {
		pid_t pid_self = getpid();
		gpid = fork();
		if (gpid < 0)
			_exit(1);
		if (gpid == 0) {
			/* Wait until the parent is gone, so the work is an orphan's. */
			while (getppid() == pid_self)
				usleep(1000);
			work(o, o->mib, o->ready);
			_exit(0);
		}
		_exit(0);
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
}

int main(int argc, char **argv)
{
	struct opts o = { 0, 0, 0, 0, 0.05, 0, NULL, NULL, NULL, 0, 0, 0, 100 };
	int c;

	while ((c = getopt(argc, argv, "m:t:c:N:j:gs:a:S:p:n:r:v")) != -1) {
		switch (c) {
		case 'm': o.mib = num(optarg); break;
		case 't': o.hold = num(optarg); break;
		case 'c': o.children = optarg; break;
		case 'N': o.many = (long)num(optarg); break;
		case 'j': o.jobs = (long)num(optarg); break;
		case 'g': o.dfork = 1; break;
		case 'v': o.verbose = 1; break;
		case 's': o.spike = num(optarg); break;
		case 'a': o.spike_at = num(optarg); break;
		case 'S': o.spike_for = num(optarg); break;
		case 'p': o.spin = num(optarg); break;
		case 'n': o.name = optarg; break;
		case 'r': o.ready = optarg; break;
		default: usage();
		}
	}
	if (o.name)
		prctl(PR_SET_NAME, o.name, 0, 0, 0);
	if (o.children)
		run_children(&o);
	else if (o.many)
		run_many(&o);
	else if (o.dfork)
		run_dfork(&o);
	else
		work(&o, o.mib, o.ready);
	return 0;
}
