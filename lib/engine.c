/*
 * engine: see engine.h.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "engine.h"
#include "jsonread.h"

#ifndef RM_VERSION
#define RM_VERSION "0"
#endif

int rm_engine_socket(const char *host, const char *env, char *path, size_t cap, const char **why)
{
	const char *h = host && *host ? host : env && *env ? env : NULL;

	*why = "";
	if (!h)
		h = "unix://" RM_ENGINE_SOCK;
	if (strncmp(h, "unix://", 7) != 0) {
		*why = strstr(h, "://") ? "not a unix:// socket" : "not a URL";
		return 0;
	}
	h += 7;
	if (h[0] != '/') {
		*why = "not an absolute socket path";
		return 0;
	}
	if (strlen(h) >= cap) {
		*why = "socket path too long";
		return 0;
	}
	memcpy(path, h, strlen(h) + 1);
	return 1;
}

const char *rm_environ_get(const char *env, size_t len, const char *name)
{
	size_t nl = strlen(name);

	for (size_t i = 0; i < len; ) {
		const char *e = env + i;
		size_t l = strnlen(e, len - i);
		if (l > nl && memcmp(e, name, nl) == 0 && e[nl] == '=' && i + l < len)
			return e + nl + 1;
		i += l + 1;
	}
	return NULL;
}

const char *rm_engine_context_name(const char *context, const char *host, const char *docker_host,
				   const char *docker_context, const char *current)
{
	if (context && *context)
		return context;
	if ((host && *host) || (docker_host && *docker_host))
		return "default";
	if (docker_context && *docker_context)
		return docker_context;
	if (current && *current)
		return current;
	return "default";
}

int rm_engine_context_ok(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n > 255 || !isalnum((unsigned char)name[0]))
		return 0;
	for (size_t i = 1; i < n; i++)
		if (!isalnum((unsigned char)name[i]) && !strchr("_.+-", name[i]))
			return 0;
	return 1;
}

int rm_engine_config_context(const char *json, size_t len, char *name, size_t cap)
{
	struct rm_jv doc, v;

	return rm_json_parse(json, len, &doc) && rm_json_kind(doc) == '{' &&
	       rm_json_get(doc, "currentContext", &v) && rm_json_str(v, name, cap) > 0;
}

int rm_engine_context_host(const char *json, size_t len, char *host, size_t cap)
{
	struct rm_jv doc, ep, d, v;

	return rm_json_parse(json, len, &doc) && rm_json_kind(doc) == '{' &&
	       rm_json_get(doc, "Endpoints", &ep) && rm_json_kind(ep) == '{' &&
	       rm_json_get(ep, "docker", &d) && rm_json_kind(d) == '{' &&
	       rm_json_get(d, "Host", &v) && rm_json_str(v, host, cap) > 0;
}

/* ---- the response ---- */

/* A chunked body at b[0..n): 1 whole (with *out bytes of data, written
 * from b when dec), 0 incomplete, -1 malformed. */
static int chunks(char *b, size_t n, int dec, size_t *out)
{
	size_t i = 0, o = 0;

	for (;;) {
		size_t sz = 0, digits = 0;
		while (i < n) {
			char c = b[i];
			int h = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
				: c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
			if (h < 0)
				break;
			if (++digits > 8)
				return -1;  /* no chunk of 4 GiB: bounded anyway */
			sz = sz * 16 + (size_t)h;
			i++;
		}
		if (i >= n)
			return 0;
		if (!digits)
			return -1;
		/* chunk extensions: skipped to the line's end */
		while (i < n && b[i] != '\r' && b[i] != '\n')
			i++;
		if (i + 1 >= n)
			return 0;
		if (b[i] != '\r' || b[i + 1] != '\n')
			return -1;
		i += 2;
		if (sz == 0) {
			/* trailers, then the empty line */
			for (;;) {
				const char *nl;
				if (i + 1 >= n)
					return 0;
				if (b[i] == '\r' && b[i + 1] == '\n') {
					*out = o;
					return 1;
				}
				nl = memchr(b + i, '\n', n - i);
				if (!nl)
					return 0;
				if (nl == b + i || nl[-1] != '\r')
					return -1;
				i = (size_t)(nl - b) + 1;
			}
		}
		if (n - i < sz + 2)
			return 0;
		if (b[i + sz] != '\r' || b[i + sz + 1] != '\n')
			return -1;
		if (dec)
			memmove(b + o, b + i, sz);
		o += sz;
		i += sz + 2;
	}
}

