/*
 * prime.c - the translation table t(x | s) behind the source-conditioned
 * background of the encoder-decoder (llrnn.h, llr_prime_table):
 * Dymetman & Xiao's condition-based priming, b(C; x) from the bag of
 * source tokens C, with
 *
 *   tbar(x | C) = (1/|C|) sum_{s in C} t(x | s)
 *
 * which is IBM model 1's probability of one target token given the
 * source.  The table is estimated from aligned training pairs: first from
 * co-occurrence counts, each target token's count shared equally among
 * the source tokens of its pair; then, if asked, by EM iterations of IBM
 * model 1 (each target token's count shared in proportion to t(x | s)).
 * Each row is smoothed towards the add-one target unigram distribution
 * u (u(x) = (count(x) + 1) / (N + V), so no entry is 0 even for a word
 * absent from the pairs, such as <unk>):
 *   t(x | s) = (n(s, x) + k u(x)) / (n(s) + k)
 * so a source token never seen gets u, and no entry is 0.  Not here: the
 * use of the table in the output layer (lib/nn/encdec.c).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* t from the expected counts n (Vs x V) and the unigram u. */
static void normalise(int32_t Vs, int32_t V, const double *n, const double *u, double k, float *table)
{
	for (int32_t s = 0; s < Vs; s++) {
		const double *row = n + (size_t)s * V;
		double tot = 0.0;
		for (int32_t x = 0; x < V; x++)
			tot += row[x];
		float *t = table + (size_t)s * V;
		for (int32_t x = 0; x < V; x++)
			t[x] = (float)((row[x] + k * u[x]) / (tot + k));
	}
}

int llr_prime_table(int32_t Vs, int32_t V, size_t npairs, const int32_t *src, const size_t *soff, const int32_t *tgt, const size_t *toff, int iters, double k, float *table, llr_err *err)
{
	if (Vs <= 0 || V <= 0 || iters < 0 || !(k > 0.0) || !isfinite(k))
		return llr_err_set(err, LLR_EINVAL, "priming table: bad arguments (Vs %d, V %d, iterations %d, smoothing %g)", Vs, V, iters, k);
	size_t cells = (size_t)Vs * (size_t)V;
	double *n = llr_calloc(cells, sizeof *n), *u = llr_calloc((size_t)V, sizeof *u);
	double *w = NULL;
	if (!n || !u) {
		free(n);
		free(u);
		return llr_err_set(err, LLR_ENOMEM, "priming table: out of memory for %d x %d", Vs, V);
	}
	double total = 0.0;
	size_t maxs = 0;
	for (size_t p = 0; p < npairs; p++) {
		size_t ls = soff[p + 1] - soff[p];
		maxs = LLR_MAX(maxs, ls);
		for (size_t i = toff[p]; i < toff[p + 1]; i++) {
			int32_t x = tgt[i];
			if (x < 0 || x >= V) {
				free(n);
				free(u);
				return llr_err_set(err, LLR_EINVAL, "priming table: pair %zu: target id %d out of range [0, %d)", p, x, V);
			}
			u[x] += 1.0;
			total += 1.0;
		}
		for (size_t j = soff[p]; j < soff[p + 1]; j++)
			if (src[j] < 0 || src[j] >= Vs) {
				free(n);
				free(u);
				return llr_err_set(err, LLR_EINVAL, "priming table: pair %zu: source id %d out of range [0, %d)", p, src[j], Vs);
			}
	}
	if (total == 0.0) {
		free(n);
		free(u);
		return llr_err_set(err, LLR_EEMPTY, "priming table: no target token");
	}
	/* add-one, so a target word the pairs never show (<unk>) keeps a
	 * positive background */
	for (int32_t x = 0; x < V; x++)
		u[x] = (u[x] + 1.0) / (total + (double)V);
	/* co-occurrence: each target token's count split equally */
	for (size_t p = 0; p < npairs; p++) {
		size_t ls = soff[p + 1] - soff[p];
		if (ls == 0)
			continue;
		double share = 1.0 / (double)ls;
		for (size_t j = soff[p]; j < soff[p + 1]; j++) {
			double *row = n + (size_t)src[j] * V;
			for (size_t i = toff[p]; i < toff[p + 1]; i++)
				row[tgt[i]] += share;
		}
	}
	normalise(Vs, V, n, u, k, table);
	if (iters > 0 && !(w = llr_malloc((maxs ? maxs : 1) * sizeof *w))) {
		free(n);
		free(u);
		return llr_err_set(err, LLR_ENOMEM, "priming table: out of memory");
	}
	for (int it = 0; it < iters; it++) {
		memset(n, 0, cells * sizeof *n);
		for (size_t p = 0; p < npairs; p++) {
			size_t s0 = soff[p], ls = soff[p + 1] - s0;
			for (size_t i = toff[p]; ls && i < toff[p + 1]; i++) {
				int32_t x = tgt[i];
				double z = 0.0;
				for (size_t j = 0; j < ls; j++) {
					w[j] = table[(size_t)src[s0 + j] * V + x];
					z += w[j];
				}
				for (size_t j = 0; j < ls; j++)
					n[(size_t)src[s0 + j] * V + x] += w[j] / z;
			}
		}
		normalise(Vs, V, n, u, k, table);
	}
	free(w);
	free(n);
	free(u);
	return LLR_OK;
}
