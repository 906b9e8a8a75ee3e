/*
 * t_energy: lib/energy on values and on the powercap fixture trees.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "energy.h"
#include "procfs.h"
#include "tap.h"

static void test_id_parse(void)
{
	struct rm_rapl_id id;

	CHECK(rm_rapl_id_parse("intel-rapl:0", &id) == 0);
	CHECK(id.depth == 1 && id.idx[0] == 0 && !id.mmio);
	CHECK(rm_rapl_id_parse("intel-rapl:a", &id) == 0);
	CHECK(id.depth == 1 && id.idx[0] == 10);
	CHECK(rm_rapl_id_parse("intel-rapl:1f:2", &id) == 0);
	CHECK(id.depth == 2 && id.idx[0] == 31 && id.idx[1] == 2);
	CHECK(rm_rapl_id_parse("intel-rapl-mmio:0", &id) == 0);
	CHECK(id.mmio && id.depth == 1);
	CHECK(rm_rapl_id_parse("intel-rapl:0:1:1", &id) == 0);
	CHECK(id.depth == 3);
	/* The control types themselves, junk, and forms the kernel never makes. */
	CHECK(rm_rapl_id_parse("intel-rapl", &id) < 0);
	CHECK(rm_rapl_id_parse("intel-rapl-mmio", &id) < 0);
	CHECK(rm_rapl_id_parse("intel-rapl:", &id) < 0);
	CHECK(rm_rapl_id_parse("intel-rapl:0:", &id) < 0);
	CHECK(rm_rapl_id_parse("intel-rapl:A", &id) < 0);
	CHECK(rm_rapl_id_parse("intel-rapl:0x", &id) < 0);
	CHECK(rm_rapl_id_parse("intel-rapl:123456789", &id) < 0);
	CHECK(rm_rapl_id_parse("intel-rapl:0:0:0:0:0", &id) < 0);
	CHECK(rm_rapl_id_parse("dtpm:0", &id) < 0);
	CHECK(rm_rapl_id_parse("intel-raplx:0", &id) < 0);
}

static void test_id_order(void)
{
	struct rm_rapl_id a, b;

	rm_rapl_id_parse("intel-rapl:9", &a);
	rm_rapl_id_parse("intel-rapl:a", &b);
	CHECK(rm_rapl_id_cmp(&a, &b) < 0);
	rm_rapl_id_parse("intel-rapl:1", &a);
	CHECK(rm_rapl_id_cmp(&a, &b) < 0);
	rm_rapl_id_parse("intel-rapl:0", &a);
	rm_rapl_id_parse("intel-rapl:0:0", &b);
	CHECK(rm_rapl_id_cmp(&a, &b) < 0);
	rm_rapl_id_parse("intel-rapl-mmio:0", &b);
	rm_rapl_id_parse("intel-rapl:5", &a);
	CHECK(rm_rapl_id_cmp(&a, &b) < 0);
}

static void test_kind(void)
{
	CHECK(rm_rapl_kind_of("package-0", 1) == RM_RAPL_PACKAGE);
	CHECK(rm_rapl_kind_of("package-10", 1) == RM_RAPL_PACKAGE);
	CHECK(rm_rapl_kind_of("package-0-die-1", 1) == RM_RAPL_PACKAGE);
	CHECK(rm_rapl_kind_of("dram", 2) == RM_RAPL_DRAM);
	CHECK(rm_rapl_kind_of("dram", 1) == RM_RAPL_DRAM);
	CHECK(rm_rapl_kind_of("psys", 1) == RM_RAPL_PSYS);
	CHECK(rm_rapl_kind_of("core", 2) == RM_RAPL_OTHER);
	CHECK(rm_rapl_kind_of("uncore", 2) == RM_RAPL_OTHER);
	CHECK(rm_rapl_kind_of("", 1) == RM_RAPL_OTHER);
}

