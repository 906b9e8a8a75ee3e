/*
 * Unit tests of lib/cgroup: the pure parsers on strings, then the readers
 * on the v2 fixture tree (tests/fixtures/cgroup-v2, through RM_PROC_ROOT
 * and RM_SYS_ROOT).
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup.h"
#include "tap.h"

static void mountinfo_lines(void)
{
	char v2[] = "31 23 0:27 / /sys/fs/cgroup rw,nosuid shared:9 - cgroup2 cgroup2 rw,nsdelegate";
	char v1[] = "34 30 0:31 /docker/abc /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory";
	char esc[] = "40 23 0:40 / /mnt/my\\040cg rw - cgroup2 none rw";
	char bad[] = "not a mountinfo line";
	struct rm_cg_mount m;

	CHECK(rm_cg_parse_mountinfo_line(v2, &m) == 0);
	CHECK_STR(m.fstype, "cgroup2");
	CHECK_STR(m.point, "/sys/fs/cgroup");
	CHECK_STR(m.root, "/");
	CHECK(rm_cg_parse_mountinfo_line(v1, &m) == 0);
	CHECK_STR(m.fstype, "cgroup");
	CHECK_STR(m.root, "/docker/abc");
	CHECK(rm_cg_has_token(m.super, "memory"));
	CHECK(!rm_cg_has_token(m.super, "mem"));
	CHECK(rm_cg_parse_mountinfo_line(esc, &m) == 0);
	CHECK_STR(m.point, "/mnt/my cg");
	CHECK(rm_cg_parse_mountinfo_line(bad, &m) < 0);
}

static void proc_cgroup_lines(void)
{
	const char *hybrid = "9:name=systemd:/\n5:cpu,cpuacct:/build\n4:memory:/process_api/27b4\n0::/\n";
	const char *v2 = "0::/user.slice/user-0.slice/session-3.scope\n";
	char p[256];

	CHECK(rm_cg_parse_proc_cgroup(hybrid, "memory", p, sizeof(p)) == 0);
	CHECK_STR(p, "/process_api/27b4");
	CHECK(rm_cg_parse_proc_cgroup(hybrid, "cpu", p, sizeof(p)) == 0);
	CHECK_STR(p, "/build");
	CHECK(rm_cg_parse_proc_cgroup(hybrid, NULL, p, sizeof(p)) == 0);
	CHECK_STR(p, "/");
	CHECK(rm_cg_parse_proc_cgroup(v2, NULL, p, sizeof(p)) == 0);
	CHECK_STR(p, "/user.slice/user-0.slice/session-3.scope");
	CHECK(rm_cg_parse_proc_cgroup(v2, "memory", p, sizeof(p)) < 0);
	/* "cpuacct" is not "cpu". */
	CHECK(rm_cg_parse_proc_cgroup("3:cpuacct:/x\n", "cpu", p, sizeof(p)) < 0);
	CHECK(rm_cg_parse_proc_cgroup(v2, NULL, p, 8) < 0);   /* does not fit */
}

static void key_values(void)
{
	const char *stat = "cache 100\nrss 200\ninactive_file 4096\ntotal_inactive_file 8192\n"
			   "hierarchical_memory_limit 536870912\n";
	const char *events = "low 0\nhigh 0\nmax 12\noom 3\noom_kill 3\noom_group_kill 0\n";
	const char *oomc = "oom_kill_disable 0\nunder_oom 0\noom_kill 7\n";
	uint64_t v;

	CHECK(rm_cg_parse_kv(stat, "inactive_file", &v) == 0);
	CHECK_U64(v, 4096);
	CHECK(rm_cg_parse_kv(stat, "total_inactive_file", &v) == 0);
	CHECK_U64(v, 8192);
	CHECK(rm_cg_parse_kv(stat, "hierarchical_memory_limit", &v) == 0);
	CHECK_U64(v, 536870912);
	CHECK(rm_cg_parse_kv(events, "oom_kill", &v) == 0);
	CHECK_U64(v, 3);
	CHECK(rm_cg_parse_kv(oomc, "oom_kill", &v) == 0);
	CHECK_U64(v, 7);
	CHECK(rm_cg_parse_kv(stat, "swap", &v) < 0);
	CHECK(rm_cg_parse_kv("oom_kill x\n", "oom_kill", &v) < 0);
}

static void limits_and_quotas(void)
{
	uint64_t b = 0;
	long long q, p;

	CHECK(rm_cg_parse_limit("max\n", &b) == 0);
	CHECK(rm_cg_parse_limit("9223372036854771712\n", &b) == 0);   /* v1: none */
	CHECK(rm_cg_parse_limit("536870912\n", &b) == 1);
	CHECK_U64(b, 536870912);
	CHECK(rm_cg_parse_limit("lots\n", &b) < 0);
	CHECK(rm_cg_parse_cpu_max("max 100000\n", &q, &p) == 0);
	CHECK(rm_cg_parse_cpu_max("150000 100000\n", &q, &p) == 1);
	CHECK(q == 150000 && p == 100000);
	CHECK(rm_cg_parse_cpu_max("150000\n", &q, &p) < 0);
	CHECK(rm_cg_quota_cores(150000, 100000, 64) == 2);   /* 1.5 CPUs round up */
	CHECK(rm_cg_quota_cores(50000, 100000, 64) == 1);
	CHECK(rm_cg_quota_cores(400000, 100000, 2) == 2);    /* affinity binds */
	CHECK(rm_cg_quota_cores(-1, 100000, 3) == 3);        /* v1 -1: none */
}

