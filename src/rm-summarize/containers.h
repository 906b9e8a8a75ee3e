/*
 * containers.h: the containers companion (resources-ID.containers.csv,
 * written by rm-tree --containers) folded into the report's containers
 * (containers.c): one struct ctr per container ID, whatever its number
 * of rows, with its limit over time, its peak, its OOM kills and the
 * stages it ran in; and the container clients of the build's exit log.
 */
#ifndef RM_SUMMARIZE_CONTAINERS_H
#define RM_SUMMARIZE_CONTAINERS_H

#include "report.h"

/* 1 when the header is the containers companion's. */
int containers_is_header(const struct rm_csv *hdr);
void containers_header(struct report *r, const struct rm_csv *hdr);
/* Fold one row (after the system CSV's rows); -1 with why when it is not one. */
int containers_row(struct report *r, struct rm_csv *c, char *why, size_t wsize);
/* After every file: the build's container clients, the tied count, the
 * binding container.  Before the verdicts. */
void containers_finish(struct report *r);
void containers_free(struct ctrs *cs);
/* The container whose cgroup is cg or holds it (a kernel log path), or -1. */
int containers_of_cgroup(const struct report *r, const char *cg);
/* 1 when c is tied to the build. */
int ctr_tied(const struct ctr *c);
/* The tightest limit of the tied containers that ran in stage (KiB), NaN
 * without; *which the container. */
double ctr_stage_limit(const struct report *r, int stage, const struct ctr **which);
/* The least any tied container had left in stage (KiB), NaN without. */
double ctr_stage_avail(const struct report *r, int stage);
/* Near-OOM within a container, as within a cgroup: below the smaller of
 * --near-oom-mb and 15 % of its limit (KiB). */
double ctr_near_threshold(const struct opts *o, double limit_kib);
/* The build ran container clients, and the companion ties none of the
 * containers to it. */
int ctr_untied_clients(const struct report *r);
/* Is it a build whose memory is its containers' (a tied container with a limit)? */
int ctr_binding(const struct report *r);

/* A docker/podman/nerdctl command line that runs, creates, starts or
 * enters a container. */
int containers_is_client(const char *cmd);

#endif
