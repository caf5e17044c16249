/*
 * columns.c - from featurize's rows (rows.c) to the lexicon's matrices
 * (lib/featurize/fz.h): which features to keep and their columns (by
 * source, then first seen), phi and with --input-features psi, the
 * coverage counts, and the any/ rows of the lexicon sources' words
 * (llr_lexicon_set_words) with the embedded hunspell dictionary.
 */
#include <stdlib.h>
#include <string.h>

#include "fz.h"

/* psi's columns (own_psi): the input sources' kept features, in phi's
 * order. */
static int fz_columns_in(llr_featurizer *R, llr_err *err)
{
	fz_state *z = &R->z;
	if (!(R->lex.features_in = llr_strmap_new()))
		return fz_nomem(err);
	for (int32_t f = 0; f < R->Fall; f++)
		R->col_in[f] = -1;
	int32_t *byc = calloc((size_t)R->F + 1, sizeof *byc);
	if (!byc)
		return fz_nomem(err);
	for (int32_t f = 0; f < R->Fall; f++)
		if (R->col[f] >= 0)
			byc[R->col[f]] = f;
	int rc = LLR_OK;
	for (int32_t k = 0; k < R->F; k++) {
		int32_t f = byc[k];
		if (!(R->o.in_mask & (1u << z->fsrc[f])))
			continue;
		R->col_in[f] = (int32_t)llr_strmap_size(R->lex.features_in);
		if (llr_strmap_add(R->lex.features_in, llr_strmap_str(z->names, f), llr_strmap_len(z->names, f)) < 0) {
			rc = fz_nomem(err);
			break;
		}
	}
	free(byc);
	return rc;
}

/* The source of feature f: extractor names say which extractor made
 * them. */
static int fz_feature_source(const fz_state *z, int32_t f)
{
	const char *nm = llr_strmap_str(z->names, f);
	int fs = z->fsrc[f];
	if (fs == LLR_FZ_ORTHO)
		fs = !strncmp(nm, "SUF:", 4) ? LLR_FZ_SUFFIX : !strncmp(nm, "CNG:", 4) ? LLR_FZ_NGRAMS
		                                                                       : LLR_FZ_ORTHO;
	return fs;
}

/* Which features to keep, their columns: by source, then first seen.
 * Features no vocabulary word has are dropped, and with
 * --min-feature-count those on fewer types (TOP features excepted). */
int llr_fz_columns(llr_featurizer *R, llr_err *err)
{
	fz_state *z = &R->z;
	llr_lexicon *lex = &R->lex;
	R->Fall = (int32_t)llr_strmap_size(z->names);
	R->df = calloc((size_t)R->Fall + 1, sizeof *R->df);
	R->col = calloc((size_t)R->Fall + 1, sizeof *R->col);
	R->col_in = calloc((size_t)R->Fall + 1, sizeof *R->col_in);
	lex->features = llr_strmap_new();
	lex->vocab = llr_strmap_new();
	lex->meta = llr_meta_new();
	if (!R->df || !R->col || !R->col_in || !lex->features || !lex->vocab || !lex->meta)
		return fz_nomem(err);
	for (size_t k = 0; k < R->r.n; k++)
		if (R->r.v[k] != 0.0f)
			R->df[R->r.c[k]]++;
	for (int s = 0; s < LLR_FZ_NSRC; s++) {
		for (int32_t f = 0; f < R->Fall; f++) {
			int fs = fz_feature_source(z, f);
			if (fs != s)
				continue;
			z->fsrc[f] = (unsigned char)fs;
			if (R->df[f] == 0 || (s != LLR_FZ_TOP && R->o.min_count > 0 && R->df[f] < R->o.min_count)) {
				R->col[f] = -1;
				continue;
			}
			R->col[f] = (int32_t)llr_strmap_size(lex->features);
			if (llr_strmap_add(lex->features, llr_strmap_str(z->names, f), llr_strmap_len(z->names, f)) < 0)
				return fz_nomem(err);
			R->st.per_source[s]++;
			R->used |= 1u << s;
		}
	}
	R->F = (int32_t)llr_strmap_size(lex->features);
	R->own_psi = R->o.in_mask && (R->used & ~R->o.in_mask);
	return R->own_psi ? fz_columns_in(R, err) : LLR_OK;
}

/* Scratch rows of phi and psi, one word at a time. */
typedef struct {
	int32_t *c, *c_in;
	float *v, *v_in;
	size_t n, nin;
} fz_scratch;

/* Row i of phi (and psi) into s; the coverage counts. */
static void fz_matrix_row(llr_featurizer *R, int32_t i, fz_scratch *s)
{
	const fz_rows *r = &R->r;
	s->n = s->nin = 0;
	for (int64_t k = r->rowptr[i]; k < r->rowptr[i + 1]; k++) {
		int32_t f = r->c[k];
		if (R->col[f] < 0 || r->v[k] == 0.0f)
			continue;
		s->c[s->n] = R->col[f];
		s->v[s->n++] = r->v[k];
		if (R->z.fsrc[f] != LLR_FZ_TOP)
			R->covered[i] = 1;
		if (R->own_psi && R->col_in[f] >= 0) {
			s->c_in[s->nin] = R->col_in[f];
			s->v_in[s->nin++] = r->v[k];
		}
	}
	if (i != R->eos) {
		R->st.word_tokens += llr_vocab_count(R->v, i);
		if (R->covered[i])
			R->st.covered_tokens += llr_vocab_count(R->v, i);
	}
}

