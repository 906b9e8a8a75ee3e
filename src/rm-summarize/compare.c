/*
 * compare.c: --compare OLD NEW (see compare.h).  Two built reports in,
 * one comparison out, in the format the options pick; nothing here
 * changes a report.  Every figure is one the summary of either run
 * prints, so a comparison never disagrees with the two summaries.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "fmt.h"
#include "runfig.h"

/* The longest directory prefix ("/a/b/") all absolute unit names of r
 * share; its length, 0 when there is none. */
static size_t abs_prefix(const struct report *r)
{
	const char *first = NULL;
	size_t len = 0;

	for (size_t i = 0; i < r->nunits; i++) {
		const char *n = r->units[i].name;
		size_t k = 0;
		if (n[0] != '/')
			continue;
		if (!first) {
			const char *slash = strrchr(n, '/');
			first = n;
			len = (size_t)(slash - n) + 1;
			continue;
		}
		while (k < len && n[k] == first[k])
			k++;
		while (k > 0 && first[k - 1] != '/')
			k--;
		len = k;
	}
	return len;
}

static const char *key_of(const struct unit *u, size_t prefix)
{
	return u->name[0] == '/' ? u->name + prefix : u->name;
}

/* Does path a end in the whole components of b ("x/y.c" ends "y.c")? */
static int ends_in(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);

	return lb < la && strcmp(a + la - lb, b) == 0 && a[la - lb - 1] == '/';
}

static double change_mib(const struct upair *p)
{
	if (p->a && p->b)
		return (p->b->peak_kib - p->a->peak_kib) / 1024.0;
	return NAN;
}

static int pair_rank(const struct upair *p)
{
	if (p->ambiguous)
		return 3;
	return p->a && p->b ? 0 : p->b ? 1 : 2;
}

static int pair_cmp(const void *x, const void *y)
{
	const struct upair *a = x, *b = y;
	int ra = pair_rank(a), rb = pair_rank(b);
	double ca, cb;

	if (ra != rb)
		return ra - rb;
	if (ra == 0) {
		ca = fabs(change_mib(a));
		cb = fabs(change_mib(b));
		if (ca != cb)
			return ca < cb ? 1 : -1;
	}
	return strcmp(a->key, b->key);
}

void compare_units(const struct report *a, const struct report *b, struct cmp_units *out)
{
	size_t pa = abs_prefix(a), pb = abs_prefix(b);
	char *used = calloc(b->nunits + 1, 1);
	char *aleft = calloc(a->nunits + 1, 1);

	if (!used || !aleft)
		abort();
	out->p = xmalloc((a->nunits + b->nunits + 1) * sizeof(*out->p));
	out->n = 0;
	/* The same path relative to the build directory. */
	for (size_t i = 0; i < a->nunits; i++) {
		const char *ka = key_of(&a->units[i], pa);
		size_t j;
		for (j = 0; j < b->nunits; j++)
			if (!used[j] && strcmp(ka, key_of(&b->units[j], pb)) == 0)
				break;
		if (j < b->nunits) {
			used[j] = 1;
			out->p[out->n++] = (struct upair){ &a->units[i], &b->units[j], ka, 0 };
		} else {
			aleft[i] = 1;
		}
	}
	/* Then the one unit whose path ends in the same components. */
	for (size_t i = 0; i < a->nunits; i++) {
		const char *ka = key_of(&a->units[i], pa);
		size_t cand = 0, at = 0;
		if (!aleft[i])
			continue;
		for (size_t j = 0; j < b->nunits; j++) {
			const char *kb = key_of(&b->units[j], pb);
			if (!used[j] && (ends_in(ka, kb) || ends_in(kb, ka))) {
				cand++;
				at = j;
			}
		}
		if (cand == 1) {
			used[at] = 1;
			out->p[out->n++] = (struct upair){ &a->units[i], &b->units[at], ka, 0 };
		} else {
			out->p[out->n++] = (struct upair){ &a->units[i], NULL, ka, cand > 1 ? (int)cand : 0 };
		}
	}
	for (size_t j = 0; j < b->nunits; j++)
		if (!used[j])
			out->p[out->n++] = (struct upair){ NULL, &b->units[j], key_of(&b->units[j], pb), 0 };
	qsort(out->p, out->n, sizeof(*out->p), pair_cmp);
	free(used);
	free(aleft);
}

