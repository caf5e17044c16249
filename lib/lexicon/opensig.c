/*
 * opensig.c - the signature masses of open-vocabulary scoring with the
 * LL-RNN (issue 14, item 4; llrnn(7), "Open vocabulary"), and their
 * lexicon members.
 *
 * The open background (openbg.c) gives a string w outside V' (the
 * vocabulary less <unk>) the mass lambda q(w), q(w) = p_spell(w) /
 * (1 - S_V) the spelling model renormalised to those strings.  The LL-RNN
 * gives it e^{a.phi(w)} on top, phi(w) its row of any string
 * (llr_lexicon_any_row), so
 *     Z(K) = sum_{v in V'} b(v) e^{a.phi(v)} + lambda sum_sig M(sig) e^{a.phi_sig}
 *     M(sig) = sum of q(w) over the strings w outside V' with phi(w) = sig
 *     p(w | K) = lambda q(w) e^{a.phi(w)} / Z(K)       for w outside V'.
 * M is estimated once (llr_lexicon_estimate_sigs), stratified: the known
 * strings K outside V' (the training text's types the vocabulary left
 * out) exactly, the rest by n strings drawn from q restricted to the
 * strings outside V' and K (draws from p_spell, those rejected), all
 * rows grouped by distinct value with the output layer's own grouping
 * (llclass.c): M(sig) = sum of q(k) over the k in K with row sig + (1 - Q)
 * m(sig), Q the sum of q over K, m(sig) the share of draws with row sig:
 * unbiased, standard error (1 - Q) sqrt(m (1 - m) / n).  The signatures
 * are lexicon members sig/phi (S x F) and sig/logm (ln M), meta
 * sig.count, sig.samples, sig.drawn, sig.known (when not 0), sig.seed.
 *
 * Not here: scoring with a model (open.c, which sets a model's network up
 * with these masses), the spelling model (spelling.c), lambda and b
 * (openbg.c), the rows (anyword.c), the output layer (loglinear.c).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "nn/nn.h"

void llr_opensig_free(llr_opensig *g)
{
	if (!g)
		return;
	llr_csr_free(g->phi);
	free(g->logm);
	free(g);
}

size_t llr_lexicon_sigs(const llr_lexicon *x)
{
	return x->sig ? (size_t)x->sig->phi->rows : 0;
}

const llr_csr *llr_lexicon_sig_phi(const llr_lexicon *x)
{
	return x->sig ? x->sig->phi : NULL;
}

const float *llr_lexicon_sig_logm(const llr_lexicon *x)
{
	return x->sig ? x->sig->logm : NULL;
}

int llr_any_row_buf(const llr_lexicon *x, const char *w, size_t len, llr_rowbuf *r, size_t *n, llr_err *err)
{
	for (;;) {
		int rc = llr_lexicon_any_row(x, w, len, 0, r->c, r->v, r->cap, n, err);
		if (rc != LLR_ERANGE)
			return rc;
		size_t cap = r->cap ? r->cap * 2 : 64;
		int32_t *c = llr_reallocarray(r->c, cap, sizeof *c);
		if (c)
			r->c = c;
		float *v = c ? llr_reallocarray(r->v, cap, sizeof *v) : NULL;
		if (!v)
			return llr_err_set(err, LLR_ENOMEM, "out of memory");
		r->v = v;
		r->cap = cap;
	}
}

/* n strings from q restricted to the strings outside known and the
 * strata summed exactly (the digit strings if digits, the short ones, the
 * dictionary's listed forms dict): p_spell's draws, those in V', known or
 * a stratum rejected; their rows into b, the draws it took into *drawn. */
