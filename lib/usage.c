/*
 * usage: see usage.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cgroup.h"
#include "procfs.h"
#include "proctab.h"
#include "sysinfo.h"
#include "tick.h"
#include "usage.h"

static void add_u64(struct rm_buf *b, uint64_t v)
{
	char tmp[24];
	int i = (int)sizeof(tmp);

	do
		tmp[--i] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	rm_buf_add(b, tmp + i, sizeof(tmp) - (size_t)i);
}

static void json_u64(struct rm_buf *b, const char *key, uint64_t v, int known)
{
	rm_buf_addf(b, ",\"%s\":", key);
	if (known)
		add_u64(b, v);
	else
		rm_buf_adds(b, "null");
}

void rm_usage_extra_begin(struct rm_usage_extra *x)
{
	struct rm_rapl_step st;

	memset(x, 0, sizeof(*x));
	x->rapl.dirfd = -1;
	x->watts = -1;
	if (rm_rapl_open(&x->rapl) > 0 && rm_rapl_sample(&x->rapl, &st) == 0) {
		x->rapl_on = 1;
		x->rapl_t0 = st.mono;
	} else {
		rm_rapl_close(&x->rapl);
	}
}

void rm_usage_extra_end(struct rm_usage_extra *x, struct rm_gpus *g)
{
	struct rm_rapl_step st;
	struct rm_gpus *own = NULL;

	if (x->rapl_on && rm_rapl_sample(&x->rapl, &st) == 0 && st.pkg_ok &&
	    st.mono > x->rapl_t0)
		x->watts = (double)st.pkg_uj / 1e6 / (st.mono - x->rapl_t0);
	rm_rapl_close(&x->rapl);
	x->rapl_on = 0;
	if (!g) {
		own = malloc(sizeof(*own));
		if (!own)
			return;
		rm_gpu_open(own);
		g = own;
	}
	free(x->gpu);
	x->ngpu = 0;
	x->gpu = g->n > 0 ? calloc((size_t)g->n, sizeof(*x->gpu)) : NULL;
	for (int i = 0; x->gpu && i < g->n; i++) {
		struct rm_usage_gpu *c = &x->gpu[x->ngpu++];
		memcpy(c->card, g->card[i].card, sizeof(c->card));
		memcpy(c->driver, g->card[i].driver, sizeof(c->driver));
		rm_gpu_read(g, i, RM_GPU_BUSY | RM_GPU_VRAM_USED | RM_GPU_VRAM_TOTAL |
			    RM_GPU_GTT_USED | RM_GPU_GTT_TOTAL, &c->r);
	}
	if (own) {
		rm_gpu_close(own);
		free(own);
	}
}

void rm_usage_extra_free(struct rm_usage_extra *x)
{
	if (x->rapl_on)
		rm_rapl_close(&x->rapl);
	x->rapl_on = 0;
	free(x->gpu);
	x->gpu = NULL;
	x->ngpu = 0;
}

/* package_watts and gpus, with the seed's gpu_json keys. */
static void json_extra(struct rm_buf *b, const struct rm_usage_extra *x)
{
	rm_buf_adds(b, ",\"package_watts\":");
	if (x && x->watts >= 0)
		rm_buf_json_num(b, x->watts, 2);
	else
		rm_buf_adds(b, "null");
	rm_buf_adds(b, ",\"gpus\":[");
	for (int i = 0; x && i < x->ngpu; i++) {
		const struct rm_usage_gpu *c = &x->gpu[i];
		rm_buf_adds(b, i ? ",{\"card\":" : "{\"card\":");
		rm_buf_json(b, c->card);
		rm_buf_adds(b, ",\"driver\":");
		rm_buf_json(b, c->driver);
		rm_buf_adds(b, ",\"busy_percent\":");
		if (c->r.has & RM_GPU_BUSY)
			rm_buf_json_num(b, c->r.busy_pct, 0);
		else
			rm_buf_adds(b, "null");
		json_u64(b, "vram_used", c->r.vram_used, (c->r.has & RM_GPU_VRAM_USED) != 0);
		json_u64(b, "vram_total", c->r.vram_total, (c->r.has & RM_GPU_VRAM_TOTAL) != 0);
		json_u64(b, "gtt_used", c->r.gtt_used, (c->r.has & RM_GPU_GTT_USED) != 0);
		json_u64(b, "gtt_total", c->r.gtt_total, (c->r.has & RM_GPU_GTT_TOTAL) != 0);
		rm_buf_addc(b, '}');
	}
	rm_buf_addc(b, ']');
}

