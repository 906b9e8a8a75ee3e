/*
 * rm-tree --live FILE and --live-tty: the build now, for a person or for
 * `rm-monitor status`, at most once a tick and once a second.
 *
 * --live FILE is rewritten whole every tick, at most once a second, with
 * the exit log's mode where that is a file, through lib/outfile (a
 * temporary file renamed into place, never through a symbolic link; not
 * flushed to disk, as the next tick replaces it): a header and one row per
 * process of the three largest now (one row with an empty rank when none
 * lives), each row with the totals:
 *   epoch,elapsed_s,procs,rss_kib,peak_rss_kib,tree_pid,rank,pid,comm,proc_rss_kib,unit
 * --live-tty writes one status line to standard error when it is a
 * terminal, at most once a second, cut to the terminal's width, and
 * clears it at the end; CMD's own output interleaves with it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cu.h"
#include "outfile.h"
#include "stream.h"

#define LIVE_TOP 3

static double live_tty_last = -1;
static int live_tty_on = -1;   /* -1 not decided, 0 no, 1 yes */

/* The three largest live members, largest first; how many. */
static int largest(struct rm_pnode **top)
{
	struct rm_pnode *n;
	size_t it = 0;
	int k = 0;

	while ((n = table_next(&it)) != NULL) {
		int i;
		if (!table_is_member(n) || n->state == 'Z' || n->state == 'X')
			continue;
		for (i = k; i > 0 && top[i - 1]->rss_kib < n->rss_kib; i--)
			if (i < LIVE_TOP)
				top[i] = top[i - 1];
		if (i < LIVE_TOP) {
			top[i] = n;
			if (k < LIVE_TOP)
				k++;
		}
	}
	return k;
}

/* The unit of n (its source, crate or output), else its comm. */
static void unit_of(const struct rm_pnode *n, char *out, size_t size)
{
	char comm[RM_COMM_MAX * 4 + 1];

	if (n->cmd && rm_cu_is_compiler(n->comm) && rm_cu_source(n->cmd, strlen(n->cmd), out, size))
		return;
	rm_sanitize(n->comm, strlen(n->comm), comm, sizeof(comm));
	snprintf(out, size, "%s", comm);
}

static void live_file(struct stream *s, double el, size_t procs, uint64_t rss, int known,
		      struct rm_pnode **top, int k)
{
	struct rm_outfile of;
	struct rm_buf b = { 0 };
	char why[256];
	static int told;
	double epoch = rm_now_epoch();

	rm_buf_adds(&b, "epoch,elapsed_s,procs,rss_kib,peak_rss_kib,tree_pid,rank,pid,comm,"
			"proc_rss_kib,unit\n");
	for (int i = 0; i < (k ? k : 1); i++) {
		char unit[RM_TEXT_MAX + 1], comm[RM_COMM_MAX * 4 + 1];
		rm_buf_addf(&b, "%.3f,%.3f,%zu,", epoch, el, procs);
		if (known)
			rm_buf_u64(&b, rss);
		rm_buf_addc(&b, ',');
		if (s->has_peak_total)
			rm_buf_u64(&b, s->peak_total);
		rm_buf_addf(&b, ",%d,", (int)getpid());
		if (k) {
			unit_of(top[i], unit, sizeof(unit));
			rm_sanitize(top[i]->comm, strlen(top[i]->comm), comm, sizeof(comm));
			rm_buf_addf(&b, "%d,%d,", i + 1, top[i]->pid);
			rm_buf_csv(&b, comm);
			rm_buf_addc(&b, ',');
			rm_buf_u64(&b, top[i]->rss_kib);
			rm_buf_addc(&b, ',');
			rm_buf_csv(&b, unit);
		} else {
			rm_buf_adds(&b, ",,,,");
		}
		rm_buf_addc(&b, '\n');
	}
	if (b.oom || rm_out_open(s->o->live, &of, why, sizeof(why)) < 0) {
		if (!told++)
			tree_warnx("cannot write --live '%s': %s", s->o->live, b.oom ? strerror(ENOMEM) : why);
		rm_buf_free(&b);
		return;
	}
	of.no_sync = 1;
	{
		/* The run's mode: the exit log's, when it is a file (rm-monitor
		 * claims it with the CSV's mode), never more open than that. */
		struct stat st;
		if (fstat(s->log_fd, &st) == 0 && S_ISREG(st.st_mode))
			(void)fchmod(of.fd, st.st_mode & 0666);
	}
	if (rm_buf_write(of.fd, &b) < 0) {
		rm_out_abort(&of);
		if (!told++)
			tree_warnx("cannot write --live '%s': %s", s->o->live, strerror(errno));
	} else if (rm_out_commit(&of, why, sizeof(why)) < 0 && !told++) {
		tree_warnx("cannot write --live '%s': %s", s->o->live, why);
	}
	rm_buf_free(&b);
}

