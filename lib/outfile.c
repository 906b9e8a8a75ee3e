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
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
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
	o->dirfd = -1;
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

void rm_test_pause(const char *step, const char *name)
{
	const char *want = getenv("RM_TEST_PAUSE"), *fifo = getenv("RM_TEST_PAUSE_FIFO");
	size_t sl = strlen(step);
	char line[512];
	int fd, len;

	/* "STEP" pauses at every name, "STEP:NAME" at that name only. */
	if (!want || !fifo || strncmp(want, step, sl) ||
	    (want[sl] && (want[sl] != ':' || strcmp(want + sl + 1, name))))
		return;
	/* Say where we are (the test's read returns), then wait until the
	 * test has made its swap and opens the FIFO again to let us go. */
	len = snprintf(line, sizeof(line), "%s:%s\n", step, name);
	if ((fd = open(fifo, O_WRONLY | O_CLOEXEC)) >= 0) {
		if (len > 0 && write(fd, line, (size_t)len < sizeof(line) ? (size_t)len : sizeof(line) - 1) < 0)
			line[0] = '\0';
		close(fd);
	}
	if ((fd = open(fifo, O_RDONLY | O_CLOEXEC)) >= 0) {
		while (read(fd, line, sizeof(line)) > 0)
			;
		close(fd);
	}
}

int rm_out_dir_open(const char *path, const char **base)
{
	const char *slash = strrchr(path, '/');
	char *dir;
	int fd;

	*base = slash ? slash + 1 : path;
	if (!slash)
		return open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (!(dir = strndup(path, slash == path ? 1 : (size_t)(slash - path))))
		return -1;
	fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	free(dir);
	return fd;
}

int rm_out_openat(int dirfd, const char *name, int flags, mode_t mode, char *why, size_t n)
{
	int fd, fl, e;

	rm_test_pause("open", name);
	fd = openat(dirfd, name, flags | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, mode);
	if (fd < 0) {
		e = errno;
		if (e == ENXIO)
			return fail(why, n, e, "a FIFO with no reader");
		return fail_errno(why, n, e);
	}
	/* The open could not block; the writes may (a FIFO's reader). */
	if ((fl = fcntl(fd, F_GETFL)) < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
		e = errno;
		close(fd);
		return fail_errno(why, n, e);
	}
	return fd;
}

int rm_out_open_stream(const char *path, char *why, size_t n)
{
	const char *base;
	struct stat st;
	int dirfd, fd = rm_out_inherited_fd(path), e;

	if (fd >= 0)
		return fd;
	if (!*path)
		return fail_errno(why, n, ENOENT);
	if ((dirfd = rm_out_dir_open(path, &base)) < 0)
		return fail_errno(why, n, errno);
	fd = rm_out_openat(dirfd, base, O_WRONLY | O_CREAT, 0644, why, n);
	e = errno;
	close(dirfd);
	if (fd < 0) {
		errno = e;
		return -1;
	}
	if (fstat(fd, &st) < 0 || (S_ISREG(st.st_mode) && ftruncate(fd, 0) < 0)) {
		e = errno;
		close(fd);
		return fail_errno(why, n, e);
	}
	if (!S_ISREG(st.st_mode) && !S_ISCHR(st.st_mode)) {
		close(fd);
		return fail(why, n, EINVAL, S_ISFIFO(st.st_mode) ? "a FIFO, not a regular file" :
				 "not a regular file");
	}
	return fd;
}

/* A temporary name beside name in dirfd, created O_EXCL (never through
 * what is there); the name in tmp (at least strlen(name) + 16 bytes). */
