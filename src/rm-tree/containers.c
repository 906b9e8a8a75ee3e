/*
 * containers.c: --containers FILE, the containers companion CSV.
 *
 * A build run by an orchestrator through `docker run` has its compilers
 * in containers whose processes are children of containerd-shim, not of
 * the watched tree, in memory cgroups with limits of their own.  Once a
 * tick this lists every container cgroup of the memory hierarchy (v1
 * memory, else the v2 unified one; through RM_SYS_ROOT, so fixture trees
 * stand in), reads its limit (the tightest up the tree), usage, peak,
 * failcnt and oom_kill count, and writes a row per container, and a
 * `gone` row, with the last values read, when its cgroup is removed.
 *
 * A container is tied to the build only by an exact fact from a member
 * of the watched tree: a container client (lib/container) whose argv has
 * --cgroup-parent P (the containers directly under P), or --cidfile FILE
 * (the ID the client wrote there, read from the client's own cwd and
 * root, a regular file of the client's user or root); or --label K=V or
 * --name N of a docker client (the IDs its engine lists for them, asked
 * through lib/engine over the client's own socket, bounded in time and
 * size); or a member process in the container's cgroup (podman forks
 * conmon, which forks the container's init: fork events keep them in the
 * tree).  Never by time.
 *
 * This file is long because the ties, the engine's answers and the walk
 * share one state (the ties and the containers, tied within the tick the
 * walk finds them); what is pure (the parsers, the HTTP exchange, the
 * JSON) lives in lib/container, lib/engine and lib/jsonread.
 *
 * rm-tools' own monitors (rm-monitor, rm-sample, rm-tree, rm-summarize,
 * rm-run, rm-energy, rm-gpu) are never the build's: containers_is_monitor
 * says so for the parts that decide membership.
 */
#include <dirent.h>
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "cgroup.h"
#include "container.h"
#include "engine.h"
#include "sha256.h"
#include "outfile.h"
#include "procfs.h"
#include "proctab.h"
#include "text.h"
#include "tick.h"
#include "tree.h"

#define WALK_DEPTH 10        /* /user.slice/user-1000.slice/.../libpod-ID.scope is 5 */
#define WALK_MAX 20000       /* cgroup directories looked at per tick */
#define PROCS_MAX 65536      /* bytes of a container's cgroup.procs read */
#define ENGINE_CAP (1 << 20) /* bytes of an engine's answer read */
#define ENGINE_MS 500        /* the most a question to the engine may take */
#define ENGINE_PER_TICK 8    /* questions asked per tick at most */
#define ENGINE_BACKOFF 30.0  /* seconds before asking an engine that failed again */
#define KEEP_CTS 64          /* containers whose files are kept open */

/* A container the engine listed for a name or label tie. */
struct engine_ct {
	char id[RM_CT_ID_LEN + 1];
	char name[256];          /* the engine's name for it, sanitized */
};

/* A tying fact from a container client of the tree. */
struct tie {
	int pid;
	uint64_t start;
	uid_t uid;
	double start_epoch;      /* when the client started */
	char kind[16];           /* "cidfile", "cgroup-parent", "name", "label" */
	char *value;             /* the file, P, NAME or K=V */
	char *name;              /* the client's --name, or NULL */
	char id[RM_CT_ID_LEN + 1];  /* cidfile: the ID once read */
	int dirfd;               /* cidfile: the client's cwd (or root, for an
				  * absolute name), opened with its command
				  * line; -1 once the ID is read or the client
				  * is gone without writing it */
	char *sock;              /* name, label: the engine's socket */
	struct engine_ct *ids;   /* name, label: the containers the engine gave */
	size_t nids;
	double retry_at;         /* name, label: an engine that failed: not before */
	int said;                /* its failure was said */
};

struct ct {
	char id[RM_CT_ID_LEN + 1];
	char *cgroup;            /* relative to the hierarchy's root */
	char *dir;               /* the directory read */
	size_t parent_len;
	char name[256];          /* sanitized */
	const char *tied;        /* "" when not tied */
	unsigned asked;          /* the engine ties asked about it (C.api_gen) */
	int has_limit, has_peak, has_failcnt, has_oom, has_usage;
	uint64_t limit, usage, peak, failcnt, oom;  /* bytes, counts */
	unsigned gen;
	int keep;                /* its files are kept open (the first KEEP_CTS) */
	int kept[6];             /* their descriptors + 1 (0: not open), by KF_* */
};

enum { KF_LIMIT, KF_USAGE, KF_PEAK, KF_FAILCNT, KF_OOM, KF_PROCS };

static struct {
	int on;
	struct rm_outfile out;
	int ok;
	int v2;
	char mnt[4096];          /* the hierarchy's mount point (re-rooted) */
	char mroot[4096];        /* the mount's root in the hierarchy ("" for /) */
	int have_hier;
	int kernfs;              /* the hierarchy is the kernel's (a directory's
				  * link count is its subdirectories + 2) */
	size_t nkeep;            /* containers with keep set */
	struct tie *ties;
	size_t nties, capties;
	struct ct *cts;
	size_t ncts, capcts;
	unsigned gen;
	unsigned api_gen;        /* bumped when a name or label tie is added */
	int api_need;            /* an untied container the engine was not asked about */
	char *ebuf;              /* the engine's answer */
	int *adopt;              /* the processes of tied containers this tick */
	size_t nadopt, capadopt;
	struct rm_buf b;
	pid_t job, self;         /* --exec's CMD, forked by self (containers_job) */
} C;

/* ---- rm-tools' own monitors ---- */

static const char *const monitors[] = {
	"rm-monitor", "rm-sample", "rm-tree", "rm-summarize", "rm-run", "rm-energy",
	"rm-gpu", "resource-monito", "resource-monitor.sh", NULL
};

static int monitor_name(const char *s, size_t n)
{
	const char *slash = memrchr(s, '/', n);

	if (slash) {
		n -= (size_t)(slash + 1 - s);
		s = slash + 1;
	}
	for (const char *const *m = monitors; *m; m++)
		if (strlen(*m) == n && strncmp(*m, s, n) == 0)
			return 1;
	return 0;
}

