/*
 * rm-energy: CPU package and DRAM energy from the RAPL powercap zones.
 *
 * Usage and options: the table cli below (rm-energy --help prints it).
 *
 * Without -i, prints one row per RAPL zone (zone, name, energy_uj,
 * max_energy_range_uj).  With -i, reads the counters on every tick and
 * prints epoch, elapsed_s, pkg_w, dram_w, pkg_j, dram_j: watts over the
 * last interval and joules since the stream started.  With -- CMD, runs
 * CMD, reads the counters every SEC seconds (default 1) so no wrap is
 * missed, and when it ends prints to stderr (or FILE) what it cost:
 * elapsed_s, pkg_j, pkg_w, dram_j, dram_w, exit; then exits with CMD's
 * status (128+N when a signal N ended it).  With --watch-pid, a last row
 * covers the part interval before PID ended.
 *
 * Package = the sum of the package-* zones (core and uncore are inside a
 * package; psys is never added); dram = the sum of the dram zones; each
 * counter's wrap is corrected with its own max_energy_range_uj.  Exit 1
 * when there are no zones, or when energy_uj is root-only (Linux 5.10+).
 */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "energy.h"
#include "outfile.h"
#include "rmtools.h"

static const char prog[] = "rm-energy";
/* One-shot: a row per zone. */
enum { Z_ZONE, Z_NAME, Z_ENERGY, Z_MAX, Z_NCOLS };

static const struct rm_col zone_cols[Z_NCOLS] = {
	{ "zone", RM_P_LABEL, "zone", NULL, 0 },
	{ "name", RM_P_LABEL, "name", NULL, 0 },
	{ "energy_uj", RM_P_COUNTER, "rm_rapl_energy_joules_total", "RAPL zone energy counter (wraps at the range).", 1e-6 },
	{ "max_energy_range_uj", RM_P_GAUGE, "rm_rapl_max_energy_range_joules", "Value at which the zone's counter wraps.", 1e-6 },
};

/* Streaming: a row per tick. */
enum { S_EPOCH, S_ELAPSED, S_PKG_W, S_DRAM_W, S_PKG_J, S_DRAM_J, S_NCOLS };

static const struct rm_col stream_cols[S_NCOLS] = {
	{ "epoch", RM_P_NONE, NULL, NULL, 0 },
	{ "elapsed_s", RM_P_NONE, NULL, NULL, 0 },
	{ "pkg_w", RM_P_GAUGE, "rm_package_power_watts", "CPU package power over the last interval, all packages.", 0 },
	{ "dram_w", RM_P_GAUGE, "rm_dram_power_watts", "DRAM power over the last interval.", 0 },
	{ "pkg_j", RM_P_COUNTER, "rm_package_energy_joules_total", "CPU package energy since the stream started.", 0 },
	{ "dram_j", RM_P_COUNTER, "rm_dram_energy_joules_total", "DRAM energy since the stream started.", 0 },
};

/* -- CMD: one row for the whole command. */
enum { R_ELAPSED, R_PKG_J, R_PKG_W, R_DRAM_J, R_DRAM_W, R_EXIT, R_NCOLS };

static const struct rm_col run_cols[R_NCOLS] = {
	{ "elapsed_s", RM_P_GAUGE, "rm_command_elapsed_seconds", "Wall time the command ran.", 0 },
	{ "pkg_j", RM_P_GAUGE, "rm_command_package_energy_joules", "CPU package energy while the command ran.", 0 },
	{ "pkg_w", RM_P_GAUGE, "rm_command_package_power_watts", "Mean CPU package power while the command ran.", 0 },
	{ "dram_j", RM_P_GAUGE, "rm_command_dram_energy_joules", "DRAM energy while the command ran.", 0 },
	{ "dram_w", RM_P_GAUGE, "rm_command_dram_power_watts", "Mean DRAM power while the command ran.", 0 },
	{ "exit", RM_P_GAUGE, "rm_command_exit_status", "The command's exit status (128+N for signal N).", 0 },
};

struct opts {
	double interval;
	long count;
	pid_t watch_pid;
	enum rm_fmt fmt;
	int header;
	const char *output;
	char **cmd;
};

#define OFF(f) offsetof(struct opts, f)
enum { O_WATCH = RM_CLI_LONG };

