/*
 * fz_number: the number readers of sysfs and powercap files and of the
 * command line.  rm_parse_u64 (what rm_read_u64 and the energy, GPU and
 * cgroup readers use) must accept exactly blanks, digits, trailing white
 * space, and give back the digits' value; rm_parse_seconds, rm_parse_long
 * and rm_parse_pid must keep their ranges; rm_gpu_is_card must take
 * exactly card[0-9]+ (never a connector such as card0-DP-1), and
 * rm_gpu_card_cmp must order two names one way only.
 */
#include <inttypes.h>
#include <math.h>

#include "fuzz.h"
#include "cli.h"
#include "gpu.h"
#include "procfs.h"

static void fz_u64(const char *s)
{
	uint64_t v;
	const char *p = s, *d;
	char back[32];

	if (rm_parse_u64(s, &v) < 0)
		return;
	while (*p == ' ' || *p == '\t')
		p++;
	FZ_ASSERT(*p >= '0' && *p <= '9');
	d = p;
	while (*p >= '0' && *p <= '9')
		p++;
	FZ_ASSERT(strspn(p, " \t\r\n") == strlen(p));
	while (d + 1 < p && *d == '0')
		d++;
	snprintf(back, sizeof(back), "%" PRIu64, v);
	FZ_ASSERT(strlen(back) == (size_t)(p - d) && memcmp(back, d, (size_t)(p - d)) == 0);
}

static int fz_number(const uint8_t *data, size_t size)
{
	char *s = fz_cstr(data, size);
	double sec;
	long l;
	pid_t pid;

	if (!s)
		return 0;
	fz_u64(s);
	if (rm_parse_seconds(s, 0.001, 86400, &sec) == 0)
		FZ_ASSERT(isfinite(sec) && sec >= 0.001 && sec <= 86400);
	if (rm_parse_long(s, -5, 1000000000L, &l) == 0)
		FZ_ASSERT(l >= -5 && l <= 1000000000L);
	if (rm_parse_pid(s, &pid) == 0)
		FZ_ASSERT(pid >= 1 && pid <= 4194304);
	FZ_ASSERT(rm_gpu_is_card(s) ==
		  (strncmp(s, "card", 4) == 0 && s[4] && strspn(s + 4, "0123456789") == strlen(s + 4)));
	{
		/* Two names: split at the first space. */
		char *sp = strchr(s, ' ');
		if (sp) {
			int ab, ba;
			*sp = '\0';
			ab = rm_gpu_card_cmp(s, sp + 1);
			ba = rm_gpu_card_cmp(sp + 1, s);
			FZ_ASSERT((ab < 0 && ba > 0) || (ab > 0 && ba < 0) || (ab == 0 && ba == 0));
		}
	}
	free(s);
	return 0;
}

FZ_MAIN(fz_number)