int containers_is_monitor(const char *comm, const char *raw, ssize_t len)
{
	size_t l0;

	if (comm && monitor_name(comm, strlen(comm)))
		return 1;
	if (!raw || len <= 0)
		return 0;
	/* "bash /usr/bin/rm-monitor ...": a shell running the wrapper. */
	l0 = strnlen(raw, (size_t)len);
	if (monitor_name(raw, l0))
		return 1;
	if (l0 + 1 < (size_t)len) {
		const char *a0 = memrchr(raw, '/', l0);
		a0 = a0 ? a0 + 1 : raw;
		if (strncmp(a0, "bash", 4) == 0 || strcmp(a0, "sh") == 0) {
			const char *a1 = raw + l0 + 1;
			return monitor_name(a1, strnlen(a1, (size_t)len - l0 - 1));
		}
	}
	return 0;
}

int containers_monitor_pid(int pid, const char *comm)
{
	char buf[4096];
	ssize_t len;

	if (monitor_name(comm, strlen(comm)))
		return 1;
	/* A shell running the wrapper (#!/usr/bin/env bash: comm is bash). */
	if (strcmp(comm, "bash") != 0 && strcmp(comm, "sh") != 0 && strcmp(comm, "dash") != 0)
		return 0;
	len = rm_pfile_read(NULL, pid, "cmdline", buf, sizeof(buf), 0);
	return len > 0 && containers_is_monitor(NULL, buf, len);
}

/* ---- ties from the clients' command lines ---- */

static char *xstrdup(const char *s)
{
	char *d = s ? strdup(s) : NULL;

	if (s && !d)
		tree_oom();
	return d;
}

/* The epoch of boot, as start times (stat field 22) count from it. */
static double boot_epoch(void)
{
	static double b;
	char buf[128];
	double up;

	if (!b && rm_read_at(rm_proc_dirfd(), "uptime", buf, sizeof(buf)) > 0 &&
	    sscanf(buf, "%lf", &up) == 1)
		b = rm_now_epoch() - up;
	return b;
}

/* The tie added, or NULL when the same fact is already known. */
static struct tie *add_tie(const struct rm_pnode *n, uid_t uid, const char *kind,
			   const char *value, const char *name, const char *sock)
{
	struct tie *x;

	for (size_t i = 0; i < C.nties; i++)
		if (strcmp(C.ties[i].kind, kind) == 0 && strcmp(C.ties[i].value, value) == 0 &&
		    ((C.ties[i].pid == n->pid && C.ties[i].start == n->start) ||
		     (sock && C.ties[i].sock && strcmp(C.ties[i].sock, sock) == 0)))
			return NULL;  /* the same fact (a label every stage gives: once) */
	if (C.nties == C.capties) {
		size_t cap = C.capties ? C.capties * 2 : 16;
		struct tie *v = realloc(C.ties, cap * sizeof(*v));
		if (!v)
			tree_oom();
		C.ties = v;
		C.capties = cap;
	}
	x = &C.ties[C.nties++];
	memset(x, 0, sizeof(*x));
	x->pid = n->pid;
	x->start = n->start;
	x->uid = uid;
	x->start_epoch = boot_epoch() + (double)n->start / (double)rm_clk_tck();
	snprintf(x->kind, sizeof(x->kind), "%s", kind);
	x->value = xstrdup(value);
	x->name = xstrdup(name);
	x->sock = xstrdup(sock);
	x->dirfd = -1;
	if (sock)
		C.api_gen++;
	return x;
}

/* A small file of the client's (config.json, a context's meta.json): a
 * regular file of its user or root, not through a symlink at its last
 * component.  Its length, or -1 with why. */
static ssize_t client_file(const char *path, uid_t uid, char *buf, size_t cap, const char **why)
{
	struct stat st;
	ssize_t got;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);

	if (fd < 0) {
		*why = strerror(errno);
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (st.st_uid != uid && st.st_uid != 0)) {
		*why = "not a regular file of the client's user or root";
		close(fd);
		return -1;
	}
	got = rm_read_fd(fd, buf, cap);
	close(fd);
	if (got < 0 || (size_t)got >= cap) {
		*why = got < 0 ? "unreadable" : "too large";
		return -1;
	}
	return got;
}

/*
 * The engine socket a docker client talks to, as the host sees it, found
 * as the docker CLI finds it: -H, or its --context, else DOCKER_HOST,
 * else DOCKER_CONTEXT, else its config's currentContext (the config
 * directory: --config, DOCKER_CONFIG, else $HOME/.docker), a context's engine
 * read from contexts/meta/SHA256(NAME)/meta.json there; paths are the
 * client's (its root, its cwd), read while it lives.  0 when that engine
 * is not a local socket or cannot be found (a context: said once).
 */
