/*
 * model.h: the model builder (model.c).  Each input is opened and its
 * header read once (inputs_open), then every file is read into reports,
 * in the order given: a system CSV starts a new report unless the current
 * one has none yet, and every other file joins the current report.
 * Bad input exits 1 with a message, before anything is printed.
 */
#ifndef RM_SUMMARIZE_MODEL_H
#define RM_SUMMARIZE_MODEL_H

#include <sys/stat.h>

#include "report.h"

/* What a file is, from its header. */
enum fkind { F_SYS, F_EXITLOG, F_JOB, F_TIMELINE, F_STATS, F_CONTAINERS };

struct input {
	const char *path;
	char *shown;           /* the path, safe to print */
	enum fkind kind;
	int fd;                /* opened once, by the header pass */
	struct stat st;        /* what fd is (outputs must not be inputs) */
	char *pre;             /* a pipe's bytes the header pass consumed */
	size_t npre;
};

/* Open paths[0..n) and classify each by its header. */
struct input *inputs_open(char *const *paths, int n);
void inputs_free(struct input *in, int n);
/* Read every input into reports, derive, and judge; *nrep of them. */
struct report *model_build(struct input *in, int nin, const struct opts *o, int *nrep);
void report_free(struct report *r);

#endif
