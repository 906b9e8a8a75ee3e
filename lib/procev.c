/*
 * procev: see procev.h.
 *
 * Offsets of struct taskstats are this file's own table, taken from the
 * kernel's include/uapi/linux/taskstats.h (version 13; version 14 added
 * irq_count and irq_delay_total at the end, versions 16 and 17 append
 * only), not from the build machine's header: a v15 header would put
 * every field after cpu_delay_total elsewhere.
 *
 * This file is long because the proc connector and taskstats share one
 * netlink layer (the socket, the bounded receive, the attribute walk):
 * in three files that layer would be exported for two callers.  The
 * parsers (rm_pe_parse, rm_ts_parse) are pure and come first.
 */
#include <errno.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include <linux/cn_proc.h>
#include <linux/filter.h>
#include <linux/connector.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/taskstats.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "procev.h"
#include "procfs.h"

_Static_assert(RM_PE_WANT_FORK == PROC_EVENT_FORK && RM_PE_WANT_EXEC == PROC_EVENT_EXEC &&
	       RM_PE_WANT_COMM == PROC_EVENT_COMM && RM_PE_WANT_EXIT == (unsigned)PROC_EVENT_EXIT,
	       "the connector's event bits");

/* struct taskstats, version 13/14/16 layout (bytes). */
enum {
	TS_VERSION = 0, TS_EXITCODE = 4, TS_FLAG = 8,
	TS_CPU_DELAY = 24, TS_BLKIO_DELAY = 40, TS_SWAPIN_DELAY = 56,
	TS_COMM = 80, TS_UID = 120, TS_PID = 128, TS_PPID = 132, TS_BTIME = 136, TS_ETIME = 144,
	TS_UTIME = 152, TS_STIME = 160, TS_MINFLT = 168, TS_MAJFLT = 176,
	TS_HIWATER_RSS = 200, TS_READ_BYTES = 248, TS_WRITE_BYTES = 256,
	TS_FREEPAGES_DELAY = 320, TS_THRASHING_DELAY = 336, TS_BTIME64 = 344,
	TS_COMPACT_DELAY = 360, TS_TGID = 368, TS_WPCOPY_DELAY = 408,
};

/* Version 15 put a max and a min (16 bytes) after each of these. */
static const size_t v15_after[] = {
	TS_CPU_DELAY, TS_BLKIO_DELAY, TS_SWAPIN_DELAY, TS_FREEPAGES_DELAY,
	TS_THRASHING_DELAY, TS_COMPACT_DELAY, TS_WPCOPY_DELAY,
};

struct tsr {
	const unsigned char *p;
	size_t len;
	int v15;
};

/* Where the v13 field at off lies in this record. */
static size_t ts_off(const struct tsr *t, size_t off)
{
	size_t at = off;

	if (t->v15)
		for (size_t i = 0; i < sizeof(v15_after) / sizeof(v15_after[0]); i++)
			if (off > v15_after[i])
				at += 16;
	return at;
}

/* Read size bytes of field off; 0, or -1 when the record ends before it. */
static int ts_get(const struct tsr *t, size_t off, void *out, size_t size)
{
	off = ts_off(t, off);
	if (off > t->len || size > t->len - off)
		return -1;
	memcpy(out, t->p + off, size);
	return 0;
}

static int ts_u64(const struct tsr *t, size_t off, uint64_t *v)
{
	return ts_get(t, off, v, sizeof(*v));
}

static int ts_u32(const struct tsr *t, size_t off, uint32_t *v)
{
	return ts_get(t, off, v, sizeof(*v));
}

