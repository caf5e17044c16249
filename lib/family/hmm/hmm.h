/*
 * hmm.h - the trigram HMM part-of-speech tagger of Brants's TnT (2000,
 * "TnT - A Statistical Part-of-Speech Tagger"), the tagging baseline of
 * issue 53, shared by the family's files: counting and estimation
 * (estimate.c: train --hmm), the model file and what is derived from it
 * at load (model.c), the unknown-word model and the decoder (tag.c), the
 * family's table (hmm.c).  Private to lib/family/hmm and its unit test.
 *
 * Tags are ids 0 .. T-1; two more ids stand for the sentence boundaries:
 * HMM_BOS(T) = T, the two tags before a sentence (TnT's t_-1 and t_0),
 * and HMM_EOS(T) = T + 1, the tag after it (t_T+1).  S = T + 2 ids in
 * all.  A sentence t_1 .. t_n is counted as the sequence x = BOS BOS t_1
 * .. t_n EOS: its n + 1 predicted events are the trigrams (x[i-2],
 * x[i-1], x[i]) for i = 2 .. n + 2, and every other count is a sum of
 * theirs (hmm_derive).
 */
#ifndef LLR_FAMILY_HMM_H
#define LLR_FAMILY_HMM_H

#include "family/family.h"

#include <math.h>

#define LLR_HMM_MAX_TAGS 1024 /* tags at most (the bigram tables are S x S) */
#define LLR_HMM_RARE 10       /* the suffix models learn from words seen at most this often */
#define LLR_HMM_SUFFIX 10     /* and from their suffixes of at most this many characters */
#define HMM_BOS(T) (T)
#define HMM_EOS(T) ((T) + 1)

/* uint64 keys -> int64 counts, open addressing; a key is never
 * UINT64_MAX (the empty slot). */
typedef struct hmm_counts {
	uint64_t *key;
	int64_t *val;
	size_t n, cap;
} hmm_counts;
int hmm_counts_add(hmm_counts *c, uint64_t key, int64_t v); /* LLR_ENOMEM */
int64_t hmm_counts_get(const hmm_counts *c, uint64_t key);  /* 0 when absent */
void hmm_counts_free(hmm_counts *c);

/* Tag counts by row (a word's, a suffix's): row r's are tag[ptr[r] ..
 * ptr[r+1]) with count[...], tags increasing; total[r] their sum. */
typedef struct hmm_rows {
	size_t rows;
	int64_t *ptr, *count, *total;
	int32_t *tag;
} hmm_rows;
void hmm_rows_free(hmm_rows *r);
/* The rows of counts c keyed row << 20 | tag (rows of them). */
int hmm_rows_from(hmm_rows *r, const hmm_counts *c, size_t rows, llr_err *err);

/* One suffix model (TnT 2.3): the words seen at most rare times of one
 * capitalisation, their suffixes of 1 .. max_suffix characters with
 * their tag counts (a word's counts added to each of its suffixes), and
 * base[t], the tag counts of all those words (the empty suffix). */
typedef struct hmm_suffix {
	llr_strmap *sfx;
	hmm_rows rows;
	int64_t *base; /* T */
	int64_t total;
} hmm_suffix;

typedef struct llr_hmm {
	int32_t T;
	llr_strmap *tags;  /* T names */
	llr_strmap *words; /* the training lexicon */
	hmm_rows lex;      /* each word's tag counts */
	size_t ntri;
	int32_t *tri;       /* ntri x 3: the distinct trigrams of x, sorted */
	int64_t *tri_count; /* ntri: how often each */
	int rare, max_suffix;
	double lambda[3]; /* unigram, bigram, trigram weights (TnT 2.2) */
	double theta;     /* the suffix models' weight (TnT 2.3) */
	llr_meta *meta;   /* the file's, or NULL */
	/* Derived (hmm_derive): with S = T + 2, uni[t] = f(t) as a predicted
	 * event, N their sum (the predicted events); bi[a*S+b] = f(a,b) of
	 * the bigram (x[i-1], x[i]); h1[a] = sum_b f(a,b); h2[a*S+b] =
	 * sum_c f(a,b,c), the trigram histories; tri_map the trigrams. */
	int64_t *uni, *bi, *h1, *h2, N;
	hmm_counts tri_map;
	/* log llr_hmm_trans for every (t1, t2, t3) at (t1*S+t2)*S+t3 when S
	 * is at most HMM_CACHE_S (else NULL: computed each time); set after
	 * the weights (hmm_cache). */
	double *logtrans;
	hmm_suffix sm[2]; /* [0] uncapitalised words, [1] capitalised */
} llr_hmm;

