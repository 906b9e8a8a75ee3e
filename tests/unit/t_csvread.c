/*
 * t_csvread: the streaming CSV reader on fixture strings, fed whole, in
 * every split and byte by byte, which must all agree.
 */
#include <stdlib.h>
#include <string.h>

#include "csvread.h"
#include "tap.h"

/* Records serialized as "f1|f2\n" with the cut flag as a trailing '$'. */
struct out {
	char s[4096];
	size_t n;
	unsigned long lines[32];
	int nrec;
	int stop_after;
	char last[64];  /* the last record's first field */
};

static int collect(void *arg, struct rm_csv *c)
{
	struct out *o = arg;

	if (o->nrec < 32)
		o->lines[o->nrec] = c->rec_line;
	o->nrec++;
	if (c->bad_quote) {
		/* Not a record: "!Q" and the line where the quote opened. */
		o->n += (size_t)snprintf(o->s + o->n, sizeof(o->s) - o->n, "!Q%lu\n", c->rec_line);
		return o->stop_after && o->nrec >= o->stop_after;
	}
	if (c->nf > 0)
		snprintf(o->last, sizeof(o->last), "%.*s", (int)c->f[0].len, c->f[0].p);
	for (int i = 0; i < c->nf; i++) {
		if (i && o->n < sizeof(o->s) - 1)
			o->s[o->n++] = '|';
		for (size_t j = 0; j < c->f[i].len && o->n < sizeof(o->s) - 1; j++)
			o->s[o->n++] = c->f[i].p[j];
	}
	if (c->cut && o->n < sizeof(o->s) - 1)
		o->s[o->n++] = '$';
	if (o->n < sizeof(o->s) - 1)
		o->s[o->n++] = '\n';
	o->s[o->n] = '\0';
	return o->stop_after && o->nrec >= o->stop_after;
}

/* Parse in chunks of step bytes (0: whole); returns the error. */
static enum rm_csv_err parse(const char *in, size_t len, size_t step, struct out *o,
			     size_t max_rec, int max_f)
{
	struct rm_csv c;
	enum rm_csv_err e = RM_CSV_OK;
	int stop = o->stop_after;

	memset(o, 0, sizeof(*o));
	o->stop_after = stop;
	if (rm_csv_init(&c, max_rec, max_f) < 0)
		return RM_CSV_ENOMEM;
	if (!step)
		step = len ? len : 1;
	for (size_t i = 0; i < len && !e; i += step) {
		size_t n = len - i < step ? len - i : step;
		/* A private copy so a read past the chunk shows under ASan. */
		char *chunk = malloc(n);
		memcpy(chunk, in + i, n);
		e = rm_csv_feed(&c, chunk, n, collect, o);
		free(chunk);
	}
	if (!e)
		e = rm_csv_finish(&c, collect, o);
	rm_csv_free(&c);
	return e;
}

static void check_all_splits(const char *in, const char *want)
{
	struct out o;
	size_t len = strlen(in);

	for (size_t step = 0; step <= len; step++) {
		o.stop_after = 0;
		CHECK(parse(in, len, step, &o, 0, 0) == RM_CSV_OK);
		if (strcmp(o.s, want) != 0) {
			printf("#   step %zu: got '%s'\n", step, o.s);
			tap_cur = 1;
			return;
		}
	}
}

static void test_plain(void)
{
	check_all_splits("a,b,c\n1,2,3\n", "a|b|c\n1|2|3\n");
}

static void test_crlf(void)
{
	check_all_splits("a,b\r\n1,2\r\n", "a|b\n1|2\n");
	check_all_splits("a,b\r\n1,\"x\"\r\n", "a|b\n1|x\n");
}

static void test_quoted(void)
{
	check_all_splits("h\n\"a,b\",\"say \"\"hi\"\"\",\"l1\nl2\"\n",
			 "h\na,b|say \"hi\"|l1\nl2\n");
	check_all_splits("\"\"\n", "\n");
	check_all_splits("\"x\r\ny\",z\r\n", "x\r\ny|z\n");
}

static void test_empty_fields(void)
{
	check_all_splits(",\n,,x\n", "|\n||x\n");
}

static void test_blank_lines(void)
{
	check_all_splits("a\n\n\r\nb\n\n", "a\nb\n");
}

