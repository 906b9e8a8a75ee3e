/*
 * t_kmsg: OOM kill lines as the kernel prints them to /dev/kmsg, and the
 * reader over a fixture file (both lines of one kill merged), and the
 * kills of one cgroup logged after a mark.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kmsg.h"
#include "tap.h"

static int parse(const char *s, struct rm_oom_kill *o)
{
	return rm_kmsg_oom_parse(s, strlen(s), o);
}

static void test_killed_process(void)
{
	struct rm_oom_kill o;

	CHECK(parse("3,420,1139857309,-;Memory cgroup out of memory: Killed process 8612 (python3) "
		    "total-vm:221380kB, anon-rss:65152kB, file-rss:6396kB, shmem-rss:0kB, UID:0\n", &o));
	CHECK_U64(o.pid, 8612);
	CHECK_STR(o.name, "python3");
	CHECK_NEAR(o.klog_s, 1139.857309, 1e-9);
	CHECK_U64(o.constraint, RM_OOM_MEMCG);
	CHECK(parse("3,5,77,-;Out of memory: Killed process 12 (a) b) c) total-vm:1kB", &o));
	CHECK_STR(o.name, "a) b) c");
	/* "Out of memory" alone does not say which constraint. */
	CHECK_U64(o.constraint, RM_OOM_UNKNOWN);
}

static void test_oom_kill_line(void)
{
	struct rm_oom_kill o;

	CHECK(parse("6,419,1139857294,-;oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),"
		    "cpuset=/,mems_allowed=0,oom_memcg=/rmtest,task_memcg=/rmtest,task=cc1plus,pid=8612,uid=0", &o));
	CHECK_U64(o.pid, 8612);
	CHECK_STR(o.name, "cc1plus");
	CHECK_U64(o.constraint, RM_OOM_MEMCG);
	CHECK_STR(o.oom_memcg, "/rmtest");
	CHECK_STR(o.task_memcg, "/rmtest");
	CHECK_STR(rm_kmsg_constraint_name(o.constraint), "CONSTRAINT_MEMCG");
}

/* Lines captured on this machine (Linux 6.x, cgroup v1 memory) and from
 * mm/oom_kill.c's format: the global kill has no oom_memcg. */
static void test_constraints(void)
{
	struct rm_oom_kill o;

	CHECK(parse("6,2201,912345678901,-;oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),"
		    "cpuset=/,mems_allowed=0,global_oom,task_memcg=/user.slice/build.scope,task=cc1plus,pid=4242,uid=1000", &o));
	CHECK_U64(o.constraint, RM_OOM_NONE);
	CHECK_STR(o.oom_memcg, "");
	CHECK_STR(o.task_memcg, "/user.slice/build.scope");
	CHECK_STR(o.name, "cc1plus");
	CHECK_U64(o.pid, 4242);
	CHECK(parse("6,7,8,-;oom-kill:constraint=CONSTRAINT_CPUSET,nodemask=0,cpuset=small,mems_allowed=0,"
		    "task_memcg=/,task=ld,pid=9,uid=0", &o));
	CHECK_U64(o.constraint, RM_OOM_CPUSET);
	CHECK(parse("6,7,8,-;oom-kill:constraint=CONSTRAINT_MEMORY_POLICY,nodemask=1,cpuset=/,mems_allowed=0-1,"
		    "task_memcg=/,task=lto1,pid=10,uid=0", &o));
	CHECK_U64(o.constraint, RM_OOM_MEMORY_POLICY);
	CHECK_STR(rm_kmsg_constraint_name(o.constraint), "CONSTRAINT_MEMORY_POLICY");
	/* Paths with commas run to the next key; a name with ",pid=" ends at the last one. */
	CHECK(parse("6,7,8,-;oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,"
		    "oom_memcg=/a,b,task_memcg=/a,b/c,task=x,pid=1,pid=77,uid=0", &o));
	CHECK_STR(o.oom_memcg, "/a,b");
	CHECK_STR(o.task_memcg, "/a,b/c");
	CHECK_STR(o.name, "x,pid=1");
	CHECK_U64(o.pid, 77);
	CHECK(parse("6,7,8,-;oom-kill:constraint=CONSTRAINT_BOGUS,task=x,pid=5,uid=0", &o));
	CHECK_U64(o.constraint, RM_OOM_UNKNOWN);
	CHECK_STR(rm_kmsg_constraint_name(99), "");
}

