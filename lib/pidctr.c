/*
 * pidctr: see pidctr.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pidctr.h"

static size_t home(int pid, size_t cap)
{
	return ((size_t)(unsigned)pid * 2654435761u) & (cap - 1);
}

static void put(struct rm_pidctr_e *slot, size_t cap, const struct rm_pidctr_e *e)
{
	size_t h = home(e->pid, cap);

	while (slot[h].pid)
		h = (h + 1) & (cap - 1);
	slot[h] = *e;
}

/* To cap slots (a power of two, over twice n). */
static int resize(struct rm_pidctr *m, size_t cap)
{
	struct rm_pidctr_e *s = calloc(cap, sizeof(*s));

	if (!s)
		return -1;
	for (size_t i = 0; i < m->cap; i++)
		if (m->slot[i].pid)
			put(s, cap, &m->slot[i]);
	free(m->slot);
	m->slot = s;
	m->cap = cap;
	return 0;
}

struct rm_pidctr_e *rm_pidctr_find(const struct rm_pidctr *m, int pid)
{
	if (!m->cap || pid <= 0)
		return NULL;
	for (size_t h = home(pid, m->cap);; h = (h + 1) & (m->cap - 1)) {
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
	if ((m->n + 1) * 2 > m->cap && resize(m, m->cap ? m->cap * 2 : 16) < 0) {
		errno = ENOMEM;
		return NULL;
	}
	put(m->slot, m->cap, &n);
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
		size_t h = home(m->slot[j].pid, m->cap);
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
		resize(m, m->cap / 2);
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
		resize(m, m->cap / 2);
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
