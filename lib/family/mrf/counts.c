/*
 * counts.c - what learning the chain MRF sees of a corpus (mrf.h): its
 * length N, the count of every word, and for each distance k = 1..K the
 * counts of the pairs (x_i, x_{i+k}); and the corpus score S(x) =
 * par . counts from them, with its gradient.  Not here: the bound on
 * log Z (bound.c).
 */
#include "family/mrf/mrf.h"

#include <stdlib.h>

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return a < b ? -1 : a > b;
}

/* The pairs at distance k, sorted and run-length counted. */
static int pairs_at(const int32_t *ids, size_t n, int32_t V, int k, mrf_pairs *p, llr_err *err)
{
	size_t m = n > (size_t)k ? n - (size_t)k : 0;
	uint64_t *key = llr_malloc((m ? m : 1) * sizeof *key);
	if (!key)
		return llr_err_set(err, LLR_ENOMEM, "out of memory for the pair counts");
	for (size_t i = 0; i < m; i++)
		key[i] = (uint64_t)ids[i] * (uint64_t)V + (uint64_t)ids[i + (size_t)k];
	qsort(key, m, sizeof *key, cmp_u64);
	size_t distinct = 0;
	for (size_t i = 0; i < m; i++)
		distinct += i == 0 || key[i] != key[i - 1];
	p->a = llr_malloc((distinct ? distinct : 1) * sizeof *p->a);
	p->b = llr_malloc((distinct ? distinct : 1) * sizeof *p->b);
	p->c = llr_malloc((distinct ? distinct : 1) * sizeof *p->c);
	if (!p->a || !p->b || !p->c) {
		free(key);
		return llr_err_set(err, LLR_ENOMEM, "out of memory for the pair counts");
	}
	p->n = 0;
	for (size_t i = 0; i < m; i++) {
		if (i == 0 || key[i] != key[i - 1]) {
			p->a[p->n] = (int32_t)(key[i] / (uint64_t)V);
			p->b[p->n] = (int32_t)(key[i] % (uint64_t)V);
			p->c[p->n++] = 0;
		}
		p->c[p->n - 1] += 1;
	}
	free(key);
	return LLR_OK;
}

int mrf_counts_make(const int32_t *ids, size_t n, int32_t V, int K, mrf_counts *c, llr_err *err)
{
	memset(c, 0, sizeof *c);
	c->N = (int64_t)n;
	c->V = V;
	c->K = K;
	if (!(c->uni = llr_calloc((size_t)V, sizeof *c->uni)))
		return llr_err_set(err, LLR_ENOMEM, "out of memory for the counts");
	for (size_t i = 0; i < n; i++)
		c->uni[ids[i]] += 1;
	for (int k = 1; k <= K; k++) {
		int rc = pairs_at(ids, n, V, k, &c->pair[k - 1], err);
		if (rc < 0) {
			mrf_counts_free(c);
			return rc;
		}
	}
	return LLR_OK;
}

void mrf_counts_free(mrf_counts *c)
{
	free(c->uni);
	for (int k = 0; k < MRF_MAX_K; k++) {
		free(c->pair[k].a), free(c->pair[k].b), free(c->pair[k].c);
		c->pair[k] = (mrf_pairs){0};
	}
	c->uni = NULL;
}

double mrf_score_counts(const mrf_dims *d, const double *par, const mrf_counts *c, double *g)
{
	double s = 0;
	int D = d->D;
	for (int32_t w = 0; w < d->V; w++) {
		s += par[w] * c->uni[w];
		if (g)
			g[w] += c->uni[w];
	}
	for (int k = 1; k <= d->K; k++) {
		const mrf_pairs *p = &c->pair[k - 1];
		const double *u = par + mrf_u_off(d, k), *v = par + mrf_v_off(d, k);
		for (size_t j = 0; j < p->n; j++) {
			const double *ua = u + (size_t)p->a[j] * D, *vb = v + (size_t)p->b[j] * D;
			double t = 0;
			for (int i = 0; i < D; i++)
				t += ua[i] * vb[i];
			s += p->c[j] * t;
			if (!g)
				continue;
			double *gu = g + mrf_u_off(d, k) + (size_t)p->a[j] * D, *gv = g + mrf_v_off(d, k) + (size_t)p->b[j] * D;
			for (int i = 0; i < D; i++) {
				gu[i] += p->c[j] * vb[i];
				gv[i] += p->c[j] * ua[i];
			}
		}
	}
	return s;
}