static void test_is_record(void)
{
	CHECK(rm_kmsg_is_record("6,1,2,-;x", 9));
	CHECK(rm_kmsg_is_record("6,1,2;x", 7));
	CHECK(!rm_kmsg_is_record("6,1;x", 5));
	CHECK(!rm_kmsg_is_record("\0\0\0\0", 4));
	CHECK(!rm_kmsg_is_record("", 0));
	CHECK(!rm_kmsg_is_record("a,b,c;", 6));
}

static void test_not_oom(void)
{
	struct rm_oom_kill o;

	CHECK(!parse("4,341,1139856797,-;python3 invoked oom-killer: gfp_mask=0xcc0", &o));
	CHECK(!parse("6,1,2,-;Killed process 5 (x)", &o));
	CHECK(!parse("no semicolon", &o));
	CHECK(!parse("3,420,x,-;Out of memory: Killed process 1 (a)", &o));
	CHECK(!parse("3,420,5,-;Out of memory: Killed process (a)", &o));
	CHECK(!parse("", &o));
}

static int n_seen;
static struct rm_oom_kill seen[4];

static void cb(void *arg, const struct rm_oom_kill *o)
{
	(void)arg;
	if (n_seen < 4)
		seen[n_seen] = *o;
	n_seen++;
}

static void test_read_file(void)
{
	char path[] = "/tmp/t_kmsg.XXXXXX";
	int fd = mkstemp(path);
	const char *text =
		"6,418,1000000000,-;oom-kill:constraint=CONSTRAINT_MEMCG,task=oomer,pid=77,uid=0\n"
		"3,419,1000000100,-;Memory cgroup out of memory: Killed process 77 (oomer) total-vm:1kB\n"
		" SUBSYSTEM=memory\n"
		"6,500,2000000000,-;something else\n"
		"3,501,3000000000,-;Out of memory: Killed process 99 (ld) total-vm:1kB\n";

	CHECK(fd >= 0);
	CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	close(fd);
	n_seen = 0;
	CHECK(rm_kmsg_read_ooms(path, cb, NULL) == 2);
	CHECK_U64(n_seen, 2);
	CHECK_U64(seen[0].pid, 77);
	CHECK_STR(seen[0].name, "oomer");
	CHECK_NEAR(seen[0].klog_s, 1000.0, 1e-6);
	CHECK_U64(seen[0].constraint, RM_OOM_MEMCG);
	CHECK_U64(seen[1].pid, 99);
	CHECK_STR(seen[1].name, "ld");
	unlink(path);
	CHECK(rm_kmsg_read_ooms("/nonexistent/kmsg", cb, NULL) == -1);
}

/* The two lines of one kill merge: the oom-kill line's constraint and
 * cgroups with the "Killed process" line's name; a last record without a
 * newline counts. */
static void test_read_merge(void)
{
	char path[] = "/tmp/t_kmsg.XXXXXX";
	int fd = mkstemp(path);
	const char *text =
		"6,418,5000000,-;oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,"
		"oom_memcg=/lim,task_memcg=/lim/job,task=cc1plus,pid=300,uid=0\n"
		"3,419,5000100,-;Memory cgroup out of memory: Killed process 300 (cc1plus) total-vm:1kB\n"
		"6,420,7000000,-;oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,"
		"global_oom,task_memcg=/,task=ld,pid=301,uid=0\n"
		"3,421,7000100,-;Out of memory: Killed process 301 (ld) total-vm:1kB";

	CHECK(fd >= 0);
	CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	close(fd);
	n_seen = 0;
	CHECK(rm_kmsg_read_ooms(path, cb, NULL) == 2);
	CHECK_U64(seen[0].pid, 300);
	CHECK_U64(seen[0].constraint, RM_OOM_MEMCG);
	CHECK_STR(seen[0].oom_memcg, "/lim");
	CHECK_STR(seen[0].task_memcg, "/lim/job");
	CHECK_U64(seen[1].pid, 301);
	CHECK_U64(seen[1].constraint, RM_OOM_NONE);
	CHECK_STR(seen[1].name, "ld");
	unlink(path);
}

/* A cgroup named "a,task=x" (cgroup names may hold ',' and '='): the
 * victim keeps the name of its "Killed process" line, whichever line
 * comes first, and the cgroup path keeps its ",task=x". */
