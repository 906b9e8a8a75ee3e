/*
 * cli: see cli.h.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int rm_parse_seconds(const char *s, double min, double max, double *out)
{
	const char *p = s;
	int digits = 0;
	char *end;
	double v;

	/* Only [0-9]+(.[0-9]*)? or .[0-9]+ is accepted: strtod alone would
	 * take "inf", "nan", "1e3", "0x10" and leading spaces. */
	for (; *p >= '0' && *p <= '9'; p++)
		digits++;
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9'; p++)
			digits++;
	if (*p || !digits)
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int rm_parse_duration(const char *s, double min, double max, double *out)
{
	static const struct { const char *name; double scale; } units[] = {
		{ "ms", 0.001 }, { "s", 1 }, { "m", 60 }, { "h", 3600 },
	};
	char num[64];
	size_t n = strspn(s, "0123456789.");
	double v, scale = 1;

	if (n == 0 || n >= sizeof(num))
		return -1;
	if (s[n]) {
		size_t i;

		for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (strcmp(s + n, units[i].name) == 0)
				break;
		if (i == sizeof(units) / sizeof(units[0]))
			return -1;
		scale = units[i].scale;
	}
	memcpy(num, s, n);
	num[n] = '\0';
	if (rm_parse_seconds(num, 0, 1e12, &v) < 0)
		return -1;
	v *= scale;
	if (v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int rm_parse_long(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	if (!*s || (*s != '-' && (*s < '0' || *s > '9')))
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int rm_parse_pid(const char *s, pid_t *out)
{
	long v;

	if (rm_parse_long(s, 1, 4194304, &v) < 0)
		return -1;
	*out = (pid_t)v;
	return 0;
}

/* The option table (cli.h). */

#define HELP_COL 25     /* where --help's option text starts */

/* A short option letter: what getopt can take in a cluster. */
static int short_letter(int key)
{
	return (key >= 'a' && key <= 'z') || (key >= 'A' && key <= 'Z') ||
	       (key >= '0' && key <= '9');
}

static int has_arg(const struct rm_cli_opt *o)
{
	return !o->arg ? no_argument : o->arg[0] == '[' ? optional_argument : required_argument;
}

int rm_cli_getopt(const struct rm_cli *c, int flags, char *shortopts, size_t size,
		  struct option *longopts, size_t nlong)
{
	size_t n = 0, k = 0;
	int count = 0;

	/* At most "+:" and "x::" per option, and the NUL. */
	if (size < 3)
		return -1;
	if (flags & RM_CLI_IN_ORDER)
		shortopts[n++] = '+';
	shortopts[n++] = ':';
	for (const struct rm_cli_opt *o = c->opts; o->key; o++, count++) {
		int has = has_arg(o);

		if (short_letter(o->key)) {
			if (n + 4 > size)
				return -1;
			shortopts[n++] = (char)o->key;
			if (has != no_argument)
				shortopts[n++] = ':';
			if (has == optional_argument)
				shortopts[n++] = ':';
		}
		if (o->name) {
			if (k + 2 > nlong)
				return -1;
			longopts[k].name = o->name;
			longopts[k].has_arg = has;
			longopts[k].flag = NULL;
			longopts[k].val = o->key;
			k++;
		}
	}
	if (nlong < 1)
		return -1;
	shortopts[n] = '\0';
	memset(&longopts[k], 0, sizeof(longopts[k]));
	return count;
}

const struct rm_cli_opt *rm_cli_find(const struct rm_cli *c, int key)
{
	for (const struct rm_cli_opt *o = c->opts; o->key; o++)
		if (o->key == key)
			return o;
	return NULL;
}

static const struct rm_cli_opt *find_name(const struct rm_cli *c, const char *name, size_t len)
{
	for (const struct rm_cli_opt *o = c->opts; o->key; o++)
		if (o->name && strlen(o->name) == len && strncmp(o->name, name, len) == 0)
			return o;
	return NULL;
}

static int name_char(char ch)
{
	return short_letter(ch) || ch == '-';
}

/*
 * Whether p, inside form, starts an option word ("-i", "--watch-pid"):
 * its length, or 0 ("--" alone, "-", a word that merely holds a '-').
 * *o is the table's entry for it, or NULL when the table has none.
 */
static size_t opt_word(const struct rm_cli *c, const char *form, const char *p,
		       const struct rm_cli_opt **o)
{
	size_t len;

	*o = NULL;
	if (p[0] != '-' || (p > form && !strchr(" [|\n", p[-1])))
		return 0;
	if (p[1] == '-') {
		for (len = 0; name_char(p[2 + len]); len++)
			;
		if (len == 0)
			return 0;
		*o = find_name(c, p + 2, len);
		return len + 2;
	}
	if (!short_letter(p[1]) || name_char(p[2]))
		return 0;
	*o = rm_cli_find(c, p[1]);
	return 2;
}

/* The form with each option's argument put in; '\n' indents by indent. */
static void add_form(const struct rm_cli *c, const char *form, size_t indent, struct rm_buf *b)
{
	for (const char *p = form; *p;) {
		const struct rm_cli_opt *o;
		size_t len = opt_word(c, form, p, &o);

		if (len == 0) {
			if (*p == '\n')
				rm_buf_addf(b, "\n%*s", (int)indent, "");
			else
				rm_buf_addc(b, *p);
			p++;
			continue;
		}
		rm_buf_add(b, p, len);
		p += len;
		if (o && o->arg) {
			if (o->arg[0] != '[')
				rm_buf_addc(b, ' ');
			rm_buf_adds(b, o->arg[0] != '[' && o->synarg ? o->synarg : o->arg);
		}
	}
}

void rm_cli_usage(const struct rm_cli *c, struct rm_buf *b)
{
	size_t indent = strlen("usage: ") + strlen(c->prog) + 1;

	for (int i = 0; c->forms[i]; i++) {
		rm_buf_addf(b, "%s%s ", i ? "       " : "usage: ", c->prog);
		add_form(c, c->forms[i], indent, b);
		rm_buf_addc(b, '\n');
	}
}

/* Text whose '\n' continue it at column col; then a newline. */
static void add_lines(struct rm_buf *b, const char *s, int col)
{
	for (; *s; s++) {
		if (*s == '\n')
			rm_buf_addf(b, "\n%*s", col, "");
		else
			rm_buf_addc(b, *s);
	}
	rm_buf_addc(b, '\n');
}

/* "  -i, --interval SEC     help", as --help lists an option. */
static void add_option(struct rm_buf *b, const struct rm_cli_opt *o)
{
	size_t start = b->len;

	if (short_letter(o->key))
		rm_buf_addf(b, "  -%c%s", o->key, o->name ? ", " : "");
	else
		rm_buf_adds(b, "      ");
	if (o->name)
		rm_buf_addf(b, "--%s", o->name);
	if (o->arg)
		rm_buf_addf(b, "%s%s", o->arg[0] == '[' ? "" : " ", o->arg);
	if (b->len - start < HELP_COL)
		rm_buf_addf(b, "%*s", (int)(HELP_COL - (b->len - start)), "");
	else
		rm_buf_addf(b, "\n%*s", HELP_COL, "");
	add_lines(b, o->help, HELP_COL);
}

void rm_cli_help(const struct rm_cli *c, struct rm_buf *b)
{
	rm_cli_usage(c, b);
	rm_buf_addc(b, '\n');
	add_lines(b, c->intro, 0);
	rm_buf_addc(b, '\n');
	for (const struct rm_cli_opt *o = c->opts; o->key; o++)
		add_option(b, o);
	if (c->outro) {
		rm_buf_addc(b, '\n');
		add_lines(b, c->outro, 0);
	}
}

int rm_cli_check(const struct rm_cli *c, char *why, size_t n)
{
	int count = 0;

	for (const struct rm_cli_opt *o = c->opts; o->key; o++, count++) {
		const char *what = NULL;

		if (!short_letter(o->key) && o->key < RM_CLI_LONG - 1)
			what = "a key that is neither a letter nor from RM_CLI_LONG";
		else if (!short_letter(o->key) && !o->name)
			what = "no short letter and no long name";
		else if (!o->help || !o->help[0])
			what = "no help";
		else if (rm_cli_find(c, o->key) != o)
			what = "a key given twice";
		else if (o->name && find_name(c, o->name, strlen(o->name)) != o)
			what = "a long name given twice";
		else if (o->kind != RM_CLI_CALLER && (o->kind >= RM_CLI_STRING &&
			 o->kind <= RM_CLI_WATCH_PID) != (has_arg(o) == required_argument))
			what = "a kind that stores a value needs a required argument, and only it";
		if (what) {
			snprintf(why, n, "option %d (%s): %s", count, o->name ? o->name : "", what);
			return -1;
		}
	}
	if (count > RM_CLI_MAX) {
		snprintf(why, n, "%d options, more than RM_CLI_MAX", count);
		return -1;
	}
	for (int i = 0; c->forms[i]; i++) {
		for (const char *p = c->forms[i]; *p; p++) {
			const struct rm_cli_opt *o;
			size_t len = opt_word(c, c->forms[i], p, &o);

			if (len && !o) {
				snprintf(why, n, "synopsis names '%.*s', which is not in the table",
					 (int)len, p);
				return -1;
			}
			p += len ? len - 1 : 0;
		}
	}
	return 0;
}
