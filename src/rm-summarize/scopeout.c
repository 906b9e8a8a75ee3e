/*
 * scopeout.c: the parts of the report that rm-tree's event mode and
 * scope add, in text, Markdown and JSON: how the process data was
 * collected (rm-tree --stats), the build's I/O and delay totals with the
 * processes that wrote, read and stalled in reclaim most, and "Elsewhere
 * on this host": the heaviest processes outside the scope (scope=out
 * rows, named by user and command, grouped by both) and the OOM kills of
 * other programs.  Nothing here is charged to the build, and no other
 * user's command line is in it without --elsewhere-cmdlines.
 *
 * This file is long because each part is rendered three times (text,
 * Markdown, JSON) side by side, so that a fact added to one view is added
 * to the others in the same place.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "fold.h"
#include "kmsg.h"
#include "runinfo.h"
#include "scopeout.h"
#include "users.h"

#define IO_TOP FOLD_IO_TOP   /* rows a list shows; fold.c keeps as many */

enum { D_CPU, D_IO, D_SWAPIN, D_RECLAIM, D_THRASH };



struct io {
	int has_io, has_delay;
	double read_kib, write_kib, majflt, delay_ms[5];
	struct proc **by_write, **by_read, **by_reclaim;
	size_t nw, nr, nd;
	double *stage_reclaim;  /* per stage, ms */
	size_t exact, sampled;
};

static double key_w(const struct proc *p) { return p->write_kib; }
static double key_r(const struct proc *p) { return p->read_kib; }
static double key_d(const struct proc *p) { return p->delay_ms[D_RECLAIM]; }

static double (*sort_key)(const struct proc *);

static int by_key(const void *a, const void *b)
{
	const struct proc *x = *(struct proc *const *)a, *y = *(struct proc *const *)b;
	double kx = sort_key(x), ky = sort_key(y);

	if (kx != ky)
		return kx < ky ? 1 : -1;
	return x->pid - y->pid;
}

/* The processes with a positive key, largest first. */
static struct proc **top_by(const struct report *r, double (*key)(const struct proc *), size_t *n)
{
	struct proc **v = xmalloc((r->nproc ? r->nproc : 1) * sizeof(*v));

	*n = 0;
	for (size_t i = 0; i < r->nproc; i++) {
		double k = key(&r->procs[i]);
		if (r->procs[i].shown && !isnan(k) && k > 0)
			v[(*n)++] = &r->procs[i];
	}
	sort_key = key;
	qsort(v, *n, sizeof(*v), by_key);
	return v;
}

static void io_derive(const struct report *r, struct io *io)
{
	struct fold_io held;
	const struct fold_io *f = r->fold ? fold_io(r) : NULL;

	memset(io, 0, sizeof(*io));
	if (!f) {
		/* Held: the same sums as a folded log's, over the shown rows. */
		fold_io_init(&held, r->nstages);
		for (size_t i = 0; i < r->nproc; i++)
			if (r->procs[i].shown)
				fold_io_add(&held, &r->procs[i], r->procs[i].stage);
		f = &held;
	}
	io->has_io = f->has_io;
	io->has_delay = f->has_delay;
	io->read_kib = f->read_kib;
	io->write_kib = f->write_kib;
	io->majflt = f->majflt;
	memcpy(io->delay_ms, f->delay_ms, sizeof(io->delay_ms));
	io->stage_reclaim = xmalloc((size_t)(r->nstages ? r->nstages : 1) * sizeof(double));
	for (int i = 0; i < r->nstages; i++)
		io->stage_reclaim[i] = i < f->nstages ? f->stage_reclaim[i] : NAN;
	io->exact = f->exact;
	io->sampled = f->sampled;
	if (f == &held)
		free(held.stage_reclaim);
	io->by_write = top_by(r, key_w, &io->nw);
	io->by_read = top_by(r, key_r, &io->nr);
	io->by_reclaim = top_by(r, key_d, &io->nd);
}

