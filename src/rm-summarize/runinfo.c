/*
 * runinfo: rm-monitor's run facts for rm-summarize (see runinfo.h): the
 * samplers' --status files, the gap notes, the companion files of a CSV,
 * and the message kept in -o FILE when the input cannot be summarized.
 */
#include "runinfo.h"

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "outfile.h"
#include "rmtools.h"

int runinfo_check, runinfo_keep_error;

static const char **statuses, **notes, **procs_gaps;
static int nstatus, nnote, nprocs_gap, companions;

/* The inputs array (each file once) and the companion names it made, freed at exit. */
static const char **inputs, **made;
static int nmade;

/* The sums of the status files. */
static long gaps, written, dropped = -1;
static char lost_error[128];   /* the first file's that has one */
static char longest[32];       /* the last longest_gap_s given, as written */

/* --keep-error: standard error kept until exit, and where it may go. */
static FILE *real_stderr;
static char *kept;
static size_t nkept;
static const char *keep_out;
static int keep_json;

static const char **push(const char **v, int n, const char *s)
{
	v = realloc(v, (size_t)(n + 1) * sizeof(*v));
	if (!v)
		errx(RM_EXIT_FAIL, "out of memory");
	v[n] = s;
	return v;
}

void runinfo_opt(int which, const char *arg)
{
	if (which == RI_STATUS)
		statuses = push(statuses, nstatus++, arg);
	else if (which == RI_NOTE)
		notes = push(notes, nnote++, arg);
	else if (which == RI_PROCS_GAP) {
		procs_gaps = push(procs_gaps, nprocs_gap++, arg);
		notes = push(notes, nnote++, arg);
	}
	else if (which == RI_COMPANIONS)
		companions = 1;
	else if (which == RI_KEEP_ERROR)
		runinfo_keep_error = 1;
	else
		runinfo_check = 1;
}

/* 1 when s is a non-empty run of the characters in set. */
static int all_of(const char *s, const char *set)
{
	return *s && strspn(s, set) == strlen(s);
}

/*
 * Add one rm-sample --status file to the sums: rows_written, rows_lost,
 * stage_fallback, gaps and events_dropped (newer files); first_lost and lost_error are the first file's
 * that has one, longest_gap_s the last file's.  Other keys are skipped.
 * Exits 1 on a file it cannot read or a value rm-sample does not write.
 */
