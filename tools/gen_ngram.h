/*
 * gen_ngram.h - gen(1) with a backoff n-gram model (tools/gen_ngram.c;
 * CLI-only): sampling and greedy decoding from the model llr_model_open
 * gave (llr_model_ngram).  The library computes the probabilities
 * (llr_ngram_log10p); this file maps words and lays out the output as
 * gen(1) specifies it.
 */
#ifndef LLR_GEN_NGRAM_H
#define LLR_GEN_NGRAM_H

#include "llrnn.h"

/* Sampling and greedy decoding (llr_sample with so), no beam search. */
typedef struct gen_ngram_opts {
	long long n; /* sentences per prefix */
	unsigned long long seed;
	int max_len;
	int no_unk, logprob, quiet;
	llr_sample_opts so;
	const char *prefix_text, *prefix_file, *output;
} gen_ngram_opts;
int gen_ngram(const llr_ngram *m, const gen_ngram_opts *o);

#endif
