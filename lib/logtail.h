/*
 * logtail: what the build is doing now, from its logs.
 *
 * rm_log_newest() finds the most recently modified *.log in a directory;
 * rm_log_last_line() reads only the last 64 KiB of a file (bounded cost
 * however large the log grows, non-blocking so a FIFO cannot hang it) and
 * returns its last non-empty line, or the last one matching an ERE,
 * sanitized (see text.h).  rm_first_line() reads the first line of a
 * stage file the same bounded way.
 */
#ifndef RM_LOGTAIL_H
#define RM_LOGTAIL_H

#include <regex.h>
#include <stddef.h>

#define RM_LOG_TAIL (64 * 1024)

/*
 * Newest "*.log" regular file in dir.  Writes its path into path and its
 * name without ".log" into stage.  Returns 0, or -1 when there is none
 * or dir cannot be read.
 */
int rm_log_newest(const char *dir, char *path, size_t psize, char *stage, size_t ssize);

/*
 * Pure part: the last non-empty line of buf[0..len) (or the last one that
 * re matches, when re is not NULL), sanitized into out.  A line cut at the
 * start of buf still counts.  Returns 1 when a line was found, else 0.
 */
int rm_last_line(const char *buf, size_t len, const regex_t *re, char *out, size_t osize);

/* rm_last_line on the tail of a file; -1 when it cannot be read. */
int rm_log_last_line(const char *path, const regex_t *re, char *out, size_t osize);

/* The first line of a file, sanitized; 1 found, 0 empty, -1 unreadable. */
int rm_first_line(const char *path, char *out, size_t osize);

#endif
