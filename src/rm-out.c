/*
 * rm-out: the shell wrappers' files, made where another user may write.
 *
 * Usage and options: the table cli below (rm-out --help prints it).
 *
 * A root wrapper writing into a build user's log directory must never
 * open, create, chmod or link a name there by itself: bash follows a
 * symlink, blocks on a FIFO and cannot compare what it opened with what
 * it made.  rm-out does each such step through lib/outfile, relative to a
 * descriptor of the directory, and hands the result on:
 *
 *   --claim DIR/STEM -- CMD   the first free run name STEM, STEM-2, ...
 *                             (none of its --create and --reserve names
 *                             there): each --create SUFFIX made O_EXCL
 *                             and opened on fds 3, 4, ... in order,
 *                             each --latest SUFFIX linked from
 *                             STEM.latest.SUFFIX, then CMD exec'd with
 *                             RM_OUT_BASE=the chosen name (no directory).
 *   --open FILE -- CMD        FILE opened for a stream written in place
 *                             (a regular file, emptied, or a device; never
 *                             a symlink, a FIFO or a directory) on fd 3,
 *                             then CMD exec'd: a wrapper that streams to
 *                             FILE and reads it back holds it open.
 *   --write FILE              standard input to FILE, whole (a temporary
 *                             file renamed into place), mode --mode.
 *   --check FILE              FILE could be written (its directory is
 *                             there and writable; no symlink, directory,
 *                             FIFO without a reader or other file is in
 *                             the way): exit 1 naming why, touching nothing.
 *   --lock FD                 flock(2) the open descriptor FD, exclusive,
 *                             never waiting: exit 1 when another holds it.
 *                             The lock lasts while the caller keeps FD.
 *   --unlocked FILE           exit 0 when no process holds a lock on FILE
 *                             (a regular file, never through a symlink nor
 *                             blocking on a FIFO), 1 when one does.
 *
 * --lock and --unlocked are flock(1) for a wrapper in an image without
 * util-linux (a busybox without the applet): rm-monitor's status lock.
 *
 * Exit 0, 1 when a file could not be made or written, 2 on a usage error;
 * after --claim and --open, CMD's own status.
 */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "outfile.h"
#include "rmtools.h"

static const char prog[] = "rm-out";

#define MAX_NAMES 16
#define MAX_RUNS 1000

struct opts {
	const char *claim, *open, *write, *check, *lock, *unlocked, *mode_arg, *prog;
	const char *create[MAX_NAMES], *reserve[MAX_NAMES], *latest[MAX_NAMES];
	int ncreate, nreserve, nlatest;
	mode_t mode;
};

#define OFF(f) offsetof(struct opts, f)
enum { O_CLAIM = RM_CLI_LONG, O_CREATE, O_RESERVE, O_LATEST, O_OPEN, O_WRITE, O_CHECK, O_LOCK,
       O_UNLOCKED, O_MODE, O_PROG };

static const struct rm_cli_opt options[] = {
	{ O_CLAIM, "claim", "DIR/STEM", .kind = RM_CLI_STRING, .off = OFF(claim),
	  .help = "claim the first free STEM, STEM-2, ... in DIR, then run CMD" },
	{ O_CREATE, "create", "SUFFIX", .help = "with --claim: make STEM.SUFFIX, opened on fd 3, 4, ..." },
	{ O_RESERVE, "reserve", "SUFFIX", .help = "with --claim: STEM.SUFFIX must not exist either" },
	{ O_LATEST, "latest", "SUFFIX", .help = "with --claim: link STEM.latest.SUFFIX to it" },
	{ O_OPEN, "open", "FILE", .kind = RM_CLI_STRING, .off = OFF(open),
	  .help = "open FILE to stream into (emptied) on fd 3, then run CMD" },
	{ O_WRITE, "write", "FILE", .kind = RM_CLI_STRING, .off = OFF(write),
	  .help = "standard input to FILE, whole, renamed into place" },
	{ O_CHECK, "check", "FILE", .kind = RM_CLI_STRING, .off = OFF(check),
	  .help = "exit 0 when FILE could be written, touching nothing" },
	{ O_LOCK, "lock", "FD", .kind = RM_CLI_STRING, .off = OFF(lock),
	  .help = "flock the open descriptor FD, never waiting: exit 1 when held" },
	{ O_UNLOCKED, "unlocked", "FILE", .kind = RM_CLI_STRING, .off = OFF(unlocked),
	  .help = "exit 0 when no process holds a lock on FILE" },
	{ O_MODE, "mode", "OCTAL", .kind = RM_CLI_STRING, .off = OFF(mode_arg),
	  .help = "the mode of what is made (default 0644 less the umask)" },
	{ O_PROG, "prog", "NAME", .kind = RM_CLI_STRING, .off = OFF(prog),
	  .help = "begin messages with NAME (the wrapper's own)" },
	RM_CLI_END,
};