static void test_cgroup_path_with_task_keeps_victim_name(void)
{
	char path[] = "/tmp/t_kmsg.XXXXXX";
	int fd = mkstemp(path);
	const char *text =
		"6,418,5000000,-;oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,"
		"oom_memcg=/ci/job-42,task_memcg=/ci/job-42/a,task=x,task=cc1plus,pid=300,uid=0\n"
		"3,419,5000100,-;Memory cgroup out of memory: Killed process 300 (cc1plus) total-vm:1kB\n"
		"3,420,7000000,-;Memory cgroup out of memory: Killed process 301 (ld) total-vm:1kB\n"
		"6,421,7000100,-;oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,"
		"oom_memcg=/ci/job-42,task_memcg=/ci/job-42/b,task=y,task=ld,pid=301,uid=0\n";

	CHECK(fd >= 0);
	CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	close(fd);
	n_seen = 0;
	CHECK(rm_kmsg_read_ooms(path, cb, NULL) == 2);
	CHECK_U64(seen[0].pid, 300);
	CHECK_STR(seen[0].name, "cc1plus");
	CHECK_STR(seen[0].task_memcg, "/ci/job-42/a,task=x");
	CHECK_STR(seen[0].oom_memcg, "/ci/job-42");
	CHECK_U64(seen[1].pid, 301);
	CHECK_STR(seen[1].name, "ld");
	CHECK_STR(seen[1].task_memcg, "/ci/job-42/b,task=y");
	unlink(path);
}

/* The kernel's report before a kill (a real 6.18 memcg OOM, cut
 * short): the cgroup's usage and limit, and the task dump of the cgroup,
 * each task's resident pages; handed with its kill, not the next one. */
static struct rm_oom_task seen_tasks[4][4];

static void cb_tasks(void *arg, const struct rm_oom_kill *o)
{
	(void)arg;
	if (n_seen < 4) {
		seen[n_seen] = *o;
		for (size_t i = 0; i < o->ntasks && i < 4; i++)
			seen_tasks[n_seen][i] = o->tasks[i];
	}
	n_seen++;
}

static void test_read_dump(void)
{
	char path[] = "/tmp/t_kmsg.XXXXXX";
	int fd = mkstemp(path);
	struct rm_oom_task t;
	long long u, l;
	const char *text =
		"4,900,1092222000,-;oomer invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0\n"
		"6,901,1092222816,-;memory: usage 65536kB, limit 65536kB, failcnt 41\n"
		"6,902,1092222820,-;memory+swap: usage 65536kB, limit 9007199254740988kB, failcnt 0\n"
		"6,903,1092222841,-;Memory cgroup stats for /oom-probe-4037:\n"
		"6,904,1092247742,-;Tasks state (memory values in pages):\n"
		"6,905,1092247744,-;[  pid  ]   uid  tgid total_vm      rss rss_anon rss_file rss_shmem pgtables_bytes swapents oom_score_adj name\n"
		"6,906,1092247748,-;[  32251]     0 32251    12441    11989    11680      309         0   139264        0             0 oomer\n"
		"6,907,1092247754,-;[  32264]  1000 32264     5706     4441     4119      322         0    73728        0         -1000 cc1 plus\n"
		"6,908,1092247758,-;oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,"
		"oom_memcg=/oom-probe-4037,task_memcg=/oom-probe-4037,task=oomer,pid=32251,uid=0\n"
		"3,909,1092247827,-;Memory cgroup out of memory: Killed process 32251 (oomer) total-vm:49764kB\n"
		"3,950,1192247827,-;Out of memory: Killed process 99 (ld) total-vm:1kB\n";

	CHECK(rm_kmsg_memcg_parse("memory: usage 65536kB, limit 614400kB, failcnt 41", 50, &u, &l));
	CHECK_U64(u, 65536);
	CHECK_U64(l, 614400);
	CHECK(!rm_kmsg_memcg_parse("memory+swap: usage 1kB, limit 2kB", 33, &u, &l));
	/* A 5.x dump has 7 numbers before the name. */
	CHECK(rm_kmsg_task_parse("[   1234]     0  1234    10000     2500    65536        0             0 make", 76, 7, &t));
	CHECK_U64(t.pid, 1234);
	CHECK_U64(t.tgid, 1234);
	CHECK_U64(t.rss_pages, 2500);
	CHECK_STR(t.name, "make");
	CHECK(!rm_kmsg_task_parse("[  pid  ]   uid  tgid total_vm      rss name", 44, 4, &t));
	CHECK(fd >= 0);
	CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	close(fd);
	n_seen = 0;
	CHECK(rm_kmsg_read_ooms(path, cb_tasks, NULL) == 2);
	CHECK_U64(seen[0].pid, 32251);
	CHECK_U64(seen[0].mem_usage_kib, 65536);
	CHECK_U64(seen[0].mem_limit_kib, 65536);
	CHECK(seen[0].dump_seen);
	CHECK_U64(seen[0].ntasks, 2);
	CHECK_U64(seen_tasks[0][0].tgid, 32251);
	CHECK_U64(seen_tasks[0][0].rss_pages, 11989);
	CHECK_STR(seen_tasks[0][0].name, "oomer");
	CHECK_U64(seen_tasks[0][1].pid, 32264);
	CHECK_U64(seen_tasks[0][1].uid, 1000);
	CHECK_U64(seen_tasks[0][1].rss_pages, 4441);
	CHECK_STR(seen_tasks[0][1].name, "cc1 plus");
	/* The next kill had no report of its own. */
	CHECK_U64(seen[1].pid, 99);
	CHECK_U64(seen[1].ntasks, 0);
	CHECK(seen[1].mem_limit_kib == -1);
	CHECK(!seen[1].dump_seen);
	unlink(path);
}

