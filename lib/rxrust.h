/*
 * rxrust: a Rust regex (the regex crate's syntax, as memwatch's --include
 * and --exclude take it) translated to a POSIX extended regular expression
 * for glibc's regcomp.  What has a POSIX equal is translated: a leading
 * (?i) (REG_ICASE), \d \D \w \W \s \S (also inside [...]), \b \B (glibc's
 * own), \A \z, (?:...) and named groups (plain groups), \t \n, escaped
 * punctuation.  The rest is refused with its name: lazy quantifiers (*?),
 * Unicode classes (\p{...}), other flags ((?x), (?s), (?m), (?i:...)),
 * look-around, back-references and escapes it does not know.
 */
#ifndef RM_RXRUST_H
#define RM_RXRUST_H

#include <regex.h>
#include <stddef.h>

/* rx in ERE to out[0..size) and the regcomp flags it needs (REG_ICASE or
 * 0) in *cflags; 0, or -1 with the construct refused in why. */
int rm_rx_translate(const char *rx, char *out, size_t size, int *cflags, char *why, size_t whysz);
/* rx translated and compiled (REG_EXTENDED | REG_NOSUB and its flags);
 * 0, or -1 with why (a refused construct or regcomp's message). */
int rm_rx_compile(regex_t *re, const char *rx, char *why, size_t whysz);

#endif