static const struct rm_cli cli = {
	prog,
	(const char *const[]){
		"--claim [--create] [--reserve] [--latest] [--mode] [--prog] -- CMD ARGS",
		"--open [--prog] -- CMD ARGS", "--write [--mode] [--prog]", "--check [--prog]", "--lock [--prog]",
		"--unlocked [--prog]", NULL },
	"Make the shell wrappers' files in a directory another user may write,\n"
	"never through a name swapped meanwhile: claim a run's files and run CMD\n"
	"with them open, open FILE to stream into and run CMD with it, write\n"
	"standard input to FILE whole, check that FILE\n"
	"could be written, or lock a descriptor and ask whether a file is locked.",
	options,
	NULL,
};

/* A suffix: a plain name part, no '/'. */
static const char *suffix_arg(const char *s)
{
	if (!*s || strchr(s, '/') || !strcmp(s, ".") || !strcmp(s, ".."))
		rm_cli_usage_error(&cli, "invalid suffix '%s': a name without '/'", s);
	return s;
}

static void add(const char **list, int *n, const char *s)
{
	if (*n >= MAX_NAMES)
		rm_cli_usage_error(&cli, "at most %d names of one kind", MAX_NAMES);
	list[(*n)++] = suffix_arg(s);
}

static void parse_args(int argc, char **argv, struct opts *o)
{
	int c, modes = 0;
	mode_t mask = umask(022);

	umask(mask);
	memset(o, 0, sizeof(*o));
	while ((c = rm_cli_next(&cli, RM_CLI_IN_ORDER, argc, argv, o)) != -1) {
		switch (c) {
		case O_CREATE:
			add(o->create, &o->ncreate, optarg);
			break;
		case O_RESERVE:
			add(o->reserve, &o->nreserve, optarg);
			break;
		case O_LATEST:
			add(o->latest, &o->nlatest, optarg);
			break;
		default:
			break;
		}
	}
	if (o->prog) {
		if (!*o->prog || strchr(o->prog, '/'))
			rm_cli_usage_error(&cli, "invalid --prog '%s'", o->prog);
		program_invocation_short_name = (char *)o->prog;
	}
	modes = !!o->claim + !!o->open + !!o->write + !!o->check + !!o->lock + !!o->unlocked;
	if (modes != 1)
		rm_cli_usage_error(&cli, "give one of --claim, --open, --write, --check, --lock and --unlocked");
	o->mode = 0644 & ~mask;
	if (o->mode_arg) {
		char *end;
		long m = strtol(o->mode_arg, &end, 8);

		if (!*o->mode_arg || *end || m < 0 || m > 0777)
			rm_cli_usage_error(&cli, "invalid --mode '%s': octal, 0 to 0777", o->mode_arg);
		o->mode = (mode_t)m;
	}
	if (o->claim && !o->ncreate)
		rm_cli_usage_error(&cli, "--claim needs --create SUFFIX");
	if (!o->claim && (o->ncreate || o->nreserve || o->nlatest))
		rm_cli_usage_error(&cli, "--create, --reserve and --latest go with --claim");
	if ((o->claim || o->open) && optind >= argc)
		rm_cli_usage_error(&cli, "%s needs -- CMD to run", o->claim ? "--claim" : "--open");
	if (!o->claim && !o->open && optind < argc)
		rm_cli_usage_error(&cli, "unexpected argument '%s'", argv[optind]);
}

