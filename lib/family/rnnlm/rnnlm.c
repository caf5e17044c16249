/*
 * rnnlm.c - the family of LSTM language models behind llr_model
 * (family.h): every output and input kind, scored as score(1) says.  A
 * batch of sentences becomes one llr_net_score call, time-major: input
 * <s> then the words (llr_rnnlm_inputs: unseen words' features or
 * spellings), target the words then </s>.  Words outside the vocabulary
 * are <unk> (closed), or open: with a spelling model, the share of
 * p(<unk> | K) that w's spelling earns,
 *     p(w | K) = p(<unk> | K) p_spell(w) / (1 - S_V)
 * (llr_openbg_unseen_logp; for a softmax RNN the softmax-plus-spelling
 * baseline of issue 14), or for an LL-RNN with signature masses w's own
 * row of features against Z(K) (llr_open_new, llr_open_batch).
 */
#include "family/rnnlm/rnnlm.h"

#include <stdlib.h>

static void rnnlm_close(void *state)
{
	rnnlm *r = state;
	free(r->in_ids);
	free(r->tgt_ids);
	free(r->lp);
	free(r->lp_open);
	free(r->sched);
	free(r->oov_at);
	llr_open_batch_free(r->rows);
	llr_open_free(r->op);
	llr_openbg_free(r->spread);
	llr_rnnlm_inputs_free(r->in);
	llr_rnnlm_free(r->model);
	llr_fsa_free(r->meet); /* before the automata it borrows */
	llr_fsa_free(r->mask);
	free(r);
}

/* The open modes (score(1) --open, --closed). */
static int open_vocab(rnnlm *r, const llr_model_opts *o, const char *path, llr_err *err)
{
	const llr_lexicon *lex = r->model->lex;
	if (o->open == LLR_OPEN_OFF)
		return LLR_OK;
	if (!lex->spell) {
		if (o->open == LLR_OPEN_ON)
			return llr_err_set(err, LLR_EINVAL, "%s: --open: the model has no spelling model (featurize --spelling N makes one)", path);
		return LLR_OK;
	}
	if (!(r->spread = llr_openbg_new(lex, err)))
		return llr_err_prefix(err, "%s", path), llr_err_code(err, LLR_EFORMAT);
	if (llr_net_cfg(r->model->net)->output != LLR_OUT_LOGLINEAR || !llr_lexicon_sigs(lex))
		return LLR_OK;
	if (!(r->op = llr_open_new(r->model, err)))
		return llr_err_prefix(err, "open vocabulary"), llr_err_code(err, LLR_EFORMAT);
	if (o->check_norm && o->norm_samples > 0 && llr_open_norm_samples(r->op, o->norm_samples, o->seed, err) < 0)
		return llr_err_prefix(err, "--check-norm"), llr_err_code(err, LLR_EINVAL);
	if (!(r->rows = llr_open_batch_new(r->op, err)))
		return llr_err_code(err, LLR_ENOMEM);
	return LLR_OK;
}

static int rnnlm_open(llr_model *m, const char *path, llr_err *err)
{
	rnnlm *r = llr_calloc(1, sizeof *r);
	if (!r)
		return llr_err_set(err, LLR_ENOMEM, "%s: out of memory", path);
	m->state = r;
	int rc = llr_rnnlm_load(path, &r->model, err);
	if (rc < 0)
		return rc;
	if (!(r->in = llr_rnnlm_inputs_new(r->model, path, err)))
		return llr_err_code(err, LLR_EFORMAT);
	r->eos_id = r->model->lex->eos_id;
	r->check_norm = m->opts.check_norm;
	return open_vocab(r, &m->opts, path, err);
}

static const char *output_name(int output)
{
	switch (output) {
	case LLR_OUT_LOGLINEAR: return "loglinear";
	case LLR_OUT_SOFTMAX: return "softmax";
	case LLR_OUT_TREE: return "tree";
	case LLR_OUT_CLASSES: return "classes";
	}
	return "?";
}