void compare_units_free(struct cmp_units *u)
{
	free(u->p);
	u->p = NULL;
	u->n = 0;
}

/* One run-level figure of both runs. */
struct fig {
	const char *name;      /* text and Markdown */
	const char *key;       /* JSON */
	const char *unit;      /* "s", "MiB", "" */
	double a, b;
	int prec;
	char what_a[160], what_b[160];  /* the largest process: which */
};

static double fpct(const struct fig *f)
{
	return f->a > 0 && !isnan(f->b) ? (f->b - f->a) / f->a * 100.0 : NAN;
}

static int fig_cmp(const void *x, const void *y)
{
	double a = fabs(fpct(x)), b = fabs(fpct(y));

	if (isnan(a) != isnan(b))
		return isnan(a) ? 1 : -1;
	if (a != b && !isnan(a))
		return a < b ? 1 : -1;
	return strcmp(((const struct fig *)x)->name, ((const struct fig *)y)->name);
}

static void largest(const struct report *r, double *kib, char *what, size_t size)
{
	const struct proc *p = largest_row(r);

	*kib = p ? p->peak_kib : NAN;
	what[0] = '\0';
	if (p)
		snprintf(what, size, "%s%s%s", p->comm, p->unit ? " " : "", p->unit ? p->unit : "");
}

static struct fig mkfig(const char *name, const char *key, const char *unit, double a, double b,
			int prec)
{
	struct fig f;

	memset(&f, 0, sizeof(f));
	f.name = name;
	f.key = key;
	f.unit = unit;
	f.a = a;
	f.b = b;
	f.prec = prec;
	return f;
}

/* The run-level figures, biggest change first; how many. */
static size_t figures(const struct report *a, const struct report *b, struct fig *f)
{
	size_t n = 0;
	int ea, eb;

	f[n++] = mkfig("duration", "duration_s", "s", run_duration(a), run_duration(b), 1);
	f[n++] = mkfig("CPU", "cpu_s", "s", run_cpu(a), run_cpu(b), 2);
	f[n++] = mkfig("peak memory used (host)", "mem_used_peak_mb", "MiB",
			       a->sys && a->sys->pk[PK_MEM_USED].known ? a->sys->pk[PK_MEM_USED].v : NAN,
			       b->sys && b->sys->pk[PK_MEM_USED].known ? b->sys->pk[PK_MEM_USED].v : NAN, 0);
	f[n++] = mkfig("min memory available (host)", "mem_avail_min_mb", "MiB",
			       a->sys && a->sys->pk[PK_MEM_AVAIL].known ? a->sys->pk[PK_MEM_AVAIL].v : NAN,
			       b->sys && b->sys->pk[PK_MEM_AVAIL].known ? b->sys->pk[PK_MEM_AVAIL].v : NAN, 0);
	f[n++] = mkfig("min memory available (cgroup)", "cg_avail_min_mb", "MiB",
			       run_cg_avail(a), run_cg_avail(b), 0);
	f[n] = mkfig("build's peak memory", "used_peak_mib", "MiB", run_used_kib(a, &ea) / 1024,
			     run_used_kib(b, &eb) / 1024, 1);
	snprintf(f[n].what_a, sizeof(f[n].what_a), "%s", ea ? "cgroup" : "sampled");
	snprintf(f[n].what_b, sizeof(f[n].what_b), "%s", eb ? "cgroup" : "sampled");
	n++;
	f[n] = mkfig("largest process", "largest_process_mib", "MiB", NAN, NAN, 1);
	largest(a, &f[n].a, f[n].what_a, sizeof(f[n].what_a));
	largest(b, &f[n].b, f[n].what_b, sizeof(f[n].what_b));
	f[n].a /= 1024;
	f[n].b /= 1024;
	n++;
	f[n++] = mkfig("OOM kills", "oom_kills", "", run_ooms(a), run_ooms(b), 0);
	f[n++] = mkfig("near-OOM samples", "near_oom_samples", "",
			       a->sys && near_known(a->sys) ? (double)a->sys->near.samples : NAN,
			       b->sys && near_known(b->sys) ? (double)b->sys->near.samples : NAN, 0);
	qsort(f, n, sizeof(*f), fig_cmp);
	return n;
}

