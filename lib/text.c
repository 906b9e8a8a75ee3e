/*
 * text: see text.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "text.h"

/* Length of a valid UTF-8 sequence at s (n bytes left), or 0. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	size_t len;
	unsigned min;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2, min = 0x80;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3, min = 0x800;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4, min = 0x10000;
	else
		return 0;
	if (n < len)
		return 0;
	unsigned cp = c & (0xff >> (len + 1));
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	/* C1 controls (U+0080..U+009F) are controls too. */
	if (cp >= 0x80 && cp <= 0x9f)
		return 0;
	return len;
}

/* Skip an escape sequence starting at s[0] == ESC; returns bytes to skip. */
static size_t esc_len(const unsigned char *s, size_t n)
{
	size_t i;

	if (n < 2)
		return n;
	if (s[1] == '[') {
		/* CSI: parameters and intermediates, then a final byte 0x40-0x7e. */
		for (i = 2; i < n; i++)
			if (s[i] >= 0x40 && s[i] <= 0x7e)
				return i + 1;
		return n;
	}
	if (s[1] == ']' || s[1] == 'P' || s[1] == '_' || s[1] == '^') {
		/* OSC, DCS, APC, PM: until BEL or ST (ESC \). */
		for (i = 2; i < n; i++) {
			if (s[i] == 0x07)
				return i + 1;
			if (s[i] == 0x1b && i + 1 < n && s[i + 1] == '\\')
				return i + 2;
		}
		return n;
	}
	/* ESC followed by intermediates (0x20-0x2f) and one final byte. */
	for (i = 1; i < n && s[i] >= 0x20 && s[i] <= 0x2f; i++)
		;
	return i < n ? i + 1 : n;
}

