/*
 * rm-summarize: the after-the-fact answer from the toolkit's CSVs.
 *
 * Usage and options: the table cli below (rm-summarize --help prints it).
 *
 * Each FILE is recognised by its header: a system CSV (rm-sample's, or the
 * seed script's 14 columns), rm-tree's exit log, its --job row or its
 * --timeline.  Files are grouped into reports in the order given: a system
 * CSV starts a new report unless the current one has none yet, and every
 * other file joins the current report.  Each report prints as text (the
 * default), one JSON object a line (--json), or Markdown (--markdown).
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
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compare.h"
#include "csvout.h"
#include "fold.h"
#include "gate.h"
#include "history.h"
#include "memwatch.h"
#include "model.h"
#include "mwrun.h"
#include "now.h"
#include "outfile.h"
#include "render_json.h"
#include "render_md.h"
#include "render_text.h"
#include "runinfo.h"
#include "series.h"
#include "svg.h"
#include "trace.h"

struct opts g_opt;

static const char *out_path;   /* -o FILE */
static int compare;            /* --compare OLD NEW */
static struct gate gate;       /* --fail-on LIST */
static const char *run_csv;    /* --run-csv FILE */
static const char *history;    /* --history DIR */
static const char *now_live;   /* --now LIVE */

#define OFF(f) offsetof(struct opts, f)
/* O_SAMPLER_STATUS to O_PROCS_GAP in runinfo.h's order: RI_STATUS ... RI_PROCS_GAP. */
enum { O_JSON = RM_CLI_LONG, O_MD, O_SVG, O_CSV, O_TRACE, O_NEAR, O_LOW, O_INC, O_EXC, O_TOP,
       O_CORES, O_KMSG, O_LOST, O_LOST_FROM, O_STAGE_FB, O_SAMPLER_STATUS, O_GAP_NOTE,
       O_COMPANIONS, O_KEEP_ERROR, O_CHECK, O_PROCS_GAP, O_SERIES, O_COMPARE, O_FAIL_ON, O_RUN_CSV, O_HISTORY, O_NOW,
       O_MW, O_MW_CSV, O_MW_TL, O_MW_IV, O_MW_ARG, O_ELSE_CMD };

