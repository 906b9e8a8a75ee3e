/*
 * cli: the argument conventions every command shares: strict numbers,
 * intervals in seconds with decimals, PIDs; and the option table each
 * command writes once, from which its getopt arguments, usage lines and
 * --help are made.  Nothing here prints or exits (rmtools.h does).
 */
#ifndef RM_CLI_H
#define RM_CLI_H

#include <getopt.h>
#include <stddef.h>
#include <sys/types.h>

#include "text.h"

/*
 * Parse a number of seconds with optional decimals ("0.2", "15") within
 * [min, max].  Returns 0, or -1 when s is not such a number or out of
 * range.  No exponents, no hex, no trailing text.
 */
int rm_parse_seconds(const char *s, double min, double max, double *out);

/*
 * Parse a duration: the same number as rm_parse_seconds, optionally
 * followed by one unit: "ms", "s", "m" or "h" ("200ms", "1.5s", "2m").
 * A bare number is seconds.  The result, in seconds, must lie within
 * [min, max].  Returns 0, or -1 on junk, an unknown unit, or out of range.
 */
int rm_parse_duration(const char *s, double min, double max, double *out);

/* Parse a decimal integer within [min, max]; -1 on any junk. */
int rm_parse_long(const char *s, long min, long max, long *out);

/* A PID: 1 to 4194304 (PID_MAX_LIMIT). */
int rm_parse_pid(const char *s, pid_t *out);

/*
 * The option table: one per command, the only place its options, their
 * argument names and their help are written.  From it come the getopt_long
 * arguments (rm_cli_getopt), the usage lines (rm_cli_usage: --help's first
 * lines, the usage error's, and through `make man-synopsis` the man page's
 * SYNOPSIS) and the --help text (rm_cli_help).  rmtools.h has the loop
 * that parses argv with it (rm_cli_next) and the usage error.
 *
 * A command writes, at file scope:
 *
 *	#define OFF(f) offsetof(struct opts, f)
 *	enum { O_WATCH = RM_CLI_LONG, O_MATCH };
 *	static const struct rm_cli_opt options[] = {
 *		{ 'i', "interval", "SEC", .kind = RM_CLI_INTERVAL, .off = OFF(interval),
 *		  .help = "seconds between rows (0.001 to 86400)" },
 *		{ 'f', "format", "FMT", .kind = RM_CLI_FORMAT, .off = OFF(fmt),
 *		  .synarg = "csv|jsonl|prom", .help = "csv (default), jsonl or prom" },
 *		{ 'H', "no-header", NULL, .kind = RM_CLI_FALSE, .off = OFF(header),
 *		  .help = "no CSV header line" },
 *		{ O_WATCH, "watch-pid", "PID", .kind = RM_CLI_WATCH_PID, .off = OFF(watch_pid),
 *		  .help = "stop as soon as PID ends" },
 *		{ O_MATCH, "match", "ERE", .help = "processes whose name matches ERE" },
 *		RM_CLI_END,	(--help, --version and the terminator)
 *	};
 *	static const struct rm_cli cli = {
 *		"rm-x",
 *		(const char *const[]){ "[-H] [-i] [-f] [--watch-pid] [--match]", NULL },
 *		"What rm-x does, in a paragraph.",
 *		options,
 *		NULL,	(no paragraph after the options)
 *	};
 *
 * and in parse_args:
 *
 *	while ((c = rm_cli_next(&cli, 0, argc, argv, o)) != -1)
 *		switch (c) {
 *		case O_MATCH:	(an RM_CLI_CALLER option: the command's own work)
 *			...
 *		}
 *	if (bad combination)
 *		rm_cli_usage_error(&cli, "--match takes no PID");
 *
 * An option that stores in a way of its own (a list, a regex, a check of
 * its own) keeps kind RM_CLI_CALLER; rm_cli_value parses the shared kinds
 * for it (rm-sample's repeated --watch-pid).
 *
 * Key, long name and argument are written in place, the rest by name (a
 * positional entry that leaves fields out would draw -Wextra's
 * missing-field-initializers warning; a designated one does not).
 *
 * Synopsis forms name options without their arguments: "[-i]" is written
 * "[-i SEC]", "[-f]" "[-f csv|jsonl|prom]" (the entry's synarg), and
 * "[--elsewhere]" with an optional argument "[--elsewhere[=KIB]]".  Every
 * other word ("--", "CMD", "PID...", "|", brackets) is written as is, and a
 * '\n' in a form continues it on a line indented under the first.
 *
 * Help text: one string per option; a '\n' continues it on the next line
 * in the help column (nothing is wrapped: the text prints as written, and
 * so do the intro and outro, whose '\n' start new lines).  The option column is "  -i, --interval SEC" (or
 * "      --watch-pid PID" without a short letter), padded to column 25; a
 * longer one puts the help on the next line.
 */