static int tmp_at(int dirfd, const char *name, char *tmp, size_t tn)
{
	static const char set[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	unsigned char r[6];
	int fd = -1;

	for (int tries = 0; tries < 100; tries++) {
		struct timespec ts;

		/* One system call (no descriptor), and a name from the clock
		 * where the kernel has no randomness to give yet. */
		if (getrandom(r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r)) {
			clock_gettime(CLOCK_MONOTONIC, &ts);
			for (int i = 0; i < 6; i++)
				r[i] = (unsigned char)((ts.tv_nsec >> (i * 5)) ^ (getpid() >> i) ^ tries);
		}
		snprintf(tmp, tn, ".%s.%c%c%c%c%c%c", name, set[r[0] % 62], set[r[1] % 62],
			 set[r[2] % 62], set[r[3] % 62], set[r[4] % 62], set[r[5] % 62]);
		fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	return fd;
}

int rm_out_open(const char *path, struct rm_outfile *o, char *why, size_t n)
{
	struct stat st;
	const char *base;
	mode_t mode = 0644 & ~cur_umask();
	int fd, e;

	memset(o, 0, sizeof(*o));
	o->fd = o->dirfd = -1;
	if ((fd = rm_out_inherited_fd(path)) >= 0)
		return use_inherited(fd, path, o, why, n);
	if (!*path)
		return fail_errno(why, n, ENOENT);
	if ((o->dirfd = rm_out_dir_open(path, &base)) < 0)
		return fail_errno(why, n, errno);
	if (!*base) {
		e = EISDIR;
		goto out;
	}
	if (fstatat(o->dirfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (S_ISLNK(st.st_mode)) {
			e = ELOOP;
			goto out;
		}
		if (S_ISDIR(st.st_mode)) {
			e = EISDIR;
			goto out;
		}
		if (!S_ISREG(st.st_mode)) {
			/* A FIFO, /dev/null, a terminal: written in place. */
			rm_test_pause("out-inplace", base);
			fd = rm_out_openat(o->dirfd, base, O_WRONLY, 0, why, n);
			if (fd < 0) {
				rm_out_abort(o);
				return -1;
			}
			o->fd = fd;
			if (!(o->path = strdup(path))) {
				e = ENOMEM;
				goto out;
			}
			return 0;
		}
		/* Never more open than the file it replaces. */
		mode &= st.st_mode & 07777;
	} else if (errno != ENOENT) {
		e = errno;
		goto out;
	}
	o->path = strdup(path);
	o->base = o->path ? o->path + (base - path) : NULL;
	o->tmp = malloc(strlen(base) + 16);
	if (!o->path || !o->tmp) {
		e = ENOMEM;
		goto out;
	}
	/* ".NAME.XXXXXX" beside the target, so the rename stays within
	 * one filesystem and is atomic. */
	rm_test_pause("out-tmp", base);
	fd = tmp_at(o->dirfd, base, o->tmp, strlen(base) + 16);
	if (fd < 0) {
		e = errno;
		free(o->tmp);
		o->tmp = NULL;
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
	rm_test_pause("out-rename", o->base);
	if (!e && renameat(o->dirfd, o->tmp, o->dirfd, o->base) < 0)
		e = errno;
	if (e) {
		rm_out_abort(o);
		return fail_errno(why, n, e);
	}
	free(o->tmp);
	o->tmp = NULL;
	return rm_out_close(o) < 0 ? fail_errno(why, n, errno) : 0;
}

void rm_out_abort(struct rm_outfile *o)
{
	int saved = errno;

	if (o->fd >= 0 && !o->inherited)
		close(o->fd);
	o->fd = -1;
	if (o->tmp && o->dirfd >= 0)
		unlinkat(o->dirfd, o->tmp, 0);
	if (o->dirfd >= 0)
		close(o->dirfd);
	o->dirfd = -1;
	free(o->tmp);
	free(o->path);
	o->tmp = o->path = NULL;
	o->base = NULL;
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
	const char *base;
	int fd, e;

	memset(o, 0, sizeof(*o));
	o->fd = o->dirfd = -1;
	if ((fd = rm_out_inherited_fd(path)) >= 0)
		return use_inherited(fd, path, o, why, n);
	if ((o->dirfd = rm_out_dir_open(path, &base)) < 0)
		return fail_errno(why, n, errno);
	rm_test_pause("out-append", base);
	fd = rm_out_openat(o->dirfd, base, O_WRONLY | O_APPEND | O_CREAT, mode, why, n);
	if (fd < 0) {
		e = errno;
		rm_out_abort(o);
		errno = e;
		return -1;
	}
	o->fd = fd;
	if (fstat(fd, &st) < 0) {
		e = errno;
		rm_out_abort(o);
		return fail_errno(why, n, e);
	}
	if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode) && !isatty(fd) && !is_devnull(&st)) {
		rm_out_abort(o);
		return fail(why, n, EINVAL, "not a regular file, FIFO or terminal");
	}
	if (!(o->path = strdup(path))) {
		rm_out_abort(o);
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
	if (o->dirfd >= 0)
		close(o->dirfd);
	o->dirfd = -1;
	free(o->path);
	free(o->tmp);
	o->path = o->tmp = NULL;
	o->base = NULL;
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

int rm_out_create_at(int dirfd, const char *name, int flags, mode_t mode, char *why, size_t n)
{
	int fd, e;

	rm_test_pause("claim", name);
	fd = openat(dirfd, name, flags | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0600);
	if (fd < 0)
		return fail_errno(why, n, errno);
	/* On the descriptor: a name swapped meanwhile is never chmodded. */
	if (fchmod(fd, mode & 07777) < 0) {
		e = errno;
		close(fd);
		unlinkat(dirfd, name, 0);
		return fail_errno(why, n, e);
	}
	return fd;
}

int rm_out_symlink_at(int dirfd, const char *target, const char *name, char *why, size_t n)
{
	struct stat st;
	char *tmp;
	size_t tn = strlen(name) + 16;
	int fd, e = 0;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISLNK(st.st_mode))
		return fail(why, n, EEXIST, "not a symlink: left as it is");
	if (!(tmp = malloc(tn)))
		return fail_errno(why, n, ENOMEM);
	/* A random name, made and removed again, then the link made there:
	 * symlinkat never follows what is at the name, and fails on it. */
	for (int tries = 0; tries < 100; tries++) {
		if ((fd = tmp_at(dirfd, name, tmp, tn)) < 0) {
			e = errno;
			break;
		}
		close(fd);
		unlinkat(dirfd, tmp, 0);
		rm_test_pause("symlink", name);
		if (symlinkat(target, dirfd, tmp) == 0) {
			e = 0;
			break;
		}
		e = errno;
		if (e != EEXIST)
			break;
	}
	if (!e) {
		rm_test_pause("symlink-rename", name);
		if (renameat(dirfd, tmp, dirfd, name) < 0) {
			e = errno;
			unlinkat(dirfd, tmp, 0);
		}
	}
	free(tmp);
	return e ? fail_errno(why, n, e) : 0;
}
