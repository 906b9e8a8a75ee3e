/*
 * tick: the streaming loop shared by every command.
 *
 * Ticks fall on absolute CLOCK_MONOTONIC deadlines (start + k * interval),
 * so a slow sample never makes the stream drift.  SIGINT, SIGTERM and
 * SIGHUP are blocked while a row is being made and only delivered inside
 * the wait, so a stream always ends after a whole row.  Each watched PID
 * (up to RM_TICK_WATCH_MAX; the stream ends when any of them ends) is
 * followed through a pidfd in the same poll, so its end is noticed at
 * once; where pidfd_open is missing (or RM_NO_PIDFD is set) the wait wakes
 * every 20 ms to check it with kill(pid, 0).
 */
#ifndef RM_TICK_H
#define RM_TICK_H

#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/* The most pollfds a hook may fill. */
#define RM_TICK_HOOK_MAX 96
/* The most PIDs one loop watches. */
#define RM_TICK_WATCH_MAX 8

enum rm_tick_end { RM_END_NONE, RM_END_COUNT, RM_END_SIGNAL, RM_END_PID };

struct rm_tick {
	double interval;       /* seconds */
	long count;            /* ticks to run; 0 = unbounded */
	long done;             /* ticks handed out so far */
	long slot;             /* index of the next deadline */
	pid_t watch_pid[RM_TICK_WATCH_MAX]; /* the first nwatch are watched */
	int pidfd[RM_TICK_WATCH_MAX];       /* -1 when polling */
	int nwatch;
	int extra_fd;          /* another fd to wake on (readable), or -1 */
	/*
	 * A hook served during every wait (a server, say): hook_fds fills at
	 * most max pollfds and may lower *timeout (seconds from now);
	 * hook_ready acts on them after each wakeup, timeouts included.  NULL
	 * (the default) for none.
	 */
	int (*hook_fds)(void *arg, struct pollfd *p, int max, double *timeout);
	void (*hook_ready)(void *arg, const struct pollfd *p, int n);
	void *hook_arg;
	struct timespec start; /* monotonic */
	enum rm_tick_end end;
	int signo;             /* the signal that ended it */
	int si_code;           /* its si_code: SI_KERNEL when a terminal sent it */
};

/*
 * Set up the loop and the signal handling.  Returns 0, or -1 with errno
 * ESRCH when watch_pid does not exist.
 */
int rm_tick_init(struct rm_tick *t, double interval, long count, pid_t watch_pid);

/*
 * Watch one more PID: the stream ends when any watched PID ends.  Returns
 * 0, or -1 with errno ESRCH when pid does not exist, E2BIG when
 * RM_TICK_WATCH_MAX are watched already.
 */
int rm_tick_watch(struct rm_tick *t, pid_t pid);

/*
 * Wait for the next tick.  The first call returns at once.  Returns 1
 * when a row is due, 0 when the stream is over (t->end says why), 2 when
 * extra_fd became readable first: no row is due, and neither the deadline
 * nor the count is used up.
 */
int rm_tick_next(struct rm_tick *t);

/*
 * Sleep until the deadline `sec` seconds after start while honouring the
 * same stop conditions; returns 0 when the stream should stop, 2 when
 * extra_fd woke it before the deadline, else 1.
 */
int rm_tick_sleep_until(struct rm_tick *t, double sec);

/* Seconds since t->start on the monotonic clock. */
double rm_tick_elapsed(const struct rm_tick *t);

/* Has a stop signal arrived (checked without waiting)? */
int rm_tick_stopping(struct rm_tick *t);

/*
 * Forget a stop signal once handled, for a loop that outlives signals
 * (rm-tree --exec forwards them to its job and keeps going).
 */
void rm_tick_clear_signal(struct rm_tick *t);

/*
 * The signal state a command was started with, which a CMD it runs gets
 * back, as under time(1): the mask, and the dispositions of the signals
 * the command changes for itself (SIGINT, SIGTERM, SIGHUP, SIGPIPE,
 * SIGQUIT).  rm_entry_save is called first thing in main, before any of
 * them is changed.  rm_entry_restore is called in the child, before exec:
 * a signal ignored at entry stays ignored (a job started with &), any
 * other goes to its default, SIGCHLD too, and then the mask is the
 * entry's, so a signal that came between fork and exec ends CMD rather
 * than a copy of our handler.
 */
#define RM_ENTRY_NSIG 5
struct rm_entry {
	sigset_t mask;
	struct sigaction sa[RM_ENTRY_NSIG];
};
void rm_entry_save(struct rm_entry *e);
void rm_entry_restore(const struct rm_entry *e);

/* Current wall-clock time as epoch seconds with sub-second precision. */
double rm_now_epoch(void);
double rm_now_mono(void);

/*
 * One origin for every file of a monitor run: RM_T0 in the
 * environment is the CLOCK_BOOTTIME second (what /proc/uptime prints
 * first) that is elapsed 0, so elapsed_s, start_s and end_s of rm-sample
 * and rm-tree line up.  rm_t0_shift returns how long before the monotonic
 * instant start that origin was: 0 when RM_T0 is unset, not a number, in
 * the future or more than a year back.  rm_t0_apply also moves start
 * back by it (deadlines then fall on the origin's grid; a loop skips the
 * ones already past).
 */
double rm_t0_shift(const struct timespec *start);
double rm_t0_apply(struct timespec *start);

/* Format epoch seconds as RFC 3339 UTC with milliseconds and Z; "?" for
 * NaN, a time before 1970 or after the year 9999. */
void rm_fmt_iso(double epoch, char *buf, size_t size);

#endif
