/*
 * t_procev: taskstats exit records and proc connector events, parsed from
 * datagrams captured on Linux 6.18 (tests/fixtures/procev/: a
 * single-threaded sh that exited 3; a python3 that ran a thread, whose
 * last message carries the TGID aggregate; the fork, exec and exit
 * events of the sh), and from records derived from them: the same record
 * in the version 15 layout, a TGID aggregate of version 0, every
 * truncation.  lib/pcount's PID sets, and its count moved by fork, exec,
 * comm and exit events (threads' own events leave it alone).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pcount.h"
#include "procev.h"
#include "tap.h"

#define FAMILY 31  /* the family id when the fixtures were captured */

static size_t load(const char *name, unsigned char *buf, size_t size)
{
	char path[512];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/procev/%s", getenv("RM_FIXTURES") ? getenv("RM_FIXTURES") :
		 "tests/fixtures", name);
	f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "cannot open %s\n", path);
		exit(1);
	}
	n = fread(buf, 1, size, f);
	fclose(f);
	return n;
}

static struct rm_ts got[4];
static int ngot;

static void ts_cb(void *arg, const struct rm_ts *r)
{
	(void)arg;
	if (ngot < 4)
		got[ngot] = *r;
	ngot++;
}

/* The STATS payload of the first record of a message (fixed nesting:
 * nlmsghdr 16, genlmsghdr 4, AGGR_PID 4, PID 8, STATS header 4). */
static const unsigned char *stats_of(const unsigned char *msg, size_t *len)
{
	uint16_t nla_len;

	memcpy(&nla_len, msg + 32, sizeof(nla_len));
	*len = nla_len - 4u;
	return msg + 36;
}

static void test_single(void)
{
	unsigned char buf[4096];
	size_t n = load("single-ts.bin", buf, sizeof(buf));
	int nlerr = 0;

	ngot = 0;
	CHECK(rm_ts_parse(buf, n, FAMILY, ts_cb, NULL, &nlerr) == 1);
	CHECK(ngot == 1);
	CHECK(got[0].version == 16);
	CHECK(!got[0].tgid_aggr);
	CHECK_U64(got[0].id, 17207);
	CHECK_U64(got[0].pid, 17207);
	CHECK_U64(got[0].tgid, 17207);
	CHECK_U64(got[0].ppid, 17206);
	CHECK_U64(got[0].exitcode, 0x300);   /* exit 3, a wait status */
	CHECK(got[0].flags & RM_TS_AGROUP);
	CHECK_STR(got[0].comm, "sh");
	CHECK_U64(got[0].uid, 0);            /* root's sh */
	CHECK_U64(got[0].hiwater_rss_kib, 1452);
	CHECK_U64(got[0].utime_us, 4000);
	CHECK_U64(got[0].minflt, 84);
	CHECK_U64(got[0].cpu_delay, 232682);
	CHECK_U64(got[0].etime_us, 118750);
	CHECK_U64(got[0].btime, 1796233769);
	CHECK(got[0].has_basic && got[0].has_mem && got[0].has_io && got[0].has_delay &&
	      got[0].has_delay2 && got[0].has_tgid);
	CHECK(nlerr == 0);
	/* ac_uid (offset 120 of the record, after ac_sched and its pad): a
	 * record of nobody's names 65534, whoever reads it. */
	{
		size_t sl;
		unsigned char *s = (unsigned char *)stats_of(buf, &sl);
		uint32_t nobody = 65534;
		memcpy(s + 120, &nobody, sizeof(nobody));
		ngot = 0;
		CHECK(rm_ts_parse(buf, n, FAMILY, ts_cb, NULL, NULL) == 1);
		CHECK_U64(got[0].uid, 65534);
		CHECK_U64(got[0].pid, 17207);
		CHECK_STR(got[0].comm, "sh");
		n = load("single-ts.bin", buf, sizeof(buf));
	}
	/* Another family's message is not a record. */
	ngot = 0;
	CHECK(rm_ts_parse(buf, n, FAMILY + 1, ts_cb, NULL, NULL) == 0);
	CHECK(ngot == 0);
}

