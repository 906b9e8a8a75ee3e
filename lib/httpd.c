/*
 * httpd: see httpd.h.
 *
 * This file is long because the request parser and the server it feeds
 * are one bounded unit (every limit in httpd.h is enforced by one or the
 * other).  The parts stand in order: the pure parser (rm_http_parse, the
 * fuzzed part, no I/O), the query and address parsers, the server
 * (connections, replies, the poll hooks), then the peer's uid.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/tcp.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "httpd.h"
#include "procfs.h"
#include "tick.h"

/* After an answer that ends the connection: how long its unread input
 * is drained, so the client reads the answer rather than a reset. */
#define DRAIN_S 2.0

static int is_tchar(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* Case-insensitive: does the header value v[0..n) hold token tok? */
static int has_token(const char *v, size_t n, const char *tok)
{
	size_t tl = strlen(tok);

	for (size_t i = 0; i < n;) {
		size_t j;
		while (i < n && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
			i++;
		j = i;
		while (j < n && v[j] != ',')
			j++;
		size_t e = j;
		while (e > i && (v[e - 1] == ' ' || v[e - 1] == '\t'))
			e--;
		if (e - i == tl && strncasecmp(v + i, tok, tl) == 0)
			return 1;
		i = j;
	}
	return 0;
}

static int fail(struct rm_http_req *req, int status)
{
	req->status = status;
	return -1;
}

/* The request line: METHOD SP /target SP HTTP/1.x */
static int parse_request_line(const char *s, size_t n, struct rm_http_req *req)
{
	size_t i = 0, m, t0, t1, q;

	while (i < n && is_tchar((unsigned char)s[i]))
		i++;
	if (i == 0 || i >= n || s[i] != ' ')
		return fail(req, 400);
	m = i;
	if (m == 3 && memcmp(s, "GET", 3) == 0)
		req->method = RM_HTTP_GET;
	else if (m == 4 && memcmp(s, "HEAD", 4) == 0)
		req->method = RM_HTTP_HEAD;
	else
		req->method = RM_HTTP_OTHER;
	t0 = ++i;
	while (i < n && (unsigned char)s[i] > 0x20 && (unsigned char)s[i] < 0x7f)
		i++;
	t1 = i;
	if (t1 == t0 || i >= n || s[i] != ' ' || s[t0] != '/')
		return fail(req, 400);
	i++;
	if (n - i != 8 || memcmp(s + i, "HTTP/", 5) != 0 || s[i + 6] != '.' ||
	    s[i + 5] < '0' || s[i + 5] > '9' || s[i + 7] < '0' || s[i + 7] > '9')
		return fail(req, 400);
	if (s[i + 5] != '1')
		return fail(req, 505);
	req->minor = s[i + 7] - '0';
	req->keep_alive = req->minor >= 1;
	for (q = t0; q < t1 && s[q] != '?'; q++)
		;
	if (q - t0 >= sizeof(req->path) || (q < t1 && t1 - q - 1 >= sizeof(req->query)))
		return fail(req, 414);
	memcpy(req->path, s + t0, q - t0);
	req->path[q - t0] = '\0';
	if (q < t1) {
		memcpy(req->query, s + q + 1, t1 - q - 1);
		req->query[t1 - q - 1] = '\0';
	}
	return 0;
}

/* One header line: NAME: value */
static int parse_header(const char *s, size_t n, struct rm_http_req *req, int *conn_seen)
{
	size_t i = 0, v;

	while (i < n && is_tchar((unsigned char)s[i]))
		i++;
	if (i == 0 || i >= n || s[i] != ':')
		return fail(req, 400);
	for (v = i + 1; v < n; v++)
		if ((unsigned char)s[v] < 0x20 && s[v] != '\t')
			return fail(req, 400);
	v = i + 1;
	while (v < n && (s[v] == ' ' || s[v] == '\t'))
		v++;
	if (i == 10 && strncasecmp(s, "connection", 10) == 0) {
		if (has_token(s + v, n - v, "close"))
			req->keep_alive = 0, *conn_seen = 1;
		else if (!*conn_seen && has_token(s + v, n - v, "keep-alive"))
			req->keep_alive = 1;
	} else if (i == 14 && strncasecmp(s, "content-length", 14) == 0) {
		/* RFC 9110 8.6: 1*DIGIT and nothing else ("0 5" is no
		 * length: a proxy may read it otherwise). */
		size_t e = n, k;
		while (e > v && (s[e - 1] == ' ' || s[e - 1] == '\t'))
			e--;
		if (e == v)
			return fail(req, 400);
		for (k = v; k < e; k++) {
			if (s[k] < '0' || s[k] > '9')
				return fail(req, 400);
			if (s[k] != '0')
				req->has_body = 1;
		}
	} else if (i == 17 && strncasecmp(s, "transfer-encoding", 17) == 0) {
		req->has_body = 1;
	}
	return 0;
}

int rm_http_parse(const char *buf, size_t len, struct rm_http_req *req)
{
	size_t pos = 0;
	int line = 0, conn_seen = 0;

	memset(req, 0, sizeof(*req));
	if (len > RM_HTTP_MAX_HEAD)
		len = RM_HTTP_MAX_HEAD;
	while (pos < len) {
		const char *nl = memchr(buf + pos, '\n', len - pos);
		size_t end, n;
		if (!nl)
			break;
		end = (size_t)(nl - buf);
		n = end - pos;
		if (n && buf[end - 1] == '\r')
			n--;
		if (memchr(buf + pos, '\r', n) || memchr(buf + pos, '\0', n))
			return fail(req, 400);
		if (line == 0) {
			/* RFC 9112 2.2: ignore empty lines before the request line. */
			if (n == 0 && pos < 8) {
				pos = end + 1;
				continue;
			}
			if (parse_request_line(buf + pos, n, req) < 0)
				return -1;
		} else if (n == 0) {
			return (int)(end + 1);
		} else if (buf[pos] == ' ' || buf[pos] == '\t') {
			return fail(req, 400);   /* obsolete line folding */
		} else if (parse_header(buf + pos, n, req, &conn_seen) < 0) {
			return -1;
		}
		line++;
		pos = end + 1;
	}
	/* No end yet: a line without its newline may still be cut short. */
	if (len - pos > 0 && memchr(buf + pos, '\0', len - pos))
		return fail(req, 400);
	if (len >= RM_HTTP_MAX_HEAD)
		return fail(req, line == 0 ? 414 : 431);
	return 0;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int rm_http_query_next(const char *query, size_t *pos, const char *name,
		       char *val, size_t size)
{
	size_t nl = strlen(name);

	while (query[*pos]) {
		const char *p = query + *pos;
		size_t plen = strcspn(p, "&;");
		const char *eq = memchr(p, '=', plen);
		size_t klen = eq ? (size_t)(eq - p) : plen;

		*pos += plen + (p[plen] ? 1 : 0);
		if (klen != nl || memcmp(p, name, nl) != 0)
			continue;
		size_t o = 0;
		for (size_t i = klen + (eq ? 1 : 0); i < plen; i++) {
			char c = p[i];
			if (c == '+') {
				c = ' ';
			} else if (c == '%' && i + 2 < plen && hexval(p[i + 1]) >= 0 &&
				   hexval(p[i + 2]) >= 0) {
				c = (char)(hexval(p[i + 1]) * 16 + hexval(p[i + 2]));
				i += 2;
			}
			if (o + 1 < size)
				val[o++] = c;
		}
		if (size)
			val[o] = '\0';
		return 1;
	}
	return 0;
}

const char *rm_http_reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 400: return "Bad Request";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 408: return "Request Timeout";
	case 414: return "URI Too Long";
	case 429: return "Too Many Requests";
	case 431: return "Request Header Fields Too Large";
	case 500: return "Internal Server Error";
	case 503: return "Service Unavailable";
	case 505: return "HTTP Version Not Supported";
	default: return "";
	}
}

int rm_http_addr_parse(const char *text, struct sockaddr_storage *ss,
		       unsigned *sslen, int *loopback)
{
	char host[64];
	const char *colon, *port_s;
	long port;
	char *end;

	memset(ss, 0, sizeof(*ss));
	if (strncmp(text, "unix:", 5) == 0) {
		struct sockaddr_un *su = (struct sockaddr_un *)ss;
		size_t n = strlen(text + 5);
		if (n == 0 || n >= sizeof(su->sun_path) || text[5 + n - 1] == '/')
			return -1;
		su->sun_family = AF_UNIX;
		memcpy(su->sun_path, text + 5, n + 1);
		*sslen = (unsigned)(offsetof(struct sockaddr_un, sun_path) + n + 1);
		*loopback = 1;
		return 0;
	}
	if (text[0] == '[') {
		const char *rb = strchr(text, ']');
		if (!rb || rb[1] != ':' || (size_t)(rb - text - 1) >= sizeof(host))
			return -1;
		memcpy(host, text + 1, (size_t)(rb - text - 1));
		host[rb - text - 1] = '\0';
		port_s = rb + 2;
	} else {
		colon = strrchr(text, ':');
		if (!colon || (size_t)(colon - text) >= sizeof(host) || memchr(text, ':', (size_t)(colon - text)))
			return -1;
		memcpy(host, text, (size_t)(colon - text));
		host[colon - text] = '\0';
		port_s = colon + 1;
	}
	if (!*port_s || *port_s < '0' || *port_s > '9')
		return -1;
	errno = 0;
	port = strtol(port_s, &end, 10);
	if (*end || errno || port < 0 || port > 65535)
		return -1;
	if (text[0] == '[') {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		if (inet_pton(AF_INET6, host, &s6->sin6_addr) != 1)
			return -1;
		*loopback = IN6_IS_ADDR_LOOPBACK(&s6->sin6_addr);
		*sslen = sizeof(*s6);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)port);
		if (!host[0])
			strcpy(host, "127.0.0.1");
		if (inet_pton(AF_INET, host, &s4->sin_addr) != 1)
			return -1;
		*loopback = (ntohl(s4->sin_addr.s_addr) >> 24) == 127;
		*sslen = sizeof(*s4);
	}
	return 0;
}

