/*
 * Unit tests of the pure parsers in lib/ on fixture strings.
 */
#include <errno.h>
#include <inttypes.h>
#include <regex.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rmtools.h"
#include "tap.h"

static void meminfo_full(void)
{
	struct rm_meminfo mi;
	const char *t = "MemTotal:       16384000 kB\nMemFree:         1000000 kB\n"
			"MemAvailable:    8192000 kB\nBuffers: 1 kB\nSwapTotal:       2097148 kB\n"
			"SwapFree:        1048576 kB\n";

	CHECK(rm_meminfo_parse(t, &mi) == 0);
	CHECK_U64(mi.total_kib, 16384000);
	CHECK_U64(mi.avail_kib, 8192000);
	CHECK_U64(mi.swap_total_kib, 2097148);
	CHECK_U64(mi.swap_free_kib, 1048576);
	CHECK(mi.has & RM_MI_AVAIL);
}

static void meminfo_without_memavailable(void)
{
	/* Kernels before 3.14 have no MemAvailable: it must read as unknown. */
	struct rm_meminfo mi;
	const char *t = "MemTotal:  1000 kB\nMemFree:  500 kB\nSwapTotal: 0 kB\nSwapFree: 0 kB\n";

	CHECK(rm_meminfo_parse(t, &mi) == 0);
	CHECK(!(mi.has & RM_MI_AVAIL));
	CHECK_U64(mi.avail_kib, 0);
	CHECK(mi.has & RM_MI_SWAPTOTAL);
}

static void meminfo_no_swap_lines(void)
{
	struct rm_meminfo mi;

	CHECK(rm_meminfo_parse("MemTotal: 1000 kB\nMemAvailable: 10 kB\n", &mi) == 0);
	CHECK(!(mi.has & RM_MI_SWAPTOTAL));
	CHECK(!(mi.has & RM_MI_SWAPFREE));
	CHECK(rm_meminfo_parse("garbage\n", &mi) == -1);
	CHECK(rm_meminfo_parse("", &mi) == -1);
}

static void cpustat_with_steal_and_guest(void)
{
	struct rm_cputimes a, b;
	/* user nice system idle iowait irq softirq steal guest guest_nice */
	const char *t1 = "cpu  100 0 100 700 100 0 0 0 50 0\ncpu0 1 2 3 4\n";
	const char *t2 = "cpu  200 0 200 1300 200 0 0 100 90 0\n";

	CHECK(rm_cputimes_parse(t1, &a) == 0);
	CHECK(rm_cputimes_parse(t2, &b) == 0);
	/* guest is inside user: total is the first eight fields. */
	CHECK_U64(a.total, 1000);
	CHECK_U64(a.idle, 800);
	CHECK_U64(b.total, 2000);
	/* busy = (1000 - 700) / 1000 with steal counted busy */
	CHECK_NEAR(rm_cputimes_pct(&a, &b), 30.0, 1e-9);
}

static void cpustat_without_steal(void)
{
	struct rm_cputimes a, b;

	/* A 2.6.0 kernel's four fields. */
	CHECK(rm_cputimes_parse("cpu 10 0 10 80\n", &a) == 0);
	CHECK(rm_cputimes_parse("cpu 60 0 10 130\n", &b) == 0);
	CHECK_NEAR(rm_cputimes_pct(&a, &b), 50.0, 1e-9);
	/* No time passed: unknown, not 0. */
	CHECK(rm_cputimes_pct(&b, &b) < 0);
	CHECK(rm_cputimes_parse("intr 1 2 3\n", &a) == -1);
	CHECK(!a.known);
}

static void loadavg(void)
{
	struct rm_loadavg la;

	CHECK(rm_loadavg_parse("1.50 0.75 0.25 3/456 7890\n", &la) == 0);
	CHECK_NEAR(la.load1, 1.5, 1e-9);
	CHECK(rm_loadavg_parse("", &la) == -1);
}

static void vmstat_oom(void)
{
	uint64_t v = 99;

	CHECK(rm_vmstat_oom_parse("nr_free_pages 5\noom_kill 7\nfoo 1\n", &v) == 0);
	CHECK_U64(v, 7);
	/* Before 4.13 there is no oom_kill line. */
	CHECK(rm_vmstat_oom_parse("nr_free_pages 5\npgfault 9\n", &v) == -1);
	CHECK(rm_vmstat_oom_parse("oom_kill_x 3\n", &v) == -1);
}

