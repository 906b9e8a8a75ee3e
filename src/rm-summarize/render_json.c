/*
 * render_json.c: a report as one JSON object a line.  It formats the
 * model (report.h) and nothing else.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
		char text[VERDICT_MAX];
		verdict_text(r, &r->verdicts[i], text, sizeof(text));
		rm_buf_adds(b, i ? ",{\"kind\":" : "{\"kind\":");
		rm_buf_json(b, verdict_kind_name(r->verdicts[i].k));
		rm_buf_adds(b, ",\"text\":");
		rm_buf_json(b, text);
		rm_buf_addc(b, '}');
	}
	rm_buf_adds(b, "]}\n");
}