static void io_free(struct io *io)
{
	free(io->by_write);
	free(io->by_read);
	free(io->by_reclaim);
	free(io->stage_reclaim);
}

/* The stage whose processes waited longest in reclaim, or -1. */
static int worst_reclaim_stage(const struct report *r, const struct io *io)
{
	int best = -1;

	for (int i = 0; i < r->nstages; i++)
		if (!isnan(io->stage_reclaim[i]) && io->stage_reclaim[i] > 0 &&
		    (best < 0 || io->stage_reclaim[i] > io->stage_reclaim[best]))
			best = i;
	return best;
}

/* Delay accounting off: the delay columns are empty, and this says why. */
static int delayacct_off(const struct report *r, const struct io *io)
{
	return r->stats.known && r->stats.delayacct == 0 && !io->has_delay;
}

static const char delay_hint[] =
	"delay columns are empty: delay accounting is off (sysctl kernel.task_delayacct=1 turns it on)";


/* The build's rows without a command line: ended before rm-tree read it
 * (a busy host), so no unit can be named for them. */
static size_t no_cmd(const struct report *r)
{
	return r->nnocmd;
}

/* rm-sample's dropped-event bursts (its --status files), or 0. */
static long sampler_dropped(const struct report *r)
{
	return r->opt && r->opt->events_dropped > 0 ? r->opt->events_dropped : 0;
}

static void dropped_text(struct rm_buf *b, long n)
{
	rm_buf_addf(b, "the kernel dropped process events %ld time%s before rm-sample read them "
		    "(socket buffer full): its compilers column was recounted from /proc after each",
		    n, n == 1 ? "" : "s");
}

/* The process log's gaps (rm-tree died under rm-monitor), each on its own line. */
static void text_procs_gaps(struct rm_buf *b)
{
	int n;
	const char *const *gap = runinfo_procs_gaps(&n);

	for (int i = 0; i < n; i++) {
		char line[RM_TEXT_MAX + 1];
		size_t len = rm_sanitize(gap[i], strlen(gap[i]), line, sizeof(line));
		rm_buf_addf(b, "  %.*s\n", (int)len, line);
	}
}

static void text_collection(struct rm_buf *b, const struct report *r, const struct io *io)
{
	const struct stats *st = &r->stats;
	long dropped = sampler_dropped(r);
	int ngap;

	runinfo_procs_gaps(&ngap);
	if (!st->known) {
		/* Without rm-tree's --stats (rm-run), the rows say it. */
		if (io->exact || io->sampled || ngap)
			rm_buf_addf(b, "Process data: %zu row%s exact (taskstats), %zu sampled%s\n", io->exact,
				    io->exact == 1 ? "" : "s", io->sampled,
				    ngap ? "; INCOMPLETE, the process log has a gap:" : "");
		text_procs_gaps(b);
		if (dropped) {
			rm_buf_adds(b, io->exact || io->sampled || ngap ? "  " : "Process events: ");
			dropped_text(b, dropped);
			rm_buf_adds(b, "\n");
		}
		if (io->exact || io->sampled || ngap || dropped)
			rm_buf_adds(b, "\n");
		return;
	}
	rm_buf_addf(b, "Process data: %s mode", st->mode[0] ? st->mode : "unknown");
	/* After a gap the rows are not every process, and the stats are the
	 * last rm-tree's only: its lost events are those since it started. */
	if (ngap)
		rm_buf_adds(b, ", INCOMPLETE: the process log (rm-tree) has a gap");
	else if (strcmp(st->mode, "exact") == 0)
		rm_buf_adds(b, " (proc connector, taskstats: every process, the kernel's own peaks)");
	else if (st->error[0])
		rm_buf_addf(b, " (%s)", st->error);
	if (!isnan(st->events_lost))
		rm_buf_addf(b, "; %.0f event%s lost%s", st->events_lost, st->events_lost == 1 ? "" : "s",
			    ngap ? " (the last rm-tree's count)" : "");
	if (!isnan(st->resyncs) && st->resyncs > 0)
		rm_buf_addf(b, ", %.0f resync%s from /proc", st->resyncs, st->resyncs == 1 ? "" : "s");
	rm_buf_adds(b, "\n");
	text_procs_gaps(b);
	if (no_cmd(r))
		rm_buf_addf(b, "  %zu process%s without a command line (ended before it was read): their units are unknown\n",
			    no_cmd(r), no_cmd(r) == 1 ? "" : "es");
	if (dropped) {
		rm_buf_adds(b, "  ");
		dropped_text(b, dropped);
		rm_buf_adds(b, "\n");
	}
	if (delayacct_off(r, io))
		rm_buf_addf(b, "  %s\n", delay_hint);
}

