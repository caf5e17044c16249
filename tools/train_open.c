/*
 * train_open.c - train's open-vocabulary LL-RNN (see train_open.h).  The
 * loss of a word w outside V' is -ln(lambda M(s) e^{a.phi_s} / Z), s its
 * signature, the constant ln q(w) - ln M(s) aside (llr_net_set_open): the
 * score of w by score --open up to that constant.  Its input is the
 * signature's row when psi is phi (the word's own row, as score gives an
 * unseen input), else <unk>'s.
 */
#include "train_open.h"

#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Adam steps of the output bias fit (llr_open_fit_bias). */
#define TOPEN_FIT_ITERS 300

/* m's psi (phi when it has none of its own). */
static const llr_csr *base_psi(const llr_rnnlm *m)
{
	return m->lex->psi ? m->lex->psi : m->lex->phi;
}

static void put_row(llr_csr_builder *b, const llr_csr *m, int32_t r)
{
	llr_err e = {0};
	int32_t a = m->indptr[r];
	if (llr_csr_builder_row(b, m->indices + a, m->data + a, (size_t)(m->indptr[r + 1] - a), &e) < 0)
		cli_die_err(&e);
}

static llr_csr *finish(llr_csr_builder *b)
{
	llr_err e = {0};
	llr_csr *m = llr_csr_builder_finish(b, &e);
	if (!m)
		cli_die_err(&e);
	return m;
}

/* A builder holding m's V input rows. */
static llr_csr_builder *with_base(const llr_rnnlm *m)
{
	const llr_csr *p = base_psi(m);
	llr_csr_builder *b = llr_csr_builder_new(p->cols);
	if (!b)
		cli_oom();
	for (int32_t v = 0; v < p->rows; v++)
		put_row(b, p, v);
	return b;
}

int topen_init(train_open *t, llr_rnnlm *m)
{
	memset(t, 0, sizeof *t);
	const llr_lexicon *x = m->lex;
	const llr_net_config *cf = llr_net_cfg(m->net);
	if (cf->output != LLR_OUT_LOGLINEAR || cf->input != LLR_IN_WORD || !x->spell || !llr_lexicon_sigs(x))
		return 0;
	llr_err e = {0};
	if (!(t->op = llr_open_new(m, &e)))
		cli_die("open vocabulary: %s", e.msg);
	t->V = (int32_t)llr_strmap_size(x->vocab);
	t->S = (int32_t)llr_lexicon_sigs(x);
	llr_csr_builder *b = with_base(m);
	for (int32_t s = 0; s < t->S; s++)
		put_row(b, x->psi ? x->psi : llr_lexicon_sig_phi(x), x->psi ? x->unk_id : s);
	t->psi = finish(b);
	return 1;
}

void topen_fit_bias(train_open *t, llr_rnnlm *m, const train_dist *d, const int32_t *ids, size_t n, int quiet)
{
	size_t R = (size_t)t->V + (size_t)t->S;
	int64_t *count = ecalloc(R, sizeof *count);
	for (size_t i = 0; i < n; i++)
		if (ids[i] >= 0 && (size_t)ids[i] < R)
			count[ids[i]]++;
	dist_sum_i64(d, count, R);
	llr_fit_opts fo = {.iters = TOPEN_FIT_ITERS, .rate = 0.05, .l2 = 1e-4};
	llr_fit_report rep;
	llr_err e = {0};
	if (llr_open_fit_bias(t->op, count, &fo, &rep, &e) < 0)
		cli_die("open vocabulary: %s", e.msg);
	free(count);
	if (llr_meta_setf(m->meta, "open_bias_init", "fit: %d Adam steps, mean log-likelihood %.6f -> %.6f over %.0f targets",
	                  fo.iters, rep.before, rep.after, rep.targets) < 0)
		cli_oom();
	if (!quiet)
		cli_warn("open vocabulary: output bias fitted context-free (%d Adam steps): mean log-likelihood %.4f -> %.4f, gradient norm %.2g",
		         fo.iters, rep.before, rep.after, rep.grad_norm);
	/* the fitted weights of the features that set the strings outside the
	 * vocabulary apart, those the model has */
	static const char *const named[] = {LLR_FEAT_HS_KNOWN, LLR_FEAT_OOV, LLR_FEAT_OOV_HS_KNOWN};
	const llr_strmap *names = m->lex->features;
	const float *b = llr_net_tensor(m->net, "out/b", NULL);
	llr_buf line = {0};
	for (size_t k = 0; b && k < sizeof named / sizeof *named; k++) {
		int32_t f = llr_strmap_get(names, named[k], strlen(named[k]));
		if (f >= 0 && llr_buf_printf(&line, "%s%s=%.4f", line.len ? " " : "", named[k], (double)b[f]) < 0)
			cli_oom();
	}
	if (line.len) {
		if (llr_meta_set(m->meta, "open_bias_fit", line.data) < 0)
			cli_oom();
		if (!quiet)
			cli_warn("open vocabulary: fitted bias %s", line.data);
	}
	llr_buf_free(&line);
}

int32_t topen_valid_target(train_open *t, const llr_rnnlm *m, const char *w, size_t len)
{
	int32_t id = llr_open_word(t->op, w, len);
	if (id >= 0)
		return id;
	const llr_lexicon *x = m->lex;
	llr_err e = {0};
	if (!t->vin) {
		t->vin = with_base(m);
		if (!(t->vout = llr_csr_builder_new((int32_t)llr_strmap_size(x->features))))
			cli_oom();
	}
	size_t n;
	if (llr_row_fill(&t->r, x, w, len, 0, 1, &n, &e) < 0 || llr_csr_builder_row(t->vout, t->r.cols, t->r.vals, n, &e) < 0 ||
	    llr_row_fill(&t->r, x, w, len, 1, 1, &n, &e) < 0 || llr_csr_builder_row(t->vin, t->r.cols, t->r.vals, n, &e) < 0)
		cli_die_err(&e);
	if (t->nx == t->xcap) {
		t->xcap = t->xcap ? 2 * t->xcap : 64;
		t->vxlogb = ereallocarray(t->vxlogb, t->xcap, sizeof *t->vxlogb);
	}
	t->vxlogb[t->nx] = (float)llr_open_logb(t->op, w, len);
	return t->V + (int32_t)t->nx++;
}

void topen_valid_finish(train_open *t)
{
	if (!t->vin)
		return;
	t->vpsi = finish(t->vin);
	t->vxphi = finish(t->vout);
	t->vin = t->vout = NULL;
}

void topen_free(train_open *t)
{
	llr_csr_builder_free(t->vin);
	llr_csr_builder_free(t->vout);
	llr_csr_free(t->psi);
	llr_csr_free(t->vpsi);
	llr_csr_free(t->vxphi);
	free(t->vxlogb);
	llr_row_free(&t->r);
	llr_open_free(t->op);
	memset(t, 0, sizeof *t);
}
