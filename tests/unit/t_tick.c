/*
 * lib/tick: what a wake on extra_fd (rm-energy's SIGCHLD pipe) does to the
 * deadlines and the count.  No timing is measured: the interval is long
 * enough (1000 s) that only the pipe can end a wait.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tick.h"
#include "tap.h"

/* An early wake is not a tick: neither a deadline nor the count is used. */
static void extra_fd_wake_is_not_a_tick(void)
{
	struct rm_tick t;
	int p[2];

	CHECK(pipe2(p, O_CLOEXEC | O_NONBLOCK) == 0);
	CHECK(rm_tick_init(&t, 1000, 2, 0) == 0);
	t.extra_fd = p[0];
	CHECK(rm_tick_next(&t) == 1); /* the first tick: at once */
	CHECK(t.done == 1 && t.slot == 1);
	CHECK(write(p[1], "x", 1) == 1);
	CHECK(rm_tick_next(&t) == 2); /* the pipe, long before the deadline */
	CHECK(t.done == 1 && t.slot == 1);
	CHECK(rm_tick_sleep_until(&t, 1000) == 2);
	close(p[0]);
	close(p[1]);
}

/* A child that waits for a byte on fd, then exits. */
static pid_t waiter(int fd)
{
	pid_t pid = fork();
	char c;

	if (pid == 0) {
		_exit(read(fd, &c, 1) == 1 ? 0 : 1);
	}
	return pid;
}

/*
 * Several watched PIDs: the loop ends when any of them ends, the first or
 * a later one, with a pidfd or polling (RM_NO_PIDFD).  No timing: the
 * interval (1000 s) is long enough that only a PID's end can end a wait.
 */
static void watch_any_of_several(void)
{
	for (int poll_mode = 0; poll_mode < 2; poll_mode++) {
		for (int which = 0; which < 3; which++) {
			struct rm_tick t;
			int p[3][2];
			pid_t kid[3];

			if (poll_mode)
				setenv("RM_NO_PIDFD", "1", 1);
			else
				unsetenv("RM_NO_PIDFD");
			for (int i = 0; i < 3; i++) {
				CHECK(pipe(p[i]) == 0);
				kid[i] = waiter(p[i][0]);
				CHECK(kid[i] > 0);
			}
			CHECK(rm_tick_init(&t, 1000, 0, kid[0]) == 0);
			CHECK(rm_tick_watch(&t, kid[1]) == 0);
			CHECK(rm_tick_watch(&t, kid[2]) == 0);
			CHECK(t.nwatch == 3);
			CHECK(rm_tick_next(&t) == 1); /* the first tick: at once */
			CHECK(write(p[which][1], "x", 1) == 1);
			/* A zombie still answers kill(pid, 0): reap it. */
			if (poll_mode)
				CHECK(waitpid(kid[which], NULL, 0) == kid[which]);
			CHECK(rm_tick_next(&t) == 0);
			CHECK(t.end == RM_END_PID);
			for (int i = 0; i < 3; i++) {
				if (i != which)
					CHECK(write(p[i][1], "x", 1) == 1);
				if (i != which || !poll_mode)
					waitpid(kid[i], NULL, 0);
				close(p[i][0]);
				close(p[i][1]);
				if (t.pidfd[i] >= 0)
					close(t.pidfd[i]);
			}
		}
	}
	unsetenv("RM_NO_PIDFD");
}

/* A PID that is gone is refused, and so is a ninth. */
static void watch_refuses_gone_and_too_many(void)
{
	struct rm_tick t;
	pid_t gone = fork();

	if (gone == 0)
		_exit(0);
	CHECK(waitpid(gone, NULL, 0) == gone);
	CHECK(rm_tick_init(&t, 1000, 0, getpid()) == 0);
	errno = 0;
	CHECK(rm_tick_watch(&t, gone) == -1 && errno == ESRCH);
	for (int i = 1; i < RM_TICK_WATCH_MAX; i++)
		CHECK(rm_tick_watch(&t, getpid()) == 0);
	CHECK(rm_tick_watch(&t, getpid()) == -1 && errno == E2BIG);
	for (int i = 0; i < t.nwatch; i++)
		if (t.pidfd[i] >= 0)
			close(t.pidfd[i]);
}

/* The signal that ends a wait comes with its si_code: SI_USER from
 * kill(2), SI_QUEUE from sigqueue(3); a terminal's would be SI_KERNEL. */
