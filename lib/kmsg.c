/*
 * kmsg: see kmsg.h.  /dev/kmsg hands out one record per read(2); a read
 * with a buffer smaller than the record fails with EINVAL, and EPIPE means
 * records were overwritten while we read (the next read goes on).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kmsg.h"

static const char *find(const char *s, size_t len, const char *needle)
{
	size_t n = strlen(needle);

	if (n > len)
		return NULL;
	for (size_t i = 0; i + n <= len; i++)
		if (s[i] == needle[0] && memcmp(s + i, needle, n) == 0)
			return s + i;
	return NULL;
}

/* The last needle in s[0..len), or NULL. */
static const char *find_last(const char *s, size_t len, const char *needle)
{
	size_t n = strlen(needle);

	if (n > len)
		return NULL;
	for (size_t i = len - n + 1; i-- > 0;)
		if (s[i] == needle[0] && memcmp(s + i, needle, n) == 0)
			return s + i;
	return NULL;
}

/* Decimal at p (bounded by e); -1 when there is none. */
/* PID_MAX_LIMIT: a larger "pid" is not one (and would not fit an int). */
#define RM_PID_LIMIT 4194304

static long long num_at(const char *p, const char *e, const char **end)
{
	long long v = 0;
	const char *q = p;

	while (q < e && *q >= '0' && *q <= '9' && v < 100000000000000LL)
		v = v * 10 + (*q++ - '0');
	if (end)
		*end = q;
	return q == p ? -1 : v;
}

static void copy_name(char *dst, size_t size, const char *p, size_t n)
{
	if (n >= size)
		n = size - 1;
	memcpy(dst, p, n);
	dst[n] = '\0';
}

static const char *const cons_names[] = {
	[RM_OOM_UNKNOWN] = "",
	[RM_OOM_NONE] = "CONSTRAINT_NONE",
	[RM_OOM_CPUSET] = "CONSTRAINT_CPUSET",
	[RM_OOM_MEMORY_POLICY] = "CONSTRAINT_MEMORY_POLICY",
	[RM_OOM_MEMCG] = "CONSTRAINT_MEMCG",
};

const char *rm_kmsg_constraint_name(int constraint)
{
	if (constraint < 0 || constraint > RM_OOM_MEMCG)
		return "";
	return cons_names[constraint];
}

int rm_kmsg_is_record(const char *rec, size_t len)
{
	const char *e = rec + len, *p = rec;

	/* PRIO,SEQ,USEC then ',' (flags) or ';'. */
	for (int i = 0; i < 3; i++) {
		const char *q;
		if (num_at(p, e, &q) < 0 || q >= e)
			return 0;
		if (i < 2 && *q != ',')
			return 0;
		if (i == 2 && *q != ',' && *q != ';')
			return 0;
		p = q + 1;
	}
	return 1;
}

/* The value after KEY up to STOP (or e), copied to dst; 0 when KEY is
 * not there. */
static int field_to(const char *msg, const char *e, const char *key, const char *stop,
		    char *dst, size_t size)
{
	const char *p = find(msg, (size_t)(e - msg), key), *q;

	if (!p)
		return 0;
	p += strlen(key);
	q = find(p, (size_t)(e - p), stop);
	if (!q)
		q = e;
	copy_name(dst, size, p, (size_t)(q - p));
	return 1;
}

static void parse_oom_kill(const char *msg, const char *e, struct rm_oom_kill *o)
{
	char cons[40];

	if (field_to(msg, e, "constraint=", ",", cons, sizeof(cons))) {
		for (int i = RM_OOM_NONE; i <= RM_OOM_MEMCG; i++)
			if (strcmp(cons, cons_names[i]) == 0)
				o->constraint = i;
	}
	/* A cgroup path may hold commas: each runs to the next key. */
	field_to(msg, e, ",oom_memcg=", ",task_memcg=", o->oom_memcg, sizeof(o->oom_memcg));
	field_to(msg, e, ",task_memcg=", ",task=", o->task_memcg, sizeof(o->task_memcg));
}