static int client_socket(const struct rm_pnode *n, const struct rm_ct_client *c, uid_t uid,
			 char *out, size_t cap)
{
	static int said_ctx;
	char env[16384], path[4096], root[128], cfg[4096], file[8192], buf[65536], name[256];
	char url[4096], hex[65];
	const char *why = "", *dh = NULL, *dctx = NULL, *dcfg = NULL, *home = NULL, *ctx;
	struct stat a, b;
	ssize_t el, got;
	int own_root;

	el = rm_pfile_read(NULL, n->pid, "environ", env, sizeof(env), 0);
	if (el > 0) {
		dh = rm_environ_get(env, (size_t)el, "DOCKER_HOST");
		dctx = rm_environ_get(env, (size_t)el, "DOCKER_CONTEXT");
		dcfg = rm_environ_get(env, (size_t)el, "DOCKER_CONFIG");
		home = rm_environ_get(env, (size_t)el, "HOME");
	}
	rm_pathf(root, sizeof(root), "%s/%d/root", rm_proc_root(), n->pid);
	own_root = !(stat(root, &a) == 0 && stat("/", &b) == 0 &&
		     (a.st_dev != b.st_dev || a.st_ino != b.st_ino));
	/* The config directory, as a path here. */
	cfg[0] = '\0';
	{
		const char *d = c->config ? c->config : dcfg && *dcfg ? dcfg : NULL;
		char hd[4096];
		if (!d && home && *home && rm_pathf(hd, sizeof(hd), "%s/.docker", home) == 0)
			d = hd;
		if (d && d[0] == '/')
			rm_pathf(cfg, sizeof(cfg), "%s%s", own_root ? "" : root, d);
		else if (d)
			rm_pathf(cfg, sizeof(cfg), "%s/%d/cwd/%s", rm_proc_root(), n->pid, d);
	}
	ctx = rm_engine_context_name(c->context, c->host, dh, dctx, NULL);
	if (strcmp(ctx, "default") == 0 && !c->host && !(dh && *dh) && cfg[0] &&
	    rm_pathf(file, sizeof(file), "%s/config.json", cfg) == 0 &&
	    (got = client_file(file, uid, buf, sizeof(buf), &why)) > 0 &&
	    rm_engine_config_context(buf, (size_t)got, name, sizeof(name)))
		ctx = name;
	if (strcmp(ctx, "default") != 0) {
		why = "not a context name";
		if (!rm_engine_context_ok(ctx) || !cfg[0] ||
		    (rm_sha256_hex(ctx, strlen(ctx), hex),
		     rm_pathf(file, sizeof(file), "%s/contexts/meta/%s/meta.json", cfg, hex) < 0) ||
		    (got = client_file(file, uid, buf, sizeof(buf), &why)) < 0 ||
		    (why = "no Endpoints.docker.Host in its meta.json",
		     !rm_engine_context_host(buf, (size_t)got, url, sizeof(url))) ||
		    !rm_engine_socket(url, NULL, path, sizeof(path), &why)) {
			if (!said_ctx++)
				tree_warnx("--containers: the engine of docker context '%s' (client %d) is not "
					   "followed: %s (its --name and --label do not tie)",
					   ctx, n->pid, !cfg[0] ? "no config directory" : why);
			return 0;
		}
	} else if (!rm_engine_socket(c->host, dh, path, sizeof(path), &why)) {
		return 0;
	}
	if (!own_root)
		return rm_pathf(out, cap, "%s%s", root, path) == 0;
	return rm_pathf(out, cap, "%s", path) == 0;
}

/* Does pid's command line name --exec before its "--"?  An rm-tree
 * without it forks no job: a child of it named rm-tree is a clone of its
 * own (LeakSanitizer's tracer at its exit, under SAN=1). */
static int runs_exec(int pid)
{
	char buf[4096];
	ssize_t len = rm_pfile_read(NULL, pid, "cmdline", buf, sizeof(buf), 0);

	for (ssize_t i = 0; i < len; i += (ssize_t)strlen(buf + i) + 1) {
		if (strcmp(buf + i, "--") == 0)
			break;
		if (strcmp(buf + i, "--exec") == 0)
			return 1;
	}
	return 0;
}

void containers_job(pid_t pid)
{
	C.job = pid;
	C.self = getpid();
}

int containers_job_before_exec(const struct rm_pnode *n)
{
	const struct rm_pnode *p;

	if (strcmp(n->comm, "rm-tree") != 0)
		return 0;
	/* Ours: our CMD that has not exec'd yet (or never will: not
	 * found, not executable), not a clone of our own. */
	if (C.job > 0 && n->pid == C.job && n->ppid == C.self)
		return 1;
	return (p = table_find(n->ppid)) != NULL && p != n && table_is_excluded(p) &&
	       strcmp(p->comm, "rm-tree") == 0 && runs_exec(p->pid);
}

void containers_cmdline(struct rm_pnode *n, const char *raw, ssize_t len)
{
	char *copy, *argv[512];
	int argc = 0;
	struct rm_ct_client c;
	struct stat st;
	char p[64];

	if (table_is_member(n) && containers_is_monitor(n->comm, raw, len) && !containers_job_before_exec(n)) {
		/* Another monitor the orchestrator started: never the build
		 * (its descendants inherit the exclusion). */
		table_exclude(n);
		table_monitor_in(n);
		return;
	}
	if (!C.on || !table_is_member(n) || len <= 0)
		return;
	/* Cheap first: is argv[0] a client at all? */
	{
		const char *b = memrchr(raw, '/', strnlen(raw, (size_t)len));
		b = b ? b + 1 : raw;
		if (strncmp(b, "docker", 6) != 0 && strncmp(b, "podman", 6) != 0 &&
		    strncmp(b, "nerdctl", 7) != 0 && strcmp(b, "com.docker.cli") != 0)
			return;
	}
	copy = malloc((size_t)len + 1);
	if (!copy)
		tree_oom();
	memcpy(copy, raw, (size_t)len);
	copy[len] = '\0';
	for (ssize_t i = 0; i < len && argc < 511; ) {
		argv[argc++] = copy + i;
		i += (ssize_t)strlen(copy + i) + 1;
	}
	argv[argc] = NULL;
	if (rm_ct_parse_client(argv, argc, &c) >= RM_CT_RUN) {
		uid_t uid = 0;
		if (rm_pathf(p, sizeof(p), "%s/%d", rm_proc_root(), n->pid) == 0 && stat(p, &st) == 0)
			uid = st.st_uid;
		char sock[4096];
		if (c.cgroup_parent)
			add_tie(n, uid, "cgroup-parent", c.cgroup_parent, c.name, NULL);
		struct tie *x;
		if (c.cidfile && (x = add_tie(n, uid, "cidfile", c.cidfile, c.name, NULL)) != NULL) {
			/* `docker create --cidfile F` writes F and exits at
			 * once, often before the next tick: hold the client's
			 * directory now, while it lives, and read F from it
			 * later. */
			char d[64];
			if (rm_pathf(d, sizeof(d), "%s/%d/%s", rm_proc_root(), n->pid,
				     c.cidfile[0] == '/' ? "root" : "cwd") == 0)
				x->dirfd = open(d, O_PATH | O_DIRECTORY | O_CLOEXEC);
		}
		/* docker's engine maps a name or a label to an ID (podman's
		 * containers are tied by their fork lineage). */
		if ((c.sub == RM_CT_RUN || c.sub == RM_CT_CREATE) && strcmp(c.engine, "docker") == 0 &&
		    (c.name || c.nlabels) && client_socket(n, &c, uid, sock, sizeof(sock))) {
			if (c.name)
				add_tie(n, uid, "name", c.name, c.name, sock);
			for (int k = 0; k < c.nlabels; k++)
				add_tie(n, uid, "label", c.labels[k], c.name, sock);
		}
	}
	free(copy);
}

