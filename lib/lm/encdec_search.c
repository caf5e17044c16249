/*
 * encdec_search.c - beam search for the encoder-decoder, over one model
 * or an ensemble that averages the models' log-probabilities (llrnn.h,
 * llr_encdec_search; Neubig's NMT tutorial, sections 7.2 and 7.4).
 * Greedy search is the beam of 1.  The models run step by step through
 * llr_encdec_step on the hypotheses alive; each step ranks every
 * expansion of them, sets aside those ending in eos, keeps the best
 * others, and reorders the models' slots to follow them.  Under the first
 * model's output automaton (llr_encdec_set_fsa) an expansion is kept only
 * when a final state stays reachable within max_len (its state's
 * distance to one, then </s>), so every hypothesis can end in the
 * language; the others' automata mask through their log p.  A mask
 * (llr_search_opts.mask: the mask-only mode for models trained without
 * an automaton, or its intersection with the first model's) takes the
 * place of that automaton in the look-ahead, and each step's log p is
 * renormalised over the tokens it allows.  Not here: the
 * network (lib/nn/encdec.c), sampling, reading or printing.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

typedef struct cand {
	int k;     /* parent hypothesis */
	int32_t x; /* the token added */
	double lp; /* the parent's logp + log p(x) */
} cand;

static int cmp_cand(const void *pa, const void *pb)
{
	const cand *a = pa, *b = pb;
	if (a->lp != b->lp)
		return a->lp > b->lp ? -1 : 1;
	if (a->k != b->k)
		return a->k - b->k;
	return (a->x > b->x) - (a->x < b->x);
}

/* A working hypothesis with room for max_len tokens and attention rows. */
typedef struct work {
	int32_t *ids;
	float *attn;
	int len, finished;
	int32_t q; /* the first model's automaton state after ids */
	double logp, score;
} work;

void llr_hyp_clear(llr_hyp *h)
{
	if (!h)
		return;
	free(h->ids);
	free(h->attn);
	memset(h, 0, sizeof *h);
}

static void extend(work *dst, const work *src, int32_t x, double lp, const float *arow, int S)
{
	memcpy(dst->ids, src->ids, (size_t)src->len * sizeof *dst->ids);
	dst->ids[src->len] = x;
	if (arow) {
		memcpy(dst->attn, src->attn, (size_t)src->len * S * sizeof *dst->attn);
		memcpy(dst->attn + (size_t)src->len * S, arow, (size_t)S * sizeof *arow);
	}
	dst->len = src->len + 1;
	dst->logp = lp;
}

/* Token x as the step-th token after state q leaves room for a final
 * state and </s> within L tokens (</s> itself: q final). */
static int reachable(const llr_fsa *a, int32_t q, int32_t x, int32_t eos, int step, int L)
{
	if (q < 0)
		return 0;
	if (x == eos)
		return llr_fsa_final(a, q) > -INFINITY;
	int32_t r = llr_fsa_next(a, q, x, NULL);
	return r >= 0 && llr_fsa_dist(a, r) <= L - step - 1; /* INT32_MAX: none (an intersection's dead pair) */
}

static int by_score(const void *pa, const void *pb)
{
	const work *a = *(const work *const *)pa, *b = *(const work *const *)pb;
	if (a->score != b->score)
		return a->score > b->score ? -1 : 1;
	return 0;
}

/* The ensemble's log p for the n hypotheses alive into lp (n x V):
 * every model steps, their log p are averaged and renormalised. */
