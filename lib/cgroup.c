/*
 * cgroup: see cgroup.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"
#include "procfs.h"
#include "proctab.h"
#include "sysinfo.h"

/* ---- pure parsers ---- */

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

int rm_cg_has_token(const char *list, const char *tok)
{
	size_t n = strlen(tok);
	const char *p = list;

	while (p && *p) {
		const char *c = strchr(p, ',');
		if (strncmp(p, tok, n) == 0 && (p[n] == ',' || p[n] == '\0'))
			return 1;
		p = c ? c + 1 : NULL;
	}
	return 0;
}

int rm_cg_parse_mountinfo_line(char *line, struct rm_cg_mount *m)
{
	char *f[6], *sep, *tail, *save = NULL, *t;
	int n = 0;

	sep = strstr(line, " - ");
	if (!sep)
		return -1;
	*sep = '\0';
	tail = sep + 3;
	for (t = strtok_r(line, " ", &save); t && n < 6; t = strtok_r(NULL, " ", &save))
		f[n++] = t;
	if (n < 5)
		return -1;
	save = NULL;
	m->fstype = strtok_r(tail, " ", &save);
	if (!m->fstype)
		return -1;
	if (!strtok_r(NULL, " ", &save))        /* source */
		return -1;
	m->super = strtok_r(NULL, " \n", &save);
	if (!m->super)
		m->super = "";
	unescape(f[3]);
	unescape(f[4]);
	m->root = f[3];
	m->point = f[4];
	return 0;
}

int rm_cg_parse_proc_cgroup(const char *text, const char *ctrl, char *path, size_t size)
{
	const char *line = text;

	while (line && *line) {
		const char *eol = strchr(line, '\n');
		size_t len = eol ? (size_t)(eol - line) : strlen(line);
		const char *c1 = memchr(line, ':', len);
		const char *c2 = c1 ? memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - line)) : NULL;

		if (c2) {
			char list[256];
			size_t ll = (size_t)(c2 - c1 - 1);
			int hit;
			if (ll >= sizeof(list))
				ll = sizeof(list) - 1;
			memcpy(list, c1 + 1, ll);
			list[ll] = '\0';
			hit = ctrl ? rm_cg_has_token(list, ctrl)
				   : (c1 - line == 1 && line[0] == '0' && ll == 0);
			if (hit) {
				size_t pl = len - (size_t)(c2 + 1 - line);
				if (pl == 0 || pl >= size)
					return -1;
				memcpy(path, c2 + 1, pl);
				path[pl] = '\0';
				return 0;
			}
		}
		line = eol ? eol + 1 : NULL;
	}
	return -1;
}

