/*
 * csvread: a streaming RFC 4180 reader.  The caller feeds buffers of any
 * size (a whole file, 1 MiB reads, or one byte at a time: the result is
 * the same) and gets one callback per record with its fields as pointer +
 * length pairs, unquoted, with "" turned into ".  It reads CRLF and LF
 * line ends, quoted fields holding , CR and LF, and a last record cut off
 * by the end of input (flagged, so the caller can tell it from a whole
 * one).  Blank lines are skipped.  Memory is bounded: a record longer than
 * max_record bytes or with more than max_fields fields stops the parse
 * with an error, and a NUL byte (binary data, never in a text CSV) does
 * too.  Lenient where RFC 4180 is silent: a quote inside an unquoted
 * field, or text after a closing quote, is kept as text; a lone CR is
 * text (and counted, so a caller can name old Mac line ends).
 *
 * A quoted field still open at the end of input, or longer than
 * max_quoted bytes (64 KiB), is not a record: the callback gets it with
 * bad_quote set, nf 0 and rec_line the line where the quote opened, and
 * reading resumes at the start of the next line after that one (the bytes
 * read since are read again).  Quoted line feeds within the limit stay
 * legal.  The parser core never reads files, prints or allocates per
 * field.
 */
#ifndef RM_CSVREAD_H
#define RM_CSVREAD_H

#include <stddef.h>
#include <stdint.h>

enum rm_csv_err {
	RM_CSV_OK = 0,
	RM_CSV_EBINARY,   /* a NUL byte */
	RM_CSV_ETOOLONG,  /* a record over max_record bytes */
	RM_CSV_ETOOMANY,  /* a record over max_fields fields */
	RM_CSV_ENOMEM,
	RM_CSV_ESTOP,     /* the callback asked to stop */
};

struct rm_csv_field {
	const char *p;  /* not NUL-terminated; valid only inside the callback */
	size_t len;
};

struct rm_csv {
	/* Limits, set by rm_csv_init. */
	size_t max_record;
	int max_fields;

	/* The record being handed to the callback. */
	struct rm_csv_field *f;
	int nf;
	unsigned long rec_line;  /* line its first byte is on (1-based) */
	int cut;                 /* 1: ended by the end of input, not a newline */
	int bad_quote;           /* 1: no record, an unterminated quote (above) */

	/* Limit, set by rm_csv_init; may be changed before the first feed. */
	size_t max_quoted;       /* longest quoted field (64 KiB) */

	/* Where the parse stands; the caller only reads these. */
	unsigned long line;      /* current line, 1-based */
	uint64_t offset;         /* bytes consumed */
	unsigned long records;   /* records handed out */
	unsigned long lone_cr;   /* CRs outside quotes not followed by LF */
	unsigned long bad_quotes; /* unterminated quotes met */
	enum rm_csv_err err;
	unsigned long err_line;

	/* Private. */
	int st;
	char *rec;
	size_t len, cap;
	size_t *fend;
	int nfe;
	unsigned long qline;     /* where the open quote opened */
	size_t qstart;           /* its field's start in rec */
	char *raw;               /* bytes read since the line after qline */
	size_t rawlen, rawcap;
	int raw_on;
};

/*
 * Called once per record.  Return 0 to go on; anything else stops the
 * parse (rm_csv_feed then returns RM_CSV_ESTOP).
 */
typedef int (*rm_csv_cb)(void *arg, struct rm_csv *c);

/*
 * Set up a parser.  max_record bounds a record's bytes (0: 1 MiB),
 * max_fields its fields (0: 1024).  Returns 0 or -1 (no memory).
 */
int rm_csv_init(struct rm_csv *c, size_t max_record, int max_fields);
void rm_csv_free(struct rm_csv *c);

/*
 * Parse len more bytes.  Returns RM_CSV_OK, or the error that stopped the
 * parse (sticky: later calls return it again; c->err_line says where).
 */
enum rm_csv_err rm_csv_feed(struct rm_csv *c, const char *buf, size_t len,
			    rm_csv_cb cb, void *arg);

/* End of input: hands out a record not ended by a newline, with cut = 1. */
enum rm_csv_err rm_csv_finish(struct rm_csv *c, rm_csv_cb cb, void *arg);

/* What an error means, in a few words ("binary data (a NUL byte)"). */
const char *rm_csv_strerror(enum rm_csv_err e);

#endif
