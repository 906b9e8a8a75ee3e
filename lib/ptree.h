/*
 * ptree: the processes rm-tree follows, keyed by pid and start time, with
 * sticky membership, and the one-read access to their /proc files.
 *
 * A process is who it is by pid *and* start time (stat field 22): a pid
 * seen again with another start time is a new process, never the old one
 * continued.  The table holds every process a scan has met (members and
 * the others, so that a known outsider is not read again each tick); a
 * node is freed when its process ends, so memory follows the number of
 * live processes, never processes x ticks.  Membership is sticky: once a
 * node is a member it stays one whatever happens to its parent.  New
 * nodes join when their parent is a member, when their parent is the
 * subreaper itself, or when they are in the job's process group; a chain
 * of new processes met in any order is resolved in one call.  The
 * readings are taken through lib/proctab (rm_pfile_read and the parsers).
 */
#ifndef RM_PTREE_H
#define RM_PTREE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pidctr.h"
#include "proctab.h"

struct rm_pnode {
	int pid, ppid, pgrp;
	uint64_t start;          /* stat (22): clock ticks after boot */
	/* rm-tree's parts but table.c ask table.c for these three. */
	unsigned member : 1;     /* followed (sticky) */
	unsigned fresh : 1;      /* met this scan, membership not decided */
	unsigned outsider : 1;   /* kernel thread or zombie when met: never joins */
	uint32_t seen;           /* scan generation it was last met in */

	/* Readings, filled by the command. */
	int stat_fd, status_fd;  /* kept descriptors, or -1 */
	int dir_fd;              /* its /proc/PID directory (O_PATH), or -1: the
				  * files of one process, whoever takes its pid */
	char state;
	long threads;
	uint64_t rss_kib, hwm_kib, peak_kib, pss_kib, ticks, minflt_children;
	uint64_t cpu_us;         /* exact rows: the record's user + system time */
	double peak_at, first_at; /* peak_at < 0: time unknown */
	unsigned has_peak : 1, has_ticks : 1, has_pss : 1, has_hwm : 1, cmd_read : 1;
	/* Event mode (rm-tree events.c): the kernel's exit record. */
	unsigned exact : 1;      /* the row's readings are a taskstats record's */
	/* rm-tree: where the process is in its life beyond member, fresh and
	 * outsider (ended, excluded...).  Its bits are defined in rm-tree's
	 * table.c alone, which alone reads and writes them; the other parts
	 * ask table.c (table_is_ended and the like). */
	unsigned char life;
	unsigned rmtree_known : 1, rmtree : 1; /* rm-tree: its comm read since
						* its last exec: an rm-tree */
	unsigned has_io : 1, has_majflt : 1, has_delay : 1;
	uint64_t read_kib, write_kib, majflt;
	double delay_ms[5];      /* cpu, io, swapin, reclaim, thrash */
	double start_el, end_el; /* seconds of the stream, when has_start_el */
	unsigned has_start_el : 1;
	unsigned has_kend : 1;   /* kend_el: its exit event's kernel time */
	double kend_el;          /* seconds of the stream (CLOCK_MONOTONIC) */
	/* rm-tree events.c: its fork event was read (a later one on its pid
	 * is another process's), and the taskstats records on its pid that
	 * are older processes', still to come (lib/pidctr). */
	unsigned forked : 1;
	unsigned cmd_due : 1;    /* its command line is read at the pump's end */
	struct rm_older older;
	unsigned emulated : 2;   /* rm-tree: 0 unknown, 1 no, 2 yes (emul.c) */
	unsigned comm_ok : 1;    /* comm read from the process (its main thread)
				  * since its last exec: rm-tree events.c */
	int exit;                /* exit column: code or 128+N, -1 unknown */
	uint32_t uid;            /* its real user: the exit record's ac_uid, or
				  * /proc/PID/status's Uid (has_uid) */
	unsigned has_uid : 1;
	char comm[RM_COMM_MAX];  /* raw */
	char *cmd;               /* sanitized command line (heap), or NULL */
};

struct rm_ptree {
	struct rm_pnode **slot;  /* open addressing on pid; NULL is empty */
	size_t cap, count;
	uint32_t gen;
};

void rm_ptree_init(struct rm_ptree *t);
/* Free every node (closing kept descriptors) and the table. */
void rm_ptree_free(struct rm_ptree *t);

struct rm_pnode *rm_ptree_find(const struct rm_ptree *t, int pid);

/*
 * Add a zeroed node for pid (descriptors -1, exit -1, fresh set).  The pid
 * must not be in the table: remove the old process first.  Returns NULL
 * with errno ENOMEM.
 */
struct rm_pnode *rm_ptree_add(struct rm_ptree *t, int pid, uint64_t start);

/* Remove and free a node, closing its kept descriptors. */
void rm_ptree_remove(struct rm_ptree *t, struct rm_pnode *n);

/*
 * Walk the table: start with *it = 0; returns NULL at the end.  Nodes
 * must not be added or removed during a walk.
 */
struct rm_pnode *rm_ptree_next(const struct rm_ptree *t, size_t *it);

/*
 * Decide the membership of nodes[0..n): each fresh node joins when its
 * parent is a member, when its ppid is self_pid (> 0: the subreaper's
 * orphans and CMD itself) or its pgrp is pgrp (> 0).  Repeats until
 * nothing more joins, so the order of nodes does not matter.  Clears
 * fresh on every node and returns how many joined.
 */
size_t rm_ptree_adopt(struct rm_ptree *t, struct rm_pnode **nodes, size_t n,
		      int self_pid, int pgrp);

/* The exit column for a wait status: the code, or 128+N for signal N. */
int rm_exit_column(int wstatus);

#endif