static void pressure(void)
{
	struct rm_psi p;

	CHECK(rm_psi_parse("some avg10=1.25 avg60=0.00 avg300=0.00 total=1\n"
			   "full avg10=0.50 avg60=0.00 avg300=0.00 total=1\n", &p) == 0);
	CHECK(p.has_some && p.has_full);
	CHECK_NEAR(p.some10, 1.25, 1e-9);
	CHECK_NEAR(p.full10, 0.5, 1e-9);
	/* cpu had no full line before 5.13. */
	CHECK(rm_psi_parse("some avg10=3.00 avg60=0.00 avg300=0.00 total=1\n", &p) == 0);
	CHECK(p.has_some && !p.has_full);
	CHECK(rm_psi_parse("", &p) == -1);
}

static void stat_hostile_name(void)
{
	struct rm_pstat st;
	const char *t = "4242 (a) (b c) S 1 4242 4242 0 -1 4194560 100 0 0 0 "
			"250 50 0 0 20 0 3 0 123456 10485760 2560 18446744073709551615 "
			"1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";

	CHECK(rm_pstat_parse(t, &st) == 0);
	CHECK_U64(st.pid, 4242);
	CHECK_STR(st.comm, "a) (b c");
	CHECK(st.state == 'S');
	CHECK_U64(st.ppid, 1);
	CHECK_U64(st.utime, 250);
	CHECK_U64(st.stime, 50);
	CHECK_U64(st.threads, 3);
	CHECK_U64(st.starttime, 123456);
	CHECK_U64(st.rss_pages, 2560);
	CHECK(!(st.flags & RM_PF_KTHREAD));
	CHECK(rm_pstat_parse("12 (x) S", &st) == -1);
	CHECK(rm_pstat_parse("", &st) == -1);
	CHECK(rm_pstat_parse("12 x) S 1", &st) == -1);
}

/* A zombie main thread whose other threads run: the process lives. */
static void stat_zombie_leader(void)
{
	struct rm_pstat st;

	CHECK(rm_pstat_parse("77 (rustc) Z 1 77 77 0 -1 4227084 0 0 0 0 0 0 0 0 20 0 2 0 9 0 0 "
			     "18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n", &st) == 0);
	CHECK(st.state == 'Z');
	CHECK_U64(st.threads, 2);
	CHECK(!rm_pstat_ended(&st));
	st.threads = 1;
	CHECK(rm_pstat_ended(&st));
	st.state = 'X';
	st.threads = 2;
	CHECK(rm_pstat_ended(&st));
	st.state = 'S';
	st.threads = 1;
	CHECK(!rm_pstat_ended(&st));
}

static void status_and_cmdline(void)
{
	struct rm_pstatus ps;
	char cmd[] = "cc1plus\0-O2\0a b.cc\0";

	CHECK(rm_pstatus_parse("Name:\tx\nVmHWM:\t  2048 kB\nVmRSS:\t  1024 kB\n", &ps) == 0);
	CHECK(ps.has_rss && ps.has_hwm);
	CHECK_U64(ps.rss_kib, 1024);
	CHECK_U64(ps.hwm_kib, 2048);
	CHECK_U64(ps.rss_file_kib, 0);
	CHECK(!ps.has_uid);
	/* The real uid is the first of Uid's four (real, effective, saved, fs). */
	CHECK(rm_pstatus_parse("Name:\tcc1\nUid:\t65534\t0\t0\t0\nGid:\t65534\t65534\t65534\t65534\n"
			       "VmHWM:\t  2048 kB\n", &ps) == 0);
	CHECK(ps.has_uid);
	CHECK_U64(ps.uid, 65534);
	CHECK(rm_pstatus_parse("Uid:\tx\nVmHWM:\t 1 kB\n", &ps) == 0);
	CHECK(!ps.has_uid);
	CHECK(rm_pstatus_parse("VmRSS:\t  1024 kB\nRssAnon:\t  512 kB\nRssFile:\t  384 kB\n"
			       "RssShmem:\t  128 kB\n", &ps) == 0);
	CHECK(ps.has_rss && !ps.has_hwm);
	CHECK_U64(ps.rss_file_kib, 384);
	CHECK_U64(ps.rss_shmem_kib, 128);
	/* A kernel thread's status has no Vm lines. */
	CHECK(rm_pstatus_parse("Name:\tkthreadd\nState:\tS\n", &ps) == -1);
	CHECK_U64(rm_cmdline_join(cmd, sizeof(cmd) - 1), 18);
	CHECK_STR(cmd, "cc1plus -O2 a b.cc");
}