int rm_cg_parse_kv(const char *text, const char *key, uint64_t *out)
{
	size_t kl = strlen(key);
	const char *p = text;

	while (p && *p) {
		if (strncmp(p, key, kl) == 0 && p[kl] == ' ') {
			const char *q = p + kl;
			uint64_t v = 0;
			while (*q == ' ')
				q++;
			if (*q < '0' || *q > '9')
				return -1;
			for (; *q >= '0' && *q <= '9'; q++) {
				if (v > (UINT64_MAX - 9) / 10)
					return -1;
				v = v * 10 + (uint64_t)(*q - '0');
			}
			*out = v;
			return 0;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -1;
}

int rm_cg_parse_limit(const char *text, uint64_t *bytes)
{
	uint64_t v;

	if (strncmp(text, "max", 3) == 0 && (text[3] == '\0' || text[3] == '\n'))
		return 0;
	if (rm_parse_u64(text, &v) < 0)
		return -1;
	if (v >= RM_CG_V1_UNLIMITED)
		return 0;
	*bytes = v;
	return 1;
}

int rm_cg_parse_cpu_max(const char *text, long long *quota, long long *period)
{
	char *end;
	long long q, p;

	if (strncmp(text, "max", 3) == 0 && (text[3] == ' ' || text[3] == '\n' || text[3] == '\0'))
		return 0;
	errno = 0;
	q = strtoll(text, &end, 10);
	if (errno || end == text || q <= 0 || *end != ' ')
		return -1;
	text = end + 1;
	p = strtoll(text, &end, 10);
	if (errno || end == text || p <= 0 || (*end != '\n' && *end != '\0'))
		return -1;
	*quota = q;
	*period = p;
	return 1;
}

int rm_cg_quota_cores(long long quota, long long period, int affinity)
{
	long long n;

	if (quota <= 0 || period <= 0)
		return affinity > 0 ? affinity : 1;
	n = quota / period + (quota % period != 0);
	if (n < 1)
		n = 1;
	if (affinity > 0 && n > affinity)
		n = affinity;
	return (int)n;
}

int rm_cg_parse_size(const char *s, uint64_t *bytes)
{
	char *end;
	double v, mul = 1;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s)
		return -1;
	switch (*end) {
	case 'k': case 'K': mul = 1024.0; end++; break;
	case 'm': case 'M': mul = 1048576.0; end++; break;
	case 'g': case 'G': mul = 1073741824.0; end++; break;
	case 't': case 'T': mul = 1099511627776.0; end++; break;
	default: break;
	}
	if (mul > 1 && end[0] == 'i' && end[1] == 'B')
		end += 2;
	else if (*end == 'B' || *end == 'b')
		end++;
	if (*end != '\0')
		return -1;
	v *= mul;
	if (!(v >= 1) || v >= 1.8e19)
		return -1;
	*bytes = (uint64_t)v;
	return 0;
}

/* ---- readers ---- */

/* A mount point as this process sees it, re-rooted under RM_SYS_ROOT. */
static int sys_path(const char *point, char *out, size_t size)
{
	if (strncmp(point, "/sys", 4) == 0 && (point[4] == '/' || point[4] == '\0'))
		return rm_pathf(out, size, "%s%s", rm_sys_root(), point + 4);
	return rm_pathf(out, size, "%s", point);
}

struct hier {
	char point[4096];      /* re-rooted mount point */
	char root[4096];       /* root of the mount in the hierarchy */
};

/* The v2 mount (ctrl NULL) or the v1 mount with controller ctrl. */
static int find_mount(const char *ctrl, struct hier *h)
{
	/* Read to EOF: a container host's mountinfo outgrows any fixed buffer. */
	char *buf = rm_read_all_at(rm_proc_dirfd(), "self/mountinfo", NULL);
	char *line, *save = NULL;

	if (!buf)
		return -1;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct rm_cg_mount m;
		if (rm_cg_parse_mountinfo_line(line, &m) < 0)
			continue;
		if (ctrl ? strcmp(m.fstype, "cgroup") != 0 || !rm_cg_has_token(m.super, ctrl)
			 : strcmp(m.fstype, "cgroup2") != 0)
			continue;
		if (sys_path(m.point, h->point, sizeof(h->point)) < 0 ||
		    rm_pathf(h->root, sizeof(h->root), "%s", m.root) < 0)
			continue;
		free(buf);
		return 0;
	}
	free(buf);
	errno = ENOENT;
	return -1;
}

/*
 * The directory of cgroup path cg (as /proc/PID/cgroup writes it) under
 * hierarchy h.  The mount may show only part of the hierarchy (a
 * container's): a path outside it is the mount's own root, or with
 * strict no directory (ENOENT).  -1 when the directory is not there.
 */
static int cg_dir_in(const struct hier *h, const char *cg, int strict, char *out, size_t size)
{
	size_t rl = strlen(h->root);
	const char *rel = cg;

	if (strcmp(h->root, "/") != 0) {
		if (strncmp(cg, h->root, rl) == 0 && (cg[rl] == '/' || cg[rl] == '\0'))
			rel = cg + rl;
		else if (strict) {
			errno = ENOENT;
			return -1;
		} else
			rel = "";
	}
	while (*rel == '/')
		rel++;
	if (rm_pathf(out, size, "%s%s%s", h->point, *rel ? "/" : "", rel) < 0)
		return -1;
	return access(out, F_OK);
}

static int cg_dir(const struct hier *h, const char *cg, char *out, size_t size)
{
	return cg_dir_in(h, cg, 0, out, size);
}

int rm_cg_own_dir(const char *ctrl, char *dir, size_t size)
{
	char text[8192], own[4096];
	struct hier h;

	if (rm_read_at(rm_proc_dirfd(), "self/cgroup", text, sizeof(text)) < 0 ||
	    rm_cg_parse_proc_cgroup(text, ctrl, own, sizeof(own)) < 0 || find_mount(ctrl, &h) < 0) {
		errno = ENOENT;
		return -1;
	}
	return cg_dir_in(&h, own, 1, dir, size);
}

static int has_file(const char *dir, const char *name)
{
	char p[4300];

	return rm_pathf(p, sizeof(p), "%s/%s", dir, name) == 0 && access(p, R_OK) == 0;
}