void llr_hmm_free(llr_hmm *h);
/* The derived tables and the suffix models from tags, words, lex and the
 * trigrams; LLR_EFORMAT when they disagree (a tag's count as a word's
 * tag differs from its count as a predicted event), LLR_ENOMEM. */
int hmm_derive(llr_hmm *h, llr_err *err);
/* TnT's deleted interpolation (its figure 1) over h's derived counts:
 * lambda[0..2] for the unigram, bigram and trigram estimates. */
void llr_hmm_lambdas(const llr_hmm *h, double lambda[3]);
/* TnT's theta: the standard deviation (over the n tags, divisor n - 1)
 * of the tag probabilities count[t] / sum; 0 for n < 2. */
double llr_hmm_theta(const int64_t *count, int32_t n);
/* p(t3 | t1, t2), smoothed: lambda1 f(t3)/N + lambda2 f(t2,t3)/f(t2) +
 * lambda3 f(t1,t2,t3)/f(t1,t2), a ratio 0 when its denominator is. */
double llr_hmm_trans(const llr_hmm *h, int32_t t1, int32_t t2, int32_t t3);
#define HMM_CACHE_S 64
/* The logtrans table of h (h's weights set); LLR_ENOMEM. */
int hmm_cache(llr_hmm *h, llr_err *err);
/* log p(t3 | t1, t2): from the table, or computed. */
static inline double hmm_logtrans(const llr_hmm *h, int32_t t1, int32_t t2, int32_t t3)
{
	const size_t S = (size_t)h->T + 2;
	return h->logtrans ? h->logtrans[((size_t)t1 * S + (size_t)t2) * S + (size_t)t3] : log(llr_hmm_trans(h, t1, t2, t3));
}
/* 1 when word w (valid UTF-8, n bytes) begins with a capital letter. */
int llr_hmm_capitalised(const char *w, size_t n);
/* The byte offset where the last k characters of w[0..n) begin, or -1
 * when w has fewer than k. */
long hmm_suffix_at(const char *w, size_t n, int k);
/* The unknown-word model for word w (n bytes): p[t] = P(t | the longest
 * suffix of w that suffix model sm knows) by successive abstraction,
 * P_0(t) = base[t] / total, P_k(t) = (P^(t | s_k) + theta P_k-1(t)) /
 * (1 + theta); returns the suffix length used (characters). */
int llr_hmm_suffix_probs(const llr_hmm *h, const hmm_suffix *sm, const char *w, size_t n, double *p);

/* Second-order Viterbi over the n positions of a sentence: position i
 * (0-based) may take the nc[i] tags cand[off[i] .. off[i] + nc[i]) with
 * log emission logem[off[i] + k]; the path maximises the sum of log
 * llr_hmm_trans from BOS BOS to EOS and the emissions.  beam 0 is exact;
 * beam > 1 drops, at each position, the states below the best by a
 * factor beam (TnT's beam search).  best[i] gets the chosen index k at
 * position i; *score the path's log score.  LLR_ENOMEM. */
typedef struct hmm_viterbi {
	double *delta;
	int32_t *back;
	size_t cap;
} hmm_viterbi;
int llr_hmm_viterbi(hmm_viterbi *v, const llr_hmm *h, size_t n, const int32_t *nc, const size_t *off, const int32_t *cand,
                    const double *logem, double beam, int32_t *best, double *score, llr_err *err);
void hmm_viterbi_free(hmm_viterbi *v);

/* estimate.c: counting word/TAG lines (one sentence each: tokens split
 * at their last '/', LLR_EFORMAT for one without a tag; a line without
 * a token is skipped) into a model with TnT's estimates (lambda, theta;
 * LLR_EINVAL when no sentence was counted).  The caller frees. */
typedef struct hmm_counter hmm_counter;
hmm_counter *hmm_counter_new(void); /* NULL: no memory */
int hmm_counter_line(hmm_counter *c, const char *line, size_t len, llr_err *err);
int hmm_counter_model(hmm_counter *c, llr_hmm **out, llr_err *err);
void hmm_counter_free(hmm_counter *c);

/* model.c: the model file (family=hmm) and its loading. */
int llr_hmm_save(const char *path, const llr_hmm *h, llr_err *err);
int llr_hmm_load(const char *path, llr_hmm **out, llr_err *err);

#endif
