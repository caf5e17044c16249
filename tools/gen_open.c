/*
 * gen_open.c - gen's open vocabulary (see gen_open.h).  An LL-RNN with
 * signature masses: the network's step gives V + S log-probabilities,
 * the words' and the signatures' (llr_net_out_width); a drawn signature
 * s becomes a string w of q = p_spell / (1 - S_V) restricted to the
 * strings of row s, by rejection (llr_open_draw), so
 *     p(draw w) = p(s | K) q(w) / Q(s),   the model's p(w | K) = p(s | K) q(w) / M(s)
 * with Q(s) the true q-mass of s and M(s) the model's: the two agree
 * (exact masses), or up to M's sampling error (drawn ones).  When no draw of --spell-tries has
 * the row, the signature is taken out of that draw and the token drawn
 * again.  Other models with a spelling model: a drawn <unk> becomes a
 * string outside V' drawn from q, with log p(<unk> | K) + ln q(w), as
 * score gives it; after --spell-tries draws all in V', <unk> is taken out
 * of that draw in the same way.  So no open mode prints the string
 * "<unk>", which score would read as a string outside V' (its own
 * probability, not p(<unk> | K)); greedy and beam search leave it out too.
 */
#include "gen_open.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

void genopen_init(genopen *o, slm *lm, int closed, int64_t tries)
{
	memset(o, 0, sizeof *o);
	o->V = o->W = lm->V;
	o->unk = lm->unk_id;
	o->tries = tries;
	if (closed || !lm->lex->spell)
		return;
	llr_err e = {0};
	if (llr_net_cfg(lm->net)->output == LLR_OUT_LOGLINEAR && llr_lexicon_sigs(lm->lex)) {
		if (!(o->op = llr_open_new(lm->model, &e)) || !(o->rows = llr_open_batch_new(o->op, &e)))
			cli_die("open vocabulary: %s", e.msg);
		o->mode = GOPEN_LL;
		o->W = llr_net_out_width(lm->net);
		return;
	}
	if (!(o->bg = llr_openbg_new(lm->lex, &e)))
		cli_die("open vocabulary: %s", e.msg);
	o->mode = GOPEN_SPELL;
}

void genopen_free(genopen *o)
{
	llr_open_batch_free(o->rows);
	llr_open_free(o->op);
	llr_openbg_free(o->bg);
	memset(o, 0, sizeof *o);
}

void genopen_mask(const genopen *o, float *row)
{
	for (int32_t x = o->V; x < o->W; x++)
		row[x] = -INFINITY;
	if (o->mode == GOPEN_SPELL && o->unk >= 0)
		row[o->unk] = -INFINITY;
}

int32_t genopen_pick(genopen *o, llr_sampler *s, const llr_sample_opts *so, float *row, float lp_unk, llr_rng *rng,
                     llr_buf *word, float *lp, int32_t *sig)
{
	if (so->greedy)
		genopen_mask(o, row);
	for (;;) {
		int32_t id = llr_sample(s, so, row, rng);
		if (id < 0)
			cli_die("the model gives no finite log-probability to any word");
		llr_err e = {0};
		double lq;
		int64_t d = 0;
		int rc = 0;
		if (o->mode == GOPEN_LL && id >= o->V) {
			rc = llr_open_draw(o->op, id - o->V, rng, o->tries, word, &lq, &d, &e);
			*sig = id - o->V;
		} else if (o->mode == GOPEN_SPELL && id == o->unk && !so->greedy) {
			rc = llr_openbg_draw(o->bg, rng, o->tries, word, &lq, &d, &e);
			*sig = -1;
		} else {
			*lp = id == o->unk ? lp_unk : row[id];
			return id;
		}
		if (rc < 0)
			cli_die_err(&e);
		o->draws += d;
		if (rc == 1) {
			*lp = (float)((double)(id == o->unk ? lp_unk : row[id]) + lq);
			o->words++;
			return -1;
		}
		o->fallbacks++;
		row[id] = -INFINITY; /* no spelling found: draw again without it */
	}
}

void genopen_prefix(genopen *o, slm *lm, char *const *ws, size_t n, const int32_t *in, float *lps)
{
	if (o->mode == GOPEN_SPELL) {
		for (size_t k = 0; k < n; k++) {
			size_t len = strlen(ws[k]);
			int32_t id = slm_word(lm, ws[k], len);
			if (id < 0 || id == o->unk)
				lps[k] += (float)llr_openbg_unseen_logp(o->bg, ws[k], len);
		}
		return;
	}
	if (o->mode != GOPEN_LL || n == 0)
		return;
	int32_t *bin = ereallocarray(NULL, n, sizeof *bin), *tg = ereallocarray(NULL, n, sizeof *tg);
	float *lp = ereallocarray(NULL, n, sizeof *lp);
	int any = 0;
	llr_err e = {0};
	llr_open_batch_reset(o->rows);
	for (size_t k = 0; k < n; k++) {
		int oov;
		bin[k] = k ? in[k - 1] : LLR_BOS_ID;
		if ((tg[k] = llr_open_batch_target(o->rows, ws[k], strlen(ws[k]), &oov, &e)) < 0)
			cli_die_err(&e);
		any |= oov;
	}
	llr_batch bt = {.B = 1, .T = (int)n, .input = bin, .target = tg, .psi = slm_psi(lm)};
	if (llr_open_batch_finish(o->rows, &bt.xphi, &bt.xlogb, &e) < 0 ||
	    (any && llr_net_score(lm->net, &bt, lp, NULL, &e) != LLR_OK))
		cli_die_err(&e);
	for (size_t k = 0; any && k < n; k++)
		if (tg[k] >= o->V)
			lps[k] = lp[k];
	llr_open_batch_reset(o->rows);
	free(bin);
	free(tg);
	free(lp);
}

void genopen_sig_features(const genopen *o, slm *lm, int32_t sig, llr_buf *out)
{
	const llr_csr *p = llr_lexicon_sig_phi(lm->lex);
	int32_t a = p->indptr[sig];
	slm_row_features(lm, p->indices + a, p->data + a, (size_t)(p->indptr[sig + 1] - a), out);
}

void genopen_summary(const genopen *o)
{
	if (o->mode == GOPEN_CLOSED)
		return;
	fprintf(stderr, "%s: open vocabulary (%s): %lld unseen words from %lld draws of p_spell; %lld %s given up after %lld draws\n",
	        cli_prog, o->mode == GOPEN_LL ? "LL-RNN, a signature then its spelling" : "<unk> spelled from p_spell",
	        (long long)o->words, (long long)o->draws, (long long)o->fallbacks,
	        o->mode == GOPEN_LL ? "signatures" : "<unk>s", (long long)o->tries);
}
