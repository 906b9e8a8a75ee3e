/*
 * fmt.c: how the renderers say things, shared so each is said one way:
 * times, durations and sizes, the peaks' labels and values, the job's
 * budget and cgroup lines, the filter's words, -j advice, colour,
 * Markdown cells and JSON values.  Reads the report, never changes it
 * (listed_next moves only its sort's read position).
 */
#include <err.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "fold.h"
#include "kmsg.h"
#include "spill.h"

static const char *const pk_label[PK_N] = {
	"max memory used", "min memory available", "max swap used", "min disk available",
	"max load1", "max CPU busy", "max CPU package power", "max GPU busy",
	"max GPU VRAM used",
};

const char *peak_label(int k)
{
	return pk_label[k];
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

void fmt_clock_tenths(double s, char *buf, size_t size)
{
	long t;

	if (isnan(s)) {
		snprintf(buf, size, "?");
		return;
	}
	if (s < 0)
		s = 0;
	t = (long)(s * 10 + 0.5);
	snprintf(buf, size, "%ld:%02ld:%02ld.%ld", t / 36000, t / 600 % 60, t / 10 % 60, t % 10);
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

/* A size in MiB as people say it: "512 MiB", "8 GiB", "1.5 GiB". */
void fmt_mib(double mb, char *buf, size_t size)
{
	if (isnan(mb))
		snprintf(buf, size, "?");
	else if (mb >= 1024 && fmod(mb, 1024) == 0)
		snprintf(buf, size, "%.0f GiB", mb / 1024);
	else if (mb >= 1024)
		snprintf(buf, size, "%.1f GiB", mb / 1024);
	else
		snprintf(buf, size, "%.0f MiB", mb);
}

/* "12.3 MiB" or "4.56 GiB"; "-" when not known. */
void fmt_kib(double kib, char *buf, size_t size)
{
	if (isnan(kib))
		snprintf(buf, size, "-");
	else if (kib >= 1024.0 * 1024.0)
		snprintf(buf, size, "%.2f GiB", kib / 1024.0 / 1024.0);
	else
		snprintf(buf, size, "%.1f MiB", kib / 1024.0);
}

void fmt_val(int k, double v, double aux, char *buf, size_t size)
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

double mib(double kib)
{
	return kib / 1024.0;
}

/* Which peaks apply: the ones whose column the CSV has. */
int peak_applies(const struct sys *s, int k)
{
	static const int col_of[PK_N] = {
		SC_USED, SC_AVAIL, SC_SWAP, SC_DISK, SC_LOAD1, SC_CPU, SC_PKG_W, SC_GPU_BUSY,
		SC_GPU_VRAM,
	};
	return s->col[col_of[k]] >= 0;
}

/* Was near-OOM judged at all: an available-memory reading, host or cgroup? */
int near_known(const struct sys *s)
{
	return s->pk[PK_MEM_AVAIL].known || s->cg_avail.known;
}

struct sty sty_of(const struct opts *o)
{
	struct sty on = { "\033[1m", "\033[31m", "\033[33m", "\033[32m", "\033[0m" };
	struct sty off = { "", "", "", "", "" };
	return o->color ? on : off;
}

const struct proc *listed_next(const struct report *r, size_t *it, struct proc *tmp)
{
	int n;

	if (r->opt && r->opt->list_spill) {
		if (!r->sp_peak)
			return NULL;
		if ((*it)++ == 0 && spill_rewind(r->sp_peak) < 0)
			err(RM_EXIT_FAIL, "cannot read back the sorted rows");
		if ((n = spill_next(r->sp_peak, tmp)) < 0)
			err(RM_EXIT_FAIL, "cannot read back the sorted rows");
		return n ? tmp : NULL;
	}
	while (*it < r->nproc) {
		const struct proc *p = r->order[(*it)++];
		if (p->shown)
			return p;
	}
	return NULL;
}

void out_flush(struct rm_buf *b, const struct opts *o)
{
	if (o->stream && b->len >= (1u << 20))
		rm_out(b);
}

/* The heaviest in-scope row of the exit log, NULL without one. */
const struct proc *largest_row(const struct report *r)
{
	return r->nproc && !isnan(r->order[0]->peak_kib) ? r->order[0] : NULL;
}

/*
 * The job's exact largest process is the kernel's high-water mark of the
 * processes that ended: a daemon still running after CMD has only a
 * sampled peak and no part in it, so it is never named with that figure.
 */
const struct proc *largest_ended_row(const struct report *r)
{
	for (size_t i = 0; i < r->nproc && !isnan(r->order[i]->peak_kib); i++)
		if (!proc_running(r->order[i]))
			return r->order[i];
	return NULL;
}

int proc_running(const struct proc *p)
{
	/* No end, and no exit status: a row with a status ended. */
	return isnan(p->end_s) && !p->exit[0];
}

/*
 * Why the sampled tree total and the cgroup's exact peak differ, from
 * what rm-tree measured at the sampled peak (its job row's peak_file_kib,
 * cg_file_kib, cg_kernel_kib): one line, 0 when there is nothing to say.
 */
int cgroup_gap(const struct job *j, char *buf, size_t size)
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

/* The command names met so far (open addressing, a power of two). */
struct nameset {
	const char **v;
	size_t n, cap;
};

static uint64_t name_hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

/* Whether s was met before; it is met from now on. */
static int nameset_met(struct nameset *ns, const char *s)
{
	size_t i;

	if ((ns->n + 1) * 2 > ns->cap) {
		struct nameset g = { xmalloc((ns->cap ? ns->cap * 2 : 64) * sizeof(*g.v)), ns->n,
				     ns->cap ? ns->cap * 2 : 64 };
		memset(g.v, 0, g.cap * sizeof(*g.v));
		for (size_t k = 0; k < ns->cap; k++) {
			if (!ns->v[k])
				continue;
			for (i = name_hash(ns->v[k]) & (g.cap - 1); g.v[i]; i = (i + 1) & (g.cap - 1))
				;
			g.v[i] = ns->v[k];
		}
		free(ns->v);
		*ns = g;
	}
	for (i = name_hash(s) & (ns->cap - 1); ns->v[i]; i = (i + 1) & (ns->cap - 1))
		if (strcmp(ns->v[i], s) == 0)
			return 1;
	ns->v[i] = s;
	ns->n++;
	return 0;
}

int filtered(const struct report *r, const struct opts *o, struct filt *f)
{
	struct nameset met = { 0 };
	size_t len = 0;

	memset(f, 0, sizeof(*f));
	if (!o->has_inc && !o->has_exc)
		return 0;
	if (r->fold) {
		fold_filt(r, f);
		return 1;
	}
	/* A name once, at its heaviest row (shown or not): a set of the
	 * names met, not a look back over every heavier row for each. */
	for (size_t i = 0; i < r->nproc; i++) {
		const struct proc *p = r->order[i];
		int seen = nameset_met(&met, p->comm);
		if (p->shown) {
			f->shown++;
			continue;
		}
		f->hidden++;
		if (!isnan(p->peak_kib))
			f->hidden_kib += p->peak_kib;
		if (!seen && len + strlen(p->comm) + 3 < sizeof(f->names) - 4) {
			len += (size_t)snprintf(f->names + len, sizeof(f->names) - len, "%s%s",
						len ? ", " : "", p->comm);
		}
	}
	free(met.v);
	return 1;
}

void filter_words(struct rm_buf *b, const struct opts *o)
{
	if (o->has_inc)
		rm_buf_addf(b, "--include '%s'", o->inc_pat ? o->inc_pat : "?");
	if (o->has_inc && o->has_exc)
		rm_buf_addc(b, ' ');
	if (o->has_exc)
		rm_buf_addf(b, "--exclude '%s'", o->exc_pat ? o->exc_pat : "?");
}

/* The warning when the filters leave nothing: what to try instead. */
void filter_warning(struct rm_buf *b, const struct report *r, const struct opts *o,
			   const struct filt *f)
{
	rm_buf_adds(b, "no process matches ");
	filter_words(b, o);
	rm_buf_addf(b, ": the %zu processes are in the totals but none is listed. "
		    "The patterns are POSIX extended regular expressions, case-sensitive, "
		    "matched against the name, the command line and the compile unit", r->nrows);
	if (f->names[0])
		rm_buf_addf(b, "; names seen: %s. Try --include with one of them", f->names);
	if (o->has_exc)
		rm_buf_adds(b, ", or drop --exclude");
	rm_buf_adds(b, ".");
}

/* rm-run --memory-max: did CMD fit the budget, and if not, who was killed. */
void budget_line(const struct report *r, char *buf, size_t size)
{
	const struct job *j = &r->job;
	char victim[sizeof(j->victim) + 300];
	const char *pp = strstr(j->victim, "(PID ");
	int n = snprintf(buf, size, "%.1f MiB: ", mib(j->mem_max_kib));

	/* The victim's unit, from its exit-log row (the PID's killed row). */
	snprintf(victim, sizeof(victim), "%s", j->victim);
	for (size_t i = 0; pp && i < r->nproc; i++) {
		const struct proc *p = &r->procs[i];
		if (p->pid == atoi(pp + 5) && p->unit &&
		    (strcmp(p->exit, "137") == 0 || strcmp(p->exit, "SIGKILL") == 0)) {
			snprintf(victim, sizeof(victim), "`%s` (%s, PID %d)", p->unit, p->comm, p->pid);
			break;
		}
	}

	if (n < 0 || (size_t)n >= size)
		return;
	if (isnan(j->oom_kills))
		snprintf(buf + n, size - (size_t)n, "OOM kills inside it unknown");
	else if (j->oom_kills > 0)
		snprintf(buf + n, size - (size_t)n, "OOM-killed inside the budget (%.0f kill%s%s%s%s)",
			 j->oom_kills, j->oom_kills == 1 ? "" : "s", j->victim[0] ? ", first victim " : "",
			 victim, j->victim[0] ? "" : ", victim not in the kernel log");
	else
		snprintf(buf + n, size - (size_t)n, "fitted, no OOM kill");
	n = (int)strlen(buf);
	if (!isnan(j->cgroup_kib) && (size_t)n < size)
		snprintf(buf + n, size - (size_t)n, "; exact peak %.1f MiB (%.0f %%)", mib(j->cgroup_kib),
			 100.0 * j->cgroup_kib / j->mem_max_kib);
}

/* The -j advice: the smaller of the effective cores and what memory
 * allows, and which of the two binds. */
long safe_jobs(const struct report *r, const struct perjob *pj)
{
	return r->cores > 0 && r->cores < pj->safe_j ? r->cores : pj->safe_j;
}

const char *jobs_bound(const struct report *r, const struct perjob *pj)
{
	if (r->cores > 0 && r->cores < pj->safe_j)
		return "cores";
	if (pj->bound[0])
		return pj->bound;
	return r->ram_budget ? "memory budget" : isnan(r->host_ram_mb) ? "memory" : "cgroup memory";
}

const char *oom_cause(int constraint)
{
	switch (constraint) {
	case RM_OOM_MEMCG:
		return "killed by the limit of cgroup";
	case RM_OOM_CPUSET:
		return "killed when the memory nodes of its cpuset ran out";
	case RM_OOM_MEMORY_POLICY:
		return "killed when the memory nodes of its memory policy ran out";
	case RM_OOM_NONE:
		return "killed when the host ran out of memory";
	default:
		return "";
	}
}

/* Markdown table cells: | and the inline markup characters escaped. */
void md_cell(struct rm_buf *b, const char *s)
{
	for (; *s; s++) {
		if (strchr("|\\`*_[]<>#", *s))
			rm_buf_addc(b, '\\');
		rm_buf_addc(b, *s);
	}
}

void md_proc_row(struct rm_buf *b, const struct proc *p)
{
	rm_buf_addf(b, "| %d | ", p->pid);
	md_cell(b, p->comm);
	rm_buf_adds(b, emu_mark(p->emulated));
	rm_buf_addf(b, " | %.1f | ", mib(p->peak_kib));
	md_cell(b, p->rcmd);
	rm_buf_adds(b, " |\n");
}

const char *emu_mark(int emulated)
{
	return emulated == 1 ? " (emulated)" : "";
}

void emulated_note(struct rm_buf *b, const struct report *r, const char *lead)
{
	if (!r->nemulated)
		return;
	rm_buf_addf(b, "%s%zu process%s ran emulated, marked (emulated): argv[0] a binfmt_misc "
		    "interpreter (qemu-user). The peaks of emulated processes include the "
		    "emulator's own memory (qemu's translation cache): the same programs run "
		    "natively peak lower, so size a native build's -j from a native run.\n",
		    lead, r->nemulated, r->nemulated == 1 ? "" : "es");
}

void jkey_emulated(struct rm_buf *b, int *first, int emulated)
{
	jkey(b, first, "emulated");
	rm_buf_adds(b, emulated == 1 ? "true" : emulated == 0 ? "false" : "null");
}

/* JSON helpers: a number or null, a key. */
void jnum(struct rm_buf *b, double v, int prec)
{
	if (isnan(v) || isinf(v))
		rm_buf_adds(b, "null");
	else
		rm_buf_num(b, v, prec);
}

void jiso(struct rm_buf *b, double epoch)
{
	char iso[40];

	if (isnan(epoch)) {
		rm_buf_adds(b, "null");
		return;
	}
	rm_fmt_iso(epoch, iso, sizeof(iso));
	rm_buf_json(b, iso);
}

void jkey(struct rm_buf *b, int *first, const char *k)
{
	if (!*first)
		rm_buf_addc(b, ',');
	*first = 0;
	rm_buf_json(b, k);
	rm_buf_addc(b, ':');
}

void jtime(struct rm_buf *b, int *first, const struct sys *s, double epoch)
{
	jkey(b, first, "epoch");
	jnum(b, epoch, 3);
	jkey(b, first, "iso");
	jiso(b, epoch);
	jkey(b, first, "elapsed_s");
	jnum(b, epoch - s->first_epoch, 3);
}

void jstage(struct rm_buf *b, int *first, const struct report *r, int stage)
{
	jkey(b, first, "stage");
	if (stage < 0)
		rm_buf_adds(b, "null");
	else
		rm_buf_json(b, stage_name(r, stage));
}

/* An exit status: a number when it is one, null when empty, else text. */
void jexit(struct rm_buf *b, const char *e)
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

/* A string, or null when it is NULL or empty. */
void jstr_or_null(struct rm_buf *b, const char *s)
{
	if (s && s[0])
		rm_buf_json(b, s);
	else
		rm_buf_adds(b, "null");
}

/* key and value in one: a number (or null), a whole number, a string. */
void jkey_num(struct rm_buf *b, int *first, const char *k, double v, int prec)
{
	jkey(b, first, k);
	jnum(b, v, prec);
}

void jkey_long(struct rm_buf *b, int *first, const char *k, long v)
{
	jkey(b, first, k);
	if (v < 0) {
		rm_buf_addc(b, '-');
		rm_buf_u64(b, -(uint64_t)v);
	} else {
		rm_buf_u64(b, (uint64_t)v);
	}
}

void jkey_str(struct rm_buf *b, int *first, const char *k, const char *s)
{
	jkey(b, first, k);
	if (s)
		rm_buf_json(b, s);
	else
		rm_buf_adds(b, "null");
}

int in_containers(const struct report *r)
{
	return r->ctrs.ntied > 0 || r->ctrs.clients > 0;
}

int host_scoped(const struct report *r)
{
	return in_containers(r) || !isnan(r->host_ram_mb) || r->ram_budget;
}

int host_peak(const struct report *r, int k)
{
	return host_scoped(r) && (k == PK_MEM_USED || k == PK_MEM_AVAIL || k == PK_SWAP ||
				    k == PK_LOAD || k == PK_CPU);
}

double ctr_limit_at(const struct ctr *c, double t)
{
	double lim = NAN;

	for (int i = 0; i < c->nlimits; i++)
		if (i == 0 || c->limit_at[i] <= t)
			lim = c->limit[i];
	return lim;
}

int ctr_lower(const struct ctr *c)
{
	return c->gone || !c->peak_col;
}

/* "600 MiB", "600 MiB, 440 MiB from +0:12:51", "none" (KiB in). */
void fmt_ctr_limit(const struct report *r, const struct ctr *c, char *buf, size_t size)
{
	size_t n = 0;
	double t0 = r->sys ? r->sys->first_epoch : c->first_epoch;

	buf[0] = '\0';
	for (int i = 0; i < c->nlimits && n < size; i++) {
		char lim[40], clk[32];
		if (isnan(c->limit[i]))
			snprintf(lim, sizeof(lim), "none");
		else
			fmt_mib(c->limit[i] / 1024.0, lim, sizeof(lim));
		fmt_clock(c->limit_at[i] - t0, clk, sizeof(clk));
		n += (size_t)snprintf(buf + n, size - n, i ? ", %s from +%s" : "%s", lim, clk);
	}
	if (!c->nlimits)
		snprintf(buf, size, "not read");
	else if (c->limit_changes >= c->nlimits && n < size)
		snprintf(buf + n, size - n, " (%ld changes in all)", c->limit_changes);
}

/* "546.6 MiB at +0:13:05", or "at least 431.2 MiB (last read at +0:13:15)". */
void fmt_ctr_peak(const struct report *r, const struct ctr *c, char *buf, size_t size)
{
	double t0 = r->sys ? r->sys->first_epoch : c->first_epoch;
	char clk[32];

	if (isnan(c->peak_kib)) {
		snprintf(buf, size, "not read");
		return;
	}
	if (ctr_lower(c)) {
		fmt_clock(c->last_read - t0, clk, sizeof(clk));
		snprintf(buf, size, "at least %.1f MiB (last read at +%s)", mib(c->peak_kib), clk);
	} else {
		fmt_clock(c->peak_epoch - t0, clk, sizeof(clk));
		snprintf(buf, size, "%.1f MiB at +%s", mib(c->peak_kib), clk);
	}
}

/* "0", "1 (at +0:13:15)", "3 (2 at +0:01:00, 1 at +0:02:00)". */
void fmt_ctr_ooms(const struct report *r, const struct ctr *c, char *buf, size_t size)
{
	double t0 = r->sys ? r->sys->first_epoch : c->first_epoch;
	size_t n = (size_t)snprintf(buf, size, "%ld", c->oom_kills);

	for (int i = 0; i < c->nrises && n < size; i++) {
		char clk[32];
		fmt_clock(c->rise_at[i] - t0, clk, sizeof(clk));
		if (c->nrises == 1 && c->rise_n[0] == c->oom_kills)
			n += (size_t)snprintf(buf + n, size - n, " (at +%s)", clk);
		else
			n += (size_t)snprintf(buf + n, size - n, "%s%ld at +%s%s", i ? ", " : " (",
					      c->rise_n[i], clk, i + 1 == c->nrises ? ")" : "");
	}
	if (c->kmsg_kills > c->oom_kills && n < size)
		snprintf(buf + n, size - n, "%s%ld in the kernel log", c->oom_kills ? "; " : " (",
			 c->kmsg_kills);
	if (c->kmsg_kills > c->oom_kills && !c->oom_kills && strlen(buf) + 2 < size)
		strcat(buf, ")");
}

/* The stages it ran in, "core, app"; "-" for none. */
void fmt_ctr_stages(const struct report *r, const struct ctr *c, char *buf, size_t size)
{
	size_t n = 0;

	buf[0] = '\0';
	for (int i = 0; i < c->nst && n < size; i++) {
		const char *sn = stage_name(r, c->st[i].stage);
		n += (size_t)snprintf(buf + n, size - n, "%s%s", i ? ", " : "", sn[0] ? sn : "(none)");
	}
	if (!c->nst)
		snprintf(buf, size, "-");
}

/* "61fa62343399 (crossbuild-app)" or "61fa62343399". */
void fmt_ctr_name(const struct ctr *c, char *buf, size_t size)
{
	if (c->name[0])
		snprintf(buf, size, "%s (%s)", c->shortid, c->name);
	else
		snprintf(buf, size, "%s", c->shortid);
}
