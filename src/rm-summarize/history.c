/*
 * history.c: --run-csv and --history (see history.h).  The run files are
 * small and outside input: each is opened relative to the directory's
 * descriptor, never through a symbolic link, regular files only, read to
 * at most 64 KiB, and its fields are sanitized before they are printed.
 */
#include <dirent.h>
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "csvread.h"
#include "fmt.h"
#include "runfig.h"
#include "history.h"
#include "procfs.h"

#define RUN_FILE_MAX (64 * 1024)

/* "resources-ID.csv" -> "ID"; another name loses its directory and .csv. */
static void run_id_of(const char *file, char *id, size_t size)
{
	const char *b = strrchr(file, '/');
	size_t n;

	b = b ? b + 1 : file;
	if (strncmp(b, "resources-", 10) == 0)
		b += 10;
	n = strlen(b);
	if (n > 4 && strcmp(b + n - 4, ".csv") == 0)
		n -= 4;
	snprintf(id, size, "%.*s", (int)n, b);
}

static void num_cell(struct rm_buf *b, double v, int prec)
{
	if (!isnan(v))
		rm_buf_num(b, v, prec);
	rm_buf_addc(b, ',');
}

int write_run_csv(const struct report *r, const char *path)
{
	struct rm_buf b = { 0 };
	const struct sys *s = r->sys;
	const struct proc *big = largest_row(r);
	const char *src = "";
	char id[256], iso[40] = "";
	double start = NAN, used;
	int exact, rc;

	run_id_of(r->sys ? r->sys->file : r->nfiles ? r->files[0] : "", id, sizeof(id));
	if (s && s->samples > 0)
		start = s->first_epoch;
	else if (r->job.known)
		start = r->job.start_epoch;
	if (!isnan(start))
		rm_fmt_iso(start, iso, sizeof(iso));
	used = run_used_kib(r, &exact);
	if (!isnan(used)) {
		src = exact ? "cgroup" : "sampled";
		used /= 1024.0;
	} else if (s && s->pk[PK_MEM_USED].known) {
		used = s->pk[PK_MEM_USED].v;
		src = "host";
	}
	rm_buf_adds(&b, RUN_CSV_HEADER "\n");
	rm_buf_csv(&b, id);
	rm_buf_addc(&b, ',');
	rm_buf_csv(&b, iso);
	rm_buf_addc(&b, ',');
	num_cell(&b, start, 3);
	num_cell(&b, run_duration(r), 1);
	rm_buf_csv(&b, r->job.known ? r->job.exit : "");
	rm_buf_addc(&b, ',');
	num_cell(&b, used, 1);
	rm_buf_csv(&b, src);
	rm_buf_addc(&b, ',');
	num_cell(&b, run_ooms(r), 0);
	num_cell(&b, s && near_known(s) ? (double)s->near.samples : NAN, 0);
	rm_buf_csv(&b, r->nunits ? r->units[0].name : "");
	rm_buf_addc(&b, ',');
	num_cell(&b, r->nunits ? r->units[0].peak_kib / 1024.0 : NAN, 1);
	rm_buf_csv(&b, big ? big->comm : "");
	rm_buf_addc(&b, ',');
	if (big && !isnan(big->peak_kib))
		rm_buf_num(&b, big->peak_kib / 1024.0, 1);
	rm_buf_addc(&b, '\n');
	if (b.oom) {
		rm_buf_free(&b);
		errno = ENOMEM;
		return -1;
	}
	rc = write_whole(path, &b);
	rm_buf_free(&b);
	return rc;
}

enum { H_ID, H_START, H_EPOCH, H_DUR, H_EXIT, H_USED, H_SRC, H_OOM, H_NEAR, H_UNIT, H_UNIT_MIB,
       H_BIG, H_BIG_MIB, H_N };

struct run {
	char *f[H_N];          /* sanitized fields, "" when absent */
	double epoch, used;
	char *file, *stem;
	int prev;              /* the previous run of its series, -1 none */
};

struct hread {
	int col[H_N];
	int header_seen, rows;
	struct run *r;
};

static int on_run_record(void *arg, struct rm_csv *c)
{
	static const char *const names[H_N] = { "run_id", "start", "start_epoch", "duration_s",
		"exit", "peak_used_mib", "peak_used_source", "oom_kills", "near_oom_samples",
		"heaviest_unit", "heaviest_unit_mib", "largest_process", "largest_process_mib" };
	struct hread *h = arg;

	if (c->bad_quote)
		return 0;
	if (!h->header_seen) {
		h->header_seen = 1;
		for (int k = 0; k < H_N; k++)
			h->col[k] = header_col(c->f, c->nf, names[k]);
		return h->col[H_ID] < 0 ? 1 : 0;   /* not a run file: stop */
	}
	if (h->rows++)
		return 0;  /* one row a run; more are ignored */
	for (int k = 0; k < H_N; k++) {
		int i = h->col[k];
		h->r->f[k] = i >= 0 && i < c->nf ? sanitized(c->f[i].p, c->f[i].len) : sanitized("", 0);
	}
	return 0;
}

