/*
 * rm-tree's readings of /proc: a scan meets new processes and decides
 * their membership (or, where fork events tell of every new member,
 * scan_members reads the members only); a member is sampled through
 * the descriptors kept from its first read, ends when it is gone, and
 * its peak and CPU time are kept; totals sums the live members.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stream.h"

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

void note_peak(struct stream *s, struct rm_pnode *n, uint64_t kib, double at)
{
	if (!n->has_peak || kib > n->peak_kib) {
		n->peak_kib = kib;
		n->peak_at = at;
		n->has_peak = 1;
	}
	/* In exact mode the rows carry the kernel's peaks: the largest
	 * process is the largest row (table_row), not a live reading. */
	if (!events_exact() && (!s->has_max_proc || n->peak_kib > s->max_proc)) {
		s->max_proc = n->peak_kib;
		s->has_max_proc = 1;
	}
}

/* CPU time seen: what grew since the last reading, or all of it for a
 * process born after the stream started. */
void note_ticks(struct stream *s, struct rm_pnode *n, uint64_t ticks)
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
		n->comm_ok = 1;
		len = rm_pfile_read_in(n->dir_fd, NULL, n->pid, "cmdline", buf, sizeof(buf), 0);
		if (len > 0) {
			containers_cmdline(n, buf, len);
			/* Read while it lives: emulated or not is known now. */
			n->emulated = (unsigned)cmd_emulated(n->pid, buf, (size_t)len, n->comm);
			free(n->cmd);
			n->cmd = cmd_dup(buf, len);
		}
		/* Mid-exec the new name shows before the new cmdline: retry. */
		n->cmd_read = len > 0;
	}
	if (rm_pfile_read_in(n->dir_fd, &n->status_fd, n->pid, "status", buf, sizeof(buf), 1) > 0 &&
	    rm_pstatus_parse(buf, &pst) == 0) {
		if (pst.has_hwm) {
			n->hwm_kib = pst.hwm_kib;
			n->has_hwm = 1;
		}
		if (pst.has_rss)
			n->rss_kib = pst.rss_kib;
		if (pst.has_uid) {
			n->uid = pst.uid;
			n->has_uid = 1;
		}
		if (table_is_member(n))
			s->file_acc += pst.rss_file_kib + pst.rss_shmem_kib;
	}
	if (s->o->pss)
		n->has_pss = rm_pfile_read_in(n->dir_fd, NULL, n->pid, "smaps_rollup", buf,
					      sizeof(buf), 0) > 0 &&
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

/*
 * A member's /proc/PID directory, opened at its first reading: every file
 * of it read after (stat, status, cmdline, smaps_rollup) is then this
 * process's, never another's that took its pid between two reads of a
 * tick (a read of one that ended fails).  The stat read through it next
 * checks that the directory is n's (its start time); a stat descriptor
 * kept from before is dropped for that read.  Without a descriptor to
 * spare, the files are read by path as before.
 */