static void test_threads(void)
{
	unsigned char buf[4096];
	size_t n = load("threads-ts-tgid.bin", buf, sizeof(buf)), sl;
	unsigned char *s;

	ngot = 0;
	CHECK(rm_ts_parse(buf, n, FAMILY, ts_cb, NULL, NULL) == 2);
	CHECK(!got[0].tgid_aggr && got[1].tgid_aggr);
	CHECK_U64(got[1].id, 17220);
	CHECK(got[0].flags & RM_TS_AGROUP);
	CHECK_STR(got[0].comm, "python3");
	CHECK_U64(got[0].hiwater_rss_kib, 13424);
	CHECK_U64(got[0].cpu_delay, 30933760);
	CHECK_U64(got[1].cpu_delay, 31626604);  /* both threads */
	/* A kernel that leaves the aggregate's version 0: the layout of
	 * the PID record beside it is used. */
	s = (unsigned char *)stats_of(buf, &sl);
	{
		/* the second AGGR (TGID) follows the first, aligned */
		uint16_t l1;
		memcpy(&l1, buf + 20, sizeof(l1));
		unsigned char *agg = buf + 20 + ((l1 + 3u) & ~3u);
		unsigned char *st2 = agg + 4 + 8 + 4;
		st2[0] = st2[1] = 0;
	}
	ngot = 0;
	CHECK(rm_ts_parse(buf, n, FAMILY, ts_cb, NULL, NULL) == 2);
	CHECK(got[1].tgid_aggr && got[1].version == 16);
	CHECK_U64(got[1].cpu_delay, 31626604);
	(void)s;
}

/* Version 15: a max and a min after each of seven delay totals. */
static size_t to_v15(const unsigned char *v16, size_t len16, unsigned char *out)
{
	static const size_t after[] = { 24, 40, 56, 320, 336, 360, 408 };
	size_t o = 0, i = 0;
	uint16_t ver = 15;

	/* the v14 part is 432 bytes */
	for (size_t k = 0; k < 432 && k < len16; k++) {
		out[o++] = v16[k];
		if (i < 7 && k == after[i] + 7) {
			memset(out + o, 0xee, 16);
			o += 16;
			i++;
		}
	}
	memset(out + o, 0xee, 16);  /* irq max and min */
	o += 16;
	memcpy(out, &ver, sizeof(ver));
	return o;
}

static void test_v15(void)
{
	unsigned char buf[4096], v15[1024];
	size_t n = load("single-ts.bin", buf, sizeof(buf)), sl, l15;
	const unsigned char *s = stats_of(buf, &sl);
	struct rm_ts a, b;

	CHECK(rm_ts_parse_stats(s, sl, &a) == 0);
	l15 = to_v15(s, sl, v15);
	CHECK_U64(l15, 560);
	CHECK(rm_ts_parse_stats(v15, l15, &b) == 0);
	CHECK(b.version == 15);
	CHECK_U64(b.hiwater_rss_kib, a.hiwater_rss_kib);
	CHECK_U64(b.utime_us, a.utime_us);
	CHECK_U64(b.exitcode, a.exitcode);
	CHECK_U64(b.pid, a.pid);
	CHECK_U64(b.tgid, a.tgid);
	CHECK_U64(b.cpu_delay, a.cpu_delay);
	CHECK_U64(b.blkio_delay, a.blkio_delay);
	CHECK_U64(b.thrashing_delay, a.thrashing_delay);
	CHECK_U64(b.read_bytes, a.read_bytes);
	CHECK_STR(b.comm, a.comm);
	/* Read as v16, the same bytes would be garbage: the version matters. */
	{
		uint16_t v = 16;
		memcpy(v15, &v, sizeof(v));
		CHECK(rm_ts_parse_stats(v15, l15, &b) == 0);
		CHECK(b.hiwater_rss_kib != a.hiwater_rss_kib);
	}
	(void)n;
}