/* "--kmsg /dev/zero" must return.  Every read is bounded: a
 * device with no kernel log record is refused with EBADMSG. */
static void test_read_bounded(void)
{
	char path[] = "/tmp/t_kmsg.XXXXXX";
	int fd = mkstemp(path);
	static char junk[200000];

	n_seen = 0;
	errno = 0;
	CHECK(rm_kmsg_read_ooms("/dev/zero", cb, NULL) == -1);
	CHECK_U64(errno, EBADMSG);
	/* A large file of text lines that are not records: the same. */
	memset(junk, 'x', sizeof(junk));
	for (size_t i = 79; i < sizeof(junk); i += 80)
		junk[i] = '\n';
	CHECK(fd >= 0);
	CHECK(write(fd, junk, sizeof(junk)) == (ssize_t)sizeof(junk));
	close(fd);
	errno = 0;
	CHECK(rm_kmsg_read_ooms(path, cb, NULL) == -1);
	CHECK_U64(errno, EBADMSG);
	CHECK_U64(n_seen, 0);
	unlink(path);
}

/* append(path, text): text at the end of the file, as the kernel logs. */
static void append(const char *path, const char *text)
{
	FILE *f = fopen(path, "a");

	CHECK(f != NULL);
	if (!f)
		return;
	CHECK(fputs(text, f) >= 0);
	CHECK(fclose(f) == 0);
}

/*
 * A mark, then the kills of one cgroup logged after it: a kill logged
 * before the mark (of the same cgroup) is not one, nor another cgroup's
 * kill at the same moment, nor a cgroup whose name only ends like ours,
 * nor a host-wide OOM.  The stamps say nothing: the one before the mark
 * is stamped later than those after it.
 */