static void num(char *buf, size_t size, double v, int prec)
{
	if (isnan(v))
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "%.*f", prec, v);
}

/* "+12.5 (+10.0 %)" or "" when either side is unknown. */
static void delta(char *buf, size_t size, double a, double b, int prec)
{
	if (isnan(a) || isnan(b)) {
		snprintf(buf, size, "-");
		return;
	}
	if (a > 0)
		snprintf(buf, size, "%+.*f (%+.1f %%)", prec, b - a, (b - a) / a * 100.0);
	else
		snprintf(buf, size, "%+.*f", prec, b - a);
}

static const char *run_name(const struct report *r)
{
	if (r->sys)
		return r->sys->file;
	return r->nfiles ? r->files[0] : "-";
}

static const struct stage *stage_named(const struct report *r, const char *name)
{
	for (int i = 0; i < r->nstages; i++)
		if (strcmp(r->stages[i].name, name) == 0)
			return &r->stages[i];
	return NULL;
}

/* The build's own compilers at once in the stage where the exit log
 * says (the Stages table's figure), else the host-wide count. */
static double stage_comp(const struct report *r, const struct stage *st)
{
	if (!st)
		return NAN;
	return r->has_build_comp && !isnan(st->build_comp) ? st->build_comp : st->max_comp;
}

static const struct perjob *perjob_of(const struct report *r, const char *stage)
{
	for (size_t i = 0; i < r->nperjob; i++)
		if (strcmp(stage_name(r, r->perjob[i].stage), stage) == 0)
			return &r->perjob[i];
	return NULL;
}

/* Every stage name of a, then those only b has: calls fn for each. */
static void each_stage(const struct report *a, const struct report *b,
		       void (*fn)(struct rm_buf *, const char *, const struct report *,
				  const struct report *, int),
		       struct rm_buf *out, int md)
{
	for (int i = 0; i < a->nstages; i++)
		if (a->stages[i].name[0])
			fn(out, a->stages[i].name, a, b, md);
	for (int i = 0; i < b->nstages; i++)
		if (b->stages[i].name[0] && !stage_named(a, b->stages[i].name))
			fn(out, b->stages[i].name, a, b, md);
}

static void cell(struct rm_buf *b, int md, int width, const char *s)
{
	if (md) {
		rm_buf_adds(b, " ");
		md_cell(b, s);
		rm_buf_adds(b, " |");
	} else {
		rm_buf_addf(b, " %*s", width, s);
	}
}

static void stage_row(struct rm_buf *out, const char *name, const struct report *a,
		      const struct report *b, int md)
{
	const struct stage *sa = stage_named(a, name), *sb = stage_named(b, name);
	char v[4][48], d[2][48];

	num(v[0], 48, sa ? sa->duration : NAN, 0);
	num(v[1], 48, sb ? sb->duration : NAN, 0);
	delta(d[0], 48, sa ? sa->duration : NAN, sb ? sb->duration : NAN, 0);
	num(v[2], 48, sa ? sa->peak_used : NAN, 0);
	num(v[3], 48, sb ? sb->peak_used : NAN, 0);
	delta(d[1], 48, sa ? sa->peak_used : NAN, sb ? sb->peak_used : NAN, 0);
	if (md) {
		rm_buf_adds(out, "|");
		cell(out, 1, 0, name);
	} else {
		rm_buf_addf(out, "  %-16s", name);
	}
	for (int k = 0; k < 2; k++) {
		char ab[200];
		snprintf(ab, sizeof(ab), "%s -> %s", v[2 * k], v[2 * k + 1]);
		cell(out, md, 16, ab);
		cell(out, md, 18, d[k]);
	}
	{
		char c[64], ca[24], cb[24];
		num(ca, sizeof(ca), stage_comp(a, sa), 0);
		num(cb, sizeof(cb), stage_comp(b, sb), 0);
		snprintf(c, sizeof(c), "%s -> %s", ca, cb);
		cell(out, md, 10, c);
	}
	rm_buf_adds(out, md ? "\n" : "\n");
}