/*
 * Read a cidfile as its client wrote it: relative to the client's cwd (or
 * its root, for an absolute name), held since its command line was read,
 * a regular file of the client's user or root, not through a symlink at
 * its last component, 64 hex digits.  Returns 1 with x->id set, 0 when not
 * (yet) there.
 */
static int read_cidfile(struct tie *x)
{
	char buf[RM_CT_ID_LEN + 8];
	const char *rel = x->value;
	struct stat st;
	ssize_t got;
	int fd;

	if (x->dirfd < 0)
		return 0;
	while (*rel == '/')
		rel++;
	fd = openat(x->dirfd, *rel ? rel : ".", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return 0;
	/* Written by this client, not left by an earlier run (docker
	 * refuses to start while the file is there, but the container it
	 * named may still run): not older than the client. */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (st.st_uid != x->uid && st.st_uid != 0) ||
	    (double)st.st_mtim.tv_sec + (double)st.st_mtim.tv_nsec / 1e9 + 1.0 < x->start_epoch) {
		close(fd);
		return 0;
	}
	got = rm_read_fd(fd, buf, sizeof(buf));
	close(fd);
	while (got > 0 && (buf[got - 1] == '\n' || buf[got - 1] == ' '))
		got--;
	if (got != RM_CT_ID_LEN || !rm_ct_is_id(buf, RM_CT_ID_LEN))
		return 0;
	memcpy(x->id, buf, RM_CT_ID_LEN);
	x->id[RM_CT_ID_LEN] = '\0';
	return 1;
}

/* Is the tie's client still the process whose command line was read? */
static int client_lives(const struct tie *x)
{
	const struct rm_pnode *n = table_find(x->pid);

	return n && n->start == x->start && !table_is_ended(n) && !n->has_kend;
}

/* A cidfile is read from the directory held for it until its ID is
 * there, then let go; also once the client is gone and a last read finds
 * none (docker writes it before it exits: it never will be). */
static void resolve_cidfiles(void)
{
	for (size_t i = 0; i < C.nties; i++) {
		struct tie *x = &C.ties[i];
		if (strcmp(x->kind, "cidfile") != 0 || x->dirfd < 0)
			continue;
		int alive = client_lives(x);
		if (read_cidfile(x) || !alive) {
			close(x->dirfd);
			x->dirfd = -1;
		}
	}
}

/*
 * A container's files are read every tick: the first KEEP_CTS
 * containers' are kept open and read by pread, one system call where a
 * path costs four (open, two reads, close); the others' by path, so that
 * a host of many containers does not take many descriptors.  A file read
 * whole (cgroup.procs, which the kernel hands out a page at a time) is
 * read on until its end.
 */
static ssize_t ct_read(struct ct *c, int slot, const char *file, char *buf, size_t cap, int whole)
{
	return rm_read_kept(c->keep ? &c->kept[slot] : NULL, c->dir, file, buf, cap, whole);
}

static void ct_close(struct ct *c)
{
	for (size_t k = 0; k < sizeof(c->kept) / sizeof(c->kept[0]); k++)
		if (c->kept[k])
			close(c->kept[k] - 1);
	memset(c->kept, 0, sizeof(c->kept));
	if (c->keep)
		C.nkeep--;
	c->keep = 0;
}

/* A directory of the kernel's hierarchy with no subdirectory: one stat,
 * where listing it takes four or five system calls.  Elsewhere (a
 * fixture tree; some filesystems give a directory one link) it is
 * listed. */
static int no_subdirs_at(int dirfd, const char *path)
{
	struct stat st;

	return C.kernfs && fstatat(dirfd, path, &st, 0) == 0 && S_ISDIR(st.st_mode) && st.st_nlink == 2;
}

/* fn for each PID of the cgroup.procs of c (at depth 0) or of dir, until
 * it returns non-zero: that value, else 0.  One buffer: the list is read
 * whole before a caller goes down a level. */
static int procs_each(struct ct *c, const char *dir, int (*fn)(int pid))
{
	static char buf[PROCS_MAX];
	ssize_t got = c ? ct_read(c, KF_PROCS, "cgroup.procs", buf, sizeof(buf), 1)
			: rm_read_kept(NULL, dir, "cgroup.procs", buf, sizeof(buf), 1);

	for (char *s = buf; got > 0 && *s; ) {
		char *end;
		long pid = strtol(s, &end, 10);
		int r;
		if (end == s)
			break;
		if ((r = fn((int)pid)) != 0)
			return r;
		s = end;
		while (*s == '\n')
			s++;
	}
	return 0;
}

static int build_member(int pid)
{
	const struct rm_pnode *n = table_find(pid);

	return n && table_is_member(n) && !table_is_excluded(n);
}

/* Is a member of the tree in the container's cgroup (or one below it)?
 * c: the container, at depth 0. */
static int member_inside(struct ct *c, const char *dir, int depth)
{
	char p[4200];
	int hit = procs_each(c, dir, build_member);
	DIR *d;
	struct dirent *de;

	if (hit || depth >= 2 || no_subdirs_at(AT_FDCWD, dir) || !(d = opendir(dir)))
		return hit;
	while (!hit && (de = readdir(d)) != NULL)
		if (de->d_type == DT_DIR && de->d_name[0] != '.' &&
		    rm_pathf(p, sizeof(p), "%s/%s", dir, de->d_name) == 0)
			hit = member_inside(NULL, p, depth + 1);
	closedir(d);
	return hit;
}

static const struct engine_ct *engine_said(const struct tie *x, const char *id)
{
	for (size_t k = 0; k < x->nids; k++)
		if (strcmp(x->ids[k].id, id) == 0)
			return &x->ids[k];
	return NULL;
}

