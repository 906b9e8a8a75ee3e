/*
 * render_text.c: a report as text, coloured only on a terminal.  It
 * formats the model (report.h) and nothing else: every string in it was
 * sanitized when it was read.
 *
 * This file is long because it writes every section of the text report
 * once, in the order they are printed (print_text at the end), the OOM
 * kills with each victim in full among them.
 */
#include <stdio.h>
#include <string.h>

#include "containers.h"
#include "fmt.h"
#include "kmsg.h"
#include "oom.h"
#include "render_text.h"
#include "scopeout.h"
#include "sys.h"
#include "verdict.h"

/* Per stage, each container of the build that ran in it and its limit. */
static void text_ctr_limits(struct rm_buf *b, const struct report *r)
{
	const struct ctrs *cs = &r->ctrs;

	if (!cs->ntied)
		return;
	rm_buf_adds(b, "  containers of the build by stage, with their memory limits:\n");
	for (int i = 0; i < r->nstages; i++) {
		int n = 0;
		for (size_t j = 0; j < cs->n; j++) {
			const struct ctr *c = &cs->v[j];
			char nm[200], lim[400];
			int in = 0;
			for (int k = 0; k < c->nst && !in; k++)
				in = c->st[k].stage == i;
			if (!c->tied[0] || !in)
				continue;
			fmt_ctr_name(c, nm, sizeof(nm));
			fmt_ctr_limit(r, c, lim, sizeof(lim));
			if (!n++)
				rm_buf_addf(b, "    %-8.32s %s %s", r->stages[i].name[0] ? r->stages[i].name : "(none)",
					    nm, lim);
			else
				rm_buf_addf(b, "; %s %s", nm, lim);
		}
		if (n)
			rm_buf_adds(b, "\n");
	}
}

/* The run: file, times, notes on what was lost or skipped, the limits. */
static void text_run(struct rm_buf *b, const struct report *r, const struct opts *o,
		     const struct sty *c)
{
	const struct sys *s = r->sys;
	char t0[40], t1[40], d[40];
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
		rm_buf_addf(b, "; RAM %.0f MiB%s", r->ram_mb, in_containers(r) ? " (the host's)" : "");
	rm_buf_addf(b, "; %d cores%s\n", r->cores, s->cores > 0 && o->cores <= 0 ? " (effective)" : "");
	text_ctr_limits(b, r);
	rm_buf_adds(b, "\n");
}

/* "  LABEL  VALUE  at +CLOCK  stage S": a peak's line, without its end. */
static void peak_line(struct rm_buf *b, const struct report *r, const char *label, const char *v,
		      double epoch, int stage)
{
	char clk[32];

	fmt_clock(epoch - r->sys->first_epoch, clk, sizeof(clk));
	rm_buf_addf(b, "  %-*s %-24s at +%s", host_scoped(r) ? 27 : 22, label, v, clk);
	if (stage_name(r, stage)[0])
		rm_buf_addf(b, "  stage %s", stage_name(r, stage));
	rm_buf_adds(b, "\n");
}

