/*
 * t_cgchild: a child memory cgroup of our own on fixture trees written
 * here (RM_PROC_ROOT, RM_SYS_ROOT): where it goes for v2 and v1 (the
 * mount's root, escapes in mountinfo, a cgroup outside what is mounted),
 * and its files: the limit written, the peak and the OOM kills read,
 * the PID entered, the directory removed.  No kernel cgroup is touched.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgchild.h"
#include "tap.h"

static char top[256], sys_root[300];

/* put(rel, text): the file top/rel holds text, its directories made. */
static void put(const char *rel, const char *text)
{
	char p[1024];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", top, rel);
	for (char *s = p + strlen(top) + 1; (s = strchr(s, '/')) != NULL; s++) {
		*s = '\0';
		mkdir(p, 0755);
		*s = '/';
	}
	f = fopen(p, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	fputs(text, f);
	fclose(f);
}

static char *get(const char *path)
{
	static char buf[256];
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* A hybrid host: cgroup2 at /sys/fs/cgroup/unified, v1 memory at
 * /sys/fs/cgroup/memory (the mount point with a space, escaped). */
#define MI_HYBRID \
	"22 27 0:21 / /proc rw,nosuid - proc proc rw\n" \
	"30 23 0:26 / /sys/fs/cgroup/unified rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n" \
	"33 23 0:29 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n" \
	"35 23 0:31 / /sys/fs/cgroup/my\\040memory rw,nosuid - cgroup cgroup rw,memory\n"

static void where_v2_and_v1(void)
{
	char d[4096];

	put("proc/self/mountinfo", MI_HYBRID);
	put("proc/self/cgroup", "6:memory:/user/job\n4:cpu,cpuacct:/user\n0::/build.slice/job\n");
	put("sys/fs/cgroup/unified/build.slice/job/memory.current", "0\n");
	put("sys/fs/cgroup/my memory/user/job/memory.usage_in_bytes", "0\n");
	CHECK(rm_cg_child_where(1, "rm-tree.7", d, sizeof(d)) == 0);
	CHECK(strcmp(d + strlen(sys_root), "/fs/cgroup/unified/build.slice/job/rm-tree.7") == 0);
	CHECK(strncmp(d, sys_root, strlen(sys_root)) == 0);
	CHECK(rm_cg_child_where(0, "rm-tree.7", d, sizeof(d)) == 0);
	CHECK_STR(d + strlen(sys_root), "/fs/cgroup/my memory/user/job/rm-tree.7");

	/* At the hierarchy's top: right under the mount point. */
	put("proc/self/cgroup", "6:memory:/\n0::/\n");
	CHECK(rm_cg_child_where(1, "c", d, sizeof(d)) == 0);
	CHECK_STR(d + strlen(sys_root), "/fs/cgroup/unified/c");
	CHECK(rm_cg_child_where(0, "c", d, sizeof(d)) == 0);
	CHECK_STR(d + strlen(sys_root), "/fs/cgroup/my memory/c");

	/* No v1 memory line, no cgroup2 mount: none of that kind. */
	put("proc/self/cgroup", "0::/build.slice/job\n");
	errno = 0;
	CHECK(rm_cg_child_where(0, "c", d, sizeof(d)) == -1 && errno == ENOENT);
	put("proc/self/mountinfo", "35 23 0:31 / /sys/fs/cgroup/my\\040memory rw - cgroup cgroup rw,memory\n");
	errno = 0;
	CHECK(rm_cg_child_where(1, "c", d, sizeof(d)) == -1 && errno == ENOENT);
}

/* A container's mount shows only its part of the hierarchy: our path is
 * cut to what the mount shows; a cgroup outside it has no place here
 * (the child would not be under our own cgroup). */
static void where_under_a_mount_root(void)
{
	char d[4096];

	put("proc/self/mountinfo",
	    "35 23 0:31 /docker/abc /sys/fs/cgroup/my\\040memory rw - cgroup cgroup rw,memory\n");
	put("proc/self/cgroup", "6:memory:/docker/abc/sub\n");
	put("sys/fs/cgroup/my memory/sub/memory.usage_in_bytes", "0\n");
	CHECK(rm_cg_child_where(0, "rm-tree.9", d, sizeof(d)) == 0);
	CHECK_STR(d + strlen(sys_root), "/fs/cgroup/my memory/sub/rm-tree.9");
	put("proc/self/cgroup", "6:memory:/docker/abc\n");
	CHECK(rm_cg_child_where(0, "rm-tree.9", d, sizeof(d)) == 0);
	CHECK_STR(d + strlen(sys_root), "/fs/cgroup/my memory/rm-tree.9");
	put("proc/self/cgroup", "6:memory:/docker/abcd\n");
	errno = 0;
	CHECK(rm_cg_child_where(0, "rm-tree.9", d, sizeof(d)) == -1 && errno == ENOENT);
	put("proc/self/cgroup", "6:memory:/elsewhere\n");
	CHECK(rm_cg_child_where(0, "rm-tree.9", d, sizeof(d)) == -1);
}

/* A directory made in a plain tree has no peak counter (no memory
 * controller for our children): neither kind is made, each is removed
 * again, and the reason names both. */
static void create_without_a_controller(void)
{
	struct rm_cg_child cg;
	char why[256], d[4096];

	put("proc/self/mountinfo", MI_HYBRID);
	put("proc/self/cgroup", "6:memory:/user/job\n0::/build.slice/job\n");
	CHECK(rm_cg_child_create(&cg, "rm-tree.5", why, sizeof(why)) == -1);
	CHECK(!cg.ok);
	CHECK_STR(why, "Operation not supported (v2: no memory controller for our children)");
	snprintf(d, sizeof(d), "%s/fs/cgroup/unified/build.slice/job/rm-tree.5", sys_root);
	CHECK(access(d, F_OK) == -1 && errno == ENOENT);
	snprintf(d, sizeof(d), "%s/fs/cgroup/my memory/user/job/rm-tree.5", sys_root);
	CHECK(access(d, F_OK) == -1 && errno == ENOENT);
	CHECK(rm_cg_child_create(&cg, "a/b", why, sizeof(why)) == -1);
	CHECK_STR(why, "'a/b' cannot name a cgroup");
}

static void files_v2(void)
{
	struct rm_cg_child cg = { .v2 = 1, .ok = 1 };
	char why[4600], p[4200];
	uint64_t v = 0;

	snprintf(cg.dir, sizeof(cg.dir), "%s/v2/rm-tree.3", top);
	snprintf(cg.name, sizeof(cg.name), "rm-tree.3");
	put("v2/rm-tree.3/memory.peak", "1073745920\n");
	put("v2/rm-tree.3/memory.events", "low 0\nhigh 0\nmax 12\noom 2\noom_kill 1\noom_group_kill 0\n");
	put("v2/rm-tree.3/memory.max", "");
	put("v2/rm-tree.3/memory.swap.max", "");
	put("v2/rm-tree.3/cgroup.procs", "");
	CHECK(rm_cg_child_peak(&cg, &v) == 0);
	CHECK_U64(v, 1048580);
	CHECK(rm_cg_child_oom_kills(&cg, &v) == 0);
	CHECK_U64(v, 1);
	CHECK(rm_cg_child_limit(&cg, 64 << 20, why, sizeof(why)) == 0);
	snprintf(p, sizeof(p), "%s/memory.max", cg.dir);
	CHECK_STR(get(p), "67108864\n");
	/* The budget is RAM: no swap beyond it. */
	snprintf(p, sizeof(p), "%s/memory.swap.max", cg.dir);
	CHECK_STR(get(p), "0\n");
	CHECK(rm_cg_child_enter(&cg, 4242) == 0);
	snprintf(p, sizeof(p), "%s/cgroup.procs", cg.dir);
	CHECK_STR(get(p), "4242\n");
	/* Without swap accounting only the limit; without the limit file, said. */
	snprintf(p, sizeof(p), "%s/memory.swap.max", cg.dir);
	unlink(p);
	CHECK(rm_cg_child_limit(&cg, 4096, why, sizeof(why)) == 0);
	CHECK(access(p, F_OK) == -1);
	snprintf(p, sizeof(p), "%s/memory.max", cg.dir);
	unlink(p);
	CHECK(rm_cg_child_limit(&cg, 4096, why, sizeof(why)) == -1);
	snprintf(p, sizeof(p), "cannot write %s/memory.max: No such file or directory", cg.dir);
	CHECK_STR(why, p);
	snprintf(p, sizeof(p), "%s/memory.peak", cg.dir);
	unlink(p);
	CHECK(rm_cg_child_peak(&cg, &v) == -1);
}

static void files_v1(void)
{
	struct rm_cg_child cg = { .v2 = 0, .ok = 1 };
	char why[4600], p[4200];
	uint64_t v = 0;

	snprintf(cg.dir, sizeof(cg.dir), "%s/v1/rm-tree.4", top);
	put("v1/rm-tree.4/memory.max_usage_in_bytes", "209715200\n");
	put("v1/rm-tree.4/memory.peak", "1\n");        /* not v1's */
	put("v1/rm-tree.4/memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n");
	put("v1/rm-tree.4/memory.limit_in_bytes", "");
	put("v1/rm-tree.4/memory.memsw.limit_in_bytes", "");
	CHECK(rm_cg_child_peak(&cg, &v) == 0);
	CHECK_U64(v, 204800);
	CHECK(rm_cg_child_oom_kills(&cg, &v) == 0);
	CHECK_U64(v, 3);
	/* RAM plus swap to the same value: the budget is RAM. */
	CHECK(rm_cg_child_limit(&cg, 268435456, why, sizeof(why)) == 0);
	snprintf(p, sizeof(p), "%s/memory.limit_in_bytes", cg.dir);
	CHECK_STR(get(p), "268435456\n");
	snprintf(p, sizeof(p), "%s/memory.memsw.limit_in_bytes", cg.dir);
	CHECK_STR(get(p), "268435456\n");
	/* An oom_control without the count (kernels before 4.13). */
	put("v1/rm-tree.4/memory.oom_control", "oom_kill_disable 0\nunder_oom 0\n");
	CHECK(rm_cg_child_oom_kills(&cg, &v) == -1);
}

/* Removed once empty, and a directory already gone is no error; one that
 * cannot be removed (not empty, here) is said at once. */
static void remove_dir(void)
{
	struct rm_cg_child cg = { .ok = 1 };
	char p[4200];

	snprintf(cg.dir, sizeof(cg.dir), "%s/gone/rm-tree.6", top);
	put("gone/rm-tree.6/x", "");
	errno = 0;
	CHECK(rm_cg_child_remove(&cg) == -1 && errno == ENOTEMPTY);
	snprintf(p, sizeof(p), "%s/x", cg.dir);
	unlink(p);
	CHECK(rm_cg_child_remove(&cg) == 0);
	CHECK(access(cg.dir, F_OK) == -1);
	CHECK(rm_cg_child_remove(&cg) == 0);
}

int main(void)
{
	char cmd[400];

	snprintf(top, sizeof(top), "/tmp/t_cgchild.XXXXXX");
	if (!mkdtemp(top))
		return 1;
	snprintf(sys_root, sizeof(sys_root), "%s/sys", top);
	put("proc/self/mountinfo", "");
	put("sys/fs/.keep", "");
	snprintf(cmd, sizeof(cmd), "%s/proc", top);
	setenv("RM_PROC_ROOT", cmd, 1);
	setenv("RM_SYS_ROOT", sys_root, 1);
	RUN(where_v2_and_v1);
	RUN(where_under_a_mount_root);
	RUN(create_without_a_controller);
	RUN(files_v2);
	RUN(files_v1);
	RUN(remove_dir);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	if (system(cmd) != 0)
		printf("# cannot remove %s\n", top);
	return tap_done();
}
