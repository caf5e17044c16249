/*
 * trainer.c - the encoder-decoder's side of train(1) ("Encoder-decoder"):
 * its options (any of its own, a --resume model of its family or a
 * stream made by featurize --source chooses it), their checks, and the
 * setup of a run: the stream's pairs, the new model (setup.c) or the
 * resumed one with the options it fixes, the validation pairs, the meta,
 * the output automaton (--output-fsa) and the pairs it rejects, and the
 * job for the training driver.
 */
#include "family/family.h"

#include <stdlib.h>

#define SECTION "Encoder-decoder (a featurize --source stream):"
static const llr_train_opt opts[] = {
	{"attention", 0, LLR_TOPT_CHOICE, LLR_TOPT_SELECTS, .choices = "dot|bilinear|mlp", .dflt = "mlp", .arg = "dot|bilinear|mlp",
	 .help = "the attention score (default mlp)", .section = SECTION, .bad = "'%s' is not dot, bilinear or mlp"},
	{"attn-hidden", 0, LLR_TOPT_INT, LLR_TOPT_SELECTS, 1, 1 << 16, .dflt = "128", .arg = "n",
	 .help = "the width of the MLP score (default 128)", .section = SECTION},
	{"enc-layers", 0, LLR_TOPT_INT, LLR_TOPT_SELECTS, 1, 16, .dflt = "1", .arg = "n",
	 .help = "bidirectional encoder layers (default 1)", .section = SECTION},
	{"prime", 0, LLR_TOPT_CHOICE, LLR_TOPT_SELECTS, .choices = "none|table", .dflt = "none", .arg = "none|table",
	 .help = "the background: fixed, or source-conditioned priming", .section = SECTION, .bad = "'%s' is neither none nor table"},
	{"prime-iters", 0, LLR_TOPT_INT, LLR_TOPT_SELECTS, 0, 1000, .arg = "n",
	 .help = "EM iterations of the priming table (default 0)", .section = SECTION},
	{"prime-smoothing", 0, LLR_TOPT_DOUBLE, LLR_TOPT_SELECTS, .lo = 1e-9, .hi = 1e9, .dflt = "1", .arg = "k",
	 .help = "the priming table's smoothing weight (default 1)", .section = SECTION},
	{"valid-source", 0, LLR_TOPT_PATH, LLR_TOPT_SELECTS, .arg = "file", .help = "validation sources, aligned with --valid's targets",
	 .section = SECTION},
	{"output-fsa", 0, LLR_TOPT_PATH, LLR_TOPT_SELECTS, .arg = "file",
	 .help = "an automaton (OpenFst text) the outputs must belong to, kept in the model", .section = SECTION},
	{"skip-rejected", 0, LLR_TOPT_FLAG, LLR_TOPT_SELECTS, .help = "leave out the pairs whose target the automaton rejects",
	 .section = SECTION},
	{"output", 0, LLR_TOPT_CHOICE, 0, .choices = "loglinear|softmax", .arg = "loglinear|softmax", .help = "the output layer",
	 .section = SECTION, .bad = "'%s' is neither loglinear nor softmax"},
	{"hidden", 0, LLR_TOPT_INT, 0, 2, 1 << 16, .dflt = "256", .arg = "n", .help = "LSTM size (default 256)", .section = SECTION},
	{"embed", 0, LLR_TOPT_INT, 0, 1, 1 << 16, .dflt = "64", .arg = "n", .help = "embedding size (default 64)", .section = SECTION},
	{"dropout", 0, LLR_TOPT_DOUBLE, 0, .lo = 0, .hi = 0.95, .arg = "p", .help = "dropout probability in training (default 0)",
	 .section = SECTION},
	{"batch", 0, LLR_TOPT_INT, 0, 1, 1 << 16, .dflt = "64", .arg = "n", .help = "pairs per minibatch (default 64)", .section = SECTION},
	{"max-len", 0, LLR_TOPT_INT, 0, 1, 1 << 20, .dflt = "256", .arg = "n", .help = "longest side kept, in tokens (default 256)",
	 .section = SECTION},
	{"optim", 0, LLR_TOPT_CHOICE, 0, .choices = "rmsprop|adam|sgd", .dflt = "adam", .arg = "rmsprop|adam|sgd",
	 .help = "the optimiser (default adam)", .section = SECTION, .bad = "unknown optimiser '%s' (rmsprop, adam, sgd)"},
	{"layers", 0, LLR_TOPT_REFUSED, .msg = "--layers: the encoder-decoder has --enc-layers (the decoder has one layer)"},
	{"init", 0, LLR_TOPT_REFUSED, .msg = "--init: not for the encoder-decoder (weights are uniform in [-0.08, 0.08))"},
	{0},
};

