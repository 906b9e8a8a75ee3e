/*
 * svg.c: the system CSV as one self-contained SVG timeline (no scripts,
 * fonts or links, so it opens in any browser offline): memory used,
 * available and swap with the near-OOM line; disk available with the
 * low-disk line; CPU busy and compilers; stage bands across all three;
 * red lines at OOM kills and dots at the peaks, each with a tooltip.
 * Series come from sys.c's time buckets (min and max per bucket), so a
 * spike shorter than a bucket still shows.  An rm-tree timeline alone
 * draws the job's memory, process count and CPU from its rows (series.c).
 * Axes carry round ticks (1, 2 or 5 x 10^n); a stage's name goes in its
 * band, or on a second row where it clears its neighbours, else only in
 * its tooltip.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fmt.h"
#include "oom.h"
#include "series.h"
#include "svg.h"

#define W 1000
#define L 70
#define R 20
#define PW (W - L - R)

struct panel {
	double y, h, lo, hi;
	const char *title;
};

/* XML text: & < > " escaped; U+FFFE and U+FFFF (not XML characters) dropped. */
static void xml(struct rm_buf *b, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '&')
			rm_buf_adds(b, "&amp;");
		else if (*p == '<')
			rm_buf_adds(b, "&lt;");
		else if (*p == '>')
			rm_buf_adds(b, "&gt;");
		else if (*p == '"')
			rm_buf_adds(b, "&quot;");
		else if (*p == 0xef && p[1] == 0xbf && (p[2] == 0xbe || p[2] == 0xbf))
			p += 2;
		else if (*p < 0x20)
			rm_buf_addc(b, ' ');
		else
			rm_buf_addc(b, (char)*p);
	}
}

static double g_dur;        /* seconds the time axis spans */

static double px(const struct sys *s, double t)
{
	(void)s;
	return L + (g_dur > 0 ? t / g_dur : 0) * PW;
}

