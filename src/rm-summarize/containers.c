/*
 * containers.c: the containers companion, row by row.  rm-tree writes a
 * row per live container cgroup per tick and one `gone` row, repeating
 * the last values, when the cgroup disappears:
 *   epoch,elapsed_s,id,name,cgroup,tied,limit_kib,usage_kib,peak_kib,failcnt,oom_kills,state
 * Each row folds into its container's struct (found by ID through a hash),
 * so memory grows with containers, never with rows.  A row's time is put
 * on the system CSV's axis as rm-tree's exit log times are (elapsed_s
 * after the sampler's start), so its stage is the sample rows' stage then.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "containers.h"

enum { CC_EPOCH, CC_ELAPSED, CC_ID, CC_NAME, CC_CGROUP, CC_TIED, CC_LIMIT, CC_USAGE, CC_PEAK,
       CC_FAILCNT, CC_OOM, CC_STATE, CC_N };

static const char *const cc_names[CC_N] = {
	"epoch", "elapsed_s", "id", "name", "cgroup", "tied", "limit_kib", "usage_kib",
	"peak_kib", "failcnt", "oom_kills", "state",
};

/* The file being read: its columns (one file is read at a time). */
static int col[CC_N], ncols;

int containers_is_header(const struct rm_csv *hdr)
{
	static const int need[] = { CC_EPOCH, CC_ELAPSED, CC_ID, CC_CGROUP, CC_TIED, CC_LIMIT,
				    CC_USAGE, CC_STATE };

	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++)
		if (header_col(hdr->f, hdr->nf, cc_names[need[i]]) < 0)
			return 0;
	return 1;
}

void containers_header(struct report *r, const struct rm_csv *hdr)
{
	for (int i = 0; i < CC_N; i++)
		col[i] = header_col(hdr->f, hdr->nf, cc_names[i]);
	ncols = hdr->nf;
	r->ctrs.known = 1;
}

static const struct rm_csv_field *cfld(const struct rm_csv *c, int n, int k)
{
	return col[k] >= 0 && col[k] < n ? &c->f[col[k]] : NULL;
}

static double cval(const struct rm_csv *c, int n, int k)
{
	const struct rm_csv_field *f = cfld(c, n, k);
	return f && f->len ? field_num(f) : NAN;
}

/* A field sanitized into dst[size] ("" when absent). */
static void cstr(const struct rm_csv *c, int n, int k, char *dst, size_t size)
{
	const struct rm_csv_field *f = cfld(c, n, k);

	dst[0] = '\0';
	if (f)
		rm_sanitize(f->p, f->len, dst, size);
}

static size_t id_hash(const char *s)
{
	size_t h = 5381;

	while (*s)
		h = h * 33 + (unsigned char)*s++;
	return h;
}

static void ctr_rehash(struct ctrs *cs)
{
	free(cs->hash);
	cs->hcap = cs->hcap ? cs->hcap * 2 : 64;
	cs->hash = xmalloc(cs->hcap * sizeof(*cs->hash));
	memset(cs->hash, 0, cs->hcap * sizeof(*cs->hash));
	for (size_t i = 0; i < cs->n; i++) {
		size_t h = id_hash(cs->v[i].id) & (cs->hcap - 1);
		while (cs->hash[h])
			h = (h + 1) & (cs->hcap - 1);
		cs->hash[h] = i + 1;
	}
}

/* The container with this ID, added (zeroed, figures unknown) when new. */
static struct ctr *ctr_get(struct ctrs *cs, const char *id)
{
	struct ctr *c;
	size_t h;