/* name = base + "." + suffix, in buf; 0, or -1 when it does not fit. */
static int name_of(char *buf, size_t n, const char *base, const char *suffix)
{
	return (size_t)snprintf(buf, n, "%s.%s", base, suffix) < n ? 0 : -1;
}

/* 1 when base.SUFFIX exists (a dangling symlink too) for any suffix. */
static int taken(int dirfd, const char *base, const char *const *list, int n)
{
	char name[512];
	struct stat st;

	for (int i = 0; i < n; i++)
		if (name_of(name, sizeof(name), base, list[i]) < 0 ||
		    fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT)
			return 1;
	return 0;
}

/*
 * --claim: the first base none of whose names are there, its --create
 * files made O_EXCL (a race lost to another monitor moves on to the next
 * base), the fds moved to 3, 4, ...; the latest links; then CMD.
 */
static int claim(const struct opts *o, char **cmd)
{
	char base[400], name[512], link[512], why[256];
	const char *stem;
	int dirfd, fds[MAX_NAMES], made, n, dlen;

	if ((dirfd = rm_out_dir_open(o->claim, &stem)) < 0)
		err(RM_EXIT_FAIL, "cannot use the directory of '%s'", o->claim);
	if (!*stem || strlen(stem) > 300)
		errx(RM_EXIT_USAGE, "invalid --claim '%s': DIR/STEM", o->claim);
	dlen = (int)(stem - o->claim);   /* "DIR/", to name a link in a message */
	for (n = 1; n <= MAX_RUNS; n++) {
		if (n == 1)
			snprintf(base, sizeof(base), "%s", stem);
		else
			snprintf(base, sizeof(base), "%s-%d", stem, n);
		if (taken(dirfd, base, o->create, o->ncreate) ||
		    taken(dirfd, base, o->reserve, o->nreserve))
			continue;
		for (made = 0; made < o->ncreate; made++) {
			name_of(name, sizeof(name), base, o->create[made]);
			fds[made] = rm_out_create_at(dirfd, name, O_WRONLY | O_APPEND, o->mode,
						     why, sizeof(why));
			if (fds[made] < 0)
				break;
		}
		if (made == o->ncreate)
			break;
		if (errno != EEXIST)
			errx(RM_EXIT_FAIL, "cannot create '%s' in the directory of '%s': %s",
			     name, o->claim, why);
		/* Another run took a name between our look and our create. */
		while (made-- > 0) {
			close(fds[made]);
			name_of(name, sizeof(name), base, o->create[made]);
			unlinkat(dirfd, name, 0);
		}
	}
	if (n > MAX_RUNS)
		errx(RM_EXIT_FAIL, "cannot find a free name for '%s'", o->claim);
	for (int i = 0; i < o->nlatest; i++) {
		if (name_of(link, sizeof(link), stem, "latest") < 0 ||
		    name_of(link, sizeof(link), strcpy(name, link), o->latest[i]) < 0 ||
		    name_of(name, sizeof(name), base, o->latest[i]) < 0)
			continue;
		if (rm_out_symlink_at(dirfd, name, link, why, sizeof(why)) == 0)
			continue;
		if (errno == EEXIST)
			warnx("'%.*s%s' is not a symlink: left as it is", dlen, o->claim, link);
		else
			warnx("cannot update '%.*s%s': %s", dlen, o->claim, link, why);
	}
	close(dirfd);
	/* fds[i] to 3 + i: each moved above every target first, so no dup2
	 * closes one not yet moved. */
	for (int i = 0; i < o->ncreate; i++) {
		int high = fcntl(fds[i], F_DUPFD, 3 + o->ncreate);

		if (high < 0)
			err(RM_EXIT_FAIL, "cannot move a descriptor");
		close(fds[i]);
		fds[i] = high;
	}
	for (int i = 0; i < o->ncreate; i++) {
		if (dup2(fds[i], 3 + i) < 0)
			err(RM_EXIT_FAIL, "cannot move a descriptor");
		close(fds[i]);
	}
	if (setenv("RM_OUT_BASE", base, 1) < 0)
		err(RM_EXIT_FAIL, "cannot set RM_OUT_BASE");
	execvp(cmd[0], cmd);
	err(127, "cannot run '%s'", cmd[0]);
}

