/*
 * score_lm.c - model loading and word mapping shared by score and gen
 * (see score_lm.h).  CLI-only: it exits through cli_die on errors.
 */
#include "score_lm.h"

#include <stdlib.h>
#include <string.h>

#include "cli.h"

void slm_load(slm *m, const char *path, int verbose)
{
	llr_err err = {0};
	memset(m, 0, sizeof *m);
	if (llr_rnnlm_load(path, &m->model, &err) != LLR_OK)
		cli_die_err(&err);
	if (verbose)
		cli_note_checksums(path, m->model->meta);
	m->lex = m->model->lex;
	m->net = m->model->net;
	const llr_net_config *c = llr_net_cfg(m->net);
	m->V = (int32_t)llr_strmap_size(m->lex->vocab);
	m->unk_id = m->lex->unk_id;
	m->eos_id = m->lex->eos_id;
	m->loglinear = c->output == LLR_OUT_LOGLINEAR;
	m->words = m->model->words;
	if (m->eos_id < 0 || m->eos_id >= m->V)
		cli_die("%s: model has no </s> in its vocabulary", path);
	if (m->unk_id >= m->V)
		cli_die("%s: model's <unk> id %d is out of range", path, (int)m->unk_id);

	const llr_csr *base = m->lex->psi ? m->lex->psi : m->lex->phi;
	if (!m->loglinear)
		base = c->input == LLR_IN_CONCAT || c->input == LLR_IN_SUM ? (m->eye = llr_csr_identity(m->V, NULL)) : NULL;
	if (!base)
		return;
	if (base->cols != c->feat_in || base->rows != m->V)
		cli_die("%s: input features are %dx%d, the network expects %dx%d", path, (int)base->rows, (int)base->cols, (int)m->V, (int)c->feat_in);
	m->base_rows = base->rows;
	m->base_nnz = base->nnz;
	m->rows_cap = base->rows + 64;
	m->nnz_cap = (size_t)base->nnz + 4096;
	m->psi.rows = base->rows;
	m->psi.cols = base->cols;
	m->psi.nnz = base->nnz;
	m->psi.indptr = ereallocarray(NULL, (size_t)m->rows_cap + 1, sizeof(int32_t));
	m->psi.indices = ereallocarray(NULL, m->nnz_cap, sizeof(int32_t));
	m->psi.data = ereallocarray(NULL, m->nnz_cap, sizeof(float));
	m->row_cap = 256;
	m->row_cols = ereallocarray(NULL, m->row_cap, sizeof *m->row_cols);
	m->row_vals = ereallocarray(NULL, m->row_cap, sizeof *m->row_vals);
	memcpy(m->psi.indptr, base->indptr, ((size_t)base->rows + 1) * sizeof(int32_t));
	memcpy(m->psi.indices, base->indices, (size_t)base->nnz * sizeof(int32_t));
	memcpy(m->psi.data, base->data, (size_t)base->nnz * sizeof(float));
}

void slm_free(slm *m)
{
	llr_rnnlm_free(m->model);
	free(m->psi.indptr);
	free(m->psi.indices);
	free(m->psi.data);
	free(m->row_cols);
	free(m->row_vals);
	llr_csr_free(m->eye);
	memset(m, 0, sizeof *m);
}

int32_t slm_word(const slm *m, const char *w, size_t len)
{
	return llr_strmap_get(m->lex->vocab, w, len);
}

int32_t slm_target(const slm *m, const char *w, size_t len, int *oov)
{
	int32_t id = slm_word(m, w, len);
	*oov = id < 0 || id == m->unk_id;
	if (id >= 0)
		return id;
	if (m->unk_id < 0)
		cli_die("%.*s: word not in the model's vocabulary, and the model has no <unk>", (int)len, w);
	return m->unk_id;
}

static int32_t psi_append(slm *m, size_t n);

/* The feature row of word w (side 0 output, 1 input) into the scratch
 * arrays, growing them as needed; returns the entry count. */
static size_t word_row(slm *m, const char *w, size_t len, int input_side)
{
	for (;;) {
		llr_err err = {0};
		size_t n = 0;
		int rc = llr_lexicon_word_row(m->lex, w, len, input_side, m->row_cols, m->row_vals, m->row_cap, &n, &err);
		if (rc == LLR_OK)
			return n;
		if (rc != LLR_ERANGE)
			cli_die_err(&err);
		size_t cap = m->row_cap * 2;
		m->row_cols = ereallocarray(m->row_cols, cap, sizeof *m->row_cols);
		m->row_vals = ereallocarray(m->row_vals, cap, sizeof *m->row_vals);
		m->row_cap = cap;
	}
}

/* <unk>'s input row into the scratch arrays (an unseen word without
 * features of its own, in a net that reads both psi and spellings). */
