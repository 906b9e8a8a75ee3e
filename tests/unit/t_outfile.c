/*
 * t_outfile: user-named outputs.  Write-once outputs replace the target
 * only on commit (the old file stays whole until then and after an
 * abort), refuse a symlink at the target in the shared words, and write
 * inherited descriptors and FIFOs in place; appends refuse symlinks and
 * odd files; same-file checks.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "outfile.h"
#include "tap.h"

static char dir[] = "/tmp/t_outfile.XXXXXX";
static char p1[256], p2[256], lnk[256], fifo[256];

static void put(const char *path, const char *s)
{
	FILE *f = fopen(path, "w");
	fputs(s, f);
	fclose(f);
}

static const char *get(const char *path)
{
	static char buf[256];
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return "(missing)";
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* Files in dir other than . and .. (temporaries left behind show here). */
static int count_files(void)
{
	char cmd[512];
	int n = -1;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "ls -A '%s' | wc -l", dir);
	p = popen(cmd, "r");
	if (p) {
		if (fscanf(p, "%d", &n) != 1)
			n = -1;
		pclose(p);
	}
	return n;
}

static void test_replace_on_commit(void)
{
	struct rm_outfile o;
	char why[128];

	put(p1, "OLD\n");
	CHECK(rm_out_open(p1, &o, why, sizeof(why)) == 0);
	CHECK(write(o.fd, "NEW\n", 4) == 4);
	/* Until the commit the old file is whole. */
	CHECK_STR(get(p1), "OLD\n");
	CHECK(rm_out_commit(&o, why, sizeof(why)) == 0);
	CHECK_STR(get(p1), "NEW\n");
	CHECK(count_files() == 1);
}

static void test_abort_keeps_old(void)
{
	struct rm_outfile o;
	char why[128];

	put(p1, "OLD\n");
	CHECK(rm_out_open(p1, &o, why, sizeof(why)) == 0);
	CHECK(write(o.fd, "HALF", 4) == 4);
	rm_out_abort(&o);
	CHECK_STR(get(p1), "OLD\n");
	CHECK(count_files() == 1);
}

static void test_new_file_mode(void)
{
	struct rm_outfile o;
	struct stat st;
	char why[128];
	mode_t old = umask(027);

	unlink(p2);
	CHECK(rm_out_open(p2, &o, why, sizeof(why)) == 0);
	CHECK(rm_out_commit(&o, why, sizeof(why)) == 0);
	CHECK(stat(p2, &st) == 0 && (st.st_mode & 0777) == 0640);
	/* Replacing a 0600 file never opens it up. */
	chmod(p2, 0600);
	umask(022);
	CHECK(rm_out_open(p2, &o, why, sizeof(why)) == 0);
	CHECK(rm_out_commit(&o, why, sizeof(why)) == 0);
	CHECK(stat(p2, &st) == 0 && (st.st_mode & 0777) == 0600);
	umask(old);
	unlink(p2);
}

static void test_symlink_refused(void)
{
	struct rm_outfile o;
	char why[128] = "";

	put(p1, "VICTIM\n");
	unlink(lnk);
	CHECK(symlink(p1, lnk) == 0);
	CHECK(rm_out_open(lnk, &o, why, sizeof(why)) < 0);
	CHECK(errno == ELOOP);
	CHECK_STR(why, "a symbolic link, not followed");
	CHECK(rm_out_open_append(lnk, 0644, &o, why, sizeof(why)) < 0);
	CHECK_STR(why, "a symbolic link, not followed");
	CHECK_STR(get(p1), "VICTIM\n");
	/* A dangling one too. */
	unlink(lnk);
	CHECK(symlink("/nonexistent/x", lnk) == 0);
	CHECK(rm_out_open(lnk, &o, why, sizeof(why)) < 0);
	CHECK_STR(why, "a symbolic link, not followed");
	unlink(lnk);
}

static void test_inherited(void)
{
	struct rm_outfile o;
	char why[128], name[64];
	int pfd[2];
	char buf[16] = "";

	CHECK(rm_out_inherited_fd("-") == 1);
	CHECK(rm_out_inherited_fd("/dev/stdout") == 1);
	CHECK(rm_out_inherited_fd("/dev/stderr") == 2);
	CHECK(rm_out_inherited_fd("/dev/fd/7") == 7);
	CHECK(rm_out_inherited_fd("/dev/fd/x") == -1);
	CHECK(rm_out_inherited_fd("out.csv") == -1);
	CHECK(pipe(pfd) == 0);
	snprintf(name, sizeof(name), "/dev/fd/%d", pfd[1]);
	CHECK(rm_out_open(name, &o, why, sizeof(why)) == 0);
	CHECK(o.fd == pfd[1] && o.inherited && !o.tmp);
	CHECK(write(o.fd, "hi", 2) == 2);
	CHECK(rm_out_commit(&o, why, sizeof(why)) == 0);
	/* Not closed: still writable. */
	CHECK(write(pfd[1], "!", 1) == 1);
	CHECK(read(pfd[0], buf, sizeof(buf) - 1) == 3);
	CHECK_STR(buf, "hi!");
	close(pfd[0]);
	close(pfd[1]);
	/* A closed descriptor is an error, not a file named "/dev/fd/N". */
	CHECK(rm_out_open(name, &o, why, sizeof(why)) < 0);
	CHECK(errno == EBADF);
}

