/*
 * train.c - the encoder-decoder's training job (llr_encdec_train_job)
 * for the driver of lib/train: an epoch's batches of pairs bucketed by
 * source then target length, this rank's share of one (the pairs rank,
 * rank + size, ...) as a gradient, the dense update, the validation loss
 * per target token (</s> included) and saving.
 */
#include "family/family.h"

#include <math.h>
#include <stdlib.h>

typedef struct batcher {
	int32_t *src, *slen, *input, *target;
	int maxB;
	size_t cap_s, cap_t;
} batcher;

typedef struct order {
	int32_t *idx;  /* pairs in batch order */
	size_t *first; /* batch k is idx[first[k] .. first[k+1]) */
	size_t nbatches;
} order;

typedef struct edjob {
	llr_encdec_model *m;
	const llr_encdec_pairs *tp, *vp;
	llr_encdec_train_cfg cfg;
	const llr_train_comm *comm;
	size_t n; /* parameters */
	batcher bb;
	order ord, vord;
	int32_t *share; /* this rank's pairs of a batch (distributed) */
} edjob;

/* A pair's bucket: its source then its target length. */
static uint32_t pair_key(const void *ctx, int32_t k)
{
	const llr_encdec_pairs *p = ctx;
	int64_t sl = (int64_t)(p->soff[k + 1] - p->soff[k]), tl = (int64_t)(p->toff[k + 1] - p->toff[k]);
	return (uint32_t)(LLR_MIN(sl, 4095) * 4096 + LLR_MIN(tl, 4095));
}

/* Length-bucketed batches of B pairs (llr_bucket_batches). */
static int make_order(order *o, const llr_encdec_pairs *p, int B, llr_rng *rng)
{
	size_t n = p->n, nb = (n + (size_t)B - 1) / (size_t)B;
	if (!o->idx) {
		o->idx = llr_calloc(n, sizeof *o->idx);
		o->first = llr_calloc(nb + 1, sizeof *o->first);
		if (!o->idx || !o->first)
			return LLR_ENOMEM;
	}
	return llr_bucket_batches(n, B, rng, pair_key, p, o->idx, o->first, &o->nbatches);
}

static void order_free(order *o)
{
	free(o->idx);
	free(o->first);
}

static int grow(int32_t **a, size_t *cap, size_t want)
{
	if (want <= *cap)
		return LLR_OK;
	int32_t *p = llr_reallocarray(*a, want * 2, sizeof *p);
	if (!p)
		return LLR_ENOMEM;
	*a = p;
	*cap = want * 2;
	return LLR_OK;
}

/* The batch of pairs idx[0 .. B): sources S x B (with </s>), decoder
 * inputs <s> then the target, targets with -1 padding. */
static int make_batch(batcher *bb, const llr_encdec_pairs *p, const int32_t *idx, int B, llr_encdec_batch *out)
{
	int S = 0, T = 0;
	for (int b = 0; b < B; b++) {
		S = LLR_MAX(S, (int)(p->soff[idx[b] + 1] - p->soff[idx[b]]));
		T = LLR_MAX(T, (int)(p->toff[idx[b] + 1] - p->toff[idx[b]]));
	}
	size_t cap_t = bb->cap_t;
	if (grow(&bb->src, &bb->cap_s, (size_t)S * B + 1) < 0 || grow(&bb->input, &bb->cap_t, (size_t)T * B + 1) < 0)
		return LLR_ENOMEM;
	if (bb->cap_t != cap_t || !bb->target) {
		int32_t *t = llr_reallocarray(bb->target, bb->cap_t, sizeof *t);
		if (!t)
			return LLR_ENOMEM;
		bb->target = t;
	}
	if (B > bb->maxB) {
		int32_t *l = llr_reallocarray(bb->slen, (size_t)B, sizeof *l);
		if (!l)
			return LLR_ENOMEM;
		bb->slen = l;
		bb->maxB = B;
	}
	for (int b = 0; b < B; b++) {
		const int32_t *s = p->src + p->soff[idx[b]], *t = p->tgt + p->toff[idx[b]];
		int sl = (int)(p->soff[idx[b] + 1] - p->soff[idx[b]]), tl = (int)(p->toff[idx[b] + 1] - p->toff[idx[b]]);
		bb->slen[b] = sl;
		for (int j = 0; j < S; j++)
			bb->src[(size_t)j * B + b] = j < sl ? s[j] : 0;
		for (int j = 0; j < T; j++) {
			bb->input[(size_t)j * B + b] = j == 0 ? LLR_BOS_ID : j < tl ? t[j - 1] : t[0];
			bb->target[(size_t)j * B + b] = j < tl ? t[j] : -1;
		}
	}
	*out = (llr_encdec_batch){.B = B, .S = S, .T = T, .src = bb->src, .src_len = bb->slen, .input = bb->input, .target = bb->target};
	return LLR_OK;
}

static int ed_plan(void *job, llr_rng *r, size_t *nbatches, llr_err *err)
{
	edjob *J = job;
	if (make_order(&J->ord, J->tp, J->cfg.batch, r) < 0)
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	*nbatches = J->ord.nbatches;
	return LLR_OK;
}

