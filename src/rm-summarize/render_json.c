/*
 * render_json.c: a report as one JSON object a line.  It formats the
 * model (report.h) and nothing else; a number not known is null, never 0.
 *
 * This file is long because it names every key of the JSON report once,
 * section by section in the order they are printed (print_json at the
 * end), so that a reader looking for a key (jq's users) finds it here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "containers.h"
#include "fmt.h"
#include "kmsg.h"
#include "oom.h"
#include "render_json.h"
#include "scopeout.h"
#include "sys.h"
#include "verdict.h"

static const char *const pk_key[PK_N] = {
	"max_mem_used_mb", "min_mem_avail_mb", "max_swap_used_mb", "min_disk_avail_gb",
	"max_load1", "max_cpu_pct", "max_pkg_w", "max_gpu_busy_pct", "max_gpu_vram_used_mb",
};

static const char *const pk_aux_key[PK_N] = {
	"mem_pct", NULL, NULL, "disk_pct", NULL, NULL, NULL, NULL, "vram_total_mb",
};

/* A whole number, or null when the count was never known. */
static void jkey_count(struct rm_buf *b, int *first, const char *k, int known, long v)
{
	jkey(b, first, k);
	if (known)
		rm_buf_addf(b, "%ld", v);
	else
		rm_buf_adds(b, "null");
}

/* {"epoch":..,"iso":..,"elapsed_s":..[,"stage":..]} */
static void jwhen(struct rm_buf *b, const struct report *r, double epoch, int with_stage, int stage)
{
	int g = 1;

	rm_buf_addc(b, '{');
	jtime(b, &g, r->sys, epoch);
	if (with_stage)
		jstage(b, &g, r, stage);
	rm_buf_addc(b, '}');
}

/* [lo,hi], or null. */
static void jpair(struct rm_buf *b, int known, double lo, double hi, int prec)
{
	if (!known) {
		rm_buf_adds(b, "null");
		return;
	}
	rm_buf_addc(b, '[');
	jnum(b, lo, prec);
	rm_buf_addc(b, ',');
	jnum(b, hi, prec);
	rm_buf_addc(b, ']');
}

static void json_cgroup(struct rm_buf *b, const struct report *r)
{
	const struct sys *s = r->sys;
	int g = 1;

	if (!s->cg_avail.known) {
		rm_buf_adds(b, "null");
		return;
	}
	rm_buf_addc(b, '{');
	jkey_num(b, &g, "min_avail_mb", s->cg_avail.v, 0);
	jkey_num(b, &g, "limit_mb", s->cg_avail.aux, 0);
	jkey_num(b, &g, "host_avail_mb", s->cg_host_avail, 0);
	jtime(b, &g, s, s->cg_avail.epoch);
	jstage(b, &g, r, s->cg_avail.stage);
	jkey(b, &g, "limit_changes");
	rm_buf_addc(b, '[');
	for (int i = 0; i < s->nlimch; i++) {
		int h = 1;
		rm_buf_adds(b, i ? ",{" : "{");
		jkey_num(b, &h, "from_mb", s->limch[i].from, 0);
		jkey_num(b, &h, "to_mb", s->limch[i].to, 0);
		jtime(b, &h, s, s->limch[i].epoch);
		jstage(b, &h, r, stage_at(r, s->limch[i].epoch));
		rm_buf_addc(b, '}');
	}
	rm_buf_adds(b, "]}");
}

static void json_peaks(struct rm_buf *b, const struct report *r)
{
	const struct sys *s = r->sys;
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
		jkey_num(b, &h, "value", p->v, 3);
		if (pk_aux_key[k])
			jkey_num(b, &h, pk_aux_key[k], p->aux, 1);
		jtime(b, &h, s, p->epoch);
		jstage(b, &h, r, p->stage);
		jkey_str(b, &h, "context", p->ctx);
		rm_buf_addc(b, '}');
	}
	rm_buf_addc(b, '}');
}

