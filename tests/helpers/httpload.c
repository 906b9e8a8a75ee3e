/*
 * httpload: a bounded HTTP load and abuse client for rm-sample --listen
 * tests, on one thread with poll.  It always stops by itself: after
 * COUNT requests or SEC seconds, whichever comes first.
 *
 *   httpload [-c CONC] [-n COUNT] [-t SEC] [-p PATH]... PORT
 *       COUNT GETs (each on a new connection, Connection: close) from
 *       CONC concurrent clients, the PATHs in turn (default /metrics);
 *       prints "requests N ok N errors N p50_ms X p99_ms X max_ms X
 *       elapsed_s X" and exits 0 when every request got a 200.
 *   httpload -S N [-t SEC] PORT
 *       slowloris: opens N connections, sends half a request on each,
 *       prints "held N" and stays silent for SEC seconds.
 *   httpload -B BYTES PORT
 *       sends a request whose header holds BYTES bytes and prints the
 *       status the server answered ("none" when it answered nothing).
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAXC 1024

static int port;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int dial(int nonblock)
{
	struct sockaddr_in a;
	int fd = socket(AF_INET, SOCK_STREAM | (nonblock ? SOCK_NONBLOCK : 0), 0);

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)port);
	a.sin_addr.s_addr = htonl(0x7f000001);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0 && errno != EINPROGRESS) {
		close(fd);
		return -1;
	}
	return fd;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

struct client {
	int fd;
	int sent;            /* request written */
	double t0;
	char req[512];
	size_t rlen, off;
	char head[16];
	size_t hlen;
};

static int load(int conc, long count, double limit, char **paths, int npaths)
{
	static struct client c[MAXC];
	static struct pollfd p[MAXC];
	double *lat = malloc((size_t)count * sizeof(double));
	double start = now();
	long started = 0, done = 0, ok = 0, errs = 0;

	if (!lat)
		return 2;
	for (int i = 0; i < conc; i++)
		c[i].fd = -1;
	while (done < count && now() - start < limit) {
		int n = 0;
		for (int i = 0; i < conc; i++) {
			if (c[i].fd < 0 && started < count) {
				const char *path = paths[started % npaths];
				c[i].fd = dial(1);
				started++;
				if (c[i].fd < 0) {
					errs++;
					done++;
					continue;
				}
				c[i].t0 = now();
				c[i].sent = 0;
				c[i].off = 0;
				c[i].hlen = 0;
				c[i].rlen = (size_t)snprintf(c[i].req, sizeof(c[i].req),
					"GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", path);
			}
			p[i].fd = c[i].fd;
			p[i].events = c[i].fd < 0 ? 0 : c[i].sent ? POLLIN : POLLOUT;
			p[i].revents = 0;
			n += c[i].fd >= 0;
		}
		if (!n)
			break;
		if (poll(p, (nfds_t)conc, 100) < 0 && errno != EINTR)
			break;
		for (int i = 0; i < conc; i++) {
			struct client *k = &c[i];
			char buf[4096];
			ssize_t r;
			if (k->fd < 0 || !p[i].revents)
				continue;
			if (!k->sent) {
				r = send(k->fd, k->req + k->off, k->rlen - k->off, MSG_NOSIGNAL);
				if (r > 0 && (k->off += (size_t)r) == k->rlen)
					k->sent = 1;
				if (r > 0 || errno == EAGAIN)
					continue;
			} else {
				r = read(k->fd, buf, sizeof(buf));
				if (r < 0 && errno == EAGAIN)
					continue;
				if (r > 0) {
					size_t m = (size_t)r < sizeof(k->head) - 1 - k->hlen ?
						(size_t)r : sizeof(k->head) - 1 - k->hlen;
					memcpy(k->head + k->hlen, buf, m);
					k->hlen += m;
					continue;
				}
			}
			/* EOF or an error: the request is over. */
			k->head[k->hlen] = '\0';
			if (r == 0 && strncmp(k->head, "HTTP/1.1 200 ", 13) == 0) {
				lat[ok++] = (now() - k->t0) * 1000.0;
			} else {
				if (errs++ < 3)
					fprintf(stderr, "httpload: request %ld: %s\n", done,
						r < 0 ? strerror(errno) : k->hlen ? k->head : "no answer");
			}
			done++;
			close(k->fd);
			k->fd = -1;
		}
	}
	for (int i = 0; i < conc; i++)
		if (c[i].fd >= 0)
			close(c[i].fd);
	qsort(lat, (size_t)ok, sizeof(double), cmp_d);
	printf("requests %ld ok %ld errors %ld p50_ms %.2f p99_ms %.2f max_ms %.2f elapsed_s %.2f\n",
	       done, ok, errs + (count - done), ok ? lat[ok / 2] : 0, ok ? lat[(ok * 99) / 100] : 0,
	       ok ? lat[ok - 1] : 0, now() - start);
	free(lat);
	return ok == count ? 0 : 1;
}

