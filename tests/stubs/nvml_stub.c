/*
 * nvml_stub: a stand-in for libnvidia-ml.so.1 with known values, loaded by
 * rm-gpu and rm-sample through RM_NVML_LIB.  Three device indices:
 *   0  every reading: 37 % busy, 16 GiB with 1000 MiB used (v2; v1 adds
 *      the 512 MiB reservation), 123456 mW, 61 C
 *   1  NVML_ERROR_NO_PERMISSION from GetHandleByIndex
 *   2  utilization NOT_SUPPORTED, 8 GiB with 512 MiB used (v1: +256 MiB),
 *      power UNKNOWN (a failing read), 45 C
 * GetMemoryInfo_v2 refuses any version but 0x02000028 (as the driver
 * does), and every call but init refuses before init or after shutdown.
 * Environment:
 *   NVML_STUB_LOG FILE       append "init", "shutdown", "late CALL" lines
 *   NVML_STUB_V2_VERSION N   the v2 version accepted (default 0x02000028)
 *   NVML_STUB_COUNT_FAIL 1   GetCount fails (after a good init)
 *   NVML_STUB_BUSY0 N        device 0's busy percent
 * Built as nvml_v1.so (nvml_v1.c) it exports only the pre-_v2 names.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int nvmlReturn_t;
struct nvmlDevice_st { unsigned int index; };
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct { unsigned int gpu, memory; } nvmlUtilization_t;
typedef struct { unsigned long long total, free, used; } nvmlMemory_t;
typedef struct {
	unsigned int version;
	unsigned long long total, reserved, free, used;
} nvmlMemory_v2_t;

#define MIB (1024ULL * 1024ULL)
#define GIB (1024ULL * MIB)

static struct nvmlDevice_st devs[3] = { { 0 }, { 1 }, { 2 } };
static int refs;

static void logline(const char *what, const char *call)
{
	const char *p = getenv("NVML_STUB_LOG");
	FILE *f;

	if (!p || !*p || !(f = fopen(p, "a")))
		return;
	fprintf(f, "%s%s%s\n", what, call ? " " : "", call ? call : "");
	fclose(f);
}

/* 0 when NVML is up; UNINITIALIZED (logged) otherwise. */
static nvmlReturn_t up(const char *call)
{
	if (refs > 0)
		return 0;
	logline("late", call);
	return 1;
}

static int idx(nvmlDevice_t d)
{
	return d >= devs && d < devs + 3 ? (int)d->index : -1;
}

const char *nvmlErrorString(nvmlReturn_t r)
{
	switch (r) {
	case 0: return "Success";
	case 1: return "Uninitialized";
	case 2: return "Invalid Argument";
	case 3: return "Not Supported";
	case 4: return "Insufficient Permissions";
	case 9: return "Driver Not Loaded";
	case 25: return "Argument Version Mismatch";
	default: return "Unknown Error";
	}
}

static nvmlReturn_t init(void)
{
	logline("init", NULL);
	refs++;
	return 0;
}

nvmlReturn_t nvmlShutdown(void)
{
	logline("shutdown", NULL);
	if (refs == 0)
		return 1;
	refs--;
	return 0;
}

static nvmlReturn_t count(unsigned int *n)
{
	const char *f = getenv("NVML_STUB_COUNT_FAIL");

	if (up("count"))
		return 1;
	if (f && *f == '1')
		return 999;
	*n = 3;
	return 0;
}

static nvmlReturn_t handle(unsigned int i, nvmlDevice_t *d)
{
	if (up("handle"))
		return 1;
	if (i >= 3)
		return 2;
	if (i == 1)
		return 4;
	*d = &devs[i];
	return 0;
}

#ifdef STUB_V1_ONLY
nvmlReturn_t nvmlInit(void) { return init(); }
nvmlReturn_t nvmlDeviceGetCount(unsigned int *n) { return count(n); }
nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int i, nvmlDevice_t *d) { return handle(i, d); }
#else
nvmlReturn_t nvmlInit_v2(void) { return init(); }
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *n) { return count(n); }
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *d) { return handle(i, d); }

nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t d, nvmlMemory_v2_t *m)
{
	const char *want = getenv("NVML_STUB_V2_VERSION");
	unsigned int v = want && *want ? (unsigned int)strtoul(want, NULL, 0) : 0x02000028u;
	int i = idx(d);

	if (up("memory_v2"))
		return 1;
	if (i < 0 || !m)
		return 2;
	if (m->version != v)
		return 25;
	m->total = i == 0 ? 16 * GIB : 8 * GIB;
	m->reserved = i == 0 ? 512 * MIB : 256 * MIB;
	m->used = i == 0 ? 1000 * MIB : 512 * MIB;
	m->free = m->total - m->reserved - m->used;
	return 0;
}
#endif

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *buf, unsigned int len)
{
	if (up("name"))
		return 1;
	if (idx(d) < 0 || len < 10)
		return 2;
	snprintf(buf, len, "Stub GPU %d", idx(d));
	return 0;
}

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t *u)
{
	const char *b = getenv("NVML_STUB_BUSY0");
	int i = idx(d);

	if (up("utilization"))
		return 1;
	if (i < 0)
		return 2;
	if (i == 2)
		return 3;
	u->gpu = b && *b ? (unsigned int)atoi(b) : 37;
	u->memory = 12;
	return 0;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *m)
{
	int i = idx(d);

	if (up("memory"))
		return 1;
	if (i < 0)
		return 2;
	m->total = i == 0 ? 16 * GIB : 8 * GIB;
	m->used = i == 0 ? 1512 * MIB : 768 * MIB;
	m->free = m->total - m->used;
	return 0;
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned int *mw)
{
	int i = idx(d);

	if (up("power"))
		return 1;
	if (i < 0)
		return 2;
	if (i == 2)
		return 999;
	*mw = 123456;
	return 0;
}

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor, unsigned int *t)
{
	int i = idx(d);

	if (up("temperature"))
		return 1;
	if (i < 0 || sensor != 0)
		return 2;
	*t = i == 0 ? 61 : 45;
	return 0;
}
