/*
 * rmtools: see rmtools.h.  These three helpers exit, which lib otherwise
 * never does; they are the shared edge of every command's main.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rmtools.h"

void rm_usage_error(const char *prog, const char *usage_line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n%s\n", usage_line);
	exit(RM_EXIT_USAGE);
}

int rm_finish_stdout(const char *prog, int status)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		if (errno == EPIPE)
			return status;
		fprintf(stderr, "%s: cannot write output: %s\n", prog, strerror(errno));
		return RM_EXIT_FAIL;
	}
	return status;
}

void rm_out(const char *prog, struct rm_buf *b)
{
	if (rm_buf_write(STDOUT_FILENO, b) < 0) {
		if (errno == EPIPE)
			exit(RM_EXIT_OK);
		fprintf(stderr, "%s: cannot write output: %s\n", prog, strerror(errno));
		exit(RM_EXIT_FAIL);
	}
	rm_buf_reset(b);
}

double rm_opt_interval(const char *prog, const char *usage_line, const char *arg)
{
	double v;

	if (rm_parse_duration(arg, 0.001, 86400, &v) < 0)
		rm_usage_error(prog, usage_line, "invalid interval '%s': seconds from 0.001 to 86400 "
			"(or with a unit: 200ms, 1.5s, 2m, 1h)", arg);
	return v;
}

long rm_opt_count(const char *prog, const char *usage_line, const char *arg)
{
	long v;

	if (rm_parse_long(arg, 1, 1000000000L, &v) < 0)
		rm_usage_error(prog, usage_line, "invalid count '%s': a whole number from 1", arg);
	return v;
}

pid_t rm_opt_watch_pid(const char *prog, const char *usage_line, const char *arg)
{
	pid_t v;

	if (rm_parse_pid(arg, &v) < 0)
		rm_usage_error(prog, usage_line, "invalid PID '%s' for --watch-pid", arg);
	return v;
}

enum rm_fmt rm_opt_format(const char *prog, const char *usage_line, const char *arg)
{
	enum rm_fmt f;

	if (rm_fmt_parse(arg, &f) < 0)
		rm_usage_error(prog, usage_line, "invalid format '%s': csv, jsonl or prom", arg);
	return f;
}

void rm_opt_help(const char *prog, const char *usage_line, const char *help)
{
	printf("%s\n%s", usage_line, help);
	exit(rm_finish_stdout(prog, RM_EXIT_OK));
}

void rm_opt_version(const char *prog)
{
	printf("%s %s\n", prog, RM_VERSION);
	exit(rm_finish_stdout(prog, RM_EXIT_OK));
}

void rm_opt_bad(const char *prog, const char *usage_line, int c, char **argv, int next)
{
	/* Inside a cluster (-Zi) getopt has not moved on: argv[next - 1] is
	 * the word before, so a short option is named from optopt. */
	const char *w = argv[next - 1];
	int shortopt = c == ':' ? strncmp(w, "--", 2) != 0 : optopt > 0;

	if (shortopt && optopt > 0 && optopt < 256) {
		if (c == ':')
			rm_usage_error(prog, usage_line, "option '-%c' needs a value", optopt);
		rm_usage_error(prog, usage_line, "unknown option '-%c'", optopt);
	}
	if (c == ':')
		rm_usage_error(prog, usage_line, "option '%s' needs a value", w);
	rm_usage_error(prog, usage_line, "unknown option '%s'", w);
}
