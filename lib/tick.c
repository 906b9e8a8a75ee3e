/*
 * tick: see tick.h.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tick.h"

static volatile sig_atomic_t got_signal, got_code;

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	got_signal = sig;
	got_code = si ? si->si_code : SI_USER;
}

static const int entry_signo[RM_ENTRY_NSIG] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT };

void rm_entry_save(struct rm_entry *e)
{
	sigprocmask(SIG_SETMASK, NULL, &e->mask);
	for (int i = 0; i < RM_ENTRY_NSIG; i++)
		sigaction(entry_signo[i], NULL, &e->sa[i]);
}

void rm_entry_restore(const struct rm_entry *e)
{
	for (int i = 0; i < RM_ENTRY_NSIG; i++) {
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = e->sa[i].sa_handler == SIG_IGN ? SIG_IGN : SIG_DFL;
		sigaction(entry_signo[i], &sa, NULL);
	}
	signal(SIGCHLD, SIG_DFL);
	sigprocmask(SIG_SETMASK, &e->mask, NULL);
}

static int open_pidfd(pid_t pid)
{
#ifdef SYS_pidfd_open
	const char *no = getenv("RM_NO_PIDFD");
	if (no && *no && strcmp(no, "0") != 0) {
		errno = ENOSYS;
		return -1;
	}
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	(void)pid;
	errno = ENOSYS;
	return -1;
#endif
}

double rm_now_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double rm_now_epoch(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void rm_fmt_iso(double epoch, char *buf, size_t size)
{
	long long total;
	time_t s;
	int ms;
	struct tm tm;

	/* 1970 to the year 9999, or no time at all: never a year like
	 * -292275055 from an overflowing cast. */
	if (!(epoch >= 0 && epoch < 253402300800.0)) {
		snprintf(buf, size, "?");
		return;
	}
	/* Round once to whole milliseconds so iso agrees with epoch's %.3f. */
	total = (long long)(epoch * 1000.0 + 0.5);
	s = (time_t)(total / 1000);
	ms = (int)(total % 1000);
	gmtime_r(&s, &tm);
	snprintf(buf, size, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
		 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
		 tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
}

int rm_tick_init(struct rm_tick *t, double interval, long count, pid_t watch_pid)
{
	struct sigaction sa;
	sigset_t set;

	memset(t, 0, sizeof(*t));
	t->interval = interval;
	t->count = count;
	t->extra_fd = -1;
	if (watch_pid > 0 && rm_tick_watch(t, watch_pid) < 0)
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	/* One handler at a time: got_signal and got_code stay a pair. */
	sigaddset(&sa.sa_mask, SIGINT);
	sigaddset(&sa.sa_mask, SIGTERM);
	sigaddset(&sa.sa_mask, SIGHUP);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t->start);
	return 0;
}

int rm_tick_watch(struct rm_tick *t, pid_t pid)
{
	int fd;

	if (t->nwatch == RM_TICK_WATCH_MAX) {
		errno = E2BIG;
		return -1;
	}
	fd = open_pidfd(pid);
	if (fd < 0 && (errno == ESRCH || (kill(pid, 0) < 0 && errno == ESRCH))) {
		errno = ESRCH;
		return -1;
	}
	t->watch_pid[t->nwatch] = pid;
	t->pidfd[t->nwatch++] = fd;
	return 0;
}

double rm_tick_elapsed(const struct rm_tick *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t->start.tv_sec) +
	       (double)(now.tv_nsec - t->start.tv_nsec) / 1e9;
}

/* Has any watched PID ended?  pidfds: all, the ppoll's answer not at
 * hand (else its revents said); the others by kill, always. */
static int pid_gone(struct rm_tick *t, int all)
{
	for (int i = 0; i < t->nwatch; i++) {
		struct pollfd p = { t->pidfd[i], POLLIN, 0 };
		if (p.fd >= 0 ? all && poll(&p, 1, 0) > 0 : kill(t->watch_pid[i], 0) < 0 && errno == ESRCH)
			return 1;
	}
	return 0;
}

/* A signal caught: the end, said in t. */
static int caught(struct rm_tick *t)
{
	if (!got_signal)
		return 0;
	t->end = RM_END_SIGNAL;
	t->signo = got_signal;
	t->si_code = got_code;
	return 1;
}

int rm_tick_stopping(struct rm_tick *t)
{
	sigset_t pending;

	if (!got_signal && sigpending(&pending) == 0 &&
	    (sigismember(&pending, SIGINT) || sigismember(&pending, SIGTERM) ||
	     sigismember(&pending, SIGHUP))) {
		/* Let the pending signal through to the handler. */
		sigset_t empty;
		sigemptyset(&empty);
		struct timespec zero = { 0, 0 };
		ppoll(NULL, 0, &zero, &empty);
	}
	return caught(t);
}

