/*
 * rm-sample: one system-wide row per tick, for the build monitor.
 *
 * Usage and options: the table cli below (rm-sample --help prints it).
 * The parts: rm-sample.h.
 *
 * Without -i, prints the header and one row, its CPU % measured over a
 * short window.  With -i, prints a row every SEC seconds (on absolute
 * deadlines) until COUNT rows, the end of PID (then one last row, so a
 * kill that ended it is recorded), or SIGINT/SIGTERM/SIGHUP.
 * --energy and --gpu append their columns after the default ones (lib/energy
 * and lib/gpu; empty where there is no RAPL or GPU, or it is not readable).
 */
#include "rm-sample.h"

const char prog[] = "rm-sample";

#define OFF(f) offsetof(struct opts, f)
enum { O_WATCH = RM_CLI_LONG, O_DISK, O_STAGEFILE, O_LOGDIR, O_CTX, O_COMP, O_ENERGY, O_GPU,
       O_PROMFILE, O_PROMLABEL, O_LISTEN, O_MINAGE, O_EXPOSE, O_CGPATH, O_STATUS, O_CHECK,
       O_SEED };

static const struct rm_cli_opt options[] = {
	{ 'i', "interval", "SEC", .kind = RM_CLI_INTERVAL, .off = OFF(interval),
	  .help = "seconds between rows (0.001 to 86400)" },
	{ 'n', "count", "COUNT", .kind = RM_CLI_COUNT, .off = OFF(count),
	  .help = "stop after COUNT rows" },
	{ O_WATCH, "watch-pid", "PID",
	  .help = "stop as soon as PID ends, after one last row; given\n"
		  "more than once (at most 8), when any of them ends" },
	{ 'f', "format", "FMT", .kind = RM_CLI_FORMAT, .off = OFF(fmt), .synarg = "csv|jsonl|prom",
	  .help = "csv (default), jsonl or prom" },
	{ 'H', "no-header", NULL, .kind = RM_CLI_FALSE, .off = OFF(header),
	  .help = "no CSV header line" },
	{ 'o', "output", "FILE", .kind = RM_CLI_STRING, .off = OFF(output),
	  .help = "append rows to FILE (the header only when it is empty);\n"
		  "rows a full or failing filesystem refuses are counted,\n"
		  "sampling goes on, and the count is reported at the end" },
	{ O_DISK, "disk-path", "PATH", .kind = RM_CLI_STRING, .off = OFF(disk_path),
	  .help = "filesystem for disk_avail_gb, disk_pct (default /)" },
	{ O_STAGEFILE, "stage-file", "FILE", .kind = RM_CLI_STRING, .off = OFF(stage_file),
	  .help = "stage = first line of FILE, trimmed" },
	{ O_LOGDIR, "stage-log-dir", "DIR", .kind = RM_CLI_STRING, .off = OFF(log_dir),
	  .help = "stage = newest *.log in DIR (without .log) unless\n"
		  "--stage-file has one; context = its last non-empty line" },
	{ O_CTX, "context-match", "ERE",
	  .help = "context = the last line matching ERE instead" },
	{ O_COMP, "compilers", "LIST",
	  .help = "comma-separated names counted in compilers (default:\n"
		  "gcc's cc1*, clang, rustc, LTO and the linkers, as\n"
		  "rm-tree --compilers lists them)" },
	{ O_ENERGY, "energy", NULL, .kind = RM_CLI_TRUE, .off = OFF(energy),
	  .help = "add pkg_w: CPU package watts over the last interval" },
	{ O_GPU, "gpu", NULL, .kind = RM_CLI_TRUE, .off = OFF(gpu),
	  .help = "add gpu_busy_pct (max over cards), gpu_vram_used_mb\n"
		  "and gpu_vram_total_mb (sums over cards)" },
	{ O_PROMFILE, "prom-file", "FILE", .kind = RM_CLI_STRING, .off = OFF(prom_file),
	  .help = "after every row also replace FILE, atomically, with\n"
		  "the row as Prometheus text" },
	{ O_PROMLABEL, "prom-label", "NAME=VALUE",
	  .help = "add this label to every --prom-file sample (repeatable)" },
	{ O_LISTEN, "listen", "ADDR:PORT", .kind = RM_CLI_STRING, .off = OFF(listen),
	  .help = "serve GET /metrics (Prometheus), /usage?pid=N (JSON)\n"
		  "and /healthz; \":PORT\" is 127.0.0.1, \"[::1]:PORT\" IPv6,\n"
		  "other addresses written out; port 0 picks a free one;\n"
		  "unix:PATH a Unix socket (the peer's uid is exact)" },
	{ O_MINAGE, "min-age", "SEC",
	  .help = "without -i, a scrape reuses a sample younger than SEC\n"
		  "(default 1; 0: every scrape takes a sample)" },
	{ O_EXPOSE, "expose-cmdline", NULL, .kind = RM_CLI_TRUE, .off = OFF(expose_cmd),
	  .help = "/usage shows command lines (never by default, on any\n"
		  "address: loopback is every local user)" },
	{ O_CGPATH, "cgroup-path", "PATH|auto",
	  .help = "add cg_mem_used_mb, cg_mem_limit_mb, cg_mem_avail_mb,\n"
		  "cg_swap_used_mb, cg_oom_kills, cg_psi_mem_full of this\n"
		  "memory cgroup (auto: --watch-pid's, else our own), and\n"
		  "cores (affinity capped by CPU quotas)" },
	{ O_STATUS, "status", "FILE", .kind = RM_CLI_STRING, .off = OFF(status_file),
	  .help = "keep FILE (rewritten every row) saying rows_written,\n"
		  "rows_lost, first_lost, gaps, stage_fallback and\n"
		  "final=1 at a clean end" },
	{ O_SEED, "seed-columns", NULL, .kind = RM_CLI_TRUE, .off = OFF(seed_cols),
	  .help = "only the seed monitor's 14 columns, in its formats:\n"
		  "whole numbers (epoch in seconds, ISO time without a\n"
		  "fraction), load1 with 2 decimals, context quoted" },
	{ O_CHECK, "check", NULL, .kind = RM_CLI_TRUE, .off = OFF(check),
	  .help = "check every option and the files, then exit 0" },
	RM_CLI_END,
};