int rm_ts_parse_stats(const void *p, size_t len, struct rm_ts *r)
{
	struct tsr t = { p, len, 0 };
	uint16_t version;
	uint8_t flag;
	char comm[32];
	uint32_t btime32;

	memset(r, 0, sizeof(*r));
	if (len < sizeof(version))
		return -1;
	memcpy(&version, p, sizeof(version));
	r->version = version;
	t.v15 = version == 15;
	/* Version 1 had padding where the accounting fields now start. */
	if (version < 2)
		return 0;
	if (ts_u32(&t, TS_EXITCODE, &r->exitcode) == 0 &&
	    ts_get(&t, TS_FLAG, &flag, 1) == 0 &&
	    ts_get(&t, TS_COMM, comm, sizeof(comm)) == 0 &&
	    ts_u32(&t, TS_UID, &r->uid) == 0 &&
	    ts_u32(&t, TS_PID, &r->pid) == 0 &&
	    ts_u32(&t, TS_PPID, &r->ppid) == 0 &&
	    ts_u32(&t, TS_BTIME, &btime32) == 0 &&
	    ts_u64(&t, TS_ETIME, &r->etime_us) == 0 &&
	    ts_u64(&t, TS_UTIME, &r->utime_us) == 0 &&
	    ts_u64(&t, TS_STIME, &r->stime_us) == 0 &&
	    ts_u64(&t, TS_MINFLT, &r->minflt) == 0 &&
	    ts_u64(&t, TS_MAJFLT, &r->majflt) == 0) {
		r->flags = flag;
		memcpy(r->comm, comm, sizeof(comm));
		r->comm[32] = '\0';
		r->btime = btime32;
		r->has_basic = 1;
	}
	r->has_delay = ts_u64(&t, TS_CPU_DELAY, &r->cpu_delay) == 0 &&
		       ts_u64(&t, TS_BLKIO_DELAY, &r->blkio_delay) == 0 &&
		       ts_u64(&t, TS_SWAPIN_DELAY, &r->swapin_delay) == 0;
	r->has_mem = ts_u64(&t, TS_HIWATER_RSS, &r->hiwater_rss_kib) == 0;
	r->has_io = ts_u64(&t, TS_READ_BYTES, &r->read_bytes) == 0 &&
		    ts_u64(&t, TS_WRITE_BYTES, &r->write_bytes) == 0;
	/* Reclaim (freepages) since v6?, thrashing since v9. */
	r->has_delay2 = version >= 9 &&
			ts_u64(&t, TS_FREEPAGES_DELAY, &r->freepages_delay) == 0 &&
			ts_u64(&t, TS_THRASHING_DELAY, &r->thrashing_delay) == 0;
	if (version >= 10 && ts_u64(&t, TS_BTIME64, &r->btime) < 0)
		r->btime = btime32;
	r->has_tgid = version >= 12 && ts_u32(&t, TS_TGID, &r->tgid) == 0;
	return 0;
}

/* The netlink attributes in p[0..len): calls fn for each whole one. */
static int nla_walk(const unsigned char *p, size_t len,
		    int (*fn)(void *arg, int type, const unsigned char *d, size_t dl), void *arg)
{
	while (len >= NLA_HDRLEN) {
		struct nlattr a;
		size_t step;
		memcpy(&a, p, sizeof(a));
		if (a.nla_len < NLA_HDRLEN || a.nla_len > len)
			return -1;
		if (fn(arg, a.nla_type & NLA_TYPE_MASK, p + NLA_HDRLEN, a.nla_len - NLA_HDRLEN) < 0)
			return -1;
		step = NLA_ALIGN(a.nla_len);
		if (step >= len)
			return 0;
		p += step;
		len -= step;
	}
	return 0;
}

struct aggr {
	uint32_t id;
	const unsigned char *stats;
	size_t slen;
	int have_id;
};

static int aggr_attr(void *arg, int type, const unsigned char *d, size_t dl)
{
	struct aggr *a = arg;

	if (type == TASKSTATS_TYPE_PID || type == TASKSTATS_TYPE_TGID) {
		if (dl < 4)
			return -1;
		memcpy(&a->id, d, 4);
		a->have_id = 1;
	} else if (type == TASKSTATS_TYPE_STATS) {
		a->stats = d;
		a->slen = dl;
	}
	return 0;
}

struct tsmsg {
	void (*cb)(void *arg, const struct rm_ts *r);
	void *arg;
	int count;
	int pid_version;
};

