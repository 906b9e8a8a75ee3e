/*
 * nvml_v1: the NVML stub of an older driver, without the _v2 names
 * (nvmlInit, nvmlDeviceGetCount, nvmlDeviceGetHandleByIndex only, and no
 * nvmlDeviceGetMemoryInfo_v2): rm-gpu must fall back to each older name.
 */
#define STUB_V1_ONLY 1
#include "nvml_stub.c"