static const struct rm_cli_opt options[] = {
	{ O_JSON, "json", NULL, .kind = RM_CLI_TRUE, .off = OFF(json),
	  .help = "JSON, one object per report" },
	{ O_MD, "markdown", NULL, .kind = RM_CLI_TRUE, .off = OFF(markdown),
	  .help = "Markdown, for a CI job summary" },
	{ O_SVG, "svg", "FILE", .kind = RM_CLI_STRING, .off = OFF(svg),
	  .help = "a self-contained SVG timeline of the system CSV" },
	{ O_CSV, "csv", "FILE", .kind = RM_CLI_STRING, .off = OFF(csv),
	  .help = "per-process peaks of the exit log as CSV" },
	{ O_TRACE, "trace", "FILE", .kind = RM_CLI_STRING, .off = OFF(trace),
	  .help = "the run as Chrome Trace Event JSON, for Perfetto or\n"
		  "chrome://tracing: processes on lanes, stages, OOM\n"
		  "kills, memory, CPU, disk and swap counters" },
	{ O_NEAR, "near-oom-mb", "MB", .help = "available memory below MB is near-OOM (4096)" },
	{ O_LOW, "low-disk-gb", "GB", .help = "available disk below GB is low (20)" },
	{ O_INC, "include", "ERE",
	  .help = "show only processes whose name, command line or\n"
		  "unit matches (totals are not changed)" },
	{ O_EXC, "exclude", "ERE", .help = "do not show processes that match" },
	{ O_TOP, "top", "N|all", .synarg = "N",
	  .help = "processes and units listed (10; the JSON lists\n"
		  "every process unless --top is given)" },
	{ O_CORES, "cores", "N", .help = "cores for the RAM-bound rule (this machine's)" },
	{ O_KMSG, "kmsg", "FILE", .kind = RM_CLI_STRING, .off = OFF(kmsg),
	  .help = "kernel log for OOM victims (/dev/kmsg)" },
	{ 'o', "output", "FILE",
	  .help = "the report to FILE (written whole, then renamed into\n"
		  "place; a symbolic link there is not followed)" },
	{ O_LOST, "rows-lost", "N",
	  .help = "N rows of the run could not be written (rm-monitor\n"
		  "passes what rm-sample -o reported)" },
	{ O_LOST_FROM, "rows-lost-from", "TIME",
	  .help = "when the first of them was sampled (RFC 3339)" },
	{ O_STAGE_FB, "stage-fallback", "N",
	  .help = "N rows took the newest log's name as their stage:\n"
		  "the stage file was missing or empty (rm-monitor\n"
		  "passes what rm-sample reported)" },
	{ O_SAMPLER_STATUS, "sampler-status", "FILE",
	  .help = "an rm-sample --status file of the run (one per\n"
		  "sampler): its lost rows, stage fallbacks and gaps\n"
		  "are added to the report" },
	{ O_GAP_NOTE, "gap-note", "TEXT",
	  .help = "a line for the text report's \"Gaps in sampling\"" },
	{ O_PROCS_GAP, "procs-gap", "TEXT",
	  .help = "the process log (rm-tree) has a gap, TEXT says when:\n"
		  "the process data is not called complete" },
	{ O_COMPANIONS, "companions", NULL,
	  .help = "X.csv brings X.procs.csv, X.stats.csv,\n"
		  "X.containers.csv and X.job.csv beside it" },
	{ O_KEEP_ERROR, "keep-error", NULL,
	  .help = "with -o: input that cannot be summarized leaves its\n"
		  "message in FILE ({\"error\": ...} with --json)" },
	{ O_CHECK, "check", NULL, .help = "check the options, read nothing, exit 0" },
	{ O_SERIES, "series", NULL, .kind = RM_CLI_TRUE, .off = OFF(series),
	  .help = "print the columns over time for gnuplot instead\n"
		  "of the report (see rm-summarize(1))" },
	{ O_COMPARE, "compare", NULL,
	  .help = "FILE... is two runs, OLD then NEW (each a run's CSV,\n"
		  "its companions found beside it): what changed,\n"
		  "biggest first" },
	{ O_FAIL_ON, "fail-on", "LIST",
	  .help = "exit 3 when a condition holds: oom, near-oom, swap,\n"
		  "low-disk, peak=SIZE, unit=SIZE, used=SIZE, and with\n"
		  "--compare grow=PCT, grow-time=PCT, grow-cpu=PCT" },
	{ O_RUN_CSV, "run-csv", "FILE",
	  .help = "the run in one CSV row (start, duration, exit, peak\n"
		  "memory, OOM kills, heaviest unit) for --history" },
	{ O_HISTORY, "history", "DIR",
	  .help = "list the runs of DIR from their .run.csv files,\n"
		  "oldest first, with the change of each peak (--json;\n"
		  "--csv FILE for the rows); reads no FILE" },
	{ O_NOW, "now", "LIVE",
	  .help = "a running build now, from its CSV (companions found\n"
		  "beside it) and rm-tree --live's snapshot LIVE\n"
		  "(rm-monitor status)" },
	{ O_MW, "memwatch", NULL,
	  .help = "memwatch's text, or with --json its JSON, of an\n"
		  "rm-tree --exec job (rm-run run); --include and\n"
		  "--exclude are then Rust regexes on the command line" },
	{ O_MW_CSV, "memwatch-csv", "FILE",
	  .help = "memwatch's per-process CSV to FILE" },
	{ O_MW_TL, "memwatch-timeline", "FILE",
	  .help = "memwatch's timeline CSV to FILE (and the JSON's timeline)" },
	{ O_MW_IV, "memwatch-interval", "MS", .help = "the sampling interval for the JSON, in ms" },
	{ O_MW_ARG, "memwatch-arg", "ARG", .help = "the next word of the job's command (repeated)" },
	{ O_ELSE_CMD, "elsewhere-cmdlines", NULL, .kind = RM_CLI_TRUE, .off = OFF(elsewhere_cmdlines),
	  .help = "show other users' command lines under \"Elsewhere\n"
		  "on this host\" (not copied into the report without it)" },
	RM_CLI_END,
};

