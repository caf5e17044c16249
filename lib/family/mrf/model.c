/*
 * model.c - chain MRF model files (kind "model", meta family=chain-mrf,
 * llrnn-model(5)): the lexicon of the features stream it was trained on,
 * the shape in the meta (neighbours K, rank D, n_params) and the weights
 * as params/b [V], params/u [K V, D] and params/v [K V, D] (float32, rows
 * k-major: u_k's row w is row (k-1) V + w), every member checksummed by
 * the archive.  Not here: the bound (bound.c), training (estimate.c).
 */
#include "family/mrf/mrf.h"

#include <stdio.h>
#include <stdlib.h>

#define FAMILY "chain-mrf"

void mrf_model_free(mrf_model *m)
{
	if (!m)
		return;
	free(m->par);
	llr_lexicon_free(m->lex);
	llr_meta_free(m->meta);
	free(m);
}

static int own_key(const char *k)
{
	static const char *own[] = {"format", "version", "kind", "family", "neighbours", "rank", "n_params", NULL};
	for (int i = 0; own[i]; i++)
		if (!strcmp(k, own[i]))
			return 1;
	return 0;
}

static int build_meta(const void *mv, llr_meta *meta)
{
	const mrf_model *m = mv;
	int rc = llr_lexicon_to_meta(m->lex, meta);
	for (size_t i = 0; m->meta && rc >= 0 && i < llr_meta_count(m->meta); i++) {
		const char *k, *v;
		llr_meta_at(m->meta, i, &k, &v);
		if (!own_key(k))
			rc = llr_meta_set(meta, k, v);
	}
	if (rc < 0)
		return rc;
	rc |= llr_meta_set(meta, "family", FAMILY);
	rc |= llr_meta_setf(meta, "neighbours", "%d", m->d.K);
	rc |= llr_meta_setf(meta, "rank", "%d", m->d.D);
	rc |= llr_meta_setf(meta, "n_params", "%zu", mrf_nparams(&m->d));
	if (rc < 0)
		return LLR_ENOMEM;
	llr_lexicon bare = *m->lex;
	bare.meta = NULL;
	return llr_lexicon_to_meta(&bare, meta);
}

/* The i-th params/ member of shape d. */
static void param_tensor(const void *dv, size_t i, llr_param_tensor *t)
{
	const mrf_dims *d = dv;
	static const char *const name[] = {"params/b", "params/u", "params/v"};
	snprintf(t->name, sizeof t->name, "%s", name[i]);
	t->nd = i == 0 ? 1 : 2;
	t->shape[0] = i == 0 ? d->V : (int64_t)d->K * d->V;
	t->shape[1] = i == 0 ? 0 : d->D;
	t->off = i == 0 ? 0 : (size_t)d->V + (i - 1) * (size_t)d->K * d->V * d->D;
}

/* par (b, then u_k, v_k interleaved by k) in the file's order (b, every
 * u_k, every v_k); from_file: back. */
static void to_file(const mrf_dims *d, const double *par, float *f)
{
	size_t VD = (size_t)d->V * d->D;
	for (int32_t w = 0; w < d->V; w++)
		f[w] = (float)par[w];
	for (int k = 1; k <= d->K; k++)
		for (size_t j = 0; j < VD; j++) {
			size_t fu = (size_t)d->V + (size_t)(k - 1) * VD + j;
			f[fu] = (float)par[mrf_u_off(d, k) + j];
			f[fu + (size_t)d->K * VD] = (float)par[mrf_v_off(d, k) + j];
		}
}

static void from_file(const mrf_dims *d, const float *f, double *par)
{
	size_t VD = (size_t)d->V * d->D;
	for (int32_t w = 0; w < d->V; w++)
		par[w] = f[w];
	for (int k = 1; k <= d->K; k++)
		for (size_t j = 0; j < VD; j++) {
			size_t fu = (size_t)d->V + (size_t)(k - 1) * VD + j;
			par[mrf_u_off(d, k) + j] = f[fu];
			par[mrf_v_off(d, k) + j] = f[fu + (size_t)d->K * VD];
		}
}