static void text_peaks(struct rm_buf *b, const struct report *r, const struct sty *c)
{
	const struct sys *s = r->sys;
	char v[80];
	int lw = host_scoped(r) ? 27 : 22;   /* "min memory available (host)" */

	rm_buf_addf(b, "%sPeaks%s\n", c->b, c->off);
	for (int k = 0; k < PK_N; k++) {
		const struct peak *p = &s->pk[k];
		char label[40];
		if (!peak_applies(s, k))
			continue;
		snprintf(label, sizeof(label), "%s%s", peak_label(k), host_peak(r, k) ? " (host)" : "");
		if (!p->known) {
			rm_buf_addf(b, "  %-*s (no readings)\n", lw, label);
			continue;
		}
		fmt_val(k, p->v, p->aux, v, sizeof(v));
		if (k == PK_SWAP && p->v == 0) {
			rm_buf_addf(b, "  %-*s %s\n", lw, label, "0 MiB (never used)");
			continue;
		}
		peak_line(b, r, label, v, p->epoch, p->stage);
		if (p->ctx[0])
			rm_buf_addf(b, "  %-*s context: %s\n", lw, "", p->ctx);
	}
	/* The build's cgroup: its lowest available memory, beside the
	 * host's; nothing without a limit (then the host's is the build's). */
	if (s->cg_avail.known) {
		snprintf(v, sizeof(v), "%.0f MiB of %.0f MiB", s->cg_avail.v, s->cg_avail.aux);
		peak_line(b, r, "min available (cgroup)", v, s->cg_avail.epoch, s->cg_avail.stage);
	}
	/* A limit changed during the run: each change, when (the text's
	 * "cgroup limit" above is the tightest). */
	for (int i = 0; i < s->nlimch; i++) {
		snprintf(v, sizeof(v), "%.0f -> %.0f MiB", s->limch[i].from, s->limch[i].to);
		peak_line(b, r, "cgroup limit changed", v, s->limch[i].epoch, stage_at(r, s->limch[i].epoch));
	}
	/* The build's container with the least left by its own limit. */
	if (r->ctrs.bind) {
		const struct ctr *k = r->ctrs.bind;
		char nm[200];
		snprintf(v, sizeof(v), "%.0f MiB of %.0f MiB", k->min_avail_kib / 1024, k->min_avail_limit / 1024);
		peak_line(b, r, "min available (container)", v, k->min_avail_epoch, k->min_avail_stage);
		fmt_ctr_name(k, nm, sizeof(nm));
		rm_buf_addf(b, "  %-*s container %s\n", lw, "", nm);
	}
	rm_buf_adds(b, "\n");
}

/* Near-OOM within each container of the build, by its own limit. */
static void text_ctr_near(struct rm_buf *b, const struct report *r, const struct opts *o)
{
	const struct ctrs *cs = &r->ctrs;
	char clk[32], lim[40], thr[40];
	long judged = 0;

	for (size_t i = 0; i < cs->n; i++) {
		const struct ctr *c = &cs->v[i];
		char nm[200];
		if (!c->tied[0] || isnan(c->min_avail_kib))
			continue;
		judged++;
		if (!c->near)
			continue;
		fmt_ctr_name(c, nm, sizeof(nm));
		fmt_mib(c->min_avail_limit / 1024, lim, sizeof(lim));
		fmt_mib(ctr_near_threshold(o, c->min_avail_limit) / 1024, thr, sizeof(thr));
		fmt_clock(c->near_first - r->sys->first_epoch, clk, sizeof(clk));
		rm_buf_addf(b, "  within container %s: %ld reading%s below %s (its limit %s), first at +%s", nm,
			    c->near, c->near == 1 ? "" : "s", thr, lim, clk);
		if (stage_name(r, c->near_first_stage)[0])
			rm_buf_addf(b, " in stage %s", stage_name(r, c->near_first_stage));
		rm_buf_adds(b, "\n");
	}
	if (judged && !r->ctrs.bind->near)
		rm_buf_addf(b, "  within the build's %ld container%s with a limit: 0 readings below the smaller of %.0f MiB and 15 %% of its limit\n",
			    judged, judged == 1 ? "" : "s", o->near_oom_mb);
}

/* Near-OOM and low-disk runs: samples, the first, the longest. */
static void text_runs(struct rm_buf *b, const struct report *r, const struct opts *o)
{
	const struct sys *s = r->sys;
	const struct runstat *rs[2] = { &s->near, &s->low };
	char clk[32], d[40], cgt[80] = "";

	for (int i = 0; i < 2; i++) {
		if (s->col[i == 0 ? SC_AVAIL : SC_DISK] < 0)
			continue;
		if (i == 0 && s->cg_avail.known)
			snprintf(cgt, sizeof(cgt), ", or within the cgroup below %.0f MiB",
				 fmin(o->near_oom_mb, 0.15 * s->cg_limit_min));
		if (i == 0)
			rm_buf_addf(b, "Near-OOM (available below %.0f MiB%s): ", o->near_oom_mb, cgt);
		else
			rm_buf_addf(b, "Low disk (available below %g GiB): ", o->low_disk_gb);
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
		if (i == 0)
			text_ctr_near(b, r, o);
	}
}

