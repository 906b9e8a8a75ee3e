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
 */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "outfile.h"
#include "tree.h"

struct vec {
	struct rm_pnode **v;
	size_t n, cap;
};

struct stream {
	const struct opts *o;
	int exec;
	struct rm_ptree t;
	struct rm_tick tick;
	struct rm_buf b;
	int log_fd, tl_fd, job_fd;
	int log_ok, tl_ok;
	int stop, status;
	double boot0;                 /* CLOCK_BOOTTIME seconds at elapsed 0 */
	uint64_t boot0_ticks;
	uint64_t page_kib;
	long hz;
	struct vec fresh, gone;
	int first_scan;
	uint64_t procs;               /* processes followed, ever */
	uint64_t acc_ticks;           /* CPU of followed processes since the last row */
	double last_row;
	int have_last_row;
	uint64_t peak_total, max_proc;
	double peak_total_at;
	int has_peak_total, has_max_proc;
	size_t live;
	/* --exec */
	pid_t self, root;
	int root_done, root_status, children_left;
	double root_end;              /* elapsed when CMD ended */
	double start_epoch;
	char cmdline[RM_TEXT_MAX + 1];
	struct cgroup cg;
	double mono0;                 /* CLOCK_MONOTONIC at the job's start */
	int tty;
	int chld_rfd;                 /* the SIGCHLD self-pipe (events.c owns extra_fd) */
	/* Totals of the exact rows in scope, for the job row. */
	uint64_t tot_rd, tot_wr, tot_maj;
	double tot_delay[5];
	int has_tot_io, has_tot_delay;
	/* --cgroup: where the sampled total and the cgroup's peak part ways.
	 * file_acc sums the members' RssFile + RssShmem read this tick; at a
	 * new sampled peak it is kept with the cgroup's own breakdown. */
	uint64_t file_acc, peak_file, cg_anon, cg_file, cg_kern;
	int has_gap;
	/* Direct children's wait4 maxrss (they reaped no child): their own
	 * high-water mark, for their exact rows (events.c writes those). */
	struct rm_ptree w4;
	/* Children reaped since the last event pump: a fork event read after
	 * the reap would bring the pid back as a member that never ends. */
	struct rm_ptree reaped;
};

/* PF_EXITING from include/linux/sched.h: the flags bit of a process in exit(). */
#define PF_EXITING 0x00000004u

static int chld_wfd = -1;

static void on_chld(int sig)
{
	int e = errno;
	ssize_t r = write(chld_wfd, "c", 1);

	(void)sig;
	(void)r;
	errno = e;
}

static void put(struct stream *s, int fd, const char *what, int *ok)
{
	if (*ok && rm_buf_write(fd, &s->b) < 0) {
		*ok = 0;
		if (errno != EPIPE) {
			tree_warnx("cannot write %s: %s", what, strerror(errno));
			s->status = RM_EXIT_FAIL;
		}
		/* A stream with nowhere to go is over; a job runs on. */
		if (!s->exec)
			s->stop = 1;
	}
	rm_buf_reset(&s->b);
}

static void push(struct vec *v, struct rm_pnode *x)
{
	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 256;
		struct rm_pnode **p = realloc(v->v, cap * sizeof(*p));
		if (!p)
			tree_oom();
		v->v = p;
		v->cap = cap;
	}
	v->v[v->n++] = x;
}

/* The columns after cmd: read_kib,write_kib,majflt, five delays (ms),
 * source, scope.  Empty where the mode gives no reading. */
static void log_cols(struct rm_buf *b, const struct rm_pnode *n)
{
	if (n->has_io)
		rm_buf_addf(b, ",%llu,%llu", (unsigned long long)n->read_kib,
			    (unsigned long long)n->write_kib);
	else
		rm_buf_adds(b, ",,");
	rm_buf_addc(b, ',');
	if (n->has_majflt)
		rm_buf_addf(b, "%llu", (unsigned long long)n->majflt);
	for (int i = 0; i < 5; i++) {
		rm_buf_addc(b, ',');
		if (n->has_delay)
			rm_buf_num(b, n->delay_ms[i], 3);
	}
	rm_buf_adds(b, n->exact ? ",exact" : ",sampled");
	rm_buf_adds(b, n->scope_out ? ",out" : ",in");
}

