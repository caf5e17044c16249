/*
 * openbg.c - the open background of open-vocabulary scoring (llrnn.h,
 * "The open background"): a lexicon's background over its vocabulary V'
 * (V less <unk>) and its spelling model over every other string, mixed
 * by lambda, the unseen-word mass:
 *     b(w) = (1 - lambda) b_V(w)               w in V'
 *     b(w) = lambda p_spell(w) / (1 - S_V)     w outside V'
 * b_V is the lexicon's logb renormalised to V' (<unk>'s share removed),
 * S_V the spelling model's mass on the strings of V'.  Both parts sum to
 * one over their sets, so b sums to one over all strings.  lambda is a
 * Good-Turing estimate from the training counts (llr_open_lambda).
 * Not here: the spelling model (spelling.c), where the lexicon stores it
 * (lexicon.c), the scoring modes that use b (score(1) --open, lib/family/rnnlm/).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ngram.h"

struct llr_openbg {
	const llr_lexicon *x; /* borrowed */
	double lambda;
	double log_outside; /* ln(1 - S_V) */
	double log_renorm;  /* -ln(1 - b_V(<unk>)), the renormaliser of logb to V' */
};

double llr_open_lambda(int64_t n1, int64_t n_unk, int64_t N)
{
	LLR_ASSERT(N >= 2 && n1 >= 0 && n_unk >= 0);
	double k = (double)(n1 + n_unk), n = (double)N;
	if (k < 1)
		k = 1;
	if (k > n - 1)
		k = n - 1;
	return k / n;
}

llr_openbg *llr_openbg_new(const llr_lexicon *x, llr_err *err)
{
	if (!x->spell) {
		llr_err_set(err, LLR_EINVAL, "no spelling model (featurize --spelling N makes one)");
		return NULL;
	}
	if (!(x->spell_lambda > 0 && x->spell_lambda < 1)) {
		llr_err_set(err, LLR_EINVAL, "the unseen-word mass %g is not in (0, 1)", x->spell_lambda);
		return NULL;
	}
	llr_openbg *g = llr_calloc(1, sizeof *g);
	if (!g) {
		llr_err_set(err, LLR_ENOMEM, "out of memory");
		return NULL;
	}
	g->x = x;
	g->lambda = x->spell_lambda;
	/* S_V, Kahan-summed: 1 - S_V must stay accurate when S_V nears 1 */
	double s = 0, comp = 0;
	int32_t V = (int32_t)llr_strmap_size(x->vocab);
	for (int32_t v = 0; v < V; v++) {
		if (v == x->unk_id)
			continue;
		double t = exp(llr_spelling_logp(x->spell, llr_strmap_str(x->vocab, v), llr_strmap_len(x->vocab, v))) - comp;
		double u = s + t;
		comp = (u - s) - t;
		s = u;
	}
	g->log_outside = log1p(-s);
	double bu = exp((double)x->logb[x->unk_id]);
	g->log_renorm = -log1p(-bu);
	if (!isfinite(g->log_outside) || !isfinite(g->log_renorm)) {
		llr_err_set(err, LLR_EINVAL, "the vocabulary holds all the mass of %s (spelling %g, background %g)",
		            isfinite(g->log_outside) ? "the background" : "the spelling model", s, bu);
		free(g);
		return NULL;
	}
	return g;
}

void llr_openbg_free(llr_openbg *g)
{
	free(g);
}

double llr_openbg_lambda(const llr_openbg *g)
{
	return g->lambda;
}

double llr_openbg_log_outside(const llr_openbg *g)
{
	return g->log_outside;
}

int32_t llr_openbg_word(const llr_openbg *g, const char *w, size_t len)
{
	int32_t id = llr_strmap_get(g->x->vocab, w, len);
	return id == g->x->unk_id ? -1 : id;
}

double llr_openbg_unseen_logp(const llr_openbg *g, const char *w, size_t len)
{
	return llr_spelling_logp(g->x->spell, w, len) - g->log_outside;
}

double llr_openbg_logb(const llr_openbg *g, const char *w, size_t len)
{
	int32_t id = llr_openbg_word(g, w, len);
	if (id >= 0)
		return log1p(-g->lambda) + (double)g->x->logb[id] + g->log_renorm;
	return log(g->lambda) + llr_openbg_unseen_logp(g, w, len);
}

int llr_openbg_draw(const llr_openbg *g, llr_rng *rng, int64_t tries, llr_buf *out, double *logq, int64_t *draws,
                    llr_err *err)
{
	*draws = 0;
	while (*draws < tries) {
		double lps;
		int rc = llr_spelling_sample(g->x->spell, rng, out, &lps, err);
		if (rc < 0)
			return rc;
		++*draws;
		const char *w = out->data ? out->data : "";
		if (!llr_open_is_token(w, out->len) || llr_openbg_word(g, w, out->len) >= 0)
			continue;
		if (logq)
			*logq = lps - g->log_outside;
		return 1;
	}
	return 0;
}