/* --open FILE -- CMD: FILE on fd 3 (lib/outfile's stream rules), then CMD. */
static int open_file(const struct opts *o, char **cmd)
{
	char why[256];
	int fd = rm_out_open_stream(o->open, why, sizeof(why));

	if (fd < 0)
		errx(RM_EXIT_FAIL, "cannot write '%s': %s", o->open, why);
	/* Opened close-on-exec: fd 3 is a copy without it. */
	if ((fd != 3 && (dup2(fd, 3) < 0 || (rm_out_inherited_fd(o->open) != fd && close(fd) < 0))) ||
	    fcntl(3, F_SETFD, 0) < 0)
		err(RM_EXIT_FAIL, "cannot move a descriptor");
	execvp(cmd[0], cmd);
	err(127, "cannot run '%s'", cmd[0]);
}

/* --write: standard input to FILE through a temporary file and a rename. */
static int write_file(const struct opts *o)
{
	struct rm_outfile out;
	char why[256], buf[65536];
	ssize_t got;

	if (rm_out_open(o->write, &out, why, sizeof(why)) < 0)
		errx(RM_EXIT_FAIL, "cannot write '%s': %s", o->write, why);
	if (out.tmp && o->mode_arg && fchmod(out.fd, o->mode) < 0) {
		rm_out_abort(&out);
		err(RM_EXIT_FAIL, "cannot write '%s'", o->write);
	}
	while ((got = read(STDIN_FILENO, buf, sizeof(buf))) != 0) {
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			rm_out_abort(&out);
			err(RM_EXIT_FAIL, "cannot read standard input");
		}
		for (ssize_t off = 0; off < got;) {
			ssize_t w = write(out.fd, buf + off, (size_t)(got - off));

			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0) {
				int e = errno;

				rm_out_abort(&out);
				errno = e;
				err(RM_EXIT_FAIL, "cannot write '%s'", o->write);
			}
			off += w;
		}
	}
	if (rm_out_commit(&out, why, sizeof(why)) < 0)
		errx(RM_EXIT_FAIL, "cannot write '%s': %s", o->write, why);
	return RM_EXIT_OK;
}

/* 1 when the filesystem of fd is mounted read-only (or is /proc, where
 * root passes the access check and still cannot create a file). */
static int fstatvfs_ro(int fd)
{
	struct statfs sf;

	if (fstatfs(fd, &sf) < 0)
		return 0;
	return (sf.f_flags & ST_RDONLY) || sf.f_type == PROC_SUPER_MAGIC || sf.f_type == SYSFS_MAGIC;
}