/* How victim k was tied to the build, where not by its PID. */
static void text_victim_tie(struct rm_buf *b, const struct oomev *e, int k)
{
	if (e->vtie[k] == VT_CGROUP) {
		rm_buf_adds(b, "; the build's: its cgroup is the run's (the run's PIDs are a PID namespace's)");
		if (e->vrow[k])
			rm_buf_addf(b, "; its row inferred by command, cgroup and end time: PID %d there",
				    e->vrow[k]);
	} else if (e->vtie[k] == VT_EXIT) {
		rm_buf_adds(b, ", inferred: the build's cgroup counted the kill (no kernel log here) "
			    "and this row ended by SIGKILL then");
	}
}

/* The first of e's victims that is the build's, or -1. */
static int first_build_victim(const struct oomev *e)
{
	for (int k = 0; k < e->nv; k++)
		if (e->vscope[k] != 0)
			return k;
	return -1;
}

/* Victim k in full: unit, lower-bound peak, its cgroup then, the others
 * of that cgroup with their memory at the kill. */
static void text_oom_victim(struct rm_buf *b, const struct report *r, const struct oomev *e, int k)
{
	const struct oomvictim *x = &e->vx[k];
	char who[600], kib[40], lim[40], clk[32];

	oom_who(e, k, who, sizeof(who));
	if (x->from_row)
		fmt_clock_tenths(x->epoch - r->sys->first_epoch, clk, sizeof(clk));
	else
		fmt_clock(x->epoch - r->sys->first_epoch, clk, sizeof(clk));
	rm_buf_addf(b, "    %s: killed at +%s (%s)", who, clk,
		    !x->from_row ? "the sample that saw the kill"
		    : strcmp(x->row->source, "sampled") == 0 ? "its row's end, sampled: when it was seen gone"
		    : "its exit");
	if (x->row && !isnan(x->row->peak_kib)) {
		fmt_kib(x->row->peak_kib, kib, sizeof(kib));
		rm_buf_addf(b, ", at least %s when killed", kib);
	}
	rm_buf_adds(b, "\n");
	if (e->vcons[k] == RM_OOM_MEMCG && (!isnan(x->usage_kib) || !isnan(x->limit_kib))) {
		fmt_kib(x->usage_kib, kib, sizeof(kib));
		fmt_mib(x->limit_kib / 1024.0, lim, sizeof(lim));
		rm_buf_addf(b, "    cgroup %s at the kill: ", e->vmemcg[k][0] ? e->vmemcg[k] : "(not logged)");
		if (!isnan(x->usage_kib))
			rm_buf_addf(b, "usage %s, ", kib);
		rm_buf_addf(b, "limit %s%s\n", lim, isnan(x->usage_kib) ? " (the sample's)" : "");
	}
	if (x->nbeside) {
		rm_buf_addf(b, "    beside it (%s):", x->dump ? "the kernel's task dump, memory at the kill"
			    : "no task dump: alive then, their peaks");
		for (int i = 0; i < x->nbeside && i < 8; i++) {
			const struct oomtask *t = &x->beside[i];
			fmt_kib(t->kib, kib, sizeof(kib));
			if (t->row && t->row->unit)
				rm_buf_addf(b, "%s `%s` (%s, PID %d) %s", i ? ";" : "", t->row->unit, t->name,
					    t->pid, kib);
			else
				rm_buf_addf(b, "%s %s (PID %d) %s", i ? ";" : "", t->name, t->pid, kib);
		}
		if (x->nbeside > 8)
			rm_buf_addf(b, "; %d more", x->nbeside - 8);
		rm_buf_adds(b, "\n");
	} else if (x->dump) {
		rm_buf_adds(b, "    beside it: nothing else in the kernel's task dump\n");
	}
}