static void test_truncated(void)
{
	unsigned char buf[4096];
	size_t n = load("single-ts.bin", buf, sizeof(buf)), sl;
	const unsigned char *s = stats_of(buf, &sl);
	int bad = 0;

	/* Every prefix of the record, in a heap copy of exactly that size. */
	for (size_t len = 0; len <= sl; len++) {
		unsigned char *c = malloc(len ? len : 1);
		struct rm_ts r;
		memcpy(c, s, len);
		if (rm_ts_parse_stats(c, len, &r) < 0) {
			if (len >= 2)
				bad++;
		} else {
			if (r.has_mem != (len >= 208))
				bad++;
			if (r.has_io != (len >= 264))
				bad++;
			if (r.has_tgid != (len >= 372))
				bad++;
			if (r.has_basic != (len >= 184))
				bad++;
		}
		free(c);
	}
	CHECK(bad == 0);
	/* Every prefix of the datagram: whole messages or an error. */
	bad = 0;
	for (size_t len = 0; len < n; len++) {
		unsigned char *c = malloc(len ? len : 1);
		memcpy(c, buf, len);
		ngot = 0;
		if (rm_ts_parse(c, len, FAMILY, ts_cb, NULL, NULL) > 0)
			bad++;
		free(c);
	}
	CHECK(bad == 0);
	/* Version 1 had padding where the accounting fields are. */
	{
		unsigned char v1[96] = { 1, 0 };
		struct rm_ts r;
		CHECK(rm_ts_parse_stats(v1, sizeof(v1), &r) == 0);
		CHECK(!r.has_basic && !r.has_mem);
	}
}

static struct rm_pe pes[4];
static int npe;

static void pe_cb(void *arg, const struct rm_pe *e)
{
	(void)arg;
	if (npe < 4)
		pes[npe] = *e;
	npe++;
}

static void test_connector(void)
{
	unsigned char buf[256];
	size_t n;
	int bad = 0;

	n = load("single-pe1.bin", buf, sizeof(buf));
	npe = 0;
	CHECK(rm_pe_parse(buf, n, pe_cb, NULL) == 1);
	CHECK(pes[0].what == RM_PE_FORK);
	CHECK(pes[0].pid == 17207 && pes[0].tgid == 17207);
	/* The kernel's own time of the event (CLOCK_MONOTONIC ns). */
	CHECK_U64(pes[0].ts_ns, 825647919941ULL);
	CHECK(pes[0].ppid == 17206 && pes[0].ptgid == 17206);
	n = load("single-pe2.bin", buf, sizeof(buf));
	npe = 0;
	CHECK(rm_pe_parse(buf, n, pe_cb, NULL) == 1);
	CHECK(pes[0].what == RM_PE_EXEC && pes[0].tgid == 17207);
	n = load("single-pe4.bin", buf, sizeof(buf));
	npe = 0;
	CHECK(rm_pe_parse(buf, n, pe_cb, NULL) == 1);
	CHECK(pes[0].what == RM_PE_EXIT && pes[0].pid == 17207);
	CHECK_U64(pes[0].exit_code, 0x300);
	CHECK_U64(pes[0].ts_ns, 825767162812ULL);
	CHECK(pes[0].ptgid == 17206);
	for (size_t len = 0; len < n; len++) {
		unsigned char *c = malloc(len ? len : 1);
		memcpy(c, buf, len);
		npe = 0;
		if (rm_pe_parse(c, len, pe_cb, NULL) > 0)
			bad++;
		free(c);
	}
	CHECK(bad == 0);
}

static void test_pset(void)
{
	struct rm_pset s = { 0 };
	int ok = 1;

	for (int p = 1; p <= 1000; p++)
		CHECK(rm_pset_add(&s, p * 7) == 0);
	CHECK(s.m.n == 1000);
	for (int p = 1; p <= 1000; p += 2)
		rm_pset_del(&s, p * 7);
	CHECK(s.m.n == 500);
	for (int p = 1; p <= 1000; p++)
		if (rm_pset_has(&s, p * 7) != (p % 2 == 0))
			ok = 0;
	CHECK(ok);
	CHECK(!rm_pset_has(&s, 3));
	CHECK(rm_pset_add(&s, 14) == 0 && s.m.n == 500);  /* already there */
	rm_pset_clear(&s);
	CHECK(s.m.n == 0 && !rm_pset_has(&s, 14));
	rm_pset_free(&s);
}