static int ensemble_step(llr_encdec *const *models, llr_encdec_state *const *states, int M, int n, const int32_t *in, int V, float *tmp, double *lp, float *attn, llr_err *err)
{
	size_t nv = (size_t)n * V;
	for (size_t i = 0; i < nv; i++)
		lp[i] = 0.0;
	for (int m = 0; m < M; m++) {
		int rc = llr_encdec_step(models[m], states[m], n, in, tmp, m == 0 ? attn : NULL, err);
		if (rc < 0)
			return rc;
		for (size_t i = 0; i < nv; i++)
			lp[i] += tmp[i];
	}
	if (M == 1)
		return LLR_OK;
	for (int k = 0; k < n; k++) {
		double *row = lp + (size_t)k * V, mx = -INFINITY, z = 0.0;
		for (int x = 0; x < V; x++) {
			row[x] /= M;
			mx = row[x] > mx ? row[x] : mx;
		}
		for (int x = 0; x < V; x++)
			z += exp(row[x] - mx);
		double lz = mx + log(z);
		for (int x = 0; x < V; x++)
			row[x] -= lz;
	}
	return LLR_OK;
}

/* Mask-only decoding: row (V log p after a hypothesis in state q of
 * mask a) times the weights of the tokens q allows (</s>: its final
 * weight), -inf elsewhere, renormalised over those. */
static void mask_row(const llr_fsa *a, int32_t q, int32_t eos, double *row, int V)
{
	double mx = -INFINITY, z = 0.0;
	for (int x = 0; x < V; x++) {
		float lw = -INFINITY;
		if (x == eos)
			lw = llr_fsa_final(a, q);
		else if (llr_fsa_next(a, q, x, &lw) < 0)
			lw = -INFINITY;
		row[x] = lw > -INFINITY ? row[x] + lw : -INFINITY;
		mx = row[x] > mx ? row[x] : mx;
	}
	if (mx == -INFINITY)
		return;
	for (int x = 0; x < V; x++)
		z += exp(row[x] - mx);
	double lz = mx + log(z);
	for (int x = 0; x < V; x++)
		row[x] -= lz;
}