static void text_list(struct rm_buf *b, const struct report *r, const char *title,
		      struct proc **v, size_t n, int what)
{
	char x[32];

	if (!n)
		return;
	rm_buf_addf(b, "  %s\n", title);
	for (size_t i = 0; i < n && i < IO_TOP; i++) {
		const struct proc *p = v[i];
		const char *sn = stage_name(r, p->stage);
		if (what == 2)
			snprintf(x, sizeof(x), "%.2f s", p->delay_ms[D_RECLAIM] / 1000.0);
		else
			fmt_kib(what == 0 ? p->write_kib : p->read_kib, x, sizeof(x));
		rm_buf_addf(b, "    %12s  %7d %-15s %-16.32s %.80s%s\n", x, p->pid, p->comm,
			    sn[0] ? sn : "-", p->unit ? p->unit : p->rcmd, emu_mark(p->emulated));
	}
}

static void text_io(struct rm_buf *b, const struct report *r, const struct io *io, const char *bold,
		    const char *off)
{
	char rd[32], wr[32];
	int ws;

	if (!io->has_io && !io->has_delay)
		return;
	fmt_kib(io->read_kib, rd, sizeof(rd));
	fmt_kib(io->write_kib, wr, sizeof(wr));
	rm_buf_addf(b, "%sI/O and delays%s of the build's processes: read %s, written %s", bold, off, rd, wr);
	if (!isnan(io->majflt))
		rm_buf_addf(b, ", %.0f major faults", io->majflt);
	rm_buf_adds(b, " (written counts page-cache dirtying, not what reached the disk)\n");
	if (io->has_delay) {
		static const char *const dn[5] = { "run queue", "block I/O", "swap-in", "reclaim", "thrashing" };
		rm_buf_adds(b, "  waited:");
		for (int k = 0; k < 5; k++)
			if (!isnan(io->delay_ms[k]))
				rm_buf_addf(b, "%s %s %.2f s", k ? "," : "", dn[k], io->delay_ms[k] / 1000.0);
		rm_buf_adds(b, "\n");
	}
	text_list(b, r, "most written (page cache dirtied):", io->by_write, io->nw, 0);
	text_list(b, r, "most read:", io->by_read, io->nr, 1);
	text_list(b, r, "most time stalled in memory reclaim:", io->by_reclaim, io->nd, 2);
	ws = worst_reclaim_stage(r, io);
	if (ws >= 0)
		rm_buf_addf(b, "  stage with the most reclaim stall: %s (%.2f s)\n", stage_name(r, ws),
			    io->stage_reclaim[ws] / 1000.0);
	rm_buf_adds(b, "\n");
}

/* A row's user: its name, or "" where the exit log has no uid. */
static const char *who(const struct proc *p, char *buf, size_t size)
{
	if (p->uid < 0) {
		buf[0] = '\0';
		return buf;
	}
	return user_name(p->uid, buf, size);
}

/* The rows outside the build by user and command, heaviest first (the
 * order of r->oorder). */
enum { NG = 64 };
struct egroups {
	const struct proc *first[NG];  /* the heaviest of each group */
	size_t count[NG], ng, users;   /* users: groups whose user is known */
};