	if (cs->n * 2 >= cs->hcap)
		ctr_rehash(cs);
	h = id_hash(id) & (cs->hcap - 1);
	while (cs->hash[h]) {
		c = &cs->v[cs->hash[h] - 1];
		if (!strcmp(c->id, id))
			return c;
		h = (h + 1) & (cs->hcap - 1);
	}
	if (cs->n == cs->cap) {
		cs->cap = cs->cap ? cs->cap * 2 : 8;
		cs->v = xrealloc(cs->v, cs->cap * sizeof(*cs->v));
	}
	c = &cs->v[cs->n];
	memset(c, 0, sizeof(*c));
	snprintf(c->id, sizeof(c->id), "%s", id);
	snprintf(c->shortid, sizeof(c->shortid), "%.12s", id);
	c->first_epoch = c->last_epoch = c->last_read = NAN;
	c->peak_kib = c->peak_epoch = c->oom_last = NAN;
	c->min_avail_kib = c->min_avail_epoch = c->min_avail_limit = c->near_first = NAN;
	c->min_avail_stage = c->near_first_stage = -1;
	cs->hash[h] = ++cs->n;
	return c;
}

/* Its entry for stage, added in the order it first ran there. */
static struct ctr_stage *ctr_stage(struct ctr *c, int stage)
{
	for (int i = 0; i < c->nst; i++)
		if (c->st[i].stage == stage)
			return &c->st[i];
	c->st = xrealloc(c->st, (size_t)(c->nst + 1) * sizeof(*c->st));
	c->st[c->nst].stage = stage;
	c->st[c->nst].min_avail_kib = c->st[c->nst].limit_kib = NAN;
	return &c->st[c->nst++];
}

/* The limit now: its first, and each change (the first CT_LIMITS kept).
 * No limit in a container's first row and one in its second is docker's
 * order of work (the cgroup is made, then its limit written), not a
 * change: the limit is the container's from its start. */
static void limit_fold(struct ctr *c, double lim, double t)
{
	if (c->nread == 2 && c->nlimits == 1 && isnan(c->limit[0]) && !isnan(lim)) {
		c->limit[0] = c->limit_cur = lim;
		return;
	}
	if (c->nlimits && (lim == c->limit_cur || (isnan(lim) && isnan(c->limit_cur))))
		return;
	if (c->nlimits)
		c->limit_changes++;
	c->limit_cur = lim;
	if (c->nlimits < CT_LIMITS) {
		c->limit[c->nlimits] = lim;
		c->limit_at[c->nlimits++] = t;
	}
}

/* Its headroom at this reading: the lowest, per stage, and near-OOM. */
static void avail_fold(struct report *r, struct ctr *c, struct ctr_stage *cst, double lim,
		       double use, double t, int stage)
{
	double av, thr;

	if (isnan(lim) || isnan(use))
		return;
	av = lim - use;
	if (isnan(c->min_avail_kib) || av < c->min_avail_kib) {
		c->min_avail_kib = av;
		c->min_avail_epoch = t;
		c->min_avail_limit = lim;
		c->min_avail_stage = stage;
	}
	if (isnan(cst->min_avail_kib) || av < cst->min_avail_kib)
		cst->min_avail_kib = av;
	if (isnan(cst->limit_kib) || lim < cst->limit_kib)
		cst->limit_kib = lim;
	thr = ctr_near_threshold(r->opt, lim);
	if (av < thr && c->near++ == 0) {
		c->near_first = t;
		c->near_first_stage = stage;
	}
}

/* Its oom_kills count: each rise, with the time of the row it rose in. */
static void oom_fold(struct ctr *k, double oom, double t)
{
	long rise;

	if (isnan(oom))
		return;
	/* A first reading above 0: killed before it, counted at it. */
	rise = isnan(k->oom_last) ? (oom > 0 ? (long)oom : 0) : oom > k->oom_last ? (long)(oom - k->oom_last) : 0;
	if (rise > 0) {
		if (k->nrises < CT_RISES) {
			k->rise_at[k->nrises] = t;
			k->rise_n[k->nrises++] = rise;
		}
		k->oom_kills += rise;
	}
	k->oom_last = oom;
}

/* What a container's first row says once: name, cgroup, tie. */
static void first_row(struct ctr *k, const struct rm_csv *c, int n, double t)
{
	const struct rm_csv_field *f = cfld(c, n, CC_CGROUP);

	cstr(c, n, CC_NAME, k->name, sizeof(k->name));
	cstr(c, n, CC_CGROUP, k->cgroup, sizeof(k->cgroup));
	cstr(c, n, CC_TIED, k->tied, sizeof(k->tied));
	k->rawcg = f ? xstrndup(f->p, f->len) : xstrndup("", 0);
	k->first_epoch = t;
}

