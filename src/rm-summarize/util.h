/*
 * util.h: rm-summarize's own small helpers, which reach back to no other
 * file of rm-summarize: memory that succeeds or exits, outside text made
 * safe, the CSV number and header readers every input uses, and writing a
 * named output whole.
 */
#ifndef RM_SUMMARIZE_UTIL_H
#define RM_SUMMARIZE_UTIL_H

#include <stddef.h>

#include "csvread.h"
#include "rmtools.h"

extern const char prog[];

/* Memory, or exit 1 with "out of memory". */
void *xmalloc(size_t n);
void *xrealloc(void *p, size_t n);
/* Zeroed memory, its pages left untouched until written. */
void *xcalloc(size_t n, size_t size);
char *xstrndup(const char *s, size_t n);
/* s[0..n) made safe to print (rm_sanitize), in new memory. */
char *sanitized(const char *s, size_t n);
/* A CSV number: [-]digits[.digits]; NaN for anything else. */
double field_num(const struct rm_csv_field *f);
/* The index of the header field named name (spaces and a BOM ignored), or -1. */
int header_col(const struct rm_csv_field *f, int n, const char *name);
/* Write b to path whole (temporary file + rename); 0, or -1 with errno. */
int write_whole(const char *path, const struct rm_buf *b);
/* Why an output file could not be written, in words (ELOOP: a symlink). */
const char *write_why(int e);

#endif
