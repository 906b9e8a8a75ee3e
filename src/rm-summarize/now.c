/*
 * now.c: --now LIVE (see now.h).  The worst so far comes from the report
 * built over the whole CSV, "now" from the CSV's last whole row (read
 * again from the file's last 64 KiB, by header name) and from rm-tree's
 * --live snapshot.  Both files are outside input: opened without
 * following a symbolic link, regular files only, bounded reads, every
 * field sanitized.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "csvread.h"
#include "fmt.h"
#include "runfig.h"
#include "now.h"
#include "oom.h"
#include "procfs.h"
#include "tick.h"

#define NOW_READ (64 * 1024)
#define LIVE_ROWS 3

/* A CSV's header and its last whole row, fields by name. */
struct tab {
	char *hdr[64], *val[64];
	int nh, nv;
	char *rows[LIVE_ROWS][16];   /* --live: the first rows, by live column */
	int nrows;
	int header_done, want_rows;
	int lcol[16];
};

static int on_rec(void *arg, struct rm_csv *c)
{
	struct tab *t = arg;

	if (c->bad_quote || c->cut)
		return 0;
	if (!t->header_done) {
		t->header_done = 1;
		for (int i = 0; i < c->nf && i < 64; i++)
			t->hdr[t->nh++] = sanitized(c->f[i].p, c->f[i].len);
		return 0;
	}
	for (int i = 0; i < t->nv; i++)
		free(t->val[i]);
	t->nv = 0;
	for (int i = 0; i < c->nf && i < 64; i++)
		t->val[t->nv++] = sanitized(c->f[i].p, c->f[i].len);
	if (t->want_rows && t->nrows < LIVE_ROWS) {
		for (int k = 0; k < 16; k++)
			t->rows[t->nrows][k] = t->lcol[k] >= 0 && t->lcol[k] < c->nf ?
				sanitized(c->f[t->lcol[k]].p, c->f[t->lcol[k]].len) : NULL;
		t->nrows++;
	}
	return 0;
}

static void tab_free(struct tab *t)
{
	for (int i = 0; i < t->nh; i++)
		free(t->hdr[i]);
	for (int i = 0; i < t->nv; i++)
		free(t->val[i]);
	for (int r = 0; r < t->nrows; r++)
		for (int k = 0; k < 16; k++)
			free(t->rows[r][k]);
}

static const char *get(const struct tab *t, const char *name)
{
	for (int i = 0; i < t->nh && i < t->nv; i++)
		if (strcmp(t->hdr[i], name) == 0)
			return t->val[i];
	return "";
}

/* Read path's header, then its last whole row (the tail after the last
 * line end in the final 64 KiB).  0, or -1 with errno. */
static int read_tab(const char *path, struct tab *t)
{
	static char buf[NOW_READ + 1];
	struct rm_csv c;
	struct stat st;
	ssize_t n;
	char *nl;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	if (rm_csv_init(&c, NOW_READ, 64) < 0) {
		close(fd);
		return -1;
	}
	n = rm_read_fd(fd, buf, sizeof(buf) - 1);
	nl = n > 0 ? memchr(buf, '\n', (size_t)n) : NULL;
	if (!nl) {
		rm_csv_free(&c);
		close(fd);
		errno = EINVAL;
		return -1;
	}
	rm_csv_feed(&c, buf, (size_t)(nl - buf) + 1, on_rec, t);   /* the header */
	if (t->want_rows) {
		/* A small snapshot: every row. */
		rm_csv_feed(&c, nl + 1, (size_t)(n - (nl + 1 - buf)), on_rec, t);
	} else if (st.st_size > (off_t)n) {
		off_t from = st.st_size > NOW_READ ? st.st_size - NOW_READ : 0;
		ssize_t m = pread(fd, buf, NOW_READ, from);
		char *first = m > 0 ? memchr(buf, '\n', (size_t)m) : NULL;
		if (first)
			rm_csv_feed(&c, first + 1, (size_t)(m - (first + 1 - buf)), on_rec, t);
	} else {
		rm_csv_feed(&c, nl + 1, (size_t)(n - (nl + 1 - buf)), on_rec, t);
	}
	rm_csv_finish(&c, on_rec, t);
	rm_csv_free(&c);
	close(fd);
	return 0;
}