/* The options a resumed model fixes (LLR_EDS_*, by position), by name. */
static const char *const fixed_opt[LLR_EDS_NFIXED] = {"output",  "attention", "embed", "hidden", "enc-layers", "attn-hidden",
                                                      "dropout", "batch",     "max-len", "optim", "prime",      "seed"};

typedef struct edo {
	llr_train_common run;
	const char *valid_src;
	const char *fsa; /* --output-fsa */
	int skip;        /* --skip-rejected */
	llr_encdec_setup su; /* the model's choices */
	unsigned given; /* LLR_EDS_*: the options a resumed model fixes, given */
} edo;

static int check(const llr_train_args *a, llr_err *err)
{
	if (llr_train_args_noperands(a) > 1)
		return llr_train_usage_err(err, "at most one stream operand");
	if (!llr_train_args_given(a, "valid") != !llr_train_args_given(a, "valid-source"))
		return llr_train_usage_err(err, "--valid and --valid-source go together (the validation targets and their sources)");
	if (llr_train_args_int(a, "hidden") % 2)
		return llr_train_usage_err(err, "--hidden: must be even (the encoder has hidden/2 per direction), got %d",
		                           (int)llr_train_args_int(a, "hidden"));
	if (llr_train_args_given(a, "output-fsa") && llr_train_args_given(a, "resume"))
		return llr_train_usage_err(err, "--output-fsa: not with --resume (the resumed model keeps the automaton it was trained with)");
	if (llr_train_args_given(a, "skip-rejected") && !llr_train_args_given(a, "output-fsa") && !llr_train_args_given(a, "resume"))
		return llr_train_usage_err(err, "--skip-rejected: only with --output-fsa (or --resume of a model that has an automaton)");
	if (!llr_train_args_given(a, "resume") && llr_train_args_int(a, "prime") == 1 && llr_train_args_given(a, "output") &&
	    llr_train_args_int(a, "output") == 1)
		return llr_train_usage_err(err, "--prime table: the background of a softmax output is uniform; use --output loglinear");
	return LLR_OK;
}

static void read_opts(const llr_train_args *a, const llr_train_comm *comm, edo *o)
{
	memset(o, 0, sizeof *o);
	llr_encdec_setup *su = &o->su;
	if (llr_train_args_given(a, "output"))
		su->output = llr_train_args_int(a, "output") == 0 ? LLR_OUT_LOGLINEAR : LLR_OUT_SOFTMAX;
	su->attention = (int)llr_train_args_int(a, "attention") + LLR_ATT_DOT;
	su->prime = llr_train_args_int(a, "prime") == 1;
	su->prime_iters = (int)llr_train_args_int(a, "prime-iters");
	su->prime_k = llr_train_args_num(a, "prime-smoothing");
	su->embed = (int)llr_train_args_int(a, "embed");
	su->hidden = (int)llr_train_args_int(a, "hidden");
	su->enc_layers = (int)llr_train_args_int(a, "enc-layers");
	su->attn_hidden = (int)llr_train_args_int(a, "attn-hidden");
	su->dropout = llr_train_args_num(a, "dropout");
	su->batch = (int)llr_train_args_int(a, "batch");
	su->max_len = (int)llr_train_args_int(a, "max-len");
	su->optim = llr_optim_parse(llr_train_args_str(a, "optim"));
	su->lr = llr_train_args_num(a, "lr");
	su->eps = llr_train_args_num(a, "eps");
	su->seed = (uint64_t)llr_train_args_int(a, "seed");
	o->given = llr_train_args_mask(a, fixed_opt, LLR_EDS_NFIXED);
	llr_train_args_common(a, comm, &o->run);
	o->valid_src = llr_train_args_str(a, "valid-source");
	o->fsa = llr_train_args_str(a, "output-fsa");
	o->skip = llr_train_args_given(a, "skip-rejected");
}

typedef struct edrun {
	llr_encdec_model *model;
	llr_train_state *ts;
	llr_encdec_pairs tp, vp;
} edrun;

