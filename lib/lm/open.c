/*
 * open.c - open-vocabulary scoring with the LL-RNN (issue 14, item 4;
 * llrnn(7), "Open vocabulary"): llr_open sets a model's network up with
 * the lexicon's signature masses (llr_net_set_open) and draws fresh
 * strings for the norm check, which sums V exactly and the rest by
 * importance sampling from q (llr_net_set_norm_rows), or exactly by the
 * strata and the forward pass (lib/lexicon/: opendigits.c, openshort.c,
 * opendict.c, openexact.c); llr_open_draw spells a signature's strings.
 * Split from lexicon/opensig.c, which estimates the masses and reads and
 * writes them with the lexicon, below the models (scripts/layers).  Not
 * here: the masses (opensig.c), lambda and b (openbg.c), the output
 * layer (loglinear.c).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "nn/nn.h"

struct llr_open {
	llr_rnnlm *m; /* borrowed */
	llr_openbg *g;
	float *logb_v, *sig_logb;
	llr_csr *nrm;
	float *nrm_logw;
	int64_t *nrm_cnt;
	int32_t nrm_digits, nrm_short;       /* the digit groups and short strings the norm check sums exactly */
	int32_t nrm_dict;                    /* and the dictionary's forms */
	int32_t nrm_classes, nrm_listed;     /* exact: the pass's classes and the strings listed apart */
	int nrm_is_exact;                    /* the last check summed every string exactly */
	int64_t nrm_checked, nrm_mismatched; /* exact: the draws whose row was compared with their class's, and those that differ */
	llr_buf nrm_first;                   /* the first that differs */
	llr_rowbuf r;                        /* llr_open_draw's rows */
};

void llr_open_free(llr_open *o)
{
	if (!o)
		return;
	llr_openbg_free(o->g);
	free(o->logb_v);
	free(o->sig_logb);
	llr_csr_free(o->nrm);
	free(o->nrm_logw);
	free(o->nrm_cnt);
	free(o->r.c);
	free(o->r.v);
	llr_buf_free(&o->nrm_first);
	free(o);
}

/* The output's features in three groups for its factored normaliser
 * (llr_net_set_out_groups): the suffixes, the orthographic classes and
 * the rest, so that a signature's row is a product of a few hundred
 * orthographic and other parts and a few thousand suffix parts. */
static int factor_output(llr_net *net, const llr_lexicon *x, llr_err *err)
{
	int32_t F = (int32_t)llr_strmap_size(x->features);
	int32_t *group = llr_malloc(((size_t)F + 1) * sizeof *group);
	if (!group)
		return llr_err_set(err, LLR_ENOMEM, "out of memory");
	for (int32_t f = 0; f < F; f++) {
		const char *name = llr_strmap_str(x->features, f);
		group[f] = !strncmp(name, "SUF:", 4) ? 0 : !strncmp(name, "ORTH:", 5) ? 1
		                                                                      : 2;
	}
	int rc = llr_net_set_out_groups(net, group, 3, err);
	free(group);
	return rc;
}

llr_open *llr_open_new(llr_rnnlm *m, llr_err *err)
{
	const llr_lexicon *x = m->lex;
	if (!x->sig) {
		llr_err_set(err, LLR_EINVAL, "no signature masses (featurize --spelling estimates them)");
		return NULL;
	}
	llr_open *o = calloc(1, sizeof *o);
	int32_t V = (int32_t)llr_strmap_size(x->vocab), S = x->sig->phi->rows;
	if (!o || !(o->logb_v = llr_malloc((size_t)V * sizeof(float))) ||
	    !(o->sig_logb = llr_malloc((size_t)S * sizeof(float)))) {
		llr_err_set(err, LLR_ENOMEM, "out of memory");
		goto fail;
	}
	o->m = m;
	if (!(o->g = llr_openbg_new(x, err)))
		goto fail;
	for (int32_t v = 0; v < V; v++)
		o->logb_v[v] = v == x->unk_id ? -INFINITY
		                              : (float)llr_openbg_logb(o->g, llr_strmap_str(x->vocab, v), llr_strmap_len(x->vocab, v));
	double ll = log(llr_openbg_lambda(o->g));
	for (int32_t s = 0; s < S; s++)
		o->sig_logb[s] = (float)(ll + (double)x->sig->logm[s]);
	if (llr_net_set_open(m->net, o->logb_v, x->sig->phi, o->sig_logb, err) < 0 || factor_output(m->net, x, err) < 0)
		goto fail;
	return o;
fail:
	llr_open_free(o);
	return NULL;
}