int llr_sig_draw_rows(const llr_lexicon *x, const llr_openbg *g, const llr_strmap *known, int digits,
                      const llr_stratum *dict, int64_t n, llr_rng *rng, llr_csr_builder *b, int64_t *drawn, llr_err *err)
{
	llr_buf w = {0};
	llr_rowbuf r = {0};
	int rc = LLR_OK;
	*drawn = 0;
	for (int64_t k = 0; k < n && rc >= 0;) {
		if ((rc = llr_spelling_sample(x->spell, rng, &w, NULL, err)) < 0)
			break;
		if (++*drawn > 1000 * (n + 10)) {
			rc = llr_err_set(err, LLR_ERANGE, "the spelling model's strings are all in the vocabulary%s (%lld draws)",
			                 known ? " or known" : "", (long long)*drawn);
			break;
		}
		const char *s = w.data ? w.data : "";
		if (llr_openbg_word(g, s, w.len) >= 0 || (known && llr_strmap_get(known, s, w.len) >= 0) ||
		    (digits && llr_digit_string(s, w.len)) || llr_short_string(x->spell, s, w.len) ||
		    llr_dict_string(dict, s, w.len))
			continue; /* in V', known or a stratum summed exactly: not a draw from the rest of q */
		size_t m;
		if ((rc = llr_any_row_buf(x, s, w.len, &r, &m, err)) < 0 || (rc = llr_csr_builder_row(b, r.c, r.v, m, err)) < 0)
			break;
		k++;
	}
	llr_buf_free(&w);
	free(r.c);
	free(r.v);
	return rc;
}

/* The known strings outside V': their rows into b, ln q(k) into lw[i],
 * the builder row of known string i into krow[i] (-1: in V'), their
 * total q into *Q. */
static int known_rows(const llr_lexicon *x, const llr_openbg *g, const llr_strmap *known, llr_csr_builder *b,
                      float *lw, int32_t *krow, int32_t *nrows, double *Q, llr_err *err)
{
	llr_rowbuf r = {0};
	int rc = LLR_OK;
	*Q = 0;
	*nrows = 0;
	for (int32_t i = 0; known && i < (int32_t)llr_strmap_size(known) && rc >= 0; i++) {
		const char *s = llr_strmap_str(known, i);
		size_t len = llr_strmap_len(known, i), m;
		krow[i] = -1;
		if (llr_openbg_word(g, s, len) >= 0)
			continue;
		double lq = llr_openbg_unseen_logp(g, s, len);
		if ((rc = llr_any_row_buf(x, s, len, &r, &m, err)) < 0 || (rc = llr_csr_builder_row(b, r.c, r.v, m, err)) < 0)
			break;
		lw[*nrows] = (float)lq;
		krow[i] = (*nrows)++;
		*Q += exp(lq);
	}
	free(r.c);
	free(r.v);
	return rc;
}

/* The rows of d into b, each row's ln weight (ln lambda0 + logq) into lw. */
int llr_stratum_rows(const llr_stratum *d, llr_csr_builder *b, float *lw, double lambda0, llr_err *err)
{
	const llr_csr *p = d->phi;
	for (int32_t i = 0; i < d->n; i++) {
		int32_t a = p->indptr[i];
		int rc = llr_csr_builder_row(b, p->indices + a, p->data + a, (size_t)(p->indptr[i + 1] - a), err);
		if (rc < 0)
			return rc;
		lw[i] = (float)(lambda0 + (double)d->logq[i]);
	}
	return LLR_OK;
}

/* The rows (each ln q in lw) grouped by distinct row into sg's
 * signatures, each known string's signature into known_sig (krow[i] its
 * row, -1: in V'). */
static int sigs_from_rows(llr_opensig *sg, const llr_csr *rows, const float *lw, const int32_t *krow, size_t nk,
                          int32_t *known_sig, llr_err *err)
{
	llr_ll_classes k = {0};
	int rc = llr_ll_classes_build(&k, rows, lw, err);
	if (rc < 0)
		return rc;
	for (int c = 0; c < k.C; c++) /* a class of all the mass: ln 1, not float rounding's 3e-7 */
		if (k.logB[c] > 0)
			k.logB[c] = 0;
	for (size_t i = 0; known_sig && i < nk; i++)
		known_sig[i] = krow[i] < 0 ? -1 : k.of[krow[i]];
	sg->phi = k.phi;
	sg->logm = k.logB;
	k.phi = NULL;
	k.logB = NULL;
	llr_ll_classes_free(&k);
	return LLR_OK;
}

