/*
 * gpu: see gpu.h.  The NVML declarations follow NVIDIA's published
 * header (see nvml-abi.md): enums are int-sized, structs naturally
 * aligned, no calling-convention decoration on Linux.
 */
#include <dirent.h>
#ifndef RM_STATIC
#include <dlfcn.h>
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpu.h"
#include "procfs.h"
#include "text.h"

typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct { unsigned int gpu, memory; } nvmlUtilization_t;
typedef struct { unsigned long long total, free, used; } nvmlMemory_t;
typedef struct {
	unsigned int version;
	unsigned long long total, reserved, free, used;
} nvmlMemory_v2_t;

/* sizeof(nvmlMemory_v2_t) | 2 << 24; the bare value 2 is refused. */
#define NVML_MEMORY_V2_VERSION 0x02000028u
#define NVML_SUCCESS 0
#define NVML_ERROR_NO_PERMISSION 4
#define NVML_TEMPERATURE_GPU 0

_Static_assert(sizeof(nvmlMemory_v2_t) == 40, "nvmlMemory_v2_t is 40 bytes");
_Static_assert((sizeof(nvmlMemory_v2_t) | 2u << 24) == NVML_MEMORY_V2_VERSION,
	       "the v2 version constant is the size and version 2");

/* One NVML per process: the library's own state is global too. */
static struct {
	void *dl;
	int up;                 /* nvmlInit succeeded, shutdown still owed */
	nvmlReturn_t (*init)(void);
	nvmlReturn_t (*shutdown)(void);
	const char *(*error_string)(nvmlReturn_t);
	nvmlReturn_t (*count)(unsigned int *);
	nvmlReturn_t (*handle)(unsigned int, nvmlDevice_t *);
	nvmlReturn_t (*util)(nvmlDevice_t, nvmlUtilization_t *);
	nvmlReturn_t (*mem)(nvmlDevice_t, nvmlMemory_t *);
	nvmlReturn_t (*mem_v2)(nvmlDevice_t, nvmlMemory_v2_t *);
	nvmlReturn_t (*power)(nvmlDevice_t, unsigned int *);
	nvmlReturn_t (*temp)(nvmlDevice_t, int, unsigned int *);
} nv;

int rm_gpu_is_card(const char *name)
{
	const char *p;

	if (strncmp(name, "card", 4) != 0 || !name[4])
		return 0;
	for (p = name + 4; *p; p++)
		if (*p < '0' || *p > '9')
			return 0;
	return 1;
}

