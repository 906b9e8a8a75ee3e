/*
 * rm-tree: a process tree's memory and CPU: a snapshot, a stream that
 * logs each process when it ends, or a command run and followed.
 *
 * usage: rm-tree [-H] [-o LIST] [-f csv|json] [-w SEC] [--match ERE | [--no-children] PID...]
 *        rm-tree -i SEC [-H] [-n COUNT] [--watch-pid PID] [--timeline FILE] [--pss]
 *                [--log FILE] [--stats FILE] [--exclude-tree PID] [--elsewhere[=KIB]]
 *                [--match ERE | --in-cgroup PATH | [--no-children] PID...]
 *        rm-tree --exec [-H] [-i SEC] [--timeline FILE] [--job FILE] [--log FILE]
 *                [--stats FILE] [--pss] [--cgroup] [--memory-max SIZE]
 *                [--wait-orphans[=SEC]] -- CMD [ARG...]
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
 * scope.  source is exact (the kernel's taskstats exit record, exact
 * mode) or sampled; scope is out only for --elsewhere rows.  Membership is sticky, keyed by pid + start
 * time.  --timeline FILE adds a row per sample: epoch,iso,elapsed_s,
 * procs,rss_kib,cpu_pct.
 *
 *   -o, --columns LIST     snapshot columns, comma-separated (also pss_kib)
 *   -f, --format FMT       csv (default) or json
 *   -w, --window SEC       snapshot cpu_pct window (default 0.1)
 *   -i, --interval SEC     stream: sample every SEC seconds (0.001 to 86400;
 *                          --exec default 0.5)
 *   -n, --count COUNT      stop after COUNT samples
 *       --watch-pid PID    stop as soon as PID ends
 *       --match ERE        processes whose name matches ERE
 *       --no-children      the PIDs only, not their descendants
 *       --exec             run CMD in its own process group and follow it;
 *                          exit with its status (128+N for signal N)
 *       --timeline FILE    a row per sample to FILE
 *       --job FILE         --exec: one row for the whole job to FILE
 *       --log FILE         the exit log to FILE instead of stdout
 *       --pss              totals from PSS (smaps_rollup) instead of RSS
 *       --cgroup           --exec: a memory cgroup for the exact tree peak
 *       --memory-max SIZE  --exec: that cgroup, limited to SIZE (K, M, G);
 *                          exit 125 before CMD runs when it cannot be made
 *       --wait-orphans[=SEC]  --exec: also wait (at most SEC) for daemons
 *                          that left CMD's session with setsid
 *       --in-cgroup PATH   processes in cgroup PATH or below (and their children)
 *       --exclude-tree PID never PID or its descendants (repeatable)
 *       --elsewhere[=KIB]  also rows (scope out) for others that reached KIB
 *                          (default 102400)
 *       --stats FILE       mode,events_lost,resyncs,delayacct,taskstats_error
 *   -H, --no-header        no CSV header line
 *   -h, --help             this help
 *       --version          the version
 *       --compilers        print the compiler and linker names (lib/cu's
 *                          list) as an ERE for --match, and exit
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cu.h"
#include "cgroup.h"
#include "tree.h"

const char prog[] = "rm-tree";
static const char usage_line[] =
	"usage: rm-tree [-H] [-o LIST] [-f csv|json] [-w SEC] [--match ERE | [--no-children] PID...]\n"
	"       rm-tree -i SEC [-H] [-n COUNT] [--watch-pid PID] [--timeline FILE] [--pss]\n"
	"               [--log FILE] [--stats FILE] [--exclude-tree PID] [--elsewhere[=KIB]]\n"
	"               [--match ERE | --in-cgroup PATH | [--no-children] PID...]\n"
	"       rm-tree --exec [-H] [-i SEC] [--timeline FILE] [--job FILE] [--log FILE]\n"
	"               [--stats FILE] [--pss] [--cgroup] [--memory-max SIZE]\n"
	"               [--wait-orphans[=SEC]] -- CMD [ARG...]";

static const char help_text[] =
	"\n"
	"A process tree's memory and CPU: a snapshot (one row per process), a\n"
	"stream that logs each process when it ends (-i), or CMD run and followed\n"
	"to its end (--exec).  Without a selection, every process.\n"
	"\n"
	"  -o, --columns LIST     snapshot columns, comma-separated: pid,ppid,comm,\n"
	"                         state,threads,rss_kib,hwm_kib,cpu_pct,cpu_s,cmd\n"
	"                         (the default), pss_kib\n"
	"  -f, --format FMT       csv (default) or json\n"
	"  -w, --window SEC       snapshot cpu_pct window (default 0.1)\n"
	"  -i, --interval SEC     stream: sample every SEC seconds (0.001 to 86400;\n"
	"                         --exec default 0.5)\n"
	"  -n, --count COUNT      stop after COUNT samples\n"
	"      --watch-pid PID    stop as soon as PID ends\n"
	"      --match ERE        processes whose name matches ERE\n"
	"      --no-children      the PIDs only, not their descendants\n"
	"      --exec             run CMD in its own process group and follow it;\n"
	"                         exit with its status (128+N for signal N)\n"
	"      --timeline FILE    a row per sample to FILE\n"
	"      --job FILE         --exec: one row for the whole job to FILE\n"
	"      --log FILE         the exit log to FILE instead of stdout\n"
	"      --pss              totals from PSS (smaps_rollup) instead of RSS\n"
	"      --cgroup           --exec: a memory cgroup for the exact tree peak\n"
	"      --memory-max SIZE  --exec: run CMD in that cgroup limited to SIZE\n"
	"                         (bytes, or K, M, G); exit 125 before CMD runs\n"
	"                         when no cgroup can be made\n"
	"      --wait-orphans[=SEC]  --exec: also wait (at most SEC) for daemons\n"
	"                         that left CMD's session with setsid\n"
	"      --in-cgroup PATH   processes in cgroup PATH (as /proc/PID/cgroup writes\n"
	"                         it, or under /sys/fs/cgroup) or below, and children\n"
	"      --exclude-tree PID never PID or its descendants (repeatable)\n"
	"      --elsewhere[=KIB]  also rows (scope out) for processes outside the\n"
	"                         selection whose peak reached KIB (default 102400)\n"
	"      --stats FILE       mode,events_lost,resyncs,delayacct,taskstats_error\n"
	"  -H, --no-header        no CSV header line\n"
	"  -h, --help             this help\n"
	"      --version          print the version\n"
	"      --compilers        print the compiler and linker names as an ERE for\n"
	"                         --match, and exit\n"
	"\n"
	"Exact mode (root, or CAP_NET_ADMIN): every process's row is the kernel's\n"
	"exit record.  Otherwise sampled; RM_NO_EVENTS=1 forces sampled.\n";

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
			rm_usage_error(prog, usage_line, "unknown column '%.*s' in -o", (int)len, p);
		if (o->ncols == K_NCOLS)
			rm_usage_error(prog, usage_line, "too many columns in -o");
		o->cols[o->ncols++] = k;
		if (!e)
			break;
		p = e + 1;
	}
	if (o->ncols == 0 || list[strlen(list) - 1] == ',')
		rm_usage_error(prog, usage_line, "empty column in -o '%s'", list);
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

static void parse_args(int argc, char **argv, struct opts *o)
{
	enum { O_WATCH = 256, O_MATCH, O_NOCH, O_EXEC, O_TL, O_JOB, O_LOG, O_PSS, O_CG, O_VERSION,
	       O_MEMMAX, O_ORPH, O_INCG, O_EXCL, O_ELSE, O_STATS };
	enum { O_COMPILERS = 512 }; /* apart: other options join the list above */
	static const struct option longopts[] = {
		{ "columns", required_argument, NULL, 'o' },
		{ "format", required_argument, NULL, 'f' },
		{ "window", required_argument, NULL, 'w' },
		{ "interval", required_argument, NULL, 'i' },
		{ "count", required_argument, NULL, 'n' },
		{ "no-header", no_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ "watch-pid", required_argument, NULL, O_WATCH },
		{ "match", required_argument, NULL, O_MATCH },
		{ "no-children", no_argument, NULL, O_NOCH },
		{ "exec", no_argument, NULL, O_EXEC },
		{ "timeline", required_argument, NULL, O_TL },
		{ "job", required_argument, NULL, O_JOB },
		{ "log", required_argument, NULL, O_LOG },
		{ "pss", no_argument, NULL, O_PSS },
		{ "cgroup", no_argument, NULL, O_CG },
		{ "memory-max", required_argument, NULL, O_MEMMAX },
		{ "version", no_argument, NULL, O_VERSION },
		{ "compilers", no_argument, NULL, O_COMPILERS },
		{ "wait-orphans", optional_argument, NULL, O_ORPH },
		{ "in-cgroup", required_argument, NULL, O_INCG },
		{ "exclude-tree", required_argument, NULL, O_EXCL },
		{ "elsewhere", optional_argument, NULL, O_ELSE },
		{ "stats", required_argument, NULL, O_STATS },
		{ NULL, 0, NULL, 0 },
	};
	int c, rc, exec = 0, match = 0, cols_set = 0;

	o->header = 1;
	o->window = 0.1;
	for (int k = 0; k < K_NDEFAULT; k++)
		o->cols[k] = k;
	o->ncols = K_NDEFAULT;
	opterr = 0;
	/* Options may follow PIDs, but with --exec the first operand is CMD,
	 * whose own options are never taken for ours. */
	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "--exec") == 0)
			exec = 1;
	while ((c = getopt_long(argc, argv, exec ? "+:o:f:w:i:n:Hh" : ":o:f:w:i:n:Hh",
				longopts, NULL)) != -1) {
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
				rm_usage_error(prog, usage_line, "invalid format '%s': csv or json", optarg);
			break;
		case 'w':
			if (rm_parse_duration(optarg, 0.01, 60, &o->window) < 0)
				rm_usage_error(prog, usage_line,
					       "invalid window '%s': seconds from 0.01 to 60", optarg);
			break;
		case 'i':
			o->interval = rm_opt_interval(prog, usage_line, optarg);
			break;
		case 'n':
			o->count = rm_opt_count(prog, usage_line, optarg);
			break;
		case 'H':
			o->header = 0;
			break;
		case 'h':
			rm_opt_help(prog, usage_line, help_text);
		case O_VERSION:
			rm_opt_version(prog);
		case O_COMPILERS: {
			char ere[512];
			rm_cu_compilers_ere(ere, sizeof(ere));
			puts(ere);
			exit(rm_finish_stdout(prog, RM_EXIT_OK));
		}
		case O_WATCH:
			o->watch_pid = rm_opt_watch_pid(prog, usage_line, optarg);
			break;
		case O_MATCH:
			if (match)
				regfree(&o->re);
			rc = regcomp(&o->re, optarg, REG_EXTENDED | REG_NOSUB);
			if (rc != 0) {
				char msg[256];
				regerror(rc, &o->re, msg, sizeof(msg));
				rm_usage_error(prog, usage_line, "invalid --match '%s': %s", optarg, msg);
			}
			match = 1;
			break;
		case O_NOCH:
			o->no_children = 1;
			break;
		case O_EXEC:
			exec = 1;
			break;
		case O_TL:
			o->timeline = optarg;
			break;
		case O_JOB:
			o->job = optarg;
			break;
		case O_LOG:
			o->log = optarg;
			break;
		case O_PSS:
			o->pss = 1;
			break;
		case O_CG:
			o->cgroup = 1;
			break;
		case O_MEMMAX:
			if (rm_cg_parse_size(optarg, &o->mem_max) < 0)
				rm_usage_error(prog, usage_line, "invalid --memory-max '%s': a size such as 512M or 8G", optarg);
			o->cgroup = 1;
			break;
		case O_ORPH:
			o->wait_orphans = 0;
			if (optarg && rm_parse_duration(optarg, 0.001, 1e9, &o->wait_orphans) < 0)
				rm_usage_error(prog, usage_line,
					       "invalid --wait-orphans '%s': seconds from 0.001", optarg);
			break;
		case O_INCG:
			o->in_cgroup = cgroup_arg(optarg);
			break;
		case O_EXCL: {
			pid_t *p = realloc(o->exclude, (size_t)(o->nexclude + 1) * sizeof(*p));
			if (!p) {
				fprintf(stderr, "%s: out of memory\n", prog);
				exit(RM_EXIT_FAIL);
			}
			o->exclude = p;
			if (rm_parse_pid(optarg, &o->exclude[o->nexclude]) < 0)
				rm_usage_error(prog, usage_line, "invalid --exclude-tree PID '%s'", optarg);
			o->nexclude++;
			break;
		}
		case O_ELSE:
			o->elsewhere = 1;
			o->elsewhere_kib = 102400;
			if (optarg) {
				long v;
				if (rm_parse_long(optarg, 0, 1L << 40, &v) < 0)
					rm_usage_error(prog, usage_line,
						       "invalid --elsewhere '%s': KiB, a whole number", optarg);
				o->elsewhere_kib = (uint64_t)v;
			}
			break;
		case O_STATS:
			o->stats = optarg;
			break;
		default:
			rm_opt_bad(prog, usage_line, c, argv, optind);
		}
	}

	if (exec) {
		if (optind >= argc)
			rm_usage_error(prog, usage_line, "--exec needs a command after --");
		if (match || o->no_children || o->in_cgroup)
			rm_usage_error(prog, usage_line, "--exec takes no other selection");
		if (o->count || o->watch_pid)
			rm_usage_error(prog, usage_line, "--exec runs until CMD's tree ends: no -n or --watch-pid");
		o->sel = SEL_EXEC;
		o->argv = argv + optind;
		if (!o->interval)
			o->interval = 0.5;
	} else {
		o->npids = argc - optind;
		if (o->npids) {
			o->pids = calloc((size_t)o->npids, sizeof(*o->pids));
			if (!o->pids) {
				fprintf(stderr, "%s: out of memory\n", prog);
				exit(RM_EXIT_FAIL);
			}
			for (int i = 0; i < o->npids; i++)
				if (rm_parse_pid(argv[optind + i], &o->pids[i]) < 0)
					rm_usage_error(prog, usage_line, "invalid PID '%s'", argv[optind + i]);
		}
		if (match && o->npids)
			rm_usage_error(prog, usage_line, "--match takes no PID");
		if (o->in_cgroup && (match || o->npids))
			rm_usage_error(prog, usage_line, "--in-cgroup takes no other selection");
		if (o->no_children && !o->npids)
			rm_usage_error(prog, usage_line, "--no-children needs a PID");
		o->sel = match ? SEL_MATCH : o->in_cgroup ? SEL_CGROUP : o->npids ? SEL_PIDS : SEL_ALL;
		if (o->job || o->cgroup)
			rm_usage_error(prog, usage_line, "%s is for --exec", o->job ? "--job" :
				       o->mem_max ? "--memory-max" : "--cgroup");
		if (o->job || o->cgroup || o->wait_orphans >= 0)
			rm_usage_error(prog, usage_line, "%s is for --exec",
				       o->job ? "--job" : o->cgroup ? "--cgroup" : "--wait-orphans");
		if (!o->interval && (o->count || o->watch_pid))
			rm_usage_error(prog, usage_line, "%s needs -i SEC", o->count ? "-n" : "--watch-pid");
	}
	if (o->interval) {
		if (o->json)
			rm_usage_error(prog, usage_line, "-f json is for snapshots: a stream is CSV");
		if (cols_set)
			rm_usage_error(prog, usage_line, "-o is for snapshots: the exit log has fixed columns");
	} else if (o->timeline || o->log || o->pss || o->stats || o->elsewhere || o->in_cgroup ||
		   o->nexclude) {
		rm_usage_error(prog, usage_line, "%s needs -i SEC or --exec",
			       o->timeline ? "--timeline" : o->log ? "--log" : o->pss ? "--pss" :
			       o->stats ? "--stats" : o->elsewhere ? "--elsewhere" :
			       o->in_cgroup ? "--in-cgroup" : "--exclude-tree");
	}
}

/*
 * Parse the selection and run a snapshot, a stream, or CMD; the exit
 * status is CMD's with --exec.
 */
int main(int argc, char **argv)
{
	program_invocation_short_name = "rm-tree";
	static struct opts o;
	const int sigs[4] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE };

	/* What CMD would have had without us, before we change any of it. */
	for (int i = 0; i < 4; i++)
		sigaction(sigs[i], NULL, &o.entry_sig[i]);
	sigprocmask(SIG_SETMASK, NULL, &o.entry_mask);
	for (int i = 0; i < RLIM_NLIMITS; i++)
		o.entry_rlim_ok[i] = getrlimit(i, &o.entry_rlim[i]) == 0;
	o.wait_orphans = -1;
	signal(SIGPIPE, SIG_IGN);
	parse_args(argc, argv, &o);
	if (rm_proc_dirfd() < 0) {
		fprintf(stderr, "%s: cannot open '%s': %s\n", prog, rm_proc_root(), strerror(errno));
		return RM_EXIT_FAIL;
	}
	if (o.interval)
		return stream_run(&o);
	return snapshot_run(&o);
}
