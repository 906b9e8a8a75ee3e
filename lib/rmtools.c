/*
 * rmtools: see rmtools.h.  These helpers print and exit, which lib
 * otherwise never does; they are the shared edge of every command's main.
 *
 * They print with err(3) and warnx(3): every command calls rm_set_prog
 * first thing in main, so each message names the command, whatever its
 * binary is called, and leaves in one write(2).
 */
#include <err.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rmtools.h"

void rm_set_prog(const char *prog)
{
	/* err(3) reads it and never writes it. */
	program_invocation_short_name = (char *)prog;
	/* warn(3) writes "prog: ", the message and the reason apart; a line
	 * buffer makes them one write(2), so that a line stays whole beside
	 * the other commands that write to the same stderr (rm-monitor's
	 * samplers).  Every message ends with a newline: none waits. */
	setvbuf(stderr, NULL, _IOLBF, BUFSIZ);
}

void rm_cli_usage_error(const struct rm_cli *c, const char *fmt, ...)
{
	struct rm_buf b = { 0 };
	va_list ap;

	rm_cli_usage(c, &b);
	va_start(ap, fmt);
	vwarnx(fmt, ap);
	va_end(ap);
	/* The usage lines, each ending in a newline: one write after the message's. */
	fputs(b.len ? b.p : "\n", stderr);
	exit(RM_EXIT_USAGE);
}

int rm_finish_stdout(int status)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		if (errno == EPIPE)
			return status;
		warn("cannot write output");
		return RM_EXIT_FAIL;
	}
	return status;
}

void rm_out(struct rm_buf *b)
{
	if (rm_buf_write(STDOUT_FILENO, b) < 0) {
		if (errno == EPIPE)
			exit(RM_EXIT_OK);
		err(RM_EXIT_FAIL, "cannot write output");
	}
	rm_buf_reset(b);
}

void rm_cli_value(const struct rm_cli *c, enum rm_cli_kind kind, const char *arg, void *field)
{
	switch (kind) {
	case RM_CLI_TRUE:
	case RM_CLI_FALSE:
		*(int *)field = kind == RM_CLI_TRUE;
		return;
	case RM_CLI_STRING:
		*(const char **)field = arg;
		return;
	case RM_CLI_INTERVAL:
		if (rm_parse_duration(arg, 0.001, 86400, field) < 0)
			rm_cli_usage_error(c, "invalid interval '%s': seconds from 0.001 to 86400 "
					   "(or with a unit: 200ms, 1.5s, 2m, 1h)", arg);
		return;
	case RM_CLI_COUNT:
		if (rm_parse_long(arg, 1, 1000000000L, field) < 0)
			rm_cli_usage_error(c, "invalid count '%s': a whole number from 1", arg);
		return;
	case RM_CLI_WATCH_PID:
		if (rm_parse_pid(arg, field) < 0)
			rm_cli_usage_error(c, "invalid PID '%s' for --watch-pid", arg);
		return;
	case RM_CLI_FORMAT:
		if (rm_fmt_parse(arg, field) < 0)
			rm_cli_usage_error(c, "invalid format '%s': csv, jsonl or prom", arg);
		return;
	default:
		abort();    /* not a kind with a value: a bug in the caller */
	}
}

/* --version: "PROG VERSION" on stdout, exit 0. */
static void __attribute__((noreturn)) cli_version(const struct rm_cli *c)
{
	printf("%s %s\n", c->prog, RM_VERSION);
	exit(rm_finish_stdout(RM_EXIT_OK));
}

static void __attribute__((noreturn)) cli_help(const struct rm_cli *c)
{
	struct rm_buf b = { 0 };

	rm_cli_help(c, &b);
	if (b.p)
		fputs(b.p, stdout);
	exit(rm_finish_stdout(RM_EXIT_OK));
}

/*
 * The option getopt's ':' (a value missing) or '?' (an unknown option)
 * is about: the word, or "-X" in sbuf (3 bytes) for a short option.
 */
static const char *bad_option(int c, char **argv, int next, char *sbuf)
{
	/* Inside a cluster (-Zi) getopt has not moved on: argv[next - 1] is
	 * the word before, so a short option is named from optopt. */
	const char *w = argv[next - 1];
	int shortopt = c == ':' ? strncmp(w, "--", 2) != 0 : optopt > 0;

	if (shortopt && optopt > 0 && optopt < 256) {
		sbuf[0] = '-';
		sbuf[1] = (char)optopt;
		sbuf[2] = '\0';
		return sbuf;
	}
	return w;
}

int rm_cli_next(const struct rm_cli *c, int flags, int argc, char **argv, void *dst)
{
	static const struct rm_cli *checked;
	char shortopts[3 * RM_CLI_MAX + 3], why[256];
	struct option longopts[RM_CLI_MAX + 1];
	int k;

	if (checked != c) {
		if (rm_cli_check(c, why, sizeof(why)) < 0) {
			warnx("bug in the option table: %s", why);
			abort();
		}
		checked = c;
	}
	if (rm_cli_getopt(c, flags, shortopts, sizeof(shortopts), longopts, RM_CLI_MAX + 1) < 0)
		abort();    /* rm_cli_check has seen it fits */
	opterr = 0;
	while ((k = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		const struct rm_cli_opt *o = k == ':' || k == '?' ? NULL : rm_cli_find(c, k);

		if (!o) {
			char sbuf[3];
			const char *w = bad_option(k, argv, optind, sbuf);

			if (k == ':')
				rm_cli_usage_error(c, "option '%s' needs a value", w);
			rm_cli_usage_error(c, "unknown option '%s'", w);
		}
		switch (o->kind) {
		case RM_CLI_CALLER:
			return k;
		case RM_CLI_HELP:
			cli_help(c);
		case RM_CLI_VERSION:
			cli_version(c);
		default:
			rm_cli_value(c, o->kind, optarg, (char *)dst + o->off);
		}
	}
	return -1;
}
