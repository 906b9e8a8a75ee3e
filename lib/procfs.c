/*
 * procfs: see procfs.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "procfs.h"

static const char *root_from_env(const char *var, const char *dflt, char *store, size_t size)
{
	const char *v = getenv(var);
	size_t n;

	if (!v || !*v)
		return dflt;
	n = strlen(v);
	while (n > 1 && v[n - 1] == '/')
		n--;
	if (n >= size)
		return dflt;
	memcpy(store, v, n);
	store[n] = '\0';
	return store;
}

const char *rm_proc_root(void)
{
	static char store[4096];
	static const char *root;

	if (!root)
		root = root_from_env("RM_PROC_ROOT", "/proc", store, sizeof(store));
	return root;
}

const char *rm_sys_root(void)
{
	static char store[4096];
	static const char *root;

	if (!root)
		root = root_from_env("RM_SYS_ROOT", "/sys", store, sizeof(store));
	return root;
}

int rm_proc_dirfd(void)
{
	static int fd = -2;

	if (fd == -2)
		fd = open(rm_proc_root(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd;
}

int rm_pathf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= size) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

ssize_t rm_read_fd(int fd, char *buf, size_t size)
{
	size_t got = 0;

	if (size == 0) {
		errno = EINVAL;
		return -1;
	}
	while (got < size - 1) {
		ssize_t n = read(fd, buf + got, size - 1 - got);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				break;
			buf[got] = '\0';
			return -1;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	buf[got] = '\0';
	return (ssize_t)got;
}

ssize_t rm_read_at(int dirfd, const char *path, char *buf, size_t size)
{
	int fd, saved;
	ssize_t n;

	do
		fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	while (fd < 0 && errno == EINTR);
	if (fd < 0) {
		if (size)
			buf[0] = '\0';
		return -1;
	}
	n = rm_read_fd(fd, buf, size);
	saved = errno;
	close(fd);
	errno = saved;
	return n;
}

ssize_t rm_read_kept(int *kept, const char *dir, const char *name, char *buf, size_t size, int whole)
{
	int once = 0;

	if (!kept)
		kept = &once;
	for (int tries = 0; tries < 2; tries++) {
		size_t got = 0;
		ssize_t n;
		if (!*kept) {
			char p[4300];
			int fd;
			if (dir && rm_pathf(p, sizeof(p), "%s/%s", dir, name) < 0)
				return -1;
			do
				fd = open(dir ? p : name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
			while (fd < 0 && errno == EINTR);
			if (fd < 0)
				return -1;
			*kept = fd + 1;
		}
		do {
			do
				n = pread(*kept - 1, buf + got, size - 1 - got, (off_t)got);
			while (n < 0 && errno == EINTR);
			if (n > 0)
				got += (size_t)n;
		} while (whole && n > 0 && got < size - 1);
		if (n >= 0) {
			buf[got] = '\0';
			if (once)
				close(once - 1);
			return (ssize_t)got;
		}
		close(*kept - 1);
		*kept = 0;
	}
	return -1;
}

char *rm_read_all_at(int dirfd, const char *path, size_t *len)
{
	size_t cap = 65536, got = 0;
	char *buf = NULL;
	int fd, saved;

	do
		fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return NULL;
	for (;;) {
		ssize_t n;
		if (got + 1 >= cap || !buf) {
			char *nb;
			if (buf)
				cap *= 2;
			if (cap > RM_READ_ALL_MAX + 1) {
				if (got >= RM_READ_ALL_MAX) {
					/* Bounded: a file past the cap (or
					 * /dev/zero) is an error, not a cut. */
					free(buf);
					close(fd);
					errno = EFBIG;
					return NULL;
				}
				cap = RM_READ_ALL_MAX + 1;
			}
			nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				close(fd);
				errno = ENOMEM;
				return NULL;
			}
			buf = nb;
		}
		n = read(fd, buf + got, cap - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != EAGAIN) {
			saved = errno;
			free(buf);
			close(fd);
			errno = saved;
			return NULL;
		}
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	buf[got] = '\0';
	if (len)
		*len = got;
	return buf;
}

ssize_t rm_read_file(const char *path, char *buf, size_t size)
{
	return rm_read_at(AT_FDCWD, path, buf, size);
}

int rm_parse_u64(const char *s, uint64_t *out)
{
	const char *p = s;
	uint64_t v = 0;

	while (*p == ' ' || *p == '\t')
		p++;
	if (*p < '0' || *p > '9') {
		errno = EINVAL;
		return -1;
	}
	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned d = (unsigned)(*p - '0');
		if (v > (UINT64_MAX - d) / 10) {
			errno = ERANGE;
			return -1;
		}
		v = v * 10 + d;
	}
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	if (*p) {
		errno = EINVAL;
		return -1;
	}
	*out = v;
	return 0;
}

int rm_parse_label_u64(const char *p, uint64_t *out)
{
	char *end;
	unsigned long long v;

	while (*p == ' ' || *p == '\t')
		p++;
	if (*p < '0' || *p > '9')
		return -1;
	errno = 0;
	v = strtoull(p, &end, 10);
	if (errno)
		return -1;
	*out = v;
	return 0;
}

int rm_read_u64(const char *path, uint64_t *out)
{
	char buf[64];

	if (rm_read_file(path, buf, sizeof(buf)) < 0)
		return -1;
	return rm_parse_u64(buf, out);
}
