/*
 * genbeam.c - the beam search of the families whose every step is one
 * distribution over the vocabulary per live hypothesis, computed from
 * its words alone (the feed-forward and log-linear language models;
 * gen.h llr_gen_beam_search): each step keeps the K best continuations;
 * one ending in </s> among the K best is finished; the search stops when
 * K are, or at max_len (the live ones then end there, without </s>);
 * the finished ones ranked as the LSTM's (llr_gen_rank).  Not here: the
 * distributions (the family's dist), the LSTM's beam (rnnlm/beam.c).
 */
#include "family/gen.h"

#include <math.h>
#include <stdlib.h>

void llr_gen_beam_free(llr_gen_beams *b)
{
	for (int k = 0; k < 2 * b->K; k++) {
		if (k < b->K) {
			llr_gen_hyp_free(&b->bl[k]);
			llr_gen_hyp_free(&b->bn[k]);
		}
		llr_gen_hyp_free(&b->bf[k]);
	}
	free(b->bl);
	free(b->bn);
	free(b->bf);
	free(b->cs);
	free(b->top);
	free(b->order);
	free(b->rows);
	memset(b, 0, sizeof *b);
}

/* Room for K beams over V words. */
static int room(llr_gen_beams *b, int K, int32_t V)
{
	if (K <= b->K)
		return LLR_OK;
	llr_gen_beam_free(b);
	b->bl = llr_calloc((size_t)K, sizeof *b->bl);
	b->bn = llr_calloc((size_t)K, sizeof *b->bn);
	b->bf = llr_calloc(2 * (size_t)K, sizeof *b->bf);
	b->cs = llr_malloc(2 * (size_t)K * (size_t)K * sizeof *b->cs);
	b->top = llr_malloc(2 * (size_t)K * sizeof *b->top);
	b->order = llr_malloc(2 * (size_t)K * sizeof *b->order);
	b->rows = llr_malloc((size_t)K * (size_t)V * sizeof *b->rows);
	if (!b->bl || !b->bn || !b->bf || !b->cs || !b->top || !b->order || !b->rows) {
		b->K = 0;
		return LLR_ENOMEM;
	}
	b->K = K;
	return LLR_OK;
}

/* The continuations of the n live hypotheses, best first; how many. */
static int candidates(llr_gen *g, llr_gen_beams *b, int n, const llr_gen_beam_model *bm, llr_err *err)
{
	const int K = g->o.beam;
	int rc = bm->dist(g, b->bl, n, b->rows, err);
	if (rc < 0)
		return rc;
	int nc = 0;
	for (int k = 0; k < n; k++) {
		float *row = b->rows + (size_t)k * bm->V;
		if ((rc = llr_gen_constrain(g, &b->bl[k], row, bm->V, err)) < 0)
			return rc;
		if (g->o.no_unk && bm->unk >= 0 && bm->unk != bm->eos)
			row[bm->unk] = -INFINITY;
		int32_t m = llr_top_k(row, bm->V, 2 * K, b->top);
		if (m < 0)
			return llr_err_set(err, LLR_ENOMEM, "out of memory");
		for (int32_t j = 0; j < m; j++) {
			float lp = row[b->top[j]];
			if (isfinite(lp))
				b->cs[nc++] = (llr_gen_cand){b->bl[k].lp + lp, k, b->top[j], lp};
		}
	}
	if (!nc)
		return llr_gen_no_word(g, &b->bl[0], 1, err);
	qsort(b->cs, (size_t)nc, sizeof *b->cs, llr_gen_cand_cmp);
	return nc;
}

int llr_gen_beam_search(llr_gen *g, llr_gen_beams *b, const llr_gen_beam_model *bm, llr_err *err)
{
	const int K = g->o.beam;
	if (room(b, K, bm->V) < 0)
		return llr_err_set(err, LLR_ENOMEM, "out of memory for %d beams", K);
	int nlive = 1, nfin = 0;
	llr_gen_hyp_restart(&b->bl[0], g->pre.lp);
	for (int len = 0; nlive > 0 && nfin < K; len++) {
		if (len >= g->o.max_len) {
			for (int k = 0; k < nlive; k++)
				if (llr_gen_hyp_copy(&b->bf[nfin++], &b->bl[k]) < 0)
					return llr_err_set(err, LLR_ENOMEM, "out of memory");
			break;
		}
		int nc = candidates(g, b, nlive, bm, err), nnext = 0;
		if (nc < 0)
			return nc;
		for (int c = 0; c < nc && nnext < K; c++) {
			const llr_gen_cand *x = &b->cs[c];
			int fin = x->id == bm->eos;
			if (fin && (c >= K || nfin >= K))
				continue;
			llr_gen_hyp *to = fin ? &b->bf[nfin++] : &b->bn[nnext++];
			if (llr_gen_hyp_copy(to, &b->bl[x->beam]) < 0 || llr_gen_hyp_advance(to, x->id, x->lp, bm->eos, g->o.max_len) < 0)
				return llr_err_set(err, LLR_ENOMEM, "out of memory");
		}
		llr_gen_hyp *t = b->bl;
		b->bl = b->bn;
		b->bn = t;
		nlive = nnext;
	}
	llr_gen_rank(g, b->bf, nfin, b->order);
	return LLR_OK;
}