static const struct rm_cli cli = {
	prog,
	(const char *const[]){
		"[--json | --markdown] [--svg] [--csv]\n"
		"[--near-oom-mb] [--low-disk-gb] [--include]\n"
		"[--exclude] [--top] [--cores] [--kmsg]\n"
		"[--rows-lost [--rows-lost-from]] [--trace] [--series]\n"
		"[--stage-fallback] [--sampler-status]... [--gap-note]... [--procs-gap]...\n"
		"[--companions] [--keep-error] [--check] [--fail-on]\n"
		"[--elsewhere-cmdlines] [-o] FILE...",
		"--compare [--json | --markdown] [--fail-on] [-o] OLD NEW",
		"--history DIR [--json | --csv FILE]",
		"--now [--json] CSV",
		"--memwatch [--json] [--memwatch-csv] [--memwatch-timeline]\n"
		"[--memwatch-interval] [--memwatch-arg]... LOG JOB [TIMELINE]",
		NULL,
	},
	"Summarize rm-sample and seed monitor CSVs (peaks with time, stage and\n"
	"context; near-OOM and low-disk runs; OOM kills; stages; verdicts) and\n"
	"rm-tree exit logs, job rows and timelines (job peak, processes, groups,\n"
	"compile units, memory per job).",
	options,
	NULL,
};

/* "invalid --NAME 'ARG': WHY" for the option with this key: exit 2. */
static void __attribute__((noreturn)) invalid(int key, const char *arg, const char *why)
{
	rm_cli_usage_error(&cli, "invalid --%s '%s': %s", rm_cli_find(&cli, key)->name, arg, why);
}

/* A whole number from min to max, or exit 2 saying why. */
static long whole(int key, const char *arg, long min, long max, const char *why)
{
	long n;

	if (rm_parse_long(arg, min, max, &n) < 0)
		invalid(key, arg, why);
	return n;
}

/* --include, --exclude: the last one given counts; a bad ERE is exit 2. */
static void filter(int key, const char *arg, regex_t *re, int *has, const char **pat)
{
	char msg[256];
	int rc;

	if (g_mw.on) {
		if (memwatch_filter(key == O_INC, arg, msg, sizeof(msg)) < 0)
			invalid(key, arg, msg);
		return;
	}
	if (*has)
		regfree(re);
	rc = regcomp(re, arg, REG_EXTENDED | REG_NOSUB);
	if (rc != 0) {
		regerror(rc, re, msg, sizeof(msg));
		invalid(key, arg, msg);
	}
	*has = 1;
	*pat = arg;
}

/* The options of the other forms: --compare, --fail-on, --run-csv,
 * --history, --now. */
static void mode_opt(int c, const char *arg)
{
	char why[200];

	switch (c) {
	case O_COMPARE:
		compare = 1;
		break;
	case O_FAIL_ON:
		if (gate_parse(&gate, arg, why, sizeof(why)) < 0)
			invalid(c, arg, why);
		break;
	case O_RUN_CSV:
		run_csv = arg;
		break;
	case O_HISTORY:
		history = arg;
		break;
	case O_NOW:
		now_live = arg;
		break;
	}
}

/* --memwatch and its options; --include and --exclude after --memwatch
 * are Rust regexes. */
static void memwatch_opt(int c, const char *arg)
{
	double ms;

	switch (c) {
	case O_MW:
		if (g_opt.has_inc || g_opt.has_exc)
			rm_cli_usage_error(&cli, "--memwatch goes before --include and --exclude");
		g_mw.on = 1;
		break;
	case O_MW_CSV:
		g_mw.csv = arg;
		break;
	case O_MW_TL:
		g_mw.timeline = arg;
		break;
	case O_MW_IV:
		if (rm_parse_seconds(arg, 1, 86400000, &ms) < 0)
			invalid(c, arg, "milliseconds, from 1");
		g_mw.interval_ms = ms;
		break;
	case O_MW_ARG:
		g_mw.argv = xrealloc(g_mw.argv, (size_t)(g_mw.argc + 1) * sizeof(*g_mw.argv));
		g_mw.argv[g_mw.argc++] = (char *)arg;
		break;
	}
}

/* What goes with what (exit 2 if not). */
static void check_modes(struct opts *o)
{
	if (o->json && o->markdown)
		rm_cli_usage_error(&cli, "--json and --markdown do not go together");
	if (runinfo_keep_error && !out_path)
		rm_cli_usage_error(&cli, "--keep-error needs -o FILE");
	if (gate_needs_compare(&gate) && !compare)
		rm_cli_usage_error(&cli, "--fail-on grow=, grow-time= and grow-cpu= need --compare");
	if (compare && (o->svg || o->csv || o->trace || o->series))
		rm_cli_usage_error(&cli, "--compare writes no --svg, --csv, --trace or --series");
	if (now_live && (compare || o->markdown || o->svg || o->csv || o->trace || o->series ||
			 run_csv || gate.n))
		rm_cli_usage_error(&cli, "--now LIVE CSV takes only --json");
	if (!g_mw.on && (g_mw.csv || g_mw.timeline || g_mw.argc || !isnan(g_mw.interval_ms)))
		rm_cli_usage_error(&cli, "--memwatch-csv, --memwatch-timeline, --memwatch-interval "
					 "and --memwatch-arg need --memwatch");
	if (g_mw.on && (compare || now_live || o->markdown || o->svg || o->csv || o->trace ||
			o->series || run_csv || history))
		rm_cli_usage_error(&cli, "--memwatch takes only --json, its own options, --include, "
					 "--exclude and -o");
	if (compare || now_live)  /* each run's CSV brings its companions */
		runinfo_opt(O_COMPANIONS - O_SAMPLER_STATUS, NULL);
}

