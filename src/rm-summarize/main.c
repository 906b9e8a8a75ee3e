/*
 * rm-summarize: the after-the-fact answer from the toolkit's CSVs.
 *
 * usage: rm-summarize [--json | --markdown] [--svg FILE] [--csv FILE]
 *                     [--near-oom-mb MB] [--low-disk-gb GB] [--include ERE]
 *                     [--exclude ERE] [--top N] [--cores N] [--kmsg FILE]
 *                     [--rows-lost N [--rows-lost-from TIME]] [--trace FILE] [--series]
 *                     [--stage-fallback N] [-o FILE] FILE...
 *
 * Each FILE is recognised by its header: a system CSV (rm-sample's, or the
 * seed script's 14 columns), rm-tree's exit log, its --job row or its
 * --timeline.  Files are grouped into reports in the order given: a system
 * CSV starts a new report unless the current one has none yet, and every
 * other file joins the current report.  Each report prints as text (the
 * default), one JSON object a line (--json), or Markdown (--markdown).
 *
 *   --json               JSON, one object per report
 *   --markdown           Markdown, for a CI job summary
 *   --svg FILE           a self-contained SVG timeline of the system CSV
 *   --csv FILE           per-process peaks of the exit log as CSV
 *   --trace FILE         the run as Chrome Trace Event JSON (Perfetto)
 *   --near-oom-mb MB     available memory below MB is near-OOM (4096)
 *   --low-disk-gb GB     available disk below GB is low (20)
 *   --include ERE        show only processes whose name, command line or
 *                        unit matches (totals are not changed)
 *   --exclude ERE        do not show processes that match
 *   --top N|all          processes and units listed (10; the JSON lists
 *                        every process unless --top is given)
 *   --cores N            cores for the RAM-bound rule (this machine's)
 *   --kmsg FILE          kernel log for OOM victims (/dev/kmsg)
 *   -h, --help           this help
 *       --version        the version
 *
 * Each FILE is opened and read once (a pipe or <(zcat ...) works; "-" is
 * standard input).  --svg and --csv are written whole through a temporary
 * file and a rename (lib/outfile), and never onto an input: exit 2.
 *
 * Input that is not such a CSV is an error, exit 1: an empty file, a NUL
 * byte, a header it does not know, a system CSV or job file with no rows,
 * a row with fewer fields than the header (except a last row cut off by
 * the end of the file, which is read without its cut field), a quoted
 * field never closed (named by the line its quote opened on), lone-CR
 * line ends, a record over 1 MiB.  Extra columns and rows with extra
 * fields are read.
 */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "outfile.h"
#include "series.h"
#include "summarize.h"

struct opts g_opt;

static const char usage_line[] =
	"usage: rm-summarize [--json | --markdown] [--svg FILE] [--csv FILE]\n"
	"                    [--near-oom-mb MB] [--low-disk-gb GB] [--include ERE]\n"
	"                    [--exclude ERE] [--top N] [--cores N] [--kmsg FILE]\n"
	"                    [--rows-lost N [--rows-lost-from TIME]] [--trace FILE] [--series]\n"
	"                    [--stage-fallback N] [-o FILE] FILE...";

static const char help_text[] =
	"\n"
	"Summarize rm-sample and seed monitor CSVs (peaks with time, stage and\n"
	"context; near-OOM and low-disk runs; OOM kills; stages; verdicts) and\n"
	"rm-tree exit logs, job rows and timelines (job peak, processes, groups,\n"
	"compile units, memory per job).\n"
	"\n"
	"      --json             JSON, one object per report\n"
	"      --markdown         Markdown, for a CI job summary\n"
	"      --svg FILE         a self-contained SVG timeline of the system CSV\n"
	"      --csv FILE         per-process peaks of the exit log as CSV\n"
	"      --trace FILE       the run as Chrome Trace Event JSON, for Perfetto or\n"
	"                         chrome://tracing: processes on lanes, stages, OOM\n"
	"                         kills, memory, CPU, disk and swap counters\n"
	"      --near-oom-mb MB   available memory below MB is near-OOM (4096)\n"
	"      --low-disk-gb GB   available disk below GB is low (20)\n"
	"      --include ERE      show only processes whose name, command line or\n"
	"                         unit matches (totals are not changed)\n"
	"      --exclude ERE      do not show processes that match\n"
	"      --top N|all        processes and units listed (10; the JSON lists\n"
	"                         every process unless --top is given)\n"
	"      --cores N          cores for the RAM-bound rule (this machine's)\n"
	"      --kmsg FILE        kernel log for OOM victims (/dev/kmsg)\n"
	"  -o, --output FILE      the report to FILE (written whole, then renamed into\n"
	"                         place; a symbolic link there is not followed)\n"
	"      --rows-lost N      N rows of the run could not be written (rm-monitor\n"
	"                         passes what rm-sample -o reported)\n"
	"      --rows-lost-from TIME\n"
	"                         when the first of them was sampled (RFC 3339)\n"
	"      --stage-fallback N N rows took the newest log's name as their stage:\n"
	"                         the stage file was missing or empty (rm-monitor\n"
	"                         passes what rm-sample reported)\n"
	"      --series           print the columns over time for gnuplot instead\n"
	"                         of the report (see rm-summarize(1))\n"
	"  -h, --help             this help\n"
	"      --version          print the version\n";