static void sizes(void)
{
	uint64_t b;

	CHECK(rm_cg_parse_size("64M", &b) == 0);
	CHECK_U64(b, 64ULL << 20);
	CHECK(rm_cg_parse_size("8GiB", &b) == 0);
	CHECK_U64(b, 8ULL << 30);
	CHECK(rm_cg_parse_size("1.5G", &b) == 0);
	CHECK_U64(b, 3ULL << 29);
	CHECK(rm_cg_parse_size("4096", &b) == 0);
	CHECK_U64(b, 4096);
	CHECK(rm_cg_parse_size("0", &b) < 0);
	CHECK(rm_cg_parse_size("64Q", &b) < 0);
	CHECK(rm_cg_parse_size("-1G", &b) < 0);
	CHECK(rm_cg_parse_size("", &b) < 0);
}

/* Our own affinity, to compare against. */
static int own_cpus(void)
{
	cpu_set_t s;

	if (sched_getaffinity(0, sizeof(s), &s) < 0)
		return 1;
	return CPU_COUNT(&s);
}

static void fixture_v2(void)
{
	struct rm_cg cg;
	struct rm_cg_reading r;
	char why[256];
	int n = own_cpus();

	/* self: /build.slice/job, memory.max max below an 8 GiB parent. */
	CHECK(rm_cg_open(&cg, 0, NULL, why, sizeof(why)) == 0);
	CHECK(cg.v2);
	CHECK(cg.oom_known);
	CHECK_U64(cg.oom_base, 3);
	CHECK(strstr(cg.dir, "/fs/cgroup/build.slice/job") != NULL);
	rm_cg_read(&cg, &r);
	CHECK(r.has & RM_CG_USED);
	CHECK_U64(r.used, 5905580032ULL);
	CHECK(r.has & RM_CG_LIMIT);
	CHECK_U64(r.limit, 8589934592ULL);
	/* 8 GiB - (5632 MiB used - 512 MiB inactive file) = 3 GiB */
	CHECK(r.has & RM_CG_AVAIL);
	CHECK_U64(r.avail, 3221225472ULL);
	CHECK(r.has & RM_CG_SWAP);
	CHECK_U64(r.swap, 104857600);
	CHECK(r.has & RM_CG_OOM);
	CHECK_U64(r.oom_kills, 0);          /* since opened */
	CHECK(r.has & RM_CG_PSI_FULL);
	CHECK_NEAR(r.psi_full10, 7.25, 1e-9);
	CHECK(rm_cg_cores(0) == (n < 2 ? n : 2));     /* a 1.5-CPU quota */

	/* The same cgroup named by path, both ways. */
	CHECK(rm_cg_open(&cg, 0, "/build.slice/job", why, sizeof(why)) == 0);
	CHECK(strstr(cg.dir, "/fs/cgroup/build.slice/job") != NULL);
	CHECK(rm_cg_open(&cg, 0, "/sys/fs/cgroup/build.slice/job", why, sizeof(why)) == 0);
	rm_cg_read(&cg, &r);
	CHECK_U64(r.limit, 8589934592ULL);
	/* Read again through the descriptors kept by the first reading (the
	 * limit walk's, the swap's): the same figures. */
	rm_cg_read(&cg, &r);
	CHECK_U64(r.limit, 8589934592ULL);
	CHECK_U64(r.avail, 3221225472ULL);
	CHECK_U64(r.swap, 104857600);

	/* memory.max max all the way up: no limit, so no available either. */
	CHECK(rm_cg_open(&cg, 4244, NULL, why, sizeof(why)) == 0);
	rm_cg_read(&cg, &r);
	CHECK(r.has & RM_CG_USED);
	CHECK(!(r.has & RM_CG_LIMIT));
	CHECK(!(r.has & RM_CG_AVAIL));
	CHECK(!(r.has & RM_CG_SWAP));       /* no memory.swap.current there */
	/* 4243: a 0.5-CPU quota under the unlimited parent: 1 core. */
	CHECK(rm_cg_cores(4243) == 1);

	CHECK(rm_cg_open(&cg, 0, "/no/such/group", why, sizeof(why)) < 0);
	CHECK(strstr(why, "no memory cgroup") != NULL);
}

int main(void)
{
	const char *top = getenv("RM_TOP");
	char proc[4096], sys[4096];

	RUN(mountinfo_lines);
	RUN(proc_cgroup_lines);
	RUN(key_values);
	RUN(limits_and_quotas);
	RUN(sizes);
	snprintf(proc, sizeof(proc), "%s/tests/fixtures/cgroup-v2/proc", top ? top : ".");
	snprintf(sys, sizeof(sys), "%s/tests/fixtures/cgroup-v2/sys", top ? top : ".");
	setenv("RM_PROC_ROOT", proc, 1);
	setenv("RM_SYS_ROOT", sys, 1);
	RUN(fixture_v2);
	return tap_done();
}