/* Phi (and psi), the lexicon's vocabulary, and the coverage counts. */
int llr_fz_matrices(llr_featurizer *R, llr_err *err)
{
	llr_lexicon *lex = &R->lex;
	int own_psi = R->own_psi, rc = LLR_OK;
	llr_csr_builder *bphi = llr_csr_builder_new(R->F);
	llr_csr_builder *bpsi = own_psi ? llr_csr_builder_new((int32_t)llr_strmap_size(lex->features_in)) : NULL;
	size_t n = (size_t)R->Fall + 1;
	fz_scratch s = {calloc(n, sizeof *s.c), calloc(n, sizeof *s.c_in), calloc(n, sizeof *s.v), calloc(n, sizeof *s.v_in), 0, 0};
	R->covered = calloc((size_t)R->V, 1);
	if (!bphi || (own_psi && !bpsi) || !s.c || !s.c_in || !s.v || !s.v_in || !R->covered)
		rc = fz_nomem(err);
	for (int32_t i = 0; rc >= 0 && i < R->V; i++) {
		fz_matrix_row(R, i, &s);
		if ((rc = llr_csr_builder_row(bphi, s.c, s.v, s.n, err)) < 0 ||
		    (own_psi && (rc = llr_csr_builder_row(bpsi, s.c_in, s.v_in, s.nin, err)) < 0))
			break;
		const char *w = llr_vocab_token(R->v, i);
		if (llr_strmap_add(lex->vocab, w, strlen(w)) < 0)
			rc = fz_nomem(err);
	}
	free(s.c);
	free(s.c_in);
	free(s.v);
	free(s.v_in);
	if (rc < 0) {
		llr_csr_builder_free(bphi);
		llr_csr_builder_free(bpsi);
		return rc;
	}
	if (!(lex->phi = llr_csr_builder_finish(bphi, err))) {
		llr_csr_builder_free(bpsi);
		return llr_err_code(err, LLR_ENOMEM);
	}
	if (own_psi && !(lex->psi = llr_csr_builder_finish(bpsi, err)))
		return llr_err_code(err, LLR_ENOMEM);
	lex->eos_id = R->eos;
	lex->unk_id = R->unk;
	lex->extract = R->o.extract;
	return LLR_OK;
}

/* The any/ row of lexicon word lid into c, v (n entries), in phi's
 * columns by insertion (a list has no repeats). */
static size_t fz_any_row(const llr_featurizer *R, int32_t lid, int32_t *c, float *v)
{
	const fz_state *z = &R->z;
	size_t n = 0;
	for (uint32_t k = 0; k < z->lwf[lid].n; k++) {
		int32_t col = R->col[z->lwf[lid].f[k]];
		float val = z->lwf[lid].v[k];
		if (col < 0 || val == 0.0f)
			continue;
		size_t j = n++;
		for (; j > 0 && c[j - 1] > col; j--) {
			c[j] = c[j - 1];
			v[j] = v[j - 1];
		}
		c[j] = col;
		v[j] = val;
	}
	return n;
}

/* What the row of a word featurize does not see needs beyond the
 * extractors (llr_lexicon_any_row): the lexicon sources' entries, in
 * phi's columns, and the hunspell dictionary, embedded. */
int llr_fz_any(llr_featurizer *R, llr_err *err)
{
	const fz_state *z = &R->z;
	llr_strmap *words = llr_strmap_new();
	llr_csr_builder *b = llr_csr_builder_new(R->F);
	int32_t *c = calloc((size_t)R->F + 1, sizeof *c);
	float *v = calloc((size_t)R->F + 1, sizeof *v);
	int rc = words && b && c && v ? LLR_OK : fz_nomem(err);
	for (int32_t lid = 0; rc >= 0 && lid < (int32_t)llr_strmap_size(z->lw); lid++) {
		const char *w = llr_strmap_str(z->lw, lid);
		size_t wl = llr_strmap_len(z->lw, lid);
		if (R->o.lex_vocab && llr_vocab_id(R->v, w, wl) < 0)
			continue; /* --lexicon-scope vocab */
		size_t n = fz_any_row(R, lid, c, v);
		if (n == 0)
			continue;
		if (llr_strmap_add(words, w, wl) < 0)
			rc = fz_nomem(err);
		else
			rc = llr_csr_builder_row(b, c, v, n, err);
	}
	free(c);
	free(v);
	llr_csr *rows = NULL;
	if (rc < 0)
		llr_csr_builder_free(b);
	else if (!(rows = llr_csr_builder_finish(b, err)))
		rc = llr_err_code(err, LLR_ENOMEM);
	if (rc < 0 || rows->rows == 0) { /* nothing to store: no any/ members */
		llr_strmap_free(words);
		llr_csr_free(rows);
	} else if ((rc = llr_lexicon_set_words(&R->lex, words, rows, err)) < 0) {
		return rc;
	}
	if (rc >= 0 && R->o.hunspell)
		rc = llr_lexicon_set_hunspell(&R->lex, R->o.hunspell, err);
	return rc < 0 ? rc : LLR_OK;
}
