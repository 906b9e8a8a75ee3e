/*
 * unitwalk.c: a compile unit's runs, counted as the exit log is read
 * (unitwalk.h says what a run is).
 *
 * Each counted row starts a walk up its parents.  A parent whose row was
 * read already is looked up in back[], the last row of each PID modulo
 * 65,536 (every PID, where pid_max is at most that: the default on most
 * machines is 32,768 or 4,194,304); a row there that had ended before the
 * child started is an older process on that PID, and the walk waits.
 * A parent not read yet is waited for: the walk becomes an entry keyed by
 * (awaited PID, unit), merged with the other walks of that unit waiting
 * on that PID (a make's thousands of gcc drivers are one entry per unit);
 * the entries waiting on a PID are a list from lib/pidctr's table, the
 * PID's first in its counter a.  The next row of that PID resolves the
 * entries: below their own unit (dropped), a later process on a reused
 * PID (they count, as a parent that started after its child is not one),
 * or a link to climb on from.  What still waits at the end counts.
 */
#include <err.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pidctr.h"
#include "unitwalk.h"
#include "util.h"

enum { BACK_BITS = 16, MAX_DEPTH = 64 };
#define NONE UINT32_MAX

struct back {
	int pid, ppid, unit;    /* pid 0: empty */
	double start, end;
};

/* A row read that ended more than this before a row of its PID's child
 * started is an older process on that PID: the parent is still to come.
 * (rm-tree's start is the kernel's start time, whole clock ticks, and its
 * end the exit event's or the tick's that found it gone: a parent's end
 * may only seem to come before its child's start by a rounding.) */
#define END_SLACK 1.0

/* Walks of one unit waiting for a row of pid. */
struct pend {
	int pid, unit, depth;   /* unit -1: a free entry */
	uint32_t next;          /* the next entry waiting on pid, or the next free */
	long count;
	double min_start;       /* the earliest start of the rows they stand at */
};

/* (PID, unit) -> entry: open addressing, linear probing, deletion by
 * backward shift as lib/pidctr does for a PID alone, so that its size
 * follows the entries alive, not those ever made. */
struct tab {
	uint64_t *key;          /* 0: empty (a key's PID is never 0) */
	uint32_t *val;
	size_t cap, n;
};

struct uwalk {
	struct back back[1u << BACK_BITS];
	struct pend *e;
	size_t ne, cape;
	uint32_t free_head;
	struct tab byk;         /* (pid, unit) -> its entry */
	struct rm_pidctr byp;   /* pid -> a: 1 + the first entry waiting on it */
	long *runs;
	size_t nruns;
	int done;
};

static uint64_t key_of(int pid, int unit)
{
	return (uint64_t)(uint32_t)pid << 32 | (uint32_t)unit;
}

static size_t home(const struct tab *t, uint64_t k)
{
	k ^= k >> 31;
	k *= 0x9e3779b97f4a7c15ull;
	return (size_t)(k >> 20) & (t->cap - 1);
}

static size_t find(const struct tab *t, uint64_t k)
{
	size_t i = home(t, k);

	while (t->key[i] && t->key[i] != k)
		i = (i + 1) & (t->cap - 1);
	return i;
}

static uint32_t *tab_get(struct tab *t, uint64_t k)
{
	size_t i;

	if (!t->cap)
		return NULL;
	i = find(t, k);
	return t->key[i] ? &t->val[i] : NULL;
}

static void tab_put(struct tab *t, uint64_t k, uint32_t v);

static void tab_grow(struct tab *t)
{
	struct tab old = *t;

	t->cap = old.cap ? old.cap * 2 : 64;
	t->n = 0;
	t->key = xmalloc(t->cap * sizeof(*t->key));
	t->val = xmalloc(t->cap * sizeof(*t->val));
	memset(t->key, 0, t->cap * sizeof(*t->key));
	for (size_t i = 0; i < old.cap; i++)
		if (old.key[i])
			tab_put(t, old.key[i], old.val[i]);
	free(old.key);
	free(old.val);
}

static void tab_put(struct tab *t, uint64_t k, uint32_t v)
{
	size_t i;

	if (2 * (t->n + 1) > t->cap)
		tab_grow(t);
	i = find(t, k);
	if (!t->key[i]) {
		t->key[i] = k;
		t->n++;
	}
	t->val[i] = v;
}

static void tab_del(struct tab *t, uint64_t k)
{
	size_t m = t->cap - 1, i, j;

	if (!t->cap || !t->key[i = find(t, k)])
		return;
	/* Shift back each key after i that would not be found past the hole. */
	for (j = (i + 1) & m; t->key[j]; j = (j + 1) & m)
		if (((j - home(t, t->key[j])) & m) >= ((j - i) & m)) {
			t->key[i] = t->key[j];
			t->val[i] = t->val[j];
			i = j;
		}
	t->key[i] = 0;
	t->n--;
}