static ssize_t read_in(const char *dir, const char *name, char *buf, size_t size)
{
	char p[4300];

	if (rm_pathf(p, sizeof(p), "%s/%s", dir, name) < 0)
		return -1;
	return rm_read_file(p, buf, size);
}

/* Cut the last component off d, unless d is already top. */
static int up(char *d, const char *top)
{
	char *s;

	if (strcmp(d, top) == 0 || strlen(d) <= strlen(top))
		return -1;
	s = strrchr(d, '/');
	if (!s || s == d)
		return -1;
	*s = '\0';
	return 0;
}

/* The files rm_cg_read reads every tick, each opened once and then read
 * with pread: a path lookup in cgroupfs costs as much as the read. */
enum { K_STAT, K_USED, K_LIMIT, K_OOM, K_PSI, K_SWAP, K_MAX0 };
_Static_assert(K_MAX0 + RM_CG_WALK_KEPT == sizeof(((struct rm_cg *)0)->kept) / sizeof(int),
	       "a descriptor for each file kept");

/* name: in cg->dir, or for K_PSI the whole path. */
static ssize_t kept_read(struct rm_cg *cg, int slot, const char *name, char *buf, size_t size)
{
	return rm_read_kept(&cg->kept[slot], slot == K_PSI ? NULL : cg->dir, name, buf, size, 0);
}

static int kept_u64(struct rm_cg *cg, int slot, const char *name, uint64_t *v)
{
	char buf[64];

	if (kept_read(cg, slot, name, buf, sizeof(buf)) < 0)
		return -1;
	return rm_parse_u64(buf, v);
}

static int read_oom(const struct rm_cg *cg, uint64_t *v)
{
	char buf[2048];

	if (read_in(cg->dir, cg->v2 ? "memory.events" : "memory.oom_control", buf, sizeof(buf)) < 0)
		return -1;
	return rm_cg_parse_kv(buf, "oom_kill", v);
}

static int kept_oom(struct rm_cg *cg, uint64_t *v)
{
	char buf[2048];

	if (kept_read(cg, K_OOM, cg->v2 ? "memory.events" : "memory.oom_control", buf, sizeof(buf)) < 0)
		return -1;
	return rm_cg_parse_kv(buf, "oom_kill", v);
}

static int proc_cgroup(pid_t pid, char *buf, size_t size)
{
	if (pid > 0)
		return rm_pfile_read(NULL, (int)pid, "cgroup", buf, size, 0) < 0 ? -1 : 0;
	return rm_read_at(rm_proc_dirfd(), "self/cgroup", buf, size) < 0 ? -1 : 0;
}