/* near_oom and low_disk: samples (null where the column held no reading). */
static void json_runs(struct rm_buf *b, int *f, const struct report *r, const struct opts *o)
{
	const struct sys *s = r->sys;
	const struct runstat *rs[2] = { &s->near, &s->low };
	static const char *const key[2] = { "near_oom", "low_disk" };

	for (int i = 0; i < 2; i++) {
		int g = 1, known = i == 0 ? near_known(s) : s->pk[PK_DISK].known;
		jkey(b, f, key[i]);
		rm_buf_addc(b, '{');
		jkey_num(b, &g, i == 0 ? "threshold_mb" : "threshold_gb",
			 i == 0 ? o->near_oom_mb : o->low_disk_gb, 3);
		jkey_count(b, &g, "samples", known, rs[i]->samples);
		jkey(b, &g, "first");
		if (rs[i]->samples)
			jwhen(b, r, rs[i]->first_epoch, 1, rs[i]->first_stage);
		else
			rm_buf_adds(b, "null");
		jkey_count(b, &g, "longest_run_samples", known, rs[i]->longest);
		jkey_num(b, &g, "longest_run_s",
			 rs[i]->samples ? rs[i]->longest_end - rs[i]->longest_start : NAN, 3);
		rm_buf_addc(b, '}');
	}
}

/* A victim of the build in full (after its pid, name, constraint): its
 * unit and row, the kill's time and its source, the stage and context
 * then, the lower-bound peak, the cgroup's usage and limit, and the
 * others of its cgroup with their memory at the kill. */
static void jkey_str_or_null(struct rm_buf *b, int *first, const char *k, const char *s)
{
	jkey(b, first, k);
	jstr_or_null(b, s);
}

static void json_victim(struct rm_buf *b, const struct report *r, const struct oomev *e, int k)
{
	const struct oomvictim *x = &e->vx[k];
	int g = 0;

	jkey_str_or_null(b, &g, "unit", x->row ? x->row->unit : NULL);
	jkey_str_or_null(b, &g, "comm", x->row ? x->row->comm : NULL);
	jkey_num(b, &g, "killed_epoch", x->epoch, 3);
	jkey_num(b, &g, "killed_at_s", x->epoch - r->sys->first_epoch, 3);
	jkey_str(b, &g, "time_from", !x->from_row ? "sample" : strcmp(x->row->source, "sampled") == 0 ? "sampled_exit" : "exit");
	jstage(b, &g, r, x->stage);
	jkey_str_or_null(b, &g, "context", x->ctx);
	jkey_num(b, &g, "context_age_s", x->ctx_age, 3);
	jkey_num(b, &g, "peak_rss_kib_at_least", x->row ? x->row->peak_kib : NAN, 0);
	jkey_num(b, &g, "cgroup_usage_kib", x->usage_kib, 0);
	jkey_num(b, &g, "cgroup_limit_kib", x->limit_kib, 0);
	jkey(b, &g, "task_dump");
	rm_buf_adds(b, x->dump ? "true" : "false");
	jkey(b, &g, "beside");
	rm_buf_addc(b, '[');
	for (int i = 0; i < x->nbeside; i++) {
		const struct oomtask *t = &x->beside[i];
		int h = 1;
		if (i)
			rm_buf_addc(b, ',');
		rm_buf_addc(b, '{');
		jkey_long(b, &h, "pid", t->pid);
		jkey_str(b, &h, "name", t->name);
		jkey_str_or_null(b, &h, "unit", t->row ? t->row->unit : NULL);
		jkey_num(b, &h, t->from_dump ? "rss_kib" : "peak_rss_kib", t->kib, 0);
		jkey_str(b, &h, "from", t->from_dump ? "task_dump" : "alive_then");
		rm_buf_addc(b, '}');
	}
	rm_buf_addc(b, ']');
}