/*
 * Bind a Unix socket at path: the name is made in its directory, opened
 * once and reached through /proc/self/fd (so no component can be swapped
 * between the two), by bind(2), which never follows a symbolic link or
 * replaces a name.  A socket left there by a run that is gone (connect
 * refused) is removed first.  The socket is 0666: what a peer is shown
 * is decided by its uid, not by who may connect.
 */
static int bind_unix(struct rm_httpd *h, const struct sockaddr_un *want)
{
	const char *path = want->sun_path, *slash = strrchr(path, '/');
	char dir[sizeof(want->sun_path)];
	struct sockaddr_un su;
	struct stat st;
	mode_t old;
	int r, e;

	if (slash) {
		size_t dl = slash == path ? 1 : (size_t)(slash - path);
		memcpy(dir, path, dl);
		dir[dl] = '\0';
	} else {
		strcpy(dir, ".");
	}
	snprintf(h->uname, sizeof(h->uname), "%s", slash ? slash + 1 : path);
	snprintf(h->upath, sizeof(h->upath), "%s", path);
	h->udir = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (h->udir < 0)
		return -1;
	memset(&su, 0, sizeof(su));
	su.sun_family = AF_UNIX;
	if (snprintf(su.sun_path, sizeof(su.sun_path), "/proc/self/fd/%d/%s", h->udir,
		     h->uname) >= (int)sizeof(su.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	for (int tries = 0;; tries++) {
		old = umask(0111);
		r = bind(h->lfd, (struct sockaddr *)&su, sizeof(su));
		e = errno;
		umask(old);
		if (r == 0 || e != EADDRINUSE || tries > 0)
			break;
		/* A stale socket of ours: nobody accepts on it any more. */
		if (fstatat(h->udir, h->uname, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISSOCK(st.st_mode) || st.st_uid != geteuid())
			break;
		int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		int live = probe >= 0 && connect(probe, (struct sockaddr *)&su, sizeof(su)) == 0;
		int refused = !live && errno == ECONNREFUSED;
		if (probe >= 0)
			close(probe);
		if (!refused || unlinkat(h->udir, h->uname, 0) < 0)
			break;
	}
	if (r < 0) {
		errno = e;
		return -1;
	}
	if (fstatat(h->udir, h->uname, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		h->udev = (unsigned long)st.st_dev;
		h->uino = (unsigned long)st.st_ino;
	}
	return 0;
}

int rm_httpd_open(struct rm_httpd *h, const char *addr, rm_httpd_handler fn, void *arg)
{
	struct sockaddr_storage ss;
	struct rlimit rl;
	unsigned len;
	int loop, one = 1, r;

	memset(h, 0, sizeof(*h));
	h->lfd = -1;
	h->udir = -1;
	for (int i = 0; i < RM_HTTPD_MAX_CONN; i++)
		h->c[i].fd = -1;
	h->handler = fn;
	h->arg = arg;
	h->fd_limit = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
		      rl.rlim_cur < (1UL << 30) ? (long)rl.rlim_cur : (1L << 30);
	if (rm_http_addr_parse(addr, &ss, &len, &loop) < 0) {
		errno = EINVAL;
		return -1;
	}
	h->family = ss.ss_family;
	h->lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (h->lfd < 0)
		return -1;
	if (ss.ss_family == AF_UNIX) {
		r = bind_unix(h, (struct sockaddr_un *)&ss);
	} else {
		setsockopt(h->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (ss.ss_family == AF_INET6)
			setsockopt(h->lfd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
		r = bind(h->lfd, (struct sockaddr *)&ss, len);
	}
	if (r < 0 || listen(h->lfd, SOMAXCONN) < 0) {
		int e = errno;
		rm_httpd_close(h);
		errno = e;
		return -1;
	}
	return 0;
}

struct rm_httpd_blob *rm_httpd_blob_new(const char *p, size_t len)
{
	struct rm_httpd_blob *b = malloc(sizeof(*b) + len + 1);

	if (!b)
		return NULL;
	b->refs = 1;
	b->len = len;
	memcpy(b->p, p, len);
	b->p[len] = '\0';
	return b;
}

void rm_httpd_blob_put(struct rm_httpd_blob *b)
{
	if (b && --b->refs == 0)
		free(b);
}

/* The answer is out (or abandoned): what it held goes, and a large head
 * buffer is given back rather than kept for the next answer. */
static void conn_out_done(struct rm_httpd_conn *c)
{
	rm_httpd_blob_put(c->blob);
	c->blob = NULL;
	c->out_off = 0;
	if (c->out.cap > RM_HTTPD_KEEP_OUT)
		rm_buf_free(&c->out);
	else
		rm_buf_reset(&c->out);
}

/* Every byte a connection held is freed with it. */
static void conn_close(struct rm_httpd_conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	c->gen++;
	c->in_len = 0;
	c->peer_done = 0;
	conn_out_done(c);
	rm_buf_free(&c->out);
}

void rm_httpd_close(struct rm_httpd *h)
{
	struct stat st;

	for (int i = 0; i < RM_HTTPD_MAX_CONN; i++)
		conn_close(&h->c[i]);
	if (h->lfd >= 0)
		close(h->lfd);
	h->lfd = -1;
	if (h->udir >= 0) {
		if (h->uino && fstatat(h->udir, h->uname, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISSOCK(st.st_mode) && (unsigned long)st.st_dev == h->udev &&
		    (unsigned long)st.st_ino == h->uino)
			unlinkat(h->udir, h->uname, 0);
		close(h->udir);
	}
	h->udir = -1;
	h->uino = 0;
}

int rm_httpd_name(const struct rm_httpd *h, char *buf, size_t size)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	char host[INET6_ADDRSTRLEN];

	if (h->family == AF_UNIX)
		return snprintf(buf, size, "unix:%s", h->upath) < (int)size ? 0 : -1;
	if (getsockname(h->lfd, (struct sockaddr *)&ss, &len) < 0)
		return -1;
	if (ss.ss_family == AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
		inet_ntop(AF_INET6, &s6->sin6_addr, host, sizeof(host));
		snprintf(buf, size, "[%s]:%u", host, (unsigned)ntohs(s6->sin6_port));
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
		inet_ntop(AF_INET, &s4->sin_addr, host, sizeof(host));
		snprintf(buf, size, "%s:%u", host, (unsigned)ntohs(s4->sin_port));
	}
	return 0;
}

int rm_httpd_open_conns(const struct rm_httpd *h)
{
	int n = 0;

	for (int i = 0; i < RM_HTTPD_MAX_CONN; i++)
		n += h->c[i].fd >= 0;
	return n;
}

static uint64_t ticket_of(const struct rm_httpd *h, const struct rm_httpd_conn *c)
{
	return ((uint64_t)c->gen << 8) | (uint64_t)(c - h->c);
}

static struct rm_httpd_conn *waiting_conn(struct rm_httpd *h, uint64_t ticket)
{
	size_t i = (size_t)(ticket & 0xff);
	struct rm_httpd_conn *c;

	if (i >= RM_HTTPD_MAX_CONN)
		return NULL;
	c = &h->c[i];
	if (c->fd < 0 || c->gen != (uint32_t)(ticket >> 8) || c->state != C_WAIT)
		return NULL;
	return c;
}

/* The head (and a body copied after it, or the shared blob b). */
static void start_answer(struct rm_httpd *h, struct rm_httpd_conn *c, int status,
			 const char *ctype, const char *headers, const char *body, size_t len,
			 struct rm_httpd_blob *b)
{
	static const char big[] = "answer too large\n";

	if ((b ? b->len : len) > RM_HTTPD_MAX_ANSWER) {
		status = 500;
		ctype = NULL;
		headers = NULL;
		body = big;
		len = sizeof(big) - 1;
		b = NULL;
		c->keep = 0;
	}
	if (b)
		len = b->len;
	conn_out_done(c);
	rm_buf_addf(&c->out, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
		    "Connection: %s\r\n%s\r\n", status, rm_http_reason(status),
		    ctype ? ctype : "text/plain; charset=utf-8", len,
		    c->keep ? "keep-alive" : "close", headers ? headers : "");
	if (b) {
		b->refs++;
		c->blob = b;
	} else {
		rm_buf_add(&c->out, body, len);
	}
	c->out_off = 0;
	c->state = C_WRITE;
	c->deadline = rm_now_mono() + RM_HTTPD_DEADLINE;
	h->served++;
}

int rm_httpd_reply_hdr(struct rm_httpd *h, uint64_t ticket, int status,
		       const char *ctype, const char *headers,
		       const char *body, size_t len)
{
	struct rm_httpd_conn *c = waiting_conn(h, ticket);

	if (!c)
		return -1;
	start_answer(h, c, status, ctype, headers, body, len, NULL);
	return 0;
}

int rm_httpd_reply_blob(struct rm_httpd *h, uint64_t ticket, int status,
			const char *ctype, struct rm_httpd_blob *b)
{
	struct rm_httpd_conn *c = waiting_conn(h, ticket);

	if (!c)
		return -1;
	start_answer(h, c, status, ctype, NULL, NULL, 0, b);
	return 0;
}

int rm_httpd_ticket_live(const struct rm_httpd *h, uint64_t ticket)
{
	size_t i = (size_t)(ticket & 0xff);

	return i < RM_HTTPD_MAX_CONN && h->c[i].fd >= 0 && h->c[i].gen == (uint32_t)(ticket >> 8) &&
	       h->c[i].state == C_WAIT;
}

int rm_httpd_reply(struct rm_httpd *h, uint64_t ticket, int status,
		   const char *ctype, const char *body, size_t len)
{
	return rm_httpd_reply_hdr(h, ticket, status, ctype, NULL, body, len);
}

/* Answer an error of the server's own and end the connection. */
static void reply_error(struct rm_httpd *h, struct rm_httpd_conn *c, int status)
{
	char body[64];
	int n = snprintf(body, sizeof(body), "%d %s\n", status, rm_http_reason(status));

	c->state = C_WAIT;
	c->keep = 0;
	h->refused++;
	rm_httpd_reply(h, ticket_of(h, c), status, NULL, body, (size_t)n);
}

/* A whole request may be in c->in: parse it and hand it on. */
static void conn_parse(struct rm_httpd *h, struct rm_httpd_conn *c)
{
	struct rm_http_req req;
	int r;

	if (c->state != C_READ || c->in_len == 0)
		return;
	r = rm_http_parse(c->in, c->in_len, &req);
	if (r == 0)
		return;
	if (r < 0) {
		c->in_len = 0;
		reply_error(h, c, req.status);
		return;
	}
	memmove(c->in, c->in + r, c->in_len - (size_t)r);
	c->in_len -= (size_t)r;
	c->state = C_WAIT;
	c->keep = req.keep_alive && !req.has_body;
	c->deadline = 0;
	if (h->handler(h->arg, h, ticket_of(h, c), &req) != RM_HTTPD_LATER && c->state == C_WAIT)
		reply_error(h, c, 500);
}

static void conn_read(struct rm_httpd *h, struct rm_httpd_conn *c, double now)
{
	for (;;) {
		char scratch[4096];
		char *dst = c->state == C_READ ? c->in + c->in_len : scratch;
		size_t room = c->state == C_READ ? sizeof(c->in) - c->in_len : sizeof(scratch);
		ssize_t n;

		if (c->state != C_READ && c->state != C_DRAIN)
			return;
		if (room == 0)
			break;
		n = read(c->fd, dst, room);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n <= 0) {
			conn_close(c);
			return;
		}
		c->active = now;
		if (c->state == C_READ)
			c->in_len += (size_t)n;
	}
	conn_parse(h, c);
}

static void conn_write(struct rm_httpd *h, struct rm_httpd_conn *c, double now)
{
	size_t total = c->out.len + (c->blob ? c->blob->len : 0);

	while (c->state == C_WRITE && c->out_off < total) {
		const char *p;
		size_t n0;
		ssize_t n;
		if (c->out_off < c->out.len) {
			p = c->out.p + c->out_off;
			n0 = c->out.len - c->out_off;
		} else {
			p = c->blob->p + (c->out_off - c->out.len);
			n0 = total - c->out_off;
		}
		n = send(c->fd, p, n0, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0) {
			conn_close(c);
			return;
		}
		c->out_off += (size_t)n;
		c->active = now;
	}
	if (c->state != C_WRITE)
		return;
	conn_out_done(c);
	if (c->keep) {
		c->state = C_READ;
		c->deadline = now + RM_HTTPD_DEADLINE;
		conn_parse(h, c);
	} else {
		shutdown(c->fd, SHUT_WR);
		c->state = C_DRAIN;
		c->in_len = 0;
		c->deadline = now + DRAIN_S;
		conn_read(h, c, now);
	}
}

/* Run a connection until it would block. */
static void conn_step(struct rm_httpd *h, struct rm_httpd_conn *c, double now)
{
	for (int guard = 0; guard < 64 && c->fd >= 0; guard++) {
		int st = c->state;
		if (st == C_READ || st == C_DRAIN)
			conn_read(h, c, now);
		else if (st == C_WRITE)
			conn_write(h, c, now);
		if (c->fd < 0 || (int)c->state == st || c->state == C_WAIT)
			break;
	}
}

/* Which connection goes first when a new one needs its slot: one whose
 * answer is already out, then one still sending its request (a slowloris
 * client is one of these), then one being answered, a waiting request
 * (someone's scrape in progress) last. */
static int evict_rank(const struct rm_httpd_conn *c)
{
	switch (c->state) {
	case C_DRAIN: return 0;
	case C_READ: return 1;
	case C_WRITE: return 2;
	default: return 3;
	}
}

/* The slot for a new connection: a free one, else the idlest of the
 * first rank. */
static struct rm_httpd_conn *slot_for_new(struct rm_httpd *h)
{
	struct rm_httpd_conn *best = NULL;

	for (int i = 0; i < RM_HTTPD_MAX_CONN; i++) {
		struct rm_httpd_conn *c = &h->c[i];
		if (c->fd < 0)
			return c;
		if (!best || evict_rank(c) < evict_rank(best) ||
		    (evict_rank(c) == evict_rank(best) && c->active < best->active))
			best = c;
	}
	conn_close(best);
	h->evicted++;
	return best;
}

/* Out of descriptors: leave the listener out of the poll for a while
 * (the backlog waits), longer each time until an accept succeeds. */
static void accept_pause(struct rm_httpd *h, double now)
{
	h->backoff = h->backoff > 0 ? h->backoff * 2 : 0.05;
	if (h->backoff > 1.0)
		h->backoff = 1.0;
	h->accept_at = now + h->backoff;
	h->accept_paused++;
}

static void do_accept(struct rm_httpd *h, double now)
{
	for (int k = 0; k < RM_HTTPD_MAX_CONN; k++) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		int fd = accept4(h->lfd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct rm_httpd_conn *c;
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
				accept_pause(h, now);
			return;   /* EAGAIN: nothing more now */
		}
		if (fd >= h->fd_limit - (h->fd_limit / 4 < RM_HTTPD_FD_SPARE ? h->fd_limit / 4 :
					 RM_HTTPD_FD_SPARE)) {
			/* Keep descriptors for the program's own reading. */
			close(fd);
			h->refused++;
			accept_pause(h, now);
			return;
		}
		h->backoff = 0;
		c = slot_for_new(h);
		c->fd = fd;
		c->state = C_READ;
		c->keep = 0;
		c->in_len = 0;
		c->out_off = 0;
		c->active = now;
		c->deadline = now + RM_HTTPD_DEADLINE;
		c->addr = ss;
		c->peer_done = 0;
		conn_step(h, c, now);
	}
}

int rm_httpd_fds(struct rm_httpd *h, struct pollfd *p, int max, double *timeout)
{
	double now = rm_now_mono();
	int n = 0;

	if (h->lfd < 0 || max < 1)
		return 0;
	/* A paused listener is a negative fd: poll skips it. */
	p[n].fd = now < h->accept_at ? -1 : h->lfd;
	p[n].events = POLLIN;
	p[n].revents = 0;
	n++;
	if (now < h->accept_at && h->accept_at - now < *timeout)
		*timeout = h->accept_at - now;
	for (int i = 0; i < RM_HTTPD_MAX_CONN && n < max; i++) {
		struct rm_httpd_conn *c = &h->c[i];
		if (c->fd < 0 || c->state == C_WAIT)
			continue;
		p[n].fd = c->fd;
		p[n].events = c->state == C_WRITE ? POLLOUT : POLLIN;
		p[n].revents = 0;
		n++;
		if (c->deadline > 0 && c->deadline - now < *timeout)
			*timeout = c->deadline - now;
	}
	if (h->wake_at > 0 && h->wake_at - now < *timeout)
		*timeout = h->wake_at - now;
	if (*timeout < 0)
		*timeout = 0;
	return n;
}

void rm_httpd_ready(struct rm_httpd *h, const struct pollfd *p, int n)
{
	double now = rm_now_mono();

	for (int k = 1; k < n; k++) {
		if (!p[k].revents)
			continue;
		for (int i = 0; i < RM_HTTPD_MAX_CONN; i++)
			if (h->c[i].fd == p[k].fd) {
				struct rm_httpd_conn *c = &h->c[i];
				if ((p[k].revents & (POLLERR | POLLNVAL)) ||
				    ((p[k].revents & POLLHUP) && c->state == C_WRITE))
					conn_close(c);
				else
					conn_step(h, c, now);
				break;
			}
	}
	if (n > 0 && p[0].fd >= 0 && (p[0].revents & POLLIN) && now >= h->accept_at)
		do_accept(h, now);
	if (h->wake_at > 0 && now >= h->wake_at && h->on_wake) {
		h->wake_at = 0;
		h->on_wake(h->arg, h, now);
	}
	for (int i = 0; i < RM_HTTPD_MAX_CONN; i++) {
		struct rm_httpd_conn *c = &h->c[i];
		if (c->fd < 0)
			continue;
		if (c->state == C_WRITE && c->out_off == 0)
			conn_step(h, c, now);   /* a reply made since the poll */
		else if (c->deadline > 0 && now >= c->deadline && c->state != C_WAIT)
			conn_close(c);
	}
}

/* Hex digits at *p into v (at most 8); -1 when there are none. */
static int hex_u32(const char **p, const char *e, uint32_t *v)
{
	const char *q = *p;

	*v = 0;
	while (q < e && q - *p < 8 && hexval(*q) >= 0)
		*v = *v * 16 + (uint32_t)hexval(*q++);
	if (q == *p)
		return -1;
	*p = q;
	return 0;
}

/* ADDR:PORT of a tcp/tcp6 row at *p as 16 address bytes (IPv4 mapped)
 * and a port. */
static int row_addr(const char **p, const char *e, unsigned char a[16], unsigned *port)
{
	const char *q = *p, *colon = memchr(q, ':', (size_t)(e - q));
	uint32_t w[4], pv;
	size_t hl;

	if (!colon)
		return -1;
	hl = (size_t)(colon - q);
	if (hl != 8 && hl != 32)
		return -1;
	for (size_t i = 0; i < hl / 8; i++)
		if (hex_u32(&q, colon, &w[i]) < 0 || q != *p + 8 * (i + 1))
			return -1;
	/* The kernel prints each 32-bit word of the address as it is in
	 * memory, read as a host-order integer. */
	if (hl == 8) {
		memset(a, 0, 10);
		a[10] = a[11] = 0xff;
		memcpy(a + 12, &w[0], 4);
	} else {
		memcpy(a, w, 16);
	}
	q = colon + 1;
	if (hex_u32(&q, e, &pv) < 0 || pv > 65535)
		return -1;
	*port = pv;
	*p = q;
	return 0;
}

static int sa_addr(const struct sockaddr_storage *ss, unsigned char a[16], unsigned *port)
{
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)ss;
		memset(a, 0, 10);
		a[10] = a[11] = 0xff;
		memcpy(a + 12, &s4->sin_addr, 4);
		*port = ntohs(s4->sin_port);
		return 0;
	}
	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;
		memcpy(a, &s6->sin6_addr, 16);
		*port = ntohs(s6->sin6_port);
		return 0;
	}
	return -1;
}

int rm_http_tcp_uid(const char *text, size_t len, const struct sockaddr_storage *local,
		    const struct sockaddr_storage *remote, unsigned long *uid)
{
	unsigned char la[16], ra[16];
	unsigned lp, rp;
	const char *p = text, *end = text + len;

	if (sa_addr(local, la, &lp) < 0 || sa_addr(remote, ra, &rp) < 0)
		return 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *e = nl ? nl : end, *q;
		unsigned char a[16], b[16];
		unsigned ap, bp;
		uint32_t st;
		unsigned long u = 0;
		int fields = 0;

		q = memchr(p, ':', (size_t)(e - p));      /* "  sl:" */
		if (!q)
			goto next;
		q++;
		while (q < e && *q == ' ')
			q++;
		if (row_addr(&q, e, a, &ap) < 0 || q >= e || *q != ' ')
			goto next;
		q++;
		if (row_addr(&q, e, b, &bp) < 0 || q >= e || *q != ' ')
			goto next;
		q++;
		if (hex_u32(&q, e, &st) < 0)
			goto next;
		if (ap != lp || bp != rp || memcmp(a, la, 16) != 0 || memcmp(b, ra, 16) != 0)
			goto next;
		if (st != 0x01 && st != 0x04 && st != 0x05)
			goto next;
		/* tx:rx tr:when retrnsmt uid */
		while (q < e && fields < 4) {
			while (q < e && *q == ' ')
				q++;
			if (fields == 3)
				break;
			while (q < e && *q != ' ')
				q++;
			fields++;
		}
		if (fields != 3 || q >= e || *q < '0' || *q > '9')
			goto next;
		while (q < e && *q >= '0' && *q <= '9' && u < 100000000000UL)
			u = u * 10 + (unsigned long)(*q++ - '0');
		*uid = u;
		return 1;
next:
		p = nl ? nl + 1 : end;
	}
	return 0;
}