/* Split "prefix123" into the prefix length and the number. */
static size_t split_num(const char *s, unsigned long *num)
{
	size_t n = strlen(s), i = n;

	while (i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9')
		i--;
	*num = i < n ? strtoul(s + i, NULL, 10) : 0;
	return i;
}

int rm_gpu_card_cmp(const char *a, const char *b)
{
	unsigned long na, nb;
	size_t pa = split_num(a, &na), pb = split_num(b, &nb);
	int nva = strncmp(a, "nvidia", 6) == 0, nvb = strncmp(b, "nvidia", 6) == 0;
	int c;

	if (nva != nvb)
		return nva - nvb;
	c = strncmp(a, b, pa < pb ? pa : pb);
	if (c || pa != pb)
		return c ? c : (pa < pb ? -1 : 1);
	if (na != nb)
		return na < nb ? -1 : 1;
	return strcmp(a, b);
}

void rm_gpu_aggregate(const struct rm_gpu_reading *r, int n, struct rm_gpu_agg *a)
{
	const unsigned both = RM_GPU_VRAM_USED | RM_GPU_VRAM_TOTAL;

	memset(a, 0, sizeof(*a));
	for (int i = 0; i < n; i++) {
		if (r[i].has & RM_GPU_BUSY) {
			if (!(a->has & RM_GPU_BUSY) || r[i].busy_pct > a->busy_max)
				a->busy_max = r[i].busy_pct;
			a->has |= RM_GPU_BUSY;
		}
		if ((r[i].has & both) == both) {
			a->vram_used += r[i].vram_used;
			a->vram_total += r[i].vram_total;
			a->has |= both;
		}
	}
}

static int card_sort(const void *x, const void *y)
{
	const struct rm_gpu_card *a = x, *b = y;

	return rm_gpu_card_cmp(a->card, b->card);
}

/* The basename of card/device/driver, sanitized; "" without one. */
static void read_driver(int fd, const char *card, char *out, size_t size)
{
	char path[96], link[512];
	const char *base;
	ssize_t n;

	out[0] = '\0';
	if (rm_pathf(path, sizeof(path), "%s/device/driver", card) < 0)
		return;
	n = readlinkat(fd, path, link, sizeof(link) - 1);
	if (n <= 0)
		return;
	link[n] = '\0';
	base = strrchr(link, '/');
	base = base ? base + 1 : link;
	rm_sanitize(base, strlen(base), out, size);
}

/* The lowest-numbered hwmonN below card/device/hwmon, into out. */
static void find_hwmon(int fd, const char *card, char *out, size_t size)
{
	char path[96];
	struct dirent *de;
	unsigned long best = 0;
	int found = 0, dfd;
	DIR *d;

	out[0] = '\0';
	if (rm_pathf(path, sizeof(path), "%s/device/hwmon", card) < 0)
		return;
	dfd = openat(fd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return;
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		unsigned long num;
		char *end;

		if (strncmp(de->d_name, "hwmon", 5) != 0 || de->d_name[5] < '0' || de->d_name[5] > '9')
			continue;
		num = strtoul(de->d_name + 5, &end, 10);
		if (*end || (found && num >= best))
			continue;
		if (rm_pathf(out, size, "%s/%s", path, de->d_name) < 0) {
			out[0] = '\0';
			continue;
		}
		best = num;
		found = 1;
	}
	closedir(d);
}

#ifdef RM_STATIC
/* A static binary cannot load NVML: dlopen in a static glibc program
 * needs that very glibc's shared libraries at run time, which a foreign
 * image does not have.  Said, never tried. */
static void nvml_open(struct rm_gpus *g)
{
	g->nvml = RM_NVML_STATIC;
	snprintf(g->nvml_msg, sizeof(g->nvml_msg),
		 "not in a static build (make STATIC=1): NVIDIA GPUs need the dynamic rm-gpu");
}
#else
static void nvml_fail(struct rm_gpus *g, enum rm_nvml_state st, nvmlReturn_t ret, const char *what)
{
	const char *s = nv.error_string ? nv.error_string(ret) : NULL;

	g->nvml = st;
	g->nvml_ret = ret;
	snprintf(g->nvml_msg, sizeof(g->nvml_msg), "%s: %s", what, s ? s : "error");
}

static void *sym(const char *name, const char *old)
{
	void *p = dlsym(nv.dl, name);

	if (!p && old)
		p = dlsym(nv.dl, old);
	return p;
}

/* Load NVML and add a card per device index it lets us open. */
static void nvml_open(struct rm_gpus *g)
{
	const char *path = getenv("RM_NVML_LIB");
	unsigned int count = 0;
	nvmlReturn_t ret;

	if (!path || !*path)
		path = "libnvidia-ml.so.1";
	nv.dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!nv.dl) {
		const char *e = dlerror();
		g->nvml = RM_NVML_ABSENT;
		snprintf(g->nvml_msg, sizeof(g->nvml_msg), "%s", e ? e : path);
		return;
	}
	*(void **)&nv.init = sym("nvmlInit_v2", "nvmlInit");
	*(void **)&nv.shutdown = sym("nvmlShutdown", NULL);
	*(void **)&nv.error_string = sym("nvmlErrorString", NULL);
	*(void **)&nv.count = sym("nvmlDeviceGetCount_v2", "nvmlDeviceGetCount");
	*(void **)&nv.handle = sym("nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex");
	*(void **)&nv.util = sym("nvmlDeviceGetUtilizationRates", NULL);
	*(void **)&nv.mem = sym("nvmlDeviceGetMemoryInfo", NULL);
	*(void **)&nv.mem_v2 = sym("nvmlDeviceGetMemoryInfo_v2", NULL);
	*(void **)&nv.power = sym("nvmlDeviceGetPowerUsage", NULL);
	*(void **)&nv.temp = sym("nvmlDeviceGetTemperature", NULL);
	if (!nv.init || !nv.shutdown || !nv.count || !nv.handle) {
		g->nvml = RM_NVML_BROKEN;
		snprintf(g->nvml_msg, sizeof(g->nvml_msg), "%s: no nvmlInit, nvmlShutdown or device calls", path);
		dlclose(nv.dl);
		memset(&nv, 0, sizeof(nv));
		return;
	}
	ret = nv.init();
	if (ret != NVML_SUCCESS) {
		nvml_fail(g, RM_NVML_INIT_FAILED, ret, "nvmlInit");
		return;
	}
	nv.up = 1;
	ret = nv.count(&count);
	if (ret != NVML_SUCCESS) {
		nvml_fail(g, RM_NVML_INIT_FAILED, ret, "nvmlDeviceGetCount");
		return;
	}
	g->nvml = RM_NVML_OK;
	for (unsigned int i = 0; i < count && g->n < RM_GPU_MAX; i++) {
		struct rm_gpu_card *c = &g->card[g->n];
		nvmlDevice_t dev = NULL;

		ret = nv.handle(i, &dev);
		/* Counted but not ours to open (another container's, or a
		 * device node we may not read): skip, do not fail. */
		if (ret == NVML_ERROR_NO_PERMISSION) {
			g->nvml_skipped++;
			continue;
		}
		memset(c, 0, sizeof(*c));
		for (int k = 0; k < RM_GPU_NFILES; k++)
			c->fd[k] = -2;
		snprintf(c->card, sizeof(c->card), "nvidia%u", i);
		strcpy(c->driver, "nvidia");
		c->src = RM_GPU_SRC_NVML;
		c->nvml_dev = ret == NVML_SUCCESS ? dev : NULL;
		g->n++;
	}
}
#endif