static void json_victims(struct rm_buf *b, const struct report *r, const struct oomev *e)
{
	rm_buf_addc(b, '[');
	for (int k = 0, n = 0; k < e->nv; k++) {
		const char *cn = rm_kmsg_constraint_name(e->vcons[k]);
		if (e->vscope[k] == 0)
			continue;
		rm_buf_addf(b, "%s{\"pid\":%d,\"name\":", n++ ? "," : "", e->vpid[k]);
		rm_buf_json(b, e->vname[k]);
		rm_buf_adds(b, ",\"in_scope\":");
		rm_buf_adds(b, e->vscope[k] > 0 ? "true" : "null");
		rm_buf_adds(b, ",\"constraint\":");
		jstr_or_null(b, cn);
		rm_buf_adds(b, ",\"oom_memcg\":");
		jstr_or_null(b, e->vmemcg[k]);
		/* The container it was killed in (the companion's short ID). */
		if (r->ctrs.known) {
			rm_buf_adds(b, ",\"container\":");
			jstr_or_null(b, e->vctr[k] >= 0 ? r->ctrs.v[e->vctr[k]].shortid : NULL);
		}
		/* How it was tied: its PID, the run's cgroup (exact; its row
		 * inferred), or the cgroup's counter and a SIGKILLed row. */
		rm_buf_addf(b, ",\"tied_by\":%s,\"row_pid\":",
			    e->vtie[k] == VT_CGROUP ? "\"cgroup\"" : e->vtie[k] == VT_EXIT ? "\"exit_status\"" :
			    e->vtie[k] == VT_PID ? "\"pid\"" : e->vtie[k] == VT_CTR ? "\"container\"" : "null");
		if (e->vrow[k])
			rm_buf_addf(b, "%d", e->vrow[k]);
		else if (e->vtie[k] == VT_PID)
			rm_buf_addf(b, "%d", e->vpid[k]);
		else
			rm_buf_adds(b, "null");
		rm_buf_addf(b, ",\"row_inferred\":%s", e->vtie[k] != VT_PID && e->vrow[k] ? "true" : "false");
		json_victim(b, r, e, k);
		rm_buf_addc(b, '}');
	}
	rm_buf_addc(b, ']');
}

static void json_ooms(struct rm_buf *b, const struct report *r)
{
	const struct sys *s = r->sys;
	int g = 1;

	if (!s->has_oom) {
		rm_buf_adds(b, "null");
		return;
	}
	rm_buf_addc(b, '{');
	jkey_long(b, &g, "count", oom_build_kills(s));
	jkey_long(b, &g, "elsewhere", s->oom_else);
	if (r->ctrs.known) {
		/* The containers' own oom_kill counts (and kernel-log kills). */
		const struct ctr *first;
		jkey_long(b, &g, "in_build_containers", oom_ctr_kills(r, 1, &first));
		jkey_long(b, &g, "in_untied_containers", oom_ctr_kills(r, 0, &first));
	}
	jkey_str(b, &g, "kernel_log",
		 s->kmsg_state > 0 ? "read" : s->kmsg_state < 0 ? kmsg_why(s->kmsg_errno) : "not needed");
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
		jkey_long(b, &h, "kills", e->kills - e->else_kills);
		jtime(b, &h, s, e->epoch);
		jstage(b, &h, r, e->stage);
		jkey_str(b, &h, "context", e->ctx);
		jkey(b, &h, "victims");
		json_victims(b, r, e);
		rm_buf_addc(b, '}');
	}
	rm_buf_adds(b, "]}");
}

/* The rate is fitted over 10 minutes and 20 samples or more, else null;
 * times only when the whole 95 % interval falls. */
static void json_disk(struct rm_buf *b, const struct report *r, const struct opts *o)
{
	const struct sys *s = r->sys;
	struct disk_fit df;
	double h[2][3];
	int g = 1, falls;

	if (isnan(s->disk_first)) {
		rm_buf_adds(b, "null");
		return;
	}
	sys_disk_fit(s, &df);
	rm_buf_addc(b, '{');
	jkey_num(b, &g, "first_gb", s->disk_first, 2);
	jkey_num(b, &g, "last_gb", s->disk_last, 2);
	jkey_num(b, &g, "fit_seconds", df.span_s, 3);
	jkey_long(b, &g, "fit_samples", df.n);
	jkey_num(b, &g, "rate_gb_per_hour", df.rate, 3);
	jkey(b, &g, "rate_ci95_gb_per_hour");
	jpair(b, df.fitted, df.lo, df.hi, 3);
	falls = disk_hours(s, &df, 0, &h[0][0], &h[0][1], &h[0][2]);
	disk_hours(s, &df, o->low_disk_gb, &h[1][0], &h[1][1], &h[1][2]);
	for (int k = 0; k < 2; k++) {
		jkey_num(b, &g, k ? "hours_to_threshold" : "hours_to_full", falls ? h[k][0] : NAN, 2);
		jkey(b, &g, k ? "hours_to_threshold_ci95" : "hours_to_full_ci95");
		jpair(b, falls, h[k][1], h[k][2], 2);
	}
	rm_buf_addc(b, '}');
}

