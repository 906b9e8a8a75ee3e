/*
 * outfile: user-named outputs written once (temporary file + rename) or
 * appended (O_NOFOLLOW|O_APPEND), see outfile.h.
 */
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

static int fail(char *why, size_t n, int e, const char *text)
{
	if (why && n)
		snprintf(why, n, "%s", text ? text : strerror(e));
	errno = e;
	return -1;
}

/* ELOOP from O_NOFOLLOW is a symlink at the target: say so in words. */
static int fail_errno(char *why, size_t n, int e)
{
	return fail(why, n, e, e == ELOOP ? RM_OUT_SYMLINK_WHY : NULL);
}

/* A decimal descriptor number, whole string; -1 when it is not one. */
static int fd_number(const char *s)
{
	long v = 0;

	if (!*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		v = v * 10 + (*s - '0');
		if (v > INT_MAX)
			return -1;
	}
	return (int)v;
}

int rm_out_inherited_fd(const char *path)
{
	if (!strcmp(path, "-") || !strcmp(path, "/dev/stdout"))
		return STDOUT_FILENO;
	if (!strcmp(path, "/dev/stderr"))
		return STDERR_FILENO;
	if (!strncmp(path, "/dev/fd/", 8))
		return fd_number(path + 8);
	if (!strncmp(path, "/proc/self/fd/", 14))
		return fd_number(path + 14);
	return -1;
}

/* Set o up on an inherited descriptor, after checking that it is open. */
static int use_inherited(int fd, const char *path, struct rm_outfile *o, char *why, size_t n)
{
	if (fcntl(fd, F_GETFL) < 0)
		return fail_errno(why, n, errno);
	o->fd = fd;
	o->inherited = 1;
	o->path = strdup(path);
	o->tmp = NULL;
	if (!o->path)
		return fail_errno(why, n, ENOMEM);
	return 0;
}

static mode_t cur_umask(void)
{
	mode_t m = umask(022);

	umask(m);
	return m;
}