/* Every string outside V' exactly (openexact.c), the hunspell
 * dictionary (if any) put in listed mode first: into *out, or *out NULL
 * and why says why not. */
static int exact_sigs(llr_lexicon *x, const llr_openbg *g, const llr_strmap *known, int32_t *known_sig,
                      llr_opensig **out, char *why, size_t why_cap, llr_err *err)
{
	*out = NULL;
	int was_listed = llr_lexicon_hunspell_listed(x);
	if (llr_lexicon_any_hunspell(x) && x->extract.ngram_max <= 0 && !was_listed) {
		llr_err e = {0};
		if (llr_lexicon_set_hunspell_listed(x, 1, &e) < 0) {
			if (e.code == LLR_ENOMEM)
				return llr_err_set(err, e.code, "%s", e.msg);
			snprintf(why, why_cap, "%s", e.msg);
			return LLR_OK;
		}
	}
	size_t nk = known ? llr_strmap_size(known) : 0;
	int32_t *krow = llr_malloc((nk + 1) * sizeof *krow);
	llr_exact_rows er = {0};
	llr_opensig *sg = calloc(1, sizeof *sg);
	int rc = krow && sg ? llr_exact_rows_make(x, g, known, krow, &er, why, why_cap, err)
	                    : llr_err_set(err, LLR_ENOMEM, "out of memory");
	if (rc < 0 || !er.phi) {
		llr_lexicon_set_hunspell_listed(x, was_listed, NULL); /* x as it was */
		goto out;
	}
	if ((rc = sigs_from_rows(sg, er.phi, er.logq, krow, nk, known_sig, err)) < 0)
		goto out;
	sg->known = er.known;
	sg->exact = er.classes;
	sg->listed = er.listed - er.known;
	sg->unassigned = er.unassigned;
	*out = sg;
	sg = NULL;
out:
	llr_exact_rows_free(&er);
	llr_opensig_free(sg);
	free(krow);
	return rc;
}

int llr_lexicon_exact_sigs(llr_lexicon *x, const llr_strmap *known, int32_t *known_sig, char *why, size_t why_cap,
                           llr_err *err)
{
	llr_openbg *g = llr_openbg_new(x, err);
	if (!g)
		return llr_err_code(err, LLR_EINVAL);
	llr_opensig *sg = NULL;
	int rc = exact_sigs(x, g, known, known_sig, &sg, why, why_cap, err);
	if (rc >= 0 && sg) {
		llr_opensig_free(x->sig);
		x->sig = sg;
	}
	llr_openbg_free(g);
	return rc;
}

