/*
 * outfile: the one rule for every output a user names.
 *
 * Written once (a summary, an SVG, a CSV of peaks, JSON): the bytes go to
 * a temporary file in the same directory, which rm_out_commit() renames
 * into place, so an existing file is never truncated before the new one
 * is complete (a full disk leaves the old file whole) and a symlink
 * planted at the target is replaced, never written through.  A symlink
 * found there at open time is refused as "a symbolic link, not followed".
 *
 * Streamed or appended (a CSV that grows, a log): O_NOFOLLOW|O_APPEND|
 * O_CREAT, and only a regular file, a FIFO, a terminal or /dev/null is
 * accepted.
 *
 * "-", "/dev/stdout", "/dev/stderr", "/dev/fd/N" and "/proc/self/fd/N"
 * name a descriptor the program inherited: it is written as it is, never
 * renamed onto, never closed.  An existing target that is not a regular
 * file (a FIFO, /dev/null, a terminal) is opened and written in place,
 * never renamed onto either.
 *
 * Every name is reached through a descriptor of its directory (openat,
 * renameat), opened once: a directory renamed or a symlink planted in the
 * path meanwhile changes nothing that was opened.  Opens are O_NONBLOCK
 * and then blocking again, so a FIFO with no reader is refused ("a FIFO
 * with no reader") instead of hanging the open for ever.
 *
 * Failures fill why (n bytes) with the reason in words ("a symbolic link,
 * not followed", or strerror) and return -1 with errno set; callers print
 * "rm-x: cannot write 'PATH': WHY".  lib never prints.
 */
#ifndef RM_OUTFILE_H
#define RM_OUTFILE_H

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

/* The words every command uses for a refused symlink. */
#define RM_OUT_SYMLINK_WHY "a symbolic link, not followed"

struct rm_outfile {
	int fd;           /* write the output here */
	int inherited;    /* fd is stdout/stderr/fd N: not closed, not renamed */
	char *path;       /* the path as named (a copy) */
	char *tmp;        /* the temporary file's name in dirfd, NULL when written in place */
	const char *base; /* the target's last name, in path */
	int dirfd;        /* the target's directory (O_PATH), -1 when inherited */
	int no_sync;      /* set before the commit: a file rewritten every tick
			   * (rm-tree --live), where a crash may leave it empty */
};

/*
 * Open path for a write-once output.  The new file gets mode 0644 less the
 * umask, and never more than an existing target's mode (fchmod o->fd
 * before the commit for another mode).  Returns 0, or -1 with why filled.
 */
int rm_out_open(const char *path, struct rm_outfile *o, char *why, size_t n);

/*
 * Finish a write-once output: flush it to disk and rename the temporary
 * file into place.  The descriptor is closed (unless inherited) whether it
 * succeeds or not; on failure the temporary file is removed and an
 * existing target is left as it was.  Returns 0, or -1 with why filled.
 */
int rm_out_commit(struct rm_outfile *o, char *why, size_t n);

/* Give up: close and remove the temporary file, the target untouched. */
void rm_out_abort(struct rm_outfile *o);

/*
 * Open path for appending: O_NOFOLLOW|O_APPEND|O_CREAT with mode (less the
 * umask), accepting a regular file, a FIFO, a terminal or /dev/null.
 * rm_out_close() ends it.  Returns 0, or -1 with why filled.
 */
int rm_out_open_append(const char *path, mode_t mode, struct rm_outfile *o,
		       char *why, size_t n);

/* Close an appended output (not an inherited descriptor).  0, or -1. */
int rm_out_close(struct rm_outfile *o);

/*
 * The descriptor path names when it is one the program inherited ("-" is
 * stdout), or -1 when path is an ordinary name.
 */
int rm_out_inherited_fd(const char *path);

/*
 * What path would write to, followed as a reader would follow it (an
 * inherited name is the descriptor's file).  Returns 0, or -1 when there
 * is no such file yet.
 */
int rm_out_stat(const char *path, struct stat *st);

/* 1 when a and b are the same file (device and inode), else 0. */
int rm_same_file(const struct stat *a, const struct stat *b);

/*
 * 1 when the outputs a and b would be the same file: one inherited
 * descriptor, one regular file (same inode) when both exist, else the
 * same directory and name.  0 otherwise (stdout and stderr on one
 * terminal are two outputs).
 */
int rm_out_same_path(const char *a, const char *b);

/*
 * The directory of path opened O_PATH|O_DIRECTORY (following path as the
 * user named it), its last name in *base.  A descriptor, or -1 (errno).
 */
int rm_out_dir_open(const char *path, const char **base);

/*
 * openat(dirfd, name) with O_NOFOLLOW|O_NONBLOCK|O_NOCTTY|O_CLOEXEC added,
 * O_NONBLOCK cleared again once open.  A descriptor, or -1 with why filled
 * (a FIFO with no reader, a symbolic link, strerror).
 */
int rm_out_openat(int dirfd, const char *name, int flags, mode_t mode, char *why, size_t n);

/*
 * Create name in dirfd, never over anything that is there (a dangling
 * symlink too): O_CREAT|O_EXCL|O_NOFOLLOW with flags, then fchmod(mode) on
 * the descriptor.  A descriptor, or -1 with why filled (EEXIST: taken).
 */
int rm_out_create_at(int dirfd, const char *name, int flags, mode_t mode, char *why, size_t n);

/*
 * Make name in dirfd a symlink to target: a new link at a random name,
 * renamed over name.  A name holding anything but a symlink is left as it
 * is (-1, EEXIST, "not a symlink: left as it is").  0, or -1 with why.
 */
int rm_out_symlink_at(int dirfd, const char *target, const char *name, char *why, size_t n);

/*
 * Open path for a stream written from the start, in place (rm-tree's exit
 * log and timeline, rm-out --open): an inherited descriptor as it is;
 * else the name through its directory's descriptor (rm_out_openat:
 * O_CREAT, mode 0644 less the umask), only a regular file, emptied once
 * it is open, or a device such as /dev/null.  A symlink, a FIFO (with a
 * reader or none) or a directory at the name is refused.  A descriptor
 * (inherited ones are not to be closed: rm_out_inherited_fd says), or -1
 * with why filled.
 */
int rm_out_open_stream(const char *path, char *why, size_t n);

/*
 * Tests only: when the environment's RM_TEST_PAUSE is step (or
 * "step:name", name the last name about to be touched), write
 * "step:name\n" to the FIFO RM_TEST_PAUSE_FIFO, then wait until the test
 * opens it for writing again and closes it, so that a test can swap the
 * name at exactly that step.  The steps are the calls that touch a name in
 * a directory another user may write: open, claim, symlink,
 * symlink-rename, out-tmp, out-rename, out-inplace, out-append.
 */
void rm_test_pause(const char *step, const char *name);

#endif