static const struct rm_cli_opt options[] = {
	{ 'i', "interval", "SEC", .kind = RM_CLI_INTERVAL, .off = OFF(interval),
	  .help = "seconds between rows (0.001 to 86400); with CMD,\n"
		  "between counter reads (default 1)" },
	{ 'n', "count", "COUNT", .kind = RM_CLI_COUNT, .off = OFF(count),
	  .help = "stop after COUNT rows" },
	{ O_WATCH, "watch-pid", "PID", .kind = RM_CLI_WATCH_PID, .off = OFF(watch_pid),
	  .help = "stop as soon as PID ends" },
	{ 'f', "format", "FMT", .kind = RM_CLI_FORMAT, .off = OFF(fmt), .synarg = "csv|jsonl|prom",
	  .help = "csv (default), jsonl or prom" },
	{ 'H', "no-header", NULL, .kind = RM_CLI_FALSE, .off = OFF(header),
	  .help = "no CSV header line" },
	{ 'o', "output", "FILE", .kind = RM_CLI_STRING, .off = OFF(output),
	  .help = "with CMD: write the row to FILE, not stderr" },
	RM_CLI_END,
};

static const struct rm_cli cli = {
	prog,
	(const char *const[]){
		"[-H] [-i] [-n] [--watch-pid] [-f]",
		"[-H] [-i] [-o] [-f] -- CMD [ARG...]",
		NULL,
	},
	"Print CPU package and DRAM energy from the RAPL zones: one row per zone,\n"
	"or with -i a row of watts and joules every SEC seconds, or with -- CMD\n"
	"the joules and mean watts CMD cost (to stderr), exiting with its status.",
	options,
	NULL,
};

/* Running sums of a stream, in microjoules. */
struct totals {
	uint64_t pkg_uj, dram_uj;
	int pkg_ok, dram_ok;    /* every step so far was complete */
	double start, last;     /* monotonic seconds */
};

static void parse_args(int argc, char **argv, struct opts *o)
{
	memset(o, 0, sizeof(*o));
	o->header = 1;
	/* Every option is the table's to store.  In order: stop at the first
	 * operand, so CMD's own options stay its own. */
	while (rm_cli_next(&cli, RM_CLI_IN_ORDER, argc, argv, o) != -1)
		;
	if (optind < argc) {
		if (strcmp(argv[optind - 1], "--") != 0)
			rm_cli_usage_error(&cli, "unexpected argument '%s' (put -- before a command)",
					   argv[optind]);
		o->cmd = argv + optind;
	} else if (optind > 0 && strcmp(argv[optind - 1], "--") == 0) {
		rm_cli_usage_error(&cli, "no command after --");
	}
	if (o->cmd) {
		if (o->count)
			rm_cli_usage_error(&cli, "-n does not go with -- CMD");
		if (o->watch_pid)
			rm_cli_usage_error(&cli, "--watch-pid does not go with -- CMD");
		if (!o->interval)
			o->interval = 1;
		return;
	}
	if (o->output)
		rm_cli_usage_error(&cli, "-o FILE needs -- CMD");
	if (o->count && !o->interval)
		o->interval = 1;
	if (o->watch_pid && !o->interval)
		rm_cli_usage_error(&cli, "--watch-pid needs -i SEC");
}

/* The message for a counter the kernel keeps from us; exits 1. */
static void __attribute__((noreturn)) die_eacces(const struct rm_rapl *r, int zone)
{
	char path[4096];

	if (rm_rapl_path(r, zone, "energy_uj", path, sizeof(path)) < 0)
		snprintf(path, sizeof(path), "%s", r->z[zone].zone);
	/* errx, not err: the reason comes before the advice. */
	errx(RM_EXIT_FAIL, "cannot read '%s': %s (RAPL energy counters are root-only since "
	     "Linux 5.10, CVE-2020-8694); run as root, or as root make them readable: "
	     "chmod a+r %s/class/powercap/intel-rapl:*/energy_uj (until reboot; rm-energy(1) "
	     "shows a udev rule that lasts)", path, strerror(EACCES), rm_sys_root());
}

static void emit(const struct opts *o, struct rm_buf *b, const struct rm_col *cols,
		 const struct rm_val *v, int n, int rows)
{
	for (int r = 0; r < rows && o->fmt != RM_FMT_PROM; r++) {
		if (o->fmt == RM_FMT_CSV)
			rm_emit_csv_row(b, cols, v + (size_t)r * (size_t)n, n);
		else
			rm_emit_jsonl(b, cols, v + (size_t)r * (size_t)n, n);
	}
	if (o->fmt == RM_FMT_PROM)
		rm_emit_prom(b, cols, v, n, rows, NULL);
}

