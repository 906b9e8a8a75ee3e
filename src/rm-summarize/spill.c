/*
 * spill.c: exit-log rows put in an order without holding them all
 * (spill.h), an external merge sort.
 *
 * A row is copied into a record: its numbers, two sort keys and a
 * sequence number (read order, the last tie-break), then comm, exit,
 * unit and cmd, NUL-terminated, padded to 8 bytes.  Records are held in
 * one buffer; when it passes run_bytes they are sorted by key and
 * written to the temporary file as one run, and the buffer is reused.
 * Reading back merges the runs, each through a small buffer: a binary
 * heap of the runs' next records.  The rows still held join the runs on
 * disk first (where none was written, they are sorted in place and read
 * from memory).  Held: run_bytes while reading, a read buffer a run while
 * merging (4 MiB over all the runs, between 4 and 64 KiB each).
 *
 * The temporary file has no name (O_TMPFILE), so nothing in a directory
 * another user may write is touched.  Where it cannot be made, or a run
 * cannot be written (a full disk), one warning says so and the rows stay
 * in memory from then on: the output is the same, only not bounded.
 */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report.h"
#include "spill.h"
#include "util.h"

#define RUN_DEFAULT (2u << 20)
#define MERGE_MEM (4u << 20)
#define CUR_MIN 4096u
#define CUR_MAX 65536u

struct rec {
	uint32_t len;          /* the whole record, a multiple of 8 */
	int32_t pid, ppid;
	int8_t emulated;
	uint8_t has_unit;
	uint16_t comm_len, exit_len;
	int16_t stage;
	uint32_t unit_len, cmd_len, rcmd_off;
	uint64_t seq;
	double k1, k2;         /* the order: k1, then k2, then seq, ascending */
	double start_s, end_s, peak_kib, peak_at, cpu_s, read_kib, write_kib;
	/* comm, exit, unit, cmd follow, each NUL-terminated */
};

struct cursor {
	off_t off, end;        /* the run's unread part of the file */
	char *buf;
	size_t cap, start, len;   /* buf[start, len) read, not yet taken */
	int mem;               /* the held rows: records by s->idx */
};

struct spill {
	enum spill_order order;
	size_t run_bytes;
	char *buf;             /* held records */
	size_t len, cap;
	size_t *idx;           /* their offsets in buf */
	size_t nidx, capidx;
	int fd;                /* the temporary file; -1 none yet */
	int nospill;           /* rows stay in memory (no file, or a write failed) */
	off_t end;
	off_t *run_off, *run_end;
	size_t nruns, capruns;
	uint64_t seq;
	int err;
	/* reading back */
	struct cursor *cur;
	size_t ncur, *heap, nheap, mpos;
	int popped;
};

static int rec_cmp(const struct rec *a, const struct rec *b)
{
	if (a->k1 != b->k1)
		return a->k1 < b->k1 ? -1 : 1;
	if (a->k2 != b->k2)
		return a->k2 < b->k2 ? -1 : 1;
	return (a->seq > b->seq) - (a->seq < b->seq);
}

struct spill *spill_new(enum spill_order order, size_t run_bytes)
{
	struct spill *s = xcalloc(1, sizeof(*s));
	const char *e = getenv("RM_SUMMARIZE_SPILL_KIB");

	s->order = order;
	s->fd = -1;
	if (!run_bytes && e && *e)
		run_bytes = (size_t)strtoul(e, NULL, 10) * 1024;
	s->run_bytes = run_bytes ? run_bytes : RUN_DEFAULT;
	return s;
}

static long long us(double v)
{
	return (long long)llround(v * 1e6);
}

static void set_keys(const struct spill *s, struct rec *r)
{
	if (s->order == SPILL_PEAK) {
		/* model.c's by_peak: the largest first, unknown as -1, then PID. */
		r->k1 = -(isnan(r->peak_kib) ? -1 : r->peak_kib);
		r->k2 = r->pid;
	} else {
		/* trace.c's lanes: the earliest start, then the longest first
		 * (no end yet: the longest). */
		r->k1 = isnan(r->start_s) ? INFINITY : (double)us(r->start_s);
		r->k2 = isnan(r->end_s) ? -INFINITY : -(double)us(r->end_s);
	}
}