static int slowloris(int n, double hold)
{
	static int fds[4096];
	int held = 0;

	for (int i = 0; i < n && i < 4096; i++) {
		fds[i] = dial(0);
		if (fds[i] < 0)
			continue;
		if (write(fds[i], "GET /metrics HTTP/1.1\r\nHost: x\r\n", 32) == 32)
			held++;
	}
	printf("held %d\n", held);
	fflush(stdout);
	{
		struct timespec ts = { (time_t)hold, (long)((hold - (double)(time_t)hold) * 1e9) };
		nanosleep(&ts, NULL);
	}
	for (int i = 0; i < n && i < 4096; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	return held == n ? 0 : 1;
}

static int bigheader(long bytes)
{
	char chunk[65536], resp[64] = "";
	int fd = dial(0);
	long left = bytes;
	ssize_t r;
	const char *h = "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: ";
	struct timeval tv = { 10, 0 };

	if (fd < 0)
		return 2;
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	memset(chunk, 'a', sizeof(chunk));
	if (send(fd, h, strlen(h), MSG_NOSIGNAL) < 0)
		left = 0;
	while (left > 0) {
		r = send(fd, chunk, left < (long)sizeof(chunk) ? (size_t)left : sizeof(chunk), MSG_NOSIGNAL);
		if (r <= 0)
			break;   /* the server ended it: read what it said */
		left -= r;
	}
	if (left <= 0)
		send(fd, "\r\n\r\n", 4, MSG_NOSIGNAL);
	r = read(fd, resp, sizeof(resp) - 1);
	close(fd);
	if (r >= 12 && strncmp(resp, "HTTP/1.1 ", 9) == 0) {
		printf("%.3s\n", resp + 9);
		return 0;
	}
	printf("none\n");
	return 1;
}

int main(int argc, char **argv)
{
	char *paths[64];
	int npaths = 0, conc = 1, sl = 0, opt;
	long count = 1, big = 0;
	double limit = 60;

	while ((opt = getopt(argc, argv, "c:n:t:p:S:B:")) != -1) {
		switch (opt) {
		case 'c': conc = atoi(optarg); break;
		case 'n': count = atol(optarg); break;
		case 't': limit = atof(optarg); break;
		case 'p': if (npaths < 64) paths[npaths++] = optarg; break;
		case 'S': sl = atoi(optarg); break;
		case 'B': big = atol(optarg); break;
		default: return 2;
		}
	}
	if (optind != argc - 1 || conc < 1 || conc > MAXC || count < 1) {
		fprintf(stderr, "usage: httpload [-c CONC] [-n COUNT] [-t SEC] [-p PATH]... PORT\n"
			"       httpload -S N [-t SEC] PORT | httpload -B BYTES PORT\n");
		return 2;
	}
	port = atoi(argv[optind]);
	if (sl)
		return slowloris(sl, limit);
	if (big)
		return bigheader(big);
	if (!npaths)
		paths[npaths++] = "/metrics";
	return load(conc, count, limit, paths, npaths);
}
