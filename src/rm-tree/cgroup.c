/*
 * rm-tree --cgroup: a child memory cgroup of our own for the job, whose
 * peak counter is the exact peak of the whole tree however short the
 * spike.  cgroup v2 first (memory.peak, where the memory controller is
 * enabled for our children), else v1 (memory.max_usage_in_bytes).  The
 * child is created under our own cgroup, so whatever limits apply to us
 * still apply to the job.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "tree.h"

/* Undo mountinfo's octal escapes (\040 for a space) in place. */
static void unescape(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
}

static int has_token(const char *list, const char *tok)
{
	size_t n = strlen(tok);

	for (const char *p = list; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
		if (strncmp(p, tok, n) == 0 && (p[n] == ',' || p[n] == '\0'))
			return 1;
	return 0;
}

/* Mount point and root of the v2 hierarchy (v2 set) or of the v1 memory
 * controller; -1 when there is none. */
static int find_mount(int v2, char *mnt, size_t msize, char *root, size_t rsize)
{
	/* Whole: a container host's mountinfo outgrows any fixed buffer. */
	char *buf = rm_read_all_at(rm_proc_dirfd(), "self/mountinfo", NULL);
	char *line, *save = NULL;
	int rc = -1;

	if (!buf)
		return -1;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *f[12], *sep, *tail, *s2 = NULL;
		int n = 0;
		sep = strstr(line, " - ");
		if (!sep)
			continue;
		*sep = '\0';
		tail = sep + 3;
		for (char *t = strtok_r(line, " ", &s2); t && n < 12; t = strtok_r(NULL, " ", &s2))
			f[n++] = t;
		if (n < 5)
			continue;
		char *fstype = strtok_r(tail, " ", &s2);
		strtok_r(NULL, " ", &s2);                 /* source */
		char *super = strtok_r(NULL, " ", &s2);
		if (!fstype)
			continue;
		if (v2 ? strcmp(fstype, "cgroup2") != 0
		       : strcmp(fstype, "cgroup") != 0 || !super || !has_token(super, "memory"))
			continue;
		unescape(f[3]);
		unescape(f[4]);
		if (strlen(f[4]) >= msize || strlen(f[3]) >= rsize)
			continue;
		strcpy(mnt, f[4]);
		strcpy(root, f[3]);
		rc = 0;
		break;
	}
	free(buf);
	return rc;
}

/* Our own cgroup path in the v2 hierarchy or the v1 memory one. */
static int own_path(int v2, char *path, size_t size)
{
	char buf[8192];
	char *line, *save = NULL;

	if (rm_read_at(rm_proc_dirfd(), "self/cgroup", buf, sizeof(buf)) < 0)
		return -1;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		*c2 = '\0';
		if (v2 ? strcmp(line, "0") == 0 && c1 + 1 == c2
		       : has_token(c1 + 1, "memory")) {
			if (strlen(c2 + 1) >= size)
				return -1;
			strcpy(path, c2 + 1);
			return 0;
		}
	}
	return -1;
}

static int try_create(struct cgroup *cg, int v2)
{
	char mnt[2048], root[2048], own[2048], probe[4200];
	const char *rel;
	size_t rl;

	if (find_mount(v2, mnt, sizeof(mnt), root, sizeof(root)) < 0 ||
	    own_path(v2, own, sizeof(own)) < 0) {
		errno = ENOENT;
		return -1;
	}
	/* The path in /proc/self/cgroup is from the hierarchy's root; the
	 * mount may show only a part of it. */
	rl = strlen(root);
	rel = own;
	if (strcmp(root, "/") != 0) {
		if (strncmp(own, root, rl) != 0 || (own[rl] != '/' && own[rl] != '\0')) {
			errno = ENOENT;
			return -1;
		}
		rel = own + rl;
	}
	while (*rel == '/')
		rel++;
	if (rm_pathf(cg->dir, sizeof(cg->dir), "%s%s%s/rm-tree.%d", mnt,
		     *rel ? "/" : "", rel, (int)getpid()) < 0)
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

int cgroup_create(struct cgroup *cg, char *why, size_t wsize)
{
	int e2;

	memset(cg, 0, sizeof(*cg));
	if (try_create(cg, 1) == 0)
		return 0;
	e2 = errno;
	if (try_create(cg, 0) == 0)
		return 0;
	snprintf(why, wsize, "%s (v2: %s)", strerror(errno),
		 e2 == EOPNOTSUPP ? "no memory controller for our children" : strerror(e2));
	return -1;
}

int cgroup_enter(const struct cgroup *cg, pid_t pid)
{
	char path[4200], num[32];
	int fd, n, rc = 0, e = 0;

	if (rm_pathf(path, sizeof(path), "%s/cgroup.procs", cg->dir) < 0)
		return -1;
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = snprintf(num, sizeof(num), "%d\n", (int)pid);
	if (write(fd, num, (size_t)n) != n) {
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

int cgroup_peak(const struct cgroup *cg, uint64_t *kib)
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

int cgroup_remove(const struct cgroup *cg)
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

/* Write text to the file name in the cgroup's directory. */
static int put_file(const struct cgroup *cg, const char *name, const char *text)
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

/*
 * --memory-max: the budget.  v2: memory.max, and memory.swap.max 0 where
 * swap is accounted, so the budget is RAM; v1: memory.limit_in_bytes,
 * then memory.memsw.limit_in_bytes (RAM plus swap) to the same value
 * where the kernel accounts swap.
 */
int cgroup_limit(const struct cgroup *cg, uint64_t bytes, char *why, size_t wsize)
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

/* OOM kills inside the cgroup so far; -1 when unreadable. */
int cgroup_oom_kills(const struct cgroup *cg, uint64_t *n)
{
	char path[4200], buf[2048];

	if (rm_pathf(path, sizeof(path), "%s/%s", cg->dir,
		     cg->v2 ? "memory.events" : "memory.oom_control") < 0 ||
	    rm_read_file(path, buf, sizeof(buf)) < 0)
		return -1;
	return rm_cg_parse_kv(buf, "oom_kill", n);
}
