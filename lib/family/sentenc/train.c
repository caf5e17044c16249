/*
 * train.c - the discourse sentence encoder's training job
 * (llr_senc_train_job) for the driver of lib/train: an epoch's batches of
 * one task each (every task's examples shuffled, --task-cap of them kept,
 * cut into batches, the batches of all tasks shuffled together), this
 * rank's share of one as the gradient of the mean loss over the whole
 * batch, the update (row-sparse clipping and zeroing in one process, as
 * the dense pass would give), the validation error (the mean over the
 * tasks of 100 minus the accuracy) and saving with the best epoch's
 * accuracies in the meta.  The job's train_loss is per example: a
 * classifier predicts one label an example, whatever its tokens.
 */
#include "family/family.h"

#include <math.h>
#include <stdlib.h>

static const char *const task_names[3] = {"order", "next", "conj"};

typedef struct sjob {
	llr_senc_model *m;
	const llr_disc_set *tr, *va;
	llr_senc_train_cfg cfg;
	const llr_train_comm *comm;
	int dist; /* several ranks: dense gradients, summed */
	size_t n; /* parameters */
	float *w, *g;
	llr_disc_batch_buf buf;
	size_t *order[3]; /* a task's examples by their index in the file */
	size_t *mine;     /* this rank's share of a batch, indices into tr */
	size_t *plan;     /* batch k: task plan[2k], first example plan[2k+1] */
	size_t nplan;
	const llr_rows *rows; /* the last gradient's rows (one process) */
	int nrows;
	size_t ex_k;  /* train_loss: the examples of batches [0, ex_k) */
	int64_t ex_n; /* of this epoch */
	double loss[3], acc[3]; /* the last validation (NaN: a task not validated) */
	int fresh;              /* validated since the last save */
} sjob;

static void shuffle(size_t *a, size_t n, llr_rng *r)
{
	for (size_t i = n; i > 1; i--) {
		size_t j = (size_t)llr_rng_below(r, i), x = a[i - 1];
		a[i - 1] = a[j];
		a[j] = x;
	}
}

/* The examples of task t an epoch trains: all, or task_cap of them. */
static size_t epoch_examples(const sjob *J, int t)
{
	size_t n = J->tr->task[t].total;
	return J->cfg.task_cap > 0 && (uint64_t)J->cfg.task_cap < n ? (size_t)J->cfg.task_cap : n;
}

/* Batch k's task and its examples (indices in the file). */
static int batch_of(const sjob *J, size_t k, const size_t **idx, size_t *n)
{
	int t = (int)J->plan[2 * k];
	size_t s = J->plan[2 * k + 1], total = epoch_examples(J, t), bs = (size_t)J->cfg.batch;
	*idx = J->order[t] + s;
	*n = total - s < bs ? total - s : bs;
	return t;
}

static int sj_plan(void *job, llr_rng *r, size_t *nbatches, llr_err *err)
{
	sjob *J = job;
	(void)err;
	size_t bs = (size_t)J->cfg.batch;
	J->nplan = 0;
	for (int t = 0; t < 3; t++) {
		size_t n = J->tr->task[t].total;
		if (!(J->cfg.tasks & (1 << t)))
			continue;
		for (size_t i = 0; i < n; i++)
			J->order[t][i] = i;
		shuffle(J->order[t], n, r);
		n = epoch_examples(J, t);
		for (size_t s = 0; s < n; s += bs) {
			J->plan[2 * J->nplan] = (size_t)t;
			J->plan[2 * J->nplan + 1] = s;
			J->nplan++;
		}
	}
	for (size_t i = J->nplan; i > 1; i--) {
		size_t j = (size_t)llr_rng_below(r, i);
		size_t a = J->plan[2 * (i - 1)], b = J->plan[2 * (i - 1) + 1];
		J->plan[2 * (i - 1)] = J->plan[2 * j];
		J->plan[2 * (i - 1) + 1] = J->plan[2 * j + 1];
		J->plan[2 * j] = a;
		J->plan[2 * j + 1] = b;
	}
	J->ex_k = 0;
	J->ex_n = 0;
	*nbatches = J->nplan;
	return LLR_OK;
}