/* Keys of options that have only a long name: RM_CLI_LONG, RM_CLI_LONG + 1...
 * (RM_CLI_LONG - 1 is --version's). */
#define RM_CLI_LONG 256
/* The most options a table may have (the getopt arrays are this size). */
#define RM_CLI_MAX 64

/* What rm_cli_next does with an option; the field is at the entry's off. */
enum rm_cli_kind {
	RM_CLI_CALLER = 0,  /* nothing: rm_cli_next returns its key, optarg set */
	RM_CLI_TRUE,        /* int field = 1 */
	RM_CLI_FALSE,       /* int field = 0 (-H: header = 0) */
	RM_CLI_STRING,      /* const char * field = the argument */
	RM_CLI_INTERVAL,    /* double: a duration, 0.001 s to 86400 s */
	RM_CLI_COUNT,       /* long: a whole number from 1 */
	RM_CLI_FORMAT,      /* enum rm_fmt: csv, jsonl or prom */
	RM_CLI_WATCH_PID,   /* pid_t: a PID, for --watch-pid */
	RM_CLI_HELP,        /* the help on stdout, exit 0 */
	RM_CLI_VERSION,     /* "PROG VERSION" on stdout, exit 0 */
};

struct rm_cli_opt {
	int key;            /* short letter ('i'), or from RM_CLI_LONG: long only */
	const char *name;   /* long name without "--", or NULL: short only */
	const char *arg;    /* argument's name ("SEC"); NULL: takes none;
	                     * "[=SEC]": optional, given as --name=SEC */
	const char *help;   /* the help; '\n' continues it on the next line */
	enum rm_cli_kind kind; /* RM_CLI_CALLER (0) unless given */
	size_t off;         /* the field kind stores to: offsetof(struct opts, f) */
	const char *synarg; /* the argument as the synopsis writes it, if not
	                     * arg: "csv|jsonl|prom" where the help says FMT */
};

/* The two options every command has, worded once. */
#define RM_CLI_HELP_OPT { 'h', "help", NULL, .kind = RM_CLI_HELP, .help = "this help" }
#define RM_CLI_VERSION_OPT \
	{ RM_CLI_LONG - 1, "version", NULL, .kind = RM_CLI_VERSION, .help = "print the version" }
/* The end of every option table: those two, then the terminator. */
#define RM_CLI_END RM_CLI_HELP_OPT, RM_CLI_VERSION_OPT, { 0 }

struct rm_cli {
	const char *prog;           /* the command's name, as it calls itself */
	const char *const *forms;   /* synopsis forms, NULL-terminated (see above) */
	const char *intro;          /* --help's paragraph after the usage */
	const struct rm_cli_opt *opts; /* ends with an entry whose key is 0 */
	const char *outro;          /* a paragraph after the options, or NULL */
};

/* rm_cli_getopt's flags. */
#define RM_CLI_IN_ORDER 1   /* stop at the first operand ("+"): CMD's options stay CMD's */

/*
 * Fill shortopts (size bytes) and longopts (nlong entries, the last one
 * zeroed as getopt_long wants) for getopt_long from c's table.  shortopts
 * starts with ':' (a missing value is told apart from an unknown option),
 * after '+' with RM_CLI_IN_ORDER.  Returns the number of options, or -1
 * when an array is too small.
 */
int rm_cli_getopt(const struct rm_cli *c, int flags, char *shortopts, size_t size,
		  struct option *longopts, size_t nlong);

/* The entry with this key, or NULL. */
const struct rm_cli_opt *rm_cli_find(const struct rm_cli *c, int key);

/*
 * Append the usage lines to b: "usage: PROG FORM", each further form as
 * "       PROG FORM", continuation lines indented under the first word
 * after PROG; every line ends with '\n'.
 */
void rm_cli_usage(const struct rm_cli *c, struct rm_buf *b);

/* Append the whole --help to b: usage, a blank line, the intro, a blank
 * line, the options, and the outro after another blank line. */
void rm_cli_help(const struct rm_cli *c, struct rm_buf *b);

/*
 * Check c's table: at most RM_CLI_MAX options, each with a key, help, and
 * a short letter or long name; no key, letter or name twice; a required
 * argument exactly where the kind stores one (RM_CLI_STRING to
 * RM_CLI_WATCH_PID); every option a synopsis form names is in the table.  Returns 0, or -1 with what is
 * wrong in why (rm_cli_next checks once and aborts: a table's bug shows in
 * any test that runs the command).
 */
int rm_cli_check(const struct rm_cli *c, char *why, size_t n);

#endif
