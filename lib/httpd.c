/*
 * httpd: see httpd.h.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "httpd.h"
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
		size_t k = v;
		while (k < n && s[k] == '0')
			k++;
		if (k < n && s[k] >= '1' && s[k] <= '9')
			req->has_body = 1;
		else if (k < n && s[k] != ' ' && s[k] != '\t')
			return fail(req, 400);
		if (k == v && (k >= n || s[k] < '0' || s[k] > '9'))
			return fail(req, 400);
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

int rm_httpd_open(struct rm_httpd *h, const char *addr, rm_httpd_handler fn, void *arg)
{
	struct sockaddr_storage ss;
	unsigned len;
	int loop, one = 1;

	memset(h, 0, sizeof(*h));
	h->lfd = -1;
	for (int i = 0; i < RM_HTTPD_MAX_CONN; i++)
		h->c[i].fd = -1;
	h->handler = fn;
	h->arg = arg;
	if (rm_http_addr_parse(addr, &ss, &len, &loop) < 0) {
		errno = EINVAL;
		return -1;
	}
	h->lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (h->lfd < 0)
		return -1;
	setsockopt(h->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ss.ss_family == AF_INET6)
		setsockopt(h->lfd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(h->lfd, (struct sockaddr *)&ss, len) < 0 || listen(h->lfd, SOMAXCONN) < 0) {
		int e = errno;
		close(h->lfd);
		h->lfd = -1;
		errno = e;
		return -1;
	}
	return 0;
}

static void conn_close(struct rm_httpd_conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	c->gen++;
	c->in_len = 0;
	c->out_off = 0;
	rm_buf_reset(&c->out);
}

void rm_httpd_close(struct rm_httpd *h)
{
	for (int i = 0; i < RM_HTTPD_MAX_CONN; i++) {
		conn_close(&h->c[i]);
		rm_buf_free(&h->c[i].out);
	}
	if (h->lfd >= 0)
		close(h->lfd);
	h->lfd = -1;
}

int rm_httpd_name(const struct rm_httpd *h, char *buf, size_t size)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	char host[INET6_ADDRSTRLEN];

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

int rm_httpd_reply_hdr(struct rm_httpd *h, uint64_t ticket, int status,
		       const char *ctype, const char *headers,
		       const char *body, size_t len)
{
	size_t i = (size_t)(ticket & 0xff);
	struct rm_httpd_conn *c;

	if (i >= RM_HTTPD_MAX_CONN)
		return -1;
	c = &h->c[i];
	if (c->fd < 0 || c->gen != (uint32_t)(ticket >> 8) || c->state != C_WAIT)
		return -1;
	rm_buf_reset(&c->out);
	rm_buf_addf(&c->out, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
		    "Connection: %s\r\n%s\r\n", status, rm_http_reason(status),
		    ctype ? ctype : "text/plain; charset=utf-8", len,
		    c->keep ? "keep-alive" : "close", headers ? headers : "");
	rm_buf_add(&c->out, body, len);
	c->out_off = 0;
	c->state = C_WRITE;
	c->deadline = rm_now_mono() + RM_HTTPD_DEADLINE;
	h->served++;
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
	while (c->state == C_WRITE && c->out_off < c->out.len) {
		ssize_t n = send(c->fd, c->out.p + c->out_off, c->out.len - c->out_off, MSG_NOSIGNAL);
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
	rm_buf_reset(&c->out);
	c->out_off = 0;
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

static void do_accept(struct rm_httpd *h, double now)
{
	for (int k = 0; k < RM_HTTPD_MAX_CONN; k++) {
		int fd = accept4(h->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct rm_httpd_conn *c;
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			return;   /* EAGAIN, or EMFILE: the backlog waits */
		}
		c = slot_for_new(h);
		c->fd = fd;
		c->state = C_READ;
		c->keep = 0;
		c->in_len = 0;
		c->out_off = 0;
		c->active = now;
		c->deadline = now + RM_HTTPD_DEADLINE;
		conn_step(h, c, now);
	}
}

int rm_httpd_fds(struct rm_httpd *h, struct pollfd *p, int max, double *timeout)
{
	double now = rm_now_mono();
	int n = 0;

	if (h->lfd < 0 || max < 1)
		return 0;
	p[n].fd = h->lfd;
	p[n].events = POLLIN;
	p[n].revents = 0;
	n++;
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
	if (n > 0 && (p[0].revents & POLLIN))
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
