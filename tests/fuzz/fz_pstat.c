/*
 * fz_pstat: the /proc/PID/stat parser (rm_pstat_parse).  A name may hold
 * spaces, parentheses and newlines; a parse either fails or leaves a
 * NUL-terminated comm and a state letter.
 */
#include "fuzz.h"
#include "proctab.h"

static int fz_pstat(const uint8_t *data, size_t size)
{
	struct rm_pstat st;
	char *s = fz_cstr(data, size);

	if (!s)
		return 0;
	if (rm_pstat_parse(s, &st) == 0) {
		FZ_ASSERT(memchr(st.comm, '\0', sizeof(st.comm)) != NULL);
		FZ_ASSERT(st.state != '\0' && st.state != ' ' && st.state != '\n');
	}
	free(s);
	return 0;
}

FZ_MAIN(fz_pstat)