static void else_groups(const struct report *r, struct egroups *g)
{
	memset(g, 0, sizeof(*g));
	for (size_t i = 0; i < r->nothers; i++) {
		const struct proc *p = r->oorder[i];
		size_t k = 0;
		while (k < g->ng && !(g->first[k]->uid == p->uid && !strcmp(g->first[k]->comm, p->comm)))
			k++;
		if (k == g->ng) {
			if (g->ng == NG)
				continue;
			g->first[g->ng++] = p;
			g->users += p->uid >= 0;
		}
		g->count[k]++;
	}
}

/* "nobody: cc1 x5, up to 189.0 MiB" (no "user: " where it is unknown). */
static void group_text(struct rm_buf *b, const struct egroups *g, size_t k)
{
	char u[64];

	if (g->first[k]->uid >= 0)
		rm_buf_addf(b, "%s: ", user_name(g->first[k]->uid, u, sizeof(u)));
	rm_buf_addf(b, "%s x%zu, up to %.1f MiB", g->first[k]->comm, g->count[k],
		    mib(g->first[k]->peak_kib));
}

/* "command lines of N processes of other users not shown (...)". */
static void hidden_note(struct rm_buf *b, const struct report *r)
{
	size_t n = r->others_hidden;

	rm_buf_addf(b, "command lines of %zu process%s ", n, n == 1 ? "" : "es");
	rm_buf_adds(b, r->others_hidden_nouid ? "not shown: other users' or of no recorded user"
					      : "of other users not shown");
	rm_buf_adds(b, " (rm-summarize --elsewhere-cmdlines shows them)");
}

/* The OOM kills of other programs, one line each. */
static void text_else_kills(struct rm_buf *b, const struct report *r)
{
	const struct sys *s = r->sys;
	char clk[32];

	if (!s || s->oom_else <= 0)
		return;
	rm_buf_addf(b, "  OOM kills outside the build: %ld\n", s->oom_else);
	for (size_t i = 0; i < s->nev; i++) {
		const struct oomev *e = &s->ev[i];
		for (int k = 0; k < e->nv; k++) {
			if (e->vscope[k] != 0)
				continue;
			fmt_clock(e->epoch - s->first_epoch, clk, sizeof(clk));
			rm_buf_addf(b, "    at +%s  %s (PID %d)", clk, e->vname[k], e->vpid[k]);
			if (e->vcons[k] == RM_OOM_MEMCG)
				rm_buf_addf(b, ", killed by the limit of cgroup %s",
					    e->vmemcg[k][0] ? e->vmemcg[k] : "(not logged)");
			else if (oom_cause(e->vcons[k])[0])
				rm_buf_addf(b, ", %s", oom_cause(e->vcons[k]));
			rm_buf_adds(b, "\n");
		}
	}
}

/* The rows outside the build by user and command, heaviest first: a
 * neighbour's build ("nobody: cc1 x5, up to 189.0 MiB") stands out among
 * single processes. */
static void text_else_groups(struct rm_buf *b, const struct report *r)
{
	enum { SHOWN = 8 };
	struct egroups g;

	else_groups(r, &g);
	if (g.ng == r->nothers)
		return;  /* one process a group: the list said it all */
	rm_buf_addf(b, "  by %s:", g.users ? "user and command" : "command");
	for (size_t k = 0; k < g.ng && k < SHOWN; k++) {
		rm_buf_adds(b, k ? "; " : " ");
		group_text(b, &g, k);
	}
	if (g.ng > SHOWN)
		rm_buf_addf(b, "; %zu more group%s", g.ng - SHOWN, g.ng - SHOWN == 1 ? "" : "s");
	rm_buf_adds(b, "\n");
}