static void test_fifo_in_place(void)
{
	struct rm_outfile o;
	char why[128], buf[16] = "";
	int rfd;

	unlink(fifo);
	CHECK(mkfifo(fifo, 0600) == 0);
	rfd = open(fifo, O_RDONLY | O_NONBLOCK);
	CHECK(rfd >= 0);
	CHECK(rm_out_open(fifo, &o, why, sizeof(why)) == 0);
	CHECK(!o.tmp);
	CHECK(write(o.fd, "abc", 3) == 3);
	CHECK(rm_out_commit(&o, why, sizeof(why)) == 0);
	CHECK(read(rfd, buf, sizeof(buf) - 1) == 3);
	CHECK_STR(buf, "abc");
	close(rfd);
	/* Still a FIFO: never renamed onto. */
	{
		struct stat st;
		CHECK(lstat(fifo, &st) == 0 && S_ISFIFO(st.st_mode));
	}
	unlink(fifo);
}

/* A FIFO with no reader is refused at once by both opens (a plain
 * open waited for ever), in the same words. */
static void test_fifo_no_reader_refused(void)
{
	struct rm_outfile o;
	char why[128];

	unlink(fifo);
	CHECK(mkfifo(fifo, 0600) == 0);
	CHECK(rm_out_open(fifo, &o, why, sizeof(why)) < 0);
	CHECK(errno == ENXIO);
	CHECK_STR(why, "a FIFO with no reader");
	CHECK(rm_out_open_append(fifo, 0600, &o, why, sizeof(why)) < 0);
	CHECK_STR(why, "a FIFO with no reader");
	unlink(fifo);
}

/* rm_out_open_stream: a regular file emptied and written in place, a
 * device taken; a symlink, a FIFO (a reader or none) and a directory
 * refused, what they point at untouched. */
static void test_open_stream(void)
{
	char why[128], sub[300];
	int fd, rd;

	put(p1, "old old old");
	CHECK((fd = rm_out_open_stream(p1, why, sizeof(why))) >= 0);
	CHECK(write(fd, "new", 3) == 3);
	close(fd);
	CHECK_STR(get(p1), "new");
	CHECK((fd = rm_out_open_stream("/dev/null", why, sizeof(why))) >= 0);
	close(fd);
	put(p2, "keep");
	unlink(lnk);
	CHECK(symlink(p2, lnk) == 0);
	CHECK(rm_out_open_stream(lnk, why, sizeof(why)) < 0);
	CHECK_STR(why, RM_OUT_SYMLINK_WHY);
	CHECK_STR(get(p2), "keep");
	unlink(lnk);
	unlink(fifo);
	CHECK(mkfifo(fifo, 0600) == 0);
	CHECK(rm_out_open_stream(fifo, why, sizeof(why)) < 0);
	CHECK_STR(why, "a FIFO with no reader");
	CHECK((rd = open(fifo, O_RDONLY | O_NONBLOCK)) >= 0);
	CHECK(rm_out_open_stream(fifo, why, sizeof(why)) < 0);
	CHECK_STR(why, "a FIFO, not a regular file");
	close(rd);
	unlink(fifo);
	snprintf(sub, sizeof(sub), "%s/sub", dir);
	CHECK(mkdir(sub, 0700) == 0);
	CHECK(rm_out_open_stream(sub, why, sizeof(why)) < 0);
	CHECK(errno == EISDIR);
	rmdir(sub);
	unlink(p2);
}

/* rm_out_create_at makes nothing over anything, a dangling symlink too,
 * and sets the mode on the descriptor, never on a name. */
