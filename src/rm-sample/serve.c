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
 *
 * What a client is shown follows what /proc shows it: no command lines
 * unless --expose-cmdline; where the proc root is mounted with hidepid,
 * only the processes of the peer's own uid (all of them to root, none
 * to a peer with no uid: another host).  An answer is one shared copy,
 * at most USAGE_MAX_ANSWER bytes.
 *
 * A request never delays a tick: a /usage sample that is not already
 * under way or fresh costs a token of its peer (PEER_RATE a second,
 * PEER_BURST at once) and of everyone's (ALL_RATE, ALL_BURST), else it
 * is 429; and its two readings (a scan of /proc, then the members
 * again) are taken in steps that stop TICK_MARGIN before the next
 * tick's deadline and go on in the next wait; a sample not answered
 * USAGE_GIVE_UP seconds after it was asked is 503.
 */
#define USAGE_WINDOW 0.25  /* the seed's endpoint window: half the usage command's */
#define USAGE_SLOTS 8
#define USAGE_MAX_PIDS 64
#define USAGE_MAX_ANSWER (4u << 20)
#define PEER_RATE 2.0
#define PEER_BURST 6.0
#define ALL_RATE 4.0
#define ALL_BURST 8.0
#define NPEERS 64
#define USAGE_GIVE_UP 10.0  /* a sample not done this long after it was asked: 503 */

enum { S_IDLE, S_QUEUED, S_SCAN, S_WINDOW, S_READ };

struct usage_slot {
	char key[32 + USAGE_MAX_PIDS * 8];  /* "VIEW:sorted PIDs", "" = free */
	int state;
	int pids[USAGE_MAX_PIDS], npids;
	long uid;                       /* whose processes (RM_USAGE_ANY_UID) */
	double end_at, done_at;         /* monotonic */
	double asked_at;                /* when the sample was asked for */
	struct rm_usage u;
	struct rm_httpd_blob *json;     /* the last answer (S_IDLE), or NULL */
	uint64_t waiters[RM_HTTPD_MAX_CONN];
	int nwait;
};

struct bucket {
	char key[64];                   /* "" = free */
	double tokens, at;
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
	int hidepid;                    /* the proc root's hidepid (0: off) */
	struct usage_slot slot[USAGE_SLOTS];
	struct bucket all, peer[NPEERS];
	unsigned long limited, deferred;
} srv;

