/*
 * proctab: the per-process files of /proc (stat, status, cmdline,
 * smaps_rollup) and a scan of every live process, without forking.
 *
 * The stat parser anchors on the *last* ')' because a command name may
 * hold ')' and spaces.  A process that vanishes mid-read (ENOENT on open,
 * ESRCH on read, an empty file) is reported as gone (-1 with errno ESRCH)
 * so that callers can skip it silently.
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
	uint64_t utime, stime;   /* (14) (15) clock ticks */
	long threads;            /* (20) */
	uint64_t starttime;      /* (22) clock ticks after boot */
	uint64_t vsize;          /* (23) bytes */
	uint64_t rss_pages;      /* (24) */
};

/* Parse the text of /proc/PID/stat.  Returns 0 or -1 (malformed). */
int rm_pstat_parse(const char *buf, struct rm_pstat *st);

struct rm_pstatus {
	uint64_t rss_kib, hwm_kib;
	int has_rss, has_hwm;
};

/* VmRSS and VmHWM from /proc/PID/status text (absent in kernel threads). */
int rm_pstatus_parse(const char *buf, struct rm_pstatus *ps);

/*
 * Turn the NUL-separated argv of /proc/PID/cmdline (len bytes in buf) into
 * one space-separated string in place; returns its length.
 */
size_t rm_cmdline_join(char *buf, size_t len);

/* Pss from smaps_rollup text, in KiB; -1 when absent. */
int rm_smaps_pss_parse(const char *buf, uint64_t *pss_kib);

/*
 * Readers for one process under the proc root.  Each returns 0, or -1
 * with errno ESRCH when the process is gone or the file unreadable.
 */
int rm_pstat_read(int pid, struct rm_pstat *st);
int rm_pstatus_read(int pid, struct rm_pstatus *ps);
/* cmdline joined and NUL-terminated in buf; returns its length or -1. */
ssize_t rm_cmdline_read(int pid, char *buf, size_t size);
int rm_smaps_pss_read(int pid, uint64_t *pss_kib);

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

/* Boot time from /proc/stat btime, for turning starttime into epoch. */
int rm_boot_time(uint64_t *btime);



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
