/*
 * trainer.c - the log-linear language model's side of train(1)
 * ("Log-linear language models"; tutorial section 4): its options
 * (--context N, or a --resume model of family loglm, chooses it), their
 * checks, and the setup of a run: the stream and the validation text, the
 * new model or the resumed one with the options it fixes, the meta, and
 * the job for the training driver.
 */
#include "family/loglm/loglm.h"

#include <stdio.h>
#include <stdlib.h>

#define SECTION "Log-linear language models (train --context N):"
static const llr_train_opt opts[] = {
	{"context", 0, LLR_TOPT_INT, LLR_TOPT_SELECTS, 1, LLR_ME_MAX_ORDER, .arg = "N",
	 .help = "train a log-linear LM over the n-grams of the previous 1 to N-1 words instead", .section = SECTION},
	{"output", 0, LLR_TOPT_CHOICE, 0, .choices = "loglinear|softmax", .arg = "loglinear|softmax",
	 .help = "the output layer (default softmax)", .section = SECTION,
	 .bad = "'%s' is neither loglinear nor softmax (a log-linear LM has no tree or classes output)"},
	{"skip", 0, LLR_TOPT_INT, 0, 0, LLR_ME_MAX_ORDER, .dflt = "0", .arg = "d",
	 .help = "also the word at each distance 2 to d alone (default 0: none)", .section = SECTION,
	 .msg = "--skip: for the log-linear model (--context N)"},
	{"bag", 0, LLR_TOPT_FLAG, 0, .help = "also each earlier word of the sentence", .section = SECTION,
	 .msg = "--bag: for the log-linear model (--context N)"},
	{"hash-size", 0, LLR_TOPT_INT, 0, LLR_ME_CHUNK, 1ll << 31, .dflt = "4194304", .arg = "n",
	 .help = "weights the features hash into, a power of two (default 4194304)", .section = SECTION,
	 .msg = "--hash-size: for the log-linear model (--context N)"},
	{"l2", 0, LLR_TOPT_DOUBLE, 0, .lo = 0, .hi = 1e6, .dflt = "0", .arg = "x", .help = "L2 penalty per token (default 0)",
	 .section = SECTION, .msg = "--l2: for the log-linear and feed-forward models (--context N, --feedforward N)"},
	{"l1", 0, LLR_TOPT_DOUBLE, 0, .lo = 0, .hi = 1e6, .dflt = "0", .arg = "x", .help = "L1 penalty per token (default 0)",
	 .section = SECTION, .msg = "--l1: for the log-linear model (--context N)"},
	{"batch", 0, LLR_TOPT_INT, 0, 1, 1 << 20, .dflt = "128", .arg = "n", .help = "predicted tokens per step (default 128)",
	 .section = SECTION},
	{"optim", 0, LLR_TOPT_CHOICE, 0, .choices = "sgd|rmsprop|adam", .dflt = "rmsprop", .arg = "sgd|rmsprop|adam",
	 .help = "the optimiser (default rmsprop, lr 0.003)", .section = SECTION, .bad = "unknown optimiser '%s' (sgd, rmsprop, adam)"},
	{"dropout", 0, LLR_TOPT_REFUSED, .msg = "--dropout: not for the log-linear model"},
	{"max-len", 0, LLR_TOPT_REFUSED,
	 .msg = "--max-len: not for the log-linear model (it predicts every token from its own context)"},
	{"init", 0, LLR_TOPT_REFUSED, .msg = "--init: not for the log-linear model"},
	{0},
};

/* The options a resumed model fixes (setup.c's keys, by position). */
static const char *const fixed_opt[LOGLM_NFIXED] = {"context", "skip", "bag", "hash-size", "l2", "l1", "batch", "optim", "seed", "output"};

typedef struct llo {
	llr_train_common run;
	llr_loglm_setup su;
	unsigned given;
} llo;

static int check(const llr_train_args *a, llr_err *err)
{
	if (llr_train_args_noperands(a) > 1)
		return llr_train_usage_err(err, "at most one stream operand");
	if (llr_train_args_given(a, "lr-decay") && !llr_train_args_given(a, "valid"))
		return llr_train_usage_err(err, "--lr-decay needs --valid (it decays when the validation loss stalls)");
	if (llr_train_args_given(a, "eps") && !strcmp(llr_train_args_str(a, "optim"), "sgd"))
		return llr_train_usage_err(err, "--eps: for --optim rmsprop and adam (SGD has no eps)");
	int64_t h = llr_train_args_int(a, "hash-size");
	if (h & (h - 1))
		return llr_train_usage_err(err, "--hash-size: %lld is not a power of two", (long long)h);
	if (llr_train_args_given(a, "context") && llr_train_args_int(a, "context") < 2 && llr_train_args_int(a, "skip") < 2 && !llr_train_args_int(a, "bag"))
		return llr_train_usage_err(err, "--context 1: no feature of the context (give N >= 2, --skip d >= 2 or --bag)");
	return LLR_OK;
}

