/*
 * jsonread: see jsonread.h.  One recursive skipper (its depth bounded by
 * RM_JSON_DEPTH, so the stack is too) validates every value it steps
 * over; the walkers and decoders are built on it.
 */
#include <limits.h>
#include <string.h>

#include "jsonread.h"

#define BAD ((size_t)-1)

static int ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static size_t skip_ws(const char *s, size_t n, size_t i)
{
	while (i < n && ws(s[i]))
		i++;
	return i;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Four hex digits at s[i..i+4): the code unit, or -1. */
static long hex4(const char *s, size_t n, size_t i)
{
	long v = 0;

	if (n < 4 || i > n - 4)
		return -1;
	for (size_t k = 0; k < 4; k++) {
		int h = hexval(s[i + k]);
		if (h < 0)
			return -1;
		v = v * 16 + h;
	}
	return v;
}

/* A string starting at s[i] == '"': the index after its closing quote,
 * or BAD.  Control characters must be escaped; escapes are checked. */
static size_t skip_string(const char *s, size_t n, size_t i)
{
	for (i++; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"')
			return i + 1;
		if (c < 0x20)
			return BAD;
		if (c != '\\')
			continue;
		if (++i >= n)
			return BAD;
		switch (s[i]) {
		case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
			break;
		case 'u':
			if (hex4(s, n, i + 1) < 0)
				return BAD;
			i += 4;
			break;
		default:
			return BAD;
		}
	}
	return BAD;
}

static size_t skip_number(const char *s, size_t n, size_t i)
{
	size_t d;

	if (i < n && s[i] == '-')
		i++;
	if (i < n && s[i] == '0')
		i++;
	else if (i < n && s[i] >= '1' && s[i] <= '9')
		while (i < n && s[i] >= '0' && s[i] <= '9')
			i++;
	else
		return BAD;
	if (i < n && s[i] == '.') {
		for (d = ++i; i < n && s[i] >= '0' && s[i] <= '9'; i++)
			;
		if (i == d)
			return BAD;
	}
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < n && (s[i] == '+' || s[i] == '-'))
			i++;
		for (d = i; i < n && s[i] >= '0' && s[i] <= '9'; i++)
			;
		if (i == d)
			return BAD;
	}
	return i;
}

static size_t skip_value(const char *s, size_t n, size_t i, int depth);

/* An array or object starting at s[i]: the index after its close. */
static size_t skip_container(const char *s, size_t n, size_t i, int depth)
{
	char close = s[i] == '{' ? '}' : ']';
	int obj = s[i] == '{';

	if (depth >= RM_JSON_DEPTH)
		return BAD;
	i = skip_ws(s, n, i + 1);
	if (i < n && s[i] == close)
		return i + 1;
	for (;;) {
		if (obj) {
			if (i >= n || s[i] != '"' || (i = skip_string(s, n, i)) == BAD)
				return BAD;
			i = skip_ws(s, n, i);
			if (i >= n || s[i] != ':')
				return BAD;
			i = skip_ws(s, n, i + 1);
		}
		if ((i = skip_value(s, n, i, depth + 1)) == BAD)
			return BAD;
		i = skip_ws(s, n, i);
		if (i < n && s[i] == close)
			return i + 1;
		if (i >= n || s[i] != ',')
			return BAD;
		i = skip_ws(s, n, i + 1);
	}
}

static size_t skip_word(const char *s, size_t n, size_t i, const char *w)
{
	size_t l = strlen(w);

	return n - i >= l && memcmp(s + i, w, l) == 0 ? i + l : BAD;
}

/* The value starting at s[i] (no whitespace first): the index after it. */
static size_t skip_value(const char *s, size_t n, size_t i, int depth)
{
	if (i >= n)
		return BAD;
	switch (s[i]) {
	case '{': case '[':
		return skip_container(s, n, i, depth);
	case '"':
		return skip_string(s, n, i);
	case 't':
		return skip_word(s, n, i, "true");
	case 'f':
		return skip_word(s, n, i, "false");
	case 'n':
		return skip_word(s, n, i, "null");
	default:
		return skip_number(s, n, i);
	}
}

int rm_json_parse(const char *s, size_t n, struct rm_jv *v)
{
	size_t b = skip_ws(s, n, 0), e;

	if ((e = skip_value(s, n, b, 0)) == BAD || skip_ws(s, n, e) != n)
		return 0;
	v->s = s + b;
	v->n = e - b;
	return 1;
}

char rm_json_kind(struct rm_jv v)
{
	if (!v.s || !v.n)
		return 0;
	switch (v.s[0]) {
	case '{': case '[': case '"': case 't': case 'f': case 'n':
		return v.s[0];
	default:
		return '0';
	}
}

/* The next item of a container: *it is 0 before the first (then the
 * opening bracket is skipped), else the index after the previous item. */
