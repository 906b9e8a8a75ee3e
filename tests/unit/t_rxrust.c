/*
 * t_rxrust: memwatch's Rust regexes translated to POSIX ERE, and what is
 * refused named.
 */
#include <regex.h>
#include <stdio.h>
#include <string.h>

#include "rxrust.h"
#include "tap.h"

static const char *tr(const char *rx, int *flags)
{
	static char out[256], why[200];

	if (rm_rx_translate(rx, out, sizeof(out), flags, why, sizeof(why)) < 0)
		return NULL;
	return out;
}

static int matches(const char *rx, const char *s)
{
	regex_t re;
	char why[200];
	int m;

	if (rm_rx_compile(&re, rx, why, sizeof(why)) < 0)
		return -1;
	m = regexec(&re, s, 0, NULL, 0) == 0;
	regfree(&re);
	return m;
}

static const char *refused(const char *rx)
{
	static char why[200];
	char out[256];
	int flags;

	if (rm_rx_translate(rx, out, sizeof(out), &flags, why, sizeof(why)) == 0)
		return "";
	return why;
}

static void test_translate(void)
{
	int f;

	CHECK_STR(tr("cargo|rustc", &f), "cargo|rustc");
	CHECK(f == 0);
	CHECK_STR(tr("(?i)ALLOC", &f), "ALLOC");
	CHECK(f == REG_ICASE);
	CHECK_STR(tr("\\d+", &f), "[0-9]+");
	CHECK_STR(tr("\\D", &f), "[^0-9]");
	CHECK_STR(tr("\\w\\s", &f), "[[:alnum:]_][[:space:]]");
	CHECK_STR(tr("[\\d.]+", &f), "[0-9.]+");
	CHECK_STR(tr("[^\\w-]", &f), "[^[:alnum:]_-]");
	CHECK_STR(tr("\\btest\\b", &f), "\\btest\\b");
	CHECK_STR(tr("(?:a|b)(?P<n>c)(?<m>d)", &f), "(a|b)(c)(d)");
	CHECK_STR(tr("\\.rs$", &f), "\\.rs$");
	CHECK_STR(tr("a\\/b\\-c", &f), "a/b-c");
	CHECK_STR(tr("\\Afoo\\z", &f), "^foo$");
	CHECK_STR(tr("[[:digit:]]x{2,3}", &f), "[[:digit:]]x{2,3}");
}

static void test_match(void)
{
	CHECK(matches("(?i)ALLOC", "./alloc 20") == 1);
	CHECK(matches("ALLOC", "./alloc 20") == 0);
	CHECK(matches("alloc \\d+", "./alloc 20") == 1);
	CHECK(matches("alloc \\d+", "./alloc x") == 0);
	CHECK(matches("\\btest\\b", "cargo test --release") == 1);
	CHECK(matches("\\btest\\b", "cargo tests") == 0);
	CHECK(matches("^\\w+\\s", "dis_cq 8") == 1);
	CHECK(matches("^\\w+\\s", "-x 8") == 0);
	CHECK(matches("dis_cq", "mpirun -n 8 dis_cq") == 1);
}

static void test_refused(void)
{
	CHECK(strstr(refused("a.*?b"), "lazy quantifier") != NULL);
	CHECK(strstr(refused("a+?"), "lazy quantifier") != NULL);
	CHECK(strstr(refused("\\p{Greek}"), "\\p{...}") != NULL);
	CHECK(strstr(refused("(?x) a b"), "(?x)") != NULL);
	CHECK(strstr(refused("(?s)."), "(?s)") != NULL);
	CHECK(strstr(refused("(?i:a)b"), "(?i:a)") != NULL);
	CHECK(strstr(refused("a(?i)b"), "(?i) after the start") != NULL);
	CHECK(strstr(refused("foo(?=bar)"), "look-around") != NULL);
	CHECK(strstr(refused("(?<!x)y"), "look-around") != NULL);
	CHECK(strstr(refused("(a)\\1"), "back-reference") != NULL);
	CHECK(strstr(refused("\\x41"), "\\x") != NULL);
	CHECK(strstr(refused("[a-z&&[^x]]"), "class set") != NULL);
	CHECK(strstr(refused("ab\\"), "trailing backslash") != NULL);
}

static void test_compile_error(void)
{
	regex_t re;
	char why[200];

	CHECK(rm_rx_compile(&re, "(", why, sizeof(why)) == -1);
	CHECK(why[0] != '\0');
}

int main(void)
{
	tap_run("translate", test_translate);
	tap_run("match", test_match);
	tap_run("refused", test_refused);
	tap_run("compile error", test_compile_error);
	return tap_done();
}
