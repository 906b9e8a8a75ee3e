/*
 * memwatch.c: memwatch's outputs from an rm-tree --exec job (memwatch.h).
 * memwatch's names (its src/types.rs) come first in every output, in its
 * order; ours follow.  A process whose RSS was never read (0 or unknown:
 * a zombie, or one too short for any reading) is not listed, as memwatch
 * lists none.  Per-process peaks are the kernel's high-water marks where
 * rm-tree had them (exact), not the largest sampled RSS.
 */
#include <err.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "memwatch.h"
#include "rxrust.h"
#include "tick.h"

struct mwopts g_mw = { .interval_ms = NAN };

int memwatch_filter(int inc, const char *rx, char *why, size_t whysz)
{
	regex_t *re = inc ? &g_mw.inc : &g_mw.exc;
	int *has = inc ? &g_mw.has_inc : &g_mw.has_exc;

	if (*has)
		regfree(re);
	*has = 0;
	if (rm_rx_compile(re, rx, why, whysz) < 0)
		return -1;
	*has = 1;
	if (inc)
		g_mw.inc_pat = rx;
	else
		g_mw.exc_pat = rx;
	return 0;
}

/* memwatch's command of a process: its command line, else its name. */
static const char *pcommand(const struct proc *p)
{
	return p->cmd && *p->cmd ? p->cmd : p->comm;
}

static int has_rss(const struct proc *p)
{
	return !isnan(p->peak_kib) && p->peak_kib > 0;
}

/* memwatch's apply_filter: include first, then exclude. */
static int kept(const struct proc *p)
{
	const char *c = pcommand(p);

	if (g_mw.has_inc && regexec(&g_mw.inc, c, 0, NULL, 0) != 0)
		return 0;
	return !(g_mw.has_exc && regexec(&g_mw.exc, c, 0, NULL, 0) == 0);
}

static double at(const struct report *r, double s)
{
	return isnan(s) || isnan(r->tree_off) ? NAN : r->tree_off + s;
}

static void time_str(struct rm_buf *b, double epoch)
{
	char iso[40];

	if (isnan(epoch)) {
		rm_buf_adds(b, "");
		return;
	}
	rm_fmt_iso(epoch, iso, sizeof(iso));
	rm_buf_adds(b, iso);
}

static double max_total(const struct report *r)
{
	if (r->tl.known && !isnan(r->tl.peak_kib))
		return r->tl.peak_kib;
	return r->job.peak_kib;
}

static double interval_ms(const struct report *r)
{
	if (!isnan(g_mw.interval_ms))
		return g_mw.interval_ms;
	if (r->tl.npts >= 2)
		return (r->tl.pts[r->tl.npts - 1].elapsed - r->tl.pts[0].elapsed) * 1000.0 /
		       (double)(r->tl.npts - 1);
	return NAN;
}

static void json_proc(struct rm_buf *b, const struct report *r, const struct proc *p)
{
	int first = 1;

	rm_buf_addc(b, '{');
	jkey(b, &first, "pid");
	rm_buf_addf(b, "%d", p->pid);
	jkey(b, &first, "ppid");
	rm_buf_addf(b, "%d", p->ppid);
	jkey(b, &first, "command");
	rm_buf_json(b, pcommand(p));
	jkey(b, &first, "max_rss_kib");
	jnum(b, p->peak_kib, 0);
	jkey(b, &first, "first_seen");
	jiso(b, at(r, p->start_s));
	jkey(b, &first, "last_seen");
	jiso(b, at(r, p->end_s));
	jkey(b, &first, "peak_time");
	jiso(b, p->peak_epoch);
	/* Ours. */
	jkey(b, &first, "comm");
	rm_buf_json(b, p->comm);
	jkey(b, &first, "exit");
	rm_buf_json(b, p->exit);
	jkey(b, &first, "cpu_s");
	jnum(b, p->cpu_s, 2);
	rm_buf_addc(b, '}');
}

struct mwcount {
	long shown, hidden;
	double hidden_kib;
};

static struct mwcount count(const struct report *r)
{
	struct mwcount c = { 0, 0, 0 };

	for (size_t i = 0; i < r->nproc; i++) {
		const struct proc *p = r->order[i];
		if (!has_rss(p))
			continue;
		if (kept(p)) {
			c.shown++;
		} else {
			c.hidden++;
			c.hidden_kib += p->peak_kib;
		}
	}
	return c;
}

