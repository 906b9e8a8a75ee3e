/*
 * rm-tree --exec: CMD started in its own process group (with the
 * terminal, in the job's cgroup, with the signals and limits we were
 * given), every child reaped with its exit status and wait4's maxrss,
 * orphans followed as a child subreaper, and the end of the job.
 * SIGCHLD wakes the tick wait through a self-pipe.
 */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "stream.h"

static int chld_wfd = -1;

static void on_chld(int sig)
{
	int e = errno;
	ssize_t r = write(chld_wfd, "c", 1);

	(void)sig;
	(void)r;
	errno = e;
}

/*
 * Our child pid was reaped with status and rusage ru: its node n (NULL
 * when none) may be of an older process, or missing; the process gets
 * its exit status, its CPU time and, when it reaped no child of its own,
 * wait4's maxrss as its exact peak, and its row.  st: its zombie's stat,
 * NULL when that could not be read.  Returns the node to drop, or NULL.
 */
static struct rm_pnode *reaped_child(struct stream *s, struct rm_pnode *n, pid_t pid,
				     const struct rm_pstat *st, int status,
				     const struct rusage *ru, double el)
{
	if (n && st && n->start && n->start != st->starttime) {
		/* A zombie holds its pid: the node is of an older
		 * process, not met again since (sampled mode reads only
		 * the members between listings).  A node with no start
		 * (exact mode: a child that ended before the pump's end
		 * read its stat) is this zombie's: reap() read the forks
		 * before, so a newer process on the pid would have its
		 * own node. */
		if (table_is_member(n) && !table_is_ended(n))
			table_end(n, el);
		table_forget(n);
		n = NULL;
	}
	if (n && !table_is_member(n) && !table_is_ended(n)) {
		/* Our own child is the job's whatever was met of it. */
		table_join(n);
	}
	if (!n && st) {
		n = table_meet_decided(pid, st->starttime);
		n->ppid = st->ppid;
		n->pgrp = st->pgrp;
		memcpy(n->comm, st->comm, sizeof(n->comm));
		table_join(n);
	}
	if (n && table_is_member(n)) {
		if (st) {
			note_ticks(s, n, st->utime + st->stime);
			memcpy(n->comm, st->comm, sizeof(n->comm));
		}
		n->exit = rm_exit_column(status);
		/* No child ever reaped by it (no children's page faults):
		 * wait4's maxrss is its own high-water mark, exactly. */
		if (st && st->cminflt == 0 && ru->ru_maxrss > 0 &&
		    (!n->has_peak || (uint64_t)ru->ru_maxrss > n->peak_kib))
			note_peak(s, n, (uint64_t)ru->ru_maxrss, -1);
		/* In exact mode events.c writes the row from the
		 * kernel's record later: table_row takes this then. */
		if (st && st->cminflt == 0 && ru->ru_maxrss > 0 && events_exact())
			table_w4_note(pid, st->starttime, (uint64_t)ru->ru_maxrss);
		table_end(n, el);
	}
	return n;
}

/*
 * Reap every child that has ended: read its zombie's stat first (final
 * CPU time, and whether it ever reaped a child of its own), then wait4
 * for the status and rusage.  Sets children_left to 0 on ECHILD.
 */
void reap(struct stream *s, double el)
{
	int pumped = 0;

	for (;;) {
		siginfo_t si;
		char buf[1024];
		struct rm_pstat st;
		struct rm_pnode *n;
		struct rusage ru;
		int have, status;
		pid_t pid;

		memset(&si, 0, sizeof(si));
		if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) < 0) {
			if (errno == EINTR)
				continue;
			s->children_left = 0;
			return;
		}
		s->children_left = 1;
		if (si.si_pid == 0)
			return;
		pid = si.si_pid;
		/* The events sent before this child ended, read first: its
		 * fork, and any newer process's fork on a pid whose node
		 * has no start time (reaped_child). */
		if (!pumped && events_exact()) {
			events_pump(el);
			pumped = 1;
		}
		n = table_find(pid);
		have = rm_pfile_read(n ? &n->stat_fd : NULL, pid, "stat", buf, sizeof(buf), 0) > 0 &&
		       rm_pstat_parse(buf, &st) == 0;
		/* A descriptor kept from before an exec may fail to read, and
		 * so does one of an older process on this pid, not yet seen
		 * gone: the zombie is read by its path then, as sample() does. */
		if (!have && n) {
			rm_pfile_close(&n->stat_fd);
			have = rm_pfile_read(NULL, pid, "stat", buf, sizeof(buf), 0) > 0 &&
			       rm_pstat_parse(buf, &st) == 0;
		}
		while (wait4(pid, &status, 0, &ru) < 0)
			if (errno != EINTR)
				break;
		if (have)
			table_reaped_note(pid, st.starttime);
		n = reaped_child(s, n, pid, have ? &st : NULL, status, &ru, el);
		if (n)
			table_forget(n);
		if (pid == s->root) {
			s->root_done = 1;
			s->root_status = status;
			s->root_end = el;
		}
	}
}

