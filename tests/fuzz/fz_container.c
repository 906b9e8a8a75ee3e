/*
 * fz_container: what lib/container reads from processes the monitor does
 * not trust: a memory cgroup path (any user may name a cgroup it was
 * delegated) and a container client's argv (NUL-separated, as
 * /proc/PID/cmdline gives it).
 */
#include "fuzz.h"
#include "container.h"

static int fz_container(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1);
	char *argv[64];
	int argc = 0;
	struct rm_ct_cgroup g;
	struct rm_ct_client c;

	if (!buf)
		return 0;
	if (size)
		memcpy(buf, data, size);
	buf[size] = '\0';
	if (rm_ct_parse_cgroup(buf, &g)) {
		FZ_ASSERT(strlen(g.id) == RM_CT_ID_LEN && rm_ct_is_id(g.id, RM_CT_ID_LEN));
		FZ_ASSERT(g.len <= strlen(buf) && g.parent_len < g.len);
		FZ_ASSERT(memmem(buf + g.parent_len, g.len - g.parent_len, g.id, RM_CT_ID_LEN) != NULL);
		rm_ct_under_parent("/ci", buf, g.parent_len);
		rm_ct_under_parent("a-b.slice", buf, g.parent_len);
		rm_ct_under_parent(buf + g.len, buf, g.parent_len);
	}
	for (size_t i = 0; i < size && argc < 63; ) {
		argv[argc++] = buf + i;
		i += strlen(buf + i) + 1;
	}
	argv[argc] = NULL;
	if (rm_ct_parse_client(argv, argc, &c) >= RM_CT_RUN) {
		const char *s[] = { c.cidfile, c.name, c.cgroup_parent, c.host, c.target };
		for (size_t k = 0; k < sizeof(s) / sizeof(s[0]); k++)
			FZ_ASSERT(!s[k] || (s[k] >= buf && s[k] <= buf + size));
		FZ_ASSERT(c.nlabels >= 0 && c.nlabels <= RM_CT_MAX_LABELS);
	}
	free(buf);
	return 0;
}

FZ_MAIN(fz_container)
