/*
 * csvread: see csvread.h.
 *
 * Two paths over the same grammar.  The fast one takes a record that lies
 * whole inside the buffer and holds no quote, CR-without-LF or NUL: its
 * fields point straight into the caller's buffer, found 16 bytes at a
 * time with SSE2 where the compiler has it (a table lookup per byte
 * elsewhere).  Anything else (quotes, a record that crosses a buffer
 * boundary) goes through the byte-at-a-time state machine, which copies
 * the unquoted bytes into the parser's own record buffer.
 */
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "csvread.h"

#define DEF_MAX_RECORD (1024 * 1024)
#define DEF_MAX_FIELDS 1024
#define DEF_MAX_QUOTED (64 * 1024)

enum { K_TEXT, K_COMMA, K_LF, K_QUOTE, K_CR, K_NUL };

/* Byte classes for the fast path. */
static const unsigned char cls[256] = {
	[0] = K_NUL, [','] = K_COMMA, ['\n'] = K_LF, ['"'] = K_QUOTE, ['\r'] = K_CR,
};

enum {
	S_REC,    /* before a record: nothing taken yet */
	S_FSTART, /* at the start of a field after a comma */
	S_UNQ,    /* inside an unquoted field */
	S_Q,      /* inside a quoted field */
	S_QQ,     /* a quote inside a quoted field: closing, or the first of "" */
	S_CR,     /* a CR outside quotes: a line end if LF follows */
	S_RCR,    /* a CR before anything else of a record */
	S_SKIP,   /* after an unterminated quote: up to the line's end */
};

int rm_csv_init(struct rm_csv *c, size_t max_record, int max_fields)
{
	memset(c, 0, sizeof(*c));
	c->max_record = max_record ? max_record : DEF_MAX_RECORD;
	c->max_fields = max_fields > 0 ? max_fields : DEF_MAX_FIELDS;
	c->max_quoted = DEF_MAX_QUOTED;
	c->line = 1;
	c->st = S_REC;
	c->f = calloc((size_t)c->max_fields, sizeof(*c->f));
	c->fend = calloc((size_t)c->max_fields, sizeof(*c->fend));
	if (!c->f || !c->fend) {
		rm_csv_free(c);
		return -1;
	}
	return 0;
}

void rm_csv_free(struct rm_csv *c)
{
	free(c->f);
	free(c->fend);
	free(c->rec);
	free(c->raw);
	c->f = NULL;
	c->fend = NULL;
	c->rec = NULL;
	c->raw = NULL;
	c->cap = c->len = 0;
	c->rawcap = c->rawlen = 0;
}

const char *rm_csv_strerror(enum rm_csv_err e)
{
	switch (e) {
	case RM_CSV_OK:
		return "no error";
	case RM_CSV_EBINARY:
		return "binary data (a NUL byte)";
	case RM_CSV_ETOOLONG:
		return "record too long";
	case RM_CSV_ETOOMANY:
		return "too many fields";
	case RM_CSV_ENOMEM:
		return "out of memory";
	case RM_CSV_ESTOP:
		return "stopped";
	}
	return "unknown error";
}

static enum rm_csv_err fail(struct rm_csv *c, enum rm_csv_err e)
{
	c->err = e;
	c->err_line = c->line;
	return e;
}

/* Append one byte to the record being assembled. */
static int put(struct rm_csv *c, char ch)
{
	if (c->len >= c->max_record)
		return fail(c, RM_CSV_ETOOLONG);
	if (c->len == c->cap) {
		size_t ncap = c->cap ? c->cap * 2 : 256;
		char *n;
		if (ncap > c->max_record)
			ncap = c->max_record;
		n = realloc(c->rec, ncap);
		if (!n)
			return fail(c, RM_CSV_ENOMEM);
		c->rec = n;
		c->cap = ncap;
	}
	c->rec[c->len++] = ch;
	return 0;
}

/* End the current field of the assembled record. */
static int end_field(struct rm_csv *c)
{
	if (c->nfe >= c->max_fields)
		return fail(c, RM_CSV_ETOOMANY);
	c->fend[c->nfe++] = c->len;
	return 0;
}