/* The JSON's timeline: memwatch's TimelinePoint, one per sample. */
static void json_timeline(struct rm_buf *b, const struct report *r, int *first)
{
	jkey(b, first, "timeline");
	rm_buf_addc(b, '[');
	for (size_t i = 0; i < r->tl.npts; i++) {
		const struct tlpoint *t = &r->tl.pts[i];
		int f = 1;
		if (i)
			rm_buf_addc(b, ',');
		rm_buf_addc(b, '{');
		jkey(b, &f, "timestamp");
		jiso(b, t->epoch);
		jkey(b, &f, "elapsed_seconds");
		jnum(b, t->elapsed, 3);
		jkey(b, &f, "total_rss_kib");
		jnum(b, t->rss_kib, 0);
		jkey(b, &f, "process_count");
		jnum(b, t->procs, 0);
		rm_buf_addc(b, '}');
	}
	rm_buf_addc(b, ']');
}

/* memwatch's FilterConfig and the counts of what it hid. */
static void json_filter(struct rm_buf *b, const struct mwcount *c, int *first)
{
	int f = 1;

	jkey(b, first, "filter");
	rm_buf_addc(b, '{');
	/* A pattern not given is left out, as memwatch's serde leaves it. */
	if (g_mw.has_exc) {
		jkey(b, &f, "exclude_pattern");
		rm_buf_json(b, g_mw.exc_pat);
	}
	if (g_mw.has_inc) {
		jkey(b, &f, "include_pattern");
		rm_buf_json(b, g_mw.inc_pat);
	}
	rm_buf_addc(b, '}');
	jkey(b, first, "filtered_process_count");
	rm_buf_addf(b, "%ld", c->hidden);
	jkey(b, first, "filtered_total_rss_kib");
	jnum(b, c->hidden_kib, 0);
}

static void print_json_mw(struct rm_buf *b, const struct report *r)
{
	const struct job *j = &r->job;
	struct mwcount c = count(r);
	int first = 1, f2;

	rm_buf_addc(b, '{');
	jkey(b, &first, "command");
	rm_buf_addc(b, '[');
	for (int i = 0; i < g_mw.argc; i++) {
		char *s = sanitized(g_mw.argv[i], strlen(g_mw.argv[i]));
		if (i)
			rm_buf_addc(b, ',');
		rm_buf_json(b, s);
		free(s);
	}
	if (!g_mw.argc && j->cmd)
		rm_buf_json(b, j->cmd);
	rm_buf_addc(b, ']');
	jkey(b, &first, "start_time");
	jiso(b, j->start_epoch);
	jkey(b, &first, "end_time");
	jiso(b, j->end_epoch);
	jkey(b, &first, "duration_seconds");
	jnum(b, j->elapsed, 3);
	jkey(b, &first, "interval_ms");
	jnum(b, interval_ms(r), 0);
	jkey(b, &first, "max_total_rss_kib");
	jnum(b, max_total(r), 0);
	jkey(b, &first, "samples");
	rm_buf_addf(b, "%ld", r->tl.known ? r->tl.rows : 0L);
	jkey(b, &first, "processes");
	rm_buf_addc(b, '[');
	f2 = 1;
	for (size_t i = 0; i < r->nproc; i++) {
		const struct proc *p = r->order[i];
		if (!has_rss(p) || !kept(p))
			continue;
		if (!f2)
			rm_buf_addc(b, ',');
		f2 = 0;
		json_proc(b, r, p);
	}
	rm_buf_addc(b, ']');
	if (g_mw.timeline && r->tl.known)
		json_timeline(b, r, &first);
	jkey(b, &first, "exit_code");
	if (j->exit[0] >= '0' && j->exit[0] <= '9')
		rm_buf_adds(b, j->exit);
	else
		rm_buf_adds(b, "null");
	if (g_mw.has_inc || g_mw.has_exc)
		json_filter(b, &c, &first);
	/* Ours, after memwatch's. */
	jkey(b, &first, "exit");
	rm_buf_json(b, j->exit);
	jkey(b, &first, "processes_seen");
	jnum(b, j->procs, 0);
	jkey(b, &first, "max_proc_rss_kib");
	jnum(b, j->max_proc_kib, 0);
	jkey(b, &first, "peak_at_seconds");
	jnum(b, r->tl.known ? r->tl.peak_elapsed : j->peak_at, 3);
	rm_buf_adds(b, "}\n");
}

/* memwatch's sizes: KiB, MiB or GiB, by size. */
static void size_str(struct rm_buf *b, double kib)
{
	if (isnan(kib))
		rm_buf_adds(b, "-");
	else if (kib < 1024)
		rm_buf_addf(b, "%.0f KiB", kib);
	else if (kib < 1024.0 * 1024.0)
		rm_buf_addf(b, "%.1f MiB", kib / 1024.0);
	else
		rm_buf_addf(b, "%.2f GiB", kib / 1024.0 / 1024.0);
}