const struct rm_cli cli = {
	prog,
	(const char *const[]){
		"[-H] [-i] [-n] [--watch-pid]... [-f]\n"
		"[-o] [--disk-path] [--stage-file] [--stage-log-dir]\n"
		"[--context-match] [--compilers] [--energy] [--gpu]\n"
		"[--prom-file] [--prom-label] [--status] [--check]\n"
		"[--listen [--min-age] [--expose-cmdline]]\n"
		"[--cgroup-path] [--seed-columns]",
		NULL,
	},
	"Print one system-wide row: load, CPU, memory, swap, disk, live compilers,\n"
	"build stage and log context, OOM kills and pressure.  With -i, a row\n"
	"every SEC seconds.",
	options,
	NULL,
};

static void split_names(struct opts *o, const char *list)
{
	char *p, *tok, *save = NULL;

	free(o->names_store);
	o->names_store = strdup(list);
	if (!o->names_store)
		errx(RM_EXIT_FAIL, "out of memory");
	o->nnames = 0;
	for (p = o->names_store; (tok = strtok_r(p, ",", &save)) != NULL; p = NULL) {
		if (o->nnames == MAX_NAMES)
			rm_cli_usage_error(&cli, "too many names in --compilers (at most %d)", MAX_NAMES);
		o->names[o->nnames++] = tok;
	}
	if (o->nnames == 0)
		rm_cli_usage_error(&cli, "empty --compilers list");
}

