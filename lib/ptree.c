/*
 * ptree: see ptree.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "procfs.h"
#include "ptree.h"

static size_t kept, kept_max = 512;

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
	n->stat_fd = n->status_fd = -1;
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

int rm_pstat_field(const char *buf, int field, uint64_t *out)
{
	const char *p = strrchr(buf, ')');
	uint64_t v;
	int f = 2;

	if (!p || field < 4)
		return -1;
	p++;
	while (f < field) {
		while (*p == ' ')
			p++;
		if (!*p || *p == '\n')
			return -1;
		f++;
		if (f == field)
			break;
		while (*p && *p != ' ' && *p != '\n')
			p++;
	}
	if (*p < '0' || *p > '9')
		return -1;
	for (v = 0; *p >= '0' && *p <= '9'; p++)
		v = v * 10 + (uint64_t)(*p - '0');
	*out = v;
	return 0;
}

int rm_exit_column(int wstatus)
{
	if (WIFEXITED(wstatus))
		return WEXITSTATUS(wstatus);
	if (WIFSIGNALED(wstatus))
		return 128 + WTERMSIG(wstatus);
	return -1;
}

void rm_pfile_budget_init(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
		getrlimit(RLIMIT_NOFILE, &rl);
	}
	/* Leave room for everything else the command opens. */
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > 1000000)
		kept_max = 1000000;
	else
		kept_max = rl.rlim_cur > 128 ? (size_t)rl.rlim_cur - 128 : 0;
}

void rm_pfile_close(int *fd)
{
	if (*fd >= 0) {
		close(*fd);
		*fd = -1;
		kept--;
	}
}

ssize_t rm_pfile_read(int *fd, int pid, const char *name, char *buf, size_t size, int keep)
{
	char path[64];
	ssize_t n;
	int f;

	buf[0] = '\0';
	if (*fd >= 0) {
		do
			n = pread(*fd, buf, size - 1, 0);
		while (n < 0 && errno == EINTR);
		if (n < 0) {
			rm_pfile_close(fd);
			errno = ESRCH;
			return -1;
		}
		buf[n] = '\0';
		return n;
	}
	snprintf(path, sizeof(path), "%d/%s", pid, name);
	do
		f = openat(rm_proc_dirfd(), path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	while (f < 0 && errno == EINTR);
	if (f < 0) {
		errno = ESRCH;
		return -1;
	}
	do
		n = read(f, buf, size - 1);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		close(f);
		errno = ESRCH;
		return -1;
	}
	buf[n] = '\0';
	if (keep && kept < kept_max) {
		*fd = f;
		kept++;
	} else {
		close(f);
	}
	return n;
}