/* python3 -c 'import os,time<NL>p=os.fork()': a newline inside an
 * argument separates words as a space does (time p, not timep). */
static void newline_in_argument_keeps_words_apart(void)
{
	char out[RM_TEXT_MAX + 1];
	char cmd[] = "python3\0-c\0import os,time\np=os.fork()\0";
	size_t n = rm_cmdline_join(cmd, sizeof(cmd) - 1);

	rm_sanitize(cmd, n, out, sizeof(out));
	CHECK_STR(out, "python3 -c import os,time p=os.fork()");
	rm_sanitize("a\vb\fc\n", 7, out, sizeof(out));
	CHECK_STR(out, "a b c");
}

static void sanitize(void)
{
	char out[RM_TEXT_MAX + 1];
	const char in[] = "\x1b[1;31mred\x1b[0m,\"q\"\ttab\x01\x7f \xff\xfe ok\x1b]0;title\x07!";

	rm_sanitize(in, sizeof(in) - 1, out, sizeof(out));
	CHECK_STR(out, "red,\"q\" tab \xef\xbf\xbd\xef\xbf\xbd ok!");
	/* A progress bar: what the terminal shows is after the last CR. */
	rm_sanitize("  10%\r  55%\r100% done\r\n", 23, out, sizeof(out));
	CHECK_STR(out, "100% done");
	/* NUL bytes vanish; length is bounded on a character boundary. */
	rm_sanitize("a\0b", 3, out, sizeof(out));
	CHECK_STR(out, "ab");
	char big[2000];
	for (size_t i = 0; i < sizeof(big); i += 2)
		memcpy(big + i, "\xc3\xa9", 2);
	size_t n = rm_sanitize(big, sizeof(big), out, sizeof(out));
	CHECK(n <= RM_TEXT_MAX && n % 2 == 0);
	CHECK_STR(out + n - 2, "\xc3\xa9");
	/* Overlong encodings and surrogates are invalid. */
	rm_sanitize("\xc0\xaf\xed\xa0\x80", 5, out, sizeof(out));
	CHECK(strstr(out, "\xef\xbf\xbd") == out);
}

static void csv_and_json_fields(void)
{
	struct rm_buf b = { 0 };

	rm_buf_csv(&b, "plain");
	rm_buf_addc(&b, ',');
	rm_buf_csv(&b, "a,\"b\"\nc");
	CHECK_STR(b.p, "plain,\"a,\"\"b\"\"\nc\"");
	rm_buf_reset(&b);
	rm_buf_json(&b, "q\"\\\x01");
	CHECK_STR(b.p, "\"q\\\"\\\\\\u0001\"");
	rm_buf_reset(&b);
	rm_buf_num(&b, -0.0001, 2);
	CHECK_STR(b.p, "0.00");
	rm_buf_free(&b);
}

/* printf's "%.*f" with "-0..." as "0...": what rm_buf_num promises. */
static void num_ref(char *out, size_t size, double v, int prec)
{
	int zero = 1;

	snprintf(out, size, "%.*f", prec, v);
	for (const char *p = out + 1; *p; p++)
		if (*p != '0' && *p != '.')
			zero = 0;
	if (out[0] == '-' && zero)
		memmove(out, out + 1, strlen(out));
}

/* rm_buf_num's fast path (no printf) gives printf's digits, ties and
 * near-ties included, over every precision and many magnitudes: the
 * figures rm-tree and rm-summarize write are compared to the KiB. */
