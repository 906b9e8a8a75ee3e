/*
 * fz_cu: the compile unit a compiler command line names (lib/cu).  Input
 * byte 0 picks the output size (1 to 256); the rest is the command line,
 * in an exactly sized buffer (rm_cu_source reads at most len bytes).  The
 * unit is NUL-terminated within the output, is a piece of one argument
 * (no separator in it), and is found exactly when the return says so.
 * rm_cu_cmd_fit, with byte 0 as the limit too, leaves the line alone or
 * makes it fit, writing only within it.
 */
#include "fuzz.h"
#include "cu.h"

static int fz_cu(const uint8_t *data, size_t size)
{
	char out[257];
	size_t osize, n;
	char *cmd;
	int rc;

	if (size < 1)
		return 0;
	osize = (size_t)data[0] + 1;
	data++;
	size--;
	cmd = malloc(size ? size : 1);
	if (!cmd)
		return 0;
	if (size)
		memcpy(cmd, data, size);
	memset(out, 'x', sizeof(out));
	rc = rm_cu_source(cmd, size, out, osize);
	n = strnlen(out, osize);
	FZ_ASSERT(n < osize);
	FZ_ASSERT(rc == (n > 0));
	FZ_ASSERT(strpbrk(out, " \t") == NULL);
	if (n > 0)
		FZ_ASSERT(memmem(cmd, size, out, n) != NULL);
	{
		char name[17];
		memcpy(name, cmd, size < 16 ? size : 16);
		name[size < 16 ? size : 16] = '\0';
		rc = rm_cu_is_compiler(name);
		FZ_ASSERT(rc == 0 || rc == 1);
	}
	if (size) {
		size_t m;
		memcpy(cmd, data, size);
		m = rm_cu_cmd_fit(cmd, size, osize);
		FZ_ASSERT(m == size || m <= osize);
	}
	free(cmd);
	return 0;
}

FZ_MAIN(fz_cu)