/* Characters in UTF-8 text s (its bytes that do not continue one). */
static size_t nchars(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

/* A round step for about n ticks over span: 1, 2 or 5 x 10^k, the nearest. */
static double nice_step(double span, int n)
{
	double raw = span > 0 ? span / n : 1, p = pow(10, floor(log10(raw))), f = raw / p;

	return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * p;
}

static double py(const struct panel *p, double v)
{
	double f = p->hi > p->lo ? (v - p->lo) / (p->hi - p->lo) : 0;
	if (f < 0)
		f = 0;
	if (f > 1)
		f = 1;
	return p->y + p->h - f * p->h;
}

/* One series as a polyline over the buckets: its max (hi) or min. */
static void series(struct rm_buf *b, const struct sys *s, const struct panel *p, int k, int hi,
		   const char *color, const char *label)
{
	int n = 0;

	rm_buf_addf(b, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"", color);
	for (int i = 0; i < s->nb; i++) {
		const struct bucket *bk = &s->b[i];
		double t, v;
		if (!(bk->has & (1u << k)))
			continue;
		t = (i + 0.5) * s->bw;
		if (t > s->last_epoch - s->first_epoch)
			t = s->last_epoch - s->first_epoch;
		v = hi ? bk->max[k] : bk->min[k];
		rm_buf_addf(b, "%s%.1f,%.1f", n++ ? " " : "", px(s, t), py(p, v));
	}
	rm_buf_addf(b, "\"><title>%s</title></polyline>\n", label);
}

static void hline(struct rm_buf *b, const struct panel *p, double v, const char *color,
		  const char *label)
{
	double y = py(p, v);

	rm_buf_addf(b, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\" "
		    "stroke-dasharray=\"6,4\"><title>%s</title></line>\n", L, y, W - R, y, color, label);
	rm_buf_addf(b, "<text x=\"%d\" y=\"%.1f\" font-size=\"10\" fill=\"%s\" text-anchor=\"end\">%s</text>\n",
		    W - R - 2, y - 3, color, label);
}

/* A panel's frame and title, and round ticks up its y axis, each with a
 * faint grid line (class "ytick" on the labels). */
static void frame(struct rm_buf *b, const struct panel *p, const char *unit)
{
	double step = nice_step(p->hi - p->lo, p->h >= 200 ? 5 : 4);

	rm_buf_addf(b, "<rect x=\"%d\" y=\"%.0f\" width=\"%d\" height=\"%.0f\" fill=\"none\" stroke=\"#888\"/>\n",
		    L, p->y, PW, p->h);
	rm_buf_addf(b, "<text x=\"%d\" y=\"%.0f\" font-size=\"12\" font-weight=\"bold\">%s</text>\n",
		    L, p->y - 5, p->title);
	for (int i = (int)ceil(p->lo / step); i * step <= p->hi + step * 1e-9 && i < 1000; i++) {
		double v = i * step, y = py(p, v);
		int last = (i + 1) * step > p->hi + step * 1e-9;   /* the top tick carries the unit */
		if (v > p->lo)
			rm_buf_addf(b, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#eee\"/>\n",
				    L + 1, y, W - R - 1, y);
		rm_buf_addf(b, "<text class=\"ytick\" x=\"%d\" y=\"%.1f\" font-size=\"10\" text-anchor=\"end\">%g%s%s</text>\n",
			    L - 4, y + 3.5, v, unit[0] && last ? " " : "", last ? unit : "");
	}
}

/* The time axis: round steps of clock time; a label near the right edge
 * ends at its tick, so none is cut off. */
static void time_axis(struct rm_buf *b, const struct sys *s, double y)
{
	static const double steps[] = { 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600,
					 7200, 10800, 21600, 43200, 86400 };
	double step = steps[sizeof(steps) / sizeof(steps[0]) - 1];

	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
		if (g_dur / steps[i] <= 6) {
			step = steps[i];
			break;
		}
	for (int i = 0; i * step <= g_dur + 1e-9 && i < 1000; i++) {
		char clk[32];
		double x = px(s, i * step);
		fmt_clock(i * step, clk, sizeof(clk));
		rm_buf_addf(b, "<text class=\"xtick\" x=\"%.1f\" y=\"%.0f\" font-size=\"10\" text-anchor=\"%s\">+%s</text>\n",
			    x, y, x > W - R - 30 ? "end" : "middle", clk);
	}
}

static double series_max(const struct sys *s, int k)
{
	double m = 0;

	for (int i = 0; i < s->nb; i++)
		if ((s->b[i].has & (1u << k)) && s->b[i].max[k] > m)
			m = s->b[i].max[k];
	return m;
}

/* The document, its white page, the title and the line under it. */
static void svg_head(struct rm_buf *b, int H, const char *title, const char *what, double t0,
		     double dur, size_t n)
{
	char iso[40], d[40];

	rm_fmt_iso(t0, iso, sizeof(iso));
	fmt_dur(dur, d, sizeof(d));
	rm_buf_addf(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		    "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		    "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\">\n", W, H, W, H);
	rm_buf_addf(b, "<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", W, H);
	rm_buf_adds(b, "<text x=\"10\" y=\"22\" font-size=\"15\" font-weight=\"bold\">");
	xml(b, title);
	rm_buf_addf(b, "</text>\n<text x=\"10\" y=\"40\" font-size=\"11\">%sfrom %s, %s, %zu samples</text>\n",
		    what, iso, d, n);
}

/* Stage bands from the top of mem to the bottom of cpu, behind the rest. */
static void svg_stages(struct rm_buf *b, const struct report *r, const struct panel *mem,
		       const struct panel *cpu, double dur)
{
	const struct sys *s = r->sys;
	double lend[2] = { -1, -1 };   /* where the stage names of each row end */

	for (size_t i = 0; i < s->nseg; i++) {
		double t0 = s->segs[i].epoch - s->first_epoch;
		double t1 = i + 1 < s->nseg ? s->segs[i + 1].epoch - s->first_epoch : dur;
		double x0 = px(s, t0), x1 = px(s, t1);
		const char *name = stage_name(r, s->segs[i].stage);
		rm_buf_addf(b, "<rect x=\"%.1f\" y=\"%.0f\" width=\"%.1f\" height=\"%.0f\" fill=\"%s\" opacity=\"0.5\"><title>stage ",
			    x0, mem->y, x1 - x0 > 0.5 ? x1 - x0 : 0.5, cpu->y + cpu->h - mem->y,
			    i % 2 ? "#e8eef8" : "#f6f0e4");
		xml(b, name[0] ? name : "(none)");
		rm_buf_adds(b, "</title></rect>\n");
		/* The name in the band, 6 px a character, on the first of two
		 * rows where it clears the name before; else the tooltip only. */
		for (int row = 0; row < 2 && name[0]; row++) {
			double w = 6.0 * (double)nchars(name) + 4;
			double xs = x0 + 2 >= lend[row] ? x0 + 2 : lend[row];
			if (xs + w > W - R || (xs > x0 + 2 && xs + w > x1))
				continue;
			lend[row] = xs + w;
			rm_buf_addf(b, "<text class=\"stage\" x=\"%.1f\" y=\"%.0f\" font-size=\"10\" fill=\"#555\">",
				    xs, mem->y + 12 + 12 * row);
			xml(b, name);
			rm_buf_adds(b, "</text>\n");
			break;
		}
	}
}

/* The three panels' frames, series and threshold lines. */
static void svg_panels(struct rm_buf *b, const struct sys *s, const struct opts *o,
		       const struct panel *mem, const struct panel *dsk, const struct panel *cpu)
{
	double cmax = series_max(s, SV_COMP);
	struct panel cp = *cpu;
	char lbl[600];

	frame(b, mem, "MiB");
	frame(b, dsk, "GiB");
	frame(b, cpu, "%");
	series(b, s, mem, SV_USED, 1, "#c0392b", "memory used (max per bucket)");
	series(b, s, mem, SV_AVAIL, 0, "#2471a3", "memory available (min per bucket)");
	series(b, s, mem, SV_SWAP, 1, "#d68910", "swap used (max per bucket)");
	snprintf(lbl, sizeof(lbl), "near-OOM %.0f MiB", o->near_oom_mb);
	if (o->near_oom_mb <= mem->hi)
		hline(b, mem, o->near_oom_mb, "#922b21", lbl);
	series(b, s, dsk, SV_DISK, 0, "#1e8449", "disk available (min per bucket)");
	snprintf(lbl, sizeof(lbl), "low disk %g GiB", o->low_disk_gb);
	hline(b, dsk, o->low_disk_gb, "#922b21", lbl);
	series(b, s, cpu, SV_CPU, 1, "#7d3c98", "CPU busy % (max per bucket)");
	cp.hi = cmax > 0 ? cmax : 1;
	series(b, s, &cp, SV_COMP, 1, "#5d6d7e", "compilers (max per bucket)");
	rm_buf_addf(b, "<text x=\"%d\" y=\"%.0f\" font-size=\"10\" fill=\"#5d6d7e\">max %.0f compilers</text>\n",
		    L + 4, cpu->y + cpu->h - 4, cmax);
}

/* Peaks: a dot with what, when and where. */
static void svg_peaks(struct rm_buf *b, const struct report *r, const struct panel *mem,
		      const struct panel *dsk, const struct panel *cpu)
{
	static const int pks[] = { PK_MEM_USED, PK_MEM_AVAIL, PK_SWAP, PK_DISK, PK_CPU };
	const struct sys *s = r->sys;
	char clk[32];

	for (size_t i = 0; i < sizeof(pks) / sizeof(pks[0]); i++) {
		const struct peak *p = &s->pk[pks[i]];
		const struct panel *pn = pks[i] == PK_DISK ? dsk : pks[i] == PK_CPU ? cpu : mem;
		if (!p->known)
			continue;
		fmt_clock(p->epoch - s->first_epoch, clk, sizeof(clk));
		rm_buf_addf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"#000\"><title>%s %.2f at +%s, stage ",
			    px(s, p->epoch - s->first_epoch), py(pn, p->v), peak_label(pks[i]), p->v, clk);
		xml(b, stage_name(r, p->stage));
		rm_buf_adds(b, ": ");
		xml(b, p->ctx);
		rm_buf_adds(b, "</title></circle>\n");
	}
}