int rm_tick_sleep_until(struct rm_tick *t, double sec)
{
	sigset_t empty;

	/* The ppoll below lets a pending signal in (EINTR) and wakes when a
	 * pidfd is readable: sigpending and a poll of each pidfd are asked
	 * only when it does not run (the deadline has come) or said so, not
	 * at each of the many wake-ups of an events hook. */
	int all = 0;

	sigemptyset(&empty);
	for (;;) {
		struct pollfd p[1 + RM_TICK_WATCH_MAX + RM_TICK_HOOK_MAX];
		nfds_t n = 0;
		int xi = -1, hi = 0, hn = 0, np = 0, r;
		double left;
		struct timespec ts;

		if (caught(t))
			return 0;
		if (pid_gone(t, all)) {
			t->end = RM_END_PID;
			return 0;
		}
		left = sec - rm_tick_elapsed(t);
		if (left <= 0) {
			if (rm_tick_stopping(t))
				return 0;
			if (!all && pid_gone(t, 1)) {
				t->end = RM_END_PID;
				return 0;
			}
			return 1;
		}
		for (int i = 0; i < t->nwatch; i++) {
			if (t->pidfd[i] >= 0) {
				p[n].fd = t->pidfd[i];
				p[n].events = POLLIN;
				n++;
				np++;
			} else if (left > 0.02) {
				left = 0.02;
			}
		}
		if (t->extra_fd >= 0) {
			xi = (int)n;
			p[n].fd = t->extra_fd;
			p[n].events = POLLIN;
			n++;
		}
		if (t->hook_fds) {
			hi = (int)n;
			hn = t->hook_fds(t->hook_arg, p + n, RM_TICK_HOOK_MAX, &left);
			n += (nfds_t)hn;
			if (left < 0)
				left = 0;
		}
		if (left > 1e6)
			left = 1e6;
		ts.tv_sec = (time_t)left;
		ts.tv_nsec = (long)((left - (double)ts.tv_sec) * 1e9);
		r = ppoll(n ? p : NULL, n, &ts, &empty);
		all = 0;
		for (int i = 0; r > 0 && i < np; i++)
			all |= p[i].revents != 0;
		if (r >= 0 && t->hook_ready)
			t->hook_ready(t->hook_arg, p + hi, hn);
		if (r > 0 && xi >= 0 && (p[xi].revents & (POLLIN | POLLHUP)))
			return 2;
	}
}

int rm_tick_next(struct rm_tick *t)
{
	double due;

	if (t->count > 0 && t->done >= t->count) {
		t->end = RM_END_COUNT;
		return 0;
	}
	due = (double)t->slot * t->interval;
	if (t->slot > 0) {
		/* A sample that overran whole intervals skips those deadlines
		 * rather than bursting to catch up. */
		double el = rm_tick_elapsed(t);
		if (el > due + t->interval) {
			t->slot += (long)((el - due) / t->interval);
			due = (double)t->slot * t->interval;
		}
	}
	switch (rm_tick_sleep_until(t, due)) {
	case 0:
		return 0;
	case 2:
		return 2; /* woken by extra_fd: not a tick, the deadline stays */
	}
	t->slot++;
	t->done++;
	return 1;
}

void rm_tick_clear_signal(struct rm_tick *t)
{
	got_signal = 0;
	t->end = RM_END_NONE;
	t->signo = 0;
	t->si_code = 0;
}

double rm_t0_shift(const struct timespec *start)
{
	const char *v = getenv("RM_T0");
	struct timespec b, m;
	double t0, shift;
	char *end;

	if (!v || !*v)
		return 0;
	t0 = strtod(v, &end);
	if (*end || !(t0 >= 0))
		return 0;
	clock_gettime(CLOCK_BOOTTIME, &b);
	clock_gettime(CLOCK_MONOTONIC, &m);
	/* CLOCK_BOOTTIME at start, less the origin. */
	shift = ((double)b.tv_sec + (double)b.tv_nsec / 1e9) -
		((double)(m.tv_sec - start->tv_sec) + (double)(m.tv_nsec - start->tv_nsec) / 1e9) - t0;
	/* An origin in the future, or years back, is not this run's. */
	return shift > 0 && shift < 366.0 * 86400 ? shift : 0;
}

double rm_t0_apply(struct timespec *start)
{
	double shift = rm_t0_shift(start);
	long long ns;

	if (shift > 0) {
		ns = (long long)start->tv_sec * 1000000000LL + start->tv_nsec - (long long)(shift * 1e9);
		start->tv_sec = (time_t)(ns / 1000000000LL);
		start->tv_nsec = (long)(ns % 1000000000LL);
	}
	return shift;
}