void rm_usage_json(struct rm_buf *b, const char *source, const struct rm_usage_proc *p,
		   size_t n, double window, int with_cmd, int cores_pid,
		   const struct rm_usage_extra *x)
{
	struct rm_meminfo mi;
	uint64_t rss = 0;
	double cpu = 0;
	int have_mi = rm_meminfo_read(&mi) == 0;

	for (size_t i = 0; i < n; i++) {
		rss += p[i].rss_kib * 1024;
		if (p[i].cpu_pct >= 0)
			cpu += p[i].cpu_pct;
	}
	rm_buf_adds(b, "{\"source\":");
	rm_buf_json(b, source);
	json_u64(b, "cores", (uint64_t)rm_cg_cores(cores_pid), 1);
	json_u64(b, "mem_total_bytes", mi.total_kib * 1024, have_mi);
	json_u64(b, "mem_available_bytes", mi.avail_kib * 1024, have_mi && (mi.has & RM_MI_AVAIL));
	json_u64(b, "swap_total_bytes", mi.swap_total_kib * 1024, have_mi && (mi.has & RM_MI_SWAPTOTAL));
	json_u64(b, "swap_free_bytes", mi.swap_free_kib * 1024, have_mi && (mi.has & RM_MI_SWAPFREE));
	json_u64(b, "rss_bytes", rss, 1);
	rm_buf_adds(b, ",\"cpu_percent\":");
	rm_buf_json_num(b, cpu, 1);
	json_u64(b, "interval_ms", (uint64_t)(window * 1000.0 + 0.5), 1);
	rm_buf_adds(b, ",\"processes\":[");
	for (size_t i = 0; i < n; i++) {
		char txt[RM_TEXT_MAX + 1];
		rm_sanitize(p[i].comm, strlen(p[i].comm), txt, sizeof(txt));
		rm_buf_adds(b, i ? ",{\"name\":" : "{\"name\":");
		rm_buf_json(b, txt);
		json_u64(b, "pid", (uint64_t)p[i].pid, 1);
		json_u64(b, "rss_bytes", p[i].rss_kib * 1024, 1);
		rm_buf_adds(b, ",\"cpu_percent\":");
		if (p[i].cpu_pct >= 0)
			rm_buf_num(b, p[i].cpu_pct, 1);
		else
			rm_buf_adds(b, "null");
		if (with_cmd) {
			rm_buf_adds(b, ",\"cmd\":");
			if (p[i].cmd)
				rm_buf_json(b, p[i].cmd);
			else
				rm_buf_adds(b, "null");
		}
		rm_buf_addc(b, '}');
	}
	rm_buf_addc(b, ']');
	json_extra(b, x);
	rm_buf_adds(b, "}\n");
}

void rm_usage_free(struct rm_usage *u)
{
	if (u->scanning)
		rm_procscan_close(&u->ps);
	u->scanning = 0;
	free(u->p);
	u->p = NULL;
	rm_ptree_free(&u->t);
	rm_usage_extra_free(&u->x);
	free(u->v);
	u->v = NULL;
	u->n = u->cap = 0;
}