void llr_open_get_rows(const llr_open *o, llr_open_rows *R)
{
	const llr_lexicon *x = o->m->lex;
	R->phi = x->phi;
	R->sig_phi = x->sig->phi;
	R->logb_v = o->logb_v;
	R->sig_logb = o->sig_logb;
}

llr_rnnlm *llr_open_model(const llr_open *o)
{
	return o->m;
}

int32_t llr_open_word(const llr_open *o, const char *w, size_t len)
{
	return llr_openbg_word(o->g, w, len);
}

double llr_open_logb(const llr_open *o, const char *w, size_t len)
{
	return llr_openbg_logb(o->g, w, len);
}

/* The rows of classes a (weights logw_a, counts 0: exact) then of
 * classes c (weights logw_c, counts cnt) into o's norm rows. */
static int join_norm_rows(llr_open *o, const llr_ll_classes *a, const float *logw_a, const llr_ll_classes *c,
                          float logw_c, const int64_t *cnt, llr_err *err)
{
	int32_t na = a->phi ? a->phi->rows : 0, R = na + c->phi->rows;
	llr_csr_builder *b = llr_csr_builder_new(c->phi->cols);
	o->nrm_logw = llr_malloc((size_t)R * sizeof *o->nrm_logw);
	o->nrm_cnt = llr_calloc((size_t)R, sizeof *o->nrm_cnt);
	int rc = b && o->nrm_logw && o->nrm_cnt ? LLR_OK : llr_err_set(err, LLR_ENOMEM, "out of memory");
	for (int32_t i = 0; rc >= 0 && i < R; i++) {
		const llr_csr *p = i < na ? a->phi : c->phi;
		int32_t r = i < na ? i : i - na, s = p->indptr[r];
		rc = llr_csr_builder_row(b, p->indices + s, p->data + s, (size_t)(p->indptr[r + 1] - s), err);
		o->nrm_logw[i] = i < na ? logw_a[i] : logw_c;
		o->nrm_cnt[i] = i < na ? 0 : cnt[r];
	}
	if (rc >= 0 && !(o->nrm = llr_csr_builder_finish(b, err)))
		rc = llr_err_code(err, LLR_ENOMEM);
	else if (rc < 0)
		llr_csr_builder_free(b);
	return rc;
}

/* The norm check of a model whose signature masses are exact: every
 * string outside V' summed exactly again (openexact.c, from the model's
 * spelling model and features, not from its stored masses), and K draws
 * from p_spell outside V' and the lists, each checked to have the row of
 * the class the pass gave it: the one thing the exact sum takes on trust. */
static int exact_norm(llr_open *o, int64_t K, llr_rng *rng, llr_err *err)
{
	const llr_lexicon *x = o->m->lex;
	char why[512] = "";
	llr_exact_rows er = {0};
	llr_ll_classes k = {0};
	llr_buf w = {0};
	int rc = llr_exact_rows_make(x, o->g, NULL, NULL, &er, why, sizeof why, err);
	if (rc >= 0 && !er.phi)
		rc = llr_err_set(err, LLR_EINVAL, "norm check: the exact pass cannot follow the model's features: %s", why);
	if (rc < 0 || (rc = llr_ll_classes_build(&k, er.phi, er.logq, err)) < 0)
		goto out;
	double ll = log(llr_openbg_lambda(o->g));
	if (!(o->nrm_logw = llr_malloc(((size_t)k.C + 1) * sizeof *o->nrm_logw)) ||
	    !(o->nrm_cnt = llr_calloc((size_t)k.C + 1, sizeof *o->nrm_cnt))) {
		rc = llr_err_set(err, LLR_ENOMEM, "out of memory");
		goto out;
	}
	for (int c = 0; c < k.C; c++)
		o->nrm_logw[c] = (float)(ll + (double)k.logB[c]);
	o->nrm = k.phi;
	k.phi = NULL;
	o->nrm_classes = er.classes;
	o->nrm_listed = er.listed;
	o->nrm_is_exact = 1;
	int32_t cols[256];
	int64_t tries = 0;
	while (o->nrm_checked < K) {
		if (++tries > 1000 * (K + 10)) {
			rc = llr_err_set(err, LLR_ERANGE, "norm check: the spelling model's strings are all listed (%lld draws)",
			                 (long long)tries);
			goto out;
		}
		if ((rc = llr_spelling_sample(x->spell, rng, &w, NULL, err)) < 0)
			goto out;
		const char *s = w.data ? w.data : "";
		if (llr_strmap_get(er.listed_set, s, w.len) >= 0 || llr_openbg_word(o->g, s, w.len) >= 0)
			continue;
		size_t m;
		if ((rc = llr_any_row_buf(x, s, w.len, &o->r, &m, err)) < 0)
			goto out;
		int32_t c = llr_openpass_class_of(er.pass, s, w.len);
		size_t n = c >= 0 ? llr_openpass_row(er.pass, c, cols, sizeof cols / sizeof *cols) : 0;
		int same = c >= 0 && n == m && !memcmp(cols, o->r.c, n * sizeof *cols);
		for (size_t i = 0; same && i < m; i++)
			same = o->r.v[i] == 1.0f;
		o->nrm_checked++;
		if (!same && !o->nrm_mismatched++ && llr_buf_append(&o->nrm_first, s, w.len) < 0) {
			rc = llr_err_set(err, LLR_ENOMEM, "out of memory");
			goto out;
		}
	}
	rc = llr_net_set_norm_rows(o->m->net, o->nrm, o->nrm_logw, o->nrm_cnt, 0, err);
out:
	llr_ll_classes_free(&k);
	llr_exact_rows_free(&er);
	llr_buf_free(&w);
	return rc;
}

