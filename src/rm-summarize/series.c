/*
 * series.c: the rows of a system CSV or an rm-tree timeline as columns
 * over time, for rm-summarize --series (gnuplot-ready text) and for the
 * SVG of a timeline.  The rows are read again from the file (the report
 * keeps only peaks and time buckets); stage spans and OOM marks come from
 * the report.  A missing reading is NaN, which gnuplot leaves out.
 *
 * --series prints three gnuplot data blocks ("index 0", 1, 2), each
 * opened by one comment line naming its columns and separated by two
 * blank lines:
 *
 *   # elapsed_s mem_used_mib mem_avail_mib swap_used_mib disk_avail_gib cpu_pct load1 compilers disk_size_gib
 *   # stage start_s end_s name       (name double-quoted; a " in it as ')
 *   # oom elapsed_s kills
 *
 * For a timeline the first block is "# elapsed_s job_rss_mib procs
 * cpu_pct" and the other two hold no rows.  elapsed_s counts from the
 * first row with a time (a timeline's: its own elapsed_s, from rm-tree's
 * start).  disk_size_gib is disk_avail_gb / (1 - disk_pct
 * / 100): approximate, as both are rounded and disk_pct counts blocks
 * reserved for root as used.
 */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "procs.h"
#include "series.h"

static const char *const sys_cols[SE_NSYS] = {
	"epoch", "elapsed_s", "mem_used_mb", "mem_avail_mb", "swap_used_mb", "disk_avail_gb",
	"cpu_pct", "load1", "compilers", "disk_pct",
};
static const char *const tl_cols[SE_NTL] = { "epoch", "elapsed_s", "rss_kib", "procs", "cpu_pct" };

struct loader {
	struct series *s;
	int header;
	int col[SE_NSYS];
	int ncol;
};

static int on_row(void *arg, struct rm_csv *c)
{
	struct loader *ld = arg;
	struct series *s = ld->s;
	double v[SE_NSYS], *row;

	if (!ld->header) {
		s->timeline = procs_kind(c) == PK_TIMELINE;
		ld->ncol = s->timeline ? SE_NTL : SE_NSYS;
		for (int i = 0; i < ld->ncol; i++)
			ld->col[i] = header_col(c->f, c->nf, s->timeline ? tl_cols[i] : sys_cols[i]);
		ld->header = 1;
		return 0;
	}
	for (int i = 0; i < ld->ncol; i++)
		v[i] = ld->col[i] >= 0 && ld->col[i] < c->nf ? field_num(&c->f[ld->col[i]]) : NAN;
	if (c->cut && ld->ncol > 0)   /* a last row cut short: its last field may be cut */
		for (int i = 0; i < ld->ncol; i++)
			if (ld->col[i] == c->nf - 1)
				v[i] = NAN;
	if (isnan(v[0]))
		return 0;               /* rm-summarize times rows by epoch */
	if (s->n == 0)
		s->t0 = v[0];
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 256;
		s->v = xrealloc(s->v, s->cap * SE_NCOL * sizeof(double));
	}
	row = &s->v[s->n++ * SE_NCOL];
	for (int i = 0; i < SE_NCOL; i++)
		row[i] = NAN;
	row[0] = round((v[0] - s->t0) * 1000) / 1000;
	if (s->timeline) {
		/* rm-tree's own clock: its epoch is stamped when the row is
		 * written, which on a busy machine lags the sample. */
		if (!isnan(v[SE_ELAPSED]))
			row[0] = round(v[SE_ELAPSED] * 1000) / 1000;
		row[1] = v[SE_TL_RSS] / 1024;
		row[2] = v[SE_TL_PROCS];
		row[3] = v[SE_TL_CPU];
		return 0;
	}
	for (int i = SE_USED; i <= SE_COMP; i++)
		row[i - 1] = v[i];
	if (!isnan(v[SE_DISK]) && !isnan(v[SE_DISKPCT]) && v[SE_DISKPCT] < 100)
		row[SE_NCOL - 1] = v[SE_DISK] / (1 - v[SE_DISKPCT] / 100);
	return 0;
}

