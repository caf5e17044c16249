/*
 * train.c - the log-linear language model's training job
 * (llr_loglm_train_job) for the driver of lib/train: every predicted
 * token of the corpus (the words of a sentence, then </s>) is a position,
 * so an epoch is the positions in an order shuffled from the epoch's
 * random state, cut into batches of `batch`; the gradient of a batch is
 * the bias and the chunks of theta its features touched (one llr_rows
 * block), and so is the update (SGD or RMSprop row-sparse, Adam dense):
 * the mean gradient per token, plus l2 w on the touched chunks of theta
 * (an L2 penalty charged where the batch used the weights, so a step
 * costs what its features do), clipped, stepped, then an L1 penalty as
 * truncation toward zero of the touched weights by lr l1.  A distributed
 * run's ranks sum the whole gradient and update densely.  Validation: the
 * loss over the positions in corpus order.
 */
#include "family/loglm/loglm.h"

#include <math.h>
#include <stdlib.h>

typedef struct lljob {
	llr_loglm *m;
	const llr_lm_corpus *tc, *vc;
	int batch, sparse, g_clean;
	double l2, l1;
	int32_t V, unk;
	size_t n;      /* parameters */
	llr_lm_pos *tp, *vp; /* training and validation positions */
	size_t ntp, nvp;
	size_t *order; /* this epoch's order of tp */
	llr_maxent_pos *bp;
	float *lp;
	const llr_rows *rows;
	int nrows;
} lljob;

/* Positions p[idx[0..k)] (or p[0..k)) of corpus c as the batch's (other
 * ranks' skipped); the count kept.  A target past V (a spelling model's
 * signature) is <unk>, or without one not predicted. */
static size_t fill(lljob *J, const llr_lm_corpus *c, const llr_lm_pos *p, const size_t *idx, size_t k)
{
	size_t b = 0;
	for (size_t i = 0; i < k; i++) {
		const llr_lm_pos *q = &p[idx ? idx[i] : i];
		if (q->sent < 0)
			continue;
		const int32_t *seq = c->ids + q->sent;
		int32_t t = seq[q->pos];
		J->bp[b++] = (llr_maxent_pos){seq, q->pos, t < J->V ? t : J->unk};
	}
	return b;
}

static int ll_plan(void *job, llr_rng *r, size_t *nbatches, llr_err *err)
{
	lljob *J = job;
	size_t n = J->ntp;
	llr_lm_shuffle(J->order, n, r);
	*nbatches = (n + (size_t)J->batch - 1) / (size_t)J->batch;
	return LLR_OK;
}

static int ll_grad(void *job, size_t k, llr_train_state *ts, llr_train_sums *s, llr_err *err)
{
	lljob *J = job;
	size_t first = k * (size_t)J->batch, cnt = LLR_MIN((size_t)J->batch, J->ntp - first);
	size_t b = fill(J, J->tc, J->tp, J->order + first, cnt);
	if (!J->sparse || !J->g_clean)
		memset(llr_maxent_grads(J->m->me, NULL), 0, J->n * sizeof(float));
	J->g_clean = 0;
	int rc = b ? llr_maxent_train_step(J->m->me, b, J->bp, &s->nll, &s->ntok, err) : LLR_OK;
	const llr_rows *rows = llr_maxent_rows(J->m->me);
	J->rows = J->sparse && rc == LLR_OK ? rows : NULL;
	J->nrows = J->rows ? 1 : 0;
	return rc;
}

/* The weights of theta the penalties reach: the touched chunks, or all. */
static void penalise(lljob *J, float *w, float *g, double lr, int l1)
{
	const llr_rows *b = J->rows;
	size_t V = (size_t)J->V, H = J->n - V;
	size_t nr = b ? (size_t)b->nrow : 1, len = b ? (size_t)b->cols : H;
	float f2 = (float)J->l2, f1 = (float)(lr * J->l1);
	for (size_t i = 0; i < nr; i++) {
		size_t o = V + (b ? (size_t)b->row[i] * len : 0);
		for (size_t j = o; j < o + len; j++)
			if (!l1)
				g[j] += f2 * w[j];
			else
				w[j] = w[j] > f1 ? w[j] - f1 : w[j] < -f1 ? w[j] + f1 : 0;
	}
}

