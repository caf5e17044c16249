/*
 * gen.c - generation from a backoff n-gram model (llr_gen, gen.h;
 * ngram.h): ancestral sampling (temperature, top-k, top-p through
 * llr_sample) or greedy decoding, one sentence at a time from the last
 * order-1 words, every word's natural log p by the ARPA backoff rule
 * (llr_ngram_log10p).  <s> is never drawn, nor <unk> with no_unk; a
 * prefix word outside the vocabulary is <unk>, or, without one, gets 0
 * and cuts the context.  No beam search, no features.
 */
#include "family/ngram/ngram.h"

#include <math.h>
#include <stdlib.h>

typedef struct ngen {
	const llr_ngram *m;
	int order;
	int32_t V, bos, eos, unk;
	int no_unk;
	llr_sampler *sampler;
	float *row;   /* V: log p of every word */
	int32_t *ids; /* <s>, the prefix, the generated words */
	size_t n, cap, npre;
	llr_gen_hyp hs[LLR_GEN_BATCH];
} ngen;

static void ngen_free(void *state)
{
	ngen *q = state;
	llr_sampler_free(q->sampler);
	free(q->row);
	free(q->ids);
	for (int b = 0; b < LLR_GEN_BATCH; b++)
		llr_gen_hyp_free(&q->hs[b]);
	free(q);
}

static int ngen_init(llr_gen *g, llr_err *err)
{
	ngen *q = llr_calloc(1, sizeof *q);
	if (!q)
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	g->state = q;
	const ngram *s = g->m->state;
	q->m = s->m;
	q->order = llr_ngram_order(q->m);
	q->V = llr_ngram_vocab_size(q->m);
	q->bos = llr_ngram_bos(q->m);
	q->eos = llr_ngram_eos(q->m);
	q->unk = llr_ngram_unk(q->m);
	q->no_unk = g->o.no_unk;
	if (!(q->sampler = llr_sampler_new(q->V, err)))
		return llr_err_code(err, LLR_ENOMEM);
	if (!(q->row = llr_malloc((size_t)q->V * sizeof *q->row)))
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	return LLR_OK;
}

static int push(ngen *q, int32_t id)
{
	if (q->n == q->cap) {
		size_t cap = q->cap ? q->cap * 2 : 64;
		int32_t *ids = llr_reallocarray(q->ids, cap, sizeof *ids);
		if (!ids)
			return LLR_ENOMEM;
		q->ids = ids;
		q->cap = cap;
	}
	q->ids[q->n++] = id;
	return LLR_OK;
}

/* log p (natural) of every word after the last order-1 ids. */
static void fill_row(ngen *q)
{
	int nctx = (int)(q->n < (size_t)(q->order - 1) ? q->n : (size_t)(q->order - 1));
	const int32_t *ctx = q->ids + q->n - (size_t)nctx;
	for (int32_t w = 0; w < q->V; w++)
		q->row[w] = (float)(llr_ngram_log10p(q->m, ctx, nctx, w, NULL) * M_LN10);
	if (q->bos >= 0)
		q->row[q->bos] = -INFINITY;
	if (q->no_unk && q->unk >= 0)
		q->row[q->unk] = -INFINITY;
}

static int ngen_start(llr_gen *g, llr_err *err)
{
	ngen *q = g->state;
	q->n = 0;
	if (push(q, q->bos) < 0)
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	for (size_t k = 0; k < g->pre.n; k++) {
		const char *t = llr_gen_pword(g, k);
		int32_t w = llr_ngram_word(q->m, t, strlen(t));
		fill_row(q);
		g->pre.lps[k] = w >= 0 ? q->row[w] : (q->unk >= 0 ? q->row[q->unk] : 0);
		int rc = llr_gen_prefix_mask(g, k, q->row, q->V, err);
		if (rc < 0)
			return rc;
		if (push(q, w >= 0 ? w : q->unk) < 0)
			return llr_err_set(err, LLR_ENOMEM, "out of memory");
	}
	q->npre = q->n;
	return llr_ngram_status(q->m, err); /* a corrupt block of the probing form */
}

static int ngen_sample(llr_gen *g, llr_rng *rng, size_t n, llr_err *err)
{
	ngen *q = g->state;
	for (size_t i = 0; i < n; i++) {
		llr_gen_hyp *h = &q->hs[i];
		llr_gen_hyp_restart(h, g->pre.lp);
		llr_rng_seed(&h->rng, llr_rng_u64(rng));
		q->n = q->npre;
		while (!h->done) {
			fill_row(q);
			int rc = llr_gen_constrain(g, h, q->row, q->V, err);
			if (rc < 0)
				return rc;
			int32_t id = llr_sample(q->sampler, &g->o.sample, q->row, &h->rng);
			if (id < 0)
				return llr_err_set(err, LLR_EINVAL, "the model gives no finite log-probability to any word");
			if (llr_gen_hyp_advance(h, id, q->row[id], q->eos, g->o.max_len) < 0 || (!h->ended && push(q, id) < 0))
				return llr_err_set(err, LLR_ENOMEM, "out of memory");
		}
		g->res[i] = h;
	}
	g->nres = n;
	return llr_ngram_status(q->m, err);
}

static const char *ngen_word(const llr_gen *g, int32_t id)
{
	const ngen *q = g->state;
	return llr_ngram_token(q->m, id);
}

const llr_gen_ops llr_ngram_gen_ops = {
	.init = ngen_init,
	.free = ngen_free,
	.start = ngen_start,
	.sample = ngen_sample,
	.word = ngen_word,
};