static void fmt_size(char *buf, size_t size, uint64_t kib)
{
	if (kib >= 1024 * 1024)
		snprintf(buf, size, "%.1f GiB", (double)kib / 1048576.0);
	else
		snprintf(buf, size, "%.0f MiB", (double)kib / 1024.0);
}

static void live_line(struct stream *s, double el, size_t procs, uint64_t rss,
		      struct rm_pnode **top, int k)
{
	char line[512], now[32], peak[32], big[32], unit[RM_TEXT_MAX + 1];
	struct winsize ws;
	int n, width = 80;
	long t = (long)el;

	if (live_tty_on < 0)
		live_tty_on = isatty(STDERR_FILENO) ? 1 : 0;
	if (!live_tty_on || (live_tty_last >= 0 && el - live_tty_last < 1.0))
		return;
	live_tty_last = el;
	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 10)
		width = ws.ws_col;
	fmt_size(now, sizeof(now), rss);
	fmt_size(peak, sizeof(peak), s->has_peak_total ? s->peak_total : rss);
	n = snprintf(line, sizeof(line), "\r\033[K[rm-run +%ld:%02ld:%02ld] tree %s, peak %s, %zu process%s",
		     t / 3600, t / 60 % 60, t % 60, now, peak, procs, procs == 1 ? "" : "es");
	if (k && n > 0 && (size_t)n < sizeof(line)) {
		unit_of(top[0], unit, sizeof(unit));
		fmt_size(big, sizeof(big), top[0]->rss_kib);
		n += snprintf(line + n, sizeof(line) - (size_t)n, "; largest %s %s", unit, big);
	}
	if (n < 0)
		return;
	/* "\r\033[K" takes no columns: cut the rest to the width less one. */
	if ((size_t)n > sizeof(line) - 1)
		n = (int)sizeof(line) - 1;
	if (n > width - 1 + 4)
		n = width - 1 + 4;
	while (n > 4 && ((unsigned char)line[n] & 0xC0) == 0x80)
		n--;  /* not inside a UTF-8 character */
	(void)!write(STDERR_FILENO, line, (size_t)n);
}

void live_tick(struct stream *s, double el, size_t procs, uint64_t rss, int known)
{
	static double file_last = -1;
	struct rm_pnode *top[LIVE_TOP];
	int k, file;

	/* The file at most once a second: a status view needs no more, and
	 * each rewrite is a file made and renamed. */
	file = s->o->live && (file_last < 0 || el - file_last >= 1.0);
	if (!file && !s->o->live_tty)
		return;
	k = largest(top);
	if (file) {
		file_last = el;
		live_file(s, el, procs, rss, known, top, k);
	}
	if (s->o->live_tty)
		live_line(s, el, procs, rss, top, k);
}

void live_end(struct stream *s)
{
	if (s->o->live_tty && live_tty_on == 1 && live_tty_last >= 0)
		(void)!write(STDERR_FILENO, "\r\033[K", 4);
}