static void padded(struct rm_buf *b, double kib, int width)
{
	size_t from = b->len;

	size_str(b, kib);
	while ((int)(b->len - from) < width)
		rm_buf_addc(b, ' ');
}

struct mwgroup {
	const char *name;
	long n;
	double max, sum;
};

static void text_groups(struct rm_buf *b, const struct report *r)
{
	struct mwgroup *g = xmalloc((r->nproc ? r->nproc : 1) * sizeof(*g));
	size_t ng = 0;

	for (size_t i = 0; i < r->nproc; i++) {
		const struct proc *p = r->order[i];
		size_t k;
		if (!has_rss(p) || !kept(p))
			continue;
		for (k = 0; k < ng && strcmp(g[k].name, p->comm) != 0; k++)
			;
		if (k == ng)
			g[ng++] = (struct mwgroup){ p->comm, 0, 0, 0 };
		g[k].n++;
		g[k].sum += p->peak_kib;
		if (p->peak_kib > g[k].max)
			g[k].max = p->peak_kib;
	}
	if (ng) {
		rm_buf_adds(b, "\nPROCESS GROUPS\n  COUNT  MAX         TOTAL       COMMAND\n");
		for (size_t k = 0; k < ng; k++) {
			rm_buf_addf(b, "  %-6ld ", g[k].n);
			padded(b, g[k].max, 12);
			padded(b, g[k].sum, 12);
			rm_buf_addf(b, "%s\n", g[k].name);
		}
	}
	free(g);
}

static void print_text_mw(struct rm_buf *b, const struct report *r)
{
	const struct job *j = &r->job;
	struct mwcount c = count(r);
	double iv = interval_ms(r);
	long samples = r->tl.known ? r->tl.rows : 0;

	rm_buf_adds(b, "MEMORY SUMMARY\n  Command:         ");
	for (int i = 0; i < g_mw.argc; i++) {
		char *s = sanitized(g_mw.argv[i], strlen(g_mw.argv[i]));
		rm_buf_addf(b, "%s%s", i ? " " : "", s);
		free(s);
	}
	if (!g_mw.argc && j->cmd)
		rm_buf_adds(b, j->cmd);
	rm_buf_addf(b, "\n  Duration:        %.2f s\n", j->elapsed);
	rm_buf_addf(b, "  Samples:         %ld", samples);
	if (!isnan(iv))
		rm_buf_addf(b, " (every %.0f ms)", iv);
	rm_buf_adds(b, "\n  Peak total RSS:  ");
	size_str(b, max_total(r));
	rm_buf_adds(b, " (sampled)\n  Largest process: ");
	size_str(b, j->max_proc_kib);
	rm_buf_addf(b, " (exact)\n  Processes:       %ld\n", c.shown + c.hidden);
	rm_buf_addf(b, "  Exit:            %s\n", j->exit);
	if (samples < 2)
		rm_buf_adds(b, "  (the command ended before a second sample: the sampled total says "
			       "little; try a shorter interval, -i 50; each process's peak below is "
			       "the kernel's)\n");
	if (g_mw.has_inc || g_mw.has_exc) {
		rm_buf_adds(b, "  Filter:         ");
		if (g_mw.has_inc)
			rm_buf_addf(b, " include '%s'", g_mw.inc_pat);
		if (g_mw.has_exc)
			rm_buf_addf(b, " exclude '%s'", g_mw.exc_pat);
		rm_buf_addf(b, "; %ld hidden (", c.hidden);
		size_str(b, c.hidden_kib);
		rm_buf_adds(b, "); totals include them\n");
	}
	if (c.shown) {
		rm_buf_adds(b, "\nPER-PROCESS PEAKS\n  PID      MEMORY      TIME      COMMAND\n");
		for (size_t i = 0; i < r->nproc; i++) {
			const struct proc *p = r->order[i];
			double t = isnan(p->peak_at) ? p->end_s : p->peak_at;
			char tm[24];
			if (!has_rss(p) || !kept(p))
				continue;
			snprintf(tm, sizeof(tm), "%s%.2fs", isnan(p->peak_at) ? "<" : "+",
				 isnan(t) ? 0.0 : t);
			rm_buf_addf(b, "  %-8d ", p->pid);
			padded(b, p->peak_kib, 12);
			rm_buf_addf(b, "%-9s %s\n", tm, pcommand(p));
		}
		text_groups(b, r);
	} else if (c.hidden) {
		rm_buf_adds(b, "\nwarning: every process was filtered out");
		if (g_mw.has_inc)
			rm_buf_addf(b, " by --include '%s'", g_mw.inc_pat);
		if (g_mw.has_exc)
			rm_buf_addf(b, "%s --exclude '%s'", g_mw.has_inc ? " and" : " by", g_mw.exc_pat);
		rm_buf_adds(b, "; try a wider pattern (Rust regex syntax, case-sensitive; (?i) for any case)\n");
	} else {
		rm_buf_adds(b, "\nNo process had a resident size to report: the command may have "
			       "ended before the first sample; try a shorter interval (-i 50)\n");
	}
}