static int oneshot(const struct opts *o, struct rm_rapl *r)
{
	struct rm_buf b = { 0 };
	struct rm_val *v = calloc((size_t)r->n * Z_NCOLS, sizeof(*v));

	if (!v) {
		warnx("out of memory");
		return RM_EXIT_FAIL;
	}
	for (int i = 0; i < r->n; i++) {
		struct rm_val *row = v + (size_t)i * Z_NCOLS;
		uint64_t uj;

		row[Z_ZONE] = rm_str(r->z[i].zone);
		row[Z_NAME] = r->z[i].name[0] ? rm_str(r->z[i].name) : rm_none();
		if (rm_rapl_read(r, i, &uj) == 0)
			row[Z_ENERGY] = rm_u64(uj);
		else if (errno == EACCES)
			die_eacces(r, i);
		else
			row[Z_ENERGY] = rm_none();
		row[Z_MAX] = r->z[i].has_max ? rm_u64(r->z[i].max_uj) : rm_none();
	}
	if (o->header && o->fmt == RM_FMT_CSV)
		rm_emit_csv_header(&b, zone_cols, Z_NCOLS);
	emit(o, &b, zone_cols, v, Z_NCOLS, r->n);
	rm_out(&b);
	rm_buf_free(&b);
	free(v);
	return rm_finish_stdout(RM_EXIT_OK);
}

/* Read the counters once more and add the step to the totals. */
static void step(struct rm_rapl *r, struct totals *tt, struct rm_rapl_step *s)
{
	if (rm_rapl_sample(r, s) < 0)
		die_eacces(r, r->err_zone);
	tt->pkg_uj += s->pkg_uj;
	tt->dram_uj += s->dram_uj;
	tt->pkg_ok &= s->pkg_ok;
	tt->dram_ok &= s->dram_ok;
}

/* The first reading: baselines, and a first check that we may read. */
static void start(struct rm_rapl *r, struct totals *tt)
{
	struct rm_rapl_step s;

	memset(tt, 0, sizeof(*tt));
	if (rm_rapl_sample(r, &s) < 0)
		die_eacces(r, r->err_zone);
	tt->pkg_ok = r->npkg > 0;
	tt->dram_ok = r->ndram > 0;
	tt->start = tt->last = s.mono;
}

static void stream_row(struct rm_rapl *r, struct totals *tt, struct rm_val *v)
{
	struct rm_rapl_step s;
	double dt;

	step(r, tt, &s);
	dt = s.mono - tt->last;
	tt->last = s.mono;
	for (int i = 0; i < S_NCOLS; i++)
		v[i] = rm_none();
	v[S_EPOCH] = rm_num(rm_now_epoch(), 3);
	v[S_ELAPSED] = rm_num(s.mono - tt->start, 3);
	if (s.pkg_ok && dt > 0)
		v[S_PKG_W] = rm_num((double)s.pkg_uj / 1e6 / dt, 2);
	if (s.dram_ok && dt > 0)
		v[S_DRAM_W] = rm_num((double)s.dram_uj / 1e6 / dt, 2);
	/* A step that missed a zone leaves the sum short until it reads again. */
	if (s.pkg_ok)
		v[S_PKG_J] = rm_num((double)tt->pkg_uj / 1e6, 3);
	if (s.dram_ok)
		v[S_DRAM_J] = rm_num((double)tt->dram_uj / 1e6, 3);
}

static int stream(const struct opts *o, struct rm_rapl *r)
{
	struct rm_tick t;
	struct rm_buf b = { 0 };
	struct rm_val v[S_NCOLS];
	struct totals tt;
	int first = 1;

	/* One tick more than rows: the first only takes the baselines. */
	if (rm_tick_init(&t, o->interval, o->count ? o->count + 1 : 0, o->watch_pid) < 0) {
		warn("cannot watch PID %d", (int)o->watch_pid);
		return RM_EXIT_FAIL;
	}
	/* The baselines come first: a refused counter fails before any
	 * output, and a reader that sees the header knows they are taken. */
	start(r, &tt);
	if (o->header && o->fmt == RM_FMT_CSV) {
		rm_emit_csv_header(&b, stream_cols, S_NCOLS);
		rm_out(&b);
	}
	while (rm_tick_next(&t)) {
		if (first) {
			first = 0;
			continue;
		}
		stream_row(r, &tt, v);
		emit(o, &b, stream_cols, v, S_NCOLS, 1);
		rm_out(&b);
	}
	/* The watched PID or a signal ended it inside an interval: one last
	 * row so the joules cover the whole run. */
	if (!first && (t.end == RM_END_PID || t.end == RM_END_SIGNAL) &&
	    rm_now_mono() - tt.last > 0.001) {
		stream_row(r, &tt, v);
		emit(o, &b, stream_cols, v, S_NCOLS, 1);
		rm_out(&b);
	}
	rm_buf_free(&b);
	return rm_finish_stdout(RM_EXIT_OK);
}