/* NAME=VALUE, NAME a Prometheus label name, added to o->prom_labels. */
static void add_prom_label(struct opts *o, const char *arg)
{
	const char *eq = strchr(arg, '=');
	char clean[RM_TEXT_MAX + 1];
	size_t n = eq ? (size_t)(eq - arg) : 0;
	int ok = n > 0 && !(arg[0] >= '0' && arg[0] <= '9') && strncmp(arg, "__", 2) != 0;

	for (size_t i = 0; ok && i < n; i++)
		ok = (arg[i] >= 'a' && arg[i] <= 'z') || (arg[i] >= 'A' && arg[i] <= 'Z') ||
		     (arg[i] >= '0' && arg[i] <= '9') || arg[i] == '_';
	if (!ok || (n == 5 && strncmp(arg, "stage", 5) == 0))
		rm_cli_usage_error(&cli,
				   "invalid --prom-label '%s': NAME=VALUE, NAME a label name other than stage", arg);
	if (o->prom_labels.len)
		rm_buf_addc(&o->prom_labels, ',');
	rm_buf_add(&o->prom_labels, arg, n);
	rm_buf_addc(&o->prom_labels, '=');
	rm_sanitize(eq + 1, strlen(eq + 1), clean, sizeof(clean));
	rm_buf_prom_label(&o->prom_labels, clean);
}

static void parse_args(int argc, char **argv, struct opts *o)
{
	int c, rc;

	memset(o, 0, sizeof(*o));
	o->header = 1;
	o->disk_path = "/";
	o->min_age = -1;   /* 1 unless given: see serve_check_args */
	split_names(o, DEFAULT_COMPILERS);
	/* The table stores the plain options; the rest are here. */
	while ((c = rm_cli_next(&cli, 0, argc, argv, o)) != -1) {
		switch (c) {
		case O_WATCH:
			/* Given more than once: the stream ends when any ends. */
			if (o->nwatch == RM_TICK_WATCH_MAX)
				rm_cli_usage_error(&cli, "at most %d --watch-pid", RM_TICK_WATCH_MAX);
			rm_cli_value(&cli, RM_CLI_WATCH_PID, optarg, &o->watch[o->nwatch++]);
			o->watch_pid = o->watch[0];
			break;
		case O_CTX:
			if (o->has_re)
				regfree(&o->ctx_re);
			rc = regcomp(&o->ctx_re, optarg, REG_EXTENDED | REG_NOSUB);
			if (rc != 0) {
				char msg[256];
				regerror(rc, &o->ctx_re, msg, sizeof(msg));
				rm_cli_usage_error(&cli, "invalid --context-match '%s': %s", optarg, msg);
			}
			o->has_re = 1;
			break;
		case O_COMP:
			split_names(o, optarg);
			break;
		case O_PROMLABEL:
			add_prom_label(o, optarg);
			break;
		case O_MINAGE:
			if (rm_parse_duration(optarg, 0, 86400, &o->min_age) < 0)
				rm_cli_usage_error(&cli, "invalid --min-age '%s': seconds, 0 to 86400", optarg);
			break;
		case O_CGPATH:
			if (!optarg[0])
				rm_cli_usage_error(&cli, "empty --cgroup-path");
			o->cgroup_path = optarg;
			break;
		}
	}
	if (optind < argc)
		rm_cli_usage_error(&cli, "unexpected argument '%s'", argv[optind]);
	if (o->count && !o->interval)
		o->interval = 1;
	serve_check_args(o);
	if (o->seed_cols && (o->fmt != RM_FMT_CSV || o->energy || o->gpu || o->cgroup_path))
		rm_cli_usage_error(&cli, "--seed-columns writes the seed's 14 CSV columns: "
				   "not with -f, --energy, --gpu or --cgroup-path");
	if (o->watch_pid && !o->interval && !o->listen)
		rm_cli_usage_error(&cli, "--watch-pid needs -i SEC");
	if (o->prom_file && !o->prom_file[0])
		rm_cli_usage_error(&cli, "empty --prom-file");
	if (o->output && o->prom_file && rm_out_same_path(o->output, o->prom_file))
		rm_cli_usage_error(&cli, "'%s' is named for two outputs", o->output);
	if (o->status_file && ((o->output && rm_out_same_path(o->output, o->status_file)) ||
			       (o->prom_file && rm_out_same_path(o->prom_file, o->status_file))))
		rm_cli_usage_error(&cli, "'%s' is named for two outputs", o->status_file);
}

