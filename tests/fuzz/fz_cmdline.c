/*
 * fz_cmdline: /proc/PID/cmdline, NUL-separated argv joined in place
 * (rm_cmdline_join), then made safe to print (rm_sanitize) as every
 * command does before it prints a command line.  The buffer has one byte
 * more than the data, as the reader reserves for the terminator.
 */
#include "fuzz.h"
#include "text.h"
#include "proctab.h"

static int fz_cmdline(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1);
	char out[RM_TEXT_MAX + 1];
	size_t n, o;

	if (!buf)
		return 0;
	if (size)
		memcpy(buf, data, size);
	n = rm_cmdline_join(buf, size);
	FZ_ASSERT(n <= size);
	FZ_ASSERT(buf[n] == '\0');
	FZ_ASSERT(memchr(buf, '\0', n) == NULL);
	o = rm_sanitize(buf, n, out, sizeof(out));
	fz_check_clean(out, o, sizeof(out));
	free(buf);
	return 0;
}

FZ_MAIN(fz_cmdline)
