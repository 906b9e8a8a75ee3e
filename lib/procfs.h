/*
 * procfs: the proc and sys roots, and bounded reads of small kernel files.
 *
 * Every read of /proc or /sys in the toolkit goes through here, so that
 * RM_PROC_ROOT and RM_SYS_ROOT re-root all of them (tests point them at
 * fixture trees).  Reads retry EINTR, never block (O_NONBLOCK, so a FIFO
 * planted where a file was expected reads as empty), reserve one byte for
 * the terminating NUL and never read more than the buffer holds.
 */
#ifndef RM_PROCFS_H
#define RM_PROCFS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The roots, from the environment once, without a trailing slash. */
const char *rm_proc_root(void);
const char *rm_sys_root(void);

/* An O_DIRECTORY descriptor of the proc root, opened once; -1 on failure. */
int rm_proc_dirfd(void);

/*
 * Format a path into buf.  Returns 0, or -1 with errno ENAMETOOLONG when
 * it does not fit.
 */
int rm_pathf(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Read at most size-1 bytes of the file at path (relative to dirfd, or
 * absolute with AT_FDCWD) into buf and NUL-terminate it.  Returns the
 * number of bytes read, or -1 with errno set (ENOENT and ESRCH mean the
 * process or file went away).
 */
ssize_t rm_read_at(int dirfd, const char *path, char *buf, size_t size);
ssize_t rm_read_file(const char *path, char *buf, size_t size);

/*
 * A file read every tick (a cgroup's): through a descriptor kept in
 * *kept (the descriptor + 1; 0 before the first read opens dir/name, or
 * name alone when dir is NULL), by pread from 0: one system call where a
 * path costs an open, two reads and a close.  whole: read on to the end
 * (a file the kernel hands out a page at a time, cgroup.procs); else one
 * pread (a file the kernel writes in one go).  On an error the
 * descriptor is closed and the file opened once more (removed and made
 * again).  kept NULL: read the same way once, nothing kept.  Returns the
 * bytes read into buf (NUL-terminated, at most size-1), or -1 with errno.
 */
ssize_t rm_read_kept(int *kept, const char *dir, const char *name, char *buf, size_t size, int whole);

/*
 * Read the whole file at path (relative to dirfd) until EOF into a
 * growing buffer, for files whose length depends on the machine
 * (/proc/stat's intr line comes before btime; mountinfo on a container
 * host).  Returns a NUL-terminated malloc'd buffer (free it) and its
 * length in *len, or NULL with errno set: EFBIG past RM_READ_ALL_MAX
 * bytes (a bounded read: /dev/zero ends too), ENOMEM, or the open's.
 */
#define RM_READ_ALL_MAX (16u * 1024 * 1024)
char *rm_read_all_at(int dirfd, const char *path, size_t *len);

/* Read from an open descriptor until EOF or size-1 bytes; NUL-terminates. */
ssize_t rm_read_fd(int fd, char *buf, size_t size);

/*
 * Read a sysfs-style file holding one unsigned decimal number.  Returns 0
 * and sets *out, or -1 with errno (EINVAL when the text is not a number).
 */
int rm_read_u64(const char *path, uint64_t *out);

/* Parse one unsigned decimal number followed only by whitespace. */
int rm_parse_u64(const char *s, uint64_t *out);

/*
 * The number after a "Label:" in a /proc file: blanks, then digits; what
 * follows (" kB", the line's end) is ignored.  Unlike sscanf it never
 * skips a newline to take the next line's number, and takes no sign.
 * Returns 0, or -1 when no number is there (or it overflows).
 */
int rm_parse_label_u64(const char *p, uint64_t *out);

#endif