/* One exit-log row; end < 0 for a survivor. */
static void log_row(struct stream *s, const struct rm_pnode *n, double end)
{
	char txt[RM_TEXT_MAX + 1];
	struct rm_buf *b = &s->b;
	const char *cmd = n->cmd;
	double start;

	if (!cmd && s->exec && n->pid == s->root && s->cmdline[0])
		cmd = s->cmdline;
	rm_buf_addf(b, "%d,%d,", n->pid, n->ppid);
	rm_sanitize(n->comm, strlen(n->comm), txt, sizeof(txt));
	rm_buf_csv(b, txt);
	rm_buf_addc(b, ',');
	/* Start times are whole clock ticks: one born in the stream's first
	 * tick would read a few ms before 0. */
	start = (double)n->start / (double)s->hz - s->boot0;
	if (n->start >= s->boot0_ticks && start < 0)
		start = 0;
	if (!n->start && n->has_start_el)
		start = n->start_el;
	if (n->start || n->has_start_el)
		rm_buf_num(b, start, 3);
	rm_buf_addc(b, ',');
	/* An end is the time of the tick or read that met it: one taken just
	 * before a process that lived less than a tick started. */
	if (end >= 0 && (n->start || n->has_start_el) && end < start)
		end = start;
	if (end >= 0)
		rm_buf_num(b, end, 3);
	rm_buf_addc(b, ',');
	if (n->has_peak)
		rm_buf_addf(b, "%llu", (unsigned long long)n->peak_kib);
	rm_buf_addc(b, ',');
	if (n->has_peak && n->peak_at >= 0)
		rm_buf_num(b, n->peak_at, 3);
	rm_buf_addc(b, ',');
	/* An exact row's CPU time is the kernel's, in microseconds: to the
	 * ms, so that thousands of processes of under 5 ms each (a configure
	 * run's) do not round to 0.00 and vanish from the totals. */
	if (n->exact && n->has_ticks)
		rm_buf_num(b, (double)n->cpu_us / 1e6, 3);
	else if (n->has_ticks)
		rm_buf_num(b, (double)n->ticks / (double)s->hz, 2);
	rm_buf_addc(b, ',');
	if (n->exit >= 0)
		rm_buf_addf(b, "%d", n->exit);
	rm_buf_addc(b, ',');
	if (cmd)
		rm_buf_csv(b, cmd);
	log_cols(b, n);
	rm_buf_addc(b, '\n');
	put(s, s->log_fd, "the exit log", &s->log_ok);
}

static void note_peak(struct stream *s, struct rm_pnode *n, uint64_t kib, double at)
{
	if (!n->has_peak || kib > n->peak_kib) {
		n->peak_kib = kib;
		n->peak_at = at;
		n->has_peak = 1;
	}
	/* In exact mode the rows carry the kernel's peaks: the largest
	 * process is the largest row (stream_row), not a live reading. */
	if (!events_exact() && (!s->has_max_proc || n->peak_kib > s->max_proc)) {
		s->max_proc = n->peak_kib;
		s->has_max_proc = 1;
	}
}

/* CPU time seen: what grew since the last reading, or all of it for a
 * process born after the stream started. */
static void note_ticks(struct stream *s, struct rm_pnode *n, uint64_t ticks)
{
	if (n->has_ticks) {
		if (ticks > n->ticks)
			s->acc_ticks += ticks - n->ticks;
	} else if (n->start >= s->boot0_ticks) {
		s->acc_ticks += ticks;
	}
	n->ticks = ticks;
	n->has_ticks = 1;
}

