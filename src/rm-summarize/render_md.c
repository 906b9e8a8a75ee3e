/*
 * render_md.c: a report as Markdown, for a CI job summary.  It formats
 * the model (report.h) and nothing else; every cell goes through
 * md_cell (fmt.c).
 */
#include <stdio.h>
#include <string.h>

#include "containers.h"
#include "cu.h"
#include "fmt.h"
#include "kmsg.h"
#include "oom.h"
#include "render_md.h"
#include "scopeout.h"
#include "verdict.h"

/* The heading and the one-paragraph summary of the run. */
static void md_run(struct rm_buf *b, const struct report *r, const struct opts *o)
{
	const struct sys *s = r->sys;
	const struct ctr *first;
	long ck = oom_ctr_kills(r, 1, &first), near = 0, ns = 0;
	char d[40];

	fmt_dur(s->last_epoch - s->first_epoch, d, sizeof(d));
	rm_buf_adds(b, "### Build resources: ");
	md_cell(b, s->file);
	rm_buf_addf(b, "\n\n%ld samples over %s. Near-OOM below %.0f MiB available: ", s->samples, d,
		    o->near_oom_mb);
	if (near_known(s))
		rm_buf_addf(b, "%ld samples. ", s->near.samples);
	else
		rm_buf_adds(b, "not recorded. ");
	for (size_t i = 0; i < r->ctrs.n; i++)
		if (r->ctrs.v[i].tied[0] && !isnan(r->ctrs.v[i].min_avail_kib)) {
			near += r->ctrs.v[i].near;
			ns += r->ctrs.v[i].near > 0;
		}
	if (r->ctrs.bind)
		rm_buf_addf(b, "Within the build's containers, by each one's limit: %ld reading%s, in %ld container%s. ",
			    near, near == 1 ? "" : "s", ns, ns == 1 ? "" : "s");
	rm_buf_addf(b, "Low disk below %g GiB: ", o->low_disk_gb);
	if (s->pk[PK_DISK].known)
		rm_buf_addf(b, "%ld samples. OOM kills: ", s->low.samples);
	else
		rm_buf_adds(b, "not recorded. OOM kills: ");
	if (o->rows_lost > 0)
		rm_buf_addf(b, "%ld rows lost from %s (the monitor could not write them). ",
			    o->rows_lost, o->rows_lost_from ? o->rows_lost_from : "(unknown)");
	if (ck > 0 && !(s->has_oom && oom_build_kills(s) > 0))
		rm_buf_addf(b, "%ld (by the oom_kill counts of the build's containers).\n\n", ck);
	else if (s->has_oom && s->oom_else > 0)
		rm_buf_addf(b, "%ld (and %ld elsewhere on this host).\n\n", oom_build_kills(s), s->oom_else);
	else if (s->has_oom)
		rm_buf_addf(b, "%ld.\n\n", oom_build_kills(s));
	else
		rm_buf_adds(b, "not recorded.\n\n");
}

/* A context cell: a compiler's whole command line (400 characters and
 * more, six times over) cut to its unit, else to its first 80 characters. */
static void md_context(struct rm_buf *b, const char *ctx)
{
	char unit[RM_TEXT_MAX + 1], cut[RM_TEXT_MAX + 1];
	size_t n = ctx ? strlen(ctx) : 0, i = 0, chars = 0;

	if (n <= 80) {
		md_cell(b, ctx ? ctx : "");
		return;
	}
	if (rm_cu_source(ctx, n, unit, sizeof(unit))) {
		md_cell(b, unit);
		return;
	}
	/* 80 characters, not bytes: a UTF-8 sequence is never cut. */
	for (; i < n && i < sizeof(cut) - 1; i++) {
		if (((unsigned char)ctx[i] & 0xc0) != 0x80 && chars++ == 80)
			break;
		cut[i] = ctx[i];
	}
	cut[i] = '\0';
	md_cell(b, cut);
	rm_buf_adds(b, "...");
}

/* " | +CLOCK | STAGE | CONTEXT |": the end of a peak's or a kill's row. */
static void md_when(struct rm_buf *b, const struct report *r, double epoch, int stage,
		    const char *ctx)
{
	char clk[32];

	fmt_clock(epoch - r->sys->first_epoch, clk, sizeof(clk));
	rm_buf_addf(b, " | +%s | ", clk);
	md_cell(b, stage_name(r, stage));
	rm_buf_adds(b, " | ");
	md_context(b, ctx);
	rm_buf_adds(b, " |\n");
}