/*
 * The options, each checked as it is read (exit 2 with the usage); the
 * table stores the plain ones, the rest are here.
 */
static void parse_args(int argc, char **argv, struct opts *o)
{
	int c;

	*o = (struct opts){ .near_oom_mb = 4096, .rows_lost = -1, .stage_fallback = -1,
			    .low_disk_gb = 20, .top = 10 };
	while ((c = rm_cli_next(&cli, 0, argc, argv, o)) != -1) {
		switch (c) {
		case 'o':
			out_path = optarg;
			break;
		case O_NEAR:
		case O_LOW:
			if (rm_parse_seconds(optarg, 0, 1e9, c == O_NEAR ? &o->near_oom_mb : &o->low_disk_gb) < 0)
				invalid(c, optarg, c == O_NEAR ? "MiB, a number from 0" : "GiB, a number from 0");
			break;
		case O_INC:
			filter(c, optarg, &o->inc, &o->has_inc, &o->inc_pat);
			break;
		case O_EXC:
			filter(c, optarg, &o->exc, &o->has_exc, &o->exc_pat);
			break;
		case O_TOP:
			o->top = strcmp(optarg, "all") == 0 ? INT_MAX :
				 (int)whole(c, optarg, 1, 1000000, "a whole number from 1, or all");
			o->top_set = 1;
			break;
		case O_CORES:
			o->cores = (int)whole(c, optarg, 1, 65536, "a whole number from 1");
			break;
		case O_LOST:
			o->rows_lost = whole(c, optarg, 0, 1000000000000L, "a whole number from 0");
			break;
		case O_STAGE_FB:
			o->stage_fallback = whole(c, optarg, 0, 1000000000000L, "a whole number from 0");
			break;
		case O_LOST_FROM:
			if (!*optarg || strspn(optarg, "0123456789-:.TZ") != strlen(optarg))
				invalid(c, optarg, "an RFC 3339 time");
			o->rows_lost_from = optarg;
			break;
		case O_COMPARE:
		case O_FAIL_ON:
		case O_RUN_CSV:
		case O_HISTORY:
		case O_NOW:
			mode_opt(c, optarg);
			break;
		default:  /* --memwatch and its options */
			memwatch_opt(c, optarg);
			break;
		case O_SAMPLER_STATUS:
		case O_GAP_NOTE:
		case O_COMPANIONS:
		case O_KEEP_ERROR:
		case O_CHECK:
		case O_PROCS_GAP:
			runinfo_opt(c - O_SAMPLER_STATUS, optarg);
			break;
		}
	}
	check_modes(o);
	if (runinfo_check)
		exit(RM_EXIT_OK);
	if (history) {
		if (optind < argc || compare || o->markdown || o->svg || o->trace || run_csv)
			rm_cli_usage_error(&cli, "--history DIR reads no FILE and takes only --json or --csv");
		if (o->json && o->csv)
			rm_cli_usage_error(&cli, "--history: --json or --csv, not both");
		return;
	}
	if (optind >= argc)
		rm_cli_usage_error(&cli, "no input files");
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
		rm_cli_usage_error(&cli, "-o '%s' is also another output", out_path);
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
	const char *outs[3] = { g_opt.svg, g_opt.csv, run_csv };
	const char *flags[3] = { "--svg", "--csv", "--run-csv" };
	struct stat st;

	if (g_opt.svg && g_opt.csv && rm_out_same_path(g_opt.svg, g_opt.csv))
		rm_cli_usage_error(&cli, "--svg and --csv name the same file");
	for (int k = 0; k < 3; k++) {
		if (!outs[k] || rm_out_stat(outs[k], &st) < 0 || !S_ISREG(st.st_mode))
			continue;
		for (int i = 0; i < nin; i++)
			if (rm_same_file(&st, &in[i].st))
				rm_cli_usage_error(&cli, "%s '%s' is an input file; not overwritten",
						   flags[k], in[i].shown);
	}
}