static void test_since_mark_in_cgroup(void)
{
	char path[] = "/tmp/t_kmsg.XXXXXX";
	int fd = mkstemp(path);
	struct rm_kmsg_mark m;

	CHECK(fd >= 0);
	close(fd);
	append(path, "6,1,9000000000,-;oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,"
		     "mems_allowed=0,oom_memcg=/process_api/27b4/rm-tree.1703,"
		     "task_memcg=/process_api/27b4/rm-tree.1703,task=before,pid=41,uid=0\n");
	CHECK(rm_kmsg_mark(&m, path) == 0);
	CHECK(m.ok);
	append(path,
	       "6,2,10,-;oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,"
	       "oom_memcg=/rm-monitor-test-29192,task_memcg=/rm-monitor-test-29192,"
	       "task=oomer,pid=29300,uid=0\n"
	       "3,3,11,-;Memory cgroup out of memory: Killed process 29300 (oomer) total-vm:1kB\n"
	       "6,4,20,-;oom-kill:constraint=CONSTRAINT_MEMCG,oom_memcg=/a/rm-tree.17031,"
	       "task_memcg=/a/rm-tree.17031,task=x,pid=5,uid=0\n"
	       "6,5,30,-;oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,"
	       "global_oom,task_memcg=/process_api/27b4/rm-tree.1703,task=cc1plus,pid=77,uid=0\n"
	       "3,6,31,-;Out of memory: Killed process 77 (cc1plus) total-vm:1kB\n"
	       "6,7,40,-;oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,"
	       "oom_memcg=/process_api/27b4/rm-tree.1703,task_memcg=/process_api/27b4/rm-tree.1703,"
	       "task=memhog,pid=1892,uid=0\n"
	       "3,8,41,-;Memory cgroup out of memory: Killed process 1892 (memhog) total-vm:1kB\n");
	n_seen = 0;
	CHECK(rm_kmsg_oom_since(&m, "rm-tree.1703", cb, NULL) == 1);
	CHECK_U64(n_seen, 1);
	CHECK_U64(seen[0].pid, 1892);
	CHECK_STR(seen[0].name, "memhog");
	CHECK_STR(seen[0].oom_memcg, "/process_api/27b4/rm-tree.1703");
	CHECK_U64(seen[0].constraint, RM_OOM_MEMCG);
	/* Read on from there: nothing new, then a kill logged since. */
	n_seen = 0;
	CHECK(rm_kmsg_oom_since(&m, "rm-tree.1703", cb, NULL) == 0);
	append(path, "6,9,50,-;oom-kill:constraint=CONSTRAINT_MEMCG,oom_memcg=/rm-tree.1703,"
		     "task_memcg=/rm-tree.1703/sub,task=ld,pid=1900,uid=0\n");
	CHECK(rm_kmsg_oom_since(&m, "rm-tree.1703", cb, NULL) == 1);
	CHECK_STR(seen[0].name, "ld");
	CHECK_STR(seen[0].task_memcg, "/rm-tree.1703/sub");
	rm_kmsg_unmark(&m);
	CHECK(!m.ok);
	CHECK(rm_kmsg_oom_since(&m, "rm-tree.1703", cb, NULL) == -1 && errno == EBADF);

	/* The other cgroups by their names, every kill by none. */
	CHECK(rm_kmsg_mark(&m, path) == 0);
	CHECK(rm_kmsg_oom_since(&m, NULL, cb, NULL) == 0);
	rm_kmsg_unmark(&m);
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0);
	m.ok = 1;
	m.fd = fd;
	m.is_dev = 0;
	n_seen = 0;
	CHECK(rm_kmsg_oom_since(&m, "rm-monitor-test-29192", cb, NULL) == 1);
	CHECK_STR(seen[0].name, "oomer");
	rm_kmsg_unmark(&m);
	m.fd = open(path, O_RDONLY);
	m.ok = m.fd >= 0;
	n_seen = 0;
	CHECK(rm_kmsg_oom_since(&m, NULL, cb, NULL) == 6);
	CHECK_STR(seen[0].name, "before");
	CHECK_STR(seen[3].name, "cc1plus");
	CHECK_U64(seen[3].constraint, RM_OOM_NONE);
	rm_kmsg_unmark(&m);
	unlink(path);
}

/* RM_KMSG names the log to mark when none is given; a log that cannot be
 * opened is no mark. */
static void test_mark_env_and_errors(void)
{
	char path[] = "/tmp/t_kmsg.XXXXXX";
	int fd = mkstemp(path);
	struct rm_kmsg_mark m;

	CHECK(fd >= 0);
	close(fd);
	setenv("RM_KMSG", path, 1);
	CHECK(rm_kmsg_mark(&m, NULL) == 0);
	append(path, "6,1,0,-;oom-kill:constraint=CONSTRAINT_MEMCG,oom_memcg=/rm-tree.9,"
		     "task_memcg=/rm-tree.9,task=early,pid=4242,uid=0\n");
	n_seen = 0;
	CHECK(rm_kmsg_oom_since(&m, "rm-tree.9", cb, NULL) == 1);
	CHECK_STR(seen[0].name, "early");
	CHECK_U64(seen[0].pid, 4242);
	rm_kmsg_unmark(&m);
	unsetenv("RM_KMSG");
	CHECK(rm_kmsg_mark(&m, "/nonexistent/kmsg") == -1 && errno == ENOENT);
	CHECK(!m.ok);
	CHECK(rm_kmsg_oom_since(&m, NULL, cb, NULL) == -1);
	unlink(path);
}

int main(void)
{
	RUN(test_killed_process);
	RUN(test_oom_kill_line);
	RUN(test_not_oom);
	RUN(test_constraints);
	RUN(test_is_record);
	RUN(test_read_file);
	RUN(test_read_merge);
	RUN(test_cgroup_path_with_task_keeps_victim_name);
	RUN(test_read_dump);
	RUN(test_read_bounded);
	RUN(test_since_mark_in_cgroup);
	RUN(test_mark_env_and_errors);
	return tap_done();
}
