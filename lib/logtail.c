/*
 * logtail: see logtail.h.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "logtail.h"
#include "procfs.h"
#include "text.h"

int rm_log_newest(const char *dir, char *path, size_t psize, char *stage, size_t ssize,
		  char *skipped, size_t sksize, uid_t *owner)
{
	return rm_log_newest_since(dir, NULL, path, psize, stage, ssize, skipped, sksize, owner);
}

static int ts_before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

int rm_log_newest_since(const char *dir, const struct timespec *since, char *path, size_t psize,
			char *stage, size_t ssize, char *skipped, size_t sksize, uid_t *owner)
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
		/* Last written before the run: an earlier build's log. */
		if (since && ts_before(&st.st_mtim, since))
			continue;
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

/* name is a log we would take: a regular file, not a symlink, owned by
 * us or by the directory's owner.  0 yes, 1 another owner, -1 no. */
static int log_ok(const char *dir, const char *name, uid_t *owner)
{
	char p[4096];
	struct stat st, dst;

	if (rm_pathf(p, sizeof(p), "%s/%s", dir, name) < 0 ||
	    lstat(p, &st) < 0 || !S_ISREG(st.st_mode) || stat(dir, &dst) < 0)
		return -1;
	if (st.st_uid != geteuid() && st.st_uid != dst.st_uid)
		return 1;
	*owner = st.st_uid;
	return 0;
}

static int is_log(const char *name)
{
	size_t n = strlen(name);
	return n > 4 && strcmp(name + n - 4, ".log") == 0;
}

/* Read the queued events: the last log written wins; returns 1 when a
 * full scan is needed. */
static int logwatch_events(struct rm_logwatch *w, const char *dir)
{
	char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n;
	int scan = 0;

	while ((n = read(w->ifd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;
			p += sizeof(*ev) + ev->len;
			if (ev->mask & (IN_Q_OVERFLOW | IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF)) {
				scan = 1;
				continue;
			}
			if (!ev->len || !is_log(ev->name))
				continue;
			if (ev->mask & (IN_DELETE | IN_MOVED_FROM | IN_ATTRIB)) {
				/* The newest gone, or its owner changed: look again. */
				size_t k = strlen(w->stage);
				if (w->have && strncmp(ev->name, w->stage, k) == 0 &&
				    strcmp(ev->name + k, ".log") == 0)
					scan = 1;
				continue;
			}
			{
				uid_t o;
				size_t len = strlen(ev->name);
				int r = log_ok(dir, ev->name, &o);
				if (r == 1 && !w->skipped[0])
					snprintf(w->skipped, sizeof(w->skipped), "%s", ev->name);
				if (r != 0 || len - 4 >= sizeof(w->stage) ||
				    rm_pathf(w->path, sizeof(w->path), "%s/%s", dir, ev->name) < 0)
					continue;
				memcpy(w->stage, ev->name, len - 4);
				w->stage[len - 4] = '\0';
				w->owner = o;
				w->have = 1;
			}
		}
	}
	return scan;
}

void rm_logwatch_since(struct rm_logwatch *w, struct timespec since)
{
	w->has_since = 1;
	w->since = since;
}

/* Note the size of every log in dir now, the run's first look. */
static void logwatch_note_bases(struct rm_logwatch *w, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d)) != NULL && w->nbase < RM_LOG_BASES) {
		struct stat st;
		if (!is_log(de->d_name) ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
			continue;
		w->base[w->nbase++] = (struct rm_logbase){ st.st_dev, st.st_ino, st.st_size };
	}
	closedir(d);
}