/* The run file name in dirfd, read into r; 0, or -1 (not a run file). */
static int read_run(int dirfd, const char *name, struct run *r)
{
	static char buf[RUN_FILE_MAX];
	struct hread h = { .r = r };
	struct rm_csv c;
	struct stat st;
	ssize_t n;
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);

	memset(r, 0, sizeof(*r));
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -1;
	}
	n = rm_read_fd(fd, buf, sizeof(buf));
	close(fd);
	if (n <= 0 || rm_csv_init(&c, RUN_FILE_MAX, 64) < 0)
		return -1;
	rm_csv_feed(&c, buf, (size_t)n, on_run_record, &h);
	rm_csv_finish(&c, on_run_record, &h);
	rm_csv_free(&c);
	if (!h.rows) {
		for (int k = 0; k < H_N; k++)
			free(r->f[k]);
		return -1;
	}
	r->epoch = r->f[H_EPOCH][0] ? strtod(r->f[H_EPOCH], NULL) : NAN;
	r->used = r->f[H_USED][0] ? strtod(r->f[H_USED], NULL) : NAN;
	r->file = sanitized(name, strlen(name));
	return 0;
}

/* The series a run belongs to: its id less a -N suffix and a
 * -YYYYMMDD-HHMMSS (or -YYYYMMDDTHHMMSS) date. */
static char *stem_of(const char *id)
{
	static regex_t re;
	static int ready;
	regmatch_t m;
	char *s = xstrndup(id, strlen(id));

	if (!ready) {
		ready = regcomp(&re, "(-[0-9]{8}[-T]?[0-9]{6}Z?)?(-[0-9]+)?$", REG_EXTENDED) == 0 ? 1 : -1;
	}
	if (ready > 0 && regexec(&re, s, 1, &m, 0) == 0 && m.rm_so > 0)
		s[m.rm_so] = '\0';
	return s;
}

static int by_start(const void *x, const void *y)
{
	const struct run *a = x, *b = y;

	if (isnan(a->epoch) != isnan(b->epoch))
		return isnan(a->epoch) ? 1 : -1;
	if (a->epoch != b->epoch && !isnan(a->epoch))
		return a->epoch < b->epoch ? -1 : 1;
	return strcmp(a->file, b->file);
}

static void change(char *buf, size_t size, const struct run *v, const struct run *p)
{
	if (!p || isnan(v->used) || isnan(p->used) ||
	    strcmp(v->f[H_SRC], p->f[H_SRC]) != 0) {
		snprintf(buf, size, "%s", p ? "-" : "first");
		return;
	}
	if (p->used > 0)
		snprintf(buf, size, "%+.1f (%+.1f %%)", v->used - p->used, (v->used - p->used) / p->used * 100);
	else
		snprintf(buf, size, "%+.1f", v->used - p->used);
}

