/*
 * tree_floor: the syscall floor of a process-table snapshot.  Lists /proc
 * and, for every process, opens, reads once and closes each file named on
 * the command line (default "stat") relative to one /proc descriptor.  No
 * parsing, no output: what any reader of those files must at least pay.
 *
 * usage: tree_floor [FILE...]
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	static char buf[4096];
	const char *def[] = { "stat" };
	const char *const *files = argc > 1 ? (const char *const *)argv + 1 : def;
	int nfiles = argc > 1 ? argc - 1 : 1;
	DIR *d = opendir("/proc");
	struct dirent *de;
	long n = 0;

	if (!d)
		return 1;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		for (int i = 0; i < nfiles; i++) {
			char path[300];
			int fd;
			snprintf(path, sizeof(path), "%s/%s", de->d_name, files[i]);
			fd = openat(dirfd(d), path, O_RDONLY | O_CLOEXEC);
			if (fd < 0)
				continue;
			if (read(fd, buf, sizeof(buf)) > 0)
				n++;
			close(fd);
		}
	}
	closedir(d);
	return n > 0 ? 0 : 1;
}
