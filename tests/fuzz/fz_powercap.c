/*
 * fz_powercap: the powercap readers' pure parts (lib/energy): a zone
 * directory name (rm_rapl_id_parse), and the energy counter arithmetic
 * (rm_rapl_delta, rm_rapl_zone_feed) on counter values taken from the
 * input.  The counter files themselves go through rm_parse_u64, fuzzed in
 * fz_number.
 *
 * A parsed name prints back (lowercase hex, no leading zeros) to a name
 * that parses to the same id, and compares equal to it.  A delta is
 * never more than the counter's range allows.
 */
#include <inttypes.h>

#include "fuzz.h"
#include "energy.h"

static void fz_rapl_name(const char *s)
{
	struct rm_rapl_id id, again;
	char back[128];
	size_t o;

	if (rm_rapl_id_parse(s, &id) < 0)
		return;
	FZ_ASSERT(id.depth >= 1 && id.depth <= RM_RAPL_DEPTH);
	o = (size_t)snprintf(back, sizeof(back), "%s", id.mmio ? "intel-rapl-mmio" : "intel-rapl");
	for (int i = 0; i < id.depth; i++)
		o += (size_t)snprintf(back + o, sizeof(back) - o, ":%x", id.idx[i]);
	FZ_ASSERT(rm_rapl_id_parse(back, &again) == 0);
	FZ_ASSERT(rm_rapl_id_cmp(&id, &again) == 0);
	FZ_ASSERT(again.depth == id.depth && again.mmio == id.mmio);
	(void)rm_rapl_kind_of(s, id.depth);
}

static uint64_t fz_u64_at(const uint8_t *d)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | d[i];
	return v;
}

static int fz_powercap(const uint8_t *data, size_t size)
{
	char *s = fz_cstr(data, size);
	struct rm_rapl_zone z;
	uint64_t max, delta;

	if (!s)
		return 0;
	fz_rapl_name(s);
	free(s);

	/* Counter arithmetic: a max, then readings, 8 bytes each. */
	if (size < 16)
		return 0;
	max = fz_u64_at(data);
	memset(&z, 0, sizeof(z));
	z.max_uj = max;
	z.has_max = max != 0;
	for (size_t off = 8; off + 8 <= size; off += 8) {
		uint64_t now = fz_u64_at(data + off);
		uint64_t prev = z.prev_uj;
		int had = z.has_prev;
		int ok = (now & 0xff) != 0xff; /* some reads fail */
		if (rm_rapl_zone_feed(&z, ok, now, &delta) == 1) {
			FZ_ASSERT(had && ok);
			if (now >= prev)
				FZ_ASSERT(delta == now - prev);
			else
				FZ_ASSERT(max && delta < max);
		}
		if (rm_rapl_delta(prev, now, max, &delta) == 0 && now < prev)
			FZ_ASSERT(delta <= max);
	}
	return 0;
}

FZ_MAIN(fz_powercap)
