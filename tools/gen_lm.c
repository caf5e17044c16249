/*
 * gen_lm.c - gen's LSTM language model (see gen_lm.h).  CLI-only: it
 * exits through cli_die on errors.
 */
#include "gen_lm.h"

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
	if (!(m->in = llr_rnnlm_inputs_new(m->model, path, &err)))
		cli_die_err(&err);
	m->lex = m->model->lex;
	m->net = m->model->net;
	m->V = (int32_t)llr_strmap_size(m->lex->vocab);
	m->unk_id = m->lex->unk_id;
	m->eos_id = m->lex->eos_id;
}

void slm_free(slm *m)
{
	llr_rnnlm_inputs_free(m->in);
	llr_rnnlm_free(m->model);
	llr_row_free(&m->row);
	memset(m, 0, sizeof *m);
}

int32_t slm_word(const slm *m, const char *w, size_t len)
{
	return llr_strmap_get(m->lex->vocab, w, len);
}

int32_t slm_target(const slm *m, const char *w, size_t len, int *oov)
{
	llr_err err = {0};
	int32_t id = llr_rnnlm_target(m->model, w, len, oov, &err);
	if (id < 0)
		cli_die_err(&err);
	return id;
}

int32_t slm_input(slm *m, const char *w, size_t len, int32_t vid)
{
	llr_err err = {0};
	int32_t id = llr_rnnlm_inputs_add(m->in, w, len, vid, &err);
	if (id < 0)
		cli_die_err(&err);
	return id;
}

void slm_input_reset(slm *m)
{
	llr_rnnlm_inputs_reset(m->in);
}

const llr_csr *slm_psi(const slm *m)
{
	return llr_rnnlm_inputs_psi(m->in);
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
		int32_t a = phi->indptr[vid];
		slm_row_features(m, phi->indices + a, phi->data + a, (size_t)(phi->indptr[vid + 1] - a), out);
		return;
	}
	llr_err err = {0};
	size_t n;
	if (llr_row_fill(&m->row, m->lex, w, len, 0, 0, &n, &err) < 0)
		cli_die_err(&err);
	slm_row_features(m, m->row.cols, m->row.vals, n, out);
}