static void tie_of(struct ct *c)
{
	for (size_t i = 0; i < C.nties && !c->tied[0]; i++) {
		struct tie *x = &C.ties[i];
		const struct engine_ct *e = NULL;
		int hit;
		if (x->sock)
			hit = (e = engine_said(x, c->id)) != NULL;
		else if (strcmp(x->kind, "cidfile") == 0)
			hit = strcmp(x->id, c->id) == 0;
		else
			hit = rm_ct_under_parent(x->value, c->cgroup, c->parent_len);
		if (hit) {
			/* A literal: the ties array moves as it grows. */
			c->tied = x->sock ? (strcmp(x->kind, "name") == 0 ? "name" : "label")
				: strcmp(x->kind, "cidfile") == 0 ? "cidfile" : "cgroup-parent";
			if (x->name && !c->name[0])
				rm_sanitize(x->name, strlen(x->name), c->name, sizeof(c->name));
			/* Listed before its cgroup was made (docker create,
			 * or a run asked about between its create and its
			 * start): the name the engine gave then. */
			if (e && !c->name[0])
				memcpy(c->name, e->name, sizeof(c->name));
		}
	}
	if (!c->tied[0] && member_inside(c, c->dir, 0))
		c->tied = "fork";
	if (!c->tied[0] && c->asked != C.api_gen)
		C.api_need = 1;
}

/* ---- the build's processes in its containers ---- */

/* The memory cgroup of pid as /proc/PID/cgroup names it (v1's memory
 * line, else v2's "0::" line), into out: 0, or -1. */
static int pid_memcg(int pid, char *out, size_t cap)
{
	char buf[4096];

	if (rm_pfile_read(NULL, pid, "cgroup", buf, sizeof(buf), 0) <= 0)
		return -1;
	return rm_cg_parse_proc_cgroup(buf, C.v2 ? NULL : "memory", out, cap);
}

/* Is path the container cgroup cg, or below it? */
static int cg_under(const char *path, const char *cg)
{
	size_t l = strlen(cg);

	return strncmp(path, cg, l) == 0 && (path[l] == '\0' || path[l] == '/');
}

const int *containers_adopted(size_t *n)
{
	*n = C.on ? C.nadopt : 0;
	return C.adopt;
}

int containers_pid_tied(int pid)
{
	char cg[4096];
	struct rm_ct_cgroup pc;
	int any = 0;

	if (!C.on || !C.have_hier)
		return 0;
	for (size_t i = 0; i < C.ncts && !any; i++)
		any = C.cts[i].tied[0] != '\0';
	for (size_t i = 0; i < C.nties && !any; i++)
		any = strcmp(C.ties[i].kind, "cgroup-parent") == 0;
	if (!any || pid_memcg(pid, cg, sizeof(cg)) < 0)
		return 0;
	for (size_t i = 0; i < C.ncts; i++)
		if (C.cts[i].tied[0] && cg_under(cg, C.cts[i].cgroup))
			return 1;
	/* A container under a --cgroup-parent of the build that no walk
	 * has met yet (its init's exec comes before the next tick). */
	if (rm_ct_parse_cgroup(cg, &pc) == 1)
		for (size_t i = 0; i < C.nties; i++)
			if (strcmp(C.ties[i].kind, "cgroup-parent") == 0 &&
			    rm_ct_under_parent(C.ties[i].value, cg, pc.parent_len))
				return 1;
	return 0;
}

/* Every process of a tied container's cgroup (and the cgroups below it,
 * two levels) is listed to join the build (containers_adopted).  c: the
 * container, at depth 0. */
static int adopt_pid(int pid)
{
	if (C.nadopt == C.capadopt) {
		size_t cap = C.capadopt ? C.capadopt * 2 : 64;
		int *v = realloc(C.adopt, cap * sizeof(*v));
		if (!v)
			tree_oom();
		C.adopt = v;
		C.capadopt = cap;
	}
	C.adopt[C.nadopt++] = pid;
	return 0;
}

static void adopt_inside(struct ct *c, const char *dir, int depth)
{
	char p[4200];
	DIR *d;
	struct dirent *de;

	procs_each(c, dir, adopt_pid);
	if (depth >= 2 || no_subdirs_at(AT_FDCWD, dir) || !(d = opendir(dir)))
		return;
	while ((de = readdir(d)) != NULL)
		if (de->d_type == DT_DIR && de->d_name[0] != '.' &&
		    rm_pathf(p, sizeof(p), "%s/%s", dir, de->d_name) == 0)
			adopt_inside(NULL, p, depth + 1);
	closedir(d);
}

/* ---- the engine: names and labels to IDs ---- */

static void engine_id(const char *id, const char *name, void *arg)
{
	struct tie *x = arg;

	/* Docker names every container (its own name for a plain run):
	 * the row says it. */
	for (size_t i = 0; i < C.ncts; i++)
		if (strcmp(C.cts[i].id, id) == 0 && !C.cts[i].name[0])
			rm_sanitize(name, strlen(name), C.cts[i].name, sizeof(C.cts[i].name));
	if (engine_said(x, id))
		return;
	if ((x->nids & (x->nids - 1)) == 0) {  /* 0, 1, 2, 4, ...: grow */
		void *v = realloc(x->ids, (x->nids ? x->nids * 2 : 1) * sizeof(*x->ids));
		if (!v)
			tree_oom();
		x->ids = v;
	}
	memcpy(x->ids[x->nids].id, id, RM_CT_ID_LEN + 1);
	rm_sanitize(name, strlen(name), x->ids[x->nids].name, sizeof(x->ids[x->nids].name));
	x->nids++;
}

/* A JSON string of s (quotes included) into out: 0, or -1 when too long. */
static int json_quote(const char *s, char *out, size_t cap)
{
	size_t o = 0;

	if (cap < 3)
		return -1;
	out[o++] = '"';
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (o + 7 >= cap)
			return -1;
		if (ch == '"' || ch == '\\') {
			out[o++] = '\\';
			out[o++] = (char)ch;
		} else if (ch < 0x20) {
			o += (size_t)snprintf(out + o, cap - o, "\\u%04x", ch);
		} else {
			out[o++] = (char)ch;
		}
	}
	out[o++] = '"';
	out[o] = '\0';
	return 0;
}