/* memory.stat's "key N" of the job's cgroup, in KiB; -1 when absent. */
static int64_t cg_stat(const char *stat, const char *key)
{
	size_t len = strlen(key);
	const char *p = stat;

	while (p && *p) {
		if (strncmp(p, key, len) == 0 && p[len] == ' ')
			return (int64_t)(strtoull(p + len + 1, NULL, 10) / 1024);
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -1;
}

/*
 * At a new sampled peak: the cgroup's anonymous memory, page cache and
 * kernel memory then (v2 memory.stat's anon, file, kernel; v1's rss,
 * cache and memory.kmem.usage_in_bytes).
 */
static void cg_breakdown(struct stream *s)
{
	char path[4200], buf[8192];
	int fd = -1;
	ssize_t len;
	int64_t anon, file, kern = -1;

	if (rm_pathf(path, sizeof(path), "%s/memory.stat", s->cg.dir) < 0)
		return;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return;
	buf[len] = '\0';
	anon = cg_stat(buf, s->cg.v2 ? "anon" : "rss");
	file = cg_stat(buf, s->cg.v2 ? "file" : "cache");
	if (s->cg.v2) {
		kern = cg_stat(buf, "kernel");
		if (kern < 0) {
			int64_t k[4] = { cg_stat(buf, "kernel_stack"), cg_stat(buf, "slab"),
					 cg_stat(buf, "pagetables"), cg_stat(buf, "percpu") };
			kern = 0;
			for (int i = 0; i < 4; i++)
				kern += k[i] > 0 ? k[i] : 0;
		}
	} else {
		uint64_t b;
		if (rm_pathf(path, sizeof(path), "%s/memory.kmem.usage_in_bytes", s->cg.dir) == 0 &&
		    rm_read_u64(path, &b) == 0)
			kern = (int64_t)(b / 1024);
	}
	if (anon < 0 || file < 0 || kern < 0)
		return;
	s->cg_anon = (uint64_t)anon;
	s->cg_file = (uint64_t)file;
	s->cg_kern = (uint64_t)kern;
	s->peak_file = s->file_acc;
	s->has_gap = 1;
}

/* Take a live process's readings: stat (already read), status, and the
 * command line again when the name changed (an exec). */
static void take(struct stream *s, struct rm_pnode *n, const struct rm_pstat *st, double el)
{
	char buf[4096];
	struct rm_pstatus pst;
	uint64_t cur;

	note_ticks(s, n, st->utime + st->stime);
	n->ppid = st->ppid;
	n->pgrp = st->pgrp;
	n->state = st->state;
	n->threads = st->threads;
	/* stat's rss is an approximate read of per-CPU counters; status
	 * (read below anyway) sums them exactly since 6.16. */
	n->rss_kib = st->rss_pages * s->page_kib;
	if (!n->cmd_read || strcmp(n->comm, st->comm) != 0) {
		ssize_t len;
		memcpy(n->comm, st->comm, sizeof(n->comm));
		len = rm_pfile_read(NULL, n->pid, "cmdline", buf, sizeof(buf), 0);
		if (len > 0) {
			free(n->cmd);
			n->cmd = cmd_dup(buf, len);
		}
		/* Mid-exec the new name shows before the new cmdline: retry. */
		n->cmd_read = len > 0;
	}
	if (rm_pfile_read(&n->status_fd, n->pid, "status", buf, sizeof(buf), 1) > 0 &&
	    rm_pstatus_parse(buf, &pst) == 0) {
		if (pst.has_hwm) {
			n->hwm_kib = pst.hwm_kib;
			n->has_hwm = 1;
		}
		if (pst.has_rss)
			n->rss_kib = pst.rss_kib;
		if (n->member)
			s->file_acc += pst.rss_file_kib + pst.rss_shmem_kib;
	}
	if (s->o->pss)
		n->has_pss = rm_pfile_read(NULL, n->pid, "smaps_rollup", buf, sizeof(buf), 0) > 0 &&
			     rm_smaps_pss_parse(buf, &n->pss_kib) == 0;
	/* An exiting process is tearing its memory down: what is left is not
	 * a reading of its use. */
	if (st->flags & PF_EXITING)
		return;
	cur = n->rss_kib;
	if (n->has_hwm && n->hwm_kib > cur)
		cur = n->hwm_kib;
	note_peak(s, n, cur, el);
}

/* A followed process has ended: its row, then it is an outsider (a
 * zombie still listed) or gone. */
static void end_member(struct stream *s, struct rm_pnode *n, double el)
{
	if (!events_park(s, n, el))
		log_row(s, n, el);
	n->member = 0;
	n->was_member = 1;
	n->outsider = 1;
	rm_pfile_close(&n->stat_fd);
	rm_pfile_close(&n->status_fd);
}

/*
 * Sample a member met again.  Returns 0 when sampled (or left for the
 * reaper), -1 when it has ended, 1 when the pid is now another process
 * (the node is gone and the caller meets the pid as new).
 */
static int sample(struct stream *s, struct rm_pnode *n, double el)
{
	char buf[1024];
	struct rm_pstat st;

	/* A descriptor kept from before an exec may fail to read: open the
	 * file again before taking the process for gone (MW31: it was met
	 * again as a new process, and listed twice). */
	if ((rm_pfile_read(&n->stat_fd, n->pid, "stat", buf, sizeof(buf), 1) <= 0 ||
	     rm_pstat_parse(buf, &st) < 0 || st.starttime != n->start) &&
	    (rm_pfile_close(&n->stat_fd),
	     rm_pfile_read(&n->stat_fd, n->pid, "stat", buf, sizeof(buf), 1) <= 0 ||
	     rm_pstat_parse(buf, &st) < 0 || st.starttime != n->start)) {
		end_member(s, n, el);
		rm_ptree_remove(&s->t, n);
		return 1;
	}
	if (st.state == 'Z' || st.state == 'X') {
		n->state = st.state;
		n->rss_kib = 0;
		if (s->exec && st.ppid == s->self)
			return 0;  /* ours: the reaper has its exact status */
		note_ticks(s, n, st.utime + st.stime);
		if (st.has_exit_code)
			n->exit = rm_exit_column((int)st.exit_code);
		memcpy(n->comm, st.comm, sizeof(n->comm));   /* its name at exit */
		end_member(s, n, el);
		/* Its row is written: if it comes to us to reap (its parent
		 * left it), it is not the job's a second time (MW31). */
		n->ended = 1;
		return -1;
	}
	take(s, n, &st, el);
	return 0;
}

static int wanted(struct stream *s, const struct rm_pnode *n)
{
	return regexec(&s->o->re, n->comm, 0, NULL, 0) == 0;
}

/* A pid not in the table: read its stat and add it.  NULL when gone. */
static struct rm_pnode *meet(struct stream *s, int pid, double el)
{
	char buf[1024];
	struct rm_pstat st;
	struct rm_pnode *n;
	int fd = -1;

	(void)el;
	if (rm_pfile_read(&fd, pid, "stat", buf, sizeof(buf), 1) <= 0)
		return NULL;
	if (rm_pstat_parse(buf, &st) < 0) {
		rm_pfile_close(&fd);
		return NULL;
	}
	n = rm_ptree_add(&s->t, pid, st.starttime);
	if (!n)
		tree_oom();
	n->seen = s->t.gen;
	n->ppid = st.ppid;
	n->pgrp = st.pgrp;
	n->state = st.state;
	memcpy(n->comm, st.comm, sizeof(n->comm));
	/* Zombies are not live processes, but one of our own children is
	 * still the job's: it joins and the reaper writes its row.  So is a
	 * member's zombie child, met by a scan before its fork event was
	 * read (a loaded machine): as an outsider it would never join, and
	 * its exit record would be dropped (MW31: rows lost). */
	struct rm_pnode *parent = rm_ptree_find(&s->t, st.ppid);
	int members_zombie = parent && parent->member && !parent->ended;
	if ((st.flags & RM_PF_KTHREAD) ||
	    ((st.state == 'Z' || st.state == 'X') && !(s->exec && st.ppid == s->self) &&
	     !members_zombie)) {
		n->outsider = 1;
		rm_pfile_close(&fd);
	} else {
		n->stat_fd = fd;
	}
	push(&s->fresh, n);
	return n;
}

/* The membership of the processes met this scan. */
static void decide(struct stream *s)
{
	const struct opts *o = s->o;

	events_decide(s->fresh.v, s->fresh.n);
	if (s->first_scan && o->sel == SEL_PIDS) {
		for (int i = 0; i < o->npids; i++) {
			struct rm_pnode *n = rm_ptree_find(&s->t, o->pids[i]);
			if (n && !n->outsider) {
				n->member = 1;
			} else {
				tree_warnx("no process %d", (int)o->pids[i]);
				s->status = RM_EXIT_FAIL;
			}
		}
	}
	switch (o->sel) {
	case SEL_ALL:
	case SEL_MATCH:
		for (size_t i = 0; i < s->fresh.n; i++) {
			struct rm_pnode *n = s->fresh.v[i];
			n->member = !n->outsider && (o->sel == SEL_ALL || wanted(s, n));
			n->fresh = 0;
		}
		break;
	case SEL_PIDS:
		if (!o->no_children) {
			rm_ptree_adopt(&s->t, s->fresh.v, s->fresh.n, 0, 0);
			break;
		}
		for (size_t i = 0; i < s->fresh.n; i++)
			s->fresh.v[i]->fresh = 0;
		break;
	case SEL_EXEC:
		rm_ptree_adopt(&s->t, s->fresh.v, s->fresh.n, s->self, s->root);
		break;
	case SEL_CGROUP:
		rm_ptree_adopt(&s->t, s->fresh.v, s->fresh.n, 0, 0);
		break;
	}
}

/* Readings of the processes that joined this scan. */
static void join(struct stream *s, double el)
{
	char buf[1024];

	for (size_t i = 0; i < s->fresh.n; i++) {
		struct rm_pnode *n = s->fresh.v[i];
		struct rm_pstat st;
		if (!n->member) {
			rm_pfile_close(&n->stat_fd);
			continue;
		}
		s->procs++;
		/* Read again: the stat of the meeting may be a scan old. */
		if (rm_pfile_read(&n->stat_fd, n->pid, "stat", buf, sizeof(buf), 1) <= 0 ||
		    rm_pstat_parse(buf, &st) < 0 || st.starttime != n->start) {
			end_member(s, n, el);
			continue;
		}
		if (st.state == 'Z' || st.state == 'X') {
			n->state = st.state;
			continue;  /* the reaper (ours) or the next sample ends them */
		}
		take(s, n, &st, el);
	}
}

/* One pass over /proc: meet new processes, sample members, end the
 * members that are gone. */
static void scan(struct stream *s, double el)
{
	struct rm_procscan ps;
	struct rm_pnode *n;
	size_t it = 0;
	int pid;

	s->t.gen++;
	s->fresh.n = 0;
	s->gone.n = 0;
	if (rm_procscan_open(&ps) < 0) {
		tree_warnx("cannot read '%s': %s", rm_proc_root(), strerror(errno));
		s->status = RM_EXIT_FAIL;
		s->stop = !s->exec;
		return;
	}
	while ((pid = rm_procscan_next(&ps)) > 0) {
		n = rm_ptree_find(&s->t, pid);
		if (n) {
			n->seen = s->t.gen;
			if (n->member) {
				if (sample(s, n, el) <= 0)
					continue;
			} else if (s->o->sel == SEL_MATCH && !n->outsider) {
				/* A known process may exec into a matching name. */
				struct rm_pstat st;
				if (rm_pstat_read(pid, &st) < 0)
					continue;
				if (st.starttime == n->start) {
					if (strcmp(st.comm, n->comm) != 0) {
						memcpy(n->comm, st.comm, sizeof(n->comm));
						if (wanted(s, n)) {
							n->member = 1;
							n->fresh = 0;
							push(&s->fresh, n);
						}
					}
					continue;
				}
				rm_ptree_remove(&s->t, n);
			} else {
				continue;
			}
		}
		meet(s, pid, el);
	}
	rm_procscan_close(&ps);
	decide(s);
	join(s, el);
	s->first_scan = 0;
	while ((n = rm_ptree_next(&s->t, &it)) != NULL)
		if (n->seen != s->t.gen)
			push(&s->gone, n);
	for (size_t i = 0; i < s->gone.n; i++) {
		struct rm_pstat st;
		n = s->gone.v[i];
		/* A listing of /proc can miss a live pid (one mid-exec): a
		 * member still there is kept, not ended and met again as a
		 * new process (MW31: it was listed twice). */
		if (n->member && rm_pstat_read(n->pid, &st) == 0 && st.starttime == n->start) {
			n->seen = s->t.gen;
			continue;
		}
		if (n->member)
			end_member(s, n, el);
		else
			events_outsider_gone(s, n, el);
		rm_ptree_remove(&s->t, n);
	}
}

/* Sampled mode between listings: an outsider whose row --elsewhere
 * will write when it ends (its peak reached the threshold). */
static int watched_outsider(const struct stream *s, const struct rm_pnode *n)
{
	return s->o->elsewhere && !n->member && !n->excluded && !n->ended && n->has_hwm &&
	       n->hwm_kib >= s->o->elsewhere_kib;
}

/*
 * The kernel tells of every new process (fork events), so a tick samples
 * the members only (through their kept descriptors) instead of listing
 * /proc: its cost follows the build, not the host.  Nodes whose row is
 * written go once their process is gone.  In sampled mode the excluded
 * ones and --elsewhere's heavy outsiders go too (no exit record says
 * when): a pid of theirs taken by a new process is that process's.
 */
static void scan_members(struct stream *s, double el)
{
	char buf[64];
	struct rm_pnode *n;
	size_t it = 0;
	int exact = events_exact();

	s->t.gen++;
	s->fresh.n = 0;
	s->gone.n = 0;
	while ((n = rm_ptree_next(&s->t, &it)) != NULL)
		if (n->member || n->ended || (!exact && (n->excluded || watched_outsider(s, n))))
			push(&s->gone, n);
	for (size_t i = 0; i < s->gone.n; i++) {
		struct rm_pstat st;
		n = s->gone.v[i];
		n->seen = s->t.gen;
		if (n->member) {
			sample(s, n, el);
		} else if (exact) {
			if (rm_pfile_read(NULL, n->pid, "stat", buf, sizeof(buf), 0) < 0)
				rm_ptree_remove(&s->t, n);
		} else if (rm_pstat_read(n->pid, &st) < 0 || st.starttime != n->start) {
			events_outsider_gone(s, n, el);
			rm_ptree_remove(&s->t, n);
		}
	}
	s->gone.n = 0;
}

/* Totals over the live members: the timeline row and the job peak. */
static void totals(struct stream *s, double el, int row)
{
	struct rm_pnode *n;
	size_t it = 0, procs = 0;
	uint64_t rss = 0;
	int known = 1;

	while ((n = rm_ptree_next(&s->t, &it)) != NULL) {
		if (!n->member || n->state == 'Z' || n->state == 'X')
			continue;
		procs++;
		if (s->o->pss) {
			if (n->has_pss)
				rss += n->pss_kib;
			else
				known = 0;
		} else {
			rss += n->rss_kib;
		}
	}
	s->live = procs;
	if (procs && known && rss > 0 && (!s->has_peak_total || rss > s->peak_total)) {
		s->peak_total = rss;
		s->peak_total_at = el;
		s->has_peak_total = 1;
		if (s->cg.ok && !s->o->pss)
			cg_breakdown(s);
	}
	s->file_acc = 0;
	if (!row || s->tl_fd < 0)
		return;
	double epoch = rm_now_epoch();
	char iso[40];
	rm_fmt_iso(epoch, iso, sizeof(iso));
	rm_buf_num(&s->b, epoch, 3);
	rm_buf_addf(&s->b, ",%s,", iso);
	rm_buf_num(&s->b, el, 3);
	rm_buf_addf(&s->b, ",%zu,", procs);
	if (known)
		rm_buf_addf(&s->b, "%llu", (unsigned long long)rss);
	rm_buf_addc(&s->b, ',');
	if (s->have_last_row && el > s->last_row)
		rm_buf_num(&s->b, 100.0 * (double)s->acc_ticks / (double)s->hz / (el - s->last_row), 1);
	rm_buf_addc(&s->b, '\n');
	put(s, s->tl_fd, "the timeline", &s->tl_ok);
	s->acc_ticks = 0;
	s->last_row = el;
	s->have_last_row = 1;
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
	if (n && st && n->start != st->starttime) {
		/* A zombie holds its pid: the node is of an older
		 * process, not met again since (sampled mode reads only
		 * the members between listings). */
		if (n->member && !n->ended)
			end_member(s, n, el);
		rm_ptree_remove(&s->t, n);
		n = NULL;
	}
	if (n && !n->member && !n->ended) {
		/* Our own child is the job's whatever was met of it. */
		n->member = 1;
		n->outsider = 0;
		s->procs++;
	}
	if (!n && st) {
		n = rm_ptree_add(&s->t, pid, st->starttime);
		if (!n)
			tree_oom();
		n->fresh = 0;
		n->member = 1;
		n->ppid = st->ppid;
		n->pgrp = st->pgrp;
		memcpy(n->comm, st->comm, sizeof(n->comm));
		s->procs++;
	}
	if (n && n->member) {
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
		 * kernel's record later: stream_row takes this then. */
		if (st && st->cminflt == 0 && ru->ru_maxrss > 0 && events_exact()) {
			struct rm_pnode *w = rm_ptree_find(&s->w4, pid);
			if (!w && !(w = rm_ptree_add(&s->w4, pid, st->starttime)))
				tree_oom();
			w->start = st->starttime;
			w->peak_kib = (uint64_t)ru->ru_maxrss;
		}
		end_member(s, n, el);
	}
	return n;
}

/*
 * Reap every child that has ended: read its zombie's stat first (final
 * CPU time, and whether it ever reaped a child of its own), then wait4
 * for the status and rusage.  Sets children_left to 0 on ECHILD.
 */
static void reap(struct stream *s, double el)
{
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
		n = rm_ptree_find(&s->t, pid);
		have = rm_pfile_read(n ? &n->stat_fd : NULL, pid, "stat", buf, sizeof(buf), 0) > 0 &&
		       rm_pstat_parse(buf, &st) == 0;
		while (wait4(pid, &status, 0, &ru) < 0)
			if (errno != EINTR)
				break;
		if (have) {
			struct rm_pnode *g = rm_ptree_find(&s->reaped, pid);
			if (!g && !(g = rm_ptree_add(&s->reaped, pid, st.starttime)))
				tree_oom();
			g->start = st.starttime;
		}
		n = reaped_child(s, n, pid, have ? &st : NULL, status, &ru, el);
		if (n)
			rm_ptree_remove(&s->t, n);
		if (pid == s->root) {
			s->root_done = 1;
			s->root_status = status;
			s->root_end = el;
		}
	}
}