int llr_lexicon_estimate_sigs(llr_lexicon *x, int64_t n, uint64_t seed, const llr_strmap *known, int32_t *known_sig,
                              llr_err *err)
{
	if (n < 1)
		return llr_err_set(err, LLR_EINVAL, "signature masses: %lld samples", (long long)n);
	llr_openbg *g = llr_openbg_new(x, err);
	if (!g)
		return llr_err_code(err, LLR_EINVAL);
	size_t nk = known ? llr_strmap_size(known) : 0;
	llr_rng rng;
	llr_rng_seed(&rng, seed);
	llr_csr_builder *b = llr_csr_builder_new((int32_t)llr_strmap_size(x->features));
	llr_csr *rows = NULL;
	int64_t drawn = 0;
	int32_t nrows = 0;
	double Q = 0;
	llr_stratum d = {0}, sh = {0}, dc = {0};
	const char *why = NULL;
	char dwhy[sizeof((llr_opensig *)0)->dict_why] = "";
	float *lw = NULL;
	int32_t *krow = llr_malloc((nk + 1) * sizeof *krow);
	llr_opensig *sg = calloc(1, sizeof *sg);
	int rc = b && krow && sg ? LLR_OK : llr_err_set(err, LLR_ENOMEM, "out of memory");
	if (rc < 0 || (rc = llr_digit_stratum_make(x, g, known, &d, &why, err)) < 0 ||
	    (rc = llr_short_stratum_make(x, g, known, d.phi != NULL, &sh, err)) < 0 ||
	    (rc = llr_dict_stratum_make(x, g, known, d.phi != NULL, &dc, dwhy, sizeof dwhy, err)) < 0)
		goto out;
	if (!(lw = llr_malloc(((size_t)n + nk + (size_t)d.n + (size_t)sh.n + (size_t)dc.n + 1) * sizeof *lw))) {
		rc = llr_err_set(err, LLR_ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = known_rows(x, g, known, b, lw, krow, &nrows, &Q, err)) < 0)
		goto out;
	/* the digit strings, the short ones and the dictionary's forms
	 * exactly, after the known ones */
	if ((rc = llr_stratum_rows(&d, b, lw + nrows, 0.0, err)) < 0 || (rc = llr_stratum_rows(&sh, b, lw + nrows + d.n, 0.0, err)) < 0 ||
	    (rc = llr_stratum_rows(&dc, b, lw + nrows + d.n + sh.n, 0.0, err)) < 0)
		goto out;
	double rest = 1 - Q - d.Q - sh.Q - dc.Q;
	if (!(rest > 0)) {
		rc = llr_err_set(err, LLR_ERANGE,
		                 "signature masses: the known strings and the strata summed exactly carry all the mass outside the vocabulary (%g)",
		                 Q + d.Q + sh.Q + dc.Q);
		goto out;
	}
	if ((rc = llr_sig_draw_rows(x, g, known, d.phi != NULL, &dc, n, &rng, b, &drawn, err)) < 0)
		goto out;
	/* a known string weighs q(k), a digit group or a short string its q,
	 * a draw rest / n: a class's summed weight is M(sig) */
	for (int64_t i = 0; i < n; i++)
		lw[nrows + d.n + sh.n + dc.n + i] = (float)(log(rest) - log((double)n));
	rows = llr_csr_builder_finish(b, err);
	b = NULL;
	if (!rows) {
		rc = llr_err_code(err, LLR_ENOMEM);
		goto out;
	}
	if ((rc = sigs_from_rows(sg, rows, lw, krow, nk, known_sig, err)) < 0)
		goto out;
	sg->samples = n;
	sg->drawn = drawn;
	sg->known = nrows;
	sg->seed = seed;
	sg->digits = d.n;
	sg->digits_q = d.Q;
	sg->drawn_why = why;
	sg->shorts = sh.n;
	sg->shorts_q = sh.Q;
	sg->dict = dc.n;
	sg->dict_q = dc.Q;
	memcpy(sg->dict_why, dwhy, sizeof dwhy);
	llr_opensig_free(x->sig);
	x->sig = sg;
	sg = NULL;
out:
	llr_opensig_free(sg);
	llr_csr_builder_free(b);
	llr_stratum_free(&d);
	llr_stratum_free(&sh);
	llr_stratum_free(&dc);
	free(lw);
	free(krow);
	llr_csr_free(rows);
	llr_openbg_free(g);
	return rc;
}

int64_t llr_lexicon_sig_exact(const llr_lexicon *x, int64_t *listed, double *unassigned)
{
	*listed = x->sig ? x->sig->listed : 0;
	*unassigned = x->sig ? x->sig->unassigned : 0;
	return x->sig ? x->sig->exact : 0;
}