static void edrun_free(void *p)
{
	edrun *R = p;
	if (!R)
		return;
	llr_encdec_pairs_free(&R->tp);
	llr_encdec_pairs_free(&R->vp);
	llr_train_state_free(R->ts);
	llr_encdec_model_free(R->model);
	free(R);
}

/* Continue the run in o->run.resume: its options bind. */
static int resume(const llr_train_args *a, edo *o, edrun *R, llr_err *err)
{
	int bad;
	int rc = llr_encdec_resume(o->run.resume, &o->su, o->given, &R->model, &R->ts, &bad, err);
	return llr_train_resumed(a, rc, bad, fixed_opt, o->run.resume, &o->run.lim, o->run.lim_given, R->model ? R->model->meta : NULL, R->ts,
	                         err);
}

/* The opening lines: the pairs, the model, the ranks. */
static void say_start(const llr_train_args *a, const edo *o, const llr_train_comm *comm, const edrun *R)
{
	size_t n;
	llr_encdec_params(R->model->net, &n);
	const llr_encdec_config *c = llr_encdec_cfg(R->model->net);
	char rej[64] = "";
	if (R->model->lex->fsa)
		snprintf(rej, sizeof rej, ", %lld the automaton rejects skipped", (long long)R->tp.rejected);
	llr_train_note(a, "%s: %zu pairs (%lld over --max-len skipped%s), %lld target tokens, Vs %zu, V %zu, %s output, %s attention%s, %zu parameters",
	               o->run.stream ? o->run.stream : "<stdin>", R->tp.n, (long long)R->tp.skipped, rej, (long long)R->tp.tokens,
	               llr_strmap_size(R->model->src->vocab), llr_strmap_size(R->model->lex->vocab),
	               c->output == LLR_OUT_SOFTMAX ? "softmax" : "loglinear", llr_attention_name(c->attention),
	               c->primed ? ", primed background" : "", n);
	if (comm && comm->on)
		llr_train_note(a, "distributed: %d ranks, rank r trains on the pairs r, r + %d, ... of each batch; %zu bytes summed across them per step",
		               comm->size, comm->size, llr_train_step_bytes(n));
}

/* --output-fsa read over the stream's target vocabulary into x. */
static int read_fsa(const edo *o, llr_lexicon *x, llr_err *err)
{
	llr_err e = {0};
	if (strpbrk(o->fsa, "\n\r")) /* the meta records it on one line */
		return llr_err_set(err, LLR_EINVAL, "--output-fsa: a newline in the file name");
	if (!(x->fsa = llr_fsa_read(o->fsa, x->vocab, &e)))
		return llr_err_set(err, llr_err_code(&e, LLR_EFORMAT), "--output-fsa: %s", e.msg);
	return llr_meta_set(x->meta, "output_fsa", o->fsa) < 0 ? llr_err_set(err, LLR_ENOMEM, "out of memory") : LLR_OK;
}

/* The training pairs under the automaton a (NULL: none); what was
 * skipped said even with -q. */
static int constrain(const llr_train_args *a, const edo *o, const llr_fsa *fsa, const llr_strmap *vocab, llr_encdec_pairs *p,
                     const char *name, int stream, llr_err *err)
{
	if (!fsa)
		return LLR_OK;
	int rc = llr_encdec_pairs_constrain(p, fsa, vocab, name, stream, o->skip, err);
	if (rc >= 0 && p->rejected)
		llr_train_note(a, "%s: %lld pair%s whose target the automaton rejects skipped (--skip-rejected)", name, (long long)p->rejected,
		               p->rejected == 1 ? "" : "s");
	return rc;
}

/* The model to train: o->run.resume's, or a new one over the stream's
 * sides (with --output-fsa, its automaton over the targets). */
