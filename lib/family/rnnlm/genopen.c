/*
 * genopen.c - the open vocabulary of an LSTM language model's generation
 * (issue 14; gen(1), "Unseen words"; rnnlm.h): with a model that
 * carries a spelling model, a sampled token can be a string outside the
 * vocabulary.  An LL-RNN with signature masses (RGEN_LL): the network's
 * step gives V + S log-probabilities, the words' and the signatures'
 * (llr_net_out_width); a drawn signature s becomes a string w of
 * q = p_spell / (1 - S_V) restricted to the strings of row s, by
 * rejection (llr_open_draw), so
 *     p(draw w) = p(s | K) q(w) / Q(s),   the model's p(w | K) = p(s | K) q(w) / M(s)
 * with Q(s) the true q-mass of s and M(s) the model's: the two agree
 * (exact masses), or up to M's sampling error (drawn ones).  When no
 * draw of spell_tries has the row, the signature is taken out of that
 * draw and the token drawn again.  Other models with a spelling model
 * (RGEN_SPELL): a drawn <unk> becomes a string outside V' drawn from q,
 * with log p(<unk> | K) + ln q(w), as llr_model_score gives it; after
 * spell_tries draws all in V', <unk> is taken out of that draw in the
 * same way.  So no open mode yields the string "<unk>", which score
 * would read as a string outside V' (its own probability, not
 * p(<unk> | K)); greedy and beam search leave it out too.
 */
#include "family/rnnlm/rnnlm.h"

#include <math.h>
#include <stdlib.h>

void rgen_open_init(rgen *q, const llr_gen_opts *o)
{
	q->mode = RGEN_CLOSED;
	q->W = q->V;
	if (o->closed)
		return;
	if (q->r->op) {
		q->mode = RGEN_LL;
		q->W = llr_net_out_width(q->net);
	} else if (q->r->spread) {
		q->mode = RGEN_SPELL;
	}
}

void rgen_open_mask(const rgen *q, float *row)
{
	for (int32_t x = q->V; x < q->W; x++)
		row[x] = -INFINITY;
	if (q->mode == RGEN_SPELL && q->unk >= 0)
		row[q->unk] = -INFINITY;
}

int rgen_open_pick(rgen *q, const llr_gen *g, llr_gen_hyp *h, float *row, float lp_unk, int32_t *out, float *lp, int32_t *sig,
                   llr_err *err)
{
	const llr_gen_opts *o = &g->o;
	llr_rng *rng = &h->rng;
	const llr_sample_opts *so = &o->sample;
	if (so->greedy)
		rgen_open_mask(q, row);
	for (;;) {
		int32_t id = llr_sample(q->sampler, so, row, rng);
		if (id < 0)
			return llr_gen_no_word(g, h, 1, err);
		double lq;
		int64_t d = 0;
		int rc = 0;
		if (q->mode == RGEN_LL && id >= q->V) {
			rc = llr_open_draw(q->r->op, id - q->V, rng, o->spell_tries, &q->word, &lq, &d, err);
			*sig = id - q->V;
		} else if (q->mode == RGEN_SPELL && id == q->unk && !so->greedy) {
			rc = llr_openbg_draw(q->r->spread, rng, o->spell_tries, &q->word, &lq, &d, err);
			*sig = -1;
		} else {
			*lp = id == q->unk ? lp_unk : row[id];
			*out = id;
			return LLR_OK;
		}
		if (rc < 0)
			return rc;
		q->draws += d;
		if (rc == 1) {
			*lp = (float)((double)(id == q->unk ? lp_unk : row[id]) + lq);
			q->words++;
			*out = -1;
			return LLR_OK;
		}
		q->fallbacks++;
		row[id] = -INFINITY; /* no spelling found: draw again without it */
	}
}

/* RGEN_LL: the prefix's unseen words by their own rows (llr_net_score). */
static int prefix_ll(rgen *q, const llr_gen *g, llr_err *err)
{
	size_t n = g->pre.n;
	int32_t *bin = llr_reallocarray(NULL, n, sizeof *bin), *tg = llr_reallocarray(NULL, n, sizeof *tg);
	float *lp = llr_reallocarray(NULL, n, sizeof *lp);
	int any = 0, rc = LLR_OK;
	if (!bin || !tg || !lp) {
		rc = llr_err_set(err, LLR_ENOMEM, "out of memory for a prefix of %zu words", n);
		goto out;
	}
	llr_open_batch_reset(q->r->rows);
	for (size_t k = 0; k < n; k++) {
		int oov;
		const char *w = llr_gen_pword(g, k);
		bin[k] = k ? q->pin[k - 1] : LLR_BOS_ID;
		if ((tg[k] = llr_open_batch_target(q->r->rows, w, strlen(w), &oov, err)) < 0) {
			rc = tg[k];
			goto out;
		}
		any |= oov;
	}
	llr_batch bt = {.B = 1, .T = (int)n, .input = bin, .target = tg, .psi = llr_rnnlm_inputs_psi(q->r->in)};
	if ((rc = llr_open_batch_finish(q->r->rows, &bt.xphi, &bt.xlogb, err)) < 0 ||
	    (any && (rc = llr_net_score(q->net, &bt, lp, NULL, err)) != LLR_OK))
		goto out;
	for (size_t k = 0; any && k < n; k++)
		if (tg[k] >= q->V)
			g->pre.lps[k] = lp[k];
	llr_open_batch_reset(q->r->rows);
out:
	free(bin);
	free(tg);
	free(lp);
	return rc < 0 ? rc : LLR_OK;
}

int rgen_open_prefix(rgen *q, const llr_gen *g, llr_err *err)
{
	if (q->mode == RGEN_SPELL) {
		for (size_t k = 0; k < g->pre.n; k++) {
			const char *w = llr_gen_pword(g, k);
			size_t len = strlen(w);
			int32_t id = llr_strmap_get(q->lex->vocab, w, len);
			if (id < 0 || id == q->unk)
				g->pre.lps[k] += (float)llr_openbg_unseen_logp(q->r->spread, w, len);
		}
		return LLR_OK;
	}
	return q->mode == RGEN_LL && g->pre.n ? prefix_ll(q, g, err) : LLR_OK;
}

int rgen_open_note(const llr_gen *g, llr_buf *out)
{
	const rgen *q = g->state;
	if (q->mode == RGEN_CLOSED)
		return LLR_OK;
	int ll = q->mode == RGEN_LL;
	return llr_buf_printf(out, "open vocabulary (%s): %lld unseen words from %lld draws of p_spell; %lld %s given up after %lld draws",
	                      ll ? "LL-RNN, a signature then its spelling" : "<unk> spelled from p_spell", (long long)q->words,
	                      (long long)q->draws, (long long)q->fallbacks, ll ? "signatures" : "<unk>s",
	                      (long long)g->o.spell_tries) < 0
	           ? LLR_ENOMEM
	           : LLR_OK;
}
