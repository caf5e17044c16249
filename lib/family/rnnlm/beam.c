/*
 * beam.c - beam search for an LSTM language model (llr_gen_beam; rnnlm.h)
 * with K beams: each step keeps the K best continuations by total log p;
 * a hypothesis ending in </s> among the K best is finished; the search
 * stops when K are finished or at max_len, and the finished ones are
 * ranked by log p / length (generated tokens, </s> included).  Only
 * vocabulary words: no signature, no spelled <unk>.
 */
#include "family/rnnlm/rnnlm.h"

#include <math.h>
#include <stdlib.h>

/* The candidates of the nlive beams' rows into q->cs; how many. */
static int candidates(rgen *q, llr_gen *g, int nlive, llr_err *err)
{
	const llr_gen_opts *o = &g->o;
	const int K = o->beam;
	int nc = 0;
	for (int b = 0; b < nlive; b++) {
		float *row = q->rows + (size_t)b * q->W;
		int rc = llr_gen_constrain(g, &q->live[b], row, q->W, err);
		if (rc < 0)
			return rc;
		rgen_mask_row(q, o, row);
		rgen_open_mask(q, row);                          /* a spelled <unk> is not one word */
		int32_t m = llr_top_k(row, q->V, 2 * K, q->top); /* the words only */
		if (m < 0)
			return llr_err_set(err, LLR_ENOMEM, "out of memory");
		for (int32_t j = 0; j < m; j++)
			if (isfinite(row[q->top[j]]))
				q->cs[nc++] = (llr_gen_cand){q->live[b].lp + row[q->top[j]], b, q->top[j], row[q->top[j]]};
	}
	if (nc == 0)
		return llr_gen_no_word(g, &q->live[0], 1, err);
	qsort(q->cs, (size_t)nc, sizeof *q->cs, llr_gen_cand_cmp);
	return nc;
}

int rgen_beam(llr_gen *g, llr_err *err)
{
	rgen *q = g->state;
	const int K = g->o.beam;
	int nlive = 1, nfin = 0, rc = LLR_OK;
	for (int b = 0; b < q->nstreams; b++)
		llr_net_state_copy(q->stA, b, q->st1, 0);
	memcpy(q->rows, q->row1, (size_t)q->W * sizeof *q->rows);
	llr_gen_hyp_restart(&q->live[0], g->pre.lp);
	for (int len = 0; nlive > 0; len++) {
		int nc = candidates(q, g, nlive, err), nnext = 0;
		if (nc < 0)
			return nc;
		for (int c = 0; c < nc && nnext < K && rc == LLR_OK; c++) {
			const llr_gen_cand *x = &q->cs[c];
			if (x->id == q->eos) {
				if (c < K && nfin < K && (rc = llr_gen_hyp_copy(&q->fin[nfin], &q->live[x->beam])) == LLR_OK)
					rc = llr_gen_hyp_advance(&q->fin[nfin++], x->id, x->lp, q->eos, g->o.max_len);
				continue;
			}
			if ((rc = llr_gen_hyp_copy(&q->next[nnext], &q->live[x->beam])) == LLR_OK)
				rc = llr_gen_hyp_advance(&q->next[nnext], x->id, x->lp, q->eos, g->o.max_len);
			llr_net_state_copy(q->stB, nnext, q->stA, x->beam);
			q->inputs[nnext] = x->id;
			nnext++;
		}
		if (rc < 0)
			return llr_err_set(err, LLR_ENOMEM, "out of memory");
		llr_gen_hyp *t = q->live;
		q->live = q->next;
		q->next = t;
		llr_net_state *ts = q->stA;
		q->stA = q->stB;
		q->stB = ts;
		nlive = nnext;
		if (nfin >= K)
			break;
		if (len + 1 >= g->o.max_len) {
			/* Out of length: the live ones end here, without </s>. */
			for (int b = 0; b < nlive && nfin < 2 * K; b++)
				if (llr_gen_hyp_copy(&q->fin[nfin++], &q->live[b]) < 0)
					return llr_err_set(err, LLR_ENOMEM, "out of memory");
			break;
		}
		for (int b = nlive; b < q->nstreams; b++)
			q->inputs[b] = LLR_BOS_ID;
		if ((rc = rgen_step(q, q->stA, q->inputs, q->rows, err)) < 0)
			return rc;
	}
	llr_gen_rank(g, q->fin, nfin, q->order);
	return LLR_OK;
}
