/*
 * t_gpu: lib/gpu on values, on the drm fixture tree and on the NVML stub
 * libraries ($RM_BUILD/tests/nvml_*.so).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpu.h"
#include "tap.h"

static void test_is_card(void)
{
	CHECK(rm_gpu_is_card("card0"));
	CHECK(rm_gpu_is_card("card12"));
	CHECK(!rm_gpu_is_card("card"));
	CHECK(!rm_gpu_is_card("card0-DP-1"));
	CHECK(!rm_gpu_is_card("card1-eDP-1"));
	CHECK(!rm_gpu_is_card("renderD128"));
	CHECK(!rm_gpu_is_card("version"));
	CHECK(!rm_gpu_is_card("ttm"));
	CHECK(!rm_gpu_is_card("cardx"));
	CHECK(!rm_gpu_is_card("controlD64"));
}

static void test_card_order(void)
{
	CHECK(rm_gpu_card_cmp("card2", "card10") < 0);
	CHECK(rm_gpu_card_cmp("card10", "card2") > 0);
	CHECK(rm_gpu_card_cmp("card0", "card0") == 0);
	CHECK(rm_gpu_card_cmp("card10", "nvidia0") < 0);
	CHECK(rm_gpu_card_cmp("nvidia2", "nvidia10") < 0);
	CHECK(rm_gpu_card_cmp("nvidia0", "card3") > 0);
}

static void test_aggregate(void)
{
	struct rm_gpu_reading r[4];
	struct rm_gpu_agg a;

	memset(r, 0, sizeof(r));
	rm_gpu_aggregate(r, 4, &a);
	CHECK(a.has == 0);
	rm_gpu_aggregate(r, 0, &a);
	CHECK(a.has == 0);

	r[0].has = RM_GPU_BUSY | RM_GPU_VRAM_USED | RM_GPU_VRAM_TOTAL;
	r[0].busy_pct = 0;
	r[0].vram_used = 100;
	r[0].vram_total = 1000;
	/* A card whose used failed this tick adds to neither sum. */
	r[1].has = RM_GPU_BUSY | RM_GPU_VRAM_TOTAL;
	r[1].busy_pct = 80;
	r[1].vram_total = 5000;
	r[2].has = RM_GPU_VRAM_USED | RM_GPU_VRAM_TOTAL;
	r[2].vram_used = 7;
	r[2].vram_total = 70;
	rm_gpu_aggregate(r, 4, &a);
	CHECK(a.has & RM_GPU_BUSY);
	CHECK_NEAR(a.busy_max, 80, 0);
	CHECK_U64(a.vram_used, 107);
	CHECK_U64(a.vram_total, 1070);

	/* A busy of 0 is a reading: the max of {0} is 0, known. */
	rm_gpu_aggregate(r, 1, &a);
	CHECK((a.has & RM_GPU_BUSY) && a.busy_max == 0);
}

static int run_child(void (*fn)(void))
{
	fflush(stdout);
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		tap_cur = 0;
		fn();
		fflush(stdout);
		_exit(tap_cur);
	}
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

static void use(const char *stub)
{
	const char *top = getenv("RM_TOP"), *build = getenv("RM_BUILD");
	char p[4096];

	snprintf(p, sizeof(p), "%s/tests/fixtures/drm/mixed", top ? top : ".");
	setenv("RM_SYS_ROOT", p, 1);
	if (stub) {
		snprintf(p, sizeof(p), "%s/tests/%s", build ? build : "build/std", stub);
		setenv("RM_NVML_LIB", p, 1);
	} else {
		setenv("RM_NVML_LIB", "/nonexistent/libnvidia-ml.so.1", 1);
	}
}

static void child_drm(void)
{
	struct rm_gpus g;
	struct rm_gpu_reading r;

	use(NULL);
	CHECK(rm_gpu_open(&g) == 4);
	CHECK(g.nvml == RM_NVML_ABSENT);
	CHECK_STR(g.card[0].card, "card0");
	CHECK_STR(g.card[0].driver, "amdgpu");
	CHECK_STR(g.card[2].driver, "i915");
	/* NVML is down, so the nvidia driver's drm card is listed. */
	CHECK_STR(g.card[3].card, "card3");
	CHECK_STR(g.card[3].driver, "nvidia");

	rm_gpu_read(&g, 0, RM_GPU_ALL, &r);
	CHECK(r.has == (RM_GPU_BUSY | RM_GPU_VRAM_USED | RM_GPU_VRAM_TOTAL | RM_GPU_GTT_USED |
			RM_GPU_GTT_TOTAL | RM_GPU_POWER | RM_GPU_TEMP));
	CHECK_NEAR(r.busy_pct, 42, 0);
	CHECK_U64(r.vram_used, 2147483648ULL);
	CHECK_U64(r.gtt_total, 16777216000ULL);
	CHECK_NEAR(r.power_w, 35.0, 1e-9);   /* power1_average, not power1_input */
	CHECK_NEAR(r.temp_c, 45.0, 1e-9);

	rm_gpu_read(&g, 1, RM_GPU_ALL, &r);
	CHECK(!(r.has & RM_GPU_GTT_USED));    /* the read that fails */
	CHECK(r.has & RM_GPU_GTT_TOTAL);
	CHECK_NEAR(r.power_w, 12.345678, 1e-9);
	CHECK_NEAR(r.temp_c, 51.5, 1e-9);

	rm_gpu_read(&g, 2, RM_GPU_ALL, &r);
	CHECK(r.has == 0);
	rm_gpu_read(&g, 3, RM_GPU_ALL, &r);
	CHECK(r.has == 0);
	rm_gpu_close(&g);
}

static void test_drm(void)
{
	CHECK(run_child(child_drm) == 0);
}

