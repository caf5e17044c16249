/*
 * mrf.c - the chain MRF family behind llr_model (family.h; mrf.h): a
 * batch of sentences scored as one corpus (their words and </s> joined,
 * n tokens), token t getting
 *   b(x_t) + sum_{k=1..K, t-k in the batch} theta_k(x_{t-k}, x_t) - B(n) / n,
 * B(n) the lifted bound on log Z over corpora of n tokens (bound.c, the
 * dual tightened; it depends on n alone, so it is kept for the last n
 * seen).  The sum over the batch is S(x) - B(n) <= S(x) - log Z = log p(x):
 * a lower bound on the batch's log-likelihood, never the likelihood
 * itself.  With the norm check (score --check-norm) the batch's exact
 * log Z by dynamic programming when (V+1)^K V n <= MRF_EXACT_MAX, and
 * its error exp(log Z - B(n)) - 1 (in [-1, 0]: the probabilities the
 * bounded scores give all corpora of n tokens sum to at most 1); beyond
 * that limit the check is refused.  A sentence vector (score --embed): the
 * mean of its words' [u_1 .. u_K, v_1 .. v_K] (2 K D numbers; a word
 * alone gives its own).  A word outside the vocabulary is <unk>; a model
 * without <unk> refuses it.
 */
#include "family/mrf/mrf.h"

#include <math.h>
#include <stdlib.h>

typedef struct mrf {
	mrf_model *m;
	mrf_ws *ws;
	double *delta;
	int64_t last_n; /* the bound's n, 0 none yet */
	double last_b;
	int32_t *ids;
	size_t cap;
} mrf;

static void mrf_close(void *state)
{
	mrf *r = state;
	mrf_model_free(r->m);
	mrf_ws_free(r->ws);
	free(r->delta);
	free(r->ids);
	free(r);
}

static int mrf_open(llr_model *m, const char *path, llr_err *err)
{
	mrf *r;
	int rc = llr_family_open_closed(m, path, sizeof *r, (void **)&r, err);
	if (rc < 0 || (rc = mrf_model_load(path, &r->m, err)) < 0)
		return rc;
	const mrf_dims *d = &r->m->d;
	if (!(r->ws = mrf_ws_new(d)) || !(r->delta = llr_calloc((size_t)d->K * d->V, sizeof *r->delta)))
		return llr_err_set(err, LLR_ENOMEM, "%s: out of memory (V = %d)", path, d->V);
	return LLR_OK;
}

static void mrf_describe(const llr_model *m, llr_model_info *info)
{
	const mrf *r = m->state;
	llr_wordlm_describe(r->m->lex, r->m->d.K + 1, info);
	info->embed = r->m->d.D;
	info->dim = 2 * r->m->d.K * r->m->d.D;
	info->embedding = "mrf-uv";
}

static const llr_meta *mrf_meta(const llr_model *m)
{
	const mrf *r = m->state;
	return r->m->meta;
}

static const char *mrf_word(const llr_model *m, int64_t i)
{
	const mrf *r = m->state;
	return llr_strmap_str(r->m->lex->vocab, (int32_t)i);
}

/* The id of w (<unk> when unseen, *oov set), or LLR_EINVAL. */
static int32_t word_id(const mrf *r, const char *w, int *oov, llr_err *err)
{
	llr_rnnlm lm = {.lex = r->m->lex};
	return llr_rnnlm_target(&lm, w, strlen(w), oov, err);
}

/* The batch's ids, words then </s> a sentence, into r->ids (*n of them). */
static int batch_ids(mrf *r, const llr_sentence *s, size_t B, unsigned char *oov, size_t *n, llr_err *err)
{
	size_t k = 0;
	for (size_t b = 0; b < B; b++)
		k += s[b].n + 1;
	if (k > r->cap) {
		int32_t *ids = llr_reallocarray(r->ids, k, sizeof *ids);
		if (!ids)
			return llr_err_set(err, LLR_ENOMEM, "out of memory for %zu tokens", k);
		r->ids = ids;
		r->cap = k;
	}
	k = 0;
	for (size_t b = 0; b < B; b++) {
		for (size_t t = 0; t < s[b].n; t++, k++) {
			int o = 0;
			int32_t id = word_id(r, s[b].words[t], &o, err);
			if (id < 0)
				return id;
			r->ids[k] = id;
			if (oov)
				oov[k] = (unsigned char)o;
		}
		if (oov)
			oov[k] = 0;
		r->ids[k++] = r->m->lex->eos_id;
	}
	*n = k;
	return LLR_OK;
}