int rm_out_open(const char *path, struct rm_outfile *o, char *why, size_t n)
{
	struct stat st;
	const char *slash, *base;
	mode_t mode = 0644 & ~cur_umask();
	int fd, e;
	size_t dlen;

	memset(o, 0, sizeof(*o));
	o->fd = -1;
	if ((fd = rm_out_inherited_fd(path)) >= 0)
		return use_inherited(fd, path, o, why, n);
	if (!*path)
		return fail_errno(why, n, ENOENT);
	if (lstat(path, &st) == 0) {
		if (S_ISLNK(st.st_mode))
			return fail_errno(why, n, ELOOP);
		if (S_ISDIR(st.st_mode))
			return fail_errno(why, n, EISDIR);
		if (!S_ISREG(st.st_mode)) {
			/* A FIFO, /dev/null, a terminal: written in place. */
			fd = open(path, O_WRONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
			if (fd < 0)
				return fail_errno(why, n, errno);
			o->fd = fd;
			if (!(o->path = strdup(path))) {
				close(fd);
				o->fd = -1;
				return fail_errno(why, n, ENOMEM);
			}
			return 0;
		}
		/* Never more open than the file it replaces. */
		mode &= st.st_mode & 07777;
	} else if (errno != ENOENT) {
		return fail_errno(why, n, errno);
	}
	slash = strrchr(path, '/');
	base = slash ? slash + 1 : path;
	dlen = slash ? (size_t)(slash - path) + 1 : 0;
	if (!*base)
		return fail_errno(why, n, EISDIR);
	o->path = strdup(path);
	o->tmp = malloc(dlen + strlen(base) + 16);
	if (!o->path || !o->tmp) {
		e = ENOMEM;
		goto out;
	}
	/* ".NAME.XXXXXX" beside the target, so the rename stays within
	 * one filesystem and is atomic. */
	memcpy(o->tmp, path, dlen);
	sprintf(o->tmp + dlen, ".%s.XXXXXX", base);
	fd = mkostemp(o->tmp, O_CLOEXEC);
	if (fd < 0) {
		e = errno;
		goto out;
	}
	o->fd = fd;
	if (fchmod(fd, mode) < 0) {
		e = errno;
		goto out;
	}
	return 0;
out:
	rm_out_abort(o);
	return fail_errno(why, n, e);
}

int rm_out_commit(struct rm_outfile *o, char *why, size_t n)
{
	int e = 0;

	if (o->inherited) {
		free(o->path);
		o->path = NULL;
		o->fd = -1;
		return 0;
	}
	if (!o->tmp)
		return rm_out_close(o) < 0 ? fail_errno(why, n, errno) : 0;
	/* On disk before the name moves: a crash leaves the old file or
	 * the new one, never an empty one. */
	if (!o->no_sync && fsync(o->fd) < 0 && errno != EINVAL && errno != EROFS)
		e = errno;
	if (close(o->fd) < 0 && !e)
		e = errno;
	o->fd = -1;
	if (!e && rename(o->tmp, o->path) < 0)
		e = errno;
	if (e) {
		rm_out_abort(o);
		return fail_errno(why, n, e);
	}
	free(o->tmp);
	free(o->path);
	o->tmp = o->path = NULL;
	return 0;
}

void rm_out_abort(struct rm_outfile *o)
{
	int saved = errno;

	if (o->fd >= 0 && !o->inherited)
		close(o->fd);
	o->fd = -1;
	if (o->tmp)
		unlink(o->tmp);
	free(o->tmp);
	free(o->path);
	o->tmp = o->path = NULL;
	errno = saved;
}

/* /dev/null: a character device 1,3.  Writing to it loses nothing. */
static int is_devnull(const struct stat *st)
{
	return S_ISCHR(st->st_mode) && major(st->st_rdev) == 1 && minor(st->st_rdev) == 3;
}

int rm_out_open_append(const char *path, mode_t mode, struct rm_outfile *o,
		       char *why, size_t n)
{
	struct stat st;
	int fd;

	memset(o, 0, sizeof(*o));
	o->fd = -1;
	if ((fd = rm_out_inherited_fd(path)) >= 0)
		return use_inherited(fd, path, o, why, n);
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, mode);
	if (fd < 0)
		return fail_errno(why, n, errno);
	if (fstat(fd, &st) < 0) {
		int e = errno;
		close(fd);
		return fail_errno(why, n, e);
	}
	if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode) && !isatty(fd) && !is_devnull(&st)) {
		close(fd);
		return fail(why, n, EINVAL, "not a regular file, FIFO or terminal");
	}
	o->fd = fd;
	if (!(o->path = strdup(path))) {
		close(fd);
		o->fd = -1;
		return fail_errno(why, n, ENOMEM);
	}
	return 0;
}

int rm_out_close(struct rm_outfile *o)
{
	int rc = 0;

	if (o->fd >= 0 && !o->inherited)
		rc = close(o->fd);
	o->fd = -1;
	free(o->path);
	free(o->tmp);
	o->path = o->tmp = NULL;
	return rc;
}

int rm_out_stat(const char *path, struct stat *st)
{
	int fd = rm_out_inherited_fd(path);

	if (fd >= 0)
		return fstat(fd, st);
	return stat(path, st);
}

int rm_same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* The canonical directory of path followed by "/" and its last name. */
static char *canon(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir, *real, *out;
	size_t dlen = slash ? (size_t)(slash - path) : 0;

	if (slash && dlen == 0)
		dlen = 1; /* "/name" */
	dir = strndup(slash ? path : ".", slash ? dlen : 1);
	if (!dir)
		return NULL;
	real = realpath(dir, NULL);
	free(dir);
	if (!real)
		return NULL;
	out = malloc(strlen(real) + strlen(slash ? slash + 1 : path) + 2);
	if (out)
		sprintf(out, "%s/%s", real, slash ? slash + 1 : path);
	free(real);
	return out;
}

int rm_out_same_path(const char *a, const char *b)
{
	struct stat sa, sb;
	char *ca, *cb;
	int same;

	if (!strcmp(a, b))
		return 1;
	if (rm_out_inherited_fd(a) >= 0 && rm_out_inherited_fd(a) == rm_out_inherited_fd(b))
		return 1;
	if (rm_out_stat(a, &sa) == 0 && rm_out_stat(b, &sb) == 0)
		/* Two names of one terminal or pipe may both be written
		 * (stdout and stderr on a tty); one regular file may not. */
		return S_ISREG(sa.st_mode) && rm_same_file(&sa, &sb);
	ca = canon(a);
	cb = canon(b);
	same = ca && cb && !strcmp(ca, cb);
	free(ca);
	free(cb);
	return same;
}