/* This rank's share of batch k: the gradient of the mean loss over the
 * whole batch (its m examples' mean scaled by m / n), s->nll their
 * summed loss, s->ntok their tokens. */
static int sj_grad(void *job, size_t k, llr_train_state *ts, llr_train_sums *s, llr_err *err)
{
	sjob *J = job;
	const size_t *idx;
	size_t n, m = 0;
	int t = batch_of(J, k, &idx, &n);
	size_t N = J->dist ? (size_t)J->comm->size : 1, r = J->dist ? (size_t)J->comm->rank : 0;
	for (size_t i = 0; i < n; i++)
		if (idx[i] % N == r)
			J->mine[m++] = idx[i] / N;
	if (J->dist) /* the summed gradient's rows are every rank's */
		memset(J->g, 0, J->n * sizeof *J->g);
	llr_rng mine_rng, *rng = llr_comm_dropout_rng(J->comm, J->cfg.dropout, &ts->rng, &mine_rng);
	if (m) {
		llr_senc_batch b;
		if (llr_disc_set_batch(J->tr, t, J->mine, m, &J->buf, &b) != LLR_OK)
			return llr_err_set(err, LLR_ENOMEM, "out of memory");
		b.rng = rng;
		b.next_batch_negatives = J->cfg.next_batch_negatives;
		if (llr_senc_run(J->m->enc, &b, 1, &s->nll, NULL, NULL, err) < 0)
			return llr_err_code(err, LLR_EINVAL);
		s->ntok = (int64_t)J->buf.tokens;
		if (m < n) {
			float f = (float)((double)m / (double)n);
			for (size_t i = 0; i < J->n; i++)
				J->g[i] *= f;
		}
	}
	/* One process: the gradient is zero outside the embedding rows the
	 * batch used, so only those are clipped and zeroed after the update. */
	J->rows = NULL;
	J->nrows = 0;
	if (!J->dist && (J->nrows = llr_senc_rows(J->m->enc, &J->rows, err)) < 0)
		return llr_err_code(err, LLR_ENOMEM);
	return isfinite(s->nll) ? LLR_OK : LLR_ENAN;
}

/* The gradient is already the batch's mean: ntok does not scale it. */
static int sj_apply(void *job, llr_train_state *ts, int64_t ntok, double clip, double *norm, llr_err *err)
{
	sjob *J = job;
	(void)ntok;
	(void)err;
	*norm = J->dist ? llr_clip_grad_norm(J->g, J->n, clip) : llr_clip_grad_norm_rows(J->g, J->n, J->rows, J->nrows, clip);
	if (!isfinite(*norm))
		return LLR_OK;
	llr_optim_step(ts->optim, J->w, J->g);
	if (!J->dist)
		llr_grad_zero_rows(J->g, J->n, J->rows, J->nrows);
	return LLR_OK;
}

/* The epoch's mean loss per example over its batches [0, ts->batch). */
static double sj_train_loss(void *job, const llr_train_state *ts)
{
	sjob *J = job;
	for (; J->ex_k < (size_t)ts->batch && J->ex_k < J->nplan; J->ex_k++) {
		const size_t *idx;
		size_t n;
		batch_of(J, J->ex_k, &idx, &n);
		J->ex_n += (int64_t)n;
	}
	return J->ex_n ? ts->epoch_nll / (double)J->ex_n : NAN;
}

/* Each task's validation loss and accuracy; their mean error rate in
 * points (accuracy, not the loss, decides: an overconfident model's loss
 * can rise for epochs while its accuracy still climbs).  NaN when a
 * loss is not finite. */
