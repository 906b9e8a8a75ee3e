/*
 * cgchild: see cgchild.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cgchild.h"
#include "cgroup.h"
#include "procfs.h"

int rm_cg_child_where(int v2, const char *name, char *dir, size_t size)
{
	char parent[4096];

	if (rm_cg_own_dir(v2 ? NULL : "memory", parent, sizeof(parent)) < 0)
		return -1;
	return rm_pathf(dir, size, "%s/%s", parent, name);
}

static int try_create(struct rm_cg_child *cg, int v2)
{
	char probe[4200];

	if (rm_cg_child_where(v2, cg->name, cg->dir, sizeof(cg->dir)) < 0)
		return -1;
	if (mkdir(cg->dir, 0755) < 0) {
		if (errno != EEXIST || rmdir(cg->dir) < 0 || mkdir(cg->dir, 0755) < 0)
			return -1;
	}
	rm_pathf(probe, sizeof(probe), "%s/%s", cg->dir,
		 v2 ? "memory.peak" : "memory.max_usage_in_bytes");
	if (access(probe, R_OK) < 0) {
		int e = errno;
		rmdir(cg->dir);
		errno = e == ENOENT ? EOPNOTSUPP : e;
		return -1;
	}
	cg->v2 = v2;
	cg->ok = 1;
	return 0;
}

int rm_cg_child_create(struct rm_cg_child *cg, const char *name, char *why, size_t wsize)
{
	int e2;

	memset(cg, 0, sizeof(*cg));
	if (rm_pathf(cg->name, sizeof(cg->name), "%s", name) < 0 || !name[0] || strchr(name, '/')) {
		snprintf(why, wsize, "'%s' cannot name a cgroup", name);
		return -1;
	}
	if (try_create(cg, 1) == 0)
		return 0;
	e2 = errno;
	if (try_create(cg, 0) == 0)
		return 0;
	snprintf(why, wsize, "%s (v2: %s)", strerror(errno),
		 e2 == EOPNOTSUPP ? "no memory controller for our children" : strerror(e2));
	return -1;
}

/* Write text to the file name in the cgroup's directory. */
static int put_file(const struct rm_cg_child *cg, const char *name, const char *text)
{
	char path[4200];
	size_t len = strlen(text);
	int fd, rc = 0, e = 0;

	if (rm_pathf(path, sizeof(path), "%s/%s", cg->dir, name) < 0)
		return -1;
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (write(fd, text, len) != (ssize_t)len) {
		rc = -1;
		e = errno;
	}
	if (close(fd) < 0 && rc == 0) {
		rc = -1;
		e = errno;
	}
	errno = e;
	return rc;
}

int rm_cg_child_enter(const struct rm_cg_child *cg, pid_t pid)
{
	char num[32];

	snprintf(num, sizeof(num), "%d\n", (int)pid);
	return put_file(cg, "cgroup.procs", num);
}

int rm_cg_child_peak(const struct rm_cg_child *cg, uint64_t *kib)
{
	char path[4200];
	uint64_t bytes;

	if (rm_pathf(path, sizeof(path), "%s/%s", cg->dir,
		     cg->v2 ? "memory.peak" : "memory.max_usage_in_bytes") < 0 ||
	    rm_read_u64(path, &bytes) < 0)
		return -1;
	*kib = bytes / 1024;
	return 0;
}

int rm_cg_child_remove(const struct rm_cg_child *cg)
{
	/* The last task leaves the cgroup a moment after it is reaped. */
	for (int i = 0; i < 200; i++) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		if (rmdir(cg->dir) == 0 || errno == ENOENT)
			return 0;
		if (errno != EBUSY)
			return -1;
		nanosleep(&ts, NULL);
	}
	return -1;
}

/*
 * v2: memory.max, and memory.swap.max 0 where swap is accounted, so the
 * budget is RAM; v1: memory.limit_in_bytes, then
 * memory.memsw.limit_in_bytes (RAM plus swap) to the same value where the
 * kernel accounts swap.
 */
int rm_cg_child_limit(const struct rm_cg_child *cg, uint64_t bytes, char *why, size_t wsize)
{
	char num[32], probe[4200];
	const char *f = cg->v2 ? "memory.max" : "memory.limit_in_bytes";

	snprintf(num, sizeof(num), "%llu\n", (unsigned long long)bytes);
	if (put_file(cg, f, num) < 0) {
		snprintf(why, wsize, "cannot write %s/%s: %s", cg->dir, f, strerror(errno));
		return -1;
	}
	f = cg->v2 ? "memory.swap.max" : "memory.memsw.limit_in_bytes";
	rm_pathf(probe, sizeof(probe), "%s/%s", cg->dir, f);
	if (access(probe, F_OK) == 0 && put_file(cg, f, cg->v2 ? "0\n" : num) < 0) {
		snprintf(why, wsize, "cannot write %s: %s", probe, strerror(errno));
		return -1;
	}
	return 0;
}

int rm_cg_child_oom_kills(const struct rm_cg_child *cg, uint64_t *n)
{
	char path[4200], buf[2048];

	if (rm_pathf(path, sizeof(path), "%s/%s", cg->dir,
		     cg->v2 ? "memory.events" : "memory.oom_control") < 0 ||
	    rm_read_file(path, buf, sizeof(buf)) < 0)
		return -1;
	return rm_cg_parse_kv(buf, "oom_kill", n);
}