/* Ask x's engine which containers carry its name or label.  1 asked,
 * 0 not (it failed: said once per engine, then not asked for a while). */
static int engine_ask(struct tie *x, double now)
{
	char q[2048], filt[2200], enc[6700], target[7000], why[256], *body;
	size_t blen;
	int status, n;

	if (!C.ebuf && !(C.ebuf = malloc(ENGINE_CAP)))
		tree_oom();
	if (json_quote(x->value, q, sizeof(q)) < 0 ||
	    snprintf(filt, sizeof(filt), "{\"%s\":[%s]}", strcmp(x->kind, "name") == 0 ? "name" : "label",
		     q) >= (int)sizeof(filt) ||
	    rm_url_encode(filt, enc, sizeof(enc)) < 0 ||
	    snprintf(target, sizeof(target), "/containers/json?all=1&filters=%s", enc) >= (int)sizeof(target)) {
		x->retry_at = 1e300;  /* too long to ask about, ever */
		return 0;
	}
	status = rm_engine_get(x->sock, x->uid, target, ENGINE_MS, C.ebuf, ENGINE_CAP, &body, &blen,
			       why, sizeof(why));
	if (status == 200) {
		/* Created counts whole seconds: a second's grace. */
		n = rm_engine_list(body, blen, strcmp(x->kind, "name") == 0 ? x->value : NULL,
				   strcmp(x->kind, "label") == 0 ? x->value : NULL, x->start_epoch - 1.0,
				   engine_id, x);
		if (n >= 0)
			return 1;
		snprintf(why, sizeof(why), "an answer that is not a container list");
	} else if (status > 0) {
		snprintf(why, sizeof(why), "HTTP status %d", status);
	}
	/* Said once per engine socket. */
	{
		int said = 0;
		for (size_t i = 0; i < C.nties; i++)
			said |= C.ties[i].said && C.ties[i].sock && strcmp(C.ties[i].sock, x->sock) == 0;
		if (!said)
			tree_warnx("--containers: cannot ask the engine at %s which containers %s %s: %s "
				   "(they are not tied by it; --cidfile or --cgroup-parent tie without the engine)",
				   x->sock, strcmp(x->kind, "name") == 0 ? "are named" : "carry the label",
				   x->value, why);
		x->said = 1;
	}
	/* Every question to that engine waits: one silent engine costs a
	 * tick at most ENGINE_MS, not that for each of its ties. */
	for (size_t i = 0; i < C.nties; i++)
		if (C.ties[i].sock && strcmp(C.ties[i].sock, x->sock) == 0)
			C.ties[i].retry_at = now + ENGINE_BACKOFF;
	return 0;
}

/* After a walk: when a container is untied that the engine ties were not
 * asked about, ask each (bounded per tick), then tie what they say.  Until
 * every tie was answered, the untied containers stay to be asked about. */
static void engine_round(void)
{
	double now = rm_now_epoch();
	int asked = 0, all = 1, ok;

	if (!C.api_need)
		return;
	C.api_need = 0;
	for (size_t i = 0; i < C.nties; i++) {
		if (!C.ties[i].sock)
			continue;
		if (now < C.ties[i].retry_at) {
			all = 0;  /* failed: asked again after its backoff */
			continue;
		}
		if (asked++ >= ENGINE_PER_TICK) {
			all = 0;
			break;
		}
		ok = engine_ask(&C.ties[i], now);
		all &= ok;
	}
	for (size_t i = 0; i < C.ncts; i++) {
		struct ct *c = &C.cts[i];
		if (c->tied[0])
			continue;
		tie_of(c);
		if (all)
			c->asked = C.api_gen;
	}
	C.api_need = !all;
}

/* ---- the hierarchy and its containers ---- */

/* The memory hierarchy at its usual place under the sys root: v1's
 * /sys/fs/cgroup/memory, else a v2 /sys/fs/cgroup with the memory
 * controller (so a fixture tree under RM_SYS_ROOT stands in for either). */
static int usual_hierarchy(void)
{
	char p[4200], buf[512];

	rm_pathf(C.mnt, sizeof(C.mnt), "%s/fs/cgroup/memory", rm_sys_root());
	if (rm_pathf(p, sizeof(p), "%s/memory.usage_in_bytes", C.mnt) == 0 && access(p, R_OK) == 0) {
		C.v2 = 0;
		return 1;
	}
	rm_pathf(C.mnt, sizeof(C.mnt), "%s/fs/cgroup", rm_sys_root());
	if (rm_pathf(p, sizeof(p), "%s/cgroup.controllers", C.mnt) == 0 &&
	    rm_read_file(p, buf, sizeof(buf)) > 0 && strstr(buf, "memory")) {
		C.v2 = 1;
		return 1;
	}
	return 0;
}

/* The memory hierarchy: the usual place, else v1 `memory` where it is
 * mounted, else v2; the mount's root in the hierarchy from mountinfo
 * (inside a container it is the container's own cgroup). */
static int find_hierarchy(void)
{
	char usual[4096], point[4096], *buf, *line, *save = NULL;
	int have = usual_hierarchy(), usual_v2 = C.v2, found = 0;

	memcpy(usual, C.mnt, sizeof(usual));
	C.mroot[0] = '\0';
	buf = rm_read_all_at(rm_proc_dirfd(), "self/mountinfo", NULL);
	if (!buf)
		return have;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct rm_cg_mount m;
		int is1, is2;
		if (rm_cg_parse_mountinfo_line(line, &m) < 0)
			continue;
		is1 = strcmp(m.fstype, "cgroup") == 0 && rm_cg_has_token(m.super, "memory");
		is2 = strcmp(m.fstype, "cgroup2") == 0;
		if (!is1 && !is2)
			continue;
		if (strncmp(m.point, "/sys", 4) == 0 && (m.point[4] == '/' || !m.point[4]))
			rm_pathf(point, sizeof(point), "%s%s", rm_sys_root(), m.point + 4);
		else
			rm_pathf(point, sizeof(point), "%s", m.point);
		if (have) {
			if (strcmp(point, usual) == 0 && is2 == usual_v2) {
				rm_pathf(C.mroot, sizeof(C.mroot), "%s", strcmp(m.root, "/") ? m.root : "");
				break;
			}
			continue;
		}
		if (is2 && found)
			continue;
		memcpy(C.mnt, point, sizeof(C.mnt));
		rm_pathf(C.mroot, sizeof(C.mroot), "%s", strcmp(m.root, "/") ? m.root : "");
		C.v2 = is2;
		found = 1;
		if (is1)
			break;
	}
	free(buf);
	return have || found;
}

