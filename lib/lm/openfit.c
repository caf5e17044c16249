/*
 * openfit.c - the starting output bias of an open-vocabulary LL-RNN: the
 * context-free log-linear model over the open background that fits the
 * training targets best (train(1); --no-bias-fit keeps the --init scheme's).
 *
 * The LL-RNN scores row y (a word of V or a signature) by
 * lb(y) + a(K).phi(y), a(K) = W h(K) + beta, beta the output bias (out/b).
 * With W = 0 it is the context-free model p(y) = e^{lb(y) + beta.phi(y)} /
 * Z(beta); its mean log-likelihood over the N training targets, less an L2
 * penalty (mu / 2) |beta|^2, is concave in beta, with gradient
 *     g = mean_t phi(y_t) - E_p[phi] - mu beta.
 * Fitted by Adam (rate 0.05, the usual moments) from beta = 0, then
 * written to out/b.  Why: the open background's spelling part
 * lambda q(w) knows nothing of the features, so a feature that sets real
 * words apart from made-up strings (HS:@known: 76% of Brown's training
 * hapaxes, 15% of the spelling model's mass outside V) needs a weight of
 * about ln(0.76 * 0.85 / (0.24 * 0.15)) = 2.9; a few hundred optimiser
 * steps of rate 0.001 cannot move the bias that far.
 * Not here: the background and the signatures (opensig.c), training.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Row y of R (a word y < V, else signature y - V): its matrix and row in
 * *r, its log background in *lb. */
static const llr_csr *row_of(const llr_open_rows *R, int32_t y, int32_t *r, double *lb)
{
	int32_t V = R->phi->rows;
	*r = y < V ? y : y - V;
	*lb = y < V ? R->logb_v[y] : R->sig_logb[y - V];
	return y < V ? R->phi : R->sig_phi;
}

/* Mean log-likelihood of the targets under beta; with e (F) non-NULL, also
 * E_p[phi] into e.  sc: V + S scratch. */
static double loglik(const llr_open_rows *R, const int64_t *count, double N, const double *beta, double *sc, double *e)
{
	int32_t V = R->phi->rows, S = R->sig_phi->rows;
	double mx = -INFINITY;
	for (int32_t y = 0; y < V + S; y++) {
		int32_t r;
		double lb;
		const llr_csr *m = row_of(R, y, &r, &lb);
		sc[y] = lb;
		for (int32_t k = m->indptr[r]; isfinite(lb) && k < m->indptr[r + 1]; k++)
			sc[y] += beta[m->indices[k]] * m->data[k];
		if (sc[y] > mx)
			mx = sc[y];
	}
	double z = 0;
	for (int32_t y = 0; y < V + S; y++)
		z += exp(sc[y] - mx);
	double logz = mx + log(z), ll = 0;
	for (int32_t y = 0; y < V + S; y++)
		if (count[y])
			ll += (double)count[y] * (sc[y] - logz);
	if (e) {
		memset(e, 0, (size_t)R->phi->cols * sizeof *e);
		for (int32_t y = 0; y < V + S; y++) {
			double p = exp(sc[y] - logz), lb;
			int32_t r;
			const llr_csr *m = row_of(R, y, &r, &lb);
			for (int32_t k = m->indptr[r]; k < m->indptr[r + 1]; k++)
				e[m->indices[k]] += p * m->data[k];
		}
	}
	return ll / N;
}

int llr_open_fit_rows(const llr_open_rows *R, const int64_t *count, const llr_fit_opts *fo, double *beta,
                      llr_fit_report *rep, llr_err *err)
{
	int32_t V = R->phi->rows, S = R->sig_phi->rows, F = R->phi->cols;
	if (R->sig_phi->cols != F)
		return llr_err_set(err, LLR_EINVAL, "bias fit: signatures have %d features, the words %d", R->sig_phi->cols, F);
	double N = 0;
	for (int32_t y = 0; y < V + S; y++) {
		if (count[y] < 0)
			return llr_err_set(err, LLR_EINVAL, "bias fit: count of row %d is negative", y);
		int32_t r;
		double lb;
		row_of(R, y, &r, &lb);
		if (count[y] && !isfinite(lb))
			return llr_err_set(err, LLR_EINVAL, "bias fit: row %d is a target but has no background mass", y);
		N += (double)count[y];
	}
	if (N <= 0)
		return llr_err_set(err, LLR_EINVAL, "bias fit: no targets");
	double *emp = calloc((size_t)F, sizeof *emp), *e = malloc((size_t)F * sizeof *e);
	double *m1 = calloc((size_t)F, sizeof *m1), *m2 = calloc((size_t)F, sizeof *m2);
	double *sc = malloc(((size_t)V + (size_t)S) * sizeof *sc);
	if (!emp || !e || !m1 || !m2 || !sc) {
		free(emp), free(e), free(m1), free(m2), free(sc);
		return llr_err_set(err, LLR_ENOMEM, "bias fit: out of memory");
	}
	for (int32_t y = 0; y < V + S; y++) {
		if (!count[y])
			continue;
		int32_t r;
		double lb;
		const llr_csr *m = row_of(R, y, &r, &lb);
		for (int32_t k = m->indptr[r]; k < m->indptr[r + 1]; k++)
			emp[m->indices[k]] += (double)count[y] * m->data[k] / N;
	}
	memset(beta, 0, (size_t)F * sizeof *beta);
	const double b1 = 0.9, b2 = 0.999;
	double gn = 0;
	rep->before = loglik(R, count, N, beta, sc, NULL);
	for (int it = 1; it <= fo->iters; it++) {
		loglik(R, count, N, beta, sc, e);
		gn = 0;
		double c1 = 1 - pow(b1, it), c2 = 1 - pow(b2, it); /* bias corrections */
		for (int32_t f = 0; f < F; f++) {
			double g = emp[f] - e[f] - fo->l2 * beta[f];
			gn += g * g;
			m1[f] = b1 * m1[f] + (1 - b1) * g;
			m2[f] = b2 * m2[f] + (1 - b2) * g * g;
			beta[f] += fo->rate * (m1[f] / c1) / (sqrt(m2[f] / c2) + 1e-8);
		}
	}
	rep->after = loglik(R, count, N, beta, sc, NULL);
	rep->grad_norm = sqrt(gn);
	rep->targets = N;
	rep->iters = fo->iters;
	free(emp), free(e), free(m1), free(m2), free(sc);
	return LLR_OK;
}

int llr_open_fit_bias(llr_open *o, const int64_t *count, const llr_fit_opts *fo, llr_fit_report *rep, llr_err *err)
{
	llr_open_rows R;
	llr_open_get_rows(o, &R);
	int32_t F = R.phi->cols;
	int64_t shape[2];
	float *w = llr_net_tensor(llr_open_model(o)->net, "out/b", shape);
	if (!w || shape[0] != F)
		return llr_err_set(err, LLR_EINVAL, "bias fit: the network has no output bias of %d features", F);
	double *beta = malloc((size_t)F * sizeof *beta);
	if (!beta)
		return llr_err_set(err, LLR_ENOMEM, "bias fit: out of memory");
	int rc = llr_open_fit_rows(&R, count, fo, beta, rep, err);
	if (rc == LLR_OK) {
		for (int32_t f = 0; f < F; f++)
			w[f] = (float)beta[f];
	}
	free(beta);
	return rc;
}
