/*
 * kmsg: the OOM killer's victims from the kernel log.  rm_kmsg_oom_parse()
 * reads one /dev/kmsg record ("PRIO,SEQ,USEC,FLAGS;MESSAGE") and
 * recognises the two lines the OOM killer prints for each kill:
 * "Out of memory: Killed process PID (NAME) ..." (or "Memory cgroup out of
 * memory: ...") and
 * "oom-kill:...,task=NAME,pid=PID,...".  USEC is the kernel's monotonic
 * clock (CLOCK_MONOTONIC, in microseconds).  rm_kmsg_read_ooms() reads the
 * whole ring buffer once, without blocking, and hands each kill (the two
 * lines of one kill merged) to a callback.  The name is raw: sanitize it
 * before printing.
 */
#ifndef RM_KMSG_H
#define RM_KMSG_H

#include <stddef.h>
#include <stdint.h>

struct rm_oom_kill {
	double mono_s;  /* kernel timestamp, seconds of CLOCK_MONOTONIC */
	int pid;
	char name[64];
};

/* 1 when rec[0..len) is an OOM kill line (o filled), else 0. */
int rm_kmsg_oom_parse(const char *rec, size_t len, struct rm_oom_kill *o);

/*
 * Read path (normally "/dev/kmsg"; a regular file of records one a line
 * also works) and call cb for every kill.  Returns the number of kills,
 * or -1 with errno when it cannot be opened or read (EPERM/EACCES where
 * dmesg_restrict keeps it from this user).
 */
int rm_kmsg_read_ooms(const char *path, void (*cb)(void *arg, const struct rm_oom_kill *o),
		      void *arg);

#endif
