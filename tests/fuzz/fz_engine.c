/*
 * fz_engine: what rm-tree --containers reads from a container engine's
 * socket, which it does not trust: an HTTP answer (lib/engine's parser,
 * the chunked decoder that rewrites the buffer in place) and the JSON
 * list in its body (lib/jsonread, lib/engine's list reader); and what a
 * client's user writes: a docker config.json and a context's meta.json.
 */
#include "fuzz.h"
#include "engine.h"
#include "jsonread.h"

static void fz_id(const char *id, const char *name, void *arg)
{
	(void)arg;
	FZ_ASSERT(strlen(name) < 256);
	FZ_ASSERT(strlen(id) == RM_CT_ID_LEN && rm_ct_is_id(id, RM_CT_ID_LEN));
}

/* Walk every value, checking each span lies inside its parent. */
static void fz_walk(struct rm_jv v, int depth)
{
	struct rm_jv el, key;
	size_t it = 0;
	char s[64];
	long long n;

	FZ_ASSERT(depth <= RM_JSON_DEPTH + 1);
	switch (rm_json_kind(v)) {
	case '[':
		while (rm_json_next(v, &it, &el)) {
			FZ_ASSERT(el.s > v.s && el.s + el.n < v.s + v.n);
			fz_walk(el, depth + 1);
		}
		break;
	case '{':
		while (rm_json_member(v, &it, &key, &el)) {
			FZ_ASSERT(key.s > v.s && el.s + el.n < v.s + v.n);
			FZ_ASSERT(rm_json_kind(key) == '"');
			fz_walk(el, depth + 1);
		}
		rm_json_get(v, "Id", &el);
		break;
	case '"':
		rm_json_str(v, s, sizeof(s));
		break;
	case '0':
		rm_json_int(v, &n);
		break;
	}
}

static int fz_engine(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1), *body;
	size_t blen;
	struct rm_jv v;
	int status;

	if (!buf)
		return 0;
	for (int eof = 0; eof < 2; eof++) {
		if (size)
			memcpy(buf, data, size);
		buf[size] = '\0';
		if (rm_http_response(buf, size, eof, &status, &body, &blen) == 1) {
			FZ_ASSERT(status >= 200 && status <= 599);
			FZ_ASSERT(body >= buf && body + blen <= buf + size);
		}
	}
	/* The same bytes as a list body. */
	if (size)
		memcpy(buf, data, size);
	buf[size] = '\0';
	if (rm_json_parse(buf, size, &v)) {
		FZ_ASSERT(v.s >= buf && v.s + v.n <= buf + size && v.n > 0);
		fz_walk(v, 0);
	}
	{
		char name[256], host[4096];
		if (rm_engine_config_context(buf, size, name, sizeof(name)))
			FZ_ASSERT(strlen(name) > 0 && strlen(name) < sizeof(name));
		if (rm_engine_context_host(buf, size, host, sizeof(host)))
			FZ_ASSERT(strlen(host) > 0 && strlen(host) < sizeof(host));
	}
	rm_engine_list(buf, size, "stage1", NULL, 0, fz_id, NULL);
	rm_engine_list(buf, size, NULL, "rm-tools.run=r1", 0, fz_id, NULL);
	rm_engine_list(buf, size, NULL, "rm-tools.run", 1e9, fz_id, NULL);
	free(buf);
	return 0;
}

FZ_MAIN(fz_engine)