/* The build's OOM kills: a row each, with its units. */
static void md_oom_rows(struct rm_buf *b, const struct report *r)
{
	const struct sys *s = r->sys;
	char v[80];

	for (size_t i = 0; i < s->nev; i++) {
		const struct oomev *e = &s->ev[i];
		if (!oom_event_is_build(e))
			continue;
		const struct oomvictim *fx = NULL;
		rm_buf_addf(b, "| OOM kill | %ld", e->kills - e->else_kills);
		for (int k = 0, n = 0; k < e->nv; k++) {
			const struct oomvictim *x = &e->vx[k];
			if (e->vscope[k] == 0)
				continue;
			if (!fx)
				fx = x;
			rm_buf_adds(b, n++ ? ", " : ": ");
			if (x->row && x->row->unit) {
				md_cell(b, x->row->unit);
				rm_buf_adds(b, " (");
				md_cell(b, e->vname[k]);
				rm_buf_addf(b, ", PID %d)", e->vpid[k]);
			} else {
				md_cell(b, e->vname[k]);
				rm_buf_addf(b, " (PID %d)", e->vpid[k]);
			}
			if (x->row && !isnan(x->row->peak_kib)) {
				fmt_kib(x->row->peak_kib, v, sizeof(v));
				rm_buf_addf(b, ", at least %s when killed", v);
			}
			if (e->vcons[k] == RM_OOM_MEMCG) {
				rm_buf_adds(b, ", killed by the ");
				if (!isnan(x->limit_kib)) {
					fmt_mib(x->limit_kib / 1024.0, v, sizeof(v));
					rm_buf_addf(b, "%s ", v);
				}
				rm_buf_adds(b, "limit of cgroup ");
				md_cell(b, e->vmemcg[k]);
			}
			if (e->vctr[k] >= 0) {
				char nm[200];
				fmt_ctr_name(&r->ctrs.v[e->vctr[k]], nm, sizeof(nm));
				rm_buf_adds(b, " (container ");
				md_cell(b, nm);
				rm_buf_adds(b, ")");
			}
			for (int j = 0, u = 0; j < x->nbeside && u < 3; j++) {
				const struct oomtask *t = &x->beside[j];
				if (!t->row || !t->row->unit)
					continue;
				rm_buf_adds(b, u++ ? ", " : "; beside it: ");
				md_cell(b, t->row->unit);
				fmt_kib(t->kib, v, sizeof(v));
				rm_buf_addf(b, " %s%s", t->from_dump ? "" : "alive then, peak ", v);
			}
		}
		if (fx)
			md_when(b, r, fx->epoch, fx->stage, fx->ctx);
		else
			md_when(b, r, e->epoch, e->stage, e->ctx);
	}
}

/* The peaks and the build's OOM kills, one table. */
static void md_peaks(struct rm_buf *b, const struct report *r)
{
	const struct sys *s = r->sys;
	char v[80];

	rm_buf_adds(b, "| peak | value | at | stage | context |\n|---|---|---|---|---|\n");
	for (int k = 0; k < PK_N; k++) {
		const struct peak *p = &s->pk[k];
		if (!peak_applies(s, k) || !p->known)
			continue;
		fmt_val(k, p->v, p->aux, v, sizeof(v));
		rm_buf_addf(b, "| %s%s | %s", peak_label(k), host_peak(r, k) ? " (host)" : "", v);
		/* Swap never used has no moment worth a context. */
		md_when(b, r, p->epoch, p->stage, k == PK_SWAP && p->v == 0 ? "" : p->ctx);
	}
	if (s->cg_avail.known) {
		/* The cgroup's headroom, as the text's peaks have it. */
		rm_buf_addf(b, "| min available (cgroup) | %.0f MiB of %.0f MiB", s->cg_avail.v, s->cg_avail.aux);
		md_when(b, r, s->cg_avail.epoch, s->cg_avail.stage, s->cg_avail.ctx);
	}
	for (int i = 0; i < s->nlimch; i++) {
		char clk[32];
		fmt_clock(s->limch[i].epoch - s->first_epoch, clk, sizeof(clk));
		rm_buf_addf(b, "| cgroup limit changed | %.0f -> %.0f MiB", s->limch[i].from, s->limch[i].to);
		md_when(b, r, s->limch[i].epoch, stage_at(r, s->limch[i].epoch), "");
	}
	if (r->ctrs.bind) {
		const struct ctr *c = r->ctrs.bind;
		char nm[200];
		fmt_ctr_name(c, nm, sizeof(nm));
		rm_buf_addf(b, "| min available (container) | %.0f MiB of %.0f MiB", c->min_avail_kib / 1024,
			    c->min_avail_limit / 1024);
		md_when(b, r, c->min_avail_epoch, c->min_avail_stage, nm);
	}
	md_oom_rows(b, r);
}

