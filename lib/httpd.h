/*
 * httpd: a small HTTP/1.1 server for scrapes, built to survive hostile
 * clients on one thread.
 *
 * The request parser (rm_http_parse) is pure: bytes in, a request out,
 * so it is unit-tested and fuzzed on strings.  The server (rm_httpd_*)
 * is a fixed table of RM_HTTPD_MAX_CONN connections, each with a fixed
 * RM_HTTP_MAX_HEAD byte input buffer: nothing it allocates grows with
 * what a client sends.  A request line and headers longer than that get
 * 431; a malformed one 400; a connection gets RM_HTTPD_DEADLINE seconds
 * from its accept (or from its previous answer) to send a whole request,
 * so a client that sends half a request and goes silent loses its slot;
 * when every slot is taken, a new connection closes the idlest one.
 * Only GET is served; a request body is never read (a request that
 * announces one is answered, then the connection is closed).
 *
 * The server does not own a loop: rm_httpd_fds() fills pollfds (and
 * lowers the timeout to the next deadline), rm_httpd_ready() acts on
 * what poll returned, so it runs inside lib/tick's wait (rm_tick_hook)
 * or any other poll loop.  A handler answers at once with
 * rm_httpd_reply(), or keeps the request waiting (it returns
 * RM_HTTPD_LATER with the connection's ticket) and answers it later with
 * rm_httpd_reply_ticket(); a ticket whose connection went away is
 * refused, never answered on another client's connection.
 *
 * Bounds besides the table: a body is at most RM_HTTPD_MAX_ANSWER bytes
 * (a larger one is answered 500); a connection's output buffer is freed
 * when it closes and after an answer larger than RM_HTTPD_KEEP_OUT, and
 * an answer shared by many connections (rm_httpd_reply_blob) is one
 * reference-counted copy, not one per connection.  When accept fails
 * for want of descriptors (EMFILE, ENFILE) the listening socket is left
 * out of the poll for a while (50 ms, doubling to 1 s), so the backlog
 * waits without a busy loop; and a connection that would leave fewer
 * than RM_HTTPD_FD_SPARE descriptors under the soft limit is closed at
 * once (a quarter of the limit when that is less), so the program
 * serving keeps descriptors for its own reading.
 *
 * The peer (rm_httpd_peer): over a Unix socket ("unix:PATH"), its uid
 * from SO_PEERCRED; over TCP, the uid of the peer's own socket in
 * /proc/net/tcp or tcp6 (a socket of this network namespace: a local
 * user, whatever address it connected to), read when first asked and
 * kept for the connection; a peer whose socket is not there (another
 * host, another network namespace) has no uid.
 */
#ifndef RM_HTTPD_H
#define RM_HTTPD_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "text.h"

#define RM_HTTP_MAX_HEAD 8192
#define RM_HTTP_MAX_PATH 256
#define RM_HTTP_MAX_QUERY 512
#define RM_HTTPD_MAX_CONN 64
#define RM_HTTPD_DEADLINE 5.0
#define RM_HTTPD_MAX_ANSWER (16u << 20)
#define RM_HTTPD_KEEP_OUT 65536
#define RM_HTTPD_FD_SPARE 16

enum rm_http_method { RM_HTTP_GET, RM_HTTP_HEAD, RM_HTTP_OTHER };

struct rm_http_req {
	enum rm_http_method method;
	int minor;               /* HTTP/1.minor */
	int keep_alive;          /* the client lets the connection stay open */
	int has_body;            /* Content-Length > 0 or Transfer-Encoding */
	char path[RM_HTTP_MAX_PATH];    /* before '?', as sent */
	char query[RM_HTTP_MAX_QUERY];  /* after '?', as sent ("" if none) */
	int status;              /* when rm_http_parse fails: 400, 431, 505 */
};

/*
 * Parse a request line and headers at the start of buf[0..len).
 * Returns the length of the head (through its empty line) when it is
 * complete, 0 when more bytes are needed (and len < RM_HTTP_MAX_HEAD),
 * or -1 with req->status set (431 when the head does not fit in
 * RM_HTTP_MAX_HEAD bytes or a path or query is too long, 505 for a
 * version other than HTTP/1.x, 400 otherwise).  Lines end in CRLF or LF.
 * buf need not be NUL-terminated.
 */
int rm_http_parse(const char *buf, size_t len, struct rm_http_req *req);

/*
 * The values of parameter `name` in a query string, one per call: start
 * with *pos = 0.  Copies the value (percent-decoding %XX and '+') into
 * val, NUL-terminated and cut to size - 1.  Returns 1 for a value, 0 when
 * there are no more.
 */
int rm_http_query_next(const char *query, size_t *pos, const char *name,
		       char *val, size_t size);

/* The reason phrase of a status, "" when unknown. */
const char *rm_http_reason(int status);

/*
 * Parse ADDR:PORT for --listen: ":PORT" is 127.0.0.1, "[V6]:PORT" IPv6,
 * "A.B.C.D:PORT" IPv4; port 0 lets the kernel choose; "unix:PATH" a Unix
 * socket (PATH at most 107 bytes, not ending in '/').  Fills a
 * sockaddr_storage (opaque here) and its length; *loopback is set when
 * the address is a loopback one or a Unix socket.  Returns 0, or -1 when
 * the text is not an address and port.
 */

int rm_http_addr_parse(const char *text, struct sockaddr_storage *ss,
		       unsigned *sslen, int *loopback);

