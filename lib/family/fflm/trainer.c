/*
 * trainer.c - the feed-forward language model's side of train(1)
 * ("Feed-forward language models"; Bengio et al. 2003): its options
 * (--feedforward N, or a --resume model of family fflm, chooses it), their
 * checks, and the setup of a run: the stream and the validation text, the
 * new model or the resumed one with the options it fixes, the meta, and
 * the job for the training driver.
 */
#include "family/family.h"

#include <stdlib.h>

#define SECTION "Feed-forward language models (train --feedforward N):"
static const llr_train_opt opts[] = {
	{"feedforward", 0, LLR_TOPT_INT, LLR_TOPT_SELECTS, 2, LLR_FF_MAX_ORDER, .arg = "N",
	 .help = "train a feed-forward LM of order N (its context: N-1 words) instead", .section = SECTION},
	{"direct", 0, LLR_TOPT_FLAG, 0, .help = "direct connections from the embeddings to the output", .section = SECTION,
	 .msg = "--direct: for the feed-forward model (--feedforward N)"},
	{"output", 0, LLR_TOPT_CHOICE, 0, .choices = "loglinear|softmax", .arg = "loglinear|softmax", .help = "the output layer",
	 .section = SECTION, .bad = "'%s' is neither loglinear nor softmax (a feed-forward model has no tree or classes output)"},
	{"layers", 0, LLR_TOPT_INT, 0, 0, LLR_FF_MAX_LAYERS, .dflt = "1", .arg = "n", .help = "tanh layers (default 1)",
	 .section = SECTION},
	{"hidden", 0, LLR_TOPT_INT, 0, 1, 1 << 16, .dflt = "256", .arg = "n", .help = "their size (default 256)", .section = SECTION},
	{"embed", 0, LLR_TOPT_INT, 0, 1, 1 << 16, .dflt = "64", .arg = "n", .help = "embedding size (default 64)", .section = SECTION},
	{"batch", 0, LLR_TOPT_INT, 0, 1, 1 << 20, .dflt = "128", .arg = "n", .help = "predicted tokens per step (default 128)",
	 .section = SECTION},
	{"optim", 0, LLR_TOPT_CHOICE, 0, .choices = "rmsprop|adam|sgd", .dflt = "adam", .arg = "rmsprop|adam|sgd",
	 .help = "the optimiser (default adam)", .section = SECTION, .bad = "unknown optimiser '%s' (rmsprop, adam, sgd)"},
	{"dropout", 0, LLR_TOPT_DOUBLE, 0, .lo = 0, .hi = 0.95, .arg = "p",
	 .help = "dropout on the embeddings and each hidden layer in training (default 0)", .section = SECTION},
	{"l2", 0, LLR_TOPT_DOUBLE, 0, .lo = 0, .hi = 1e6, .dflt = "0", .arg = "x",
	 .help = "L2 penalty per token on the weights, not the biases (default 0)", .section = SECTION,
	 .msg = "--l2: for the log-linear and feed-forward models (--context N, --feedforward N)"},
	{"max-len", 0, LLR_TOPT_REFUSED,
	 .msg = "--max-len: not for the feed-forward model (it predicts every token from its own context)"},
	{"init", 0, LLR_TOPT_REFUSED, .msg = "--init: not for the feed-forward model"},
	{0},
};

/* The options a resumed model fixes (LLR_FFS_*, by position), by name. */
static const char *const fixed_opt[LLR_FFS_NFIXED] = {"output", "feedforward", "layers", "hidden", "embed",
                                                      "direct", "batch",       "optim",  "seed"};

typedef struct ffo {
	llr_train_common run;
	llr_fflm_setup su;
	unsigned given; /* LLR_FFS_*: the options a resumed model fixes, given */
} ffo;

static int check(const llr_train_args *a, llr_err *err)
{
	if (llr_train_args_noperands(a) > 1)
		return llr_train_usage_err(err, "at most one stream operand");
	if (llr_train_args_given(a, "lr-decay") && !llr_train_args_given(a, "valid"))
		return llr_train_usage_err(err, "--lr-decay needs --valid (it decays when the validation loss stalls)");
	if (llr_train_args_given(a, "eps") && !strcmp(llr_train_args_str(a, "optim"), "sgd"))
		return llr_train_usage_err(err, "--eps: for --optim rmsprop and adam (SGD has no eps)");
	if (llr_train_args_int(a, "direct") && llr_train_args_int(a, "layers") == 0)
		return llr_train_usage_err(err,
		                           "--direct: needs a hidden layer (with --layers 0 the output reads the embeddings already)");
	return LLR_OK;
}

static void read_opts(const llr_train_args *a, const llr_train_comm *comm, ffo *o)
{
	memset(o, 0, sizeof *o);
	llr_fflm_setup *su = &o->su;
	su->order = (int)llr_train_args_int(a, "feedforward");
	su->direct = (int)llr_train_args_int(a, "direct");
	su->layers = (int)llr_train_args_int(a, "layers");
	su->hidden = (int)llr_train_args_int(a, "hidden");
	su->embed = (int)llr_train_args_int(a, "embed");
	su->dropout = llr_train_args_num(a, "dropout");
	su->l2 = llr_train_args_num(a, "l2");
	su->batch = (int)llr_train_args_int(a, "batch");
	su->seed = (uint64_t)llr_train_args_int(a, "seed");
	su->lr = llr_train_args_num(a, "lr");
	su->eps = llr_train_args_num(a, "eps");
	su->optim = llr_optim_parse(llr_train_args_str(a, "optim"));
	if (llr_train_args_given(a, "output"))
		su->output = llr_train_args_int(a, "output") == 0 ? LLR_OUT_LOGLINEAR : LLR_OUT_SOFTMAX;
	o->given = llr_train_args_mask(a, fixed_opt, LLR_FFS_NFIXED);
	llr_train_args_common(a, comm, &o->run);
}