int rm_kmsg_oom_parse(const char *rec, size_t len, struct rm_oom_kill *o)
{
	const char *e = rec + len, *semi, *msg, *p, *q;
	long long usec;
	int fields = 0;

	semi = memchr(rec, ';', len);
	if (!semi)
		return 0;
	/* PRIO,SEQ,USEC,...: the third comma-separated field. */
	p = rec;
	for (q = rec; q < semi && fields < 2; q++)
		if (*q == ',') {
			fields++;
			p = q + 1;
		}
	if (fields < 2)
		return 0;
	usec = num_at(p, semi, NULL);
	if (usec < 0)
		return 0;
	msg = semi + 1;
	{
		const char *nl = memchr(msg, '\n', (size_t)(e - msg));
		if (nl)
			e = nl; /* continuation lines ("\n KEY=VALUE") are not ours */
	}
	memset(o, 0, sizeof(*o));
	o->mem_usage_kib = o->mem_limit_kib = -1;
	o->klog_s = (double)usec / 1e6;
	p = find(msg, (size_t)(e - msg), "Killed process ");
	if (p && find(msg, (size_t)(p - msg), "ut of memory")) {
		long long pid;
		if (find(msg, (size_t)(p - msg), "Memory cgroup out of memory"))
			o->constraint = RM_OOM_MEMCG;
		p += strlen("Killed process ");
		pid = num_at(p, e, &q);
		if (pid <= 0 || pid > RM_PID_LIMIT || q + 2 > e || q[0] != ' ' || q[1] != '(')
			return 0;
		p = q + 2;
		/* The name ends at the last ") " (a name may hold ')'). */
		q = NULL;
		for (const char *r = p; r < e; r++)
			if (*r == ')' && (r + 1 == e || r[1] == ' '))
				q = r;
		if (!q)
			return 0;
		o->pid = (int)pid;
		o->killed_line = 1;
		copy_name(o->name, sizeof(o->name), p, (size_t)(q - p));
		return 1;
	}
	if ((size_t)(e - msg) > 9 && memcmp(msg, "oom-kill:", 9) == 0) {
		const char *t, *pp;
		long long pid;
		/* ...,task_memcg=PATH,task=NAME,pid=PID,uid=UID: the name runs
		 * from the ",task=" after the cgroup paths to the last ",pid=". */
		t = find(msg, (size_t)(e - msg), ",task_memcg=");
		t = find(t ? t + 12 : msg, (size_t)(e - (t ? t + 12 : msg)), ",task=");
		pp = find_last(msg, (size_t)(e - msg), ",pid=");
		if (!t || !pp)
			return 0;
		pid = num_at(pp + 5, e, NULL);
		if (pid <= 0 || pid > RM_PID_LIMIT)
			return 0;
		t += 6;
		if (pp < t)
			return 0;
		o->pid = (int)pid;
		copy_name(o->name, sizeof(o->name), t, (size_t)(pp - t));
		parse_oom_kill(msg + 9, t - 6, o);
		return 1;
	}
	return 0;
}

/* A signed decimal at p, spaces before it skipped; 0 when there is none. */
static int snum_at(const char **pp, const char *e, long long *v)
{
	const char *p = *pp, *q;
	int neg = 0;

	while (p < e && *p == ' ')
		p++;
	if (p < e && *p == '-') {
		neg = 1;
		p++;
	}
	*v = num_at(p, e, &q);
	if (*v < 0 || q == p || (q < e && *q != ' '))
		return 0;
	if (neg)
		*v = -*v;
	*pp = q;
	return 1;
}

