/*
 * emit: one record, three formats.  A command describes its columns once
 * (CSV name, Prometheus name, help, type, scale to base units) and fills a
 * value per column each row; emit turns that into a CSV header and row,
 * a JSON Lines object, or a Prometheus text exposition block.
 *
 * An unknown value is an empty CSV field, JSON null, and an absent
 * Prometheus sample: never 0.  A NaN or infinite number is unknown too.
 */
#ifndef RM_EMIT_H
#define RM_EMIT_H

#include <stdint.h>

#include "text.h"

enum rm_fmt { RM_FMT_CSV, RM_FMT_JSONL, RM_FMT_PROM };

/* Parse "csv", "jsonl" or "prom" (and "json" as jsonl); -1 otherwise. */
int rm_fmt_parse(const char *s, enum rm_fmt *fmt);

/* RM_V_U64: a counter printed with every digit (never through a double). */
enum rm_vtype { RM_V_NONE, RM_V_NUM, RM_V_STR, RM_V_U64 };

struct rm_val {
	enum rm_vtype type;
	int prec;        /* decimals for RM_V_NUM */
	double num;
	const char *str; /* already sanitized */
	uint64_t u;      /* RM_V_U64 */
};

enum rm_prom { RM_P_NONE, RM_P_GAUGE, RM_P_COUNTER, RM_P_LABEL };

struct rm_col {
	const char *name;       /* CSV and JSON name */
	enum rm_prom prom;      /* how it appears in Prometheus output */
	const char *prom_name;  /* metric name, or label name for RM_P_LABEL */
	const char *help;
	double scale;           /* multiply to reach base units (0 = 1) */
};

static inline struct rm_val rm_num(double v, int prec)
{
	struct rm_val x = { RM_V_NUM, prec, v, NULL, 0 };
	return x;
}

static inline struct rm_val rm_u64(uint64_t v)
{
	struct rm_val x = { RM_V_U64, 0, (double)v, NULL, v };
	return x;
}

static inline struct rm_val rm_str(const char *s)
{
	struct rm_val x = { RM_V_STR, 0, 0, s, 0 };
	return x;
}

static inline struct rm_val rm_none(void)
{
	struct rm_val x = { RM_V_NONE, 0, 0, NULL, 0 };
	return x;
}

void rm_emit_csv_header(struct rm_buf *b, const struct rm_col *cols, int n);
void rm_emit_csv_row(struct rm_buf *b, const struct rm_col *cols,
		     const struct rm_val *v, int n);
void rm_emit_jsonl(struct rm_buf *b, const struct rm_col *cols,
		   const struct rm_val *v, int n);

/*
 * Prometheus block: every RM_P_LABEL column becomes a label on each
 * sample (with extra_labels, a preformatted `k="v",...` string or NULL);
 * every gauge and counter with a known value becomes a sample.  With
 * rows > 1, v holds rows consecutive records and the HELP/TYPE lines are
 * printed once per metric.
 */
void rm_emit_prom(struct rm_buf *b, const struct rm_col *cols,
		  const struct rm_val *v, int n, int rows, const char *extra_labels);

/* Append s escaped as a Prometheus label value (\\, \", \n). */
void rm_buf_prom_label(struct rm_buf *b, const char *s);

#endif
