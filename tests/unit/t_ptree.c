/*
 * t_ptree: the process table keyed by pid + start time, sticky
 * membership, the stat field reader and the exit column.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ptree.h"
#include "tap.h"

static struct rm_pnode *add(struct rm_ptree *t, int pid, int ppid, uint64_t start)
{
	struct rm_pnode *n = rm_ptree_add(t, pid, start);
	if (n)
		n->ppid = ppid;
	return n;
}

static void add_find_remove_many(void)
{
	struct rm_ptree t;
	int ok = 1;

	rm_ptree_init(&t);
	/* Pids that collide in a small table, and more than one resize. */
	for (int pid = 1; pid <= 10000; pid++)
		if (!add(&t, pid * 64, 1, (uint64_t)pid))
			ok = 0;
	CHECK(ok);
	CHECK_U64(t.count, 10000);
	for (int pid = 1; pid <= 10000; pid += 2)
		rm_ptree_remove(&t, rm_ptree_find(&t, pid * 64));
	CHECK_U64(t.count, 5000);
	for (int pid = 1; pid <= 10000; pid++) {
		struct rm_pnode *n = rm_ptree_find(&t, pid * 64);
		if (pid % 2 ? n != NULL : (n == NULL || n->start != (uint64_t)pid))
			ok = 0;
	}
	CHECK(ok);
	/* Emptying the table gives the memory back. */
	for (int pid = 2; pid <= 10000; pid += 2)
		rm_ptree_remove(&t, rm_ptree_find(&t, pid * 64));
	CHECK_U64(t.count, 0);
	CHECK(t.cap <= 512);
	rm_ptree_free(&t);
}

static void walk_sees_every_node_once(void)
{
	struct rm_ptree t;
	struct rm_pnode *n;
	size_t it = 0;
	long sum = 0, count = 0;

	rm_ptree_init(&t);
	for (int pid = 100; pid < 400; pid++)
		add(&t, pid, 1, 7);
	while ((n = rm_ptree_next(&t, &it)) != NULL) {
		sum += n->pid;
		count++;
	}
	CHECK_U64(count, 300);
	CHECK_U64(sum, (100 + 399) * 300 / 2);
	rm_ptree_free(&t);
}

/* Children met before their parents still join in one call. */
static void adopt_chain_in_any_order(void)
{
	struct rm_ptree t;
	struct rm_pnode *v[5];

	rm_ptree_init(&t);
	v[0] = add(&t, 40, 30, 1); /* great-grandchild first */
	v[1] = add(&t, 30, 20, 1);
	v[2] = add(&t, 20, 10, 1);
	v[3] = add(&t, 10, 1, 1);
	v[4] = add(&t, 50, 1, 1);  /* unrelated */
	v[3]->member = 1;          /* the selected root */
	CHECK_U64(rm_ptree_adopt(&t, v, 5, 0, 0), 3);
	CHECK(v[0]->member && v[1]->member && v[2]->member);
	CHECK(!v[4]->member);
	CHECK(!v[0]->fresh && !v[4]->fresh);
	rm_ptree_free(&t);
}

/* The subreaper's orphans, and the job's process group, join. */
static void adopt_orphans_and_group(void)
{
	struct rm_ptree t;
	struct rm_pnode *v[3];

	rm_ptree_init(&t);
	v[0] = add(&t, 70, 999, 1);     /* reparented to rm-tree (999) */
	v[1] = add(&t, 71, 1, 1);       /* reparented to init, same group */
	v[1]->pgrp = 555;
	v[2] = add(&t, 72, 1, 1);       /* a stranger */
	v[2]->pgrp = 72;
	CHECK_U64(rm_ptree_adopt(&t, v, 3, 999, 555), 2);
	CHECK(v[0]->member && v[1]->member && !v[2]->member);
	rm_ptree_free(&t);
}

/* Kernel threads and zombies never join, even under a member. */
static void outsiders_never_join(void)
{
	struct rm_ptree t;
	struct rm_pnode *v[2];

	rm_ptree_init(&t);
	v[0] = add(&t, 10, 1, 1);
	v[0]->member = 1;
	v[1] = add(&t, 11, 10, 1);
	v[1]->outsider = 1;
	CHECK_U64(rm_ptree_adopt(&t, v, 2, 0, 0), 0);
	CHECK(!v[1]->member);
	rm_ptree_free(&t);
}

/* Membership is sticky: a member whose parent ends stays a member. */
static void membership_is_sticky(void)
{
	struct rm_ptree t;
	struct rm_pnode *v[2];

	rm_ptree_init(&t);
	v[0] = add(&t, 10, 1, 1);
	v[0]->member = 1;
	v[1] = add(&t, 11, 10, 1);
	rm_ptree_adopt(&t, &v[1], 1, 0, 0);
	CHECK(v[1]->member);
	rm_ptree_remove(&t, v[0]);
	v[1]->ppid = 1;                 /* reparented to init */
	rm_ptree_adopt(&t, &v[1], 1, 0, 0);
	CHECK(v[1]->member);
	rm_ptree_free(&t);
}