/* --check: what rm_out_open would refuse, found without making anything. */
static int check_file(const struct opts *o)
{
	struct stat st;
	const char *base;
	char why[256];
	int dirfd, fd;

	if (rm_out_inherited_fd(o->check) >= 0)
		return fcntl(rm_out_inherited_fd(o->check), F_GETFL) < 0 ?
			       (warnx("cannot write '%s': not an open descriptor", o->check), RM_EXIT_FAIL) :
			       RM_EXIT_OK;
	if ((dirfd = rm_out_dir_open(o->check, &base)) < 0) {
		const char *slash = strrchr(o->check, '/');
		int dl = slash ? (slash == o->check ? 1 : (int)(slash - o->check)) : 1;

		warnx("cannot write '%s': no directory '%.*s'", o->check, dl, slash ? o->check : ".");
		return RM_EXIT_FAIL;
	}
	if (!*base || (fstatat(dirfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode))) {
		warnx("cannot write '%s': a directory", o->check);
		return RM_EXIT_FAIL;
	}
	if (fstatat(dirfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (S_ISLNK(st.st_mode)) {
			warnx("cannot write '%s': %s", o->check, RM_OUT_SYMLINK_WHY);
			return RM_EXIT_FAIL;
		}
		if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode) && !S_ISCHR(st.st_mode)) {
			warnx("cannot write '%s': not a regular file, FIFO or terminal", o->check);
			return RM_EXIT_FAIL;
		}
		if (!S_ISREG(st.st_mode)) {
			/* Opened the way rm_out_open opens it: never blocks. */
			if ((fd = rm_out_openat(dirfd, base, O_WRONLY, 0, why, sizeof(why))) < 0) {
				warnx("cannot write '%s': %s", o->check, why);
				return RM_EXIT_FAIL;
			}
			close(fd);
		} else if (faccessat(dirfd, base, W_OK, AT_EACCESS | AT_SYMLINK_NOFOLLOW) < 0) {
			warnx("cannot write '%s': not writable", o->check);
			return RM_EXIT_FAIL;
		}
	}
	/* A new file, or the temporary file a rewrite needs, goes in dirfd. */
	if (faccessat(dirfd, ".", W_OK | X_OK, AT_EACCESS) < 0 ||
	    fstatvfs_ro(dirfd)) {
		const char *slash = strrchr(o->check, '/');
		int dl = slash ? (slash == o->check ? 1 : (int)(slash - o->check)) : 1;

		warnx("cannot write '%s': cannot create a file in '%.*s'", o->check, dl,
		      slash ? o->check : ".");
		return RM_EXIT_FAIL;
	}
	close(dirfd);
	return RM_EXIT_OK;
}

/* --lock FD: an exclusive flock on an inherited descriptor, never waiting. */
static int lock_fd(const struct opts *o)
{
	char *end;
	long fd = strtol(o->lock, &end, 10);

	if (!*o->lock || *end || fd < 0 || fd > 1 << 20)
		rm_cli_usage_error(&cli, "invalid --lock '%s': a descriptor number", o->lock);
	if (flock((int)fd, LOCK_EX | LOCK_NB) == 0)
		return RM_EXIT_OK;
	if (errno == EWOULDBLOCK)
		warnx("descriptor %ld: locked by another process", fd);
	else
		warn("cannot lock descriptor %ld", fd);
	return RM_EXIT_FAIL;
}

/* --unlocked FILE: 0 when a lock on FILE could be had (and is let go at
 * once), 1 when a process holds one or FILE is not a plain file. */
static int unlocked(const struct opts *o)
{
	struct stat st;
	int fd = open(o->unlocked, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);

	if (fd < 0) {
		warn("cannot open '%s'", o->unlocked);
		return RM_EXIT_FAIL;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		warnx("'%s': not a regular file", o->unlocked);
		close(fd);
		return RM_EXIT_FAIL;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		close(fd);
		return RM_EXIT_FAIL;
	}
	close(fd);
	return RM_EXIT_OK;
}

int main(int argc, char **argv)
{
	struct opts o;

	rm_set_prog(prog);
	parse_args(argc, argv, &o);
	if (o.claim)
		return claim(&o, argv + optind);
	if (o.open)
		return open_file(&o, argv + optind);
	if (o.write)
		return write_file(&o);
	if (o.lock)
		return lock_fd(&o);
	if (o.unlocked)
		return unlocked(&o);
	return check_file(&o);
}