static void status_read(const char *path, long *lost, const char **from, long *fallback)
{
	char buf[8192], *line, *next, *v;
	ssize_t n = 0;
	size_t len = 0;
	long num;
	int fd = open(path, O_RDONLY | O_CLOEXEC), lineno = 0;

	if (fd < 0)
		err(RM_EXIT_FAIL, "cannot read --sampler-status '%s'", path);
	while (len < sizeof(buf) - 1 && (n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)n;
	if (n < 0)
		err(RM_EXIT_FAIL, "cannot read --sampler-status '%s'", path);
	if (len == sizeof(buf) - 1)
		errx(RM_EXIT_FAIL, "--sampler-status '%s': longer than %zu bytes; not an rm-sample --status file",
		     path, sizeof(buf) - 1);
	close(fd);
	buf[len] = '\0';
	for (line = buf; *line; line = next) {
		next = strchr(line, '\n');
		next = next ? (*next = '\0', next + 1) : line + strlen(line);
		lineno++;
		if (!(v = strchr(line, '=')))
			goto bad;
		*v++ = '\0';
		if (!strcmp(line, "first_lost")) {
			if (*v && !all_of(v, "0123456789-:.TZ"))
				goto bad;
			if (*v && !*from && !(*from = strdup(v)))
				errx(RM_EXIT_FAIL, "out of memory");
		} else if (!strcmp(line, "lost_error")) {
			if (!lost_error[0])
				rm_sanitize(v, strlen(v), lost_error, sizeof(lost_error));
		} else if (!strcmp(line, "longest_gap_s")) {
			if (*v && (!all_of(v, "0123456789.") || strlen(v) >= sizeof(longest)))
				goto bad;
			if (*v)
				strcpy(longest, v);
		} else if (!strcmp(line, "events_dropped")) {
			if (rm_parse_long(v, 0, 1000000000000L, &num) < 0)
				goto bad;
			dropped = (dropped > 0 ? dropped : 0) + num;
		} else {
			long *sum = !strcmp(line, "rows_lost") ? lost : !strcmp(line, "gaps") ? &gaps :
				    !strcmp(line, "stage_fallback") ? fallback :
				    !strcmp(line, "rows_written") ? &written : NULL;
			if (sum && rm_parse_long(v, 0, 1000000000000L, &num) < 0)
				goto bad;
			if (sum)
				*sum += num;
		}
	}
	return;
bad:
	errx(RM_EXIT_FAIL, "--sampler-status '%s': line %d: not what rm-sample --status writes", path, lineno);
}

/*
 * Add path to v[*n] unless v[first..*n) has it, by name or as a file; 1
 * when added.  "-" is always added: given twice, main.c refuses it.
 */
static int input_add(const char **v, int first, int *n, const char *path)
{
	struct stat a, b;
	int have = stat(path, &a) == 0;

	for (int i = first; i < *n && strcmp(path, "-"); i++)
		if (!strcmp(v[i], path) || (have && stat(v[i], &b) == 0 && rm_same_file(&a, &b)))
			return 0;
	v[(*n)++] = path;
	return 1;
}

/* 1 when name ends in suffix. */
static int ends(const char *name, const char *suffix)
{
	size_t n = strlen(name), m = strlen(suffix);

	return n >= m && !strcmp(name + n - m, suffix);
}

static void inputs_free(void)
{
	for (int i = 0; i < nmade; i++)
		free((char *)made[i]);
	free(made);
	free(inputs);
}

/*
 * The inputs, each file once however it is named, and with --companions
 * X.csv's X.procs.csv, X.stats.csv, X.containers.csv and X.job.csv (rm-monitor
 * -- CMD's job row), each when not empty.
 */
static int inputs_once(int argc, char ***argv, int first)
{
	static const char *const kinds[] = { ".procs.csv", ".stats.csv", ".containers.csv", ".job.csv" };
	const int nk = (int)(sizeof(kinds) / sizeof(kinds[0]));
	const char **v = malloc((size_t)(first + (nk + 1) * (argc - first) + 1) * sizeof(*v));
	int n = first;

	if (!v)
		errx(RM_EXIT_FAIL, "out of memory");
	memcpy(v, *argv, (size_t)first * sizeof(*v));
	for (int i = first; i < argc; i++) {
		const char *csv = (*argv)[i];
		size_t stem;
		input_add(v, first, &n, csv);
		int kind = 0;
		for (int k = 0; k < nk; k++)
			kind |= ends(csv, kinds[k]);
		if (!companions || !ends(csv, ".csv") || kind)
			continue;
		stem = strlen(csv) - 4;
		for (int k = 0; k < nk; k++) {
			struct stat st;
			char *p = malloc(stem + strlen(kinds[k]) + 1);
			if (!p)
				errx(RM_EXIT_FAIL, "out of memory");
			memcpy(p, csv, stem);
			strcpy(p + stem, kinds[k]);
			if (stat(p, &st) < 0 || st.st_size == 0 || !input_add(v, first, &n, p))
				free(p);
			else
				made = push(made, nmade++, p);
		}
	}
	v[n] = NULL;
	inputs = v;
	atexit(inputs_free);
	*argv = (char **)v;
	return n;
}

/*
 * At exit with --keep-error: what was said goes to standard error, and
 * when the exit is a failure that is not about writing the output, its
 * first line goes to the output too (a reader that has only the file
 * learns why there is no summary).
 */
static void keep_finish(int status, void *arg)
{
	struct rm_outfile o;
	struct rm_buf b = { 0 };
	char why[128], *nl, *colon;
	(void)arg;

	fflush(stderr);
	fclose(stderr);
	stderr = real_stderr;
	if (!kept)
		return;
	colon = strstr(kept, ": ");
	if (status == RM_EXIT_FAIL && nkept && !(colon && !strncmp(colon + 2, "cannot write", 12))) {
		nl = memchr(kept, '\n', nkept);
		if (keep_json)
			rm_buf_adds(&b, "{\"error\":");
		if (nl)
			*nl = '\0';
		(keep_json ? rm_buf_json : rm_buf_adds)(&b, kept);
		rm_buf_adds(&b, keep_json ? "}\n" : "\n");
		if (nl)
			*nl = '\n';
		if (!b.oom && rm_out_open(keep_out, &o, why, sizeof(why)) == 0) {
			if (rm_buf_write(o.fd, &b) == 0)
				rm_out_commit(&o, why, sizeof(why));
			else
				rm_out_abort(&o);
		}
		rm_buf_free(&b);
	}
	fwrite(kept, 1, nkept, stderr);
	free(kept);
}

int runinfo_start(int argc, char ***argv, int optind_, const char *out, int json,
		  long *rows_lost, const char **rows_lost_from, long *stage_fallback)
{
	long lost = 0, fallback = 0;

	argc = inputs_once(argc, argv, optind_);
	for (int i = 0; i < nstatus; i++)
		status_read(statuses[i], &lost, rows_lost_from, &fallback);
	if (nstatus) {
		struct stat st;
		const char *csv = (*argv)[optind_];
		*rows_lost = (*rows_lost > 0 ? *rows_lost : 0) + lost;
		/* Not one row reached the CSV (a disk full from the start): say
		 * why, not "empty file". */
		if (!written && optind_ < argc && strcmp(csv, "-") &&
		    (stat(csv, &st) < 0 || (S_ISREG(st.st_mode) && st.st_size == 0)))
			errx(RM_EXIT_FAIL, "%ld rows lost from %s: cannot write to '%s': %s", *rows_lost,
			     *rows_lost_from ? *rows_lost_from : "the start", csv,
			     lost_error[0] ? lost_error : "no row written");
		/* A 0 does not say that a stage file was in use: unknown stays. */
		if (fallback > 0)
			*stage_fallback = (*stage_fallback > 0 ? *stage_fallback : 0) + fallback;
	}
	if (runinfo_keep_error && out) {
		FILE *f = open_memstream(&kept, &nkept);
		if (f) {
			fflush(stderr);
			real_stderr = stderr;
			stderr = f;
			keep_out = out;
			keep_json = json;
			on_exit(keep_finish, NULL);
		}
	}
	return argc;
}

long runinfo_events_dropped(void)
{
	return dropped;
}

const char *const *runinfo_procs_gaps(int *n)
{
	*n = nprocs_gap;
	return procs_gaps;
}

void runinfo_text(struct rm_buf *b, int text)
{
	if (!text || (!nnote && !gaps))
		return;
	rm_buf_adds(b, "\nGaps in sampling\n");
	for (int i = 0; i < nnote; i++) {
		char line[RM_TEXT_MAX + 1];
		size_t n = rm_sanitize(notes[i], strlen(notes[i]), line, sizeof(line));
		rm_buf_addf(b, "  %.*s\n", (int)n, line);
	}
	if (gaps)
		rm_buf_addf(b, "  %ld intervals over 3 ticks (the sampler stopped or starved), longest %s s\n",
			    gaps, longest);
}