static void read_opts(const llr_train_args *a, const llr_train_comm *comm, llo *o)
{
	memset(o, 0, sizeof *o);
	llr_loglm_setup *su = &o->su;
	su->order = (int)llr_train_args_int(a, "context");
	if (llr_train_args_given(a, "output"))
		su->output = llr_train_args_int(a, "output") == 0 ? LLR_OUT_LOGLINEAR : LLR_OUT_SOFTMAX;
	su->skip = (int)llr_train_args_int(a, "skip");
	su->bag = (int)llr_train_args_int(a, "bag");
	su->hash_size = llr_train_args_int(a, "hash-size");
	su->l2 = llr_train_args_num(a, "l2");
	su->l1 = llr_train_args_num(a, "l1");
	su->batch = (int)llr_train_args_int(a, "batch");
	su->seed = (uint64_t)llr_train_args_int(a, "seed");
	su->optim = llr_optim_parse(llr_train_args_str(a, "optim"));
	su->lr = llr_train_args_num(a, "lr");
	if (!llr_train_args_given(a, "lr") && su->optim == LLR_OPT_RMSPROP)
		su->lr = 0.003;
	su->eps = llr_train_args_num(a, "eps");
	o->given = llr_train_args_mask(a, fixed_opt, LOGLM_NFIXED);
	llr_train_args_common(a, comm, &o->run);
}

typedef struct llrun {
	llr_loglm *model;
	llr_train_state *ts;
	llr_lm_corpus tc, vc;
} llrun;

static void llrun_free(void *p)
{
	llrun *R = p;
	if (!R)
		return;
	llr_lm_corpus_free(&R->tc);
	llr_lm_corpus_free(&R->vc);
	llr_train_state_free(R->ts);
	llr_loglm_free(R->model);
	free(R);
}

/* The model to train, o->run.resume's (its options bind) or a new one
 * over the stream, and the validation text. */
static int setup(const llr_train_args *a, llo *o, const char *sname, const llr_train_comm *comm, llrun *R, llr_err *err)
{
	int rc, bad;
	if (o->run.resume) {
		rc = llr_loglm_resume(o->run.resume, &o->su, o->given, &R->model, &R->ts, &bad, err);
		if ((rc = llr_train_resumed(a, rc, bad, fixed_opt, o->run.resume, &o->run.lim, o->run.lim_given,
		                            R->model ? R->model->meta : NULL, R->ts, err)) < 0)
			return rc;
	}
	llr_lexicon *x;
	if ((rc = llr_lm_stream_read(o->run.stream, sname, "--context", o->su.order, comm, &x, &R->tc, err)) < 0)
		return rc;
	o->su.clip = o->run.lim.clip;
	o->su.min_impr = o->run.lim.min_impr;
	if (R->model) {
		rc = llr_lexicon_same(R->model->lex, x, "the model", "here", err);
		llr_lexicon_free(x);
	} else if ((rc = llr_loglm_fresh(x, &o->su, &R->model, &R->ts, err)) < 0) {
		llr_lexicon_free(x);
	}
	return llr_lm_setup_end(rc, o->run.resume, sname, o->run.valid, R->model ? R->model->lex : NULL, &R->vc, err);
}

static int build(llr_train_args *a, const llr_train_comm *comm, llr_train_setup *s, llr_err *err)
{
	llrun *R = llr_train_setup_own(s, sizeof *R, llrun_free);
	if (!R)
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	llo o;
	read_opts(a, comm, &o);
	const char *sname = o.run.stream ? o.run.stream : "<stdin>";
	int rc = setup(a, &o, sname, comm, R, err);
	if (rc < 0)
		return rc;
	if (llr_train_run_meta(&o.run.lim, R->model->meta, R->ts->optim) < 0)
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	if (!o.run.quiet) {
		const llr_maxent_config *c = llr_maxent_cfg(R->model->me);
		char at[64] = "";
		if (o.run.resume)
			snprintf(at, sizeof at, ", resuming at epoch %lld", (long long)R->ts->epoch + 1);
		char out[64] = "";
		if (c->phi)
			snprintf(out, sizeof out, ", loglinear output over %d features", c->phi->cols);
		llr_train_note(a, "%s: %lld sentences, %lld tokens, V %d, context %d, skip %d%s, %llu hashed weights%s%s", sname,
		               (long long)R->tc.sentences, (long long)R->tc.tokens, c->vocab, c->order, c->skip, c->bag ? ", bag" : "",
		               (unsigned long long)c->hash_size, out, at);
	}
	if ((rc = llr_loglm_train_job(R->model, &R->tc, &R->vc, &o.su, comm, &s->job, err)) < 0)
		return rc;
	s->ts = R->ts;
	s->lim = o.run.lim;
	s->train_tokens = R->tc.tokens;
	s->has_valid = R->vc.sentences > 0;
	return LLR_OK;
}

const llr_trainer llr_loglm_trainer = {
	.opts = opts,
	.synopsis = "train --context N [-hq] [-o model] [-s seed] [--output loglinear|softmax] [--skip d]\n"
	            "             [--bag] [--hash-size n] [--l2 x] [--l1 x] [--batch n]\n"
	            "             [--optim sgd|rmsprop|adam] [--lr x] [--eps x]\n"
	            "             [--clip x] [--min-improvement x] [--lr-decay f] [--lr-patience n]\n"
	            "             [--lr-decays n] [--valid file] [--patience n] [--epochs n]\n"
	            "             [--max-time duration] [--max-tokens n] [--threads n] [--log file]\n"
	            "             [--progress n] [--resume model] [--distributed] [stream]\n",
	.foreign = "not for the log-linear model (--context N)",
	.check = check,
	.build = build,
};
