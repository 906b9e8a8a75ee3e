/*
 * fz_taskstats: kernel process events as received (lib/procev): a
 * taskstats datagram (rm_ts_parse, nested attributes), a bare struct
 * taskstats of any version and length (rm_ts_parse_stats), and a proc
 * connector datagram (rm_pe_parse).  The input is copied to a heap block
 * of exactly its size, so reading past what the "kernel" sent is an ASan
 * report.  Promises: names NUL-terminated, a field read only when the
 * length holds it, counts no more than the bytes allow.
 */
#include "fuzz.h"
#include "procev.h"

static int fz_ts_count;

static void fz_ts_cb(void *arg, const struct rm_ts *r)
{
	(void)arg;
	FZ_ASSERT(memchr(r->comm, '\0', sizeof(r->comm)) != NULL);
	fz_ts_count++;
}

static void fz_pe_cb(void *arg, const struct rm_pe *e)
{
	(void)arg;
	FZ_ASSERT(memchr(e->comm, '\0', sizeof(e->comm)) != NULL);
}

static int fz_taskstats(const uint8_t *data, size_t size)
{
	uint8_t *c = calloc(1, size ? size : 1);
	struct rm_ts r;
	int n;

	if (!c)
		return 0;
	if (size)
		memcpy(c, data, size);
	fz_ts_count = 0;
	/* 16 is the smallest generic netlink family id a kernel hands out */
	n = rm_ts_parse(c, size, 16 + (size ? data[0] % 32 : 0), fz_ts_cb, NULL, NULL);
	FZ_ASSERT(n == -1 || n == fz_ts_count);
	FZ_ASSERT(n <= (int)(size / 20));
	if (rm_ts_parse_stats(c, size, &r) == 0) {
		FZ_ASSERT(memchr(r.comm, '\0', sizeof(r.comm)) != NULL);
		if (r.version != 15) {
			FZ_ASSERT(!r.has_mem || size >= 208);
			FZ_ASSERT(!r.has_io || size >= 264);
			FZ_ASSERT(!r.has_tgid || size >= 372);
		}
	} else {
		FZ_ASSERT(size < 2);
	}
	n = rm_pe_parse(c, size, fz_pe_cb, NULL);
	FZ_ASSERT(n <= (int)(size / 36));
	free(c);
	return 0;
}

FZ_MAIN(fz_taskstats)