/* The build's OOM kills: a red line each (another program's is not drawn). */
static void svg_ooms(struct rm_buf *b, const struct report *r, const struct panel *mem,
		     const struct panel *cpu)
{
	const struct sys *s = r->sys;
	/* Without the exit log no kill can be told the build's or another
	 * program's: drawn, and said to be of unknown scope. */
	int unknown = !r->nexitlogs;

	for (size_t i = 0; i < s->nev; i++) {
		const struct oomev *e = &s->ev[i];
		double at = e->epoch, x;
		const char *ctx = e->ctx;
		int right;
		if (!oom_event_is_build(e))
			continue;
		/* At the first victim's own time (its exit), not the sample's. */
		for (int k = 0; k < e->nv; k++)
			if (e->vscope[k] != 0) {
				at = e->vx[k].epoch;
				if (e->vx[k].ctx)
					ctx = e->vx[k].ctx;
				break;
			}
		x = px(s, at - s->first_epoch);
		/* The label inside the page: left of a line near the right edge. */
		right = x > W - R - 40;
		rm_buf_addf(b, "<line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\" stroke=\"#e74c3c\" stroke-width=\"2\"%s><title>OOM kill%s",
			    x, mem->y, x, cpu->y + cpu->h, unknown ? " stroke-dasharray=\"4,3\"" : "",
			    unknown ? " (scope unknown: no exit log given nor beside the CSV)" : "");
		for (int k = 0; k < e->nv; k++) {
			if (e->vscope[k] == 0)
				continue;
			rm_buf_adds(b, k ? ", " : ": ");
			xml(b, e->vname[k]);
			rm_buf_addf(b, " (PID %d)", e->vpid[k]);
			if (e->vx[k].row && e->vx[k].row->unit) {
				rm_buf_adds(b, " ");
				xml(b, e->vx[k].row->unit);
			}
		}
		rm_buf_adds(b, "; ");
		xml(b, ctx);
		rm_buf_addf(b, "</title></line>\n<text x=\"%.1f\" y=\"%.0f\" font-size=\"11\" fill=\"#e74c3c\"%s>%s</text>\n",
			    right ? x - 2 : x + 2, mem->y + 24, right ? " text-anchor=\"end\"" : "",
			    unknown ? "OOM?" : "OOM");
	}
}