int llr_encdec_search(llr_encdec *const *models, llr_encdec_state *const *states, int M, int32_t eos, const llr_search_opts *o, llr_hyp *out, int *nout, llr_err *err)
{
	if (M < 1 || o->beam < 1 || o->nbest < 1 || o->nbest > o->beam || o->max_len < 1 || !(o->len_norm >= 0.0) || !isfinite(o->len_norm))
		return llr_err_set(err, LLR_EINVAL, "search: bad options (models %d, beam %d, nbest %d, max length %d, length normalisation %g)", M, o->beam, o->nbest, o->max_len, o->len_norm);
	int K = o->beam, V = llr_encdec_cfg(models[0])->vocab, S = llr_encdec_state_len(states[0]), L = o->max_len;
	if (eos < 0 || eos >= V)
		return llr_err_set(err, LLR_EINVAL, "search: end symbol %d out of range [0, %d)", eos, V);
	for (int m = 1; m < M; m++)
		if (llr_encdec_cfg(models[m])->vocab != V)
			return llr_err_set(err, LLR_EINVAL, "search: model %d has %d target words, model 1 has %d", m + 1, llr_encdec_cfg(models[m])->vocab, V);
	if (o->mask && llr_encdec_fsa(models[0]) && llr_fsa_meet_support(o->mask) != llr_encdec_fsa(models[0]))
		return llr_err_set(err, LLR_EINVAL, "search: model 1 has its own output automaton: a mask must be its intersection with it");
	const llr_fsa *fsa = o->mask ? o->mask : llr_encdec_fsa(models[0]);
	if (fsa && llr_fsa_dist(fsa, llr_fsa_start(fsa)) > L - 1)
		return llr_err_set(err, LLR_ERANGE, "no accepting state is reachable within --max-len %d: the shortest output of the automaton needs %d token%s and </s>",
		                   L, (int)llr_fsa_dist(fsa, llr_fsa_start(fsa)), llr_fsa_dist(fsa, llr_fsa_start(fsa)) == 1 ? "" : "s");
	int keep_attn = o->attention && S > 0;
	size_t nw = (size_t)4 * K;
	work *w = llr_calloc(nw, sizeof *w);
	work **live = llr_calloc((size_t)K, sizeof *live), **next = llr_calloc((size_t)K, sizeof *next);
	work **fin = llr_calloc((size_t)2 * K + K, sizeof *fin);
	float *tmp = llr_malloc((size_t)K * V * sizeof *tmp), *at = llr_malloc((size_t)K * (S ? S : 1) * sizeof *at);
	double *lp = llr_malloc((size_t)K * V * sizeof *lp);
	cand *c = llr_malloc((size_t)K * V * sizeof *c);
	int32_t *in = llr_malloc((size_t)K * sizeof *in);
	int *from = llr_malloc((size_t)K * sizeof *from);
	int rc = LLR_OK;
	if (!w || !live || !next || !fin || !tmp || !at || !lp || !c || !in || !from)
		rc = llr_err_set(err, LLR_ENOMEM, "search: out of memory");
	for (size_t i = 0; rc >= 0 && i < nw; i++) {
		w[i].ids = llr_malloc((size_t)L * sizeof *w[i].ids);
		w[i].attn = keep_attn ? llr_malloc((size_t)L * S * sizeof *w[i].attn) : NULL;
		if (!w[i].ids || (keep_attn && !w[i].attn))
			rc = llr_err_set(err, LLR_ENOMEM, "search: out of memory");
	}
	/* the pool: live and next take K each, finished ones up to 2K */
	int nlive = 1, nfin = 0, nfree = 0;
	work **pool = NULL;
	if (rc >= 0 && !(pool = llr_malloc(nw * sizeof *pool)))
		rc = llr_err_set(err, LLR_ENOMEM, "search: out of memory");
	for (size_t i = 1; rc >= 0 && i < nw; i++)
		pool[nfree++] = &w[i];
	if (rc >= 0) {
		live[0] = &w[0];
		w[0].len = 0;
		w[0].logp = 0.0;
		w[0].q = fsa ? llr_fsa_start(fsa) : -1;
		in[0] = LLR_BOS_ID;
	}
	for (int step = 1; rc >= 0; step++) {
		if ((rc = ensemble_step(models, states, M, nlive, in, V, tmp, lp, keep_attn ? at : NULL, err)) < 0)
			break;
		for (int k = 0; o->mask && k < nlive; k++)
			mask_row(o->mask, live[k]->q, eos, lp + (size_t)k * V, V);
		size_t nc = 0;
		for (int k = 0; k < nlive; k++)
			for (int x = 0; x < V; x++) {
				double v = live[k]->logp + lp[(size_t)k * V + x];
				if (v > -INFINITY && (!fsa || reachable(fsa, live[k]->q, x, eos, step, L)))
					c[nc++] = (cand){k, x, v};
			}
		qsort(c, nc, sizeof *c, cmp_cand);
		int nnext = 0;
		for (size_t r = 0; r < nc && nnext < K; r++) {
			const float *arow = keep_attn ? at + (size_t)c[r].k * S : NULL;
			if (c[r].x == eos) {
				if (r >= (size_t)K)
					continue;
				work *f = pool[--nfree];
				extend(f, live[c[r].k], eos, c[r].lp, arow, S);
				f->finished = 1;
				fin[nfin++] = f;
				continue;
			}
			work *h = pool[--nfree];
			extend(h, live[c[r].k], c[r].x, c[r].lp, arow, S);
			h->finished = 0;
			h->q = fsa ? llr_fsa_next(fsa, live[c[r].k]->q, c[r].x, NULL) : -1;
			from[nnext] = c[r].k;
			in[nnext] = c[r].x;
			next[nnext++] = h;
		}
		for (int k = 0; k < nlive; k++)
			pool[nfree++] = live[k];
		memcpy(live, next, (size_t)nnext * sizeof *live);
		nlive = nnext;
		if (nfin >= K || nlive == 0 || step >= L)
			break;
		for (int m = 0; m < M; m++)
			llr_encdec_state_select(states[m], from, nlive);
	}
	if (rc >= 0) {
		/* rank: finished, then (if too few) the unfinished alive */
		int nrank = nfin;
		for (int k = 0; nfin < o->nbest && k < nlive; k++)
			fin[nrank++] = live[k];
		if (!nrank) /* every expansion had probability 0 (the ensemble's automata, a mask) */
			rc = llr_err_set(err, LLR_EINVAL, "search: no hypothesis finished or stayed alive: every token has probability 0");
		for (int i = 0; i < nrank; i++)
			fin[i]->score = o->len_norm > 0.0 ? fin[i]->logp / pow((double)fin[i]->len, o->len_norm) : fin[i]->logp;
		qsort(fin, (size_t)nrank, sizeof *fin, by_score);
		int n = nrank < o->nbest ? nrank : o->nbest;
		for (int i = 0; i < n && rc >= 0; i++) {
			llr_hyp *h = &out[i];
			memset(h, 0, sizeof *h);
			h->len = fin[i]->len;
			h->finished = fin[i]->finished;
			h->logp = fin[i]->logp;
			h->score = fin[i]->score;
			h->ids = llr_malloc((size_t)(h->len ? h->len : 1) * sizeof *h->ids);
			h->attn = keep_attn ? llr_malloc((size_t)(h->len ? h->len : 1) * S * sizeof *h->attn) : NULL;
			if (!h->ids || (keep_attn && !h->attn)) {
				rc = llr_err_set(err, LLR_ENOMEM, "search: out of memory");
				for (int j = 0; j <= i; j++)
					llr_hyp_clear(&out[j]);
				break;
			}
			memcpy(h->ids, fin[i]->ids, (size_t)h->len * sizeof *h->ids);
			if (keep_attn)
				memcpy(h->attn, fin[i]->attn, (size_t)h->len * S * sizeof *h->attn);
		}
		*nout = rc >= 0 ? n : 0;
	}
	for (size_t i = 0; w && i < nw; i++) {
		free(w[i].ids);
		free(w[i].attn);
	}
	free(w);
	free(pool);
	free(live);
	free(next);
	free(fin);
	free(tmp);
	free(at);
	free(lp);
	free(c);
	free(in);
	free(from);
	return rc;
}

