/*
 * rm-tree's event recordings, for tests: the datagrams events.c reads
 * from the proc connector and the taskstats socket, written as they come
 * (RM_EV_RECORD=FILE) or read back from such a file instead of the
 * kernel (RM_EV_REPLAY=FILE), so that a recorded session drives the
 * process table again, the same way each time, on any machine, as root
 * or not.
 *
 * A recording is the magic line "rm-tree events 1\n", then records of a
 * kind, a length and that many bytes (padded to 8), in the order they
 * were read:
 *
 *   H  the session: the pid of the rm-tree recorded (its --exec's
 *      parent, the one whose forks are the job), CLOCK_MONOTONIC at its
 *      elapsed 0 (the kernel's event times are on that clock), the
 *      taskstats family's number (the records' message type) and
 *      kernel.task_delayacct (whether the delays are counted)
 *   P  a pump begins, at this elapsed time
 *   C  a connector datagram     c  the connector said ENOBUFS (lost)
 *   T  a taskstats datagram     t  the taskstats socket said ENOBUFS
 *
 * In a replay each pump takes the recorded pump's datagrams, in the
 * order and batches they were read, and its elapsed time: events.c's
 * decisions (which record is which process's, what was lost, the ages
 * of what is still to come) are the recorded session's.  What it reads
 * of /proc is RM_PROC_ROOT's (a test gives an empty one: every process is
 * gone).  Host byte order: a recording is read on a machine like the one
 * that wrote it.
 */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "outfile.h"
#include "procev.h"
#include "procfs.h"
#include "text.h"
#include "tree.h"

#define MAGIC "rm-tree events 1\n"

struct rec {
	uint32_t kind, len;
};

struct head {
	int32_t self, family, delayacct, pad;
	int64_t t0_ns;
};

static struct {
	int mode;                /* REPLAY_LIVE, _RECORD or _REPLAY */
	int fd;                  /* record: the file */
	int said;                /* record: the header is written */
	struct rm_buf b;         /* record: one record, written at once */
	unsigned char *map;      /* replay: the whole file */
	size_t size, at;         /* replay: its length, the next record */
	int done;                /* replay: no pump left */
	struct timespec t0;
	struct replay_head h;    /* replay: the recording's */
} R = { .fd = -1 };

/* A record, in one write(2): a cut recording (a full disk, a kill) ends
 * with whole records, as rm_buf_write leaves it. */
static void put(uint32_t kind, const void *data, size_t len)
{
	static const char zero[8];
	struct rec r = { kind, (uint32_t)len };

	if (R.fd < 0)
		return;
	rm_buf_reset(&R.b);
	rm_buf_add(&R.b, (const char *)&r, sizeof(r));
	if (len)
		rm_buf_add(&R.b, data, len);
	rm_buf_add(&R.b, zero, (8 - len % 8) % 8);
	if (rm_buf_write(R.fd, &R.b) < 0) {
		tree_warnx("RM_EV_RECORD: cannot write: %s; recording stopped", strerror(errno));
		close(R.fd);
		R.fd = -1;
	}
}

/* The record at R.at, or NULL at the end (or a cut one). */
static const struct rec *peek(void)
{
	const struct rec *r;

	if (R.at + sizeof(*r) > R.size)
		return NULL;
	r = (const struct rec *)(R.map + R.at);
	if (R.at + sizeof(*r) + r->len > R.size)
		return NULL;
	return r;
}

static void next(const struct rec *r)
{
	R.at += sizeof(*r) + r->len + (8 - r->len % 8) % 8;
}