static void jobs_row(struct rm_buf *out, const char *name, const struct report *a,
		     const struct report *b, int md)
{
	const struct perjob *pa = perjob_of(a, name), *pb = perjob_of(b, name);
	char ja[160] = "-", jb[160] = "-", line[330];

	if (!pa && !pb)
		return;
	if (pa && pa->safe_j > 0)
		snprintf(ja, sizeof(ja), "-j %ld (%.0f MiB a job, bound by %s)", safe_jobs(a, pa),
			 pa->suggest_mb, jobs_bound(a, pa));
	if (pb && pb->safe_j > 0)
		snprintf(jb, sizeof(jb), "-j %ld (%.0f MiB a job, bound by %s)", safe_jobs(b, pb),
			 pb->suggest_mb, jobs_bound(b, pb));
	snprintf(line, sizeof(line), "%s -> %s", ja, jb);
	if (md) {
		rm_buf_adds(out, "|");
		cell(out, 1, 0, name);
		cell(out, 1, 0, line);
		rm_buf_adds(out, "\n");
	} else {
		rm_buf_addf(out, "  %-16s %s\n", name, line);
	}
}

static void unit_line(struct rm_buf *out, const struct upair *p, int md)
{
	char va[32], vb[32], d[48];

	num(va, sizeof(va), p->a ? p->a->peak_kib / 1024 : NAN, 1);
	num(vb, sizeof(vb), p->b ? p->b->peak_kib / 1024 : NAN, 1);
	delta(d, sizeof(d), p->a ? p->a->peak_kib / 1024 : NAN, p->b ? p->b->peak_kib / 1024 : NAN, 1);
	if (md) {
		rm_buf_adds(out, "|");
		cell(out, 1, 0, p->key);
		cell(out, 1, 0, va);
		cell(out, 1, 0, vb);
		cell(out, 1, 0, p->a && p->b ? d : p->ambiguous ? "ambiguous" : p->b ? "added" : "removed");
		rm_buf_adds(out, "\n");
		return;
	}
	rm_buf_addf(out, "  %9s %9s  %-20s %s", va, vb,
		    p->a && p->b ? d : p->ambiguous ? "ambiguous" : p->b ? "added" : "removed", p->key);
	if (p->ambiguous)
		rm_buf_addf(out, " (%d units of the new run end so)", p->ambiguous);
	rm_buf_adds(out, "\n");
}

/* The run-level figures, one line or table row each. */
static void figure_lines(struct rm_buf *out, const struct fig *f, size_t nf, int md)
{
	for (size_t i = 0; i < nf; i++) {
		char va[48], vb[48], d[48], name[200];
		if (isnan(f[i].a) && isnan(f[i].b))
			continue;
		num(va, sizeof(va), f[i].a, f[i].prec);
		num(vb, sizeof(vb), f[i].b, f[i].prec);
		delta(d, sizeof(d), f[i].a, f[i].b, f[i].prec);
		snprintf(name, sizeof(name), "%s%s%s", f[i].name, f[i].unit[0] ? ", " : "", f[i].unit);
		if (md) {
			rm_buf_adds(out, "|");
			cell(out, 1, 0, name);
			cell(out, 1, 0, va);
			cell(out, 1, 0, vb);
			cell(out, 1, 0, d);
			rm_buf_adds(out, "\n");
		} else {
			rm_buf_addf(out, "  %-30s %14s %14s  %s", name, va, vb, d);
			if (f[i].what_a[0] || f[i].what_b[0])
				rm_buf_addf(out, "  (%s -> %s)", f[i].what_a[0] ? f[i].what_a : "-",
					    f[i].what_b[0] ? f[i].what_b : "-");
			rm_buf_adds(out, "\n");
		}
	}
}