static void test_delta(void)
{
	uint64_t d = 0;

	/* The seed's cases: 1.0 -> 3.5 J, and 9.5 J wrapping at 10 J to 0.5 J. */
	CHECK(rm_rapl_delta(1000000, 3500000, 10000000, &d) == 0);
	CHECK_U64(d, 2500000);
	CHECK(rm_rapl_delta(9500000, 500000, 10000000, &d) == 0);
	CHECK_U64(d, 1000000);
	CHECK(rm_rapl_delta(5, 5, 0, &d) == 0);
	CHECK_U64(d, 0);
	/* A drop with no range, or from above the range, is not a wrap. */
	CHECK(rm_rapl_delta(9500000, 500000, 0, &d) < 0);
	CHECK(rm_rapl_delta(11000000, 500000, 10000000, &d) < 0);
	/* Intel's real range. */
	CHECK(rm_rapl_delta(262143000000ULL, 1000000, 262143328850ULL, &d) == 0);
	CHECK_U64(d, 328850 + 1000000);
}

static void test_feed(void)
{
	struct rm_rapl_zone z;
	uint64_t d = 0;

	memset(&z, 0, sizeof(z));
	z.max_uj = 1000;
	z.has_max = 1;
	CHECK(rm_rapl_zone_feed(&z, 1, 900, &d) == 0);   /* baseline */
	CHECK(rm_rapl_zone_feed(&z, 1, 950, &d) == 1);
	CHECK_U64(d, 50);
	CHECK(rm_rapl_zone_feed(&z, 0, 0, &d) == 0);     /* failed read */
	CHECK(rm_rapl_zone_feed(&z, 1, 20, &d) == 1);    /* spans the gap, wraps */
	CHECK_U64(d, 70);
	z.has_max = 0;
	CHECK(rm_rapl_zone_feed(&z, 1, 10, &d) == 0);    /* drop, range unknown */
	CHECK(rm_rapl_zone_feed(&z, 1, 15, &d) == 1);
	CHECK_U64(d, 5);
}

static void test_finish_dedup(void)
{
	struct rm_rapl r;
	struct rm_rapl_zone z[5];
	const char *zones[5] = { "intel-rapl-mmio:0", "intel-rapl:1", "intel-rapl:0",
				 "intel-rapl-mmio:1", "intel-rapl:0:0" };
	const char *names[5] = { "package-0", "package-1", "package-0", "package-2", "dram" };

	memset(&r, 0, sizeof(r));
	memset(z, 0, sizeof(z));
	for (int i = 0; i < 5; i++) {
		strcpy(z[i].zone, zones[i]);
		strcpy(z[i].name, names[i]);
		rm_rapl_id_parse(zones[i], &z[i].id);
		z[i].kind = rm_rapl_kind_of(names[i], z[i].id.depth);
	}
	strcpy(z[4].parent, "package-0");
	r.z = z;
	r.n = r.cap = 5;
	rm_rapl_finish(&r);
	/* mmio:0 duplicates intel-rapl:0; mmio:1 has no MSR twin and stays. */
	CHECK(r.n == 4);
	CHECK_STR(r.z[0].zone, "intel-rapl:0");
	CHECK_STR(r.z[1].zone, "intel-rapl:0:0");
	CHECK_STR(r.z[2].zone, "intel-rapl:1");
	CHECK_STR(r.z[3].zone, "intel-rapl-mmio:1");
	CHECK(r.npkg == 3 && r.ndram == 1);
}

static char fixture_root[4096];

/* Point RM_SYS_ROOT at a fixture; the root is read once per process, so
 * each fixture test runs in a child. */
static int open_fixture(const char *name, struct rm_rapl *r)
{
	const char *top = getenv("RM_TOP");

	snprintf(fixture_root, sizeof(fixture_root), "%s/tests/fixtures/powercap/%s",
		 top ? top : ".", name);
	setenv("RM_SYS_ROOT", fixture_root, 1);
	return rm_rapl_open(r);
}

static int run_child(void (*fn)(void))
{
	fflush(stdout);
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		tap_cur = 0;
		fn();
		fflush(stdout);
		_exit(tap_cur);
	}
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