int64_t llr_lexicon_sig_dict(const llr_lexicon *x, double *q, const char **why)
{
	*q = x->sig ? x->sig->dict_q : 0;
	*why = x->sig && x->sig->dict_why[0] ? x->sig->dict_why : NULL;
	return x->sig ? x->sig->dict : 0;
}

int64_t llr_lexicon_sig_shorts(const llr_lexicon *x, double *q)
{
	*q = x->sig ? x->sig->shorts_q : 0;
	return x->sig ? x->sig->shorts : 0;
}

int64_t llr_lexicon_sig_digits(const llr_lexicon *x, double *q, const char **why)
{
	*q = x->sig ? x->sig->digits_q : 0;
	*why = x->sig && !x->sig->digits ? x->sig->drawn_why : NULL;
	return x->sig ? x->sig->digits : 0;
}

/* ------------------------------------------------------------ members */

int llr_opensig_meta(const llr_opensig *g, llr_meta *m)
{
	int rc;
	if ((rc = llr_meta_setf(m, "sig.count", "%d", g->phi->rows)) < 0 ||
	    (rc = llr_meta_setf(m, "sig.samples", "%lld", (long long)g->samples)) < 0 ||
	    (rc = llr_meta_setf(m, "sig.drawn", "%lld", (long long)g->drawn)) < 0 ||
	    (g->known && (rc = llr_meta_setf(m, "sig.known", "%lld", (long long)g->known)) < 0) ||
	    (g->digits && ((rc = llr_meta_setf(m, "sig.digits", "%lld", (long long)g->digits)) < 0 ||
	                   (rc = llr_meta_setf(m, "sig.digits_q", "%.17g", g->digits_q)) < 0)) ||
	    (g->shorts && ((rc = llr_meta_setf(m, "sig.short", "%lld", (long long)g->shorts)) < 0 ||
	                   (rc = llr_meta_setf(m, "sig.short_q", "%.17g", g->shorts_q)) < 0)) ||
	    (g->dict && ((rc = llr_meta_setf(m, "sig.dict", "%lld", (long long)g->dict)) < 0 ||
	                 (rc = llr_meta_setf(m, "sig.dict_q", "%.17g", g->dict_q)) < 0)) ||
	    (g->exact && ((rc = llr_meta_setf(m, "sig.exact", "%lld", (long long)g->exact)) < 0 ||
	                  (rc = llr_meta_setf(m, "sig.listed", "%lld", (long long)g->listed)) < 0 ||
	                  (rc = llr_meta_setf(m, "sig.unassigned", "%.3g", g->unassigned)) < 0)))
		return rc;
	return llr_meta_setf(m, "sig.seed", "%llu", (unsigned long long)g->seed);
}

int llr_opensig_write(llr_tensor_writer *w, const llr_opensig *g, llr_err *err)
{
	int64_t S = g->phi->rows;
	int rc = llr_tw_put_csr(w, "sig/phi", g->phi, err);
	return rc < 0 ? rc : llr_tw_put_raw(w, "sig/logm", LLR_F32, 1, &S, g->logm, err);
}