/* Read the disk path, open /proc, set the tick up with its watched
 * PIDs, and open what the options ask for besides the output. */
static void setup(struct opts *o, struct state *s, struct rm_tick *t)
{
	struct rm_disk dk;

	if (rm_disk_read(o->disk_path, &dk) < 0)
		err(RM_EXIT_FAIL, "cannot read disk path '%s'", o->disk_path);
	if (rm_proc_dirfd() < 0)
		err(RM_EXIT_FAIL, "cannot open '%s'", rm_proc_root());
	if (rm_tick_init(t, o->interval, o->interval ? o->count : 1, o->watch_pid) < 0)
		err(RM_EXIT_FAIL, "cannot watch PID %d", (int)o->watch_pid);
	for (int i = 1; i < o->nwatch; i++)
		if (rm_tick_watch(t, o->watch[i]) < 0)
			err(RM_EXIT_FAIL, "cannot watch PID %d", (int)o->watch[i]);
	s->oom_known = rm_vmstat_oom_read(&s->oom_base) == 0;
	if (o->prom_file)
		check_prom_dir(o);
	open_extras(o);
}

/* Every row of the run: one per tick, and the one last row. */
static void sample_loop(struct opts *o, struct state *s, struct rm_tick *t, struct rm_buf *b)
{
	double t0_shift = 0;
	struct rm_val v[C_NCOLS];

	/* The first row's CPU % needs a window: 100 ms, or the interval when
	 * that is shorter.  A watched PID or a signal that ends it still
	 * gets the one row every run writes. */
	if (rm_tick_sleep_until(t, o->interval && o->interval < 0.1 ? o->interval : 0.1)) {
		double prev = -1, el;
		clock_gettime(CLOCK_MONOTONIC, &t->start);
		t0_shift = rm_t0_shift(&t->start); /* RM_T0: the monitor run's elapsed 0 */
		while (rm_tick_next(t)) {
			el = rm_tick_elapsed(t);
			/* A row that comes 3 ticks late (SIGSTOP, a frozen
			 * machine) leaves a gap in the time line: counted. */
			if (prev >= 0 && o->interval && el - prev > 3 * o->interval) {
				gaps++;
				if (el - prev > gap_max)
					gap_max = el - prev;
			}
			prev = el;
			sample(o, s, el + t0_shift, v);
			emit(o, b, v);
		}
	}
	if (t->end == RM_END_PID || (rows_written == 0 && rows_lost == 0)) {
		/* The watched build just ended: one last row records what ended
		 * it (an OOM kill of the orchestrator, say). */
		sample(o, s, rm_tick_elapsed(t) + t0_shift, v);
		emit(o, b, v);
	}
}

/* Stop the server, free what is held, report lost rows and write the
 * final status; returns the exit status. */
static int finish(struct opts *o, struct rm_buf *b)
{
	int rc;

	serve_stop();
	compilers_done();
	rm_buf_free(b);
	rm_buf_free(&o->prom_labels);
	free(o->names_store);
	if (o->has_re)
		regfree(&o->ctx_re);
	rc = rm_finish_stdout(report_lost(o));
	status_write(o, 1);
	return rc;
}

/*
 * Sample the system once, or on every tick of the stream, and print each
 * row whole with one write.
 */
int main(int argc, char **argv)
{
	/* static: what it points to stays reachable on every exit path. */
	static struct opts o;
	struct state s;
	struct rm_tick t;
	struct rm_buf b = { 0 };

	rm_set_prog(prog);
	signal(SIGPIPE, SIG_IGN);
	parse_args(argc, argv, &o);
	memset(&s, 0, sizeof(s));

	setup(&o, &s, &t);
	if (o.check) {
		/* Everything a run would refuse has been refused by now. */
		open_output(&o, 0);
		return RM_EXIT_OK;
	}
	rm_cputimes_read(&s.cpu_prev);

	if (o.listen && serve_start(&o, &s, &t) && !o.interval)
		return serve_only(&t);
	open_output(&o, 1);
	status_write(&o, 0);
	start_header(&o, &b);
	sample_loop(&o, &s, &t, &b);
	return finish(&o, &b);
}
