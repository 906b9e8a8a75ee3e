/*
 * energy: see energy.h.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "energy.h"
#include "procfs.h"
#include "text.h"

int rm_rapl_id_parse(const char *dname, struct rm_rapl_id *id)
{
	static const char msr[] = "intel-rapl", mmio[] = "intel-rapl-mmio";
	const char *p;

	memset(id, 0, sizeof(*id));
	if (strncmp(dname, mmio, sizeof(mmio) - 1) == 0 && dname[sizeof(mmio) - 1] == ':') {
		id->mmio = 1;
		p = dname + sizeof(mmio) - 1;
	} else if (strncmp(dname, msr, sizeof(msr) - 1) == 0 && dname[sizeof(msr) - 1] == ':') {
		p = dname + sizeof(msr) - 1;
	} else {
		return -1;
	}
	while (*p == ':') {
		unsigned v = 0;
		int digits = 0;

		if (id->depth == RM_RAPL_DEPTH)
			return -1;
		for (p++; (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'); p++) {
			if (++digits > 8)
				return -1;
			v = v * 16 + (unsigned)(*p <= '9' ? *p - '0' : *p - 'a' + 10);
		}
		if (!digits)
			return -1;
		id->idx[id->depth++] = v;
	}
	return *p ? -1 : 0;
}

int rm_rapl_id_cmp(const struct rm_rapl_id *a, const struct rm_rapl_id *b)
{
	if (a->mmio != b->mmio)
		return a->mmio - b->mmio;
	for (int i = 0; i < a->depth && i < b->depth; i++)
		if (a->idx[i] != b->idx[i])
			return a->idx[i] < b->idx[i] ? -1 : 1;
	return a->depth - b->depth;
}

enum rm_rapl_kind rm_rapl_kind_of(const char *name, int depth)
{
	if (depth == 1 && strncmp(name, "package-", 8) == 0)
		return RM_RAPL_PACKAGE;
	if (strcmp(name, "dram") == 0)
		return RM_RAPL_DRAM;
	if (strcmp(name, "psys") == 0)
		return RM_RAPL_PSYS;
	return RM_RAPL_OTHER;
}

int rm_rapl_delta(uint64_t prev, uint64_t now, uint64_t max, uint64_t *delta)
{
	if (now >= prev) {
		*delta = now - prev;
		return 0;
	}
	if (max == 0 || prev > max)
		return -1;
	*delta = now + (max - prev);
	return 0;
}

int rm_rapl_zone_feed(struct rm_rapl_zone *z, int ok, uint64_t now, uint64_t *delta)
{
	int known;

	if (!ok)
		return 0;
	known = z->has_prev && rm_rapl_delta(z->prev_uj, now, z->has_max ? z->max_uj : 0, delta) == 0;
	z->prev_uj = now;
	z->has_prev = 1;
	return known;
}

static int zone_cmp(const void *a, const void *b)
{
	const struct rm_rapl_zone *x = a, *y = b;

	return rm_rapl_id_cmp(&x->id, &y->id);
}

void rm_rapl_finish(struct rm_rapl *r)
{
	int i, j, k = 0;

	for (i = 0; i < r->n; i++) {
		int dup = 0;

		if (r->z[i].id.mmio && r->z[i].name[0]) {
			for (j = 0; j < r->n && !dup; j++)
				dup = !r->z[j].id.mmio && r->z[j].id.depth == r->z[i].id.depth &&
				      strcmp(r->z[j].name, r->z[i].name) == 0 &&
				      strcmp(r->z[j].parent, r->z[i].parent) == 0;
		}
		if (!dup)
			r->z[k++] = r->z[i];
	}
	r->n = k;
	if (r->n > 1)
		qsort(r->z, (size_t)r->n, sizeof(r->z[0]), zone_cmp);
	r->npkg = r->ndram = 0;
	for (i = 0; i < r->n; i++) {
		if (r->z[i].kind == RM_RAPL_PACKAGE)
			r->npkg++;
		else if (r->z[i].kind == RM_RAPL_DRAM)
			r->ndram++;
	}
}

static int find_zone(const struct rm_rapl *r, const char *zone)
{
	for (int i = 0; i < r->n; i++)
		if (strcmp(r->z[i].zone, zone) == 0)
			return i;
	return -1;
}

/* Add a zone by directory name and path; 0, or -1 on a bad name or ENOMEM. */
static int add_zone(struct rm_rapl *r, const char *dname, const char *rel)
{
	struct rm_rapl_zone *z;
	struct rm_rapl_id id;

	if (rm_rapl_id_parse(dname, &id) < 0 || find_zone(r, dname) >= 0)
		return -1;
	if (strlen(dname) >= sizeof(z->zone) || strlen(rel) >= sizeof(z->rel))
		return -1;
	if (r->n == r->cap) {
		int cap = r->cap ? r->cap * 2 : 16;
		void *p = realloc(r->z, (size_t)cap * sizeof(*r->z));
		if (!p)
			return -1;
		r->z = p;
		r->cap = cap;
	}
	z = &r->z[r->n++];
	memset(z, 0, sizeof(*z));
	strcpy(z->zone, dname);
	strcpy(z->rel, rel);
	z->id = id;
	return 0;
}

