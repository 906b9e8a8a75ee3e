/*
 * container: the facts that tie a container to the process that asked for
 * it, as pure parsers (strings in, structs out; tested on fixture strings
 * in tests/unit/t_container.c).
 *
 * A memory cgroup path (relative to its hierarchy's root, as
 * /proc/PID/cgroup writes it) names a container's ID, its runtime and its
 * cgroup driver for every layout docker and podman make: cgroupfs
 * (/docker/ID, /PARENT/ID, /libpod_parent/libpod-ID), systemd
 * (/system.slice/docker-ID.scope, /machine.slice/libpod-ID.scope), the
 * same on v1 and v2, and rootless under
 * /user.slice/user-UID.slice/user@UID.service/.  conmon's own cgroup
 * (libpod-conmon-ID) is not a container's.
 *
 * A container client's argv (docker, podman, nerdctl) gives its
 * subcommand and the flags that tie what it starts: --cidfile, --name,
 * --label/-l, --cgroup-parent (in the --opt=V and --opt V forms), and the
 * global -H/--host (podman --url).  Options are read only up to the image
 * (run, create) or the container (start, exec): what follows is the
 * container's own command, whose flags tie nothing.  An option not known
 * to take a value is read as a flag, so a misread ends the options early
 * (a tie missed), never late (a tie made from the container's command).
 * The strings returned point into argv.
 */
#ifndef RM_CONTAINER_H
#define RM_CONTAINER_H

#include <stddef.h>

#define RM_CT_ID_LEN 64

struct rm_ct_cgroup {
	char id[RM_CT_ID_LEN + 1];  /* 64 lowercase hex digits */
	const char *runtime;        /* "docker", "podman", "containerd", "cri-o", or "" */
	const char *driver;         /* "cgroupfs" or "systemd" */
	size_t len;                 /* path[0..len) is the container's cgroup */
	size_t parent_len;          /* path[0..parent_len) its parent ("" = the root) */
	long uid;                   /* rootless: the user's uid; else -1 */
};

/*
 * The outermost container cgroup on path (a cgroup below a container's,
 * such as podman's "libpod-ID.scope/container", is that container's).
 * Returns 1 with *c filled, 0 when path is in no container.
 */
int rm_ct_parse_cgroup(const char *path, struct rm_ct_cgroup *c);

/*
 * Is the container cgroup path (as rm_ct_parse_cgroup found it: its
 * parent is path[0..parent_len)) directly under the --cgroup-parent P?
 * P is a cgroupfs path ("/ci" or "ci": the container is /ci/ID) or a
 * systemd slice ("ci-build.slice": /ci.slice/ci-build.slice/...).  1 or 0.
 */
int rm_ct_under_parent(const char *p, const char *path, size_t parent_len);

/* 1 when s is exactly 64 lowercase hex digits (a container ID). */
int rm_ct_is_id(const char *s, size_t len);

enum rm_ct_sub {
	RM_CT_NOT_CLIENT,   /* argv[0] is not a container client */
	RM_CT_OTHER,        /* ps, rm, pull, inspect, compose, ... */
	RM_CT_RUN, RM_CT_CREATE, RM_CT_START, RM_CT_EXEC,
	RM_CT_BUILD,        /* docker build, image build, builder build */
	RM_CT_BUILDX,       /* buildx build (BuildKit) */
};

#define RM_CT_MAX_LABELS 16

struct rm_ct_client {
	const char *engine;         /* "docker", "podman", "nerdctl" */
	enum rm_ct_sub sub;
	const char *host;           /* -H/--host (podman --url), or NULL */
	const char *context;        /* docker --context/-c NAME, or NULL */
	const char *config;         /* docker --config DIR, or NULL */
	const char *cidfile;        /* --cidfile FILE */
	const char *name;           /* --name NAME */
	const char *cgroup_parent;  /* --cgroup-parent P */
	const char *labels[RM_CT_MAX_LABELS];  /* --label/-l K=V (or K), as given */
	int nlabels;
	const char *target;         /* start, exec: the (first) container named */
};

/*
 * Read a client's argv (argc words; argv[0] may be a path, or a CLI
 * plugin such as docker-buildx).  Returns c->sub (RM_CT_NOT_CLIENT when
 * argv[0] is none).
 */
enum rm_ct_sub rm_ct_parse_client(char *const *argv, int argc, struct rm_ct_client *c);

/* The subcommand in words: "run", "create", ... ("" for none). */
const char *rm_ct_sub_name(enum rm_ct_sub sub);

#endif
