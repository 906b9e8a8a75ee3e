/*
 * churn: start RATE short-lived processes a second for SECONDS seconds,
 * the storm a parallel build makes, so that tests can run the samplers
 * through it.
 *
 * usage: churn RATE SECONDS [NAME]
 *
 * Every child renames itself NAME (default "cc1", so that rm-sample's
 * compiler count and rm-tree --match read processes as they vanish),
 * lives 0 to 2 ms and exits.  Most children are made with clone(2) sharing
 * the parent's memory (each is still a process of its own, with its own
 * PID and /proc directory): fork(2) copies the page tables and costs
 * milliseconds on some virtual machines, too slow for thousands a second.
 * Every 50th child is a real fork() that forks a grandchild and exits
 * without waiting for it, so that grandchild is orphaned and reparented
 * mid-life (to a subreaper such as rm-tree --exec, or to init).  Every
 * 500th child's grandchild lives 300 ms instead: a sampler that polls /proc
 * sees a process only while it lives, and on a loaded machine (make check
 * runs the other files alongside) a poller at -i 0.01 can go tens of
 * milliseconds between reads, so only these few are sure to be seen
 * (CI's run saw none of the 2 ms ones through rm-tree --match).  Children
 * are started on absolute deadlines, one batch a millisecond.  At the end,
 * after reaping every child, prints how many processes it started.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SLOTS 1024
#define STACK (64 * 1024)

static const char *name = "cc1";
static char *stacks;
static pid_t slot_pid[SLOTS];

static void nap_us(long us)
{
	struct timespec ts = { 0, us * 1000 };

	/* Raw syscalls: a clone child shares errno with the parent. */
	syscall(SYS_nanosleep, &ts, NULL);
}

/* A clone child: same memory as churn, its own process. */
static int light_child(void *arg)
{
	uintptr_t k = (uintptr_t)arg;

	syscall(SYS_prctl, PR_SET_NAME, name, 0, 0, 0);
	nap_us((long)(k * 104729 % 2000));
	syscall(SYS_exit, 0);
	return 0;
}

static void fork_child(unsigned long k)
{
	prctl(PR_SET_NAME, name, 0, 0, 0);
	if (fork() == 0) {
		prctl(PR_SET_NAME, name, 0, 0, 0);
		nap_us(k % 500 == 0 ? 300000 : (long)(k * 7919 % 2000) + 500);
		_exit(0);
	}
	_exit(0);
}

static void forget(pid_t pid)
{
	for (int i = 0; i < SLOTS; i++)
		if (slot_pid[i] == pid)
			slot_pid[i] = 0;
}

static void reap(int block)
{
	pid_t pid;

	while ((pid = waitpid(-1, NULL, (block ? 0 : WNOHANG) | __WALL)) > 0)
		forget(pid);
}

/* Start child number k; returns 0, or -1 when the kernel said no. */
static int start(unsigned long k)
{
	int slot = (int)(k % SLOTS);
	pid_t pid;

	if (k % 50 == 0) {
		pid = fork();
		if (pid == 0)
			fork_child(k);
		return pid < 0 ? -1 : 0;
	}
	/* A slot's stack is reused only once its last child is reaped. */
	if (slot_pid[slot] > 0 && waitpid(slot_pid[slot], NULL, __WALL) > 0)
		slot_pid[slot] = 0;
	pid = clone(light_child, stacks + (size_t)(slot + 1) * STACK,
		    CLONE_VM | SIGCHLD, (void *)(uintptr_t)k);
	if (pid < 0)
		return -1;
	slot_pid[slot] = pid;
	return 0;
}

int main(int argc, char **argv)
{
	struct timespec begin, due;
	long rate, secs, ms;
	unsigned long started = 0;
	double carry = 0;

	if (argc < 3 || (rate = atol(argv[1])) <= 0 || (secs = atol(argv[2])) <= 0) {
		fprintf(stderr, "usage: churn RATE SECONDS [NAME]\n");
		return 2;
	}
	if (argc > 3)
		name = argv[3];
	stacks = mmap(NULL, (size_t)SLOTS * STACK, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (stacks == MAP_FAILED) {
		perror("churn: mmap");
		return 1;
	}
	signal(SIGCHLD, SIG_DFL);
	clock_gettime(CLOCK_MONOTONIC, &begin);
	for (ms = 0; ms < secs * 1000; ms++) {
		long batch;

		carry += (double)rate / 1000.0;
		batch = (long)carry;
		carry -= (double)batch;
		for (long i = 0; i < batch; i++) {
			if (start(started) < 0) {
				if (errno != EAGAIN) {
					perror("churn: clone");
					return 1;
				}
				reap(0);
				continue;
			}
			started++;
		}
		reap(0);
		due.tv_sec = begin.tv_sec + (ms + 1) / 1000;
		due.tv_nsec = begin.tv_nsec + ((ms + 1) % 1000) * 1000000L;
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