enum { L_EPOCH, L_EL, L_PROCS, L_RSS, L_PEAK, L_TREE, L_RANK, L_PID, L_COMM, L_PRSS, L_UNIT, L_N };

static double dnum(const char *s)
{
	return s && *s ? strtod(s, NULL) : NAN;
}

/* The build now as one JSON object. */
static void now_json(struct rm_buf *b, const struct report *r, const struct tab *st,
		     const struct tab *lt, int have_live, double now)
{
	const struct sys *s = r->sys;
	double ooms = run_ooms(r);

	int f = 1, g;
	rm_buf_addc(b, '{');
	jkey_num(b, &f, "running_s", s ? now - s->first_epoch : NAN, 1);
	jkey_num(b, &f, "last_sample_age_s", s ? now - s->last_epoch : NAN, 1);
	jkey_str(b, &f, "stage", get(st, "stage")[0] ? get(st, "stage") : NULL);
	jkey_str(b, &f, "context", get(st, "context")[0] ? get(st, "context") : NULL);
	jkey_num(b, &f, "mem_avail_mb", dnum(get(st, "mem_avail_mb")), 0);
	jkey_num(b, &f, "mem_avail_min_mb", s && s->pk[PK_MEM_AVAIL].known ? s->pk[PK_MEM_AVAIL].v : NAN, 0);
	jkey_num(b, &f, "cg_mem_avail_mb", dnum(get(st, "cg_mem_avail_mb")), 0);
	jkey_num(b, &f, "cg_mem_avail_min_mb", run_cg_avail(r), 0);
	jkey_num(b, &f, "oom_kills", ooms, 0);
	jkey(b, &f, "processes");
	if (!have_live) {
		rm_buf_adds(b, "null");
	} else {
		g = 1;
		rm_buf_addc(b, '{');
		jkey_num(b, &g, "age_s", now - dnum(lt->rows[0][L_EPOCH]), 1);
		jkey_num(b, &g, "count", dnum(lt->rows[0][L_PROCS]), 0);
		jkey_num(b, &g, "rss_kib", dnum(lt->rows[0][L_RSS]), 0);
		jkey_num(b, &g, "peak_rss_kib", dnum(lt->rows[0][L_PEAK]), 0);
		jkey(b, &g, "largest");
		rm_buf_addc(b, '[');
		for (int i = 0; i < lt->nrows && lt->rows[i][L_PID] && lt->rows[i][L_PID][0]; i++) {
			int h = 1;
			if (i)
				rm_buf_addc(b, ',');
			rm_buf_addc(b, '{');
			jkey_num(b, &h, "pid", dnum(lt->rows[i][L_PID]), 0);
			jkey_str(b, &h, "comm", lt->rows[i][L_COMM]);
			jkey_num(b, &h, "rss_kib", dnum(lt->rows[i][L_PRSS]), 0);
			jkey_str(b, &h, "unit", lt->rows[i][L_UNIT]);
			rm_buf_addc(b, '}');
		}
		rm_buf_adds(b, "]}");
	}
	rm_buf_adds(b, "}\n");
}

