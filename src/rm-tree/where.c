/*
 * where.c: where the run is, for the --stats row: its PID namespace and
 * cgroup namespace (inode numbers; the initial ones are fixed by the
 * kernel, PROC_PID_INIT_INO and PROC_CGROUP_INIT_INO), and the memory
 * cgroup of the followed tree as /proc/PID/cgroup writes it.  A CSV made
 * inside a container and summarized on the host has namespace PIDs, not
 * the kernel log's: there rm-summarize ties an OOM kill to the run by the
 * cgroup the kernel log names (oom_memcg=, task_memcg=), which must equal
 * this path, written relative to the initial cgroup namespace's root (it
 * is not, and so ties nothing, when cgroup_ns is not the initial one).
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"
#include "proctab.h"
#include "tree.h"

static unsigned long ns_ino(const char *name)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/self/ns/%s", name);
	return stat(path, &st) == 0 ? (unsigned long)st.st_ino : 0;
}

/* The memory cgroup of pid (0: ours): v1's memory line, else v2's. */
static void mem_cgroup(pid_t pid, char *out, size_t size)
{
	char buf[8192];
	ssize_t n;

	out[0] = '\0';
	n = rm_pfile_read(NULL, pid ? pid : getpid(), "cgroup", buf, sizeof(buf), 0);
	if (n <= 0)
		return;
	if (rm_cg_parse_proc_cgroup(buf, "memory", out, size) < 0 &&
	    rm_cg_parse_proc_cgroup(buf, NULL, out, size) < 0)
		out[0] = '\0';
}

const char *where_cols(const struct opts *o)
{
	static char row[4200];
	char cg[4096] = "";
	unsigned long pidns, cgns;
	int len;

	if (row[0])
		return row;
	if (o->in_cgroup)
		snprintf(cg, sizeof(cg), "%s", o->in_cgroup);
	else
		mem_cgroup(o->sel == SEL_PIDS && o->npids ? o->pids[0] : 0, cg, sizeof(cg));
	/* A path with a comma, a quote or a control character is no
	 * container's: left out rather than quoted. */
	for (char *c = cg; *c; c++)
		if (*c == ',' || *c == '"' || (unsigned char)*c < 0x20)
			cg[0] = '\0';
	pidns = ns_ino("pid");
	cgns = ns_ino("cgroup");
	len = snprintf(row, sizeof(row), ",");
	if (pidns)
		len += snprintf(row + len, sizeof(row) - (size_t)len, "%lu", pidns);
	len += snprintf(row + len, sizeof(row) - (size_t)len, ",");
	if (cgns)
		len += snprintf(row + len, sizeof(row) - (size_t)len, "%lu", cgns);
	snprintf(row + len, sizeof(row) - (size_t)len, ",%s", cg);
	return row;
}