static int top_attr(void *arg, int type, const unsigned char *d, size_t dl)
{
	struct tsmsg *m = arg;
	struct aggr a;
	struct rm_ts r;
	uint16_t ver;

	if (type != TASKSTATS_TYPE_AGGR_PID && type != TASKSTATS_TYPE_AGGR_TGID)
		return 0;
	memset(&a, 0, sizeof(a));
	if (nla_walk(d, dl, aggr_attr, &a) < 0 || !a.have_id || !a.stats)
		return -1;
	if (rm_ts_parse_stats(a.stats, a.slen, &r) < 0)
		return -1;
	/* The TGID aggregate is the kernel's signal->stats, into which only
	 * the delays are summed; some kernels leave its version 0.
	 * It has the layout of the PID record beside it. */
	if (type == TASKSTATS_TYPE_AGGR_TGID && r.version == 0 && m->pid_version > 0) {
		static unsigned char tmp[4096];
		size_t n = a.slen < sizeof(tmp) ? a.slen : sizeof(tmp);
		memcpy(tmp, a.stats, n);
		ver = (uint16_t)m->pid_version;
		memcpy(tmp, &ver, sizeof(ver));
		rm_ts_parse_stats(tmp, n, &r);
	}
	r.tgid_aggr = type == TASKSTATS_TYPE_AGGR_TGID;
	r.id = a.id;
	if (!r.tgid_aggr)
		m->pid_version = r.version;
	m->count++;
	if (m->cb)
		m->cb(m->arg, &r);
	return 0;
}

int rm_ts_parse(const void *buf, size_t len, int family,
		void (*cb)(void *arg, const struct rm_ts *r), void *arg, int *nlerr)
{
	const unsigned char *p = buf;
	struct tsmsg m = { cb, arg, 0, 0 };

	while (len >= NLMSG_HDRLEN) {
		struct nlmsghdr h;
		size_t step;
		memcpy(&h, p, sizeof(h));
		if (h.nlmsg_len < NLMSG_HDRLEN || h.nlmsg_len > len)
			return -1;
		if (h.nlmsg_type == NLMSG_ERROR) {
			struct nlmsgerr e;
			if (h.nlmsg_len >= NLMSG_HDRLEN + sizeof(int)) {
				memcpy(&e.error, p + NLMSG_HDRLEN, sizeof(int));
				if (nlerr && e.error < 0)
					*nlerr = e.error;
			}
		} else if (h.nlmsg_type == family && h.nlmsg_len >= NLMSG_HDRLEN + GENL_HDRLEN) {
			struct genlmsghdr g;
			memcpy(&g, p + NLMSG_HDRLEN, sizeof(g));
			m.pid_version = 0;
			if (g.cmd == TASKSTATS_CMD_NEW &&
			    nla_walk(p + NLMSG_HDRLEN + GENL_HDRLEN,
				     h.nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN, top_attr, &m) < 0)
				return -1;
		}
		step = NLMSG_ALIGN(h.nlmsg_len);
		if (step >= len)
			break;
		p += step;
		len -= step;
	}
	return m.count;
}

static uint32_t rd32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

int rm_pe_parse(const void *buf, size_t len, void (*cb)(void *arg, const struct rm_pe *e),
		void *arg)
{
	const unsigned char *p = buf;
	int count = 0;
	/* cn_msg: idx, val, seq, ack (4 each), len, flags (2 each) */
	const size_t cn = 20, ev = 16;  /* proc_event: what, cpu, timestamp */

	while (len >= NLMSG_HDRLEN) {
		struct nlmsghdr h;
		size_t step, dl;
		const unsigned char *d;
		memcpy(&h, p, sizeof(h));
		if (h.nlmsg_len < NLMSG_HDRLEN || h.nlmsg_len > len)
			return -1;
		d = p + NLMSG_HDRLEN;
		dl = h.nlmsg_len - NLMSG_HDRLEN;
		if (h.nlmsg_type == NLMSG_DONE && dl >= cn &&
		    rd32(d) == CN_IDX_PROC && rd32(d + 4) == CN_VAL_PROC) {
			uint16_t clen;
			memcpy(&clen, d + 16, sizeof(clen));
			if (clen > dl - cn)
				return -1;
			d += cn;
			dl = clen;
			if (dl >= ev) {
				struct rm_pe e;
				uint32_t what = rd32(d);
				const unsigned char *u = d + ev;
				size_t ul = dl - ev;
				memset(&e, 0, sizeof(e));
				e.what = RM_PE_OTHER;
				/* proc_event.timestamp_ns at 8: ktime_get_ns(),
				 * CLOCK_MONOTONIC, when the kernel sent it. */
				memcpy(&e.ts_ns, d + 8, sizeof(e.ts_ns));
				if (what == PROC_EVENT_FORK && ul >= 16) {
					e.what = RM_PE_FORK;
					e.ppid = (int)rd32(u);
					e.ptgid = (int)rd32(u + 4);
					e.pid = (int)rd32(u + 8);
					e.tgid = (int)rd32(u + 12);
				} else if (what == PROC_EVENT_EXEC && ul >= 8) {
					e.what = RM_PE_EXEC;
					e.pid = (int)rd32(u);
					e.tgid = (int)rd32(u + 4);
				} else if (what == PROC_EVENT_COMM && ul >= 24) {
					e.what = RM_PE_COMM;
					e.pid = (int)rd32(u);
					e.tgid = (int)rd32(u + 4);
					memcpy(e.comm, u + 8, 16);
					e.comm[16] = '\0';
				} else if (what == PROC_EVENT_EXIT && ul >= 12) {
					e.what = RM_PE_EXIT;
					e.pid = (int)rd32(u);
					e.tgid = (int)rd32(u + 4);
					e.exit_code = rd32(u + 8);
					if (ul >= 24) {
						e.ppid = (int)rd32(u + 16);
						e.ptgid = (int)rd32(u + 20);
					}
				}
				count++;
				if (cb)
					cb(arg, &e);
			}
		}
		step = NLMSG_ALIGN(h.nlmsg_len);
		if (step >= len)
			break;
		p += step;
		len -= step;
	}
	return count;
}