static void num_as_printf(void)
{
	static const double fixed[] = { 0.125, 0.375, 2.5, 1.5, 0.5, -0.5, 0.005, 1.005, 2.675, 1e15 + 0.5,
					4503599627370495.5, 9007199254740991.0, 9007199254740993.0, 1e-300, -1e-300,
					0.045, 1.0000000000000002, 123456.789, -0.0, 5e-324, 1e308, 0.1, 0.7, 1234.5678 };
	struct rm_buf b = { 0 };
	char want[400];
	unsigned long long x = 88172645463325252ULL;
	int bad = 0;

	for (int i = 0; i < (int)(sizeof(fixed) / sizeof(fixed[0])) * (RM_NUM_PREC_MAX + 1); i++) {
		double v = fixed[i / (RM_NUM_PREC_MAX + 1)];
		int prec = i % (RM_NUM_PREC_MAX + 1);
		rm_buf_reset(&b);
		rm_buf_num(&b, v, prec);
		num_ref(want, sizeof(want), v, prec);
		if (strcmp(b.p, want) != 0 && bad++ < 5)
			fprintf(stderr, "# %.17g prec %d: %s, printf %s\n", v, prec, b.p, want);
	}
	for (int i = 0; i < 400000; i++) {
		double v;
		int prec = i % 6;
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		switch (i % 4) {
		case 0: /* a KiB count or a time with three decimals, as written */
			v = (double)(x % 100000000) / 1000.0;
			break;
		case 1: /* halves and near halves at the printed precision */
			v = ((double)(x % 2000000) + 0.5) / (prec == 0 ? 1 : prec == 1 ? 10 : prec == 2 ? 100 : 1000);
			break;
		case 2: /* any bits at all, finite */
			memcpy(&v, &x, sizeof(v));
			if (!__builtin_isfinite(v))
				v = 1.0;
			break;
		default: /* percentages, MiB, seconds */
			v = (double)(x % 1000000007) / 7.0 * ((x >> 40) & 1 ? -1 : 1) / ((x >> 41) % 1000 + 1);
		}
		rm_buf_reset(&b);
		rm_buf_num(&b, v, prec);
		num_ref(want, sizeof(want), v, prec);
		if (strcmp(b.p, want) != 0 && bad++ < 5)
			fprintf(stderr, "# %.17g prec %d: %s, printf %s\n", v, prec, b.p, want);
	}
	CHECK(bad == 0);
	/* And whole numbers, every digit. */
	for (int i = 0; i < 100000; i++) {
		uint64_t u = i == 0 ? 0 : i == 1 ? UINT64_MAX : (x ^= x << 13, x ^= x >> 7, x ^= x << 17) >> (i % 64);
		rm_buf_reset(&b);
		rm_buf_u64(&b, u);
		snprintf(want, sizeof(want), "%" PRIu64, u);
		if (strcmp(b.p, want) != 0 && bad++ < 5)
			fprintf(stderr, "# u64 %s: %s\n", want, b.p);
	}
	CHECK(bad == 0);
	rm_buf_free(&b);
}

static void last_line(void)
{
	char out[RM_TEXT_MAX + 1];
	regex_t re;
	const char *log = "[1/3] Building CXX foo.cc\nwarning: x\n[2/3] Building CXX bar.cc\n\n  \n";

	CHECK(rm_last_line(log, strlen(log), NULL, out, sizeof(out)) == 1);
	CHECK_STR(out, "[2/3] Building CXX bar.cc");
	CHECK(regcomp(&re, "^warning", REG_EXTENDED | REG_NOSUB) == 0);
	CHECK(rm_last_line(log, strlen(log), &re, out, sizeof(out)) == 1);
	CHECK_STR(out, "warning: x");
	regfree(&re);
	CHECK(regcomp(&re, "nomatch", REG_EXTENDED | REG_NOSUB) == 0);
	CHECK(rm_last_line(log, strlen(log), &re, out, sizeof(out)) == 0);
	regfree(&re);
	CHECK(rm_last_line("", 0, NULL, out, sizeof(out)) == 0);
	/* A line whose visible text is only escape codes counts as empty. */
	CHECK(rm_last_line("real\n\x1b[0m\n", 10, NULL, out, sizeof(out)) == 1);
	CHECK_STR(out, "real");
}

static void numbers(void)
{
	double d;
	long l;
	uint64_t u;

	CHECK(rm_parse_seconds("0.2", 0.001, 86400, &d) == 0 && d == 0.2);
	CHECK(rm_parse_seconds("15", 0.001, 86400, &d) == 0 && d == 15);
	CHECK(rm_parse_seconds(".5", 0.001, 86400, &d) == 0);
	CHECK(rm_parse_seconds("0", 0.001, 86400, &d) == -1);
	CHECK(rm_parse_seconds("-1", 0.001, 86400, &d) == -1);
	CHECK(rm_parse_seconds("abc", 0.001, 86400, &d) == -1);
	CHECK(rm_parse_seconds("1e3", 0.001, 86400, &d) == -1);
	CHECK(rm_parse_seconds("inf", 0.001, 86400, &d) == -1);
	CHECK(rm_parse_seconds(" 1", 0.001, 86400, &d) == -1);
	CHECK(rm_parse_seconds("86401", 0.001, 86400, &d) == -1);
	CHECK(rm_parse_long("12", 1, 100, &l) == 0 && l == 12);
	CHECK(rm_parse_long("12x", 1, 100, &l) == -1);
	CHECK(rm_parse_long("", 1, 100, &l) == -1);
	CHECK(rm_parse_u64("123\n", &u) == 0 && u == 123);
	CHECK(rm_parse_u64("18446744073709551616", &u) == -1);
	CHECK(rm_parse_u64("-1", &u) == -1);
}

