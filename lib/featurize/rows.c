/*
 * rows.c - featurize's feature rows (lib/featurize/fz.h): for every
 * vocabulary word in id order, then for the corpus's types outside the
 * vocabulary (--spelling with --vocab), the features it has, as feature
 * table ids: TOP, the lexicon sources' entries, hunspell's analyses, the
 * string extractors and the OOV: features.  Not here: which of them
 * become phi's columns (columns.c).
 */
#include <stdlib.h>
#include <string.h>

#include "fz.h"

static int fz_row_put(fz_rows *r, int32_t c, float v, llr_err *err)
{
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 1 << 16;
		int32_t *pc = llr_reallocarray(r->c, cap, sizeof *r->c);
		if (pc)
			r->c = pc;
		float *pv = llr_reallocarray(r->v, cap, sizeof *r->v);
		if (pv)
			r->v = pv;
		if (!pc || !pv)
			return llr_err_set(err, LLR_ENOMEM, "out of memory (%zu feature entries)", r->n);
		r->cap = cap;
	}
	r->c[r->n] = c;
	r->v[r->n++] = v;
	return LLR_OK;
}

/* A feature whose name is known to be valid (TOP:, OOV:), put on row. */
static int fz_row_named(llr_featurizer *R, const char *name, int src, llr_err *err)
{
	const char *why;
	int32_t f = llr_fz_feature(&R->z, name, strlen(name), src, &why, err);
	if (f < 0)
		return why ? llr_err_set(err, LLR_EFORMAT, "feature '%s': %s", name, why) : f;
	return fz_row_put(&R->r, f, 1.0f, err);
}

typedef struct {
	llr_featurizer *R;
	int src;
	const char *word;
	llr_err *err;
} fz_emit_ctx;

static int fz_emit_row(const char *name, size_t len, float value, void *ctx)
{
	fz_emit_ctx *e = ctx;
	const char *why;
	int32_t f = llr_fz_feature(&e->R->z, name, len, e->src, &why, e->err);
	if (f < 0 && why)
		return llr_err_set(e->err, LLR_EFORMAT, "word '%s': %s feature '%.*s': %s", e->word, llr_featurize_source_name(e->src),
		                   (int)LLR_MIN(len, 80), name, why);
	if (f < 0)
		return f;
	return fz_row_put(&e->R->r, f, value, e->err);
}

static int fz_cmp_col(const void *a, const void *b)
{
	const int32_t *x = a, *y = b;
	return (*x > *y) - (*x < *y);
}

/* Sort row i (entries rowptr[i] ..) by column and drop repeats (the
 * first wins); close the row. */
static int fz_row_finish(fz_rows *r, int32_t i, llr_err *err)
{
	size_t a = (size_t)r->rowptr[i], n = r->n - a;
	if (n > 1) {
		int32_t *pairs = calloc(n, 2 * sizeof *pairs);
		if (!pairs)
			return fz_nomem(err);
		for (size_t k = 0; k < n; k++) {
			pairs[2 * k] = r->c[a + k];
			memcpy(&pairs[2 * k + 1], &r->v[a + k], sizeof(float));
		}
		qsort(pairs, n, 2 * sizeof *pairs, fz_cmp_col);
		size_t m = 0;
		for (size_t k = 0; k < n; k++) {
			if (m && r->c[a + m - 1] == pairs[2 * k])
				continue;
			r->c[a + m] = pairs[2 * k];
			memcpy(&r->v[a + m], &pairs[2 * k + 1], sizeof(float));
			m++;
		}
		r->n = a + m;
		free(pairs);
	}
	r->rowptr[i + 1] = (int64_t)r->n;
	if (r->n > (size_t)INT32_MAX)
		return llr_err_set(err, LLR_ERANGE, "more than %d non-zero entries in phi (the limit)", INT32_MAX);
	return LLR_OK;
}

/* The TOP feature of word i, the rank-th in vocabulary order. */
static int fz_row_top(llr_featurizer *R, int32_t i, int32_t *rank, llr_err *err)
{
	if (i == R->eos)
		return fz_row_named(R, LLR_FEAT_EOS, LLR_FZ_TOP, err);
	if (i == R->unk)
		return fz_row_named(R, LLR_FEAT_NOTTOP, LLR_FZ_TOP, err);
	if (R->o.top <= 0)
		return LLR_OK;
	int rc;
	if (*rank < R->o.top && llr_vocab_count(R->v, i) > 0) {
		llr_buf b = {0};
		rc = llr_buf_printf(&b, LLR_TOP_PREFIX "%s", llr_vocab_token(R->v, i)) < 0 ? fz_nomem(err)
		                                                                           : fz_row_named(R, b.data, LLR_FZ_TOP, err);
		llr_buf_free(&b);
	} else {
		rc = fz_row_named(R, LLR_FEAT_NOTTOP, LLR_FZ_TOP, err);
	}
	(*rank)++;
	return rc;
}