/* Hand out the assembled record and start afresh. */
static enum rm_csv_err emit_slow(struct rm_csv *c, rm_csv_cb cb, void *arg, int cut)
{
	size_t start = 0;
	int r;

	if (end_field(c))
		return c->err;
	for (int i = 0; i < c->nfe; i++) {
		c->f[i].p = c->rec ? c->rec + start : "";
		c->f[i].len = c->fend[i] - start;
		start = c->fend[i];
	}
	c->nf = c->nfe;
	c->cut = cut;
	c->records++;
	r = cb(arg, c);
	c->len = 0;
	c->nfe = 0;
	c->st = S_REC;
	if (r)
		return fail(c, RM_CSV_ESTOP);
	return RM_CSV_OK;
}

/* Keep a byte of an open quoted field, to read it again if it never closes. */
static int save_raw(struct rm_csv *c, unsigned char ch)
{
	if (c->rawlen == c->rawcap) {
		size_t ncap = c->rawcap ? c->rawcap * 2 : 256;
		char *n = realloc(c->raw, ncap);
		if (!n)
			return fail(c, RM_CSV_ENOMEM);
		c->raw = n;
		c->rawcap = ncap;
	}
	c->raw[c->rawlen++] = (char)ch;
	return 0;
}

/*
 * The quoted field opened on line qline never closed (end of input, or
 * longer than max_quoted): tell the callback, drop the record, and read
 * again from the line after qline (the bytes kept since), or skip to the
 * end of the line when no line feed has come yet.
 */
static enum rm_csv_err bad_quote(struct rm_csv *c, rm_csv_cb cb, void *arg)
{
	char *again = c->raw;
	size_t n = c->rawlen;
	enum rm_csv_err e;
	int r, resume = c->raw_on;

	c->nf = 0;
	c->cut = 0;
	c->bad_quote = 1;
	c->rec_line = c->qline;
	c->bad_quotes++;
	r = cb(arg, c);
	c->bad_quote = 0;
	c->len = 0;
	c->nfe = 0;
	c->raw_on = 0;
	if (r) {
		fail(c, RM_CSV_ESTOP);
		c->err_line = c->qline;
		return RM_CSV_ESTOP;
	}
	if (!resume) {
		c->st = S_SKIP;
		return RM_CSV_OK;
	}
	c->st = S_REC;
	c->line = c->qline + 1;
	c->offset -= n;
	c->raw = NULL;
	c->rawlen = c->rawcap = 0;
	e = n ? rm_csv_feed(c, again, n, cb, arg) : RM_CSV_OK;
	free(again);
	return e;
}

#if defined(__SSE2__)
/* Bit i set when byte i of the 16 at p is , LF " CR or NUL. */
static inline unsigned specials16(const unsigned char *p)
{
	__m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
	__m128i m = _mm_or_si128(
		_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(',')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\n'))),
		_mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')),
					  _mm_cmpeq_epi8(v, _mm_set1_epi8('\r'))),
			     _mm_cmpeq_epi8(v, _mm_setzero_si128())));
	return (unsigned)_mm_movemask_epi8(m);
}
#endif

/*
 * The fast path met byte p of class k (not a comma): a line end finishes
 * the record and hands it out; anything else sends the record to the slow
 * path (returns 0).  Returns what fast_record returns.
 */
static long fast_end(struct rm_csv *c, const unsigned char *s, const unsigned char *e,
		     const unsigned char *p, unsigned k, const unsigned char *start, int nf,
		     rm_csv_cb cb, void *arg)
{
	long used;

	if (!(k == K_LF || (k == K_CR && p + 1 < e && p[1] == '\n')))
		return 0; /* quote, NUL, lone CR: the slow path decides */
	if ((size_t)(p - s) > c->max_record)
		return 0;
	used = (long)(p - s) + (k == K_CR ? 2 : 1);
	c->line++;
	if (p == s)
		return used; /* a blank line */
	c->f[nf].p = (const char *)start;
	c->f[nf].len = (size_t)(p - start);
	c->nf = nf + 1;
	c->cut = 0;
	c->rec_line = c->line - 1;
	c->records++;
	if (cb(arg, c)) {
		fail(c, RM_CSV_ESTOP);
		return -1;
	}
	return used;
}

