/*
 * rm-tree's helpers for the other parts: reached from snap.c, the
 * stream's files and events.c, reaching back into none of them (main.c depends on the
 * parts; nothing depends on main.c).
 */
#include <err.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu.h"
#include "tree.h"

void tree_oom(void)
{
	errx(RM_EXIT_FAIL, "out of memory");
}

void tree_warnx(const char *fmt, ...)
{
	char *msg;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	if (!msg) {
		/* Out of memory: said all the same, in pieces. */
		va_start(ap, fmt);
		vwarnx(fmt, ap);
		va_end(ap);
		return;
	}
	/* stderr is unbuffered: glibc formats one fprintf in a buffer of its
	 * own (8 KiB) and writes it with one write(2), where warnx(3) writes
	 * the name, the message and the newline apart. */
	fprintf(stderr, "%s: %s\n", program_invocation_short_name, msg);
	free(msg);
}

char *cmd_dup(char *raw, ssize_t len)
{
	char out[RM_TEXT_MAX + 1];
	size_t n;

	if (len <= 0)
		return NULL;
	n = rm_cmdline_join(raw, (size_t)len);
	n = rm_cu_cmd_fit(raw, n, RM_TEXT_MAX); /* a compiler's source survives the cut */
	n = rm_sanitize(raw, n, out, sizeof(out));
	return n ? strdup(out) : NULL;
}