static void open_dir(struct rm_pnode *n)
{
	if (n->dir_fd >= 0)
		return;
	n->dir_fd = rm_pdir_open(n->pid);
	if (n->dir_fd >= 0)
		rm_pfile_close(&n->stat_fd);
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

	open_dir(n);
	/* A descriptor kept from before an exec may fail to read: open the
	 * file again before taking the process for gone (else it was met
	 * again as a new process, and listed twice). */
	if ((rm_pfile_read_in(n->dir_fd, &n->stat_fd, n->pid, "stat", buf, sizeof(buf), 1) <= 0 ||
	     rm_pstat_parse(buf, &st) < 0 || st.starttime != n->start) &&
	    (rm_pfile_close(&n->stat_fd),
	     rm_pfile_read_in(n->dir_fd, &n->stat_fd, n->pid, "stat", buf, sizeof(buf), 1) <= 0 ||
	     rm_pstat_parse(buf, &st) < 0 || st.starttime != n->start)) {
		table_end(n, el);
		table_forget(n);
		return 1;
	}
	if (rm_pstat_ended(&st)) {
		n->state = st.state;
		n->rss_kib = 0;
		if (s->exec && st.ppid == s->self)
			return 0;  /* ours: the reaper has its exact status */
		note_ticks(s, n, st.utime + st.stime);
		if (st.has_exit_code)
			n->exit = rm_exit_column((int)st.exit_code);
		memcpy(n->comm, st.comm, sizeof(n->comm));   /* its name at exit */
		table_end(n, el);
		/* Its row is written: if it comes to us to reap (its parent
		 * left it), it is not the job's a second time. */
		table_done(n);
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
	n = table_meet(pid, st.starttime);
	n->seen = table_gen();
	n->ppid = st.ppid;
	n->pgrp = st.pgrp;
	n->state = st.state;
	memcpy(n->comm, st.comm, sizeof(n->comm));
	/* Zombies are not live processes, but one of our own children is
	 * still the job's: it joins and the reaper writes its row.  So is a
	 * member's zombie child, met by a scan before its fork event was
	 * read (a loaded machine): as an outsider it would never join, and
	 * its exit record would be dropped (rows lost).  One whose parent is
	 * not a member yet (its fork event unread too) joins at its own
	 * fork event (events.c, met_zombie). */
	struct rm_pnode *parent = table_find(st.ppid);
	int members_zombie = parent && table_is_member(parent) && !table_is_ended(parent);
	if ((st.flags & RM_PF_KTHREAD) ||
	    (rm_pstat_ended(&st) && !(s->exec && st.ppid == s->self) &&
	     !members_zombie)) {
		table_outsider(n);
		rm_pfile_close(&fd);
	} else if (pid != getpid() && containers_monitor_pid(pid, st.comm) &&
		   !containers_job_before_exec(n)) {
		/* Another monitor: never the build's, nor its children.  Not
		 * this rm-tree: with --exec, the job's orphans are reparented
		 * to it (a subreaper) and stay the job's.  Nor a child of
		 * another rm-tree still named rm-tree: the job of its --exec
		 * between the fork and the exec (rm-tree forks nothing else),
		 * which monitor_jobs decides as that job; taken for a monitor
		 * here, it stayed one after its exec in sampled mode. */
		table_exclude(n);
		rm_pfile_close(&fd);
	} else {
		n->stat_fd = fd;
	}
	push(&s->undecided, n);
	return n;
}

/*
 * A monitor the build ran, met by a scan (sampled mode, or before its fork
 * event was read): it is monitor_in, as events.c's add_node makes it, and
 * what an rm-tree --exec among such monitors runs (rm-run's job) is the
 * build's, as on_fork decides for a fork it reads; a member's child joins.
 * Run after table_adopt (a parent met this scan is a member by then).
 * Without this, a scan that met rm-run's rm-tree first left its job out.
 */
static void monitor_jobs(struct stream *s)
{
	size_t round;

	do {
		round = 0;
		for (size_t i = 0; i < s->undecided.n; i++) {
			struct rm_pnode *c = s->undecided.v[i];
			struct rm_pnode *p = table_find(c->ppid);
			if (!p || p == c || table_is_member(c))
				continue;
			if (table_is_excluded(c)) {
				/* Excluded, its parent a member, not by
				 * --exclude-tree: a monitor (see meet). */
				if (!table_is_monitor_in(c) &&
				    (table_is_monitor_in(p) ||
				     (table_is_member(p) && !events_excluded_pid(s->o, c->pid)))) {
					table_monitor_in(c);
					round++;
				}
			} else if (!table_is_outsider(c) &&
				   (table_is_member(p) || (table_is_monitor_in(p) && events_monitor_job(p)))) {
				table_select(c);
				round++;
			}
		}
	} while (round);
}

/* The membership of the processes met this scan. */
static void decide(struct stream *s)
{
	const struct opts *o = s->o;

	events_decide(s->undecided.v, s->undecided.n);
	if (s->first_scan && o->sel == SEL_PIDS) {
		for (int i = 0; i < o->npids; i++) {
			struct rm_pnode *n = table_find(o->pids[i]);
			if (n && !table_is_outsider(n)) {
				table_select(n);
			} else if (o->watch_pid && o->interval) {
				/* Streaming for a watcher (rm-monitor --watch-pid):
				 * a build that ended before our first scan left
				 * nothing to log, and that is no failure. */
				tree_warnx("no process %d (it ended before the first scan)",
					   (int)o->pids[i]);
			} else {
				tree_warnx("no process %d", (int)o->pids[i]);
				s->status = RM_EXIT_FAIL;
			}
		}
	}
	switch (o->sel) {
	case SEL_ALL:
	case SEL_MATCH:
		for (size_t i = 0; i < s->undecided.n; i++) {
			struct rm_pnode *n = s->undecided.v[i];
			if (!table_is_outsider(n) && (o->sel == SEL_ALL || wanted(s, n)))
				table_select(n);
			table_settle(n);
		}
		break;
	case SEL_PIDS:
		if (!o->no_children) {
			table_adopt(s->undecided.v, s->undecided.n, 0, 0);
			monitor_jobs(s);
			break;
		}
		for (size_t i = 0; i < s->undecided.n; i++)
			table_settle(s->undecided.v[i]);
		break;
	case SEL_EXEC:
		table_adopt(s->undecided.v, s->undecided.n, s->self, s->root);
		monitor_jobs(s);
		break;
	case SEL_CGROUP:
		table_adopt(s->undecided.v, s->undecided.n, 0, 0);
		monitor_jobs(s);
		break;
	}
}

/* Readings of the processes that joined this scan. */
static void join(struct stream *s, double el)
{
	char buf[1024];

	for (size_t i = 0; i < s->undecided.n; i++) {
		struct rm_pnode *n = s->undecided.v[i];
		struct rm_pstat st;
		if (!table_is_member(n)) {
			rm_pfile_close(&n->stat_fd);
			continue;
		}
		s->procs++;
		open_dir(n);
		/* Read again: the stat of the meeting may be a scan old. */
		if (rm_pfile_read_in(n->dir_fd, &n->stat_fd, n->pid, "stat", buf, sizeof(buf), 1) <= 0 ||
		    rm_pstat_parse(buf, &st) < 0 || st.starttime != n->start) {
			table_end(n, el);
			continue;
		}
		if (st.state == 'Z' || st.state == 'X') {
			n->state = st.state;
			continue;  /* the reaper (ours) or the next sample ends them */
		}
		take(s, n, &st, el);
	}
}

/*
 * Exact mode with a tree selection (PIDs, --exec): membership comes from
 * the members' fork events, so a process a scan met that is not followed,
 * excluded, ended or watched (a kernel thread, an --elsewhere outsider)
 * is of no further use.  Dropped, so that the walks of the table every
 * tick and every wake-up (the members' samples, the totals, the wake-up
 * filter's member list) follow the build, not the host's idle processes;
 * an event of one that is not in the table is that of a non-member.
 */
static void drop_bystanders(struct stream *s)
{
	struct rm_pnode *n;
	size_t it = 0;

	if (!events_exact() || (s->o->sel != SEL_PIDS && s->o->sel != SEL_EXEC))
		return;
	s->gone.n = 0;
	while ((n = table_next(&it)) != NULL)
		if (table_is_plain(n) && !n->cmd_read && !n->has_hwm)
			push(&s->gone, n);
	for (size_t i = 0; i < s->gone.n; i++)
		table_forget(s->gone.v[i]);
	s->gone.n = 0;
}

/* One pass over /proc: meet new processes, sample members, end the
 * members that are gone. */
void scan(struct stream *s, double el)
{
	struct rm_procscan ps;
	struct rm_pnode *n;
	size_t it = 0;
	int pid;

	table_new_gen();
	s->undecided.n = 0;
	s->gone.n = 0;
	if (rm_procscan_open(&ps) < 0) {
		tree_warnx("cannot read '%s': %s", rm_proc_root(), strerror(errno));
		s->status = RM_EXIT_FAIL;
		s->stop = !s->exec;
		return;
	}
	while ((pid = rm_procscan_next(&ps)) > 0) {
		n = table_find(pid);
		if (n) {
			n->seen = table_gen();
			if (table_is_member(n)) {
				if (sample(s, n, el) <= 0)
					continue;
			} else if (s->o->sel == SEL_MATCH && !table_is_outsider(n)) {
				/* A known process may exec into a matching name. */
				struct rm_pstat st;
				if (rm_pstat_read(pid, &st) < 0)
					continue;
				if (st.starttime == n->start) {
					if (strcmp(st.comm, n->comm) != 0) {
						memcpy(n->comm, st.comm, sizeof(n->comm));
						if (wanted(s, n)) {
							table_select(n);
							table_settle(n);
							push(&s->undecided, n);
						}
					}
					continue;
				}
				table_forget(n);
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
	while ((n = table_next(&it)) != NULL)
		if (n->seen != table_gen())
			push(&s->gone, n);
	for (size_t i = 0; i < s->gone.n; i++) {
		struct rm_pstat st;
		n = s->gone.v[i];
		/* A listing of /proc can miss a live pid (one mid-exec): a
		 * member still there is kept, not ended and met again as a
		 * new process (it was listed twice). */
		if (table_is_member(n) && rm_pstat_read(n->pid, &st) == 0 && st.starttime == n->start) {
			n->seen = table_gen();
			continue;
		}
		if (table_is_member(n))
			table_end(n, el);
		else
			elsewhere_outsider_gone(n, el);
		table_forget(n);
	}
	drop_bystanders(s);
}

/* Sampled mode between listings: an outsider whose row --elsewhere
 * will write when it ends (its peak reached the threshold). */
static int watched_outsider(const struct stream *s, const struct rm_pnode *n)
{
	return s->o->elsewhere && !table_is_member(n) && !table_is_excluded(n) &&
	       !table_is_ended(n) && n->has_hwm && n->hwm_kib >= s->o->elsewhere_kib;
}

/*
 * The kernel tells of every new process (fork events), so a tick samples
 * the members only (through their kept descriptors) instead of listing
 * /proc: its cost follows the build, not the host.  Nodes whose row is
 * written go once their process is gone.  In sampled mode the excluded
 * ones and --elsewhere's heavy outsiders go too (no exit record says
 * when): a pid of theirs taken by a new process is that process's.
 */
void scan_members(struct stream *s, double el)
{
	struct rm_pnode *n;
	size_t it = 0;
	int exact = events_exact();

	table_new_gen();
	s->undecided.n = 0;
	s->gone.n = 0;
	while ((n = table_next(&it)) != NULL)
		if (table_is_member(n) || table_is_ended(n) ||
		    (!exact && (table_is_excluded(n) || watched_outsider(s, n))))
			push(&s->gone, n);
	for (size_t i = 0; i < s->gone.n; i++) {
		struct rm_pstat st;
		n = s->gone.v[i];
		n->seen = table_gen();
		if (table_is_member(n)) {
			sample(s, n, el);
		} else if (exact) {
			/* Its PID still there (a zombie, or taken again)?  A
			 * signal 0 asks as a stat read did, for one system
			 * call instead of three (exact mode reads /proc, the
			 * kernel's, in our own PID namespace). */
			if (kill(n->pid, 0) < 0 && errno == ESRCH)
				table_forget(n);
		} else if (rm_pstat_read(n->pid, &st) < 0 || st.starttime != n->start) {
			elsewhere_outsider_gone(n, el);
			table_forget(n);
		}
	}
	s->gone.n = 0;
}

/* Totals over the live members: the timeline row and the job peak. */
void totals(struct stream *s, double el, int row)
{
	struct rm_pnode *n;
	size_t it = 0, procs = 0;
	uint64_t rss = 0;
	int known = 1;

	while ((n = table_next(&it)) != NULL) {
		if (!table_is_member(n) || n->state == 'Z' || n->state == 'X')
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
	if (row)
		live_tick(s, el, procs, rss, known);
	if (!row || s->tl_fd < 0)
		return;
	timeline_row(s, el, procs, rss, known);
}