static const char *input_name(int input)
{
	switch (input) {
	case LLR_IN_WORD: return "word";
	case LLR_IN_CHARS: return "chars";
	case LLR_IN_CONCAT: return "concat";
	case LLR_IN_SUM: return "sum";
	}
	return "?";
}

/* An LL-RNN scored through its features: its signature masses and the
 * norm check's exact sums and draws (llr_open_norm_*). */
static void describe_open(const rnnlm *r, const llr_model_opts *o, llr_model_info *info)
{
	const llr_lexicon *lex = r->model->lex;
	info->spell_lambda = lex->spell_lambda;
	info->sigs = llr_lexicon_sigs(lex);
	info->sigs_exact = llr_meta_get(r->model->meta, "sig.exact") != NULL;
	info->sig_samples = llr_meta_get(r->model->meta, "sig.samples");
	info->norm_draws = o->check_norm && o->norm_samples > 0 ? o->norm_samples : 0;
	info->norm_checked = llr_open_norm_exact(r->op, &info->norm_listed, &info->norm_mismatched, &info->norm_first);
	info->norm_digits = llr_open_norm_digits(r->op, &info->norm_shorts);
	info->norm_dict = llr_open_norm_dict(r->op);
}

static const char *rnnlm_word(const llr_model *m, int64_t i)
{
	const rnnlm *r = m->state;
	return llr_strmap_str(r->model->lex->vocab, (int32_t)i);
}

static void rnnlm_describe(const llr_model *m, llr_model_info *info)
{
	const rnnlm *r = m->state;
	const llr_net_config *c = llr_net_cfg(r->model->net);
	const llr_lexicon *lex = r->model->lex;
	llr_family_describe_vocab(lex, info);
	info->layers = c->layers;
	info->embed = c->embed;
	info->hidden = c->hidden;
	info->output = output_name(c->output);
	info->input = input_name(c->input);
	info->cell = llr_cell_name(c->cell);
	info->spelling = lex->spell != NULL;
	info->oov = r->op ? LLR_OOV_FEATURES : r->spread ? LLR_OOV_SPREAD : LLR_OOV_UNK;
	if (info->oov == LLR_OOV_SPREAD)
		info->log_outside = llr_openbg_log_outside(r->spread);
	info->dim = c->input == LLR_IN_WORD ? c->embed : 0;
	info->embedding = "lm-input-mean";
	info->norm_checked = -1;
	if (r->op)
		describe_open(r, &m->opts, info);
}

static const llr_meta *rnnlm_meta(const llr_model *m)
{
	const rnnlm *r = m->state;
	return r->model->meta;
}

static int ensure(rnnlm *r, size_t n)
{
	if (n <= r->cap)
		return LLR_OK;
	size_t cap = n + n / 2;
	free(r->in_ids);
	free(r->tgt_ids);
	free(r->lp);
	free(r->lp_open);
	free(r->sched);
	free(r->oov_at);
	r->in_ids = llr_reallocarray(NULL, cap, sizeof *r->in_ids);
	r->tgt_ids = llr_reallocarray(NULL, cap, sizeof *r->tgt_ids);
	r->lp = llr_reallocarray(NULL, cap, sizeof *r->lp);
	r->lp_open = llr_calloc(cap, sizeof *r->lp_open);
	r->sched = llr_reallocarray(NULL, cap, sizeof *r->sched);
	r->oov_at = llr_malloc(cap);
	r->cap = r->in_ids && r->tgt_ids && r->lp && r->lp_open && r->sched && r->oov_at ? cap : 0;
	return r->cap ? LLR_OK : LLR_ENOMEM;
}

/* Position k (time-major) of sentence s at step t: word t the target (or
 * </s>), word t the input of step t + 1 (k + B). */