int rm_http_response(char *buf, size_t len, int eof, int *status, char **body, size_t *blen)
{
	char *end = memmem(buf, len, "\r\n\r\n", 4), *line, *b;
	size_t hlen, n, clen = 0;
	int have_len = 0, chunked = 0, r;

	if (len >= 5 && memcmp(buf, "HTTP/", 5) != 0)
		return -1;
	if (!end)
		return eof || len > 65536 ? -1 : 0;
	hlen = (size_t)(end - buf) + 4;
	/* "HTTP/1.1 200 OK" */
	if (hlen < 16 || memcmp(buf, "HTTP/1.", 7) != 0 || (buf[7] != '0' && buf[7] != '1') ||
	    buf[8] != ' ' || buf[9] < '1' || buf[9] > '5' || buf[10] < '0' || buf[10] > '9' ||
	    buf[11] < '0' || buf[11] > '9' || (buf[12] != ' ' && buf[12] != '\r'))
		return -1;
	*status = (buf[9] - '0') * 100 + (buf[10] - '0') * 10 + (buf[11] - '0');
	if (*status < 200)
		return -1;  /* no interim answer to a GET */
	line = (char *)memchr(buf, '\n', hlen) + 1;
	if (line[-2] != '\r')
		return -1;  /* the status line ends in CRLF like every other */
	while (line < end + 2) {
		char *nl = memchr(line, '\n', (size_t)(end + 4 - line)), *colon, *v;
		size_t ll;
		if (!nl || nl == line || nl[-1] != '\r')
			return -1;
		ll = (size_t)(nl - 1 - line);
		colon = memchr(line, ':', ll);
		if (!colon || colon == line)
			return -1;
		for (v = colon + 1; v < nl - 1 && (*v == ' ' || *v == '\t'); v++)
			;
		if ((size_t)(colon - line) == 14 && strncasecmp(line, "Content-Length", 14) == 0) {
			size_t val = 0;
			char *d = v;
			for (; d < nl - 1 && *d >= '0' && *d <= '9'; d++) {
				if (val > ((size_t)1 << 40))
					return -1;
				val = val * 10 + (size_t)(*d - '0');
			}
			while (d < nl - 1 && (*d == ' ' || *d == '\t'))
				d++;
			if (d == v || d != nl - 1 || (have_len && val != clen))
				return -1;  /* "0 5", empty, or two that differ */
			clen = val;
			have_len = 1;
		} else if ((size_t)(colon - line) == 17 && strncasecmp(line, "Transfer-Encoding", 17) == 0) {
			size_t vl = (size_t)(nl - 1 - v);
			while (vl && (v[vl - 1] == ' ' || v[vl - 1] == '\t'))
				vl--;
			if (vl != 7 || strncasecmp(v, "chunked", 7) != 0)
				return -1;  /* gzip or a list: not asked for */
			chunked = 1;
		}
		line = nl + 1;
	}
	if (chunked && have_len)
		return -1;
	b = buf + hlen;
	n = len - hlen;
	if (chunked) {
		size_t o;
		r = chunks(b, n, 0, &o);
		if (r == 0)
			return eof ? -1 : 0;
		if (r < 0)
			return -1;
		chunks(b, n, 1, &o);
		*body = b;
		*blen = o;
		return 1;
	}
	if (have_len) {
		if (n < clen)
			return eof ? -1 : 0;
		*body = b;
		*blen = clen;
		return 1;
	}
	if (!eof)
		return 0;
	*body = b;
	*blen = n;
	return 1;
}