int rm_cg_open(struct rm_cg *cg, pid_t pid, const char *path, char *why, size_t wsize)
{
	char text[8192], p2[4096], p1[4096], d[4096];
	struct hier h2, h1;
	int have2, have1;

	memset(cg, 0, sizeof(*cg));
	have2 = find_mount(NULL, &h2) == 0;
	have1 = find_mount("memory", &h1) == 0;
	if (path && strncmp(path, "/sys/fs/cgroup", 14) == 0 && (path[14] == '/' || path[14] == '\0')) {
		/* An absolute directory: which hierarchy it is in decides. */
		const struct hier *in = NULL;
		if (sys_path(path, d, sizeof(d)) < 0)
			goto toolong;
		if (have2 && strncmp(d, h2.point, strlen(h2.point)) == 0 &&
		    (d[strlen(h2.point)] == '/' || d[strlen(h2.point)] == '\0'))
			in = &h2;
		else if (have1 && strncmp(d, h1.point, strlen(h1.point)) == 0 &&
			 (d[strlen(h1.point)] == '/' || d[strlen(h1.point)] == '\0'))
			in = &h1;
		if (!in || access(d, F_OK) < 0) {
			snprintf(why, wsize, "'%s' is not a memory cgroup directory", path);
			return -1;
		}
		cg->v2 = in == &h2;
		memcpy(cg->dir, d, sizeof(cg->dir));
		memcpy(cg->mnt, in->point, sizeof(cg->mnt));
		if (cg->v2 ? !has_file(d, "memory.current") : !has_file(d, "memory.usage_in_bytes")) {
			snprintf(why, wsize, "'%s' has no memory controller", path);
			return -1;
		}
		/* The same group in the v2 hierarchy, for PSI on a hybrid host. */
		if (cg->v2)
			rm_pathf(cg->psi, sizeof(cg->psi), "%s/memory.pressure", d);
		else if (have2 && rm_pathf(p2, sizeof(p2), "%s", d + strlen(h1.point)) == 0 &&
			 cg_dir(&h2, p2[0] ? p2 : "/", d, sizeof(d)) == 0)
			rm_pathf(cg->psi, sizeof(cg->psi), "%s/memory.pressure", d);
	} else {
		if (path) {
			if (rm_pathf(p2, sizeof(p2), "%s", path) < 0 || rm_pathf(p1, sizeof(p1), "%s", path) < 0)
				goto toolong;
		} else {
			if (proc_cgroup(pid, text, sizeof(text)) < 0) {
				snprintf(why, wsize, "cannot read the cgroups of %s: %s",
					 pid > 0 ? "the PID" : "this process", strerror(errno));
				return -1;
			}
			if (rm_cg_parse_proc_cgroup(text, NULL, p2, sizeof(p2)) < 0)
				have2 = 0;
			if (rm_cg_parse_proc_cgroup(text, "memory", p1, sizeof(p1)) < 0)
				have1 = 0;
		}
		if (have2 && cg_dir(&h2, p2, d, sizeof(d)) == 0) {
			rm_pathf(cg->psi, sizeof(cg->psi), "%s/memory.pressure", d);
			if (has_file(d, "memory.current")) {
				cg->v2 = 1;
				memcpy(cg->dir, d, sizeof(cg->dir));
				memcpy(cg->mnt, h2.point, sizeof(cg->mnt));
			}
		}
		if (!cg->v2) {
			if (!have1 || cg_dir(&h1, p1, d, sizeof(d)) < 0 ||
			    !has_file(d, "memory.usage_in_bytes")) {
				snprintf(why, wsize, "no memory cgroup found (neither v2 memory.current nor a v1 memory hierarchy)");
				return -1;
			}
			memcpy(cg->dir, d, sizeof(cg->dir));
			memcpy(cg->mnt, h1.point, sizeof(cg->mnt));
		}
	}
	if (cg->psi[0] && access(cg->psi, R_OK) < 0)
		cg->psi[0] = '\0';
	cg->oom_known = read_oom(cg, &cg->oom_base) == 0;
	cg->ok = 1;
	return 0;
toolong:
	snprintf(why, wsize, "path too long");
	return -1;
}

/* The tightest memory limit over the cgroup and its ancestors. */
static int tightest_limit(struct rm_cg *cg, const char *stat, uint64_t *lim)
{
	char buf[128], d[4096];
	uint64_t v;
	int found = 0;

	if (!cg->v2) {
		/* memory.stat's hierarchical_memory_limit is the least limit of
		 * the cgroup and its ancestors, its own limit_in_bytes among
		 * them: that file is read only where memory.stat lacks it. */
		if (rm_cg_parse_kv(stat, "hierarchical_memory_limit", &v) == 0) {
			if (v < RM_CG_V1_UNLIMITED) {
				*lim = v;
				found = 1;
			}
			return found;
		}
		if (kept_u64(cg, K_LIMIT, "memory.limit_in_bytes", &v) == 0 && v < RM_CG_V1_UNLIMITED) {
			*lim = v;
			found = 1;
		}
		return found;
	}
	memcpy(d, cg->dir, sizeof(d));
	for (int level = 0;; level++) {
		ssize_t n = level < RM_CG_WALK_KEPT
			    ? rm_read_kept(&cg->kept[K_MAX0 + level], d, "memory.max", buf, sizeof(buf), 0)
			    : read_in(d, "memory.max", buf, sizeof(buf));
		if (n >= 0 && rm_cg_parse_limit(buf, &v) == 1 && (!found || v < *lim)) {
			*lim = v;
			found = 1;
		}
		if (up(d, cg->mnt) < 0)
			break;
	}
	return found;
}

