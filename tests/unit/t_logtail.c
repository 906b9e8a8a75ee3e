/*
 * lib/logtail on real files in a private directory: content older than
 * the run is never context.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "logtail.h"
#include "procfs.h"
#include "tap.h"

static char dir[256];

static void put(const char *name, const char *text, int append)
{
	char p[512];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	fd = open(p, O_WRONLY | O_CREAT | (append ? O_APPEND : O_TRUNC), 0644);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		abort();
	close(fd);
}

/* Set name's modification time to now + off seconds. */
static void age(const char *name, int off)
{
	char p[512];
	struct timespec t[2];

	clock_gettime(CLOCK_REALTIME, &t[0]);
	t[0].tv_sec += off;
	t[1] = t[0];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	if (utimensat(AT_FDCWD, p, t, 0) < 0)
		abort();
}

/* The context a watch started at since gives now: the last line, or
 * "(none)" when no log is the run's, "(empty)" when it has no new line. */
static const char *context(struct rm_logwatch *w, char *out, size_t osize)
{
	char path[4096], stage[256], skipped[256];
	uid_t owner;

	if (rm_logwatch_newest(w, dir, path, sizeof(path), stage, sizeof(stage), skipped,
			       sizeof(skipped), &owner) < 0)
		return "(none)";
	if (rm_logwatch_last_line(w, path, owner, NULL, out, osize) != 1)
		return "(empty)";
	return out;
}

static struct timespec ago(int s)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	t.tv_sec -= s;
	return t;
}

/* A previous build's log, not yet truncated by this one: never context,
 * then only what this run appends to it. */
static void previous_build_log_is_not_context(void)
{
	struct rm_logwatch w = { .ifd = -1 };
	char out[256];

	put("build.log", "old build: linking libold.so\n", 0);
	age("build.log", -60);
	rm_logwatch_since(&w, ago(5));
	CHECK_STR(context(&w, out, sizeof(out)), "(none)");
	put("build.log", "\n", 1);  /* written during the run, no new line yet */
	CHECK_STR(context(&w, out, sizeof(out)), "(empty)");
	put("build.log", "[1/9] CXX src/new.cpp\n", 1);
	CHECK_STR(context(&w, out, sizeof(out)), "[1/9] CXX src/new.cpp");
	rm_logwatch_close(&w);
}

/* Truncated by the new build: all of it is new. */
static void truncated_log_is_read_whole(void)
{
	struct rm_logwatch w = { .ifd = -1 };
	char out[256];

	put("build.log", "old build: a long last line of the earlier run\n", 0);
	age("build.log", -60);
	rm_logwatch_since(&w, ago(5));
	CHECK_STR(context(&w, out, sizeof(out)), "(none)");
	put("build.log", "fresh\n", 0);
	CHECK_STR(context(&w, out, sizeof(out)), "fresh");
	rm_logwatch_close(&w);
}

/* A log made during the run is read whole; without a start, as before. */
static void new_log_and_no_since(void)
{
	struct rm_logwatch w = { .ifd = -1 }, old = { .ifd = -1 };
	char out[256];

	put("build.log", "stale line\n", 0);
	age("build.log", -60);
	CHECK_STR(context(&old, out, sizeof(out)), "stale line");
	rm_logwatch_close(&old);
	rm_logwatch_since(&w, ago(5));
	CHECK_STR(context(&w, out, sizeof(out)), "(none)");
	put("stage2.log", "one\ntwo\n", 0);
	CHECK_STR(context(&w, out, sizeof(out)), "two");
	rm_logwatch_close(&w);
}

/* Read again, a log gives what it gained since: nothing when unchanged
 * (the caller keeps the line it had), a line ended since whole, and all
 * of it when it was rewritten. */
static void read_again_gives_what_is_new(void)
{
	struct rm_logwatch w = { .ifd = -1 };
	char out[256];

	put("build.log", "[1/3] CXX a.cpp\n[2/3] CXX b.cpp\n", 0);
	CHECK_STR(context(&w, out, sizeof(out)), "[2/3] CXX b.cpp");
	CHECK_STR(context(&w, out, sizeof(out)), "(empty)");
	put("build.log", "[3/3] CXX c", 1);
	CHECK_STR(context(&w, out, sizeof(out)), "[3/3] CXX c");
	put("build.log", ".cpp\n\n", 1);
	CHECK_STR(context(&w, out, sizeof(out)), "[3/3] CXX c.cpp");
	put("build.log", "\n", 1);
	CHECK_STR(context(&w, out, sizeof(out)), "(empty)");
	/* rewritten longer between two reads: read whole */
	put("build.log", "stage 2: a line longer than all of the stage 1 log\nlast\n", 0);
	CHECK_STR(context(&w, out, sizeof(out)), "last");
	rm_logwatch_close(&w);
}

static void reset(void)
{
	char p[512];

	snprintf(p, sizeof(p), "%s/build.log", dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/stage2.log", dir);
	unlink(p);
}

int main(void)
{
	snprintf(dir, sizeof(dir), "%s/t_logtail.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(dir))
		return 1;
	RUN(previous_build_log_is_not_context);
	reset();
	RUN(truncated_log_is_read_whole);
	reset();
	RUN(new_log_and_no_since);
	reset();
	RUN(read_again_gives_what_is_new);
	reset();
	rmdir(dir);
	return tap_done();
}
