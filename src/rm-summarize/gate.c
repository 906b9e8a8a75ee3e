/*
 * gate.c: --fail-on (see gate.h).  Each condition reads the same figures
 * the report prints, so a line of the gate never disagrees with the
 * summary under it.  Exact peaks (the kernel's, per process and per
 * unit; a cgroup's) gate growth by default; duration and CPU only when
 * named, as they change from run to run on a shared host.
 */
#include <err.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup.h"
#include "compare.h"
#include "fmt.h"
#include "gate.h"
#include "oom.h"
#include "runfig.h"

static const struct {
	const char *name;
	enum gate_kind k;
	int arg;               /* 0 none, 1 a size, 2 a percent */
} kinds[] = {
	{ "oom", G_OOM, 0 },           { "near-oom", G_NEAR_OOM, 0 },
	{ "swap", G_SWAP, 0 },         { "low-disk", G_LOW_DISK, 0 },
	{ "peak", G_PEAK, 1 },         { "unit", G_UNIT, 1 },
	{ "used", G_USED, 1 },         { "grow", G_GROW, 2 },
	{ "grow-time", G_GROW_TIME, 2 }, { "grow-cpu", G_GROW_CPU, 2 },
};

/* "10%" or "10": a percent from 0; -1 when it is not one. */
static int parse_pct(const char *s, double *v)
{
	char *end;
	double d = strtod(s, &end);

	if (end == s || d < 0 || !isfinite(d))
		return -1;
	if (*end == '%')
		end++;
	if (*end)
		return -1;
	*v = d;
	return 0;
}

static int parse_one(struct gate *g, const char *tok, size_t len, char *why, size_t wsize)
{
	char t[64], *eq;
	struct gate_cond *c;
	size_t i;

	if (len == 0 || len >= sizeof(t)) {
		snprintf(why, wsize, "an empty or overlong condition");
		return -1;
	}
	memcpy(t, tok, len);
	t[len] = '\0';
	eq = strchr(t, '=');
	if (eq)
		*eq++ = '\0';
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strcmp(kinds[i].name, t) == 0)
			break;
	if (i == sizeof(kinds) / sizeof(kinds[0])) {
		snprintf(why, wsize, "unknown condition '%.40s' (oom, near-oom, swap, low-disk, "
			 "peak=SIZE, unit=SIZE, used=SIZE, grow=PCT, grow-time=PCT, grow-cpu=PCT)", t);
		return -1;
	}
	if (!kinds[i].arg != !eq) {
		snprintf(why, wsize, kinds[i].arg ? "'%s' needs =%s" : "'%s' takes no value%s",
			 kinds[i].name, kinds[i].arg == 1 ? "SIZE" : kinds[i].arg == 2 ? "PCT" : "");
		return -1;
	}
	if (g->n >= GATE_MAX) {
		snprintf(why, wsize, "more than %d conditions", GATE_MAX);
		return -1;
	}
	c = &g->c[g->n];
	c->k = kinds[i].k;
	c->v = NAN;
	if (kinds[i].arg == 1) {
		uint64_t bytes;
		if (rm_cg_parse_size(eq, &bytes) < 0) {
			snprintf(why, wsize, "'%.40s': a size such as 600M or 2G", eq);
			return -1;
		}
		c->v = (double)bytes / 1024.0;
	} else if (kinds[i].arg == 2 && parse_pct(eq, &c->v) < 0) {
		snprintf(why, wsize, "'%.40s': a percent such as 10%%", eq);
		return -1;
	}
	memcpy(c->text, tok, len);
	c->text[len] = '\0';
	g->n++;
	return 0;
}

int gate_parse(struct gate *g, const char *s, char *why, size_t wsize)
{
	while (1) {
		size_t len = strcspn(s, ",");
		if (parse_one(g, s, len, why, wsize) < 0)
			return -1;
		if (!s[len])
			return 0;
		s += len + 1;
	}
}

int gate_needs_compare(const struct gate *g)
{
	for (int i = 0; i < g->n; i++)
		if (g->c[i].k == G_GROW || g->c[i].k == G_GROW_TIME || g->c[i].k == G_GROW_CPU)
			return 1;
	return 0;
}

/* "UNIT (COMM, PID N)" of the build's first OOM victim, from the kernel
 * log's record matched to the exit log by PID; "" when none is named. */
static void oom_first_victim(const struct report *r, char *buf, size_t size)
{
	const struct sys *s = r->sys;

	for (size_t i = 0; s && i < s->nev; i++) {
		const struct oomev *e = &s->ev[i];
		if (!oom_event_is_build(e))
			continue;
		for (int k = 0; k < e->nv; k++) {
			const char *unit = NULL;
			if (e->vscope[k] == 0)
				continue;
			/* An inferred row (a PID namespace's) names the unit. */
			for (size_t j = 0; j < r->nproc && !unit; j++)
				if (r->procs[j].pid == (e->vrow[k] ? e->vrow[k] : e->vpid[k]))
					unit = r->procs[j].unit;
			if (unit)
				snprintf(buf, size, "%s (%s, PID %d)", unit, e->vname[k], e->vpid[k]);
			else
				snprintf(buf, size, "%s (PID %d)", e->vname[k], e->vpid[k]);
			return;
		}
	}
	if (r->job.known && r->job.victim[0])
		snprintf(buf, size, "%s", r->job.victim);
}

