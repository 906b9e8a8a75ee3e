/*
 * mwrun.c: `rm-summarize --memwatch-run [memwatch's options] -- CMD`,
 * memwatch's command line (rm-run run execs it): its options parsed
 * (getopt_long: -i MS, -iMS, --opt=VALUE), its regexes checked before
 * CMD runs, CMD run under rm-tree --exec (a sibling of this binary, else
 * from PATH) into a private temporary directory, and the job's report
 * printed in memwatch's shapes (memwatch.c).  Exits with CMD's status.
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
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include "cli.h"
#include "memwatch.h"
#include "model.h"
#include "mwrun.h"
#include "outfile.h"

struct mwargs {
	int json, quiet, silent;
};

#define MOFF(f) offsetof(struct mwargs, f)
enum { M_JSON = RM_CLI_LONG, M_QUIET, M_SILENT, M_CSV, M_TL, M_INC, M_EXC };

static const struct rm_cli_opt mw_options[] = {
	{ 'i', "interval", "MS", .help = "sample every MS milliseconds (default 500)" },
	{ M_JSON, "json", NULL, .kind = RM_CLI_TRUE, .off = MOFF(json),
	  .help = "memwatch's JSON on stdout instead of the text" },
	{ M_QUIET, "quiet", NULL, .kind = RM_CLI_TRUE, .off = MOFF(quiet),
	  .help = "no text summary (the JSON is still printed)" },
	{ M_SILENT, "silent", NULL, .kind = RM_CLI_TRUE, .off = MOFF(silent),
	  .help = "discard CMD's stdout and stderr" },
	{ M_CSV, "csv", "FILE", .help = "per-process peaks, memwatch's columns" },
	{ M_TL, "timeline", "FILE", .help = "one row per sample, memwatch's columns" },
	{ M_INC, "include", "RE",
	  .help = "list only processes whose command line matches\n"
		  "(a Rust regex, as memwatch takes it)" },
	{ M_EXC, "exclude", "RE", .help = "do not list processes that match (totals keep them)" },
	RM_CLI_END,
};

static const struct rm_cli mw_cli = {
	"rm-run run",
	(const char *const[]){
		"[-i] [--json] [--quiet] [--silent] [--csv] [--timeline]\n"
		"[--include] [--exclude] -- CMD [ARGS...]",
		NULL,
	},
	"memwatch's command line: run CMD under rm-tree --exec and print its\n"
	"memory in memwatch's names and shapes (rm-run(1), \"memwatch\").",
	mw_options,
	NULL,
};

static pid_t tree_pid;

static void forward(int sig)
{
	if (tree_pid > 0)
		kill(tree_pid, sig);
}

/* An output that cannot be written is found before CMD runs: exit 1
 * naming it, nothing run (lib/outfile makes and removes its temporary). */
static void check_output(const char *opt, const char *path)
{
	struct rm_outfile f;
	char why[256];

	if (!path)
		return;
	if (rm_out_open(path, &f, why, sizeof(why)) < 0)
		errx(RM_EXIT_FAIL, "cannot write %s '%s': %s; nothing was run", opt, path, why);
	rm_out_abort(&f);
}

/* dir/name into out[PATH_MAX]. */
static void fpath(char *out, const char *dir, const char *name)
{
	int n = snprintf(out, PATH_MAX, "%s/%s", dir, name);

	if (n < 0 || n >= PATH_MAX)
		errx(RM_EXIT_FAIL, "the temporary directory's name is too long");
}

/* rm-tree beside this binary, else "rm-tree" (PATH). */
static void tree_path(char *out, size_t size)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	snprintf(out, size, "rm-tree");
	if (n <= 0)
		return;
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (!slash)
		return;
	*slash = '\0';
	if ((size_t)snprintf(out, size, "%s/rm-tree", self) >= size || access(out, X_OK) != 0)
		snprintf(out, size, "rm-tree");
}

/* CMD under rm-tree; its status as a shell gives it (128+N: signal N). */
static int run_tree(char **cmd, int ncmd, const char *dir, long ms, int silent)
{
	char tree[PATH_MAX], iv[32], log[PATH_MAX], job[PATH_MAX], tl[PATH_MAX];
	char **av = calloc((size_t)ncmd + 16, sizeof(*av));
	struct sigaction sa;
	int n = 0, st;

	if (!av)
		errx(RM_EXIT_FAIL, "out of memory");
	tree_path(tree, sizeof(tree));
	snprintf(iv, sizeof(iv), "%ldms", ms);
	fpath(log, dir, "log.csv");
	fpath(job, dir, "job.csv");
	fpath(tl, dir, "timeline.csv");
	av[n++] = tree;
	av[n++] = "--exec";
	av[n++] = "-i";
	av[n++] = iv;
	av[n++] = "--log";
	av[n++] = log;
	av[n++] = "--job";
	av[n++] = job;
	av[n++] = "--timeline";
	av[n++] = tl;
	av[n++] = "--";
	for (int i = 0; i < ncmd; i++)
		av[n++] = cmd[i];
	fflush(NULL);
	tree_pid = fork();
	if (tree_pid < 0)
		err(RM_EXIT_FAIL, "cannot fork");
	if (tree_pid == 0) {
		/* A background job starts with SIGINT ignored: rm-tree and CMD
		 * get the default back, as under rm-run. */
		signal(SIGINT, SIG_DFL);
		signal(SIGQUIT, SIG_DFL);
		if (silent) {
			int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
			if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
				_exit(126);
		}
		execvp(av[0], av);
		warn("cannot run %s", av[0]);
		_exit(127);
	}
	free(av);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = forward;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	while (waitpid(tree_pid, &st, 0) < 0)
		if (errno != EINTR)
			err(RM_EXIT_FAIL, "waitpid");
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void cleanup(const char *dir)
{
	static const char *const names[] = { "log.csv", "job.csv", "timeline.csv" };
	char p[PATH_MAX];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		fpath(p, dir, names[i]);
		unlink(p);
	}
	rmdir(dir);
}

