/*
 * train.c - the LSTM language model's training job (llr_rnnlm_train_job)
 * for the driver of lib/train: an epoch's length-bucketed batches of the
 * corpus' pieces, this rank's share of one as a gradient, the update
 * (row-sparse in one process: only the rows a batch used are scaled,
 * clipped, updated and zeroed), the validation loss, the tree output's
 * re-learning in the first epoch and saving; a variable-computation
 * cell's sharpness by the epoch and its penalty on m_t.
 */
#include "family/rnnlm/lmtrain.h"

#include <math.h>
#include <stdlib.h>

typedef struct lmjob {
	llr_rnnlm *m;
	const llr_lm_corpus *tc, *vc;
	llr_lm_train_cfg cfg;
	const llr_train_comm *comm;
	int sparse;               /* one process: row-sparse updates */
	size_t n;                 /* parameters */
	lm_batcher bb;            /* shared by training and validation */
	lm_order ord, vord;       /* this epoch's batches, validation's */
	const llr_lm_piece **mine; /* a batch's pieces this rank trains on */
	const llr_rows *rows;     /* the last gradient's rows (sparse) */
	int nrows;
	int g_clean; /* the gradient is all zero (after a sparse step) */
} lmjob;

/* The sharpness of the mask in epoch + 1 (Jernite: 0.1, then 0.1 more
 * an epoch, up to 1). */
static float vc_lambda(int64_t epoch)
{
	return epoch >= 9 ? 1.0f : 0.1f * (float)(epoch + 1);
}

static int lm_plan(void *job, llr_rng *r, size_t *nbatches, llr_err *err)
{
	lmjob *J = job;
	if (lm_make_order(&J->ord, J->tc, J->cfg.batch, r) < 0)
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	*nbatches = J->ord.nbatches;
	return LLR_OK;
}

/* This rank's share of batch k (all of it in one process). */
static int lm_grad(void *job, size_t k, llr_train_state *ts, llr_train_sums *s, llr_err *err)
{
	lmjob *J = job;
	llr_net *net = J->m->net;
	const llr_lm_piece *const *p = J->ord.p + J->ord.first[k];
	int nb = (int)(J->ord.first[k + 1] - J->ord.first[k]);
	if (J->comm && J->comm->on) {
		int m = 0;
		for (int i = 0; i < nb; i++)
			if (p[i]->sent >= 0)
				J->mine[m++] = p[i];
		p = J->mine;
		nb = m;
	}
	llr_batch bt = nb ? lm_make_batch(&J->bb, J->tc, p, nb) : (llr_batch){0};
	llr_net_set_vc(net, vc_lambda(ts->epoch), J->cfg.vc_target, J->cfg.vc_penalty);
	/* One process reads, updates and zeroes only the rows of the batch in
	 * the row-sparse blocks (the others' gradient is zero); a distributed
	 * run sums the whole gradient across the ranks. */
	if (!J->sparse || !J->g_clean)
		memset(llr_net_grads(net, NULL), 0, J->n * sizeof(float));
	J->g_clean = 0;
	/* each rank's masks from its own seed, drawn by every rank from the
	 * state they share (rank 0's is saved), batch or not */
	llr_rng mine, *drop = llr_comm_dropout_rng(J->comm, J->cfg.dropout > 0.0f, &ts->rng, &mine);
	int rc = nb ? llr_net_train_step(net, &bt, drop, &s->nll, &s->ntok, err) : 0;
	if (rc < 0 && rc != LLR_ENAN)
		return rc;
	J->rows = NULL;
	J->nrows = J->sparse && rc == 0 ? llr_net_rows(net, &J->rows, err) : 0;
	return rc;
}

static int lm_apply(void *job, llr_train_state *ts, int64_t ntok, double clip, double *norm, llr_err *err)
{
	lmjob *J = job;
	float *w = llr_net_params(J->m->net, NULL), *g = llr_net_grads(J->m->net, NULL);
	if (ntok > 0)
		llr_grad_scale_rows(g, J->n, J->rows, J->nrows, (float)(1.0 / (double)ntok));
	*norm = llr_clip_grad_norm_rows(g, J->n, J->rows, J->nrows, clip);
	if (!isfinite(*norm))
		return LLR_OK;
	if (llr_optim_step_rows(ts->optim, w, g, J->rows, J->nrows, err) < 0)
		return llr_err_code(err, LLR_EINVAL);
	if (J->sparse) {
		llr_grad_zero_rows(g, J->n, J->rows, J->nrows);
		J->g_clean = 1;
	}
	return LLR_OK;
}

/* A tree output: re-learn the tree every tree_update batches of the first
 * epoch; in a distributed run every rank then takes rank 0's (each
 * learned from the states of its own share of the batches). */
static int lm_after_step(void *job, const llr_train_state *ts, llr_err *err)
{
	lmjob *J = job;
	llr_net *net = J->m->net;
	int every = J->cfg.tree_update;
	if (llr_net_cfg(net)->output != LLR_OUT_TREE || every <= 0 || ts->epoch > 0 || ts->batch % every)
		return LLR_OK;
	if (llr_net_tree_learn(net, NULL, err) < 0)
		return llr_err_code(err, LLR_EINVAL);
	if (!J->comm || !J->comm->on)
		return LLR_OK;
	int32_t V = llr_net_cfg(net)->vocab;
	int32_t *g = llr_reallocarray(NULL, (size_t)V, sizeof *g);
	if (!g)
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	memcpy(g, llr_net_tree_groups(net), (size_t)V * sizeof *g);
	llr_comm_bcast_i32(J->comm, g, (size_t)V);
	int rc = J->comm->rank != 0 ? llr_net_tree_set_groups(net, g, err) : LLR_OK;
	free(g);
	return rc;
}