static void json_energy(struct rm_buf *b, const struct sys *s)
{
	int g = 1;

	if (!s->pk[PK_PKG_W].known) {
		rm_buf_adds(b, "null");
		return;
	}
	rm_buf_addc(b, '{');
	jkey_num(b, &g, "joules", s->energy_j, 1);
	jkey_num(b, &g, "mean_w", s->energy_s > 0 ? s->energy_j / s->energy_s : NAN, 2);
	jkey_num(b, &g, "seconds", s->energy_s, 3);
	rm_buf_addc(b, '}');
}

static void json_stages(struct rm_buf *b, const struct report *r)
{
	const struct sys *s = r->sys;
	int any = 0;

	rm_buf_addc(b, '[');
	for (int i = 0; i < r->nstages; i++) {
		const struct stage *st = &r->stages[i];
		int g = 1;
		if (!st->samples)
			continue;
		if (any++)
			rm_buf_addc(b, ',');
		rm_buf_addc(b, '{');
		jkey_str(b, &g, "stage", st->name);
		jkey_num(b, &g, "duration_s", st->duration, 3);
		jkey_long(b, &g, "samples", st->samples);
		jkey_num(b, &g, "peak_mem_used_mb", st->peak_used, 0);
		jkey_num(b, &g, "min_mem_avail_mb", st->min_avail, 0);
		jkey_num(b, &g, "min_disk_avail_gb", st->min_disk, 2);
		jkey_num(b, &g, "max_compilers", st->max_comp, 0);
		if (r->has_build_comp)
			jkey_num(b, &g, "max_build_compilers", st->build_comp, 0);
		jkey_long(b, &g, "near_oom_samples", st->near_oom);
		if (s->cg_avail.known)
			jkey_num(b, &g, "min_cg_mem_avail_mb", st->min_cg_avail, 0);
		if (r->ctrs.bind)
			jkey_num(b, &g, "min_container_avail_mb", ctr_stage_avail(r, i) / 1024, 0);
		jkey_num(b, &g, "energy_j", st->energy_j, 1);
		rm_buf_addc(b, '}');
	}
	rm_buf_addc(b, ']');
}

static void json_sys(struct rm_buf *b, const struct report *r, const struct opts *o)
{
	const struct sys *s = r->sys;
	int f = 1;

	rm_buf_addc(b, '{');
	jkey_str(b, &f, "file", s->file);
	jkey_str(b, &f, "format", s->format);
	jkey(b, &f, "start");
	jwhen(b, r, s->first_epoch, 0, -1);
	jkey(b, &f, "end");
	jwhen(b, r, s->last_epoch, 0, -1);
	jkey_num(b, &f, "duration_s", s->last_epoch - s->first_epoch, 3);
	jkey_long(b, &f, "samples", s->samples);
	jkey_long(b, &f, "skipped_rows", s->skipped);
	jkey_long(b, &f, "cut_rows", s->cut_rows);
	jkey_num(b, &f, "ram_mb", !isnan(r->host_ram_mb) ? r->host_ram_mb : r->ram_mb, 0);
	jkey_long(b, &f, "cores", r->cores);
	jkey(b, &f, "cgroup");
	json_cgroup(b, r);
	jkey(b, &f, "peaks");
	json_peaks(b, r);
	json_runs(b, &f, r, o);
	jkey(b, &f, "oom_kills");
	json_ooms(b, r);
	jkey(b, &f, "disk");
	json_disk(b, r, o);
	jkey(b, &f, "energy");
	json_energy(b, s);
	jkey(b, &f, "stages");
	json_stages(b, r);
	rm_buf_addc(b, '}');
}

static void json_cgroup_gap(struct rm_buf *b, const struct job *j)
{
	char why[400];
	int h = 1;

	if (!cgroup_gap(j, why, sizeof(why))) {
		rm_buf_adds(b, "null");
		return;
	}
	rm_buf_addc(b, '{');
	jkey_num(b, &h, "peak_file_kib", j->peak_file_kib, 0);
	jkey_num(b, &h, "cgroup_anon_kib", j->cg_anon_kib, 0);
	jkey_num(b, &h, "cgroup_file_kib", j->cg_file_kib, 0);
	jkey_num(b, &h, "cgroup_kernel_kib", j->cg_kernel_kib, 0);
	jkey_str(b, &h, "text", why);
	rm_buf_addc(b, '}');
}

