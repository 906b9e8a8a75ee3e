/*
 * Replays, through the very code of each libFuzzer target in tests/fuzz,
 * every input that once broke a parser (tests/fixtures/fuzz-regress/
 * fz_NAME/) and every seed (tests/fuzz/corpus/fz_NAME/), so that a fixed
 * crash stays fixed in `make check` without clang or libFuzzer.  Each
 * input runs in a child process: an abort or a signal fails the test and
 * names the file.
 */
#define FZ_NO_MAIN
#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../fuzz/fz_cgroup.c"
#include "../fuzz/fz_cmdline.c"
#include "../fuzz/fz_container.c"
#include "../fuzz/fz_csvread.c"
#include "../fuzz/fz_engine.c"
#include "../fuzz/fz_http.c"
#include "../fuzz/fz_cu.c"
#include "../fuzz/fz_kmsg.c"
#include "../fuzz/fz_meminfo.c"
#include "../fuzz/fz_number.c"
#include "../fuzz/fz_numfmt.c"
#include "../fuzz/fz_powercap.c"
#include "../fuzz/fz_procstat.c"
#include "../fuzz/fz_psi.c"
#include "../fuzz/fz_pstat.c"
#include "../fuzz/fz_pstatus.c"
#include "../fuzz/fz_sanitize.c"
#include "../fuzz/fz_taskstats.c"
#include "../fuzz/fz_vmstat.c"
#include "tap.h"

typedef int (*fz_fn)(const uint8_t *, size_t);

static const struct {
	const char *name;
	fz_fn fn;
} targets[] = {
	{ "fz_cgroup", fz_cgroup },
	{ "fz_cmdline", fz_cmdline },
	{ "fz_container", fz_container },
	{ "fz_csvread", fz_csvread },
	{ "fz_engine", fz_engine },
	{ "fz_http", fz_http },
	{ "fz_cu", fz_cu },
	{ "fz_kmsg", fz_kmsg },
	{ "fz_meminfo", fz_meminfo },
	{ "fz_number", fz_number },
	{ "fz_numfmt", fz_numfmt },
	{ "fz_powercap", fz_powercap },
	{ "fz_procstat", fz_procstat },
	{ "fz_psi", fz_psi },
	{ "fz_pstat", fz_pstat },
	{ "fz_pstatus", fz_pstatus },
	{ "fz_sanitize", fz_sanitize },
	{ "fz_taskstats", fz_taskstats },
	{ "fz_vmstat", fz_vmstat },
};
#define NTARGETS (sizeof(targets) / sizeof(targets[0]))

static char top[4096] = ".";

/* Read a whole (small) file; NULL when it cannot be read. */
static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && n < (1L << 24) &&
	    fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n + 1)) != NULL) {
		*len = fread(buf, 1, (size_t)n, f);
		if (*len != (size_t)n) {
			free(buf);
			buf = NULL;
		}
	}
	fclose(f);
	return buf;
}

/* Run fn on the file in a child.  Returns 0 when it came back cleanly. */
static int replay(fz_fn fn, const char *path)
{
	size_t len = 0;
	uint8_t *data = slurp(path, &len);
	pid_t pid;
	int status;

	if (!data) {
		printf("#   cannot read '%s': %s\n", path, strerror(errno));
		return -1;
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		free(data);
		return -1;
	}
	if (pid == 0) {
		fn(data, len);
		_exit(0);
	}
	free(data);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	printf("#   '%s' broke it again (%s %d)\n", path,
	       WIFSIGNALED(status) ? "signal" : "exit",
	       WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	return -1;
}

/* Replay every file of dir/name through fn; returns how many ran. */
static int replay_dir(const char *dir, const char *name, fz_fn fn)
{
	char path[8192];
	struct dirent *de;
	DIR *d;
	int n = 0;

	snprintf(path, sizeof(path), "%s/%s/%s", top, dir, name);
	d = opendir(path);
	if (!d)
		return 0;
	while ((de = readdir(d)) != NULL) {
		char file[8192 + 256];
		struct stat st;
		if (de->d_name[0] == '.')
			continue;
		snprintf(file, sizeof(file), "%s/%s", path, de->d_name);
		if (stat(file, &st) < 0 || !S_ISREG(st.st_mode))
			continue;
		CHECK(replay(fn, file) == 0);
		n++;
	}
	closedir(d);
	return n;
}

/*
 * Every entry of dir (under top) is a target in the table: a regress
 * directory, a seed corpus, or (suffix ".c") a fuzz target's source.
 */
static void every_entry_has_a_target(const char *dir, const char *suffix)
{
	char path[8192];
	struct dirent *de;
	DIR *d;
	size_t sl = strlen(suffix);

	snprintf(path, sizeof(path), "%s/%s", top, dir);
	d = opendir(path);
	CHECK(d != NULL);
	if (!d)
		return;
	while ((de = readdir(d)) != NULL) {
		size_t i, nl = strlen(de->d_name);
		if (de->d_name[0] == '.')
			continue;
		/* In tests/fuzz only the targets' sources, fz_NAME.c. */
		if (*suffix && (strncmp(de->d_name, "fz_", 3) != 0 || nl <= sl ||
				strcmp(de->d_name + nl - sl, suffix) != 0))
			continue;
		for (i = 0; i < NTARGETS; i++)
			if (strlen(targets[i].name) == nl - sl &&
			    strncmp(de->d_name, targets[i].name, nl - sl) == 0)
				break;
		if (i == NTARGETS) {
			printf("#   %s/%s: no such fuzz target in t_regress\n", dir, de->d_name);
			CHECK(i < NTARGETS);
		}
	}
	closedir(d);
}

static void every_regress_dir_has_a_target(void)
{
	every_entry_has_a_target("tests/fixtures/fuzz-regress", "");
}

/* A target whose seeds and crashes make check never replays is untested. */
static void every_fuzz_target_is_replayed(void)
{
	every_entry_has_a_target("tests/fuzz/corpus", "");
	every_entry_has_a_target("tests/fuzz", ".c");
}

static size_t cur;

static void regress_inputs_still_pass(void)
{
	int n = replay_dir("tests/fixtures/fuzz-regress", targets[cur].name, targets[cur].fn);
	n += replay_dir("tests/fuzz/corpus", targets[cur].name, targets[cur].fn);
	/* Every target has seeds: a target that replays nothing is broken. */
	CHECK(n > 0);
}

int main(void)
{
	const char *t = getenv("RM_TOP");

	if (t && *t)
		snprintf(top, sizeof(top), "%s", t);
	RUN(every_regress_dir_has_a_target);
	RUN(every_fuzz_target_is_replayed);
	for (cur = 0; cur < NTARGETS; cur++) {
		char name[128];
		snprintf(name, sizeof(name), "fuzz regressions and seeds of %s", targets[cur].name);
		tap_run(name, regress_inputs_still_pass);
	}
	return tap_done();
}
