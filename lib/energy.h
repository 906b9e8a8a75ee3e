/*
 * energy: CPU energy from the powercap RAPL zones under
 * RM_SYS_ROOT/class/powercap.  Zones are the directories named
 * intel-rapl:N[:M...] and intel-rapl-mmio:N[:M...] (indices in lowercase
 * hex, as the kernel names them with "%s:%x"), found both as entries of
 * the class directory and as subdirectories of their parent zone; each is
 * identified by its `name` file, never by its number.  An mmio zone whose
 * name (qualified by its parent's for a subzone) is also an MSR zone's is
 * the same counter seen twice and is dropped.
 *
 * Package energy is the sum of the top-level package-* zones (core and
 * uncore are inside a package, so they are never added); dram is its own
 * sum; psys is never added to either.  Every counter's wrap is corrected
 * with its own max_energy_range_uj.  A zone whose counter cannot be read
 * makes that sum unknown for the tick, never 0.  Pure functions (zone name
 * parsing, ordering, kinds, wrap arithmetic) sit under the readers so they
 * can be tested on values.
 */
#ifndef RM_ENERGY_H
#define RM_ENERGY_H

#include <stddef.h>
#include <stdint.h>

#define RM_RAPL_DEPTH 4

enum rm_rapl_kind { RM_RAPL_OTHER, RM_RAPL_PACKAGE, RM_RAPL_DRAM, RM_RAPL_PSYS };

/* A zone's identity from its directory name. */
struct rm_rapl_id {
	int mmio;                      /* intel-rapl-mmio rather than intel-rapl */
	int depth;                     /* 1 = top level, 2 = its subzone, ... */
	unsigned idx[RM_RAPL_DEPTH];
};

struct rm_rapl_zone {
	char zone[64];          /* directory name, e.g. intel-rapl:0:1 */
	char rel[160];          /* path below class/powercap */
	char name[64];          /* the name file, sanitized; "" if unreadable */
	char parent[64];        /* the parent zone's name, "" at top level */
	struct rm_rapl_id id;
	enum rm_rapl_kind kind;
	uint64_t max_uj;        /* max_energy_range_uj */
	int has_max;
	uint64_t prev_uj;       /* last counter value read */
	int has_prev;
};

struct rm_rapl {
	int dirfd;              /* class/powercap */
	int n, cap;
	struct rm_rapl_zone *z;
	int npkg, ndram;        /* how many zones each sum adds */
	int err_zone;           /* the zone whose read failed last, or -1 */
};

/* One reading of every package and dram zone. */
struct rm_rapl_step {
	uint64_t pkg_uj, dram_uj; /* energy since the previous reading */
	int pkg_ok, dram_ok;      /* each zone of that sum read, delta known */
	double mono;              /* CLOCK_MONOTONIC seconds of the reading */
};

/*
 * Parse a zone directory name.  Returns 0 and fills id, or -1 when the
 * name is not intel-rapl[-mmio]:HEX[:HEX...] (at most RM_RAPL_DEPTH
 * indices of at most 8 lowercase hex digits).
 */
int rm_rapl_id_parse(const char *dname, struct rm_rapl_id *id);

/* Order zones: MSR before mmio, then index by index numerically. */
int rm_rapl_id_cmp(const struct rm_rapl_id *a, const struct rm_rapl_id *b);

/* What a zone adds to: package-* at the top level, dram, psys. */
enum rm_rapl_kind rm_rapl_kind_of(const char *name, int depth);

/*
 * Energy between two counter readings, correcting one wrap: when now <
 * prev the counter passed max and restarted, so the delta is now + max -
 * prev.  Returns 0 and sets *delta, or -1 when the counter went back and
 * max is unknown (0) or smaller than prev (not a wrap we can explain).
 */
int rm_rapl_delta(uint64_t prev, uint64_t now, uint64_t max, uint64_t *delta);

/*
 * Feed a zone one counter reading (ok = 0 when the read failed).  Returns
 * 1 and sets *delta when the energy since the previous reading is known,
 * 0 otherwise (first reading, failed read, unexplained drop).  A failed
 * read keeps the previous value so the next good one spans the gap.
 */
int rm_rapl_zone_feed(struct rm_rapl_zone *z, int ok, uint64_t now, uint64_t *delta);

/*
 * Drop mmio zones that duplicate an MSR zone (same name and parent name)
 * and count the package and dram zones.  Sorts the zones.
 */
void rm_rapl_finish(struct rm_rapl *r);

/*
 * Find the zones under RM_SYS_ROOT/class/powercap and read their names
 * and ranges.  Returns the number of zones (0 when there are none), or -1
 * with errno when the directory cannot be opened.  Counters are not read
 * here.
 */
int rm_rapl_open(struct rm_rapl *r);
void rm_rapl_close(struct rm_rapl *r);

/*
 * Read zone i's energy_uj.  Returns 0, or -1 with errno (EACCES: the
 * counter is root-only; the kernel made it so in 5.10 for CVE-2020-8694).
 */
int rm_rapl_read(const struct rm_rapl *r, int i, uint64_t *uj);

/*
 * Read every package and dram zone and add up what each used since the
 * previous call.  The first call only sets the baselines (both sums
 * unknown).  Returns 0, or -1 with errno EACCES (r->err_zone says which)
 * when a counter is not permitted; other read errors make that sum
 * unknown for this step.
 */
int rm_rapl_sample(struct rm_rapl *r, struct rm_rapl_step *s);

/* The full path of a file of zone i, for messages.  -1 if it does not fit. */
int rm_rapl_path(const struct rm_rapl *r, int i, const char *file, char *buf, size_t size);

#endif