/* One OOM kill of the build: when, in which stage, whom and why. */
static void text_oom_event(struct rm_buf *b, const struct report *r, const struct oomev *e)
{
	const struct sys *s = r->sys;
	long kills = e->kills - e->else_kills;
	char clk[32];
	int named = 0, fv = first_build_victim(e);
	const struct oomvictim *x = fv >= 0 ? &e->vx[fv] : NULL;
	int stage = x ? x->stage : e->stage;
	const char *ctx = x ? x->ctx : e->ctx;

	fmt_clock((x ? x->epoch : e->epoch) - s->first_epoch, clk, sizeof(clk));
	rm_buf_addf(b, "  at +%s", clk);
	if (stage_name(r, stage)[0])
		rm_buf_addf(b, "  stage %s", stage_name(r, stage));
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
			if (e->vctr[k] >= 0) {
				char nm[200];
				fmt_ctr_name(&r->ctrs.v[e->vctr[k]], nm, sizeof(nm));
				rm_buf_addf(b, " (container %s)", nm);
			}
			text_victim_tie(b, e, k);
		}
	} else if (s->kmsg_state < 0) {
		rm_buf_addf(b, ", victim unknown (kernel log: %s)", kmsg_why(s->kmsg_errno));
		if (e->cg_kills > 0)
			rm_buf_adds(b, "; counted by the build's cgroup's own oom_kill");
	} else {
		rm_buf_adds(b, ", victim not in the kernel log");
	}
	rm_buf_adds(b, "\n");
	for (int k = 0; k < e->nv; k++)
		if (e->vscope[k] != 0)
			text_oom_victim(b, r, e, k);
	if (ctx && ctx[0]) {
		char age[40];
		fmt_dur(x ? x->ctx_age : NAN, age, sizeof(age));
		if (x && !isnan(x->ctx_age))
			rm_buf_addf(b, "    context: %s (read %s before the kill)\n", ctx, age);
		else
			rm_buf_addf(b, "    context: %s\n", ctx);
	}
}

/* The containers' own oom_kill counts, where they rose. */
static void text_ctr_ooms(struct rm_buf *b, const struct report *r)
{
	const struct ctrs *cs = &r->ctrs;

	for (size_t i = 0; i < cs->n; i++) {
		const struct ctr *c = &cs->v[i];
		char nm[200], ooms[200];
		if (!c->oom_kills || (!c->tied[0] && cs->ntied))
			continue;
		fmt_ctr_name(c, nm, sizeof(nm));
		fmt_ctr_ooms(r, c, ooms, sizeof(ooms));
		rm_buf_addf(b, "  %s %s: its oom_kill count says %s\n", c->tied[0] ? "the build's container" :
			    "container (not tied to the build)", nm, ooms);
	}
}

static void text_ooms(struct rm_buf *b, const struct report *r, const struct sty *c)
{
	const struct sys *s = r->sys;
	long build;

	const struct ctr *first;
	long ck = oom_ctr_kills(r, 1, &first);

	if (!s->has_oom && s->col[SC_AVAIL] < 0 && s->col[SC_USED] < 0 && !ck)
		return; /* not a memory CSV at all (rm-energy's): nothing to say */
	build = s->has_oom ? oom_build_kills(s) : 0;
	if (build <= 0 && ck > 0) {
		/* The host's count saw none of them: the containers' own did. */
		rm_buf_addf(b, "OOM kills: %s%ld%s (by the oom_kill counts of the build's containers)", c->red,
			    ck, c->off);
		if (s->oom_else > 0)
			rm_buf_addf(b, " (and %ld elsewhere on this host)", s->oom_else);
		rm_buf_adds(b, "\n");
		text_ctr_ooms(b, r);
		return;
	}
	if (!s->has_oom) {
		rm_buf_adds(b, "OOM kills: not recorded (no oom_kills column)\n");
		return;
	}
	rm_buf_addf(b, "OOM kills: %s%ld%s", build ? c->red : "", build, build ? c->off : "");
	/* Other programs' kills are not the build's: counted here, listed
	 * under "Elsewhere on this host". */
	if (s->oom_else > 0)
		rm_buf_addf(b, " (and %ld elsewhere on this host)", s->oom_else);
	rm_buf_adds(b, "\n");
	for (size_t i = 0; i < s->nev; i++)
		if (oom_event_is_build(&s->ev[i]))
			text_oom_event(b, r, &s->ev[i]);
	text_ctr_ooms(b, r);
}

/* The disk: first and last, the fitted rate, a time to full. */
static void text_disk(struct rm_buf *b, const struct sys *s)
{
	struct disk_fit df;
	double h, h_lo, h_hi;
	char span[40], d[40], a[40], z[40];

	if (isnan(s->disk_first))
		return;
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
			fmt_dur(h * 3600, d, sizeof(d));
			fmt_dur(h_lo * 3600, a, sizeof(a));
			fmt_dur(h_hi * 3600, z, sizeof(z));
			rm_buf_addf(b, "; full in %s (%s to %s) at that rate", d, a, z);
		}
	}
	rm_buf_adds(b, "\n");
}