/* The build's heaviest process (exact where the exit log is). */
static const struct proc *heaviest(const struct report *r)
{
	const struct proc *p = largest_row(r);
	return p && !isnan(p->peak_kib) ? p : NULL;
}

static double pct(double a, double b)
{
	return a > 0 ? (b - a) / a * 100.0 : NAN;
}

/* One "fail-on COND: ..." line. */
static void fired(struct rm_buf *out, const struct gate_cond *c, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void fired(struct rm_buf *out, const struct gate_cond *c, const char *fmt, ...)
{
	char msg[600];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	rm_buf_addf(out, "fail-on %s: %s\n", c->text, msg);
}

/* grow=PCT: the exact peaks of cur against old; how many lines. */
static int eval_grow(const struct gate_cond *c, const struct report *old, const struct report *cur,
		     struct rm_buf *out)
{
	const struct proc *a = heaviest(old), *b = heaviest(cur);
	struct cmp_units u;
	int n = 0, ea, eb;
	double ua = run_used_kib(old, &ea), ub = run_used_kib(cur, &eb);

	if (a && b && pct(a->peak_kib, b->peak_kib) > c->v) {
		fired(out, c, "the largest process grew %.1f %%, %.1f -> %.1f MiB (%s)",
		      pct(a->peak_kib, b->peak_kib), mib(a->peak_kib), mib(b->peak_kib),
		      b->unit ? b->unit : b->comm);
		n++;
	}
	compare_units(old, cur, &u);
	for (size_t i = 0; i < u.n; i++) {
		const struct upair *p = &u.p[i];
		if (p->a && p->b && pct(p->a->peak_kib, p->b->peak_kib) > c->v) {
			fired(out, c, "unit %s grew %.1f %%, %.1f -> %.1f MiB", p->key,
			      pct(p->a->peak_kib, p->b->peak_kib), mib(p->a->peak_kib),
			      mib(p->b->peak_kib));
			n++;
		}
	}
	compare_units_free(&u);
	if (ea && eb && pct(ua, ub) > c->v) {
		fired(out, c, "the cgroup's peak grew %.1f %%, %.1f -> %.1f MiB", pct(ua, ub), mib(ua),
		      mib(ub));
		n++;
	}
	return n;
}

/* Why c cannot be judged on r ("" when it can): a gate must not pass
 * quietly for want of the data it reads. */
static const char *unjudged(const struct gate_cond *c, const struct report *r)
{
	const struct sys *s = r->sys;
	int exact;

	switch (c->k) {
	case G_OOM:
		return isnan(run_ooms(r)) ? "no OOM kill count in the inputs" : "";
	case G_NEAR_OOM:
		return s && near_known(s) ? "" : "no available-memory column in the inputs";
	case G_SWAP:
		return s && peak_applies(s, PK_SWAP) ? "" : "no swap column in the inputs";
	case G_LOW_DISK:
		return s && peak_applies(s, PK_DISK) ? "" : "no disk column in the inputs";
	case G_PEAK:
	case G_UNIT:
		return r->nexitlogs ? "" : "no rm-tree exit log among the inputs "
					   "(--companions finds X.procs.csv beside X.csv)";
	case G_USED:
		return isnan(run_used_kib(r, &exact)) ? "the build's peak memory is not in the inputs" : "";
	default:
		return "";
	}
}

/* unit=SIZE: every unit over SIZE. */
static int eval_units(const struct gate_cond *c, const struct report *r, struct rm_buf *out)
{
	int n = 0;

	for (size_t i = 0; i < r->nunits; i++)
		if (r->units[i].peak_kib > c->v) {
			fired(out, c, "unit %s peaked at %.1f MiB (%s, stage %s)", r->units[i].name,
			      mib(r->units[i].peak_kib), r->units[i].comm, stage_name(r, r->units[i].stage));
			n++;
		}
	return n;
}

/* grow-time=PCT, grow-cpu=PCT. */
static int eval_grow_time(const struct gate_cond *c, const struct report *old,
			  const struct report *r, struct rm_buf *out)
{
	double v = c->k == G_GROW_TIME ? run_duration(old) : run_cpu(old);
	double w = c->k == G_GROW_TIME ? run_duration(r) : run_cpu(r);

	if (!(pct(v, w) > c->v))
		return 0;
	fired(out, c, "%s grew %.1f %%, %.1f -> %.1f s",
	      c->k == G_GROW_TIME ? "the duration" : "the CPU time", pct(v, w), v, w);
	return 1;
}

static int eval_one(const struct gate_cond *c, const struct report *old, const struct report *r,
		    struct rm_buf *out)
{
	const struct sys *s = r->sys;
	const struct proc *p;
	double v;
	int exact;

	switch (c->k) {
	case G_OOM:
		v = run_ooms(r);
		if (v > 0) {
			char who[200] = "";
			oom_first_victim(r, who, sizeof(who));
			fired(out, c, "%.0f OOM kill%s in the build%s%s", v, v == 1 ? "" : "s",
			      who[0] ? ", the first of " : "", who);
			return 1;
		}
		return 0;
	case G_NEAR_OOM:
		if (s && s->near.samples > 0) {
			fired(out, c, "%ld near-OOM sample%s, the first in stage %s", s->near.samples,
			      s->near.samples == 1 ? "" : "s", stage_name(r, s->near.first_stage));
			return 1;
		}
		return 0;
	case G_SWAP:
		if (s && s->pk[PK_SWAP].known && s->pk[PK_SWAP].v > 0) {
			fired(out, c, "swap in use, up to %.0f MiB in stage %s", s->pk[PK_SWAP].v,
			      stage_name(r, s->pk[PK_SWAP].stage));
			return 1;
		}
		return 0;
	case G_LOW_DISK:
		if (s && s->low.samples > 0) {
			fired(out, c, "%ld low-disk sample%s, the first in stage %s", s->low.samples,
			      s->low.samples == 1 ? "" : "s", stage_name(r, s->low.first_stage));
			return 1;
		}
		return 0;
	case G_PEAK:
		p = heaviest(r);
		if (p && p->peak_kib > c->v) {
			fired(out, c, "the largest process peaked at %.1f MiB: %s (%s, PID %d)",
			      mib(p->peak_kib), p->unit ? p->unit : p->comm, p->comm, p->pid);
			return 1;
		}
		return 0;
	case G_UNIT:
		return eval_units(c, r, out);
	case G_USED:
		v = run_used_kib(r, &exact);
		if (v > c->v) {
			fired(out, c, "the build's peak memory was %.1f MiB (%s)", mib(v),
			      exact ? "the cgroup's peak" : "sampled tree total");
			return 1;
		}
		return 0;
	case G_GROW:
		return old ? eval_grow(c, old, r, out) : 0;
	case G_GROW_TIME:
	case G_GROW_CPU:
		return old ? eval_grow_time(c, old, r, out) : 0;
	}
	return 0;
}

int gate_eval(const struct gate *g, const struct report *old, const struct report *cur,
	      struct rm_buf *out, struct rm_buf *notes)
{
	int n = 0;

	for (int i = 0; i < g->n; i++) {
		const char *why = unjudged(&g->c[i], cur);
		if (why[0])
			rm_buf_addf(notes, "fail-on %s: not judged: %s\n", g->c[i].text, why);
		else
			n += eval_one(&g->c[i], old, cur, out);
	}
	return n;
}

/*
 * --fail-on: the conditions that hold, one line each, on stderr and at
 * the top of what is printed (text and Markdown), or in the JSON object
 * as "fail_on" (b holds the object, its closing brace last).
 */
void gate_lines(struct rm_buf *b, const struct rm_buf *lines, size_t from, int json, int md)
{
	if (!lines->len)
		return;
	if (json) {
		/* Reopen the object b ends with: ...}\n -> ...,"fail_on":[...]}\n */
		const char *p = lines->p;
		int first = 1;
		if (b->len < from + 2)
			return;
		b->len -= 2;
		rm_buf_adds(b, ",\"fail_on\":[");
		while (*p) {
			const char *nl = strchr(p, '\n');
			char *one = xstrndup(p, (size_t)(nl - p));
			if (!first)
				rm_buf_addc(b, ',');
			rm_buf_json(b, one);
			free(one);
			first = 0;
			p = nl + 1;
		}
		rm_buf_adds(b, "]}\n");
		return;
	}
	{
		struct rm_buf t = { 0 };
		rm_buf_add(&t, b->p, from);
		if (md)
			rm_buf_adds(&t, "**Budget gate (--fail-on) failed:**\n\n");
		for (const char *p = lines->p; *p;) {
			const char *nl = strchr(p, '\n');
			if (md)
				rm_buf_adds(&t, "- ");
			rm_buf_add(&t, p, (size_t)(nl - p) + 1);
			p = nl + 1;
		}
		rm_buf_addc(&t, '\n');
		rm_buf_add(&t, b->p + from, b->len - from);
		rm_buf_reset(b);
		rm_buf_add(b, t.p, t.len);
		rm_buf_free(&t);
	}
}

/* The fired conditions on stderr, one write a line. */
void gate_stderr(const struct rm_buf *lines)
{
	for (const char *p = lines->p; p && *p;) {
		const char *nl = strchr(p, '\n');
		warnx("%.*s", (int)(nl - p), p);
		p = nl + 1;
	}
}