static int ct_u64(struct ct *c, int slot, const char *file, uint64_t *v)
{
	char buf[64];

	return ct_read(c, slot, file, buf, sizeof(buf), 0) > 0 && rm_parse_u64(buf, v) == 0;
}

static int ct_kv(struct ct *c, int slot, const char *file, const char *key, uint64_t *v)
{
	char buf[4096];

	return ct_read(c, slot, file, buf, sizeof(buf), 0) > 0 && rm_cg_parse_kv(buf, key, v) == 0;
}

/* The containers' ancestors (docker/, system.slice/, the root): each
 * one's limit read once a tick, whatever the number of containers below
 * it, from a descriptor kept while a container is below it. */
#define ANC_MAX 32
static struct anc {
	char *dir;
	int kept;                /* the limit file's descriptor + 1 */
	unsigned gen;            /* the tick it was read in */
	int has;
	uint64_t v;
} A[ANC_MAX];
static size_t nanc;

static int anc_limit(const char *dir, uint64_t *v)
{
	const char *file = C.v2 ? "memory.max" : "memory.limit_in_bytes";
	struct anc *a = NULL;
	char buf[128];
	ssize_t n;

	for (size_t i = 0; i < nanc && !a; i++)
		if (strcmp(A[i].dir, dir) == 0)
			a = &A[i];
	if (a && a->gen == C.gen) {
		*v = a->v;
		return a->has;
	}
	if (!a && nanc == ANC_MAX)  /* so many: by path */
		return rm_read_kept(NULL, dir, file, buf, sizeof(buf), 0) > 0 && rm_cg_parse_limit(buf, v) == 1;
	if (!a) {
		a = &A[nanc++];
		a->dir = xstrdup(dir);
		a->kept = 0;
	}
	n = rm_read_kept(&a->kept, dir, file, buf, sizeof(buf), 0);
	a->gen = C.gen;
	a->has = n > 0 && rm_cg_parse_limit(buf, &a->v) == 1;
	*v = a->v;
	return a->has;
}

/* The ancestors no container of this tick is below: let go. */
static void anc_sweep(int all)
{
	for (size_t i = 0; i < nanc; ) {
		if (!all && A[i].gen == C.gen) {
			i++;
			continue;
		}
		if (A[i].kept)
			close(A[i].kept - 1);
		free(A[i].dir);
		A[i] = A[--nanc];
	}
}

/* The tightest limit of c's cgroup and its ancestors up to the mount point. */
static int tightest(struct ct *c, uint64_t *lim)
{
	char d[4096], buf[128];
	size_t ml = strlen(C.mnt);
	uint64_t v;
	int any = 0;

	if (ct_read(c, KF_LIMIT, C.v2 ? "memory.max" : "memory.limit_in_bytes", buf, sizeof(buf), 0) > 0 &&
	    rm_cg_parse_limit(buf, &v) == 1) {
		*lim = v;
		any = 1;
	}
	snprintf(d, sizeof(d), "%s", c->dir);
	for (;;) {
		char *slash = strrchr(d, '/');
		if (strlen(d) <= ml || !slash || (size_t)(slash - d) < ml)
			break;
		*slash = '\0';
		if (anc_limit(d, &v) && (!any || v < *lim)) {
			*lim = v;
			any = 1;
		}
	}
	return any;
}

static void read_ct(struct ct *c)
{
	c->has_limit = tightest(c, &c->limit);
	if (C.v2) {
		c->has_usage = ct_u64(c, KF_USAGE, "memory.current", &c->usage);
		c->has_peak = ct_u64(c, KF_PEAK, "memory.peak", &c->peak);
		c->has_failcnt = 0;
		c->has_oom = ct_kv(c, KF_OOM, "memory.events", "oom_kill", &c->oom);
	} else {
		c->has_usage = ct_u64(c, KF_USAGE, "memory.usage_in_bytes", &c->usage);
		c->has_peak = ct_u64(c, KF_PEAK, "memory.max_usage_in_bytes", &c->peak);
		c->has_failcnt = ct_u64(c, KF_FAILCNT, "memory.failcnt", &c->failcnt);
		c->has_oom = ct_kv(c, KF_OOM, "memory.oom_control", "oom_kill", &c->oom);
	}
}

static struct ct *find_ct(const char *id, const char *cgroup)
{
	for (size_t i = 0; i < C.ncts; i++)
		if (strcmp(C.cts[i].id, id) == 0 && strcmp(C.cts[i].cgroup, cgroup) == 0)
			return &C.cts[i];
	return NULL;
}

/* A container cgroup met by the walk: new, or seen again. */
static void met(const char *dir, const char *rel, const struct rm_ct_cgroup *g)
{
	struct ct *c = find_ct(g->id, rel);

	if (!c) {
		if (C.ncts == C.capcts) {
			size_t cap = C.capcts ? C.capcts * 2 : 16;
			struct ct *v = realloc(C.cts, cap * sizeof(*v));
			if (!v)
				tree_oom();
			C.cts = v;
			C.capcts = cap;
		}
		c = &C.cts[C.ncts++];
		memset(c, 0, sizeof(*c));
		memcpy(c->id, g->id, sizeof(c->id));
		c->cgroup = xstrdup(rel);
		c->dir = xstrdup(dir);
		c->parent_len = g->parent_len;
		c->tied = "";
		if ((c->keep = C.nkeep < KEEP_CTS))
			C.nkeep++;
	}
	c->gen = C.gen;
	read_ct(c);
	if (!c->tied[0])
		tie_of(c);
}

