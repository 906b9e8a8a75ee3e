/*
 * fz_pstatus: /proc/PID/status (VmRSS, VmHWM, RssFile, RssShmem) and
 * smaps_rollup (Pss).
 * A value is known exactly when its own line holds a number after the
 * label (blanks allowed, nothing from the next line), and it is that
 * number (RssFile and RssShmem: 0 when unknown); the last status line
 * of a label wins, the first Pss line.
 */
#include <errno.h>

#include "fuzz.h"
#include "proctab.h"

/*
 * The reference: the value on the last (or first) line starting with
 * label.  Returns 1 and sets *v when that line has [ \t]*DIGITS, 0 when
 * it has something else, -1 when there is no such line.
 */
static int fz_label(const char *s, const char *label, int last, uint64_t *v)
{
	const char *line = s, *hit = NULL;
	size_t n = strlen(label);

	while (line && *line) {
		if (strncmp(line, label, n) == 0) {
			hit = line + n;
			if (!last)
				break;
		}
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	if (!hit)
		return -1;
	while (*hit == ' ' || *hit == '\t')
		hit++;
	if (*hit < '0' || *hit > '9')
		return 0;
	errno = 0;
	*v = strtoull(hit, NULL, 10);
	return errno ? 0 : 1;
}

static int fz_pstatus(const uint8_t *data, size_t size)
{
	struct rm_pstatus ps;
	uint64_t pss = 0, want = 0;
	char *s = fz_cstr(data, size);
	int rc, ref;

	if (!s)
		return 0;
	rc = rm_pstatus_parse(s, &ps);
	FZ_ASSERT((rc == 0) == (ps.has_rss || ps.has_hwm));
	ref = fz_label(s, "VmRSS:", 1, &want);
	FZ_ASSERT(ps.has_rss == (ref == 1));
	if (ref == 1)
		FZ_ASSERT(ps.rss_kib == want);
	ref = fz_label(s, "VmHWM:", 1, &want);
	FZ_ASSERT(ps.has_hwm == (ref == 1));
	if (ref == 1)
		FZ_ASSERT(ps.hwm_kib == want);
	ref = fz_label(s, "RssFile:", 1, &want);
	FZ_ASSERT(ps.rss_file_kib == (ref == 1 ? want : 0));
	ref = fz_label(s, "RssShmem:", 1, &want);
	FZ_ASSERT(ps.rss_shmem_kib == (ref == 1 ? want : 0));
	rc = rm_smaps_pss_parse(s, &pss);
	ref = fz_label(s, "Pss:", 0, &want);
	FZ_ASSERT((rc == 0) == (ref == 1));
	if (ref == 1)
		FZ_ASSERT(pss == want);
	free(s);
	return 0;
}

FZ_MAIN(fz_pstatus)
