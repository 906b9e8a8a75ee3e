/*
 * csvout.c: --csv FILE, the shown processes' peaks, heaviest first,
 * written as they come out of the report's sort (spill.c), a buffer of
 * rows at a time, never every row at once.
 * New columns go at the end, so that a reader by position keeps working.
 */
#include <errno.h>
#include <stdio.h>

#include "csvout.h"
#include "outfile.h"
#include "spill.h"

#define FLUSH_AT 65536

static void num_or_empty(struct rm_buf *b, double v, int prec)
{
	if (!isnan(v))
		rm_buf_num(b, v, prec);
}

static void proc_row(struct rm_buf *b, const struct proc *p)
{
	rm_buf_addf(b, "%d,%d,", p->pid, p->ppid);
	rm_buf_csv(b, p->comm);
	rm_buf_addc(b, ',');
	num_or_empty(b, p->start_s, 3);
	rm_buf_addc(b, ',');
	num_or_empty(b, p->end_s, 3);
	rm_buf_addc(b, ',');
	num_or_empty(b, p->peak_kib, 0);
	rm_buf_addc(b, ',');
	num_or_empty(b, p->peak_at, 3);
	rm_buf_addc(b, ',');
	num_or_empty(b, p->cpu_s, 2);
	rm_buf_addc(b, ',');
	rm_buf_csv(b, p->exit);
	rm_buf_addc(b, ',');
	rm_buf_csv(b, p->unit ? p->unit : "");
	rm_buf_addc(b, ',');
	rm_buf_csv(b, p->cmd ? p->cmd : "");
	/* As rm-tree's exit log has it: yes, no, empty when unknown. */
	rm_buf_adds(b, p->emulated == 1 ? ",yes\n" : p->emulated == 0 ? ",no\n" : ",\n");
}

/* b's rows to fd, b emptied: 0, or -1 with errno. */
static int flush(int fd, struct rm_buf *b)
{
	if (b->oom) {
		errno = ENOMEM;
		return -1;
	}
	if (rm_buf_write(fd, b) < 0)
		return -1;
	rm_buf_reset(b);
	return 0;
}

int write_proc_csv(const struct report *r, const char *path)
{
	struct rm_buf b = { 0 };
	struct rm_outfile o;
	struct proc p;
	char why[128];
	int rc = 0, e = 0;

	if (rm_out_open(path, &o, why, sizeof(why)) < 0)
		return -1;
	rm_buf_adds(&b, "pid,ppid,comm,start_s,end_s,peak_rss_kib,peak_at_s,cpu_s,exit,unit,cmd,emulated\n");
	if (r->sp_peak && spill_rewind(r->sp_peak) < 0)
		rc = -1;
	while (rc == 0 && r->sp_peak && (rc = spill_next(r->sp_peak, &p)) > 0) {
		proc_row(&b, &p);
		rc = b.len >= FLUSH_AT ? flush(o.fd, &b) : 0;
	}
	if (rc == 0)
		rc = flush(o.fd, &b);
	if (rc < 0) {
		e = errno;
		rm_out_abort(&o);
	} else if (rm_out_commit(&o, why, sizeof(why)) < 0) {
		e = errno;
		rc = -1;
	}
	rm_buf_free(&b);
	errno = e;
	return rc;
}