static void walk(char *dir, size_t dl, char *rel, size_t rl, int depth, int *budget)
{
	DIR *d;
	struct dirent *de;

	if (depth > WALK_DEPTH || !(d = opendir(dir)))
		return;
	while ((de = readdir(d)) != NULL && *budget > 0) {
		size_t nl = strlen(de->d_name);
		struct rm_ct_cgroup g;
		if (de->d_name[0] == '.' || (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN) ||
		    dl + 1 + nl >= 4096 || rl + 1 + nl >= 4096)
			continue;
		(*budget)--;
		dir[dl] = '/';
		memcpy(dir + dl + 1, de->d_name, nl + 1);
		rel[rl] = '/';
		memcpy(rel + rl + 1, de->d_name, nl + 1);
		if (rm_ct_parse_cgroup(rel, &g) && g.len == rl + 1 + nl)
			met(dir, rel, &g);  /* a container: not walked into */
		else if (!rm_ct_parse_cgroup(rel, &g) && !no_subdirs_at(dirfd(d), de->d_name))
			walk(dir, dl + 1 + nl, rel, rl + 1 + nl, depth + 1, budget);
		dir[dl] = '\0';
		rel[rl] = '\0';
	}
	closedir(d);
}

static void add_kib(int has, uint64_t bytes)
{
	rm_buf_addc(&C.b, ',');
	if (has)
		rm_buf_u64(&C.b, bytes / 1024);
}

static void row(const struct ct *c, double el, double epoch, const char *state)
{
	rm_buf_num(&C.b, epoch, 3);
	rm_buf_addc(&C.b, ',');
	rm_buf_num(&C.b, el, 3);
	rm_buf_addc(&C.b, ',');
	rm_buf_adds(&C.b, c->id);
	rm_buf_addc(&C.b, ',');
	rm_buf_csv(&C.b, c->name);
	rm_buf_addc(&C.b, ',');
	{
		char s[4096];
		rm_sanitize(c->cgroup, strlen(c->cgroup), s, sizeof(s));
		rm_buf_csv(&C.b, s);
	}
	rm_buf_addc(&C.b, ',');
	rm_buf_adds(&C.b, c->tied);
	add_kib(c->has_limit, c->limit);
	add_kib(c->has_usage, c->usage);
	add_kib(c->has_peak, c->peak);
	rm_buf_addc(&C.b, ',');
	if (c->has_failcnt)
		rm_buf_u64(&C.b, c->failcnt);
	rm_buf_addc(&C.b, ',');
	if (c->has_oom)
		rm_buf_u64(&C.b, c->oom);
	rm_buf_addc(&C.b, ',');
	rm_buf_adds(&C.b, state);
	rm_buf_addc(&C.b, '\n');
}

static void flush(void)
{
	if (C.b.len && C.ok && (C.b.oom || rm_buf_write(C.out.fd, &C.b) < 0)) {
		tree_warnx("cannot write the containers file '%s': %s", C.out.path,
			   C.b.oom ? "out of memory" : strerror(errno));
		C.ok = 0;
	}
	rm_buf_reset(&C.b);
}

void containers_start(const struct opts *o)
{
	char why[256] = "";
	struct stat st;

	if (!o->containers)
		return;
	if (rm_out_open_append(o->containers, 0644, &C.out, why, sizeof(why)) < 0)
		errx(RM_EXIT_FAIL, "cannot write the containers file '%s': %s", o->containers, why);
	C.on = C.ok = 1;
	C.have_hier = find_hierarchy();
	{
		struct statfs sf;
		C.kernfs = C.have_hier && statfs(C.mnt, &sf) == 0 &&
			   (sf.f_type == CGROUP_SUPER_MAGIC || sf.f_type == CGROUP2_SUPER_MAGIC);
	}
	if (!C.have_hier)
		tree_warnx("--containers: no memory cgroup hierarchy: no container rows");
	if (fstat(C.out.fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size == 0) {
		rm_buf_adds(&C.b, "epoch,elapsed_s,id,name,cgroup,tied,limit_kib,usage_kib,peak_kib,"
			    "failcnt,oom_kills,state\n");
		flush();
	}
}

void containers_tick(double el)
{
	char dir[4096], rel[4096];
	int budget = WALK_MAX;
	double epoch;

	if (!C.on || !C.have_hier)
		return;
	C.gen++;
	resolve_cidfiles();
	snprintf(dir, sizeof(dir), "%s", C.mnt);
	snprintf(rel, sizeof(rel), "%s", C.mroot);
	walk(dir, strlen(dir), rel, strlen(rel), 0, &budget);
	engine_round();
	C.nadopt = 0;
	for (size_t i = 0; i < C.ncts; i++)
		if (C.cts[i].gen == C.gen && C.cts[i].tied[0])
			adopt_inside(&C.cts[i], C.cts[i].dir, 0);
	epoch = rm_now_epoch();
	for (size_t i = 0; i < C.ncts; ) {
		struct ct *c = &C.cts[i];
		if (c->gen == C.gen) {
			row(c, el, epoch, "run");
			i++;
			continue;
		}
		row(c, el, epoch, "gone");
		ct_close(c);
		free(c->cgroup);
		free(c->dir);
		C.cts[i] = C.cts[--C.ncts];
	}
	anc_sweep(0);
	flush();
}

void containers_finish(double el)
{
	if (!C.on)
		return;
	containers_tick(el);
	if (C.ok && rm_out_close(&C.out) < 0)
		tree_warnx("cannot write the containers file: %s", strerror(errno));
	for (size_t i = 0; i < C.nties; i++) {
		if (C.ties[i].dirfd >= 0)
			close(C.ties[i].dirfd);
		free(C.ties[i].value);
		free(C.ties[i].name);
		free(C.ties[i].sock);
		free(C.ties[i].ids);
	}
	free(C.ebuf);
	free(C.adopt);
	C.adopt = NULL;
	C.nadopt = C.capadopt = 0;
	free(C.ties);
	anc_sweep(1);
	for (size_t i = 0; i < C.ncts; i++) {
		ct_close(&C.cts[i]);
		free(C.cts[i].cgroup);
		free(C.cts[i].dir);
	}
	free(C.cts);
	rm_buf_free(&C.b);
	C.on = 0;
}
