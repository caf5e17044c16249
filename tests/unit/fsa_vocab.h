/*
 * fsa_vocab.h - the vocabulary the automaton-background unit tests
 * (test_fsabg.c, test_gbnfbg.c) share: </s>, <unk>, then w0 .. w(nw-1),
 * so that id 2 + i is the word wi.
 */
#ifndef LLR_TEST_FSA_VOCAB_H
#define LLR_TEST_FSA_VOCAB_H

#include <stdio.h>

#include "llrnn.h"

static inline llr_strmap *fsa_test_vocab(int nw)
{
	llr_strmap *v = llr_strmap_new();
	llr_strmap_add(v, "</s>", 4);
	llr_strmap_add(v, "<unk>", 5);
	char w[16];
	for (int i = 0; i < nw; i++)
		llr_strmap_add(v, w, (size_t)snprintf(w, sizeof w, "w%d", i));
	return v;
}

#endif