static void text_energy(struct rm_buf *b, const struct report *r)
{
	const struct sys *s = r->sys;
	const struct peak *p = &s->pk[PK_PKG_W];
	char clk[32];

	if (!p->known)
		return;
	fmt_clock(p->epoch - s->first_epoch, clk, sizeof(clk));
	rm_buf_addf(b, "Energy: %.0f J over %.0f s, mean %.1f W, peak %.1f W at +%s",
		    s->energy_j, s->energy_s, s->energy_s > 0 ? s->energy_j / s->energy_s : NAN, p->v, clk);
	if (stage_name(r, p->stage)[0])
		rm_buf_addf(b, " in stage %s", stage_name(r, p->stage));
	rm_buf_adds(b, "\n");
}

/* "-" for a value never read, as in the Markdown table. */
static void cell(char *buf, size_t size, int prec, double v)
{
	if (isnan(v))
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "%.*f", prec, v);
}

static void text_stages(struct rm_buf *b, const struct report *r, const struct sty *c)
{
	const struct sys *s = r->sys;
	int w = 5, energy = s->pk[PK_PKG_W].known, cg = s->cg_avail.known, ctr = r->ctrs.bind != NULL;
	char d[40], pu[16], ma[16], md[16], mc[16];

	rm_buf_addf(b, "%sStages%s\n", c->b, c->off);
	for (int i = 0; i < r->nstages; i++) {
		int l = (int)strlen(r->stages[i].name[0] ? r->stages[i].name : "(none)");
		if (r->stages[i].samples && l > w)
			w = l > 32 ? 32 : l;
	}
	/* compilers: the build's own at once, from the exit log's times,
	 * where there is one; the sampler's host-wide count beside it. */
	rm_buf_addf(b, "  %-*s %10s %8s %10s %10s %9s %9s%s %8s%s%s%s\n", w, "stage", "duration",
		    "samples", "peak used", "min avail", "min disk", "compilers",
		    r->has_build_comp ? " host comp" : "", "near-OOM",
		    energy ? "  energy J" : "", cg ? "  cg avail" : "", ctr ? "  ctr avail" : "");
	for (int i = 0; i < r->nstages; i++) {
		const struct stage *st = &r->stages[i];
		if (!st->samples)
			continue;
		fmt_clock(st->duration, d, sizeof(d));
		cell(pu, sizeof(pu), 0, st->peak_used);
		cell(ma, sizeof(ma), 0, st->min_avail);
		cell(md, sizeof(md), 2, st->min_disk);
		cell(mc, sizeof(mc), 0, r->has_build_comp ? st->build_comp : st->max_comp);
		rm_buf_addf(b, "  %-*.*s %10s %8ld %10s %10s %9s %9s", w, 32,
			    st->name[0] ? st->name : "(none)", d, st->samples, pu, ma, md, mc);
		if (r->has_build_comp) {
			cell(mc, sizeof(mc), 0, st->max_comp);
			rm_buf_addf(b, " %9s", mc);
		}
		rm_buf_addf(b, " %8ld", st->near_oom);
		if (energy)
			rm_buf_addf(b, "  %8.0f", isnan(st->energy_j) ? 0 : st->energy_j);
		if (cg && isnan(st->min_cg_avail))
			rm_buf_addf(b, "  %8s", "-");
		else if (cg)
			rm_buf_addf(b, "  %8.0f", st->min_cg_avail);
		if (ctr) {
			double a = ctr_stage_avail(r, i);
			if (isnan(a))
				rm_buf_addf(b, "  %9s", "-");
			else
				rm_buf_addf(b, "  %9.0f", a / 1024);
		}
		rm_buf_adds(b, "\n");
	}
	if (host_scoped(r))
		rm_buf_adds(b, "  (memory in MiB, disk in GiB; peak used and min avail are the host's");
	else
		rm_buf_adds(b, "  (memory in MiB, disk in GiB)\n\n");
	if (host_scoped(r))
		rm_buf_adds(b, ctr ? ", ctr avail the least any of the stage's containers had left by its limit)\n\n" : ")\n\n");
}