static void say(char *why, size_t wsize, const char *what)
{
	snprintf(why, wsize, "%s: %s", what, strerror(errno));
}

static int nl_socket(int proto, int rcvbuf, char *why, size_t wsize)
{
	struct sockaddr_nl sa;
	int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, proto);

	if (fd < 0) {
		say(why, wsize, "netlink socket");
		return -1;
	}
	const char *knob = getenv("RM_EV_RCVBUF");

	if (knob && *knob)
		rcvbuf = atoi(knob);
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	memset(&sa, 0, sizeof(sa));
	sa.nl_family = AF_NETLINK;
	if (proto == NETLINK_CONNECTOR)
		sa.nl_groups = CN_IDX_PROC;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		say(why, wsize, "netlink bind");
		close(fd);
		return -1;
	}
	/* Setup replies: wait for them, but not forever. */
	struct timeval tv = { 2, 0 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

static int nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* Linux 6.6 or later: the connector takes an event filter. */
static int kernel_6_6(void)
{
	struct utsname u;
	int maj = 0, min = 0;

	if (uname(&u) < 0 || sscanf(u.release, "%d.%d", &maj, &min) != 2)
		return 0;
	return maj > 6 || (maj == 6 && min >= 6);
}

/* Does this process hold CAP_NET_ADMIN (bit 12 of CapEff)? */
static int cap_net_admin(void)
{
	char buf[4096];
	ssize_t n = rm_read_at(AT_FDCWD, "/proc/self/status", buf, sizeof(buf));
	const char *p = n > 0 ? strstr(buf, "\nCapEff:") : NULL;
	unsigned long long caps;

	return p && sscanf(p + 8, "%llx", &caps) == 1 && (caps & (1ull << 12));
}

/*
 * A socket filter run by the kernel before an event is queued: a
 * thread's fork, exit or comm change is dropped (no one here follows
 * threads; their CPU comes in taskstats records), so a host whose
 * programs start and end threads by the thousand does not wake the
 * listener, nor fill its buffer.  The connector sends one event per
 * datagram: nlmsghdr (16), cn_msg (20), proc_event's what (at 36), cpu,
 * timestamp, then the event (at 52).  Loads are big-endian: the pairs
 * compared are loaded alike and the constants are swapped.
 */
static void pe_filter(int fd)
{
	enum { WHAT = 16 + 20, EV = 16 + 20 + 16 };
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, WHAT),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, htonl(PROC_EVENT_FORK), 3, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, htonl((uint32_t)PROC_EVENT_EXIT), 6, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, htonl(PROC_EVENT_COMM), 5, 0),
		BPF_STMT(BPF_RET | BPF_K, 0xffffffffu),
		/* fork: child_pid (EV + 8) == child_tgid (EV + 12) */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, EV + 8),
		BPF_STMT(BPF_MISC | BPF_TAX, 0),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, EV + 12),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_X, 0, 4, 5),
		/* exit, comm: process_pid (EV) == process_tgid (EV + 4) */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, EV),
		BPF_STMT(BPF_MISC | BPF_TAX, 0),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, EV + 4),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_X, 0, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, 0xffffffffu),
		BPF_STMT(BPF_RET | BPF_K, 0),
	};
	struct sock_fprog prog = { (unsigned short)(sizeof(f) / sizeof(f[0])), f };

	/* Without it (no CONFIG_BPF?) threads' events come and are skipped. */
	setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog));
}

