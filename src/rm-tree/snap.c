/*
 * rm-tree snapshot: one row per selected live process, or one JSON
 * object.  Only the /proc files the asked columns need are read, each
 * with one read(2): stat for the selection and its own columns, status
 * for hwm_kib, cmdline for cmd, smaps_rollup for pss_kib.  cpu_pct
 * re-reads stat through the descriptor kept from the first read (one
 * pread, and a process that ended in between reads as gone).
 */
#include <err.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tree.h"
#include "usage.h"

struct snap {
	const struct opts *o;
	int need_status, need_cmd, need_cpu, need_pss, status;
	struct rm_ptree t;
	struct rm_pnode **v;     /* in /proc order (by pid) */
	double *pct;             /* cpu_pct per v[i]; < 0 unknown */
	size_t n, cap;
	double t_first;
	uint64_t page_kib;
};

const char *const col_names[K_NCOLS] = {
	"pid", "ppid", "comm", "state", "threads", "rss_kib", "hwm_kib",
	"cpu_pct", "cpu_s", "cmd", "pss_kib",
};

/* Read one process's stat and keep it as a candidate unless it is a
 * kernel thread or a zombie. */
static void read_one(struct snap *s, int pid)
{
	char buf[1024];
	struct rm_pstat st;
	struct rm_pnode *n;
	int fd = -1;
	double t0 = s->need_cpu ? rm_now_mono() : 0;

	if (rm_pfile_read(&fd, pid, "stat", buf, sizeof(buf), s->need_cpu) <= 0)
		return;
	if (rm_pstat_parse(buf, &st) < 0 || (st.flags & RM_PF_KTHREAD) ||
	    st.state == 'Z' || st.state == 'X') {
		rm_pfile_close(&fd);
		return;
	}
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 1024;
		s->v = realloc(s->v, s->cap * sizeof(*s->v));
		if (!s->v)
			tree_oom();
	}
	n = rm_ptree_add(&s->t, pid, st.starttime);
	if (!n)
		tree_oom();
	n->ppid = st.ppid;
	n->pgrp = st.pgrp;
	n->state = st.state;
	n->threads = st.threads;
	n->rss_kib = st.rss_pages * s->page_kib;
	n->ticks = st.utime + st.stime;
	n->first_at = t0;
	n->stat_fd = fd;
	memcpy(n->comm, st.comm, sizeof(n->comm));
	if (!s->n)
		s->t_first = t0;
	s->v[s->n++] = n;
}

