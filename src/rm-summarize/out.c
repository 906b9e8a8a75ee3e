/*
 * out.c: a report as text (coloured only on a terminal), Markdown, or one
 * JSON object.  Every string printed here was sanitized when it was read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kmsg.h"
#include "summarize.h"

static const char *const pk_label[PK_N] = {
	"max memory used", "min memory available", "max swap used", "min disk available",
	"max load1", "max CPU busy", "max CPU package power", "max GPU busy",
	"max GPU VRAM used",
};

static const char *const pk_key[PK_N] = {
	"max_mem_used_mb", "min_mem_avail_mb", "max_swap_used_mb", "min_disk_avail_gb",
	"max_load1", "max_cpu_pct", "max_pkg_w", "max_gpu_busy_pct", "max_gpu_vram_used_mb",
};

static const char *const pk_aux_key[PK_N] = {
	"mem_pct", NULL, NULL, "disk_pct", NULL, NULL, NULL, NULL, "vram_total_mb",
};

const char *peak_label(int k)
{
	return pk_label[k];
}

const char *stage_name(const struct report *r, int i)
{
	return i >= 0 && i < r->nstages ? r->stages[i].name : "";
}

/* "+H:MM:SS" style clock for seconds since the start (no sign). */
void fmt_clock(double s, char *buf, size_t size)
{
	long t;

	if (isnan(s)) {
		snprintf(buf, size, "?");
		return;
	}
	if (s < 0)
		s = 0;
	t = (long)(s + 0.5);
	snprintf(buf, size, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
}

void fmt_dur(double s, char *buf, size_t size)
{
	if (isnan(s))
		snprintf(buf, size, "?");
	else if (s < 60)
		snprintf(buf, size, "%.1f s", s);
	else if (s < 3600)
		snprintf(buf, size, "%ldm%02lds", (long)s / 60, (long)s % 60);
	else
		snprintf(buf, size, "%ldh%02ldm%02lds", (long)s / 3600, (long)s / 60 % 60, (long)s % 60);
}

static void fmt_val(int k, double v, double aux, char *buf, size_t size)
{
	switch (k) {
	case PK_MEM_USED:
		if (!isnan(aux))
			snprintf(buf, size, "%.0f MiB (%.1f %%)", v, aux);
		else
			snprintf(buf, size, "%.0f MiB", v);
		break;
	case PK_MEM_AVAIL:
	case PK_SWAP:
		snprintf(buf, size, "%.0f MiB", v);
		break;
	case PK_DISK:
		if (!isnan(aux))
			snprintf(buf, size, "%.2f GiB (%.0f %% used)", v, aux);
		else
			snprintf(buf, size, "%.2f GiB", v);
		break;
	case PK_LOAD:
		snprintf(buf, size, "%.2f", v);
		break;
	case PK_CPU:
	case PK_GPU_BUSY:
		snprintf(buf, size, "%.1f %%", v);
		break;
	case PK_PKG_W:
		snprintf(buf, size, "%.1f W", v);
		break;
	case PK_GPU_VRAM:
		if (!isnan(aux))
			snprintf(buf, size, "%.0f of %.0f MiB", v, aux);
		else
			snprintf(buf, size, "%.0f MiB", v);
		break;
	}
}

static double mib(double kib)
{
	return kib / 1024.0;
}

/* Which peaks apply: the ones whose column the CSV has. */
static int peak_applies(const struct sys *s, int k)
{
	static const int col_of[PK_N] = {
		SC_USED, SC_AVAIL, SC_SWAP, SC_DISK, SC_LOAD1, SC_CPU, SC_PKG_W, SC_GPU_BUSY,
		SC_GPU_VRAM,
	};
	return s->col[col_of[k]] >= 0;
}

/* Was near-OOM judged at all: an available-memory reading, host or cgroup? */
static int near_known(const struct sys *s)
{
	return s->pk[PK_MEM_AVAIL].known || s->cg_avail.known;
}

/* Colour, only when opts say so. */
struct sty {
	const char *b, *red, *yel, *grn, *off;
};

static struct sty sty_of(const struct opts *o)
{
	struct sty on = { "\033[1m", "\033[31m", "\033[33m", "\033[32m", "\033[0m" };
	struct sty off = { "", "", "", "", "" };
	return o->color ? on : off;
}

/* The build's cgroup: its lowest available memory, beside the host's. */
static void text_cgroup_peak(struct rm_buf *b, const struct report *r)
{
	const struct sys *s = r->sys;
	const struct peak *p = &s->cg_avail;
	char v[80], clk[32];

	/* Nothing without a limit: then the host's headroom is the build's. */
	if (!p->known)
		return;
	snprintf(v, sizeof(v), "%.0f MiB of %.0f MiB", p->v, p->aux);
	fmt_clock(p->epoch - s->first_epoch, clk, sizeof(clk));
	rm_buf_addf(b, "  %-22s %-24s at +%s", "min available (cgroup)", v, clk);
	if (stage_name(r, p->stage)[0])
		rm_buf_addf(b, "  stage %s", stage_name(r, p->stage));
	rm_buf_adds(b, "\n");
}

static void text_sys(struct rm_buf *b, const struct report *r, const struct opts *o,
		     const struct sty *c)
{
	const struct sys *s = r->sys;
	char t0[40], t1[40], d[40], clk[32], v[80];
	double dur = s->last_epoch - s->first_epoch;

	rm_fmt_iso(s->first_epoch, t0, sizeof(t0));
	rm_fmt_iso(s->last_epoch, t1, sizeof(t1));
	fmt_dur(dur, d, sizeof(d));
	rm_buf_addf(b, "%sBuild resources: %s%s (%s CSV)\n", c->b, s->file, c->off,
		    s->seed ? "seed monitor" : s->format);
	rm_buf_addf(b, "  run      %s to %s (%s), %ld samples", t0, t1, d, s->samples);
	if (s->samples > 1)
		rm_buf_addf(b, ", every %.2f s", dur / (double)(s->samples - 1));
	rm_buf_adds(b, "\n");
	if (o->rows_lost > 0)
		rm_buf_addf(b, "  %snote     %ld rows lost from %s: the monitor could not write them%s\n",
			    c->b, o->rows_lost, o->rows_lost_from ? o->rows_lost_from : "(unknown)", c->off);
	if (o->stage_fallback > 0)
		rm_buf_addf(b, "  note     stage from the newest log's name in %ld rows: the stage file was missing or empty\n",
			    o->stage_fallback);
	if (s->cut_rows)
		rm_buf_adds(b, "  note     the last row was cut short; read without its cut field\n");
	if (s->skipped)
		rm_buf_addf(b, "  note     %ld rows without a time (epoch) were skipped\n", s->skipped);
	rm_buf_addf(b, "  limits   near-OOM below %.0f MiB available, low disk below %g GiB",
		    o->near_oom_mb, o->low_disk_gb);
	if (!isnan(r->host_ram_mb))
		rm_buf_addf(b, "; cgroup limit %.0f MiB (host RAM %.0f MiB)", r->ram_mb, r->host_ram_mb);
	else if (!isnan(r->ram_mb))
		rm_buf_addf(b, "; RAM %.0f MiB", r->ram_mb);
	rm_buf_addf(b, "; %d cores%s\n\n", r->cores, s->cores > 0 && o->cores <= 0 ? " (effective)" : "");

	rm_buf_addf(b, "%sPeaks%s\n", c->b, c->off);
	for (int k = 0; k < PK_N; k++) {
		const struct peak *p = &s->pk[k];
		if (!peak_applies(s, k))
			continue;
		if (!p->known) {
			rm_buf_addf(b, "  %-22s (no readings)\n", pk_label[k]);
			continue;
		}
		fmt_val(k, p->v, p->aux, v, sizeof(v));
		if (k == PK_SWAP && p->v == 0) {
			rm_buf_addf(b, "  %-22s %s\n", pk_label[k], "0 MiB (never used)");
			continue;
		}
		fmt_clock(p->epoch - s->first_epoch, clk, sizeof(clk));
		rm_buf_addf(b, "  %-22s %-24s at +%s", pk_label[k], v, clk);
		if (stage_name(r, p->stage)[0])
			rm_buf_addf(b, "  stage %s", stage_name(r, p->stage));
		rm_buf_adds(b, "\n");
		if (p->ctx[0])
			rm_buf_addf(b, "  %-22s context: %s\n", "", p->ctx);
	}
	text_cgroup_peak(b, r);
	rm_buf_adds(b, "\n");

	{
		const struct runstat *rs[2] = { &s->near, &s->low };
		static const char *const what[2] = { "Near-OOM", "Low disk" };
		for (int i = 0; i < 2; i++) {
			if (i == 0 && s->col[SC_AVAIL] < 0)
				continue;
			if (i == 1 && s->col[SC_DISK] < 0)
				continue;
			if (i == 0)
			{
				char cgt[80] = "";
				if (s->cg_avail.known)
					snprintf(cgt, sizeof(cgt), ", or within the cgroup below %.0f MiB",
						 fmin(o->near_oom_mb, 0.15 * s->cg_limit_min));
				rm_buf_addf(b, "%s (available below %.0f MiB%s): ", what[i], o->near_oom_mb, cgt);
			}
			else
				rm_buf_addf(b, "%s (available below %g GiB): ", what[i], o->low_disk_gb);
			/* A column with no reading in it counts nothing. */
			if (!(i == 0 ? near_known(s) : s->pk[PK_DISK].known)) {
				rm_buf_adds(b, "not recorded\n");
				continue;
			}
			rm_buf_addf(b, "%ld sample%s", rs[i]->samples, rs[i]->samples == 1 ? "" : "s");
			if (rs[i]->samples) {
				fmt_clock(rs[i]->first_epoch - s->first_epoch, clk, sizeof(clk));
				rm_buf_addf(b, ", first at +%s", clk);
				if (stage_name(r, rs[i]->first_stage)[0])
					rm_buf_addf(b, " in stage %s", stage_name(r, rs[i]->first_stage));
				fmt_dur(rs[i]->longest_end - rs[i]->longest_start, d, sizeof(d));
				rm_buf_addf(b, ", longest run %ld sample%s (%s)", rs[i]->longest,
					    rs[i]->longest == 1 ? "" : "s", d);
			}
			rm_buf_adds(b, "\n");
		}
	}
	if (!s->has_oom && s->col[SC_AVAIL] < 0 && s->col[SC_USED] < 0) {
		/* not a memory CSV at all (rm-energy's): nothing to say */
	} else if (!s->has_oom) {
		rm_buf_adds(b, "OOM kills: not recorded (no oom_kills column)\n");
	} else {
		long build = oom_build_kills(s);
		rm_buf_addf(b, "OOM kills: %s%ld%s", build ? c->red : "", build, build ? c->off : "");
		/* Other programs' kills are not the build's: counted here,
		 * listed under "Elsewhere on this host". */
		if (s->oom_else > 0)
			rm_buf_addf(b, " (and %ld elsewhere on this host)", s->oom_else);
		rm_buf_adds(b, "\n");
		for (size_t i = 0; i < s->nev; i++) {
			const struct oomev *e = &s->ev[i];
			long kills = e->kills - e->else_kills;
			int named = 0;
			if (!oom_event_is_build(e))
				continue;
			fmt_clock(e->epoch - s->first_epoch, clk, sizeof(clk));
			rm_buf_addf(b, "  at +%s", clk);
			if (stage_name(r, e->stage)[0])
				rm_buf_addf(b, "  stage %s", stage_name(r, e->stage));
			rm_buf_addf(b, "  %ld kill%s", kills, kills == 1 ? "" : "s");
			for (int k = 0; k < e->nv; k++)
				named += e->vscope[k] != 0;
			if (named) {
				rm_buf_adds(b, ", victim ");
				for (int k = 0, n = 0; k < e->nv; k++) {
					if (e->vscope[k] == 0)
						continue;
					rm_buf_addf(b, "%s%s (PID %d)", n++ ? ", " : "", e->vname[k], e->vpid[k]);
					if (e->vcons[k] == RM_OOM_MEMCG)
						rm_buf_addf(b, " killed by the limit of cgroup %s",
							    e->vmemcg[k][0] ? e->vmemcg[k] : "(not logged)");
					else if (e->vcons[k] != RM_OOM_UNKNOWN && e->vcons[k] != RM_OOM_NONE)
						rm_buf_addf(b, " %s", oom_cause(e->vcons[k]));
				}
			} else if (s->kmsg_state < 0) {
				rm_buf_addf(b, ", victim unknown (kernel log: %s)", kmsg_why(s->kmsg_errno));
			} else {
				rm_buf_adds(b, ", victim not in the kernel log");
			}
			rm_buf_adds(b, "\n");
			if (e->ctx[0])
				rm_buf_addf(b, "    context: %s\n", e->ctx);
		}
	}
	if (!isnan(s->disk_first)) {
		struct disk_fit df;
		double h, h_lo, h_hi;
		char span[40];
		sys_disk_fit(s, &df);
		fmt_dur(df.span_s, span, sizeof(span));
		rm_buf_addf(b, "Disk: %.2f -> %.2f GiB available", s->disk_first, s->disk_last);
		if (!df.fitted) {
			rm_buf_addf(b, "; no rate from %s and %ld sample%s (it needs %.0f min and %d)",
				    span, df.n, df.n == 1 ? "" : "s", DISK_FIT_MIN_S / 60, DISK_FIT_MIN_N);
		} else {
			rm_buf_addf(b, ", %+.2f GiB/h (95 %% interval %+.2f to %+.2f over %s)", df.rate,
				    df.lo, df.hi, span);
			/* A time to full only where the whole interval falls. */
			if (disk_hours(s, &df, 0, &h, &h_lo, &h_hi) && h < 24 * 365) {
				char a[40], z[40];
				fmt_dur(h * 3600, d, sizeof(d));
				fmt_dur(h_lo * 3600, a, sizeof(a));
				fmt_dur(h_hi * 3600, z, sizeof(z));
				rm_buf_addf(b, "; full in %s (%s to %s) at that rate", d, a, z);
			}
		}
		rm_buf_adds(b, "\n");
	}
	if (s->pk[PK_PKG_W].known) {
		fmt_clock(s->pk[PK_PKG_W].epoch - s->first_epoch, clk, sizeof(clk));
		rm_buf_addf(b, "Energy: %.0f J over %.0f s, mean %.1f W, peak %.1f W at +%s",
			    s->energy_j, s->energy_s, s->energy_s > 0 ? s->energy_j / s->energy_s : NAN,
			    s->pk[PK_PKG_W].v, clk);
		if (stage_name(r, s->pk[PK_PKG_W].stage)[0])
			rm_buf_addf(b, " in stage %s", stage_name(r, s->pk[PK_PKG_W].stage));
		rm_buf_adds(b, "\n");
	}
	rm_buf_adds(b, "\n");

	rm_buf_addf(b, "%sStages%s\n", c->b, c->off);
	{
		int w = 5;
		int energy = s->pk[PK_PKG_W].known;
		for (int i = 0; i < r->nstages; i++) {
			int l = (int)strlen(r->stages[i].name[0] ? r->stages[i].name : "(none)");
			if (r->stages[i].samples && l > w)
				w = l > 32 ? 32 : l;
		}
		int cg = s->cg_avail.known;
		rm_buf_addf(b, "  %-*s %10s %8s %10s %10s %9s %9s %8s%s%s\n", w, "stage", "duration",
			    "samples", "peak used", "min avail", "min disk", "compilers", "near-OOM",
			    energy ? "  energy J" : "", cg ? "  cg avail" : "");
		for (int i = 0; i < r->nstages; i++) {
			const struct stage *st = &r->stages[i];
			char pu[16], ma[16], md[16], mc[16];
			if (!st->samples)
				continue;
			fmt_clock(st->duration, d, sizeof(d));
			snprintf(pu, sizeof(pu), isnan(st->peak_used) ? "-" : "%.0f", st->peak_used);
			snprintf(ma, sizeof(ma), isnan(st->min_avail) ? "-" : "%.0f", st->min_avail);
			snprintf(md, sizeof(md), isnan(st->min_disk) ? "-" : "%.2f", st->min_disk);
			snprintf(mc, sizeof(mc), isnan(st->max_comp) ? "-" : "%.0f", st->max_comp);
			rm_buf_addf(b, "  %-*.*s %10s %8ld %10s %10s %9s %9s %8ld", w, 32,
				    st->name[0] ? st->name : "(none)", d, st->samples, pu, ma, md, mc,
				    st->near_oom);
			if (energy)
				rm_buf_addf(b, "  %8.0f", isnan(st->energy_j) ? 0 : st->energy_j);
			if (cg && isnan(st->min_cg_avail))
				rm_buf_addf(b, "  %8s", "-");
			else if (cg)
				rm_buf_addf(b, "  %8.0f", st->min_cg_avail);
			rm_buf_adds(b, "\n");
		}
		rm_buf_adds(b, "  (memory in MiB, disk in GiB)\n\n");
	}
}

/* The heaviest in-scope row of the exit log, NULL without one. */
static const struct proc *largest_row(const struct report *r)
{
	return r->nproc && !isnan(r->order[0]->peak_kib) ? r->order[0] : NULL;
}

/*
 * Why the sampled tree total and the cgroup's exact peak differ, from
 * what rm-tree measured at the sampled peak (its job row's peak_file_kib,
 * cg_file_kib, cg_kernel_kib): one line, 0 when there is nothing to say.
 */
static int cgroup_gap(const struct job *j, char *buf, size_t size)
{
	if (isnan(j->peak_kib) || isnan(j->cgroup_kib) || fabs(j->peak_kib - j->cgroup_kib) < 1024)
		return 0;
	if (isnan(j->peak_file_kib) || isnan(j->cg_anon_kib) || isnan(j->cg_file_kib) ||
	    isnan(j->cg_kernel_kib)) {
		snprintf(buf, size, "(the sampled total is %s the cgroup's: %s)",
			 j->peak_kib > j->cgroup_kib ? "above" : "below",
			 j->peak_kib > j->cgroup_kib ?
			 "pages shared by several processes count once per process in it" :
			 "the cgroup also holds page cache and kernel memory");
		return 1;
	}
	snprintf(buf, size, "sampled minus exact %+.1f MiB: at the sampled peak the total had %.1f MiB "
		 "anonymous + %.1f MiB file-backed (shared pages counted once per process); the "
		 "cgroup then held %.1f MiB anonymous + %.1f MiB page cache + %.1f MiB kernel "
		 "(a file's pages are charged to the cgroup that first read them)",
		 mib(j->peak_kib - j->cgroup_kib), mib(j->peak_kib - j->peak_file_kib),
		 mib(j->peak_file_kib), mib(j->cg_anon_kib), mib(j->cg_file_kib), mib(j->cg_kernel_kib));
	return 1;
}

/* --include/--exclude: how many match, and the peaks left out. */
struct filt {
	size_t shown, hidden;
	double hidden_kib;
	char names[200];     /* names seen, heaviest first, for the warning */
};

static int filtered(const struct report *r, const struct opts *o, struct filt *f)
{
	size_t len = 0;

	memset(f, 0, sizeof(*f));
	if (!o->has_inc && !o->has_exc)
		return 0;
	for (size_t i = 0; i < r->nproc; i++) {
		const struct proc *p = r->order[i];
		int seen = 0;
		if (p->shown) {
			f->shown++;
			continue;
		}
		f->hidden++;
		if (!isnan(p->peak_kib))
			f->hidden_kib += p->peak_kib;
		for (size_t k = 0; k < i && !seen; k++)
			seen = strcmp(r->order[k]->comm, p->comm) == 0;
		if (!seen && len + strlen(p->comm) + 3 < sizeof(f->names) - 4) {
			len += (size_t)snprintf(f->names + len, sizeof(f->names) - len, "%s%s",
						len ? ", " : "", p->comm);
		}
	}
	return 1;
}

static void filter_words(struct rm_buf *b, const struct opts *o)
{
	if (o->has_inc)
		rm_buf_addf(b, "--include '%s'", o->inc_pat ? o->inc_pat : "?");
	if (o->has_inc && o->has_exc)
		rm_buf_addc(b, ' ');
	if (o->has_exc)
		rm_buf_addf(b, "--exclude '%s'", o->exc_pat ? o->exc_pat : "?");
}

/* The warning when the filters leave nothing: what to try instead. */
static void filter_warning(struct rm_buf *b, const struct report *r, const struct opts *o,
			   const struct filt *f)
{
	rm_buf_adds(b, "no process matches ");
	filter_words(b, o);
	rm_buf_addf(b, ": the %zu processes are in the totals but none is listed. "
		    "The patterns are POSIX extended regular expressions, case-sensitive, "
		    "matched against the name, the command line and the compile unit", r->nproc);
	if (f->names[0])
		rm_buf_addf(b, "; names seen: %s. Try --include with one of them", f->names);
	if (o->has_exc)
		rm_buf_adds(b, ", or drop --exclude");
	rm_buf_adds(b, ".");
}

/* rm-run --memory-max: did CMD fit the budget, and if not, who was killed. */
static void budget_line(const struct job *j, char *buf, size_t size)
{
	int n = snprintf(buf, size, "%.1f MiB: ", mib(j->mem_max_kib));

	if (n < 0 || (size_t)n >= size)
		return;
	if (isnan(j->oom_kills))
		snprintf(buf + n, size - (size_t)n, "OOM kills inside it unknown");
	else if (j->oom_kills > 0)
		snprintf(buf + n, size - (size_t)n, "OOM-killed inside the budget (%.0f kill%s%s%s%s)",
			 j->oom_kills, j->oom_kills == 1 ? "" : "s", j->victim[0] ? ", first victim " : "",
			 j->victim, j->victim[0] ? "" : ", victim not in the kernel log");
	else
		snprintf(buf + n, size - (size_t)n, "fitted, no OOM kill");
	n = (int)strlen(buf);
	if (!isnan(j->cgroup_kib) && (size_t)n < size)
		snprintf(buf + n, size - (size_t)n, "; exact peak %.1f MiB (%.0f %%)", mib(j->cgroup_kib),
			 100.0 * j->cgroup_kib / j->mem_max_kib);
}

static void text_job(struct rm_buf *b, const struct report *r, const struct sty *c)
{
	const struct job *j = &r->job;
	char d[40];

	rm_buf_addf(b, "%sJob%s: %s\n", c->b, c->off, j->cmd);
	fmt_dur(j->elapsed, d, sizeof(d));
	rm_buf_addf(b, "  exit %s, elapsed %s", j->exit[0] ? j->exit : "?", d);
	if (!isnan(j->user_s))
		rm_buf_addf(b, ", user %.2f s", j->user_s);
	if (!isnan(j->sys_s))
		rm_buf_addf(b, ", sys %.2f s", j->sys_s);
	if (!isnan(j->procs))
		rm_buf_addf(b, ", %.0f processes", j->procs);
	rm_buf_adds(b, "\n");
	if (!isnan(j->start_epoch) && !isnan(j->end_epoch)) {
		char s0[40], s1[40];
		rm_fmt_iso(j->start_epoch, s0, sizeof(s0));
		rm_fmt_iso(j->end_epoch, s1, sizeof(s1));
		rm_buf_addf(b, "  started %s, ended %s (epoch %.3f to %.3f)\n", s0, s1,
			    j->start_epoch, j->end_epoch);
	}
	if (!isnan(j->peak_kib)) {
		rm_buf_addf(b, "  peak memory (sampled tree total) %.1f MiB", mib(j->peak_kib));
		if (!isnan(j->peak_at))
			rm_buf_addf(b, " at +%.2f s", j->peak_at);
		rm_buf_adds(b, "\n");
	}
	if (!isnan(j->cgroup_kib)) {
		char why[400];
		rm_buf_addf(b, "  peak memory (exact, cgroup)      %.1f MiB\n", mib(j->cgroup_kib));
		if (cgroup_gap(j, why, sizeof(why)))
			rm_buf_addf(b, "  %s\n", why);
	}
	if (!isnan(j->max_proc_kib)) {
		const struct proc *p = largest_row(r);
		rm_buf_addf(b, "  largest single process (exact)   %.1f MiB", mib(j->max_proc_kib));
		if (p && p->peak_kib >= j->max_proc_kib)
			rm_buf_addf(b, " (%s, PID %d)", p->comm, p->pid);
		else if (p && !isnan(p->peak_kib))
			rm_buf_addf(b, " (the kernel's maxrss over the tree, which names no process; "
				    "the largest row, %s PID %d, was sampled at %.1f MiB)",
				    p->comm, p->pid, mib(p->peak_kib));
		rm_buf_adds(b, "\n");
	}
	if (!isnan(j->mem_max_kib)) {
		char line[400];
		budget_line(j, line, sizeof(line));
		rm_buf_addf(b, "  memory budget (--memory-max)     %s\n", line);
	}
	/* A survivor of an --exec job: a daemon it left behind. */
	for (size_t i = 0; i < r->nproc; i++)
		if (isnan(r->procs[i].end_s))
			rm_buf_addf(b, "  still running after CMD ended: %d %s\n",
				    r->procs[i].pid, r->procs[i].comm);
	rm_buf_adds(b, "\n");
}

static void text_procs(struct rm_buf *b, const struct report *r, const struct opts *o,
		       const struct sty *c)
{
	size_t shown = 0, listed = 0;
	double cpu = 0;

	for (size_t i = 0; i < r->nproc; i++) {
		shown += r->procs[i].shown;
		if (!isnan(r->procs[i].cpu_s))
			cpu += r->procs[i].cpu_s;
	}
	if (r->tl.known && !isnan(r->tl.peak_kib)) {
		rm_buf_addf(b, "%sTimeline%s: %ld ticks, peak tree total %.1f MiB at +%.2f s",
			    c->b, c->off, r->tl.rows, mib(r->tl.peak_kib),
			    r->tl.peak_epoch - r->tl.off);
		if (!isnan(r->tl.max_procs))
			rm_buf_addf(b, ", up to %.0f processes", r->tl.max_procs);
		rm_buf_adds(b, "\n\n");
	}
	if (!r->nexitlogs)
		return;
	rm_buf_addf(b, "%sProcesses%s: %zu, %.2f s CPU in all", c->b, c->off, r->nproc, cpu);
	if (r->nproc && !isnan(r->order[0]->peak_kib))
		rm_buf_addf(b, ", largest %.1f MiB (%s)", mib(r->order[0]->peak_kib), r->order[0]->comm);
	if (shown != r->nproc)
		rm_buf_addf(b, "; %zu match the filters", shown);
	rm_buf_adds(b, "\n");
	struct filt fl;
	if (filtered(r, o, &fl)) {
		rm_buf_adds(b, "  filters: ");
		filter_words(b, o);
		rm_buf_addf(b, "; %zu of %zu processes match; the %zu left out peaked at %.1f MiB "
			    "together (summed per process; the totals above count them)\n",
			    fl.shown, r->nproc, fl.hidden, mib(fl.hidden_kib));
		if (!fl.shown && r->nproc) {
			rm_buf_addf(b, "  %swarning%s: ", c->red, c->off);
			filter_warning(b, r, o, &fl);
			rm_buf_adds(b, "\n");
		}
	}
	if (shown) {
		rm_buf_addf(b, "  %7s %10s %10s %8s %6s  %-15s %s\n", "PID", "peak MiB", "at s",
			    "cpu s", "exit", "comm", "unit or cmd");
		for (size_t i = 0; i < r->nproc && listed < (size_t)o->top; i++) {
			const struct proc *p = r->order[i];
			char pk[16], at[16], cs[16];
			if (!p->shown)
				continue;
			listed++;
			snprintf(pk, sizeof(pk), isnan(p->peak_kib) ? "-" : "%.1f", mib(p->peak_kib));
			snprintf(at, sizeof(at), isnan(p->peak_at) ? "-" : "%.2f", p->peak_at);
			snprintf(cs, sizeof(cs), isnan(p->cpu_s) ? "-" : "%.2f", p->cpu_s);
			rm_buf_addf(b, "  %7d %10s %10s %8s %6s  %-15s %.100s\n", p->pid, pk, at, cs,
				    p->exit[0] ? p->exit : "-", p->comm, p->unit ? p->unit : p->cmd);
		}
		if (listed < shown)
			rm_buf_addf(b, "  ... %zu more (--top N, --csv FILE)\n", shown - listed);
	}
	if (r->ngroups) {
		rm_buf_addf(b, "\n%sBy command%s\n  %-15s %6s %16s %10s\n", c->b, c->off, "comm",
			    "count", "largest peak MiB", "total cpu s");
		for (size_t i = 0; i < r->ngroups && i < (size_t)o->top; i++)
			rm_buf_addf(b, "  %-15s %6ld %16.1f %10.2f\n", r->groups[i].comm,
				    r->groups[i].count, mib(r->groups[i].peak_kib), r->groups[i].cpu_s);
	}
	rm_buf_adds(b, "\n");
}

/* The -j advice: the smaller of the effective cores and what memory
 * allows, and which of the two binds. */
static long safe_jobs(const struct report *r, const struct perjob *pj)
{
	return r->cores > 0 && r->cores < pj->safe_j ? r->cores : pj->safe_j;
}

static const char *jobs_bound(const struct report *r, const struct perjob *pj)
{
	if (r->cores > 0 && r->cores < pj->safe_j)
		return "cores";
	return isnan(r->host_ram_mb) ? "memory" : "cgroup memory";
}

static void text_units(struct rm_buf *b, const struct report *r, const struct opts *o,
		       const struct sty *c)
{
	if (r->nunits) {
		rm_buf_addf(b, "%sHeaviest compile units%s (%zu in all)\n", c->b, c->off, r->nunits);
		rm_buf_addf(b, "  %10s  %-16s %-10s %s\n", "peak MiB", "stage", "comm", "unit");
		for (size_t i = 0; i < r->nunits && i < (size_t)o->top; i++) {
			const struct unit *u = &r->units[i];
			const char *sn = stage_name(r, u->stage);
			rm_buf_addf(b, "  %10.1f  %-16.32s %-10s %s", mib(u->peak_kib), sn[0] ? sn : "-",
				    u->comm, u->name);
			if (u->count > 1)
				rm_buf_addf(b, " (x%d)", u->count);
			rm_buf_adds(b, "\n");
		}
		rm_buf_adds(b, "\n");
	}
	if (r->nperjob) {
		rm_buf_addf(b, "%sMemory per compile job%s (p95 of compiler peaks per stage", c->b, c->off);
		if (!isnan(r->ram_mb))
			rm_buf_addf(b, "; -j for %.0f MiB %s, %d cores", r->ram_mb,
				    isnan(r->host_ram_mb) ? "RAM" : "cgroup limit", r->cores);
		rm_buf_adds(b, ")\n");
		rm_buf_addf(b, "  %-16s %9s %9s %9s %12s %8s  %s\n", "stage", "compilers", "p95 MiB",
			    "max MiB", "per job MiB", "safe -j", "bound by");
		for (size_t i = 0; i < r->nperjob; i++) {
			const struct perjob *pj = &r->perjob[i];
			const char *sn = stage_name(r, pj->stage);
			rm_buf_addf(b, "  %-16.32s %9zu %9.1f %9.1f %12.0f ", sn[0] ? sn : r->sys ? "(none)" : "(all)", pj->n,
				    mib(pj->p95_kib), mib(pj->max_kib), pj->suggest_mb);
			if (pj->safe_j > 0)
				rm_buf_addf(b, "%8ld  %s\n", safe_jobs(r, pj), jobs_bound(r, pj));
			else
				rm_buf_addf(b, "%8s\n", "?");
		}
		rm_buf_adds(b, "\n");
	}
}

void print_text(struct rm_buf *b, const struct report *r, const struct opts *o)
{
	struct sty c = sty_of(o);

	if (r->sys)
		text_sys(b, r, o, &c);
	if (r->job.known)
		text_job(b, r, &c);
	text_procs(b, r, o, &c);
	text_units(b, r, o, &c);
	text_scope(b, r, o, c.b, c.off);
	if (r->nverdicts) {
		rm_buf_addf(b, "%sVerdict%s\n", c.b, c.off);
		for (int i = 0; i < r->nverdicts; i++) {
			const char *col = strcmp(r->verdicts[i].kind, "ok") == 0 ? c.grn : c.red;
			rm_buf_addf(b, "  %s-%s %s\n", col, c.off, r->verdicts[i].text);
		}
	}
}

/* Markdown table cells: | and the inline markup characters escaped. */
static void md(struct rm_buf *b, const char *s)
{
	for (; *s; s++) {
		if (strchr("|\\`*_[]<>#", *s))
			rm_buf_addc(b, '\\');
		rm_buf_addc(b, *s);
	}
}

void print_markdown(struct rm_buf *b, const struct report *r, const struct opts *o)
{
	char clk[32], v[80], d[40];

	if (r->sys) {
		const struct sys *s = r->sys;
		fmt_dur(s->last_epoch - s->first_epoch, d, sizeof(d));
		rm_buf_adds(b, "### Build resources: ");
		md(b, s->file);
		rm_buf_addf(b, "\n\n%ld samples over %s. Near-OOM below %.0f MiB available: ", s->samples, d,
			    o->near_oom_mb);
		if (near_known(s))
			rm_buf_addf(b, "%ld samples. ", s->near.samples);
		else
			rm_buf_adds(b, "not recorded. ");
		rm_buf_addf(b, "Low disk below %g GiB: ", o->low_disk_gb);
		if (s->pk[PK_DISK].known)
			rm_buf_addf(b, "%ld samples. OOM kills: ", s->low.samples);
		else
			rm_buf_adds(b, "not recorded. OOM kills: ");
		if (o->rows_lost > 0)
			rm_buf_addf(b, "%ld rows lost from %s (the monitor could not write them). ",
				    o->rows_lost, o->rows_lost_from ? o->rows_lost_from : "(unknown)");
		if (s->has_oom && s->oom_else > 0)
			rm_buf_addf(b, "%ld (and %ld elsewhere on this host).\n\n", oom_build_kills(s), s->oom_else);
		else if (s->has_oom)
			rm_buf_addf(b, "%ld.\n\n", oom_build_kills(s));
		else
			rm_buf_adds(b, "not recorded.\n\n");
		rm_buf_adds(b, "| peak | value | at | stage | context |\n|---|---|---|---|---|\n");
		for (int k = 0; k < PK_N; k++) {
			const struct peak *p = &s->pk[k];
			if (!peak_applies(s, k) || !p->known)
				continue;
			fmt_val(k, p->v, p->aux, v, sizeof(v));
			fmt_clock(p->epoch - s->first_epoch, clk, sizeof(clk));
			rm_buf_addf(b, "| %s | %s | +%s | ", pk_label[k], v, clk);
			md(b, stage_name(r, p->stage));
			rm_buf_adds(b, " | ");
			md(b, p->ctx);
			rm_buf_adds(b, " |\n");
		}
		for (size_t i = 0; i < s->nev; i++) {
			const struct oomev *e = &s->ev[i];
			if (!oom_event_is_build(e))
				continue;
			fmt_clock(e->epoch - s->first_epoch, clk, sizeof(clk));
			rm_buf_addf(b, "| OOM kill | %ld", e->kills - e->else_kills);
			for (int k = 0, n = 0; k < e->nv; k++) {
				if (e->vscope[k] == 0)
					continue;
				rm_buf_adds(b, n++ ? ", " : ": ");
				md(b, e->vname[k]);
				rm_buf_addf(b, " (PID %d)", e->vpid[k]);
				if (e->vcons[k] == RM_OOM_MEMCG) {
					rm_buf_adds(b, ", killed by the limit of cgroup ");
					md(b, e->vmemcg[k]);
				}
			}
			rm_buf_addf(b, " | +%s | ", clk);
			md(b, stage_name(r, e->stage));
			rm_buf_adds(b, " | ");
			md(b, e->ctx);
			rm_buf_adds(b, " |\n");
		}
		rm_buf_adds(b, "\n| stage | duration | samples | peak used MiB | min avail MiB | min disk GiB | max compilers | near-OOM |");
		rm_buf_adds(b, s->cg_avail.known ? " cgroup min avail MiB |\n" : "\n");
		rm_buf_adds(b, s->cg_avail.known ? "|---|---|---|---|---|---|---|---|---|\n" : "|---|---|---|---|---|---|---|---|\n");
		for (int i = 0; i < r->nstages; i++) {
			const struct stage *st = &r->stages[i];
			if (!st->samples)
				continue;
			fmt_clock(st->duration, d, sizeof(d));
			rm_buf_adds(b, "| ");
			md(b, st->name[0] ? st->name : "(none)");
			/* A value never read is "-", as in the text table. */
			rm_buf_addf(b, " | %s | %ld | ", d, st->samples);
			rm_buf_addf(b, isnan(st->peak_used) ? "- | " : "%.0f | ", st->peak_used);
			rm_buf_addf(b, isnan(st->min_avail) ? "- | " : "%.0f | ", st->min_avail);
			rm_buf_addf(b, isnan(st->min_disk) ? "- | " : "%.2f | ", st->min_disk);
			rm_buf_addf(b, isnan(st->max_comp) ? "- | " : "%.0f | ", st->max_comp);
			rm_buf_addf(b, "%ld |", st->near_oom);
			if (s->cg_avail.known)
				rm_buf_addf(b, isnan(st->min_cg_avail) ? " - |" : " %.0f |", st->min_cg_avail);
			rm_buf_adds(b, "\n");
		}
		rm_buf_adds(b, "\n");
	}
	if (r->job.known) {
		rm_buf_adds(b, "### Job: `");
		md(b, r->job.cmd);
		rm_buf_addf(b, "`\n\nexit %s, elapsed %.2f s, peak %.1f MiB (sampled)", r->job.exit,
			    r->job.elapsed, mib(r->job.peak_kib));
		if (!isnan(r->job.cgroup_kib))
			rm_buf_addf(b, ", %.1f MiB (cgroup, exact)", mib(r->job.cgroup_kib));
		if (!isnan(r->job.max_proc_kib))
			rm_buf_addf(b, ", largest process %.1f MiB", mib(r->job.max_proc_kib));
		if (!isnan(r->job.mem_max_kib)) {
			char line[400];
			budget_line(&r->job, line, sizeof(line));
			rm_buf_adds(b, "; memory budget ");
			md(b, line);
		}
		rm_buf_adds(b, "\n\n");
	}
	if (r->nunits) {
		rm_buf_adds(b, "| compile unit | peak MiB | stage |\n|---|---|---|\n");
		for (size_t i = 0; i < r->nunits && i < (size_t)o->top; i++) {
			rm_buf_adds(b, "| ");
			md(b, r->units[i].name);
			rm_buf_addf(b, " | %.1f | ", mib(r->units[i].peak_kib));
			md(b, stage_name(r, r->units[i].stage));
			rm_buf_adds(b, " |\n");
		}
		rm_buf_adds(b, "\n");
	}
	if (r->nperjob) {
		rm_buf_adds(b, "| stage | compilers | p95 MiB | per job MiB | safe -j | bound by |\n|---|---|---|---|---|---|\n");
		for (size_t i = 0; i < r->nperjob; i++) {
			const struct perjob *pj = &r->perjob[i];
			rm_buf_adds(b, "| ");
			md(b, stage_name(r, pj->stage)[0] ? stage_name(r, pj->stage) : "(none)");
			rm_buf_addf(b, " | %zu | %.1f | %.0f | %ld | %s |\n", pj->n, mib(pj->p95_kib),
				    pj->suggest_mb, safe_jobs(r, pj), pj->safe_j > 0 ? jobs_bound(r, pj) : "?");
		}
		rm_buf_adds(b, "\n");
	}
	if (r->nexitlogs && !r->nunits) {
		size_t listed = 0;
		rm_buf_adds(b, "| PID | comm | peak MiB | cmd |\n|---|---|---|---|\n");
		for (size_t i = 0; i < r->nproc && listed < (size_t)o->top; i++) {
			const struct proc *p = r->order[i];
			if (!p->shown)
				continue;
			listed++;
			rm_buf_addf(b, "| %d | ", p->pid);
			md(b, p->comm);
			rm_buf_addf(b, " | %.1f | ", mib(p->peak_kib));
			md(b, p->cmd);
			rm_buf_adds(b, " |\n");
		}
		rm_buf_adds(b, "\n");
	}
	md_scope(b, r, o);
	for (int i = 0; i < r->nverdicts; i++) {
		rm_buf_adds(b, "- ");
		md(b, r->verdicts[i].text);
		rm_buf_adds(b, "\n");
	}
}

/* JSON helpers: a number or null, a key. */
static void jnum(struct rm_buf *b, double v, int prec)
{
	if (isnan(v) || isinf(v))
		rm_buf_adds(b, "null");
	else
		rm_buf_num(b, v, prec);
}

static void jiso(struct rm_buf *b, double epoch)
{
	char iso[40];

	if (isnan(epoch)) {
		rm_buf_adds(b, "null");
		return;
	}
	rm_fmt_iso(epoch, iso, sizeof(iso));
	rm_buf_json(b, iso);
}

static void jkey(struct rm_buf *b, int *first, const char *k)
{
	if (!*first)
		rm_buf_addc(b, ',');
	*first = 0;
	rm_buf_json(b, k);
	rm_buf_addc(b, ':');
}

static void jtime(struct rm_buf *b, int *first, const struct sys *s, double epoch)
{
	char iso[40];

	jkey(b, first, "epoch");
	jnum(b, epoch, 3);
	jkey(b, first, "iso");
	if (isnan(epoch)) {
		rm_buf_adds(b, "null");
	} else {
		rm_fmt_iso(epoch, iso, sizeof(iso));
		rm_buf_json(b, iso);
	}
	jkey(b, first, "elapsed_s");
	jnum(b, epoch - s->first_epoch, 3);
}

static void jstage(struct rm_buf *b, int *first, const struct report *r, int stage)
{
	jkey(b, first, "stage");
	if (stage < 0)
		rm_buf_adds(b, "null");
	else
		rm_buf_json(b, stage_name(r, stage));
}

/* An exit status: a number when it is one, null when empty, else text. */
static void jexit(struct rm_buf *b, const char *e)
{
	size_t i = e[0] == '-' ? 1 : 0;

	if (!e[0]) {
		rm_buf_adds(b, "null");
		return;
	}
	for (; e[i] >= '0' && e[i] <= '9'; i++)
		;
	if (!e[i] && i > (e[0] == '-' ? 1u : 0u) && i < 12)
		rm_buf_adds(b, e);
	else
		rm_buf_json(b, e);
}

static void json_sys(struct rm_buf *b, const struct report *r, const struct opts *o)
{
	const struct sys *s = r->sys;
	int f = 1;

	rm_buf_addc(b, '{');
	jkey(b, &f, "file");
	rm_buf_json(b, s->file);
	jkey(b, &f, "format");
	rm_buf_json(b, s->format);
	jkey(b, &f, "start");
	{
		int g = 1;
		rm_buf_addc(b, '{');
		jtime(b, &g, s, s->first_epoch);
		rm_buf_addc(b, '}');
	}
	jkey(b, &f, "end");
	{
		int g = 1;
		rm_buf_addc(b, '{');
		jtime(b, &g, s, s->last_epoch);
		rm_buf_addc(b, '}');
	}
	jkey(b, &f, "duration_s");
	jnum(b, s->last_epoch - s->first_epoch, 3);
	jkey(b, &f, "samples");
	rm_buf_addf(b, "%ld", s->samples);
	jkey(b, &f, "skipped_rows");
	rm_buf_addf(b, "%ld", s->skipped);
	jkey(b, &f, "cut_rows");
	rm_buf_addf(b, "%ld", s->cut_rows);
	jkey(b, &f, "ram_mb");
	jnum(b, !isnan(r->host_ram_mb) ? r->host_ram_mb : r->ram_mb, 0);
	jkey(b, &f, "cores");
	rm_buf_addf(b, "%d", r->cores);
	jkey(b, &f, "cgroup");
	if (!s->cg_avail.known) {
		rm_buf_adds(b, "null");
	} else {
		int g = 1;
		rm_buf_addc(b, '{');
		jkey(b, &g, "min_avail_mb");
		jnum(b, s->cg_avail.v, 0);
		jkey(b, &g, "limit_mb");
		jnum(b, s->cg_avail.aux, 0);
		jkey(b, &g, "host_avail_mb");
		jnum(b, s->cg_host_avail, 0);
		jtime(b, &g, s, s->cg_avail.epoch);
		jstage(b, &g, r, s->cg_avail.stage);
		rm_buf_addc(b, '}');
	}
	jkey(b, &f, "peaks");
	{
		int g = 1;
		rm_buf_addc(b, '{');
		for (int k = 0; k < PK_N; k++) {
			const struct peak *p = &s->pk[k];
			int h = 1;
			if (!peak_applies(s, k))
				continue;
			jkey(b, &g, pk_key[k]);
			if (!p->known) {
				rm_buf_adds(b, "null");
				continue;
			}
			rm_buf_addc(b, '{');
			jkey(b, &h, "value");
			jnum(b, p->v, 3);
			if (pk_aux_key[k]) {
				jkey(b, &h, pk_aux_key[k]);
				jnum(b, p->aux, 1);
			}
			jtime(b, &h, s, p->epoch);
			jstage(b, &h, r, p->stage);
			jkey(b, &h, "context");
			rm_buf_json(b, p->ctx);
			rm_buf_addc(b, '}');
		}
		rm_buf_addc(b, '}');
	}
	{
		const struct runstat *rs[2] = { &s->near, &s->low };
		static const char *const key[2] = { "near_oom", "low_disk" };
		for (int i = 0; i < 2; i++) {
			int g = 1;
			jkey(b, &f, key[i]);
			rm_buf_addc(b, '{');
			jkey(b, &g, i == 0 ? "threshold_mb" : "threshold_gb");
			jnum(b, i == 0 ? o->near_oom_mb : o->low_disk_gb, 3);
			/* null, not 0, where the column held no reading. */
			int known = i == 0 ? near_known(s) : s->pk[PK_DISK].known;
			jkey(b, &g, "samples");
			if (known)
				rm_buf_addf(b, "%ld", rs[i]->samples);
			else
				rm_buf_adds(b, "null");
			jkey(b, &g, "first");
			if (rs[i]->samples) {
				int h = 1;
				rm_buf_addc(b, '{');
				jtime(b, &h, s, rs[i]->first_epoch);
				jstage(b, &h, r, rs[i]->first_stage);
				rm_buf_addc(b, '}');
			} else {
				rm_buf_adds(b, "null");
			}
			jkey(b, &g, "longest_run_samples");
			if (known)
				rm_buf_addf(b, "%ld", rs[i]->longest);
			else
				rm_buf_adds(b, "null");
			jkey(b, &g, "longest_run_s");
			jnum(b, rs[i]->samples ? rs[i]->longest_end - rs[i]->longest_start : NAN, 3);
			rm_buf_addc(b, '}');
		}
	}
	jkey(b, &f, "oom_kills");
	if (!s->has_oom) {
		rm_buf_adds(b, "null");
	} else {
		int g = 1;
		rm_buf_addc(b, '{');
		jkey(b, &g, "count");
		rm_buf_addf(b, "%ld", oom_build_kills(s));
		jkey(b, &g, "elsewhere");
		rm_buf_addf(b, "%ld", s->oom_else);
		jkey(b, &g, "kernel_log");
		rm_buf_json(b, s->kmsg_state > 0 ? "read" : s->kmsg_state < 0 ? kmsg_why(s->kmsg_errno) : "not needed");
		jkey(b, &g, "events");
		rm_buf_addc(b, '[');
		for (size_t i = 0, n = 0; i < s->nev; i++) {
			const struct oomev *e = &s->ev[i];
			int h = 1;
			if (!oom_event_is_build(e))
				continue;
			if (n++)
				rm_buf_addc(b, ',');
			rm_buf_addc(b, '{');
			jkey(b, &h, "kills");
			rm_buf_addf(b, "%ld", e->kills - e->else_kills);
			jtime(b, &h, s, e->epoch);
			jstage(b, &h, r, e->stage);
			jkey(b, &h, "context");
			rm_buf_json(b, e->ctx);
			jkey(b, &h, "victims");
			rm_buf_addc(b, '[');
			for (int k = 0, n2 = 0; k < e->nv; k++) {
				const char *cn = rm_kmsg_constraint_name(e->vcons[k]);
				if (e->vscope[k] == 0)
					continue;
				rm_buf_addf(b, "%s{\"pid\":%d,\"name\":", n2++ ? "," : "", e->vpid[k]);
				rm_buf_json(b, e->vname[k]);
				rm_buf_adds(b, ",\"in_scope\":");
				rm_buf_adds(b, e->vscope[k] > 0 ? "true" : "null");
				rm_buf_adds(b, ",\"constraint\":");
				if (cn[0])
					rm_buf_json(b, cn);
				else
					rm_buf_adds(b, "null");
				rm_buf_adds(b, ",\"oom_memcg\":");
				if (e->vmemcg[k][0])
					rm_buf_json(b, e->vmemcg[k]);
				else
					rm_buf_adds(b, "null");
				rm_buf_addc(b, '}');
			}
			rm_buf_adds(b, "]}");
		}
		rm_buf_adds(b, "]}");
	}
	jkey(b, &f, "disk");
	if (isnan(s->disk_first)) {
		rm_buf_adds(b, "null");
	} else {
		struct disk_fit df;
		double h[2][3];
		int g = 1, falls;
		sys_disk_fit(s, &df);
		rm_buf_addc(b, '{');
		jkey(b, &g, "first_gb");
		jnum(b, s->disk_first, 2);
		jkey(b, &g, "last_gb");
		jnum(b, s->disk_last, 2);
		/* The rate is fitted over 10 minutes and 20 samples or more,
		 * else null; times only when the whole 95 % interval falls. */
		jkey(b, &g, "fit_seconds");
		jnum(b, df.span_s, 3);
		jkey(b, &g, "fit_samples");
		rm_buf_addf(b, "%ld", df.n);
		jkey(b, &g, "rate_gb_per_hour");
		jnum(b, df.rate, 3);
		jkey(b, &g, "rate_ci95_gb_per_hour");
		if (df.fitted) {
			rm_buf_addc(b, '[');
			jnum(b, df.lo, 3);
			rm_buf_addc(b, ',');
			jnum(b, df.hi, 3);
			rm_buf_addc(b, ']');
		} else {
			rm_buf_adds(b, "null");
		}
		falls = disk_hours(s, &df, 0, &h[0][0], &h[0][1], &h[0][2]);
		disk_hours(s, &df, o->low_disk_gb, &h[1][0], &h[1][1], &h[1][2]);
		for (int k = 0; k < 2; k++) {
			jkey(b, &g, k ? "hours_to_threshold" : "hours_to_full");
			jnum(b, falls ? h[k][0] : NAN, 2);
			jkey(b, &g, k ? "hours_to_threshold_ci95" : "hours_to_full_ci95");
			if (falls) {
				rm_buf_addc(b, '[');
				jnum(b, h[k][1], 2);
				rm_buf_addc(b, ',');
				jnum(b, h[k][2], 2);
				rm_buf_addc(b, ']');
			} else {
				rm_buf_adds(b, "null");
			}
		}
		rm_buf_addc(b, '}');
	}
	jkey(b, &f, "energy");
	if (!s->pk[PK_PKG_W].known) {
		rm_buf_adds(b, "null");
	} else {
		int g = 1;
		rm_buf_addc(b, '{');
		jkey(b, &g, "joules");
		jnum(b, s->energy_j, 1);
		jkey(b, &g, "mean_w");
		jnum(b, s->energy_s > 0 ? s->energy_j / s->energy_s : NAN, 2);
		jkey(b, &g, "seconds");
		jnum(b, s->energy_s, 3);
		rm_buf_addc(b, '}');
	}
	jkey(b, &f, "stages");
	rm_buf_addc(b, '[');
	{
		int any = 0;
		for (int i = 0; i < r->nstages; i++) {
			const struct stage *st = &r->stages[i];
			int g = 1;
			if (!st->samples)
				continue;
			if (any++)
				rm_buf_addc(b, ',');
			rm_buf_addc(b, '{');
			jkey(b, &g, "stage");
			rm_buf_json(b, st->name);
			jkey(b, &g, "duration_s");
			jnum(b, st->duration, 3);
			jkey(b, &g, "samples");
			rm_buf_addf(b, "%ld", st->samples);
			jkey(b, &g, "peak_mem_used_mb");
			jnum(b, st->peak_used, 0);
			jkey(b, &g, "min_mem_avail_mb");
			jnum(b, st->min_avail, 0);
			jkey(b, &g, "min_disk_avail_gb");
			jnum(b, st->min_disk, 2);
			jkey(b, &g, "max_compilers");
			jnum(b, st->max_comp, 0);
			jkey(b, &g, "near_oom_samples");
			rm_buf_addf(b, "%ld", st->near_oom);
			if (s->cg_avail.known) {
				jkey(b, &g, "min_cg_mem_avail_mb");
				jnum(b, st->min_cg_avail, 0);
			}
			jkey(b, &g, "energy_j");
			jnum(b, st->energy_j, 1);
			rm_buf_addc(b, '}');
		}
	}
	rm_buf_adds(b, "]}");
}

static void json_proc(struct rm_buf *b, const struct report *r, const struct proc *p)
{
	int f = 1;

	rm_buf_addc(b, '{');
	jkey(b, &f, "pid");
	rm_buf_addf(b, "%d", p->pid);
	jkey(b, &f, "ppid");
	rm_buf_addf(b, "%d", p->ppid);
	jkey(b, &f, "comm");
	rm_buf_json(b, p->comm);
	jkey(b, &f, "peak_rss_kib");
	jnum(b, p->peak_kib, 0);
	jkey(b, &f, "peak_at_s");
	jnum(b, p->peak_at, 3);
	jkey(b, &f, "start_s");
	jnum(b, p->start_s, 3);
	jkey(b, &f, "end_s");
	jnum(b, p->end_s, 3);
	jkey(b, &f, "cpu_s");
	jnum(b, p->cpu_s, 2);
	jkey(b, &f, "exit");
	jexit(b, p->exit);
	jstage(b, &f, r, p->stage);
	jkey(b, &f, "unit");
	if (p->unit)
		rm_buf_json(b, p->unit);
	else
		rm_buf_adds(b, "null");
	jkey(b, &f, "cmd");
	rm_buf_json(b, p->cmd);
	rm_buf_addc(b, '}');
}

void print_json(struct rm_buf *b, const struct report *r, const struct opts *o)
{
	int f = 1;

	rm_buf_addc(b, '{');
	jkey(b, &f, "version");
	rm_buf_json(b, RM_VERSION);
	jkey(b, &f, "files");
	rm_buf_addc(b, '[');
	for (int i = 0; i < r->nfiles; i++) {
		char *s = sanitized(r->files[i], strlen(r->files[i]));
		if (i)
			rm_buf_addc(b, ',');
		rm_buf_json(b, s);
		free(s);
	}
	rm_buf_addc(b, ']');
	/* Rows the monitor could not write (a full disk), as it reported. */
	jkey(b, &f, "rows_lost");
	if (o->rows_lost >= 0)
		rm_buf_addf(b, "%ld", o->rows_lost);
	else
		rm_buf_adds(b, "null");
	jkey(b, &f, "rows_lost_from");
	if (o->rows_lost > 0 && o->rows_lost_from)
		rm_buf_json(b, o->rows_lost_from);
	else
		rm_buf_adds(b, "null");
	/* Rows whose stage came from the newest log, not the stage file. */
	jkey(b, &f, "stage_fallback_rows");
	if (o->stage_fallback >= 0)
		rm_buf_addf(b, "%ld", o->stage_fallback);
	else
		rm_buf_adds(b, "null");
	jkey(b, &f, "system");
	if (r->sys)
		json_sys(b, r, o);
	else
		rm_buf_adds(b, "null");

	jkey(b, &f, "job");
	if (!r->job.known) {
		rm_buf_adds(b, "null");
	} else {
		const struct job *j = &r->job;
		int g = 1;
		rm_buf_addc(b, '{');
		jkey(b, &g, "cmd");
		rm_buf_json(b, j->cmd);
		jkey(b, &g, "exit");
		jexit(b, j->exit);
		jkey(b, &g, "start_epoch");
		jnum(b, j->start_epoch, 3);
		jkey(b, &g, "end_epoch");
		jnum(b, j->end_epoch, 3);
		jkey(b, &g, "start");
		jiso(b, j->start_epoch);
		jkey(b, &g, "end");
		jiso(b, j->end_epoch);
		jkey(b, &g, "elapsed_s");
		jnum(b, j->elapsed, 3);
		jkey(b, &g, "procs");
		jnum(b, j->procs, 0);
		jkey(b, &g, "peak_rss_kib");
		jnum(b, j->peak_kib, 0);
		jkey(b, &g, "peak_at_s");
		jnum(b, j->peak_at, 3);
		jkey(b, &g, "max_proc_rss_kib");
		jnum(b, j->max_proc_kib, 0);
		jkey(b, &g, "max_proc_pid");
		{
			const struct proc *p = largest_row(r);
			if (p && p->peak_kib >= j->max_proc_kib)
				rm_buf_addf(b, "%d", p->pid);
			else
				rm_buf_adds(b, "null");
		}
		jkey(b, &g, "cgroup_peak_kib");
		jnum(b, j->cgroup_kib, 0);
		jkey(b, &g, "cgroup_gap");
		{
			char why[400];
			if (cgroup_gap(j, why, sizeof(why))) {
				int h = 1;
				rm_buf_addc(b, '{');
				jkey(b, &h, "peak_file_kib");
				jnum(b, j->peak_file_kib, 0);
				jkey(b, &h, "cgroup_anon_kib");
				jnum(b, j->cg_anon_kib, 0);
				jkey(b, &h, "cgroup_file_kib");
				jnum(b, j->cg_file_kib, 0);
				jkey(b, &h, "cgroup_kernel_kib");
				jnum(b, j->cg_kernel_kib, 0);
				jkey(b, &h, "text");
				rm_buf_json(b, why);
				rm_buf_addc(b, '}');
			} else {
				rm_buf_adds(b, "null");
			}
		}
		jkey(b, &g, "user_s");
		jnum(b, j->user_s, 2);
		jkey(b, &g, "sys_s");
		jnum(b, j->sys_s, 2);
		if (!isnan(j->mem_max_kib)) {
			jkey(b, &g, "mem_max_kib");
			jnum(b, j->mem_max_kib, 0);
			jkey(b, &g, "oom_kills");
			jnum(b, j->oom_kills, 0);
			jkey(b, &g, "oom_victim");
			if (j->victim[0])
				rm_buf_json(b, j->victim);
			else
				rm_buf_adds(b, "null");
		}
		rm_buf_addc(b, '}');
	}
	jkey(b, &f, "timeline");
	if (!r->tl.known) {
		rm_buf_adds(b, "null");
	} else {
		int g = 1;
		rm_buf_addc(b, '{');
		jkey(b, &g, "ticks");
		rm_buf_addf(b, "%ld", r->tl.rows);
		jkey(b, &g, "peak_rss_kib");
		jnum(b, r->tl.peak_kib, 0);
		jkey(b, &g, "peak_epoch");
		jnum(b, r->tl.peak_epoch, 3);
		jkey(b, &g, "peak_at_s");
		jnum(b, r->tl.peak_epoch - r->tl.off, 3);
		jkey(b, &g, "max_procs");
		jnum(b, r->tl.max_procs, 0);
		jkey(b, &g, "points");
		rm_buf_addc(b, '[');
		for (size_t i = 0; i < r->tl.npts; i++) {
			const struct tlpoint *t = &r->tl.pts[i];
			int h = 1;
			rm_buf_adds(b, i ? ",{" : "{");
			jkey(b, &h, "epoch");
			jnum(b, t->epoch, 3);
			jkey(b, &h, "iso");
			jiso(b, t->epoch);
			jkey(b, &h, "elapsed_s");
			jnum(b, t->elapsed, 3);
			jkey(b, &h, "procs");
			jnum(b, t->procs, 0);
			jkey(b, &h, "rss_kib");
			jnum(b, t->rss_kib, 0);
			jkey(b, &h, "cpu_pct");
			jnum(b, t->cpu_pct, 1);
			rm_buf_addc(b, '}');
		}
		rm_buf_adds(b, "]}");
	}

	jkey(b, &f, "processes");
	if (!r->nexitlogs) {
		rm_buf_adds(b, "null");
	} else {
		int g = 1;
		size_t shown = 0, listed = 0;
		double cpu = 0;
		for (size_t i = 0; i < r->nproc; i++) {
			shown += r->procs[i].shown;
			if (!isnan(r->procs[i].cpu_s))
				cpu += r->procs[i].cpu_s;
		}
		rm_buf_addc(b, '{');
		jkey(b, &g, "count");
		rm_buf_addf(b, "%zu", r->nproc);
		jkey(b, &g, "matching");
		rm_buf_addf(b, "%zu", shown);
		jkey(b, &g, "cpu_s");
		jnum(b, cpu, 2);
		jkey(b, &g, "largest_peak_rss_kib");
		jnum(b, r->nproc ? r->order[0]->peak_kib : NAN, 0);
		jkey(b, &g, "top");
		rm_buf_addc(b, '[');
		/* Every process unless --top says otherwise, as memwatch's. */
		size_t max = o->top_set ? (size_t)o->top : r->nproc;
		for (size_t i = 0; i < r->nproc && listed < max; i++) {
			if (!r->order[i]->shown)
				continue;
			if (listed++)
				rm_buf_addc(b, ',');
			json_proc(b, r, r->order[i]);
		}
		rm_buf_adds(b, "]}");
	}
	jkey(b, &f, "filter");
	struct filt fl;
	if (!r->nexitlogs || !filtered(r, o, &fl)) {
		rm_buf_adds(b, "null");
	} else {
		int g = 1;
		rm_buf_addc(b, '{');
		jkey(b, &g, "include");
		if (o->has_inc)
			rm_buf_json(b, o->inc_pat ? o->inc_pat : "");
		else
			rm_buf_adds(b, "null");
		jkey(b, &g, "exclude");
		if (o->has_exc)
			rm_buf_json(b, o->exc_pat ? o->exc_pat : "");
		else
			rm_buf_adds(b, "null");
		jkey(b, &g, "matched_count");
		rm_buf_addf(b, "%zu", fl.shown);
		jkey(b, &g, "excluded_count");
		rm_buf_addf(b, "%zu", fl.hidden);
		jkey(b, &g, "excluded_peak_rss_kib_sum");
		jnum(b, fl.hidden_kib, 0);
		jkey(b, &g, "warning");
		if (!fl.shown && r->nproc) {
			struct rm_buf w = { 0 };
			filter_warning(&w, r, o, &fl);
			rm_buf_addc(&w, '\0');
			rm_buf_json(b, w.oom ? "" : w.p);
			rm_buf_free(&w);
		} else {
			rm_buf_adds(b, "null");
		}
		rm_buf_addc(b, '}');
	}
	jkey(b, &f, "groups");
	rm_buf_addc(b, '[');
	for (size_t i = 0; i < r->ngroups; i++) {
		rm_buf_adds(b, i ? ",{\"comm\":" : "{\"comm\":");
		rm_buf_json(b, r->groups[i].comm);
		rm_buf_addf(b, ",\"count\":%ld,\"peak_rss_kib\":", r->groups[i].count);
		jnum(b, r->groups[i].peak_kib, 0);
		rm_buf_adds(b, ",\"cpu_s\":");
		jnum(b, r->groups[i].cpu_s, 2);
		rm_buf_addc(b, '}');
	}
	rm_buf_addc(b, ']');
	jkey(b, &f, "compile_units");
	rm_buf_addc(b, '[');
	for (size_t i = 0; i < r->nunits && i < (size_t)o->top; i++) {
		int g = 1;
		if (i)
			rm_buf_addc(b, ',');
		rm_buf_addc(b, '{');
		jkey(b, &g, "unit");
		rm_buf_json(b, r->units[i].name);
		jkey(b, &g, "comm");
		rm_buf_json(b, r->units[i].comm);
		jkey(b, &g, "peak_rss_kib");
		jnum(b, r->units[i].peak_kib, 0);
		jkey(b, &g, "count");
		rm_buf_addf(b, "%d", r->units[i].count);
		jstage(b, &g, r, r->units[i].stage);
		rm_buf_addc(b, '}');
	}
	rm_buf_addc(b, ']');
	jkey(b, &f, "memory_per_job");
	rm_buf_addc(b, '[');
	for (size_t i = 0; i < r->nperjob; i++) {
		const struct perjob *pj = &r->perjob[i];
		int g = 1;
		if (i)
			rm_buf_addc(b, ',');
		rm_buf_addc(b, '{');
		jstage(b, &g, r, pj->stage);
		jkey(b, &g, "compilers");
		rm_buf_addf(b, "%zu", pj->n);
		jkey(b, &g, "p95_rss_kib");
		jnum(b, pj->p95_kib, 0);
		jkey(b, &g, "max_rss_kib");
		jnum(b, pj->max_kib, 0);
		jkey(b, &g, "suggest_mb_per_job");
		jnum(b, pj->suggest_mb, 0);
		jkey(b, &g, "safe_jobs");
		jnum(b, pj->safe_j > 0 ? (double)safe_jobs(r, pj) : NAN, 0);
		jkey(b, &g, "memory_jobs");
		jnum(b, pj->safe_j > 0 ? (double)pj->safe_j : NAN, 0);
		jkey(b, &g, "bound_by");
		if (pj->safe_j > 0)
			rm_buf_json(b, jobs_bound(r, pj));
		else
			rm_buf_adds(b, "null");
		rm_buf_addc(b, '}');
	}
	rm_buf_addc(b, ']');
	json_scope(b, &f, r, o);
	jkey(b, &f, "verdicts");
	rm_buf_addc(b, '[');
	for (int i = 0; i < r->nverdicts; i++) {
		rm_buf_adds(b, i ? ",{\"kind\":" : "{\"kind\":");
		rm_buf_json(b, r->verdicts[i].kind);
		rm_buf_adds(b, ",\"text\":");
		rm_buf_json(b, r->verdicts[i].text);
		rm_buf_addc(b, '}');
	}
	rm_buf_adds(b, "]}\n");
}