static void stop_signal_keeps_si_code(void)
{
	struct rm_tick t;
	union sigval sv = { .sival_int = 0 };

	CHECK(rm_tick_init(&t, 1000, 0, 0) == 0);
	CHECK(rm_tick_next(&t) == 1);
	CHECK(kill(getpid(), SIGTERM) == 0); /* blocked: pending until the wait */
	CHECK(rm_tick_next(&t) == 0);
	CHECK(t.end == RM_END_SIGNAL && t.signo == SIGTERM && t.si_code == SI_USER);
	rm_tick_clear_signal(&t);
	CHECK(t.si_code == 0 && t.signo == 0);
	CHECK(sigqueue(getpid(), SIGINT, sv) == 0);
	CHECK(rm_tick_next(&t) == 0);
	CHECK(t.signo == SIGINT && t.si_code == SI_QUEUE);
	rm_tick_clear_signal(&t);
}

static void on_usr(int sig)
{
	(void)sig;
}

/* The child's signal state after rm_entry_restore, in its /proc status:
 * SigIgn, SigCgt and SigBlk as masks of signals 1 to 64. */
static void child_masks(const struct rm_entry *e, unsigned long long *ign,
			unsigned long long *cgt, unsigned long long *blk)
{
	int p[2];
	pid_t pid;
	char buf[4096], *at;
	ssize_t n;

	CHECK(pipe(p) == 0);
	pid = fork();
	if (pid == 0) {
		int fd;
		close(p[0]);
		rm_entry_restore(e);
		fd = open("/proc/self/status", O_RDONLY);
		n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
		_exit(n > 0 && write(p[1], buf, (size_t)n) == n ? 0 : 1);
	}
	close(p[1]);
	n = read(p[0], buf, sizeof(buf) - 1);
	close(p[0]);
	CHECK(waitpid(pid, NULL, 0) == pid);
	buf[n > 0 ? n : 0] = '\0';
	*ign = (at = strstr(buf, "SigIgn:")) ? strtoull(at + 7, NULL, 16) : ~0ULL;
	*cgt = (at = strstr(buf, "SigCgt:")) ? strtoull(at + 7, NULL, 16) : ~0ULL;
	*blk = (at = strstr(buf, "SigBlk:")) ? strtoull(at + 7, NULL, 16) : ~0ULL;
}

#define BIT(sig) (1ULL << ((sig) - 1))

/*
 * What a CMD gets back: an entry-ignored SIGQUIT stays ignored, SIGINT
 * and SIGTERM, which the command handles, go to their default, SIGPIPE,
 * which it ignores for itself, too; the entry mask (SIGUSR2) comes back
 * and the command's own blocked SIGHUP does not.
 */
static void entry_restore_gives_cmd_the_entry_state(void)
{
	struct rm_entry e;
	sigset_t set, old;
	struct sigaction sa, keep[5];
	const int sigs[5] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT };
	unsigned long long ign, cgt, blk;

	for (int i = 0; i < 5; i++)
		sigaction(sigs[i], NULL, &keep[i]);
	sigprocmask(SIG_SETMASK, NULL, &old);
	/* At entry: SIGQUIT ignored, the rest default, SIGUSR2 blocked. */
	signal(SIGQUIT, SIG_IGN);
	signal(SIGPIPE, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	sigprocmask(SIG_SETMASK, &set, NULL);
	rm_entry_save(&e);
	/* Then the command's own: handlers, an ignored SIGPIPE, SIGHUP blocked. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, NULL);
	child_masks(&e, &ign, &cgt, &blk);
	CHECK(ign & BIT(SIGQUIT));
	CHECK(!(ign & (BIT(SIGPIPE) | BIT(SIGINT) | BIT(SIGTERM) | BIT(SIGHUP))));
	CHECK(!(cgt & (BIT(SIGINT) | BIT(SIGTERM))));
	CHECK(blk & BIT(SIGUSR2));
	CHECK(!(blk & BIT(SIGHUP)));
	for (int i = 0; i < 5; i++)
		sigaction(sigs[i], &keep[i], NULL);
	sigprocmask(SIG_SETMASK, &old, NULL);
}

int main(void)
{
	RUN(extra_fd_wake_is_not_a_tick);
	RUN(watch_any_of_several);
	RUN(watch_refuses_gone_and_too_many);
	RUN(stop_signal_keeps_si_code);
	RUN(entry_restore_gives_cmd_the_entry_state);
	return tap_done();
}