void print_memwatch(struct rm_buf *b, const struct report *r, int json)
{
	if (json)
		print_json_mw(b, r);
	else
		print_text_mw(b, r);
}

static int write_one(const char *path, struct rm_buf *b)
{
	int rc = -1;

	if (b->oom)
		errno = ENOMEM;
	else
		rc = write_whole(path, b);
	if (rc < 0)
		warnx("cannot write '%s': %s", path, write_why(errno));
	rm_buf_free(b);
	return rc;
}

static void csv_mib(struct rm_buf *b, double kib)
{
	rm_buf_num(b, kib / 1024.0, 2);
}

/*
 * memwatch's comment lines above a CSV's header when a filter is set (its
 * csv_writer.rs write_filter_comment): the patterns, then in the
 * per-process CSV what was left out, in the timeline CSV that its totals
 * are unfiltered.  A reader that skips '#' lines reads both alike.
 */
static void filter_comment(struct rm_buf *b, const struct report *r, int procs)
{
	struct mwcount c = count(r);
	char *p;

	if (!g_mw.has_exc && !g_mw.has_inc)
		return;
	rm_buf_adds(b, "# Filter: ");
	if (g_mw.has_exc) {
		p = sanitized(g_mw.exc_pat, strlen(g_mw.exc_pat));
		rm_buf_addf(b, "exclude='%s'", p);
		free(p);
	}
	if (g_mw.has_inc) {
		p = sanitized(g_mw.inc_pat, strlen(g_mw.inc_pat));
		rm_buf_addf(b, "%sinclude='%s'", g_mw.has_exc ? " " : "", p);
		free(p);
	}
	if (procs)
		rm_buf_addf(b, " (%ld processes filtered out, totaling %.0f KiB)\n", c.hidden, c.hidden_kib);
	else
		rm_buf_adds(b, "\n# Note: total_rss_kib and process_count both show all processes (unfiltered)\n"
			       "# Filtering only affects the per-process CSV export and final summary display\n");
}

int write_memwatch_files(const struct report *r)
{
	struct rm_buf b = { 0 };

	if (g_mw.csv) {
		filter_comment(&b, r, 1);
		rm_buf_adds(&b, "pid,ppid,command,max_rss_kib,max_rss_mib,first_seen,last_seen\n");
		for (size_t i = 0; i < r->nproc; i++) {
			const struct proc *p = r->order[i];
			if (!has_rss(p) || !kept(p))
				continue;
			rm_buf_addf(&b, "%d,%d,", p->pid, p->ppid);
			rm_buf_csv(&b, pcommand(p));
			rm_buf_addc(&b, ',');
			rm_buf_num(&b, p->peak_kib, 0);
			rm_buf_addc(&b, ',');
			csv_mib(&b, p->peak_kib);
			rm_buf_addc(&b, ',');
			time_str(&b, at(r, p->start_s));
			rm_buf_addc(&b, ',');
			time_str(&b, at(r, p->end_s));
			rm_buf_addc(&b, '\n');
		}
		if (write_one(g_mw.csv, &b) < 0)
			return -1;
	}
	if (g_mw.timeline) {
		filter_comment(&b, r, 0);
		rm_buf_adds(&b, "timestamp,elapsed_seconds,total_rss_kib,total_rss_mib,process_count\n");
		for (size_t i = 0; r->tl.known && i < r->tl.npts; i++) {
			const struct tlpoint *t = &r->tl.pts[i];
			time_str(&b, t->epoch);
			rm_buf_addc(&b, ',');
			rm_buf_num(&b, t->elapsed, 3);
			rm_buf_addc(&b, ',');
			rm_buf_num(&b, t->rss_kib, 0);
			rm_buf_addc(&b, ',');
			csv_mib(&b, t->rss_kib);
			rm_buf_addc(&b, ',');
			rm_buf_num(&b, t->procs, 0);
			rm_buf_addc(&b, '\n');
		}
		if (write_one(g_mw.timeline, &b) < 0)
			return -1;
	}
	return 0;
}
