/*
 * logtail: see logtail.h.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "logtail.h"
#include "procfs.h"
#include "text.h"

int rm_log_newest(const char *dir, char *path, size_t psize, char *stage, size_t ssize,
		  char *skipped, size_t sksize, uid_t *owner)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	struct timespec best = { 0, 0 };
	struct stat dst;
	uid_t me = geteuid();
	int found = 0;
	int dfd;

	if (skipped && sksize)
		skipped[0] = '\0';
	if (!d)
		return -1;
	dfd = dirfd(d);
	if (fstat(dfd, &dst) < 0) {
		closedir(d);
		return -1;
	}
	while ((de = readdir(d)) != NULL) {
		size_t n = strlen(de->d_name);
		struct stat st;
		if (n <= 4 || strcmp(de->d_name + n - 4, ".log") != 0)
			continue;
		if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
			continue;
		if (st.st_uid != me && st.st_uid != dst.st_uid) {
			if (skipped && sksize && !skipped[0])
				snprintf(skipped, sksize, "%s", de->d_name);
			continue;
		}
		if (found && (st.st_mtim.tv_sec < best.tv_sec ||
			      (st.st_mtim.tv_sec == best.tv_sec && st.st_mtim.tv_nsec < best.tv_nsec)))
			continue;
		/* On a tie the name decides, so the choice is stable. */
		if (found && st.st_mtim.tv_sec == best.tv_sec &&
		    st.st_mtim.tv_nsec == best.tv_nsec && strcmp(de->d_name, stage) < 0)
			continue;
		if (rm_pathf(path, psize, "%s/%s", dir, de->d_name) < 0 || n - 4 >= ssize)
			continue;
		memcpy(stage, de->d_name, n - 4);
		stage[n - 4] = '\0';
		best = st.st_mtim;
		*owner = st.st_uid;
		found = 1;
	}
	closedir(d);
	return found ? 0 : -1;
}

static int line_blank(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
			return 0;
	return 1;
}

int rm_last_line(const char *buf, size_t len, const regex_t *re, char *out, size_t osize)
{
	size_t end = len;

	while (end > 0) {
		size_t start = end;
		while (start > 0 && buf[start - 1] != '\n')
			start--;
		if (!line_blank(buf + start, end - start)) {
			char clean[RM_TEXT_MAX + 1];
			/* Bounded by osize here, so a short out is cut on a
			 * character boundary, never inside one. */
			size_t n = rm_sanitize(buf + start, end - start, clean,
					       osize < sizeof(clean) ? osize : sizeof(clean));
			if (n > 0 && (!re || regexec(re, clean, 0, NULL, 0) == 0)) {
				memcpy(out, clean, n + 1);
				return 1;
			}
		}
		end = start > 0 ? start - 1 : 0;
	}
	return 0;
}

/* A regular file opened for reading, never through a symlink; -1. */
static int open_regular(const char *path, struct stat *st)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW);

	if (fd < 0)
		return -1;
	if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode)) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	return fd;
}

int rm_log_last_line(const char *path, uid_t owner, const regex_t *re, char *out, size_t osize)
{
	static char buf[RM_LOG_TAIL + 1];
	struct stat st;
	ssize_t n;
	int fd = open_regular(path, &st);

	if (fd < 0)
		return -1;
	if (st.st_uid != owner) {
		close(fd);
		return -1;
	}
	if (st.st_size > RM_LOG_TAIL)
		lseek(fd, st.st_size - RM_LOG_TAIL, SEEK_SET);
	n = rm_read_fd(fd, buf, sizeof(buf));
	close(fd);
	if (n < 0)
		return -1;
	return rm_last_line(buf, (size_t)n, re, out, osize);
}

int rm_first_line(const char *path, char *out, size_t osize)
{
	char buf[4096];
	struct stat st;
	ssize_t n;
	char *nl;
	int fd = open_regular(path, &st);

	if (fd < 0)
		return -1;
	n = rm_read_fd(fd, buf, sizeof(buf));
	close(fd);
	if (n < 0)
		return -1;
	nl = memchr(buf, '\n', (size_t)n);
	if (nl)
		n = nl - buf;
	rm_sanitize(buf, (size_t)n, out, osize);
	return out[0] != '\0';
}