#define READ_BUF (1024 * 1024)
#define MAX_STAGES 100000

static uint64_t hash(const char *p, size_t n)
{
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * 1099511628211ULL;
	return h;
}

static void stage_rehash(struct report *r)
{
	free(r->stage_hash);
	r->stage_hcap = r->stage_hcap ? r->stage_hcap * 2 : 64;
	r->stage_hash = xmalloc(r->stage_hcap * sizeof(int));
	for (size_t i = 0; i < r->stage_hcap; i++)
		r->stage_hash[i] = -1;
	for (int i = 0; i < r->nstages; i++) {
		size_t h = hash(r->stages[i].raw, r->stages[i].rawlen) & (r->stage_hcap - 1);
		while (r->stage_hash[h] >= 0)
			h = (h + 1) & (r->stage_hcap - 1);
		r->stage_hash[h] = i;
	}
}

/* The index of the stage named raw[0..len), added when new. */
int stage_intern(struct report *r, const char *raw, size_t len)
{
	static const char overflow[] = "(too many stages)";
	struct stage *st;
	size_t h;

	if ((size_t)r->nstages * 2 >= r->stage_hcap)
		stage_rehash(r);
	h = hash(raw, len) & (r->stage_hcap - 1);
	while (r->stage_hash[h] >= 0) {
		st = &r->stages[r->stage_hash[h]];
		if (st->rawlen == len && memcmp(st->raw, raw, len) == 0)
			return r->stage_hash[h];
		h = (h + 1) & (r->stage_hcap - 1);
	}
	if (r->nstages >= MAX_STAGES && (len != sizeof(overflow) - 1 || memcmp(raw, overflow, len)))
		return stage_intern(r, overflow, sizeof(overflow) - 1);
	if (r->nstages == r->capst) {
		r->capst = r->capst ? r->capst * 2 : 16;
		r->stages = xrealloc(r->stages, (size_t)r->capst * sizeof(*r->stages));
	}
	st = &r->stages[r->nstages];
	memset(st, 0, sizeof(*st));
	st->raw = xstrndup(raw, len);
	st->rawlen = len;
	st->name = sanitized(raw, len);
	st->first_epoch = st->peak_used = st->min_avail = st->min_disk = NAN;
	st->max_comp = st->energy_j = NAN;
	r->stage_hash[h] = r->nstages;
	return r->nstages++;
}

/* What a file is, from its header. */
enum fkind { F_SYS, F_EXITLOG, F_JOB, F_TIMELINE, F_STATS };

struct input {
	const char *path;
	char *shown;           /* the path, safe to print */
	enum fkind kind;
	int fd;                /* opened once, by the header pass */
	struct stat st;        /* what fd is (outputs must not be inputs) */
	char *pre;             /* a pipe's bytes the header pass consumed */
	size_t npre;
};

struct reader {
	struct report *r;
	struct input *in;
	int header;            /* 1: only read the header */
	int kind_known;
	enum fkind kind;
	long rows;
	char why[320];
};

