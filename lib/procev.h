/*
 * procev: the kernel's own process events.  Two netlink sources:
 *
 *  - the proc connector (NETLINK_CONNECTOR, CN_IDX_PROC): fork, exec,
 *    comm and exit events, the moment they happen.  Any user may listen
 *    since Linux 6.6 (before: CAP_NET_ADMIN).
 *  - taskstats exit records (generic netlink family "TASKSTATS", a
 *    listener registered for every possible CPU): for each exiting task
 *    the kernel's high-water RSS (the counter wait4's ru_maxrss reads),
 *    CPU, I/O, faults and the delay-accounting totals.  Registering needs
 *    CAP_NET_ADMIN in the initial user and PID namespaces.
 *
 * The parsers (a received datagram in, events or records out) are pure
 * and never read past the lengths the message gives: struct taskstats is
 * read by its version and its attribute's length, field by field, never
 * cast.  Version 15 inserted max/min pairs in the middle of the struct
 * (version 16 moved them to the end): from a v15 record only the fields
 * that v14 had are read, at their v15 places.  lib/ never prints: the
 * openers say why they failed in a caller's buffer.
 */
#ifndef RM_PROCEV_H
#define RM_PROCEV_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A proc connector event. */
enum rm_pe_what { RM_PE_OTHER, RM_PE_FORK, RM_PE_EXEC, RM_PE_COMM, RM_PE_EXIT };

struct rm_pe {
	enum rm_pe_what what;
	int pid, tgid;           /* the process (fork: the child) */
	int ppid, ptgid;         /* fork: the parent; exit: the parent */
	uint32_t exit_code;      /* exit: a wait status */
	char comm[17];           /* comm: the new name, NUL-terminated */
	uint64_t ts_ns;          /* the kernel's timestamp: CLOCK_MONOTONIC ns */
};

/*
 * Parse the events in one datagram from the connector socket (one or
 * more netlink messages).  Calls cb for each proc event; returns the
 * number of events, or -1 when the datagram is malformed (what was whole
 * before the damage is still handed over).
 */
int rm_pe_parse(const void *buf, size_t len, void (*cb)(void *arg, const struct rm_pe *e),
		void *arg);

/* A taskstats record, as much of it as the version and length gave. */
struct rm_ts {
	int version;
	int tgid_aggr;           /* 1: the TGID aggregate of a process */
	uint32_t id;             /* the nested PID or TGID attribute */
	uint32_t pid, tgid, ppid;
	uint32_t uid;            /* ac_uid: the real user, as rm-tree sees it */
	uint32_t exitcode;       /* a wait status */
	unsigned flags;          /* ac_flag (AGROUP 0x20: the last task) */
	char comm[33];
	uint64_t btime;          /* seconds since the epoch */
	uint64_t etime_us, utime_us, stime_us, minflt, majflt;
	uint64_t hiwater_rss_kib;
	uint64_t read_bytes, write_bytes;
	/* delay totals, ns */
	uint64_t cpu_delay, blkio_delay, swapin_delay, freepages_delay, thrashing_delay;
	unsigned has_basic : 1;  /* exit code, comm, uid, pid, ppid, times, faults */
	unsigned has_mem : 1;    /* hiwater_rss */
	unsigned has_io : 1;     /* read_bytes, write_bytes */
	unsigned has_delay : 1;  /* cpu, blkio, swapin delays */
	unsigned has_delay2 : 1; /* freepages (reclaim), thrashing */
	unsigned has_tgid : 1;   /* ac_tgid */
};

#define RM_TS_AGROUP 0x20u

/*
 * Parse a struct taskstats of len bytes.  Returns 0, or -1 when too short
 * for even the version.  A field is read only when the record's length
 * holds it and its version has it.
 */
int rm_ts_parse_stats(const void *p, size_t len, struct rm_ts *r);

/*
 * Parse one datagram from the taskstats socket: each TASKSTATS_CMD_NEW
 * message of family `family` carries an AGGR_PID (and, for the last task
 * of a process that had threads, an AGGR_TGID) with the id and the
 * stats nested.  Calls cb for each record, in order; returns the number
 * of records, or -1 when malformed.  A netlink error message with a
 * negative code sets *nlerr to it (when nlerr is not NULL).
 */
int rm_ts_parse(const void *buf, size_t len, int family,
		void (*cb)(void *arg, const struct rm_ts *r), void *arg, int *nlerr);

/*
 * Sockets.  Each opener returns a non-blocking descriptor, or -1 with
 * errno and a reason in why.  rcvbuf: the receive buffer to ask for
 * (forced past rmem_max when allowed; the environment's RM_EV_RCVBUF, a
 * test knob, replaces it).  events: the RM_PE_WANT_* wanted (since 6.6
 * the kernel filters the others out; before, every event comes, and
 * listening needs CAP_NET_ADMIN, which is checked here).
 */
#define RM_PE_WANT_FORK 0x1u
#define RM_PE_WANT_EXEC 0x2u
#define RM_PE_WANT_COMM 0x200u
#define RM_PE_WANT_EXIT 0x80000000u
int rm_pe_open(int rcvbuf, unsigned events, char *why, size_t wsize);
int rm_ts_open(int rcvbuf, int *family, char *why, size_t wsize);

/*
 * Taskstats asked about live processes (TASKSTATS_CMD_GET; needs
 * CAP_NET_ADMIN, as the listener does).  rm_ts_query_open: a socket of
 * its own, not a listener, so that no exit record comes to it.
 * rm_ts_query: one datagram asks for the thread pids[i] of each i < n
 * (n at most RM_TS_QUERY_MAX); cb gets each record that comes back (its
 * id the PID asked; hiwater_rss is the process's VmHWM, ac_uid its real
 * user).  A PID that is gone gets no record.  Returns the replies read
 * (records and errors), or -1 with errno.  Two or three system calls a
 * batch, where reading /proc/PID/statm takes three for each process.
 */
#define RM_TS_QUERY_MAX 64
int rm_ts_query_open(int *family, char *why, size_t wsize);
int rm_ts_query(int fd, int family, const int *pids, int n,
		void (*cb)(void *arg, const struct rm_ts *r), void *arg);

/*
 * Receive one datagram into buf.  Returns its length, 0 when nothing is
 * waiting, or -1 with errno (ENOBUFS: the kernel dropped events because
 * the buffer was full; the socket stays usable).
 */
ssize_t rm_nl_recv(int fd, void *buf, size_t size);

/*
 * Replace a connector socket's filter: pass only the fork events whose
 * parent, and the exec and comm events whose process, is one of
 * tgids[0..n) (n at most 255); n < 0 drops every event.  0, or -1 with
 * errno.
 */
int rm_pe_filter_tgids(int fd, const int *tgids, int n);

/*
 * Receive up to max (at most 64) datagrams with one system call, the
 * i-th into buf + i * each (buf holds max * each bytes), its length in
 * lens[i].  Returns how many, 0 when nothing is waiting, or -1 with errno
 * as rm_nl_recv.
 */
int rm_nl_recvm(int fd, void *buf, size_t each, int max, size_t *lens);

#endif