int rm_gpu_open(struct rm_gpus *g)
{
	char path[4096];
	struct rm_gpu_card *c;
	struct dirent *de;
	DIR *d = NULL;
	int fd;

	memset(g, 0, sizeof(*g));
	g->drm_fd = -1;
	nvml_open(g);
	if (rm_pathf(path, sizeof(path), "%s/class/drm", rm_sys_root()) == 0)
		g->drm_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (g->drm_fd >= 0 && (fd = dup(g->drm_fd)) >= 0 && !(d = fdopendir(fd)))
		close(fd);
	while (d && (de = readdir(d)) != NULL && g->n < RM_GPU_MAX) {
		if (!rm_gpu_is_card(de->d_name) || strlen(de->d_name) >= sizeof(c->card))
			continue;
		c = &g->card[g->n];
		memset(c, 0, sizeof(*c));
		for (int k = 0; k < RM_GPU_NFILES; k++)
			c->fd[k] = -1;
		strcpy(c->card, de->d_name);
		read_driver(g->drm_fd, c->card, c->driver, sizeof(c->driver));
		/* With NVML up, an NVIDIA GPU is its NVML row, not this one. */
		if (g->nvml == RM_NVML_OK && strcmp(c->driver, "nvidia") == 0)
			continue;
		if (strcmp(c->driver, "amdgpu") == 0) {
			c->src = RM_GPU_SRC_AMDGPU;
			find_hwmon(g->drm_fd, c->card, c->hwmon, sizeof(c->hwmon));
		}
		g->n++;
	}
	if (d)
		closedir(d);
	/* NVML rows were added first; sort puts drm cards before them. */
	qsort(g->card, (size_t)g->n, sizeof(g->card[0]), card_sort);
	return g->n;
}

/*
 * One unsigned number from file k of card c (dir/file below class/drm):
 * opened once, then re-read from offset 0.  0, or -1 when it is absent,
 * unreadable or not a number.
 */