static int mrf_score(llr_model *m, const llr_sentence *s, size_t B, double *logp, unsigned char *oov, llr_norm_stat *norm,
                     llr_err *err)
{
	mrf *r = m->state;
	const mrf_dims *d = &r->m->d;
	const double *par = r->m->par;
	size_t n = 0;
	int rc = batch_ids(r, s, B, oov, &n, err);
	if (rc < 0)
		return rc;
	double logz = NAN;
	if (m->opts.check_norm && isnan(logz = mrf_exact_logz(d, par, (int64_t)n)))
		return llr_err_set(err, LLR_EINVAL,
		                   "%s: --check-norm: a batch of %zu tokens is too long for the exact log-partition of a chain MRF "
		                   "((V+1)^K V n = %.3g steps, the limit %.3g)",
		                   m->path, n, pow(d->V + 1, d->K) * d->V * (double)n, MRF_EXACT_MAX);
	if (r->last_n != (int64_t)n) {
		memset(r->delta, 0, (size_t)d->K * d->V * sizeof *r->delta);
		r->last_b = mrf_tighten(r->ws, d, par, (int64_t)n, r->delta, 200, 1e3, MRF_CHAIN_AUTO);
		r->last_n = (int64_t)n;
	}
	if (!isfinite(r->last_b))
		return llr_err_set(err, LLR_ENAN, "%s: the bound on log Z is not finite (n = %zu)", m->path, n);
	for (size_t t = 0; t < n; t++) {
		double e = par[r->ids[t]] - r->last_b / (double)n;
		for (int k = 1; k <= d->K && (size_t)k <= t; k++)
			e += mrf_theta(d, par, k, r->ids[t - (size_t)k], r->ids[t]);
		logp[t] = e;
	}
	if (m->opts.check_norm && norm) {
		double e = expm1(logz - r->last_b);
		*norm = (llr_norm_stat){.err = e, .lo = fabs(e), .hi = fabs(e)};
	}
	return LLR_OK;
}

static int mrf_embed(llr_model *m, const llr_sentence *s, size_t B, float *vec, unsigned char *oov, llr_err *err)
{
	mrf *r = m->state;
	const mrf_dims *d = &r->m->d;
	size_t dim = 2 * (size_t)d->K * d->D, o = 0;
	for (size_t b = 0; b < B; b++) {
		float *v = vec + b * dim;
		memset(v, 0, dim * sizeof *v);
		for (size_t t = 0; t < s[b].n; t++, o++) {
			int u = 0;
			int32_t id = word_id(r, s[b].words[t], &u, err);
			if (id < 0)
				return id;
			if (oov)
				oov[o] = (unsigned char)u;
			for (int k = 1; k <= d->K; k++)
				for (int j = 0; j < d->D; j++) {
					v[(size_t)(k - 1) * d->D + j] += (float)(r->m->par[mrf_u_off(d, k) + (size_t)id * d->D + j] / s[b].n);
					v[(size_t)(d->K + k - 1) * d->D + j] +=
					    (float)(r->m->par[mrf_v_off(d, k) + (size_t)id * d->D + j] / s[b].n);
				}
		}
	}
	return LLR_OK;
}

const llr_family llr_family_mrf = {
	.name = "chain-mrf",
	.what = "chain MRF language models",
	.family_key = "chain-mrf",
	.open = mrf_open,
	.close = mrf_close,
	.describe = mrf_describe,
	.meta = mrf_meta,
	.score = mrf_score,
	.embed = mrf_embed,
	.word = mrf_word,
	.no_pairs = LLR_LM_NO_PAIRS,
	.trainer = &llr_mrf_trainer,
};