/* The gradient of this rank's share of batch k, from zero. */
static int ed_grad(void *job, size_t k, llr_train_state *ts, llr_train_sums *s, llr_err *err)
{
	edjob *J = job;
	llr_encdec *net = J->m->net;
	memset(llr_encdec_grads(net, NULL), 0, J->n * sizeof(float));
	const int32_t *idx = J->ord.idx + J->ord.first[k];
	int nb = (int)(J->ord.first[k + 1] - J->ord.first[k]), mine = 0;
	if (J->comm && J->comm->on) {
		for (int j = J->comm->rank; j < nb; j += J->comm->size)
			J->share[mine++] = idx[j];
		idx = J->share;
		nb = mine;
	}
	llr_rng mine_rng, *rng = llr_comm_dropout_rng(J->comm, J->cfg.dropout, &ts->rng, &mine_rng);
	if (nb == 0)
		return LLR_OK; /* fewer pairs in the batch than ranks */
	llr_encdec_batch bt;
	if (make_batch(&J->bb, J->tp, idx, nb, &bt) < 0)
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	int rc = llr_encdec_train_step(net, &bt, rng, &s->nll, &s->ntok, err);
	return rc >= 0 && !isfinite(s->nll) ? LLR_ENAN : rc;
}

static int ed_apply(void *job, llr_train_state *ts, int64_t ntok, double clip, double *norm, llr_err *err)
{
	edjob *J = job;
	float *w = llr_encdec_params(J->m->net, NULL), *g = llr_encdec_grads(J->m->net, NULL);
	if (ntok > 0) {
		float scale = (float)(1.0 / (double)ntok);
		for (size_t i = 0; i < J->n; i++)
			g[i] *= scale;
	}
	*norm = llr_clip_grad_norm(g, J->n, clip);
	if (isfinite(*norm))
		llr_optim_step(ts->optim, w, g);
	return LLR_OK;
}

/* Validation log-perplexity (nats per target token, </s> included). */
static int ed_evaluate(void *job, double *loss, llr_err *err)
{
	edjob *J = job;
	int B = J->cfg.batch;
	if (!J->vord.idx && make_order(&J->vord, J->vp, B, NULL) < 0)
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	float *lp = llr_calloc((size_t)B * (size_t)J->cfg.max_len + 1, sizeof *lp);
	if (!lp)
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	double nll = 0;
	int64_t ntok = 0;
	int rc = LLR_OK;
	for (size_t k = 0; rc == LLR_OK && k < J->vord.nbatches; k++) {
		int nb = (int)(J->vord.first[k + 1] - J->vord.first[k]);
		llr_encdec_batch bt;
		if (make_batch(&J->bb, J->vp, J->vord.idx + J->vord.first[k], nb, &bt) < 0)
			rc = llr_err_set(err, LLR_ENOMEM, "out of memory");
		else
			rc = llr_encdec_score(J->m->net, &bt, lp, NULL, err);
		for (size_t i = 0; rc == LLR_OK && i < (size_t)bt.T * (size_t)nb; i++)
			if (bt.target[i] >= 0) {
				nll -= lp[i];
				ntok++;
			}
	}
	free(lp);
	*loss = ntok ? nll / (double)ntok : NAN;
	return rc < 0 ? rc : LLR_OK;
}

static float *ed_params(void *job, float **grads, size_t *n)
{
	edjob *J = job;
	if (grads)
		*grads = llr_encdec_grads(J->m->net, NULL);
	return llr_encdec_params(J->m->net, n);
}

static int ed_save(void *job, const char *path, const llr_train_state *ts, llr_err *err)
{
	return llr_encdec_model_save(path, ((edjob *)job)->m, ts, err);
}

static void ed_free(void *job)
{
	edjob *J = job;
	if (!J)
		return;
	free(J->bb.src);
	free(J->bb.slen);
	free(J->bb.input);
	free(J->bb.target);
	order_free(&J->ord);
	order_free(&J->vord);
	free(J->share);
	free(J);
}

const llr_train_ops llr_encdec_train_ops = {
    .plan = ed_plan,
    .grad = ed_grad,
    .apply = ed_apply,
    .evaluate = ed_evaluate,
    .params = ed_params,
    .save = ed_save,
    .free = ed_free,
};

int llr_encdec_train_job(llr_encdec_model *m, const llr_encdec_pairs *train, const llr_encdec_pairs *valid,
                         const llr_encdec_train_cfg *cfg, const llr_train_comm *comm, llr_train_job **out, llr_err *err)
{
	*out = NULL;
	edjob *J = llr_calloc(1, sizeof *J);
	llr_train_job *job = llr_calloc(1, sizeof *job);
	if (!J || !job || (comm && comm->on && !(J->share = llr_calloc((size_t)cfg->batch, sizeof *J->share)))) {
		ed_free(J);
		free(job);
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	}
	J->m = m;
	J->tp = train;
	J->vp = valid && valid->n ? valid : NULL;
	J->cfg = *cfg;
	J->comm = comm;
	llr_encdec_params(m->net, &J->n);
	job->ops = &llr_encdec_train_ops;
	job->state = J;
	job->meta = m->meta;
	job->train_tokens = train->tokens;
	*out = job;
	return LLR_OK;
}