/* --csv, --svg and --trace, each from the first report that has what it
 * needs; an exit status. */
static int write_files(const struct report *reps, int nrep)
{
	int done_csv = 0, done_svg = 0, done_trace = 0, status = RM_EXIT_OK;

	if (g_mw.on) {
		for (int k = 0; k < nrep; k++)
			if (reps[k].nexitlogs)
				return write_memwatch_files(&reps[k]) < 0 ? RM_EXIT_FAIL : RM_EXIT_OK;
		warnx("--memwatch: no rm-tree exit log among the inputs");
		return RM_EXIT_FAIL;
	}

	for (int k = 0; k < nrep && status == RM_EXIT_OK; k++) {
		const struct report *r = &reps[k];
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
	for (int k = 0; k < nrep && status == RM_EXIT_OK && run_csv; k++) {
		if (write_run_csv(&reps[k], run_csv) < 0) {
			warnx("cannot write '%s': %s", run_csv, write_why(errno));
			status = RM_EXIT_FAIL;
		}
		break;  /* the first report's run */
	}
	if (status == RM_EXIT_OK && g_opt.csv && !done_csv) {
		warnx("--csv: no rm-tree exit log among the inputs");
		status = RM_EXIT_FAIL;
	}
	if (status == RM_EXIT_OK && g_opt.svg && !done_svg) {
		warnx("--svg: no system CSV or rm-tree timeline among the inputs");
		status = RM_EXIT_FAIL;
	}
	return status;
}

/*
 * --compare OLD NEW: each run read into its own report (OLD's files are
 * in[0..k), NEW's in[k..nin): its CSV and the companions found beside it),
 * their comparison printed, and the gate judged on NEW against OLD.
 */
static int run_comparison(struct input *in, int nin, int k, int *gated)
{
	struct rm_buf b = { 0 }, lines = { 0 }, notes = { 0 };
	struct report *ra, *rb;
	int na = 0, nb = 0;

	if (k <= 0 || k >= nin)
		errx(RM_EXIT_USAGE, "--compare needs two different runs, OLD and NEW "
				    "(the same file named twice is read once)");
	ra = model_build(in, k, &g_opt, &na);
	rb = model_build(in + k, nin - k, &g_opt, &nb);
	if (na != 1 || nb != 1)
		errx(RM_EXIT_USAGE, "--compare: OLD and NEW must each be one run (read %d and %d)", na, nb);
	print_compare(&b, ra, rb, &g_opt);
	if (gate_eval(&gate, ra, rb, &lines, &notes) > 0)
		*gated = 1;
	gate_lines(&b, &lines, 0, g_opt.json, g_opt.markdown);
	gate_stderr(&notes);
	gate_stderr(&lines);
	rm_out(&b);
	rm_buf_free(&b);
	rm_buf_free(&lines);
	rm_buf_free(&notes);
	report_free(ra);
	report_free(rb);
	free(ra);
	free(rb);
	return RM_EXIT_OK;
}

/* The reports on stdout, in the renderer the options pick. */
static int print_reports(const struct report *reps, int nrep, int *gated)
{
	struct rm_buf b = { 0 };
	int status = RM_EXIT_OK;

	if (g_opt.series) {
		status = print_series(&b, reps, nrep);
		rm_out(&b);
	}
	for (int k = 0; k < nrep && !g_opt.series; k++) {
		struct rm_buf lines = { 0 }, notes = { 0 };
		size_t from;
		if (k > 0 && !g_opt.json)
			rm_buf_addc(&b, '\n');
		from = b.len;
		if (g_mw.on)
			print_memwatch(&b, &reps[k], g_opt.json);
		else if (g_opt.json)
			print_json(&b, &reps[k], &g_opt);
		else if (g_opt.markdown)
			print_markdown(&b, &reps[k], &g_opt);
		else
			print_text(&b, &reps[k], &g_opt);
		if (gate_eval(&gate, NULL, &reps[k], &lines, &notes) > 0)
			*gated = 1;
		gate_lines(&b, &lines, from, g_opt.json, g_opt.markdown);
		gate_stderr(&notes);
		gate_stderr(&lines);
		rm_buf_free(&lines);
		rm_buf_free(&notes);
		rm_out(&b);
	}
	if (status == RM_EXIT_OK) {
		runinfo_text(&b, !g_opt.series && !g_opt.json && !g_opt.markdown);
		rm_out(&b);
	}
	rm_buf_free(&b);
	return status;
}

/* Filters that match nothing: the summary says so, but with -o it is in
 * a file; a word on stderr too. */
static void warn_filtered_out(const struct report *reps, int nrep)
{
	for (int k = 0; k < nrep; k++) {
		if ((g_opt.has_inc || g_opt.has_exc) && reps[k].nrows && !reps[k].nshown) {
			warnx("warning: no process matches the filters; '%s' says which names were seen",
			      out_path);
			break;
		}
	}
}

/* Exit logs fold as read (fold.c) but for --compare, --fail-on, --memwatch
 * (and RM_SUMMARIZE_HOLD=1, a test knob); a list of over 1,000 processes
 * comes from the sort (spill.c), written out as made but for --fail-on. */
static void how_to_read(struct opts *o)
{
	const char *hold = getenv("RM_SUMMARIZE_HOLD");
	int summary = !compare && !history && !g_mw.on && !now_live;

	o->fold = summary && !gate.n && !(hold && *hold);
	o->list_spill = summary && (o->top > 1000 || (o->json && !o->top_set));
	o->stream = !gate.n && !compare && !g_mw.on;
}

/*
 * Read every file into reports (model.c), then write the files asked for
 * and print the reports in the format asked for.
 */
int main(int argc, char **argv)
{
	struct input *in;
	struct report *reps = NULL;
	const char *newrun;
	int nin, nrep = 0, status, gated = 0;

	rm_set_prog(prog);
	signal(SIGPIPE, SIG_IGN);
	if (argc > 1 && strcmp(argv[1], "--memwatch-run") == 0)
		return memwatch_run(argc - 1, argv + 1, &g_opt);
	parse_args(argc, argv, &g_opt);
	if (history)
		return rm_finish_stdout(print_history(history, &g_opt));
	if (compare && argc - optind != 2)
		rm_cli_usage_error(&cli, "--compare takes two runs: OLD NEW");
	newrun = compare ? argv[optind + 1] : NULL;
	/* --svg A.svg X.csv, as the docs show it: X.csv's companions, found
	 * beside it as --companions finds them, say whose each OOM kill was
	 * (without an exit log it is drawn as of unknown scope). */
	if (g_opt.svg && !now_live && argc - optind == 1)
		runinfo_opt(RI_COMPANIONS, NULL);
	argc = runinfo_start(argc, &argv, optind, out_path, g_opt.json, &g_opt.rows_lost,
			     &g_opt.rows_lost_from, &g_opt.stage_fallback);
	g_opt.events_dropped = runinfo_events_dropped();
	nin = argc - optind;
	if (out_path)
		out_start((const char *const *)argv + optind, nin);
	for (int i = 0; i < nin; i++)
		for (int j = 0; j < i; j++)
			if (strcmp(argv[optind + i], "-") == 0 && strcmp(argv[optind + j], "-") == 0)
				rm_cli_usage_error(&cli, "'-' (standard input) given twice");
	how_to_read(&g_opt);
	in = inputs_open(argv + optind, nin);
	check_outputs(in, nin);
	if (compare) {
		int k = 0;
		while (k < nin && argv[optind + k] != newrun)
			k++;
		status = run_comparison(in, nin, k, &gated);
	} else if (now_live) {
		struct rm_buf b = { 0 };
		reps = model_build(in, nin, &g_opt, &nrep);
		if (nrep != 1 || !reps[0].sys)
			errx(RM_EXIT_USAGE, "--now needs one run's system CSV");
		print_now(&b, &reps[0], in[0].path, now_live, &g_opt);
		rm_out(&b);
		rm_buf_free(&b);
		status = RM_EXIT_OK;
	} else {
		reps = model_build(in, nin, &g_opt, &nrep);
		status = write_files(reps, nrep);
		if (status == RM_EXIT_OK)
			status = print_reports(reps, nrep, &gated);
	}
	if (status == RM_EXIT_OK && out_path)
		warn_filtered_out(reps, nrep);
	for (int k = 0; k < nrep; k++)
		report_free(&reps[k]);
	free(reps);
	inputs_free(in, nin);
	if (g_opt.has_inc)
		regfree(&g_opt.inc);
	if (g_opt.has_exc)
		regfree(&g_opt.exc);
	status = rm_finish_stdout(status);
	status = out_path ? out_finish(status) : status;
	/* The gate's 3 only where all else went right. */
	return status == RM_EXIT_OK && gated ? RM_EXIT_GATE : status;
}
