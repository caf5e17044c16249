/*
 * llfactor.c - the classes' rows of the log-linear output as products
 * over groups of features, so that the normaliser of an open vocabulary
 * costs one exponential per distinct part of a row, not one per row.
 * The features fall into G groups (for the signatures of an open
 * vocabulary: the spelling's suffixes, its orthographic class, the rest),
 * each row phi_c into its parts phi_c|g, and
 *
 *   Z = sum_c B_c e^{a . phi_c} = sum_c B_c prod_g e^{a . phi_c|g},
 *
 * so a position needs the score and exponential of each distinct part
 * once, then one multiply-add a class.  The classes are sorted by their
 * parts in the first G - 1 groups (a prefix): a prefix's product is taken
 * once, and its classes sum B_c e^{a . phi_c|last} under it; the last
 * group is the one that leaves the fewest prefixes.  Tens of thousands of
 * signatures have a few thousand distinct suffix parts and a few hundred
 * orthographic ones.  Only the grouping is here; the output layer
 * that uses it is loglinear.c (the loss and its gradient; the full
 * distribution and the norm check still run over the rows).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nn.h"

/* Per row and per part, the cost of a score and its exponential beyond
 * its nonzeros, in multiply-adds (vexp1's polynomial and reduction). */
#define EXP_COST 16

void llr_ll_factors_free(llr_ll_factors *fz)
{
	if (!fz)
		return;
	for (int g = 0; g < LLR_LL_GROUPS; g++)
		llr_csr_free(fz->part[g]);
	free(fz->pre);
	free(fz->pre_end);
	free(fz->last);
	free(fz->w);
	free(fz);
}

/* The C rows of phi restricted to the features of group g. */
static llr_csr *project(const llr_csr *phi, const int32_t *group_of, int g, llr_err *err)
{
	llr_csr_builder *b = llr_csr_builder_new(phi->cols);
	int32_t *ix = malloc(((size_t)phi->cols + 1) * sizeof *ix);
	float *val = malloc(((size_t)phi->cols + 1) * sizeof *val);
	if (!b || !ix || !val) {
		llr_err_set(err, LLR_ENOMEM, "output layer: out of memory factoring its rows");
		goto fail;
	}
	for (int32_t r = 0; r < phi->rows; r++) {
		size_t n = 0;
		for (int32_t k = phi->indptr[r]; k < phi->indptr[r + 1]; k++)
			if (group_of[phi->indices[k]] == g) {
				ix[n] = phi->indices[k];
				val[n++] = phi->data[k];
			}
		if (llr_csr_builder_row(b, ix, val, n, err) < 0)
			goto fail;
	}
	free(ix);
	free(val);
	return llr_csr_builder_finish(b, err);
fail:
	llr_csr_builder_free(b);
	free(ix);
	free(val);
	return NULL;
}

/* A class and its parts, groups in the order of the factors. */
typedef struct term {
	int32_t id[LLR_LL_GROUPS];
	int32_t c;
} term;

/* By the parts (unused groups are 0), then by class. */
static int term_cmp(const void *pa, const void *pb)
{
	const term *a = pa, *b = pb;
	for (int g = 0; g < LLR_LL_GROUPS; g++)
		if (a->id[g] != b->id[g])
			return a->id[g] < b->id[g] ? -1 : 1;
	return a->c < b->c ? -1 : a->c > b->c;
}

/* The C classes as terms t, their parts in the order of the groups but
 * last, then last; sorted.  Returns the number of prefixes. */
static int32_t terms_sorted(term *t, const llr_ll_classes *part, int32_t C, int G, int last, int *order)
{
	for (int g = 0, i = 0; g < G; g++)
		if (g != last)
			order[i++] = g;
	order[G - 1] = last;
	for (int32_t c = 0; c < C; c++) {
		for (int i = 0; i < G; i++)
			t[c].id[i] = part[order[i]].of[c];
		t[c].c = c;
	}
	qsort(t, (size_t)C, sizeof *t, term_cmp);
	int32_t npre = 0;
	for (int32_t c = 0; c < C; c++)
		if (c == 0 || memcmp(t[c].id, t[c - 1].id, (size_t)(G - 1) * sizeof *t[c].id) != 0)
			npre++;
	return npre;
}

