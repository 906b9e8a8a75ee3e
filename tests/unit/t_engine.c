/*
 * Unit tests of lib/engine: where a docker client's engine is, the HTTP
 * answer parser, the container list, and one GET against a server made
 * here (a child process on a Unix socket in a private directory) that
 * answers whole, too long, or not at all; docker contexts as the CLI
 * picks them, and the SHA-256 their metadata directories are named by.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine.h"
#include "sha256.h"
#include "tap.h"

#define ID1 "3f2a9c0d1e4b5a6978c0d1e2f3a4b5c6d7e8f90123456789abcdef0123456789"
#define ID2 "0000000000000000000000000000000000000000000000000000000000000001"

static void sockets(void)
{
	char p[64];
	const char *why;

	CHECK(rm_engine_socket(NULL, NULL, p, sizeof(p), &why) == 1);
	CHECK_STR(p, "/var/run/docker.sock");
	CHECK(rm_engine_socket(NULL, "unix:///run/user/1000/docker.sock", p, sizeof(p), &why) == 1);
	CHECK_STR(p, "/run/user/1000/docker.sock");
	/* -H wins over DOCKER_HOST */
	CHECK(rm_engine_socket("unix:///a.sock", "unix:///b.sock", p, sizeof(p), &why) == 1);
	CHECK_STR(p, "/a.sock");
	CHECK(rm_engine_socket("tcp://10.0.0.1:2375", NULL, p, sizeof(p), &why) == 0);
	CHECK_STR(why, "not a unix:// socket");
	CHECK(rm_engine_socket(NULL, "ssh://u@h", p, sizeof(p), &why) == 0);
	CHECK(rm_engine_socket(NULL, "unix://run/docker.sock", p, sizeof(p), &why) == 0);
	CHECK_STR(why, "not an absolute socket path");
	CHECK(rm_engine_socket(NULL, "/var/run/docker.sock", p, sizeof(p), &why) == 0);
	CHECK_STR(why, "not a URL");
	CHECK(rm_engine_socket(NULL, "unix:///" "0123456789012345678901234567890123456789"
			       "0123456789012345678901234567890123456789", p, sizeof(p), &why) == 0);
	CHECK_STR(why, "socket path too long");
}

static void environ_block(void)
{
	static const char env[] = "PATH=/bin\0DOCKER_HOSTX=no\0DOCKER_HOST=unix:///x.sock\0TAIL";

	CHECK_STR(rm_environ_get(env, sizeof(env) - 1, "DOCKER_HOST"), "unix:///x.sock");
	CHECK_STR(rm_environ_get(env, sizeof(env) - 1, "PATH"), "/bin");
	CHECK(rm_environ_get(env, sizeof(env) - 1, "DOCKER") == NULL);
	/* an entry the block cuts before its NUL is not read */
	CHECK(rm_environ_get(env, 30, "DOCKER_HOST") == NULL);
	CHECK(rm_environ_get(env, sizeof(env) - 1, "TAIL") == NULL);
}

static int parse(const char *s, int eof, int *status, char *body, size_t *blen)
{
	char buf[512], *b;
	int r;

	snprintf(buf, sizeof(buf), "%s", s);
	r = rm_http_response(buf, strlen(buf), eof, status, &b, blen);
	if (r == 1)
		snprintf(body, 128, "%.*s", (int)*blen, b);
	return r;
}

