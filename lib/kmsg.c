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
	o->mono_s = (double)usec / 1e6;
	p = find(msg, (size_t)(e - msg), "Killed process ");
	if (p && find(msg, (size_t)(p - msg), "ut of memory")) {
		long long pid;
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
		copy_name(o->name, sizeof(o->name), p, (size_t)(q - p));
		return 1;
	}
	if ((size_t)(e - msg) > 9 && memcmp(msg, "oom-kill:", 9) == 0) {
		const char *t = find(msg, (size_t)(e - msg), ",task=");
		const char *pp = find(msg, (size_t)(e - msg), ",pid=");
		long long pid;
		if (!t || !pp)
			return 0;
		pid = num_at(pp + 5, e, NULL);
		if (pid <= 0 || pid > RM_PID_LIMIT)
			return 0;
		t += 6;
		/* task=NAME,pid=: the name runs to ",pid=". */
		if (pp < t)
			return 0;
		o->pid = (int)pid;
		copy_name(o->name, sizeof(o->name), t, (size_t)(pp - t));
		return 1;
	}
	return 0;
}

int rm_kmsg_read_ooms(const char *path, void (*cb)(void *arg, const struct rm_oom_kill *o),
		      void *arg)
{
	char buf[8192];
	struct rm_oom_kill last = { 0 }, cur;
	int fd, kills = 0, have_last = 0, is_dev;
	size_t fill = 0;

	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -1;
	is_dev = strncmp(path, "/dev/", 5) == 0;
	for (;;) {
		ssize_t n = read(fd, buf + fill, sizeof(buf) - 1 - fill);
		if (n < 0) {
			if (errno == EINTR || errno == EPIPE)
				continue;
			if (errno == EAGAIN)
				break;
			int save = errno;
			close(fd);
			errno = save;
			return -1;
		}
		if (n == 0 && fill == 0)
			break;
		/* Records end at a newline that starts neither a continuation
		 * line (" KEY=VALUE") nor is inside one. */
		size_t have = fill + (size_t)n, start = 0;
		for (size_t i = 0; i < have; i++) {
			if (buf[i] != '\n')
				continue;
			if (!is_dev && i + 1 < have && buf[i + 1] == ' ')
				continue;
			if (rm_kmsg_oom_parse(buf + start, i - start, &cur)) {
				/* One kill prints both lines: merge them. */
				if (have_last && last.pid == cur.pid && cur.mono_s - last.mono_s < 1.0) {
					if (!last.name[0])
						memcpy(last.name, cur.name, sizeof(last.name));
				} else {
					if (have_last) {
						cb(arg, &last);
						kills++;
					}
					last = cur;
					have_last = 1;
				}
			}
			start = i + 1;
		}
		if (n == 0)
			break;
		if (start == 0 && have >= sizeof(buf) - 1) {
			fill = 0; /* a record over 8 KiB: not one of ours */
			continue;
		}
		memmove(buf, buf + start, have - start);
		fill = have - start;
	}
	close(fd);
	if (have_last) {
		cb(arg, &last);
		kills++;
	}
	return kills;
}