int rm_pe_filter_tgids(int fd, const int *tgids, int n)
{
	enum { EV = 16 + 20 + 16 };
	struct sock_filter f[8 + 255];
	struct sock_fprog prog = { 0, f };
	int k = 0;

	if (n > 255) {
		errno = E2BIG;
		return -1;
	}
	if (n < 0) {
		f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, 0);
	} else {
		f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 16 + 20);
		f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, htonl(PROC_EVENT_FORK), 3, 0);
		f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, htonl(PROC_EVENT_EXEC), 2, 0);
		f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, htonl(PROC_EVENT_COMM), 1, 0);
		f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, 0);
		/* fork: parent_tgid; exec, comm: process_tgid; both at EV + 4 */
		f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, EV + 4);
		for (int i = 0; i < n; i++)
			f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
							      htonl((uint32_t)tgids[i]),
							      (unsigned char)(n - i), 0);
		f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, 0);
		f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, 0xffffffffu);
	}
	prog.len = (unsigned short)k;
	return setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog));
}

int rm_pe_open(int rcvbuf, unsigned events, char *why, size_t wsize)
{
	/* nlmsghdr, cn_msg (idx, val, seq, ack, len, flags), the op and,
	 * since 6.6, the events wanted (struct proc_input), so that the
	 * others (uid, sid, ptrace... changes; exits, where not asked for)
	 * do not wake the listener.  An older kernel ignores a request of
	 * that length: it gets the bare op, and every event. */
	unsigned char req[NLMSG_HDRLEN + 20 + 8];
	struct nlmsghdr h;
	uint32_t v;
	int new_kernel = kernel_6_6();
	uint16_t len = new_kernel ? 8 : 4;
	int fd;

	/* Before 6.6 the kernel refuses the listen op of a user without
	 * CAP_NET_ADMIN in a reply that is easily missed: say it here. */
	if (!new_kernel && !cap_net_admin()) {
		errno = EPERM;
		snprintf(why, wsize, "the proc connector needs CAP_NET_ADMIN before Linux 6.6");
		return -1;
	}
	fd = nl_socket(NETLINK_CONNECTOR, rcvbuf, why, wsize);
	if (fd < 0)
		return -1;
	pe_filter(fd);
	memset(req, 0, sizeof(req));
	memset(&h, 0, sizeof(h));
	h.nlmsg_len = (uint32_t)(NLMSG_HDRLEN + 20 + len);
	h.nlmsg_type = NLMSG_DONE;
	memcpy(req, &h, sizeof(h));
	v = CN_IDX_PROC;
	memcpy(req + NLMSG_HDRLEN, &v, 4);
	v = CN_VAL_PROC;
	memcpy(req + NLMSG_HDRLEN + 4, &v, 4);
	memcpy(req + NLMSG_HDRLEN + 16, &len, 2);
	v = PROC_CN_MCAST_LISTEN;
	memcpy(req + NLMSG_HDRLEN + 20, &v, 4);
	v = events;
	memcpy(req + NLMSG_HDRLEN + 24, &v, 4);
	if (send(fd, req, NLMSG_HDRLEN + 20 + len, 0) < 0) {
		say(why, wsize, "proc connector listen");
		close(fd);
		return -1;
	}
	if (nonblock(fd) < 0) {
		say(why, wsize, "proc connector");
		close(fd);
		return -1;
	}
	return fd;
}

/* Send a generic netlink request with one string or u16 attribute. */
static int genl_send(int fd, int family, int cmd, int attr, const void *val, size_t vlen)
{
	unsigned char buf[256];
	struct nlmsghdr h;
	struct genlmsghdr g;
	struct nlattr a;
	size_t len = NLMSG_HDRLEN + GENL_HDRLEN + NLA_HDRLEN + vlen;

	if (NLMSG_ALIGN(len) > sizeof(buf)) {
		errno = EINVAL;
		return -1;
	}
	memset(buf, 0, sizeof(buf));
	memset(&h, 0, sizeof(h));
	h.nlmsg_len = (uint32_t)len;
	h.nlmsg_type = (uint16_t)family;
	h.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	h.nlmsg_seq = 1;
	memset(&g, 0, sizeof(g));
	g.cmd = (uint8_t)cmd;
	g.version = 1;
	a.nla_len = (uint16_t)(NLA_HDRLEN + vlen);
	a.nla_type = (uint16_t)attr;
	memcpy(buf, &h, sizeof(h));
	memcpy(buf + NLMSG_HDRLEN, &g, sizeof(g));
	memcpy(buf + NLMSG_HDRLEN + GENL_HDRLEN, &a, sizeof(a));
	memcpy(buf + NLMSG_HDRLEN + GENL_HDRLEN + NLA_HDRLEN, val, vlen);
	return send(fd, buf, NLMSG_ALIGN(len), 0) < 0 ? -1 : 0;
}