int rm_usage_hidepid_parse(const char *mountinfo, size_t len, const char *point)
{
	char *text = malloc(len + 1), *line, *save = NULL;
	int mode = -1;

	if (!text)
		return -1;
	memcpy(text, mountinfo, len);
	text[len] = '\0';
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct rm_cg_mount m;
		const char *h;
		if (rm_cg_parse_mountinfo_line(line, &m) < 0 || strcmp(m.fstype, "proc") != 0 ||
		    strcmp(m.point, point) != 0)
			continue;
		mode = 0;
		for (h = m.super; (h = strstr(h, "hidepid=")) != NULL; h += 8) {
			const char *v = h + 8;
			size_t vl = strcspn(v, ",");
			if (h != m.super && h[-1] != ',')
				continue;
			if ((vl == 1 && *v == '0') || (vl == 3 && !strncmp(v, "off", 3)))
				mode = 0;
			else if ((vl == 1 && *v == '1') || (vl == 8 && !strncmp(v, "noaccess", 8)))
				mode = 1;
			else if ((vl == 1 && *v == '2') || (vl == 9 && !strncmp(v, "invisible", 9)))
				mode = 2;
			else if ((vl == 1 && *v == '4') || (vl == 10 && !strncmp(v, "ptraceable", 10)))
				mode = 4;
			else
				mode = 2;   /* a word not known here: hide */
		}
	}
	free(text);
	return mode;
}

int rm_usage_hidepid(void)
{
	char point[PATH_MAX], *mi;
	size_t len = 0;
	int mode;

	if (!realpath(rm_proc_root(), point))
		return -1;
	mi = rm_read_all_at(rm_proc_dirfd(), "self/mountinfo", &len);
	if (!mi)
		return -1;
	mode = rm_usage_hidepid_parse(mi, len, point);
	free(mi);
	return mode;
}

/* Is /proc/PID owned by uid (what hidepid lets that uid see)? */
static int visible_to(int pid, long uid)
{
	char name[16];
	struct stat st;

	if (uid == RM_USAGE_ANY_UID)
		return 1;
	if (uid < 0)
		return 0;
	snprintf(name, sizeof(name), "%d", pid);
	return fstatat(rm_proc_dirfd(), name, &st, 0) == 0 && (long)st.st_uid == uid;
}

int rm_usage_start(struct rm_usage *u, const int *pids, int npids, int with_cmd, long uid)
{
	memset(u, 0, sizeof(*u));
	rm_ptree_init(&u->t);
	u->with_cmd = with_cmd;
	u->uid = uid;
	u->first_pid = npids > 0 ? pids[0] : 0;
	if (npids > (int)(sizeof(u->pids) / sizeof(u->pids[0])))
		npids = (int)(sizeof(u->pids) / sizeof(u->pids[0]));
	memcpy(u->pids, pids, (size_t)(npids > 0 ? npids : 0) * sizeof(int));
	u->npids = npids;
	rm_usage_extra_begin(&u->x);
	u->t0 = rm_now_mono();
	if (uid == RM_USAGE_NO_UID)
		return 0;          /* nothing to read: the scan is over */
	if (rm_procscan_open(&u->ps) < 0)
		return -1;
	u->scanning = 1;
	return 0;
}

/* Past until (monotonic; 0: no bound)?  Asked every 16 processes. */
static int past(double until, unsigned *count)
{
	return until > 0 && (++*count & 15) == 0 && rm_now_mono() >= until;
}

