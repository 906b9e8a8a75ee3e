/*
 * t_httpd: the HTTP request parser on well-formed, cut, oversized and
 * hostile heads; the query reader; --listen addresses; and a live server
 * on loopback: a request sent in pieces, pipelined requests on one
 * connection, and the idlest connection closed when every slot is taken.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "httpd.h"
#include "tap.h"
#include "tick.h"

static int parse(const char *s, struct rm_http_req *r)
{
	return rm_http_parse(s, strlen(s), r);
}

static void test_parse_ok(void)
{
	struct rm_http_req r;
	const char *a = "GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: */*\r\n\r\n";

	CHECK(parse(a, &r) == (int)strlen(a));
	CHECK(r.method == RM_HTTP_GET);
	CHECK_STR(r.path, "/metrics");
	CHECK_STR(r.query, "");
	CHECK(r.keep_alive == 1);
	CHECK(parse("GET /usage?pid=1&pid=2 HTTP/1.0\n\n", &r) > 0);
	CHECK_STR(r.path, "/usage");
	CHECK_STR(r.query, "pid=1&pid=2");
	CHECK(r.keep_alive == 0);
	CHECK(parse("GET / HTTP/1.1\r\nConnection: Keep-Alive, close\r\n\r\n", &r) > 0);
	CHECK(r.keep_alive == 0);
	CHECK(parse("GET / HTTP/1.0\r\nconnection: keep-alive\r\n\r\n", &r) > 0);
	CHECK(r.keep_alive == 1);
	CHECK(parse("POST /metrics HTTP/1.1\r\nContent-Length: 10\r\n\r\n", &r) > 0);
	CHECK(r.method == RM_HTTP_OTHER && r.has_body == 1);
	CHECK(parse("GET / HTTP/1.1\r\nContent-Length: 0\r\n\r\n", &r) > 0);
	CHECK(r.has_body == 0);
	/* Pipelined: only the first head is consumed. */
	CHECK(parse("GET /a HTTP/1.1\r\n\r\nGET /b HTTP/1.1\r\n\r\n", &r) == 19);
	CHECK_STR(r.path, "/a");
}

static void test_parse_more(void)
{
	struct rm_http_req r;

	CHECK(parse("", &r) == 0);
	CHECK(parse("GE", &r) == 0);
	CHECK(parse("GET /metrics HTTP/1.1\r\nHost: x\r\n", &r) == 0);
	CHECK(parse("GET /metrics HTTP/1.1\r\nHost: x\r\n\r", &r) == 0);
}

static void test_parse_bad(void)
{
	static char big[RM_HTTP_MAX_HEAD + 100];
	struct rm_http_req r;
	const char *bad[] = {
		"GET\r\n\r\n", "GET  / HTTP/1.1\r\n\r\n", "GET / HTTP/1.1 x\r\n\r\n",
		"GET x HTTP/1.1\r\n\r\n", "GET / FTP/1.1\r\n\r\n", "G(T / HTTP/1.1\r\n\r\n",
		"GET / HTTP/1.1\r\nNoColon\r\n\r\n", "GET / HTTP/1.1\r\n: empty\r\n\r\n",
		"GET / HTTP/1.1\r\nA: b\r\n folded\r\n\r\n", "GET / HTTP/1.1\r\nA: b\rc\r\n\r\n",
		"GET / HTTP/1.1\r\nContent-Length: x\r\n\r\n", "GET /\x01 HTTP/1.1\r\n\r\n",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = parse(bad[i], &r);
		CHECK(rc == -1 && r.status == 400);
		if (rc != -1)
			printf("#   accepted: %s\n", bad[i]);
	}
	CHECK(rm_http_parse("GET / HTTP/1.1\r\nA: \0\r\n\r\n", 24, &r) == -1 && r.status == 400);
	CHECK(parse("GET / HTTP/2.0\r\n\r\n", &r) == -1 && r.status == 505);
	/* Headers beyond 8 KiB: 431, whatever follows. */
	memcpy(big, "GET / HTTP/1.1\r\nX: ", 19);
	memset(big + 19, 'a', sizeof(big) - 19);
	CHECK(rm_http_parse(big, sizeof(big), &r) == -1 && r.status == 431);
	CHECK(rm_http_parse(big, RM_HTTP_MAX_HEAD, &r) == -1 && r.status == 431);
	CHECK(rm_http_parse(big, RM_HTTP_MAX_HEAD - 1, &r) == 0);
	/* A target longer than the path buffer: 414. */
	memcpy(big, "GET /", 5);
	memset(big + 5, 'p', 300);
	memcpy(big + 305, " HTTP/1.1\r\n\r\n", 14);
	CHECK(parse(big, &r) == -1 && r.status == 414);
}

static void test_query(void)
{
	char v[8];
	size_t pos = 0;
	const char *q = "x=1&pid=12&pid=%33%34&pid=abcdefghijk;pid&pid=a+b";

	CHECK(rm_http_query_next(q, &pos, "pid", v, sizeof(v)) == 1);
	CHECK_STR(v, "12");
	CHECK(rm_http_query_next(q, &pos, "pid", v, sizeof(v)) == 1);
	CHECK_STR(v, "34");
	CHECK(rm_http_query_next(q, &pos, "pid", v, sizeof(v)) == 1);
	CHECK_STR(v, "abcdefg");   /* cut to the buffer */
	CHECK(rm_http_query_next(q, &pos, "pid", v, sizeof(v)) == 1);
	CHECK_STR(v, "");
	CHECK(rm_http_query_next(q, &pos, "pid", v, sizeof(v)) == 1);
	CHECK_STR(v, "a b");
	CHECK(rm_http_query_next(q, &pos, "pid", v, sizeof(v)) == 0);
}