/* One container: who it is, where it ran, its limit, peak and kills. */
static void text_ctr(struct rm_buf *b, const struct report *r, const struct ctr *k)
{
	char nm[200], st[400], lim[400], pk[120], ooms[200];

	fmt_ctr_name(k, nm, sizeof(nm));
	fmt_ctr_stages(r, k, st, sizeof(st));
	fmt_ctr_limit(r, k, lim, sizeof(lim));
	fmt_ctr_peak(r, k, pk, sizeof(pk));
	fmt_ctr_ooms(r, k, ooms, sizeof(ooms));
	rm_buf_addf(b, "  %s  stage %s", nm, st);
	if (k->tied[0])
		rm_buf_addf(b, "  tied by %s", k->tied);
	rm_buf_addf(b, "  cgroup %s\n", k->cgroup[0] ? k->cgroup : "(not read)");
	rm_buf_addf(b, "    limit %s; peak %s; OOM kills %s\n", lim, pk, ooms);
}

/*
 * The containers of the companion file: the build's (tied), or, when it
 * ties none, those that ran on the host during the run.
 */
static void text_containers(struct rm_buf *b, const struct report *r, const struct sty *c)
{
	const struct ctrs *cs = &r->ctrs;
	long untied = (long)cs->n - cs->ntied;

	if (cs->ntied) {
		rm_buf_addf(b, "%sContainers%s of the build: %ld\n", c->b, c->off, cs->ntied);
		for (size_t i = 0; i < cs->n; i++)
			if (cs->v[i].tied[0])
				text_ctr(b, r, &cs->v[i]);
		if (untied > 0)
			rm_buf_addf(b, "  (and %ld container%s on this host not tied to the build)\n",
				    untied, untied == 1 ? "" : "s");
	} else if (untied > 0) {
		rm_buf_addf(b, "%sContainers during the build (not tied to it)%s: %ld\n", c->b, c->off,
			    untied);
		if (cs->clients)
			rm_buf_addf(b, "  the build ran %ld container client%s whose containers could not be tied to it; "
				    "--label rm-tools.run=$RUN_ID or --cgroup-parent PARENT on each docker run ties them\n",
				    cs->clients, cs->clients == 1 ? "" : "s");
		for (size_t i = 0; i < cs->n; i++)
			text_ctr(b, r, &cs->v[i]);
	} else {
		rm_buf_addf(b, "%sContainers%s: none ran during the build\n", c->b, c->off);
	}
	rm_buf_adds(b, "\n");
}

static void text_sys(struct rm_buf *b, const struct report *r, const struct opts *o,
		     const struct sty *c)
{
	text_run(b, r, o, c);
	text_peaks(b, r, c);
	text_runs(b, r, o);
	text_ooms(b, r, c);
	text_disk(b, r->sys);
	text_energy(b, r);
	rm_buf_adds(b, "\n");
	text_stages(b, r, c);
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
		rm_buf_addf(b, ", %.0f process%s", j->procs, j->procs == 1 ? "" : "es");
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
		const struct proc *p = largest_ended_row(r), *big = largest_row(r);
		rm_buf_addf(b, "  largest single process (exact)   %.1f MiB", mib(j->max_proc_kib));
		if (p && p->peak_kib >= j->max_proc_kib)
			rm_buf_addf(b, " (%s, PID %d)", p->comm, p->pid);
		else if (p && !isnan(p->peak_kib))
			rm_buf_addf(b, " (the kernel's maxrss over the tree, which names no process; "
				    "the largest row, %s PID %d, was sampled at %.1f MiB)",
				    p->comm, p->pid, mib(p->peak_kib));
		/* A daemon left running is larger: its own figure, beside. */
		if (big && big != p && proc_running(big) && big->peak_kib > j->max_proc_kib)
			rm_buf_addf(b, "; %s PID %d, still running after CMD ended, was sampled at %.1f MiB",
				    big->comm, big->pid, mib(big->peak_kib));
		rm_buf_adds(b, "\n");
	}
	if (!isnan(j->mem_max_kib)) {
		char line[800];
		budget_line(r, line, sizeof(line));
		rm_buf_addf(b, "  memory budget (--memory-max)     %s\n", line);
	}
	/* A survivor of an --exec job: a daemon it left behind. */
	for (size_t i = 0; i < r->nproc; i++)
		if (proc_running(&r->procs[i]))
			rm_buf_addf(b, "  still running after CMD ended: %d %s\n",
				    r->procs[i].pid, r->procs[i].comm);
	rm_buf_adds(b, "\n");
}

