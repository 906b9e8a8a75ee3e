/*
 * proctab: the one reader of a process's files under the proc root
 * (stat, status, cmdline, comm, smaps_rollup, ...), their pure parsers,
 * and a scan of every live process, without forking.
 *
 * rm_pfile_read() reads /proc/PID/NAME with one read(2), or one pread(2)
 * on a descriptor kept open from an earlier read, which also pins the
 * process: a kept descriptor of a process that ended reads as gone,
 * never as the next process with that pid.  The number of kept
 * descriptors is bounded by the file limit.  A file that cannot be
 * opened or read (the process vanished: ENOENT on open, ESRCH on read;
 * or it is not ours to read) is reported as gone (-1 with errno ESRCH)
 * so that callers can skip it silently; a kernel thread's empty file
 * reads as 0 bytes.
 *
 * The stat parser anchors on the *last* ')' because a command name may
 * hold ')' and spaces.
 */
#ifndef RM_PROCTAB_H
#define RM_PROCTAB_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define RM_COMM_MAX 64

/* PF_KTHREAD from include/linux/sched.h: the flags bit of kernel threads. */
#define RM_PF_KTHREAD 0x00200000u

struct rm_pstat {
	int pid;                 /* (1) */
	char comm[RM_COMM_MAX];  /* (2) raw, unsanitized */
	char state;              /* (3) */
	int ppid;                /* (4) */
	int pgrp;                /* (5) */
	unsigned flags;          /* (9) */
	uint64_t minflt;         /* (10) */
	uint64_t cminflt;        /* (11) of waited-for children: 0 when it reaped none */
	uint64_t utime, stime;   /* (14) (15) clock ticks */
	long threads;            /* (20) */
	uint64_t starttime;      /* (22) clock ticks after boot */
	uint64_t vsize;          /* (23) bytes */
	uint64_t rss_pages;      /* (24) */
	uint64_t exit_code;      /* (52) a wait status, when has_exit_code */
	int has_exit_code;       /* (52) is there (Linux 3.5 and later) */
};

/*
 * Parse the text of /proc/PID/stat.  Fields (4) to (24) must be there;
 * (52) may be.  A negative number (tpgid, priority) reads as 0.  Returns
 * 0 or -1 (malformed).
 */
int rm_pstat_parse(const char *buf, struct rm_pstat *st);
/*
 * Has the process ended: dead (X), or a zombie (Z) with no thread left?
 * A main thread that ends before the others (pthread_exit, as rustc's)
 * leaves its process a zombie with threads > 1 while they run: it lives.
 */
int rm_pstat_ended(const struct rm_pstat *st);

struct rm_pstatus {
	uint64_t rss_kib, hwm_kib;
	int has_rss, has_hwm;
	uint64_t rss_file_kib, rss_shmem_kib; /* 0 when absent (before 4.5) */
	uint32_t uid;                /* Uid: the real one (the first of four) */
	int has_uid;
};

/*
 * VmRSS and VmHWM (absent in kernel threads), RssFile, RssShmem and the
 * real Uid from /proc/PID/status text.  Returns 0, or -1 when neither VmRSS nor VmHWM
 * is there.
 */
int rm_pstatus_parse(const char *buf, struct rm_pstatus *ps);

/*
 * A live process's resident size from /proc/PID/statm (its second number,
 * pages, summed over the kernel's per-CPU counters as VmRSS is), in KiB.
 * Returns 0, or -1 when it cannot be read.
 */
int rm_pstatm_resident_kib(int pid, uint64_t *kib);

/*
 * Turn the NUL-separated argv of /proc/PID/cmdline (len bytes in buf) into
 * one space-separated string in place; returns its length.
 */
size_t rm_cmdline_join(char *buf, size_t len);

/* Pss from smaps_rollup text, in KiB; -1 when absent. */
int rm_smaps_pss_parse(const char *buf, uint64_t *pss_kib);

/*
 * Read /proc/PID/NAME with one read into buf (NUL-terminated).  With fd
 * NULL the file is opened, read and closed.  With *fd >= 0 it is re-read
 * with pread at 0; otherwise the file is opened and, when keep is set and
 * the descriptor budget allows, left open in *fd.  Returns the length (0
 * for an empty file), or -1 with errno ESRCH when the process is gone or
 * the file unreadable (its kept descriptor is then closed).
 */
ssize_t rm_pfile_read(int *fd, int pid, const char *name, char *buf, size_t size, int keep);
/*
 * The same, opening NAME in dir_fd (rm_pdir_open's) when it is >= 0: the
 * file is then that process's even once its pid is another's (a read of
 * a process that has ended fails, ESRCH), so the readings of one process
 * in a tick all come from it, as htop reads them.
 */
ssize_t rm_pfile_read_in(int dir_fd, int *fd, int pid, const char *name, char *buf, size_t size,
			 int keep);
/* A descriptor of /proc/PID (O_PATH, from the descriptor budget), for
 * rm_pfile_read_in; -1 when the process is gone or the budget spent.
 * rm_pfile_close returns it. */
int rm_pdir_open(int pid);
/* Close a kept descriptor and return it to the budget. */
void rm_pfile_close(int *fd);
/* Raise the file limit to its hard limit and size the budget from it. */
void rm_pfile_budget_init(void);

/*
 * Read and parse /proc/PID/stat.  Returns 0, or -1 with errno ESRCH when
 * the process is gone or the file unreadable or malformed.
 */
int rm_pstat_read(int pid, struct rm_pstat *st);

/* Kernel page size in KiB and clock ticks per second, cached. */
uint64_t rm_page_kib(void);
long rm_clk_tck(void);

/* Iterate the numeric entries of the proc root. */
struct rm_procscan {
	void *dir;
};

int rm_procscan_open(struct rm_procscan *ps);
/* The next PID, or 0 at the end. */
int rm_procscan_next(struct rm_procscan *ps);
void rm_procscan_close(struct rm_procscan *ps);

/*
 * Count live (not zombie) processes whose name is one of names[0..n).
 * Names compare as the kernel stores them, cut to 15 bytes.  Reads
 * /proc/PID/comm, and stat only for a match.  Returns the count, or -1
 * when the proc root cannot be read.
 */
long rm_proc_count_names(const char *const *names, int n);

/* The same scan, calling cb (when not NULL) with each PID counted. */
long rm_proc_scan_names(const char *const *names, int n, void (*cb)(void *arg, int pid),
			void *arg);

/* Is comm (len bytes, no newline, not NUL-terminated) one of names, as above? */
int rm_comm_is(const char *comm, size_t len, const char *const *names, int n);
#endif