int rm_usage_scan(struct rm_usage *u, double until)
{
	uint64_t page_kib = rm_page_kib();
	unsigned count = 0;
	int pid;

	if (!u->scanning)
		return 1;
	for (;;) {
		if (past(until, &count))
			return 0;  /* stopped by the clock: more to read */
		if ((pid = rm_procscan_next(&u->ps)) <= 0)
			break;
		struct rm_pstat st;
		struct rm_pnode *nd;
		if (rm_pstat_read(pid, &st) < 0 || (st.flags & RM_PF_KTHREAD) ||
		    st.state == 'Z' || st.state == 'X')
			continue;
		if (u->n == u->cap) {
			size_t cap = u->cap ? u->cap * 2 : 256;
			struct rm_pnode **v = realloc(u->v, cap * sizeof(*v));
			if (!v)
				goto nomem;
			u->v = v;
			u->cap = cap;
		}
		nd = rm_ptree_add(&u->t, pid, st.starttime);
		if (!nd)
			goto nomem;
		nd->ppid = st.ppid;
		nd->rss_kib = st.rss_pages * page_kib;
		nd->ticks = st.utime + st.stime;
		nd->first_at = rm_now_mono();
		memcpy(nd->comm, st.comm, sizeof(nd->comm));
		u->v[u->n++] = nd;
	}
	rm_procscan_close(&u->ps);
	u->scanning = 0;
	for (int i = 0; i < u->npids; i++) {
		struct rm_pnode *nd = rm_ptree_find(&u->t, u->pids[i]);
		if (nd)
			nd->member = 1;
	}
	rm_ptree_adopt(&u->t, u->v, u->n, 0, 0);
	u->members = 0;
	for (size_t i = 0; i < u->n; i++) {
		if (u->v[i]->member && !visible_to(u->v[i]->pid, u->uid))
			u->v[i]->member = 0;
		u->members += u->v[i]->member;
	}
	return 1;
nomem:
	rm_procscan_close(&u->ps);
	u->scanning = 0;
	errno = ENOMEM;
	return -1;
}

int rm_usage_begin(struct rm_usage *u, const int *pids, int npids, int with_cmd, long uid)
{
	if (rm_usage_start(u, pids, npids, with_cmd, uid) < 0 || rm_usage_scan(u, 0) < 0)
		return -1;
	return (int)u->members;
}

/* statm's resident is summed over the kernel's per-CPU counters, as
 * VmRSS is; stat's field 24 leaves their batches out (150 KiB low for a
 * sleep). */
uint64_t rm_usage_resident_kib(int pid, uint64_t stat_kib)
{
	uint64_t kib;

	return rm_pstatm_resident_kib(pid, &kib) == 0 ? kib : stat_kib;
}

int rm_usage_read(struct rm_usage *u, double until)
{
	uint64_t page_kib = rm_page_kib();
	unsigned count = 0;

	if (!u->p) {
		u->p = malloc((u->n ? u->n : 1) * sizeof(*u->p));
		u->next = u->k = 0;
		if (!u->p) {
			u->next = u->n;  /* no room: an answer with no process */
			return 1;
		}
	}
	for (; u->next < u->n; u->next++) {
		struct rm_pnode *nd = u->v[u->next];
		struct rm_usage_proc *q = &u->p[u->k];
		struct rm_pstat st;
		double dt;
		if (past(until, &count))
			return 0;
		if (!nd->member)
			continue;
		if (rm_pstat_read(nd->pid, &st) < 0 || st.starttime != nd->start ||
		    st.state == 'Z' || st.state == 'X' || !visible_to(nd->pid, u->uid))
			continue;
		dt = rm_now_mono() - nd->first_at;
		q->pid = nd->pid;
		q->comm = nd->comm;
		q->rss_kib = rm_usage_resident_kib(nd->pid, st.rss_pages * page_kib);
		q->cpu_pct = dt > 0 && st.utime + st.stime >= nd->ticks ?
			100.0 * (double)(st.utime + st.stime - nd->ticks) / (double)rm_clk_tck() / dt : -1;
		q->cmd = NULL;
		if (u->with_cmd) {
			char raw[4096], out[RM_TEXT_MAX + 1];
			ssize_t len = rm_pfile_read(NULL, nd->pid, "cmdline", raw, sizeof(raw), 0);
			if (len > 0)
				len = (ssize_t)rm_cmdline_join(raw, (size_t)len);
			if (len > 0 && rm_sanitize(raw, (size_t)len, out, sizeof(out)) > 0)
				nd->cmd = strdup(out);
			q->cmd = nd->cmd;
		}
		u->k++;
	}
	return 1;
}

void rm_usage_end(struct rm_usage *u, const char *source, double window, struct rm_buf *b)
{
	rm_usage_read(u, 0);
	rm_usage_extra_end(&u->x, u->gpus);
	rm_usage_json(b, source, u->p, u->p ? u->k : 0, window, u->with_cmd, u->first_pid, &u->x);
	rm_usage_free(u);
}
