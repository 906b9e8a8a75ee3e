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
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
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

/* RFC 9110 8.6: Content-Length is digits and nothing else; "0 5" must
 * not be read as 0 with the rest served as a second request. */
static void test_content_length_is_digits_only(void)
{
	struct rm_http_req r;
	const char *bad[] = {
		"GET / HTTP/1.1\r\nContent-Length: 0 5\r\n\r\n",
		"GET / HTTP/1.1\r\nContent-Length: 5,5\r\n\r\n",
		"GET / HTTP/1.1\r\nContent-Length: 5x\r\n\r\n",
		"GET / HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
		"GET / HTTP/1.1\r\nContent-Length: \r\n\r\n",
		"GET / HTTP/1.1\r\nContent-Length: 0\t0\r\n\r\n",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = parse(bad[i], &r);
		CHECK(rc == -1 && r.status == 400);
		if (rc != -1)
			printf("#   accepted: %s\n", bad[i]);
	}
	CHECK(parse("GET / HTTP/1.1\r\nContent-Length:  007 \t\r\n\r\n", &r) > 0 && r.has_body);
	CHECK(parse("GET / HTTP/1.1\r\nContent-Length: 00\r\n\r\n", &r) > 0 && !r.has_body);
}

/* A /proc/net/tcp and tcp6 table: the peer's own row (local = the
 * peer, remote = us) gives its uid; our row, a TIME_WAIT row and a row
 * of another port do not. */