static void print_text_md(struct rm_buf *out, const struct report *a, const struct report *b,
			  const struct opts *o, int md)
{
	struct fig f[12];
	size_t nf = figures(a, b, f);
	struct cmp_units u;
	size_t shown = 0, left = 0;

	if (md) {
		rm_buf_adds(out, "### Build resources compared\n\n");
		rm_buf_adds(out, "Old: ");
		md_cell(out, run_name(a));
		rm_buf_adds(out, "  \nNew: ");
		md_cell(out, run_name(b));
		rm_buf_adds(out, "\n\n| figure | old | new | change |\n|---|---:|---:|---:|\n");
	} else {
		rm_buf_addf(out, "Compared: %s -> %s\n\n", run_name(a), run_name(b));
		rm_buf_addf(out, "  %-30s %14s %14s  %s\n", "figure (biggest change first)", "old", "new",
			    "change");
	}
	figure_lines(out, f, nf, md);
	if (a->nstages || b->nstages) {
		const char *comp = a->has_build_comp && b->has_build_comp ? "compilers" : "compilers*";
		if (md)
			rm_buf_addf(out, "\n| stage | duration s | change | peak used MiB | change | %s |\n"
					 "|---|---:|---:|---:|---:|---:|\n", comp);
		else
			rm_buf_addf(out, "\nStages (compilers: the build's at once%s)\n  %-16s %16s %18s %16s %18s %10s\n",
				    comp[9] ? "; *: host-wide where a run has no exit log" : "", "stage",
				    "duration s", "change", "peak used MiB", "change", comp);
		each_stage(a, b, stage_row, out, md);
	}
	compare_units(a, b, &u);
	if (u.n) {
		rm_buf_addf(out, md ? "\n| compile unit | old MiB | new MiB | change |\n|---|---:|---:|---:|\n"
				    : "\nCompile units (%zu; biggest change first, then added, removed, ambiguous)\n"
				      "  %9s %9s  %-20s %s\n",
			    u.n, "old MiB", "new MiB", "change MiB (%)", "unit");
		for (size_t i = 0; i < u.n; i++) {
			/* Every unit that changed rank or was added/removed;
			 * of the matched ones, --top. */
			if (u.p[i].a && u.p[i].b && shown >= (size_t)o->top) {
				left++;
				continue;
			}
			unit_line(out, &u.p[i], md);
			shown += u.p[i].a && u.p[i].b;
		}
		if (left)
			rm_buf_addf(out, md ? "\n%zu more matched units (`--top all` lists them).\n"
					    : "  ... %zu more matched units (--top all lists them)\n", left);
	}
	compare_units_free(&u);
	if (a->nperjob || b->nperjob) {
		rm_buf_adds(out, md ? "\n| stage | -j advice, old -> new |\n|---|---|\n"
				    : "\nMemory per compile job, -j advice (old -> new)\n");
		each_stage(a, b, jobs_row, out, md);
	}
}

static void jpair(struct rm_buf *b, int *first, const char *key, double a, double c, int prec)
{
	int g = 1;

	jkey(b, first, key);
	rm_buf_addc(b, '{');
	jkey_num(b, &g, "old", a, prec);
	jkey_num(b, &g, "new", c, prec);
	jkey_num(b, &g, "change", isnan(a) || isnan(c) ? NAN : c - a, prec);
	jkey_num(b, &g, "change_pct", a > 0 && !isnan(c) ? (c - a) / a * 100.0 : NAN, 1);
	rm_buf_addc(b, '}');
}

