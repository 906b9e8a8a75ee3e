/*
 * bootexit: the moment a process ended, on the clock rm-tree's rows
 * count from, for the test of kernel exit times.
 *
 * usage: bootexit            print CLOCK_BOOTTIME seconds now (an RM_T0)
 *        bootexit SEC FILE   sleep SEC, write CLOCK_BOOTTIME seconds to
 *                            FILE and exit at once (_exit: nothing runs
 *                            between the reading and the end)
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double boot_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	char buf[64];
	struct timespec d;
	double sec;
	int fd, n;

	if (argc == 1) {
		printf("%.6f\n", boot_now());
		return 0;
	}
	if (argc != 3) {
		fprintf(stderr, "usage: bootexit [SEC FILE]\n");
		return 2;
	}
	sec = atof(argv[1]);
	d.tv_sec = (time_t)sec;
	d.tv_nsec = (long)((sec - (double)d.tv_sec) * 1e9);
	while (nanosleep(&d, &d) != 0)
		;
	fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return 1;
	n = snprintf(buf, sizeof(buf), "%.6f\n", boot_now());
	if (write(fd, buf, (size_t)n) != n)
		_exit(1);
	_exit(0);
}