static void test_cut_last(void)
{
	check_all_splits("a,b\n1,2", "a|b\n1|2$\n");
	/* A quote open at the end is an error naming its line. */
	check_all_splits("a,b\n1,\"open", "a|b\n!Q2\n");
	/* A final CR is a line end, not a cut. */
	check_all_splits("a,b\r", "a|b\n");
}

static void test_lenient(void)
{
	/* A quote inside an unquoted field and text after a closing quote
	 * are kept; a lone CR is text. */
	check_all_splits("ab\"c,\"d\"e\n", "ab\"c|de\n");
	check_all_splits("a\rb,c\n", "a\rb|c\n");
}

/*
 * An unterminated quote: an error naming the line where it opened, then
 * reading resumes at the next line after that one; quoted line feeds
 * within the limit stay legal.
 */
static void test_unterminated_quote(void)
{
	struct out o = { 0 };
	const char *in = "h,v\n1,\"swallow\n2,b\n3,c\n";

	check_all_splits(in, "h|v\n!Q2\n2|b\n3|c\n");
	CHECK(parse(in, strlen(in), 0, &o, 0, 0) == RM_CSV_OK);
	CHECK_U64(o.nrec, 4);
	CHECK_U64(o.lines[1], 2);
	CHECK_U64(o.lines[2], 3);
	CHECK_U64(o.lines[3], 4);
	/* Quotes after it that would have closed it are pairs ("") inside
	 * it; read again from the next line they are text. */
	check_all_splits("h\n\"a\nb\n", "h\n!Q2\nb\n");
	check_all_splits("h\n\"a\"\"\nb\"\"c,d\n", "h\n!Q2\nb\"\"c|d\n");
	/* Quoted line feeds, "" and CRLF within the limit stay legal. */
	check_all_splits("h,v\n\"l1\nl2\nl3\",\"x\"\"\r\ny\"\r\nz,w\n",
			 "h|v\nl1\nl2\nl3|x\"\r\ny\nz|w\n");
}

/* A quoted field over max_quoted bytes (64 KiB) ends as one. */
static void test_quote_limit(void)
{
	static char in[200000];
	struct out o = { 0 };
	struct rm_csv c;
	size_t n = 0, steps[] = { 0, 1, 7, 4096 };

	n += (size_t)sprintf(in + n, "h,v\n1,\"");
	for (int i = 0; i < 2000; i++)
		n += (size_t)sprintf(in + n, "line %04d of a quote that never closes .......................\n", i);
	n += (size_t)sprintf(in + n, "2,b\n");
	for (size_t k = 0; k < sizeof(steps) / sizeof(steps[0]); k++) {
		CHECK(parse(in, n, steps[k], &o, 0, 0) == RM_CSV_OK);
		/* The header, the error at line 2, then every line after it
		 * (more than 64 KiB of them: the limit, not the end). */
		CHECK_U64(o.nrec, 1 + 1 + 1999 + 1);
		CHECK(strncmp(o.s, "h|v\n!Q2\nline 0001 of a quote", 28) == 0);
		CHECK_STR(o.last, "2");
		CHECK_U64(o.lines[1], 2);
		CHECK_U64(o.lines[2], 3);
	}
	/* Within the limit the same bytes are one field. */
	CHECK(rm_csv_init(&c, 0, 0) == 0);
	c.max_quoted = 1 << 20;
	memset(&o, 0, sizeof(o));
	in[n - 5] = '"';
	CHECK(rm_csv_feed(&c, in, n, collect, &o) == RM_CSV_OK);
	CHECK(rm_csv_finish(&c, collect, &o) == RM_CSV_OK);
	CHECK_U64(o.nrec, 2);
	CHECK_U64(c.bad_quotes, 0);
	rm_csv_free(&c);
	/* A quote on one line with no line feed: the rest of that line is
	 * skipped, the next line read. */
	n = 0;
	n += (size_t)sprintf(in + n, "h\n\"");
	memset(in + n, 'x', 70000);
	n += 70000;
	n += (size_t)sprintf(in + n, "\nnext\n");
	CHECK(parse(in, n, 0, &o, 0, 0) == RM_CSV_OK);
	CHECK_STR(o.s, "h\n!Q2\nnext\n");
	CHECK_U64(o.lines[2], 3);
}

/* Lone CRs (old Mac line ends) are counted. */
static void test_lone_cr(void)
{
	struct rm_csv c;
	struct out o = { 0 };

	CHECK(rm_csv_init(&c, 0, 0) == 0);
	CHECK(rm_csv_feed(&c, "a,b\r1,2\r3,4\r", 12, collect, &o) == RM_CSV_OK);
	CHECK(rm_csv_finish(&c, collect, &o) == RM_CSV_OK);
	CHECK_U64(c.lone_cr, 2);
	rm_csv_free(&c);
}