static int write_model(llr_tensor_writer *w, const void *mv, const llr_train_state *ts, llr_err *err)
{
	const mrf_model *m = mv;
	size_t n = mrf_nparams(&m->d);
	float *f = llr_malloc(n * sizeof *f);
	if (!f)
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	to_file(&m->d, m->par, f);
	int rc = llr_lexicon_write(w, m->lex, err);
	for (size_t i = 0; rc >= 0 && i < 3; i++) {
		llr_param_tensor t;
		param_tensor(&m->d, i, &t);
		rc = llr_tw_put_raw(w, t.name, LLR_F32, t.nd, t.shape, f + t.off, err);
	}
	free(f);
	return rc;
}

int mrf_model_save(const char *path, const mrf_model *m, llr_err *err)
{
	return llr_model_file_save(path, m, build_meta, write_model, NULL, err);
}

static int get_int(const llr_meta *meta, const char *key, int64_t lo, int64_t hi, int *out, llr_err *err)
{
	int64_t v;
	if (llr_meta_get_i64(meta, key, &v, NULL) < 0)
		return llr_err_set(err, LLR_EFORMAT, "meta: %s: missing or not an integer", key);
	if (v < lo || v > hi)
		return llr_err_set(err, LLR_EFORMAT, "meta: %s=%lld out of range [%lld, %lld]", key, (long long)v, (long long)lo,
		                   (long long)hi);
	*out = (int)v;
	return LLR_OK;
}

/* The file's weights as llr_params_load grows them. */
typedef struct grown {
	float *v;
	size_t n;
} grown;

static float *grow_f(void *ctx, size_t n, llr_err *err)
{
	grown *g = ctx;
	return llr_weights_grow(&g->v, &g->n, NULL, n, n, "chain MRF", err);
}

static int load(llr_tensor_reader *r, const char *path, void *mv, llr_train_state **tsp, llr_err *err)
{
	mrf_model *m = mv;
	const llr_meta *meta = llr_tr_meta(r);
	const char *fam = llr_meta_get(meta, "family");
	if (!fam || strcmp(fam, FAMILY))
		return llr_err_set(err, LLR_EKIND, "%s: a model of family %s, not a chain MRF (family=%s)", path, fam ? fam : "lm",
		                   FAMILY);
	if (!(m->meta = llr_meta_new()))
		return llr_err_set(err, LLR_ENOMEM, "%s: out of memory", path);
	int rc = 0;
	for (size_t i = 0; rc >= 0 && i < llr_meta_count(meta); i++) {
		const char *k, *v;
		llr_meta_at(meta, i, &k, &v);
		rc = llr_meta_set(m->meta, k, v);
	}
	if (rc < 0)
		return llr_err_set(err, LLR_ENOMEM, "%s: out of memory", path);
	if (llr_lexicon_read(r, &m->lex, err) < 0 || get_int(meta, "neighbours", 1, MRF_MAX_K, &m->d.K, err) < 0 ||
	    get_int(meta, "rank", 1, MRF_MAX_D, &m->d.D, err) < 0) {
		if (strncmp(err->msg, path, strlen(path)))
			llr_err_prefix(err, "%s", path);
		return llr_err_code(err, LLR_EFORMAT);
	}
	m->d.V = (int32_t)llr_strmap_size(m->lex->vocab);
	size_t n = mrf_nparams(&m->d);
	/* the file's weights grow as they arrive (neighbours and rank
	 * multiply V: a short file must not make them allocated first) */
	grown f = {0};
	llr_param_grow g = {grow_f, &f};
	rc = llr_params_load(r, path, meta, &m->d, 3, param_tensor, NULL, n, &g, NULL, err);
	if (rc >= 0 && !(m->par = llr_malloc(n * sizeof *m->par)))
		rc = llr_err_set(err, LLR_ENOMEM, "%s: out of memory", path);
	if (rc >= 0)
		from_file(&m->d, f.v, m->par);
	free(f.v);
	return rc;
}

static void free_any(void *m)
{
	mrf_model_free(m);
}

int mrf_model_load(const char *path, mrf_model **out, llr_err *err)
{
	void *m = NULL;
	int rc = llr_model_file_load(path, sizeof **out, load, free_any, &m, NULL, err);
	*out = m;
	return rc;
}
