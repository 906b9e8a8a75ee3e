/*
 * sys.h: a system CSV (rm-sample's, rm-energy's, the seed script's)
 * folded row by row into the report (sys.c), its verdicts as data, and
 * the disk fit the renderers print.
 */
#ifndef RM_SUMMARIZE_SYS_H
#define RM_SUMMARIZE_SYS_H

#include "report.h"

struct sys *sys_new(const char *file, const struct rm_csv *hdr);
int sys_is_header(const struct rm_csv *hdr);
/* Fold one row; -1 with why when it is not a row of this CSV. */
int sys_row(struct report *r, struct rm_csv *c, char *why, size_t wsize);
/* After the last row: RAM and cores, OOM victims, verdicts. */
void sys_finish(struct report *r, const struct opts *o);
void sys_free(struct sys *s);
/*
 * The disk rate, GiB per hour, by least squares with a 95 % interval:
 * fitted only over at least DISK_FIT_MIN_S seconds and DISK_FIT_MIN_N
 * samples (else rate, lo and hi are NaN).  A time to full is projected
 * only when hi < 0, the whole interval below zero.
 */
#define DISK_FIT_MIN_S 600.0
#define DISK_FIT_MIN_N 20
struct disk_fit {
	int fitted;
	long n;                /* samples with a disk reading */
	double span_s;         /* seconds between the first and the last */
	double rate, lo, hi;
};
void sys_disk_fit(const struct sys *s, struct disk_fit *f);
/* Hours until the disk's last reading reaches level at each rate of the
 * fit (h, from the interval's fast end h_lo to its slow end h_hi); 0 when
 * the disk does not fall surely (f->hi >= 0). */
int disk_hours(const struct sys *s, const struct disk_fit *f, double level,
	       double *h, double *h_lo, double *h_hi);

#endif
