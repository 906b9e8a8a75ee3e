/*
 * fz_http: an HTTP request head (rm_http_parse) and its query string
 * (rm_http_query_next).  The head length returned is within the input
 * and the 8 KiB bound and ends a line; a failure names a status the
 * server can send; the path starts with '/' and fits; the query's
 * values are cut to the buffer.  The same bytes, read as a
 * /proc/net/tcp table (rm_http_tcp_uid, the peer's uid), find a row or
 * none and read nothing past the end.
 */
#include <arpa/inet.h>
#include <netinet/in.h>

#include "fuzz.h"
#include "httpd.h"

/* 127.0.0.1:50000 -> 127.0.0.1:8080, and ::1 -> ::1 on the same ports. */
static void fz_tcp_uid(const char *s, size_t size)
{
	struct sockaddr_storage a, b;
	struct sockaddr_in *a4 = (struct sockaddr_in *)&a, *b4 = (struct sockaddr_in *)&b;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&a, *b6 = (struct sockaddr_in6 *)&b;
	unsigned long uid = 0;
	int r;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	a4->sin_family = b4->sin_family = AF_INET;
	a4->sin_addr.s_addr = b4->sin_addr.s_addr = htonl(0x7f000001);
	a4->sin_port = htons(50000);
	b4->sin_port = htons(8080);
	r = rm_http_tcp_uid(s, size, &a, &b, &uid);
	FZ_ASSERT(r == 0 || r == 1);
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	a6->sin6_family = b6->sin6_family = AF_INET6;
	a6->sin6_addr = b6->sin6_addr = in6addr_loopback;
	a6->sin6_port = htons(50000);
	b6->sin6_port = htons(8080);
	r = rm_http_tcp_uid(s, size, &a, &b, &uid);
	FZ_ASSERT(r == 0 || r == 1);
}

static int fz_http(const uint8_t *data, size_t size)
{
	struct rm_http_req req;
	char *s = malloc(size ? size : 1);
	int r;

	if (!s)
		return 0;
	if (size)
		memcpy(s, data, size);   /* not NUL-terminated: ASan sees overreads */
	fz_tcp_uid(s, size);
	r = rm_http_parse(s, size, &req);
	FZ_ASSERT(r >= -1);
	if (r < 0)
		FZ_ASSERT(req.status == 400 || req.status == 414 || req.status == 431 ||
			  req.status == 505);
	if (r == 0)
		FZ_ASSERT(size < RM_HTTP_MAX_HEAD);
	if (r > 0) {
		char val[16];
		size_t pos = 0;
		int k = 0;
		FZ_ASSERT((size_t)r <= size && r <= RM_HTTP_MAX_HEAD);
		FZ_ASSERT(s[r - 1] == '\n');
		FZ_ASSERT(req.path[0] == '/');
		FZ_ASSERT(strlen(req.path) < sizeof(req.path));
		FZ_ASSERT(strlen(req.query) < sizeof(req.query));
		FZ_ASSERT(req.keep_alive == 0 || req.keep_alive == 1);
		while (rm_http_query_next(req.query, &pos, "pid", val, sizeof(val))) {
			FZ_ASSERT(strlen(val) < sizeof(val));
			FZ_ASSERT(pos <= strlen(req.query));
			FZ_ASSERT(++k <= (int)sizeof(req.query));
		}
	}
	free(s);
	return 0;
}

FZ_MAIN(fz_http)
