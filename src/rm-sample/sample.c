/*
 * rm-sample's readings: one row of every column into v[] (sample), the
 * columns printed (open_extras, from lib/schema.h's table), RAPL, the GPUs, the cgroup, the stage
 * and context, the compilers count.
 */
#include "rm-sample.h"

/* The columns printed: the defaults, then those --energy and --gpu add. */
struct rm_col ocols[C_NCOLS];
int osel[C_NCOLS], nout;

/* RAPL and the GPUs, opened only when asked; closed at exit (NVML's
 * shutdown is owed however the process ends). */
static struct rm_rapl rapl = { .dirfd = -1 };
struct rm_gpus gpus = { .drm_fd = -1 };
static struct rm_gpu_reading gpu_r[RM_GPU_MAX];
static double pkg_prev;         /* monotonic time of the last RAPL reading */
static struct rm_cg cgrp;       /* --cgroup-path */
static int cg_cores;

/*
 * Under a monitor (RM_T0, its run's start as /proc/uptime seconds), the
 * run's start on the clock file times are stamped with (the coarse
 * realtime clock): a log last written before it, and what a log held
 * then, is an earlier build's, never this run's context.  0: no RM_T0.
 */
static int run_start(struct timespec *since)
{
	struct timespec m, r;
	double back;

	clock_gettime(CLOCK_MONOTONIC, &m);
	back = rm_t0_shift(&m);   /* how long ago the run's origin was; 0: none */
	if (!(back > 0))
		return 0;
	clock_gettime(CLOCK_REALTIME_COARSE, &r);
	/* uptime's hundredths round down: since is at most 10 ms early. */
	back += 0.01;
	since->tv_sec = r.tv_sec - (time_t)back;
	since->tv_nsec = r.tv_nsec - (long)((back - (double)(time_t)back) * 1e9);
	if (since->tv_nsec < 0) {
		since->tv_nsec += 1000000000L;
		since->tv_sec--;
	}
	return 1;
}

/* Stage and context: what the build is doing now. */
static void read_stage(const struct opts *o, struct state *s)
{
	char stage[RM_TEXT_MAX + 1] = "", skipped[256];
	static int told_skip, told_link;
	static struct rm_logwatch lw = { .ifd = -1 };
	int have_log = 0, file_rc;

	if (o->log_dir) {
		if (!lw.started) {
			struct timespec since;
			if (run_start(&since))
				rm_logwatch_since(&lw, since);
		}
		have_log = rm_logwatch_newest(&lw, o->log_dir, s->log_path, sizeof(s->log_path),
					      stage, sizeof(stage), skipped, sizeof(skipped),
					      &s->log_owner) == 0;
		if (skipped[0] && !told_skip++) {
			char txt[RM_TEXT_MAX + 1];
			rm_sanitize(skipped, strlen(skipped), txt, sizeof(txt));
			warnx("--stage-log-dir: skipping '%s': owned by neither this "
			      "user nor the directory's owner", txt);
		}
	}
	file_rc = o->stage_file ? rm_first_line(o->stage_file, s->stage, sizeof(s->stage)) : 0;
	if (file_rc < 0 && errno == ELOOP && !told_link++)
		warnx("--stage-file '%s': %s", o->stage_file, RM_OUT_SYMLINK_WHY);
	if (file_rc <= 0) {
		/* No stage file, or it is missing or empty: the newest log's
		 * name, counted for the summary's note (--status). */
		s->stage[0] = '\0';
		if (have_log) {
			rm_sanitize(stage, strlen(stage), s->stage, sizeof(s->stage));
			rm_trim_space(s->stage);
			if (o->stage_file && s->stage[0])
				stage_fallback++;
		}
	}
	if (have_log) {
		/* No match in the tail keeps the previous context. */
		char ctx[RM_TEXT_MAX + 1];
		if (rm_logwatch_last_line(&lw, s->log_path, s->log_owner,
					  o->has_re ? &o->ctx_re : NULL, ctx, sizeof(ctx)) == 1)
			memcpy(s->context, ctx, sizeof(ctx));
	}
}

static void close_extras(void)
{
	rm_rapl_close(&rapl);
	rm_gpu_close(&gpus);
}

/* --cgroup-path: the cgroup found once; its columns stay empty if none. */
static void open_cgroup(const struct opts *o)
{
	char why[256];
	int aut = strcmp(o->cgroup_path, "auto") == 0;

	if (rm_cg_open(&cgrp, aut ? o->watch_pid : 0, aut ? NULL : o->cgroup_path, why, sizeof(why)) < 0)
		warnx("cg_* columns stay empty: %s", why);
	cg_cores = rm_cg_cores(o->watch_pid);
}

