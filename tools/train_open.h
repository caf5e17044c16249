/*
 * train_open.h - train's open-vocabulary LL-RNN (issue 14; train(1),
 * "Open vocabulary"): a stream whose lexicon carries a spelling model and
 * signature masses (featurize --spelling) trains the distribution score
 * scores, over every string: its words outside the vocabulary come as
 * signature ids V + s (featurize), the normaliser has the signature rows
 * (llr_open_new), and validation scores the words outside the vocabulary
 * by their own rows, as score --open does.  CLI-only.
 */
#ifndef LLR_TRAIN_OPEN_H
#define LLR_TRAIN_OPEN_H

#include "train_dist.h"
#include "llrnn.h"

typedef struct train_open {
	llr_open *op; /* NULL: closed training */
	int32_t V, S;
	llr_csr *psi; /* the training inputs' rows: V, then one a signature */
	/* validation: inputs (V rows, then one a string outside V') and
	 * targets outside V' (xphi, xlogb) */
	llr_csr_builder *vin, *vout;
	llr_csr *vpsi, *vxphi;
	float *vxlogb;
	size_t nx, xcap;
	llr_row r; /* a scratch row */
} train_open;

/* Set a new or loaded model up for open training when it can be (a
 * log-linear output over word inputs) and its lexicon has signature
 * masses: 1, else 0 (closed; then the ids >= V of a stream are trained as
 * <unk>).  Exits on error. */
int topen_init(train_open *t, llr_rnnlm *m);
/* A fresh model's output bias: the context-free fit to the training
 * targets ids (n of them, -1 padding; summed over the ranks of d),
 * llr_open_fit_bias, reported on stderr unless quiet and in meta
 * open_bias_init; the fitted weights of HS:@known and the OOV: features
 * the model has in meta open_bias_fit (and on stderr).  Exits on error. */
void topen_fit_bias(train_open *t, llr_rnnlm *m, const train_dist *d, const int32_t *ids, size_t n, int quiet);
/* A validation word's target: its id in V', or V + i for the i-th string
 * outside V' (its rows added).  Exits on error. */
int32_t topen_valid_target(train_open *t, const llr_rnnlm *m, const char *w, size_t len);
/* Validation's rows, once every sentence is read. */
void topen_valid_finish(train_open *t);
void topen_free(train_open *t);

#endif
