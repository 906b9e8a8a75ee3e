/*
 * proctab: see proctab.h.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "procfs.h"
#include "proctab.h"

/*
 * One number of a stat line at *pp, after blanks: digits (saturating at
 * UINT64_MAX, as strtoull does), or a negative one, read as 0 (only
 * tpgid and the priorities may be).  With out NULL the number is only
 * passed over.  Returns 0 and moves *pp past it, or -1 when no number
 * starts there.
 */
static int stat_num(const char **pp, uint64_t *out)
{
	const char *p = *pp;
	uint64_t v = 0;
	int neg = 0;

	while (*p == ' ')
		p++;
	if (*p == '-') {
		neg = 1;
		p++;
	}
	if (*p < '0' || *p > '9')
		return -1;
	if (!out) {
		while (*p >= '0' && *p <= '9')
			p++;
		*pp = p;
		return 0;
	}
	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned d = (unsigned)(*p - '0');
		/* Below UINT64_MAX / 10, v * 10 + 9 cannot overflow. */
		if (v < UINT64_MAX / 10 || (v == UINT64_MAX / 10 && d <= UINT64_MAX % 10))
			v = v * 10 + d;
		else
			v = UINT64_MAX;
	}
	*pp = p;
	*out = neg ? 0 : v;
	return 0;
}

int rm_pstat_parse(const char *buf, struct rm_pstat *st)
{
	const char *open = strchr(buf, '(');
	const char *close = strrchr(buf, ')');
	const char *p;
	char *end;
	/* The fields kept, by proc(5) number. */
	static const unsigned char kept_field[53] = {
		[4] = 1, [5] = 1, [9] = 1, [10] = 1, [11] = 1, [14] = 1, [15] = 1,
		[20] = 1, [22] = 1, [23] = 1, [24] = 1, [52] = 1,
	};
	uint64_t f[53];
	int n;
	size_t clen;

	memset(st, 0, sizeof(*st));
	if (!open || !close || close < open)
		return -1;
	st->pid = (int)strtol(buf, &end, 10);
	if (end == buf)
		return -1;
	clen = (size_t)(close - open - 1);
	if (clen >= sizeof(st->comm))
		clen = sizeof(st->comm) - 1;
	memcpy(st->comm, open + 1, clen);
	st->comm[clen] = '\0';

	p = close + 1;
	while (*p == ' ')
		p++;
	if (!*p || *p == '\n')
		return -1;
	st->state = *p++;
	/* Fields (4) to (52) are numbers, f[N] is field (N); only the ones
	 * kept are converted. */
	for (n = 4; n <= 52; n++)
		if (stat_num(&p, kept_field[n] ? &f[n] : NULL) < 0)
			break;
	if (n <= 24)
		return -1;
	st->ppid = (int)f[4];
	st->pgrp = (int)f[5];
	st->flags = (unsigned)f[9];
	st->minflt = f[10];
	st->cminflt = f[11];
	st->utime = f[14];
	st->stime = f[15];
	st->threads = (long)f[20];
	st->starttime = f[22];
	st->vsize = f[23];
	st->rss_pages = f[24];
	if (n > 52) {
		st->exit_code = f[52];
		st->has_exit_code = 1;
	}
	return 0;
}

/* The first number of a "Uid:" line (real, effective, saved, fs). */
static int uid_field(const char *p, uint64_t *v)
{
	char *end;

	while (*p == ' ' || *p == '\t')
		p++;
	if (*p < '0' || *p > '9')
		return -1;
	errno = 0;
	*v = strtoull(p, &end, 10);
	return errno || (*end != '\t' && *end != ' ' && *end != '\n' && *end) ? -1 : 0;
}