static int classify(struct reader *rd, struct rm_csv *c)
{
	enum pkind pk = procs_kind(c);
	char hdr[81];

	if (pk == PK_JOB)
		rd->kind = F_JOB;
	else if (pk == PK_EXITLOG)
		rd->kind = F_EXITLOG;
	else if (pk == PK_TIMELINE)
		rd->kind = F_TIMELINE;
	else if (pk == PK_STATS)
		rd->kind = F_STATS;
	else if (sys_is_header(c))
		rd->kind = F_SYS;
	else {
		size_t n = 0;
		char raw[200];
		for (int i = 0; i < c->nf && n < sizeof(raw) - 1; i++) {
			size_t m = c->f[i].len;
			if (i)
				raw[n++] = ',';
			if (m > sizeof(raw) - 1 - n)
				m = sizeof(raw) - 1 - n;
			memcpy(raw + n, c->f[i].p, m);
			n += m;
		}
		rm_sanitize(raw, n, hdr, sizeof(hdr));
		snprintf(rd->why, sizeof(rd->why),
			 "not a CSV rm-summarize reads (header '%s'); want rm-sample's, rm-tree's or the seed script's columns",
			 hdr);
		return -1;
	}
	rd->kind_known = 1;
	return 0;
}

static enum pkind pk_of(enum fkind k)
{
	return k == F_JOB ? PK_JOB : k == F_EXITLOG ? PK_EXITLOG : k == F_STATS ? PK_STATS : PK_TIMELINE;
}

static int on_record(void *arg, struct rm_csv *c)
{
	struct reader *rd = arg;
	char why[200];
	int rc;

	if (c->bad_quote) {
		snprintf(rd->why, sizeof(rd->why),
			 "line %lu: a quoted field opened here is never closed (at the end of the file or after %zu KiB); not a CSV this toolkit writes",
			 c->rec_line, c->max_quoted / 1024);
		return 1;
	}
	if (!rd->kind_known) {
		/* Old Mac text: the whole file reads as one line. */
		if (c->lone_cr) {
			snprintf(rd->why, sizeof(rd->why),
				 "line %lu: lines end in a lone CR (old Mac text), not LF or CRLF; convert it with tr '\\r' '\\n'",
				 c->rec_line);
			return 1;
		}
		if (classify(rd, c) < 0)
			return 1;
		if (rd->header)
			return 1;
		if (rd->kind == F_SYS) {
			rd->r->sys = sys_new(rd->in->path, c);
		} else {
			procs_header(rd->r, pk_of(rd->kind), c);
		}
		return 0;
	}
	rd->rows++;
	if (rd->kind == F_SYS)
		rc = sys_row(rd->r, c, why, sizeof(why));
	else
		rc = procs_row(rd->r, pk_of(rd->kind), c, why, sizeof(why));
	if (rc < 0) {
		snprintf(rd->why, sizeof(rd->why), "line %lu: %s", c->rec_line, why);
		return 1;
	}
	return 0;
}

static void fail(const struct input *in, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));

static void fail(const struct input *in, const char *fmt, ...)
{
	va_list ap;
	char msg[512];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	errx(RM_EXIT_FAIL, "'%s': %s", in->shown, msg);
}

/* Read up to n bytes of in, retrying EINTR; exits 1 on an error. */
static size_t read_some(struct input *in, char *buf, size_t n)
{
	for (;;) {
		ssize_t k = read(in->fd, buf, n);
		if (k >= 0)
			return (size_t)k;
		if (errno != EINTR) 
			err(RM_EXIT_FAIL, "cannot read '%s'", in->shown);
	}
}

