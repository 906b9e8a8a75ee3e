/*
 * pcount: see pcount.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pcount.h"
#include "procev.h"
#include "procfs.h"
#include "proctab.h"

int rm_pset_has(const struct rm_pset *s, int pid)
{
	return rm_pidctr_find(&s->m, pid) != NULL;
}

int rm_pset_add(struct rm_pset *s, int pid)
{
	if (pid <= 0)
		return 0;
	return rm_pidctr_get(&s->m, pid) ? 0 : -1;
}

void rm_pset_del(struct rm_pset *s, int pid)
{
	rm_pidctr_del(&s->m, pid);
}

void rm_pset_clear(struct rm_pset *s)
{
	rm_pidctr_clear(&s->m);
}

void rm_pset_free(struct rm_pset *s)
{
	rm_pidctr_free(&s->m);
}

void rm_pcount_init(struct rm_pcount *pc, const char *const *names, int n)
{
	memset(pc, 0, sizeof(*pc));
	pc->names = names;
	pc->nnames = n;
	pc->fd = -1;
}

int rm_pcount_events(const struct rm_pcount *pc)
{
	return pc->fd >= 0;
}

/* Out of memory: give the events up and scan every time. */
static void give_up(struct rm_pcount *pc, int e)
{
	snprintf(pc->why, sizeof(pc->why), "%s", strerror(e));
	if (pc->fd >= 0)
		close(pc->fd);
	pc->fd = -1;
}

static void ev(void *arg, const struct rm_pe *e)
{
	struct rm_pcount *pc = arg;
	int t = e->tgid, ok = 0;

	pc->events++;
	switch (e->what) {
	case RM_PE_FORK:
		if (e->pid != e->tgid)
			return;  /* a thread */
		/* The child has its parent's name until it execs. */
		rm_pset_del(&pc->counted, t);
		rm_pset_del(&pc->pending, t);
		if (rm_pset_has(&pc->counted, e->ptgid))
			ok = rm_pset_add(&pc->counted, t);
		else if (rm_pset_has(&pc->pending, e->ptgid))
			ok = rm_pset_add(&pc->pending, t);
		break;
	case RM_PE_EXEC:
		/* A new name, read once the queue is drained. */
		rm_pset_del(&pc->counted, t);
		ok = rm_pset_add(&pc->pending, t);
		break;
	case RM_PE_COMM:
		if (e->pid != e->tgid)
			return;  /* a thread's own name: not the process's */
		rm_pset_del(&pc->pending, t);
		if (rm_comm_is(e->comm, strlen(e->comm), pc->names, pc->nnames))
			ok = rm_pset_add(&pc->counted, t);
		else
			rm_pset_del(&pc->counted, t);
		break;
	case RM_PE_EXIT:
		/* The main thread: a zombie from now on, not counted. */
		if (e->pid != e->tgid)
			return;
		rm_pset_del(&pc->counted, t);
		rm_pset_del(&pc->pending, t);
		break;
	default:
		break;
	}
	if (ok < 0)
		give_up(pc, ENOMEM);
}

void rm_pcount_apply(struct rm_pcount *pc, const void *buf, size_t len)
{
	rm_pe_parse(buf, len, ev, pc);
}

static void scanned(void *arg, int pid)
{
	struct rm_pcount *pc = arg;

	if (rm_pset_add(&pc->counted, pid) < 0)
		give_up(pc, ENOMEM);
}

static void try_open(struct rm_pcount *pc)
{
	const char *no = getenv("RM_NO_EVENTS");

	pc->tried = 1;
	if (no && strcmp(no, "1") == 0)
		snprintf(pc->why, sizeof(pc->why), "RM_NO_EVENTS=1");
	else if (strcmp(rm_proc_root(), "/proc") != 0)
		snprintf(pc->why, sizeof(pc->why), "RM_PROC_ROOT is not /proc");
	else if ((pc->fd = rm_pe_open(4 << 20, RM_PE_WANT_FORK | RM_PE_WANT_EXEC | RM_PE_WANT_COMM |
					     RM_PE_WANT_EXIT, pc->why, sizeof(pc->why))) >= 0)
		pc->resync = 1;
}

long rm_pcount_get(struct rm_pcount *pc, int events)
{
	enum { PE_EACH = 256, PE_BATCH = 64 };
	static unsigned char buf[PE_EACH * PE_BATCH] __attribute__((aligned(8)));
	size_t lens[PE_BATCH];
	size_t it;
	long n;

	if (events && !pc->tried)
		try_open(pc);
	if (pc->fd < 0) {
		pc->scans++;
		return rm_proc_count_names(pc->names, pc->nnames);
	}
	for (;;) {
		/* One event a datagram, up to 64 datagrams a system call. */
		int got = rm_nl_recvm(pc->fd, buf, PE_EACH, PE_BATCH, lens);
		if (got == 0)
			break;
		if (got < 0) {
			if (errno == ENOBUFS) {
				/* Events dropped: a scan will tell the truth. */
				pc->lost++;
				pc->resync = 1;
				continue;
			}
			give_up(pc, errno);
			pc->scans++;
			return rm_proc_count_names(pc->names, pc->nnames);
		}
		for (int i = 0; i < got && pc->fd >= 0; i++)
			rm_pcount_apply(pc, buf + (size_t)i * PE_EACH, lens[i]);
		if (pc->fd < 0)
			return rm_pcount_get(pc, events);
		if (got < PE_BATCH)
			break;
	}
	if (pc->resync) {
		pc->resync = 0;
		pc->scans++;
		rm_pset_clear(&pc->counted);
		rm_pset_clear(&pc->pending);
		n = rm_proc_scan_names(pc->names, pc->nnames, scanned, pc);
		if (n < 0 || pc->fd < 0) {
			give_up(pc, n < 0 ? errno : ENOMEM);
			return n;
		}
		return (long)pc->counted.m.n;
	}
	for (it = 0; it < pc->pending.m.cap; it++) {
		int pid = pc->pending.m.slot[it].pid;
		char comm[64];
		ssize_t len;
		if (pid <= 0)
			continue;
		pc->comm_reads++;
		len = rm_pfile_read(NULL, pid, "comm", comm, sizeof(comm), 0);
		if (len <= 0)
			continue;  /* gone: its exit event is on its way */
		if (comm[len - 1] == '\n')
			len--;
		if (rm_comm_is(comm, (size_t)len, pc->names, pc->nnames) &&
		    rm_pset_add(&pc->counted, pid) < 0) {
			give_up(pc, ENOMEM);
			return rm_pcount_get(pc, events);
		}
	}
	rm_pset_clear(&pc->pending);
	return (long)pc->counted.m.n;
}

void rm_pcount_close(struct rm_pcount *pc)
{
	if (pc->fd >= 0)
		close(pc->fd);
	pc->fd = -1;
	rm_pset_free(&pc->counted);
	rm_pset_free(&pc->pending);
}