/*
 * The uid of the TCP socket whose local end is `local` and remote end
 * `remote`, looked up by that four-tuple with sock_diag (what
 * /proc/net/tcp prints, for one socket, without listing them all).
 * Returns 1 with *uid, 0 when there is no such socket in an owned state,
 * -1 when sock_diag cannot be used here.
 */
static int diag_uid(int family, const unsigned char la[16], unsigned lp,
		    const unsigned char ra[16], unsigned rp, unsigned long *uid)
{
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 r;
	} req;
	union {
		struct nlmsghdr nlh;
		char b[8192];
	} ans;
	struct sockaddr_nl nl = { .nl_family = AF_NETLINK };
	struct timeval tv = { 1, 0 };
	int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG), r = -1;
	ssize_t n;

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	memset(&req, 0, sizeof(req));
	req.nlh.nlmsg_len = sizeof(req);
	req.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	req.nlh.nlmsg_flags = NLM_F_REQUEST;
	req.nlh.nlmsg_seq = 1;
	req.r.sdiag_family = (unsigned char)family;
	req.r.sdiag_protocol = IPPROTO_TCP;
	req.r.idiag_states = ~0U;
	req.r.id.idiag_sport = htons((uint16_t)lp);
	req.r.id.idiag_dport = htons((uint16_t)rp);
	if (family == AF_INET) {
		memcpy(req.r.id.idiag_src, la + 12, 4);
		memcpy(req.r.id.idiag_dst, ra + 12, 4);
	} else {
		memcpy(req.r.id.idiag_src, la, 16);
		memcpy(req.r.id.idiag_dst, ra, 16);
	}
	req.r.id.idiag_cookie[0] = req.r.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
	if (sendto(fd, &req, sizeof(req), 0, (struct sockaddr *)&nl, sizeof(nl)) < 0)
		goto out;
	do
		n = recv(fd, &ans, sizeof(ans), 0);
	while (n < 0 && errno == EINTR);
	if (n < (ssize_t)sizeof(struct nlmsghdr) || !NLMSG_OK(&ans.nlh, (size_t)n))
		goto out;
	if (ans.nlh.nlmsg_type == NLMSG_ERROR) {
		const struct nlmsgerr *e = NLMSG_DATA(&ans.nlh);
		if (ans.nlh.nlmsg_len >= NLMSG_LENGTH(sizeof(*e)) && e->error == -ENOENT)
			r = 0;     /* no such socket: it is not here */
		goto out;
	}
	if (ans.nlh.nlmsg_type == SOCK_DIAG_BY_FAMILY &&
	    ans.nlh.nlmsg_len >= NLMSG_LENGTH(sizeof(struct inet_diag_msg))) {
		const struct inet_diag_msg *m = NLMSG_DATA(&ans.nlh);
		r = 0;
		if (m->idiag_state == TCP_ESTABLISHED || m->idiag_state == TCP_FIN_WAIT1 ||
		    m->idiag_state == TCP_FIN_WAIT2) {
			*uid = m->idiag_uid;
			r = 1;
		}
	}
