/*
 * llclass.c - classes of words that the log-linear output cannot tell
 * apart: words whose rows of Phi are identical (same features, same
 * values) get the same score a . phi at every position, so the output
 * layer needs one score per distinct row, weighted by the class's summed
 * background:
 *
 *   Z = sum_c B_c exp(a . phi_c),   B_c = sum_{x in c} b(x)
 *   E_p[phi] = sum_c P(c) phi_c,    P(c) = B_c exp(a . phi_c) / Z
 *
 * which is exact, not an approximation.  With the top-M identities of the
 * LL-RNN every top word is its own class and the rest fall into a few
 * hundred classes of tag sets, so the pass over V shrinks several times.
 * Only the grouping is here; the output layer that uses it is loglinear.c.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nn.h"

static uint64_t row_hash(const llr_csr *m, int32_t r)
{
	uint64_t h = 1469598103934665603ull;
	for (int32_t k = m->indptr[r]; k < m->indptr[r + 1]; k++) {
		uint32_t bits;
		memcpy(&bits, &m->data[k], sizeof bits);
		h = (h ^ (uint32_t)m->indices[k]) * 1099511628211ull;
		h = (h ^ bits) * 1099511628211ull;
	}
	return h ^ (uint64_t)(m->indptr[r + 1] - m->indptr[r]);
}

static int rows_equal(const llr_csr *m, int32_t r, int32_t s)
{
	int32_t a = m->indptr[r], n = m->indptr[r + 1] - a, b = m->indptr[s];
	return n == m->indptr[s + 1] - b && !memcmp(m->indices + a, m->indices + b, (size_t)n * sizeof *m->indices) &&
	       !memcmp(m->data + a, m->data + b, (size_t)n * sizeof *m->data);
}

void llr_ll_classes_free(llr_ll_classes *k)
{
	llr_csr_free(k->phi);
	free(k->logB);
	free(k->of);
	llr_ll_factors_free(k->fac);
	memset(k, 0, sizeof *k);
}

int llr_ll_classes_build(llr_ll_classes *k, const llr_csr *phi, const float *logb, llr_err *err)
{
	int32_t V = phi->rows;
	int rc = LLR_ENOMEM;
	memset(k, 0, sizeof *k);
	size_t cap = 16;
	while (cap < 2 * (size_t)V)
		cap *= 2;
	int32_t *slot = malloc(cap * sizeof *slot);  /* a representative word, -1 empty */
	int32_t *rep = malloc(((size_t)V + 1) * sizeof *rep); /* class -> its first word */
	double *mx = malloc(((size_t)V + 1) * sizeof *mx), *sum = NULL;
	k->of = malloc(((size_t)V + 1) * sizeof *k->of);
	if (!slot || !rep || !mx || !k->of)
		goto nomem;
	for (size_t i = 0; i < cap; i++)
		slot[i] = -1;
	int32_t C = 0;
	for (int32_t v = 0; v < V; v++) {
		size_t i = (size_t)row_hash(phi, v) & (cap - 1);
		while (slot[i] >= 0 && !rows_equal(phi, slot[i], v))
			i = (i + 1) & (cap - 1);
		if (slot[i] < 0) {
			slot[i] = v;
			rep[C] = v;
			mx[C] = -INFINITY;
			k->of[v] = C++;
		} else {
			k->of[v] = k->of[slot[i]];
		}
	}
	/* log B_c = log sum exp(logb), shifted by the class's max */
	sum = calloc((size_t)C + 1, sizeof *sum);
	k->logB = malloc(((size_t)C + 1) * sizeof *k->logB);
	llr_csr_builder *bd = llr_csr_builder_new(phi->cols);
	if (!sum || !k->logB || !bd) {
		llr_csr_builder_free(bd);
		goto nomem;
	}
	for (int32_t v = 0; v < V; v++)
		if (logb[v] > mx[k->of[v]])
			mx[k->of[v]] = logb[v];
	for (int32_t v = 0; v < V; v++)
		if (mx[k->of[v]] > -INFINITY)
			sum[k->of[v]] += exp((double)logb[v] - mx[k->of[v]]);
	for (int32_t c = 0; c < C; c++) {
		k->logB[c] = mx[c] > -INFINITY ? (float)(mx[c] + log(sum[c])) : -INFINITY;
		int32_t a = phi->indptr[rep[c]], n = phi->indptr[rep[c] + 1] - a;
		if ((rc = llr_csr_builder_row(bd, phi->indices + a, phi->data + a, (size_t)n, err)) < 0) {
			llr_csr_builder_free(bd);
			goto fail;
		}
	}
	if (!(k->phi = llr_csr_builder_finish(bd, err))) {
		rc = LLR_ENOMEM;
		goto fail;
	}
	k->C = C;
	free(slot);
	free(rep);
	free(mx);
	free(sum);
	return LLR_OK;
nomem:
	rc = llr_err_set(err, LLR_ENOMEM, "output layer: out of memory grouping %d words", V);
fail:
	free(slot);
	free(rep);
	free(mx);
	free(sum);
	llr_ll_classes_free(k);
	return rc;
}