static int next_item(struct rm_jv c, char open, size_t *it, struct rm_jv *key, struct rm_jv *val)
{
	const char *s = c.s;
	size_t n = c.n, i = *it, e;

	if (!s || n < 2 || s[0] != open)
		return 0;
	if (i == 0)
		i = 1;
	else if (i >= n || (i = skip_ws(s, n, i)) >= n || s[i] != ',')
		return 0;
	else
		i++;
	i = skip_ws(s, n, i);
	if (i >= n || s[i] == (open == '{' ? '}' : ']'))
		return 0;
	if (open == '{') {
		if (s[i] != '"' || (e = skip_string(s, n, i)) == BAD)
			return 0;
		key->s = s + i;
		key->n = e - i;
		i = skip_ws(s, n, e);
		if (i >= n || s[i] != ':')
			return 0;
		i = skip_ws(s, n, i + 1);
	}
	/* Depth 1: an element is one level below its container. */
	if ((e = skip_value(s, n, i, 1)) == BAD)
		return 0;
	val->s = s + i;
	val->n = e - i;
	*it = e;
	return 1;
}

int rm_json_next(struct rm_jv arr, size_t *it, struct rm_jv *el)
{
	return next_item(arr, '[', it, NULL, el);
}

int rm_json_member(struct rm_jv obj, size_t *it, struct rm_jv *key, struct rm_jv *val)
{
	return next_item(obj, '{', it, key, val);
}

int rm_json_get(struct rm_jv obj, const char *key, struct rm_jv *val)
{
	size_t it = 0, kl = strlen(key);
	struct rm_jv k, v;
	char buf[256];

	if (kl >= sizeof(buf))
		return 0;
	while (rm_json_member(obj, &it, &k, &v)) {
		ssize_t l = rm_json_str(k, buf, sizeof(buf));
		if (l == (ssize_t)kl && memcmp(buf, key, kl) == 0) {
			*val = v;
			return 1;
		}
	}
	return 0;
}

/* Append code point cp as UTF-8 at out[*o], within cap (a byte kept for
 * the NUL).  0, or -1 when it does not fit. */
static int put_utf8(char *out, size_t cap, size_t *o, unsigned long cp)
{
	unsigned char b[4];
	size_t l;

	if (cp < 0x80) {
		b[0] = (unsigned char)cp;
		l = 1;
	} else if (cp < 0x800) {
		b[0] = (unsigned char)(0xc0 | cp >> 6);
		b[1] = (unsigned char)(0x80 | (cp & 0x3f));
		l = 2;
	} else if (cp < 0x10000) {
		b[0] = (unsigned char)(0xe0 | cp >> 12);
		b[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
		b[2] = (unsigned char)(0x80 | (cp & 0x3f));
		l = 3;
	} else {
		b[0] = (unsigned char)(0xf0 | cp >> 18);
		b[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3f));
		b[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
		b[3] = (unsigned char)(0x80 | (cp & 0x3f));
		l = 4;
	}
	if (*o + l >= cap)
		return -1;
	memcpy(out + *o, b, l);
	*o += l;
	return 0;
}

ssize_t rm_json_str(struct rm_jv v, char *out, size_t cap)
{
	const char *s = v.s;
	size_t n = v.n, o = 0;

	if (!s || n < 2 || s[0] != '"' || skip_string(s, n, 0) != n || cap == 0)
		return -1;
	for (size_t i = 1; i < n - 1; i++) {
		unsigned long cp;
		if (s[i] != '\\') {
			if (o + 1 >= cap)
				return -1;
			out[o++] = s[i];
			continue;
		}
		switch (s[++i]) {
		case 'b': cp = '\b'; break;
		case 'f': cp = '\f'; break;
		case 'n': cp = '\n'; break;
		case 'r': cp = '\r'; break;
		case 't': cp = '\t'; break;
		case 'u':
			cp = (unsigned long)hex4(s, n, i + 1);
			i += 4;
			if (cp >= 0xdc00 && cp <= 0xdfff)
				return -1;  /* a lone low surrogate */
			if (cp >= 0xd800 && cp <= 0xdbff) {
				long lo = i + 2 < n && s[i + 1] == '\\' && s[i + 2] == 'u' ? hex4(s, n, i + 3) : -1;
				if (lo < 0xdc00 || lo > 0xdfff)
					return -1;
				cp = 0x10000 + ((cp - 0xd800) << 10) + ((unsigned long)lo - 0xdc00);
				i += 6;
			}
			if (cp == 0)
				return -1;  /* a NUL would cut the string short */
			break;
		default: cp = (unsigned char)s[i]; break;  /* " \ / */
		}
		if (put_utf8(out, cap, &o, cp) < 0)
			return -1;
	}
	out[o] = '\0';
	return (ssize_t)o;
}

int rm_json_int(struct rm_jv v, long long *out)
{
	const char *s = v.s;
	size_t n = v.n, i = 0;
	unsigned long long m = 0, lim;
	int neg;

	if (!s || !n || skip_number(s, n, 0) != n)
		return -1;
	neg = s[0] == '-';
	i = (size_t)neg;
	lim = neg ? (unsigned long long)LLONG_MAX + 1 : (unsigned long long)LLONG_MAX;
	for (; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;  /* a fraction or an exponent */
		if (m > (lim - (unsigned long long)(s[i] - '0')) / 10)
			return -1;
		m = m * 10 + (unsigned long long)(s[i] - '0');
	}
	*out = neg ? (m == (unsigned long long)LLONG_MAX + 1 ? LLONG_MIN : -(long long)m) : (long long)m;
	return 0;
}
