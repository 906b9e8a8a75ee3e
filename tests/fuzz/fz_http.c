/*
 * fz_http: an HTTP request head (rm_http_parse) and its query string
 * (rm_http_query_next).  The head length returned is within the input
 * and the 8 KiB bound and ends a line; a failure names a status the
 * server can send; the path starts with '/' and fits; the query's
 * values are cut to the buffer.
 */
#include "fuzz.h"
#include "httpd.h"

static int fz_http(const uint8_t *data, size_t size)
{
	struct rm_http_req req;
	char *s = malloc(size ? size : 1);
	int r;

	if (!s)
		return 0;
	if (size)
		memcpy(s, data, size);   /* not NUL-terminated: ASan sees overreads */
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
