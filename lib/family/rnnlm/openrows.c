/*
 * openrows.c - the targets outside V' (the vocabulary less <unk>) of a
 * batch scored open by an LL-RNN (llr_open_batch): each such string
 * becomes a row of its own, llr_lexicon_any_row's, with the open
 * background's ln b(w), for llr_batch's xphi and xlogb; the net scores
 * them against Z(K) with the signature masses (llr_open_new).
 */
#include "internal.h"

#include <stdlib.h>

struct llr_open_batch {
	const llr_open *op;
	const llr_lexicon *lex;
	int32_t V;
	llr_csr_builder *rows; /* this batch's targets outside V' */
	llr_csr *xphi;
	float *xlogb;
	size_t nx, xcap;
	llr_row r; /* scratch */
};

llr_open_batch *llr_open_batch_new(const llr_open *op, llr_err *err)
{
	llr_open_batch *s = llr_calloc(1, sizeof *s);
	if (!s) {
		llr_err_set(err, LLR_ENOMEM, "open vocabulary: out of memory");
		return NULL;
	}
	const llr_rnnlm *m = llr_open_model(op);
	s->op = op;
	s->lex = m->lex;
	s->V = (int32_t)llr_strmap_size(m->lex->vocab);
	return s;
}

void llr_open_batch_reset(llr_open_batch *s)
{
	llr_csr_builder_free(s->rows);
	llr_csr_free(s->xphi);
	s->rows = NULL;
	s->xphi = NULL;
	s->nx = 0;
}

int32_t llr_open_batch_target(llr_open_batch *s, const char *w, size_t len, int *oov, llr_err *err)
{
	int32_t id = llr_open_word(s->op, w, len);
	*oov = id < 0;
	if (id >= 0)
		return id;
	if (!s->rows && !(s->rows = llr_csr_builder_new((int32_t)llr_strmap_size(s->lex->features))))
		return llr_err_set(err, LLR_ENOMEM, "open vocabulary: out of memory");
	size_t n;
	int rc = llr_row_fill(&s->r, s->lex, w, len, 0, 1, &n, err);
	if (rc < 0 || (rc = llr_csr_builder_row(s->rows, s->r.cols, s->r.vals, n, err)) < 0)
		return rc;
	if (s->nx == s->xcap) {
		size_t cap = s->xcap ? 2 * s->xcap : 64;
		float *b = llr_reallocarray(s->xlogb, cap, sizeof *b);
		if (!b)
			return llr_err_set(err, LLR_ENOMEM, "open vocabulary: out of memory");
		s->xlogb = b;
		s->xcap = cap;
	}
	s->xlogb[s->nx] = (float)llr_open_logb(s->op, w, len);
	return s->V + (int32_t)s->nx++;
}

int llr_open_batch_finish(llr_open_batch *s, const llr_csr **xphi, const float **xlogb, llr_err *err)
{
	*xphi = NULL;
	*xlogb = NULL;
	if (!s->rows)
		return LLR_OK;
	s->xphi = llr_csr_builder_finish(s->rows, err);
	s->rows = NULL;
	if (!s->xphi)
		return llr_err_code(err, LLR_ENOMEM);
	*xphi = s->xphi;
	*xlogb = s->xlogb;
	return LLR_OK;
}

void llr_open_batch_free(llr_open_batch *s)
{
	if (!s)
		return;
	llr_open_batch_reset(s);
	free(s->xlogb);
	llr_row_free(&s->r);
	free(s);
}
