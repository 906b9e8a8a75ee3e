#include "rm-sample.h"

/*
 * --listen: GET /metrics, /usage and /healthz served from the same poll
 * as the ticks (lib/httpd inside lib/tick's wait), so one thread answers
 * every client and one sample is shared by all of them.  /metrics is
 * the last tick's row with -i; without -i it is a sample younger than
 * --min-age, or one taken at once (the clients that arrive meanwhile
 * wait in the socket's queue and then share it).  /usage needs a CPU
 * window: its first readings are taken, the answer is made when the
 * window has passed, and requests for the same PIDs in between wait for
 * that one sample instead of starting their own.
 */
#define USAGE_WINDOW 0.5
#define USAGE_SLOTS 8
#define USAGE_MAX_PIDS 64

struct usage_slot {
	char key[USAGE_MAX_PIDS * 8];   /* sorted PIDs, "" = free */
	int pending;
	double end_at, done_at;         /* monotonic */
	struct rm_usage u;
	struct rm_buf json;
	uint64_t waiters[RM_HTTPD_MAX_CONN];
	int nwait;
};

static struct serve {
	struct rm_httpd h;
	int on;
	const struct opts *o;
	struct state *s;
	struct rm_tick *t;
	struct rm_buf prom;
	double prom_at;                 /* monotonic; 0: none yet */
	int with_cmd;
	struct usage_slot slot[USAGE_SLOTS];
} srv;

void serve_check_args(struct opts *o)
{
	struct sockaddr_storage ss;
	unsigned len;
	int loop;

	if (o->listen && rm_http_addr_parse(o->listen, &ss, &len, &loop) < 0)
		rm_cli_usage_error(&cli,
				   "invalid --listen '%s': ADDR:PORT, :PORT or [IPV6]:PORT", o->listen);
	if (!o->listen && (o->min_age >= 0 || o->expose_cmd))
		rm_cli_usage_error(&cli, "%s needs --listen",
				   o->expose_cmd ? "--expose-cmdline" : "--min-age");
	if (o->min_age < 0)
		o->min_age = 1;
}

/* The row just sampled, as Prometheus text, for /metrics. */
void serve_keep(const struct rm_val *v)
{
	if (!srv.on)
		return;
	rm_buf_reset(&srv.prom);
	rm_emit_prom(&srv.prom, ocols, v, nout, 1, NULL);
	srv.prom_at = rm_now_mono();
}

