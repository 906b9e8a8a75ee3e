/*
 * logtail: what the build is doing now, from its logs.
 *
 * rm_log_newest() finds the most recently modified *.log in a directory
 * (regular files owned by this user or the directory's owner, never
 * through a symlink);
 * rm_log_last_line() reads only the last 64 KiB of a file (bounded cost
 * however large the log grows, non-blocking so a FIFO cannot hang it) and
 * returns its last non-empty line, or the last one matching an ERE,
 * sanitized (see text.h).  rm_first_line() reads the first line of a
 * stage file the same bounded way.
 *
 * Content older than the run is never context: rm_logwatch_since() gives
 * the run's start; a log last written before it is not the stage's, and
 * of a log that already existed at the first look only what was written
 * after that look is read (its device, inode and size are noted then; a
 * log truncated since is read whole again).
 */
#ifndef RM_LOGTAIL_H
#define RM_LOGTAIL_H

#include <regex.h>
#include <stddef.h>
#include <sys/types.h>

#define RM_LOG_TAIL (64 * 1024)

/*
 * Newest "*.log" regular file in dir.  Writes its path into path and its
 * name without ".log" into stage.  Returns 0, or -1 when there is none
 * or dir cannot be read.
 *
 * A symlink is never followed (lstat), and only a log owned by this
 * user (the effective uid) or by the directory's owner is taken: a log
 * passed over for its owner has its name put in skipped (when not NULL;
 * "" when none), so the caller can say why.  *owner gets the chosen log's
 * owner, which rm_log_last_line() checks again on the file it opens.
 */
int rm_log_newest(const char *dir, char *path, size_t psize, char *stage, size_t ssize,
		  char *skipped, size_t sksize, uid_t *owner);

/* rm_log_newest() passing over logs last modified before *since (NULL:
 * none passed over). */
int rm_log_newest_since(const char *dir, const struct timespec *since, char *path, size_t psize,
			char *stage, size_t ssize, char *skipped, size_t sksize, uid_t *owner);

/*
 * rm_log_newest() every tick, without listing an unchanged directory:
 * inotify (IN_CREATE, IN_MODIFY, IN_MOVED_TO, IN_CLOSE_WRITE) says which
 * log was written last; a deleted or renamed newest log, an overflowed
 * queue, or no inotify at all (then every RM_LOG_RESCAN calls) means a
 * full scan.  Zero-initialise; rm_logwatch_close() frees it.
 */
#define RM_LOG_RESCAN 10
/* Logs of the first look whose size is noted; more are read whole. */
#define RM_LOG_BASES 64

struct rm_logbase {
	dev_t dev;
	ino_t ino;
	off_t size;
};

struct rm_logwatch {
	int ifd;              /* inotify descriptor, -1: none */
	int started, scan;    /* scan: a full scan is due */
	long calls;
	int have;
	char path[4096], stage[256], skipped[256];
	uid_t owner;
	int has_since;        /* rm_logwatch_since() was called */
	struct timespec since;
	int nbase;            /* the logs of the first look, with their sizes */
	struct rm_logbase base[RM_LOG_BASES];
	/* The log rm_logwatch_last_line() read last: its size and change
	 * time then, and where its last line began (what follows a newline
	 * is new), so that an unchanged log is not read and a grown one only
	 * from there. */
	int tail_ok;
	struct rm_logbase tail;
	struct timespec tail_mtime;
	off_t tail_line;
};

/* The run started at since (CLOCK_REALTIME, as file times are): call
 * before the first rm_logwatch_newest(). */
void rm_logwatch_since(struct rm_logwatch *w, struct timespec since);

int rm_logwatch_newest(struct rm_logwatch *w, const char *dir, char *path, size_t psize,
		       char *stage, size_t ssize, char *skipped, size_t sksize, uid_t *owner);
void rm_logwatch_close(struct rm_logwatch *w);

/*
 * Pure part: the last non-empty line of buf[0..len) (or the last one that
 * re matches, when re is not NULL), sanitized into out.  A line cut at the
 * start of buf still counts.  Returns 1 when a line was found, else 0.
 */
int rm_last_line(const char *buf, size_t len, const regex_t *re, char *out, size_t osize);

/*
 * rm_last_line on the tail of a file; -1 when it cannot be read, is a
 * symlink (O_NOFOLLOW), is not a regular file, or is not owned by owner.
 */
int rm_log_last_line(const char *path, uid_t owner, const regex_t *re, char *out, size_t osize);

/*
 * rm_log_last_line() of what was written to path during the run: for a
 * log noted at w's first look, only the bytes after the size it had then
 * (0 when nothing was written since: no line).  Called again on the same
 * log, only what was written since the last call (from the start of the
 * line that was last then): 0 when nothing new matched, and the line the
 * last call gave is still the last one (an unchanged log is not read).
 */
int rm_logwatch_last_line(struct rm_logwatch *w, const char *path, uid_t owner,
			  const regex_t *re, char *out, size_t osize);

/*
 * The first line of a regular file, sanitized, spaces and tabs around it
 * trimmed, never through a symlink;
 * 1 found, 0 empty, -1 unreadable (errno ELOOP for a symlink, EINVAL for
 * a file that is not a regular one).
 */
int rm_first_line(const char *path, char *out, size_t osize);

/* Remove the spaces and tabs around s, in place (a stage name, from the
 * stage file's first line or a log's name). */
void rm_trim_space(char *s);

#endif
