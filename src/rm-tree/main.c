/*
 * rm-tree: a process tree's memory and CPU: a snapshot, a stream that
 * logs each process when it ends, or a command run and followed.
 *
 * Usage and options: the table cli below (rm-tree --help prints it).
 *
 * Selections: PID... (each and all its descendants), --no-children PID...
 * (just those), --match ERE (every process whose name matches), nothing
 * (every process), --exec (CMD and everything it starts).  Kernel threads
 * and zombies are never listed.
 *
 * Without -i: one CSV row per process (pid,ppid,comm,state,threads,
 * rss_kib,hwm_kib,cpu_pct,cpu_s,cmd; -o picks and orders columns, and only
 * the /proc files those need are read), or with -f json one object in
 * the shape of the seed's usage_json.  cpu_pct is measured over -w SEC.
 *
 * With -i (or --exec): an exit log, one row per process when it ends and
 * one per survivor at the end: pid,ppid,comm,start_s,end_s,peak_rss_kib,
 * peak_at_s,cpu_s,exit,cmd,read_kib,write_kib,majflt,cpu_delay_ms,
 * io_delay_ms,swapin_delay_ms,reclaim_delay_ms,thrash_delay_ms,source,
 * scope,emulated,uid.  source is exact (the kernel's taskstats exit record,
 * exact mode) or sampled; scope is out only for --elsewhere rows;
 * emulated is yes, no or empty (unknown: emul.c); uid the process's real
 * user (ac_uid, or its status file's Uid), a number.  Membership
 * is sticky, keyed by pid + start time.  --timeline FILE adds a row per
 * sample: epoch,iso,elapsed_s,procs,rss_kib,cpu_pct.
 */
#include <err.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cu.h"
#include "cgroup.h"
#include "tree.h"

const char prog[] = "rm-tree";
#define OFF(f) offsetof(struct opts, f)
enum { O_WATCH = RM_CLI_LONG, O_CHECK, O_MATCH, O_NOCH, O_EXEC, O_TL, O_JOB, O_LOG, O_PSS, O_CG, O_MEMMAX,
       O_ORPH, O_INCG, O_EXCL, O_ELSE, O_STATS, O_COMPILERS, O_INIT, O_LIVE, O_LIVE_TTY,
       O_CONTAINERS };

