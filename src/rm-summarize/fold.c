/*
 * fold.c: the exit log folded as it is read, so that the text report of
 * a long build holds no row it does not show.  What each part of the
 * report needs, kept as the rows come, in the order the derivations that
 * hold every row (model.c) would meet them:
 *   - per command name: count, largest peak, CPU, emulated (By command),
 *     and its heaviest row, shown or not (the filters' names);
 *   - per compile unit: its heaviest row's peak, name, time and emulated;
 *   - every compiler's peak, peak time, start and end (the p95 per stage,
 *     the compilers alive at once): 16 bytes a compiler (comps.c);
 *   - a unit's runs (its compiles counted once per driver, by walking
 *     the parents as the rows come: unitwalk.c), bounded by the units and
 *     the processes awaited, not by the rows;
 *   - whole rows only for the top N, the top 5 by write, read and reclaim
 *     stall, the largest, the largest ended, the survivors and killed
 *     compilers.
 * Every report folds (text, Markdown, JSON) but --compare, --fail-on,
 * --memwatch, --now and an exit log with an OOM kill to tie to a row,
 * which hold every row.  What lists every row (--csv, --trace, and the
 * process list of --top over 1000 or of the JSON without --top) takes
 * each as it is read into an external sort (spill.c).
 * The result is byte for byte what holding every row gives
 * (tests/tools/summarize-golden.sh; rm-summarize.bats compares the two
 * on a generated log).
 *
 * This file is long because each folded figure sits beside the replay of
 * the derivation it stands for (model.c's lists and order, scopeout.c's
 * I/O sums), so that the two can be read side by side.  The units' runs
 * (unitwalk.c, which the held rows count with too) and the compilers'
 * figures (comps.c) have files of their own.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comps.h"
#include "containers.h"
#include "cu.h"
#include "fmt.h"
#include "fold.h"
#include "spill.h"
#include "unitwalk.h"

enum { R_TOP = 1, R_LARGEST = 2, R_ENDED = 4, R_KEEP = 8, R_IO = 16 /* 16, 32, 64 */ };
enum { D_RECLAIM = 3 };

struct fkeep {
	struct proc p;
	size_t seq;
	unsigned roles;
	int gathered;
};

struct fcomm {
	char *comm;
	long count;             /* shown rows */
	double peak, cpu;
	int emulated;
	int compiler;           /* rm_cu_is_compiler of it; -1 not asked yet */
	double best_peak;       /* the heaviest row of any (by_peak's key) */
	int best_pid, best_shown;
	size_t best_seq;
};

struct funit {
	char *name;
	const char *comm;
	double peak, t;
	int emulated, count, listed;
};

/* A bounded heap of kept rows, the worst at the root: by peak (key -1,
 * model.c's by_peak) or by write, read or reclaim stall (scopeout.c's
 * by_key), read order where they tie. */
struct kheap {
	struct fkeep **v;
	size_t n, cap;
	int key;
	unsigned role;
};

struct shash {
	size_t *slot;           /* index + 1, 0 empty */
	size_t cap, n;
};