static void warn_held(struct spill *s, const char *what, int e)
{
	const char *d = getenv("TMPDIR");

	warnx("warning: cannot %s a temporary file in '%s' (%s): the rows to sort are held in memory",
	      what, d && *d ? d : "/tmp", strerror(e));
	s->nospill = 1;
}

static int tmp_open(void)
{
	const char *d = getenv("TMPDIR");

	return open(d && *d ? d : "/tmp", O_TMPFILE | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
}

static int by_rec(const void *a, const void *b, void *arg)
{
	const char *base = arg;
	return rec_cmp((const struct rec *)(base + *(const size_t *)a),
		       (const struct rec *)(base + *(const size_t *)b));
}

static void sort_held(struct spill *s)
{
	if (s->nidx)
		qsort_r(s->idx, s->nidx, sizeof(*s->idx), by_rec, s->buf);
}

static int put(int fd, const char *p, size_t n, off_t off)
{
	while (n) {
		ssize_t w = pwrite(fd, p, n, off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (w == 0)
				errno = ENOSPC;
			return -1;
		}
		p += w;
		n -= (size_t)w;
		off += w;
	}
	return 0;
}

/* The held rows, sorted, as one run at the file's end; 0, or -1 with
 * errno (the rows are still held). */
static int write_run(struct spill *s)
{
	static char out[1 << 16];
	size_t n = 0;
	off_t at = s->end;

	if (s->fd < 0 && (s->fd = tmp_open()) < 0)
		return -1;
	sort_held(s);
	for (size_t i = 0; i < s->nidx; i++) {
		const struct rec *r = (const struct rec *)(s->buf + s->idx[i]);
		if (n + r->len > sizeof(out)) {
			if (put(s->fd, out, n, at) < 0)
				return -1;
			at += (off_t)n;
			n = 0;
		}
		if (r->len > sizeof(out)) {
			if (put(s->fd, (const char *)r, r->len, at) < 0)
				return -1;
			at += r->len;
			continue;
		}
		memcpy(out + n, r, r->len);
		n += r->len;
	}
	if (n && put(s->fd, out, n, at) < 0)
		return -1;
	at += (off_t)n;
	if (s->nruns == s->capruns) {
		s->capruns = s->capruns ? 2 * s->capruns : 16;
		s->run_off = xrealloc(s->run_off, s->capruns * sizeof(*s->run_off));
		s->run_end = xrealloc(s->run_end, s->capruns * sizeof(*s->run_end));
	}
	s->run_off[s->nruns] = s->end;
	s->run_end[s->nruns++] = at;
	s->end = at;
	s->len = 0;
	s->nidx = 0;
	return 0;
}

void spill_add(struct spill *s, const struct proc *p, int stage)
{
	size_t cl = strlen(p->comm), el = strlen(p->exit), ul = p->unit ? strlen(p->unit) : 0,
	       ml = p->cmd ? strlen(p->cmd) : 0;
	size_t need = (sizeof(struct rec) + cl + el + ul + ml + 4 + 7) & ~(size_t)7;
	struct rec *r;
	char *t;

	if (!s->nospill && s->len && s->len + need > s->run_bytes && write_run(s) < 0)
		warn_held(s, s->fd < 0 ? "make" : "write to", errno);
	if (s->len + need > s->cap) {
		size_t ncap = s->cap ? s->cap : 65536;
		while (ncap < s->len + need)
			ncap *= 2;
		s->buf = xrealloc(s->buf, ncap);
		s->cap = ncap;
	}
	if (s->nidx == s->capidx) {
		s->capidx = s->capidx ? 2 * s->capidx : 1024;
		s->idx = xrealloc(s->idx, s->capidx * sizeof(*s->idx));
	}
	s->idx[s->nidx++] = s->len;
	r = (struct rec *)(s->buf + s->len);
	memset(r, 0, sizeof(*r));
	r->len = (uint32_t)need;
	r->pid = p->pid;
	r->ppid = p->ppid;
	r->emulated = (int8_t)p->emulated;
	r->has_unit = p->unit != NULL;
	r->stage = (int16_t)(stage >= -1 && stage < INT16_MAX ? stage : -1);
	r->comm_len = (uint16_t)cl;
	r->exit_len = (uint16_t)el;
	r->unit_len = (uint32_t)ul;
	r->cmd_len = (uint32_t)ml;
	r->rcmd_off = p->cmd && p->rcmd ? (uint32_t)(p->rcmd - p->cmd) : 0;
	r->seq = s->seq++;
	r->start_s = p->start_s;
	r->end_s = p->end_s;
	r->peak_kib = p->peak_kib;
	r->peak_at = p->peak_at;
	r->cpu_s = p->cpu_s;
	r->read_kib = p->read_kib;
	r->write_kib = p->write_kib;
	set_keys(s, r);
	t = (char *)(r + 1);
	memcpy(t, p->comm, cl + 1);
	t += cl + 1;
	memcpy(t, p->exit, el + 1);
	t += el + 1;
	if (ul)
		memcpy(t, p->unit, ul);
	t[ul] = 0;
	t += ul + 1;
	if (ml)
		memcpy(t, p->cmd, ml);
	/* Its NUL and the padding: every byte written to the file is set. */
	memset(t + ml, 0, (size_t)((char *)r + need - (t + ml)));
	s->len += need;
}

/* The cursor's next record, reading more of its run where needed; NULL
 * at its end (or on a read error, s->err set). */
static const struct rec *cur_head(struct spill *s, struct cursor *c)
{
	size_t want;

	if (c->mem)
		return s->mpos < s->nidx ? (const struct rec *)(s->buf + s->idx[s->mpos]) : NULL;
	for (;;) {
		want = sizeof(uint32_t);
		if (c->len - c->start >= want) {
			want = *(const uint32_t *)(c->buf + c->start);
			if (c->len - c->start >= want)
				return (const struct rec *)(c->buf + c->start);
		}
		if (c->off >= c->end) {
			if (c->len > c->start) {
				s->err = EIO;   /* a run cut short: not ours */
			}
			return NULL;
		}
		if (c->start) {
			memmove(c->buf, c->buf + c->start, c->len - c->start);
			c->len -= c->start;
			c->start = 0;
		}
		if (want > c->cap) {
			c->cap = want;
			c->buf = xrealloc(c->buf, c->cap);
		}
		size_t room = c->cap - c->len;
		if ((off_t)room > c->end - c->off)
			room = (size_t)(c->end - c->off);
		ssize_t n = pread(s->fd, c->buf + c->len, room, c->off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			s->err = n < 0 ? errno : EIO;
			return NULL;
		}
		c->len += (size_t)n;
		c->off += n;
	}
}

static void cur_take(struct spill *s, struct cursor *c)
{
	if (c->mem)
		s->mpos++;
	else
		c->start += *(const uint32_t *)(c->buf + c->start);
}

static int heap_less(struct spill *s, size_t a, size_t b)
{
	return rec_cmp(cur_head(s, &s->cur[a]), cur_head(s, &s->cur[b])) < 0;
}

static void sift_down(struct spill *s, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		if (l < s->nheap && heap_less(s, s->heap[l], s->heap[m]))
			m = l;
		if (l + 1 < s->nheap && heap_less(s, s->heap[l + 1], s->heap[m]))
			m = l + 1;
		if (m == i)
			return;
		size_t t = s->heap[i];
		s->heap[i] = s->heap[m];
		s->heap[m] = t;
		i = m;
	}
}

