/*
 * binfmt: see binfmt.h.  An entry file as the kernel prints it
 * (fs/binfmt_misc.c, entry_status):
 *     enabled
 *     interpreter /usr/libexec/qemu-binfmt/aarch64-binfmt-P
 *     flags: PF
 *     offset 0
 *     magic 7f454c46...
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "binfmt.h"
#include "procfs.h"

/* The line of buf that starts with key, its rest in *v (without the
 * newline); 0 when there is none. */
static int line_val(const char *buf, size_t len, const char *key, const char **v, size_t *vlen)
{
	size_t k = strlen(key);

	for (size_t i = 0; i < len;) {
		const char *nl = memchr(buf + i, '\n', len - i);
		size_t end = nl ? (size_t)(nl - buf) : len;
		if (end - i >= k && memcmp(buf + i, key, k) == 0) {
			*v = buf + i + k;
			*vlen = end - i - k;
			return 1;
		}
		i = end + 1;
	}
	return 0;
}

int rm_binfmt_parse(const char *buf, size_t len, struct rm_binfmt_entry *e)
{
	const char *v;
	size_t n;

	memset(e, 0, sizeof(*e));
	if (!buf || !line_val(buf, len, "interpreter ", &v, &n) || n == 0 ||
	    n >= sizeof(e->interp) || memchr(v, '\0', n))
		return -1;
	memcpy(e->interp, v, n);
	e->interp[n] = '\0';
	e->enabled = len >= 7 && memcmp(buf, "enabled", 7) == 0 && (len == 7 || buf[7] == '\n');
	if (line_val(buf, len, "flags:", &v, &n))
		e->preserve = memchr(v, 'P', n) != NULL;
	return 0;
}

/* Open path as a binfmt_misc directory; NULL with errno. */
static DIR *open_dir(int at, const char *path)
{
	DIR *dir;
	int fd, e;

	fd = openat(at, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	/* An empty directory is a mount point with nothing mounted on it:
	 * binfmt_misc always has "register". */
	if (faccessat(fd, "register", F_OK, 0) != 0) {
		e = errno;
		close(fd);
		errno = e;
		return NULL;
	}
	if (!(dir = fdopendir(fd))) {
		e = errno;
		close(fd);
		errno = e;
	}
	return dir;
}

/* An entry's name (not ".", "register", "status", nor one too long). */
static int entry_name(const char *s)
{
	return s[0] != '.' && strcmp(s, "register") != 0 && strcmp(s, "status") != 0 &&
	       strlen(s) < sizeof(((struct rm_binfmt *)0)->names[0]);
}

int rm_binfmt_read_at(int at, const char *path, struct rm_binfmt *t)
{
	char buf[4096];
	struct dirent *d;
	DIR *dir;

	t->n = t->nnames = 0;
	if (!(dir = open_dir(at, path)))
		return -1;
	while ((d = readdir(dir)) && t->nnames < RM_BINFMT_MAX) {
		if (!entry_name(d->d_name))
			continue;
		strcpy(t->names[t->nnames++], d->d_name);
		ssize_t len = rm_read_at(dirfd(dir), d->d_name, buf, sizeof(buf));
		if (len > 0 && rm_binfmt_parse(buf, (size_t)len, &t->e[t->n]) == 0)
			t->n++;
	}
	closedir(dir);
	return 0;
}

int rm_binfmt_refresh_at(int at, const char *path, struct rm_binfmt *t)
{
	struct dirent *d;
	size_t k = 0;
	int same = 1;
	DIR *dir = open_dir(at, path);

	if (!dir) {
		t->n = t->nnames = 0;
		return -1;
	}
	/* The same names in the same order (readdir of one directory lists
	 * them alike while nothing changes). */
	while ((d = readdir(dir)) && same) {
		if (!entry_name(d->d_name))
			continue;
		same = k < t->nnames && k < RM_BINFMT_MAX && strcmp(t->names[k], d->d_name) == 0;
		k++;
	}
	closedir(dir);
	if (same && k == t->nnames)
		return 0;
	return rm_binfmt_read_at(at, path, t) == 0 ? 1 : -1;
}

int rm_binfmt_read(struct rm_binfmt *t)
{
	int fd = rm_proc_dirfd();

	if (fd < 0) {
		t->n = 0;
		return -1;
	}
	return rm_binfmt_read_at(fd, "sys/fs/binfmt_misc", t);
}

const struct rm_binfmt_entry *rm_binfmt_find(const struct rm_binfmt *t, const char *argv0,
					     size_t len)
{
	for (size_t i = 0; t && i < t->n; i++)
		if (strlen(t->e[i].interp) == len && memcmp(t->e[i].interp, argv0, len) == 0)
			return &t->e[i];
	return NULL;
}
