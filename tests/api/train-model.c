/*
 * train-model encdec|lm OUT STREAM EPOCHS [VALID] - a program that trains
 * a model through libllrnn alone (the families' setup calls and the
 * training driver; tests/45-encdec.bats, tests/59-open-train.bats): the
 * model file train writes for
 *   encdec: train --hidden 32 --embed 16 --attn-hidden 16 --threads 1 -q
 *           --epochs EPOCHS -o OUT STREAM   (a featurize --source stream)
 *   lm:     train --hidden 16 --embed 16 --layers 1 --threads 1 -q
 *           --epochs EPOCHS [--valid VALID] -o OUT STREAM
 *           (open-vocabulary training when the stream allows it)
 * byte for byte.  Errors come back as messages: "train-model: ...".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llrnn.h"

static int fail(const llr_err *e)
{
	fprintf(stderr, "train-model: %s\n", e->msg);
	return 1;
}

/* train's limits (its defaults and --epochs) and the meta it adds. */
static llr_train_limits limits(int64_t epochs)
{
	return (llr_train_limits){.epochs = epochs, .patience = 3, .min_impr = 0.003, .clip = 5, .lr_patience = 1, .lr_decays = 5};
}

static int optim_meta(llr_meta *m, const llr_optim *opt)
{
	const llr_optim_config *c = llr_optim_cfg(opt);
	int rc = llr_meta_set(m, "optim", llr_optim_name(c->kind));
	if (c->kind != LLR_OPT_SGD)
		rc |= llr_meta_setf(m, "eps", "%g", (double)c->eps);
	return rc;
}

static int encdec(const char *out, const char *stream, int64_t epochs)
{
	llr_err e = {0};
	llr_encdec_setup su = {.attention = LLR_ATT_MLP, .prime_k = 1, .embed = 16, .hidden = 32, .enc_layers = 1, .attn_hidden = 16,
	                       .batch = 64, .max_len = 256, .optim = LLR_OPT_ADAM, .seed = 1};
	llr_lexicon *x = NULL;
	llr_source *s = NULL;
	llr_encdec_pairs tp = {0};
	llr_encdec_model *m = NULL;
	llr_train_state *ts = NULL;
	llr_train_job *job = NULL;
	llr_train_limits lim = limits(epochs);
	llr_encdec_train_cfg cfg = {.batch = su.batch, .max_len = su.max_len};
	llr_train_result res;
	int rc = llr_encdec_stream_read(stream, stream, su.max_len, &x, &s, &tp, &e);
	if (rc == LLR_OK && (rc = llr_encdec_fresh(&su, x, s, &tp, &m, &ts, &e)) == LLR_OK)
		x = NULL, s = NULL; /* the model's */
	if (rc == LLR_OK && (llr_train_limits_meta(&lim, m->meta) < 0 || optim_meta(m->meta, ts->optim) < 0 ||
	                     llr_train_schedule_meta(&lim, m->meta) < 0))
		rc = llr_err_set(&e, LLR_ENOMEM, "out of memory");
	if (rc == LLR_OK)
		rc = llr_encdec_train_job(m, &tp, NULL, &cfg, NULL, &job, &e);
	if (rc == LLR_OK) {
		llr_train_opts ro = {.out = out, .lim = lim};
		rc = llr_train_run(job, ts, &ro, &res, &e);
	}
	llr_train_job_free(job);
	llr_encdec_pairs_free(&tp);
	llr_train_state_free(ts);
	llr_encdec_model_free(m);
	llr_lexicon_free(x);
	llr_source_free(s);
	return rc < 0 ? fail(&e) : 0;
}

static int lm(const char *out, const char *stream, int64_t epochs, const char *valid)
{
	llr_err e = {0};
	llr_rnnlm_setup su = {.net = {.embed = 16, .hidden = 16, .layers = 1}, .init = LLR_INIT_TORCH, .optim = LLR_OPT_RMSPROP,
	                      .batch = 32, .max_len = 256, .clip = 5, .min_impr = 0.003, .seed = 1};
	llr_lm_corpus tc = {0}, vc = {0};
	llr_lexicon *x = NULL;
	llr_rnnlm *m = NULL;
	llr_train_state *ts = NULL;
	llr_lm_open *op = NULL;
	llr_train_job *job = NULL;
	int64_t outside, skipped;
	llr_fit_report rep;
	llr_train_limits lim = limits(epochs);
	llr_lm_train_cfg cfg = {.batch = su.batch, .max_len = su.max_len, .tree_update = 100};
	llr_train_result res;
	llr_tensor_reader *r = llr_tr_open(stream, "features", &e);
	int rc = r ? llr_lexicon_read(r, &x, &e) : LLR_EIO;
	if (rc == LLR_OK)
		rc = llr_lm_corpus_read(r, stream, x, su.max_len, NULL, &tc, &e);
	llr_tr_close(r);
	if (rc == LLR_OK && (rc = llr_rnnlm_fresh(x, &su, &m, &ts, &e)) == LLR_OK)
		x = NULL; /* the model's */
	if (rc == LLR_OK)
		rc = llr_lm_open_new(m, &tc, 0, &op, &outside, &e);
	if (rc == LLR_OK && op)
		rc = llr_lm_open_fit_bias(op, tc.ids, tc.n, NULL, &rep, &e);
	if (rc == LLR_OK)
		rc = llr_rnnlm_tree_init(m, tc.ids, tc.n, NULL, &e);
	if (rc == LLR_OK && valid)
		rc = llr_lm_corpus_read_text(valid, m, op, su.max_len, &vc, &skipped, &e);
	if (rc == LLR_OK && (llr_train_limits_meta(&lim, m->meta) < 0 || llr_train_schedule_meta(&lim, m->meta) < 0 ||
	                     optim_meta(m->meta, ts->optim) < 0))
		rc = llr_err_set(&e, LLR_ENOMEM, "out of memory");
	if (rc == LLR_OK)
		rc = llr_rnnlm_train_job(m, &tc, &vc, &cfg, NULL, &job, &e);
	if (rc == LLR_OK) {
		llr_train_opts ro = {.out = out, .has_valid = vc.sentences > 0, .lim = lim};
		rc = llr_train_run(job, ts, &ro, &res, &e);
	}
	llr_train_job_free(job);
	llr_lm_corpus_free(&tc);
	llr_lm_corpus_free(&vc);
	llr_train_state_free(ts);
	llr_lm_open_free(op);
	llr_rnnlm_free(m);
	llr_lexicon_free(x);
	return rc < 0 ? fail(&e) : 0;
}

int main(int argc, char **argv)
{
	if (argc < 5 || argc > 6 || (strcmp(argv[1], "encdec") && strcmp(argv[1], "lm")))
		return fprintf(stderr, "usage: train-model encdec|lm OUT STREAM EPOCHS [VALID]\n"), 2;
	llr_blas_set_threads(1);
	int64_t epochs = atoll(argv[4]);
	if (!strcmp(argv[1], "encdec"))
		return encdec(argv[2], argv[3], epochs);
	return lm(argv[2], argv[3], epochs, argc > 5 ? argv[5] : NULL);
}
