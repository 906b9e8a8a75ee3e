/*
 * Unit tests for lib/cli: durations with units, as every -i takes them.
 */
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

int main(void)
{
	RUN(test_duration_units);
	RUN(test_duration_refused);
	return tap_done();
}
