/*
 * sample_floor: the syscall floor of one rm-sample tick.  Opens and reads
 * the same files rm-sample reads (loadavg, stat, meminfo, vmstat, the
 * three pressure files, every /proc/PID/comm, the log directory and the
 * tail of its newest log) and calls statvfs, without parsing anything.
 *
 * usage: sample_floor TICKS LOGDIR
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

static char buf[65536];

static void slurp(int dfd, const char *path, off_t tail)
{
	int fd = openat(dfd, path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	if (tail) {
		struct stat st;
		if (fstat(fd, &st) == 0 && st.st_size > tail)
			lseek(fd, st.st_size - tail, SEEK_SET);
	}
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	close(fd);
}

int main(int argc, char **argv)
{
	long ticks = argc > 1 ? atol(argv[1]) : 1000;
	const char *logdir = argc > 2 ? argv[2] : ".";
	int proc = open("/proc", O_RDONLY | O_DIRECTORY);
	struct statvfs sv;

	for (long t = 0; t < ticks; t++) {
		static const char *files[] = { "loadavg", "stat", "meminfo", "vmstat",
			"pressure/memory", "pressure/io", "pressure/cpu" };
		for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
			slurp(proc, files[i], 0);
		statvfs("/", &sv);
		int d = openat(proc, ".", O_RDONLY | O_DIRECTORY);
		DIR *dir = fdopendir(d);
		struct dirent *de;
		while ((de = readdir(dir)) != NULL) {
			char path[300];
			if (de->d_name[0] < '1' || de->d_name[0] > '9')
				continue;
			snprintf(path, sizeof(path), "%s/comm", de->d_name);
			slurp(proc, path, 0);
		}
		closedir(dir);
		DIR *ld = opendir(logdir);
		while (ld && (de = readdir(ld)) != NULL) {
			struct stat st;
			fstatat(dirfd(ld), de->d_name, &st, 0);
		}
		if (ld) {
			slurp(dirfd(ld), "build.log", 65536);
			closedir(ld);
		}
	}
	return 0;
}