static void child_nvml(void)
{
	struct rm_gpus g;
	struct rm_gpu_reading r;
	char log[] = "/tmp/t_gpu.XXXXXX", buf[256] = "";
	FILE *f;
	int fd = mkstemp(log);

	CHECK(fd >= 0);
	close(fd);
	setenv("NVML_STUB_LOG", log, 1);
	use("nvml_stub.so");
	CHECK(rm_gpu_open(&g) == 5);
	CHECK(g.nvml == RM_NVML_OK);
	CHECK(g.nvml_skipped == 1);
	CHECK_STR(g.card[2].card, "card2");
	CHECK_STR(g.card[3].card, "nvidia0");
	CHECK_STR(g.card[4].card, "nvidia2");
	rm_gpu_read(&g, 3, RM_GPU_ALL, &r);
	CHECK_NEAR(r.busy_pct, 37, 0);
	CHECK_U64(r.vram_used, 1000ULL << 20);
	CHECK_U64(r.vram_total, 16ULL << 30);
	CHECK(!(r.has & (RM_GPU_GTT_USED | RM_GPU_GTT_TOTAL)));
	CHECK_NEAR(r.power_w, 123.456, 1e-9);
	CHECK_NEAR(r.temp_c, 61, 0);
	rm_gpu_read(&g, 4, RM_GPU_ALL, &r);
	CHECK(r.has == (RM_GPU_VRAM_USED | RM_GPU_VRAM_TOTAL | RM_GPU_TEMP));
	CHECK_U64(r.vram_used, 512ULL << 20);
	rm_gpu_close(&g);
	rm_gpu_close(&g);       /* a second close does not shut down again */
	f = fopen(log, "r");
	CHECK(f != NULL);
	if (f) {
		size_t n = fread(buf, 1, sizeof(buf) - 1, f);
		buf[n] = '\0';
		fclose(f);
	}
	CHECK_STR(buf, "init\nshutdown\n");
	unlink(log);
}

static void test_nvml(void)
{
	CHECK(run_child(child_nvml) == 0);
}

static void child_nvml_fallbacks(void)
{
	struct rm_gpus g;
	struct rm_gpu_reading r;

	/* v2 refused (the stub wants another version): v1's used. */
	setenv("NVML_STUB_V2_VERSION", "2", 1);
	use("nvml_stub.so");
	CHECK(rm_gpu_open(&g) == 5);
	rm_gpu_read(&g, 3, RM_GPU_ALL, &r);
	CHECK_U64(r.vram_used, 1512ULL << 20);
	rm_gpu_close(&g);
}

static void test_nvml_v2_refused(void)
{
	CHECK(run_child(child_nvml_fallbacks) == 0);
}

static void child_nvml_v1(void)
{
	struct rm_gpus g;
	struct rm_gpu_reading r;

	use("nvml_v1.so");
	CHECK(rm_gpu_open(&g) == 5);
	CHECK(g.nvml == RM_NVML_OK);
	rm_gpu_read(&g, 3, RM_GPU_ALL, &r);
	CHECK_U64(r.vram_used, 1512ULL << 20);
	CHECK_NEAR(r.busy_pct, 37, 0);
	rm_gpu_close(&g);
}

static void test_nvml_v1_names(void)
{
	CHECK(run_child(child_nvml_v1) == 0);
}

static void child_nvml_initfail(void)
{
	struct rm_gpus g;

	use("nvml_initfail.so");
	CHECK(rm_gpu_open(&g) == 4);
	CHECK(g.nvml == RM_NVML_INIT_FAILED);
	CHECK(g.nvml_ret == 9);
	CHECK_STR(g.nvml_msg, "nvmlInit: Driver Not Loaded");
	CHECK_STR(g.card[3].card, "card3");
	rm_gpu_close(&g);
}

static void test_nvml_initfail(void)
{
	CHECK(run_child(child_nvml_initfail) == 0);
}

static void child_nvml_countfail(void)
{
	struct rm_gpus g;
	char log[] = "/tmp/t_gpu.XXXXXX", buf[256] = "";
	FILE *f;
	int fd = mkstemp(log);

	close(fd);
	setenv("NVML_STUB_LOG", log, 1);
	setenv("NVML_STUB_COUNT_FAIL", "1", 1);
	use("nvml_stub.so");
	CHECK(rm_gpu_open(&g) == 4);
	CHECK(g.nvml == RM_NVML_INIT_FAILED);
	rm_gpu_close(&g);
	f = fopen(log, "r");
	if (f) {
		size_t n = fread(buf, 1, sizeof(buf) - 1, f);
		buf[n] = '\0';
		fclose(f);
	}
	/* The init succeeded, so it is shut down even though count failed. */
	CHECK_STR(buf, "init\nshutdown\n");
	unlink(log);
}

static void test_nvml_countfail(void)
{
	CHECK(run_child(child_nvml_countfail) == 0);
}

static void child_none(void)
{
	struct rm_gpus g;

	setenv("RM_SYS_ROOT", "/nonexistent-rm-root", 1);
	setenv("RM_NVML_LIB", "/nonexistent/libnvidia-ml.so.1", 1);
	CHECK(rm_gpu_open(&g) == 0);
	rm_gpu_close(&g);
}

static void test_none(void)
{
	CHECK(run_child(child_none) == 0);
}

int main(void)
{
	RUN(test_is_card);
	RUN(test_card_order);
	RUN(test_aggregate);
	RUN(test_drm);
	RUN(test_nvml);
	RUN(test_nvml_v2_refused);
	RUN(test_nvml_v1_names);
	RUN(test_nvml_initfail);
	RUN(test_nvml_countfail);
	RUN(test_none);
	return tap_done();
}
