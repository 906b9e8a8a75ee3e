/*
 * sysinfo: see sysinfo.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "procfs.h"
#include "sysinfo.h"

int rm_meminfo_parse(const char *buf, struct rm_meminfo *mi)
{
	static const struct {
		const char *label;
		size_t off;
		unsigned bit;
	} keys[] = {
		{ "MemTotal:", offsetof(struct rm_meminfo, total_kib), RM_MI_TOTAL },
		{ "MemAvailable:", offsetof(struct rm_meminfo, avail_kib), RM_MI_AVAIL },
		{ "MemFree:", offsetof(struct rm_meminfo, free_kib), RM_MI_FREE },
		{ "SwapTotal:", offsetof(struct rm_meminfo, swap_total_kib), RM_MI_SWAPTOTAL },
		{ "SwapFree:", offsetof(struct rm_meminfo, swap_free_kib), RM_MI_SWAPFREE },
	};
	const char *line = buf;

	memset(mi, 0, sizeof(*mi));
	while (line && *line) {
		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
			size_t n = strlen(keys[i].label);
			if (strncmp(line, keys[i].label, n) == 0) {
				uint64_t v;
				if (rm_parse_label_u64(line + n, &v) == 0) {
					*(uint64_t *)((char *)mi + keys[i].off) = v;
					mi->has |= keys[i].bit;
				}
				break;
			}
		}
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return (mi->has & RM_MI_TOTAL) ? 0 : -1;
}

int rm_meminfo_read(struct rm_meminfo *mi)
{
	char buf[8192];

	if (rm_read_at(rm_proc_dirfd(), "meminfo", buf, sizeof(buf)) < 0) {
		memset(mi, 0, sizeof(*mi));
		return -1;
	}
	return rm_meminfo_parse(buf, mi);
}

int rm_cputimes_parse(const char *buf, struct rm_cputimes *ct)
{
	uint64_t f[10] = { 0 };
	const char *p;
	int n = 0;

	ct->total = ct->idle = 0;
	ct->known = 0;
	if (strncmp(buf, "cpu ", 4) != 0) {
		p = strstr(buf, "\ncpu ");
		if (!p)
			return -1;
		p++;
	} else {
		p = buf;
	}
	p += 4;
	while (n < 10) {
		char *end;
		while (*p == ' ')
			p++;
		if (*p < '0' || *p > '9')
			break;
		f[n++] = strtoull(p, &end, 10);
		p = end;
	}
	if (n < 4)
		return -1;
	/* user nice system idle iowait irq softirq steal guest guest_nice */
	for (int i = 0; i < n && i < 8; i++)
		ct->total += f[i];
	ct->idle = f[3] + f[4];
	ct->known = 1;
	return 0;
}

int rm_cputimes_read(struct rm_cputimes *ct)
{
	/* Only the first line is needed; a large machine's file is long. */
	char buf[512];

	if (rm_read_at(rm_proc_dirfd(), "stat", buf, sizeof(buf)) < 0) {
		ct->known = 0;
		return -1;
	}
	return rm_cputimes_parse(buf, ct);
}

double rm_cputimes_pct(const struct rm_cputimes *a, const struct rm_cputimes *b)
{
	uint64_t dt, di;

	if (!a->known || !b->known || b->total <= a->total)
		return -1;
	dt = b->total - a->total;
	di = b->idle >= a->idle ? b->idle - a->idle : 0;
	if (di > dt)
		di = dt;
	/* The ratio first: (double)(dt - di) <= (double)dt, so it is at most
	 * 1 and the percent at most 100, however large the counters. */
	return 100.0 * ((double)(dt - di) / (double)dt);
}

int rm_loadavg_parse(const char *buf, struct rm_loadavg *la)
{
	la->known = sscanf(buf, "%lf %lf %lf", &la->load1, &la->load5, &la->load15) == 3;
	return la->known ? 0 : -1;
}

int rm_loadavg_read(struct rm_loadavg *la)
{
	char buf[256];

	if (rm_read_at(rm_proc_dirfd(), "loadavg", buf, sizeof(buf)) < 0) {
		la->known = 0;
		return -1;
	}
	return rm_loadavg_parse(buf, la);
}

int rm_vmstat_oom_parse(const char *buf, uint64_t *out)
{
	const char *p = buf;

	while (p && *p) {
		if (strncmp(p, "oom_kill ", 9) == 0) {
			char *end;
			errno = 0;
			*out = strtoull(p + 9, &end, 10);
			return (errno || end == p + 9) ? -1 : 0;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -1;
}

int rm_vmstat_oom_read(uint64_t *out)
{
	static char buf[16384];

	if (rm_read_at(rm_proc_dirfd(), "vmstat", buf, sizeof(buf)) < 0)
		return -1;
	return rm_vmstat_oom_parse(buf, out);
}

static int psi_line(const char *p, double *out)
{
	const char *a = strstr(p, "avg10=");
	const char *nl = strchr(p, '\n');
	char *end;

	if (!a || (nl && a > nl))
		return -1;
	*out = strtod(a + 6, &end);
	return end == a + 6 ? -1 : 0;
}

int rm_psi_parse(const char *buf, struct rm_psi *p)
{
	const char *line = buf;

	p->has_some = p->has_full = 0;
	while (line && *line) {
		if (strncmp(line, "some ", 5) == 0)
			p->has_some = psi_line(line, &p->some10) == 0;
		else if (strncmp(line, "full ", 5) == 0)
			p->has_full = psi_line(line, &p->full10) == 0;
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return (p->has_some || p->has_full) ? 0 : -1;
}

int rm_psi_read(const char *res, struct rm_psi *p)
{
	char path[64], buf[512];

	p->has_some = p->has_full = 0;
	if (rm_pathf(path, sizeof(path), "pressure/%s", res) < 0 ||
	    rm_read_at(rm_proc_dirfd(), path, buf, sizeof(buf)) < 0)
		return -1;
	return rm_psi_parse(buf, p);
}

int rm_ncpu(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (int)n : 1;
}
