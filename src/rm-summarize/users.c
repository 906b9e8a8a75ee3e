/*
 * users.c: see users.h.  /etc/passwd is read whole on the first lookup
 * (at most 4 MiB) and kept as (uid, name) pairs; the first entry of a uid
 * wins, as getpwuid's files backend does.
 */
#include "users.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

#define PASSWD_MAX (4u << 20)

struct user {
	long uid;
	char *name;
};

static struct user *users;
static size_t nusers;
static int loaded;

static void users_free(void)
{
	for (size_t i = 0; i < nusers; i++)
		free(users[i].name);
	free(users);
}

/* One line, NAME:PASSWORD:UID:...; malformed lines are skipped. */
static void add_line(char *line, size_t *cap)
{
	char *c1 = strchr(line, ':'), *c2, *end;
	long uid;

	if (!c1 || c1 == line || !(c2 = strchr(c1 + 1, ':')) || c2[1] < '0' || c2[1] > '9')
		return;
	uid = strtol(c2 + 1, &end, 10);
	if (*end != ':' || uid < 0)
		return;
	if (nusers == *cap) {
		*cap = *cap ? *cap * 2 : 64;
		users = xrealloc(users, *cap * sizeof(*users));
	}
	users[nusers].uid = uid;
	users[nusers++].name = xstrndup(line, (size_t)(c1 - line));
}

static void load(void)
{
	char *buf = xmalloc(PASSWD_MAX + 1), *line, *next;
	size_t len = 0, cap = 0;
	ssize_t n = 0;
	int fd = open("/etc/passwd", O_RDONLY | O_CLOEXEC);

	loaded = 1;
	atexit(users_free);
	while (fd >= 0 && len < PASSWD_MAX && (n = read(fd, buf + len, PASSWD_MAX - len)) > 0)
		len += (size_t)n;
	if (fd >= 0)
		close(fd);
	buf[len] = '\0';
	for (line = buf; *line; line = next) {
		next = strchr(line, '\n');
		next = next ? (*next = '\0', next + 1) : line + strlen(line);
		add_line(line, &cap);
	}
	free(buf);
}

const char *user_name(long uid, char *buf, size_t size)
{
	if (!loaded)
		load();
	for (size_t i = 0; i < nusers; i++)
		if (users[i].uid == uid) {
			char clean[64];
			rm_sanitize(users[i].name, strlen(users[i].name), clean, sizeof(clean));
			snprintf(buf, size, "%s", clean);
			return buf;
		}
	snprintf(buf, size, "%ld", uid);
	return buf;
}