static const struct rm_cli_opt options[] = {
	{ 'o', "columns", "LIST",
	  .help = "snapshot columns, comma-separated: pid,ppid,comm,\n"
		  "state,threads,rss_kib,hwm_kib,cpu_pct,cpu_s,cmd\n"
		  "(the default), pss_kib" },
	{ 'f', "format", "FMT", .synarg = "csv|json", .help = "csv (default) or json" },
	{ 'w', "window", "SEC", .help = "snapshot cpu_pct window (default 0.1; with -f json 0.5, the seed's)" },
	{ 'i', "interval", "SEC", .kind = RM_CLI_INTERVAL, .off = OFF(interval),
	  .help = "stream: sample every SEC seconds (0.001 to 86400;\n"
		  "--exec default 0.5)" },
	{ 'n', "count", "COUNT", .kind = RM_CLI_COUNT, .off = OFF(count),
	  .help = "stop after COUNT samples" },
	{ O_WATCH, "watch-pid", "PID", .kind = RM_CLI_WATCH_PID, .off = OFF(watch_pid),
	  .help = "stop as soon as PID ends" },
	{ O_MATCH, "match", "ERE", .help = "processes whose name matches ERE" },
	{ O_NOCH, "no-children", NULL, .kind = RM_CLI_TRUE, .off = OFF(no_children),
	  .help = "the PIDs only, not their descendants" },
	{ O_EXEC, "exec", NULL,
	  .help = "run CMD in its own process group and follow it;\n"
		  "exit with its status (128+N for signal N)" },
	{ O_INIT, "init", NULL,
	  .help = "run CMD as its init (a container's PID 1): pass\n"
		  "TERM, INT and HUP on to it, reap every orphan,\n"
		  "exit with its status; follow nothing" },
	{ O_TL, "timeline", "FILE", .kind = RM_CLI_STRING, .off = OFF(timeline),
	  .help = "a row per sample to FILE" },
	{ O_JOB, "job", "FILE", .kind = RM_CLI_STRING, .off = OFF(job),
	  .help = "--exec: one row for the whole job to FILE" },
	{ O_LOG, "log", "FILE", .kind = RM_CLI_STRING, .off = OFF(log),
	  .help = "the exit log to FILE instead of stdout" },
	{ O_PSS, "pss", NULL, .kind = RM_CLI_TRUE, .off = OFF(pss),
	  .help = "totals from PSS (smaps_rollup) instead of RSS" },
	{ O_CG, "cgroup", NULL, .kind = RM_CLI_TRUE, .off = OFF(cgroup),
	  .help = "--exec: a memory cgroup for the exact tree peak" },
	{ O_MEMMAX, "memory-max", "SIZE",
	  .help = "--exec: run CMD in that cgroup limited to SIZE\n"
		  "(bytes, or K, M, G); exit 125 before CMD runs\n"
		  "when no cgroup can be made" },
	{ O_ORPH, "wait-orphans", "[=SEC]",
	  .help = "--exec: also wait (at most SEC) for daemons\n"
		  "that left CMD's session with setsid" },
	{ O_INCG, "in-cgroup", "PATH",
	  .help = "processes in cgroup PATH (as /proc/PID/cgroup writes\n"
		  "it, or under /sys/fs/cgroup) or below, and children" },
	{ O_EXCL, "exclude-tree", "PID", .help = "never PID or its descendants (repeatable)" },
	{ O_ELSE, "elsewhere", "[=KIB]",
	  .help = "also rows (scope out) for processes outside the\n"
		  "selection whose peak reached KIB (default 102400)" },
	{ O_STATS, "stats", "FILE", .kind = RM_CLI_STRING, .off = OFF(stats),
	  .help = "mode,events_lost,resyncs,delayacct,taskstats_error,\n"
		  "pid_ns,cgroup_ns,cgroup" },
	{ O_CONTAINERS, "containers", "FILE", .kind = RM_CLI_STRING, .off = OFF(containers),
	  .help = "a row per container cgroup per sample to FILE\n"
		  "(limit, usage, peak, OOM kills; tied to the build\n"
		  "by its clients' --cidfile or --cgroup-parent)" },
	{ O_LIVE, "live", "FILE", .kind = RM_CLI_STRING, .off = OFF(live),
	  .help = "the build now (processes, tree total, the three\n"
		  "largest) rewritten whole into FILE every tick" },
	{ O_LIVE_TTY, "live-tty", NULL, .kind = RM_CLI_TRUE, .off = OFF(live_tty),
	  .help = "a status line on stderr, once a second, when it\n"
		  "is a terminal" },
	{ 'H', "no-header", NULL, .kind = RM_CLI_FALSE, .off = OFF(header),
	  .help = "no CSV header line" },
	{ O_CHECK, "check", NULL, .kind = RM_CLI_TRUE, .off = OFF(check),
	  .help = "check the options, run nothing, exit 0 (rm-run asks)" },
	RM_CLI_HELP_OPT,
	RM_CLI_VERSION_OPT,
	{ O_COMPILERS, "compilers", NULL,
	  .help = "print the compiler and linker names as an ERE for\n"
		  "--match, and exit" },
	{ 0 },
};

