/*
 * energy_gpu_cost: the CPU one tick of `rm-sample --energy --gpu` adds,
 * measured on the library calls alone (no /proc scan, so it does not
 * move with the number of processes on the machine): one RAPL sample and
 * one read of every card, as rm-sample makes them, N times.
 *
 * usage: energy_gpu_cost N   (RM_SYS_ROOT, RM_NVML_LIB as for rm-sample)
 * prints: "US_PER_TICK_ENERGY US_PER_TICK_GPU US_PER_TICK_GPU_ALL"
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "energy.h"
#include "gpu.h"

static double cpu_now(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

int main(int argc, char **argv)
{
	static struct rm_gpus g;
	static struct rm_gpu_reading r[RM_GPU_MAX];
	struct rm_rapl rapl;
	struct rm_rapl_step st;
	struct rm_gpu_agg a;
	long n = argc > 1 ? atol(argv[1]) : 10000;
	double t0, t1, t2, t3;

	if (n < 1 || rm_rapl_open(&rapl) <= 0 || rm_gpu_open(&g) <= 0) {
		fprintf(stderr, "energy_gpu_cost: no RAPL zones or no GPUs under RM_SYS_ROOT\n");
		return 1;
	}
	rm_rapl_sample(&rapl, &st);
	t0 = cpu_now();
	for (long i = 0; i < n; i++)
		rm_rapl_sample(&rapl, &st);
	t1 = cpu_now();
	for (long i = 0; i < n; i++) {
		for (int k = 0; k < g.n; k++)
			rm_gpu_read(&g, k, RM_GPU_BUSY | RM_GPU_VRAM_USED | RM_GPU_VRAM_TOTAL, &r[k]);
		rm_gpu_aggregate(r, g.n, &a);
	}
	t2 = cpu_now();
	for (long i = 0; i < n; i++)
		for (int k = 0; k < g.n; k++)
			rm_gpu_read(&g, k, RM_GPU_ALL, &r[k]);
	t3 = cpu_now();
	printf("%.3f %.3f %.3f\n", (t1 - t0) / (double)n * 1e6, (t2 - t1) / (double)n * 1e6,
	       (t3 - t2) / (double)n * 1e6);
	rm_gpu_close(&g);
	rm_rapl_close(&rapl);
	return 0;
}