void serve_check_args(struct opts *o)
{
	struct sockaddr_storage ss;
	unsigned len;
	int loop;

	if (o->listen && rm_http_addr_parse(o->listen, &ss, &len, &loop) < 0)
		rm_cli_usage_error(&cli,
				   "invalid --listen '%s': ADDR:PORT, :PORT, [IPV6]:PORT or unix:PATH",
				   o->listen);
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

/* Seconds to the next tick's deadline (rm_tick_next waits for slot). */
static double tick_room(void)
{
	if (!srv.o->interval)
		return 1e9;
	return (double)srv.t->slot * srv.t->interval - rm_tick_elapsed(srv.t);
}

/* How long before the next tick serving stops: the row starts on time. */
#define TICK_MARGIN 0.005

/* Until when /proc may be read now (monotonic), or 0 when not at all. */
static double read_until(void)
{
	double room = tick_room();

	if (room >= 1e8)
		return rm_now_mono() + 0.05;   /* no ticks: in steps all the same */
	return room > TICK_MARGIN * 2 ? rm_now_mono() + room - TICK_MARGIN : 0;
}

/* A token of bucket b (refilled at rate a second, up to burst)? */
static int tokens_left(struct bucket *b, double rate, double burst, double now)
{
	if (!b->at)
		b->tokens = burst;
	else
		b->tokens += (now - b->at) * rate;
	if (b->tokens > burst)
		b->tokens = burst;
	b->at = now;
	return b->tokens >= 1.0;
}

/* The peer's bucket: its own, else the longest unused one. */
static struct bucket *peer_bucket(const char *key)
{
	struct bucket *old = &srv.peer[0];

	for (int i = 0; i < NPEERS; i++) {
		if (!strcmp(srv.peer[i].key, key))
			return &srv.peer[i];
		if (srv.peer[i].at < old->at)
			old = &srv.peer[i];
	}
	memset(old, 0, sizeof(*old));
	snprintf(old->key, sizeof(old->key), "%s", key);
	return old;
}

static void slot_answer(struct usage_slot *u, int status, const char *msg)
{
	for (int k = 0; k < u->nwait; k++) {
		if (status == 200)
			rm_httpd_reply_blob(&srv.h, u->waiters[k], 200, "application/json", u->json);
		else
			rm_httpd_reply(&srv.h, u->waiters[k], status, NULL, msg, strlen(msg));
	}
	u->nwait = 0;
}

/* The answer of a slot whose readings are done, sent to every waiter. */
static void slot_done(struct usage_slot *u)
{
	struct rm_buf b = { 0 };

	rm_usage_end(&u->u, prog, USAGE_WINDOW, &b);
	rm_httpd_blob_put(u->json);
	u->json = NULL;
	u->state = S_IDLE;
	u->done_at = rm_now_mono();
	if (b.oom || b.len > USAGE_MAX_ANSWER || !(u->json = rm_httpd_blob_new(b.p, b.len))) {
		u->key[0] = '\0';
		slot_answer(u, 503, b.oom || b.len <= USAGE_MAX_ANSWER ? "out of memory\n" :
			    "answer too large: ask for fewer processes\n");
	} else {
		slot_answer(u, 200, NULL);
	}
	rm_buf_free(&b);   /* not kept: the answer is in the blob */
}

static void slot_fail(struct usage_slot *u, const char *msg)
{
	rm_usage_free(&u->u);
	u->state = S_IDLE;
	u->key[0] = '\0';
	slot_answer(u, msg[0] == 'c' ? 500 : 503, msg);
}

/*
 * One step of a slot's readings, until `until`: a queued slot starts its
 * scan, a scan goes on (the window starts when it is over), a window
 * that has passed has its second readings taken, and then its answer.
 */
static void slot_step(struct usage_slot *u, double until, double now)
{
	int r;

	switch (u->state) {
	case S_QUEUED:
		if (rm_usage_start(&u->u, u->pids, u->npids, srv.with_cmd, u->uid) < 0) {
			slot_fail(u, "cannot read the processes\n");
			return;
		}
		u->u.gpus = &gpus;      /* opened once, in serve_start */
		u->state = S_SCAN;
		/* fall through */
	case S_SCAN:
		r = rm_usage_scan(&u->u, until);
		if (r < 0) {
			slot_fail(u, "cannot read the processes\n");
			return;
		}
		if (r == 1) {
			u->state = S_WINDOW;
			u->end_at = rm_now_mono() + USAGE_WINDOW;
		}
		return;
	case S_WINDOW:
		if (now < u->end_at)
			return;
		u->state = S_READ;
		/* fall through */
	case S_READ:
		if (rm_usage_read(&u->u, until) == 1)
			slot_done(u);
		return;
	}
}

/* Read what is due, in steps that end before the next tick; wake again
 * for the rest: a window's end, or just after the next tick. */
static void usage_work(void)
{
	double next = 0;

	for (int i = 0; i < USAGE_SLOTS; i++) {
		struct usage_slot *u = &srv.slot[i];
		double now = rm_now_mono(), until;
		int due = u->state == S_QUEUED || u->state == S_SCAN || u->state == S_READ ||
			  (u->state == S_WINDOW && now >= u->end_at);
		if (!due) {
			if (u->state == S_WINDOW && (!next || u->end_at < next))
				next = u->end_at;
			continue;
		}
		if (now - u->asked_at > USAGE_GIVE_UP) {
			slot_fail(u, "busy: no time for a sample between the ticks\n");
			continue;
		}
		until = read_until();
		if (until > 0)
			slot_step(u, until, now);
		now = rm_now_mono();
		if (u->state == S_WINDOW) {
			if (!next || u->end_at < next)
				next = u->end_at;
		} else if (u->state != S_IDLE) {
			/* Not done: go on after the next tick (or at once). */
			double room = tick_room(), at = now + (room < 1e8 && room > 0 ? room : 0) + 0.002;
			srv.deferred++;
			if (!next || at < next)
				next = at;
		}
	}
	srv.h.wake_at = next;
}

static void usage_wake(void *arg, struct rm_httpd *h, double now)
{
	(void)arg;
	(void)h;
	(void)now;
	usage_work();
}

/* Whose processes this peer may see: what /proc would show it. */
static long peer_view(uint64_t tk, char *key, size_t size)
{
	struct rm_httpd_peer p;

	if (rm_httpd_peer(&srv.h, tk, &p) < 0)
		return RM_USAGE_NO_UID;
	snprintf(key, size, "%s", p.key);
	if (srv.hidepid <= 0 || (p.uid_known && p.uid == 0))
		return RM_USAGE_ANY_UID;
	return p.uid_known ? (long)p.uid : RM_USAGE_NO_UID;
}

static int serve_usage(uint64_t tk, const char *query)
{
	int pids[USAGE_MAX_PIDS], n = 0, m = 0;
	char val[32], key[sizeof(srv.slot[0].key)], pkey[64];
	size_t pos = 0, kl;
	struct usage_slot *u = NULL, *old = NULL;
	struct bucket *pb;
	double now = rm_now_mono();
	long uid;

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
	uid = peer_view(tk, pkey, sizeof(pkey));
	kl = (size_t)snprintf(key, sizeof(key), "%ld:", uid);
	for (int i = 0; i < n; i++)
		if (!i || pids[i] != pids[i - 1]) {
			kl += (size_t)snprintf(key + kl, sizeof(key) - kl, "%s%d",
					       m ? "," : "", pids[i]);
			pids[m++] = pids[i];
		}
	for (int i = 0; i < USAGE_SLOTS; i++) {
		struct usage_slot *c = &srv.slot[i];
		if (c->key[0] && strcmp(c->key, key) == 0)
			u = c;
		else if (c->state == S_IDLE && (!old || c->done_at < old->done_at))
			old = c;
	}
	if (u && u->state == S_IDLE && u->json && now - u->done_at < srv.o->min_age)
		return rm_httpd_reply_blob(&srv.h, tk, 200, "application/json", u->json), 0;
	if (!u || u->state == S_IDLE) {
		/* A new sample: within its peer's rate and everyone's. */
		pb = peer_bucket(pkey);
		if (!tokens_left(pb, PEER_RATE, PEER_BURST, now) ||
		    !tokens_left(&srv.all, ALL_RATE, ALL_BURST, now)) {
			srv.limited++;
			static const char msg[] = "too many new samples: try again later\n";
			return rm_httpd_reply_hdr(&srv.h, tk, 429, NULL, "Retry-After: 1\r\n",
						  msg, sizeof(msg) - 1), 0;
		}
		u = u ? u : old;
		if (!u)
			return rm_httpd_reply(&srv.h, tk, 503, NULL, "busy: too many samples under way\n", 33), 0;
		pb->tokens -= 1;
		srv.all.tokens -= 1;
		memcpy(u->key, key, kl + 1);
		memcpy(u->pids, pids, (size_t)m * sizeof(int));
		u->npids = m;
		u->uid = uid;
		u->state = S_QUEUED;
		u->asked_at = now;
		u->nwait = 0;
		rm_httpd_blob_put(u->json);
		u->json = NULL;
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
	usage_work();
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
	(void)loop;
	srv.with_cmd = o->expose_cmd;     /* on any address: loopback is every local user */
	srv.hidepid = rm_usage_hidepid();
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
		if (srv.slot[i].state != S_IDLE && srv.slot[i].state != S_QUEUED)
			rm_usage_free(&srv.slot[i].u);
		rm_httpd_blob_put(srv.slot[i].json);
		srv.slot[i].json = NULL;
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
