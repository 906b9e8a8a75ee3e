/*
 * ptree: see ptree.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "ptree.h"

void rm_ptree_init(struct rm_ptree *t)
{
	memset(t, 0, sizeof(*t));
}

static size_t hash_pid(int pid, size_t cap)
{
	return ((uint32_t)pid * 2654435761u) & (cap - 1);
}

static void node_free(struct rm_pnode *n)
{
	rm_pfile_close(&n->stat_fd);
	rm_pfile_close(&n->status_fd);
	rm_pfile_close(&n->dir_fd);
	free(n->cmd);
	free(n);
}

void rm_ptree_free(struct rm_ptree *t)
{
	for (size_t i = 0; i < t->cap; i++)
		if (t->slot[i])
			node_free(t->slot[i]);
	free(t->slot);
	memset(t, 0, sizeof(*t));
}

struct rm_pnode *rm_ptree_find(const struct rm_ptree *t, int pid)
{
	if (!t->cap)
		return NULL;
	for (size_t i = hash_pid(pid, t->cap);; i = (i + 1) & (t->cap - 1)) {
		struct rm_pnode *n = t->slot[i];
		if (!n)
			return NULL;
		if (n->pid == pid)
			return n;
	}
}

static void place(struct rm_pnode **slot, size_t cap, struct rm_pnode *n)
{
	size_t i = hash_pid(n->pid, cap);

	while (slot[i])
		i = (i + 1) & (cap - 1);
	slot[i] = n;
}

/* Keep the load at most one half; shrink when a quarter of that is used
 * so a run that once held many processes gives the memory back. */
static int resize(struct rm_ptree *t, size_t cap)
{
	struct rm_pnode **slot = calloc(cap, sizeof(*slot));

	if (!slot)
		return -1;
	for (size_t i = 0; i < t->cap; i++)
		if (t->slot[i])
			place(slot, cap, t->slot[i]);
	free(t->slot);
	t->slot = slot;
	t->cap = cap;
	return 0;
}

struct rm_pnode *rm_ptree_add(struct rm_ptree *t, int pid, uint64_t start)
{
	struct rm_pnode *n;

	if ((t->count + 1) * 2 > t->cap && resize(t, t->cap ? t->cap * 2 : 256) < 0) {
		errno = ENOMEM;
		return NULL;
	}
	n = calloc(1, sizeof(*n));
	if (!n) {
		errno = ENOMEM;
		return NULL;
	}
	n->pid = pid;
	n->start = start;
	n->fresh = 1;
	n->stat_fd = n->status_fd = n->dir_fd = -1;
	n->exit = -1;
	n->seen = t->gen;
	place(t->slot, t->cap, n);
	t->count++;
	return n;
}

void rm_ptree_remove(struct rm_ptree *t, struct rm_pnode *n)
{
	size_t i, j, k;

	if (!t->cap)
		return;
	for (i = hash_pid(n->pid, t->cap); t->slot[i] != n; i = (i + 1) & (t->cap - 1))
		if (!t->slot[i])
			return;
	/* Backward-shift deletion: no tombstones, so lookups stay short
	 * however many processes come and go.  An entry at j moves back to
	 * the hole at i unless its home k lies cyclically in (i, j]. */
	t->slot[i] = NULL;
	for (j = i;;) {
		j = (j + 1) & (t->cap - 1);
		if (!t->slot[j])
			break;
		k = hash_pid(t->slot[j]->pid, t->cap);
		if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
			continue;
		t->slot[i] = t->slot[j];
		t->slot[j] = NULL;
		i = j;
	}
	t->count--;
	node_free(n);
	if (t->cap > 256 && t->count * 8 < t->cap)
		resize(t, t->cap / 2);
}

struct rm_pnode *rm_ptree_next(const struct rm_ptree *t, size_t *it)
{
	while (*it < t->cap) {
		struct rm_pnode *n = t->slot[(*it)++];
		if (n)
			return n;
	}
	return NULL;
}

size_t rm_ptree_adopt(struct rm_ptree *t, struct rm_pnode **nodes, size_t n,
		      int self_pid, int pgrp)
{
	size_t joined = 0, round;

	do {
		round = 0;
		for (size_t i = 0; i < n; i++) {
			struct rm_pnode *c = nodes[i], *p;
			if (!c->fresh || c->member || c->outsider)
				continue;
			if ((self_pid > 0 && c->ppid == self_pid) ||
			    (pgrp > 0 && c->pgrp == pgrp) ||
			    ((p = rm_ptree_find(t, c->ppid)) && p->member && p != c)) {
				c->member = 1;
				round++;
			}
		}
		joined += round;
	} while (round);
	for (size_t i = 0; i < n; i++)
		nodes[i]->fresh = 0;
	return joined;
}

int rm_exit_column(int wstatus)
{
	if (WIFEXITED(wstatus))
		return WEXITSTATUS(wstatus);
	if (WIFSIGNALED(wstatus))
		return 128 + WTERMSIG(wstatus);
	return -1;
}