static int fill_word(rnnlm *r, const llr_sentence *s, size_t t, size_t k, size_t B, size_t T, llr_err *err)
{
	const char *w = s->words[t];
	size_t len = strlen(w);
	int32_t vid = llr_strmap_get(r->model->lex->vocab, w, len);
	int oov = 0;
	int32_t id = r->op ? llr_open_batch_target(r->rows, w, len, &oov, err) : llr_rnnlm_target(r->model, w, len, &oov, err);
	if (id < 0)
		return id;
	r->tgt_ids[k] = id;
	r->oov_at[k] = (unsigned char)oov;
	if (oov && r->spread && !r->op)
		r->lp_open[k] = llr_openbg_unseen_logp(r->spread, w, len);
	if (t + 1 < T) {
		int32_t in = llr_rnnlm_inputs_add(r->in, w, len, vid, err);
		if (in < 0)
			return in;
		r->in_ids[k + B] = in;
	}
	return LLR_OK;
}

/* The batch's ids (T steps of B sentences, time-major): input <s> then
 * the words, target the words then </s>, padding after. */
static int fill_ids(rnnlm *r, const llr_sentence *s, size_t B, size_t T, llr_err *err)
{
	llr_rnnlm_inputs_reset(r->in);
	if (r->rows)
		llr_open_batch_reset(r->rows);
	for (size_t b = 0; b < B; b++) {
		for (size_t t = 0; t < T; t++) {
			size_t k = t * B + b;
			r->oov_at[k] = 0;
			r->lp[k] = 0;
			r->lp_open[k] = 0;
			if (t > s[b].n) { /* padding */
				r->in_ids[k] = LLR_BOS_ID;
				r->tgt_ids[k] = -1;
				continue;
			}
			if (t < s[b].n) {
				int rc = fill_word(r, &s[b], t, k, B, T, err);
				if (rc < 0)
					return rc;
			} else {
				r->tgt_ids[k] = r->eos_id;
			}
			if (t == 0)
				r->in_ids[k] = LLR_BOS_ID;
		}
	}
	return LLR_OK;
}

/* The batch's log-probabilities, and with comp the scheduler's m_t. */
static int score_batch(llr_model *m, const llr_sentence *s, size_t B, double *logp, unsigned char *oov, double *comp,
                       llr_norm_stat *norm, llr_err *err)
{
	rnnlm *r = m->state;
	size_t T = 0;
	for (size_t b = 0; b < B; b++)
		T = LLR_MAX(T, s[b].n + 1);
	if (B == 0)
		return LLR_OK;
	if (ensure(r, T * B) < 0)
		return llr_err_set(err, LLR_ENOMEM, "out of memory for a batch of %zu sentences", B);
	int rc = fill_ids(r, s, B, T, err);
	if (rc < 0)
		return rc;
	llr_batch bt = {.B = (int)B, .T = (int)T, .input = r->in_ids, .target = r->tgt_ids, .psi = llr_rnnlm_inputs_psi(r->in),
	                .sched = comp ? r->sched : NULL};
	if (r->rows && (rc = llr_open_batch_finish(r->rows, &bt.xphi, &bt.xlogb, err)) < 0)
		return rc;
	double e;
	if ((rc = llr_net_score(r->model->net, &bt, r->lp, r->check_norm ? &e : NULL, err)) < 0)
		return rc;
	if (r->check_norm && norm)
		*norm = llr_net_norm(r->model->net);
	for (size_t b = 0, o = 0; b < B; b++) {
		for (size_t t = 0; t <= s[b].n; t++, o++) {
			size_t k = t * B + b;
			logp[o] = (double)r->lp[k] + r->lp_open[k];
			oov[o] = r->oov_at[k];
			if (comp)
				comp[o] = r->sched[k];
		}
	}
	return LLR_OK;
}

static int rnnlm_score(llr_model *m, const llr_sentence *s, size_t B, double *logp, unsigned char *oov, llr_norm_stat *norm,
                       llr_err *err)
{
	return score_batch(m, s, B, logp, oov, NULL, norm, err);
}

