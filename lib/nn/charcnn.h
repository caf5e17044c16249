/*
 * charcnn.h - private interface of the character-aware word input
 * (charcnn.c, highway.c), assembled into word vectors by net.c; not API.
 *
 * Kim, Jernite, Sontag & Rush (2016), "Character-Aware Neural Language
 * Models", section 2: a word is the sequence of its characters between a
 * begin-of-word and an end-of-word marker; each character has an
 * embedding of dc numbers; filters of widths w slide over the word
 * (a filter of width w is a w*dc x 1 weight vector plus a bias), tanh of
 * each window, max over the windows; then highway layers.  Shapes are
 * row-major; forward functions overwrite their outputs, backward
 * functions ADD into parameter gradients (as nn.h).
 */
#ifndef LLR_CHARCNN_H
#define LLR_CHARCNN_H

#include "nn.h"

/* Characters read from a word: a longer word keeps its first
 * LLR_CHAR_MAX_WORD - 1 characters and its last one. */
#define LLR_CHAR_MAX_WORD 48
/* Longest spelling: the characters and the two markers. */
#define LLR_SPELL_MAX (LLR_CHAR_MAX_WORD + 2)
#define LLR_CNN_MAX_WIDTHS 16

/* Reserved character ids; the code points of the character vocabulary
 * follow from LLR_CH_FIRST on.  PAD fills words shorter than a filter
 * and has the zero vector (its embedding row is never read). */
enum {
	LLR_CH_PAD = 0,
	LLR_CH_BOW,  /* begin of word */
	LLR_CH_EOW,  /* end of word */
	LLR_CH_UNK,  /* a character outside the vocabulary (or a bad byte) */
	LLR_CH_BOS,  /* the whole spelling of <s> */
	LLR_CH_EOS,  /* of </s> */
	LLR_CH_UNKW, /* of <unk> */
	LLR_CH_FIRST
};

/* The character vocabulary of the words of `vocab` (special tokens
 * excluded): *cps (caller frees) holds its *n code points, ascending. */
int llr_charvocab_build(const llr_strmap *vocab, int32_t **cps, int32_t *n, llr_err *err);
/* The spelling of word w as character ids into out (LLR_SPELL_MAX
 * entries): BOW, the characters (ids of cps[0..ncp), or UNK), EOW; the
 * special tokens <s> </s> <unk> have their own character.  Returns the
 * length. */
int llr_word_spell(const int32_t *cps, int32_t ncp, const char *w, size_t len, int32_t *out);

/* Spellings of words: word i is ids[off[i] .. off[i+1]). */
typedef struct llr_spell {
	int32_t n;
	int32_t *off; /* n + 1 */
	int32_t *ids;
	size_t ncap, icap;
} llr_spell;
int llr_spell_push(llr_spell *s, const int32_t *ids, int len); /* LLR_OK or LLR_ENOMEM */
void llr_spell_truncate(llr_spell *s, int32_t n);
void llr_spell_free(llr_spell *s);

/* The convolution and its parameters (pointers into the net's arrays):
 *   emb   C x dc          character embeddings (row LLR_CH_PAD unused)
 *   K[k]  width[k]*dc x nf[k]   filters of width[k], one per column;
 *                         row t*dc + e multiplies character t of the
 *                         window, embedding component e
 *   b[k]  nf[k]
 * Output column off[k] + f of a word is filter f of width k; D columns. */
typedef struct llr_conv {
	int dc, nw, D;
	int width[LLR_CNN_MAX_WIDTHS], nf[LLR_CNN_MAX_WIDTHS], off[LLR_CNN_MAX_WIDTHS];
	const float *emb, *K[LLR_CNN_MAX_WIDTHS], *b[LLR_CNN_MAX_WIDTHS];
	float *demb, *dK[LLR_CNN_MAX_WIDTHS], *db[LLR_CNN_MAX_WIDTHS];
} llr_conv;

/* Scratch of the convolution, grown on demand; zero-initialise. */
typedef struct llr_conv_ws {
	float *unf, *z, *dz;
	int32_t *arg; /* U x D: the window (row of its width's block) of each max */
	size_t unf_cap, z_cap, dz_cap, arg_cap;
	size_t unf_off[LLR_CNN_MAX_WIDTHS], rows[LLR_CNN_MAX_WIDTHS];
} llr_conv_ws;
void llr_conv_ws_free(llr_conv_ws *ws);

/* Y (U x D) for the words wid[0..U) of sp:
 *   Y[u][off[k] + f] = tanh(max over windows s of unfold(u, s) . K[k][:, f] + b[k][f])
 * where unfold(u, s) is the embeddings of characters s .. s+w-1 of the
 * spelling of u, padded with PAD up to w characters when shorter.  The
 * windows of all U words and one width are the rows of one matrix, and
 * the products are one GEMM (llr_gemm) per width.  Keeps the windows and
 * the argmax in ws for llr_conv_backward.  LLR_ENOMEM. */
int llr_conv_forward(const llr_conv *c, llr_conv_ws *ws, const llr_spell *sp, const int32_t *wid, int U, float *Y);
/* From dY (U x D) and the forward's Y and ws: demb, dK, db += the
 * gradients (only the maximum window of each filter carries one). */
int llr_conv_backward(const llr_conv *c, llr_conv_ws *ws, const llr_spell *sp, const int32_t *wid, int U, const float *Y, const float *dY);

/* One highway layer (Srivastava et al. 2015, as Kim et al. use it) over U
 * rows of D numbers:
 *   g = relu(y Wg + bg),  t = sigmoid(y Wt + bt),  z = t * g + (1 - t) * y
 * W is D x 2D: columns [0, D) are Wg, [D, 2D) Wt; b is 2D likewise.
 * gt (U x 2D) keeps g and t for the backward pass. */
void llr_highway_forward(int U, int D, const float *W, const float *b, const float *y, float *gt, float *z);
/* dz (U x D) -> dy (U x D, overwritten; may not alias dz), dW and db
 * accumulate; scratch is U x 2D. */
void llr_highway_backward(int U, int D, const float *W, const float *y, const float *gt, const float *dz, float *dy, float *dW, float *db, float *scratch);

#endif