/* In a distributed run: the ranks' trees must be the same (they cannot
 * differ unless a re-learning was missed). */
static int lm_epoch_done(void *job, const llr_train_state *ts, llr_err *err)
{
	lmjob *J = job;
	const llr_net *net = J->m->net;
	const int32_t *g = llr_net_tree_groups(net);
	if (!J->comm || !J->comm->on || !g)
		return LLR_OK;
	uint64_t h = 1469598103934665603u; /* FNV-1a over the groups' bytes */
	const unsigned char *b = (const unsigned char *)g;
	for (size_t i = 0; i < (size_t)llr_net_cfg(net)->vocab * sizeof *g; i++)
		h = (h ^ b[i]) * 1099511628211u;
	if (!llr_comm_same(J->comm, h))
		return llr_err_set(err, LLR_EINVAL, "--distributed: after epoch %lld the ranks hold different trees", (long long)ts->epoch);
	return LLR_OK;
}

/* Validation log-perplexity (nats per predicted token). */
static int lm_evaluate(void *job, double *loss, llr_err *err)
{
	lmjob *J = job;
	if (!J->vord.p && lm_make_order(&J->vord, J->vc, J->cfg.batch, NULL) < 0) /* the same every epoch */
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	double nll = 0;
	int64_t ntok = 0;
	*loss = NAN;
	for (size_t k = 0; k < J->vord.nbatches; k++) {
		int nb = (int)(J->vord.first[k + 1] - J->vord.first[k]);
		llr_batch bt = lm_make_batch(&J->bb, J->vc, J->vord.p + J->vord.first[k], nb);
		int rc = llr_net_score(J->m->net, &bt, J->bb.logp, NULL, err);
		if (rc == LLR_ENAN)
			return LLR_OK;
		if (rc < 0)
			return rc;
		for (size_t i = 0; i < (size_t)bt.B * bt.T; i++)
			if (bt.target[i] >= 0) {
				nll -= J->bb.logp[i];
				ntok++;
			}
	}
	if (isfinite(nll) && ntok)
		*loss = nll / (double)ntok;
	return LLR_OK;
}

static float *lm_params(void *job, float **grads, size_t *n)
{
	lmjob *J = job;
	if (grads)
		*grads = llr_net_grads(J->m->net, NULL);
	return llr_net_params(J->m->net, n);
}

/* The model; the best weights of a variable-computation cell with the
 * sharpness they were validated at (their epoch's). */
static int lm_save(void *job, const char *path, const llr_train_state *ts, llr_err *err)
{
	lmjob *J = job;
	llr_net *net = J->m->net;
	float now = llr_net_cfg(net)->vc_lambda;
	if (ts && ts->best)
		llr_net_set_vc(net, vc_lambda(ts->best_epoch > 0 ? ts->best_epoch - 1 : 0), J->cfg.vc_target, J->cfg.vc_penalty);
	int rc = llr_rnnlm_save(path, J->m, ts, err);
	llr_net_set_vc(net, now, J->cfg.vc_target, J->cfg.vc_penalty);
	return rc;
}

static void lm_free(void *job)
{
	lmjob *J = job;
	if (!J)
		return;
	lm_batcher_free(&J->bb);
	lm_order_free(&J->ord);
	lm_order_free(&J->vord);
	free(J->mine);
	free(J);
}

const llr_train_ops llr_rnnlm_train_ops = {
    .plan = lm_plan,
    .grad = lm_grad,
    .apply = lm_apply,
    .after_step = lm_after_step,
    .epoch_done = lm_epoch_done,
    .evaluate = lm_evaluate,
    .params = lm_params,
    .save = lm_save,
    .free = lm_free,
};

int llr_rnnlm_train_job(llr_rnnlm *m, const llr_lm_corpus *train, const llr_lm_corpus *valid, const llr_lm_train_cfg *cfg,
                        const llr_train_comm *comm, llr_train_job **out, llr_err *err)
{
	*out = NULL;
	lmjob *J = llr_calloc(1, sizeof *J);
	llr_train_job *job = llr_calloc(1, sizeof *job);
	if (!J || !job || lm_batcher_init(&J->bb, cfg->batch, cfg->max_len) < 0 ||
	    (comm && comm->on && !(J->mine = llr_malloc((size_t)cfg->batch * sizeof *J->mine)))) {
		lm_free(J);
		free(job);
		return llr_err_set(err, LLR_ENOMEM, "out of memory for batches of %d x %d", cfg->batch, cfg->max_len);
	}
	J->m = m;
	J->tc = train;
	J->vc = valid && valid->sentences ? valid : NULL;
	J->cfg = *cfg;
	J->comm = comm;
	J->sparse = !(comm && comm->on);
	memset(llr_net_grads(m->net, &J->n), 0, J->n * sizeof(float));
	J->g_clean = 1;
	job->ops = &llr_rnnlm_train_ops;
	job->state = J;
	job->meta = m->meta;
	job->train_tokens = train->tokens;
	*out = job;
	return LLR_OK;
}