int rm_logwatch_newest(struct rm_logwatch *w, const char *dir, char *path, size_t psize,
		       char *stage, size_t ssize, char *skipped, size_t sksize, uid_t *owner)
{
	if (!w->started) {
		w->started = 1;
		w->scan = 1;
		if (w->has_since)
			logwatch_note_bases(w, dir);
		w->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
		if (w->ifd >= 0 &&
		    inotify_add_watch(w->ifd, dir, IN_CREATE | IN_MODIFY | IN_MOVED_TO | IN_CLOSE_WRITE |
				      IN_DELETE | IN_MOVED_FROM | IN_ATTRIB | IN_DELETE_SELF |
				      IN_MOVE_SELF | IN_ONLYDIR) < 0) {
			close(w->ifd);
			w->ifd = -1;
		}
	}
	w->skipped[0] = '\0';
	if (w->ifd >= 0) {
		if (logwatch_events(w, dir))
			w->scan = 1;
	} else if (w->calls % RM_LOG_RESCAN == 0) {
		w->scan = 1;
	}
	w->calls++;
	if (w->scan) {
		w->scan = 0;
		w->have = rm_log_newest_since(dir, w->has_since ? &w->since : NULL, w->path,
					      sizeof(w->path), w->stage, sizeof(w->stage), w->skipped,
					      sizeof(w->skipped), &w->owner) == 0;
	}
	if (skipped && sksize)
		snprintf(skipped, sksize, "%s", w->skipped);
	if (!w->have || strlen(w->path) >= psize || strlen(w->stage) >= ssize)
		return -1;
	memcpy(path, w->path, strlen(w->path) + 1);
	memcpy(stage, w->stage, strlen(w->stage) + 1);
	*owner = w->owner;
	return 0;
}

void rm_logwatch_close(struct rm_logwatch *w)
{
	if (w->started && w->ifd >= 0)
		close(w->ifd);
	w->started = 0;
	w->ifd = -1;
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

/* rm_log_last_line() of path's bytes from the run's first look on: the
 * noted size of its log (dev and inode) in w, when w is not NULL. */
static int last_line_since(struct rm_logwatch *w, const char *path, uid_t owner,
			   const regex_t *re, char *out, size_t osize)
{
	static char buf[RM_LOG_TAIL + 1];
	struct stat st;
	ssize_t n;
	off_t from = 0;
	int fd = open_regular(path, &st);

	if (fd < 0)
		return -1;
	if (st.st_uid != owner) {
		close(fd);
		return -1;
	}
	for (int i = 0; w && i < w->nbase; i++) {
		if (w->base[i].dev != st.st_dev || w->base[i].ino != st.st_ino)
			continue;
		if (st.st_size < w->base[i].size)
			w->base[i].size = 0;  /* truncated: all of it is new */
		from = w->base[i].size;
		break;
	}
	if (w && w->tail_ok && w->tail.dev == st.st_dev && w->tail.ino == st.st_ino &&
	    st.st_size >= w->tail.size) {
		/* The log read last time: unchanged, nothing new (the caller
		 * keeps the line it had); grown, its lines from the one that
		 * was last then (it may have been cut short). */
		if (st.st_size == w->tail.size && st.st_mtim.tv_sec == w->tail_mtime.tv_sec &&
		    st.st_mtim.tv_nsec == w->tail_mtime.tv_nsec) {
			close(fd);
			return 0;
		}
		char c = 0;
		/* Still a newline where the last line began: appended to,
		 * not rewritten (else read as a new log). */
		if (st.st_size > w->tail.size && w->tail_line > from &&
		    pread(fd, &c, 1, w->tail_line - 1) == 1 && c == '\n')
			from = w->tail_line;
	}
	if (st.st_size - from > RM_LOG_TAIL)
		from = st.st_size - RM_LOG_TAIL;
	if (from > 0)
		lseek(fd, from, SEEK_SET);
	n = rm_read_fd(fd, buf, sizeof(buf));
	close(fd);
	if (n < 0)
		return -1;
	if (w) {
		const char *nl = memrchr(buf, '\n', (size_t)n);
		w->tail_ok = 1;
		w->tail = (struct rm_logbase){ st.st_dev, st.st_ino, from + n };
		w->tail_mtime = st.st_mtim;
		w->tail_line = nl ? from + (nl - buf) + 1 : from;
	}
	return rm_last_line(buf, (size_t)n, re, out, osize);
}

int rm_log_last_line(const char *path, uid_t owner, const regex_t *re, char *out, size_t osize)
{
	return last_line_since(NULL, path, owner, re, out, osize);
}

int rm_logwatch_last_line(struct rm_logwatch *w, const char *path, uid_t owner,
			  const regex_t *re, char *out, size_t osize)
{
	return last_line_since(w, path, owner, re, out, osize);
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
	rm_trim_space(out);
	return out[0] != '\0';
}

void rm_trim_space(char *s)
{
	size_t a = 0, n = strlen(s);

	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	while (a < n && (s[a] == ' ' || s[a] == '\t'))
		a++;
	memmove(s, s + a, n - a);
	s[n - a] = '\0';
}