/* A row's readings: limit, peak, OOM kills, headroom. */
static void readings(struct report *r, struct ctr *k, const struct rm_csv *c, int n, double t)
{
	double lim = cval(c, n, CC_LIMIT), use = cval(c, n, CC_USAGE), pk = cval(c, n, CC_PEAK);
	int stage = stage_at(r, t);

	k->last_read = t;
	if (k->nread++ == 0)
		k->start_stage = stage_begun(r, t, &k->start_until);
	if (k->start_stage != -2 && t < k->start_until)
		stage = k->start_stage;
	limit_fold(k, lim, t);
	if (!isnan(pk))
		k->peak_col = 1;
	if (!isnan(use) && (isnan(pk) || use > pk))
		pk = use;
	if (!isnan(pk) && (isnan(k->peak_kib) || pk > k->peak_kib)) {
		k->peak_kib = pk;
		k->peak_epoch = t;
	}
	oom_fold(k, cval(c, n, CC_OOM), t);
	avail_fold(r, k, ctr_stage(k, stage), lim, use, t, stage);
}

int containers_row(struct report *r, struct rm_csv *c, char *why, size_t wsize)
{
	int n = c->nf;
	char id[80], state[8];
	double epoch, el, t;
	struct ctr *k;

	if (n < ncols && !c->cut) {
		snprintf(why, wsize, "%d field%s where the header has %d", n, n == 1 ? "" : "s", ncols);
		return -1;
	}
	if (c->cut)
		n--;   /* its last field may be cut: not read */
	cstr(c, n, CC_ID, id, sizeof(id));
	cstr(c, n, CC_STATE, state, sizeof(state));
	if (c->cut && (!id[0] || !state[0]))
		return 0;
	if (!id[0]) {
		snprintf(why, wsize, "no container id");
		return -1;
	}
	if (strcmp(state, "run") && strcmp(state, "gone")) {
		snprintf(why, wsize, "state '%s', not run or gone", state);
		return -1;
	}
	epoch = cval(c, n, CC_EPOCH);
	el = cval(c, n, CC_ELAPSED);
	if (isnan(epoch) && isnan(el))
		return 0;
	/* On the system CSV's axis, as the exit log's times are. */
	t = r->sys && !isnan(el) ? r->sys->first_epoch - r->sys->first_elapsed + el : epoch;
	k = ctr_get(&r->ctrs, id);
	if (!k->rows++)
		first_row(k, c, n, t);
	else if (!k->tied[0])
		cstr(c, n, CC_TIED, k->tied, sizeof(k->tied));   /* tied later (the engine answered) */
	if (isnan(k->last_epoch) || t > k->last_epoch)
		k->last_epoch = t;
	k->gone = state[0] == 'g';
	/* A gone row repeats the last values: nothing new was read, unless
	 * it is all there is (a container shorter than a tick). */
	if (!k->gone || isnan(k->last_read))
		readings(r, k, c, n, t);
	return 0;
}

int ctr_tied(const struct ctr *c)
{
	return c->tied[0] != '\0';
}

/* The program's name of cmd's first word, "" when none. */
static const char *argv0_base(const char *cmd, char *buf, size_t size)
{
	size_t n = strcspn(cmd, " ");
	const char *p = cmd;

	for (size_t i = 0; i < n; i++)
		if (cmd[i] == '/')
			p = cmd + i + 1;
	n -= (size_t)(p - cmd);
	if (n >= size)
		n = size - 1;
	memcpy(buf, p, n);
	buf[n] = '\0';
	return buf;
}

/*
 * A container client that starts or enters a container: docker, podman
 * or nerdctl whose subcommand (the first word that is not an option or
 * a global option's value, after "container") is run, create, start or
 * exec.
 */
