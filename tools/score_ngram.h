/*
 * score_ngram.h - what score and gen do with a backoff n-gram model
 * (tools/score_ngram.c, tools/gen_ngram.c; CLI-only): load it, score the
 * tokens of a line, and sample sentences.  The library computes the
 * probabilities (llr_ngram_log10p); these files map words and lay out
 * the output as score(1) and gen(1) specify it.
 */
#ifndef LLR_SCORE_NGRAM_H
#define LLR_SCORE_NGRAM_H

#include <stdio.h>

#include "llrnn.h"

typedef struct sngram {
	llr_ngram *m;
	int order;
	int32_t V, bos, eos, unk;
	int32_t *hist; /* scratch: the ids of a line */
	size_t cap;
} sngram;

/* 1 and the model in s if path is an n-gram model (ARPA or binary); 0 if
 * it is another kind of file (a neural model); exits 1 on a bad model. */
int sngram_open(sngram *s, const char *path);
void sngram_free(sngram *s);

/* Score one line of n words (word t is text + tok[t]) and its </s>:
 * lp[t * stride] gets log p (natural) for t = 0 .. n, oov[t * stride] 1
 * for a word outside the vocabulary.  An OOV is scored as <unk> when the
 * model has it, else it gets 0 (not scored, as SRILM) and cuts the
 * context.  With check_norm the result is sum over the vocabulary of
 * p - 1 (signed) at the position where its magnitude is largest (O(V) a
 * token), else 0. */
double sngram_line(sngram *s, const char *text, const size_t *tok, size_t n, float *lp, unsigned char *oov, size_t stride, int check_norm);

/* gen with an n-gram model: sampling and greedy decoding (llr_sample
 * with so), no beam search. */
typedef struct gen_ngram_opts {
	long long n; /* sentences per prefix */
	unsigned long long seed;
	int max_len;
	int no_unk, logprob, quiet;
	llr_sample_opts so;
	const char *prefix_text, *prefix_file, *output;
} gen_ngram_opts;
int gen_ngram(sngram *s, const gen_ngram_opts *o);

#endif
