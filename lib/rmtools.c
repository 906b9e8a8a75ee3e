/*
 * rmtools: see rmtools.h.  These three helpers exit, which lib otherwise
 * never does; they are the shared edge of every command's main.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rmtools.h"

void rm_usage_error(const char *prog, const char *usage_line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n%s\n", usage_line);
	exit(RM_EXIT_USAGE);
}

int rm_finish_stdout(const char *prog, int status)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		if (errno == EPIPE)
			return status;
		fprintf(stderr, "%s: cannot write output: %s\n", prog, strerror(errno));
		return RM_EXIT_FAIL;
	}
	return status;
}

void rm_out(const char *prog, struct rm_buf *b)
{
	if (rm_buf_write(STDOUT_FILENO, b) < 0) {
		if (errno == EPIPE)
			exit(RM_EXIT_OK);
		fprintf(stderr, "%s: cannot write output: %s\n", prog, strerror(errno));
		exit(RM_EXIT_FAIL);
	}
	rm_buf_reset(b);
}