int llr_opensig_read(llr_tensor_reader *r, const llr_meta *m, int32_t F, llr_opensig **out, llr_err *err)
{
	int64_t S, n, d, k = 0, dg = 0, sh = 0, dc = 0;
	double dq = 0, sq = 0, cq = 0;
	if (llr_meta_get(m, "sig.known") && (llr_meta_get_i64(m, "sig.known", &k, err) < 0 || k < 1))
		return llr_err_set(err, LLR_EFORMAT, "meta: sig.known: not a count of strings");
	if (llr_meta_get(m, "sig.digits") &&
	    (llr_meta_get_i64(m, "sig.digits", &dg, err) < 0 || dg < 1 || llr_meta_get_f64(m, "sig.digits_q", &dq, err) < 0 ||
	     !(dq > 0 && dq < 1)))
		return llr_err_set(err, LLR_EFORMAT, "meta: sig.digits, sig.digits_q: not a count of groups and a mass in (0, 1)");
	if (llr_meta_get(m, "sig.short") &&
	    (llr_meta_get_i64(m, "sig.short", &sh, err) < 0 || sh < 1 || llr_meta_get_f64(m, "sig.short_q", &sq, err) < 0 ||
	     !(sq > 0 && sq < 1)))
		return llr_err_set(err, LLR_EFORMAT, "meta: sig.short, sig.short_q: not a count of strings and a mass in (0, 1)");
	if (llr_meta_get(m, "sig.dict") &&
	    (llr_meta_get_i64(m, "sig.dict", &dc, err) < 0 || dc < 1 || llr_meta_get_f64(m, "sig.dict_q", &cq, err) < 0 ||
	     !(cq > 0 && cq < 1)))
		return llr_err_set(err, LLR_EFORMAT, "meta: sig.dict, sig.dict_q: not a count of strings and a mass in (0, 1)");
	int64_t ex = 0, ls = 0;
	double un = 0;
	if (llr_meta_get(m, "sig.exact") &&
	    (llr_meta_get_i64(m, "sig.exact", &ex, err) < 0 || ex < 1 || llr_meta_get_i64(m, "sig.listed", &ls, err) < 0 ||
	     ls < 0 || llr_meta_get_f64(m, "sig.unassigned", &un, err) < 0 || !(un >= 0 && un < 1)))
		return llr_err_set(err, LLR_EFORMAT,
		                   "meta: sig.exact, sig.listed, sig.unassigned: not counts of classes and strings and a mass in [0, 1)");
	if (llr_meta_get_i64(m, "sig.count", &S, err) < 0 || S < 1 || S > LLR_MAX_VOCAB ||
	    llr_meta_get_i64(m, "sig.samples", &n, err) < 0 || n < 0 || n + k + dg + sh + dc + ex + ls < S ||
	    llr_meta_get_i64(m, "sig.drawn", &d, err) < 0 || d < n)
		return llr_err_set(err, LLR_EFORMAT, "meta: sig.count, sig.samples, sig.drawn: missing or inconsistent");
	const char *sd = llr_meta_get(m, "sig.seed");
	llr_opensig *g = calloc(1, sizeof *g);
	if (!g)
		return llr_err_set(err, LLR_ENOMEM, "lexicon: out of memory");
	g->samples = n;
	g->drawn = d;
	g->known = k;
	g->digits = dg;
	g->digits_q = dq;
	g->shorts = sh;
	g->shorts_q = sq;
	g->dict = dc;
	g->dict_q = cq;
	g->exact = ex;
	g->listed = ls;
	g->unassigned = un;
	g->seed = sd ? strtoull(sd, NULL, 10) : 0;
	llr_tensor *t = NULL;
	int rc = llr_lex_read_csr(r, "sig/phi", S, F, &g->phi, err);
	if (rc >= 0 && (rc = llr_lex_next_member(r, "sig/logm", err)) >= 0 &&
	    (rc = llr_tr_tensor_expect(r, LLR_F32, 1, &S, &t, err)) < 0)
		llr_err_prefix(err, "member sig/logm");
	if (rc < 0)
		goto fail;
	g->logm = t->data;
	t->data = NULL;
	llr_tensor_free(t);
	double sum = 0;
	for (int64_t s = 0; s < S; s++) {
		if (!(g->logm[s] <= 0)) {
			rc = llr_err_set(err, LLR_EFORMAT, "member sig/logm: entry %lld is %g, not a log mass", (long long)s,
			                 (double)g->logm[s]);
			goto fail;
		}
		sum += exp((double)g->logm[s]);
	}
	if (fabs(sum - 1) > 1e-3) {
		rc = llr_err_set(err, LLR_EFORMAT, "member sig/logm: the masses sum to %.6g, not 1", sum);
		goto fail;
	}
	*out = g;
	return LLR_OK;
fail:
	llr_opensig_free(g);
	return rc;
}