typedef struct ffrun {
	llr_fflm *model;
	llr_train_state *ts;
	llr_lm_corpus tc, vc;
} ffrun;

static void ffrun_free(void *p)
{
	ffrun *R = p;
	if (!R)
		return;
	llr_lm_corpus_free(&R->tc);
	llr_lm_corpus_free(&R->vc);
	llr_train_state_free(R->ts);
	llr_fflm_free(R->model);
	free(R);
}

/* Continue the run in o->run.resume: its options bind. */
static int resume(const llr_train_args *a, ffo *o, ffrun *R, llr_err *err)
{
	int bad;
	double dropout = o->su.dropout, l2 = o->su.l2;
	int rc = llr_fflm_resume(o->run.resume, &o->su, o->given, &R->model, &R->ts, &bad, err);
	if (rc == LLR_OK)
		rc = llr_train_fixed_prob(a, "dropout", "dropout", &dropout, o->su.dropout, err);
	if (rc == LLR_OK && llr_train_args_given(a, "l2") && l2 != o->su.l2)
		rc = llr_train_usage_err(err, "--l2 %g: the resumed model has l2=%g", l2, o->su.l2);
	return llr_train_resumed(a, rc, bad, fixed_opt, o->run.resume, &o->run.lim, o->run.lim_given, R->model ? R->model->meta : NULL, R->ts,
	                         err);
}

/* The model to train, o->run.resume's or a new one over the stream, and the
 * validation text. */
static int setup(const llr_train_args *a, ffo *o, const char *sname, const llr_train_comm *comm, ffrun *R, llr_err *err)
{
	int rc;
	if (o->run.resume && (rc = resume(a, o, R, err)) < 0)
		return rc;
	llr_lexicon *x;
	if ((rc = llr_fflm_read_stream(o->run.stream, sname, o->su.order, comm, &x, &R->tc, err)) < 0)
		return rc;
	o->su.clip = o->run.lim.clip;
	o->su.min_impr = o->run.lim.min_impr;
	if (R->model) {
		rc = llr_fflm_fits(R->model, x, err);
		llr_lexicon_free(x);
	} else if ((rc = llr_fflm_fresh(x, &o->su, &R->model, &R->ts, err)) < 0) {
		llr_lexicon_free(x);
	}
	return llr_lm_setup_end(rc, o->run.resume, sname, o->run.valid, R->model ? R->model->lex : NULL, &R->vc, err);
}

static int build(llr_train_args *a, const llr_train_comm *comm, llr_train_setup *s, llr_err *err)
{
	ffrun *R = llr_train_setup_own(s, sizeof *R, ffrun_free);
	if (!R)
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	ffo o;
	read_opts(a, comm, &o);
	const char *sname = o.run.stream ? o.run.stream : "<stdin>";
	int rc = setup(a, &o, sname, comm, R, err);
	if (rc < 0)
		return rc;
	if (llr_train_run_meta(&o.run.lim, R->model->meta, R->ts->optim) < 0)
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	if (!o.run.quiet) {
		size_t np;
		llr_ffnet_params(R->model->net, &np);
		char at[64] = "";
		if (o.run.resume)
			snprintf(at, sizeof at, ", resuming at epoch %lld", (long long)R->ts->epoch + 1);
		llr_train_note(a, "%s: %lld sentences, %lld tokens, V %zu, order %d, %s output, %zu parameters%s", sname,
		               (long long)R->tc.sentences, (long long)R->tc.tokens, llr_strmap_size(R->model->lex->vocab),
		               llr_ffnet_cfg(R->model->net)->order,
		               llr_ffnet_cfg(R->model->net)->output == LLR_OUT_SOFTMAX ? "softmax" : "loglinear", np, at);
	}
	if ((rc = llr_fflm_train_job(R->model, &R->tc, &R->vc, o.su.batch, comm, &s->job, err)) < 0)
		return rc;
	s->ts = R->ts;
	s->lim = o.run.lim;
	s->train_tokens = R->tc.tokens;
	s->has_valid = R->vc.sentences > 0;
	return LLR_OK;
}

const llr_trainer llr_fflm_trainer = {
	.opts = opts,
	.synopsis = "train --feedforward N [-hq] [-o model] [-s seed] [--output loglinear|softmax]\n"
	            "             [--layers n] [--hidden n] [--embed n] [--direct] [--dropout p] [--l2 x]\n"
	            "             [--batch n]\n"
	            "             [--optim rmsprop|adam|sgd] [--lr x] [--eps x] [--clip x]\n"
	            "             [--min-improvement x] [--lr-decay f] [--lr-patience n] [--lr-decays n]\n"
	            "             [--valid file] [--patience n] [--epochs n] [--max-time duration]\n"
	            "             [--max-tokens n] [--threads n] [--log file] [--progress n]\n"
	            "             [--resume model] [--distributed] [stream]\n",
	.foreign = "not for the feed-forward model (--feedforward N)",
	.check = check,
	.build = build,
};