/*
 * Try the fast path on the record starting at s.  Returns the number of
 * bytes it consumed (0 when the record needs the slow path), or -1 after
 * an error or a stop (c->err set).  With SSE2, each 16-byte block is
 * checked at once and only its special bytes are looked at.
 */
static long fast_record(struct rm_csv *c, const unsigned char *s, const unsigned char *e,
			rm_csv_cb cb, void *arg)
{
	const unsigned char *p, *q = s, *start = s, *lim = e;
	int nf = 0;
	unsigned k;

	if ((size_t)(lim - s) > c->max_record + 2)
		lim = s + c->max_record + 2;
#if defined(__SSE2__)
	/* Each special byte of each 16-byte block, in order. */
	for (; q + 16 <= lim; q += 16) {
		unsigned m = specials16(q);
		while (m) {
			p = q + __builtin_ctz(m);
			m &= m - 1;
			k = cls[*p];
			if (k != K_COMMA)
				return fast_end(c, s, e, p, k, start, nf, cb, arg);
			if (nf + 1 >= c->max_fields)
				return 0;
			c->f[nf].p = (const char *)start;
			c->f[nf].len = (size_t)(p - start);
			nf++;
			start = p + 1;
		}
	}
#endif
	for (p = q; p < lim; p++) {
		k = cls[*p];
		if (k == K_TEXT)
			continue;
		if (k != K_COMMA)
			return fast_end(c, s, e, p, k, start, nf, cb, arg);
		if (nf + 1 >= c->max_fields)
			return 0;
		c->f[nf].p = (const char *)start;
		c->f[nf].len = (size_t)(p - start);
		nf++;
		start = p + 1;
	}
	return 0;
}

/* Slow path, S_REC or S_FSTART: byte ch at the start of a field. */
static enum rm_csv_err at_field_start(struct rm_csv *c, unsigned char ch, rm_csv_cb cb, void *arg)
{
	if (ch == '"') {
		c->st = S_Q;
		c->qline = c->line;
		c->qstart = c->len;
		c->rawlen = 0;
		c->raw_on = 0;
	} else if (ch == ',') {
		if (end_field(c))
			return c->err;
		c->st = S_FSTART;
	} else if (ch == '\n') {
		c->line++;
		if (c->st == S_REC)
			return RM_CSV_OK; /* blank line */
		if (emit_slow(c, cb, arg, 0))
			return c->err;
	} else if (ch == '\r') {
		c->st = c->st == S_REC ? S_RCR : S_CR;
	} else {
		if (put(c, (char)ch))
			return c->err;
		c->st = S_UNQ;
	}
	return RM_CSV_OK;
}

/* Slow path, S_UNQ: byte ch inside an unquoted field. */
static enum rm_csv_err in_unquoted(struct rm_csv *c, unsigned char ch, rm_csv_cb cb, void *arg)
{
	if (ch == ',') {
		if (end_field(c))
			return c->err;
		c->st = S_FSTART;
	} else if (ch == '\n') {
		c->line++;
		if (emit_slow(c, cb, arg, 0))
			return c->err;
	} else if (ch == '\r') {
		c->st = S_CR;
	} else if (put(c, (char)ch)) {
		return c->err;
	}
	return RM_CSV_OK;
}

/* Slow path, S_Q: byte ch inside a quoted field. */
static enum rm_csv_err in_quoted(struct rm_csv *c, unsigned char ch, rm_csv_cb cb, void *arg)
{
	if (ch == '"') {
		c->st = S_QQ;
	} else {
		if (ch == '\n') {
			c->line++;
			c->raw_on = 1; /* the next line starts here */
		}
		if (put(c, (char)ch))
			return c->err;
		if (c->len - c->qstart > c->max_quoted) {
			enum rm_csv_err qe;
			/* The rest of this buffer is read after
			 * what the quote swallowed. */
			if ((qe = bad_quote(c, cb, arg)) != RM_CSV_OK)
				return qe;
		}
	}
	return RM_CSV_OK;
}