static void sample_cgroup(struct rm_val *v)
{
	struct rm_cg_reading r;

	v[C_CORES] = rm_num(cg_cores, 0);
	rm_cg_read(&cgrp, &r);
	if (r.has & RM_CG_USED)
		v[C_CG_USED] = rm_num((double)r.used / 1048576.0, 0);
	if (r.has & RM_CG_LIMIT)
		v[C_CG_LIMIT] = rm_num((double)r.limit / 1048576.0, 0);
	if (r.has & RM_CG_AVAIL)
		v[C_CG_AVAIL] = rm_num((double)r.avail / 1048576.0, 0);
	if (r.has & RM_CG_SWAP)
		v[C_CG_SWAP] = rm_num((double)r.swap / 1048576.0, 0);
	if (r.has & RM_CG_OOM)
		v[C_CG_OOM] = rm_num((double)r.oom_kills, 0);
	if (r.has & RM_CG_PSI_FULL)
		v[C_CG_PSI_FULL] = rm_num(r.psi_full10, 2);
}

/* Pick the printed columns, open RAPL and the GPUs if asked, and read the
 * energy baselines with the CPU's, so the first row has watts too. */
void open_extras(const struct opts *o)
{
	struct rm_rapl_step st;

	for (int i = 0; i < C_NCOLS; i++) {
		if ((i == C_PKG_W && !o->energy) || (i > C_PKG_W && i <= C_GPU_VRAM_TOTAL && !o->gpu) ||
		    (i >= C_CG_USED && !o->cgroup_path) || (o->seed_cols && i > C_CONTEXT))
			continue;
		ocols[nout] = rm_sc_cols[i];
		osel[nout++] = i;
	}
	atexit(close_extras);
	if (o->energy && rm_rapl_open(&rapl) > 0) {
		if (rm_rapl_sample(&rapl, &st) == 0)
			pkg_prev = st.mono;
		else
			warnx("pkg_w stays empty: energy_uj is root-only since "
			      "Linux 5.10 (see rm-energy(1))");
	}
	if (o->gpu)
		rm_gpu_open(&gpus);
	if (o->cgroup_path)
		open_cgroup(o);
}

/* Package watts since the previous reading; empty if any package failed. */
static void sample_energy(struct rm_val *v)
{
	struct rm_rapl_step st;

	if (rapl.n == 0 || rm_rapl_sample(&rapl, &st) < 0)
		return;
	if (st.pkg_ok && pkg_prev > 0 && st.mono > pkg_prev)
		v[C_PKG_W] = rm_num((double)st.pkg_uj / 1e6 / (st.mono - pkg_prev), 2);
	pkg_prev = st.mono;
}

static void sample_gpu(struct rm_val *v)
{
	struct rm_gpu_agg a;

	for (int i = 0; i < gpus.n; i++)
		rm_gpu_read(&gpus, i, RM_GPU_BUSY | RM_GPU_VRAM_USED | RM_GPU_VRAM_TOTAL, &gpu_r[i]);
	rm_gpu_aggregate(gpu_r, gpus.n, &a);
	if (a.has & RM_GPU_BUSY)
		v[C_GPU_BUSY] = rm_num(a.busy_max, 0);
	if (a.has & RM_GPU_VRAM_USED) {
		v[C_GPU_VRAM_USED] = rm_num((double)a.vram_used / 1048576.0, 0);
		v[C_GPU_VRAM_TOTAL] = rm_num((double)a.vram_total / 1048576.0, 0);
	}
}

/* floor(x) without libm: rm-sample maps no libm for one call (328 KiB of
 * its peak RSS).  Exact for |x| < 2^63; beyond that x is whole already. */
static double whole_down(double x)
{
	double t;

	if (!(x > -9.2e18 && x < 9.2e18))
		return x;
	t = (double)(long long)x;
	return t > x ? t - 1 : t;
}

/*
 * --seed-columns: the seed's formats, as its bash printf wrote them:
 * `date +%s` and `date +%FT%TZ` of the same second, whole numbers cut by
 * integer arithmetic (df -BG rounds the free GiB up), load1 as
 * /proc/loadavg has it.
 */
