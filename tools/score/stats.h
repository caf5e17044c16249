/*
 * stats.h - what score counts (sentences, words, OOVs, zeroprobs,
 * blank lines, log-probabilities) and the summaries made of it: score's
 * own on standard error and SRILM's `ngram -ppl` lines (score(1),
 * "Summary"); CLI-only, not libllrnn API.
 */
#ifndef LLR_SCORE_STATS_H
#define LLR_SCORE_STATS_H

#include <stddef.h>
#include <stdio.h>

typedef struct sstats {
	size_t sentences, words;
	size_t oovs;      /* words outside the model's vocabulary */
	size_t zeroprobs; /* other tokens of probability 0 */
	size_t blanks;    /* blank lines skipped */
	double logp;      /* natural log, every token: OOVs as the model scores them */
	double logp_oov;  /* the part of logp on OOV words */
	double logp_in;   /* natural log, the tokens neither OOV nor zeroprob (SRILM's) */
} sstats;

/* Count one predicted token (a word or </s>) of log-probability lp
 * (natural log), an OOV word when oov. */
void sstats_token(sstats *s, double lp, int oov);
void sstats_add(sstats *to, const sstats *from);
/* score's summary on standard error: counts, logprob in base base_name
 * (base_div = its ln), and the perplexities with OOVs (scored as
 * oov_rule says) and without (SRILM's ppl and ppl1). */
void sstats_summary(const sstats *s, const char *base_name, double base_div, const char *oov_rule);
/* SRILM's two -ppl lines to fp, the first after "file NAME: " when name
 * is not NULL (the per-sentence lines of -debug 1 have no prefix). */
void sstats_srilm(FILE *fp, const char *name, const sstats *s);

#endif
