/*
 * sample_floor: the syscall floor of one rm-sample tick, as rm-sample
 * makes its calls now (strace of `rm-sample -i 0.2 --stage-log-dir DIR`,
 * the steady state): loadavg, the first 511 bytes of stat, and meminfo,
 * each one pread from 0 of a descriptor kept open, and statvfs("/"); a
 * non-blocking read of the process-event socket and of the log
 * directory's inotify descriptor (both empty on a quiet host); the
 * newest log opened, fstat'ed and its last 64 KiB read (one read when
 * the log is longer); vmstat and the three pressure files, as the first
 * ones; one line written; the sleep to the next tick, as rm-sample's
 * (its pending signals looked at, ppoll, looked at again).  Nothing is
 * parsed.  No /proc/PID is read: rm-sample's compilers column comes from
 * process events, its comm read once at an exec, and this floor's event
 * socket joins no group (a host that forks more adds those reads to
 * rm-sample, not to the floor).
 *
 * usage: sample_floor TICKS LOGDIR [INTERVAL_S]
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/netlink.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

static char buf[65536 + 1];

/* A /proc file's descriptor, kept for every tick. */
static int keep(int dfd, const char *name)
{
	return openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
}

/* Read a kept descriptor from 0, at most cap bytes: one pread, as
 * rm-sample reads it. */
static void reread(int fd, size_t cap)
{
	if (fd >= 0 && pread(fd, buf, cap, 0) < 0)
		return;
}

/* The newest log's tail, as rm-sample reads it: by its path, no link
 * followed, its size from fstat, the last 64 KiB (reads until 64 KiB or
 * the end). */
static void log_tail(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW);
	struct stat st;
	size_t got = 0;
	ssize_t n;

	if (fd < 0)
		return;
	if (fstat(fd, &st) == 0 && st.st_size > (off_t)(sizeof(buf) - 1))
		lseek(fd, st.st_size - (off_t)(sizeof(buf) - 1), SEEK_SET);
	while (got < sizeof(buf) - 1 && (n = read(fd, buf + got, sizeof(buf) - 1 - got)) > 0)
		got += (size_t)n;
	close(fd);
}

int main(int argc, char **argv)
{
	long ticks = argc > 1 ? atol(argv[1]) : 1000;
	const char *logdir = argc > 2 ? argv[2] : ".";
	double iv = argc > 3 ? atof(argv[3]) : 0.001;
	int proc = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int ev = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_CONNECTOR);
	int ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct timespec ts = { (time_t)iv, (long)((iv - (double)(time_t)iv) * 1e9) };
	struct mmsghdr msgs[64];
	struct iovec iov[64];
	static char evbuf[64][256];
	char path[4096], line[256];
	struct statvfs sv;
	sigset_t none, pend;
	int len, k[7];

	if (proc < 0) {
		perror("sample_floor: /proc");
		return 1;
	}
	if (ev >= 0)
		bind(ev, (struct sockaddr *)&sa, sizeof(sa));
	if (ino >= 0)
		inotify_add_watch(ino, logdir, IN_MODIFY | IN_CREATE | IN_DELETE | IN_MOVED_TO);
	memset(msgs, 0, sizeof(msgs));
	for (int i = 0; i < 64; i++) {
		iov[i].iov_base = evbuf[i];
		iov[i].iov_len = sizeof(evbuf[i]);
		msgs[i].msg_hdr.msg_iov = &iov[i];
		msgs[i].msg_hdr.msg_iovlen = 1;
	}
	sigemptyset(&none);
	k[0] = keep(proc, "loadavg");
	k[1] = keep(proc, "stat");
	k[2] = keep(proc, "meminfo");
	k[3] = keep(proc, "vmstat");
	k[4] = keep(proc, "pressure/memory");
	k[5] = keep(proc, "pressure/io");
	k[6] = keep(proc, "pressure/cpu");
	snprintf(path, sizeof(path), "%s/build.log", logdir);
	len = snprintf(line, sizeof(line), "%0139d\n", 0);
	for (long t = 0; t < ticks; t++) {
		reread(k[0], 255);
		reread(k[1], 511);
		reread(k[2], 8191);
		statvfs("/", &sv);
		if (ev >= 0)
			recvmmsg(ev, msgs, 64, MSG_DONTWAIT, NULL);
		if (ino >= 0 && read(ino, buf, 16384) < 0) {
			/* EAGAIN: nothing changed in the log directory */
		}
		log_tail(path);
		reread(k[3], 16383);
		reread(k[4], 511);
		reread(k[5], 511);
		reread(k[6], 511);
		if (write(STDOUT_FILENO, line, (size_t)len) < 0)
			return 1;
		sigpending(&pend);
		ppoll(NULL, 0, &ts, &none);
		sigpending(&pend);
	}
	return 0;
}
