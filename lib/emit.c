/*
 * emit: see emit.h.
 */
#include <string.h>

#include "emit.h"

int rm_fmt_parse(const char *s, enum rm_fmt *fmt)
{
	if (strcmp(s, "csv") == 0)
		*fmt = RM_FMT_CSV;
	else if (strcmp(s, "jsonl") == 0 || strcmp(s, "json") == 0)
		*fmt = RM_FMT_JSONL;
	else if (strcmp(s, "prom") == 0)
		*fmt = RM_FMT_PROM;
	else
		return -1;
	return 0;
}

void rm_emit_csv_header(struct rm_buf *b, const struct rm_col *cols, int n)
{
	for (int i = 0; i < n; i++) {
		if (i)
			rm_buf_addc(b, ',');
		rm_buf_csv(b, cols[i].name);
	}
	rm_buf_addc(b, '\n');
}

void rm_emit_csv_row(struct rm_buf *b, const struct rm_col *cols,
		     const struct rm_val *v, int n)
{
	(void)cols;
	for (int i = 0; i < n; i++) {
		if (i)
			rm_buf_addc(b, ',');
		if (v[i].type == RM_V_NUM)
			rm_buf_num(b, v[i].num, v[i].prec);
		else if (v[i].type == RM_V_U64)
			rm_buf_u64(b, v[i].u);
		else if (v[i].type == RM_V_STR)
			rm_buf_csv(b, v[i].str);
	}
	rm_buf_addc(b, '\n');
}

void rm_emit_jsonl(struct rm_buf *b, const struct rm_col *cols,
		   const struct rm_val *v, int n)
{
	rm_buf_addc(b, '{');
	for (int i = 0; i < n; i++) {
		if (i)
			rm_buf_addc(b, ',');
		rm_buf_json(b, cols[i].name);
		rm_buf_addc(b, ':');
		if (v[i].type == RM_V_NUM)
			rm_buf_json_num(b, v[i].num, v[i].prec);
		else if (v[i].type == RM_V_U64)
			rm_buf_u64(b, v[i].u);
		else if (v[i].type == RM_V_STR)
			rm_buf_json(b, v[i].str);
		else
			rm_buf_adds(b, "null");
	}
	rm_buf_adds(b, "}\n");
}

void rm_buf_prom_label(struct rm_buf *b, const char *s)
{
	rm_buf_addc(b, '"');
	for (; *s; s++) {
		if (*s == '\\' || *s == '"') {
			rm_buf_addc(b, '\\');
			rm_buf_addc(b, *s);
		} else if (*s == '\n') {
			rm_buf_adds(b, "\\n");
		} else {
			rm_buf_addc(b, *s);
		}
	}
	rm_buf_addc(b, '"');
}

static void prom_labels(struct rm_buf *b, const struct rm_col *cols,
			const struct rm_val *v, int n, const char *extra)
{
	int any = 0;

	for (int i = 0; i < n; i++) {
		if (cols[i].prom != RM_P_LABEL || v[i].type == RM_V_NONE)
			continue;
		rm_buf_addc(b, any ? ',' : '{');
		rm_buf_adds(b, cols[i].prom_name);
		rm_buf_addc(b, '=');
		if (v[i].type == RM_V_STR) {
			rm_buf_prom_label(b, v[i].str);
		} else if (v[i].type == RM_V_U64) {
			rm_buf_addc(b, '"');
			rm_buf_u64(b, v[i].u);
			rm_buf_addc(b, '"');
		} else {
			rm_buf_addc(b, '"');
			rm_buf_num(b, v[i].num, v[i].prec);
			rm_buf_addc(b, '"');
		}
		any = 1;
	}
	if (extra && *extra) {
		rm_buf_addc(b, any ? ',' : '{');
		rm_buf_adds(b, extra);
		any = 1;
	}
	if (any)
		rm_buf_addc(b, '}');
}

void rm_emit_prom(struct rm_buf *b, const struct rm_col *cols,
		  const struct rm_val *v, int n, int rows, const char *extra)
{
	for (int i = 0; i < n; i++) {
		int seen = 0;
		if (cols[i].prom != RM_P_GAUGE && cols[i].prom != RM_P_COUNTER)
			continue;
		for (int r = 0; r < rows; r++) {
			const struct rm_val *row = v + (size_t)r * (size_t)n;
			double scale = cols[i].scale != 0 ? cols[i].scale : 1;
			double x;
			if (row[i].type == RM_V_NUM && !__builtin_isfinite(row[i].num))
				continue; /* unknown: no sample */
			if (row[i].type != RM_V_NUM && row[i].type != RM_V_U64)
				continue;
			if (!seen) {
				rm_buf_addf(b, "# HELP %s %s\n# TYPE %s %s\n",
					    cols[i].prom_name, cols[i].help, cols[i].prom_name,
					    cols[i].prom == RM_P_COUNTER ? "counter" : "gauge");
				seen = 1;
			}
			rm_buf_adds(b, cols[i].prom_name);
			prom_labels(b, cols, row, n, extra);
			rm_buf_addc(b, ' ');
			if (row[i].type == RM_V_U64 && scale == 1) {
				rm_buf_u64(b, row[i].u);
				rm_buf_addc(b, '\n');
				continue;
			}
			x = row[i].type == RM_V_U64 ? (double)row[i].u * scale : row[i].num * scale;
			/* Integral values print exactly; fractions with every digit a
			 * double holds (a counter in joules keeps its microjoules).
			 * The range test comes first: casting a double beyond
			 * long long is undefined. */
			if (x < 9e15 && x > -9e15 && x == (double)(long long)x)
				rm_buf_addf(b, "%lld\n", (long long)x);
			else
				rm_buf_addf(b, "%.15g\n", x);
		}
	}
}