/* The build's cgroup: used and limit over time, and each change of the
 * limit marked (the host panel's scale would hide a 600 MiB limit). */
static void svg_cgroup(struct rm_buf *b, const struct sys *s, const struct panel *cg)
{
	char clk[32];

	frame(b, cg, "MiB");
	series(b, s, cg, SV_CG_USED, 1, "#c0392b", "cgroup memory used (max per bucket)");
	series(b, s, cg, SV_CG_LIMIT, 0, "#922b21", "cgroup memory limit (min per bucket)");
	for (int i = 0; i < s->nlimch; i++) {
		double x = px(s, s->limch[i].epoch - s->first_epoch);
		fmt_clock(s->limch[i].epoch - s->first_epoch, clk, sizeof(clk));
		rm_buf_addf(b, "<line class=\"limit-change\" x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\" "
			    "stroke=\"#922b21\" stroke-dasharray=\"2,3\"><title>cgroup limit %.0f -> %.0f MiB at +%s</title></line>\n",
			    x, cg->y, x, cg->y + cg->h, s->limch[i].from, s->limch[i].to, clk);
	}
}

static void build(struct rm_buf *b, const struct report *r, const struct opts *o)
{
	const struct sys *s = r->sys;
	double dur = s->last_epoch - s->first_epoch;
	/* The host's RAM, also where a cgroup limit is the -j advice's RAM. */
	double ram = !isnan(r->host_ram_mb) ? r->host_ram_mb : r->ram_mb;
	double memhi = !isnan(ram) ? ram : series_max(s, SV_USED) + series_max(s, SV_AVAIL);
	double diskhi = series_max(s, SV_DISK);
	struct panel mem = { 60, 220, 0, memhi > 0 ? memhi : 1, "Memory (MiB): used, available, swap" };
	struct panel dsk = { 320, 110, 0, 0, "Disk available (GiB)" };
	struct panel cpu = { 470, 110, 0, 100, "CPU busy (%) and compilers" };
	struct panel cg = { 320, 110, 0, 1, "Memory of the build's cgroup (MiB): used, limit" };
	int H = 630, has_cg = !isnan(s->cg_limit_min) && series_max(s, SV_CG_LIMIT) > 0;

	if (has_cg) {
		/* A panel of its own, above the disk's. */
		cg.hi = series_max(s, SV_CG_LIMIT) * 1.1;
		dsk.y += 150;
		cpu.y += 150;
		H += 150;
	}

	g_dur = dur;
	if (o->low_disk_gb > diskhi)
		diskhi = o->low_disk_gb;
	dsk.hi = diskhi > 0 ? diskhi * 1.1 : 1;
	svg_head(b, H, s->file, "", s->first_epoch, dur, (size_t)s->samples);
	svg_stages(b, r, &mem, &cpu, dur);
	svg_panels(b, s, o, &mem, &dsk, &cpu);
	if (has_cg)
		svg_cgroup(b, s, &cg);
	time_axis(b, s, cpu.y + cpu.h + 14);
	svg_peaks(b, r, &mem, &dsk, &cpu);
	svg_ooms(b, r, &mem, &cpu);
	rm_buf_addf(b, "<text x=\"10\" y=\"%d\" font-size=\"10\" fill=\"#555\">red: memory used, blue: available, orange: swap; "
		    "dots: peaks (hover for stage and context); red lines: OOM kills</text>\n", H - 12);
	rm_buf_adds(b, "</svg>\n");
}

