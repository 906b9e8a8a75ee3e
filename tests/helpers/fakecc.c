/*
 * fakecc: a compiler stand-in for tests/emulation.bats, plain C so that
 * it builds natively (as a test helper) and for aarch64 with
 * `aarch64-linux-gnu-gcc -static` (run there under qemu-user through a
 * private binfmt_misc).  Its arguments are a compiler's and are ignored.
 * It touches FAKECC_MIB MiB (default 32), creates FAKECC_DIR/started,
 * then waits (at most 120 s) until FAKECC_DIR/done exists, and exits 0,
 * so the test decides when it ends, never a sleep.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(void)
{
	const char *dir = getenv("FAKECC_DIR"), *m = getenv("FAKECC_MIB");
	size_t mib = m && *m ? (size_t)strtoul(m, NULL, 10) : 32;
	char path[4096];
	char *p = malloc(mib << 20);
	int fd;

	if (!dir || !p)
		return 2;
	memset(p, 1, mib << 20);
	snprintf(path, sizeof(path), "%s/started", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return 2;
	close(fd);
	snprintf(path, sizeof(path), "%s/done", dir);
	for (int i = 0; i < 2400 && access(path, F_OK) != 0; i++) {
		struct timespec ts = { 0, 50 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	return p[mib << 19] == 1 ? 0 : 3;
}
