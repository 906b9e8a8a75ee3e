/*
 * csvout.c: --csv FILE, the shown processes' peaks, heaviest first.
 * New columns go at the end, so that a reader by position keeps working.
 */
#include <errno.h>
#include <stdio.h>

#include "csvout.h"

static void num_or_empty(struct rm_buf *b, double v, int prec)
{
	if (!isnan(v))
		rm_buf_num(b, v, prec);
}

int write_proc_csv(const struct report *r, const char *path)
{
	struct rm_buf b = { 0 };
	int rc;

	rm_buf_adds(&b, "pid,ppid,comm,start_s,end_s,peak_rss_kib,peak_at_s,cpu_s,exit,unit,cmd,emulated\n");
	for (size_t i = 0; i < r->nproc; i++) {
		const struct proc *p = r->order[i];
		if (!p->shown)
			continue;
		rm_buf_addf(&b, "%d,%d,", p->pid, p->ppid);
		rm_buf_csv(&b, p->comm);
		rm_buf_addc(&b, ',');
		num_or_empty(&b, p->start_s, 3);
		rm_buf_addc(&b, ',');
		num_or_empty(&b, p->end_s, 3);
		rm_buf_addc(&b, ',');
		num_or_empty(&b, p->peak_kib, 0);
		rm_buf_addc(&b, ',');
		num_or_empty(&b, p->peak_at, 3);
		rm_buf_addc(&b, ',');
		num_or_empty(&b, p->cpu_s, 2);
		rm_buf_addc(&b, ',');
		rm_buf_csv(&b, p->exit);
		rm_buf_addc(&b, ',');
		rm_buf_csv(&b, p->unit ? p->unit : "");
		rm_buf_addc(&b, ',');
		rm_buf_csv(&b, p->cmd);
		/* As rm-tree's exit log has it: yes, no, empty when unknown. */
		rm_buf_adds(&b, p->emulated == 1 ? ",yes\n" : p->emulated == 0 ? ",no\n" : ",\n");
	}
	if (b.oom) {
		errno = ENOMEM;
		rm_buf_free(&b);
		return -1;
	}
	rc = write_whole(path, &b);
	rm_buf_free(&b);
	return rc;
}