int rm_kmsg_task_parse(const char *msg, size_t len, int ncols, struct rm_oom_task *t)
{
	const char *e = msg + len, *p = msg;
	long long v[16];

	if (ncols <= 0)
		ncols = 10;
	if (ncols < 4 || ncols > 16 || len < 3 || *p++ != '[')
		return 0;
	/* "[%7d]": the pid, right-aligned. */
	while (p < e && *p == ' ')
		p++;
	v[0] = num_at(p, e, &p);
	if (v[0] <= 0 || v[0] > RM_PID_LIMIT || p >= e || *p++ != ']')
		return 0;
	memset(t, 0, sizeof(*t));
	t->pid = (int)v[0];
	/* uid tgid total_vm rss ...: ncols numbers, then one space, the name. */
	for (int i = 0; i < ncols; i++)
		if (!snum_at(&p, e, &v[i]))
			return 0;
	if (p + 1 >= e || *p != ' ' || v[1] <= 0 || v[1] > RM_PID_LIMIT || v[3] < 0)
		return 0;
	t->uid = v[0] >= 0 && v[0] <= 0x7fffffff ? (int)v[0] : -1;
	t->tgid = (int)v[1];
	t->rss_pages = v[3];
	copy_name(t->name, sizeof(t->name), p + 1, (size_t)(e - p - 1));
	return 1;
}

int rm_kmsg_memcg_parse(const char *msg, size_t len, long long *usage_kib, long long *limit_kib)
{
	const char *e = msg + len, *p;

	if (len < 15 || memcmp(msg, "memory: usage ", 14) != 0)
		return 0;
	*usage_kib = num_at(msg + 14, e, &p);
	if (*usage_kib < 0 || e - p < 10 || memcmp(p, "kB, limit ", 10) != 0)
		return 0;
	*limit_kib = num_at(p + 10, e, &p);
	if (*limit_kib < 0 || e - p < 2 || memcmp(p, "kB", 2) != 0)
		return 0;
	return 1;
}

/*
 * The oom-kill line took everything from the first ",task=" after
 * ",task_memcg=" to ",pid=" for the name.  When the "Killed process"
 * line names the victim K and that name ends in ",task=K", the part
 * before belongs to the cgroup path (a cgroup named "a,task=x").
 */
static void split_name(struct rm_oom_kill *line, const char *killed)
{
	size_t n = strlen(line->name), k = strlen(killed), t = strlen(line->task_memcg);

	if (n <= k + 6 || strcmp(line->name + n - k, killed) != 0 ||
	    memcmp(line->name + n - k - 6, ",task=", 6) != 0)
		return;
	if (t + 6 + (n - k - 6) < sizeof(line->task_memcg)) {
		memcpy(line->task_memcg + t, ",task=", 6);
		memcpy(line->task_memcg + t + 6, line->name, n - k - 6);
		line->task_memcg[t + n - k] = '\0';
	}
}

/* One kill prints both lines: fill what the first left empty; the name
 * is the "Killed process" line's, which no cgroup path can shift. */
static void merge(struct rm_oom_kill *a, const struct rm_oom_kill *b)
{
	if (b->killed_line && !a->killed_line && b->name[0]) {
		split_name(a, b->name);
		memcpy(a->name, b->name, sizeof(a->name));
		a->killed_line = 1;
	} else if (a->killed_line && !b->killed_line && a->name[0]) {
		struct rm_oom_kill line = *b;
		split_name(&line, a->name);
		memcpy(a->task_memcg, line.task_memcg, sizeof(a->task_memcg));
	}
	if (!a->name[0])
		memcpy(a->name, b->name, sizeof(a->name));
	if (a->constraint == RM_OOM_UNKNOWN)
		a->constraint = b->constraint;
	if (!a->oom_memcg[0])
		memcpy(a->oom_memcg, b->oom_memcg, sizeof(a->oom_memcg));
	if (!a->task_memcg[0])
		memcpy(a->task_memcg, b->task_memcg, sizeof(a->task_memcg));
}

/* The kernel's report of a kill, as it comes before the kill lines. */
struct pending {
	struct rm_oom_task *tasks;
	size_t n, cap;
	long long usage, limit;
	int in_dump, ncols, seen;
};

struct reader {
	void (*cb)(void *arg, const struct rm_oom_kill *o);
	void *arg;
	const char *memcg;             /* only kills of this cgroup, or NULL */
	struct rm_oom_kill last;
	struct pending pend, lastrep;  /* the next kill's report; last's */
	int have_last, kills, records;
};