int rm_cg_read(struct rm_cg *cg, struct rm_cg_reading *r)
{
	static char stat[16384];
	uint64_t v, inact = 0;
	int have_stat, have_inact = 0;

	memset(r, 0, sizeof(*r));
	if (!cg->ok)
		return 0;
	have_stat = kept_read(cg, K_STAT, "memory.stat", stat, sizeof(stat)) >= 0;
	if (!have_stat)
		stat[0] = '\0';
	if (kept_u64(cg, K_USED, cg->v2 ? "memory.current" : "memory.usage_in_bytes", &r->used) == 0)
		r->has |= RM_CG_USED;
	if (tightest_limit(cg, stat, &r->limit))
		r->has |= RM_CG_LIMIT;
	if (have_stat)
		have_inact = rm_cg_parse_kv(stat, cg->v2 ? "inactive_file" : "total_inactive_file", &inact) == 0;
	if ((r->has & RM_CG_USED) && (r->has & RM_CG_LIMIT) && have_inact) {
		uint64_t ws = r->used > inact ? r->used - inact : 0;
		r->avail = r->limit > ws ? r->limit - ws : 0;
		r->has |= RM_CG_AVAIL;
	}
	if (cg->v2) {
		char buf[64];
		if (kept_read(cg, K_SWAP, "memory.swap.current", buf, sizeof(buf)) >= 0 &&
		    rm_parse_u64(buf, &v) == 0) {
			r->swap = v;
			r->has |= RM_CG_SWAP;
		}
	} else if (have_stat && rm_cg_parse_kv(stat, "total_swap", &v) == 0) {
		r->swap = v;
		r->has |= RM_CG_SWAP;
	}
	if (cg->oom_known && kept_oom(cg, &v) == 0) {
		r->oom_kills = v >= cg->oom_base ? v - cg->oom_base : 0;
		r->has |= RM_CG_OOM;
	}
	if (cg->psi[0]) {
		char buf[512];
		struct rm_psi psi;
		if (kept_read(cg, K_PSI, cg->psi, buf, sizeof(buf)) >= 0 && rm_psi_parse(buf, &psi) == 0 &&
		    psi.has_full) {
			r->psi_full10 = psi.full10;
			r->has |= RM_CG_PSI_FULL;
		}
	}
	return 0;
}

/* CPUs in pid's affinity mask; 0 when it cannot be read. */
static int affinity(pid_t pid)
{
	for (int ncpu = 1024; ncpu <= 65536; ncpu *= 4) {
		size_t sz = CPU_ALLOC_SIZE(ncpu);
		cpu_set_t *set = CPU_ALLOC(ncpu);
		int n;
		if (!set)
			return 0;
		if (sched_getaffinity(pid, sz, set) == 0) {
			n = CPU_COUNT_S(sz, set);
			CPU_FREE(set);
			return n;
		}
		CPU_FREE(set);
		if (errno != EINVAL)
			return 0;
	}
	return 0;
}

/* The fewest cores any quota from dir up to top allows; 0 for none. */
static int walk_quota(char *d, const char *top, int v2)
{
	char buf[128];
	int best = 0;

	do {
		long long q = 0, p = 0;
		int have = 0;
		if (v2) {
			have = read_in(d, "cpu.max", buf, sizeof(buf)) >= 0 &&
			       rm_cg_parse_cpu_max(buf, &q, &p) == 1;
		} else if (read_in(d, "cpu.cfs_quota_us", buf, sizeof(buf)) >= 0) {
			q = strtoll(buf, NULL, 10);
			have = q > 0 && read_in(d, "cpu.cfs_period_us", buf, sizeof(buf)) >= 0 &&
			       (p = strtoll(buf, NULL, 10)) > 0;
		}
		if (have) {
			int n = rm_cg_quota_cores(q, p, 0);
			if (!best || n < best)
				best = n;
		}
	} while (up(d, top) == 0);
	return best;
}

int rm_cg_cores(pid_t pid)
{
	char text[8192], cgp[4096], d[4096];
	struct hier h;
	int n = pid > 0 ? affinity(pid) : 0, q, best = 0;

	if (n <= 0)
		n = affinity(0);
	if (n <= 0)
		n = rm_ncpu();
	if (proc_cgroup(pid, text, sizeof(text)) < 0 && (pid <= 0 || proc_cgroup(0, text, sizeof(text)) < 0))
		return n;
	if (rm_cg_parse_proc_cgroup(text, NULL, cgp, sizeof(cgp)) == 0 && find_mount(NULL, &h) == 0 &&
	    cg_dir(&h, cgp, d, sizeof(d)) == 0 && (q = walk_quota(d, h.point, 1)) > 0)
		best = q;
	if (rm_cg_parse_proc_cgroup(text, "cpu", cgp, sizeof(cgp)) == 0 && find_mount("cpu", &h) == 0 &&
	    cg_dir(&h, cgp, d, sizeof(d)) == 0 && (q = walk_quota(d, h.point, 0)) > 0 &&
	    (!best || q < best))
		best = q;
	return best && best < n ? best : n;
}
