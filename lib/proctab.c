/*
 * proctab: see proctab.h.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "procfs.h"
#include "proctab.h"

int rm_pstat_parse(const char *buf, struct rm_pstat *st)
{
	const char *open = strchr(buf, '(');
	const char *close = strrchr(buf, ')');
	const char *p;
	char *end;
	uint64_t f[52];
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
	/* Fields (4) onwards are numbers; (4) is f[0]. */
	for (n = 0; n < 21; n++) {
		while (*p == ' ')
			p++;
		if (*p == '-') {
			/* Only a few fields may be negative; keep them as 0. */
			strtoll(p, &end, 10);
			f[n] = 0;
		} else {
			f[n] = strtoull(p, &end, 10);
		}
		if (end == p)
			break;
		p = end;
	}
	if (n < 21)
		return -1;
	st->ppid = (int)f[0];        /* (4) */
	st->pgrp = (int)f[1];        /* (5) */
	st->flags = (unsigned)f[5];  /* (9) */
	st->utime = f[10];           /* (14) */
	st->stime = f[11];           /* (15) */
	st->threads = (long)f[16];   /* (20) */
	st->starttime = f[18];       /* (22) */
	st->vsize = f[19];           /* (23) */
	st->rss_pages = f[20];       /* (24) */
	return 0;
}

int rm_pstatus_parse(const char *buf, struct rm_pstatus *ps)
{
	const char *p = buf;

	memset(ps, 0, sizeof(*ps));
	while (p && *p) {
		if (strncmp(p, "VmRSS:", 6) == 0)
			ps->has_rss = rm_parse_label_u64(p + 6, &ps->rss_kib) == 0;
		else if (strncmp(p, "VmHWM:", 6) == 0)
			ps->has_hwm = rm_parse_label_u64(p + 6, &ps->hwm_kib) == 0;
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

static ssize_t pid_read(int pid, const char *file, char *buf, size_t size)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "%d/%s", pid, file);
	n = rm_read_at(rm_proc_dirfd(), path, buf, size);
	if (n <= 0) {
		/* Gone, or a kernel thread's empty file: both read as gone. */
		if (n == 0 || errno == ENOENT || errno == ESRCH)
			errno = ESRCH;
		return -1;
	}
	return n;
}

int rm_pstat_read(int pid, struct rm_pstat *st)
{
	char buf[1024];

	if (pid_read(pid, "stat", buf, sizeof(buf)) < 0)
		return -1;
	if (rm_pstat_parse(buf, st) < 0) {
		errno = ESRCH;
		return -1;
	}
	return 0;
}

int rm_pstatus_read(int pid, struct rm_pstatus *ps)
{
	char buf[4096];

	memset(ps, 0, sizeof(*ps));
	if (pid_read(pid, "status", buf, sizeof(buf)) < 0)
		return -1;
	rm_pstatus_parse(buf, ps);
	return 0;
}

ssize_t rm_cmdline_read(int pid, char *buf, size_t size)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "%d/cmdline", pid);
	n = rm_read_at(rm_proc_dirfd(), path, buf, size);
	if (n < 0) {
		if (errno == ENOENT)
			errno = ESRCH;
		return -1;
	}
	return (ssize_t)rm_cmdline_join(buf, (size_t)n);
}

int rm_smaps_pss_read(int pid, uint64_t *pss_kib)
{
	char buf[2048];

	if (pid_read(pid, "smaps_rollup", buf, sizeof(buf)) < 0)
		return -1;
	return rm_smaps_pss_parse(buf, pss_kib);
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

int rm_boot_time(uint64_t *btime)
{
	/* Whole: on a large host the intr line before btime is long. */
	char *buf = rm_read_all_at(rm_proc_dirfd(), "stat", NULL);
	const char *p = buf ? strstr(buf, "\nbtime ") : NULL;
	int rc = p && sscanf(p + 7, "%" SCNu64, btime) == 1 ? 0 : -1;

	free(buf);
	return rc;
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
	int dfd = rm_proc_dirfd();

	if (rm_procscan_open(&ps) < 0)
		return -1;
	while ((pid = rm_procscan_next(&ps)) > 0) {
		char path[48], comm[64];
		ssize_t len;
		struct rm_pstat st;
		snprintf(path, sizeof(path), "%d/comm", pid);
		len = rm_read_at(dfd, path, comm, sizeof(comm));
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