static void test_tcp_uid_from_proc_net_tcp(void)
{
	const char *tcp =
		"  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
		"   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 100 1 0\n"
		"   1: 0100007F:1F90 0100007F:C350 01 00000000:00000000 00:00000000 00000000     0        0 101 1 0\n"
		"   2: 0100007F:C351 0100007F:1F90 06 00000000:00000000 03:00000F9E 00000000     0        0 0 3 0\n"
		"   3: 0100007F:C350 0100007F:1F90 01 00000000:00000000 00:00000000 00000000  1000        0 102 1 0\n";
	const char *tcp6 =
		"  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
		"   0: 00000000000000000000000001000000:D431 00000000000000000000000001000000:1F91 01 00000000:00000000 00:00000000 00000000 65534        0 103 1 0\n"
		"   1: 0000000000000000FFFF00000100007F:D432 0000000000000000FFFF00000100007F:1F90 04 00000000:00000000 00:00000000 00000000    42        0 104 1 0\n";
	struct sockaddr_storage me, peer;
	struct sockaddr_in *m4 = (struct sockaddr_in *)&me, *p4 = (struct sockaddr_in *)&peer;
	struct sockaddr_in6 *m6 = (struct sockaddr_in6 *)&me, *p6 = (struct sockaddr_in6 *)&peer;
	unsigned long uid = 7;

	memset(&me, 0, sizeof(me));
	memset(&peer, 0, sizeof(peer));
	m4->sin_family = p4->sin_family = AF_INET;
	m4->sin_addr.s_addr = p4->sin_addr.s_addr = htonl(0x7f000001);
	m4->sin_port = htons(8080);
	p4->sin_port = htons(50000);
	CHECK(rm_http_tcp_uid(tcp, strlen(tcp), &peer, &me, &uid) == 1);
	CHECK_U64(uid, 1000);
	p4->sin_port = htons(50001);   /* TIME_WAIT: uid 0 there means nothing */
	CHECK(rm_http_tcp_uid(tcp, strlen(tcp), &peer, &me, &uid) == 0);
	p4->sin_port = htons(50002);
	CHECK(rm_http_tcp_uid(tcp, strlen(tcp), &peer, &me, &uid) == 0);
	/* An IPv4 listener, a client on an IPv6 socket (::ffff:127.0.0.1). */
	p4->sin_port = htons(0xD432);
	CHECK(rm_http_tcp_uid(tcp6, strlen(tcp6), &peer, &me, &uid) == 1);
	CHECK_U64(uid, 42);
	/* ::1 on both sides. */
	memset(&me, 0, sizeof(me));
	memset(&peer, 0, sizeof(peer));
	m6->sin6_family = p6->sin6_family = AF_INET6;
	m6->sin6_addr = p6->sin6_addr = in6addr_loopback;
	m6->sin6_port = htons(0x1F91);
	p6->sin6_port = htons(0xD431);
	CHECK(rm_http_tcp_uid(tcp6, strlen(tcp6), &peer, &me, &uid) == 1);
	CHECK_U64(uid, 65534);
	CHECK(rm_http_tcp_uid("garbage\n:\n   0: 01:2\n", 19, &peer, &me, &uid) == 0);
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
	CHECK(rm_http_addr_parse("unix:/run/rm.sock", &ss, &len, &lo) == 0 && lo == 1 &&
	      ss.ss_family == AF_UNIX);
	CHECK(rm_http_addr_parse("unix:", &ss, &len, &lo) == -1);
	CHECK(rm_http_addr_parse("unix:/tmp/", &ss, &len, &lo) == -1);
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
	if (!strcmp(req->path, "/peer")) {
		struct rm_httpd_peer p;
		char b[96];
		int n;
		if (rm_httpd_peer(h, tk, &p) < 0)
			return 0;
		n = snprintf(b, sizeof(b), "kind=%d known=%d %s", p.kind, p.uid_known, p.key);
		return rm_httpd_reply(h, tk, 200, NULL, b, (size_t)n), 0;
	}
	if (!strcmp(req->path, "/big")) {
		static char big[RM_HTTPD_MAX_ANSWER + 1];
		return rm_httpd_reply(h, tk, 200, NULL, big, sizeof(big)), 0;
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

/* --listen unix:PATH: the peer's uid from SO_PEERCRED; a TCP peer on
 * loopback gets its socket's uid from /proc/net/tcp; a stale socket
 * at the name is replaced, a live one is not; the name goes at close. */
static void test_unix_socket_and_peer_uid(void)
{
	static struct rm_httpd h, h2;
	char dir[] = "/tmp/t_httpd.XXXXXX", path[104], addr[140], want[64], name[80];
	struct sockaddr_un su;
	struct stat st;
	int fd, port;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%.100s/s", dir);
	snprintf(addr, sizeof(addr), "unix:%s", path);
	snprintf(want, sizeof(want), "kind=%d known=1 uid:%lu", RM_PEER_UNIX, (unsigned long)geteuid());
	if (rm_httpd_open(&h, addr, handler, NULL) < 0) {
		printf("#   cannot listen on %s: %s\n", addr, strerror(errno));
		tap_cur = 1;
		return;
	}
	CHECK(stat(path, &st) == 0 && S_ISSOCK(st.st_mode) && (st.st_mode & 0777) == 0666);
	CHECK(rm_httpd_name(&h, name, sizeof(name)) == 0);
	CHECK_STR(name, addr);
	/* A second server on a live socket: refused, the first keeps it. */
	CHECK(rm_httpd_open(&h2, addr, handler, NULL) < 0 && errno == EADDRINUSE);
	memset(&su, 0, sizeof(su));
	su.sun_family = AF_UNIX;
	memcpy(su.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK(connect(fd, (struct sockaddr *)&su, sizeof(su)) == 0);
	CHECK(write(fd, "GET /peer HTTP/1.1\r\n\r\n", 23) == 23);
	spin(&h, 5);
	CHECK(strstr(got(fd), want) != NULL);
	close(fd);
	/* Left behind by a run that was killed: taken over. */
	close(h.lfd);
	h.lfd = -1;
	h.uino = 0;
	rm_httpd_close(&h);
	CHECK(stat(path, &st) == 0);
	CHECK(rm_httpd_open(&h, addr, handler, NULL) == 0);
	rm_httpd_close(&h);
	CHECK(stat(path, &st) < 0 && errno == ENOENT);
	rmdir(dir);

	/* TCP on loopback: this process's own uid, from /proc/net/tcp. */
	CHECK(rm_httpd_open(&h, ":0", handler, NULL) == 0);
	CHECK(rm_httpd_name(&h, name, sizeof(name)) == 0);
	port = atoi(strrchr(name, ':') + 1);
	snprintf(want, sizeof(want), "kind=%d known=1 uid:%lu", RM_PEER_LOCAL, (unsigned long)geteuid());
	fd = dial(port);
	CHECK(write(fd, "GET /peer HTTP/1.1\r\n\r\n", 23) == 23);
	spin(&h, 5);
	CHECK(strstr(got(fd), want) != NULL);
	close(fd);
	rm_httpd_close(&h);
}

/* Out of descriptors, accept fails with EMFILE while the backlog stays
 * readable: the listener leaves the poll for a while (no busy loop) and
 * comes back when descriptors are free. */
static void test_emfile_backs_off(void)
{
	static struct rm_httpd h;
	struct rlimit old, low;
	struct pollfd p[RM_HTTPD_MAX_CONN + 1];
	char name[80];
	int port, a, b, n, wakeups = 0;
	double t, t0;

	CHECK(rm_httpd_open(&h, ":0", handler, NULL) == 0);
	CHECK(rm_httpd_name(&h, name, sizeof(name)) == 0);
	port = atoi(strrchr(name, ':') + 1);
	a = dial(port);
	b = dial(port);
	CHECK(a >= 0 && b >= 0);
	CHECK(getrlimit(RLIMIT_NOFILE, &old) == 0);
	low = old;
	low.rlim_cur = (rlim_t)(b + 1);   /* no descriptor left for accept */
	CHECK(setrlimit(RLIMIT_NOFILE, &low) == 0);
	/* 0.3 s of serving: with a busy loop this is thousands of wakeups. */
	t0 = rm_now_mono();
	while (rm_now_mono() - t0 < 0.3) {
		t = 1.0;
		n = rm_httpd_fds(&h, p, RM_HTTPD_MAX_CONN + 1, &t);
		poll(p, (nfds_t)n, (int)ceil(t * 1000));
		rm_httpd_ready(&h, p, n);
		wakeups++;
	}
	CHECK(setrlimit(RLIMIT_NOFILE, &old) == 0);
	printf("#   %d wakeups in 0.3 s, paused %lu times\n", wakeups, h.accept_paused);
	CHECK(h.accept_paused >= 1);
	CHECK(wakeups < 20);
	CHECK(rm_httpd_open_conns(&h) == 0);
	/* Descriptors again: both are served once the pause is over. */
	CHECK(write(a, "GET /a HTTP/1.1\r\n\r\n", 20) == 20);
	CHECK(write(b, "GET /b HTTP/1.1\r\n\r\n", 20) == 20);
	for (int i = 0; i < 300 && rm_httpd_open_conns(&h) < 2; i++)
		spin(&h, 1);
	spin(&h, 5);
	CHECK(strstr(got(a), "/a") != NULL);
	CHECK(strstr(got(b), "/b") != NULL);
	close(a);
	close(b);
	rm_httpd_close(&h);
}

/* A body larger than RM_HTTPD_MAX_ANSWER is never queued: 500. */
static void test_answer_is_capped(void)
{
	static struct rm_httpd h;
	char name[80];
	int port, a;

	CHECK(rm_httpd_open(&h, ":0", handler, NULL) == 0);
	CHECK(rm_httpd_name(&h, name, sizeof(name)) == 0);
	port = atoi(strrchr(name, ':') + 1);
	a = dial(port);
	CHECK(write(a, "GET /big HTTP/1.1\r\n\r\n", 22) == 22);
	spin(&h, 5);
	CHECK(strstr(got(a), "HTTP/1.1 500 ") != NULL);
	CHECK(h.c[0].out.cap < RM_HTTPD_KEEP_OUT);
	close(a);
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
	RUN(test_content_length_is_digits_only);
	RUN(test_tcp_uid_from_proc_net_tcp);
	RUN(test_unix_socket_and_peer_uid);
	RUN(test_emfile_backs_off);
	RUN(test_answer_is_capped);
	return tap_done();
}