void print_now(struct rm_buf *b, const struct report *r, const char *csv, const char *live,
	       const struct opts *o)
{
	static const char *const lnames[L_N] = { "epoch", "elapsed_s", "procs", "rss_kib",
		"peak_rss_kib", "tree_pid", "rank", "pid", "comm", "proc_rss_kib", "unit" };
	struct tab st = { 0 }, lt = { 0 };
	const struct sys *s = r->sys;
	double now = rm_now_epoch(), ooms = run_ooms(r);
	char clk[32], age[32], worst[32];
	int have_live = 0;

	for (int k = 0; k < 16; k++)
		lt.lcol[k] = -1;
	if (csv)
		read_tab(csv, &st);
	if (live) {
		struct tab hdr = { 0 };
		/* The header first, to map the columns the rows are kept by. */
		if (read_tab(live, &hdr) == 0) {
			for (int k = 0; k < L_N; k++)
				for (int i = 0; i < hdr.nh; i++)
					if (strcmp(hdr.hdr[i], lnames[k]) == 0)
						lt.lcol[k] = i;
			lt.want_rows = 1;
			have_live = read_tab(live, &lt) == 0 && lt.nrows > 0;
		}
		tab_free(&hdr);
	}
	fmt_clock(s ? now - s->first_epoch : NAN, clk, sizeof(clk));
	fmt_dur(s ? now - s->last_epoch : NAN, age, sizeof(age));
	if (o->json) {
		now_json(b, r, &st, &lt, have_live, now);
		tab_free(&st);
		tab_free(&lt);
		return;
	}
	rm_buf_addf(b, "  running  for %s (since the first sample); last sample %s ago\n", clk, age);
	if (get(&st, "stage")[0] || get(&st, "context")[0])
		rm_buf_addf(b, "  now      stage %s; context: %s\n",
			    get(&st, "stage")[0] ? get(&st, "stage") : "-",
			    get(&st, "context")[0] ? get(&st, "context") : "-");
	if (s && s->pk[PK_MEM_AVAIL].known) {
		fmt_clock(s->pk[PK_MEM_AVAIL].epoch - s->first_epoch, worst, sizeof(worst));
		rm_buf_addf(b, "  memory   %s MiB available now; least so far %.0f MiB at +%s (stage %s)\n",
			    get(&st, "mem_avail_mb")[0] ? get(&st, "mem_avail_mb") : "-",
			    s->pk[PK_MEM_AVAIL].v, worst, stage_name(r, s->pk[PK_MEM_AVAIL].stage));
	}
	if (s && s->cg_avail.known) {
		fmt_clock(s->cg_avail.epoch - s->first_epoch, worst, sizeof(worst));
		rm_buf_addf(b, "  cgroup   %s of %s MiB available now; least so far %.0f MiB at +%s\n",
			    get(&st, "cg_mem_avail_mb")[0] ? get(&st, "cg_mem_avail_mb") : "-",
			    get(&st, "cg_mem_limit_mb")[0] ? get(&st, "cg_mem_limit_mb") : "-",
			    s->cg_avail.v, worst);
	}
	if (have_live) {
		double la = now - dnum(lt.rows[0][L_EPOCH]);
		rm_buf_addf(b, "  build    %s processes now, tree %.1f MiB (peak %.1f MiB), as of %.1f s ago\n",
			    lt.rows[0][L_PROCS] ? lt.rows[0][L_PROCS] : "-", dnum(lt.rows[0][L_RSS]) / 1024,
			    dnum(lt.rows[0][L_PEAK]) / 1024, la);
		for (int i = 0; i < lt.nrows && lt.rows[i][L_PID] && lt.rows[i][L_PID][0]; i++)
			rm_buf_addf(b, "           %s %s (PID %s) %.1f MiB\n",
				    lt.rows[i][L_COMM] ? lt.rows[i][L_COMM] : "-",
				    lt.rows[i][L_UNIT] && strcmp(lt.rows[i][L_UNIT], lt.rows[i][L_COMM]) ?
					    lt.rows[i][L_UNIT] : "",
				    lt.rows[i][L_PID], dnum(lt.rows[i][L_PRSS]) / 1024);
	} else {
		rm_buf_adds(b, "  build    processes now: not known (no rm-tree --live snapshot)\n");
	}
	if (isnan(ooms))
		rm_buf_adds(b, "  OOM      not recorded\n");
	else
		rm_buf_addf(b, "  OOM      %.0f kill%s in the build so far\n", ooms, ooms == 1 ? "" : "s");
	tab_free(&st);
	tab_free(&lt);
}
