/*
 * t_kmsg: OOM kill lines as the kernel prints them to /dev/kmsg, and the
 * reader over a fixture file (both lines of one kill merged).
 */
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
	CHECK_NEAR(o.mono_s, 1139.857309, 1e-9);
	CHECK(parse("3,5,77,-;Out of memory: Killed process 12 (a) b) c) total-vm:1kB", &o));
	CHECK_STR(o.name, "a) b) c");
}

static void test_oom_kill_line(void)
{
	struct rm_oom_kill o;

	CHECK(parse("6,419,1139857294,-;oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),"
		    "cpuset=/,mems_allowed=0,oom_memcg=/rmtest,task_memcg=/rmtest,task=cc1plus,pid=8612,uid=0", &o));
	CHECK_U64(o.pid, 8612);
	CHECK_STR(o.name, "cc1plus");
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
	CHECK_NEAR(seen[0].mono_s, 1000.0, 1e-6);
	CHECK_U64(seen[1].pid, 99);
	CHECK_STR(seen[1].name, "ld");
	unlink(path);
	CHECK(rm_kmsg_read_ooms("/nonexistent/kmsg", cb, NULL) == -1);
}

int main(void)
{
	RUN(test_killed_process);
	RUN(test_oom_kill_line);
	RUN(test_not_oom);
	RUN(test_read_file);
	return tap_done();
}