static int sj_evaluate(void *job, double *v, llr_err *err)
{
	sjob *J = job;
	const llr_disc_set *d = J->va;
	size_t bs = (size_t)J->cfg.batch, *idx = llr_calloc(bs, sizeof *idx);
	if (!idx)
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	double mean = 0;
	int nt = 0, rc = LLR_OK;
	for (int t = 0; t < 3; t++) {
		J->loss[t] = J->acc[t] = NAN;
		if (!(J->cfg.tasks & (1 << t)) || d->task[t].n == 0)
			continue;
		double l = 0;
		size_t correct = 0;
		for (size_t s = 0; rc == LLR_OK && s < d->task[t].n; s += bs) {
			size_t k = d->task[t].n - s < bs ? d->task[t].n - s : bs;
			for (size_t i = 0; i < k; i++)
				idx[i] = s + i;
			llr_senc_batch b;
			double bl = 0;
			if (llr_disc_set_batch(d, t, idx, k, &J->buf, &b) != LLR_OK)
				rc = llr_err_set(err, LLR_ENOMEM, "out of memory");
			else
				rc = llr_senc_run(J->m->enc, &b, 0, &bl, &correct, NULL, err);
			l += bl;
		}
		J->loss[t] = l / (double)d->task[t].n;
		J->acc[t] = 100.0 * (double)correct / (double)d->task[t].n;
		mean += 100.0 - J->acc[t];
		nt++;
		if (!isfinite(J->loss[t]))
			mean = NAN;
	}
	free(idx);
	*v = nt ? mean / nt : NAN;
	J->fresh = 1;
	return rc;
}

static float *sj_params(void *job, float **grads, size_t *n)
{
	sjob *J = job;
	if (grads)
		*grads = J->g;
	if (n)
		*n = J->n;
	return J->w;
}

/* The meta's epochs_trained and, after a validation that made a new
 * best, that epoch's accuracies. */
static int sj_save(void *job, const char *path, const llr_train_state *ts, llr_err *err)
{
	sjob *J = job;
	llr_meta *m = J->m->meta;
	int rc = llr_meta_setf(m, "epochs_trained", "%lld", (long long)ts->epoch);
	for (int t = 0; J->fresh && ts->best_epoch == ts->epoch && t < 3; t++) {
		char k[32];
		snprintf(k, sizeof k, "valid_%s_acc", task_names[t]);
		if (isfinite(J->acc[t]))
			rc |= llr_meta_setf(m, k, "%.4f", J->acc[t]);
	}
	J->fresh = 0;
	if (rc < 0)
		return llr_err_set(err, LLR_ENOMEM, "%s: out of memory", path);
	return llr_senc_model_save(path, J->m, ts, err);
}

static void sj_free(void *job)
{
	sjob *J = job;
	if (!J)
		return;
	llr_disc_batch_buf_free(&J->buf);
	for (int t = 0; t < 3; t++)
		free(J->order[t]);
	free(J->mine);
	free(J->plan);
	free(J);
}

const llr_train_ops llr_senc_train_ops = {
    .plan = sj_plan,
    .grad = sj_grad,
    .apply = sj_apply,
    .train_loss = sj_train_loss,
    .evaluate = sj_evaluate,
    .params = sj_params,
    .save = sj_save,
    .free = sj_free,
};

/* Every rank read every line, so they agree on the classes and the
 * sizes, and they must plan the same batches: a disagreement would sum
 * gradients of different lengths, or hang. */
static int ranks_agree(const sjob *J, llr_err *err)
{
	uint64_t h = 1469598103934665603u; /* FNV-1a */
	uint64_t sizes[7] = {J->n, (uint64_t)J->m->n_conj, J->tr->task[0].total, J->tr->task[1].total, J->tr->task[2].total,
	                     (uint64_t)J->cfg.batch, (uint64_t)J->cfg.task_cap};
	for (size_t i = 0; i < 7; i++)
		h = (h ^ sizes[i]) * 1099511628211u;
	if (!llr_comm_same(J->comm, h))
		return llr_err_set(err, LLR_EINVAL, "--distributed: the ranks read the training pairs differently, or were given another --batch or --task-cap");
	return LLR_OK;
}