/* A copy of the captured fork event turned into event what for pid (and
 * tgid), with parent (fork) or name (comm). */
static size_t pe_make(unsigned char *out, const unsigned char *fork, size_t n, uint32_t what,
		      int pid, int tgid, int parent, const char *name)
{
	uint32_t v[4] = { (uint32_t)parent, (uint32_t)parent, (uint32_t)pid, (uint32_t)tgid };

	memcpy(out, fork, n);
	memcpy(out + 36, &what, 4);
	if (what == 1) {
		memcpy(out + 52, v, 16);
	} else {
		v[0] = (uint32_t)pid;
		v[1] = (uint32_t)tgid;
		memcpy(out + 52, v, 8);
		if (name) {
			memset(out + 60, 0, 16);
			memcpy(out + 60, name, strlen(name));
		}
	}
	return n;
}

static void test_pcount(void)
{
	static const char *const names[] = { "cc1", "ld" };
	unsigned char fork[256], e[256];
	size_t n = load("single-pe1.bin", fork, sizeof(fork));
	struct rm_pcount pc;

	CHECK(n >= 60 + 16);
	rm_pcount_init(&pc, names, 2);
	rm_pset_add(&pc.counted, 100);           /* a cc1 found by the scan */
	/* its fork: the child is a cc1 until it execs */
	rm_pcount_apply(&pc, e, pe_make(e, fork, n, 1, 101, 101, 100, NULL));
	CHECK(rm_pset_has(&pc.counted, 101));
	/* a thread of it: nothing */
	rm_pcount_apply(&pc, e, pe_make(e, fork, n, 1, 102, 100, 100, NULL));
	CHECK(!rm_pset_has(&pc.counted, 102) && pc.counted.m.n == 2);
	/* the child execs: its name is read later */
	rm_pcount_apply(&pc, e, pe_make(e, fork, n, 2, 101, 101, 0, NULL));
	CHECK(!rm_pset_has(&pc.counted, 101) && rm_pset_has(&pc.pending, 101));
	/* a process renames itself ld (comm event): counted, not pending */
	rm_pcount_apply(&pc, e, pe_make(e, fork, n, 0x200, 200, 200, 0, "ld"));
	CHECK(rm_pset_has(&pc.counted, 200));
	/* a thread's own name: not the process's */
	rm_pcount_apply(&pc, e, pe_make(e, fork, n, 0x200, 201, 200, 0, "worker"));
	CHECK(rm_pset_has(&pc.counted, 200));
	rm_pcount_apply(&pc, e, pe_make(e, fork, n, 0x200, 200, 200, 0, "bash"));
	CHECK(!rm_pset_has(&pc.counted, 200));
	/* a thread's exit: still counted; the main thread's: gone */
	rm_pcount_apply(&pc, e, pe_make(e, fork, n, 0x80000000u, 102, 100, 0, NULL));
	CHECK(rm_pset_has(&pc.counted, 100));
	rm_pcount_apply(&pc, e, pe_make(e, fork, n, 0x80000000u, 100, 100, 0, NULL));
	CHECK(!rm_pset_has(&pc.counted, 100));
	rm_pcount_apply(&pc, e, pe_make(e, fork, n, 0x80000000u, 101, 101, 0, NULL));
	CHECK(!rm_pset_has(&pc.pending, 101) && pc.counted.m.n == 0);
	rm_pcount_close(&pc);
}

int main(void)
{
	RUN(test_single);
	RUN(test_threads);
	RUN(test_v15);
	RUN(test_truncated);
	RUN(test_connector);
	RUN(test_pset);
	RUN(test_pcount);
	return tap_done();
}
