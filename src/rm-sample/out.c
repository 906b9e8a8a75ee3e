/*
 * rm-sample's outputs: the row formatted and written (emit), -o and
 * its lost rows, the CSV header, --status, --prom-file.
 */
#include "rm-sample.h"

/*
 * Where rows go: stdout, or with -o a file whose write failures are
 * counted rather than fatal, so a full disk costs rows, not the monitor.
 */
static int out_fd = STDOUT_FILENO;
static int header_pending;
long rows_lost;
static double lost_from;        /* epoch of the first row lost */
static int lost_errno;

/*
 * --status FILE: what the monitor needs to know of this run, rewritten
 * after every row.  Its text only grows while rows are written (counts,
 * then first_lost and lost_error once), so it is rewritten in place: one
 * pwrite(2) at its start on the descriptor kept from its creation, two
 * system calls where a new file and a rename(2) took six and the
 * filesystem a new inode each row.  Should a text ever be shorter than
 * the last one, the file is replaced atomically instead (a temporary
 * file beside it + rename), as the first one is, so that it never holds
 * a stale tail.
 */
long rows_written, gaps;
double gap_max;
long stage_fallback;     /* rows staged by the log: no stage file */

/* Replace the status file by a new one holding b; its descriptor, or -1. */
static int status_replace(const struct opts *o, const struct rm_buf *b)
{
	char tmp[4200];
	const char *slash = strrchr(o->status_file, '/');
	int fd;

	if (slash)
		snprintf(tmp, sizeof(tmp), "%.*s/.%s.XXXXXX", (int)(slash - o->status_file),
			 o->status_file, slash + 1);
	else
		snprintf(tmp, sizeof(tmp), ".%s.XXXXXX", o->status_file);
	fd = mkstemp(tmp);
	if (fd < 0)
		return -1;
	if (fchmod(fd, 0644) < 0 || rm_buf_write(fd, b) < 0 || rename(tmp, o->status_file) < 0) {
		unlink(tmp);
		close(fd);
		return -1;
	}
	return fd;
}

void status_write(const struct opts *o, int final)
{
	static int told, fd = -1;
	static size_t len;      /* of the text in the file now */
	char iso[40] = "", line[512];
	struct rm_buf b = { 0 };
	int ok;

	if (!o->status_file)
		return;
	if (rows_lost)
		rm_fmt_iso(lost_from, iso, sizeof(iso));
	snprintf(line, sizeof(line),
		 "rows_written=%ld\nrows_lost=%ld\nfirst_lost=%s\nlost_error=%s\n"
		 "gaps=%ld\nlongest_gap_s=", rows_written, rows_lost, iso,
		 rows_lost ? strerror(lost_errno) : "", gaps);
	rm_buf_adds(&b, line);
	if (gaps)
		rm_buf_num(&b, gap_max, 3);
	/* The bursts of process events the kernel dropped (socket buffer
	 * full) before the compilers column read them: each was followed by
	 * a /proc scan.  rm-summarize --sampler-status counts them. */
	rm_buf_addf(&b, "\nstage_fallback=%ld\nevents_dropped=%llu\nfinal=%d\n", stage_fallback,
		    (unsigned long long)compilers_pc.lost, final);
	if (fd >= 0 && b.len >= len) {
		ok = pwrite(fd, b.p, b.len, 0) == (ssize_t)b.len;
	} else {
		if (fd >= 0)
			close(fd);
		fd = status_replace(o, &b);
		ok = fd >= 0;
	}
	if (ok)
		len = b.len;
	if (final && fd >= 0) {
		ok = close(fd) == 0 && ok;
		fd = -1;
	}
	if (!ok && !told++)
		warn("cannot write --status '%s'", o->status_file);
	rm_buf_free(&b);
}

/* The directory of --prom-file must be one we can write, from the start. */
void check_prom_dir(const struct opts *o)
{
	char dir[4096];
	const char *slash = strrchr(o->prom_file, '/');
	struct stat st;

	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == o->prom_file)
		snprintf(dir, sizeof(dir), "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - o->prom_file), o->prom_file);
	if (stat(dir, &st) < 0 || (!S_ISDIR(st.st_mode) && (errno = ENOTDIR)) ||
	    access(dir, W_OK | X_OK) < 0)
		err(RM_EXIT_FAIL, "cannot write --prom-file '%s'", o->prom_file);
}