int rm_url_encode(const char *s, char *out, size_t cap)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t o = 0;

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		int plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			    c == '-' || c == '_' || c == '.' || c == '~';
		if (o + (plain ? 1 : 3) >= cap)
			return -1;
		if (plain) {
			out[o++] = (char)c;
		} else {
			out[o++] = '%';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		}
	}
	if (o >= cap)
		return -1;
	out[o] = '\0';
	return 0;
}

/* ---- the exchange ---- */

static long long ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Wait for events on fd until the deadline: 1 ready, 0 not in time. */
static int wait_fd(int fd, short ev, long long deadline)
{
	for (;;) {
		struct pollfd p = { .fd = fd, .events = ev };
		long long left = deadline - ms_now();
		int r;
		if (left <= 0)
			return 0;
		r = poll(&p, 1, (int)left);
		if (r > 0)
			return 1;
		if (r < 0 && errno != EINTR)
			return 0;
	}
}

static int fail(char *why, size_t wcap, const char *what)
{
	snprintf(why, wcap, "%s", what);
	return -1;
}

int rm_engine_get(const char *sock, uid_t uid, const char *target, int timeout_ms,
		  char *buf, size_t cap, char **body, size_t *blen, char *why, size_t wcap)
{
	long long deadline = ms_now() + timeout_ms;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct ucred cr;
	socklen_t crl = sizeof(cr);
	struct stat st;
	char req[4096];
	size_t len = 0, rl;
	int fd, dfd = -1, status = -1, st_got = -1, r;

	if (lstat(sock, &st) < 0)
		return fail(why, wcap, strerror(errno));
	if (!S_ISSOCK(st.st_mode))
		return fail(why, wcap, "not a socket");
	if (st.st_uid != 0 && st.st_uid != uid)
		return fail(why, wcap, "the socket is owned by another user");
	if (strlen(sock) < sizeof(sa.sun_path)) {
		memcpy(sa.sun_path, sock, strlen(sock) + 1);
	} else {
		/* A long path: through the directory's descriptor. */
		const char *slash = strrchr(sock, '/');
		char dir[4096];
		if (!slash || (size_t)(slash - sock) >= sizeof(dir))
			return fail(why, wcap, "socket path too long");
		memcpy(dir, sock, (size_t)(slash - sock));
		dir[slash - sock] = '\0';
		dfd = open(dir[0] ? dir : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (dfd < 0 || snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/%s", dfd,
					slash + 1) >= (int)sizeof(sa.sun_path)) {
			if (dfd >= 0)
				close(dfd);
			return fail(why, wcap, "socket path too long");
		}
	}
	rl = (size_t)snprintf(req, sizeof(req),
			      "GET %s HTTP/1.1\r\nHost: docker\r\nUser-Agent: rm-tools/" RM_VERSION
			      "\r\nAccept: application/json\r\nConnection: close\r\n\r\n", target);
	if (rl >= sizeof(req)) {
		if (dfd >= 0)
			close(dfd);
		return fail(why, wcap, "request too long");
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		if (dfd >= 0)
			close(dfd);
		return fail(why, wcap, strerror(errno));
	}
	r = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	if (dfd >= 0)
		close(dfd);
	if (r < 0 && (errno == EINPROGRESS || errno == EAGAIN)) {
		int e = 0;
		socklen_t el = sizeof(e);
		if (!wait_fd(fd, POLLOUT, deadline)) {
			snprintf(why, wcap, "no answer in %d ms", timeout_ms);
			goto out;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) < 0 || e) {
			snprintf(why, wcap, "%s", strerror(e ? e : errno));
			goto out;
		}
	} else if (r < 0) {
		snprintf(why, wcap, "%s", strerror(errno));
		goto out;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crl) < 0 ||
	    (cr.uid != 0 && cr.uid != uid)) {
		snprintf(why, wcap, "the process answering is not root's nor the client's user's");
		goto out;
	}
	for (size_t off = 0; off < rl; ) {
		ssize_t w = send(fd, req + off, rl - off, MSG_NOSIGNAL);
		if (w > 0) {
			off += (size_t)w;
		} else if (w < 0 && errno != EAGAIN && errno != EINTR) {
			snprintf(why, wcap, "%s", strerror(errno));
			goto out;
		} else if (!wait_fd(fd, POLLOUT, deadline)) {
			snprintf(why, wcap, "no answer in %d ms", timeout_ms);
			goto out;
		}
	}
	for (;;) {
		ssize_t got;
		if (len + 1 >= cap) {
			snprintf(why, wcap, "an answer longer than %zu bytes", cap - 1);
			goto out;
		}
		got = recv(fd, buf + len, cap - 1 - len, 0);
		if (got < 0 && (errno == EAGAIN || errno == EINTR)) {
			if (!wait_fd(fd, POLLIN, deadline)) {
				snprintf(why, wcap, "no whole answer in %d ms", timeout_ms);
				goto out;
			}
			continue;
		}
		if (got < 0) {
			snprintf(why, wcap, "%s", strerror(errno));
			goto out;
		}
		len += (size_t)got;
		buf[len] = '\0';
		/* The status is the caller's only once the answer is whole. */
		r = rm_http_response(buf, len, got == 0, &st_got, body, blen);
		if (r < 0) {
			snprintf(why, wcap, "a malformed HTTP answer");
			goto out;
		}
		if (r == 1) {
			(*body)[*blen] = '\0';
			status = st_got;
			break;
		}
	}
