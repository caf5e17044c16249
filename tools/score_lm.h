/*
 * score_lm.h - what score and gen share (CLI-only, never part of
 * libllrnn): loading a model for inference with the tools' error
 * messages, mapping words to vocabulary ids, and the input-feature matrix
 * that gives words outside the vocabulary their own input features (the
 * model's psi rows followed by rows computed with llr_lexicon_word_row).
 * It does not score or sample: the library does that.
 */
#ifndef LLR_SCORE_LM_H
#define LLR_SCORE_LM_H

#include "llrnn.h"

typedef struct slm {
	llr_rnnlm *model;
	const llr_lexicon *lex;
	llr_net *net;
	int32_t V, unk_id, eos_id;
	int loglinear;    /* LLR_OUT_LOGLINEAR: unseen words get extracted features */
	llr_words *words; /* character-aware input: unseen words are spelled out */

	/* Input features: base_rows rows of the model's psi (or phi), then
	 * rows appended by slm_input since the last slm_input_reset. */
	llr_csr psi;
	int32_t base_rows, rows_cap;
	int32_t base_nnz;
	size_t nnz_cap;

	llr_csr *eye; /* the identity psi of a softmax-type net that reads psi and spellings */

	int32_t *row_cols; /* scratch for llr_lexicon_word_row */
	float *row_vals;
	size_t row_cap;
} slm;

/* Load path with llr_rnnlm_load; on failure print the library's message
 * and exit 1. */
void slm_load(slm *m, const char *path, int verbose);
void slm_free(slm *m);
/* Vocabulary id of a word, or -1. */
int32_t slm_word(const slm *m, const char *w, size_t len);
/* Target id: the vocabulary id, or <unk> (then *oov is set to 1). */
int32_t slm_target(const slm *m, const char *w, size_t len, int *oov);
/* Input id for a word whose vocabulary id is vid (-1 if unseen): vid
 * itself, or for an unseen word of a log-linear model a new row holding
 * its extracted input features (the <unk> row if it has none).  With a
 * character-aware input every unseen word gets a new id: its spelling
 * (llr_words_add) and, when the net also reads psi, a psi row (its
 * features, or <unk>'s).  Exits 1 on out of memory. */
int32_t slm_input(slm *m, const char *w, size_t len, int32_t vid);
/* Forget the rows slm_input appended. */
void slm_input_reset(slm *m);
/* The matrix to pass as llr_batch.psi / llr_net_step's psi: NULL while
 * no row has been appended (the net's own psi is then exact). */
const llr_csr *slm_psi(const slm *m);
/* Append to out the output features of a word, lexicon style
 * ("POS:VERB Gender:Fem w=0.5"): its phi row, or for an unseen word
 * (vid -1) the features extracted from the string. */
void slm_features(slm *m, const char *w, size_t len, int32_t vid, llr_buf *out);
/* The same for a row of n entries (columns of phi). */
void slm_row_features(slm *m, const int32_t *cols, const float *vals, size_t n, llr_buf *out);

#endif