/* Open in once: "-" is standard input.  Exits 1 when it cannot be read. */
static void open_input(struct input *in)
{
	if (strcmp(in->path, "-") == 0) {
		in->fd = STDIN_FILENO;
	} else {
		in->fd = open(in->path, O_RDONLY | O_CLOEXEC);
		if (in->fd < 0) 
			err(RM_EXIT_FAIL, "cannot open '%s'", in->shown);
	}
	if (fstat(in->fd, &in->st) < 0) 
		err(RM_EXIT_FAIL, "cannot read '%s'", in->shown);
	if (S_ISDIR(in->st.st_mode))
		fail(in, "a directory; not a CSV");
	if (S_ISREG(in->st.st_mode))
		posix_fadvise(in->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
}

/* Bytes of a pipe kept while looking for its header. */
#define MAX_PRE (16u * 1024 * 1024)

/*
 * Read a file through the CSV parser: only its header (to classify it),
 * or all of it into report r.  Each file is opened once and read once:
 * the header pass keeps what it read of a pipe, FIFO or terminal and the
 * full pass starts with those bytes (a regular file is read again from
 * its start on the same descriptor).  Exits 1 with a message on anything
 * that is not such a CSV.
 */
static void read_input(struct input *in, struct report *r, int header_only)
{
	static char *buf;
	struct reader rd = { r, in, header_only, 0, F_SYS, 0, "" };
	struct rm_csv c;
	enum rm_csv_err e = RM_CSV_OK;
	uint64_t total = 0;
	int seekable;

	if (!buf)
		buf = xmalloc(READ_BUF);
	if (header_only)
		open_input(in);
	seekable = S_ISREG(in->st.st_mode);
	if (!header_only && seekable && lseek(in->fd, 0, SEEK_SET) < 0) 
		err(RM_EXIT_FAIL, "cannot read '%s'", in->shown);
	if (rm_csv_init(&c, 0, 0) < 0)
		errx(RM_EXIT_FAIL, "out of memory");
	if (!header_only && in->npre) {
		total = in->npre;
		e = rm_csv_feed(&c, in->pre, in->npre, on_record, &rd);
		free(in->pre);
		in->pre = NULL;
		in->npre = 0;
	}
	while (!e) {
		size_t n = read_some(in, buf, READ_BUF);
		if (n == 0) {
			e = rm_csv_finish(&c, on_record, &rd);
			break;
		}
		total += (uint64_t)n;
		if (header_only && !seekable) {
			if (in->npre + n > MAX_PRE)
				fail(in, "no header in the first %u MiB; not a CSV", MAX_PRE >> 20);
			in->pre = xrealloc(in->pre, in->npre + n);
			memcpy(in->pre + in->npre, buf, n);
			in->npre += n;
		}
		e = rm_csv_feed(&c, buf, n, on_record, &rd);
	}
	if (e == RM_CSV_ESTOP && header_only && rd.kind_known) {
		in->kind = rd.kind;
		rm_csv_free(&c);
		return;
	}
	if (e == RM_CSV_ESTOP)
		fail(in, "%s", rd.why);
	if (e == RM_CSV_ETOOLONG)
		fail(in, "line %lu: a record longer than %zu bytes; not a CSV this toolkit writes",
		     c.err_line, c.max_record);
	if (e == RM_CSV_ETOOMANY)
		fail(in, "line %lu: more than %d fields; not a CSV this toolkit writes", c.err_line,
		     c.max_fields);
	if (e)
		fail(in, "line %lu: %s; not a CSV", c.err_line, rm_csv_strerror(e));
	if (total == 0 || !rd.kind_known)
		fail(in, "empty file; not a CSV");
	rm_csv_free(&c);
	if (header_only) {
		in->kind = rd.kind;
		return;
	}
	if (in->fd != STDIN_FILENO)
		close(in->fd);
	in->fd = -1;
	if (rd.rows == 0 && (rd.kind == F_SYS || rd.kind == F_JOB))
		fail(in, "no rows after the header");
	if (rd.kind == F_SYS && r->sys->samples == 0)
		fail(in, "no row has a time (epoch)");
}

static const char *out_path;   /* -o FILE */

static void parse_args(int argc, char **argv, struct opts *o)
{
	enum { O_JSON = 256, O_MD, O_SVG, O_CSV, O_NEAR, O_LOW, O_INC, O_EXC, O_TOP, O_CORES,
	       O_KMSG, O_VERSION, O_LOST, O_LOST_FROM, O_TRACE, O_SERIES,
	       O_STAGE_FB };
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, O_JSON },
		{ "markdown", no_argument, NULL, O_MD },
		{ "svg", required_argument, NULL, O_SVG },
		{ "csv", required_argument, NULL, O_CSV },
		{ "near-oom-mb", required_argument, NULL, O_NEAR },
		{ "low-disk-gb", required_argument, NULL, O_LOW },
		{ "include", required_argument, NULL, O_INC },
		{ "exclude", required_argument, NULL, O_EXC },
		{ "top", required_argument, NULL, O_TOP },
		{ "cores", required_argument, NULL, O_CORES },
		{ "kmsg", required_argument, NULL, O_KMSG },
		{ "rows-lost", required_argument, NULL, O_LOST },
		{ "rows-lost-from", required_argument, NULL, O_LOST_FROM },
		{ "stage-fallback", required_argument, NULL, O_STAGE_FB },
		{ "trace", required_argument, NULL, O_TRACE },
		{ "series", no_argument, NULL, O_SERIES },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, O_VERSION },
		{ "output", required_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 },
	};
	int c, rc;
	long n;

	o->near_oom_mb = 4096;
	o->rows_lost = -1;
	o->stage_fallback = -1;
	o->low_disk_gb = 20;
	o->top = 10;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":ho:", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out_path = optarg;
			break;
		case O_JSON:
			o->json = 1;
			break;
		case O_MD:
			o->markdown = 1;
			break;
		case O_SVG:
			o->svg = optarg;
			break;
		case O_CSV:
			o->csv = optarg;
			break;
		case O_NEAR:
			if (rm_parse_seconds(optarg, 0, 1e9, &o->near_oom_mb) < 0)
				rm_usage_error(prog, usage_line, "invalid --near-oom-mb '%s': MiB, a number from 0", optarg);
			break;
		case O_LOW:
			if (rm_parse_seconds(optarg, 0, 1e9, &o->low_disk_gb) < 0)
				rm_usage_error(prog, usage_line, "invalid --low-disk-gb '%s': GiB, a number from 0", optarg);
			break;
		case O_INC:
		case O_EXC: {
			regex_t *re = c == O_INC ? &o->inc : &o->exc;
			int *has = c == O_INC ? &o->has_inc : &o->has_exc;
			if (*has)
				regfree(re);
			rc = regcomp(re, optarg, REG_EXTENDED | REG_NOSUB);
			if (rc != 0) {
				char msg[256];
				regerror(rc, re, msg, sizeof(msg));
				rm_usage_error(prog, usage_line, "invalid %s '%s': %s",
					       c == O_INC ? "--include" : "--exclude", optarg, msg);
			}
			*has = 1;
			if (c == O_INC)
				o->inc_pat = optarg;
			else
				o->exc_pat = optarg;
			break;
		}
		case O_TOP:
			if (strcmp(optarg, "all") == 0)
				n = INT_MAX;
			else if (rm_parse_long(optarg, 1, 1000000, &n) < 0)
				rm_usage_error(prog, usage_line, "invalid --top '%s': a whole number from 1, or all", optarg);
			o->top = (int)n;
			o->top_set = 1;
			break;
		case O_CORES:
			if (rm_parse_long(optarg, 1, 65536, &n) < 0)
				rm_usage_error(prog, usage_line, "invalid --cores '%s': a whole number from 1", optarg);
			o->cores = (int)n;
			break;
		case O_KMSG:
			o->kmsg = optarg;
			break;
		case O_LOST:
			if (rm_parse_long(optarg, 0, 1000000000000L, &n) < 0)
				rm_usage_error(prog, usage_line, "invalid --rows-lost '%s': a whole number from 0", optarg);
			o->rows_lost = n;
			break;
		case O_STAGE_FB:
			if (rm_parse_long(optarg, 0, 1000000000000L, &n) < 0)
				rm_usage_error(prog, usage_line, "invalid --stage-fallback '%s': a whole number from 0", optarg);
			o->stage_fallback = n;
			break;
		case O_LOST_FROM:
			if (!*optarg || strspn(optarg, "0123456789-:.TZ") != strlen(optarg))
				rm_usage_error(prog, usage_line, "invalid --rows-lost-from '%s': an RFC 3339 time", optarg);
			o->rows_lost_from = optarg;
			break;
		case O_TRACE:
			o->trace = optarg;
			break;
		case O_SERIES:
			g_series = 1;
			break;
		case 'h':
			rm_opt_help(prog, usage_line, help_text);
		case O_VERSION:
			rm_opt_version(prog);
		default:
			rm_opt_bad(prog, usage_line, c, argv, optind);
		}
	}
	if (o->json && o->markdown)
		rm_usage_error(prog, usage_line, "--json and --markdown do not go together");
	if (optind >= argc)
		rm_usage_error(prog, usage_line, "no input files");
	if (!out_path && !o->json && !o->markdown && isatty(STDOUT_FILENO) && !getenv("NO_COLOR")) {
		const char *term = getenv("TERM");
		o->color = !term || strcmp(term, "dumb") != 0;
	}
}