static int ll_apply(void *job, llr_train_state *ts, int64_t ntok, double clip, double *norm, llr_err *err)
{
	lljob *J = job;
	float *w = llr_maxent_params(J->m->me, NULL), *g = llr_maxent_grads(J->m->me, NULL);
	if (ntok > 0)
		llr_grad_scale_rows(g, J->n, J->rows, J->nrows, (float)(1.0 / (double)ntok));
	if (J->l2 > 0)
		penalise(J, w, g, 0, 0);
	*norm = llr_clip_grad_norm_rows(g, J->n, J->rows, J->nrows, clip);
	if (!isfinite(*norm))
		return LLR_OK;
	if (llr_optim_step_rows(ts->optim, w, g, J->rows, J->nrows, err) < 0)
		return llr_err_code(err, LLR_EINVAL);
	if (J->l1 > 0)
		penalise(J, w, g, llr_optim_cfg(ts->optim)->lr, 1);
	if (J->sparse) {
		llr_grad_zero_rows(g, J->n, J->rows, J->nrows);
		J->g_clean = 1;
	}
	return LLR_OK;
}

/* Validation log-perplexity (nats per predicted token). */
static int ll_evaluate(void *job, double *loss, llr_err *err)
{
	lljob *J = job;
	double nll = 0;
	int64_t ntok = 0;
	*loss = NAN;
	for (size_t first = 0; first < J->nvp; first += (size_t)J->batch) {
		size_t b = fill(J, J->vc, J->vp + first, NULL, LLR_MIN((size_t)J->batch, J->nvp - first));
		int rc = llr_maxent_score(J->m->me, b, J->bp, J->lp, NULL, err);
		if (rc == LLR_ENAN)
			return LLR_OK;
		if (rc < 0)
			return rc;
		for (size_t i = 0; i < b; i++)
			if (J->bp[i].target >= 0) {
				nll -= J->lp[i];
				ntok++;
			}
	}
	if (isfinite(nll) && ntok)
		*loss = nll / (double)ntok;
	return LLR_OK;
}

static float *ll_params(void *job, float **grads, size_t *n)
{
	lljob *J = job;
	if (grads)
		*grads = llr_maxent_grads(J->m->me, NULL);
	return llr_maxent_params(J->m->me, n);
}

static int ll_save(void *job, const char *path, const llr_train_state *ts, llr_err *err)
{
	return llr_loglm_save(path, ((lljob *)job)->m, ts, err);
}

static void ll_free(void *job)
{
	lljob *J = job;
	if (!J)
		return;
	free(J->tp);
	free(J->vp);
	free(J->order);
	free(J->bp);
	free(J->lp);
	free(J);
}

const llr_train_ops llr_loglm_train_ops = {
    .plan = ll_plan,
    .grad = ll_grad,
    .apply = ll_apply,
    .evaluate = ll_evaluate,
    .params = ll_params,
    .save = ll_save,
    .free = ll_free,
};

int llr_loglm_train_job(llr_loglm *m, const llr_lm_corpus *train, const llr_lm_corpus *valid, const llr_loglm_setup *o,
                        const llr_train_comm *comm, llr_train_job **out, llr_err *err)
{
	*out = NULL;
	int batch = o->batch;
	if (batch < 1)
		return llr_err_set(err, LLR_EINVAL, "log-linear training: batch %d: must be positive", batch);
	lljob *J = llr_calloc(1, sizeof *J);
	llr_train_job *job = llr_calloc(1, sizeof *job);
	if (J) {
		J->m = m;
		J->tc = train;
		J->vc = valid && valid->sentences ? valid : NULL;
		J->batch = batch;
		J->sparse = !(comm && comm->on);
		J->l2 = o->l2;
		J->l1 = o->l1;
		J->V = llr_maxent_cfg(m->me)->vocab;
		J->unk = m->lex->unk_id;
		J->tp = llr_lm_positions(train, &J->ntp);
		J->vp = J->vc ? llr_lm_positions(J->vc, &J->nvp) : NULL;
		J->order = llr_malloc((J->ntp ? J->ntp : 1) * sizeof *J->order);
		J->bp = llr_malloc((size_t)batch * sizeof *J->bp);
		J->lp = llr_malloc((size_t)batch * sizeof *J->lp);
	}
	if (!J || !job || !J->tp || (J->vc && !J->vp) || !J->order || !J->bp || !J->lp) {
		ll_free(J);
		free(job);
		return llr_err_set(err, LLR_ENOMEM, "out of memory for the log-linear model's positions");
	}
	llr_maxent_params(m->me, &J->n);
	job->ops = &llr_loglm_train_ops;
	job->state = J;
	job->meta = m->meta;
	job->train_tokens = train->tokens;
	*out = job;
	return LLR_OK;
}