static int setup(const llr_train_args *a, edo *o, edrun *R, llr_err *err)
{
	const char *sname = o->run.stream ? o->run.stream : "<stdin>";
	int rc;
	if (o->run.resume && (rc = resume(a, o, R, err)) < 0)
		return rc;
	llr_lexicon *x;
	llr_source *s;
	if ((rc = llr_encdec_stream_read(o->run.stream, sname, o->su.max_len, &x, &s, &R->tp, err)) < 0)
		return rc;
	if (!R->model && o->fsa)
		rc = read_fsa(o, x, err);
	const llr_fsa *fsa = R->model ? R->model->lex->fsa : x->fsa;
	if (rc >= 0 && (rc = constrain(a, o, fsa, x->vocab, &R->tp, sname, 1, err)) >= 0) {
		if (R->model) /* takes x and s either way */
			return llr_encdec_resume_sides(R->model, o->run.resume, x, s, sname, &R->tp, err);
		if ((rc = llr_encdec_fresh(&o->su, x, s, &R->tp, &R->model, &R->ts, err)) >= 0)
			return rc; /* the model's now; on failure still ours */
	}
	llr_lexicon_free(x);
	llr_source_free(s);
	return rc;
}

/* The automaton's opening note: the target tokens it never allows. */
static void say_fsa(const llr_train_args *a, const llr_encdec_model *m)
{
	llr_buf b = {0};
	size_t n = llr_encdec_fsa_unused(m->lex->fsa, m->lex->vocab, &b);
	const char *path = m->lex->meta ? llr_meta_get(m->lex->meta, "output_fsa") : NULL;
	if (!path)
		path = llr_meta_get(m->meta, "output_fsa");
	if (n)
		llr_train_note(a, "--output-fsa %s: %zu target token%s it never allows (probability 0): %s", path ? path : "", n, n == 1 ? "" : "s",
		               b.data ? b.data : "");
	llr_buf_free(&b);
}

static int build(llr_train_args *a, const llr_train_comm *comm, llr_train_setup *s, llr_err *err)
{
	edrun *R = llr_train_setup_own(s, sizeof *R, edrun_free);
	if (!R)
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	edo o;
	read_opts(a, comm, &o);
	int rc = setup(a, &o, R, err);
	if (rc < 0)
		return rc;
	if (llr_train_limits_meta(&o.run.lim, R->model->meta) < 0 || llr_train_optim_meta(R->model->meta, R->ts->optim) < 0 ||
	    llr_train_schedule_meta(&o.run.lim, R->model->meta) < 0)
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	if (o.run.valid &&
	    ((rc = llr_encdec_pairs_read_text(o.valid_src, o.run.valid, R->model->lex, R->model->src, o.su.max_len, &R->vp, err)) < 0 ||
	     (rc = constrain(a, &o, R->model->lex->fsa, R->model->lex->vocab, &R->vp, o.run.valid, 0, err)) < 0))
		return rc;
	if (!o.run.quiet)
		say_start(a, &o, comm, R);
	if (!o.run.quiet && R->model->lex->fsa)
		say_fsa(a, R->model);
	llr_encdec_train_cfg cfg = {.batch = o.su.batch, .max_len = o.su.max_len, .dropout = o.su.dropout > 0};
	if ((rc = llr_encdec_train_job(R->model, &R->tp, &R->vp, &cfg, comm, &s->job, err)) < 0)
		return rc;
	s->ts = R->ts;
	s->lim = o.run.lim;
	s->train_tokens = R->tp.tokens;
	s->has_valid = R->vp.n > 0;
	return LLR_OK;
}

static int claims(const char *path)
{
	return llr_encdec_stream_has_source(path);
}

const llr_trainer llr_encdec_trainer = {
	.opts = opts,
	.usage = "usage: train [-hq] [-o model] [-s seed] [--output loglinear|softmax]\n"
	         "             [--attention dot|bilinear|mlp] [--prime none|table]\n"
	         "             [--prime-iters n] [--prime-smoothing k]\n"
	         "             [--output-fsa file [--skip-rejected]]\n"
	         "             [--enc-layers n] [--hidden n] [--embed n] [--attn-hidden n]\n"
	         "             [--dropout p] [--batch n] [--max-len n] [--optim rmsprop|adam|sgd]\n"
	         "             [--lr x] [--eps x] [--clip x] [--min-improvement x]\n"
	         "             [--lr-decay f] [--lr-patience n] [--lr-decays n]\n"
	         "             [--valid-source file --valid file] [--patience n] [--epochs n]\n"
	         "             [--max-time duration] [--max-tokens n] [--threads n] [--log file]\n"
	         "             [--progress n] [--resume model] [--distributed] [stream]\n"
	         "       (an encoder-decoder: the stream is featurize --source's)\n",
	.foreign = "not for the encoder-decoder (a featurize --source stream)",
	.claims = claims,
	.check = check,
	.build = build,
};
