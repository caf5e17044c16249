/*
 * features.c - the features of a word as an LSTM language model's output
 * sees it (llr_model_word_features, lib/llrnn.h; gen(1) --show-features
 * through gen.c): a vocabulary word's row of phi, a drawn signature's
 * row, or the features the lexicon's extractors give any other string.
 * Not the input side (psi), and no scoring.
 */
#include "family/rnnlm/rnnlm.h"

/* The nonzero entries of row r of p (columns of phi, named by
 * lex->features), in the row's order. */
int rnnlm_csr_features(const llr_lexicon *lex, const llr_csr *p, int32_t r, llr_feature_fn emit, void *ctx)
{
	const llr_strmap *names = lex->features;
	for (int32_t k = p->indptr[r]; k < p->indptr[r + 1]; k++) {
		int32_t c = p->indices[k];
		int rc;
		if (p->data[k] != 0 &&
		    (rc = emit(llr_strmap_str(names, c), llr_strmap_len(names, c), p->data[k], ctx)) < 0)
			return rc;
	}
	return LLR_OK;
}

static int emit_failed(llr_err *err, int rc)
{
	return rc == LLR_ENOMEM ? llr_err_set(err, rc, "out of memory")
	                        : llr_err_set(err, rc, "word features: %s", llr_strerror(rc));
}

int rnnlm_word_features(const llr_lexicon *lex, llr_row *row, const char *w, int32_t vid, llr_feature_fn emit,
                        void *ctx, llr_err *err)
{
	const llr_csr *phi = lex->phi;
	int rc;
	if (vid >= 0 && phi && vid < phi->rows)
		return (rc = rnnlm_csr_features(lex, phi, vid, emit, ctx)) < 0 ? emit_failed(err, rc) : LLR_OK;
	size_t n;
	if ((rc = llr_row_fill(row, lex, w, strlen(w), 0, 0, &n, err)) < 0)
		return rc;
	const llr_strmap *names = lex->features;
	for (size_t k = 0; k < n; k++) {
		int32_t c = row->cols[k];
		if (row->vals[k] != 0 && (rc = emit(llr_strmap_str(names, c), llr_strmap_len(names, c), row->vals[k], ctx)) < 0)
			return emit_failed(err, rc);
	}
	return LLR_OK;
}

int rnnlm_put_feature(const char *name, size_t len, float value, void *ctx)
{
	llr_buf *out = ctx;
	if (out->len && out->data[out->len - 1] != '\t' && llr_buf_putc(out, ' '))
		return LLR_ENOMEM;
	if (llr_buf_append(out, name, len))
		return LLR_ENOMEM;
	if (value != 1.0f && llr_buf_printf(out, "=%g", (double)value) < 0)
		return LLR_ENOMEM;
	return LLR_OK;
}

int rnnlm_lex_word_features(const llr_lexicon *lex, const char *word, llr_feature_fn emit, void *ctx, llr_err *err)
{
	llr_row row = {0};
	int rc = rnnlm_word_features(lex, &row, word, llr_strmap_get(lex->vocab, word, strlen(word)), emit, ctx, err);
	llr_row_free(&row);
	return rc;
}

int rnnlm_model_word_features(llr_model *m, const char *word, llr_feature_fn emit, void *ctx, llr_err *err)
{
	const rnnlm *r = m->state;
	return rnnlm_lex_word_features(r->model->lex, word, emit, ctx, err);
}

int rnnlm_closed_features(const llr_gen *g, const llr_lexicon *x, llr_row *row, const llr_gen_hyp *h, size_t k, llr_buf *out,
                          llr_err *err)
{
	const char *w = k < g->pre.n ? llr_gen_pword(g, k) : llr_strmap_str(x->vocab, h->ids[k - g->pre.n]);
	return rnnlm_word_features(x, row, w, llr_strmap_get(x->vocab, w, strlen(w)), rnnlm_put_feature, out, err);
}