static void json_job(struct rm_buf *b, const struct report *r)
{
	const struct job *j = &r->job;
	const struct proc *p = largest_ended_row(r);
	int g = 1;

	if (!j->known) {
		rm_buf_adds(b, "null");
		return;
	}
	rm_buf_addc(b, '{');
	jkey_str(b, &g, "cmd", j->cmd);
	jkey(b, &g, "exit");
	jexit(b, j->exit);
	jkey_num(b, &g, "start_epoch", j->start_epoch, 3);
	jkey_num(b, &g, "end_epoch", j->end_epoch, 3);
	jkey(b, &g, "start");
	jiso(b, j->start_epoch);
	jkey(b, &g, "end");
	jiso(b, j->end_epoch);
	jkey_num(b, &g, "elapsed_s", j->elapsed, 3);
	jkey_num(b, &g, "procs", j->procs, 0);
	jkey_num(b, &g, "peak_rss_kib", j->peak_kib, 0);
	jkey_num(b, &g, "peak_at_s", j->peak_at, 3);
	jkey_num(b, &g, "max_proc_rss_kib", j->max_proc_kib, 0);
	jkey_count(b, &g, "max_proc_pid", p && p->peak_kib >= j->max_proc_kib, p ? p->pid : 0);
	jkey_num(b, &g, "cgroup_peak_kib", j->cgroup_kib, 0);
	jkey(b, &g, "cgroup_gap");
	json_cgroup_gap(b, j);
	jkey_num(b, &g, "user_s", j->user_s, 2);
	jkey_num(b, &g, "sys_s", j->sys_s, 2);
	if (!isnan(j->mem_max_kib)) {
		jkey_num(b, &g, "mem_max_kib", j->mem_max_kib, 0);
		jkey_num(b, &g, "oom_kills", j->oom_kills, 0);
		jkey(b, &g, "oom_victim");
		jstr_or_null(b, j->victim);
	}
	rm_buf_addc(b, '}');
}

static void json_timeline(struct rm_buf *b, const struct timeline *tl)
{
	int g = 1;

	if (!tl->known) {
		rm_buf_adds(b, "null");
		return;
	}
	rm_buf_addc(b, '{');
	jkey_long(b, &g, "ticks", tl->rows);
	jkey_num(b, &g, "peak_rss_kib", tl->peak_kib, 0);
	jkey_num(b, &g, "peak_epoch", tl->peak_epoch, 3);
	jkey_num(b, &g, "peak_at_s", isnan(tl->peak_elapsed) ? tl->peak_epoch - tl->off : tl->peak_elapsed, 3);
	jkey_num(b, &g, "max_procs", tl->max_procs, 0);
	jkey(b, &g, "points");
	rm_buf_addc(b, '[');
	for (size_t i = 0; i < tl->npts; i++) {
		const struct tlpoint *t = &tl->pts[i];
		int h = 1;
		rm_buf_adds(b, i ? ",{" : "{");
		jkey_num(b, &h, "epoch", t->epoch, 3);
		jkey(b, &h, "iso");
		jiso(b, t->epoch);
		jkey_num(b, &h, "elapsed_s", t->elapsed, 3);
		jkey_num(b, &h, "procs", t->procs, 0);
		jkey_num(b, &h, "rss_kib", t->rss_kib, 0);
		jkey_num(b, &h, "cpu_pct", t->cpu_pct, 1);
		rm_buf_addc(b, '}');
	}
	rm_buf_adds(b, "]}");
}

static void json_proc(struct rm_buf *b, const struct report *r, const struct proc *p)
{
	int f = 1;

	rm_buf_addc(b, '{');
	jkey_long(b, &f, "pid", p->pid);
	jkey_long(b, &f, "ppid", p->ppid);
	jkey_str(b, &f, "comm", p->comm);
	jkey_num(b, &f, "peak_rss_kib", p->peak_kib, 0);
	jkey_num(b, &f, "peak_at_s", p->peak_at, 3);
	jkey_num(b, &f, "start_s", p->start_s, 3);
	jkey_num(b, &f, "end_s", p->end_s, 3);
	jkey_num(b, &f, "cpu_s", p->cpu_s, 2);
	jkey(b, &f, "exit");
	jexit(b, p->exit);
	jstage(b, &f, r, p->stage);
	jkey(b, &f, "unit");
	if (p->unit)
		rm_buf_json(b, p->unit);
	else
		rm_buf_adds(b, "null");
	jkey_str(b, &f, "cmd", p->cmd);
	jkey_emulated(b, &f, p->emulated);
	rm_buf_addc(b, '}');
}