static void serve_metrics(uint64_t tk)
{
	double now = rm_now_mono();

	if (!srv.o->interval && (!srv.prom_at || now - srv.prom_at >= srv.o->min_age)) {
		struct rm_val all[C_NCOLS], v[C_NCOLS];
		sample(srv.o, srv.s, rm_tick_elapsed(srv.t), all);
		for (int i = 0; i < nout; i++)
			v[i] = all[osel[i]];
		serve_keep(v);
	}
	if (!srv.prom_at) {
		rm_httpd_reply(&srv.h, tk, 503, NULL, "no sample yet\n", 14);
		return;
	}
	rm_httpd_reply(&srv.h, tk, 200, "text/plain; version=0.0.4; charset=utf-8",
		       srv.prom.p, srv.prom.len);
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

static void usage_rearm(void)
{
	srv.h.wake_at = 0;
	for (int i = 0; i < USAGE_SLOTS; i++)
		if (srv.slot[i].pending && (!srv.h.wake_at || srv.slot[i].end_at < srv.h.wake_at))
			srv.h.wake_at = srv.slot[i].end_at;
}

/* Windows that have passed: make their answers and send them. */
static void usage_wake(void *arg, struct rm_httpd *h, double now)
{
	(void)arg;
	for (int i = 0; i < USAGE_SLOTS; i++) {
		struct usage_slot *u = &srv.slot[i];
		if (!u->pending || now < u->end_at)
			continue;
		rm_buf_reset(&u->json);
		rm_usage_end(&u->u, prog, USAGE_WINDOW, &u->json);
		u->pending = 0;
		u->done_at = rm_now_mono();
		for (int k = 0; k < u->nwait; k++)
			rm_httpd_reply(h, u->waiters[k], 200, "application/json", u->json.p, u->json.len);
		u->nwait = 0;
	}
	usage_rearm();
}

static int serve_usage(uint64_t tk, const char *query)
{
	int pids[USAGE_MAX_PIDS], n = 0;
	char val[32], key[sizeof(srv.slot[0].key)];
	size_t pos = 0, kl = 0;
	struct usage_slot *u = NULL, *old = NULL;
	double now = rm_now_mono();

	while (rm_http_query_next(query, &pos, "pid", val, sizeof(val))) {
		pid_t p;
		if (rm_parse_pid(val, &p) < 0) {
			char msg[96];
			int len = snprintf(msg, sizeof(msg), "invalid parameter pid: '%.32s'\n", val);
			return rm_httpd_reply(&srv.h, tk, 400, NULL, msg, (size_t)len), 0;
		}
		if (n == USAGE_MAX_PIDS)
			return rm_httpd_reply(&srv.h, tk, 400, NULL, "too many pid parameters (at most 64)\n", 37), 0;
		pids[n++] = (int)p;
	}
	if (!n && srv.o->watch_pid > 0)
		pids[n++] = (int)srv.o->watch_pid;
	if (!n)
		return rm_httpd_reply(&srv.h, tk, 400, NULL, "missing parameter: pid\n", 23), 0;
	qsort(pids, (size_t)n, sizeof(int), cmp_int);
	for (int i = 0; i < n; i++)
		if (!i || pids[i] != pids[i - 1])
			kl += (size_t)snprintf(key + kl, sizeof(key) - kl, "%s%d", kl ? "," : "", pids[i]);
	for (int i = 0; i < USAGE_SLOTS; i++) {
		struct usage_slot *c = &srv.slot[i];
		if (c->key[0] && strcmp(c->key, key) == 0)
			u = c;
		else if (!c->pending && (!old || c->done_at < old->done_at))
			old = c;
	}
	if (u && !u->pending && now - u->done_at < srv.o->min_age)
		return rm_httpd_reply(&srv.h, tk, 200, "application/json", u->json.p, u->json.len), 0;
	if (!u || (!u->pending && !old))
		u = u ? u : old;
	if (!u)
		return rm_httpd_reply(&srv.h, tk, 503, NULL, "busy: too many samples under way\n", 33), 0;
	if (!u->pending) {
		memcpy(u->key, key, kl + 1);
		if (rm_usage_begin(&u->u, pids, n, srv.with_cmd) < 0) {
			rm_usage_free(&u->u);
			u->key[0] = '\0';
			return rm_httpd_reply(&srv.h, tk, 500, NULL, "cannot read the processes\n", 26), 0;
		}
		u->u.gpus = &gpus;      /* opened once, in serve_start */
		u->pending = 1;
		u->end_at = u->u.t0 + USAGE_WINDOW;
		u->nwait = 0;
		usage_rearm();
	}
	if (u->nwait == RM_HTTPD_MAX_CONN) {
		/* Forget the waiters whose connections were closed meanwhile. */
		int k = 0;
		for (int i = 0; i < u->nwait; i++)
			if (rm_httpd_ticket_live(&srv.h, u->waiters[i]))
				u->waiters[k++] = u->waiters[i];
		u->nwait = k;
	}
	if (u->nwait == RM_HTTPD_MAX_CONN)
		return rm_httpd_reply(&srv.h, tk, 503, NULL, "busy: too many waiting\n", 23), 0;
	u->waiters[u->nwait++] = tk;
	return RM_HTTPD_LATER;
}

static int serve_request(void *arg, struct rm_httpd *h, uint64_t tk, const struct rm_http_req *req)
{
	const char *p = req->path;
	int known = !strcmp(p, "/metrics") || !strcmp(p, "/usage") || !strcmp(p, "/bankml/usage") ||
		    !strcmp(p, "/healthz");

	(void)arg;
	if (!known)
		return rm_httpd_reply(h, tk, 404, NULL, "not found\n", 10), 0;
	if (req->method != RM_HTTP_GET)
		return rm_httpd_reply_hdr(h, tk, 405, NULL, "Allow: GET\r\n", "method not allowed\n", 19), 0;
	if (!strcmp(p, "/metrics"))
		serve_metrics(tk);
	else if (!strcmp(p, "/healthz"))
		rm_httpd_reply(h, tk, 200, NULL, "ok\n", 3);
	else
		return serve_usage(tk, req->query);
	return 0;
}

/* The server's descriptors, and the compilers count's event socket, so
 * that its events are read as they come, not only when a scrape asks. */
static int serve_hook_fds(void *arg, struct pollfd *p, int max, double *timeout)
{
	int n;

	(void)arg;
	if (max < 2 || compilers_pc.fd < 0)
		return rm_httpd_fds(&srv.h, p, max, timeout);
	n = rm_httpd_fds(&srv.h, p, max - 1, timeout);
	p[n].fd = compilers_pc.fd;
	p[n].events = POLLIN;
	p[n].revents = 0;
	return n + 1;
}

static void serve_hook_ready(void *arg, const struct pollfd *p, int n)
{
	(void)arg;
	if (n > 0 && compilers_pc.fd >= 0 && p[n - 1].fd == compilers_pc.fd) {
		if (p[n - 1].revents)
			(void)rm_pcount_get(&compilers_pc, 1);
		n--;
	}
	rm_httpd_ready(&srv.h, p, n);
}

/* Listen and hook the server into the tick's wait; exits on failure. */
int serve_start(const struct opts *o, struct state *s, struct rm_tick *t)
{
	struct sockaddr_storage ss;
	unsigned len;
	int loop = 0;
	char name[80];

	rm_http_addr_parse(o->listen, &ss, &len, &loop);
	if (rm_httpd_open(&srv.h, o->listen, serve_request, NULL) < 0)
		err(RM_EXIT_FAIL, "cannot listen on '%s'", o->listen);
	srv.on = 1;
	srv.o = o;
	srv.s = s;
	srv.t = t;
	srv.with_cmd = loop || o->expose_cmd;
	srv.h.on_wake = usage_wake;
	/* /usage's gpus: NVML comes up once, not per answer. */
	if (!o->gpu)
		rm_gpu_open(&gpus);
	(void)count_compilers(o);  /* the event socket, before the first scrape */
	t->hook_fds = serve_hook_fds;
	t->hook_ready = serve_hook_ready;
	t->hook_arg = &srv;
	if (rm_httpd_name(&srv.h, name, sizeof(name)) == 0)
		warnx("listening on %s", name);
	return 1;
}

void serve_stop(void)
{
	if (!srv.on)
		return;
	rm_httpd_close(&srv.h);
	for (int i = 0; i < USAGE_SLOTS; i++) {
		if (srv.slot[i].pending)
			rm_usage_free(&srv.slot[i].u);
		rm_buf_free(&srv.slot[i].json);
	}
	rm_buf_free(&srv.prom);
	srv.on = 0;
}

/* --listen without -i: serve until a signal or the watched PID's end. */
int serve_only(struct rm_tick *t)
{
	while (rm_tick_sleep_until(t, rm_tick_elapsed(t) + 1e6))
		;
	serve_stop();
	compilers_done();
	return rm_finish_stdout(RM_EXIT_OK);
}
