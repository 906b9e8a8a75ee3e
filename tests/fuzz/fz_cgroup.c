/*
 * fz_cgroup: the cgroup files lib/cgroup parses, as a hostile or broken
 * kernel (or a fixture) might write them: a mountinfo line split in place,
 * /proc/PID/cgroup lines, "key value" files (memory.stat, memory.events,
 * memory.oom_control), memory limits, cpu.max and --memory-max sizes.
 */
#include "fuzz.h"
#include "cgroup.h"

static int fz_cgroup(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1), *line;
	char path[256];
	struct rm_cg_mount m;
	uint64_t v;
	long long q, p;

	if (!buf)
		return 0;
	if (size)
		memcpy(buf, data, size);
	buf[size] = '\0';
	if (rm_cg_parse_proc_cgroup(buf, NULL, path, sizeof(path)) == 0)
		FZ_ASSERT(strlen(path) < sizeof(path) && path[0] != '\0');
	if (rm_cg_parse_proc_cgroup(buf, "memory", path, sizeof(path)) == 0)
		FZ_ASSERT(strlen(path) < sizeof(path));
	rm_cg_parse_kv(buf, "oom_kill", &v);
	rm_cg_parse_kv(buf, "inactive_file", &v);
	if (rm_cg_parse_limit(buf, &v) == 1)
		FZ_ASSERT(v < RM_CG_V1_UNLIMITED);
	if (rm_cg_parse_cpu_max(buf, &q, &p) == 1)
		FZ_ASSERT(q > 0 && p > 0 && rm_cg_quota_cores(q, p, 4) >= 1 &&
			  rm_cg_quota_cores(q, p, 4) <= 4);
	if (rm_cg_parse_size(buf, &v) == 0)
		FZ_ASSERT(v >= 1);
	line = strtok(buf, "\n");
	while (line) {
		if (rm_cg_parse_mountinfo_line(line, &m) == 0)
			FZ_ASSERT(m.fstype && m.point && m.root && m.super);
		line = strtok(NULL, "\n");
	}
	free(buf);
	return 0;
}

FZ_MAIN(fz_cgroup)