/* rm-tree --timeline's line: its ticks, the peak tree total. */
static void text_timeline(struct rm_buf *b, const struct report *r, const struct sty *c)
{
	int quick;

	if (r->tl.known && !isnan(r->tl.peak_kib)) {
		rm_buf_addf(b, "%sTimeline%s: %ld tick%s, peak tree total %.1f MiB at +%.2f s",
			    c->b, c->off, r->tl.rows, r->tl.rows == 1 ? "" : "s", mib(r->tl.peak_kib),
			    isnan(r->tl.peak_elapsed) ? r->tl.peak_epoch - r->tl.off : r->tl.peak_elapsed);
		if (!isnan(r->tl.max_procs))
			rm_buf_addf(b, ", up to %.0f process%s", r->tl.max_procs,
				    r->tl.max_procs == 1 ? "" : "es");
		rm_buf_adds(b, "\n");
	}
	/* A job quicker than the interval: its one tick may have seen
	 * nothing (0.0 MiB, 0 processes), or there was none: no measurement. */
	quick = r->tl.given && r->tl.rows < 2 && r->job.known && !isnan(r->job.max_proc_kib);
	if (quick)
		rm_buf_adds(b, "  (the job ended before a second tick, so the sampled total says "
			    "little: a shorter -i samples sooner; the exact largest process "
			    "above does not depend on it)\n");
	if ((r->tl.known && !isnan(r->tl.peak_kib)) || quick)
		rm_buf_adds(b, "\n");
}

static void text_procs(struct rm_buf *b, const struct report *r, const struct opts *o,
		       const struct sty *c)
{
	size_t shown = r->nshown, listed = 0;
	double cpu = r->cpu_all;

	text_timeline(b, r, c);
	if (!r->nexitlogs)
		return;
	rm_buf_addf(b, "%sProcesses%s: %zu, %.2f s CPU in all", c->b, c->off, r->nrows, cpu);
	if (r->nproc && !isnan(r->order[0]->peak_kib))
		rm_buf_addf(b, ", largest %.1f MiB (%s)", mib(r->order[0]->peak_kib), r->order[0]->comm);
	if (shown != r->nrows)
		rm_buf_addf(b, "; %zu match the filters", shown);
	rm_buf_adds(b, "\n");
	emulated_note(b, r, "  ");
	struct filt fl;
	if (filtered(r, o, &fl)) {
		rm_buf_adds(b, "  filters: ");
		filter_words(b, o);
		rm_buf_addf(b, "; %zu of %zu processes match; the %zu left out peaked at %.1f MiB "
			    "together (summed per process; the totals above count them)\n",
			    fl.shown, r->nrows, fl.hidden, mib(fl.hidden_kib));
		if (!fl.shown && r->nrows) {
			rm_buf_addf(b, "  %swarning%s: ", c->red, c->off);
			filter_warning(b, r, o, &fl);
			rm_buf_adds(b, "\n");
		}
	}
	if (shown) {
		rm_buf_addf(b, "  %7s %10s %10s %8s %6s  %-15s %s\n", "PID", "peak MiB", "at s",
			    "cpu s", "exit", "comm", "unit or cmd");
		const struct proc *p;
		struct proc tmp;
		size_t it = 0;
		while (listed < (size_t)o->top && (p = listed_next(r, &it, &tmp))) {
			char pk[16], at[16], cs[16];
			listed++;
			snprintf(pk, sizeof(pk), isnan(p->peak_kib) ? "-" : "%.1f", mib(p->peak_kib));
			snprintf(at, sizeof(at), isnan(p->peak_at) ? "-" : "%.2f", p->peak_at);
			snprintf(cs, sizeof(cs), isnan(p->cpu_s) ? "-" : "%.2f", p->cpu_s);
			rm_buf_addf(b, "  %7d %10s %10s %8s %6s  %-15s %.100s%s\n", p->pid, pk, at, cs,
				    p->exit[0] ? p->exit : "-", p->comm, p->unit ? p->unit : p->rcmd,
				    emu_mark(p->emulated));
			out_flush(b, o);
		}
		if (listed < shown)
			rm_buf_addf(b, "  ... %zu more (--top N, --csv FILE)\n", shown - listed);
	}
	if (r->ngroups) {
		rm_buf_addf(b, "\n%sBy command%s\n  %-15s %6s %16s %10s\n", c->b, c->off, "comm",
			    "count", "largest peak MiB", "total cpu s");
		for (size_t i = 0; i < r->ngroups && i < (size_t)o->top; i++)
			rm_buf_addf(b, "  %-15s %6ld %16.1f %10.2f%s\n", r->groups[i].comm,
				    r->groups[i].count, mib(r->groups[i].peak_kib), r->groups[i].cpu_s,
				    emu_mark(r->groups[i].emulated));
	}
	rm_buf_adds(b, "\n");
}

