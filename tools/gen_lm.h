/*
 * gen_lm.h - gen's LSTM language model (CLI-only, never part of
 * libllrnn): loading with the tools' error messages, and words to ids
 * through the library's llr_rnnlm_inputs (unseen words' input features
 * and spellings), exiting 1 on error; and a word's features, lexicon
 * style, for --show-features.  score goes through llr_model instead.
 */
#ifndef LLR_GEN_LM_H
#define LLR_GEN_LM_H

#include "llrnn.h"

typedef struct slm {
	llr_rnnlm *model;
	const llr_lexicon *lex;
	llr_net *net;
	int32_t V, unk_id, eos_id;
	llr_rnnlm_inputs *in;
	llr_row row; /* scratch for slm_features */
} slm;

/* Load path with llr_rnnlm_load; on failure print the library's message
 * and exit 1. */
void slm_load(slm *m, const char *path, int verbose);
void slm_free(slm *m);
/* Vocabulary id of a word, or -1. */
int32_t slm_word(const slm *m, const char *w, size_t len);
/* Target id: the vocabulary id, or <unk> (then *oov is set to 1). */
int32_t slm_target(const slm *m, const char *w, size_t len, int *oov);
/* Input id for a word whose vocabulary id is vid (-1 if unseen):
 * llr_rnnlm_inputs_add. */
int32_t slm_input(slm *m, const char *w, size_t len, int32_t vid);
/* Forget the rows slm_input appended. */
void slm_input_reset(slm *m);
/* The matrix to pass as llr_net_step's psi (llr_rnnlm_inputs_psi). */
const llr_csr *slm_psi(const slm *m);
/* Append to out the output features of a word, lexicon style
 * ("POS:VERB Gender:Fem w=0.5"): its phi row, or for an unseen word
 * (vid -1) the features extracted from the string. */
void slm_features(slm *m, const char *w, size_t len, int32_t vid, llr_buf *out);
/* The same for a row of n entries (columns of phi). */
void slm_row_features(slm *m, const int32_t *cols, const float *vals, size_t n, llr_buf *out);

#endif