static void responses(void)
{
	char body[128];
	size_t bl;
	int st;

	CHECK(parse("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n[]", 0, &st, body, &bl) == 1);
	CHECK(st == 200);
	CHECK_STR(body, "[]");
	CHECK(parse("HTTP/1.1 200 OK\r\ncontent-length:  2 \r\n\r\n[]", 0, &st, body, &bl) == 1);
	/* more to come, or cut short */
	CHECK(parse("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n[]", 0, &st, body, &bl) == 0);
	CHECK(parse("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n[]", 1, &st, body, &bl) == -1);
	CHECK(parse("HTTP/1.1 200 OK\r\nContent-Le", 0, &st, body, &bl) == 0);
	/* chunked, with an extension and a trailer */
	CHECK(parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1;x=y\r\n[\r\n1\r\n]\r\n0\r\nT: 1\r\n\r\n",
		    0, &st, body, &bl) == 1);
	CHECK_STR(body, "[]");
	CHECK(parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n[]\r\n", 0, &st, body, &bl) == 0);
	CHECK(parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n[]\r\n", 1, &st, body, &bl) == -1);
	CHECK(parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\n[]\r\n0\r\n\r\n", 1, &st, body, &bl) == -1);
	/* to the close */
	CHECK(parse("HTTP/1.0 404 Not Found\r\nX: y\r\n\r\n{\"message\":\"no\"}", 0, &st, body, &bl) == 0);
	CHECK(parse("HTTP/1.0 404 Not Found\r\nX: y\r\n\r\n{\"message\":\"no\"}", 1, &st, body, &bl) == 1);
	CHECK(st == 404);
	/* malformed */
	const char *bad[] = {
		"SSH-2.0-OpenSSH\r\n\r\n",
		"HTTP/1.1 100 Continue\r\n\r\n",
		"HTTP/2 200\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n[]]",
		"HTTP/1.1 200 OK\r\nContent-Length: 2 3\r\n\r\n[]",
		"HTTP/1.1 200 OK\r\nContent-Length: \r\n\r\n[]",
		"HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999\r\n\r\n[]",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\n",
		"HTTP/1.1 200 OK\r\nno colon\r\n\r\n",
		"HTTP/1.1 200 OK\nX: y\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n123456789\r\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (parse(bad[i], 1, &st, body, &bl) != -1) {
			printf("#   accepted: %s\n", bad[i]);
			CHECK(0);
		}
}

static void url_encoding(void)
{
	char out[64];

	CHECK(rm_url_encode("{\"label\":[\"a=b c\"]}", out, sizeof(out)) == 0);
	CHECK_STR(out, "%7B%22label%22%3A%5B%22a%3Db%20c%22%5D%7D");
	CHECK(rm_url_encode("rm-tools.run_1~", out, sizeof(out)) == 0);
	CHECK_STR(out, "rm-tools.run_1~");
	CHECK(rm_url_encode("{{{{{{{{{{{{{{{{{{{{{{", out, sizeof(out)) == -1);
}

static char got[4][RM_CT_ID_LEN + 1], gotname[4][64];
static int ngot;

static void on_id(const char *id, const char *name, void *arg)
{
	(void)arg;
	if (ngot < 4) {
		snprintf(gotname[ngot], sizeof(gotname[0]), "%s", name);
		snprintf(got[ngot++], sizeof(got[0]), "%s", id);
	}
}

static void lists(void)
{
	const char *list =
		"[{\"Id\":\"" ID1 "\",\"Names\":[\"/stage1\"],\"Created\":1000,"
		"\"Labels\":{\"rm-tools.run\":\"r1\",\"other\":\"\"}},"
		"{\"Id\":\"" ID2 "\",\"Names\":[\"/stage10\",\"/x/stage1\"],\"Created\":2000,"
		"\"Labels\":{\"rm-tools.run\":\"r2\"}},"
		"{\"Id\":\"short\",\"Names\":[\"/stage1\"],\"Created\":3000,\"Labels\":{}}]";
	size_t n = strlen(list);

	ngot = 0;
	CHECK(rm_engine_list(list, n, "stage1", NULL, 0, on_id, NULL) == 1);
	CHECK(ngot == 1);
	CHECK_STR(got[0], ID1);
	CHECK_STR(gotname[0], "stage1");  /* its first name, without the '/' */
	/* created before the client: not its container */
	CHECK(rm_engine_list(list, n, "stage1", NULL, 1001, NULL, NULL) == 0);
	ngot = 0;
	CHECK(rm_engine_list(list, n, NULL, "rm-tools.run=r2", 0, on_id, NULL) == 1);
	CHECK_STR(got[0], ID2);
	CHECK_STR(gotname[0], "stage10");
	CHECK(rm_engine_list(list, n, NULL, "rm-tools.run", 0, NULL, NULL) == 2);
	CHECK(rm_engine_list(list, n, NULL, "rm-tools.run=r", 0, NULL, NULL) == 0);
	CHECK(rm_engine_list(list, n, NULL, "other=", 0, NULL, NULL) == 1);
	CHECK(rm_engine_list("[]", 2, "x", NULL, 0, NULL, NULL) == 0);
	CHECK(rm_engine_list("{\"message\":\"x\"}", 15, "x", NULL, 0, NULL, NULL) == -1);
	CHECK(rm_engine_list("[1]", 3, "x", NULL, 0, NULL, NULL) == -1);
	CHECK(rm_engine_list("[{}", 3, "x", NULL, 0, NULL, NULL) == -1);
}

/* A server on a socket under a private directory: answers the first
 * connection with what, then holds it open for hold seconds. */
static pid_t serve(const char *path, const char *what, size_t n, int hold)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int l = socket(AF_UNIX, SOCK_STREAM, 0), c;
	pid_t pid;
	char req[4096];

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	unlink(path);
	if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(l, 1) < 0)
		return -1;
	pid = fork();
	if (pid != 0) {
		close(l);
		return pid;
	}
	c = accept(l, NULL, NULL);
	if (c >= 0 && read(c, req, sizeof(req)) > 0) {
		for (size_t o = 0; o < n;) {
			ssize_t w = write(c, what + o, n - o);
			if (w <= 0)
				break;
			o += (size_t)w;
		}
		sleep((unsigned)hold);
	}
	_exit(0);
}