/*
 * -o FILE: the report goes to a temporary file beside FILE, renamed into
 * place only when it is whole (outfile.h); an input is never the output.
 * Every exit before the end (bad input, a full disk) removes it.
 */
static struct rm_outfile out_file;
static int out_pending;

static void out_cleanup(void)
{
	if (out_pending)
		rm_out_abort(&out_file);
	out_pending = 0;
}

static void out_start(const char *const *files, int nfiles)
{
	char why[256];
	struct stat st, ost;
	int have = rm_out_stat(out_path, &ost) == 0;

	for (int i = 0; have && S_ISREG(ost.st_mode) && i < nfiles; i++)
		if (stat(files[i], &st) == 0 && rm_same_file(&st, &ost))
			errx(RM_EXIT_FAIL, "cannot write '%s': it is the input '%s'", out_path, files[i]);
	if ((g_opt.svg && rm_out_same_path(out_path, g_opt.svg)) ||
	    (g_opt.csv && rm_out_same_path(out_path, g_opt.csv)))
		rm_usage_error(prog, usage_line, "-o '%s' is also another output", out_path);
	if (rm_out_open(out_path, &out_file, why, sizeof(why)) < 0)
		errx(RM_EXIT_FAIL, "cannot write '%s': %s", out_path, why);
	if (!out_file.inherited) {
		if (dup2(out_file.fd, STDOUT_FILENO) < 0) {
			warn("cannot write '%s'", out_path);
			rm_out_abort(&out_file);
			exit(RM_EXIT_FAIL);
		}
		out_pending = 1;
		atexit(out_cleanup);
	}
}

