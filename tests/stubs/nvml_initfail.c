/*
 * nvml_initfail: an NVML whose nvmlInit_v2 fails with DRIVER_NOT_LOADED,
 * as on a machine with the library but no kernel module.  Every other
 * call answers UNINITIALIZED and is logged as late, and so is
 * nvmlShutdown, which must never be called after a failed init.
 */
#include <stdio.h>
#include <stdlib.h>

typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;

static void logline(const char *what)
{
	const char *p = getenv("NVML_STUB_LOG");
	FILE *f;

	if (!p || !*p || !(f = fopen(p, "a")))
		return;
	fprintf(f, "%s\n", what);
	fclose(f);
}

nvmlReturn_t nvmlInit_v2(void) { logline("init"); return 9; }
nvmlReturn_t nvmlShutdown(void) { logline("shutdown"); return 1; }

const char *nvmlErrorString(nvmlReturn_t r)
{
	return r == 9 ? "Driver Not Loaded" : "Uninitialized";
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *n)
{
	(void)n;
	logline("late count");
	return 1;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *d)
{
	(void)i;
	(void)d;
	logline("late handle");
	return 1;
}
