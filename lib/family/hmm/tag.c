/*
 * tag.c - decoding with the HMM tagger (hmm.h): the lexical model of a
 * word (a known word's p(w | t) = f(w, t) / f(t) over the tags it was
 * seen with; an unknown word's by TnT's suffix analysis, section 2.3:
 * successive abstraction over the suffixes of the rare training words
 * of its capitalisation, turned into p(w | t) up to a factor that is the
 * same for every tag by Bayes's rule, P(t | suffix) / P(t)), and the
 * second-order Viterbi search over pairs of tags, exact or with TnT's
 * beam.  Not here: the model (model.c).
 */
#include "family/hmm/hmm.h"

#include <math.h>
#include <stdlib.h>

int llr_hmm_suffix_probs(const llr_hmm *h, const hmm_suffix *sm, const char *w, size_t n, double *p)
{
	const int32_t T = h->T;
	for (int32_t t = 0; t < T; t++)
		p[t] = sm->total ? (double)sm->base[t] / (double)sm->total : 0;
	int k = 1;
	for (long i; k <= h->max_suffix && (i = hmm_suffix_at(w, n, k)) >= 0; k++) {
		int32_t id = llr_strmap_get(sm->sfx, w + i, n - (size_t)i);
		if (id < 0)
			break;
		/* P_k(t) = (P^(t | s_k) + theta P_k-1(t)) / (1 + theta) */
		const hmm_rows *r = &sm->rows;
		double tot = (double)r->total[id];
		for (int32_t t = 0; t < T; t++)
			p[t] *= h->theta;
		for (int64_t e = r->ptr[id]; e < r->ptr[id + 1]; e++)
			p[r->tag[e]] += (double)r->count[e] / tot;
		for (int32_t t = 0; t < T; t++)
			p[t] /= 1 + h->theta;
	}
	return k - 1;
}

void hmm_viterbi_free(hmm_viterbi *v)
{
	free(v->delta);
	free(v->back);
	*v = (hmm_viterbi){0};
}

/* The tag of candidate k at position i, BOS before the sentence. */
static int32_t tag_at(const llr_hmm *h, long i, const int32_t *cand, const size_t *off, int32_t k)
{
	return i < 0 ? HMM_BOS(h->T) : cand[off[i] + (size_t)k];
}

/* delta[i] is a table nc[i-1] x nc[i] (nc[-1] = 1: BOS) of the best log
 * score of a path ending in that pair; back[] the best candidate at i-2. */
int llr_hmm_viterbi(hmm_viterbi *v, const llr_hmm *h, size_t n, const int32_t *nc, const size_t *off, const int32_t *cand,
                    const double *logem, double beam, int32_t *best, double *score, llr_err *err)
{
	*score = 0;
	if (n == 0)
		return LLR_OK;
	size_t need = 0;
	for (size_t i = 0; i < n; i++)
		need += (size_t)(i ? nc[i - 1] : 1) * (size_t)nc[i];
	if (need > v->cap) {
		free(v->delta);
		free(v->back);
		v->delta = llr_malloc(need * sizeof *v->delta);
		v->back = llr_malloc(need * sizeof *v->back);
		v->cap = v->delta && v->back ? need : 0;
		if (!v->cap)
			return llr_err_set(err, LLR_ENOMEM, "out of memory for a sentence of %zu words", n);
	}
	const double cut = beam > 1 ? log(beam) : INFINITY;
	size_t base = 0, prev = 0;
	for (size_t i = 0; i < n; i++) {
		const int32_t na = i ? nc[i - 1] : 1, nb = nc[i], nz = i > 1 ? nc[i - 2] : 1;
		double *d = v->delta + base, top = -INFINITY;
		int32_t *bk = v->back + base;
		for (int32_t a = 0; a < na; a++)
			for (int32_t b = 0; b < nb; b++) {
				int32_t t2 = tag_at(h, (long)i - 1, cand, off, a), t3 = cand[off[i] + (size_t)b], arg = 0;
				double m = -INFINITY;
				for (int32_t z = 0; z < nz; z++) {
					double s = i ? v->delta[prev + (size_t)z * (size_t)na + (size_t)a] : 0;
					if (s == -INFINITY)
						continue;
					s += hmm_logtrans(h, tag_at(h, (long)i - 2, cand, off, z), t2, t3);
					if (s > m) {
						m = s;
						arg = z;
					}
				}
				d[(size_t)a * nb + b] = m + logem[off[i] + (size_t)b];
				bk[(size_t)a * nb + b] = arg;
				top = fmax(top, d[(size_t)a * nb + b]);
			}
		for (size_t k = 0; cut < INFINITY && k < (size_t)na * nb; k++)
			if (d[k] < top - cut)
				d[k] = -INFINITY;
		prev = base;
		base += (size_t)na * nb;
	}
	/* the end: p(EOS | the last two tags) */
	const int32_t na = n > 1 ? nc[n - 2] : 1, nb = nc[n - 1];
	double m = -INFINITY;
	int32_t ba = 0, bb = 0;
	for (int32_t a = 0; a < na; a++)
		for (int32_t b = 0; b < nb; b++) {
			double s = v->delta[prev + (size_t)a * nb + b];
			if (s == -INFINITY)
				continue;
			s += hmm_logtrans(h, tag_at(h, (long)n - 2, cand, off, a), cand[off[n - 1] + (size_t)b], HMM_EOS(h->T));
			if (s > m) {
				m = s;
				ba = a;
				bb = b;
			}
		}
	*score = m;
	/* back: position i's table starts at the sum of the sizes before it */
	best[n - 1] = bb;
	if (n > 1)
		best[n - 2] = ba;
	size_t at = prev;
	for (size_t i = n - 1; i >= 2; i--) {
		const int32_t nb_i = nc[i];
		int32_t z = v->back[at + (size_t)best[i - 1] * nb_i + best[i]];
		at -= (size_t)nc[i - 2] * (size_t)nc[i - 1];
		best[i - 2] = z;
	}
	return LLR_OK;
}