/* A write failure that costs rows but not the stream (only with -o). */
static int lost_is_tolerable(int e)
{
	return e == ENOSPC || e == EDQUOT || e == EFBIG || e == EIO;
}

/* Write b to the output; with -o, count what the filesystem refuses. */
static void out_write(struct rm_buf *b, double epoch)
{
	if (out_fd == STDOUT_FILENO) {
		rm_out(b);
		rows_written++;
		return;
	}
	if (rm_buf_write(out_fd, b) == 0) {
		rows_written++;
	} else {
		if (!lost_is_tolerable(errno))
			err(RM_EXIT_FAIL, "cannot write to output");
		if (rows_lost++ == 0) {
			lost_from = epoch;
			lost_errno = errno;
		}
	}
	rm_buf_reset(b);
}

/*
 * Replace the Prometheus file with this row: a new temporary file beside
 * it (O_EXCL through mkstemp), then rename(2), so a scraper reads the old
 * file or the new one, never half of one.  A failure skips this tick.
 */
static void prom_file_write(const struct opts *o, const struct rm_val *v)
{
	static struct rm_buf pb;
	char tmp[4096];
	const char *slash = strrchr(o->prom_file, '/');
	int fd;

	if (slash)
		snprintf(tmp, sizeof(tmp), "%.*s/.%s.XXXXXX", (int)(slash - o->prom_file),
			 o->prom_file, slash + 1);
	else
		snprintf(tmp, sizeof(tmp), ".%s.XXXXXX", o->prom_file);
	rm_buf_reset(&pb);
	rm_emit_prom(&pb, ocols, v, nout, 1, o->prom_labels.len ? o->prom_labels.p : NULL);
	fd = mkstemp(tmp);
	if (fd < 0)
		return;
	if (fchmod(fd, 0644) < 0 || rm_buf_write(fd, &pb) < 0 || close(fd) < 0 ||
	    rename(tmp, o->prom_file) < 0) {
		unlink(tmp);
		return;
	}
}

void emit(const struct opts *o, struct rm_buf *b, const struct rm_val *all)
{
	struct rm_val v[C_NCOLS];

	for (int i = 0; i < nout; i++)
		v[i] = all[osel[i]];
	if (header_pending) {
		/* A header the disk refused is tried again before the next row. */
		rm_emit_csv_header(b, ocols, nout);
		if (rm_buf_write(out_fd, b) == 0)
			header_pending = 0;
		rm_buf_reset(b);
		if (header_pending) {
			if (rows_lost++ == 0) {
				lost_from = all[C_EPOCH].num;
				lost_errno = errno;
			}
			status_write(o, 0);
			return;
		}
	}
	switch (o->fmt) {
	case RM_FMT_CSV:
		if (o->seed_cols) {
			/* The seed quoted its context always: "%s" with "" inside. */
			rm_emit_csv_row(b, ocols, v, nout - 1);
			b->len--;
			rm_buf_adds(b, ",\"");
			for (const char *p = v[nout - 1].str; p && *p; p++) {
				if (*p == '"')
					rm_buf_addc(b, '"');
				rm_buf_addc(b, *p);
			}
			rm_buf_adds(b, "\"\n");
		} else {
			rm_emit_csv_row(b, ocols, v, nout);
		}
		break;
	case RM_FMT_JSONL:
		rm_emit_jsonl(b, ocols, v, nout);
		break;
	case RM_FMT_PROM:
		rm_emit_prom(b, ocols, v, nout, 1, NULL);
		break;
	}
	out_write(b, all[C_EPOCH].num);
	status_write(o, 0);
	if (o->prom_file)
		prom_file_write(o, v);
	serve_keep(v);
}

/*
 * An existing, non-empty -o file must hold what we would write: our CSV
 * header, JSON lines, or Prometheus text; rows of another shape appended
 * to it would make a file no reader takes.
 */