struct fold {
	struct fcomm *c;
	size_t nc, capc;
	struct shash hc;
	struct funit *u;
	size_t nu, capu;
	struct shash hu;
	struct comps cp;        /* every compiler's figures (comps.c) */
	struct uwalk *uw;       /* the units' runs (unitwalk.c) */
	struct kheap top, io[3];   /* the top N shown; the top 5 by write, read, reclaim */
	struct fkeep *largest, *ended;
	struct fkeep **keep;
	size_t nkeep, capkeep;
	long *uids;
	size_t nuid, capuid;
	struct fold_io fio;
	double off;             /* rm-tree's time 0, for a row's stage */
	size_t cur;             /* the command fold_compiler looked up */
	size_t seq, hidden;
	double hidden_kib;
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

/* The index of key in h (names[i] by get), or (size_t)-1 and *slot where
 * to add it. */
static size_t shash_find(struct shash *h, const char *key, const char *(*get)(const struct fold *, size_t),
			 const struct fold *f, size_t *slot)
{
	size_t i;

	if (h->cap == 0 || (h->n + 1) * 2 > h->cap) {
		size_t ncap = h->cap ? h->cap * 2 : 64, *ns = calloc(ncap, sizeof(*ns));
		if (!ns)
			abort();
		for (size_t k = 0; k < h->cap; k++) {
			if (!h->slot[k])
				continue;
			for (i = hash_str(get(f, h->slot[k] - 1)) & (ncap - 1); ns[i]; i = (i + 1) & (ncap - 1))
				;
			ns[i] = h->slot[k];
		}
		free(h->slot);
		h->slot = ns;
		h->cap = ncap;
	}
	for (i = hash_str(key) & (h->cap - 1); h->slot[i]; i = (i + 1) & (h->cap - 1))
		if (strcmp(get(f, h->slot[i] - 1), key) == 0)
			return h->slot[i] - 1;
	*slot = i;
	return (size_t)-1;
}

static const char *comm_of(const struct fold *f, size_t i) { return f->c[i].comm; }
static const char *unit_of(const struct fold *f, size_t i) { return f->u[i].name; }

#define GROW(v, n, cap, init) do { \
	if ((n) == (cap)) { \
		(cap) = (cap) ? (cap) * 2 : (init); \
		(v) = xrealloc((v), (cap) * sizeof(*(v))); \
	} \
} while (0)

static size_t comm_id(struct fold *f, const char *comm, int emulated)
{
	size_t slot, i = shash_find(&f->hc, comm, comm_of, f, &slot);

	if (i != (size_t)-1)
		return i;
	GROW(f->c, f->nc, f->capc, 16);
	i = f->nc++;
	memset(&f->c[i], 0, sizeof(f->c[i]));
	f->c[i].comm = xstrndup(comm, strlen(comm));
	f->c[i].emulated = emulated;
	f->c[i].best_peak = -2;
	f->c[i].compiler = -1;
	f->hc.slot[slot] = i + 1;
	f->hc.n++;
	return i;
}

static size_t unit_id(struct fold *f, const char *unit)
{
	size_t slot, i = shash_find(&f->hu, unit, unit_of, f, &slot);

	if (i != (size_t)-1)
		return i;
	GROW(f->u, f->nu, f->capu, 16);
	i = f->nu++;
	memset(&f->u[i], 0, sizeof(f->u[i]));
	f->u[i].name = xstrndup(unit, strlen(unit));
	f->u[i].peak = -1;
	f->hu.slot[slot] = i + 1;
	f->hu.n++;
	return i;
}

static double pkey(double v)
{
	return isnan(v) ? -1 : v;
}

/* model.c's by_peak, and read order where it ties (its sort is stable). */
static int better(const struct proc *x, size_t xs, const struct proc *y, size_t ys)
{
	double px = pkey(x->peak_kib), py = pkey(y->peak_kib);

	if (px != py)
		return px > py;
	if (x->pid != y->pid)
		return x->pid < y->pid;
	return xs < ys;
}

static void release(struct fkeep *k, unsigned role)
{
	if (!k)
		return;
	k->roles &= ~role;
	if (k->roles)
		return;
	free(k->p.cmd);
	free(k->p.unit);
	free(k);
}

static double io_key(const struct proc *p, int key)
{
	return key == 0 ? p->write_kib : key == 1 ? p->read_kib : p->delay_ms[D_RECLAIM];
}

static int hbetter(const struct kheap *h, const struct proc *x, size_t xs, const struct proc *y, size_t ys)
{
	double kx, ky;

	if (h->key < 0)
		return better(x, xs, y, ys);
	kx = io_key(x, h->key);
	ky = io_key(y, h->key);
	if (kx != ky)
		return kx > ky;
	if (x->pid != y->pid)
		return x->pid < y->pid;
	return xs < ys;
}

static int kbetter(const struct kheap *h, const struct fkeep *a, const struct fkeep *b)
{
	return hbetter(h, &a->p, a->seq, &b->p, b->seq);
}