/* The terminal, when we are its foreground group: CMD gets it. */
static int tty_take(void)
{
	int fd = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY);

	if (fd >= 0 && tcgetpgrp(fd) != getpgrp()) {
		close(fd);
		fd = -1;
	}
	return fd;
}

void tty_give_back(int fd)
{
	sigset_t set, old;

	if (fd < 0)
		return;
	/* We are a background group now: SIGTTOU would stop us. */
	sigemptyset(&set);
	sigaddset(&set, SIGTTOU);
	sigprocmask(SIG_BLOCK, &set, &old);
	tcsetpgrp(fd, getpgrp());
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(fd);
}

/* --memory-max without a cgroup: said, and CMD never runs (125, as env). */
static void budget_fail(struct stream *s, const char *why)
{
	warnx("--memory-max: cannot make a memory cgroup for the budget: %s; '%s' not run",
	      why, s->o->argv[0]);
	if (s->cg.ok)
		rm_cg_child_remove(&s->cg);
	exit(125);
}

/* In the child: what CMD should start with, then exec it. */
static void child(struct stream *s, int go, int errfd)
{
	const struct opts *o = s->o;
	char c;
	int e;

	setpgid(0, 0);
	if (s->tty >= 0) {
		signal(SIGTTOU, SIG_IGN);
		tcsetpgrp(s->tty, getpid());
		signal(SIGTTOU, SIG_DFL);
	}
	/* Wait until the parent has put us in the cgroup; its end first
	 * means there is no one to follow us. */
	while ((e = (int)read(go, &c, 1)) < 0 && errno == EINTR)
		;
	if (e != 1)
		_exit(127);
	/* The limits we were started with (we raised RLIMIT_NOFILE's). */
	for (int i = 0; i < RLIM_NLIMITS; i++)
		if (o->entry_rlim_ok[i])
			setrlimit(i, &o->entry_rlim[i]);
	rm_entry_restore(&o->entry);
	/* Our outputs are not CMD's: one handed to us as /dev/fd/N (how
	 * rm-monitor -- CMD passes the exit log) would stay open in it. */
	for (int i = 0; i < 3; i++) {
		int fd = i == 0 ? s->log_fd : i == 1 ? s->tl_fd : s->job_fd;
		if (fd > STDERR_FILENO)
			close(fd);
	}
	execvp(o->argv[0], o->argv);
	e = errno;
	if (write(errfd, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(e == ENOENT ? 127 : 126);
}

void launch(struct stream *s)
{
	int go[2], errp[2], e;
	ssize_t n;
	pid_t pid;

	if (pipe2(go, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0)
		err(RM_EXIT_FAIL, "cannot make a pipe");
	pid = fork();
	if (pid < 0)
		err(RM_EXIT_FAIL, "cannot fork");
	if (pid == 0) {
		close(go[1]);
		close(errp[0]);
		child(s, go[0], errp[1]);
	}
	close(go[0]);
	close(errp[1]);
	s->root = pid;
	containers_job(pid);
	setpgid(pid, pid);
	if (s->tty >= 0)
		tcsetpgrp(s->tty, pid);
	/* Into the cgroup once: with --memory-max a failure ends the job
	 * before CMD runs (no budget, no run); with --cgroup it only loses
	 * the exact peak. */
	if (s->cg.ok && rm_cg_child_enter(&s->cg, pid) < 0) {
		if (s->o->mem_max) {
			/* Closing go ends the child before it runs CMD. */
			char why[4500];
			snprintf(why, sizeof(why), "cannot move the job into '%s': %s", s->cg.dir,
				 strerror(errno));
			close(go[1]);
			waitpid(pid, NULL, 0);
			tty_give_back(s->tty);
			budget_fail(s, why);
		}
		warnx("--cgroup: cannot move the job into '%s': %s; sampling only",
		      s->cg.dir, strerror(errno));
		rm_cg_child_remove(&s->cg);
		s->cg.ok = 0;
	}
	if (write(go[1], "g", 1) < 0) {
		/* The child died before it could run: the reaper says why. */
	}
	close(go[1]);
	do
		n = read(errp[0], &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	if (n == (ssize_t)sizeof(e)) {
		errno = e;
		warn("cannot run '%s'", s->o->argv[0]);
	}
	close(errp[0]);
}

void exec_setup(struct stream *s)
{
	struct sigaction sa;
	int p[2];
	char why[256], cgname[32];
	struct rm_buf tmp = { 0 };

	for (char **a = s->o->argv; *a; a++) {
		if (a != s->o->argv)
			rm_buf_addc(&tmp, ' ');
		rm_buf_adds(&tmp, *a);
	}
	if (tmp.p)
		rm_sanitize(tmp.p, tmp.len, s->cmdline, sizeof(s->cmdline));
	rm_buf_free(&tmp);

	s->self = getpid();
	if (pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0)
		err(RM_EXIT_FAIL, "cannot make a pipe");
	chld_wfd = p[1];
	s->tick.extra_fd = p[0];
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_chld;
	sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGCHLD, &sa, NULL);
	/* A SIGQUIT is CMD's to answer; we stay to write the job's rows, as
	 * time(1) ignores SIGQUIT while its command runs. */
	signal(SIGQUIT, SIG_IGN);
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
		warnx("cannot become a child subreaper: %s; orphans are followed by process group",
		      strerror(errno));
	snprintf(cgname, sizeof(cgname), "rm-tree.%d", (int)s->self);
	if (s->o->cgroup && rm_cg_child_create(&s->cg, cgname, why, sizeof(why)) < 0) {
		if (s->o->mem_max)
			budget_fail(s, why);
		warnx("--cgroup: no memory cgroup of our own: %s; sampling only", why);
	}
	if (s->o->mem_max && rm_cg_child_limit(&s->cg, s->o->mem_max, why, sizeof(why)) < 0)
		budget_fail(s, why);
	if (s->o->mem_max)
		rm_kmsg_mark(&s->kmark, NULL);   /* the victim is named from what follows */
	s->mono0 = rm_now_mono();
	s->tty = tty_take();
}

/* A child of ours still in our session (CMD's): part of the job.  The
 * children are read from /proc/self/task/TID/children, else every live
 * member is asked; only a process in the session can start one in it. */
static int session_child_left(struct stream *s)
{
	char path[64], buf[8192];
	pid_t sid = getsid(0), pid;
	struct rm_pnode *n;
	size_t it = 0;
	ssize_t len;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/children", (int)s->self);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (len >= 0 && (size_t)len < sizeof(buf) - 1) {
			char *p = buf, *e;
			buf[len] = '\0';
			for (;;) {
				long v = strtol(p, &e, 10);
				if (e == p)
					return 0;
				if (getsid((pid_t)v) == sid)
					return 1;
				p = e;
			}
		}
	}
	while ((n = table_next(&it)) != NULL) {
		pid = n->pid;
		if (table_is_member(n) && pid != s->root && getsid(pid) == sid)
			return 1;
	}
	return 0;
}

/* --exec: CMD has ended; is the job over?  Yes when no child is left,
 * or when only daemons that left CMD's session are (--wait-orphans: when
 * they end, or SEC after CMD). */
int job_over(struct stream *s, double el)
{
	double w = s->o->wait_orphans;

	if (!s->children_left)
		return 1;
	if (w == 0 || session_child_left(s))
		return 0;
	return w < 0 || el >= s->root_end + w;
}

/* The members still running when the job is over: on stderr, once. */
void tell_orphans(struct stream *s)
{
	struct rm_pnode *n;
	size_t it = 0;
	char txt[RM_TEXT_MAX + 1];
	struct rm_buf b = { 0 };

	while ((n = table_next(&it)) != NULL) {
		if (!table_is_member(n) || n->pid == s->root)
			continue;
		rm_sanitize(n->comm, strlen(n->comm), txt, sizeof(txt));
		rm_buf_addf(&b, " %d (%s)", (int)n->pid, txt);
	}
	if (b.len)
		tree_warnx("still running after CMD ended, not waited for (--wait-orphans waits):%.*s",
			   (int)b.len, b.p);
	rm_buf_free(&b);
}

void drain(int fd)
{
	char buf[64];

	while (read(fd, buf, sizeof(buf)) > 0)
		;
}
