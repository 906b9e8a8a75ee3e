/*
 * Unit tests for lib/cli: durations with units, as every -i takes them;
 * the option table and what is made from it (getopt's arguments, the
 * usage lines, --help, the table's own check).
 */
#include <stdlib.h>

#include "cli.h"
#include "tap.h"

static void test_duration_units(void)
{
	double d = -1;

	CHECK(rm_parse_duration("200ms", 0.001, 86400, &d) == 0);
	CHECK_NEAR(d, 0.2, 1e-12);
	CHECK(rm_parse_duration("1.5s", 0.001, 86400, &d) == 0);
	CHECK_NEAR(d, 1.5, 1e-12);
	CHECK(rm_parse_duration("2m", 0.001, 86400, &d) == 0);
	CHECK_NEAR(d, 120, 1e-12);
	CHECK(rm_parse_duration("1h", 0.001, 86400, &d) == 0);
	CHECK_NEAR(d, 3600, 1e-12);
	CHECK(rm_parse_duration("15", 0.001, 86400, &d) == 0);
	CHECK_NEAR(d, 15, 1e-12);
	CHECK(rm_parse_duration(".5", 0.001, 86400, &d) == 0);
	CHECK_NEAR(d, 0.5, 1e-12);
	CHECK(rm_parse_duration("1ms", 0.001, 86400, &d) == 0);
	CHECK_NEAR(d, 0.001, 1e-12);
}

static void test_duration_refused(void)
{
	double d = 7;

	/* Out of range once converted, units that are not ours, junk. */
	CHECK(rm_parse_duration("0.5ms", 0.001, 86400, &d) == -1);
	CHECK(rm_parse_duration("25h", 0.001, 86400, &d) == -1);
	CHECK(rm_parse_duration("0s", 0.001, 86400, &d) == -1);
	CHECK(rm_parse_duration("2d", 0.001, 86400, &d) == -1);
	CHECK(rm_parse_duration("2 s", 0.001, 86400, &d) == -1);
	CHECK(rm_parse_duration("ms", 0.001, 86400, &d) == -1);
	CHECK(rm_parse_duration("1msx", 0.001, 86400, &d) == -1);
	CHECK(rm_parse_duration("1e3", 0.001, 86400, &d) == -1);
	CHECK(rm_parse_duration("-1s", 0.001, 86400, &d) == -1);
	CHECK(rm_parse_duration("1..2s", 0.001, 86400, &d) == -1);
	CHECK(rm_parse_duration("", 0.001, 86400, &d) == -1);
	CHECK(rm_parse_duration("inf", 0.001, 86400, &d) == -1);
	CHECK_NEAR(d, 7, 0);
}

/* A table with every shape: short and long, long only, an optional
 * argument, a synopsis argument, a long option column, help over lines. */
struct topts {
	double interval;
	int header;
	const char *out;
};

enum { T_WATCH = RM_CLI_LONG, T_ELSE, T_CTX };

static const struct rm_cli_opt topts[] = {
	{ 'i', "interval", "SEC", .kind = RM_CLI_INTERVAL, .off = offsetof(struct topts, interval),
	  .help = "seconds between rows;\nsecond line" },
	{ 'f', "format", "FMT", .synarg = "csv|json", .help = "csv or json" },
	{ 'H', "no-header", NULL, .kind = RM_CLI_FALSE, .off = offsetof(struct topts, header),
	  .help = "no header" },
	{ T_WATCH, "watch-pid", "PID", .help = "stop when PID ends" },
	{ T_ELSE, "elsewhere", "[=KIB]", .help = "others too" },
	{ T_CTX, "context-match", "ERE", .help = "the column is full" },
	{ 'x', NULL, "N", .help = "short only" },
	RM_CLI_END,
};

static const struct rm_cli tcli = {
	"rm-t",
	(const char *const[]){
		"[-H] [-i] [-f] [--watch-pid]... [--elsewhere]\n[--context-match | -x] PID...",
		"--elsewhere -- CMD [ARG...]",
		NULL,
	},
	"What rm-t does,\nin two lines.",
	topts,
	"After the options.",
};

static void test_cli_getopt(void)
{
	char s[64];
	struct option lo[16];

	CHECK(rm_cli_getopt(&tcli, 0, s, sizeof(s), lo, 16) == 9);
	CHECK_STR(s, ":i:f:Hx:h");
	CHECK_STR(lo[0].name, "interval");
	CHECK(lo[0].has_arg == required_argument && lo[0].val == 'i' && !lo[0].flag);
	CHECK(lo[2].has_arg == no_argument && lo[2].val == 'H');
	CHECK_STR(lo[3].name, "watch-pid");
	CHECK(lo[3].val == T_WATCH);
	CHECK(lo[4].has_arg == optional_argument);
	CHECK_STR(lo[6].name, "help");
	CHECK_STR(lo[7].name, "version");
	CHECK(lo[7].val == RM_CLI_LONG - 1);
	CHECK(lo[8].name == NULL && lo[8].val == 0);   /* -x has no long name */
	CHECK(rm_cli_getopt(&tcli, RM_CLI_IN_ORDER, s, sizeof(s), lo, 16) == 9);
	CHECK_STR(s, "+:i:f:Hx:h");
	/* Arrays too small are refused, not overrun. */
	CHECK(rm_cli_getopt(&tcli, 0, s, 6, lo, 16) == -1);
	CHECK(rm_cli_getopt(&tcli, 0, s, sizeof(s), lo, 8) == -1);
	CHECK(rm_cli_find(&tcli, T_ELSE) == &topts[4]);
	CHECK(rm_cli_find(&tcli, 'q') == NULL);
}