static void heap_down(struct kheap *h, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, w = i;
		if (l < h->n && kbetter(h, h->v[w], h->v[l]))
			w = l;
		if (l + 1 < h->n && kbetter(h, h->v[w], h->v[l + 1]))
			w = l + 1;
		if (w == i)
			return;
		struct fkeep *t = h->v[i];
		h->v[i] = h->v[w];
		h->v[w] = t;
		i = w;
	}
}

static void heap_up(struct kheap *h, size_t i)
{
	while (i > 0 && kbetter(h, h->v[(i - 1) / 2], h->v[i])) {
		struct fkeep *t = h->v[i];
		h->v[i] = h->v[(i - 1) / 2];
		h->v[(i - 1) / 2] = t;
		i = (i - 1) / 2;
	}
}

static struct fkeep *keep_new(struct fkeep *k, const struct proc *p, size_t seq, unsigned role)
{
	if (!k) {
		k = xmalloc(sizeof(*k));
		k->p = *p;
		k->seq = seq;
		k->roles = 0;
		k->gathered = 0;
	}
	k->roles |= role;
	return k;
}

/* Offer p to h; the kept row (k, or a new one) when h took it. */
static struct fkeep *heap_offer(struct kheap *h, struct fkeep *k, const struct proc *p, size_t seq)
{
	if (h->cap == 0)
		return k;
	if (h->n < h->cap) {
		if (!h->v)
			h->v = xmalloc(h->cap * sizeof(*h->v));
		k = keep_new(k, p, seq, h->role);
		h->v[h->n++] = k;
		heap_up(h, h->n - 1);
	} else if (hbetter(h, p, seq, &h->v[0]->p, h->v[0]->seq)) {
		k = keep_new(k, p, seq, h->role);
		release(h->v[0], h->role);
		h->v[0] = k;
		heap_down(h, 0);
	}
	return k;
}

static int regmatch(const regex_t *re, const struct proc *p)
{
	return regexec(re, p->comm, 0, NULL, 0) == 0 || regexec(re, p->cmd, 0, NULL, 0) == 0 ||
	       (p->unit && regexec(re, p->unit, 0, NULL, 0) == 0);
}

/* fmt.c's proc_running: no end, and no exit status. */
static int running(const struct proc *p)
{
	return isnan(p->end_s) && !p->exit[0];
}

static int killed(const struct proc *p)
{
	return p->unit && (strcmp(p->exit, "137") == 0 || strcmp(p->exit, "SIGKILL") == 0);
}

/* Keep p whole where a part of the report may show it: among the top N
 * shown, the top 5 by I/O, the largest, the largest ended, a survivor or
 * a killed compiler.  NULL: none of them (p's strings are the caller's). */
static struct fkeep *fold_keep(struct fold *f, const struct proc *p, size_t seq)
{
	struct fkeep *k = NULL;

	if (p->shown) {
		k = heap_offer(&f->top, k, p, seq);
		for (int i = 0; i < 3; i++)
			if (!isnan(io_key(p, i)) && io_key(p, i) > 0)
				k = heap_offer(&f->io[i], k, p, seq);
	}
	if (!f->largest || better(p, seq, &f->largest->p, f->largest->seq)) {
		k = keep_new(k, p, seq, R_LARGEST);
		release(f->largest, R_LARGEST);
		f->largest = k;
	}
	if (!isnan(p->peak_kib) && !running(p) &&
	    (!f->ended || better(p, seq, &f->ended->p, f->ended->seq))) {
		k = keep_new(k, p, seq, R_ENDED);
		release(f->ended, R_ENDED);
		f->ended = k;
	}
	if (running(p) || killed(p)) {
		k = keep_new(k, p, seq, R_KEEP);
		GROW(f->keep, f->nkeep, f->capkeep, 16);
		f->keep[f->nkeep++] = k;
	}
	return k;
}