static void load(const char *path)
{
	const struct rec *r;

	/* Bounded: RM_READ_ALL_MAX (16 MiB), EFBIG past it. */
	R.map = (unsigned char *)rm_read_all_at(AT_FDCWD, path, &R.size);
	if (!R.map)
		err(RM_EXIT_FAIL, "RM_EV_REPLAY: cannot read '%s'", path);
	if (R.size < 24 || memcmp(R.map, MAGIC, strlen(MAGIC)) != 0)
		errx(RM_EXIT_FAIL, "RM_EV_REPLAY: '%s' is not an rm-tree event recording", path);
	R.at = 24;
	r = peek();
	if (!r || r->kind != 'H' || r->len != sizeof(struct head))
		errx(RM_EXIT_FAIL, "RM_EV_REPLAY: '%s' has no session header", path);
	{
		struct head h;
		memcpy(&h, r + 1, sizeof(h));
		R.t0.tv_sec = (time_t)(h.t0_ns / 1000000000);
		R.t0.tv_nsec = (long)(h.t0_ns % 1000000000);
		R.h.self = h.self;
		R.h.family = h.family;
		R.h.delayacct = h.delayacct;
		R.h.t0 = &R.t0;
	}
	next(r);
}

int replay_start(void)
{
	const char *rec = getenv("RM_EV_RECORD"), *rep = getenv("RM_EV_REPLAY");
	char why[256];

	if (rep && *rep) {
		load(rep);
		R.mode = REPLAY_REPLAY;
	} else if (rec && *rec) {
		R.fd = rm_out_open_stream(rec, why, sizeof(why));
		if (R.fd < 0)
			errx(RM_EXIT_FAIL, "RM_EV_RECORD: cannot write '%s': %s", rec, why);
		static const char magic[24] = MAGIC;
		rm_buf_add(&R.b, magic, sizeof(magic));
		if (rm_buf_write(R.fd, &R.b) < 0)
			err(RM_EXIT_FAIL, "RM_EV_RECORD: cannot write '%s'", rec);
		R.mode = REPLAY_RECORD;
	}
	return R.mode;
}

const struct replay_head *replay_head(void)
{
	return &R.h;
}

int replay_done(void)
{
	return R.mode == REPLAY_REPLAY && R.done;
}

double replay_pump(double el, const struct replay_head *now)
{
	const struct rec *r;

	if (R.mode == REPLAY_RECORD) {
		if (!R.said) {
			struct head h = { .self = now->self, .family = now->family,
					  .delayacct = now->delayacct,
					  .t0_ns = (int64_t)now->t0->tv_sec * 1000000000 + now->t0->tv_nsec };
			put('H', &h, sizeof(h));
			R.said = 1;
		}
		put('P', &el, sizeof(el));
		return el;
	}
	if (R.mode != REPLAY_REPLAY)
		return el;
	/* What the last pump left unread, up to this pump's beginning. */
	while ((r = peek()) != NULL && r->kind != 'P')
		next(r);
	if (!r) {
		R.done = 1;
		return el;
	}
	memcpy(&el, r + 1, sizeof(el));
	next(r);
	return el;
}

int replay_recvm(int src, int fd, void *buf, size_t each, int max, size_t *lens)
{
	int n = 0, got;
	const struct rec *r;
	uint32_t data = src == REPLAY_CN ? 'C' : 'T', lost = src == REPLAY_CN ? 'c' : 't';

	if (R.mode != REPLAY_REPLAY) {
		got = rm_nl_recvm(fd, buf, each, max, lens);
		if (R.mode == REPLAY_RECORD) {
			int e = errno;
			if (got < 0 && e == ENOBUFS)
				put(lost, NULL, 0);
			for (int i = 0; i < got; i++)
				put(data, (unsigned char *)buf + (size_t)i * each, lens[i]);
			errno = e;
		}
		return got;
	}
	if ((r = peek()) != NULL && r->kind == lost) {
		next(r);
		errno = ENOBUFS;
		return -1;
	}
	while (n < max && (r = peek()) != NULL && r->kind == data) {
		size_t len = r->len < each ? r->len : each;
		memcpy((unsigned char *)buf + (size_t)n * each, r + 1, len);
		lens[n++] = len;
		next(r);
	}
	return n;
}
