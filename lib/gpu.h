/*
 * gpu: load, memory, power and temperature of each GPU.  Cards are the
 * RM_SYS_ROOT/class/drm/cardN entries (not connectors like card0-DP-1,
 * not renderD*), their driver the basename of device/driver.  amdgpu is
 * read from its sysfs files (device/gpu_busy_percent, mem_info_* in
 * bytes) and its hwmon (power1_average, else power1_input, in microwatts;
 * temp1_input in millidegrees).  NVIDIA GPUs are read through NVML,
 * loaded with dlopen("libnvidia-ml.so.1") (RM_NVML_LIB overrides the
 * path; a static build, make STATIC=1, has no NVML) and named nvidiaN by NVML index; when NVML is up, NVML is the one
 * source for NVIDIA GPUs and the drm cards of the nvidia driver are not
 * listed again.  Any other driver is a card without readings.
 *
 * Every reading that fails or is not supported is flagged unknown, never
 * 0.  NVML is initialised once in rm_gpu_open and shut down once in
 * rm_gpu_close.  A sysfs file is opened on its first read and re-read
 * with pread at offset 0 after that (sysfs regenerates an attribute on
 * every read from the start), so a tick costs one system call per value.  Pure functions (card names, order, the monitor's
 * aggregate) sit under the readers so they can be tested on values.
 */
#ifndef RM_GPU_H
#define RM_GPU_H

#include <stdint.h>

#define RM_GPU_MAX 64

/* Bits of rm_gpu_reading.has. */
enum {
	RM_GPU_BUSY = 1 << 0,
	RM_GPU_VRAM_USED = 1 << 1,
	RM_GPU_VRAM_TOTAL = 1 << 2,
	RM_GPU_GTT_USED = 1 << 3,
	RM_GPU_GTT_TOTAL = 1 << 4,
	RM_GPU_POWER = 1 << 5,
	RM_GPU_TEMP = 1 << 6,
	RM_GPU_ALL = (1 << 7) - 1,
};

/* The sysfs files a card keeps open. */
enum { RM_GPU_F_BUSY, RM_GPU_F_VRAM_USED, RM_GPU_F_VRAM_TOTAL, RM_GPU_F_GTT_USED,
       RM_GPU_F_GTT_TOTAL, RM_GPU_F_POWER_AVG, RM_GPU_F_POWER_IN, RM_GPU_F_TEMP,
       RM_GPU_NFILES };

struct rm_gpu_reading {
	unsigned has;
	double busy_pct;
	uint64_t vram_used, vram_total, gtt_used, gtt_total; /* bytes */
	double power_w, temp_c;
};

enum rm_gpu_src { RM_GPU_SRC_OTHER, RM_GPU_SRC_AMDGPU, RM_GPU_SRC_NVML };

struct rm_gpu_card {
	char card[32];          /* card0, or nvidia0 for NVML index 0 */
	char driver[64];        /* sanitized; "" when there is no driver link */
	enum rm_gpu_src src;
	char hwmon[96];         /* amdgpu: hwmon directory below class/drm */
	void *nvml_dev;         /* NVML handle; NULL when it could not be had */
	int fd[RM_GPU_NFILES];  /* -1 not opened yet, -2 absent, else open */
};

/* What became of NVML. */
enum rm_nvml_state {
	RM_NVML_ABSENT,         /* the library could not be loaded */
	RM_NVML_BROKEN,         /* loaded, but a required symbol is missing */
	RM_NVML_INIT_FAILED,    /* nvmlInit or the device count failed */
	RM_NVML_OK,
	RM_NVML_STATIC,         /* a static build (make STATIC=1): never loaded */
};

struct rm_gpus {
	int drm_fd;             /* class/drm, or -1 */
	int n;
	struct rm_gpu_card card[RM_GPU_MAX];
	enum rm_nvml_state nvml;
	int nvml_ret;           /* the failing call's nvmlReturn_t */
	char nvml_msg[256];     /* dlerror() or nvmlErrorString() */
	int nvml_skipped;       /* devices that answered NO_PERMISSION */
};

/* Is name a drm card (card followed by digits only)? */
int rm_gpu_is_card(const char *name);

/* Order cards card2 < card10; NVML rows after drm rows. */
int rm_gpu_card_cmp(const char *a, const char *b);

/*
 * The monitor's columns: the highest busy percent of the cards that
 * report one, and the VRAM used and total summed over the cards that
 * report both.  Unknown (flag clear) when no card reports it.
 */
struct rm_gpu_agg {
	unsigned has;           /* RM_GPU_BUSY, RM_GPU_VRAM_USED|RM_GPU_VRAM_TOTAL */
	double busy_max;
	uint64_t vram_used, vram_total;
};

void rm_gpu_aggregate(const struct rm_gpu_reading *r, int n, struct rm_gpu_agg *a);

/*
 * Find the cards and bring NVML up.  Returns the number of GPUs (0 when
 * there are none; a missing class/drm is not an error).  g->nvml says
 * what became of NVML.
 */
int rm_gpu_open(struct rm_gpus *g);

/*
 * Read card i: the readings in want (RM_GPU_* bits; RM_GPU_ALL for every
 * one), so a caller pays only for what it prints.  Fills r; what could
 * not be read has its flag clear.
 */
void rm_gpu_read(struct rm_gpus *g, int i, unsigned want, struct rm_gpu_reading *r);

/* Shut NVML down (once, if it was brought up) and release everything. */
void rm_gpu_close(struct rm_gpus *g);

#endif
