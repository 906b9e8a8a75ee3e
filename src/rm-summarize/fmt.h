/*
 * fmt.h: the words and numbers the renderers share (fmt.c).  Nothing
 * here changes the report.
 */
#ifndef RM_SUMMARIZE_FMT_H
#define RM_SUMMARIZE_FMT_H

#include "report.h"

/* "H:MM:SS" for seconds since the start (no sign); "?" for NaN. */
void fmt_clock(double s, char *buf, size_t size);
/* "H:MM:SS.s": a time the kernel gave (an OOM victim's exit). */
void fmt_clock_tenths(double s, char *buf, size_t size);
/* "12.3 s", "4m05s", "1h02m03s"; "?" for NaN. */
void fmt_dur(double s, char *buf, size_t size);
/* A size in MiB as people say it: "512 MiB", "8 GiB", "1.5 GiB". */
void fmt_mib(double mb, char *buf, size_t size);
void fmt_kib(double kib, char *buf, size_t size);
/* Peak k's value with its aux (mem_pct, disk_pct, VRAM total). */
void fmt_val(int k, double v, double aux, char *buf, size_t size);
const char *peak_label(int k);
double mib(double kib);
/* Which peaks apply: the ones whose column the CSV has. */
int peak_applies(const struct sys *s, int k);
/* Was near-OOM judged at all: an available-memory reading, host or cgroup? */
int near_known(const struct sys *s);

/* Colour, only when opts say so. */
struct sty {
	const char *b, *red, *yel, *grn, *off;
};
struct sty sty_of(const struct opts *o);

/* The shown processes, heaviest first, one a call: from the report's
 * sort (spill.c) where opts.list_spill says so, else from r->order.  *it
 * starts at 0; tmp holds a row read back.  NULL after the last. */
const struct proc *listed_next(const struct report *r, size_t *it, struct proc *tmp);
/* Write out b's report so far where opts.stream allows and it is long:
 * a list of every process is never all held. */
void out_flush(struct rm_buf *b, const struct opts *o);

/* The heaviest in-scope row of the exit log, NULL without one. */
const struct proc *largest_row(const struct report *r);
/* The heaviest row of a process that ended (the exact figure's), NULL without one. */
const struct proc *largest_ended_row(const struct report *r);
/* Still running when the log was written: no end and no exit status. */
int proc_running(const struct proc *p);
/* Why the sampled tree total and the cgroup's exact peak differ; 0: nothing to say. */
int cgroup_gap(const struct job *j, char *buf, size_t size);
/* rm-run --memory-max: did CMD fit the budget, and if not, who was killed. */
void budget_line(const struct report *r, char *buf, size_t size);

/* --include/--exclude: how many match, and the peaks left out. */
struct filt {
	size_t shown, hidden;
	double hidden_kib;
	char names[200];     /* names seen, heaviest first, for the warning */
};
/* 0 without filters, else 1 with f filled. */
int filtered(const struct report *r, const struct opts *o, struct filt *f);
void filter_words(struct rm_buf *b, const struct opts *o);
void filter_warning(struct rm_buf *b, const struct report *r, const struct opts *o,
		    const struct filt *f);

/* The -j advice: the smaller of the effective cores and what memory
 * allows, and which of the two binds. */
long safe_jobs(const struct report *r, const struct perjob *pj);
const char *jobs_bound(const struct report *r, const struct perjob *pj);

/* A container's words (KiB in): its limit over time, its peak (a lower
 * bound says so), its OOM kills with their times, its stages, its name. */
void fmt_ctr_limit(const struct report *r, const struct ctr *c, char *buf, size_t size);
void fmt_ctr_peak(const struct report *r, const struct ctr *c, char *buf, size_t size);
void fmt_ctr_ooms(const struct report *r, const struct ctr *c, char *buf, size_t size);
void fmt_ctr_stages(const struct report *r, const struct ctr *c, char *buf, size_t size);
void fmt_ctr_name(const struct ctr *c, char *buf, size_t size);
/* The build ran in containers (tied, or started by its clients): the
 * system CSV's memory, swap, load and CPU are the host's (host_peak). */
int in_containers(const struct report *r);
/* The build has a headroom of its own (its containers, a cgroup limit
 * below the host's RAM, rm-run's --memory-max): the system CSV's figures
 * are labelled as the host's. */
int host_scoped(const struct report *r);
int host_peak(const struct report *r, int k);
/* Its memory limit at epoch t (KiB; the first one read before it), NaN: none. */
double ctr_limit_at(const struct ctr *c, double t);
/* The peak is a lower bound: gone since its last reading, or no
 * high-water mark from the kernel. */
int ctr_lower(const struct ctr *c);

/* Why the kernel killed, from the OOM record's constraint ("" unknown). */
const char *oom_cause(int constraint);

/* Markdown table cells: | and the inline markup characters escaped. */
void md_cell(struct rm_buf *b, const char *s);
/* " (emulated)" for an emulated process (rm-tree's emulated = yes), else "". */
const char *emu_mark(int emulated);
/* The one sentence on emulated processes' peaks, when any ran (else
 * nothing): what "(emulated)" means and that native peaks are lower. */
void emulated_note(struct rm_buf *b, const struct report *r, const char *lead);
/* "emulated": true, false or null (unknown). */
void jkey_emulated(struct rm_buf *b, int *first, int emulated);

/* A process as a row of the MD_PROC_HEAD table. */
#define MD_PROC_HEAD "| PID | comm | peak MiB | cmd |\n|---|---|---|---|\n"
void md_proc_row(struct rm_buf *b, const struct proc *p);

/* JSON: a number or null, an ISO time or null, a key (with its comma),
 * the epoch/iso/elapsed_s of a time, a stage, an exit status, a string. */
void jnum(struct rm_buf *b, double v, int prec);
void jiso(struct rm_buf *b, double epoch);
void jkey(struct rm_buf *b, int *first, const char *k);
void jtime(struct rm_buf *b, int *first, const struct sys *s, double epoch);
void jstage(struct rm_buf *b, int *first, const struct report *r, int stage);
void jexit(struct rm_buf *b, const char *e);
void jstr_or_null(struct rm_buf *b, const char *s);
/* A key and its value in one call (a NULL string is null). */
void jkey_num(struct rm_buf *b, int *first, const char *k, double v, int prec);
void jkey_long(struct rm_buf *b, int *first, const char *k, long v);
void jkey_str(struct rm_buf *b, int *first, const char *k, const char *s);

#endif
