/*
 * svg.c: the system CSV as one self-contained SVG timeline (no scripts,
 * fonts or links, so it opens in any browser offline): memory used,
 * available and swap with the near-OOM line; disk available with the
 * low-disk line; CPU busy and compilers; stage bands across all three;
 * red lines at OOM kills and dots at the peaks, each with a tooltip.
 * Series come from sys.c's time buckets (min and max per bucket), so a
 * spike shorter than a bucket still shows.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "summarize.h"

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

static double px(const struct sys *s, double t)
{
	double dur = s->last_epoch - s->first_epoch;
	return L + (dur > 0 ? t / dur : 0) * PW;
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

static void frame(struct rm_buf *b, const struct panel *p, const char *unit)
{
	rm_buf_addf(b, "<rect x=\"%d\" y=\"%.0f\" width=\"%d\" height=\"%.0f\" fill=\"none\" stroke=\"#888\"/>\n",
		    L, p->y, PW, p->h);
	rm_buf_addf(b, "<text x=\"%d\" y=\"%.0f\" font-size=\"12\" font-weight=\"bold\">%s</text>\n",
		    L, p->y - 5, p->title);
	rm_buf_addf(b, "<text x=\"%d\" y=\"%.0f\" font-size=\"10\" text-anchor=\"end\">%.0f %s</text>\n",
		    L - 4, p->y + 10, p->hi, unit);
	rm_buf_addf(b, "<text x=\"%d\" y=\"%.0f\" font-size=\"10\" text-anchor=\"end\">%.0f</text>\n",
		    L - 4, p->y + p->h, p->lo);
}

static double series_max(const struct sys *s, int k)
{
	double m = 0;

	for (int i = 0; i < s->nb; i++)
		if ((s->b[i].has & (1u << k)) && s->b[i].max[k] > m)
			m = s->b[i].max[k];
	return m;
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
	int H = 630;
	char iso[40], d[40], lbl[600];

	if (o->low_disk_gb > diskhi)
		diskhi = o->low_disk_gb;
	dsk.hi = diskhi > 0 ? diskhi * 1.1 : 1;
	rm_fmt_iso(s->first_epoch, iso, sizeof(iso));
	fmt_dur(dur, d, sizeof(d));

	rm_buf_addf(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		    "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		    "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\">\n", W, H, W, H);
	rm_buf_addf(b, "<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", W, H);
	rm_buf_adds(b, "<text x=\"10\" y=\"22\" font-size=\"15\" font-weight=\"bold\">");
	xml(b, s->file);
	rm_buf_addf(b, "</text>\n<text x=\"10\" y=\"40\" font-size=\"11\">from %s, %s, %ld samples</text>\n",
		    iso, d, s->samples);

	/* Stage bands, behind everything else. */
	for (size_t i = 0; i < s->nseg; i++) {
		double t0 = s->segs[i].epoch - s->first_epoch;
		double t1 = i + 1 < s->nseg ? s->segs[i + 1].epoch - s->first_epoch : dur;
		double x0 = px(s, t0), x1 = px(s, t1);
		const char *name = stage_name(r, s->segs[i].stage);
		rm_buf_addf(b, "<rect x=\"%.1f\" y=\"%.0f\" width=\"%.1f\" height=\"%.0f\" fill=\"%s\" opacity=\"0.5\"><title>stage ",
			    x0, mem.y, x1 - x0 > 0.5 ? x1 - x0 : 0.5, cpu.y + cpu.h - mem.y,
			    i % 2 ? "#e8eef8" : "#f6f0e4");
		xml(b, name[0] ? name : "(none)");
		rm_buf_adds(b, "</title></rect>\n");
		if (x1 - x0 > 30 && name[0]) {
			rm_buf_addf(b, "<text x=\"%.1f\" y=\"%.0f\" font-size=\"10\" fill=\"#555\">", x0 + 2,
				    mem.y + 12);
			xml(b, name);
			rm_buf_adds(b, "</text>\n");
		}
	}
	frame(b, &mem, "MiB");
	frame(b, &dsk, "GiB");
	frame(b, &cpu, "%");
	series(b, s, &mem, SV_USED, 1, "#c0392b", "memory used (max per bucket)");
	series(b, s, &mem, SV_AVAIL, 0, "#2471a3", "memory available (min per bucket)");
	series(b, s, &mem, SV_SWAP, 1, "#d68910", "swap used (max per bucket)");
	snprintf(lbl, sizeof(lbl), "near-OOM %.0f MiB", o->near_oom_mb);
	if (o->near_oom_mb <= mem.hi)
		hline(b, &mem, o->near_oom_mb, "#922b21", lbl);
	series(b, s, &dsk, SV_DISK, 0, "#1e8449", "disk available (min per bucket)");
	snprintf(lbl, sizeof(lbl), "low disk %g GiB", o->low_disk_gb);
	hline(b, &dsk, o->low_disk_gb, "#922b21", lbl);
	series(b, s, &cpu, SV_CPU, 1, "#7d3c98", "CPU busy % (max per bucket)");
	{
		double cmax = series_max(s, SV_COMP);
		struct panel cp = cpu;
		cp.hi = cmax > 0 ? cmax : 1;
		series(b, s, &cp, SV_COMP, 1, "#5d6d7e", "compilers (max per bucket)");
		rm_buf_addf(b, "<text x=\"%d\" y=\"%.0f\" font-size=\"10\" fill=\"#5d6d7e\">max %.0f compilers</text>\n",
			    L + 4, cpu.y + cpu.h - 4, cmax);
	}

	/* Time axis. */
	for (int i = 0; i <= 5; i++) {
		char clk[32];
		double t = dur * i / 5.0;
		fmt_clock(t, clk, sizeof(clk));
		rm_buf_addf(b, "<text x=\"%.1f\" y=\"%.0f\" font-size=\"10\" text-anchor=\"middle\">+%s</text>\n",
			    px(s, t), cpu.y + cpu.h + 14, clk);
	}

	/* Peaks: a dot with what, when and where. */
	{
		static const int pks[] = { PK_MEM_USED, PK_MEM_AVAIL, PK_SWAP, PK_DISK, PK_CPU };
		for (size_t i = 0; i < sizeof(pks) / sizeof(pks[0]); i++) {
			const struct peak *p = &s->pk[pks[i]];
			const struct panel *pn = pks[i] == PK_DISK ? &dsk : pks[i] == PK_CPU ? &cpu : &mem;
			char clk[32];
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
	/* OOM kills. */
	for (size_t i = 0; i < s->nev; i++) {
		const struct oomev *e = &s->ev[i];
		double x = px(s, e->epoch - s->first_epoch);
		/* Another program's kill is not drawn as the build's. */
		if (!oom_event_is_build(e))
			continue;
		rm_buf_addf(b, "<line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\" stroke=\"#e74c3c\" stroke-width=\"2\"><title>OOM kill",
			    x, mem.y, x, cpu.y + cpu.h);
		for (int k = 0; k < e->nv; k++) {
			if (e->vscope[k] == 0)
				continue;
			rm_buf_adds(b, k ? ", " : ": ");
			xml(b, e->vname[k]);
			rm_buf_addf(b, " (PID %d)", e->vpid[k]);
		}
		rm_buf_adds(b, "; ");
		xml(b, e->ctx);
		rm_buf_addf(b, "</title></line>\n<text x=\"%.1f\" y=\"%.0f\" font-size=\"11\" fill=\"#e74c3c\">OOM</text>\n",
			    x + 2, mem.y + 24);
	}
	rm_buf_addf(b, "<text x=\"10\" y=\"%d\" font-size=\"10\" fill=\"#555\">red: memory used, blue: available, orange: swap; "
		    "dots: peaks (hover for stage and context); red lines: OOM kills</text>\n", H - 12);
	rm_buf_adds(b, "</svg>\n");
}

int write_svg(const struct report *r, const struct opts *o, const char *path)
{
	struct rm_buf b = { 0 };
	int rc;

	build(&b, r, o);
	if (b.oom) {
		rm_buf_free(&b);
		errno = ENOMEM;
		return -1;
	}
	rc = write_whole(path, &b);
	rm_buf_free(&b);
	return rc;
}