static int out_finish(int status)
{
	char why[256];

	if (!out_pending)
		return status;
	if (status != RM_EXIT_OK) {
		out_cleanup();
		return status;
	}
	out_pending = 0;
	if (rm_out_commit(&out_file, why, sizeof(why)) < 0) {
		warnx("cannot write '%s': %s", out_path, why);
		return RM_EXIT_FAIL;
	}
	return status;
}

/*
 * --svg and --csv never overwrite an input (as sort -o would not lose
 * it) nor each other: exit 2 before anything is written.
 */
static void check_outputs(const struct input *in, int nin)
{
	const char *outs[2] = { g_opt.svg, g_opt.csv };
	const char *flags[2] = { "--svg", "--csv" };
	struct stat st;

	if (g_opt.svg && g_opt.csv && rm_out_same_path(g_opt.svg, g_opt.csv))
		rm_usage_error(prog, usage_line, "--svg and --csv name the same file");
	for (int k = 0; k < 2; k++) {
		if (!outs[k] || rm_out_stat(outs[k], &st) < 0 || !S_ISREG(st.st_mode))
			continue;
		for (int i = 0; i < nin; i++)
			if (rm_same_file(&st, &in[i].st))
				rm_usage_error(prog, usage_line, "%s '%s' is an input file; not overwritten",
					       flags[k], in[i].shown);
	}
}

/*
 * Read every file, group them into reports, fold each report, and print
 * them; --csv and --svg go to the first report that has what they need.
 */