static const struct rm_cli cli = {
	prog,
	(const char *const[]){
		"[-H] [-o] [-f] [-w] [--match | [--no-children] PID...]",
		"-i [-H] [-n] [--watch-pid] [--timeline] [--pss]\n"
		"[--log] [--stats] [--exclude-tree] [--elsewhere]\n"
		"[--live] [--live-tty] [--containers]\n"
		"[--match | --in-cgroup | [--no-children] PID...]",
		"--exec [-H] [-i] [--timeline] [--job] [--log]\n"
		"[--stats] [--pss] [--cgroup] [--memory-max]\n"
		"[--wait-orphans] [--live] [--live-tty] [--containers] [--check]\n"
		"-- CMD [ARG...]",
		"--init -- CMD [ARG...]",
		NULL,
	},
	"A process tree's memory and CPU: a snapshot (one row per process), a\n"
	"stream that logs each process when it ends (-i), or CMD run and followed\n"
	"to its end (--exec).  Without a selection, every process.",
	options,
	"Exact mode (root, or CAP_NET_ADMIN): every process's row is the kernel's\n"
	"exit record.  Otherwise sampled; RM_NO_EVENTS=1 forces sampled.",
};

static void parse_columns(struct opts *o, const char *list)
{
	const char *p = list;

	o->ncols = 0;
	while (*p) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		int k;
		for (k = 0; k < K_NCOLS; k++)
			if (strlen(col_names[k]) == len && strncmp(col_names[k], p, len) == 0)
				break;
		if (k == K_NCOLS)
			rm_cli_usage_error(&cli, "unknown column '%.*s' in -o", (int)len, p);
		if (o->ncols == K_NCOLS)
			rm_cli_usage_error(&cli, "too many columns in -o");
		o->cols[o->ncols++] = k;
		if (!e)
			break;
		p = e + 1;
	}
	if (o->ncols == 0 || list[strlen(list) - 1] == ',')
		rm_cli_usage_error(&cli, "empty column in -o '%s'", list);
}

/* --in-cgroup PATH as /proc/PID/cgroup writes it: /sys/fs/cgroup off,
 * no trailing slash. */
static const char *cgroup_arg(const char *arg)
{
	static char path[4096];
	size_t n;

	if (strncmp(arg, "/sys/fs/cgroup", 14) == 0 && (arg[14] == '/' || !arg[14]))
		arg += 14;
	snprintf(path, sizeof(path), "%s%s", arg[0] == '/' ? "" : "/", arg);
	n = strlen(path);
	while (n > 1 && path[n - 1] == '/')
		path[--n] = '\0';
	return path;
}

/* --match ERE: compiled into o->re (a repeated --match replaces it). */
static void set_match(struct opts *o, const char *arg, int match)
{
	int rc;

	if (match)
		regfree(&o->re);
	rc = regcomp(&o->re, arg, REG_EXTENDED | REG_NOSUB);
	if (rc != 0) {
		char msg[256];
		regerror(rc, &o->re, msg, sizeof(msg));
		rm_cli_usage_error(&cli, "invalid --match '%s': %s", arg, msg);
	}
}

/* --exclude-tree PID: appended to o->exclude. */
static void add_exclude(struct opts *o, const char *arg)
{
	pid_t *p = realloc(o->exclude, (size_t)(o->nexclude + 1) * sizeof(*p));
	if (!p)
		errx(RM_EXIT_FAIL, "out of memory");
	o->exclude = p;
	if (rm_parse_pid(arg, &o->exclude[o->nexclude]) < 0)
		rm_cli_usage_error(&cli, "invalid --exclude-tree PID '%s'", arg);
	o->nexclude++;
}

/* --elsewhere[=KiB]: on, with 100 MiB unless KiB is given. */
static void set_elsewhere(struct opts *o, const char *arg)
{
	o->elsewhere = 1;
	o->elsewhere_kib = 102400;
	if (arg) {
		long v;
		if (rm_parse_long(arg, 0, 1L << 40, &v) < 0)
			rm_cli_usage_error(&cli,
					   "invalid --elsewhere '%s': KiB, a whole number", arg);
		o->elsewhere_kib = (uint64_t)v;
	}
}