out:
	close(fd);
	return r;
}

/* The uid of the peer's socket in this namespace's tables, if any: read
 * in pieces of whole lines, so nothing grows with the host's sockets. */
static int table_uid(const struct rm_httpd_conn *c, const struct sockaddr_storage *mine,
		     unsigned long *uid)
{
	static const char *const tab[] = { "net/tcp", "net/tcp6" };
	struct sockaddr_storage me = *mine;
	char buf[16384];
	int found = 0;

	for (size_t i = 0; i < 2 && !found; i++) {
		int fd = openat(rm_proc_dirfd(), tab[i], O_RDONLY | O_CLOEXEC);
		size_t have = 0;
		if (fd < 0)
			continue;
		while (!found) {
			ssize_t n = read(fd, buf + have, sizeof(buf) - have);
			const char *nl;
			size_t whole;
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				if (have)
					found = rm_http_tcp_uid(buf, have, &c->addr, &me, uid);
				break;
			}
			have += (size_t)n;
			nl = memrchr(buf, '\n', have);
			if (!nl) {
				if (have == sizeof(buf))
					have = 0;   /* no line is that long: not a table */
				continue;
			}
			whole = (size_t)(nl - buf) + 1;
			found = rm_http_tcp_uid(buf, whole, &c->addr, &me, uid);
			memmove(buf, buf + whole, have - whole);
			have -= whole;
		}
		close(fd);
	}
	return found;
}