struct fam {
	int id;
};

static int fam_attr(void *arg, int type, const unsigned char *d, size_t dl)
{
	struct fam *f = arg;

	if (type == CTRL_ATTR_FAMILY_ID && dl >= 2) {
		uint16_t id;
		memcpy(&id, d, sizeof(id));
		f->id = id;
	}
	return 0;
}

/*
 * Wait for the acknowledgement of a request (an error message with code
 * 0, or the error), handing a GETFAMILY reply's attributes to f.  Other
 * messages (exit records already flowing) are skipped.
 */
static int genl_ack(int fd, struct fam *f)
{
	static unsigned char buf[16384];

	for (int tries = 0; tries < 10000; tries++) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		const unsigned char *p = buf;
		size_t len;
		if (n < 0) {
			if (errno == EINTR || errno == ENOBUFS)
				continue;
			return -1;
		}
		len = (size_t)n;
		while (len >= NLMSG_HDRLEN) {
			struct nlmsghdr h;
			memcpy(&h, p, sizeof(h));
			if (h.nlmsg_len < NLMSG_HDRLEN || h.nlmsg_len > len)
				break;
			if (h.nlmsg_type == NLMSG_ERROR && h.nlmsg_len >= NLMSG_HDRLEN + sizeof(int)) {
				int e;
				memcpy(&e, p + NLMSG_HDRLEN, sizeof(e));
				if (e < 0) {
					errno = -e;
					return -1;
				}
				return 0;
			}
			if (f && h.nlmsg_type == GENL_ID_CTRL &&
			    h.nlmsg_len >= NLMSG_HDRLEN + GENL_HDRLEN)
				nla_walk(p + NLMSG_HDRLEN + GENL_HDRLEN,
					 h.nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN, fam_attr, f);
			if (NLMSG_ALIGN(h.nlmsg_len) >= len)
				break;
			p += NLMSG_ALIGN(h.nlmsg_len);
			len -= NLMSG_ALIGN(h.nlmsg_len);
		}
	}
	errno = ETIMEDOUT;
	return -1;
}

/* A generic netlink socket and the taskstats family's id. */
static int ts_socket(int rcvbuf, struct fam *f, char *why, size_t wsize)
{
	int fd = nl_socket(NETLINK_GENERIC, rcvbuf, why, wsize);

	if (fd < 0)
		return -1;
	f->id = -1;
	if (genl_send(fd, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, CTRL_ATTR_FAMILY_NAME,
		      TASKSTATS_GENL_NAME, sizeof(TASKSTATS_GENL_NAME)) < 0 ||
	    genl_ack(fd, f) < 0 || f->id < 0) {
		if (f->id < 0 && errno == 0)
			errno = ENOENT;
		say(why, wsize, "no taskstats family");
		close(fd);
		return -1;
	}
	return fd;
}

int rm_ts_open(int rcvbuf, int *family, char *why, size_t wsize)
{
	struct fam f;
	char cpus[256];
	ssize_t n;
	int fd = ts_socket(rcvbuf, &f, why, wsize);

	if (fd < 0)
		return -1;
	/* Every possible CPU: a task's record goes to its CPU's listeners. */
	n = rm_read_at(AT_FDCWD, "/sys/devices/system/cpu/possible", cpus, sizeof(cpus));
	if (n <= 0) {
		long c = sysconf(_SC_NPROCESSORS_CONF);
		snprintf(cpus, sizeof(cpus), "0-%ld", c > 0 ? c - 1 : 0);
	} else {
		while (n > 0 && (cpus[n - 1] == '\n' || cpus[n - 1] == ' '))
			cpus[--n] = '\0';
	}
	if (genl_send(fd, f.id, TASKSTATS_CMD_GET, TASKSTATS_CMD_ATTR_REGISTER_CPUMASK,
		      cpus, strlen(cpus) + 1) < 0 || genl_ack(fd, NULL) < 0) {
		if (errno == EPERM || errno == EACCES)
			snprintf(why, wsize, "taskstats needs CAP_NET_ADMIN");
		else
			say(why, wsize, "taskstats listener");
		close(fd);
		return -1;
	}
	if (nonblock(fd) < 0) {
		say(why, wsize, "taskstats");
		close(fd);
		return -1;
	}
	*family = f.id;
	return fd;
}