static void test_create_at(void)
{
	char why[128];
	struct stat st;
	int dfd = open(dir, O_PATH | O_DIRECTORY), fd;

	unlink(lnk);
	CHECK(symlink("/nonexistent/target", lnk) == 0);
	CHECK(rm_out_create_at(dfd, "link.txt", O_WRONLY, 0640, why, sizeof(why)) < 0);
	CHECK(errno == EEXIST);
	unlink(lnk);
	unlink(p2);
	fd = rm_out_create_at(dfd, "new.txt", O_WRONLY, 0640, why, sizeof(why));
	CHECK(fd >= 0);
	CHECK(fstat(fd, &st) == 0 && (st.st_mode & 07777) == 0640);
	close(fd);
	unlink(p2);
	close(dfd);
}

/* rm_out_symlink_at replaces a symlink, never a file or a directory,
 * and never makes the link inside a directory at the name. */
static void test_symlink_at(void)
{
	char why[128], buf[64];
	struct stat st;
	int dfd = open(dir, O_PATH | O_DIRECTORY), before = count_files();
	ssize_t n;

	unlink(lnk);
	CHECK(symlink("old", lnk) == 0);
	CHECK(rm_out_symlink_at(dfd, "new", "link.txt", why, sizeof(why)) == 0);
	n = readlink(lnk, buf, sizeof(buf) - 1);
	CHECK(n == 3 && memcmp(buf, "new", 3) == 0);
	unlink(lnk);
	put(lnk, "keep");
	CHECK(rm_out_symlink_at(dfd, "new", "link.txt", why, sizeof(why)) < 0);
	CHECK_STR(why, "not a symlink: left as it is");
	CHECK_STR(get(lnk), "keep");
	unlink(lnk);
	CHECK(mkdir(lnk, 0700) == 0);
	CHECK(rm_out_symlink_at(dfd, "new", "link.txt", why, sizeof(why)) < 0);
	CHECK(lstat(lnk, &st) == 0 && S_ISDIR(st.st_mode));
	CHECK(rmdir(lnk) == 0);   /* empty: nothing was made inside */
	close(dfd);
	CHECK(count_files() == before);   /* no temporary link left behind */
}

static void test_append(void)
{
	struct rm_outfile o;
	char why[128];

	put(p1, "a\n");
	CHECK(rm_out_open_append(p1, 0644, &o, why, sizeof(why)) == 0);
	CHECK(write(o.fd, "b\n", 2) == 2);
	CHECK(rm_out_close(&o) == 0);
	CHECK_STR(get(p1), "a\nb\n");
	CHECK(rm_out_open_append("/dev/null", 0644, &o, why, sizeof(why)) == 0);
	CHECK(rm_out_close(&o) == 0);
	/* A directory is not something to append rows to. */
	CHECK(rm_out_open_append(dir, 0644, &o, why, sizeof(why)) < 0);
	CHECK(rm_out_open(dir, &o, why, sizeof(why)) < 0);
	if (access("/dev/zero", W_OK) == 0) {
		CHECK(rm_out_open_append("/dev/zero", 0644, &o, why, sizeof(why)) < 0);
		CHECK_STR(why, "not a regular file, FIFO or terminal");
	}
}

static void test_same(void)
{
	struct stat a, b;
	char rel[300], cwd[4096];

	put(p1, "x\n");
	put(p2, "y\n");
	CHECK(rm_out_stat(p1, &a) == 0 && rm_out_stat(p2, &b) == 0);
	CHECK(!rm_same_file(&a, &b));
	CHECK(rm_out_same_path(p1, p1));
	CHECK(!rm_out_same_path(p1, p2));
	/* Another spelling of one file. */
	snprintf(rel, sizeof(rel), "%s/./%s", dir, strrchr(p1, '/') + 1);
	CHECK(rm_out_same_path(p1, rel));
	/* Not there yet: by directory and name. */
	unlink(p2);
	CHECK(getcwd(cwd, sizeof(cwd)) != NULL);
	CHECK(chdir(dir) == 0);
	CHECK(rm_out_same_path(p2, strrchr(p2, '/') + 1));
	CHECK(!rm_out_same_path(p2, "other"));
	CHECK(chdir(cwd) == 0);
	CHECK(rm_out_same_path("-", "/dev/stdout"));
}

int main(void)
{
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(p1, sizeof(p1), "%s/out.txt", dir);
	snprintf(p2, sizeof(p2), "%s/new.txt", dir);
	snprintf(lnk, sizeof(lnk), "%s/link.txt", dir);
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	RUN(test_replace_on_commit);
	RUN(test_abort_keeps_old);
	RUN(test_new_file_mode);
	RUN(test_symlink_refused);
	RUN(test_inherited);
	RUN(test_fifo_in_place);
	RUN(test_fifo_no_reader_refused);
	RUN(test_open_stream);
	RUN(test_create_at);
	RUN(test_symlink_at);
	RUN(test_append);
	RUN(test_same);
	{
		char cmd[300];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			return 1;
	}
	return tap_done();
}
