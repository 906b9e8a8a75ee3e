/*
 * engine: ask a container engine (dockerd) over its Unix socket which
 * containers carry a name or a label, as a root process that trusts
 * neither the socket's path nor what answers on it.
 *
 * The socket is found per client as docker finds it: -H/--host from its
 * argv, else DOCKER_HOST from its environment, else /var/run/docker.sock;
 * only unix:// is followed (tcp://, ssh://, fd:// and npipe:// are not:
 * a remote engine's containers are not on this host's cgroups anyway).
 *
 * rm_engine_get speaks HTTP/1.1 (one GET, Connection: close) and is
 * bounded in everything: the socket must be a socket owned by root or by
 * the client's user, and the process answering on it (SO_PEERCRED) must
 * be one of those too; the whole exchange has a deadline; the answer is
 * read into the caller's fixed buffer, and one larger is refused.  The
 * response parser (rm_http_response: Content-Length, chunked, or to the
 * close) and the list reader (rm_engine_list) are pure and fuzzed.
 */
#ifndef RM_ENGINE_H
#define RM_ENGINE_H

#include <stddef.h>
#include <sys/types.h>

#include "container.h"

#define RM_ENGINE_SOCK "/var/run/docker.sock"

/*
 * The engine socket of a docker client: host is its -H/--host value (or
 * NULL), env its DOCKER_HOST (or NULL); the first given decides.
 * Returns 1 with path (an absolute path, cap bytes), 0 when that engine
 * is not a local Unix socket, with *why saying so.
 */
int rm_engine_socket(const char *host, const char *env, char *path, size_t cap, const char **why);

/*
 * The docker context a client uses, as the docker CLI decides: its
 * --context; else "default" when -H or DOCKER_HOST is given; else
 * DOCKER_CONTEXT; else the config's currentContext (current, or NULL);
 * else "default".  The "default" context's engine is -H, DOCKER_HOST or
 * the default socket (rm_engine_socket).
 */
const char *rm_engine_context_name(const char *context, const char *host, const char *docker_host,
				   const char *docker_context, const char *current);

/* Is name a docker context name ([a-zA-Z0-9][a-zA-Z0-9_.+-]*, at most
 * 255 bytes)?  Only such a name is looked up. */
int rm_engine_context_ok(const char *name);

/* A docker config.json's "currentContext": 1 with it in name (cap
 * bytes), 0 when there is none or the file is not such an object. */
int rm_engine_config_context(const char *json, size_t len, char *name, size_t cap);

/* A docker context's meta.json ("Endpoints" -> "docker" -> "Host"): 1
 * with that URL in host (cap bytes), 0 when not there. */
int rm_engine_context_host(const char *json, size_t len, char *host, size_t cap);

/* The value of NAME in a NUL-separated environment block (as
 * /proc/PID/environ gives it), or NULL. */
const char *rm_environ_get(const char *env, size_t len, const char *name);

/*
 * Parse an HTTP/1.x response in buf[0..len).  Returns 1 when it is
 * whole (*status, and the body at *body, *blen: a chunked body is
 * decoded in place), 0 when more is needed (eof 0) or it was cut short
 * (eof 1: that is malformed), -1 when malformed.  eof says the peer
 * closed: a body with neither length nor chunking ends there.
 */
int rm_http_response(char *buf, size_t len, int eof, int *status, char **body, size_t *blen);

/* s percent-encoded for a URL query into out (cap bytes): 0, or -1 when
 * it does not fit. */
int rm_url_encode(const char *s, char *out, size_t cap);

/*
 * GET target (an origin-form path with its query) from the engine at the
 * socket sock, on behalf of a client of user uid.  buf (cap bytes) holds
 * the response; the body is NUL-terminated at *body.  Returns the HTTP
 * status, or -1 with why (wcap bytes) saying what failed.  timeout_ms
 * bounds the whole exchange.
 */
int rm_engine_get(const char *sock, uid_t uid, const char *target, int timeout_ms,
		  char *buf, size_t cap, char **body, size_t *blen, char *why, size_t wcap);

/*
 * An engine's answer to GET /containers/json (a JSON array of objects):
 * for each container whose "Created" (seconds since the epoch) is at
 * least since, and which has the name (one of "Names" is "/NAME") or the
 * label (its "Labels" has K with value V, from "K=V"; "K" alone: K with
 * any value), fn is called with its ID (64 hex digits) and its first
 * name without the leading '/' ("" when it has none).  Exactly one of
 * name and label is given.  Returns the number of containers matched, -1
 * when the answer is not such an array.
 */
int rm_engine_list(const char *body, size_t len, const char *name, const char *label, double since,
		   void (*fn)(const char *id, const char *name, void *arg), void *arg);

#endif