out:
	close(fd);
	return status;
}

/* ---- the list ---- */

static int has_name(struct rm_jv names, const char *name)
{
	size_t it = 0;
	struct rm_jv el;
	char s[512];

	while (rm_json_next(names, &it, &el))
		if (rm_json_str(el, s, sizeof(s)) > 0 && s[0] == '/' && strcmp(s + 1, name) == 0)
			return 1;
	return 0;
}

static int has_label(struct rm_jv labels, const char *label)
{
	const char *eq = strchr(label, '=');
	char key[256], want[1024];
	struct rm_jv v;
	char got[1024];

	if (eq) {
		if ((size_t)(eq - label) >= sizeof(key) || strlen(eq + 1) >= sizeof(want))
			return 0;
		memcpy(key, label, (size_t)(eq - label));
		key[eq - label] = '\0';
		snprintf(want, sizeof(want), "%s", eq + 1);
	} else if (snprintf(key, sizeof(key), "%s", label) >= (int)sizeof(key)) {
		return 0;
	}
	if (rm_json_kind(labels) != '{' || !rm_json_get(labels, key, &v))
		return 0;
	return rm_json_str(v, got, sizeof(got)) >= 0 && (!eq || strcmp(got, want) == 0);
}

int rm_engine_list(const char *body, size_t len, const char *name, const char *label, double since,
		   void (*fn)(const char *id, const char *name, void *arg), void *arg)
{
	struct rm_jv arr, el, v;
	size_t it = 0;
	int matched = 0;

	if (!rm_json_parse(body, len, &arr) || rm_json_kind(arr) != '[')
		return -1;
	while (rm_json_next(arr, &it, &el)) {
		char id[RM_CT_ID_LEN + 2];
		long long created;
		if (rm_json_kind(el) != '{')
			return -1;
		if (!rm_json_get(el, "Id", &v) || rm_json_str(v, id, sizeof(id)) != RM_CT_ID_LEN ||
		    !rm_ct_is_id(id, RM_CT_ID_LEN))
			continue;
		if (!rm_json_get(el, "Created", &v) || rm_json_int(v, &created) < 0 ||
		    (double)created < since)
			continue;
		if (name ? !(rm_json_get(el, "Names", &v) && has_name(v, name))
			 : !(label && rm_json_get(el, "Labels", &v) && has_label(v, label)))
			continue;
		matched++;
		if (fn) {
			char first[256] = "";
			struct rm_jv n0;
			size_t ni = 0;
			if (rm_json_get(el, "Names", &v) && rm_json_kind(v) == '[' &&
			    rm_json_next(v, &ni, &n0) && rm_json_str(n0, first, sizeof(first)) <= 0)
				first[0] = '\0';
			fn(id, first[0] == '/' ? first + 1 : first, arg);
		}
	}
	return matched;
}