static void pending_clear(struct pending *p)
{
	p->n = 0;
	p->usage = p->limit = -1;
	p->in_dump = p->seen = 0;
}

/* A task line of the dump, kept (up to RM_OOM_MAX_TASKS; none when no
 * memory can be had: the kill is still reported). */
static void pending_task(struct pending *p, const struct rm_oom_task *t)
{
	if (p->n >= RM_OOM_MAX_TASKS)
		return;
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 32;
		struct rm_oom_task *v = realloc(p->tasks, cap * sizeof(*v));
		if (!v)
			return;
		p->tasks = v;
		p->cap = cap;
	}
	p->tasks[p->n++] = *t;
}

/* The header "[  pid  ]   uid  tgid total_vm      rss ... name": how many
 * numbers a task line has before its name. */
static int header_cols(const char *m, const char *e)
{
	int words = 0;
	const char *p = memchr(m, ']', (size_t)(e - m));

	if (!p)
		return 0;
	for (p++; p < e;) {
		while (p < e && *p == ' ')
			p++;
		if (p >= e)
			break;
		words++;
		while (p < e && *p != ' ')
			p++;
	}
	return words - 1;
}

/* A record that is not a kill line: part of the report of the next kill? */
static void take_report(struct pending *p, const char *rec, size_t len)
{
	const char *m = memchr(rec, ';', len), *e = rec + len, *nl;
	struct rm_oom_task t;
	long long u, l;
	size_t n;

	if (!m)
		return;
	m++;
	nl = memchr(m, '\n', (size_t)(e - m));
	if (nl)
		e = nl;
	n = (size_t)(e - m);
	if (find(m, n, " invoked oom-killer: ")) {
		pending_clear(p);
	} else if (rm_kmsg_memcg_parse(m, n, &u, &l)) {
		p->usage = u;
		p->limit = l;
	} else if (n >= 27 && memcmp(m, "Tasks state (memory values ", 27) == 0) {
		p->n = 0;
		p->in_dump = p->seen = 1;
		p->ncols = 0;
	} else if (p->in_dump && n > 9 && memcmp(m, "[  pid  ]", 9) == 0) {
		p->ncols = header_cols(m, e);
	} else if (p->in_dump && rm_kmsg_task_parse(m, n, p->ncols, &t)) {
		pending_task(p, &t);
	}
}

/* path (oom_memcg) is memcg, or ends in "/memcg". */
static int memcg_is(const char *path, const char *memcg)
{
	size_t pl = strlen(path), ml = strlen(memcg);

	return ml && pl >= ml && memcmp(path + pl - ml, memcg, ml) == 0 &&
	       (pl == ml || path[pl - ml - 1] == '/');
}

static void hand_on(struct reader *rd)
{
	if (rd->memcg && !memcg_is(rd->last.oom_memcg, rd->memcg))
		return;
	rd->last.tasks = rd->lastrep.n ? rd->lastrep.tasks : NULL;
	rd->last.ntasks = rd->lastrep.n;
	rd->cb(rd->arg, &rd->last);
	rd->kills++;
}

/* One record: counted when it is one, a kill merged or handed on. */
static void take(struct reader *rd, const char *rec, size_t len)
{
	struct rm_oom_kill cur;

	if (rm_kmsg_is_record(rec, len))
		rd->records++;
	if (!rm_kmsg_oom_parse(rec, len, &cur)) {
		take_report(&rd->pend, rec, len);
		return;
	}
	if (rd->have_last && rd->last.pid == cur.pid && cur.klog_s - rd->last.klog_s < 1.0) {
		merge(&rd->last, &cur);
		return;
	}
	if (rd->have_last)
		hand_on(rd);
	/* The report printed before this kill's lines is this kill's. */
	{
		struct pending t = rd->lastrep;
		rd->lastrep = rd->pend;
		rd->pend = t;
	}
	cur.mem_usage_kib = rd->lastrep.usage;
	cur.mem_limit_kib = rd->lastrep.limit;
	cur.dump_seen = rd->lastrep.seen;
	pending_clear(&rd->pend);
	rd->last = cur;
	rd->have_last = 1;
}

