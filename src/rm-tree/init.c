/*
 * rm-tree --init -- CMD: be CMD's init.  The first process of a PID
 * namespace (a container's entrypoint) is its init, and the kernel treats
 * it apart: a signal it has no handler for is dropped, not acted on; every
 * orphan of the namespace becomes its child, for it to reap; and when it
 * exits, every other process there is killed at once.  A monitor that is
 * PID 1 and ends with the build loses its summary; one that is not
 * PID 1 is killed with the namespace when the build ends.
 *
 * So rm-monitor, when it is PID 1, runs itself under this: rm-tree forks
 * CMD (the monitor), passes TERM, INT and HUP on to it alone (it passes
 * them on to the build and writes the summary), reaps every child that
 * comes to it (where it is not PID 1 it is a child subreaper, so the
 * orphans still come), and exits with CMD's status (128+N for signal N)
 * once CMD has ended.  QUIT is ignored, as rm-tree --exec does.  Nothing
 * is followed and nothing written: CMD is free to do that.
 */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tree.h"

/* The signals passed on to CMD; SIGCHLD is waited for with them. */
static const int passed[] = { SIGTERM, SIGINT, SIGHUP };

/* In the child: the limits and signal state we were started with, then
 * CMD; on failure errno to errfd and 127 (not found) or 126. */
static void init_child(const struct opts *o, int errfd)
{
	int e;

	for (int i = 0; i < RLIM_NLIMITS; i++)
		if (o->entry_rlim_ok[i])
			setrlimit(i, &o->entry_rlim[i]);
	rm_entry_restore(&o->entry);
	execvp(o->argv[0], o->argv);
	e = errno;
	if (write(errfd, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(e == ENOENT ? 127 : 126);
}

/* Reap every child that has ended; CMD's status into *status, and 1 when
 * CMD was among them. */
static int reap_all(pid_t cmd, int *status)
{
	int st, done = 0;
	pid_t pid;

	while ((pid = waitpid(-1, &st, WNOHANG)) != 0) {
		if (pid < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pid == cmd) {
			*status = st;
			done = 1;
		}
	}
	return done;
}

int init_run(const struct opts *o)
{
	sigset_t set;
	int errp[2], e, status = 0;
	ssize_t n;
	pid_t cmd;

	sigemptyset(&set);
	for (size_t i = 0; i < sizeof(passed) / sizeof(passed[0]); i++)
		sigaddset(&set, passed[i]);
	sigaddset(&set, SIGCHLD);
	/* Blocked and taken with sigwaitinfo: a handler of sorts, so the
	 * kernel delivers them to a PID 1, with no race against waitpid. */
	sigprocmask(SIG_BLOCK, &set, NULL);
	signal(SIGQUIT, SIG_IGN);
	if (getpid() != 1 && prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
		warnx("cannot become a child subreaper: %s; orphans go to the namespace's init",
		      strerror(errno));
	if (pipe2(errp, O_CLOEXEC) < 0)
		err(RM_EXIT_FAIL, "cannot make a pipe");
	cmd = fork();
	if (cmd < 0)
		err(RM_EXIT_FAIL, "cannot fork");
	if (cmd == 0) {
		close(errp[0]);
		init_child(o, errp[1]);
	}
	close(errp[1]);
	do
		n = read(errp[0], &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	if (n == (ssize_t)sizeof(e)) {
		errno = e;
		warn("cannot run '%s'", o->argv[0]);
	}
	close(errp[0]);
	for (;;) {
		siginfo_t si;
		int sig = sigwaitinfo(&set, &si);
		if (sig < 0)
			continue;
		if (sig == SIGCHLD) {
			if (reap_all(cmd, &status))
				break;
			continue;
		}
		/* Ours to pass on, whoever sent it; CMD alone gets it. */
		kill(cmd, sig);
	}
	/* Any zombie left now goes with the namespace, or to our parent. */
	reap_all(-1, &status);
	return rm_exit_column(status);
}
