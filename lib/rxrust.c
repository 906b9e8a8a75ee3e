/*
 * rxrust: Rust regex syntax to POSIX ERE (rxrust.h).
 */
#include <stdio.h>
#include <string.h>

#include "rxrust.h"

struct rx_out {
	char *p;
	size_t n, size;
	int full;
};

static void put(struct rx_out *o, const char *s)
{
	size_t k = strlen(s);

	if (o->n + k >= o->size) {
		o->full = 1;
		return;
	}
	memcpy(o->p + o->n, s, k);
	o->n += k;
	o->p[o->n] = '\0';
}

static void putc1(struct rx_out *o, char c)
{
	char s[2] = { c, '\0' };

	put(o, s);
}

static int refuse(char *why, size_t whysz, const char *what)
{
	snprintf(why, whysz, "%s is not supported (Rust regex syntax without a POSIX equal)", what);
	return -1;
}

/* A class escape (\d \w \s) as the inside of a bracket expression. */
static const char *class_body(char c)
{
	switch (c) {
	case 'd': case 'D': return "0-9";
	case 'w': case 'W': return "[:alnum:]_";
	case 's': case 'S': return "[:space:]";
	}
	return NULL;
}

/* An escape inside [...] at *pp (just past the backslash). */
static int bracket_escape(const char **pp, struct rx_out *o, char *why, size_t whysz)
{
	char c = **pp;
	const char *body = class_body(c);

	if (body && c >= 'a') {
		put(o, body);
	} else if (body) {
		return refuse(why, whysz, "a negated class escape inside [...] (\\D, \\W, \\S)");
	} else if (c == 'p' || c == 'P') {
		return refuse(why, whysz, "a Unicode class (\\p{...})");
	} else if (c == 't') {
		putc1(o, '\t');
	} else if (c == 'n') {
		putc1(o, '\n');
	} else if (c == '\\' || c == '.' || c == '/' || c == '*' || c == '+' || c == '?' ||
		   c == '(' || c == ')' || c == '{' || c == '}' || c == '|' || c == '$') {
		putc1(o, c);
	} else {
		char what[64];
		snprintf(what, sizeof(what), "the escape \\%c inside [...]", c ? c : '?');
		return refuse(why, whysz, what);
	}
	(*pp)++;
	return 0;
}

/* A bracket expression from *pp (just past '['); copied to o. */
static int bracket(const char **pp, struct rx_out *o, char *why, size_t whysz)
{
	const char *p = *pp;

	putc1(o, '[');
	if (*p == '^')
		putc1(o, *p++);
	if (*p == ']')
		putc1(o, *p++);
	while (*p && *p != ']') {
		if (p[0] == '[' && p[1] == ':') {
			const char *e = strstr(p + 2, ":]");
			if (!e)
				return refuse(why, whysz, "an unclosed [: class");
			for (; p < e + 2; p++)
				putc1(o, *p);
		} else if (p[0] == '[') {
			return refuse(why, whysz, "a nested class or class set operation ([a[b]], &&, --)");
		} else if ((p[0] == '&' && p[1] == '&') || (p[0] == '-' && p[1] == '-') ||
			   (p[0] == '~' && p[1] == '~')) {
			return refuse(why, whysz, "a class set operation (&&, --, ~~)");
		} else if (*p == '\\') {
			p++;
			if (bracket_escape(&p, o, why, whysz) < 0)
				return -1;
		} else {
			putc1(o, *p++);
		}
	}
	if (*p != ']') {
		snprintf(why, whysz, "unclosed [");
		return -1;
	}
	putc1(o, ']');
	*pp = p + 1;
	return 0;
}

