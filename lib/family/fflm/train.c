/*
 * train.c - the feed-forward language model's training job
 * (llr_fflm_train_job) for the driver of lib/train: every predicted token
 * of the corpus (the words of a sentence, then </s>) is a position with
 * its own context, so an epoch is the positions in an order shuffled
 * from the epoch's random state, cut into batches of `batch`; this
 * rank's share of one as a gradient (a distributed run's ranks shuffle
 * the same list, every rank training the positions of its sentences);
 * the dense update (with the L2 penalty of meta key l2); the validation
 * loss over the positions in corpus order; saving.
 */
#include "family/fflm/fflm.h"

#include <math.h>
#include <stdlib.h>

typedef struct ffjob {
	llr_fflm *m;
	const llr_lm_corpus *tc, *vc;
	int batch, C;
	int32_t V, unk;
	size_t n;          /* parameters */
	double l2;         /* the L2 penalty per token (meta key l2) */
	llr_lm_pos *tp, *vp;     /* training and validation positions */
	size_t ntp, nvp;
	size_t *order;     /* this epoch's order of tp */
	int32_t *ctx, *tg; /* a batch's */
	float *lp;
	const llr_train_comm *comm;
} ffjob;

/* A corpus id as the net's: ids past V (a spelling model's signatures)
 * are <unk>, or without one -1. */
static int32_t net_id(const ffjob *J, int32_t id)
{
	return id < J->V ? id : J->unk;
}

/* The contexts and targets of positions p[0..k) of corpus c into the
 * batch arrays (other ranks' positions skipped); the count kept. */
static size_t fill(ffjob *J, const llr_lm_corpus *c, const llr_lm_pos *p, const size_t *idx, size_t k)
{
	size_t b = 0;
	for (size_t i = 0; i < k; i++) {
		const llr_lm_pos *q = &p[idx ? idx[i] : i];
		if (q->sent < 0)
			continue;
		const int32_t *seq = c->ids + q->sent;
		int32_t *x = J->ctx + b * (size_t)J->C;
		fflm_context(seq, q->pos, J->C, x);
		for (int j = 0; j < J->C; j++)
			if (x[j] != LLR_BOS_ID && (x[j] = net_id(J, x[j])) < 0)
				x[j] = LLR_BOS_ID;
		J->tg[b++] = net_id(J, seq[q->pos]);
	}
	return b;
}

static int ff_plan(void *job, llr_rng *r, size_t *nbatches, llr_err *err)
{
	ffjob *J = job;
	size_t n = J->ntp;
	llr_lm_shuffle(J->order, n, r);
	*nbatches = (n + (size_t)J->batch - 1) / (size_t)J->batch;
	return LLR_OK;
}

static int ff_grad(void *job, size_t k, llr_train_state *ts, llr_train_sums *s, llr_err *err)
{
	ffjob *J = job;
	size_t first = k * (size_t)J->batch, cnt = LLR_MIN((size_t)J->batch, J->ntp - first);
	size_t b = fill(J, J->tc, J->tp, J->order + first, cnt);
	memset(llr_ffnet_grads(J->m->net, NULL), 0, J->n * sizeof(float));
	/* every rank draws its own masks' seed from the shared state, even
	 * with no position of its own here, so that the ranks' states stay
	 * one (rank 0's is saved) */
	llr_rng mine, *drop = llr_comm_dropout_rng(J->comm, llr_ffnet_cfg(J->m->net)->dropout > 0.0f, &ts->rng, &mine);
	if (!b)
		return LLR_OK;
	return llr_ffnet_train_step(J->m->net, b, J->ctx, J->tg, drop, &s->nll, &s->ntok, err);
}

/* The L2 penalty's gradient l2 w, on every tensor but the biases, into
 * g, whose step will be g times k: after the clipping, as torch's
 * weight_decay. */
static void add_l2(const ffjob *J, const float *w, float *g, float k)
{
	float f = (float)(J->l2 / (double)k);
	for (size_t i = 0; i < llr_ffnet_n_tensors(J->m->net); i++) {
		const char *name;
		int nd;
		int64_t shape[2];
		size_t off;
		llr_ffnet_tensor_info(J->m->net, i, &name, &nd, shape, &off);
		size_t len = strlen(name), n = nd == 2 ? (size_t)(shape[0] * shape[1]) : (size_t)shape[0];
		if (len >= 2 && !strcmp(name + len - 2, "/b"))
			continue;
		for (size_t j = off; j < off + n; j++)
			g[j] += f * w[j];
	}
}