int rm_pstatm_resident_kib(int pid, uint64_t *kib)
{
	char buf[128], *p, *end;
	unsigned long long pages;

	if (rm_pfile_read(NULL, pid, "statm", buf, sizeof(buf), 0) <= 0)
		return -1;
	p = buf + strspn(buf, "0123456789");
	if (p == buf || *p != ' ')
		return -1;
	errno = 0;
	pages = strtoull(p + 1, &end, 10);
	if (errno || end == p + 1 || (*end != ' ' && *end != '\n' && *end))
		return -1;
	*kib = (uint64_t)pages * rm_page_kib();
	return 0;
}

int rm_pstatus_parse(const char *buf, struct rm_pstatus *ps)
{
	const char *p = buf;
	uint64_t v;

	memset(ps, 0, sizeof(*ps));
	while (p && *p) {
		if (strncmp(p, "VmRSS:", 6) == 0)
			ps->has_rss = rm_parse_label_u64(p + 6, &ps->rss_kib) == 0;
		else if (strncmp(p, "VmHWM:", 6) == 0)
			ps->has_hwm = rm_parse_label_u64(p + 6, &ps->hwm_kib) == 0;
		else if (strncmp(p, "RssFile:", 8) == 0)
			ps->rss_file_kib = rm_parse_label_u64(p + 8, &v) == 0 ? v : 0;
		else if (strncmp(p, "RssShmem:", 9) == 0)
			ps->rss_shmem_kib = rm_parse_label_u64(p + 9, &v) == 0 ? v : 0;
		else if (strncmp(p, "Uid:", 4) == 0 && uid_field(p + 4, &v) == 0 && v <= UINT32_MAX) {
			ps->uid = (uint32_t)v;
			ps->has_uid = 1;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return (ps->has_rss || ps->has_hwm) ? 0 : -1;
}

size_t rm_cmdline_join(char *buf, size_t len)
{
	while (len > 0 && buf[len - 1] == '\0')
		len--;
	for (size_t i = 0; i < len; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	buf[len] = '\0';
	return len;
}

int rm_smaps_pss_parse(const char *buf, uint64_t *pss_kib)
{
	const char *p = buf;

	while (p && *p) {
		if (strncmp(p, "Pss:", 4) == 0)
			return rm_parse_label_u64(p + 4, pss_kib);
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -1;
}

static size_t kept, kept_max = 512;

void rm_pfile_budget_init(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
		getrlimit(RLIMIT_NOFILE, &rl);
	}
	/* Leave room for everything else the command opens. */
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > 1000000)
		kept_max = 1000000;
	else
		kept_max = rl.rlim_cur > 128 ? (size_t)rl.rlim_cur - 128 : 0;
}

void rm_pfile_close(int *fd)
{
	if (*fd >= 0) {
		close(*fd);
		*fd = -1;
		kept--;
	}
}

int rm_pdir_open(int pid)
{
	char path[32];
	int f;

	if (kept >= kept_max)
		return -1;
	snprintf(path, sizeof(path), "%d", pid);
	do
		f = openat(rm_proc_dirfd(), path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	while (f < 0 && errno == EINTR);
	if (f < 0)
		return -1;
	kept++;
	return f;
}

ssize_t rm_pfile_read(int *fd, int pid, const char *name, char *buf, size_t size, int keep)
{
	return rm_pfile_read_in(-1, fd, pid, name, buf, size, keep);
}

ssize_t rm_pfile_read_in(int dir_fd, int *fd, int pid, const char *name, char *buf, size_t size,
			 int keep)
{
	char path[64];
	ssize_t n;
	int f;

	buf[0] = '\0';
	if (fd && *fd >= 0) {
		do
			n = pread(*fd, buf, size - 1, 0);
		while (n < 0 && errno == EINTR);
		if (n < 0) {
			rm_pfile_close(fd);
			errno = ESRCH;
			return -1;
		}
		buf[n] = '\0';
		return n;
	}
	if (dir_fd >= 0) {
		do
			f = openat(dir_fd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		while (f < 0 && errno == EINTR);
	} else {
		snprintf(path, sizeof(path), "%d/%s", pid, name);
		do
			f = openat(rm_proc_dirfd(), path,
				   O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		while (f < 0 && errno == EINTR);
	}
	if (f < 0) {
		errno = ESRCH;
		return -1;
	}
	do
		n = read(f, buf, size - 1);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		close(f);
		errno = ESRCH;
		return -1;
	}
	buf[n] = '\0';
	if (fd && keep && kept < kept_max) {
		*fd = f;
		kept++;
	} else {
		close(f);
	}
	return n;
}

int rm_pstat_ended(const struct rm_pstat *st)
{
	return st->state == 'X' || (st->state == 'Z' && st->threads <= 1);
}

int rm_pstat_read(int pid, struct rm_pstat *st)
{
	char buf[1024];

	/* Gone, or a kernel thread's empty file: both read as gone. */
	if (rm_pfile_read(NULL, pid, "stat", buf, sizeof(buf), 0) <= 0 ||
	    rm_pstat_parse(buf, st) < 0) {
		errno = ESRCH;
		return -1;
	}
	return 0;
}

uint64_t rm_page_kib(void)
{
	static uint64_t kib;

	if (!kib) {
		long ps = sysconf(_SC_PAGESIZE);
		kib = ps > 0 ? (uint64_t)ps / 1024 : 4;
	}
	return kib;
}

long rm_clk_tck(void)
{
	static long hz;

	if (!hz) {
		hz = sysconf(_SC_CLK_TCK);
		if (hz <= 0)
			hz = 100;
	}
	return hz;
}

int rm_procscan_open(struct rm_procscan *ps)
{
	int fd = rm_proc_dirfd();
	int dup_fd;

	ps->dir = NULL;
	if (fd < 0)
		return -1;
	dup_fd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dup_fd < 0)
		return -1;
	ps->dir = fdopendir(dup_fd);
	if (!ps->dir) {
		close(dup_fd);
		return -1;
	}
	return 0;
}

int rm_procscan_next(struct rm_procscan *ps)
{
	struct dirent *de;

	if (!ps->dir)
		return 0;
	while ((de = readdir(ps->dir)) != NULL) {
		const char *s = de->d_name;
		long v = 0;
		if (*s < '1' || *s > '9')
			continue;
		for (; *s >= '0' && *s <= '9' && v < 100000000; s++)
			v = v * 10 + (*s - '0');
		if (*s == '\0')
			return (int)v;
	}
	return 0;
}

void rm_procscan_close(struct rm_procscan *ps)
{
	if (ps->dir)
		closedir(ps->dir);
	ps->dir = NULL;
}

int rm_comm_is(const char *comm, size_t len, const char *const *names, int n)
{
	for (int i = 0; i < n; i++) {
		size_t nl = strlen(names[i]);
		if (nl > 15)
			nl = 15;
		if (len == nl && memcmp(comm, names[i], nl) == 0)
			return 1;
	}
	return 0;
}

long rm_proc_scan_names(const char *const *names, int n, void (*cb)(void *arg, int pid),
			void *arg)
{
	struct rm_procscan ps;
	int pid;
	long count = 0;

	if (rm_procscan_open(&ps) < 0)
		return -1;
	while ((pid = rm_procscan_next(&ps)) > 0) {
		char comm[64];
		ssize_t len;
		struct rm_pstat st;
		len = rm_pfile_read(NULL, pid, "comm", comm, sizeof(comm), 0);
		if (len <= 0)
			continue;
		if (comm[len - 1] == '\n')
			comm[--len] = '\0';
		if (rm_comm_is(comm, (size_t)len, names, n) &&
		    rm_pstat_read(pid, &st) == 0 && st.state != 'Z' && st.state != 'X') {
			count++;
			if (cb)
				cb(arg, pid);
		}
	}
	rm_procscan_close(&ps);
	return count;
}

long rm_proc_count_names(const char *const *names, int n)
{
	return rm_proc_scan_names(names, n, NULL, NULL);
}
