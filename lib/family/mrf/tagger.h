/*
 * tagger.h - the MRF part-of-speech tagger (family mrf-tagger, train
 * --mrf --tags; issue 53), shared by its files: the features of a
 * sentence's positions (tagfeat.c), the chain's exact conditional
 * likelihood with its gradient and the Viterbi decoder (tagchain.c), the
 * fit by L-BFGS (tagfit.c), the model file (tagmodel.c) and the family's
 * table (tagger.c).  Private to lib/family/mrf and its unit test.
 *
 * A sentence's words x_1..x_n and tags y_1..y_n form a linear chain of
 * tag variables, each tag linked to the next one (K = 1) and, through
 * its features, to the words within M positions of it:
 *
 *   s(x, y) = start[y_1] + sum_i e_i(y_i) + sum_{i>1} trans[y_{i-1}][y_i] + end[y_n],
 *   e_i(t)  = sum_{f in F(x, i)} w[f][t],
 *   p(y | x) = exp(s(x, y)) / Z(x),  Z(x) = sum_y exp(s(x, y)),
 *
 * F(x, i) the ids of position i's features: a bias, the words at
 * offsets -M..M (sentence-boundary markers beyond the ends), and the
 * shape of x_i: llr_extract's orthographic classes (capitalisation,
 * punctuation, digits, hyphen, length) and suffixes of 1..4 characters,
 * and its prefixes of 1..3 characters.  The parameters are one flat
 * array: w [F][T], then trans [T][T], start [T], end [T].
 *
 * This is a conditional model (a linear-chain CRF, Lafferty et al.
 * 2001) trained on the exact log-likelihood of the tags given the words
 * by forward-backward, not the thesis's joint p(words, tags) trained on
 * its lifted bound: the words are observed, so their features cost
 * nothing and no bound is needed.
 */
#ifndef LLR_FAMILY_MRF_TAGGER_H
#define LLR_FAMILY_MRF_TAGGER_H

#include "family/family.h"

#define MRFT_MAX_TAGS 4096
#define MRFT_MAX_WINDOW 8
#define MRFT_SUFFIX 4 /* suffixes of 1..4 characters */
#define MRFT_PREFIX 3 /* prefixes of 1..3 characters */

typedef struct mrft_model {
	int32_t T, M;       /* tags, word window */
	int32_t F;          /* features */
	llr_strmap *tags;   /* T names */
	llr_strmap *feats;  /* F names */
	double *w;          /* mrft_nparams */
	llr_meta *meta;     /* the file's, or the fit's summary */
} mrft_model;

static inline size_t mrft_nparams(int32_t F, int32_t T)
{
	return (size_t)F * (size_t)T + (size_t)T * (size_t)T + 2 * (size_t)T;
}
/* where trans, start and end begin in the parameters */
static inline size_t mrft_trans(int32_t F, int32_t T)
{
	return (size_t)F * (size_t)T;
}
void mrft_model_free(mrft_model *m);

/* A sentence's features (tagfeat.c): position i's are
 * ids[ptr[i] .. ptr[i+1]).  With add, new feature names go into feats;
 * without, a name feats lacks is left out (a feature training never
 * saw).  The buffers grow as needed.  LLR_ENOMEM, LLR_EUTF8. */
typedef struct mrft_feats {
	size_t *ptr;
	int32_t *ids;
	size_t cap_pos, cap_ids, n;
	llr_buf name;
} mrft_feats;
int mrft_features(mrft_feats *out, llr_strmap *feats, int add, int32_t M, const char *const *words, const size_t *lens, size_t n,
                  llr_err *err);
void mrft_feats_free(mrft_feats *f);
/* The name of the feature of word w at offset 0 (the word itself), into
 * b: seen in training when feats has it. */
int mrft_word_feature(llr_buf *b, const char *w, size_t len);

/* The chain's work space for sentences of up to cap positions. */
typedef struct mrft_ws {
	double *e, *alpha, *beta, *scale, *E, *acc, *v;
	int32_t *back;
	size_t cap;
	int32_t T;
} mrft_ws;
int mrft_ws_reserve(mrft_ws *ws, int32_t T, size_t n);
void mrft_ws_free(mrft_ws *ws);

/* -log p(y | x) of a sentence of n >= 1 positions (features f, gold tags
 * y) under parameters w, forward-backward with scaling; g (may be NULL)
 * gets its gradient with respect to w added.  The work space must hold
 * n positions (mrft_ws_reserve). */
double mrft_nll(mrft_ws *ws, int32_t F, int32_t T, const double *w, const mrft_feats *f, const int32_t *y, double *g);
/* log Z(x) alone (for the tests), and s(x, y). */
double mrft_logz(mrft_ws *ws, int32_t F, int32_t T, const double *w, const mrft_feats *f);
double mrft_score(int32_t F, int32_t T, const double *w, const mrft_feats *f, const int32_t *y);
/* The best tags of the sentence into best[0..n) (Viterbi, exact); its
 * score s(x, best) returned. */
double mrft_viterbi(mrft_ws *ws, int32_t F, int32_t T, const double *w, const mrft_feats *f, int32_t *best);

/* Training (tagfit.c): train --mrf --tags. */
int mrft_estimate(llr_train_args *a, llr_err *err);

/* The model file (tagmodel.c; family=mrf-tagger). */
int mrft_model_save(const char *path, const mrft_model *m, llr_err *err);
int mrft_model_load(const char *path, mrft_model **out, llr_err *err);

/* The stop reason a liblbfgs run ends with (ret its return, cut: the
 * progress callback stopped it on max-time), as meta's stopped: max-time,
 * epochs, converged or line-search; NULL when liblbfgs did not run (out
 * of memory for its work space, a parameter it refused), which is an
 * error, set by mrf_lbfgs_err (n the parameters); both MRF estimators'
 * (tagfit.c). */
const char *mrf_lbfgs_stop(int ret, int cut);
int mrf_lbfgs_err(int ret, size_t n, llr_err *err);
/* A saved fit's meta key as a number, else dflt (missing, not a number,
 * negative): what both MRF estimators' --resume reads back. */
double mrf_meta_num(const llr_meta *meta, const char *key, double dflt);

#endif
