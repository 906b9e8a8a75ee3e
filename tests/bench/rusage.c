/*
 * rusage: run a command and print "CPU_SECONDS MAXRSS_KIB" of it alone.
 * posix_spawn (vfork semantics) keeps this runner's own memory out of the
 * child's ru_maxrss, which a forked Python or bash parent would add.
 *
 * usage: rusage CMD ARGS...   (CMD's stdout goes to /dev/null)
 */
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int main(int argc, char **argv)
{
	posix_spawn_file_actions_t fa;
	struct rusage ru;
	pid_t pid;
	int status;

	if (argc < 2) {
		fprintf(stderr, "usage: rusage CMD ARGS...\n");
		return 2;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	if (posix_spawnp(&pid, argv[1], &fa, NULL, argv + 1, environ) != 0) {
		perror(argv[1]);
		return 1;
	}
	if (wait4(pid, &status, 0, &ru) < 0) {
		perror("wait4");
		return 1;
	}
	printf("%.6f %ld\n", (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6, ru.ru_maxrss);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
