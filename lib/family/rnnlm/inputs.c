/*
 * inputs.c - the input ids of words for an LSTM LM's forward pass
 * (llr_rnnlm_inputs; score's and gen's): a word of the vocabulary is its
 * id; a word outside it gets, in a log-linear model, a new row of psi
 * holding the input features extracted from the string (the <unk> row
 * if it has none), and with a character-aware input a new id whose
 * spelling the net reads (and a psi row too when the net also reads
 * psi).  The rows live in a copy of the model's psi that grows until
 * llr_rnnlm_inputs_reset.  It does not score: the net does.
 */
#include "internal.h"

#include <stdlib.h>

struct llr_rnnlm_inputs {
	const llr_lexicon *lex;
	llr_words *words; /* character-aware input: unseen words are spelled out */
	int loglinear;    /* LLR_OUT_LOGLINEAR: unseen words get extracted features */
	int32_t V, unk_id;

	/* Input features: base_rows rows of the model's psi (or phi), then
	 * rows appended since the last reset. */
	llr_csr psi;
	int32_t base_rows, rows_cap;
	int32_t base_nnz;
	size_t nnz_cap;

	llr_csr *eye; /* the identity psi of a softmax-type net that reads psi and spellings */
	llr_row row;  /* scratch */
};

static int oom(llr_err *err)
{
	return llr_err_set(err, LLR_ENOMEM, "out of memory for the input features of unseen words");
}

/* A copy of base, room to grow. */
static int copy_base(llr_rnnlm_inputs *in, const llr_csr *base, llr_err *err)
{
	in->base_rows = base->rows;
	in->base_nnz = base->nnz;
	in->rows_cap = base->rows + 64;
	in->nnz_cap = (size_t)base->nnz + 4096;
	in->psi.rows = base->rows;
	in->psi.cols = base->cols;
	in->psi.nnz = base->nnz;
	in->psi.indptr = llr_reallocarray(NULL, (size_t)in->rows_cap + 1, sizeof(int32_t));
	in->psi.indices = llr_reallocarray(NULL, in->nnz_cap, sizeof(int32_t));
	in->psi.data = llr_reallocarray(NULL, in->nnz_cap, sizeof(float));
	if (!in->psi.indptr || !in->psi.indices || !in->psi.data)
		return oom(err);
	memcpy(in->psi.indptr, base->indptr, ((size_t)base->rows + 1) * sizeof(int32_t));
	memcpy(in->psi.indices, base->indices, (size_t)base->nnz * sizeof(int32_t));
	memcpy(in->psi.data, base->data, (size_t)base->nnz * sizeof(float));
	return LLR_OK;
}

llr_rnnlm_inputs *llr_rnnlm_inputs_new(llr_rnnlm *m, const char *path, llr_err *err)
{
	llr_rnnlm_inputs *in = llr_calloc(1, sizeof *in);
	if (!in) {
		oom(err);
		return NULL;
	}
	const llr_net_config *c = llr_net_cfg(m->net);
	in->lex = m->lex;
	in->V = (int32_t)llr_strmap_size(m->lex->vocab);
	in->unk_id = m->lex->unk_id;
	in->loglinear = c->output == LLR_OUT_LOGLINEAR;
	in->words = m->words;
	int rc = LLR_OK;
	if (m->lex->eos_id < 0 || m->lex->eos_id >= in->V)
		rc = llr_err_set(err, LLR_EFORMAT, "%s: model has no </s> in its vocabulary", path);
	else if (in->unk_id >= in->V)
		rc = llr_err_set(err, LLR_EFORMAT, "%s: model's <unk> id %d is out of range", path, (int)in->unk_id);
	const llr_csr *base = m->lex->psi ? m->lex->psi : m->lex->phi;
	if (rc == LLR_OK && !in->loglinear) {
		base = NULL;
		if ((c->input == LLR_IN_CONCAT || c->input == LLR_IN_SUM) && !(base = in->eye = llr_csr_identity(in->V, err)))
			rc = llr_err_code(err, LLR_ENOMEM);
	}
	if (rc == LLR_OK && base && (base->cols != c->feat_in || base->rows != in->V))
		rc = llr_err_set(err, LLR_EFORMAT, "%s: input features are %dx%d, the network expects %dx%d", path, (int)base->rows,
		                 (int)base->cols, (int)in->V, (int)c->feat_in);
	if (rc == LLR_OK && base)
		rc = copy_base(in, base, err);
	if (rc < 0) {
		llr_rnnlm_inputs_free(in);
		return NULL;
	}
	return in;
}