int llr_encdec_force(llr_encdec *m, llr_encdec_state *s, const int32_t *tgt, int n, int32_t eos, const llr_fsa *mask, double *logp, llr_err *err)
{
	int V = llr_encdec_cfg(m)->vocab;
	if (n < 0 || eos < 0 || eos >= V)
		return llr_err_set(err, LLR_EINVAL, "force: %d tokens, end symbol %d, %d target words", n, eos, V);
	if (mask && llr_encdec_fsa(m) && llr_fsa_meet_support(mask) != llr_encdec_fsa(m))
		return llr_err_set(err, LLR_EINVAL, "force: the model has its own output automaton: a mask must be its intersection with it");
	float *row = llr_malloc((size_t)V * sizeof *row);
	double *lp = llr_malloc((size_t)V * sizeof *lp);
	int rc = row && lp ? LLR_OK : llr_err_set(err, LLR_ENOMEM, "force: out of memory");
	int32_t in = LLR_BOS_ID, q = mask ? llr_fsa_start(mask) : -1;
	for (int t = 0; rc >= 0 && t <= n; t++) {
		int32_t x = t < n ? tgt[t] : eos;
		if (x < 0 || x >= V) {
			rc = llr_err_set(err, LLR_EINVAL, "force: token %d out of range [0, %d)", x, V);
			break;
		}
		if (mask && q < 0) { /* past a token the mask rejects */
			logp[t] = -INFINITY;
			continue;
		}
		if ((rc = llr_encdec_step(m, s, 1, &in, row, NULL, err)) < 0)
			break;
		for (int y = 0; y < V; y++)
			lp[y] = row[y];
		if (mask)
			mask_row(mask, q, eos, lp, V);
		logp[t] = lp[x];
		if (mask)
			q = x == eos ? q : llr_fsa_next(mask, q, x, NULL);
		if (mask && logp[t] == -INFINITY)
			q = -1;
		in = x;
	}
	free(row);
	free(lp);
	return rc;
}