int64_t llr_open_norm_exact(const llr_open *o, int32_t *listed, int64_t *mismatched, const char **first)
{
	*listed = o->nrm_listed;
	*mismatched = o->nrm_mismatched;
	*first = o->nrm_first.data;
	return o->nrm_is_exact ? o->nrm_checked : -1;
}

int llr_open_norm_samples(llr_open *o, int64_t K, uint64_t seed, llr_err *err)
{
	llr_rng rng;
	llr_rng_seed(&rng, seed);
	int64_t drawn;
	if (K < 1)
		return llr_err_set(err, LLR_EINVAL, "norm check: %lld samples", (long long)K);
	if (!o->m->lex->sig->exact && seed == o->m->lex->sig->seed) /* the same draws: a check that cannot fail */
		return llr_err_set(err, LLR_EINVAL, "norm check: seed %llu is the signature masses' own (it would redraw their strings)",
		                   (unsigned long long)seed);
	llr_net_set_norm_rows(o->m->net, NULL, NULL, NULL, 0, NULL);
	llr_csr_free(o->nrm);
	free(o->nrm_logw);
	free(o->nrm_cnt);
	o->nrm = NULL;
	o->nrm_logw = NULL;
	o->nrm_cnt = NULL;
	o->nrm_digits = o->nrm_short = o->nrm_dict = 0;
	o->nrm_classes = o->nrm_listed = o->nrm_is_exact = 0;
	o->nrm_checked = o->nrm_mismatched = 0;
	llr_buf_clear(&o->nrm_first);
	if (o->m->lex->sig->exact)
		return exact_norm(o, K, &rng, err);
	/* the digit strings outside V' (when their rows allow it) and the
	 * short strings exactly, the rest of q by K draws: each of weight
	 * lambda (1 - their q) */
	llr_stratum d = {0}, sh = {0}, dc = {0};
	const char *why;
	llr_ll_classes kd = {0}, k = {0};
	llr_csr *rows = NULL, *xrows = NULL;
	float *w = NULL;
	int64_t *cnt = NULL;
	double ll = log(llr_openbg_lambda(o->g));
	llr_csr_builder *xb = NULL;
	llr_csr_builder *b = llr_csr_builder_new((int32_t)llr_strmap_size(o->m->lex->features));
	int rc = b ? llr_digit_stratum_make(o->m->lex, o->g, NULL, &d, &why, err) : llr_err_set(err, LLR_ENOMEM, "out of memory");
	if (rc < 0 || (rc = llr_short_stratum_make(o->m->lex, o->g, NULL, d.phi != NULL, &sh, err)) < 0 ||
	    (rc = llr_dict_stratum_make(o->m->lex, o->g, NULL, d.phi != NULL, &dc, NULL, 0, err)) < 0 ||
	    (rc = llr_sig_draw_rows(o->m->lex, o->g, NULL, d.phi != NULL, &dc, K, &rng, b, &drawn, err)) < 0)
		goto out;
	rows = llr_csr_builder_finish(b, err);
	b = NULL;
	if (!rows) {
		rc = llr_err_code(err, LLR_ENOMEM);
		goto out;
	}
	/* the draws grouped by distinct row (the classes' log background is
	 * unused), counted; the strata's rows by distinct row, their weights
	 * lambda q summed */
	if (!(w = llr_calloc((size_t)K + (size_t)d.n + (size_t)sh.n + (size_t)dc.n + 1, sizeof *w)) ||
	    !(cnt = llr_calloc((size_t)K, sizeof *cnt)) ||
	    !(xb = llr_csr_builder_new((int32_t)llr_strmap_size(o->m->lex->features)))) {
		rc = llr_err_set(err, LLR_ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = llr_ll_classes_build(&k, rows, w, err)) < 0)
		goto out;
	for (int64_t i = 0; i < K; i++)
		cnt[k.of[i]]++;
	if ((rc = llr_stratum_rows(&d, xb, w, ll, err)) < 0 || (rc = llr_stratum_rows(&sh, xb, w + d.n, ll, err)) < 0 ||
	    (rc = llr_stratum_rows(&dc, xb, w + d.n + sh.n, ll, err)) < 0)
		goto out;
	xrows = llr_csr_builder_finish(xb, err);
	xb = NULL;
	if (!xrows) {
		rc = llr_err_code(err, LLR_ENOMEM);
		goto out;
	}
	if (xrows->rows && (rc = llr_ll_classes_build(&kd, xrows, w, err)) < 0)
		goto out;
	if ((rc = join_norm_rows(o, &kd, kd.logB, &k, (float)(ll + log1p(-(d.Q + sh.Q + dc.Q))), cnt, err)) < 0)
		goto out;
	o->nrm_digits = d.n;
	o->nrm_short = sh.n;
	o->nrm_dict = dc.n;
	rc = llr_net_set_norm_rows(o->m->net, o->nrm, o->nrm_logw, o->nrm_cnt, K, err);
out:
	llr_csr_builder_free(b);
	llr_csr_free(rows);
	llr_ll_classes_free(&k);
	llr_ll_classes_free(&kd);
	llr_stratum_free(&d);
	llr_stratum_free(&sh);
	llr_stratum_free(&dc);
	llr_csr_builder_free(xb);
	llr_csr_free(xrows);
	free(w);
	free(cnt);
	return rc;
}