static void md_stages(struct rm_buf *b, const struct report *r)
{
	const struct sys *s = r->sys;
	char d[40];

	rm_buf_adds(b, "\n| stage | duration | samples | peak used MiB | min avail MiB | min disk GiB |");
	/* The build's own compilers at once (exit log), and the host's. */
	rm_buf_adds(b, r->has_build_comp ? " max compilers | max compilers (host-wide) |" : " max compilers |");
	rm_buf_adds(b, " near-OOM |");
	rm_buf_adds(b, s->cg_avail.known ? " cgroup min avail MiB |" : "");
	rm_buf_adds(b, r->ctrs.bind ? " container min avail MiB |\n" : "\n");
	rm_buf_adds(b, r->has_build_comp ? "|---|---|---|---|---|---|---|---|---|" : "|---|---|---|---|---|---|---|---|");
	rm_buf_adds(b, s->cg_avail.known ? "---|" : "");
	rm_buf_adds(b, r->ctrs.bind ? "---|\n" : "\n");
	for (int i = 0; i < r->nstages; i++) {
		const struct stage *st = &r->stages[i];
		if (!st->samples)
			continue;
		fmt_clock(st->duration, d, sizeof(d));
		rm_buf_adds(b, "| ");
		md_cell(b, st->name[0] ? st->name : "(none)");
		/* A value never read is "-", as in the text table. */
		rm_buf_addf(b, " | %s | %ld | ", d, st->samples);
		rm_buf_addf(b, isnan(st->peak_used) ? "- | " : "%.0f | ", st->peak_used);
		rm_buf_addf(b, isnan(st->min_avail) ? "- | " : "%.0f | ", st->min_avail);
		rm_buf_addf(b, isnan(st->min_disk) ? "- | " : "%.2f | ", st->min_disk);
		if (r->has_build_comp)
			rm_buf_addf(b, isnan(st->build_comp) ? "- | " : "%.0f | ", st->build_comp);
		rm_buf_addf(b, isnan(st->max_comp) ? "- | " : "%.0f | ", st->max_comp);
		rm_buf_addf(b, "%ld |", st->near_oom);
		if (s->cg_avail.known)
			rm_buf_addf(b, isnan(st->min_cg_avail) ? " - |" : " %.0f |", st->min_cg_avail);
		if (r->ctrs.bind) {
			double a = ctr_stage_avail(r, i);
			rm_buf_addf(b, isnan(a) ? " - |" : " %.0f |", a / 1024);
		}
		rm_buf_adds(b, "\n");
	}
	rm_buf_adds(b, "\n");
}

/* The containers companion: the build's containers, or, when it ties
 * none, those of the host during the build. */
static void md_containers(struct rm_buf *b, const struct report *r)
{
	const struct ctrs *cs = &r->ctrs;
	long untied = (long)cs->n - cs->ntied;

	if (cs->ntied)
		rm_buf_addf(b, "**Containers of the build**: %ld", cs->ntied);
	else
		rm_buf_addf(b, "**Containers during the build (not tied to it)**: %ld", untied);
	if (cs->ntied && untied > 0)
		rm_buf_addf(b, " (and %ld on this host not tied to the build)", untied);
	if (!cs->ntied && cs->clients)
		rm_buf_addf(b, ". The build ran %ld container client%s whose containers could not be tied to it; "
			    "`--label rm-tools.run=$RUN_ID` or `--cgroup-parent PARENT` on each `docker run` ties them.",
			    cs->clients, cs->clients == 1 ? "" : "s");
	rm_buf_adds(b, "\n\n| container | name | stages | tied | cgroup | limit | peak | OOM kills |\n|---|---|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < cs->n; i++) {
		const struct ctr *c = &cs->v[i];
		char st[400], lim[400], pk[120], ooms[200];
		if (cs->ntied && !c->tied[0])
			continue;
		fmt_ctr_stages(r, c, st, sizeof(st));
		fmt_ctr_limit(r, c, lim, sizeof(lim));
		fmt_ctr_peak(r, c, pk, sizeof(pk));
		fmt_ctr_ooms(r, c, ooms, sizeof(ooms));
		rm_buf_addf(b, "| %s | ", c->shortid);
		md_cell(b, c->name);
		rm_buf_adds(b, " | ");
		md_cell(b, st);
		rm_buf_adds(b, " | ");
		md_cell(b, c->tied[0] ? c->tied : "-");
		rm_buf_adds(b, " | ");
		md_cell(b, c->cgroup);
		rm_buf_adds(b, " | ");
		md_cell(b, lim);
		rm_buf_adds(b, " | ");
		md_cell(b, pk);
		rm_buf_adds(b, " | ");
		md_cell(b, ooms);
		rm_buf_adds(b, " |\n");
	}
	rm_buf_adds(b, "\n");
}