static int ff_apply(void *job, llr_train_state *ts, int64_t ntok, double clip, double *norm, llr_err *err)
{
	ffjob *J = job;
	float *w = llr_ffnet_params(J->m->net, NULL), *g = llr_ffnet_grads(J->m->net, NULL);
	/* the mean over the batch's tokens, clipped: two passes over g, the
	 * norm's and the step's (a third with --l2, which adds to g) */
	float scale = ntok > 0 ? (float)(1.0 / (double)ntok) : 1.0f;
	*norm = llr_grad_norm_scaled(g, J->n, scale);
	if (!isfinite(*norm))
		return LLR_OK;
	float coef = llr_clip_coef(*norm, clip);
	if (J->l2 > 0)
		add_l2(J, w, g, scale * coef);
	llr_optim_step_scaled(ts->optim, w, g, scale, coef);
	return LLR_OK;
}

/* Validation log-perplexity (nats per predicted token). */
static int ff_evaluate(void *job, double *loss, llr_err *err)
{
	ffjob *J = job;
	double nll = 0;
	int64_t ntok = 0;
	*loss = NAN;
	for (size_t first = 0; first < J->nvp; first += (size_t)J->batch) {
		size_t b = fill(J, J->vc, J->vp + first, NULL, LLR_MIN((size_t)J->batch, J->nvp - first));
		int rc = llr_ffnet_score(J->m->net, b, J->ctx, J->tg, J->lp, NULL, err);
		if (rc == LLR_ENAN)
			return LLR_OK;
		if (rc < 0)
			return rc;
		for (size_t i = 0; i < b; i++)
			if (J->tg[i] >= 0) {
				nll -= J->lp[i];
				ntok++;
			}
	}
	if (isfinite(nll) && ntok)
		*loss = nll / (double)ntok;
	return LLR_OK;
}

static float *ff_params(void *job, float **grads, size_t *n)
{
	ffjob *J = job;
	if (grads)
		*grads = llr_ffnet_grads(J->m->net, NULL);
	return llr_ffnet_params(J->m->net, n);
}

static int ff_save(void *job, const char *path, const llr_train_state *ts, llr_err *err)
{
	return llr_fflm_save(path, ((ffjob *)job)->m, ts, err);
}

static void ff_free(void *job)
{
	ffjob *J = job;
	if (!J)
		return;
	free(J->tp);
	free(J->vp);
	free(J->order);
	free(J->ctx);
	free(J->tg);
	free(J->lp);
	free(J);
}

const llr_train_ops llr_fflm_train_ops = {
    .plan = ff_plan,
    .grad = ff_grad,
    .apply = ff_apply,
    .evaluate = ff_evaluate,
    .params = ff_params,
    .save = ff_save,
    .free = ff_free,
};

int llr_fflm_train_job(llr_fflm *m, const llr_lm_corpus *train, const llr_lm_corpus *valid, int batch,
                       const llr_train_comm *comm, llr_train_job **out, llr_err *err)
{
	*out = NULL;
	if (batch < 1)
		return llr_err_set(err, LLR_EINVAL, "feed-forward training: batch %d: must be positive", batch);
	ffjob *J = llr_calloc(1, sizeof *J);
	llr_train_job *job = llr_calloc(1, sizeof *job);
	if (J) {
		J->m = m;
		J->comm = comm; /* each rank's corpus holds its own sentences; others' are -1 */
		J->tc = train;
		J->vc = valid && valid->sentences ? valid : NULL;
		J->batch = batch;
		J->C = llr_ffnet_cfg(m->net)->order - 1;
		J->V = llr_ffnet_cfg(m->net)->vocab;
		J->unk = m->lex->unk_id;
		J->tp = llr_lm_positions(train, &J->ntp);
		J->vp = J->vc ? llr_lm_positions(J->vc, &J->nvp) : NULL;
		J->order = llr_malloc((J->ntp ? J->ntp : 1) * sizeof *J->order);
		J->ctx = llr_malloc((size_t)batch * (size_t)J->C * sizeof *J->ctx);
		J->tg = llr_malloc((size_t)batch * sizeof *J->tg);
		J->lp = llr_malloc((size_t)batch * sizeof *J->lp);
	}
	if (!J || !job || !J->tp || (J->vc && !J->vp) || !J->order || !J->ctx || !J->tg || !J->lp) {
		ff_free(J);
		free(job);
		return llr_err_set(err, LLR_ENOMEM, "out of memory for the feed-forward model's positions");
	}
	llr_ffnet_params(m->net, &J->n);
	J->l2 = llr_meta_num(m->meta, "l2", 0);
	job->ops = &llr_fflm_train_ops;
	job->state = J;
	job->meta = m->meta;
	job->train_tokens = train->tokens;
	*out = job;
	return LLR_OK;
}
