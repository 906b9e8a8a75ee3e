/*
 * fz_sanitize: the log-line sanitizer.  rm_sanitize on any bytes into an
 * output of any size, and rm_last_line (the context column) with and
 * without an ERE, must give clean text (see fz_check_clean); that text,
 * CSV-quoted by rm_buf_csv, must read back as exactly one field equal to
 * itself, and JSON-quoted must hold no raw control byte.
 *
 * The first input byte picks the output size (1 to 255, or the full
 * RM_TEXT_MAX + 1), the second whether the ERE is used.
 */
#include <regex.h>

#include "fuzz.h"
#include "logtail.h"
#include "text.h"

/* Read one RFC 4180 field from s; it must be the whole of s. */
static void fz_field_roundtrip(const char *field)
{
	struct rm_buf b = { 0 };
	const char *p;
	char *back;
	size_t n = 0;

	rm_buf_csv(&b, field);
	FZ_ASSERT(!b.oom);
	back = malloc(b.len + 1);
	FZ_ASSERT(back != NULL);
	p = b.p ? b.p : "";
	if (*p == '"') {
		for (p++;; p++) {
			FZ_ASSERT(*p != '\0');
			if (*p == '"') {
				if (p[1] != '"')
					break;
				p++;
			}
			back[n++] = *p;
		}
		p++;
	} else {
		for (; *p; p++) {
			FZ_ASSERT(*p != ',' && *p != '"' && *p != '\r' && *p != '\n');
			back[n++] = *p;
		}
	}
	FZ_ASSERT(*p == '\0');
	back[n] = '\0';
	FZ_ASSERT(strcmp(back, field) == 0);
	free(back);

	rm_buf_reset(&b);
	rm_buf_json(&b, field);
	FZ_ASSERT(!b.oom && b.len >= 2 && b.p[0] == '"' && b.p[b.len - 1] == '"');
	for (size_t i = 0; i < b.len; i++)
		FZ_ASSERT((unsigned char)b.p[i] >= 0x20);
	rm_buf_free(&b);
}

static int fz_sanitize(const uint8_t *data, size_t size)
{
	static regex_t re;
	static int re_ready;
	char out[RM_TEXT_MAX + 1];
	size_t osize, n;
	int use_re;

	if (!re_ready) {
		if (regcomp(&re, "error|warn|[0-9]+%", REG_EXTENDED | REG_NOSUB) != 0)
			abort();
		re_ready = 1;
	}
	if (size < 2)
		return 0;
	osize = data[0] == 0xff ? sizeof(out) : (size_t)data[0] + 1;
	use_re = data[1] & 1;
	data += 2;
	size -= 2;

	/* Exactly sized copy: ASan sees any read past the end. */
	char *in = malloc(size ? size : 1);
	if (!in)
		return 0;
	if (size)
		memcpy(in, data, size);

	n = rm_sanitize(in, size, out, osize);
	fz_check_clean(out, n, osize);
	fz_field_roundtrip(out);

	memset(out, 'x', sizeof(out));
	if (rm_last_line(in, size, use_re ? &re : NULL, out, osize) == 1) {
		n = strlen(out);
		fz_check_clean(out, n, osize);
		FZ_ASSERT(n > 0 || osize == 1);
		if (use_re && osize > RM_TEXT_MAX)
			FZ_ASSERT(regexec(&re, out, 0, NULL, 0) == 0);
		fz_field_roundtrip(out);
	}
	free(in);
	return 0;
}

FZ_MAIN(fz_sanitize)