/* What ram_mb is: the host's RAM, a cgroup's limit or rm-run's budget. */
static const char *ram_word(const struct report *r)
{
	return r->ram_budget ? "memory budget (--memory-max)" : isnan(r->host_ram_mb) ? "RAM" : "cgroup limit";
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
			rm_buf_adds(b, emu_mark(u->emulated));
			rm_buf_adds(b, "\n");
		}
		rm_buf_adds(b, "\n");
	}
	if (r->nperjob) {
		rm_buf_addf(b, "%sMemory per compile job%s (p95 of compiler peaks per stage", c->b, c->off);
		if (r->ctrs.bind)
			rm_buf_addf(b, "; -j for the memory limit of the stage's container, where it ran in one, else %.0f MiB %s; %d cores",
				    r->ram_mb, ram_word(r), r->cores);
		else if (!isnan(r->ram_mb))
			rm_buf_addf(b, "; -j for %.0f MiB %s, %d cores", r->ram_mb, ram_word(r), r->cores);
		rm_buf_adds(b, ")\n");
		rm_buf_addf(b, "  %-16s %9s %9s %9s %12s %8s  %s\n", "stage", "compilers", "p95 MiB",
			    "max MiB", "per job MiB", "safe -j", "bound by");
		for (size_t i = 0; i < r->nperjob; i++) {
			const struct perjob *pj = &r->perjob[i];
			const char *sn = stage_name(r, pj->stage);
			rm_buf_addf(b, "  %-16.32s %9zu %9.1f %9.1f %12.0f ", sn[0] ? sn : r->sys ? "(none)" : "(all)", pj->n,
				    mib(pj->p95_kib), mib(pj->max_kib), pj->suggest_mb);
			if (pj->safe_j > 0)
				rm_buf_addf(b, "%8ld  %s", safe_jobs(r, pj), jobs_bound(r, pj));
			else
				rm_buf_addf(b, "%8s", "?");
			if (pj->nemu)
				rm_buf_addf(b, "  (%zu emulated)", pj->nemu);
			if (pj->by_max)
				rm_buf_adds(b, "  (per job: the largest, OOM-killed here)");
			rm_buf_adds(b, "\n");
		}
		rm_buf_adds(b, "\n");
	}
}

void print_text(struct rm_buf *b, const struct report *r, const struct opts *o)
{
	struct sty c = sty_of(o);

	if (r->sys)
		text_sys(b, r, o, &c);
	if (r->ctrs.known)
		text_containers(b, r, &c);
	if (r->job.known)
		text_job(b, r, &c);
	text_procs(b, r, o, &c);
	text_units(b, r, o, &c);
	text_scope(b, r, o, c.b, c.off);
	if (r->nverdicts) {
		rm_buf_addf(b, "%sVerdict%s\n", c.b, c.off);
		for (int i = 0; i < r->nverdicts; i++) {
			char text[VERDICT_MAX];
			const char *col = r->verdicts[i].k == V_OK ? c.grn : c.red;
			verdict_text(r, &r->verdicts[i], text, sizeof(text));
			rm_buf_addf(b, "  %s-%s %s\n", col, c.off, text);
		}
	}
}