static int job_written(const char *dir)
{
	char p[PATH_MAX];
	struct stat st;

	fpath(p, dir, "job.csv");
	return stat(p, &st) == 0 && st.st_size > 0;
}

/* The report of the job in dir, printed; an exit status. */
static int report(const char *dir, struct opts *o, int json, int quiet)
{
	char log[PATH_MAX], job[PATH_MAX], tl[PATH_MAX];
	char *paths[3] = { log, job, tl };
	struct input *in;
	struct report *reps;
	struct rm_buf b = { 0 };
	int nrep = 0, status = RM_EXIT_OK;

	fpath(log, dir, "log.csv");
	fpath(job, dir, "job.csv");
	fpath(tl, dir, "timeline.csv");
	in = inputs_open(paths, 3);
	reps = model_build(in, 3, o, &nrep);
	if (nrep < 1)
		return RM_EXIT_FAIL;
	if (write_memwatch_files(&reps[0]) < 0)
		status = RM_EXIT_FAIL;
	if (json || !quiet) {
		print_memwatch(&b, &reps[0], json);
		rm_out(&b);
	}
	rm_buf_free(&b);
	for (int k = 0; k < nrep; k++)
		report_free(&reps[k]);
	free(reps);
	inputs_free(in, 3);
	return rm_finish_stdout(status);
}

int memwatch_run(int argc, char **argv, struct opts *o)
{
	struct mwargs ma = { 0, 0, 0 };
	char why[256], tmpl[256];
	const char *tmp = getenv("TMPDIR");
	long ms = 500;
	int c, rc, status;

	rm_set_prog("rm-run run");
	g_mw.on = 1;
	while ((c = rm_cli_next(&mw_cli, RM_CLI_IN_ORDER, argc, argv, &ma)) != -1) {
		switch (c) {
		case 'i':
			if (rm_parse_long(optarg, 1, 86400000L, &ms) < 0)
				rm_cli_usage_error(&mw_cli, "invalid --interval '%s': milliseconds, "
					"a whole number from 1", optarg);
			break;
		case M_CSV:
			g_mw.csv = optarg;
			break;
		case M_TL:
			g_mw.timeline = optarg;
			break;
		case M_INC:
		case M_EXC:
			if (memwatch_filter(c == M_INC, optarg, why, sizeof(why)) < 0)
				rm_cli_usage_error(&mw_cli, "invalid %s '%s': %s",
						   c == M_INC ? "--include" : "--exclude", optarg, why);
			break;
		}
	}
	if (optind >= argc)
		rm_cli_usage_error(&mw_cli, "no command to run");
	g_mw.argv = argv + optind;
	g_mw.argc = argc - optind;
	g_mw.interval_ms = (double)ms;
	if (g_mw.csv && g_mw.timeline && rm_out_same_path(g_mw.csv, g_mw.timeline))
		rm_cli_usage_error(&mw_cli, "'%s' is named for both --csv and --timeline", g_mw.csv);
	check_output("--csv", g_mw.csv);
	check_output("--timeline", g_mw.timeline);
	if (!tmp || !*tmp)
		tmp = "/tmp";
	if ((size_t)snprintf(tmpl, sizeof(tmpl), "%s/rm-run.XXXXXX", tmp) >= sizeof(tmpl))
		errx(RM_EXIT_FAIL, "TMPDIR '%s' is too long", tmp);
	if (!mkdtemp(tmpl))
		err(RM_EXIT_FAIL, "cannot make a temporary directory in '%s'", tmp);
	rc = run_tree(g_mw.argv, g_mw.argc, tmpl, ms, ma.silent);
	if (!job_written(tmpl)) {
		cleanup(tmpl);
		return rc;
	}
	o->top = 10;
	o->near_oom_mb = 4096;
	o->low_disk_gb = 20;
	o->rows_lost = -1;
	o->stage_fallback = -1;
	o->events_dropped = -1;
	status = report(tmpl, o, ma.json, ma.quiet);
	cleanup(tmpl);
	return rc != 0 ? rc : status;
}