int containers_is_client(const char *cmd)
{
	static const char *const val_opts[] = { "-H", "--host", "--config", "--context", "-c",
						"--log-level", "-l", "--url", "--connection", NULL };
	char base[32], w[32];
	const char *p;
	int skip = 0;

	if (!cmd || !*cmd)
		return 0;
	argv0_base(cmd, base, sizeof(base));
	if (strcmp(base, "docker") && strcmp(base, "podman") && strcmp(base, "nerdctl"))
		return 0;
	for (p = cmd + strcspn(cmd, " "); *p;) {
		size_t n;
		p += strspn(p, " ");
		n = strcspn(p, " ");
		if (!n)
			break;
		snprintf(w, sizeof(w), "%.*s", (int)(n < sizeof(w) ? n : sizeof(w) - 1), p);
		p += n;
		if (skip) {
			skip = 0;
			continue;
		}
		if (w[0] == '-') {
			for (int i = 0; val_opts[i]; i++)
				skip |= !strcmp(w, val_opts[i]);
			continue;
		}
		if (!strcmp(w, "container"))
			continue;
		return !strcmp(w, "run") || !strcmp(w, "create") || !strcmp(w, "start") ||
		       !strcmp(w, "exec");
	}
	return 0;
}

void containers_finish(struct report *r)
{
	struct ctrs *cs = &r->ctrs;
	double least = NAN;

	cs->clients = r->fold ? r->nclients : 0;
	for (size_t i = 0; !r->fold && i < r->nproc; i++)
		cs->clients += containers_is_client(r->procs[i].cmd);
	cs->ntied = 0;
	for (size_t i = 0; i < cs->n; i++) {
		const struct ctr *c = &cs->v[i];
		if (!ctr_tied(c))
			continue;
		cs->ntied++;
		if (!isnan(c->min_avail_kib) && (isnan(least) || c->min_avail_kib < least)) {
			least = c->min_avail_kib;
			cs->bind = c;
		}
	}
}

void containers_free(struct ctrs *cs)
{
	for (size_t i = 0; i < cs->n; i++) {
		free(cs->v[i].st);
		free(cs->v[i].rawcg);
	}
	free(cs->v);
	free(cs->hash);
	memset(cs, 0, sizeof(*cs));
}

int containers_of_cgroup(const struct report *r, const char *cg)
{
	const struct ctrs *cs = &r->ctrs;

	if (!cg || !*cg)
		return -1;
	for (size_t i = 0; i < cs->n; i++) {
		const char *p = cs->v[i].rawcg;
		size_t n = p ? strlen(p) : 0;
		if (n && !strncmp(cg, p, n) && (cg[n] == '\0' || cg[n] == '/'))
			return (int)i;
	}
	return -1;
}

double ctr_stage_limit(const struct report *r, int stage, const struct ctr **which)
{
	const struct ctrs *cs = &r->ctrs;
	double best = NAN;

	*which = NULL;
	for (size_t i = 0; i < cs->n; i++) {
		const struct ctr *c = &cs->v[i];
		if (!ctr_tied(c))
			continue;
		for (int j = 0; j < c->nst; j++)
			if (c->st[j].stage == stage && !isnan(c->st[j].limit_kib) &&
			    (isnan(best) || c->st[j].limit_kib < best)) {
				best = c->st[j].limit_kib;
				*which = c;
			}
	}
	return best;
}

double ctr_stage_avail(const struct report *r, int stage)
{
	const struct ctrs *cs = &r->ctrs;
	double best = NAN;

	for (size_t i = 0; i < cs->n; i++) {
		const struct ctr *c = &cs->v[i];
		if (!ctr_tied(c))
			continue;
		for (int j = 0; j < c->nst; j++)
			if (c->st[j].stage == stage && !isnan(c->st[j].min_avail_kib) &&
			    (isnan(best) || c->st[j].min_avail_kib < best))
				best = c->st[j].min_avail_kib;
	}
	return best;
}

double ctr_near_threshold(const struct opts *o, double limit_kib)
{
	return 0.15 * limit_kib < o->near_oom_mb * 1024 ? 0.15 * limit_kib : o->near_oom_mb * 1024;
}

int ctr_untied_clients(const struct report *r)
{
	return r->ctrs.known && r->ctrs.clients > 0 && r->ctrs.ntied == 0;
}

int ctr_binding(const struct report *r)
{
	return r->ctrs.bind != NULL;
}