static void child_intel1(void)
{
	struct rm_rapl r;
	struct rm_rapl_step s;
	uint64_t v;

	CHECK(open_fixture("intel1", &r) == 5);
	CHECK_STR(r.z[0].zone, "intel-rapl:0");
	CHECK_STR(r.z[0].name, "package-0");
	CHECK_STR(r.z[1].zone, "intel-rapl:0:0");
	CHECK_STR(r.z[1].name, "core");
	CHECK_STR(r.z[1].parent, "package-0");
	CHECK_STR(r.z[2].name, "uncore");
	CHECK_STR(r.z[3].name, "dram");
	CHECK_STR(r.z[4].zone, "intel-rapl:1");
	CHECK(r.z[4].kind == RM_RAPL_PSYS);
	CHECK(r.npkg == 1 && r.ndram == 1);
	CHECK(r.z[0].has_max);
	CHECK_U64(r.z[0].max_uj, 262143328850ULL);
	CHECK(rm_rapl_read(&r, 0, &v) == 0);
	CHECK_U64(v, 100000000);
	CHECK(rm_rapl_sample(&r, &s) == 0);
	CHECK(!s.pkg_ok && !s.dram_ok);
	CHECK(rm_rapl_sample(&r, &s) == 0);
	CHECK(s.pkg_ok && s.dram_ok);
	CHECK_U64(s.pkg_uj, 0);
	rm_rapl_close(&r);
}

static void test_fixture_intel1(void)
{
	CHECK(run_child(child_intel1) == 0);
}

static void child_hex(void)
{
	struct rm_rapl r;

	CHECK(open_fixture("hex", &r) == 11);
	CHECK_STR(r.z[9].zone, "intel-rapl:9");
	CHECK_STR(r.z[10].zone, "intel-rapl:a");
	CHECK_STR(r.z[10].name, "package-10");
	CHECK(r.npkg == 11 && r.ndram == 0);
	rm_rapl_close(&r);
}

static void test_fixture_hex(void)
{
	CHECK(run_child(child_hex) == 0);
}

static void child_none(void)
{
	struct rm_rapl r;

	setenv("RM_SYS_ROOT", "/nonexistent-rm-root", 1);
	CHECK(rm_rapl_open(&r) < 0 && errno == ENOENT);
}

static void test_no_powercap(void)
{
	CHECK(run_child(child_none) == 0);
}

/* A subzone present only inside its parent's directory is still found. */
static void child_nested_only(void)
{
	char dir[] = "/tmp/t_energy.XXXXXX", p[4096];
	struct rm_rapl r;
	FILE *f;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(p, sizeof(p), "mkdir -p '%s/class/powercap/intel-rapl:0/intel-rapl:0:0'", dir);
	CHECK(system(p) == 0);
	snprintf(p, sizeof(p), "%s/class/powercap/intel-rapl:0/name", dir);
	f = fopen(p, "w");
	fputs("package-0\n", f);
	fclose(f);
	snprintf(p, sizeof(p), "%s/class/powercap/intel-rapl:0/intel-rapl:0:0/name", dir);
	f = fopen(p, "w");
	fputs("dram\n", f);
	fclose(f);
	setenv("RM_SYS_ROOT", dir, 1);
	CHECK(rm_rapl_open(&r) == 2);
	CHECK_STR(r.z[1].rel, "intel-rapl:0/intel-rapl:0:0");
	CHECK_STR(r.z[1].parent, "package-0");
	CHECK(r.ndram == 1);
	/* No max_energy_range_uj and no energy_uj: unknown, not 0. */
	CHECK(!r.z[0].has_max);
	rm_rapl_close(&r);
	snprintf(p, sizeof(p), "rm -rf '%s'", dir);
	CHECK(system(p) == 0);
}

static void test_nested_only(void)
{
	CHECK(run_child(child_nested_only) == 0);
}

int main(void)
{
	RUN(test_id_parse);
	RUN(test_id_order);
	RUN(test_kind);
	RUN(test_delta);
	RUN(test_feed);
	RUN(test_finish_dedup);
	RUN(test_fixture_intel1);
	RUN(test_fixture_hex);
	RUN(test_no_powercap);
	RUN(test_nested_only);
	return tap_done();
}