static void test_addr(void)
{
	struct sockaddr_storage ss;
	unsigned len;
	int lo;

	CHECK(rm_http_addr_parse(":18093", &ss, &len, &lo) == 0 && lo == 1 && ss.ss_family == AF_INET);
	CHECK(rm_http_addr_parse("[::1]:9", &ss, &len, &lo) == 0 && lo == 1 && ss.ss_family == AF_INET6);
	CHECK(rm_http_addr_parse("0.0.0.0:80", &ss, &len, &lo) == 0 && lo == 0);
	CHECK(rm_http_addr_parse("127.0.0.2:80", &ss, &len, &lo) == 0 && lo == 1);
	CHECK(rm_http_addr_parse("[::]:80", &ss, &len, &lo) == 0 && lo == 0);
	CHECK(rm_http_addr_parse("18093", &ss, &len, &lo) == -1);
	CHECK(rm_http_addr_parse(":65536", &ss, &len, &lo) == -1);
	CHECK(rm_http_addr_parse(":x", &ss, &len, &lo) == -1);
	CHECK(rm_http_addr_parse("::1:80", &ss, &len, &lo) == -1);
	CHECK(rm_http_addr_parse("localhost:80", &ss, &len, &lo) == -1);
}

/* The live server: answers "/p" with the path, "/later" after a wake. */
static uint64_t later_ticket;
static int later;

static int handler(void *arg, struct rm_httpd *h, uint64_t tk, const struct rm_http_req *req)
{
	(void)arg;
	if (!strcmp(req->path, "/later")) {
		later_ticket = tk;
		later = 1;
		h->wake_at = rm_now_mono();
		return RM_HTTPD_LATER;
	}
	return rm_httpd_reply(h, tk, 200, NULL, req->path, strlen(req->path)), 0;
}

static void on_wake(void *arg, struct rm_httpd *h, double now)
{
	(void)arg;
	(void)now;
	if (later)
		rm_httpd_reply(h, later_ticket, 200, NULL, "late", 4);
	later = 0;
}

static void spin(struct rm_httpd *h, int rounds)
{
	for (int i = 0; i < rounds; i++) {
		struct pollfd p[RM_HTTPD_MAX_CONN + 1];
		double t = 0.01;
		int n = rm_httpd_fds(h, p, RM_HTTPD_MAX_CONN + 1, &t);
		poll(p, (nfds_t)n, (int)(t * 1000));
		rm_httpd_ready(h, p, n);
	}
}

static int dial(int port)
{
	struct sockaddr_in a;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)port);
	a.sin_addr.s_addr = htonl(0x7f000001);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* What has arrived on fd so far (non-blocking), NUL-terminated. */
static const char *got(int fd)
{
	static char buf[4096];
	ssize_t n;

	fcntl(fd, F_SETFL, O_NONBLOCK);
	n = read(fd, buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

static void test_server(void)
{
	static struct rm_httpd h;
	char name[80];
	int port, a, fds[RM_HTTPD_MAX_CONN + 1];

	if (rm_httpd_open(&h, ":0", handler, NULL) < 0) {
		printf("#   cannot listen: %s\n", strerror(errno));
		tap_cur = 1;
		return;
	}
	h.on_wake = on_wake;
	CHECK(rm_httpd_name(&h, name, sizeof(name)) == 0);
	port = atoi(strrchr(name, ':') + 1);
	a = dial(port);
	CHECK(a >= 0);
	CHECK(write(a, "GET /one HTT", 12) == 12);
	spin(&h, 3);
	CHECK_STR(got(a), "");
	CHECK(write(a, "P/1.1\r\n\r\nGET /two HTTP/1.1\r\n\r\nGET /later HTTP/1.1\r\n\r\n", 53) == 53);
	spin(&h, 5);
	{
		const char *r = got(a);
		CHECK(strstr(r, "HTTP/1.1 200 OK\r\n") == r);
		CHECK(strstr(r, "\r\n\r\n/one") != NULL);
		CHECK(strstr(r, "\r\n\r\n/two") != NULL);
		CHECK(strstr(r, "\r\n\r\nlate") != NULL);
	}
	/* A bad request: 400, then the connection ends. */
	CHECK(write(a, "BAD\r\n\r\n", 7) == 7);
	spin(&h, 5);
	CHECK(strstr(got(a), "HTTP/1.1 400 Bad Request\r\n") != NULL);
	close(a);
	spin(&h, 2);
	CHECK(rm_httpd_open_conns(&h) == 0);
	/* Fill every slot, then one more: the idlest (the first) goes. */
	for (int i = 0; i <= RM_HTTPD_MAX_CONN; i++) {
		fds[i] = dial(port);
		CHECK(write(fds[i], "GET", 3) == 3);
		spin(&h, 1);
	}
	spin(&h, 3);
	CHECK(rm_httpd_open_conns(&h) == RM_HTTPD_MAX_CONN);
	CHECK(h.evicted == 1);
	CHECK(read(fds[0], name, sizeof(name)) == 0);   /* closed by the server */
	CHECK(write(fds[RM_HTTPD_MAX_CONN], " /last HTTP/1.1\r\n\r\n", 19) == 19);
	spin(&h, 3);
	CHECK(strstr(got(fds[RM_HTTPD_MAX_CONN]), "/last") != NULL);
	for (int i = 0; i <= RM_HTTPD_MAX_CONN; i++)
		close(fds[i]);
	rm_httpd_close(&h);
}

int main(void)
{
	RUN(test_parse_ok);
	RUN(test_parse_more);
	RUN(test_parse_bad);
	RUN(test_query);
	RUN(test_addr);
	RUN(test_server);
	return tap_done();
}