static void text_elsewhere(struct rm_buf *b, const struct report *r, const struct opts *o,
			   const char *bold, const char *off)
{
	if (!r->nothers && !(r->sys && r->sys->oom_else > 0))
		return;
	rm_buf_addf(b, "%sElsewhere on this host%s (not charged to the build)\n", bold, off);
	if (r->nothers) {
		rm_buf_addf(b, "  heaviest processes outside the build (%zu):\n", r->nothers);
		rm_buf_addf(b, "    %7s %10s  %-10s %-15s %s\n", "PID", "peak MiB", "user", "comm", "cmd");
		for (size_t i = 0; i < r->nothers && i < (size_t)o->top; i++) {
			const struct proc *p = r->oorder[i];
			char pk[16], u[64];
			snprintf(pk, sizeof(pk), isnan(p->peak_kib) ? "-" : "%.1f", mib(p->peak_kib));
			who(p, u, sizeof(u));
			rm_buf_addf(b, "    %7d %10s  %-10s %-15s %.100s%s\n", p->pid, pk, u[0] ? u : "-",
				    p->comm, p->rcmd, emu_mark(p->emulated));
		}
		text_else_groups(b, r);
		if (r->others_hidden) {
			rm_buf_adds(b, "  ");
			hidden_note(b, r);
			rm_buf_adds(b, "\n");
		}
	}
	text_else_kills(b, r);
	rm_buf_adds(b, "\n");
}

void text_scope(struct rm_buf *b, const struct report *r, const struct opts *o, const char *bold,
		const char *off)
{
	struct io io;

	io_derive(r, &io);
	text_collection(b, r, &io);
	if (r->stats.known)
		rm_buf_adds(b, "\n");
	text_io(b, r, &io, bold, off);
	text_elsewhere(b, r, o, bold, off);
	io_free(&io);
}


static void md_collection(struct rm_buf *b, const struct report *r, const struct io *io)
{
	int ngap;
	const char *const *gap = runinfo_procs_gaps(&ngap);

	if (!r->stats.known && !ngap) {
		if (sampler_dropped(r)) {
			rm_buf_adds(b, "Process events: ");
			dropped_text(b, sampler_dropped(r));
			rm_buf_adds(b, ".\n\n");
		}
		return;
	}
	rm_buf_adds(b, "Process data: ");
	md_cell(b, r->stats.mode[0] ? r->stats.mode : "unknown");
	rm_buf_adds(b, " mode");
	if (ngap)
		rm_buf_adds(b, ", **incomplete**: the process log (rm-tree) has a gap");
	for (int i = 0; i < ngap; i++) {
		rm_buf_adds(b, i ? "; " : " (");
		md_cell(b, gap[i]);
		rm_buf_adds(b, i == ngap - 1 ? ")" : "");
	}
	if (r->stats.known && !isnan(r->stats.events_lost))
		rm_buf_addf(b, ", %.0f events lost%s", r->stats.events_lost, ngap ? " (the last rm-tree's count)" : "");
	if (r->stats.error[0]) {
		rm_buf_adds(b, " (");
		md_cell(b, r->stats.error);
		rm_buf_adds(b, ")");
	}
	if (no_cmd(r))
		rm_buf_addf(b, "; %zu process%s without a command line: their units are unknown", no_cmd(r),
			    no_cmd(r) == 1 ? "" : "es");
	if (sampler_dropped(r)) {
		rm_buf_adds(b, "; ");
		dropped_text(b, sampler_dropped(r));
	}
	if (delayacct_off(r, io))
		rm_buf_addf(b, "; %s", delay_hint);
	rm_buf_adds(b, ".\n\n");
}