static void json_processes(struct rm_buf *b, const struct report *r, const struct opts *o)
{
	size_t listed = 0, max;
	int g = 1;

	if (!r->nexitlogs) {
		rm_buf_adds(b, "null");
		return;
	}
	/* Every row's counts (a folded log keeps only the rows listed). */
	rm_buf_addc(b, '{');
	jkey_long(b, &g, "count", (long)r->nrows);
	jkey_long(b, &g, "matching", (long)r->nshown);
	jkey_num(b, &g, "cpu_s", r->cpu_all, 2);
	jkey_num(b, &g, "largest_peak_rss_kib", r->nproc ? r->order[0]->peak_kib : NAN, 0);
	jkey_long(b, &g, "emulated", (long)r->nemulated);
	jkey(b, &g, "emulated_note");
	if (r->nemulated) {
		struct rm_buf w = { 0 };
		emulated_note(&w, r, "");
		if (!w.oom && w.len)
			w.p[w.len - 1] = '\0';   /* the newline */
		rm_buf_json(b, w.oom ? "" : w.p);
		rm_buf_free(&w);
	} else {
		rm_buf_adds(b, "null");
	}
	jkey(b, &g, "top");
	rm_buf_addc(b, '[');
	/* Every process unless --top says otherwise, as memwatch's. */
	max = o->top_set ? (size_t)o->top : (size_t)-1;
	const struct proc *p;
	struct proc tmp;
	size_t it = 0;
	while (listed < max && (p = listed_next(r, &it, &tmp))) {
		if (listed++)
			rm_buf_addc(b, ',');
		json_proc(b, r, p);
		out_flush(b, o);
	}
	rm_buf_adds(b, "]}");
}