static double mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Totals for a CMD run where no energy can be read: only the times. */
static void start_unmeasured(struct totals *tt)
{
	memset(tt, 0, sizeof(*tt));
	tt->start = tt->last = mono_now();
}

/*
 * Whether the counters can be read at all: 1 yes, 0 no (said on stderr:
 * root-only counters, as die_eacces words it, but CMD still runs).
 */
static int rapl_readable(struct rm_rapl *r)
{
	struct rm_rapl_step s;
	char path[4096];

	if (rm_rapl_sample(r, &s) == 0)
		return 1;
	if (rm_rapl_path(r, r->err_zone, "energy_uj", path, sizeof(path)) < 0)
		snprintf(path, sizeof(path), "%s", r->z[r->err_zone].zone);
	warnx("cannot read '%s': %s (RAPL energy counters are root-only since "
	      "Linux 5.10); energy not measured, running the command anyway",
	      path, strerror(EACCES));
	return 0;
}

/* SIGCHLD writes a byte here, so the tick loop wakes when CMD ends even
 * where pidfd_open is missing (a zombie still answers kill(pid, 0)). */
static int chld_wfd = -1;

static void on_chld(int sig)
{
	int e = errno;
	ssize_t r = write(chld_wfd, "c", 1);

	(void)sig;
	(void)r;
	errno = e;
}

static void drain(int fd)
{
	char buf[64];

	while (read(fd, buf, sizeof(buf)) > 0)
		;
}

/* What we were started with, which CMD gets back (as under time(1)). */
static struct rm_entry entry;

static pid_t spawn(char **cmd)
{
	pid_t pid = fork();

	if (pid != 0)
		return pid;
	rm_entry_restore(&entry);
	execvp(cmd[0], cmd);
	int e = errno;
	/* warn, not err: exit() would flush stdio buffers that are the parent's. */
	warn("cannot run '%s'", cmd[0]);
	_exit(e == ENOENT ? 127 : 126);
}

/*
 * Did the terminal send this signal to CMD as well?  Its ^C and its
 * hangups go to the whole foreground process group (si_code SI_KERNEL),
 * so CMD has one already while it is still in our group: passing it on
 * would make two.  A hangup of the terminal itself reaches only the
 * session's leader, which may be us.  kill(1) (SI_USER) names us alone.
 */
static int cmd_got_it_too(const struct rm_tick *t, pid_t pid)
{
	return t->si_code == SI_KERNEL && getpgid(pid) == getpgrp() &&
	       !(t->signo == SIGHUP && getsid(0) == getpid());
}

/* Read on every tick so that no wrap goes unseen; a stop signal is
 * passed on to CMD (unless the terminal sent it to CMD too), and we
 * wait for it to end.  Returns waitpid's last answer, pid once reaped. */
static pid_t wait_cmd(pid_t pid, struct rm_tick *t, int rfd, struct rm_rapl *r,
		      struct totals *tt, struct rm_rapl_step *s, int *st)
{
	pid_t w;

	for (;;) {
		w = waitpid(pid, st, WNOHANG);
		if (w == pid || (w < 0 && errno != EINTR))
			break;
		if (!rm_tick_next(t)) {
			if (t->end != RM_END_SIGNAL)
				break;
			if (!cmd_got_it_too(t, pid))
				kill(pid, t->signo);
			rm_tick_clear_signal(t);
			continue;
		}
		drain(rfd);
		if (t->done > 1 && r)
			step(r, tt, s);
	}
	while (w != pid && ((w = waitpid(pid, st, 0)) >= 0 || errno == EINTR))
		;
	return w;
}

/* The one result row of CMD's run, header first, into b. */
static void result_row(const struct opts *o, const struct totals *tt, double el, int status,
		       struct rm_buf *b)
{
	struct rm_val v[R_NCOLS];

	for (int i = 0; i < R_NCOLS; i++)
		v[i] = rm_none();
	v[R_ELAPSED] = rm_num(el, 3);
	if (tt->pkg_ok) {
		v[R_PKG_J] = rm_num((double)tt->pkg_uj / 1e6, 3);
		if (el > 0)
			v[R_PKG_W] = rm_num((double)tt->pkg_uj / 1e6 / el, 2);
	}
	if (tt->dram_ok) {
		v[R_DRAM_J] = rm_num((double)tt->dram_uj / 1e6, 3);
		if (el > 0)
			v[R_DRAM_W] = rm_num((double)tt->dram_uj / 1e6 / el, 2);
	}
	v[R_EXIT] = rm_num(status, 0);
	if (o->header && o->fmt == RM_FMT_CSV)
		rm_emit_csv_header(b, run_cols, R_NCOLS);
	emit(o, b, run_cols, v, R_NCOLS, 1);
}