/*
 * After an event pump: a child reaped before its fork event was read is
 * met again by that event, as a member with its parent's name and no
 * process behind it.  Its row is written already (MW31): drop the node,
 * and the count it added.
 */
static void drop_ghosts(struct stream *s)
{
	struct rm_pnode *g, *n;
	size_t it = 0;

	while ((g = rm_ptree_next(&s->reaped, &it)) != NULL) {
		struct rm_pstat st;
		n = rm_ptree_find(&s->t, g->pid);
		if (n && n->member && !n->ended && (n->start == 0 || n->start == g->start) &&
		    (rm_pstat_read(g->pid, &st) < 0 || st.starttime == g->start)) {
			rm_ptree_remove(&s->t, n);
			if (s->procs)
				s->procs--;
		}
		rm_ptree_remove(&s->reaped, g);
		it = 0;
	}
}

/* A streamed output: "-", /dev/stdout, /dev/stderr, /dev/fd/N are the
 * descriptors we were given; a file is never opened through a symlink. */
static int open_out(const char *path, const char *what)
{
	int fd = rm_out_inherited_fd(path);

	if (fd >= 0)
		return fd;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0 && errno == ELOOP)
		errx(RM_EXIT_FAIL, "cannot open %s '%s': %s", what, path, RM_OUT_SYMLINK_WHY);
	if (fd < 0)
		err(RM_EXIT_FAIL, "cannot open %s '%s'", what, path);
	return fd;
}