/* Subzones that sit only inside their parent's directory. */
static void scan_children(struct rm_rapl *r, int parent)
{
	char rel[sizeof(r->z[0].rel)];
	struct dirent *de;
	DIR *d;
	int fd;

	fd = openat(r->dirfd, r->z[parent].rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		size_t plen = strlen(r->z[parent].zone);
		/* A child is the parent's name plus one ":HEX". */
		if (strncmp(de->d_name, r->z[parent].zone, plen) != 0 || de->d_name[plen] != ':')
			continue;
		if (rm_pathf(rel, sizeof(rel), "%s/%s", r->z[parent].rel, de->d_name) < 0)
			continue;
		add_zone(r, de->d_name, rel);
	}
	closedir(d);
}

/* The name file, sanitized; "" when it cannot be read. */
static void read_name(int dirfd, const char *rel, char *out, size_t size)
{
	char path[256], buf[128];
	ssize_t n;

	out[0] = '\0';
	if (rm_pathf(path, sizeof(path), "%s/name", rel) < 0)
		return;
	n = rm_read_at(dirfd, path, buf, sizeof(buf));
	if (n <= 0)
		return;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		n--;
	rm_sanitize(buf, (size_t)n, out, size);
}

static int read_u64_at(int dirfd, const char *rel, const char *file, uint64_t *v)
{
	char path[256], buf[64];

	if (rm_pathf(path, sizeof(path), "%s/%s", rel, file) < 0)
		return -1;
	if (rm_read_at(dirfd, path, buf, sizeof(buf)) < 0)
		return -1;
	return rm_parse_u64(buf, v);
}

int rm_rapl_open(struct rm_rapl *r)
{
	char path[4096];
	struct dirent *de;
	DIR *d;
	int fd, i;

	memset(r, 0, sizeof(*r));
	r->dirfd = -1;
	r->err_zone = -1;
	if (rm_pathf(path, sizeof(path), "%s/class/powercap", rm_sys_root()) < 0)
		return -1;
	r->dirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (r->dirfd < 0)
		return -1;
	fd = dup(r->dirfd);
	if (fd < 0 || !(d = fdopendir(fd))) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		rm_rapl_close(r);
		errno = e;
		return -1;
	}
	while ((de = readdir(d)) != NULL)
		add_zone(r, de->d_name, de->d_name);
	closedir(d);
	/* Grows while it runs: children found here are scanned in turn. */
	for (i = 0; i < r->n; i++)
		scan_children(r, i);
	for (i = 0; i < r->n; i++) {
		struct rm_rapl_zone *z = &r->z[i];
		read_name(r->dirfd, z->rel, z->name, sizeof(z->name));
		z->has_max = read_u64_at(r->dirfd, z->rel, "max_energy_range_uj", &z->max_uj) == 0;
		z->kind = rm_rapl_kind_of(z->name, z->id.depth);
	}
	for (i = 0; i < r->n; i++) {
		struct rm_rapl_zone *z = &r->z[i];
		char pz[sizeof(z->zone)];
		char *colon;
		int p;

		if (z->id.depth < 2)
			continue;
		strcpy(pz, z->zone);
		colon = strrchr(pz, ':');
		*colon = '\0';
		p = find_zone(r, pz);
		if (p >= 0)
			strcpy(z->parent, r->z[p].name);
	}
	rm_rapl_finish(r);
	return r->n;
}

void rm_rapl_close(struct rm_rapl *r)
{
	if (r->dirfd >= 0)
		close(r->dirfd);
	free(r->z);
	r->z = NULL;
	r->n = r->cap = 0;
	r->dirfd = -1;
}

int rm_rapl_read(const struct rm_rapl *r, int i, uint64_t *uj)
{
	return read_u64_at(r->dirfd, r->z[i].rel, "energy_uj", uj);
}

int rm_rapl_sample(struct rm_rapl *r, struct rm_rapl_step *s)
{
	struct timespec ts;
	int pkg_seen = 0, dram_seen = 0;

	memset(s, 0, sizeof(*s));
	s->pkg_ok = s->dram_ok = 1;
	for (int i = 0; i < r->n; i++) {
		struct rm_rapl_zone *z = &r->z[i];
		uint64_t now = 0, d = 0;
		int ok, known;

		if (z->kind != RM_RAPL_PACKAGE && z->kind != RM_RAPL_DRAM)
			continue;
		ok = rm_rapl_read(r, i, &now) == 0;
		if (!ok && errno == EACCES) {
			r->err_zone = i;
			return -1;
		}
		known = rm_rapl_zone_feed(z, ok, now, &d);
		if (z->kind == RM_RAPL_PACKAGE) {
			pkg_seen = 1;
			s->pkg_ok &= known;
			s->pkg_uj += d;
		} else {
			dram_seen = 1;
			s->dram_ok &= known;
			s->dram_uj += d;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	s->mono = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	s->pkg_ok &= pkg_seen;
	s->dram_ok &= dram_seen;
	return 0;
}

int rm_rapl_path(const struct rm_rapl *r, int i, const char *file, char *buf, size_t size)
{
	return rm_pathf(buf, size, "%s/class/powercap/%s/%s", rm_sys_root(), r->z[i].rel, file);
}