size_t rm_sanitize(const char *in, size_t len, char *out, size_t size)
{
	const unsigned char *s = (const unsigned char *)in;
	size_t o = 0, i = 0, limit;

	if (size == 0)
		return 0;
	limit = size - 1;
	if (limit > RM_TEXT_MAX)
		limit = RM_TEXT_MAX;
	/* What a terminal shows of "a\rb" is b: start after the last CR
	 * that still has text after it.  One backward pass: seen says
	 * whether s[k..len) holds a printable byte. */
	for (size_t k = len, seen = 0; k > 0; k--) {
		if (s[k - 1] == '\r' && seen) {
			i = k;
			break;
		}
		if (s[k - 1] > 0x20 && s[k - 1] != 0x7f && s[k - 1] != 0x1b)
			seen = 1;
	}
	while (i < len) {
		unsigned c = s[i];
		size_t n;

		if (c == 0x1b) {
			i += esc_len(s + i, len - i);
			continue;
		}
		if (c == '\t' || c == '\n' || c == '\v' || c == '\f') {
			if (o + 1 > limit)
				break;
			out[o++] = ' ';
			i++;
			continue;
		}
		if (c < 0x20 || c == 0x7f) {
			i++;
			continue;
		}
		n = utf8_len(s + i, len - i);
		if (n == 0) {
			/* U+FFFD for one invalid byte; C1 controls (c2 80..c2 9f) dropped. */
			if (c == 0xc2 && i + 1 < len && s[i + 1] >= 0x80 && s[i + 1] <= 0x9f) {
				i += 2;
				continue;
			}
			if (o + 3 > limit)
				break;
			memcpy(out + o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
			continue;
		}
		if (o + n > limit)
			break;
		memcpy(out + o, s + i, n);
		o += n;
		i += n;
	}
	while (o > 0 && out[o - 1] == ' ')
		o--;
	out[o] = '\0';
	return o;
}

void rm_buf_reset(struct rm_buf *b)
{
	b->len = 0;
}

void rm_buf_free(struct rm_buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

static int buf_grow(struct rm_buf *b, size_t need)
{
	size_t cap;
	char *p;

	if (b->oom)
		return -1;
	if (b->len + need + 1 <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 1024;
	while (cap < b->len + need + 1)
		cap *= 2;
	p = realloc(b->p, cap);
	if (!p) {
		b->oom = 1;
		return -1;
	}
	b->p = p;
	b->cap = cap;
	return 0;
}

void rm_buf_add(struct rm_buf *b, const char *s, size_t n)
{
	/* The room is there but for a buffer's first rows and growth. */
	if (b->len + n + 1 > b->cap && buf_grow(b, n) < 0)
		return;
	if (b->oom)
		return;
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

void rm_buf_adds(struct rm_buf *b, const char *s)
{
	rm_buf_add(b, s, strlen(s));
}

void rm_buf_addc(struct rm_buf *b, char c)
{
	rm_buf_add(b, &c, 1);
}

void rm_buf_addf(struct rm_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || buf_grow(b, (size_t)n) < 0)
		return;
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void rm_buf_csv(struct rm_buf *b, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		rm_buf_adds(b, s);
		return;
	}
	rm_buf_addc(b, '"');
	for (; *s; s++) {
		if (*s == '"')
			rm_buf_addc(b, '"');
		rm_buf_addc(b, *s);
	}
	rm_buf_addc(b, '"');
}

void rm_buf_json(struct rm_buf *b, const char *s)
{
	rm_buf_addc(b, '"');
	while (*s) {
		/* A run of bytes that need no escape, in one copy. */
		size_t n = 0;
		unsigned char c;
		while ((c = (unsigned char)s[n]) && c != '"' && c != '\\' && c >= 0x20 && c != 0x7f)
			n++;
		if (n) {
			rm_buf_add(b, s, n);
			s += n;
			continue;
		}
		if (c == '"' || c == '\\') {
			char e[2] = { '\\', (char)c };
			rm_buf_add(b, e, 2);
		} else {
			rm_buf_addf(b, "\\u%04x", c);
		}
		s++;
	}
	rm_buf_addc(b, '"');
}

static const double pow10_tab[RM_NUM_PREC_MAX + 1] = {
	1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9,
	1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17,
};

/*
 * "%.*f" of v (finite), its "-0" dropped, without printf's exact decimal
 * expansion (a quarter of rm-summarize's time writing JSON): where
 * |v| * 10^prec is below 2^53 and not within its own rounding error
 * (half an ulp: the product is one rounded multiplication by an exact
 * power of ten) of a half, the nearest integer to it is the one the exact
 * value rounds to, as printf's would.  Returns the length written to out,
 * or 0 where printf must decide (a tie or near one, a large number).
 */
static int num_fast(char *out, double v, int prec)
{
	double a = v < 0 ? -v : v, s = a * pow10_tab[prec], f, m;
	unsigned long long n;
	char dig[24];
	int k = 0, len = 0;

	if (!(s < 9007199254740992.0))   /* 2^53 */
		return 0;
	n = (unsigned long long)s;
	f = s - (double)n;               /* exact */
	m = s * 0x1p-51 + 0x1p-1074;     /* above half an ulp of s */
	if (f > 0.5 - m && f < 0.5 + m)
		return 0;
	if (f > 0.5)
		n++;
	if (v < 0 && n)
		out[len++] = '-';
	do {
		dig[k++] = (char)('0' + n % 10);
		n /= 10;
	} while (n || k <= prec);
	while (k--) {
		out[len++] = dig[k];
		if (k == prec && prec > 0)
			out[len++] = '.';
	}
	return len;
}

void rm_buf_num(struct rm_buf *b, double v, int prec)
{
	/* The longest "%.*f": a sign, 309 integer digits, the point and
	 * RM_NUM_PREC_MAX decimals. */
	char tmp[1 + 309 + 1 + RM_NUM_PREC_MAX + 1];
	int n;

	/* Unknown is never a plausible number: nothing at all. */
	if (!__builtin_isfinite(v))
		return;
	if (prec < 0)
		prec = 0;
	if (prec > RM_NUM_PREC_MAX)
		prec = RM_NUM_PREC_MAX;
	if ((n = num_fast(tmp, v, prec)) > 0) {
		rm_buf_add(b, tmp, (size_t)n);
		return;
	}
	n = snprintf(tmp, sizeof(tmp), "%.*f", prec, v);
	if (n <= 0)
		return;
	if ((size_t)n >= sizeof(tmp))
		n = (int)sizeof(tmp) - 1; /* cannot happen: sized for DBL_MAX */
	if (tmp[0] == '-') {
		/* "-0.000" prints as "0.000". */
		int zero = 1;
		for (int i = 1; i < n; i++)
			if (tmp[i] != '0' && tmp[i] != '.')
				zero = 0;
		if (zero) {
			rm_buf_add(b, tmp + 1, (size_t)n - 1);
			return;
		}
	}
	rm_buf_add(b, tmp, (size_t)n);
}

void rm_buf_json_num(struct rm_buf *b, double v, int prec)
{
	if (!__builtin_isfinite(v))
		rm_buf_adds(b, "null");
	else
		rm_buf_num(b, v, prec);
}

void rm_buf_u64(struct rm_buf *b, uint64_t v)
{
	char tmp[24];
	size_t n = sizeof(tmp);

	do {
		tmp[--n] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	rm_buf_add(b, tmp + n, sizeof(tmp) - n);
}

int rm_buf_write(int fd, const struct rm_buf *b)
{
	size_t off = 0;
	off_t start = -1;

	if (b->oom) {
		errno = ENOMEM;
		return -1;
	}
	while (off < b->len) {
		ssize_t n = write(fd, b->p + off, b->len - off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			/* A filesystem that filled mid-row took part of it:
			 * cut the file back to where the row began, so that
			 * it still holds only whole rows.  (Pipes and
			 * terminals cannot seek; a row there is short enough
			 * to go in one piece.) */
			if (start >= 0) {
				int saved = errno;
				(void)!ftruncate(fd, start);
				errno = saved;
			}
			return -1;
		}
		if (off == 0 && (size_t)n < b->len) {
			off_t end = lseek(fd, 0, SEEK_CUR);
			if (end >= n)
				start = end - n;
		}
		off += (size_t)n;
	}
	return 0;
}
