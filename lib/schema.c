/*
 * schema: see schema.h.
 */
#include "schema.h"

#define RM_SCHEMA_SC_COL(id, name, prom, prom_name, help, scale) { name, prom, prom_name, help, scale },
#define RM_SCHEMA_SC_NAME(id, name, prom, prom_name, help, scale) name,
const struct rm_col rm_sc_cols[RM_SC_N] = { RM_SC_COLUMNS(RM_SCHEMA_SC_COL) };
const char *const rm_sc_names[RM_SC_N] = { RM_SC_COLUMNS(RM_SCHEMA_SC_NAME) };
#undef RM_SCHEMA_SC_COL
#undef RM_SCHEMA_SC_NAME

#define RM_SCHEMA_NAME(id, name) name,
const char *const rm_xl_names[RM_XL_N] = { RM_XL_COLUMNS(RM_SCHEMA_NAME) };
const char *const rm_job_names[RM_JOB_N] = { RM_JOB_COLUMNS(RM_SCHEMA_NAME) };
const char *const rm_tl_names[RM_TL_N] = { RM_TL_COLUMNS(RM_SCHEMA_NAME) };
#undef RM_SCHEMA_NAME

void rm_schema_cols(struct rm_buf *b, const char *const *names, int from, int to)
{
	for (int i = from; i < to; i++) {
		if (i)
			rm_buf_addc(b, ',');
		rm_buf_adds(b, names[i]);
	}
}