static void seed_values(struct state *s, struct rm_val *v)
{
	static const int cut[] = { C_ELAPSED, C_CPU, C_MEMUSED, C_MEMAVAIL, C_MEMPCT, C_SWAP,
				   C_DISKPCT, C_COMPILERS };
	time_t sec = (time_t)whole_down(v[C_EPOCH].num);
	struct tm tm;

	v[C_EPOCH] = rm_num((double)sec, 0);
	if (gmtime_r(&sec, &tm) && strftime(s->iso, sizeof(s->iso), "%Y-%m-%dT%H:%M:%SZ", &tm))
		v[C_ISO] = rm_str(s->iso);
	for (size_t i = 0; i < sizeof(cut) / sizeof(cut[0]); i++)
		if (v[cut[i]].type == RM_V_NUM)
			v[cut[i]] = rm_num(whole_down(v[cut[i]].num), 0);
	if (v[C_DISKAVAIL].type == RM_V_NUM)
		v[C_DISKAVAIL] = rm_num(ceil(v[C_DISKAVAIL].num), 0);
}

/*
 * The compilers column, host-wide: kept from the proc connector's events
 * while streaming where the kernel allows it (lib/pcount), else one
 * /proc scan per row.
 */
struct rm_pcount compilers_pc;

long count_compilers(const struct opts *o)
{
	if (!compilers_pc.names)
		rm_pcount_init(&compilers_pc, o->names, o->nnames);
	/* Streaming, or serving (the server's poll drains the events
	 * between scrapes): events.  One row: one scan. */
	return rm_pcount_get(&compilers_pc, o->interval > 0 || o->listen);
}

/* Never lost silently: said once at the end. */
void compilers_done(void)
{
	if (compilers_pc.lost)
		warnx("%llu times the kernel dropped process events (socket buffer "
		      "full); each was followed by a /proc scan",
		      (unsigned long long)compilers_pc.lost);
	if (getenv("RM_PCOUNT_STATS"))
		warnx("compilers from %s: %llu events, %llu comm reads, %llu scans",
		      rm_pcount_events(&compilers_pc) ? "events" : "scans",
		      (unsigned long long)compilers_pc.events,
		      (unsigned long long)compilers_pc.comm_reads,
		      (unsigned long long)compilers_pc.scans);
	rm_pcount_close(&compilers_pc);
}

/*
 * The /proc files read every row, each by one pread(2) from 0 on a
 * descriptor kept from the first row: the same bytes as an open, reads
 * to the end and a close, in one system call where there were four
 * (system calls are most of a row's cost).  A /proc file is never
 * replaced, so the descriptor reads what a fresh open would; a fixture
 * root (RM_PROC_ROOT) is opened afresh every time, as its files may be.
 * With --listen too: the server's clients need the descriptors more (a
 * low RLIMIT_NOFILE leaves it few).  A file that cannot be opened is
 * tried again the next row.
 */
enum { K_LOADAVG, K_STAT, K_MEMINFO, K_VMSTAT, K_PSI_MEM, K_PSI_IO, K_PSI_CPU, K_N };
static const char *const kept_name[K_N] = {
	"loadavg", "stat", "meminfo", "vmstat", "pressure/memory", "pressure/io", "pressure/cpu",
};
static int kept_fd[K_N] = { -1, -1, -1, -1, -1, -1, -1 };
static int kept_live = -1;      /* descriptors kept: set by the first row */

/* kept_name[k] into buf (NUL-terminated, at most size - 1 bytes, as
 * rm_read_at reads it): its length, or -1. */
static ssize_t kept_read(int k, char *buf, size_t size)
{
	ssize_t n;

	if (!kept_live)
		return rm_read_at(rm_proc_dirfd(), kept_name[k], buf, size);
	if (kept_fd[k] < 0 &&
	    (kept_fd[k] = openat(rm_proc_dirfd(), kept_name[k],
				 O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)) < 0) {
		buf[0] = '\0';
		return -1;
	}
	/* A seq_file read from 0 is made afresh; one read returns all that
	 * fits, so a short one is the end. */
	do
		n = pread(kept_fd[k], buf, size - 1, 0);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		close(kept_fd[k]);
		kept_fd[k] = -1;
		buf[0] = '\0';
		return -1;
	}
	buf[n] = '\0';
	return n;
}

/* rm_psi_read of kept file k. */
static int kept_psi(int k, struct rm_psi *p)
{
	char buf[512];

	p->has_some = p->has_full = 0;
	if (kept_read(k, buf, sizeof(buf)) < 0)
		return -1;
	return rm_psi_parse(buf, p);
}