static size_t unk_row(slm *m)
{
	const llr_csr *p = &m->psi;
	int32_t u = m->unk_id;
	size_t n = u < 0 ? 0 : (size_t)(p->indptr[u + 1] - p->indptr[u]);
	while (n > m->row_cap) {
		size_t cap = m->row_cap * 2;
		int32_t *c = llr_reallocarray(m->row_cols, cap, sizeof *c);
		float *v = c ? llr_reallocarray(m->row_vals, cap, sizeof *v) : NULL;
		if (c)
			m->row_cols = c;
		if (!v)
			cli_oom();
		m->row_vals = v;
		m->row_cap = cap;
	}
	if (n) {
		memcpy(m->row_cols, p->indices + p->indptr[u], n * sizeof(int32_t));
		memcpy(m->row_vals, p->data + p->indptr[u], n * sizeof(float));
	}
	return n;
}

int32_t slm_input(slm *m, const char *w, size_t len, int32_t vid)
{
	if (vid >= 0)
		return vid;
	if (m->words) {
		llr_err err = {0};
		int32_t id = llr_words_add(m->words, w, len, &err);
		if (id < 0)
			cli_die_err(&err);
		if (!m->psi.indptr)
			return id;
		size_t n = m->loglinear ? word_row(m, w, len, 1) : 0;
		if (n == 0)
			n = unk_row(m);
		return psi_append(m, n);
	}
	if (!m->loglinear || !m->psi.indptr)
		return m->unk_id;
	size_t n = word_row(m, w, len, 1);
	if (n == 0)
		return m->unk_id;
	return psi_append(m, n);
}

/* Append the scratch row of n entries to psi; its row index. */
static int32_t psi_append(slm *m, size_t n)
{
	if (m->psi.rows >= m->rows_cap) {
		int32_t cap = m->rows_cap * 2;
		m->psi.indptr = ereallocarray(m->psi.indptr, (size_t)cap + 1, sizeof *m->psi.indptr);
		m->rows_cap = cap;
	}
	if ((size_t)m->psi.nnz + n > m->nnz_cap) {
		size_t cap = (m->nnz_cap + n) * 2;
		m->psi.indices = ereallocarray(m->psi.indices, cap, sizeof *m->psi.indices);
		m->psi.data = ereallocarray(m->psi.data, cap, sizeof *m->psi.data);
		m->nnz_cap = cap;
	}
	memcpy(m->psi.indices + m->psi.nnz, m->row_cols, n * sizeof(int32_t));
	memcpy(m->psi.data + m->psi.nnz, m->row_vals, n * sizeof(float));
	m->psi.nnz += (int32_t)n;
	m->psi.rows++;
	m->psi.indptr[m->psi.rows] = m->psi.nnz;
	return m->psi.rows - 1;
}

void slm_input_reset(slm *m)
{
	if (m->words)
		llr_words_reset(m->words);
	m->psi.rows = m->base_rows;
	m->psi.nnz = m->base_nnz;
}

const llr_csr *slm_psi(const slm *m)
{
	return m->psi.indptr && m->psi.rows > m->base_rows ? &m->psi : NULL;
}

static void put_feature(slm *m, llr_buf *out, int32_t col, float val)
{
	if (out->len && out->data[out->len - 1] != '\t' && llr_buf_putc(out, ' '))
		cli_oom();
	const llr_strmap *names = m->lex->features;
	if (llr_buf_append(out, llr_strmap_str(names, col), llr_strmap_len(names, col)))
		cli_oom();
	if (val != 1.0f && llr_buf_printf(out, "=%g", (double)val))
		cli_oom();
}

void slm_row_features(slm *m, const int32_t *cols, const float *vals, size_t n, llr_buf *out)
{
	for (size_t k = 0; k < n; k++)
		if (vals[k] != 0)
			put_feature(m, out, cols[k], vals[k]);
}

void slm_features(slm *m, const char *w, size_t len, int32_t vid, llr_buf *out)
{
	const llr_csr *phi = m->lex->phi;
	if (vid >= 0 && phi && vid < phi->rows) {
		for (int32_t k = phi->indptr[vid]; k < phi->indptr[vid + 1]; k++)
			if (phi->data[k] != 0)
				put_feature(m, out, phi->indices[k], phi->data[k]);
		return;
	}
	if (!m->row_cols) {
		m->row_cap = 256;
		m->row_cols = ereallocarray(NULL, m->row_cap, sizeof *m->row_cols);
		m->row_vals = ereallocarray(NULL, m->row_cap, sizeof *m->row_vals);
	}
	size_t n = word_row(m, w, len, 0);
	for (size_t k = 0; k < n; k++)
		if (m->row_vals[k] != 0)
			put_feature(m, out, m->row_cols[k], m->row_vals[k]);
}
