/*
 * ngram.h - private to lib/ngram/: the layout of the n-gram trie that
 * estimate.c, arpa.c and trie.c build and read.  Not API (llrnn.h has the
 * public view, llr_ngram_level).
 */
#ifndef LLR_NGRAM_PRIV_H
#define LLR_NGRAM_PRIV_H

#include "internal.h"

struct llr_ngram {
	int order;
	llr_strmap *vocab; /* V words; id = index of level 1 */
	int32_t bos, eos, unk;
	/* level n (1-based) at index n-1 */
	int64_t count[LLR_NGRAM_MAX_ORDER];
	int32_t *word[LLR_NGRAM_MAX_ORDER]; /* NULL for level 1 */
	float *logp[LLR_NGRAM_MAX_ORDER];
	float *backoff[LLR_NGRAM_MAX_ORDER]; /* levels < order */
	int64_t *child[LLR_NGRAM_MAX_ORDER]; /* levels < order, count + 1 */
};

/* An empty model of the given order (vocab allocated, arrays NULL). */
llr_ngram *llr_ngram_alloc(int order, llr_err *err);
/* Entry of level n+1 extending entry i of level n by word w, or -1. */
int64_t llr_ngram_child(const llr_ngram *m, int n, int64_t i, int32_t w);
/* Recompute bos/eos/unk from the vocabulary. */
void llr_ngram_specials(llr_ngram *m);
/* LLR_OK if the arrays make a valid trie (offsets monotone and within
 * the next level, words in range and strictly increasing among
 * siblings); else LLR_EFORMAT naming what is wrong. */
int llr_ngram_check(const llr_ngram *m, const char *name, llr_err *err);

/* count.c, for estimate.c: merge the last counts and hand over the
 * order, the sorted array of the n distinct N-grams (keys order x n,
 * counts n) and the vocabulary; the counter is left empty.  LLR_ERANGE
 * if that merge would pass the counter's bound. */
/* For tests: merge every `keys` keys instead of the usual rule. */
void llr_ngram_counter_merge_at(llr_ngram_counter *c, size_t keys);
int llr_ngram_counter_take(llr_ngram_counter *c, int *order, uint32_t **keys, uint64_t **counts, size_t *n, llr_strmap **vocab, llr_err *err);

/* wordtab.c: the ARPA reader's table of the words of v (ids = their
 * index in v), the `hot` of highest logp (V values, no NaN; ties by id)
 * looked at first; NULL when out of memory.  Get gives the id of
 * s[0..n), -1 if it is not in v; s[0..avail) must be readable (avail >= n;
 * more lets it read 8 bytes at once). */
typedef struct llr_wordtab llr_wordtab;
llr_wordtab *llr_wordtab_new(const llr_strmap *v, const float *logp, size_t hot);
void llr_wordtab_free(llr_wordtab *t);
int32_t llr_wordtab_get(const llr_wordtab *t, const char *s, size_t n, size_t avail);

/* arpa.c: an ARPA number (the whole of s[0..n)) as (float)strtod(s)
 * gives it, -inf as -99; -1 if s is not a number (or is NaN or +inf). */
int llr_arpa_parse_float(const char *s, size_t n, float *out);
/* arpa.c: x as the ARPA writer prints it (printf's %.8g, or %.9g when
 * %.8g does not read back as x), NUL-terminated in buf; its length. */
size_t llr_arpa_format_float(char *buf, float x);

#endif