/* The same pid with another start time is another process. */
static void reused_pid_is_a_new_node(void)
{
	struct rm_ptree t;
	struct rm_pnode *a, *b;

	rm_ptree_init(&t);
	a = add(&t, 100, 1, 5000);
	a->peak_kib = 777;
	CHECK(rm_ptree_find(&t, 100) == a);
	rm_ptree_remove(&t, a);
	b = add(&t, 100, 1, 9000);
	CHECK(b != NULL);
	CHECK_U64(b->start, 9000);
	CHECK_U64(b->peak_kib, 0);
	CHECK_U64(t.count, 1);
	rm_ptree_free(&t);
}

static void stat_fields(void)
{
	const char *s = "42 (a (b) c) Z 1 42 42 0 -1 4194316 7 0 0 0 12 3 0 0 20 0 1 0 "
			"5000 0 0 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 "
			"0 0 0 0 0 0 0 256\n";
	/* Before Linux 3.3: fields up to (44), no exit code (52). */
	const char *old = "42 (a (b) c) Z 1 42 42 0 -1 4194316 7 0 0 0 12 3 0 0 20 0 1 0 "
			  "5000 0 0 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";
	struct rm_pstat st;

	CHECK(rm_pstat_parse(s, &st) == 0);
	CHECK_STR(st.comm, "a (b) c");
	CHECK(st.state == 'Z');
	CHECK_U64(st.ppid, 1);                 /* (4) */
	CHECK_U64(st.flags, 4194316);          /* (9), after (8) = -1, not a count */
	CHECK_U64(st.minflt, 7);               /* (10) */
	CHECK_U64(st.cminflt, 0);              /* (11) */
	CHECK_U64(st.starttime, 5000);         /* (22) */
	CHECK(st.has_exit_code);
	CHECK_U64(st.exit_code, 256);          /* (52) */
	CHECK(rm_pstat_parse(old, &st) == 0);
	CHECK_U64(st.starttime, 5000);
	CHECK(!st.has_exit_code);
	CHECK(rm_pstat_parse("no paren", &st) < 0);
	/* Past 2^64 a number saturates, as strtoull's did. */
	CHECK(rm_pstat_parse("7 (x) R 1 7 7 0 -1 0 0 0 0 0 99999999999999999999 18446744073709551615 "
			     "0 0 20 0 1 0 5000 0 0\n", &st) == 0);
	CHECK_U64(st.utime, UINT64_MAX);
	CHECK_U64(st.stime, UINT64_MAX);
	CHECK(rm_pstat_parse("7 (x) R 1 7 7 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 5000 0\n", &st) < 0);
}

static void exit_column(void)
{
	CHECK(rm_exit_column(3 << 8) == 3);
	CHECK(rm_exit_column(0) == 0);
	CHECK(rm_exit_column(15) == 143);  /* killed by SIGTERM */
	CHECK(rm_exit_column(9 | 0x80) == 137);  /* SIGKILL with a core flag */
}

/*
 * A member's /proc directory (rm_pdir_open) reads that process's files
 * only: across its exec (the new program's), never once it has ended and
 * been reaped, when a read by path would meet whatever took the pid.
 */
static void pdir_reads_one_process(void)
{
	char buf[1024];
	struct rm_pstat st;
	int p[2], dir;
	pid_t pid;

	CHECK(pipe(p) == 0);
	pid = fork();
	if (pid == 0) {
		char c;
		close(p[1]);
		if (read(p[0], &c, 1) == 1)
			execlp("sleep", "sleep", "30", (char *)NULL);
		_exit(1);
	}
	close(p[0]);
	dir = rm_pdir_open(pid);
	CHECK(dir >= 0);
	CHECK(rm_pfile_read_in(dir, NULL, pid, "stat", buf, sizeof(buf), 0) > 0);
	CHECK(rm_pstat_parse(buf, &st) == 0);
	/* Its exec: the directory now reads the new program. */
	CHECK(write(p[1], "x", 1) == 1);
	for (int i = 0; i < 3000 && strcmp(st.comm, "sleep") != 0; i++) {
		usleep(10000);
		if (rm_pfile_read_in(dir, NULL, pid, "stat", buf, sizeof(buf), 0) <= 0 ||
		    rm_pstat_parse(buf, &st) < 0)
			break;
	}
	CHECK_STR(st.comm, "sleep");
	CHECK(rm_pfile_read_in(dir, NULL, pid, "cmdline", buf, sizeof(buf), 0) > 0);
	CHECK_STR(buf, "sleep");
	kill(pid, SIGKILL);
	CHECK(waitpid(pid, NULL, 0) == pid);
	/* Ended and reaped: nothing more through its directory. */
	errno = 0;
	CHECK(rm_pfile_read_in(dir, NULL, pid, "stat", buf, sizeof(buf), 0) < 0);
	CHECK(errno == ESRCH);
	CHECK(rm_pfile_read_in(dir, NULL, pid, "cmdline", buf, sizeof(buf), 0) < 0);
	rm_pfile_close(&dir);
	CHECK(dir == -1);
	close(p[1]);
}

int main(void)
{
	RUN(add_find_remove_many);
	RUN(walk_sees_every_node_once);
	RUN(adopt_chain_in_any_order);
	RUN(adopt_orphans_and_group);
	RUN(outsiders_never_join);
	RUN(membership_is_sticky);
	RUN(reused_pid_is_a_new_node);
	RUN(stat_fields);
	RUN(exit_column);
	RUN(pdir_reads_one_process);
	return tap_done();
}