void sample(const struct opts *o, struct state *s, double elapsed,
		   struct rm_val *v)
{
	struct rm_loadavg la;
	struct rm_cputimes ct;
	struct rm_meminfo mi;
	struct rm_disk dk;
	struct rm_psi psi;
	uint64_t oom;
	static char vmstat[16384];
	char buf[8192];
	double epoch = rm_now_epoch();
	double pct;
	long comp;

	if (kept_live < 0)
		kept_live = !o->listen && strcmp(rm_proc_root(), "/proc") == 0;
	for (int i = 0; i < C_NCOLS; i++)
		v[i] = rm_none();
	v[C_EPOCH] = rm_num(epoch, 3);
	rm_fmt_iso(epoch, s->iso, sizeof(s->iso));
	v[C_ISO] = rm_str(s->iso);
	v[C_ELAPSED] = rm_num(elapsed, 3);
	/* At elapsed_s, before the /proc scan, so watts match its times. */
	if (o->energy)
		sample_energy(v);

	la.known = 0;
	if (kept_read(K_LOADAVG, buf, 256) >= 0 && rm_loadavg_parse(buf, &la) == 0)
		v[C_LOAD1] = rm_num(la.load1, 2);
	/* Only the first line is needed; a large machine's file is long. */
	ct.known = 0;
	if (kept_read(K_STAT, buf, 512) >= 0)
		rm_cputimes_parse(buf, &ct);
	pct = rm_cputimes_pct(&s->cpu_prev, &ct);
	if (pct >= 0)
		v[C_CPU] = rm_num(pct, 1);
	s->cpu_prev = ct;

	memset(&mi, 0, sizeof(mi));
	if (kept_read(K_MEMINFO, buf, sizeof(buf)) >= 0 && rm_meminfo_parse(buf, &mi) == 0) {
		if (mi.has & RM_MI_AVAIL) {
			uint64_t used = mi.total_kib > mi.avail_kib ? mi.total_kib - mi.avail_kib : 0;
			v[C_MEMUSED] = rm_num((double)used / 1024.0, 0);
			v[C_MEMAVAIL] = rm_num((double)mi.avail_kib / 1024.0, 0);
			if (mi.total_kib)
				v[C_MEMPCT] = rm_num(100.0 * (double)used / (double)mi.total_kib, 1);
		}
		if ((mi.has & RM_MI_SWAPTOTAL) && (mi.has & RM_MI_SWAPFREE)) {
			uint64_t su = mi.swap_total_kib > mi.swap_free_kib ? mi.swap_total_kib - mi.swap_free_kib : 0;
			v[C_SWAP] = rm_num((double)su / 1024.0, 0);
		}
	}
	if (rm_disk_read(o->disk_path, &dk) == 0) {
		v[C_DISKAVAIL] = rm_num((double)dk.avail_bytes / GIB, 2);
		v[C_DISKPCT] = rm_num(dk.used_pct, 0);
	}
	comp = count_compilers(o);
	if (comp >= 0)
		v[C_COMPILERS] = rm_num((double)comp, 0);

	read_stage(o, s);
	v[C_STAGE] = rm_str(s->stage);
	v[C_CONTEXT] = rm_str(s->context);

	if (s->oom_known && kept_read(K_VMSTAT, vmstat, sizeof(vmstat)) >= 0 &&
	    rm_vmstat_oom_parse(vmstat, &oom) == 0)
		v[C_OOM] = rm_num((double)(oom >= s->oom_base ? oom - s->oom_base : 0), 0);
	if (kept_psi(K_PSI_MEM, &psi) == 0) {
		if (psi.has_some)
			v[C_PSI_MEM_SOME] = rm_num(psi.some10, 2);
		if (psi.has_full)
			v[C_PSI_MEM_FULL] = rm_num(psi.full10, 2);
	}
	if (kept_psi(K_PSI_IO, &psi) == 0 && psi.has_full)
		v[C_PSI_IO_FULL] = rm_num(psi.full10, 2);
	if (kept_psi(K_PSI_CPU, &psi) == 0 && psi.has_some)
		v[C_PSI_CPU_SOME] = rm_num(psi.some10, 2);
	if (o->gpu)
		sample_gpu(v);
	if (o->cgroup_path)
		sample_cgroup(v);
	if (o->seed_cols)
		seed_values(s, v);
}