static int rnnlm_score_computation(llr_model *m, const llr_sentence *s, size_t B, double *logp, unsigned char *oov, double *comp,
                                   llr_norm_stat *norm, llr_err *err)
{
	const rnnlm *r = m->state;
	int cell = llr_net_cfg(r->model->net)->cell;
	if (!llr_cell_is_vc(cell))
		return llr_err_set(err, LLR_EINVAL, "%s: the model's cell is %s, not a variable-computation cell (vcrnn, vcgru): no m_t to show",
		                   m->path, llr_cell_name(cell));
	return score_batch(m, s, B, logp, oov, comp, norm, err);
}

static int rnnlm_set_threads(llr_model *m, int n, llr_err *err)
{
	rnnlm *r = m->state;
	return llr_net_set_score_threads(r->model->net, n, err);
}

/* The mask-only mode (llr_model_mask): the automaton attached to the
 * network as an automaton background b_fsa, so that each step's
 * distribution is p(x | K) b_fsa(q; x) / sum_y p(y | K) b_fsa(q; y),
 * the log-linear layer's exact normaliser over the allowed tokens: the
 * p' of gen(1)'s "Constrained generation".  On a model trained under an
 * automaton background, the intersection of its automaton with the
 * given one, weighted by both, takes the place of its own, as gen
 * follows the intersection. */
static int rnnlm_mask(llr_model *m, const char *fsa, const char *regex, const char *grammar, llr_err *err)
{
	rnnlm *r = m->state;
	const llr_lexicon *lex = r->model->lex;
	const char *opt = fsa ? "--fsa" : regex ? "--regex" : "--grammar";
	if (r->mask)
		return llr_err_set(err, LLR_EINVAL, "%s: %s: the model is masked already", m->path, opt);
	if (llr_net_cfg(r->model->net)->output != LLR_OUT_LOGLINEAR)
		return llr_err_set(err, LLR_EINVAL, "%s: %s: scoring under a mask needs the log-linear output, and the model's is %s "
		                   "(gen %s masks it when generating)", m->path, opt, output_name(llr_net_cfg(r->model->net)->output), opt);
	if (r->spread || r->op)
		return llr_err_set(err, LLR_EINVAL, "%s: %s: the model has a spelling model: score it --closed under a mask", m->path, opt);
	llr_fsa *a = llr_fsa_constraint(fsa, regex, grammar, lex->vocab, &m->notice, err);
	if (!a)
		return llr_err_code(err, LLR_EFORMAT);
	size_t len;
	llr_fsa *both = lex->fsa ? llr_fsa_meet_weighted(lex->fsa, a, err) : NULL;
	int rc = lex->fsa && !both ? llr_err_prefix(err, "%s: the model's %s and %s", m->path,
	                                            llr_fsa_grammar_source(lex->fsa, &len) ? "grammar" : "automaton", opt)
	                           : llr_net_set_fsa_bg(r->model->net, both ? both : a, lex->unk_id, err);
	if (rc < 0) {
		llr_fsa_free(both);
		llr_fsa_free(a);
		return rc;
	}
	r->mask = a;
	r->meet = both;
	return LLR_OK;
}

static int rnnlm_embed(llr_model *m, const llr_sentence *s, size_t B, float *vec, unsigned char *oov, llr_err *err)
{
	const rnnlm *r = m->state;
	return llr_rnnlm_embed(r->model, s, B, vec, oov, m->path, err);
}

const llr_family llr_family_rnnlm = {
	.name = "rnnlm",
	.what = "LSTM language models",
	.open = rnnlm_open,
	.close = rnnlm_close,
	.describe = rnnlm_describe,
	.meta = rnnlm_meta,
	.score = rnnlm_score,
	.score_computation = rnnlm_score_computation,
	.set_threads = rnnlm_set_threads,
	.mask = rnnlm_mask,
	.embed = rnnlm_embed,
	.word_features = rnnlm_model_word_features,
	.word = rnnlm_word,
	.no_pairs = LLR_LM_NO_PAIRS,
	.gen = &llr_rnnlm_gen_ops,
	.train = &llr_rnnlm_train_ops,
	.trainer = &llr_rnnlm_trainer,
};