int spill_rewind(struct spill *s)
{
	size_t each;

	/* Rows already on disk: the held ones join them as the last run, and
	 * their buffer goes before the merge's come. */
	if (s->nruns && s->nidx && !s->nospill) {
		if (write_run(s) < 0)
			warn_held(s, "write to", errno);
	}
	if (!s->nidx) {
		free(s->buf);
		free(s->idx);
		s->buf = NULL;
		s->idx = NULL;
		s->len = s->cap = s->capidx = 0;
	}
	for (size_t i = 0; i < s->ncur; i++)
		free(s->cur[i].buf);
	free(s->cur);
	free(s->heap);
	s->cur = xcalloc(s->nruns + 1, sizeof(*s->cur));
	s->heap = xmalloc((s->nruns + 1) * sizeof(*s->heap));
	s->ncur = s->nheap = 0;
	s->mpos = 0;
	s->popped = 0;
	s->err = 0;
	sort_held(s);
	each = s->nruns ? MERGE_MEM / s->nruns : CUR_MAX;
	each = each < CUR_MIN ? CUR_MIN : each > CUR_MAX ? CUR_MAX : each;
	for (size_t i = 0; i <= s->nruns; i++) {
		struct cursor *c = &s->cur[s->ncur++];
		if (i == s->nruns) {
			c->mem = 1;
		} else {
			c->off = s->run_off[i];
			c->end = s->run_end[i];
			c->cap = each;
			c->buf = xmalloc(each);
		}
		if (cur_head(s, c))
			s->heap[s->nheap++] = (size_t)(c - s->cur);
		if (s->err) {
			errno = s->err;
			return -1;
		}
	}
	for (size_t i = s->nheap / 2; i-- > 0;)
		sift_down(s, i);
	return 0;
}