/* Slow path, S_QQ: byte ch after a quote inside a quoted field.  A second
 * quote is a literal one; any other byte ends the quoted part and is read
 * as in an unquoted field. */
static enum rm_csv_err after_quote(struct rm_csv *c, unsigned char ch, rm_csv_cb cb, void *arg)
{
	if (ch == '"') {
		if (put(c, '"'))
			return c->err;
		c->st = S_Q;
		return RM_CSV_OK;
	}
	c->st = S_UNQ;
	return in_unquoted(c, ch, cb, arg);
}

/* Slow path, S_CR or S_RCR: byte ch after a CR; *again is set when ch
 * must be read again (the CR was a lone one, kept as text). */
static enum rm_csv_err after_cr(struct rm_csv *c, unsigned char ch, rm_csv_cb cb, void *arg,
				int *again)
{
	if (ch == '\n') {
		c->line++;
		if (c->st == S_RCR)
			c->st = S_REC; /* a CRLF blank line */
		else if (emit_slow(c, cb, arg, 0))
			return c->err;
		return RM_CSV_OK;
	}
	/* A lone CR is text; the byte after it starts over. */
	c->lone_cr++;
	if (put(c, '\r'))
		return c->err;
	c->st = S_UNQ;
	*again = 1;
	return RM_CSV_OK;
}

enum rm_csv_err rm_csv_feed(struct rm_csv *c, const char *buf, size_t len,
			    rm_csv_cb cb, void *arg)
{
	const unsigned char *p = (const unsigned char *)buf, *e = p + len;

	if (c->err)
		return c->err;
	while (p < e) {
		unsigned char ch;
		enum rm_csv_err r = RM_CSV_OK;
		int again = 0;

		if (c->st == S_REC) {
			long used = fast_record(c, p, e, cb, arg);
			if (used < 0)
				return c->err;
			if (used > 0) {
				p += used;
				c->offset += (uint64_t)used;
				continue;
			}
			c->rec_line = c->line;
		}
		ch = *p++;
		c->offset++;
		if (ch == '\0')
			return fail(c, RM_CSV_EBINARY);
		if ((c->st == S_Q || c->st == S_QQ) && c->raw_on && save_raw(c, ch))
			return c->err;
		switch (c->st) {
		case S_SKIP:
			if (ch == '\n') {
				c->line++;
				c->st = S_REC;
			}
			break;
		case S_REC:
		case S_FSTART:
			r = at_field_start(c, ch, cb, arg);
			break;
		case S_UNQ:
			r = in_unquoted(c, ch, cb, arg);
			break;
		case S_Q:
			r = in_quoted(c, ch, cb, arg);
			break;
		case S_QQ:
			r = after_quote(c, ch, cb, arg);
			break;
		case S_CR:
		case S_RCR:
			r = after_cr(c, ch, cb, arg, &again);
			break;
		}
		if (r != RM_CSV_OK)
			return r;
		if (again) {
			p--;
			c->offset--;
		}
	}
	return RM_CSV_OK;
}

enum rm_csv_err rm_csv_finish(struct rm_csv *c, rm_csv_cb cb, void *arg)
{
	if (c->err)
		return c->err;
	/* A quote open at the end: each one found, then what follows it. */
	while (c->st == S_Q) {
		enum rm_csv_err e = bad_quote(c, cb, arg);
		if (e)
			return e;
	}
	if (c->st == S_SKIP)
		return RM_CSV_OK;
	if (c->st == S_CR) {
		/* A CR as the last byte of input ends the line. */
		return emit_slow(c, cb, arg, 0);
	}
	if (c->st == S_REC || c->st == S_RCR)
		return RM_CSV_OK;
	return emit_slow(c, cb, arg, 1);
}