static int read_num(const struct rm_gpus *g, struct rm_gpu_card *c, int k,
		    const char *dir, const char *file, uint64_t *v)
{
	char path[192], buf[64];
	ssize_t n;

	if (c->fd[k] == -2)
		return -1;
	if (c->fd[k] == -1) {
		if (rm_pathf(path, sizeof(path), "%s/%s", dir, file) < 0)
			c->fd[k] = -2;
		else
			c->fd[k] = openat(g->drm_fd, path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
		if (c->fd[k] < 0) {
			c->fd[k] = -2;
			return -1;
		}
	}
	do
		n = pread(c->fd[k], buf, sizeof(buf) - 1, 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return rm_parse_u64(buf, v);
}

static void read_amdgpu(const struct rm_gpus *g, struct rm_gpu_card *c, unsigned want,
			struct rm_gpu_reading *r)
{
	static const struct { const char *file; unsigned bit; int k; } mem[] = {
		{ "mem_info_vram_used", RM_GPU_VRAM_USED, RM_GPU_F_VRAM_USED },
		{ "mem_info_vram_total", RM_GPU_VRAM_TOTAL, RM_GPU_F_VRAM_TOTAL },
		{ "mem_info_gtt_used", RM_GPU_GTT_USED, RM_GPU_F_GTT_USED },
		{ "mem_info_gtt_total", RM_GPU_GTT_TOTAL, RM_GPU_F_GTT_TOTAL },
	};
	uint64_t *dst[] = { &r->vram_used, &r->vram_total, &r->gtt_used, &r->gtt_total };
	char dev[48];
	uint64_t v;

	if (rm_pathf(dev, sizeof(dev), "%s/device", c->card) < 0)
		return;
	if ((want & RM_GPU_BUSY) &&
	    read_num(g, c, RM_GPU_F_BUSY, dev, "gpu_busy_percent", &v) == 0 && v <= 100) {
		r->busy_pct = (double)v;
		r->has |= RM_GPU_BUSY;
	}
	for (size_t i = 0; i < sizeof(mem) / sizeof(mem[0]); i++) {
		if ((want & mem[i].bit) && read_num(g, c, mem[i].k, dev, mem[i].file, dst[i]) == 0)
			r->has |= mem[i].bit;
	}
	if (!c->hwmon[0])
		return;
	/* power1_average where the GPU has it; newer ones only power1_input. */
	if ((want & RM_GPU_POWER) &&
	    (read_num(g, c, RM_GPU_F_POWER_AVG, c->hwmon, "power1_average", &v) == 0 ||
	     read_num(g, c, RM_GPU_F_POWER_IN, c->hwmon, "power1_input", &v) == 0)) {
		r->power_w = (double)v / 1e6;
		r->has |= RM_GPU_POWER;
	}
	if ((want & RM_GPU_TEMP) && read_num(g, c, RM_GPU_F_TEMP, c->hwmon, "temp1_input", &v) == 0) {
		r->temp_c = (double)v / 1000.0;
		r->has |= RM_GPU_TEMP;
	}
}

static void read_nvml(const struct rm_gpu_card *c, unsigned want, struct rm_gpu_reading *r)
{
	nvmlDevice_t dev = c->nvml_dev;
	nvmlUtilization_t u;
	nvmlMemory_v2_t m2;
	nvmlMemory_t m1;
	unsigned int v;

	if (!dev || !nv.up)
		return;
	if ((want & RM_GPU_BUSY) && nv.util && nv.util(dev, &u) == NVML_SUCCESS && u.gpu <= 100) {
		r->busy_pct = u.gpu;
		r->has |= RM_GPU_BUSY;
	}
	/* v2 reports used without the driver's reservation, as nvidia-smi
	 * does; v1's used includes it. */
	memset(&m2, 0, sizeof(m2));
	m2.version = NVML_MEMORY_V2_VERSION;
	if (!(want & (RM_GPU_VRAM_USED | RM_GPU_VRAM_TOTAL))) {
		/* not asked */
	} else if (nv.mem_v2 && nv.mem_v2(dev, &m2) == NVML_SUCCESS) {
		r->vram_used = m2.used;
		r->vram_total = m2.total;
		r->has |= RM_GPU_VRAM_USED | RM_GPU_VRAM_TOTAL;
	} else if (nv.mem && nv.mem(dev, &m1) == NVML_SUCCESS) {
		r->vram_used = m1.used;
		r->vram_total = m1.total;
		r->has |= RM_GPU_VRAM_USED | RM_GPU_VRAM_TOTAL;
	}
	if ((want & RM_GPU_POWER) && nv.power && nv.power(dev, &v) == NVML_SUCCESS) {
		r->power_w = v / 1000.0;
		r->has |= RM_GPU_POWER;
	}
	if ((want & RM_GPU_TEMP) && nv.temp && nv.temp(dev, NVML_TEMPERATURE_GPU, &v) == NVML_SUCCESS) {
		r->temp_c = v;
		r->has |= RM_GPU_TEMP;
	}
}

void rm_gpu_read(struct rm_gpus *g, int i, unsigned want, struct rm_gpu_reading *r)
{
	struct rm_gpu_card *c = &g->card[i];

	memset(r, 0, sizeof(*r));
	if (c->src == RM_GPU_SRC_AMDGPU)
		read_amdgpu(g, c, want, r);
	else if (c->src == RM_GPU_SRC_NVML)
		read_nvml(c, want, r);
}

void rm_gpu_close(struct rm_gpus *g)
{
	if (nv.up) {
		nv.shutdown();
		nv.up = 0;
	}
	/* NVML is not dlclosed: its threads may outlive shutdown. */
	for (int i = 0; i < g->n; i++)
		for (int k = 0; k < RM_GPU_NFILES; k++)
			if (g->card[i].fd[k] >= 0)
				close(g->card[i].fd[k]);
	if (g->drm_fd >= 0)
		close(g->drm_fd);
	g->drm_fd = -1;
	g->n = 0;
}