static void json_filter(struct rm_buf *b, const struct report *r, const struct opts *o)
{
	struct filt fl;
	int g = 1;

	if (!r->nexitlogs || !filtered(r, o, &fl)) {
		rm_buf_adds(b, "null");
		return;
	}
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
	jkey_long(b, &g, "matched_count", (long)fl.shown);
	jkey_long(b, &g, "excluded_count", (long)fl.hidden);
	jkey_num(b, &g, "excluded_peak_rss_kib_sum", fl.hidden_kib, 0);
	jkey(b, &g, "warning");
	if (!fl.shown && r->nrows) {
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

/* groups, compile_units and memory_per_job: the derived lists. */
static void json_lists(struct rm_buf *b, int *f, const struct report *r)
{
	jkey(b, f, "groups");
	rm_buf_addc(b, '[');
	for (size_t i = 0; i < r->ngroups; i++) {
		int g = 1;
		rm_buf_adds(b, i ? ",{" : "{");
		jkey_str(b, &g, "comm", r->groups[i].comm);
		jkey_long(b, &g, "count", r->groups[i].count);
		jkey_num(b, &g, "peak_rss_kib", r->groups[i].peak_kib, 0);
		jkey_num(b, &g, "cpu_s", r->groups[i].cpu_s, 2);
		jkey_emulated(b, &g, r->groups[i].emulated);
		rm_buf_addc(b, '}');
	}
	rm_buf_addc(b, ']');
	jkey(b, f, "compile_units");
	rm_buf_addc(b, '[');
	/* Every unit, whatever --top says of the processes: comparing two
	 * runs needs them all, and a build has far fewer units than
	 * processes (fold.c keeps each unit's figures, not its rows). */
	for (size_t i = 0; i < r->nunits; i++) {
		int g = 1;
		rm_buf_adds(b, i ? ",{" : "{");
		jkey_str(b, &g, "unit", r->units[i].name);
		jkey_str(b, &g, "comm", r->units[i].comm);
		jkey_num(b, &g, "peak_rss_kib", r->units[i].peak_kib, 0);
		jkey_long(b, &g, "count", r->units[i].count);
		jstage(b, &g, r, r->units[i].stage);
		jkey_emulated(b, &g, r->units[i].emulated);
		rm_buf_addc(b, '}');
	}
	rm_buf_addc(b, ']');
}

static void json_perjob(struct rm_buf *b, const struct report *r)
{
	rm_buf_addc(b, '[');
	for (size_t i = 0; i < r->nperjob; i++) {
		const struct perjob *pj = &r->perjob[i];
		int g = 1, fits = pj->safe_j > 0;
		rm_buf_adds(b, i ? ",{" : "{");
		jstage(b, &g, r, pj->stage);
		jkey_long(b, &g, "compilers", (long)pj->n);
		jkey_long(b, &g, "emulated", (long)pj->nemu);
		jkey_num(b, &g, "p95_rss_kib", pj->p95_kib, 0);
		jkey_num(b, &g, "max_rss_kib", pj->max_kib, 0);
		jkey_num(b, &g, "suggest_mb_per_job", pj->suggest_mb, 0);
		jkey_str(b, &g, "sized_by", pj->by_max ? "max" : "p95");
		jkey_num(b, &g, "safe_jobs", fits ? (double)safe_jobs(r, pj) : NAN, 0);
		jkey_num(b, &g, "memory_jobs", fits ? (double)pj->safe_j : NAN, 0);
		jkey(b, &g, "bound_by");
		jstr_or_null(b, fits ? jobs_bound(r, pj) : NULL);
		if (r->ctrs.known) {
			jkey_num(b, &g, "budget_mb", pj->budget_mb, 0);
			jkey(b, &g, "container");
			jstr_or_null(b, pj->ctr ? pj->ctr->shortid : NULL);
		}
		rm_buf_addc(b, '}');
	}
	rm_buf_addc(b, ']');
}

static void json_verdicts(struct rm_buf *b, const struct report *r)
{
	rm_buf_addc(b, '[');
	for (int i = 0; i < r->nverdicts; i++) {
		char text[VERDICT_MAX];
		int g = 1;
		const struct verdict *v = &r->verdicts[i];
		verdict_text(r, v, text, sizeof(text));
		rm_buf_adds(b, i ? ",{" : "{");
		jkey_str(b, &g, "kind", verdict_kind_name(r->verdicts[i].k));
		jkey_str(b, &g, "text", text);
		if (v->k == V_OOM_KILL && v->ev && v->victim >= 0) {
			/* The kill it leads with, as data: the unit first. */
			const struct oomvictim *x = &v->ev->vx[v->victim];
			jkey_str_or_null(b, &g, "unit", x->row ? x->row->unit : NULL);
			jkey_long(b, &g, "pid", v->ev->vpid[v->victim]);
			jkey_num(b, &g, "at_s", v->at, 3);
			jstage(b, &g, r, v->stage);
		}
		rm_buf_addc(b, '}');
	}
	rm_buf_addc(b, ']');
}

/* The files (sanitized), and what the monitor said of its rows. */
static void json_head(struct rm_buf *b, int *f, const struct report *r, const struct opts *o)
{
	jkey_str(b, f, "version", RM_VERSION);
	jkey(b, f, "files");
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
	jkey_count(b, f, "rows_lost", o->rows_lost >= 0, o->rows_lost);
	jkey(b, f, "rows_lost_from");
	jstr_or_null(b, o->rows_lost > 0 ? o->rows_lost_from : NULL);
	/* Rows whose stage came from the newest log, not the stage file. */
	jkey_count(b, f, "stage_fallback_rows", o->stage_fallback >= 0, o->stage_fallback);
}

/* {"epoch","iso","elapsed_s"} of a container's time, null when not known. */
static void jctime(struct rm_buf *b, const struct report *r, double epoch)
{
	int g = 1;

	if (isnan(epoch)) {
		rm_buf_adds(b, "null");
		return;
	}
	rm_buf_addc(b, '{');
	jkey_num(b, &g, "epoch", epoch, 3);
	jkey(b, &g, "iso");
	jiso(b, epoch);
	jkey_num(b, &g, "elapsed_s", r->sys ? epoch - r->sys->first_epoch : NAN, 3);
	rm_buf_addc(b, '}');
}

/* A container's limits over time and its oom_kills rises. */
static void json_ctr_series(struct rm_buf *b, int *g, const struct report *r, const struct ctr *c)
{
	jkey(b, g, "limits");
	rm_buf_addc(b, '[');
	for (int i = 0; i < c->nlimits; i++) {
		int h = 1;
		rm_buf_adds(b, i ? ",{" : "{");
		jkey_num(b, &h, "limit_kib", c->limit[i], 0);
		jkey(b, &h, "from");
		jctime(b, r, c->limit_at[i]);
		rm_buf_addc(b, '}');
	}
	rm_buf_addc(b, ']');
	jkey_long(b, g, "limit_changes", c->limit_changes);
	jkey(b, g, "oom_rises");
	rm_buf_addc(b, '[');
	for (int i = 0; i < c->nrises; i++) {
		int h = 1;
		rm_buf_adds(b, i ? ",{" : "{");
		jkey_long(b, &h, "kills", c->rise_n[i]);
		jkey(b, &h, "at");
		jctime(b, r, c->rise_at[i]);
		rm_buf_addc(b, '}');
	}
	rm_buf_addc(b, ']');
}

/* One container, every fact the text tells of it. */
static void json_ctr(struct rm_buf *b, const struct report *r, const struct ctr *c)
{
	int g = 1;

	rm_buf_addc(b, '{');
	jkey_str(b, &g, "id", c->id);
	jkey_str(b, &g, "short_id", c->shortid);
	jkey(b, &g, "name");
	jstr_or_null(b, c->name);
	jkey_str(b, &g, "cgroup", c->cgroup);
	jkey(b, &g, "tied");
	jstr_or_null(b, c->tied);
	jkey(b, &g, "stages");
	rm_buf_addc(b, '[');
	for (int i = 0; i < c->nst; i++) {
		if (i)
			rm_buf_addc(b, ',');
		rm_buf_json(b, stage_name(r, c->st[i].stage));
	}
	rm_buf_addc(b, ']');
	jkey(b, &g, "first");
	jctime(b, r, c->first_epoch);
	jkey(b, &g, "last_read");
	jctime(b, r, c->last_read);
	jkey(b, &g, "gone");
	rm_buf_adds(b, c->gone ? "true" : "false");
	jkey_num(b, &g, "limit_kib", c->nlimits ? c->limit_cur : NAN, 0);
	json_ctr_series(b, &g, r, c);
	jkey_num(b, &g, "peak_kib", c->peak_kib, 0);
	jkey(b, &g, "peak_lower_bound");
	rm_buf_adds(b, ctr_lower(c) ? "true" : "false");
	jkey(b, &g, "peak_at");
	jctime(b, r, c->peak_epoch);
	jkey_num(b, &g, "min_avail_kib", c->min_avail_kib, 0);
	jkey(b, &g, "min_avail_at");
	jctime(b, r, c->min_avail_epoch);
	jkey_long(b, &g, "near_oom_readings", c->near);
	jkey_long(b, &g, "oom_kills", c->oom_kills);
	jkey_long(b, &g, "kernel_log_kills", c->kmsg_kills);
	rm_buf_addc(b, '}');
}

/* The containers companion: every container, and the build's clients. */
static void json_containers(struct rm_buf *b, int *f, const struct report *r)
{
	const struct ctrs *cs = &r->ctrs;

	if (!cs->known)
		return;
	jkey(b, f, "containers");
	rm_buf_addc(b, '[');
	for (size_t i = 0; i < cs->n; i++) {
		if (i)
			rm_buf_addc(b, ',');
		json_ctr(b, r, &cs->v[i]);
	}
	rm_buf_addc(b, ']');
	jkey_long(b, f, "containers_tied", cs->ntied);
	jkey_long(b, f, "container_clients", cs->clients);
	jkey(b, f, "binding_container");
	jstr_or_null(b, cs->bind ? cs->bind->shortid : NULL);
	jkey(b, f, "peaks_of");
	rm_buf_adds(b, host_scoped(r) ? "\"host\"" : "\"build\"");
}

void print_json(struct rm_buf *b, const struct report *r, const struct opts *o)
{
	int f = 1;

	rm_buf_addc(b, '{');
	json_head(b, &f, r, o);
	jkey(b, &f, "system");
	if (r->sys)
		json_sys(b, r, o);
	else
		rm_buf_adds(b, "null");
	jkey(b, &f, "job");
	json_job(b, r);
	jkey(b, &f, "timeline");
	json_timeline(b, &r->tl);
	jkey(b, &f, "processes");
	json_processes(b, r, o);
	jkey(b, &f, "filter");
	json_filter(b, r, o);
	json_lists(b, &f, r);
	jkey(b, &f, "memory_per_job");
	json_perjob(b, r);
	json_scope(b, &f, r, o);
	json_containers(b, &f, r);
	jkey(b, &f, "verdicts");
	json_verdicts(b, r);
	rm_buf_adds(b, "}\n");
}
