/*
 * jsonread: a bounded, validating JSON reader for answers a root process
 * does not trust (a container engine's API), as pure functions over a
 * buffer: nothing is allocated, nothing is copied but what is asked for.
 *
 * A value is a span of the buffer (struct rm_jv).  rm_json_parse checks
 * that a whole buffer is one JSON value (RFC 8259: strings with every
 * escape, numbers, true/false/null, nesting at most RM_JSON_DEPTH deep)
 * and returns it; the walkers then step through an array's elements or
 * an object's members, and the decoders give a string (escapes decoded,
 * \u0000 refused, UTF-16 surrogate pairs joined) or an integer.  Every
 * walker re-checks what it steps over, so a span that was never parsed
 * is refused, never overrun.  Keys are compared decoded: "I\u0064" is
 * the key "Id".  Of duplicate keys, the first wins.
 */
#ifndef RM_JSONREAD_H
#define RM_JSONREAD_H

#include <stddef.h>
#include <sys/types.h>

#define RM_JSON_DEPTH 64

struct rm_jv {
	const char *s;   /* the value's first byte */
	size_t n;        /* its length, no whitespace around it */
};

/* Is s[0..n) one JSON value, with only whitespace around it?  1 with *v
 * set to that value, 0 when not. */
int rm_json_parse(const char *s, size_t n, struct rm_jv *v);

/* The value's kind: '{' object, '[' array, '"' string, '0' number,
 * 't' true, 'f' false, 'n' null; 0 for an empty span. */
char rm_json_kind(struct rm_jv v);

/* Step through an array: *it starts at 0.  1 with *el the next element,
 * 0 at the end or when the array is not valid JSON. */
int rm_json_next(struct rm_jv arr, size_t *it, struct rm_jv *el);

/* Step through an object: *it starts at 0.  1 with *key (a string
 * value, quotes included) and *val the next member, 0 at the end or
 * when the object is not valid JSON. */
int rm_json_member(struct rm_jv obj, size_t *it, struct rm_jv *key, struct rm_jv *val);

/* The member of obj whose decoded key is key (the first of equal ones):
 * 1 with *val, 0 when there is none or obj is no object. */
int rm_json_get(struct rm_jv obj, const char *key, struct rm_jv *val);

/* A string value decoded into out (cap bytes, NUL-terminated): the
 * length, or -1 when v is no valid string, holds \u0000 or a lone
 * surrogate, or does not fit. */
ssize_t rm_json_str(struct rm_jv v, char *out, size_t cap);

/* An integer value (no fraction, no exponent) in long long's range:
 * 0 with *out, -1 when not. */
int rm_json_int(struct rm_jv v, long long *out);

#endif