int series_load(const char *path, struct series *s)
{
	static char buf[65536];
	struct loader ld = { s, 0, { 0 }, 0 };
	struct rm_csv c;
	enum rm_csv_err e = RM_CSV_OK;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	memset(s, 0, sizeof(*s));
	if (fd < 0)
		return -1;
	if (rm_csv_init(&c, 0, 0) < 0) {
		close(fd);
		errno = ENOMEM;
		return -1;
	}
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		e = n ? rm_csv_feed(&c, buf, (size_t)n, on_row, &ld) : rm_csv_finish(&c, on_row, &ld);
		if (n == 0 || e) {
			rm_csv_free(&c);
			close(fd);
			if (e) {
				series_free(s);
				errno = EINVAL;
			}
			return e ? -1 : 0;
		}
	}
	{
		int saved = errno;
		series_free(s);
		rm_csv_free(&c);
		close(fd);
		errno = saved;
	}
	return -1;
}

void series_free(struct series *s)
{
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
}

/* The input file the series of report r comes from: its system CSV, else
 * its first timeline (NULL: none). */
const char *series_file(const struct report *r)
{
	if (r->sys)
		return r->sys->file;
	if (!r->tl.known)
		return NULL;
	for (int i = 0; i < r->nfiles; i++) {
		char buf[4096];
		ssize_t n;
		int fd = open(r->files[i], O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		buf[strcspn(buf, "\r\n")] = '\0';
		/* rm-tree's timeline header: epoch,iso,elapsed_s,procs,rss_kib,... */
		if (strstr(buf, "procs") && strstr(buf, "rss_kib") && !strstr(buf, "peak_rss_kib"))
			return r->files[i];
	}
	return NULL;
}

static void num(struct rm_buf *b, double v, const char *sep)
{
	if (isnan(v))
		rm_buf_addf(b, "%sNaN", sep);
	else
		rm_buf_addf(b, "%s%.10g", sep, v);
}

static void print_blocks(struct rm_buf *b, const struct report *r, const struct series *s)
{
	const struct sys *y = r->sys;

	rm_buf_adds(b, s->timeline ? "# elapsed_s job_rss_mib procs cpu_pct\n" :
		    "# elapsed_s mem_used_mib mem_avail_mib swap_used_mib disk_avail_gib cpu_pct load1 compilers disk_size_gib\n");
	for (size_t i = 0; i < s->n; i++) {
		const double *row = &s->v[i * SE_NCOL];
		for (int k = 0; k < (s->timeline ? 4 : SE_NCOL); k++)
			num(b, row[k], k ? " " : "");
		rm_buf_addc(b, '\n');
	}
	rm_buf_adds(b, "\n\n# stage start_s end_s name\n");
	for (size_t i = 0; y && !s->timeline && i < y->nseg; i++) {
		double t0 = y->segs[i].epoch - y->first_epoch;
		double t1 = (i + 1 < y->nseg ? y->segs[i + 1].epoch : y->last_epoch) - y->first_epoch;
		const char *name = stage_name(r, y->segs[i].stage);
		if (!name[0])
			continue;
		num(b, round(t0 * 1000) / 1000, "");
		num(b, round(t1 * 1000) / 1000, " ");
		rm_buf_adds(b, " \"");
		for (size_t j = 0; name[j]; j++) {
			/* At most 40 bytes, cut on a character boundary, then "~". */
			if (j >= 39 && strlen(name) > 40 && ((unsigned char)name[j] & 0xc0) != 0x80) {
				rm_buf_addc(b, '~');
				break;
			}
			rm_buf_addc(b, name[j] == '"' ? '\'' : name[j]);
		}
		rm_buf_adds(b, "\"\n");
	}
	rm_buf_adds(b, "\n\n# oom elapsed_s kills\n");
	for (size_t i = 0; y && !s->timeline && i < y->nev; i++) {
		num(b, round((y->ev[i].epoch - y->first_epoch) * 1000) / 1000, "");
		rm_buf_addf(b, " %ld\n", y->ev[i].kills);
	}
}

int print_series(struct rm_buf *b, const struct report *reps, int nrep)
{
	for (int k = 0; k < nrep; k++) {
		const char *f = series_file(&reps[k]);
		struct series s;
		if (!f)
			continue;
		if (series_load(f, &s) < 0) {
			char *shown = sanitized(f, strlen(f));
			warn("cannot read '%s'", shown);
			free(shown);
			return RM_EXIT_FAIL;
		}
		print_blocks(b, &reps[k], &s);
		series_free(&s);
		return RM_EXIT_OK;
	}
	warnx("--series: no system CSV or rm-tree timeline among the inputs");
	return RM_EXIT_FAIL;
}