static void check_append(const struct opts *o, int fd)
{
	char first[8192], self[64];
	struct rm_buf h = { 0 };
	ssize_t n;
	char *nl;
	int ok, rfd;

	/* fd is write-only: read the same file through /proc/self/fd. */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	rfd = open(self, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (rfd < 0)
		return;
	n = pread(rfd, first, sizeof(first) - 1, 0);
	close(rfd);
	if (n <= 0)
		return;
	first[n] = '\0';
	nl = strchr(first, '\n');
	if (nl)
		*nl = '\0';
	if (o->fmt == RM_FMT_CSV) {
		rm_emit_csv_header(&h, ocols, nout);
		ok = h.len > 0 && strlen(first) == h.len - 1 && memcmp(first, h.p, h.len - 1) == 0;
		if (!o->header)
			ok = first[0] != '{' && first[0] != '#' && strncmp(first, "epoch,", 6) != 0;
		rm_buf_free(&h);
	} else if (o->fmt == RM_FMT_JSONL) {
		ok = first[0] == '{';
	} else {
		ok = first[0] == '#';
	}
	if (!ok)
		errx(RM_EXIT_FAIL, "cannot append to '%s': it holds another format or other columns",
		     o->output);
}

/* -o FILE: append, never through a symlink; the header only when empty.
 * /dev/stdout and the like are the descriptors we were given.  Created
 * with the umask, and never readable by others when we are root. */
void open_output(const struct opts *o, int create)
{
	struct stat st;
	const char *base;
	char why[256];
	int fd, dirfd;

	if (!o->output)
		return;
	fd = rm_out_inherited_fd(o->output);
	if (fd >= 0) {
		out_fd = fd;
		/* A file handed on open (rm-monitor's -o /dev/fd/3) is appended
		 * to as a named one is: its header kept, once. */
		if (fd > STDERR_FILENO && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
			check_append(o, out_fd);
			header_pending = -1;
		}
		return;
	}
	/* Through its directory's descriptor, never blocking on a FIFO with
	 * no reader (refused, where a plain open waited for ever). */
	if ((dirfd = rm_out_dir_open(o->output, &base)) < 0)
		err(RM_EXIT_FAIL, "cannot open '%s'", o->output);
	out_fd = rm_out_openat(dirfd, base, O_WRONLY | (create ? O_CREAT : 0) | O_APPEND,
			       geteuid() == 0 ? 0640 : 0666, why, sizeof(why));
	close(dirfd);
	if (out_fd < 0 && !create && errno == ENOENT)
		return;
	if (out_fd < 0)
		errx(RM_EXIT_FAIL, "cannot open '%s': %s", o->output, why);
	if (fstat(out_fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
		check_append(o, out_fd);
		header_pending = -1;
	}
}

/* The rows -o could not write, said once at the end; the exit status. */
int report_lost(const struct opts *o)
{
	char iso[40];

	if (out_fd != STDOUT_FILENO && close(out_fd) < 0 && !lost_is_tolerable(errno)) {
		warn("cannot write to '%s'", o->output);
		return RM_EXIT_FAIL;
	}
	if (!rows_lost)
		return RM_EXIT_OK;
	if (o->status_file)
		return RM_EXIT_FAIL;   /* the count is in the status file */
	rm_fmt_iso(lost_from, iso, sizeof(iso));
	errno = lost_errno;
	warn("%ld rows lost from %s: cannot write to '%s'", rows_lost, iso, o->output);
	return RM_EXIT_FAIL;
}

/* The CSV header: now on stdout, with the first row in a file, or none
 * when appending to a file that has one. */
void start_header(const struct opts *o, struct rm_buf *b)
{
	if (o->header && o->fmt == RM_FMT_CSV) {
		if (header_pending < 0) {
			header_pending = 0;   /* appending to a file that has one */
		} else if (out_fd == STDOUT_FILENO) {
			rm_emit_csv_header(b, ocols, nout);
			rm_out(b);
		} else {
			header_pending = 1;   /* written with the first row */
		}
	} else {
		header_pending = 0;
	}
}