/* --exec: CMD follows, and no other selection or -n/--watch-pid goes with it. */
static void check_exec(struct opts *o, int match, int argc, char **argv)
{
	if (optind >= argc)
		rm_cli_usage_error(&cli, "--exec needs a command after --");
	if (match || o->no_children || o->in_cgroup)
		rm_cli_usage_error(&cli, "--exec takes no other selection");
	if (o->count || o->watch_pid)
		rm_cli_usage_error(&cli, "--exec runs until CMD's tree ends: no -n or --watch-pid");
	o->sel = SEL_EXEC;
	o->argv = argv + optind;
	if (!o->interval)
		o->interval = 0.5;
}

/* --init: CMD follows, and nothing else goes with it. */
static void check_init(struct opts *o, int argc, char **argv)
{
	if (optind >= argc)
		rm_cli_usage_error(&cli, "--init needs a command after --");
	if (o->interval || o->count || o->watch_pid || o->timeline || o->job || o->log || o->pss ||
	    o->cgroup || o->in_cgroup || o->nexclude || o->elsewhere || o->stats ||
	    o->wait_orphans >= 0 || o->no_children || !o->header)
		rm_cli_usage_error(&cli, "--init takes no other option");
	o->argv = argv + optind;
}

/* Without --exec: the PIDs, the one selection, and no --exec-only option. */
static void check_selection(struct opts *o, int match, int argc, char **argv)
{
	o->npids = argc - optind;
	if (o->npids) {
		o->pids = calloc((size_t)o->npids, sizeof(*o->pids));
		if (!o->pids)
			errx(RM_EXIT_FAIL, "out of memory");
		for (int i = 0; i < o->npids; i++)
			if (rm_parse_pid(argv[optind + i], &o->pids[i]) < 0)
				rm_cli_usage_error(&cli, "invalid PID '%s'", argv[optind + i]);
	}
	if (match && o->npids)
		rm_cli_usage_error(&cli, "--match takes no PID");
	if (o->in_cgroup && (match || o->npids))
		rm_cli_usage_error(&cli, "--in-cgroup takes no other selection");
	if (o->no_children && !o->npids)
		rm_cli_usage_error(&cli, "--no-children needs a PID");
	o->sel = match ? SEL_MATCH : o->in_cgroup ? SEL_CGROUP : o->npids ? SEL_PIDS : SEL_ALL;
	if (o->job || o->cgroup)
		rm_cli_usage_error(&cli, "%s is for --exec", o->job ? "--job" :
				   o->mem_max ? "--memory-max" : "--cgroup");
	if (o->job || o->cgroup || o->wait_orphans >= 0)
		rm_cli_usage_error(&cli, "%s is for --exec",
				   o->job ? "--job" : o->cgroup ? "--cgroup" : "--wait-orphans");
	if (!o->interval && (o->count || o->watch_pid))
		rm_cli_usage_error(&cli, "%s needs -i SEC", o->count ? "-n" : "--watch-pid");
}

/* A stream (-i or --exec) is CSV with fixed columns; the stream options need one. */
static void check_stream(const struct opts *o, int cols_set)
{
	if (o->interval) {
		if (o->json)
			rm_cli_usage_error(&cli, "-f json is for snapshots: a stream is CSV");
		if (cols_set)
			rm_cli_usage_error(&cli, "-o is for snapshots: the exit log has fixed columns");
	} else if (o->timeline || o->log || o->pss || o->stats || o->elsewhere || o->in_cgroup ||
		   o->nexclude || o->live || o->live_tty || o->containers) {
		rm_cli_usage_error(&cli, "%s needs -i SEC or --exec",
				   o->timeline ? "--timeline" : o->log ? "--log" : o->pss ? "--pss" :
				   o->stats ? "--stats" : o->elsewhere ? "--elsewhere" :
				   o->in_cgroup ? "--in-cgroup" : o->live ? "--live" :
				   o->live_tty ? "--live-tty" : o->nexclude ? "--exclude-tree" :
				   "--containers");
	}
}