static void add(double *sum, double v)
{
	if (!isnan(v))
		*sum = (isnan(*sum) ? 0 : *sum) + v;
}

void fold_io_init(struct fold_io *io, int nstages)
{
	memset(io, 0, sizeof(*io));
	io->read_kib = io->write_kib = io->majflt = NAN;
	for (int k = 0; k < 5; k++)
		io->delay_ms[k] = NAN;
	io->nstages = nstages;
	io->stage_reclaim = xmalloc((size_t)(nstages ? nstages : 1) * sizeof(double));
	for (int i = 0; i < nstages; i++)
		io->stage_reclaim[i] = NAN;
}

void fold_io_add(struct fold_io *io, const struct proc *p, int stage)
{
	if (!isnan(p->read_kib) || !isnan(p->write_kib) || !isnan(p->majflt))
		io->has_io = 1;
	add(&io->read_kib, p->read_kib);
	add(&io->write_kib, p->write_kib);
	add(&io->majflt, p->majflt);
	for (int k = 0; k < 5; k++) {
		if (!isnan(p->delay_ms[k]))
			io->has_delay = 1;
		add(&io->delay_ms[k], p->delay_ms[k]);
	}
	if (stage >= 0 && stage < io->nstages)
		add(&io->stage_reclaim[stage], p->delay_ms[D_RECLAIM]);
	if (strcmp(p->source, "exact") == 0)
		io->exact++;
	else if (strcmp(p->source, "sampled") == 0)
		io->sampled++;
}

/* A shown row into the sums; its stage (for reclaim) from its times. */
static void fold_io_row(struct report *r, struct fold *f, const struct proc *p)
{
	int st = -1;

	if (!isnan(p->delay_ms[D_RECLAIM]))
		st = proc_stage(r, p, f->off);
	fold_io_add(&f->fio, p, st);
}

static struct fold *fold_new(struct report *r)
{
	struct fold *f = xmalloc(sizeof(*f));

	memset(f, 0, sizeof(*f));
	/* A list read from the report's sort (spill.c) keeps no row here. */
	f->top = (struct kheap){ .cap = r->opt->top > 0 && !r->opt->list_spill ? (size_t)r->opt->top : 0,
				 .key = -1, .role = R_TOP };
	for (int i = 0; i < 3; i++)
		f->io[i] = (struct kheap){ .cap = FOLD_IO_TOP, .key = i, .role = R_IO << i };
	f->off = report_tree_off(r);
	f->uw = uwalk_new();
	/* Every stage is known: the system CSV was read first. */
	fold_io_init(&f->fio, r->nstages);
	return f;
}

int fold_compiler(struct report *r, const char *comm)
{
	struct fold *f = r->fd;
	struct fcomm *c;

	if (!f)
		f = r->fd = fold_new(r);
	f->cur = comm_id(f, comm, 0);
	c = &f->c[f->cur];
	if (c->compiler < 0)
		c->compiler = rm_cu_is_compiler(comm);
	return c->compiler;
}

const struct fold_io *fold_io(const struct report *r)
{
	return r->fd ? &r->fd->fio : NULL;
}

/* p into its command's figures: By command's over the shown rows, and
 * the heaviest row of any (the filters' names). */
static size_t fold_comm(struct fold *f, const struct proc *p, size_t seq)
{
	size_t ci = f->cur;
	struct fcomm *c = &f->c[ci];

	if (c->best_peak < -1 || pkey(p->peak_kib) > c->best_peak ||
	    (pkey(p->peak_kib) == c->best_peak && p->pid < c->best_pid)) {
		c->best_peak = pkey(p->peak_kib);
		c->best_pid = p->pid;
		c->best_shown = p->shown;
		c->best_seq = seq;
	}
	if (p->shown) {
		if (c->count == 0)
			c->emulated = p->emulated;
		c->count++;
		if (p->emulated == 1 || (p->emulated < 0 && c->emulated == 0))
			c->emulated = p->emulated;
		if (!isnan(p->peak_kib) && p->peak_kib > c->peak)
			c->peak = p->peak_kib;
		if (!isnan(p->cpu_s))
			c->cpu += p->cpu_s;
	}
	return ci;
}

