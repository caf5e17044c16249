/*
 * train-encoder FEATURES TRAIN VALID OUT - a program that trains a
 * discourse sentence encoder through libllrnn alone
 * (tests/45-train-task.bats): llr_senc_model_new, llr_senc_train_init,
 * llr_senc_train_job and the one training driver, llr_train_run.  It
 * prints a line per driver event (kind, epoch, the loss, the validation
 * number and, after an epoch, each task's accuracy from
 * llr_senc_train_valid) and checks what an error-rate job promises: no
 * epoch-0 validation, a validation number that is the mean of the tasks'
 * 100 - accuracy, a best on any drop.  Exit 0 when all holds, 1 with a
 * message on stderr when not.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llrnn.h"

typedef struct seen {
	const llr_train_job *job;
	int bad, epochs, starts;
	double best;
} seen;

static void fail(seen *S, const char *what)
{
	fprintf(stderr, "train-encoder: %s\n", what);
	S->bad = 1;
}

static void on_event(void *ctx, const llr_train_event *ev)
{
	seen *S = ctx;
	double loss[3], acc[3], mean = 0;
	int nt = 0;
	if (ev->kind == LLR_TRAIN_START)
		S->starts++;
	if (ev->kind != LLR_TRAIN_EPOCH)
		return;
	S->epochs++;
	if (llr_senc_train_valid(S->job, loss, acc) != LLR_OK)
		return fail(S, "llr_senc_train_valid refused the job");
	printf("epoch %lld train %.4f valid %.4f best %d", (long long)ev->ts->epoch, ev->loss, ev->valid, ev->best);
	for (int t = 0; t < 3; t++)
		if (isfinite(acc[t])) {
			printf(" %.2f", acc[t]);
			mean += 100.0 - acc[t];
			nt++;
		}
	printf("\n");
	if (!nt || fabs(mean / nt - ev->valid) > 1e-9)
		fail(S, "the validation number is not the mean error of the tasks");
	if (ev->best != (ev->valid < S->best))
		fail(S, "a best is not exactly a drop of the error");
	if (ev->valid < S->best)
		S->best = ev->valid;
}

int main(int argc, char **argv)
{
	if (argc != 5)
		return fprintf(stderr, "usage: train-encoder FEATURES TRAIN VALID OUT\n"), 2;
	llr_err e = {0};
	llr_senc_model *m = NULL;
	llr_train_job *job = NULL;
	llr_train_state ts = {0};
	llr_disc_set tr = {0}, va = {0};
	seen S = {.best = INFINITY};
	int rc = llr_senc_model_new(argv[1], &m, &e);
	if (rc == LLR_OK) {
		tr.conj = va.conj = m->conj;
		tr.n_conj = m->n_conj;
		rc = llr_disc_set_read(&tr, argv[2], m->lex->vocab, m->lex->unk_id, LLR_TASK_ALL, 1, &e);
		m->n_conj = va.n_conj = tr.n_conj;
	}
	if (rc == LLR_OK)
		rc = llr_disc_set_read(&va, argv[3], m->lex->vocab, m->lex->unk_id, LLR_TASK_ALL, 0, &e);
	llr_senc_config c = {.encoder = LLR_SENC_CBOW, .E = 8, .H = 8, .tasks = LLR_TASK_ALL};
	llr_optim_config oc;
	llr_optim_defaults(&oc, LLR_OPT_ADAM);
	if (rc == LLR_OK)
		rc = llr_senc_train_init(m, &c, 1, &oc, &ts, &e);
	llr_senc_train_cfg cfg = {.batch = 32, .tasks = LLR_TASK_ALL};
	if (rc == LLR_OK)
		rc = llr_senc_train_job(m, &tr, &va, &cfg, NULL, &job, &e);
	llr_train_result res = {0};
	if (rc == LLR_OK) {
		double l[3], a[3];
		if (llr_senc_train_valid(NULL, l, a) != LLR_EINVAL || llr_senc_train_valid(job, l, a) != LLR_OK || isfinite(a[0]))
			fail(&S, "llr_senc_train_valid before training");
		S.job = job;
		llr_train_opts o = {.out = argv[4], .has_valid = 1, .event = on_event, .ctx = &S};
		o.lim = (llr_train_limits){.epochs = 3, .patience = 10, .min_impr = 0.003, .clip = 5, .lr_patience = 1};
		rc = llr_train_run(job, &ts, &o, &res, &e);
	}
	if (rc != LLR_OK)
		fprintf(stderr, "train-encoder: %s\n", e.msg);
	else {
		if (S.starts)
			fail(&S, "an error-rate job validated before training (epoch 0)");
		if (S.epochs != 3 || !res.stop || strcmp(res.stop, "epochs"))
			fail(&S, "not three epochs stopped by the epoch limit");
		printf("stopped %s\n", res.stop ? res.stop : "?");
	}
	llr_train_job_free(job);
	llr_disc_set_free(&tr);
	llr_disc_set_free(&va);
	llr_optim_free(ts.optim);
	llr_senc_model_free(m);
	return rc != LLR_OK || S.bad;
}