static void test_lines(void)
{
	struct out o = { 0 };
	const char *in = "h\n\"two\nlines\",x\nlast\n";

	CHECK(parse(in, strlen(in), 0, &o, 0, 0) == RM_CSV_OK);
	CHECK_U64(o.nrec, 3);
	CHECK_U64(o.lines[0], 1);
	CHECK_U64(o.lines[1], 2);
	CHECK_U64(o.lines[2], 4);
}

static void test_binary(void)
{
	static const char in[] = "a,b\n1,2\n3\0,4\n";
	struct rm_csv c;
	struct out o = { 0 };

	CHECK(rm_csv_init(&c, 0, 0) == 0);
	CHECK(rm_csv_feed(&c, in, sizeof(in) - 1, collect, &o) == RM_CSV_EBINARY);
	CHECK_U64(c.err_line, 3);
	CHECK_U64(o.nrec, 2);
	/* Sticky. */
	CHECK(rm_csv_feed(&c, "x\n", 2, collect, &o) == RM_CSV_EBINARY);
	CHECK(rm_csv_finish(&c, collect, &o) == RM_CSV_EBINARY);
	rm_csv_free(&c);
	CHECK(strcmp(rm_csv_strerror(RM_CSV_EBINARY), "binary data (a NUL byte)") == 0);
}

static void test_too_long(void)
{
	struct out o = { 0 };
	char big[200];

	memset(big, 'x', sizeof(big));
	big[sizeof(big) - 1] = '\n';
	CHECK(parse(big, sizeof(big), 0, &o, 100, 0) == RM_CSV_ETOOLONG);
	CHECK(parse(big, sizeof(big), 7, &o, 100, 0) == RM_CSV_ETOOLONG);
	CHECK(parse(big, sizeof(big), 0, &o, 300, 0) == RM_CSV_OK);
	CHECK_U64(o.nrec, 1);
	/* Exactly at the bound is fine. */
	CHECK(parse(big, sizeof(big), 0, &o, 199, 0) == RM_CSV_OK);
}

static void test_too_many(void)
{
	struct out o = { 0 };
	const char *in = "a,b,c,d\n";

	CHECK(parse(in, strlen(in), 0, &o, 0, 3) == RM_CSV_ETOOMANY);
	CHECK(parse(in, strlen(in), 1, &o, 0, 3) == RM_CSV_ETOOMANY);
	CHECK(parse(in, strlen(in), 0, &o, 0, 4) == RM_CSV_OK);
}

static void test_stop(void)
{
	struct out o = { 0 };
	const char *in = "a\nb\nc\n";

	o.stop_after = 2;
	CHECK(parse(in, strlen(in), 0, &o, 0, 0) == RM_CSV_ESTOP);
	CHECK_U64(o.nrec, 2);
}

static void test_big_stream(void)
{
	/* 10,000 rows through a small buffer: counts and the last row. */
	struct rm_csv c;
	struct out o = { 0 };
	char row[64];
	enum rm_csv_err e = RM_CSV_OK;

	CHECK(rm_csv_init(&c, 0, 0) == 0);
	for (int i = 0; i < 10000 && !e; i++) {
		int n = snprintf(row, sizeof(row), "%d,\"q,%d\"\r\n", i, i);
		e = rm_csv_feed(&c, row, (size_t)n, collect, &o);
		o.n = 0;
	}
	CHECK(e == RM_CSV_OK);
	CHECK(rm_csv_finish(&c, collect, &o) == RM_CSV_OK);
	CHECK_U64(c.records, 10000);
	CHECK_U64(c.line, 10001);
	CHECK_STR(o.s, "9999|q,9999\n");
	rm_csv_free(&c);
}

int main(void)
{
	RUN(test_plain);
	RUN(test_crlf);
	RUN(test_quoted);
	RUN(test_empty_fields);
	RUN(test_blank_lines);
	RUN(test_cut_last);
	RUN(test_lenient);
	RUN(test_lines);
	RUN(test_unterminated_quote);
	RUN(test_quote_limit);
	RUN(test_lone_cr);
	RUN(test_binary);
	RUN(test_too_long);
	RUN(test_too_many);
	RUN(test_stop);
	RUN(test_big_stream);
	return tap_done();
}
