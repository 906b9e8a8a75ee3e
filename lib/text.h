/*
 * text: making outside text safe to print, and an append-only output
 * buffer with the CSV and JSON field encoders.
 *
 * rm_sanitize() is applied to every string that came from outside
 * (process names, command lines, log lines): it drops ANSI escape
 * sequences (CSI, OSC, and two-byte ESC forms) and control characters
 * (a tab, newline, vertical tab or form feed becomes a space, so the
 * words on either side of a newline inside an argument stay apart; spaces
 * at the end are dropped), replaces invalid UTF-8 with U+FFFD, keeps only
 * what follows the last carriage return (what a terminal would show of a
 * progress bar), and bounds the length on a character boundary.
 */
#ifndef RM_TEXT_H
#define RM_TEXT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* Longest text field printed, in bytes (before CSV quoting). */
#define RM_TEXT_MAX 512

/*
 * Sanitize len bytes of in into out (size bytes, NUL-terminated).  Returns
 * the length written.  out may not overlap in.
 */
size_t rm_sanitize(const char *in, size_t len, char *out, size_t size);

/*
 * An output buffer.  It grows on the heap when needed but is reused from
 * row to row, so a stream allocates only while its rows get longer.  A
 * failed allocation sets oom and later appends are dropped; callers check
 * oom before writing.
 */
struct rm_buf {
	char *p;
	size_t len, cap;
	int oom;
};

void rm_buf_reset(struct rm_buf *b);
void rm_buf_free(struct rm_buf *b);
void rm_buf_add(struct rm_buf *b, const char *s, size_t n);
void rm_buf_adds(struct rm_buf *b, const char *s);
void rm_buf_addc(struct rm_buf *b, char c);
void rm_buf_addf(struct rm_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Append s as one RFC 4180 field: quoted when it holds , " CR or LF. */
void rm_buf_csv(struct rm_buf *b, const char *s);
/* Append s as a JSON string literal, quotes included. */
void rm_buf_json(struct rm_buf *b, const char *s);
/*
 * Append a number with prec decimals (0 to RM_NUM_PREC_MAX), without
 * "-0", every integer digit however large.  NaN and infinity append
 * nothing: an unknown value is an empty CSV field, never 0.
 */
#define RM_NUM_PREC_MAX 17
void rm_buf_num(struct rm_buf *b, double v, int prec);
/* The same, but NaN and infinity are JSON's null. */
void rm_buf_json_num(struct rm_buf *b, double v, int prec);
/* Append an unsigned 64-bit integer, every digit exact. */
void rm_buf_u64(struct rm_buf *b, uint64_t v);

/*
 * Write all of b to fd.  Returns 0, or -1 with errno set.  A row is one
 * write(2) call unless the kernel takes only part of it.
 */
int rm_buf_write(int fd, const struct rm_buf *b);

#endif
