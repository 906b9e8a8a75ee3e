/*
 * rm-tree streaming and --exec: sample the followed processes on every
 * tick, write one exit-log row per process when it ends, a timeline row
 * per tick, and for --exec one job row at the end.
 *
 * A tick lists /proc once, or, where fork events tell of every new member
 * (events.c), reads the members only.  A process met before is not read again
 * unless it is followed (a known outsider stays an outsider: membership
 * only grows through new processes), or, with --match in sampled mode, it
 * may still exec into a matching name; a followed one is read through the
 * descriptors kept from its first read (stat, status: one pread each).
 * With --exec, rm-tree is a child subreaper, so every orphan of the job
 * comes back to it, is followed, and is reaped here; SIGCHLD wakes the
 * tick wait through a self-pipe so an end is noticed at once.
 *
 * This file is the loop; the parts are in stream.h.
 */
#include <err.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "stream.h"

static double boottime(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The processes of the build's containers join it (their init and what
 * it runs are children of containerd-shim, not of the watched tree). */
static void adopt_containers(void)
{
	size_t n;
	const int *pid = containers_adopted(&n);

	for (size_t i = 0; i < n; i++)
		events_adopt(pid[i]);
}

/* Open the outputs, the tick and the event sources, write the headers
 * and, with --exec, start CMD.  Returns 0, or -1 (said) when --watch-pid
 * cannot be watched. */
static int stream_start(struct stream *s, const struct opts *o)
{
	double iv = o->interval;

	s->o = o;
	s->exec = o->sel == SEL_EXEC;
	check_outs(o);
	s->log_fd = o->log ? open_out(o->log, "the exit log") : STDOUT_FILENO;
	s->tl_fd = o->timeline ? open_out(o->timeline, "the timeline") : -1;
	s->job_fd = o->job ? open_out(o->job, "the job file") : -1;
	s->log_ok = s->tl_ok = 1;
	s->first_scan = 1;
	s->page_kib = rm_page_kib();
	s->hz = rm_clk_tck();
	s->tty = -1;
	table_start(s);
	rm_pfile_budget_init();
	if (rm_tick_init(&s->tick, iv, o->count, o->watch_pid) < 0) {
		warn("cannot watch PID %d", (int)o->watch_pid);
		return -1;
	}
	if (s->exec)
		exec_setup(s);
	s->chld_rfd = s->tick.extra_fd;
	struct events_host host = {
		.o = o, .self = s->exec ? s->self : 0, .t0 = &s->tick.start, .boot0 = &s->boot0,
	};
	events_start(&host, &s->tick.extra_fd);
	elsewhere_start(o, host.self);
	s->exact = events_exact();
	events_stats(0);
	containers_start(o);
	/* Elapsed 0, on both clocks. */
	clock_gettime(CLOCK_MONOTONIC, &s->tick.start);
	s->boot0 = boottime() - rm_t0_apply(&s->tick.start);
	s->boot0_ticks = (uint64_t)(s->boot0 * (double)s->hz);
	s->start_epoch = rm_now_epoch();

	rows_headers(s);
	if (s->exec)
		launch(s);
	return 0;
}

/* The ticks, until -n, --watch-pid, a signal, the end of the followed
 * PIDs or, with --exec, of the job. */
static void stream_ticks(struct stream *s)
{
	const struct opts *o = s->o;
	double el, iv = o->interval;
	long slot = 0, done = 0;
	int woke;

	/* A recorded session: its pumps, one after another, no scan. */
	while (events_replaying() && !events_replay_done()) {
		events_pump(rm_tick_elapsed(&s->tick));
		table_drop_ghosts();
	}
	while (!s->stop && !events_replaying()) {
		double due;
		if (s->exec) {
			reap(s, rm_tick_elapsed(&s->tick));
			if (s->root_done && job_over(s, rm_tick_elapsed(&s->tick)))
				break;
		}
		/* A tick that overran whole intervals skips those deadlines. */
		due = (double)slot * iv;
		el = rm_tick_elapsed(&s->tick);
		if (slot > 0 && el > due + iv) {
			slot += (long)floor((el - due) / iv);
			due = (double)slot * iv;
		}
		woke = rm_tick_sleep_until(&s->tick, due);
		if (!woke) {
			/* A signal after CMD ended ends us at once. */
			if (s->exec && s->tick.end == RM_END_SIGNAL && !s->root_done) {
				if (kill(-s->root, s->tick.signo) < 0 && errno == ESRCH)
					kill(s->root, s->tick.signo);
				rm_tick_clear_signal(&s->tick);
				continue;
			}
			break;
		}
		if (s->exec || events_on()) {
			if (woke == 2)
				events_settle();
			if (s->chld_rfd >= 0)
				drain(s->chld_rfd);
			events_pump(rm_tick_elapsed(&s->tick));
			table_drop_ghosts();
			if (rm_tick_elapsed(&s->tick) < due) {
				events_coalesce();
				continue;
			}
		}
		el = rm_tick_elapsed(&s->tick);
		if (events_members_only() && !elsewhere_lists_now() && !s->first_scan &&
		    !events_resync_due())
			scan_members(s, el);
		else
			scan(s, el);
		events_pump(el);
		table_drop_ghosts();
		elsewhere_scan(el, 0);
		totals(s, el, 1);
		containers_tick(el);
		adopt_containers();
		slot++;
		done++;
		if (o->count && done >= o->count)
			break;
		if (!s->exec && o->sel == SEL_PIDS && !s->live)
			break;
	}
}

/* The end: the last scan, the survivors' rows, the job row; closes the
 * outputs and returns the exit status. */
static int stream_finish(struct stream *s)
{
	double el;

	/* The end: members that left since the last tick, then survivors. */
	el = rm_tick_elapsed(&s->tick);
	if (!s->stop && !events_replaying()) {
		scan(s, el);
		events_pump(el);
		table_drop_ghosts();
		totals(s, el, 0);
	}
	if (s->exec && s->root_done)
		tell_orphans(s);
	table_survivors();
	elsewhere_scan(el, 1);
	events_stats(1);
	containers_finish(el);
	live_end(s);
	if (s->exec) {
		if (s->job_fd >= 0)
			job_row(s, el);
		if (s->cg.ok && rm_cg_child_remove(&s->cg) < 0)
			tree_warnx("--cgroup: cannot remove '%s': %s", s->cg.dir, strerror(errno));
		tty_give_back(s->tty);
	}
	close_out(s, s->tl_fd, "the timeline");
	close_out(s, s->job_fd, "the job file");
	close_out(s, s->log_fd, "the exit log");
	rm_buf_free(&s->b);
	table_free();
	free(s->undecided.v);
	free(s->gone.v);
	/* --exec: CMD's status, but not a success when an output it was
	 * asked for could not be written (said above). */
	if (s->exec) {
		int rc = rm_exit_column(s->root_status);
		return rc == 0 && s->status == RM_EXIT_FAIL ? RM_EXIT_FAIL : rc;
	}
	return rm_finish_stdout(s->status);
}

int stream_run(const struct opts *o)
{
	static struct stream s;

	if (stream_start(&s, o) < 0)
		return RM_EXIT_FAIL;
	stream_ticks(&s);
	return stream_finish(&s);
}