/* One column of a timeline's rows as a polyline. */
static void tl_line(struct rm_buf *b, const struct series *se, const struct panel *p, int k,
		    const char *color, const char *label)
{
	int n = 0;

	rm_buf_addf(b, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"", color);
	for (size_t i = 0; i < se->n; i++) {
		const double *row = &se->v[i * SE_NCOL];
		if (!isnan(row[k]))
			rm_buf_addf(b, "%s%.1f,%.1f", n++ ? " " : "", px(NULL, row[0]), py(p, row[k]));
	}
	rm_buf_addf(b, "\"><title>%s</title></polyline>\n", label);
}

static double tl_max(const struct series *se, int k)
{
	double m = 0;

	for (size_t i = 0; i < se->n; i++)
		if (se->v[i * SE_NCOL + k] > m)
			m = se->v[i * SE_NCOL + k];
	return m;
}

/* An rm-tree timeline alone: the job's memory, processes and CPU, as
 * psrecord --plot draws them. */
static int build_tl(struct rm_buf *b, const struct report *r)
{
	const char *file = series_file(r);
	struct series se;
	double mhi, phi, chi;
	struct panel mem = { 60, 220, 0, 1, "Job memory (MiB): RSS of the process tree" };
	struct panel prc = { 320, 110, 0, 1, "Processes" };
	struct panel cpu = { 470, 110, 0, 100, "CPU busy (%, 100 a core)" };
	int H = 630;
	char clk[32];

	if (!file || series_load(file, &se) < 0)
		return -1;
	g_dur = se.n ? se.v[(se.n - 1) * SE_NCOL] : 0;   /* elapsed_s of the last row */
	mhi = tl_max(&se, 1);
	phi = tl_max(&se, 2);
	chi = tl_max(&se, 3);
	mem.hi = mhi > 0 ? mhi * 1.05 : 1;
	prc.hi = phi > 0 ? phi * 1.1 : 1;
	cpu.hi = chi > 100 ? chi * 1.05 : 100;
	svg_head(b, H, file, "rm-tree timeline ", se.t0, g_dur, se.n);
	frame(b, &mem, "MiB");
	frame(b, &prc, "");
	frame(b, &cpu, "%");
	tl_line(b, &se, &mem, 1, "#c0392b", "job memory (RSS, MiB)");
	tl_line(b, &se, &prc, 2, "#1f618d", "processes");
	tl_line(b, &se, &cpu, 3, "#7d3c98", "CPU busy %");
	if (r->tl.known && !isnan(r->tl.peak_kib)) {
		double at = !isnan(r->tl.peak_elapsed) ? r->tl.peak_elapsed : r->tl.peak_epoch - se.t0;
		fmt_clock(at, clk, sizeof(clk));
		rm_buf_addf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"#000\"><title>job memory peak %.1f MiB at +%s</title></circle>\n",
			    px(NULL, at), py(&mem, r->tl.peak_kib / 1024),
			    r->tl.peak_kib / 1024, clk);
	}
	time_axis(b, NULL, cpu.y + cpu.h + 14);
	rm_buf_addf(b, "<text x=\"10\" y=\"%d\" font-size=\"10\" fill=\"#555\">red: the job's memory (RSS summed over its processes), "
		    "blue: processes, purple: CPU; dot: the memory peak</text>\n</svg>\n", H - 12);
	series_free(&se);
	return 0;
}

int write_svg(const struct report *r, const struct opts *o, const char *path)
{
	struct rm_buf b = { 0 };
	int rc;

	if (r->sys)
		build(&b, r, o);
	else if (build_tl(&b, r) < 0)
		return -1;
	if (b.oom) {
		rm_buf_free(&b);
		errno = ENOMEM;
		return -1;
	}
	rc = write_whole(path, &b);
	rm_buf_free(&b);
	return rc;
}