static void print_runs(struct rm_buf *b, const char *dir, const struct run *v, size_t n,
		       const struct opts *o, int csv)
{
	if (o->json) {
		int first = 1;
		rm_buf_adds(b, "{\"dir\":");
		rm_buf_json(b, dir);
		rm_buf_adds(b, ",\"runs\":[");
		for (size_t i = 0; i < n; i++) {
			const struct run *p = v[i].prev >= 0 ? &v[v[i].prev] : NULL;
			int g = 1;
			if (!first)
				rm_buf_addc(b, ',');
			first = 0;
			rm_buf_addc(b, '{');
			jkey_str(b, &g, "run_id", v[i].f[H_ID]);
			jkey_str(b, &g, "series", v[i].stem);
			jkey_str(b, &g, "file", v[i].file);
			jkey_str(b, &g, "start", v[i].f[H_START][0] ? v[i].f[H_START] : NULL);
			jkey_num(b, &g, "duration_s", v[i].f[H_DUR][0] ? strtod(v[i].f[H_DUR], NULL) : NAN, 1);
			jkey_str(b, &g, "exit", v[i].f[H_EXIT][0] ? v[i].f[H_EXIT] : NULL);
			jkey_num(b, &g, "peak_used_mib", v[i].used, 1);
			jkey_str(b, &g, "peak_used_source", v[i].f[H_SRC][0] ? v[i].f[H_SRC] : NULL);
			jkey_num(b, &g, "peak_change_mib",
				 p && !strcmp(p->f[H_SRC], v[i].f[H_SRC]) ? v[i].used - p->used : NAN, 1);
			jkey_num(b, &g, "oom_kills", v[i].f[H_OOM][0] ? strtod(v[i].f[H_OOM], NULL) : NAN, 0);
			jkey_str(b, &g, "heaviest_unit", v[i].f[H_UNIT][0] ? v[i].f[H_UNIT] : NULL);
			jkey_num(b, &g, "heaviest_unit_mib",
				 v[i].f[H_UNIT_MIB][0] ? strtod(v[i].f[H_UNIT_MIB], NULL) : NAN, 1);
			rm_buf_addc(b, '}');
		}
		rm_buf_adds(b, "]}\n");
		return;
	}
	if (csv) {
		rm_buf_adds(b, RUN_CSV_HEADER ",series,peak_change_mib,file\n");
		for (size_t i = 0; i < n; i++) {
			const struct run *p = v[i].prev >= 0 ? &v[v[i].prev] : NULL;
			for (int k = 0; k < H_N; k++) {
				rm_buf_csv(b, v[i].f[k]);
				rm_buf_addc(b, ',');
			}
			rm_buf_csv(b, v[i].stem);
			rm_buf_addc(b, ',');
			if (p && !isnan(v[i].used) && !isnan(p->used) && !strcmp(p->f[H_SRC], v[i].f[H_SRC]))
				rm_buf_num(b, v[i].used - p->used, 1);
			rm_buf_addc(b, ',');
			rm_buf_csv(b, v[i].file);
			rm_buf_addc(b, '\n');
		}
		return;
	}
	rm_buf_addf(b, "Runs in %s (%zu, oldest first; change: of the peak, from the previous run of "
		       "the same series)\n", dir, n);
	rm_buf_addf(b, "  %-24s %-28s %9s %5s %18s %22s %4s  %s\n", "start", "run-id", "duration",
		    "exit", "peak MiB (whose)", "change MiB", "OOM", "heaviest unit (MiB)");
	for (size_t i = 0; i < n; i++) {
		char d[32], pk[48], ch[48];
		const struct run *p = v[i].prev >= 0 ? &v[v[i].prev] : NULL;
		fmt_dur(v[i].f[H_DUR][0] ? strtod(v[i].f[H_DUR], NULL) : NAN, d, sizeof(d));
		if (isnan(v[i].used))
			snprintf(pk, sizeof(pk), "-");
		else
			snprintf(pk, sizeof(pk), "%.1f (%s)", v[i].used, v[i].f[H_SRC]);
		change(ch, sizeof(ch), &v[i], p);
		rm_buf_addf(b, "  %-24s %-28s %9s %5s %18s %22s %4s  %s%s%s%s\n",
			    v[i].f[H_START][0] ? v[i].f[H_START] : "-", v[i].f[H_ID], d,
			    v[i].f[H_EXIT][0] ? v[i].f[H_EXIT] : "-", pk, ch,
			    v[i].f[H_OOM][0] ? v[i].f[H_OOM] : "-",
			    v[i].f[H_UNIT][0] ? v[i].f[H_UNIT] : "-", v[i].f[H_UNIT][0] ? " (" : "",
			    v[i].f[H_UNIT_MIB], v[i].f[H_UNIT][0] ? ")" : "");
	}
}

/* Does the name end in ".run.csv", and is it no .latest link's? */
static int is_run_file(const char *name)
{
	size_t n = strlen(name);

	return n > 8 && strcmp(name + n - 8, ".run.csv") == 0 && !strstr(name, ".latest.");
}

int print_history(const char *dir, const struct opts *o)
{
	int csv = o->csv != NULL;
	DIR *d = opendir(dir);
	struct dirent *de;
	struct run *v = NULL;
	size_t n = 0, cap = 0;
	struct rm_buf b = { 0 };
	char *shown;
	int rc = RM_EXIT_OK;

	if (!d)
		err(RM_EXIT_FAIL, "cannot read '%s'", dir);
	while ((de = readdir(d)) != NULL) {
		if (!is_run_file(de->d_name))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			v = xrealloc(v, cap * sizeof(*v));
		}
		if (read_run(dirfd(d), de->d_name, &v[n]) == 0) {
			v[n].stem = stem_of(v[n].f[H_ID]);
			n++;
		}
	}
	closedir(d);
	qsort(v, n, sizeof(*v), by_start);
	for (size_t i = 0; i < n; i++) {
		v[i].prev = -1;
		for (size_t j = i; j-- > 0;)
			if (strcmp(v[j].stem, v[i].stem) == 0) {
				v[i].prev = (int)j;
				break;
			}
	}
	shown = sanitized(dir, strlen(dir));
	print_runs(&b, shown, v, n, o, csv);
	if (!csv) {
		rm_out(&b);
	} else if (b.oom || write_whole(o->csv, &b) < 0) {
		warnx("cannot write '%s': %s", o->csv, write_why(b.oom ? ENOMEM : errno));
		rc = RM_EXIT_FAIL;
	}
	rm_buf_free(&b);
	free(shown);
	for (size_t i = 0; i < n; i++) {
		for (int k = 0; k < H_N; k++)
			free(v[i].f[k]);
		free(v[i].file);
		free(v[i].stem);
	}
	free(v);
	return rc;
}
