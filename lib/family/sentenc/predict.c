/*
 * predict.c - a sentence encoder's predictions (llr_model_predict,
 * score(1) --task): the disc-pairs examples of a file read over the
 * model's vocabulary, each task's run through its head a batch at a
 * time, every example's gold and predicted label handed to the caller.
 */
#include "family/sentenc/predict.h"

#include <stdio.h>
#include <stdlib.h>

static const char *const task_name[3] = {"ORDER", "NEXT", "CONJ"};

typedef struct predictor {
	const llr_senc_model *m;
	const llr_disc_set *d;
	size_t batch;
	int (*each)(void *ctx, const llr_prediction *p);
	void *ctx;
	llr_prediction p;
	size_t *idx;
	int32_t *pred;
	llr_disc_batch_buf buf;
} predictor;

/* Hand over the k examples of batch b: their labels as disc-pairs writes
 * them (CONJ's by class name). */
static int hand_over(predictor *P, int t, const llr_senc_batch *b, size_t k)
{
	char gold[24], pred[24];
	for (size_t i = 0; i < k; i++) {
		if (t == 2) {
			P->p.gold = P->m->conj[b->label[i]];
			P->p.pred = P->m->conj[P->pred[i]];
		} else {
			snprintf(gold, sizeof gold, "%d", (int)b->label[i]);
			snprintf(pred, sizeof pred, "%d", (int)P->pred[i]);
			P->p.gold = gold;
			P->p.pred = pred;
		}
		P->p.n++;
		P->p.done++;
		P->p.correct += b->label[i] == P->pred[i];
		int rc = P->each(P->ctx, &P->p);
		if (rc)
			return rc;
	}
	return 0;
}

/* Every example of task index t, then its end. */
static int predict_task(predictor *P, int t, llr_err *err)
{
	const llr_disc_set_task *T = &P->d->task[t];
	P->p = (llr_prediction){.task = 1 << t, .name = task_name[t], .done = P->p.done, .total = P->p.total};
	for (size_t s = 0; s < T->n; s += P->batch) {
		size_t k = T->n - s < P->batch ? T->n - s : P->batch;
		for (size_t i = 0; i < k; i++)
			P->idx[i] = s + i;
		llr_senc_batch b;
		if (llr_disc_set_batch(P->d, t, P->idx, k, &P->buf, &b) != LLR_OK)
			return llr_err_set(err, LLR_ENOMEM, "out of memory for a batch of %zu examples", k);
		int rc = llr_senc_run(P->m->enc, &b, 0, NULL, NULL, P->pred, err); /* hand_over counts the right ones */
		if (rc < 0 || (rc = hand_over(P, t, &b, k)))
			return rc;
	}
	P->p.gold = P->p.pred = NULL;
	return P->each(P->ctx, &P->p);
}

int llr_sentenc_predict(llr_senc_model *m, const char *model_path, unsigned tasks, const char *path, size_t batch,
                        int (*each)(void *ctx, const llr_prediction *p), void *ctx, llr_err *err)
{
	unsigned have = (unsigned)llr_senc_cfg(m->enc)->tasks;
	if (!(tasks & have))
		return llr_err_set(err, LLR_EINVAL, "%s: the model has no head for the task asked for", model_path);
	tasks &= have;
	llr_disc_set d = {.conj = m->conj, .n_conj = m->n_conj};
	int rc = llr_disc_set_read(&d, path, m->lex->vocab, m->lex->unk_id, (int)tasks, 0, err);
	if (rc != LLR_OK)
		return rc;
	predictor P = {.m = m, .d = &d, .batch = batch, .each = each, .ctx = ctx};
	for (int t = 0; t < 3; t++)
		if (tasks & (1u << t))
			P.p.total += d.task[t].n;
	P.idx = llr_reallocarray(NULL, batch, sizeof *P.idx);
	P.pred = llr_reallocarray(NULL, batch, sizeof *P.pred);
	if (!P.idx || !P.pred)
		rc = llr_err_set(err, LLR_ENOMEM, "out of memory for a batch of %zu examples", batch);
	for (int t = 0; t < 3 && !rc; t++)
		if (tasks & (1u << t))
			rc = predict_task(&P, t, err);
	free(P.idx);
	free(P.pred);
	llr_disc_batch_buf_free(&P.buf);
	llr_disc_set_free(&d);
	return rc;
}