void llr_rnnlm_inputs_free(llr_rnnlm_inputs *in)
{
	if (!in)
		return;
	free(in->psi.indptr);
	free(in->psi.indices);
	free(in->psi.data);
	llr_row_free(&in->row);
	llr_csr_free(in->eye);
	free(in);
}

int32_t llr_rnnlm_target(const llr_rnnlm *m, const char *w, size_t len, int *oov, llr_err *err)
{
	int32_t id = llr_strmap_get(m->lex->vocab, w, len);
	*oov = id < 0 || id == m->lex->unk_id;
	if (id >= 0)
		return id;
	if (m->lex->unk_id < 0)
		return llr_err_set(err, LLR_EINVAL, "%.*s: word not in the model's vocabulary, and the model has no <unk>", (int)len, w);
	return m->lex->unk_id;
}

/* <unk>'s input row into the scratch row (an unseen word without
 * features of its own, in a net that reads both psi and spellings). */
static int unk_row(llr_rnnlm_inputs *in, size_t *n, llr_err *err)
{
	const llr_csr *p = &in->psi;
	int32_t u = in->unk_id;
	*n = u < 0 ? 0 : (size_t)(p->indptr[u + 1] - p->indptr[u]);
	int rc = llr_row_reserve(&in->row, *n, err);
	if (rc < 0)
		return rc;
	if (*n) {
		memcpy(in->row.cols, p->indices + p->indptr[u], *n * sizeof(int32_t));
		memcpy(in->row.vals, p->data + p->indptr[u], *n * sizeof(float));
	}
	return LLR_OK;
}

/* Append the scratch row of n entries to psi; its row index. */
static int32_t psi_append(llr_rnnlm_inputs *in, size_t n, llr_err *err)
{
	if (in->psi.rows >= in->rows_cap) {
		int32_t cap = in->rows_cap * 2;
		int32_t *p = llr_reallocarray(in->psi.indptr, (size_t)cap + 1, sizeof *p);
		if (!p)
			return oom(err);
		in->psi.indptr = p;
		in->rows_cap = cap;
	}
	if ((size_t)in->psi.nnz + n > in->nnz_cap) {
		size_t cap = (in->nnz_cap + n) * 2;
		int32_t *c = llr_reallocarray(in->psi.indices, cap, sizeof *c);
		if (c)
			in->psi.indices = c;
		float *v = c ? llr_reallocarray(in->psi.data, cap, sizeof *v) : NULL;
		if (!v)
			return oom(err);
		in->psi.data = v;
		in->nnz_cap = cap;
	}
	memcpy(in->psi.indices + in->psi.nnz, in->row.cols, n * sizeof(int32_t));
	memcpy(in->psi.data + in->psi.nnz, in->row.vals, n * sizeof(float));
	in->psi.nnz += (int32_t)n;
	in->psi.rows++;
	in->psi.indptr[in->psi.rows] = in->psi.nnz;
	return in->psi.rows - 1;
}

int32_t llr_rnnlm_inputs_add(llr_rnnlm_inputs *in, const char *w, size_t len, int32_t vid, llr_err *err)
{
	if (vid >= 0)
		return vid;
	size_t n = 0;
	int rc;
	if (in->words) {
		int32_t id = llr_words_add(in->words, w, len, err);
		if (id < 0 || !in->psi.indptr)
			return id;
		if (in->loglinear && (rc = llr_row_fill(&in->row, in->lex, w, len, 1, 0, &n, err)) < 0)
			return rc;
		if (n == 0 && (rc = unk_row(in, &n, err)) < 0)
			return rc;
		return psi_append(in, n, err);
	}
	if (!in->loglinear || !in->psi.indptr)
		return in->unk_id;
	if ((rc = llr_row_fill(&in->row, in->lex, w, len, 1, 0, &n, err)) < 0)
		return rc;
	if (n == 0)
		return in->unk_id;
	return psi_append(in, n, err);
}

void llr_rnnlm_inputs_reset(llr_rnnlm_inputs *in)
{
	if (in->words)
		llr_words_reset(in->words);
	in->psi.rows = in->base_rows;
	in->psi.nnz = in->base_nnz;
}

const llr_csr *llr_rnnlm_inputs_psi(const llr_rnnlm_inputs *in)
{
	return in->psi.indptr && in->psi.rows > in->base_rows ? &in->psi : NULL;
}