static void md_job(struct rm_buf *b, const struct report *r)
{
	const struct job *j = &r->job;

	rm_buf_adds(b, "### Job: `");
	md_cell(b, j->cmd);
	rm_buf_addf(b, "`\n\nexit %s, elapsed %.2f s, peak %.1f MiB (sampled)", j->exit, j->elapsed,
		    mib(j->peak_kib));
	if (!isnan(j->cgroup_kib))
		rm_buf_addf(b, ", %.1f MiB (cgroup, exact)", mib(j->cgroup_kib));
	if (!isnan(j->max_proc_kib))
		rm_buf_addf(b, ", largest process %.1f MiB", mib(j->max_proc_kib));
	if (!isnan(j->mem_max_kib)) {
		char line[800];
		budget_line(r, line, sizeof(line));
		rm_buf_adds(b, "; memory budget ");
		md_cell(b, line);
	}
	rm_buf_adds(b, "\n\n");
}

/* Compile units, memory per job, or (without units) the processes. */
static void md_lists(struct rm_buf *b, const struct report *r, const struct opts *o)
{
	if (r->nunits) {
		rm_buf_adds(b, "| compile unit | peak MiB | stage |\n|---|---|---|\n");
		for (size_t i = 0; i < r->nunits && i < (size_t)o->top; i++) {
			rm_buf_adds(b, "| ");
			md_cell(b, r->units[i].name);
			rm_buf_adds(b, emu_mark(r->units[i].emulated));
			rm_buf_addf(b, " | %.1f | ", mib(r->units[i].peak_kib));
			md_cell(b, stage_name(r, r->units[i].stage));
			rm_buf_adds(b, " |\n");
		}
		rm_buf_adds(b, "\n");
	}
	if (r->nperjob) {
		rm_buf_adds(b, "| stage | compilers | p95 MiB | per job MiB | safe -j | bound by |\n|---|---|---|---|---|---|\n");
		for (size_t i = 0; i < r->nperjob; i++) {
			const struct perjob *pj = &r->perjob[i];
			rm_buf_adds(b, "| ");
			md_cell(b, stage_name(r, pj->stage)[0] ? stage_name(r, pj->stage) : "(none)");
			rm_buf_addf(b, " | %zu", pj->n);
			if (pj->nemu)
				rm_buf_addf(b, " (%zu emulated)", pj->nemu);
			rm_buf_addf(b, " | %.1f | %.0f | %ld | %s%s |\n", mib(pj->p95_kib),
				    pj->suggest_mb, safe_jobs(r, pj), pj->safe_j > 0 ? jobs_bound(r, pj) : "?",
				    pj->by_max ? " (per job: the largest, OOM-killed here)" : "");
		}
		rm_buf_adds(b, "\n");
	}
	if (r->nexitlogs && !r->nunits) {
		size_t listed = 0;
		rm_buf_adds(b, MD_PROC_HEAD);
		const struct proc *p;
		struct proc tmp;
		size_t it = 0;
		while (listed < (size_t)o->top && (p = listed_next(r, &it, &tmp))) {
			listed++;
			md_proc_row(b, p);
			out_flush(b, o);
		}
		rm_buf_adds(b, "\n");
	}
}

void print_markdown(struct rm_buf *b, const struct report *r, const struct opts *o)
{
	if (r->sys) {
		md_run(b, r, o);
		md_peaks(b, r);
		md_stages(b, r);
	}
	if (r->ctrs.known)
		md_containers(b, r);
	if (r->job.known)
		md_job(b, r);
	md_lists(b, r, o);
	emulated_note(b, r, "");
	if (r->nemulated)
		rm_buf_adds(b, "\n");
	md_scope(b, r, o);
	for (int i = 0; i < r->nverdicts; i++) {
		char text[VERDICT_MAX];
		verdict_text(r, &r->verdicts[i], text, sizeof(text));
		rm_buf_adds(b, "- ");
		md_cell(b, text);
		rm_buf_adds(b, "\n");
	}
}