int32_t llr_open_norm_digits(const llr_open *o, int32_t *shorts)
{
	*shorts = o->nrm_short;
	return o->nrm_digits;
}

int32_t llr_open_norm_dict(const llr_open *o)
{
	return o->nrm_dict;
}

/* ------------------------------------------------------------ drawing */

int32_t llr_open_sigs(const llr_open *o)
{
	return o->m->lex->sig->phi->rows;
}

int llr_open_draw(llr_open *o, int32_t s, llr_rng *rng, int64_t tries, llr_buf *out, double *logp, int64_t *draws,
                  llr_err *err)
{
	const llr_lexicon *x = o->m->lex;
	const llr_csr *sp = x->sig->phi;
	*draws = 0;
	if (s < 0 || s >= sp->rows)
		return llr_err_set(err, LLR_EINVAL, "signature %d out of range [0, %d)", s, sp->rows);
	int32_t a = sp->indptr[s];
	size_t n = (size_t)(sp->indptr[s + 1] - a);
	while (*draws < tries) {
		double lps;
		int rc = llr_spelling_sample(x->spell, rng, out, &lps, err);
		if (rc < 0)
			return rc;
		++*draws;
		const char *w = out->data ? out->data : "";
		if (!llr_open_is_token(w, out->len) || llr_openbg_word(o->g, w, out->len) >= 0)
			continue; /* not a token, or in V' */
		size_t m;
		if ((rc = llr_any_row_buf(x, w, out->len, &o->r, &m, err)) < 0)
			return rc;
		if (m != n || (n && (memcmp(o->r.c, sp->indices + a, n * sizeof *o->r.c) ||
		                     memcmp(o->r.v, sp->data + a, n * sizeof *o->r.v))))
			continue;
		if (logp)
			*logp = lps - llr_openbg_log_outside(o->g) - (double)x->sig->logm[s];
		return 1;
	}
	return 0;
}