void fold_row(struct report *r, struct proc *p)
{
	const struct opts *o = r->opt;
	struct fold *f = r->fd;
	struct fkeep *k;
	size_t seq, ci;
	struct fcomm *c;

	seq = f->seq++;
	p->shown = (!o->has_inc || regmatch(&o->inc, p)) && !(o->has_exc && regmatch(&o->exc, p));
	r->nrows++;
	r->nshown += p->shown;
	if (!isnan(p->cpu_s))
		r->cpu_all += p->cpu_s;
	r->nnocmd += !p->cmd[0];
	r->nclients += containers_is_client(p->cmd);
	if (p->uid >= 0 && !fold_has_uid(r, p->uid)) {
		GROW(f->uids, f->nuid, f->capuid, 4);
		f->uids[f->nuid++] = p->uid;
	}
	if (!p->shown) {
		f->hidden++;
		if (!isnan(p->peak_kib))
			f->hidden_kib += p->peak_kib;
	}

	ci = fold_comm(f, p, seq);
	c = &f->c[ci];

	double t = proc_peak_time(p);
	int ui = -1;
	if (p->shown && p->unit) {
		struct funit *u;
		ui = (int)unit_id(f, p->unit);
		u = &f->u[ui];
		if (!isnan(p->peak_kib)) {
			u->listed = 1;
			if (p->peak_kib > u->peak || (p->peak_kib == u->peak && strcmp(p->comm, u->comm) < 0)) {
				u->peak = p->peak_kib;
				u->comm = c->comm;
				u->t = t;
				u->emulated = p->emulated;
			}
		}
	}
	if (p->shown)
		uwalk_row(f->uw, p->pid, p->ppid, p->start_s, p->end_s, ui, !isnan(p->peak_kib));
	if (p->compiler && (!isnan(p->peak_kib) || !isnan(p->start_s)))
		comps_add(&f->cp, p->peak_kib, t, p->start_s, p->end_s, p->emulated == 1);

	if (p->shown)
		fold_io_row(r, f, p);
	spill_row(r, p);
	k = fold_keep(f, p, seq);
	if (!k) {
		free(p->cmd);
		free(p->unit);
	} else {
		/* rcmd points into cmd, which the copy now owns. */
		k->p.rcmd = p->rcmd;
	}
}