static void reader_init(struct reader *rd, const char *memcg,
			void (*cb)(void *arg, const struct rm_oom_kill *o), void *arg)
{
	memset(rd, 0, sizeof(*rd));
	rd->cb = cb;
	rd->arg = arg;
	rd->memcg = memcg;
	pending_clear(&rd->pend);
	pending_clear(&rd->lastrep);
}

/* Read fd to its end (EAGAIN on /dev/kmsg), every kill to the callback.
 * The number of kills handed on, or -1 with errno. */
static int read_fd(struct reader *rd, int fd, int is_dev)
{
	char buf[8192];
	int err = 0;
	size_t fill = 0;
	long total = 0;

	for (;;) {
		ssize_t n;
		/* Bounded: a device or pipe that never ends (/dev/zero) is
		 * not read forever. */
		if (!rd->records && total > RM_KMSG_PROBE) {
			err = EBADMSG;
			break;
		}
		if (total > RM_KMSG_MAX) {
			err = EFBIG;
			break;
		}
		n = read(fd, buf + fill, sizeof(buf) - 1 - fill);
		if (n < 0) {
			if (errno == EINTR || errno == EPIPE)
				continue;
			if (errno == EAGAIN)
				break;
			err = errno;
			break;
		}
		total += n;
		/* Records end at a newline that starts neither a continuation
		 * line (" KEY=VALUE") nor is inside one. */
		size_t have = fill + (size_t)n, start = 0;
		for (size_t i = 0; i < have; i++) {
			if (buf[i] != '\n')
				continue;
			if (!is_dev && i + 1 < have && buf[i + 1] == ' ')
				continue;
			take(rd, buf + start, i - start);
			start = i + 1;
		}
		if (n == 0) {
			/* The last record of a file without a final newline. */
			if (start < have)
				take(rd, buf + start, have - start);
			break;
		}
		if (start == 0 && have >= sizeof(buf) - 1) {
			fill = 0; /* a record over 8 KiB: not one of ours */
			continue;
		}
		memmove(buf, buf + start, have - start);
		fill = have - start;
	}
	if (!err && rd->have_last)
		hand_on(rd);
	free(rd->pend.tasks);
	free(rd->lastrep.tasks);
	if (err) {
		errno = err;
		return -1;
	}
	return rd->kills;
}

int rm_kmsg_read_ooms(const char *path, void (*cb)(void *arg, const struct rm_oom_kill *o),
		      void *arg)
{
	struct reader rd;
	int fd, n, e;

	reader_init(&rd, NULL, cb, arg);
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read_fd(&rd, fd, strncmp(path, "/dev/", 5) == 0);
	e = errno;
	close(fd);
	errno = e;
	return n;
}

int rm_kmsg_mark(struct rm_kmsg_mark *m, const char *path)
{
	const char *env = getenv("RM_KMSG");
	int e;

	memset(m, 0, sizeof(*m));
	if (!path)
		path = env && *env ? env : "/dev/kmsg";
	m->fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (m->fd < 0)
		return -1;
	/* /dev/kmsg: the next read is the first record logged from now on. */
	if (lseek(m->fd, 0, SEEK_END) < 0) {
		e = errno;
		close(m->fd);
		errno = e;
		return -1;
	}
	m->is_dev = strncmp(path, "/dev/", 5) == 0;
	m->ok = 1;
	return 0;
}

int rm_kmsg_oom_since(struct rm_kmsg_mark *m, const char *memcg,
		      void (*cb)(void *arg, const struct rm_oom_kill *o), void *arg)
{
	struct reader rd;

	if (!m->ok) {
		errno = EBADF;
		return -1;
	}
	reader_init(&rd, memcg, cb, arg);
	return read_fd(&rd, m->fd, m->is_dev);
}

void rm_kmsg_unmark(struct rm_kmsg_mark *m)
{
	if (m->ok)
		close(m->fd);
	m->ok = 0;
}