static void test_cli_usage(void)
{
	struct rm_buf b = { 0 };

	rm_cli_usage(&tcli, &b);
	CHECK_STR(b.p,
		  "usage: rm-t [-H] [-i SEC] [-f csv|json] [--watch-pid PID]... [--elsewhere[=KIB]]\n"
		  "            [--context-match ERE | -x N] PID...\n"
		  "       rm-t --elsewhere[=KIB] -- CMD [ARG...]\n");
	rm_buf_free(&b);
}

static void test_cli_help(void)
{
	struct rm_buf b = { 0 };

	rm_cli_help(&tcli, &b);
	CHECK_STR(b.p,
		  "usage: rm-t [-H] [-i SEC] [-f csv|json] [--watch-pid PID]... [--elsewhere[=KIB]]\n"
		  "            [--context-match ERE | -x N] PID...\n"
		  "       rm-t --elsewhere[=KIB] -- CMD [ARG...]\n"
		  "\n"
		  "What rm-t does,\n"
		  "in two lines.\n"
		  "\n"
		  "  -i, --interval SEC     seconds between rows;\n"
		  "                         second line\n"
		  "  -f, --format FMT       csv or json\n"
		  "  -H, --no-header        no header\n"
		  "      --watch-pid PID    stop when PID ends\n"
		  "      --elsewhere[=KIB]  others too\n"
		  "      --context-match ERE\n"
		  "                         the column is full\n"
		  "  -x N                   short only\n"
		  "  -h, --help             this help\n"
		  "      --version          print the version\n"
		  "\n"
		  "After the options.\n");
	rm_buf_free(&b);
}

static void test_cli_check(void)
{
	char why[256] = "";
	struct rm_cli c = tcli;
	struct rm_cli_opt bad[4];

	CHECK(rm_cli_check(&tcli, why, sizeof(why)) == 0);
	/* A synopsis that names an option the table lacks. */
	c.forms = (const char *const[]){ "[-H] [--nope] [-q]", NULL };
	CHECK(rm_cli_check(&c, why, sizeof(why)) == -1);
	CHECK_STR(why, "synopsis names '--nope', which is not in the table");
	/* "--" and words with a '-' inside are not options. */
	c.forms = (const char *const[]){ "[-H] -- CMD-NAME [a-b]", NULL };
	CHECK(rm_cli_check(&c, why, sizeof(why)) == 0);
	/* A key twice, a name twice, no help, a key that is neither. */
	c = tcli;
	c.opts = bad;
	memset(bad, 0, sizeof(bad));
	bad[0] = topts[0];
	bad[1] = topts[0];
	bad[1].name = "other";
	c.forms = (const char *const[]){ "[-i]", NULL };
	CHECK(rm_cli_check(&c, why, sizeof(why)) == -1);
	CHECK(strstr(why, "a key given twice") != NULL);
	bad[1] = topts[2];
	bad[1].name = "interval";
	CHECK(rm_cli_check(&c, why, sizeof(why)) == -1);
	CHECK(strstr(why, "a long name given twice") != NULL);
	bad[1] = topts[2];
	bad[1].help = "";
	CHECK(rm_cli_check(&c, why, sizeof(why)) == -1);
	CHECK(strstr(why, "no help") != NULL);
	bad[1] = topts[2];
	bad[1].key = '?';
	CHECK(rm_cli_check(&c, why, sizeof(why)) == -1);
	CHECK(strstr(why, "neither a letter") != NULL);
	/* A kind that stores a value without an argument to take it from, a
	 * flag's kind with one, an optional argument for a stored value. */
	bad[1] = topts[2];
	bad[1].kind = RM_CLI_STRING;
	CHECK(rm_cli_check(&c, why, sizeof(why)) == -1);
	CHECK(strstr(why, "needs a required argument") != NULL);
	bad[1] = topts[2];
	bad[1].arg = "X";
	CHECK(rm_cli_check(&c, why, sizeof(why)) == -1);
	bad[1] = topts[0];
	bad[1].key = 'j';
	bad[1].name = "j";
	bad[1].arg = "[=SEC]";
	CHECK(rm_cli_check(&c, why, sizeof(why)) == -1);
	bad[1].arg = "SEC";
	CHECK(rm_cli_check(&c, why, sizeof(why)) == 0);
}

int main(void)
{
	RUN(test_duration_units);
	RUN(test_duration_refused);
	RUN(test_cli_getopt);
	RUN(test_cli_usage);
	RUN(test_cli_help);
	RUN(test_cli_check);
	return tap_done();
}