static void iso_time(void)
{
	char buf[40];

	rm_fmt_iso(1700000000.9996, buf, sizeof(buf));
	CHECK_STR(buf, "2023-11-14T22:13:21.000Z");
	rm_fmt_iso(0.25, buf, sizeof(buf));
	CHECK_STR(buf, "1970-01-01T00:00:00.250Z");
	/* Impossible times: no overflowing cast, no year -292275055. */
	rm_fmt_iso(99999999999999999.0, buf, sizeof(buf));
	CHECK_STR(buf, "?");
	rm_fmt_iso(-99999999999999999.0, buf, sizeof(buf));
	CHECK_STR(buf, "?");
	rm_fmt_iso(NAN, buf, sizeof(buf));
	CHECK_STR(buf, "?");
	rm_fmt_iso(253402300799.0, buf, sizeof(buf));
	CHECK_STR(buf, "9999-12-31T23:59:59.000Z");
}

/*
 * Files whose length depends on the machine are read whole.  A
 * generated proc root: /proc/stat with a 200 KiB intr line before btime
 * (a host with many MSI-X vectors), a 120 KiB mountinfo with the cgroup2
 * line last (a k8s node), and a file past the 16 MiB cap.
 */
static void big_proc_files(void)
{
	char dir[] = "/tmp/t_parsers.XXXXXX", path[256], cmd[300];
	size_t len = 0;
	char *all;
	FILE *f;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/stat", dir);
	f = fopen(path, "w");
	fputs("cpu  1 2 3 4 5 6 7 8 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\nintr 123456", f);
	for (int i = 0; i < 100000; i++)
		fputs(" 0", f);
	fputs("\nctxt 987\nbtime 1700000000\nprocesses 5\n", f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/self", dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/self/mountinfo", dir);
	f = fopen(path, "w");
	for (int i = 0; i < 1500; i++)
		fprintf(f, "%d 30 0:%d / /var/lib/kubelet/pods/%08d/volumes rw,relatime - tmpfs tmpfs rw\n",
			100 + i, 50 + i, i);
	fputs("9999 30 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw\n", f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/huge", dir);
	f = fopen(path, "w");
	CHECK(ftruncate(fileno(f), (off_t)RM_READ_ALL_MAX + 4096) == 0);
	fclose(f);

	setenv("RM_PROC_ROOT", dir, 1);
	/* btime comes after the 200 KiB intr line: the whole file is read. */
	all = rm_read_all_at(rm_proc_dirfd(), "stat", &len);
	CHECK(all && strstr(all, "\nbtime 1700000000\n") != NULL);
	free(all);
	all = rm_read_all_at(rm_proc_dirfd(), "self/mountinfo", &len);
	CHECK(all != NULL);
	CHECK(all && len > 100 * 1024 && strlen(all) == len);
	CHECK(all && strstr(all, " - cgroup2 cgroup2 rw\n") == all + len - strlen(" - cgroup2 cgroup2 rw\n"));
	free(all);
	errno = 0;
	CHECK(rm_read_all_at(rm_proc_dirfd(), "huge", &len) == NULL);
	CHECK(errno == EFBIG);
	CHECK(rm_read_all_at(rm_proc_dirfd(), "missing", &len) == NULL);
	CHECK(errno == ENOENT);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0);
}

int main(void)
{
	RUN(meminfo_full);
	RUN(meminfo_without_memavailable);
	RUN(meminfo_no_swap_lines);
	RUN(cpustat_with_steal_and_guest);
	RUN(cpustat_without_steal);
	RUN(loadavg);
	RUN(vmstat_oom);
	RUN(pressure);
	RUN(stat_hostile_name);
	RUN(stat_zombie_leader);
	RUN(status_and_cmdline);
	RUN(sanitize);
	RUN(newline_in_argument_keeps_words_apart);
	RUN(csv_and_json_fields);
	RUN(last_line);
	RUN(numbers);
	RUN(num_as_printf);
	RUN(iso_time);
	RUN(big_proc_files);
	return tap_done();
}