static void parse_args(int argc, char **argv, struct opts *o)
{
	int c, exec = 0, match = 0, cols_set = 0;

	o->header = 1;
	o->window = 0;  /* not given: set below, by the format */
	for (int k = 0; k < K_NDEFAULT; k++)
		o->cols[k] = k;
	o->ncols = K_NDEFAULT;
	/* Options may follow PIDs, but with --exec the first operand is CMD,
	 * whose own options are never taken for ours. */
	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "--exec") == 0 || strcmp(argv[i], "--init") == 0)
			exec = 1;
	/* The table stores the plain options; the rest are here. */
	while ((c = rm_cli_next(&cli, exec ? RM_CLI_IN_ORDER : 0, argc, argv, o)) != -1) {
		switch (c) {
		case 'o':
			parse_columns(o, optarg);
			cols_set = 1;
			break;
		case 'f':
			if (strcmp(optarg, "json") == 0)
				o->json = 1;
			else if (strcmp(optarg, "csv") == 0)
				o->json = 0;
			else
				rm_cli_usage_error(&cli, "invalid format '%s': csv or json", optarg);
			break;
		case 'w':
			if (rm_parse_duration(optarg, 0.01, 60, &o->window) < 0)
				rm_cli_usage_error(&cli,
						   "invalid window '%s': seconds from 0.01 to 60", optarg);
			break;
		case O_COMPILERS: {
			char ere[512];
			rm_cu_compilers_ere(ere, sizeof(ere));
			puts(ere);
			exit(rm_finish_stdout(RM_EXIT_OK));
		}
		case O_MATCH:
			set_match(o, optarg, match);
			match = 1;
			break;
		case O_EXEC:
			exec = 1;
			break;
		case O_INIT:
			o->init = 1;
			break;
		case O_MEMMAX:
			if (rm_cg_parse_size(optarg, &o->mem_max) < 0)
				rm_cli_usage_error(&cli, "invalid --memory-max '%s': a size such as 512M or 8G", optarg);
			o->cgroup = 1;
			break;
		case O_ORPH:
			o->wait_orphans = 0;
			if (optarg && rm_parse_duration(optarg, 0.001, 1e9, &o->wait_orphans) < 0)
				rm_cli_usage_error(&cli,
						   "invalid --wait-orphans '%s': seconds from 0.001", optarg);
			break;
		case O_INCG:
			o->in_cgroup = cgroup_arg(optarg);
			break;
		case O_EXCL:
			add_exclude(o, optarg);
			break;
		case O_ELSE:
			set_elsewhere(o, optarg);
			break;
		}
	}
	/* The seed's usage JSON measured CPU over 0.5 s; over 0.1 s a
	 * process's ticks (1/100 s) give cpu_percent in steps of 10. */
	if (o->window == 0)
		o->window = o->json ? 0.5 : 0.1;

	if (o->init) {
		check_init(o, argc, argv);
		return;
	}
	if (exec)
		check_exec(o, match, argc, argv);
	else
		check_selection(o, match, argc, argv);
	check_stream(o, cols_set);
}

/*
 * Parse the selection and run a snapshot, a stream, or CMD; the exit
 * status is CMD's with --exec.
 */
int main(int argc, char **argv)
{
	static struct opts o;

	rm_set_prog(prog);
	/* What CMD would have had without us, before we change any of it. */
	rm_entry_save(&o.entry);
	for (int i = 0; i < RLIM_NLIMITS; i++)
		o.entry_rlim_ok[i] = getrlimit(i, &o.entry_rlim[i]) == 0;
	o.wait_orphans = -1;
	signal(SIGPIPE, SIG_IGN);
	parse_args(argc, argv, &o);
	if (o.init)
		return init_run(&o);
	if (o.check)
		return RM_EXIT_OK;
	if (rm_proc_dirfd() < 0)
		err(RM_EXIT_FAIL, "cannot open '%s'", rm_proc_root());
	if (o.interval)
		return stream_run(&o);
	return snapshot_run(&o);
}