/* The multiply-adds of a score and exponential for each of m's rows. */
static double pass_cost(const llr_csr *m)
{
	return (double)m->nnz + (double)EXP_COST * m->rows;
}

int llr_ll_factors_build(llr_ll_classes *k, const int32_t *group_of, int G, llr_err *err)
{
	LLR_ASSERT(G >= 1 && G <= LLR_LL_GROUPS && k->phi);
	llr_ll_factors_free(k->fac);
	k->fac = NULL;
	int32_t C = k->C;
	for (int32_t f = 0; f < k->phi->cols; f++)
		LLR_ASSERT(group_of[f] >= 0 && group_of[f] < G);
	llr_ll_classes part[LLR_LL_GROUPS] = {{0}};
	llr_ll_factors *fz = calloc(1, sizeof *fz);
	term *t = calloc((size_t)C + 1, sizeof *t);
	float *zero = calloc((size_t)C + 1, sizeof *zero);
	int rc = LLR_ENOMEM;
	if (!fz || !t || !zero)
		goto nomem;

	/* each group's distinct parts (classes of its projected rows) */
	int order[LLR_LL_GROUPS], last = 0;
	for (int g = 0; g < G; g++) {
		llr_csr *p = project(k->phi, group_of, g, err);
		if (!p) {
			rc = LLR_ENOMEM;
			goto fail;
		}
		rc = llr_ll_classes_build(&part[g], p, zero, err);
		llr_csr_free(p);
		if (rc < 0)
			goto fail;
	}
	/* the last group's parts are summed under each prefix (its parts in
	 * the other groups), whose product is taken once: the last group is
	 * the one that leaves the fewest prefixes */
	int32_t best = -1;
	for (int g = 0; g < G; g++) {
		int32_t npre = terms_sorted(t, part, C, G, g, order);
		if (best < 0 || npre < best) {
			best = npre;
			last = g;
		}
	}
	if (last != G - 1)
		terms_sorted(t, part, C, G, last, order);
	fz->G = G;
	fz->nterm = C;
	fz->npre = best;
	fz->pre = malloc(((size_t)fz->npre * (size_t)(G > 1 ? G - 1 : 1) + 1) * sizeof *fz->pre);
	fz->pre_end = malloc(((size_t)fz->npre + 1) * sizeof *fz->pre_end);
	fz->last = malloc(((size_t)C + 1) * sizeof *fz->last);
	fz->w = malloc(((size_t)C + 1) * sizeof *fz->w);
	if (!fz->pre || !fz->pre_end || !fz->last || !fz->w)
		goto nomem;
	int32_t q = -1;
	for (int32_t c = 0; c < C; c++) {
		if (c == 0 || memcmp(t[c].id, t[c - 1].id, (size_t)(G - 1) * sizeof *t[c].id) != 0) {
			q++;
			for (int i = 0; i < G - 1; i++)
				fz->pre[(size_t)q * (size_t)(G - 1) + (size_t)i] = t[c].id[i];
		}
		fz->pre_end[q] = c + 1;
		fz->last[c] = t[c].id[G - 1];
		fz->w[c] = exp((double)k->logB[t[c].c]);
	}
	double cost = 2.0 * C + (double)fz->npre * (G + 1);
	int32_t parts = 0;
	for (int i = 0; i < G; i++) {
		fz->part[i] = part[order[i]].phi;
		part[order[i]].phi = NULL;
		cost += pass_cost(fz->part[i]);
		parts += fz->part[i]->rows;
	}
	fz->parts = parts;
	for (int g = 0; g < G; g++)
		llr_ll_classes_free(&part[g]);
	free(t);
	free(zero);
	/* worth it only well below the pass over the rows; the parts' scores
	 * must fit the rows' scratch */
	if (cost >= 0.75 * pass_cost(k->phi) || parts > C) {
		llr_ll_factors_free(fz);
		return 0;
	}
	k->fac = fz;
	return 1;
nomem:
	rc = llr_err_set(err, LLR_ENOMEM, "output layer: out of memory factoring its rows");
fail:
	for (int g = 0; g < G; g++)
		llr_ll_classes_free(&part[g]);
	llr_ll_factors_free(fz);
	free(t);
	free(zero);
	return rc;
}
