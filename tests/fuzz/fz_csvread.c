/*
 * fz_csvread: the streaming CSV reader (lib/csvread).
 *
 * Differential: the same bytes fed whole, one byte at a time, and in
 * chunks of a size taken from the input must give the same records (the
 * header's promise; the whole-buffer feed takes the fast path, the
 * byte-at-a-time one the state machine), the same error and line.  Every
 * record keeps the limits.  Round trip: fields cut from the input,
 * written with rm_buf_csv (the writer every command uses), read back
 * equal.
 *
 * Input: byte 0 picks the chunk size (1 to 64), byte 1 the limits and
 * the mode; the rest is the CSV (or, in round-trip mode, fields split at
 * 0x01 and records at 0x02).
 */
#include "fuzz.h"
#include "csvread.h"
#include "text.h"

/* Every record, serialized: a log to compare two parses by. */
struct fz_log {
	struct rm_buf b;
	size_t max_record;
	int max_fields;
};

static int fz_csv_log(void *arg, struct rm_csv *c)
{
	struct fz_log *l = arg;
	size_t total = 0;

	if (c->bad_quote) {
		/* An unterminated quote: no fields, the line it opened on. */
		FZ_ASSERT(c->nf == 0 && c->rec_line >= 1 && c->rec_line <= c->line);
		rm_buf_addf(&l->b, "Q%lu;", c->rec_line);
		return 0;
	}
	FZ_ASSERT(c->nf >= 1 && c->nf <= l->max_fields);
	rm_buf_addf(&l->b, "R%lu:%d:%d:", c->rec_line, c->nf, c->cut);
	for (int i = 0; i < c->nf; i++) {
		FZ_ASSERT(c->f[i].len == 0 || c->f[i].p != NULL);
		FZ_ASSERT(c->f[i].len == 0 || memchr(c->f[i].p, '\0', c->f[i].len) == NULL);
		total += c->f[i].len;
		rm_buf_addf(&l->b, "%zu=", c->f[i].len);
		if (c->f[i].len)
			rm_buf_add(&l->b, c->f[i].p, c->f[i].len);
		rm_buf_addc(&l->b, ';');
	}
	FZ_ASSERT(total <= l->max_record);
	return 0;
}

/* Parse data in chunks of step bytes (0: all at once) into l. */
static enum rm_csv_err fz_csv_parse(const uint8_t *data, size_t size, size_t step,
				    size_t max_record, int max_fields, struct fz_log *l)
{
	struct rm_csv c;
	enum rm_csv_err e = RM_CSV_OK;

	l->max_record = max_record;
	l->max_fields = max_fields;
	FZ_ASSERT(rm_csv_init(&c, max_record, max_fields) == 0);
	if (step == 0)
		step = size ? size : 1;
	for (size_t off = 0; off < size && e == RM_CSV_OK; off += step) {
		size_t n = size - off < step ? size - off : step;
		e = rm_csv_feed(&c, (const char *)data + off, n, fz_csv_log, l);
	}
	if (e == RM_CSV_OK)
		e = rm_csv_finish(&c, fz_csv_log, l);
	FZ_ASSERT(e == c.err);
	FZ_ASSERT(rm_csv_strerror(e) != NULL);
	rm_buf_addf(&l->b, "E%d:%lu", (int)e, e ? c.err_line : 0UL);
	rm_csv_free(&c);
	return e;
}

static void fz_csv_differential(const uint8_t *data, size_t size, size_t step,
				size_t max_record, int max_fields)
{
	struct fz_log whole = { { 0 }, 0, 0 }, bytes = { { 0 }, 0, 0 }, chunks = { { 0 }, 0, 0 };

	fz_csv_parse(data, size, 0, max_record, max_fields, &whole);
	fz_csv_parse(data, size, 1, max_record, max_fields, &bytes);
	fz_csv_parse(data, size, step, max_record, max_fields, &chunks);
	FZ_ASSERT(!whole.b.oom && !bytes.b.oom && !chunks.b.oom);
	FZ_ASSERT(whole.b.len == bytes.b.len && memcmp(whole.b.p, bytes.b.p, whole.b.len) == 0);
	FZ_ASSERT(whole.b.len == chunks.b.len && memcmp(whole.b.p, chunks.b.p, whole.b.len) == 0);
	rm_buf_free(&whole.b);
	rm_buf_free(&bytes.b);
	rm_buf_free(&chunks.b);
}

/*
 * Round trip: split data into records (0x02) of fields (0x01), write them
 * as CSV, read them back and compare with what was written.  A record of
 * one empty field is a blank line, which the reader skips, so it is not
 * written.  NULs are not text and are left out.
 */
static void fz_csv_roundtrip(const uint8_t *data, size_t size)
{
	struct rm_buf csv = { 0 }, want = { 0 };
	struct fz_log got = { { 0 }, 0, 0 };
	unsigned long line = 1;
	size_t i = 0;

	while (i < size) {
		size_t end = i;
		int nf = 1;
		while (end < size && data[end] != 0x02)
			nf += data[end++] == 0x01;
		if (!(end == i) && memchr(data + i, 0, end - i) == NULL && nf <= 1024) {
			char *rec = fz_cstr(data + i, end - i);
			char *f = rec, *sep;
			unsigned long lines = 1;
			FZ_ASSERT(rec != NULL);
			rm_buf_addf(&want, "R%lu:%d:0:", line, nf);
			for (int k = 0; k < nf; k++) {
				sep = strchr(f, 0x01);
				if (sep)
					*sep = '\0';
				rm_buf_addf(&want, "%zu=%s;", strlen(f), f);
				if (k)
					rm_buf_addc(&csv, ',');
				rm_buf_csv(&csv, f);
				for (const char *q = f; *q; q++)
					lines += *q == '\n';
				f = sep ? sep + 1 : f + strlen(f);
			}
			rm_buf_addc(&csv, '\n');
			line += lines;
			free(rec);
		}
		i = end + 1;
	}
	rm_buf_adds(&want, "E0:0");
	fz_csv_parse((const uint8_t *)(csv.p ? csv.p : ""), csv.len, 0, 1024 * 1024, 1024, &got);
	FZ_ASSERT(!csv.oom && !want.oom && !got.b.oom);
	if (got.b.len != want.len || memcmp(got.b.p, want.p, want.len) != 0) {
		fprintf(stderr, "csv:  %.*s\nwant: %.*s\ngot:  %.*s\n", (int)csv.len, csv.p,
			(int)want.len, want.p, (int)got.b.len, got.b.p);
		FZ_ASSERT(!"round trip");
	}
	rm_buf_free(&csv);
	rm_buf_free(&want);
	rm_buf_free(&got.b);
}

static int fz_csvread(const uint8_t *data, size_t size)
{
	size_t step, max_record;
	int max_fields;

	if (size < 2)
		return 0;
	step = (size_t)(data[0] % 64) + 1;
	/* Small limits half the time, so that they are reached. */
	max_record = (data[1] & 1) ? (size_t)(data[1] >> 2) + 1 : 0;
	max_fields = (data[1] & 1) ? (data[1] >> 4) + 1 : 0;
	if (data[1] & 2) {
		fz_csv_roundtrip(data + 2, size - 2);
		return 0;
	}
	fz_csv_differential(data + 2, size - 2, step, max_record ? max_record : 1024 * 1024,
			    max_fields ? max_fields : 1024);
	return 0;
}

FZ_MAIN(fz_csvread)
