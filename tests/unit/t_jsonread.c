/*
 * Unit tests of lib/jsonread: the bounded JSON reader rm-tree reads a
 * container engine's answers with.  What it must accept is RFC 8259's
 * grammar; what it must refuse is everything else, without reading a
 * byte past the span it was given.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonread.h"
#include "tap.h"

static int ok(const char *s)
{
	struct rm_jv v;

	return rm_json_parse(s, strlen(s), &v);
}

static void valid_values(void)
{
	const char *good[] = {
		"0", "-0", "12", "-1.5e+3", "1E9", "0.25", "true", "false", "null", "\"\"",
		"\"a\\\"b\\\\c\\/\\b\\f\\n\\r\\t\"", "\"\\u00e9\\ud83d\\ude00\"", "[]", "{}",
		" [1, \"x\", {\"a\": [null]}]\n", "{\"a\":1,\"a\":2}", "\"caf\xc3\xa9\"",
	};
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		if (!ok(good[i])) {
			printf("#   refused: %s\n", good[i]);
			CHECK(0);
		}
}

static void invalid_values(void)
{
	const char *bad[] = {
		"", " ", "01", "1.", ".5", "-", "1e", "+1", "tru", "nul", "True", "\"abc", "\"\\x\"",
		"\"\\u12\"", "\"a\tb\"", "[1,]", "[,1]", "{\"a\"}", "{\"a\":}", "{a:1}", "{\"a\":1,}",
		"[1 2]", "[1] [2]", "[", "]", "{\"a\":1", "'a'", "NaN", "[1]x",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (ok(bad[i])) {
			printf("#   accepted: '%s'\n", bad[i]);
			CHECK(0);
		}
}

static void depth_bounded(void)
{
	char deep[2 * (RM_JSON_DEPTH + 2) + 1];
	size_t n;

	for (n = 1; n <= RM_JSON_DEPTH; n++) {
		memset(deep, '[', n);
		memset(deep + n, ']', n);
		deep[2 * n] = '\0';
		if (!ok(deep)) {
			printf("#   refused depth %zu\n", n);
			CHECK(0);
		}
	}
	memset(deep, '[', RM_JSON_DEPTH + 1);
	memset(deep + RM_JSON_DEPTH + 1, ']', RM_JSON_DEPTH + 1);
	deep[2 * (RM_JSON_DEPTH + 1)] = '\0';
	CHECK(!ok(deep));
}

/* The span given is all there is: a valid prefix of a longer buffer is
 * read as that prefix, never beyond. */
static void span_bounded(void)
{
	const char *s = "[1,2]xyz";
	struct rm_jv v;

	CHECK(rm_json_parse(s, 5, &v));
	CHECK(v.s == s && v.n == 5);
	CHECK(!rm_json_parse(s, 4, &v));
	CHECK(!rm_json_parse("\"ab\"", 3, &v));
}

static void walk(void)
{
	const char *s = "[ {\"I\\u0064\": \"x\", \"Id\": \"y\", \"n\": -42}, 7, \"s\" ]";
	struct rm_jv arr, el, key, val;
	size_t it = 0, members = 0;
	char buf[16];
	long long n;
	int count = 0;

	CHECK(rm_json_parse(s, strlen(s), &arr));
	CHECK(rm_json_kind(arr) == '[');
	CHECK(rm_json_next(arr, &it, &el));
	CHECK(rm_json_kind(el) == '{');
	/* keys compare decoded; of two equal ones the first wins */
	CHECK(rm_json_get(el, "Id", &val));
	CHECK(rm_json_str(val, buf, sizeof(buf)) == 1);
	CHECK_STR(buf, "x");
	CHECK(rm_json_get(el, "n", &val) && rm_json_int(val, &n) == 0 && n == -42);
	CHECK(!rm_json_get(el, "missing", &val));
	for (size_t m = 0; rm_json_member(el, &m, &key, &val);)
		members++;
	CHECK(members == 3);
	count = 1;
	while (rm_json_next(arr, &it, &el))
		count++;
	CHECK(count == 3);
	CHECK(rm_json_kind(el) == '"');
	/* an array is no object, an object no array */
	it = 0;
	CHECK(!rm_json_get(arr, "Id", &val));
}

static void strings(void)
{
	struct rm_jv v;
	char out[16];

#define STR(lit) (v.s = (lit), v.n = strlen(lit), v)
	CHECK(rm_json_str(STR("\"\\u00e9\""), out, sizeof(out)) == 2);
	CHECK_STR(out, "\xc3\xa9");
	CHECK(rm_json_str(STR("\"\\ud83d\\ude00\""), out, sizeof(out)) == 4);
	CHECK_STR(out, "\xf0\x9f\x98\x80");
	CHECK(rm_json_str(STR("\"a\\u0000b\""), out, sizeof(out)) == -1);
	CHECK(rm_json_str(STR("\"\\ud83d\""), out, sizeof(out)) == -1);
	CHECK(rm_json_str(STR("\"\\ude00x\""), out, sizeof(out)) == -1);
	CHECK(rm_json_str(STR("\"0123456789abcdef\""), out, sizeof(out)) == -1);  /* no room for NUL */
	CHECK(rm_json_str(STR("\"0123456789abcde\""), out, sizeof(out)) == 15);
	CHECK(rm_json_str(STR("12"), out, sizeof(out)) == -1);
	CHECK(rm_json_str(STR("\"unterminated"), out, sizeof(out)) == -1);
#undef STR
}

static void integers(void)
{
	struct rm_jv v;
	long long n;

#define INT(lit) (v.s = (lit), v.n = strlen(lit), rm_json_int(v, &n))
	CHECK(INT("1733300000") == 0 && n == 1733300000LL);
	CHECK(INT("9223372036854775807") == 0 && n == 9223372036854775807LL);
	CHECK(INT("-9223372036854775808") == 0 && n == (-9223372036854775807LL - 1));
	CHECK(INT("9223372036854775808") == -1);
	CHECK(INT("1.5") == -1);
	CHECK(INT("1e3") == -1);
	CHECK(INT("\"1\"") == -1);
	CHECK(INT("") == -1);
#undef INT
}

int main(void)
{
	RUN(valid_values);
	RUN(invalid_values);
	RUN(depth_bounded);
	RUN(span_bounded);
	RUN(walk);
	RUN(strings);
	RUN(integers);
	return tap_done();
}