static void md_io(struct rm_buf *b, const struct report *r, const struct io *io)
{
	static const char *const by[3] = { "written", "read", "reclaim stall" };
	char rd[32], wr[32], x[32];

	if (!io->has_io && !io->has_delay)
		return;
	fmt_kib(io->read_kib, rd, sizeof(rd));
	fmt_kib(io->write_kib, wr, sizeof(wr));
	rm_buf_addf(b, "I/O of the build's processes: read %s, written %s (page-cache dirtying).", rd, wr);
	if (!isnan(io->delay_ms[D_RECLAIM]))
		rm_buf_addf(b, " Reclaim stall %.2f s.", io->delay_ms[D_RECLAIM] / 1000.0);
	rm_buf_adds(b, "\n\n| top by | PID | comm | value | stage |\n|---|---|---|---|---|\n");
	for (int w = 0; w < 3; w++) {
		struct proc **v = w == 0 ? io->by_write : w == 1 ? io->by_read : io->by_reclaim;
		size_t n = w == 0 ? io->nw : w == 1 ? io->nr : io->nd;
		for (size_t i = 0; i < n && i < IO_TOP; i++) {
			if (w == 2)
				snprintf(x, sizeof(x), "%.2f s", v[i]->delay_ms[D_RECLAIM] / 1000.0);
			else
				fmt_kib(w == 0 ? v[i]->write_kib : v[i]->read_kib, x, sizeof(x));
			rm_buf_addf(b, "| %s | %d | ", by[w], v[i]->pid);
			md_cell(b, v[i]->comm);
			rm_buf_addf(b, " | %s | ", x);
			md_cell(b, stage_name(r, v[i]->stage));
			rm_buf_adds(b, " |\n");
		}
	}
	rm_buf_adds(b, "\n");
}

static void md_elsewhere(struct rm_buf *b, const struct report *r, const struct opts *o)
{
	const struct sys *s = r->sys;
	char clk[32];

	if (!r->nothers && !(s && s->oom_else > 0))
		return;
	rm_buf_adds(b, "#### Elsewhere on this host (not charged to the build)\n\n");
	if (r->nothers) {
		struct egroups g;
		rm_buf_adds(b, "| PID | user | comm | peak MiB | cmd |\n|---|---|---|---|---|\n");
		for (size_t i = 0; i < r->nothers && i < (size_t)o->top; i++) {
			const struct proc *p = r->oorder[i];
			char u[64];
			rm_buf_addf(b, "| %d | ", p->pid);
			md_cell(b, who(p, u, sizeof(u)));
			rm_buf_adds(b, " | ");
			md_cell(b, p->comm);
			rm_buf_adds(b, emu_mark(p->emulated));
			rm_buf_addf(b, " | %.1f | ", mib(p->peak_kib));
			md_cell(b, p->rcmd);
			rm_buf_adds(b, " |\n");
		}
		rm_buf_adds(b, "\n");
		else_groups(r, &g);
		if (g.ng < r->nothers) {
			struct rm_buf t = { 0 };
			rm_buf_addf(b, "By %s: ", g.users ? "user and command" : "command");
			for (size_t k = 0; k < g.ng && k < 8; k++) {
				if (k)
					rm_buf_adds(&t, "; ");
				group_text(&t, &g, k);
			}
			if (t.len)
				md_cell(b, t.p);
			rm_buf_free(&t);
			rm_buf_adds(b, ".\n\n");
		}
		if (r->others_hidden) {
			hidden_note(b, r);
			rm_buf_adds(b, ".\n\n");
		}
	}
	if (!s)
		return;
	for (size_t i = 0; i < s->nev; i++)
		for (int k = 0; k < s->ev[i].nv; k++) {
			const struct oomev *e = &s->ev[i];
			if (e->vscope[k] != 0)
				continue;
			fmt_clock(e->epoch - s->first_epoch, clk, sizeof(clk));
			rm_buf_addf(b, "- OOM kill at +%s: ", clk);
			md_cell(b, e->vname[k]);
			rm_buf_addf(b, " (PID %d)", e->vpid[k]);
			if (e->vcons[k] == RM_OOM_MEMCG) {
				rm_buf_adds(b, ", killed by the limit of cgroup ");
				md_cell(b, e->vmemcg[k]);
			}
			rm_buf_adds(b, "\n");
		}
	rm_buf_adds(b, "\n");
}

void md_scope(struct rm_buf *b, const struct report *r, const struct opts *o)
{
	struct io io;

	io_derive(r, &io);
	md_collection(b, r, &io);
	md_io(b, r, &io);
	md_elsewhere(b, r, o);
	io_free(&io);
}




static const char *const delay_key[5] = { "cpu_delay_ms", "io_delay_ms", "swapin_delay_ms",
					  "reclaim_delay_ms", "thrash_delay_ms" };