int main(int argc, char **argv)
{
	struct input *in;
	struct report *reps;
	struct rm_buf b = { 0 };
	int nin, nrep = 0, done_csv = 0, done_svg = 0, done_trace = 0, *has_sys, status = RM_EXIT_OK;

	/* err(3) and warnx(3) name the program so, whatever the binary is called. */
	program_invocation_short_name = (char *)prog;
	signal(SIGPIPE, SIG_IGN);
	parse_args(argc, argv, &g_opt);
	nin = argc - optind;
	if (out_path)
		out_start((const char *const *)argv + optind, nin);
	in = xmalloc((size_t)nin * sizeof(*in));
	reps = xmalloc((size_t)nin * sizeof(*reps));
	memset(reps, 0, (size_t)nin * sizeof(*reps));
	for (int i = 0; i < nin; i++) {
		const char *p = argv[optind + i];
		in[i].path = p;
		in[i].shown = sanitized(p, strlen(p));
		in[i].pre = NULL;
		in[i].npre = 0;
		for (int j = 0; j < i; j++)
			if (strcmp(p, "-") == 0 && strcmp(in[j].path, "-") == 0)
				rm_usage_error(prog, usage_line, "'-' (standard input) given twice");
	}
	for (int i = 0; i < nin; i++)
		read_input(&in[i], NULL, 1);
	check_outputs(in, nin);
	/* A system CSV opens a new report unless the current one has none
	 * yet; every other file joins the current report. */
	has_sys = xmalloc((size_t)nin * sizeof(int));
	for (int i = 0; i < nin; i++) {
		if (nrep == 0 || (in[i].kind == F_SYS && has_sys[nrep - 1])) {
			reps[nrep].files = xmalloc((size_t)nin * sizeof(char *));
			has_sys[nrep++] = 0;
		}
		reps[nrep - 1].files[reps[nrep - 1].nfiles++] = in[i].path;
		if (in[i].kind == F_SYS)
			has_sys[nrep - 1] = 1;
	}
	/* Every file is read before anything is printed: bad input fails
	 * with no partial report on stdout. */
	for (int k = 0; k < nrep; k++) {
		struct report *r = &reps[k];
		/* System CSVs first: the other files' times map onto them. */
		for (int pass = 0; pass < 2; pass++)
			for (int i = 0; i < nin; i++) {
				int mine = 0;
				for (int f = 0; f < r->nfiles; f++)
					mine |= r->files[f] == in[i].path;
				if (mine && (in[i].kind == F_SYS) == (pass == 0))
					read_input(&in[i], r, 0);
			}
		report_finish(r, &g_opt);
	}
	for (int k = 0; k < nrep && status == RM_EXIT_OK; k++) {
		struct report *r = &reps[k];
		if (g_opt.csv && !done_csv && r->nexitlogs) {
			if (write_proc_csv(r, g_opt.csv) < 0) {
				warnx("cannot write '%s': %s", g_opt.csv, write_why(errno));
				status = RM_EXIT_FAIL;
			}
			done_csv = 1;
		}
		if (g_opt.svg && !done_svg && (r->sys || r->tl.known)) {
			if (write_svg(r, &g_opt, g_opt.svg) < 0) {
				warnx("cannot write '%s': %s", g_opt.svg, write_why(errno));
				status = RM_EXIT_FAIL;
			}
			done_svg = 1;
		}
		if (g_opt.trace && !done_trace && (r->nproc || r->sys || r->tl.known)) {
			if (write_trace(r, g_opt.trace) < 0) {
				warnx("cannot write '%s': %s", g_opt.trace, write_why(errno));
				status = RM_EXIT_FAIL;
			}
			done_trace = 1;
		}
	}
	if (status == RM_EXIT_OK && g_opt.csv && !done_csv) {
		warnx("--csv: no rm-tree exit log among the inputs");
		status = RM_EXIT_FAIL;
	}
	if (status == RM_EXIT_OK && g_opt.svg && !done_svg) {
		warnx("--svg: no system CSV or rm-tree timeline among the inputs");
		status = RM_EXIT_FAIL;
	}
	if (status == RM_EXIT_OK && g_series) {
		status = print_series(&b, reps, nrep);
		rm_out(prog, &b);
	}
	for (int k = 0; k < nrep && status == RM_EXIT_OK && !g_series; k++) {
		if (k > 0 && !g_opt.json)
			rm_buf_addc(&b, '\n');
		if (g_opt.json)
			print_json(&b, &reps[k], &g_opt);
		else if (g_opt.markdown)
			print_markdown(&b, &reps[k], &g_opt);
		else
			print_text(&b, &reps[k], &g_opt);
		rm_out(prog, &b);
	}
	rm_buf_free(&b);
	/* Filters that match nothing: the summary says so, but with -o it is
	 * in a file; a word here too (MW24). */
	for (int k = 0; k < nrep && out_path && status == RM_EXIT_OK; k++) {
		size_t shown = 0;
		for (size_t i = 0; i < reps[k].nproc; i++)
			shown += reps[k].procs[i].shown;
		if ((g_opt.has_inc || g_opt.has_exc) && reps[k].nproc && !shown) {
			warnx("warning: no process matches the filters; '%s' says which names were seen",
			      out_path);
			break;
		}
	}
	for (int k = 0; k < nrep; k++)
		report_free(&reps[k]);
	for (int i = 0; i < nin; i++)
		free(in[i].shown);
	free(reps);
	free(in);
	free(has_sys);
	if (g_opt.has_inc)
		regfree(&g_opt.inc);
	if (g_opt.has_exc)
		regfree(&g_opt.exc);
	status = rm_finish_stdout(prog, status);
	return out_path ? out_finish(status) : status;
}