static void stop(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
}

static void get(void)
{
	char dir[] = "/tmp/t_engine.XXXXXX", path[64], buf[4096], why[128], *body, *big;
	static const char whole[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n[]";
	size_t bl, bign = 100000;
	pid_t pid;
	int st;

	if (!mkdtemp(dir)) {
		CHECK(0);
		return;
	}
	snprintf(path, sizeof(path), "%s/e.sock", dir);

	pid = serve(path, whole, sizeof(whole) - 1, 0);
	st = rm_engine_get(path, getuid(), "/containers/json", 5000, buf, sizeof(buf), &body, &bl,
			   why, sizeof(why));
	CHECK(st == 200);
	CHECK(bl == 2 && strcmp(body, "[]") == 0);
	stop(pid);

	/* An answer larger than the buffer: refused, its status not given
	 * (the headers said 200 before the body overran). */
	big = malloc(bign + 64);
	if (!big) {
		CHECK(0);
		return;
	}
	int h = snprintf(big, 64, "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n\r\n", bign);
	memset(big + h, ' ', bign);
	pid = serve(path, big, (size_t)h + bign, 5);
	st = rm_engine_get(path, getuid(), "/containers/json", 5000, buf, sizeof(buf), &body, &bl,
			   why, sizeof(why));
	CHECK(st == -1);
	CHECK(strstr(why, "an answer longer than 4095 bytes") != NULL);
	stop(pid);
	free(big);

	/* Headers, then nothing: the deadline ends it, again with no status. */
	pid = serve(path, whole, 38, 5);
	st = rm_engine_get(path, getuid(), "/containers/json", 300, buf, sizeof(buf), &body, &bl,
			   why, sizeof(why));
	CHECK(st == -1);
	CHECK(strstr(why, "no whole answer in 300 ms") != NULL);
	stop(pid);

	/* Not a socket; no one listening. */
	CHECK(rm_engine_get(dir, getuid(), "/", 300, buf, sizeof(buf), &body, &bl, why, sizeof(why)) == -1);
	CHECK_STR(why, "not a socket");
	unlink(path);
	CHECK(rm_engine_get(path, getuid(), "/", 300, buf, sizeof(buf), &body, &bl, why, sizeof(why)) == -1);
	CHECK_STR(why, strerror(ENOENT));
	rmdir(dir);
}

static void sha256(void)
{
	static const struct {
		size_t n;
		const char *hex;
	} aa[] = {
		{ 55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318" },
		{ 56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a" },
		{ 64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb" },
		{ 119, "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb" },
	};
	char hex[65], a[128];

	rm_sha256_hex("", 0, hex);
	CHECK_STR(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	rm_sha256_hex("abc", 3, hex);
	CHECK_STR(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	/* the padding's edges: one block, two, and a full block of data */
	memset(a, 'a', sizeof(a));
	for (size_t i = 0; i < sizeof(aa) / sizeof(aa[0]); i++) {
		rm_sha256_hex(a, aa[i].n, hex);
		CHECK_STR(hex, aa[i].hex);
	}
	/* docker's directory for the context "rootless" */
	rm_sha256_hex("rootless", 8, hex);
	CHECK_STR(hex, "12b961af5feb3e9d39f93b2cefb9a1a944f18d02cca0cac2f04f5a982240605f");
}

/* v holds 64 bytes */
static int cur_ctx(const char *json, char *v)
{
	return rm_engine_config_context(json, strlen(json), v, 64);
}

static int ctx_host(const char *json, char *v)
{
	return rm_engine_context_host(json, strlen(json), v, 64);
}

static void contexts(void)
{
	char v[64];

	/* the docker CLI's order */
	CHECK_STR(rm_engine_context_name("ci", NULL, "unix:///x", "other", "cur"), "ci");
	CHECK_STR(rm_engine_context_name(NULL, "unix:///x", NULL, "other", "cur"), "default");
	CHECK_STR(rm_engine_context_name(NULL, NULL, "unix:///x", "other", "cur"), "default");
	CHECK_STR(rm_engine_context_name(NULL, NULL, NULL, "other", "cur"), "other");
	CHECK_STR(rm_engine_context_name(NULL, NULL, "", "", "cur"), "cur");
	CHECK_STR(rm_engine_context_name(NULL, NULL, NULL, NULL, NULL), "default");
	CHECK(rm_engine_context_ok("rootless"));
	CHECK(rm_engine_context_ok("ci-2.build+x_y"));
	CHECK(!rm_engine_context_ok(""));
	CHECK(!rm_engine_context_ok("../x"));
	CHECK(!rm_engine_context_ok("-x"));
	CHECK(!rm_engine_context_ok("a/b"));
	CHECK(cur_ctx("{\"auths\":{},\"currentContext\":\"rootless\"}", v));
	CHECK_STR(v, "rootless");
	CHECK(!cur_ctx("{\"auths\":{}}", v));
	CHECK(!cur_ctx("{\"currentContext\":\"\"}", v));
	CHECK(!cur_ctx("[\"currentContext\"]", v));
	static const char meta[] = "{\"Name\":\"rootless\",\"Metadata\":{\"Description\":\"r\"},"
		"\"Endpoints\":{\"docker\":{\"Host\":\"unix:///run/user/1000/docker.sock\","
		"\"SkipTLSVerify\":false}}}";
	CHECK(rm_engine_context_host(meta, sizeof(meta) - 1, v, sizeof(v)));
	CHECK_STR(v, "unix:///run/user/1000/docker.sock");
	CHECK(!ctx_host("{\"Endpoints\":{\"kubernetes\":{}}}", v));
	CHECK(!rm_engine_context_host(meta, sizeof(meta) - 2, v, sizeof(v)));
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	RUN(sockets);
	RUN(environ_block);
	RUN(responses);
	RUN(url_encoding);
	RUN(lists);
	RUN(get);
	RUN(sha256);
	RUN(contexts);
	return tap_done();
}