/* Two outputs on one path would write over one another. */
static void check_outs(const struct opts *o)
{
	const char *p[3] = { o->log, o->timeline, o->job };

	for (int i = 0; i < 3; i++)
		for (int j = i + 1; j < 3; j++)
			if (p[i] && p[j] && rm_out_same_path(p[i], p[j]))
				errx(RM_EXIT_USAGE, "'%s' is named for two outputs", p[j]);
}

static double boottime(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
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

static void tty_give_back(int fd)
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
		cgroup_remove(&s->cg);
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
	execvp(o->argv[0], o->argv);
	e = errno;
	if (write(errfd, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(e == ENOENT ? 127 : 126);
}

static void launch(struct stream *s)
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
	setpgid(pid, pid);
	if (s->tty >= 0)
		tcsetpgrp(s->tty, pid);
	if (s->cg.ok && s->o->mem_max && cgroup_enter(&s->cg, pid) < 0) {
		/* Closing go ends the child before it runs CMD. */
		char why[4500];
		snprintf(why, sizeof(why), "cannot move the job into '%s': %s", s->cg.dir, strerror(errno));
		close(go[1]);
		waitpid(pid, NULL, 0);
		tty_give_back(s->tty);
		budget_fail(s, why);
	}
	if (s->cg.ok && cgroup_enter(&s->cg, pid) < 0) {
		warnx("--cgroup: cannot move the job into '%s': %s; sampling only",
		      s->cg.dir, strerror(errno));
		cgroup_remove(&s->cg);
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

static void exec_setup(struct stream *s)
{
	struct sigaction sa;
	int p[2];
	char why[256];
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
	if (s->o->cgroup && cgroup_create(&s->cg, why, sizeof(why)) < 0) {
		if (s->o->mem_max)
			budget_fail(s, why);
		warnx("--cgroup: no memory cgroup of our own: %s; sampling only", why);
	}
	if (s->o->mem_max && cgroup_limit(&s->cg, s->o->mem_max, why, sizeof(why)) < 0)
		budget_fail(s, why);
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
	while ((n = rm_ptree_next(&s->t, &it)) != NULL) {
		pid = n->pid;
		if (n->member && pid != s->root && getsid(pid) == sid)
			return 1;
	}
	return 0;
}

/* --exec: CMD has ended; is the job over?  Yes when no child is left,
 * or when only daemons that left CMD's session are (--wait-orphans: when
 * they end, or SEC after CMD). */
static int job_over(struct stream *s, double el)
{
	double w = s->o->wait_orphans;

	if (!s->children_left)
		return 1;
	if (w == 0 || session_child_left(s))
		return 0;
	return w < 0 || el >= s->root_end + w;
}

/* The members still running when the job is over: on stderr, once. */
static void tell_orphans(struct stream *s)
{
	struct rm_pnode *n;
	size_t it = 0;
	char txt[RM_TEXT_MAX + 1];
	struct rm_buf b = { 0 };

	while ((n = rm_ptree_next(&s->t, &it)) != NULL) {
		if (!n->member || n->pid == s->root)
			continue;
		rm_sanitize(n->comm, strlen(n->comm), txt, sizeof(txt));
		rm_buf_addf(&b, " %d (%s)", (int)n->pid, txt);
	}
	if (b.len)
		tree_warnx("still running after CMD ended, not waited for (--wait-orphans waits):%.*s",
			   (int)b.len, b.p);
	rm_buf_free(&b);
}

static void drain(int fd)
{
	char buf[64];

	while (read(fd, buf, sizeof(buf)) > 0)
		;
}

/* --memory-max: the budget, the OOM kills inside it and the first victim. */
static void budget_cols(struct stream *s)
{
	uint64_t kills;
	char name[64];
	int vpid;

	rm_buf_addf(&s->b, ",%llu,", (unsigned long long)(s->o->mem_max / 1024));
	if (!s->cg.ok || cgroup_oom_kills(&s->cg, &kills) < 0) {
		rm_buf_addc(&s->b, ',');
		return;
	}
	rm_buf_addf(&s->b, "%llu,", (unsigned long long)kills);
	if (kills > 0 && cgroup_victim(&s->cg, s->mono0, name, sizeof(name), &vpid) == 0) {
		char v[100];
		snprintf(v, sizeof(v), "%s (PID %d)", name, vpid);
		rm_buf_csv(&s->b, v);
	}
}

static void job_row(struct stream *s, double el)
{
	struct rusage ru;
	uint64_t cg_kib = 0, maxp = s->max_proc;
	int has_cg = 0, has_maxp = s->has_max_proc;
	double end = rm_now_epoch();

	getrusage(RUSAGE_CHILDREN, &ru);
	/* In exact mode every process has a row with the kernel's own peak
	 * (taskstats, or wait4 for a direct child): the largest process is
	 * the largest row.  RUSAGE_CHILDREN's maxrss is the largest over the
	 * tree, but names no process; sampled rows may have missed a peak,
	 * so there it still counts. */
	if (ru.ru_maxrss > 0 && (!has_maxp || !events_exact()) &&
	    (!has_maxp || (uint64_t)ru.ru_maxrss > maxp)) {
		maxp = (uint64_t)ru.ru_maxrss;
		has_maxp = 1;
	}
	if (s->cg.ok) {
		has_cg = cgroup_peak(&s->cg, &cg_kib) == 0;
		if (!has_cg)
			tree_warnx("--cgroup: cannot read the peak in '%s': %s", s->cg.dir,
				   strerror(errno));
	}
	rm_buf_adds(&s->b, "cmd,start_epoch,end_epoch,elapsed_s,exit,procs,peak_rss_kib,"
		    "peak_at_s,max_proc_rss_kib,cgroup_peak_kib,user_s,sys_s,read_kib,write_kib,"
		    "majflt,cpu_delay_ms,io_delay_ms,swapin_delay_ms,reclaim_delay_ms,thrash_delay_ms,"
		    "mode");
	if (s->o->mem_max)
		rm_buf_adds(&s->b, ",mem_max_kib,oom_kills,oom_victim");
	if (s->cg.ok)
		rm_buf_adds(&s->b, ",peak_file_kib,cgroup_anon_kib,cgroup_file_kib,cgroup_kernel_kib");
	rm_buf_addc(&s->b, '\n');
	rm_buf_csv(&s->b, s->cmdline);
	rm_buf_addc(&s->b, ',');
	rm_buf_num(&s->b, s->start_epoch, 3);
	rm_buf_addc(&s->b, ',');
	rm_buf_num(&s->b, end, 3);
	rm_buf_addc(&s->b, ',');
	rm_buf_num(&s->b, el, 3);
	rm_buf_addf(&s->b, ",%d,%llu,", rm_exit_column(s->root_status),
		    (unsigned long long)s->procs);
	if (s->has_peak_total) {
		rm_buf_addf(&s->b, "%llu,", (unsigned long long)s->peak_total);
		rm_buf_num(&s->b, s->peak_total_at, 3);
	} else {
		rm_buf_addc(&s->b, ',');
	}
	rm_buf_addc(&s->b, ',');
	if (has_maxp)
		rm_buf_addf(&s->b, "%llu", (unsigned long long)maxp);
	rm_buf_addc(&s->b, ',');
	if (has_cg)
		rm_buf_addf(&s->b, "%llu", (unsigned long long)cg_kib);
	rm_buf_addc(&s->b, ',');
	rm_buf_num(&s->b, (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6, 3);
	rm_buf_addc(&s->b, ',');
	rm_buf_num(&s->b, (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6, 3);
	/* Exact mode: the sums of every process's exit record. */
	if (s->has_tot_io)
		rm_buf_addf(&s->b, ",%llu,%llu,%llu", (unsigned long long)s->tot_rd,
			    (unsigned long long)s->tot_wr, (unsigned long long)s->tot_maj);
	else
		rm_buf_adds(&s->b, ",,,");
	for (int i = 0; i < 5; i++) {
		rm_buf_addc(&s->b, ',');
		if (s->has_tot_delay)
			rm_buf_num(&s->b, s->tot_delay[i], 3);
	}
	rm_buf_adds(&s->b, events_exact() ? ",exact" : ",sampled");
	if (s->o->mem_max)
		budget_cols(s);
	if (s->cg.ok && s->has_gap)
		rm_buf_addf(&s->b, ",%llu,%llu,%llu,%llu", (unsigned long long)s->peak_file,
			    (unsigned long long)s->cg_anon, (unsigned long long)s->cg_file,
			    (unsigned long long)s->cg_kern);
	else if (s->cg.ok)
		rm_buf_adds(&s->b, ",,,,");
	rm_buf_addc(&s->b, '\n');
	int ok = 1;
	put(s, s->job_fd, "the job file", &ok);
}

static void close_out(struct stream *s, int fd, const char *what)
{
	if (fd > STDERR_FILENO && close(fd) < 0) {
		tree_warnx("cannot write %s: %s", what, strerror(errno));
		s->status = RM_EXIT_FAIL;
	}
}

/* events.c's hook: one more process followed. */
static void stream_joined(struct stream *s)
{
	s->procs++;
}

/* events.c's hook: an exit-log row (end < 0: a survivor), its peak and
 * totals counted. */
static void stream_row(struct stream *s, struct rm_pnode *n, double end)
{
	struct rm_pnode *w = n->scope_out ? NULL : rm_ptree_find(&s->w4, n->pid);

	/* A direct child's own maxrss from wait4: the figure the job row's
	 * largest process is, so its row and that line agree. */
	if (w) {
		if ((!n->start || n->start == w->start) && n->has_peak && w->peak_kib > n->peak_kib)
			n->peak_kib = w->peak_kib;
		rm_ptree_remove(&s->w4, w);
	}
	if (n->has_peak && !n->scope_out &&
	    (!s->has_max_proc || n->peak_kib > s->max_proc)) {
		s->max_proc = n->peak_kib;
		s->has_max_proc = 1;
	}
	if (!n->scope_out && n->has_io && n->has_majflt) {
		s->tot_rd += n->read_kib;
		s->tot_wr += n->write_kib;
		s->tot_maj += n->majflt;
		s->has_tot_io = 1;
	}
	if (!n->scope_out && n->has_delay) {
		for (int i = 0; i < 5; i++)
			s->tot_delay[i] += n->delay_ms[i];
		s->has_tot_delay = 1;
	}
	log_row(s, n, end);
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
	rm_ptree_init(&s->t);
	rm_pfile_budget_init();
	if (rm_tick_init(&s->tick, iv, o->count, o->watch_pid) < 0) {
		warn("cannot watch PID %d", (int)o->watch_pid);
		return -1;
	}
	if (s->exec)
		exec_setup(s);
	s->chld_rfd = s->tick.extra_fd;
	struct events_host host = {
		.s = s, .t = &s->t, .o = o, .self = s->exec ? s->self : 0,
		.joined = stream_joined, .row = stream_row,
	};
	events_start(&host, &s->tick.extra_fd);
	events_stats(0);
	/* Elapsed 0, on both clocks. */
	clock_gettime(CLOCK_MONOTONIC, &s->tick.start);
	s->boot0 = boottime() - rm_t0_apply(&s->tick.start);
	s->boot0_ticks = (uint64_t)(s->boot0 * (double)s->hz);
	s->start_epoch = rm_now_epoch();

	if (o->header) {
		rm_buf_adds(&s->b, "pid,ppid,comm,start_s,end_s,peak_rss_kib,peak_at_s,cpu_s,exit,cmd,"
			    "read_kib,write_kib,majflt,cpu_delay_ms,io_delay_ms,swapin_delay_ms,"
			    "reclaim_delay_ms,thrash_delay_ms,source,scope\n");
		put(s, s->log_fd, "the exit log", &s->log_ok);
	}
	if (s->tl_fd >= 0) {
		rm_buf_adds(&s->b, "epoch,iso,elapsed_s,procs,rss_kib,cpu_pct\n");
		put(s, s->tl_fd, "the timeline", &s->tl_ok);
	}
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

	while (!s->stop) {
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
		if (!rm_tick_sleep_until(&s->tick, due)) {
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
			if (s->chld_rfd >= 0)
				drain(s->chld_rfd);
			events_pump(s, rm_tick_elapsed(&s->tick));
			drop_ghosts(s);
			if (rm_tick_elapsed(&s->tick) < due) {
				events_coalesce();
				continue;
			}
		}
		el = rm_tick_elapsed(&s->tick);
		if (events_members_only() && !s->first_scan && !events_resync_due())
			scan_members(s, el);
		else
			scan(s, el);
		events_pump(s, el);
		drop_ghosts(s);
		events_elsewhere_scan(s, el, 0);
		totals(s, el, 1);
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
	struct rm_pnode *n;
	size_t it = 0;

	/* The end: members that left since the last tick, then survivors. */
	el = rm_tick_elapsed(&s->tick);
	if (!s->stop) {
		scan(s, el);
		events_pump(s, el);
		drop_ghosts(s);
		totals(s, el, 0);
	}
	if (s->exec && s->root_done)
		tell_orphans(s);
	while ((n = rm_ptree_next(&s->t, &it)) != NULL)
		if (n->member)
			log_row(s, n, -1);
	events_elsewhere_scan(s, el, 1);
	events_stats(1);
	if (s->exec) {
		if (s->job_fd >= 0)
			job_row(s, el);
		if (s->cg.ok && cgroup_remove(&s->cg) < 0)
			tree_warnx("--cgroup: cannot remove '%s': %s", s->cg.dir, strerror(errno));
		tty_give_back(s->tty);
	}
	close_out(s, s->tl_fd, "the timeline");
	close_out(s, s->job_fd, "the job file");
	close_out(s, s->log_fd, "the exit log");
	rm_buf_free(&s->b);
	rm_ptree_free(&s->t);
	rm_ptree_free(&s->w4);
	rm_ptree_free(&s->reaped);
	free(s->fresh.v);
	free(s->gone.v);
	/* --exec: CMD's status, but not a success when an output it was
	 * asked for could not be written (said above, MW42). */
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