/* The peer's uid: sock_diag, where it works, else the tables. */
static int tcp_peer_uid(const struct rm_httpd_conn *c, unsigned long *uid)
{
	struct sockaddr_storage me;
	socklen_t ml = sizeof(me);
	unsigned char pa[16], ma[16];
	unsigned pp, mp;
	int r;

	if (getsockname(c->fd, (struct sockaddr *)&me, &ml) < 0 ||
	    sa_addr(&c->addr, pa, &pp) < 0 || sa_addr(&me, ma, &mp) < 0)
		return 0;
	/* The peer's socket may be IPv4, or IPv6 holding a mapped IPv4
	 * address: ask for both. */
	r = diag_uid(c->addr.ss_family == AF_INET6 && !IN6_IS_ADDR_V4MAPPED((struct in6_addr *)pa) ?
		     AF_INET6 : AF_INET, pa, pp, ma, mp, uid);
	if (r == 0 && c->addr.ss_family == AF_INET)
		r = diag_uid(AF_INET6, pa, pp, ma, mp, uid);
	if (r >= 0)
		return r;
	return table_uid(c, &me, uid);
}

int rm_httpd_peer(struct rm_httpd *h, uint64_t ticket, struct rm_httpd_peer *out)
{
	size_t i = (size_t)(ticket & 0xff);
	struct rm_httpd_conn *c;
	struct rm_httpd_peer *p;

	if (i >= RM_HTTPD_MAX_CONN)
		return -1;
	c = &h->c[i];
	if (c->fd < 0 || c->gen != (uint32_t)(ticket >> 8))
		return -1;
	p = &c->peer;
	if (!c->peer_done) {
		memset(p, 0, sizeof(*p));
		if (h->family == AF_UNIX) {
			struct ucred cr;
			socklen_t cl = sizeof(cr);
			p->kind = RM_PEER_UNIX;
			if (getsockopt(c->fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) == 0) {
				p->uid_known = 1;
				p->uid = cr.uid;
			}
		} else if (tcp_peer_uid(c, &p->uid)) {
			p->kind = RM_PEER_LOCAL;
			p->uid_known = 1;
		} else {
			p->kind = RM_PEER_REMOTE;
		}
		if (p->uid_known) {
			snprintf(p->key, sizeof(p->key), "uid:%lu", p->uid);
		} else if (c->addr.ss_family == AF_INET6) {
			const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)&c->addr;
			inet_ntop(AF_INET6, &s6->sin6_addr, p->key, sizeof(p->key));
		} else if (c->addr.ss_family == AF_INET) {
			const struct sockaddr_in *s4 = (const struct sockaddr_in *)&c->addr;
			inet_ntop(AF_INET, &s4->sin_addr, p->key, sizeof(p->key));
		} else {
			strcpy(p->key, "unix");
		}
		c->peer_done = 1;
	}
	*out = *p;
	return 0;
}