/* An escape outside [...] at *pp (just past the backslash). */
static int escape(const char **pp, struct rx_out *o, char *why, size_t whysz)
{
	char c = **pp;
	const char *body = class_body(c);

	if (body) {
		put(o, c >= 'a' ? "[" : "[^");
		put(o, body);
		put(o, "]");
	} else if (c == 'b') {
		put(o, "\\b");
	} else if (c == 'B') {
		put(o, "\\B");
	} else if (c == 'A') {
		putc1(o, '^');
	} else if (c == 'z') {
		putc1(o, '$');
	} else if (c == 't') {
		putc1(o, '\t');
	} else if (c == 'n') {
		putc1(o, '\n');
	} else if (c == 'p' || c == 'P') {
		return refuse(why, whysz, "a Unicode class (\\p{...})");
	} else if (c >= '1' && c <= '9') {
		return refuse(why, whysz, "a back-reference (\\1)");
	} else if (strchr(".*+?()[]{}|^$\\", c) && c) {
		putc1(o, '\\');
		putc1(o, c);
	} else if (c && strchr("/-#&~ \"'<>=!:,@%;`", c)) {
		putc1(o, c);
	} else {
		char what[48];
		snprintf(what, sizeof(what), "the escape \\%c", c ? c : '?');
		if (!c)
			snprintf(what, sizeof(what), "a trailing backslash");
		return refuse(why, whysz, what);
	}
	(*pp)++;
	return 0;
}

/* A group opened at *pp (just past '('). */
static int group(const char **pp, const char *start, int *cflags, struct rx_out *o,
		 char *why, size_t whysz)
{
	const char *p = *pp;

	if (*p != '?') {
		putc1(o, '(');
		return 0;
	}
	p++;
	if (*p == ':') {
		*pp = p + 1;
		putc1(o, '(');
		return 0;
	}
	if (*p == '=' || *p == '!' || (p[0] == '<' && (p[1] == '=' || p[1] == '!')))
		return refuse(why, whysz, "look-around ((?=...), (?!...), (?<=...), (?<!...))");
	if (*p == 'P' || *p == '<') {
		const char *e = strchr(p, '>');
		if ((*p == 'P' && p[1] != '<') || !e)
			return refuse(why, whysz, "this (?P group");
		*pp = e + 1;
		putc1(o, '(');
		return 0;
	}
	if (p[0] == 'i' && p[1] == ')' && *pp - 1 == start) {
		*cflags |= REG_ICASE;
		*pp = p + 2;
		return 0;
	}
	{
		char what[64];
		size_t k = strcspn(p, ")");
		if (k > 20)
			k = 20;
		snprintf(what, sizeof(what), "the flag group (?%.*s%s", (int)k, p,
			 p[k] == ')' ? ")" : "");
		if (p[0] == 'i' && p[1] == ')')
			snprintf(what, sizeof(what), "(?i) after the start of the pattern");
		return refuse(why, whysz, what);
	}
}

int rm_rx_translate(const char *rx, char *out, size_t size, int *cflags, char *why, size_t whysz)
{
	struct rx_out o = { out, 0, size, 0 };
	const char *p = rx;

	*cflags = 0;
	if (size)
		out[0] = '\0';
	while (*p) {
		char c = *p++;
		if ((c == '*' || c == '+' || c == '?' || c == '}') && *p == '?')
			return refuse(why, whysz, "a lazy quantifier (*?, +?, ??, {n,m}?)");
		if (c == '\\') {
			if (escape(&p, &o, why, whysz) < 0)
				return -1;
		} else if (c == '[') {
			if (bracket(&p, &o, why, whysz) < 0)
				return -1;
		} else if (c == '(') {
			if (group(&p, rx, cflags, &o, why, whysz) < 0)
				return -1;
		} else {
			putc1(&o, c);
		}
	}
	if (o.full) {
		snprintf(why, whysz, "too long");
		return -1;
	}
	return 0;
}

int rm_rx_compile(regex_t *re, const char *rx, char *why, size_t whysz)
{
	char ere[4096];
	int flags, rc;

	if (rm_rx_translate(rx, ere, sizeof(ere), &flags, why, whysz) < 0)
		return -1;
	rc = regcomp(re, ere, REG_EXTENDED | REG_NOSUB | flags);
	if (rc != 0) {
		regerror(rc, re, why, whysz);
		return -1;
	}
	return 0;
}
