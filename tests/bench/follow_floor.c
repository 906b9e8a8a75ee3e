/*
 * follow_floor: the least an exact follower of a build pays in the kernel
 * for each process it follows, for the monitor-cost section.  It listens
 * as rm-tree's exact mode does, to the proc connector (fork, exec, comm,
 * exit events of processes, threads filtered in the kernel) and to
 * taskstats' exit records (per-CPU listener), and sleeps in ppoll on
 * both.  Woken, it lets events gather 2 ms as rm-tree does (so a short
 * process's fork, exec and exit are read in one wake-up), reads both
 * sockets in batches, reads the command line of each process that
 * exec'd (open, read, close: a command line is there only while the
 * process lives) and writes one row a record, of about the length of
 * rm-tree's (a write of its own, as rm-tree writes each pump's rows: to
 * a file, FILE, appended, so that the row costs what it costs rm-tree
 * on the same filesystem; to stdout without one).  No table, no parsing
 * beyond an event's type and PID, no tick: what any follower that names
 * each process by its command line and takes its peak from the kernel's
 * record must at least do.
 *
 * usage: follow_floor [FILE]
 */
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "procev.h"

enum { MAX = 64, EACH_CN = 512, EACH_TS = 4096 };
enum { WHAT = 16 + 20, PID = 16 + 20 + 16 };
static unsigned char cnb[MAX * EACH_CN], tsb[MAX * EACH_TS];

int main(int argc, char **argv)
{
	char why[256], path[64], buf[4096], row[80];
	int family, proc = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int cn = rm_pe_open(8 << 20, RM_PE_WANT_FORK | RM_PE_WANT_EXEC | RM_PE_WANT_COMM | RM_PE_WANT_EXIT,
			    why, sizeof(why));
	int ts = cn < 0 ? -1 : rm_ts_open(8 << 20, &family, why, sizeof(why));
	const struct timespec settle = { 0, 2 * 1000 * 1000 };
	size_t lens[MAX];
	int out = argc > 1 ? open(argv[1], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644) : 1;

	if (cn < 0 || ts < 0 || proc < 0 || out < 0) {
		fprintf(stderr, "follow_floor: %s\n", proc < 0 ? "cannot open /proc" : out < 0 ? argv[1] : why);
		return 1;
	}
	for (;;) {
		struct pollfd p[2] = { { cn, POLLIN, 0 }, { ts, POLLIN, 0 } };
		int n;

		if (poll(p, 2, -1) <= 0)
			continue;
		nanosleep(&settle, NULL);
		do {
			n = rm_nl_recvm(cn, cnb, EACH_CN, MAX, lens);
			for (int i = 0; i < n; i++) {
				uint32_t what, pid;
				int fd;

				memcpy(&what, cnb + (size_t)i * EACH_CN + WHAT, 4);
				memcpy(&pid, cnb + (size_t)i * EACH_CN + PID, 4);
				if (what != 2 /* PROC_EVENT_EXEC */ ||
				    snprintf(path, sizeof(path), "%u/cmdline", pid) >= (int)sizeof(path))
					continue;
				if ((fd = openat(proc, path, O_RDONLY | O_CLOEXEC)) >= 0) {
					if (read(fd, buf, sizeof(buf)) < 0)
						buf[0] = '\0';
					close(fd);
				}
			}
		} while (n == MAX);
		do {
			n = rm_nl_recvm(ts, tsb, EACH_TS, MAX, lens);
			for (int i = 0; i < n; i++) {
				/* rm-tree's row is about 70 bytes: so is this one */
				int len = snprintf(row, sizeof(row), "%d,%-60s\n", i, "row");
				if (write(out, row, (size_t)len) < 0)
					return 1;
			}
		} while (n == MAX);
	}
}