int spill_next(struct spill *s, struct proc *p)
{
	const struct rec *r;
	const char *t;

	if (s->popped) {
		struct cursor *c = &s->cur[s->heap[0]];
		cur_take(s, c);
		if (!cur_head(s, c)) {
			if (s->err) {
				errno = s->err;
				return -1;
			}
			s->heap[0] = s->heap[--s->nheap];
		}
		sift_down(s, 0);
		s->popped = 0;
	}
	if (!s->nheap) {
		/* Read to the end: the runs' buffers go (a rewind makes them again). */
		for (size_t i = 0; i < s->ncur; i++)
			free(s->cur[i].buf);
		free(s->cur);
		free(s->heap);
		s->cur = NULL;
		s->heap = NULL;
		s->ncur = 0;
		return 0;
	}
	r = cur_head(s, &s->cur[s->heap[0]]);
	s->popped = 1;
	memset(p, 0, sizeof(*p));
	p->pid = r->pid;
	p->ppid = r->ppid;
	p->emulated = r->emulated;
	p->start_s = r->start_s;
	p->end_s = r->end_s;
	p->peak_kib = r->peak_kib;
	p->peak_at = r->peak_at;
	p->cpu_s = r->cpu_s;
	p->read_kib = r->read_kib;
	p->write_kib = r->write_kib;
	p->peak_epoch = NAN;
	p->majflt = NAN;
	for (int i = 0; i < 5; i++)
		p->delay_ms[i] = NAN;
	p->stage = r->stage;
	p->scope = 1;
	p->shown = 1;
	p->uid = -1;
	t = (const char *)(r + 1);
	snprintf(p->comm, sizeof(p->comm), "%s", t);
	t += r->comm_len + 1;
	snprintf(p->exit, sizeof(p->exit), "%s", t);
	t += r->exit_len + 1;
	p->unit = r->has_unit ? (char *)t : NULL;
	t += r->unit_len + 1;
	p->cmd = (char *)t;
	p->rcmd = p->cmd + r->rcmd_off;
	return 1;
}

void spill_free(struct spill *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->ncur; i++)
		free(s->cur[i].buf);
	free(s->cur);
	free(s->heap);
	free(s->buf);
	free(s->idx);
	free(s->run_off);
	free(s->run_end);
	if (s->fd >= 0)
		close(s->fd);
	free(s);
}

void spill_row(struct report *r, const struct proc *p)
{
	const struct opts *o = r->opt;

	if (!o)
		return;
	if ((o->csv || o->list_spill) && p->shown) {
		if (!r->sp_peak)
			r->sp_peak = spill_new(SPILL_PEAK, 0);
		/* Its stage, as report_finish gives a held row. */
		spill_add(r->sp_peak, p, proc_stage(r, p, report_tree_off(r)));
	}
	if (o->trace && !isnan(p->start_s)) {
		if (!r->sp_start)
			r->sp_start = spill_new(SPILL_START, 0);
		spill_add(r->sp_start, p, -1);
	}
}