/*
 * Run CMD and print what it cost: its time, and the energy of r's zones,
 * or empty energy fields where r is NULL (no readable RAPL counter).
 * Returns CMD's status as time(1) gives it (128+N for signal N).
 */
static int run_cmd(const struct opts *o, struct rm_rapl *r)
{
	struct rm_tick t;
	struct rm_buf b = { 0 };
	struct rm_rapl_step s;
	struct totals tt;
	struct sigaction sa;
	int fd = STDERR_FILENO, st = 0, status, p[2];
	pid_t pid, w;
	/* -o FILE: written whole, then renamed into place (lib/outfile). */
	struct rm_outfile out = { .fd = -1 };
	char why[256];

	if (o->output) {
		if (rm_out_open(o->output, &out, why, sizeof(why)) < 0) {
			warnx("cannot write '%s': %s", o->output, why);
			return RM_EXIT_FAIL;
		}
		fd = out.fd;
	}
	if (r)
		start(r, &tt);
	else
		start_unmeasured(&tt);
	if (pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0) {
		warn("cannot make a pipe");
		if (o->output)
			rm_out_abort(&out);
		return RM_EXIT_FAIL;
	}
	chld_wfd = p[1];
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_chld;
	sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGCHLD, &sa, NULL);
	/* Our stop signals are caught before CMD exists: one sent as soon
	 * as CMD is up must be passed on, never end us with CMD left. */
	rm_tick_init(&t, o->interval, 0, 0);
	/* The terminal's ^\ goes to CMD, which decides; we stay to write
	 * its row, as time(1) ignores SIGQUIT while its command runs. */
	signal(SIGQUIT, SIG_IGN);
	fflush(NULL);
	pid = spawn(o->cmd);
	if (pid < 0) {
		warn("cannot fork");
		if (o->output)
			rm_out_abort(&out);
		return RM_EXIT_FAIL;
	}
	t.extra_fd = p[0];
	w = wait_cmd(pid, &t, p[0], r, &tt, &s, &st);
	if (w != pid) {
		warn("cannot wait for '%s'", o->cmd[0]);
		if (o->output)
			rm_out_abort(&out);
		return RM_EXIT_FAIL;
	}
	if (r)
		step(r, &tt, &s);
	else
		s.mono = mono_now();
	status = WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : RM_EXIT_FAIL;
	result_row(o, &tt, s.mono - tt.start, status, &b);
	if (rm_buf_write(fd, &b) < 0) {
		int e = errno;
		if (o->output)
			rm_out_abort(&out);
		errno = e;
		if (e != EPIPE)
			warn("cannot write '%s'", o->output ? o->output : "stderr");
		rm_buf_free(&b);
		return status ? status : RM_EXIT_FAIL;
	}
	if (o->output && rm_out_commit(&out, why, sizeof(why)) < 0) {
		warnx("cannot write '%s': %s", o->output, why);
		rm_buf_free(&b);
		return status ? status : RM_EXIT_FAIL;
	}
	rm_buf_free(&b);
	return rm_finish_stdout(status);
}

/*
 * Find the RAPL zones, then list them, stream package and DRAM power, or
 * measure what one command cost.
 */
int main(int argc, char **argv)
{
	struct opts o;
	struct rm_rapl r;
	int n;

	rm_set_prog(prog);
	rm_entry_save(&entry);
	signal(SIGPIPE, SIG_IGN);
	parse_args(argc, argv, &o);
	n = rm_rapl_open(&r);
	if (o.cmd) {
		/* Like time(1): CMD runs whatever can be measured; what cannot
		 * is said once and its fields stay empty. */
		if (n <= 0)
			warnx("no RAPL zones under '%s/class/powercap': energy not "
			      "measured, running the command anyway", rm_sys_root());
		n = run_cmd(&o, n > 0 && rapl_readable(&r) ? &r : NULL);
		rm_rapl_close(&r);
		return n;
	}
	if (n < 0)
		err(RM_EXIT_FAIL, "no RAPL zones under '%s/class/powercap'", rm_sys_root());
	if (n == 0)
		errx(RM_EXIT_FAIL, "no RAPL zones under '%s/class/powercap'", rm_sys_root());
	if (o.interval)
		n = stream(&o, &r);
	else
		n = oneshot(&o, &r);
	rm_rapl_close(&r);
	return n;
}