static void print_cmp_json(struct rm_buf *out, const struct report *a, const struct report *b)
{
	struct fig f[12];
	size_t nf = figures(a, b, f);
	struct cmp_units u;
	int top = 1, g;

	rm_buf_addc(out, '{');
	jkey(out, &top, "compare");
	g = 1;
	rm_buf_addc(out, '{');
	jkey_str(out, &g, "old", run_name(a));
	jkey_str(out, &g, "new", run_name(b));
	rm_buf_addc(out, '}');
	jkey(out, &top, "run");
	g = 1;
	rm_buf_addc(out, '{');
	for (size_t i = 0; i < nf; i++) {
		jpair(out, &g, f[i].key, f[i].a, f[i].b, f[i].prec);
		if (f[i].what_a[0] || f[i].what_b[0]) {
			char k[80];
			/* "largest_process_mib" -> "largest_process_what" */
			snprintf(k, sizeof(k), "%.*s_what", (int)(strrchr(f[i].key, '_') - f[i].key), f[i].key);
			jkey(out, &g, k);
			rm_buf_addc(out, '{');
			int h = 1;
			jkey_str(out, &h, "old", f[i].what_a[0] ? f[i].what_a : NULL);
			jkey_str(out, &h, "new", f[i].what_b[0] ? f[i].what_b : NULL);
			rm_buf_addc(out, '}');
		}
	}
	rm_buf_addc(out, '}');
	jkey(out, &top, "stages");
	rm_buf_addc(out, '[');
	g = 1;
	for (int pass = 0; pass < 2; pass++) {
		const struct report *r = pass ? b : a;
		for (int i = 0; i < r->nstages; i++) {
			const char *name = r->stages[i].name;
			const struct stage *sa = stage_named(a, name), *sb = stage_named(b, name);
			const struct perjob *pa = perjob_of(a, name), *pb = perjob_of(b, name);
			int h = 1;
			if (!name[0] || (pass && sa))
				continue;
			if (!g)
				rm_buf_addc(out, ',');
			g = 0;
			rm_buf_addc(out, '{');
			jkey_str(out, &h, "stage", name);
			jpair(out, &h, "duration_s", sa ? sa->duration : NAN, sb ? sb->duration : NAN, 1);
			jpair(out, &h, "peak_used_mb", sa ? sa->peak_used : NAN, sb ? sb->peak_used : NAN, 0);
			jpair(out, &h, "compilers", stage_comp(a, sa), stage_comp(b, sb), 0);
			jpair(out, &h, "safe_j", pa && pa->safe_j > 0 ? (double)safe_jobs(a, pa) : NAN,
			      pb && pb->safe_j > 0 ? (double)safe_jobs(b, pb) : NAN, 0);
			rm_buf_addc(out, '}');
		}
	}
	rm_buf_addc(out, ']');
	compare_units(a, b, &u);
	jkey(out, &top, "units");
	rm_buf_addc(out, '[');
	for (size_t i = 0; i < u.n; i++) {
		const struct upair *p = &u.p[i];
		int h = 1;
		if (i)
			rm_buf_addc(out, ',');
		rm_buf_addc(out, '{');
		jkey_str(out, &h, "unit", p->key);
		jkey_str(out, &h, "status", p->a && p->b ? "matched" : p->ambiguous ? "ambiguous" :
					      p->b ? "added" : "removed");
		jkey_str(out, &h, "old_name", p->a ? p->a->name : NULL);
		jkey_str(out, &h, "new_name", p->b ? p->b->name : NULL);
		jpair(out, &h, "peak_kib", p->a ? p->a->peak_kib : NAN, p->b ? p->b->peak_kib : NAN, 0);
		rm_buf_addc(out, '}');
	}
	rm_buf_addc(out, ']');
	compare_units_free(&u);
	rm_buf_adds(out, "}\n");
}

void print_compare(struct rm_buf *b, const struct report *old, const struct report *cur,
		   const struct opts *o)
{
	if (o->json)
		print_cmp_json(b, old, cur);
	else
		print_text_md(b, old, cur, o, o->markdown);
}