static void json_plist(struct rm_buf *b, const struct report *r, struct proc **v, size_t n, size_t max,
		       int users)
{
	rm_buf_addc(b, '[');
	for (size_t i = 0; i < n && i < max; i++) {
		const struct proc *p = v[i];
		int f = 1;
		rm_buf_adds(b, i ? ",{" : "{");
		jkey_long(b, &f, "pid", p->pid);
		jkey_str(b, &f, "comm", p->comm);
		jkey_num(b, &f, "peak_rss_kib", p->peak_kib, 0);
		jkey_num(b, &f, "read_kib", p->read_kib, 0);
		jkey_num(b, &f, "write_kib", p->write_kib, 0);
		for (int k = 0; k < 5; k++)
			jkey_num(b, &f, delay_key[k], p->delay_ms[k], 3);
		jkey(b, &f, "stage");
		jstr_or_null(b, p->stage >= 0 ? stage_name(r, p->stage) : NULL);
		jkey(b, &f, "unit");
		jstr_or_null(b, p->unit);
		if (users) {
			char u[64];
			jkey_num(b, &f, "uid", p->uid >= 0 ? (double)p->uid : NAN, 0);
			jkey(b, &f, "user");
			jstr_or_null(b, p->uid >= 0 ? user_name(p->uid, u, sizeof(u)) : NULL);
		}
		jkey(b, &f, "cmd");
		if (p->cmd_hidden)
			rm_buf_adds(b, "null");
		else
			rm_buf_json(b, p->cmd);
		jkey_emulated(b, &f, p->emulated);
		rm_buf_addc(b, '}');
	}
	rm_buf_addc(b, ']');
}

/* rm-tree --stats: how the process data was collected, or null. */
static void json_collection(struct rm_buf *b, const struct report *r, const struct io *io)
{
	int g = 1, ngap;
	const char *const *gap = runinfo_procs_gaps(&ngap);

	if (!r->stats.known && !ngap && !sampler_dropped(r)) {
		rm_buf_adds(b, "null");
		return;
	}
	rm_buf_addc(b, '{');
	jkey(b, &g, "mode");
	jstr_or_null(b, r->stats.known ? r->stats.mode : NULL);
	/* complete: no gap in the process log (rm-tree ran the whole run). */
	jkey(b, &g, "complete");
	rm_buf_adds(b, ngap ? "false" : "true");
	jkey(b, &g, "gaps");
	rm_buf_addc(b, '[');
	for (int i = 0; i < ngap; i++) {
		if (i)
			rm_buf_addc(b, ',');
		jstr_or_null(b, gap[i]);
	}
	rm_buf_addc(b, ']');
	jkey_num(b, &g, "events_lost", r->stats.known ? r->stats.events_lost : NAN, 0);
	jkey_num(b, &g, "resyncs", r->stats.known ? r->stats.resyncs : NAN, 0);
	jkey_num(b, &g, "delayacct", r->stats.known ? r->stats.delayacct : NAN, 0);
	jkey(b, &g, "taskstats_error");
	jstr_or_null(b, r->stats.known ? r->stats.error : NULL);
	jkey(b, &g, "hint");
	jstr_or_null(b, delayacct_off(r, io) ? delay_hint : NULL);
	jkey_long(b, &g, "processes_without_cmd", (long)no_cmd(r));
	jkey_num(b, &g, "sampler_events_dropped",
		 r->opt && r->opt->events_dropped >= 0 ? (double)r->opt->events_dropped : NAN, 0);
	rm_buf_addc(b, '}');
}