/*
 * The uid of the socket in a /proc/net/tcp or tcp6 table (text[0..len))
 * whose local address is `local` and remote address `remote` (IPv4 and
 * IPv4-mapped IPv6 compare equal), in a state with an owner
 * (ESTABLISHED, FIN_WAIT1, FIN_WAIT2: a TIME_WAIT row has uid 0).
 * Returns 1 with *uid set, 0 when no such row.
 */
int rm_http_tcp_uid(const char *text, size_t len, const struct sockaddr_storage *local,
		    const struct sockaddr_storage *remote, unsigned long *uid);

#define RM_HTTPD_LATER 1

struct rm_httpd;

/*
 * Called once per request, with its connection's ticket.  Return 0 after
 * answering with rm_httpd_reply(h, ticket, ...), or RM_HTTPD_LATER to
 * answer with it later (the connection then waits with no read deadline).
 */
typedef int (*rm_httpd_handler)(void *arg, struct rm_httpd *h, uint64_t ticket,
				const struct rm_http_req *req);

/* An answer shared by several connections: refs counts its users. */
struct rm_httpd_blob {
	unsigned refs;
	size_t len;
	char p[];
};

/* A copy of p[0..len) with one reference, or NULL (ENOMEM). */
struct rm_httpd_blob *rm_httpd_blob_new(const char *p, size_t len);
/* Drop a reference; the last frees it.  NULL is ignored. */
void rm_httpd_blob_put(struct rm_httpd_blob *b);

enum rm_httpd_peer_kind {
	RM_PEER_UNIX,            /* a Unix socket: uid from SO_PEERCRED */
	RM_PEER_LOCAL,           /* TCP from a socket of this network namespace */
	RM_PEER_REMOTE,          /* TCP from elsewhere: no uid */
};

struct rm_httpd_peer {
	int kind;
	int uid_known;
	unsigned long uid;
	char key[64];            /* "uid:N", or the address: for per-peer limits */
};

struct rm_httpd_conn {
	int fd;                  /* -1: free slot */
	enum { C_READ, C_WAIT, C_WRITE, C_DRAIN } state;
	int keep;                /* keep the connection after this answer */
	uint32_t gen;            /* part of the ticket */
	double deadline;         /* monotonic */
	double active;           /* last byte in or out */
	size_t in_len, out_off;  /* out_off runs over out, then blob */
	char in[RM_HTTP_MAX_HEAD];
	struct rm_buf out;       /* the status line and headers (and a body) */
	struct rm_httpd_blob *blob;   /* a shared body, or NULL */
	struct sockaddr_storage addr; /* the peer's address (TCP) */
	int peer_done;
	struct rm_httpd_peer peer;
};

struct rm_httpd {
	int lfd;
	int family;              /* of the listening socket */
	int udir;                /* a Unix socket's directory, or -1 */
	char uname[108];         /* its name there */
	char upath[108];         /* the path as given */
	unsigned long udev, uino;     /* the socket file bound */
	long fd_limit;           /* the soft RLIMIT_NOFILE at open */
	double accept_at, backoff;    /* accept paused until accept_at */
	rm_httpd_handler handler;
	void *arg;
	double wake_at;          /* the caller's own timer (0: none) */
	void (*on_wake)(void *arg, struct rm_httpd *h, double now);
	struct rm_httpd_conn c[RM_HTTPD_MAX_CONN];
	unsigned long served, refused, evicted, accept_paused;
};

/*
 * Bind and listen on the address text (see rm_http_addr_parse).  Returns
 * 0, or -1 with errno (EINVAL for an address that does not parse).
 */
int rm_httpd_open(struct rm_httpd *h, const char *addr, rm_httpd_handler fn, void *arg);
/* Close every connection and the listening socket (a Unix socket's name
 * is removed, if it is still the socket bound). */
void rm_httpd_close(struct rm_httpd *h);

/*
 * Poll integration: fill at most max pollfds (max >= RM_HTTPD_MAX_CONN +
 * 1) and lower *timeout (seconds, from now) to the next deadline or
 * wake_at.  Returns the number filled.
 */
int rm_httpd_fds(struct rm_httpd *h, struct pollfd *p, int max, double *timeout);
/* Act on the pollfds rm_httpd_fds filled (after poll), and on deadlines. */
void rm_httpd_ready(struct rm_httpd *h, const struct pollfd *p, int n);

/*
 * Answer the request of ticket: status, content type (NULL for
 * text/plain), body.  Returns 0, or -1 when the connection is gone.
 */
int rm_httpd_reply(struct rm_httpd *h, uint64_t ticket, int status,
		   const char *ctype, const char *body, size_t len);
/* Is the request of ticket still waiting for its answer? */
int rm_httpd_ticket_live(const struct rm_httpd *h, uint64_t ticket);

/* Same, with extra header lines (each ending in \r\n) before the body. */
int rm_httpd_reply_hdr(struct rm_httpd *h, uint64_t ticket, int status,
		       const char *ctype, const char *headers,
		       const char *body, size_t len);

/*
 * Answer with a shared body: the connection takes a reference to b (the
 * caller keeps its own).  Returns 0, or -1 when the connection is gone.
 */
int rm_httpd_reply_blob(struct rm_httpd *h, uint64_t ticket, int status,
			const char *ctype, struct rm_httpd_blob *b);

/* The peer of ticket's connection (see above).  Returns 0, or -1 when
 * the connection is gone. */
int rm_httpd_peer(struct rm_httpd *h, uint64_t ticket, struct rm_httpd_peer *p);

/* The bound address as ADDR:PORT (the port chosen for port 0), or
 * unix:PATH; -1 on error. */
int rm_httpd_name(const struct rm_httpd *h, char *buf, size_t size);

/* Connections open now (for tests and stats). */
int rm_httpd_open_conns(const struct rm_httpd *h);

#endif