static int by_pid(const void *a, const void *b)
{
	const struct rm_pnode *x = *(const struct rm_pnode *const *)a;
	const struct rm_pnode *y = *(const struct rm_pnode *const *)b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

static void scan(struct snap *s)
{
	const struct opts *o = s->o;
	struct rm_procscan ps;
	int pid;

	if (o->sel == SEL_PIDS && o->no_children) {
		for (int i = 0; i < o->npids; i++)
			if (!rm_ptree_find(&s->t, o->pids[i]))
				read_one(s, o->pids[i]);
		return;
	}
	if (rm_procscan_open(&ps) < 0) {
		err(RM_EXIT_FAIL, "cannot read '%s'", rm_proc_root());
	}
	while ((pid = rm_procscan_next(&ps)) > 0)
		read_one(s, pid);
	rm_procscan_close(&ps);
	/* /proc lists pids in order; a fixture tree may not. */
	for (size_t i = 1; i < s->n; i++)
		if (s->v[i - 1]->pid > s->v[i]->pid) {
			qsort(s->v, s->n, sizeof(*s->v), by_pid);
			break;
		}
}

static void select_members(struct snap *s)
{
	const struct opts *o = s->o;

	switch (o->sel) {
	case SEL_PIDS:
		for (int i = 0; i < o->npids; i++) {
			struct rm_pnode *n = rm_ptree_find(&s->t, o->pids[i]);
			if (n) {
				n->member = 1;
			} else {
				warnx("no process %d", (int)o->pids[i]);
				s->status = RM_EXIT_FAIL;
			}
		}
		if (!o->no_children)
			rm_ptree_adopt(&s->t, s->v, s->n, 0, 0);
		break;
	case SEL_MATCH:
		for (size_t i = 0; i < s->n; i++)
			s->v[i]->member = regexec(&o->re, s->v[i]->comm, 0, NULL, 0) == 0;
		break;
	default:
		for (size_t i = 0; i < s->n; i++)
			s->v[i]->member = 1;
		break;
	}
}

/* The files beyond stat, for the selected processes only. */
static void read_more(struct snap *s)
{
	char buf[4096];

	for (size_t i = 0; i < s->n; i++) {
		struct rm_pnode *n = s->v[i];
		if (!n->member) {
			rm_pfile_close(&n->stat_fd);
			continue;
		}
		if (s->need_status) {
			struct rm_pstatus pst;
			if (rm_pfile_read(NULL, n->pid, "status", buf, sizeof(buf), 0) <= 0) {
				n->member = 0;
				continue;
			}
			rm_pstatus_parse(buf, &pst);
			n->hwm_kib = pst.hwm_kib;
			n->has_hwm = pst.has_hwm != 0;
		}
		if (s->need_cmd) {
			ssize_t len = rm_pfile_read(NULL, n->pid, "cmdline", buf, sizeof(buf), 0);
			if (len < 0) {
				n->member = 0;
				continue;
			}
			n->cmd = cmd_dup(buf, len);
		}
		if (s->need_pss && rm_pfile_read(NULL, n->pid, "smaps_rollup", buf, sizeof(buf), 0) > 0)
			n->has_pss = rm_smaps_pss_parse(buf, &n->pss_kib) == 0;
	}
}

/* cpu_pct: stat again once the window has passed since the first read;
 * a process gone in between is left out. */
static void measure_cpu(struct snap *s)
{
	double until = s->t_first + s->o->window;
	struct timespec ts;
	char buf[1024];

	ts.tv_sec = (time_t)until;
	ts.tv_nsec = (long)((until - (double)ts.tv_sec) * 1e9);
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
	for (size_t i = 0; i < s->n; i++) {
		struct rm_pnode *n = s->v[i];
		struct rm_pstat st;
		double dt;
		if (!n->member)
			continue;
		if (rm_pfile_read(&n->stat_fd, n->pid, "stat", buf, sizeof(buf), 0) <= 0 ||
		    rm_pstat_parse(buf, &st) < 0 || st.starttime != n->start ||
		    st.state == 'Z' || st.state == 'X') {
			n->member = 0;
			continue;
		}
		dt = rm_now_mono() - n->first_at;
		rm_pfile_close(&n->stat_fd);
		s->pct[i] = dt > 0 && st.utime + st.stime >= n->ticks ?
			100.0 * (double)(st.utime + st.stime - n->ticks) / (double)rm_clk_tck() / dt : -1;
		n->ticks = st.utime + st.stime;
	}
}

static void add_u64(struct rm_buf *b, uint64_t v)
{
	char tmp[24];
	int i = (int)sizeof(tmp);

	do
		tmp[--i] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	rm_buf_add(b, tmp + i, sizeof(tmp) - (size_t)i);
}

static void add_field(struct snap *s, struct rm_buf *b, size_t i, int k)
{
	struct rm_pnode *n = s->v[i];
	char txt[RM_TEXT_MAX + 1];

	switch (k) {
	case K_PID:
		add_u64(b, (uint64_t)n->pid);
		break;
	case K_PPID:
		add_u64(b, (uint64_t)n->ppid);
		break;
	case K_COMM:
		rm_sanitize(n->comm, strlen(n->comm), txt, sizeof(txt));
		rm_buf_csv(b, txt);
		break;
	case K_STATE:
		rm_buf_addc(b, n->state);
		break;
	case K_THREADS:
		add_u64(b, (uint64_t)(n->threads > 0 ? n->threads : 0));
		break;
	case K_RSS:
		add_u64(b, n->rss_kib);
		break;
	case K_HWM:
		if (n->has_hwm)
			add_u64(b, n->hwm_kib);
		break;
	case K_CPUPCT:
		if (s->pct[i] >= 0)
			rm_buf_num(b, s->pct[i], 1);
		break;
	case K_CPUS:
		rm_buf_num(b, (double)n->ticks / (double)rm_clk_tck(), 2);
		break;
	case K_CMD:
		if (n->cmd)
			rm_buf_csv(b, n->cmd);
		break;
	case K_PSS:
		if (n->has_pss)
			add_u64(b, n->pss_kib);
		break;
	}
}

static void print_csv(struct snap *s, struct rm_buf *b)
{
	const struct opts *o = s->o;

	if (o->header) {
		for (int c = 0; c < o->ncols; c++) {
			if (c)
				rm_buf_addc(b, ',');
			rm_buf_adds(b, col_names[o->cols[c]]);
		}
		rm_buf_addc(b, '\n');
	}
	for (size_t i = 0; i < s->n; i++) {
		if (!s->v[i]->member)
			continue;
		for (int c = 0; c < o->ncols; c++) {
			if (c)
				rm_buf_addc(b, ',');
			add_field(s, b, i, o->cols[c]);
		}
		rm_buf_addc(b, '\n');
		if (b->len > (1u << 20))
			rm_out(b);
	}
}

/* The seed's usage_json (lib/usage): totals of the machine, sums over the
 * processes, and one entry per process still alive at the end of the
 * window. */
static void print_json(struct snap *s, struct rm_buf *b, const struct rm_usage_extra *x)
{
	struct rm_usage_proc *p = malloc((s->n ? s->n : 1) * sizeof(*p));
	size_t k = 0;

	if (!p)
		tree_oom();
	for (size_t i = 0; i < s->n; i++) {
		if (!s->v[i]->member)
			continue;
		p[k].pid = s->v[i]->pid;
		p[k].comm = s->v[i]->comm;
		p[k].rss_kib = rm_usage_resident_kib(s->v[i]->pid, s->v[i]->rss_kib);
		p[k].cpu_pct = s->pct[i];
		p[k++].cmd = NULL;
	}
	rm_usage_json(b, "rm-tree", p, k, s->o->window, 0, s->o->npids > 0 ? s->o->pids[0] : 0, x);
	free(p);
}

int snapshot_run(const struct opts *o)
{
	struct snap s;
	struct rm_buf b = { 0 };
	struct rm_usage_extra x;

	memset(&s, 0, sizeof(s));
	s.o = o;
	s.page_kib = rm_page_kib();
	if (o->json) {
		s.need_cpu = 1;
	} else {
		for (int c = 0; c < o->ncols; c++) {
			s.need_status |= o->cols[c] == K_HWM;
			s.need_cmd |= o->cols[c] == K_CMD;
			s.need_cpu |= o->cols[c] == K_CPUPCT;
			s.need_pss |= o->cols[c] == K_PSS;
		}
	}
	if (s.need_cpu)
		rm_pfile_budget_init();
	rm_ptree_init(&s.t);
	/* package_watts over the CPU window: its first reading before the
	 * first stat, its second after the last. */
	if (o->json)
		rm_usage_extra_begin(&x);
	scan(&s);
	select_members(&s);
	s.pct = malloc((s.n ? s.n : 1) * sizeof(*s.pct));
	if (!s.pct)
		tree_oom();
	for (size_t i = 0; i < s.n; i++)
		s.pct[i] = -1;
	if (s.need_status || s.need_cmd || s.need_pss || s.need_cpu)
		read_more(&s);
	if (s.need_cpu && s.n)
		measure_cpu(&s);
	if (o->json) {
		rm_usage_extra_end(&x, NULL);
		print_json(&s, &b, &x);
		rm_usage_extra_free(&x);
	} else {
		print_csv(&s, &b);
	}
	rm_out(&b);
	rm_buf_free(&b);
	rm_ptree_free(&s.t);
	free(s.v);
	free(s.pct);
	return rm_finish_stdout(s.status);
}