int llr_senc_train_job(llr_senc_model *m, const llr_disc_set *train, const llr_disc_set *valid, const llr_senc_train_cfg *cfg,
                       const llr_train_comm *comm, llr_train_job **out, llr_err *err)
{
	*out = NULL;
	sjob *J = llr_calloc(1, sizeof *J);
	llr_train_job *job = llr_calloc(1, sizeof *job);
	size_t nb = 0;
	for (int t = 0; J && t < 3; t++) {
		J->order[t] = llr_calloc(train->task[t].total + 1, sizeof *J->order[t]);
		nb += train->task[t].total / (size_t)cfg->batch + 1;
	}
	if (!J || !job || !J->order[0] || !J->order[1] || !J->order[2] || !(J->mine = llr_calloc((size_t)cfg->batch, sizeof *J->mine)) ||
	    !(J->plan = llr_calloc(2 * nb, sizeof *J->plan))) {
		sj_free(J);
		free(job);
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	}
	J->m = m;
	J->tr = train;
	J->va = valid;
	J->cfg = *cfg;
	J->comm = comm;
	J->dist = comm && comm->on;
	J->n = llr_senc_n_params(m->enc);
	J->w = llr_senc_params(m->enc);
	J->g = llr_senc_grads(m->enc);
	int64_t tokens = (int64_t)train->tokens; /* every shard's */
	llr_comm_sum_i64(comm, &tokens, 1);
	int rc = ranks_agree(J, err);
	if (rc == LLR_OK && llr_meta_set(m->meta, "valid_criterion", "error") < 0) /* for the loader (llr_senc_model_load) */
		rc = llr_err_set(err, LLR_ENOMEM, "out of memory");
	if (rc == LLR_OK && valid && !(valid->task[0].n + valid->task[1].n + valid->task[2].n))
		rc = llr_err_set(err, LLR_EINVAL, "no validation examples of the tasks trained");
	if (rc < 0) {
		sj_free(J);
		free(job);
		return rc;
	}
	for (int t = 0; t < 3; t++)
		J->loss[t] = J->acc[t] = NAN;
	job->ops = &llr_senc_train_ops;
	job->state = J;
	job->meta = m->meta;
	job->train_tokens = tokens;
	job->error_rate = 1;
	*out = job;
	return LLR_OK;
}

int llr_senc_train_init(llr_senc_model *m, const llr_senc_config *c, uint64_t seed, const llr_optim_config *oc, llr_train_state *ts,
                        llr_err *err)
{
	llr_senc_config cc = *c;
	cc.n_conj = m->n_conj;
	if (!(m->enc = llr_senc_new(&cc, m->lex->psi ? m->lex->psi : m->lex->phi, err)))
		return llr_err_code(err, LLR_EINVAL);
	llr_rng r;
	llr_rng_seed(&r, seed);
	llr_senc_init(m->enc, &r);
	*ts = (llr_train_state){.lr = oc->lr, .best_valid = INFINITY, .last_valid = INFINITY};
	if (!(ts->optim = llr_optim_new(oc, llr_senc_n_params(m->enc), err)))
		return llr_err_code(err, LLR_ENOMEM);
	llr_rng_seed(&ts->rng_epoch, seed + 1);
	llr_rng_seed(&ts->rng, seed + 2);
	return LLR_OK;
}

int llr_senc_train_valid(const llr_train_job *job, double loss[3], double acc[3])
{
	if (!job || job->ops != &llr_senc_train_ops)
		return LLR_EINVAL;
	const sjob *J = job->state;
	memcpy(loss, J->loss, sizeof J->loss);
	memcpy(acc, J->acc, sizeof J->acc);
	return LLR_OK;
}