static int by_seq(const void *a, const void *b)
{
	const struct fkeep *x = *(struct fkeep *const *)a, *y = *(struct fkeep *const *)b;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

void fold_gather(struct report *r)
{
	struct fold *f = r->fd;
	struct fkeep **v;
	size_t n = 0;

	if (!f)
		return;
	v = xmalloc((f->top.n + 3 * FOLD_IO_TOP + f->nkeep + 3) * sizeof(*v));
#define TAKE(k) do { if ((k) && !(k)->gathered) { (k)->gathered = 1; v[n++] = (k); } } while (0)
	for (size_t i = 0; i < f->top.n; i++)
		TAKE(f->top.v[i]);
	for (int h = 0; h < 3; h++)
		for (size_t i = 0; i < f->io[h].n; i++)
			TAKE(f->io[h].v[i]);
	TAKE(f->largest);
	TAKE(f->ended);
	for (size_t i = 0; i < f->nkeep; i++)
		TAKE(f->keep[i]);
#undef TAKE
	qsort(v, n, sizeof(*v), by_seq);
	r->procs = xrealloc(r->procs, (n ? n : 1) * sizeof(*r->procs));
	r->capproc = n ? n : 1;
	for (size_t i = 0; i < n; i++) {
		r->procs[i] = v[i]->p;
		free(v[i]);
	}
	r->nproc = n;
	free(v);
	free(f->top.v);
	for (int h = 0; h < 3; h++)
		free(f->io[h].v);
	memset(&f->top, 0, sizeof(f->top));
	memset(f->io, 0, sizeof(f->io));
	f->largest = f->ended = NULL;
	free(f->keep);
	f->keep = NULL;
	f->nkeep = 0;
}

int fold_has_uid(const struct report *r, long uid)
{
	const struct fold *f = r->fd;

	for (size_t i = 0; f && i < f->nuid; i++)
		if (f->uids[i] == uid)
			return 1;
	return 0;
}

void fold_lists(struct report *r)
{
	struct fold *f = r->fd;

	if (!f)
		return;
	r->groups = xmalloc((f->nc ? f->nc : 1) * sizeof(*r->groups));
	for (size_t i = 0; i < f->nc; i++) {
		const struct fcomm *c = &f->c[i];
		if (!c->count)
			continue;
		r->groups[r->ngroups++] = (struct group){ c->comm, c->count, c->peak, c->cpu, c->emulated };
	}
	qsort(r->groups, r->ngroups, sizeof(*r->groups), report_group_cmp);

	for (size_t i = 0; i < f->nu; i++)
		f->u[i].count = (int)uwalk_runs(f->uw, (int)i);
	uwalk_free(f->uw);
	f->uw = NULL;
	r->units = xmalloc((f->nu ? f->nu : 1) * sizeof(*r->units));
	for (size_t i = 0; i < f->nu; i++) {
		const struct funit *u = &f->u[i];
		if (!u->listed)
			continue;
		r->units[r->nunits++] = (struct unit){ u->name, u->comm, u->peak,
						       stage_at(r, isnan(u->t) ? NAN : r->tree_off + u->t),
						       u->count, u->emulated };
	}
	qsort(r->units, r->nunits, sizeof(*r->units), report_unit_cmp);
}

void fold_cpeaks(struct report *r, double off)
{
	struct fold *f = r->fd;

	if (f)
		comps_stage_peaks(&f->cp, r, off);
}

int fold_comp_next(struct report *r, double last, double *t, int *d)
{
	return r->fd && comps_next(&r->fd->cp, last, t, d);
}

static int by_best(const void *a, const void *b)
{
	const struct fcomm *x = *(const struct fcomm *const *)a, *y = *(const struct fcomm *const *)b;

	if (x->best_peak != y->best_peak)
		return x->best_peak < y->best_peak ? 1 : -1;
	if (x->best_pid != y->best_pid)
		return x->best_pid < y->best_pid ? -1 : 1;
	return (x->best_seq > y->best_seq) - (x->best_seq < y->best_seq);
}

void fold_filt(const struct report *r, struct filt *fl)
{
	const struct fold *f = r->fd;
	const struct fcomm **v;
	size_t n = 0, len = 0;

	memset(fl, 0, sizeof(*fl));
	if (!f)
		return;
	fl->shown = r->nshown;
	fl->hidden = f->hidden;
	fl->hidden_kib = f->hidden_kib;
	v = xmalloc((f->nc ? f->nc : 1) * sizeof(*v));
	for (size_t i = 0; i < f->nc; i++)
		if (!f->c[i].best_shown)
			v[n++] = &f->c[i];
	qsort(v, n, sizeof(*v), by_best);
	for (size_t i = 0; i < n; i++)
		if (len + strlen(v[i]->comm) + 3 < sizeof(fl->names) - 4)
			len += (size_t)snprintf(fl->names + len, sizeof(fl->names) - len, "%s%s",
						len ? ", " : "", v[i]->comm);
	free(v);
}

void fold_free(struct report *r)
{
	struct fold *f = r->fd;

	if (!f)
		return;
	for (size_t i = 0; i < f->nc; i++)
		free(f->c[i].comm);
	for (size_t i = 0; i < f->nu; i++)
		free(f->u[i].name);
	free(f->c);
	free(f->hc.slot);
	free(f->u);
	free(f->hu.slot);
	comps_free(&f->cp);
	uwalk_free(f->uw);
	free(f->fio.stage_reclaim);
	free(f->uids);
	free(f);
	r->fd = NULL;
}