int rm_ts_query_open(int *family, char *why, size_t wsize)
{
	struct fam f;
	/* Room for a whole batch's replies (about 1 KiB of the buffer each),
	 * whatever RM_EV_RCVBUF (a test knob for the listeners) says. */
	int rcvbuf = 1 << 20, fd = ts_socket(rcvbuf, &f, why, wsize);

	if (fd < 0)
		return -1;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	*family = f.id;
	return fd;
}

_Static_assert(RM_TS_QUERY_MAX <= 64, "a batch's replies in one rm_nl_recvm");

/* One TASKSTATS_CMD_GET request for a PID, as the kernel reads it. */
struct ts_req {
	struct nlmsghdr h;
	struct genlmsghdr g;
	struct nlattr a;
	uint32_t pid;
};

int rm_ts_query(int fd, int family, const int *pids, int n,
		void (*cb)(void *arg, const struct rm_ts *r), void *arg)
{
	enum { EACH = 2048 };  /* a reply: about 600 bytes, as the version grows */
	static struct ts_req q[RM_TS_QUERY_MAX];
	static unsigned char buf[RM_TS_QUERY_MAX * EACH];
	size_t lens[RM_TS_QUERY_MAX];
	int replies = 0, got;
	ssize_t sent;

	if (n <= 0)
		return 0;
	if (n > RM_TS_QUERY_MAX) {
		errno = EINVAL;
		return -1;
	}
	memset(q, 0, sizeof(q[0]) * (size_t)n);
	for (int i = 0; i < n; i++) {
		q[i].h.nlmsg_len = sizeof(q[i]);
		q[i].h.nlmsg_type = (uint16_t)family;
		q[i].h.nlmsg_flags = NLM_F_REQUEST;
		q[i].h.nlmsg_seq = (uint32_t)i;
		q[i].g.cmd = TASKSTATS_CMD_GET;
		q[i].g.version = 1;
		q[i].a.nla_len = NLA_HDRLEN + sizeof(uint32_t);
		q[i].a.nla_type = TASKSTATS_CMD_ATTR_PID;
		q[i].pid = (uint32_t)pids[i];
	}
	/* The kernel answers each message of the datagram in turn, while
	 * send runs: every reply (a record, or an error for a PID that is
	 * gone) is queued before send returns. */
	do
		sent = send(fd, q, sizeof(q[0]) * (size_t)n, 0);
	while (sent < 0 && errno == EINTR);
	if (sent < 0)
		return -1;
	while (replies < n && (got = rm_nl_recvm(fd, buf, EACH, RM_TS_QUERY_MAX, lens)) > 0)
		for (int i = 0; i < got; i++, replies++)
			rm_ts_parse(buf + (size_t)i * EACH, lens[i], family, cb, arg, NULL);
	return replies;
}

ssize_t rm_nl_recv(int fd, void *buf, size_t size)
{
	ssize_t n;

	do
		n = recv(fd, buf, size, MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return 0;
	return n;
}

int rm_nl_recvm(int fd, void *buf, size_t each, int max, size_t *lens)
{
	struct mmsghdr m[64];
	struct iovec iov[64];
	int n;

	if (max > 64)
		max = 64;
	memset(m, 0, sizeof(m[0]) * (size_t)max);
	for (int i = 0; i < max; i++) {
		iov[i].iov_base = (unsigned char *)buf + (size_t)i * each;
		iov[i].iov_len = each;
		m[i].msg_hdr.msg_iov = &iov[i];
		m[i].msg_hdr.msg_iovlen = 1;
	}
	do
		n = recvmmsg(fd, m, (unsigned)max, MSG_DONTWAIT, NULL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
	for (int i = 0; i < n; i++)
		/* A cut datagram is handed over cut: the parsers stop there. */
		lens[i] = m[i].msg_len;
	return n;
}