static void json_io(struct rm_buf *b, const struct report *r, const struct io *io)
{
	int ws = worst_reclaim_stage(r, io), g = 1;

	if (!io->has_io && !io->has_delay) {
		rm_buf_adds(b, "null");
		return;
	}
	rm_buf_addc(b, '{');
	jkey_num(b, &g, "read_kib", io->read_kib, 0);
	jkey_num(b, &g, "write_kib", io->write_kib, 0);
	jkey_str(b, &g, "write_means", "page-cache dirtying");
	jkey_num(b, &g, "majflt", io->majflt, 0);
	for (int k = 0; k < 5; k++)
		jkey_num(b, &g, delay_key[k], io->delay_ms[k], 3);
	jkey_long(b, &g, "rows_exact", (long)io->exact);
	jkey_long(b, &g, "rows_sampled", (long)io->sampled);
	jkey(b, &g, "top_write");
	json_plist(b, r, io->by_write, io->nw, IO_TOP, 0);
	jkey(b, &g, "top_read");
	json_plist(b, r, io->by_read, io->nr, IO_TOP, 0);
	jkey(b, &g, "top_reclaim");
	json_plist(b, r, io->by_reclaim, io->nd, IO_TOP, 0);
	jkey(b, &g, "reclaim_stage");
	jstr_or_null(b, ws >= 0 ? stage_name(r, ws) : NULL);
	jkey_num(b, &g, "reclaim_stage_ms", ws >= 0 ? io->stage_reclaim[ws] : NAN, 3);
	rm_buf_addc(b, '}');
}

/* Other programs' OOM victims. */
static void json_else_kills(struct rm_buf *b, const struct sys *s)
{
	int n = 0;

	rm_buf_addc(b, '[');
	for (size_t i = 0; s && i < s->nev; i++)
		for (int k = 0; k < s->ev[i].nv; k++) {
			const struct oomev *e = &s->ev[i];
			int h = 1;
			if (e->vscope[k] != 0)
				continue;
			rm_buf_adds(b, n++ ? ",{" : "{");
			jkey_long(b, &h, "pid", e->vpid[k]);
			jkey_str(b, &h, "name", e->vname[k]);
			jkey_num(b, &h, "elapsed_s", e->epoch - s->first_epoch, 3);
			jkey(b, &h, "constraint");
			jstr_or_null(b, rm_kmsg_constraint_name(e->vcons[k]));
			jkey(b, &h, "oom_memcg");
			jstr_or_null(b, e->vmemcg[k]);
			rm_buf_addc(b, '}');
		}
	rm_buf_addc(b, ']');
}

/* The rows outside the build by user and command, heaviest first. */
static void json_groups(struct rm_buf *b, const struct report *r)
{
	struct egroups g;
	char u[64];

	else_groups(r, &g);
	rm_buf_addc(b, '[');
	for (size_t k = 0; k < g.ng; k++) {
		const struct proc *p = g.first[k];
		int f = 1;
		rm_buf_adds(b, k ? ",{" : "{");
		jkey(b, &f, "user");
		jstr_or_null(b, p->uid >= 0 ? user_name(p->uid, u, sizeof(u)) : NULL);
		jkey_num(b, &f, "uid", p->uid >= 0 ? (double)p->uid : NAN, 0);
		jkey_str(b, &f, "comm", p->comm);
		jkey_long(b, &f, "count", (long)g.count[k]);
		jkey_num(b, &f, "peak_rss_kib", p->peak_kib, 0);
		rm_buf_addc(b, '}');
	}
	rm_buf_addc(b, ']');
}

void json_scope(struct rm_buf *b, int *first, const struct report *r, const struct opts *o)
{
	struct io io;
	int g = 1;

	io_derive(r, &io);
	jkey(b, first, "collection");
	json_collection(b, r, &io);
	jkey(b, first, "io");
	json_io(b, r, &io);
	jkey(b, first, "elsewhere");
	rm_buf_addc(b, '{');
	jkey_long(b, &g, "processes", (long)r->nothers);
	jkey(b, &g, "top");
	json_plist(b, r, r->oorder, r->nothers, (size_t)o->top, 1);
	jkey(b, &g, "groups");
	json_groups(b, r);
	jkey_long(b, &g, "cmdlines_hidden", (long)r->others_hidden);
	jkey(b, &g, "oom_kills");
	json_else_kills(b, r->sys);
	rm_buf_addc(b, '}');
	io_free(&io);
}
