/*
 * spelling_fixture.h - the unit tests' spelling model: a Kneser-Ney
 * character model of the given order trained on a list of words (each
 * occurrence counted), with the discount fallback small lists need, and
 * optionally raw lines of character tokens as well (which may hold
 * <unk>).  NULL, with the reason printed as a TAP comment, on failure.
 */
#ifndef LLR_SPELLING_FIXTURE_H
#define LLR_SPELLING_FIXTURE_H

#include <stdio.h>
#include <string.h>

#include "llrnn.h"

static llr_spelling *fixture_spelling_lines(const char *const *words, size_t n, const char *const *lines,
                                            size_t nl, int order)
{
	llr_err e = {0};
	llr_ngram_counter *c = llr_ngram_counter_new(order, (size_t)1 << 24, &e);
	if (!c) {
		printf("# counter: %s\n", e.msg);
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		if (llr_spelling_count(c, words[i], strlen(words[i]), &e) != LLR_OK)
			printf("# count: %s\n", e.msg);
	for (size_t i = 0; i < nl; i++)
		if (llr_ngram_count_line(c, lines[i], strlen(lines[i]), &e) != LLR_OK)
			printf("# count: %s\n", e.msg);
	llr_kn_opts o;
	llr_kn_opts_init(&o);
	o.discount_fallback = 1;
	llr_ngram *m = NULL;
	if (llr_ngram_estimate(c, &o, &m, NULL, &e) != LLR_OK)
		printf("# estimate: %s\n", e.msg);
	llr_ngram_counter_free(c);
	llr_spelling *s = m ? llr_spelling_new(m, &e) : NULL;
	if (!s)
		llr_ngram_free(m);
	return s;
}

static inline llr_spelling *fixture_spelling(const char *const *words, size_t n, int order)
{
	return fixture_spelling_lines(words, n, NULL, 0, order);
}

#endif