/* Word w's features beyond TOP: lexicon sources (unless outside the
 * vocabulary under --lexicon-scope vocab), and unless it is </s> or
 * <unk> (special), hunspell and the string extractors. */
static int fz_row_features(llr_featurizer *R, const char *w, int special, int outside, llr_err *err)
{
	fz_rows *r = &R->r;
	size_t wl = strlen(w);
	int32_t lid = outside && R->o.lex_vocab ? -1 : llr_strmap_get(R->z.lw, w, wl);
	int rc;
	if (lid >= 0)
		for (uint32_t k = 0; k < R->z.lwf[lid].n; k++)
			if ((rc = fz_row_put(r, R->z.lwf[lid].f[k], R->z.lwf[lid].v[k], err)) < 0)
				return rc;
	if (special)
		return LLR_OK;
	fz_emit_ctx ec = {.R = R, .word = w, .err = err};
	if (R->morph) {
		ec.src = LLR_FZ_HUNSPELL;
		err->code = 0;
		rc = llr_morph_features(R->morph, w, wl, fz_emit_row, &ec);
		if (rc < 0 && err->code) /* a word hunspell cannot take has no analyses */
			return rc;
	}
	ec.src = LLR_FZ_ORTHO; /* llr_extract's names carry their kind */
	err->code = 0;
	rc = llr_extract(&R->o.extract, w, wl, fz_emit_row, &ec);
	if (rc < 0 && err->code)
		return rc;
	if (rc == LLR_EUTF8)
		return llr_err_set(err, LLR_EUTF8, "word '%s': invalid UTF-8", w);
	return LLR_OK;
}

/* The features of a type outside the vocabulary only (--spelling, unless
 * --no-oov-features), on the row being built from entry from: OOV:@oov,
 * and OOV:HS:@known when hunspell knows it (the row has HS:@known);
 * llr_lexicon_any_row gives them the same way. */
static int fz_row_oov(llr_featurizer *R, int64_t from, llr_err *err)
{
	fz_rows *r = &R->r;
	int32_t known = llr_strmap_get(R->z.names, LLR_FEAT_HS_KNOWN, strlen(LLR_FEAT_HS_KNOWN));
	int hs = 0;
	for (size_t k = (size_t)from; known >= 0 && k < r->n; k++)
		hs |= r->c[k] == known && r->v[k] != 0.0f;
	int rc = fz_row_named(R, LLR_FEAT_OOV, LLR_FZ_OOV, err);
	if (rc >= 0 && hs)
		rc = fz_row_named(R, LLR_FEAT_OOV_HS_KNOWN, LLR_FZ_OOV, err);
	return rc;
}

/* Rows, in vocabulary order: TOP, lexicon sources, hunspell, string
 * extractors; then the rows of the types outside the vocabulary
 * (llr_fz_outside), TOP:@notTop, the rest and the OOV: features, which
 * count in the columns' document frequencies (a feature only the words
 * outside the vocabulary have is kept: what an open vocabulary learns
 * from) but are not phi's. */
int llr_fz_rows_build(llr_featurizer *R, llr_err *err)
{
	fz_rows *r = &R->r;
	int32_t nout = R->outside ? (int32_t)llr_strmap_size(R->outside) : 0;
	if (!(r->rowptr = calloc((size_t)R->V + (size_t)nout + 1, sizeof *r->rowptr)))
		return fz_nomem(err);
	int32_t rank = 0;
	int rc = LLR_OK;
	for (int32_t i = 0; rc >= 0 && i < R->V; i++) {
		rc = fz_row_top(R, i, &rank, err);
		if (rc >= 0)
			rc = fz_row_features(R, llr_vocab_token(R->v, i), i == R->eos || i == R->unk, 0, err);
		if (rc >= 0)
			rc = fz_row_finish(r, i, err);
	}
	for (int32_t j = 0; rc >= 0 && j < nout; j++) {
		if (R->o.top > 0)
			rc = fz_row_named(R, LLR_FEAT_NOTTOP, LLR_FZ_TOP, err);
		if (rc >= 0)
			rc = fz_row_features(R, llr_strmap_str(R->outside, j), 0, 1, err);
		if (rc >= 0 && !R->o.no_oov)
			rc = fz_row_oov(R, r->rowptr[R->V + j], err);
		if (rc >= 0)
			rc = fz_row_finish(r, R->V + j, err);
	}
	return rc < 0 ? rc : LLR_OK;
}