struct uwalk *uwalk_new(void)
{
	/* calloc: back[]'s 2 MiB are touched only where PIDs fall. */
	struct uwalk *w = xcalloc(1, sizeof(*w));

	w->free_head = NONE;
	return w;
}

static void add_runs(struct uwalk *w, int unit, long n)
{
	if ((size_t)unit >= w->nruns) {
		size_t cap = (size_t)unit + 1 > 2 * w->nruns ? (size_t)unit + 1 : 2 * w->nruns;
		w->runs = xrealloc(w->runs, cap * sizeof(*w->runs));
		memset(w->runs + w->nruns, 0, (cap - w->nruns) * sizeof(*w->runs));
		w->nruns = cap;
	}
	w->runs[unit] += n;
}

/* n walks of unit standing at a row started at start wait for pid's row. */
static void wait_for_row(struct uwalk *w, int pid, int unit, long n, double start, int depth)
{
	uint32_t *v = tab_get(&w->byk, key_of(pid, unit)), i;
	struct rm_pidctr_e *head;
	struct pend *e;

	if (v) {
		e = &w->e[*v];
		e->count += n;
		if (start < e->min_start)
			e->min_start = start;
		if (depth > e->depth)
			e->depth = depth;
		return;
	}
	if (w->free_head != NONE) {
		i = w->free_head;
		w->free_head = w->e[i].next;
	} else {
		if (w->ne == w->cape) {
			w->cape = w->cape ? 2 * w->cape : 64;
			w->e = xrealloc(w->e, w->cape * sizeof(*w->e));
		}
		i = (uint32_t)w->ne++;
	}
	if (!(head = rm_pidctr_get(&w->byp, pid)))
		errx(RM_EXIT_FAIL, "out of memory");
	w->e[i] = (struct pend){ pid, unit, depth, head->a ? (uint32_t)head->a - 1 : NONE, n, start };
	head->a = (int)i + 1;
	tab_put(&w->byk, key_of(pid, unit), i);
}

/* n walks of unit standing at the row (pid, ppid, start), after depth
 * parents looked up: up through the rows read, then wait. */
static void climb(struct uwalk *w, int unit, long n, int pid, int ppid, double start, int depth)
{
	for (;;) {
		const struct back *b;
		if (depth >= MAX_DEPTH || ppid <= 0 || ppid == pid) {
			add_runs(w, unit, n);
			return;
		}
		b = &w->back[(unsigned)ppid & ((1u << BACK_BITS) - 1)];
		if (b->pid != ppid || b->end + END_SLACK < start) {
			wait_for_row(w, ppid, unit, n, start, depth);
			return;
		}
		if (b->start > start) {
			add_runs(w, unit, n);  /* a later process on the parent's PID */
			return;
		}
		depth++;
		if (b->unit == unit)
			return;                /* below a row of its own unit */
		pid = b->pid;
		ppid = b->ppid;
		start = b->start;
	}
}

void uwalk_row(struct uwalk *w, int pid, int ppid, double start_s, double end_s, int unit,
	       int counted)
{
	struct rm_pidctr_e *head = pid > 0 ? rm_pidctr_find(&w->byp, pid) : NULL;

	if (head) {
		uint32_t i = (uint32_t)head->a - 1;
		rm_pidctr_del(&w->byp, pid);
		while (i != NONE) {
			struct pend e = w->e[i];
			tab_del(&w->byk, key_of(e.pid, e.unit));
			w->e[i].unit = -1;
			w->e[i].next = w->free_head;
			w->free_head = i;
			if (start_s > e.min_start)
				add_runs(w, e.unit, e.count);
			else if (unit != e.unit)
				climb(w, e.unit, e.count, pid, ppid, start_s, e.depth + 1);
			i = e.next;
		}
	}
	if (pid > 0)
		w->back[(unsigned)pid & ((1u << BACK_BITS) - 1)] = (struct back){ pid, ppid, unit, start_s, end_s };
	if (unit >= 0 && counted)
		climb(w, unit, 1, pid, ppid, start_s, 0);
}

long uwalk_runs(struct uwalk *w, int unit)
{
	if (!w->done) {
		for (size_t i = 0; i < w->ne; i++)
			if (w->e[i].unit >= 0)
				add_runs(w, w->e[i].unit, w->e[i].count);
		w->done = 1;
	}
	return unit >= 0 && (size_t)unit < w->nruns ? w->runs[unit] : 0;
}

void uwalk_free(struct uwalk *w)
{
	if (!w)
		return;
	free(w->e);
	free(w->byk.key);
	free(w->byk.val);
	rm_pidctr_free(&w->byp);
	free(w->runs);
	free(w);
}
