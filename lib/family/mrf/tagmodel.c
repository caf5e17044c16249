/*
 * tagmodel.c - MRF tagger model files (kind "model", meta family=
 * mrf-tagger, llrnn-model(5)): the shape in the meta (tags T, features F,
 * window M), the members tags (T names, one a line), features (F names)
 * and the weights as float64, params/emit [F, T] and params/chain
 * [T + 2, T] (trans's T rows, then start, then end), every member
 * checksummed by the archive.  float64 so that a loaded model tags
 * exactly as the trained one.  Not here: training (tagfit.c).
 */
#include "family/mrf/tagger.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>

#define FAMILY "mrf-tagger"

void mrft_model_free(mrft_model *m)
{
	if (!m)
		return;
	llr_strmap_free(m->tags);
	llr_strmap_free(m->feats);
	free(m->w);
	llr_meta_free(m->meta);
	free(m);
}

static int own_key(const char *k)
{
	static const char *own[] = {"format", "version", "kind", "family", "tags", "features", "window", NULL};
	for (int i = 0; own[i]; i++)
		if (!strcmp(k, own[i]))
			return 1;
	return 0;
}

static int build_meta(const void *mv, llr_meta *meta)
{
	const mrft_model *m = mv;
	int rc = 0;
	for (size_t i = 0; m->meta && rc >= 0 && i < llr_meta_count(m->meta); i++) {
		const char *k, *v;
		llr_meta_at(m->meta, i, &k, &v);
		if (!own_key(k))
			rc = llr_meta_set(meta, k, v);
	}
	rc |= llr_meta_set(meta, "family", FAMILY);
	rc |= llr_meta_setf(meta, "tags", "%d", m->T);
	rc |= llr_meta_setf(meta, "features", "%d", m->F);
	rc |= llr_meta_setf(meta, "window", "%d", m->M);
	return rc < 0 ? LLR_ENOMEM : LLR_OK;
}

static int write_model(llr_tensor_writer *w, const void *mv, const llr_train_state *ts, llr_err *err)
{
	(void)ts;
	const mrft_model *m = mv;
	int64_t emit[2] = {m->F, m->T}, chain[2] = {(int64_t)m->T + 2, m->T};
	int rc = llr_lex_put_names(w, "tags", m->tags, err);
	if (rc >= 0)
		rc = llr_lex_put_names(w, "features", m->feats, err);
	if (rc >= 0)
		rc = llr_tw_put_raw(w, "params/emit", LLR_F64, 2, emit, m->w, err);
	if (rc >= 0)
		rc = llr_tw_put_raw(w, "params/chain", LLR_F64, 2, chain, m->w + mrft_trans(m->F, m->T), err);
	return rc;
}

int mrft_model_save(const char *path, const mrft_model *m, llr_err *err)
{
	return llr_model_file_save(path, m, build_meta, write_model, NULL, err);
}

static int get_int(const llr_meta *meta, const char *key, int64_t lo, int64_t hi, int32_t *out, llr_err *err)
{
	int64_t v;
	if (llr_meta_get_i64(meta, key, &v, NULL) < 0)
		return llr_err_set(err, LLR_EFORMAT, "meta: %s: missing or not an integer", key);
	if (v < lo || v > hi)
		return llr_err_set(err, LLR_EFORMAT, "meta: %s=%lld out of range [%lld, %lld]", key, (long long)v, (long long)lo,
		                   (long long)hi);
	*out = (int32_t)v;
	return LLR_OK;
}

/* Member name, float64 of shape {r, c}, at dst[at..]: *dst is grown to
 * want values once the member's data has arrived (never before, so that
 * a meta declaring a huge model over a short file is not allocated). */
static int member(llr_tensor_reader *r, const char *name, int64_t rows, int64_t cols, double **dst, size_t at, size_t want, llr_err *err)
{
	llr_tensor *t;
	int64_t shape[2] = {rows, cols};
	int rc = llr_lex_next_member(r, name, err);
	if (rc < 0 || (rc = llr_tr_tensor_expect(r, LLR_F64, 2, shape, &t, err)) < 0)
		return rc;
	size_t n = (size_t)rows * (size_t)cols;
	/* the first member's buffer becomes the array (no second copy) */
	double *d = llr_reallocarray(*dst ? (void *)*dst : t->data, LLR_MAX(want, 1), sizeof *d);
	if (d && !*dst)
		t->data = NULL;
	else if (d)
		memcpy(d + at, t->data, n * sizeof *d);
	if (d)
		*dst = d;
	llr_tensor_free(t);
	if (!d)
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++)
		if (!isfinite(d[at + i]))
			return llr_err_set(err, LLR_EFORMAT, "member %s: a weight that is not finite", name);
	return LLR_OK;
}

static int load(llr_tensor_reader *r, const char *path, void *mv, llr_train_state **tsp, llr_err *err)
{
	(void)tsp;
	mrft_model *m = mv;
	const llr_meta *meta = llr_tr_meta(r);
	const char *fam = llr_meta_get(meta, "family");
	if (!fam || strcmp(fam, FAMILY))
		return llr_err_set(err, LLR_EKIND, "%s: a model of family %s, not an MRF tagger (family=%s)", path, fam ? fam : "lm", FAMILY);
	int rc = (m->meta = llr_meta_new()) ? LLR_OK : llr_err_set(err, LLR_ENOMEM, "out of memory");
	for (size_t i = 0; rc >= 0 && i < llr_meta_count(meta); i++) {
		const char *k, *v;
		llr_meta_at(meta, i, &k, &v);
		if (llr_meta_set(m->meta, k, v) < 0)
			rc = llr_err_set(err, LLR_ENOMEM, "out of memory");
	}
	if (rc >= 0)
		rc = get_int(meta, "tags", 1, MRFT_MAX_TAGS, &m->T, err);
	if (rc >= 0)
		rc = get_int(meta, "features", 1, INT32_MAX, &m->F, err);
	/* the bound training has (tagfit.c: liblbfgs counts in an int), not
	 * one for the largest tag set: few tags may have many features */
	if (rc >= 0 && mrft_nparams(m->F, m->T) > (size_t)INT_MAX)
		rc = llr_err_set(err, LLR_EFORMAT, "meta: %d features and %d tags: %zu parameters, more than training writes (%d)", m->F,
		                 m->T, mrft_nparams(m->F, m->T), INT_MAX);
	if (rc >= 0)
		rc = get_int(meta, "window", 0, MRFT_MAX_WINDOW, &m->M, err);
	if (rc >= 0)
		rc = llr_lex_read_names(r, "tags", m->T, &m->tags, err);
	if (rc >= 0)
		rc = llr_lex_read_names(r, "features", m->F, &m->feats, err);
	size_t trans = mrft_trans(m->F, m->T);
	if (rc >= 0)
		rc = member(r, "params/emit", m->F, m->T, &m->w, 0, trans, err);
	if (rc >= 0)
		rc = member(r, "params/chain", (int64_t)m->T + 2, m->T, &m->w, trans, mrft_nparams(m->F, m->T), err);
	if (rc < 0 && strncmp(err->msg, path, strlen(path)))
		llr_err_prefix(err, "%s", path);
	return rc;
}

static void free_any(void *m)
{
	mrft_model_free(m);
}

int mrft_model_load(const char *path, mrft_model **out, llr_err *err)
{
	void *m = NULL;
	int rc = llr_model_file_load(path, sizeof **out, load, free_any, &m, NULL, err);
	*out = m;
	return rc;
}
