/*
 * pidctr: see pidctr.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pidctr.h"

/* Fibonacci hashing: the top bits of the product, so that PIDs a power
 * of two apart do not share a home. */
static size_t home(int pid, unsigned bits)
{
	return (size_t)(((uint32_t)pid * 2654435769u) >> (32 - bits));
}

static void put(struct rm_pidctr_e *slot, size_t cap, unsigned bits, const struct rm_pidctr_e *e)
{
	size_t h = home(e->pid, bits);

	while (slot[h].pid)
		h = (h + 1) & (cap - 1);
	slot[h] = *e;
}

/* To 1 << bits slots (over twice n). */
static int resize(struct rm_pidctr *m, unsigned bits)
{
	size_t cap = (size_t)1 << bits;
	struct rm_pidctr_e *s = calloc(cap, sizeof(*s));

	if (!s)
		return -1;
	for (size_t i = 0; i < m->cap; i++)
		if (m->slot[i].pid)
			put(s, cap, bits, &m->slot[i]);
	free(m->slot);
	m->slot = s;
	m->cap = cap;
	m->bits = bits;
	return 0;
}

struct rm_pidctr_e *rm_pidctr_find(const struct rm_pidctr *m, int pid)
{
	if (!m->cap || pid <= 0)
		return NULL;
	for (size_t h = home(pid, m->bits);; h = (h + 1) & (m->cap - 1)) {
		if (m->slot[h].pid == pid)
			return &m->slot[h];
		if (!m->slot[h].pid)
			return NULL;
	}
}

struct rm_pidctr_e *rm_pidctr_get(struct rm_pidctr *m, int pid)
{
	struct rm_pidctr_e *e = rm_pidctr_find(m, pid), n = { pid, 0, 0, 0 };

	if (e)
		return e;
	if (pid <= 0) {
		errno = EINVAL;
		return NULL;
	}
	if ((m->n + 1) * 2 > m->cap && resize(m, m->cap ? m->bits + 1 : 4) < 0) {
		errno = ENOMEM;
		return NULL;
	}
	put(m->slot, m->cap, m->bits, &n);
	m->n++;
	return rm_pidctr_find(m, pid);
}

/* Empty slot i, moving back the entries after it that their home allows
 * (linear probing's removal: every entry stays reachable from home). */
static void take(struct rm_pidctr *m, size_t i)
{
	size_t mask = m->cap - 1, j = i;

	for (;;) {
		j = (j + 1) & mask;
		if (!m->slot[j].pid)
			break;
		size_t h = home(m->slot[j].pid, m->bits);
		/* j's entry may fill i unless its home lies in (i, j]. */
		if (i <= j ? (i < h && h <= j) : (i < h || h <= j))
			continue;
		m->slot[i] = m->slot[j];
		i = j;
	}
	memset(&m->slot[i], 0, sizeof(m->slot[i]));
	m->n--;
}

void rm_pidctr_del(struct rm_pidctr *m, int pid)
{
	struct rm_pidctr_e *e = rm_pidctr_find(m, pid);

	if (!e)
		return;
	take(m, (size_t)(e - m->slot));
	/* A table a storm of PIDs grew gives its memory back. */
	if (m->cap > 64 && m->n * 8 < m->cap)
		resize(m, m->bits - 1);
}

void rm_pidctr_sweep(struct rm_pidctr *m, int (*keep)(struct rm_pidctr_e *, void *), void *arg)
{
	/* A removal moves later entries of the chain back, into slot i at
	 * the latest: slot i is asked again.  An entry kept before may come
	 * round again past the table's end: keep must say the same twice. */
	for (size_t i = 0; i < m->cap;)
		if (m->slot[i].pid && !keep(&m->slot[i], arg))
			take(m, i);
		else
			i++;
	if (m->cap > 64 && m->n * 8 < m->cap)
		resize(m, m->bits - 1);
}

void rm_pidctr_clear(struct rm_pidctr *m)
{
	if (m->cap)
		memset(m->slot, 0, m->cap * sizeof(*m->slot));
	m->n = 0;
}

void rm_pidctr_free(struct rm_pidctr *m)
{
	free(m->slot);
	memset(m, 0, sizeof(*m));
}

/* What a record does to b (or to an rm_older's end). */
static int count_end(int e, int lead, int final)
{
	if (lead && !final)
		return e + 1;
	if (final && (!lead || e > 0))
		return e - 1;
	return e;
}

static void settle(struct rm_pidctr *m, struct rm_pidctr_e *c, uint32_t now)
{
	c->stamp = now;
	if (!c->a && !c->b)
		rm_pidctr_del(m, c->pid);
}

int rm_pidctr_exit(struct rm_pidctr *m, int pid, uint32_t now)
{
	struct rm_pidctr_e *c = rm_pidctr_get(m, pid);

	if (!c)
		return -1;
	c->a++;
	settle(m, c, now);
	return 0;
}

int rm_pidctr_record(struct rm_pidctr *m, int pid, int lead, int final, uint32_t now)
{
	struct rm_pidctr_e *c;

	if (!lead && !final)
		return 0;  /* a thread's: neither count */
	if (!(c = rm_pidctr_get(m, pid)))
		return -1;
	if (lead)
		c->a--;
	c->b = count_end(c->b, lead, final);
	settle(m, c, now);
	return 0;
}

void rm_older_take(struct rm_older *o, const struct rm_pidctr *m, int pid)
{
	const struct rm_pidctr_e *c = rm_pidctr_find(m, pid);

	o->lead = c && c->a > 0 ? (uint16_t)(c->a < 0xffff ? c->a : 0xffff) : 0;
	o->end = c ? (int16_t)(c->b < -0x7fff ? -0x7fff : c->b > 0x7fff ? 0x7fff : c->b) : 0;
}

int rm_older_pass(struct rm_older *o, int lead, int final)
{
	if (!o->lead && o->end <= 0)
		return 0;
	if (lead && o->lead)
		o->lead--;
	o->end = (int16_t)count_end(o->end, lead, final);
	return 1;
}
